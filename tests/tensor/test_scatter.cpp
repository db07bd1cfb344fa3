// The scatter-add (SCATTER_ADD: a kernel for the base, then one that adds the values in index
// order) against plain loops: duplicates, negative and out-of-range indices, empty indices,
// the order of float additions; and the gradient of a gather (tensor indexing, nn::Embedding,
// gather) as a scatter-add: equal to the one-hot form's dense gradient, with no reduce in its
// schedule. The suite runs again through the C renderer (tensor.scatter_clang) and on DEV=CL.
#include <doctest/doctest.h>

#include "tensor/gradcheck.hpp"
#include "tensor/ref.hpp"
#include "tg/nn.hpp"
#include "tg/schedule.hpp"

using namespace tgt;

namespace {

using Xs = std::vector<Tensor>;

Tensor ints(const std::vector<int32_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }

// scatter_add(0, index, src) on a (V, H) base as a loop in the order of the index's rows: a
// negative index counts from the end, one out of range adds nothing; each sum is rounded to d.
Arr scatter_add_loop(Arr base, const std::vector<int32_t>& index, const Arr& src, DType d) {
  const int64_t V = base.shape[0], H = base.shape[1], T = src.shape[0];
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      int64_t r = index[static_cast<size_t>(t * H + h)];
      if (r < 0) r += V;
      if (r < 0 || r >= V) continue;
      double& o = base.v[static_cast<size_t>(r * H + h)];
      o = store(d, o + src.v[static_cast<size_t>(t * H + h)]);
    }
  return base;
}

Arr transposed(const Arr& a) {
  const int64_t R = a.shape[0], C = a.shape[1];
  Arr t{{C, R}, std::vector<double>(a.v.size())};
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j)
      t.v[static_cast<size_t>(j * R + i)] = a.v[static_cast<size_t>(i * C + j)];
  return t;
}

// How many kernels of a tensor's schedule hold a REDUCE, and how many a Sequential RANGE (a
// scatter-add's).
struct Kinds {
  int reduces = 0, sequential = 0;
};
Kinds kinds(const Tensor& t) {
  Kinds k;
  for (const tg::ScheduleItem& it : t.schedule()) {
    if (it.kind != tg::ScheduleItem::Kind::Kernel) continue;
    bool red = false, seq = false;
    for (const tg::UOp* u : it.ast->toposort()) {
      red |= u->op == tg::Ops::REDUCE;
      seq |= u->op == tg::Ops::RANGE &&
             std::get<tg::RangeArg>(u->arg).type == tg::AxisType::Sequential;
    }
    k.reduces += red;
    k.sequential += seq;
  }
  return k;
}

// The gradient of sum(table[ids] * c) w.r.t. table: c's rows added at the rows ids name.
Arr embedding_grad_loop(int64_t V, const std::vector<int32_t>& ids, const Arr& c) {
  const int64_t H = c.shape[1];
  Arr g{{V, H}, std::vector<double>(static_cast<size_t>(V * H), 0.0)};
  for (size_t t = 0; t < ids.size(); ++t) {
    const int64_t r = ids[t] < 0 ? ids[t] + V : ids[t];
    for (int64_t h = 0; h < H; ++h)
      g.v[static_cast<size_t>(r * H + h)] +=
          c.v[t * static_cast<size_t>(H) + static_cast<size_t>(h)];
  }
  return g;
}

} // namespace

