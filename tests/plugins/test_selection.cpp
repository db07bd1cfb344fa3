// DEV= and automatic selection, with the stand-in for a CUDA plugin on a machine without the
// driver (fakecuda: highest priority, probe says unavailable).
#include <doctest/doctest.h>

#include "plugin_test_util.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

using namespace tg;
using tg::test::case_dir;
using tg::test::case_lib;

namespace {

void add_fakecuda_and_null(DeviceRegistry& reg) {
  reg.add_search_path(case_dir("fakecuda"));
  reg.add_search_path(TG_TEST_NULL_MANIFEST);
}

} // namespace

TEST_SUITE("plugins.selection") {
  TEST_CASE("automatic selection skips the unavailable plugin") {
    tg::Context dev{{"DEV", ""}};
    DeviceRegistry reg(false);
    add_fakecuda_and_null(reg);
    std::shared_ptr<Device> d = reg.default_device();
    REQUIRE(d);
    CHECK(d->name() == "NULL");
    CHECK(reg.available_devices() == std::vector<std::string>{"NULL"});
  }

  TEST_CASE("automatic selection takes the highest priority available") {
    tg::Context dev{{"DEV", ""}};
    DeviceRegistry reg(false);
    reg.add_search_path(TG_TEST_NULL_MANIFEST); // priority -10, found first
    reg.add_search_path(case_dir("good"));      // priority 5
    CHECK(reg.default_device()->name() == "TESTDEV");
    CHECK(reg.available_devices() == std::vector<std::string>{"TESTDEV", "NULL"});
  }

  TEST_CASE("explicit DEV=FAKECUDA fails with the reasons and the available devices") {
    tg::Context dev{{"DEV", "fakecuda"}};
    DeviceRegistry reg(false);
    add_fakecuda_and_null(reg);
    CHECK_THROWS_WITH_AS(reg.default_device(),
                         ("DEV=FAKECUDA cannot be served:\n  " + case_lib("fakecuda", "fakecuda") +
                          ": probe says unavailable: libcuda.so.1 not found (install the NVIDIA "
                          "driver)\navailable devices: NULL\nset DEV to an available device, or "
                          "fix the plugin as its reason says")
                             .c_str(),
                         Error);
  }

  TEST_CASE("DEV names a device and renderer") {
    tg::Context dev{{"DEV", "null:null"}};
    DeviceRegistry reg(false);
    add_fakecuda_and_null(reg);
    CHECK(reg.default_device()->name() == "NULL");
  }

  TEST_CASE("a device no plugin provides") {
    DeviceRegistry reg(false);
    add_fakecuda_and_null(reg);
    try {
      reg.open("METAL");
      FAIL("expected tg::Error");
    } catch (const Error& e) {
      std::string msg = e.what();
      CHECK(msg.rfind("DEV=METAL cannot be served:\n  no plugin provides device METAL (searched " +
                          case_dir("fakecuda").string() + ":" + TG_TEST_NULL_MANIFEST + ")",
                      0) == 0);
      CHECK(msg.find("\navailable devices: NULL\n") != std::string::npos);
    }
  }

  TEST_CASE("no plugin at all") {
    tg::Context dev{{"DEV", ""}};
    DeviceRegistry reg(false);
    CHECK_THROWS_WITH_AS(reg.default_device(),
                         doctest::Contains("no device available (no plugin found)"), Error);
  }
}
