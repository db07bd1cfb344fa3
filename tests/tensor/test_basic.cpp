// First checks of the Tensor front end on CPU.
#include <doctest/doctest.h>

#include "tg/error.hpp"
#include "tg/tensor.hpp"

using namespace tg;

TEST_SUITE("tensor.basic") {
  TEST_CASE("add and read back") {
    Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}, "CPU");
    Tensor b = Tensor::from_vector<float>({10, 20, 30, 40}, {2, 2}, "CPU");
    std::vector<float> r = (a + b).to_vector<float>();
    CHECK(r == std::vector<float>{11, 22, 33, 44});
  }
  TEST_CASE("sum, permute, matmul") {
    Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, "CPU");
    CHECK(a.sum().item<float>() == 21);
    CHECK(a.sum({1}).to_vector<float>() == std::vector<float>{6, 15});
    CHECK(a.permute({1, 0}).to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
    Tensor b = Tensor::from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2}, "CPU");
    CHECK(a.matmul(b).to_vector<float>() == std::vector<float>{4, 5, 10, 11});
  }
}
