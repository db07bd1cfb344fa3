// tg::nn layers beyond the first set (Conv1d, ConvTranspose2d, GroupNorm, InstanceNorm2d,
// RMSNorm, Dropout, LSTMCell): each forward against a plain double loop on small odd shapes,
// the state-dict keys and shapes PyTorch gives, the default initialisation's range, and
// errors for wrong input shapes and options.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "nn/nn_test_util.hpp"
#include "tg/error.hpp"
#include "tg/nn.hpp"

using namespace tg;
using nn_test::error_of;
using nn_test::has;

namespace {

std::vector<double> vals(const Tensor& t) {
  const std::vector<float> f = t.to_vector<float>();
  return {f.begin(), f.end()};
}

Tensor randn_realized(const Shape& s) { return Tensor::randn(s).realize(); }

void check_close(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-4) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - want[i]) / (1 + std::abs(want[i])));
  CHECK(worst <= tol);
}

std::set<std::string> keys_of(const nn::Module& m) {
  std::set<std::string> k;
  for (const auto& [name, t] : m.named_state()) k.insert(name);
  return k;
}

// PyTorch's default init: every value within +-bound, and spread (not a constant).
void check_uniform_init(const Tensor& t, double bound) {
  const std::vector<double> v = vals(t);
  double lo = 1e9, hi = -1e9;
  for (double x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  CHECK(lo >= -bound);
  CHECK(hi <= bound);
  CHECK(hi - lo > bound / 2);
}

} // namespace

