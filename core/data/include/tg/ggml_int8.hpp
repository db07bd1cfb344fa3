#pragma once
// Quantized matmuls as int8 dot products, the way llama.cpp computes them on a CPU: the
// activations are quantized per block of 32 to int8 (GGML's Q8_0: scale amax/127, rounded to
// nearest), each weight block's integers are multiplied with them and summed in int32 four at
// a time (Ops::DOT4: one vpdpbusd lane), and only those sums are converted to float32 and
// scaled. Against dequantizing every weight to float32 inside the matmul, that is a quarter of
// the instructions per weight on a CPU with AVX512-VNNI; where the renderer has no DOT4
// (RendererCaps::has_dot4) codegen decomposes it and the float32 path is faster.
#include <cstdint>

#include "tg/tensor.hpp"

namespace tg {

// Q4_0 weights laid out for DOT4: the same 18 bytes a block, split into two arrays. `qs`:
// (rows, blocks, 4) int32, a block's 16 bytes of nibbles as four little-endian words (byte j
// holds element j in its low nibble and element j + 16 in its high one); `d`: (rows, blocks)
// float16, the block's scale.
struct Q4_0Words {
  Tensor qs, d;
  int64_t rows = 0, cols = 0;
};

// The lazy repacking of the Q4_0 blocks of a (rows, cols) weight (`blocks`: uint8, rows * cols
// / 32 * 18 bytes); realize it once (it is a copy of the weight) and keep it. tg::Error when the
// sizes do not match.
Q4_0Words ggml_q4_0_words(const Tensor& blocks, int64_t rows, int64_t cols);

// x @ w^T for float32 x (..., cols): (..., rows). Within about 1% of the float32 product of the
// dequantized weight (the activations' rounding to int8, as llama.cpp's).
Tensor ggml_linear_q4_0_int8(const Tensor& x, const Q4_0Words& w);

} // namespace tg
