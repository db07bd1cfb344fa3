#pragma once
// A model's weights as loaded from disk, under GGUF's tensor names (token_embd.weight,
// blk.N.attn_q.weight, ...) whichever layout they came from: a .gguf file, or a Hugging Face
// folder (config.json + *.safetensors or pytorch_model*.bin [+ tokenizer.json]) whose names are
// mapped to GGUF's. Quantized weights stay as their blocks; `dense()` is the lazy float32 view that
// fuses into whatever reads it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include "tg/ggml_int8.hpp"
#include "tg/gguf.hpp"
#include "tg/tensor.hpp"

namespace tg::llm {

struct Weight {
  GgmlType type = GgmlType::F32;
  Shape shape; // row-major; the last axis is the row
  Tensor data; // F32/F16/BF16: that dtype and shape; quantized: uint8 blocks
  // A 2-D Q4_0 or Q8_0 weight on a device whose renderer has DOT4: its blocks repacked for int8
  // dot products (tg/ggml_int8.hpp), which linear() uses for one row of x (decode).
  std::optional<DotWords> dot_words;
  Tensor dense() const; // float32 of `shape`
  // x @ this^T for a 2-D weight (out, in) and x (..., in). A quantized weight is reduced over
  // (blocks, elements of a block) rather than one flat axis, so the kernel loops over blocks
  // and a block's scale is loaded once per block, not per element. For a prefill chunk (many
  // rows of x) a weight that is not float32 is first converted into a float32 temporary.
  // With dot_words, one row of x is quantized to int8 and multiplied with DOT4 instead.
  Tensor linear(const Tensor& x) const;
  int64_t nbytes() const;
};

// Weights that read the same input, their int8 words side by side: a layer's attn_q, attn_k and
// attn_v, and its ffn_gate and ffn_up. At decode one matvec then serves the group, where a
// small matvec costs about as much to start as to read (768 x 768 Q4_0: 17 GB/s, against 23 for
// 2048 x 768 in the same run). The members keep their blocks for prefill, not their own words.
struct WeightGroup {
  std::vector<std::string> names; // in the order of their rows
  std::vector<int64_t> rows;
  DotWords words;
};

struct Model {
  std::filesystem::path path;
  std::string format; // "gguf" or "hf"
  ModelConfig config;
  GgufMetadata metadata; // GGUF's (tokenizer, chat template); empty for a Hugging Face folder
  std::optional<std::string> tokenizer_json; // a Hugging Face folder's tokenizer.json
  std::map<std::string, Weight> weights;
  // Keyed by the layer prefix and the group ("blk.3.attn_qkv", "blk.3.ffn_gate_up").
  std::map<std::string, WeightGroup> groups;

  const Weight* find(const std::string& name) const;
  const Weight& at(const std::string& name) const; // tg::Error naming the model and tensor
  int64_t weight_bytes() const;                    // what one forward pass reads
  // The group `key` when x has one row and the group has words; nullptr otherwise.
  const WeightGroup* group_for(const std::string& key, const Tensor& x) const;
};

// Loads a .gguf file or a Hugging Face folder onto `device`. `progress` (when set) receives one
// line per stage ("loading ...: 57 tensors, 1.0 MB").
Model load_model(const std::filesystem::path& path, const std::string& device = "",
                 bool progress = false);

// The GGUF name of a Hugging Face llama/qwen tensor ("model.layers.3.mlp.up_proj.weight" ->
// "blk.3.ffn_up.weight"), or nullopt for one the models do not use (rotary inv_freq).
std::optional<std::string> gguf_name_of_hf(const std::string& hf_name);

} // namespace tg::llm
