#pragma once
// The Unicode facts the byte-level BPE pre-tokenizers (and BERT's basic tokenizer) need: UTF-8
// decoding, the categories \p{L} (letters) and \p{N} (numbers) from generated range tables
// (unicode_tables.cpp), and \s as the White_Space property.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tg::llm {

struct CodepointRange {
  uint32_t first, last;
};

namespace unicode_tables {
extern const CodepointRange kLetters[];
extern const size_t kLettersCount;
extern const CodepointRange kNumbers[];
extern const size_t kNumbersCount;
} // namespace unicode_tables

// Whether cp lies in one of n sorted, disjoint ranges (the generated tables' form).
bool in_ranges(uint32_t cp, const CodepointRange* ranges, size_t n);

bool is_letter(uint32_t cp);
bool is_number(uint32_t cp);
bool is_whitespace(uint32_t cp); // Unicode's White_Space property

// Code points of `s` with the byte offset where each starts (plus s.size() at the end). An
// invalid byte is taken as the code point of its value (as llama.cpp does), so every byte is
// covered.
struct Utf8Text {
  std::vector<uint32_t> cps;
  std::vector<size_t> offsets;
};
Utf8Text decode_utf8(std::string_view s);
std::string encode_utf8(uint32_t cp);
void append_utf8(std::string& out, uint32_t cp);

} // namespace tg::llm
