// The smallest useful plugin: device HELLO with a renderer that names the kernel.
#include "tg/plugin/define.hpp"
#include "tg/plugin/device.hpp"
#include "tg_plugin_manifest.h"

namespace {

class HelloAllocator final : public tg::Allocator {
public:
  tg::DevicePtr alloc(size_t bytes) override { return next_ += bytes + 64; }
  void free(tg::DevicePtr, size_t) override {}
  void copy_in(tg::DevicePtr, const void*, size_t) override {}
  void copy_out(void*, tg::DevicePtr, size_t) override {}

private:
  tg::DevicePtr next_ = 0x1000;
};

class HelloRenderer final : public tg::Renderer {
public:
  std::string name() const override { return "TEXT"; }
  const tg::RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel, std::span<const tg::UOpPtr>) override {
    return "hello " + kernel;
  }

private:
  tg::RendererCaps caps_;
};

class HelloCompiler final : public tg::Compiler {
public:
  std::string identity() const override { return "hello"; }
  std::vector<uint8_t> compile(const std::string& s) override { return {s.begin(), s.end()}; }
};

class HelloProgram final : public tg::Program {
public:
  double run(const tg::LaunchArgs&, bool) override { return 0; }
};

class HelloQueue final : public tg::Queue {
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

class HelloDevice final : public tg::Device {
public:
  std::string name() const override { return "HELLO"; }
  tg::Allocator& allocator() override { return allocator_; }
  std::vector<std::string> renderers() const override { return {"TEXT"}; }
  tg::Renderer& renderer(const std::string&) override { return renderer_; }
  tg::Compiler& compiler(const std::string&) override { return compiler_; }
  std::shared_ptr<tg::Program> load(const std::string&, std::span<const uint8_t>) override {
    return std::make_shared<HelloProgram>();
  }
  tg::Queue& queue() override { return queue_; }

private:
  HelloAllocator allocator_;
  HelloRenderer renderer_;
  HelloCompiler compiler_;
  HelloQueue queue_;
};

int probe(char*, size_t) noexcept { return 1; }

tg::Device* create(const char*, char* why, size_t why_len) noexcept {
  try {
    return new HelloDevice();
  } catch (const std::exception& e) {
    tg::plugin::set_reason(why, why_len, e.what());
    return nullptr;
  }
}

} // namespace

TG_DEFINE_PLUGIN(probe, create)
