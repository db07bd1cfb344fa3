#include "bert_gguf.hpp"

#include <map>
#include <string>

#include "tg/error.hpp"
#include "tg/gguf.hpp"

namespace tinyrun {

namespace fs = std::filesystem;
using tg::Error;
using tg::Tensor;

namespace {

// llama.cpp's tensor names of a BERT block, after `blk.N.`, and Hugging Face's.
const std::map<std::string, std::string>& block_names() {
  static const std::map<std::string, std::string> m = {
      {"attn_q", "attention.self.query"},
      {"attn_k", "attention.self.key"},
      {"attn_v", "attention.self.value"},
      {"attn_output", "attention.output.dense"},
      {"attn_output_norm", "attention.output.LayerNorm"},
      {"ffn_up", "intermediate.dense"},
      {"ffn_down", "output.dense"},
      {"layer_output_norm", "output.LayerNorm"},
  };
  return m;
}

// A positive size from the metadata, at most `max`.
int64_t size_key(const tg::GgufMetadata& md, const std::string& key, uint64_t max,
                 const std::string& origin) {
  const tg::GgufValue* v = md.find(key);
  if (!v) throw Error(origin + ": " + key + " is missing (a llama.cpp BERT file has it)");
  const int64_t n = v->as_int(key);
  if (n < 1 || static_cast<uint64_t>(n) > max)
    throw Error(origin + ": " + key + " = " + std::to_string(n) + ": out of range (1.." +
                std::to_string(max) + ")");
  return n;
}

// llama.cpp's WordPiece token spelling back to vocab.txt's: "\u2581word" -> "word",
// "piece" -> "##piece", "[CLS]" and the like unchanged.
std::string hf_token(const std::string& t) {
  static const std::string kWordStart = "\xE2\x96\x81"; // U+2581
  if (t.size() >= 2 && t.front() == '[' && t.back() == ']') return t;
  if (t.rfind(kWordStart, 0) == 0) return t.substr(kWordStart.size());
  return "##" + t;
}

} // namespace

std::string bert_gguf_to_hf_name(const std::string& n) {
  static const std::map<std::string, std::string> top = {
      {"token_embd.weight", "embeddings.word_embeddings.weight"},
      {"position_embd.weight", "embeddings.position_embeddings.weight"},
      {"token_types.weight", "embeddings.token_type_embeddings.weight"},
      {"token_embd_norm.weight", "embeddings.LayerNorm.weight"},
      {"token_embd_norm.bias", "embeddings.LayerNorm.bias"},
  };
  if (auto it = top.find(n); it != top.end()) return it->second;
  if (n.rfind("blk.", 0) != 0) return "";
  const size_t dot = n.find('.', 4);
  if (dot == std::string::npos || dot == 4) return "";
  const std::string layer = n.substr(4, dot - 4);
  if (layer.find_first_not_of("0123456789") != std::string::npos) return "";
  const size_t last = n.rfind('.');
  if (last <= dot) return "";
  const std::string part = n.substr(dot + 1, last - dot - 1), kind = n.substr(last + 1);
  auto it = block_names().find(part);
  if (it == block_names().end() || (kind != "weight" && kind != "bias")) return "";
  return "encoder.layer." + layer + "." + it->second + "." + kind;
}

LoadedBert load_bert_gguf(const fs::path& path) {
  if (!fs::is_regular_file(path))
    throw Error("bert: the model file " + path.string() + " does not exist");
  const tg::GgufFile f = tg::gguf_load(path);
  const std::string origin = path.string();
  const tg::GgufMetadata& md = f.metadata;
  const std::string arch = md.get_string("general.architecture", "");
  if (arch != "bert")
    throw Error(
        "bert: " + origin + " is a GGUF model of architecture '" + arch + "', not 'bert'" +
        (arch == "llama" || arch == "qwen2" || arch == "qwen3" ? " (tinyrun llm runs it)" : ""));
  LoadedBert out;
  out.dir = path;
  BertConfig& c = out.config;
  c.hidden_size = size_key(md, "bert.embedding_length", kBertMaxDim, origin);
  c.num_hidden_layers = size_key(md, "bert.block_count", kBertMaxLayers, origin);
  c.num_attention_heads = size_key(md, "bert.attention.head_count", kBertMaxDim, origin);
  c.intermediate_size = size_key(md, "bert.feed_forward_length", kBertMaxDim, origin);
  c.max_position_embeddings = size_key(md, "bert.context_length", kBertMaxDim, origin);
  c.type_vocab_size = md.contains("bert.token_type_count")
                          ? size_key(md, "bert.token_type_count", kBertMaxDim, origin)
                          : 2;
  c.layer_norm_eps = md.get_float("bert.attention.layer_norm_epsilon", 1e-12);
  if (!(c.layer_norm_eps > 0 && c.layer_norm_eps < 1))
    throw Error(origin + ": bert.attention.layer_norm_epsilon = " +
                std::to_string(c.layer_norm_eps) + ": must be a positive number below 1");
  c.validate(origin);

  const tg::GgufValue* tokens = md.find("tokenizer.ggml.tokens");
  if (!tokens || !tokens->is_array() || tokens->strings.size() != tokens->array_size() ||
      tokens->strings.empty())
    throw Error(origin + ": tokenizer.ggml.tokens is missing or not a list of strings (the "
                         "WordPiece vocabulary)");
  const std::string tok_model = md.get_string("tokenizer.ggml.model", "bert");
  if (tok_model != "bert")
    throw Error(origin + ": tokenizer.ggml.model = " + tok_model +
                ": not a WordPiece (bert) vocabulary");
  std::string vocab_text;
  for (const std::string& t : tokens->strings) vocab_text += hf_token(t) + "\n";
  WordPieceVocab vocab = parse_wordpiece_vocab(vocab_text, origin + " (tokenizer.ggml.tokens)");
  c.vocab_size = vocab.size();
  out.tokenizer = std::make_unique<WordPieceTokenizer>(std::move(vocab), true);
  out.max_length = c.max_position_embeddings;
  const int64_t pooling = md.get_int("bert.pooling_type", 1);
  out.pooling = pooling == 1 ? "mean" : pooling == 2 ? "cls" : "type " + std::to_string(pooling);

  std::map<std::string, Tensor> state;
  for (const tg::GgufTensor& t : f.tensors) {
    const std::string hf = bert_gguf_to_hf_name(t.info.name);
    if (hf.empty()) continue; // heads and pooler weights a BERT GGUF may carry
    state[hf] = t.dequantized();
  }
  out.model = std::make_unique<BertModel>(c, 0.0, false);
  try {
    out.model->load_state_dict(state, true);
  } catch (const Error& e) {
    throw Error("bert: the tensors of " + origin + " do not fit its bert.* metadata: " + e.what());
  }
  return out;
}

} // namespace tinyrun
