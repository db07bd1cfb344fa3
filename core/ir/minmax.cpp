// Interval analysis of one node, as tinygrad's UOp._min_max.
//
// Integer bounds are computed in __int128 from the sources' bounds; a bound that leaves the
// dtype's range means the op may wrap around, and then the node gets the dtype's full range.
// So a node whose range is narrower than its dtype's is known not to wrap, which the symbolic
// rules rely on. Float nodes other than constants get [-inf, inf]; uint64 ranges are capped at
// INT64_MAX (see dtype_max) and never leak into nodes of other dtypes (comparisons and casts
// of uint64 are left undecided), because values above INT64_MAX would make them unsound.
#include "minmax.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace tg {
namespace {

__extension__ typedef __int128 i128;

enum class Kind { Bool, Int, Float, Other };

Kind kind_of(DType d) {
  if (d.is_ptr) return Kind::Other;
  if (d.scalar_type == ScalarType::Bool) return Kind::Bool;
  if (d.is_int()) return Kind::Int;
  if (d.is_float()) return Kind::Float;
  return Kind::Other;
}

bool is_u64(DType d) { return !d.is_ptr && d.scalar_type == ScalarType::UInt64; }

struct Range {
  i128 lo, hi;
};

i128 lo_of(DType d) { return int_dtype_min(d); }
i128 hi_of(DType d) { return int_dtype_max(d); }

i128 to_i128(const ConstValue& v, DType d) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (const auto* i = std::get_if<int64_t>(&v))
    return is_u64(d) ? static_cast<i128>(static_cast<uint64_t>(*i)) : static_cast<i128>(*i);
  const double x = std::get<double>(v);
  if (std::isnan(x)) return 0;
  return static_cast<i128>(std::clamp(std::trunc(x), -1e30, 1e30));
}

// A source's bounds as integers (bools as 0/1).
Range range_of(const UOpPtr& u) {
  return {to_i128(u->vmin(), u->dtype), to_i128(u->vmax(), u->dtype)};
}

std::pair<ConstValue, ConstValue> full_range(DType d) {
  switch (kind_of(d)) {
  case Kind::Bool:
    return {false, true};
  case Kind::Int:
    return {dtype_min(d.scalar()), dtype_max(d.scalar())};
  default: {
    const double inf = std::numeric_limits<double>::infinity();
    return {-inf, inf};
  }
  }
}

