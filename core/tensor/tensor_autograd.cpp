// The Tensor's autograd API (requires_grad, grad, backward, gradient); the derivative rules and
// the reverse walk are in gradient.cpp.
#include <optional>
#include <unordered_set>

#include "gradient.hpp"
#include "tensor_internal.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/schedule.hpp"

namespace tg {

bool Tensor::training = false;

Tensor detail::with_gradient(const Tensor& value, const std::vector<Tensor>& inputs,
                             const std::string& name, const GradRule& rule) {
  register_vjp(name, [rule](const UOpPtr& grad, std::span<const UOpPtr> in) {
    std::vector<Tensor> ins;
    for (const UOpPtr& u : in) ins.push_back(make(u, {}));
    std::vector<UOpPtr> out;
    for (const Tensor& g : rule(make(grad, {}), ins))
      out.push_back(g.defined() ? g.uop() : nullptr);
    return out;
  });
  std::vector<UOpPtr> srcs;
  std::vector<const Tensor*> parents{&value};
  for (const Tensor& t : inputs) {
    srcs.push_back(t.uop());
    parents.push_back(&t);
  }
  return make(custom_vjp(value.uop(), srcs, name), parents);
}

namespace {

// d(root) as a node: ones for a one-element root, else `gradient` checked against the root.
UOpPtr root_gradient(const Tensor& root, const Tensor& gradient, const char* what) {
  if (!root.dtype().is_float())
    throw Error(std::string(what) + ": only floating-point tensors have gradients, got " +
                root.str());
  if (!gradient.defined()) {
    if (root.numel() != 1)
      throw Error(std::string(what) + ": a gradient is implied only for a tensor of one element; " +
                  "this one has shape " + shape_str(root.shape()) + " (" +
                  std::to_string(root.numel()) + " elements): pass a gradient of that shape");
    return detail::const_node(1.0, root.dtype(), root.device(), root.shape());
  }
  if (gradient.shape() != root.shape())
    throw Error(std::string(what) + ": the gradient has shape " + shape_str(gradient.shape()) +
                " but the tensor has shape " + shape_str(root.shape()) + "; they must match");
  if (gradient.device() != root.device())
    throw Error(std::string(what) + ": the gradient is on " + gradient.device() +
                " but the tensor is on " + root.device());
  return gradient.cast(root.dtype()).uop();
}

// Realized tensors that require grad, as the graphs they were computed by (their `forward`):
// gradients flow through those, and the backward graph reads the realized memory instead of
// computing them again.
struct Unrealize {
  std::unordered_map<const UOp*, UOpPtr> to_forward, to_realized;
  std::vector<std::shared_ptr<Buffer>> buffers; // what the forward graphs read
  std::vector<UOpPtr> keep;                     // keeps the keys above alive

  Unrealize() {
    for (const auto& s : detail::live_states()) {
      // (a realize may return a view of its own input, which the forward graph contains)
      if (!s->forward || s->forward == s->uop || s->forward->backward_slice().count(s->uop.get()))
        continue;
      to_forward.emplace(s->uop.get(), s->forward);
      to_realized.emplace(s->forward.get(), s->uop);
      keep.push_back(s->uop);
      keep.push_back(s->forward);
      for (const auto& b : s->forward_buffers)
        if (std::find(buffers.begin(), buffers.end(), b) == buffers.end()) buffers.push_back(b);
    }
  }
  // `u` with every realized tensor in it replaced by its forward graph, to a fixed point (a
  // forward graph may read tensors realized before it was built).
  UOpPtr forward(UOpPtr u) const {
    if (to_forward.empty()) return u;
    for (int i = 0; i < 64; ++i) {
      UOpPtr next = substitute(u, to_forward);
      if (next == u) break;
      u = std::move(next);
    }
    return u;
  }
  UOpPtr realized(const UOpPtr& u) const {
    return to_realized.empty() ? u : substitute(u, to_realized);
  }
};

// The graph gradients walk for `t`: the one it was computed by, realized tensors unrealized.
UOpPtr forward_graph(const Tensor& t, const Unrealize& un) {
  const auto& s = *t.state();
  return un.forward(s.forward ? s.forward : s.uop);
}

// The gradients of `root` for `targets` (nullopt: not reached), as tensors on the targets'
// devices that keep the buffers they read alive.
std::vector<std::optional<Tensor>> gradients(const Tensor& root, const std::vector<Tensor>& targets,
                                             const Tensor& gradient, const char* what,
                                             const Unrealize& un) {
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!targets[i].defined())
      throw Error(std::string(what) + ": target " + std::to_string(i) + " is undefined");
    if (!targets[i].dtype().is_float())
      throw Error(std::string(what) + ": target " + std::to_string(i) + " " + targets[i].str() +
                  " is not a floating-point tensor; only those have gradients");
  }
  const UOpPtr root_grad = root_gradient(root, gradient, what);
  std::vector<UOpPtr> nodes;
  for (const Tensor& t : targets) nodes.push_back(forward_graph(t, un));
  const auto grads = detail::compute_gradient(forward_graph(root, un), root_grad, nodes);
  std::vector<std::shared_ptr<Buffer>> bufs = root.state()->buffers;
  auto merge = [&bufs](const std::vector<std::shared_ptr<Buffer>>& more) {
    for (const auto& b : more)
      if (std::find(bufs.begin(), bufs.end(), b) == bufs.end()) bufs.push_back(b);
  };
  merge(root.state()->forward_buffers);
  merge(un.buffers);
  if (gradient.defined()) merge(gradient.state()->buffers);
  std::vector<std::optional<Tensor>> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    auto it = grads.find(nodes[i]);
    if (it == grads.end())
      out.emplace_back();
    else
      out.emplace_back(Tensor(un.realized(it->second), bufs, targets[i].device()));
  }
  return out;
}

} // namespace

