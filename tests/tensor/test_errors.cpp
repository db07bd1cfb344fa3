// Bad input raises tg::Error naming the shapes or values involved, and loses nothing: the
// tensors involved stay usable.
#include <doctest/doctest.h>

#include "tg/error.hpp"
#include "tg/tensor.hpp"

using namespace tg;

namespace {
template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
} // namespace

TEST_SUITE("tensor.errors") {
  TEST_CASE("errors of a kind Python tells apart carry that kind") {
    Tensor x = Tensor::ones({3, 3, 3}, dtypes::float32, "CPU");
    CHECK_THROWS_AS((void)x.pad({3, 0}, "typo"), NotImplementedError);
    CHECK_THROWS_AS((void)Tensor::arange(0, 129, 1, dtypes::int8), OverflowError);
    CHECK_THROWS_AS((void)Tensor::arange(-129, 128, 1, dtypes::int8), OverflowError);
    CHECK_THROWS_AS((void)Tensor::arange(127, -130, -1, dtypes::int8), OverflowError);
    CHECK_THROWS_AS((void)Tensor::arange(0, 8589934592.0, 1, dtypes::int32), OverflowError);
    CHECK(Tensor::arange(-128, 128, 1, dtypes::int8).numel() == 256); // the edges fit
    CHECK(Tensor::arange(0, 256, 1, dtypes::uint8).numel() == 256);
  }
  TEST_CASE("the checks tinygrad and PyTorch both make") {
    Tensor f = Tensor::ones({2}, dtypes::float32, "CPU");
    Tensor u = Tensor::ones({2}, dtypes::uint32, "CPU");
    // No clamp without a bound.
    CHECK(error_of([&] {
            (void)f.clamp(std::optional<Scalar>{}, std::optional<Scalar>{});
          }).find("min and max") != std::string::npos);
    CHECK_THROWS_AS((void)f.clamp(Tensor::OptTensor{}, Tensor::OptTensor{}), Error);
    // Shifts take integer amounts only.
    CHECK(error_of([&] { (void)u.lshift(f); }).find("lshift") != std::string::npos);
    CHECK(error_of([&] { (void)u.rshift(f); }).find("rshift") != std::string::npos);
    // A 0-d tensor has dimensions -1 and 0 only.
    Tensor s = Tensor::full({}, 1.0f, {}, "CPU");
    CHECK(s.squeeze(0).ndim() == 0);
    CHECK(s.squeeze(-1).ndim() == 0);
    CHECK(error_of([&] { (void)s.squeeze(1); }).find("out of range") != std::string::npos);
    CHECK(error_of([&] { (void)s.squeeze(-2); }).find("out of range") != std::string::npos);
  }
  TEST_CASE("broadcasting incompatible shapes names both") {
    Tensor a = Tensor::zeros({2, 3}, dtypes::float32, "CPU"),
           b = Tensor::zeros({4, 3}, dtypes::float32, "CPU");
    const std::string m = error_of([&] { (void)(a + b); });
    CHECK(m.find("(2, 3)") != std::string::npos);
    CHECK(m.find("(4, 3)") != std::string::npos);
    CHECK(m.find("broadcast") != std::string::npos);
    CHECK((a + a).sum().item<float>() == 0); // a is still usable
  }
  TEST_CASE("matmul inner-dimension mismatch") {
    Tensor a = Tensor::zeros({2, 3}, dtypes::float32, "CPU"),
           b = Tensor::zeros({4, 5}, dtypes::float32, "CPU");
    const std::string m = error_of([&] { (void)a.matmul(b); });
    CHECK(m.find("(2, 3) @ (4, 5)") != std::string::npos);
    CHECK(m.find("3 != 4") != std::string::npos);
    CHECK(error_of([&] {
            (void)Tensor::full({}, 1.0f, {}, "CPU").matmul(b);
          }).find("at least 1 dimension") != std::string::npos);
  }
  TEST_CASE("invalid reshape") {
    Tensor a = Tensor::zeros({2, 3}, dtypes::float32, "CPU");
    std::string m = error_of([&] { (void)a.reshape({4, 2}); });
    CHECK(m.find("cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)") != std::string::npos);
    m = error_of([&] { (void)a.reshape({-1, -1}); });
    CHECK(m.find("only one dimension can be -1") != std::string::npos);
    m = error_of([&] { (void)a.reshape({-1, 4}); });
    CHECK(m.find("cannot reshape (2, 3)") != std::string::npos);
  }
  TEST_CASE("index or slice out of range") {
    Tensor a = Tensor::zeros({3, 4}, dtypes::float32, "CPU");
    std::string m = error_of([&] { (void)a.index(5); });
    CHECK(m.find("index 5 is out of bounds for dimension 0 with size 3") != std::string::npos);
    m = error_of([&] { (void)a.index(-4); });
    CHECK(m.find("index -4 is out of bounds") != std::string::npos);
    m = error_of([&] { (void)a.shrink({{0, 3}, {2, 6}}); });
    CHECK(m.find("[2, 6) of axis 1 is out of range for shape (3, 4)") != std::string::npos);
    m = error_of([&] { (void)a.sum({2}); });
    CHECK(m.find("dimension 2 is out of range") != std::string::npos);
    m = error_of([&] { (void)a.slice({Slice{0, 2, 0}}); });
    CHECK(m.find("step of axis 0 is zero") != std::string::npos);
    m = error_of([&] { (void)a.permute({0, 0}); });
    CHECK(m.find("not a permutation") != std::string::npos);
    m = error_of([&] { (void)a.expand({3, 4, 5}); });
    CHECK(m.find("cannot expand (3, 4) to (3, 4, 5)") != std::string::npos);
  }
  TEST_CASE("reading a tensor whose device was not found") {
    const std::string m = error_of([] {
      Tensor t = Tensor::ones({3}, dtypes::float32, "NOSUCHDEV");
      (void)t.to_vector<float>();
    });
    CHECK(m.find("NOSUCHDEV") != std::string::npos);
    CHECK(m.find("available devices") != std::string::npos);
  }
  TEST_CASE("mixing devices, bad data sizes, undefined tensors") {
    Tensor a = Tensor::zeros({3}, dtypes::float32, "CPU"),
           b = Tensor::zeros({3}, dtypes::float32, "NULL");
    CHECK(error_of([&] { (void)(a + b); }).find("different devices (CPU and NULL)") !=
          std::string::npos);
    CHECK(error_of([] {
            (void)Tensor::from_vector<float>({1, 2, 3}, {2, 2}, "CPU");
          }).find("shape (2, 2) holds 4 elements of float32 but 3 were given") !=
          std::string::npos);
    CHECK(error_of([] { (void)Tensor().shape(); }).find("undefined Tensor") != std::string::npos);
    CHECK(error_of([&] { (void)a.item<float>(); }).find("3 elements") != std::string::npos);
    CHECK(error_of([&] { (void)a.bitcast(dtypes::float64); }).find("sizes must match") !=
          std::string::npos);
  }

  // Sizes that come from files (a header's shape) reach buffers: one whose bytes overflow, or one
  // larger than memory, must be a tg::Error saying what was allocated, not a crash.
  TEST_CASE("a buffer beyond 2^64 bytes or beyond memory is a tg::Error naming its size") {
    const std::string wraps = error_of([] { (void)Tensor::empty({int64_t{1} << 62}).realize(); });
    CHECK(wraps.find("4611686018427387904 elements of float32 need more than 2^64 bytes") !=
          std::string::npos);
#if !defined(__SANITIZE_ADDRESS__)
    // 2^46 bytes (64 TiB): the allocation fails (ASan refuses such sizes by aborting instead).
    const std::string oom =
        error_of([] { (void)Tensor::zeros({int64_t{1} << 44}).contiguous().realize(); });
    // "out of host memory allocating ..." on the CPU, the device's own words on a GPU.
    CHECK(oom.find("allocating 70368744177664 bytes") != std::string::npos);
#endif
  }
}
