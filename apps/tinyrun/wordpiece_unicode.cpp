#include "wordpiece_unicode.hpp"

#include <algorithm>

#include "tg/error.hpp"

namespace tinyrun::wordpiece_unicode {

namespace {

using tg::llm::in_ranges;

const CodepointMapping* find(uint32_t cp, const CodepointMapping* m, size_t n) {
  const CodepointMapping* end = m + n;
  const CodepointMapping* it =
      std::lower_bound(m, end, cp, [](const CodepointMapping& x, uint32_t c) { return x.cp < c; });
  return it != end && it->cp == cp ? it : nullptr;
}

[[noreturn]] void bad_utf8(const std::string& origin, size_t at) {
  throw tg::Error(origin + ": not valid UTF-8 at byte " + std::to_string(at) +
                  " (give the text as UTF-8)");
}

} // namespace

std::vector<uint32_t> decode_utf8(std::string_view s, const std::string& origin) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<uint8_t>(s[i]);
    int len = 0;
    uint32_t cp = 0, min = 0;
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    if ((b0 & 0xE0) == 0xC0) {
      len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      bad_utf8(origin, i);
    }
    if (i + static_cast<size_t>(len) > s.size()) bad_utf8(origin, i);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<uint8_t>(s[i + static_cast<size_t>(k)]);
      if ((b & 0xC0) != 0x80) bad_utf8(origin, i);
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) bad_utf8(origin, i);
    out.push_back(cp);
    i += static_cast<size_t>(len);
  }
  return out;
}

std::string encode_utf8(const std::vector<uint32_t>& cps) {
  std::string s;
  for (uint32_t c : cps) append_utf8(s, c);
  return s;
}

bool is_control(uint32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  return in_ranges(cp, tables::kControl, tables::kControlCount);
}

bool is_punctuation(uint32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
      (cp >= 123 && cp <= 126))
    return true;
  return in_ranges(cp, tables::kPunctuation, tables::kPunctuationCount);
}

bool is_chinese(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_nonspacing_mark(uint32_t cp) {
  return in_ranges(cp, tables::kNonspacingMarks, tables::kNonspacingMarksCount);
}

void decompose(uint32_t cp, std::vector<uint32_t>& out) {
  // Hangul syllables decompose by formula (Unicode 3.12).
  constexpr uint32_t s_base = 0xAC00, l_base = 0x1100, v_base = 0x1161, t_base = 0x11A7;
  constexpr uint32_t t_count = 28, n_count = 21 * t_count, s_count = 19 * n_count;
  if (cp >= s_base && cp < s_base + s_count) {
    const uint32_t s = cp - s_base;
    out.push_back(l_base + s / n_count);
    out.push_back(v_base + (s % n_count) / t_count);
    if (s % t_count) out.push_back(t_base + s % t_count);
    return;
  }
  if (const CodepointMapping* m = find(cp, tables::kDecomposition, tables::kDecompositionCount)) {
    out.insert(out.end(), tables::kDecompositionPool + m->offset,
               tables::kDecompositionPool + m->offset + m->count);
    return;
  }
  out.push_back(cp);
}

void to_lower(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= 'A' && cp <= 'Z') {
    out.push_back(cp + 32);
    return;
  }
  if (cp < 0x80) {
    out.push_back(cp);
    return;
  }
  if (const CodepointMapping* m = find(cp, tables::kLower, tables::kLowerCount)) {
    out.insert(out.end(), tables::kLowerPool + m->offset,
               tables::kLowerPool + m->offset + m->count);
    return;
  }
  out.push_back(cp);
}

} // namespace tinyrun::wordpiece_unicode
