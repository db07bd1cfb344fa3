// CompiledRunner: hand-built kernel ASTs lowered, compiled once and launched on the target's
// queue (the CPU through both renderers, or DEV's device); the work estimates counted by hand; the
// DEBUG=2 launch line.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <regex>

#include "codegen_test_util.hpp"
#include "tg/compile_cache.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/runner.hpp"

using namespace tg;
using namespace tg::codegen_test;

namespace {

// The suites' device.
std::shared_ptr<Device> dev() { return target().device; }

std::vector<float> pattern(size_t n, int mod, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 5 + 1) % mod) - offset;
  return v;
}

// Device buffers holding `bufs`, freed at scope exit.
struct DeviceBufs {
  std::vector<DevicePtr> ptrs;
  std::vector<size_t> sizes;
  explicit DeviceBufs(const std::vector<HostBuf>& bufs) {
    Allocator& a = test_device().allocator();
    for (const auto& b : bufs) {
      ptrs.push_back(a.alloc(b.bytes.size()));
      sizes.push_back(b.bytes.size());
      a.copy_in(ptrs.back(), b.bytes.data(), b.bytes.size());
    }
  }
  template <class T> std::vector<T> read(size_t i) const {
    std::vector<T> v(sizes[i] / sizeof(T));
    test_device().allocator().copy_out(v.data(), ptrs[i], sizes[i]);
    return v;
  }
  ~DeviceBufs() {
    for (size_t i = 0; i < ptrs.size(); ++i) test_device().allocator().free(ptrs[i], sizes[i]);
  }
};

// E_4_8: out[i, j] = a[i, j] + b[j].
UOpPtr add_4_8() {
  auto out = buf(0, dtypes::float32, 32), a = buf(1, dtypes::float32, 32),
       b = buf(2, dtypes::float32, 8);
  auto i = rng(4, 0), j = rng(8, 1);
  return UOp::sink({st(out, i * 8 + j, ld(a, i * 8 + j) + ld(b, j))});
}

// r_16_32: out[i] = sum_j x[i, j].
UOpPtr row_sum_16_32() {
  auto out = buf(0, dtypes::float32, 16), x = buf(1, dtypes::float32, 512);
  auto i = rng(16, 0), j = rng(32, 1, AxisType::Reduce);
  return UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * 32 + j), {j}))});
}

// Everything `fn` writes to a FILE*.
template <class F> std::string capture(F fn) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  fn(f);
  std::string s(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  s.resize(std::fread(s.data(), 1, s.size(), f));
  std::fclose(f);
  return s;
}

} // namespace

