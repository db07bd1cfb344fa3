#pragma once
// A BERT model's hyperparameters from Hugging Face's config.json (BertConfig), parsed by a pure
// function of the text (the fuzz target calls it). Every size is checked as a positive integer
// within limits no BERT comes near, so nothing is sized by a hostile number; a config of
// another architecture (model_type other than "bert") is refused naming it.
#include <cstdint>
#include <string>
#include <string_view>

namespace tinyrun {

struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  std::string hidden_act = "gelu"; // "gelu" (erf) or "gelu_new"/"gelu_pytorch_tanh" (tanh)
  // Raises tg::Error when the sizes do not fit together (hidden_size divisible by the heads).
  void validate(const std::string& origin) const;
};

inline constexpr uint64_t kBertMaxDim = 1u << 20;   // hidden, intermediate, positions
inline constexpr uint64_t kBertMaxVocab = 1u << 24; // tokens
inline constexpr uint64_t kBertMaxLayers = 1024;
inline constexpr uint64_t kBertConfigMaxBytes = 1u << 20;

// Raises tg::Error "ORIGIN: FIELD = VALUE: WHY" for invalid JSON, a model_type other than
// "bert", a missing or out-of-range size, an eps that is not a positive number and an
// activation it does not know.
BertConfig parse_bert_config(std::string_view text, const std::string& origin);

} // namespace tinyrun
