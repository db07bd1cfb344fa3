// BERT from GGUF (apps/tinyrun/bert_gguf.hpp): all-MiniLM-L6-v2 written by the test as llama.cpp's
// convert_hf_to_gguf.py writes a BERT (its tensor names, the `bert.*` metadata, the vocabulary
// spelt with U+2581 word starts and no "##") embeds the reference sentences as the Hugging Face
// folder does; a GGUF of another architecture (the shared stories260K llama) and a vocabulary
// that does not fit the embeddings are refused.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "bert_embed.hpp"
#include "bert_gguf.hpp"
#include "bert_test_util.hpp"
#include "tg/gguf_header.hpp"
#include "tg/safetensors.hpp"

using namespace bert_test;

namespace {

// The inverse of bert_gguf_to_hf_name over the names a BertModel has.
std::string gguf_name(const std::string& hf) {
  static const char* kTop[][2] = {{"embeddings.word_embeddings.weight", "token_embd.weight"},
                                  {"embeddings.position_embeddings.weight", "position_embd.weight"},
                                  {"embeddings.token_type_embeddings.weight", "token_types.weight"},
                                  {"embeddings.LayerNorm.weight", "token_embd_norm.weight"},
                                  {"embeddings.LayerNorm.bias", "token_embd_norm.bias"}};
  for (const auto& p : kTop)
    if (hf == p[0]) return p[1];
  static const char* kBlock[][2] = {{"attention.self.query", "attn_q"},
                                    {"attention.self.key", "attn_k"},
                                    {"attention.self.value", "attn_v"},
                                    {"attention.output.dense", "attn_output"},
                                    {"attention.output.LayerNorm", "attn_output_norm"},
                                    {"intermediate.dense", "ffn_up"},
                                    {"output.dense", "ffn_down"},
                                    {"output.LayerNorm", "layer_output_norm"}};
  const std::string pre = "encoder.layer.";
  if (hf.rfind(pre, 0) != 0) return "";
  const size_t dot = hf.find('.', pre.size()), last = hf.rfind('.');
  const std::string layer = hf.substr(pre.size(), dot - pre.size());
  const std::string part = hf.substr(dot + 1, last - dot - 1), kind = hf.substr(last + 1);
  for (const auto& p : kBlock)
    if (part == p[0]) return "blk." + layer + "." + p[1] + "." + kind;
  return "";
}

// vocab.txt's token as llama.cpp spells it.
std::string phantom(const std::string& t) {
  if (t.size() >= 2 && t.front() == '[' && t.back() == ']') return t;
  if (t.rfind("##", 0) == 0) return t.substr(2);
  return "\xE2\x96\x81" + t;
}

// MiniLM's folder as a llama.cpp BERT GGUF (float32 tensors); `drop_tokens` tokens fewer.
void write_gguf(const fs::path& dir, const fs::path& out, size_t drop_tokens = 0) {
  const tinyrun::LoadedBert hf = tinyrun::load_bert(dir);
  const tinyrun::BertConfig& c = hf.config;
  tg::GgufMetadata md;
  md.set("general.architecture", tg::GgufValue::of_string("bert"));
  md.set("bert.context_length",
         tg::GgufValue::of_u32(static_cast<uint32_t>(c.max_position_embeddings)));
  md.set("bert.embedding_length", tg::GgufValue::of_u32(static_cast<uint32_t>(c.hidden_size)));
  md.set("bert.feed_forward_length",
         tg::GgufValue::of_u32(static_cast<uint32_t>(c.intermediate_size)));
  md.set("bert.block_count", tg::GgufValue::of_u32(static_cast<uint32_t>(c.num_hidden_layers)));
  md.set("bert.attention.head_count",
         tg::GgufValue::of_u32(static_cast<uint32_t>(c.num_attention_heads)));
  md.set("bert.attention.layer_norm_epsilon",
         tg::GgufValue::of_f32(static_cast<float>(c.layer_norm_eps)));
  md.set("bert.pooling_type", tg::GgufValue::of_u32(1));
  md.set("tokenizer.ggml.model", tg::GgufValue::of_string("bert"));
  std::vector<std::string> tokens;
  for (const std::string& t : hf.tokenizer->vocab().tokens) tokens.push_back(phantom(t));
  tokens.resize(tokens.size() - drop_tokens);
  md.set("tokenizer.ggml.tokens", tg::GgufValue::of_strings(tokens));
  std::vector<tg::GgufWriteTensor> ts;
  for (const auto& [name, t] : hf.model->named_state()) {
    const std::string g = gguf_name(name);
    if (g.empty()) continue; // the pooler, which embeddings do not use and llama.cpp drops
    tg::GgufWriteTensor w;
    w.name = g;
    for (auto it = t.shape().rbegin(); it != t.shape().rend(); ++it)
      w.ne.push_back(static_cast<uint64_t>(*it));
    const std::vector<float> v = t.to_vector<float>();
    w.bytes.resize(v.size() * sizeof(float));
    std::memcpy(w.bytes.data(), v.data(), w.bytes.size());
    ts.push_back(std::move(w));
  }
  tg::gguf_write(out, md, ts);
}

} // namespace

