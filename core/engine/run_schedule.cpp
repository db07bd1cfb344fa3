// Running a schedule: kernels through cached CompiledRunners, copies by copy_buffer, each
// launch offered to the thread's launch capture (TinyJit's recording).
#include <algorithm>
#include <set>
#include <unordered_map>

#include "tg/error.hpp"
#include "tg/launch_capture.hpp"
#include "tg/realize.hpp"
#include "tg/runner_cache.hpp"

namespace tg {

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
// Under a launch capture (TinyJit's recording), the memory of the schedule's intermediates:
// the recording holds every launch's buffers, so without this a step of many schedules would
// hold all of their intermediates at once while it records (an LLM prefill chunk: a float32
// copy of every layer's weights). An intermediate is a buffer only the items and the capture
// hold (a result or an input has a tensor too); the recording's replays give such buffers
// memory again, shared by liveness (LaunchReplay).
void release_intermediates(const std::vector<ScheduleItem>& items) {
  std::unordered_map<Buffer*, long> copies;
  for (const ScheduleItem& item : items)
    for (const auto& b : item.bufs) ++copies[b.get()];
  for (const ScheduleItem& item : items)
    for (const auto& b : item.bufs)
      if (b.use_count() == 2 * copies.at(b.get())) b->release_memory();
}

} // namespace

void run_schedule(const std::vector<ScheduleItem>& items, const VarVals& var_vals) {
  if (items.empty()) return;
  LaunchTotal total;
  std::set<Device*> used;
  for (const ScheduleItem& item : items) {
    if (item.kind == ScheduleItem::Kind::Copy) {
      engine_detail::capture_launch({nullptr, item.bufs});
      copy_buffer(*item.bufs.at(0), *item.bufs.at(1));
      continue;
    }
    std::shared_ptr<CompiledRunner> runner = runner_for(item.device, item.ast, item.bufs, var_vals);
    engine_detail::capture_launch({runner, item.bufs});
    std::vector<DevicePtr> ptrs;
    ptrs.reserve(item.bufs.size());
    for (const auto& b : item.bufs) ptrs.push_back(b->ptr());
    runner->run(ptrs, kernel_var_values(runner->kernel(), var_vals), /*wait=*/false);
    used.insert(&item.bufs.at(0)->device());
  }
  for (Device* d : used) d->queue().synchronize();
  if (engine_detail::capturing()) release_intermediates(items);
}

} // namespace tg
