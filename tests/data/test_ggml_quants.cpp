// GGML quantization (tg/ggml_quants.hpp): our quantizers write the same blocks as llama.cpp's
// reference quantizers and our dequantizers the same floats, checked by hashes of llama.cpp's
// output on a fixed input (computed by a program built against llama.cpp's ggml-base, see
// docs/LLM.md); the graph form of the dequantization equals the host form bit for bit for
// every type; and the round trip stays within each format's error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "tg/error.hpp"
#include "tg/ggml_quants.hpp"

using namespace tg;

namespace {

// The input the reference hashes were computed on: 16 blocks of 256 with large, small,
// outlying, zero, constant and one-signed stretches (the same generator in the C program).
std::vector<float> quant_test_input(int n) {
  std::vector<float> x(static_cast<size_t>(n));
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    float u = static_cast<float>((s >> 40) & 0xFFFFFF) / 16777216.0f * 2.0f - 1.0f;
    const int block = i / 256;
    if (block == 1) u *= 100.0f;
    if (block == 2) u *= 1e-3f;
    if (block == 3 && i % 97 == 0) u *= 50.0f;
    if (block == 4) u = 0.0f;
    if (block == 5) u = 0.25f;
    if (block == 6) u = u > 0 ? u : 0.0f;
    x[static_cast<size_t>(i)] = u;
  }
  return x;
}

uint64_t fnv(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

struct Reference {
  GgmlType type;
  size_t bytes;     // of the quantized input
  uint64_t blocks;  // FNV-1a of llama.cpp's quantized blocks
  uint64_t dequant; // FNV-1a of llama.cpp's dequantized floats
};

// From llama.cpp's ggml_quantize_chunk (rows of 512, no importance matrix: the *_ref
// quantizers) and its type traits' to_float, on quant_test_input(4096).
const std::vector<Reference>& references() {
  static const std::vector<Reference> refs{
      {GgmlType::F16, 8192, 0xc9c59e464a26a8f5ull, 0xe51e60e6931d756dull},
      {GgmlType::BF16, 8192, 0x49e7394ea1a1bdcdull, 0x4af4a2417c2440e5ull},
      {GgmlType::Q4_0, 2304, 0x48be0926c1479af7ull, 0x2c8905ef9fee6d7eull},
      {GgmlType::Q4_1, 2560, 0xb65cc6a751848688ull, 0x6357601b4268ae05ull},
      {GgmlType::Q5_0, 2816, 0x7eed69758fcaf373ull, 0xc0b6b782fc502ccbull},
      {GgmlType::Q5_1, 3072, 0xdf7f2d2cd9ab11dbull, 0x0aad91ecb32b01bbull},
      {GgmlType::Q8_0, 4352, 0x45d2abb2f1912237ull, 0xc081019533e29bf0ull},
      {GgmlType::Q2_K, 1344, 0x37e54271e55afaa1ull, 0xb85eec44b8cdfe45ull},
      {GgmlType::Q3_K, 1760, 0x6fdebeecf8efa5f8ull, 0xbbc8a9f7a06cfa5eull},
      {GgmlType::Q4_K, 2304, 0x2c3a45901581007aull, 0xe4754fcf05461879ull},
      {GgmlType::Q5_K, 2816, 0xb6052c388584a132ull, 0xf163d5bd789d37baull},
      {GgmlType::Q6_K, 3360, 0xaefec1742bd177adull, 0x62c3e51e30890211ull},
  };
  return refs;
}

constexpr int kN = 4096, kRow = 512;

} // namespace

