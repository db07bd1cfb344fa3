// Expansion (tinygrad's expander): Upcast and Unroll RANGEs become vector lanes.
//
// Each node depends on a set of those ranges, its axes (a REDUCE drops the Unroll ranges it
// reduces). Its value becomes a vector with one lane per combination of the axes' values, the
// axes in range id order, the first the slowest (mixed radix). Operands that depend on fewer
// axes are lined up with a GEP (or a VECTORIZE / vector CONST for a scalar). Index arithmetic
// (nodes without a LOAD or REDUCE below them) stays scalar: lane l of such a node is the node
// with every range replaced by its value in lane l, simplified (an address computed from a
// loaded value, a gather's, applies its ops lane by lane to that value's lanes); a LOAD or STORE
// takes the lanes of its address as INDEX(buf, VECTORIZE(lanes)) and devectorize turns runs of
// consecutive addresses into vector accesses. A REDUCE over Unroll ranges first combines those
// lanes with its op (tinygrad's CONTRACT), then reduces what is left on a vector of the other
// lanes.
//
// A WMMA from the TC opt (its arg: wmma_axes.hpp) consumes, from A and B, the lanes of the
// ranges its fragments run over (tinygrad's CONTRACT of tc_upcast_axes) and yields C's
// fragment ranges (UNROLL): its axes are the other axes of its operands plus C's fragment
// ranges. For each combination of the other axes' values it becomes one WMMA of the fragments'
// lanes in the tensor core's order, named as the renderer knows it (TensorCore::name), and its
// lanes are those WMMAs' lanes in the node's axis order.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <unordered_map>

#include <boost/container/small_vector.hpp>

#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"
#include "wmma_axes.hpp"

namespace tg {

namespace {

using Axes = std::vector<const UOp*>; // Upcast/Unroll RANGEs, sorted by id
using SubstMap = std::unordered_map<const UOp*, UOpPtr>;

int64_t rid(const UOp* r) { return std::get<RangeArg>(r->arg).id; }
int64_t size_of(const UOp* r) { return r->src[0]->ivmin(); }

int64_t width(const Axes& a) {
  int64_t w = 1;
  for (const UOp* r : a) w *= size_of(r);
  return w;
}

Axes axes_union(const Axes& a, const Axes& b) {
  Axes out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
                 [](const UOp* x, const UOp* y) { return rid(x) < rid(y); });
  return out;
}

DType vdt(DType d, int64_t w) {
  return w == 1 ? d.scalar() : d.scalar().vec(static_cast<uint16_t>(w));
}

// The value of each axis in lane `l` of `a`.
std::vector<int64_t> digits(const Axes& a, int64_t l) {
  std::vector<int64_t> d(a.size());
  for (size_t i = a.size(); i-- > 0;) {
    d[i] = l % size_of(a[i]);
    l /= size_of(a[i]);
  }
  return d;
}

// For each lane of `to`, the lane of `from` (a subset of `to`) with the same axis values. The
// lanes of `to` are counted like an odometer (its last axis fastest); each of its axes moves
// the lane of `from` by that axis's stride there (0 for an axis `from` lacks).
std::vector<int64_t> lane_map(const Axes& from, const Axes& to) {
  const size_t n = to.size();
  boost::container::small_vector<int64_t, 8> size(n), stride(n, 0), digit(n, 0);
  for (size_t i = 0; i < n; ++i) size[i] = size_of(to[i]);
  int64_t s = 1;
  for (size_t k = from.size(); k-- > 0;) {
    const auto pos = static_cast<size_t>(std::find(to.begin(), to.end(), from[k]) - to.begin());
    if (pos == n)
      throw Error("codegen: expander: a lane map's axes are not a subset of its target's");
    stride[pos] = s;
    s *= size[pos];
  }
  std::vector<int64_t> out(static_cast<size_t>(width(to)));
  int64_t f = 0;
  for (int64_t& lane : out) {
    lane = f;
    for (size_t i = n; i-- > 0;) { // the next lane of `to`
      f += stride[i];
      if (++digit[i] < size[i]) break;
      f -= stride[i] * size[i];
      digit[i] = 0;
    }
  }
  return out;
}

class Expander {
public:
  Expander(const UOpPtr& ast, int64_t max_vertical_lanes)
      : max_vertical_lanes_(max_vertical_lanes) {
    for (const UOp* u : ast->toposort())
      if (u->op == Ops::RANGE) range_by_id_[rid(u)] = u;
    for (const UOp* u : ast->toposort()) {
      Axes a;
      if (u->op == Ops::WMMA) {
        const auto frag = wmma_fragments(*u);
        for (size_t op = 0; op < 3; ++op)
          for (const UOp* r : axes_.at(u->src[op].get()))
            if (std::find(frag[op].begin(), frag[op].end(), r) == frag[op].end())
              a = axes_union(a, {r});
        a = axes_union(a, sorted(frag[2]));
      } else if (u->op == Ops::RANGE) {
        const AxisType t = std::get<RangeArg>(u->arg).type;
        if (t == AxisType::Upcast || t == AxisType::Unroll) {
          if (!u->src[0]->is_const())
            throw Error("codegen: expand: an Upcast/Unroll range needs a constant size: " +
                        u->str());
          a = {u};
        }
      } else if (u->op == Ops::REDUCE) {
        for (const UOp* r : axes_.at(u->src[0].get()))
          if (std::find_if(u->src.begin() + 1, u->src.end(),
                           [&](const UOpPtr& s) { return s.get() == r; }) == u->src.end())
            a.push_back(r);
      } else {
        for (const auto& s : u->src) a = axes_union(a, axes_.at(s.get()));
      }
      bool touched = !a.empty();
      bool pure = u->op == Ops::CONST || u->op == Ops::RANGE || u->op == Ops::DEFINE_VAR ||
                  u->op == Ops::SPECIAL || GroupOp::ALU.contains(u->op) || u->op == Ops::CAST ||
                  u->op == Ops::BITCAST;
      for (const auto& s : u->src) {
        touched |= touched_.at(s.get());
        pure &= pure_.at(s.get());
      }
      axes_[u] = std::move(a);
      touched_[u] = touched;
      pure_[u] = pure;
    }
  }

