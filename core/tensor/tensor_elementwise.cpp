// Elementwise Tensor ops: broadcasting, dtype promotion, and the derived math ops built from
// the ALU ops renderers have (as tinygrad's Tensor does: exp is exp2 scaled, sigmoid from exp2).
#include <cmath>
#include <numbers>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using detail::make;

// Numpy broadcasting: shapes aligned at the right, each pair of sizes equal or one of them 1.
Shape broadcast_shape(const std::vector<const Tensor*>& ts, const char* op) {
  size_t nd = 0;
  for (const Tensor* t : ts) nd = std::max(nd, t->shape().size());
  Shape out(nd, 1);
  for (const Tensor* t : ts) {
    const Shape& s = t->shape();
    for (size_t i = 0; i < s.size(); ++i) {
      sint& o = out[nd - s.size() + i];
      if (o == s[i] || s[i] == 1) continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      std::string shapes;
      for (const Tensor* x : ts) shapes += (shapes.empty() ? "" : " and ") + shape_str(x->shape());
      throw Error(std::string(op) + ": cannot broadcast shapes " + shapes + ": size " + o.str() +
                  " and size " + s[i].str() + " differ at axis " + std::to_string(i - s.size()) +
                  " (counting from the end) and neither is 1");
    }
  }
  return out;
}

Tensor expand_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  Shape padded(shape.size() - t.shape().size(), 1);
  padded.insert(padded.end(), t.shape().begin(), t.shape().end());
  return t.reshape(padded).expand(shape);
}

void same_device(const std::vector<const Tensor*>& ts, const char* op) {
  const std::string d = ts[0]->device();
  for (const Tensor* t : ts)
    if (t->device() != d)
      throw Error(std::string(op) + ": tensors are on different devices (" + d + " and " +
                  t->device() + "); move one with .to(device) first");
}

// Sources cast to one dtype (`dt`, or their least upper dtype) and broadcast to one shape.
std::vector<Tensor> prepare(std::vector<const Tensor*> ts, const char* op,
                            std::optional<DType> dt = {}) {
  same_device(ts, op);
  if (!dt) {
    std::vector<DType> ds;
    for (const Tensor* t : ts) ds.push_back(t->dtype());
    dt = least_upper_dtype(ds);
  }
  const Shape shape = broadcast_shape(ts, op);
  std::vector<Tensor> out;
  for (const Tensor* t : ts) out.push_back(expand_to(t->cast(*dt), shape));
  return out;
}

Tensor alu(Ops op, const std::vector<Tensor>& src, std::optional<DType> out = {}) {
  std::vector<UOpPtr> s;
  std::vector<const Tensor*> parents;
  for (const Tensor& t : src) {
    s.push_back(t.uop());
    parents.push_back(&t);
  }
  return make(UOp::make(op, out.value_or(src[0].dtype()), std::move(s)), parents);
}

Tensor binary(Ops op, const Tensor& a, const Tensor& b, const char* name) {
  return alu(op, prepare({&a, &b}, name));
}

Tensor compare(Ops op, const Tensor& a, const Tensor& b, const char* name) {
  return alu(op, prepare({&a, &b}, name), dtypes::bool_);
}

Tensor as_float(const Tensor& t) { return t.cast(least_upper_float(t.dtype())); }

// A transcendental of a narrow float (half, bfloat16, fp8) computed in float32 and rounded
// once, as PyTorch does on the CPU: exp = exp2(x / ln2) and log = log2(x) * ln2 would round
// the scaling in the narrow type too (up to 6 ulp in half).
template <typename F> Tensor in_float32(const Tensor& t, F f) {
  const Tensor x = as_float(t);
  if (x.dtype().itemsize() >= 4) return f(x);
  return f(x.cast(dtypes::float32)).cast(x.dtype());
}

