// The movement ops beyond the primitive views, against C++ loops: pad modes (constant, reflect,
// replicate, circular; PyTorch's flat order and per-axis pairs; negative padding), repeat, tile,
// repeat_interleave, roll, split, chunk, unflatten, movedim, tril, triu, diag, meshgrid, flip
// over several axes; views add no kernel on NULL; bad arguments raise naming the values.
#include <doctest/doctest.h>

#include "tensor/ref.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"

using namespace tgt;

namespace {

const DType kF32 = dtypes::float32, kF16 = dtypes::float16, kI32 = dtypes::int32,
            kBool = dtypes::bool_;

int64_t kernels(const Tensor& t) {
  int64_t n = 0;
  for (const tg::ScheduleItem& i : t.schedule()) n += i.kind == tg::ScheduleItem::Kind::Kernel;
  return n;
}

// PyTorch's pad modes as index maps: output position i of an axis of size n padded by (b, a).
double pad_ref_at(const Arr& x, const Pairs& p, const std::string& mode,
                  const std::vector<int64_t>& out) {
  std::vector<int64_t> src(out.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t n = x.shape[k];
    const int64_t b = p[k].first, a = p[k].second;
    if (mode == "circular") { // crop first, then wrap within the cropped range
      const int64_t lo = std::max<int64_t>(-b, 0), m = n - lo - std::max<int64_t>(-a, 0);
      const int64_t i = out[k] - std::max<int64_t>(b, 0);
      src[k] = lo + ((i % m) + m) % m;
      continue;
    }
    const int64_t i = out[k] - b; // position in the input's coordinates
    if (mode == "reflect")
      src[k] = i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
    else
      src[k] = std::clamp<int64_t>(i, 0, n - 1);
  }
  return x.at(src);
}

Arr pad_ref(const Arr& x, const Pairs& p, const std::string& mode) {
  Shape s = x.shape;
  for (size_t k = 0; k < s.size(); ++k) {
    const int64_t n = s[k];
    s[k] = n + p[k].first + p[k].second;
  }
  return generate(s, [&](const std::vector<int64_t>& o) { return pad_ref_at(x, p, mode, o); });
}

} // namespace

