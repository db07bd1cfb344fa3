#pragma once
// The llama-family decoder (llama 1-3, mistral, qwen2 with qkv bias, qwen3 with QK-norm) as
// lazy tensor ops over a Model's weights, with a KV cache on the device.
//
// `forward` takes a chunk of T token embeddings at positions [start_pos, start_pos + T), where
// start_pos is a bound symbolic Variable (tinygrad's start_pos): the graph, its schedule and
// its kernels are the same for every position, so a TinyJit over it records once and replays
// every decode step. The cache of each layer is written through a view at start_pos and read
// back over [0, start_pos + T), a symbolic length the attention reduces over.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "config.hpp"
#include "tg/tensor.hpp"
#include "weights.hpp"

namespace tg::llm {

class Transformer {
public:
  // `context`: the cache length (positions 0..context-1), at most the model's.
  Transformer(const Model& model, int64_t context);

  const ModelConfig& config() const { return config_; }
  int64_t context() const { return context_; }
  const std::string& device() const { return device_; }

  // Embeddings of `tokens` looked up on the host: (tokens.size(), dim) float32 values. The
  // table is read row by row from the weight's bytes (dequantized by the reference formulas),
  // so no kernel runs per token and the lookup is the same on every device.
  std::vector<float> embed(std::span<const int32_t> tokens) const;

  // x: (T, dim) float32; start_pos: bound, 0 <= start_pos <= context - T; last: bound, the row
  // (0..T-1) whose logits are returned. Writes the chunk's keys and values into the cache
  // (realized per layer: later layers and steps read them) and returns the (vocab) logits.
  Tensor forward(const Tensor& x, const sint& start_pos, const sint& last);

  // The variables forward's callers bind: start_pos for chunks of T tokens, and the row.
  sint start_pos_var(int64_t T) const;
  sint last_var(int64_t T) const;

  // Forgets nothing on the device: positions past the next start_pos are simply rewritten.
  int64_t kv_cache_bytes() const;

private:
  Tensor rope(const Tensor& x, const sint& start_pos, int64_t T) const;
  Tensor attention(int64_t layer, const Tensor& xn, const sint& start_pos, int64_t T);
  Tensor rms_norm(const Tensor& x, const Tensor& w) const;

  const Model& model_;
  ModelConfig config_;
  int64_t context_;
  std::string device_;
  std::vector<Tensor> cache_k_, cache_v_; // per layer: (context, n_kv, head_dim) float32
  Tensor rope_cos_, rope_sin_;            // (context, head_dim / 2)
  std::vector<uint8_t> embd_host_;        // token_embd's bytes, for the host lookup
  GgmlType embd_type_ = GgmlType::F32;
};

// The inverse frequencies of RoPE for a head of `head_dim` (theta^(-2i/d)), with llama-3's
// scaling applied when enabled and GGUF's per-frequency factors (rope_freqs.weight) when given.
std::vector<double> rope_inv_freqs(const ModelConfig& c, std::span<const float> freq_factors = {});

} // namespace tg::llm
