#pragma once
// GGML's quantized block formats: reference quantizers and dequantizers on the host (the same
// arithmetic, in the same order, as llama.cpp's ggml-quants.c `quantize_row_*_ref` and
// `dequantize_row_*`, so blocks and floats are bit-identical), and the dequantization as tensor
// ops, which is how models read quantized weights: the graph form fuses into the matmul that
// reads the weight, so no dequantized copy of a model is ever stored.
#include <cstdint>
#include <span>
#include <vector>

#include "tg/ggml_types.hpp"
#include "tg/tensor.hpp"

namespace tg {

// The types `ggml_quantize` writes (every loadable quantized type).
bool ggml_can_quantize(GgmlType type);

// Quantizes `x` (rows of `n_per_row` elements, a multiple of the block size) into blocks of
// `type`. F32, F16 and BF16 convert (round to nearest even). tg::Error for a row length that is
// not whole blocks or a type it cannot write.
std::vector<uint8_t> ggml_quantize(GgmlType type, std::span<const float> x, int64_t n_per_row);

// Dequantizes whole blocks of `type` on the host into `n = blocks * block_elems` floats.
std::vector<float> ggml_dequantize_host(GgmlType type, std::span<const uint8_t> blocks);

// The graph form: `blocks` is a uint8 tensor of the raw blocks (numel = bytes), `shape` the
// logical row-major shape (its last axis the row). Returns a lazy float32 tensor of `shape`
// whose elements equal ggml_dequantize_host's bit for bit.
Tensor ggml_dequantize(const Tensor& blocks, GgmlType type, const Shape& shape);

} // namespace tg
