#pragma once
// Byte-level BPE (GPT-2, llama-3, Qwen2; GGUF tokenizer.ggml.model = "gpt2"): the text is cut
// into words by the family's pre-tokenizer, each word's bytes are mapped to GPT-2's printable
// code points, and adjacent symbols are merged by the lowest merge rank (ties to the left)
// until no merge applies. llama-3 takes a whole word that is a token as it is (llama.cpp's
// ignore_merges). This is llama.cpp's llm_tokenizer_bpe.
#include <unordered_map>

#include "pretokenize.hpp"
#include "tokenizer.hpp"

namespace tg::llm {

class BpeTokenizer : public Tokenizer {
public:
  // `merges`: "left right" pairs, best first; `pre`: GGUF's tokenizer.ggml.pre name.
  BpeTokenizer(std::vector<std::string> tokens, const std::vector<std::string>& merges,
               std::vector<TokenKind> kinds, const std::string& pre_name);
  std::string piece(int32_t id, bool special = false) const override;
  PreTokenizer pre_tokenizer() const { return pre_; }

protected:
  void encode_text(std::string text, bool first, std::vector<int32_t>& out) const override;

private:
  void encode_word(const std::string& word, std::vector<int32_t>& out) const;
  int rank(std::string_view left, std::string_view right) const;
  PreTokenizer pre_;
  bool ignore_merges_ = false;
  std::unordered_map<std::string, int> ranks_; // "left right" -> rank
};

// GPT-2's byte <-> printable code point mapping.
std::string byte_level_encode(std::string_view bytes);
std::string byte_level_decode(std::string_view text);

} // namespace tg::llm
