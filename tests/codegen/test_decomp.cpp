// Codegen decompositions, run on the CPU through both renderers: transcendentals against libm
// (in ulps), integer division by constants against C, and bfloat16/float16 arithmetic computed
// in float32 against a C++ reference that rounds every result.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

#include "codegen_test_util.hpp"
#include "tg/decompositions.hpp"
#include "tg/ir/float_formats.hpp"

using namespace tg;
using namespace tg::codegen_test;
using cpu::test::kRenderers;

namespace {

__extension__ typedef __int128 i128;

// The CPU's caps with the transcendentals taken away, so codegen decomposes them.
RendererCaps no_transcendentals() {
  RendererCaps caps = cpu_caps();
  caps.has_transcendentals = false;
  return caps;
}

template <class T>
LoweredKernel run_with(const UOpPtr& ast, const RendererCaps& caps, const std::string& renderer,
                       std::vector<HostBuf>& bufs) {
  LoweredKernel k = lower_kernel(ast, caps);
  cpu::test::run_kernel(cpu::test::device(), renderer, k.name, k.uops, bufs, {}, k.global);
  return k;
}

// out[i] = op(in[i]) in dtype `dt`, lowered with `caps`.
template <class T>
std::vector<T> run_unary(Ops op, DType dt, const std::vector<T>& in, const std::string& renderer,
                         const RendererCaps& caps, LoweredKernel* lowered = nullptr) {
  const auto n = static_cast<int64_t>(in.size());
  auto out = buf(0, dt, n), a = buf(1, dt, n);
  auto i = rng(n, 0);
  auto ast = UOp::sink({st(out, i, UOp::make(op, dt, {ld(a, i)}))});
  std::vector<HostBuf> bufs{HostBuf::zeros<T>(in.size()), HostBuf::of(in)};
  LoweredKernel k = run_with<T>(ast, caps, renderer, bufs);
  if (lowered) *lowered = k;
  return bufs[0].as<T>();
}

// Distance in representable values (ulps); equal NaNs are 0 apart, NaN and a number far.
template <class T> int64_t ulp_diff(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  auto ord = [](T x) {
    const I i = std::bit_cast<I>(x);
    return i >= 0 ? static_cast<i128>(i) : static_cast<i128>(std::numeric_limits<I>::min()) - i;
  };
  const i128 d = ord(a) - ord(b);
  const i128 ad = d < 0 ? -d : d;
  return ad > INT64_MAX ? INT64_MAX : static_cast<int64_t>(ad);
}

struct UlpReport {
  int64_t max = 0;
  double at = 0;
  double got = 0, want = 0;
};

template <class T>
UlpReport compare(const std::vector<T>& in, const std::vector<T>& got, T (*ref)(T)) {
  UlpReport r;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t u = ulp_diff(got[i], ref(in[i]));
    if (u > r.max)
      r = {u, static_cast<double>(in[i]), static_cast<double>(got[i]),
           static_cast<double>(ref(in[i]))};
  }
  return r;
}

float exp2f_(float x) { return std::exp2(x); }
float log2f_(float x) { return std::log2(x); }
float sinf_(float x) { return std::sin(x); }
double exp2d_(double x) { return std::exp2(x); }
double log2d_(double x) { return std::log2(x); }
double sind_(double x) { return std::sin(x); }

template <class T> std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  return {T(0),
          -T(0),
          L::infinity(),
          -L::infinity(),
          L::quiet_NaN(),
          -L::quiet_NaN(),
          L::denorm_min(),
          -L::denorm_min(),
          L::min(),
          L::max(),
          L::lowest(),
          T(1),
          T(-1),
          T(0.5),
          T(2)};
}

template <class T> std::vector<T> linspace(T a, T b, size_t n) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = a + (b - a) * static_cast<T>(i) / static_cast<T>(n - 1);
  return v;
}

// Every `stride`-th bit pattern of the positive floats (denormals to the largest finite).
template <class T> std::vector<T> positive_sweep(uint64_t stride) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U top = std::bit_cast<U>(std::numeric_limits<T>::max());
  std::vector<T> v;
  for (U b = 1; b <= top && b != 0; b = (top - b < stride) ? top : b + static_cast<U>(stride)) {
    v.push_back(std::bit_cast<T>(b));
    if (b == top) break;
  }
  return v;
}

// Floats next to multiples of pi/2 (where the reduction cancels the most) up to `kmax`.
template <class T> std::vector<T> near_half_pi(int kmax) {
  std::vector<T> v;
  for (int k = 1; k <= kmax; ++k) {
    const T x = static_cast<T>(k * 1.5707963267948966192313216916398L);
    v.push_back(x);
    v.push_back(std::nextafter(x, T(0)));
    v.push_back(std::nextafter(x, T(1e30)));
  }
  return v;
}

template <class T> void append(std::vector<T>& v, const std::vector<T>& more) {
  v.insert(v.end(), more.begin(), more.end());
}

template <class T> T negate(T x) { return -x; }

} // namespace

