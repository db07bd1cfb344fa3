#pragma once
// The Unicode questions BERT's basic tokenizer asks (Hugging Face's BertNormalizer and
// BertPreTokenizer), answered from tables generated from Unicode's data by
// scripts/gen_wordpiece_unicode.py (wordpiece_unicode_tables.cpp), and strict UTF-8 in and out;
// what BPE's pre-tokenizers share with it (ranges, White_Space, encoding) is llm/unicode.hpp's.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llm/unicode.hpp"

namespace tinyrun::wordpiece_unicode {

using tg::llm::CodepointRange;
struct CodepointMapping {
  uint32_t cp;
  uint32_t offset, count; // into the table's pool
};

// The code points of UTF-8 text; tg::Error naming `origin` and the byte offset where the text
// is not valid UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
std::vector<uint32_t> decode_utf8(std::string_view text, const std::string& origin);
using tg::llm::append_utf8;
std::string encode_utf8(const std::vector<uint32_t>& cps);

using tg::llm::is_whitespace;         // Unicode's White_Space (Rust's char::is_whitespace)
bool is_control(uint32_t cp);         // general category C*, but not \t \n \r
bool is_punctuation(uint32_t cp);     // ASCII punctuation or general category P*
bool is_chinese(uint32_t cp);         // the CJK ideograph blocks BERT pads with spaces
bool is_nonspacing_mark(uint32_t cp); // general category Mn
// Appends the canonical decomposition (NFD) of cp.
void decompose(uint32_t cp, std::vector<uint32_t>& out);
// Appends the lower-case form of cp (one or more code points).
void to_lower(uint32_t cp, std::vector<uint32_t>& out);

namespace tables {
extern const CodepointRange kControl[];
extern const size_t kControlCount;
extern const CodepointRange kPunctuation[];
extern const size_t kPunctuationCount;
extern const CodepointRange kNonspacingMarks[];
extern const size_t kNonspacingMarksCount;
extern const CodepointMapping kDecomposition[];
extern const size_t kDecompositionCount;
extern const uint32_t kDecompositionPool[];
extern const CodepointMapping kLower[];
extern const size_t kLowerCount;
extern const uint32_t kLowerPool[];
} // namespace tables

} // namespace tinyrun::wordpiece_unicode
