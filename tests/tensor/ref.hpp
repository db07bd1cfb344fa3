#pragma once
// Plain C++ references for the Tensor op tests: a host array (shape + doubles in row-major
// order) with the movement ops as loops over multi-indices, elementwise maps with numpy
// broadcasting, reductions, and a comparison against a tensor with a per-dtype tolerance.
//
// Tolerances (|got - want| <= atol + rtol * |want|), the reference computed in double from the
// inputs as the dtype stores them:
//   float32   atol 1e-5, rtol 1e-5
//   float16   atol 1e-3, rtol 2e-3   (2 ulp of a 10-bit mantissa)
//   bfloat16  atol 1e-2, rtol 1.6e-2 (2 ulp of a 7-bit mantissa)
//   integers and bool: exact.
// Ops built from exp2/log2/sin (exp, exp2, log, log2, sigmoid, tanh, sin, cos, pow) get 4x the
// float tolerance and rsqrt 2x, as each is a few rounded steps; sums, means and matmuls of up to
// 60 terms 4x, products 8x; long float32 reductions (20000 to 100000 terms) rtol 1e-4 with
// atol 1e-3 (K=4096 matmul) or 1e-2 (sums of 20000 values in [-1, 1]).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/float_formats.hpp"
#include "tg/tensor.hpp"

namespace tgt {

using tg::DType;
using tg::Shape;
using tg::Tensor;
namespace dtypes = tg::dtypes;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = s[k] ? i % s[k] : 0;
    i = s[k] ? i / s[k] : 0;
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t k = 0; k < s.size(); ++k) i = i * s[k] + idx[k];
  return i;
}

// Python's slice over one axis of size n: the source positions it picks.
inline std::vector<int64_t> py_slice_positions(int64_t n, std::optional<int64_t> start,
                                               std::optional<int64_t> stop, int64_t step) {
  auto norm = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    return std::clamp(*v < 0 ? *v + n : *v, lo, hi);
  };
  std::vector<int64_t> out;
  if (step > 0) {
    for (int64_t i = norm(start, 0, 0, n); i < norm(stop, n, 0, n); i += step) out.push_back(i);
  } else {
    for (int64_t i = norm(start, n - 1, -1, n - 1); i > norm(stop, -1, -1, n - 1); i += step)
      out.push_back(i);
  }
  return out;
}

// The message of the tg::Error that f() raises, or "(no error)".
template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// True when `part` occurs in message `s` (which the check prints when it fails).
inline bool has(const std::string& s, const std::string& part) {
  INFO(s);
  return s.find(part) != std::string::npos;
}

struct Arr {
  Shape shape;
  std::vector<double> v;
  double at(const std::vector<int64_t>& idx) const {
    return v[static_cast<size_t>(ravel(idx, shape))];
  }
};

// ---- what a dtype stores ------------------------------------------------------------------

inline double store(DType d, double x) {
  using tg::ScalarType;
  switch (d.scalar_type) {
  case ScalarType::Bool:
    return x != 0 ? 1 : 0;
  case ScalarType::Int8:
    return static_cast<int8_t>(static_cast<int64_t>(x));
  case ScalarType::UInt8:
    return static_cast<uint8_t>(static_cast<int64_t>(x));
  case ScalarType::Int16:
    return static_cast<int16_t>(static_cast<int64_t>(x));
  case ScalarType::UInt16:
    return static_cast<uint16_t>(static_cast<int64_t>(x));
  case ScalarType::Int32:
    return static_cast<int32_t>(static_cast<int64_t>(x));
  case ScalarType::UInt32:
    return static_cast<uint32_t>(static_cast<int64_t>(x));
  case ScalarType::Int64:
    return static_cast<double>(static_cast<int64_t>(x));
  case ScalarType::Float16:
    return tg::half_to_float(tg::float_to_half(x));
  case ScalarType::BFloat16:
    return tg::bf16_to_float(tg::float_to_bf16(x));
  case ScalarType::Float32:
    return static_cast<float>(x);
  default:
    return x;
  }
}

inline void encode(DType d, double x, uint8_t* p) {
  using tg::ScalarType;
  auto put = [p]<class T>(T v) { std::memcpy(p, &v, sizeof v); };
  switch (d.scalar_type) {
  case ScalarType::Bool:
    *p = x != 0;
    break;
  case ScalarType::Int8:
    put(static_cast<int8_t>(static_cast<int64_t>(x)));
    break;
  case ScalarType::UInt8:
    put(static_cast<uint8_t>(static_cast<int64_t>(x)));
    break;
  case ScalarType::Int16:
    put(static_cast<int16_t>(static_cast<int64_t>(x)));
    break;
  case ScalarType::UInt16:
    put(static_cast<uint16_t>(static_cast<int64_t>(x)));
    break;
  case ScalarType::Int32:
    put(static_cast<int32_t>(static_cast<int64_t>(x)));
    break;
  case ScalarType::UInt32:
    put(static_cast<uint32_t>(static_cast<int64_t>(x)));
    break;
  case ScalarType::Int64:
    put(static_cast<int64_t>(x));
    break;
  case ScalarType::Float16:
    put(tg::float_to_half(x));
    break;
  case ScalarType::BFloat16:
    put(tg::float_to_bf16(x));
    break;
  case ScalarType::Float32:
    put(static_cast<float>(x));
    break;
  default:
    put(x);
    break;
  }
}

