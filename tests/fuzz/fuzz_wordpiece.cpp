// libFuzzer target: BERT's WordPiece vocabulary parse (apps/tinyrun/wordpiece.hpp
// parse_wordpiece_vocab) on arbitrary bytes, and the tokenizer on arbitrary text. A tg::Error
// is the expected answer to a malformed file or text that is not UTF-8; anything else is a
// finding, as is an accepted vocabulary without its special tokens, or ids outside it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tg/error.hpp"
#include "wordpiece.hpp"

namespace {

// A small uncased vocabulary, so that text inputs reach the piece search.
const tinyrun::WordPieceTokenizer& tokenizer() {
  static const tinyrun::WordPieceTokenizer t(tinyrun::parse_wordpiece_vocab(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nab\n##b\n##a\n,\n!\nè\n中\nhello\n##llo\nhe\n",
      "fuzz.builtin_vocab"));
  return t;
}

void check_ids(const std::vector<int32_t>& ids, int64_t vocab) {
  for (int32_t id : ids)
    if (id < 0 || id >= vocab) std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const tinyrun::WordPieceVocab v = tinyrun::parse_wordpiece_vocab(text, "fuzz.vocab.txt");
    if (v.size() <= 0 || v.pad < 0 || v.unk < 0 || v.cls < 0 || v.sep < 0 ||
        v.ids.size() > v.tokens.size())
      std::abort();
    for (int32_t id : {v.pad, v.unk, v.cls, v.sep})
      if (id >= v.size()) std::abort();
  } catch (const tg::Error&) {
  }
  const tinyrun::WordPieceTokenizer& t = tokenizer();
  try {
    const tinyrun::Encoding e = t.encode(text, 16, true, "fuzz.text");
    if (e.ids.size() < 2 || e.ids.size() > 16 || e.ids.front() != t.vocab().cls ||
        e.ids.back() != t.vocab().sep || e.untruncated < static_cast<int64_t>(e.ids.size()))
      std::abort();
    check_ids(e.ids, t.vocab().size());
    check_ids(t.tokenize(text, "fuzz.text"), t.vocab().size());
  } catch (const tg::Error&) {
  }
  return 0;
}
