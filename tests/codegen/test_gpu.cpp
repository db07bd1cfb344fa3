// GPU codegen: the LOCAL, GROUP, GROUPTOP, PADTO and SWAP Opts and their checks against the
// renderer's caps, work-item indices fitted to the device (gidx/lidx, merged and split), grouped
// reduces through local memory and a barrier, the heuristic for devices with work groups.
// Lowered for a GPU's caps on any target; run (against C++ loops) where the target has work
// groups (DEV=CL), and the kernels that need none (PADTO, SWAP) on every target.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "codegen_test_util.hpp"
#include "tg/error.hpp"

using namespace tg;
using namespace tg::codegen_test;

namespace {

Opt opt(OptOp op, int axis, int amount) { return {op, axis, amount}; }

std::string str(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts) s += (s.empty() ? "" : " ") + o.str();
  return s;
}

size_t count_ops(const LoweredKernel& k, Ops op) {
  size_t n = 0;
  for (const auto& u : k.uops) n += u->op == op;
  return n;
}

std::vector<std::string> specials(const LoweredKernel& k) {
  std::vector<std::string> out;
  for (const auto& u : k.uops)
    if (u->op == Ops::SPECIAL)
      out.push_back(std::get<std::string>(u->arg) + "=" + std::to_string(u->src[0]->ivmin()));
  return out;
}

// Whether the target can run kernels with work groups (the caps lowered for are its own then).
bool runs_groups() { return target_caps().has_local; }

std::vector<float> pattern(size_t n, int mod, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + 3) % mod) - offset;
  return v;
}

// out[i] = sum_k x[i * K + k]: R outputs, K long.
UOpPtr row_sums(int64_t R, int64_t K, Ops op = Ops::ADD, DType dt = dtypes::float32) {
  auto out = buf(0, dt, R), x = buf(1, dt, R * K);
  auto i = rng(R, 0), k = rng(K, 1, AxisType::Reduce);
  return UOp::sink({st(out, i, reduce(op, ld(x, i * K + k), {k}))});
}

template <class T> std::vector<T> row_sums_ref(const std::vector<T>& x, int64_t R, int64_t K) {
  std::vector<T> out(R);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t k = 0; k < K; ++k) out[i] += x[i * K + k];
  return out;
}

// out[i, j] = a[i, j] * 2 - b[j] over R x C.
UOpPtr elementwise(int64_t R, int64_t C) {
  auto out = buf(0, dtypes::float32, R * C), a = buf(1, dtypes::float32, R * C),
       b = buf(2, dtypes::float32, C);
  auto i = rng(R, 0), j = rng(C, 1);
  return UOp::sink(
      {st(out, i * C + j, ld(a, i * C + j) * UOp::const_(dtypes::float32, 2.0) - ld(b, j))});
}

// out[i, j] = sum_k a[i, k] * b[k, j].
UOpPtr matmul(int64_t M, int64_t N, int64_t K) {
  auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
       b = buf(2, dtypes::float32, K * N);
  auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
  return UOp::sink(
      {st(out, i * N + j, reduce(Ops::ADD, ld(a, i * K + k) * ld(b, k * N + j), {k}))});
}

std::vector<float> matmul_ref(const std::vector<float>& a, const std::vector<float>& b, int64_t M,
                              int64_t N, int64_t K) {
  std::vector<float> out(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) out[i * N + j] += a[i * K + k] * b[k * N + j];
  return out;
}

} // namespace