// A realized tensor (default device) holding `a` stored as `d`; `a` is rounded to what `d` holds.
inline Tensor to_tensor(Arr& a, DType d, const std::string& device = "") {
  std::vector<uint8_t> bytes(a.v.size() * static_cast<size_t>(d.itemsize()));
  for (size_t i = 0; i < a.v.size(); ++i) {
    a.v[i] = store(d, a.v[i]);
    encode(d, a.v[i], bytes.data() + i * static_cast<size_t>(d.itemsize()));
  }
  return Tensor::from_bytes(bytes.data(), bytes.size(), a.shape, d, device);
}

inline Arr from_tensor(const Tensor& t) { return {t.shape(), t.to_vector<double>()}; }

// Random values in [lo, hi] (integers for integer dtypes), deterministic per `seed`.
inline Arr random_arr(const Shape& s, double lo, double hi, DType d, uint32_t seed) {
  std::mt19937 g(seed);
  Arr a{s, std::vector<double>(static_cast<size_t>(numel(s)))};
  for (double& x : a.v) {
    if (d.is_float()) {
      x = std::uniform_real_distribution<double>(lo, hi)(g);
    } else if (d.is_bool()) {
      x = static_cast<double>(g() & 1);
    } else {
      x = static_cast<double>(std::uniform_int_distribution<int64_t>(static_cast<int64_t>(lo),
                                                                     static_cast<int64_t>(hi))(g));
    }
  }
  return a;
}

// ---- movement ops as loops ----------------------------------------------------------------

inline Arr reshape(Arr a, const Shape& s) {
  a.shape = s;
  return a;
}

inline Arr generate(const Shape& s, const std::function<double(const std::vector<int64_t>&)>& f) {
  Arr r{s, std::vector<double>(static_cast<size_t>(numel(s)))};
  for (int64_t i = 0; i < numel(s); ++i) r.v[static_cast<size_t>(i)] = f(unravel(i, s));
  return r;
}

inline Arr permute(const Arr& a, const Shape& order) {
  Shape s;
  for (int64_t o : order) s.push_back(a.shape[static_cast<size_t>(o)]);
  return generate(s, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t k = 0; k < order.size(); ++k) src[static_cast<size_t>(order[k])] = idx[k];
    return a.at(src);
  });
}

inline Arr flip(const Arr& a, const std::vector<int64_t>& axes) {
  return generate(a.shape, [&](std::vector<int64_t> idx) {
    for (int64_t ax : axes) {
      const auto k = static_cast<size_t>(ax < 0 ? ax + static_cast<int64_t>(a.shape.size()) : ax);
      idx[k] = a.shape[k] - 1 - idx[k];
    }
    return a.at(idx);
  });
}

inline Arr pad(const Arr& a, const Pairs& p, double value = 0) {
  Shape s = a.shape;
  for (size_t k = 0; k < s.size(); ++k) s[k] += p[k].first + p[k].second;
  return generate(s, [&](std::vector<int64_t> idx) {
    for (size_t k = 0; k < idx.size(); ++k) {
      idx[k] -= p[k].first;
      if (idx[k] < 0 || idx[k] >= a.shape[k]) return value;
    }
    return a.at(idx);
  });
}

inline Arr shrink(const Arr& a, const Pairs& r) {
  Shape s;
  for (const auto& [b, e] : r) s.push_back(e - b);
  return generate(s, [&](std::vector<int64_t> idx) {
    for (size_t k = 0; k < idx.size(); ++k) idx[k] += r[k].first;
    return a.at(idx);
  });
}

// Same rank; size-1 axes stretched.
inline Arr expand(const Arr& a, const Shape& s) {
  return generate(s, [&](std::vector<int64_t> idx) {
    for (size_t k = 0; k < idx.size(); ++k)
      if (a.shape[k] == 1) idx[k] = 0;
    return a.at(idx);
  });
}

// ---- elementwise with numpy broadcasting --------------------------------------------------

inline Shape broadcast(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape s(n, 1);
  for (size_t k = 0; k < n; ++k) {
    const int64_t x = k + a.size() >= n ? int64_t{a[k + a.size() - n]} : 1;
    const int64_t y = k + b.size() >= n ? int64_t{b[k + b.size() - n]} : 1;
    s[k] = x == 1 ? y : x;
  }
  return s;
}

inline double at_broadcast(const Arr& a, const std::vector<int64_t>& idx) {
  std::vector<int64_t> src(a.shape.size());
  const size_t off = idx.size() - a.shape.size();
  for (size_t k = 0; k < a.shape.size(); ++k) src[k] = a.shape[k] == 1 ? 0 : idx[k + off];
  return a.at(src);
}

inline Arr map(const Arr& a, const std::function<double(double)>& f) {
  Arr r = a;
  for (double& x : r.v) x = f(x);
  return r;
}

