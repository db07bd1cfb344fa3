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
#include <utility>
#include <vector>

#include "tg/ir/uop.hpp"

namespace tg {

class Buffer;
struct TensorState;
struct ScheduleItem;
struct Index; // one entry of a getitem/setitem index (below the class)

// pad's mode as PyTorch spells it: "constant", "reflect", "replicate" or "circular". A string
// literal or std::string, never an integer (so t.pad(pairs, 0) stays the constant-value form).
struct PadMode {
  std::string name;
  template <size_t N>
  PadMode(const char (&s)[N]) : name(s) {}   // NOLINT(google-explicit-constructor)
  PadMode(const std::string& s) : name(s) {} // NOLINT(google-explicit-constructor)
};
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
  // 1-D, on `device`. A template on the device's type so that a braced shape,
  // from_vector(v, {n}), always means the overload above (a braced list deduces no type).
  template <class T> static Tensor from_vector(const std::vector<T>& data) {
    return from_vector(data, Shape{static_cast<int64_t>(data.size())}, std::string());
  }
  template <class T, class Device>
  requires std::is_convertible_v<const Device&, std::string>
  static Tensor from_vector(const std::vector<T>& data, const Device& device) {
    return from_vector(data, Shape{static_cast<int64_t>(data.size())}, std::string(device));
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
  int64_t numel() const;           // symbolic sizes count with their bound values
  int64_t size(int64_t dim) const; // the same for one axis
  // The values bound to the variables of symbolic sizes in this tensor's graph.
  const VarVals& var_vals() const;
  DType dtype() const;
  std::string device() const;
  std::string str() const; // "Tensor(shape=(2, 3), dtype=float32, device=CPU)"
  // The memory a realized tensor reads (through movement ops only), or null when the tensor
  // is not (yet) a view of a buffer.
  std::shared_ptr<Buffer> buffer() const;

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
  // this + the dot product of the four bytes of each int32 of `u8x4` (read unsigned) with those
  // of `s8x4` (read signed), all int32, broadcast, wrapping: the int8 dot product of quantized
  // matmuls (Ops::DOT4; one vpdpbusd lane on a CPU with AVX512-VNNI, decomposed elsewhere).
  Tensor dot4(const Tensor& u8x4, const Tensor& s8x4) const;
  Tensor cast(DType d) const;
  Tensor bitcast(DType d) const; // same itemsize

  // The same with a scalar operand.
  Tensor add(Scalar o) const { return add(scalar_like(o)); }
  Tensor sub(Scalar o) const { return sub(scalar_like(o)); }
  Tensor mul(Scalar o) const { return mul(scalar_like(o)); }
  Tensor div(Scalar o) const { return div(scalar_like(o)); }
  Tensor idiv(Scalar o) const { return idiv(scalar_like(o)); }
  Tensor mod(Scalar o) const { return mod(scalar_like(o)); }
  Tensor pow(Scalar o) const; // an integer tensor to a negative integer power is an error
  Tensor maximum(Scalar o) const { return maximum(scalar_like(o)); }
  Tensor minimum(Scalar o) const { return minimum(scalar_like(o)); }
  Tensor lt(Scalar o) const { return lt(scalar_like(o)); }
  Tensor le(Scalar o) const { return le(scalar_like(o)); }
  Tensor gt(Scalar o) const { return gt(scalar_like(o)); }
  Tensor ge(Scalar o) const { return ge(scalar_like(o)); }
  Tensor eq(Scalar o) const { return eq(scalar_like(o)); }
  Tensor ne(Scalar o) const { return ne(scalar_like(o)); }

  // ---- reductions (axis -1 style indices; empty axes = all) -------------------------------
  // sum and prod of integers and bools are int64 (PyTorch: they never wrap in 32 bits); of
  // half floats accumulated in float32 and returned in the input's dtype.
  Tensor sum(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor prod(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  // max/min split the gradient equally among ties (PyTorch's amax and max()); max_dim sends
  // it to the returned index.
  Tensor max(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor min(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor mean(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor any(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor all(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  // Index of the first maximum (minimum) along `axis` (int32); nullopt: of the flattened tensor.
  Tensor argmax(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor softmax(int64_t axis = -1) const;

  // ---- math ops, reductions with indices, scans, sorting, init -----------------------------
  // PyTorch's names, arguments and defaults. Ops that only make sense on floats compute
  // integer and bool inputs in float32 (as exp() does). Indices are int32 (tinygrad's
  // default int; PyTorch's int64). Files: core/tensor/tensor_{activations,scan,sort,init}.cpp.
  Tensor gelu(const std::string& approximate = "none") const; // "none" (erf) or "tanh"
  Tensor silu() const;
  Tensor quick_gelu() const; // x * sigmoid(1.702 x): tinygrad's (CLIP's) approximation
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
  // costs O(n * 256)). cumsum/cumprod accumulate as sum/prod do (integers in int64, halves
  // in float32 and back).
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
  // tinygrad's scaled_uniform: U(-1, 1) scaled by prod(shape)^-0.5.
  static Tensor scaled_uniform(const Shape& shape, DType dtype = dtypes::float32,
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
  Tensor shrink(PadArg ranges) const; // (begin, end) per axis; symbolic ends allowed
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
  // This tensor's values in a buffer of their own on the same device (PyTorch's clone): a
  // realized tensor's contiguous() is the tensor itself, its clone() a copy. Gradients pass
  // through unchanged.
  Tensor clone() const;
  Tensor to(const std::string& device) const;
  // Writes `value` (broadcast and cast to this tensor's shape and dtype) into this tensor's
  // buffer when realized; every copy of this handle sees it.
  Tensor& assign(const Tensor& value);
  Tensor& assign(Scalar value);
  Tensor detach() const;

  // ---- indexing and movement: getitem, setitem, gather/scatter, pad modes -----------------
  // t[i], t[{i, j, ...}]: numpy/PyTorch indexing with ints, Slices, None (newaxis), Ellipsis,
  // integer index tensors (gathered, broadcast together; separated ones move to the front) and
  // boolean masks (realized on the host to find their true elements: a sync point).
  // Basic indices (ints, slices, None, Ellipsis) are views; tensor indices one-hot and sum.
  Tensor operator[](const Index& i) const;
  Tensor operator[](std::initializer_list<Index> indices) const;
  Tensor getitem(std::vector<Index> indices) const;
  // t[indices] = value (broadcast, cast to dtype()), written into this tensor's buffer (a lazy
  // tensor is realized first) and realized, as tinygrad's __setitem__; copies see it.
  Tensor& setitem(std::vector<Index> indices, const Tensor& value);
  Tensor& setitem(std::vector<Index> indices, Scalar value);
  // PyTorch's gather/scatter: index has this tensor's rank and is no larger than it off `dim`
  // (and than src). Index values are not range-checked (that needs a sync): out of range
  // selects nothing (gather gives 0). scatter: the last of duplicate indices wins.
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  // reduce: "" (replace), "add" or "multiply", as torch.scatter's value form.
  Tensor scatter(int64_t dim, const Tensor& index, Scalar value,
                 const std::string& reduce = "") const;
  // reduce: "sum", "prod", "mean", "amax" or "amin" (integer mean rounds down, as PyTorch).
  // sum and mean (and index_add, scatter_add, scatter's "add") are scatter-adds: one kernel
  // that adds src in the order of its positions along dim, so duplicates accumulate the same
  // way every run; there a negative index counts from the end (an index outside -n..n-1 still
  // adds nothing), and the cost is O(src), not O(self x index[dim]).
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self = true) const;
  // PyTorch's scatter_add: scatter_reduce(dim, index, src, "sum").
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int64_t dim, const Tensor& index) const; // index: 1-D or 0-d integers
  // dim nullopt: both flattened. Otherwise indices broadcast with this tensor off `dim`.
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = {}) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;        // mask: bool, broadcastable
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const; // value: 0-d
  // The elements where mask (bool, broadcast with this tensor) is true, as 1-D. The output
  // size depends on the mask's values, so the mask is realized and read on the host.
  Tensor masked_select(const Tensor& mask) const;
  // The same with a fixed length (tinygrad's size=): the first `size` selected elements, then
  // fill_value (in this tensor's dtype). No host read, so it can be captured by TinyJit.
  Tensor masked_select(const Tensor& mask, int64_t size, Scalar fill_value = 0) const;
  // torch.nn.functional.pad: `padding` is flat, last axis first: (left, right, top, bottom,
  // ...), at most one pair per axis; mode "constant" (with value), "reflect", "replicate" or
  // "circular"; negative padding crops. The pair form is one (before, after) per axis.
  // (The flat form is a braced list: t.pad({1, 2}, "reflect"); a vector of pairs is per axis.)
  Tensor pad(std::initializer_list<int64_t> padding, const PadMode& mode = "constant",
             Scalar value = 0) const;
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> padding, const PadMode& mode,
             Scalar value = 0) const;
  Tensor repeat(std::vector<int64_t> repeats) const; // torch.Tensor.repeat (len >= ndim)
  Tensor tile(std::vector<int64_t> dims) const;      // torch.tile (dims padded with leading 1s)
  // Each element `repeats` times along dim (nullopt: of the flattened tensor).
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = {}) const;
  // Element i repeats[i] times (repeats known on the host, one per element along dim).
  Tensor repeat_interleave(const std::vector<int64_t>& repeats,
                           std::optional<int64_t> dim = {}) const;
  // dims empty: the flattened tensor is rolled by shifts[0] and reshaped back.
  Tensor roll(std::vector<int64_t> shifts, std::vector<int64_t> dims = {}) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(std::vector<int64_t> split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor unflatten(int64_t dim, std::vector<int64_t> sizes) const; // one size may be -1
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor movedim(std::vector<int64_t> source, std::vector<int64_t> destination) const;
  Tensor tril(int64_t diagonal = 0) const; // of the last two axes
  Tensor triu(int64_t diagonal = 0) const;
  // 1-D: a square matrix with this on diagonal `diagonal`; 2-D: that diagonal as 1-D.
  Tensor diag(int64_t diagonal = 0) const;
  // torch.diagonal: diagonal `offset` of the planes (dim1, dim2) as a new last axis, the other
  // axes in order before it; a view (an empty axis when the offset leaves the plane).
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  // Integer classes -> int64 one-hot rows (PyTorch). num_classes -1: max + 1, which realizes
  // this tensor to read its maximum. Out-of-range classes give an all-zero row (unchecked).
  Tensor one_hot(int64_t num_classes = -1) const;
  // indexing "ij" (matrix) or "xy" (Cartesian: the first two outputs' axes swapped).
  static std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors,
                                      const std::string& indexing = "ij");
  // ---- nn functional (tensor_nn.cpp, tensor_conv.cpp, tensor_loss.cpp) ----------------------
  // PyTorch's torch.nn.functional as Tensor methods (tinygrad's style), built from the ops above
  // so they fuse and autograd covers them. An optional Tensor argument left out is PyTorch's None.

  // An int or one int per spatial dimension (PyTorch's `int | tuple[int, ...]`).
  struct IntOrTuple {
    std::vector<int64_t> v;
    IntOrTuple(int x) : v{x} {}     // NOLINT(google-explicit-constructor)
    IntOrTuple(int64_t x) : v{x} {} // NOLINT(google-explicit-constructor)
    IntOrTuple(std::initializer_list<int64_t> l) : v(l) {}
    IntOrTuple(std::vector<int64_t> l) : v(std::move(l)) {} // NOLINT(google-explicit-constructor)
  };
  // Convolution padding: an int, one int per spatial dimension, or "same" / "valid".
  struct ConvPadding {
    std::vector<int64_t> v;
    std::string mode;                // "" (use v), "same" or "valid"
    ConvPadding(int x) : v{x} {}     // NOLINT(google-explicit-constructor)
    ConvPadding(int64_t x) : v{x} {} // NOLINT(google-explicit-constructor)
    ConvPadding(std::initializer_list<int64_t> l) : v(l) {}
    ConvPadding(std::vector<int64_t> l) : v(std::move(l)) {} // NOLINT(google-explicit-constructor)
    ConvPadding(const char* m) : mode(m) {}                  // NOLINT(google-explicit-constructor)
    ConvPadding(std::string m) : mode(std::move(m)) {}       // NOLINT(google-explicit-constructor)
  };
  using OptTensor = std::optional<Tensor>;

  // log(softmax(x)) computed max-shifted; log(sum(exp(x))) over `dims`, max-shifted (infinite
  // maxima handled as PyTorch: logsumexp of all -inf is -inf).
  Tensor log_softmax(int64_t dim = -1) const;
  Tensor logsumexp(std::vector<int64_t> dims, bool keepdim = false) const;
  // Einstein summation: "ij,jk->ik", implicit output ("ij,jk"), repeated indices ("ii->i"),
  // "..." for broadcast dimensions.
  static Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
  // x @ weight.T + bias, weight (out_features, in_features) as PyTorch.
  Tensor linear(const Tensor& weight, const OptTensor& bias = {}) const;

  // Convolutions: input (N, C_in, *spatial) or unbatched (C_in, *spatial), weight
  // (C_out, C_in / groups, *kernel); tinygrad's conv2d over a pooled (im2col) view.
  Tensor conv1d(const Tensor& weight, const OptTensor& bias = {}, IntOrTuple stride = 1,
                ConvPadding padding = 0, IntOrTuple dilation = 1, int64_t groups = 1) const;
  Tensor conv2d(const Tensor& weight, const OptTensor& bias = {}, IntOrTuple stride = 1,
                ConvPadding padding = 0, IntOrTuple dilation = 1, int64_t groups = 1) const;
  Tensor conv3d(const Tensor& weight, const OptTensor& bias = {}, IntOrTuple stride = 1,
                ConvPadding padding = 0, IntOrTuple dilation = 1, int64_t groups = 1) const;
  // weight (C_in, C_out / groups, *kernel) as PyTorch.
  Tensor conv_transpose1d(const Tensor& weight, const OptTensor& bias = {}, IntOrTuple stride = 1,
                          IntOrTuple padding = 0, IntOrTuple output_padding = 0, int64_t groups = 1,
                          IntOrTuple dilation = 1) const;
  Tensor conv_transpose2d(const Tensor& weight, const OptTensor& bias = {}, IntOrTuple stride = 1,
                          IntOrTuple padding = 0, IntOrTuple output_padding = 0, int64_t groups = 1,
                          IntOrTuple dilation = 1) const;
  Tensor conv_transpose3d(const Tensor& weight, const OptTensor& bias = {}, IntOrTuple stride = 1,
                          IntOrTuple padding = 0, IntOrTuple output_padding = 0, int64_t groups = 1,
                          IntOrTuple dilation = 1) const;
  // Pooling over the last 1 or 2 dimensions; stride defaults to kernel_size. The indices are
  // PyTorch's: the flat index of the maximum within its (H, W) plane (int32, first maximum).
  // padding: one int, one per spatial dimension (both sides), or 2 per spatial dimension in
  // F.pad's flat order (before, after of the last dimension first; tinygrad's asymmetric form),
  // each side at most half the (effective) kernel.
  Tensor max_pool1d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride = {},
                    IntOrTuple padding = 0, IntOrTuple dilation = 1, bool ceil_mode = false) const;
  Tensor max_pool2d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride = {},
                    IntOrTuple padding = 0, IntOrTuple dilation = 1, bool ceil_mode = false) const;
  std::pair<Tensor, Tensor> max_pool1d_with_indices(IntOrTuple kernel_size,
                                                    std::optional<IntOrTuple> stride = {},
                                                    IntOrTuple padding = 0, IntOrTuple dilation = 1,
                                                    bool ceil_mode = false) const;
  std::pair<Tensor, Tensor> max_pool2d_with_indices(IntOrTuple kernel_size,
                                                    std::optional<IntOrTuple> stride = {},
                                                    IntOrTuple padding = 0, IntOrTuple dilation = 1,
                                                    bool ceil_mode = false) const;
  Tensor avg_pool1d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride = {},
                    IntOrTuple padding = 0, bool ceil_mode = false,
                    bool count_include_pad = true) const;
  Tensor avg_pool2d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride = {},
                    IntOrTuple padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                    std::optional<int64_t> divisor_override = {}) const;
  // PyTorch's bins: output i averages [floor(i*in/out), ceil((i+1)*in/out)).
  Tensor adaptive_avg_pool1d(IntOrTuple output_size) const;
  Tensor adaptive_avg_pool2d(IntOrTuple output_size) const;
  // PyTorch's bins as adaptive_avg_pool; the indices as max_pool's (flat in the plane, int32).
  Tensor adaptive_max_pool1d(IntOrTuple output_size) const;
  Tensor adaptive_max_pool2d(IntOrTuple output_size) const;
  std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(IntOrTuple output_size) const;
  std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(IntOrTuple output_size) const;
  // Pooling over the last 3 dimensions, as the 1-D and 2-D forms.
  Tensor max_pool3d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride = {},
                    IntOrTuple padding = 0, IntOrTuple dilation = 1, bool ceil_mode = false) const;
  std::pair<Tensor, Tensor> max_pool3d_with_indices(IntOrTuple kernel_size,
                                                    std::optional<IntOrTuple> stride = {},
                                                    IntOrTuple padding = 0, IntOrTuple dilation = 1,
                                                    bool ceil_mode = false) const;
  Tensor avg_pool3d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride = {},
                    IntOrTuple padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                    std::optional<int64_t> divisor_override = {}) const;
  // The partial inverse of max_pool: a zero tensor with each value of this one written at its
  // index (flat within the plane, as max_pool*_with_indices gives them; duplicates add). The
  // spatial output size is output_size (its last 1/2/3 entries: leading batch and channel
  // entries are ignored, as PyTorch) or (i - 1) * stride - (before + after padding) +
  // dilation * (kernel - 1) + 1. indices: any integer dtype, this tensor's shape.
  Tensor max_unpool1d(const Tensor& indices, IntOrTuple kernel_size,
                      std::optional<IntOrTuple> stride = {}, IntOrTuple padding = 0,
                      std::optional<std::vector<int64_t>> output_size = {},
                      IntOrTuple dilation = 1) const;
  Tensor max_unpool2d(const Tensor& indices, IntOrTuple kernel_size,
                      std::optional<IntOrTuple> stride = {}, IntOrTuple padding = 0,
                      std::optional<std::vector<int64_t>> output_size = {},
                      IntOrTuple dilation = 1) const;
  Tensor max_unpool3d(const Tensor& indices, IntOrTuple kernel_size,
                      std::optional<IntOrTuple> stride = {}, IntOrTuple padding = 0,
                      std::optional<std::vector<int64_t>> output_size = {},
                      IntOrTuple dilation = 1) const;
  // Resizes the spatial dimensions (all but the first two) to `size`, or by `scale_factor`
  // (one value or one per dimension). mode: "nearest", "nearest-exact", "linear", "bilinear",
  // "trilinear", "bicubic" (A = -0.75, borders clamped) or "area" (adaptive_avg_pool);
  // align_corners only for the linear modes and bicubic. Source positions follow PyTorch.
  Tensor interpolate(std::optional<IntOrTuple> size = {}, std::vector<double> scale_factor = {},
                     const std::string& mode = "nearest",
                     std::optional<bool> align_corners = {}) const;

  // Normalization. layer_norm over the trailing `normalized_shape`; batch_norm over (N, C, *)
  // per channel: batch statistics when training (running stats, when given, are updated with
  // assign() as PyTorch: unbiased variance, `momentum`), else the running statistics.
  Tensor layer_norm(const Shape& normalized_shape, const OptTensor& weight = {},
                    const OptTensor& bias = {}, double eps = 1e-5) const;
  Tensor batch_norm(OptTensor running_mean, OptTensor running_var, const OptTensor& weight = {},
                    const OptTensor& bias = {}, bool training = false, double momentum = 0.1,
                    double eps = 1e-5) const;
  Tensor group_norm(int64_t num_groups, const OptTensor& weight = {}, const OptTensor& bias = {},
                    double eps = 1e-5) const;
  // eps defaults to the dtype's machine epsilon, as PyTorch.
  Tensor rms_norm(const Shape& normalized_shape, const OptTensor& weight = {},
                  std::optional<double> eps = {}) const;
  // Zeroes elements with probability p (threefry rand) and scales the rest by 1/(1-p).
  Tensor dropout(double p = 0.5, bool training = true) const;
  // softmax(q @ k^T * scale + mask) @ v; a bool mask keeps where true. q (..., L, E),
  // k (..., S, E), v (..., S, Ev); scale defaults to 1/sqrt(E). enable_gqa: key and value may
  // have fewer heads (dim -3) than the query, a divisor of its count, each serving that many
  // query heads in turn (grouped-query attention, PyTorch's enable_gqa).
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      const OptTensor& attn_mask = {}, double dropout_p = 0,
                                      bool is_causal = false, std::optional<double> scale = {},
                                      bool enable_gqa = false) const;

  // Losses; reduction is "none", "mean" or "sum". Class-index targets (int) have the input's
  // shape without dim 1 (the class dim); probability targets (float) the input's shape.
  Tensor cross_entropy(const Tensor& target, const OptTensor& weight = {},
                       int64_t ignore_index = -100, const std::string& reduction = "mean",
                       double label_smoothing = 0) const;
  Tensor nll_loss(const Tensor& target, const OptTensor& weight = {}, int64_t ignore_index = -100,
                  const std::string& reduction = "mean") const;
  // tinygrad's: classes on the last dim; ignore_index -1 ignores nothing.
  Tensor sparse_categorical_crossentropy(const Tensor& target, int64_t ignore_index = -1,
                                         double label_smoothing = 0,
                                         const std::string& reduction = "mean") const;
  Tensor binary_cross_entropy(const Tensor& target, const OptTensor& weight = {},
                              const std::string& reduction = "mean") const;
  Tensor binary_cross_entropy_with_logits(const Tensor& target, const OptTensor& weight = {},
                                          const std::string& reduction = "mean",
                                          const OptTensor& pos_weight = {}) const;
  Tensor mse_loss(const Tensor& target, const std::string& reduction = "mean") const;
  Tensor l1_loss(const Tensor& target, const std::string& reduction = "mean") const;
  Tensor smooth_l1_loss(const Tensor& target, const std::string& reduction = "mean",
                        double beta = 1.0) const;

  // ---- PyTorch ops: math, reductions, linear algebra, shape, nn (tensor_torch_*.cpp,
  // tensor_linalg.cpp) ------------------------------------------------------------------------
  // PyTorch's names, arguments and defaults, composed from the ops above (so they fuse and
  // autograd covers them). Float-only math computes integer and bool inputs in float32.
  // docs/OPS.md lists each with its differences from PyTorch.
  Tensor log1p() const;  // log(1 + x) accurate near 0 (Goldberg's u = 1 + x correction)
  Tensor expm1() const;  // exp(x) - 1 accurate near 0 (Kahan's correction)
  Tensor erfc() const;   // 1 - erf(x) with small relative error in the tail (|rel err| < 1.2e-7)
  Tensor erfinv() const; // Giles' single-precision polynomials; +-1 give +-inf, |x| > 1 nan
  Tensor lgamma() const; // log|Gamma(x)|: Lanczos (g = 7) with reflection below 0.5
  Tensor log10() const;
  Tensor asinh() const;
  Tensor atanh() const;
  Tensor acosh() const; // log(x + sqrt(x^2 - 1)), accurate near 1; nan below 1
  Tensor frac() const;  // x - trunc(x), float tensors only
  // log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given.
  Tensor logit(std::optional<double> eps = {}) const;
  Tensor atan2(const Tensor& other) const; // the angle of (other, this), all quadrants, +-0 and inf
  Tensor fmod(const Tensor& other) const;  // C's remainder: the sign of the dividend
  Tensor fmod(Scalar other) const;
  Tensor logaddexp(const Tensor& other) const; // log(exp(a) + exp(b)) without overflow
  Tensor hypot(const Tensor& other) const;     // sqrt(a^2 + b^2) without overflow
  Tensor xlogy(const Tensor& other) const;     // x * log(y), 0 where x == 0 (unless y is nan)
  Tensor xlogy(Scalar other) const;
  // Elementwise bounds (broadcast): min(max(x, min), max); a nan bound gives nan.
  Tensor clamp(const OptTensor& min, const OptTensor& max) const;
  // |a - b| <= atol + rtol * |b|, or equal (infinities); nan equal to nan with equal_nan.
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                 bool equal_nan = false) const;
  // isclose everywhere: reads the answer on the host (a sync point).
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                bool equal_nan = false) const;

  // torch.linalg.vector_norm: ord inf (max |x|), -inf (min |x|), 0 (count of non-zeros), or
  // sum(|x|^ord)^(1/ord); over `dim` (empty: all). Float tensors only.
  Tensor vector_norm(double ord = 2, std::vector<int64_t> dim = {}, bool keepdim = false) const;
  // torch.linalg.matrix_norm over the two `dim` axes: "fro", or ord 1, -1, inf, -inf (max/min
  // absolute column/row sums). "nuc" and ord +-2 need singular values: tg::Error (no SVD).
  Tensor matrix_norm(const std::string& ord = "fro", std::vector<int64_t> dim = {-2, -1},
                     bool keepdim = false) const;
  Tensor matrix_norm(double ord, std::vector<int64_t> dim = {-2, -1}, bool keepdim = false) const;
  // torch.norm: p a number is vector_norm over `dim`; "fro" is the 2-norm over `dim` (all
  // when empty), "nuc" a matrix norm (not supported: no SVD).
  Tensor norm(double p = 2, std::vector<int64_t> dim = {}, bool keepdim = false) const;
  Tensor norm(const std::string& p, std::vector<int64_t> dim = {}, bool keepdim = false) const;
  // The lower of the two middle values (torch.median); nan if any is nan. The dim form also
  // gives the index of that value (of the first nan when there is one).
  Tensor median() const;
  ValuesIndices median(int64_t dim, bool keepdim = false) const;
  // Quantiles q in [0, 1] (host values; a list adds a leading axis of len(q)), over the
  // flattened tensor or `dim`; interpolation "linear", "lower", "higher", "nearest" or
  // "midpoint". nan if a nan is in the slice.
  Tensor quantile(double q, std::optional<int64_t> dim = {}, bool keepdim = false,
                  const std::string& interpolation = "linear") const;
  Tensor quantile(const std::vector<double>& q, std::optional<int64_t> dim = {},
                  bool keepdim = false, const std::string& interpolation = "linear") const;
  Tensor nansum(std::vector<int64_t> dim = {}, bool keepdim = false) const;  // nan counts as 0
  Tensor nanmean(std::vector<int64_t> dim = {}, bool keepdim = false) const; // over the non-nan
  Tensor count_nonzero(std::vector<int64_t> dim = {}) const;                 // int64
  // log(cumsum(exp(x))) along dim, each prefix shifted by its running maximum (tinygrad's:
  // O(n^2) work and memory per row).
  Tensor logcumsumexp(int64_t dim) const;
  // The n-th forward difference along dim, after concatenating prepend and append (bool: xor).
  Tensor diff(int64_t n = 1, int64_t dim = -1, const OptTensor& prepend = {},
              const OptTensor& append = {}) const;

  Tensor trace() const;                   // sum of the diagonal of a 2-D tensor
  Tensor outer(const Tensor& vec2) const; // 1-D x 1-D -> 2-D
  Tensor kron(const Tensor& other) const; // Kronecker product (ranks padded with leading 1s)
  // torch.linalg.cross: the 3-vector cross product along dim (size 3), inputs broadcast.
  Tensor cross(const Tensor& other, int64_t dim = -1) const;
  // Contracts the last `dims` axes of this with the first `dims` of other, or the listed pairs.
  Tensor tensordot(const Tensor& other, int64_t dims = 2) const;
  Tensor tensordot(const Tensor& other, const std::vector<int64_t>& dims_a,
                   const std::vector<int64_t>& dims_b) const;
  Tensor bmm(const Tensor& mat2) const; // (B, n, m) @ (B, m, p), no broadcasting
  // The p-norm distance of every row of this (B?, P, M) to every row of x2 (B?, R, M):
  // (B?, P, R); p >= 0 or inf. Computed from the differences (PyTorch's exact path).
  Tensor cdist(const Tensor& x2, double p = 2) const;

  Tensor rot90(int64_t k = 1, std::vector<int64_t> dims = {0, 1}) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const; // a view; start may be < 0
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  // Tensor.unfold: windows of `size` every `step` along dimension, as a new last axis (a view).
  Tensor unfold(int64_t dimension, int64_t size, int64_t step) const;
  // On a sorted sequence (1-D, or (..., M) matching values' leading dims): for each value the
  // index where it would be inserted to keep the order (the first such, or the last with
  // right / side "right"). int64, or int32 with out_int32. sorter: indices that sort it.
  Tensor searchsorted(const Tensor& values, bool out_int32 = false, bool right = false,
                      const std::string& side = "", const OptTensor& sorter = {}) const;
  // The bucket of each element among 1-D sorted boundaries (searchsorted on the boundaries).
  Tensor bucketize(const Tensor& boundaries, bool out_int32 = false, bool right = false) const;
  // self with alpha * source[i] added at index[i] along dim (duplicates accumulate).
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1) const;
  // The indices of the non-zero elements, (count, ndim) int32 (tinygrad's default int;
  // PyTorch's int64). The count depends on the values, so this realizes the tensor and reads it
  // on the host (a sync point, as PyTorch's).
  Tensor nonzero() const;
  // torch.nonzero_static: (size, ndim) int32, the first `size` rows of nonzero() then rows of
  // fill_value; lazy (no host read).
  Tensor nonzero_static(int64_t size, int64_t fill_value = -1) const;
  Tensor argwhere() const { return nonzero(); }

  Tensor cosine_similarity(const Tensor& x2, int64_t dim = 1, double eps = 1e-8) const;
  Tensor normalize(double p = 2, int64_t dim = 1, double eps = 1e-12) const; // x / max(|x|_p, eps)
  Tensor pixel_shuffle(int64_t upscale_factor) const;     // (*, C r^2, H, W) -> (*, C, H r, W r)
  Tensor pixel_unshuffle(int64_t downscale_factor) const; // the inverse
  Tensor softmin(int64_t dim = -1) const;
  Tensor glu(int64_t dim = -1) const; // a * sigmoid(b) of the two halves along dim
  // max(0, x) + weight * min(0, x); weight has 1 element or one per channel (dim 1).
  Tensor prelu(const Tensor& weight) const;
  // This is log-probabilities; target probabilities (log_target: log-probabilities).
  // reduction "none", "mean" (over all elements), "sum" or "batchmean" (sum / size(0)).
  Tensor kl_div(const Tensor& target, const std::string& reduction = "mean",
                bool log_target = false) const;
  Tensor huber_loss(const Tensor& target, const std::string& reduction = "mean",
                    double delta = 1.0) const;

  // The scalar as a tensor of this one's device and the promoted dtype (tinygrad's rules).
  Tensor scalar_like(Scalar s) const;

  // ---- autograd (gradient.cpp) ----------------------------------------------------------
  // Gradients are derivative rules over the primitive graph nodes (tinygrad's pm_gradient):
  // the backward graph is ordinary lazy tensor ops that schedule and fuse like any other.
  //
  // Whether gradients flow to this tensor. Results of ops on tensors that require grad do too
  // (detach() does not). A tensor marked by requires_grad_(true) is a leaf: backward() fills
  // its grad(). Only floating-point tensors can require grad.
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  // The gradient accumulated by backward(); an undefined Tensor until one reaches this tensor.
  Tensor grad() const;
  void set_grad(Tensor g); // replaces it (an undefined tensor clears it), as `t.grad = g`
  // d(this)/d(leaf) for every leaf with requires_grad in this tensor's graph, added to the
  // leaves' grad(). Without `gradient` this tensor must have one element (d(this) = 1);
  // otherwise `gradient` has this tensor's shape (the vector of the vector-Jacobian product).
  const Tensor& backward(const Tensor& gradient = {}) const;
  // The gradients of this tensor with respect to `targets` (same order and shapes), without
  // touching grad(). Raises tg::Error when a target is not in this tensor's graph.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets,
                               const Tensor& gradient = {}) const;
  // The identity going forward; its gradient is made contiguous (realized as its own buffer).
  Tensor contiguous_backward() const;
  // Training mode (tinygrad's Tensor.training): layers such as dropout read it. Set it for a
  // scope with tg::Train.
  static bool training;

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

