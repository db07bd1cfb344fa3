#pragma once
// tg::nn: layers with named state, as tinygrad's nn and torch.nn. A Module holds its tensors
// as handles (tg::Tensor copies share state), registered by name, so get_state_dict() returns
// handles that alias the module's own: assigning into one (load_state_dict, an optimizer step)
// updates the module. Children register under "name." prefixes, as PyTorch's state_dict keys.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tg/tensor.hpp"

namespace tg::nn {

class Module {
public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete; // the registry holds the module's own handles
  Module& operator=(const Module&) = delete;

  // Every registered tensor (parameters and buffers such as running statistics), by dotted
  // name in registration order.
  std::vector<std::pair<std::string, Tensor>> named_state() const;
  std::map<std::string, Tensor> get_state_dict() const;
  // The trainable tensors (requires_grad), in registration order.
  std::vector<Tensor> get_parameters() const;
  // Copies each tensor of `state` into the module's tensor of that name (assign, so every
  // handle sees it; dtypes are cast). Strict: a missing key, an unexpected key or a shape
  // mismatch raises tg::Error naming all of them; non-strict loads what matches by name and
  // shape and still refuses shape mismatches.
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);

protected:
  // Registers `t` under `name` and returns it (the module keeps the same handle).
  Tensor param(const std::string& name, Tensor t);  // trainable: requires_grad
  Tensor buffer(const std::string& name, Tensor t); // state, not trained
  template <class M> M& child(const std::string& name, std::unique_ptr<M> m) {
    M& ref = *m;
    children_.emplace_back(name, std::move(m));
    return ref;
  }

private:
  std::vector<std::pair<std::string, Tensor>> own_;
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> children_;
};

// y = x W^T + b, W (out, in) initialised as PyTorch: U(-1/sqrt(in), 1/sqrt(in)).
class Linear : public Module {
public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;
};

class Conv2d : public Module {
public:
  Conv2d(int64_t in_channels, int64_t out_channels, Tensor::IntOrTuple kernel_size,
         Tensor::IntOrTuple stride = 1, Tensor::ConvPadding padding = 0,
         Tensor::IntOrTuple dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;
  Tensor::IntOrTuple stride, dilation;
  Tensor::ConvPadding padding;
  int64_t groups;
};

// BatchNorm over channel axis 1 (1d: (N, C[, L]); 2d: (N, C, H, W)). In Tensor::training mode
// it normalises with the batch statistics and updates running_mean/running_var (assign);
// otherwise it uses the running statistics.
class BatchNorm : public Module {
public:
  explicit BatchNorm(int64_t num_features, double eps = 1e-5, double momentum = 0.1,
                     bool affine = true, bool track_running_stats = true);
  Tensor operator()(const Tensor& x) const;
  std::optional<Tensor> weight, bias, running_mean, running_var;
  Tensor num_batches_tracked;
  double eps, momentum;
};
using BatchNorm1d = BatchNorm;
using BatchNorm2d = BatchNorm;

class LayerNorm : public Module {
public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  Shape normalized_shape;
  std::optional<Tensor> weight, bias;
  double eps;
};

class Embedding : public Module {
public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor operator()(const Tensor& indices) const; // integer indices of any shape
  Tensor weight;
};

} // namespace tg::nn
