// The CUDA renderer and compiler without a GPU: what the CUDA C looks like for kernels of each
// kind (work groups, shared memory and barriers, float16 and bfloat16 through NVRTC's headers,
// vector structs), the caps the GPU heuristic reads, architectures, NVRTC's PTX and its errors.
#include <doctest/doctest.h>

#include <algorithm>

#include "cuda/cuda_test_util.hpp"
#include "ptx_compiler.hpp"
#include "ptx_renderer.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tg;
using namespace tg::cuda;

namespace {

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// The CUDA C of the last kernel `t` schedules, lowered for sm_90.
std::string cuda_source(const Tensor& t) {
  static CudaRenderer r(caps_for(parse_arch("sm_90")));
  std::string src;
  for (const ScheduleItem& item : t.schedule())
    if (item.kind == ScheduleItem::Kind::Kernel) {
      const LoweredKernel k = lower_kernel(item.ast, r.caps());
      src = r.render(k.name, k.uops);
    }
  return src;
}

// A linearized kernel in which a warp multiplies one 16x16 tile of A (its 8 lanes per thread)
// by a 16x8 tile of B (4 lanes) into C (4 float lanes) with one WMMA: the shape the TC opt
// lowers a matmul to.
std::vector<UOpPtr> wmma_kernel(DType in, const TensorCore& tc) {
  auto ic = [](int64_t v) { return UOp::const_(dtypes::index, v); };
  auto out = UOp::make(Ops::PARAM, dtypes::float32.ptr(128), {}, int64_t{0});
  auto a = UOp::make(Ops::PARAM, in.ptr(256), {}, int64_t{1});
  auto b = UOp::make(Ops::PARAM, in.ptr(128), {}, int64_t{2});
  auto c32 = ic(32), c8 = ic(8), c4 = ic(4);
  auto lane = UOp::make(Ops::SPECIAL, dtypes::index, {c32}, std::string("lidx0"));
  auto ia = UOp::make(Ops::MUL, dtypes::index, {lane, c8});
  auto ib = UOp::make(Ops::MUL, dtypes::index, {lane, c4});
  auto xa = UOp::make(Ops::INDEX, a->dtype, {a, ia});
  auto la = UOp::make(Ops::LOAD, in.vec(8), {xa});
  auto xb = UOp::make(Ops::INDEX, b->dtype, {b, ib});
  auto lb = UOp::make(Ops::LOAD, in.vec(4), {xb});
  auto zero = UOp::const_(dtypes::float32, 0.0);
  auto acc = UOp::make(Ops::VECTORIZE, dtypes::float32.vec(4), {zero, zero, zero, zero});
  auto mma = UOp::make(Ops::WMMA, dtypes::float32.vec(4), {la, lb, acc}, tc.name());
  auto xo = UOp::make(Ops::INDEX, out->dtype, {out, ib});
  auto st = UOp::make(Ops::STORE, dtypes::void_, {xo, mma});
  return {out, a, b, c32, c8, c4, zero, lane, ia, ib, xa, la, xb, lb, acc, mma, xo, st};
}

} // namespace

