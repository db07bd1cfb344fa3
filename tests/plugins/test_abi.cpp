// The ABI's seams: DEV's ARCH reaches the plugin's create() (1.1), 1.0 and 1.1 plugins still
// load (served through the adapter), whether host memory is borrowed is the device's answer
// (1.1), a renderer's vector width reaches codegen (1.2), and an older plugin is not asked for
// 1.4's device-to-device copy.
#include <doctest/doctest.h>

#include "plugin_test_util.hpp"
#include "tg/buffer.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/plugin/abi.hpp"
#include "tg/plugin/device_index.hpp"
#include "tg/tensor.hpp"

using namespace tg;
using tg::test::case_dir;

namespace {
// Points `reg` at the one test plugin in case folder `dir`, built against ABI `abi` ("1.2"),
// and checks that it loads.
void load_only(DeviceRegistry& reg, const char* dir, const std::string& abi) {
  reg.add_search_path(case_dir(dir));
  std::vector<PluginInfo> found = reg.plugins();
  REQUIRE(found.size() == 1);
  CHECK(found[0].state == PluginState::available);
  CHECK(found[0].abi.rfind(abi + " ", 0) == 0);
}
} // namespace

TEST_SUITE("plugins.abi") {
  TEST_CASE("device_index reads BASE and BASE:<n> and refuses any other name") {
    std::string why;
    CHECK(plugin::device_index("CUDA", "CUDA", "cuda", "GPU", why) == 0u);
    CHECK(plugin::device_index("CUDA:12", "CUDA", "cuda", "GPU", why) == 12u);
    for (const char* bad : {"CUDA:", "CUDA:x", "CUDA:-1", "CUDA:12345", "CUDAX", "CL", ""}) {
      why.clear();
      CHECK_FALSE(plugin::device_index(bad, "CUDA", "cuda", "GPU", why).has_value());
      CHECK(why == std::string("the cuda plugin serves CUDA and CUDA:<n> (the n-th GPU), not '") +
                       bad + "'");
    }
  }

  TEST_CASE("DEV=DEVICE:RENDERER:ARCH passes ARCH to create()") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("good"));
    std::shared_ptr<Device> fake9 = reg.open("TESTDEV:TEXT:fake9");
    CHECK(fake9->arch() == "fake9"); // the test plugin's device records what create() got
    CHECK(reg.open("testdev:text:fake9") == fake9); // one device per architecture
    std::shared_ptr<Device> plain = reg.open("TESTDEV");
    CHECK(plain->arch() == "");
    CHECK(plain != fake9);
  }

  TEST_CASE("a plugin that cannot serve an architecture refuses with its reason") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("good"));
    CHECK_THROWS_WITH_AS(reg.open("TESTDEV:TEXT:sm_90"),
                         doctest::Contains("create(\"TESTDEV\", arch \"sm_90\") failed: TESTDEV "
                                           "serves architectures fake*, not 'sm_90'"),
                         Error);
    // The plugin stays available for the architectures it serves.
    CHECK(reg.open("TESTDEV:TEXT:fake1")->arch() == "fake1");
  }

  TEST_CASE("a plugin built against ABI 1.0 still loads") {
    DeviceRegistry reg(false);
    load_only(reg, "abi10", "1.0");
    std::shared_ptr<Device> d = reg.open("ABI10");
    CHECK(d->name() == "ABI10");
    // The 1.1 questions get 1.0's answers from the adapter, never from the 1.0 object.
    CHECK(d->arch() == "");
    CHECK(!d->host_visible());
    const RendererCaps& caps = d->renderer("TEXT").caps();
    CHECK(caps.tensor_cores.empty());
    CHECK(caps.extra_matcher == nullptr);
    CHECK(caps.decompositions == nullptr);
    CHECK(caps.vector_lanes == RendererCaps{}.vector_lanes);
    CHECK(caps.supports_float4); // 1.0's fields are read from the 1.0 caps
    CHECK(d->renderer("TEXT").render("k", {}) == "k: 0 uops");
    CHECK_THROWS_WITH_AS(reg.open("ABI10:TEXT:fake1"),
                         doctest::Contains("the plugin has ABI 1.0, which cannot take an "
                                           "architecture"),
                         Error);
  }

  TEST_CASE("a plugin built against ABI 1.1 still loads: vector_lanes is the default") {
    DeviceRegistry reg(false);
    load_only(reg, "abi11", "1.1");
    std::shared_ptr<Device> d = reg.open("ABI11:TEXT:fake3");
    CHECK(d->name() == "ABI11");
    // 1.1's questions reach the 1.1 object.
    CHECK(d->arch() == "fake3");
    CHECK(d->host_visible());
    const RendererCaps& caps = d->renderer("TEXT").caps();
    CHECK(!caps.supports_half); // the plugin's own 1.1 fields
    CHECK(caps.supports_float4);
    // 1.2's field is the default, not what lies past the end of a 1.1 caps struct.
    CHECK(caps.vector_lanes == RendererCaps{}.vector_lanes);
    CHECK(d->renderer("TEXT").render("k", {}) == "k: 0 uops");
  }

  TEST_CASE("a plugin built against ABI 1.2 still loads: it has no DOT4") {
    DeviceRegistry reg(false);
    load_only(reg, "abi12", "1.2");
    std::shared_ptr<Device> d = reg.open("ABI12:TEXT:fake3");
    CHECK(d->arch() == "fake3");
    const RendererCaps& caps = d->renderer("TEXT").caps();
    CHECK(caps.vector_lanes == 8); // 1.2's own field
    // 1.3's field is the default, not what lies past the end of a 1.2 caps struct.
    CHECK(!caps.has_dot4);
  }

  TEST_CASE("a plugin built against ABI 1.3 still loads: its caps are read as they are") {
    DeviceRegistry reg(false);
    load_only(reg, "abi13", "1.3");
    std::shared_ptr<Device> d = reg.open("ABI13");
    const RendererCaps& caps = d->renderer("TEXT").caps();
    CHECK(caps.vector_lanes == 8);
    CHECK(caps.has_dot4); // 1.3's own field, which the plugin sets
    // 1.4's copy_from is not asked of it (plugins.copy shows the copy going through the host).
    std::shared_ptr<Device> other = reg.open("ABI13:1");
    CHECK_FALSE(d->copy_from(0, *other, 0, 16));
  }

  TEST_CASE("a current plugin's vector_lanes reaches the core unchanged") {
    DeviceRegistry reg(false);
    reg.add_search_path(case_dir("good"));
    std::shared_ptr<Device> d = reg.open("TESTDEV");
    CHECK(d->renderer("TEXT").caps().vector_lanes == 8); // what the test plugin says
    CHECK(reg.plugins()[0].abi.rfind(std::to_string(TG_PLUGIN_ABI_MAJOR) + "." +
                                         std::to_string(TG_PLUGIN_ABI_MINOR) + " ",
                                     0) == 0);
  }

  TEST_CASE("host visibility comes from the device: borrowed where it says so, copied elsewhere") {
    DeviceRegistry::global().add_search_path(case_dir("good"));
    DeviceRegistry::global().add_search_path(case_dir("hostvis"));
    std::vector<float> host(16, 1.5f);
    const auto at = reinterpret_cast<DevicePtr>(host.data());

    CHECK(!Buffer::host_visible("TESTDEV"));
    Tensor copied = Tensor::from_blob(std::span<float>(host), {16}, "TESTDEV");
    REQUIRE(copied.buffer());
    CHECK(copied.buffer()->ptr() != at); // its own memory, filled by a copy
    CHECK_THROWS_WITH_AS(Buffer::borrow_host("TESTDEV", dtypes::float32, 16, host.data(), nullptr),
                         doctest::Contains("cannot borrow host memory"), Error);

    CHECK(Buffer::host_visible("HOSTVIS"));
    Tensor borrowed = Tensor::from_blob(std::span<float>(host), {16}, "HOSTVIS");
    REQUIRE(borrowed.buffer());
    CHECK(borrowed.buffer()->ptr() == at); // the host's memory itself
  }
}
