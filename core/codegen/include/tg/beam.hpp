#pragma once
// BEAM, tinygrad's kernel search (codegen/opt/search.py): from the plain kernel (and the
// heuristic's choice), every legal next Opt is applied to each kernel of the beam, each
// candidate lowered, rendered and compiled in parallel (oneTBB), then timed on the device on
// the kernel's buffers, best of a few runs; the `width` fastest form the next beam, until the
// beam's best stops improving. Results are cached on disk ($TG_CACHE_DIR/beam) keyed by the
// kernel AST, the device, the renderer and the compiler's target, so a second run of the same
// program searches nothing.
//
//   search.cpp      beam_actions, beam_search (candidates, parallel compile, timing)
//   beam_cache.cpp  the disk cache of chosen Opts (checked entries; a corrupt one is replaced)
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/codegen_opt.hpp"
#include "tg/plugin/device.hpp"

namespace tg {

// One PARAM slot's buffer for timing: device memory and its size in bytes. A slot without
// memory (ptr 0) gets a zeroed scratch buffer of the PARAM's size.
struct BeamBuffer {
  DevicePtr ptr = 0;
  size_t bytes = 0;
};

// Where candidates run. Buffers the kernel stores to are never written: each gets a scratch
// copy for the search, so a kernel that updates a buffer in place times on its real contents
// and leaves them as they were.
struct BeamTarget {
  Device* device = nullptr;
  std::string renderer;
  std::vector<BeamBuffer> buffers;                         // by PARAM slot
  std::vector<std::pair<std::string, int64_t>> var_values; // bound DEFINE_VARs (others: midpoint)
};

// One candidate that compiled and ran: its Opts and best time.
struct BeamCandidate {
  std::vector<Opt> opts;
  double seconds = 0;
};

struct BeamResult {
  // The fastest kernel's Opts (empty: the plain kernel), or the heuristic's when the fastest,
  // timed again beside them in turns, was not 2% faster (a noisy machine's lucky runs).
  std::vector<Opt> opts;
  double seconds = 0; // its best time (0 when the result came from the cache)
  bool from_cache = false;
  int64_t candidates = 0; // candidates timed
  int64_t dropped = 0;    // candidates that did not lower, compile or run in time, or were too big
  int64_t rounds = 0;
  double search_seconds = 0;
  std::vector<BeamCandidate> timed; // every candidate timed, in the order timed
};

// The Opts BEAM tries next on a kernel that has `applied` applied already: tinygrad's action
// list (UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, PADTO, SWAP, and TC where the renderer has
// tensor cores and the knob TC is not 0; THREAD is not applied by this codegen), each kept when
// apply_opt accepts it on this renderer, its upcast and unrolled
// lanes stay within BEAM_UPCAST_MAX and its work group within BEAM_LOCAL_MAX, and the kernel
// it gives differs from the others'.
std::vector<Opt> beam_actions(const UOpPtr& ast, const std::vector<Opt>& applied,
                              const RendererCaps& caps);

// The search itself (no cache). Raises tg::Error when not even the plain kernel runs.
BeamResult beam_search(const UOpPtr& ast, const BeamTarget& target, int64_t width);

// The search through the disk cache: a cached result whose Opts still apply is returned with
// from_cache set; otherwise beam_search, and its result stored. IGNORE_BEAM_CACHE=1 searches
// anyway.
BeamResult beam_optimize(const UOpPtr& ast, const BeamTarget& target, int64_t width);

// The cache's key for a kernel on a target: the AST printed, the device's name and arch, the
// renderer and its compiler's identity, and the width.
std::string beam_cache_key(const UOpPtr& ast, const BeamTarget& target, int64_t width);
// The cached Opts under `key`, or nullopt: no entry, or one that is corrupt (a warning on
// stderr names the file; the next store replaces it).
std::optional<std::vector<Opt>> beam_cache_load(const std::string& key);
// Stores `opts` under `key` (atomically; a failure to write only costs a later search).
void beam_cache_store(const std::string& key, const std::vector<Opt>& opts);
// The file an entry lives in ($TG_CACHE_DIR/beam/<hash>.beam).
std::string beam_cache_path(const std::string& key);

// Process-wide counts: searches run, candidates timed, cache hits.
struct BeamStats {
  int64_t searches = 0, candidates = 0, cache_hits = 0;
};
BeamStats beam_stats();

} // namespace tg
