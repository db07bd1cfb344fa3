// The dequantization of GGML blocks as tensor ops; see tg/ggml_quants.hpp.
//
// Each format is a reshape of the raw bytes into (blocks, bytes per block), the fields cut out
// as columns, the bit fields spread by broadcasting a column against a small arange of shift
// amounts, and the reference formula in float32 (the same operations in the same order as
// ggml's dequantize_row_*, so the results are bit-identical). Nothing here is realized: the
// graph fuses into the kernel that reads the weight (a matmul reads each quantized byte once).
#include "tg/error.hpp"
#include "tg/ggml_quants.hpp"

namespace tg {

namespace {

Tensor shr(const Tensor& t, int64_t n) { return t.rshift(t.scalar_like(n)); }
Tensor shl(const Tensor& t, int64_t n) { return t.lshift(t.scalar_like(n)); }
Tensor band(const Tensor& t, int64_t n) { return t.bitwise_and(t.scalar_like(n)); }

// The per-block view of the raw bytes.
struct Blocks {
  Tensor b; // (nb, block_bytes) uint8
  int64_t nb;

  // Bytes [lo, hi) of every block: (nb, hi - lo).
  Tensor cols(int64_t lo, int64_t hi) const { return b.shrink({{0, nb}, {lo, hi}}); }

