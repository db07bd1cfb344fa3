#pragma once
// Exact conversions between double/float and the narrow float formats, round to nearest even,
// with NaN, infinities and subnormals handled as IEEE 754 (and OCP FP8) define them.
#include <cstdint>

namespace tg {

// float16 (IEEE binary16)
uint16_t float_to_half(double x);
double half_to_float(uint16_t h);
// bfloat16 (the top half of a binary32)
uint16_t float_to_bf16(double x);
double bf16_to_float(uint16_t b);
// fp8e4m3fn (OCP): bias 7, no infinities, 0x7F/0xFF are NaN. Values beyond the largest finite
// (448) saturate to +-448 after rounding, as tinygrad and CUDA's satfinite conversion do.
uint8_t float_to_fp8e4m3(double x);
double fp8e4m3_to_float(uint8_t b);
// fp8e5m2 (OCP): bias 15, IEEE-like with infinities; overflow rounds to +-inf.
uint8_t float_to_fp8e5m2(double x);
double fp8e5m2_to_float(uint8_t b);

} // namespace tg
