// BERT from pytorch_model.bin (tg/torch_checkpoint.hpp through tinyrun::load_bert): the
// all-MiniLM-L6-v2 folder with its weights rewritten as a PyTorch checkpoint (one of them saved
// as a transposed view, as a model whose weight was transposed in place is saved) embeds the
// reference sentences exactly as from model.safetensors.
#include <doctest/doctest.h>

#include <cstring>

#include "bert_embed.hpp"
#include "bert_load.hpp"
#include "bert_test_util.hpp"
#include "data/torch_writer.hpp"
#include "tg/safetensors.hpp"

using namespace bert_test;
namespace tw = torch_writer;

TEST_SUITE("bert.torch_checkpoint") {
  TEST_CASE("all-MiniLM-L6-v2 from pytorch_model.bin embeds as from model.safetensors") {
    const auto dir = minilm_dir();
    if (!dir) {
      MESSAGE("skipped: all-MiniLM-L6-v2 is not in the data cache; " << kFetch);
      return;
    }
    const fs::path out = fs::temp_directory_path() / "tg_test_bert_torch";
    fs::remove_all(out);
    fs::create_directories(out);
    for (const char* f : {"config.json", "vocab.txt", "sentence_bert_config.json"})
      if (fs::exists(*dir / f)) fs::copy_file(*dir / f, out / f);
    if (fs::exists(*dir / "1_Pooling"))
      fs::copy(*dir / "1_Pooling", out / "1_Pooling", fs::copy_options::recursive);

    const tg::SafetensorsFile st = tg::safe_load(*dir / "model.safetensors");
    std::vector<tw::Tensor> tensors;
    const std::string transposed = "encoder.layer.0.attention.self.query.weight";
    for (const auto& [name, t] : st.tensors) {
      if (t.dtype() == tg::dtypes::int64) { // embeddings.position_ids, a buffer
        tw::Tensor x = tw::f32(name, std::to_string(tensors.size()), {}, {});
        x.storage_type = "LongStorage";
        x.bytes = t.to_bytes();
        x.numel = x.bytes.size() / 8;
        const std::vector<int64_t> shape(t.shape());
        x.size = shape;
        x.stride.assign(shape.size(), 1);
        for (size_t i = shape.size(); i-- > 1;) x.stride[i - 1] = x.stride[i] * shape[i];
        tensors.push_back(std::move(x));
        continue;
      }
      REQUIRE(t.dtype() == tg::dtypes::float32);
      const std::vector<float> v = t.to_vector<float>();
      const std::vector<int64_t> shape(t.shape());
      tw::Tensor x = tw::f32(name, std::to_string(tensors.size()), v, shape);
      if (name == transposed) { // the storage holds W^T; the view (out, in) has strides (1, out)
        REQUIRE(shape.size() == 2);
        std::vector<float> wt(v.size());
        for (int64_t i = 0; i < shape[0]; ++i)
          for (int64_t j = 0; j < shape[1]; ++j)
            wt[static_cast<size_t>(j * shape[0] + i)] = v[static_cast<size_t>(i * shape[1] + j)];
        std::memcpy(x.bytes.data(), wt.data(), x.bytes.size());
        x.stride = {1, shape[0]};
      }
      tensors.push_back(std::move(x));
    }
    tw::write_file((out / "pytorch_model.bin").string(), tw::checkpoint(tensors));

    const std::vector<std::string> sentences{"A man is eating food.", "Someone eats a meal.",
                                             "The sky is blue today."};
    const tinyrun::LoadedBert from_st = tinyrun::load_bert(*dir);
    const tinyrun::LoadedBert from_bin = tinyrun::load_bert(out);
    const auto a = tinyrun::embed_sentences(from_st, sentences, true);
    const auto b = tinyrun::embed_sentences(from_bin, sentences, true);
    REQUIRE(a.values.size() == b.values.size());
    double worst = 0;
    for (size_t i = 0; i < a.values.size(); ++i)
      worst = std::max(worst, std::abs(double(a.values[i]) - double(b.values[i])));
    MESSAGE("largest difference from the safetensors embeddings: " << worst);
    CHECK(worst < 1e-6);
    fs::remove_all(out);
  }
}