  // The half float at byte `at` of every block, as float32 (nb, 1).
  Tensor half(int64_t at) const {
    const Tensor lo = cols(at, at + 1).cast(dtypes::uint16);
    const Tensor hi = cols(at + 1, at + 2).cast(dtypes::uint16);
    return lo.bitwise_or(shl(hi, 8)).bitcast(dtypes::float16).cast(dtypes::float32);
  }
};

// `n` shift amounts 0, step, 2*step, ... as int32 laid along axis `axis` of a rank-`rank` shape
// of ones (so it broadcasts against the column it shifts).
Tensor shifts(int64_t n, int64_t step, size_t rank, size_t axis) {
  Shape s(rank, 1);
  s[axis] = n;
  return Tensor::arange(n).mul(step).cast(dtypes::int32).reshape(s);
}

// Bit fields: `col` (nb, w) seen as (nb, groups..., w) with one new axis of `n` repeats at
// `axis`, each repeat shifted by its multiple of `step` and masked; flattened to (nb, n * w),
// int32. E.g. Q4_0's 16 bytes -> 32 nibbles: spread(qs, {1, 16}, 1, 2, 4, 0xF). The bytes are
// widened before they are shifted: CPUs shift 32-bit lanes (one instruction for 16 of them
// with AVX-512) but have no byte shifts, which a compiler emulates by widening, shifting and
// narrowing again before the widening to float (a Q4_0 block's nibbles: 9 instructions
// instead of 5 here).
Tensor spread(const Tensor& col, Shape view, size_t axis, int64_t n, int64_t step, int64_t mask) {
  Shape expanded = view;
  expanded[axis] = n;
  const Tensor v = col.cast(dtypes::int32).reshape(view).expand(expanded);
  const Tensor s = shifts(n, step, view.size(), axis);
  return band(v.rshift(s), mask).reshape({view[0], -1});
}

// Each of `per` consecutive elements takes one value of `v` (nb, k): (nb, k * per).
Tensor repeat_each(const Tensor& v, int64_t per) {
  const int64_t nb = v.size(0), k = v.size(1);
  return v.reshape({nb, k, 1}).expand({nb, k, per}).reshape({nb, k * per});
}

Tensor f32(const Tensor& t) { return t.cast(dtypes::float32); }

// Q4_K/Q5_K's eight 6-bit scales and mins from their 12 packed bytes (get_scale_min_k4).
std::pair<Tensor, Tensor> scales_mins_k4(const Blocks& B, int64_t at) {
  const Tensor s0 = B.cols(at, at + 4), s4 = B.cols(at + 4, at + 8), s8 = B.cols(at + 8, at + 12);
  const Tensor sc_lo = band(s0, 63), m_lo = band(s4, 63);
  const Tensor sc_hi = band(s8, 0xF).bitwise_or(shl(shr(s0, 6), 4));
  const Tensor m_hi = shr(s8, 4).bitwise_or(shl(shr(s4, 6), 4));
  return {Tensor::cat({sc_lo, sc_hi}, 1), Tensor::cat({m_lo, m_hi}, 1)};
}

Tensor dequant_blocks(const Blocks& B, GgmlType type) {
  const int64_t nb = B.nb;
  switch (type) {
  case GgmlType::Q4_0: {
    const Tensor q = spread(B.cols(2, 18), {nb, 1, 16}, 1, 2, 4, 0xF);
    return (f32(q) - 8) * B.half(0);
  }
  case GgmlType::Q4_1: {
    const Tensor q = spread(B.cols(4, 20), {nb, 1, 16}, 1, 2, 4, 0xF);
    return f32(q) * B.half(0) + B.half(2);
  }
  case GgmlType::Q5_0: {
    const Tensor lo = spread(B.cols(6, 22), {nb, 1, 16}, 1, 2, 4, 0xF);
    const Tensor hi = spread(B.cols(2, 6), {nb, 4, 1}, 2, 8, 1, 1);
    return (f32(lo.bitwise_or(shl(hi, 4))) - 16) * B.half(0);
  }
  case GgmlType::Q5_1: {
    const Tensor lo = spread(B.cols(8, 24), {nb, 1, 16}, 1, 2, 4, 0xF);
    const Tensor hi = spread(B.cols(4, 8), {nb, 4, 1}, 2, 8, 1, 1);
    return f32(lo.bitwise_or(shl(hi, 4))) * B.half(0) + B.half(2);
  }
  case GgmlType::Q8_0:
    return f32(B.cols(2, 34).bitcast(dtypes::int8)) * B.half(0);
  case GgmlType::Q2_K: {
    const Tensor sc = repeat_each(B.cols(0, 16), 16);
    const Tensor q = spread(B.cols(16, 80), {nb, 2, 1, 32}, 2, 4, 2, 3);
    const Tensor dl = B.half(80) * f32(band(sc, 0xF));
    const Tensor ml = B.half(82) * f32(shr(sc, 4));
    return dl * f32(q) - ml;
  }
  case GgmlType::Q3_K: {
    const Tensor lo = spread(B.cols(96, 104), {nb, 1, 8}, 1, 2, 4, 0xF);
    const Tensor hi = spread(B.cols(104, 108), {nb, 1, 4}, 1, 4, 2, 3);
    const Tensor sc = repeat_each(lo.bitwise_or(shl(hi, 4)), 16);
    const Tensor q = spread(B.cols(32, 96), {nb, 2, 1, 32}, 2, 4, 2, 3).cast(dtypes::int32);
    const Tensor h = spread(B.cols(0, 32), {nb, 1, 32}, 1, 8, 1, 1).cast(dtypes::int32);
    const Tensor dl = B.half(108) * (f32(sc) - 32);
    return dl * f32(q - (1 - h) * 4);
  }
  case GgmlType::Q4_K:
  case GgmlType::Q5_K: {
    const auto [sc, m] = scales_mins_k4(B, 4);
    const Tensor d1 = repeat_each(B.half(0) * f32(sc), 32);
    const Tensor m1 = repeat_each(B.half(2) * f32(m), 32);
    const int64_t qs = type == GgmlType::Q4_K ? 16 : 48;
    Tensor q = spread(B.cols(qs, qs + 128), {nb, 4, 1, 32}, 2, 2, 4, 0xF);
    if (type == GgmlType::Q5_K)
      q = q.cast(dtypes::int32) +
          spread(B.cols(16, 48), {nb, 1, 32}, 1, 8, 1, 1).cast(dtypes::int32) * 16;
    return d1 * f32(q) - m1;
  }
  case GgmlType::Q6_K: {
    const Tensor lo = spread(B.cols(0, 128), {nb, 2, 1, 2, 32}, 2, 2, 4, 0xF);
    const Tensor hi = spread(B.cols(128, 192), {nb, 2, 1, 32}, 2, 4, 2, 3);
    const Tensor q = lo.bitwise_or(shl(hi, 4)).cast(dtypes::int32) - 32;
    const Tensor sc = repeat_each(B.cols(192, 208).bitcast(dtypes::int8), 16);
    return B.half(208) * f32(sc) * f32(q);
  }
  default:
    break;
  }
  throw Error("cannot dequantize " + std::string(ggml_type_name(type)) +
              " (can: " + ggml_loadable_type_names() + ")");
}

// The float types from their raw bytes (little-endian words bitcast).
Tensor float_from_bytes(const Tensor& bytes, GgmlType type, int64_t n) {
  const Tensor b = bytes.reshape({n, type == GgmlType::F32 ? 4 : 2});
  auto byte = [&](int64_t k, DType d) { return b.shrink({{0, n}, {k, k + 1}}).cast(d); };
  if (type == GgmlType::F32) {
    Tensor w = byte(0, dtypes::uint32);
    for (int64_t k = 1; k < 4; ++k) w = w.bitwise_or(shl(byte(k, dtypes::uint32), 8 * k));
    return w.bitcast(dtypes::float32);
  }
  const Tensor w = byte(0, dtypes::uint16).bitwise_or(shl(byte(1, dtypes::uint16), 8));
  return w.bitcast(type == GgmlType::F16 ? dtypes::float16 : dtypes::bfloat16)
      .cast(dtypes::float32);
}

} // namespace

Tensor ggml_dequantize(const Tensor& blocks, GgmlType type, const Shape& shape) {
  const GgmlTypeInfo& t = ggml_type_info(type);
  if (blocks.dtype() != dtypes::uint8)
    throw Error("ggml_dequantize: the blocks must be uint8, not " + blocks.dtype().name());
  int64_t numel = 1;
  for (const sint& d : shape) numel *= static_cast<int64_t>(d);
  if (shape.empty() || static_cast<int64_t>(shape.back()) % t.block_elems != 0)
    throw Error("ggml_dequantize: a row of " + std::string(t.name) + " must be a multiple of " +
                std::to_string(t.block_elems) + " elements");
  const int64_t nb = numel / t.block_elems;
  if (blocks.numel() != nb * t.block_bytes)
    throw Error("ggml_dequantize: " + std::to_string(blocks.numel()) + " bytes are not the " +
                std::to_string(nb) + " blocks of " + t.name + " that the shape needs");
  if (t.block_elems == 1) return float_from_bytes(blocks, type, numel).reshape(shape);
  const Blocks B{blocks.reshape({nb, t.block_bytes}), nb};
  return dequant_blocks(B, type).reshape(shape);
}

} // namespace tg
