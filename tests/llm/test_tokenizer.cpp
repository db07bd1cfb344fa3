// Tokenizers (llm/tokenizer.hpp): the SentencePiece tokenizer of stories260K and byte-level BPE
// with the GPT-2, llama-3 and Qwen2 pre-tokenizers produce llama.cpp's ids for the same text
// (ids computed with llama.cpp's llama-tokenize, written here); decode(encode(text)) gives the
// text back on awkward input (multi-byte UTF-8, emoji, spaces, digits, special tokens); the
// stream decoder only ever emits whole UTF-8 characters.
#include <doctest/doctest.h>

#include "bpe_fixture.hpp"
#include "llm/pretokenize.hpp"
#include "llm/tokenizer.hpp"
#include "llm_test_util.hpp"
#include "tg/gguf.hpp"

using namespace tg;
using namespace tg::llm;
using namespace llm_test;

namespace {

// The prompts whose ids llama.cpp gave (llama-tokenize --ids, special tokens parsed).
const std::vector<std::string>& prompts() {
  static const std::vector<std::string> p{
      "Once upon a time",
      " Lily saw a big, red ball.",
      "Hello  world!!  \n\n  123456 it's OK",
      "Caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80!",
      "<|im_start|>user\nHi<|im_end|>",
      "\t tabs\r\nand CRLF 2024-11-30",
  };
  return p;
}

std::unique_ptr<Tokenizer> tokenizer_of(const std::filesystem::path& p) {
  return Tokenizer::from_gguf(gguf_load(p).metadata);
}

// Our ids for every prompt, as one line per prompt (printed when a table is being made).
void check_ids(const Tokenizer& tok, const std::vector<std::vector<int32_t>>& expected,
               bool add_special) {
  REQUIRE(expected.size() == prompts().size());
  for (size_t i = 0; i < prompts().size(); ++i) {
    CAPTURE(prompts()[i]);
    CHECK(tok.encode(prompts()[i], add_special, true) == expected[i]);
  }
}

// Text that every tokenizer must give back: multi-byte characters, emoji, runs of spaces,
// tabs and newlines, digits, a character outside any vocabulary.
const std::vector<std::string>& awkward() {
  static const std::vector<std::string> t{
      "plain words",
      "  leading and trailing  ",
      "na\xC3\xAFve caf\xC3\xA9 \xC3\xBC\x62\x65r",
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83"
      "\x88",
      "emoji \xF0\x9F\x98\x80\xF0\x9F\x8E\x89\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB",
      "digits 0123456789 3.14159 -42",
      "tabs\tand\nnewlines\r\n\n",
      "\xE2\x88\x80x \xE2\x88\x83y \xF0\x9D\x95\x8F",
  };
  return t;
}

} // namespace

