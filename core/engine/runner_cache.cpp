// The compiled-kernel cache behind run_schedule (tg/runner_cache.hpp), and where BEAM's search
// is started for a kernel seen for the first time.
#include "tg/runner_cache.hpp"

#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "tg/beam.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/realize.hpp"

namespace tg {

namespace {
struct RunnerEntry {
  UOpPtr ast; // keeps the key's address from being reused
  std::shared_ptr<CompiledRunner> runner;
};
std::mutex g_runners_mu;
// Never destroyed: a runner's program belongs to its plugin's device, which may be gone by the
// time static destructors run; the process is ending anyway.
auto& g_runners = *new std::map<std::tuple<std::string, const UOp*, std::string>, RunnerEntry>();

// BEAM's Opts for `ast`, timed on the kernel's buffers once the device's queue has finished
// what produces them.
std::vector<Opt> beam_opts(Device& dev, const std::string& renderer, const UOpPtr& ast,
                           const std::vector<std::shared_ptr<Buffer>>& bufs,
                           const VarVals& var_vals) {
  BeamTarget target{&dev, renderer, {}, {}};
  for (const auto& b : bufs)
    target.buffers.push_back(b ? BeamBuffer{b->ptr(), b->nbytes()} : BeamBuffer{});
  for (const VarBinding& v : var_vals)
    target.var_values.emplace_back(std::get<VarArg>(v.var->arg).name, v.value);
  dev.queue().synchronize();
  return beam_optimize(ast, target, knobs::BEAM).opts;
}
} // namespace

std::string opt_choice() {
  if (knobs::NOOPT) return "noopt";
  if (knobs::BEAM > 0) return "beam" + std::to_string(knobs::BEAM.get());
  return "heuristic";
}

std::shared_ptr<CompiledRunner> runner_for(const std::string& device, const UOpPtr& ast,
                                           const std::vector<std::shared_ptr<Buffer>>& bufs,
                                           const VarVals& var_vals) {
  std::lock_guard lock(g_runners_mu);
  auto key = std::make_tuple(device, ast.get(), opt_choice());
  if (auto it = g_runners.find(key); it != g_runners.end()) return it->second.runner;
  const DeviceSpec spec = DeviceSpec::parse(device);
  std::shared_ptr<Device> dev = DeviceRegistry::global().open(spec);
  const std::string renderer = resolve_renderer(*dev, spec);
  const RendererCaps& caps = dev->renderer(renderer).caps();
  std::optional<LoweredKernel> k;
  if (!knobs::NOOPT && knobs::BEAM > 0) {
    try {
      k = lower_kernel_with_opts(ast, caps, beam_opts(*dev, renderer, ast, bufs, var_vals));
    } catch (const Error& e) {
      // A kernel BEAM cannot time (none of its forms runs here) still gets the heuristic's.
      std::cerr << "warning: BEAM: " << e.what() << "; using the heuristic's Opts\n";
    }
  }
  if (!k) k = lower_kernel(ast, caps);
  auto runner = std::make_shared<CompiledRunner>(dev, renderer, *k);
  g_runners.emplace(key, RunnerEntry{ast, runner});
  return runner;
}

const RendererCaps& renderer_caps(const std::string& device) {
  const DeviceSpec spec = DeviceSpec::parse(device);
  // The registry keeps every opened device for the life of the process, so the reference stays
  // valid after this shared_ptr goes.
  std::shared_ptr<Device> dev = DeviceRegistry::global().open(spec);
  return dev->renderer(resolve_renderer(*dev, spec)).caps();
}

int64_t compiled_kernel_count() {
  std::lock_guard lock(g_runners_mu);
  return static_cast<int64_t>(g_runners.size());
}

} // namespace tg
