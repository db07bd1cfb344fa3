#pragma once
// tg::Tensor: tinygrad's lazy Tensor. Every operation builds UOps (tensor-level nodes: BUFFER,
// CONST, IOTA, ALU, movement, REDUCE, CONTIGUOUS, COPY, ASSIGN) and runs nothing; realize(),
// to_vector(), item() and schedule() hand the graph to the scheduler (tg/schedule.hpp), which
// cuts it into kernels.
//
// A Tensor is a handle: copies share one state, as Python references do, so assign() is seen
// through every copy. Shapes, dtypes and devices follow tinygrad and PyTorch: numpy
// broadcasting, tinygrad's promotion lattice, negative axes count from the end.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tg/ir/uop.hpp"

namespace tg {

class Buffer;
struct TensorState;
struct ScheduleItem;
struct ValuesIndices; // mathops: values and int32 indices (sort, topk, max_dim, cummax)

// A Python-like scalar operand: bool, integer or float. Integers become the tensor's dtype
// (int32 next to bool), floats a float dtype (float32 next to integers), as in tinygrad.
struct Scalar {
  ConstValue value;
  template <class T>
  requires std::is_arithmetic_v<T>
  Scalar(T v) { // NOLINT(google-explicit-constructor): scalars mix with tensors as in Python
    if constexpr (std::is_same_v<T, bool>)
      value = v;
    else if constexpr (std::is_integral_v<T>)
      value = static_cast<int64_t>(v);
    else
      value = static_cast<double>(v);
  }
};

// One axis of a slice: [start, stop) by step, Python's rules (negative indices count from
// the end, out-of-range ends are clamped, step may be negative).
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};

class Tensor {
public:
  Tensor() = default; // an undefined tensor; every operation on it raises tg::Error
  // A tensor over an existing graph node (advanced: tests and the scheduler).
  explicit Tensor(UOpPtr uop, std::vector<std::shared_ptr<Buffer>> buffers = {});
  // The same when the device is known (it is otherwise found by walking the graph).
  Tensor(UOpPtr uop, std::vector<std::shared_ptr<Buffer>> buffers, std::string device);

