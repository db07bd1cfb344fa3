// The NULL device: the renderer writes the linearized kernel as text, one uop per line; the
// compiler returns the source bytes; programs do nothing; buffers are fake addresses that are
// never dereferenced; the queue completes everything at once (timestamps read steady_clock at
// submission); graphs check their replays and do nothing else.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <unordered_map>

#include "tg/error.hpp"
#include "tg/ir/uop.hpp"
#include "tg/plugin/define.hpp"
#include "tg/plugin/device.hpp"
#include "tg/plugin/recorded_graph.hpp"
#include "tg_plugin_manifest.h"

namespace {

using namespace tg;

class NullAllocator final : public Allocator {
public:
  // Distinct, non-zero, 64-byte aligned addresses, so code that compares or offsets buffers
  // behaves as on a real device.
  DevicePtr alloc(size_t bytes) override {
    DevicePtr p = next_.fetch_add(((bytes + 63) / 64 + 1) * 64);
    return p;
  }
  void free(DevicePtr, size_t) override {}
  void copy_in(DevicePtr, const void*, size_t) override {}
  void copy_out(void*, DevicePtr, size_t) override {}

private:
  std::atomic<DevicePtr> next_{0x10000};
};

class NullRenderer final : public Renderer {
public:
  std::string name() const override { return "NULL"; }
  const RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override {
    std::unordered_map<const UOp*, size_t> index;
    std::string out = "kernel " + kernel_name + "\n";
    char line[64];
    for (size_t i = 0; i < uops.size(); ++i) {
      const UOp& u = *uops[i];
      index[&u] = i;
      std::snprintf(line, sizeof line, "%4zu ", i);
      out += line;
      out += std::string(op_name(u.op)) + " " + u.dtype.name() + " src=(";
      for (size_t s = 0; s < u.src.size(); ++s) {
        auto it = index.find(u.src[s].get());
        out += (s ? "," : "") + (it == index.end() ? std::string("?") : std::to_string(it->second));
      }
      out += ")";
      if (!std::holds_alternative<std::monostate>(u.arg)) out += " arg=" + arg_to_string(u.arg);
      out += "\n";
    }
    return out;
  }

private:
  RendererCaps caps_;
};

class NullCompiler final : public Compiler {
public:
  std::string identity() const override { return "null " TG_PLUGIN_VERSION; }
  std::vector<uint8_t> compile(const std::string& source) override {
    return {source.begin(), source.end()};
  }
};

class NullProgram final : public Program {
public:
  double run(const LaunchArgs&, bool) override { return 0.0; }
};

class NullQueue final : public Queue {
public:
  void exec(std::shared_ptr<Program>, LaunchArgs) override {}
  void copy_in(DevicePtr, std::vector<uint8_t>) override {}
  void copy_out(void*, DevicePtr, size_t) override {}
  uint64_t signal() override { return ++value_; }
  void wait(uint64_t) override {}
  uint64_t completed() const override { return value_; }
  uint64_t timestamp() override {
    std::lock_guard lock(mu_);
    const uint64_t v = ++value_;
    stamps_[v] =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (stamps_.size() > kMaxTimestamps) stamps_.erase(stamps_.begin());
    return v;
  }
  double timestamp_seconds(uint64_t value) override {
    std::lock_guard lock(mu_);
    auto it = stamps_.find(value);
    if (it == stamps_.end())
      throw Error("NULL queue: timeline value " + std::to_string(value) +
                  " is not a timestamp (or is older than the last " +
                  std::to_string(kMaxTimestamps) + " kept); use a value timestamp() returned");
    return it->second;
  }

private:
  static constexpr size_t kMaxTimestamps = 1 << 16;
  std::atomic<uint64_t> value_{0};
  std::mutex mu_; // stamps_
  std::map<uint64_t, double> stamps_;
};

class NullGraph final : public plugin::RecordedGraph {
public:
  explicit NullGraph(std::vector<GraphLaunch> launches)
      : RecordedGraph("NULL", std::move(launches)) {}
  void replay(std::span<const LaunchArgs> args) override { check_replay(args); }
};

class NullDevice final : public Device {
public:
  std::string name() const override { return "NULL"; }
  Allocator& allocator() override { return allocator_; }
  std::vector<std::string> renderers() const override { return {"NULL"}; }
  Renderer& renderer(const std::string& name) override {
    if (name != "NULL") throw Error("device NULL has no renderer '" + name + "'; it has: NULL");
    return renderer_;
  }
  Compiler& compiler(const std::string& renderer_name) override {
    renderer(renderer_name);
    return compiler_;
  }
  std::shared_ptr<Program> load(const std::string&, std::span<const uint8_t>) override {
    return std::make_shared<NullProgram>();
  }
  Queue& queue() override { return queue_; }
  std::shared_ptr<Graph> graph(std::vector<GraphLaunch> launches) override {
    return std::make_shared<NullGraph>(std::move(launches));
  }

private:
  NullAllocator allocator_;
  NullRenderer renderer_;
  NullCompiler compiler_;
  NullQueue queue_;
};

int probe(char*, size_t) noexcept { return 1; }

tg::Device* create(const char* device, char* why, size_t why_len) noexcept {
  if (std::string(device) != "NULL") {
    tg::plugin::set_reason(why, why_len, "the null plugin serves only device NULL");
    return nullptr;
  }
  try {
    return new NullDevice();
  } catch (const std::exception& e) {
    tg::plugin::set_reason(why, why_len, e.what());
    return nullptr;
  }
}

} // namespace

TG_DEFINE_PLUGIN(probe, create)
