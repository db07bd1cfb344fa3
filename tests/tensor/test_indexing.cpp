// Indexing against C++ loops (tests/tensor/index_ref.hpp): getitem with ints, slices, None,
// Ellipsis, integer tensors (broadcast together, separated ones first) and boolean masks;
// setitem through views and through the strided/advanced paths; gather, scatter,
// scatter_reduce, index_select, take_along_dim, masked_fill, masked_select, one_hot; kernel
// counts of the view cases on NULL; the errors bad indices raise.
#include <doctest/doctest.h>

#include "tensor/index_ref.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"

using namespace tgt;
using tg::Index;
using tg::Slice;

namespace {

const DType kF32 = dtypes::float32, kF16 = dtypes::float16, kI32 = dtypes::int32,
            kI8 = dtypes::int8, kBool = dtypes::bool_;

int64_t kernels(const Tensor& t) {
  int64_t n = 0;
  for (const tg::ScheduleItem& i : t.schedule()) n += i.kind == tg::ScheduleItem::Kind::Kernel;
  return n;
}

std::string describe(const std::vector<RIdx>& idx) {
  std::string s = "[";
  for (const RIdx& r : idx) {
    switch (r.kind) {
    case RIdx::Int:
      s += std::to_string(r.i);
      break;
    case RIdx::Sl:
      s += (r.start ? std::to_string(*r.start) : "") + ":" +
           (r.stop ? std::to_string(*r.stop) : "") + ":" + std::to_string(r.step);
      break;
    case RIdx::NoneI:
      s += "None";
      break;
    case RIdx::Ell:
      s += "...";
      break;
    default:
      s += "tensor" + shape_s(r.shape);
    }
    s += ", ";
  }
  return s + "]";
}

Tensor ints(const std::vector<int32_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }

using R = RIdx;

} // namespace

