// The CPU runtime: allocator, queue, threads, errors, debug output.
#include <doctest/doctest.h>

#include <bit>
#include <thread>

#include "cpu_test_util.hpp"
#include "runtime.hpp"
#include "spin_pool.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

using namespace tg;
using namespace tg::cpu::test;

namespace {

// out[i] = out[i] * 2 + 1 over n items.
std::vector<UOpPtr> step_kernel(int64_t n) {
  Linear k;
  auto out = k.add(param(0, dtypes::int32, n));
  auto g = k.add(special("gidx0", n));
  auto idx = index(out, g);
  k.add(store(idx, load(idx) * 2 + 1));
  return k.list();
}

// Counts each item of its range once: buffers[0] is an int32 array of counts.
void count_items(void** buffers, const int64_t*, int64_t begin, int64_t end) {
  auto* counts = static_cast<std::atomic<int32_t>*>(buffers[0]);
  for (int64_t i = begin; i < end; ++i) counts[i].fetch_add(1, std::memory_order_relaxed);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST_SUITE("cpu.runtime") {

  TEST_CASE("the allocator returns 64-byte aligned memory and copies in and out") {
    Allocator& a = device().allocator();
    for (size_t bytes :
         {size_t{0}, size_t{1}, size_t{3}, size_t{64}, size_t{1000}, size_t{1} << 20}) {
      DevicePtr p = a.alloc(bytes);
      CHECK(p % 64 == 0);
      std::vector<uint8_t> in(bytes), out(bytes);
      for (size_t i = 0; i < bytes; ++i) in[i] = static_cast<uint8_t>(i * 31);
      a.copy_in(p, in.data(), bytes);
      a.copy_out(out.data(), p, bytes);
      CHECK(in == out);
      a.free(p, bytes);
    }
  }

  TEST_CASE("the device lists LLVM first and names the choices for an unknown renderer") {
    CHECK(device().renderers() == std::vector<std::string>{"LLVM", "C"});
    CHECK(device().name() == "CPU");
    CHECK_THROWS_WITH_AS(device().renderer("PTX"),
                         doctest::Contains("choose LLVM (the default) or C"), tg::Error);
  }

  TEST_CASE("the queue runs commands in order, off the caller's thread") {
    auto& dev = device();
    const int64_t n = 4096;
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      auto prg = dev.load(
          "step", dev.compiler(rn).compile(dev.renderer(rn).render("step", step_kernel(n))));
      Allocator& a = dev.allocator();
      DevicePtr buf = a.alloc(n * 4);
      Queue& q = dev.queue();
      std::vector<int32_t> init(n, 0), out(n, -7);
      std::vector<uint8_t> bytes(n * 4);
      std::memcpy(bytes.data(), init.data(), bytes.size());
      q.copy_in(buf, bytes);
      LaunchArgs args;
      args.buffers = {buf};
      args.global = {n, 1, 1};
      for (int i = 0; i < 5; ++i) q.exec(prg, args); // x -> 2x+1 five times: 31
      q.copy_out(out.data(), buf, n * 4);
      const uint64_t v = q.signal();
      q.wait(v);
      CHECK(q.completed() >= v);
      for (int64_t i = 0; i < n; ++i) REQUIRE(out[i] == 31);
      a.free(buf, n * 4);
    }
  }

  TEST_CASE("the queue does not block the caller and wait() rethrows a command's error") {
    auto& q = dynamic_cast<tg::cpu::CpuQueue&>(device().queue());
    std::atomic<bool> release{false}, ran_after{false};
    q.submit([&] {
      while (!release.load()) std::this_thread::yield();
    });
    q.submit([] { throw tg::Error("kernel exploded"); });
    q.submit([&] { ran_after = true; });
    const uint64_t v = q.signal();
    CHECK(q.completed() < v); // the first command is still spinning: submit returned anyway
    release = true;
    CHECK_THROWS_WITH_AS(q.wait(v), "kernel exploded", tg::Error);
    CHECK(ran_after.load());
    q.synchronize(); // the error was reported once
  }

  TEST_CASE("CPU_THREADS caps the threads a launch uses") {
    tg::Context one{{"CPU_THREADS", 1}}; // read when the device is made
    tg::cpu::CpuDevice dev;
    CHECK(dev.threads() == 1);
    const int64_t n = 1 << 16;
    auto bin = dev.compiler("LLVM").compile(dev.renderer("LLVM").render("step", step_kernel(n)));
    auto prg = dev.load("step", bin);
    DevicePtr buf = dev.allocator().alloc(n * 4);
    LaunchArgs args;
    args.buffers = {buf};
    args.global = {n, 1, 1};
    for (int i = 0; i < 20; ++i) prg->run(args, false);
    CHECK(std::popcount(dynamic_cast<tg::cpu::CpuProgram&>(*prg).thread_mask()) == 1);
    dev.allocator().free(buf, n * 4);

    CHECK_THROWS_WITH_AS(tg::Context({{"CPU_THREADS", -2}}),
                         doctest::Contains("CPU_THREADS='-2' is out of range"), tg::Error);
  }

  TEST_CASE("a launch spreads over no more threads than the device has, and times when asked") {
    auto& dev = device();
    const int64_t n = 1 << 18;
    auto prg = dev.load(
        "step", dev.compiler("C").compile(dev.renderer("C").render("step", step_kernel(n))));
    DevicePtr buf = dev.allocator().alloc(n * 4);
    LaunchArgs args;
    args.buffers = {buf};
    args.global = {n, 1, 1};
    double t = 0;
    for (int i = 0; i < 10; ++i) t += prg->run(args, true);
    CHECK(t > 0);
    CHECK(std::popcount(dynamic_cast<tg::cpu::CpuProgram&>(*prg).thread_mask()) <= dev.threads());
    dev.allocator().free(buf, n * 4);
  }

  TEST_CASE("a short kernel runs on the caller's thread once measured; a long one stays split") {
    auto& dev = device();
    if (dev.threads() < 2) return; // nothing is split on one thread
    auto load_step = [&](int64_t n) {
      return dev.load("step", dev.compiler("LLVM").compile(
                                  dev.renderer("LLVM").render("step", step_kernel(n))));
    };
    auto stats = [](const std::shared_ptr<Program>& p) -> const tg::cpu::LaunchStats& {
      return dynamic_cast<tg::cpu::CpuProgram&>(*p).launch_stats();
    };
    auto run = [&](const std::shared_ptr<Program>& p, int64_t n, int times) {
      DevicePtr buf = dev.allocator().alloc(static_cast<size_t>(n) * 4);
      LaunchArgs args;
      args.buffers = {buf};
      args.global = {n, 1, 1};
      for (int i = 0; i < times; ++i) p->run(args, false);
      dev.allocator().free(buf, static_cast<size_t>(n) * 4);
    };
    // 64 stores: the split costs more than the work. After a short split launch, the next
    // one measures it unsplit.
    auto small = load_step(64);
    run(small, 64, 1);
    CHECK(stats(small).item_ns.load() < 0);
    CHECK(stats(small).split_ns.load() >= 0);
    run(small, 64, 20);
    CHECK(stats(small).item_ns.load() >= 0);
    // 64M stores (tens of milliseconds): never run unsplit to be measured.
    const int64_t big_n = int64_t{1} << 26;
    auto big = load_step(big_n);
    run(big, big_n, 3);
    CHECK(stats(big).split_ns.load() > 50000);
    CHECK(stats(big).item_ns.load() < 0);
  }

  TEST_CASE("the spinning pool runs every item once, from several host threads at a time") {
    // Chunk counts below, at and above the items and the threads; launches right after one
    // another (the workers spinning) and after a pause (the workers asleep); four host threads
    // launching at once (serialized by the pool).
    tg::cpu::SpinPool pool(3);
    auto check = [&](int64_t n, int64_t chunks) {
      std::vector<std::atomic<int32_t>> counts(static_cast<size_t>(n));
      void* bufs[] = {counts.data()};
      std::atomic<uint64_t> ran_on{0};
      pool.run(count_items, bufs, nullptr, n, chunks, &ran_on);
      for (const auto& c : counts) REQUIRE(c.load() == 1);
      CHECK(ran_on.load() != 0);
      CHECK(std::bit_width(ran_on.load()) <= 3);
    };
    for (int64_t n : {1, 2, 3, 7, 100, 4096})
      for (int64_t chunks : {1, 2, 3, 12, 1000, 100000}) check(n, chunks);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    check(1000, 12);
    std::vector<std::thread> launchers;
    for (int t = 0; t < 4; ++t)
      launchers.emplace_back([&] {
        for (int i = 0; i < 200; ++i) check(64 + i, 1 + i % 9);
      });
    for (std::thread& t : launchers) t.join();
  }

  TEST_CASE("rendering an unsupported node raises a tg::Error naming it") {
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      auto& r = device().renderer(rn);
      {
        Linear k;
        auto out = k.add(param(0, dtypes::uint64, 1));
        auto t = UOp::make(Ops::THREEFRY, dtypes::uint64,
                           {cnst(dtypes::uint64, 1), cnst(dtypes::uint64, 2)});
        k.add(store(index(out, ci(0)), t));
        try {
          r.render("bad", k.list());
          FAIL("THREEFRY rendered");
        } catch (const tg::Error& e) {
          CHECK(contains(e.what(), "cannot render UOp(Ops.THREEFRY, uint64"));
          CHECK(contains(e.what(), "codegen must lower or decompose it first"));
        }
      }
      {
        Linear k;
        auto out = k.add(param(0, dtypes::int32, 4));
        auto l = k.add(special("lidx0", 4));
        k.add(store(index(out, l), l));
        CHECK_THROWS_WITH_AS(r.render("bad", k.list()),
                             doctest::Contains("UOp(Ops.SPECIAL, int32, arg='lidx0'"), tg::Error);
      }
    }
  }

  TEST_CASE("a binary that is not a CPU kernel is refused with the reason") {
    const std::vector<uint8_t> junk{1, 2, 3, 4};
    CHECK_THROWS_WITH_AS(device().load("k", junk), doctest::Contains("neither an ELF object"),
                         tg::Error);
  }

  TEST_CASE("compiler identities name the toolchain and the host CPU") {
    CHECK(contains(device().compiler("LLVM").identity(), "llvm-19"));
    CHECK(contains(device().compiler("C").identity(), "clang-19"));
  }

  TEST_CASE("both compilers disassemble their binaries for DEBUG=7") {
    for (const char* r : {"LLVM", "C"}) {
      CAPTURE(r);
      Compiler& c = device().compiler(r);
      const std::string asm_text =
          c.disassemble(c.compile(device().renderer(r).render("step", step_kernel(64))));
      CHECK(contains(asm_text, "step:\n"));
      CHECK(contains(asm_text, "\tret"));
    }
  }

} // TEST_SUITE
