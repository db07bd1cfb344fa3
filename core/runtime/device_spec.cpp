#include <algorithm>
#include <cctype>

#include "tg/device_registry.hpp"
#include "tg/error.hpp"

namespace tg {

DeviceSpec DeviceSpec::parse(const std::string& spec) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = spec.find(':', start);
    parts.push_back(
        spec.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  // DEVICE:N picks the N-th device of a kind (CL:1); N = 0 is the device itself.
  std::string index;
  if (parts.size() > 1 && !parts[1].empty() &&
      parts[1].find_first_not_of("0123456789") == std::string::npos) {
    index = parts[1];
    parts.erase(parts.begin() + 1);
  }
  if (parts.size() > 3 || parts[0].empty() || (parts.size() > 1 && parts[1].empty()) ||
      (parts.size() > 2 && parts[2].empty()) || index.size() > 4)
    throw Error("bad device '" + spec +
                "': write DEVICE[:N][:RENDERER[:ARCH]], e.g. DEV=CPU, DEV=CPU:C or DEV=CL:1");
  DeviceSpec out;
  out.device = parts[0];
  std::transform(out.device.begin(), out.device.end(), out.device.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (!index.empty() && std::stoul(index) != 0)
    out.device += ":" + std::to_string(std::stoul(index));
  if (parts.size() > 1) out.renderer = parts[1];
  if (parts.size() > 2) out.arch = parts[2];
  return out;
}

std::string DeviceSpec::kind() const { return device.substr(0, device.find(':')); }

std::string DeviceSpec::str() const {
  std::string s = device;
  if (!renderer.empty() || !arch.empty()) s += ":" + renderer;
  if (!arch.empty()) s += ":" + arch;
  return s;
}

std::string resolve_renderer(const Device& device, const DeviceSpec& spec) {
  std::vector<std::string> names = device.renderers();
  if (names.empty()) throw Error("device " + device.name() + " offers no renderer");
  if (spec.renderer.empty()) return names.front();
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const std::string& n : names)
    if (lower(n) == lower(spec.renderer)) return n;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error("device " + device.name() + " has no renderer '" + spec.renderer +
              "'; choose one of: " + list + " (e.g. DEV=" + device.name() + ":" + names.front() +
              ")");
}

} // namespace tg
