// Model hyper-parameters from GGUF metadata or config.json; see config.hpp.
#include "config.hpp"

#include <boost/json.hpp>

#include "tg/error.hpp"
#include "tg/gguf.hpp"

namespace tg::llm {

namespace json = boost::json;

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> archs{"llama", "mistral", "qwen2", "qwen3"};
  return archs;
}

namespace {

std::string supported_list() {
  std::string s;
  for (const std::string& a : supported_architectures()) s += (s.empty() ? "" : ", ") + a;
  return s;
}

void check_arch(const std::string& arch, const std::string& origin) {
  for (const std::string& a : supported_architectures())
    if (a == arch) return;
  throw Error(origin + ": the architecture '" + arch +
              "' is not supported (supported: " + supported_list() + ")");
}

// The per-architecture defaults both loaders share.
void arch_defaults(ModelConfig& c) {
  c.rope = (c.arch == "qwen2" || c.arch == "qwen3") ? RopeLayout::NeoX : RopeLayout::Normal;
  c.qkv_bias = c.arch == "qwen2";
  c.qk_norm = c.arch == "qwen3";
}

} // namespace

void ModelConfig::validate() const {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw Error("model config: " + what);
  };
  need(dim > 0, "embedding length must be positive");
  need(n_layers > 0, "the block count must be positive");
  need(n_heads > 0 && n_kv_heads > 0, "head counts must be positive");
  need(n_heads % n_kv_heads == 0, "head_count (" + std::to_string(n_heads) +
                                      ") must be a multiple of head_count_kv (" +
                                      std::to_string(n_kv_heads) + ")");
  need(head_dim > 0 && head_dim % 2 == 0, "the head dimension must be positive and even");
  need(ffn_dim > 0, "the feed-forward length must be positive");
  need(vocab > 0, "the vocabulary is empty");
  need(context > 0, "the context length must be positive");
}

ModelConfig config_from_gguf(const GgufMetadata& m) {
  ModelConfig c;
  c.arch = m.get_string("general.architecture", "");
  if (c.arch.empty()) throw Error("GGUF: general.architecture is missing");
  check_arch(c.arch, "GGUF");
  const std::string p = c.arch + ".";
  auto req = [&](const std::string& key) {
    if (!m.contains(p + key)) throw Error("GGUF: " + p + key + " is missing");
    return m.get_int(p + key, 0);
  };
  c.dim = req("embedding_length");
  c.n_layers = req("block_count");
  c.n_heads = req("attention.head_count");
  c.n_kv_heads = m.get_int(p + "attention.head_count_kv", c.n_heads);
  c.head_dim = m.get_int(p + "attention.key_length", c.n_heads ? c.dim / c.n_heads : 0);
  c.ffn_dim = req("feed_forward_length");
  c.context = m.get_int(p + "context_length", 2048);
  c.norm_eps = m.get_float(p + "attention.layer_norm_rms_epsilon", 1e-5);
  c.rope_theta = m.get_float(p + "rope.freq_base", 10000.0);
  if (const GgufValue* t = m.find("tokenizer.ggml.tokens"))
    c.vocab = static_cast<int64_t>(t->array_size());
  c.vocab = m.get_int(p + "vocab_size", c.vocab);
  arch_defaults(c);
  c.validate();
  return c;
}

ModelConfig config_from_hf_json(const std::string& text, const std::string& origin) {
  boost::system::error_code ec;
  const json::value root = json::parse(text, ec);
  if (ec || !root.is_object()) throw Error(origin + ": not a JSON object (" + ec.message() + ")");
  const json::object& o = root.as_object();
  auto num = [&](const char* key, double fallback, bool required) -> double {
    const json::value* v = o.if_contains(key);
    if (!v || v->is_null()) {
      if (required) throw Error(origin + ": \"" + key + "\" is missing");
      return fallback;
    }
    if (v->is_int64()) return static_cast<double>(v->as_int64());
    if (v->is_uint64()) return static_cast<double>(v->as_uint64());
    if (v->is_double()) return v->as_double();
    throw Error(origin + ": \"" + key + "\" must be a number");
  };
  auto integer = [&](const char* key, int64_t fallback, bool required) {
    const double d = num(key, static_cast<double>(fallback), required);
    if (d < 0 || d > 1e12 || d != static_cast<double>(static_cast<int64_t>(d)))
      throw Error(origin + ": \"" + key + "\" must be a non-negative integer");
    return static_cast<int64_t>(d);
  };
  ModelConfig c;
  const json::value* mt = o.if_contains("model_type");
  if (!mt || !mt->is_string()) throw Error(origin + ": \"model_type\" is missing");
  c.arch = std::string(mt->as_string());
  check_arch(c.arch, origin);
  c.dim = integer("hidden_size", 0, true);
  c.n_layers = integer("num_hidden_layers", 0, true);
  c.n_heads = integer("num_attention_heads", 0, true);
  c.n_kv_heads = integer("num_key_value_heads", c.n_heads, false);
  c.head_dim = integer("head_dim", c.n_heads ? c.dim / c.n_heads : 0, false);
  c.ffn_dim = integer("intermediate_size", 0, true);
  c.vocab = integer("vocab_size", 0, true);
  c.context = integer("max_position_embeddings", 2048, false);
  c.norm_eps = num("rms_norm_eps", 1e-6, false);
  c.rope_theta = num("rope_theta", 10000.0, false);
  if (const json::value* t = o.if_contains("tie_word_embeddings"); t && t->is_bool())
    c.tied_embeddings = t->as_bool();
  arch_defaults(c);
  // Hugging Face checkpoints keep Q and K rows in rotate_half order for every architecture.
  c.rope = RopeLayout::NeoX;
  if (const json::value* b = o.if_contains("attention_bias"); b && b->is_bool())
    c.qkv_bias = c.qkv_bias || b->as_bool();
  if (const json::value* rs = o.if_contains("rope_scaling"); rs && rs->is_object()) {
    const json::object& r = rs->as_object();
    const json::value* type = r.if_contains("rope_type");
    if (!type) type = r.if_contains("type");
    if (type && type->is_string() && type->as_string() == "llama3") {
      auto get = [&](const char* k, double fallback) {
        const json::value* v = r.if_contains(k);
        if (!v) return fallback;
        if (v->is_double()) return v->as_double();
        if (v->is_int64()) return static_cast<double>(v->as_int64());
        throw Error(origin + ": rope_scaling." + k + " must be a number");
      };
      c.rope_scaling.enabled = true;
      c.rope_scaling.factor = get("factor", 8.0);
      c.rope_scaling.low_freq_factor = get("low_freq_factor", 1.0);
      c.rope_scaling.high_freq_factor = get("high_freq_factor", 4.0);
      c.rope_scaling.original_context =
          static_cast<int64_t>(get("original_max_position_embeddings", 8192));
    } else if (type && type->is_string() && type->as_string() != "default") {
      throw Error(origin + ": rope_scaling type '" + std::string(type->as_string()) +
                  "' is not supported (supported: llama3)");
    }
  }
  c.validate();
  return c;
}

} // namespace tg::llm
