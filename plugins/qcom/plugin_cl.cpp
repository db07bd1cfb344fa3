// The cl plugin's entry point: device CL, CL:1, ... (the OpenCL devices the ICD loader lists).
#include <cstring>
#include <string>

#include "cl_device.hpp"
#include "tg/plugin/define.hpp"
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
  size_t index = 0;
  if (dev.rfind("CL:", 0) == 0) {
    const std::string n = dev.substr(3);
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 4)
      return refuse("the cl plugin serves CL and CL:<n> (the n-th OpenCL device), not '" + dev +
                    "'");
    index = std::stoul(n);
  } else if (dev != "CL") {
    return refuse("the cl plugin serves device CL, not '" + dev + "'");
  }
  if (arch != nullptr && *arch != '\0')
    return refuse(std::string("the CL device compiles for the device it finds; it takes no "
                              "architecture (asked for '") +
                  arch + "')");
  std::string reason;
  std::vector<DeviceInfo> devices = list_devices(reason);
  if (devices.empty()) return refuse(reason);
  if (index >= devices.size()) {
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
  return new ClDevice(dev, devices[index]);
}

} // namespace
} // namespace tg::cl

TG_DEFINE_PLUGIN(tg::cl::probe, tg::cl::create)
