// Rangeify: one realized node -> one kernel AST (see rangeify.hpp).
#include "rangeify.hpp"

#include <map>
#include <numeric>
#include <tuple>

#include "tg/error.hpp"
#include "tg/ir/shape.hpp"

namespace tg::sched {

int64_t shape_numel(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

int64_t shape_numel_max(const Shape& s) { return sint_prod(s).vmax(); }

namespace {

using Index = std::vector<UOpPtr>; // one index expression per axis of a node's shape

UOpPtr iconst(int64_t v) { return UOp::const_(dtypes::index, v); }

// Row-major element number of `idx` in `shape`.
UOpPtr flat_index(const Index& idx, const Shape& shape) {
  UOpPtr flat = iconst(0);
  sint stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1) flat = flat + idx[i] * stride;
    stride = sint::mul(stride, shape[i]);
  }
  return flat;
}

// The index of a RESHAPE's source from the index of its result. Axes are matched in groups of
// equal element count, so only a group whose axes really change is divided and taken modulo.
// Symbolic counts match as expressions; the side with the smaller bound grows first.
Index reshape_index(const Index& idx, const Shape& out, const Shape& in) {
  Index r(in.size());
  size_t i = 0, j = 0;
  while (i < out.size() || j < in.size()) {
    const size_t i0 = i, j0 = j;
    sint po = 1, pi = 1;
    if (i < out.size()) po = out[i++];
    if (j < in.size()) pi = in[j++];
    while (!(po == pi)) {
      if (i < out.size() && (po.vmax() < pi.vmax() || j >= in.size()))
        po = sint::mul(po, out[i++]);
      else if (j < in.size())
        pi = sint::mul(pi, in[j++]);
      else
        throw Error("rangeify: reshape of " + shape_str(in) + " to " + shape_str(out) +
                    ": axes do not match");
    }
    if (i - i0 == 1 && j - j0 == 1) { // the same axis
      r[j0] = idx[i0];
      continue;
    }
    UOpPtr flat = iconst(0);
    sint stride = 1;
    for (size_t k = i; k-- > i0;) {
      if (out[k] != 1) flat = flat + idx[k] * stride;
      stride = sint::mul(stride, out[k]);
    }
    stride = 1;
    for (size_t k = j; k-- > j0;) {
      if (in[k] == 1)
        r[k] = iconst(0);
      else if (k == j0)
        r[k] = flat / stride;
      else
        r[k] = (flat / stride) % in[k];
      stride = sint::mul(stride, in[k]);
    }
  }
  return r;
}

UOpPtr and_valid(const UOpPtr& a, const UOpPtr& b) {
  if (!a) return b;
  if (!b) return a;
  return a.get()->alu(Ops::AND, {b});
}

class KernelBuilder {
public:
  KernelBuilder(const std::function<bool(const UOp*)>& is_stored, KernelSlots& slots,
                const UOp* root)
      : is_stored_(is_stored), slots_(slots), root_(root) {}

  int64_t next_range_id() { return next_range_++; }

  UOpPtr param(const UOp* node, DType dtype, int64_t size) {
    for (size_t i = 0; i < slots_.nodes.size(); ++i)
      if (slots_.nodes[i] == node)
        return UOp::make(Ops::PARAM, dtype.ptr(size), {}, static_cast<int64_t>(i));
    slots_.nodes.push_back(node);
    return UOp::make(Ops::PARAM, dtype.ptr(size), {},
                     static_cast<int64_t>(slots_.nodes.size() - 1));
  }

  // The value of tensor-level node `u` at index `idx`, with `valid` (bool or null) the
  // condition under which the element is read at all (gates loads under a PAD).
  UOpPtr value(const UOpPtr& u, const Index& idx, const UOpPtr& valid) {
    Key key{u.get(), {}, valid.get()};
    key.idx.reserve(idx.size());
    for (const UOpPtr& i : idx) key.idx.push_back(i.get());
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    UOpPtr r = compute(u, idx, valid);
    memo_.emplace(std::move(key), r);
    // The key holds raw pointers: keep its nodes alive so no other node takes their address.
    keep_.insert(keep_.end(), idx.begin(), idx.end());
    if (valid) keep_.push_back(valid);
    return r;
  }

