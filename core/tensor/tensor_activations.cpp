// Activations and elementwise math, composed from the elementwise primitives
// as tinygrad's Tensor does, so they fuse into one kernel and autograd needs no rule of its own.
//
// Where a branch that `where` discards could overflow (exp of a large x in elu, softplus), its
// input is clamped first, so that no inf or nan appears even in the discarded branch (a
// gradient through `where` multiplies that branch by zero, and 0 * inf is nan).
#include <cmath>
#include <limits>
#include <numbers>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

// The float dtype a float-only op computes in: the tensor's own, else float32 (tinygrad).
Tensor as_float(const Tensor& t) { return t.cast(least_upper_float(t.dtype())); }

// c[0]*x^(n-1) + ... + c[n-1] by Horner's rule (tinygrad's polyN).
Tensor poly_n(const Tensor& x, std::initializer_list<double> coeffs) {
  auto it = coeffs.begin();
  Tensor acc = x.mul(0.0).add(*it++);
  for (; it != coeffs.end(); ++it) acc = acc.mul(x).add(*it);
  return acc;
}

// log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
Tensor softplus_stable(const Tensor& x) {
  return x.maximum(0.0).add(x.abs().neg().exp().add(1.0).log());
}

// The largest finite value of a float dtype.
double max_finite(DType d) {
  switch (d.scalar_type) {
  case ScalarType::Float16:
    return 65504.0;
  case ScalarType::BFloat16:
    return 3.3895313892515355e38;
  case ScalarType::Float32:
    return std::numeric_limits<float>::max();
  case ScalarType::FP8E4M3:
    return 448.0;
  case ScalarType::FP8E5M2:
    return 57344.0;
  default:
    return std::numeric_limits<double>::max();
  }
}

// The signed integer dtype of a float dtype's width (for reading its sign bit).
DType int_of_width(DType d) {
  switch (d.itemsize()) {
  case 1:
    return dtypes::int8;
  case 2:
    return dtypes::int16;
  case 4:
    return dtypes::int32;
  default:
    return dtypes::int64;
  }
}

} // namespace

// ---- activations ------------------------------------------------------------------------

