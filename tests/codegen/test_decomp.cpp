// Codegen decompositions, run on the CPU through both renderers: transcendentals against libm
// (in ulps), integer division by constants against C, and bfloat16/float16 arithmetic computed
// in float32 against a C++ reference that rounds every result.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "codegen_test_util.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/decompositions.hpp"
#include "tg/ir/float_formats.hpp"
#include "tg/knobs.hpp"

using namespace tg;
using namespace tg::codegen_test;

namespace {

__extension__ typedef __int128 i128;

// The CPU's caps with the transcendentals taken away, so codegen decomposes them.
RendererCaps no_transcendentals() {
  RendererCaps caps = target_caps();
  caps.has_transcendentals = false;
  return caps;
}

template <class T>
LoweredKernel run_with(const UOpPtr& ast, const RendererCaps& caps, const std::string& renderer,
                       std::vector<HostBuf>& bufs) {
  // No Opts: these tests look at the decompositions on scalar code (after an upcast, a value
  // divided by a constant is a vector IDIV, which stays for the compiler to strength-reduce).
  LoweredKernel k = lower_kernel_with_opts(ast, caps, {});
  run_kernel(renderer, k, bufs);
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
    RendererCaps with = target_caps();
    with.has_transcendentals = true;
    CHECK(count(lower_kernel(ast, with)) == 3);
    CHECK(count(lower_kernel(ast, no_transcendentals())) == 0);
    // TRANSCENDENTAL=2 forces it on a renderer that has them.
    int forced = -1;
    {
      tg::Context force{{"TRANSCENDENTAL", 2}};
      forced = count(lower_kernel(ast, with));
    }
    CHECK(forced == 0);
    // The CPU's LLVM renderer decomposes them: LLVM would call libm once per vector lane.
    if (on_cpu()) CHECK(count(lower_kernel(ast, cpu_caps())) == 0);
  }

