// Building a tokenizer from GGUF metadata or tokenizer.json; see tokenizer.hpp.
#include <boost/json.hpp>

#include "bpe_tokenizer.hpp"
#include "spm_tokenizer.hpp"
#include "tg/error.hpp"
#include "tg/gguf_header.hpp"
#include "tokenizer.hpp"

namespace tg::llm {

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const GgufMetadata& m) {
  const std::string model = m.get_string("tokenizer.ggml.model", "");
  const GgufValue* tokens = m.find("tokenizer.ggml.tokens");
  if (!tokens || tokens->elem != GgufValueType::STRING)
    throw Error("GGUF: tokenizer.ggml.tokens (an array of strings) is missing");
  std::vector<TokenKind> kinds;
  if (const GgufValue* tt = m.find("tokenizer.ggml.token_type")) {
    for (int64_t k : tt->ints)
      kinds.push_back(k >= 1 && k <= 6 ? static_cast<TokenKind>(k) : TokenKind::Normal);
    for (uint64_t k : tt->uints)
      kinds.push_back(k >= 1 && k <= 6 ? static_cast<TokenKind>(k) : TokenKind::Normal);
  }
  std::unique_ptr<Tokenizer> t;
  if (model == "llama") {
    std::vector<float> scores;
    if (const GgufValue* s = m.find("tokenizer.ggml.scores"))
      for (double f : s->floats) scores.push_back(static_cast<float>(f));
    t = std::make_unique<SpmTokenizer>(tokens->strings, std::move(scores), std::move(kinds));
    t->add_space_prefix = m.get_bool("tokenizer.ggml.add_space_prefix", true);
    t->add_bos = true;
  } else if (model == "gpt2") {
    std::vector<std::string> merges;
    if (const GgufValue* mv = m.find("tokenizer.ggml.merges")) merges = mv->strings;
    t = std::make_unique<BpeTokenizer>(tokens->strings, merges, std::move(kinds),
                                       m.get_string("tokenizer.ggml.pre", "default"));
    t->add_bos = false;
  } else {
    throw Error("GGUF: tokenizer.ggml.model '" + model +
                "' is not supported (supported: llama (SentencePiece), gpt2 (byte-level BPE))");
  }
  t->bos = static_cast<int32_t>(m.get_int("tokenizer.ggml.bos_token_id", t->bos));
  t->eos = static_cast<int32_t>(m.get_int("tokenizer.ggml.eos_token_id", t->eos));
  t->add_bos = m.get_bool("tokenizer.ggml.add_bos_token", t->add_bos);
  t->add_eos = m.get_bool("tokenizer.ggml.add_eos_token", t->add_eos);
  if (const GgufValue* eot = m.find("tokenizer.ggml.eot_token_id"))
    t->eog.push_back(static_cast<int32_t>(eot->as_int("tokenizer.ggml.eot_token_id")));
  for (int32_t* id : {&t->bos, &t->eos})
    if (*id >= t->vocab_size()) *id = -1;
  t->finish_setup();
  return t;
}

namespace {

namespace json = boost::json;

// Which of the supported expressions a tokenizer.json's pre-tokenizer uses, from its regex.
std::string pre_name_of(const json::value& pre) {
  const std::string text = json::serialize(pre);
  if (text.find("\\p{N}{1,3}") != std::string::npos) return "llama-bpe";
  if (text.find("(?i:'s|'t|'re|'ve|'m|'ll|'d)") != std::string::npos) return "qwen2";
  return "gpt-2";
}

} // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_hf_json(const std::string& text,
                                                   const std::string& origin) {
  boost::system::error_code ec;
  const json::value root = json::parse(text, ec);
  if (ec || !root.is_object()) throw Error(origin + ": not a JSON object");
  const json::object& o = root.as_object();
  const json::value* model = o.if_contains("model");
  if (!model || !model->is_object()) throw Error(origin + ": \"model\" is missing");
  const json::object& mo = model->as_object();
  const json::value* type = mo.if_contains("type");
  if (!type || !type->is_string() || type->as_string() != "BPE")
    throw Error(origin + ": only BPE tokenizers are supported (model.type is " +
                (type ? json::serialize(*type) : std::string("missing")) + ")");
  const json::value* vocab = mo.if_contains("vocab");
  if (!vocab || !vocab->is_object()) throw Error(origin + ": model.vocab is missing");
  std::vector<std::string> tokens;
  std::vector<TokenKind> kinds;
  auto place = [&](int64_t id, const std::string& t, TokenKind k) {
    if (id < 0 || id > 10'000'000)
      throw Error(origin + ": token id " + std::to_string(id) + " is out of range");
    if (static_cast<size_t>(id) >= tokens.size()) {
      tokens.resize(static_cast<size_t>(id) + 1);
      kinds.resize(static_cast<size_t>(id) + 1, TokenKind::Unused);
    }
    tokens[static_cast<size_t>(id)] = t;
    kinds[static_cast<size_t>(id)] = k;
  };
  for (const auto& [k, v] : vocab->as_object()) {
    if (!v.is_int64()) throw Error(origin + ": model.vocab values must be integers");
    place(v.as_int64(), std::string(k), TokenKind::Normal);
  }
  if (const json::value* added = o.if_contains("added_tokens"); added && added->is_array())
    for (const json::value& a : added->as_array()) {
      const json::object* ao = a.if_object();
      if (!ao || !ao->contains("id") || !ao->contains("content")) continue;
      const bool special =
          ao->contains("special") && ao->at("special").is_bool() && ao->at("special").as_bool();
      place(ao->at("id").as_int64(), std::string(ao->at("content").as_string()),
            special ? TokenKind::Control : TokenKind::UserDefined);
    }
  std::vector<std::string> merges;
  if (const json::value* mv = mo.if_contains("merges"); mv && mv->is_array())
    for (const json::value& m : mv->as_array()) {
      if (m.is_string())
        merges.emplace_back(m.as_string());
      else if (m.is_array() && m.as_array().size() == 2)
        merges.push_back(std::string(m.as_array()[0].as_string()) + " " +
                         std::string(m.as_array()[1].as_string()));
    }
  const json::value* pre = o.if_contains("pre_tokenizer");
  const std::string pre_name = pre ? pre_name_of(*pre) : "gpt-2";
  auto t = std::make_unique<BpeTokenizer>(std::move(tokens), merges, std::move(kinds), pre_name);
  for (const char* b : {"<|begin_of_text|>", "<s>"})
    if (t->bos < 0) t->bos = t->find(b);
  for (const char* e : {"<|end_of_text|>", "<|endoftext|>", "</s>"})
    if (t->eos < 0) t->eos = t->find(e);
  // llama-3's post-processor puts <|begin_of_text|> first; GPT-2 and Qwen2 add nothing.
  t->add_bos = t->pre == "llama3" && t->bos >= 0;
  t->finish_setup();
  return t;
}

} // namespace tg::llm
