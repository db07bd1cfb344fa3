// The kernel optimizer, expansion and devectorize: hand-built kernel ASTs lowered with the
// heuristic, with explicit Opts, and for a renderer without vectors (supports_float4 false),
// run through both CPU renderers against C++ loops. Values are small integers, so sums are
// exact in any order the lanes combine them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>

#include "codegen_test_util.hpp"
#include "tg/error.hpp"

using namespace tg;
using namespace tg::codegen_test;

namespace {

std::vector<float> pattern(size_t n, int mod, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + 3) % mod) - offset;
  return v;
}

RendererCaps caps_with_float4(bool float4) {
  RendererCaps c = target_caps();
  c.supports_float4 = float4;
  return c;
}

bool has_vectors(const LoweredKernel& k) {
  for (const auto& u : k.uops)
    if (u->dtype.count > 1) return true;
  return false;
}

// Vector loads/stores of global memory (not registers) in the list.
size_t vector_accesses(const LoweredKernel& k) {
  size_t n = 0;
  for (const auto& u : k.uops) {
    const bool global =
        !u->src.empty() && u->src[0]->op == Ops::INDEX && u->src[0]->src[0]->op == Ops::PARAM;
    if (u->op == Ops::LOAD && global && u->dtype.count > 1) ++n;
    if (u->op == Ops::STORE && global && u->src[1]->dtype.count > 1) ++n;
  }
  return n;
}

struct Config {
  std::string what;
  std::optional<std::vector<Opt>> opts; // nullopt: the heuristic (NOOPT=1: none)
  bool float4 = true;
};

using MakeBufs = std::function<std::vector<HostBuf>()>;
using Check = std::function<void(const std::vector<HostBuf>&)>;

// Buffers of a kernel: a zeroed float32 output of n elements, then the inputs in order.
template <class... Inputs> MakeBufs zeros_then(int64_t n, const Inputs&... inputs) {
  return [n, ins = std::make_tuple(inputs...)] {
    std::vector<HostBuf> bufs{HostBuf::zeros<float>(n)};
    std::apply([&](const auto&... in) { (bufs.push_back(HostBuf::of(in)), ...); }, ins);
    return bufs;
  };
}

// The output (buffer 0) equals `ref` exactly.
Check equals(std::vector<float> ref) {
  return [ref = std::move(ref)](const std::vector<HostBuf>& bufs) {
    REQUIRE(bufs[0].as<float>() == ref);
  };
}

// Runs `ast` in four configurations (heuristic / explicit Opts, with / without vectors) on both
// renderers, checking the results each time; returns the lowered kernels of the first renderer.
std::vector<LoweredKernel> run_all(const UOpPtr& ast, const std::vector<Opt>& opts,
                                   const MakeBufs& make, const Check& check,
                                   std::vector<int64_t> vars = {}) {
  const Config configs[] = {{"heuristic", std::nullopt, true},
                            {"heuristic, no vectors", std::nullopt, false},
                            {"explicit opts", opts, true},
                            {"explicit opts, no vectors", opts, false}};
  std::vector<LoweredKernel> out;
  for (const std::string& r : renderers()) {
    for (const Config& cfg : configs) {
      CAPTURE(r);
      CAPTURE(cfg.what);
      const RendererCaps caps = caps_with_float4(cfg.float4);
      LoweredKernel k =
          cfg.opts ? lower_kernel_with_opts(ast, caps, *cfg.opts) : lower_kernel(ast, caps);
      CAPTURE(k.name);
      if (!cfg.float4) CHECK_FALSE(has_vectors(k));
      std::vector<HostBuf> bufs = make();
      run_kernel(r, k, bufs, vars);
      check(bufs);
      if (r == renderers()[0]) out.push_back(std::move(k));
    }
  }
  return out;
}

// A 3x3 convolution without padding, summed over (ci, ky, kx) in that order: out (B, CO, H, W)
// from in (B, CI, HP, WP) and w (CO, CI, 3, 3).
std::vector<float> conv3x3_ref(const std::vector<float>& in, const std::vector<float>& w, int64_t B,
                               int64_t CO, int64_t CI, int64_t H, int64_t W, int64_t HP,
                               int64_t WP) {
  std::vector<float> out(static_cast<size_t>(B * CO * H * W));
  for (int64_t n = 0; n < B; ++n)
    for (int64_t c = 0; c < CO; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          float acc = 0;
          for (int64_t i = 0; i < CI; ++i)
            for (int64_t a = 0; a < 3; ++a)
              for (int64_t t = 0; t < 3; ++t)
                acc += in[static_cast<size_t>(((n * CI + i) * HP + y + a) * WP + x + t)] *
                       w[static_cast<size_t>(c * CI * 9 + i * 9 + a * 3 + t)];
          out[static_cast<size_t>(((n * CO + c) * H + y) * W + x)] = acc;
        }
  return out;
}

// out[j] = sum over k of x[k] * w[j, k]: out (J), x (K) and w (J, K) in buffers 0, 1, 2.
UOpPtr matvec_ast(int64_t J, int64_t K) {
  auto out = buf(0, dtypes::float32, J), x = buf(1, dtypes::float32, K),
       w = buf(2, dtypes::float32, J * K);
  auto j = rng(J, 0), k = rng(K, 1, AxisType::Reduce);
  return UOp::sink({st(out, j, reduce(Ops::ADD, ld(x, k) * ld(w, j * K + k), {k}))});
}

Opt upcast(int axis, int amount) { return {OptOp::UPCAST, axis, amount}; }
Opt unroll(int axis, int amount) { return {OptOp::UNROLL, axis, amount}; }

} // namespace

