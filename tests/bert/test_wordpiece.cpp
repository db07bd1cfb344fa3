// The WordPiece tokenizer (apps/tinyrun/wordpiece.hpp): normalization, punctuation and CJK
// splitting, ## continuations, [UNK], special tokens, truncation, on a small vocabulary written
// here; and all-MiniLM-L6-v2's ids for awkward text equal to the package's own tokenizer
// (tests/bert/minilm_reference.json), when the model has been fetched. Bad vocabularies and
// configs are refused naming the field.
#include <doctest/doctest.h>

#include <functional>

#include "bert_config.hpp"
#include "bert_test_util.hpp"
#include "tg/error.hpp"
#include "wordpiece.hpp"

using namespace bert_test;
using tinyrun::WordPieceTokenizer;

namespace {

WordPieceTokenizer small() {
  const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n,\n!\nun\n##believ\n"
                            "##able\ncafe\n北\n京\nnaive\n";
  return WordPieceTokenizer(tinyrun::parse_wordpiece_vocab(vocab, "vocab.txt"));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tg::Error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE("bert.wordpiece") {

  TEST_CASE("basic tokenization lower-cases, strips accents and splits punctuation and CJK") {
    const WordPieceTokenizer t = small();
    CHECK(t.basic_tokenize("Héllo,WORLD!  Café\tnaïve") ==
          std::vector<std::string>{"hello", ",", "world", "!", "cafe", "naive"});
    CHECK(t.basic_tokenize("北京x") == std::vector<std::string>{"北", "京", "x"});
    CHECK(t.basic_tokenize("a\x01"
                           "b\xef\xbf\xbd"
                           "c") == std::vector<std::string>{"abc"});
  }

  TEST_CASE("wordpiece pieces, [UNK], special tokens and truncation") {
    const WordPieceTokenizer t = small();
    CHECK(t.tokenize("unbelievable hello") == std::vector<int32_t>{9, 10, 11, 5});
    CHECK(t.tokenize("unbelievablex") == std::vector<int32_t>{1}); // a piece matches nothing
    CHECK(t.tokenize(std::string(101, 'a')) == std::vector<int32_t>{1});
    CHECK(t.tokenize("hello [SEP] [MASK]world") == std::vector<int32_t>{5, 3, 4, 6});
    const tinyrun::Encoding e = t.encode("hello world hello world", 4, true);
    CHECK(e.ids == std::vector<int32_t>{2, 5, 6, 3});
    CHECK(e.untruncated == 6);
    CHECK(error_of([&] {
            t.encode("hello world hello world", 4, false);
          }).find("is 6 tokens long ([CLS] and [SEP] included) but the model takes at most 4") !=
          std::string::npos);
    CHECK(error_of([&] {
            t.tokenize("bad \xff utf8", "sentence 1");
          }).find("sentence 1: not valid UTF-8 at byte 4") != std::string::npos);
  }

  TEST_CASE("vocabularies without the special tokens or not UTF-8 are refused") {
    CHECK(error_of([] {
            tinyrun::parse_wordpiece_vocab("", "v.txt");
          }).find("v.txt: size = 0 bytes: empty") != std::string::npos);
    CHECK(error_of([] {
            tinyrun::parse_wordpiece_vocab("[PAD]\n[UNK]\n[CLS]\nhello\n", "v.txt");
          }).find("v.txt: special tokens = [SEP]: missing") != std::string::npos);
    CHECK(error_of([] {
            tinyrun::parse_wordpiece_vocab("[PAD]\n\xc3\n", "v.txt");
          }).find("v.txt: line 2: not valid UTF-8") != std::string::npos);
    const tinyrun::WordPieceVocab v =
        tinyrun::parse_wordpiece_vocab("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]", "v.txt");
    CHECK(v.size() == 4);
    CHECK(v.sep == 3);
  }

  TEST_CASE("configs of another architecture or with bad sizes are refused") {
    CHECK(error_of([] {
            tinyrun::parse_bert_config(R"({"model_type":"llama"})", "c.json");
          }).find("c.json: model_type = llama: not a BERT model") != std::string::npos);
    const std::string base = R"("model_type":"bert","vocab_size":100,"num_hidden_layers":2,)"
                             R"("num_attention_heads":3,"intermediate_size":8,)"
                             R"("max_position_embeddings":16)";
    CHECK(error_of([&] {
            tinyrun::parse_bert_config("{" + base + R"(,"hidden_size":16})", "c.json");
          }).find("c.json: hidden_size = 16: not divisible by num_attention_heads = 3") !=
          std::string::npos);
    CHECK(error_of([&] {
            tinyrun::parse_bert_config("{" + base + R"(,"hidden_size":-3})", "c.json");
          }).find("c.json: hidden_size = -3: must be a non-negative integer") != std::string::npos);
    CHECK(error_of([&] {
            tinyrun::parse_bert_config("{" + base + R"(,"hidden_size":99999999999})", "c.json");
          }).find("hidden_size = 99999999999: out of range") != std::string::npos);
    const tinyrun::BertConfig c =
        tinyrun::parse_bert_config("{" + base + R"(,"hidden_size":12})", "c.json");
    CHECK(c.hidden_size == 12);
    CHECK(c.layer_norm_eps == doctest::Approx(1e-12));
  }

  TEST_CASE("all-MiniLM-L6-v2's ids on awkward text equal the package tokenizer's") {
    const auto dir = minilm_dir();
    if (!dir) {
      MESSAGE("skipped: all-MiniLM-L6-v2 is not in the data cache; " << kFetch);
      return;
    }
    const WordPieceTokenizer t(tinyrun::read_wordpiece_vocab(*dir / "vocab.txt"));
    const boost::json::value ref = reference("minilm_reference.json");
    const auto& texts = ref.at("awkward").as_array();
    const auto& ids = ref.at("awkward_ids").as_array();
    REQUIRE(texts.size() == ids.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string text(texts[i].as_string());
      std::vector<int32_t> want;
      for (const auto& v : ids[i].as_array()) want.push_back(static_cast<int32_t>(v.as_int64()));
      INFO(text);
      CHECK(t.encode(text, 1 << 20, false).ids == want);
    }
  }
}
