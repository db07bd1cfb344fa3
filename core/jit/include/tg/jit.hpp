#pragma once
// TinyJit, as tinygrad's: wrap a step function (a training step, a decode step) and its kernel
// launches are recorded once and replayed, skipping graph building, scheduling and lowering.
//
//   tg::TinyJit step([&](const tg::Tensor& x, const tg::Tensor& y) { ...; return loss; });
//   for (...) tg::Tensor loss = step(x_batch, y_batch);
//
// The first call runs the function normally (compiling its kernels, creating lazy state such
// as optimizer moments); the second runs it again while recording every kernel launch and copy;
// the third and later calls do not run the function: they replay the recording, swapping in
// the buffers of this call's input tensors and the values of its bound variables, through the
// device's Graph (one submission) where the plugin has one. A replay returns the value the
// recording call returned; its tensors are overwritten in place by every replay.
//
// Inputs are the tensor arguments (a Tensor or a std::vector<Tensor>, realized before the call)
// and bound symbolic sizes (a tg::sint from Variable::bind). Every other argument is passed to
// the function on the first two calls only, so it must not change. A replay whose inputs differ
// from the recording in count, shape, dtype, device or view raises tg::Error saying which input
// and how, or records again with JitOptions::rerecord. JIT=0 in the environment turns the JIT
// off (every call runs the function). With DEBUG>=2 replays run launch by launch, each line
// marked [jit].
#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tg/tensor.hpp"

namespace tg {

struct JitOptions {
  bool rerecord = false; // inputs unlike the recording's record again instead of raising
  bool use_graph = true; // replay through the device's Graph where the plugin has one
};

// The engine under TinyJit, over flattened inputs and outputs.
class JitCore {
public:
  enum class Step { Eager, Record, Replay };
  explicit JitCore(JitOptions options = {});
  ~JitCore();
  JitCore(const JitCore&) = delete;
  JitCore& operator=(const JitCore&) = delete;

  // One call: realizes `inputs`, then either runs `fn` and realizes the tensors it returns
  // (recording the launches on the second call), or replays the recording with `inputs` and
  // `vars`. Returns which it did.
  Step call(const std::vector<Tensor>& inputs, const VarVals& vars,
            const std::function<std::vector<Tensor>()>& fn);

  int64_t calls() const;            // calls so far
  size_t recorded_launches() const; // kernel launches and copies in the recording (0: none yet)
  bool uses_graph() const;          // replays go through a device Graph
  // Intermediates of the recording that share memory with an earlier one (tg/launch_capture.hpp).
  size_t shared_buffers() const;
  void reset(); // forget the recording: the next call runs normally

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

namespace jit_detail {
template <class T> struct is_tensor_list : std::false_type {};
template <> struct is_tensor_list<std::vector<Tensor>> : std::true_type {};
template <class T> struct is_tuple_like : std::false_type {};
template <class... T> struct is_tuple_like<std::tuple<T...>> : std::true_type {};
template <class A, class B> struct is_tuple_like<std::pair<A, B>> : std::true_type {};

template <class T> void collect_input(const T& a, std::vector<Tensor>& inputs, VarVals& vars) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    inputs.push_back(a);
  } else if constexpr (is_tensor_list<D>::value) {
    inputs.insert(inputs.end(), a.begin(), a.end());
  } else if constexpr (std::is_same_v<D, sint>) {
    merge_var_vals(vars, a.bindings());
  }
}

template <class T> void collect_outputs(const T& r, std::vector<Tensor>& outs) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    outs.push_back(r);
  } else if constexpr (is_tensor_list<D>::value) {
    outs.insert(outs.end(), r.begin(), r.end());
  } else if constexpr (is_tuple_like<D>::value) {
    std::apply([&](const auto&... e) { (collect_outputs(e, outs), ...); }, r);
  }
}
} // namespace jit_detail

template <class F> class TinyJit {
public:
  explicit TinyJit(F fn, JitOptions options = {}) : fn_(std::move(fn)), core_(options) {}

  template <class... Args> auto operator()(Args&&... args) {
    using R = std::invoke_result_t<F&, Args&...>;
    std::vector<Tensor> inputs;
    VarVals vars;
    (jit_detail::collect_input(args, inputs, vars), ...);
    if constexpr (std::is_void_v<R>) {
      core_.call(inputs, vars, [&] {
        std::invoke(fn_, args...);
        return std::vector<Tensor>{};
      });
    } else {
      std::any fresh;
      const JitCore::Step step = core_.call(inputs, vars, [&] {
        fresh = std::invoke(fn_, args...);
        std::vector<Tensor> outs;
        jit_detail::collect_outputs(std::any_cast<R&>(fresh), outs);
        return outs;
      });
      if (step == JitCore::Step::Record) recorded_ = fresh;
      return step == JitCore::Step::Replay ? std::any_cast<R>(recorded_) : std::any_cast<R>(fresh);
    }
  }

  JitCore& core() { return core_; }
  const JitCore& core() const { return core_; }

private:
  F fn_;
  JitCore core_;
  std::any recorded_; // what the recording call returned
};

} // namespace tg