  TEST_CASE("exp2 float32 within 2 ulp of libm") {
    std::vector<float> in = linspace(-150.0f, 130.0f, 1 << 20);
    append(in, specials<float>());
    append(in, {-149.5f, -149.0f, -126.0f, -126.5f, 127.0f, 127.99f, 128.0f, -150.0f, -151.0f,
                0x1p-30f, -0x1p-30f, 1e-7f});
    for (const std::string& r : renderers()) {
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
    for (const std::string& r : renderers()) {
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
    append(in, {1e6f, -1e6f, 1e20f, -1e20f, 3e38f, 0x1p-140f, 1e-30f, 0.785f, 0.7854f,
                std::ldexp(16367173.0f, 72), -std::ldexp(16367173.0f, 72)}); // the float32 worst
                                                                             // case of reduction
    for (float x : positive_sweep<float>(4093))
      if (x > 1e4f) in.push_back(x); // large arguments up to the largest float
    for (const std::string& r : renderers()) {
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
    std::vector<double> big; // Payne-Hanek's range: every 2^43rd pattern from 2^20 up
    for (double x : positive_sweep<double>(uint64_t{1} << 43))
      if (x >= 0x1p20) big.push_back(x);
    // The double closest to a multiple of pi/2 (Muller's worst case for the reduction).
    big.push_back(std::ldexp(6381956970095103.0, 797));
    big.push_back(-std::ldexp(6381956970095103.0, 797));
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      UlpReport re =
          compare(e, run_unary(Ops::EXP2, dtypes::float64, e, r, no_transcendentals()), exp2d_);
      UlpReport rl =
          compare(l, run_unary(Ops::LOG2, dtypes::float64, l, r, no_transcendentals()), log2d_);
      UlpReport rs =
          compare(s, run_unary(Ops::SIN, dtypes::float64, s, r, no_transcendentals()), sind_);
      auto got_big = run_unary(Ops::SIN, dtypes::float64, big, r, no_transcendentals());
      UlpReport rb = compare(big, got_big, sind_);
      double abs_err = 0;
      for (size_t t = 0; t < big.size(); ++t)
        abs_err = std::max(abs_err, std::abs(got_big[t] - std::sin(big[t])));
      MESSAGE(r << " float64 max ulp: exp2 " << re.max << " log2 " << rl.max << " sin " << rs.max
                << " (at " << rs.at << "), sin above 2^20 " << rb.max << " (at " << rb.at
                << "), absolute " << abs_err);
      CHECK(re.max <= 2);
      CHECK(rl.max <= 2);
      CHECK(rs.max <= 2);
      CHECK(rb.max <= 2);
      CHECK(abs_err <= 0x1p-52);
    }
  }
}

namespace {

int count_ops(const LoweredKernel& k, std::initializer_list<Ops> ops) {
  int n = 0;
  for (const auto& u : k.uops)
    for (Ops o : ops) n += u->op == o;
  return n;
}

// out[(d_index)*n + i] = x[i] / d and mod[...] = x[i] % d for every divisor, in one kernel.
template <class T>
void check_division(DType dt, const std::vector<T>& xs, const std::vector<int64_t>& divisors,
                    bool expect_decomposed) {
  const auto n = static_cast<int64_t>(xs.size());
  const auto nd = static_cast<int64_t>(divisors.size());
  auto q = buf(0, dt, n * nd), r = buf(1, dt, n * nd), x = buf(2, dt, n);
  auto i = rng(n, 0);
  std::vector<UOpPtr> stores;
  for (int64_t j = 0; j < nd; ++j) {
    auto v = ld(x, i);
    auto d = UOp::const_(dt, divisors[j]);
    stores.push_back(st(q, i + j * n, v->alu(Ops::IDIV, {d})));
    stores.push_back(st(r, i + j * n, v->alu(Ops::MOD, {d})));
  }
  auto ast = UOp::sink(stores);
  for (const std::string& rn : renderers()) {
    CAPTURE(rn);
    std::vector<HostBuf> bufs{HostBuf::zeros<T>(n * nd), HostBuf::zeros<T>(n * nd),
                              HostBuf::of(xs)};
    LoweredKernel k = run_with<T>(ast, target_caps(), rn, bufs);
    if (expect_decomposed) CHECK(count_ops(k, {Ops::IDIV, Ops::MOD}) == 0);
    auto qo = bufs[0].as<T>(), ro = bufs[1].as<T>();
    int64_t bad = 0;
    for (int64_t j = 0; j < nd; ++j)
      for (int64_t t = 0; t < n; ++t) {
        const T want_q = static_cast<T>(xs[t] / static_cast<T>(divisors[j]));
        const T want_r = static_cast<T>(xs[t] % static_cast<T>(divisors[j]));
        if (qo[j * n + t] != want_q || ro[j * n + t] != want_r) {
          if (bad++ < 5)
            FAIL_CHECK(+xs[t] << " / " << divisors[j] << ": got " << +qo[j * n + t] << " rem "
                              << +ro[j * n + t] << ", C gives " << +want_q << " rem " << +want_r);
        }
      }
    CHECK(bad == 0);
  }
}

std::vector<int64_t> iota_divisors(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t d = lo; d <= hi; ++d) v.push_back(d);
  return v;
}

} // namespace

TEST_SUITE("codegen.decomp") {

  TEST_CASE("int8 and uint8: every numerator by every divisor 1..127") {
    std::vector<int8_t> s8(256);
    std::vector<uint8_t> u8(256);
    for (int v = 0; v < 256; ++v) {
      s8[v] = static_cast<int8_t>(v - 128);
      u8[v] = static_cast<uint8_t>(v);
    }
    check_division(dtypes::int8, s8, iota_divisors(1, 127), true);
    check_division(dtypes::uint8, u8, iota_divisors(1, 127), true);
  }

  TEST_CASE("int32 and uint32: random numerators, many divisors") {
    std::mt19937_64 gen(1234);
    std::vector<int32_t> s32{0, 1, -1, INT32_MIN, INT32_MAX, INT32_MIN + 1, -7, 7};
    std::vector<uint32_t> u32{0, 1, UINT32_MAX, 0x80000000u, 0x7fffffffu};
    for (int t = 0; t < 4000; ++t) {
      s32.push_back(static_cast<int32_t>(gen()));
      u32.push_back(static_cast<uint32_t>(gen()));
      s32.push_back(static_cast<int32_t>(gen() % 2001) - 1000);
    }
    std::vector<int64_t> ds = iota_divisors(1, 40);
    for (int64_t d : {64, 100, 127, 128, 255, 641, 1000, 4096, 6700417, 65537, 1000000007,
                      0x40000000, 2147483647})
      ds.push_back(d);
    check_division(dtypes::int32, s32, ds, true);
    // uint32: the magic product of a full-range numerator can need 65 bits; those divisions
    // stay IDIV, the rest must still be exact.
    check_division(dtypes::uint32, u32, ds, false);
  }

  TEST_CASE("an index with a small range divides without widening, and the knob turns it off") {
    const int64_t n = 1000;
    auto out = buf(0, dtypes::int32, n), i = rng(n, 0);
    auto ast = UOp::sink({st(out, i, (i / 7 * 100 + i % 7 + (i + 3) / 16)->cast(dtypes::int32))});
    for (const std::string& rn : renderers()) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(n)};
      LoweredKernel k = run_with<int32_t>(ast, target_caps(), rn, bufs);
      CHECK(count_ops(k, {Ops::IDIV, Ops::MOD}) == 0);
      CHECK(count_ops(k, {Ops::CAST}) == 1); // no widening casts, only the output's
      auto o = bufs[0].as<int32_t>();
      for (int64_t t = 0; t < n; ++t) REQUIRE(o[t] == t / 7 * 100 + t % 7 + (t + 3) / 16);
    }
    LoweredKernel off;
    {
      tg::Context disable{{"DISABLE_FAST_IDIV", 1}};
      off = lower_kernel(ast, target_caps());
    }
    CHECK(count_ops(off, {Ops::IDIV, Ops::MOD}) > 0);
  }
}

