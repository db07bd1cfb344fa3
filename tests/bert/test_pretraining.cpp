// The BERT pretraining model (apps/tinyrun/bert_model.hpp) against Hugging Face's
// BertForPreTraining in PyTorch on the same weights (scripts/bert_reference.py fill(): a
// formula, so no weights file is needed): MLM and NSP logits, the MLPerf loss, the global
// gradient norm, and one step (clip to norm 1, LAMB in two groups) compared by every
// parameter's sum and first values and the loss after it (tests/bert/pretraining_reference.json).
#include <doctest/doctest.h>

#include <cmath>

#include "bert_model.hpp"
#include "bert_test_util.hpp"
#include "tg/optim.hpp"

using namespace bert_test;
using tg::Tensor;

namespace {

// A gradient whose absolute sum is below this is rounding noise on both sides.
constexpr double kRoundingOnly = 1e-8;

double phase(const std::string& name) {
  int64_t s = 0;
  for (unsigned char c : name) s += c;
  return static_cast<double>(s % 1000) / 100.0;
}

// scripts/bert_reference.py fill().
void fill(tinyrun::BertForPreTraining& m) {
  for (auto [name, p] : m.named_state()) {
    if (!p.requires_grad()) continue;
    std::vector<float> v(static_cast<size_t>(p.numel()));
    for (size_t i = 0; i < v.size(); ++i) {
      double x = 0.05 * std::sin(0.37 * static_cast<double>(i) + phase(name));
      if (name.find("LayerNorm.weight") != std::string::npos) x += 1;
      v[i] = static_cast<float>(x);
    }
    p.assign(Tensor::from_vector(v, p.shape())).realize();
  }
}

Tensor ints(const boost::json::value& rows) {
  std::vector<int32_t> v;
  int64_t r = 0, c = 0;
  for (const auto& row : rows.as_array()) {
    ++r;
    c = static_cast<int64_t>(row.as_array().size());
    for (const auto& x : row.as_array()) v.push_back(static_cast<int32_t>(x.as_int64()));
  }
  return Tensor::from_vector(v, tg::Shape{r, c});
}

Tensor floats(const boost::json::value& rows) {
  std::vector<float> v;
  int64_t r = 0, c = 0;
  for (const auto& row : rows.as_array()) {
    ++r;
    c = static_cast<int64_t>(row.as_array().size());
    for (const auto& x : row.as_array()) v.push_back(static_cast<float>(num(x)));
  }
  return Tensor::from_vector(v, tg::Shape{r, c});
}

} // namespace

