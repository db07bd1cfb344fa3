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
//   static int probe(char* why, size_t n) noexcept { ... return 1; }
//   static tg::Device* create(const char* dev, char* why, size_t n) noexcept { ... }
//   TG_DEFINE_PLUGIN(probe, create)
//
// Everything else in the library has hidden visibility.
#include <cstdio>

#include "tg/plugin/abi.hpp"

#define TG_DEFINE_PLUGIN(probe_fn, create_fn)                                                      \
  extern "C" __attribute__((visibility("default"))) const tg_plugin_info_v1* tg_plugin_query_v1() { \
    static const tg_plugin_info_v1 info{TG_PLUGIN_MAGIC,                                           \
                                        sizeof(tg_plugin_info_v1),                                 \
                                        TG_PLUGIN_ABI_MAJOR,                                       \
                                        TG_PLUGIN_ABI_MINOR,                                       \
                                        TG_PLUGIN_ABI_TAG,                                         \
                                        TG_PLUGIN_NAME,                                            \
                                        TG_PLUGIN_VERSION,                                         \
                                        TG_PLUGIN_MANIFEST_JSON,                                   \
                                        probe_fn,                                                  \
                                        create_fn};                                                \
    return &info;                                                                                  \
  }

namespace tg::plugin {
// Writes `msg` into a probe/create error buffer, always NUL-terminated.
inline void set_reason(char* why, size_t why_len, const char* msg) noexcept {
  if (why != nullptr && why_len > 0) std::snprintf(why, why_len, "%s", msg);
}
} // namespace tg::plugin
