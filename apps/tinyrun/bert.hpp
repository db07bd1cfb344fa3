#pragma once
// `tinyrun bert`: BERT encoders.
//   embed     sentence embeddings (sentence-transformers' mean pooling + L2 normalization) of
//             a Hugging Face BERT folder (all-MiniLM-L6-v2) and their cosine similarities
//   tokenize  the WordPiece ids of texts, as the model's tokenizer gives them
//   train     the MLPerf BERT pretraining step on synthetic data (bert_train.hpp)
//   bench     that step timed, beside the same step in PyTorch when it is installed
#include <string>
#include <vector>

namespace tinyrun {
int bert_command(const std::vector<std::string>& args);
} // namespace tinyrun
