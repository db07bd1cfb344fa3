#pragma once
// Passes as data: a pipeline is a table of named steps, each a plain function over the
// pipeline's context, run in order by one driver. The driver is what makes a pipeline
// observable: it times every pass (TRACK_MATCH_STATS=2 prints the time per pass at exit, next
// to the time per rule), checks the result against the IR spec after every pass under SPEC=1
// and names the pass that produced a bad node, and prints the result after the passes named by
// PRINT_AFTER. Codegen (tg/codegen.hpp) and the scheduler run their stages through it.
//
//   struct Ctx { UOpPtr sink; ... };
//   constexpr Pass<Ctx> kPasses[] = {{"simplify", [](Ctx& c) { c.sink = simplify(c.sink); }}, ...};
//   run_passes("codegen", kPasses, ctx);
//
// A context holds the graph the passes work on as `sink`. It may define `graphs()` (every graph
// the spec check should see, e.g. kernels built from the sink) and `describe()` (what
// PRINT_AFTER prints; print_graph(sink) otherwise).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tg/ir/print.hpp"
#include "tg/ir/uop.hpp"

namespace tg {

template <class Ctx> struct Pass {
  std::string_view name;
  void (*run)(Ctx& ctx);
};

namespace pass_detail {
// Runs `body` as pass `pipeline/name`: timed, its SpecErrors named after it, then the graphs
// `check` returns verified (SPEC=1) and `describe` printed (PRINT_AFTER).
void run_pass(std::string_view pipeline, std::string_view name, const std::function<void()>& body,
              const std::function<std::vector<UOpPtr>()>& check,
              const std::function<std::string()>& describe);
} // namespace pass_detail

template <class Ctx>
void run_passes(std::string_view pipeline, std::span<const Pass<Ctx>> passes, Ctx& ctx) {
  for (const Pass<Ctx>& p : passes)
    pass_detail::run_pass(
        pipeline, p.name, [&] { p.run(ctx); },
        [&]() -> std::vector<UOpPtr> {
          if constexpr (requires { ctx.graphs(); })
            return ctx.graphs();
          else
            return {ctx.sink};
        },
        [&]() -> std::string {
          if constexpr (requires { ctx.describe(); })
            return ctx.describe();
          else
            return print_graph(ctx.sink);
        });
}
template <class Ctx, size_t N>
void run_passes(std::string_view pipeline, const Pass<Ctx> (&passes)[N], Ctx& ctx) {
  run_passes(pipeline, std::span<const Pass<Ctx>>(passes, N), ctx);
}

// Time spent in one pass (or one named graph_rewrite), over all its runs.
struct PassStats {
  std::string name; // "codegen/expand", "graph_rewrite devectorize"
  int64_t calls = 0;
  double ms = 0;
};
// Every pass timed so far (only while TRACK_MATCH_STATS >= 1), slowest first.
std::vector<PassStats> pass_stats();
// Adds one timed run of `name` to the statistics (the driver and graph_rewrite call it).
void record_pass_time(const std::string& name, double ms);

// True when PRINT_AFTER names this pass ("expand", "codegen/expand" or "all").
bool print_after(std::string_view pipeline, std::string_view name);

} // namespace tg
