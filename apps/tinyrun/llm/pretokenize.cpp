// Pre-tokenizer expressions as tables of alternatives; see pretokenize.hpp.
#include "pretokenize.hpp"

#include <functional>

#include "unicode.hpp"

namespace tg::llm {

namespace {

// A matcher sees the code points and a position and returns how many it takes (0: no match).
using Cps = std::vector<uint32_t>;
using Alternative = size_t (*)(const Cps&, size_t);

bool letter(const Cps& c, size_t i) { return i < c.size() && is_letter(c[i]); }
bool number(const Cps& c, size_t i) { return i < c.size() && is_number(c[i]); }
bool space(const Cps& c, size_t i) { return i < c.size() && is_whitespace(c[i]); }
bool newline(const Cps& c, size_t i) { return i < c.size() && (c[i] == '\r' || c[i] == '\n'); }
// [^\s\p{L}\p{N}]
bool other(const Cps& c, size_t i) {
  return i < c.size() && !is_whitespace(c[i]) && !is_letter(c[i]) && !is_number(c[i]);
}

size_t run(const Cps& c, size_t i, bool (*cls)(const Cps&, size_t)) {
  size_t j = i;
  while (cls(c, j)) ++j;
  return j - i;
}

uint32_t lower(uint32_t cp) { return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp; }

size_t contraction(const Cps& c, size_t i, bool fold) {
  if (i + 1 >= c.size() || c[i] != '\'') return 0;
  auto at = [&](size_t k) { return fold ? lower(c[k]) : c[k]; };
  const uint32_t a = at(i + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 < c.size()) {
    const uint32_t b = at(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  return 0;
}

// ' '?CLASS+
size_t spaced_run(const Cps& c, size_t i, bool (*cls)(const Cps&, size_t)) {
  if (i < c.size() && c[i] == ' ' && cls(c, i + 1)) return 1 + run(c, i + 1, cls);
  return run(c, i, cls);
}

// \s+(?!\S): a whitespace run, less its last character when a non-space follows.
size_t spaces_not_before_text(const Cps& c, size_t i) {
  const size_t n = run(c, i, space);
  if (n == 0) return 0;
  if (i + n == c.size()) return n;
  return n - 1;
}

size_t gpt2_contraction(const Cps& c, size_t i) { return contraction(c, i, false); }
size_t gpt2_letters(const Cps& c, size_t i) { return spaced_run(c, i, letter); }
size_t gpt2_numbers(const Cps& c, size_t i) { return spaced_run(c, i, number); }
size_t gpt2_other(const Cps& c, size_t i) { return spaced_run(c, i, other); }
size_t any_spaces(const Cps& c, size_t i) { return run(c, i, space); }

size_t l3_contraction(const Cps& c, size_t i) { return contraction(c, i, true); }
// [^\r\n\p{L}\p{N}]?\p{L}+
size_t l3_letters(const Cps& c, size_t i) {
  if (i < c.size() && !newline(c, i) && !letter(c, i) && !number(c, i) && letter(c, i + 1))
    return 1 + run(c, i + 1, letter);
  return run(c, i, letter);
}
size_t l3_numbers(const Cps& c, size_t i) { return std::min<size_t>(3, run(c, i, number)); }
size_t qwen2_number(const Cps& c, size_t i) { return number(c, i) ? 1 : 0; }
// ' '?[^\s\p{L}\p{N}]+[\r\n]*
size_t l3_other(const Cps& c, size_t i) {
  const size_t n = spaced_run(c, i, other);
  return n == 0 ? 0 : n + run(c, i + n, newline);
}
// \s*[\r\n]+: whitespace up to and including the run's last newline.
size_t l3_newlines(const Cps& c, size_t i) {
  const size_t n = run(c, i, space);
  for (size_t k = n; k > 0; --k)
    if (newline(c, i + k - 1)) return k;
  return 0;
}

const std::vector<Alternative>& alternatives(PreTokenizer p) {
  static const std::vector<Alternative> gpt2{gpt2_contraction, gpt2_letters,           gpt2_numbers,
                                             gpt2_other,       spaces_not_before_text, any_spaces};
  static const std::vector<Alternative> llama3{l3_contraction, l3_letters,  l3_numbers,
                                               l3_other,       l3_newlines, spaces_not_before_text,
                                               any_spaces};
  static const std::vector<Alternative> qwen2{l3_contraction, l3_letters,  qwen2_number,
                                              l3_other,       l3_newlines, spaces_not_before_text,
                                              any_spaces};
  switch (p) {
  case PreTokenizer::Llama3:
    return llama3;
  case PreTokenizer::Qwen2:
    return qwen2;
  default:
    return gpt2;
  }
}

} // namespace

PreTokenizer pre_tokenizer_from_name(const std::string& name) {
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3" || name == "smaug-bpe")
    return PreTokenizer::Llama3;
  if (name == "qwen2" || name == "qwen35" || name == "deepseek-r1-qwen") return PreTokenizer::Qwen2;
  return PreTokenizer::Gpt2;
}

const char* pre_tokenizer_name(PreTokenizer p) {
  switch (p) {
  case PreTokenizer::Llama3:
    return "llama3";
  case PreTokenizer::Qwen2:
    return "qwen2";
  default:
    return "gpt2";
  }
}

std::vector<std::string> pretokenize(std::string_view text, PreTokenizer p) {
  const Utf8Text t = decode_utf8(text);
  const std::vector<Alternative>& alts = alternatives(p);
  std::vector<std::string> words;
  for (size_t i = 0; i < t.cps.size();) {
    size_t n = 0;
    for (Alternative a : alts)
      if ((n = a(t.cps, i)) > 0) break;
    if (n == 0) n = 1; // unreachable for these expressions; keeps progress on any input
    words.emplace_back(text.substr(t.offsets[i], t.offsets[i + n] - t.offsets[i]));
    i += n;
  }
  return words;
}

} // namespace tg::llm
