#include <doctest/doctest.h>

#include "tg/device_registry.hpp"
#include "tg/error.hpp"

using tg::DeviceSpec;

TEST_SUITE("plugins.spec") {
  TEST_CASE("DEV=DEVICE[:N][:RENDERER[:ARCH]], device name case-insensitive") {
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

  TEST_CASE("DEV=DEVICE:N names the N-th device of a kind; N = 0 is the device itself") {
    DeviceSpec d = DeviceSpec::parse("cl:1");
    CHECK(d.device == "CL:1");
    CHECK(d.kind() == "CL");
    CHECK(d.renderer.empty());
    CHECK(d.str() == "CL:1");
    DeviceSpec e = DeviceSpec::parse("CL:2:OpenCL");
    CHECK(e.device == "CL:2");
    CHECK(e.renderer == "OpenCL");
    CHECK(e.str() == "CL:2:OpenCL");
    CHECK(DeviceSpec::parse("CL:0").device == "CL");
    CHECK(DeviceSpec::parse("CPU").kind() == "CPU");
  }

  TEST_CASE("bad specs say how to write one") {
    for (const char* bad : {"", ":C", "CPU:", "CPU::x", "A:B:C:D", "CL:1:2:3:4", "CL:123456"}) {
      CAPTURE(bad);
      CHECK_THROWS_WITH_AS(DeviceSpec::parse(bad),
                           doctest::Contains("write DEVICE[:N][:RENDERER[:ARCH]], e.g. DEV=CPU"),
                           tg::Error);
    }
  }
}
