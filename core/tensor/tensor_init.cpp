// Creation ops: linspace and the random initializers, all drawn from the
// threefry generator behind Tensor::rand/randn, so manual_seed reproduces them.
#include <cmath>
#include <limits>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

void require_float(DType d, const char* name) {
  if (!d.is_float())
    throw Error(std::string(name) + ": dtype must be a floating point type, got " + d.name());
}

// torch.nn.init._calculate_fan_in_and_fan_out.
std::pair<int64_t, int64_t> fans(const Shape& shape, const char* name) {
  if (shape.size() < 2)
    throw Error(std::string(name) +
                ": fan in and fan out need a shape of at least 2 dimensions, got " +
                shape_str(shape));
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= static_cast<int64_t>(shape[i]);
  const int64_t out = shape[0], in = shape[1];
  return {in * receptive, out * receptive};
}

// torch.nn.init.calculate_gain.
double gain_of(const std::string& nonlinearity, double a, const char* name) {
  for (const char* lin : {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                          "conv_transpose2d", "conv_transpose3d", "sigmoid"})
    if (nonlinearity == lin) return 1;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1 + a * a));
  if (nonlinearity == "selu") return 3.0 / 4;
  throw Error(std::string(name) + ": unsupported nonlinearity \"" + nonlinearity +
              "\" (linear, conv1d/2d/3d, conv_transpose1d/2d/3d, sigmoid, tanh, relu, "
              "leaky_relu, selu)");
}

int64_t kaiming_fan(const Shape& shape, const std::string& mode, const char* name) {
  const auto [in, out] = fans(shape, name);
  if (mode == "fan_in") return in;
  if (mode == "fan_out") return out;
  throw Error(std::string(name) + ": mode must be \"fan_in\" or \"fan_out\", got \"" + mode + "\"");
}

} // namespace

Tensor Tensor::linspace(double start, double end, int64_t steps, DType dtype,
                        const std::string& device) {
  if (steps < 0)
    throw Error("linspace: number of steps must be non-negative, got " + std::to_string(steps));
  if (dtype.is_bool()) throw Error("linspace: dtype bool is not supported");
  const std::string dev = canonical_device(device);
  if (steps <= 1)
    return steps == 0 ? Tensor::zeros({0}, dtype, dev) : Tensor::full({1}, start, dtype, dev);
  // PyTorch's form: the first half counts up from start, the second down from end, so both
  // ends are exact.
  const DType cdt = dtype == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  const double step = (end - start) / static_cast<double>(steps - 1);
  Tensor i = Tensor::arange(steps, dtypes::int32, dev);
  Tensor up = i.cast(cdt).mul(step).add(start);
  Tensor down = i.mul(-1).add(steps - 1).cast(cdt).mul(-step).add(end);
  return i.lt(steps / 2).where(up, down).cast(dtype);
}

Tensor Tensor::uniform(const Shape& shape, double low, double high, DType dtype,
                       const std::string& device) {
  require_float(dtype, "uniform");
  if (!(low <= high))
    throw Error("uniform: low (" + std::to_string(low) + ") must not exceed high (" +
                std::to_string(high) + ")");
  const DType cdt = dtype == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  return Tensor::rand(shape, cdt, device).mul(high - low).add(low).cast(dtype);
}

Tensor Tensor::normal(const Shape& shape, double mean, double std, DType dtype,
                      const std::string& device) {
  require_float(dtype, "normal");
  if (!(std >= 0)) throw Error("normal: std must be >= 0, got " + std::to_string(std));
  const DType cdt = dtype == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  return Tensor::randn(shape, cdt, device).mul(std).add(mean).cast(dtype);
}

Tensor Tensor::kaiming_uniform(const Shape& shape, double a, const std::string& mode,
                               const std::string& nonlinearity, DType dtype,
                               const std::string& device) {
  const int64_t fan = kaiming_fan(shape, mode, "kaiming_uniform");
  const double gain = gain_of(nonlinearity, a, "kaiming_uniform");
  if (fan == 0) return Tensor::zeros(shape, dtype, device); // zero elements: nothing to draw
  const double bound = std::sqrt(3.0) * gain / std::sqrt(static_cast<double>(fan));
  return uniform(shape, -bound, bound, dtype, device);
}

Tensor Tensor::kaiming_normal(const Shape& shape, double a, const std::string& mode,
                              const std::string& nonlinearity, DType dtype,
                              const std::string& device) {
  const int64_t fan = kaiming_fan(shape, mode, "kaiming_normal");
  const double gain = gain_of(nonlinearity, a, "kaiming_normal");
  if (fan == 0) return Tensor::zeros(shape, dtype, device);
  return normal(shape, 0, gain / std::sqrt(static_cast<double>(fan)), dtype, device);
}

