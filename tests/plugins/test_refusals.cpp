// One test plugin per refusal; each asserts the whole message: the file, what is wrong and
// what to do.
#include <doctest/doctest.h>

#include "plugin_test_util.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/plugin/abi.hpp"

using namespace tg;
using tg::test::case_dir;
using tg::test::case_lib;

namespace {

PluginInfo load_case(const std::string& dir) {
  DeviceRegistry reg(false);
  reg.add_search_path(case_dir(dir));
  std::vector<PluginInfo> found = reg.plugins();
  REQUIRE(found.size() == 1);
  return found[0];
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

} // namespace

TEST_SUITE("plugins.refusals") {
  TEST_CASE("not a plugin: no tg_plugin_query_v1") {
    PluginInfo p = load_case("nosym");
    CHECK(p.state == PluginState::refused);
    CHECK(p.reason == case_lib("nosym", "nosym") +
                          ": not a tg plugin: it does not export tg_plugin_query_v1; remove it "
                          "from " +
                          case_dir("nosym").string() +
                          " or rebuild it with TG_DEFINE_PLUGIN (tg/plugin/define.hpp)");
  }

  TEST_CASE("bad magic") {
    PluginInfo p = load_case("badmagic");
    CHECK(p.state == PluginState::refused);
    CHECK(p.reason == case_lib("badmagic", "badmagic") +
                          ": bad handshake magic 0xdeadbeef (expected 0x31505447, \"TGP1\"); the "
                          "library is not a tg plugin or is corrupt: rebuild it");
  }

  TEST_CASE("handshake struct too small") {
    PluginInfo p = load_case("smallstruct");
    CHECK(p.state == PluginState::refused);
    CHECK(p.reason == case_lib("smallstruct", "smallstruct") +
                          ": handshake struct is 48 bytes, the core needs at least 64; rebuild "
                          "the plugin against this tg");
  }

  TEST_CASE("ABI major differs") {
    PluginInfo p = load_case("abimajor");
    CHECK(p.state == PluginState::refused);
    CHECK(starts_with(p.reason, case_lib("abimajor", "abimajor") +
                                    ": plugin ABI 2.4 has a different major version than the "
                                    "core's 1.4; rebuild the plugin against this tg ("));
  }

  TEST_CASE("ABI minor newer than the core's") {
    PluginInfo p = load_case("abiminor");
    CHECK(p.state == PluginState::refused);
    CHECK(starts_with(p.reason, case_lib("abiminor", "abiminor") +
                                    ": plugin ABI 1.5 is newer than the core's 1.4; upgrade tg or "
                                    "rebuild the plugin against this tg ("));
  }

  TEST_CASE("ABI tag differs") {
    PluginInfo p = load_case("abitag");
    CHECK(p.state == PluginState::refused);
    CHECK(p.abi == "1.4 clang99/libc++/debug");
    CHECK(p.reason == case_lib("abitag", "abitag") +
                          ": plugin ABI tag 'clang99/libc++/debug' differs from the core's '" +
                          TG_PLUGIN_ABI_TAG +
                          "'; rebuild the plugin with the same compiler, C++ standard library "
                          "and build type as tg");
  }

  TEST_CASE("manifest disagrees with the binary") {
    PluginInfo p = load_case("mismatch");
    CHECK(p.state == PluginState::refused);
    CHECK(p.reason == case_lib("mismatch", "mismatch") + ": manifest " +
                          (case_dir("mismatch") / "libtg-mismatch.json").string() +
                          " lists devices [OTHERDEV] but the library serves [MISMATCH]; "
                          "reinstall the plugin so that its .so and .json come from the same "
                          "build");
  }

  TEST_CASE("a dependency is missing: the dynamic loader's message") {
    PluginInfo p = load_case("missingdep");
    CHECK(p.state == PluginState::refused);
    const std::string lib = case_lib("missingdep", "missingdep");
    CHECK(starts_with(p.reason, lib + ": cannot be loaded: "));
    CHECK(p.reason.find("libtgtest_dep.so: cannot open shared object file: No such file or "
                        "directory") != std::string::npos);
    CHECK(p.reason.find("; install the missing library or remove the plugin") != std::string::npos);
  }

  TEST_CASE("probe says unavailable, with its reason") {
    PluginInfo p = load_case("fakecuda");
    CHECK(p.state == PluginState::unavailable);
    CHECK(p.requirements == std::vector<std::string>{"libcuda.so.1"});
    CHECK(p.reason == case_lib("fakecuda", "fakecuda") +
                          ": probe says unavailable: libcuda.so.1 not found (install the NVIDIA "
                          "driver)");
  }

  TEST_CASE("create fails: the request fails with the plugin's reason") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("createfail"));
    REQUIRE(reg.plugins().at(0).state == PluginState::available);
    const std::string why = case_lib("createfail", "createfail") +
                            ": create(\"CREATEFAIL\") failed: out of fake device memory";
    CHECK_THROWS_WITH_AS(reg.open("createfail"),
                         ("DEV=CREATEFAIL cannot be served:\n  " + why +
                          "\navailable devices: none\nset DEV to an available device, or fix the "
                          "plugin as its reason says")
                             .c_str(),
                         Error);
    PluginInfo after = reg.plugins().at(0);
    CHECK(after.state == PluginState::unavailable);
    CHECK(after.reason == why);
  }

  TEST_CASE("create throws: the exception becomes the reason, the process goes on") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("createthrow"));
    REQUIRE(reg.plugins().at(0).state == PluginState::available);
    const std::string why = case_lib("createthrow", "createthrow") +
                            ": create(\"CREATETHROW\") failed: create threw: device exploded";
    CHECK_THROWS_WITH_AS(reg.open("createthrow"), doctest::Contains(why.c_str()), Error);
    CHECK(reg.plugins().at(0).reason == why);
  }

  TEST_CASE("probe throws: the plugin is unavailable with the exception as its reason") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("probethrow"));
    PluginInfo p = reg.plugins().at(0);
    CHECK(p.state == PluginState::unavailable);
    CHECK(p.reason == case_lib("probethrow", "probethrow") +
                          ": probe says unavailable: probe threw: driver table corrupt");
  }

  TEST_CASE("an explicit request for a refused plugin lists its reason") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("abitag"));
    reg.add_search_path(case_dir("good"));
    try {
      reg.open("ABITAG");
      FAIL("expected tg::Error");
    } catch (const Error& e) {
      std::string msg = e.what();
      CHECK(starts_with(msg, "DEV=ABITAG cannot be served:\n  " + case_lib("abitag", "abitag") +
                                 ": plugin ABI tag 'clang99/libc++/debug' differs"));
      CHECK(msg.find("\navailable devices: TESTDEV\n") != std::string::npos);
    }
  }
}
