// stories260K (a trained llama of the data folder): greedy decoding from BOS reproduces the
// reference's 256 tokens exactly and its step-0 logits within 1e-4, from the GGUF file and from
// the Hugging Face folder (safetensors, rotate_half Q/K, NeoX RoPE); the same model quantized by
// our quantizer to Q8_0 and Q4_0 stays close to the F32 logits, whether a prompt's weights are
// converted once per chunk or inside its matmuls; one jitted decode graph serves every position.
#include <doctest/doctest.h>

#include <filesystem>
#include <tuple>

#include "data/torch_writer.hpp"
#include "llm/model_files.hpp"
#include "llm/transformer.hpp"
#include "llm/weights.hpp"
#include "llm_test_util.hpp"
#include "tg/runner_cache.hpp"
#include "tg/safetensors.hpp"

using namespace tg;
using namespace tg::llm;
using namespace llm_test;
namespace fs = std::filesystem;

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

  TEST_CASE("Hugging Face folder with pytorch_model.bin: the same tokens and logits") {
    const auto hf = model_file("stories260K-hf");
    const auto ref_path = model_file("stories260K.greedy_reference.json");
    if (!hf || !ref_path) {
      MESSAGE("skipped: models/stories260K-hf not found (see ../shared/data/README.md)");
      return;
    }
    // The folder's safetensors rewritten as the PyTorch checkpoint older uploads ship.
    const fs::path dir = fs::temp_directory_path() / "tg_test_llm_torch_bin";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(*hf / "config.json", dir / "config.json");
    std::vector<torch_writer::Tensor> tensors;
    for (const auto& [name, t] : safe_load(*hf / "model.safetensors").tensors) {
      REQUIRE(t.dtype() == dtypes::float32);
      tensors.push_back(torch_writer::f32(name, std::to_string(tensors.size()),
                                          t.to_vector<float>(), std::vector<int64_t>(t.shape())));
    }
    torch_writer::write_file((dir / "pytorch_model.bin").string(),
                             torch_writer::checkpoint(tensors));
    const GreedyReference ref = read_reference(*ref_path);
    const Run r = run_greedy(dir, ref.generated.size());
    const double err = max_abs_diff(r.logits0, ref.logits0);
    MESSAGE("HF pytorch_model.bin step-0 logits: max |diff| = " << err);
    CHECK(err <= 1e-4);
    CHECK(r.ids == ref.generated);
    fs::remove_all(dir);
  }
}