  // ---- creation --------------------------------------------------------------------------
  static Tensor empty(const Shape& shape, DType dtype = dtypes::float32,
                      const std::string& device = "");
  static Tensor full(const Shape& shape, Scalar value, std::optional<DType> dtype = {},
                     const std::string& device = "");
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::float32,
                      const std::string& device = "");
  static Tensor ones(const Shape& shape, DType dtype = dtypes::float32,
                     const std::string& device = "");
  // 0, 1, ..., stop-1 (int32), or start + i*step for i < ceil((stop-start)/step).
  static Tensor arange(int64_t stop, DType dtype = dtypes::int32, const std::string& device = "");
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = {},
                       const std::string& device = "");
  static Tensor eye(int64_t n, std::optional<int64_t> m = {}, DType dtype = dtypes::float32,
                    const std::string& device = "");
  static Tensor empty_like(const Tensor& t);
  static Tensor zeros_like(const Tensor& t);
  static Tensor ones_like(const Tensor& t);
  static Tensor full_like(const Tensor& t, Scalar value);
  static Tensor rand_like(const Tensor& t);
  static Tensor randn_like(const Tensor& t);

  // From host data (copied once realized). T is float, double, an integer type or bool;
  // `dtype` defaults to T's (uint16_t data may be given as float16/bfloat16 bits).
  template <class T>
  static Tensor from_vector(const std::vector<T>& data, const Shape& shape,
                            const std::string& device = "", std::optional<DType> dtype = {});
  template <class T>
  static Tensor from_vector(const std::vector<T>& data, const std::string& device = "") {
    return from_vector(data, Shape{static_cast<int64_t>(data.size())}, device);
  }
  // Zero-copy where the device can read host memory (CPU): the tensor reads `data` in place,
  // which must outlive it and every tensor computed from it. Elsewhere the data is copied.
  template <class T>
  static Tensor from_blob(std::span<T> data, const Shape& shape, const std::string& device = "",
                          std::optional<DType> dtype = {});
  // The raw form of both: `bytes` holds prod(shape) elements of `dtype`.
  static Tensor from_bytes(const void* bytes, size_t nbytes, const Shape& shape, DType dtype,
                           const std::string& device = "", bool borrow = false);

  // Random numbers from a counter-based generator (threefry2x32, as tinygrad): the same seed
  // gives the same numbers on every run and device.
  static void manual_seed(uint64_t seed);
  static Tensor rand(const Shape& shape, DType dtype = dtypes::float32,
                     const std::string& device = ""); // uniform [0, 1)
  static Tensor randn(const Shape& shape, DType dtype = dtypes::float32,
                      const std::string& device = ""); // standard normal
  static Tensor randint(const Shape& shape, int64_t low, int64_t high, DType dtype = dtypes::int32,
                        const std::string& device = ""); // [low, high)

  // ---- properties ------------------------------------------------------------------------
  bool defined() const { return state_ != nullptr; }
  const UOpPtr& uop() const;
  const Shape& shape() const;
  int64_t ndim() const { return static_cast<int64_t>(shape().size()); }
  int64_t numel() const;
  int64_t size(int64_t dim) const;
  DType dtype() const;
  std::string device() const;
  std::string str() const; // "Tensor(shape=(2, 3), dtype=float32, device=CPU)"

  // ---- running ---------------------------------------------------------------------------
  Tensor& realize();
  static void realize_all(std::vector<Tensor> tensors);
  // The kernels realize() would run, without running them (tinygrad's Tensor.schedule()).
  std::vector<ScheduleItem> schedule() const;
  static std::vector<ScheduleItem> schedule_all(const std::vector<Tensor>& tensors);
  // Realizes, then copies to the host converted to T (tinygrad's tolist/.data()).
  template <class T> std::vector<T> to_vector() const;
  template <class T> T item() const;     // one element; raises unless numel() == 1
  std::vector<uint8_t> to_bytes() const; // raw little-endian elements of dtype()

  // ---- elementwise -----------------------------------------------------------------------
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor reciprocal() const;
  Tensor square() const;
  Tensor trunc() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const; // half to even, as PyTorch
  Tensor logical_not() const;
  Tensor bitwise_not() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max) const;

  Tensor add(const Tensor& o) const;
  Tensor sub(const Tensor& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;       // true division: integers give float
  Tensor idiv(const Tensor& o) const;      // floor division (Python's //) on integers and floats
  Tensor div_trunc(const Tensor& o) const; // rounds toward zero (C, torch rounding_mode="trunc")
  Tensor mod(const Tensor& o) const;       // Python's %: the sign of the divisor (torch.remainder)
  Tensor pow(const Tensor& o) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor lshift(const Tensor& o) const;
  Tensor rshift(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  // cond.where(a, b): a where cond (cast to bool) is true, else b.
  Tensor where(const Tensor& a, const Tensor& b) const;
  Tensor where(Scalar a, const Tensor& b) const;
  Tensor where(const Tensor& a, Scalar b) const;
  Tensor where(Scalar a, Scalar b) const;
  Tensor cast(DType d) const;
  Tensor bitcast(DType d) const; // same itemsize

  // The same with a scalar operand.
  Tensor add(Scalar o) const { return add(scalar_like(o)); }
  Tensor sub(Scalar o) const { return sub(scalar_like(o)); }
  Tensor mul(Scalar o) const { return mul(scalar_like(o)); }
  Tensor div(Scalar o) const { return div(scalar_like(o)); }
  Tensor idiv(Scalar o) const { return idiv(scalar_like(o)); }
  Tensor mod(Scalar o) const { return mod(scalar_like(o)); }
  Tensor pow(Scalar o) const { return pow(scalar_like(o)); }
  Tensor maximum(Scalar o) const { return maximum(scalar_like(o)); }
  Tensor minimum(Scalar o) const { return minimum(scalar_like(o)); }
  Tensor lt(Scalar o) const { return lt(scalar_like(o)); }
  Tensor le(Scalar o) const { return le(scalar_like(o)); }
  Tensor gt(Scalar o) const { return gt(scalar_like(o)); }
  Tensor ge(Scalar o) const { return ge(scalar_like(o)); }
  Tensor eq(Scalar o) const { return eq(scalar_like(o)); }
  Tensor ne(Scalar o) const { return ne(scalar_like(o)); }

  // ---- reductions (axis -1 style indices; empty axes = all) -------------------------------
  Tensor sum(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor prod(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor max(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor min(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor mean(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor any(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor all(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  // Index of the first maximum (minimum) along `axis` (int32); nullopt: of the flattened tensor.
  Tensor argmax(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor softmax(int64_t axis = -1) const;

  // ---- math ops, reductions with indices, scans, sorting, init (issue #5 part B: mathops) --
  // PyTorch's names, arguments and defaults. Ops that only make sense on floats compute
  // integer and bool inputs in float32 (as exp() does). Indices are int32 (tinygrad's
  // default int; PyTorch's int64). Files: core/tensor/tensor_{activations,scan,sort,init}.cpp.
  Tensor gelu(const std::string& approximate = "none") const; // "none" (erf) or "tanh"
  Tensor silu() const;
  Tensor swish() const { return silu(); }
  Tensor softplus(double beta = 1, double threshold = 20) const;
  Tensor mish() const;
  Tensor elu(double alpha = 1) const;
  Tensor celu(double alpha = 1) const;
  Tensor selu() const;
  Tensor leaky_relu(double negative_slope = 0.01) const;
  Tensor hardtanh(double min_val = -1, double max_val = 1) const;
  Tensor hardswish() const;
  Tensor hardsigmoid() const;
  Tensor relu6() const;
  Tensor softsign() const;
  Tensor logsigmoid() const;
  Tensor erf() const; // Abramowitz-Stegun 7.1.26, as tinygrad: |error| < 1.5e-7 + rounding
  Tensor tan() const;
  Tensor asin() const; // Abramowitz-Stegun 4.4.46, as tinygrad
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor sign() const;
  Tensor isnan() const;
  Tensor isinf(bool detect_positive = true, bool detect_negative = true) const;
  Tensor isfinite() const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor copysign(const Tensor& o) const;
  Tensor copysign(Scalar o) const;
  // nan, +inf and -inf replaced; the infinities by the dtype's largest/lowest finite value
  // unless given. Integer tensors are returned unchanged.
  Tensor nan_to_num(double nan = 0, std::optional<double> posinf = {},
                    std::optional<double> neginf = {}) const;

  // Variance over `axes` (empty = all) dividing by max(0, N - correction), as PyTorch: N equal
  // to correction gives nan/inf. Float tensors only. keepdim before correction, as tinygrad.
  Tensor var(std::vector<int64_t> axes = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(std::vector<int64_t> axes = {}, bool keepdim = false, double correction = 1) const;
  std::pair<Tensor, Tensor> var_mean(std::vector<int64_t> axes = {}, bool keepdim = false,
                                     double correction = 1) const; // (var, mean)
  std::pair<Tensor, Tensor> std_mean(std::vector<int64_t> axes = {}, bool keepdim = false,
                                     double correction = 1) const; // (std, mean)
  // Inclusive scans along `dim` (tinygrad's _split_cumalu: blocks of 256, so a length-n axis
  // costs O(n * 256)). cumsum/cumprod accumulate as sum/prod do (int8 in int32, halves in
  // float32 and back).
  Tensor cumsum(int64_t dim = 0) const;
  Tensor cumprod(int64_t dim) const;
  // Running max/min with the index of the last occurrence (NaN counts as the extreme), as
  // torch.cummax/cummin.
  ValuesIndices cummax(int64_t dim) const;
  ValuesIndices cummin(int64_t dim) const;
  // torch.max(input, dim) / torch.min(input, dim): values and the index of the first extreme
  // (a NaN is the extreme).
  ValuesIndices max_dim(int64_t dim, bool keepdim = false) const;
  ValuesIndices min_dim(int64_t dim, bool keepdim = false) const;
  // Stable sort along `dim` (torch.sort(stable=True)): a bitonic network over (value, index)
  // pairs, O(n log^2 n). NaN sorts as the largest value; -0.0 and 0.0 are equal.
  ValuesIndices sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  // The k largest (smallest) along `dim`, always sorted; ties in index order.
  ValuesIndices topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;

  // Creation from the threefry generator (reproducible after manual_seed).
  // start + i*step for i < steps/2, end - (steps-1-i)*step after, so both ends are exact.
  static Tensor linspace(double start, double end, int64_t steps, DType dtype = dtypes::float32,
                         const std::string& device = "");
  static Tensor uniform(const Shape& shape, double low = 0, double high = 1,
                        DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor normal(const Shape& shape, double mean = 0, double std = 1,
                       DType dtype = dtypes::float32, const std::string& device = "");
  // torch.nn.init: fan_in = shape[1] * receptive field, fan_out = shape[0] * receptive field;
  // gain from `nonlinearity` as torch.nn.init.calculate_gain (linear, conv*, sigmoid, tanh,
  // relu, leaky_relu with slope `a`, selu).
  static Tensor kaiming_uniform(const Shape& shape, double a = 0,
                                const std::string& mode = "fan_in",
                                const std::string& nonlinearity = "leaky_relu",
                                DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor kaiming_normal(const Shape& shape, double a = 0, const std::string& mode = "fan_in",
                               const std::string& nonlinearity = "leaky_relu",
                               DType dtype = dtypes::float32, const std::string& device = "");
  // xavier_uniform: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)).
  static Tensor glorot_uniform(const Shape& shape, double gain = 1, DType dtype = dtypes::float32,
                               const std::string& device = "");
  static Tensor randperm(int64_t n, DType dtype = dtypes::int32, const std::string& device = "");
  // Rows of this 1-D or 2-D tensor are (unnormalized) category weights; returns int32 indices.
  Tensor multinomial(int64_t num_samples = 1, bool replacement = false) const;

  // ---- movement (views: no copy) ---------------------------------------------------------
  Tensor reshape(Shape shape) const; // one -1 may be inferred
  Tensor permute(Shape order) const;
  Tensor transpose(int64_t a = -2, int64_t b = -1) const;
  Tensor expand(Shape shape) const; // -1 keeps a dimension; new leading dimensions allowed
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> padding, Scalar value = 0) const;
  Tensor shrink(std::vector<std::pair<int64_t, int64_t>> ranges) const;
  Tensor flip(std::vector<int64_t> axes) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor squeeze(std::optional<int64_t> dim = {}) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor slice(std::vector<Slice> slices) const;   // one Slice per leading axis
  Tensor index(int64_t i, int64_t axis = 0) const; // t[i] along axis (that axis removed)
  static Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

  // ---- linear algebra, memory, devices ---------------------------------------------------
  Tensor matmul(const Tensor& o) const;
  Tensor dot(const Tensor& o) const { return matmul(o); }
  Tensor contiguous() const;
  Tensor to(const std::string& device) const;
  // Writes `value` (broadcast and cast to this tensor's shape and dtype) into this tensor's
  // buffer when realized; every copy of this handle sees it.
  Tensor& assign(const Tensor& value);
  Tensor& assign(Scalar value);
  Tensor detach() const;

  // The scalar as a tensor of this one's device and the promoted dtype (tinygrad's rules).
  Tensor scalar_like(Scalar s) const;

  // Internal: used by the scheduler after realizing.
  const std::shared_ptr<TensorState>& state() const { return state_; }

private:
  explicit Tensor(std::shared_ptr<TensorState> s) : state_(std::move(s)) {}
  const TensorState& st() const;
  std::shared_ptr<TensorState> state_;
};

// mathops: what sort, topk, max_dim/min_dim and cummax/cummin return.
struct ValuesIndices {
  Tensor values;
  Tensor indices; // int32
};

// Operators: Tensor with Tensor or Scalar on either side.
#define TG_TENSOR_BINARY_OPERATOR(OP, METHOD)                                                      \
  inline Tensor operator OP(const Tensor& a, const Tensor& b) { return a.METHOD(b); }              \
  inline Tensor operator OP(const Tensor& a, Scalar b) { return a.METHOD(b); }                     \
  inline Tensor operator OP(Scalar a, const Tensor& b) { return b.scalar_like(a).METHOD(b); }
TG_TENSOR_BINARY_OPERATOR(+, add)
TG_TENSOR_BINARY_OPERATOR(-, sub)
TG_TENSOR_BINARY_OPERATOR(*, mul)
TG_TENSOR_BINARY_OPERATOR(/, div)
TG_TENSOR_BINARY_OPERATOR(<, lt)
TG_TENSOR_BINARY_OPERATOR(<=, le)
TG_TENSOR_BINARY_OPERATOR(>, gt)
TG_TENSOR_BINARY_OPERATOR(>=, ge)
#undef TG_TENSOR_BINARY_OPERATOR
inline Tensor operator-(const Tensor& a) { return a.neg(); }
inline Tensor operator&(const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }
inline Tensor operator|(const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }
inline Tensor operator^(const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }
inline Tensor operator%(const Tensor& a, const Tensor& b) { return a.mod(b); }

// The dtype of host type T (float -> float32, int8_t -> int8, bool -> bool, ...).
template <class T> DType dtype_of();

} // namespace tg
