// The compiled-kernel cache behind run_schedule (tg/runner_cache.hpp).
#include "tg/runner_cache.hpp"

#include <map>
#include <mutex>

#include "tg/device_registry.hpp"
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
auto& g_runners = *new std::map<std::pair<std::string, const UOp*>, RunnerEntry>();
} // namespace

std::shared_ptr<CompiledRunner> runner_for(const std::string& device, const UOpPtr& ast) {
  std::lock_guard lock(g_runners_mu);
  auto key = std::make_pair(device, ast.get());
  if (auto it = g_runners.find(key); it != g_runners.end()) return it->second.runner;
  const DeviceSpec spec = DeviceSpec::parse(device);
  std::shared_ptr<Device> dev = DeviceRegistry::global().open(spec);
  const std::string renderer = resolve_renderer(*dev, spec);
  LoweredKernel k = lower_kernel(ast, dev->renderer(renderer).caps());
  auto runner = std::make_shared<CompiledRunner>(dev, renderer, k);
  g_runners.emplace(key, RunnerEntry{ast, runner});
  return runner;
}

int64_t compiled_kernel_count() {
  std::lock_guard lock(g_runners_mu);
  return static_cast<int64_t>(g_runners.size());
}

} // namespace tg
