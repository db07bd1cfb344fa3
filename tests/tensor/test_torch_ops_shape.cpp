// PyTorch's shape and search ops beyond tinygrad's: rot90, narrow, unbind, unfold,
// searchsorted, bucketize, index_add, nonzero. Forward against loops over host arrays (exact:
// these move or count values), gradients by float64 finite differences.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "tensor/gradcheck.hpp"
#include "tensor/torch_ops_check.hpp"
#include "tg/error.hpp"

using namespace tgt;

namespace {

const DType kF32 = dtypes::float32;

double at(const Arr& a, const std::vector<int64_t>& i) {
  return a.v[static_cast<size_t>(ravel(i, a.shape))];
}

} // namespace

TEST_SUITE("tensor.torch_ops") {
  TEST_CASE("rot90, narrow, unbind, unfold") {
    CheckBatch b;
    Arr a = random_arr({3, 4, 2}, -5, 5, kF32, 1);
    Tensor t = to_tensor(a, kF32);
    // rot90 by k: out[i][j] as numpy's definition (counterclockwise in the (0, 1) plane).
    for (int64_t k : {1, 2, 3, 4, -1, 5}) {
      const int64_t kk = ((k % 4) + 4) % 4;
      const Shape s = kk % 2 ? Shape{4, 3, 2} : Shape{3, 4, 2};
      b.exact(t.rot90(k),
              generate(s,
                       [&](const std::vector<int64_t>& i) {
                         const int64_t x = i[0], y = i[1], z = i[2];
                         if (kk == 1) return at(a, {y, 3 - x, z});
                         if (kk == 2) return at(a, {2 - x, 3 - y, z});
                         if (kk == 3) return at(a, {2 - y, x, z});
                         return at(a, {x, y, z});
                       }),
              "rot90 k=" + std::to_string(k));
    }
    b.exact(t.rot90(1, {1, 2}),
            generate({3, 2, 4},
                     [&](const std::vector<int64_t>& i) {
                       return at(a, {i[0], i[2], 1 - i[1]});
                     }),
            "rot90 dims (1, 2)");
    b.exact(t.narrow(1, 1, 2), shrink(a, {{0, 3}, {1, 3}, {0, 2}}), "narrow");
    b.exact(t.narrow(-2, -3, 3), shrink(a, {{0, 3}, {1, 4}, {0, 2}}), "narrow negative start");
    std::vector<Tensor> parts = t.unbind(1);
    REQUIRE(parts.size() == 4);
    for (int64_t j = 0; j < 4; ++j)
      b.exact(parts[static_cast<size_t>(j)],
              generate({3, 2},
                       [&](auto& i) {
                         return at(a, {i[0], j, i[1]});
                       }),
              "unbind part " + std::to_string(j));
    // unfold(dim, size, step): windows along dim as a new last axis.
    Arr u = random_arr({2, 7}, -5, 5, kF32, 2);
    Tensor tu = to_tensor(u, kF32);
    for (auto [size, step] :
         std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {2, 2}, {3, 3}, {7, 1}, {1, 4}}) {
      const int64_t o = (7 - size) / step + 1;
      b.exact(tu.unfold(1, size, step),
              generate({2, o, size},
                       [&](auto& i) {
                         return at(u, {i[0], i[1] * step + i[2]});
                       }),
              "unfold size " + std::to_string(size) + " step " + std::to_string(step));
    }
    b.exact(tu.unfold(0, 2, 1),
            generate({1, 7, 2},
                     [&](auto& i) {
                       return at(u, {i[2], i[1]});
                     }),
            "unfold dim 0");
    b.exact(t.unfold(1, 2, 1),
            generate({3, 3, 2, 2},
                     [&](auto& i) {
                       return at(a, {i[0], i[1] + i[3], i[2]});
                     }),
            "unfold a middle dim of 3-D");
    b.run();
    CHECK(tu.unfold(1, 0, 2).shape() == Shape{2, 4, 0});
    CHECK(tu.unfold(1, 0, 1).shape() == Shape{2, 8, 0});
    // Empty windows still come from the input: its gradient is zeros, not missing.
    CHECK(tu.unfold(1, 0, 8).sum().gradient({tu})[0].to_vector<float>() ==
          std::vector<float>(14, 0.0f));
    CHECK_THROWS_WITH_AS(t.rot90(1, {0, 0}), doctest::Contains("differ"), tg::Error);
    CHECK_THROWS_WITH_AS(t.rot90(1, {0}), doctest::Contains("two axes"), tg::Error);
    CHECK_THROWS_WITH_AS(t.narrow(1, 3, 2), doctest::Contains("exceeds"), tg::Error);
    CHECK_THROWS_WITH_AS(t.narrow(1, 5, 0), doctest::Contains("out of range"), tg::Error);
    CHECK_THROWS_WITH_AS(t.narrow(3, 0, 1), doctest::Contains("out of range"), tg::Error);
    CHECK_THROWS_WITH_AS(tu.unfold(1, 8, 1), doctest::Contains("size 8"), tg::Error);
    CHECK_THROWS_WITH_AS(tu.unfold(1, 2, 0), doctest::Contains("step"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::zeros({}).unbind(), doctest::Contains("0-d"), tg::Error);
  }

  TEST_CASE("searchsorted and bucketize: left/right, N-D sequences, sorter, dtypes") {
    CheckBatch b;
    Arr seq{{6}, {-1, 0, 0, 2.5, 4, 7}};
    Arr vals{{2, 5}, {-3, 0, 1, 2.5, 9, 7, 4, 0.5, -1, 3}};
    Tensor ts = to_tensor(seq, kF32), tv = to_tensor(vals, kF32);
    auto ss = [&](const std::vector<double>& s, double v, bool right) {
      return static_cast<double>(right ? std::upper_bound(s.begin(), s.end(), v) - s.begin()
                                       : std::lower_bound(s.begin(), s.end(), v) - s.begin());
    };
    b.exact(ts.searchsorted(tv), map(vals, [&](double v) { return ss(seq.v, v, false); }),
            "searchsorted left", dtypes::int64);
    b.exact(ts.searchsorted(tv, false, true),
            map(vals, [&](double v) { return ss(seq.v, v, true); }), "searchsorted right");
    b.exact(ts.searchsorted(tv, true, false, "right"),
            map(vals, [&](double v) { return ss(seq.v, v, true); }), "searchsorted side right",
            dtypes::int32);
    // Rows of an N-D sequence each search their own row of values.
    Arr seq2{{2, 4}, {1, 2, 3, 4, -5, -4, 10, 20}};
    Arr v2{{2, 3}, {2, 0, 5, 15, -4.5, -4}};
    b.exact(to_tensor(seq2, kF32).searchsorted(to_tensor(v2, kF32)),
            generate({2, 3},
                     [&](auto& i) {
                       std::vector<double> row(seq2.v.begin() + i[0] * 4,
                                               seq2.v.begin() + i[0] * 4 + 4);
                       return ss(row, at(v2, i), false);
                     }),
            "searchsorted 2-D");
    // sorter: indices that sort an unsorted sequence.
    Arr uns{{4}, {3, 1, 4, 2}}, sorter{{4}, {1, 3, 0, 2}};
    Arr q{{3}, {2.5, 0, 4}};
    b.exact(to_tensor(uns, kF32).searchsorted(to_tensor(q, kF32), false, false, "",
                                              to_tensor(sorter, dtypes::int32)),
            Arr{{3}, {2, 0, 3}}, "searchsorted sorter");
    // Integer sequence with float values, bucketize.
    Arr iseq{{3}, {1, 5, 9}};
    b.exact(to_tensor(iseq, dtypes::int32).searchsorted(to_tensor(q, kF32)), Arr{{3}, {1, 0, 1}},
            "searchsorted int32 sequence");
    b.exact(tv.bucketize(ts), map(vals, [&](double v) { return ss(seq.v, v, false); }), "bucketize",
            dtypes::int64);
    b.exact(tv.bucketize(ts, true, true), map(vals, [&](double v) { return ss(seq.v, v, true); }),
            "bucketize right int32", dtypes::int32);
    b.run();
    CHECK_THROWS_WITH_AS(ts.searchsorted(tv, false, true, "left"), doctest::Contains("contradicts"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(ts.searchsorted(tv, false, false, "middle"), doctest::Contains("side"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(to_tensor(seq2, kF32).searchsorted(tv.reshape({5, 2})),
                         doctest::Contains("leading"), tg::Error);
    CHECK_THROWS_WITH_AS(tv.bucketize(tv), doctest::Contains("1-D"), tg::Error);
  }

  TEST_CASE("index_add and nonzero") {
    CheckBatch b;
    Arr self = random_arr({4, 3}, -2, 2, kF32, 3), src = random_arr({5, 3}, -2, 2, kF32, 4);
    Arr idx{{5}, {0, 2, 0, 3, 2}}; // duplicates accumulate
    Tensor tsf = to_tensor(self, kF32), tsr = to_tensor(src, kF32);
    Tensor ti = to_tensor(idx, dtypes::int32);
    auto add_ref = [&](double alpha) {
      Arr r = self;
      for (int64_t k = 0; k < 5; ++k)
        for (int64_t c = 0; c < 3; ++c)
          r.v[static_cast<size_t>(idx.v[static_cast<size_t>(k)] * 3 + static_cast<double>(c))] +=
              alpha * src.v[static_cast<size_t>(k * 3 + c)];
      return r;
    };
    b.add(tsf.index_add(0, ti, tsr), add_ref(1), tol_for(kF32), "index_add dim 0");
    b.add(tsf.index_add(0, ti, tsr, 2.5), add_ref(2.5), tol_for(kF32), "index_add alpha");
    Arr src1 = random_arr({4, 2}, -2, 2, kF32, 5);
    Arr idx1{{2}, {2, 2}};
    Arr want1 = self;
    for (int64_t r = 0; r < 4; ++r)
      want1.v[static_cast<size_t>(r * 3 + 2)] +=
          src1.v[static_cast<size_t>(r * 2)] + src1.v[static_cast<size_t>(r * 2 + 1)];
    b.add(tsf.index_add(1, to_tensor(idx1, dtypes::int64), to_tensor(src1, kF32)), want1,
          tol_for(kF32), "index_add dim 1 int64 index");
    Arr iself{{3}, {1, 2, 3}}, isrc{{2}, {10, 20}}, iidx{{2}, {2, 0}};
    b.exact(to_tensor(iself, dtypes::int32)
                .index_add(0, to_tensor(iidx, dtypes::int32), to_tensor(isrc, dtypes::int32)),
            Arr{{3}, {21, 2, 13}}, "index_add int32", dtypes::int32);
    b.run();
    // nonzero: (count, ndim) int32 in row-major order, read on the host.
    Arr nz{{2, 3, 2}, {0, 1, 0, 0, 2, 0, 0, 0, -1, 0, 0, 3}};
    Tensor tnz = to_tensor(nz, kF32).flip({2}); // through a view
    Tensor r = tnz.nonzero();
    CHECK(r.dtype() == dtypes::int32);
    CHECK(r.shape() == Shape{4, 3});
    CHECK(r.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 0, 2, 1, 1, 1, 1, 1, 2, 0});
    CHECK(Tensor::zeros({3, 2}).nonzero().shape() == Shape{0, 2});
    CHECK(Tensor::ones({}).nonzero().shape() == Shape{1, 0});
    CHECK(to_tensor(nz, kF32).gt(0).argwhere().to_vector<int64_t>() ==
          std::vector<int64_t>{0, 0, 1, 0, 2, 0, 1, 2, 1});
    CHECK_THROWS_WITH_AS(tsf.index_add(0, ti, tsr.reshape({3, 5})), doctest::Contains("source"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(tsf.index_add(0, ti.cast(kF32), tsr), doctest::Contains("integer"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(tsf.index_add(2, ti, tsr), doctest::Contains("out of range"), tg::Error);
  }

  TEST_CASE("gradients of the shape ops (float64 finite differences)") {
    using V = std::vector<Tensor>;
    GradcheckOptions o;
    CHECK(gradcheck([](const V& x) { return x[0].rot90(1); }, {{2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].rot90(3, {1, 2}); }, {{2, 2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].narrow(1, 1, 2); }, {{2, 4}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].unbind(1)[2]; }, {{2, 3}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].unfold(1, 3, 2); }, {{2, 7}}, o));
    CHECK(gradcheck([](const V& x) { return x[0].unfold(1, 3, 1); }, {{2, 5}}, o));
    CHECK(gradcheck(
        [](const V& x) {
          Tensor idx = Tensor::from_vector(std::vector<int32_t>{1, 0, 1}, {3});
          return x[0].index_add(0, idx, x[1], 1.5);
        },
        {{2, 3}, {3, 3}}, o));
  }
}

TEST_SUITE("tensor.torch_ops") {
  TEST_CASE("diagonal: every offset and plane of a 3-D tensor against loops, and its gradient") {
    const std::vector<int64_t> shape{2, 3, 4};
    std::vector<float> v(24);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    const Tensor x = Tensor::from_vector(v, Shape{2, 3, 4});
    const int64_t st[3] = {12, 4, 1};
    for (int64_t d1 = 0; d1 < 3; ++d1)
      for (int64_t d2 = 0; d2 < 3; ++d2) {
        if (d1 == d2) continue;
        const int64_t other = 3 - d1 - d2;
        for (int64_t off = -4; off <= 4; ++off) {
          // Reference: out[o][i] = x[... o at `other`, d1 = i + max(-off, 0), d2 = i + max(off, 0)]
          std::vector<float> want;
          const int64_t r0 = std::max<int64_t>(-off, 0), c0 = std::max<int64_t>(off, 0);
          int64_t m = std::min(shape[d1] - r0, shape[d2] - c0);
          if (m < 0) m = 0;
          for (int64_t o = 0; o < shape[other]; ++o)
            for (int64_t i = 0; i < m; ++i)
              want.push_back(
                  v[static_cast<size_t>(o * st[other] + (i + r0) * st[d1] + (i + c0) * st[d2])]);
          const Tensor d = x.diagonal(off, d1, d2);
          CHECK(std::vector<int64_t>(d.shape()) == std::vector<int64_t>{shape[other], m});
          if (m > 0) CHECK(d.to_vector<float>() == want);
        }
      }
    CHECK(x.diagonal(0, -1, -2).to_vector<float>() == x.diagonal(0, 2, 1).to_vector<float>());
    CHECK_THROWS_WITH_AS(x.diagonal(0, 1, 1), doctest::Contains("the same axis"), tg::Error);
    CHECK_THROWS_WITH_AS(x.diagonal(0, 0, 3), doctest::Contains("dim2 3 is out of range"),
                         tg::Error);
    // The gradient scatters ones onto the diagonal.
    Tensor w = Tensor::ones({3, 3}).requires_grad_();
    w.diagonal(1).sum().backward();
    CHECK(w.grad().to_vector<float>() == std::vector<float>{0, 1, 0, 0, 0, 1, 0, 0, 0});
  }

  TEST_CASE("acosh and quick_gelu against <cmath>, and their gradients") {
    const std::vector<double> xs{1.0, 1.0 + 1e-7, 1.5, 2.0, 10.0, 1e10, 1e30, 0.5, -2.0};
    const Tensor t = Tensor::from_vector(xs, Shape{static_cast<int64_t>(xs.size())});
    const std::vector<double> got = t.acosh().to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = std::acosh(xs[i]);
      if (std::isnan(want))
        CHECK(std::isnan(got[i]));
      else
        CHECK(got[i] == doctest::Approx(want).epsilon(1e-12));
    }
    CHECK(std::isinf(
        Tensor::from_vector(std::vector<float>{INFINITY}, Shape{1}).acosh().to_vector<float>()[0]));
    const std::vector<float> q =
        Tensor::from_vector(std::vector<float>{-3, -0.5f, 0, 0.5f, 3}, Shape{5})
            .quick_gelu()
            .to_vector<float>();
    const float in[5] = {-3, -0.5f, 0, 0.5f, 3};
    for (int i = 0; i < 5; ++i)
      CHECK(q[static_cast<size_t>(i)] ==
            doctest::Approx(in[i] / (1 + std::exp(-1.702 * in[i]))).epsilon(1e-6));
    auto one = [](std::function<Tensor(const Tensor&)> f) {
      return [f](const std::vector<Tensor>& x) { return f(x[0]); };
    };
    CHECK(
        gradcheck(one([](const Tensor& x) { return x.acosh(); }), {{2, 3}}, {.lo = 1.2, .hi = 5}));
    CHECK(gradcheck(one([](const Tensor& x) { return x.quick_gelu(); }), {{2, 3}},
                    {.lo = -3, .hi = 3}));
  }
}
