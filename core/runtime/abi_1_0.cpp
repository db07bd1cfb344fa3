// The ABI 1.0 adapter (abi_1_0.hpp).
#include "abi_1_0.hpp"

#include <cstddef>
#include <map>
#include <mutex>

namespace tg {

namespace {

// RendererCaps as ABI 1.0 laid it out, frozen: a 1.0 plugin's caps() points at one of these.
struct RendererCapsV1_0 {
  bool has_local;
  bool has_shared;
  bool supports_float4;
  bool supports_half;
  bool has_transcendentals;
  std::array<int64_t, 3> global_max;
  std::array<int64_t, 3> local_max;
  int64_t shared_max;
  std::vector<std::string> tensor_cores; // names; 1.0 gave codegen nothing to use them for
};
// 1.1 only appended, and replaced the last field: everything up to shared_max is shared.
static_assert(offsetof(RendererCaps, has_transcendentals) ==
              offsetof(RendererCapsV1_0, has_transcendentals));
static_assert(offsetof(RendererCaps, global_max) == offsetof(RendererCapsV1_0, global_max));
static_assert(offsetof(RendererCaps, local_max) == offsetof(RendererCapsV1_0, local_max));
static_assert(offsetof(RendererCaps, shared_max) == offsetof(RendererCapsV1_0, shared_max));

class Renderer1_0 final : public Renderer {
public:
  explicit Renderer1_0(Renderer& inner) : inner_(inner) {
    const auto& old = reinterpret_cast<const RendererCapsV1_0&>(inner.caps());
    caps_.has_local = old.has_local;
    caps_.has_shared = old.has_shared;
    caps_.supports_float4 = old.supports_float4;
    caps_.supports_half = old.supports_half;
    caps_.has_transcendentals = old.has_transcendentals;
    caps_.global_max = old.global_max;
    caps_.local_max = old.local_max;
    caps_.shared_max = old.shared_max;
  }
  std::string name() const override { return inner_.name(); }
  const RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override {
    return inner_.render(kernel_name, uops);
  }

private:
  Renderer& inner_;
  RendererCaps caps_;
};

class Device1_0 final : public Device {
public:
  explicit Device1_0(std::shared_ptr<Device> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  Allocator& allocator() override { return inner_->allocator(); }
  std::vector<std::string> renderers() const override { return inner_->renderers(); }
  Renderer& renderer(const std::string& name) override {
    Renderer& r = inner_->renderer(name);
    std::lock_guard lock(mu_);
    auto& wrapped = renderers_[&r];
    if (!wrapped) wrapped = std::make_unique<Renderer1_0>(r);
    return *wrapped;
  }
  Compiler& compiler(const std::string& renderer_name) override {
    return inner_->compiler(renderer_name);
  }
  std::shared_ptr<Program> load(const std::string& kernel_name,
                                std::span<const uint8_t> binary) override {
    return inner_->load(kernel_name, binary);
  }
  Queue& queue() override { return inner_->queue(); }
  std::shared_ptr<Graph> graph(std::vector<GraphLaunch> launches) override {
    return inner_->graph(std::move(launches));
  }
  // host_visible() and arch(): Device's defaults, 1.0's behaviour.

private:
  std::shared_ptr<Device> inner_;
  std::mutex mu_;
  std::map<const Renderer*, std::unique_ptr<Renderer1_0>> renderers_;
};

} // namespace

std::shared_ptr<Device> serve_abi_1_0(std::shared_ptr<Device> device) {
  return std::make_shared<Device1_0>(std::move(device));
}

} // namespace tg
