// Variance, scans, max/min with indices, sort, topk and argsort against C++ loops:
// dtypes, views, ties, nan, long axes (the blocked scan), zero-size and 0-d tensors.
//
// Tolerances (ref.hpp's per dtype): var/std of up to 60 terms 4x (a sum, then a division and
// for std a sqrt); scans over up to 7 terms 4x; long float32 scans (600..140000 terms)
// atol 1e-3 + rtol 1e-4 (sums of values in [-1, 1] as ref.hpp's long reductions, 1e-2 for
// 140000 terms); sort, topk, cummax/cummin and max_dim/min_dim are exact (they only move values).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tensor/ref.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"

using namespace tgt;

namespace {

const DType kF32 = dtypes::float32, kF16 = dtypes::float16, kBF16 = dtypes::bfloat16,
            kI32 = dtypes::int32, kI8 = dtypes::int8, kU8 = dtypes::uint8, kBool = dtypes::bool_;
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

DType acc_dtype(DType d) {
  if (d == kBool || d.is_int()) return dtypes::int64; // PyTorch's integer sums
  return d;
}

// Applies `f` to each 1-D line of `a` along `axis` (f gets the line, returns a line of the
// same length); the result has a's shape.
Arr along(const Arr& a, int64_t axis,
          const std::function<std::vector<double>(std::vector<double>)>& f) {
  Arr r{a.shape, std::vector<double>(a.v.size())};
  const auto ax = static_cast<size_t>(axis);
  const int64_t n = a.shape[ax];
  Shape outer = a.shape;
  outer[ax] = 1;
  for (int64_t o = 0; o < numel(outer); ++o) {
    std::vector<int64_t> idx = unravel(o, outer);
    std::vector<double> line;
    for (int64_t j = 0; j < n; ++j) {
      idx[ax] = j;
      line.push_back(a.at(idx));
    }
    std::vector<double> out = f(line);
    for (int64_t j = 0; j < n; ++j) {
      idx[ax] = j;
      r.v[static_cast<size_t>(ravel(idx, a.shape))] = out[static_cast<size_t>(j)];
    }
  }
  return r;
}

// PyTorch's cummax: x[j] replaces the running value when it is nan or (the running value is
// not nan and) x[j] >= it; `is_max` false is cummin with <=.
std::pair<std::vector<double>, std::vector<double>> cum_ext(const std::vector<double>& x,
                                                            bool is_max) {
  std::vector<double> v(x.size()), i(x.size());
  double cur = 0;
  double ci = 0;
  for (size_t j = 0; j < x.size(); ++j) {
    const bool take =
        j == 0 || std::isnan(x[j]) || (!std::isnan(cur) && (is_max ? x[j] >= cur : x[j] <= cur));
    if (take) cur = x[j], ci = static_cast<double>(j);
    v[j] = cur;
    i[j] = ci;
  }
  return {v, i};
}

// nan sorts as the largest; -0.0 == 0.0.
bool less_total(double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; }

// The permutation std::stable_sort gives (descending: larger first, equal keep order).
std::vector<size_t> stable_order(const std::vector<double>& x, bool descending) {
  std::vector<size_t> p(x.size());
  std::iota(p.begin(), p.end(), 0);
  std::stable_sort(p.begin(), p.end(), [&](size_t a, size_t b) {
    return descending ? less_total(x[b], x[a]) : less_total(x[a], x[b]);
  });
  return p;
}

// Sort of `a` along `axis` as values and indices (host).
std::pair<Arr, Arr> host_sort(const Arr& a, int64_t axis, bool descending) {
  Arr vals = along(a, axis, [&](std::vector<double> l) {
    std::vector<double> r;
    for (size_t p : stable_order(l, descending)) r.push_back(l[p]);
    return r;
  });
  Arr idx = along(a, axis, [&](std::vector<double> l) {
    std::vector<double> r;
    for (size_t p : stable_order(l, descending)) r.push_back(static_cast<double>(p));
    return r;
  });
  return {vals, idx};
}

// The first `k` along `axis`.
Arr take_first(const Arr& a, int64_t axis, int64_t k) {
  Pairs r;
  for (size_t i = 0; i < a.shape.size(); ++i)
    r.emplace_back(0, static_cast<int64_t>(i) == axis ? k : int64_t{a.shape[i]});
  return shrink(a, r);
}

// Exact comparison that also checks the sign of zeros (sort must not turn -0.0 into 0.0).
void check_exact(const Tensor& t, const Arr& want, const std::string& what, DType dtype) {
  if (!check_close(t, want, {}, what, dtype)) return;
  std::vector<double> got = t.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] == 0 && std::signbit(got[i]) != std::signbit(want.v[i])) {
      FAIL_CHECK(what << ": sign of zero differs at " << i);
      return;
    }
}

