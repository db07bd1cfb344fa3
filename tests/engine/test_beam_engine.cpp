// BEAM through the engine: the compiled-kernel cache tells kernels lowered under NOOPT=1,
// BEAM=N and the heuristic apart, and a TinyJit step under BEAM searches its kernels before it
// records them (once per kernel, on the step's buffers), then replays the searched kernels
// with the eager step's results.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>
#include <vector>

#include "tg/beam.hpp"
#include "tg/jit.hpp"
#include "tg/knobs.hpp"
#include "tg/runner_cache.hpp"
#include "tg/tensor.hpp"

using namespace tg;
namespace fs = std::filesystem;

namespace {
Tensor ramp(int64_t rows, int64_t cols, float scale) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(scale * static_cast<float>(i + 1));
  return Tensor::from_vector(v, Shape{rows, cols});
}
} // namespace

TEST_SUITE("engine.beam") {
  TEST_CASE("the runner cache keys on how Opts are chosen: NOOPT=1 gets its own kernel") {
    Tensor a = ramp(64, 64, 0.1f).realize();
    std::vector<ScheduleItem> items = (a * 3 + 1).schedule();
    REQUIRE(items.size() == 1);
    const ScheduleItem& item = items[0];
    auto heuristic = runner_for(item.device, item.ast);
    std::shared_ptr<CompiledRunner> plain;
    {
      Context noopt{{"NOOPT", 1}};
      CHECK(opt_choice() == "noopt");
      plain = runner_for(item.device, item.ast);
    }
    CHECK(opt_choice() == "heuristic");
    CHECK(plain != heuristic);
    // The heuristic upcasts this kernel; NOOPT=1 leaves its two loops as they are.
    CHECK(plain->kernel().name == "E_64_64");
    CHECK(plain->kernel().name != heuristic->kernel().name);
    CHECK(runner_for(item.device, item.ast) == heuristic);
  }

  TEST_CASE("a TinyJit step under BEAM=1 searches at record time and replays the result") {
    const fs::path dir = fs::temp_directory_path() / ("tg_beam_jit_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    Tensor w = ramp(16, 24, 0.3f).realize();
    auto step = [&](const Tensor& x) { return (x.matmul(w).relu() * 2).sum({1}); };
    std::vector<std::vector<float>> want;
    for (int i = 0; i < 4; ++i)
      want.push_back(step(ramp(8, 16, 0.1f * (i + 1))).to_vector<float>());

    Context beam{{"BEAM", 1}, {"TG_CACHE_DIR", dir.string()}, {"IGNORE_BEAM_CACHE", 0}};
    CHECK(opt_choice() == "beam1");
    TinyJit jit(step);
    const int64_t before = beam_stats().searches + beam_stats().cache_hits;
    std::vector<int64_t> searches;
    for (int i = 0; i < 4; ++i) {
      std::vector<float> got = jit(ramp(8, 16, 0.1f * (i + 1))).to_vector<float>();
      REQUIRE(got.size() == want[i].size());
      for (size_t k = 0; k < got.size(); ++k)
        CHECK(got[k] == doctest::Approx(want[i][k]).epsilon(1e-5));
      searches.push_back(beam_stats().searches + beam_stats().cache_hits);
    }
    // The kernels were searched (or found in the cache) by the end of the recording call, and
    // the replays searched nothing.
    CHECK(searches[1] > before);
    CHECK(searches[2] == searches[1]);
    CHECK(searches[3] == searches[1]);
    CHECK(jit.core().recorded_launches() > 0);
    CHECK(fs::exists(dir / "beam"));
    fs::remove_all(dir);
  }
}
