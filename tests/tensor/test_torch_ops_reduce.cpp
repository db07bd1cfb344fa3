// PyTorch's reductions and linear algebra beyond tinygrad's: norms, median, quantile, nansum,
// nanmean, count_nonzero, logcumsumexp, diff; trace, outer, kron, cross, tensordot, bmm, cdist.
// Forward against loops over the host arrays, gradients by float64 finite differences.
//
// Tolerances: ref.hpp's float32 one, 4x for sums and products of up to ~60 terms and for the
// exp/log chains (logcumsumexp, p-norms through pow).
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
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The values along axis `ax` of `a` at the multi-index `idx` (idx[ax] ignored).
std::vector<double> line(const Arr& a, std::vector<int64_t> idx, int64_t ax) {
  std::vector<double> r;
  for (int64_t k = 0; k < a.shape[static_cast<size_t>(ax)]; ++k) {
    idx[static_cast<size_t>(ax)] = k;
    r.push_back(a.v[static_cast<size_t>(ravel(idx, a.shape))]);
  }
  return r;
}

// Applies f to every line along ax; the result has ax removed (or kept as size 1).
Arr per_line(const Arr& a, int64_t ax, bool keepdim,
             const std::function<double(const std::vector<double>&)>& f) {
  Shape s = a.shape;
  s[static_cast<size_t>(ax)] = 1;
  Arr r = generate(s, [&](const std::vector<int64_t>& i) { return f(line(a, i, ax)); });
  if (!keepdim) r.shape.erase(r.shape.begin() + ax);
  return r;
}

// A scan along ax: out[k] = f(line[0..k]).
Arr scan(const Arr& a, int64_t ax, const std::function<double(const std::vector<double>&)>& f) {
  return generate(a.shape, [&](const std::vector<int64_t>& i) {
    std::vector<double> l = line(a, i, ax);
    l.resize(static_cast<size_t>(i[static_cast<size_t>(ax)] + 1));
    return f(l);
  });
}

double pnorm(const std::vector<double>& v, double p) {
  if (p == kInf) {
    double m = 0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
  }
  if (p == -kInf) {
    double m = kInf;
    for (double x : v) m = std::min(m, std::abs(x));
    return m;
  }
  double s = 0;
  for (double x : v) s += p == 0 ? (x != 0) : std::pow(std::abs(x), p);
  return p == 0 ? s : std::pow(s, 1 / p);
}