bool Tensor::requires_grad() const { return st().requires_grad; }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  st();
  TensorState& s = *state_;
  if (!requires_grad) {
    if (s.requires_grad && !s.grad_leaf)
      throw Error("requires_grad_(false): " + str() +
                  " is computed from tensors that require grad, so it cannot stop requiring it; "
                  "use detach() for a tensor that does not");
    s.requires_grad = s.grad_leaf = false;
    return *this;
  }
  if (s.requires_grad) return *this; // a leaf already, or computed from leaves
  if (!dtype().is_float())
    throw Error("requires_grad_: only floating-point tensors can require gradients, got " + str());
  // Nodes are interned: a leaf that is a constant or a computation would be the very node of
  // every equal graph (Tensor::ones twice is one node), so it gets its own memory first.
  if (!is_buffer_view(uop())) realize();
  s.requires_grad = s.grad_leaf = true;
  return *this;
}

Tensor Tensor::grad() const { return st().grad; }

void Tensor::set_grad(Tensor g) {
  st();
  if (g.defined() && g.shape() != shape())
    throw Error("set_grad: the gradient has shape " + shape_str(g.shape()) +
                " but the tensor has shape " + shape_str(shape()));
  state_->grad = std::move(g);
}

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets,
                                     const Tensor& gradient) const {
  st();
  std::vector<std::optional<Tensor>> g =
      gradients(*this, targets, gradient, "gradient", Unrealize());
  std::vector<Tensor> out;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!g[i])
      throw Error("gradient: target " + std::to_string(i) + " " + targets[i].str() +
                  " is not in the graph of " + str() +
                  " (or only through detach() or ops without a gradient)");
    out.push_back(std::move(*g[i]));
  }
  return out;
}

const Tensor& Tensor::backward(const Tensor& gradient) const {
  st();
  if (!requires_grad())
    throw Error("backward: " + str() +
                " does not require grad: no tensor it is computed from has requires_grad_(true) "
                "(or it was detached)");
  // The leaves (tensors marked requires_grad_) alive now whose node is in this graph.
  const Unrealize un;
  const UOpPtr graph = forward_graph(*this, un);
  const auto& topo = graph->toposort();
  const std::unordered_set<const UOp*> in_graph(topo.begin(), topo.end());
  std::vector<std::shared_ptr<TensorState>> leaves;
  std::vector<Tensor> targets;
  for (auto& s : detail::live_states())
    if (s->requires_grad && s->grad_leaf && in_graph.count(s->uop.get())) {
      targets.push_back(Tensor(s));
      leaves.push_back(std::move(s));
    }
  std::vector<std::optional<Tensor>> g = gradients(*this, targets, gradient, "backward", un);
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!g[i]) continue; // reached only through detach() or ops without a gradient: no grad
    Tensor& acc = leaves[i]->grad;
    if (acc.defined()) {
      acc.assign(acc + *g[i]); // in place, as PyTorch and tinygrad accumulate
    } else if (is_buffer_view(g[i]->uop())) {
      // The gradient is some tensor's memory (the given gradient, say): the grad gets its own,
      // so that accumulating into it later writes nowhere else.
      acc = Tensor::empty(g[i]->shape(), g[i]->dtype(), g[i]->device());
      acc.assign(*g[i]);
    } else {
      acc = std::move(*g[i]);
    }
  }
  return *this;
}

Tensor Tensor::contiguous_backward() const {
  return detail::make(UOp::make(Ops::CONTIGUOUS_BACKWARD, dtype(), {uop()}), {this});
}

} // namespace tg
