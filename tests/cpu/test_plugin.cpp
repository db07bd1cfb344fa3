// The CPU plugin as users get it: libtg-cpu.so found and loaded by the device registry.
#include <doctest/doctest.h>

#include "cpu_test_util.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tg;
using namespace tg::cpu::test;

TEST_SUITE("cpu.plugin") {

  TEST_CASE("the registry loads libtg-cpu.so and its device runs a kernel through both renderers") {
    DeviceRegistry reg(false);
    reg.add_search_path(TG_CPU_PLUGIN_DIR);
    auto infos = reg.plugins();
    const PluginInfo* cpu = nullptr;
    for (const auto& p : infos)
      if (p.name == "cpu") cpu = &p;
    REQUIRE(cpu != nullptr);
    CHECK(cpu->state == PluginState::available);
    CHECK(cpu->renderers == std::vector<std::string>{"LLVM", "C"});
    std::shared_ptr<Device> dev = reg.open("CPU");
    REQUIRE(dev);
    CHECK(dev->name() == "CPU");
    const int64_t n = 100;
    Linear k;
    auto out = k.add(param(0, dtypes::int32, n));
    auto a = k.add(param(1, dtypes::int32, n));
    auto g = k.add(special("gidx0", n));
    k.add(store(index(out, g), load(index(a, g)) * 3 - g));
    std::vector<int32_t> av(n);
    for (int64_t i = 0; i < n; ++i) av[i] = static_cast<int32_t>(i * i);
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      auto prg = dev->load("k", dev->compiler(rn).compile(dev->renderer(rn).render("k", k.list())));
      Allocator& al = dev->allocator();
      DevicePtr o = al.alloc(n * 4), in = al.alloc(n * 4);
      al.copy_in(in, av.data(), n * 4);
      LaunchArgs args;
      args.buffers = {o, in};
      args.global = {n, 1, 1};
      dev->queue().exec(prg, args);
      std::vector<int32_t> res(n);
      dev->queue().copy_out(res.data(), o, n * 4);
      dev->queue().synchronize();
      for (int64_t i = 0; i < n; ++i) REQUIRE(res[i] == av[i] * 3 - i);
      al.free(o, n * 4);
      al.free(in, n * 4);
    }
  }

  TEST_CASE("the CPU serves this machine's architecture and refuses others with a reason") {
    DeviceRegistry reg(false);
    reg.add_search_path(TG_CPU_PLUGIN_DIR);
    std::shared_ptr<Device> plain = reg.open("CPU");
    CHECK(plain->host_visible());
    CHECK(plain->arch() == "");
    const std::string host = tg::cpu::host_cpu();
    CHECK(reg.open("CPU:LLVM:" + host)->arch() == host);
    CHECK_THROWS_WITH_AS(reg.open("CPU:LLVM:sm_90"),
                         doctest::Contains("cannot serve architecture 'sm_90'"), Error);
  }

  TEST_CASE("both renderers report the host's vector width") {
    DeviceRegistry reg(false);
    reg.add_search_path(TG_CPU_PLUGIN_DIR);
    std::shared_ptr<Device> dev = reg.open("CPU");
    // Asked of the CPU directly (CPUID through the compiler's builtin), not through LLVM.
    const int64_t lanes = __builtin_cpu_supports("avx512f") ? 16
                          : __builtin_cpu_supports("avx")   ? 8
                                                            : 4;
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      CHECK(dev->renderer(rn).caps().vector_lanes == lanes);
    }
  }

  TEST_CASE("CPU_PERF_MAP=1 names each JIT-loaded kernel in perf's map") {
    DeviceRegistry reg(false);
    reg.add_search_path(TG_CPU_PLUGIN_DIR);
    std::shared_ptr<Device> dev = reg.open("CPU");
    Linear k;
    auto out = k.add(param(0, dtypes::int32, 8));
    auto g = k.add(special("gidx0", 8));
    k.add(store(index(out, g), g * 5));
    const std::string name = "perf_map_probe_" + std::to_string(getpid());
    {
      Context ctx{{"CPU_PERF_MAP", 1}};
      auto prg = dev->load(
          name, dev->compiler("LLVM").compile(dev->renderer("LLVM").render(name, k.list())));
      REQUIRE(prg);
    }
    const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
    std::ifstream map(path);
    REQUIRE(map.good());
    std::string line, found;
    while (std::getline(map, line))
      if (line.ends_with(" " + name)) found = line;
    CAPTURE(found);
    std::istringstream fields(found);
    uint64_t start = 0, size = 0;
    fields >> std::hex >> start >> size;
    CHECK(start != 0);
    CHECK(size > 0);
    CHECK(size < 4096);
    std::remove(path.c_str());
  }

} // TEST_SUITE
