#pragma once
// BERT's WordPiece tokenizer, as Hugging Face's BertTokenizerFast (tokenizer.json's
// BertNormalizer + BertPreTokenizer + WordPiece) tokenizes for sentence-transformers:
//   the special tokens ([CLS] [SEP] [UNK] [PAD] [MASK]) written in the text are kept whole;
//   the rest is cleaned (NUL, U+FFFD and control characters dropped, whitespace made a
//   space), CJK ideographs are set apart by spaces, accents stripped (NFD, non-spacing marks
//   dropped) and letters lower-cased (both only for an uncased vocabulary), then split at
//   whitespace and around each punctuation character; each word becomes the longest vocabulary
//   pieces from its start, continuations prefixed "##", or [UNK] when some part matches
//   nothing or the word is longer than 100 characters.
// The vocabulary file (vocab.txt: one token per line, its id the line number) is parsed by a
// pure function of its bytes (the fuzz target calls it).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tinyrun {

struct WordPieceVocab {
  std::vector<std::string> tokens; // by id
  std::unordered_map<std::string, int32_t> ids;
  int32_t pad = -1, unk = -1, cls = -1, sep = -1, mask = -1; // mask: -1 when absent
  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
};

inline constexpr uint64_t kWordPieceMaxTokens = 1u << 24;
inline constexpr uint64_t kWordPieceMaxBytes = 64ull << 20;

// Lines split at '\n' (a trailing '\r' removed), the last line's newline optional; a token
// written twice keeps the later id (as BertTokenizer's load_vocab). Raises tg::Error naming
// `origin` for an empty file, invalid UTF-8 (naming the line), more than 2^24 tokens or
// 64 MiB, and a missing [PAD], [UNK], [CLS] or [SEP].
WordPieceVocab parse_wordpiece_vocab(std::string_view text, const std::string& origin);
WordPieceVocab read_wordpiece_vocab(const std::filesystem::path& path);

struct Encoding {
  std::vector<int32_t> ids; // [CLS] pieces [SEP]
  int64_t untruncated = 0;  // the length before truncation
};

class WordPieceTokenizer {
public:
  explicit WordPieceTokenizer(WordPieceVocab vocab, bool lower_case = true);
  // The words and punctuation of `text` after normalization (UTF-8); tg::Error for text that
  // is not UTF-8, naming `origin`.
  std::vector<std::string> basic_tokenize(std::string_view text,
                                          const std::string& origin = "the text") const;
  // The ids of `text`, without [CLS]/[SEP].
  std::vector<int32_t> tokenize(std::string_view text,
                                const std::string& origin = "the text") const;
  // [CLS] ids [SEP], at most `max_length` (>= 2) long: cut at the end when `truncate`, else a
  // longer text raises tg::Error saying how long it is and what the limit is.
  Encoding encode(std::string_view text, int64_t max_length, bool truncate,
                  const std::string& origin = "the text") const;
  const WordPieceVocab& vocab() const { return vocab_; }

private:
  void wordpiece(const std::vector<uint32_t>& word, std::vector<int32_t>& out) const;
  std::vector<std::vector<uint32_t>> words(const std::vector<uint32_t>& text) const;
  WordPieceVocab vocab_;
  bool lower_case_;
};

} // namespace tinyrun