Tensor Tensor::gelu(const std::string& approximate) const {
  Tensor x = as_float(*this);
  if (approximate == "none") return x.mul(0.5).mul(x.mul(1.0 / std::numbers::sqrt2).erf().add(1.0));
  if (approximate == "tanh") {
    // 0.5 x (1 + tanh(z)) = x sigmoid(2z): the same function, without 1 + tanh cancelling.
    const double c = std::sqrt(2.0 / std::numbers::pi);
    Tensor z = x.add(x.mul(x).mul(x).mul(0.044715)).mul(2.0 * c);
    return x.mul(z.sigmoid());
  }
  throw Error("gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
}
Tensor Tensor::silu() const {
  Tensor x = as_float(*this);
  return x.mul(x.sigmoid());
}
Tensor Tensor::quick_gelu() const {
  Tensor x = as_float(*this);
  return x.mul(x.mul(1.702).sigmoid());
}
Tensor Tensor::softplus(double beta, double threshold) const {
  if (beta == 0) throw Error("softplus: beta must be non-zero");
  Tensor x = as_float(*this);
  Tensor bx = x.mul(beta);
  return bx.gt(threshold).where(x, softplus_stable(bx).div(beta));
}
Tensor Tensor::mish() const {
  Tensor x = as_float(*this);
  return x.mul(x.softplus().tanh());
}
Tensor Tensor::elu(double alpha) const {
  Tensor x = as_float(*this);
  return x.gt(0.0).where(x, x.minimum(0.0).exp().sub(1.0).mul(alpha));
}
Tensor Tensor::celu(double alpha) const {
  if (alpha == 0) throw Error("celu: alpha must be non-zero (it divides the input)");
  Tensor x = as_float(*this);
  return x.gt(0.0).where(x, x.minimum(0.0).div(alpha).exp().sub(1.0).mul(alpha));
}
Tensor Tensor::selu() const {
  // The constants of Klambauer et al. as PyTorch writes them.
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  return elu(alpha).mul(scale);
}
Tensor Tensor::leaky_relu(double negative_slope) const {
  Tensor x = as_float(*this);
  return x.gt(0.0).where(x, x.mul(negative_slope));
}
Tensor Tensor::hardtanh(double min_val, double max_val) const {
  if (min_val > max_val)
    throw Error("hardtanh: min_val (" + std::to_string(min_val) + ") is greater than max_val (" +
                std::to_string(max_val) + ")");
  if (!dtype().is_float()) // PyTorch keeps integer dtypes; the bounds are truncated
    return clamp(Scalar(static_cast<int64_t>(std::ceil(min_val))),
                 Scalar(static_cast<int64_t>(std::floor(max_val))));
  return clamp(Scalar(min_val), Scalar(max_val));
}
Tensor Tensor::relu6() const { return hardtanh(0, 6); }
Tensor Tensor::hardsigmoid() const { return as_float(*this).add(3.0).relu6().div(6.0); }
Tensor Tensor::hardswish() const {
  Tensor x = as_float(*this);
  return x.mul(x.add(3.0).relu6()).div(6.0);
}
Tensor Tensor::softsign() const {
  Tensor x = as_float(*this);
  return x.div(x.abs().add(1.0));
}
Tensor Tensor::logsigmoid() const { return softplus_stable(as_float(*this).neg()).neg(); }

// ---- math -------------------------------------------------------------------------------

Tensor Tensor::erf() const {
  // Abramowitz and Stegun 7.1.26 (tinygrad's erf).
  Tensor x = as_float(*this);
  Tensor t = x.abs().mul(0.3275911).add(1.0).reciprocal();
  Tensor p = poly_n(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592});
  Tensor e = x.mul(x).neg().exp();
  return x.sign().mul(t.mul(p).mul(e).neg().add(1.0));
}
Tensor Tensor::tan() const {
  Tensor x = as_float(*this);
  return x.sin().div(x.cos());
}
Tensor Tensor::asin() const {
  // Abramowitz and Stegun 4.4.46 on |x| (tinygrad's asin); |x| > 1 gives nan from the sqrt.
  Tensor x = as_float(*this);
  Tensor a = x.abs();
  Tensor p = poly_n(a, {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046,
                        0.0889789874, -0.2145988016, 1.5707963050});
  Tensor r = a.neg().add(1.0).sqrt().mul(p).neg().add(std::numbers::pi / 2);
  return x.sign().mul(r);
}
Tensor Tensor::acos() const {
  Tensor x = as_float(*this);
  return x.asin().neg().add(std::numbers::pi / 2);
}
Tensor Tensor::atan() const {
  // tinygrad's atan(x) = asin(x / sqrt(1 + x^2)), on |x| <= 1 only: above, atan(x) =
  // sign(x) pi/2 - atan(1/x). Without that reduction x^2 overflows (x > 1.8e19 gives 0) and
  // the asin argument rounds to 1 (x = 1e4 is off by 1e-4).
  Tensor x = as_float(*this);
  Tensor big = x.abs().gt(1.0);
  Tensor r = big.where(big.where(x, 1.0).reciprocal(), x);
  Tensor base = r.div(r.mul(r).add(1.0).sqrt()).asin();
  return big.where(x.sign().mul(std::numbers::pi / 2).sub(base), base);
}
Tensor Tensor::sinh() const {
  Tensor x = as_float(*this);
  return x.exp().sub(x.neg().exp()).mul(0.5);
}
Tensor Tensor::cosh() const {
  Tensor x = as_float(*this);
  return x.exp().add(x.neg().exp()).mul(0.5);
}
Tensor Tensor::sign() const {
  // -1, 0 or 1 in the input's dtype; nan gives 0 as in PyTorch ((0 < x) - (x < 0); numpy and
  // tinygrad give nan), bool is returned unchanged.
  if (dtype().is_bool()) return *this;
  const Tensor r = gt(0).where(scalar_like(int64_t{1}),
                               lt(0).where(scalar_like(int64_t{-1}), scalar_like(int64_t{0})));
  if (!dtype().is_float()) return r;
  // The gradient is zero (PyTorch's), not missing: this tensor stays in the graph.
  return detail::with_gradient(r, {*this}, "sign", [](const Tensor&, const auto& in) {
    return std::vector<Tensor>{Tensor::zeros_like(in[0])};
  });
}
Tensor Tensor::isnan() const {
  if (!dtype().is_float()) return Tensor::zeros(shape(), dtypes::bool_, device());
  return ne(*this);
}
Tensor Tensor::isinf(bool detect_positive, bool detect_negative) const {
  if (!dtype().is_float() || (!detect_positive && !detect_negative))
    return Tensor::zeros(shape(), dtypes::bool_, device());
  const double inf = std::numeric_limits<double>::infinity();
  if (!detect_negative) return eq(inf);
  if (!detect_positive) return eq(-inf);
  return abs().eq(inf);
}
Tensor Tensor::isfinite() const {
  if (!dtype().is_float()) return Tensor::ones(shape(), dtypes::bool_, device());
  return isinf().logical_or(isnan()).logical_not();
}

Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  // PyTorch's two-sided form: exact at weight 0 and weight 1.
  const DType dt = least_upper_float(least_upper_dtype({dtype(), end.dtype(), weight.dtype()}));
  Tensor a = cast(dt), b = end.cast(dt), w = weight.cast(dt);
  Tensor diff = b.sub(a);
  return w.abs().lt(0.5).where(a.add(w.mul(diff)), b.sub(diff.mul(w.neg().add(1.0))));
}
Tensor Tensor::lerp(const Tensor& end, Scalar weight) const {
  const DType dt = least_upper_float(least_upper_dtype({dtype(), end.dtype()}));
  return lerp(end, Tensor::full({}, weight, dt, device()));
}