TEST_SUITE("codegen.decomp") {

  TEST_CASE("the decomposition leaves no EXP2, LOG2 or SIN, only when asked") {
    auto out = buf(0, dtypes::float32, 4), a = buf(1, dtypes::float32, 4);
    auto i = rng(4, 0);
    auto x = ld(a, i);
    auto ast = UOp::sink({st(out, i,
                             UOp::make(Ops::EXP2, dtypes::float32, {x}) +
                                 UOp::make(Ops::LOG2, dtypes::float32, {x}) +
                                 UOp::make(Ops::SIN, dtypes::float32, {x}))});
    auto count = [](const LoweredKernel& k) {
      int n = 0;
      for (const auto& u : k.uops)
        n += u->op == Ops::EXP2 || u->op == Ops::LOG2 || u->op == Ops::SIN;
      return n;
    };
    CHECK(count(lower_kernel(ast, cpu_caps())) == 3);
    CHECK(count(lower_kernel(ast, no_transcendentals())) == 0);
    // TRANSCENDENTAL=2 forces it on a renderer that has them.
    setenv("TRANSCENDENTAL", "2", 1);
    const int forced = count(lower_kernel(ast, cpu_caps()));
    unsetenv("TRANSCENDENTAL");
    CHECK(forced == 0);
  }

  TEST_CASE("exp2 float32 within 2 ulp of libm") {
    std::vector<float> in = linspace(-150.0f, 130.0f, 1 << 20);
    append(in, specials<float>());
    append(in, {-149.5f, -149.0f, -126.0f, -126.5f, 127.0f, 127.99f, 128.0f, -150.0f, -151.0f,
                0x1p-30f, -0x1p-30f, 1e-7f});
    for (const std::string& r : kRenderers) {
      CAPTURE(r);
      auto got = run_unary(Ops::EXP2, dtypes::float32, in, r, no_transcendentals());
      UlpReport rep = compare(in, got, exp2f_);
      MESSAGE(r << " exp2 float32 max ulp " << rep.max << " at " << rep.at);
      CHECK(rep.max <= 2);
    }
  }

  TEST_CASE("log2 float32 within 2 ulp of libm") {
    std::vector<float> in = positive_sweep<float>(509);
    append(in, specials<float>());
    append(in, linspace(0.5f, 2.0f, 1 << 18));
    append(in, {-2.0f, -0x1p-140f, 0.75f, 1.5f, 0.7499999f, 1.4999999f});
    for (const std::string& r : kRenderers) {
      CAPTURE(r);
      auto got = run_unary(Ops::LOG2, dtypes::float32, in, r, no_transcendentals());
      UlpReport rep = compare(in, got, log2f_);
      MESSAGE(r << " log2 float32 max ulp " << rep.max << " at " << rep.at);
      CHECK(rep.max <= 2);
    }
  }

  TEST_CASE("sin float32 within 2 ulp of libm") {
    std::vector<float> in = linspace(-1e4f, 1e4f, 1 << 20);
    append(in, specials<float>());
    append(in, near_half_pi<float>(6400));
    append(in, {1e6f, -1e6f, 1e20f, -1e20f, 3e38f, 0x1p-140f, 1e-30f, 0.785f, 0.7854f});
    for (float x : positive_sweep<float>(4093))
      if (x > 1e4f) in.push_back(x); // large arguments up to the largest float
    for (const std::string& r : kRenderers) {
      CAPTURE(r);
      auto got = run_unary(Ops::SIN, dtypes::float32, in, r, no_transcendentals());
      UlpReport rep = compare(in, got, sinf_);
      MESSAGE(r << " sin float32 max ulp " << rep.max << " at " << rep.at << " got " << rep.got
                << " want " << rep.want);
      CHECK(rep.max <= 2);
    }
  }

  TEST_CASE("float64 exp2, log2 and sin") {
    std::vector<double> e = linspace(-1080.0, 1030.0, 1 << 18);
    append(e, specials<double>());
    std::vector<double> l = positive_sweep<double>(uint64_t{1} << 44);
    append(l, specials<double>());
    append(l, linspace(0.5, 2.0, 1 << 16));
    std::vector<double> s = linspace(-1e4, 1e4, 1 << 18);
    append(s, specials<double>());
    append(s, near_half_pi<double>(3000));
    append(s, {1e6, 1e20, -1e20, 1e300, 1.7e308});
    for (const std::string& r : kRenderers) {
      CAPTURE(r);
      UlpReport re =
          compare(e, run_unary(Ops::EXP2, dtypes::float64, e, r, no_transcendentals()), exp2d_);
      UlpReport rl =
          compare(l, run_unary(Ops::LOG2, dtypes::float64, l, r, no_transcendentals()), log2d_);
      UlpReport rs =
          compare(s, run_unary(Ops::SIN, dtypes::float64, s, r, no_transcendentals()), sind_);
      MESSAGE(r << " float64 max ulp: exp2 " << re.max << " log2 " << rl.max << " sin " << rs.max
                << " (at " << rs.at << ")");
      CHECK(re.max <= 2);
      CHECK(rl.max <= 2);
      CHECK(rs.max <= 4);
    }
  }
}
