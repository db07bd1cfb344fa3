#pragma once
// Sentence embeddings as sentence-transformers computes them for all-MiniLM-L6-v2: the texts
// tokenized ([CLS] ... [SEP], at most the model's max length), padded to the longest, run
// through the encoder, the last hidden states averaged over the real tokens (mean pooling),
// then L2-normalized; and their cosine similarities (dot products of the normalized vectors).
#include <string>
#include <vector>

#include "bert_load.hpp"

namespace tinyrun {

struct SentenceEmbeddings {
  int64_t dim = 0;
  std::vector<float> values;       // texts x dim, each row of norm 1
  std::vector<float> similarities; // texts x texts
  std::vector<int64_t> lengths;    // tokens per text, [CLS] and [SEP] included
};

// `truncate`: cut texts longer than the model's max length (a note on stderr), else refuse them
// with tg::Error.
SentenceEmbeddings embed_sentences(const LoadedBert& model, const std::vector<std::string>& texts,
                                   bool truncate);

} // namespace tinyrun
