// BEAM (tg/beam.hpp): random legal Opt lists on elementwise, reduce, matmul, convolution (valid,
// and padded through gated loads) and broadcast-reduce kernels give NOOPT's results (every Opt kind
// BEAM may apply on the suites' device exercised); the disk cache round-trips and ignores a corrupt
// entry with a warning; BEAM=2 on a small matmul picks a timed candidate, computes the product, and
// a second run searches nothing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "codegen_test_util.hpp"
#include "tg/beam.hpp"
#include "tg/knobs.hpp"

using namespace tg;
using namespace tg::codegen_test;
namespace fs = std::filesystem;

namespace {

// Small integers, so that every summation order gives the same float32 result.
HostBuf ints(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + seed * 3) % 7 - 3);
  return HostBuf::of(v);
}

struct Case {
  std::string what;
  UOpPtr ast;
  std::vector<HostBuf> bufs; // slot 0 the output
  std::vector<float> expect; // slot 0 computed on the host, where given
};

// out[i, j] = a[i, j] * 2 + b[i, j] on (24, 40).
Case elementwise() {
  const int64_t R = 24, C = 40;
  auto out = buf(0, dtypes::float32, R * C), a = buf(1, dtypes::float32, R * C),
       b = buf(2, dtypes::float32, R * C);
  auto i = rng(R, 0), j = rng(C, 1);
  auto x = i * C + j;
  return {"elementwise",
          UOp::sink({st(out, x, ld(a, x) * UOp::const_(dtypes::float32, 2.0) + ld(b, x))}),
          {HostBuf::zeros<float>(R * C), ints(R * C, 1), ints(R * C, 2)}};
}

// Row sums of a (20, 48) matrix.
Case row_sum() {
  const int64_t R = 20, C = 48;
  auto out = buf(0, dtypes::float32, R), a = buf(1, dtypes::float32, R * C);
  auto i = rng(R, 0), k = rng(C, 1, AxisType::Reduce);
  return {"reduce",
          UOp::sink({st(out, i, reduce(Ops::ADD, ld(a, i * C + k), {k}))}),
          {HostBuf::zeros<float>(R), ints(R * C, 3)}};
}

// (M, K) @ (K, N) with M, K, N = 16, 24, 20.
Case matmul(int64_t M = 16, int64_t K = 24, int64_t N = 20) {
  auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
       b = buf(2, dtypes::float32, K * N);
  auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
  return {
      "matmul",
      UOp::sink({st(out, i * N + j, reduce(Ops::ADD, ld(a, i * K + k) * ld(b, k * N + j), {k}))}),
      {HostBuf::zeros<float>(M * N), ints(M * K, 4), ints(K * N, 5)}};
}

// A 3x3 convolution, 3 -> 4 channels on 10x10 (valid): out[o, y, x].
Case conv() {
  const int64_t C = 3, O = 4, H = 10, W = 10, KS = 3, OH = H - KS + 1, OW = W - KS + 1;
  auto out = buf(0, dtypes::float32, O * OH * OW), in = buf(1, dtypes::float32, C * H * W),
       w = buf(2, dtypes::float32, O * C * KS * KS);
  auto o = rng(O, 0), y = rng(OH, 1), x = rng(OW, 2);
  auto c = rng(C, 3, AxisType::Reduce), ky = rng(KS, 4, AxisType::Reduce),
       kx = rng(KS, 5, AxisType::Reduce);
  auto v = ld(in, c * (H * W) + (y + ky) * W + (x + kx)) *
           ld(w, o * (C * KS * KS) + c * (KS * KS) + ky * KS + kx);
  return {"conv",
          UOp::sink({st(out, o * (OH * OW) + y * OW + x, reduce(Ops::ADD, v, {c, ky, kx}))}),
          {HostBuf::zeros<float>(O * OH * OW), ints(C * H * W, 6), ints(O * C * KS * KS, 7)}};
}

