// The cuda plugin's entry point: device CUDA, CUDA:1, ... (the GPUs the NVIDIA driver lists).
// The probe loads the driver (libcuda.so.1) and refuses with the step that failed.
#include <string>

#include "cuda_device.hpp"
#include "tg/plugin/define.hpp"
#include "tg/plugin/device_index.hpp"
#include "tg_plugin_manifest.h"

namespace tg::cuda {
namespace {

int probe(char* why, size_t why_len) {
  std::string reason;
  if (load_driver(reason) == nullptr) {
    plugin::set_reason(why, why_len, reason.c_str());
    return 0;
  }
  return 1;
}

Device* create(const char* device_name, const char* arch, char* why, size_t why_len) {
  const std::string dev = device_name ? device_name : "";
  auto refuse = [&](const std::string& msg) -> Device* {
    plugin::set_reason(why, why_len, msg.c_str());
    return nullptr;
  };
  std::string reason;
  const std::optional<size_t> index = plugin::device_index(dev, "CUDA", "cuda", "GPU", reason);
  if (!index) return refuse(reason);
  const DriverApi* d = load_driver(reason);
  if (d == nullptr) return refuse(reason);
  if (*index >= static_cast<size_t>(d->device_count))
    return refuse(
        dev + ": there " +
        (d->device_count == 1 ? "is 1 GPU" : "are " + std::to_string(d->device_count) + " GPUs") +
        ": " + describe_gpus());
  std::optional<Arch> want;
  if (arch != nullptr && *arch != '\0') want = parse_arch(arch);
  return new CudaDevice(dev, static_cast<int>(*index), want);
}

} // namespace
} // namespace tg::cuda

TG_DEFINE_PLUGIN(tg::cuda::probe, tg::cuda::create)
