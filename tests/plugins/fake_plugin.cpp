// One source for the test plugins. Each test plugin compiles it with a few FAKE_* macros that
// break exactly one thing the loader checks; without them it is a working plugin serving the
// device named in its manifest with one renderer, TEXT.
#include <cstring>
#include <string>

#include "tg/plugin/abi.hpp"
#include "tg/plugin/define.hpp"
#include "tg/plugin/device.hpp"
#include "tg_plugin_manifest.h"

#ifdef FAKE_NEEDS_DEP
extern "C" int tg_test_dep_value(); // in libtgtest_dep.so, which is not shipped beside us
#endif

namespace {

class FakeAllocator final : public tg::Allocator {
public:
  tg::DevicePtr alloc(size_t bytes) override { return next_ += bytes + 64; }
  void free(tg::DevicePtr, size_t) override {}
  void copy_in(tg::DevicePtr, const void*, size_t) override {}
  void copy_out(void*, tg::DevicePtr, size_t) override {}

private:
  tg::DevicePtr next_ = 0x1000;
};

class FakeRenderer final : public tg::Renderer {
public:
  std::string name() const override { return "TEXT"; }
  const tg::RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel, std::span<const tg::UOpPtr> uops) override {
    return kernel + ": " + std::to_string(uops.size()) + " uops";
  }

private:
  tg::RendererCaps caps_;
};

class FakeCompiler final : public tg::Compiler {
public:
  std::string identity() const override { return "fake"; }
  std::vector<uint8_t> compile(const std::string& src) override { return {src.begin(), src.end()}; }
};

class FakeProgram final : public tg::Program {
public:
  double run(const tg::LaunchArgs&, bool) override { return 0; }
};

class FakeQueue final : public tg::Queue {
public:
  void exec(std::shared_ptr<tg::Program>, tg::LaunchArgs) override {}
  void copy_in(tg::DevicePtr, std::vector<uint8_t>) override {}
  void copy_out(void*, tg::DevicePtr, size_t) override {}
  uint64_t signal() override { return ++value_; }
  void wait(uint64_t) override {}
  uint64_t completed() const override { return value_; }
  uint64_t timestamp() override { return ++value_; }
  double timestamp_seconds(uint64_t) override { return 0.0; }

private:
  uint64_t value_ = 0;
};

class FakeDevice final : public tg::Device {
public:
  explicit FakeDevice(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  tg::Allocator& allocator() override { return allocator_; }
  std::vector<std::string> renderers() const override { return {"TEXT"}; }
  tg::Renderer& renderer(const std::string&) override { return renderer_; }
  tg::Compiler& compiler(const std::string&) override { return compiler_; }
  std::shared_ptr<tg::Program> load(const std::string&, std::span<const uint8_t>) override {
    return std::make_shared<FakeProgram>();
  }
  tg::Queue& queue() override { return queue_; }

private:
  std::string name_;
  FakeAllocator allocator_;
  FakeRenderer renderer_;
  FakeCompiler compiler_;
  FakeQueue queue_;
};

int probe(char* why, size_t why_len) noexcept {
#ifdef FAKE_PROBE_FAIL
  // The stand-in for a CUDA plugin on a machine without the driver: it would dlopen
  // libcuda.so.1 here and report its absence instead of failing to load.
  tg::plugin::set_reason(why, why_len, "libcuda.so.1 not found (install the NVIDIA driver)");
  return 0;
#else
  (void)why, (void)why_len;
  return 1;
#endif
}

tg::Device* create(const char* device, char* why, size_t why_len) noexcept {
#ifdef FAKE_CREATE_FAIL
  (void)device;
  tg::plugin::set_reason(why, why_len, "out of fake device memory");
  return nullptr;
#else
  try {
#ifdef FAKE_NEEDS_DEP
    if (tg_test_dep_value() != 42) return nullptr;
#endif
    return new FakeDevice(device);
  } catch (const std::exception& e) {
    tg::plugin::set_reason(why, why_len, e.what());
    return nullptr;
  }
#endif
}

#ifdef FAKE_ABI_MAJOR_BUMP
constexpr uint32_t kAbiMajor = TG_PLUGIN_ABI_MAJOR + 1;
#else
constexpr uint32_t kAbiMajor = TG_PLUGIN_ABI_MAJOR;
#endif
#ifdef FAKE_ABI_MINOR_BUMP
constexpr uint32_t kAbiMinor = TG_PLUGIN_ABI_MINOR + 1;
#else
constexpr uint32_t kAbiMinor = TG_PLUGIN_ABI_MINOR;
#endif
#ifdef FAKE_BAD_MAGIC
constexpr uint32_t kMagic = 0xdeadbeefu;
#else
constexpr uint32_t kMagic = TG_PLUGIN_MAGIC;
#endif
#ifdef FAKE_SMALL_STRUCT
constexpr uint32_t kSize = 48; // as if built against a shorter, older struct
#else
constexpr uint32_t kSize = sizeof(tg_plugin_info_v1);
#endif
#ifndef FAKE_ABI_TAG
#define FAKE_ABI_TAG TG_PLUGIN_ABI_TAG
#endif

} // namespace

// Written by hand rather than with TG_DEFINE_PLUGIN so that the ABI fields can be broken.
extern "C" __attribute__((visibility("default"))) const tg_plugin_info_v1* tg_plugin_query_v1() {
  static const tg_plugin_info_v1 info{
      kMagic,       kSize,          kAbiMajor,         kAbiMinor,
      FAKE_ABI_TAG, TG_PLUGIN_NAME, TG_PLUGIN_VERSION, TG_PLUGIN_MANIFEST_JSON,
      probe,        create};
  return &info;
}