TEST_SUITE("bert.gguf") {

  TEST_CASE("llama.cpp's BERT names map to Hugging Face's") {
    CHECK(tinyrun::bert_gguf_to_hf_name("blk.3.attn_q.weight") ==
          "encoder.layer.3.attention.self.query.weight");
    CHECK(tinyrun::bert_gguf_to_hf_name("blk.0.layer_output_norm.bias") ==
          "encoder.layer.0.output.LayerNorm.bias");
    CHECK(tinyrun::bert_gguf_to_hf_name("token_types.weight") ==
          "embeddings.token_type_embeddings.weight");
    CHECK(tinyrun::bert_gguf_to_hf_name("blk.x.attn_q.weight").empty());
    CHECK(tinyrun::bert_gguf_to_hf_name("blk.1.attn_qkv.weight").empty());
    CHECK(tinyrun::bert_gguf_to_hf_name("output.weight").empty());
  }

  TEST_CASE("a GGUF of another architecture is refused, naming it") {
    const auto llama = tg::data::find_data("models/stories260K.gguf", TG_SOURCE_DIR);
    if (!llama) {
      MESSAGE("skipped: models/stories260K.gguf is not in $TG_DATA_DIR or ../shared/data");
      return;
    }
    Run r = bert_test::tinyrun("embed -m " + llama->string() + " hello");
    CHECK(r.rc == 1);
    CHECK(r.out.find("architecture 'llama', not 'bert' (tinyrun llm runs it)") !=
          std::string::npos);
  }

  TEST_CASE("all-MiniLM-L6-v2 as GGUF embeds as its Hugging Face folder does") {
    const auto dir = minilm_dir();
    if (!dir) {
      MESSAGE("skipped: all-MiniLM-L6-v2 is not in the data cache; " << kFetch);
      return;
    }
    const fs::path tmp = fs::temp_directory_path() / ("tg_bert_gguf_" + std::to_string(getpid()));
    fs::create_directories(tmp);
    const fs::path gguf = tmp / "minilm.gguf";
    write_gguf(*dir, gguf);
    const tinyrun::LoadedBert g = tinyrun::load_bert_gguf(gguf);
    const tinyrun::LoadedBert h = tinyrun::load_bert(*dir);
    CHECK(g.tokenizer->vocab().tokens == h.tokenizer->vocab().tokens);
    CHECK(g.pooling == "mean");
    const std::vector<std::string> texts = {
        "A man is eating food.", "Ein Mann isst Brot, très délicieux!", "unbelievably 中文 [MASK]"};
    const tinyrun::SentenceEmbeddings eg = tinyrun::embed_sentences(g, texts, true);
    const tinyrun::SentenceEmbeddings eh = tinyrun::embed_sentences(h, texts, true);
    REQUIRE(eg.values.size() == eh.values.size());
    double worst = 0;
    for (size_t i = 0; i < eg.values.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(eg.values[i] - eh.values[i])));
    MESSAGE("GGUF vs Hugging Face folder: largest component difference " << worst);
    CHECK(worst < 1e-6);
    Run cli = bert_test::tinyrun("embed -m " + gguf.string() + " \"A man is eating food.\"");
    CHECK(cli.rc == 0);
    CHECK(cli.out.find("embedding 1 (8 tokens)") != std::string::npos);

    // A vocabulary one token short of the embeddings' rows.
    const fs::path short_vocab = tmp / "short.gguf";
    write_gguf(*dir, short_vocab, 1);
    Run bad = bert_test::tinyrun("embed -m " + short_vocab.string() + " hello");
    CHECK(bad.rc == 1);
    CHECK(bad.out.find("word_embeddings") != std::string::npos);
    fs::remove_all(tmp);
  }
}
