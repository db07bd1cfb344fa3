// Gradient checks for the math ops, reductions, scans and sorts of mathops
// (tensor_activations.cpp, tensor_scan.cpp, tensor_sort.cpp) and for the indexing and movement
// ops (tensor_indexing.cpp, tensor_movement_ext.cpp): central finite differences in float64 on
// small shapes (gradcheck.hpp, relative error below 1e-5), at points away from every kink.
//
// Not differentiable, so not checked here: isnan/isinf/isfinite and the logical ops (bool
// outputs), sign's and copysign's derivative w.r.t. the sign source (zero almost everywhere; only
// that zero is checked), the int32 indices of cummax/cummin/max_dim/min_dim/sort/topk and
// argsort (integer outputs), one_hot/randperm/multinomial (integer outputs, random), the index
// tensors of gather/scatter/index_select/take_along_dim/getitem (integers) and masks (bool).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tensor/gradcheck.hpp"
#include "tensor/ref.hpp"
#include "tg/tensor.hpp"

using namespace tgt;
using tg::Slice;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using Xs = std::vector<Tensor>;

Tensor ints(const std::vector<int32_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor bools(const std::vector<bool>& v, const Shape& s) {
  std::vector<uint8_t> b(v.begin(), v.end());
  return Tensor::from_vector(b, s).cast(dtypes::bool_);
}

// The weighted sum in gradcheck already gives every output element its own weight; a nonlinear
// tail (exp, square) also makes a gradient that routes to the wrong element visible when two
// outputs share a weight pattern.
void check_all(const std::vector<std::pair<const char*, Fn>>& ops, const Shape& s,
               const GradcheckOptions& o = {}) {
  for (const auto& [name, f] : ops) {
    INFO(std::string(name));
    CHECK(gradcheck(f, {s}, o));
  }
}

} // namespace