  // Where the element at `idx` of a movement chain over a stored node lives: its PARAM, flat
  // index, and validity. Used for ASSIGN targets.
  std::pair<UOpPtr, UOpPtr> address(const UOpPtr& u, const Index& idx) {
    if (u->op == Ops::BUFFER || u->op == Ops::ASSIGN || (u.get() != root_ && is_stored_(u.get())))
      return {param(u.get(), u->dtype, shape_numel_max(*u->shape())), flat_index(idx, *u->shape())};
    switch (u->op) {
    case Ops::RESHAPE:
    case Ops::PERMUTE:
    case Ops::SHRINK:
    case Ops::FLIP:
      return address(u->src[0], movement_index(*u, idx));
    default:
      throw Error("assign: the target must be a buffer seen through reshape, permute, shrink "
                  "or flip; got " +
                  std::string(op_name(u->op)));
    }
  }

private:
  struct Key {
    const UOp* node;
    std::vector<const UOp*> idx;
    const UOp* valid;
    bool operator<(const Key& o) const {
      return std::tie(node, idx, valid) < std::tie(o.node, o.idx, o.valid);
    }
  };

  // The source index of a movement op that maps indices one to one (no PAD or EXPAND).
  Index movement_index(const UOp& u, const Index& idx) {
    const Shape& in = *u.src[0]->shape();
    const Shape& out = *u.shape();
    switch (u.op) {
    case Ops::RESHAPE:
      return reshape_index(idx, out, in);
    case Ops::PERMUTE: {
      const Shape& perm = std::get<Shape>(u.arg);
      Index r(in.size());
      for (size_t i = 0; i < perm.size(); ++i) r[static_cast<size_t>(perm[i])] = idx[i];
      return r;
    }
    case Ops::EXPAND: {
      Index r(in.size());
      for (size_t i = 0; i < in.size(); ++i) r[i] = in[i] == 1 ? iconst(0) : idx[i];
      return r;
    }
    case Ops::SHRINK: {
      const PadArg& p = std::get<PadArg>(u.arg);
      Index r(in.size());
      for (size_t i = 0; i < in.size(); ++i) r[i] = p[i].first == 0 ? idx[i] : idx[i] + p[i].first;
      return r;
    }
    case Ops::FLIP: {
      const Shape& f = std::get<Shape>(u.arg);
      Index r(in.size());
      for (size_t i = 0; i < in.size(); ++i)
        r[i] = f[i] == 0 ? idx[i] : sint::sub(in[i], 1).uop() - idx[i];
      return r;
    }
    default:
      throw Error("rangeify: not a movement op: " + u.str());
    }
  }

  UOpPtr load(const UOpPtr& u, const Index& idx, const UOpPtr& valid) {
    UOpPtr buf = param(u.get(), u->dtype, shape_numel_max(*u->shape()));
    UOpPtr flat = flat_index(idx, *u->shape());
    if (!valid)
      return UOp::make(Ops::LOAD, u->dtype, {UOp::make(Ops::INDEX, buf->dtype, {buf, flat})});
    UOpPtr index = UOp::make(Ops::INDEX, buf->dtype, {buf, flat, valid});
    return UOp::make(Ops::LOAD, u->dtype, {index, UOp::const_(u->dtype, 0)});
  }

  UOpPtr compute(const UOpPtr& u, const Index& idx, const UOpPtr& valid) {
    // Nothing is ever read from an empty tensor (a PAD around it is never valid there).
    if (u->shape() && sint_prod(*u->shape()) == 0 && u.get() != root_)
      return UOp::const_(u->dtype, 0);
    if (u.get() != root_ && (u->op == Ops::BUFFER || is_stored_(u.get())))
      return load(u, idx, valid);
    switch (u->op) {
    case Ops::CONST:
      return UOp::const_(u->dtype, u->const_value());
    case Ops::IOTA:
      return idx[0]->dtype == u->dtype ? idx[0] : idx[0].get()->cast(u->dtype);
    case Ops::DETACH:
    case Ops::CONTIGUOUS_BACKWARD:
    case Ops::CONTIGUOUS:
      return value(u->src[0], idx, valid);
    case Ops::RESHAPE:
    case Ops::PERMUTE:
    case Ops::EXPAND:
    case Ops::SHRINK:
    case Ops::FLIP:
      return value(u->src[0], movement_index(*u, idx), valid);
    case Ops::PAD: {
      const PadArg& p = std::get<PadArg>(u->arg);
      const Shape& in = *u->src[0]->shape();
      Index r(in.size());
      UOpPtr cond;
      for (size_t i = 0; i < in.size(); ++i) {
        const auto& [before, after] = p[i];
        r[i] = before == 0 ? idx[i] : idx[i] - before;
        if (!(before == 0)) cond = and_valid(cond, sint::sub(before, 1).uop()->lt(idx[i]));
        if (!(after == 0)) cond = and_valid(cond, idx[i]->lt(sint::add(before, in[i]).uop()));
      }
      if (!cond) return value(u->src[0], r, valid);
      UOpPtr inner = value(u->src[0], r, and_valid(valid, cond));
      return cond.get()->where(inner, UOp::const_(u->dtype, 0));
    }
    case Ops::REDUCE: {
      const auto& ra = std::get<ReduceArg>(u->arg);
      const Shape& in = *u->src[0]->shape();
      Index r = idx;
      std::vector<UOpPtr> ranges;
      for (int64_t ax : ra.axes) {
        const auto a = static_cast<size_t>(ax);
        if (in[a] == 0) { // an empty reduction is its identity
          ConstValue id = ra.op == Ops::ADD   ? ConstValue{int64_t{0}}
                          : ra.op == Ops::MUL ? ConstValue{int64_t{1}}
                                              : dtype_min(u->dtype);
          return UOp::const_(u->dtype, id);
        }
        if (in[a] == 1) {
          r[a] = iconst(0);
          continue;
        }
        r[a] = UOp::range(in[a].uop(), next_range_id(), AxisType::Reduce);
        ranges.push_back(r[a]);
      }
      UOpPtr v = value(u->src[0], r, valid);
      if (ranges.empty()) return v;
      std::vector<UOpPtr> src{v};
      src.insert(src.end(), ranges.begin(), ranges.end());
      return UOp::make(Ops::REDUCE, u->dtype, std::move(src), ReduceArg{ra.op, {}});
    }
    case Ops::CAST:
    case Ops::BITCAST:
      return UOp::make(u->op, u->dtype, {value(u->src[0], idx, valid)});
    default:
      break;
    }
    if (GroupOp::ALU.contains(u->op)) {
      std::vector<UOpPtr> src;
      src.reserve(u->src.size());
      for (const UOpPtr& s : u->src) src.push_back(value(s, idx, valid));
      return UOp::make(u->op, u->dtype, std::move(src), u->arg);
    }
    throw Error("rangeify: cannot put " + u->str() + " in a kernel");
  }

