// The CPU queue's timestamps and the CPU Graph (a recorded list of launches replayed as one
// queue command).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "cpu_test_util.hpp"
#include "tg/error.hpp"

using namespace tg;
using namespace tg::cpu::test;

namespace {

constexpr int64_t kN = 1024;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// c[i] = a[i] + b[i]   (0: c, 1: a, 2: b)
std::vector<UOpPtr> add_kernel() {
  Linear k;
  auto c = k.add(param(0, dtypes::int32, kN));
  auto a = k.add(param(1, dtypes::int32, kN));
  auto b = k.add(param(2, dtypes::int32, kN));
  auto g = k.add(special("gidx0", kN));
  k.add(store(index(c, g), load(index(a, g)) + load(index(b, g))));
  return k.list();
}

// d[i] = c[i] * s   (0: d, 1: c; variable s)
std::vector<UOpPtr> scale_kernel() {
  Linear k;
  auto d = k.add(param(0, dtypes::int32, kN));
  auto c = k.add(param(1, dtypes::int32, kN));
  auto s = k.add(UOp::variable("s", -100, 100, dtypes::int32));
  auto g = k.add(special("gidx0", kN));
  k.add(store(index(d, g), load(index(c, g)) * s));
  return k.list();
}

// d[i] = d[i] * 2 + 1   (0: d)
std::vector<UOpPtr> step_kernel() {
  Linear k;
  auto d = k.add(param(0, dtypes::int32, kN));
  auto g = k.add(special("gidx0", kN));
  auto idx = index(d, g);
  k.add(store(idx, load(idx) * 2 + 1));
  return k.list();
}

std::shared_ptr<Program> build(const std::string& rn, const std::string& name,
                               const std::vector<UOpPtr>& uops) {
  auto& dev = device();
  return dev.load(name, dev.compiler(rn).compile(dev.renderer(rn).render(name, uops)));
}

// Device buffers a, b, c, d of kN int32 each.
struct Bufs {
  DevicePtr a, b, c, d;
  Bufs() {
    Allocator& al = device().allocator();
    a = al.alloc(kN * 4), b = al.alloc(kN * 4), c = al.alloc(kN * 4), d = al.alloc(kN * 4);
  }
  ~Bufs() {
    Allocator& al = device().allocator();
    for (DevicePtr p : {a, b, c, d}) al.free(p, kN * 4);
  }
  Bufs(const Bufs&) = delete;
  Bufs& operator=(const Bufs&) = delete;
};

std::vector<LaunchArgs> three_args(const Bufs& x, int64_t s) {
  LaunchArgs add{{x.c, x.a, x.b}, {}, {kN, 1, 1}, {1, 1, 1}};
  LaunchArgs scale{{x.d, x.c}, {s}, {kN, 1, 1}, {1, 1, 1}};
  LaunchArgs step{{x.d}, {}, {kN, 1, 1}, {1, 1, 1}};
  return {add, scale, step};
}

// Fills a and b from `seed`, zeroes c and d, through the queue.
void fill(Queue& q, const Bufs& x, int32_t seed) {
  std::vector<int32_t> a(kN), b(kN), z(kN, 0);
  for (int64_t i = 0; i < kN; ++i)
    a[i] = seed + static_cast<int32_t>(i), b[i] = seed * 7 - 3 * static_cast<int32_t>(i);
  auto bytes = [](const std::vector<int32_t>& v) { return HostBuf::of(v).bytes; };
  q.copy_in(x.a, bytes(a));
  q.copy_in(x.b, bytes(b));
  q.copy_in(x.c, bytes(z));
  q.copy_in(x.d, bytes(z));
}

std::vector<int32_t> expected(int32_t seed, int32_t s) {
  std::vector<int32_t> d(kN);
  for (int64_t i = 0; i < kN; ++i) {
    const int32_t a = seed + static_cast<int32_t>(i), b = seed * 7 - 3 * static_cast<int32_t>(i);
    d[i] = (a + b) * s * 2 + 1;
  }
  return d;
}

std::vector<int32_t> read(Queue& q, DevicePtr p) {
  std::vector<int32_t> out(kN, -1);
  q.copy_out(out.data(), p, kN * 4);
  q.synchronize();
  return out;
}

// A program that records its launches in `log` (its id and its first buffer) and throws
// when `fail` is set.
struct LogProgram final : Program {
  LogProgram(int id_, std::vector<std::pair<int, DevicePtr>>& log_, bool fail_ = false)
      : id(id_), log(log_), fail(fail_) {}
  double run(const LaunchArgs& args, bool) override {
    if (fail) throw tg::Error("program " + std::to_string(id) + " failed");
    log.emplace_back(id, args.buffers.empty() ? 0 : args.buffers[0]);
    return 0;
  }
  int id;
  std::vector<std::pair<int, DevicePtr>>& log;
  bool fail;
};

} // namespace

