#include "bert_embed.hpp"

#include <cstdio>

#include "tg/error.hpp"

namespace tinyrun {

using tg::Tensor;

namespace {

struct Batch {
  Tensor ids, types, mask;
  std::vector<int64_t> lengths;
};

Batch make_batch(const LoadedBert& m, const std::vector<std::string>& texts, bool truncate) {
  std::vector<Encoding> enc;
  int64_t longest = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    enc.push_back(
        m.tokenizer->encode(texts[i], m.max_length, truncate, "sentence " + std::to_string(i + 1)));
    longest = std::max<int64_t>(longest, static_cast<int64_t>(enc.back().ids.size()));
    if (enc.back().untruncated > m.max_length)
      std::fprintf(
          stderr, "bert: sentence %zu is %lld tokens long; truncated to the model's %lld\n", i + 1,
          static_cast<long long>(enc.back().untruncated), static_cast<long long>(m.max_length));
  }
  const auto n = static_cast<int64_t>(texts.size());
  std::vector<int32_t> ids(static_cast<size_t>(n * longest), m.tokenizer->vocab().pad);
  std::vector<int32_t> mask(static_cast<size_t>(n * longest), 0);
  Batch b;
  for (int64_t i = 0; i < n; ++i) {
    const auto& e = enc[static_cast<size_t>(i)].ids;
    for (size_t j = 0; j < e.size(); ++j) {
      ids[static_cast<size_t>(i * longest) + j] = e[j];
      mask[static_cast<size_t>(i * longest) + j] = 1;
    }
    b.lengths.push_back(static_cast<int64_t>(e.size()));
  }
  b.ids = Tensor::from_vector(ids, tg::Shape{n, longest});
  b.mask = Tensor::from_vector(mask, tg::Shape{n, longest});
  b.types = Tensor::zeros({n, longest}, tg::dtypes::int32);
  return b;
}

} // namespace

SentenceEmbeddings embed_sentences(const LoadedBert& m, const std::vector<std::string>& texts,
                                   bool truncate) {
  if (texts.empty()) throw tg::Error("bert: no sentences to embed");
  const Batch b = make_batch(m, texts, truncate);
  const Tensor h = (*m.model)(b.ids, b.types, b.mask);
  const Tensor w = b.mask.cast(tg::dtypes::float32).unsqueeze(-1);
  const Tensor mean = (h * w).sum({1}) / w.sum({1}).maximum(1e-9);
  const Tensor e = mean / mean.square().sum({1}, true).sqrt().maximum(1e-12);
  SentenceEmbeddings out;
  out.dim = e.size(1);
  out.values = e.to_vector<float>();
  out.similarities = e.matmul(e.transpose()).to_vector<float>();
  out.lengths = b.lengths;
  return out;
}

} // namespace tinyrun
