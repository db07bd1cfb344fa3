// The Tensor handle: state, properties, realizing and reading back, host data in.
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "tensor_internal.hpp"
#include "tg/error.hpp"
#include "tg/ir/float_formats.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/realize.hpp"
#include "tg/schedule.hpp"

namespace tg {

namespace {

// Every live tensor state, so a realize can replace what it computed everywhere.
std::mutex g_live_mu;
std::vector<std::weak_ptr<TensorState>> g_live;
size_t g_live_sweep_at = 1024;

void register_state(const std::shared_ptr<TensorState>& s) {
  std::lock_guard lock(g_live_mu);
  g_live.push_back(s);
  if (g_live.size() >= g_live_sweep_at) {
    std::erase_if(g_live, [](const std::weak_ptr<TensorState>& w) { return w.expired(); });
    g_live_sweep_at = std::max<size_t>(1024, g_live.size() * 2);
  }
}

void merge_buffers(std::vector<std::shared_ptr<Buffer>>& into,
                   const std::vector<std::shared_ptr<Buffer>>& from) {
  for (const auto& b : from)
    if (std::find(into.begin(), into.end(), b) == into.end()) into.push_back(b);
}

// The buffers of `have` that `uop`'s graph still names.
std::vector<std::shared_ptr<Buffer>> reachable(const UOpPtr& uop,
                                               const std::vector<std::shared_ptr<Buffer>>& have) {
  std::unordered_set<const UOp*> nodes;
  for (const UOp* u : uop->toposort())
    if (u->op == Ops::BUFFER) nodes.insert(u);
  std::vector<std::shared_ptr<Buffer>> out;
  for (const auto& b : have)
    if (nodes.count(b->uop().get()) && std::find(out.begin(), out.end(), b) == out.end())
      out.push_back(b);
  return out;
}

// Element codecs between raw bytes of a dtype and ConstValue.
ConstValue decode(const uint8_t* p, DType d) {
  auto rd = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (d.scalar_type) {
  case ScalarType::Bool:
    return *p != 0;
  case ScalarType::Int8:
    return int64_t{rd(int8_t{})};
  case ScalarType::UInt8:
    return int64_t{rd(uint8_t{})};
  case ScalarType::Int16:
    return int64_t{rd(int16_t{})};
  case ScalarType::UInt16:
    return int64_t{rd(uint16_t{})};
  case ScalarType::Int32:
    return int64_t{rd(int32_t{})};
  case ScalarType::UInt32:
    return int64_t{rd(uint32_t{})};
  case ScalarType::Int64:
    return rd(int64_t{});
  case ScalarType::UInt64:
    return static_cast<int64_t>(rd(uint64_t{}));
  case ScalarType::Float16:
    return half_to_float(rd(uint16_t{}));
  case ScalarType::BFloat16:
    return bf16_to_float(rd(uint16_t{}));
  case ScalarType::FP8E4M3:
    return fp8e4m3_to_float(*p);
  case ScalarType::FP8E5M2:
    return fp8e5m2_to_float(*p);
  case ScalarType::Float32:
    return double{rd(float{})};
  case ScalarType::Float64:
    return rd(double{});
  default:
    throw Error("cannot read elements of dtype " + d.name());
  }
}

template <class T> T convert(const ConstValue& v) {
  if constexpr (std::is_same_v<T, bool>)
    return as_bool(v);
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(as_double(v));
  else if constexpr (std::is_unsigned_v<T>)
    return static_cast<T>(static_cast<uint64_t>(as_int(v)));
  else
    return static_cast<T>(as_int(v));
}

} // namespace

template <> DType dtype_of<float>() { return dtypes::float32; }
template <> DType dtype_of<double>() { return dtypes::float64; }
template <> DType dtype_of<bool>() { return dtypes::bool_; }
template <> DType dtype_of<int8_t>() { return dtypes::int8; }
template <> DType dtype_of<uint8_t>() { return dtypes::uint8; }
template <> DType dtype_of<int16_t>() { return dtypes::int16; }
template <> DType dtype_of<uint16_t>() { return dtypes::uint16; }
template <> DType dtype_of<int32_t>() { return dtypes::int32; }
template <> DType dtype_of<uint32_t>() { return dtypes::uint32; }
template <> DType dtype_of<int64_t>() { return dtypes::int64; }
template <> DType dtype_of<uint64_t>() { return dtypes::uint64; }

namespace detail {

Tensor make(UOpPtr uop, const std::vector<const Tensor*>& parents) {
  std::vector<std::shared_ptr<Buffer>> bufs;
  VarVals vals;
  for (const Tensor* p : parents) {
    merge_buffers(bufs, p->state()->buffers);
    merge_var_vals(vals, p->state()->var_vals);
  }
  // Gradients flow into float results of tensors that require them, except through detach.
  bool grad = false;
  if (uop->dtype.is_float() && uop->op != Ops::DETACH)
    for (const Tensor* p : parents) grad = grad || p->state()->requires_grad;
  // An op runs where its first source is (a COPY moves it: its destination).
  Tensor t = parents.empty() || uop->op == Ops::COPY
                 ? Tensor(std::move(uop), std::move(bufs))
                 : Tensor(std::move(uop), std::move(bufs), parents.front()->state()->device);
  t.state()->var_vals = std::move(vals);
  t.state()->requires_grad = grad;
  return t;
}

Tensor with_bindings(Tensor t, const Arg& arg) {
  VarVals& vals = t.state()->var_vals;
  if (const auto* shape = std::get_if<Shape>(&arg)) {
    for (const sint& d : *shape) merge_var_vals(vals, d.bindings());
  } else if (const auto* pairs = std::get_if<PadArg>(&arg)) {
    for (const auto& [a, b] : *pairs) {
      merge_var_vals(vals, a.bindings());
      merge_var_vals(vals, b.bindings());
    }
  }
  return t;
}

Tensor make(UOpPtr uop, std::initializer_list<const Tensor*> parents) {
  return make(std::move(uop), std::vector<const Tensor*>(parents));
}

UOpPtr device_node(const std::string& device) {
  return UOp::make(Ops::DEVICE, dtypes::void_, {}, device);
}

UOpPtr const_node(ConstValue v, DType dtype, const std::string& device, const Shape& shape) {
  const Arg value = std::visit([](auto x) -> Arg { return x; }, cast_const(v, dtype));
  UOpPtr c = UOp::make(Ops::CONST, dtype, {device_node(device)}, value);
  if (shape.empty()) return c;
  c = UOp::make(Ops::RESHAPE, dtype, {c}, Shape(shape.size(), 1));
  if (std::all_of(shape.begin(), shape.end(), [](const sint& d) { return d == 1; })) return c;
  return UOp::make(Ops::EXPAND, dtype, {c}, shape);
}

int64_t normalize_axis(int64_t axis, int64_t ndim, const std::string& what) {
  // A 0-d tensor takes 0 and -1, as PyTorch's reductions do.
  const int64_t n = std::max<int64_t>(ndim, 1);
  const int64_t a = axis < 0 ? axis + n : axis;
  if (a < 0 || a >= n)
    throw Error(what + ": dimension " + std::to_string(axis) + " is out of range for a tensor of " +
                std::to_string(ndim) + " dimension" + (ndim == 1 ? "" : "s") + " (expected " +
                std::to_string(-std::max<int64_t>(ndim, 1)) + ".." +
                std::to_string(std::max<int64_t>(ndim, 1) - 1) + ")");
  return a;
}

void keep_forward(TensorState& s) {
  // (an ASSIGN's graph names the memory it overwrites: it says nothing about gradients)
  if (!s.requires_grad || s.grad_leaf || s.forward || s.uop->op == Ops::ASSIGN) return;
  s.forward = s.uop;
  s.forward_buffers = s.buffers;
}

std::vector<std::shared_ptr<TensorState>> live_states() {
  std::vector<std::shared_ptr<TensorState>> live;
  std::lock_guard lock(g_live_mu);
  for (const auto& w : g_live)
    if (auto s = w.lock()) live.push_back(std::move(s));
  return live;
}

void apply_results(const std::vector<UOpPtr>& roots, const std::vector<UOpPtr>& results,
                   const std::vector<std::shared_ptr<Buffer>>& buffers) {
  std::unordered_map<const UOp*, UOpPtr> replace;
  std::unordered_map<const UOp*, size_t> which;
  for (size_t i = 0; i < roots.size(); ++i) {
    replace.emplace(roots[i].get(), results[i]);
    which.emplace(roots[i].get(), i);
  }
  std::vector<std::shared_ptr<TensorState>> live;
  {
    std::lock_guard lock(g_live_mu);
    for (const auto& w : g_live)
      if (auto s = w.lock()) live.push_back(std::move(s));
  }
  for (const auto& s : live) {
    if (auto it = which.find(s->uop.get()); it != which.end()) {
      keep_forward(*s);
      s->uop = results[it->second];
      s->buffers = {buffers[it->second]};
      continue;
    }
    if (is_buffer_view(s->uop)) continue;
    // Rebuild the graph with every realized node in it replaced by its result.
    UOpPtr rebuilt = substitute(s->uop, replace);
    if (rebuilt == s->uop) continue;
    keep_forward(*s);
    std::vector<std::shared_ptr<Buffer>> all = s->buffers;
    merge_buffers(all, buffers);
    s->uop = rebuilt;
    s->buffers = reachable(s->uop, all);
  }
}

} // namespace detail

Tensor::Tensor(UOpPtr uop, std::vector<std::shared_ptr<Buffer>> buffers)
    : Tensor(uop, std::move(buffers),
             uop && uop->shape() ? node_device(uop.get()) : std::string()) {}

Tensor::Tensor(UOpPtr uop, std::vector<std::shared_ptr<Buffer>> buffers, std::string device) {
  if (!uop) throw Error("Tensor: null graph node");
  if (!uop->shape())
    throw Error("Tensor: " + uop->str() + " is not a tensor-level node (it has no shape)");
  state_ = std::make_shared<TensorState>(
      TensorState{std::move(uop), std::move(buffers), std::move(device)});
  register_state(state_);
}

const TensorState& Tensor::st() const {
  if (!state_) throw Error("operation on an undefined Tensor (default-constructed)");
  return *state_;
}
const UOpPtr& Tensor::uop() const { return st().uop; }
const Shape& Tensor::shape() const { return *st().uop->shape(); }
// Symbolic sizes count with the values bound to their variables.
int64_t Tensor::numel() const { return sint_prod(shape()).eval(st().var_vals); }
int64_t Tensor::size(int64_t dim) const {
  if (ndim() == 0)
    throw Error("size: dimension " + std::to_string(dim) + " of a 0-d tensor (it has no axes)");
  return shape()[static_cast<size_t>(detail::normalize_axis(dim, ndim(), "size"))].eval(
      st().var_vals);
}
const VarVals& Tensor::var_vals() const { return st().var_vals; }
DType Tensor::dtype() const { return st().uop->dtype; }
std::string Tensor::device() const { return st().device; }
std::string Tensor::str() const {
  if (!state_) return "Tensor(undefined)";
  return "Tensor(shape=" + shape_str(shape()) + ", dtype=" + dtype().name() +
         ", device=" + device() + ")";
}

namespace {
// The graphs a realize of `tensors` must compute (views of buffers need nothing), and the
// buffers they read.
std::pair<std::vector<UOpPtr>, std::vector<std::shared_ptr<Buffer>>>
roots_of(const std::vector<Tensor>& tensors) {
  std::vector<UOpPtr> roots;
  std::vector<std::shared_ptr<Buffer>> bufs;
  for (const Tensor& t : tensors) {
    if (is_buffer_view(t.uop())) continue;
    if (std::find(roots.begin(), roots.end(), t.uop()) == roots.end()) roots.push_back(t.uop());
    merge_buffers(bufs, t.state()->buffers);
  }
  // Every ASSIGN a root reads runs in this realize, so it is a root too: its tensors then see
  // the written buffer instead of running the assign a second time later (tinygrad puts
  // assigns in the becomes map the same way).
  const size_t n = roots.size();
  for (size_t i = 0; i < n; ++i)
    for (const UOp* u : roots[i]->toposort())
      if (u->op == Ops::ASSIGN && std::find(roots.begin(), roots.end(), u->ptr()) == roots.end())
        roots.push_back(u->ptr());
  return {roots, bufs};
}
} // namespace

std::vector<ScheduleItem> Tensor::schedule_all(const std::vector<Tensor>& tensors) {
  auto [roots, bufs] = roots_of(tensors);
  if (roots.empty()) return {};
  return create_schedule(roots, bufs).items;
}
std::shared_ptr<Buffer> Tensor::buffer() const {
  const UOpPtr base = base_buffer(uop());
  if (!base) return nullptr;
  for (const auto& b : st().buffers)
    if (b->uop() == base) return b;
  return nullptr;
}

std::vector<ScheduleItem> Tensor::schedule() const { return schedule_all({*this}); }

void Tensor::realize_all(std::vector<Tensor> tensors) {
  auto [roots, bufs] = roots_of(tensors);
  if (roots.empty()) return;
  Schedule s = create_schedule(roots, bufs);
  VarVals vals;
  for (const Tensor& t : tensors) merge_var_vals(vals, t.var_vals());
  run_schedule(s.items, vals);
  detail::apply_results(roots, s.results, s.result_buffers);
}

Tensor& Tensor::realize() {
  realize_all({*this});
  return *this;
}

namespace {
// True when `u` reads the first elements of a buffer in order: a BUFFER, or a prefix of it
// (SHRINK from 0: where a symbolic shape's result lives), reshaped.
bool is_prefix_view(const UOpPtr& u) {
  const UOp* n = u.get();
  while (n->op == Ops::RESHAPE) n = n->src[0].get();
  if (n->op == Ops::SHRINK && std::get<PadArg>(n->arg)[0].first == 0) n = n->src[0].get();
  return n->op == Ops::BUFFER;
}
} // namespace

std::vector<uint8_t> Tensor::to_bytes() const {
  Tensor t = *this;
  t.realize();
  if (!is_prefix_view(t.uop()) || t.st().buffers.empty()) t = t.contiguous().realize();
  std::vector<uint8_t> out(static_cast<size_t>(t.numel()) * dtype().itemsize());
  const UOpPtr base = base_buffer(t.uop());
  for (const auto& b : t.st().buffers)
    if (b->uop() == base) {
      b->copy_out(out.data(), out.size());
      return out;
    }
  throw Error("Tensor::to_bytes: the realized buffer is missing");
}

template <class T> std::vector<T> Tensor::to_vector() const {
  std::vector<uint8_t> bytes = to_bytes();
  const DType d = dtype();
  std::vector<T> out(static_cast<size_t>(numel()));
  if constexpr (!std::is_same_v<T, bool>) {
    if (d == dtype_of<T>()) {
      if (!bytes.empty()) // an empty vector's data() may be null, which memcpy must not get
        std::memcpy(out.data(), bytes.data(), bytes.size());
      return out;
    }
  }
  const size_t item = static_cast<size_t>(d.itemsize());
  for (size_t i = 0; i < out.size(); ++i) out[i] = convert<T>(decode(bytes.data() + i * item, d));
  return out;
}

template <class T> T Tensor::item() const {
  if (numel() != 1)
    throw Error("item(): the tensor has " + std::to_string(numel()) + " elements (shape " +
                shape_str(shape()) + "), item() needs exactly one");
  return to_vector<T>()[0];
}

Tensor Tensor::from_bytes(const void* bytes, size_t nbytes, const Shape& shape, DType dtype,
                          const std::string& device, bool borrow) {
  for (int64_t d : shape)
    if (d < 0) throw Error("from data: negative dimension in shape " + shape_str(shape));
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (static_cast<size_t>(n) * dtype.itemsize() != nbytes)
    throw Error("from data: shape " + shape_str(shape) + " holds " + std::to_string(n) +
                " elements of " + dtype.name() + " but " +
                std::to_string(nbytes / std::max(1, dtype.itemsize())) + " were given");
  const std::string dev = canonical_device(device);
  std::shared_ptr<Buffer> buf;
  if (borrow && Buffer::host_visible(dev)) {
    buf = Buffer::borrow_host(dev, dtype, n, const_cast<void*>(bytes), nullptr);
  } else {
    buf = std::make_shared<Buffer>(dev, dtype, n);
    buf->copy_in(bytes, nbytes);
  }
  UOpPtr u = buf->uop();
  if (shape != Shape{n}) u = UOp::make(Ops::RESHAPE, dtype, {u}, shape);
  return Tensor(u, {buf});
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& data, const Shape& shape,
                           const std::string& device, std::optional<DType> dtype) {
  const DType d = dtype.value_or(dtype_of<T>());
  if (d.itemsize() != static_cast<int>(sizeof(T)))
    throw Error("from_vector: " + std::to_string(sizeof(T)) + "-byte elements cannot be " +
                d.name());
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return from_bytes(bytes.data(), bytes.size(), shape, d, device, false);
  } else {
    return from_bytes(data.data(), data.size() * sizeof(T), shape, d, device, false);
  }
}