Tensor Tensor::logical_and(const Tensor& o) const {
  return cast(dtypes::bool_).bitwise_and(o.cast(dtypes::bool_));
}
Tensor Tensor::logical_or(const Tensor& o) const {
  return cast(dtypes::bool_).bitwise_or(o.cast(dtypes::bool_));
}
Tensor Tensor::logical_xor(const Tensor& o) const {
  return cast(dtypes::bool_).bitwise_xor(o.cast(dtypes::bool_));
}

Tensor Tensor::copysign(const Tensor& o) const {
  // x with the sign bit of `o` (so -0.0 and -nan count as negative, as PyTorch). Sign bits are
  // read through a bitcast, which only chooses a branch of `where`, so gradients flow through
  // x. |x| is x or -x by x's own sign bit: abs() (a max) would leave a nan's sign undefined.
  const DType dt = least_upper_float(least_upper_dtype({dtype(), o.dtype()}));
  auto sign_bit = [&](const Tensor& t) { return t.cast(dt).bitcast(int_of_width(dt)).lt(0); };
  Tensor x = cast(dt), y = o.cast(dt);
  Tensor mag = sign_bit(x).where(x.neg(), x);
  const Tensor r = sign_bit(y).where(mag.neg(), mag);
  // PyTorch's gradients: result / x for x (0 where x is 0), zero for the sign's source.
  return detail::with_gradient(
      r, {x.expand(r.shape()), y.expand(r.shape()), r}, "copysign",
      [](const Tensor& g, const auto& in) {
        const Tensor &xi = in[0], &ri = in[2];
        const Tensor ratio = xi.eq(0.0).where(0.0, ri.div(xi));
        return std::vector<Tensor>{g.mul(ratio), Tensor::zeros_like(in[1]), Tensor()};
      });
}
Tensor Tensor::copysign(Scalar o) const { return copysign(as_float(*this).scalar_like(o)); }

Tensor Tensor::nan_to_num(double nan, std::optional<double> posinf,
                          std::optional<double> neginf) const {
  if (!dtype().is_float()) return *this;
  const double big = max_finite(dtype());
  const double inf = std::numeric_limits<double>::infinity();
  Tensor r = isnan().where(scalar_like(nan), *this);
  r = eq(inf).where(scalar_like(posinf.value_or(big)), r);
  return eq(-inf).where(scalar_like(neginf.value_or(-big)), r);
}

} // namespace tg