TEST_SUITE("tensor.scatter") {
  TEST_CASE("scatter_add against a loop: duplicates, negative and out-of-range indices") {
    const int64_t V = 6, H = 5, T = 9;
    // Rows: duplicates (1, 4), negatives (-1 is row 5, -6 row 0), out of range (6, -7).
    const std::vector<int32_t> rows{1, 4, -1, 1, 6, 4, -6, -7, 1};
    std::vector<int32_t> index;
    for (int32_t r : rows)
      for (int64_t h = 0; h < H; ++h) index.push_back(r);
    for (DType d : {dtypes::float32, dtypes::int32, dtypes::float16}) {
      INFO(d.name());
      Arr base = random_arr({V, H}, -9, 9, d, 31), src = random_arr({T, H}, -9, 9, d, 32);
      const Tensor tb = to_tensor(base, d), ts = to_tensor(src, d);
      const Tensor ti = ints(index, {T, H});
      const Arr want = scatter_add_loop(base, index, src, d);
      check_close(tb.scatter_add(0, ti, ts), want, {}, "scatter_add", d);
      check_close(tb.index_add(0, ints(rows, {T}), ts), want, {}, "index_add", d);
      check_close(tb.scatter(0, ti, tg::Scalar(1), "add"),
                  scatter_add_loop(base, index, Arr{{T, H}, std::vector<double>(T * H, 1.0)}, d),
                  {}, "scatter value add", d);
      // Along dim 1 of the transposed tensors: the same additions.
      check_close(tb.transpose(0, 1).scatter_add(1, ti.transpose(0, 1), ts.transpose(0, 1)),
                  transposed(want), {}, "scatter_add along dim 1", d);
    }
  }

  TEST_CASE("scatter_add: per-element indices, a smaller index, 3-D index_add with alpha") {
    // Each column has its own rows; the index covers 2 of the base's 4 columns (the others
    // stay), and 3 of src's 4 rows.
    const std::vector<int32_t> idx{2, 0, 2, 2, 1, 0};
    Arr base = random_arr({3, 4}, -9, 9, dtypes::float32, 41);
    Arr src = random_arr({4, 4}, -9, 9, dtypes::float32, 42);
    const Tensor tb = to_tensor(base, dtypes::float32), ts = to_tensor(src, dtypes::float32);
    Arr want = base;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j)
        want.v[static_cast<size_t>(idx[static_cast<size_t>(i * 2 + j)] * 4 + j)] +=
            src.v[static_cast<size_t>(i * 4 + j)];
    check_close(tb.scatter_add(0, ints(idx, {3, 2}), ts), want, tol_for(dtypes::float32),
                "scatter_add, index (3, 2)", dtypes::float32);
    // index_add along the middle of (2, 5, 3) with alpha 2.
    Arr b3 = random_arr({2, 5, 3}, -9, 9, dtypes::int32, 43);
    Arr s3 = random_arr({2, 4, 3}, -9, 9, dtypes::int32, 44);
    const std::vector<int32_t> rows{4, 0, 4, -2};
    Arr w3 = b3;
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t t = 0; t < 4; ++t)
        for (int64_t c = 0; c < 3; ++c) {
          const int64_t r = rows[static_cast<size_t>(t)] < 0 ? rows[static_cast<size_t>(t)] + 5
                                                             : rows[static_cast<size_t>(t)];
          w3.v[static_cast<size_t>((a * 5 + r) * 3 + c)] +=
              2 * s3.v[static_cast<size_t>((a * 4 + t) * 3 + c)];
        }
    check_close(to_tensor(b3, dtypes::int32)
                    .index_add(1, ints(rows, {4}), to_tensor(s3, dtypes::int32), tg::Scalar(2)),
                w3, {}, "index_add (2, 5, 3) along 1", dtypes::int32);
  }

  TEST_CASE("scatter_add adds in index order: float sums are the loop's, every run") {
    // 1e8 + 1 rounds to 1e8 in float32, so the order shows: in index order the row is 0,
    // other orders give 1 or 2.
    const std::vector<float> v{1e8F, 1, -1e8F, 1};
    const Tensor src = Tensor::from_vector(v, {4, 1}).expand({4, 3}).contiguous();
    const Tensor idx = ints({1, 1, 1, 1}, {4, 1}).expand({4, 3});
    for (int run = 0; run < 2; ++run) {
      const std::vector<float> got =
          Tensor::zeros({2, 3}).scatter_add(0, idx, src).to_vector<float>();
      CHECK(got == std::vector<float>{0, 0, 0, 1, 1, 1});
    }
  }

  TEST_CASE("scatter_add with an empty index or an empty base") {
    Arr base = random_arr({3, 2}, -9, 9, dtypes::float32, 51);
    const Tensor tb = to_tensor(base, dtypes::float32);
    check_close(tb.scatter_add(0, Tensor::zeros({0, 2}, dtypes::int32), Tensor::zeros({0, 2})),
                base, {}, "empty index", dtypes::float32);
    check_close(tb.index_add(0, Tensor::zeros({0}, dtypes::int32), Tensor::zeros({0, 2})), base, {},
                "empty index_add", dtypes::float32);
    CHECK(Tensor::zeros({0, 2})
              .index_add(1, ints({1, 0}, {2}), Tensor::zeros({0, 2}))
              .to_vector<float>()
              .empty());
  }

  TEST_CASE("the gradient of an embedding is a scatter-add equal to the one-hot form's") {
    const int64_t V = 11, H = 4;
    // Duplicates (3, 7), the last row (10), a negative index (-1: row 10, wrapped by indexing).
    const std::vector<int32_t> ids{3, 7, 0, 3, 10, 7, 3, -1};
    const auto T = static_cast<int64_t>(ids.size());
    Arr c = random_arr({T, H}, -4, 4, dtypes::int32, 61); // small integers: exact sums
    const Tensor tc = to_tensor(c, dtypes::float32);
    const Tensor tids = ints(ids, {2, 4});

    tg::nn::Embedding emb(V, H);
    emb.weight.requires_grad_(true);
    (emb(tids).reshape({T, H}) * tc).sum().backward();
    const Tensor g = emb.weight.grad();
    // The schedule: a scatter-add (the table zeroed, then the rows added), no reduce.
    const Kinds k = kinds(g);
    CHECK(k.sequential == 1);
    CHECK(k.reduces == 0);
    const Arr want = embedding_grad_loop(V, ids, c);
    check_close(g, want, {}, "embedding gradient", dtypes::float32);

    // The one-hot form written out: its gradient is the dense reduce over the tokens.
    Tensor w = Tensor::zeros({V, H}).requires_grad_(true);
    const Tensor wrapped = tids.lt(0).where(tids.add(V), tids).reshape({T, 1});
    const Tensor onehot = wrapped.eq(Tensor::arange(V, dtypes::int32).reshape({1, V}));
    (onehot.unsqueeze(-1).where(w.unsqueeze(0), 0).sum({1}) * tc).sum().backward();
    CHECK(kinds(w.grad()).reduces >= 1);
    CHECK(kinds(w.grad()).sequential == 0);
    CHECK(w.grad().to_vector<float>() == g.to_vector<float>());

    // Indexing the table directly, and along its second axis.
    Tensor x = Tensor::zeros({V, H}).requires_grad_(true);
    (x[tids].reshape({T, H}) * tc).sum().backward();
    check_close(x.grad(), want, {}, "table[ids] gradient", dtypes::float32);
    Tensor y = Tensor::zeros({H, V}).requires_grad_(true);
    (y.getitem({tg::Index(tg::Slice{}), tg::Index(tids.reshape({T}))}) * tc.transpose(0, 1))
        .sum()
        .backward();
    CHECK(kinds(y.grad()).sequential == 1);
    check_close(y.grad(), transposed(want), {}, "table[:, ids] gradient", dtypes::float32);
  }

  TEST_CASE("a larger embedding's gradient: no kernel reduces over the tokens") {
    const int64_t V = 1000, H = 64, T = 256;
    std::vector<int32_t> ids(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t)
      ids[static_cast<size_t>(t)] = static_cast<int32_t>((t * 37) % 301);
    Arr c = random_arr({T, H}, -4, 4, dtypes::int32, 71);
    tg::nn::Embedding emb(V, H);
    emb.weight.requires_grad_(true);
    (emb(ints(ids, {T})) * to_tensor(c, dtypes::float32)).sum().backward();
    const Kinds k = kinds(emb.weight.grad());
    CHECK(k.sequential == 1);
    CHECK(k.reduces == 0);
    check_close(emb.weight.grad(), embedding_grad_loop(V, ids, c), {}, "gradient", dtypes::float32);
  }

  TEST_CASE("gather's gradient is a scatter-add; a negative index gets none") {
    const std::vector<int32_t> idx{4, 0, 4, 1, 1, -1, 3, 2, 2};
    Arr gc = random_arr({3, 3}, -4, 4, dtypes::int32, 81);
    Tensor x = Tensor::zeros({3, 5}).requires_grad_(true);
    (x.gather(1, ints(idx, {3, 3})) * to_tensor(gc, dtypes::float32)).sum().backward();
    Arr want{{3, 5}, std::vector<double>(15, 0.0)};
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        const int32_t r = idx[static_cast<size_t>(i * 3 + j)];
        if (r >= 0) want.v[static_cast<size_t>(i * 5 + r)] += gc.v[static_cast<size_t>(i * 3 + j)];
      }
    CHECK(kinds(x.grad()).sequential == 1);
    check_close(x.grad(), want, {}, "gather gradient", dtypes::float32);
  }

  TEST_CASE("gradcheck: scatter_add, index_add and a gather by index tensor") {
    const Tensor dup = ints({1, 1, 0, 3, 3, 3}, {2, 3});
    CHECK(gradcheck([&](const Xs& x) { return x[0].scatter_add(1, dup, x[1]).square(); },
                    {{2, 4}, {2, 3}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0].index_add(0, ints({2, 0, 2}, {3}), x[1], 1.5).exp();
        },
        {{3, 2}, {3, 2}}));
    CHECK(gradcheck(
        [&](const Xs& x) {
          return x[0][ints({2, 0, 2, -1}, {2, 2})].square();
        },
        {{3, 2}}));
  }
}