// Integer powers by square-and-multiply, wrapping as integer multiplication does (PyTorch).
// A negative exponent gives 1 for base 1, +-1 for base -1 and 0 otherwise, as PyTorch's
// integer pow does for tensor exponents.
Tensor int_pow(const Tensor& base, const Tensor& exponent) {
  const DType dt = base.dtype();
  const bool is_signed = !dt.is_unsigned();
  const int bits = static_cast<int>(dt.itemsize() * 8) - (is_signed ? 1 : 0);
  Tensor e = is_signed ? exponent.lt(0).where(0, exponent) : exponent;
  Tensor result = base.scalar_like(int64_t{1}), b = base;
  for (int i = 0; i < bits; ++i) {
    result = e.bitwise_and(e.scalar_like(int64_t{1})).ne(0).where(result.mul(b), result);
    if (i + 1 < bits) {
      b = b.mul(b);
      e = e.rshift(e.scalar_like(int64_t{1}));
    }
  }
  if (!is_signed) return result;
  Tensor odd = exponent.bitwise_and(exponent.scalar_like(int64_t{1})).ne(0);
  Tensor negative = base.eq(1).where(1, base.eq(-1).where(odd.where(-1, 1), 0)).cast(dt);
  return exponent.lt(0).where(negative, result);
}

void require_int(const Tensor& t, const char* op) {
  if (!(t.dtype().is_int() || t.dtype().is_bool()))
    throw Error(std::string(op) + ": needs integer or bool tensors, got " + t.dtype().name());
}

Tensor bitwise(Ops op, const Tensor& a, const Tensor& b, const char* name) {
  require_int(a, name);
  require_int(b, name);
  return binary(op, a, b, name);
}

} // namespace

Tensor Tensor::scalar_like(Scalar s) const {
  const DType mine = dtype();
  DType sdt;
  if (std::holds_alternative<bool>(s.value))
    sdt = dtypes::bool_;
  else if (std::holds_alternative<int64_t>(s.value))
    sdt = mine.is_bool() ? dtypes::int32 : mine;
  else
    sdt = mine.is_float() ? mine : dtypes::float32;
  return make(detail::const_node(s.value, sdt, device(), {}), {});
}

Tensor Tensor::cast(DType d) const {
  if (d == dtype()) return *this;
  if (d.is_ptr || d.is_void() || d.count != 1 || d.scalar_type == ScalarType::Index)
    throw Error("cast: a tensor cannot have dtype " + d.name());
  return make(UOp::make(Ops::CAST, d, {uop()}), {this});
}

Tensor Tensor::bitcast(DType d) const {
  if (d == dtype()) return *this;
  if (d.itemsize() != dtype().itemsize() || d.is_ptr || d.count != 1)
    throw Error("bitcast: " + dtype().name() + " (" + std::to_string(dtype().itemsize()) +
                " bytes) cannot be reinterpreted as " + d.name() + " (" +
                std::to_string(d.itemsize()) + " bytes); the sizes must match");
  return make(UOp::make(Ops::BITCAST, d, {uop()}), {this});
}

// ---- unary ------------------------------------------------------------------------------

