// Transcendentals by polynomial approximation, in the shape of tinygrad's transcendental.py
// (xexp2, xlog2, xsin after SLEEF), written for this IR: every function builds a graph of
// ADD/SUB/MUL/FDIV/NEG, comparisons and WHERE, CAST/BITCAST and integer SHL/SHR/AND/OR/XOR.
//
// The polynomial coefficients are near-minimax (Chebyshev) fits made with mpmath for this file
// (degree chosen so the fit error is far below half an ulp of the type), rounded to the type;
// scripts/transcendental_coefficients.py regenerates them and the tables of 2/pi and pi/2.
//
// - exp2: x = q + s with q = round(x), |s| <= 1/2; 2^s = 1 + s*P(s); 2^q applied in two
//   halves, each a power of two built from its exponent bits (normal even where 2^q is not).
// - log2: x = m * 2^e with m in [0.75, 1.5) (exponent bits, exact; denormals are scaled by 2^64
//   first); t = (m-1)/(m+1); log2(m) = t*(C + t^2*T(t^2)), C = 2/ln 2 split in two; t and C*t
//   are double-word values so the sum with e rounds about once.
// - sin: |x| < pi/4 directly; otherwise x = (q + f)*pi/2 with |f| <= 1/2 by Payne-Hanek: the
//   bits of 2/pi that matter for the exponent of x (a 128-bit window of a table, 192 bits for
//   float64) times the mantissa, in 32x32->64-bit integer products, give q mod 4 and f in
//   fixed point (62 bits, float64 126); f*pi/2 is formed in integers and converted once
//   (float32), or as a double-word value (float64). float64 below 2^20 uses Cody-Waite (pi/2
//   in four parts, the first three exact in products with q). Then sin or cos of the reduced
//   argument by quadrant, the sign of x restored by its sign bit.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "tg/decompositions.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/knobs.hpp"

