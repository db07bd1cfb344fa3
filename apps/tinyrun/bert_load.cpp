#include "bert_load.hpp"

#include <boost/json.hpp>
#include <map>

#include "text_file.hpp"
#include "tg/error.hpp"
#include "tg/json_fields.hpp"
#include "tg/safetensors.hpp"
#include "tg/torch_checkpoint.hpp"

namespace tinyrun {

namespace fs = std::filesystem;
namespace jf = tg::data::json_fields;
using tg::Error;
using tg::Tensor;

namespace {

// sentence_bert_config.json's max_seq_length, when the folder has one.
int64_t sentence_max_length(const fs::path& dir, int64_t fallback) {
  const fs::path p = dir / "sentence_bert_config.json";
  if (!fs::exists(p)) return fallback;
  const std::string text = read_text_file(p, kBertConfigMaxBytes, "sentence-transformers config");
  const boost::json::value v = jf::parse_document(text, p.string(), kBertConfigMaxBytes);
  const auto& o = jf::as_object(v, p.string(), "the document");
  if (const auto* m = o.if_contains("max_seq_length"))
    return static_cast<int64_t>(jf::as_count(*m, kBertMaxDim, p.string(), "max_seq_length"));
  return fallback;
}

std::string pooling_mode(const fs::path& dir) {
  const fs::path p = dir / "1_Pooling" / "config.json";
  if (!fs::exists(p)) return "mean";
  const std::string text = read_text_file(p, kBertConfigMaxBytes, "pooling config");
  const boost::json::value v = jf::parse_document(text, p.string(), kBertConfigMaxBytes);
  const auto& o = jf::as_object(v, p.string(), "the document");
  auto on = [&](const char* k) {
    const auto* x = o.if_contains(k);
    return x && x->is_bool() && x->as_bool();
  };
  if (on("pooling_mode_cls_token")) return "cls";
  if (on("pooling_mode_max_tokens")) return "max";
  return "mean";
}

} // namespace

LoadedBert load_bert(const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw Error("bert: the model folder " + dir.string() +
                " does not exist (a Hugging Face BERT folder: config.json, model.safetensors or "
                "pytorch_model.bin, vocab.txt; scripts/fetch-minilm.sh fetches all-MiniLM-L6-v2)");
  LoadedBert out;
  out.dir = dir;
  const fs::path cfg = dir / "config.json";
  out.config =
      parse_bert_config(read_text_file(cfg, kBertConfigMaxBytes, "model config"), cfg.string());
  // model.safetensors, else the PyTorch checkpoint older uploads ship (read without Python).
  fs::path weights = dir / "model.safetensors";
  const bool torch_format = !fs::exists(weights) && fs::exists(dir / "pytorch_model.bin");
  if (torch_format) weights = dir / "pytorch_model.bin";
  if (!fs::exists(weights))
    throw Error("bert: no model.safetensors or pytorch_model.bin in " + dir.string());
  WordPieceVocab vocab = read_wordpiece_vocab(dir / "vocab.txt");
  if (vocab.size() != out.config.vocab_size)
    throw Error("bert: " + (dir / "vocab.txt").string() + " holds " + std::to_string(vocab.size()) +
                " tokens but " + cfg.string() +
                " says vocab_size = " + std::to_string(out.config.vocab_size) +
                ": the vocabulary is not this model's (use the vocab.txt saved with it)");
  out.tokenizer = std::make_unique<WordPieceTokenizer>(std::move(vocab), true);
  out.max_length = std::min(out.config.max_position_embeddings,
                            sentence_max_length(dir, out.config.max_position_embeddings));
  out.pooling = pooling_mode(dir);

  const std::vector<std::pair<std::string, Tensor>> tensors =
      torch_format ? tg::torch_load(weights).tensors : tg::safe_load(weights).tensors;
  std::map<std::string, Tensor> state;
  for (const auto& [name, t] : tensors) {
    std::string key = name;
    if (key.rfind("bert.", 0) == 0) key = key.substr(5);
    if (key == "embeddings.position_ids" || key.rfind("cls.", 0) == 0) continue;
    state[key] = t;
  }
  out.model = std::make_unique<BertModel>(out.config, 0.0, state.count("pooler.dense.weight") != 0);
  try {
    out.model->load_state_dict(state, true);
  } catch (const Error& e) {
    throw Error("bert: " + weights.string() + " does not fit " + cfg.string() + ": " + e.what());
  }
  return out;
}

} // namespace tinyrun