TEST_SUITE("tensor.indexing") {
  TEST_CASE("getitem: ints, slices, None and Ellipsis over dtypes and views") {
    const std::vector<std::vector<RIdx>> cases{
        {R::integer(1)},
        {R::integer(-1), R::integer(2)},
        {R::slice(1, 4)},
        {R::slice({}, {}, -1), R::slice(1, {}, 2)},
        {R::slice(4, 0, -2), R::integer(-3)},
        {R::none(), R::integer(0), R::none(), R::slice({}, {}, 3)},
        {R::ellipsis(), R::integer(2)},
        {R::integer(1), R::ellipsis(), R::none()},
        {R::slice(-100, 100, 4), R::slice(6, 1, -3)},
        {R::slice(2, 2), R::slice()}, // zero-size
        {R::ellipsis()},
        {R::none(), R::ellipsis(), R::none()},
    };
    for (DType d : {kF32, kI32, kBool, kF16, kI8}) {
      for (const std::string& view : view_names()) {
        auto [t, a] = view_input(view, {5, 7}, d, -20, 20, 11);
        for (const auto& idx : cases) {
          INFO(d.name() << " " << view << " " << describe(idx));
          check_close(t.getitem(to_indices(idx)), ref_getitem(a, idx), {}, "getitem", d);
        }
      }
    }
    // 0-d and 1-element tensors; operator[] forms.
    Tensor s = Tensor::full({}, 3.5);
    CHECK(s[tg::None].shape() == Shape{1});
    CHECK(s[tg::Ellipsis].item<float>() == 3.5f);
    CHECK(s[{tg::None, tg::None}].shape() == Shape{1, 1});
    Arr a = random_arr({3, 4, 5}, -9, 9, kI32, 4);
    Tensor t = to_tensor(a, kI32);
    check_close(t[1], ref_getitem(a, {R::integer(1)}), {}, "t[1]");
    check_close(t[{-1, Slice{1, 3}}], ref_getitem(a, {R::integer(-1), R::slice(1, 3)}), {},
                "t[-1, 1:3]");
    check_close(t[{tg::Ellipsis, Slice{{}, {}, -2}}],
                ref_getitem(a, {R::ellipsis(), R::slice({}, {}, -2)}), {}, "t[..., ::-2]");
    check_close(t[{1, 2, 3}], ref_getitem(a, {R::integer(1), R::integer(2), R::integer(3)}), {},
                "t[1, 2, 3] is 0-d");
    CHECK(t[{1, 2, 3}].shape() == Shape{});
    Tensor z = Tensor::zeros({0, 3});
    CHECK(z[{Slice{}, 1}].shape() == Shape{0});
    CHECK(z[{tg::None, Slice{{}, {}, -1}}].shape() == Shape{1, 0, 3});
  }

  TEST_CASE("getitem: integer tensors, broadcasting, separated indices, masks") {
    const std::vector<std::vector<RIdx>> cases{
        {R::array({2, 0, -1, 1})},
        {R::slice(), R::array({3, 3, 0})},
        {R::array({0, 2}, {2, 1}), R::array({1, 0, 3}, {1, 3})}, // broadcast to (2, 3)
        {R::array({1, 0}), R::slice(), R::array({4, -2})},       // separated: to the front
        {R::slice(1, 3), R::array({0, 2, 2, 1}, {2, 2}), R::array({0, 4}, {2, 1})}, // adjacent
        {R::array({2}), R::none(), R::array({1, 3})},               // None separates them
        {R::integer(1), R::array({0, 3}), R::slice({}, {}, -2)},    // int + tensor + slice
        {R::slice({}, {}, 2), R::integer(-1), R::array({0, 0, 4})}, // int removed first
        {R::none(), R::array({1}), R::ellipsis(), R::slice(1, 4)},
        {R::ellipsis(), R::array({4, 3, 2, 1, 0}, {5})},
        {R::array({}, {0}), R::slice()}, // an empty index tensor
        {R::slice(0, 2), R::array({1, 3, 0}), R::none(), R::array({4, 0, 2})}, // to the front
        {R::none(), R::array({2, 0}), R::slice(), R::array({1})}, // None kept: separated
    };
    for (DType d : {kF32, kI32, kBool, kF16}) {
      for (const std::string& view :
           {std::string("contiguous"), std::string("permuted"), std::string("flipped")}) {
        Arr a = random_arr({3, 4, 5}, -20, 20, d, 5);
        Tensor t = to_tensor(a, d);
        if (view == "permuted") {
          Arr b = random_arr({5, 3, 4}, -20, 20, d, 5);
          t = to_tensor(b, d).permute({1, 2, 0});
          a = permute(b, {1, 2, 0});
        } else if (view == "flipped") {
          t = t.flip({0, 2});
          a = flip(a, {0, 2});
        }
        for (const auto& idx : cases) {
          INFO(d.name() << " " << view << " " << describe(idx));
          check_close(t.getitem(to_indices(idx)), ref_getitem(a, idx), {}, "advanced getitem", d);
        }
      }
    }
    // Host lists and int64/int8 index tensors.
    Arr a = random_arr({6, 2}, -50, 50, kF32, 6);
    Tensor t = to_tensor(a, kF32);
    check_close(t[std::vector<int64_t>{5, 0, -6}], ref_getitem(a, {R::array({5, 0, -6})}), {},
                "list index");
    check_close(t[ints({1, 4}, {2}).cast(dtypes::int64)], ref_getitem(a, {R::array({1, 4})}), {},
                "int64 index");
    check_close(t[{Slice{}, ints({1}, {1}).cast(kI8)}], ref_getitem(a, {R::slice(), R::array({1})}),
                {}, "int8 index");
    CHECK(t[ints({3}, {}).reshape({})].shape() == Shape{2}); // 0-d index removes the axis
    // Boolean masks: over one axis, over two, and with other indices.
    Arr m1{{6}, {1, 0, 0, 1, 1, 0}};
    Tensor mask1 = to_tensor(m1, kBool);
    check_close(t[mask1], ref_getitem(a, {R::array({0, 3, 4})}), {}, "1-d mask");
    check_close(t[{mask1, 1}], ref_getitem(a, {R::array({0, 3, 4}), R::integer(1)}), {},
                "1-d mask, int");
    Tensor mask2 = t.gt(0);
    std::vector<int64_t> rows, cols;
    for (int64_t i = 0; i < 12; ++i)
      if (a.v[static_cast<size_t>(i)] > 0) rows.push_back(i / 2), cols.push_back(i % 2);
    check_close(t[mask2], ref_getitem(a, {R::array(rows), R::array(cols)}), {}, "2-d mask");
    check_close(t.permute({1, 0})[{Slice{}, mask1}],
                ref_getitem(permute(a, {1, 0}), {R::slice(), R::array({0, 3, 4})}), {},
                "mask of a permuted tensor");
  }

  TEST_CASE("getitem: basic indices of a realized buffer add no kernel (NULL)") {
    Tensor x = Tensor::empty({6, 8, 5}, kF32, "NULL");
    CHECK(kernels(x[2]) == 0);
    CHECK(kernels(x[{Slice{1, 5}, tg::None, -1}]) == 0);
    CHECK(kernels(x[{Slice{{}, {}, -1}, Slice{1, {}, 3}}]) == 0);
    CHECK(kernels(x[{tg::Ellipsis, Slice{{}, {}, 2}, tg::None}]) == 0);
    CHECK(kernels(x.getitem({1, 2, 3})) == 0);
    // A tensor index is one fused kernel (the one-hot, where and sum), also with an op after.
    Tensor i = Tensor::empty({4}, kI32, "NULL");
    CHECK(kernels(x[i]) == 1);
    CHECK(kernels(x[{Slice{}, i, 1}] + 1) == 1);
    CHECK(kernels(x.gather(1, Tensor::empty({6, 3, 5}, kI32, "NULL"))) == 1);
  }

  TEST_CASE("getitem: bad indices raise naming the index, axis and size") {
    Tensor t = Tensor::zeros({3, 4});
    std::string e = error_of([&] { (void)t[{0, 4}]; });
    CHECK(e.find("index 4") != std::string::npos);
    CHECK(e.find("axis 1") != std::string::npos);
    CHECK(e.find("size 4") != std::string::npos);
    CHECK(error_of([&] { (void)t[-4]; }).find("index -4") != std::string::npos);
    CHECK(error_of([&] { (void)t[{0, 1, 2}]; }).find("too many indices") != std::string::npos);
    CHECK(error_of([&] {
            (void)t[{tg::Ellipsis, 0, tg::Ellipsis}];
          }).find("single ellipsis") != std::string::npos);
    CHECK(error_of([&] { (void)t[{Slice{0, 3, 0}}]; }).find("zero") != std::string::npos);
    const std::string m = error_of([&] { (void)t[Tensor::ones({4}, kBool)]; });
    CHECK(m.find("mask of shape (4,)") != std::string::npos);
    CHECK(m.find("(3,)") != std::string::npos);
    CHECK(error_of([&] { (void)t[Tensor::ones({3}, kF32)]; }).find("float32") != std::string::npos);
    CHECK(error_of([&] {
            (void)t[{ints({0, 1}, {2}), ints({0, 1, 2}, {3})}];
          }).find("cannot be broadcast") != std::string::npos);
  }

  TEST_CASE("setitem: views, steps, negative steps, tensor indices, masks, broadcast values") {
    struct Case {
      std::vector<RIdx> idx;
      Shape value_shape;
    };
    const std::vector<Case> cases{
        {{R::integer(1)}, {7}},
        {{R::slice(1, 4), R::slice(2, 5)}, {3, 3}},
        {{R::slice(1, 4), R::slice(2, 5)}, {1, 3}}, // broadcast value
        {{R::slice({}, {}, 2)}, {3, 7}},            // step 2: the whole-tensor path
        {{R::slice({}, {}, -1), R::slice(6, 0, -3)}, {5, 2}},
        {{R::ellipsis(), R::integer(-1)}, {}}, // a scalar value
        {{R::none(), R::integer(2), R::slice(1, 3)}, {1, 2}},
        {{R::array({0, 3, 0})}, {3, 7}}, // duplicate rows: the last wins
        {{R::slice(), R::array({6, 1}, {2})}, {5, 2}},
        {{R::array({4, 1}), R::slice(1, {}, 2)}, {2, 3}},
        {{R::slice({}, {}, -2), R::array({2, 5}, {2, 1})}, {2, 1}}, // selection (3, 2, 1)
    };
    for (DType d : {kF32, kI32, kBool}) {
      for (const Case& c : cases) {
        INFO(d.name() << " " << describe(c.idx) << " = " << shape_s(c.value_shape));
        Arr a = random_arr({5, 7}, -20, 20, d, 7);
        Arr v = random_arr(c.value_shape, -20, 20, d, 8);
        Tensor t = to_tensor(a, d);
        Tensor alias = t; // a copy of the handle sees the write
        t.setitem(to_indices(c.idx), to_tensor(v, d));
        const Arr want = ref_setitem(a, c.idx, v);
        check_close(t, want, {}, "setitem", d);
        check_close(alias, want, {}, "setitem through a copy", d);
      }
    }
    // Values that read the tensor being written: a row swap (tensor indices) and an
    // overlapping shift (a view): every old value is read before it is overwritten.
    {
      Arr a = random_arr({5, 7}, -20, 20, kF32, 19);
      Tensor t = to_tensor(a, kF32);
      t.setitem({ints({0, 1}, {2})}, t[ints({1, 0}, {2})]);
      Arr want = a;
      for (size_t j = 0; j < 7; ++j) std::swap(want.v[j], want.v[7 + j]);
      check_close(t, want, {}, "row swap");
      t.setitem({Slice{1, {}}}, t[Slice{{}, -1}]);
      for (size_t i = 4; i >= 1; --i)
        for (size_t j = 0; j < 7; ++j) want.v[i * 7 + j] = want.v[(i - 1) * 7 + j];
      check_close(t, want, {}, "overlapping shift x[1:] = x[:-1]");
    }
    // A lazy target is realized first; a scalar value; a mask.
    Tensor l = Tensor::arange(12).reshape({3, 4}) * 2;
    l.setitem({Slice{}, 1}, tg::Scalar(-1));
    Arr want{{3, 4}, {}};
    for (int i = 0; i < 12; ++i) want.v.push_back(i % 4 == 1 ? -1 : 2 * i);
    check_close(l, want, {}, "setitem of a lazy tensor");
    l.setitem({l.lt(5)}, tg::Scalar(100));
    for (double& x : want.v) x = x < 5 ? 100 : x;
    check_close(l, want, {}, "mask setitem");
    // Writing through a permuted view of a buffer writes the buffer.
    Arr b = random_arr({4, 3}, -5, 5, kF32, 9);
    Tensor base = to_tensor(b, kF32);
    Tensor p = base.permute({1, 0});
    p.setitem({0, Slice{1, 3}}, tg::Scalar(9.5));
    b.v[3] = b.v[6] = 9.5;
    check_close(base, b, {}, "setitem through a permuted view");
    CHECK_THROWS_AS(Tensor::zeros({3, 4}).setitem({0}, Tensor::ones({5})), tg::Error);
    CHECK_THROWS_AS(Tensor::zeros({3, 4}).setitem({5}, tg::Scalar(1)), tg::Error);
    // An expanded view of a buffer cannot be written (elements share one address).
    Tensor buf = Tensor::zeros({3, 4}).contiguous().realize();
    Tensor ex = buf.expand({2, 3, 4});
    CHECK_THROWS_AS(ex.setitem({0}, tg::Scalar(1)), tg::Error);
  }

  TEST_CASE("setitem: separated tensor indices on 3-d, int + duplicates, int8 and float16") {
    struct Case {
      std::vector<RIdx> idx;
      Shape value_shape;
    };
    const std::vector<Case> cases{
        {{R::array({0, 2}), R::slice(), R::array({1, -1})}, {2, 4}}, // index axes first
        {{R::integer(1), R::array({0, 3, 3}), R::slice(1, 4)}, {3, 3}},
        {{R::slice(), R::array({1, 1}, {2, 1}), R::array({0, 2, 4}, {1, 3})}, {3, 1, 3}},
        {{R::array({2}), R::none(), R::slice({}, {}, -1), R::array({3})}, {1, 1, 4}},
        {{R::slice(1, 3), R::array({0, 3}), R::none(), R::array({4, 4})}, {2, 1, 1}},
    };
    for (DType d : {kI8, kF16}) {
      for (const Case& c : cases) {
        INFO(d.name() << " " << describe(c.idx) << " = " << shape_s(c.value_shape));
        Arr a = random_arr({3, 4, 5}, -20, 20, d, 17);
        Arr v = random_arr(c.value_shape, -20, 20, d, 18);
        Tensor t = to_tensor(a, d);
        check_close(t.getitem(to_indices(c.idx)).contiguous(), ref_getitem(a, c.idx), {},
                    "getitem before", d);
        t.setitem(to_indices(c.idx), to_tensor(v, d));
        check_close(t, ref_setitem(a, c.idx, v), {}, "setitem", d);
      }
    }
  }

  TEST_CASE("zero-size and 0-d inputs") {
    Tensor e = Tensor::zeros({0, 3});
    CHECK(e.gather(0, ints({}, {0, 3})).shape() == Shape{0, 3});
    CHECK(e.index_select(1, ints({2, 0}, {2})).shape() == Shape{0, 2});
    CHECK(Tensor::ones({2, 3}).gather(1, ints({}, {2, 0})).shape() == Shape{2, 0});
    check_close(Tensor::ones({2, 3}).scatter(1, ints({}, {2, 0}), Tensor::zeros({2, 0})),
                Arr{{2, 3}, std::vector<double>(6, 1)}, {}, "scatter of nothing");
    CHECK(Tensor::ones({4}).masked_select(Tensor::zeros({4}, kBool)).shape() == Shape{0});
    CHECK(e.masked_fill(Tensor::ones({3}, kBool), tg::Scalar(2)).shape() == Shape{0, 3});
    CHECK(Tensor::ones({3})[std::vector<int64_t>{}].shape() == Shape{0});
    // 0-d input: gather / index_select / masked_fill / masked_select / one_hot.
    Tensor s = Tensor::full({}, 4.5);
    CHECK(s.gather(0, ints({0}, {}).reshape({})).item<float>() == 4.5f);
    CHECK(s.index_select(0, ints({0}, {1})).item<float>() == 4.5f);
    CHECK(s.masked_fill(Tensor::full({}, true), tg::Scalar(1)).item<float>() == 1.0f);
    CHECK(s.masked_select(Tensor::full({}, true)).to_vector<float>() == std::vector<float>{4.5f});
    CHECK(ints({2}, {}).reshape({}).one_hot(4).to_vector<int64_t>() ==
          std::vector<int64_t>{0, 0, 1, 0});
  }

  TEST_CASE("gather, index_select, take_along_dim") {
    for (DType d : {kF32, kI32, kBool, kF16}) {
      INFO(d.name());
      for (const std::string& view : {std::string("contiguous"), std::string("permuted")}) {
        auto [t, a] = view_input(view, {4, 6}, d, -30, 30, 12);
        Arr idx = random_arr({3, 6}, -0, 3, kI32, 13);
        Tensor it = to_tensor(idx, kI32);
        Arr g0 = generate({3, 6}, [&](const std::vector<int64_t>& i) {
          return a.at({static_cast<int64_t>(idx.at(i)), i[1]});
        });
        check_close(t.gather(0, it), g0, {}, "gather 0 " + view, d);
        Arr idx1 = random_arr({2, 9}, 0, 5, kI32, 14);
        Arr g1 = generate({2, 9}, [&](const std::vector<int64_t>& i) {
          return a.at({i[0], static_cast<int64_t>(idx1.at(i))});
        });
        check_close(t.gather(-1, to_tensor(idx1, kI32)), g1, {}, "gather -1 " + view, d);
        Tensor sel = ints({5, 0, 5, 2}, {4});
        check_close(t.index_select(1, sel),
                    generate({4, 4},
                             [&](const std::vector<int64_t>& i) {
                               const int64_t c[] = {5, 0, 5, 2};
                               return a.at({i[0], c[i[1]]});
                             }),
                    {}, "index_select " + view, d);
        check_close(t.index_select(0, ints({2}, {}).reshape({})),
                    generate({1, 6},
                             [&](const std::vector<int64_t>& i) {
                               return a.at({2, i[1]});
                             }),
                    {}, "index_select 0-d index", d);
        // take_along_dim with a broadcast index, and flattened.
        Arr ti = random_arr({4, 1}, 0, 5, kI32, 15);
        check_close(t.take_along_dim(to_tensor(ti, kI32), 1),
                    generate({4, 1},
                             [&](const std::vector<int64_t>& i) {
                               return a.at({i[0], static_cast<int64_t>(ti.at(i))});
                             }),
                    {}, "take_along_dim", d);
        check_close(t.take_along_dim(ints({23, 0, 7}, {3})), Arr{{3}, {a.v[23], a.v[0], a.v[7]}},
                    {}, "take_along_dim flat", d);
      }
    }
    Tensor x = Tensor::zeros({3, 4});
    std::string e = error_of([&] { (void)x.gather(0, ints({0, 1}, {2})); });
    CHECK(e.find("(2,)") != std::string::npos);
    CHECK(e.find("(3, 4)") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.gather(1, ints({0, 0, 0, 0, 0, 0, 0, 0}, {4, 2}));
          }).find("dimension 0") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.gather(2, ints({0}, {1, 1}));
          }).find("gather") != std::string::npos);
    CHECK(error_of([&] { (void)x.index_select(0, Tensor::zeros({2})); }).find("float32") !=
          std::string::npos);
    CHECK_THROWS_AS((void)x.index_select(0, ints({0, 0, 0, 0}, {2, 2})), tg::Error);
  }

  TEST_CASE("scatter and scatter_reduce against loops") {
    const Shape S{4, 5};
    Arr idx = random_arr({3, 4}, 0, 3, kI32, 21); // duplicates along dim 0
    for (DType d : {kF32, kI32}) {
      INFO(d.name());
      Arr self = random_arr(S, -9, 9, d, 22);
      Arr src = random_arr({3, 5}, -9, 9, d, 23);
      Tensor ts = to_tensor(self, d), tsrc = to_tensor(src, d), ti = to_tensor(idx, kI32);
      // scatter (dim 0): the last duplicate wins.
      Arr want = self;
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
          want.v[static_cast<size_t>(ravel({static_cast<int64_t>(idx.at({i, j})), j}, S))] =
              src.at({i, j});
      check_close(ts.scatter(0, ti, tsrc), want, {}, "scatter", d);
      // scatter of a value along dim 1.
      Arr idx1 = random_arr({2, 3}, 0, 4, kI32, 24);
      Arr want1 = self;
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          want1.v[static_cast<size_t>(ravel({i, static_cast<int64_t>(idx1.at({i, j}))}, S))] = 7;
      check_close(ts.scatter(1, to_tensor(idx1, kI32), tg::Scalar(7)), want1, {}, "scatter value",
                  d);
      for (const std::string red : {"sum", "prod", "mean", "amax", "amin"}) {
        for (bool inc : {true, false}) {
          INFO(red << " include_self=" << inc);
          Arr acc = self;
          std::vector<int> cnt(static_cast<size_t>(numel(S)), inc ? 1 : 0);
          std::vector<bool> touched(static_cast<size_t>(numel(S)), false);
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 4; ++j) {
              const auto p =
                  static_cast<size_t>(ravel({static_cast<int64_t>(idx.at({i, j})), j}, S));
              const double s = src.at({i, j});
              double& o = acc.v[p];
              if (!inc && !touched[p]) {
                o = s;
              } else if (red == "sum" || red == "mean") {
                o += s;
              } else if (red == "prod") {
                o *= s;
              } else if (red == "amax") {
                o = std::max(o, s);
              } else {
                o = std::min(o, s);
              }
              touched[p] = true;
              ++cnt[p];
            }
          if (red == "mean")
            for (size_t p = 0; p < acc.v.size(); ++p)
              if (cnt[p] > 0)
                acc.v[p] = d.is_float() ? acc.v[p] / cnt[p] : std::floor(acc.v[p] / cnt[p]);
          check_close(ts.scatter_reduce(0, ti, tsrc, red, inc), acc, tol_for(d, 4),
                      "scatter_reduce", d);
        }
      }
      Arr addw = self;
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
          addw.v[static_cast<size_t>(ravel({static_cast<int64_t>(idx.at({i, j})), j}, S))] += 2;
      check_close(ts.scatter(0, ti, tg::Scalar(2), "add"), addw, {}, "scatter add", d);
    }
    Tensor x = Tensor::zeros({3, 4});
    CHECK(error_of([&] {
            (void)x.scatter_reduce(0, ints({0}, {1, 1}), Tensor::ones({1, 1}), "max");
          }).find("amax") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.scatter(0, ints({0}, {1, 1}), Tensor::ones({1, 1}, kI32));
          }).find("int32") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.scatter(0, ints({0, 0}, {1, 2}), Tensor::ones({1, 1}));
          }).find("(1, 2)") != std::string::npos);
    CHECK_THROWS_AS((void)x.scatter(0, ints({0}, {1}), Tensor::ones({1})), tg::Error);
  }

  TEST_CASE("nonzero_static: the rows of nonzero(), cut or filled to a fixed count") {
    Tensor x = ints({1, 0, 2, 0, 3}, {5});
    CHECK(x.nonzero_static(3).to_vector<int32_t>() == std::vector<int32_t>{0, 2, 4});
    CHECK(x.nonzero_static(5, -1).to_vector<int32_t>() == std::vector<int32_t>{0, 2, 4, -1, -1});
    Tensor m = ints({1, 0, 0, 2}, {2, 2}).flip({1}); // [[0, 1], [2, 0]], through a view
    Tensor r = m.nonzero_static(3, 7);
    CHECK(r.dtype() == dtypes::int32);
    CHECK(r.shape() == Shape{3, 2});
    CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 1, 0, 7, 7});
    CHECK(Tensor::full({}, 5).nonzero_static(4).shape() == Shape{4, 0});
    CHECK(ints({}, {0}).nonzero_static(2).to_vector<int32_t>() == std::vector<int32_t>{-1, -1});
    Arr a = random_arr({4, 5, 3}, 0, 1, kBool, 33);
    Tensor b = to_tensor(a, kBool);
    const Tensor all = b.nonzero();
    CHECK(b.nonzero_static(all.shape()[0].eval()).to_vector<int32_t>() == all.to_vector<int32_t>());
  }

  TEST_CASE("masked_fill, masked_select, one_hot") {
    for (DType d : {kF32, kI32, kF16, kI8}) {
      INFO(d.name());
      auto [t, a] = view_input("flipped", {3, 5}, d, -9, 9, 31);
      Arr m = random_arr({1, 5}, 0, 1, kBool, 32);
      Tensor tm = to_tensor(m, kBool);
      check_close(t.masked_fill(tm, tg::Scalar(4)),
                  zip(a, m, [](double x, double k) { return k ? 4 : x; }), {}, "masked_fill", d);
      Arr sel{{0}, {}};
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 5; ++j)
          if (m.at({0, j})) sel.v.push_back(a.at({i, j}));
      sel.shape = {static_cast<int64_t>(sel.v.size())};
      check_close(t.masked_select(tm), sel, {}, "masked_select (broadcast mask)", d);
      // size: the first `size` selected values, then the fill value (no host read).
      const int64_t count = sel.shape[0];
      for (int64_t size : {int64_t{0}, int64_t{2}, count + 3}) {
        Arr fixed{{size}, {}};
        for (int64_t i = 0; i < size; ++i)
          fixed.v.push_back(i < count ? sel.v[static_cast<size_t>(i)] : -1);
        check_close(t.masked_select(tm, size, -1), fixed, {}, "masked_select size", d);
      }
    }
    CHECK(ints({}, {0}).masked_select(Tensor::zeros({0}, kBool), 2, -1).to_vector<int32_t>() ==
          std::vector<int32_t>{-1, -1});
    CHECK(Tensor::ones({2}).masked_select(Tensor::ones({2}, kBool), 3, -1).dtype() == kF32);
    Tensor x = Tensor::zeros({2, 2});
    CHECK(x.masked_select(Tensor::zeros({2, 2}, kBool)).shape() == Shape{0});
    CHECK(error_of([&] {
            (void)x.masked_fill(Tensor::ones({2, 2}), tg::Scalar(1));
          }).find("bool") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.masked_fill(Tensor::ones({3}, kBool), tg::Scalar(1));
          }).find("(3,)") != std::string::npos);
    // one_hot: int64 rows, num_classes inferred or given; out-of-range classes give zeros.
    Tensor c = ints({2, 0, 1, 2, 0, 3}, {2, 3});
    Tensor oh = c.one_hot();
    CHECK(oh.dtype() == dtypes::int64);
    check_close(oh,
                generate({2, 3, 4},
                         [&](const std::vector<int64_t>& i) {
                           const int32_t v[] = {2, 0, 1, 2, 0, 3};
                           return v[i[0] * 3 + i[1]] == i[2] ? 1.0 : 0.0;
                         }),
                {}, "one_hot inferred");
    CHECK(c.one_hot(3).to_vector<int64_t>() ==
          std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0});
    CHECK(ints({}, {0}).one_hot(3).shape() == Shape{0, 3});
    CHECK_THROWS_AS((void)ints({-1}, {1}).one_hot(), tg::Error);
    CHECK_THROWS_AS((void)Tensor::zeros({2}).one_hot(2), tg::Error);
  }
}