Tensor Tensor::glorot_uniform(const Shape& shape, double gain, DType dtype,
                              const std::string& device) {
  const auto [in, out] = fans(shape, "glorot_uniform");
  if (in + out == 0) return Tensor::zeros(shape, dtype, device);
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return uniform(shape, -bound, bound, dtype, device);
}

Tensor Tensor::scaled_uniform(const Shape& shape, DType dtype, const std::string& device) {
  int64_t n = 1;
  for (const sint& d : shape) n *= d.eval({});
  if (n == 0) return Tensor::zeros(shape, dtype, device);
  return uniform(shape, -1, 1, dtype, device).mul(1.0 / std::sqrt(static_cast<double>(n)));
}

Tensor Tensor::randperm(int64_t n, DType dtype, const std::string& device) {
  if (n < 0) throw Error("randperm: n must be non-negative, got " + std::to_string(n));
  if (dtype.is_bool()) throw Error("randperm: dtype bool cannot hold a permutation");
  const std::string dev = canonical_device(device);
  if (n == 0) return Tensor::zeros({0}, dtype, dev);
  // 31 random bits per element (23 from one uniform, 8 from another; rand's values are
  // k / 2^23 exactly), then a stable argsort: a tie (about n^2 / 2^32 of them) keeps index
  // order, so the result is always a permutation.
  Tensor hi = Tensor::rand({n}, dtypes::float32, dev).mul(8388608.0).cast(dtypes::int32);
  Tensor lo = Tensor::rand({n}, dtypes::float32, dev).mul(8388608.0).cast(dtypes::int32);
  Tensor key =
      hi.lshift(hi.scalar_like(int64_t{8})).bitwise_or(lo.rshift(lo.scalar_like(int64_t{15})));
  return key.argsort().cast(dtype);
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  if (ndim() != 1 && ndim() != 2)
    throw Error("multinomial: the weights must be 1-D or 2-D, got shape " + shape_str(shape()));
  if (!dtype().is_float())
    throw Error("multinomial: the weights must be a floating point tensor, got " + dtype().name());
  const int64_t n = size(-1), rows = ndim() == 1 ? 1 : size(0);
  if (n == 0)
    throw Error("multinomial: the weights have no categories (shape " + shape_str(shape()) + ")");
  if (num_samples <= 0)
    throw Error("multinomial: num_samples must be positive, got " + std::to_string(num_samples));
  if (!replacement && num_samples > n)
    throw Error("multinomial: cannot draw " + std::to_string(num_samples) +
                " samples without replacement from " + std::to_string(n) + " categories");
  const DType cdt = dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor w = (ndim() == 1 ? unsqueeze(0) : *this).cast(cdt); // (rows, n)
  Tensor positive = w.gt(0.0);
  Tensor idx;
  if (replacement || num_samples == 1) {
    // Inverse CDF: the first category whose cumulative weight exceeds u and whose own weight
    // is positive (so a zero-weight category is never drawn, even where rounding makes the
    // cumulative sum step at it); past the end (rounding again), the last positive category.
    Tensor cw = w.cumsum(1);
    Tensor cdf = cw.div(cw.shrink({{0, rows}, {n - 1, n}})).unsqueeze(0); // (1, rows, n)
    // Stored first: fused into the compare-and-reduce below, the threefry expression makes
    // the kernel optimizer hang for S >= 512 today (NOOPT=1 compiles it).
    Tensor u = Tensor::rand({num_samples, rows, 1}, cdt, device()).contiguous(); // (S, rows, 1)
    Tensor hit = u.lt(cdf).bitwise_and(positive.unsqueeze(0));                   // (S, rows, n)
    Tensor j = Tensor::arange(n, dtypes::int32, device());
    Tensor first = hit.where(j.mul(-1).add(n), int64_t{0}).max({2}).mul(-1).add(n);
    Tensor last_positive = positive.where(j, int64_t{0}).max({1}).unsqueeze(0);
    idx = first.minimum(last_positive).permute({1, 0}); // (rows, S)
  } else {
    // Without replacement: the num_samples largest log(u) / w (Efraimidis and Spirakis's
    // weighted sampling as keys u^(1/w)); a zero weight gives -inf, so such a category is
    // drawn only after every positive one (PyTorch raises instead).
    Tensor u = Tensor::rand({rows, n}, cdt, device());
    idx = u.log().div(w).topk(num_samples, -1).indices;
  }
  idx = idx.cast(dtypes::int32);
  return ndim() == 1 ? idx.squeeze(0) : idx;
}

} // namespace tg
