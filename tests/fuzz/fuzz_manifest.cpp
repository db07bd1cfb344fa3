// libFuzzer target: the plugin manifest parse (core/engine/plugin_manifest.hpp) on arbitrary
// text. A tg::Error is the expected answer to a malformed manifest; anything else is a finding,
// as is an accepted manifest whose fields break the parser's promises.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/plugin_manifest.hpp"
#include "tg/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tg::detail::Manifest m = tg::detail::parse_manifest(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    if (m.abi_major < 0 || m.abi_minor < 0 || m.devices.empty()) std::abort();
    if (m.library.find('/') != std::string::npos) std::abort();
  } catch (const tg::Error&) {
  }
  return 0;
}