Tensor Tensor::neg() const {
  if (dtype().is_bool()) return logical_not();
  return make(UOp::make(Ops::NEG, dtype(), {uop()}), {this});
}
Tensor Tensor::logical_not() const {
  Tensor b = cast(dtypes::bool_);
  return make(b.uop()->logical_not(), {&b});
}
Tensor Tensor::bitwise_not() const {
  require_int(*this, "bitwise_not");
  if (dtype().is_bool()) return logical_not();
  return bitwise_xor(scalar_like(int64_t{-1}));
}
Tensor Tensor::abs() const {
  if (dtype().is_bool() || dtype().is_unsigned()) return *this;
  if (dtype().is_float()) return maximum(neg());
  return lt(0).where(neg(), *this);
}
Tensor Tensor::exp2() const {
  return in_float32(*this, [](const Tensor& x) {
    return make(UOp::make(Ops::EXP2, x.dtype(), {x.uop()}), {&x});
  });
}
Tensor Tensor::exp() const {
  return in_float32(*this, [](const Tensor& x) { return x.mul(1.0 / std::numbers::ln2).exp2(); });
}
Tensor Tensor::log2() const {
  return in_float32(*this, [](const Tensor& x) {
    return make(UOp::make(Ops::LOG2, x.dtype(), {x.uop()}), {&x});
  });
}
Tensor Tensor::log() const {
  return in_float32(*this, [](const Tensor& x) { return x.log2().mul(std::numbers::ln2); });
}
Tensor Tensor::sqrt() const {
  Tensor x = as_float(*this);
  return make(UOp::make(Ops::SQRT, x.dtype(), {x.uop()}), {&x});
}
Tensor Tensor::reciprocal() const {
  Tensor x = as_float(*this);
  return make(UOp::make(Ops::RECIPROCAL, x.dtype(), {x.uop()}), {&x});
}
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::sin() const {
  return in_float32(
      *this, [](const Tensor& x) { return make(UOp::make(Ops::SIN, x.dtype(), {x.uop()}), {&x}); });
}
Tensor Tensor::cos() const {
  return in_float32(
      *this, [](const Tensor& x) { return x.scalar_like(std::numbers::pi / 2).sub(x).sin(); });
}
// x <= 0 selects 0, so relu(nan) is nan and the gradient at 0 is 0 (PyTorch).
Tensor Tensor::relu() const { return le(0).where(0, *this); }
Tensor Tensor::sigmoid() const {
  // The gradient is PyTorch's closed form s * (1 - s): differentiating 1 / (1 + exp(-x)) gives
  // 0 * inf = nan where exp(-x) overflows (x < -88 in float32).
  return in_float32(*this, [](const Tensor& x) {
    const Tensor s = x.mul(-1.0 / std::numbers::ln2).exp2().add(1).reciprocal();
    return detail::with_gradient(s, {x, s}, "sigmoid", [](const Tensor& g, const auto& in) {
      const Tensor& y = in[1];
      return std::vector<Tensor>{g.mul(y.mul(y.neg().add(1.0))), Tensor()};
    });
  });
}
Tensor Tensor::tanh() const {
  return in_float32(*this, [](const Tensor& x) { return x.mul(2.0).sigmoid().mul(2.0).sub(1.0); });
}
Tensor Tensor::square() const { return mul(*this); }
Tensor Tensor::trunc() const {
  if (!dtype().is_float()) return *this;
  return make(UOp::make(Ops::TRUNC, dtype(), {uop()}), {this});
}
Tensor Tensor::floor() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return lt(t).where(t.sub(1), t);
}
Tensor Tensor::ceil() const {
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return gt(t).where(t.add(1), t);
}
Tensor Tensor::round() const {
  if (!dtype().is_float()) return *this;
  // Half to even: below .5 down, above .5 up, at .5 to the even neighbour.
  Tensor f = floor();
  Tensor d = sub(f);
  Tensor odd = f.sub(f.mul(0.5).floor().mul(2.0)).ne(0.0);
  Tensor up = d.gt(0.5).bitwise_or(d.eq(0.5).bitwise_and(odd));
  return up.where(f.add(1), f);
}
// Selects rather than maximum/minimum: PyTorch passes the gradient where x equals a bound (only
// x < min and x > max are cut off) and keeps NaN; min above max gives max everywhere.
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  if (!min && !max) throw Error("clamp: at least one of min and max must be given");
  Tensor r = *this;
  if (min) {
    const Tensor lo = r.scalar_like(*min);
    r = r.lt(lo).where(lo, r);
  }
  if (max) {
    const Tensor hi = r.scalar_like(*max);
    r = r.gt(hi).where(hi, r);
  }
  return r;
}

// ---- binary -----------------------------------------------------------------------------

