#pragma once
// SentencePiece-style tokenizer (llama 1/2, GGUF tokenizer.ggml.model = "llama"): spaces become
// U+2581, characters are merged pairwise by highest score while the merge is a token (ties to
// the left), and a piece without a token falls back to its bytes' <0xNN> tokens. This is
// llama.cpp's llm_tokenizer_spm.
#include "tokenizer.hpp"

namespace tg::llm {

class SpmTokenizer : public Tokenizer {
public:
  SpmTokenizer(std::vector<std::string> tokens, std::vector<float> scores,
               std::vector<TokenKind> kinds);
  std::string piece(int32_t id, bool special = false) const override;

protected:
  void encode_text(std::string text, bool first, std::vector<int32_t>& out) const override;

private:
  void emit(std::string_view piece, std::vector<int32_t>& out) const;
  std::vector<float> scores_;
  int32_t byte_tokens_[256];
};

} // namespace tg::llm
