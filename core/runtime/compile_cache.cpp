// The on-disk cache of compiled binaries (see tg/compile_cache.hpp).
#include "tg/compile_cache.hpp"

#include <atomic>
#include <string_view>

#include "tg/cache_entry.hpp"
#include "tg/knobs.hpp"

namespace fs = std::filesystem;

namespace tg {
namespace {

constexpr std::string_view kMagic{"TGCC0001", 8};
std::atomic<int64_t> g_hits{0}, g_misses{0};

} // namespace

fs::path cache_dir() {
  if (std::string dir = knobs::TG_CACHE_DIR.get(); !dir.empty()) return dir;
  if (std::string xdg = knobs::XDG_CACHE_HOME.get(); !xdg.empty()) return fs::path(xdg) / "tg";
  if (std::string home = knobs::HOME.get(); !home.empty()) return fs::path(home) / ".cache" / "tg";
  return {};
}

CompileCacheStats compile_cache_stats() { return {g_hits.load(), g_misses.load()}; }

std::vector<uint8_t> compile_cached(Compiler& compiler, const std::string& source) {
  fs::path dir = cache_dir();
  if (knobs::TG_COMPILER_CACHE == 0 || dir.empty()) {
    ++g_misses;
    return compiler.compile(source);
  }
  std::string key = compiler.identity();
  key.push_back('\0');
  key += source;
  const fs::path path = dir / "compile" / (cache_entry_name(key) + ".bin");
  std::string payload, why;
  // A corrupt entry is only a miss: the compile's result replaces it.
  if (read_cache_entry(path, kMagic, key, payload, why) == CacheRead::Hit) {
    ++g_hits;
    return std::vector<uint8_t>(payload.begin(), payload.end());
  }
  ++g_misses;
  std::vector<uint8_t> bin = compiler.compile(source);
  write_cache_entry(path, kMagic, key,
                    std::string_view(reinterpret_cast<const char*>(bin.data()), bin.size()));
  return bin;
}

} // namespace tg
