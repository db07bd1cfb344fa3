// TinyJit over Tensors (tinygrad's TinyJit): which call runs the function, which records its
// launches and which replays them, and the checks that a replay's inputs match the recording.
// Recording and replaying launches is the engine's (tg/launch_capture.hpp); this file uses only
// the Tensor's public API.
#include "tg/jit.hpp"

#include <string>

#include "tg/error.hpp"
#include "tg/ir/print.hpp"
#include "tg/ir/shape.hpp"
#include "tg/knobs.hpp"
#include "tg/launch_capture.hpp"

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
  std::shared_ptr<Buffer> buf = t.buffer();
  if (!buf)
    throw Error("TinyJit: input " + std::to_string(i) + " (shape " + shape_str(t.shape()) +
                ") is not in memory after realize(); pass realized tensors");
  Shape unbound;
  for (const sint& d : t.shape()) unbound.push_back(d.unbound());
  return {buf, t.dtype(), t.device(), shape_str(unbound), view_of(t.uop().get())};
}

} // namespace

struct JitCore::Impl {
  JitOptions options;
  bool enabled = knobs::JIT != 0;
  int64_t calls = 0;
  std::vector<InputSig> inputs;
  std::unique_ptr<LaunchReplay> recording; // null until the second call

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

  static std::vector<std::shared_ptr<Buffer>> buffers(const std::vector<InputSig>& sigs) {
    std::vector<std::shared_ptr<Buffer>> out;
    for (const InputSig& s : sigs) out.push_back(s.buffer);
    return out;
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
};

JitCore::JitCore(JitOptions options) : impl_(std::make_unique<Impl>()) { impl_->options = options; }
JitCore::~JitCore() = default;

int64_t JitCore::calls() const { return impl_->calls; }
size_t JitCore::recorded_launches() const {
  return impl_->recording ? impl_->recording->size() : 0;
}
bool JitCore::uses_graph() const { return impl_->recording && impl_->recording->uses_graph(); }
size_t JitCore::shared_buffers() const {
  return impl_->recording ? impl_->recording->shared_buffers() : 0;
}
void JitCore::reset() {
  impl_->calls = 0;
  impl_->inputs.clear();
  impl_->recording.reset();
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
  if (m.recording) {
    const std::string why = m.mismatch(now);
    if (why.empty()) {
      m.recording->replay(Impl::buffers(now), vars);
      ++m.calls;
      return Step::Replay;
    }
    if (!m.options.rerecord)
      throw Error("TinyJit: " + why +
                  ". Call the step with the inputs it was recorded with, or build the TinyJit "
                  "with JitOptions{.rerecord = true} to record again when they change");
    m.recording.reset(); // record this call instead
  } else if (m.calls == 0) {
    Tensor::realize_all(fn());
    ++m.calls;
    return Step::Eager;
  }
  std::vector<CapturedLaunch> captured;
  {
    LaunchCapture capture;
    Tensor::realize_all(fn());
    captured = capture.launches();
  }
  m.recording =
      std::make_unique<LaunchReplay>(captured, Impl::buffers(now), vars, m.options.use_graph);
  m.inputs = std::move(now);
  ++m.calls;
  return Step::Record;
}

} // namespace tg
