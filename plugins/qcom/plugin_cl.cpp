// The cl plugin's entry point: device CL, CL:1, ... (the OpenCL devices the ICD loader lists).
#include <cstring>
#include <string>

#include "cl_device.hpp"
#include "tg/plugin/define.hpp"
#include "tg/plugin/device_index.hpp"
#include "tg_plugin_manifest.h"

namespace tg::cl {
namespace {

int probe(char* why, size_t why_len) {
  std::string reason;
  if (list_devices(reason).empty()) {
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
  const std::optional<size_t> index =
      plugin::device_index(dev, "CL", "cl", "OpenCL device", reason);
  if (!index) return refuse(reason);
  if (arch != nullptr && *arch != '\0')
    return refuse(std::string("the CL device compiles for the device it finds; it takes no "
                              "architecture (asked for '") +
                  arch + "')");
  std::vector<DeviceInfo> devices = list_devices(reason);
  if (devices.empty()) return refuse(reason);
  if (*index >= devices.size()) {
    std::string list;
    for (size_t i = 0; i < devices.size(); ++i)
      list += (i ? ", " : "") + std::string(i ? "CL:" + std::to_string(i) : "CL") + " = " +
              devices[i].describe();
    return refuse(dev + ": there " +
                  (devices.size() == 1
                       ? "is 1 OpenCL device"
                       : "are " + std::to_string(devices.size()) + " OpenCL devices") +
                  ": " + list);
  }
  return new ClDevice(dev, devices[*index]);
}

} // namespace
} // namespace tg::cl

TG_DEFINE_PLUGIN(tg::cl::probe, tg::cl::create)
