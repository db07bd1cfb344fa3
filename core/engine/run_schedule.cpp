// Running a schedule: kernels through cached CompiledRunners, copies through the host, each
// launch offered to the thread's launch capture (TinyJit's recording).
#include <algorithm>
#include <set>

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
} // namespace

void copy_through_host(Buffer& dst, Buffer& src) {
  std::vector<uint8_t> host(src.nbytes());
  src.copy_out(host.data(), host.size());
  dst.copy_in(host.data(), std::min(host.size(), dst.nbytes()));
}

void run_schedule(const std::vector<ScheduleItem>& items, const VarVals& var_vals) {
  if (items.empty()) return;
  LaunchTotal total;
  std::set<Device*> used;
  for (const ScheduleItem& item : items) {
    if (item.kind == ScheduleItem::Kind::Copy) {
      engine_detail::capture_launch({nullptr, item.bufs});
      copy_through_host(*item.bufs.at(0), *item.bufs.at(1));
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
}

} // namespace tg