TEST_SUITE("cpu.graph") {

  TEST_CASE("timestamps increase along the queue and bracket the work between them") {
    auto& q = dynamic_cast<tg::cpu::CpuQueue&>(device().queue());
    q.synchronize();
    // A host command that takes 20 ms stands in for a long kernel: its start and end lie
    // between the timestamps around it.
    std::atomic<double> start{0}, end{0};
    const double host_before = now_seconds();
    const uint64_t v0 = q.timestamp();
    q.submit([&] {
      start = now_seconds();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      end = now_seconds();
    });
    const uint64_t v1 = q.timestamp();
    CHECK(v1 > v0);
    q.wait(v1);
    const double host_after = now_seconds();
    const double t0 = q.timestamp_seconds(v0), t1 = q.timestamp_seconds(v1);
    CHECK(host_before <= t0);
    CHECK(t0 <= start.load());
    CHECK(end.load() <= t1);
    CHECK(t1 <= host_after);
    CHECK(t1 - t0 >= 0.02);
    CHECK(q.timestamp_seconds(v0) == t0); // readable again

    // A big kernel between host commands and timestamps: the timestamps lie between the
    // commands, and the second is taken after the kernel ran (a later time than the first). No
    // bound on the span from the kernel's own timings: on a loaded machine the direct runs can
    // be preempted while the queued one is not.
    {
      const int64_t big = 1 << 22;
      Linear k;
      auto d = k.add(param(0, dtypes::int32, big));
      auto g = k.add(special("gidx0", big));
      auto idx = index(d, g);
      k.add(store(idx, load(idx) * 2 + 1));
      auto& dev = device();
      auto prg = dev.load(
          "gbig", dev.compiler("LLVM").compile(dev.renderer("LLVM").render("gbig", k.list())));
      DevicePtr buf = dev.allocator().alloc(big * 4);
      const LaunchArgs args{{buf}, {}, {big, 1, 1}, {1, 1, 1}};
      std::atomic<double> before{0}, after{0};
      q.submit([&] { before = now_seconds(); });
      const uint64_t k0 = q.timestamp();
      q.exec(prg, args);
      const uint64_t k1 = q.timestamp();
      q.submit([&] { after = now_seconds(); });
      q.synchronize();
      const double s0 = q.timestamp_seconds(k0), s1 = q.timestamp_seconds(k1);
      CHECK(before.load() <= s0);
      CHECK(s1 <= after.load());
      CHECK(s1 > s0);
      dev.allocator().free(buf, big * 4);
    }

    // A kernel between timestamps, many times over: the captures never go backwards.
    auto prg = build("LLVM", "gstep", step_kernel());
    Bufs x;
    fill(q, x, 1);
    std::vector<uint64_t> stamps{q.timestamp()};
    for (int i = 0; i < 50; ++i) {
      q.exec(prg, LaunchArgs{{x.d}, {}, {kN, 1, 1}, {1, 1, 1}});
      stamps.push_back(q.timestamp());
    }
    q.wait(stamps.back());
    for (size_t i = 1; i < stamps.size(); ++i)
      REQUIRE(q.timestamp_seconds(stamps[i - 1]) <= q.timestamp_seconds(stamps[i]));
    // 0 -> 2x+1, 50 times: 2^50 - 1, wrapped to int32: -1.
    CHECK(read(q, x.d) == std::vector<int32_t>(kN, -1));
  }

  TEST_CASE("reading a timestamp that is not reached or not a timestamp raises") {
    auto& q = dynamic_cast<tg::cpu::CpuQueue&>(device().queue());
    std::atomic<bool> release{false};
    q.submit([&] {
      while (!release.load()) std::this_thread::yield();
    });
    const uint64_t v = q.timestamp();
    const std::string unreached = "timestamp " + std::to_string(v) + " is not reached yet";
    CHECK_THROWS_WITH_AS(q.timestamp_seconds(v), doctest::Contains(unreached.c_str()), tg::Error);
    release = true;
    q.wait(v);
    CHECK(q.timestamp_seconds(v) > 0);

    const uint64_t s = q.signal();
    q.wait(s);
    const std::string unknown = "timeline value " + std::to_string(s) + " is not a timestamp";
    CHECK_THROWS_WITH_AS(q.timestamp_seconds(s), doctest::Contains(unknown.c_str()), tg::Error);
    CHECK_THROWS_WITH_AS(q.timestamp_seconds(s + 1000000), doctest::Contains("is not a timestamp"),
                         tg::Error);
  }

  TEST_CASE("a graph of three kernels replays with new buffers and matches one-by-one launches") {
    auto& dev = device();
    Queue& q = dev.queue();
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      auto add = build(rn, "gadd", add_kernel());
      auto scale = build(rn, "gscale", scale_kernel());
      auto step = build(rn, "gstep", step_kernel());
      const std::shared_ptr<Program> prgs[] = {add, scale, step};

      // One by one, on the queue.
      Bufs ref;
      fill(q, ref, 5);
      auto ref_args = three_args(ref, 3);
      for (size_t i = 0; i < 3; ++i) q.exec(prgs[i], ref_args[i]);
      const std::vector<int32_t> one_by_one = read(q, ref.d);
      CHECK(one_by_one == expected(5, 3));

      // Recorded on other buffers, replayed on those, on the reference's and on new ones.
      Bufs rec;
      std::vector<GraphLaunch> launches;
      auto rec_args = three_args(rec, 3);
      for (size_t i = 0; i < 3; ++i) launches.push_back({prgs[i], rec_args[i]});
      std::shared_ptr<Graph> g = dev.graph(launches);
      REQUIRE(g);
      CHECK(dynamic_cast<tg::cpu::CpuGraph*>(g.get()) != nullptr);
      CHECK(g->size() == 3);

      fill(q, rec, 5);
      g->replay(rec_args);
      CHECK(read(q, rec.d) == one_by_one);

      Bufs fresh;
      fill(q, fresh, 5);
      g->replay(three_args(fresh, 3));
      CHECK(read(q, fresh.d) == one_by_one);

      // New buffers and a new variable value.
      fill(q, fresh, -11);
      g->replay(three_args(fresh, -4));
      CHECK(read(q, fresh.d) == expected(-11, -4));
      // ... and a one-by-one run of the same agrees.
      fill(q, ref, -11);
      ref_args = three_args(ref, -4);
      for (size_t i = 0; i < 3; ++i) q.exec(prgs[i], ref_args[i]);
      CHECK(read(q, ref.d) == read(q, fresh.d));

      // A replay is one queue command: the timeline moves by one for it.
      const uint64_t before = q.signal();
      g->replay(three_args(fresh, 1));
      const uint64_t after = q.signal();
      CHECK(after == before + 2);
      q.wait(after);
    }
  }

  TEST_CASE("a replay runs the launches in recorded order with the replay's arguments") {
    std::vector<std::pair<int, DevicePtr>> log;
    std::vector<GraphLaunch> launches;
    for (int i = 0; i < 4; ++i)
      launches.push_back({std::make_shared<LogProgram>(i, log), LaunchArgs{{DevicePtr(100 + i)}}});
    auto g = device().graph(launches);
    REQUIRE(g);
    std::vector<LaunchArgs> args;
    for (int i = 0; i < 4; ++i) args.push_back(LaunchArgs{{DevicePtr(200 + i)}});
    g->replay(args);
    g->replay(args);
    device().queue().synchronize();
    std::vector<std::pair<int, DevicePtr>> want;
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 4; ++i) want.emplace_back(i, 200 + i);
    CHECK(log == want);

    // A launch that throws ends its replay; the next wait() reports it once.
    log.clear();
    launches[1].program = std::make_shared<LogProgram>(1, log, true);
    auto bad = device().graph(launches);
    bad->replay(args);
    g->replay(args);
    CHECK_THROWS_WITH_AS(device().queue().synchronize(), "program 1 failed", tg::Error);
    device().queue().synchronize();
    want = {{0, 200}, {0, 200}, {1, 201}, {2, 202}, {3, 203}};
    CHECK(log == want);

    // An empty graph replays nothing.
    auto empty = device().graph({});
    REQUIRE(empty);
    CHECK(empty->size() == 0);
    empty->replay({});
  }

  TEST_CASE("a replay that does not match the recording raises and queues nothing") {
    std::vector<std::pair<int, DevicePtr>> log;
    std::vector<GraphLaunch> launches;
    for (int i = 0; i < 3; ++i)
      launches.push_back(
          {std::make_shared<LogProgram>(i, log), LaunchArgs{{1, 2}, {7}, {kN, 2, 1}, {1, 1, 1}}});
    auto g = device().graph(launches);
    std::vector<LaunchArgs> args(3, launches[0].args);

    CHECK_THROWS_WITH_AS(g->replay(std::span(args).first(2)),
                         "CPU graph replay: got arguments for 2 launches, the graph recorded 3; "
                         "pass one LaunchArgs per recorded launch, in recorded order",
                         tg::Error);
    auto wrong = args;
    wrong[1].global = {kN, 4, 1};
    CHECK_THROWS_WITH_AS(g->replay(wrong),
                         "CPU graph replay: launch 1 has global size (1024, 4, 1), recorded "
                         "with (1024, 2, 1); record a new graph for a different launch shape",
                         tg::Error);
    wrong = args;
    wrong[2].local = {2, 1, 1};
    CHECK_THROWS_WITH_AS(g->replay(wrong),
                         doctest::Contains("launch 2 has local size (2, 1, 1), recorded with "
                                           "(1, 1, 1)"),
                         tg::Error);
    wrong = args;
    wrong[0].buffers.push_back(3);
    CHECK_THROWS_WITH_AS(g->replay(wrong),
                         "CPU graph replay: launch 0 has 3 buffers, recorded with 2", tg::Error);
    wrong = args;
    wrong[0].vars.clear();
    CHECK_THROWS_WITH_AS(g->replay(wrong),
                         "CPU graph replay: launch 0 has 0 variables, recorded with 1", tg::Error);
    device().queue().synchronize();
    CHECK(log.empty());

    launches[1].program = nullptr;
    CHECK_THROWS_WITH_AS(device().graph(launches), "CPU graph: launch 1 of 3 has no program",
                         tg::Error);
  }

} // TEST_SUITE