TEST_SUITE("data.ggml_quants") {
  TEST_CASE("the test input is the one the references were computed on") {
    const std::vector<float> x = quant_test_input(kN);
    CHECK(fnv(x.data(), x.size() * 4) == 0x8989097010ecacc5ull);
  }

  TEST_CASE("blocks and dequantized floats are bit-identical to llama.cpp's") {
    const std::vector<float> x = quant_test_input(kN);
    REQUIRE(!references().empty());
    for (const Reference& r : references()) {
      CAPTURE(ggml_type_name(r.type));
      const std::vector<uint8_t> q = ggml_quantize(r.type, x, kRow);
      CHECK(q.size() == r.bytes);
      CHECK(fnv(q.data(), q.size()) == r.blocks);
      const std::vector<float> y = ggml_dequantize_host(r.type, q);
      REQUIRE(y.size() == x.size());
      CHECK(fnv(y.data(), y.size() * 4) == r.dequant);
    }
  }

  TEST_CASE("the graph dequantization equals the host one bit for bit, for every type") {
    const std::vector<float> x = quant_test_input(kN);
    for (const GgmlTypeInfo& t : ggml_types()) {
      if (!t.loadable) continue;
      CAPTURE(t.name);
      const std::vector<uint8_t> q = ggml_quantize(t.type, x, kRow);
      const std::vector<float> host = ggml_dequantize_host(t.type, q);
      const Tensor blocks = Tensor::from_vector(q, Shape{static_cast<int64_t>(q.size())});
      const std::vector<float> graph =
          ggml_dequantize(blocks, t.type, Shape{kN / kRow, kRow}).to_vector<float>();
      REQUIRE(graph.size() == host.size());
      size_t differ = 0;
      for (size_t i = 0; i < host.size(); ++i) differ += std::memcmp(&graph[i], &host[i], 4) != 0;
      CHECK(differ == 0);
    }
  }

  TEST_CASE("the round trip stays within each format's resolution") {
    const std::vector<float> x = quant_test_input(kN);
    // Worst error in a 256-block relative to the block's largest magnitude: half a step, or a
    // whole one where the format's levels are lopsided (Q4_0's -8..7 meets -amax at 7/8).
    const std::vector<std::pair<GgmlType, double>> bounds{
        {GgmlType::Q8_0, 0.01},  {GgmlType::Q4_0, 0.13},  {GgmlType::Q4_1, 0.07},
        {GgmlType::Q5_0, 0.065}, {GgmlType::Q5_1, 0.035}, {GgmlType::Q6_K, 0.07},
        {GgmlType::Q5_K, 0.06},  {GgmlType::Q4_K, 0.1},   {GgmlType::Q3_K, 0.3},
        {GgmlType::Q2_K, 0.4},   {GgmlType::F16, 0.001},  {GgmlType::BF16, 0.004}};
    for (const auto& [type, bound] : bounds) {
      CAPTURE(ggml_type_name(type));
      const std::vector<float> y = ggml_dequantize_host(type, ggml_quantize(type, x, kRow));
      for (int b = 0; b < kN / 256; ++b) {
        double amax = 0, err = 0;
        for (int i = b * 256; i < (b + 1) * 256; ++i) {
          amax = std::max(amax, std::abs(double{x[static_cast<size_t>(i)]}));
          err = std::max(err,
                         std::abs(double{x[static_cast<size_t>(i)]} - y[static_cast<size_t>(i)]));
        }
        CHECK(err <= bound * amax + 1e-12);
      }
    }
  }

  TEST_CASE("bad sizes and types are errors") {
    const std::vector<float> x(100, 1.0f);
    CHECK_THROWS_AS((void)ggml_quantize(GgmlType::Q4_0, x, 100), Error); // not whole blocks
    CHECK_THROWS_AS((void)ggml_quantize(GgmlType::Q8_K, std::vector<float>(256), 256), Error);
    CHECK_THROWS_AS((void)ggml_dequantize_host(GgmlType::Q4_0, std::vector<uint8_t>(17)), Error);
    const Tensor blocks = Tensor::zeros({36}, dtypes::uint8);
    CHECK_THROWS_AS((void)ggml_dequantize(blocks, GgmlType::Q4_0, Shape{3, 32}), Error);
    CHECK_THROWS_AS((void)ggml_dequantize(blocks, GgmlType::Q4_0, Shape{1, 48}), Error);
  }
}
