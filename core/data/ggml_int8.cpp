// Quantized matmuls as int8 dot products; see tg/ggml_int8.hpp.
#include "tg/ggml_int8.hpp"

#include <string>

#include "tg/error.hpp"

namespace tg {

namespace {

constexpr int64_t kBlock = 32; // elements of a Q4_0 or Q8_0 block

// A block's bytes: a float16 scale, then the 16 bytes of Q4_0's nibbles or Q8_0's 32 int8s.
int64_t block_bytes(GgmlType type) { return type == GgmlType::Q4_0 ? 18 : 34; }

// Axis `axis` of `t` cut to [k, k + 1).
Tensor slice(const Tensor& t, int64_t axis, int64_t k) {
  PadArg r;
  for (size_t i = 0; i < t.shape().size(); ++i) {
    const int64_t n = static_cast<int64_t>(t.shape()[i]);
    r.push_back(static_cast<int64_t>(i) == axis ? std::pair<sint, sint>{k, k + 1}
                                                : std::pair<sint, sint>{0, n});
  }
  return t.shrink(r);
}

// Four bytes (uint32 values 0..255 along the last axis, which has 4) as the little-endian
// int32 word they make; the last axis goes.
Tensor word_of_bytes(const Tensor& bytes) {
  const int64_t last = static_cast<int64_t>(bytes.shape().size()) - 1;
  Tensor w = slice(bytes, last, 0);
  for (int64_t k = 1; k < 4; ++k)
    w = w.bitwise_or(slice(bytes, last, k).lshift(w.scalar_like(8 * k)));
  Shape s = bytes.shape();
  s.pop_back();
  return w.reshape(s).bitcast(dtypes::int32);
}

Shape leading_then(const Tensor& x, std::initializer_list<int64_t> tail) {
  Shape s(x.shape().begin(), x.shape().end() - 1);
  for (int64_t v : tail) s.push_back(v);
  return s;
}

} // namespace

bool ggml_has_dot_words(GgmlType type) { return type == GgmlType::Q4_0 || type == GgmlType::Q8_0; }

DotWords ggml_dot_words(const Tensor& blocks, GgmlType type, int64_t rows, int64_t cols) {
  const std::string name(ggml_type_name(type));
  if (!ggml_has_dot_words(type))
    throw Error("ggml_dot_words: " + name + " has no int8 dot-product layout (Q4_0 and Q8_0 do)");
  if (blocks.dtype() != dtypes::uint8)
    throw Error("ggml_dot_words: the blocks must be uint8, not " + blocks.dtype().name());
  if (rows <= 0 || cols <= 0 || cols % kBlock != 0)
    throw Error("ggml_dot_words: a " + name + " weight of " + std::to_string(rows) + " x " +
                std::to_string(cols) + " is not whole rows of 32-element blocks");
  const int64_t nb = cols / kBlock, n = rows * nb, bytes = block_bytes(type);
  if (blocks.numel() != n * bytes)
    throw Error("ggml_dot_words: " + std::to_string(blocks.numel()) + " bytes are not the " +
                std::to_string(n) + " " + name + " blocks of a " + std::to_string(rows) + " x " +
                std::to_string(cols) + " weight");
  const Tensor b = blocks.reshape({n, bytes}).cast(dtypes::uint32);
  const Tensor d16 = slice(b, 1, 0).bitwise_or(slice(b, 1, 1).lshift(b.scalar_like(8)));
  const int64_t words = (bytes - 2) / 4;
  DotWords w;
  w.type = type;
  w.d = d16.cast(dtypes::uint16).bitcast(dtypes::float16).reshape({rows, nb});
  w.qs = word_of_bytes(b.shrink({{0, n}, {2, bytes}}).reshape({n, words, 4}))
             .reshape({rows, nb, words});
  w.rows = rows;
  w.cols = cols;
  return w;
}

Tensor ggml_linear_int8(const Tensor& x, const DotWords& w) {
  if (x.dtype() != dtypes::float32)
    throw Error("ggml_linear_int8: x must be float32, not " + x.dtype().name());
  if (x.shape().empty() || static_cast<int64_t>(x.shape().back()) != w.cols)
    throw Error("ggml_linear_int8: x's rows must have the weight's " + std::to_string(w.cols) +
                " columns");
  if (!ggml_has_dot_words(w.type))
    throw Error("ggml_linear_int8: no words of " + std::string(ggml_type_name(w.type)));
  const int64_t nb = w.cols / kBlock, rows = w.rows;
  // The activations as Q8_0 (quantize_row_q8_0): per block d = amax / 127 and q = round(x / d),
  // laid out as the weight's words: element 16h + 4j + k of a block is byte k of word (h, j).
  const Tensor xb = x.reshape(leading_then(x, {1, nb, 32}));
  const Tensor d = xb.abs().max({-1}, true).div(xb.scalar_like(127.0)).contiguous();
  const Tensor inv = d.ne(d.scalar_like(0.0)).where(d.reciprocal(), d.scalar_like(0.0));
  // Rounded to nearest even by adding 1.5 * 2^23: the sum's low mantissa bits are then the
  // integer (exact for |v| < 2^22; here |v| <= 127), with no float-to-int conversion.
  const Tensor bits = xb.mul(inv).add(xb.scalar_like(12582912.0)).bitcast(dtypes::int32);
  const Tensor q =
      bits.sub(bits.scalar_like(0x4B400000)).reshape(leading_then(x, {1, nb, 2, 4, 4}));
  const Tensor words = word_of_bytes(q.bitwise_and(q.scalar_like(255)).cast(dtypes::uint32));
  // DOT4 reads the weight's bytes unsigned: Q4_0's nibbles are q + 8 (0..15), and Q8_0's
  // int8s are flipped to q + 128 (an XOR of each byte's top bit). Each word's dot product then
  // carries 8 (128) times the sum of its four activations too, which the accumulator starts
  // without.
  const bool q4 = w.type == GgmlType::Q4_0;
  const int64_t last = static_cast<int64_t>(q.shape().size()) - 1;
  Tensor qsum = slice(q, last, 0);
  for (int64_t k = 1; k < 4; ++k) qsum = qsum.add(slice(q, last, k));
  // The offsets, the words and the block's scale are read by every row of the weight: stored
  // once (else the matmul would recompute them per row), by one kernel. The scale is repeated
  // on each of its words' lanes (as float32 bits), so the matmul reads it as one vector like
  // the words instead of loading one scale per block and spreading it over the block's lanes
  // (two of about fourteen instructions per two blocks).
  const Tensor dbits =
      d.reshape(leading_then(x, {1, nb, 1, 1})).expand(words.shape()).bitcast(dtypes::int32);
  const Tensor both =
      Tensor::stack({qsum.mul(q.scalar_like(q4 ? -8 : -128)).reshape(words.shape()), words, dbits},
                    0)
          .contiguous();
  const Tensor off = both[0], xq = both[1], xd = both[2].bitcast(dtypes::float32);
  Tensor wq;
  if (q4) {
    // Word (h, j) of a block: the low (h = 0) or high (h = 1) nibbles of its bytes 4j..4j+3.
    const Tensor shift =
        Tensor::arange(2, dtypes::int32, w.qs.device()).mul(4).reshape({1, 1, 2, 1});
    wq = w.qs.reshape({rows, nb, 1, 4})
             .expand({rows, nb, 2, 4})
             .rshift(shift)
             .bitwise_and(w.qs.scalar_like(0x0F0F0F0F));
  } else {
    // Word (h, j): bytes 16h + 4j .. 16h + 4j + 3, elements in the activations' order.
    wq =
        w.qs.reshape({rows, nb, 2, 4})
            .bitwise_xor(w.qs.scalar_like(static_cast<int64_t>(static_cast<int32_t>(0x80808080u))));
  }
  const Tensor dot = off.dot4(wq, xq); // (..., rows, nb, 2, 4)
  // The two scales multiply each lane apart: their product would be a second input under the
  // broadcast, which the scheduler stores in a kernel of its own.
  const Tensor wd = w.d.cast(dtypes::float32).reshape({rows, nb, 1, 1});
  return dot.cast(dtypes::float32).mul(wd).mul(xd).sum({-3, -2, -1});
}

} // namespace tg
