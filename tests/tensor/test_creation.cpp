// Creation ops against C++ loops: empty, zeros, ones, full, arange (int and float), eye,
// *_like, from_vector, from_blob (zero-copy: borrowed host memory), and to(device).
#include <doctest/doctest.h>

#include <cmath>

#include "tensor/ref.hpp"
#include "tg/error.hpp"

using namespace tgt;

TEST_SUITE("tensor.creation") {
  TEST_CASE("empty, zeros, ones, full over dtypes") {
    for (DType d : {dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::int32, dtypes::int8,
                    dtypes::uint8, dtypes::bool_}) {
      INFO(d.name());
      Tensor e = Tensor::empty({2, 3}, d);
      CHECK(e.shape() == Shape{2, 3});
      CHECK(e.dtype() == d);
      CHECK(e.to_vector<double>().size() == 6);
      check_close(Tensor::zeros({2, 3}, d), Arr{{2, 3}, std::vector<double>(6, 0)}, {}, "zeros", d);
      check_close(Tensor::ones({3, 1, 2}, d), Arr{{3, 1, 2}, std::vector<double>(6, 1)}, {}, "ones",
                  d);
      const double v = d == dtypes::bool_ ? 1 : d == dtypes::uint8 ? 200 : -7;
      tg::Scalar s = d == dtypes::bool_ ? tg::Scalar(true) : tg::Scalar(static_cast<int64_t>(v));
      check_close(Tensor::full({4}, s, d), Arr{{4}, std::vector<double>(4, v)}, {}, "full", d);
      Tensor base = Tensor::ones({2, 2}, d);
      check_close(Tensor::zeros_like(base), Arr{{2, 2}, std::vector<double>(4, 0)}, {},
                  "zeros_like", d);
      check_close(Tensor::ones_like(base), Arr{{2, 2}, std::vector<double>(4, 1)}, {}, "ones_like",
                  d);
      check_close(Tensor::full_like(base, s), Arr{{2, 2}, std::vector<double>(4, v)}, {},
                  "full_like", d);
      CHECK(Tensor::empty_like(base).dtype() == d);
      CHECK(Tensor::empty_like(base).shape() == Shape{2, 2});
    }
    CHECK(Tensor::full({2}, 2.5).dtype() == dtypes::float32);
    CHECK(Tensor::full({2}, 3).dtype() == dtypes::int32);
    CHECK(Tensor::full({2}, true).dtype() == dtypes::bool_);
    check_close(Tensor::full({2}, 0.1, dtypes::float16),
                Arr{{2}, std::vector<double>(2, store(dtypes::float16, 0.1))}, {}, "full f16 0.1");
    CHECK(Tensor::zeros({}).shape() == Shape{});
    CHECK(Tensor::zeros({}).item<float>() == 0);
    CHECK(Tensor::ones({0, 5}).to_vector<float>().empty());
    CHECK_THROWS_AS(Tensor::zeros({-1, 2}), tg::Error);
  }

  TEST_CASE("arange: int and float, steps, empty") {
    auto ar = [](double start, double stop, double step) {
      std::vector<double> v;
      const auto n = static_cast<int64_t>(std::max(0.0, std::ceil((stop - start) / step)));
      for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<double>(i) * step);
      return Arr{{static_cast<int64_t>(v.size())}, v};
    };
    check_close(Tensor::arange(10), ar(0, 10, 1), {}, "arange(10)", dtypes::int32);
    check_close(Tensor::arange(3, 20, 4), ar(3, 20, 4), {}, "arange(3, 20, 4)", dtypes::int32);
    check_close(Tensor::arange(10, -5, -3), ar(10, -5, -3), {}, "arange(10, -5, -3)",
                dtypes::int32);
    check_close(Tensor::arange(0, 1, 0.125), ar(0, 1, 0.125), tol_for(dtypes::float32),
                "arange(0, 1, 0.125)", dtypes::float32);
    check_close(Tensor::arange(-1.5, 2.2, 0.3), ar(-1.5, 2.2, 0.3), tol_for(dtypes::float32),
                "arange(-1.5, 2.2, 0.3)", dtypes::float32);
    check_close(Tensor::arange(5, dtypes::float16), ar(0, 5, 1), {}, "arange(5) f16",
                dtypes::float16);
    check_close(Tensor::arange(0, 6, 2, dtypes::int8), ar(0, 6, 2), {}, "arange int8",
                dtypes::int8);
    CHECK(Tensor::arange(0).shape() == Shape{0});
    CHECK(Tensor::arange(5, 1, 1).shape() == Shape{0});
    CHECK_THROWS_AS(Tensor::arange(0, 1, 0), tg::Error);
    Tensor big = Tensor::arange(100000);
    std::vector<int32_t> v = big.to_vector<int32_t>();
    CHECK(v.size() == 100000);
    CHECK(v[99999] == 99999);
    CHECK(v[12345] == 12345);
  }

  TEST_CASE("eye") {
    for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {3, 5}, {5, 2}, {0, 3}}) {
      Arr want =
          generate({n, m}, [](const std::vector<int64_t>& i) { return i[0] == i[1] ? 1.0 : 0.0; });
      check_close(Tensor::eye(n, m), want, {}, "eye " + std::to_string(n) + "x" + std::to_string(m),
                  dtypes::float32);
    }
    check_close(
        Tensor::eye(3, {}, dtypes::int8),
        generate({3, 3}, [](const std::vector<int64_t>& i) { return i[0] == i[1] ? 1.0 : 0.0; }),
        {}, "eye int8", dtypes::int8);
  }

  TEST_CASE("from_vector takes a braced shape, a device name, or neither") {
    const std::vector<float> v{1, 2, 3, 4, 5, 6};
    const int64_t n = static_cast<int64_t>(v.size()); // not a constant: {n} would narrow to char
    CHECK(Tensor::from_vector(v, {n}).shape() == Shape{6});
    CHECK(Tensor::from_vector(v, {2, 3}).shape() == Shape{2, 3});
    CHECK(Tensor::from_vector(v, {3, 2}, "CPU").shape() == Shape{3, 2});
    CHECK(Tensor::from_vector(v, "CPU").shape() == Shape{6});
    CHECK(Tensor::from_vector(v, std::string("CPU")).device() == "CPU");
    CHECK(Tensor::from_vector(v).to_vector<float>() == v);
  }

  TEST_CASE("from_vector over dtypes and shapes") {
    CHECK(Tensor::from_vector<int8_t>({-1, 2, 3}).to_vector<int8_t>() ==
          std::vector<int8_t>{-1, 2, 3});
    CHECK(Tensor::from_vector<uint8_t>({0, 255}, Shape{2, 1}).shape() == Shape{2, 1});
    CHECK(Tensor::from_vector<bool>({true, false, true}).to_vector<bool>() ==
          std::vector<bool>{true, false, true});
    CHECK(Tensor::from_vector<double>({1.5, 2.5}).dtype() == dtypes::float64);
    Tensor h = Tensor::from_vector<uint16_t>({0x3C00, 0x4000}, {2}, "", dtypes::float16);
    CHECK(h.to_vector<float>() == std::vector<float>{1, 2});
    Tensor b = Tensor::from_vector<uint16_t>({0x3F80, 0xC000}, {2}, "", dtypes::bfloat16);
    CHECK(b.to_vector<float>() == std::vector<float>{1, -2});
    CHECK(Tensor::from_vector<float>({7}, Shape{}).item<float>() == 7);
    CHECK_THROWS_AS(Tensor::from_vector<float>({1, 2, 3}, Shape{2, 2}), tg::Error);
    CHECK_THROWS_AS(Tensor::from_vector<float>({1}, {1}, "", dtypes::float16), tg::Error);
    // The data is copied: changing the vector afterwards changes nothing.
    std::vector<float> src{1, 2, 3};
    Tensor c = Tensor::from_vector(src);
    src[0] = 100;
    CHECK(c.to_vector<float>() == std::vector<float>{1, 2, 3});
  }

  TEST_CASE("from_blob borrows host memory (zero-copy)") {
    std::vector<float> host{1, 2, 3, 4, 5, 6};
    Tensor t = Tensor::from_blob(std::span<float>(host), {2, 3}, "CPU");
    CHECK((t * 2).to_vector<float>() == std::vector<float>{2, 4, 6, 8, 10, 12});
    // Writes to the host array are visible: the tensor reads it in place.
    host[0] = 100;
    host[5] = -1;
    CHECK((t * 2).to_vector<float>() == std::vector<float>{200, 4, 6, 8, 10, -2});
    CHECK(t.sum({1}).to_vector<float>() == std::vector<float>{105, 8});
    // And writes through the tensor land in the host array.
    t.assign(t + 1).realize();
    CHECK(host == std::vector<float>{101, 3, 4, 5, 6, 0});
    std::vector<int8_t> hi{-1, 2};
    Tensor ti = Tensor::from_blob(std::span<int8_t>(hi), {2}, "CPU");
    hi[1] = 9;
    CHECK(ti.cast(dtypes::int32).to_vector<int32_t>() == std::vector<int32_t>{-1, 9});
  }

  TEST_CASE("to(device): CPU -> NULL, CPU -> CPU:C and back") {
    Tensor a = Tensor::from_vector<float>({1, 2, 3}, Shape{3}, "CPU");
    Tensor n = (a + 1).to("NULL");
    CHECK(n.device() == "NULL");
    n.realize(); // runs; NULL memory is not readable, so no values are checked
    Tensor c = (a * 3).to("CPU:C");
    CHECK(c.device() != a.device());
    CHECK(c.to_vector<float>() == std::vector<float>{3, 6, 9});
    CHECK((c + 1).to_vector<float>() == std::vector<float>{4, 7, 10});
    Tensor back = (c + 1).to(a.device());
    CHECK(back.device() == a.device());
    CHECK((back + a).to_vector<float>() == std::vector<float>{5, 9, 13});
    CHECK_THROWS_AS(a + c, tg::Error);
  }
}
