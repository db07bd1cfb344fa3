#include "bert_config.hpp"

#include "tg/error.hpp"
#include "tg/json_fields.hpp"

namespace tinyrun {

namespace jf = tg::data::json_fields;
namespace json = boost::json;

void BertConfig::validate(const std::string& origin) const {
  if (hidden_size % num_attention_heads != 0)
    tg::throw_parse_error(origin, "hidden_size", std::to_string(hidden_size),
                          "not divisible by num_attention_heads = " +
                              std::to_string(num_attention_heads));
}

BertConfig parse_bert_config(std::string_view text, const std::string& origin) {
  const json::value root = jf::parse_document(text, origin, kBertConfigMaxBytes);
  const json::object& o = jf::as_object(root, origin, "the document");
  BertConfig c;
  if (const json::value* mt = o.if_contains("model_type")) {
    const std::string t = jf::as_string(*mt, origin, "model_type");
    if (t != "bert")
      tg::throw_parse_error(origin, "model_type", t,
                            "not a BERT model (tinyrun bert runs model_type \"bert\": BERT, "
                            "MiniLM, all-MiniLM-L6-v2, ...)");
  } else {
    tg::throw_parse_error(origin, "model_type", "", "missing (a BERT config says \"bert\")");
  }
  auto size = [&](const char* key, int64_t& slot, uint64_t max) {
    const json::value* v = o.if_contains(key);
    if (!v) tg::throw_parse_error(origin, key, "", "missing");
    const uint64_t n = jf::as_count(*v, max, origin, key);
    if (n == 0) tg::throw_parse_error(origin, key, "0", "must be at least 1");
    slot = static_cast<int64_t>(n);
  };
  size("vocab_size", c.vocab_size, kBertMaxVocab);
  size("hidden_size", c.hidden_size, kBertMaxDim);
  size("num_hidden_layers", c.num_hidden_layers, kBertMaxLayers);
  size("num_attention_heads", c.num_attention_heads, kBertMaxDim);
  size("intermediate_size", c.intermediate_size, kBertMaxDim);
  size("max_position_embeddings", c.max_position_embeddings, kBertMaxDim);
  if (o.if_contains("type_vocab_size")) size("type_vocab_size", c.type_vocab_size, kBertMaxDim);
  if (const json::value* e = o.if_contains("layer_norm_eps")) {
    c.layer_norm_eps = jf::as_number(*e, origin, "layer_norm_eps");
    if (!(c.layer_norm_eps > 0 && c.layer_norm_eps < 1))
      tg::throw_parse_error(origin, "layer_norm_eps", json::serialize(*e),
                            "must be a positive number below 1");
  }
  if (const json::value* a = o.if_contains("hidden_act")) {
    c.hidden_act = jf::as_string(*a, origin, "hidden_act");
    if (c.hidden_act != "gelu" && c.hidden_act != "gelu_new" && c.hidden_act != "gelu_pytorch_tanh")
      tg::throw_parse_error(origin, "hidden_act", c.hidden_act,
                            "not supported (gelu, gelu_new, gelu_pytorch_tanh)");
  }
  if (const json::value* p = o.if_contains("position_embedding_type")) {
    const std::string t = jf::as_string(*p, origin, "position_embedding_type");
    if (t != "absolute")
      tg::throw_parse_error(origin, "position_embedding_type", t,
                            "not supported (absolute position embeddings only)");
  }
  c.validate(origin);
  return c;
}

} // namespace tinyrun
