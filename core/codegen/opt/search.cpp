// BEAM (tg/beam.hpp), after tinygrad's search.py: the actions a kernel can take next, the
// candidates of a round lowered and compiled in parallel, each timed on the device on the
// kernel's buffers (scratch copies of those it stores to), and the beam kept to the fastest.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <unordered_set>

#include <tbb/parallel_for.h>

#include "axes.hpp"
#include "tg/beam.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg {

using namespace opt_detail;

namespace {

std::atomic<int64_t> g_searches{0}, g_candidates{0}, g_cache_hits{0};

// tinygrad's action list (get_kernel_actions), with UPCAST 8 for wide vector units and PADTO
// to 32 always on. THREAD is left out: this codegen does not apply it. The TC actions (tinygrad's:
// axis 0 at tc_opt 0, axes 0..8 at tc_opt 2) are tried where the renderer has tensor cores and
// the knob TC is not 0 (its value is use_tensor_cores).
const std::vector<Opt>& all_actions() {
  static const std::vector<Opt> actions = [] {
    std::vector<Opt> a;
    for (int amt : {0, 2, 3, 4, 5, 7, 8})
      for (int axis = 0; axis < 8; ++axis) a.push_back({OptOp::UPCAST, axis, amt});
    for (int amt : {0, 4, 7})
      for (int axis = 0; axis < 5; ++axis) a.push_back({OptOp::UNROLL, axis, amt});
    for (int amt : {2, 3, 4, 8, 13, 16, 29})
      for (int axis = 0; axis < 6; ++axis) a.push_back({OptOp::LOCAL, axis, amt});
    for (int amt : {13, 16, 28, 29, 32, 49, 64, 256})
      for (int axis = 0; axis < 3; ++axis) a.push_back({OptOp::GROUPTOP, axis, amt});
    for (int amt : {0, 4, 8, 16})
      for (int axis = 0; axis < 3; ++axis) a.push_back({OptOp::GROUP, axis, amt});
    for (int axis = 0; axis < 7; ++axis) a.push_back({OptOp::PADTO, axis, 32});
    a.push_back({OptOp::LOCAL, 0, 32});
    a.push_back({OptOp::LOCAL, 6, 2});
    for (int a0 = 0; a0 < 5; ++a0)
      for (int a1 = a0 + 1; a1 < 5; ++a1) a.push_back({OptOp::SWAP, a0, a1});
    a.push_back({OptOp::TC, 0, tc_arg({-1, 0, 1})});
    for (int axis = 0; axis < 9; ++axis) a.push_back({OptOp::TC, axis, tc_arg({-1, 2, 1})});
    return a;
  }();
  return actions;
}

int64_t lanes(const UOpPtr& k, std::initializer_list<AxisType> types) {
  int64_t n = 1;
  for (const UOp* r : ranges_of(k))
    if (std::find(types.begin(), types.end(), rarg(r).type) != types.end())
      n *= std::max<int64_t>(const_size(r), 1);
  return n;
}

// The kernel after each next action that applies, within the lane and work-group bounds
// (max_lanes: BEAM_UPCAST_MAX, or more when the heuristic's own tile is larger).
std::vector<std::pair<Opt, UOpPtr>> next_kernels(const UOpPtr& k, const RendererCaps& caps,
                                                 int64_t max_lanes = 0) {
  if (max_lanes <= 0) max_lanes = knobs::BEAM_UPCAST_MAX;
  std::vector<std::pair<Opt, UOpPtr>> out;
  std::unordered_set<const UOp*> seen;
  for (Opt a : all_actions()) {
    if (a.op == OptOp::TC) {
      if (caps.tensor_cores.empty() || knobs::TC == 0) continue;
      TcArg arg = tc_arg_of(a.amount);
      arg.use_tensor_cores = static_cast<int>(knobs::TC);
      a.amount = tc_arg(arg);
    }
    UOpPtr k2;
    try {
      k2 = apply_opt(k, a, caps);
    } catch (const OptError&) {
      continue;
    }
    if (lanes(k2, {AxisType::Upcast, AxisType::Unroll}) > max_lanes) continue;
    if (lanes(k2, {AxisType::Local, AxisType::GroupReduce}) > knobs::BEAM_LOCAL_MAX) continue;
    if (!seen.insert(k2.get()).second) continue; // the same kernel another way (amount 0 = N)
    out.emplace_back(a, std::move(k2));
  }
  return out;
}

UOpPtr apply_all(UOpPtr k, const std::vector<Opt>& opts, const RendererCaps& caps) {
  for (const Opt& o : opts) k = apply_opt(k, o, caps);
  return k;
}

std::string time_str(double seconds) {
  char buf[32];
  if (seconds >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.2fms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.2fus", seconds * 1e6);
  return buf;
}

std::string opts_str(const std::vector<Opt>& opts) {
  if (opts.empty()) return "(no Opts)";
  std::string s;
  for (const Opt& o : opts) s += (s.empty() ? "" : " ") + o.str();
  return s;
}

// The PARAM slots the kernel stores to.
std::vector<int64_t> stored_slots(const UOpPtr& ast) {
  std::vector<int64_t> out;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::STORE && u->src[0]->op == Ops::INDEX && u->src[0]->src[0]->op == Ops::PARAM)
      if (int64_t slot = std::get<int64_t>(u->src[0]->src[0]->arg);
          std::find(out.begin(), out.end(), slot) == out.end())
        out.push_back(slot);
  return out;
}

// The buffers candidates run on: the target's, with a scratch copy for every slot the kernel
// stores to and a zeroed scratch buffer for every slot the target leaves empty. Freed at the
// end of the search.
class SearchBuffers {
public:
  SearchBuffers(const UOpPtr& ast, const BeamTarget& t) : alloc_(t.device->allocator()) {
    std::vector<std::pair<int64_t, size_t>> params; // slot, bytes
    for (const UOp* u : ast->toposort())
      if (u->op == Ops::PARAM)
        params.emplace_back(std::get<int64_t>(u->arg),
                            static_cast<size_t>(u->dtype.size) * u->dtype.base().itemsize());
    const std::vector<int64_t> stored = stored_slots(ast);
    for (const auto& [slot, param_bytes] : params) {
      if (slot < 0) throw Error("BEAM: a PARAM with a negative slot");
      if (ptrs_.size() <= static_cast<size_t>(slot)) ptrs_.resize(static_cast<size_t>(slot) + 1);
      const BeamBuffer given =
          static_cast<size_t>(slot) < t.buffers.size() ? t.buffers[slot] : BeamBuffer{};
      const bool writes = std::find(stored.begin(), stored.end(), slot) != stored.end();
      if (given.ptr != 0 && !writes) {
        ptrs_[slot] = given.ptr;
        continue;
      }
      const size_t bytes = given.ptr != 0 ? given.bytes : std::max<size_t>(param_bytes, 1);
      std::vector<uint8_t> host(bytes, 0);
      if (given.ptr != 0) alloc_.copy_out(host.data(), given.ptr, bytes);
      const DevicePtr p = alloc_.alloc(bytes);
      owned_.emplace_back(p, bytes);
      alloc_.copy_in(p, host.data(), bytes);
      ptrs_[slot] = p;
    }
  }
  ~SearchBuffers() {
    for (const auto& [p, bytes] : owned_) alloc_.free(p, bytes);
  }
  SearchBuffers(const SearchBuffers&) = delete;
  SearchBuffers& operator=(const SearchBuffers&) = delete;
  const std::vector<DevicePtr>& ptrs() const { return ptrs_; }

private:
  Allocator& alloc_;
  std::vector<DevicePtr> ptrs_;
  std::vector<std::pair<DevicePtr, size_t>> owned_;
};

struct Compiled {
  std::vector<Opt> opts;
  UOpPtr applied; // the kernel with the Opts applied (before lowering)
  bool ok = false;
  LoweredKernel kernel;
  std::vector<uint8_t> binary;
};

class Search {
public:
  Search(const UOpPtr& ast, const BeamTarget& t)
      : t_(t), caps_(t.device->renderer(t.renderer).caps()), buffers_(ast, t),
        start_(std::chrono::steady_clock::now()) {}

