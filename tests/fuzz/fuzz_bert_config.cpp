// libFuzzer target: a BERT config.json parse (apps/tinyrun/bert_config.hpp parse_bert_config)
// on arbitrary text. A tg::Error is the expected answer; anything else is a finding, as is an
// accepted config whose sizes are outside the parser's limits or do not fit together.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "bert_config.hpp"
#include "tg/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tinyrun::BertConfig c;
  try {
    c = tinyrun::parse_bert_config(std::string_view(reinterpret_cast<const char*>(data), size),
                                   "fuzz.config.json");
  } catch (const tg::Error&) {
    return 0;
  }
  auto in = [](int64_t v, uint64_t hi) { return v > 0 && static_cast<uint64_t>(v) <= hi; };
  if (!in(c.hidden_size, tinyrun::kBertMaxDim) || !in(c.intermediate_size, tinyrun::kBertMaxDim) ||
      !in(c.max_position_embeddings, tinyrun::kBertMaxDim) ||
      !in(c.vocab_size, tinyrun::kBertMaxVocab) ||
      !in(c.num_hidden_layers, tinyrun::kBertMaxLayers) ||
      !in(c.type_vocab_size, tinyrun::kBertMaxDim) || c.num_attention_heads <= 0 ||
      c.hidden_size % c.num_attention_heads != 0 || !(c.layer_norm_eps > 0))
    std::abort();
  return 0;
}
