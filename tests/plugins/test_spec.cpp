#include <doctest/doctest.h>

#include "tg/device_registry.hpp"
#include "tg/error.hpp"

using tg::DeviceSpec;

TEST_SUITE("plugins.spec") {
  TEST_CASE("DEV=DEVICE[:RENDERER[:ARCH]], device name case-insensitive") {
    DeviceSpec a = DeviceSpec::parse("cpu");
    CHECK(a.device == "CPU");
    CHECK(a.renderer.empty());
    CHECK(a.arch.empty());
    DeviceSpec b = DeviceSpec::parse("CPU:C");
    CHECK(b.device == "CPU");
    CHECK(b.renderer == "C");
    DeviceSpec c = DeviceSpec::parse("cuda:ptx:sm_90");
    CHECK(c.device == "CUDA");
    CHECK(c.renderer == "ptx");
    CHECK(c.arch == "sm_90");
    CHECK(c.str() == "CUDA:ptx:sm_90");
    CHECK(b.str() == "CPU:C");
    CHECK(a.str() == "CPU");
  }

  TEST_CASE("bad specs say how to write one") {
    for (const char* bad : {"", ":C", "CPU:", "CPU::x", "A:B:C:D"}) {
      CAPTURE(bad);
      CHECK_THROWS_WITH_AS(DeviceSpec::parse(bad),
                           doctest::Contains("write DEVICE[:RENDERER[:ARCH]], e.g. DEV=CPU"),
                           tg::Error);
    }
  }
}
