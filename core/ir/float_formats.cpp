// Conversions between double and the narrow float formats. All four formats share one encoder
// and one decoder, parameterized by exponent/mantissa width, so the rounding logic (the part
// that is easy to get subtly wrong) exists once. The encoder works on the double's bits and
// rounds exactly once, straight to the target precision: going through float first would
// round twice and break ties-to-even for values just off a midpoint.
#include "tg/ir/float_formats.hpp"

#include <bit>
#include <cstdint>

namespace tg {
namespace {

struct Format {
  int exp_bits;
  int man_bits;
  bool has_inf; // IEEE-like: the all-ones exponent holds inf and NaN. false: OCP e4m3fn.
};

constexpr Format kHalf{5, 10, true};
constexpr Format kBF16{8, 7, true};
constexpr Format kE4M3{4, 3, false};
constexpr Format kE5M2{5, 2, true};

constexpr int bias(Format f) { return (1 << (f.exp_bits - 1)) - 1; }

constexpr uint64_t kDoubleManMask = (uint64_t{1} << 52) - 1;

// Encodes x with round to nearest, ties to even. Returns the code without needing more than
// 16 bits, so the callers narrow it.
uint32_t encode(double x, Format f) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const uint32_t sign = static_cast<uint32_t>(bits >> 63) << (f.exp_bits + f.man_bits);
  const int dexp = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t dman = bits & kDoubleManMask;
  const uint32_t exp_all_ones = (uint32_t{1} << f.exp_bits) - 1;
  const uint32_t inf_code = exp_all_ones << f.man_bits;
  // e4m3fn has one NaN per sign (all bits set); its largest finite code is one below that.
  const uint32_t e4m3_nan = (uint32_t{1} << (f.exp_bits + f.man_bits)) - 1;

  if (dexp == 0x7FF) {
    if (dman != 0) { // NaN: keep the sign and the top payload bits, and make it quiet, as an
                     // IEEE conversion does (matches GCC's _Float16 and CUDA's cvt).
      if (!f.has_inf) return sign | e4m3_nan;
      const uint32_t payload = static_cast<uint32_t>(dman >> (52 - f.man_bits));
      return sign | inf_code | payload | (uint32_t{1} << (f.man_bits - 1));
    }
    return sign | (f.has_inf ? inf_code : e4m3_nan - 1); // e4m3fn saturates infinities
  }
  if (dexp == 0 && dman == 0) return sign; // signed zero

  // |x| = m * 2^(e2 - 52) with m holding the implicit bit for normal doubles.
  const uint64_t m = dexp == 0 ? dman : (dman | (uint64_t{1} << 52));
  const int e2 = dexp == 0 ? -1022 : dexp - 1023; // exponent of bit 52 of m
  // Binade of the result: the target's smallest normal exponent bounds it from below, which
  // is where subnormals come from (their quantum stays at the smallest normal's).
  const int emin = 1 - bias(f);
  const int level = e2 < emin ? emin : e2;
  // Quantum of the target at this level is 2^(level - man_bits); m's unit is 2^(e2 - 52).
  const int shift = (level - f.man_bits) - (e2 - 52); // > 0 since man_bits < 52
  uint64_t n;
  if (shift >= 64) {
    n = 0; // below a quarter of the smallest subnormal: rounds to zero
  } else {
    n = m >> shift;
    const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  // n counts quanta including the implicit bit, so adding it to the level's exponent field
  // (minus one) yields the code, and a carry out of the mantissa bumps the exponent for free.
  // For subnormal levels level + bias - 1 == 0 and n is the code directly.
  const int64_t code = (static_cast<int64_t>(level + bias(f) - 1) << f.man_bits) + int64_t(n);
  if (f.has_inf) {
    if (code >= int64_t(inf_code)) return sign | inf_code; // overflow rounds to infinity
  } else if (code >= int64_t(e4m3_nan)) {
    return sign | (e4m3_nan - 1); // saturate to the largest finite value (448)
  }
  return sign | static_cast<uint32_t>(code);
}

double decode(uint32_t code, Format f) {
  const uint64_t sign = uint64_t((code >> (f.exp_bits + f.man_bits)) & 1) << 63;
  const uint32_t e = (code >> f.man_bits) & ((1u << f.exp_bits) - 1);
  const uint64_t man = code & ((1u << f.man_bits) - 1);
  const uint32_t exp_all_ones = (1u << f.exp_bits) - 1;
  if (f.has_inf && e == exp_all_ones) {
    if (man == 0) return std::bit_cast<double>(sign | (uint64_t{0x7FF} << 52));
    // NaN: keep the payload, set the quiet bit (an IEEE widening conversion quiets sNaNs).
    return std::bit_cast<double>(sign | (uint64_t{0x7FF} << 52) | (man << (52 - f.man_bits)) |
                                 (uint64_t{1} << 51));
  }
  if (!f.has_inf && e == exp_all_ones && man == (1u << f.man_bits) - 1)
    return std::bit_cast<double>(sign | 0x7FF8000000000000ull);
  if (e == 0) {
    if (man == 0) return std::bit_cast<double>(sign);
    // Subnormal: normalize into a double (every narrow subnormal is a normal double).
    int lz = std::countl_zero(man) - (64 - f.man_bits); // zeros below the implicit bit
    const uint64_t norm = (man << (lz + 1)) & ((uint64_t{1} << f.man_bits) - 1);
    const int exp = 1 - bias(f) - (lz + 1);
    return std::bit_cast<double>(sign | (uint64_t(exp + 1023) << 52) | (norm << (52 - f.man_bits)));
  }
  const int exp = int(e) - bias(f);
  return std::bit_cast<double>(sign | (uint64_t(exp + 1023) << 52) | (man << (52 - f.man_bits)));
}

} // namespace

uint16_t float_to_half(double x) { return static_cast<uint16_t>(encode(x, kHalf)); }
double half_to_float(uint16_t h) { return decode(h, kHalf); }
uint16_t float_to_bf16(double x) { return static_cast<uint16_t>(encode(x, kBF16)); }
double bf16_to_float(uint16_t b) { return decode(b, kBF16); }
uint8_t float_to_fp8e4m3(double x) { return static_cast<uint8_t>(encode(x, kE4M3)); }
double fp8e4m3_to_float(uint8_t b) { return decode(b, kE4M3); }
uint8_t float_to_fp8e5m2(double x) { return static_cast<uint8_t>(encode(x, kE5M2)); }
double fp8e5m2_to_float(uint8_t b) { return decode(b, kE5M2); }

} // namespace tg
