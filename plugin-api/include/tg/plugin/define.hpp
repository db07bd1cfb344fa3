#pragma once
// TG_DEFINE_PLUGIN(probe, create): defines the one exported symbol of a plugin.
//
// tg_add_plugin() generates, for each plugin target, a header "tg_plugin_manifest.h" with
//   TG_PLUGIN_NAME           "cpu"
//   TG_PLUGIN_VERSION        "0.1.0"
//   TG_PLUGIN_MANIFEST_JSON  the manifest, the same text as the .json file written beside the
//                            library
// and puts it on the target's include path. A plugin's source then writes:
//
//   #include "tg_plugin_manifest.h"
//   #include "tg/plugin/define.hpp"
//   static int probe(char* why, size_t n) { ... return 1; }
//   static tg::Device* create(const char* dev, const char* arch, char* why, size_t n) { ... }
//   TG_DEFINE_PLUGIN(probe, create)
//
// `arch` is the ARCH of DEV=DEVICE:RENDERER:ARCH ("" for the device's default); a create that
// cannot serve it returns nullptr with the reason. A create without the `arch` parameter (the
// ABI 1.0 form) still compiles: its plugin refuses every explicit architecture.
//
// Everything else in the library has hidden visibility.
#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>

#include "tg/plugin/abi.hpp"

// The plugin's probe and create may throw: the generated entry points are noexcept (an
// exception must not cross the C boundary) and turn any exception into the reason text.
#define TG_DEFINE_PLUGIN(probe_fn, create_fn)                                                      \
  namespace {                                                                                      \
  int tg_plugin_probe_guard(char* why, size_t why_len) noexcept {                                  \
    try {                                                                                          \
      return probe_fn(why, why_len);                                                               \
    } catch (const std::exception& e) {                                                            \
      tg::plugin::set_reason(why, why_len, (std::string("probe threw: ") + e.what()).c_str());     \
    } catch (...) {                                                                                \
      tg::plugin::set_reason(why, why_len, "probe threw a non-standard exception");                \
    }                                                                                              \
    return 0;                                                                                      \
  }                                                                                                \
  tg::Device* tg_plugin_create_arch_guard(const char* dev, const char* arch, char* why,            \
                                          size_t why_len) noexcept {                               \
    try {                                                                                          \
      return tg::plugin::call_create(create_fn, dev, arch, why, why_len);                          \
    } catch (const std::exception& e) {                                                            \
      tg::plugin::set_reason(why, why_len, (std::string("create threw: ") + e.what()).c_str());    \
    } catch (...) {                                                                                \
      tg::plugin::set_reason(why, why_len, "create threw a non-standard exception");               \
    }                                                                                              \
    return nullptr;                                                                                \
  }                                                                                                \
  tg::Device* tg_plugin_create_guard(const char* dev, char* why, size_t why_len) noexcept {        \
    return tg_plugin_create_arch_guard(dev, "", why, why_len);                                     \
  }                                                                                                \
  }                                                                                                \
  extern "C" __attribute__((visibility("default"))) const tg_plugin_info_v1*                       \
  tg_plugin_query_v1() {                                                                           \
    static const tg_plugin_info_v1 info{                                                           \
        TG_PLUGIN_MAGIC,        sizeof(tg_plugin_info_v1),  TG_PLUGIN_ABI_MAJOR,                   \
        TG_PLUGIN_ABI_MINOR,    TG_PLUGIN_ABI_TAG,          TG_PLUGIN_NAME,                        \
        TG_PLUGIN_VERSION,      TG_PLUGIN_MANIFEST_JSON,    tg_plugin_probe_guard,                 \
        tg_plugin_create_guard, tg_plugin_create_arch_guard};                                      \
    return &info;                                                                                  \
  }

namespace tg::plugin {
// Writes `msg` into a probe/create error buffer, always NUL-terminated.
inline void set_reason(char* why, size_t why_len, const char* msg) noexcept {
  if (why != nullptr && why_len > 0) std::snprintf(why, why_len, "%s", msg);
}

// A plugin's create in either form: (device, arch, why, why_len), or the ABI 1.0 form
// (device, why, why_len), which serves the default architecture only.
template <class Create>
tg::Device* call_create(Create create, const char* dev, const char* arch, char* why,
                        size_t why_len) {
  if constexpr (std::is_invocable_v<Create, const char*, const char*, char*, size_t>) {
    return create(dev, arch, why, why_len);
  } else {
    if (arch != nullptr && *arch != '\0') {
      set_reason(
          why, why_len,
          (std::string("the plugin takes no architecture (asked for '") + arch + "')").c_str());
      return nullptr;
    }
    return create(dev, why, why_len);
  }
}
} // namespace tg::plugin
