#include <dlfcn.h>
#include <doctest/doctest.h>
#include <fstream>

#include "plugin_test_util.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/plugin/abi.hpp"

namespace fs = std::filesystem;
using namespace tg;
using tg::test::case_dir;
using tg::test::case_lib;
using tg::test::TempDir;

TEST_SUITE("plugins.loader") {
  // First in the file (doctest runs in file order): nothing has loaded testdev yet.
  TEST_CASE("manifests are read without loading the library") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("good"));
    std::vector<PluginInfo> found = reg.manifests();
    REQUIRE(found.size() == 1);
    CHECK(found[0].name == "testdev");
    CHECK(found[0].state == PluginState::found);
    CHECK(found[0].devices == std::vector<std::string>{"TESTDEV"});
    CHECK(found[0].renderers == std::vector<std::string>{"TEXT"});
    CHECK(found[0].priority == 5);
    CHECK(found[0].abi == "1.4");
    CHECK(found[0].library_path == fs::path(case_lib("good", "testdev")));
    CHECK(dlopen(case_lib("good", "testdev").c_str(), RTLD_NOW | RTLD_NOLOAD) == nullptr);
  }

  TEST_CASE("enumeration loads, checks and probes; open creates once") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("good"));
    std::vector<PluginInfo> found = reg.plugins();
    REQUIRE(found.size() == 1);
    CHECK(found[0].state == PluginState::available);
    CHECK(found[0].reason.empty());
    CHECK(found[0].abi == std::string("1.4 ") + TG_PLUGIN_ABI_TAG);
    CHECK(reg.available_devices() == std::vector<std::string>{"TESTDEV"});
    std::shared_ptr<Device> dev = reg.open("testdev");
    REQUIRE(dev);
    CHECK(dev->name() == "TESTDEV");
    CHECK(reg.open("TESTDEV:text") == dev); // created on first use, shared after
    CHECK(resolve_renderer(*dev, DeviceSpec::parse("TESTDEV:text")) == "TEXT");
    CHECK(resolve_renderer(*dev, DeviceSpec::parse("TESTDEV")) == "TEXT");
    CHECK_THROWS_WITH_AS(reg.open("TESTDEV:LLVM"),
                         "device TESTDEV has no renderer 'LLVM'; choose one of: TEXT "
                         "(e.g. DEV=TESTDEV:TEXT)",
                         Error);
  }

  TEST_CASE("a device outlives the registry that opened it") {
    std::shared_ptr<Device> dev;
    {
      DeviceRegistry reg(false);
      reg.add_search_path(case_dir("good"));
      dev = reg.open("TESTDEV");
    }
    CHECK(dev->name() == "TESTDEV");
    CHECK(dev->allocator().alloc(16) != 0);
  }

  TEST_CASE("the first plugin of a name wins; later ones are shadowed") {
    TempDir tmp;
    for (const char* f : {"libtg-testdev.so", "libtg-testdev.json"})
      fs::copy_file(case_dir("good") / f, tmp.path() / f);
    DeviceRegistry reg(false);
    reg.add_search_path(tmp.path());
    reg.add_search_path(case_dir("good"));
    std::vector<PluginInfo> found = reg.plugins();
    REQUIRE(found.size() == 2);
    CHECK(found[0].manifest_path == tmp.path() / "libtg-testdev.json");
    CHECK(found[0].state == PluginState::available);
    CHECK(found[1].state == PluginState::shadowed);
    CHECK(found[1].reason == "shadowed by " + (tmp.path() / "libtg-testdev.json").string() +
                                 " (the first plugin of a name wins)");
  }

  TEST_CASE("an explicit path may name the library itself") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_lib("good", "testdev"));
    std::vector<PluginInfo> found = reg.plugins();
    REQUIRE(found.size() == 1);
    CHECK(found[0].state == PluginState::available);
    CHECK(found[0].manifest_path == case_dir("good") / "libtg-testdev.json");
  }

  TEST_CASE(
      "search order: explicit, TG_PLUGIN_PATH, next to libtg, prefix, executable; never cwd") {
    TempDir cwd;
    fs::path old_cwd = fs::current_path();
    fs::current_path(cwd.path());
    tg::Context env{{"TG_PLUGIN_PATH", "/opt/a:relative/b::/opt/c"}};
    DeviceRegistry reg(true);
    reg.add_search_path("/opt/explicit");
    std::vector<fs::path> path = reg.search_path();
    fs::current_path(old_cwd);
    REQUIRE(path.size() >= 5);
    CHECK(path[0] == "/opt/explicit");
    CHECK(path[1] == "/opt/a");
    CHECK(path[2] == "/opt/c"); // relative entries are skipped: they would depend on the cwd
    CHECK(path[3].filename() == "plugins");
    CHECK(path[3].parent_path().filename() == "tg");
    CHECK(fs::exists(path[3].parent_path().parent_path() / "libtg.so"));
    for (const fs::path& p : path) {
      CHECK(p != cwd.path());
      CHECK(p.is_absolute());
    }
    CHECK(std::find(path.begin(), path.end(), fs::path(TG_TEST_CASES).parent_path()) != path.end());
  }

  TEST_CASE("a library without a manifest is listed and refused") {
    TempDir tmp;
    fs::copy_file(case_dir("good") / "libtg-testdev.so", tmp.path() / "libtg-testdev.so");
    DeviceRegistry reg(false);
    reg.add_search_path(tmp.path());
    std::vector<PluginInfo> found = reg.plugins();
    REQUIRE(found.size() == 1);
    CHECK(found[0].state == PluginState::refused);
    CHECK(found[0].reason == (tmp.path() / "libtg-testdev.so").string() +
                                 ": no manifest libtg-testdev.json beside it; reinstall the "
                                 "plugin (tg_add_plugin() writes both files)");
  }

  TEST_CASE("bad manifests are refused naming the file") {
    TempDir tmp;
    std::ofstream(tmp.path() / "libtg-broken.json") << "{not json";
    std::ofstream(tmp.path() / "libtg-nodev.json")
        << R"({"name": "nodev", "version": "1", "abi_major": 1, "abi_minor": 0, "library": "libtg-nodev.so"})";
    std::ofstream(tmp.path() / "libtg-nolib.json")
        << R"({"name": "nolib", "version": "1", "abi_major": 1, "abi_minor": 0, "library": "libtg-nolib.so", "devices": ["NOLIB"]})";
    std::ofstream(tmp.path() / "libtg-arm.json")
        << R"({"name": "arm", "version": "1", "abi_major": 1, "abi_minor": 0, "library": "libtg-arm.so", "devices": ["ARM"], "os": "linux", "arch": "riscv128"})";
    DeviceRegistry reg(false);
    reg.add_search_path(tmp.path());
    std::vector<PluginInfo> found = reg.plugins();
    REQUIRE(found.size() == 4);
    auto path = [&](const char* f) { return (tmp.path() / f).string(); };
    CHECK(found[0].reason == path("libtg-arm.json") +
                                 ": built for linux/riscv128, this machine is linux/" TG_TEST_ARCH
                                 "; install the plugin built for this machine");
    CHECK(found[1].reason.rfind(path("libtg-broken.json") + ": manifest is not valid JSON (", 0) ==
          0);
    CHECK(found[2].reason == path("libtg-nodev.json") +
                                 ": manifest has no \"devices\" field; rebuild the plugin with "
                                 "tg_add_plugin() or fix the file");
    CHECK(found[3].reason == path("libtg-nolib.so") + ": library named by " +
                                 path("libtg-nolib.json") + " is missing; reinstall the plugin");
    for (const PluginInfo& p : found) CHECK(p.state == PluginState::refused);
  }

  TEST_CASE("manifest integers out of range are refused with their value, never narrowed") {
    TempDir tmp;
    const std::string head =
        R"({"name": "n", "version": "1", "library": "libtg-n.so", "devices": ["N"], )";
    // 2^32 + 1 would read as ABI 1 if narrowed to int; 2^31 as INT_MIN.
    std::ofstream(tmp.path() / "libtg-a.json")
        << head + R"("abi_major": 4294967297, "abi_minor": 0})";
    std::ofstream(tmp.path() / "libtg-b.json")
        << head + R"("abi_major": 1, "abi_minor": 0, "priority": 2147483648})";
    std::ofstream(tmp.path() / "libtg-c.json") << head + R"("abi_major": 1, "abi_minor": -1})";
    std::ofstream(tmp.path() / "libtg-d.json")
        << head + R"("abi_major": 18446744073709551617, "abi_minor": 0})";
    std::ofstream(tmp.path() / "libtg-e.json") << head + R"("abi_major": 1.5, "abi_minor": 0})";
    DeviceRegistry reg(false);
    reg.add_search_path(tmp.path());
    std::vector<PluginInfo> found = reg.plugins();
    REQUIRE(found.size() == 5);
    auto path = [&](const char* f) { return (tmp.path() / f).string(); };
    CHECK(found[0].reason == path("libtg-a.json") +
                                 ": manifest field \"abi_major\" = 4294967297: must be an integer "
                                 "in [0, 2147483647]");
    CHECK(found[1].reason == path("libtg-b.json") +
                                 ": manifest field \"priority\" = 2147483648: must be an integer "
                                 "in [-2147483647, 2147483647]");
    CHECK(found[2].reason == path("libtg-c.json") +
                                 ": manifest field \"abi_minor\" = -1: must be an integer in [0, "
                                 "2147483647]");
    CHECK(found[3].reason.find("\"abi_major\" = 1.8446744073709552E19") != std::string::npos);
    CHECK(found[4].reason.find("\"abi_major\" = 1.5E0: must be an integer") != std::string::npos);
    for (const PluginInfo& p : found) CHECK(p.state == PluginState::refused);
  }

  TEST_CASE("a file far larger than a manifest is not read") {
    TempDir tmp;
    std::ofstream(tmp.path() / "libtg-big.json") << std::string(2 << 20, ' ');
    DeviceRegistry reg(false);
    reg.add_search_path(tmp.path());
    std::vector<PluginInfo> found = reg.plugins();
    REQUIRE(found.size() == 1);
    CHECK(found[0].reason == (tmp.path() / "libtg-big.json").string() +
                                 ": a manifest of 2097152 bytes is larger than the 1 MiB a "
                                 "manifest may be; it is not a plugin manifest");
  }

  TEST_CASE("TG_PLUGIN_PATH finds plugins, folders or files") {
    tg::Context env{
        {"TG_PLUGIN_PATH", case_dir("good").string() + ":" +
                               (case_dir("fakecuda") / "libtg-fakecuda.json").string()}};
    DeviceRegistry reg(true);
    std::vector<PluginInfo> found = reg.manifests();
    REQUIRE(found.size() >= 2);
    CHECK(found[0].name == "testdev");
    CHECK(found[1].name == "fakecuda");
  }
}
