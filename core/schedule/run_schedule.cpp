// Running a schedule: kernels through cached CompiledRunners, copies through the host.
#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "schedule/launch_capture.hpp"
#include "schedule/runners.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"

namespace tg {

namespace sched {

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

namespace {
thread_local std::vector<CapturedLaunch>* t_capture = nullptr;
}

std::vector<CapturedLaunch>* set_launch_capture(std::vector<CapturedLaunch>* into) {
  std::vector<CapturedLaunch>* old = t_capture;
  t_capture = into;
  return old;
}

int64_t compiled_kernel_count() {
  std::lock_guard lock(g_runners_mu);
  return static_cast<int64_t>(g_runners.size());
}

} // namespace sched

namespace {
// The kernel's variables (kernel.vars order) from the values bound in the tensors.
std::vector<int64_t> kernel_var_values(const LoweredKernel& k, const VarVals& var_vals) {
  std::vector<int64_t> out;
  out.reserve(k.vars.size());
  for (const VarArg& v : k.vars) {
    auto it = std::find_if(var_vals.begin(), var_vals.end(),
                           [&](const VarBinding& b) { return std::get<VarArg>(b.var->arg) == v; });
    if (it == var_vals.end())
      throw Error("kernel " + k.name + " needs a value for variable '" + v.name +
                  "' (bind it: Variable(\"" + v.name + "\", " + std::to_string(v.min) + ", " +
                  std::to_string(v.max) + ").bind(value))");
    out.push_back(it->value);
  }
  return out;
}
} // namespace

void run_schedule(const std::vector<ScheduleItem>& items, const VarVals& var_vals) {
  if (items.empty()) return;
  LaunchTotal total;
  std::set<Device*> used;
  for (const ScheduleItem& item : items) {
    if (item.kind == ScheduleItem::Kind::Copy) {
      if (sched::t_capture) sched::t_capture->push_back({nullptr, item.bufs});
      Buffer& dst = *item.bufs.at(0);
      Buffer& src = *item.bufs.at(1);
      std::vector<uint8_t> host(src.nbytes());
      src.copy_out(host.data(), host.size());
      dst.copy_in(host.data(), std::min(host.size(), dst.nbytes()));
      continue;
    }
    std::shared_ptr<CompiledRunner> runner = sched::runner_for(item.device, item.ast);
    if (sched::t_capture) sched::t_capture->push_back({runner, item.bufs});
    std::vector<DevicePtr> ptrs;
    ptrs.reserve(item.bufs.size());
    for (const auto& b : item.bufs) ptrs.push_back(b->ptr());
    runner->run(ptrs, kernel_var_values(runner->kernel(), var_vals), /*wait=*/false);
    used.insert(&item.bufs.at(0)->device());
  }
  for (Device* d : used) d->queue().synchronize();
}

} // namespace tg
