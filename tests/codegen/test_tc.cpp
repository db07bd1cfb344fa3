// The TC opt (tensor cores). Numerically on the CPU through a single-thread tensor core (a 4x2
// by 2x2 tile of multiply-adds, codegen's single_thread_wmma pass) added to the CPU's caps:
// matmuls that fit the tile, ones PADTO pads to it, a sum over two reduce axes, the shape
// without WMMA, and the heuristic choosing it. CUDA's m16n8k16 (32 threads) by its fragment
// layout against PTX's and by lowering for a GPU's caps: one warp (lidx0 of 32), WMMAs of 8 and
// 4 half lanes into 4 float lanes; tests/cuda compiles such kernels to mma.sync.
#include <doctest/doctest.h>

#include "codegen_test_util.hpp"
#include "tg/beam.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/knobs.hpp"

using namespace tg;
using namespace tg::codegen_test;

namespace {

// N 2, M 4, K 2 in one thread: A's element m*2+k, B's n*2+k, C's m*2+n (tensor_core_layout).
TensorCore cpu_tc(DType in = dtypes::float32, DType out = dtypes::float32) {
  TensorCore tc;
  tc.dims = {2, 4, 2};
  tc.threads = 1;
  tc.elements_per_thread = {8, 4, 8};
  tc.dtype_in = in;
  tc.dtype_out = out;
  tc.opts = {"u0", "u1", "u1"};
  tc.swizzle = {TensorCore::Operand{{}, {"r0", "u1", "u2"}, {"u0"}},
                TensorCore::Operand{{}, {"u1", "r0", "u0"}, {"u2"}}};
  return tc;
}

// tinygrad's CUDA m16n8k16 (half -> float), as the cuda plugin describes it.
TensorCore cuda_tc(DType in = dtypes::float16) {
  TensorCore tc;
  tc.dims = {8, 16, 16};
  tc.threads = 32;
  tc.elements_per_thread = {8, 4, 4};
  tc.dtype_in = in;
  tc.dtype_out = dtypes::float32;
  tc.opts = {"u0", "l0", "l0", "l1", "l1", "l1", "u1"};
  tc.swizzle = {
      TensorCore::Operand{{"r1", "r2", "l2", "l3", "l4"}, {"u1", "r3"}, {"l0", "l1", "u0", "r0"}},
      TensorCore::Operand{{"r1", "r2", "u0", "l0", "l1"}, {"r0", "r3"}, {"l2", "l3", "l4", "u1"}}};
  return tc;
}

RendererCaps cpu_tc_caps() {
  RendererCaps c = cpu_caps();
  c.tensor_cores = {cpu_tc()};
  return c;
}

Opt tc_opt(int axis, int tc_opt = 0, int use = 1) {
  return {OptOp::TC, axis, tc_arg({-1, tc_opt, use})};
}

std::vector<float> pattern(size_t n, int mod, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + 3) % mod) - offset;
  return v;
}

size_t count_ops(const UOpPtr& ast, Ops op) {
  size_t n = 0;
  for (const UOp* u : ast->toposort()) n += u->op == op;
  return n;
}

// out[M, N] = a[M, K] @ b[K, N] with small integers (exact in any order).
struct Matmul {
  int64_t M, N, K;
  UOpPtr ast;
  std::vector<float> av, bv, ref;

  Matmul(int64_t m, int64_t n, int64_t k) : M(m), N(n), K(k) {
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
         b = buf(2, dtypes::float32, K * N);
    auto i = rng(M, 0), j = rng(N, 1), r = rng(K, 2, AxisType::Reduce);
    ast =
        UOp::sink({st(out, i * N + j, reduce(Ops::ADD, ld(a, i * K + r) * ld(b, r * N + j), {r}))});
    av = pattern(static_cast<size_t>(M * K), 5, 2);
    bv = pattern(static_cast<size_t>(K * N), 3, 1);
    ref.assign(static_cast<size_t>(M * N), 0.f);
    for (int64_t x = 0; x < M; ++x)
      for (int64_t y = 0; y < N; ++y)
        for (int64_t t = 0; t < K; ++t)
          ref[static_cast<size_t>(x * N + y)] +=
              av[static_cast<size_t>(x * K + t)] * bv[static_cast<size_t>(t * N + y)];
  }

  // Lowered with `opts` (nullopt: the heuristic) for `caps`, run on both renderers.
  LoweredKernel run(const std::optional<std::vector<Opt>>& opts, const RendererCaps& caps) const {
    LoweredKernel k = opts ? lower_kernel_with_opts(ast, caps, *opts) : lower_kernel(ast, caps);
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      CAPTURE(k.name);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(static_cast<size_t>(M * N)), HostBuf::of(av),
                                HostBuf::of(bv)};
      run_kernel(r, k, bufs);
      CHECK(bufs[0].as<float>() == ref);
    }
    return k;
  }
};

} // namespace

