// nn functional, part 2: log_softmax, logsumexp, einsum, linear, the normalizations, dropout,
// attention and the losses against C++ formulas in double (suite tensor.nnfunc).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/ref.hpp"
#include "tg/error.hpp"

using namespace tgt;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor t_of(Arr& a, DType d = dtypes::float32) { return to_tensor(a, d); }

// log_softmax along axis 1 of a 2-D array.
Arr log_softmax_ref(const Arr& x) {
  const int64_t n = x.shape[0], c = x.shape[1];
  Arr r = x;
  for (int64_t i = 0; i < n; ++i) {
    double m = -kInf, s = 0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x.at({i, j}));
    for (int64_t j = 0; j < c; ++j) s += std::exp(x.at({i, j}) - m);
    for (int64_t j = 0; j < c; ++j)
      r.v[static_cast<size_t>(i * c + j)] = x.at({i, j}) - m - std::log(s);
  }
  return r;
}

// Normalizes groups of `inner` consecutive elements (mean/var in double).
Arr normalize_ref(const Arr& x, int64_t inner, double eps, bool center) {
  Arr r = x;
  for (size_t b = 0; b < x.v.size(); b += static_cast<size_t>(inner)) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < inner; ++j) mean += x.v[b + static_cast<size_t>(j)];
    mean = center ? mean / static_cast<double>(inner) : 0;
    for (int64_t j = 0; j < inner; ++j) var += std::pow(x.v[b + static_cast<size_t>(j)] - mean, 2);
    var /= static_cast<double>(inner);
    for (int64_t j = 0; j < inner; ++j)
      r.v[b + static_cast<size_t>(j)] =
          (x.v[b + static_cast<size_t>(j)] - mean) / std::sqrt(var + eps);
  }
  return r;
}

Arr reduce_ref(const Arr& l, const std::string& reduction) {
  if (reduction == "none") return l;
  double s = 0;
  for (double v : l.v) s += v;
  return {{}, {reduction == "sum" ? s : s / static_cast<double>(l.v.size())}};
}

} // namespace