TEST_SUITE("codegen.runner") {

  TEST_CASE("elementwise results match C++ through both renderers") {
    auto av = pattern(32, 13, 6), bv = pattern(8, 5, 2);
    LoweredKernel k = lower_kernel(add_4_8(), target_caps());
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      CompiledRunner runner(dev(), r, k);
      runner.set_debug(0);
      DeviceBufs d({HostBuf::zeros<float>(32), HostBuf::of(av), HostBuf::of(bv)});
      double et = runner.run(d.ptrs, {});
      CHECK(et >= 0);
      auto o = d.read<float>(0);
      for (int64_t x = 0; x < 4; ++x)
        for (int64_t y = 0; y < 8; ++y) REQUIRE(o[x * 8 + y] == av[x * 8 + y] + bv[y]);
      // Launched again without waiting: returns at once, the queue finishes it.
      CHECK(runner.run(d.ptrs, {}, false) == 0);
      test_device().queue().synchronize();
      CHECK(d.read<float>(0) == o);
    }
  }

  TEST_CASE("reduce results match C++ through both renderers") {
    auto xv = pattern(512, 11, 5);
    LoweredKernel k = lower_kernel(row_sum_16_32(), target_caps());
    // A GPU groups the reduce of a kernel with few outputs (16 work items each take 2).
    CHECK(k.name == (on_cpu() || noopt() ? "r_16_32" : "r_16_16_2"));
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      CompiledRunner runner(dev(), r, k);
      runner.set_debug(0);
      DeviceBufs d({HostBuf::zeros<float>(16), HostBuf::of(xv)});
      runner.run(d.ptrs);
      auto o = d.read<float>(0);
      for (int64_t y = 0; y < 16; ++y) {
        float ref = 0;
        for (int64_t t = 0; t < 32; ++t) ref += xv[y * 32 + t];
        REQUIRE(o[y] == ref);
      }
    }
  }

  TEST_CASE("estimates: elementwise add with a broadcast input") {
    KernelEstimates e = estimate_kernel(lower_kernel(add_4_8(), cpu_caps()));
    CHECK(e.ops == 32);                 // one float ADD per element; the i*8+j indexing is free
    CHECK(e.lds == 3 * 32 * 4);         // two loads and a store per element
    CHECK(e.mem == 32 * 4 * 2 + 8 * 4); // b is touched whole once
  }

  TEST_CASE("estimates: row sum") {
    // Unoptimized: the heuristic would unroll the row and combine lanes without an accumulator.
    KernelEstimates e = estimate_kernel(lower_kernel_with_opts(row_sum_16_32(), cpu_caps(), {}));
    CHECK(e.ops == 512);              // one ADD per element into the accumulator
    CHECK(e.lds == 512 * 4 + 16 * 4); // register loads and stores are not memory
    CHECK(e.mem == 512 * 4 + 16 * 4);
  }

  TEST_CASE("estimates: MULACC counts two, loop ends follow DEFINE_VAR values") {
    // out[i] = a[i] * 3 + 1 over a loop of n (a Global range of symbolic size stays a loop).
    auto out = buf(0, dtypes::float32, 64), a = buf(1, dtypes::float32, 64);
    auto n = UOp::variable("n", 1, 64);
    auto g = UOp::range(n, 0, AxisType::Global);
    auto v =
        UOp::make(Ops::MULACC, dtypes::float32,
                  {ld(a, g), UOp::const_(dtypes::float32, 3.0), UOp::const_(dtypes::float32, 1.0)});
    LoweredKernel k = lower_kernel(UOp::sink({st(out, g, v)}), cpu_caps());
    REQUIRE(k.vars.size() == 1);
    const int64_t n10[] = {10};
    KernelEstimates e = estimate_kernel(k, n10);
    CHECK(e.ops == 2 * 10);
    CHECK(e.lds == 2 * 10 * 4);
    CHECK(e.mem == 2 * 10 * 4);
    CHECK(estimate_kernel(k).ops == 2 * 64); // no value: the variable's maximum
  }

  TEST_CASE("run checks its arguments") {
    LoweredKernel k = lower_kernel(add_4_8(), target_caps());
    CompiledRunner runner(dev(), renderers().front(), k);
    runner.set_debug(0);
    CHECK_THROWS_AS(runner.run({0, 0}), Error);         // three buffers needed
    CHECK_THROWS_AS(runner.run({0, 0, 0}, {1}), Error); // no variables taken
  }

  TEST_CASE("DEBUG=2 prints one line per launch and a total per batch") {
    LoweredKernel k = lower_kernel_with_opts(add_4_8(), target_caps(), {}); // dims 4,8

    CompiledRunner runner(dev(), renderers().back(), k);
    DeviceBufs d({HostBuf::zeros<float>(32), HostBuf::zeros<float>(32), HostBuf::zeros<float>(8)});
    const int64_t before = launch_counters().kernel_count;
    const double before_ops = launch_counters().ops, k_ops = estimate_kernel(k).ops;
    std::string out = capture([&](std::FILE* f) {
      runner.set_debug(2);
      runner.set_output(f);
      LaunchTotal total(2, f);
      runner.run(d.ptrs, {}, false); // DEBUG=2 waits and times even so
      runner.run(d.ptrs);
    });
    CAPTURE(out);
    CHECK(launch_counters().kernel_count == before + 2);
    CHECK(launch_counters().ops - before_ops == 2 * k_ops);
    // Without work groups the outer axis is gidx0; with them the inner one (tinygrad's order).
    const std::string dims = on_cpu() ? "4,8" : "8,4";
    const std::string name = test_device().name();
    const std::regex line(
        R"(\*\*\* )" + name + R"( +[0-9]+ E_4_8 +dims )" + dims +
        R"( +arg  3 tm +[0-9]+\.[0-9]{2}(us|ms|s )/ +[0-9]+\.[0-9]{2}ms \( +[0-9]+\.[0-9]{2} GFLOPS +[0-9]+\.[0-9]\|[0-9]+\.[0-9] +GB/s\)\n)");
    const std::regex all(std::string("(") + R"(\*\*\* )" + name + R"( [^\n]*\n)" + "){2}" +
                         R"(\*\*\* total +2 kernels +[0-9.]+ ms +[0-9.]+ GFLOP +[0-9.]+ GB\n)");
    CHECK(std::regex_search(out, line));
    CHECK(std::regex_match(out, all));

    // Below DEBUG=2 nothing is printed.
    std::string quiet = capture([&](std::FILE* f) {
      runner.set_debug(1);
      runner.set_output(f);
      LaunchTotal total(1, f);
      runner.run(d.ptrs);
    });
    CHECK(quiet.empty());
    // Nor are estimates made (a symbolic kernel's cost a walk of its list at every launch):
    // the launch is counted, its work is not.
    const LaunchCounters at1 = launch_counters();
    runner.run(d.ptrs);
    CHECK(launch_counters().kernel_count == at1.kernel_count + 1);
    CHECK(launch_counters().ops == at1.ops);
  }

  TEST_CASE("time_to_str picks us, ms or s as tinygrad does") {
    CHECK(time_to_str(5.21e-6) == "     5.21us");
    CHECK(time_to_str(0.0152) == "    15.20ms");
    CHECK(time_to_str(12.5) == "    12.50s ");
  }

  TEST_CASE("DEBUG=4 prints the source and DEBUG=7 the assembly, also on a compile-cache hit") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("tg-runner-cache-" + std::to_string(std::random_device{}()));
    const LoweredKernel k = lower_kernel(add_4_8(), target_caps());
    for (const std::string& renderer : renderers()) {
      CAPTURE(renderer);
      std::FILE* f = std::tmpfile();
      REQUIRE(f);
      std::string source;
      const CompileCacheStats before = compile_cache_stats();
      {
        tg::Context debug{{"DEBUG", 7}, {"TG_CACHE_DIR", dir.string()}, {"TG_COMPILER_CACHE", 1}};
        CompiledRunner compiled(dev(), renderer, k, f);
        CompiledRunner cached(dev(), renderer, k, f);
        source = cached.source();
      }
      const CompileCacheStats after = compile_cache_stats();
      CHECK(after.misses - before.misses == 1);
      CHECK(after.hits - before.hits == 1); // the second runner's binary came from the cache
      std::rewind(f);
      std::string printed;
      for (int ch; (ch = std::fgetc(f)) != EOF;) printed.push_back(static_cast<char>(ch));
      std::fclose(f);
      auto count = [&](const std::string& what) {
        int n = 0;
        for (size_t at = printed.find(what); at != std::string::npos;
             at = printed.find(what, at + 1))
          ++n;
        return n;
      };
      CHECK(count(source) == 2);
      if (on_cpu()) {
        CHECK(count(k.name + ":\n") == 2); // the disassembly's label, once per runner
        CHECK(count("\tret") >= 2);
      } else {
        CHECK(count("(this device's compiler has no disassembler)") == 2);
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
}
