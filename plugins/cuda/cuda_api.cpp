// Loading libcuda.so.1, initializing the driver and naming its error codes.
#include "cuda_api.hpp"

#include <dlfcn.h>

#include "tg/error.hpp"

namespace tg::cuda {

namespace {

struct Loaded {
  DriverApi api;
  std::string why; // empty when loaded
};

// The name of a CUresult through the driver itself (it knows every code it returns).
std::string name_with(const DriverApi& api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(code, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(code, &text);
  std::string out = name != nullptr ? name : "CUresult";
  out += " (" + std::to_string(code) + ")";
  if (text != nullptr) out += std::string(": ") + text;
  return out;
}

Loaded load() {
  Loaded out;
  // Never unloaded: contexts, modules and streams outlive any scope that could close it.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    out.why = std::string("libcuda.so.1 (the NVIDIA driver) not found (") +
              (err ? err : "dlopen failed") +
              "); CUDA needs an NVIDIA GPU with its driver installed (nvidia-smi should list it)";
    return out;
  }
#define TG_CUDA_LOAD(fn, type)                                                                     \
  out.api.fn = reinterpret_cast<std::add_pointer_t<type>>(dlsym(lib, #fn));                        \
  if (out.api.fn == nullptr && out.why.empty())                                                    \
    out.why = "libcuda.so.1 lacks " #fn ": not NVIDIA's driver, or one older than CUDA " +         \
              version_text(kMinDriverVersion) + "; install a current NVIDIA driver";
  TG_CUDA_FUNCTIONS(TG_CUDA_LOAD)
#undef TG_CUDA_LOAD
  if (!out.why.empty()) return out;
  DriverApi& api = out.api;
  if (CUresult r = api.cuDriverGetVersion(&api.driver_version); r != CUDA_SUCCESS) {
    out.why = "cuDriverGetVersion failed: " + name_with(api, r);
    return out;
  }
  if (api.driver_version < kMinDriverVersion) {
    out.why = "the NVIDIA driver is too old: it supports CUDA " + version_text(api.driver_version) +
              ", the plugin needs CUDA " + version_text(kMinDriverVersion) +
              " or newer; update the driver";
    return out;
  }
  if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
    out.why = "cuInit failed: " + name_with(api, r) +
              " (is the GPU visible to this process? CUDA_VISIBLE_DEVICES, container flags)";
    return out;
  }
  if (CUresult r = api.cuDeviceGetCount(&api.device_count); r != CUDA_SUCCESS) {
    out.why = "cuDeviceGetCount failed: " + name_with(api, r);
    return out;
  }
  if (api.device_count <= 0)
    out.why =
        "no CUDA device: the driver (CUDA " + version_text(api.driver_version) + ") lists none";
  return out;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

} // namespace

const DriverApi* load_driver(std::string& why) {
  const Loaded& l = loaded();
  if (!l.why.empty()) {
    why = l.why;
    return nullptr;
  }
  return &l.api;
}

const DriverApi& driver() {
  std::string why;
  const DriverApi* a = load_driver(why);
  if (a == nullptr) throw Error("CUDA: " + why);
  return *a;
}

std::string error_name(CUresult code) { return name_with(loaded().api, code); }

void check(CUresult code, const std::string& what) {
  if (code != CUDA_SUCCESS) throw Error("CUDA: " + what + " failed: " + error_name(code));
}

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

} // namespace tg::cuda
