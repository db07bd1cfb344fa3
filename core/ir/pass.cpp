// The pass driver (tg/ir/pass.hpp): timing, spec checks and printing around every pass.
#include "tg/ir/pass.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>

#include "tg/error.hpp"
#include "tg/ir/pattern_matcher.hpp"
#include "tg/ir/spec.hpp"
#include "tg/knobs.hpp"

namespace tg {

namespace {

// Every pass's time, printed at exit when TRACK_MATCH_STATS=2.
struct PassTimes {
  std::mutex mu;
  std::map<std::string, PassStats> by_name;

  static PassTimes& get() {
    static PassTimes t;
    return t;
  }
  std::vector<PassStats> sorted() {
    std::lock_guard lock(mu);
    std::vector<PassStats> out;
    for (const auto& [name, s] : by_name) out.push_back(s);
    std::sort(out.begin(), out.end(),
              [](const PassStats& a, const PassStats& b) { return a.ms > b.ms; });
    return out;
  }
  ~PassTimes() {
    if (track_match_stats() < 2 || by_name.empty()) return;
    std::fprintf(stderr, "%10s %10s  pass\n", "calls", "ms");
    // Named graph_rewrites run inside passes: the total counts the passes only.
    double total = 0;
    size_t passes = 0;
    for (const PassStats& s : sorted()) {
      std::fprintf(stderr, "%10lld %10.3f  %s\n", static_cast<long long>(s.calls), s.ms,
                   s.name.c_str());
      if (s.name.rfind("graph_rewrite ", 0) == 0) continue;
      total += s.ms;
      ++passes;
    }
    std::fprintf(stderr, "%10s %10.3f  total over %zu passes\n", "", total, passes);
  }
};

} // namespace

std::vector<PassStats> pass_stats() { return PassTimes::get().sorted(); }

void record_pass_time(const std::string& name, double ms) {
  PassTimes& t = PassTimes::get();
  std::lock_guard lock(t.mu);
  PassStats& s = t.by_name[name];
  s.name = name;
  s.calls += 1;
  s.ms += ms;
}

bool print_after(std::string_view pipeline, std::string_view name) {
  const std::string wanted = knobs::PRINT_AFTER.get();
  if (wanted.empty()) return false;
  const std::string full = std::string(pipeline) + "/" + std::string(name);
  size_t start = 0;
  while (start <= wanted.size()) {
    size_t end = wanted.find(',', start);
    if (end == std::string::npos) end = wanted.size();
    const std::string_view item = std::string_view(wanted).substr(start, end - start);
    if (item == "all" || item == name || item == full) return true;
    start = end + 1;
  }
  return false;
}

void pass_detail::run_pass(std::string_view pipeline, std::string_view name,
                           const std::function<void()>& body,
                           const std::function<std::vector<UOpPtr>()>& check,
                           const std::function<std::string()>& describe) {
  const std::string full = std::string(pipeline) + "/" + std::string(name);
  const bool timed = track_match_stats() > 0;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    body();
  } catch (const SpecError& e) { // a node built inside the pass broke the spec (SPEC=1)
    throw SpecError("pass " + full + " produced a node that breaks the spec: " + e.what());
  }
  if (timed)
    record_pass_time(
        full,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  if (spec_checking()) {
    try {
      for (const UOpPtr& g : check())
        if (g) verify_graph(g);
    } catch (const SpecError& e) {
      throw SpecError("pass " + full + " produced a node that breaks the spec: " + e.what());
    }
  }
  if (print_after(pipeline, name)) {
    std::printf("after pass %s:\n%s", full.c_str(), describe().c_str());
    std::fflush(stdout);
  }
}

} // namespace tg