TEST_SUITE("nn.layers_reference") {
  TEST_CASE("Conv1d: strided, padded, dilated, grouped, against a loop") {
    Tensor::manual_seed(11);
    const int64_t n = 2, cin = 4, cout = 6, k = 3, len = 9, s = 2, p = 1, d = 2, g = 2;
    nn::Conv1d conv(cin, cout, k, s, p, d, g);
    CHECK(keys_of(conv) == std::set<std::string>{"weight", "bias"});
    CHECK(conv.weight.shape() == Shape{cout, cin / g, k});
    CHECK(conv.bias->shape() == Shape{cout});
    CHECK(conv.get_parameters().size() == 2);
    check_uniform_init(conv.weight, 1 / std::sqrt(double(cin / g * k)));
    check_uniform_init(*conv.bias, 1 / std::sqrt(double(cin / g * k)));

    Tensor x = randn_realized({n, cin, len});
    const std::vector<double> xv = vals(x), w = vals(conv.weight), b = vals(*conv.bias);
    const int64_t lout = (len + 2 * p - d * (k - 1) - 1) / s + 1, cg = cin / g, og = cout / g;
    std::vector<double> want(static_cast<size_t>(n * cout * lout));
    for (int64_t b_ = 0; b_ < n; ++b_)
      for (int64_t o = 0; o < cout; ++o)
        for (int64_t t = 0; t < lout; ++t) {
          double acc = b[o];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t kk = 0; kk < k; ++kk) {
              const int64_t pos = t * s - p + kk * d, c = (o / og) * cg + ci;
              if (pos >= 0 && pos < len)
                acc += w[(o * cg + ci) * k + kk] * xv[(b_ * cin + c) * len + pos];
            }
          want[(b_ * cout + o) * lout + t] = acc;
        }
    Tensor y = conv(x);
    CHECK(y.shape() == Shape{n, cout, lout});
    check_close(vals(y), want);
    // Unbatched input (C, L) gives (C_out, L_out).
    CHECK(conv(x[0]).shape() == Shape{cout, lout});

    CHECK(has(error_of([&] { (void)conv(Tensor::ones({n, 3, len})); }), "channels"));
    CHECK(has(error_of([&] { (void)conv(Tensor::ones({n, cin, 3, 3})); }), "dimensions"));
    CHECK(has(error_of([] { nn::Conv1d(4, 6, 3, 1, 0, 1, 4); }), "groups"));
    CHECK(has(error_of([] { nn::Conv1d(4, 6, {3, 3}); }), "kernel_size"));
    nn::Conv1d nobias(3, 2, 2, 1, 0, 1, 1, false);
    CHECK(keys_of(nobias) == std::set<std::string>{"weight"});
  }

  TEST_CASE("ConvTranspose2d: stride, padding, output_padding, dilation, groups, against a loop") {
    Tensor::manual_seed(12);
    const int64_t n = 2, cin = 4, cout = 6, g = 2, kh = 3, kw = 2, hin = 3, win = 4;
    const int64_t sh = 2, sw = 3, ph = 1, pw = 0, oph = 1, opw = 2, dh = 2, dw = 1;
    nn::ConvTranspose2d conv(cin, cout, {kh, kw}, {sh, sw}, {ph, pw}, {oph, opw}, g, true,
                             {dh, dw});
    CHECK(keys_of(conv) == std::set<std::string>{"weight", "bias"});
    CHECK(conv.weight.shape() == Shape{cin, cout / g, kh, kw});
    // PyTorch's fan_in for a transposed convolution is weight.size(1) * kernel = out/g * kh*kw.
    const double bound = 1 / std::sqrt(double(cout / g * kh * kw));
    check_uniform_init(conv.weight, bound);
    check_uniform_init(*conv.bias, bound);

    Tensor x = randn_realized({n, cin, hin, win});
    const std::vector<double> xv = vals(x), w = vals(conv.weight), b = vals(*conv.bias);
    const int64_t hout = (hin - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1;
    const int64_t wout = (win - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1;
    const int64_t cg = cin / g, og = cout / g;
    std::vector<double> want(static_cast<size_t>(n * cout * hout * wout));
    for (int64_t b_ = 0; b_ < n; ++b_)
      for (int64_t o = 0; o < cout; ++o)
        for (int64_t i = 0; i < hout * wout; ++i) want[(b_ * cout + o) * hout * wout + i] = b[o];
    // Scatter form: each input element adds weight * x to the outputs it reaches.
    for (int64_t b_ = 0; b_ < n; ++b_)
      for (int64_t ci = 0; ci < cin; ++ci)
        for (int64_t ih = 0; ih < hin; ++ih)
          for (int64_t iw = 0; iw < win; ++iw)
            for (int64_t ol = 0; ol < og; ++ol)
              for (int64_t a = 0; a < kh; ++a)
                for (int64_t c = 0; c < kw; ++c) {
                  const int64_t oh = ih * sh - ph + a * dh, ow = iw * sw - pw + c * dw;
                  if (oh < 0 || oh >= hout || ow < 0 || ow >= wout) continue;
                  const int64_t o = (ci / cg) * og + ol;
                  want[((b_ * cout + o) * hout + oh) * wout + ow] +=
                      w[((ci * og + ol) * kh + a) * kw + c] *
                      xv[((b_ * cin + ci) * hin + ih) * win + iw];
                }
    Tensor y = conv(x);
    CHECK(y.shape() == Shape{n, cout, hout, wout});
    check_close(vals(y), want);

    CHECK(has(error_of([&] { (void)conv(Tensor::ones({n, 3, hin, win})); }), "channels"));
    CHECK(has(error_of([&] { (void)conv(Tensor::ones({cin, hin})); }), "dimensions"));
    CHECK(has(error_of([] { nn::ConvTranspose2d(4, 6, 3, 2, 0, 2); }), "output_padding"));
    CHECK(has(error_of([] { nn::ConvTranspose2d(4, 6, 3, 1, 0, 0, 4); }), "groups"));
  }

  TEST_CASE("GroupNorm against a loop; keys; bad groups and inputs") {
    Tensor::manual_seed(13);
    const int64_t n = 2, c = 6, h = 3, w = 5, groups = 3;
    nn::GroupNorm gn(groups, c, 0.1); // an eps large enough to matter
    CHECK(keys_of(gn) == std::set<std::string>{"weight", "bias"});
    CHECK(vals(*gn.weight) == std::vector<double>(c, 1.0));
    CHECK(vals(*gn.bias) == std::vector<double>(c, 0.0));
    gn.load_state_dict({{"weight", randn_realized({c})}, {"bias", randn_realized({c})}});
    Tensor x = (randn_realized({n, c, h, w}) * 3 + 1).realize();
    const std::vector<double> xv = vals(x), wt = vals(*gn.weight), bs = vals(*gn.bias);
    const int64_t per = c / groups * h * w;
    std::vector<double> want(xv.size());
    for (int64_t b = 0; b < n; ++b)
      for (int64_t gi = 0; gi < groups; ++gi) {
        const int64_t off = (b * c + gi * (c / groups)) * h * w;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < per; ++i) mean += xv[off + i] / per;
        for (int64_t i = 0; i < per; ++i) var += (xv[off + i] - mean) * (xv[off + i] - mean) / per;
        for (int64_t i = 0; i < per; ++i) {
          const int64_t ch = (off + i) / (h * w) % c;
          want[off + i] = (xv[off + i] - mean) / std::sqrt(var + 0.1) * wt[ch] + bs[ch];
        }
      }
    check_close(vals(gn(x)), want);
    CHECK(keys_of(nn::GroupNorm(2, 4, 1e-5, false)).empty());
    CHECK(has(error_of([] { nn::GroupNorm(4, 6); }), "divisible"));
    CHECK(has(error_of([&] { (void)gn(Tensor::ones({n, 4, h, w})); }), "(N, 6, *)"));
  }

  TEST_CASE("InstanceNorm2d: plain and affine with running statistics, against a loop") {
    Tensor::manual_seed(14);
    const int64_t n = 3, c = 2, h = 3, w = 5, hw = h * w;
    Tensor x = (randn_realized({n, c, h, w}) * 2 - 0.5).realize();
    const std::vector<double> xv = vals(x);
    // Per (sample, channel) mean and biased variance.
    std::vector<double> mu(n * c), var(n * c);
    for (int64_t i = 0; i < n * c; ++i) {
      for (int64_t j = 0; j < hw; ++j) mu[i] += xv[i * hw + j] / hw;
      for (int64_t j = 0; j < hw; ++j) var[i] += std::pow(xv[i * hw + j] - mu[i], 2) / hw;
    }
    nn::InstanceNorm2d plain(c);
    CHECK(keys_of(plain).empty()); // affine and track_running_stats default to false
    std::vector<double> want(xv.size());
    for (size_t i = 0; i < xv.size(); ++i)
      want[i] = (xv[i] - mu[i / hw]) / std::sqrt(var[i / hw] + 1e-5);
    check_close(vals(plain(x)), want);
    // Unbatched (C, H, W).
    Tensor x0 = x[0];
    check_close(vals(plain(x0)), std::vector<double>(want.begin(), want.begin() + c * hw));

    // InstanceNorm1d over (N, C, L) normalises the same rows.
    nn::InstanceNorm1d plain1(c);
    check_close(vals(plain1(x.reshape({n, c, hw}))), want);
    CHECK(has(error_of([&] { (void)plain1(x); }), "InstanceNorm1d: expected 2-D"));

    nn::InstanceNorm2d in(c, 1e-5, 0.2, true, true);
    CHECK(keys_of(in) == std::set<std::string>{"weight", "bias", "running_mean", "running_var",
                                               "num_batches_tracked"});
    CHECK(in.get_parameters().size() == 2);
    in.load_state_dict({{"weight", Tensor::from_vector(std::vector<float>{1.5f, -0.5f})},
                        {"bias", Tensor::from_vector(std::vector<float>{0.25f, 2.0f})},
                        {"running_mean", Tensor::from_vector(std::vector<float>{0.5f, -1.0f})},
                        {"running_var", Tensor::from_vector(std::vector<float>{2.0f, 0.5f})},
                        {"num_batches_tracked", Tensor::zeros({}, dtypes::int64)}});
    const double wt[] = {1.5, -0.5}, bs[] = {0.25, 2.0};
    {
      Train train;
      std::vector<double> want_t(xv.size());
      for (size_t i = 0; i < xv.size(); ++i)
        want_t[i] =
            (xv[i] - mu[i / hw]) / std::sqrt(var[i / hw] + 1e-5) * wt[i / hw % c] + bs[i / hw % c];
      check_close(vals(in(x)), want_t);
    }
    // Running statistics: 0.8 * old + 0.2 * the batch mean of instance means / unbiased vars.
    const double rm0[] = {0.5, -1.0}, rv0[] = {2.0, 0.5};
    std::vector<double> rm(c), rv(c);
    for (int64_t ch = 0; ch < c; ++ch) {
      double m = 0, v = 0;
      for (int64_t b = 0; b < n; ++b) {
        m += mu[b * c + ch] / n;
        v += var[b * c + ch] * hw / (hw - 1) / n;
      }
      rm[ch] = 0.8 * rm0[ch] + 0.2 * m;
      rv[ch] = 0.8 * rv0[ch] + 0.2 * v;
    }
    check_close(vals(*in.running_mean), rm);
    check_close(vals(*in.running_var), rv);
    // Eval normalises with the running statistics.
    std::vector<double> want_e(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      const size_t ch = i / hw % c;
      want_e[i] = (xv[i] - rm[ch]) / std::sqrt(rv[ch] + 1e-5) * wt[ch] + bs[ch];
    }
    check_close(vals(in(x)), want_e);

    CHECK(has(error_of([&] { (void)plain(Tensor::ones({n, c})); }), "3-D (unbatched) or 4-D"));
    CHECK(has(error_of([&] { (void)in(Tensor::ones({n, 3, h, w})); }), "num_features=2"));
    CHECK(has(error_of([&] { (void)plain(Tensor::ones({n, c, 1, 1})); }), "spatial"));
  }

  TEST_CASE("RMSNorm against a loop; default eps; keys; bad shapes") {
    Tensor::manual_seed(15);
    nn::RMSNorm rms({3, 5});
    CHECK(keys_of(rms) == std::set<std::string>{"weight"});
    CHECK(rms.weight->shape() == Shape{3, 5});
    rms.load_state_dict({{"weight", randn_realized({3, 5})}});
    Tensor x = (randn_realized({2, 3, 5}) * 0.01).realize(); // small: eps matters
    const std::vector<double> xv = vals(x), wt = vals(*rms.weight);
    const double eps = std::numeric_limits<float>::epsilon();
    std::vector<double> want(xv.size());
    for (size_t b = 0; b < 2; ++b) {
      double ms = 0;
      for (size_t i = 0; i < 15; ++i) ms += xv[b * 15 + i] * xv[b * 15 + i] / 15;
      for (size_t i = 0; i < 15; ++i)
        want[b * 15 + i] = xv[b * 15 + i] / std::sqrt(ms + eps) * wt[i];
    }
    check_close(vals(rms(x)), want);
    nn::RMSNorm plain({5}, 0.5, false);
    CHECK(keys_of(plain).empty());
    const std::vector<double> r = vals(plain(x));
    double ms = 0;
    for (size_t i = 0; i < 5; ++i) ms += xv[i] * xv[i] / 5;
    CHECK(r[0] == doctest::Approx(xv[0] / std::sqrt(ms + 0.5)).epsilon(1e-4));
    CHECK(has(error_of([&] { (void)rms(Tensor::ones({2, 5, 3})); }), "rms_norm"));
    CHECK_THROWS_AS(nn::RMSNorm({0}), Error);
  }

  TEST_CASE("Dropout: identity in eval; in training about p zeros, survivors scaled 1/(1-p)") {
    Tensor::manual_seed(16);
    nn::Dropout drop(0.3);
    CHECK(keys_of(drop).empty());
    Tensor x = (randn_realized({101, 99}) + 3).realize(); // no zeros of its own
    const std::vector<double> xv = vals(x);
    CHECK(vals(drop(x)) == xv);
    {
      Train train;
      const std::vector<double> y = vals(drop(x));
      size_t zeros = 0;
      double worst = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        if (y[i] == 0) {
          ++zeros;
          continue;
        }
        worst = std::max(worst, std::abs(y[i] - xv[i] / 0.7));
      }
      const double frac = double(zeros) / double(y.size());
      MESSAGE("dropped fraction " << frac << " (p = 0.3)");
      CHECK(frac == doctest::Approx(0.3).epsilon(0.05)); // 10k draws: sd 0.0046
      CHECK(worst <= 1e-5);
      // A second call draws a new mask.
      CHECK(vals(drop(x)) != y);
      CHECK(vals(nn::Dropout(0)(x)) == xv);
      CHECK(vals(nn::Dropout(1)(x)) == std::vector<double>(xv.size(), 0.0));
    }
    CHECK(has(error_of([] { nn::Dropout(1.5); }), "between 0 and 1"));
    CHECK_THROWS_AS(nn::Dropout(-0.1), Error);
  }

  TEST_CASE("LSTMCell against a loop: batched with a state, unbatched from zeros; errors") {
    Tensor::manual_seed(17);
    const int64_t n = 3, in = 5, hs = 4;
    nn::LSTMCell cell(in, hs);
    CHECK(keys_of(cell) == std::set<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"});
    CHECK(cell.weight_ih.shape() == Shape{4 * hs, in});
    CHECK(cell.weight_hh.shape() == Shape{4 * hs, hs});
    CHECK(cell.bias_ih->shape() == Shape{4 * hs});
    for (const Tensor& t : cell.get_parameters()) check_uniform_init(t, 1 / std::sqrt(double(hs)));

    Tensor x = randn_realized({n, in}), h = randn_realized({n, hs}), c = randn_realized({n, hs});
    const std::vector<double> wi = vals(cell.weight_ih), wh = vals(cell.weight_hh),
                              bi = vals(*cell.bias_ih), bh = vals(*cell.bias_hh);
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    // One step for `rows` rows of x, h, c (h, c zero when empty).
    auto loop = [&](const std::vector<double>& xv, const std::vector<double>& hv,
                    const std::vector<double>& cv, int64_t rows) {
      std::vector<double> h2(rows * hs), c2(rows * hs);
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<double> gate(4 * hs);
        for (int64_t j = 0; j < 4 * hs; ++j) {
          double acc = bi[j] + bh[j];
          for (int64_t k = 0; k < in; ++k) acc += wi[j * in + k] * xv[r * in + k];
          for (int64_t k = 0; k < hs; ++k)
            acc += wh[j * hs + k] * (hv.empty() ? 0.0 : hv[r * hs + k]);
          gate[j] = acc;
        }
        for (int64_t k = 0; k < hs; ++k) {
          const double ig = sig(gate[k]), fg = sig(gate[hs + k]), gg = std::tanh(gate[2 * hs + k]),
                       og = sig(gate[3 * hs + k]);
          c2[r * hs + k] = fg * (cv.empty() ? 0.0 : cv[r * hs + k]) + ig * gg;
          h2[r * hs + k] = og * std::tanh(c2[r * hs + k]);
        }
      }
      return std::pair{h2, c2};
    };
    auto [h2, c2] = cell(x, std::pair{h, c});
    CHECK(h2.shape() == Shape{n, hs});
    auto [wh2, wc2] = loop(vals(x), vals(h), vals(c), n);
    check_close(vals(h2), wh2);
    check_close(vals(c2), wc2);
    // Unbatched, no state: zeros.
    Tensor x1 = x[1];
    auto [h1, c1] = cell(x1);
    CHECK(h1.shape() == Shape{hs});
    auto [wh1, wc1] = loop(vals(x1), {}, {}, 1);
    check_close(vals(h1), wh1);
    check_close(vals(c1), wc1);
    // Two steps chain (the state feeds back).
    auto [h3, c3] = cell(x, std::pair{h2, c2});
    auto [wh3, wc3] = loop(vals(x), wh2, wc2, n);
    check_close(vals(h3), wh3);

    CHECK(has(error_of([&] { (void)cell(Tensor::ones({n, 4})); }), "input_size=5"));
    CHECK(has(error_of([&] {
                (void)cell(x, std::pair{Tensor::ones({n, 3}), c});
              }),
              "hidden state h"));
    CHECK(has(error_of([&] {
                (void)cell(x, std::pair{h, Tensor::ones({2, hs})});
              }),
              "hidden state c"));
    nn::LSTMCell nobias(2, 3, false);
    CHECK(keys_of(nobias) == std::set<std::string>{"weight_ih", "weight_hh"});
  }
  TEST_CASE("autograd reaches every parameter of every new layer") {
    Tensor::manual_seed(18);
    nn::Conv1d c1(3, 4, 3, 1, 1);
    nn::ConvTranspose2d ct(3, 4, 3, 2, 1, 1);
    nn::GroupNorm gn(2, 4);
    nn::InstanceNorm2d in(4, 1e-5, 0.1, true, true);
    nn::RMSNorm rms({5});
    nn::LSTMCell cell(5, 3);
    Tensor x1 = randn_realized({2, 3, 5}), x2 = randn_realized({2, 3, 3, 3}),
           x3 = randn_realized({2, 5});
    Train train; // InstanceNorm's batch statistics, Dropout active
    nn::Dropout drop(0.25);
    auto [h, c] = cell(rms(x3), std::pair{randn_realized({2, 3}), randn_realized({2, 3})});
    Tensor loss = drop(c1(x1)).square().sum() +
                  in(gn(ct(x2))).mul(randn_realized({2, 4, 6, 6})).sum() + h.sum() +
                  c.square().sum();
    loss.backward();
    std::vector<std::pair<std::string, Tensor>> params;
    for (const nn::Module* m : std::vector<const nn::Module*>{&c1, &ct, &gn, &in, &rms, &cell})
      for (const auto& [k, t] : m->named_state())
        if (t.requires_grad()) params.emplace_back(k, t);
    CHECK(params.size() == 13);
    for (const auto& [k, t] : params) {
      INFO("parameter " << k);
      REQUIRE(t.grad().defined());
      CHECK(t.grad().shape() == t.shape());
      const std::vector<double> g = vals(t.grad());
      double mx = 0;
      for (double v : g) {
        CHECK(std::isfinite(v));
        mx = std::max(mx, std::abs(v));
      }
      CHECK(mx > 0);
    }
  }
}
