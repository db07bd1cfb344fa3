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
