// Launch capture and replay (tg/launch_capture.hpp), tinygrad's CapturedJit.
#include "tg/launch_capture.hpp"

#include <algorithm>
#include <set>

#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/realize.hpp"

namespace tg {

namespace {
thread_local LaunchCapture* t_capture = nullptr;
} // namespace

LaunchCapture::LaunchCapture() : previous_(t_capture) { t_capture = this; }
LaunchCapture::~LaunchCapture() { t_capture = previous_; }

void engine_detail::capture_launch(CapturedLaunch launch) {
  if (t_capture != nullptr) t_capture->launches_.push_back(std::move(launch));
}

namespace {

// One recorded launch, ready to replay: its device pointers with the inputs' slots marked.
struct Launch {
  std::shared_ptr<CompiledRunner> runner; // null: a copy
  std::vector<std::shared_ptr<Buffer>> bufs;
  std::vector<DevicePtr> ptrs;
  std::vector<std::pair<size_t, size_t>> input_slots; // (slot, input index)
  std::vector<const UOp*> vars;                       // DEFINE_VARs in kernel.vars order
};

std::vector<int64_t> values(const Launch& l, const VarVals& vars) {
  std::vector<int64_t> out;
  for (const UOp* v : l.vars) {
    auto val = var_value(vars, v);
    if (!val)
      throw Error("TinyJit: kernel " + l.runner->kernel().name + " needs a value for variable '" +
                  std::get<VarArg>(v->arg).name + "'; pass it bound as an argument of the call");
    out.push_back(*val);
  }
  return out;
}

} // namespace

struct LaunchReplay::Impl {
  std::vector<Launch> launches;
  std::shared_ptr<Graph> graph; // all launches as one device Graph, when possible
  std::vector<Device*> devices; // to wait on after a replay
  size_t inputs = 0;
};

LaunchReplay::LaunchReplay(const std::vector<CapturedLaunch>& captured,
                           const std::vector<std::shared_ptr<Buffer>>& inputs, const VarVals& vars,
                           bool use_graph)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.inputs = inputs.size();
  std::set<Device*> devs;
  for (const CapturedLaunch& c : captured) {
    Launch l{c.runner, c.bufs, {}, {}, {}};
    for (size_t s = 0; s < c.bufs.size(); ++s) {
      l.ptrs.push_back(c.runner ? c.bufs[s]->ptr() : 0);
      for (size_t k = 0; k < inputs.size(); ++k)
        if (c.bufs[s] == inputs[k]) l.input_slots.emplace_back(s, k);
    }
    if (c.runner) {
      for (const VarArg& v : c.runner->kernel().vars) {
        auto it = std::find_if(vars.begin(), vars.end(), [&](const VarBinding& b) {
          return std::get<VarArg>(b.var->arg) == v;
        });
        if (it == vars.end())
          throw Error("TinyJit: kernel " + c.runner->kernel().name + " uses variable '" + v.name +
                      "', which no argument of the call binds; pass the bound " +
                      "variable (Variable(...).bind(value)) as an argument of the step");
        l.vars.push_back(it->var.get());
      }
      devs.insert(c.runner->device().get());
    } else {
      devs.insert(&c.bufs.at(0)->device());
    }
    m.launches.push_back(std::move(l));
  }
  m.devices.assign(devs.begin(), devs.end());
  const bool one_device =
      devs.size() == 1 && std::all_of(m.launches.begin(), m.launches.end(),
                                      [](const Launch& l) { return l.runner != nullptr; });
  if (use_graph && one_device && !m.launches.empty()) {
    std::vector<GraphLaunch> gl;
    for (const Launch& l : m.launches)
      gl.push_back({l.runner->program(), l.runner->launch_args(l.ptrs, values(l, vars))});
    m.graph = m.launches.front().runner->device()->graph(std::move(gl));
  }
}

LaunchReplay::~LaunchReplay() = default;

size_t LaunchReplay::size() const { return impl_->launches.size(); }
bool LaunchReplay::uses_graph() const { return impl_->graph != nullptr; }

void LaunchReplay::replay(const std::vector<std::shared_ptr<Buffer>>& inputs, const VarVals& vars) {
  Impl& m = *impl_;
  if (inputs.size() != m.inputs)
    throw Error("LaunchReplay: " + std::to_string(inputs.size()) + " input buffers for a " +
                "recording of " + std::to_string(m.inputs));
  // One by one at DEBUG>=2, so that every launch prints its line.
  const bool through_graph = m.graph && knobs::DEBUG < 2;
  std::vector<LaunchArgs> args;
  LaunchTotal total;
  for (Launch& l : m.launches) {
    if (!l.runner) {
      std::vector<std::shared_ptr<Buffer>> bufs = l.bufs;
      for (auto [slot, k] : l.input_slots) bufs[slot] = inputs[k];
      copy_through_host(*bufs[0], *bufs[1]);
      continue;
    }
    std::vector<DevicePtr> ptrs = l.ptrs;
    for (auto [slot, k] : l.input_slots) ptrs[slot] = inputs[k]->ptr();
    const std::vector<int64_t> vals = values(l, vars);
    if (through_graph) {
      args.push_back(l.runner->launch_args(ptrs, vals));
      l.runner->count_launch(vals);
    } else {
      l.runner->run(ptrs, vals, /*wait=*/false, "[jit]");
    }
  }
  if (through_graph) m.graph->replay(args);
  for (Device* d : m.devices) d->queue().synchronize();
}

} // namespace tg