// A 3x3 convolution with padding 1, 3 -> 4 channels on 8x8, over a padded view as conv2d
// builds it: each tap's load gated by the image's bounds (reduce_bounds bounds the tap loops
// where no Opt splits the pixels into lanes).
Case padded_conv() {
  const int64_t C = 3, O = 4, H = 8, W = 8, KS = 3;
  auto out = buf(0, dtypes::float32, O * H * W), in = buf(1, dtypes::float32, C * H * W),
       w = buf(2, dtypes::float32, O * C * KS * KS);
  auto o = rng(O, 0), y = rng(H, 1), x = rng(W, 2);
  auto c = rng(C, 3, AxisType::Reduce), ky = rng(KS, 4, AxisType::Reduce),
       kx = rng(KS, 5, AxisType::Reduce);
  auto iy = y + ky - 1, ix = x + kx - 1, minus1 = UOp::const_(dtypes::index, int64_t{-1});
  auto valid = minus1->lt(iy)
                   ->alu(Ops::AND, {iy->lt(UOp::const_(dtypes::index, H))})
                   ->alu(Ops::AND, {minus1->lt(ix)})
                   ->alu(Ops::AND, {ix->lt(UOp::const_(dtypes::index, W))});
  auto zero = UOp::const_(dtypes::float32, 0.0);
  auto xi = UOp::make(Ops::INDEX, in->dtype, {in, c * (H * W) + iy * W + ix, valid});
  auto tap = valid->where(UOp::make(Ops::LOAD, dtypes::float32, {xi, zero}), zero);
  auto v = tap * ld(w, o * (C * KS * KS) + c * (KS * KS) + ky * KS + kx);
  Case r{"padded conv",
         UOp::sink({st(out, o * (H * W) + y * W + x, reduce(Ops::ADD, v, {c, ky, kx}))}),
         {HostBuf::zeros<float>(O * H * W), ints(C * H * W, 10), ints(O * C * KS * KS, 11)},
         {}};
  const std::vector<float> iv = r.bufs[1].as<float>(), wv = r.bufs[2].as<float>();
  for (int64_t oo = 0; oo < O; ++oo)
    for (int64_t yy = 0; yy < H; ++yy)
      for (int64_t xx = 0; xx < W; ++xx) {
        float acc = 0;
        for (int64_t cc = 0; cc < C; ++cc)
          for (int64_t a = 0; a < KS; ++a)
            for (int64_t b = 0; b < KS; ++b) {
              const int64_t py = yy + a - 1, px = xx + b - 1;
              if (py >= 0 && py < H && px >= 0 && px < W)
                acc += iv[static_cast<size_t>(cc * H * W + py * W + px)] *
                       wv[static_cast<size_t>(((oo * C + cc) * KS + a) * KS + b)];
            }
        r.expect.push_back(acc);
      }
  return r;
}

// out[i, j] = sum_k a[k, j] * v[i]: v broadcast along j and k, a along i.
Case broadcast_reduce() {
  const int64_t I = 12, J = 32, K = 20;
  auto out = buf(0, dtypes::float32, I * J), a = buf(1, dtypes::float32, K * J),
       v = buf(2, dtypes::float32, I);
  auto i = rng(I, 0), j = rng(J, 1), k = rng(K, 2, AxisType::Reduce);
  return {"broadcast reduce",
          UOp::sink({st(out, i * J + j, reduce(Ops::ADD, ld(a, k * J + j) * ld(v, i), {k}))}),
          {HostBuf::zeros<float>(I * J), ints(K * J, 8), ints(I, 9)}};
}

// The Opt kinds BEAM may apply on renderers with these caps.
std::set<OptOp> beam_ops(const RendererCaps& caps) {
  std::set<OptOp> ops{OptOp::UPCAST, OptOp::UNROLL, OptOp::PADTO, OptOp::SWAP};
  if (caps.has_local) ops.insert(OptOp::LOCAL);
  if (caps.has_local && caps.has_shared) ops.insert({OptOp::GROUP, OptOp::GROUPTOP});
  return ops;
}

