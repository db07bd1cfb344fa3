// Movement ops against C++ index loops: reshape (with -1), permute, transpose, expand, pad with
// a value, shrink, flip, flatten, squeeze, unsqueeze, slices with steps (negative too), index,
// cat and stack; chains of them, over several dtypes, and contiguous().
#include <doctest/doctest.h>

#include <numeric>

#include "tensor/ref.hpp"
#include "tg/error.hpp"

using namespace tgt;
using tg::Slice;

namespace {

const DType kF32 = dtypes::float32, kF16 = dtypes::float16, kBF16 = dtypes::bfloat16,
            kI32 = dtypes::int32, kI8 = dtypes::int8, kU8 = dtypes::uint8, kBool = dtypes::bool_;

} // namespace

TEST_SUITE("tensor.movement") {
  TEST_CASE("reshape, permute, transpose, flatten, squeeze, unsqueeze") {
    for (DType d : {kF32, kF16, kI8, kBool}) {
      Arr a = random_arr({2, 3, 4}, -50, 50, d, 1);
      Tensor t = to_tensor(a, d);
      INFO(d.name());
      check_close(t.reshape({4, -1}), reshape(a, {4, 6}), {}, "reshape -1", d);
      CHECK_THROWS_AS(t.reshape({5, -1}), tg::Error);
      CHECK_THROWS_AS(t.reshape({-1, -1}), tg::Error);
      check_close(t.permute({2, 0, 1}), permute(a, {2, 0, 1}), {}, "permute", d);
      check_close(t.permute({-1, 0, 1}), permute(a, {2, 0, 1}), {}, "permute negative", d);
      check_close(t.transpose(0, 2), permute(a, {2, 1, 0}), {}, "transpose", d);
      check_close(t.transpose(), permute(a, {0, 2, 1}), {}, "transpose default", d);
      // A permute, then a reshape that merges permuted axes.
      check_close(t.permute({1, 0, 2}).reshape({6, 4}), reshape(permute(a, {1, 0, 2}), {6, 4}), {},
                  "permute then reshape", d);
      check_close(t.flatten(), reshape(a, {24}), {}, "flatten", d);
      check_close(t.flatten(1), reshape(a, {2, 12}), {}, "flatten(1)", d);
      check_close(t.permute({2, 1, 0}).flatten(0, 1), reshape(permute(a, {2, 1, 0}), {12, 2}), {},
                  "flatten of permuted", d);
      Tensor u = t.unsqueeze(1);
      CHECK(u.shape() == Shape{2, 1, 3, 4});
      CHECK(t.unsqueeze(-1).shape() == Shape{2, 3, 4, 1});
      check_close(u.squeeze(1), a, {}, "squeeze(1)", d);
      check_close(u.unsqueeze(0).squeeze(), a, {}, "squeeze all", d);
      CHECK(u.squeeze(0).shape() == u.shape()); // size 2: unchanged
    }
    CHECK(Tensor::ones({1, 1}).squeeze().shape() == Shape{});
    CHECK(Tensor::full({}, 1.0).unsqueeze(0).shape() == Shape{1});
    CHECK(Tensor::full({}, 1.0).flatten().shape() == Shape{1});
  }

  TEST_CASE("expand, pad with values, shrink, flip") {
    for (DType d : {kF32, kBF16, kI32, kU8, kBool}) {
      INFO(d.name());
      Arr a = random_arr({3, 1, 4}, d == kU8 ? 0 : -50, 50, d, 2);
      Tensor t = to_tensor(a, d);
      check_close(t.expand({3, 5, 4}), expand(a, {3, 5, 4}), {}, "expand", d);
      check_close(
          t.expand({2, 3, -1, 4}),
          reshape(expand(reshape(expand(a, {3, 1, 4}), {1, 3, 1, 4}), {2, 3, 1, 4}), {2, 3, 1, 4}),
          {}, "expand with a new leading axis", d);
      const Pairs p{{1, 2}, {0, 1}, {3, 0}};
      check_close(t.pad(p), pad(a, p, 0), {}, "pad 0", d);
      const double fill = d == kBool ? 1 : d == kU8 ? 7 : -7;
      tg::Scalar sv = d == kBool ? tg::Scalar(true) : tg::Scalar(static_cast<int64_t>(fill));
      check_close(t.pad(p, sv), pad(a, p, fill), {}, "pad value", d);
      check_close(t.pad({{-1, 0}, {0, 0}, {1, -2}}),
                  pad(shrink(a, {{1, 3}, {0, 1}, {0, 2}}), {{0, 0}, {0, 0}, {1, 0}}, 0), {},
                  "negative pad shrinks", d);
      check_close(t.shrink({{1, 3}, {0, 1}, {1, 3}}), shrink(a, {{1, 3}, {0, 1}, {1, 3}}), {},
                  "shrink", d);
      check_close(t.flip({0}), flip(a, {0}), {}, "flip 0", d);
      check_close(t.flip({0, -1}), flip(a, {0, 2}), {}, "flip 0,-1", d);
      // Chains: pad of a flip of a shrink of an expand, and the reverse order.
      Arr chain = pad(flip(shrink(expand(a, {3, 6, 4}), {{0, 2}, {1, 5}, {1, 4}}), {1, 2}),
                      {{1, 1}, {2, 0}, {0, 1}}, fill);
      check_close(t.expand({3, 6, 4})
                      .shrink({{0, 2}, {1, 5}, {1, 4}})
                      .flip({1, 2})
                      .pad({{1, 1}, {2, 0}, {0, 1}}, sv),
                  chain, {}, "expand-shrink-flip-pad", d);
      Arr chain2 = permute(
          shrink(flip(pad(a, {{0, 0}, {2, 2}, {1, 1}}, 0), {0, 1}), {{1, 3}, {1, 4}, {0, 6}}),
          {2, 0, 1});
      check_close(t.pad({{0, 0}, {2, 2}, {1, 1}})
                      .flip({0, 1})
                      .shrink({{1, 3}, {1, 4}, {0, 6}})
                      .permute({2, 0, 1}),
                  chain2, {}, "pad-flip-shrink-permute", d);
    }
    CHECK_THROWS_AS(Tensor::ones({2, 3}).expand({2, 4}), tg::Error);
    CHECK_THROWS_AS(Tensor::ones({2, 3}).shrink({{0, 3}, {0, 1}}), tg::Error);
    CHECK_THROWS_AS(Tensor::ones({2, 3}).flip({0, -2}), tg::Error);
  }

  TEST_CASE("slices with steps, negative steps and clamped ends") {
    Arr a = random_arr({7, 9}, -100, 100, kI32, 3);
    Tensor t = to_tensor(a, kI32);
    struct S {
      std::optional<int64_t> start, stop;
      int64_t step;
    };
    const std::vector<std::pair<S, S>> cases{
        {{1, 6, 2}, {{}, {}, 1}},     {{{}, {}, -1}, {{}, {}, 3}}, {{5, 1, -2}, {-2, {}, 1}},
        {{-3, -100, -1}, {8, 2, -3}}, {{100, {}, 1}, {{}, {}, 1}}, {{{}, {}, 4}, {{}, {}, -4}},
        {{2, 3, 1}, {-100, 100, 5}},  {{6, -8, -1}, {3, 3, 1}},
    };
    for (const auto& [s0, s1] : cases) {
      const std::vector<int64_t> r = py_slice_positions(7, s0.start, s0.stop, s0.step);
      const std::vector<int64_t> c = py_slice_positions(9, s1.start, s1.stop, s1.step);
      Arr want =
          generate({static_cast<int64_t>(r.size()), static_cast<int64_t>(c.size())},
                   [&](const std::vector<int64_t>& i) {
                     return a.at({r[static_cast<size_t>(i[0])], c[static_cast<size_t>(i[1])]});
                   });
      Tensor got = t.slice({Slice{s0.start, s0.stop, s0.step}, Slice{s1.start, s1.stop, s1.step}});
      check_close(got, want, {},
                  "slice [" + std::to_string(s0.start.value_or(999)) + ":" +
                      std::to_string(s0.stop.value_or(999)) + ":" + std::to_string(s0.step) + ", " +
                      std::to_string(s1.start.value_or(999)) + ":" +
                      std::to_string(s1.stop.value_or(999)) + ":" + std::to_string(s1.step) + "]",
                  kI32);
    }
    CHECK(t.slice({Slice{{}, {}, 2}}).shape() == Shape{4, 9});
    CHECK_THROWS_AS(t.slice({Slice{{}, {}, 0}}), tg::Error);
  }

  TEST_CASE("index") {
    Arr a = random_arr({3, 4, 5}, -100, 100, kF32, 4);
    Tensor t = to_tensor(a, kF32);
    check_close(t.index(1), reshape(shrink(a, {{1, 2}, {0, 4}, {0, 5}}), {4, 5}), {}, "t[1]");
    check_close(t.index(-1, 2), reshape(shrink(a, {{0, 3}, {0, 4}, {4, 5}}), {3, 4}), {},
                "t[..., -1]");
    check_close(t.index(2).index(3), reshape(shrink(a, {{2, 3}, {3, 4}, {0, 5}}), {5}), {},
                "t[2][3]");
    CHECK(t.index(0).index(0).index(0).shape() == Shape{});
    CHECK(t.index(1).index(2).index(3).item<float>() == static_cast<float>(a.at({1, 2, 3})));
    CHECK_THROWS_AS(t.index(3), tg::Error);
    CHECK_THROWS_AS(t.index(-4), tg::Error);
  }

  TEST_CASE("cat and stack") {
    for (DType d : {kF32, kF16, kI8, kBool}) {
      INFO(d.name());
      Arr a = random_arr({2, 3}, -50, 50, d, 5), b = random_arr({4, 3}, -50, 50, d, 6),
          c = random_arr({1, 3}, -50, 50, d, 7);
      Tensor ta = to_tensor(a, d), tb = to_tensor(b, d), tc = to_tensor(c, d);
      Arr want0 = generate({7, 3}, [&](const std::vector<int64_t>& i) {
        if (i[0] < 2) return a.at(i);
        if (i[0] < 6) return b.at({i[0] - 2, i[1]});
        return c.at({i[0] - 6, i[1]});
      });
      check_close(Tensor::cat({ta, tb, tc}), want0, {}, "cat dim 0", d);
      Arr want1 = generate({3, 7}, [&](const std::vector<int64_t>& i) {
        if (i[1] < 2) return a.at({i[1], i[0]});
        if (i[1] < 6) return b.at({i[1] - 2, i[0]});
        return c.at({i[1] - 6, i[0]});
      });
      check_close(Tensor::cat({ta.transpose(), tb.transpose(), tc.transpose()}, -1), want1, {},
                  "cat of transposed, dim -1", d);
      Arr a2 = random_arr({2, 3}, -50, 50, d, 8);
      Tensor ta2 = to_tensor(a2, d);
      for (int64_t dim : {0, 1, 2, -1}) {
        Tensor s = Tensor::stack({ta, ta2.flip({0})}, dim);
        const int64_t nd = dim < 0 ? dim + 3 : dim;
        Shape sh{2, 3};
        sh.insert(sh.begin() + nd, 2);
        Arr want = generate(sh, [&](std::vector<int64_t> i) {
          const int64_t which = i[static_cast<size_t>(nd)];
          i.erase(i.begin() + nd);
          return which == 0 ? a.at(i) : a2.at({1 - i[0], i[1]});
        });
        check_close(s, want, {}, "stack dim " + std::to_string(dim), d);
      }
    }
    // Mixed dtypes promote; a zero-size piece adds nothing.
    Tensor x = Tensor::from_vector<int8_t>({1, -2}), y = Tensor::from_vector<float>({0.5f});
    check_close(Tensor::cat({x, y, Tensor::ones({0}, kF16)}), Arr{{3}, {1, -2, 0.5}}, {},
                "cat int8, float32, empty", kF32);
    CHECK_THROWS_AS(Tensor::cat({Tensor::ones({2, 3}), Tensor::ones({2, 4})}), tg::Error);
    CHECK_THROWS_AS(Tensor::stack({Tensor::ones({2}), Tensor::ones({3})}), tg::Error);
  }

  TEST_CASE("contiguous of views, zero-size and 0-d movement") {
    Arr a = random_arr({4, 6}, -9, 9, kF32, 9);
    Tensor t = to_tensor(a, kF32);
    Tensor c = t.permute({1, 0}).flip({0}).contiguous();
    check_close(c, flip(permute(a, {1, 0}), {0}), {}, "contiguous of permute+flip");
    check_close(c.reshape({3, 8}), reshape(flip(permute(a, {1, 0}), {0}), {3, 8}), {},
                "reshape of the contiguous copy");
    Tensor z = Tensor::ones({0, 4});
    CHECK(z.permute({1, 0}).shape() == Shape{4, 0});
    CHECK(z.reshape({4, 0, 2}).shape() == Shape{4, 0, 2});
    CHECK(z.pad({{1, 1}, {0, 0}}).to_vector<float>() == std::vector<float>(8, 0));
    CHECK(z.expand({3, 0, 4}).shape() == Shape{3, 0, 4});
    CHECK(z.flip({0}).contiguous().to_vector<float>().empty());
    Tensor s = Tensor::full({}, 3.0);
    CHECK(s.reshape({1, 1}).expand({2, 3}).to_vector<float>() == std::vector<float>(6, 3));
    CHECK(s.pad({}).item<float>() == 3.0f);
    CHECK(s.flip({}).item<float>() == 3.0f);
    CHECK(s.contiguous().item<float>() == 3.0f);
  }
}

