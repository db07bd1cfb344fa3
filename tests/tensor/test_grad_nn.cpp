// Gradient checks for the nn functional ops: every differentiable op of tensor_nn.cpp,
// tensor_conv.cpp and tensor_loss.cpp against central finite differences in float64
// (gradcheck.hpp), the losses also against their analytic gradients, and the kernel count of a
// conv2d -> batch_norm -> relu block's forward + backward on NULL.
//
// Not differentiable, so not checked: max_pool*_with_indices' indices (int32), the integer
// class targets of cross_entropy/nll_loss, and dropout's mask (random; dropout(p=0) is identity).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "tensor/gradcheck.hpp"
#include "tensor/ref.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tgt;
using IntOrTuple = tg::Tensor::IntOrTuple;

namespace {

using V = std::vector<Tensor>;

Tensor f64(const std::vector<double>& v, const Shape& s) {
  return Tensor::from_vector(v, s, "", dtypes::float64);
}
Tensor i32(const std::vector<int32_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }

// Host values whose pairwise gaps are at least 0.01 (a max/argmax never ties under the step h):
// a shuffled ramp.
Arr distinct(const Shape& s, uint32_t seed) {
  Arr a = random_arr(s, 0, 1, dtypes::float64, seed);
  std::vector<size_t> order(a.v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return a.v[i] < a.v[j]; });
  for (size_t r = 0; r < order.size(); ++r) a.v[order[r]] = -1.5 + 0.0137 * static_cast<double>(r);
  return a;
}

int64_t kernels(const std::vector<tg::ScheduleItem>& items) {
  int64_t n = 0;
  for (const tg::ScheduleItem& i : items) n += i.kind == tg::ScheduleItem::Kind::Kernel;
  return n;
}

// d loss / d x from autograd, as host values.
std::vector<double> grad_of(const std::function<Tensor(const Tensor&)>& loss, Arr x) {
  Tensor t = to_tensor(x, dtypes::float64);
  t.requires_grad_();
  return loss(t).gradient({t})[0].to_vector<double>();
}

void check_vec(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::abs(got[i] - want[i]) <= 1e-12 + 1e-10 * std::abs(want[i]),
                  "element " << i << ": got " << got[i] << " want " << want[i]);
}

std::vector<double> softmax_rows(const Arr& x) {
  const int64_t n = x.shape[0], c = x.shape[1];
  std::vector<double> p(x.v.size());
  for (int64_t i = 0; i < n; ++i) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x.v[static_cast<size_t>(i * c + j)]);
    for (int64_t j = 0; j < c; ++j) s += std::exp(x.v[static_cast<size_t>(i * c + j)] - m);
    for (int64_t j = 0; j < c; ++j)
      p[static_cast<size_t>(i * c + j)] = std::exp(x.v[static_cast<size_t>(i * c + j)] - m) / s;
  }
  return p;
}

} // namespace

