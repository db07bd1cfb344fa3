// LAMB and Muon against reference updates written here in double: LAMB as tinygrad's
// nn.optim.LAMB, Muon as Keller Jordan's SingleDeviceMuon (github.com/KellerJordan/Muon) with
// its quintic Newton-Schulz iteration. The problem is elementwise least squares,
// L = sum((w*x - y)^2), gradient 2(w*x - y)x computed by hand; several steps each.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/nn_test_util.hpp"
#include "tg/error.hpp"
#include "tg/optim.hpp"

using namespace tg;

namespace {

using Vec = std::vector<double>;

// Deterministic, irregular data of n values.
Vec data(size_t n, double a, double b) {
  Vec v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(a * double(i) + b) * (1 + 0.1 * double(i % 3));
  return v;
}

struct Problem {
  Shape shape;
  Vec w0, x, y;
  Vec grad(const Vec& w) const {
    Vec g(w.size());
    for (size_t i = 0; i < w.size(); ++i) g[i] = 2 * (w[i] * x[i] - y[i]) * x[i];
    return g;
  }
};

Problem problem(const Shape& shape) {
  size_t n = 1;
  for (const sint& d : shape) n *= static_cast<size_t>(int64_t{d});
  return {shape, data(n, 0.7, 0.3), data(n, 1.3, 1.1), data(n, 0.45, 2.0)};
}

Tensor tensor(const Vec& v, const Shape& s) {
  return Tensor::from_vector(std::vector<float>(v.begin(), v.end()), s).realize();
}

Vec run(const Problem& pb, const nn_test::MakeOptimizer& make, int steps) {
  return nn_test::least_squares_run(tensor(pb.w0, pb.shape), tensor(pb.x, pb.shape),
                                    tensor(pb.y, pb.shape), make, steps);
}

void check_close(const Vec& got, const Vec& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - want[i]) / (1e-1 + std::abs(want[i])));
  MESSAGE("worst relative error " << worst);
  CHECK(worst <= tol);
}

double norm(const Vec& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

Vec ref_lamb(const Problem& pb, double lr, double b1, double b2, double eps, double wd, bool adam,
             int steps) {
  Vec w = pb.w0, m(w.size()), v(w.size());
  for (int t = 1; t <= steps; ++t) {
    const Vec g = pb.grad(w);
    Vec up(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double mh = m[i] / (1 - std::pow(b1, t)), vh = v[i] / (1 - std::pow(b2, t));
      up[i] = mh / (std::sqrt(vh) + eps) + wd * w[i];
    }
    double r = 1;
    if (!adam) {
      const double r1 = norm(w), r2 = norm(up);
      r = r1 > 0 && r2 > 0 ? r1 / r2 : 1;
    }
    for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * r * up[i];
  }
  return w;
}

// Row-major (r x c) matrices.
Vec matmul(const Vec& a, const Vec& b, size_t r, size_t k, size_t c) {
  Vec o(r * c);
  for (size_t i = 0; i < r; ++i)
    for (size_t j = 0; j < c; ++j)
      for (size_t q = 0; q < k; ++q) o[i * c + j] += a[i * k + q] * b[q * c + j];
  return o;
}
Vec transpose(const Vec& a, size_t r, size_t c) {
  Vec o(r * c);
  for (size_t i = 0; i < r; ++i)
    for (size_t j = 0; j < c; ++j) o[j * r + i] = a[i * c + j];
  return o;
}

// zeropower_via_newtonschulz5 of the (r x c) matrix g, in double.
Vec ref_ns(Vec g, size_t r, size_t c, int steps) {
  const bool tall = r > c;
  if (tall) {
    g = transpose(g, r, c);
    std::swap(r, c);
  }
  const double nrm = norm(g) + 1e-7;
  for (double& x : g) x /= nrm;
  for (int s = 0; s < steps; ++s) {
    const Vec a = matmul(g, transpose(g, r, c), r, c, r);
    const Vec aa = matmul(a, a, r, r, r);
    Vec bm(r * r);
    for (size_t i = 0; i < bm.size(); ++i) bm[i] = -4.7750 * a[i] + 2.0315 * aa[i];
    const Vec bx = matmul(bm, g, r, r, c);
    for (size_t i = 0; i < g.size(); ++i) g[i] = 3.4445 * g[i] + bx[i];
  }
  return tall ? transpose(g, r, c) : g;
}

Vec ref_muon(const Problem& pb, double lr, double mom, double wd, bool nesterov, int steps) {
  const size_t rows = static_cast<size_t>(int64_t{pb.shape[0]}), cols = pb.w0.size() / rows;
  Vec w = pb.w0, buf(w.size());
  for (int t = 0; t < steps; ++t) {
    const Vec g = pb.grad(w);
    Vec u(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
      buf[i] = buf[i] + (g[i] - buf[i]) * (1 - mom); // lerp
      u[i] = nesterov ? g[i] + (buf[i] - g[i]) * mom : buf[i];
    }
    u = ref_ns(u, rows, cols, 5);
    const double scale = std::sqrt(std::max(1.0, double(rows) / double(cols)));
    for (size_t i = 0; i < w.size(); ++i) w[i] = w[i] * (1 - lr * wd) - lr * scale * u[i];
  }
  return w;
}

} // namespace

