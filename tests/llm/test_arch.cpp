// One small random model per architecture feature, run by us and by llama.cpp on the same GGUF:
// llama with GQA and llama-3 rope scaling (rope_freqs.weight), qwen2 (qkv biases, NeoX RoPE),
// qwen3 (QK-norm, NeoX RoPE). The logits after a 7-token prompt (one padded prefill chunk, so
// the causal mask is exercised) and after one more decoded token (the KV cache) match
// llama.cpp's, which are written here (computed with llama.cpp's llama_decode, F32 KV cache).
#include <doctest/doctest.h>

#include <filesystem>

#include "llm/model_files.hpp"
#include "llm/transformer.hpp"
#include "llm/weights.hpp"
#include "llm_test_util.hpp"

using namespace tg;
using namespace tg::llm;
using namespace llm_test;

namespace {

struct ArchCase {
  const char* name;
  RandomModelSpec spec;
  int32_t argmax_prompt, argmax_next;            // llama.cpp's
  std::vector<float> logits_prompt, logits_next; // llama.cpp's first 16
};

RandomModelSpec base_spec(const char* arch, uint64_t seed) {
  RandomModelSpec s;
  s.arch = arch;
  s.dim = 64;
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = 2;
  s.ffn = 96;
  s.vocab = 320;
  s.context = 256;
  s.seed = seed;
  s.random_norms = true;
  return s;
}

std::filesystem::path write_fixture(const ArchCase& c) {
  const auto p = fixture_dir() / (std::string("arch_") + c.name + ".gguf");
  write_atomically(
      p, [&](const std::filesystem::path& tmp) { write_random_model(c.spec, tmp, false); });
  return p;
}

const std::vector<int32_t> kPrompt{1, 17, 42, 99, 250, 7, 3};
constexpr int32_t kNext = 123;

std::vector<ArchCase> cases() {
  std::vector<ArchCase> v;
  {
    ArchCase c{"llama_gqa_rope_scaling", base_spec("llama", 11), 0, 0, {}, {}};
    c.spec.llama3_rope_scaling = true;
    c.spec.rope_original_context = 64;
    c.spec.rope_theta = 500000;
    c.argmax_prompt = 297;
    c.argmax_next = 64;
    c.logits_prompt = {0.267000f,  0.748406f,  0.946822f,  1.517032f, -1.633858f, 0.931277f,
                       -0.112732f, 0.641482f,  -0.084595f, 0.390198f, -0.535584f, -1.918418f,
                       -0.066911f, -0.150818f, 0.677526f,  -1.915946f};
    c.logits_next = {-0.343985f, 0.297184f,  1.585320f,  1.403362f, -0.458951f, -0.113495f,
                     -1.036626f, -0.057179f, -0.340283f, 1.062330f, 0.182698f,  -1.429882f,
                     0.390306f,  0.214456f,  0.542495f,  -1.264260f};
    v.push_back(c);
  }
  {
    ArchCase c{"qwen2_bias_neox", base_spec("qwen2", 12), 0, 0, {}, {}};
    c.argmax_prompt = 2;
    c.argmax_next = 118;
    c.logits_prompt = {-1.017326f, -0.795320f, 2.993504f,  -1.705047f, -0.354664f, 0.733395f,
                       -0.402857f, -1.302448f, -0.586050f, 0.456801f,  -0.742390f, 0.076071f,
                       0.861152f,  1.133777f,  0.519362f,  1.387995f};
    c.logits_next = {0.794502f,  -0.859753f, 0.542664f,  -0.184513f, -0.148459f, 0.882470f,
                     -0.744027f, -0.781026f, -1.564144f, -0.370656f, -1.016296f, -0.293322f,
                     1.937071f,  0.525693f,  0.571376f,  0.569744f};
    v.push_back(c);
  }
  {
    ArchCase c{"qwen3_qk_norm_neox", base_spec("qwen3", 13), 0, 0, {}, {}};
    c.argmax_prompt = 48;
    c.argmax_next = 157;
    c.logits_prompt = {-0.562040f, -0.258901f, -0.504974f, -1.180220f, 0.202377f,  1.106780f,
                       -1.326165f, 0.393721f,  0.168095f,  -1.380755f, -0.304091f, 1.229833f,
                       -0.229386f, -1.233253f, 0.150785f,  -0.825876f};
    c.logits_next = {1.774525f,  -0.469588f, -0.710843f, -1.307333f, -0.432968f, 0.366532f,
                     -1.216277f, 0.807948f,  -0.585957f, -0.607673f, -0.902878f, 1.556722f,
                     -0.690672f, 0.030129f,  0.140679f,  -0.056467f};
    v.push_back(c);
  }
  return v;
}

} // namespace

TEST_SUITE("llm.arch") {
  TEST_CASE("random llama / qwen2 / qwen3 models match llama.cpp's logits") {
    for (const ArchCase& c : cases()) {
      CAPTURE(c.name);
      const auto path = write_fixture(c);
      const Model m = load_model(path);
      Transformer t(m, 64);
      Session s(t, {16});
      const std::vector<float> a = s.feed(kPrompt);
      const std::vector<float> b = s.feed(std::span<const int32_t>(&kNext, 1));
      REQUIRE(c.logits_prompt.size() == 16);
      CHECK(argmax(a) == c.argmax_prompt);
      CHECK(argmax(b) == c.argmax_next);
      const std::vector<float> a16(a.begin(), a.begin() + 16), b16(b.begin(), b.begin() + 16);
      const double ea = max_abs_diff(a16, c.logits_prompt), eb = max_abs_diff(b16, c.logits_next);
      MESSAGE(std::string(c.name) << ": max |ours - llama.cpp| after the prompt " << ea
                                  << ", after one more token " << eb);
      CHECK(ea <= 1e-4);
      CHECK(eb <= 1e-4);
    }
  }
}
