#pragma once
// A small byte-level BPE vocabulary trained here, deterministically, on a fixed text (merges
// by pair count, ties by the pair's text), with control and user-defined tokens, written as a
// tiny random llama GGUF per pre-tokenizer. llama.cpp loads the same files, which is how the
// expected ids of test_tokenizer.cpp were computed (docs/LLM.md, "Reference numbers").
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "llm/bpe_tokenizer.hpp"
#include "llm/model_files.hpp"
#include "llm/pretokenize.hpp"
#include "llm_test_util.hpp"
#include "tg/gguf_header.hpp"

namespace llm_test {

inline const std::string& bpe_corpus() {
  static const std::string text = [] {
    const std::string base =
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
        "park. One day, she saw a big, red ball. \"Let's go!\" she said; it's 12345 steps away.\n"
        "The quick brown fox jumps over the lazy dog's 67 bones -- isn't it?  Yes, 2024-11-30.\n\n"
        "Caf\xC3\xA9 cr\xC3\xA8me br\xC3\xBBl\xC3\xA9\x65, na\xC3\xAFve \xC3\xBC\x62\x65r, "
        "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xE3\x81\xAE "
        "\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88, "
        "emoji \xF0\x9F\x98\x80\xF0\x9F\x8E\x89 and tabs\tand   spaces.\r\n";
    std::string t;
    for (int i = 0; i < 4; ++i) t += base;
    return t;
  }();
  return text;
}

struct BpeVocab {
  std::vector<std::string> tokens;
  std::vector<std::string> merges;
  std::vector<int32_t> types;
};

inline BpeVocab train_bpe(int n_merges) {
  BpeVocab v;
  std::map<std::string, int> have;
  auto add = [&](const std::string& t, int32_t type) {
    if (have.count(t)) return;
    have[t] = static_cast<int>(v.tokens.size());
    v.tokens.push_back(t);
    v.types.push_back(type);
  };
  for (int b = 0; b < 256; ++b)
    add(tg::llm::byte_level_encode(std::string(1, static_cast<char>(b))), 1);
  std::vector<std::vector<std::string>> words;
  for (const std::string& w : tg::llm::pretokenize(bpe_corpus(), tg::llm::PreTokenizer::Gpt2)) {
    const std::string e = tg::llm::byte_level_encode(w);
    std::vector<std::string> sym;
    for (size_t i = 0; i < e.size();) {
      const auto c = static_cast<unsigned char>(e[i]);
      const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
      sym.push_back(e.substr(i, n));
      i += n;
    }
    words.push_back(sym);
  }
  for (int m = 0; m < n_merges; ++m) {
    std::map<std::pair<std::string, std::string>, int> counts;
    for (const auto& w : words)
      for (size_t i = 0; i + 1 < w.size(); ++i) ++counts[{w[i], w[i + 1]}];
    if (counts.empty()) break;
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it)
      if (it->second > best->second) best = it; // map order breaks ties by the pair's text
    const auto [l, r] = best->first;
    v.merges.push_back(l + " " + r);
    add(l + r, 1);
    for (auto& w : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == l && w[i + 1] == r) {
          out.push_back(l + r);
          ++i;
        } else {
          out.push_back(w[i]);
        }
      }
      w = std::move(out);
    }
  }
  add("<|endoftext|>", 3);
  add("<|im_start|>", 3);
  add("<|im_end|>", 3);
  add("<|user_tag|>", 4);
  return v;
}

// Writes (once per process) a tiny random llama whose tokenizer is the trained BPE with the
// given GGUF pre-tokenizer name ("gpt-2", "llama-bpe", "qwen2"); returns its path.
inline std::filesystem::path bpe_fixture(const std::string& pre) {
  const std::filesystem::path p = fixture_dir() / ("bpe_" + pre + ".gguf");
  static std::map<std::string, bool> written;
  if (written[pre]) return p;
  const BpeVocab v = train_bpe(300);
  tg::GgufMetadata t;
  t.set("tokenizer.ggml.model", tg::GgufValue::of_string("gpt2"));
  t.set("tokenizer.ggml.pre", tg::GgufValue::of_string(pre));
  t.set("tokenizer.ggml.tokens", tg::GgufValue::of_strings(v.tokens));
  t.set("tokenizer.ggml.token_type", tg::GgufValue::of_i32s(v.types));
  t.set("tokenizer.ggml.merges", tg::GgufValue::of_strings(v.merges));
  const auto eot = static_cast<uint32_t>(v.tokens.size() - 4);
  t.set("tokenizer.ggml.bos_token_id", tg::GgufValue::of_u32(eot));
  t.set("tokenizer.ggml.eos_token_id", tg::GgufValue::of_u32(eot));
  t.set("tokenizer.ggml.add_bos_token", tg::GgufValue::of_bool(false));
  tg::llm::RandomModelSpec s;
  s.dim = 64;
  s.layers = 1;
  s.heads = 4;
  s.ffn = 96;
  s.context = 256;
  s.tokenizer = &t;
  write_atomically(
      p, [&](const std::filesystem::path& tmp) { tg::llm::write_random_model(s, tmp, false); });
  written[pre] = true;
  return p;
}

} // namespace llm_test
