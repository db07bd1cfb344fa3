// nn functional, part 3: max_unpool1d/2d/3d against a direct loop, and the pools' flat
// (asymmetric) padding form against padding first (suite tensor.nnfunc).
#include <doctest/doctest.h>

#include <limits>

#include "tensor/ref.hpp"
#include "tg/error.hpp"

using namespace tgt;
using Ints = std::vector<int64_t>;

namespace {

Tensor t_of(Arr& a, DType d = dtypes::float32) { return to_tensor(a, d); }

// max_unpool by a loop: a zero (N, C, *out) with values[n, c, i] added at indices[n, c, i]
// (flat within the plane).
Arr unpool_ref(const Arr& values, const Arr& indices, const Shape& out_spatial) {
  Shape out{values.shape[0], values.shape[1]};
  int64_t plane = 1, in_plane = 1;
  for (int64_t o : out_spatial) {
    out.push_back(o);
    plane *= o;
  }
  for (size_t j = 2; j < values.shape.size(); ++j) in_plane *= values.shape[j];
  Arr r{out, std::vector<double>(static_cast<size_t>(numel(out)), 0.0)};
  for (int64_t nc = 0; nc < values.shape[0] * values.shape[1]; ++nc)
    for (int64_t i = 0; i < in_plane; ++i) {
      const auto at = static_cast<size_t>(nc * in_plane + i);
      r.v[static_cast<size_t>(nc * plane + static_cast<int64_t>(indices.v[at]))] += values.v[at];
    }
  return r;
}

} // namespace

TEST_SUITE("tensor.nnfunc") {
  TEST_CASE("max_unpool1d/2d/3d put each value back at its index") {
    const DType f = dtypes::float32;
    Arr x = random_arr({2, 3, 9, 10}, -2, 2, f, 11);
    auto [v, i] = t_of(x).max_pool2d_with_indices({3, 2}, Tensor::IntOrTuple{3, 2});
    Arr av = from_tensor(v), ai = from_tensor(i);
    // Default size: (i - 1) * stride - 2 * padding + kernel.
    Tensor u = v.max_unpool2d(i, {3, 2}, Tensor::IntOrTuple{3, 2});
    CHECK(u.shape() == Shape{2, 3, 9, 10});
    check_close(u, unpool_ref(av, ai, {9, 10}), {}, "max_unpool2d", f);
    // output_size: the last two entries count (batch and channel ones are ignored).
    check_close(v.max_unpool2d(i, {3, 2}, Tensor::IntOrTuple{3, 2}, 0, Ints{99, 99, 10, 11}),
                unpool_ref(av, ai, {10, 11}), {}, "max_unpool2d output_size", f);
    // int64 indices (PyTorch's) and a padded pool.
    auto [vp, ip] = t_of(x).max_pool2d_with_indices(3, Tensor::IntOrTuple{2, 3}, 1);
    Tensor up = vp.max_unpool2d(ip.cast(dtypes::int64), 3, Tensor::IntOrTuple{2, 3}, 1);
    CHECK(up.shape() == Shape{2, 3, 9, 10}); // (5-1)*2-2+3, (4-1)*3-2+3
    check_close(up, unpool_ref(from_tensor(vp), from_tensor(ip), {9, 10}), {}, "padded", f);

    Arr x1 = random_arr({2, 2, 8}, -2, 2, f, 12);
    auto [v1, i1] = t_of(x1).max_pool1d_with_indices(2);
    check_close(v1.max_unpool1d(i1, 2), unpool_ref(from_tensor(v1), from_tensor(i1), {8}), {},
                "max_unpool1d", f);
    Arr x3 = random_arr({1, 2, 4, 4, 6}, -2, 2, f, 13);
    auto [v3, i3] = t_of(x3).max_pool3d_with_indices(2);
    check_close(v3.max_unpool3d(i3, 2), unpool_ref(from_tensor(v3), from_tensor(i3), {4, 4, 6}), {},
                "max_unpool3d", f);

    // Infinities and nan travel as values (a where, not a product).
    const double inf = std::numeric_limits<double>::infinity();
    Arr xi{{1, 1, 2, 3}, {inf, -inf, std::nan(""), 1, 2, 3}};
    auto [vi, ii] = t_of(xi).max_pool2d_with_indices(2);
    const std::vector<float> got = vi.max_unpool2d(ii, 2).to_vector<float>();
    CHECK(got == std::vector<float>{INFINITY, 0, 0, 0});

    CHECK(has(error_of([&] { (void)v.max_unpool2d(i.reshape({2, 3, 5, 3}), 2); }), "shape"));
    CHECK(has(error_of([&] { (void)v.max_unpool2d(v, {3, 2}); }), "integers"));
  }

  TEST_CASE("pools take F.pad's flat (before, after) padding, last dimension first") {
    const DType f = dtypes::float32;
    const double inf = std::numeric_limits<double>::infinity();
    Arr x = random_arr({2, 3, 11, 9}, -2, 2, f, 21);
    Tensor tx = t_of(x);
    for (const Ints& p : {Ints{0, 1, 0, 1}, Ints{2, 1, 2, 1}, Ints{2, 0, 2, 1}}) {
      INFO(p[0] << p[1] << p[2] << p[3]);
      // (left, right, top, bottom): the same as padding with -inf (max) or 0 (sum) first.
      const std::vector<std::pair<int64_t, int64_t>> pairs{
          {0, 0}, {0, 0}, {p[2], p[3]}, {p[0], p[1]}};
      check_close(tx.max_pool2d(5, {}, p), from_tensor(tx.pad(pairs, -inf).max_pool2d(5)), {},
                  "max_pool2d", f);
      check_close(tx.avg_pool2d(4, 2, p), from_tensor(tx.pad(pairs).avg_pool2d(4, 2)),
                  tol_for(f, 4), "avg_pool2d", f);
    }
    // Equal halves mean what the symmetric form means, with and without counting the padding.
    check_close(tx.avg_pool2d(3, 2, Ints{1, 1, 1, 1}, false, false),
                from_tensor(tx.avg_pool2d(3, 2, 1, false, false)), tol_for(f, 4),
                "avg_pool2d count_include_pad=false", f);
    // Without counting the padding, each window divides by its cells inside the input.
    Arr ones = random_arr({1, 1, 3, 3}, 1, 1, f, 22);
    CHECK(t_of(ones).avg_pool2d(2, 2, Ints{1, 0, 1, 0}, false, false).to_vector<float>() ==
          std::vector<float>{1, 1, 1, 1});
    CHECK(has(error_of([&] { (void)tx.max_pool2d(2, {}, Ints{0, 2, 0, 0}); }), "half"));
    CHECK(has(error_of([&] { (void)tx.max_pool2d(3, {}, Ints{-1, 0, 0, 0}); }), ">= 0"));
  }
}
