// Exits 0 when the registry found, loaded and created the out-of-tree plugin's device.
#include <cstdio>

#include "tg/device_registry.hpp"
#include "tg/error.hpp"

int main() {
  try {
    for (const tg::PluginInfo& p : tg::DeviceRegistry::global().plugins())
      std::printf("%s: %s %s %s\n", p.name.c_str(), std::string(tg::to_string(p.state)).c_str(),
                  p.library_path.string().c_str(), p.reason.c_str());
    std::shared_ptr<tg::Device> dev = tg::DeviceRegistry::global().open("hello");
    std::string src = dev->renderer("TEXT").render("k0", {});
    std::printf("opened %s, rendered '%s'\n", dev->name().c_str(), src.c_str());
    return dev->name() == "HELLO" && src == "hello k0" ? 0 : 1;
  } catch (const tg::Error& e) {
    std::fprintf(stderr, "check_hello: %s\n", e.what());
    return 1;
  }
}
