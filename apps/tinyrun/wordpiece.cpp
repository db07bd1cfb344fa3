#include "wordpiece.hpp"

#include "text_file.hpp"
#include "tg/checked.hpp"
#include "tg/error.hpp"
#include "wordpiece_unicode.hpp"

namespace tinyrun {

namespace uni = wordpiece_unicode;
using tg::Error;

namespace {

constexpr size_t kMaxCharsPerWord = 100;
const char* const kSpecials[] = {"[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]"};

} // namespace

WordPieceVocab parse_wordpiece_vocab(std::string_view text, const std::string& origin) {
  if (text.size() > kWordPieceMaxBytes)
    tg::throw_parse_error(origin, "size", std::to_string(text.size()) + " bytes",
                          "larger than a vocabulary may be (" + std::to_string(kWordPieceMaxBytes) +
                              " bytes)");
  if (text.empty())
    tg::throw_parse_error(origin, "size", "0 bytes", "empty: a vocab.txt holds one token a line");
  WordPieceVocab v;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl + 1;
    const uint64_t id = v.tokens.size();
    if (id >= kWordPieceMaxTokens)
      tg::throw_parse_error(origin, "token count", "more than " + std::to_string(id),
                            "a vocabulary holds at most 2^24 tokens");
    uni::decode_utf8(line, origin + ": line " + std::to_string(id + 1)); // validates
    v.tokens.emplace_back(line);
    v.ids[v.tokens.back()] = static_cast<int32_t>(id);
  }
  auto need = [&](const char* tok, int32_t& slot) {
    auto it = v.ids.find(tok);
    if (it == v.ids.end())
      tg::throw_parse_error(origin, "special tokens", tok,
                            "missing: a BERT vocabulary holds [PAD], [UNK], [CLS] and [SEP]");
    slot = it->second;
  };
  need("[PAD]", v.pad);
  need("[UNK]", v.unk);
  need("[CLS]", v.cls);
  need("[SEP]", v.sep);
  if (auto it = v.ids.find("[MASK]"); it != v.ids.end()) v.mask = it->second;
  return v;
}

WordPieceVocab read_wordpiece_vocab(const std::filesystem::path& path) {
  const std::string text = read_text_file(path, kWordPieceMaxBytes, "vocabulary");
  return parse_wordpiece_vocab(text, path.string());
}

WordPieceTokenizer::WordPieceTokenizer(WordPieceVocab vocab, bool lower_case)
    : vocab_(std::move(vocab)), lower_case_(lower_case) {}

// Normalization and pre-tokenization of one stretch of text without special tokens.
std::vector<std::vector<uint32_t>>
WordPieceTokenizer::words(const std::vector<uint32_t>& in) const {
  std::vector<uint32_t> t;
  t.reserve(in.size());
  for (uint32_t c : in) {
    if (c == 0 || c == 0xFFFD || uni::is_control(c)) continue;
    if (uni::is_whitespace(c)) {
      t.push_back(' ');
    } else if (uni::is_chinese(c)) {
      t.push_back(' ');
      t.push_back(c);
      t.push_back(' ');
    } else {
      t.push_back(c);
    }
  }
  if (lower_case_) {
    std::vector<uint32_t> d, l;
    for (uint32_t c : t) uni::decompose(c, d);
    for (uint32_t c : d)
      if (!uni::is_nonspacing_mark(c)) uni::to_lower(c, l);
    t = std::move(l);
  }
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint32_t> cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  for (uint32_t c : t) {
    if (uni::is_whitespace(c)) {
      flush();
    } else if (uni::is_punctuation(c)) {
      flush();
      out.push_back({c});
    } else {
      cur.push_back(c);
    }
  }
  flush();
  return out;
}

void WordPieceTokenizer::wordpiece(const std::vector<uint32_t>& word,
                                   std::vector<int32_t>& out) const {
  if (word.size() > kMaxCharsPerWord) {
    out.push_back(vocab_.unk);
    return;
  }
  std::vector<int32_t> pieces;
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (start < end) {
      std::string piece = start > 0 ? "##" : "";
      for (size_t k = start; k < end; ++k) uni::append_utf8(piece, word[k]);
      if (auto it = vocab_.ids.find(piece); it != vocab_.ids.end()) {
        found = it->second;
        break;
      }
      --end;
    }
    if (found < 0) {
      out.push_back(vocab_.unk);
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

std::vector<std::string> WordPieceTokenizer::basic_tokenize(std::string_view text,
                                                            const std::string& origin) const {
  std::vector<std::string> out;
  for (const auto& w : words(uni::decode_utf8(text, origin))) out.push_back(uni::encode_utf8(w));
  return out;
}

std::vector<int32_t> WordPieceTokenizer::tokenize(std::string_view text,
                                                  const std::string& origin) const {
  const std::vector<uint32_t> all = uni::decode_utf8(text, origin);
  std::vector<int32_t> ids;
  // Special tokens written in the text are matched first, on the raw text (Hugging Face's
  // added tokens are not normalized); the stretches between them are tokenized.
  std::vector<uint32_t> stretch;
  auto run = [&] {
    for (const auto& w : words(stretch)) wordpiece(w, ids);
    stretch.clear();
  };
  size_t i = 0;
  while (i < all.size()) {
    bool matched = false;
    if (all[i] == '[') {
      for (const char* sp : kSpecials) {
        const std::string_view s(sp);
        auto it = vocab_.ids.find(std::string(s));
        if (it == vocab_.ids.end() || i + s.size() > all.size()) continue;
        bool eq = true;
        for (size_t k = 0; k < s.size() && eq; ++k)
          eq = all[i + k] == static_cast<uint32_t>(static_cast<unsigned char>(s[k]));
        if (!eq) continue;
        run();
        ids.push_back(it->second);
        i += s.size();
        matched = true;
        break;
      }
    }
    if (!matched) stretch.push_back(all[i++]);
  }
  run();
  return ids;
}

Encoding WordPieceTokenizer::encode(std::string_view text, int64_t max_length, bool truncate,
                                    const std::string& origin) const {
  if (max_length < 2) throw Error("WordPiece: max_length must be at least 2 ([CLS] and [SEP])");
  std::vector<int32_t> body = tokenize(text, origin);
  Encoding e;
  e.untruncated = static_cast<int64_t>(body.size()) + 2;
  if (e.untruncated > max_length) {
    if (!truncate)
      throw Error(origin + " is " + std::to_string(e.untruncated) +
                  " tokens long ([CLS] and [SEP] included) but the model takes at most " +
                  std::to_string(max_length) +
                  "; shorten it or let it be truncated (--truncate 1)");
    body.resize(static_cast<size_t>(max_length - 2));
  }
  e.ids.push_back(vocab_.cls);
  e.ids.insert(e.ids.end(), body.begin(), body.end());
  e.ids.push_back(vocab_.sep);
  return e;
}

} // namespace tinyrun
