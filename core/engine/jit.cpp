// TinyJit's engine: record the launches of one call of a step, then replay them with the
// buffers of each new call's inputs swapped in (tinygrad's TinyJit and CapturedJit).
#include "tg/jit.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "schedule/launch_capture.hpp"
#include "tensor/tensor_internal.hpp"
#include "tg/env.hpp"
#include "tg/error.hpp"
#include "tg/ir/print.hpp"
#include "tg/schedule.hpp"

namespace tg {

namespace {

// What a replay must find again in each input: the buffer it reads and how it is seen.
struct InputSig {
  std::shared_ptr<Buffer> buffer;
  DType dtype = dtypes::float32;
  std::string device;
  std::string shape; // unbound (variables by name)
  std::string view;  // the movement ops between the tensor and its buffer
};

std::string view_of(const UOp* u) {
  std::string s;
  for (; u->op != Ops::BUFFER; u = u->src[0].get())
    s += std::string(op_name(u->op)) + arg_to_string(u->arg) + ";";
  return s;
}

InputSig signature_of(const Tensor& t, size_t i) {
  const UOpPtr base = base_buffer(t.uop());
  std::shared_ptr<Buffer> buf;
  if (base)
    for (const auto& b : t.state()->buffers)
      if (b->uop() == base) buf = b;
  if (!buf)
    throw Error("TinyJit: input " + std::to_string(i) + " (shape " + shape_str(t.shape()) +
                ") is not in memory after realize(); pass realized tensors");
  Shape unbound;
  for (const sint& d : t.shape()) unbound.push_back(d.unbound());
  return {buf, t.dtype(), t.device(), shape_str(unbound), view_of(t.uop().get())};
}

// One recorded launch, ready to replay: its device pointers with the inputs' slots marked.
struct Launch {
  std::shared_ptr<CompiledRunner> runner; // null: a copy
  std::vector<std::shared_ptr<Buffer>> bufs;
  std::vector<DevicePtr> ptrs;
  std::vector<std::pair<size_t, size_t>> input_slots; // (slot, input index)
  std::vector<const UOp*> vars;                       // DEFINE_VARs in kernel.vars order
};

} // namespace

struct JitCore::Impl {
  JitOptions options;
  bool enabled = getenv_int("JIT", 1) != 0;
  int64_t calls = 0;
  bool recorded = false;
  std::vector<InputSig> inputs;
  std::vector<Launch> launches;
  std::shared_ptr<Graph> graph; // all launches as one device Graph, when possible
  std::vector<Device*> devices; // to wait on after a replay

  std::vector<InputSig> prepare(const std::vector<Tensor>& in) const {
    Tensor::realize_all(in);
    std::vector<InputSig> sigs;
    for (size_t i = 0; i < in.size(); ++i) {
      sigs.push_back(signature_of(in[i], i));
      for (size_t j = 0; j < i; ++j)
        if (sigs[j].buffer == sigs[i].buffer)
          throw Error("TinyJit: inputs " + std::to_string(j) + " and " + std::to_string(i) +
                      " share one buffer; a replay swaps each input's buffer, so pass distinct "
                      "tensors (or contiguous() copies)");
    }
    return sigs;
  }

  // The first way `now` differs from the recording, or "" when it matches.
  std::string mismatch(const std::vector<InputSig>& now) const {
    if (now.size() != inputs.size())
      return "the call has " + std::to_string(now.size()) + " tensor inputs but the step was " +
             "recorded with " + std::to_string(inputs.size());
    for (size_t i = 0; i < now.size(); ++i) {
      const InputSig &a = now[i], &b = inputs[i];
      const std::string which = "input " + std::to_string(i) + " ";
      if (a.shape != b.shape)
        return which + "has shape " + a.shape + " but the step was recorded with " + b.shape;
      if (a.dtype != b.dtype)
        return which + "has dtype " + a.dtype.name() + " but the step was recorded with " +
               b.dtype.name();
      if (a.device != b.device)
        return which + "is on " + a.device + " but the step was recorded on " + b.device;
      if (a.view != b.view || a.buffer->size() != b.buffer->size())
        return which + "is a different view of its memory than at recording (" + a.view + " over " +
               std::to_string(a.buffer->size()) + " elements, recorded " + b.view + " over " +
               std::to_string(b.buffer->size()) + "); pass contiguous() tensors";
    }
    return "";
  }