  UOpPtr run(const UOpPtr& sink) {
    std::vector<UOpPtr> src;
    for (const auto& s : sink->src) src.push_back(vec(s));
    return sink->replace_src(std::move(src));
  }

private:
  int64_t max_vertical_lanes_; // see vertical_ok
  std::unordered_map<int64_t, const UOp*> range_by_id_;
  std::unordered_map<const UOp*, Axes> axes_;
  std::unordered_map<const UOp*, bool> touched_, pure_;
  std::unordered_map<const UOp*, UOpPtr> vec_;
  // take_lanes results, each with its key's node (kept alive so its address stays unique)
  std::map<std::pair<const UOp*, std::vector<int64_t>>, std::pair<UOpPtr, UOpPtr>> take_memo_;
  std::unordered_map<const UOp*, std::vector<UOpPtr>> lanes_;

  // The lanes of index arithmetic that is affine in its axes, as one node and an offset per
  // lane: lane l is simplify_add_const(base, off[l]). An Upcast/Unroll range is 0 plus its
  // value; a sum adds its sources' bases once and their offsets lane by lane; a product by a
  // constant scales both; a node without axes is its own base. symbolic() keeps an integer
  // sum in one canonical form whose constant is the only part a lane's offset changes (the
  // premise of simplify_add_const, which ir.symbolic_property checks), so these are the lanes
  // op_over_lanes would give, at one rewrite per node instead of one per node and lane.
  struct Affine {
    UOpPtr base;
    std::vector<int64_t> off; // one per lane of the node's axes
  };
  std::unordered_map<const UOp*, std::optional<Affine>> affine_;