TEST_SUITE("tensor.movement") {
  TEST_CASE("views of realized results, and copies of views to another device") {
    Arr a = random_arr({4, 5}, -9, 9, kI32, 31);
    Tensor t = to_tensor(a, kI32);
    Tensor r = (t * 3).realize();
    check_close(r.flip({1}).shrink({{1, 3}, {0, 5}}),
                shrink(flip(map(a, [](double x) { return 3 * x; }), {1}), {{1, 3}, {0, 5}}), {},
                "flip+shrink of a realized result", kI32);
    Tensor c = t.permute({1, 0}).flip({0}).to("CPU:C");
    check_close(c, flip(permute(a, {1, 0}), {0}), {}, "permuted+flipped view copied to CPU:C",
                kI32);
    check_close(t.pad({{1, 1}, {0, 0}}, int64_t{5}).to("CPU:C").sum({0}),
                reduce(pad(a, {{1, 1}, {0, 0}}, 5), {0}, false, 0,
                       [](double x, double y) { return x + y; }),
                {}, "padded view copied, then reduced on CPU:C", dtypes::int64);
  }
}

TEST_SUITE("tensor.movement") {
  TEST_CASE("random chains of movement ops against the host (60 chains)") {
    std::mt19937 g(1234);
    auto pick = [&](int64_t n) { return static_cast<int64_t>(g() % static_cast<uint32_t>(n)); };
    for (int chain = 0; chain < 60; ++chain) {
      Arr a = random_arr({3, 4, 5}, -100, 100, kI32, static_cast<uint32_t>(chain));
      Tensor t = to_tensor(a, kI32);
      std::string what;
      for (int step = 0; step < 5; ++step) {
        const Shape s = a.shape;
        const auto nd = static_cast<int64_t>(s.size());
        switch (pick(6)) {
        case 0: { // permute: a random rotation or swap
          Shape order(s.size());
          std::iota(order.begin(), order.end(), 0);
          std::shuffle(order.begin(), order.end(), g);
          a = permute(a, order);
          t = t.permute(order);
          what += " permute" + shape_s(order);
          break;
        }
        case 1: { // flip one or two axes
          std::vector<int64_t> ax{pick(nd)};
          if (nd > 1 && pick(2)) ax.push_back((ax[0] + 1) % nd);
          a = flip(a, ax);
          t = t.flip(ax);
          what += " flip";
          break;
        }
        case 2: { // pad every axis by 0..2 on each side, with a value
          Pairs p;
          for (int64_t i = 0; i < nd; ++i) p.emplace_back(pick(3), pick(3));
          const int64_t v = pick(3) - 1;
          a = pad(a, p, static_cast<double>(v));
          t = t.pad(p, v);
          what += " pad" + std::to_string(v);
          break;
        }
        case 3: { // shrink every axis to a random non-empty range
          Pairs r;
          for (int64_t d : s) {
            const int64_t b = pick(d), e = b + 1 + pick(d - b);
            r.emplace_back(b, e);
          }
          a = shrink(a, r);
          t = t.shrink(r);
          what += " shrink";
          break;
        }
        case 4: { // reshape: merge two adjacent axes, or split one in two
          Shape ns = s;
          const int64_t i = pick(nd);
          if (nd > 1 && i + 1 < nd && pick(2)) {
            ns[static_cast<size_t>(i)] *= ns[static_cast<size_t>(i) + 1];
            ns.erase(ns.begin() + i + 1);
          } else {
            const int64_t d = ns[static_cast<size_t>(i)];
            int64_t f = 1;
            for (int64_t k = 2; k < d; ++k)
              if (d % k == 0) {
                f = k;
                break;
              }
            ns[static_cast<size_t>(i)] = d / f;
            ns.insert(ns.begin() + i + 1, f);
          }
          if (ns.size() > 5) break;
          a = reshape(a, ns);
          t = t.reshape(ns);
          what += " reshape" + shape_s(ns);
          break;
        }
        default: { // expand a size-1 axis (made by a reshape) to 3
          Shape ns = s;
          const int64_t i = pick(nd + 1);
          ns.insert(ns.begin() + i, 1);
          if (ns.size() > 5) break;
          a = reshape(a, ns);
          t = t.reshape(ns);
          ns[static_cast<size_t>(i)] = 3;
          a = expand(a, ns);
          t = t.expand(ns);
          what += " expand";
          break;
        }
        }
      }
      // Read the view directly, and through a reduce over axis 0.
      check_close(t, a, {}, "chain" + what, kI32);
      check_close(t.sum({0}), reduce(a, {0}, false, 0, [](double x, double y) { return x + y; }),
                  {}, "sum(0) of" + what, dtypes::int64);
    }
  }
  TEST_CASE("clone is a copy in a buffer of its own; contiguous of memory is that memory") {
    Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
    x.realize();
    CHECK(x.contiguous().realize().buffer() == x.buffer());
    Tensor c = x.clone();
    c.realize();
    CHECK(c.buffer() != nullptr);
    CHECK(c.buffer() != x.buffer());
    CHECK(c.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
    x.assign(Tensor::zeros({2, 2})).realize(); // the clone keeps its values
    CHECK(c.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
    // Views and lazy graphs clone into a new buffer too; the gradient passes through.
    CHECK(c.permute({1, 0}).clone().to_vector<float>() == std::vector<float>{1, 3, 2, 4});
    Tensor y = Tensor::from_vector(std::vector<float>{1, 2});
    CHECK(y.mul(3).clone().sum().gradient({y})[0].to_vector<float>() == std::vector<float>{3, 3});
  }
}
