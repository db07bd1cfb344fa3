// The adapter for plugins of an older ABI minor (abi_adapter.hpp).
#include "abi_adapter.hpp"

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
// RendererCaps as ABI 1.1 laid it out, frozen: a 1.1 plugin's caps() points at one of these.
struct RendererCapsV1_1 {
  bool has_local;
  bool has_shared;
  bool supports_float4;
  bool supports_half;
  bool has_transcendentals;
  std::array<int64_t, 3> global_max;
  std::array<int64_t, 3> local_max;
  int64_t shared_max;
  std::vector<TensorCore> tensor_cores;
  const PatternMatcher* extra_matcher;
  const PatternMatcher* decompositions;
};
// RendererCaps as ABI 1.2 laid it out, frozen: 1.1's fields and vector_lanes.
struct RendererCapsV1_2 {
  RendererCapsV1_1 v1_1;
  int64_t vector_lanes;
};
// Each minor only appended (1.1 replaced 1.0's last field): the shared fields sit where the
// current struct has them.
static_assert(offsetof(RendererCaps, has_transcendentals) ==
              offsetof(RendererCapsV1_0, has_transcendentals));
static_assert(offsetof(RendererCaps, global_max) == offsetof(RendererCapsV1_0, global_max));
static_assert(offsetof(RendererCaps, local_max) == offsetof(RendererCapsV1_0, local_max));
static_assert(offsetof(RendererCaps, shared_max) == offsetof(RendererCapsV1_0, shared_max));
static_assert(offsetof(RendererCaps, has_transcendentals) ==
              offsetof(RendererCapsV1_1, has_transcendentals));
static_assert(offsetof(RendererCaps, shared_max) == offsetof(RendererCapsV1_1, shared_max));
static_assert(offsetof(RendererCaps, tensor_cores) == offsetof(RendererCapsV1_1, tensor_cores));
static_assert(offsetof(RendererCaps, extra_matcher) == offsetof(RendererCapsV1_1, extra_matcher));
static_assert(offsetof(RendererCaps, decompositions) == offsetof(RendererCapsV1_1, decompositions));
static_assert(offsetof(RendererCaps, vector_lanes) >= sizeof(RendererCapsV1_1));
static_assert(offsetof(RendererCaps, vector_lanes) == offsetof(RendererCapsV1_2, vector_lanes));
static_assert(offsetof(RendererCaps, has_dot4) >= sizeof(RendererCapsV1_2));

// The fields every minor has, from either frozen layout.
template <class Old> void copy_1_0_fields(const Old& old, RendererCaps& caps) {
  caps.has_local = old.has_local;
  caps.has_shared = old.has_shared;
  caps.supports_float4 = old.supports_float4;
  caps.supports_half = old.supports_half;
  caps.has_transcendentals = old.has_transcendentals;
  caps.global_max = old.global_max;
  caps.local_max = old.local_max;
  caps.shared_max = old.shared_max;
}

class OlderRenderer final : public Renderer {
public:
  OlderRenderer(Renderer& inner, uint32_t minor) : inner_(inner) {
    if (minor == 0) {
      copy_1_0_fields(reinterpret_cast<const RendererCapsV1_0&>(inner.caps()), caps_);
      return;
    }
    const auto& old = reinterpret_cast<const RendererCapsV1_1&>(inner.caps());
    copy_1_0_fields(old, caps_);
    caps_.tensor_cores = old.tensor_cores;
    caps_.extra_matcher = old.extra_matcher;
    caps_.decompositions = old.decompositions;
    if (minor >= 2)
      caps_.vector_lanes = reinterpret_cast<const RendererCapsV1_2&>(inner.caps()).vector_lanes;
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

class OlderDevice final : public Device {
public:
  OlderDevice(std::shared_ptr<Device> inner, uint32_t minor)
      : inner_(std::move(inner)), minor_(minor) {}
  std::string name() const override { return inner_->name(); }
  Allocator& allocator() override { return inner_->allocator(); }
  std::vector<std::string> renderers() const override { return inner_->renderers(); }
  Renderer& renderer(const std::string& name) override {
    Renderer& r = inner_->renderer(name);
    if (minor_ >= 3) return r; // RendererCaps is as 1.3 laid it out
    std::lock_guard lock(mu_);
    auto& wrapped = renderers_[&r];
    if (!wrapped) wrapped = std::make_unique<OlderRenderer>(r, minor_);
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
  // 1.1's virtuals: asked of a 1.1 device, Device's defaults (1.0's behaviour) for a 1.0 one.
  bool host_visible() const override { return minor_ >= 1 && inner_->host_visible(); }
  std::string arch() const override { return minor_ >= 1 ? inner_->arch() : std::string(); }
  // 1.4's: an older device has no device-to-device copy, so the core copies through the host.
  bool copy_from(DevicePtr, Device&, DevicePtr, size_t) override { return false; }

private:
  std::shared_ptr<Device> inner_;
  uint32_t minor_;
  std::mutex mu_;
  std::map<const Renderer*, std::unique_ptr<OlderRenderer>> renderers_;
};

} // namespace

std::shared_ptr<Device> serve_older_abi(std::shared_ptr<Device> device, uint32_t minor) {
  return std::make_shared<OlderDevice>(std::move(device), minor);
}

} // namespace tg
