// Sampling (llm/sampler.hpp) and chat templates (llm/chat_template.hpp): temperature 0 is the
// first maximum, a seed reproduces a run, top-k 1 and a tiny top-p are greedy, min-p and the
// repetition penalty change the draw as llama.cpp's do; the three template families are
// recognized by their markers and render the prompt their models were trained on, an unknown
// one falls back to ChatML; a Hugging Face tokenizer.json gives the same ids as the GGUF
// metadata it was written from; one jitted decode graph serves every position; a prompt's chunks
// are the cheapest cover of it.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <set>

#include "bpe_fixture.hpp"
#include "llm/chat_template.hpp"
#include "llm/sampler.hpp"
#include "llm/session.hpp"
#include "llm/tokenizer.hpp"
#include "llm/transformer.hpp"
#include "llm/weights.hpp"
#include "llm_test_util.hpp"
#include "tg/error.hpp"
#include "tg/gguf.hpp"
#include "tg/realize.hpp"

using namespace tg;
using namespace tg::llm;

namespace {

std::vector<int32_t> draws(SamplingParams p, const std::vector<float>& logits, int n) {
  Sampler s(p);
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(s.sample(logits, {}));
  return out;
}

const std::vector<float> kLogits{0.1f, 2.0f, 1.9f, -1.0f, 2.0f, 0.5f};

} // namespace

TEST_SUITE("llm.sampling") {
  TEST_CASE("greedy, seeds, top-k, top-p, min-p, repetition penalty") {
    SamplingParams p;
    p.temperature = 0;
    CHECK(draws(p, kLogits, 3) == std::vector<int32_t>{1, 1, 1}); // the first maximum
    p.temperature = 1.0;
    p.top_k = 0;
    p.top_p = 1.0;
    p.min_p = 0;
    p.seed = 42;
    const std::vector<int32_t> a = draws(p, kLogits, 64), b = draws(p, kLogits, 64);
    CHECK(a == b); // a seed reproduces a run
    p.seed = 43;
    CHECK(draws(p, kLogits, 64) != a);
    std::set<int32_t> seen(a.begin(), a.end());
    CHECK(seen.size() >= 4); // temperature 1 draws more than the top
    p.top_k = 1;
    CHECK(draws(p, kLogits, 8) == std::vector<int32_t>(8, 1));
    p.top_k = 3; // 1, 4 and 2 stay
    for (int32_t t : draws(p, kLogits, 64)) CHECK((t == 1 || t == 4 || t == 2));
    p.top_k = 0;
    p.min_p = 0.5; // exp(-1.5) < 0.5: only the tokens within log(2) of the best
    for (int32_t t : draws(p, kLogits, 64)) CHECK((t == 1 || t == 4 || t == 2));
    p.min_p = 0;
    p.top_p = 0.01;
    CHECK(draws(p, kLogits, 8) == std::vector<int32_t>(8, 1));
    SamplingParams g;
    g.temperature = 0;
    g.repeat_penalty = 2.0;
    Sampler s(g);
    const std::vector<int32_t> history{1, 4};
    CHECK(s.sample(kLogits, history) == 2); // 1 and 4 divided by 2: 1.9 wins
    SamplingParams bad;
    bad.top_p = 0;
    CHECK_THROWS_AS(Sampler{bad}, Error);
  }
}

