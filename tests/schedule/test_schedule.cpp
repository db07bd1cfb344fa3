// Kernel counts on NULL (the scheduler's fusion decisions), the schedule cache, memory planning.
#include <doctest/doctest.h>

#include <algorithm>

#include "tensor/tensor_internal.hpp"
#include "tg/realize.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tg;

namespace {
int64_t kernels(const std::vector<ScheduleItem>& items) {
  int64_t n = 0;
  for (const ScheduleItem& i : items) n += i.kind == ScheduleItem::Kind::Kernel;
  return n;
}
Tensor realized(const Shape& s, const std::string& dev = "NULL") {
  return Tensor::empty(s, dtypes::float32, dev);
}
} // namespace

TEST_SUITE("schedule.kernels") {
  TEST_CASE("(a+b).relu() is one kernel") {
    Tensor a = realized({16, 16}), b = realized({16, 16});
    CHECK(kernels((a + b).relu().schedule()) == 1);
  }
  TEST_CASE("(a*b).sum() is one kernel") {
    Tensor a = realized({64}), b = realized({64});
    CHECK(kernels((a * b).sum().schedule()) == 1);
  }
  TEST_CASE("softmax of a 2-D tensor is at most 3 kernels") {
    Tensor x = realized({8, 32});
    int64_t n = kernels(x.softmax(-1).schedule());
    CHECK(n >= 1);
    CHECK(n <= 3);
  }
  TEST_CASE("a chain of 20 elementwise ops is one kernel") {
    Tensor x = realized({128});
    Tensor y = x;
    for (int i = 0; i < 20; ++i) y = (i % 2) ? y * 1.5 : y + 1.0;
    CHECK(kernels(y.schedule()) == 1);
  }
  TEST_CASE("a permute or reshape of a realized buffer adds no kernel") {
    Tensor x = realized({4, 8});
    CHECK(kernels(x.permute({1, 0}).schedule()) == 0);
    CHECK(kernels(x.reshape({32}).schedule()) == 0);
    CHECK(kernels(x.permute({1, 0}).reshape({2, 16}).schedule()) == 0);
    CHECK(kernels((x.permute({1, 0}) + 1).schedule()) == 1);
  }
  TEST_CASE("matmul is one kernel") {
    Tensor a = realized({8, 16}), b = realized({16, 4});
    CHECK(kernels(a.matmul(b).schedule()) == 1);
  }
  TEST_CASE("a matmul operand that would be recomputed per output column is stored first") {
    Tensor x = realized({64, 32}), a = realized({64, 48}), b = realized({64, 48});
    Tensor w = realized({48, 16});
    // A weight gradient x^T @ (a * b): the product reads two buffers and is read through an
    // expand over x's 32 columns: stored, then a plain matmul.
    CHECK(kernels(x.transpose(0, 1).matmul(a * b).schedule()) == 2);
    // A transcendental under the expand (GELU before a matmul): stored.
    CHECK(kernels(a.exp().matmul(w).schedule()) == 2);
    // A cheap chain over one buffer (a cast, a scale, a dequantization) fuses into the matmul.
    CHECK(kernels((a * 2 + 1).matmul(w).schedule()) == 1);
    Tensor h = Tensor::empty({64, 48}, dtypes::float16, "NULL");
    CHECK(kernels(h.cast(dtypes::float32).matmul(w).schedule()) == 1);
  }
  TEST_CASE("a large reduce into one value is split in two kernels (parallel partials)") {
    CHECK(kernels(realized({1 << 20}).sum().schedule()) == 2);
    CHECK(kernels(realized({4, 1 << 18}).max({1}).schedule()) == 2);
    CHECK(kernels(realized({1000}).sum().schedule()) == 1);          // small: one kernel
    CHECK(kernels(realized({1024, 1024}).sum({1}).schedule()) == 1); // many outputs: parallel
    // Per-channel sums over a batch of 512 (a batch norm's statistics, channels-last): the
    // batch axis splits into partials of 32 rows and more.
    CHECK(kernels(realized({512, 20, 20, 32}).sum({0, 1, 2}).schedule()) == 2);
    CHECK(kernels(realized({512, 4, 4, 32}).sum({0, 1, 2}).schedule()) == 1); // 8192 per channel
    // On CPU the split sum matches a double-precision reference.
    std::vector<float> host(1 << 20);
    double want = 0;
    for (size_t i = 0; i < host.size(); ++i) {
      host[i] = static_cast<float>((i * 7919) % 1000) * 0.001f;
      want += host[i];
    }
    Tensor t = Tensor::from_vector(host, "CPU");
    CHECK(t.sum().item<float>() == doctest::Approx(want).epsilon(1e-6));
    const float top = *std::max_element(host.begin(), host.end());
    CHECK(t.reshape({2, 1 << 19}).max({1}).to_vector<float>() == std::vector<float>{top, top});
  }
  TEST_CASE("identical kernels are compiled once") {
    auto from = [](float v) {
      return Tensor::full({37}, v, dtypes::float32, "CPU").contiguous().realize();
    };
    Tensor a = from(1), b = from(2), c = from(3), d = from(4);
    const int64_t before = compiled_kernel_count();
    Tensor x = a * b + 0.5, y = c * d + 0.5; // two kernels with one AST over other buffers
    Tensor::realize_all({x, y});
    CHECK(compiled_kernel_count() - before == 1);
    CHECK(x.to_vector<float>() == std::vector<float>(37, 2.5f));
    CHECK(y.to_vector<float>() == std::vector<float>(37, 12.5f));
  }
  TEST_CASE("the memory plan gives a dead intermediate's memory to a later one") {
    Tensor x = Tensor::arange(64, dtypes::float32, "CPU").contiguous().realize();
    Tensor t1 = (x + 1).contiguous();  // item 0
    Tensor t2 = (t1 * 2).contiguous(); // item 1 reads t1 (its last reader)
    Tensor t3 = (t2 + 3).contiguous(); // item 2 may take t1's memory
    Tensor y = t3 * 4;                 // item 3, the output
    Schedule s = create_schedule({y.uop()}, y.state()->buffers);
    REQUIRE(s.items.size() == 4);
    CHECK(s.temporaries == 3);
    CHECK(s.reused_temps == 1);
    CHECK(s.items[2].bufs[0] == s.items[0].bufs[0]);
    CHECK(s.items[1].bufs[0] != s.items[0].bufs[0]);
    std::vector<float> got = y.to_vector<float>();
    for (int i = 0; i < 64; ++i) CHECK(got[static_cast<size_t>(i)] == ((i + 1) * 2 + 3) * 4.0f);
  }
  TEST_CASE("the schedule cache hits on the second identical step") {
    clear_schedule_cache();
    const ScheduleCacheStats before = schedule_cache_stats();
    for (int step = 0; step < 3; ++step) {
      Tensor a = realized({32}), b = realized({32});
      ((a * b) + 2).sum().realize();
    }
    const ScheduleCacheStats after = schedule_cache_stats();
    CHECK(after.lookups - before.lookups == 3);
    CHECK(after.hits - before.hits == 2);
  }
}
