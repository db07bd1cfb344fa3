// The CPU plugin's entry point: the one exported symbol (TG_DEFINE_PLUGIN).
#include <cstring>
#include <exception>

#include "cpu_device.hpp"
#include "tg/plugin/define.hpp"
#include "tg_plugin_manifest.h"

namespace tg::cpu {
namespace {

int probe(char* why, size_t why_len) noexcept {
#if defined(__x86_64__) && defined(__linux__)
  (void)why;
  (void)why_len;
  return 1; // the host is always there; LLVM is linked in, clang is only needed for DEV=CPU:C
#else
  plugin::set_reason(why, why_len, "the CPU plugin is built for x86-64 Linux only");
  return 0;
#endif
}

Device* create(const char* device_name, const char* arch, char* why, size_t why_len) noexcept {
  if (device_name == nullptr || std::strcmp(device_name, "CPU") != 0) {
    const std::string msg = std::string("the cpu plugin serves device CPU, not '") +
                            (device_name ? device_name : "(null)") + "'";
    plugin::set_reason(why, why_len, msg.c_str());
    return nullptr;
  }
  try {
    return new CpuDevice(arch != nullptr ? arch : "");
  } catch (const std::exception& e) {
    plugin::set_reason(why, why_len, e.what());
    return nullptr;
  }
}

} // namespace
} // namespace tg::cpu

TG_DEFINE_PLUGIN(tg::cpu::probe, tg::cpu::create)
