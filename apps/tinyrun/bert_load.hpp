#pragma once
// Loading a BERT model as Hugging Face saves one: a folder with config.json, model.safetensors
// (or, in older uploads, pytorch_model.bin: a PyTorch checkpoint, read without Python by
// tg/torch_checkpoint.hpp) and vocab.txt (sentence-transformers folders add
// sentence_bert_config.json, whose max_seq_length caps the tokens, and 1_Pooling/config.json).
// Weight names may carry the `bert.` prefix of BertForPreTraining checkpoints; the pretraining
// heads (`cls.*`) and the `embeddings.position_ids` buffer are skipped.
#include <filesystem>
#include <memory>
#include <string>

#include "bert_model.hpp"
#include "wordpiece.hpp"

namespace tinyrun {

struct LoadedBert {
  BertConfig config;
  std::unique_ptr<BertModel> model;
  std::unique_ptr<WordPieceTokenizer> tokenizer;
  int64_t max_length = 512;     // tokens per sequence, [CLS] and [SEP] included
  std::string pooling = "mean"; // what 1_Pooling/config.json asks for (mean when absent)
  std::filesystem::path dir;
};

// Raises tg::Error naming the file for a missing folder or file, a config of another
// architecture, a vocabulary whose size differs from the config's vocab_size, and weights
// that do not fit the config (every missing, unexpected or mis-shaped tensor named).
LoadedBert load_bert(const std::filesystem::path& dir);

} // namespace tinyrun
