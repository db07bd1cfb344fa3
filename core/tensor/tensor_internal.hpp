#pragma once
// What the Tensor's implementation files share: the state behind a handle and helpers to make
// tensors from nodes.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/ir/shape.hpp"
#include "tg/tensor.hpp"

namespace tg {

// The state every copy of a Tensor handle shares: its graph and the buffers the graph names
// (they live as long as some tensor's graph needs them).
struct TensorState {
  UOpPtr uop;
  std::vector<std::shared_ptr<Buffer>> buffers;
  std::string device; // kept: finding it in the graph costs the graph's depth
  VarVals var_vals;   // values of the variables in symbolic shapes (never in the graph)
  // Autograd (gradient.cpp): whether gradients flow to this tensor, whether it is a leaf the
  // user marked (requires_grad_(true); backward() fills only leaves' grad, as PyTorch), and
  // the accumulated gradient (undefined until a backward reaches it).
  bool requires_grad = false;
  bool grad_leaf = false;
  Tensor grad;
  // A realized tensor that requires grad (not a leaf) keeps the graph it was computed by, and
  // that graph's buffers, so gradients still flow through it (apply_results sets them).
  UOpPtr forward;
  std::vector<std::shared_ptr<Buffer>> forward_buffers;
};

namespace detail {

// A tensor over `uop` whose graph reads the buffers of `parents`.
Tensor make(UOpPtr uop, std::initializer_list<const Tensor*> parents);
Tensor make(UOpPtr uop, const std::vector<const Tensor*>& parents);
// `t` with the bindings of symbolic sizes in `arg` added (t must be a fresh tensor).
Tensor with_bindings(Tensor t, const Arg& arg);
UOpPtr device_node(const std::string& device);
// A tensor-level constant of `shape` (a 0-d CONST reshaped and expanded, no memory).
UOpPtr const_node(ConstValue v, DType dtype, const std::string& device, const Shape& shape);
// The accumulator of sum, prod, cumsum and cumprod: every integer and bool in int64 (PyTorch,
// which never wraps a sum of int32), half floats in float32.
DType sum_acc_dtype(DType d);
// t.max(axes, keepdim) whose gradient goes whole to the first maximum in row-major order over
// `axes` (PyTorch's max(dim) and max_pool), not split across ties as max()'s is. A NaN counts
// as the maximum.
Tensor max_to_first(const Tensor& t, const std::vector<int64_t>& axes);
// tinygrad's Tensor._pool: (..., *i) -> (..., *o, *k), the windows of size k, stride s and
// dilation d over the last k.size() dimensions, as a view (movement ops only).
Tensor sliding_windows(const Tensor& x, const std::vector<int64_t>& k,
                       const std::vector<int64_t>& s, const std::vector<int64_t>& d,
                       const std::string& op);
// `value` whose gradient to `inputs` is `rule`'s (PyTorch's closed forms, where differentiating
// the graph that computes `value` loses precision or gives nan at extremes) rather than the
// graph's own. The rule gets the incoming gradient and the inputs and returns one gradient per
// input (an undefined Tensor: none). `name` registers the rule once, so it must say everything
// the rule depends on (an axis, a constant).
using GradRule =
    std::function<std::vector<Tensor>(const Tensor& grad, const std::vector<Tensor>& inputs)>;
Tensor with_gradient(const Tensor& value, const std::vector<Tensor>& inputs,
                     const std::string& name, const GradRule& rule);
// PyTorch's scatter_add: `base` with values[..., i, ...] added at position index[..., i, ...]
// along `dim` (tensor_scatter.cpp). index and values have one shape, base's off `dim`; the
// additions to one element happen in the order of i (deterministic); a negative index counts
// from the end, one outside -n..n-1 (n = base.size(dim)) adds nothing (it cannot be checked
// without reading the index back). Float results differentiate to base and values.
Tensor scatter_add_along(const Tensor& base, int64_t dim, const Tensor& index,
                         const Tensor& values);
// `value` = x gathered along `dim` at `index` (any shape, its values in 0..n-1): the axes of x
// before dim, index's axes, x's after dim (a tensor index, an embedding). Its gradient to x is
// a scatter-add of the incoming gradient instead of the one-hot form's dense reduce.
Tensor gather_with_scatter_gradient(const Tensor& value, const Tensor& x, int64_t dim,
                                    const Tensor& index);
// `value` = PyTorch's gather(x, dim, index) (index of x's shape off dim, a negative index
// selects nothing): its gradient to x a scatter-add.
Tensor gather_elements_with_scatter_gradient(const Tensor& value, const Tensor& x, int64_t dim,
                                             const Tensor& index);
// An order-reversing map, so min(x) = order_reversed(max(order_reversed(x))) without overflow.
Tensor order_reversed(const Tensor& t);
// a == b, with NaN equal to NaN.
Tensor eq_nan(const Tensor& a, const Tensor& b);
// The dtype a Python scalar gets on its own: bool, int32 or float32.
DType scalar_dtype(const Scalar& s);
// `axis` counted from the end when negative; raises tg::Error naming `what` when out of range.
int64_t normalize_axis(int64_t axis, int64_t ndim, const std::string& what);
// Saves s.uop as s.forward before a realize replaces it, when gradients need it.
void keep_forward(TensorState& s);
// Every tensor state alive now (autograd finds the leaves of a graph among them).
std::vector<std::shared_ptr<TensorState>> live_states();
// Replaces realized nodes by their results in every live tensor (tinygrad's becomes_map).
void apply_results(const std::vector<UOpPtr>& roots, const std::vector<UOpPtr>& results,
                   const std::vector<std::shared_ptr<Buffer>>& buffers);

} // namespace detail
} // namespace tg