TEST_SUITE("codegen.opt") {

  TEST_CASE("elementwise on (64, 64): float4 loads and stores") {
    const int64_t R = 64, C = 64;
    auto out = buf(0, dtypes::float32, R * C), a = buf(1, dtypes::float32, R * C),
         b = buf(2, dtypes::float32, R * C);
    auto i = rng(R, 0), j = rng(C, 1);
    auto two = UOp::const_(dtypes::float32, 2.0);
    auto ast = UOp::sink({st(out, i * C + j, ld(a, i * C + j) * two + ld(b, i * C + j))});
    auto av = pattern(R * C, 13, 6), bv = pattern(R * C, 5, 2);
    auto ks = run_all(ast, {upcast(0, 4), upcast(1, 4)}, zeros_then(R * C, av, bv),
                      [&](const std::vector<HostBuf>& bufs) {
                        auto o = bufs[0].as<float>();
                        for (int64_t t = 0; t < R * C; ++t) REQUIRE(o[t] == av[t] * 2 + bv[t]);
                      });
    if (!noopt() && on_cpu()) {
      // A whole vector register of lanes (4 at least): two vector loads, one vector store.
      const int64_t lanes = std::max<int64_t>(target_caps().vector_lanes, 4);
      CHECK(ks[0].name == "E_64_" + std::to_string(C / lanes) + "_" + std::to_string(lanes));
      CHECK(ks[0].global == std::array<int64_t, 3>{64, C / lanes, 1});
      CHECK(vector_accesses(ks[0]) == 3);
    }
    CHECK(ks[2].name == "E_16_16_4_4");
    CHECK(vector_accesses(ks[2]) == 3 * 4); // four rows of float4 per buffer
    CHECK(vector_accesses(ks[3]) == 0);
  }

  TEST_CASE("elementwise on the CPU: a contiguous last axis goes a whole register wide") {
    // out[i, j] = exp2(a[i, j]): every access reads j contiguously (or not at all), so j is
    // upcast by the register's lanes (16 with AVX-512, 8 with AVX2): the decomposed exp2's
    // polynomial then runs on whole registers (exp over 4M floats 3.5x faster than with 4).
    // A transposed read keeps the upcast of 4, and so does a GPU.
    const int64_t R = 64, C = 64;
    auto out = buf(0, dtypes::float32, R * C), a = buf(1, dtypes::float32, R * C),
         t = buf(2, dtypes::float32, R * C);
    auto i = rng(R, 0), j = rng(C, 1);
    auto ast =
        UOp::sink({st(out, i * C + j, UOp::make(Ops::EXP2, dtypes::float32, {ld(a, i * C + j)}))});
    auto transposed = UOp::sink({st(out, i * C + j, ld(a, j * R + i) + ld(t, i * C + j))});
    RendererCaps avx512 = cpu_caps(), avx2 = cpu_caps(), gpu = cpu_caps();
    avx512.vector_lanes = 16, avx2.vector_lanes = 8;
    gpu.has_local = true;
    if (!noopt()) {
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(1, 16)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx2) == std::vector<Opt>{upcast(1, 8)});
      CHECK(hand_coded_optimizations(simplify_kernel(transposed), avx512) ==
            std::vector<Opt>{upcast(1, 4)});
      const auto g = hand_coded_optimizations(simplify_kernel(ast), gpu);
      CHECK(std::find(g.begin(), g.end(), upcast(1, 4)) != g.end());
    }
    auto av = pattern(R * C, 9, 4);
    run_all(ast, {upcast(1, 16)}, zeros_then(R * C, av), [&](const std::vector<HostBuf>& bufs) {
      auto o = bufs[0].as<float>();
      for (int64_t y = 0; y < R; ++y)
        for (int64_t x = 0; x < C; ++x)
          REQUIRE(o[y * C + x] == doctest::Approx(std::exp2(av[y * C + x])));
    });
  }

  TEST_CASE("elementwise on the CPU: no upcast of an axis the store is strided along") {
    // A norm's output stored channels-last: out[n, y, x, c] = a[n, c, y, x] * s[c] + b[c]. s and b
    // broadcast over n, y and x, but along those the store is strided: upcast, each lane would
    // write its own cache line. Only c, the store's contiguous axis, may be upcast.
    const int64_t N = 8, C = 16, H = 4, W = 4;
    auto out = buf(0, dtypes::float32, N * H * W * C), a = buf(1, dtypes::float32, N * C * H * W),
         sc = buf(2, dtypes::float32, C), bi = buf(3, dtypes::float32, C);
    auto n = rng(N, 0), y = rng(H, 1), x = rng(W, 2), c = rng(C, 3);
    auto ast = UOp::sink({st(out, ((n * H + y) * W + x) * C + c,
                             ld(a, ((n * C + c) * H + y) * W + x) * ld(sc, c) + ld(bi, c))});
    if (!noopt())
      for (const Opt& o : hand_coded_optimizations(simplify_kernel(ast), cpu_caps())) {
        CAPTURE(o.str());
        CHECK((o.op != OptOp::UPCAST || o.axis == 3));
      }
    auto av = pattern(N * C * H * W, 11, 5), sv = pattern(C, 5, 2), bv = pattern(C, 7, 3);
    run_all(ast, {upcast(3, 4)}, zeros_then(N * H * W * C, av, sv, bv),
            [&](const std::vector<HostBuf>& bufs) {
              auto o = bufs[0].as<float>();
              for (int64_t i = 0; i < N; ++i)
                for (int64_t ch = 0; ch < C; ++ch)
                  for (int64_t p = 0; p < H * W; ++p)
                    REQUIRE(o[(i * H * W + p) * C + ch] ==
                            av[(i * C + ch) * H * W + p] * sv[ch] + bv[ch]);
            });
  }

  TEST_CASE("a reduce on the CPU: a bias broadcast over an axis is no reason to upcast it") {
    // out[g, c] = sum over (n, p) of a[g, n, c, p] + b[c] (a bias gradient's partial sums over
    // chunks g of images, with the bias added before): only b, 64 floats, broadcasts over g,
    // along which a is strided. The chunks stay one per loop.
    const int64_t G = 16, N = 4, C = 64, P = 16;
    auto out = buf(0, dtypes::float32, G * C), a = buf(1, dtypes::float32, G * N * C * P),
         b = buf(2, dtypes::float32, C);
    auto g = rng(G, 0), c = rng(C, 1), n = rng(N, 2, AxisType::Reduce),
         p = rng(P, 3, AxisType::Reduce);
    auto ast =
        UOp::sink({st(out, g * C + c,
                      reduce(Ops::ADD, ld(a, ((g * N + n) * C + c) * P + p) + ld(b, c), {n, p}))});
    if (!noopt())
      for (const Opt& o : hand_coded_optimizations(simplify_kernel(ast), cpu_caps())) {
        CAPTURE(o.str());
        CHECK((o.op != OptOp::UPCAST || o.axis != 0));
      }
    auto av = pattern(G * N * C * P, 9, 4), bv = pattern(C, 5, 2);
    std::vector<float> ref(G * C);
    for (int64_t i = 0; i < G; ++i)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t q = 0; q < P; ++q)
            ref[i * C + ch] += av[((i * N + j) * C + ch) * P + q] + bv[ch];
    run_all(ast, {unroll(1, 0)}, zeros_then(G * C, av, bv), equals(ref));
  }

  TEST_CASE("broadcast add: a row and a column broadcast") {
    const int64_t R = 64, C = 32;
    auto out = buf(0, dtypes::float32, R * C), a = buf(1, dtypes::float32, R * C),
         b = buf(2, dtypes::float32, C), c = buf(3, dtypes::float32, R);
    auto i = rng(R, 0), j = rng(C, 1);
    auto ast = UOp::sink({st(out, i * C + j, ld(a, i * C + j) + ld(b, j) - ld(c, i))});
    auto av = pattern(R * C, 13, 6), bv = pattern(C, 5, 2), cv = pattern(R, 7, 3);
    auto ks = run_all(ast, {upcast(1, 8), upcast(0, 2)}, zeros_then(R * C, av, bv, cv),
                      [&](const std::vector<HostBuf>& bufs) {
                        auto o = bufs[0].as<float>();
                        for (int64_t x = 0; x < R; ++x)
                          for (int64_t y = 0; y < C; ++y)
                            REQUIRE(o[x * C + y] == av[x * C + y] + bv[y] - cv[x]);
                      });
    // j (c broadcasts over it, and j has the smaller strides), contiguous in the output: by 16
    // on a CPU; then the output is small.
    if (!noopt() && on_cpu()) CHECK(ks[0].name == "E_64_2_16");
    CHECK(ks[2].name == "E_32_4_8_2");
  }

  TEST_CASE("row and column sums") {
    const int64_t R = 32, C = 64;
    auto rows = buf(0, dtypes::float32, R), cols = buf(1, dtypes::float32, C),
         x = buf(2, dtypes::float32, R * C);
    auto i = rng(R, 0), k = rng(C, 1, AxisType::Reduce);
    auto j = rng(C, 2), k2 = rng(R, 3, AxisType::Reduce);
    auto ast = UOp::sink({st(rows, i, reduce(Ops::ADD, ld(x, i * C + k), {k})),
                          st(cols, j, reduce(Ops::ADD, ld(x, k2 * C + j), {k2}))});
    auto xv = pattern(R * C, 11, 5);
    // Output axes: i, j; reduce axes: k, k2.
    auto ks = run_all(
        ast, {upcast(1, 4), unroll(1, 4), unroll(0, 8), upcast(0, 2)},
        [&] {
          return std::vector<HostBuf>{HostBuf::zeros<float>(R), HostBuf::zeros<float>(C),
                                      HostBuf::of(xv)};
        },
        [&](const std::vector<HostBuf>& bufs) {
          auto ro = bufs[0].as<float>();
          auto co = bufs[1].as<float>();
          for (int64_t y = 0; y < R; ++y) {
            float ref = 0;
            for (int64_t t = 0; t < C; ++t) ref += xv[y * C + t];
            REQUIRE(ro[y] == ref);
          }
          for (int64_t y = 0; y < C; ++y) {
            float ref = 0;
            for (int64_t t = 0; t < R; ++t) ref += xv[t * C + y];
            REQUIRE(co[y] == ref);
          }
        });
    CHECK(ks[2].name == "r2_16_16_4_2_8_8_4_8");
    CHECK(vector_accesses(ks[2]) > 0);
  }

  TEST_CASE("a weight gradient whose window is narrower than a vector: the a @ b.T tile") {
    // out[c, kx] = sum over x of g[c, x] * in[x + kx]: in is contiguous along n = kx, but kx
    // (5) is narrower than a vector, so the tile is that of a @ b.T: both operands read along
    // x, 8 lanes, 4 channels x the whole window of accumulators.
    if (noopt() || !on_cpu()) return;
    const int64_t C = 32, KX = 5, X = 24;
    auto out = buf(0, dtypes::float32, C * KX), g = buf(1, dtypes::float32, C * X),
         in = buf(2, dtypes::float32, X + KX - 1);
    auto c = rng(C, 0), kx = rng(KX, 1), x = rng(X, 2, AxisType::Reduce);
    auto ast =
        UOp::sink({st(out, c * KX + kx, reduce(Ops::ADD, ld(g, c * X + x) * ld(in, x + kx), {x}))});
    RendererCaps avx512 = cpu_caps();
    avx512.vector_lanes = 16;
    const std::vector<Opt> tile{upcast(0, 4), upcast(1, 0), unroll(0, 8)};
    CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) == tile);
    auto gv = pattern(C * X, 5, 2), iv = pattern(X + KX - 1, 3, 1);
    std::vector<float> ref(C * KX);
    for (int64_t y = 0; y < C; ++y)
      for (int64_t w = 0; w < KX; ++w)
        for (int64_t t = 0; t < X; ++t) ref[y * KX + w] += gv[y * X + t] * iv[t + w];
    run_all(ast, tile, zeros_then(C * KX, gv, iv), equals(ref));
  }

  TEST_CASE("a column sum on the CPU: the outputs go a vector wide") {
    // Per-channel sums of a channels-last activation, out[c] = sum over (b, p) of
    // x[b, p, c]: x is contiguous along the output axis and strided along both reduce axes,
    // so the outputs are upcast by the vector width (whole vector loads of neighbouring
    // channels) and the short inner reduce is unrolled.
    const int64_t B = 8, P = 6, C = 64;
    auto out = buf(0, dtypes::float32, C), x = buf(1, dtypes::float32, B * P * C);
    auto c = rng(C, 0), b = rng(B, 1, AxisType::Reduce), p = rng(P, 2, AxisType::Reduce);
    auto ast = UOp::sink({st(out, c, reduce(Ops::ADD, ld(x, b * (P * C) + p * C + c), {b, p}))});
    auto xv = pattern(B * P * C, 7, 3);
    std::vector<float> ref(C);
    for (int64_t q = 0; q < B; ++q)
      for (int64_t t = 0; t < P; ++t)
        for (int64_t y = 0; y < C; ++y) ref[y] += xv[q * P * C + t * C + y];
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps(), avx2 = cpu_caps();
      avx512.vector_lanes = 16, avx2.vector_lanes = 8;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(0, 16), unroll(1, 0)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx2) ==
            std::vector<Opt>{upcast(0, 8), unroll(1, 0)});
    }
    run_all(ast, {upcast(0, 16), unroll(1, 0)}, zeros_then(C, xv), equals(ref));
  }

  TEST_CASE("a column reduce over a symbolic axis: four vectors per work item") {
    // A decode's attention-weighted values, out[h, d] = sum over s < n of p[h, s] * v[s, h, d]:
    // v is contiguous along d and strided along the keys s, whose count is symbolic. d goes
    // four vectors wide (four independent accumulators), as 12 heads still leave 8 work items.
    const int64_t H = 12, D = 64, cap = 16, S = 11;
    auto n = UOp::variable("n", 1, cap);
    auto out = buf(0, dtypes::float32, H * D), pb = buf(1, dtypes::float32, H * cap),
         vb = buf(2, dtypes::float32, cap * H * D);
    auto h = rng(H, 0), d = rng(D, 1), s = UOp::range(n, 2, AxisType::Reduce);
    auto prod = ld(pb, h * cap + s) * ld(vb, s * (H * D) + h * D + d);
    auto ast = UOp::sink({st(out, h * D + d, reduce(Ops::ADD, prod, {s}))});
    auto pv = pattern(H * cap, 5, 2), vv = pattern(cap * H * D, 7, 3);
    std::vector<float> ref(H * D);
    for (int64_t y = 0; y < H; ++y)
      for (int64_t z = 0; z < D; ++z)
        for (int64_t t = 0; t < S; ++t)
          ref[y * D + z] += pv[y * cap + t] * vv[t * H * D + y * D + z];
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps(), avx2 = cpu_caps();
      avx512.vector_lanes = 16, avx2.vector_lanes = 8;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(1, 0)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx2) ==
            std::vector<Opt>{upcast(1, 32)});
    }
    run_all(ast, {upcast(1, 0)}, zeros_then(H * D, pv, vv), equals(ref), {S});
  }

  TEST_CASE("a column sum over many outputs that nothing broadcasts over: a vector wide") {
    // out[c] = sum over b of x[b, c] with 2048 outputs: no input is broadcast, so the generic
    // upcasts find no axis; the column rule still upcasts the outputs (a prefill's softmax over
    // keys, laid out (heads, keys, queries)).
    const int64_t B = 8, C = 2048;
    auto out = buf(0, dtypes::float32, C), x = buf(1, dtypes::float32, B * C);
    auto c = rng(C, 0), b = rng(B, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, c, reduce(Ops::ADD, ld(x, b * C + c), {b}))});
    auto xv = pattern(B * C, 7, 3);
    std::vector<float> ref(C);
    for (int64_t q = 0; q < B; ++q)
      for (int64_t y = 0; y < C; ++y) ref[y] += xv[q * C + y];
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps();
      avx512.vector_lanes = 16;
      const std::vector<Opt> opts = hand_coded_optimizations(simplify_kernel(ast), avx512);
      REQUIRE_FALSE(opts.empty());
      CHECK(opts[0] == upcast(0, 16));
    }
    run_all(ast, {upcast(0, 16), unroll(0, 0)}, zeros_then(C, xv), equals(ref));
  }

  TEST_CASE("keys x queries with a symbolic number of keys: four vectors of queries a tile") {
    // out[h, s, t] = sum over d of k[s, h, d] * q[h, d, t], s up to `cap` keys (symbolic): no
    // tile over s, so t is upcast four vectors wide in memory order, each key element loaded
    // once for 64 queries.
    const int64_t H = 2, T = 128, D = 32, cap = 8, S = 5;
    auto n = UOp::variable("n", 1, cap);
    auto out = buf(0, dtypes::float32, H * cap * T), kb = buf(1, dtypes::float32, cap * H * D),
         qb = buf(2, dtypes::float32, H * D * T);
    auto h = rng(H, 0), s = UOp::range(n, 1, AxisType::Global), t = rng(T, 2),
         d = rng(D, 3, AxisType::Reduce);
    auto prod = ld(kb, s * (H * D) + h * D + d) * ld(qb, h * (D * T) + d * T + t);
    auto ast = UOp::sink({st(out, h * (cap * T) + s * T + t, reduce(Ops::ADD, prod, {d}))});
    auto kv = pattern(cap * H * D, 5, 2), qv = pattern(H * D * T, 7, 3);
    std::vector<float> ref(H * cap * T);
    for (int64_t y = 0; y < H; ++y)
      for (int64_t a = 0; a < S; ++a)
        for (int64_t z = 0; z < T; ++z)
          for (int64_t e = 0; e < D; ++e)
            ref[y * cap * T + a * T + z] += kv[a * H * D + y * D + e] * qv[y * D * T + e * T + z];
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps();
      avx512.vector_lanes = 16;
      const std::vector<Opt> opts = hand_coded_optimizations(simplify_kernel(ast), avx512);
      REQUIRE_FALSE(opts.empty());
      CHECK(opts[0] == upcast(2, 64));
    }
    run_all(ast, {upcast(2, 64)}, zeros_then(H * cap * T, kv, qv), equals(ref), {S});
  }

  TEST_CASE("a causal mask over upcast queries is one vector compare and select") {
    // out[s, t] = x[s, t] + (s > n + t ? -1000 : 0), t upcast 16 wide: the mask is arithmetic
    // on values derived from the indices (no load below it). Its lanes differ, so it is computed
    // on vectors (the int32 positions one VECTORIZE of scalar casts), not as 16 scalar compares
    // and selects gathered into a vector.
    const int64_t S = 8, T = 32;
    auto n = UOp::variable("n", 0, 16);
    auto out = buf(0, dtypes::float32, S * T), x = buf(1, dtypes::float32, S * T);
    auto s = rng(S, 0), t = rng(T, 1);
    auto future = (n + t)->cast(dtypes::int32)->lt(s->cast(dtypes::int32));
    auto mask =
        future->where(UOp::const_(dtypes::float32, -1000.0), UOp::const_(dtypes::float32, 0.0));
    auto ast = UOp::sink({st(out, s * T + t, ld(x, s * T + t) + mask)});
    auto xv = pattern(S * T, 7, 3);
    const int64_t nv = 3;
    std::vector<float> ref(S * T);
    for (int64_t a = 0; a < S; ++a)
      for (int64_t b = 0; b < T; ++b) ref[a * T + b] = xv[a * T + b] + (nv + b < a ? -1000.f : 0.f);
    auto ks = run_all(ast, {upcast(1, 16)}, zeros_then(S * T, xv), equals(ref), {nv});
    // On the CPU renderers; the OpenCL renderer splits vector ALU ops into lanes itself
    // (split_vector_alu: OpenCL has no bool vectors).
    if (on_cpu()) {
      size_t compares = 0, vector_compares = 0;
      for (const auto& u : ks[2].uops)
        if (u->op == Ops::CMPLT) {
          ++compares;
          vector_compares += u->dtype.count == 16;
        }
      CHECK(compares == 1);
      CHECK(vector_compares == 1);
    }
  }

  TEST_CASE("a reduce unrolled whole is a tree of vector ops on its lanes") {
    // out[b] = max over k < 32 of |x[32b + k]| (a Q8_0 block's absolute maximum), k unrolled
    // whole: no loop is left, so the 32 lanes are the whole reduction. They are combined
    // pairwise on vectors (32 -> 16 -> ... -> 1), the absolute value one vector op, not 32
    // scalar abs-and-max in a dependent chain.
    const int64_t B = 24, K = 32;
    auto out = buf(0, dtypes::float32, B), x = buf(1, dtypes::float32, B * K);
    auto b = rng(B, 0), k = rng(K, 1, AxisType::Reduce);
    auto v = ld(x, b * K + k);
    auto ast = UOp::sink({st(out, b, reduce(Ops::MAX, v->alu(Ops::MAX, {-v}), {k}))});
    auto xv = pattern(B * K, 13, 6);
    std::vector<float> ref(B, 0.f);
    for (int64_t y = 0; y < B; ++y)
      for (int64_t t = 0; t < K; ++t) ref[y] = std::max(ref[y], std::abs(xv[y * K + t]));
    auto ks = run_all(ast, {unroll(0, 0)}, zeros_then(B, xv), equals(ref));
    // On the CPU renderers (OpenCL's split_vector_alu splits vector ALU ops into lanes).
    if (on_cpu()) {
      size_t maxima = 0, vector_maxima = 0;
      for (const auto& u : ks[2].uops)
        if (u->op == Ops::MAX) {
          ++maxima;
          vector_maxima += u->dtype.count > 1;
        }
      CAPTURE(maxima);
      CHECK(maxima <= 8);
      CHECK(vector_maxima >= 4);
    }
  }

  TEST_CASE("small gated output axes (a stack's planes) are upcast whole") {
    // out[p, i] = (x[i] * 2, x[i] + 1, y[i])[p] as Tensor.stack lowers it: a sum of three
    // loads, each gated on its plane. Upcast, each lane's gates fold to constants and the
    // kernel has no gated access left.
    const int64_t P = 3, N = 64;
    auto out = buf(0, dtypes::float32, P * N), x = buf(1, dtypes::float32, N),
         y = buf(2, dtypes::float32, N);
    auto p = rng(P, 0), i = rng(N, 1);
    auto zero = UOp::const_(dtypes::float32, 0.0);
    auto gated = [&](const UOpPtr& b, const UOpPtr& gate) {
      return UOp::make(Ops::LOAD, dtypes::float32,
                       {UOp::make(Ops::INDEX, b->dtype, {b, i, gate}), zero});
    };
    auto plane = [&](int64_t n) { return p->alu(Ops::CMPNE, {idx_const(n)})->logical_not(); };
    auto two = UOp::const_(dtypes::float32, 2.0), one = UOp::const_(dtypes::float32, 1.0);
    auto value = plane(0)->where(gated(x, plane(0)) * two, zero) +
                 plane(1)->where(gated(x, plane(1)) + one, zero) + gated(y, plane(2));
    auto ast = UOp::sink({st(out, p * N + i, value)});
    auto xv = pattern(N, 9, 4), yv = pattern(N, 5, 1);
    std::vector<float> ref(P * N);
    for (int64_t z = 0; z < N; ++z) {
      ref[z] = xv[z] * 2;
      ref[N + z] = xv[z] + 1;
      ref[2 * N + z] = yv[z];
    }
    if (!noopt()) {
      const std::vector<Opt> opts = hand_coded_optimizations(simplify_kernel(ast), cpu_caps());
      REQUIRE_FALSE(opts.empty());
      CHECK(opts[0] == upcast(0, 0));
    }
    auto ks = run_all(ast, {upcast(0, 0)}, zeros_then(P * N, xv, yv), equals(ref));
    size_t gated_loads = 0;
    for (const auto& u : ks[2].uops)
      gated_loads += u->op == Ops::LOAD && u->src[0]->op == Ops::INDEX && u->src[0]->src.size() > 2;
    CHECK(gated_loads == 0);
  }

  TEST_CASE("max reduce over negative values, float and int") {
    const MaxReduceCase m = max_reduce_case(16, 24);
    run_all(
        m.ast, {upcast(0, 4), unroll(0, 4), unroll(1, 8)}, [&] { return m.buffers(); },
        [&](const std::vector<HostBuf>& bufs) { m.check(bufs); });
  }

  TEST_CASE("a max pool over a channels-last input on the CPU: vectors of channels") {
    // out[n, c, y, x] = max over a 2x2 window of in[n, 2y + wy, 2x + wx, c] + b[c]: the input is
    // stored channels-last (a convolution's output), the result channels-first, and b is
    // broadcast over the batch. The channels are upcast by the vector width, each load a whole
    // vector of them; the general rules would take the batch (b broadcasts over it) by 4, each
    // lane one float of its own cache line.
    const int64_t N = 8, C = 32, H = 8, W = 8, OH = H / 2, OW = W / 2;
    auto out = buf(0, dtypes::float32, N * C * OH * OW),
         in = buf(1, dtypes::float32, N * H * W * C), bias = buf(2, dtypes::float32, C);
    auto n = rng(N, 0), c = rng(C, 1), y = rng(OH, 2), x = rng(OW, 3),
         wy = rng(2, 4, AxisType::Reduce), wx = rng(2, 5, AxisType::Reduce);
    auto v = ld(in, ((n * H + y * 2 + wy) * W + x * 2 + wx) * C + c) + ld(bias, c);
    auto ast = UOp::sink({st(out, ((n * C + c) * OH + y) * OW + x, reduce(Ops::MAX, v, {wy, wx}))});
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps();
      avx512.vector_lanes = 16;
      const auto opts = hand_coded_optimizations(simplify_kernel(ast), avx512);
      REQUIRE(!opts.empty());
      CHECK(opts[0] == upcast(1, 16));
    }
    auto iv = pattern(N * H * W * C, 23, 11), bv = pattern(C, 5, 2);
    std::vector<float> ref(N * C * OH * OW);
    for (int64_t a = 0; a < N; ++a)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            float m = -1e30f;
            for (int64_t p = 0; p < 2; ++p)
              for (int64_t q = 0; q < 2; ++q)
                m = std::max(m, iv[((a * H + 2 * i + p) * W + 2 * j + q) * C + ch] + bv[ch]);
            ref[((a * C + ch) * OH + i) * OW + j] = m;
          }
    run_all(ast, {upcast(1, 16), unroll(1, 0), unroll(0, 0)}, zeros_then(N * C * OH * OW, iv, bv),
            equals(ref));
  }

  TEST_CASE("matmul 64x48x32") {
    const int64_t M = 64, N = 48, K = 32;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
         b = buf(2, dtypes::float32, K * N);
    auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
    auto ast =
        UOp::sink({st(out, i * N + j, reduce(Ops::ADD, ld(a, i * K + k) * ld(b, k * N + j), {k}))});
    auto av = pattern(M * K, 5, 2), bv = pattern(K * N, 3, 1);
    std::vector<float> ref(M * N);
    for (int64_t x = 0; x < M; ++x)
      for (int64_t y = 0; y < N; ++y)
        for (int64_t t = 0; t < K; ++t) ref[x * N + y] += av[x * K + t] * bv[t * N + y];
    auto make = zeros_then(M * N, av, bv);
    auto check = equals(ref);
    auto ks = run_all(ast, {upcast(0, 4), upcast(1, 4), unroll(0, 4)}, make, check);
    CHECK(ks[2].name == "r_16_12_4_4_8_4");
    if (!noopt() && on_cpu()) {
      // A register tile on a CPU: rows of a (i, the slower lanes) times whole vectors of b's
      // row (j: two vector registers wide where 48 allows, else one), k unrolled by 4. With
      // 16-lane registers (AVX-512's 32 of them) 8 rows, with 8-lane ones (AVX2's 16) 4. b
      // (6 KiB) stays in cache whichever loop is outermost: the tiles of i stay outermost.
      const int64_t lanes = cpu_caps().vector_lanes;
      if (lanes == 16) CHECK(ks[0].name == "r_8_3_8_16_8_4");
      if (lanes == 8) CHECK(ks[0].name == "r_16_3_4_16_8_4");
      RendererCaps avx512 = cpu_caps(), avx2 = cpu_caps(), sse = cpu_caps();
      avx512.vector_lanes = 16, avx2.vector_lanes = 8, sse.vector_lanes = 4;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(0, 8), upcast(1, 16), unroll(0, 4)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx2) ==
            std::vector<Opt>{upcast(0, 4), upcast(1, 16), unroll(0, 4)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), sse) ==
            std::vector<Opt>{upcast(0, 4), upcast(1, 8), unroll(0, 4)});
      // With work groups (a GPU) the first upcast stays tinygrad's 3 or 4.
      RendererCaps gpu = cpu_caps();
      gpu.has_local = true;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), gpu) ==
            std::vector<Opt>{upcast(1, 3), upcast(0, 4), unroll(0, 4)});
    }
    // Other shapes of the same kernel.
    run_all(ast, {unroll(0, 8), upcast(1, 2)}, make, check);
    run_all(ast, {unroll(0, 0)}, make, check); // the whole reduce unrolled: no loop left
  }

  TEST_CASE("matmul a @ b on the CPU: a large b's tiles go outermost unless 2 KiB apart") {
    // A b larger than 192 KiB (128 rows of 480 floats: 240 KiB) goes outermost by column
    // panels (SWAP), each staying in cache while the tiles of a pass over it; not with b's
    // rows a multiple of 2 KiB apart (512 floats), where a panel maps onto a few cache sets
    // whichever loop is outermost, nor when b is small (32 rows: 60 KiB), where all of it
    // stays in cache and a then streams once.
    if (noopt() || !on_cpu()) return;
    RendererCaps avx512 = cpu_caps();
    avx512.vector_lanes = 16;
    struct Case {
      int64_t n, K;
      bool swapped;
    };
    for (const auto& [n, K, swapped] :
         {Case{512, 128, false}, Case{480, 128, true}, Case{480, 32, false}}) {
      CAPTURE(n);
      CAPTURE(K);
      const int64_t M = 256; // n < 4 M: not the rule for a much larger b
      auto out = buf(0, dtypes::float32, M * n), a = buf(1, dtypes::float32, M * K),
           b = buf(2, dtypes::float32, K * n);
      auto i = rng(M, 0), j = rng(n, 1), k = rng(K, 2, AxisType::Reduce);
      auto ast = UOp::sink(
          {st(out, i * n + j, reduce(Ops::ADD, ld(a, i * K + k) * ld(b, k * n + j), {k}))});
      const auto opts = hand_coded_optimizations(simplify_kernel(ast), avx512);
      const bool has_swap =
          std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::SWAP; });
      CHECK(has_swap == swapped);
    }
  }

  TEST_CASE("matmul a @ b with b packed in column panels on the CPU: the tile and SWAP apply") {
    // b stored as [n / 32][k][32] (Tensor::matmul packs it so): b's index divides and takes
    // the remainder of j by the panel width, so j is contiguous in b only within a panel. The
    // tile (8 x 32 with AVX-512) is one panel wide, and each panel, 128 bytes a row, stays in
    // cache while the tiles of i pass over it (SWAP: b is 256 KiB). Run with every Opt and
    // against NOOPT.
    if (noopt() || !on_cpu()) return;
    RendererCaps avx512 = cpu_caps();
    avx512.vector_lanes = 16;
    const int64_t M = 64, N = 128, K = 512, W = 32;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
         b = buf(2, dtypes::float32, K * N);
    auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
    auto ast = UOp::sink(
        {st(out, i * N + j,
            reduce(Ops::ADD, ld(a, i * K + k) * ld(b, (j / W) * (K * W) + k * W + j % W), {k}))});
    CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
          std::vector<Opt>{upcast(0, 8), upcast(1, 32), unroll(0, 4), Opt{OptOp::SWAP, 0, 1}});
    auto av = pattern(M * K, 5, 2), bv = pattern(K * N, 3, 1);
    std::vector<float> ref(M * N);
    for (int64_t x = 0; x < M; ++x)
      for (int64_t y = 0; y < N; ++y)
        for (int64_t t = 0; t < K; ++t)
          ref[x * N + y] += av[x * K + t] * bv[(y / W) * K * W + t * W + y % W];
    auto make = zeros_then(M * N, av, bv);
    auto check = equals(ref);
    run_all(ast, {upcast(0, 8), upcast(1, 32), unroll(0, 4), Opt{OptOp::SWAP, 0, 1}}, make, check);
    // The product kept as (i, j / 32, j % 32), axes of their own (a batch of rows before a
    // reshape): the tile reads the 32 whole, and the panels' axis goes outermost.
    auto p = rng(N / W, 1), w = rng(W, 3);
    auto kept =
        UOp::sink({st(out, i * N + p * W + w,
                      reduce(Ops::ADD, ld(a, i * K + k) * ld(b, p * (K * W) + k * W + w), {k}))});
    const auto opts = hand_coded_optimizations(simplify_kernel(kept), avx512);
    CHECK(opts ==
          std::vector<Opt>{upcast(0, 8), upcast(2, 0), unroll(0, 4), Opt{OptOp::SWAP, 0, 1}});
    run_all(kept, opts, make, check);
  }

  TEST_CASE("matmul a @ b.T on the CPU: a tile of outputs, each a vector accumulator along k") {
    // out[i, j] = sum_k a[i, k] * b[j, k]: both operands are read along k, so k is the vector
    // (8 lanes) and the tile is 4 x 8 outputs (4 x 2 with 8-lane registers), summed across
    // their lanes after the loop.
    const int64_t M = 32, N = 24, K = 64;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
         b = buf(2, dtypes::float32, N * K);
    auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
    auto ast =
        UOp::sink({st(out, i * N + j, reduce(Ops::ADD, ld(a, i * K + k) * ld(b, j * K + k), {k}))});
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps(), avx2 = cpu_caps();
      avx512.vector_lanes = 16, avx2.vector_lanes = 8;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(0, 4), upcast(1, 8), unroll(0, 8)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx2) ==
            std::vector<Opt>{upcast(0, 4), upcast(1, 2), unroll(0, 8)});
      // The accumulators stay vectors inside the k loop: one vector multiply-add per output.
      const LoweredKernel kern = lower_kernel(ast, avx512);
      bool vector_acc = false;
      for (const auto& u : kern.uops)
        vector_acc |= u->op == Ops::DEFINE_REG && u->dtype.size == 256;
      CHECK(vector_acc);
    }
    auto av = pattern(M * K, 5, 2), bv = pattern(N * K, 3, 1);
    std::vector<float> ref(M * N);
    for (int64_t x = 0; x < M; ++x)
      for (int64_t y = 0; y < N; ++y)
        for (int64_t t = 0; t < K; ++t) ref[x * N + y] += av[x * K + t] * bv[y * K + t];
    run_all(ast, {upcast(0, 4), upcast(1, 4), unroll(0, 8)}, zeros_then(M * N, av, bv),
            equals(ref));
  }

  TEST_CASE("a @ b.T plus a residual on the CPU: the epilogue keeps the matmul's tile") {
    // out[i, j] = r[i, j] + sum_k a[i, k] * b[j, k] (a transformer's output projection added to
    // its residual stream): the same register tile as the bare product.
    const int64_t M = 32, N = 24, K = 64;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
         b = buf(2, dtypes::float32, N * K), res = buf(3, dtypes::float32, M * N);
    auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
    auto ast = UOp::sink(
        {st(out, i * N + j,
            ld(res, i * N + j) + reduce(Ops::ADD, ld(a, i * K + k) * ld(b, j * K + k), {k}))});
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps();
      avx512.vector_lanes = 16;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(0, 4), upcast(1, 8), unroll(0, 8)});
    }
    auto av = pattern(M * K, 5, 2), bv = pattern(N * K, 3, 1), rv = pattern(M * N, 7, 3);
    std::vector<float> ref(rv);
    for (int64_t x = 0; x < M; ++x)
      for (int64_t y = 0; y < N; ++y) {
        float s = 0;
        for (int64_t t = 0; t < K; ++t) s += av[x * K + t] * bv[y * K + t];
        ref[x * N + y] += s;
      }
    run_all(ast, {upcast(0, 4), upcast(1, 4), unroll(0, 8)}, zeros_then(M * N, av, bv, rv),
            equals(ref));
  }

  TEST_CASE("a @ b.T whose a is laid out [head, token, d] on the CPU: the tile still applies") {
    // out[t, j] = sum_k a[k / 64, t, k % 64] * b[j, k]: attention's output projection reads the
    // heads' outputs, stored head by head. a's index is not linear in k, but once k is split by
    // 8 each group of 8 lanes is contiguous in a ((8*g + u) % 64 = 8*(g % 8) + u), so the
    // product gets the same tile as a plain a @ b.T.
    const int64_t T = 16, N = 24, H = 2, D = 64, K = H * D;
    auto out = buf(0, dtypes::float32, T * N), a = buf(1, dtypes::float32, H * T * D),
         b = buf(2, dtypes::float32, N * K);
    auto t = rng(T, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
    auto ast = UOp::sink(
        {st(out, t * N + j,
            reduce(Ops::ADD, ld(a, (k / D) * (T * D) + t * D + k % D) * ld(b, j * K + k), {k}))});
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps();
      avx512.vector_lanes = 16;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(0, 4), upcast(1, 8), unroll(0, 8)});
    }
    auto av = pattern(H * T * D, 5, 2), bv = pattern(N * K, 3, 1);
    std::vector<float> ref(T * N);
    for (int64_t x = 0; x < T; ++x)
      for (int64_t y = 0; y < N; ++y)
        for (int64_t r = 0; r < K; ++r)
          ref[x * N + y] += av[(r / D) * T * D + x * D + r % D] * bv[y * K + r];
    run_all(ast, {upcast(0, 4), upcast(1, 4), unroll(0, 8)}, zeros_then(T * N, av, bv),
            equals(ref));
  }

  TEST_CASE("a @ b.T with a wide, odd n on the CPU: n padded to the tile, its tiles outermost") {
    // logits[i, j] = sum_k h[i, k] * e[j, k] with 1026 = 2 x 513 rows of e against 64 of h (a
    // vocabulary projection): n is padded to 1028 so the 4 x 4 tile applies whole, and n's
    // tiles go outside m's, so each row of e is read once and h's rows come from cache.
    const int64_t M = 64, N = 1026, K = 64;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
         b = buf(2, dtypes::float32, N * K);
    auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
    auto ast =
        UOp::sink({st(out, i * N + j, reduce(Ops::ADD, ld(a, i * K + k) * ld(b, j * K + k), {k}))});
    const std::vector<Opt> opts{Opt{OptOp::PADTO, 1, 4}, upcast(0, 4), upcast(1, 4), unroll(0, 8),
                                Opt{OptOp::SWAP, 0, 1}};
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps();
      avx512.vector_lanes = 16;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) == opts);
    }
    auto av = pattern(M * K, 5, 2), bv = pattern(N * K, 3, 1);
    std::vector<float> ref(M * N);
    for (int64_t x = 0; x < M; ++x)
      for (int64_t y = 0; y < N; ++y) {
        float s = 0;
        for (int64_t t = 0; t < K; ++t) s += av[x * K + t] * bv[y * K + t];
        ref[x * N + y] = s;
      }
    run_all(ast, opts, zeros_then(M * N, av, bv), [&](const std::vector<HostBuf>& bufs) {
      auto o = bufs[0].as<float>();
      for (size_t x = 0; x < ref.size(); ++x) REQUIRE(o[x] == doctest::Approx(ref[x]));
    });
  }

  TEST_CASE("gated loads: padding that varies per lane and padding that does not") {
    // out[i, j] = sum_k xpad[i, j + k - 1] over k < 4, x padded by one column on the left and
    // two on the right (the gate depends on the unrolled k and the upcast j), plus
    // rowpad[i, j]: x's row i - 1, -1 for the first row (the gate depends on i only).
    const int64_t R = 12, C = 64;
    auto out = buf(0, dtypes::float32, R * C), out2 = buf(1, dtypes::float32, R * C),
         x = buf(2, dtypes::float32, R * C), out3 = buf(3, dtypes::float32, R * C);
    auto i = rng(R, 0), j = rng(C, 1), k = rng(4, 2, AxisType::Reduce);
    auto col = j + k - 1;
    auto gate =
        col->alu(Ops::CMPLT, {idx_const(0)})->logical_not()->alu(Ops::AND, {col->lt(idx_const(C))});
    auto zero = UOp::const_(dtypes::float32, 0.0);
    auto padded = UOp::make(Ops::LOAD, dtypes::float32,
                            {UOp::make(Ops::INDEX, x->dtype, {x, i * C + col, gate}), zero});
    auto i2 = rng(R, 3), j2 = rng(C, 4);
    auto rgate = idx_const(0)->lt(i2);
    auto rowpad = UOp::make(Ops::LOAD, dtypes::float32,
                            {UOp::make(Ops::INDEX, x->dtype, {x, (i2 - 1) * C + j2, rgate}),
                             UOp::const_(dtypes::float32, -1.0)});
    // cut[i, j]: x where j < C - 2, else 7: a gate that changes inside a run of addresses.
    auto i3 = rng(R, 5), j3 = rng(C, 6);
    auto cut =
        UOp::make(Ops::LOAD, dtypes::float32,
                  {UOp::make(Ops::INDEX, x->dtype, {x, i3 * C + j3, j3->lt(idx_const(C - 2))}),
                   UOp::const_(dtypes::float32, 7.0)});
    auto ast = UOp::sink({st(out, i * C + j, reduce(Ops::ADD, padded, {k})),
                          st(out2, i2 * C + j2, rowpad), st(out3, i3 * C + j3, cut)});
    auto xv = pattern(R * C, 9, 4);
    auto ks = run_all(
        ast, {upcast(1, 4), unroll(0, 4), upcast(3, 8), upcast(5, 8)},
        [&] {
          return std::vector<HostBuf>{HostBuf::zeros<float>(R * C), HostBuf::zeros<float>(R * C),
                                      HostBuf::of(xv), HostBuf::zeros<float>(R * C)};
        },
        [&](const std::vector<HostBuf>& bufs) {
          auto o = bufs[0].as<float>();
          auto o2 = bufs[1].as<float>();
          auto o3 = bufs[3].as<float>();
          for (int64_t y = 0; y < R; ++y)
            for (int64_t z = 0; z < C; ++z) {
              float ref = 0;
              for (int64_t t = 0; t < 4; ++t)
                if (z + t - 1 >= 0 && z + t - 1 < C) ref += xv[y * C + z + t - 1];
              REQUIRE(o[y * C + z] == ref);
              REQUIRE(o2[y * C + z] == (y == 0 ? -1.0f : xv[(y - 1) * C + z]));
              REQUIRE(o3[y * C + z] == (z < C - 2 ? xv[y * C + z] : 7.0f));
            }
        });
    // The row-padded load keeps one gate for all 8 lanes: a gated vector load.
    size_t gated_vector_loads = 0;
    for (const auto& u : ks[2].uops)
      if (u->op == Ops::LOAD && u->dtype.count > 1 && u->src[0]->src.size() > 2)
        ++gated_vector_loads;
    CHECK(gated_vector_loads >= 1);
  }

  TEST_CASE("a 3x3 convolution on the CPU: float runs stay aligned") {
    // out[co, y, x] = sum_{ci, ky, kx} in[ci, y + ky, x + kx] * w[co, ci, ky, kx] with co and x
    // upcast by 4 and ky, kx unrolled, the layout the heuristic gives cifar's convolutions.
    // Runs of floats that start anywhere turn the overlapping windows into overlapping
    // unaligned vector loads rebuilt lane by lane (3.4x slower there); aligned runs load each
    // window row as 4 + 2 and the weights lane by lane.
    const int64_t CO = 8, CI = 4, H = 8, W = 8, HP = H + 2, WP = W + 4;
    auto out = buf(0, dtypes::float32, CO * H * W), in = buf(1, dtypes::float32, CI * HP * WP),
         w = buf(2, dtypes::float32, CO * CI * 9);
    auto co = rng(CO, 0), y = rng(H, 1), x = rng(W, 2), ci = rng(CI, 3, AxisType::Reduce),
         ky = rng(3, 4, AxisType::Reduce), kx = rng(3, 5, AxisType::Reduce);
    auto prod = ld(in, ci * (HP * WP) + (y + ky) * WP + x + kx) *
                ld(w, co * (CI * 9) + ci * 9 + ky * 3 + kx);
    auto ast = UOp::sink({st(out, co * (H * W) + y * W + x, reduce(Ops::ADD, prod, {ci, ky, kx}))});
    const std::vector<Opt> opts{upcast(2, 4), upcast(0, 4), unroll(2, 0), unroll(1, 0)};
    const LoweredKernel kern = lower_kernel_with_opts(ast, cpu_caps(), opts);
    // The weights' rows of 9 start at odd offsets: with aligned runs they load lane by lane
    // (and broadcast), never as 8-wide vectors cut out of them.
    int64_t wide = 0, window_loads = 0;
    for (const auto& u : kern.uops) {
      if (u->op != Ops::LOAD || u->src[0]->src[0]->op != Ops::PARAM) continue;
      wide += u->dtype.count > 4;
      window_loads += u->src[0]->src[0].get() == in.get() && u->dtype.count > 1;
    }
    CHECK(wide == 0);
    CHECK(window_loads > 0);
    auto iv = pattern(CI * HP * WP, 7, 3), wv = pattern(CO * CI * 9, 5, 2);
    const auto ref = conv3x3_ref(iv, wv, 1, CO, CI, H, W, HP, WP);
    run_all(ast, opts, zeros_then(CO * H * W, iv, wv), [&](const std::vector<HostBuf>& bufs) {
      auto o = bufs[0].as<float>();
      for (size_t n = 0; n < ref.size(); ++n) REQUIRE(o[n] == doctest::Approx(ref[n]));
    });
  }

  TEST_CASE("a float32 matrix-vector product on the CPU: two rows a work item, rows unrolled") {
    // out[j] = sum_k x[k] * w[j, k], both operands loaded: each work item reads two rows of w
    // (two streams of the matrix in flight per thread) and unrolls them a vector wide.
    const int64_t J = 256, K = 768;
    auto ast = matvec_ast(J, K);
    const std::vector<Opt> two_rows{upcast(0, 2), unroll(0, 16)};
    if (!noopt() && on_cpu())
      CHECK(hand_coded_optimizations(simplify_kernel(ast), cpu_caps()) == two_rows);
    auto xv = pattern(K, 5, 2), wv = pattern(J * K, 7, 3);
    std::vector<float> ref(J);
    for (int64_t r = 0; r < J; ++r)
      for (int64_t c = 0; c < K; ++c) ref[r] += xv[c] * wv[r * K + c];
    run_all(ast, two_rows, zeros_then(J, xv, wv), equals(ref));
  }

  TEST_CASE("a Q4_0 matrix-vector product on the CPU: the row is unrolled, rows are not upcast") {
    // out[j] = sum_{b, i} x[b * 32 + i] * (nibble(j, b, i) - 8), where element i of block b is
    // nibble i / 16 of byte 2 + i % 16 of the block's 18 (GGML's Q4_0 without its scale). The
    // byte index is not linear in i, yet the kernel is still a matvec: upcasting rows would cut
    // each quantized row into 16 strided pieces (2.5x slower decode kernels here).
    const int64_t J = 1024, NB = 2;
    auto out = buf(0, dtypes::float32, J), x = buf(1, dtypes::float32, NB * 32),
         w = buf(2, dtypes::uint8, J * NB * 18);
    auto j = rng(J, 0), b = rng(NB, 1, AxisType::Reduce), i = rng(32, 2, AxisType::Reduce);
    auto byte = ld(w, j * (NB * 18) + b * 18 + 2 + i % 16);
    auto nibble = byte->alu(Ops::SHR, {(i / 16 * 4)->cast(dtypes::uint8)})
                      ->alu(Ops::AND, {UOp::const_(dtypes::uint8, 15)});
    auto q = nibble->cast(dtypes::float32)->alu(Ops::SUB, {UOp::const_(dtypes::float32, 8.0)});
    auto ast = UOp::sink({st(out, j, reduce(Ops::ADD, ld(x, b * 32 + i) * q, {b, i}))});
    if (!noopt() && on_cpu())
      CHECK(hand_coded_optimizations(simplify_kernel(ast), cpu_caps()) ==
            std::vector<Opt>{unroll(1, 0)});
    auto xv = pattern(NB * 32, 5, 2);
    std::vector<uint8_t> wv(J * NB * 18);
    for (size_t n = 0; n < wv.size(); ++n) wv[n] = static_cast<uint8_t>((n * 37 + 11) % 256);
    run_all(ast, {unroll(1, 0)}, zeros_then(J, xv, wv), [&](const std::vector<HostBuf>& bufs) {
      auto o = bufs[0].as<float>();
      for (int64_t r = 0; r < J; ++r) {
        float ref = 0;
        for (int64_t blk = 0; blk < NB; ++blk)
          for (int64_t e = 0; e < 32; ++e) {
            const int v = (wv[r * NB * 18 + blk * 18 + 2 + e % 16] >> (e / 16 * 4)) & 15;
            ref += xv[blk * 32 + e] * static_cast<float>(v - 8);
          }
        REQUIRE(o[r] == ref);
      }
    });
  }

  TEST_CASE("a Q4_0 a @ b.T on the CPU: 8 tokens share each dequantized vector of 16 lanes") {
    // out[t, j] = sum_{b, i} x[t, b * 32 + i] * (nibble(j, b, i) - 8) * scale(j, b): an LLM's
    // prefill projection with its Q4_0 weight dequantized in the kernel (nibble i / 16 of byte
    // 2 + i % 16 of the block's 18, the block's scale a float here). The weight operand is
    // computed from loads and its byte index is not linear in i, yet once i is split by 16 both
    // operands read those lanes contiguously: 8 tokens x 1 weight row x 16 lanes of i, so each
    // dequantized vector feeds 8 vector accumulators.
    const int64_t T = 16, J = 8, NB = 2;
    auto out = buf(0, dtypes::float32, T * J), x = buf(1, dtypes::float32, T * NB * 32),
         w = buf(2, dtypes::uint8, J * NB * 18), sc = buf(3, dtypes::float32, J * NB);
    auto t = rng(T, 0), j = rng(J, 1), b = rng(NB, 2, AxisType::Reduce),
         i = rng(32, 3, AxisType::Reduce);
    auto byte = ld(w, j * (NB * 18) + b * 18 + 2 + i % 16);
    auto nibble = byte->alu(Ops::SHR, {(i / 16 * 4)->cast(dtypes::uint8)})
                      ->alu(Ops::AND, {UOp::const_(dtypes::uint8, 15)});
    auto q = nibble->cast(dtypes::float32)->alu(Ops::SUB, {UOp::const_(dtypes::float32, 8.0)}) *
             ld(sc, j * NB + b);
    auto ast = UOp::sink(
        {st(out, t * J + j, reduce(Ops::ADD, ld(x, t * (NB * 32) + b * 32 + i) * q, {b, i}))});
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps(), avx2 = cpu_caps();
      avx512.vector_lanes = 16, avx2.vector_lanes = 8;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(0, 8), unroll(1, 16)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx2) ==
            std::vector<Opt>{upcast(0, 4), unroll(1, 16)});
    }
    auto xv = pattern(T * NB * 32, 5, 2), sv = pattern(J * NB, 3, 1);
    std::vector<uint8_t> wv(J * NB * 18);
    for (size_t n = 0; n < wv.size(); ++n) wv[n] = static_cast<uint8_t>((n * 37 + 11) % 256);
    std::vector<float> ref(T * J);
    for (int64_t r = 0; r < T; ++r)
      for (int64_t c = 0; c < J; ++c)
        for (int64_t blk = 0; blk < NB; ++blk)
          for (int64_t e = 0; e < 32; ++e) {
            const int v = (wv[c * NB * 18 + blk * 18 + 2 + e % 16] >> (e / 16 * 4)) & 15;
            ref[r * J + c] +=
                xv[r * NB * 32 + blk * 32 + e] * static_cast<float>(v - 8) * sv[c * NB + blk];
          }
    run_all(ast, {upcast(0, 8), unroll(1, 16)}, zeros_then(T * J, xv, wv, sv),
            [&](const std::vector<HostBuf>& bufs) {
              auto o = bufs[0].as<float>();
              for (int64_t n = 0; n < T * J; ++n) REQUIRE(o[n] == doctest::Approx(ref[n]));
            });
  }

  TEST_CASE("a 3x3 convolution on the CPU: a register tile of channels x two rows x a row") {
    // out[b, co, y, x] = sum_{ci, ky, kx} in[b, ci, y + ky, x + kx] * w[co, ci, ky, kx]: co (a
    // weight broadcast per lane group), neighbouring ys and the whole row x (8: one vector),
    // ky unrolled so the ys' shared input rows load once. With 16-lane registers a row is half
    // a register: 8 channels x 4 rows (two registers each, so a broadcast weight feeds two
    // multiply-adds); with 8-lane ones 4 channels x 2 rows of one register each.
    const int64_t B = 2, CO = 8, CI = 4, H = 8, W = 8, HP = H + 2, WP = W + 2;
    auto out = buf(0, dtypes::float32, B * CO * H * W),
         in = buf(1, dtypes::float32, B * CI * HP * WP), w = buf(2, dtypes::float32, CO * CI * 9);
    auto b = rng(B, 0), co = rng(CO, 1), y = rng(H, 2), x = rng(W, 3),
         ci = rng(CI, 4, AxisType::Reduce), ky = rng(3, 5, AxisType::Reduce),
         kx = rng(3, 6, AxisType::Reduce);
    auto prod = ld(in, b * (CI * HP * WP) + ci * (HP * WP) + (y + ky) * WP + x + kx) *
                ld(w, co * (CI * 9) + ci * 9 + ky * 3 + kx);
    auto ast = UOp::sink({st(out, b * (CO * H * W) + co * (H * W) + y * W + x,
                             reduce(Ops::ADD, prod, {ci, ky, kx}))});
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps(), avx2 = cpu_caps();
      avx512.vector_lanes = 16, avx2.vector_lanes = 8;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) ==
            std::vector<Opt>{upcast(1, 0), upcast(1, 4), upcast(2, 0), unroll(1, 0)});
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx2) ==
            std::vector<Opt>{upcast(1, 4), upcast(2, 2), upcast(3, 0), unroll(1, 0)});
    }
    auto iv = pattern(B * CI * HP * WP, 7, 3), wv = pattern(CO * CI * 9, 5, 2);
    for (const auto& opts :
         {std::vector<Opt>{upcast(1, 4), upcast(2, 2), upcast(3, 0), unroll(1, 0)},
          std::vector<Opt>{upcast(1, 0), upcast(1, 4), upcast(2, 0), unroll(1, 0)}})
      run_all(ast, opts, zeros_then(B * CO * H * W, iv, wv),
              equals(conv3x3_ref(iv, wv, B, CO, CI, H, W, HP, WP)));
  }

  TEST_CASE("a convolution to one output channel on the CPU: four rows x a row") {
    // out[b, y, x] = sum_{ci, ky, kx} in[b, ci, y + ky, x + kx] * w[ci, ky, kx] (the input
    // gradient of a first layer's one input channel): no channel axis to reuse a weight across,
    // so four ys share each loaded input row (ky unrolled) and x is whole.
    const int64_t B = 2, CI = 4, H = 8, W = 8, HP = H + 2, WP = W + 2;
    auto out = buf(0, dtypes::float32, B * H * W), in = buf(1, dtypes::float32, B * CI * HP * WP),
         w = buf(2, dtypes::float32, CI * 9);
    auto b = rng(B, 0), y = rng(H, 2), x = rng(W, 3), ci = rng(CI, 4, AxisType::Reduce),
         ky = rng(3, 5, AxisType::Reduce), kx = rng(3, 6, AxisType::Reduce);
    auto prod = ld(in, b * (CI * HP * WP) + ci * (HP * WP) + (y + ky) * WP + x + kx) *
                ld(w, ci * 9 + ky * 3 + kx);
    auto ast = UOp::sink({st(out, b * (H * W) + y * W + x, reduce(Ops::ADD, prod, {ci, ky, kx}))});
    const std::vector<Opt> tile{upcast(1, 4), upcast(2, 0), unroll(1, 0)};
    if (!noopt() && on_cpu()) {
      RendererCaps avx512 = cpu_caps();
      avx512.vector_lanes = 16;
      CHECK(hand_coded_optimizations(simplify_kernel(ast), avx512) == tile);
    }
    auto iv = pattern(B * CI * HP * WP, 7, 3), wv = pattern(CI * 9, 5, 2);
    run_all(ast, tile, zeros_then(B * H * W, iv, wv),
            equals(conv3x3_ref(iv, wv, B, 1, CI, H, W, HP, WP)));
  }

  TEST_CASE("a convolution whose input adds a per-channel bias is no matrix-vector product") {
    // out[co, x] = sum_{ci, kx} (in[ci, x + kx] + bias[ci]) * w[co, ci, kx]: the bias depends
    // on no output axis, as a matvec's vector does, but not on the last reduce axis either; the
    // kernel is a convolution and its outputs are upcast (beautiful_mnist's second convolution,
    // which reads the first one's output plus bias: 10x faster so).
    const int64_t CO = 16, CI = 4, X = 128, K = 3;
    auto out = buf(0, dtypes::float32, CO * X), in = buf(1, dtypes::float32, CI * (X + K - 1)),
         bias = buf(2, dtypes::float32, CI), w = buf(3, dtypes::float32, CO * CI * K);
    auto co = rng(CO, 0), x = rng(X, 1), ci = rng(CI, 2, AxisType::Reduce),
         kx = rng(K, 3, AxisType::Reduce);
    auto v = ld(in, ci * (X + K - 1) + x + kx) + ld(bias, ci);
    auto ast = UOp::sink(
        {st(out, co * X + x, reduce(Ops::ADD, v * ld(w, co * (CI * K) + ci * K + kx), {ci, kx}))});
    if (!noopt() && on_cpu()) {
      const auto opts = hand_coded_optimizations(simplify_kernel(ast), cpu_caps());
      CHECK(std::count_if(opts.begin(), opts.end(),
                          [](const Opt& o) { return o.op == OptOp::UPCAST; }) >= 1);
    }
    auto iv = pattern(CI * (X + K - 1), 7, 3), bv = pattern(CI, 3, 1),
         wv = pattern(CO * CI * K, 5, 2);
    run_all(ast, {upcast(1, 4), unroll(1, 0)}, zeros_then(CO * X, iv, bv, wv),
            [&](const std::vector<HostBuf>& bufs) {
              auto o = bufs[0].as<float>();
              for (int64_t c = 0; c < CO; ++c)
                for (int64_t xx = 0; xx < X; ++xx) {
                  float ref = 0;
                  for (int64_t i = 0; i < CI; ++i)
                    for (int64_t t = 0; t < K; ++t)
                      ref += (iv[i * (X + K - 1) + xx + t] + bv[i]) * wv[c * CI * K + i * K + t];
                  REQUIRE(o[c * X + xx] == ref);
                }
            });
  }

  TEST_CASE("an unrolled reduce's vector accumulator is summed pairwise by vector ops") {
    // out[j] = sum_k x[k] * w[j, k], k unrolled by 32 into a vector accumulator: after the loop
    // lane l holds the sum over k = l (mod 32) in order, and the 32 lanes are added pairwise
    // (0+1, 2+3, ..., then the sums the same way), as even and odd lanes of one vector per
    // level rather than lane by lane. Fractional values pin that order exactly through the
    // first renderer (LLVM IR with FP_CONTRACT=0: no FMAs); every configuration is close.
    const int64_t J = 8, K = 128;
    auto ast = matvec_ast(J, K);
    std::vector<float> xv(K), wv(J * K);
    for (size_t n = 0; n < xv.size(); ++n) xv[n] = 1.0f / static_cast<float>(n + 3);
    for (size_t n = 0; n < wv.size(); ++n) wv[n] = static_cast<float>((n * 37 + 11) % 19) / 7.0f;
    std::vector<float> pairwise(J);
    for (int64_t r = 0; r < J; ++r) {
      std::vector<float> lanes(32, 0.0f);
      for (int64_t t = 0; t < K; ++t) lanes[t % 32] += xv[t] * wv[r * K + t];
      for (size_t n = 32; n > 1; n /= 2)
        for (size_t l = 0; l < n / 2; ++l) lanes[l] = lanes[2 * l] + lanes[2 * l + 1];
      pairwise[r] = lanes[0];
    }
    auto make = zeros_then(J, xv, wv);
    run_all(ast, {unroll(0, 32)}, make, [&](const std::vector<HostBuf>& bufs) {
      auto o = bufs[0].as<float>();
      for (int64_t r = 0; r < J; ++r) CHECK(o[r] == doctest::Approx(pairwise[r]).epsilon(1e-5));
    });
    const LoweredKernel k32 = lower_kernel_with_opts(ast, target_caps(), {unroll(0, 32)});
    tg::Context no_fma{{"FP_CONTRACT", 0}};
    auto bufs = make();
    run_kernel(renderers().front(), k32, bufs);
    auto o = bufs[0].as<float>();
    for (int64_t r = 0; r < J; ++r) CHECK(o[r] == pairwise[r]);
    // On the CPU (vector ALU), five levels after the loop, one float ADD each; a GPU dialect
    // may split vector ops into lanes.
    if (!on_cpu()) return;
    size_t after_loop = 0, end_at = 0;
    for (size_t n = 0; n < k32.uops.size(); ++n)
      if (k32.uops[n]->op == Ops::END) end_at = n;
    for (size_t n = end_at; n < k32.uops.size(); ++n)
      after_loop += k32.uops[n]->op == Ops::ADD && k32.uops[n]->dtype.scalar() == dtypes::float32;
    CHECK(after_loop == 5);
  }

  TEST_CASE("sizes not divisible by 4: the heuristic leaves the kernel alone") {
    const int64_t R = 37, C = 53;
    auto out = buf(0, dtypes::float32, R * C), sums = buf(1, dtypes::float32, R),
         a = buf(2, dtypes::float32, R * C);
    auto i = rng(R, 0), j = rng(C, 1), i2 = rng(R, 2), k = rng(C, 3, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i * C + j, ld(a, i * C + j) + ld(a, i * C + j)),
                          st(sums, i2, reduce(Ops::ADD, ld(a, i2 * C + k), {k}))});
    CHECK(hand_coded_optimizations(simplify_kernel(ast), cpu_caps()).empty());
    auto av = pattern(R * C, 13, 6);
    auto ks = run_all(
        ast, {},
        [&] {
          return std::vector<HostBuf>{HostBuf::zeros<float>(R * C), HostBuf::zeros<float>(R),
                                      HostBuf::of(av)};
        },
        [&](const std::vector<HostBuf>& bufs) {
          auto o = bufs[0].as<float>();
          auto s = bufs[1].as<float>();
          for (int64_t t = 0; t < R * C; ++t) REQUIRE(o[t] == av[t] + av[t]);
          for (int64_t y = 0; y < R; ++y) {
            float ref = 0;
            for (int64_t t = 0; t < C; ++t) ref += av[y * C + t];
            REQUIRE(s[y] == ref);
          }
        });
    CHECK(ks[0].name == "r2_37_53_37_53");
    CHECK_FALSE(has_vectors(ks[0]));
  }

  TEST_CASE("a symbolic loop end: the heuristic skips it, other axes still upcast") {
    const int64_t R = 8, cap = 40;
    auto out = buf(0, dtypes::int32, R), x = buf(1, dtypes::int32, R * cap);
    auto n = UOp::variable("n", 1, cap);
    auto i = rng(R, 0), j = UOp::range(n, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * cap + j), {j}))});
    // No unroll of the symbolic reduce; the contiguous output axis is upcast.
    CHECK(hand_coded_optimizations(simplify_kernel(ast), cpu_caps()) ==
          std::vector<Opt>{upcast(0, 4)});
    std::vector<int32_t> xv(R * cap);
    for (int64_t t = 0; t < R * cap; ++t) xv[t] = static_cast<int32_t>(t * 5 % 23) - 11;
    auto ks = run_all(
        ast, {upcast(0, 4)},
        [&] {
          return std::vector<HostBuf>{HostBuf::zeros<int32_t>(R), HostBuf::of(xv)};
        },
        [&](const std::vector<HostBuf>& bufs) {
          auto o = bufs[0].as<int32_t>();
          for (int64_t y = 0; y < R; ++y) {
            int32_t ref = 0;
            for (int64_t t = 0; t < 23; ++t) ref += xv[y * cap + t];
            REQUIRE(o[y] == ref);
          }
        },
        {23});
    CHECK(ks[2].name == "r_2_4_n");
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(ast, target_caps(), {unroll(0, 4)}),
                         doctest::Contains("not a constant"), Error);
  }

  TEST_CASE("a scatter-add: the Sequential axis stays one loop, in order; the output axis splits") {
    // out[rows[t] * H + h] += vals[t * H + h]: row 1 gets 1e8, 1, -1e8, 1 in that order, which
    // float32 sums to 1 only in that order (1e8 + 1 rounds to 1e8).
    const int64_t V = 6, H = 32, T = 10;
    const std::vector<int32_t> rows{1, 3, 1, 5, 0, 1, 3, 3, 2, 1};
    const std::vector<float> by_t{1e8F, 2, 1, 3, 4, -1e8F, 5, 6, 7, 1};
    std::vector<float> vals(T * H);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) vals[t * H + h] = by_t[t] * static_cast<float>(1 + h % 3);
    auto out = buf(0, dtypes::float32, V * H), rb = buf(1, dtypes::int32, T),
         vb = buf(2, dtypes::float32, T * H);
    auto h = rng(H, 0), t = rng(T, 1, AxisType::Sequential);
    auto at_row = ld(rb, t).get()->cast(dtypes::index) * H + h;
    auto ast = UOp::sink({st(out, at_row, ld(out, at_row) + ld(vb, t * H + h))});
    std::vector<float> want(V * H, 0.5F);
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < H; ++j) want[rows[i] * H + j] += vals[i * H + j];
    auto ks = run_all(
        ast, {upcast(0, 4)},
        [&] {
          return std::vector<HostBuf>{HostBuf::of(std::vector<float>(V * H, 0.5F)),
                                      HostBuf::of(rows), HostBuf::of(vals)};
        },
        equals(want));
    CHECK(want[1 * H] == 1.0F);
    // The one loop of T in every lowering (the opts count only h).
    auto sequential_loops = [](const LoweredKernel& k) {
      int n = 0;
      for (const auto& u : k.uops)
        n += u->op == Ops::RANGE && std::get<RangeArg>(u->arg).type == AxisType::Sequential &&
             u->src[0]->is_const() && u->src[0]->ivmin() == T;
      return n;
    };
    for (const LoweredKernel& k : ks) CHECK(sequential_loops(k) == 1);
    CHECK(ks[2].name == "E_8_10_4");
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(ast, target_caps(), {upcast(1, 2)}),
                         doctest::Contains("no axis 1"), Error);
    const LoweredKernel gpu = lower_kernel(ast, gpu_caps());
    CHECK(sequential_loops(gpu) == 1);
    // A REDUCE over a Sequential range is refused.
    auto bad = UOp::sink({st(out, h, reduce(Ops::ADD, ld(vb, t * H + h), {t}))});
    CHECK_THROWS_WITH_AS(verify_kernel_ast(bad), doctest::Contains("Sequential"), Error);
  }

  TEST_CASE("a scatter-add whose row differs per column: upcast lanes take their own rows") {
    // out[row * H + h] += vals[t * H + h] with row = rows[t * H + h] (plus V when negative),
    // gated by 0 <= row < V: the upcast lanes of h load different rows, so their addresses and
    // gates are computed lane by lane from the loaded vector.
    const int64_t V = 5, H = 8, T = 6;
    std::vector<int32_t> rows(T * H);
    std::vector<float> vals(T * H);
    for (int64_t i = 0; i < T * H; ++i) {
      rows[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7 + i / H) % 13) - 6; // -6..6
      vals[static_cast<size_t>(i)] = static_cast<float>(i % 11) - 5;
    }
    auto out = buf(0, dtypes::float32, V * H), rb = buf(1, dtypes::int32, T * H),
         vb = buf(2, dtypes::float32, T * H);
    auto h = rng(H, 0), t = rng(T, 1, AxisType::Sequential);
    UOpPtr row = ld(rb, t * H + h).get()->cast(dtypes::index);
    row = row->lt(idx_const(0)).get()->where(row + V, row);
    const UOpPtr valid = idx_const(-1)->lt(row).get()->alu(Ops::AND, {row->lt(idx_const(V))});
    const UOpPtr i = UOp::make(Ops::INDEX, out->dtype, {out, row * H + h, valid});
    const UOpPtr old = UOp::make(Ops::LOAD, dtypes::float32, {i, UOp::const_(dtypes::float32, 0)});
    auto ast = UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {i, old + ld(vb, t * H + h)})});
    std::vector<float> want(V * H, 0.25F);
    for (int64_t k = 0; k < T * H; ++k) {
      int64_t r = rows[static_cast<size_t>(k)];
      if (r < 0) r += V;
      if (r < 0 || r >= V) continue;
      want[static_cast<size_t>(r * H + k % H)] += vals[static_cast<size_t>(k)];
    }
    auto ks = run_all(
        ast, {upcast(0, 4)},
        [&] {
          return std::vector<HostBuf>{HostBuf::of(std::vector<float>(V * H, 0.25F)),
                                      HostBuf::of(rows), HostBuf::of(vals)};
        },
        equals(want));
    CHECK(ks[2].name == "E_2_6_4");
  }

  TEST_CASE("an Opt that does not apply raises tg::Error naming it") {
    auto out = buf(0, dtypes::float32, 64), x = buf(1, dtypes::float32, 64 * 6);
    auto i = rng(64, 0), k = rng(6, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * 6 + k), {k}))});
    auto lower = [&](Opt o) { return lower_kernel_with_opts(ast, target_caps(), {o}); };
    CHECK_THROWS_WITH_AS(lower(upcast(0, 3)), doctest::Contains("Opt(UPCAST, 0, 3)"), Error);
    CHECK_THROWS_WITH_AS(lower(upcast(0, 3)), doctest::Contains("not divisible by 3"), Error);
    CHECK_THROWS_WITH_AS(lower(upcast(1, 2)), doctest::Contains("no axis 1"), Error);
    CHECK_THROWS_WITH_AS(lower(unroll(0, 4)), doctest::Contains("Opt(UNROLL, 0, 4)"), Error);
    CHECK_THROWS_WITH_AS(lower(unroll(1, 2)), doctest::Contains("1 reduce axes"), Error);
    CHECK_THROWS_WITH_AS(lower(upcast(0, 1)), doctest::Contains("at least 2"), Error);
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(ast, cpu_caps(), {{OptOp::LOCAL, 0, 4}}),
                         doctest::Contains("Opt(LOCAL, 0, 4)"), Error); // the CPU has no groups
    // Two in a row: the second counts axes after the first (axis 0 is now 16 long).
    CHECK_NOTHROW(lower_kernel_with_opts(ast, target_caps(), {upcast(0, 4), upcast(0, 4)}));
    CHECK_THROWS_AS(lower_kernel_with_opts(ast, target_caps(), {upcast(0, 4), upcast(0, 32)}),
                    Error);
  }

  TEST_CASE("apply_opt: shift_to splits a range into outer * amount + inner") {
    auto out = buf(0, dtypes::float32, 64), x = buf(1, dtypes::float32, 64 * 8);
    auto i = rng(64, 0), k = rng(8, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * 8 + k), {k}))});
    auto opt = apply_opt(ast, upcast(0, 4), cpu_caps());
    std::vector<const UOp*> ranges;
    for (const UOp* u : opt->toposort())
      if (u->op == Ops::RANGE) ranges.push_back(u);
    REQUIRE(ranges.size() == 3);
    size_t upcasts = 0;
    for (const UOp* r : ranges) {
      const auto& a = std::get<RangeArg>(r->arg);
      if (a.type == AxisType::Upcast) {
        ++upcasts;
        CHECK(r->src[0]->ivmin() == 4);
        CHECK(a.id == 2); // a new id after the existing ones
      }
      if (a.id == 0) CHECK(r->src[0]->ivmin() == 16);
    }
    CHECK(upcasts == 1);
    CHECK(kernel_name(opt) == "r_16_4_8");
    // UNROLL of the whole reduce axis: the REDUCE now lists only the Unroll range.
    auto un = apply_opt(ast, unroll(0, 0), cpu_caps());
    CHECK(kernel_name(un) == "r_64_8");
    for (const UOp* u : un->toposort())
      if (u->op == Ops::REDUCE) {
        REQUIRE(u->src.size() == 2);
        CHECK(std::get<RangeArg>(u->src[1]->arg).type == AxisType::Unroll);
      }
  }

  TEST_CASE("vector ALU through both renderers: WHERE, comparisons, casts, int and float MAX") {
    const int64_t N = 64;
    auto outf = buf(0, dtypes::float32, N), outi = buf(1, dtypes::int32, N),
         outb = buf(2, dtypes::bool_, N), a = buf(3, dtypes::float32, N),
         b = buf(4, dtypes::int32, N);
    auto i = rng(N, 0), j = rng(N, 1), l = rng(N, 2);
    auto av = ld(a, i), bv = ld(b, i);
    auto fb = bv->cast(dtypes::float32);
    auto cond = av->lt(fb);
    auto vf = cond->where(av->maximum(UOp::const_(dtypes::float32, -0.5)), fb * fb);
    auto vb = ld(a, j)
                  ->ne(UOp::const_(dtypes::float32, 1.0))
                  ->alu(Ops::AND, {ld(b, j)->lt(UOp::const_(dtypes::int32, 3))});
    auto ast = UOp::sink(
        {st(outf, i, vf),
         st(outi, l,
            ld(b, l)->maximum(UOp::const_(dtypes::int32, 2)) + ld(a, l)->cast(dtypes::int32)),
         st(outb, j, vb)});
    std::vector<float> af(N);
    std::vector<int32_t> bi(N);
    for (int64_t t = 0; t < N; ++t) {
      af[t] = static_cast<float>((t * 5) % 9) - 4.5f;
      bi[t] = static_cast<int32_t>((t * 3) % 7) - 3;
    }
    run_all(
        ast, {upcast(0, 8), upcast(1, 4), upcast(2, 16)},
        [&] {
          return std::vector<HostBuf>{HostBuf::zeros<float>(N), HostBuf::zeros<int32_t>(N),
                                      HostBuf::zeros<uint8_t>(N), HostBuf::of(af), HostBuf::of(bi)};
        },
        [&](const std::vector<HostBuf>& bufs) {
          auto of = bufs[0].as<float>();
          auto oi = bufs[1].as<int32_t>();
          auto ob = bufs[2].as<uint8_t>();
          for (int64_t t = 0; t < N; ++t) {
            const float fbt = static_cast<float>(bi[t]);
            const float rf = af[t] < fbt ? std::max(af[t], -0.5f) : fbt * fbt;
            REQUIRE(of[t] == rf);
            REQUIRE(oi[t] == std::max(bi[t], 2) + static_cast<int32_t>(af[t]));
            REQUIRE(ob[t] == ((af[t] != 1.0f && bi[t] < 3) ? 1 : 0));
          }
        });
  }

  TEST_CASE("tensor cores are data: tinygrad's CUDA m16n8k16 checks out, a broken one is refused") {
    TensorCore tc;
    tc.dims = {8, 16, 16};
    tc.threads = 32;
    tc.elements_per_thread = {8, 4, 4};
    tc.dtype_in = dtypes::float16;
    tc.dtype_out = dtypes::float32;
    tc.opts = {"u0", "l0", "l0", "l1", "l1", "l1", "u1"};
    tc.swizzle = {
        TensorCore::Operand{{"r1", "r2", "l2", "l3", "l4"}, {"u1", "r3"}, {"l0", "l1", "u0", "r0"}},
        TensorCore::Operand{
            {"r1", "r2", "u0", "l0", "l1"}, {"r0", "r3"}, {"l4", "u1", "l2", "l3"}}};
    CHECK(tc.check() == "");
    CHECK(tc.name() == "WMMA_8_16_16_float16_float32");
    RendererCaps caps;
    caps.tensor_cores = {tc};
    CHECK(tensor_cores_for(caps, dtypes::float16, dtypes::float32).size() == 1);
    CHECK(tensor_cores_for(caps, dtypes::bfloat16, dtypes::float32).empty());
    TensorCore broken = tc;
    broken.threads = 16;
    CHECK(broken.check() == "WMMA_8_16_16_float16_float32: threads must be 2^(local opts)");
    broken = tc;
    broken.swizzle[1].reduce[0] = "l0"; // l0 twice, r0 missing
    CHECK(broken.check().find("the swizzle of B is not a permutation of the axes") !=
          std::string::npos);
    caps.tensor_cores.push_back(broken);
    CHECK_THROWS_WITH_AS(tensor_cores_for(caps, dtypes::float16, dtypes::float32),
                         doctest::Contains("describes a tensor core it cannot have"), Error);
  }
}
