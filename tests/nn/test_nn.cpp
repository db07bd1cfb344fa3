// tg::nn: named state, load_state_dict (strict and not), and the layers against the Tensor
// functions they wrap; the data folder's trained MNIST MLP loaded into an equivalent model
// reproduces its reference logits.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include "nn/nn_test_util.hpp"
#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/nn.hpp"
#include "tg/safetensors.hpp"

namespace fs = std::filesystem;
using namespace tg;
using nn_test::error_of;

namespace {

// The dfdx MLP as PyTorch names it: 0.0, 1.0, 2.0 are Linear+ReLU blocks, 3 the last Linear.
struct Block : nn::Module {
  Block(int64_t in, int64_t out) : lin(child("0", std::make_unique<nn::Linear>(in, out))) {}
  nn::Linear& lin;
};
struct Mlp : nn::Module {
  Mlp()
      : b0(child("0", std::make_unique<Block>(784, 512))),
        b1(child("1", std::make_unique<Block>(512, 128))),
        b2(child("2", std::make_unique<Block>(128, 32))),
        out(child("3", std::make_unique<nn::Linear>(32, 10))) {}
  Tensor operator()(Tensor x) const {
    for (const Block* b : {&b0, &b1, &b2}) x = b->lin(x).relu();
    return out(x);
  }
  Block &b0, &b1, &b2;
  nn::Linear& out;
};

} // namespace

TEST_SUITE("nn.layers") {
  TEST_CASE("named state, parameters, and the trained MNIST MLP's reference logits") {
    Mlp m;
    const auto names = m.named_state();
    REQUIRE(names.size() == 8);
    CHECK(names[0].first == "0.0.weight");
    CHECK(names[7].first == "3.bias");
    CHECK(m.get_parameters().size() == 8);
    CHECK(m.get_state_dict().at("1.0.weight").shape() == Shape{128, 512});

    const auto dir = data::data_dir(TG_SOURCE_DIR);
    if (!dir || !fs::exists(*dir / "models" / "mnist_mlp_dfdx.safetensors")) {
      MESSAGE("skipped the reference: models/mnist_mlp_dfdx.safetensors not found (see "
              "../shared/data/README.md; set TG_DATA_DIR)");
      return;
    }
    std::map<std::string, Tensor> state;
    for (auto& [k, t] : safe_load(*dir / "models" / "mnist_mlp_dfdx.safetensors").tensors)
      state.emplace(k, t);
    m.load_state_dict(state);
    // The module's own handles see the loaded values.
    CHECK(m.out.bias->to_vector<float>() == state.at("3.bias").to_vector<float>());
    const data::IdxArray images =
        data::read_idx(*dir / "mnist" / "t10k-first8-images-idx3-ubyte.gz");
    Tensor x =
        Tensor::from_bytes(images.bytes.data(), images.bytes.size(), Shape{8, 784}, dtypes::uint8)
            .cast(dtypes::float32)
            .div(255.0);
    const std::vector<float> logits = m(x).to_vector<float>();
    std::ifstream f(*dir / "models" / "mnist_mlp_dfdx.reference.json");
    const auto ref = boost::json::parse(
        std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
    double worst = 0;
    for (size_t i = 0; i < 8; ++i)
      for (size_t j = 0; j < 10; ++j)
        worst = std::max(
            worst, std::abs(logits[i * 10 + j] -
                            ref.at("logits").as_array()[i].as_array()[j].to_number<double>()));
    MESSAGE("max |logit - reference| = " << worst);
    CHECK(worst <= 1e-3);
  }

  TEST_CASE("load_state_dict: strict names every missing, unexpected and mis-shaped key") {
    nn::Linear lin(3, 2);
    const std::vector<float> before = lin.weight.to_vector<float>();
    std::map<std::string, Tensor> state{{"weight", Tensor::zeros({2, 4})},
                                        {"extra", Tensor::zeros({1})}};
    const std::string e = error_of([&] { lin.load_state_dict(state); });
    CHECK(e.find("shape mismatch: weight (the module has (2, 3), the state (2, 4))") !=
          std::string::npos);
    CHECK(e.find("missing: bias") != std::string::npos);
    CHECK(e.find("unexpected: extra") != std::string::npos);
    CHECK(lin.weight.to_vector<float>() == before); // nothing was loaded
    // Not strict: what matches loads, missing and unexpected keys are allowed.
    state = {{"weight", Tensor::ones({2, 3}, dtypes::float16)}, {"extra", Tensor::zeros({1})}};
    lin.load_state_dict(state, false);
    CHECK(lin.weight.to_vector<float>() == std::vector<float>(6, 1.0f));
    CHECK(lin.weight.dtype() == dtypes::float32); // cast to the module's dtype
    // A shape mismatch is refused even when not strict.
    state = {{"bias", Tensor::ones({3})}};
    CHECK(error_of([&] { lin.load_state_dict(state, false); }).find("shape mismatch: bias") !=
          std::string::npos);
  }

  TEST_CASE("layers compute what the Tensor functions compute") {
    Tensor::manual_seed(3);
    nn::Conv2d conv(4, 6, 3, 1, 1, 1, 2);
    CHECK(conv.weight.shape() == Shape{6, 2, 3, 3});
    Tensor x = Tensor::rand({2, 4, 5, 5}).realize();
    CHECK(conv(x).to_vector<float>() ==
          x.conv2d(conv.weight, conv.bias, 1, 1, 1, 2).to_vector<float>());
    CHECK_THROWS_AS(nn::Conv2d(4, 6, 3, 1, 0, 1, 3), Error);

    // BatchNorm: training uses batch statistics and moves the running ones; eval uses them.
    nn::BatchNorm2d bn(4);
    {
      Train train;
      (void)bn(x).realize();
    }
    std::vector<float> mean(4, 0);
    const std::vector<float> xv = x.to_vector<float>();
    for (size_t i = 0; i < xv.size(); ++i) mean[(i / 25) % 4] += xv[i] / 50.0f;
    const std::vector<float> rm = bn.running_mean->to_vector<float>();
    for (size_t c = 0; c < 4; ++c) CHECK(rm[c] == doctest::Approx(0.1 * mean[c]).epsilon(1e-4));
    CHECK(bn.num_batches_tracked.item<int64_t>() == 1);
    // Eval reads the running statistics while their update is still pending: the update runs
    // once, in that realize, and later reads see its result (not a second update).
    const std::vector<float> eval = bn(x).to_vector<float>();
    const std::vector<float> rv = bn.running_var->to_vector<float>();
    CHECK(eval[0] == doctest::Approx((xv[0] - rm[0]) / std::sqrt(rv[0] + 1e-5)).epsilon(1e-4));
    CHECK(bn.get_state_dict().size() == 5);
    CHECK(bn.get_parameters().size() == 2);

    nn::LayerNorm ln({5});
    CHECK(ln(x).to_vector<float>() == x.layer_norm({5}, ln.weight, ln.bias).to_vector<float>());

    nn::Embedding emb(10, 3);
    Tensor idx = Tensor::from_vector(std::vector<int32_t>{7, 0, 7, 2}, Shape{2, 2});
    Tensor e = emb(idx);
    CHECK(e.shape() == Shape{2, 2, 3});
    const std::vector<float> w = emb.weight.to_vector<float>(), ev = e.to_vector<float>();
    for (size_t k = 0; k < 3; ++k) {
      CHECK(ev[k] == w[7 * 3 + k]);
      CHECK(ev[9 + k] == w[2 * 3 + k]);
    }
    CHECK_THROWS_AS(emb(Tensor::ones({2})), Error);
  }
}