// Bounds of an integer node: the dtype's full range when they leave it (wrap-around).
std::pair<ConstValue, ConstValue> int_result(i128 lo, i128 hi, DType d) {
  if (lo > hi || lo < lo_of(d) || hi > hi_of(d)) return full_range(d);
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

std::pair<ConstValue, ConstValue> bool_result(bool lo, bool hi) { return {lo, hi}; }

i128 i128_abs(i128 x) { return x < 0 ? -x : x; }

Range corners(i128 a, i128 b, i128 c, i128 d) {
  return {std::min({a, b, c, d}), std::max({a, b, c, d})};
}

int bit_length(i128 x) {
  int n = 0;
  for (; x > 0; x >>= 1) ++n;
  return n;
}

// [lo, hi] of a MOD given the dividend's and divisor's ranges (C remainder: the sign of the
// dividend, magnitude below the divisor's).
Range mod_range(Range a, Range b) {
  const bool divisor_nonzero = b.lo > 0 || b.hi < 0;
  if (divisor_nonzero && b.lo == b.hi) {
    // One divisor c: within one truncation block x - trunc(x/c)*c is x shifted, so exact.
    const i128 c = i128_abs(b.lo);
    const i128 q = div_trunc(a.lo, c);
    if (q == div_trunc(a.hi, c)) return {a.lo - q * c, a.hi - q * c};
  }
  // |x % y| <= |x|, and < |y| when y is known nonzero.
  const i128 big = std::numeric_limits<int64_t>::max();
  const i128 lim = divisor_nonzero ? std::max(i128_abs(b.lo), i128_abs(b.hi)) - 1 : big;
  if (a.lo >= 0) return {0, std::min(a.hi, lim)};
  if (a.hi <= 0) return {std::max(a.lo, -lim), 0};
  return {std::max(a.lo, -lim), std::min(a.hi, lim)};
}

// A comparison decided by disjoint or equal single-point ranges, else [false, true].
template <class T> std::pair<ConstValue, ConstValue> compare(Ops op, T alo, T ahi, T blo, T bhi) {
  bool is_true = false, is_false = false;
  const bool same_point = alo == ahi && blo == bhi && alo == blo;
  const bool disjoint = ahi < blo || bhi < alo;
  if (op == Ops::CMPLT) {
    is_true = ahi < blo;
    is_false = alo >= bhi;
  } else if (op == Ops::CMPNE) {
    is_true = disjoint;
    is_false = same_point;
  } else { // CMPEQ
    is_true = same_point;
    is_false = disjoint;
  }
  if (is_true) return bool_result(true, true);
  if (is_false) return bool_result(false, false);
  return bool_result(false, true);
}

std::pair<ConstValue, ConstValue> const_range(DType d, const Arg& arg) {
  ConstValue v;
  if (const auto* b = std::get_if<bool>(&arg))
    v = *b;
  else if (const auto* i = std::get_if<int64_t>(&arg))
    v = *i;
  else if (const auto* f = std::get_if<double>(&arg))
    v = *f;
  else
    return full_range(d);
  switch (kind_of(d)) {
  case Kind::Bool:
    v = as_bool(v);
    break;
  case Kind::Int:
    v = as_int(v);
    break;
  case Kind::Float:
    v = as_double(v);
    break;
  case Kind::Other:
    return full_range(d);
  }
  return {v, v};
}

std::pair<ConstValue, ConstValue> union_of(std::span<const UOpPtr> srcs, DType d, size_t from) {
  if (srcs.size() <= from) return full_range(d);
  Range r = range_of(srcs[from]);
  for (size_t i = from + 1; i < srcs.size(); ++i) {
    Range s = range_of(srcs[i]);
    r = {std::min(r.lo, s.lo), std::max(r.hi, s.hi)};
  }
  if (kind_of(d) == Kind::Bool) return bool_result(r.lo != 0, r.hi != 0);
  return int_result(r.lo, r.hi, d);
}

// WHERE's condition decided by its range: 1 true, 0 false, -1 unknown.
int decided(const UOpPtr& cond) {
  Range c = range_of(cond);
  if (c.lo == c.hi) return c.lo != 0 ? 1 : 0;
  if (c.lo > 0 || c.hi < 0) return 1;
  return -1;
}

std::pair<ConstValue, ConstValue> compare_range(Ops op, std::span<const UOpPtr> src) {
  const UOpPtr &a = src[0], &b = src[1];
  if (a->dtype.is_float() || b->dtype.is_float())
    return compare(op, as_double(a->vmin()), as_double(a->vmax()), as_double(b->vmin()),
                   as_double(b->vmax()));
  // uint64 ranges are capped at INT64_MAX: only constants are trustworthy.
  if ((is_u64(a->dtype) && !a->is_const()) || (is_u64(b->dtype) && !b->is_const()))
    return bool_result(false, true);
  Range x = range_of(a), y = range_of(b);
  return compare(op, x.lo, x.hi, y.lo, y.hi);
}

std::pair<ConstValue, ConstValue> bool_range(Ops op, std::span<const UOpPtr> src, const Arg& arg) {
  using enum Ops;
  auto b = [&](size_t i) { return range_of(src[i]); };
  switch (op) {
  case DEFINE_VAR:
    if (const auto* v = std::get_if<VarArg>(&arg)) return bool_result(v->min != 0, v->max != 0);
    break;
  case BIND:
  case GEP:
    if (!src.empty()) return bool_result(b(0).lo != 0, b(0).hi != 0);
    break;
  case CMPLT:
  case CMPNE:
  case CMPEQ:
    if (src.size() == 2) return compare_range(op, src);
    break;
  case ADD: // bool ADD and MAX are OR, MUL is AND, as in exec_alu
  case OR:
  case MAX:
    if (src.size() == 2) return bool_result(b(0).lo || b(1).lo, b(0).hi || b(1).hi);
    break;
  case MUL:
  case AND:
    if (src.size() == 2) return bool_result(b(0).lo && b(1).lo, b(0).hi && b(1).hi);
    break;
  case SUB:
  case XOR:
    if (src.size() == 2 && b(0).lo == b(0).hi && b(1).lo == b(1).hi) {
      const bool v = (b(0).lo != 0) != (b(1).lo != 0);
      return bool_result(v, v);
    }
    break;
  case NEG: // NOT
    if (src.size() == 1) return bool_result(b(0).hi == 0, b(0).lo == 0);
    break;
  case TRUNC:
    if (src.size() == 1) return bool_result(b(0).lo != 0, b(0).hi != 0);
    break;
  case WHERE:
    if (src.size() == 3) {
      if (int c = decided(src[0]); c >= 0) {
        Range r = b(c ? 1 : 2);
        return bool_result(r.lo != 0, r.hi != 0);
      }
      return union_of(src, dtypes::bool_, 1);
    }
    break;
  case VECTORIZE:
    return union_of(src, dtypes::bool_, 0);
  case CAST:
    if (src.size() == 1 && !src[0]->dtype.is_float() && !src[0]->dtype.is_ptr &&
        (!is_u64(src[0]->dtype) || src[0]->is_const())) {
      Range r = b(0);
      if (r.lo > 0 || r.hi < 0) return bool_result(true, true);
      if (r.lo == 0 && r.hi == 0) return bool_result(false, false);
    } else if (src.size() == 1 && src[0]->is_const()) {
      const bool v = as_bool(src[0]->vmin()); // NaN is true, as in C
      return bool_result(v, v);
    }
    break;
  default:
    break;
  }
  return bool_result(false, true);
}

std::pair<ConstValue, ConstValue> int_range(Ops op, DType dtype, std::span<const UOpPtr> src,
                                            const Arg& arg) {
  using enum Ops;
  const auto full = [&] { return full_range(dtype); };
  // Results computed from uint64 sources are only trusted for uint64 nodes (capped the same way).
  for (const UOpPtr& s : src)
    if (is_u64(s->dtype) && !is_u64(dtype) && !s->is_const() && op != WHERE) return full();
  const size_t n = src.size();
  // The sources' ranges, read once (ALU ops have at most three sources).
  std::array<Range, 3> ranges;
  for (size_t i = 0; i < std::min<size_t>(n, ranges.size()); ++i) ranges[i] = range_of(src[i]);
  auto r = [&](size_t i) { return i < ranges.size() ? ranges[i] : range_of(src[i]); };
  switch (op) {
  case DEFINE_VAR:
    if (const auto* v = std::get_if<VarArg>(&arg)) return int_result(v->min, v->max, dtype);
    return full();
  case BIND:
  case GEP:
  case TRUNC:
    if (n >= 1) return int_result(r(0).lo, r(0).hi, dtype);
    return full();
  case RANGE:
  case SPECIAL: // 0 .. end-1 (an empty loop still gets [0, 0])
    if (n >= 1) return int_result(0, std::max<i128>(0, r(0).hi - 1), dtype);
    return full();
  case ADD:
    if (n == 2) return int_result(r(0).lo + r(1).lo, r(0).hi + r(1).hi, dtype);
    return full();
  case SUB:
    if (n == 2) return int_result(r(0).lo - r(1).hi, r(0).hi - r(1).lo, dtype);
    return full();
  case NEG:
    if (n == 1) return int_result(-r(0).hi, -r(0).lo, dtype);
    return full();
  case MUL:
  case MULACC:
    if (n >= 2) {
      Range a = r(0), b = r(1);
      Range p = corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
      if (op == MULACC && n == 3) p = {p.lo + r(2).lo, p.hi + r(2).hi};
      return int_result(p.lo, p.hi, dtype);
    }
    return full();
  case DOT4: // four products of a byte in 0..255 and one in -128..127
    if (n == 3) return int_result(r(0).lo + 4 * 255 * -128, r(0).hi + 4 * 255 * 127, dtype);
    return full();
  case IDIV:
    if (n == 2) {
      Range a = r(0), b = r(1);
      // Truncating division is monotone in each argument on a divisor range without 0.
      if (b.lo > 0 || b.hi < 0) {
        Range q = corners(div_trunc(a.lo, b.lo), div_trunc(a.lo, b.hi), div_trunc(a.hi, b.lo),
                          div_trunc(a.hi, b.hi));
        return int_result(q.lo, q.hi, dtype);
      }
      // Otherwise (division by zero aside) |x / y| <= |x|.
      const i128 m = std::max(i128_abs(a.lo), i128_abs(a.hi));
      return int_result(-m, m, dtype);
    }
    return full();
  case MOD:
    if (n == 2) {
      Range m = mod_range(r(0), r(1));
      return int_result(m.lo, m.hi, dtype);
    }
    return full();
  case MAX:
    if (n == 2) return int_result(std::max(r(0).lo, r(1).lo), std::max(r(0).hi, r(1).hi), dtype);
    return full();
  case AND:
    if (n == 2) {
      // x & y with y >= 0 is a submask of y: within [0, y].
      Range a = r(0), b = r(1);
      if (a.lo >= 0 && b.lo >= 0) return int_result(0, std::min(a.hi, b.hi), dtype);
      if (a.lo >= 0) return int_result(0, a.hi, dtype);
      if (b.lo >= 0) return int_result(0, b.hi, dtype);
    }
    return full();
  case OR:
  case XOR:
    if (n == 2) {
      // Nonnegative operands: no bit above the highest bit of the larger one.
      Range a = r(0), b = r(1);
      if (a.lo >= 0 && b.lo >= 0) {
        const i128 top = (i128{1} << bit_length(std::max(a.hi, b.hi))) - 1;
        return int_result(op == OR ? std::max(a.lo, b.lo) : 0, top, dtype);
      }
    }
    return full();
  case SHL:
  case SHR:
    if (n == 2) {
      Range a = r(0), k = r(1);
      const int bits = 8 * dtype.scalar_itemsize();
      if (k.lo == k.hi && k.lo >= 0 && k.lo < bits) {
        const int s = static_cast<int>(k.lo);
        // x << k == x * 2^k (mod 2^bits); x >> k == floor(x / 2^k), both monotone.
        if (op == SHL) return int_result(a.lo * (i128{1} << s), a.hi * (i128{1} << s), dtype);
        return int_result(a.lo >> s, a.hi >> s, dtype);
      }
      if (op == SHR && a.lo >= 0) return int_result(0, a.hi, dtype);
    }
    return full();
  case WHERE:
    if (n == 3) {
      if (int c = decided(src[0]); c >= 0) {
        Range b = r(c ? 1 : 2);
        if (is_u64(src[c ? 1 : 2]->dtype) && !is_u64(dtype)) return full();
        return int_result(b.lo, b.hi, dtype);
      }
      return union_of(src, dtype, 1);
    }
    return full();
  case VECTORIZE:
    return union_of(src, dtype, 0);
  case CAST:
    // A value that fits the target keeps its range; anything else may wrap.
    if (n == 1 && !src[0]->dtype.is_float() && !src[0]->dtype.is_ptr && !src[0]->dtype.is_void())
      return int_result(r(0).lo, r(0).hi, dtype);
    return full();
  default:
    return full();
  }
}

// Index arithmetic's common case without __int128 or the general dispatch: ADD, SUB, MUL or
// MAX of two sources, or IDIV and MOD by one divisor, whose bounds are int64 values, no uint64
// involved. False (nothing written) when a bound overflows int64 or the divisor is 0, -1 or
// INT64_MIN: the general path then decides, as it does for everything else. The results are
// int_range's, and a bound outside the dtype gives its full range, as int_result does.
bool int64_binary(Ops op, DType dtype, const UOp& a, const UOp& b,
                  std::pair<ConstValue, ConstValue>& out) {
  using enum Ops;
  if (op != ADD && op != SUB && op != MUL && op != MAX && op != IDIV && op != MOD) return false;
  if (is_u64(dtype) || is_u64(a.dtype) || is_u64(b.dtype)) return false;
  const int64_t *alo = std::get_if<int64_t>(&a.vmin()), *ahi = std::get_if<int64_t>(&a.vmax()),
                *blo = std::get_if<int64_t>(&b.vmin()), *bhi = std::get_if<int64_t>(&b.vmax());
  if (alo == nullptr || ahi == nullptr || blo == nullptr || bhi == nullptr) return false;
  int64_t lo = 0, hi = 0;
  bool overflow = false;
  switch (op) {
  case ADD:
    overflow = __builtin_add_overflow(*alo, *blo, &lo) || __builtin_add_overflow(*ahi, *bhi, &hi);
    break;
  case SUB:
    overflow = __builtin_sub_overflow(*alo, *bhi, &lo) || __builtin_sub_overflow(*ahi, *blo, &hi);
    break;
  case MUL: {
    std::array<int64_t, 4> p{};
    overflow =
        __builtin_mul_overflow(*alo, *blo, &p[0]) || __builtin_mul_overflow(*alo, *bhi, &p[1]) ||
        __builtin_mul_overflow(*ahi, *blo, &p[2]) || __builtin_mul_overflow(*ahi, *bhi, &p[3]);
    lo = std::min({p[0], p[1], p[2], p[3]});
    hi = std::max({p[0], p[1], p[2], p[3]});
    break;
  }
  case IDIV: // truncation is monotone in the dividend: its bounds' quotients
  case MOD: {
    const int64_t d = *blo;
    if (d != *bhi || d == 0 || d == -1 || d == std::numeric_limits<int64_t>::min()) return false;
    const int64_t qlo = *alo / d, qhi = *ahi / d;
    if (op == IDIV) {
      lo = std::min(qlo, qhi), hi = std::max(qlo, qhi);
      break;
    }
    // mod_range for one divisor: exact within one truncation block, else |x % d| < |d| with
    // the dividend's sign.
    const int64_t m = d < 0 ? -d : d;
    if (*alo / m == *ahi / m) {
      lo = *alo % m, hi = *ahi % m;
    } else {
      lo = *alo >= 0 ? 0 : std::max(*alo, 1 - m);
      hi = *ahi <= 0 ? 0 : std::min(*ahi, m - 1);
    }
    break;
  }
  default: // MAX
    lo = std::max(*alo, *blo);
    hi = std::max(*ahi, *bhi);
    break;
  }
  if (overflow) return false;
  if (lo < int_dtype_min(dtype) || hi > int_dtype_max(dtype))
    out = full_range(dtype);
  else
    out = {lo, hi};
  return true;
}

} // namespace

std::pair<ConstValue, ConstValue> compute_vmin_vmax(Ops op, DType dtype,
                                                    std::span<const UOpPtr> src, const Arg& arg) {
  const Kind k = kind_of(dtype);
  if (k == Kind::Other) return full_range(dtype);
  if (op == Ops::CONST) return const_range(dtype, arg);
  if (k == Kind::Float) return full_range(dtype);
  if (k == Kind::Bool) return bool_range(op, src, arg);
  if (std::pair<ConstValue, ConstValue> r;
      src.size() == 2 && int64_binary(op, dtype, *src[0], *src[1], r))
    return r;
  return int_range(op, dtype, src, arg);
}

} // namespace tg
