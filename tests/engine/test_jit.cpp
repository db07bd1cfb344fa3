// TinyJit (tg/jit.hpp): a jitted training step replays to the same numbers as the eager one,
// launches the kernels it recorded, refuses inputs unlike the recording (or records again when
// asked), takes bound symbolic sizes, shares the memory of intermediates only it holds, and
// JIT=0 turns it off.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/sint.hpp"
#include "tg/jit.hpp"
#include "tg/knobs.hpp"
#include "tg/nn.hpp"
#include "tg/optim.hpp"
#include "tg/runner.hpp"

using namespace tg;

namespace {

struct Mlp : nn::Module {
  nn::Linear& l1 = child("l1", std::make_unique<nn::Linear>(8, 16));
  nn::Linear& l2 = child("l2", std::make_unique<nn::Linear>(16, 4));
  Tensor operator()(const Tensor& x) const { return l2(l1(x).relu()); }
};

// Batch `i` of a fixed sequence: inputs (n, 8) and class labels (n,).
std::pair<Tensor, Tensor> batch(int i, int64_t n = 8) {
  std::vector<float> x(static_cast<size_t>(n * 8));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.37f * static_cast<float>(k + 13 * i));
  for (size_t k = 0; k < y.size(); ++k) y[k] = static_cast<int32_t>((k * 7 + i) % 4);
  return {Tensor::from_vector(x, Shape{n, 8}), Tensor::from_vector(y, Shape{n})};
}

// A model and its optimizer, both starting from the same weights as every other Trainer.
struct Trainer {
  Mlp model;
  std::unique_ptr<optim::Adam> opt;
  explicit Trainer(const Mlp& from) {
    model.load_state_dict(from.get_state_dict());
    opt = std::make_unique<optim::Adam>(model.get_parameters(), 0.01);
  }
  Tensor step(const Tensor& x, const Tensor& y) {
    Train train;
    opt->zero_grad();
    Tensor loss = model(x).sparse_categorical_crossentropy(y);
    loss.backward();
    std::vector<Tensor> out = opt->schedule_step();
    out.push_back(loss);
    Tensor::realize_all(out);
    return loss;
  }
};

