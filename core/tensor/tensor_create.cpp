// Creating tensors: constants, ranges, identity, uninitialized memory.
#include <cmath>
#include <cstdio>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace detail {
DType scalar_dtype(const Scalar& s) {
  if (std::holds_alternative<bool>(s.value)) return dtypes::bool_;
  if (std::holds_alternative<int64_t>(s.value)) return dtypes::int32;
  return dtypes::float32;
}
} // namespace detail

namespace {
void check_shape(const Shape& shape, const char* what) {
  for (const sint& d : shape)
    if (d.vmin() < 0)
      throw Error(std::string(what) + ": negative dimension " + d.str() + " in shape " +
                  shape_str(shape));
}
} // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device) {
  check_shape(shape, "empty");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto buf = std::make_shared<Buffer>(canonical_device(device), dtype, n);
  UOpPtr u = buf->uop();
  if (shape != Shape{n}) u = UOp::make(Ops::RESHAPE, dtype, {u}, shape);
  return Tensor(u, {buf});
}

Tensor Tensor::full(const Shape& shape, Scalar value, std::optional<DType> dtype,
                    const std::string& device) {
  check_shape(shape, "full");
  const DType dt = dtype.value_or(detail::scalar_dtype(value));
  // A symbolic shape's bound values go with the tensor (a constant needs no memory).
  return detail::with_bindings(
      Tensor(detail::const_node(value.value, dt, canonical_device(device), shape)), shape);
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device) {
  return full(shape, 0, dtype, device);
}
Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device) {
  return full(shape, 1, dtype, device);
}

Tensor Tensor::arange(int64_t stop, DType dtype, const std::string& device) {
  if (stop < 0) stop = 0;
  const std::string dev = canonical_device(device);
  return Tensor(UOp::make(Ops::IOTA, dtype, {detail::device_node(dev)}, stop));
}

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype,
                      const std::string& device) {
  if (step == 0) throw Error("arange: step must not be zero");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw Error("arange: start, stop and step must be finite");
  const auto n = static_cast<int64_t>(std::max(0.0, std::ceil((stop - start) / step)));
  const bool integral = start == std::trunc(start) && step == std::trunc(step);
  const DType dt = dtype.value_or(integral ? dtypes::int32 : dtypes::float32);
  if (n > 0 && !dt.is_float() && !dt.is_bool()) {
    // An integer range must fit its dtype (PyTorch would wrap silently; tinygrad refuses).
    const int bits = 8 * static_cast<int>(dt.itemsize());
    const double lo = dt.is_unsigned() ? 0.0 : -std::ldexp(1.0, bits - 1);
    const double hi = std::ldexp(1.0, dt.is_unsigned() ? bits : bits - 1) - 1;
    const double last = start + static_cast<double>(n - 1) * step;
    const auto str = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", v);
      return std::string(buf);
    };
    for (double v : {start, last})
      if (v < lo || v > hi)
        throw OverflowError("arange: value " + str(v) + " of the range is outside " + dt.name() +
                            " [" + str(lo) + ", " + str(hi) + "]: give a wider dtype");
  }
  // 64-bit integers count in their own dtype: start + i*step may leave int32's range.
  Tensor i = arange(n, dt.is_float() || dt.itemsize() > 4 ? dt : dtypes::int32, device);
  if (dt.is_float()) return i.mul(step).add(start).cast(dt);
  Tensor r = i;
  if (step != 1) r = r.mul(static_cast<int64_t>(step));
  if (start != 0) r = r.add(static_cast<int64_t>(start));
  return r.cast(dt);
}

Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, DType dtype, const std::string& device) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) throw Error("eye: negative size");
  Tensor r = arange(n, dtypes::int32, device).reshape({n, 1});
  Tensor c = arange(cols, dtypes::int32, device).reshape({1, cols});
  return r.eq(c).cast(dtype);
}

Tensor Tensor::empty_like(const Tensor& t) { return empty(t.shape(), t.dtype(), t.device()); }
Tensor Tensor::zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }
Tensor Tensor::ones_like(const Tensor& t) { return ones(t.shape(), t.dtype(), t.device()); }
Tensor Tensor::full_like(const Tensor& t, Scalar value) {
  return full(t.shape(), value, t.dtype(), t.device());
}
Tensor Tensor::rand_like(const Tensor& t) {
  return rand(t.shape(), t.dtype().is_float() ? t.dtype() : dtypes::float32, t.device());
}
Tensor Tensor::randn_like(const Tensor& t) {
  return randn(t.shape(), t.dtype().is_float() ? t.dtype() : dtypes::float32, t.device());
}

} // namespace tg