TEST_SUITE("codegen.tc") {
  TEST_CASE("CUDA's m16n8k16 fragments lie where PTX's mma.sync puts them") {
    const TensorCore tc = cuda_tc();
    REQUIRE(tc.check() == "");
    for (int64_t lane = 0; lane < 32; ++lane) {
      CAPTURE(lane);
      const TensorCoreLayout l = tensor_core_layout(tc, lane);
      const int64_t group = lane >> 2, tig = lane % 4;
      REQUIRE(l.a.size() == 8);
      REQUIRE(l.b.size() == 4);
      REQUIRE(l.c.size() == 4);
      for (int64_t i = 0; i < 8; ++i) // A 16x16 (row), a0..a7
        CHECK(l.a[i] ==
              std::array<int64_t, 2>{group + 8 * ((i >> 1) & 1), tig * 2 + (i & 1) + 8 * (i >> 2)});
      for (int64_t i = 0; i < 4; ++i) { // B 16x8 (col), b0..b3; C 16x8, c0..c3
        CHECK(l.b[i] == std::array<int64_t, 2>{tig * 2 + (i & 1) + 8 * (i >> 1), group});
        CHECK(l.c[i] == std::array<int64_t, 2>{group + 8 * (i >> 1), tig * 2 + (i & 1)});
      }
    }
    const TensorCore cpu = cpu_tc();
    REQUIRE(cpu.check() == "");
    const TensorCoreLayout l = tensor_core_layout(cpu, 0);
    for (int64_t e = 0; e < 8; ++e) {
      CHECK(l.a[e] == std::array<int64_t, 2>{e / 2, e % 2});
      CHECK(l.c[e] == std::array<int64_t, 2>{e / 2, e % 2});
    }
    for (int64_t e = 0; e < 4; ++e) CHECK(l.b[e] == std::array<int64_t, 2>{e % 2, e / 2});
  }

  TEST_CASE("TC on a single-thread tensor core: matmuls against a plain loop") {
    const RendererCaps caps = cpu_tc_caps();
    const Matmul mm(16, 12, 8);
    // The opt alone: one WMMA per thread, accumulated over K's outer 4.
    UOpPtr k = optimize_kernel(simplify_kernel(mm.ast), {tc_opt(0)}, caps);
    CHECK(count_ops(k, Ops::WMMA) == 1);
    CHECK(count_ops(k, Ops::REDUCE) == 1);
    mm.run(std::vector<Opt>{tc_opt(0)}, caps);
    // With N's and M's outer ranges upcast: several WMMAs per thread; and K unrolled further.
    mm.run(std::vector<Opt>{tc_opt(0), {OptOp::UPCAST, 0, 2}, {OptOp::UPCAST, 1, 3}}, caps);
    mm.run(std::vector<Opt>{tc_opt(0), {OptOp::UNROLL, 0, 2}}, caps);
    mm.run(std::vector<Opt>{tc_opt(0), {OptOp::UPCAST, 1, 2}, {OptOp::UNROLL, 0, 4}}, caps);
    // K the tile's size: no REDUCE left.
    const Matmul small(4, 2, 2);
    k = optimize_kernel(simplify_kernel(small.ast), {tc_opt(0)}, caps);
    CHECK(count_ops(k, Ops::REDUCE) == 0);
    small.run(std::vector<Opt>{tc_opt(0)}, caps);
    // The shape without WMMA (use_tensor_cores 2).
    k = optimize_kernel(simplify_kernel(mm.ast), {tc_opt(0, 0, 2)}, caps);
    CHECK(count_ops(k, Ops::WMMA) == 0);
    mm.run(std::vector<Opt>{tc_opt(0, 0, 2)}, caps);
  }

  TEST_CASE("TC pads N, M and K to the tile at tc_opt 2, and refuses to below") {
    const RendererCaps caps = cpu_tc_caps();
    const Matmul mm(14, 9, 7); // M 14 -> 16, N 9 -> 10, K 7 -> 8
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(mm.ast, caps, {tc_opt(0, 1)}),
                         doctest::Contains("no tensor core of the renderer fits"), OptError);
    const LoweredKernel k = mm.run(std::vector<Opt>{tc_opt(0, 2)}, caps);
    CHECK(k.name == "r_4_5_2_2_2_4"); // M 16/4, N 10/2 outer; the tile's bits; K 8/2 outer
    mm.run(std::vector<Opt>{tc_opt(0, 2), {OptOp::UPCAST, 1, 5}, {OptOp::UPCAST, 0, 2}}, caps);
  }

  TEST_CASE("TC on a sum over two reduce axes: either one is K, the other stays a loop") {
    const RendererCaps caps = cpu_tc_caps();
    const int64_t M = 8, N = 6, K1 = 3, K2 = 4;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K1 * K2),
         b = buf(2, dtypes::float32, K1 * K2 * N);
    auto i = rng(M, 0), j = rng(N, 1), r1 = rng(K1, 2, AxisType::Reduce),
         r2 = rng(K2, 3, AxisType::Reduce);
    auto ast = UOp::sink(
        {st(out, i * N + j,
            reduce(Ops::ADD, ld(a, i * (K1 * K2) + r1 * K2 + r2) * ld(b, (r1 * K2 + r2) * N + j),
                   {r1, r2}))});
    auto av = pattern(static_cast<size_t>(M * K1 * K2), 5, 2),
         bv = pattern(static_cast<size_t>(K1 * K2 * N), 3, 1);
    std::vector<float> ref(static_cast<size_t>(M * N));
    for (int64_t x = 0; x < M; ++x)
      for (int64_t y = 0; y < N; ++y)
        for (int64_t t = 0; t < K1 * K2; ++t)
          ref[static_cast<size_t>(x * N + y)] +=
              av[static_cast<size_t>(x * K1 * K2 + t)] * bv[static_cast<size_t>(t * N + y)];
    // Axis 0: K is r2 (the highest id first), 1: K is r1 (3, padded to 4 at tc_opt 2).
    for (const Opt& o : {tc_opt(0), tc_opt(1, 2)}) {
      CAPTURE(o.str());
      const LoweredKernel k = lower_kernel_with_opts(ast, caps, {o});
      for (const std::string& r : renderers()) {
        std::vector<HostBuf> bufs{HostBuf::zeros<float>(static_cast<size_t>(M * N)),
                                  HostBuf::of(av), HostBuf::of(bv)};
        run_kernel(r, k, bufs);
        CHECK(bufs[0].as<float>() == ref);
      }
    }
    CHECK_THROWS_AS(lower_kernel_with_opts(ast, caps, {tc_opt(1)}), OptError); // 3 needs padding
  }

  TEST_CASE("the heuristic tries tensor cores first; TC=0 turns them off") {
    const RendererCaps caps = cpu_tc_caps();
    const Matmul mm(32, 24, 16);
    const auto opts = hand_coded_optimizations(simplify_kernel(mm.ast), caps);
    REQUIRE(!opts.empty());
    CHECK(opts[0] == tc_opt(0));
    // M's outer 8 (axis 0) by 4, N's outer 12 (axis 1) by 4 (tinygrad's 5, 4, 3, 2); no LOCAL
    // on a CPU.
    CHECK(opts == std::vector<Opt>{tc_opt(0), {OptOp::UPCAST, 0, 4}, {OptOp::UPCAST, 1, 4}});
    CHECK(opts[0].str() == "Opt(TC, 0, (-1, 0, 1))");
    mm.run(std::nullopt, caps);
    {
      Context off{{"TC", 0}};
      const auto plain = hand_coded_optimizations(simplify_kernel(mm.ast), caps);
      CHECK(
          std::none_of(plain.begin(), plain.end(), [](const Opt& o) { return o.op == OptOp::TC; }));
    }
    {
      Context shape_only{{"TC", 2}};
      const auto shape = hand_coded_optimizations(simplify_kernel(mm.ast), caps);
      CHECK(shape[0] == tc_opt(0, 0, 2));
      mm.run(std::nullopt, caps);
    }
    // Inputs the tensor core does not take (int32): no TC.
    auto out = buf(0, dtypes::int32, 64), a = buf(1, dtypes::int32, 64),
         b = buf(2, dtypes::int32, 64);
    auto i = rng(8, 0), j = rng(8, 1), r = rng(8, 2, AxisType::Reduce);
    auto ints =
        UOp::sink({st(out, i * 8 + j, reduce(Ops::ADD, ld(a, i * 8 + r) * ld(b, r * 8 + j), {r}))});
    const auto iopts = hand_coded_optimizations(simplify_kernel(ints), caps);
    CHECK(std::none_of(iopts.begin(), iopts.end(), [](const Opt& o) { return o.op == OptOp::TC; }));
  }

  TEST_CASE("BEAM's actions hold TC where the renderer has tensor cores, first only") {
    const Matmul mm(16, 12, 8);
    const UOpPtr k = simplify_kernel(mm.ast);
    auto has_tc = [](const std::vector<Opt>& v) {
      return std::find(v.begin(), v.end(), tc_opt(0)) != v.end();
    };
    CHECK(has_tc(beam_actions(k, {}, cpu_tc_caps())));
    CHECK_FALSE(has_tc(beam_actions(k, {}, cpu_caps())));
    CHECK_FALSE(has_tc(beam_actions(k, {{OptOp::UPCAST, 0, 2}}, cpu_tc_caps())));
    Context off{{"TC", 0}};
    CHECK_FALSE(has_tc(beam_actions(k, {}, cpu_tc_caps())));
  }

  TEST_CASE(
      "TC refusals name why: not first, tc_select, no product, multi-thread without work groups") {
    const RendererCaps caps = cpu_tc_caps();
    const Matmul mm(16, 12, 8);
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(mm.ast, caps, {{OptOp::UPCAST, 0, 2}, tc_opt(0)}),
                         doctest::Contains("must come first"), OptError);
    CHECK_THROWS_WITH_AS(
        lower_kernel_with_opts(mm.ast, caps, {{OptOp::TC, 0, tc_arg({3, 0, 1})}}),
        doctest::Contains("tc_select must be -1 or one of the renderer's 1 tensor cores"),
        OptError);
    CHECK_THROWS_AS(lower_kernel_with_opts(mm.ast, caps, {tc_opt(5)}), OptError);
    RendererCaps cuda_on_cpu = cpu_caps();
    cuda_on_cpu.tensor_cores = {cuda_tc(dtypes::float32)};
    CHECK_THROWS_AS(lower_kernel_with_opts(mm.ast, cuda_on_cpu, {tc_opt(0)}), OptError);
    auto out = buf(0, dtypes::float32, 64), a = buf(1, dtypes::float32, 64);
    auto i = rng(8, 0), r = rng(8, 1, AxisType::Reduce);
    auto sum = UOp::sink({st(out, i, reduce(Ops::ADD, ld(a, i * 8 + r) + ld(a, r), {r}))});
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(sum, caps, {tc_opt(0)}),
                         doctest::Contains("does not sum a product"), OptError);
    CHECK(tc_arg_of(tc_arg({2, 1, 2})).tc_select == 2);
    CHECK(tc_arg_of(tc_arg({-1, 2, 1})).tc_opt == 2);
    CHECK(tc_arg_of(tc_arg({-1, 2, 2})).use_tensor_cores == 2);
  }

  TEST_CASE("CUDA's m16n8k16 on a GPU's caps: one warp, WMMAs of 8 and 4 half lanes") {
    RendererCaps caps = gpu_caps();
    caps.tensor_cores = {cuda_tc()};
    const int64_t M = 64, N = 32, K = 64;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float16, M * K),
         b = buf(2, dtypes::float16, K * N);
    auto i = rng(M, 0), j = rng(N, 1), r = rng(K, 2, AxisType::Reduce);
    auto prod = (ld(a, i * K + r) * ld(b, r * N + j))->cast(dtypes::float32);
    auto ast = UOp::sink({st(out, i * N + j, reduce(Ops::ADD, prod, {r}))});
    const auto opts = hand_coded_optimizations(simplify_kernel(ast), caps);
    // The tile 16 x 8: M's outer 4 by 4 (then gone), N's outer 4 by 4, no LOCAL left for N.
    CHECK(opts == std::vector<Opt>{tc_opt(0), {OptOp::UPCAST, 0, 4}, {OptOp::UPCAST, 0, 4}});
    const LoweredKernel k = lower_kernel(ast, caps);
    CHECK(k.local == std::array<int64_t, 3>{32, 1, 1});
    size_t wmmas = 0;
    for (const UOpPtr& u : k.uops)
      if (u->op == Ops::WMMA) {
        ++wmmas;
        CHECK(u->dtype == dtypes::float32.vec(4));
        CHECK(u->src[0]->dtype == dtypes::float16.vec(8));
        CHECK(u->src[1]->dtype == dtypes::float16.vec(4));
        CHECK(std::get<std::string>(u->arg) == "WMMA_8_16_16_float16_float32");
      }
    CHECK(wmmas == 16); // 4 x 4 tiles per warp
    // A LOCAL after the TC is a second local dimension; the warp stays lidx0 of 32.
    const LoweredKernel l = lower_kernel_with_opts(ast, caps, {tc_opt(0), {OptOp::LOCAL, 0, 2}});
    CHECK(l.local == std::array<int64_t, 3>{32, 2, 1});
    // The warp is no output axis: UPCAST/PADTO cannot reach it, GROUP is refused.
    const UOpPtr t = optimize_kernel(simplify_kernel(ast), {tc_opt(0)}, caps);
    CHECK(opt_axes(t, false).size() == 2);
    CHECK_THROWS_WITH_AS(optimize_kernel(t, {{OptOp::GROUP, 0, 2}}, caps),
                         doctest::Contains("no grouping with tensor cores"), OptError);
  }
}