// A scoped TG_CACHE_DIR in a fresh folder, removed at the end.
struct TempCache {
  fs::path dir;
  Context ctx;
  explicit TempCache(const std::string& name)
      : dir(fs::temp_directory_path() / ("tg_beam_" + name + "_" + std::to_string(::getpid()))),
        ctx({{"TG_CACHE_DIR", dir.string()}, {"IGNORE_BEAM_CACHE", 0}}) {
    fs::remove_all(dir);
  }
  ~TempCache() { fs::remove_all(dir); }
};

// Device copies of a case's buffers for a BeamTarget, freed at the end.
struct DeviceBufs {
  Device& dev;
  std::vector<BeamBuffer> bufs;
  DeviceBufs(Device& d, const std::vector<HostBuf>& host) : dev(d) {
    for (const HostBuf& h : host) {
      DevicePtr p = dev.allocator().alloc(h.bytes.size());
      dev.allocator().copy_in(p, h.bytes.data(), h.bytes.size());
      bufs.push_back({p, h.bytes.size()});
    }
  }
  ~DeviceBufs() {
    for (const BeamBuffer& b : bufs) dev.allocator().free(b.ptr, b.bytes);
  }
  std::vector<uint8_t> read(size_t slot) const {
    std::vector<uint8_t> out(bufs[slot].bytes);
    dev.allocator().copy_out(out.data(), bufs[slot].ptr, out.size());
    return out;
  }
};

// Captures what is written to std::cerr while alive.
struct CaptureCerr {
  std::ostringstream text;
  std::streambuf* old;
  CaptureCerr() : old(std::cerr.rdbuf(text.rdbuf())) {}
  ~CaptureCerr() { std::cerr.rdbuf(old); }
};

} // namespace