// ---- indexing ---------------------------------------------------------------------------------
// None / newaxis inserts an axis of size 1; Ellipsis stands for as many full slices as needed.
struct NewAxis {};
struct EllipsisIndex {};
inline constexpr NewAxis None{}, newaxis{};
inline constexpr EllipsisIndex Ellipsis{};

// One entry of an index: an integer (negative counts from the end), a Slice, None, Ellipsis,
// an integer tensor (or host list) of positions, or a boolean mask tensor.
struct Index {
  enum class Kind { Int, Slice, NewAxis, EllipsisIndex, Tensor, List };
  Kind kind = Kind::Slice;
  int64_t i = 0;             // Int
  tg::Slice slice;           // Slice
  tg::Tensor tensor;         // Tensor
  std::vector<int64_t> list; // List: a host list of positions (Python's t[[0, 2]])

  // Implicit, as Python's index expressions mix these freely. bool is not an index.
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Index(T v)
      : kind(Kind::Int), i(static_cast<int64_t>(v)) {}                                    // NOLINT
  Index(tg::Slice s) : kind(Kind::Slice), slice(s) {}                                     // NOLINT
  Index(NewAxis) : kind(Kind::NewAxis) {}                                                 // NOLINT
  Index(EllipsisIndex) : kind(Kind::EllipsisIndex) {}                                     // NOLINT
  Index(tg::Tensor t) : kind(Kind::Tensor), tensor(std::move(t)) {}                       // NOLINT
  Index(std::vector<int64_t> positions) : kind(Kind::List), list(std::move(positions)) {} // NOLINT
};

// The dtype of host type T (float -> float32, int8_t -> int8, bool -> bool, ...).
template <class T> DType dtype_of();

// Sets Tensor::training for a scope and restores it after (tinygrad's `with Tensor.train():`).
class Train {
public:
  explicit Train(bool mode = true) : prev_(Tensor::training) { Tensor::training = mode; }
  ~Train() { Tensor::training = prev_; }
  Train(const Train&) = delete;
  Train& operator=(const Train&) = delete;

private:
  bool prev_;
};

} // namespace tg
