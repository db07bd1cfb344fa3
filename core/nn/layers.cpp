// tg::nn: Module's registry and state dict, and the layers (see tg/nn.hpp).
#include <cmath>

#include "tg/error.hpp"
#include "tg/ir/shape.hpp"
#include "tg/nn.hpp"

namespace tg::nn {

// ---- Module -----------------------------------------------------------------------------

Tensor Module::param(const std::string& name, Tensor t) {
  t.requires_grad_(true);
  own_.emplace_back(name, t);
  return t;
}

Tensor Module::buffer(const std::string& name, Tensor t) {
  t.realize(); // memory that assign() can write (running statistics)
  own_.emplace_back(name, t);
  return t;
}

std::vector<std::pair<std::string, Tensor>> Module::named_state() const {
  std::vector<std::pair<std::string, Tensor>> out = own_;
  for (const auto& [name, m] : children_)
    for (auto& [k, t] : m->named_state()) out.emplace_back(name + "." + k, t);
  return out;
}

std::map<std::string, Tensor> Module::get_state_dict() const {
  std::map<std::string, Tensor> out;
  for (auto& [k, t] : named_state()) out.emplace(k, t);
  return out;
}

std::vector<Tensor> Module::get_parameters() const {
  std::vector<Tensor> out;
  for (auto& [k, t] : named_state())
    if (t.requires_grad()) out.push_back(t);
  return out;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  const auto mine = named_state();
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& [k, t] : mine) {
    auto it = state.find(k);
    if (it == state.end())
      missing.push_back(k);
    else if (it->second.shape() != t.shape())
      mismatched.push_back(k + " (the module has " + shape_str(t.shape()) + ", the state " +
                           shape_str(it->second.shape()) + ")");
  }
  for (const auto& [k, t] : state) {
    bool known = false;
    for (const auto& [m, _] : mine) known = known || m == k;
    if (!known) unexpected.push_back(k);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  std::string why;
  if (!mismatched.empty()) why += " shape mismatch: " + list(mismatched) + ";";
  if (strict && !missing.empty()) why += " missing: " + list(missing) + ";";
  if (strict && !unexpected.empty()) why += " unexpected: " + list(unexpected) + ";";
  if (!why.empty()) throw Error("load_state_dict:" + why + " nothing was loaded");
  std::vector<Tensor> written;
  for (auto& [k, t] : mine)
    if (auto it = state.find(k); it != state.end()) {
      Tensor target = t; // a handle on the module's own state
      target.assign(it->second.to(target.device()).cast(target.dtype()).detach());
      written.push_back(target);
    }
  Tensor::realize_all(written);
}

// ---- layers -----------------------------------------------------------------------------

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias) {
  const double bound = 1 / std::sqrt(static_cast<double>(std::max<int64_t>(in_features, 1)));
  weight = param("weight", Tensor::uniform({out_features, in_features}, -bound, bound));
  if (has_bias) bias = param("bias", Tensor::uniform({out_features}, -bound, bound));
}

Tensor Linear::operator()(const Tensor& x) const { return x.linear(weight, bias); }

void Module::norm_state(int64_t n, bool affine, bool track, std::optional<Tensor>& weight,
                        std::optional<Tensor>& bias, std::optional<Tensor>& running_mean,
                        std::optional<Tensor>& running_var) {
  if (affine) {
    weight = param("weight", Tensor::ones({n}));
    bias = param("bias", Tensor::zeros({n}));
  }
  if (track) {
    running_mean = buffer("running_mean", Tensor::zeros({n}));
    running_var = buffer("running_var", Tensor::ones({n}));
  }
}

BatchNorm::BatchNorm(int64_t num_features, double eps_, double momentum_, bool affine,
                     bool track_running_stats)
    : eps(eps_), momentum(momentum_) {
  norm_state(num_features, affine, track_running_stats, weight, bias, running_mean, running_var);
  num_batches_tracked = buffer("num_batches_tracked", Tensor::zeros({}, dtypes::int64));
}

Tensor BatchNorm::operator()(const Tensor& x) const {
  const bool train = Tensor::training || !running_mean;
  if (Tensor::training && running_mean) {
    Tensor n = num_batches_tracked;
    n.assign(n + 1);
  }
  return x.batch_norm(running_mean, running_var, weight, bias, train, momentum, eps);
}

LayerNorm::LayerNorm(Shape shape, double eps_, bool affine)
    : normalized_shape(std::move(shape)), eps(eps_) {
  if (affine) {
    weight = param("weight", Tensor::ones(normalized_shape));
    bias = param("bias", Tensor::zeros(normalized_shape));
  }
}

Tensor LayerNorm::operator()(const Tensor& x) const {
  return x.layer_norm(normalized_shape, weight, bias, eps);
}

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim) {
  weight = param("weight", Tensor::normal({num_embeddings, embedding_dim}));
}

Tensor Embedding::operator()(const Tensor& indices) const {
  if (indices.dtype().is_float() || indices.dtype().is_bool())
    throw Error("Embedding: indices must be integers, got " + indices.dtype().name());
  Shape out = indices.shape();
  out.push_back(weight.shape()[1]);
  return weight.index_select(0, indices.flatten()).reshape(out);
}

} // namespace tg::nn