Tensor Tensor::add(const Tensor& o) const { return binary(Ops::ADD, *this, o, "add"); }
Tensor Tensor::sub(const Tensor& o) const {
  if (dtype().is_bool() && o.dtype().is_bool())
    throw Error("sub: subtracting bool tensors is not supported; use logical_xor (^) instead");
  return binary(Ops::SUB, *this, o, "sub");
}
Tensor Tensor::mul(const Tensor& o) const { return binary(Ops::MUL, *this, o, "mul"); }
Tensor Tensor::div(const Tensor& o) const {
  DType dt = least_upper_float(least_upper_dtype({dtype(), o.dtype()}));
  return alu(Ops::FDIV, prepare({this, &o}, "div", dt));
}
Tensor Tensor::div_trunc(const Tensor& o) const {
  std::vector<Tensor> p = prepare({this, &o}, "div");
  const Tensor &a = p[0], &b = p[1];
  if (a.dtype().is_float()) return a.div(b).trunc();
  require_int(a, "div");
  // Integer division by 0 is 0 and INT_MIN / -1 wraps, instead of trapping the process.
  Tensor zero = b.eq(0);
  if (a.dtype().is_unsigned() || a.dtype().is_bool()) {
    Tensor safe = zero.where(1, b);
    return zero.where(0, alu(Ops::IDIV, {a, safe}));
  }
  Tensor minus1 = b.eq(-1);
  Tensor safe = zero.bitwise_or(minus1).where(1, b);
  return zero.where(0, minus1.where(a.neg(), alu(Ops::IDIV, {a, safe})));
}
Tensor Tensor::idiv(const Tensor& o) const {
  std::vector<Tensor> p = prepare({this, &o}, "idiv");
  const Tensor &a = p[0], &b = p[1];
  if (a.dtype().is_float()) return a.div(b).floor();
  Tensor q = a.div_trunc(b);
  if (a.dtype().is_unsigned() || a.dtype().is_bool()) return q;
  // Round toward -inf: one less where the remainder is non-zero and the signs differ.
  Tensor r = a.sub(q.mul(b));
  Tensor adjust = r.ne(0).bitwise_and(r.lt(0).ne(b.lt(0)));
  return adjust.where(q.sub(1), q);
}
Tensor Tensor::mod(const Tensor& o) const {
  std::vector<Tensor> p = prepare({this, &o}, "mod");
  const Tensor &a = p[0], &b = p[1];
  if (a.dtype().is_float()) return a.sub(a.div(b).floor().mul(b));
  Tensor r = a.sub(a.div_trunc(b).mul(b));
  if (a.dtype().is_unsigned() || a.dtype().is_bool()) return b.eq(0).where(0, r);
  Tensor adjust = r.ne(0).bitwise_and(r.lt(0).ne(b.lt(0)));
  return b.eq(0).where(0, adjust.where(r.add(b), r));
}
Tensor Tensor::pow(const Tensor& o) const {
  std::vector<Tensor> p = prepare({this, &o}, "pow");
  if (p[0].dtype().is_bool()) throw Error("pow: not defined for bool tensors");
  if (!p[0].dtype().is_float()) return int_pow(p[0], p[1]);
  return alu(Ops::POW, p);
}
Tensor Tensor::pow(Scalar o) const {
  const auto* e = std::get_if<int64_t>(&o.value);
  if (e && *e < 0 && (dtype().is_int() || dtype().is_bool()))
    throw Error("pow: integers to negative integer powers are not allowed (exponent " +
                std::to_string(*e) + " on a " + dtype().name() + " tensor); cast to float first");
  return pow(scalar_like(o));
}
Tensor Tensor::maximum(const Tensor& o) const { return binary(Ops::MAX, *this, o, "maximum"); }
Tensor Tensor::minimum(const Tensor& o) const {
  std::vector<Tensor> p = prepare({this, &o}, "minimum");
  // -max(-a, -b) keeps MAX's NaN propagation for floats; integers compare (no overflow).
  if (p[0].dtype().is_float()) return p[0].neg().maximum(p[1].neg()).neg();
  return p[0].lt(p[1]).where(p[0], p[1]);
}
Tensor Tensor::bitwise_and(const Tensor& o) const {
  return bitwise(Ops::AND, *this, o, "bitwise_and");
}
Tensor Tensor::bitwise_or(const Tensor& o) const {
  return bitwise(Ops::OR, *this, o, "bitwise_or");
}
Tensor Tensor::bitwise_xor(const Tensor& o) const {
  return bitwise(Ops::XOR, *this, o, "bitwise_xor");
}
Tensor Tensor::lshift(const Tensor& o) const {
  require_int(*this, "lshift");
  require_int(o, "lshift"); // a float shift amount is refused, as PyTorch
  return alu(Ops::SHL, prepare({this, &o}, "lshift", dtype()));
}
Tensor Tensor::rshift(const Tensor& o) const {
  require_int(*this, "rshift");
  require_int(o, "rshift"); // a float shift amount is refused, as PyTorch
  return alu(Ops::SHR, prepare({this, &o}, "rshift", dtype()));
}
Tensor Tensor::lt(const Tensor& o) const { return compare(Ops::CMPLT, *this, o, "lt"); }
Tensor Tensor::gt(const Tensor& o) const { return compare(Ops::CMPLT, o, *this, "gt"); }
Tensor Tensor::le(const Tensor& o) const { return lt(o).bitwise_or(eq(o)); }
Tensor Tensor::ge(const Tensor& o) const { return gt(o).bitwise_or(eq(o)); }
Tensor Tensor::eq(const Tensor& o) const { return compare(Ops::CMPEQ, *this, o, "eq"); }
Tensor Tensor::ne(const Tensor& o) const { return compare(Ops::CMPNE, *this, o, "ne"); }