TEST_SUITE("bert.pretraining") {

  TEST_CASE("a 2-layer BERT's MLM logits, loss and one LAMB step match PyTorch") {
    const boost::json::value ref = reference("pretraining_reference.json");
    const auto& cfg = ref.at("config").as_object();
    tinyrun::BertConfig c;
    c.vocab_size = cfg.at("vocab_size").as_int64();
    c.hidden_size = cfg.at("hidden_size").as_int64();
    c.num_hidden_layers = cfg.at("num_hidden_layers").as_int64();
    c.num_attention_heads = cfg.at("num_attention_heads").as_int64();
    c.intermediate_size = cfg.at("intermediate_size").as_int64();
    c.max_position_embeddings = cfg.at("max_position_embeddings").as_int64();
    tinyrun::BertForPreTraining m(c, 0.0);
    fill(m);
    const auto& in = ref.at("inputs");
    const Tensor ids = ints(in.at("input_ids")), types = ints(in.at("token_type_ids"));
    const Tensor mask = ints(in.at("attention_mask")), pos = ints(in.at("masked_positions"));
    const Tensor labels = ints(in.at("masked_lm_ids")), nsp = ints(in.at("next_sentence_labels"));
    const Tensor weights = floats(in.at("masked_lm_weights"));

    const tinyrun::PretrainingOutput out = m(ids, types, mask, pos);
    auto losses = m.loss(out, labels, weights, nsp);
    // Backward before anything is read: the gradients then see the unrealized graph.
    losses[0].backward();
    const std::vector<float> mlm = out.mlm_logits.to_vector<float>();
    double worst = 0;
    size_t k = 0;
    for (const auto& b : ref.at("mlm_logits").as_array())
      for (const auto& row : b.as_array())
        for (const auto& x : row.as_array()) worst = std::max(worst, std::abs(mlm[k++] - num(x)));
    REQUIRE(k == mlm.size());
    MESSAGE("MLM logits: largest difference from PyTorch " << worst);
    CHECK(worst < 1e-4);
    const std::vector<float> ns = out.nsp_logits.to_vector<float>();
    k = 0;
    for (const auto& row : ref.at("nsp_logits").as_array())
      for (const auto& x : row.as_array()) CHECK(ns[k++] == doctest::Approx(num(x)).epsilon(1e-4));
    CHECK(losses[1].item<float>() == doctest::Approx(num(ref.at("mlm_loss"))).epsilon(1e-5));
    CHECK(losses[2].item<float>() == doctest::Approx(num(ref.at("nsp_loss"))).epsilon(1e-5));
    CHECK(losses[0].item<float>() == doctest::Approx(num(ref.at("loss"))).epsilon(1e-5));

    // One step: backward, clip to global norm 1, LAMB (weight decay off for biases and norms).
    const auto& o = ref.at("optimizer").as_object();
    std::vector<Tensor> wd, no_wd;
    double sq = 0;
    for (auto [name, p] : m.named_state()) {
      if (!p.requires_grad()) continue;
      sq += static_cast<double>(p.grad().square().sum().item<float>());
      const bool plain =
          name.find("bias") != std::string::npos || name.find("LayerNorm") != std::string::npos;
      (plain ? no_wd : wd).push_back(p);
    }
    const double norm = std::sqrt(sq);
    CHECK(norm == doctest::Approx(num(ref.at("grad_norm"))).epsilon(1e-4));
    // Every gradient: its absolute sum within 1e-4 relative, its sum and first values within
    // 1e-4 of that scale.
    const auto grads_state = m.get_state_dict();
    double worst_grad = 0;
    for (const auto& [name, want] : ref.at("grads").as_object()) {
      INFO(std::string(name));
      const Tensor g = grads_state.at(std::string(name)).grad();
      const double scale = num(want.at("abs_sum"));
      // The key biases shift every score of a query equally, which softmax cancels: their
      // gradient is zero up to rounding (abs sum ~1e-10 on both sides), nothing to compare.
      if (scale < kRoundingOnly) continue;
      CHECK(static_cast<double>(g.abs().sum().item<float>()) ==
            doctest::Approx(scale).epsilon(1e-4));
      const double sum = static_cast<double>(g.cast(tg::dtypes::float64).sum().item<double>());
      worst_grad = std::max(worst_grad, std::abs(sum - num(want.at("sum"))) / scale);
      const std::vector<float> first =
          g.flatten().shrink({{0, std::min<int64_t>(4, g.numel())}}).to_vector<float>();
      for (size_t i = 0; i < first.size(); ++i)
        worst_grad =
            std::max(worst_grad, std::abs(first[i] - num(want.at("first").as_array()[i])) / scale);
    }
    MESSAGE("gradients: largest difference from PyTorch relative to the absolute sum "
            << worst_grad);
    CHECK(worst_grad < 1e-4);
    for (auto [name, p] : m.named_state())
      if (p.requires_grad() && norm > 1) p.set_grad((p.grad() / norm).contiguous());
    tg::optim::LAMB a(wd, num(o.at("lr")), 0.9, 0.999, num(o.at("eps")), num(o.at("weight_decay")));
    tg::optim::LAMB b(no_wd, num(o.at("lr")), 0.9, 0.999, num(o.at("eps")), 0.0);
    // Both groups in one realize, as `tinyrun bert train` steps: the gradients are lazy, and
    // realized one group after the other, the second group's would read the first's new weights.
    std::vector<Tensor> all = a.schedule_step();
    for (const Tensor& t : b.schedule_step()) all.push_back(t);
    Tensor::realize_all(all);
    const auto state = m.get_state_dict();
    int checked = 0;
    for (const auto& [name, want] : ref.at("after_step").as_object()) {
      INFO(std::string(name));
      ++checked;
      // LAMB scales every update to the parameter's norm, so a rounding-only gradient (the key
      // biases, above) still moves the bias a full step in a direction that is noise.
      if (num(ref.at("grads").at(name).at("abs_sum")) < kRoundingOnly) continue;
      const Tensor& p = state.at(std::string(name));
      const double sum = static_cast<double>(p.cast(tg::dtypes::float64).sum().item<double>());
      CHECK(sum == doctest::Approx(num(want.at("sum"))).epsilon(1e-4).scale(1.0));
      const std::vector<float> first =
          p.flatten().shrink({{0, std::min<int64_t>(4, p.numel())}}).to_vector<float>();
      for (size_t i = 0; i < first.size(); ++i)
        CHECK(first[i] ==
              doctest::Approx(num(want.at("first").as_array()[i])).epsilon(1e-5).scale(1e-3));
    }
    CHECK(checked == static_cast<int>(m.get_parameters().size()));
    tg::Train eval(false);
    const auto after = m.loss(m(ids, types, mask, pos), labels, weights, nsp);
    CHECK(after[0].item<float>() == doctest::Approx(num(ref.at("loss_after_step"))).epsilon(1e-4));
  }
}