  const std::optional<Affine>& affine(const UOpPtr& u) {
    if (auto it = affine_.find(u.get()); it != affine_.end()) return it->second;
    std::optional<Affine> r = affine_uncached(u);
    return affine_.emplace(u.get(), std::move(r)).first->second;
  }
  std::optional<Affine> affine_uncached(const UOpPtr& u) {
    const DType dt = u->dtype;
    if (dt.is_ptr || dt.count != 1 || !dt.is_int() || dt.is_unsigned()) return std::nullopt;
    // Only index arithmetic: a loaded value's lanes come from its expanded load (lanes()).
    if (!pure_.at(u.get())) return std::nullopt;
    const Axes& a = axes_.at(u.get());
    if (a.empty()) return Affine{u, {0}}; // every lane is the node itself, as lanes() has it
    if (u->op == Ops::RANGE) { // Upcast/Unroll (only those have axes): lane l is the value l
      std::vector<int64_t> off(static_cast<size_t>(size_of(u.get())));
      for (size_t l = 0; l < off.size(); ++l) off[l] = static_cast<int64_t>(l);
      return Affine{UOp::int_const(dt, 0), std::move(off)};
    }
    if (u->src.size() != 2 || !std::holds_alternative<std::monostate>(u->arg) ||
        u->src[0]->dtype != dt || u->src[1]->dtype != dt)
      return std::nullopt;
    if (u->op == Ops::ADD) {
      const auto &x = affine(u->src[0]), &y = affine(u->src[1]);
      if (!x || !y) return std::nullopt;
      const auto mx = lane_map(axes_.at(u->src[0].get()), a);
      const auto my = lane_map(axes_.at(u->src[1].get()), a);
      std::vector<int64_t> off(mx.size());
      for (size_t l = 0; l < off.size(); ++l)
        if (__builtin_add_overflow(x->off[static_cast<size_t>(mx[l])],
                                   y->off[static_cast<size_t>(my[l])], &off[l]))
          return std::nullopt;
      return Affine{simplify(UOp::make(Ops::ADD, dt, {x->base, y->base})), std::move(off)};
    }
    if (u->op == Ops::MUL) {
      const size_t k = u->src[1]->is_const() ? 1 : u->src[0]->is_const() ? 0 : 2;
      if (k == 2 || !std::holds_alternative<int64_t>(u->src[k]->arg)) return std::nullopt;
      const int64_t c = std::get<int64_t>(u->src[k]->arg);
      const UOpPtr& other = u->src[1 - k];
      const auto& x = affine(other);
      if (!x) return std::nullopt;
      const auto mx = lane_map(axes_.at(other.get()), a);
      std::vector<int64_t> off(mx.size());
      for (size_t l = 0; l < off.size(); ++l)
        if (__builtin_mul_overflow(x->off[static_cast<size_t>(mx[l])], c, &off[l]))
          return std::nullopt;
      std::vector<UOpPtr> src(2);
      src[k] = u->src[k];
      src[1 - k] = x->base;
      return Affine{simplify(UOp::make(Ops::MUL, dt, std::move(src))), std::move(off)};
    }
    return std::nullopt;
  }

  // Scalar lanes of index arithmetic over its own axes.
  const std::vector<UOpPtr>& lanes(const UOpPtr& u) {
    auto it = lanes_.find(u.get());
    if (it != lanes_.end()) return it->second;
    const Axes& a = axes_.at(u.get());
    std::vector<UOpPtr> out;
    const int64_t w = width(a);
    if (!pure_.at(u.get())) {
      // Arithmetic on a loaded value (a gather's address: table row idx[t] of the indexed
      // tensor): lane l applies the op to its sources' lanes l, so a value that is the same in
      // every lane stays one scalar and the lanes' addresses still differ by constants.
      // A loaded value itself is a lane of its expanded load.
      const bool arith =
          GroupOp::ALU.contains(u->op) || u->op == Ops::CAST || u->op == Ops::BITCAST;
      if (a.empty() || !arith) {
        const UOpPtr v = vec(u);
        for (int64_t l = 0; l < w; ++l)
          out.push_back(a.empty() ? v : UOp::make(Ops::GEP, u->dtype.scalar(), {v}, Shape{l}));
      } else {
        out = op_over_lanes(u, a, u->dtype.scalar());
      }
      return lanes_.emplace(u.get(), std::move(out)).first->second;
    }
    if (!a.empty()) {
      if (const auto& af = affine(u)) {
        for (const int64_t off : af->off) out.push_back(simplify_add_const(af->base, off));
        return lanes_.emplace(u.get(), std::move(out)).first->second;
      }
      if (GroupOp::ALU.contains(u->op) || u->op == Ops::CAST || u->op == Ops::BITCAST) {
        // graph_rewrite rewrites a node's sources before the node, and a node's result does not
        // depend on where it is met, so this is simplify(substitute(u, lane digits)) without
        // substituting and walking u's whole graph once per lane and per node that asks.
        out = op_over_lanes(u, a, u->dtype);
        return lanes_.emplace(u.get(), std::move(out)).first->second;
      }
    }
    for (int64_t l = 0; l < w; ++l) {
      if (a.empty()) {
        out.push_back(u);
        break;
      }
      SubstMap m;
      const auto d = digits(a, l);
      for (size_t i = 0; i < a.size(); ++i) m[a[i]] = UOp::const_(a[i]->dtype, d[i]);
      out.push_back(simplify(substitute(u, m)));
    }
    return lanes_.emplace(u.get(), std::move(out)).first->second;
  }

