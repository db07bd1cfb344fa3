#pragma once
// Tokenizers as llama.cpp runs them (its tokenizer is the reference for GGUF models):
// SentencePiece-style BPE over scores (llama 1/2: "llama" in tokenizer.ggml.model) and
// byte-level BPE over merges (GPT-2, llama-3, Qwen2: "gpt2"), built from GGUF metadata or a
// Hugging Face tokenizer.json.
//
// encode() splits the text on special tokens first (when parse_special), then tokenizes each
// piece; decode goes token by token through a StreamDecoder, which holds back the bytes of a
// character split across tokens until it is whole, so streamed output is always valid UTF-8.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tg {
class GgufMetadata;
}

namespace tg::llm {

enum class TokenKind : uint8_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6
};

class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  // Token ids of `text`; add_special adds BOS (and EOS) as the model asks; parse_special lets
  // control tokens written in the text ("<|im_start|>") become their ids.
  std::vector<int32_t> encode(const std::string& text, bool add_special = true,
                              bool parse_special = true) const;
  // The bytes a token stands for (control tokens: nothing unless `special`).
  virtual std::string piece(int32_t id, bool special = false) const = 0;
  // Every piece concatenated (a leading space of the first piece after BOS dropped, as
  // llama.cpp's detokenizer does for SentencePiece).
  std::string decode(const std::vector<int32_t>& ids, bool special = false) const;

  int32_t vocab_size() const { return static_cast<int32_t>(tokens_.size()); }
  const std::string& token_text(int32_t id) const;
  TokenKind kind(int32_t id) const;
  int32_t find(std::string_view text) const; // -1 when not a token

  int32_t bos = -1, eos = -1;
  bool add_bos = true, add_eos = false;
  bool add_space_prefix = false; // SentencePiece: a space before the text
  // End-of-generation tokens: eos, eot, and the chat templates' end-of-turn tokens.
  std::vector<int32_t> eog;
  bool is_eog(int32_t id) const;
  std::string model; // "llama" or "gpt2"
  std::string pre;   // byte-level pre-tokenizer: "gpt2", "llama3", "qwen2"

  // From GGUF metadata (tokenizer.ggml.*); tg::Error for an unsupported tokenizer model.
  static std::unique_ptr<Tokenizer> from_gguf(const GgufMetadata& m);
  // From a Hugging Face tokenizer.json (BPE, byte-level).
  static std::unique_ptr<Tokenizer> from_hf_json(const std::string& text,
                                                 const std::string& origin);

protected:
  // Tokens of one piece of text between special tokens.
  virtual void encode_text(std::string text, bool first, std::vector<int32_t>& out) const = 0;
  void set_vocab(std::vector<std::string> tokens, std::vector<TokenKind> kinds);
  void finish_setup(); // special-token list and end-of-generation tokens

  std::vector<std::string> tokens_;
  std::vector<TokenKind> kinds_;
  std::unordered_map<std::string, int32_t> index_;
  std::vector<int32_t> specials_; // control/user-defined/unknown tokens, longest text first
};

// Streams the pieces of generated tokens as whole UTF-8 characters.
class StreamDecoder {
public:
  explicit StreamDecoder(const Tokenizer& t, bool strip_leading_space = false)
      : tok_(t), strip_(strip_leading_space) {}
  // The text that is complete after adding `id` (possibly empty).
  std::string push(int32_t id);
  std::string flush(); // whatever is left (invalid bytes become U+FFFD)

private:
  const Tokenizer& tok_;
  bool strip_;
  std::string pending_;
};

// The length of the longest prefix of `s` made of whole UTF-8 characters, leaving out an
// incomplete character at its end (an invalid byte counts as one character).
size_t utf8_complete_prefix(std::string_view s);

} // namespace tg::llm