  const std::function<bool(const UOp*)>& is_stored_;
  KernelSlots& slots_;
  const UOp* root_;
  int64_t next_range_ = 0;
  std::map<Key, UOpPtr> memo_;
  std::vector<UOpPtr> keep_; // the memo keys' index and validity nodes
};

} // namespace

UOpPtr build_kernel(const UOpPtr& root, const std::function<bool(const UOp*)>& is_stored,
                    KernelSlots& slots) {
  slots.nodes.clear();
  KernelBuilder kb(is_stored, slots, root.get());
  const Shape& shape = *root->shape();
  Index idx(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    idx[i] = shape[i] == 1 ? iconst(0)
                           : UOp::range(shape[i].uop(), kb.next_range_id(), AxisType::Global);

  UOpPtr target, flat, value;
  if (root->op == Ops::ASSIGN) {
    std::tie(target, flat) = kb.address(root->src[0], idx);
    value = kb.value(root->src[1], idx, nullptr);
  } else {
    target = kb.param(root.get(), root->dtype, shape_numel_max(shape));
    flat = flat_index(idx, shape);
    value = kb.value(root->op == Ops::SCATTER_ADD ? root->src[0] : root, idx, nullptr);
  }
  UOpPtr store = UOp::make(Ops::STORE, dtypes::void_,
                           {UOp::make(Ops::INDEX, target->dtype, {target, flat}), value});
  return UOp::sink({store});
}

UOpPtr build_scatter_add_kernel(const UOpPtr& root,
                                const std::function<bool(const UOp*)>& is_stored,
                                KernelSlots& slots) {
  slots.nodes.clear();
  KernelBuilder kb(is_stored, slots, root.get());
  const Shape& base = *root->shape();
  const Shape& rows_shape = *root->src[1]->shape();
  const sint &n_rows = base[0], &width = base[1];
  // h outside (id 0: it may become work items), t inside (id 1: one at a time, in order).
  const UOpPtr h =
      width == 1 ? iconst(0) : UOp::range(width.uop(), kb.next_range_id(), AxisType::Global);
  const UOpPtr t = UOp::range(rows_shape[0].uop(), kb.next_range_id(), AxisType::Sequential);
  const Index at{t, h};
  const UOpPtr out = kb.param(root.get(), root->dtype, shape_numel_max(base)); // slot 0
  UOpPtr row = kb.value(root->src[1], at, nullptr);
  if (row->dtype != dtypes::index) row = row.get()->cast(dtypes::index);
  const UOpPtr n = n_rows.uop();
  row = row->lt(iconst(0)).get()->where(row + n, row);
  const UOpPtr valid = and_valid(iconst(-1)->lt(row), row->lt(n));
  const UOpPtr index = UOp::make(Ops::INDEX, out->dtype, {out, row * width.uop() + h, valid});
  const UOpPtr old = UOp::make(Ops::LOAD, root->dtype, {index, UOp::const_(root->dtype, 0)});
  const UOpPtr sum = old + kb.value(root->src[2], at, nullptr);
  return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {index, sum})});
}

} // namespace tg::sched
