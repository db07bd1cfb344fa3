// The parts every tokenizer shares: vocabulary lookup, the split on special tokens (llama.cpp's
// tokenizer_st_partition), decoding and streaming; see tokenizer.hpp.
#include "tokenizer.hpp"

#include <algorithm>

#include "tg/error.hpp"

namespace tg::llm {

void Tokenizer::set_vocab(std::vector<std::string> tokens, std::vector<TokenKind> kinds) {
  tokens_ = std::move(tokens);
  kinds_ = std::move(kinds);
  kinds_.resize(tokens_.size(), TokenKind::Normal);
  index_.clear();
  index_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i)
    index_.emplace(tokens_[i], static_cast<int32_t>(i)); // the first of duplicates wins
}

void Tokenizer::finish_setup() {
  specials_.clear();
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const TokenKind k = kinds_[i];
    if ((k == TokenKind::Control || k == TokenKind::UserDefined || k == TokenKind::Unknown) &&
        !tokens_[i].empty())
      specials_.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(specials_.begin(), specials_.end(), [&](int32_t a, int32_t b) {
    return tokens_[static_cast<size_t>(a)].size() > tokens_[static_cast<size_t>(b)].size();
  });
  if (eos >= 0 && !is_eog(eos)) eog.push_back(eos);
  for (const char* t : {"<|eot_id|>", "<|im_end|>", "<|end_of_text|>", "<|endoftext|>",
                        "<end_of_turn>", "<|end|>", "<|eom_id|>"})
    if (const int32_t id = find(t); id >= 0 && !is_eog(id)) eog.push_back(id);
}

const std::string& Tokenizer::token_text(int32_t id) const {
  if (id < 0 || id >= vocab_size())
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                std::to_string(vocab_size() - 1) + ")");
  return tokens_[static_cast<size_t>(id)];
}

TokenKind Tokenizer::kind(int32_t id) const {
  (void)token_text(id);
  return kinds_[static_cast<size_t>(id)];
}

int32_t Tokenizer::find(std::string_view text) const {
  auto it = index_.find(std::string(text));
  return it == index_.end() ? -1 : it->second;
}

bool Tokenizer::is_eog(int32_t id) const {
  return std::find(eog.begin(), eog.end(), id) != eog.end();
}

std::vector<int32_t> Tokenizer::encode(const std::string& text, bool add_special,
                                       bool parse_special) const {
  // Fragments: text pieces and special tokens, split longest special token first.
  struct Fragment {
    int32_t token = -1; // -1: text
    std::string text;
  };
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({-1, text});
  for (int32_t sp : specials_) {
    const TokenKind k = kinds_[static_cast<size_t>(sp)];
    if (!parse_special && (k == TokenKind::Control || k == TokenKind::Unknown)) continue;
    const std::string& s = tokens_[static_cast<size_t>(sp)];
    std::vector<Fragment> next;
    for (Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(std::move(f));
        continue;
      }
      size_t from = 0;
      for (size_t at; (at = f.text.find(s, from)) != std::string::npos; from = at + s.size()) {
        if (at > from) next.push_back({-1, f.text.substr(from, at - from)});
        next.push_back({sp, {}});
      }
      if (from < f.text.size()) next.push_back({-1, f.text.substr(from)});
    }
    frags = std::move(next);
  }

  std::vector<int32_t> out;
  if (add_special && add_bos && bos >= 0) out.push_back(bos);
  bool prev_special = true;
  for (Fragment& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      prev_special = true;
      continue;
    }
    encode_text(std::move(f.text), prev_special, out);
    prev_special = false;
  }
  if (add_special && add_eos && eos >= 0) out.push_back(eos);
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool special) const {
  StreamDecoder d(*this, add_space_prefix && !ids.empty() && ids.front() == bos);
  std::string out;
  for (int32_t id : ids) {
    if (!special && id == bos) continue;
    out += d.push(id);
  }
  return out + d.flush();
}

size_t utf8_complete_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + n > s.size()) {
      // An incomplete character at the end is held back only if its bytes so far are valid.
      bool ok = true;
      for (size_t k = i + 1; k < s.size(); ++k)
        ok &= (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80;
      return ok ? i : s.size();
    }
    i += n;
  }
  return s.size();
}

std::string StreamDecoder::push(int32_t id) {
  std::string p = tok_.piece(id);
  if (strip_ && !p.empty()) {
    if (p.front() == ' ') p.erase(0, 1);
    strip_ = false;
  }
  pending_ += p;
  const size_t n = utf8_complete_prefix(pending_);
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  for (size_t i = 0; i < pending_.size(); ++i) out += "\xEF\xBF\xBD"; // U+FFFD per stray byte
  pending_.clear();
  return out;
}

} // namespace tg::llm