TEST_SUITE("tensor.indexing") {
  TEST_CASE("pad: reflect, replicate, circular, constant; flat and pair forms") {
    for (DType d : {kF32, kI32, kF16}) {
      for (const std::string& view : {std::string("contiguous"), std::string("permuted")}) {
        auto [t, a] = view_input(view, {4, 5}, d, -20, 20, 41);
        INFO(d.name() << " " << view);
        const std::vector<Pairs> pads{{{1, 2}, {3, 0}},
                                      {{0, 0}, {4, 4}},
                                      {{3, 3}, {1, 1}},
                                      {{-1, 2}, {2, -3}},
                                      {{2, -2}, {0, 0}}};
        for (const std::string mode : {"reflect", "replicate", "circular"}) {
          for (const Pairs& p : pads) {
            INFO(mode << " (" << p[0].first << "," << p[0].second << "),(" << p[1].first << ","
                      << p[1].second << ")");
            if (mode == "circular" && (p[1].first == 4 || p[0].first == 3)) continue; // > size
            check_close(t.pad(p, mode), pad_ref(a, p, mode), {}, "pad pairs", d);
          }
        }
        // The flat form is PyTorch's: last axis first.
        check_close(t.pad({3, 0, 1, 2}, "reflect"), pad_ref(a, {{1, 2}, {3, 0}}, "reflect"), {},
                    "flat reflect", d);
        check_close(t.pad({1, 1}, "replicate"), pad_ref(a, {{0, 0}, {1, 1}}, "replicate"), {},
                    "flat replicate, last axis only", d);
        check_close(t.pad({2, 1, 1, 0}, "circular"), pad_ref(a, {{1, 0}, {2, 1}}, "circular"), {},
                    "flat circular", d);
        check_close(t.pad({1, -2, 2, 0}, "constant", tg::Scalar(5)),
                    pad(shrink(a, {{0, 4}, {0, 3}}), {{2, 0}, {1, 0}}, 5), {},
                    "flat constant, negative crops", d);
        check_close(t.pad({1, 1}), pad(a, {{0, 0}, {1, 1}}, 0), {}, "flat default constant", d);
      }
    }
    // 1-D and 3-D; reflect of size-2 axis by 1.
    Arr v = random_arr({2, 3, 4}, -5, 5, kF32, 42);
    Tensor tv = to_tensor(v, kF32);
    const Pairs p3{{1, 1}, {2, 2}, {3, 3}};
    check_close(tv.pad(p3, "reflect"), pad_ref(v, p3, "reflect"), {}, "3-d reflect");
    check_close(tv.pad(p3, "circular"), pad_ref(v, p3, "circular"), {}, "3-d circular");
    // An integer value next to pairs is still the constant form, never a mode.
    check_close(tv.pad(p3, 0), pad(v, p3, 0), {}, "pairs, value 0");
    check_close(tv.pad({{1, 0}, {0, 0}, {2, 1}}, 3), pad(v, {{1, 0}, {0, 0}, {2, 1}}, 3), {},
                "pairs, value 3");
    // Pair form with a constant value still works; reflect/replicate of a padded view.
    CHECK(kernels(tv.pad(p3, "circular")) == 0); // views of the realized buffer
    CHECK(kernels(tv.pad(p3, "reflect")) == 1);  // three cats fused into one kernel
    Tensor n = Tensor::empty({4, 6}, kF32, "NULL");
    CHECK(kernels(n.pad({{1, 2}, {2, 1}}, "circular")) == 0); // a view: repeat + shrink
    // Bad pads.
    Tensor x = Tensor::zeros({2, 3});
    std::string e = error_of([&] { (void)x.pad({3, 0}, "reflect"); });
    CHECK(e.find("(3, 0)") != std::string::npos);
    CHECK(e.find("size 3") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.pad({0, 0, 2, 0}, "reflect");
          }).find("size 2") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.pad({4, 0}, "circular");
          }).find("more than once") != std::string::npos);
    CHECK(error_of([&] { (void)x.pad({1, 0}, "wrap"); }).find("wrap") != std::string::npos);
    CHECK(error_of([&] { (void)x.pad({1, 0, 1}, "constant"); }).find("even") != std::string::npos);
    CHECK(error_of([&] {
            (void)x.pad({1, 1, 1, 1, 1, 1});
          }).find("at most 4") != std::string::npos);
    CHECK_THROWS_AS((void)Tensor::zeros({0, 2}).pad({0, 0, 1, 0}, "replicate"), tg::Error);
    CHECK_THROWS_AS((void)x.pad({-4, 0}, "reflect"), tg::Error);
  }

  TEST_CASE("repeat, tile, repeat_interleave, roll") {
    for (DType d : {kF32, kI32, kBool}) {
      INFO(d.name());
      auto [t, a] = view_input("flipped", {2, 3}, d, -9, 9, 51);
      check_close(t.repeat({2, 1, 3}),
                  generate({2, 2, 9},
                           [&](const std::vector<int64_t>& i) {
                             return a.at({i[1], i[2] % 3});
                           }),
                  {}, "repeat", d);
      check_close(t.tile({2}),
                  generate({2, 6},
                           [&](const std::vector<int64_t>& i) {
                             return a.at({i[0], i[1] % 3});
                           }),
                  {}, "tile", d);
      check_close(t.repeat_interleave(2, 1),
                  generate({2, 6},
                           [&](const std::vector<int64_t>& i) {
                             return a.at({i[0], i[1] / 2});
                           }),
                  {}, "repeat_interleave dim 1", d);
      check_close(t.repeat_interleave(3),
                  generate({18},
                           [&](const std::vector<int64_t>& i) {
                             return a.v[static_cast<size_t>(i[0] / 3)];
                           }),
                  {}, "repeat_interleave flat", d);
      check_close(t.repeat_interleave(std::vector<int64_t>{2, 0, 1}, 1),
                  generate({2, 3},
                           [&](const std::vector<int64_t>& i) {
                             const int64_t c[] = {0, 0, 2};
                             return a.at({i[0], c[i[1]]});
                           }),
                  {}, "repeat_interleave per element", d);
      check_close(t.roll({1, -4}, {0, 1}),
                  generate({2, 3},
                           [&](const std::vector<int64_t>& i) {
                             return a.at({(i[0] + 1) % 2, (i[1] + 4) % 3});
                           }),
                  {}, "roll two dims", d);
      check_close(t.roll({2}),
                  generate({2, 3},
                           [&](const std::vector<int64_t>& i) {
                             return a.v[static_cast<size_t>((i[0] * 3 + i[1] + 4) % 6)];
                           }),
                  {}, "roll flattened", d);
      check_close(t.roll({1, 1}, {1, -1}),
                  generate({2, 3},
                           [&](const std::vector<int64_t>& i) {
                             return a.at({i[0], (i[1] + 1) % 3});
                           }),
                  {}, "roll one dim twice adds", d);
    }
    Tensor n = Tensor::empty({3, 4}, kF32, "NULL");
    CHECK(kernels(n.repeat({2, 2})) == 0);
    CHECK(kernels(n.roll({1, 2}, {0, 1})) == 0);
    CHECK(kernels(n.repeat_interleave(3, 0)) == 0);
    CHECK(Tensor::zeros({0, 2}).roll({3}, {0}).shape() == Shape{0, 2});
    CHECK(Tensor::full({}, 2.0).repeat({3}).to_vector<float>() == std::vector<float>{2, 2, 2});
    CHECK(error_of([&] { (void)n.repeat({2}); }).find("[2]") != std::string::npos);
    CHECK_THROWS_AS((void)n.repeat({2, -1}), tg::Error);
    CHECK(error_of([&] { (void)n.roll({1, 2}, {0}); }).find("same length") != std::string::npos);
    CHECK(error_of([&] {
            (void)n.repeat_interleave(std::vector<int64_t>{1, 2}, 0);
          }).find("size 3") != std::string::npos);
  }

  TEST_CASE("split, chunk, unflatten, movedim") {
    Arr a = random_arr({5, 4}, -9, 9, kI32, 61);
    Tensor t = to_tensor(a, kI32);
    std::vector<Tensor> s = t.split(2);
    REQUIRE(s.size() == 3);
    check_close(s[2], shrink(a, {{4, 5}, {0, 4}}), {}, "split last piece");
    check_close(s[1], shrink(a, {{2, 4}, {0, 4}}), {}, "split middle");
    std::vector<Tensor> s2 = t.split(std::vector<int64_t>{1, 0, 3}, -1);
    REQUIRE(s2.size() == 3);
    CHECK(s2[1].shape() == Shape{5, 0});
    check_close(s2[2], shrink(a, {{0, 5}, {1, 4}}), {}, "split sizes");
    std::vector<Tensor> c = t.chunk(3, 1); // 4 / 3 -> chunks of 2: two pieces, as PyTorch
    REQUIRE(c.size() == 2);
    check_close(c[1], shrink(a, {{0, 5}, {2, 4}}), {}, "chunk");
    CHECK(t.chunk(5, 0).size() == 5);
    CHECK(Tensor::zeros({0, 3}).chunk(2, 0).size() == 2);
    CHECK(Tensor::zeros({0, 3}).split(2, 0).size() == 1);
    std::string e = error_of([&] { (void)t.split(std::vector<int64_t>{2, 2}); });
    CHECK(e.find("[2, 2]") != std::string::npos);
    CHECK(e.find("size 5") != std::string::npos);
    CHECK_THROWS_AS((void)t.split(0), tg::Error);
    CHECK_THROWS_AS((void)t.chunk(0), tg::Error);
    check_close(t.unflatten(1, {2, -1}), reshape(a, {5, 2, 2}), {}, "unflatten");
    check_close(t.reshape({20}).unflatten(0, {5, 2, 2}), reshape(a, {5, 2, 2}), {}, "unflatten 0");
    CHECK(error_of([&] { (void)t.unflatten(1, {3, 2}); }).find("[3, 2]") != std::string::npos);
    Arr b = random_arr({2, 3, 4, 5}, -9, 9, kF32, 62);
    Tensor tb = to_tensor(b, kF32);
    check_close(tb.movedim(0, -1), permute(b, {1, 2, 3, 0}), {}, "movedim 0 -> -1");
    check_close(tb.movedim(3, 1), permute(b, {0, 3, 1, 2}), {}, "movedim 3 -> 1");
    check_close(tb.movedim({0, 1}, {2, 0}), permute(b, {1, 2, 0, 3}), {}, "movedim two");
    CHECK_THROWS_AS((void)tb.movedim({0, 0}, {1, 2}), tg::Error);
    CHECK_THROWS_AS((void)tb.movedim({0}, {1, 2}), tg::Error);
    CHECK_THROWS_AS((void)tb.movedim(4, 0), tg::Error);
  }

  TEST_CASE("tril, triu, diag, meshgrid, flip over several axes") {
    for (DType d : {kF32, kI32, kBool}) {
      INFO(d.name());
      for (const std::string& view : {std::string("contiguous"), std::string("permuted")}) {
        auto [t, a] = view_input(view, {4, 6}, d, -9, 9, 71);
        for (int64_t k : {-5, -1, 0, 2, 7}) {
          INFO("diagonal " << k);
          check_close(t.tril(k),
                      generate({4, 6},
                               [&](const std::vector<int64_t>& i) {
                                 return i[1] - i[0] <= k ? a.at(i) : 0.0;
                               }),
                      {}, "tril " + view, d);
          check_close(t.triu(k),
                      generate({4, 6},
                               [&](const std::vector<int64_t>& i) {
                                 return i[1] - i[0] >= k ? a.at(i) : 0.0;
                               }),
                      {}, "triu " + view, d);
          const int64_t r0 = std::max<int64_t>(-k, 0), c0 = std::max<int64_t>(k, 0);
          const int64_t m = std::max<int64_t>(std::min(4 - r0, 6 - c0), 0);
          check_close(t.diag(k),
                      generate({m},
                               [&](const std::vector<int64_t>& i) {
                                 return a.at({r0 + i[0], c0 + i[0]});
                               }),
                      {}, "diag of 2-d " + view, d);
        }
        Arr v = random_arr({3}, -9, 9, d, 72);
        Tensor tv = to_tensor(v, d);
        for (int64_t k : {-2, 0, 1}) {
          const int64_t n = 3 + std::abs(k);
          check_close(tv.diag(k),
                      generate({n, n},
                               [&](const std::vector<int64_t>& i) {
                                 return i[1] - i[0] == k ? v.at({std::min(i[0], i[1])}) : 0.0;
                               }),
                      {}, "diag of 1-d", d);
        }
      }
    }
    Arr b = random_arr({2, 3, 4}, -9, 9, kF32, 73);
    Tensor tb = to_tensor(b, kF32);
    check_close(
        tb.tril(),
        generate({2, 3, 4},
                 [&](const std::vector<int64_t>& i) { return i[2] <= i[1] ? b.at(i) : 0.0; }),
        {}, "batched tril");
    check_close(tb.flip({0, 1, 2}), flip(b, {0, 1, 2}), {}, "flip three axes");
    check_close(tb.flip({-1, 0}), flip(b, {2, 0}), {}, "flip two axes, negative");
    Tensor n = Tensor::empty({5}, kF32, "NULL");
    CHECK(kernels(n.diag(1)) == 0);
    CHECK(kernels(Tensor::empty({5, 5}, kF32, "NULL").diag(-2)) == 0);
    CHECK(kernels(Tensor::empty({2, 5, 5}, kF32, "NULL").flip({0, 2})) == 0);
    CHECK(Tensor::zeros({0}).diag().shape() == Shape{0, 0});
    CHECK(error_of([&] { (void)tb.diag(); }).find("(2, 3, 4)") != std::string::npos);
    CHECK_THROWS_AS((void)Tensor::zeros({3}).tril(), tg::Error);
    // meshgrid ij and xy.
    Tensor x = Tensor::from_vector<int32_t>({1, 2, 3}), y = Tensor::from_vector<int32_t>({7, 8});
    std::vector<Tensor> ij = Tensor::meshgrid({x, y});
    CHECK(ij[0].shape() == Shape{3, 2});
    CHECK(ij[0].to_vector<int32_t>() == std::vector<int32_t>{1, 1, 2, 2, 3, 3});
    CHECK(ij[1].to_vector<int32_t>() == std::vector<int32_t>{7, 8, 7, 8, 7, 8});
    std::vector<Tensor> xy = Tensor::meshgrid({x, y}, "xy");
    CHECK(xy[0].shape() == Shape{2, 3});
    CHECK(xy[0].to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3, 1, 2, 3});
    CHECK(xy[1].to_vector<int32_t>() == std::vector<int32_t>{7, 7, 7, 8, 8, 8});
    std::vector<Tensor> three = Tensor::meshgrid({x, y, Tensor::from_vector<int32_t>({5})}, "xy");
    CHECK(three[2].shape() == Shape{2, 3, 1});
    CHECK_THROWS_AS((void)Tensor::meshgrid({x, y}, "yx"), tg::Error);
    CHECK_THROWS_AS((void)Tensor::meshgrid({x, Tensor::zeros({2})}), tg::Error);
    CHECK_THROWS_AS((void)Tensor::meshgrid({Tensor::zeros({2, 2})}), tg::Error);
  }
}
