#pragma once
// The device names a plugin serves: "BASE" (its first device) and "BASE:<n>" (the n-th), as
// DEV=CUDA:1 or DEV=CL:2 name them. Shared by the plugins that enumerate several devices, so
// every one refuses a malformed name alike.
#include <optional>
#include <string>

namespace tg::plugin {

// The index of `dev` among the devices named `base` ("CUDA" -> 0, "CUDA:3" -> 3); nullopt with
// the reason in `why` for any other name. `plugin` names the plugin and `each` what one device
// is ("GPU", "OpenCL device") in that reason.
inline std::optional<size_t> device_index(const std::string& dev, const std::string& base,
                                          const std::string& plugin, const std::string& each,
                                          std::string& why) {
  if (dev == base) return 0;
  const std::string prefix = base + ":";
  if (dev.rfind(prefix, 0) == 0) {
    const std::string n = dev.substr(prefix.size());
    if (!n.empty() && n.size() <= 4 && n.find_first_not_of("0123456789") == std::string::npos)
      return std::stoul(n);
  }
  why = "the " + plugin + " plugin serves " + base + " and " + base + ":<n> (the n-th " + each +
        "), not '" + dev + "'";
  return std::nullopt;
}

} // namespace tg::plugin