  void record(const std::vector<sched::CapturedLaunch>& captured, const VarVals& vars) {
    launches.clear();
    graph.reset();
    std::set<Device*> devs;
    for (const sched::CapturedLaunch& c : captured) {
      Launch l{c.runner, c.bufs, {}, {}, {}};
      for (size_t s = 0; s < c.bufs.size(); ++s) {
        l.ptrs.push_back(c.runner ? c.bufs[s]->ptr() : 0);
        for (size_t k = 0; k < inputs.size(); ++k)
          if (c.bufs[s] == inputs[k].buffer) l.input_slots.emplace_back(s, k);
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
      launches.push_back(std::move(l));
    }
    devices.assign(devs.begin(), devs.end());
    // One Graph when every launch is a kernel on one device that has a graph form.
    const bool one_device =
        devs.size() == 1 && std::all_of(launches.begin(), launches.end(),
                                        [](const Launch& l) { return l.runner != nullptr; });
    if (options.use_graph && one_device && !launches.empty()) {
      std::vector<GraphLaunch> gl;
      for (const Launch& l : launches)
        gl.push_back({l.runner->program(), l.runner->launch_args(l.ptrs, values(l, vars))});
      graph = launches.front().runner->device()->graph(std::move(gl));
    }
    recorded = true;
  }

  static std::vector<int64_t> values(const Launch& l, const VarVals& vars) {
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

  void replay(const std::vector<InputSig>& now, const VarVals& vars) {
    const bool debug = getenv_int("DEBUG") >= 2;
    std::vector<LaunchArgs> args;
    LaunchTotal total;
    for (Launch& l : launches) {
      std::vector<DevicePtr> ptrs = l.ptrs;
      for (auto [slot, k] : l.input_slots) ptrs[slot] = now[k].buffer->ptr();
      if (!l.runner) { // a copy, through the host as run_schedule does
        std::vector<std::shared_ptr<Buffer>> bufs = l.bufs;
        for (auto [slot, k] : l.input_slots) bufs[slot] = now[k].buffer;
        std::vector<uint8_t> host(bufs[1]->nbytes());
        bufs[1]->copy_out(host.data(), host.size());
        bufs[0]->copy_in(host.data(), std::min(host.size(), bufs[0]->nbytes()));
        continue;
      }
      const std::vector<int64_t> vals = values(l, vars);
      if (graph && !debug) {
        args.push_back(l.runner->launch_args(ptrs, vals));
        l.runner->count_launch(vals);
      } else {
        l.runner->run(ptrs, vals, /*wait=*/false, "[jit]");
      }
    }
    if (graph && !debug) graph->replay(args);
    for (Device* d : devices) d->queue().synchronize();
  }
};

JitCore::JitCore(JitOptions options) : impl_(std::make_unique<Impl>()) { impl_->options = options; }
JitCore::~JitCore() = default;

int64_t JitCore::calls() const { return impl_->calls; }
size_t JitCore::recorded_launches() const { return impl_->launches.size(); }
bool JitCore::uses_graph() const { return impl_->graph != nullptr; }
void JitCore::reset() {
  impl_->calls = 0;
  impl_->recorded = false;
  impl_->inputs.clear();
  impl_->launches.clear();
  impl_->graph.reset();
  impl_->devices.clear();
}

JitCore::Step JitCore::call(const std::vector<Tensor>& inputs, const VarVals& vars,
                            const std::function<std::vector<Tensor>()>& fn) {
  Impl& m = *impl_;
  if (!m.enabled) {
    Tensor::realize_all(inputs);
    Tensor::realize_all(fn());
    ++m.calls;
    return Step::Eager;
  }
  std::vector<InputSig> now = m.prepare(inputs);
  if (m.recorded) {
    const std::string why = m.mismatch(now);
    if (why.empty()) {
      m.replay(now, vars);
      ++m.calls;
      return Step::Replay;
    }
    if (!m.options.rerecord)
      throw Error("TinyJit: " + why +
                  ". Call the step with the inputs it was recorded with, or build the TinyJit "
                  "with JitOptions{.rerecord = true} to record again when they change");
    m.recorded = false; // record this call instead
  } else if (m.calls == 0) {
    Tensor::realize_all(fn());
    ++m.calls;
    return Step::Eager;
  }
  std::vector<sched::CapturedLaunch> captured;
  std::vector<sched::CapturedLaunch>* previous = sched::set_launch_capture(&captured);
  try {
    Tensor::realize_all(fn());
  } catch (...) {
    sched::set_launch_capture(previous);
    throw;
  }
  sched::set_launch_capture(previous);
  m.inputs = std::move(now);
  m.record(captured, vars);
  ++m.calls;
  return Step::Record;
}

} // namespace tg