  // Lowers, renders and compiles every candidate, in parallel over the cores.
  void compile(std::vector<Compiled>& cands) {
    Renderer& renderer = t_.device->renderer(t_.renderer);
    Compiler& compiler = t_.device->compiler(t_.renderer);
    const int64_t uops_max = knobs::BEAM_UOPS_MAX;
    tbb::parallel_for(size_t{0}, cands.size(), [&](size_t i) {
      Compiled& c = cands[i];
      try {
        c.kernel = lower_kernel_with_opts(root_, caps_, c.opts);
        if (static_cast<int64_t>(c.kernel.uops.size()) > uops_max) return;
        c.binary = compiler.compile(renderer.render(c.kernel.name, c.kernel.uops));
        c.ok = true;
      } catch (const std::exception&) {
        // A candidate that does not lower or compile is dropped.
      }
    });
  }

  // The candidate's best time over a few runs, or nullopt when it fails or runs too long.
  // A run slower than three times `best` ends the timing early (it cannot win).
  std::optional<double> time(const Compiled& c, double best) {
    const double timeout = static_cast<double>(knobs::BEAM_TIMEOUT) * 1e-3;
    try {
      std::shared_ptr<Program> prg = t_.device->load(c.kernel.name, c.binary);
      LaunchArgs args{buffers_.ptrs(), var_values(c.kernel), c.kernel.global, c.kernel.local};
      double t = std::numeric_limits<double>::infinity();
      for (int run = 0; run < 3; ++run) {
        const double tm = prg->run(args, true);
        if (run == 0 && tm > timeout) return std::nullopt;
        t = std::min(t, tm);
        if (tm > best * 3) break;
      }
      return t;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Compiles and times `cands`, appending what ran to the result; returns them fastest first.
  std::vector<BeamCandidate> run_round(std::vector<Compiled>& cands, double best,
                                       std::vector<UOpPtr>& applied_out) {
    compile(cands);
    std::vector<std::pair<BeamCandidate, UOpPtr>> timed;
    for (Compiled& c : cands) {
      std::optional<double> tm = c.ok ? time(c, best) : std::nullopt;
      if (!tm) {
        ++result.dropped;
        continue;
      }
      best = std::min(best, *tm);
      BeamCandidate bc{c.opts, *tm};
      result.timed.push_back(bc);
      timed.emplace_back(std::move(bc), c.applied);
    }
    result.candidates += static_cast<int64_t>(timed.size());
    g_candidates += static_cast<int64_t>(timed.size());
    std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) {
      return a.first.seconds < b.first.seconds;
    });
    std::vector<BeamCandidate> out;
    applied_out.clear();
    for (auto& [bc, k] : timed) {
      out.push_back(std::move(bc));
      applied_out.push_back(std::move(k));
    }
    return out;
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void set_root(UOpPtr root) { root_ = std::move(root); }
  const RendererCaps& caps() const { return caps_; }

  BeamResult result;

private:
  std::vector<int64_t> var_values(const LoweredKernel& k) const {
    std::vector<int64_t> out;
    for (const VarArg& v : k.vars) {
      auto it = std::find_if(t_.var_values.begin(), t_.var_values.end(),
                             [&](const auto& p) { return p.first == v.name; });
      out.push_back(it != t_.var_values.end() ? it->second : (v.min + v.max) / 2);
    }
    return out;
  }

  const BeamTarget& t_;
  const RendererCaps& caps_;
  SearchBuffers buffers_;
  UOpPtr root_;
  std::chrono::steady_clock::time_point start_;
};

} // namespace

std::vector<Opt> beam_actions(const UOpPtr& ast, const std::vector<Opt>& applied,
                              const RendererCaps& caps) {
  std::vector<Opt> out;
  for (auto& [opt, k] : next_kernels(apply_all(ast, applied, caps), caps)) out.push_back(opt);
  return out;
}

BeamResult beam_search(const UOpPtr& ast, const BeamTarget& target, int64_t width) {
  if (target.device == nullptr) throw Error("BEAM: no device to time candidates on");
  width = std::max<int64_t>(width, 1);
  ++g_searches;
  Search s(ast, target);
  const UOpPtr root = simplify_kernel(ast);
  s.set_root(root);
  const std::string name = kernel_name(root);
  const RendererCaps& caps = s.caps();

  // Seeds: the heuristic's choice, each shorter prefix of its Opts, and the plain kernel, so the
  // search ends no slower than the heuristic and also grows from its partial tiles (timed
  // first: the plain kernel may be slow enough to time out, as a 1024 matmul's is, and the
  // heuristic's full tile may leave no action within the lane bound). Candidates may have as
  // many lanes as the heuristic's tile (a CPU matmul's 8 x 32 x 4 = 1024) or BEAM_UPCAST_MAX.
  std::unordered_set<const UOp*> seen{root.get()};
  std::vector<UOpPtr> keep{root};
  std::vector<Compiled> seeds;
  int64_t max_lanes = knobs::BEAM_UPCAST_MAX;
  std::optional<std::vector<Opt>> heuristic;
  try {
    const std::vector<Opt> h = hand_coded_optimizations(root, caps);
    heuristic = h;
    UOpPtr hk = root;
    std::vector<Compiled> prefixes;
    for (size_t i = 0; i < h.size(); ++i) {
      hk = apply_opt(hk, h[i], caps);
      if (seen.insert(hk.get()).second) {
        keep.push_back(hk);
        prefixes.push_back({std::vector<Opt>(h.begin(), h.begin() + static_cast<long>(i + 1)), hk});
      }
    }
    max_lanes = std::max(max_lanes, lanes(hk, {AxisType::Upcast, AxisType::Unroll}));
    seeds.insert(seeds.end(), std::make_move_iterator(prefixes.rbegin()),
                 std::make_move_iterator(prefixes.rend()));
  } catch (const OptError&) {
    // The heuristic's Opts do not apply to this kernel here: search from the plain one.
  }
  seeds.push_back({{}, root});
  std::vector<UOpPtr> beam_k;
  std::vector<BeamCandidate> beam =
      s.run_round(seeds, std::numeric_limits<double>::infinity(), beam_k);
  if (beam.empty())
    throw Error("BEAM: kernel " + name + " does not lower, compile or run even without Opts");
  BeamCandidate best = beam.front();
  beam.resize(std::min<size_t>(beam.size(), static_cast<size_t>(width)));
  beam_k.resize(beam.size());

  auto progress = [&](bool final) {
    if (knobs::DEBUG < 1 && s.elapsed() < 10.0) return;
    std::fprintf(stderr,
                 "BEAM %-28s %s round %3lld: %5lld candidates timed (%lld dropped) in %7.2f s, "
                 "best %s %s\n",
                 name.c_str(), final ? "done " : "     ", static_cast<long long>(s.result.rounds),
                 static_cast<long long>(s.result.candidates),
                 static_cast<long long>(s.result.dropped), s.elapsed(),
                 time_str(best.seconds).c_str(), opts_str(best.opts).c_str());
    std::fflush(stderr);
  };

  while (true) {
    ++s.result.rounds;
    std::vector<Compiled> cands;
    for (size_t b = 0; b < beam.size(); ++b)
      for (auto& [opt, k] : next_kernels(beam_k[b], caps, max_lanes)) {
        if (!seen.insert(k.get()).second) continue;
        keep.push_back(k);
        std::vector<Opt> opts = beam[b].opts;
        opts.push_back(opt);
        cands.push_back({std::move(opts), k});
      }
    if (cands.empty()) break;
    std::vector<UOpPtr> next_k;
    std::vector<BeamCandidate> next = s.run_round(cands, best.seconds, next_k);
    if (next.empty() || next.front().seconds >= best.seconds) break; // no progress
    best = next.front();
    next.resize(std::min<size_t>(next.size(), static_cast<size_t>(width)));
    next_k.resize(next.size());
    beam = std::move(next);
    beam_k = std::move(next_k);
    progress(false);
  }
  // A winner other than the heuristic's Opts is timed again beside them, in turns: a noisy
  // machine can make one candidate's runs look fast (a 1024 matmul once kept a form 1.6x slower
  // than the heuristic's), and the search should never end slower than where it started.
  if (heuristic && best.opts != *heuristic) {
    std::vector<Compiled> pair{{best.opts, nullptr}, {*heuristic, nullptr}};
    s.compile(pair);
    if (pair[0].ok && pair[1].ok) {
      double t_best = std::numeric_limits<double>::infinity(), t_heur = t_best;
      for (int turn = 0; turn < 3; ++turn) {
        t_best = std::min(t_best, s.time(pair[0], t_best).value_or(t_best));
        t_heur = std::min(t_heur, s.time(pair[1], t_heur).value_or(t_heur));
      }
      if (t_heur <= t_best * 1.02) best = {*heuristic, t_heur};
    }
  }
  s.result.opts = best.opts;
  s.result.seconds = best.seconds;
  s.result.search_seconds = s.elapsed();
  progress(true);
  return std::move(s.result);
}

BeamResult beam_optimize(const UOpPtr& ast, const BeamTarget& target, int64_t width) {
  const std::string key = beam_cache_key(ast, target, width);
  if (knobs::IGNORE_BEAM_CACHE == 0)
    if (std::optional<std::vector<Opt>> cached = beam_cache_load(key)) {
      const RendererCaps& caps = target.device->renderer(target.renderer).caps();
      try {
        apply_all(simplify_kernel(ast), *cached, caps);
        ++g_cache_hits;
        BeamResult r;
        r.opts = std::move(*cached);
        r.from_cache = true;
        return r;
      } catch (const OptError& e) {
        std::cerr << "warning: BEAM cache entry " << beam_cache_path(key)
                  << " holds Opts that no longer apply (" << e.what() << "); searching again\n";
      }
    }
  BeamResult r = beam_search(ast, target, width);
  beam_cache_store(key, r.opts);
  return r;
}

BeamStats beam_stats() { return {g_searches.load(), g_candidates.load(), g_cache_hits.load()}; }

} // namespace tg