TEST_SUITE("cuda.renderer") {
  TEST_CASE("architectures: sm_XX, the caps that follow, tensor cores from sm_80") {
    CHECK(parse_arch("sm_90").number() == 90);
    CHECK(parse_arch("sm_86").sm() == "sm_86");
    CHECK(parse_arch("80").compute() == "compute_80");
    CHECK_THROWS_WITH_AS(parse_arch("hopper"), doctest::Contains("sm_80, sm_86"), Error);
    CHECK_THROWS_WITH_AS(parse_arch("sm_35"), doctest::Contains("older than sm_50"), Error);
    const RendererCaps caps = caps_for(parse_arch("sm_90"));
    CHECK(caps.has_local);
    CHECK(caps.has_shared);
    CHECK(caps.local_max == std::array<int64_t, 3>{1024, 1024, 64});
    CHECK(caps.shared_max == 48 * 1024);
    REQUIRE(caps.tensor_cores.size() == 2);
    for (const TensorCore& tc : caps.tensor_cores) {
      CHECK(tc.check() == "");
      CHECK(tc.threads == 32);
      CHECK(tc.dtype_out == dtypes::float32);
    }
    CHECK(caps.tensor_cores[0].name() == "WMMA_8_16_16_float16_float32");
    CHECK(caps.tensor_cores[1].dtype_in == dtypes::bfloat16);
    CHECK(caps_for(parse_arch("sm_75")).tensor_cores.empty());
  }

  TEST_CASE("an elementwise kernel: extern C __global__, launch bounds, block and thread ids") {
    const std::string src = cuda_source(Tensor::randn({4096}) * 2 + 1);
    CHECK(contains(src, "extern \"C\" __global__ void __launch_bounds__("));
    CHECK(contains(src, "blockIdx.x"));
    CHECK(contains(src, "threadIdx.x"));
    CHECK(contains(src, "float* data0"));
    CHECK_FALSE(contains(src, "cuda_fp16.h"));
  }

  TEST_CASE("a long reduction is a grouped reduce through __shared__ memory and __syncthreads") {
    const std::string src = cuda_source(Tensor::randn({1 << 16}).sum());
    CHECK(contains(src, "__shared__ __align__(16) float temp"));
    CHECK(contains(src, "__syncthreads();"));
  }

  TEST_CASE("float16 and bfloat16 through NVRTC's headers, computed in float") {
    const std::string h = cuda_source(Tensor::randn({1024}).cast(dtypes::float16) * 3);
    CHECK(contains(h, "#include <cuda_fp16.h>"));
    CHECK(contains(h, "half* data0"));
    CHECK(contains(h, "__float2half_rn("));
    const std::string b = cuda_source(Tensor::randn({1024}).cast(dtypes::bfloat16).exp());
    CHECK(contains(b, "#include <cuda_bf16.h>"));
    CHECK(contains(b, "__nv_bfloat16* data0"));
    CHECK(contains(b, "__bfloat162float("));
  }

  TEST_CASE("a negative constant after a minus and float16 NaNs with their sign compile") {
    TG_REQUIRE_CUDA_TOOLKIT();
    CudaCompiler c(parse_arch("sm_90"));
    // Bicubic weights subtract negative constants: `x - -2.0f`, never the decrement `x--2.0f`.
    const std::string cubic = cuda_source(
        Tensor::rand({1, 1, 3, 4}).interpolate(Tensor::IntOrTuple{5, 3}, {}, "bicubic"));
    CHECK_FALSE(contains(cubic, "--0x"));
    CHECK_FALSE(c.compile(cubic).empty());
    // Negation flips the sign bit (a NaN keeps its sign), also in float16 computed in float.
    const std::string neg = cuda_source(Tensor::empty({64}).neg());
    CHECK(contains(neg, "^(-2147483647-1)"));
    CHECK_FALSE(c.compile(neg).empty());
    const std::string h = cuda_source((Tensor::randn({64}).neg()).cast(dtypes::float16));
    CHECK(contains(h, "tg_f2h("));
    CHECK_FALSE(c.compile(h).empty());
    const std::string b = cuda_source((Tensor::randn({64}).neg()).cast(dtypes::bfloat16));
    CHECK(contains(b, "tg_f2bf("));
    CHECK_FALSE(c.compile(b).empty());
  }

  TEST_CASE("a matmul loads vectors as aligned structs") {
    const std::string src =
        cuda_source(Tensor::randn({128, 128}).matmul(Tensor::randn({128, 128})));
    CHECK(contains(src, "struct __align__(16) tg_float4 { float v[4]; };"));
    CHECK(contains(src, "threadIdx."));
  }

  TEST_CASE("NVRTC compiles to PTX for the architecture; the identity names version and arch") {
    TG_REQUIRE_CUDA_TOOLKIT();
    CudaCompiler c(parse_arch("sm_90"));
    CHECK(contains(c.identity(), "nvrtc "));
    CHECK(contains(c.identity(), "compute_90"));
    CHECK(contains(c.identity(), "--fmad=false"));
    const std::string src = cuda_source(Tensor::randn({1 << 16}).cast(dtypes::float16).sum());
    const std::vector<uint8_t> ptx = c.compile(src);
    REQUIRE(!ptx.empty());
    CHECK(ptx.back() == 0); // a NUL-terminated string, as cuModuleLoadData takes PTX
    const std::string text(ptx.begin(), ptx.end() - 1);
    CHECK(contains(text, ".target sm_90"));
    CHECK(contains(text, ".entry " + kernel_name_in(src)));
    CHECK(contains(text, "bar.sync"));
    CHECK(c.disassemble(ptx) == text);
    CHECK(test::ptxas(text, "sm_90") == "");
    CudaCompiler c80(parse_arch("sm_80"));
    CHECK(c80.identity() != c.identity()); // the compile cache keeps them apart
  }

  TEST_CASE("nvJitLink links the PTX into a cubin for the GPU") {
    TG_REQUIRE_CUDA_TOOLKIT();
    std::string why;
    if (load_nvjitlink(why) == nullptr) {
      std::printf("cuda test skipped: %s\n", why.c_str());
      return;
    }
    CudaCompiler c(parse_arch("sm_80"), parse_arch("sm_90"));
    CHECK(contains(c.identity(), "nvjitlink"));
    CHECK(contains(c.identity(), "sm_90"));
    const std::vector<uint8_t> cubin = c.compile(cuda_source(Tensor::randn({4096}) + 1));
    REQUIRE(cubin.size() > 4);
    CHECK(cubin[0] == 0x7f); // an ELF file
    CHECK(cubin[1] == 'E');
  }

  TEST_CASE("a build error names the kernel and shows NVRTC's log with the offending line") {
    TG_REQUIRE_CUDA_TOOLKIT();
    const std::string src = "extern \"C\" __global__ void __launch_bounds__(32) "
                            "broken_kernel(float* data0) {\n"
                            "  float x = 1.0f;\n"
                            "  data0[0] = x + undefined_thing;\n"
                            "}\n";
    CudaCompiler c(parse_arch("sm_90"));
    CHECK_THROWS_WITH_AS(c.compile(src), doctest::Contains("building kernel broken_kernel"), Error);
    CHECK_THROWS_WITH_AS(c.compile(src), doctest::Contains("NVRTC's log:"), Error);
    CHECK_THROWS_WITH_AS(c.compile(src),
                         doctest::Contains("line 3:   data0[0] = x + undefined_thing;"), Error);
    CHECK_THROWS_WITH_AS(c.compile(src), doctest::Contains("undefined_thing"), Error);
  }

  TEST_CASE("the tensor cores: a WMMA is mma.sync m16n8k16 (float16 and bfloat16 -> float32)") {
    const RendererCaps caps = caps_for(parse_arch("sm_80"));
    CudaRenderer r(caps);
    for (const TensorCore& tc : caps.tensor_cores) {
      CAPTURE(tc.name());
      const std::string src = r.render("tc_" + tc.dtype_in.name(), wmma_kernel(tc.dtype_in, tc));
      const std::string ptx_in = tc.dtype_in == dtypes::float16 ? "f16" : "bf16";
      CHECK(
          contains(src, "mma.sync.aligned.m16n8k16.row.col.f32." + ptx_in + "." + ptx_in + ".f32"));
      CHECK(contains(src, "__launch_bounds__(32)"));
      if (!test::toolkit_missing().empty()) continue;
      CudaCompiler c(parse_arch("sm_80"));
      const std::string ptx = c.to_ptx(src);
      CHECK(contains(ptx, "mma.sync.aligned.m16n8k16.row.col.f32." + ptx_in + "." + ptx_in));
      CHECK(test::ptxas(ptx, "sm_80") == "");
      CHECK(test::ptxas(ptx, "sm_90") == "");
    }
    // A WMMA of the wrong shape is refused naming what the tensor cores take.
    auto bad = wmma_kernel(dtypes::float32, caps.tensor_cores[0]);
    CHECK_THROWS_WITH_AS(r.render("bad", bad), doctest::Contains("mma.sync m16n8k16"), Error);
  }

  TEST_CASE("the TC heuristic: float16 and bfloat16 matmuls become mma.sync (sm_80, sm_90; CUDA "
            "and PTX renderers)") {
    const bool toolkit = test::toolkit_missing().empty();
    // The CUDA C of `t`'s last kernel lowered by the heuristic for `arch`; with a WMMA, the
    // warp is the first local dimension (32 threads).
    auto lowered = [](const Tensor& t, const char* arch) {
      CudaRenderer r(caps_for(parse_arch(arch)));
      std::string src;
      for (const ScheduleItem& item : t.schedule())
        if (item.kind == ScheduleItem::Kind::Kernel) {
          const LoweredKernel k = lower_kernel(item.ast, r.caps());
          src = r.render(k.name, k.uops);
          if (std::any_of(k.uops.begin(), k.uops.end(),
                          [](const UOpPtr& u) { return u->op == Ops::WMMA; }))
            CHECK(k.local[0] == 32);
        }
      return src;
    };
    for (const char* arch : {"sm_80", "sm_90"})
      for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
        CAPTURE(arch);
        CAPTURE(dt.name());
        const std::string ptx_in = dt == dtypes::float16 ? "f16" : "bf16";
        const std::string mma = "mma.sync.aligned.m16n8k16.row.col.f32." + ptx_in + "." + ptx_in;
        std::vector<std::string> sources{
            lowered(Tensor::empty({64, 96}, dt).matmul(Tensor::empty({96, 80}, dt)), arch)};
        {
          // A shape off the tile: N, M and K padded (TC_OPT=2).
          Context pad{{"TC_OPT", 2}};
          sources.push_back(
              lowered(Tensor::empty({60, 90}, dt).matmul(Tensor::empty({90, 70}, dt)), arch));
        }
        for (const std::string& src : sources) {
          CHECK(contains(src, mma));
          if (!toolkit) continue;
          CudaCompiler c(parse_arch(arch));
          const std::string ptx = c.to_ptx(src);
          CHECK(contains(ptx, mma));
          CHECK(test::ptxas(ptx, arch) == "");
        }
        // The PTX renderer: the same kernel as LLVM IR with the mma.sync as inline assembly.
        PtxRenderer pr(ptx_caps_for(parse_arch(arch)));
        std::string ir;
        for (const ScheduleItem& item :
             Tensor::empty({64, 96}, dt).matmul(Tensor::empty({96, 80}, dt)).schedule())
          if (item.kind == ScheduleItem::Kind::Kernel) {
            const LoweredKernel k = lower_kernel(item.ast, pr.caps());
            ir = pr.render(k.name, k.uops);
          }
        CHECK(contains(ir, "asm \"" + mma));
        const std::string ptx = PtxCompiler(parse_arch(arch)).to_ptx(ir);
        CHECK(contains(ptx, mma));
        if (toolkit) CHECK(test::ptxas(ptx, arch) == "");
        Context off{{"TC", 0}};
        CHECK_FALSE(contains(
            lowered(Tensor::empty({64, 96}, dt).matmul(Tensor::empty({96, 80}, dt)), arch), "mma"));
      }
  }

  TEST_CASE("the PTX renderer: LLVM IR for NVPTX, compiled by LLVM to PTX that ptxas takes") {
    PtxRenderer r(ptx_caps_for(parse_arch("sm_90")));
    CHECK_FALSE(r.caps().has_transcendentals);
    CHECK(r.caps().tensor_cores.size() == 2);
    std::string ir;
    for (const ScheduleItem& item : Tensor::randn({1 << 16}).sum().schedule())
      if (item.kind == ScheduleItem::Kind::Kernel) {
        const LoweredKernel k = lower_kernel(item.ast, r.caps());
        ir = r.render(k.name, k.uops);
      }
    CHECK(contains(ir, "target triple = \"nvptx64-nvidia-cuda\""));
    CHECK(contains(ir, "define ptx_kernel void @"));
    CHECK(contains(ir, "@llvm.nvvm.read.ptx.sreg.tid.x()"));
    for (const ScheduleItem& item : (Tensor::empty({1 << 16}) * 2).schedule())
      if (item.kind == ScheduleItem::Kind::Kernel) {
        const LoweredKernel k = lower_kernel(item.ast, r.caps());
        CHECK(contains(r.render(k.name, k.uops), "@llvm.nvvm.read.ptx.sreg.ctaid.x()"));
      }
    CHECK(contains(ir, "addrspace(3) global"));
    CHECK(contains(ir, "call void @llvm.nvvm.barrier0()"));
    CHECK(contains(ir, "!\"maxntidx\""));
    PtxCompiler c(parse_arch("sm_90"));
    CHECK(contains(c.identity(), "nvptx64 sm_90 +ptx80"));
    const std::string ptx = c.to_ptx(ir);
    CHECK(contains(ptx, ".target sm_90"));
    CHECK(contains(ptx, ".visible .entry "));
    CHECK(contains(ptx, "bar.sync"));
    CHECK(contains(ptx, ".shared"));
    if (test::toolkit_missing().empty()) CHECK(test::ptxas(ptx, "sm_90") == "");
    // A float POW is refused before LLVM's instruction selection would abort on it (the
    // random inputs' own kernels have none).
    int pows = 0;
    for (const ScheduleItem& item : Tensor::randn({64}).pow(Tensor::randn({64})).schedule()) {
      if (item.kind != ScheduleItem::Kind::Kernel) continue;
      const LoweredKernel k = lower_kernel(item.ast, r.caps());
      if (std::none_of(k.uops.begin(), k.uops.end(),
                       [](const UOpPtr& u) { return u->op == Ops::POW; }))
        continue;
      ++pows;
      CHECK_THROWS_WITH_AS(r.render(k.name, k.uops), doctest::Contains("use the CUDA renderer"),
                           Error);
    }
    CHECK(pows >= 1);
    // Negation flips the sign bit (xor), never neg.f32, which drops a NaN's sign on the GPU.
    int negs = 0;
    for (const ScheduleItem& item : Tensor::empty({64}).neg().schedule()) {
      if (item.kind != ScheduleItem::Kind::Kernel) continue;
      const LoweredKernel k = lower_kernel(item.ast, r.caps());
      const std::string neg_ptx = c.to_ptx(r.render(k.name, k.uops));
      CHECK(contains(neg_ptx, "xor.b32"));
      CHECK_FALSE(contains(neg_ptx, "neg.f32"));
      ++negs;
    }
    CHECK(negs == 1);
  }
}
