// torch.nn.functional ops beyond tensor_nn/tensor_loss: cosine_similarity, normalize,
// pixel_shuffle/unshuffle, softmin, glu, prelu, kl_div, huber_loss; adaptive_max_pool1d/2d,
// max_pool3d, avg_pool3d; interpolate's bicubic and area modes. Forward against loops written
// from PyTorch's definitions, gradients by float64 finite differences.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/gradcheck.hpp"
#include "tensor/torch_ops_check.hpp"
#include "tg/error.hpp"

using namespace tgt;

namespace {

const DType kF32 = dtypes::float32;
const double kInf = std::numeric_limits<double>::infinity();

double at(const Arr& a, const std::vector<int64_t>& i) {
  return a.v[static_cast<size_t>(ravel(i, a.shape))];
}

// PyTorch's adaptive bin [floor(i*in/out), ceil((i+1)*in/out)).
std::pair<int64_t, int64_t> bin(int64_t i, int64_t in, int64_t out) {
  return {i * in / out, ((i + 1) * in + out - 1) / out};
}

// Keys' cubic convolution weights (A = -0.75) for the 4 taps at offset t.
std::vector<double> cubic_weights(double t) {
  const double A = -0.75;
  auto c1 = [&](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto c2 = [&](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  return {c2(t + 1), c1(t), c1(1 - t), c2(2 - t)};
}

// upsample_bicubic2d of (N, C, H, W) to (oh, ow), PyTorch's source index and clamped taps.
Arr bicubic_ref(const Arr& x, int64_t oh, int64_t ow, bool ac) {
  const int64_t h = x.shape[2], w = x.shape[3];
  auto scale = [&](int64_t in, int64_t o) {
    return ac ? (o > 1 ? static_cast<float>(in - 1) / static_cast<float>(o - 1) : 0.0f)
              : static_cast<float>(in) / static_cast<float>(o);
  };
  const float sh = scale(h, oh), sw = scale(w, ow);
  return generate({x.shape[0], x.shape[1], oh, ow}, [&](const std::vector<int64_t>& i) {
    const float ry =
        ac ? sh * static_cast<float>(i[2]) : sh * (static_cast<float>(i[2]) + 0.5f) - 0.5f;
    const float rx =
        ac ? sw * static_cast<float>(i[3]) : sw * (static_cast<float>(i[3]) + 0.5f) - 0.5f;
    const auto y0 = static_cast<int64_t>(std::floor(ry)), x0 = static_cast<int64_t>(std::floor(rx));
    const std::vector<double> wy = cubic_weights(ry - static_cast<float>(y0));
    const std::vector<double> wx = cubic_weights(rx - static_cast<float>(x0));
    double s = 0;
    for (int64_t a = 0; a < 4; ++a)
      for (int64_t c = 0; c < 4; ++c) {
        const int64_t yy = std::clamp<int64_t>(y0 - 1 + a, 0, h - 1);
        const int64_t xx = std::clamp<int64_t>(x0 - 1 + c, 0, w - 1);
        s += wy[static_cast<size_t>(a)] * wx[static_cast<size_t>(c)] * at(x, {i[0], i[1], yy, xx});
      }
    return s;
  });
}

} // namespace

TEST_SUITE("tensor.torch_ops") {
  TEST_CASE("cosine_similarity, normalize, pixel_shuffle, softmin, glu, prelu") {
    CheckBatch b;
    Arr x1 = random_arr({3, 4}, -2, 2, kF32, 1), x2 = random_arr({3, 4}, -2, 2, kF32, 2);
    std::fill(x1.v.begin() + 8, x1.v.end(), 0.0); // a zero row: eps keeps it finite (0)
    Tensor t1 = to_tensor(x1, kF32), t2 = to_tensor(x2, kF32);
    auto norm_row = [](const Arr& a, int64_t r) {
      double s = 0;
      for (int64_t c = 0; c < a.shape[1]; ++c) s += std::pow(at(a, {r, c}), 2);
      return std::sqrt(s);
    };
    b.add(t1.cosine_similarity(t2, 0),
          generate({4},
                   [&](auto& i) {
                     double s = 0, n1 = 0, n2 = 0;
                     for (int64_t r = 0; r < 3; ++r) {
                       s += at(x1, {r, i[0]}) * at(x2, {r, i[0]});
                       n1 += std::pow(at(x1, {r, i[0]}), 2), n2 += std::pow(at(x2, {r, i[0]}), 2);
                     }
                     return s / std::max(std::sqrt(n1), 1e-8) / std::max(std::sqrt(n2), 1e-8);
                   }),
          tol_for(kF32, 4), "cosine_similarity dim 0");
    b.add(t1.cosine_similarity(t2, -1),
          generate({3},
                   [&](auto& i) {
                     double s = 0;
                     for (int64_t c = 0; c < 4; ++c) s += at(x1, {i[0], c}) * at(x2, {i[0], c});
                     return s / std::max(norm_row(x1, i[0]), 1e-8) /
                            std::max(norm_row(x2, i[0]), 1e-8);
                   }),
          tol_for(kF32, 4), "cosine_similarity dim -1 (a zero row gives 0)");
    b.add(
        t1.normalize(2, 1),
        generate({3, 4}, [&](auto& i) { return at(x1, i) / std::max(norm_row(x1, i[0]), 1e-12); }),
        tol_for(kF32, 4), "normalize p=2 dim 1");
    b.add(t2.normalize(1, 0),
          generate({3, 4},
                   [&](auto& i) {
                     double s = 0;
                     for (int64_t r = 0; r < 3; ++r) s += std::abs(at(x2, {r, i[1]}));
                     return at(x2, i) / std::max(s, 1e-12);
                   }),
          tol_for(kF32, 4), "normalize p=1 dim 0");
    // pixel_shuffle (N, C r^2, H, W) -> (N, C, H r, W r) and back.
    Arr ps = random_arr({2, 8, 2, 3}, -2, 2, kF32, 3);
    Tensor tps = to_tensor(ps, kF32);
    Arr shuffled = generate({2, 2, 4, 6}, [&](auto& i) {
      const int64_t c = i[1], y = i[2], x = i[3];
      return at(ps, {i[0], c * 4 + (y % 2) * 2 + (x % 2), y / 2, x / 2});
    });
    b.exact(tps.pixel_shuffle(2), shuffled, "pixel_shuffle");
    b.exact(tps.pixel_shuffle(2).pixel_unshuffle(2), ps, "pixel_unshuffle inverts it");
    b.exact(tps.reshape({16, 2, 3}).pixel_unshuffle(1), reshape(ps, {16, 2, 3}),
            "pixel_unshuffle factor 1 (unbatched)");
    // softmin, glu, prelu.
    b.add(t1.softmin(1),
          generate({3, 4},
                   [&](auto& i) {
                     double s = 0;
                     for (int64_t c = 0; c < 4; ++c) s += std::exp(-at(x1, {i[0], c}));
                     return std::exp(-at(x1, i)) / s;
                   }),
          tol_for(kF32, 4), "softmin");
    b.add(t2.glu(1),
          generate({3, 2},
                   [&](auto& i) {
                     return at(x2, i) / (1 + std::exp(-at(x2, {i[0], i[1] + 2})));
                   }),
          tol_for(kF32, 4), "glu dim 1");
    b.add(t2.reshape({6, 2}).glu(0),
          generate({3, 2},
                   [&](auto& i) {
                     const Arr r = reshape(x2, {6, 2});
                     return at(r, i) / (1 + std::exp(-at(r, {i[0] + 3, i[1]})));
                   }),
          tol_for(kF32, 4), "glu dim 0");
    Arr px = random_arr({2, 3, 2}, -2, 2, kF32, 4), pw{{3}, {0.1, -0.5, 2.0}};
    Tensor tpx = to_tensor(px, kF32);
    b.add(tpx.prelu(to_tensor(pw, kF32)),
          generate({2, 3, 2},
                   [&](auto& i) {
                     const double v = at(px, i);
                     return v > 0 ? v : pw.v[static_cast<size_t>(i[1])] * v;
                   }),
          tol_for(kF32), "prelu per channel");
    Arr pw1{{1}, {0.25}};
    b.add(tpx.prelu(to_tensor(pw1, kF32)), map(px, [](double v) { return v > 0 ? v : 0.25 * v; }),
          tol_for(kF32), "prelu one weight");
    b.run();
    CHECK_THROWS_WITH_AS(t1.cosine_similarity(Tensor::ones({2, 4})), doctest::Contains("broadcast"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(tps.pixel_shuffle(3), doctest::Contains("divisible"), tg::Error);
    CHECK_THROWS_WITH_AS(tps.pixel_unshuffle(2), doctest::Contains("divisible"), tg::Error);
    CHECK_THROWS_WITH_AS(t1.glu(0), doctest::Contains("even"), tg::Error);
    CHECK_THROWS_WITH_AS(tpx.prelu(Tensor::ones({2})), doctest::Contains("one per channel"),
                         tg::Error);
  }

  TEST_CASE("kl_div and huber_loss: reductions, log_target, delta") {
    CheckBatch b;
    Arr lp = random_arr({2, 5}, -3, 0, kF32, 5), tg_ = random_arr({2, 5}, 0, 1, kF32, 6);
    tg_.v[3] = 0; // xlogy(0, 0) = 0
    Tensor tlp = to_tensor(lp, kF32), ttg = to_tensor(tg_, kF32);
    Arr kl = zip(lp, tg_, [](double x, double t) { return t > 0 ? t * (std::log(t) - x) : 0.0; });
    double ks = 0;
    for (double v : kl.v) ks += v;
    b.add(tlp.kl_div(ttg, "none"), kl, tol_for(kF32, 4), "kl_div none");
    b.add(tlp.kl_div(ttg, "sum"), Arr{{}, {ks}}, tol_for(kF32, 4), "kl_div sum");
    b.add(tlp.kl_div(ttg), Arr{{}, {ks / 10}}, tol_for(kF32, 4), "kl_div mean");
    b.add(tlp.kl_div(ttg, "batchmean"), Arr{{}, {ks / 2}}, tol_for(kF32, 4), "kl_div batchmean");
    Arr ltg = random_arr({2, 5}, -3, 0, kF32, 7);
    b.add(tlp.kl_div(to_tensor(ltg, kF32), "none", true),
          zip(lp, ltg, [](double x, double t) { return std::exp(t) * (t - x); }), tol_for(kF32, 4),
          "kl_div log_target");
    Arr hx = random_arr({3, 4}, -3, 3, kF32, 8), ht = random_arr({3, 4}, -3, 3, kF32, 9);
    Tensor thx = to_tensor(hx, kF32), tht = to_tensor(ht, kF32);
    for (double delta : {1.0, 0.5, 2.5}) {
      Arr h = zip(hx, ht, [&](double x, double t) {
        const double d = std::abs(x - t);
        return d < delta ? 0.5 * d * d : delta * (d - 0.5 * delta);
      });
      double s = 0;
      for (double v : h.v) s += v;
      b.add(thx.huber_loss(tht, "none", delta), h, tol_for(kF32),
            "huber none " + std::to_string(delta));
      b.add(thx.huber_loss(tht, "mean", delta), Arr{{}, {s / 12}}, tol_for(kF32, 4), "huber mean");
      b.add(thx.huber_loss(tht, "sum", delta), Arr{{}, {s}}, tol_for(kF32, 4), "huber sum");
    }
    b.run();
    CHECK_THROWS_WITH_AS(tlp.kl_div(ttg, "avg"), doctest::Contains("batchmean"), tg::Error);
    CHECK_THROWS_WITH_AS(thx.huber_loss(tht, "batchmean"), doctest::Contains("reduction"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(thx.huber_loss(tht, "mean", 0), doctest::Contains("delta"), tg::Error);
    CHECK_THROWS_WITH_AS(thx.huber_loss(tlp), doctest::Contains("same shape"), tg::Error);
  }

  TEST_CASE("adaptive_max_pool1d/2d (with indices), max_pool3d, avg_pool3d") {
    CheckBatch b;
    Arr x = random_arr({2, 2, 5, 7}, -3, 3, kF32, 10);
    Tensor tx = to_tensor(x, kF32);
    for (auto [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {5, 7}, {3, 4}, {1, 1}}) {
      Arr vals = generate({2, 2, oh, ow}, [&](auto& i) {
        auto [y0, y1] = bin(i[2], 5, oh);
        auto [x0, x1] = bin(i[3], 7, ow);
        double m = -kInf;
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t xx = x0; xx < x1; ++xx) m = std::max(m, at(x, {i[0], i[1], y, xx}));
        return m;
      });
      Arr idx = generate({2, 2, oh, ow}, [&](auto& i) {
        auto [y0, y1] = bin(i[2], 5, oh);
        auto [x0, x1] = bin(i[3], 7, ow);
        double m = -kInf, best = -1;
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t xx = x0; xx < x1; ++xx)
            if (at(x, {i[0], i[1], y, xx}) > m)
              m = at(x, {i[0], i[1], y, xx}), best = static_cast<double>(y * 7 + xx);
        return best;
      });
      const std::string s = std::to_string(oh) + "x" + std::to_string(ow);
      b.exact(tx.adaptive_max_pool2d({oh, ow}), vals, "adaptive_max_pool2d " + s);
      auto [v, i] = tx.adaptive_max_pool2d_with_indices({oh, ow});
      b.exact(v, vals, "adaptive_max_pool2d_with_indices values " + s);
      b.exact(i, idx, "adaptive_max_pool2d indices " + s, dtypes::int32);
    }
    Arr x1 = random_arr({2, 9}, -3, 3, kF32, 11);
    auto [v1, i1] = to_tensor(x1, kF32).adaptive_max_pool1d_with_indices(4);
    b.exact(v1,
            generate({2, 4},
                     [&](auto& i) {
                       auto [a0, a1] = bin(i[1], 9, 4);
                       double m = -kInf;
                       for (int64_t k = a0; k < a1; ++k) m = std::max(m, at(x1, {i[0], k}));
                       return m;
                     }),
            "adaptive_max_pool1d (unbatched 2-D input)");
    // 3-D pools over (D, H, W) = (4, 5, 6): kernel 2, stride (2, 1, 3), padding 1 for max.
    Arr x3 = random_arr({1, 2, 4, 5, 6}, -3, 3, kF32, 12);
    Tensor t3 = to_tensor(x3, kF32);
    const std::vector<int64_t> k{2, 3, 2}, st{2, 1, 3}, pd{1, 1, 0}, in{4, 5, 6};
    std::vector<int64_t> o(3);
    for (size_t j = 0; j < 3; ++j) o[j] = (in[j] + 2 * pd[j] - k[j]) / st[j] + 1;
    Arr mp = generate({1, 2, o[0], o[1], o[2]}, [&](auto& i) {
      double m = -kInf;
      for (int64_t a = 0; a < k[0]; ++a)
        for (int64_t c = 0; c < k[1]; ++c)
          for (int64_t e = 0; e < k[2]; ++e) {
            const int64_t z = i[2] * st[0] - pd[0] + a, y = i[3] * st[1] - pd[1] + c,
                          xx = i[4] * st[2] - pd[2] + e;
            if (z < 0 || z >= 4 || y < 0 || y >= 5 || xx < 0 || xx >= 6) continue;
            m = std::max(m, at(x3, {i[0], i[1], z, y, xx}));
          }
      return m;
    });
    b.exact(t3.max_pool3d({2, 3, 2}, std::vector<int64_t>{2, 1, 3}, {1, 1, 0}), mp, "max_pool3d");
    auto avg = [&](bool include_pad) {
      return generate({1, 2, o[0], o[1], o[2]}, [&](auto& i) {
        double s = 0, n = 0;
        for (int64_t a = 0; a < k[0]; ++a)
          for (int64_t c = 0; c < k[1]; ++c)
            for (int64_t e = 0; e < k[2]; ++e) {
              const int64_t z = i[2] * st[0] - pd[0] + a, y = i[3] * st[1] - pd[1] + c,
                            xx = i[4] * st[2] - pd[2] + e;
              n += include_pad ? 1 : 0;
              if (z < 0 || z >= 4 || y < 0 || y >= 5 || xx < 0 || xx >= 6) continue;
              n += include_pad ? 0 : 1;
              s += at(x3, {i[0], i[1], z, y, xx});
            }
        return s / n;
      });
    };
    b.add(t3.avg_pool3d({2, 3, 2}, std::vector<int64_t>{2, 1, 3}, {1, 1, 0}), avg(true),
          tol_for(kF32, 4), "avg_pool3d");
    b.add(t3.avg_pool3d({2, 3, 2}, std::vector<int64_t>{2, 1, 3}, {1, 1, 0}, false, false),
          avg(false), tol_for(kF32, 4), "avg_pool3d count_include_pad=false");
    auto [mv, mi] = t3.max_pool3d_with_indices(2);
    b.exact(mi,
            generate({1, 2, 2, 2, 3},
                     [&](auto& i) {
                       double m = -kInf, best = -1;
                       for (int64_t a = 0; a < 2; ++a)
                         for (int64_t c = 0; c < 2; ++c)
                           for (int64_t e = 0; e < 2; ++e) {
                             const int64_t z = i[2] * 2 + a, y = i[3] * 2 + c, xx = i[4] * 2 + e;
                             if (at(x3, {i[0], i[1], z, y, xx}) > m)
                               m = at(x3, {i[0], i[1], z, y, xx}),
                               best = static_cast<double>((z * 5 + y) * 6 + xx);
                           }
                       return best;
                     }),
            "max_pool3d indices (flat in the (D, H, W) volume)");
    b.run();
    CHECK(mv.shape() == Shape{1, 2, 2, 2, 3});
    CHECK_THROWS_WITH_AS(tx.adaptive_max_pool2d({2, 3, 4}), doctest::Contains("output_size"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::ones({4, 4}).max_pool3d(2), doctest::Contains("dimensions"),
                         tg::Error);
  }

  TEST_CASE("interpolate: bicubic (align_corners both ways) and area") {
    CheckBatch b;
    Arr x = random_arr({1, 2, 4, 5}, -3, 3, kF32, 13);
    Tensor tx = to_tensor(x, kF32);
    for (auto [oh, ow] :
         std::vector<std::pair<int64_t, int64_t>>{{8, 10}, {3, 7}, {4, 5}, {1, 2}}) {
      const std::string s = std::to_string(oh) + "x" + std::to_string(ow);
      b.add(tx.interpolate(Tensor::IntOrTuple{oh, ow}, {}, "bicubic"),
            bicubic_ref(x, oh, ow, false), tol_for(kF32, 4), "bicubic " + s);
      b.add(tx.interpolate(Tensor::IntOrTuple{oh, ow}, {}, "bicubic", true),
            bicubic_ref(x, oh, ow, true), tol_for(kF32, 4), "bicubic align_corners " + s);
    }
    // Area: adaptive average pooling, also by scale_factor.
    auto area = [&](int64_t oh, int64_t ow) {
      return generate({1, 2, oh, ow}, [&](auto& i) {
        auto [y0, y1] = bin(i[2], 4, oh);
        auto [x0, x1] = bin(i[3], 5, ow);
        double s = 0;
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t xx = x0; xx < x1; ++xx) s += at(x, {i[0], i[1], y, xx});
        return s / static_cast<double>((y1 - y0) * (x1 - x0));
      });
    };
    b.add(tx.interpolate(Tensor::IntOrTuple{3, 2}, {}, "area"), area(3, 2), tol_for(kF32, 4),
          "area 3x2");
    b.add(tx.interpolate({}, {0.5}, "area"), area(2, 2), tol_for(kF32, 4), "area scale 0.5");
    Arr x1 = random_arr({1, 1, 7}, -3, 3, kF32, 14);
    b.add(to_tensor(x1, kF32).interpolate(Tensor::IntOrTuple{3}, {}, "area"),
          generate({1, 1, 3},
                   [&](auto& i) {
                     auto [a0, a1] = bin(i[2], 7, 3);
                     double s = 0;
                     for (int64_t k = a0; k < a1; ++k) s += at(x1, {0, 0, k});
                     return s / static_cast<double>(a1 - a0);
                   }),
          tol_for(kF32, 4), "area 1-D");
    b.run();
    CHECK_THROWS_WITH_AS(to_tensor(x1, kF32).interpolate(Tensor::IntOrTuple{3}, {}, "bicubic"),
                         doctest::Contains("4-D"), tg::Error);
    CHECK_THROWS_WITH_AS(tx.interpolate(Tensor::IntOrTuple{3, 2}, {}, "area", true),
                         doctest::Contains("align_corners"), tg::Error);
    CHECK_THROWS_WITH_AS(tx.interpolate(Tensor::IntOrTuple{3, 2}, {}, "lanczos"),
                         doctest::Contains("not supported"), tg::Error);
  }

  TEST_CASE("gradients of the nn ops, pools and interpolate modes (float64 finite differences)") {
    using V = std::vector<Tensor>;
    GradcheckOptions o;
    CHECK(gradcheck([](const V& x) { return x[0].cosine_similarity(x[1]); }, {{3, 4}, {3, 4}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].normalize(2, 1); }, {{2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].pixel_shuffle(2); }, {{1, 4, 2, 2}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].pixel_unshuffle(2); }, {{1, 1, 2, 4}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].softmin(1); }, {{2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].glu(1); }, {{2, 4}}, o));
    CHECK(gradcheck_at([](const V& x) { return x[0].prelu(x[1]); },
                       {away_from({2, 3, 2}, -2, 2, 3, {0}), Arr{{3}, {0.1, -0.5, 2.0}}}));
    GradcheckOptions pos = o;
    pos.lo = 0.1, pos.hi = 1;
    CHECK(gradcheck([](const V& x) { return x[0].log().kl_div(x[1], "batchmean"); },
                    {{2, 3}, {2, 3}}, pos));
    CHECK(
        gradcheck([](const V& x) { return x[0].kl_div(x[1], "sum", true); }, {{2, 3}, {2, 3}}, o));
    CHECK(
        gradcheck_at([](const V& x) { return x[0].huber_loss(x[1], "mean", 0.7); },
                     {Arr{{5}, {-2.0, -0.3, 0.1, 0.5, 2.0}}, Arr{{5}, {0.0, 0.0, 0.0, 0.0, 0.0}}}));
    // Pools on distinct values (random floats): the gradient goes to each window's maximum.
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].adaptive_max_pool2d({2, 3});
        },
        {{1, 1, 3, 5}}, o));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].max_pool3d(2, std::vector<int64_t>{1, 2, 2});
        },
        {{1, 1, 3, 3, 4}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].avg_pool3d(2, {}, 1, false, false); },
                    {{1, 1, 3, 2, 3}}, o));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].interpolate(Tensor::IntOrTuple{5, 3}, {}, "bicubic");
        },
        {{1, 1, 3, 4}}, o));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].interpolate(Tensor::IntOrTuple{2, 3}, {}, "area");
        },
        {{1, 1, 3, 5}}, o));
  }
}
