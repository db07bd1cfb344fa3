// Quantized matmuls as int8 dot products (tg/ggml_int8.hpp) and the op under them, DOT4:
// against a host loop, through the renderer that spells it (vpdpbusd on a CPU with
// AVX512-VNNI) and through the C renderer, which gets it decomposed; the Q4_0 product against
// the float32 product of the same weights dequantized.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/ggml_int8.hpp"
#include "tg/ggml_quants.hpp"
#include "tg/runner_cache.hpp"

using namespace tg;

namespace {

uint64_t next(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

int32_t dot4_ref(int32_t acc, int32_t a, int32_t b) {
  uint32_t r = static_cast<uint32_t>(acc);
  for (int k = 0; k < 4; ++k) {
    const int32_t ua = static_cast<int32_t>((static_cast<uint32_t>(a) >> (8 * k)) & 0xff);
    const int32_t sb =
        static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(b) >> (8 * k)));
    r += static_cast<uint32_t>(ua * sb);
  }
  return static_cast<int32_t>(r);
}

} // namespace

TEST_SUITE("data.ggml_int8") {
  TEST_CASE("DOT4 is four byte products added to the accumulator, spelled or decomposed") {
    uint64_t s = 0x243F6A8885A308D3ull;
    // Extremes first (0xff bytes read as 255 and as -1, 0x80 as 128 and -128, the sum
    // wrapping), then random words; a few lengths so the vectors have whole and partial pieces.
    for (int64_t n : {1, 5, 16, 40, 1000}) {
      CAPTURE(n);
      std::vector<int32_t> acc, a, b;
      for (int64_t i = 0; i < n; ++i) {
        acc.push_back(i == 0 ? INT32_MAX : static_cast<int32_t>(next(s)));
        a.push_back(i == 0   ? -1
                    : i == 1 ? static_cast<int32_t>(0x80808080u)
                             : static_cast<int32_t>(next(s)));
        b.push_back(i == 0   ? static_cast<int32_t>(0x7f7f7f7fu)
                    : i == 1 ? static_cast<int32_t>(0x80808080u)
                             : static_cast<int32_t>(next(s)));
      }
      std::vector<int32_t> want;
      for (int64_t i = 0; i < n; ++i) want.push_back(dot4_ref(acc[i], a[i], b[i]));
      for (const char* dev : {"CPU", "CPU:C"}) {
        CAPTURE(dev);
        const Tensor ta = Tensor::from_vector(a).to(dev), tb = Tensor::from_vector(b).to(dev);
        const Tensor tc = Tensor::from_vector(acc).to(dev);
        CHECK(tc.dot4(ta, tb).to_vector<int32_t>() == want);
      }
    }
    // The C renderer has no DOT4: codegen decomposes it there.
    CHECK(!renderer_caps("CPU:C").has_dot4);
  }

  TEST_CASE("DOT4 broadcasts, and refuses operands that are not int32") {
    const Tensor acc = Tensor::from_vector(std::vector<int32_t>{10, 20}).reshape({2, 1});
    const Tensor a = Tensor::from_vector(std::vector<int32_t>{0x01010101, 0x02000000, 3});
    const Tensor b = Tensor::from_vector(std::vector<int32_t>{0x01020304}).reshape({1, 1});
    // a's bytes times b's (4, 3, 2, 1 from the lowest): 10, 2, 12.
    CHECK(acc.dot4(a, b).to_vector<int32_t>() == std::vector<int32_t>{20, 12, 22, 30, 22, 32});
    CHECK_THROWS_WITH_AS(acc.dot4(a.cast(dtypes::int64), b),
                         doctest::Contains("dot4: every operand must be int32"), Error);
  }

  TEST_CASE("Q4_0 and Q8_0 matmuls through int8 activations: llama.cpp's arithmetic") {
    const int64_t rows = 96, cols = 256;
    uint64_t s = 0x13198A2E03707344ull;
    std::vector<float> w(static_cast<size_t>(rows * cols)), x(static_cast<size_t>(3 * cols));
    for (float& v : w) v = static_cast<float>(static_cast<int64_t>(next(s) % 2001) - 1000) / 1000.f;
    for (float& v : x) v = static_cast<float>(static_cast<int64_t>(next(s) % 2001) - 1000) / 250.f;
    x[7] = 40.f; // an outlier in one block, as activations have
    for (int i = 32; i < 64; ++i) x[static_cast<size_t>(i)] = 0.f; // an all-zero block
    for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q8_0}) {
      CAPTURE(ggml_type_name(type));
      const std::vector<uint8_t> q = ggml_quantize(type, w, cols);
      const Tensor blocks = Tensor::from_vector(q, Shape{static_cast<int64_t>(q.size())});
      DotWords words = ggml_dot_words(blocks, type, rows, cols);
      words.qs = words.qs.contiguous().realize();
      words.d = words.d.contiguous().realize();
      const Tensor tx = Tensor::from_vector(x, Shape{3, 1, cols});
      const Tensor dense = ggml_dequantize(blocks, type, Shape{rows, cols});
      const std::vector<float> want = tx.linear(dense).to_vector<float>();
      // The same arithmetic on the host: x quantized per 32 as quantize_row_q8_0 (d = amax / 127,
      // q = x * (1 / d) rounded to nearest even), each block's integer products summed exactly
      // and scaled by both blocks' scales.
      const std::vector<float> wf = ggml_dequantize_host(type, q); // q * d_w
      std::vector<double> exact;
      for (int64_t t = 0; t < 3; ++t)
        for (int64_t r = 0; r < rows; ++r) {
          double sum = 0;
          for (int64_t b = 0; b < cols / 32; ++b) {
            const float* xb = &x[static_cast<size_t>(t * cols + b * 32)];
            float amax = 0;
            for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(xb[i]));
            const float d = amax / 127.f, inv = d != 0 ? 1.f / d : 0.f;
            double block = 0;
            for (int i = 0; i < 32; ++i)
              block += static_cast<double>(wf[static_cast<size_t>(r * cols + b * 32 + i)]) *
                       std::nearbyint(xb[i] * inv);
            sum += block * d;
          }
          exact.push_back(sum);
        }
      for (const char* dev : {"CPU", "CPU:C"}) {
        CAPTURE(dev);
        DotWords on = words;
        on.qs = on.qs.to(dev);
        on.d = on.d.to(dev);
        const Tensor y = ggml_linear_int8(tx.to(dev), on);
        CHECK(y.shape() == Shape{3, 1, rows});
        const std::vector<float> got = y.to_vector<float>();
        double err = 0, err_exact = 0, scale = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          err = std::max(err, std::abs(static_cast<double>(got[i] - want[i])));
          err_exact = std::max(err_exact, std::abs(got[i] - exact[i]));
          scale = std::max(scale, std::abs(static_cast<double>(want[i])));
        }
        MESSAGE(ggml_type_name(type)
                << " on " << std::string(dev) << ": max |int8 - float32| = " << err
                << ", |int8 - host int8| = " << err_exact << ", outputs up to " << scale);
        CHECK(err_exact <= 1e-5 * scale); // float32 summation order only
        // The activations' rounding (one block holds an outlier 10x its neighbours): measured
        // Q4_0 0.86 of outputs up to 64.
        CHECK(err <= 0.03 * scale);
      }
    }
  }

  TEST_CASE("the DOT4 words and the int8 matmul refuse what does not fit") {
    const Tensor blocks = Tensor::zeros({36}, dtypes::uint8);
    CHECK_THROWS_WITH_AS(ggml_dot_words(blocks, GgmlType::Q4_0, 1, 48),
                         doctest::Contains("not whole rows"), Error);
    CHECK_THROWS_WITH_AS(ggml_dot_words(blocks, GgmlType::Q4_0, 2, 64),
                         doctest::Contains("36 bytes are not"), Error);
    CHECK_THROWS_WITH_AS(ggml_dot_words(blocks.cast(dtypes::int8), GgmlType::Q4_0, 1, 64),
                         doctest::Contains("must be uint8"), Error);
    CHECK_THROWS_WITH_AS(ggml_dot_words(blocks, GgmlType::Q4_1, 1, 64),
                         doctest::Contains("Q4_1 has no int8 dot-product layout"), Error);
    CHECK_THROWS_WITH_AS(ggml_dot_words(blocks, GgmlType::Q8_0, 1, 64),
                         doctest::Contains("36 bytes are not the 2 Q8_0 blocks"), Error);
    const DotWords w = ggml_dot_words(blocks, GgmlType::Q4_0, 1, 64);
    CHECK_THROWS_WITH_AS(ggml_linear_int8(Tensor::zeros({2, 32}), w),
                         doctest::Contains("64 columns"), Error);
    CHECK_THROWS_WITH_AS(ggml_linear_int8(Tensor::zeros({2, 64}, dtypes::float16), w),
                         doctest::Contains("must be float32"), Error);
  }
}