  // simplify(op over `src`), whose sources are lanes, each simplified already: a lane of an
  // index is mostly an op over constants (a lane digit times a stride) or a sum plus a lane's
  // constant, which symbolic answers without a rewrite.
  static UOpPtr simplify_lane(Ops op, DType dtype, std::vector<UOpPtr> src, const Arg& arg) {
    if (op == Ops::ADD && src.size() == 2 && src[1]->is_const() &&
        std::holds_alternative<std::monostate>(arg) && src[0]->dtype == dtype &&
        src[1]->dtype == dtype && std::holds_alternative<int64_t>(src[1]->arg))
      return simplify_add_const(src[0], std::get<int64_t>(src[1]->arg));
    return simplify_constant_op(UOp::make(op, dtype, std::move(src), arg));
  }

  // Lane l of u over axes `a` (its own): u's op over its sources' lanes l, as `dtype`,
  // simplified (the sources' lanes are simplified already).
  std::vector<UOpPtr> op_over_lanes(const UOpPtr& u, const Axes& a, DType dtype) {
    std::vector<std::vector<UOpPtr>> src;
    for (const auto& s : u->src) src.push_back(lanes_as(s, a));
    std::vector<UOpPtr> out;
    for (int64_t l = 0, w = width(a); l < w; ++l) {
      std::vector<UOpPtr> ls;
      for (const auto& sl : src) ls.push_back(sl[static_cast<size_t>(l)]);
      out.push_back(simplify_lane(u->op, dtype, std::move(ls), u->arg));
    }
    return out;
  }

  // The lanes of `u` lined up with axes `to` (a superset of its own).
  std::vector<UOpPtr> lanes_as(const UOpPtr& u, const Axes& to) {
    const auto& own = lanes(u);
    std::vector<UOpPtr> out;
    for (int64_t f : lane_map(axes_.at(u.get()), to)) out.push_back(own[static_cast<size_t>(f)]);
    return out;
  }

  // `x` (a vector over `from`, or a scalar when `from` is empty) as a vector over `to`.
  static UOpPtr bcast(const UOpPtr& x, const Axes& from, const Axes& to) {
    if (from == to) return x;
    const int64_t w = width(to);
    const DType d = vdt(x->dtype, w);
    if (from.empty()) {
      if (x->is_const()) return UOp::const_(d, x->const_value());
      return UOp::make(Ops::VECTORIZE, d, std::vector<UOpPtr>(static_cast<size_t>(w), x));
    }
    return UOp::make(Ops::GEP, d, {x}, Shape(lane_map(from, to)));
  }

