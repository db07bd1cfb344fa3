// Elementwise math PyTorch has and tinygrad does not (log1p, expm1, erfc, erfinv, lgamma,
// atan2, fmod, hypot, ...), composed from the elementwise primitives so they fuse into one
// kernel and autograd needs no rule of its own.
//
// Where `where` discards a branch that would be inf or nan (a division by zero, the log of
// zero), that branch's input is replaced by a harmless value first: the gradient of `where`
// multiplies the discarded branch by zero, and 0 * inf is nan.
#include <cmath>
#include <limits>
#include <numbers>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The float dtype a float-only op computes in: the tensor's own, else float32 (tinygrad).
Tensor as_float(const Tensor& t) { return t.cast(least_upper_float(t.dtype())); }

// The polynomial and series approximations below have large intermediate terms: half floats
// evaluate them in float32 and round the result once.
Tensor compute_dtype(const Tensor& t) {
  const DType d = least_upper_float(t.dtype());
  return t.cast(d.itemsize() < 4 ? dtypes::float32 : d);
}
Tensor back_to(const Tensor& r, const Tensor& input) {
  return r.cast(least_upper_float(input.dtype()));
}

// Both operands in their promoted float dtype.
std::pair<Tensor, Tensor> as_float_pair(const Tensor& a, const Tensor& b) {
  const DType dt = least_upper_float(least_upper_dtype({a.dtype(), b.dtype()}));
  return {a.cast(dt), b.cast(dt)};
}

// c[0]*x^(n-1) + ... + c[n-1] by Horner's rule.
Tensor poly_n(const Tensor& x, std::initializer_list<double> coeffs) {
  auto it = coeffs.begin();
  Tensor acc = x.mul(0.0).add(*it++);
  for (; it != coeffs.end(); ++it) acc = acc.mul(x).add(*it);
  return acc;
}

// True where the sign bit of x is set (-0.0 and negative numbers).
Tensor sign_bit(const Tensor& x) { return x.scalar_like(1.0).copysign(x).lt(0.0); }

// x where keep is true, else `safe` (a value the discarded branch can take without inf/nan).
Tensor safe(const Tensor& keep, const Tensor& x, double safe_value) {
  return keep.where(x, safe_value);
}

// log|Gamma(x)| for x >= 0.5 by Lanczos' series (g = 7, 9 terms; Numerical Recipes' and
// Boost's coefficients), |relative error| about 1e-15.
Tensor lanczos_lgamma(const Tensor& x) {
  static constexpr double c[] = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  Tensor z = x.sub(1.0);
  Tensor a = z.mul(0.0).add(c[0]);
  for (int i = 1; i < 9; ++i) a = a.add(z.add(static_cast<double>(i)).reciprocal().mul(c[i]));
  Tensor t = z.add(7.5);
  return z.add(0.5).mul(t.log()).sub(t).add(0.5 * std::log(2 * std::numbers::pi)).add(a.log());
}

} // namespace

Tensor Tensor::log1p() const {
  // Goldberg: with u = fl(1 + x), log(u) * x / (u - 1) is exact to rounding, since the error
  // of forming u cancels; where u == 1, log1p(x) = x to rounding.
  Tensor x = as_float(*this);
  Tensor u = x.add(1.0);
  Tensor d = u.sub(1.0);
  Tensor big = u.eq(kInf);
  Tensor ok = d.ne(0.0).bitwise_and(big.logical_not());
  Tensor r = safe(ok, u, 2.0).log().mul(x).div(safe(ok, d, 1.0));
  return big.where(u, ok.where(r, x));
}

Tensor Tensor::expm1() const {
  // Kahan: with u = fl(exp(x)), (u - 1) * x / log(u) corrects the rounding of u, where |x| < 1
  // (u - 1 cancels there); where u == 1 it is x to rounding. Elsewhere u - 1 is accurate as it
  // is (and gives inf and -1 at the ends).
  Tensor x = as_float(*this);
  Tensor u = x.exp();
  Tensor near = x.abs().lt(1.0).bitwise_and(u.ne(1.0));
  Tensor r = u.sub(1.0).mul(x).div(safe(near, u, 2.0).log());
  return near.where(r, u.eq(1.0).where(x, u.sub(1.0)));
}

