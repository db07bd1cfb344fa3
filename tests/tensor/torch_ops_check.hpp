#pragma once
// A batch of forward checks for the torch_ops suites: every tensor is realized in one
// realize_all (one schedule for many checks), then compared with its host reference.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tensor/ref.hpp"

namespace tgt {

class CheckBatch {
public:
  // Adds a check of t against want (shape, dtype when given, every element within tol).
  void add(const Tensor& t, Arr want, Tol tol, std::string what, std::optional<DType> dt = {}) {
    items_.push_back({t, std::move(want), tol, std::move(what), dt});
  }
  // Exact comparison (integers, bools, indices).
  void exact(const Tensor& t, Arr want, std::string what, std::optional<DType> dt = {}) {
    add(t, std::move(want), {0, 0}, std::move(what), dt);
  }
  void run() {
    std::vector<Tensor> ts;
    for (Item& i : items_) ts.push_back(i.t);
    Tensor::realize_all(ts);
    for (Item& i : items_) check_close(i.t, i.want, i.tol, i.what, i.dt);
    items_.clear();
  }

private:
  struct Item {
    Tensor t;
    Arr want;
    Tol tol;
    std::string what;
    std::optional<DType> dt;
  };
  std::vector<Item> items_;
};

// A float32 tensor of the given values (1-D) and its host array.
inline std::pair<Tensor, Arr> f32(std::vector<double> v, Shape s = {}) {
  if (s.empty()) s = {static_cast<int64_t>(v.size())};
  Arr a{s, std::move(v)};
  Tensor t = to_tensor(a, tg::dtypes::float32);
  return {t, a};
}

} // namespace tgt