  // Lanes `lanes` of vector `x`, taken through the ALU ops that compute it, so that a REDUCE's
  // CONTRACT computes each group of lanes on its own (four 16-lane products, not one of 64
  // taken apart again). Memoized: a shared subgraph (threefry's rounds reuse every value
  // twice) is walked once per lane group, not once per path to it.
  UOpPtr take_lanes(const UOpPtr& x, const std::vector<int64_t>& lanes) {
    if (x->dtype.count == 1) return x;
    auto key = std::make_pair(x.get(), lanes);
    if (auto it = take_memo_.find(key); it != take_memo_.end()) return it->second.second;
    UOpPtr r = take_lanes_uncached(x, lanes);
    take_memo_.emplace(std::move(key), std::make_pair(x, r));
    return r;
  }
  UOpPtr take_lanes_uncached(const UOpPtr& x, const std::vector<int64_t>& lanes) {
    const DType d = vdt(x->dtype, static_cast<int64_t>(lanes.size()));
    if (x->is_const()) return UOp::const_(d, x->const_value());
    if (x->op == Ops::GEP) {
      const auto& inner = std::get<Shape>(x->arg);
      std::vector<int64_t> composed;
      for (int64_t l : lanes) composed.push_back(inner[static_cast<size_t>(l)]);
      return take_lanes(x->src[0], composed);
    }
    if (x->op == Ops::VECTORIZE) {
      std::vector<UOpPtr> src;
      for (int64_t l : lanes) src.push_back(x->src[static_cast<size_t>(l)]);
      return src.size() == 1 ? src[0] : UOp::make(Ops::VECTORIZE, d, std::move(src));
    }
    if (GroupOp::ALU.contains(x->op) || x->op == Ops::CAST || x->op == Ops::BITCAST) {
      std::vector<UOpPtr> src;
      for (const auto& s : x->src) src.push_back(take_lanes(s, lanes));
      return UOp::make(x->op, d, std::move(src), x->arg);
    }
    bool identity = lanes.size() == x->dtype.count;
    for (size_t i = 0; i < lanes.size() && identity; ++i) identity = lanes[i] == int64_t(i);
    if (identity) return x;
    return UOp::make(Ops::GEP, d, {x}, Shape(lanes));
  }

  // A REDUCE over Unroll ranges that still loops over other reduce ranges keeps every lane in
  // its accumulator and combines the unrolled lanes once, after the loop: each iteration then
  // adds one vector into the accumulator instead of a dependent chain of scalar ops through
  // the unrolled lanes, whose latency bounds a matrix-vector product otherwise. The lanes hold
  // partial sums (the order a vectorized reduction sums in). Not past max_vertical_lanes_
  // (registers), and not for grouped reduces, whose shared memory would grow by the unrolled
  // width.
  bool vertical_ok(const std::vector<UOpPtr>& rest, int64_t lanes) const {
    if (lanes > max_vertical_lanes_) return false;
    bool loops = false;
    for (const auto& r : rest) {
      if (r->op != Ops::RANGE) continue;
      if (std::get<RangeArg>(r->arg).type == AxisType::GroupReduce) return false;
      loops = true;
    }
    return loops;
  }

  static std::vector<UOpPtr> with_value(const UOpPtr& v, std::vector<UOpPtr> rest) {
    rest.insert(rest.begin(), v);
    return rest;
  }

  // CONTRACT: for each value of the unrolled ranges, the lanes of `full` that hold the output
  // axes' lanes.
  static std::vector<std::vector<int64_t>> unroll_groups(const Axes& a, const Axes& unroll,
                                                         const Axes& full) {
    const auto out_lanes = lane_map(a, full);
    std::vector<std::vector<int64_t>> groups(static_cast<size_t>(width(unroll)));
    const auto u_lanes = lane_map(unroll, full);
    for (size_t l = 0; l < out_lanes.size(); ++l) {
      auto& g = groups[static_cast<size_t>(u_lanes[l])];
      if (g.size() <= static_cast<size_t>(out_lanes[l])) g.resize(out_lanes[l] + 1);
      g[static_cast<size_t>(out_lanes[l])] = static_cast<int64_t>(l);
    }
    return groups;
  }