Tensor Tensor::erfc() const {
  // Numerical Recipes' erfcc (a Chebyshev fit): fractional error below 1.2e-7 for every x, so
  // the tail keeps its relative precision where 1 - erf(x) would round to 0.
  Tensor x = compute_dtype(*this);
  Tensor z = x.abs();
  Tensor t = z.mul(0.5).add(1.0).reciprocal();
  Tensor p = poly_n(t, {0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
                        0.09678418, 0.37409196, 1.00002368, -1.26551223});
  Tensor ans = t.mul(z.mul(z).neg().add(p).exp());
  return back_to(x.ge(0.0).where(ans, ans.neg().add(2.0)), *this);
}

Tensor Tensor::erfinv() const {
  // M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), the single
  // precision version: w = -log(1 - x^2), one polynomial for w < 5 and one in sqrt(w) after.
  Tensor x = compute_dtype(*this);
  Tensor w = x.neg().add(1.0).mul(x.add(1.0)).log().neg();
  Tensor small = w.lt(5.0);
  Tensor ws = safe(small, w, 0.0).sub(2.5);
  Tensor p1 = poly_n(ws, {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                          0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
  Tensor wl = safe(small.logical_not().bitwise_and(w.ne(kInf)), w, 25.0).sqrt().sub(3.0);
  Tensor p2 = poly_n(wl, {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                          0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
  Tensor r = small.where(p1, p2).mul(x);
  // |x| == 1: +-inf; |x| > 1 or nan: nan (w is nan there, from the log of a negative number).
  Tensor ends = x.abs().eq(1.0);
  return back_to(ends.where(x.scalar_like(kInf).copysign(x),
                            w.isnan().where(scalar_like(kNaN).cast(x.dtype()), r)),
                 *this);
}

Tensor Tensor::lgamma() const {
  // x >= 0.5: Lanczos. x < 0.5: the reflection log|Gamma(x)| = log(pi / |sin(pi x)|) -
  // log|Gamma(1 - x)|. Poles (0, -1, ...) and +-inf give inf, as PyTorch.
  Tensor x = compute_dtype(*this);
  Tensor right = x.ge(0.5);
  Tensor xr = safe(right.bitwise_and(x.ne(kInf)), x, 1.0);
  Tensor xl = safe(right.logical_not().bitwise_and(x.ne(-kInf)), x, 0.25);
  Tensor sin_pi = xl.sub(xl.floor()).mul(std::numbers::pi).sin(); // sin(pi frac(x)): |.| same
  Tensor pole = sin_pi.eq(0.0);
  Tensor refl = safe(pole.logical_not(), sin_pi.abs(), 1.0)
                    .reciprocal()
                    .mul(std::numbers::pi)
                    .log()
                    .sub(lanczos_lgamma(xl.neg().add(1.0)));
  Tensor r = right.where(lanczos_lgamma(xr), pole.where(scalar_like(kInf).cast(x.dtype()), refl));
  return back_to(x.abs().eq(kInf).where(scalar_like(kInf).cast(x.dtype()), r), *this);
}

Tensor Tensor::log10() const { return as_float(*this).log2().mul(std::log10(2.0)); }

Tensor Tensor::asinh() const {
  // Odd: sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), accurate near 0; above 2^28 the
  // square overflows sooner than it matters: log(|x|) + log(2).
  Tensor x = compute_dtype(*this);
  Tensor a = x.abs();
  Tensor huge = a.gt(268435456.0);
  Tensor as = safe(huge.logical_not(), a, 1.0);
  Tensor sq = as.mul(as);
  Tensor small = as.add(sq.div(sq.add(1.0).sqrt().add(1.0))).log1p();
  Tensor big = safe(huge, a, 1.0).log().add(std::numbers::ln2);
  Tensor mag = huge.where(big, small);
  return back_to(sign_bit(x).where(mag.neg(), mag), *this);
}

Tensor Tensor::atanh() const {
  // 0.5 * log1p(2x / (1 - x)): exact near 0; +-1 give +-inf, |x| > 1 nan. The gradient is
  // PyTorch's 1 / (1 - x^2), finite (not nan) where |x| > 1.
  Tensor x = as_float(*this);
  const Tensor r = x.mul(2.0).div(x.neg().add(1.0)).log1p().mul(0.5);
  return detail::with_gradient(r, {x}, "atanh", [](const Tensor& g, const auto& in) {
    return std::vector<Tensor>{g.div(in[0].mul(in[0]).neg().add(1.0))};
  });
}

Tensor Tensor::acosh() const {
  // log1p(t + sqrt(t * (t + 2))) with t = x - 1: accurate near 1 (where log(x + sqrt(x^2 - 1))
  // cancels); above 2^28 the product overflows sooner than it matters: log(x) + log(2). Below 1
  // the root or the log1p is nan.
  Tensor x = compute_dtype(*this);
  Tensor huge = x.gt(268435456.0);
  Tensor t = safe(huge.logical_not(), x, 1.0).sub(1.0);
  Tensor small = t.add(t.mul(t.add(2.0)).sqrt()).log1p();
  Tensor big = safe(huge, x, 1.0).log().add(std::numbers::ln2);
  // The gradient is PyTorch's 1 / sqrt(x^2 - 1), finite (not nan) below -1.
  const Tensor r = detail::with_gradient(
      huge.where(big, small), {x}, "acosh", [](const Tensor& g, const auto& in) {
        return std::vector<Tensor>{g.div(in[0].mul(in[0]).sub(1.0).sqrt())};
      });
  return back_to(r, *this);
}

Tensor Tensor::frac() const {
  if (!dtype().is_float())
    throw Error("frac: only float tensors have a fractional part, got " + dtype().name());
  return sub(trunc());
}

Tensor Tensor::logit(std::optional<double> eps) const {
  Tensor x = as_float(*this);
  if (eps) x = x.clamp(Scalar(*eps), Scalar(1.0 - *eps));
  return x.div(x.neg().add(1.0)).log();
}

Tensor Tensor::atan2(const Tensor& other) const {
  // atan(y / x), plus +-pi (the sign of y) where x's sign bit is set. y / x is nan only for
  // (0, 0) and (inf, inf): there the ratio is replaced by +-0 and +-1 (PyTorch's and C's
  // values: atan2(+-0, -0) = +-pi, atan2(inf, -inf) = 3pi/4).
  auto [y, x] = as_float_pair(*this, other);
  Tensor zeros = y.eq(0.0).bitwise_and(x.eq(0.0));
  Tensor infs = y.abs().eq(kInf).bitwise_and(x.abs().eq(kInf));
  Tensor plain = zeros.bitwise_or(infs).logical_not();
  Tensor ratio = safe(plain, y, 1.0).div(safe(plain, x, 1.0));
  Tensor unit = x.scalar_like(1.0).copysign(y).mul(x.scalar_like(1.0).copysign(x));
  Tensor t = zeros.where(y, infs.where(unit, ratio));
  Tensor base = t.atan();
  return sign_bit(x).where(base.add(x.scalar_like(std::numbers::pi).copysign(y)), base);
}

Tensor Tensor::fmod(const Tensor& other) const {
  // Python's remainder has the divisor's sign; C's the dividend's: where they differ (and the
  // remainder is not 0) take r - b. Integers: a - trunc(a / b) * b.
  const DType dt = least_upper_dtype({dtype(), other.dtype()});
  if (dt.is_bool()) throw Error("fmod: not defined for bool tensors");
  Tensor a = cast(dt), b = other.cast(dt);
  if (!dt.is_float()) return a.sub(a.div_trunc(b).mul(b));
  Tensor r = a.mod(b);
  Tensor fix = r.ne(0.0).bitwise_and(r.lt(0.0).ne(a.lt(0.0)));
  r = fix.where(r.sub(b), r);
  // A finite dividend by an infinite divisor is the dividend (C); mod gives nan there.
  return b.abs().eq(kInf).bitwise_and(a.isfinite()).where(a, r);
}
Tensor Tensor::fmod(Scalar other) const { return fmod(scalar_like(other)); }

Tensor Tensor::logaddexp(const Tensor& other) const {
  // max + log1p(exp(-|a - b|)); equal arguments (also both inf or both -inf) give
  // (a + b) / 2 + log 2, so each still gets half the gradient.
  auto [a, b] = as_float_pair(*this, other);
  Tensor same = a.eq(b);
  Tensor d = safe(same.logical_not(), a.sub(b).abs(), 1.0);
  Tensor r = a.maximum(b).add(d.neg().exp().log1p());
  return same.where(a.add(b).mul(0.5).add(std::numbers::ln2), r);
}

Tensor Tensor::hypot(const Tensor& other) const {
  // m * sqrt(1 + (n / m)^2) with m = max(|a|, |b|), n the other: no overflow or underflow in
  // the square. An infinite side gives inf even with a nan on the other (C's rule).
  auto [a, b] = as_float_pair(*this, other);
  Tensor aa = a.abs(), ab = b.abs();
  Tensor m = aa.maximum(ab), n = aa.minimum(ab);
  Tensor nz = m.ne(0.0).bitwise_and(m.ne(kInf));
  Tensor q = safe(nz, n, 0.0).div(safe(nz, m, 1.0));
  Tensor r = m.mul(q.mul(q).add(1.0).sqrt());
  Tensor any_inf = aa.eq(kInf).bitwise_or(ab.eq(kInf));
  return any_inf.where(a.scalar_like(kInf), m.eq(0.0).where(m, r));
}

Tensor Tensor::xlogy(const Tensor& other) const {
  auto [x, y] = as_float_pair(*this, other);
  Tensor zero = x.eq(0.0).bitwise_and(y.isnan().logical_not());
  Tensor r = x.mul(safe(zero.logical_not(), y, 1.0).log());
  return zero.where(x.scalar_like(0.0), r);
}
Tensor Tensor::xlogy(Scalar other) const { return xlogy(as_float(*this).scalar_like(other)); }

Tensor Tensor::clamp(const OptTensor& min, const OptTensor& max) const {
  if (!min && !max) throw Error("clamp: at least one of min and max must be given");
  std::vector<DType> ds{dtype()};
  if (min) ds.push_back(min->dtype());
  if (max) ds.push_back(max->dtype());
  const DType dt = least_upper_dtype(std::span<const DType>(ds.data(), ds.size()));
  Tensor r = cast(dt);
  // The comparison also selects a nan bound (x < nan is false, nan != nan is true).
  if (min) {
    Tensor lo = min->cast(dt);
    r = r.lt(lo).bitwise_or(lo.ne(lo)).where(lo, r);
  }
  if (max) {
    Tensor hi = max->cast(dt);
    r = r.gt(hi).bitwise_or(hi.ne(hi)).where(hi, r);
  }
  return r;
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  if (rtol < 0 || atol < 0)
    throw Error("isclose: rtol and atol must be non-negative, got rtol " + std::to_string(rtol) +
                " and atol " + std::to_string(atol));
  const DType dt = least_upper_dtype({dtype(), other.dtype()});
  Tensor a = cast(dt), b = other.cast(dt);
  Tensor eq = a.eq(b);
  if (!dt.is_float() && !dt.is_bool()) {
    // Integers: exact equality or the tolerance computed in float64 (no wrap in a - b).
    Tensor fa = a.cast(dtypes::float64), fb = b.cast(dtypes::float64);
    return eq.bitwise_or(fa.sub(fb).abs().le(fb.abs().mul(rtol).add(atol)));
  }
  if (dt.is_bool()) return eq;
  // Infinities are close only to themselves (via eq): the tolerance would be inf there.
  Tensor within = a.sub(b).abs().le(b.abs().mul(rtol).add(atol));
  Tensor close = eq.bitwise_or(within.bitwise_and(a.isfinite()).bitwise_and(b.isfinite()));
  if (equal_nan) close = close.bitwise_or(a.isnan().bitwise_and(b.isnan()));
  return close;
}

bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return isclose(other, rtol, atol, equal_nan).all().item<bool>();
}

} // namespace tg