namespace {

double widen(uint16_t b, DType dt) {
  return dt == dtypes::bfloat16 ? bf16_to_float(b) : half_to_float(b);
}
// One op computed in float32 and rounded to `dt`, as the kernel must.
double rounded(double f32_result, DType dt) {
  return as_double(cast_const(static_cast<double>(static_cast<float>(f32_result)), dt));
}

// Bit patterns of narrow floats: every finite and special value of the format, shuffled.
std::vector<uint16_t> narrow_patterns(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = static_cast<uint16_t>(gen());
  return v;
}

// Distance in values of the 16-bit format between two bit patterns (NaNs equal each other).
int64_t narrow_ulp(uint16_t a, uint16_t b, DType dt) {
  const bool na = std::isnan(widen(a, dt)), nb = std::isnan(widen(b, dt));
  if (na || nb) return na && nb ? 0 : INT64_MAX;
  auto ord = [](uint16_t x) { return x & 0x8000 ? -int64_t{x & 0x7fff} : int64_t{x}; };
  return std::abs(ord(a) - ord(b));
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

} // namespace

TEST_SUITE("codegen.decomp") {

  TEST_CASE("a*b+c in bfloat16 and float16 rounds every op like cast_const") {
    const int64_t n = 1 << 16;
    for (DType dt : {dtypes::bfloat16, dtypes::float16}) {
      for (bool half_hw : {true, false}) {
        if (dt == dtypes::bfloat16 && !half_hw) continue;
        if (half_hw && !target_caps().supports_half) continue; // no float16 arithmetic there
        CAPTURE(dt.name());
        CAPTURE(half_hw);
        RendererCaps caps = target_caps();
        caps.supports_half = half_hw;
        auto out = buf(0, dt, n), a = buf(1, dt, n), b = buf(2, dt, n), c = buf(3, dt, n);
        auto i = rng(n, 0);
        auto ast = UOp::sink({st(out, i, ld(a, i) * ld(b, i) + ld(c, i))});
        auto av = narrow_patterns(n, 1), bv = narrow_patterns(n, 2), cv = narrow_patterns(n, 3);
        for (const std::string& rn : renderers()) {
          CAPTURE(rn);
          std::vector<HostBuf> bufs{HostBuf::zeros<uint16_t>(n), HostBuf::of(av), HostBuf::of(bv),
                                    HostBuf::of(cv)};
          LoweredKernel k = run_with<uint16_t>(ast, caps, rn, bufs);
          // bfloat16, and float16 without half arithmetic, leave no narrow ALU.
          bool narrow_alu = false;
          for (const auto& u : k.uops)
            narrow_alu |= GroupOp::ALU.contains(u->op) && u->dtype.scalar_type == dt.scalar_type;
          CHECK(narrow_alu == (dt == dtypes::float16 && half_hw));
          auto o = bufs[0].as<uint16_t>();
          int64_t bad = 0;
          for (int64_t t = 0; t < n; ++t) {
            const double x = widen(av[t], dt), y = widen(bv[t], dt), z = widen(cv[t], dt);
            const double want = rounded(rounded(x * y, dt) + z, dt);
            const double got = widen(o[t], dt);
            if (!same(got, want) && bad++ < 5)
              FAIL_CHECK(x << " * " << y << " + " << z << ": got " << got << " want " << want);
          }
          CHECK(bad == 0);
        }
      }
    }
  }

  TEST_CASE("a bfloat16 sum accumulates in float32 and rounds once") {
    const int64_t R = 16, C = 300;
    auto out = buf(0, dtypes::bfloat16, R), x = buf(1, dtypes::bfloat16, R * C);
    auto i = rng(R, 0), j = rng(C, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * C + j), {j}))});
    std::vector<uint16_t> xv(R * C);
    for (int64_t t = 0; t < R * C; ++t) xv[t] = float_to_bf16(1.0 + static_cast<double>(t % 7) / 8);
    for (const std::string& rn : renderers()) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<uint16_t>(R), HostBuf::of(xv)};
      run_with<uint16_t>(ast, target_caps(), rn, bufs);
      auto o = bufs[0].as<uint16_t>();
      for (int64_t y = 0; y < R; ++y) {
        float acc = 0;
        for (int64_t t = 0; t < C; ++t) acc += static_cast<float>(bf16_to_float(xv[y * C + t]));
        CHECK(o[y] == float_to_bf16(acc));
      }
    }
  }

  TEST_CASE("casts to and from bfloat16 and float16 round like cast_const") {
    // float32 and float64 sources: random bit patterns, ties, NaNs, infinities, denormals.
    std::mt19937_64 gen(7);
    std::vector<float> fs;
    std::vector<double> ds;
    for (int t = 0; t < 1 << 16; ++t) {
      fs.push_back(std::bit_cast<float>(static_cast<uint32_t>(gen())));
      ds.push_back(std::bit_cast<double>(gen()));
      ds.push_back(static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(gen()))) *
                   (1 + 0x1p-30));
    }
    for (uint32_t b : {0x3f808000u, 0x3f818000u, 0x3f80c000u, 0x7f7fffffu, 0x7f800000u, 0xff800000u,
                       0x7fc00001u, 0xffa00000u, 0x00000001u, 0x80008000u, 0x477ff000u, 0x477fe000u,
                       0x33000000u, 0x33000001u})
      fs.push_back(std::bit_cast<float>(b));
    for (float f : fs) ds.push_back(f);
    for (DType to : {dtypes::bfloat16, dtypes::float16}) {
      CAPTURE(to.name());
      for (const std::string& rn : renderers()) {
        CAPTURE(rn);
        auto run_cast = [&](auto src, DType from) {
          using T = typename decltype(src)::value_type;
          const auto n = static_cast<int64_t>(src.size());
          auto out = buf(0, to, n), wide = buf(1, dtypes::float32, n), a = buf(2, from, n);
          auto i = rng(n, 0);
          auto v = ld(a, i)->cast(to);
          auto ast = UOp::sink({st(out, i, v), st(wide, i, v->cast(dtypes::float32))});
          std::vector<HostBuf> bufs{HostBuf::zeros<uint16_t>(n), HostBuf::zeros<float>(n),
                                    HostBuf::of(src)};
          run_with<T>(ast, target_caps(), rn, bufs);
          auto o = bufs[0].as<uint16_t>();
          auto back = bufs[1].as<float>();
          int64_t bad = 0;
          for (int64_t t = 0; t < n; ++t) {
            const double want = as_double(cast_const(static_cast<double>(src[t]), to));
            if (!same(widen(o[t], to), want) && bad++ < 5)
              FAIL_CHECK(from.name()
                         << " " << src[t] << " -> " << widen(o[t], to) << ", want " << want);
            // The narrow value widened back to float32: exact.
            if (!same(back[t], widen(o[t], to)) && bad++ < 5)
              FAIL_CHECK(to.name() << " " << widen(o[t], to) << " -> float32 " << back[t]);
          }
          CHECK(bad == 0);
          return n;
        };
        run_cast(fs, dtypes::float32);
        run_cast(ds, dtypes::float64);
      }
    }
  }
}

