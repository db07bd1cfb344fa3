// Narrow float conversions against independent references: GCC's _Float16 for float16 (every
// bit pattern, every midpoint, random values), and for bfloat16 and the fp8s a deliberately
// slow reference that decodes every code from its fields and picks the nearest value.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tg/ir/dtype.hpp"
#include "tg/ir/float_formats.hpp"

namespace {

uint64_t dbits(double x) { return std::bit_cast<uint64_t>(x); }

// Hex text for failure messages (doctest stringifies each operand on its own, so stream
// manipulators do not carry over).
std::string hex(uint64_t v) {
  std::array<char, 24> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v, 16);
  return "0x" + std::string(buf.data(), res.ptr);
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A random double with its exponent drawn from [lo, hi] (unbiased) and a random sign and
// mantissa; the low mantissa bits are sometimes cleared so that exact ties show up.
double random_double(std::mt19937_64& rng, int lo, int hi) {
  std::uniform_int_distribution<int> exp_dist(lo, hi);
  uint64_t man = rng() & ((uint64_t{1} << 52) - 1);
  const uint64_t r = rng();
  if ((r & 3) == 0) man &= ~((uint64_t{1} << 40) - 1);
  const uint64_t sign = (r >> 2) & 1;
  const int e = exp_dist(rng);
  if (e < -1022) { // double subnormal: scale a normal down (exact, no rounding below 2^-1074
                   // matters for these narrow formats)
    return std::ldexp(std::bit_cast<double>((uint64_t{1023} << 52) | man), e) * (sign ? -1 : 1);
  }
  return std::bit_cast<double>((sign << 63) | (uint64_t(e + 1023) << 52) | man);
}

// ---- slow reference for the parameterized formats ---------------------------------------------

struct RefFormat {
  int exp_bits;
  int man_bits;
  bool has_inf; // false: OCP e4m3fn (no inf, NaN only at all-ones, saturating)
  uint32_t (*encode)(double);
  double (*decode)(uint32_t);
};

double ref_decode(uint32_t code, const RefFormat& f) {
  const uint32_t sign = (code >> (f.exp_bits + f.man_bits)) & 1;
  const uint32_t e = (code >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const uint32_t m = code & ((1u << f.man_bits) - 1);
  const uint32_t e_all = (1u << f.exp_bits) - 1, m_all = (1u << f.man_bits) - 1;
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  double mag;
  if (f.has_inf && e == e_all)
    mag = m ? kNaN : kInf;
  else if (!f.has_inf && e == e_all && m == m_all)
    mag = kNaN;
  else if (e == 0)
    mag = std::ldexp(double(m), 1 - bias - f.man_bits);
  else
    mag = std::ldexp(double(m + (1u << f.man_bits)), int(e) - bias - f.man_bits);
  return sign ? -mag : mag;
}

struct RefTable {
  RefFormat f;
  std::vector<double> vals;    // non-negative finite values, ascending
  std::vector<uint32_t> codes; // their codes (sign bit clear)
  uint32_t max_code = 0, inf_code = 0;
  double overflow_at = 0; // has_inf: |x| >= this rounds to infinity

  explicit RefTable(const RefFormat& fmt) : f(fmt) {
    const uint32_t n = 1u << (f.exp_bits + f.man_bits); // codes with sign clear
    for (uint32_t c = 0; c < n; ++c) {
      const double v = ref_decode(c, f);
      if (std::isfinite(v)) vals.push_back(v), codes.push_back(c);
      if (std::isinf(v)) inf_code = c;
    }
    max_code = codes.back();
    const double max = vals.back(), prev = vals[vals.size() - 2];
    overflow_at = max + (max - prev) / 2; // halfway to the next (unrepresentable) binade step
  }

  // Nearest representable value, ties to the even code. Not for NaN.
  uint32_t encode(double x) const {
    const uint32_t sign = std::signbit(x) ? 1u << (f.exp_bits + f.man_bits) : 0;
    const double a = std::fabs(x);
    if (f.has_inf && a >= overflow_at) return sign | inf_code;
    if (!f.has_inf && a > vals.back()) return sign | max_code; // saturate (incl. inf)
    const auto it = std::lower_bound(vals.begin(), vals.end(), a);
    const size_t hi = size_t(it - vals.begin());
    if (hi == vals.size()) return sign | max_code; // above max, below the overflow point
    if (vals[hi] == a || hi == 0) return sign | codes[hi];
    const size_t lo = hi - 1;
    const double dlo = a - vals[lo], dhi = vals[hi] - a;
    if (dlo < dhi) return sign | codes[lo];
    if (dhi < dlo) return sign | codes[hi];
    return sign | ((codes[lo] & 1) == 0 ? codes[lo] : codes[hi]);
  }
};

bool code_is_nan(uint32_t code, const RefFormat& f) { return std::isnan(ref_decode(code, f)); }

// Checks the fast encoder against the reference for x and -x; NaN results only need to be a
// NaN of the right sign.
void check_encode(const RefTable& t, double x) {
  for (double v : {x, -x}) {
    const uint32_t got = t.f.encode(v);
    if (std::isnan(v)) {
      CHECK(code_is_nan(got, t.f));
      CHECK((got >> (t.f.exp_bits + t.f.man_bits)) == (std::signbit(v) ? 1u : 0u));
      continue;
    }
    const uint32_t want = t.encode(v);
    if (got != want) {
      INFO("x = " << v << " (bits " << hex(dbits(v)) << ") got " << hex(got) << " want "
                  << hex(want));
      CHECK(got == want);
    }
  }
}

void check_format_exhaustive(const RefFormat& f, int random_count, uint64_t seed) {
  const RefTable t(f);
  const uint32_t ncodes = 1u << (1 + f.exp_bits + f.man_bits);
  // Decoding: every code against the field-by-field reference, bit for bit (NaN: NaN).
  int decode_mismatches = 0;
  for (uint32_t c = 0; c < ncodes; ++c) {
    const double got = f.decode(c), want = ref_decode(c, f);
    if (std::isnan(want)) {
      if (!std::isnan(got) || std::signbit(got) != std::signbit(want)) ++decode_mismatches;
    } else if (dbits(got) != dbits(want)) {
      ++decode_mismatches;
    }
  }
  CHECK(decode_mismatches == 0);
  // Every representable value encodes back to its own code.
  for (uint32_t c = 0; c < ncodes; ++c) {
    const double v = ref_decode(c, f);
    if (!std::isnan(v)) check_encode(t, v);
  }
  // Every midpoint between neighbours (ties to even) and the doubles just either side of it.
  for (size_t i = 0; i + 1 < t.vals.size(); ++i) {
    const double mid = (t.vals[i] + t.vals[i + 1]) / 2; // exact: narrow formats
    check_encode(t, mid);
    check_encode(t, std::nextafter(mid, 0.0));
    check_encode(t, std::nextafter(mid, kInf));
  }
  // Around the overflow boundary and beyond.
  for (double x :
       {t.overflow_at, std::nextafter(t.overflow_at, 0.0), std::nextafter(t.overflow_at, kInf),
        t.vals.back() * 2, 1e300, kInf, std::numeric_limits<double>::denorm_min(), 0.0, kNaN})
    check_encode(t, x);
  // Random doubles spanning from far below the smallest subnormal to beyond the largest value.
  std::mt19937_64 rng(seed);
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int lo = 1 - bias - f.man_bits - 4, hi = bias + 3;
  for (int i = 0; i < random_count; ++i) check_encode(t, random_double(rng, lo, hi));
}

uint32_t enc_bf16(double x) { return tg::float_to_bf16(x); }
double dec_bf16(uint32_t c) { return tg::bf16_to_float(static_cast<uint16_t>(c)); }
uint32_t enc_e4m3(double x) { return tg::float_to_fp8e4m3(x); }
double dec_e4m3(uint32_t c) { return tg::fp8e4m3_to_float(static_cast<uint8_t>(c)); }
uint32_t enc_e5m2(double x) { return tg::float_to_fp8e5m2(x); }
double dec_e5m2(uint32_t c) { return tg::fp8e5m2_to_float(static_cast<uint8_t>(c)); }
uint32_t enc_half(double x) { return tg::float_to_half(x); }
double dec_half(uint32_t c) { return tg::half_to_float(static_cast<uint16_t>(c)); }

constexpr RefFormat kBF16{8, 7, true, enc_bf16, dec_bf16};
constexpr RefFormat kE4M3{4, 3, false, enc_e4m3, dec_e4m3};
constexpr RefFormat kE5M2{5, 2, true, enc_e5m2, dec_e5m2};
constexpr RefFormat kHalfRef{5, 10, true, enc_half, dec_half};

#ifdef __FLT16_MANT_DIG__
uint16_t f16_bits(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
_Float16 f16_from_bits(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, sizeof h);
  return h;
}
// float_to_half must match GCC's conversion bit for bit, NaN payloads included.
int half_mismatches(double x) {
  const uint16_t got = tg::float_to_half(x), want = f16_bits(static_cast<_Float16>(x));
  if (got == want) return 0;
  INFO("x = " << x << " (bits " << hex(dbits(x)) << ") got " << hex(got) << " want " << hex(want));
  CHECK(got == want);
  return 1;
}
#endif

} // namespace

TEST_SUITE("ir.float_formats") {

  TEST_CASE("known values") {
    using namespace tg;
    CHECK(float_to_half(1.0) == 0x3C00);
    CHECK(float_to_half(-2.0) == 0xC000);
    CHECK(float_to_half(65504.0) == 0x7BFF);
    CHECK(float_to_half(65519.99) == 0x7BFF);
    CHECK(float_to_half(65520.0) == 0x7C00); // the overflow midpoint rounds to inf
    CHECK(float_to_half(std::ldexp(1.0, -24)) == 0x0001);
    CHECK(float_to_half(std::ldexp(1.0, -25)) == 0x0000);                 // tie -> even (zero)
    CHECK(float_to_half(std::nextafter(std::ldexp(1.0, -25), 1.0)) == 1); // just above the tie
    CHECK(float_to_half(-0.0) == 0x8000);
    CHECK(float_to_half(-kInf) == 0xFC00);
    CHECK((float_to_half(kNaN) & 0x7C00) == 0x7C00);
    CHECK((float_to_half(kNaN) & 0x03FF) != 0);
    CHECK(half_to_float(0x3555) == 0.333251953125);
    CHECK(std::signbit(half_to_float(0x8000)));

    CHECK(float_to_bf16(1.0) == 0x3F80);
    CHECK(float_to_bf16(-1.0) == 0xBF80);
    CHECK(bf16_to_float(0x3F80) == 1.0);
    CHECK(float_to_bf16(3.0e38) == 0x7F62);
    CHECK(float_to_bf16(1e39) == 0x7F80);
    CHECK(std::isnan(bf16_to_float(float_to_bf16(-kNaN))));
    CHECK((float_to_bf16(-kNaN) & 0x8000) == 0x8000);

    CHECK(float_to_fp8e4m3(448.0) == 0x7E);
    CHECK(fp8e4m3_to_float(0x7E) == 448.0);
    CHECK(float_to_fp8e4m3(std::ldexp(1.0, -9)) == 0x01);
    CHECK(fp8e4m3_to_float(0x01) == std::ldexp(1.0, -9));
    CHECK(float_to_fp8e4m3(1.0) == 0x38);
    CHECK(float_to_fp8e4m3(464.0) == 0x7E); // would round to 480: saturates
    CHECK(float_to_fp8e4m3(1e10) == 0x7E);
    CHECK(float_to_fp8e4m3(kInf) == 0x7E);
    CHECK(float_to_fp8e4m3(-kInf) == 0xFE);
    CHECK(float_to_fp8e4m3(kNaN) == 0x7F);
    CHECK(float_to_fp8e4m3(-kNaN) == 0xFF);
    CHECK(std::isnan(fp8e4m3_to_float(0x7F)));
    CHECK(std::isnan(fp8e4m3_to_float(0xFF)));
    CHECK(fp8e4m3_to_float(0x78) == 256.0); // exponent all ones is still finite in e4m3fn

    CHECK(float_to_fp8e5m2(57344.0) == 0x7B);
    CHECK(fp8e5m2_to_float(0x7B) == 57344.0);
    CHECK(fp8e5m2_to_float(0x7C) == kInf);
    CHECK(fp8e5m2_to_float(0xFC) == -kInf);
    CHECK(float_to_fp8e5m2(kInf) == 0x7C);
    CHECK(float_to_fp8e5m2(61440.0) == 0x7C); // overflow midpoint -> inf
    CHECK(float_to_fp8e5m2(61439.0) == 0x7B);
    CHECK(float_to_fp8e5m2(std::ldexp(1.0, -16)) == 0x01);
    CHECK(std::isnan(fp8e5m2_to_float(float_to_fp8e5m2(kNaN))));
  }

  TEST_CASE("signed zero and tiny values") {
    using namespace tg;
    const double tiny = std::numeric_limits<double>::denorm_min();
    CHECK(float_to_half(-tiny) == 0x8000);
    CHECK(float_to_bf16(-tiny) == 0x8000);
    CHECK(float_to_fp8e4m3(-tiny) == 0x80);
    CHECK(float_to_fp8e5m2(-tiny) == 0x80);
    CHECK(float_to_fp8e4m3(0.0) == 0x00);
    CHECK(std::signbit(fp8e5m2_to_float(0x80)));
    CHECK(std::signbit(bf16_to_float(0x8000)));
  }

  TEST_CASE("bfloat16 against the slow reference") { check_format_exhaustive(kBF16, 300000, 1); }
  TEST_CASE("fp8e4m3 against the slow reference") { check_format_exhaustive(kE4M3, 200000, 2); }
  TEST_CASE("fp8e5m2 against the slow reference") { check_format_exhaustive(kE5M2, 200000, 3); }
  // The same reference also covers float16, so the check runs where _Float16 does not exist.
  TEST_CASE("float16 against the slow reference") { check_format_exhaustive(kHalfRef, 100000, 4); }

  TEST_CASE("bfloat16 of floats matches the integer rounding formula") {
    // The classic bit trick (add 0x7FFF plus the lowest kept bit, truncate) is exact RNE for
    // non-NaN binary32 inputs: an independent reference over random float bit patterns.
    std::mt19937_64 rng(5);
    int mismatches = 0;
    for (int i = 0; i < 500000; ++i) {
      const auto u = static_cast<uint32_t>(rng());
      const float f = std::bit_cast<float>(u);
      const uint16_t got = tg::float_to_bf16(f);
      if (std::isnan(f)) {
        mismatches += std::isnan(tg::bf16_to_float(got)) && (got >> 15) == (u >> 31) ? 0 : 1;
        continue;
      }
      const auto want = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
      mismatches += got == want ? 0 : 1;
      // And decoding is exactly the top half of a binary32.
      mismatches +=
          dbits(tg::bf16_to_float(got)) == dbits(double(std::bit_cast<float>(uint32_t(got) << 16)))
              ? 0
              : 1;
    }
    CHECK(mismatches == 0);
  }

#ifdef __FLT16_MANT_DIG__
  TEST_CASE("float16 decode matches _Float16 on every bit pattern") {
    int mismatches = 0;
    for (uint32_t c = 0; c < 65536; ++c) {
      const auto h = static_cast<uint16_t>(c);
      const double want = static_cast<double>(f16_from_bits(h));
      mismatches += dbits(tg::half_to_float(h)) == dbits(want) ? 0 : 1;
    }
    CHECK(mismatches == 0);
  }

  TEST_CASE("float16 encode matches _Float16 on values, midpoints and random inputs") {
    int mismatches = 0;
    // Every half (NaNs included: payload and quiet bit must match too).
    for (uint32_t c = 0; c < 65536; ++c)
      mismatches += half_mismatches(static_cast<double>(f16_from_bits(static_cast<uint16_t>(c))));
    // Every midpoint between neighbouring finite halves, including max -> inf, and either side.
    for (uint16_t c = 0; c < 0x7C00; ++c) {
      const double a = static_cast<double>(f16_from_bits(c));
      const double b = c + 1 == 0x7C00 ? 65536.0 : static_cast<double>(f16_from_bits(c + 1));
      const double mid = (a + b) / 2;
      for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf)})
        mismatches += half_mismatches(x) + half_mismatches(-x);
    }
    std::mt19937_64 rng(6);
    // Random doubles over the half range, from below the smallest subnormal to overflow.
    for (int i = 0; i < 1000000; ++i) mismatches += half_mismatches(random_double(rng, -30, 17));
    // Random binary32 patterns: infinities, NaN payloads, subnormals of both formats.
    for (int i = 0; i < 1000000; ++i) {
      const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
      const uint16_t want = f16_bits(static_cast<_Float16>(f));
      mismatches += tg::float_to_half(f) == want ? 0 : 1;
    }
    // Random doubles of any exponent (double subnormals, huge values, NaNs).
    for (int i = 0; i < 300000; ++i) mismatches += half_mismatches(std::bit_cast<double>(rng()));
    CHECK(mismatches == 0);
  }
#endif

} // TEST_SUITE
