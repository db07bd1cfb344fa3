#pragma once
// Writing model files: `tinyrun llm quantize` (every 2-D weight of a GGUF to one type, as
// `llama-quantize --pure` does, with llama.cpp's fallback for rows that are not whole blocks)
// and `tinyrun llm random` (a llama of any size with random weights and a placeholder
// SentencePiece vocabulary, which llama.cpp loads too: for benchmarks).
#include <cstdint>
#include <filesystem>
#include <string>

#include "tg/ggml_types.hpp"
#include "tg/gguf_header.hpp"

namespace tg::llm {

struct QuantizeReport {
  int64_t quantized = 0, kept = 0, fell_back = 0;
  int64_t bytes_in = 0, bytes_out = 0;
};

// The type llama.cpp falls back to for a row of `n` elements that `type` cannot hold.
GgmlType quantize_fallback(GgmlType type, int64_t n);

QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out,
                              GgmlType type, bool progress);

struct RandomModelSpec {
  std::string arch = "llama";
  int64_t dim = 768, layers = 12, heads = 12, kv_heads = 0 /* = heads */, ffn = 2048;
  int64_t vocab = 32000, context = 2048;
  double rope_theta = 10000, norm_eps = 1e-5;
  GgmlType type = GgmlType::F32; // of the 2-D weights
  uint64_t seed = 0;
  bool tied = false;
  // llama-3.1 rope scaling, written as GGUF's rope_freqs.weight (per-frequency divisors).
  bool llama3_rope_scaling = false;
  double rope_factor = 8, rope_low_freq = 1, rope_high_freq = 4;
  int64_t rope_original_context = 8192;
  // Norm weights drawn around 1 (instead of ones) and biases, so tests see every tensor.
  bool random_norms = false;
  // Tokenizer metadata (tokenizer.ggml.*) to write instead of the placeholder vocabulary; the
  // vocabulary size is then its token count.
  const GgufMetadata* tokenizer = nullptr;
};

void write_random_model(const RandomModelSpec& spec, const std::filesystem::path& out,
                        bool progress);

// llama.cpp's general.file_type for a model whose weights are `type`.
uint32_t llama_file_type(GgmlType type);

} // namespace tg::llm
