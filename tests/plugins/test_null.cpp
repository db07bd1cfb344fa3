#include <doctest/doctest.h>

#include "tg/device_registry.hpp"
#include "tg/error.hpp"

using namespace tg;

TEST_SUITE("plugins.null") {
  TEST_CASE("NULL renders a text listing, compiles to the source, runs nothing") {
    DeviceRegistry reg(false);
    reg.add_search_path(TG_TEST_NULL_MANIFEST);
    std::shared_ptr<Device> dev = reg.open("NULL");
    REQUIRE(dev);
    CHECK(dev->renderers() == std::vector<std::string>{"NULL"});
    UOpPtr a = UOp::const_(dtypes::int32, 2);
    UOpPtr b = UOp::const_(dtypes::int32, 3);
    UOpPtr sum = UOp::make(Ops::ADD, dtypes::int32, {a, b});
    std::vector<UOpPtr> uops{a, b, sum};
    std::string src = dev->renderer("NULL").render("k", uops);
    CHECK(src == "kernel k\n"
                 "   0 CONST int32 src=() arg=2\n"
                 "   1 CONST int32 src=() arg=3\n"
                 "   2 ADD int32 src=(0,1)\n");
    std::vector<uint8_t> bin = dev->compiler("NULL").compile(src);
    CHECK(std::string(bin.begin(), bin.end()) == src);
    CHECK_THROWS_AS(dev->renderer("C"), Error);

    std::shared_ptr<Program> prg = dev->load("k", bin);
    DevicePtr x = dev->allocator().alloc(100), y = dev->allocator().alloc(100);
    CHECK(x != 0);
    CHECK(y != 0);
    CHECK(x != y);
    CHECK(prg->run(LaunchArgs{{x, y}, {}, {1, 1, 1}, {1, 1, 1}}, true) == 0.0);
    Queue& q = dev->queue();
    q.exec(prg, LaunchArgs{});
    uint64_t v = q.signal();
    q.wait(v);
    CHECK(q.completed() == v);
    dev->allocator().free(x, 100);
  }
}

TEST_SUITE("plugins.null") {
  TEST_CASE("NULL timestamps increase and unknown ones raise; graphs check replays, run nothing") {
    DeviceRegistry reg(false);
    reg.add_search_path(TG_TEST_NULL_MANIFEST);
    std::shared_ptr<Device> dev = reg.open("NULL");
    REQUIRE(dev);
    Queue& q = dev->queue();
    std::vector<uint64_t> stamps;
    for (int i = 0; i < 10; ++i) {
      q.exec(nullptr, LaunchArgs{});
      stamps.push_back(q.timestamp());
    }
    q.wait(stamps.back());
    for (size_t i = 1; i < stamps.size(); ++i) {
      CHECK(stamps[i] > stamps[i - 1]);
      CHECK(q.timestamp_seconds(stamps[i - 1]) <= q.timestamp_seconds(stamps[i]));
    }
    const uint64_t s = q.signal();
    const std::string unknown = "timeline value " + std::to_string(s) + " is not a timestamp";
    CHECK_THROWS_WITH_AS(q.timestamp_seconds(s), doctest::Contains(unknown.c_str()), Error);
    CHECK_THROWS_WITH_AS(q.timestamp_seconds(s + 100), doctest::Contains("is not a timestamp"),
                         Error);

    std::shared_ptr<Program> prg = dev->load("k", dev->compiler("NULL").compile("kernel k\n"));
    DevicePtr x = dev->allocator().alloc(64);
    std::vector<GraphLaunch> launches(3,
                                      GraphLaunch{prg, LaunchArgs{{x}, {}, {8, 1, 1}, {1, 1, 1}}});
    std::shared_ptr<Graph> g = dev->graph(launches);
    REQUIRE(g);
    CHECK(g->size() == 3);
    std::vector<LaunchArgs> args(3, LaunchArgs{{x + 64}, {}, {8, 1, 1}, {1, 1, 1}});
    g->replay(args);
    CHECK_THROWS_WITH_AS(g->replay(std::span(args).first(1)),
                         doctest::Contains("NULL graph replay: got arguments for 1 launches, the "
                                           "graph recorded 3"),
                         Error);
    args[2].global = {16, 1, 1};
    CHECK_THROWS_WITH_AS(g->replay(args),
                         "NULL graph replay: launch 2 has global size (16, 1, 1), recorded with "
                         "(8, 1, 1); record a new graph for a different launch shape",
                         Error);
    dev->allocator().free(x, 64);
  }
}
