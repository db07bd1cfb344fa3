// Shapes of tensor-level nodes. Kernel-level nodes (no shaped source) have none: a null
// pointer, so that they cost no allocation and no reference count.
#include "tg/ir/shape.hpp"

#include <algorithm>

#include "tg/error.hpp"

namespace tg {

namespace {

using ShapePtr = std::shared_ptr<const std::optional<Shape>>;

// Kernel-level nodes hold no shape object at all (UOp::shape() reads a null pointer as
// nullopt): sharing one object would make every node build and free touch its reference count.
ShapePtr no_shape() { return nullptr; }
ShapePtr of(Shape s) { return std::make_shared<const std::optional<Shape>>(std::move(s)); }

[[noreturn]] void fail(Ops op, const std::string& why) {
  throw Error(std::string(op_name(op)) + ": " + why);
}

template <class T> const T& arg_as(Ops op, const Arg& arg, const char* what) {
  if (const T* v = std::get_if<T>(&arg)) return *v;
  fail(op, std::string("arg must be ") + what + ", got " + arg_to_string(arg));
}

const Shape& src_shape(Ops op, std::span<const UOpPtr> src) {
  if (src.empty() || !src[0]->shape()) fail(op, "source has no shape (not a tensor-level node)");
  return *src[0]->shape();
}

} // namespace

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + s[i].str();
  return r + (s.size() == 1 ? ",)" : ")");
}

ShapePtr compute_shape(Ops op, std::span<const UOpPtr> src, const Arg& arg) {
  switch (op) {
  case Ops::BUFFER:
    if (const auto* n = std::get_if<int64_t>(&arg)) return of({*n});
    return no_shape();
  case Ops::IOTA:
    return of({arg_as<int64_t>(op, arg, "the length")});
  case Ops::CONST: // a tensor-level constant lives on a device and is a 0-d tensor
    return (!src.empty() && src[0]->op == Ops::DEVICE) ? of({}) : no_shape();
  case Ops::RESHAPE: {
    const Shape& in = src_shape(op, src);
    const Shape& out = arg_as<Shape>(op, arg, "the new shape");
    if (std::any_of(out.begin(), out.end(), [](const sint& d) { return d.vmin() < 0; }))
      fail(op, "negative dimension in " + shape_str(out));
    // Symbolic sizes must agree as expressions (the simplifier orders their terms).
    const sint n_in = sint_prod(in), n_out = sint_prod(out);
    if (!(n_in == n_out))
      fail(op, "cannot reshape " + shape_str(in) + " (" + n_in.str() + " elements) to " +
                   shape_str(out) + " (" + n_out.str() + " elements)");
    return of(out);
  }
  case Ops::CUSTOM_VJP: // its value is src[0]; the other sources only feed its gradient
    if (src.empty()) fail(op, "needs its value as source 0");
    return src[0]->shape_ptr();
  case Ops::SCATTER_ADD: { // (V, H) base, (T, H) rows, (T, H) values
    if (src.size() != 3 || !src[0]->shape() || !src[1]->shape() || !src[2]->shape())
      fail(op, "takes a base, rows and values, all tensor-level");
    const Shape &base = *src[0]->shape(), &rows = *src[1]->shape(), &vals = *src[2]->shape();
    if (base.size() != 2 || rows.size() != 2 || rows != vals || !(rows[1] == base[1]))
      fail(op, "base " + shape_str(base) + ", rows " + shape_str(rows) + " and values " +
                   shape_str(vals) + " must be (V, H), (T, H) and (T, H)");
    return src[0]->shape_ptr();
  }
  case Ops::EXPAND: {
    const Shape& in = src_shape(op, src);
    const Shape& out = arg_as<Shape>(op, arg, "the new shape");
    bool ok = in.size() == out.size();
    for (size_t i = 0; ok && i < in.size(); ++i) ok = in[i] == out[i] || in[i] == 1;
    if (!ok) fail(op, "cannot expand " + shape_str(in) + " to " + shape_str(out));
    return of(out);
  }
  case Ops::PERMUTE: {
    const Shape& in = src_shape(op, src);
    const Shape& perm = arg_as<Shape>(op, arg, "a permutation");
    Shape sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    bool ok = perm.size() == in.size();
    for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
    if (!ok) fail(op, shape_str(perm) + " is not a permutation of the axes of " + shape_str(in));
    Shape out(in.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = in[static_cast<size_t>(perm[i])];
    return of(out);
  }
  case Ops::PAD:
  case Ops::SHRINK: {
    const Shape& in = src_shape(op, src);
    const PadArg& p = arg_as<PadArg>(op, arg, "one (before, after) pair per axis");
    if (p.size() != in.size())
      fail(op, std::to_string(p.size()) + " pairs for the " + std::to_string(in.size()) +
                   " axes of " + shape_str(in));
    Shape out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const auto& [a, b] = p[i];
      if (op == Ops::PAD) {
        if (a.vmin() < 0 || b.vmin() < 0) fail(op, "negative padding on axis " + std::to_string(i));
        out[i] = sint::add(sint::add(in[i], a), b);
      } else {
        // With symbols the range must hold for every value of the variables.
        const sint len = sint::sub(b, a);
        if (a.vmin() < 0 || len.vmin() < 0 || sint::sub(b, in[i]).vmax() > 0)
          fail(op, "range [" + a.str() + ", " + b.str() + ") of axis " + std::to_string(i) +
                       " is outside 0.." + in[i].str() + " of " + shape_str(in));
        out[i] = len;
      }
    }
    return of(out);
  }
  case Ops::FLIP: {
    const Shape& in = src_shape(op, src);
    const Shape& flags = arg_as<Shape>(op, arg, "one 0/1 flag per axis");
    if (flags.size() != in.size())
      fail(op, std::to_string(flags.size()) + " flags for the " + std::to_string(in.size()) +
                   " axes of " + shape_str(in));
    return src[0]->shape_ptr();
  }
  case Ops::REDUCE: {
    const auto* r = std::get_if<ReduceArg>(&arg);
    if (r == nullptr || r->axes.empty() || src.empty() || !src[0]->shape()) return no_shape();
    Shape out = *src[0]->shape();
    for (int64_t ax : r->axes) {
      if (ax < 0 || ax >= static_cast<int64_t>(out.size()))
        fail(op, "axis " + std::to_string(ax) + " out of range for " + shape_str(out));
      out[static_cast<size_t>(ax)] = 1;
    }
    return of(out);
  }
  default:
    break;
  }
  // Elementwise and pass-through ops: every shaped source must agree.
  if (!(GroupOp::ALU.contains(op) || op == Ops::CAST || op == Ops::BITCAST ||
        op == Ops::CONTIGUOUS || op == Ops::DETACH || op == Ops::CONTIGUOUS_BACKWARD ||
        op == Ops::COPY || op == Ops::ASSIGN))
    return no_shape();
  const UOp* first = nullptr;
  for (const UOpPtr& s : src) {
    if (!s->shape()) continue;
    if (first == nullptr)
      first = s.get();
    else if (*s->shape() != *first->shape())
      fail(op, "sources have different shapes " + shape_str(*first->shape()) + " and " +
                   shape_str(*s->shape()) + "; broadcast them to one shape first");
  }
  // Share the source's shape object: elementwise chains allocate no shapes.
  return first == nullptr ? no_shape() : first->shape_ptr();
}

} // namespace tg