namespace tg {
namespace {

using enum Ops;

struct FloatInfo {
  DType f, s, u;    // the float, its signed and unsigned integers of the same width
  int mant;         // mantissa bits
  int64_t bias;     // exponent bias
  int64_t exp_mask; // exponent field mask (after shifting by mant)
  bool f64;
};

FloatInfo info(DType f) {
  const uint16_t n = f.count;
  if (f.scalar_type == ScalarType::Float64)
    return {f, DType(ScalarType::Int64, n), DType(ScalarType::UInt64, n), 52, 1023, 0x7ff, true};
  if (f.scalar_type == ScalarType::Float32)
    return {f, DType(ScalarType::Int32, n), DType(ScalarType::UInt32, n), 23, 127, 0xff, false};
  throw Error("transcendental decomposition of " + f.name() +
              ": only float32 and float64 are computed directly (narrower floats go through "
              "float32)");
}

// Constants of a node's dtype, and of an explicit dtype.
UOpPtr k(const UOpPtr& like, double v) { return UOp::const_(like->dtype, v); }
UOpPtr ki(DType d, int64_t v) { return UOp::const_(d, v); }
UOpPtr ku(DType d, uint64_t v) { return UOp::const_(d, static_cast<int64_t>(v)); }

UOpPtr add(const UOpPtr& a, const UOpPtr& b) { return a->alu(ADD, {b}); }
UOpPtr sub(const UOpPtr& a, const UOpPtr& b) { return a->alu(SUB, {b}); }
UOpPtr mul(const UOpPtr& a, const UOpPtr& b) { return a->alu(MUL, {b}); }
UOpPtr addk(const UOpPtr& a, double v) { return add(a, k(a, v)); }
UOpPtr mulk(const UOpPtr& a, double v) { return mul(a, k(a, v)); }
UOpPtr shl(const UOpPtr& a, int64_t n) { return a->alu(SHL, {ki(a->dtype, n)}); }
UOpPtr shr(const UOpPtr& a, int64_t n) { return a->alu(SHR, {ki(a->dtype, n)}); }
UOpPtr band(const UOpPtr& a, uint64_t m) { return a->alu(AND, {ku(a->dtype, m)}); }
UOpPtr ltk(const UOpPtr& a, double v) { return a->lt(k(a, v)); }
UOpPtr sel(const UOpPtr& c, const UOpPtr& a, const UOpPtr& b) { return c->where(a, b); }

// c[0] + x*(c[1] + x*(...)): Horner with the coefficients lowest degree first.
UOpPtr horner(const UOpPtr& x, const std::vector<double>& c) {
  UOpPtr r = k(x, c.back());
  for (size_t i = c.size() - 1; i-- > 0;) r = add(mul(r, x), k(x, c[i]));
  return r;
}

// 2^n for an integer n (signed, of the float's width) whose biased exponent is normal.
UOpPtr pow2(const UOpPtr& n, const FloatInfo& fi) {
  return shl(add(n, ki(fi.s, fi.bias)), fi.mant)->bitcast(fi.f);
}

// a*b = p + err exactly (Dekker), splitting each factor in halves with Veltkamp's constant.
std::pair<UOpPtr, UOpPtr> split(const UOpPtr& a, const FloatInfo& fi) {
  const UOpPtr c = mulk(a, fi.f64 ? 134217729.0 : 4097.0); // 2^27+1, 2^12+1
  const UOpPtr hi = sub(c, sub(c, a));
  return {hi, sub(a, hi)};
}
std::pair<UOpPtr, UOpPtr> two_prod(const UOpPtr& a, const UOpPtr& b, const FloatInfo& fi) {
  const UOpPtr p = mul(a, b);
  const auto [ah, al] = split(a, fi);
  const auto [bh, bl] = split(b, fi);
  const UOpPtr err = add(add(add(sub(mul(ah, bh), p), mul(ah, bl)), mul(al, bh)), mul(al, bl));
  return {p, err};
}

// ---------------------------------------------------------------------------- exp2

UOpPtr exp2_impl(const UOpPtr& d) {
  const FloatInfo fi = info(d->dtype);
  // Beyond these the result is 0 or inf; 2^-150 (float32) is half the smallest denormal and
  // rounds to 0.
  const double lower = fi.f64 ? -1075.0 : -150.0, upper = fi.f64 ? 1024.0 : 128.0;
  // NaN, infinities and out-of-range values compute on 0 (their result is replaced below).
  const UOpPtr x = sel(ltk(d, upper), sel(ltk(d, lower), k(d, 0.0), d), k(d, 0.0));
  // q = round(x) (half away from zero), s = x - q exactly.
  const UOpPtr q = add(x, sel(ltk(x, 0.0), k(x, -0.5), k(x, 0.5)))->cast(fi.s);
  const UOpPtr s = sub(x, q->cast(fi.f));
  // 2^s = 1 + s*P(s) on [-1/2, 1/2].
  static const std::vector<double> p32 = {
      0.6931471824645996,    0.24022650718688965,    0.05550410971045494,  0.009618056938052177,
      0.0013333501992747188, 0.00015461444854736328, 1.529732435301412e-05};
  static const std::vector<double> p64 = {
      0.6931471805599453,     0.24022650695910072,    0.055504108664821625,
      0.00961812910762848,    0.001333355814640647,   0.00015403530393370734,
      1.5252733841556773e-05, 1.3215486808705563e-06, 1.0178057087733941e-07,
      7.0548973041554995e-09, 4.4558179083360645e-10, 2.5729324177362305e-11};
  UOpPtr u = addk(mul(s, horner(s, fi.f64 ? p64 : p32)), 1.0);
  // u * 2^q as u * 2^(q>>1) * 2^(q - (q>>1)): each factor is a normal power of two.
  const UOpPtr h = shr(q, 1);
  u = mul(mul(u, pow2(h, fi)), pow2(sub(q, h), fi));
  UOpPtr r = sel(ltk(d, lower), k(d, 0.0), u);
  r = sel(ltk(d, upper), r, k(d, INFINITY));
  return sel(d->ne(d), k(d, NAN), r);
}

// ---------------------------------------------------------------------------- log2

UOpPtr log2_impl(const UOpPtr& d) {
  const FloatInfo fi = info(d->dtype);
  // Denormals (and anything below the smallest normal) are scaled into the normal range.
  const UOpPtr is_den = ltk(d, fi.f64 ? 0x1p-1022 : 0x1p-126);
  const UOpPtr a = sel(is_den, mulk(d, 0x1p64), d);
  // a = m * 2^e with m in [0.75, 1.5): subtracting the bits of 0.75 makes the exponent field
  // count from 0.75, so its arithmetic shift is e; m keeps a's mantissa with e taken off.
  const UOpPtr bits = a->bitcast(fi.s);
  const int64_t b075 = fi.f64 ? 0x3FE8000000000000LL : 0x3F400000LL;
  const UOpPtr e = shr(sub(bits, ki(fi.s, b075)), fi.mant);
  const UOpPtr m = sub(bits, shl(e, fi.mant))->bitcast(fi.f);
  UOpPtr ef = e->cast(fi.f);
  ef = sel(is_den, addk(ef, -64.0), ef);
  // log2(m) = log2((1+t)/(1-t)) = t*(C + y*T(y)), t = (m-1)/(m+1), y = t^2 in [0, 1/25].
  // t and C*t are carried as double-word values (hi + lo): with e = -1 the result cancels to
  // about half of log2(m), and the rounding errors of t and C*t alone would cost 4 ulp.
  const UOpPtr num = addk(m, -1.0);              // exact
  const UOpPtr den = addk(m, 1.0);               // rounded; den_lo is what was lost
  const UOpPtr den_lo = sub(m, addk(den, -1.0)); // exact (Sterbenz, twice)
  const UOpPtr t = num->alu(FDIV, {den});
  const auto [p, perr] = two_prod(t, den, fi); // t*den = p + perr exactly
  const UOpPtr rem = sub(sub(sub(num, p), perr), mul(t, den_lo));
  const UOpPtr t_lo = rem->alu(FDIV, {den}); // t + t_lo = num / (den + den_lo)
  const UOpPtr y = mul(t, t);
  static const std::vector<double> t32 = {0.9617967009544373, 0.5770825147628784,
                                          0.4116404950618744, 0.3426017761230469};
  static const std::vector<double> t64 = {
      0.9617966939259756,  0.5770780163556979,  0.4121985830521351, 0.32059890974172983,
      0.26230703903369074, 0.22201395474724933, 0.1905852156025635, 0.19626445996843472};
  // C = 2/ln(2) = c_hi + c_lo.
  const double c_hi = fi.f64 ? 2.8853900817779268 : 2.885390043258667;
  const double c_lo = fi.f64 ? 4.0710547481862066e-17 : 3.851926067000022e-08;
  const auto [a_hi, a_lo] = two_prod(k(t, c_hi), t, fi);
  const UOpPtr lo = add(add(a_lo, add(mulk(t_lo, c_hi), mulk(t, c_lo))),
                        mul(mul(t, y), horner(y, fi.f64 ? t64 : t32)));
  // e + a_hi exactly as s + s_err (Knuth's two-sum), then the small terms.
  const UOpPtr sm = add(ef, a_hi);
  const UOpPtr bb = sub(sm, ef);
  const UOpPtr s_err = add(sub(ef, sub(sm, bb)), sub(a_hi, bb));
  UOpPtr r = add(sm, add(s_err, lo));
  r = sel(ltk(d, INFINITY), r, k(d, INFINITY));  // log2(inf) = inf
  r = sel(d->ne(k(d, 0.0)), r, k(d, -INFINITY)); // log2(+-0) = -inf
  r = sel(ltk(d, 0.0), k(d, NAN), r);            // negatives (and -inf) are NaN
  return sel(d->ne(d), k(d, NAN), r);
}

// ---------------------------------------------------------------------------- sin

// 2/pi in 32-bit words: word i holds the bits of weight 2^-(32i+1) .. 2^-(32i+32).
constexpr uint32_t kTwoOverPi[] = {
    0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu,
    0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu,
    0xE88235F5u, 0x2EBB4484u, 0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u, 0x9C845F8Bu,
    0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu, 0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u,
    0x4F463F66u, 0x9E5FEA2Du, 0x7527BAC7u, 0xEBE5F17Bu, 0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u,
    0x1F8D5D08u, 0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du};
constexpr int kLeadZeros = 2; // zero words before the table: windows that start before 2^-1

// Word w of the table with kLeadZeros zero words in front (0 past either end).
uint64_t tz(int64_t w) {
  const int64_t i = w - kLeadZeros;
  constexpr int64_t n = sizeof(kTwoOverPi) / sizeof(kTwoOverPi[0]);
  return i < 0 || i >= n ? 0 : kTwoOverPi[i];
}

// Payne-Hanek for a finite ax >= pi/4: (q, r) with ax = (q + f)*pi/2 (mod 2pi), r = f*pi/2,
// |f| <= 1/2. q is int32 (only q mod 4 is meaningful).
std::pair<UOpPtr, UOpPtr> payne_hanek(const UOpPtr& ax, const FloatInfo& fi) {
  const DType u64(ScalarType::UInt64, ax->dtype.count), i64(ScalarType::Int64, ax->dtype.count);
  const DType i32(ScalarType::Int32, ax->dtype.count);
  // ax = M * 2^E with an integer mantissa M (ax is normal).
  const UOpPtr bits = ax->bitcast(fi.u)->cast(u64);
  const UOpPtr biased = band(shr(bits, fi.mant), static_cast<uint64_t>(fi.exp_mask))->cast(i32);
  const UOpPtr mant = bits->alu(AND, {ku(u64, (uint64_t{1} << fi.mant) - 1)})
                          ->alu(OR, {ku(u64, uint64_t{1} << fi.mant)});
  const UOpPtr E = sub(biased, ki(i32, fi.bias + fi.mant));
  // The bits of 2/pi from weight 2^-(E-1) on decide ax*2/pi mod 4: bit j0 = E-1 sits at bit
  // offset o of word w (counting the leading zero words).
  const UOpPtr j = sub(E, ki(i32, 2)); // j0 - 1
  const UOpPtr w = add(shr(j, 5), ki(i32, kLeadZeros));
  const UOpPtr o = band(j, 31)->cast(u64);
  // float32 takes a 128-bit window of 2/pi and keeps the 64 bits V of the product that hold
  // q and a 62-bit remainder; float64 takes 192 bits and also the 64 bits L below V, since
  // its remainder can cancel some 60 bits more than float32's.
  const int nwin = fi.f64 ? 6 : 4;
  // The largest word index any exponent of this type needs, plus the window's words.
  const int64_t max_exp = (fi.exp_mask - 1) - fi.bias - fi.mant;
  const int64_t max_w = ((max_exp - 2) >> 5) + kLeadZeros + nwin - 1;
  // Window W = w0:w1:... (w0 most significant), 32 bits each, from word pairs.
  std::vector<UOpPtr> win;
  const UOpPtr shift = sub(ku(u64, 32), o);
  for (int n = 0; n < nwin; ++n) {
    const UOpPtr wn = add(w, ki(i32, n));
    UOpPtr pair = ku(u64, 0);
    for (int64_t c = max_w - (nwin - 1) + n; c >= 0; --c)
      pair = sel(wn->ne(ki(i32, c)), pair, ku(u64, (tz(c) << 32) | tz(c + 1)));
    win.push_back(band(pair->alu(SHR, {shift}), 0xffffffffu));
  }
  // Mantissa limbs, least significant first.
  std::vector<UOpPtr> m{band(mant, 0xffffffffu)};
  if (fi.f64) m.push_back(shr(mant, 32));
  // ax*2/pi mod 4 = M*W * 2^(2 - 32*nwin): V = bits top..top+63 of M*W is that times 2^62, L
  // the 64 bits below. Each product m_i*w_n sits at bit 32*(i + nwin-1 - n); its two 32-bit
  // halves are added where they land (carries out of L go into V), lower bits are dropped.
  const int64_t top = 32 * nwin - 64;
  UOpPtr v = ku(u64, 0), lo = ku(u64, 0);
  auto add_half = [&](const UOpPtr& h, int64_t pos) {
    if (pos >= top && pos < top + 64) v = add(v, pos == top ? h : shl(h, pos - top));
    if (fi.f64 && pos >= top - 64 && pos < top) {
      const UOpPtr a = pos == top - 64 ? h : shl(h, pos - (top - 64));
      const UOpPtr sum = add(lo, a);
      v = add(v, sum->lt(a)->cast(u64)); // carry
      lo = sum;
    }
  };
  for (size_t i = 0; i < m.size(); ++i)
    for (int n = 0; n < nwin; ++n) {
      const int64_t pos = 32 * (static_cast<int64_t>(i) + nwin - 1 - n);
      const UOpPtr p = mul(m[i], win[n]);
      add_half(band(p, 0xffffffffu), pos);
      add_half(shr(p, 32), pos + 32);
    }
  // Round to the nearest quadrant: q = top two bits of V + 2^61, f = the rest - 2^61.
  const UOpPtr vr = add(v, ku(u64, uint64_t{1} << 61));
  const UOpPtr q = shr(vr, 62)->cast(i32);
  const UOpPtr f = sub(band(vr, (uint64_t{1} << 62) - 1)->cast(i64), ki(i64, int64_t{1} << 61));
  UOpPtr r;
  if (fi.f64) {
    // F = f + L/2^64 as fh + fl (fh = f rounded, fl = the exact integer rest plus L), times
    // pi/2 * 2^-62 = c_hi + c_lo with the leading product exact (Dekker).
    const UOpPtr fh = f->cast(fi.f);
    const UOpPtr fl = add(sub(f, fh->cast(i64))->cast(fi.f), mulk(lo->cast(fi.f), 0x1p-64));
    const auto [ph, pl] = two_prod(fh, k(fh, 0x1.921fb54442d18p-62), fi);
    r = add(ph, add(pl, add(mulk(fl, 0x1.921fb54442d18p-62), mulk(fh, 0x1.1a62633145c07p-116))));
  } else {
    // |f|*pi/2 in integers (pi/2 to 32 bits, rounding once at the end), then one conversion.
    const UOpPtr af = sel(f->lt(ki(i64, 0)), -f, f)->cast(u64);
    const UOpPtr c32 = ku(u64, 3373259426u); // round(pi/2 * 2^31)
    const UOpPtr pr = add(mul(shr(af, 32), c32), shr(mul(band(af, 0xffffffffu), c32), 32));
    const UOpPtr ar = mulk(pr->cast(fi.f), 0x1p-61);
    r = sel(f->lt(ki(i64, 0)), -ar, ar);
  }
  return {q, r};
}

// Cody-Waite (float64, ax < 2^20): q = round(ax*2/pi), r = ax - q*pi/2 with pi/2 in four
// parts, the first three of 33 bits so that their products with q are exact.
std::pair<UOpPtr, UOpPtr> cody_waite(const UOpPtr& ax, const FloatInfo& fi) {
  const UOpPtr q = addk(mulk(ax, 0.63661977236758134), 0.5)->cast(fi.s);
  const UOpPtr qf = q->cast(fi.f);
  UOpPtr r = sub(ax, mulk(qf, 1.5707963267341256));
  r = sub(r, mulk(qf, 6.077100506303966e-11));
  r = sub(r, mulk(qf, 2.0222662487111665e-21));
  r = sub(r, mulk(qf, 8.4784276603689e-32));
  return {q->cast(DType(ScalarType::Int32, ax->dtype.count)), r};
}

UOpPtr sin_impl(const UOpPtr& d) {
  const FloatInfo fi = info(d->dtype);
  const DType i32(ScalarType::Int32, d->dtype.count);
  // NaN and infinities (d - d is NaN for them) compute on 0; their result is NaN.
  const UOpPtr nonfinite = sub(d, d)->ne(k(d, 0.0));
  const UOpPtr x = sel(nonfinite, k(d, 0.0), d);
  const UOpPtr xb = x->bitcast(fi.u);
  const uint64_t sign = uint64_t{1} << (fi.f64 ? 63 : 31);
  const UOpPtr ax = band(xb, sign - 1)->bitcast(fi.f);
  const UOpPtr small = ltk(ax, 0.78539816339744828); // pi/4
  auto [qp, rp] = payne_hanek(sel(small, k(ax, 1.0), ax), fi);
  UOpPtr q = sel(small, ki(i32, 0), qp), r = sel(small, ax, rp);
  if (fi.f64) {
    const UOpPtr mid = ltk(ax, 0x1p20);
    auto [qc, rc] = cody_waite(sel(mid, ax, k(ax, 0.0)), fi);
    q = sel(small, ki(i32, 0), sel(mid, qc, qp));
    r = sel(small, ax, sel(mid, rc, rp));
  }
  // sin(r) = r + r*y*S(y), cos(r) = 1 - y/2 + y^2*K(y), y = r^2 <= (pi/4)^2.
  static const std::vector<double> s32 = {-0.1666666716337204, 0.008333331905305386,
                                          -0.00019840087043121457, 2.7249925551586784e-06};
  static const std::vector<double> s64 = {-0.16666666666666666,    0.008333333333333333,
                                          -0.00019841269841269839, 2.75573192239811e-06,
                                          -2.5052108382390036e-08, 1.6059042781086055e-10,
                                          -7.646961352094323e-13,  2.7912442433471976e-15};
  static const std::vector<double> c32 = {0.0416666679084301, -0.00138888880610466,
                                          2.480059993104078e-05, -2.730095900460583e-07};
  static const std::vector<double> c64 = {0.041666666666666664,   -0.001388888888888889,
                                          2.4801587301587298e-05, -2.7557319223983495e-07,
                                          2.0876756986341493e-09, -1.1470745069612994e-11,
                                          4.779376099913555e-14,  -1.5518109885664316e-16};
  const UOpPtr y = mul(r, r);
  const UOpPtr sinr = add(r, mul(r, mul(y, horner(y, fi.f64 ? s64 : s32))));
  const UOpPtr cosr = addk(add(mulk(y, -0.5), mul(mul(y, y), horner(y, fi.f64 ? c64 : c32))), 1.0);
  // sin(q*pi/2 + r) by quadrant, then the sign of x (sin is odd; keeps sin(-0) = -0).
  UOpPtr res = sel(band(q, 1)->ne(ki(i32, 0)), cosr, sinr);
  res = sel(band(q, 2)->ne(ki(i32, 0)), -res, res);
  res = res->bitcast(fi.u)->alu(XOR, {band(xb, sign)})->bitcast(fi.f);
  return sel(nonfinite, k(d, NAN), res);
}

// Narrow floats compute in float32.
UOpPtr via_f32(const UOpPtr& d, UOpPtr (*impl)(const UOpPtr&)) {
  const DType dt = d->dtype;
  if (dt.scalar_type == ScalarType::Float32 || dt.scalar_type == ScalarType::Float64)
    return impl(d);
  return impl(d->cast(DType(ScalarType::Float32, dt.count)))->cast(dt);
}

} // namespace

UOpPtr xexp2(const UOpPtr& d) { return via_f32(d, exp2_impl); }
UOpPtr xlog2(const UOpPtr& d) { return via_f32(d, log2_impl); }
UOpPtr xsin(const UOpPtr& d) { return via_f32(d, sin_impl); }

UOpPtr decompose_transcendentals(const UOpPtr& ast, const RendererCaps& caps) {
  if (caps.has_transcendentals && knobs::TRANSCENDENTAL < 2) return ast;
  static const PatternMatcher pm({
      {UPat(OpSet{EXP2, LOG2, SIN}).named("x"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& x = c["x"];
         if (!x->dtype.is_float()) return nullptr;
         const UOpPtr& d = x->src[0];
         return x->op == EXP2 ? xexp2(d) : x->op == LOG2 ? xlog2(d) : xsin(d);
       }},
  });
  return graph_rewrite(ast, pm, "transcendentals");
}

} // namespace tg
