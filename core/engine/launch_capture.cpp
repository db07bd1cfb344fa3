// Launch capture and replay (tg/launch_capture.hpp), tinygrad's CapturedJit.
#include "tg/launch_capture.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/realize.hpp"

namespace tg {

namespace {
thread_local LaunchCapture* t_capture = nullptr;
} // namespace

LaunchCapture::LaunchCapture() : previous_(t_capture) { t_capture = this; }
LaunchCapture::~LaunchCapture() { t_capture = previous_; }

bool engine_detail::capturing() { return t_capture != nullptr; }

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

// Intermediates only the recording holds (a schedule's temporaries, tensors the step dropped)
// whose first use writes them share memory by liveness, as tinygrad's JIT memory planner does:
// each schedule plans its own temporaries, but a recording keeps every schedule's, so without
// this a step of many schedules would hold all of their intermediates at once (an LLM prefill
// chunk: every layer's dequantized weights). Returns, for each intermediate that takes over
// an earlier one's memory, that earlier buffer. A buffer anything else holds (a tensor, a
// cache) keeps its memory: its contents may be read after the step or by the next one.
std::unordered_map<const Buffer*, std::shared_ptr<Buffer>>
share_intermediates(const std::vector<CapturedLaunch>& captured,
                    const std::vector<std::shared_ptr<Buffer>>& inputs) {
  struct Use {
    std::shared_ptr<Buffer> buf;
    long copies = 0; // shared_ptrs to it inside `captured`
    size_t first = 0, last = 0;
    bool written_first = false;
  };
  std::unordered_map<const Buffer*, Use> uses;
  std::vector<const Buffer*> order; // by first use
  for (size_t i = 0; i < captured.size(); ++i)
    for (size_t s = 0; s < captured[i].bufs.size(); ++s) {
      const std::shared_ptr<Buffer>& b = captured[i].bufs[s];
      auto [it, fresh] = uses.try_emplace(b.get());
      Use& u = it->second;
      if (fresh) {
        u.buf = b;
        u.first = i;
        u.written_first = s == 0; // a kernel's output, a copy's destination
        order.push_back(b.get());
      }
      ++u.copies;
      u.last = i;
    }
  for (const auto& in : inputs) uses.erase(in.get());
  std::unordered_map<const Buffer*, std::shared_ptr<Buffer>> shared;
  std::vector<const Buffer*> live, free_list;
  for (const Buffer* b : order) {
    auto it = uses.find(b);
    if (it == uses.end()) continue;
    Use& u = it->second;
    // `u.buf` is one more copy than `captured` holds.
    if (!u.written_first || u.buf.use_count() != u.copies + 1) continue;
    for (auto l = live.begin(); l != live.end();)
      if (uses.at(*l).last < u.first) {
        free_list.push_back(*l);
        l = live.erase(l);
      } else {
        ++l;
      }
    auto fit = std::find_if(free_list.begin(), free_list.end(), [&](const Buffer* f) {
      const Buffer& fb = *uses.at(f).buf;
      return fb.device_spec() == b->device_spec() && fb.nbytes() == b->nbytes();
    });
    if (fit == free_list.end()) {
      live.push_back(b);
      continue;
    }
    // `holder` first held this memory (only those enter `live`), and now holds it until b's
    // last use.
    const Buffer* holder = *fit;
    free_list.erase(fit);
    shared[b] = uses.at(holder).buf;
    uses.at(holder).last = std::max(uses.at(holder).last, u.last);
    live.push_back(holder);
  }
  return shared;
}

} // namespace

struct LaunchReplay::Impl {
  std::vector<Launch> launches;
  std::shared_ptr<Graph> graph; // all launches as one device Graph, when possible
  std::vector<Device*> devices; // to wait on after a replay
  size_t inputs = 0;
  size_t shared_buffers = 0;
};

LaunchReplay::LaunchReplay(const std::vector<CapturedLaunch>& captured,
                           const std::vector<std::shared_ptr<Buffer>>& inputs, const VarVals& vars,
                           bool use_graph)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.inputs = inputs.size();
  std::set<Device*> devs;
  const auto shared = share_intermediates(captured, inputs);
  m.shared_buffers = shared.size();
  for (const CapturedLaunch& c : captured) {
    Launch l{c.runner, c.bufs, {}, {}, {}};
    for (auto& b : l.bufs)
      if (auto it = shared.find(b.get()); it != shared.end()) b = it->second;
    for (size_t s = 0; s < c.bufs.size(); ++s) {
      l.ptrs.push_back(c.runner ? l.bufs[s]->ptr() : 0);
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
size_t LaunchReplay::shared_buffers() const { return impl_->shared_buffers; }

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
      copy_buffer(*bufs[0], *bufs[1]);
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