// An input through a view: contiguous, flipped along `axis`'s partner, or permuted.
std::pair<Tensor, Arr> viewed(const Arr& a0, DType d, int which) {
  Arr a = a0;
  if (which == 1) {
    Arr f = flip(a, {0});
    Tensor t = to_tensor(f, d).flip({0});
    for (size_t i = 0; i < a.v.size(); ++i) a.v[i] = store(d, a.v[i]);
    return {t, a};
  }
  if (which == 2 && a.shape.size() == 2) {
    Arr p = permute(a, {1, 0});
    Tensor t = to_tensor(p, d).permute({1, 0});
    for (size_t i = 0; i < a.v.size(); ++i) a.v[i] = store(d, a.v[i]);
    return {t, a};
  }
  Tensor t = to_tensor(a, d);
  return {t, a};
}

} // namespace

TEST_SUITE("tensor.mathops") {
  TEST_CASE("var, std, var_mean, std_mean: axes, keepdim, correction, dtypes, views") {
    const std::vector<std::vector<int64_t>> axes_list{{}, {1}, {0, 2}, {-1}};
    size_t k = 0;
    for (DType d : {kF32, kF16, kBF16})
      for (const auto& axes : axes_list)
        for (double corr : {1.0, 0.0, 2.5}) {
          const bool keepdim = k % 2 == 0;
          Arr a = random_arr({3, 4, 5}, -4, 4, d, static_cast<uint32_t>(k + 1));
          Tensor t = to_tensor(a, d);
          if (k % 3 == 1) {
            Arr f = flip(a, {0, 2});
            t = to_tensor(f, d).flip({0, 2});
          } else if (k % 3 == 2) {
            t = to_tensor(a, d).permute({2, 0, 1}).contiguous().permute({1, 2, 0});
          }
          ++k;
          std::vector<int64_t> ax;
          for (int64_t x : axes) ax.push_back(x < 0 ? x + 3 : x);
          if (ax.empty()) ax = {0, 1, 2};
          int64_t n = 1;
          for (int64_t x : ax) n *= a.shape[static_cast<size_t>(x)];
          Arr mean = reduce(a, ax, true, 0, [](double x, double y) { return x + y; });
          for (double& x : mean.v) x /= static_cast<double>(n);
          Arr dev = generate(a.shape, [&](const std::vector<int64_t>& i) {
            std::vector<int64_t> j = i;
            for (int64_t x : ax) j[static_cast<size_t>(x)] = 0;
            const double e = a.at(i) - mean.at(j);
            return e * e;
          });
          Arr var = reduce(dev, ax, keepdim, 0, [](double x, double y) { return x + y; });
          for (double& x : var.v) x /= std::max(0.0, static_cast<double>(n) - corr);
          Arr sd = map(var, [](double x) { return std::sqrt(x); });
          Arr m = reduce(a, ax, keepdim, 0, [](double x, double y) { return x + y; });
          for (double& x : m.v) x = store(d, x / static_cast<double>(n));
          for (double& x : var.v) x = store(d, x);
          for (double& x : sd.v) x = store(d, x);
          const std::string what = std::string(d.name()) + " axes " + shape_s(axes) +
                                   " correction " + std::to_string(corr) +
                                   (keepdim ? " keepdim" : "");
          check_close(t.var(axes, keepdim, corr), var, tol_for(d, 4), "var " + what, d);
          check_close(t.std(axes, keepdim, corr), sd, tol_for(d, 4), "std " + what, d);
          auto [v2, m2] = t.var_mean(axes, keepdim, corr);
          check_close(v2, var, tol_for(d, 4), "var_mean var " + what, d);
          check_close(m2, m, tol_for(d, 4), "var_mean mean " + what, d);
          auto [s3, m3] = t.std_mean(axes, keepdim, corr);
          check_close(s3, sd, tol_for(d, 4), "std_mean std " + what, d);
          check_close(m3, m, tol_for(d, 4), "std_mean mean " + what, d);
        }
  }

  TEST_CASE("var: correction >= count gives inf or nan as PyTorch; zero-size; 0-d; errors") {
    // Columns (1, 1) and (3, 7): N = 2; correction 2 or 3 makes the divisor max(0, N - c) = 0,
    // so 0 / 0 = nan for the constant column and inf for the other.
    Tensor x = Tensor::from_vector<float>({1, 3, 1, 7}, Shape{2, 2});
    for (double c : {2.0, 3.0}) {
      std::vector<float> v = x.var({0}, false, c).to_vector<float>();
      CHECK(std::isnan(v[0]));
      CHECK(v[1] == std::numeric_limits<float>::infinity());
      CHECK(x.std({0}, false, c).to_vector<float>()[1] == std::numeric_limits<float>::infinity());
    }
    CHECK(x.var({0}, false, 1).to_vector<float>() == std::vector<float>{0, 8});
    // One element, correction 1: 0 / 0.
    CHECK(std::isnan(Tensor::full({1}, 5.0).var().item<float>()));
    CHECK(Tensor::full({1}, 5.0).var({}, false, 0).item<float>() == 0.0f);
    CHECK(std::isnan(Tensor::full({}, 5.0).var().item<float>()));
    CHECK(Tensor::full({}, 5.0).std({}, false, 0).item<float>() == 0.0f);
    // Zero-size: nan where the reduced axis is empty, an empty result where a kept one is.
    std::vector<float> z = Tensor::ones({0, 3}).var({0}).to_vector<float>();
    REQUIRE(z.size() == 3);
    for (float v : z) CHECK(std::isnan(v));
    CHECK(Tensor::ones({0, 3}).var({1}).shape() == Shape{0});
    CHECK(Tensor::ones({2, 3}).var({1}, true).shape() == Shape{2, 1});
    CHECK_THROWS_WITH_AS(Tensor::ones({2, 3}, kI32).var(), doctest::Contains("int32"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::ones({2, 3}).var({2}), doctest::Contains("dimension 2"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::ones({2, 3}).std({1, -1}), doctest::Contains("axis 1"), tg::Error);
  }

  TEST_CASE("cumsum and cumprod: dims, dtypes, views, accumulators") {
    size_t k = 0;
    for (DType d : {kF32, kF16, kBF16, kI32, kI8, kU8, kBool})
      for (int64_t dim : {0, 1, -1}) {
        Arr a0 = random_arr({5, 7}, d == kU8 ? 0 : -3, 3, d, static_cast<uint32_t>(k + 9));
        auto [t, a] = viewed(a0, d, static_cast<int>(k % 3));
        ++k;
        const int64_t ax = dim < 0 ? dim + 2 : dim;
        const DType out = d.is_float() ? d : acc_dtype(d);
        const std::string what = std::string(d.name()) + " dim " + std::to_string(dim);
        Arr cs = along(a, ax, [&](std::vector<double> l) {
          double s = 0;
          for (double& x : l) x = store(out, s += x);
          return l;
        });
        check_close(t.cumsum(dim), cs, tol_for(out, 4), "cumsum " + what, out);
        if (d == kBool) continue;
        Arr small = a;
        Tensor ts = t;
        if (d.is_float()) { // factors in [0.5, 1.5]: products stay near 1
          small = map(a, [&](double x) { return store(d, 1 + x / 6); });
          ts = to_tensor(small, d);
        }
        Arr cp = along(small, ax, [&](std::vector<double> l) {
          double p = 1;
          for (double& x : l) x = store(out, p *= x);
          return l;
        });
        check_close(ts.cumprod(dim), cp, tol_for(out, 4), "cumprod " + what, out);
      }
    // Expanded input (stride 0 along the scanned axis).
    Tensor e = Tensor::from_vector<float>({1, 2, 3}, Shape{3, 1}).expand({3, 4});
    CHECK(e.cumsum(1).to_vector<float>() ==
          std::vector<float>{1, 2, 3, 4, 2, 4, 6, 8, 3, 6, 9, 12});
    // int8 accumulates in int64, as sum: 100 * 127 does not wrap.
    Tensor big = Tensor::full({100}, 127, kI8);
    CHECK(big.cumsum().dtype() == dtypes::int64);
    CHECK(big.cumsum().to_vector<int64_t>().back() == 12700);
    // float16 accumulates in float32: 4096 ones reach 4096 (a float16 sum stops at 2048).
    CHECK(Tensor::ones({4096}, kF16).cumsum().to_vector<float>().back() == 4096.0f);
  }

  TEST_CASE("cumsum, cumprod, cummax over long axes (the blocked scan, and its recursion)") {
    // 600 and 1000: one level of 256-blocks with a front pad; 140000: the block totals are
    // themselves blocked.
    for (int64_t n : {513, 600, 1000}) {
      Arr a = random_arr({3, n}, -1, 1, kF32, static_cast<uint32_t>(n));
      Tensor t = to_tensor(a, kF32);
      Arr cs = along(a, 1, [](std::vector<double> l) {
        double s = 0;
        for (double& x : l) x = s += x;
        return l;
      });
      check_close(t.cumsum(1), cs, {1e-3, 1e-4}, "cumsum of " + std::to_string(n));
      check_close(t.permute({1, 0}).cumsum(0), permute(cs, {1, 0}), {1e-3, 1e-4},
                  "cumsum of " + std::to_string(n) + " along a permuted axis 0");
      Arr f = map(a, [](double x) { return 1 + x / 1000; });
      Arr cp = along(f, 1, [](std::vector<double> l) {
        double p = 1;
        for (double& x : l) x = p *= x;
        return l;
      });
      check_close(to_tensor(f, kF32).cumprod(1), cp, {1e-4, 1e-4},
                  "cumprod of " + std::to_string(n));
      Arr ties = map(a, [](double x) { return std::round(x * 3); }); // ties across blocks
      ties.v[static_cast<size_t>(n + 300)] = kNaN;                   // row 1: nan from 300 on
      auto [cv, ci] =
          std::pair{along(ties, 1, [](std::vector<double> l) { return cum_ext(l, true).first; }),
                    along(ties, 1, [](std::vector<double> l) { return cum_ext(l, true).second; })};
      auto [tv, tix] = to_tensor(ties, kF32).cummax(1);
      check_exact(tv, cv, "cummax values of " + std::to_string(n), kF32);
      check_exact(tix, ci, "cummax indices of " + std::to_string(n), kI32);
    }
    Arr l{{140000}, std::vector<double>(140000)};
    for (size_t i = 0; i < l.v.size(); ++i)
      l.v[i] = static_cast<double>(static_cast<int64_t>(i % 7) - 3);
    std::vector<int64_t> got = to_tensor(l, kI32).cumsum().to_vector<int64_t>();
    int64_t s = 0;
    bool ok = true;
    for (size_t i = 0; i < got.size(); ++i)
      ok = ok && got[i] == (s += static_cast<int64_t>(l.v[i]));
    CHECK_MESSAGE(ok, "int32 cumsum of 140000 (recursive blocks) is exact");
    Arr lm = map(l, [](double x) { return x; });
    lm.v[70000] = 5, lm.v[100000] = 5, lm.v[139999] = 6;
    auto [mv, mi] = to_tensor(lm, kI32).cummax(0);
    std::vector<int32_t> iv = mi.to_vector<int32_t>(), vv = mv.to_vector<int32_t>();
    CHECK(vv[69998] == 3);
    CHECK(iv[69998] == 69992); // the last 3 before it (index % 7 == 6)
    CHECK(iv[69999] == 69999); // a tie: the later one
    CHECK(vv[99999] == 5);
    CHECK(iv[99999] == 70000);
    CHECK(iv[100000] == 100000); // a tie: the later one
    CHECK(iv[139998] == 100000);
    CHECK(iv[139999] == 139999);
  }

  TEST_CASE("cummax and cummin: last occurrence of ties, nan, dtypes, views") {
    size_t k = 0;
    for (DType d : {kF32, kF16, kBF16, kI32, kI8, kU8, kBool})
      for (int64_t dim : {0, 1}) {
        Arr a0 = random_arr({6, 9}, 0, 3, d, static_cast<uint32_t>(k + 21));
        if (d.is_float()) {
          for (double& x : a0.v) x = std::round(x) - 1.5;
          if (k % 2) a0.v[10] = kNaN, a0.v[13] = kNaN, a0.v[40] = -kInf;
        }
        auto [t, a] = viewed(a0, d, static_cast<int>(k % 3));
        ++k;
        const std::string what = std::string(d.name()) + " dim " + std::to_string(dim);
        for (bool is_max : {true, false}) {
          Arr v = along(a, dim, [&](std::vector<double> l) { return cum_ext(l, is_max).first; });
          Arr i = along(a, dim, [&](std::vector<double> l) { return cum_ext(l, is_max).second; });
          auto [tv, ti] = is_max ? t.cummax(dim) : t.cummin(dim);
          check_exact(tv, v, std::string(is_max ? "cummax" : "cummin") + " values " + what, d);
          check_exact(ti, i, std::string(is_max ? "cummax" : "cummin") + " indices " + what, kI32);
        }
      }
  }

  TEST_CASE("max_dim and min_dim: first occurrence, nan, keepdim, dtypes") {
    size_t k = 0;
    for (DType d : {kF32, kF16, kBF16, kI32, kI8, kU8, kBool})
      for (int64_t dim : {0, 1, 2, -1})
        for (bool keepdim : {false, true}) {
          Arr a0 = random_arr({3, 4, 5}, 0, 3, d, static_cast<uint32_t>(k + 61));
          if (d.is_float()) {
            for (double& x : a0.v) x = std::round(x) - 1.5;
            if (k % 3 == 0) a0.v[7] = kNaN, a0.v[8] = kNaN;
          }
          auto [t, a] = viewed(a0, d, static_cast<int>(k % 2));
          ++k;
          const int64_t ax = dim < 0 ? dim + 3 : dim;
          for (bool is_max : {true, false}) {
            Shape kept = a.shape;
            kept[static_cast<size_t>(ax)] = 1;
            Arr v{kept, {}}, i{kept, {}};
            for (int64_t o = 0; o < numel(kept); ++o) {
              std::vector<int64_t> idx = unravel(o, kept);
              double best = 0, bi = 0;
              for (int64_t j = 0; j < a.shape[static_cast<size_t>(ax)]; ++j) {
                idx[static_cast<size_t>(ax)] = j;
                const double x = a.at(idx);
                const bool better = j == 0 || (!std::isnan(best) &&
                                               (std::isnan(x) || (is_max ? x > best : x < best)));
                if (better) best = x, bi = static_cast<double>(j);
              }
              v.v.push_back(best);
              i.v.push_back(bi);
            }
            if (!keepdim) {
              Shape s = a.shape;
              s.erase(s.begin() + ax);
              v.shape = s, i.shape = s;
            }
            auto [tv, ti] = is_max ? t.max_dim(dim, keepdim) : t.min_dim(dim, keepdim);
            const std::string what = std::string(is_max ? "max_dim " : "min_dim ") + d.name() +
                                     " dim " + std::to_string(dim) + (keepdim ? " keepdim" : "");
            check_exact(tv, v, what + " values", d);
            check_exact(ti, i, what + " indices", kI32);
          }
        }
    Tensor s = Tensor::full({}, 2.5);
    CHECK(s.max_dim(0).values.item<float>() == 2.5f);
    CHECK(s.max_dim(-1).indices.item<int32_t>() == 0);
    CHECK(Tensor::ones({0, 3}).max_dim(1).values.shape() == Shape{0});
    CHECK_THROWS_WITH_AS(Tensor::ones({0, 3}).max_dim(0),
                         doctest::Contains("dimension 0 of size 0"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::ones({2, 3}).min_dim(2), doctest::Contains("dimension 2"),
                         tg::Error);
  }

  TEST_CASE("sort and argsort: stable (std::stable_sort), descending, nan largest, dtypes, views") {
    size_t k = 0;
    const std::vector<Shape> shapes{Shape{5, 13}, Shape{4, 16}, Shape{3, 33}};
    const std::vector<DType> dts{kF32, kF16, kBF16, kI32, kI8, kU8, kBool};
    for (size_t di = 0; di < dts.size(); ++di)
      for (size_t si = 0; si < shapes.size(); ++si)
        for (int64_t dim : {1, 0}) {
          // float32 sees every shape and dim; the other dtypes one shape each in rotation, both
          // dims (each sort compiles its own k(k+1) kernels).
          const DType d = dts[di];
          if (d != kF32 && si != di % 3) continue;
          const Shape& shape = shapes[si];
          // Few distinct values: many ties, so stability shows.
          Arr a0 = random_arr(shape, d == kU8 ? 0 : -3, 3, d, static_cast<uint32_t>(k + 101));
          if (d.is_float()) {
            for (double& x : a0.v) x = std::round(x * 2) / 2;
            a0.v[1] = kNaN, a0.v[4] = kInf, a0.v[6] = -kInf, a0.v[8] = -0.0, a0.v[9] = kNaN;
            a0.v[11] = 0.0;
          }
          if (d == kI8) a0.v[2] = -128, a0.v[3] = 127; // the padding values themselves
          if (d == kI32) a0.v[2] = INT32_MIN, a0.v[3] = INT32_MAX;
          auto [t, a] = viewed(a0, d, static_cast<int>(k % 3));
          ++k;
          for (bool desc : {false, true}) {
            auto [v, i] = host_sort(a, dim, desc);
            auto [tv, ti] = t.sort(dim, desc);
            const std::string what = std::string(d.name()) + " " + shape_s(shape) + " dim " +
                                     std::to_string(dim) + (desc ? " descending" : "");
            check_exact(tv, v, "sort values " + what, d);
            check_exact(ti, i, "sort indices " + what, kI32);
            check_exact(t.argsort(dim, desc), i, "argsort " + what, kI32);
          }
        }
  }

  TEST_CASE("sort: 0-d, one element, zero-size, three dimensions, a long row") {
    auto [v0, i0] = Tensor::full({}, 3.0).sort();
    CHECK(v0.item<float>() == 3.0f);
    CHECK(i0.shape() == Shape{});
    CHECK(i0.item<int32_t>() == 0);
    auto [v1, i1] = Tensor::full({4, 1}, 2.0).sort(1);
    CHECK(v1.shape() == Shape{4, 1});
    CHECK(i1.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 0});
    auto [vz, iz] = Tensor::ones({0, 5}).sort(1);
    CHECK(vz.shape() == Shape{0, 5});
    CHECK(iz.shape() == Shape{0, 5});
    CHECK(iz.dtype() == kI32);
    CHECK(Tensor::ones({3, 0}).sort(1).values.shape() == Shape{3, 0});
    Arr a = random_arr({2, 5, 6}, -100, 100, kF32, 5);
    Tensor t = to_tensor(a, kF32);
    for (int64_t dim : {0, 1, 2}) {
      auto [v, i] = host_sort(a, dim, dim == 1);
      auto [tv, ti] = t.sort(dim, dim == 1);
      check_exact(tv, v, "sort 3-d values dim " + std::to_string(dim), kF32);
      check_exact(ti, i, "sort 3-d indices dim " + std::to_string(dim), kI32);
    }
    Arr r = random_arr({1, 300}, 0, 50, kI32, 8);
    auto [rv, ri] = host_sort(r, 1, false);
    auto [tv, ti] = to_tensor(r, kI32).sort();
    check_exact(tv, rv, "sort of 300 int32 values", kI32);
    check_exact(ti, ri, "argsort of 300 int32 values", kI32);
  }

  TEST_CASE("topk: largest and smallest, ties in index order, nan, k = 0 and k = n, errors") {
    size_t k = 0;
    for (DType d : {kF32, kF16, kI32, kU8})
      for (int64_t kk : {1, 3, 7})
        for (bool largest : {true, false}) {
          Arr a0 = random_arr({4, 7}, 0, 5, d, static_cast<uint32_t>(k + 300));
          if (d.is_float() && k % 2) a0.v[3] = kNaN;
          auto [t, a] = viewed(a0, d, static_cast<int>(k % 3));
          ++k;
          auto [v, i] = host_sort(a, 1, largest);
          auto [tv, ti] = t.topk(kk, -1, largest);
          const std::string what = std::string(d.name()) + " k " + std::to_string(kk) +
                                   (largest ? " largest" : " smallest");
          check_exact(tv, take_first(v, 1, kk), "topk values " + what, d);
          check_exact(ti, take_first(i, 1, kk), "topk indices " + what, kI32);
          auto [tv0, ti0] = t.topk(kk > 4 ? 4 : kk, 0, largest);
          auto [v0, i0] = host_sort(a, 0, largest);
          check_exact(tv0, take_first(v0, 0, kk > 4 ? 4 : kk), "topk dim 0 values " + what, d);
          check_exact(ti0, take_first(i0, 0, kk > 4 ? 4 : kk), "topk dim 0 indices " + what, kI32);
        }
    Tensor t = Tensor::from_vector<float>({1, 5, 2, 5, 3});
    CHECK(t.topk(0).values.shape() == Shape{0});
    CHECK(t.topk(2).indices.to_vector<int32_t>() == std::vector<int32_t>{1, 3});
    CHECK(t.topk(2, 0, false).values.to_vector<float>() == std::vector<float>{1, 2});
    CHECK(Tensor::full({}, 4.0).topk(1).values.item<float>() == 4.0f);
    CHECK_THROWS_WITH_AS(t.topk(6),
                         doctest::Contains("k (6) is out of range for dimension -1 of size 5"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(t.topk(-1), doctest::Contains("k (-1)"), tg::Error);
    CHECK_THROWS_WITH_AS(t.topk(1, 1), doctest::Contains("dimension 1 is out of range"), tg::Error);
    CHECK_THROWS_WITH_AS(t.sort(3), doctest::Contains("dimension 3 is out of range"), tg::Error);
    CHECK_THROWS_WITH_AS(t.cumsum(-2), doctest::Contains("dimension -2 is out of range"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(t.cummax(1), doctest::Contains("dimension 1 is out of range"), tg::Error);
  }

  TEST_CASE("scans and sort stay lazy: nothing runs until realized, kernels fuse") {
    Tensor x = Tensor::rand({4, 300}).realize();
    // 300 <= 512: one triangular reduce, fused with its input into one kernel.
    const size_t k300 = x.cumsum(1).schedule().size();
    MESSAGE("cumsum of (4, 300): " << k300 << " kernels");
    CHECK(k300 == 1);
    // 1000: blocks of 256, their totals scanned, added back: a few kernels, not one per block.
    Tensor y = Tensor::rand({4, 1000}).realize();
    const size_t k1000 = y.cumsum(1).schedule().size();
    MESSAGE("cumsum of (4, 1000): " << k1000 << " kernels");
    CHECK(k1000 <= 4);
    Tensor r = Tensor::rand({2, 16}).realize();
    // 16 = 2^4: the stored input, then 10 compare-exchange steps of a values and an indices
    // kernel each (the last step's indices are not needed for the values).
    const size_t sk = r.sort(1).values.schedule().size();
    MESSAGE("sort of 16: " << sk << " kernels");
    CHECK(sk <= 1 + 2 * 10);
  }
}
