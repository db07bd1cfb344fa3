#pragma once
// Loading a BERT model from a GGUF file of llama.cpp's `bert` architecture (what
// convert_hf_to_gguf.py writes for BertModel and sentence-transformers models): the sizes from
// the `bert.*` metadata, the WordPiece vocabulary from `tokenizer.ggml.tokens` (llama.cpp
// stores a word-initial piece with a leading U+2581 and a continuation without its "##"; both
// are turned back), the tensors renamed to Hugging Face's keys and dequantized to float32, the
// pooling from `bert.pooling_type` (1 mean, 2 CLS).
#include <filesystem>

#include "bert_load.hpp"

namespace tinyrun {

// The BERT of a GGUF file. Raises tg::Error naming the file for another architecture (naming
// it), missing or out-of-range metadata, a vocabulary whose size differs from the embeddings'
// rows or without the special tokens, and tensors missing or of the wrong shape.
LoadedBert load_bert_gguf(const std::filesystem::path& path);

// Hugging Face's name of a llama.cpp BERT tensor (`blk.0.attn_q.weight` ->
// `encoder.layer.0.attention.self.query.weight`); "" for a name it does not know.
std::string bert_gguf_to_hf_name(const std::string& gguf_name);

} // namespace tinyrun
