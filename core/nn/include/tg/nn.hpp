#pragma once
// tg::nn: layers with named state, as tinygrad's nn and torch.nn. A Module holds its tensors
// as handles (tg::Tensor copies share state), registered by name, so get_state_dict() returns
// handles that alias the module's own: assigning into one (load_state_dict, an optimizer step)
// updates the module. Children register under "name." prefixes, as PyTorch's state_dict keys.
#include <map>
#include <memory>
#include <optional>
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
  // A normalization layer's state over `n` features under PyTorch's keys: weight (ones) and
  // bias (zeros) when `affine`, running_mean (zeros) and running_var (ones) when `track`.
  void norm_state(int64_t n, bool affine, bool track, std::optional<Tensor>& weight,
                  std::optional<Tensor>& bias, std::optional<Tensor>& running_mean,
                  std::optional<Tensor>& running_var);
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

// Conv1d and Conv2d: input (N, C_in, *spatial) or unbatched (C_in, *spatial), weight
// (out, in/groups, *k); weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
// fan_in = in/groups * prod(k) (PyTorch's default). They differ only in spatial_dims.
class ConvNd : public Module {
public:
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;
  Tensor::IntOrTuple stride, dilation;
  Tensor::ConvPadding padding;
  int64_t groups;
  size_t spatial_dims;

protected:
  ConvNd(size_t spatial_dims, int64_t in_channels, int64_t out_channels,
         const Tensor::IntOrTuple& kernel_size, Tensor::IntOrTuple stride,
         Tensor::ConvPadding padding, Tensor::IntOrTuple dilation, int64_t groups, bool bias);
};

class Conv1d : public ConvNd {
public:
  Conv1d(int64_t in_channels, int64_t out_channels, Tensor::IntOrTuple kernel_size,
         Tensor::IntOrTuple stride_ = 1, Tensor::ConvPadding padding_ = 0,
         Tensor::IntOrTuple dilation_ = 1, int64_t groups_ = 1, bool bias_ = true)
      : ConvNd(1, in_channels, out_channels, kernel_size, std::move(stride_), std::move(padding_),
               std::move(dilation_), groups_, bias_) {}
};

class Conv2d : public ConvNd {
public:
  Conv2d(int64_t in_channels, int64_t out_channels, Tensor::IntOrTuple kernel_size,
         Tensor::IntOrTuple stride_ = 1, Tensor::ConvPadding padding_ = 0,
         Tensor::IntOrTuple dilation_ = 1, int64_t groups_ = 1, bool bias_ = true)
      : ConvNd(2, in_channels, out_channels, kernel_size, std::move(stride_), std::move(padding_),
               std::move(dilation_), groups_, bias_) {}
};

// ConvTranspose2d with PyTorch's argument order (bias before dilation); weight
// (in, out/groups, kh, kw). PyTorch initialises it from the weight's dim 1, so the bound is
// 1/sqrt(out/groups * kh * kw) for weight and bias alike.
class ConvTranspose2d : public Module {
public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Tensor::IntOrTuple kernel_size,
                  Tensor::IntOrTuple stride = 1, Tensor::IntOrTuple padding = 0,
                  Tensor::IntOrTuple output_padding = 0, int64_t groups = 1, bool bias = true,
                  Tensor::IntOrTuple dilation = 1);
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;
  Tensor::IntOrTuple stride, padding, output_padding, dilation;
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

// GroupNorm: (N, C, *) normalised over each group of C/num_groups channels and the rest;
// weight ones, bias zeros (C), as torch.nn.GroupNorm.
class GroupNorm : public Module {
public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  std::optional<Tensor> weight, bias;
  int64_t num_groups, num_channels;
  double eps;
};

// InstanceNorm1d/2d: each (sample, channel) normalised over its spatial dims; input
// (N, C, *spatial) or unbatched (C, *spatial). affine and track_running_stats default to false
// as PyTorch. With running statistics, training normalises with the instance statistics and
// moves running_mean/var (assign) toward their batch means (unbiased variance); eval uses them.
class InstanceNorm : public Module {
public:
  InstanceNorm(int64_t spatial_dims, int64_t num_features, double eps, double momentum, bool affine,
               bool track_running_stats);
  Tensor operator()(const Tensor& x) const;
  std::optional<Tensor> weight, bias, running_mean, running_var;
  std::optional<Tensor> num_batches_tracked;
  int64_t spatial_dims, num_features;
  double eps, momentum;
};
class InstanceNorm1d : public InstanceNorm {
public:
  explicit InstanceNorm1d(int64_t num_features_, double eps_ = 1e-5, double momentum_ = 0.1,
                          bool affine_ = false, bool track_running_stats_ = false)
      : InstanceNorm(1, num_features_, eps_, momentum_, affine_, track_running_stats_) {}
};
class InstanceNorm2d : public InstanceNorm {
public:
  explicit InstanceNorm2d(int64_t num_features_, double eps_ = 1e-5, double momentum_ = 0.1,
                          bool affine_ = false, bool track_running_stats_ = false)
      : InstanceNorm(2, num_features_, eps_, momentum_, affine_, track_running_stats_) {}
};

// RMSNorm over the trailing normalized_shape: x / sqrt(mean(x^2) + eps) * weight; eps defaults
// to the input dtype's machine epsilon (torch.nn.RMSNorm).
class RMSNorm : public Module {
public:
  explicit RMSNorm(Shape normalized_shape, std::optional<double> eps = {},
                   bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  Shape normalized_shape;
  std::optional<Tensor> weight;
  std::optional<double> eps;
};

// Dropout: zeroes each element with probability p and scales the rest by 1/(1-p) in
// Tensor::training mode (tg::Train); the identity otherwise.
class Dropout : public Module {
public:
  explicit Dropout(double p = 0.5);
  Tensor operator()(const Tensor& x) const;
  double p;
};

// LSTMCell as torch.nn.LSTMCell: gates = x W_ih^T + b_ih + h W_hh^T + b_hh split into input,
// forget, cell and output gates (that order); c' = f*c + i*g, h' = o*tanh(c'). x is (N, I) or
// unbatched (I); the state (h, c) defaults to zeros. Every tensor U(-1/sqrt(H), 1/sqrt(H)).
class LSTMCell : public Module {
public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  std::pair<Tensor, Tensor>
  operator()(const Tensor& x, const std::optional<std::pair<Tensor, Tensor>>& hx = {}) const;
  Tensor weight_ih, weight_hh;
  std::optional<Tensor> bias_ih, bias_hh;
  int64_t input_size, hidden_size;
};

class Embedding : public Module {
public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor operator()(const Tensor& indices) const; // integer indices of any shape
  Tensor weight;
};

} // namespace tg::nn
