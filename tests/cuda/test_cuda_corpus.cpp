// Every kernel of the codegen suites, and a few hundred of tensor-level programs, lowered for
// CUDA (the GPU heuristic, work groups, shared memory), rendered as CUDA C, compiled by NVRTC
// to PTX and by ptxas to SASS for sm_80 and sm_90.
//
// cuda.codegen_corpus runs in one process after the codegen suites (this binary includes their
// sources; doctest runs files in name order, tests/codegen before tests/cuda): a lowering
// observer records the AST of every kernel they lowered.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <set>

#include "cuda/cuda_test_util.hpp"
#include "ptx_compiler.hpp"
#include "ptx_renderer.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tg;
using namespace tg::cuda;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct RecordedKernel {
  UOpPtr ast;
  std::vector<Opt> opts; // the explicit opts of a kernel lowered for work groups
  bool explicit_gpu_opts = false;
};

struct Recorder {
  std::mutex mu;
  std::vector<RecordedKernel> kernels;
  std::set<std::pair<const UOp*, std::string>> seen;
};

Recorder& recorder() {
  static Recorder r;
  return r;
}

// Installed before main: the codegen suites of this binary lower through it.
const bool g_recording = [] {
  set_lowering_observer(
      [](const UOpPtr& ast, const std::vector<Opt>* opts, const RendererCaps& caps) {
        Recorder& r = recorder();
        std::lock_guard lock(r.mu);
        const bool gpu = opts != nullptr && caps.has_local;
        std::string key;
        if (gpu)
          for (const Opt& o : *opts) key += o.str() + ";";
        if (!r.seen.insert({ast.get(), key}).second) return;
        r.kernels.push_back({ast, gpu ? *opts : std::vector<Opt>{}, gpu});
      });
  return true;
}();

// Lowers every AST for `caps` and renders it; lowering failures of explicit opts (valid for the
// caps a test chose, not for CUDA's) are dropped, every other failure is reported.
std::vector<test::RenderedKernel> render_for_cuda(const std::vector<RecordedKernel>& kernels,
                                                  CudaRenderer& r,
                                                  std::vector<std::string>& failures) {
  std::vector<test::RenderedKernel> out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const RecordedKernel& k = kernels[i];
    const std::string name = "k" + std::to_string(i) + "_";
    try {
      const LoweredKernel heuristic = lower_kernel(k.ast, r.caps());
      out.push_back(test::render_as(r, heuristic, name + heuristic.name));
    } catch (const std::exception& e) {
      failures.push_back("kernel " + kernel_name(k.ast) + " (heuristic): " + e.what());
    }
    if (!k.explicit_gpu_opts) continue;
    LoweredKernel with_opts;
    try {
      with_opts = lower_kernel_with_opts(k.ast, r.caps(), k.opts);
    } catch (const std::exception&) {
      continue;
    }
    try {
      out.push_back(test::render_as(r, with_opts, name + "o_" + with_opts.name));
    } catch (const std::exception& e) {
      failures.push_back("kernel " + with_opts.name + " (explicit opts): " + e.what());
    }
  }
  return out;
}