double median_of(std::vector<double> v) {
  for (double x : v)
    if (std::isnan(x)) return kNaN;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

double quantile_of(std::vector<double> v, double q, const std::string& mode) {
  for (double x : v)
    if (std::isnan(x)) return kNaN;
  std::sort(v.begin(), v.end());
  const double rank = q * static_cast<double>(v.size() - 1);
  const double lo = std::floor(rank), hi = std::ceil(rank);
  const double a = v[static_cast<size_t>(lo)], b = v[static_cast<size_t>(hi)];
  if (mode == "lower") return a;
  if (mode == "higher") return b;
  if (mode == "nearest") return v[static_cast<size_t>(std::nearbyint(rank))];
  if (mode == "midpoint") return (a + b) / 2;
  return a + (b - a) * (rank - lo);
}

double logsumexp_of(const std::vector<double>& v) {
  double m = -kInf;
  for (double x : v) m = std::max(m, x);
  if (std::isinf(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

// Row-major matrix product of host arrays (..., n, k) @ (k, m) on the last two axes (2-D only).
Arr matmul2(const Arr& a, const Arr& b) {
  const int64_t n = a.shape[0], k = a.shape[1], m = b.shape[1];
  return generate({n, m}, [&](const std::vector<int64_t>& i) {
    double s = 0;
    for (int64_t j = 0; j < k; ++j)
      s += a.v[static_cast<size_t>(i[0] * k + j)] * b.v[static_cast<size_t>(j * m + i[1])];
    return s;
  });
}

} // namespace

TEST_SUITE("tensor.torch_ops") {
  TEST_CASE("vector_norm, matrix_norm, norm: orders, dims, keepdim, errors") {
    CheckBatch b;
    Arr a = random_arr({3, 4, 5}, -2, 2, kF32, 1);
    a.v[3] = 0;
    Tensor t = to_tensor(a, kF32);
    for (double p : {2.0, 1.0, 3.0, 0.5, 0.0, kInf, -kInf}) {
      const std::string ps = std::to_string(p);
      b.add(t.vector_norm(p, {1}), per_line(a, 1, false, [&](auto& v) { return pnorm(v, p); }),
            tol_for(kF32, 4), "vector_norm ord " + ps + " dim 1");
      b.add(t.vector_norm(p, {-1}, true),
            per_line(a, 2, true, [&](auto& v) { return pnorm(v, p); }), tol_for(kF32, 4),
            "vector_norm ord " + ps + " dim -1 keepdim");
      b.add(t.vector_norm(p), Arr{{}, {pnorm(a.v, p)}}, tol_for(kF32, 4), "vector_norm all " + ps);
    }
    b.add(t.norm(), Arr{{}, {pnorm(a.v, 2)}}, tol_for(kF32, 4), "norm() is the 2-norm of all");
    b.add(t.norm("fro", {0, 2}),
          generate({4},
                   [&](const std::vector<int64_t>& i) {
                     double s = 0;
                     for (int64_t x = 0; x < 3; ++x)
                       for (int64_t z = 0; z < 5; ++z)
                         s += std::pow(a.v[static_cast<size_t>(x * 20 + i[0] * 5 + z)], 2);
                     return std::sqrt(s);
                   }),
          tol_for(kF32, 4), "norm fro over (0, 2)");
    // matrix norms of (3, 4, 5) over the last two axes: columns sum over axis 1, rows over 2.
    auto colsum = [&](int64_t m, int64_t c) {
      double s = 0;
      for (int64_t r = 0; r < 4; ++r) s += std::abs(a.v[static_cast<size_t>(m * 20 + r * 5 + c)]);
      return s;
    };
    auto rowsum = [&](int64_t m, int64_t r) {
      double s = 0;
      for (int64_t c = 0; c < 5; ++c) s += std::abs(a.v[static_cast<size_t>(m * 20 + r * 5 + c)]);
      return s;
    };
    auto over = [](int64_t n, const std::function<double(int64_t)>& f, bool mx) {
      double r = mx ? -kInf : kInf;
      for (int64_t i = 0; i < n; ++i) r = mx ? std::max(r, f(i)) : std::min(r, f(i));
      return r;
    };
    Arr m1 = generate({3}, [&](auto& i) {
      return over(
          5, [&](int64_t c) { return colsum(i[0], c); }, true);
    });
    Arr mm1 = generate({3}, [&](auto& i) {
      return over(
          5, [&](int64_t c) { return colsum(i[0], c); }, false);
    });
    Arr minf = generate({3}, [&](auto& i) {
      return over(
          4, [&](int64_t r) { return rowsum(i[0], r); }, true);
    });
    Arr mminf = generate({3}, [&](auto& i) {
      return over(
          4, [&](int64_t r) { return rowsum(i[0], r); }, false);
    });
    Arr fro = generate({3}, [&](auto& i) {
      double s = 0;
      for (int64_t k = 0; k < 20; ++k) s += std::pow(a.v[static_cast<size_t>(i[0] * 20 + k)], 2);
      return std::sqrt(s);
    });
    b.add(t.matrix_norm(1.0), m1, tol_for(kF32, 4), "matrix_norm 1");
    b.add(t.matrix_norm(-1.0), mm1, tol_for(kF32, 4), "matrix_norm -1");
    b.add(t.matrix_norm(kInf), minf, tol_for(kF32, 4), "matrix_norm inf");
    b.add(t.matrix_norm(-kInf), mminf, tol_for(kF32, 4), "matrix_norm -inf");
    b.add(t.matrix_norm(), fro, tol_for(kF32, 4), "matrix_norm fro");
    Arr m1k = m1;
    m1k.shape = {3, 1, 1};
    b.add(t.matrix_norm(1.0, {-2, -1}, true), m1k, tol_for(kF32, 4), "matrix_norm keepdim");
    // The other axis order: ord 1 over dims (2, 1) sums over axis 2 (its rows are axis 2).
    b.add(t.matrix_norm(1.0, {2, 1}), minf, tol_for(kF32, 4), "matrix_norm 1 dims (2, 1)");
    b.run();
    CHECK_THROWS_WITH_AS(t.matrix_norm("nuc"), doctest::Contains("SVD"), tg::Error);
    CHECK_THROWS_WITH_AS(t.norm("nuc"), doctest::Contains("SVD"), tg::Error);
    CHECK_THROWS_WITH_AS(t.matrix_norm(2.0), doctest::Contains("SVD"), tg::Error);
    CHECK_THROWS_WITH_AS(t.matrix_norm(3.0), doctest::Contains("ord must be"), tg::Error);
    CHECK_THROWS_WITH_AS(t.matrix_norm("max"), doctest::Contains("ord must be"), tg::Error);
    CHECK_THROWS_WITH_AS(t.norm("l2"), doctest::Contains("p must be"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::arange(4).vector_norm(), doctest::Contains("float"), tg::Error);
    CHECK_THROWS_WITH_AS(t.vector_norm(2, {3}), doctest::Contains("out of range"), tg::Error);
    CHECK_THROWS_WITH_AS(t.vector_norm(2, {1, -2}), doctest::Contains("more than once"), tg::Error);
  }

  TEST_CASE("median and quantile: dims, keepdim, nan, interpolation modes, errors") {
    CheckBatch b;
    Arr a = random_arr({4, 7}, -5, 5, kF32, 2);
    Arr an = a;
    an.v[9] = kNaN; // row 1 has a nan
    Tensor t = to_tensor(a, kF32), tn = to_tensor(an, kF32);
    b.add(t.median(), Arr{{}, {median_of(a.v)}}, {}, "median of all");
    b.add(tn.median(), Arr{{}, {kNaN}}, {}, "median of all with a nan");
    auto [v1, i1] = tn.median(1);
    b.add(v1, per_line(an, 1, false, median_of), {}, "median dim 1 values");
    // The index of the median in its row (distinct values), and of the nan in the nan row.
    Arr want_i = generate({4}, [&](const std::vector<int64_t>& i) {
      std::vector<double> l = line(an, {i[0], 0}, 1);
      const double m = median_of(l);
      for (size_t k = 0; k < l.size(); ++k)
        if (l[k] == m || (std::isnan(m) && std::isnan(l[k]))) return static_cast<double>(k);
      return -1.0;
    });
    b.exact(i1, want_i, "median dim 1 indices", dtypes::int32);
    b.add(t.median(0, true).values, per_line(a, 0, true, median_of), {}, "median dim 0 keepdim");
    Arr ints{{2, 4}, {3, 1, 4, 1, 5, 9, 2, 6}};
    b.exact(to_tensor(ints, dtypes::int32).median(1).values, Arr{{2}, {1, 5}}, "median int32",
            dtypes::int32);
    for (const std::string mode : {"linear", "lower", "higher", "nearest", "midpoint"}) {
      for (double q : {0.0, 0.25, 0.5, 0.9, 1.0}) {
        b.add(t.quantile(q, 1, false, mode),
              per_line(a, 1, false, [&](auto& v) { return quantile_of(v, q, mode); }),
              tol_for(kF32), "quantile " + mode + " q " + std::to_string(q));
      }
      b.add(tn.quantile(0.3, {}, false, mode), Arr{{}, {kNaN}}, {}, "quantile nan " + mode);
    }
    // A list of q: a leading axis; no dim: the flattened tensor; keepdim.
    Arr qs = generate({2, 7}, [&](const std::vector<int64_t>& i) {
      return quantile_of(line(a, {0, i[1]}, 0), i[0] == 0 ? 0.1 : 0.75, "linear");
    });
    qs.shape = {2, 1, 7};
    b.add(t.quantile(std::vector<double>{0.1, 0.75}, 0, true), qs, tol_for(kF32),
          "quantile list dim 0 keepdim");
    b.add(t.quantile(0.4), Arr{{}, {quantile_of(a.v, 0.4, "linear")}}, tol_for(kF32),
          "quantile of all");
    b.add(t.quantile(0.4, {}, true), Arr{{1, 1}, {quantile_of(a.v, 0.4, "linear")}}, tol_for(kF32),
          "quantile of all keepdim");
    b.run();
    CHECK_THROWS_WITH_AS(t.quantile(1.5), doctest::Contains("[0, 1]"), tg::Error);
    CHECK_THROWS_WITH_AS(t.quantile(0.5, 1, false, "cubic"), doctest::Contains("interpolation"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(to_tensor(ints, dtypes::int32).quantile(0.5), doctest::Contains("float"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::zeros({3, 0}).median(1), doctest::Contains("empty"), tg::Error);
    CHECK(std::isnan(Tensor::zeros({0}).median().item<float>()));
  }

  TEST_CASE("nansum, nanmean, count_nonzero, logcumsumexp, diff") {
    CheckBatch b;
    Arr a = random_arr({3, 5}, -3, 3, kF32, 3);
    a.v[1] = kNaN, a.v[7] = kNaN, a.v[8] = 0, a.v[12] = 0;
    Tensor t = to_tensor(a, kF32);
    auto nsum = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += std::isnan(x) ? 0 : x;
      return s;
    };
    auto nmean = [&](const std::vector<double>& v) {
      double c = 0;
      for (double x : v) c += !std::isnan(x);
      return nsum(v) / c;
    };
    auto nz = [](const std::vector<double>& v) {
      double c = 0;
      for (double x : v) c += x != 0;
      return c;
    };
    b.add(t.nansum({1}), per_line(a, 1, false, nsum), tol_for(kF32, 4), "nansum dim 1");
    b.add(t.nansum(), Arr{{}, {nsum(a.v)}}, tol_for(kF32, 4), "nansum all");
    b.add(t.nanmean({0}, true), per_line(a, 0, true, nmean), tol_for(kF32, 4), "nanmean dim 0");
    b.exact(t.count_nonzero({1}), per_line(a, 1, false, nz), "count_nonzero dim 1", dtypes::int64);
    b.exact(t.count_nonzero(), Arr{{}, {nz(a.v)}}, "count_nonzero all", dtypes::int64);
    Arr ia{{4}, {0, 3, 0, -1}};
    b.exact(to_tensor(ia, dtypes::int32).nansum(), Arr{{}, {2}}, "nansum int32 (int64 sum)",
            dtypes::int64);
    // logcumsumexp: values far apart (no underflow of the small ones), -inf, a long-ish row.
    Arr l = random_arr({3, 40}, -20, 20, kF32, 4);
    l.v[0] = -kInf, l.v[1] = -kInf, l.v[45] = 500, l.v[46] = -500, l.v[90] = kInf;
    Tensor tl = to_tensor(l, kF32);
    b.add(tl.logcumsumexp(1), scan(l, 1, logsumexp_of), tol_for(kF32, 4), "logcumsumexp dim 1");
    b.add(tl.logcumsumexp(0), scan(l, 0, logsumexp_of), tol_for(kF32, 4), "logcumsumexp dim 0");
    Arr li{{5}, {1, 2, 3, 4, 5}};
    b.add(to_tensor(li, dtypes::int32).logcumsumexp(0), scan(li, 0, logsumexp_of), tol_for(kF32, 4),
          "logcumsumexp int32", kF32);
    // diff: orders 1 and 2, prepend/append, dim 0, bool (xor).
    Arr d = random_arr({3, 6}, -3, 3, kF32, 5);
    Tensor td = to_tensor(d, kF32);
    auto diff_ref = [](const Arr& x, int64_t ax) {
      Shape s = x.shape;
      s[static_cast<size_t>(ax)] -= 1;
      return generate(s, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> j = i;
        j[static_cast<size_t>(ax)] += 1;
        return x.v[static_cast<size_t>(ravel(j, x.shape))] -
               x.v[static_cast<size_t>(ravel(i, x.shape))];
      });
    };
    b.add(td.diff(), diff_ref(d, 1), tol_for(kF32), "diff");
    b.add(td.diff(2), diff_ref(diff_ref(d, 1), 1), tol_for(kF32, 4), "diff n=2");
    b.add(td.diff(1, 0), diff_ref(d, 0), tol_for(kF32), "diff dim 0");
    Arr pre = random_arr({3, 2}, -3, 3, kF32, 6), app = random_arr({3, 1}, -3, 3, kF32, 7);
    Arr cat = generate({3, 9}, [&](const std::vector<int64_t>& i) {
      const int64_t c = i[1];
      if (c < 2) return pre.v[static_cast<size_t>(i[0] * 2 + c)];
      if (c < 8) return d.v[static_cast<size_t>(i[0] * 6 + c - 2)];
      return app.v[static_cast<size_t>(i[0])];
    });
    b.add(td.diff(1, -1, to_tensor(pre, kF32), to_tensor(app, kF32)), diff_ref(cat, 1),
          tol_for(kF32), "diff prepend append");
    Arr bo{{5}, {1, 1, 0, 1, 0}};
    b.exact(to_tensor(bo, dtypes::bool_).diff(), Arr{{4}, {0, 1, 1, 1}}, "diff bool xor",
            dtypes::bool_);
    b.exact(td.diff(0), d, "diff n=0");
    b.run();
    CHECK(td.diff(7).shape() == Shape{3, 0});
    CHECK_THROWS_WITH_AS(td.diff(-1), doctest::Contains("non-negative"), tg::Error);
    CHECK_THROWS_WITH_AS(td.logcumsumexp(2), doctest::Contains("out of range"), tg::Error);
  }

  TEST_CASE("trace, outer, kron, cross, tensordot, bmm, cdist") {
    CheckBatch b;
    Arr m = random_arr({3, 4}, -2, 2, kF32, 11), sq = random_arr({4, 4}, -2, 2, kF32, 12);
    b.add(to_tensor(m, kF32).trace(), Arr{{}, {m.v[0] + m.v[5] + m.v[10]}}, tol_for(kF32),
          "trace 3x4");
    b.add(to_tensor(sq, kF32).trace(), Arr{{}, {sq.v[0] + sq.v[5] + sq.v[10] + sq.v[15]}},
          tol_for(kF32), "trace 4x4");
    Arr mi{{2, 2}, {1, 2, 3, 4}};
    b.exact(to_tensor(mi, dtypes::int32).trace(), Arr{{}, {5}}, "trace int32 (int64)",
            dtypes::int64);
    Arr u = random_arr({3}, -2, 2, kF32, 13), v = random_arr({4}, -2, 2, kF32, 14);
    b.add(to_tensor(u, kF32).outer(to_tensor(v, kF32)),
          generate({3, 4},
                   [&](auto& i) {
                     return u.v[static_cast<size_t>(i[0])] * v.v[static_cast<size_t>(i[1])];
                   }),
          tol_for(kF32), "outer");
    // kron of (2, 3) and (3, 2); of a 1-D (3) and a 2-D (2, 2).
    Arr ka = random_arr({2, 3}, -2, 2, kF32, 15), kb = random_arr({3, 2}, -2, 2, kF32, 16);
    b.add(to_tensor(ka, kF32).kron(to_tensor(kb, kF32)),
          generate({6, 6},
                   [&](auto& i) {
                     return ka.v[static_cast<size_t>((i[0] / 3) * 3 + i[1] / 2)] *
                            kb.v[static_cast<size_t>((i[0] % 3) * 2 + i[1] % 2)];
                   }),
          tol_for(kF32), "kron 2-D");
    Arr k1 = random_arr({3}, -2, 2, kF32, 17), k2 = random_arr({2, 2}, -2, 2, kF32, 18);
    b.add(to_tensor(k1, kF32).kron(to_tensor(k2, kF32)),
          generate({2, 6},
                   [&](auto& i) {
                     return k1.v[static_cast<size_t>(i[1] / 2)] *
                            k2.v[static_cast<size_t>(i[0] * 2 + i[1] % 2)];
                   }),
          tol_for(kF32), "kron 1-D with 2-D");
    // cross along the last dim (broadcast (4, 3) with (3)) and along dim 0.
    Arr ca = random_arr({4, 3}, -2, 2, kF32, 19), cb = random_arr({3}, -2, 2, kF32, 20);
    auto cross3 = [](double a0, double a1, double a2, double b0, double b1, double b2, int64_t k) {
      return k == 0 ? a1 * b2 - a2 * b1 : k == 1 ? a2 * b0 - a0 * b2 : a0 * b1 - a1 * b0;
    };
    b.add(to_tensor(ca, kF32).cross(to_tensor(cb, kF32)),
          generate({4, 3},
                   [&](auto& i) {
                     const size_t r = static_cast<size_t>(i[0]) * 3;
                     return cross3(ca.v[r], ca.v[r + 1], ca.v[r + 2], cb.v[0], cb.v[1], cb.v[2],
                                   i[1]);
                   }),
          tol_for(kF32), "cross dim -1 broadcast");
    Arr cat = permute(ca, {1, 0});
    b.add(
        to_tensor(ca, kF32).transpose(0, 1).cross(to_tensor(ca, kF32).transpose(0, 1).flip({1}), 0),
        generate({3, 4},
                 [&](auto& i) {
                   auto at = [&](int64_t k, int64_t c) {
                     return cat.v[static_cast<size_t>(k * 4 + c)];
                   };
                   const int64_t c = i[1], f = 3 - i[1];
                   return cross3(at(0, c), at(1, c), at(2, c), at(0, f), at(1, f), at(2, f), i[0]);
                 }),
        tol_for(kF32), "cross dim 0 (views)");
    // tensordot: dims 2, 1, 0 and explicit pairs, against loops.
    Arr ta = random_arr({2, 3, 4}, -2, 2, kF32, 21), tb = random_arr({3, 4, 5}, -2, 2, kF32, 22);
    Tensor tta = to_tensor(ta, kF32), ttb = to_tensor(tb, kF32);
    Arr td2 = matmul2(reshape(ta, {2, 12}), reshape(tb, {12, 5}));
    b.add(tta.tensordot(ttb, 2), td2, tol_for(kF32, 4), "tensordot dims 2");
    Arr tc = random_arr({4, 2}, -2, 2, kF32, 23);
    b.add(tta.tensordot(to_tensor(tc, kF32), 1),
          reshape(matmul2(reshape(ta, {6, 4}), tc), {2, 3, 2}), tol_for(kF32, 4),
          "tensordot dims 1");
    b.add(to_tensor(u, kF32).tensordot(to_tensor(v, kF32), 0),
          generate({3, 4},
                   [&](auto& i) {
                     return u.v[static_cast<size_t>(i[0])] * v.v[static_cast<size_t>(i[1])];
                   }),
          tol_for(kF32), "tensordot dims 0 (outer)");
    // Pairs: a's axes (0, 2) with b's (1, 0): out (3, 5)... of a (2, 3, 4) and b2 (4, 2, 5).
    Arr b2 = random_arr({4, 2, 5}, -2, 2, kF32, 24);
    b.add(tta.tensordot(to_tensor(b2, kF32), {0, 2}, {1, 0}),
          generate({3, 5},
                   [&](auto& i) {
                     double s = 0;
                     for (int64_t x = 0; x < 2; ++x)
                       for (int64_t z = 0; z < 4; ++z)
                         s += ta.v[static_cast<size_t>(x * 12 + i[0] * 4 + z)] *
                              b2.v[static_cast<size_t>(z * 10 + x * 5 + i[1])];
                     return s;
                   }),
          tol_for(kF32, 4), "tensordot pairs");
    // bmm and cdist.
    Arr ba = random_arr({2, 3, 4}, -2, 2, kF32, 25), bb = random_arr({2, 4, 2}, -2, 2, kF32, 26);
    b.add(to_tensor(ba, kF32).bmm(to_tensor(bb, kF32)),
          generate({2, 3, 2},
                   [&](auto& i) {
                     double s = 0;
                     for (int64_t k = 0; k < 4; ++k)
                       s += ba.v[static_cast<size_t>(i[0] * 12 + i[1] * 4 + k)] *
                            bb.v[static_cast<size_t>(i[0] * 8 + k * 2 + i[2])];
                     return s;
                   }),
          tol_for(kF32, 4), "bmm");
    Arr x1 = random_arr({2, 3, 4}, -2, 2, kF32, 27), x2 = random_arr({2, 5, 4}, -2, 2, kF32, 28);
    for (double p : {2.0, 1.0, 3.0, 0.0, kInf}) {
      b.add(to_tensor(x1, kF32).cdist(to_tensor(x2, kF32), p),
            generate({2, 3, 5},
                     [&](auto& i) {
                       std::vector<double> d;
                       for (int64_t k = 0; k < 4; ++k)
                         d.push_back(x1.v[static_cast<size_t>(i[0] * 12 + i[1] * 4 + k)] -
                                     x2.v[static_cast<size_t>(i[0] * 20 + i[2] * 4 + k)]);
                       return pnorm(d, p);
                     }),
            tol_for(kF32, 4), "cdist p " + std::to_string(p));
    }
    b.run();
    CHECK_THROWS_WITH_AS(to_tensor(u, kF32).trace(), doctest::Contains("2-D"), tg::Error);
    CHECK_THROWS_WITH_AS(to_tensor(m, kF32).outer(to_tensor(v, kF32)), doctest::Contains("1-D"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(to_tensor(m, kF32).cross(to_tensor(m, kF32)), doctest::Contains("size 3"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(tta.tensordot(tta, 2), doctest::Contains("differ in size"), tg::Error);
    CHECK_THROWS_WITH_AS(tta.tensordot(ttb, 4), doctest::Contains("dims"), tg::Error);
    CHECK_THROWS_WITH_AS(tta.tensordot(ttb, {1}, {0, 1}), doctest::Contains("same length"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(tta.bmm(tta), doctest::Contains("do not fit"), tg::Error);
    CHECK_THROWS_WITH_AS(to_tensor(m, kF32).bmm(tta), doctest::Contains("3-D"), tg::Error);
    CHECK_THROWS_WITH_AS(tta.cdist(tta.reshape({2, 4, 3})), doctest::Contains("feature"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(tta.cdist(tta, -1), doctest::Contains("non-negative"), tg::Error);
  }

  TEST_CASE("gradients of the reductions and linear algebra (float64 finite differences)") {
    using V = std::vector<Tensor>;
    GradcheckOptions o;
    CHECK(gradcheck([](const V& x) { return x[0].vector_norm(2, {1}); }, {{2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].vector_norm(3, {0}, true); }, {{2, 3}}, o));
    CHECK(gradcheck_at([](const V& x) { return x[0].vector_norm(1); },
                       {away_from({2, 3}, -2, 2, 3, {0})}));
    CHECK(gradcheck_at([](const V& x) { return x[0].vector_norm(kInf, {1}); },
                       {Arr{{2, 3}, {0.5, -1.5, 1.0, 0.3, 0.1, -0.2}}}));
    CHECK(gradcheck([](const V& x) { return x[0].matrix_norm(); }, {{2, 3, 3}}, o));
    CHECK(gradcheck_at([](const V& x) { return x[0].matrix_norm(1.0); },
                       {away_from({3, 3}, -2, 2, 5, {0})}));
    // Distinct values: median and quantile move the gradient to the chosen elements.
    CHECK(gradcheck([](const V& x) { return x[0].median(1).values; }, {{2, 5}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].median(); }, {{2, 3}}, o));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].quantile(std::vector<double>{0.3, 0.8}, 1);
        },
        {{2, 5}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].nansum({0}); }, {{2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].nanmean({1}); }, {{2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].logcumsumexp(1); }, {{2, 5}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].diff(2, 1, x[1]); }, {{2, 5}, {2, 1}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].trace(); }, {{3, 4}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].outer(x[1]); }, {{3}, {2}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].kron(x[1]); }, {{2, 2}, {2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].cross(x[1]); }, {{2, 3}, {3}}, o));
    CHECK(gradcheck(
        [](const V& x) {
          return x[0].tensordot(x[1], {0, 2}, {1, 0});
        },
        {{2, 2, 3}, {3, 2, 2}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].bmm(x[1]); }, {{2, 2, 3}, {2, 3, 2}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].cdist(x[1]); }, {{2, 3}, {3, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].cdist(x[1], 3); }, {{2, 3}, {2, 3}}, o));
    // At a zero vector (a zero distance) the gradient is 0, as PyTorch's (not nan).
    Tensor z = Tensor::zeros({2, 3}, dtypes::float64).requires_grad_();
    Tensor g =
        z.vector_norm(2, {1}).sum().add(z.norm("fro")).add(z.cdist(z).sum()).gradient({z})[0];
    CHECK(g.to_vector<double>() == std::vector<double>(6, 0.0));
  }
}
