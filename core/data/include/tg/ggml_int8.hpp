#pragma once
// Quantized matmuls as int8 dot products, the way llama.cpp computes them on a CPU: the
// activations are quantized per block of 32 to int8 (GGML's Q8_0: scale amax/127, rounded to
// nearest), each weight block's integers are multiplied with them and summed in int32 four at
// a time (Ops::DOT4: one vpdpbusd lane), and only those sums are converted to float32 and
// scaled. Against dequantizing every weight to float32 inside the matmul, that is a quarter of
// the instructions per weight on a CPU with AVX512-VNNI; where the renderer has no DOT4
// (RendererCaps::has_dot4) codegen decomposes it and the float32 path is faster.
#include <cstdint>

#include "tg/ggml_types.hpp"
#include "tg/tensor.hpp"

namespace tg {

// Q4_0 or Q8_0 weights laid out for DOT4: the same bytes a block, split into two arrays. `qs`:
// (rows, blocks, words) int32, a block's quantized bytes as little-endian words (Q4_0: its 16
// bytes of nibbles as 4 words, byte j holding element j in its low nibble and element j + 16 in
// its high one; Q8_0: its 32 int8s as 8 words); `d`: (rows, blocks) float16, the block's scale.
struct DotWords {
  GgmlType type = GgmlType::Q4_0;
  Tensor qs, d;
  int64_t rows = 0, cols = 0;
};

// The types with a DOT4 layout: Q4_0 and Q8_0.
bool ggml_has_dot_words(GgmlType type);

// The lazy repacking of the blocks of a (rows, cols) weight of `type` (`blocks`: uint8, the raw
// blocks); realize it once (it is a copy of the weight) and keep it. tg::Error for another type
// or sizes that do not match.
DotWords ggml_dot_words(const Tensor& blocks, GgmlType type, int64_t rows, int64_t cols);

// x @ w^T for float32 x (..., cols): (..., rows). Within about 1% of the float32 product of the
// dequantized weight (the activations' rounding to int8, as llama.cpp's).
Tensor ggml_linear_int8(const Tensor& x, const DotWords& w);

} // namespace tg