  // The unrolled lanes of the reduced vector `v` combined with `op` pairwise (log2 depth):
  // group 2i with group 2i+1, then the sums the same way, the last group of an odd count
  // carried to the next level. While the count is even, a level is one op on two vectors (the
  // even groups' lanes and the odd groups'), so a 32-lane accumulator is summed in five vector
  // ops and shuffles instead of 31 scalar adds; the pairs, and so the result, are the same.
  UOpPtr contract(const UOpPtr& v, const Axes& a, const Axes& unroll, const Axes& full, Ops op) {
    auto groups = unroll_groups(a, unroll, full);
    UOpPtr cur = v;
    while (groups.size() > 1 && groups.size() % 2 == 0) {
      std::vector<int64_t> even, odd;
      for (size_t i = 0; i < groups.size(); i += 2) {
        even.insert(even.end(), groups[i].begin(), groups[i].end());
        odd.insert(odd.end(), groups[i + 1].begin(), groups[i + 1].end());
      }
      // GEPs of `cur` itself: take_lanes would push them through the previous level's op and
      // undo its vectorization.
      auto gep = [&](const std::vector<int64_t>& lanes) {
        return UOp::make(Ops::GEP, vdt(cur->dtype, static_cast<int64_t>(lanes.size())), {cur},
                         Shape(lanes));
      };
      cur = gep(even)->alu(op, {gep(odd)});
      const size_t per = groups[0].size();
      groups.resize(groups.size() / 2);
      for (size_t i = 0; i < groups.size(); ++i)
        for (size_t l = 0; l < per; ++l) groups[i][l] = static_cast<int64_t>(i * per + l);
    }
    std::vector<UOpPtr> parts;
    for (const auto& g : groups) parts.push_back(take_lanes(cur, g));
    while (parts.size() > 1) {
      std::vector<UOpPtr> next;
      for (size_t i = 0; i + 1 < parts.size(); i += 2)
        next.push_back(parts[i]->alu(op, {parts[i + 1]}));
      if (parts.size() % 2 == 1) next.push_back(parts.back());
      parts = std::move(next);
    }
    return parts[0];
  }

  UOpPtr vec_as(const UOpPtr& u, const Axes& to) { return bcast(vec(u), axes_.at(u.get()), to); }

  static UOpPtr vectorize(const std::vector<UOpPtr>& lanes, DType elem) {
    if (lanes.size() == 1) return lanes[0];
    bool same_const = lanes[0]->is_const();
    for (const auto& l : lanes) same_const &= l == lanes[0];
    const DType d = vdt(elem, static_cast<int64_t>(lanes.size()));
    if (same_const) return UOp::const_(d, lanes[0]->const_value());
    return UOp::make(Ops::VECTORIZE, d, lanes);
  }

  // INDEX(buf, idx[, gate]) over axes `a`: the addresses (and gates) of every lane.
  UOpPtr index_over(const UOpPtr& index, const Axes& a) {
    std::vector<UOpPtr> src{index->src[0],
                            vectorize(lanes_as(index->src[1], a), index->src[1]->dtype)};
    if (index->src.size() > 2)
      src.push_back(vectorize(lanes_as(index->src[2], a), index->src[2]->dtype));
    return index->replace_src(std::move(src));
  }

  static Axes sorted(Axes a) {
    std::sort(a.begin(), a.end(), [](const UOp* x, const UOp* y) { return rid(x) < rid(y); });
    return a;
  }

  // A WMMA's fragment ranges for A, B and C, each slowest first.
  std::array<Axes, 3> wmma_fragments(const UOp& wmma) const {
    const codegen_detail::WmmaAxes w = codegen_detail::wmma_axes(wmma);
    std::array<Axes, 3> out;
    for (size_t op = 0; op < 3; ++op)
      for (int64_t id : w.fragment[op]) {
        const auto it = range_by_id_.find(id);
        if (it == range_by_id_.end())
          throw Error("codegen: expand: a WMMA's fragment names no range of the kernel: " +
                      wmma.str());
        out[op].push_back(it->second);
      }
    return out;
  }

  // The lane of `x` (a vector over `over`, sorted) where each axis has the value `digit` gives.
  static int64_t lane_at(const Axes& over, const std::unordered_map<const UOp*, int64_t>& digit) {
    int64_t l = 0;
    for (const UOp* r : over) l = l * size_of(r) + digit.at(r);
    return l;
  }

  static UOpPtr pick(const UOpPtr& x, const std::vector<int64_t>& lanes) {
    const DType d = vdt(x->dtype, static_cast<int64_t>(lanes.size()));
    if (x->is_const()) return UOp::const_(d, x->const_value());
    bool identity = lanes.size() == x->dtype.count;
    for (size_t i = 0; i < lanes.size() && identity; ++i) identity = lanes[i] == int64_t(i);
    if (identity) return x;
    return UOp::make(Ops::GEP, d, {x}, Shape(lanes));
  }

