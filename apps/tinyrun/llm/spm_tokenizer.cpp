// SentencePiece-style tokenization; see spm_tokenizer.hpp.
#include "spm_tokenizer.hpp"

#include <cstdio>
#include <queue>

#include "tg/error.hpp"

namespace tg::llm {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81"; // U+2581 LOWER ONE EIGHTH BLOCK

size_t utf8_len(unsigned char c) {
  return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
}

} // namespace

SpmTokenizer::SpmTokenizer(std::vector<std::string> tokens, std::vector<float> scores,
                           std::vector<TokenKind> kinds)
    : scores_(std::move(scores)) {
  model = "llama";
  set_vocab(std::move(tokens), std::move(kinds));
  scores_.resize(tokens_.size(), 0.0f);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    byte_tokens_[b] = find(name);
  }
  add_space_prefix = true;
  finish_setup();
}

std::string SpmTokenizer::piece(int32_t id, bool special) const {
  const std::string& t = token_text(id);
  switch (kind(id)) {
  case TokenKind::Byte: {
    unsigned v = 0;
    if (t.size() == 6 && std::sscanf(t.c_str(), "<0x%02X>", &v) == 1)
      return std::string(1, static_cast<char>(v));
    return t;
  }
  case TokenKind::Control:
    return special ? t : "";
  case TokenKind::Unknown:
    return "\xE2\x96\x85"; // U+2585, as llama.cpp shows an unknown token
  case TokenKind::UserDefined:
    return t;
  default:
    break;
  }
  std::string out;
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, kSpace.size(), kSpace) == 0) {
      out += ' ';
      i += kSpace.size();
    } else {
      out += t[i++];
    }
  }
  return out;
}

void SpmTokenizer::emit(std::string_view p, std::vector<int32_t>& out) const {
  if (const int32_t id = find(p); id >= 0) {
    out.push_back(id);
    return;
  }
  for (unsigned char b : p) {
    const int32_t id = byte_tokens_[b];
    if (id < 0)
      throw Error("the tokenizer has no token for byte " + std::to_string(b) +
                  " and no <0xNN> byte fallback");
    out.push_back(id);
  }
}

void SpmTokenizer::encode_text(std::string text, bool first, std::vector<int32_t>& out) const {
  if (add_space_prefix && first) text.insert(text.begin(), ' ');
  std::string s;
  for (char c : text) {
    if (c == ' ')
      s += kSpace;
    else
      s += c;
  }
  if (s.empty()) return;
  // One symbol per UTF-8 character, linked as a list that merges shrink.
  struct Symbol {
    int prev, next;
    size_t at, n;
  };
  std::vector<Symbol> sym;
  for (size_t at = 0; at < s.size();) {
    const size_t n = std::min(utf8_len(static_cast<unsigned char>(s[at])), s.size() - at);
    const int i = static_cast<int>(sym.size());
    sym.push_back({i - 1, at + n == s.size() ? -1 : i + 1, at, n});
    at += n;
  }
  struct Bigram {
    int left, right;
    float score;
    size_t size;
  };
  // Highest score first; among equal scores the leftmost.
  auto worse = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const std::string_view t(s.data() + sym[static_cast<size_t>(l)].at,
                             sym[static_cast<size_t>(l)].n + sym[static_cast<size_t>(r)].n);
    const int32_t id = find(t);
    if (id < 0) return;
    queue.push({l, r, scores_[static_cast<size_t>(id)], t.size()});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[static_cast<size_t>(b.left)];
    Symbol& r = sym[static_cast<size_t>(b.right)];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue; // outdated
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int i = 0; i != -1; i = sym[static_cast<size_t>(i)].next)
    emit(std::string_view(s.data() + sym[static_cast<size_t>(i)].at, sym[static_cast<size_t>(i)].n),
         out);
}

} // namespace tg::llm