TEST_SUITE("llm.tokenizer") {
  TEST_CASE("SentencePiece (stories260K): llama.cpp's ids and round trips") {
    const auto p = model_file("stories260K.gguf");
    if (!p) {
      MESSAGE("skipped: models/stories260K.gguf not found");
      return;
    }
    const auto tok = tokenizer_of(*p);
    CHECK(tok->model == "llama");
    CHECK(tok->bos == 1);
    CHECK(tok->eos == 2);
    // llama-tokenize -m stories260K.gguf --ids -p PROMPT (BOS added, special tokens parsed).
    const std::vector<std::vector<int32_t>> spm_ids{
        {1, 403, 407, 261, 378},
        {1, 410, 317, 394, 261, 370, 432, 352, 266, 268, 388, 426},
        {1,   346, 306, 414, 410, 263, 304, 341, 443, 443, 410, 410, 13, 13,
         410, 410, 475, 479, 472, 484, 480, 490, 312, 439, 419, 319, 462},
        {1,   410, 457, 412, 431, 485, 410, 233, 154, 168, 233,
         159, 175, 235, 173, 161, 410, 243, 162, 155, 131, 443},
        {1,   410, 504, 506, 288, 98,  356, 295, 413, 506, 505, 425,
         419, 285, 13,  440, 417, 504, 506, 288, 98,  367, 506, 505},
        {1,   410, 12,  259, 412, 430, 419, 16,  13,  412, 264, 410, 457, 461,
         438, 453, 410, 479, 477, 479, 484, 464, 475, 475, 464, 472, 477},
    };
    check_ids(*tok, spm_ids, true);
    for (const std::string& t : awkward()) {
      CAPTURE(t);
      const std::vector<int32_t> ids = tok->encode(t, true, false);
      CHECK(ids.front() == 1);
      CHECK(tok->decode(ids) == t);
    }
  }

  TEST_CASE("byte-level BPE: llama.cpp's ids for each pre-tokenizer, and round trips") {
    // llama-tokenize -m bpe_PRE.gguf --ids --no-bos -p PROMPT on the fixtures of bpe_fixture.hpp.
    const std::map<std::string, std::vector<std::vector<int32_t>>> bpe_ids{
        {"gpt-2",
         {
             {312, 427, 259, 458},
             {413, 456, 259, 438, 44, 426, 437, 46},
             {72, 101, 108, 108, 111, 32,  32, 119, 111, 114, 108, 100, 33,
              33, 434, 10,  10,  32,  410, 54, 286, 262, 32,  79,  75},
             {304, 432, 32, 406, 33},
             {463, 117, 115, 269, 10, 72, 105, 464},
             {9, 457, 13, 10, 318, 32, 67, 82, 76, 70, 411, 45, 294, 45, 300},
         }},
        {"llama-bpe",
         {
             {312, 427, 259, 458},
             {413, 456, 259, 438, 44, 426, 437, 46},
             {72,  101, 108, 108, 111, 32,  32, 119, 111, 114, 108, 100, 33, 33,
              434, 10,  10,  32,  32,  296, 52, 53,  54,  286, 262, 32,  79, 75},
             {304, 432, 32, 406, 33},
             {463, 117, 115, 269, 10, 72, 105, 464},
             {9, 457, 461, 318, 32, 67, 82, 76, 70, 32, 50, 292, 52, 45, 294, 45, 300},
         }},
        {"qwen2",
         {
             {312, 427, 259, 458},
             {413, 456, 259, 438, 44, 426, 437, 46},
             {72, 101, 108, 108, 111, 32, 32, 119, 111, 114, 108, 100, 33, 33, 434,
              10, 10,  32,  32,  49,  50, 51, 52,  53,  54,  286, 262, 32, 79, 75},
             {304, 432, 32, 406, 33},
             {463, 117, 115, 269, 10, 72, 105, 464},
             {9, 457, 461, 318, 32, 67, 82, 76, 70, 32, 50, 48, 50, 52, 45, 49, 49, 45, 51, 48},
         }},
    };
    for (const std::string pre : {"gpt-2", "llama-bpe", "qwen2"}) (void)bpe_fixture(pre);
    for (const std::string pre : {"gpt-2", "llama-bpe", "qwen2"}) {
      CAPTURE(pre);
      const auto tok = tokenizer_of(bpe_fixture(pre));
      check_ids(*tok, bpe_ids.at(pre), false);
      CHECK(tok->model == "gpt2");
      for (const std::string& t : awkward()) {
        CAPTURE(t);
        CHECK(tok->decode(tok->encode(t, false, false)) == t);
      }
      // Special tokens: parsed as one id when asked, as text otherwise.
      const int32_t im_start = tok->find("<|im_start|>");
      REQUIRE(im_start >= 0);
      const std::vector<int32_t> parsed = tok->encode("<|im_start|>user", false, true);
      CHECK(parsed.front() == im_start);
      const std::vector<int32_t> literal = tok->encode("<|im_start|>user", false, false);
      CHECK(literal.front() != im_start);
      CHECK(tok->decode(literal) == "<|im_start|>user");
      CHECK(tok->is_eog(tok->find("<|im_end|>")));
    }
  }

  TEST_CASE("pre-tokenizers split as their regular expressions do") {
    const std::string t = "Hello  world!!  \n\n  123456 it's OK";
    CHECK(pretokenize(t, PreTokenizer::Gpt2) == std::vector<std::string>{"Hello", " ", " world",
                                                                         "!!", "  \n\n ", " 123456",
                                                                         " it", "'s", " OK"});
    CHECK(pretokenize(t, PreTokenizer::Llama3) ==
          std::vector<std::string>{"Hello", " ", " world", "!!", "  \n\n", " ", " ", "123", "456",
                                   " it", "'s", " OK"});
    CHECK(pretokenize("ab12345", PreTokenizer::Qwen2) ==
          std::vector<std::string>{"ab", "1", "2", "3", "4", "5"});
    CHECK(pretokenize("IT'S", PreTokenizer::Llama3) == std::vector<std::string>{"IT", "'S"});
    CHECK(pretokenize("IT'S", PreTokenizer::Gpt2) == std::vector<std::string>{"IT", "'", "S"});
    CHECK(pretokenize("", PreTokenizer::Gpt2).empty());
  }

  TEST_CASE("the stream decoder emits whole UTF-8 characters only") {
    const auto p = model_file("stories260K.gguf");
    if (!p) {
      MESSAGE("skipped: models/stories260K.gguf not found");
      return;
    }
    const auto tok = tokenizer_of(*p);
    // An emoji is four byte-fallback tokens in this 512-token vocabulary.
    const std::string text = "a \xF0\x9F\x98\x80 b \xE6\x97\xA5";
    const std::vector<int32_t> ids = tok->encode(text, true, false);
    StreamDecoder d(*tok, true);
    std::string all;
    for (int32_t id : ids) {
      if (id == tok->bos) continue;
      const std::string part = d.push(id);
      CHECK(utf8_complete_prefix(part) == part.size());
      all += part;
    }
    all += d.flush();
    CHECK(all == text);
    CHECK(utf8_complete_prefix("ab\xF0\x9F") == 2);
    CHECK(utf8_complete_prefix("ab\xF0\x9F\x98\x80") == 6);
    CHECK(utf8_complete_prefix("\xFF") == 1);
  }
}