TEST_SUITE("codegen.beam") {
  TEST_CASE("random legal Opt lists give NOOPT's results on six kinds of kernel") {
    const RendererCaps& caps = target_caps();
    const std::string renderer = renderers().front();
    const std::set<OptOp> wanted = beam_ops(caps);
    std::set<OptOp> exercised;
    std::mt19937 gen(20260117);
    const int trials = on_cpu() ? 10 : 4;
    for (Case (*make)() :
         {elementwise, row_sum, +[] { return matmul(); }, conv, padded_conv, broadcast_reduce}) {
      Case c = make();
      CAPTURE(c.what);
      std::vector<HostBuf> ref = c.bufs;
      run_ast_opts(c.ast, renderer, ref, {}, caps);
      if (!c.expect.empty()) REQUIRE(ref[0].as<float>() == c.expect);
      const UOpPtr root = simplify_kernel(c.ast);
      for (int t = 0; t < trials; ++t) {
        std::vector<Opt> opts;
        const int depth = 1 + static_cast<int>(gen() % 4);
        for (int d = 0; d < depth; ++d) {
          std::vector<Opt> acts = beam_actions(root, opts, caps);
          if (acts.empty()) break;
          // An Opt kind first, then one of its actions, so rare kinds (SWAP) come up too.
          std::vector<OptOp> kinds;
          for (const Opt& a : acts)
            if (std::find(kinds.begin(), kinds.end(), a.op) == kinds.end()) kinds.push_back(a.op);
          const OptOp kind = kinds[gen() % kinds.size()];
          std::vector<Opt> of_kind;
          for (const Opt& a : acts)
            if (a.op == kind) of_kind.push_back(a);
          opts.push_back(of_kind[gen() % of_kind.size()]);
        }
        std::string list;
        for (const Opt& o : opts) list += o.str() + " ";
        CAPTURE(list);
        std::vector<HostBuf> got = c.bufs;
        run_ast_opts(c.ast, renderer, got, opts, caps);
        REQUIRE(got[0].as<float>() == ref[0].as<float>());
        for (const Opt& o : opts) exercised.insert(o.op);
      }
    }
    for (OptOp op : wanted) {
      CAPTURE(opt_op_name(op));
      CHECK(exercised.count(op) == 1);
    }
  }

  TEST_CASE("beam_actions: every action applies, within BEAM_UPCAST_MAX, none twice") {
    const RendererCaps& caps = target_caps();
    Case c = matmul();
    const UOpPtr root = simplify_kernel(c.ast);
    std::vector<Opt> acts = beam_actions(root, {}, caps);
    REQUIRE(!acts.empty());
    std::set<const UOp*> kernels;
    std::vector<UOpPtr> alive; // so no address is reused by a later kernel
    for (const Opt& a : acts) {
      CAPTURE(a.str());
      alive.push_back(apply_opt(root, a, caps));
      CHECK(kernels.insert(alive.back().get()).second);
    }
    Context small{{"BEAM_UPCAST_MAX", 4}};
    for (const Opt& a : beam_actions(root, {}, caps))
      if (a.op == OptOp::UPCAST || a.op == OptOp::UNROLL) CHECK((a.amount >= 2 && a.amount <= 4));
  }

  TEST_CASE("the BEAM cache round-trips and ignores a corrupt entry with a warning") {
    TempCache cache("roundtrip");
    const std::vector<Opt> opts{{OptOp::UPCAST, 1, 4}, {OptOp::UNROLL, 0, 0}, {OptOp::SWAP, 0, 1}};
    const std::string key = "beam test key\nwith lines\n";
    CHECK(!beam_cache_load(key).has_value()); // no entry: a quiet miss
    beam_cache_store(key, opts);
    REQUIRE(beam_cache_load(key).has_value());
    CHECK(*beam_cache_load(key) == opts);
    CHECK(!beam_cache_load("another key").has_value());

    const std::string path = beam_cache_path(key);
    REQUIRE(fs::exists(path));
    // A flipped byte in the result, then a truncated file, then garbage.
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (const std::string& bad : {bytes.substr(0, bytes.size() - 1) + "Z",
                                   bytes.substr(0, bytes.size() / 2), std::string("garbage")}) {
      { std::ofstream(path, std::ios::binary | std::ios::trunc) << bad; }
      CaptureCerr err;
      CHECK(!beam_cache_load(key).has_value());
      CHECK(err.text.str().find("BEAM cache entry " + path + " is corrupt") != std::string::npos);
    }

    // The search replaces a corrupt entry with its result (a small kernel: few candidates).
    const int64_t n = 16;
    auto out = buf(0, dtypes::float32, n), a = buf(1, dtypes::float32, n);
    auto i = rng(n, 0);
    Case c{"scale",
           UOp::sink({st(out, i, ld(a, i) * UOp::const_(dtypes::float32, 3.0))}),
           {HostBuf::zeros<float>(n), ints(n, 1)}};
    DeviceBufs dev(test_device(), c.bufs);
    BeamTarget target{&test_device(), renderers().front(), dev.bufs, {}};
    const std::string kkey = beam_cache_key(c.ast, target, 1);
    fs::create_directories(fs::path(beam_cache_path(kkey)).parent_path());
    { std::ofstream(beam_cache_path(kkey), std::ios::binary) << "TGBEAM01 not an entry"; }
    BeamResult first;
    {
      CaptureCerr err;
      first = beam_optimize(c.ast, target, 1);
      CHECK(err.text.str().find("is corrupt") != std::string::npos);
    }
    CHECK(!first.from_cache);
    CHECK(first.candidates > 0);
    REQUIRE(beam_cache_load(kkey).has_value());
    CHECK(*beam_cache_load(kkey) == first.opts);
    BeamResult second = beam_optimize(c.ast, target, 1);
    CHECK(second.from_cache);
    CHECK(second.opts == first.opts);
  }

  TEST_CASE("BEAM=2 on a small matmul: a timed candidate, the right product, then no search") {
    TempCache cache("matmul");
    // On a device with work groups (POCL compiles each candidate in about 0.5 s) a narrower
    // space: fewer lanes and work items per candidate.
    Context narrow{{"BEAM_UPCAST_MAX", on_cpu() ? 256 : 2},
                   {"BEAM_LOCAL_MAX", on_cpu() ? 1024 : 4}};
    const int64_t M = on_cpu() ? 32 : 8, K = on_cpu() ? 32 : 8, N = on_cpu() ? 32 : 8;
    Case c = matmul(M, K, N);
    DeviceBufs dev(test_device(), c.bufs);
    BeamTarget target{&test_device(), renderers().front(), dev.bufs, {}};
    const std::vector<uint8_t> out_before = dev.read(0);

    const BeamStats s0 = beam_stats();
    BeamResult r = beam_optimize(c.ast, target, 2);
    CHECK(!r.from_cache);
    CHECK(r.rounds >= 1);
    CHECK(r.candidates == static_cast<int64_t>(r.timed.size()));
    CHECK(beam_stats().candidates - s0.candidates == r.candidates);
    // The chosen Opts are among those timed: the fastest of them, or the heuristic's (timed
    // too) when the fastest, timed again beside them, was not clearly faster.
    const RendererCaps& caps = target_caps();
    const std::vector<Opt> heuristic = hand_coded_optimizations(simplify_kernel(c.ast), caps);
    bool chosen_timed = false, heuristic_timed = false;
    double heuristic_s = 0, fastest = std::numeric_limits<double>::infinity();
    for (const BeamCandidate& t : r.timed) {
      CHECK(t.seconds > 0);
      fastest = std::min(fastest, t.seconds);
      if (t.opts == r.opts) chosen_timed = true;
      if (t.opts == heuristic) {
        heuristic_timed = true;
        heuristic_s = t.seconds;
      }
    }
    CHECK(chosen_timed);
    CHECK(heuristic_timed);
    if (r.opts != heuristic) {
      CHECK(r.seconds == fastest);
      CHECK(r.seconds <= heuristic_s);
    }
    CHECK(r.seconds > 0);
    // The search stored into scratch copies, never into the kernel's own output.
    CHECK(dev.read(0) == out_before);

    // The chosen kernel computes the product.
    std::vector<HostBuf> got = c.bufs;
    run_ast_opts(c.ast, renderers().front(), got, r.opts, caps);
    const auto a = c.bufs[1].as<float>(), b = c.bufs[2].as<float>(), out = got[0].as<float>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float want = 0;
        for (int64_t k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
        REQUIRE(out[i * N + j] == want);
      }

    // A second run finds the result on disk and times nothing.
    const BeamStats s1 = beam_stats();
    BeamResult again = beam_optimize(c.ast, target, 2);
    CHECK(again.from_cache);
    CHECK(again.opts == r.opts);
    CHECK(again.candidates == 0);
    CHECK(beam_stats().candidates == s1.candidates);
    CHECK(beam_stats().searches == s1.searches);
    CHECK(beam_stats().cache_hits == s1.cache_hits + 1);
  }

  TEST_CASE("BEAM through the C renderer (clang)") {
    if (!on_cpu()) return; // the suites' device has one renderer
    TempCache cache("clang");
    const int64_t n = 64;
    auto out = buf(0, dtypes::float32, n), a = buf(1, dtypes::float32, n);
    auto i = rng(n, 0);
    Case c{"scale",
           UOp::sink({st(out, i, ld(a, i) * UOp::const_(dtypes::float32, 3.0))}),
           {HostBuf::zeros<float>(n), ints(n, 1)}};
    DeviceBufs dev(test_device(), c.bufs);
    BeamTarget target{&test_device(), "C", dev.bufs, {}};
    BeamResult r = beam_optimize(c.ast, target, 1);
    CHECK(r.candidates > 0);
    std::vector<HostBuf> got = c.bufs;
    run_ast_opts(c.ast, "C", got, r.opts, target_caps());
    const auto x = c.bufs[1].as<float>(), y = got[0].as<float>();
    for (int64_t k = 0; k < n; ++k) REQUIRE(y[k] == x[k] * 3.0f);
  }
}
