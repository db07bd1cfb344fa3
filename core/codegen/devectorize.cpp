// Devectorize (tinygrad's devectorizer: fold_expanded_index / split_load_store /
// no_vectorized_alu).
//
// A vector LOAD or STORE reads or writes one address per lane: INDEX(buf, VECTORIZE(lanes)) as
// expansion builds it, or INDEX(buf, idx) for `width` consecutive elements from idx (a register
// from lower_reduces). Lanes are grouped by address root (the address without its constant
// term): a run of `c` lanes at root+o .. root+o+c-1 under one gate, with root and o multiples of
// c (so the access is aligned to its length; anywhere on a CPU for 1- and 2-byte elements),
// becomes one access of c elements, c a power of two up to 16 (1 when the renderer has no
// vectors). The lanes are put back together with VECTORIZE/GEP, which fold away where they
// meet. With RendererCaps::supports_float4 false every vector ALU op also becomes one scalar op
// per lane, as do ops on bfloat16 vectors.
#include <algorithm>

#include <boost/container/small_vector.hpp>

#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"

namespace tg {

namespace {

struct DevecCtx {
  int64_t max_width = 16;
  bool split_alu = false;
  // A CPU: runs of elements narrower than 4 bytes (quantized blocks' bytes) may start anywhere;
  // every other run must start at a multiple of its length.
  bool unaligned_narrow = false;
  bool aligned_for(DType d) const { return !(unaligned_narrow && d.scalar_itemsize() < 4); }
};

DType vdt(DType d, size_t w) {
  return w == 1 ? d.scalar() : d.scalar().vec(static_cast<uint16_t>(w));
}

UOpPtr gep_n(const UOpPtr& x, const std::vector<int64_t>& lanes);

// Lane `i` of `x` (a scalar is every lane of itself).
UOpPtr gep1(const UOpPtr& x, int64_t i) {
  if (x->dtype.count == 1) return x;
  return gep_n(x, {i});
}

// Lanes `lanes` of `x`, folding through VECTORIZE, CONST and GEP.
UOpPtr gep_n(const UOpPtr& x, const std::vector<int64_t>& lanes) {
  const DType d = vdt(x->dtype, lanes.size());
  if (x->dtype.count == 1) {
    if (lanes.size() == 1) return x;
    if (x->is_const()) return UOp::const_(d, x->const_value());
    return UOp::make(Ops::VECTORIZE, d, std::vector<UOpPtr>(lanes.size(), x));
  }
  bool identity = lanes.size() == x->dtype.count;
  for (size_t i = 0; i < lanes.size() && identity; ++i) identity = lanes[i] == int64_t(i);
  if (identity) return x;
  if (x->is_const()) return UOp::const_(d, x->const_value());
  if (x->op == Ops::VECTORIZE) {
    if (lanes.size() == 1) return x->src[static_cast<size_t>(lanes[0])];
    std::vector<UOpPtr> src;
    for (int64_t l : lanes) src.push_back(x->src[static_cast<size_t>(l)]);
    return UOp::make(Ops::VECTORIZE, d, std::move(src));
  }
  if (x->op == Ops::GEP) {
    const auto& inner = std::get<Shape>(x->arg);
    std::vector<int64_t> composed;
    for (int64_t l : lanes) composed.push_back(inner[static_cast<size_t>(l)]);
    return gep_n(x->src[0], composed);
  }
  return UOp::make(Ops::GEP, d, {x}, Shape(lanes));
}

// idx = root + off with `off` constant (root null: the address is a constant).
std::pair<const UOp*, int64_t> split_offset(const UOpPtr& idx) {
  if (idx->is_const()) return {nullptr, idx->ivmin()};
  if (idx->op == Ops::ADD && idx->src[1]->is_const())
    return {idx->src[0].get(), idx->src[1]->ivmin()};
  return {idx.get(), 0};
}

// Whether `x` is a multiple of `c` for every value of its variables.
bool divisible(const UOp* x, int64_t c) {
  if (x == nullptr) return true;
  if (x->is_const()) return x->ivmin() % c == 0;
  if (x->op == Ops::ADD) return divisible(x->src[0].get(), c) && divisible(x->src[1].get(), c);
  if (x->op == Ops::MUL) return divisible(x->src[0].get(), c) || divisible(x->src[1].get(), c);
  return false;
}

struct Chunk {
  std::vector<int64_t> lanes;
  UOpPtr addr, gate; // gate null: ungated
};

// The accesses of a `width`-lane LOAD or STORE through `index`.
std::vector<Chunk> plan(const UOpPtr& index, size_t width, int64_t max_width, bool aligned) {
  const UOpPtr& idx = index->src[1];
  using Key = std::pair<const UOp*, int64_t>; // an address as root + constant offset
  boost::container::small_vector<UOpPtr, 16> addr(width), gate;
  boost::container::small_vector<Key, 16> key(width);
  // A scalar address `idx` of `width` consecutive elements: lane t is at
  // simplify_add_const(idx, t). For a final (or constant) index that is idx's root and
  // constant plus t, known without building it, so only the first lane of each access is
  // built (a 64-lane register read in 16-lane pieces builds 4 addresses, not 64).
  const bool offsets_known =
      idx->dtype == dtypes::index &&
      (idx->is_const() ||
       idx->fixed_under().load(std::memory_order_relaxed) == symbolic().pure_id());
  for (size_t t = 0; t < width; ++t) {
    const auto lane = static_cast<int64_t>(t);
    if (idx->op == Ops::VECTORIZE && idx->src.size() == width) {
      addr[t] = idx->src[t];
    } else if (idx->dtype.count == 1) {
      int64_t off = 0;
      if (t > 0 && offsets_known && !__builtin_add_overflow(key[0].second, lane, &off))
        key[t] = {key[0].first, off}; // its node is built if it starts an access (address_at)
      else
        addr[t] = t == 0 ? idx : simplify_add_const(idx, lane);
    } else if (idx->dtype.count == width) { // a vector address not built by VECTORIZE: its lanes
      addr[t] = simplify(gep1(idx, lane));
    } else {
      throw Error("codegen: devectorize: address of the wrong width: " + index->str());
    }
    if (addr[t]) key[t] = split_offset(addr[t]);
    if (index->src.size() > 2) gate.push_back(gep1(index->src[2], lane));
  }
  auto address_at = [&](size_t t) -> const UOpPtr& {
    if (!addr[t]) addr[t] = simplify_add_const(idx, static_cast<int64_t>(t));
    return addr[t];
  };
  boost::container::small_vector<bool, 16> done(width, false);
  std::vector<Chunk> out;
  // The lanes by address, lanes of one address in increasing order: a lane with a given
  // address is found by binary search (a few dozen lanes at most; no map is built).
  boost::container::small_vector<std::pair<Key, size_t>, 16> by_key;
  for (size_t t = 0; t < width; ++t) by_key.emplace_back(key[t], t);
  std::sort(by_key.begin(), by_key.end());
  auto free_lane = [&](Key k, const UOpPtr& g) -> int64_t {
    auto it = std::lower_bound(by_key.begin(), by_key.end(), std::pair<Key, size_t>{k, 0});
    for (; it != by_key.end() && it->first == k; ++it) {
      const size_t t = it->second;
      if (!done[t] && (gate.empty() || gate[t] == g)) return static_cast<int64_t>(t);
    }
    return -1;
  };
  for (int64_t c = 16; c >= 2; c /= 2) {
    if (c > max_width || static_cast<size_t>(c) > width) continue;
    for (size_t t = 0; t < width; ++t) {
      if (done[t]) continue;
      const auto [root, off] = key[t];
      if (aligned && (off % c != 0 || !divisible(root, c))) continue;
      const UOpPtr g = gate.empty() ? nullptr : gate[t];
      std::vector<int64_t> run{static_cast<int64_t>(t)};
      done[t] = true;
      for (int64_t k = 1; k < c; ++k) {
        const int64_t l = free_lane({root, off + k}, g);
        if (l < 0) break;
        run.push_back(l);
        done[static_cast<size_t>(l)] = true;
      }
      if (static_cast<int64_t>(run.size()) < c) {
        for (int64_t l : run) done[static_cast<size_t>(l)] = false;
        continue;
      }
      out.push_back({run, address_at(t), g});
    }
  }
  for (size_t t = 0; t < width; ++t)
    if (!done[t])
      out.push_back({{static_cast<int64_t>(t)}, address_at(t), gate.empty() ? nullptr : gate[t]});
  return out;
}

UOpPtr chunk_index(const UOpPtr& index, const Chunk& ch) {
  std::vector<UOpPtr> src{index->src[0], ch.addr};
  if (ch.gate && !(ch.gate->is_const() && as_bool(ch.gate->const_value()))) src.push_back(ch.gate);
  return UOp::make(Ops::INDEX, index->dtype, std::move(src));
}

// The widest access for elements of `d`: bfloat16 vectors are not rendered, so one at a time.
int64_t width_for(const DevecCtx& ctx, DType d) {
  return d.scalar_type == ScalarType::BFloat16 ? 1 : ctx.max_width;
}

bool always_false(const UOpPtr& g) { return g && g->is_const() && !as_bool(g->const_value()); }

UOpPtr split_load(const DevecCtx& ctx, const UOpPtr& ld) {
  const size_t w = ld->dtype.count;
  const UOpPtr& index = ld->src[0];
  if (index->op != Ops::INDEX) return nullptr;
  const auto chunks = plan(index, w, width_for(ctx, ld->dtype), ctx.aligned_for(ld->dtype));
  std::vector<std::pair<UOpPtr, int64_t>> lane_src(w); // (chunk value, lane in it)
  UOpPtr single;
  for (const Chunk& ch : chunks) {
    const DType d = vdt(ld->dtype, ch.lanes.size());
    UOpPtr v;
    UOpPtr alt = ld->src.size() > 1 ? gep_n(ld->src[1], ch.lanes) : nullptr;
    if (always_false(ch.gate)) {
      v = alt;
    } else {
      std::vector<UOpPtr> src{chunk_index(index, ch)};
      if (alt && src[0]->src.size() > 2) src.push_back(alt);
      v = UOp::make(Ops::LOAD, d, std::move(src), ld->arg);
    }
    for (size_t k = 0; k < ch.lanes.size(); ++k)
      lane_src[static_cast<size_t>(ch.lanes[k])] = {v, static_cast<int64_t>(k)};
    if (chunks.size() == 1) single = v;
  }
  UOpPtr out;
  if (single && single->dtype.count == w) {
    bool in_order = true;
    for (size_t t = 0; t < w; ++t) in_order &= lane_src[t].second == int64_t(t);
    if (in_order) out = single;
  }
  if (!out) {
    std::vector<UOpPtr> src;
    for (const auto& [v, k] : lane_src) src.push_back(gep1(v, k));
    out = UOp::make(Ops::VECTORIZE, ld->dtype, std::move(src));
  }
  return out == ld ? nullptr : out;
}

std::vector<UOpPtr> split_store(const DevecCtx& ctx, const UOpPtr& st) {
  const UOpPtr& val = st->src[1];
  const UOpPtr& index = st->src[0];
  if (val->dtype.count == 1 || index->op != Ops::INDEX) return {st};
  std::vector<UOpPtr> out;
  for (const Chunk& ch :
       plan(index, val->dtype.count, width_for(ctx, val->dtype), ctx.aligned_for(val->dtype))) {
    if (always_false(ch.gate)) continue;
    out.push_back(UOp::make(Ops::STORE, dtypes::void_,
                            {chunk_index(index, ch), gep_n(val, ch.lanes)}, st->arg));
  }
  return out;
}

const PatternMatcher& pm_devectorize() {
  static const PatternMatcher pm({
      {UPat(Ops::LOAD, {}, std::nullopt, "ld"),
       [](const Captures& c) -> UOpPtr {
         if (c["ld"]->dtype.count == 1) return nullptr;
         return split_load(c.ctx<DevecCtx>(), c["ld"]);
       }},
      // STOREs live in a SINK, an END's body, an AFTER's or a BARRIER's dependencies: splice
      // the pieces.
      {UPat(OpSet{Ops::SINK, Ops::END, Ops::AFTER, Ops::BARRIER}, {}, std::nullopt, "p"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& p = c["p"];
         std::vector<UOpPtr> src;
         bool changed = false;
         for (const auto& s : p->src) {
           if (s->op != Ops::STORE) {
             src.push_back(s);
             continue;
           }
           auto parts = split_store(c.ctx<DevecCtx>(), s);
           changed |= parts.size() != 1 || parts[0] != s;
           src.insert(src.end(), parts.begin(), parts.end());
         }
         return changed ? p->replace_src(std::move(src)) : nullptr;
       }},
      {UPat(Ops::GEP, {}, std::nullopt, "g"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& g = c["g"];
         const auto& lanes = std::get<Shape>(g->arg);
         if (c.ctx<DevecCtx>().split_alu && lanes.size() > 1) {
           std::vector<UOpPtr> src;
           for (int64_t l : lanes) src.push_back(gep1(g->src[0], l));
           return UOp::make(Ops::VECTORIZE, g->dtype, std::move(src));
         }
         UOpPtr r = gep_n(g->src[0], lanes);
         return r == g ? nullptr : r;
       }},
      {UPat(Ops::VECTORIZE, {}, std::nullopt, "v"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& v = c["v"];
         const UOpPtr& s0 = v->src[0];
         if (s0->is_const() &&
             std::all_of(v->src.begin(), v->src.end(), [&](const UOpPtr& s) { return s == s0; }))
           return UOp::const_(v->dtype, s0->const_value());
         // VECTORIZE(GEP(x, 0), ..., GEP(x, n-1)) is x.
         if (s0->op != Ops::GEP || s0->src[0]->dtype.count != v->dtype.count) return nullptr;
         for (size_t i = 0; i < v->src.size(); ++i) {
           const UOpPtr& s = v->src[i];
           if (s->op != Ops::GEP || s->src[0] != s0->src[0] ||
               std::get<Shape>(s->arg) != Shape{static_cast<int64_t>(i)})
             return nullptr;
         }
         return s0->src[0];
       }},
      {UPat(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST}, {}, std::nullopt, "x"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& x = c["x"];
         if (x->dtype.count == 1) return nullptr;
         // No renderer computes on bfloat16 vectors (they are integer bits): one lane at a time.
         auto bf16 = [](const UOpPtr& u) { return u->dtype.scalar_type == ScalarType::BFloat16; };
         const bool narrow = bf16(x) || std::any_of(x->src.begin(), x->src.end(), bf16);
         if (!c.ctx<DevecCtx>().split_alu && !narrow) return nullptr;
         std::vector<UOpPtr> lanes;
         for (int64_t i = 0; i < x->dtype.count; ++i) {
           std::vector<UOpPtr> src;
           for (const auto& s : x->src) src.push_back(gep1(s, i));
           lanes.push_back(UOp::make(x->op, x->dtype.scalar(), std::move(src), x->arg));
         }
         return UOp::make(Ops::VECTORIZE, x->dtype, std::move(lanes));
       }},
  });
  return pm;
}

} // namespace

UOpPtr devectorize(const UOpPtr& ast, const RendererCaps& caps) {
  DevecCtx ctx;
  ctx.max_width = caps.supports_float4 ? 16 : 1;
  ctx.split_alu = !caps.supports_float4;
  // Without work groups the target is a CPU, whose vector accesses need only the element's
  // alignment (both CPU renderers declare that), so a run of bytes may start anywhere: the 32
  // int8 of a 34-byte Q8_0 block are two 16-byte loads, not sixteen 2-byte ones. Float runs keep
  // the alignment rule: a convolution's overlapping windows would otherwise become overlapping
  // unaligned loads rebuilt by shuffles (cifar's 3x3 convolutions ran 3.4x slower so). GPUs'
  // wide accesses want their width's alignment.
  ctx.unaligned_narrow = !caps.has_local;
  return graph_rewrite(ast, pm_devectorize(), ctx, "devectorize");
}

} // namespace tg
