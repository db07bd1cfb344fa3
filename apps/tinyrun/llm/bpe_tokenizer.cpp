// Byte-level BPE; see bpe_tokenizer.hpp.
#include "bpe_tokenizer.hpp"

#include <array>
#include <queue>

#include "tg/error.hpp"
#include "unicode.hpp"

namespace tg::llm {

namespace {

// bytes_to_unicode of GPT-2: printable Latin-1 bytes map to themselves, the rest to 256+.
const std::array<uint32_t, 256>& byte_to_cp() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

const std::unordered_map<uint32_t, uint8_t>& cp_to_byte() {
  static const std::unordered_map<uint32_t, uint8_t> m = [] {
    std::unordered_map<uint32_t, uint8_t> r;
    for (uint32_t b = 0; b < 256; ++b) r[byte_to_cp()[b]] = static_cast<uint8_t>(b);
    return r;
  }();
  return m;
}

} // namespace

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) out += encode_utf8(byte_to_cp()[b]);
  return out;
}

std::string byte_level_decode(std::string_view text) {
  const Utf8Text t = decode_utf8(text);
  std::string out;
  for (size_t i = 0; i < t.cps.size(); ++i) {
    auto it = cp_to_byte().find(t.cps[i]);
    if (it != cp_to_byte().end())
      out += static_cast<char>(it->second);
    else
      out += text.substr(t.offsets[i], t.offsets[i + 1] - t.offsets[i]);
  }
  return out;
}

BpeTokenizer::BpeTokenizer(std::vector<std::string> tokens, const std::vector<std::string>& merges,
                           std::vector<TokenKind> kinds, const std::string& pre_name)
    : pre_(pre_tokenizer_from_name(pre_name)) {
  model = "gpt2";
  pre = pre_tokenizer_name(pre_);
  ignore_merges_ = pre_ == PreTokenizer::Llama3;
  set_vocab(std::move(tokens), std::move(kinds));
  ranks_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) ranks_.emplace(merges[i], static_cast<int>(i));
  finish_setup();
}

int BpeTokenizer::rank(std::string_view l, std::string_view r) const {
  std::string key;
  key.reserve(l.size() + r.size() + 1);
  key.append(l).append(" ").append(r);
  auto it = ranks_.find(key);
  return it == ranks_.end() ? -1 : it->second;
}

std::string BpeTokenizer::piece(int32_t id, bool special) const {
  const std::string& t = token_text(id);
  switch (kind(id)) {
  case TokenKind::Control:
    return special ? t : "";
  case TokenKind::UserDefined:
    return t;
  default:
    return byte_level_decode(t);
  }
}

void BpeTokenizer::encode_word(const std::string& word, std::vector<int32_t>& out) const {
  if (ignore_merges_)
    if (const int32_t id = find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  const Utf8Text t = decode_utf8(word);
  struct Symbol {
    int prev, next;
    size_t at, n;
  };
  std::vector<Symbol> sym;
  for (size_t i = 0; i < t.cps.size(); ++i)
    sym.push_back({static_cast<int>(i) - 1, i + 1 == t.cps.size() ? -1 : static_cast<int>(i) + 1,
                   t.offsets[i], t.offsets[i + 1] - t.offsets[i]});
  struct Bigram {
    int left, right, rank;
    size_t size;
  };
  auto worse = [](const Bigram& a, const Bigram& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  auto text = [&](int i) {
    return std::string_view(word.data() + sym[static_cast<size_t>(i)].at,
                            sym[static_cast<size_t>(i)].n);
  };
  auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const int rk = rank(text(l), text(r));
    if (rk < 0) return;
    queue.push({l, r, rk, sym[static_cast<size_t>(l)].n + sym[static_cast<size_t>(r)].n});
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
  for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[static_cast<size_t>(i)].next) {
    const std::string_view s = text(i);
    if (const int32_t id = find(s); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : s) // a symbol outside the vocabulary: its bytes' tokens, where they exist
      if (const int32_t id = find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
  }
}

void BpeTokenizer::encode_text(std::string text, bool /*first*/, std::vector<int32_t>& out) const {
  for (const std::string& w : pretokenize(text, pre_)) encode_word(byte_level_encode(w), out);
}

} // namespace tg::llm