TEST_SUITE("tensor.nnfunc") {
  TEST_CASE("log_softmax and logsumexp against double loops, including infinities") {
    const DType f = dtypes::float32;
    Arr x = random_arr({5, 13}, -20, 20, f, 1);
    check_close(t_of(x).log_softmax(1), log_softmax_ref(x), tol_for(f, 4), "log_softmax", f);
    check_close(t_of(x).transpose().log_softmax(0).transpose(), log_softmax_ref(x), tol_for(f, 4),
                "log_softmax of a transposed view", f);
    Arr lse = generate({5}, [&](const std::vector<int64_t>& i) {
      double m = -kInf, s = 0;
      for (int64_t j = 0; j < 13; ++j) m = std::max(m, x.at({i[0], j}));
      for (int64_t j = 0; j < 13; ++j) s += std::exp(x.at({i[0], j}) - m);
      return m + std::log(s);
    });
    check_close(t_of(x).logsumexp({1}), lse, tol_for(f, 4), "logsumexp", f);
    check_close(t_of(x).logsumexp({-1}, true), reshape(lse, {5, 1}), tol_for(f, 4), "keepdim", f);
    // Large values do not overflow; all -inf gives -inf; +inf gives +inf.
    Arr big{{2, 3}, {1000, 1000, 999, -kInf, -kInf, -kInf}};
    Arr want{{2}, {1000 + std::log(2 + std::exp(-1.0)), -kInf}};
    check_close(t_of(big).logsumexp({1}), want, tol_for(f, 4), "large and -inf rows", f);
    Arr inf{{3}, {1, kInf, 2}};
    CHECK(t_of(inf).logsumexp({0}).item<float>() == std::numeric_limits<float>::infinity());
    // float16 input: computed and returned in float16.
    Arr xh = random_arr({3, 7}, -4, 4, dtypes::float16, 2);
    Arr wh = log_softmax_ref(xh);
    for (double& v : wh.v) v = store(dtypes::float16, v);
    check_close(t_of(xh, dtypes::float16).log_softmax(-1), wh, tol_for(dtypes::float16, 4),
                "float16", dtypes::float16);
  }

  TEST_CASE("einsum: explicit and implicit output, repeated indices, ellipsis, broadcasting") {
    const DType f = dtypes::float32;
    Arr a = random_arr({3, 4}, -2, 2, f, 11), b = random_arr({4, 5}, -2, 2, f, 12);
    Tensor ta = t_of(a), tb = t_of(b);
    Arr mm = generate({3, 5}, [&](const std::vector<int64_t>& i) {
      double s = 0;
      for (int64_t k = 0; k < 4; ++k) s += a.at({i[0], k}) * b.at({k, i[1]});
      return s;
    });
    check_close(Tensor::einsum("ij,jk->ik", {ta, tb}), mm, tol_for(f, 4), "ij,jk->ik", f);
    check_close(Tensor::einsum("ij,jk", {ta, tb}), mm, tol_for(f, 4), "implicit ij,jk", f);
    check_close(Tensor::einsum("ij,jk->ki", {ta, tb}), permute(mm, {1, 0}), tol_for(f, 4),
                "ij,jk->ki", f);
    check_close(Tensor::einsum("ba", {ta}), permute(a, {1, 0}), {}, "implicit transpose ba", f);
    check_close(Tensor::einsum("ij->", {ta}), reduce(a, {0, 1}, false, 0, std::plus<>()),
                tol_for(f, 4), "ij-> (sum)", f);
    Arr sq = random_arr({4, 4}, -2, 2, f, 13);
    double tr = 0;
    for (int64_t i = 0; i < 4; ++i) tr += sq.at({i, i});
    check_close(Tensor::einsum("ii", {t_of(sq)}), Arr{{}, {tr}}, tol_for(f, 4), "trace ii", f);
    check_close(Tensor::einsum("ii->i", {t_of(sq)}),
                generate({4},
                         [&](const std::vector<int64_t>& i) {
                           return sq.at({i[0], i[0]});
                         }),
                {}, "diagonal ii->i", f);
    Arr c3 = random_arr({3, 2, 3}, -2, 2, f, 14);
    check_close(Tensor::einsum("iji->j", {t_of(c3)}),
                generate({2},
                         [&](const std::vector<int64_t>& j) {
                           double s = 0;
                           for (int64_t i = 0; i < 3; ++i) s += c3.at({i, j[0], i});
                           return s;
                         }),
                tol_for(f, 4), "iji->j", f);
    Arr u = random_arr({3}, -2, 2, f, 15), v = random_arr({5}, -2, 2, f, 16);
    check_close(Tensor::einsum("i,j->ij", {t_of(u), t_of(v)}),
                generate({3, 5},
                         [&](const std::vector<int64_t>& i) {
                           return u.v[static_cast<size_t>(i[0])] * v.v[static_cast<size_t>(i[1])];
                         }),
                tol_for(f, 1), "outer", f);
    // Batched with ellipsis and a broadcast batch dim.
    Arr p = random_arr({2, 1, 3, 4}, -2, 2, f, 17), q = random_arr({3, 4, 2}, -2, 2, f, 18);
    Arr want = generate({2, 3, 3, 2}, [&](const std::vector<int64_t>& i) {
      double s = 0;
      for (int64_t k = 0; k < 4; ++k) s += p.at({i[0], 0, i[2], k}) * q.at({i[1], k, i[3]});
      return s;
    });
    check_close(Tensor::einsum("...ij,...jk->...ik", {t_of(p), t_of(q)}), want, tol_for(f, 4),
                "ellipsis", f);
    check_close(Tensor::einsum("...ij,...jk", {t_of(p), t_of(q)}), want, tol_for(f, 4),
                "implicit ellipsis", f);
    // Three operands, int32.
    Arr ia = random_arr({2, 3}, -3, 3, dtypes::int32, 19),
        ib = random_arr({3}, -3, 3, dtypes::int32, 20),
        ic = random_arr({2}, -3, 3, dtypes::int32, 21);
    double s3 = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        s3 += ia.at({i, j}) * ib.v[static_cast<size_t>(j)] * ic.v[static_cast<size_t>(i)];
    check_close(Tensor::einsum("ij,j,i->", {t_of(ia, dtypes::int32), t_of(ib, dtypes::int32),
                                            t_of(ic, dtypes::int32)}),
                Arr{{}, {s3}}, {}, "three int32 operands", dtypes::int32);
    CHECK(has(error_of([&] {
                (void)Tensor::einsum("ij,jk->ik", {ta, ta});
              }),
              "subscript 'j' has size 4 and 3"));
    CHECK(has(error_of([&] {
                (void)Tensor::einsum("ijk,jk", {ta, tb});
              }),
              "subscripts 'ijk' do not match operand 0 of shape (3, 4)"));
    CHECK(has(error_of([&] { (void)Tensor::einsum("ij->iz", {ta}); }), "'z' is not in any input"));
    CHECK(has(error_of([&] { (void)Tensor::einsum("ij,jk", {ta}); }), "names 2 operands but 1"));
  }

  TEST_CASE("linear with PyTorch's weight layout") {
    const DType f = dtypes::float32;
    Arr x = random_arr({2, 3, 5}, -2, 2, f, 31), w = random_arr({4, 5}, -1, 1, f, 32),
        b = random_arr({4}, -1, 1, f, 33);
    Arr want = generate({2, 3, 4}, [&](const std::vector<int64_t>& i) {
      double s = b.v[static_cast<size_t>(i[2])];
      for (int64_t k = 0; k < 5; ++k) s += x.at({i[0], i[1], k}) * w.at({i[2], k});
      return s;
    });
    check_close(t_of(x).linear(t_of(w), t_of(b)), want, tol_for(f, 4), "linear", f);
    CHECK(has(error_of([&] { (void)t_of(x).linear(t_of(b)); }), "in_features=4"));
    CHECK(
        has(error_of([&] { (void)t_of(x).linear(t_of(w), t_of(x)); }), "bias of shape (2, 3, 5)"));
  }

  TEST_CASE("layer_norm, group_norm, rms_norm against double loops (float32 and float16)") {
    for (DType d : {dtypes::float32, dtypes::float16}) {
      INFO(d.name());
      Arr x = random_arr({3, 4, 5}, -3, 3, d, 41), w = random_arr({4, 5}, 0.5, 1.5, d, 42),
          b = random_arr({4, 5}, -1, 1, d, 43);
      Arr ln = normalize_ref(x, 20, 1e-5, true);
      Arr lnwb = zip(zip(ln, w, std::multiplies<>()), b, std::plus<>());
      for (double& v : lnwb.v) v = store(d, v);
      check_close(t_of(x, d).layer_norm({4, 5}, t_of(w, d), t_of(b, d)), lnwb, tol_for(d, 4),
                  "layer_norm over (4, 5)", d);
      Arr ln1 = normalize_ref(x, 5, 1e-3, true);
      for (double& v : ln1.v) v = store(d, v);
      check_close(t_of(x, d).layer_norm({5}, {}, {}, 1e-3), ln1, tol_for(d, 4), "layer_norm (5)",
                  d);
      // rms_norm with the dtype's epsilon.
      const double eps = d == dtypes::float16 ? 0.0009765625 : 1.1920928955078125e-07;
      Arr rms = normalize_ref(x, 5, eps, false);
      Arr w5 = random_arr({5}, 0.5, 1.5, d, 44);
      Arr rmsw = zip(rms, w5, std::multiplies<>());
      for (double& v : rmsw.v) v = store(d, v);
      check_close(t_of(x, d).rms_norm({5}, t_of(w5, d)), rmsw, tol_for(d, 4), "rms_norm", d);
    }
    // group_norm: (N, C, H, W) with 6 channels in 3 groups, per-channel affine.
    const DType f = dtypes::float32;
    Arr x = random_arr({2, 6, 3, 2}, -3, 3, f, 45), w = random_arr({6}, 0.5, 1.5, f, 46),
        b = random_arr({6}, -1, 1, f, 47);
    Arr g = normalize_ref(x, 12, 1e-5, true);
    Arr want = generate(x.shape, [&](const std::vector<int64_t>& i) {
      return g.at(i) * w.v[static_cast<size_t>(i[1])] + b.v[static_cast<size_t>(i[1])];
    });
    check_close(t_of(x).group_norm(3, t_of(w), t_of(b)), want, tol_for(f, 4), "group_norm", f);
    CHECK(
        has(error_of([&] { (void)t_of(x).group_norm(4); }), "num_groups=4 does not divide the 6"));
    CHECK(has(
        error_of([&] {
          (void)t_of(x).layer_norm({3, 3});
        }),
        "normalized_shape (3, 3) does not match the trailing dimensions of input (2, 6, 3, 2)"));
    CHECK(has(error_of([&] {
                (void)t_of(x).layer_norm({3, 2}, t_of(w));
              }),
              "weight has shape (6,), expected (3, 2)"));
  }

  TEST_CASE(
      "batch_norm: training uses batch statistics and updates running stats; eval uses them") {
    const DType f = dtypes::float32;
    Arr x = random_arr({4, 3, 2, 5}, -3, 3, f, 51), w = random_arr({3}, 0.5, 1.5, f, 52),
        b = random_arr({3}, -1, 1, f, 53), rm = random_arr({3}, -1, 1, f, 54),
        rv = random_arr({3}, 0.5, 2, f, 55);
    // Batch statistics per channel in double.
    std::vector<double> mean(3, 0), var(3, 0);
    const double n = 4 * 2 * 5;
    for (int64_t i = 0; i < numel(x.shape); ++i)
      mean[static_cast<size_t>(unravel(i, x.shape)[1])] += x.v[static_cast<size_t>(i)] / n;
    for (int64_t i = 0; i < numel(x.shape); ++i) {
      const auto c = static_cast<size_t>(unravel(i, x.shape)[1]);
      var[c] += std::pow(x.v[static_cast<size_t>(i)] - mean[c], 2) / n;
    }
    Tensor trm = t_of(rm), trv = t_of(rv);
    Tensor r = t_of(x).batch_norm(trm, trv, t_of(w), t_of(b), true, 0.1, 1e-5);
    Arr want = generate(x.shape, [&](const std::vector<int64_t>& i) {
      const auto c = static_cast<size_t>(i[1]);
      return (x.at(i) - mean[c]) / std::sqrt(var[c] + 1e-5) * w.v[c] + b.v[c];
    });
    check_close(r, want, tol_for(f, 4), "training output", f);
    Arr nrm = generate({3}, [&](const std::vector<int64_t>& i) {
      const auto c = static_cast<size_t>(i[0]);
      return 0.9 * rm.v[c] + 0.1 * mean[c];
    });
    Arr nrv = generate({3}, [&](const std::vector<int64_t>& i) {
      const auto c = static_cast<size_t>(i[0]);
      return 0.9 * rv.v[c] + 0.1 * var[c] * n / (n - 1);
    });
    check_close(trm, nrm, tol_for(f, 4), "running_mean updated", f);
    check_close(trv, nrv, tol_for(f, 4), "running_var updated (unbiased)", f);
    // Eval with the updated running statistics.
    Arr want_eval = generate(x.shape, [&](const std::vector<int64_t>& i) {
      const auto c = static_cast<size_t>(i[1]);
      return (x.at(i) - nrm.v[c]) / std::sqrt(nrv.v[c] + 1e-5) * w.v[c] + b.v[c];
    });
    check_close(t_of(x).batch_norm(trm, trv, t_of(w), t_of(b)), want_eval, tol_for(f, 4), "eval",
                f);
    CHECK(has(error_of([&] { (void)t_of(x).batch_norm(t_of(w), t_of(x)); }),
              "running_var has shape (4, 3, 2, 5), expected (3,)"));
    CHECK(has(error_of([&] { (void)t_of(x).batch_norm({}, {}); }), "running_mean and running_var"));
  }

  TEST_CASE("dropout: zeroes about p of the elements, scales the rest, identity in eval") {
    Tensor::manual_seed(7);
    Tensor x = Tensor::full({64, 64}, 2.0f);
    std::vector<float> v = x.dropout(0.25).to_vector<float>();
    int64_t zeros = 0;
    for (float e : v) {
      if (e == 0)
        ++zeros;
      else
        CHECK(std::abs(e - 2.0f / 0.75f) < 1e-6);
    }
    const double frac = static_cast<double>(zeros) / 4096.0;
    CHECK(frac > 0.22);
    CHECK(frac < 0.28);
    CHECK(x.dropout(0.25, false).sum().item<float>() == 2 * 4096);
    CHECK(x.dropout(0).sum().item<float>() == 2 * 4096);
    CHECK(x.dropout(1).sum().item<float>() == 0);
    CHECK(has(error_of([&] { (void)x.dropout(1.5); }), "between 0 and 1"));
  }

  TEST_CASE("scaled_dot_product_attention: bool, additive and causal masks, scale") {
    const DType f = dtypes::float32;
    Arr q = random_arr({2, 3, 4, 8}, -1, 1, f, 61), k = random_arr({2, 3, 6, 8}, -1, 1, f, 62),
        v = random_arr({2, 3, 6, 5}, -1, 1, f, 63);
    Arr bm = random_arr({4, 6}, 0, 1, dtypes::bool_, 64);
    for (int64_t i = 0; i < 4; ++i) bm.v[static_cast<size_t>(i * 6)] = 1; // no row fully masked
    Arr am = random_arr({4, 6}, -2, 2, f, 65);
    // mode 0: none, 1: bool mask, 2: additive, 3: causal.
    auto ref = [&](int mode, double scale) {
      return generate({2, 3, 4, 5}, [&](const std::vector<int64_t>& i) {
        std::vector<double> s(6);
        double m = -kInf;
        for (int64_t j = 0; j < 6; ++j) {
          double d = 0;
          for (int64_t e = 0; e < 8; ++e)
            d += q.at({i[0], i[1], i[2], e}) * k.at({i[0], i[1], j, e});
          d *= scale;
          if (mode == 1 && bm.at({i[2], j}) == 0) d = -kInf;
          if (mode == 2) d += am.at({i[2], j});
          if (mode == 3 && j > i[2]) d = -kInf;
          s[static_cast<size_t>(j)] = d;
          m = std::max(m, d);
        }
        double z = 0, out = 0;
        for (double& x : s) z += (x = std::exp(x - m));
        for (int64_t j = 0; j < 6; ++j)
          out += s[static_cast<size_t>(j)] / z * v.at({i[0], i[1], j, i[3]});
        return out;
      });
    };
    Tensor tq = t_of(q), tk = t_of(k), tv = t_of(v);
    const double sc = 1 / std::sqrt(8.0);
    check_close(tq.scaled_dot_product_attention(tk, tv), ref(0, sc), tol_for(f, 4), "no mask", f);
    check_close(tq.scaled_dot_product_attention(tk, tv, t_of(bm, dtypes::bool_)), ref(1, sc),
                tol_for(f, 4), "bool mask", f);
    check_close(tq.scaled_dot_product_attention(tk, tv, t_of(am)), ref(2, sc), tol_for(f, 4),
                "additive mask", f);
    check_close(tq.scaled_dot_product_attention(tk, tv, {}, 0, true), ref(3, sc), tol_for(f, 4),
                "causal", f);
    check_close(tq.scaled_dot_product_attention(tk, tv, {}, 0, false, 0.3), ref(0, 0.3),
                tol_for(f, 4), "scale 0.3", f);
    // dropout_p drops attention weights (threefry, same seed gives the same mask) and rescales.
    Tensor::manual_seed(5);
    std::vector<float> dropped =
        tq.scaled_dot_product_attention(tk, tv, {}, 0.5).to_vector<float>();
    Tensor::manual_seed(5);
    Tensor wts = tq.matmul(tk.transpose()).mul(sc).softmax(-1);
    Arr manual = from_tensor(wts.dropout(0.5).matmul(tv));
    check_close(Tensor::from_vector(dropped, Shape{2, 3, 4, 5}), manual, tol_for(f, 4),
                "dropout_p 0.5 = softmax(qk).dropout(0.5) @ v", f);
    Arr plain = ref(0, sc);
    double diff = 0;
    for (size_t i = 0; i < plain.v.size(); ++i)
      diff = std::max(diff, std::abs(plain.v[i] - dropped[i]));
    CHECK(diff > 0.01);
    CHECK(has(error_of([&] { (void)tq.scaled_dot_product_attention(tv, tv); }),
              "query (2, 3, 4, 8), key (2, 3, 6, 5)"));
    CHECK(has(error_of([&] { (void)tq.scaled_dot_product_attention(tk, tv, t_of(am), 0, true); }),
              "not both"));
  }

  TEST_CASE("scaled_dot_product_attention with enable_gqa: kv heads shared by query heads") {
    // 6 query heads over 3 key/value heads: query heads 2h and 2h+1 read kv head h (PyTorch's
    // repeat_interleave), the same as repeating k and v by hand.
    const DType f = dtypes::float32;
    Arr q = random_arr({2, 6, 4, 8}, -1, 1, f, 71), k = random_arr({2, 3, 5, 8}, -1, 1, f, 72),
        v = random_arr({2, 3, 5, 7}, -1, 1, f, 73);
    Tensor tq = t_of(q), tk = t_of(k), tv = t_of(v);
    Tensor gqa = tq.scaled_dot_product_attention(tk, tv, {}, 0, true, {}, true);
    CHECK(gqa.shape() == Shape{2, 6, 4, 7});
    check_close(gqa,
                from_tensor(tq.scaled_dot_product_attention(
                    tk.repeat_interleave(2, -3), tv.repeat_interleave(2, -3), {}, 0, true)),
                tol_for(f, 4), "gqa = repeated kv", f);
    check_close(gqa.shrink({{0, 2}, {3, 4}, {0, 4}, {0, 7}}),
                from_tensor(tq.shrink({{0, 2}, {3, 4}, {0, 4}, {0, 8}})
                                .scaled_dot_product_attention(
                                    tk.shrink({{0, 2}, {1, 2}, {0, 5}, {0, 8}}),
                                    tv.shrink({{0, 2}, {1, 2}, {0, 5}, {0, 7}}), {}, 0, true)),
                tol_for(f, 4), "query head 3 reads kv head 1", f);
    // Equal head counts: nothing repeats. Head counts that do not divide: an error naming them.
    check_close(
        tq.shrink({{0, 2}, {0, 3}, {0, 4}, {0, 8}})
            .scaled_dot_product_attention(tk, tv, {}, 0, false, {}, true),
        from_tensor(
            tq.shrink({{0, 2}, {0, 3}, {0, 4}, {0, 8}}).scaled_dot_product_attention(tk, tv)),
        tol_for(f, 4), "equal heads", f);
    CHECK(has(error_of([&] {
                (void)tq.shrink({{0, 2}, {0, 4}, {0, 4}, {0, 8}})
                    .scaled_dot_product_attention(tk, tv, {}, 0, false, {}, true);
              }),
              "multiple of the key's 3"));
  }

  TEST_CASE("cross_entropy and nll_loss: class indices, weights, ignore_index, label smoothing") {
    const DType f = dtypes::float32;
    const int64_t n = 6, c = 5;
    Arr x = random_arr({n, c}, -3, 3, f, 71), w = random_arr({c}, 0.2, 2, f, 72);
    Arr y = random_arr({n}, 0, c - 1, dtypes::int32, 73);
    y.v[2] = -100; // ignored
    Arr lp = log_softmax_ref(x);
    for (bool use_w : {false, true})
      for (double eps : {0.0, 0.2})
        for (const std::string red : {"none", "mean", "sum"}) {
          INFO("weight " << use_w << " label_smoothing " << eps << " reduction " << red);
          Arr nll{{n}, {}}, smooth{{n}, {}};
          double wsum = 0;
          for (int64_t i = 0; i < n; ++i) {
            const auto t = static_cast<int64_t>(y.v[static_cast<size_t>(i)]);
            if (t == -100) {
              nll.v.push_back(0);
              smooth.v.push_back(0);
              continue;
            }
            const double wt = use_w ? w.v[static_cast<size_t>(t)] : 1;
            wsum += wt;
            nll.v.push_back(-wt * lp.at({i, t}));
            double s = 0;
            for (int64_t j = 0; j < c; ++j)
              s -= (use_w ? w.v[static_cast<size_t>(j)] : 1) * lp.at({i, j});
            smooth.v.push_back(s);
          }
          auto red_ = [&](const Arr& a) {
            if (red == "none") return a;
            double s = 0;
            for (double e : a.v) s += e;
            return Arr{{}, {red == "sum" ? s : s / wsum}};
          };
          Arr rn = red_(nll), rs = red_(smooth);
          Arr want = zip(rn, rs, [&](double a, double b) { return (1 - eps) * a + eps / c * b; });
          Tensor tw = t_of(w);
          Tensor::OptTensor ow = use_w ? Tensor::OptTensor(tw) : std::nullopt;
          check_close(t_of(x).cross_entropy(t_of(y, dtypes::int32), ow, -100, red, eps), want,
                      tol_for(f, 4), "cross_entropy", f);
          if (eps == 0)
            check_close(t_of(lp).nll_loss(t_of(y, dtypes::int32), ow, -100, red), want,
                        tol_for(f, 4), "nll_loss", f);
        }
    // (N, C, d) input with (N, d) targets; tinygrad's alias with classes last.
    Arr x3 = random_arr({2, 4, 3}, -3, 3, f, 74), y3 = random_arr({2, 3}, 0, 3, dtypes::int32, 75);
    double s = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t d = 0; d < 3; ++d) {
        double m = -kInf, z = 0;
        for (int64_t j = 0; j < 4; ++j) m = std::max(m, x3.at({i, j, d}));
        for (int64_t j = 0; j < 4; ++j) z += std::exp(x3.at({i, j, d}) - m);
        s += -(x3.at({i, static_cast<int64_t>(y3.at({i, d})), d}) - m - std::log(z));
      }
    check_close(t_of(x3).cross_entropy(t_of(y3, dtypes::int32)), Arr{{}, {s / 6}}, tol_for(f, 4),
                "(N, C, d)", f);
    check_close(
        t_of(x3).permute({0, 2, 1}).sparse_categorical_crossentropy(t_of(y3, dtypes::int32)),
        Arr{{}, {s / 6}}, tol_for(f, 4), "sparse_categorical_crossentropy", f);
    CHECK(
        has(error_of([&] { (void)t_of(x).cross_entropy(t_of(x3, dtypes::int32)); }),
            "target of shape (2, 4, 3) does not match input (6, 5) (expected target shape (6,))"));
    CHECK(
        has(error_of([&] { (void)t_of(x).cross_entropy(t_of(y, dtypes::int32), {}, -100, "avg"); }),
            "'avg'"));
    CHECK(has(error_of([&] { (void)t_of(x).nll_loss(t_of(y, dtypes::int32), t_of(y)); }),
              "weight of shape (6,) does not match the 5 classes"));
  }

  TEST_CASE("cross_entropy with probability targets and label smoothing") {
    const DType f = dtypes::float32;
    Arr x = random_arr({4, 3}, -3, 3, f, 81), p = random_arr({4, 3}, 0, 1, f, 82),
        w = random_arr({3}, 0.5, 2, f, 83);
    Arr lp = log_softmax_ref(x);
    for (double eps : {0.0, 0.1}) {
      Arr l = generate({4}, [&](const std::vector<int64_t>& i) {
        double s = 0;
        for (int64_t j = 0; j < 3; ++j)
          s -= w.v[static_cast<size_t>(j)] * (p.at({i[0], j}) * (1 - eps) + eps / 3) *
               lp.at({i[0], j});
        return s;
      });
      check_close(t_of(x).cross_entropy(t_of(p), t_of(w), -100, "none", eps), l, tol_for(f, 4),
                  "none", f);
      check_close(t_of(x).cross_entropy(t_of(p), t_of(w), -100, "mean", eps), reduce_ref(l, "mean"),
                  tol_for(f, 4), "mean over the batch", f);
    }
    CHECK(has(error_of([&] { (void)t_of(x).cross_entropy(t_of(w)); }),
              "target of shape (3,) does not match input of shape (4, 3)"));
  }

  TEST_CASE("binary cross entropy (with logits, pos_weight), mse, l1, smooth_l1") {
    const DType f = dtypes::float32;
    Arr x = random_arr({3, 7}, -4, 4, f, 91), t = random_arr({3, 7}, 0, 1, f, 92),
        w = random_arr({7}, 0.5, 2, f, 93), pw = random_arr({7}, 0.5, 3, f, 94);
    Arr pr = map(x, [](double v) { return 1 / (1 + std::exp(-v)); });
    pr.v[0] = 0; // log(0) is clamped at -100
    pr.v[1] = 1;
    t.v[0] = 0.5;
    t.v[1] = 0.25;
    for (const std::string red : {"none", "mean", "sum"}) {
      INFO(red);
      Arr bce = generate(x.shape, [&](const std::vector<int64_t>& i) {
        const double pv = pr.at(i), tv = t.at(i);
        return -w.v[static_cast<size_t>(i[1])] * (tv * std::max(std::log(pv), -100.0) +
                                                  (1 - tv) * std::max(std::log(1 - pv), -100.0));
      });
      check_close(t_of(pr).binary_cross_entropy(t_of(t), t_of(w), red), reduce_ref(bce, red),
                  tol_for(f, 4), "binary_cross_entropy", f);
      Arr bcel = generate(x.shape, [&](const std::vector<int64_t>& i) {
        const double xv = x.at(i), tv = t.at(i), p = pw.v[static_cast<size_t>(i[1])];
        const double sig = 1 / (1 + std::exp(-xv));
        return -(p * tv * std::log(sig) + (1 - tv) * std::log(1 - sig));
      });
      check_close(t_of(x).binary_cross_entropy_with_logits(t_of(t), {}, red, t_of(pw)),
                  reduce_ref(bcel, red), tol_for(f, 4), "bce_with_logits pos_weight", f);
      Arr y = random_arr({3, 7}, -4, 4, f, 95);
      check_close(t_of(x).mse_loss(t_of(y), red),
                  reduce_ref(zip(x, y, [](double a, double b) { return (a - b) * (a - b); }), red),
                  tol_for(f, 4), "mse_loss", f);
      check_close(t_of(x).l1_loss(t_of(y), red),
                  reduce_ref(zip(x, y, [](double a, double b) { return std::abs(a - b); }), red),
                  tol_for(f, 4), "l1_loss", f);
      for (double beta : {1.0, 0.5, 0.0}) {
        Arr sl = zip(x, y, [&](double a, double b) {
          const double d = std::abs(a - b);
          return d < beta ? 0.5 * d * d / beta : d - 0.5 * beta;
        });
        check_close(t_of(x).smooth_l1_loss(t_of(y), red, beta), reduce_ref(sl, red), tol_for(f, 4),
                    "smooth_l1_loss beta " + std::to_string(beta), f);
      }
    }
    // Large logits stay finite.
    Arr big{{2}, {100, -100}}, tb{{2}, {0, 1}};
    check_close(t_of(big).binary_cross_entropy_with_logits(t_of(tb), {}, "none"),
                Arr{{2}, {100, 100}}, tol_for(f, 4), "large logits", f);
    CHECK(has(error_of([&] { (void)t_of(x).mse_loss(t_of(w)); }),
              "target of shape (7,) does not match input of shape (3, 7)"));
    CHECK(has(error_of([&] { (void)t_of(x).binary_cross_entropy(t_of(w)); }), "(7,)"));
  }
}