TEST_SUITE("tensor.grad_ops") {
  // ---- activations and elementwise math --------------------------------------------------
  TEST_CASE("gradcheck: smooth activations and math ops") {
    const std::vector<std::pair<const char*, Fn>> ops{
        {"gelu", [](const Xs& x) { return x[0].gelu(); }},
        {"gelu tanh", [](const Xs& x) { return x[0].gelu("tanh"); }},
        {"silu", [](const Xs& x) { return x[0].silu(); }},
        {"swish", [](const Xs& x) { return x[0].swish(); }},
        {"softplus", [](const Xs& x) { return x[0].softplus(); }},
        {"softplus beta 2", [](const Xs& x) { return x[0].softplus(2.0, 20); }},
        {"mish", [](const Xs& x) { return x[0].mish(); }},
        {"softsign", [](const Xs& x) { return x[0].softsign(); }},
        {"logsigmoid", [](const Xs& x) { return x[0].logsigmoid(); }},
        {"atan", [](const Xs& x) { return x[0].atan(); }},
        {"sinh", [](const Xs& x) { return x[0].sinh(); }},
        {"cosh", [](const Xs& x) { return x[0].cosh(); }},
        {"tan", [](const Xs& x) { return (x[0] * 0.6).tan(); }},
        {"nan_to_num (identity on finite values)", [](const Xs& x) { return x[0].nan_to_num(); }},
    };
    check_all(ops, {3, 4});
    // Large inputs: softplus past its threshold is the identity, logsigmoid/mish stay finite.
    const std::vector<std::pair<const char*, Fn>> wide{
        {"softplus wide", [](const Xs& x) { return x[0].softplus(1.0, 5); }},
        {"logsigmoid wide", [](const Xs& x) { return x[0].logsigmoid(); }},
        {"mish wide", [](const Xs& x) { return x[0].mish(); }},
        {"silu wide", [](const Xs& x) { return x[0].silu(); }},
    };
    for (const auto& [name, f] : wide) {
      INFO(std::string(name));
      CHECK(gradcheck_at(f, {away_from({2, 5}, -30, 30, 11, {-5, 5}, 0.2)}));
    }
  }

  TEST_CASE("gradcheck: piecewise activations away from their kinks") {
    const std::vector<double> kinks{-3, -1, 0, 1, 3, 6};
    const std::vector<std::pair<const char*, Fn>> ops{
        {"elu", [](const Xs& x) { return x[0].elu(); }},
        {"elu alpha 0.5", [](const Xs& x) { return x[0].elu(0.5); }},
        {"celu", [](const Xs& x) { return x[0].celu(1.5); }},
        {"selu", [](const Xs& x) { return x[0].selu(); }},
        {"leaky_relu", [](const Xs& x) { return x[0].leaky_relu(); }},
        {"leaky_relu 0.2", [](const Xs& x) { return x[0].leaky_relu(0.2); }},
        {"hardtanh", [](const Xs& x) { return x[0].hardtanh(); }},
        {"hardtanh -2 2.5", [](const Xs& x) { return x[0].hardtanh(-2, 2.5); }},
        {"hardswish", [](const Xs& x) { return x[0].hardswish(); }},
        {"hardsigmoid", [](const Xs& x) { return x[0].hardsigmoid(); }},
        {"relu6", [](const Xs& x) { return x[0].relu6(); }},
        {"sign (zero gradient)", [](const Xs& x) { return x[0].sign() * x[0].exp(); }},
        {"copysign scalar", [](const Xs& x) { return x[0].copysign(-1.0).exp(); }},
    };
    for (const auto& [name, f] : ops) {
      INFO(std::string(name));
      CHECK(gradcheck_at(f, {away_from({4, 5}, -7, 7, 3, kinks, 0.1)}));
      CHECK(gradcheck_at(f, {away_from({3, 3}, -1.5, 1.5, 4, kinks, 0.1)}));
    }
  }

  TEST_CASE("gradcheck: erf, asin, acos inside their domains") {
    CHECK(gradcheck_at([](const Xs& x) { return x[0].erf(); },
                       {away_from({3, 4}, -2.5, 2.5, 5, {0})}));
    // asin/acos: A-S 4.4.46 takes sqrt(1 - |x|); stay inside (-1, 1) and off 0.
    CHECK(gradcheck_at([](const Xs& x) { return x[0].asin(); },
                       {away_from({3, 4}, -0.9, 0.9, 6, {0})}));
    CHECK(gradcheck_at([](const Xs& x) { return x[0].acos(); },
                       {away_from({3, 4}, -0.9, 0.9, 7, {0})}));
  }

  TEST_CASE("gradcheck: lerp and copysign") {
    CHECK(gradcheck([](const Xs& x) { return x[0].lerp(x[1], x[2]); }, {{2, 3}, {2, 3}, {2, 3}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].lerp(x[1], x[2]); }, {{2, 3}, {3}, {2, 1}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].lerp(x[1], 0.3); }, {{2, 3}, {2, 3}}));
    // copysign: d/dself = sign(self) * sign(other). The sign source only picks a branch of
    // `where`, so it has no gradient (zero almost everywhere) and is a constant here.
    Arr o1 = away_from({3, 4}, -2, 2, 9, {0}), o2 = away_from({4}, -2, 2, 12, {0});
    const Tensor c1 = to_tensor(o1, dtypes::float64), c2 = to_tensor(o2, dtypes::float64);
    CHECK(gradcheck_at([&](const Xs& x) { return x[0].copysign(c1); },
                       {away_from({3, 4}, -2, 2, 8, {0})}));
    CHECK(gradcheck_at([&](const Xs& x) { return x[0].copysign(c2).exp(); },
                       {away_from({3, 4}, -2, 2, 10, {0})}));
  }

  // ---- statistics, scans, extremes, sorting ---------------------------------------------
  TEST_CASE("gradcheck: var, std, var_mean, std_mean") {
    for (double corr : {0.0, 1.0, 2.0})
      for (bool keep : {false, true}) {
        INFO("correction " << corr << " keepdim " << keep);
        CHECK(gradcheck([=](const Xs& x) { return x[0].var({1}, keep, corr); }, {{3, 4, 2}}));
        CHECK(gradcheck([=](const Xs& x) { return x[0].std({0, 2}, keep, corr); }, {{3, 4, 2}}));
        CHECK(gradcheck([=](const Xs& x) { return x[0].var({}, keep, corr); }, {{3, 4}}));
      }
    CHECK(gradcheck(
        [](const Xs& x) {
          auto [v, m] = x[0].var_mean({-1}, true);
          return v * 2.0 + m.square();
        },
        {{3, 5}}));
    CHECK(gradcheck(
        [](const Xs& x) {
          auto [s, m] = x[0].std_mean({0});
          return s.exp() + m * s;
        },
        {{4, 3}}));
    // Non-contiguous input.
    CHECK(gradcheck([](const Xs& x) { return x[0].permute({1, 0}).std({1}); }, {{5, 3}}));
  }

  TEST_CASE("gradcheck: cumsum, cumprod, cummax, cummin values") {
    CHECK(gradcheck([](const Xs& x) { return x[0].cumsum(0); }, {{5, 3}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].cumsum(-1).square(); }, {{2, 7}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].transpose().cumsum(1); }, {{4, 3}}));
    // Longer than one 256-block of _split_cumalu.
    CHECK(gradcheck([](const Xs& x) { return x[0].cumsum(0); }, {{300}}));
    // cumprod away from 0 (its gradient divides by nothing, but keep the values moderate).
    CHECK(gradcheck_at([](const Xs& x) { return x[0].cumprod(1); },
                       {away_from({3, 5}, -1.8, 1.8, 13, {0}, 0.3)}));
    CHECK(gradcheck_at([](const Xs& x) { return x[0].cumprod(0); },
                       {away_from({4, 2}, 0.3, 1.8, 14, {})}));
    // Random values are distinct, so the running extreme is unique everywhere.
    CHECK(gradcheck([](const Xs& x) { return x[0].cummax(1).values.square(); }, {{3, 6}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].cummin(0).values * 1.5; }, {{6, 2}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].cummax(-1).values; }, {{7}}));
  }

  TEST_CASE("gradcheck: max_dim, min_dim values") {
    CHECK(gradcheck([](const Xs& x) { return x[0].max_dim(1).values; }, {{3, 5}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].max_dim(0, true).values.exp(); }, {{4, 3}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].min_dim(-1).values; }, {{2, 3, 4}}));
  }

  // Axes longer than a power of two (padded in the bitonic network): the backward stores per
  // step (contiguous_backward in sort), which keeps it small; before, length 5 took minutes.
  TEST_CASE("gradcheck: sort and topk values") {
    CHECK(gradcheck([](const Xs& x) { return x[0].sort(0, true).values.square(); }, {{4}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].topk(2, -1, false).values.exp(); }, {{3}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].transpose().sort(-1).values; }, {{4, 2}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].sort(-1).values.exp(); }, {{3, 6}}));
    CHECK(gradcheck([](const Xs& x) { return x[0].topk(3, 0).values; }, {{9, 2}}));
  }

  // ---- indexing --------------------------------------------------------------------------
  TEST_CASE("gradcheck: getitem with ints, slices, None, Ellipsis") {
    const std::vector<std::pair<const char*, Fn>> ops{
        {"int", [](const Xs& x) { return x[0][1].exp(); }},
        {"negative int",
         [](const Xs& x) {
           return x[0][{-1, 2}];
         }},
        {"slices",
         [](const Xs& x) {
           return x[0][{Slice{0, 2}, Slice{1, std::nullopt, 2}}];
         }},
        {"negative step",
         [](const Xs& x) {
           return x[0][{Slice{}, Slice{std::nullopt, std::nullopt, -1}, 1}].square();
         }},
        {"None and Ellipsis",
         [](const Xs& x) {
           return x[0][{tg::None, tg::Ellipsis, 0}] * 2.0;
         }},
        {"Ellipsis then int",
         [](const Xs& x) {
           return x[0][{tg::Ellipsis, -1}].exp();
         }},
    };
    check_all(ops, {2, 3, 4});
  }

  TEST_CASE("gradcheck: getitem with tensor indices, lists and masks") {
    const std::vector<std::pair<const char*, Fn>> ops{
        // Repeated indices: their gradients add up.
        {"tensor index",
         [](const Xs& x) {
           return x[0][ints({2, 0, 2}, {3})].exp();
         }},
        {"two tensors",
         [](const Xs& x) {
           return x[0][{ints({0, 1, 1}, {3}), ints({3, 3, 0}, {3})}];
         }},
        {"tensor then slice",
         [](const Xs& x) {
           return x[0][{Slice{}, ints({1, -1, 1, 0}, {2, 2})}].square();
         }},
        {"host list",
         [](const Xs& x) {
           return x[0][std::vector<int64_t>{1, 1, 0}] * 3.0;
         }},
        {"mask",
         [](const Xs& x) {
           return x[0][bools({true, false, true}, {3})].exp();
         }},
    };
    check_all(ops, {3, 4});
    CHECK(gradcheck(
        [](const Xs& x) {
          return x[0][bools({true, false, false, true, true, false}, {2, 3})].square();
        },
        {{2, 3}}));
    // Separated tensor indices (their axis moves to the front) and a mask with an int.
    CHECK(gradcheck(
        [](const Xs& x) {
          return x[0][{ints({1, 0}, {2}), Slice{}, ints({0, 3}, {2})}];
        },
        {{2, 3, 4}}));
    CHECK(gradcheck(
        [](const Xs& x) {
          return x[0][{bools({true, false, true}, {3}), 1}].exp();
        },
        {{3, 4}}));
  }

  TEST_CASE("gradcheck: gather, index_select, take_along_dim") {
    const Tensor i1 = ints({0, 3, 3, 1, 2, 0, 1, 1}, {2, 4});
    CHECK(gradcheck([&](const Xs& x) { return x[0].gather(1, i1); }, {{2, 5}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].gather(0, ints({1, 0, 2, 2}, {2, 2})).exp();
        },
        {{3, 4}}));
    CHECK(gradcheck([&](const Xs& x) { return x[0].transpose().gather(1, i1); }, {{5, 2}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].index_select(0, ints({2, 0, 2}, {3}));
        },
        {{3, 4}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].index_select(-1, ints({1, 1}, {2})).square();
        },
        {{2, 3, 3}}));
    CHECK(gradcheck([&](const Xs& x) { return x[0].take_along_dim(i1, 1); }, {{2, 5}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].take_along_dim(ints({5, 0, 5}, {3}));
        },
        {{2, 3}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].take_along_dim(ints({2, 0, 1}, {3, 1}), 0);
        },
        {{3, 4}}));
  }

  TEST_CASE("gradcheck: scatter and scatter_reduce w.r.t. self and src") {
    // Distinct positions for the replacing scatter (duplicates: the last wins, which a
    // derivative cannot see either way).
    const Tensor idx = ints({2, 0, 1, 3, 0, 4}, {2, 3});
    CHECK(gradcheck([&](const Xs& x) { return x[0].scatter(1, idx, x[1]); }, {{2, 5}, {2, 3}}));
    CHECK(
        gradcheck([&](const Xs& x) { return x[0].scatter(1, idx, x[1]).exp(); }, {{2, 5}, {2, 4}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].scatter(0, ints({1, 0, 2}, {1, 3}), 2.5);
        },
        {{3, 3}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].scatter(0, ints({1, 0, 1}, {1, 3}), 2.5, "add").square();
        },
        {{3, 3}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].scatter(0, ints({1, 0, 1}, {1, 3}), 2.5, "multiply");
        },
        {{3, 3}}));
    // Duplicate positions in the reductions.
    const Tensor dup = ints({1, 1, 0, 3, 3, 3}, {2, 3});
    for (const char* red : {"sum", "prod", "mean", "amax", "amin"})
      for (bool self : {true, false}) {
        INFO("scatter_reduce " << std::string(red) << " include_self " << self);
        const std::string r = red;
        GradcheckOptions o;
        if (r == "prod") o = {.lo = 0.5, .hi = 1.5};
        CHECK(gradcheck([&](const Xs& x) { return x[0].scatter_reduce(1, dup, x[1], r, self); },
                        {{2, 4}, {2, 3}}, o));
      }
  }

  TEST_CASE("gradcheck: masked_fill") {
    const Tensor m = bools({true, false, false, true, false, true}, {2, 3});
    CHECK(gradcheck([&](const Xs& x) { return x[0].masked_fill(m, -1.5).exp(); }, {{2, 3}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].masked_fill(bools({false, true, true}, {3}), 0.0);
        },
        {{4, 3}}));
    // A tensor value (0-d): its gradient sums over the filled positions.
    CHECK(gradcheck([&](const Xs& x) { return x[0].masked_fill(m, x[1]).square(); }, {{2, 3}, {}}));
  }

  // ---- movement --------------------------------------------------------------------------
  TEST_CASE("gradcheck: pad in every mode, negative pads") {
    const std::vector<std::pair<const char*, Fn>> ops{
        {"constant",
         [](const Xs& x) {
           return x[0].pad({1, 2, 0, 1}, "constant", 0.5).square();
         }},
        {"constant negative",
         [](const Xs& x) {
           return x[0].pad({-1, 2, 1, -1}).exp();
         }},
        {"reflect last",
         [](const Xs& x) {
           return x[0].pad({2, 3}, "reflect");
         }},
        {"reflect two axes",
         [](const Xs& x) {
           return x[0].pad({1, 2, 2, 1}, "reflect").square();
         }},
        {"reflect negative",
         [](const Xs& x) {
           return x[0].pad({-1, 2, 1, -1}, "reflect");
         }},
        {"replicate",
         [](const Xs& x) {
           return x[0].pad({2, 1, 0, 3}, "replicate").square();
         }},
        {"replicate negative",
         [](const Xs& x) {
           return x[0].pad({-2, 3}, "replicate");
         }},
        {"circular",
         [](const Xs& x) {
           return x[0].pad({2, 3, 1, 1}, "circular").square();
         }},
        {"circular negative",
         [](const Xs& x) {
           return x[0].pad({-1, 2, 2, -1}, "circular");
         }},
        {"pair form",
         [](const Xs& x) {
           return x[0].pad(std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 1}, {2, 1}},
                           "reflect");
         }},
    };
    check_all(ops, {2, 3, 4});
  }

  TEST_CASE("gradcheck: repeat, tile, repeat_interleave, roll, flip") {
    const std::vector<std::pair<const char*, Fn>> ops{
        {"repeat",
         [](const Xs& x) {
           return x[0].repeat({2, 1, 3}).square();
         }},
        {"repeat new axis",
         [](const Xs& x) {
           return x[0].repeat({2, 1, 2, 1});
         }},
        {"tile",
         [](const Xs& x) {
           return x[0].tile({3, 1}).exp();
         }},
        {"repeat_interleave dim",
         [](const Xs& x) { return x[0].repeat_interleave(2, 1).square(); }},
        {"repeat_interleave flat", [](const Xs& x) { return x[0].repeat_interleave(3); }},
        {"repeat_interleave counts",
         [](const Xs& x) {
           return x[0].repeat_interleave(std::vector<int64_t>{0, 2, 1}, 1).exp();
         }},
        {"roll",
         [](const Xs& x) {
           return x[0].roll({1, -2}, {0, 2}).square();
         }},
        {"roll flat", [](const Xs& x) { return x[0].roll({5}); }},
        {"flip 0,2",
         [](const Xs& x) {
           return x[0].flip({0, 2}).exp();
         }},
        {"flip all",
         [](const Xs& x) {
           return x[0].flip({-1, 1, 0}) * x[0];
         }},
    };
    check_all(ops, {2, 3, 4});
  }

  TEST_CASE("gradcheck: split, chunk, unflatten, movedim") {
    const std::vector<std::pair<const char*, Fn>> ops{
        {"split size",
         [](const Xs& x) {
           auto p = x[0].split(2, 2);
           return p[0].exp() + p[1] * 2.0;
         }},
        {"split sizes",
         [](const Xs& x) {
           auto p = x[0].split(std::vector<int64_t>{1, 2}, 1);
           return Tensor::cat({p[1].square(), p[0]}, 1);
         }},
        {"chunk",
         [](const Xs& x) {
           // 4 / 3 rounds up to chunks of 2: PyTorch gives 2 chunks, not 3.
           auto p = x[0].chunk(3, -1);
           REQUIRE(p.size() == 2);
           auto q = x[0].chunk(3, 1);
           return Tensor::cat({p[1], p[0].exp()}, -1) + Tensor::cat({q[2], q[0].exp(), q[1]}, 1);
         }},
        {"unflatten",
         [](const Xs& x) {
           return x[0].unflatten(2, {2, -1}).sum({3}).square();
         }},
        {"movedim",
         [](const Xs& x) {
           return x[0].movedim(0, 2).exp().reshape({-1, 2});
         }},
        {"movedim several",
         [](const Xs& x) {
           return x[0].movedim({0, 1}, {2, 0}).contiguous() * 3.0;
         }},
    };
    check_all(ops, {2, 3, 4});
  }

  TEST_CASE("gradcheck: tril, triu, diag, meshgrid") {
    for (int64_t d : {-1, 0, 2}) {
      INFO("diagonal " << d);
      CHECK(gradcheck([=](const Xs& x) { return x[0].tril(d).exp(); }, {{2, 3, 4}}));
      CHECK(gradcheck([=](const Xs& x) { return x[0].triu(d).square(); }, {{4, 3}}));
      CHECK(gradcheck([=](const Xs& x) { return x[0].diag(d).exp(); }, {{4}}));
      CHECK(gradcheck([=](const Xs& x) { return x[0].diag(d); }, {{3, 4}}));
    }
    CHECK(gradcheck([](const Xs& x) { return x[0].transpose().diag(); }, {{3, 3}}));
    for (const char* ix : {"ij", "xy"}) {
      INFO("meshgrid " << std::string(ix));
      CHECK(gradcheck(
          [=](const Xs& x) {
            auto g = Tensor::meshgrid({x[0], x[1], x[2]}, ix);
            return g[0] * g[1].exp() + g[2].square();
          },
          {{2}, {3}, {4}}));
    }
  }
}