std::vector<float> weights(const Mlp& m) {
  std::vector<float> out;
  for (auto& [name, t] : m.named_state()) {
    std::vector<float> v = t.to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

} // namespace

TEST_SUITE("engine.jit") {

  TEST_CASE("a jitted training step replays to the eager numbers for 10 steps") {
    Tensor::manual_seed(3);
    Mlp init;
    Trainer eager(init), jitted(init);
    int fn_calls = 0;
    TinyJit step([&](const Tensor& x, const Tensor& y) {
      ++fn_calls;
      return jitted.step(x, y);
    });
    CHECK(step.core().recorded_launches() == 0);
    for (int i = 0; i < 10; ++i) {
      auto [x, y] = batch(i);
      const float want = eager.step(x, y).item<float>();
      const float got = step(x, y).item<float>();
      CHECK(got == doctest::Approx(want).epsilon(1e-6));
    }
    CHECK(fn_calls == 2); // run, record; then 8 replays
    CHECK(step.core().calls() == 10);
    CHECK(step.core().recorded_launches() > 0);
    CHECK(step.core().uses_graph()); // the CPU plugin has a Graph
    const std::vector<float> a = weights(eager.model), b = weights(jitted.model);
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
    CHECK(worst <= 1e-6);
  }

  TEST_CASE("a replay launches exactly the kernels it recorded") {
    Mlp init;
    Trainer t(init);
    TinyJit step([&](const Tensor& x, const Tensor& y) { return t.step(x, y); });
    auto [x0, y0] = batch(0);
    step(x0, y0);
    auto [x1, y1] = batch(1);
    const int64_t before_record = launch_counters().kernel_count;
    step(x1, y1); // records
    const int64_t recorded = launch_counters().kernel_count - before_record;
    CHECK(static_cast<int64_t>(step.core().recorded_launches()) == recorded);
    for (bool graph : {true, false}) {
      TinyJit plain([&](const Tensor& x, const Tensor& y) { return t.step(x, y); },
                    JitOptions{.use_graph = graph});
      for (int i = 0; i < 2; ++i) {
        auto [x, y] = batch(i);
        plain(x, y);
      }
      CHECK(plain.core().uses_graph() == graph);
      auto [x2, y2] = batch(2);
      const int64_t before = launch_counters().kernel_count;
      plain(x2, y2);
      CHECK(launch_counters().kernel_count - before == recorded);
    }
  }

  TEST_CASE("inputs unlike the recording are refused, or recorded again when asked") {
    Tensor w = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}).realize();
    auto fn = [&](const Tensor& x) { return (x * w).sum(std::vector<int64_t>{1}); };
    auto ones = [](int64_t n, DType d = dtypes::float32) { return Tensor::ones({n, 8}, d); };
    TinyJit step(fn);
    for (int i = 0; i < 3; ++i) step(ones(4));
    try {
      step(ones(2));
      FAIL("a changed shape must be refused");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("input 0 has shape (2, 8) but the step was recorded with "
                                       "(4, 8)") != std::string::npos);
      CHECK(std::string(e.what()).find("rerecord") != std::string::npos);
    }
    CHECK_THROWS_WITH_AS(step(ones(4, dtypes::int32)),
                         doctest::Contains("input 0 has dtype int32 but the step was recorded "
                                           "with float32"),
                         Error);
    Tensor big = ones(8).contiguous().realize(); // a (4, 8) view of (8, 8) memory
    CHECK_THROWS_WITH_AS(step(big.shrink({{2, 6}, {0, 8}})),
                         doctest::Contains("different view of its memory"), Error);
    // A list of tensors is as many inputs.
    TinyJit sum_all([&](const std::vector<Tensor>& xs) {
      Tensor s = xs.at(0).sum();
      for (size_t i = 1; i < xs.size(); ++i) s = s + xs[i].sum();
      return s;
    });
    for (int i = 0; i < 3; ++i) CHECK(sum_all(std::vector<Tensor>{ones(1)}).item<float>() == 8);
    CHECK_THROWS_WITH_AS(sum_all(std::vector<Tensor>{ones(1), ones(1) * 2}),
                         doctest::Contains("2 tensor inputs but the step was recorded with 1"),
                         Error);
    Tensor same = ones(4).realize();
    CHECK_THROWS_WITH_AS(sum_all(std::vector<Tensor>{same, same}),
                         doctest::Contains("share one buffer"), Error);

    TinyJit again(fn, JitOptions{.rerecord = true});
    for (int i = 0; i < 3; ++i) again(ones(4));
    const std::vector<float> r = again(ones(2)).to_vector<float>(); // records for (2, 8)
    CHECK(r == std::vector<float>{36, 36});
    CHECK(again(ones(2) * 2).to_vector<float>() == std::vector<float>{72, 72}); // replays
  }

  TEST_CASE("bound symbolic sizes are inputs of the replay") {
    Tensor data = Tensor::arange(16, dtypes::float32).realize();
    const sint len = Variable("len", 1, 16);
    TinyJit step([&](const Tensor& scale, const sint& n) {
      return (data.shrink({{0, n}}) * scale).sum();
    });
    Tensor two = Tensor::full({}, 2.0f).realize();
    for (int64_t n : {3, 5, 7, 16, 1}) {
      const float want = 2.0f * static_cast<float>(n * (n - 1) / 2);
      CHECK(step(two.contiguous(), len.bind(n)).item<float>() == want);
    }
    CHECK(step.core().calls() == 5);
  }

  TEST_CASE("intermediates only the recording holds share memory; kept ones do not") {
    // Three realizes: three schedules, each with its own intermediate of the same size. The
    // first is dead once the second is computed, so the third reuses its memory; `kept` is held
    // outside the step and keeps its own.
    Tensor kept;
    TinyJit step([&](const Tensor& x) {
      Tensor a = (x + 1).contiguous().realize();
      Tensor b = (a * 2).contiguous().realize();
      kept = (b + 3).contiguous().realize();
      Tensor c = (kept * 10).contiguous().realize();
      return c - 1;
    });
    for (float v : {1.0f, 2.0f, 5.0f, -4.0f}) {
      Tensor x = Tensor::full({64}, v).contiguous().realize();
      const float b = (v + 1) * 2;
      CHECK(step(x).to_vector<float>() == std::vector<float>(64, (b + 3) * 10 - 1));
      CHECK(kept.to_vector<float>() == std::vector<float>(64, b + 3));
    }
    CHECK(step.core().calls() == 4);
    CHECK(step.core().shared_buffers() >= 1);
  }

  TEST_CASE("random numbers drawn in a jitted step are new on every replay") {
    // The generator's call counter advances inside the recorded step (an assign), so replays
    // draw the same sequence as eager calls.
    auto draw = [](const Tensor& shift) { return Tensor::rand({6}) + shift; };
    Tensor zero = Tensor::zeros({6}).realize();
    Tensor::manual_seed(11);
    std::vector<std::vector<float>> eager;
    for (int i = 0; i < 5; ++i) eager.push_back(draw(zero).to_vector<float>());
    Tensor::manual_seed(11);
    TinyJit step(draw);
    for (int i = 0; i < 5; ++i)
      CHECK(step(zero).to_vector<float>() == eager[static_cast<size_t>(i)]);
    CHECK(eager[3] != eager[4]);
  }

  TEST_CASE("JIT=0 runs the function every call") {
    tg::Context off{{"JIT", 0}}; // read when the TinyJit is made
    int runs = 0;
    TinyJit step([&](const Tensor& x) {
      ++runs;
      return x + 1;
    });
    for (int i = 0; i < 4; ++i)
      CHECK(step(Tensor::full({2}, float(i))).to_vector<float>() ==
            std::vector<float>{float(i + 1), float(i + 1)});
    CHECK(runs == 4);
    CHECK(step.core().recorded_launches() == 0);
  }

  // Run under DEBUG=2 by ctest (engine.jit_debug2), which looks for the [jit] mark.
  TEST_CASE("jit replays print marked launch lines under DEBUG=2") {
    TinyJit step([](const Tensor& x) { return (x * 3).sum(); });
    for (int i = 0; i < 3; ++i) CHECK(step(Tensor::full({4}, 1.0f)).item<float>() == 12.0f);
  }

} // TEST_SUITE
