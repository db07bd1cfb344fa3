// Decompositions that are not transcendentals: narrow floats computed in float32, and integer
// division and remainder by a constant as multiply + shift (tinygrad's fast_idiv).
#include "tg/decompositions.hpp"

#include <optional>

#include "tg/ir/rewrite.hpp"
#include "tg/knobs.hpp"

namespace tg {
namespace {

using enum Ops;
__extension__ typedef __int128 i128;

// ---------------------------------------------------------------- narrow floats in float32

bool computes_in_f32(DType d, const RendererCaps& caps) {
  return !d.is_ptr && (d.scalar_type == ScalarType::BFloat16 ||
                       (d.scalar_type == ScalarType::Float16 && !caps.supports_half));
}

// ---------------------------------------------------------------- integer division

// m, s with floor(x*m / 2^s) == floor(x/d) for 0 <= x <= n (and, for d not a power of two,
// floor(x*m / 2^s) + 1 == trunc(x/d) for -n <= x < 0): with m = ceil(2^s/d) and
// e = m*d - 2^s, x*m/2^s = x/d + x*e/(d*2^s), and |x|*e < 2^s keeps that within the same
// integer (Hacker's Delight, 10-9).
struct Magic {
  i128 m;
  int s;
};
std::optional<Magic> magic(i128 n, i128 d) {
  for (int s = 0; s < 100; ++s) {
    const i128 p = i128{1} << s;
    const i128 m = (p + d - 1) / d;
    if (n * (m * d - p) < p) return Magic{m, s};
  }
  return std::nullopt;
}

i128 dmin(DType d) { return as_int(dtype_min(d.scalar())); }
i128 dmax(DType d) { return as_int(dtype_max(d.scalar())); }

// The integer types tried for the product, narrowest first.
std::vector<DType> wider(DType d) {
  using S = ScalarType;
  switch (d.scalar_type) {
  case S::Int8:
    return {d, dtypes::int16, dtypes::int32, dtypes::int64};
  case S::Int16:
    return {d, dtypes::int32, dtypes::int64};
  case S::Int32:
    return {d, dtypes::int64};
  case S::UInt8:
    return {d, dtypes::uint16, dtypes::uint32, dtypes::uint64};
  case S::UInt16:
    return {d, dtypes::uint32, dtypes::uint64};
  case S::UInt32:
    return {d, dtypes::uint64};
  case S::Int64:
  case S::Index:
    return {d};
  default:
    return {}; // uint64: its value range is not exact (capped at INT64_MAX)
  }
}

// trunc(x / d) for a constant d > 0 without IDIV, or nullptr where the range does not allow it.
UOpPtr fast_div(const UOpPtr& x, int64_t d) {
  const DType dt = x->dtype;
  const std::vector<DType> types = wider(dt);
  if (types.empty()) return nullptr;
  const i128 lo = x->ivmin(), hi = x->ivmax();
  if (d == 1) return x;
  if (lo > -d && hi < d) return x->const_like(0);
  if ((d & (d - 1)) == 0) { // a power of two: a shift (rounding toward zero for negatives)
    int k = 0;
    while ((int64_t{1} << k) != d) ++k;
    const UOpPtr sh = x->const_like(k);
    if (lo >= 0) return x->alu(SHR, {sh});
    return (x + x->lt(x->const_like(0))->where(x->const_like(d - 1), x->const_like(0)))
        ->alu(SHR, {sh});
  }
  const i128 n = hi > -lo ? hi : -lo;
  const std::optional<Magic> mg = magic(n, d);
  if (!mg) return nullptr;
  for (DType ct : types) {
    if (mg->m > dmax(ct) || mg->m * hi > dmax(ct) || mg->m * lo < dmin(ct)) continue;
    const UOpPtr xc = x->cast(ct);
    UOpPtr q = (xc * UOp::const_(ct, static_cast<int64_t>(mg->m)))
                   ->alu(SHR, {UOp::const_(ct, int64_t{mg->s})});
    // Below zero the shift floors and the quotient is one too small (e > 0: d is no power of 2).
    if (lo < 0) q = q + xc->lt(xc->const_like(0))->where(xc->const_like(1), xc->const_like(0));
    return q->cast(dt);
  }
  return nullptr;
}

bool divisible_int(const UOpPtr& x, const UOpPtr& c) {
  return !x->dtype.is_ptr && x->dtype.count == 1 && x->dtype.is_int() && c->is_const() &&
         as_int(c->const_value()) > 0;
}

} // namespace

UOpPtr promote_half_float(const UOpPtr& ast, const RendererCaps& caps) {
  // WHERE only selects (exact in any type) and THREEFRY is an integer op.
  static constexpr OpSet kPromoted = GroupOp::ALU - OpSet{WHERE, THREEFRY};
  static const PatternMatcher pm({
      {UPat(kPromoted).named("x"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& x = c["x"];
         const bool cmp = GroupOp::Comparison.contains(x->op);
         const DType dt = cmp ? x->src[0]->dtype : x->dtype;
         if (!computes_in_f32(dt, c.ctx<RendererCaps>())) return nullptr;
         const DType f32(ScalarType::Float32, dt.count);
         std::vector<UOpPtr> src;
         for (const UOpPtr& s : x->src) src.push_back(s->dtype == dt ? s->cast(f32) : s);
         UOpPtr r = UOp::make(x->op, cmp ? x->dtype : f32, std::move(src), x->arg);
         return cmp ? r : r->cast(x->dtype);
       }},
      // Sums and products of narrow floats accumulate in float32 and round once.
      {UPat(REDUCE).named("x"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& x = c["x"];
         if (!computes_in_f32(x->dtype, c.ctx<RendererCaps>())) return nullptr;
         const DType f32(ScalarType::Float32, x->dtype.count);
         std::vector<UOpPtr> src(x->src.begin(), x->src.end());
         src[0] = src[0]->cast(f32);
         return UOp::make(REDUCE, f32, std::move(src), x->arg)->cast(x->dtype);
       }},
  });
  RendererCaps ctx = caps;
  return graph_rewrite(ast, pm, ctx, "promote_half_float");
}

UOpPtr decompose_int_division(const UOpPtr& ast, const RendererCaps& /*caps*/) {
  if (knobs::DISABLE_FAST_IDIV != 0) return ast;
  static const PatternMatcher pm({
      {UPat(IDIV).with_src({UPat::var("x"), UPat::cvar("c")}),
       [](const Captures& c) -> UOpPtr {
         if (!divisible_int(c["x"], c["c"])) return nullptr;
         return fast_div(c["x"], as_int(c["c"]->const_value()));
       }},
      // x % d == x - trunc(x/d)*d (C's remainder keeps the sign of x).
      {UPat(MOD).with_src({UPat::var("x"), UPat::cvar("c")}),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& x = c["x"];
         if (!divisible_int(x, c["c"])) return nullptr;
         const int64_t d = as_int(c["c"]->const_value());
         if ((d & (d - 1)) == 0 && x->ivmin() >= 0) return x->alu(AND, {x->const_like(d - 1)});
         const UOpPtr q = fast_div(x, d);
         if (!q) return nullptr;
         return x - q * x->const_like(d);
       }},
  });
  return graph_rewrite(ast, pm, "fast_idiv");
}

UOpPtr decompose_dot4(const UOpPtr& ast, const RendererCaps& caps) {
  if (caps.has_dot4) return ast;
  static const PatternMatcher pm({
      {UPat(DOT4).named("x"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& x = c["x"];
         const UOpPtr &a = x->src[1], &b = x->src[2];
         UOpPtr sum = x->src[0];
         for (int64_t k = 0; k < 4; ++k) {
           const UOpPtr sh = x->const_like(8 * k), mask = x->const_like(255);
           const UOpPtr ua = a->alu(SHR, {sh})->alu(AND, {mask});
           // The byte as a signed number: (v ^ 128) - 128 sign-extends without shifting left.
           const UOpPtr ub = b->alu(SHR, {sh})->alu(AND, {mask});
           const UOpPtr sb = ub->alu(XOR, {x->const_like(128)}) - x->const_like(128);
           sum = sum + ua * sb;
         }
         return sum;
       }},
  });
  return graph_rewrite(ast, pm, "decompose_dot4");
}

} // namespace tg