  UOpPtr build_wmma(const UOpPtr& u, const Axes& out) {
    const codegen_detail::WmmaAxes w = codegen_detail::wmma_axes(*u);
    const auto frag = wmma_fragments(*u);
    Axes others;
    for (const UOp* r : out)
      if (std::find(frag[2].begin(), frag[2].end(), r) == frag[2].end()) others.push_back(r);
    // Each operand as a vector over its other axes and its fragment's.
    std::array<UOpPtr, 3> vecs;
    std::array<Axes, 3> over;
    for (size_t op = 0; op < 3; ++op) {
      Axes own;
      for (const UOp* r : axes_.at(u->src[op].get()))
        if (std::find(frag[op].begin(), frag[op].end(), r) == frag[op].end()) own.push_back(r);
      over[op] = axes_union(own, sorted(frag[op]));
      vecs[op] = vec_as(u->src[op], over[op]);
    }
    const std::string name = codegen_detail::wmma_name(w, u->src[0]->dtype, u->dtype);
    const int64_t n_others = width(others);
    std::vector<UOpPtr> wmmas;
    for (int64_t e = 0; e < n_others; ++e) {
      std::unordered_map<const UOp*, int64_t> digit;
      const auto d = digits(others, e);
      for (size_t i = 0; i < others.size(); ++i) digit[others[i]] = d[i];
      std::array<UOpPtr, 3> src;
      for (size_t op = 0; op < 3; ++op) {
        std::vector<int64_t> lanes;
        auto digit_op = digit;
        for (int64_t f = 0; f < width(frag[op]); ++f) {
          const auto fd = digits(frag[op], f);
          for (size_t i = 0; i < frag[op].size(); ++i) digit_op[frag[op][i]] = fd[i];
          lanes.push_back(lane_at(over[op], digit_op));
        }
        src[op] = pick(vecs[op], lanes);
      }
      wmmas.push_back(
          UOp::make(Ops::WMMA, vdt(u->dtype, width(frag[2])), {src[0], src[1], src[2]}, name));
    }
    // The node's lanes: lane (others e, fragment f) of `out` is lane f of WMMA e.
    std::vector<std::pair<int64_t, int64_t>> from;
    for (int64_t l = 0; l < width(out); ++l) {
      const auto d = digits(out, l);
      std::unordered_map<const UOp*, int64_t> digit;
      for (size_t i = 0; i < out.size(); ++i) digit[out[i]] = d[i];
      from.emplace_back(lane_at(others, digit), lane_at(frag[2], digit));
    }
    if (wmmas.size() == 1) {
      std::vector<int64_t> lanes;
      for (const auto& [e, f] : from) lanes.push_back(f);
      return pick(wmmas[0], lanes);
    }
    std::vector<UOpPtr> lanes;
    for (const auto& [e, f] : from) lanes.push_back(pick(wmmas[static_cast<size_t>(e)], {f}));
    return UOp::make(Ops::VECTORIZE, vdt(u->dtype, width(out)), std::move(lanes));
  }

  UOpPtr vec(const UOpPtr& u) {
    auto it = vec_.find(u.get());
    if (it != vec_.end()) return it->second;
    UOpPtr out = build(u);
    vec_.emplace(u.get(), out);
    return out;
  }

  // Whether a pure node (no load below it) is one vector op over its sources' lanes instead of
  // one scalar op per lane: arithmetic on values, not addresses, whose lanes differ. A causal
  // mask compares a key's position with a vector of queries' positions: one vector compare and
  // select, where per-lane ops took 16 scalar compares and selects and a gather into a vector.
  // Index arithmetic and a CAST from an index keep their scalar lanes (addresses are analysed
  // lane by lane), and lanes that fold to constants or are all one value stay a VECTORIZE.
  bool vector_of_values(const UOpPtr& u) {
    const bool arith = GroupOp::ALU.contains(u->op) || u->op == Ops::CAST || u->op == Ops::BITCAST;
    if (!arith || axes_.at(u.get()).empty() || u->dtype.scalar() == dtypes::index) return false;
    for (const auto& s : u->src)
      if (s->dtype.scalar() == dtypes::index) return false;
    const auto& ls = lanes(u);
    const bool consts =
        std::all_of(ls.begin(), ls.end(), [](const UOpPtr& l) { return l->is_const(); });
    const bool same =
        std::all_of(ls.begin(), ls.end(), [&](const UOpPtr& l) { return l == ls[0]; });
    return !consts && !same;
  }

