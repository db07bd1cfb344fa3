// A plugin built with TG_DEFINE_PLUGIN whose probe or create throws: the generated entry
// points must turn the exception into a reason instead of terminating the process.
#include <stdexcept>

#include "tg_plugin_manifest.h"

#include "tg/plugin/define.hpp"
#include "tg/plugin/device.hpp"

namespace {

int probe(char*, size_t) {
#ifdef THROW_IN_PROBE
  throw std::runtime_error("driver table corrupt");
#else
  return 1;
#endif
}

tg::Device* create(const char*, char*, size_t) { throw std::runtime_error("device exploded"); }

} // namespace

TG_DEFINE_PLUGIN(probe, create)
