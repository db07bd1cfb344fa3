#pragma once
// The on-disk cache of compiled binaries. A kernel compiles once per machine: the key is a
// hash of the compiler's identity() and the source, the entry a file under
// $TG_CACHE_DIR/compile (default ~/.cache/tg/compile). TG_COMPILER_CACHE=0 turns it off.
// Entries hold the full key, so a hash collision or a corrupt file is a miss, never a wrong
// binary.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tg/plugin/device.hpp"

namespace tg {

// compiler.compile(source), served from the cache when an entry exists. Writes are atomic
// (temp file + rename); failures to read or write the cache only cost a compile.
std::vector<uint8_t> compile_cached(Compiler& compiler, const std::string& source);

// The cache's root folder: TG_CACHE_DIR, else $XDG_CACHE_HOME/tg, else ~/.cache/tg.
std::filesystem::path cache_dir();

// Lookups of compile_cached in this process: served from the cache, or compiled.
struct CompileCacheStats {
  int64_t hits = 0, misses = 0;
};
CompileCacheStats compile_cache_stats();

} // namespace tg