inline Arr zip(const Arr& a, const Arr& b, const std::function<double(double, double)>& f) {
  return generate(broadcast(a.shape, b.shape), [&](const std::vector<int64_t>& idx) {
    return f(at_broadcast(a, idx), at_broadcast(b, idx));
  });
}

// Reduce `axes` (non-negative, any order) with `f` from `init`.
inline Arr reduce(const Arr& a, const std::vector<int64_t>& axes, bool keepdim, double init,
                  const std::function<double(double, double)>& f) {
  Shape kept = a.shape;
  for (int64_t ax : axes) kept[static_cast<size_t>(ax)] = 1;
  Arr r{kept, std::vector<double>(static_cast<size_t>(numel(kept)), init)};
  for (int64_t i = 0; i < numel(a.shape); ++i) {
    std::vector<int64_t> idx = unravel(i, a.shape);
    for (int64_t ax : axes) idx[static_cast<size_t>(ax)] = 0;
    double& acc = r.v[static_cast<size_t>(ravel(idx, kept))];
    acc = f(acc, a.v[static_cast<size_t>(i)]);
  }
  if (!keepdim) {
    Shape s;
    for (size_t k = 0; k < a.shape.size(); ++k)
      if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(k)) == axes.end())
        s.push_back(a.shape[k]);
    r.shape = s;
  }
  return r;
}

// ---- comparing --------------------------------------------------------------------------

struct Tol {
  double atol = 0, rtol = 0;
};

inline Tol tol_for(DType d, double scale = 1) {
  using tg::ScalarType;
  switch (d.scalar_type) {
  case ScalarType::Float32:
    return {1e-5 * scale, 1e-5 * scale};
  case ScalarType::Float16:
    return {1e-3 * scale, 2e-3 * scale};
  case ScalarType::BFloat16:
    return {1e-2 * scale, 1.6e-2 * scale};
  case ScalarType::Float64:
    return {1e-12 * scale, 1e-12 * scale};
  default:
    return {0, 0};
  }
}

inline std::string shape_s(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

// Checks shape, dtype (when given) and every element; reports the first few mismatches.
inline bool check_close(const Tensor& t, const Arr& want, Tol tol, const std::string& what,
                        std::optional<DType> dtype = {}) {
  INFO(what);
  if (dtype)
    CHECK_MESSAGE(t.dtype() == *dtype, "dtype " << t.dtype().name() << " != " << dtype->name());
  if (t.shape() != want.shape) {
    FAIL_CHECK("shape " << shape_s(t.shape()) << " != " << shape_s(want.shape));
    return false;
  }
  const std::vector<double> got = t.to_vector<double>();
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want.v[i];
    bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
              std::abs(g - w) <= tol.atol + tol.rtol * std::abs(w);
    if (!ok && ++bad <= 4)
      FAIL_CHECK("at " << shape_s(unravel(static_cast<int64_t>(i), want.shape)) << ": got " << g
                       << ", want " << w);
  }
  if (bad > 4) FAIL_CHECK(bad << " elements differ in all");
  return bad == 0;
}

// ---- views: the same logical 2-D input reached through different movement ops ------------

// Builds an input of `shape` (2-D) as `name` says: "contiguous", "permuted", "flipped",
// "padded", "shrunk" or "expanded"; returns the tensor and its host values.
inline std::pair<Tensor, Arr> view_input(const std::string& name, const Shape& shape, DType d,
                                         double lo, double hi, uint32_t seed) {
  const int64_t r = shape[0], c = shape[1];
  auto base = [&](const Shape& s) { return random_arr(s, lo, hi, d, seed); };
  if (name == "permuted") {
    Arr a = base({c, r});
    Tensor t = to_tensor(a, d);
    return {t.permute({1, 0}), permute(a, {1, 0})};
  }
  if (name == "flipped") {
    Arr a = base(shape);
    Tensor t = to_tensor(a, d);
    return {t.flip({0, 1}), flip(a, {0, 1})};
  }
  if (name == "padded") { // pad value is a valid input (lo)
    Arr a = base({r - 1, c - 2});
    Tensor t = to_tensor(a, d);
    const Pairs p{{1, 0}, {1, 1}};
    return {t.pad(p, tg::Scalar(d.is_float() ? lo : static_cast<int64_t>(lo))),
            pad(a, p, store(d, lo))};
  }
  if (name == "shrunk") {
    Arr a = base({r + 2, c + 3});
    Tensor t = to_tensor(a, d);
    const Pairs p{{1, r + 1}, {2, c + 2}};
    return {t.shrink(p), shrink(a, p)};
  }
  if (name == "expanded") {
    Arr a = base({r, 1});
    Tensor t = to_tensor(a, d);
    return {t.expand({r, c}), expand(a, {r, c})};
  }
  Arr a = base(shape);
  return {to_tensor(a, d), a};
}

inline const std::vector<std::string>& view_names() {
  static const std::vector<std::string> v{"contiguous", "permuted", "flipped",
                                          "padded",     "shrunk",   "expanded"};
  return v;
}

} // namespace tgt
