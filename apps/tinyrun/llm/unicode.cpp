// UTF-8 and character classes; see unicode.hpp.
#include "unicode.hpp"

#include <algorithm>

namespace tg::llm {

bool in_ranges(uint32_t cp, const CodepointRange* r, size_t n) {
  const CodepointRange* end = r + n;
  const CodepointRange* it =
      std::upper_bound(r, end, cp, [](uint32_t c, const CodepointRange& x) { return c < x.first; });
  return it != r && cp <= (it - 1)->last;
}

bool is_letter(uint32_t cp) {
  if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
  return in_ranges(cp, unicode_tables::kLetters, unicode_tables::kLettersCount);
}

bool is_number(uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return in_ranges(cp, unicode_tables::kNumbers, unicode_tables::kNumbersCount);
}

bool is_whitespace(uint32_t cp) {
  switch (cp) {
  case 0x09:
  case 0x0A:
  case 0x0B:
  case 0x0C:
  case 0x0D:
  case 0x20:
  case 0x85:
  case 0xA0:
  case 0x1680:
  case 0x2028:
  case 0x2029:
  case 0x202F:
  case 0x205F:
  case 0x3000:
    return true;
  default:
    return cp >= 0x2000 && cp <= 0x200A;
  }
}

Utf8Text decode_utf8(std::string_view s) {
  Utf8Text t;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    uint32_t cp = c;
    bool ok = n > 0 && i + n <= s.size();
    if (ok && n > 1) {
      cp = c & (0x7F >> n);
      for (size_t k = 1; k < n; ++k) {
        const auto cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) ok = false;
        cp = (cp << 6) | (cc & 0x3F);
      }
    }
    if (!ok) {
      n = 1;
      cp = c;
    }
    t.cps.push_back(cp);
    t.offsets.push_back(i);
    i += n;
  }
  t.offsets.push_back(s.size());
  return t;
}

std::string encode_utf8(uint32_t cp) {
  std::string out;
  append_utf8(out, cp);
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

} // namespace tg::llm