template <class T>
Tensor Tensor::from_blob(std::span<T> data, const Shape& shape, const std::string& device,
                         std::optional<DType> dtype) {
  const DType d = dtype.value_or(dtype_of<std::remove_const_t<T>>());
  if (d.itemsize() != static_cast<int>(sizeof(T)))
    throw Error("from_blob: " + std::to_string(sizeof(T)) + "-byte elements cannot be " + d.name());
  return from_bytes(data.data(), data.size_bytes(), shape, d, device, true);
}

#define TG_INSTANTIATE(T)                                                                          \
  template std::vector<T> Tensor::to_vector<T>() const;                                            \
  template T Tensor::item<T>() const;                                                              \
  template Tensor Tensor::from_vector<T>(const std::vector<T>&, const Shape&, const std::string&,  \
                                         std::optional<DType>);                                    \
  template Tensor Tensor::from_blob<T>(std::span<T>, const Shape&, const std::string&,             \
                                       std::optional<DType>);
TG_INSTANTIATE(float)
TG_INSTANTIATE(double)
TG_INSTANTIATE(int8_t)
TG_INSTANTIATE(uint8_t)
TG_INSTANTIATE(int16_t)
TG_INSTANTIATE(uint16_t)
TG_INSTANTIATE(int32_t)
TG_INSTANTIATE(uint32_t)
TG_INSTANTIATE(int64_t)
TG_INSTANTIATE(uint64_t)
#undef TG_INSTANTIATE
template std::vector<bool> Tensor::to_vector<bool>() const;
template bool Tensor::item<bool>() const;
template Tensor Tensor::from_vector<bool>(const std::vector<bool>&, const Shape&,
                                          const std::string&, std::optional<DType>);

} // namespace tg