TEST_SUITE("codegen.decomp") {
  TEST_CASE("bfloat16 and float16 transcendentals go through float32") {
    // Every bit pattern of the format; the result is libm's float32 value rounded to the
    // format, give or take one ulp of the format (the float32 value is within 1 ulp).
    std::vector<uint16_t> in(1 << 16);
    for (size_t t = 0; t < in.size(); ++t) in[t] = static_cast<uint16_t>(t);
    for (DType dt : {dtypes::bfloat16, dtypes::float16}) {
      using Fn = float (*)(float);
      for (auto [op, f] :
           {std::pair<Ops, Fn>{Ops::EXP2, exp2f_}, std::pair<Ops, Fn>{Ops::LOG2, log2f_},
            std::pair<Ops, Fn>{Ops::SIN, sinf_}}) {
        CAPTURE(dt.name());
        CAPTURE(op_name(op));
        for (const std::string& rn : renderers()) {
          CAPTURE(rn);
          auto got = run_unary(op, dt, in, rn, no_transcendentals());
          int64_t worst = 0;
          for (size_t t = 0; t < in.size(); ++t) {
            const double want = as_double(cast_const(f(static_cast<float>(widen(in[t], dt))), dt));
            const uint16_t wb = dt == dtypes::bfloat16 ? float_to_bf16(want) : float_to_half(want);
            worst = std::max(worst, narrow_ulp(got[t], wb, dt));
          }
          CHECK(worst <= 1);
        }
      }
    }
  }
}
