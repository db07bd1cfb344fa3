#pragma once
// The hyper-parameters of a llama-family model, read from GGUF metadata ("{arch}.*" keys) or
// from a Hugging Face config.json. Everything the forward pass needs to know about a model's
// shape and numerics is here, so the transformer never reads a file.
#include <cstdint>
#include <string>
#include <vector>

namespace tg {
class GgufMetadata;
}

namespace tg::llm {

enum class RopeLayout {
  Normal, // rotate adjacent pairs (x[2i], x[2i+1]): GGUF llama/mistral, llama.cpp's "norm"
  NeoX,   // rotate halves (x[i], x[i + d/2]): Hugging Face's rotate_half, qwen2/qwen3 in GGUF
};

// llama-3.1's frequency scaling (rope_scaling.rope_type = "llama3").
struct Llama3RopeScaling {
  bool enabled = false;
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_context = 8192;
};

struct ModelConfig {
  std::string arch;          // llama, mistral, qwen2, qwen3
  int64_t dim = 0;           // embedding_length
  int64_t n_layers = 0;      // block_count
  int64_t n_heads = 0;       // attention.head_count
  int64_t n_kv_heads = 0;    // attention.head_count_kv (GQA when below n_heads)
  int64_t head_dim = 0;      // attention.key_length (dim / n_heads unless given)
  int64_t ffn_dim = 0;       // feed_forward_length
  int64_t vocab = 0;         // tokens in the vocabulary
  int64_t context = 2048;    // context_length: the longest sequence the model was trained for
  double norm_eps = 1e-5;    // attention.layer_norm_rms_epsilon
  double rope_theta = 10000; // rope.freq_base
  RopeLayout rope = RopeLayout::Normal;
  Llama3RopeScaling rope_scaling;
  bool qkv_bias = false;        // qwen2
  bool qk_norm = false;         // qwen3: RMSNorm of q and k per head before RoPE
  bool tied_embeddings = false; // the output projection is token_embd (no output.weight)

  // tg::Error naming the field for a shape that cannot be a model (zero sizes, heads that do
  // not divide, more KV heads than heads).
  void validate() const;
};

// The architectures this project runs.
const std::vector<std::string>& supported_architectures();

// From GGUF metadata. tg::Error naming the architecture and the supported list for an unknown
// one, and naming the key for a missing or malformed one.
ModelConfig config_from_gguf(const GgufMetadata& m);

// From the text of a Hugging Face config.json (`origin` names it in errors).
ModelConfig config_from_hf_json(const std::string& text, const std::string& origin);

} // namespace tg::llm
