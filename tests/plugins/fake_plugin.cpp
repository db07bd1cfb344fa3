// One source for the test plugins. Each test plugin compiles it with a few FAKE_* macros that
// break exactly one thing the loader checks; without them it is a working plugin serving the
// device named in its manifest with one renderer, TEXT.
#include <algorithm>
#include <cstdint>
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

#ifdef FAKE_MEMORY
// Memory that holds what is copied in (host memory the core is not told about: the device is
// not host-visible), for the copy tests.
class FakeAllocator final : public tg::Allocator {
public:
  tg::DevicePtr alloc(size_t bytes) override {
    return reinterpret_cast<tg::DevicePtr>(new uint8_t[std::max<size_t>(bytes, 1)]);
  }
  void free(tg::DevicePtr p, size_t) override { delete[] reinterpret_cast<uint8_t*>(p); }
  void copy_in(tg::DevicePtr dst, const void* src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  }
  void copy_out(void* dst, tg::DevicePtr src, size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  }
};
#else
class FakeAllocator final : public tg::Allocator {
public:
  tg::DevicePtr alloc(size_t bytes) override { return next_ += bytes + 64; }
  void free(tg::DevicePtr, size_t) override {}
  void copy_in(tg::DevicePtr, const void*, size_t) override {}
  void copy_out(void*, tg::DevicePtr, size_t) override {}

private:
  tg::DevicePtr next_ = 0x1000;
};
#endif

class FakeRenderer final : public tg::Renderer {
public:
  FakeRenderer() {
#ifdef FAKE_ABI_1_1
    caps_.supports_half = false; // a field 1.1 has, which the adapter copies
    // A 1.1 binary's caps end before vector_lanes: whatever lies there is not the plugin's
    // answer, and the core must not read it.
    caps_.vector_lanes = -1;
#elif defined(FAKE_ABI_1_2)
    caps_.vector_lanes = 8;
    // A 1.2 binary's caps end before has_dot4: the core must not read it.
    caps_.has_dot4 = true;
#elif defined(FAKE_ABI_1_3)
    caps_.vector_lanes = 8;
    caps_.has_dot4 = true; // a 1.3 binary has the field: the core reads it
#else
    caps_.vector_lanes = 8;
#endif
  }
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
  FakeDevice(std::string name, std::string arch) : name_(std::move(name)), arch_(std::move(arch)) {}
  std::string name() const override { return name_; }
#ifndef FAKE_ABI_1_0 // a 1.0 plugin's Device has no such virtuals: the core must not ask
  std::string arch() const override { return arch_; } // records what create() was given
#ifdef FAKE_HOST_VISIBLE
  bool host_visible() const override { return true; }
#endif
#endif
  tg::Allocator& allocator() override { return allocator_; }
  std::vector<std::string> renderers() const override { return {"TEXT"}; }
  tg::Renderer& renderer(const std::string&) override { return renderer_; }
  tg::Compiler& compiler(const std::string&) override { return compiler_; }
  std::shared_ptr<tg::Program> load(const std::string&, std::span<const uint8_t>) override {
    return std::make_shared<FakeProgram>();
  }
  tg::Queue& queue() override { return queue_; }
#if defined(FAKE_MEMORY) && defined(FAKE_ABI_1_3)
  // A 1.3 binary has no copy_from: were the core to call this one, it would report a copy
  // that never happened, and the copied data would be wrong.
  bool copy_from(tg::DevicePtr, tg::Device&, tg::DevicePtr, size_t) override { return true; }
#elif defined(FAKE_MEMORY)
  // Between devices of this plugin.
  bool copy_from(tg::DevicePtr dst, tg::Device& from, tg::DevicePtr src, size_t bytes) override {
    if (dynamic_cast<FakeDevice*>(&from) == nullptr) return false;
    std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return true;
  }
#endif

private:
  std::string name_;
  [[maybe_unused]] std::string arch_;
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

// Serves the default architecture ("") and any called "fake<something>".
tg::Device* create_arch(const char* device, const char* arch, char* why, size_t why_len) noexcept {
#ifdef FAKE_CREATE_FAIL
  (void)device, (void)arch;
  tg::plugin::set_reason(why, why_len, "out of fake device memory");
  return nullptr;
#else
  try {
#ifdef FAKE_NEEDS_DEP
    if (tg_test_dep_value() != 42) return nullptr;
#endif
    const std::string a = arch != nullptr ? arch : "";
    if (!a.empty() && a.rfind("fake", 0) != 0) {
      tg::plugin::set_reason(
          why, why_len,
          (std::string(device) + " serves architectures fake*, not '" + a + "'").c_str());
      return nullptr;
    }
    return new FakeDevice(device, a);
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
tg::Device* create(const char* device, char* why, size_t why_len) noexcept {
  return create_arch(device, "", why, why_len);
}

#ifdef FAKE_ABI_MINOR_BUMP
constexpr uint32_t kAbiMinor = TG_PLUGIN_ABI_MINOR + 1;
#elif defined(FAKE_ABI_1_0)
constexpr uint32_t kAbiMinor = 0;
#elif defined(FAKE_ABI_1_1)
constexpr uint32_t kAbiMinor = 1;
#elif defined(FAKE_ABI_1_2)
constexpr uint32_t kAbiMinor = 2;
#elif defined(FAKE_ABI_1_3)
constexpr uint32_t kAbiMinor = 3;
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
#elif defined(FAKE_ABI_1_0)
constexpr uint32_t kSize = TG_PLUGIN_INFO_V1_0_SIZE; // the handshake ends before create_arch
#else
constexpr uint32_t kSize = sizeof(tg_plugin_info_v1);
#endif
#ifndef FAKE_ABI_TAG
#define FAKE_ABI_TAG TG_PLUGIN_ABI_TAG
#endif

} // namespace

// Written by hand rather than with TG_DEFINE_PLUGIN so that the ABI fields can be broken.
// FAKE_ABI_1_0 stands in for a plugin built against ABI 1.0: minor 0, a 64-byte handshake
// without create_arch, a Device without 1.1's virtuals. FAKE_ABI_1_1 stands in for one built
// against ABI 1.1: minor 1, the same handshake as 1.2, renderer caps without vector_lanes.
extern "C" __attribute__((visibility("default"))) const tg_plugin_info_v1* tg_plugin_query_v1() {
#ifdef FAKE_ABI_1_0
  constexpr auto kCreateArch = nullptr;
#else
  constexpr auto kCreateArch = create_arch;
#endif
  static const tg_plugin_info_v1 info{
      kMagic,       kSize,          kAbiMajor,         kAbiMinor,
      FAKE_ABI_TAG, TG_PLUGIN_NAME, TG_PLUGIN_VERSION, TG_PLUGIN_MANIFEST_JSON,
      probe,        create,         kCreateArch};
  return &info;
}