TEST_SUITE("tensor.grad_nn") {
  TEST_CASE("log_softmax, logsumexp, einsum, linear") {
    CHECK(gradcheck([](const V& x) { return x[0].log_softmax(1); }, {{3, 5}}));
    CHECK(gradcheck([](const V& x) { return x[0].log_softmax(0); }, {{4, 2, 3}}));
    CHECK(gradcheck([](const V& x) { return x[0].permute({1, 0}).log_softmax(-1); }, {{4, 3}}));
    CHECK(gradcheck([](const V& x) { return x[0].logsumexp({1}); }, {{3, 5}}));
    CHECK(gradcheck([](const V& x) { return x[0].logsumexp({0, 2}, true); }, {{2, 3, 4}}));
    CHECK(gradcheck(
        [](const V& x) {
          return Tensor::einsum("ij,jk->ik", {x[0], x[1]});
        },
        {{2, 3}, {3, 4}}));
    CHECK(gradcheck(
        [](const V& x) {
          return Tensor::einsum("bij,bkj->bik", {x[0], x[1]});
        },
        {{2, 2, 3}, {2, 4, 3}}));
    CHECK(gradcheck([](const V& x) { return Tensor::einsum("ii->i", {x[0]}); }, {{3, 3}}));
    CHECK(gradcheck([](const V& x) { return Tensor::einsum("i,i", {x[0], x[1]}); }, {{4}, {4}}));
    CHECK(
        gradcheck([](const V& x) { return Tensor::einsum("...ij->...ji", {x[0]}); }, {{2, 3, 2}}));
    CHECK(gradcheck(
        [](const V& x) {
          return Tensor::einsum("ij,j,jk->ik", {x[0], x[1], x[2]});
        },
        {{2, 3}, {3}, {3, 2}}));
    CHECK(gradcheck([](const V& x) { return x[0].linear(x[1], x[2]); }, {{2, 3, 4}, {5, 4}, {5}}));
    CHECK(gradcheck([](const V& x) { return x[0].linear(x[1]); }, {{4}, {3, 4}}));
  }

  TEST_CASE("conv1d, conv2d, conv3d w.r.t. input, weight and bias") {
    CHECK(
        gradcheck([](const V& x) { return x[0].conv1d(x[1], x[2]); }, {{2, 3, 7}, {4, 3, 3}, {4}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv1d(x[1], x[2], 2, 1, 2); },
                    {{1, 2, 9}, {3, 2, 3}, {3}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv1d(x[1], {}, 1, "same", 2, 2); },
                    {{2, 4, 6}, {2, 2, 3}}));
    CHECK(
        gradcheck([](const V& x) { return x[0].conv1d(x[1]); }, {{2, 5}, {3, 2, 2}})); // unbatched
    CHECK(gradcheck([](const V& x) { return x[0].conv2d(x[1], x[2]); },
                    {{2, 2, 4, 5}, {3, 2, 3, 2}, {3}}));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].conv2d(x[1], x[2], {2, 1}, {1, 2});
        },
        {{1, 2, 5, 4}, {2, 2, 3, 3}, {2}}));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].conv2d(x[1], x[2], 1, "same", {2, 1}, 2);
        },
        {{1, 4, 5, 4}, {4, 2, 2, 3}, {4}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv2d(x[1], {}, 2, 1, 1, 3); },
                    {{1, 3, 5, 5}, {3, 1, 3, 3}})); // depthwise
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].permute({0, 1, 3, 2}).conv2d(x[1]);
        },
        {{1, 2, 4, 3}, {2, 2, 2, 2}})); // non-contiguous input
    // 8 and more input channels per group: the weight gradient is a matrix product over the
    // pixels (fewer take products of rows above at stride 1, the convolution of x by dy with a
    // stride or in 3-D), with groups, stride, dilation and padding (tensor.nnfunc checks the
    // chunks of images of both against loops).
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].conv2d(x[1], {}, {2, 1}, {1, 2}, {1, 2}, 2);
        },
        {{2, 16, 5, 6}, {4, 8, 3, 2}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv1d(x[1], x[2], 1, 1); },
                    {{2, 8, 6}, {3, 8, 3}, {3}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv3d(x[1], x[2], 1, 1); },
                    {{1, 2, 3, 3, 2}, {2, 2, 2, 2, 2}, {2}}));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].conv3d(x[1], {}, 1, "same", {1, 2, 1}, 2);
        },
        {{1, 2, 3, 4, 2}, {2, 1, 3, 2, 1}}));
  }

  TEST_CASE("conv_transpose1d and conv_transpose2d") {
    CHECK(gradcheck([](const V& x) { return x[0].conv_transpose1d(x[1], x[2]); },
                    {{2, 3, 4}, {3, 2, 3}, {2}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv_transpose1d(x[1], x[2], 2, 1, 1, 1, 2); },
                    {{1, 2, 4}, {2, 3, 3}, {3}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv_transpose1d(x[1], {}, 3, 0, 0, 2); },
                    {{1, 4, 3}, {4, 1, 2}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv_transpose2d(x[1], x[2]); },
                    {{1, 2, 3, 3}, {2, 3, 2, 2}, {3}}));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].conv_transpose2d(x[1], x[2], {2, 1}, {1, 0}, {1, 0}, 2);
        },
        {{1, 4, 3, 2}, {4, 1, 3, 2}, {2}}));
    CHECK(gradcheck([](const V& x) { return x[0].conv_transpose2d(x[1], {}, 2, 1, 0, 1, 2); },
                    {{1, 2, 3, 3}, {2, 2, 2, 2}}));
  }

  TEST_CASE("max_pool, avg_pool, adaptive_avg_pool2d") {
    auto at = [](const std::function<Tensor(const Tensor&)>& f, Arr a) {
      return gradcheck_at([f](const V& x) { return f(x[0]); }, {std::move(a)});
    };
    // Distinct values: the maximum of each window is unique, away from ties.
    CHECK(at([](const Tensor& x) { return x.max_pool1d(2); }, distinct({2, 3, 7}, 1)));
    CHECK(
        at([](const Tensor& x) { return x.max_pool1d(3, 2, 1, 2, true); }, distinct({1, 2, 9}, 2)));
    CHECK(at([](const Tensor& x) { return x.max_pool2d(2); }, distinct({1, 2, 4, 5}, 3)));
    CHECK(at(
        [](const Tensor& x) {
          return x.max_pool2d({3, 2}, IntOrTuple{1, 2}, {1, 1});
        },
        distinct({1, 2, 4, 5}, 4)));
    CHECK(at([](const Tensor& x) { return x.max_pool2d(2, {}, 0, 1, true); },
             distinct({1, 1, 5, 5}, 5)));
    CHECK(at([](const Tensor& x) { return x.max_pool2d(2, 1, 0, 2); }, distinct({2, 5, 5}, 6)));
    CHECK(at([](const Tensor& x) { return x.max_pool2d_with_indices(2).first; },
             distinct({1, 2, 4, 4}, 7)));
    CHECK(gradcheck([](const V& x) { return x[0].avg_pool1d(3, 2, 1); }, {{2, 2, 8}}));
    CHECK(gradcheck([](const V& x) { return x[0].avg_pool1d(3, 2, 1, true, false); }, {{1, 2, 8}}));
    CHECK(gradcheck([](const V& x) { return x[0].avg_pool2d(2); }, {{1, 2, 4, 5}}));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].avg_pool2d({3, 2}, IntOrTuple{2, 1}, {1, 1});
        },
        {{1, 2, 5, 4}}));
    CHECK(gradcheck([](const V& x) { return x[0].avg_pool2d(3, 2, 1, true, false); },
                    {{1, 1, 6, 5}}));
    CHECK(
        gradcheck([](const V& x) { return x[0].avg_pool2d(3, 2, 1, true, true); }, {{1, 1, 6, 5}}));
    CHECK(gradcheck([](const V& x) { return x[0].avg_pool2d(2, 2, 0, false, true, 3); },
                    {{1, 1, 4, 4}}));
    CHECK(gradcheck([](const V& x) { return x[0].adaptive_avg_pool2d({2, 3}); }, {{1, 2, 5, 7}}));
    CHECK(gradcheck([](const V& x) { return x[0].adaptive_avg_pool2d(3); }, {{2, 4, 4}}));
    CHECK(gradcheck([](const V& x) { return x[0].adaptive_avg_pool1d(3); }, {{1, 2, 7}}));
  }

  TEST_CASE("interpolate: nearest, linear, bilinear with and without align_corners") {
    CHECK(gradcheck([](const V& x) { return x[0].interpolate(IntOrTuple{5, 7}); }, {{1, 2, 3, 4}}));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].interpolate(IntOrTuple{2, 3});
        },
        {{1, 1, 5, 7}})); // downsampling drops elements: their gradient is 0
    CHECK(gradcheck([](const V& x) { return x[0].interpolate({}, {2.0}, "nearest-exact"); },
                    {{1, 2, 3, 3}}));
    CHECK(gradcheck([](const V& x) { return x[0].interpolate(IntOrTuple{7}, {}, "linear"); },
                    {{2, 1, 4}}));
    for (bool ac : {false, true}) {
      INFO("align_corners " << ac);
      CHECK(gradcheck(
          [ac](const V& x) {
            return x[0].interpolate(IntOrTuple{5, 6}, {}, "bilinear", ac);
          },
          {{1, 2, 3, 4}}));
      CHECK(gradcheck(
          [ac](const V& x) {
            return x[0].interpolate(IntOrTuple{2, 3}, {}, "bilinear", ac);
          },
          {{1, 1, 4, 5}}));
    }
  }

  TEST_CASE("layer_norm, batch_norm (training), group_norm, rms_norm") {
    CHECK(
        gradcheck([](const V& x) { return x[0].layer_norm({4}, x[1], x[2]); }, {{3, 4}, {4}, {4}}));
    CHECK(gradcheck([](const V& x) { return x[0].layer_norm({2, 3}); }, {{2, 2, 3}}));
    CHECK(gradcheck([](const V& x) { return x[0].batch_norm({}, {}, x[1], x[2], true); },
                    {{3, 2, 2, 2}, {2}, {2}}));
    CHECK(gradcheck([](const V& x) { return x[0].batch_norm({}, {}, {}, {}, true); }, {{4, 3}}));
    // eval mode: running statistics are constants.
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].batch_norm(f64({0.5, -1, 2}, {3}), f64({1.5, 0.25, 2}, {3}), x[1], x[2]);
        },
        {{2, 3, 2}, {3}, {3}}));
    CHECK(gradcheck([](const V& x) { return x[0].group_norm(2, x[1], x[2]); },
                    {{2, 4, 3}, {4}, {4}}));
    CHECK(gradcheck([](const V& x) { return x[0].group_norm(1); }, {{2, 3, 2, 2}}));
    CHECK(gradcheck([](const V& x) { return x[0].rms_norm({3}, x[1]); }, {{2, 4, 3}, {3}}));
    CHECK(gradcheck([](const V& x) { return x[0].rms_norm({2, 3}, {}, 1e-3); }, {{2, 2, 3}}));
  }

  TEST_CASE("scaled_dot_product_attention: plain, float and bool mask, causal, scale") {
    CHECK(gradcheck([](const V& x) { return x[0].scaled_dot_product_attention(x[1], x[2]); },
                    {{2, 3, 4}, {2, 5, 4}, {2, 5, 2}}));
    CHECK(
        gradcheck([](const V& x) { return x[0].scaled_dot_product_attention(x[1], x[2], x[3]); },
                  {{1, 3, 2}, {1, 4, 2}, {1, 4, 3}, {3, 4}})); // float mask: gradient w.r.t. it too
    CHECK(gradcheck(
        [](const V& x) {
          Tensor m = Tensor::from_vector(std::vector<bool>{true, false, true, true, true, true,
                                                           false, true, false, true, true, false},
                                         Shape{3, 4});
          return x[0].scaled_dot_product_attention(x[1], x[2], m);
        },
        {{2, 3, 2}, {2, 4, 2}, {2, 4, 2}}));
    CHECK(gradcheck(
        [](const V& x) { return x[0].scaled_dot_product_attention(x[1], x[2], {}, 0, true, 0.7); },
        {{2, 1, 4, 3}, {2, 1, 4, 3}, {2, 1, 4, 2}}));
  }

  TEST_CASE("losses by finite differences") {
    const Tensor y = i32({2, 0, 3, 1, 3}, {5});
    const Tensor yi = i32({2, -100, 3, 1, 0}, {5});
    const Tensor w = f64({0.5, 2, 1, 1.5}, {4});
    for (const char* red : {"mean", "sum", "none"}) {
      INFO("reduction " << red);
      CHECK(gradcheck([&](const V& x) { return x[0].cross_entropy(y, {}, -100, red); }, {{5, 4}}));
      CHECK(gradcheck([&](const V& x) { return x[0].cross_entropy(yi, w, -100, red, 0.2); },
                      {{5, 4}}));
      CHECK(gradcheck([&](const V& x) { return x[0].cross_entropy(y, w, 3, red); }, {{5, 4}}));
      CHECK(gradcheck([&](const V& x) { return x[0].nll_loss(yi, w, -100, red); }, {{5, 4}}));
      CHECK(gradcheck([&](const V& x) { return x[0].mse_loss(x[1], red); }, {{3, 4}, {3, 4}}));
    }
    // Spatial class indices (N, C, d1) and probability targets (w.r.t. the target too).
    CHECK(gradcheck(
        [&](const V& x) {
          return x[0].cross_entropy(i32({0, 2, 1, 1, 0, 2}, {2, 3}));
        },
        {{2, 3, 3}}));
    CHECK(gradcheck([&](const V& x) { return x[0].cross_entropy(x[1], w, -100, "mean", 0.1); },
                    {{3, 4}, {3, 4}}));
    CHECK(gradcheck([&](const V& x) { return x[0].sparse_categorical_crossentropy(y, -1, 0.1); },
                    {{5, 4}}));
    // binary_cross_entropy needs probabilities in (0, 1).
    GradcheckOptions prob;
    prob.lo = 0.05;
    prob.hi = 0.95;
    CHECK(gradcheck([](const V& x) { return x[0].binary_cross_entropy(x[1]); }, {{2, 3}, {2, 3}},
                    prob));
    CHECK(gradcheck([](const V& x) { return x[0].binary_cross_entropy(x[1], x[2], "sum"); },
                    {{2, 3}, {2, 3}, {3}}, prob));
    CHECK(gradcheck([](const V& x) { return x[0].binary_cross_entropy_with_logits(x[1]); },
                    {{2, 3}, {2, 3}}));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].binary_cross_entropy_with_logits(x[1].sigmoid(), x[2], "none", x[3]);
        },
        {{2, 3}, {2, 3}, {2, 1}, {3}}));
    // l1 and smooth_l1 have kinks at x - t = 0 (and |x - t| = beta): t is a constant 0 here
    // and x stays away from them.
    const Tensor t0 = f64(std::vector<double>(12, 0.0), {3, 4});
    auto at = [](const std::function<Tensor(const Tensor&)>& f, Arr a) {
      return gradcheck_at([f](const V& x) { return f(x[0]); }, {std::move(a)});
    };
    CHECK(at([&](const Tensor& x) { return x.l1_loss(t0); }, away_from({3, 4}, -2, 2, 1, {0})));
    CHECK(at([&](const Tensor& x) { return x.l1_loss(t0, "none"); },
             away_from({3, 4}, -2, 2, 2, {0})));
    CHECK(at([&](const Tensor& x) { return x.smooth_l1_loss(t0); },
             away_from({3, 4}, -2, 2, 3, {-1, 1})));
    CHECK(at([&](const Tensor& x) { return x.smooth_l1_loss(t0, "sum", 0.5); },
             away_from({3, 4}, -2, 2, 4, {-0.5, 0.5})));
  }

  TEST_CASE("cross_entropy and nll_loss against their analytic gradients") {
    const int64_t n = 5, c = 4;
    const Arr x = random_arr({n, c}, -2, 2, dtypes::float64, 11);
    const std::vector<int32_t> ys{2, -100, 3, 1, 0};
    const std::vector<double> w{0.5, 2, 1, 1.5};
    const std::vector<double> p = softmax_rows(x);
    // Per sample the loss is -sum_c q_c logp_c with q_c = (1 - eps) w_y [c == y] + eps / C w_c,
    // so d/dz_j = p_j sum(q) - q_j; the mean divides by sum over kept samples of w_y.
    auto want = [&](bool weighted, double eps, bool mean) {
      std::vector<double> g(static_cast<size_t>(n * c), 0.0);
      double den = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int32_t yv = ys[static_cast<size_t>(i)];
        if (yv == -100) continue;
        auto wc = [&](int64_t k) { return weighted ? w[static_cast<size_t>(k)] : 1.0; };
        den += wc(yv);
        std::vector<double> q(static_cast<size_t>(c));
        double qs = 0;
        for (int64_t k = 0; k < c; ++k) {
          q[static_cast<size_t>(k)] =
              (1 - eps) * wc(k) * (k == yv) + eps / static_cast<double>(c) * wc(k);
          qs += q[static_cast<size_t>(k)];
        }
        for (int64_t k = 0; k < c; ++k)
          g[static_cast<size_t>(i * c + k)] =
              p[static_cast<size_t>(i * c + k)] * qs - q[static_cast<size_t>(k)];
      }
      if (mean)
        for (double& v : g) v /= den;
      return g;
    };
    const Tensor yt = i32(ys, {n});
    const Tensor wt = f64(w, {c});
    for (bool weighted : {false, true})
      for (double eps : {0.0, 0.3})
        for (bool mean : {true, false}) {
          INFO("weighted " << weighted << " label_smoothing " << eps << " mean " << mean);
          const std::vector<double> got = grad_of(
              [&](const Tensor& t) {
                return t.cross_entropy(yt, weighted ? Tensor::OptTensor{wt} : Tensor::OptTensor{},
                                       -100, mean ? "mean" : "sum", eps);
              },
              x);
          check_vec(got, want(weighted, eps, mean), "d cross_entropy / d logits");
        }
    // nll_loss: d/dinput[i, y_i] = -w_y / sum w_y (mean), else 0.
    std::vector<double> g(static_cast<size_t>(n * c), 0.0);
    double den = 0;
    for (int64_t i = 0; i < n; ++i)
      if (ys[static_cast<size_t>(i)] != -100)
        den += w[static_cast<size_t>(ys[static_cast<size_t>(i)])];
    for (int64_t i = 0; i < n; ++i) {
      const int32_t yv = ys[static_cast<size_t>(i)];
      if (yv != -100) g[static_cast<size_t>(i * c + yv)] = -w[static_cast<size_t>(yv)] / den;
    }
    check_vec(grad_of([&](const Tensor& t) { return t.nll_loss(yt, wt); }, x), g,
              "d nll_loss / d input");
  }

  TEST_CASE("binary and regression losses against their analytic gradients") {
    const Shape s{3, 4};
    const double cnt = 12;
    Arr p = random_arr(s, 0.05, 0.95, dtypes::float64, 21);
    Arr t = random_arr(s, 0, 1, dtypes::float64, 22);
    // z = t + d with d away from the kinks of l1 (0) and smooth_l1 (+-beta).
    const Arr dz = away_from(s, -2, 2, 23, {-1, -0.5, 0, 0.5, 1}, 0.02);
    Arr z = zip(t, dz, [](double a, double b) { return a + b; });
    const std::vector<double> wv{0.5, 1, 2, 1.5}, pwv{2, 0.5, 1, 3};
    const Tensor tt = to_tensor(t, dtypes::float64);
    const Tensor wt = f64(wv, {4}), pw = f64(pwv, {4});
    std::vector<double> bce(12), bcel(12), mse(12), l1(12), sl1(12), sl1b(12);
    for (size_t i = 0; i < 12; ++i) {
      const double w = wv[i % 4], pwi = pwv[i % 4], y = t.v[i];
      bce[i] = w * (p.v[i] - y) / (p.v[i] * (1 - p.v[i])) / cnt;
      const double sg = 1 / (1 + std::exp(-z.v[i]));
      bcel[i] = w * (-pwi * y * (1 - sg) + (1 - y) * sg) / cnt;
      const double d = z.v[i] - y;
      mse[i] = 2 * d / cnt;
      l1[i] = (d > 0 ? 1.0 : -1.0) / cnt;
      sl1[i] = (std::abs(d) < 1 ? d : (d > 0 ? 1.0 : -1.0)) / cnt;
      sl1b[i] = std::abs(d) < 0.5 ? d / 0.5 : (d > 0 ? 1.0 : -1.0);
    }
    check_vec(grad_of([&](const Tensor& x) { return x.binary_cross_entropy(tt, wt); }, p), bce,
              "d binary_cross_entropy / d input");
    check_vec(
        grad_of(
            [&](const Tensor& x) { return x.binary_cross_entropy_with_logits(tt, wt, "mean", pw); },
            z),
        bcel, "d binary_cross_entropy_with_logits / d logits");
    check_vec(grad_of([&](const Tensor& x) { return x.mse_loss(tt); }, z), mse, "d mse / d input");
    check_vec(grad_of([&](const Tensor& x) { return x.l1_loss(tt); }, z), l1, "d l1 / d input");
    check_vec(grad_of([&](const Tensor& x) { return x.smooth_l1_loss(tt); }, z), sl1,
              "d smooth_l1 / d input");
    check_vec(grad_of([&](const Tensor& x) { return x.smooth_l1_loss(tt, "sum", 0.5); }, z), sl1b,
              "d smooth_l1(beta 0.5, sum) / d input");
  }

  // The forward loss and the gradients of input, conv weight, bn weight and bias of
  // sum(relu(batch_norm(conv2d(x, w), training))), scheduled together on NULL. Measured (x
  // 8x16x16x16, w 32x16x3x3): x padded (stored: padded convolutions read a stored copy), the conv
  // output (stored, 8x32x16x16), the batch mean and variance, the inverse standard deviation
  // (stored: its square root would be recomputed for every element it is expanded to), the loss,
  // two per-channel sums the batch_norm backward needs, the output gradient dy (stored once: both
  // gradient convolutions read it, and d weight once per filter tap), dy padded for d input (a
  // transposed convolution), the flipped and regrouped filter (stored in its new order, so the
  // reduce reads it contiguously), d input, x and dy channels-last and d conv weight (a matrix
  // product of the two), and the bn weight and bias gradients (two more per-channel sums): 17.
  // The bound is what we measure: more is a fusion regression.
  TEST_CASE("kernel count of a conv2d -> batch_norm -> relu block forward + backward on NULL") {
    auto empty = [](const Shape& s) { return Tensor::empty(s, dtypes::float32, "NULL"); };
    Tensor x = empty({8, 16, 16, 16}).requires_grad_();
    Tensor w = empty({32, 16, 3, 3}).requires_grad_();
    Tensor g = empty({32}).requires_grad_(), b = empty({32}).requires_grad_();
    Tensor loss = x.conv2d(w, {}, 1, 1).batch_norm({}, {}, g, b, true).relu().sum();
    loss.backward();
    REQUIRE(x.grad().shape() == Shape{8, 16, 16, 16});
    REQUIRE(w.grad().shape() == Shape{32, 16, 3, 3});
    const int64_t n = kernels(Tensor::schedule_all({loss, x.grad(), w.grad(), g.grad(), b.grad()}));
    MESSAGE("conv2d -> batch_norm -> relu forward + backward: " << n << " kernels");
    CHECK(n <= 17);
  }
}
