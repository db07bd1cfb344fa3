// hlb's cutmix (apps/tinyrun/cifar_train.hpp): each image gets one size x size square, the same
// in every channel and inside the image, copied from the image its permutation names, and the
// targets are mixed by the square's area; a square that cannot fit is refused.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "cifar_train.hpp"
#include "tg/error.hpp"

using tg::Tensor;

TEST_SUITE("cifar.cutmix") {
  TEST_CASE("one square per image from its partner, targets mixed by the square's area") {
    constexpr int64_t B = 6, C = 3, H = 8, W = 7, K = 3, classes = 4;
    std::vector<float> px(B * C * H * W);
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<float>(i); // all distinct
    std::vector<float> tg_(B * classes, 0.0f);
    for (int64_t b = 0; b < B; ++b) tg_[static_cast<size_t>(b * classes + b % classes)] = 1.0f;
    const std::vector<int32_t> order{5, 4, 3, 2, 1, 0};
    Tensor::manual_seed(3);
    const auto [xs, ts] = tinyrun::hlb_cutmix(Tensor::from_vector(px, tg::Shape{B, C, H, W}),
                                              Tensor::from_vector(tg_, tg::Shape{B, classes}),
                                              Tensor::from_vector(order, tg::Shape{B}), K);
    const std::vector<float> x = xs.to_vector<float>(), t = ts.to_vector<float>();
    auto at = [](int64_t b, int64_t c, int64_t y, int64_t xx) {
      return static_cast<size_t>(((b * C + c) * H + y) * W + xx);
    };
    for (int64_t b = 0; b < B; ++b) {
      int64_t y0 = H, x0 = W, y1 = -1, x1 = -1, changed = 0;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t xx = 0; xx < W; ++xx) {
            const float v = x[at(b, c, y, xx)];
            if (v == px[at(b, c, y, xx)]) continue;
            CHECK(v == px[at(order[static_cast<size_t>(b)], c, y, xx)]); // from the partner
            ++changed;
            y0 = std::min(y0, y), y1 = std::max(y1, y), x0 = std::min(x0, xx),
            x1 = std::max(x1, xx);
          }
      CHECK(changed == C * K * K); // a whole K x K square in every channel, nothing else
      CHECK(y1 - y0 == K - 1);
      CHECK(x1 - x0 == K - 1);
      const double a = static_cast<double>(K * K) / (H * W);
      for (int64_t k = 0; k < classes; ++k) {
        const double want =
            a * tg_[static_cast<size_t>(order[static_cast<size_t>(b)] * classes + k)] +
            (1 - a) * tg_[static_cast<size_t>(b * classes + k)];
        CHECK(t[static_cast<size_t>(b * classes + k)] == doctest::Approx(want).epsilon(1e-6));
      }
    }
  }

  TEST_CASE("squares anywhere: over many draws every corner position occurs") {
    constexpr int64_t B = 64, H = 4, W = 4, K = 3;
    std::vector<float> px(B * H * W, 0.0f);
    std::vector<int32_t> order(B);
    for (int64_t b = 0; b < B; ++b)
      order[static_cast<size_t>(b)] = static_cast<int32_t>((b + 1) % B);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < H * W; ++i)
        px[static_cast<size_t>(b * H * W + i)] = b % 2 ? 1.0f : 0.0f;
    Tensor::manual_seed(11);
    const auto [xs, ts] =
        tinyrun::hlb_cutmix(Tensor::from_vector(px, tg::Shape{B, 1, H, W}), Tensor::ones({B, 2}),
                            Tensor::from_vector(order, tg::Shape{B}), K);
    const std::vector<float> x = xs.to_vector<float>();
    bool corner[2][2] = {{false, false}, {false, false}};
    for (int64_t b = 0; b < B; ++b) {
      const float mine = b % 2 ? 1.0f : 0.0f;
      for (int64_t y = 0; y + K <= H; ++y)
        for (int64_t xx = 0; xx + K <= W; ++xx)
          if (x[static_cast<size_t>(b * H * W + y * W + xx)] != mine &&
              x[static_cast<size_t>(b * H * W + (y + K - 1) * W + xx + K - 1)] != mine)
            corner[y][xx] = true;
    }
    CHECK((corner[0][0] && corner[0][1] && corner[1][0] && corner[1][1]));
  }

  TEST_CASE("a square larger than the image is refused") {
    CHECK_THROWS_WITH_AS(tinyrun::hlb_cutmix(Tensor::zeros({2, 1, 2, 2}), Tensor::zeros({2, 3}),
                                             Tensor::zeros({2}, tg::dtypes::int32), 3),
                         doctest::Contains("a 3x3 square does not fit 2x2 images"), tg::Error);
  }
}