  UOpPtr build(const UOpPtr& u) {
    if (!touched_.at(u.get())) return u;
    const Axes& a = axes_.at(u.get());
    const int64_t w = width(a);
    if (pure_.at(u.get()) && !vector_of_values(u)) return vectorize(lanes(u), u->dtype);
    switch (u->op) {
    case Ops::LOAD: {
      std::vector<UOpPtr> src{index_over(u->src[0], a)};
      for (size_t i = 1; i < u->src.size(); ++i) src.push_back(vec_as(u->src[i], a));
      return UOp::make(Ops::LOAD, vdt(u->dtype, w), std::move(src), u->arg);
    }
    case Ops::STORE: {
      if (a.empty()) return u->replace_src({u->src[0], vec(u->src[1])});
      return u->replace_src({index_over(u->src[0], a), vec_as(u->src[1], a)});
    }
    case Ops::REDUCE: {
      const Ops op = std::get<ReduceArg>(u->arg).op;
      Axes unroll;
      std::vector<UOpPtr> rest;
      for (size_t i = 1; i < u->src.size(); ++i) {
        const UOp* r = u->src[i].get();
        if (r->op == Ops::RANGE && std::get<RangeArg>(r->arg).type == AxisType::Unroll)
          unroll.push_back(r);
        else if (r->op == Ops::RANGE && std::get<RangeArg>(r->arg).type == AxisType::Upcast)
          throw Error("codegen: expand: a REDUCE over an Upcast range (use UNROLL for reduce "
                      "axes): " +
                      u->str());
        else
          rest.push_back(u->src[i]);
      }
      std::sort(unroll.begin(), unroll.end(),
                [](const UOp* x, const UOp* y) { return rid(x) < rid(y); });
      const Axes full = axes_union(a, unroll);
      const UOpPtr v = vec_as(u->src[0], full);
      if (!unroll.empty() && vertical_ok(rest, width(full)))
        return contract(
            UOp::make(Ops::REDUCE, vdt(u->dtype, width(full)), with_value(v, rest), u->arg), a,
            unroll, full, op);
      // Nothing left to loop over: the unrolled lanes are the whole reduction. Combined as a
      // tree of vector ops on `v`, its operands stay whole vectors too; combining group by
      // group would take each group's lanes through the ops below (take_lanes) and chain them,
      // a block's absolute maximum over 32 lanes becoming 32 dependent scalar abs-and-max.
      if (!unroll.empty() && rest.empty()) return contract(v, a, unroll, full, op);
      UOpPtr combined;
      if (unroll.empty()) {
        combined = v;
      } else {
        for (const auto& g : unroll_groups(a, unroll, full)) {
          const UOpPtr part = take_lanes(v, g);
          combined = combined ? combined->alu(op, {part}) : part;
        }
      }
      if (rest.empty()) return combined;
      rest.insert(rest.begin(), combined);
      return UOp::make(Ops::REDUCE, vdt(u->dtype, w), std::move(rest), u->arg);
    }
    case Ops::WMMA:
      return build_wmma(u, a);
    case Ops::SINK:
    case Ops::INDEX:
      break;
    default:
      if (GroupOp::ALU.contains(u->op) || u->op == Ops::CAST || u->op == Ops::BITCAST) {
        std::vector<UOpPtr> src;
        for (const auto& s : u->src) src.push_back(vec_as(s, a));
        return UOp::make(u->op, vdt(u->dtype, w), std::move(src), u->arg);
      }
      break;
    }
    throw Error("codegen: expand: cannot expand " + u->str());
  }
};

} // namespace

UOpPtr expand_kernel(const UOpPtr& ast, int64_t vector_lanes) {
  bool any = false;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::RANGE) {
      const AxisType t = std::get<RangeArg>(u->arg).type;
      any |= t == AxisType::Upcast || t == AxisType::Unroll;
    }
  if (!any) return ast;
  return Expander(ast, max_vector_accumulator_lanes(vector_lanes)).run(ast);
}

int64_t max_vector_accumulator_lanes(int64_t vector_lanes) {
  return vector_lanes >= 16 ? 20 * vector_lanes : 128;
}

} // namespace tg