TEST_SUITE("nn.lamb_muon") {
  TEST_CASE("LAMB: trust ratio, weight decay, adam flag, a zero parameter") {
    struct Case {
      double lr, b1, b2, eps, wd;
      bool adam;
    };
    const Problem pb = problem({3, 5});
    for (const Case c :
         {Case{0.05, 0.9, 0.999, 1e-6, 0, false}, Case{0.02, 0.8, 0.99, 1e-6, 0.1, false},
          Case{0.05, 0.9, 0.999, 1e-8, 0.05, true}}) {
      INFO("lr " << c.lr << " betas " << c.b1 << "," << c.b2 << " wd " << c.wd << " adam "
                 << c.adam);
      check_close(run(
                      pb,
                      [&](Tensor w) {
                        return std::make_unique<optim::LAMB>(std::vector<Tensor>{w}, c.lr, c.b1,
                                                             c.b2, c.eps, c.wd, c.adam);
                      },
                      4),
                  ref_lamb(pb, c.lr, c.b1, c.b2, c.eps, c.wd, c.adam, 4));
    }
    // A parameter starting at zero: ||w|| = 0, the ratio is 1 on the first step.
    Problem zero = pb;
    zero.w0.assign(zero.w0.size(), 0.0);
    check_close(
        run(
            zero,
            [](Tensor w) { return std::make_unique<optim::LAMB>(std::vector<Tensor>{w}, 0.05); },
            3),
        ref_lamb(zero, 0.05, 0.9, 0.999, 1e-6, 0, false, 3));
    Tensor w = Tensor::ones({2});
    CHECK_THROWS_AS(optim::LAMB({w}, 0.1, 1.0), Error);
  }

  TEST_CASE("Muon: wide, tall and 3-D parameters, nesterov or not, weight decay") {
    struct Case {
      Shape shape;
      double lr, mom, wd;
      bool nesterov;
    };
    for (const Case& c :
         {Case{{3, 5}, 0.02, 0.95, 0, true}, Case{{5, 3}, 0.05, 0.9, 0.1, true},
          Case{{4, 4}, 0.03, 0.8, 0, false}, Case{{2, 3, 2}, 0.02, 0.95, 0.01, true}}) {
      INFO("shape " << c.shape.size() << "-D lr " << c.lr << " momentum " << c.mom << " wd " << c.wd
                    << " nesterov " << c.nesterov);
      const Problem pb = problem(c.shape);
      check_close(run(
                      pb,
                      [&](Tensor w) {
                        return std::make_unique<optim::Muon>(std::vector<Tensor>{w}, c.lr, c.mom,
                                                             c.wd, c.nesterov);
                      },
                      3),
                  ref_muon(pb, c.lr, c.mom, c.wd, c.nesterov, 3), 2e-5);
    }
  }

  TEST_CASE("Newton-Schulz orthogonalises; Muon refuses vectors and bad options") {
    const Vec g = data(12, 0.9, 0.4);
    const Tensor z = optim::zeropower_via_newtonschulz5(tensor(g, {3, 4}));
    CHECK(z.shape() == Shape{3, 4});
    const std::vector<float> zf = z.to_vector<float>();
    const Vec want = ref_ns(g, 3, 4, 5);
    for (size_t i = 0; i < want.size(); ++i) CHECK(zf[i] == doctest::Approx(want[i]).epsilon(1e-4));
    // Rows of the result are near-orthonormal (singular values in about [0.5, 1.5]).
    const Vec zz =
        matmul(Vec(zf.begin(), zf.end()), transpose(Vec(zf.begin(), zf.end()), 3, 4), 3, 4, 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(zz[i * 3 + i] > 0.25);
      CHECK(zz[i * 3 + i] < 2.25);
    }
    CHECK_THROWS_AS(optim::zeropower_via_newtonschulz5(Tensor::ones({4})), Error);
    Tensor b = Tensor::zeros({4}).realize();
    b.requires_grad_(true);
    try {
      optim::Muon({b});
      FAIL("Muon accepted a 1-D parameter");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("Adam") != std::string::npos);
    }
    Tensor w = Tensor::zeros({2, 2}).realize();
    CHECK_THROWS_AS(optim::Muon({w}, 0.02, 1.0), Error);
  }
}