void check_compiles(const std::vector<test::RenderedKernel>& kernels,
                    std::vector<std::string> failures) {
  test::CompileTimes times;
  const auto compile = test::compile_all(kernels, parse_arch("sm_80"), {"sm_80", "sm_90"}, times);
  MESSAGE("NVRTC: " << times.nvrtc << " s, ptxas: " << times.ptxas << " s");
  failures.insert(failures.end(), compile.begin(), compile.end());
  for (const std::string& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

// The same kernels through the PTX renderer: LLVM's NVPTX target compiles each, ptxas assembles
// every `stride`-th (and each with work-group memory) for sm_80 and sm_90.
void check_ptx_compiles(const std::vector<RecordedKernel>& kernels, size_t stride) {
  PtxRenderer r(ptx_caps_for(parse_arch("sm_80")));
  PtxCompiler compiler(parse_arch("sm_80"));
  std::vector<std::string> failures;
  size_t compiled = 0, assembled = 0, refused = 0;
  double llvm_s = 0, ptxas_s = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string name = "?", ptx;
    try {
      const LoweredKernel k = lower_kernel(kernels[i].ast, r.caps());
      name = k.name;
      const auto t0 = std::chrono::steady_clock::now();
      ptx = compiler.to_ptx(r.render("k" + std::to_string(i) + "_" + k.name, k.uops));
      llvm_s += seconds_since(t0);
      ++compiled;
    } catch (const std::exception& e) {
      if (std::string(e.what()).find("raises floats to a power (POW)") != std::string::npos) {
        ++refused;
        continue;
      }
      failures.push_back("PTX renderer, kernel " + name + ": " + e.what());
      continue;
    }
    if (i % stride != 0 && ptx.find(".shared") == std::string::npos) continue;
    ++assembled;
    const auto t0 = std::chrono::steady_clock::now();
    for (const char* sm : {"sm_80", "sm_90"})
      if (std::string err = test::ptxas(ptx, sm, test::kPtxasFlags); !err.empty())
        failures.push_back("PTX renderer, kernel " + name + ": " + err);
    ptxas_s += seconds_since(t0);
  }
  MESSAGE("PTX renderer: " << compiled << " kernels through LLVM NVPTX (" << llvm_s << " s), "
                           << assembled << " through ptxas (" << ptxas_s << " s), " << refused
                           << " refused (float POW)");
  for (const std::string& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

// Tensor-level programs: the kernels their schedules hold.
std::vector<RecordedKernel> tensor_program_kernels() {
  std::vector<Tensor> outs;
  auto add = [&](const Tensor& t) { outs.push_back(t); };
  const std::string dev = "CPU";
  // Inputs are buffers (empty tensors), so each program's own kernels are what is scheduled.
  auto input = [&](const Shape& shape, DType dt = dtypes::float32) {
    return Tensor::empty(shape, dt, dev);
  };
  for (DType dt : {dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::int32, dtypes::uint8,
                   dtypes::int64, dtypes::float64, dtypes::int8, dtypes::bool_}) {
    Tensor a = input({257}, dt), b = input({257}, dt), m = input({33, 65}, dt);
    add(a.maximum(b));
    add(a.lt(b).where(a, b));
    add(a.eq(b));
    add(a.cast(dtypes::float32));
    add(a.cast(dtypes::float16));
    add(a.cast(dtypes::bfloat16));
    add(a.cast(dtypes::int32));
    add(a.cast(dtypes::bool_));
    add(m.max({1}));
    add(m.transpose(0, 1).contiguous());
    add(m.flip({0}));
    if (dt.is_bool()) continue;
    add(a + b);
    add(a * b - a);
    add(a.sum());
    add(m.sum({0}));
    add(m.cumsum(1));
    add(m.pad(std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {3, 0}}));
    if (dt.is_float()) {
      add(a.exp());
      add(a.log2());
      add(a.sqrt());
      add(a.sin());
      add(a.div(b));
      add(a.sigmoid());
      add(a.isnan());
      add(a.pow(b));
      add(m.softmax(1));
      add(m.mean({1}));
      add(m.argmax(1));
      add(input({64, 96}, dt).matmul(input({96, 80}, dt)));
    } else {
      add(a.idiv(b));
      add(a.mod(b));
      add(a.bitwise_and(b));
      add(a.bitwise_xor(b));
      add(a.rshift(b));
      add(a.pow(b));
    }
  }
  Tensor x = input({64, 96}), y = input({96, 80});
  add(input({256, 256}).matmul(input({256, 256})));
  add(input({4, 33, 17}).matmul(input({4, 17, 9})));
  add(input({1, 4096}).matmul(input({4096, 512})));
  add(input({512, 4096}).matmul(input({4096, 1})));
  add(x.log_softmax(0));
  add(x.var());
  add(x.layer_norm({96}));
  add(x.relu().gelu().silu().tanh());
  add(Tensor::cat({x, x * 2}, 0));
  add(input({1 << 16}).sum());
  add(input({1 << 16}, dtypes::float16).sum());
  add(input({1 << 20}).max());
  add(input({3, 1 << 14}).sum({1}));
  Tensor img = input({2, 3, 16, 16}), w = input({8, 3, 3, 3});
  add(img.conv2d(w));
  add(img.conv2d(w, {}, 2, 1));
  add(input({4, 16, 14, 14}).conv2d(input({32, 16, 3, 3})));
  add(img.max_pool2d(2));
  add(img.avg_pool2d(2));
  add(img.cast(dtypes::float16).conv2d(w.cast(dtypes::float16)));
  Tensor idx = input({32}, dtypes::int32);
  add(x.gather(0, idx.reshape({32, 1}).expand({32, 96})));
  add(idx.one_hot(64));
  add(Tensor::randn({1000}, dtypes::float32, dev));
  // Autograd of a small network: its backward kernels.
  Tensor wt = input({96, 10}).requires_grad_(true);
  Tensor loss = x.matmul(wt).log_softmax(1).mean();
  loss.backward();
  add(wt.grad());
  Tensor q = input({2, 4, 16, 32});
  add(q.scaled_dot_product_attention(q, q));
  // Resampling, special functions and data-dependent stores: the kernels with the most
  // constants (negative ones too), selects and index arithmetic.
  Tensor im = input({1, 2, 7, 9});
  for (const char* mode : {"nearest", "bilinear", "bicubic", "area"})
    add(im.interpolate(Tensor::IntOrTuple{5, 13}, {}, mode));
  add(im.interpolate(Tensor::IntOrTuple{5, 13}, {}, "bicubic", true));
  add(im.cast(dtypes::uint8).interpolate(Tensor::IntOrTuple{11, 4}, {}, "bilinear"));
  for (DType dt : {dtypes::float32, dtypes::float16, dtypes::bfloat16}) {
    Tensor a = input({257}, dt), b = input({257}, dt);
    add(a.copysign(b));
    add(a.neg());
    add(a.nan_to_num());
  }
  Tensor v = input({300});
  add(v.erf());
  add(v.erfinv());
  add(v.lgamma());
  add(v.atan2(input({300})));
  add(x.cumprod(1));
  add(x.topk(5, 1).values);
  add(x.scatter_add(0, idx.reshape({32, 1}).expand({32, 96}), input({32, 96})));

  std::vector<RecordedKernel> kernels;
  std::set<const UOp*> seen;
  for (const ScheduleItem& item : Tensor::schedule_all(outs))
    if (item.kind == ScheduleItem::Kind::Kernel && seen.insert(item.ast.get()).second)
      kernels.push_back({item.ast, {}, false});
  return kernels;
}

} // namespace

TEST_SUITE("cuda.codegen_corpus") {
  TEST_CASE("every kernel of the codegen suites compiles for CUDA (NVRTC, ptxas sm_80, sm_90)") {
    TG_REQUIRE_CUDA_TOOLKIT();
    std::vector<RecordedKernel> kernels;
    {
      std::lock_guard lock(recorder().mu);
      kernels = recorder().kernels;
    }
    set_lowering_observer({}); // the CUDA lowerings below are not part of the corpus
    MESSAGE("recorded " << kernels.size() << " kernel ASTs");
    REQUIRE_MESSAGE(kernels.size() >= 50,
                    "the codegen suites must run first in this process (ctest runs "
                    "--test-suite=codegen.*,cuda.codegen_corpus)");
    CudaRenderer r(caps_for(parse_arch("sm_80")));
    std::vector<std::string> failures;
    const auto rendered = render_for_cuda(kernels, r, failures);
    MESSAGE("codegen corpus: " << kernels.size() << " ASTs, " << rendered.size()
                               << " CUDA kernels");
    check_compiles(rendered, failures);
    check_ptx_compiles(kernels, 8);
  }
}

TEST_SUITE("cuda.tensor_corpus") {
  TEST_CASE("kernels of tensor programs compile for CUDA (NVRTC, ptxas sm_80, sm_90)") {
    TG_REQUIRE_CUDA_TOOLKIT();
    set_lowering_observer({});
    auto t0 = std::chrono::steady_clock::now();
    const std::vector<RecordedKernel> kernels = tensor_program_kernels();
    MESSAGE("scheduling: " << seconds_since(t0) << " s");
    CHECK(kernels.size() >= 100);
    CudaRenderer r(caps_for(parse_arch("sm_80")));
    std::vector<std::string> failures;
    t0 = std::chrono::steady_clock::now();
    const auto rendered = render_for_cuda(kernels, r, failures);
    MESSAGE("tensor corpus: " << rendered.size() << " CUDA kernels, lowered and rendered in "
                              << seconds_since(t0) << " s");
    check_compiles(rendered, failures);
    check_ptx_compiles(kernels, 8);
  }
}
