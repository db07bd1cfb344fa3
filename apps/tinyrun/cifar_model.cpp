#include "cifar_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numeric>

#include "tg/error.hpp"

namespace tinyrun {

using tg::Tensor;
namespace nn = tg::nn;

Tensor quick_gelu(const Tensor& x) { return x * (x * 1.702).sigmoid(); }

HlbBatchNorm::HlbBatchNorm(int64_t channels)
    : weight(buffer("weight", Tensor::ones({channels}))),
      bias(param("bias", Tensor::zeros({channels}))) {}

// The variance reads the mean detached (its derivative through the mean is 0), as tinygrad's
// UnsyncedBatchNorm.calc_stats.
Tensor HlbBatchNorm::operator()(const Tensor& x) const {
  const Tensor mean = x.mean({0, 2, 3}, true);
  const Tensor centred = x - mean.detach();
  const Tensor invstd = ((centred * centred).mean({0, 2, 3}, true) + 1e-12).rsqrt();
  const int64_t c = x.size(1);
  return (x - mean) * (invstd * weight.reshape({1, c, 1, 1})) + bias.reshape({1, c, 1, 1});
}

ConvGroup::ConvGroup(int64_t ci, int64_t co)
    : conv1(child("conv1", std::make_unique<nn::Conv2d>(ci, co, 3, 1, 1, 1, 1, false))),
      conv2(child("conv2", std::make_unique<nn::Conv2d>(co, co, 3, 1, 1, 1, 1, false))),
      norm1(child("norm1", std::make_unique<HlbBatchNorm>(co))),
      norm2(child("norm2", std::make_unique<HlbBatchNorm>(co))) {}

Tensor ConvGroup::operator()(const Tensor& x) const {
  Tensor h = quick_gelu(norm1(conv1(x).max_pool2d(2)));
  const Tensor residual = h;
  h = quick_gelu(norm2(conv2(h)));
  return h + residual;
}

// Children are named by their index in tinygrad's `net` list (the lambdas take the others).
SpeedyResNet::SpeedyResNet(const Tensor& whitening)
    : whitening_(buffer("whitening", whitening)),
      conv0(child("net.0", std::make_unique<nn::Conv2d>(12, 32, 1, 1, 0, 1, 1, false))),
      group1(child("net.2", std::make_unique<ConvGroup>(32, 64))),
      group2(child("net.3", std::make_unique<ConvGroup>(64, 256))),
      group3(child("net.4", std::make_unique<ConvGroup>(256, 512))),
      fc(child("net.6", std::make_unique<nn::Linear>(512, 10, false))) {}

Tensor SpeedyResNet::forward(const Tensor& x) const {
  // The 2x2 whitening conv leaves 31x31; one pixel of zeros left and below makes 32x32.
  Tensor h = x.conv2d(whitening_).pad({1, 0, 0, 1});
  h = quick_gelu(conv0(h));
  h = group3(group2(group1(h)));
  return fc(h.max({2, 3})) / 9.0;
}

Tensor SpeedyResNet::operator()(const Tensor& x, bool tta) const {
  if (x.ndim() != 4 || x.size(1) != 3 || x.size(2) != 32 || x.size(3) != 32)
    throw tg::Error("SpeedyResNet: the input must be (N, 3, 32, 32) images, got " + x.str());
  if (!tta) return forward(x);
  return (forward(x) + forward(x.flip({3}))) / 2.0;
}

std::vector<Tensor> SpeedyResNet::bias_params() const {
  std::vector<Tensor> out;
  for (const auto& [name, t] : named_state())
    if (t.requires_grad() && name.find("bias") != std::string::npos) out.push_back(t);
  return out;
}

std::vector<Tensor> SpeedyResNet::non_bias_params() const {
  std::vector<Tensor> out;
  for (const auto& [name, t] : named_state())
    if (t.requires_grad() && name.find("bias") == std::string::npos) out.push_back(t);
  return out;
}

namespace {

constexpr int kPatch = 12; // 3 channels x 2 x 2

// Eigenvalues and eigenvectors (columns of v) of the symmetric a, by cyclic Jacobi rotations.
void jacobi_eigen(std::array<std::array<double, kPatch>, kPatch>& a,
                  std::array<std::array<double, kPatch>, kPatch>& v) {
  for (int i = 0; i < kPatch; ++i)
    for (int j = 0; j < kPatch; ++j) v[i][j] = i == j;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int p = 0; p < kPatch; ++p)
      for (int q = p + 1; q < kPatch; ++q) off += a[p][q] * a[p][q];
    if (off < 1e-30) return;
    for (int p = 0; p < kPatch; ++p)
      for (int q = p + 1; q < kPatch; ++q) {
        if (std::abs(a[p][q]) < 1e-300) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < kPatch; ++k) { // columns p, q
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < kPatch; ++k) { // rows p, q
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < kPatch; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
  }
}

} // namespace

Tensor whitening_filter(const std::vector<float>& images, int64_t n) {
  constexpr int64_t side = tg::data::kCifarSide, plane = side * side;
  if (n < 1 || images.size() != static_cast<size_t>(n * 3 * plane))
    throw tg::Error("whitening_filter: expected " + std::to_string(n) + " images of 3x32x32");
  // Sum of outer products of every patch (c, dy, dx) in tinygrad's order (c*4 + dy*2 + dx),
  // without centring, as the recipe.
  std::array<std::array<double, kPatch>, kPatch> cov{};
  std::array<double, kPatch> p{};
  for (int64_t i = 0; i < n; ++i) {
    const float* img = images.data() + i * 3 * plane;
    for (int64_t y = 0; y + 1 < side; ++y)
      for (int64_t x = 0; x + 1 < side; ++x) {
        for (int c = 0; c < 3; ++c)
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx)
              p[c * 4 + dy * 2 + dx] = img[c * plane + (y + dy) * side + x + dx];
        for (int a = 0; a < kPatch; ++a)
          for (int b = a; b < kPatch; ++b) cov[a][b] += p[a] * p[b];
      }
  }
  const double count = static_cast<double>(n) * (side - 1) * (side - 1);
  for (int a = 0; a < kPatch; ++a)
    for (int b = a; b < kPatch; ++b) cov[b][a] = cov[a][b] = cov[a][b] / (count - 1);
  std::array<std::array<double, kPatch>, kPatch> vecs{};
  jacobi_eigen(cov, vecs);
  std::array<int, kPatch> order{};
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return cov[a][a] > cov[b][b]; });
  std::vector<float> w(kPatch * kPatch);
  for (int o = 0; o < kPatch; ++o) {
    const int e = order[o];
    const double scale = 1 / std::sqrt(std::max(cov[e][e], 0.0) + 1e-2);
    for (int k = 0; k < kPatch; ++k) w[o * kPatch + k] = static_cast<float>(vecs[k][e] * scale);
  }
  return Tensor::from_vector(w, tg::Shape{kPatch, 3, 2, 2}).realize();
}

} // namespace tinyrun