TEST_SUITE("codegen.gpu") {

  TEST_CASE("LOCAL splits a Global axis into a work group's items, within the device's limits") {
    const UOpPtr ast = elementwise(32, 64);
    const LoweredKernel k = lower_kernel_with_opts(ast, gpu_caps(), {opt(OptOp::LOCAL, 1, 16)});
    CHECK(k.name == "E_32_4_16");
    // Global axes innermost first: gidx0 is j's outer part, gidx1 is i.
    CHECK(k.global == std::array<int64_t, 3>{4, 32, 1});
    CHECK(k.local == std::array<int64_t, 3>{16, 1, 1});
    CHECK(specials(k) == std::vector<std::string>{"gidx0=4", "gidx1=32", "lidx0=16"});

    auto lower = [&](const RendererCaps& caps, std::vector<Opt> opts) {
      return lower_kernel_with_opts(ast, caps, opts);
    };
    CHECK_THROWS_WITH_AS(lower(cpu_caps(), {opt(OptOp::LOCAL, 0, 4)}),
                         doctest::Contains("Opt(LOCAL, 0, 4)"), OptError);
    CHECK_THROWS_WITH_AS(lower(cpu_caps(), {opt(OptOp::LOCAL, 0, 4)}),
                         doctest::Contains("no work groups (RendererCaps::has_local is false)"),
                         OptError);
    RendererCaps small = gpu_caps();
    small.local_max = {64, 64, 64};
    CHECK_THROWS_WITH_AS(lower(small, {opt(OptOp::LOCAL, 1, 32), opt(OptOp::LOCAL, 0, 4)}),
                         doctest::Contains("a work group of 32x4 = 128 work items exceeds the "
                                           "device's maximum of 64"),
                         OptError);
    CHECK_THROWS_WITH_AS(lower(gpu_caps(), {opt(OptOp::LOCAL, 1, 24)}),
                         doctest::Contains("not divisible by 24"), OptError);
    CHECK_THROWS_WITH_AS(lower(gpu_caps(), {opt(OptOp::LOCAL, 2, 2)}),
                         doctest::Contains("no axis 2"), OptError);
    // A Loop axis always loops inside the work item.
    auto out = buf(0, dtypes::float32, 64), x = buf(1, dtypes::float32, 64);
    auto l = rng(64, 0, AxisType::Loop);
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(UOp::sink({st(out, l, ld(x, l))}), gpu_caps(),
                                                {opt(OptOp::LOCAL, 0, 4)}),
                         doctest::Contains("LOCAL splits a Global axis, not a"), OptError);
  }

  TEST_CASE("GROUP and GROUPTOP: a reduce shared by the work group through local memory") {
    const UOpPtr ast = row_sums(4, 256);
    for (OptOp op : {OptOp::GROUP, OptOp::GROUPTOP}) {
      CAPTURE(opt_op_name(op));
      const LoweredKernel k = lower_kernel_with_opts(ast, gpu_caps(), {opt(op, 0, 16)});
      CHECK(k.name == "r_4_16_16");
      CHECK(k.global == std::array<int64_t, 3>{4, 1, 1});
      CHECK(k.local == std::array<int64_t, 3>{16, 1, 1});
      CHECK(count_ops(k, Ops::DEFINE_LOCAL) == 1);
      CHECK(count_ops(k, Ops::BARRIER) == 1);
      CHECK(k.local_bytes == 16 * 4); // one float per work item of the group
      // The result is the same in every work item: only lidx0 == 0 stores it.
      size_t gated_global_stores = 0;
      for (const auto& u : k.uops)
        if (u->op == Ops::STORE && u->src[0]->src[0]->op == Ops::PARAM)
          gated_global_stores += u->src[0]->src.size() > 2;
      CHECK(gated_global_stores == 1);
    }
    // Upcast lanes each keep their partial result: 4 lanes x 16 work items.
    const LoweredKernel up = lower_kernel_with_opts(
        row_sums(8, 256), gpu_caps(), {opt(OptOp::UPCAST, 0, 4), opt(OptOp::GROUPTOP, 0, 16)});
    CHECK(up.local_bytes == 4 * 16 * 4);

    auto lower = [&](const RendererCaps& caps, std::vector<Opt> opts) {
      return lower_kernel_with_opts(ast, caps, opts);
    };
    CHECK_THROWS_WITH_AS(lower(cpu_caps(), {opt(OptOp::GROUP, 0, 16)}),
                         doctest::Contains("no work groups"), OptError);
    RendererCaps tiny = gpu_caps();
    tiny.shared_max = 32;
    CHECK_THROWS_WITH_AS(lower(tiny, {opt(OptOp::GROUPTOP, 0, 16)}),
                         doctest::Contains("Opt(GROUPTOP, 0, 16)"), OptError);
    CHECK_THROWS_WITH_AS(lower(tiny, {opt(OptOp::GROUPTOP, 0, 16)}),
                         doctest::Contains("the grouped reduce needs 64 bytes of local memory, "
                                           "the device has 32 (RendererCaps::shared_max)"),
                         OptError);
    RendererCaps no_shared = gpu_caps();
    no_shared.has_shared = false;
    CHECK_THROWS_WITH_AS(lower(no_shared, {opt(OptOp::GROUP, 0, 16)}),
                         doctest::Contains("no local memory"), OptError);
    CHECK_THROWS_WITH_AS(lower(gpu_caps(), {opt(OptOp::GROUP, 1, 16)}),
                         doctest::Contains("1 Reduce axes, no axis 1"), OptError);
    // A work group larger than the device takes, counting the group's reduce.
    RendererCaps small = gpu_caps();
    small.local_max = {8, 8, 8};
    CHECK_THROWS_WITH_AS(lower(small, {opt(OptOp::GROUP, 0, 16)}),
                         doctest::Contains("exceeds the device's maximum of 8"), OptError);
    // A reduce inside another reduce's loop cannot be grouped (each iteration would need the
    // group's barrier).
    auto out = buf(0, dtypes::float32, 1), x = buf(1, dtypes::float32, 64);
    auto o = rng(8, 0, AxisType::Reduce), in = rng(8, 1, AxisType::Reduce);
    auto nested = UOp::sink(
        {st(out, rng(1, 2), reduce(Ops::ADD, reduce(Ops::MAX, ld(x, o * 8 + in), {in}), {o}))});
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(nested, gpu_caps(), {opt(OptOp::GROUP, 1, 4)}),
                         doctest::Contains("cannot group a reduce inside another reduce"),
                         OptError);
    CHECK_NOTHROW(lower_kernel_with_opts(nested, gpu_caps(), {opt(OptOp::GROUP, 0, 4)}));
  }

  TEST_CASE("a kernel whose local memory exceeds the device's is refused naming it") {
    // A GroupReduce axis straight from the AST, lowered for a device with 16 bytes.
    auto out = buf(0, dtypes::float32, 1), x = buf(1, dtypes::float32, 64);
    auto g = rng(16, 1, AxisType::GroupReduce), k = rng(4, 2, AxisType::Reduce);
    auto ast = UOp::sink({st(out, rng(1, 0), reduce(Ops::ADD, ld(x, g * 4 + k), {g, k}))});
    RendererCaps tiny = gpu_caps();
    tiny.shared_max = 16;
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(ast, tiny, {}),
                         doctest::Contains("kernel r_1_16_4 needs 64 bytes of work-group memory "
                                           "(DEFINE_LOCAL), the device has 16"),
                         Error);
  }

  TEST_CASE("work-item axes are merged or split to fit the device's dimensions") {
    // Four Global axes, three dimensions: the two innermost merge.
    const int64_t A = 2, B = 3, C = 4, D = 5;
    auto out = buf(0, dtypes::int32, A * B * C * D);
    auto a = rng(A, 0), b = rng(B, 1), c = rng(C, 2), d = rng(D, 3);
    auto flat = ((a * B + b) * C + c) * D + d;
    auto four = UOp::sink({st(out, flat, flat->cast(dtypes::int32))});
    const LoweredKernel merged = lower_kernel_with_opts(four, gpu_caps(), {});
    CHECK(merged.global == std::array<int64_t, 3>{D * C, B, A});
    // An axis beyond its dimension's maximum moves factors into the next dimension.
    RendererCaps narrow = gpu_caps();
    narrow.global_max = {64, 64, 64};
    auto big = buf(0, dtypes::int32, 1024);
    auto i = rng(1024, 0);
    auto one = UOp::sink({st(big, i, i->cast(dtypes::int32))});
    const LoweredKernel split = lower_kernel_with_opts(one, narrow, {});
    CHECK(split.global[0] * split.global[1] * split.global[2] == 1024);
    CHECK(std::max({split.global[0], split.global[1], split.global[2]}) <= 64);
    if (runs_groups()) {
      for (const LoweredKernel* k : {&merged}) {
        std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(A * B * C * D)};
        run_kernel(renderers().front(), *k, bufs);
        std::vector<int32_t> want(A * B * C * D);
        std::iota(want.begin(), want.end(), 0);
        CHECK(bufs[0].as<int32_t>() == want);
      }
      RendererCaps caps = target_caps();
      caps.global_max = {64, 64, 64};
      std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(1024)};
      run_kernel(renderers().front(), lower_kernel_with_opts(one, caps, {}), bufs);
      std::vector<int32_t> want(1024);
      std::iota(want.begin(), want.end(), 0);
      CHECK(bufs[0].as<int32_t>() == want);
    }
  }

  TEST_CASE("PADTO masks the padding: gated loads and stores, the reduce's identity") {
    const int64_t R = 30, K = 30;
    // A max reduce over negative values: padding with 0 instead of -inf would show.
    auto out = buf(0, dtypes::float32, R), x = buf(1, dtypes::float32, R * K);
    auto i = rng(R, 0), k = rng(K, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::MAX, ld(x, i * K + k), {k}))});
    std::vector<float> xv(R * K);
    for (int64_t t = 0; t < R * K; ++t) xv[t] = -1.0f - static_cast<float>((t * 13) % 29);
    std::vector<float> want(R, -std::numeric_limits<float>::infinity());
    for (int64_t y = 0; y < R; ++y)
      for (int64_t t = 0; t < K; ++t) want[y] = std::max(want[y], xv[y * K + t]);
    const std::vector<std::vector<Opt>> cases = {
        {opt(OptOp::PADTO, 0, 32)},                           // the output axis
        {opt(OptOp::PADTO, 1, 32)},                           // the reduce axis
        {opt(OptOp::PADTO, 0, 32), opt(OptOp::UPCAST, 0, 4)}, // padded to divide
        {opt(OptOp::PADTO, 1, 16), opt(OptOp::UNROLL, 0, 4)}};
    for (const auto& opts : cases) {
      CAPTURE(opts[0].str());
      const LoweredKernel lk = lower_kernel_with_opts(ast, target_caps(), opts);
      for (const std::string& r : renderers()) {
        std::vector<HostBuf> bufs{HostBuf::zeros<float>(R), HostBuf::of(xv)};
        run_kernel(r, lk, bufs);
        CHECK(bufs[0].as<float>() == want);
      }
    }
    CHECK(lower_kernel_with_opts(ast, target_caps(), cases[0]).name == "r_32_30");
    auto lower = [&](std::vector<Opt> opts) {
      return lower_kernel_with_opts(ast, target_caps(), opts);
    };
    CHECK_THROWS_WITH_AS(lower({opt(OptOp::PADTO, 0, 128)}),
                         doctest::Contains("more than quadruples the work"), OptError);
    CHECK_THROWS_WITH_AS(lower({opt(OptOp::PADTO, 0, 10)}),
                         doctest::Contains("is a multiple of 10 already"), OptError);
    CHECK_THROWS_WITH_AS(lower({opt(OptOp::PADTO, 2, 32)}),
                         doctest::Contains("output and reduce axes, no axis 2"), OptError);
  }

  TEST_CASE("SWAP exchanges two Global axes") {
    const int64_t R = 8, C = 12;
    const UOpPtr ast = elementwise(R, C);
    const LoweredKernel k = lower_kernel_with_opts(ast, target_caps(), {opt(OptOp::SWAP, 0, 1)});
    CHECK(k.name == "E_12_8");
    auto av = pattern(R * C, 13, 6), bv = pattern(C, 5, 2);
    for (const std::string& r : renderers()) {
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(R * C), HostBuf::of(av), HostBuf::of(bv)};
      run_kernel(r, k, bufs);
      auto o = bufs[0].as<float>();
      for (int64_t t = 0; t < R * C; ++t) REQUIRE(o[t] == av[t] * 2 - bv[t % C]);
    }
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(ast, target_caps(), {opt(OptOp::SWAP, 0, 0)}),
                         doctest::Contains("cannot swap with itself"), OptError);
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(ast, target_caps(), {opt(OptOp::SWAP, 0, 3)}),
                         doctest::Contains("no axis 3 to swap with"), OptError);
    CHECK_THROWS_WITH_AS(lower_kernel_with_opts(ast, target_caps(), {opt(OptOp::THREAD, 0, 2)}),
                         doctest::Contains("THREAD is not implemented"), OptError);
  }

  TEST_CASE("the heuristic with work groups: grouped reduces, local sizes, matvec") {
    if (noopt()) return;
    auto heuristic = [](const UOpPtr& ast) {
      return hand_coded_optimizations(simplify_kernel(ast), gpu_caps());
    };
    // A long reduction into few outputs: the group shares it, and nothing else happens.
    CHECK(str(heuristic(row_sums(1, 4096))) == "Opt(GROUP, 0, 16)");
    CHECK(str(heuristic(row_sums(64, 1024))) == "Opt(GROUP, 0, 16)");
    // Elementwise: upcast i (b broadcasts over it), then local sizes, the broadcast axis first
    // (all 16 of i left, then 8 of j, at most 128 work items).
    CHECK(str(heuristic(elementwise(64, 64))) ==
          "Opt(UPCAST, 0, 4) Opt(LOCAL, 0, 16) Opt(LOCAL, 0, 8)");
    // A matmul: register blocking by upcasts and an unroll, then a work group over both axes.
    CHECK(
        str(heuristic(matmul(64, 64, 64))) ==
        "Opt(UPCAST, 1, 4) Opt(UPCAST, 0, 4) Opt(UNROLL, 0, 4) Opt(LOCAL, 0, 8) Opt(LOCAL, 1, 16)");
    // A matrix-vector product: tinygrad's GROUP 8, LOCAL 4, UPCAST 4 on the rows.
    auto out = buf(0, dtypes::float32, 256), v = buf(1, dtypes::float32, 512),
         w = buf(2, dtypes::float32, 256 * 512);
    auto j = rng(256, 0), k = rng(512, 1, AxisType::Reduce);
    auto matvec = UOp::sink({st(out, j, reduce(Ops::ADD, ld(v, k) * ld(w, j * 512 + k), {k}))});
    CHECK(str(heuristic(matvec)) == "Opt(GROUP, 0, 8) Opt(LOCAL, 0, 4) Opt(UPCAST, 0, 4)");
    {
      // tinygrad's knobs: a warp per row, one row a work item (a factor of 1 is no opt).
      tg::Context warp_rows{{"MV_THREADS_PER_ROW", 32}, {"MV_ROWS_PER_THREAD", 1}};
      CHECK(str(heuristic(matvec)) == "Opt(GROUP, 0, 32) Opt(LOCAL, 0, 4)");
    }
    // NOOPT=1 keeps the plain kernel: no work groups.
    tg::Context plain{{"NOOPT", 1}};
    const LoweredKernel k0 = lower_kernel(row_sums(1, 4096), gpu_caps());
    CHECK(k0.local == std::array<int64_t, 3>{1, 1, 1});
    CHECK(count_ops(k0, Ops::BARRIER) == 0);
  }

  TEST_CASE("kernels with work groups give the host's results") {
    if (!runs_groups()) return;
    const std::string r = renderers().front();
    // Grouped sums, with and without upcast lanes, GROUP and GROUPTOP.
    for (const auto& opts : std::vector<std::vector<Opt>>{
             {opt(OptOp::GROUPTOP, 0, 16)},
             {opt(OptOp::GROUP, 0, 32)},
             {opt(OptOp::UPCAST, 0, 4), opt(OptOp::GROUPTOP, 0, 16), opt(OptOp::UNROLL, 0, 4)},
             {opt(OptOp::LOCAL, 0, 4), opt(OptOp::GROUPTOP, 0, 8)}}) {
      CAPTURE(opts[0].str());
      const int64_t R = 8, K = 1024;
      std::vector<float> xv = pattern(R * K, 17, 8);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(R), HostBuf::of(xv)};
      const LoweredKernel k = lower_kernel_with_opts(row_sums(R, K), target_caps(), opts);
      run_kernel(r, k, bufs);
      CHECK(bufs[0].as<float>() == row_sums_ref(xv, R, K));
    }
    // A grouped max over -inf and negative values, and an int sum, by the heuristic.
    {
      const MaxReduceCase m = max_reduce_case(4, 512);
      const LoweredKernel k = lower_kernel(m.ast, target_caps());
      CHECK(count_ops(k, Ops::BARRIER) >= 1);
      std::vector<HostBuf> bufs = m.buffers();
      run_kernel(r, k, bufs);
      m.check(bufs);
    }
    // Elementwise and matmul with the heuristic's local sizes.
    {
      auto av = pattern(64 * 64, 13, 6), bv = pattern(64, 5, 2);
      const LoweredKernel k = lower_kernel(elementwise(64, 64), target_caps());
      CHECK(k.local[0] * k.local[1] * k.local[2] > 1);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(64 * 64), HostBuf::of(av), HostBuf::of(bv)};
      run_kernel(r, k, bufs);
      auto o = bufs[0].as<float>();
      for (int64_t t = 0; t < 64 * 64; ++t) REQUIRE(o[t] == av[t] * 2 - bv[t % 64]);
    }
    {
      const int64_t M = 64, N = 48, K = 32;
      auto av = pattern(M * K, 5, 2), bv = pattern(K * N, 3, 1);
      const LoweredKernel k = lower_kernel(matmul(M, N, K), target_caps());
      CHECK(k.local[0] * k.local[1] * k.local[2] > 1);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(M * N), HostBuf::of(av), HostBuf::of(bv)};
      run_kernel(r, k, bufs);
      CHECK(bufs[0].as<float>() == matmul_ref(av, bv, M, N, K));
    }
  }
}