TEST_SUITE("llm.chat") {
  TEST_CASE("templates recognized by their markers render their prompts") {
    const std::vector<ChatMessage> m{
        {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Bye"}};
    const ChatTemplate l3 = detect_chat_template("{{ '<|start_header_id|>' + message['role'] }}");
    CHECK(l3.format == ChatFormat::Llama3);
    CHECK(l3.apply(m) == "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                         "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                         "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
                         "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
                         "<|start_header_id|>assistant<|end_header_id|>\n\n");
    const ChatTemplate cm = detect_chat_template("{% for m in messages %}<|im_start|>{{ m.role }}");
    CHECK(cm.format == ChatFormat::ChatML);
    CHECK(cm.apply({{"user", "Hi"}}) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    const ChatTemplate l2 =
        detect_chat_template("{{ bos_token + '[INST] ' + content + ' [/INST]' }}");
    CHECK(l2.format == ChatFormat::Llama2);
    CHECK(l2.apply(m) ==
          "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello. </s><s>[INST] Bye [/INST]");
    const ChatTemplate unknown = detect_chat_template("{{ messages }}");
    CHECK(!unknown.recognized);
    CHECK(unknown.format == ChatFormat::ChatML);
    CHECK(detect_chat_template("").recognized);
    CHECK_THROWS_AS((void)cm.apply({{"robot", "x"}}), Error);
  }

  TEST_CASE("a Hugging Face tokenizer.json gives the GGUF metadata's ids") {
    const llm_test::BpeVocab v = llm_test::train_bpe(300);
    const auto gguf = Tokenizer::from_gguf(gguf_load(llm_test::bpe_fixture("llama-bpe")).metadata);
    namespace json = boost::json;
    json::object vocab;
    for (size_t i = 0; i + 4 < v.tokens.size(); ++i) vocab[v.tokens[i]] = static_cast<int64_t>(i);
    json::array added;
    for (size_t i = v.tokens.size() - 4; i < v.tokens.size(); ++i)
      added.push_back(json::object{
          {"id", static_cast<int64_t>(i)}, {"content", v.tokens[i]}, {"special", v.types[i] == 3}});
    json::array merges;
    for (const std::string& m : v.merges) merges.emplace_back(m);
    const json::object tj{
        {"model", json::object{{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
        {"added_tokens", added},
        {"pre_tokenizer",
         json::object{
             {"type", "Sequence"},
             {"pretokenizers",
              json::array{json::object{
                  {"type", "Split"},
                  {"pattern",
                   json::object{
                       {"Regex",
                        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                        "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}}}}}}}};
    const auto hf = Tokenizer::from_hf_json(json::serialize(tj), "tokenizer.json");
    CHECK(hf->pre == "llama3");
    for (const std::string t : {"Once upon a time", "Hello  world!!  \n\n  123456 it's OK",
                                "<|im_start|>user\nHi<|im_end|>"})
      CHECK(hf->encode(t, false, true) == gguf->encode(t, false, true));
    CHECK_THROWS_AS((void)Tokenizer::from_hf_json(R"({"model":{"type":"Unigram"}})", "t.json"),
                    Error);
  }

  TEST_CASE("one jitted decode graph serves every position: no kernel compiles after warm-up") {
    const auto p = llm_test::model_file("stories260K.gguf");
    if (!p) {
      MESSAGE("skipped: models/stories260K.gguf not found");
      return;
    }
    const Model m = load_model(*p);
    Transformer t(m, 512);
    Session s(t, {16});
    int32_t tok = 1;
    std::vector<float> l = s.feed(std::span<const int32_t>(&tok, 1));
    for (int i = 0; i < 3; ++i) {
      tok = argmax(l);
      l = s.feed(std::span<const int32_t>(&tok, 1));
    }
    const int64_t compiled = compiled_kernel_count();
    for (int i = 0; i < 100; ++i) {
      tok = argmax(l);
      l = s.feed(std::span<const int32_t>(&tok, 1));
    }
    CHECK(compiled_kernel_count() == compiled);
    CHECK(s.position() == 104);
    CHECK_THROWS_AS(s.rewind(105), Error);
  }

  TEST_CASE("a prompt runs in the cheapest chunks, padding only the last, inside the cache") {
    const std::vector<int64_t> c{256, 128, 16, 1};
    auto plan = [&](int64_t left, int64_t room) {
      std::vector<int64_t> out;
      while (left > 0) {
        const int64_t T = next_prefill_chunk(c, left, room);
        out.push_back(T);
        room -= std::min(T, left);
        left -= std::min(T, left);
      }
      return out;
    };
    CHECK(plan(512, 4096) == std::vector<int64_t>{256, 256});
    CHECK(plan(129, 4096) == std::vector<int64_t>{128, 1});
    CHECK(plan(100, 4096) == std::vector<int64_t>{128});
    CHECK(plan(300, 4096) == std::vector<int64_t>{256, 16, 16, 16});
    CHECK(plan(20, 4096) == std::vector<int64_t>{16, 16});
    CHECK(plan(1, 4096) == std::vector<int64_t>{1});
    CHECK(plan(2, 4096) == std::vector<int64_t>{16});
    // At the cache's end no chunk may reach past it: 100 tokens with 100 positions left.
    CHECK(plan(100, 100) == std::vector<int64_t>{16, 16, 16, 16, 16, 16, 1, 1, 1, 1});
  }

  TEST_CASE("an unsupported architecture is refused naming it and the supported ones") {
    GgufMetadata md;
    md.set("general.architecture", GgufValue::of_string("mamba"));
    CHECK_THROWS_WITH_AS(
        (void)config_from_gguf(md),
        doctest::Contains("'mamba' is not supported (supported: llama, mistral, qwen2, qwen3)"),
        Error);
  }
}