Tensor Tensor::where(const Tensor& a, const Tensor& b) const {
  // The condition stays bool; only the values are promoted to one dtype.
  const Tensor cond = cast(dtypes::bool_);
  const DType dt = least_upper_dtype({a.dtype(), b.dtype()});
  same_device({&cond, &a, &b}, "where");
  const Shape shape = broadcast_shape({&cond, &a, &b}, "where");
  Tensor c = expand_to(cond, shape), x = expand_to(a.cast(dt), shape),
         y = expand_to(b.cast(dt), shape);
  return make(UOp::make(Ops::WHERE, dt, {c.uop(), x.uop(), y.uop()}), {&c, &x, &y});
}
Tensor Tensor::dot4(const Tensor& u8x4, const Tensor& s8x4) const {
  for (const Tensor* t : {this, &u8x4, &s8x4})
    if (t->dtype() != dtypes::int32)
      throw Error("dot4: every operand must be int32 (four bytes packed in each), got " +
                  t->dtype().name() + "; pack the bytes with shifts and bitwise_or first");
  same_device({this, &u8x4, &s8x4}, "dot4");
  const Shape shape = broadcast_shape({this, &u8x4, &s8x4}, "dot4");
  Tensor c = expand_to(*this, shape), a = expand_to(u8x4, shape), b = expand_to(s8x4, shape);
  return make(UOp::make(Ops::DOT4, dtypes::int32, {c.uop(), a.uop(), b.uop()}), {&c, &a, &b});
}
Tensor Tensor::where(Scalar a, const Tensor& b) const { return where(b.scalar_like(a), b); }
Tensor Tensor::where(const Tensor& a, Scalar b) const { return where(a, a.scalar_like(b)); }
Tensor Tensor::where(Scalar a, Scalar b) const {
  Tensor ta = make(detail::const_node(a.value, detail::scalar_dtype(a), device(), {}), {});
  return where(ta, ta.scalar_like(b));
}

} // namespace tg