TEST_SUITE("llm.quantized") {
  TEST_CASE("stories260K quantized by our quantizer to Q8_0 and Q4_0 stays close to F32") {
    const auto gguf = model_file("stories260K.gguf");
    const auto ref_path = model_file("stories260K.greedy_reference.json");
    if (!gguf || !ref_path) {
      MESSAGE("skipped: models/stories260K.gguf or its greedy reference not found");
      return;
    }
    const GreedyReference ref = read_reference(*ref_path);
    const auto dir = fixture_dir();
    // The error is the quantization's: llama.cpp on the same Q8_0 file is further from F32
    // (it also quantizes the activations). Measured here: Q8_0 0.146, Q4_0 2.20 (max |logit
    // difference| at step 0, logits spanning about 15, a 260K-parameter model), and with int8
    // activations (a CPU with vpdpbusd) 0.181 and 2.08; the bounds add room for float summation
    // order only.
    for (const auto& [type, bound, agree] :
         {std::tuple{GgmlType::Q8_0, 0.25, 32}, std::tuple{GgmlType::Q4_0, 2.5, 8}}) {
      CAPTURE(ggml_type_name(type));
      const auto q = dir / ("stories260K." + std::string(ggml_type_name(type)) + ".gguf");
      QuantizeReport r;
      write_atomically(q, [&](const std::filesystem::path& tmp) {
        r = quantize_model(*gguf, tmp, type, false);
      });
      CHECK(r.quantized > 0);
      const Model m = load_model(q);
      CHECK(m.at("blk.0.attn_q.weight").type == type);
      CHECK(m.at("blk.0.ffn_down.weight").type ==
            GgmlType::F16); // rows of 172: llama.cpp's fallback
      CHECK(m.at("blk.0.attn_q.weight").data.dtype() == dtypes::uint8); // stays quantized
      Transformer t(m, 512);
      Session s(t, {16});
      const auto [l0, ids] = greedy(s, {1}, 64);
      const double err = max_abs_diff(l0, ref.logits0);
      size_t same = 0;
      while (same < ids.size() && ids[same] == ref.generated[same]) ++same;
      MESSAGE(ggml_type_name(type) << ": step-0 logits max |diff| vs F32 = " << err
                                   << ", greedy tokens equal to F32's for the first " << same);
      CHECK(err <= bound);
      CHECK(argmax(l0) == ref.generated[0]);
      CHECK(same >= static_cast<size_t>(agree));

      // Where the CPU has vpdpbusd, the matmuls multiply int8-quantized activations
      // (tg/ggml_int8.hpp, as llama.cpp does). The same weights read through the float32
      // dequantization instead (no repacked words) are what the exactness checks below compare;
      // the int8 path stays within int8_bound of them. Measured at step 0: Q8_0 0.131, Q4_0 0.131.
      // A layer's q, k and v (gate and up) share one int8 matvec at decode (Model::groups).
      Model m_float = m;
      bool int8 = m.groups.count("blk.0.attn_qkv") && m.groups.count("blk.0.ffn_gate_up");
      for (auto& [name, w] : m_float.weights) {
        int8 |= w.dot_words.has_value();
        w.dot_words.reset();
      }
      m_float.groups.clear();
      CHECK(int8 == renderer_caps(m.at("blk.0.attn_q.weight").data.device()).has_dot4);
      constexpr double int8_bound = 0.3;
      Transformer t_float(m_float, 512);
      std::vector<float> l_float = l0;
      std::vector<int32_t> ids_float = ids;
      if (int8) {
        Session s_float(t_float, {16});
        std::tie(l_float, ids_float) = greedy(s_float, {1}, 64);
        const double d = max_abs_diff(l0, l_float);
        MESSAGE(ggml_type_name(type) << ": int8 activations vs float32 dequantization: " << d);
        CHECK(d <= int8_bound);
        CHECK(argmax(l0) == argmax(l_float));
      }

      // The in-graph dequantization is exact: the same weights dequantized on the host into an
      // F32 file give the same logits.
      const auto f = dir / ("stories260K." + std::string(ggml_type_name(type)) + ".as_f32.gguf");
      write_atomically(f, [&](const std::filesystem::path& tmp) {
        (void)quantize_model(q, tmp, GgmlType::F32, false);
      });
      const Model mf = load_model(f);
      CHECK(mf.at("blk.0.attn_q.weight").type == GgmlType::F32);
      Transformer tf(mf, 512);
      Session sf(tf, {16});
      const auto [lf, idsf] = greedy(sf, {1}, 64);
      const double exact = max_abs_diff(l_float, lf);
      MESSAGE(ggml_type_name(type) << ": vs the host-dequantized F32 model: " << exact);
      CHECK(exact <= 1e-5);
      CHECK(idsf == ids_float);

      // A prompt of 100 tokens: through one 128-token chunk every weight but the F32 norms is
      // converted to float32 once before its matmul; through 16-token chunks the conversion is
      // fused into the matmuls. Both compute the same products.
      std::vector<int32_t> prompt(ref.generated.begin(), ref.generated.begin() + 100);
      std::vector<float> wide, narrow;
      {
        Session sw(t_float, {128});
        wide = sw.feed(prompt);
      }
      {
        Session sn(t_float, {16});
        narrow = sn.feed(prompt);
      }
      const double chunked = max_abs_diff(wide, narrow);
      MESSAGE(ggml_type_name(type) << ": 100-token prompt, converted once vs fused: " << chunked);
      CHECK(chunked <= 1e-4);
      CHECK(argmax(wide) == argmax(narrow));
      if (int8) { // one token at a time: every matmul through the int8 path
        Session sn(t, {});
        const std::vector<float> narrow_int8 = sn.feed(prompt);
        const double d = max_abs_diff(wide, narrow_int8);
        MESSAGE(ggml_type_name(type) << ": 100-token prompt, int8 activations: " << d);
        CHECK(d <= int8_bound);
        CHECK(argmax(wide) == argmax(narrow_int8));
      }
    }
  }
}
