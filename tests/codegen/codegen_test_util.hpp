#pragma once
// Building kernel ASTs by hand (the scheduler's output) and running them, lowered, on the
// suites' target: the CPU device through both of its renderers, or the device DEV names
// (DEV=CL: the codegen suites run on OpenCL, label cl) through its default renderer.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "cpu/cpu_test_util.hpp"
#include "tg/codegen.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/device_registry.hpp"
#include "tg/knobs.hpp"

namespace tg::codegen_test {

using cpu::test::HostBuf;

inline UOpPtr idx_const(int64_t v) { return UOp::const_(dtypes::index, v); }
inline UOpPtr rng(int64_t end, int64_t id, AxisType t = AxisType::Global) {
  return UOp::range(idx_const(end), id, t);
}
inline UOpPtr buf(int64_t slot, DType elem, int64_t n) {
  return UOp::make(Ops::PARAM, elem.ptr(n), {}, slot);
}
inline UOpPtr at(const UOpPtr& b, const UOpPtr& i) {
  return UOp::make(Ops::INDEX, b->dtype, {b, i});
}
inline UOpPtr ld(const UOpPtr& b, const UOpPtr& i) {
  return UOp::make(Ops::LOAD, b->dtype.base(), {at(b, i)});
}
inline UOpPtr st(const UOpPtr& b, const UOpPtr& i, const UOpPtr& v) {
  return UOp::make(Ops::STORE, dtypes::void_, {at(b, i), v});
}
inline UOpPtr reduce(Ops op, const UOpPtr& v, std::vector<UOpPtr> ranges) {
  ranges.insert(ranges.begin(), v);
  return UOp::make(Ops::REDUCE, v->dtype, std::move(ranges), ReduceArg{op, {}});
}

// The device the suites run on and the renderers they go through.
struct TestTarget {
  std::shared_ptr<Device> device;
  std::vector<std::string> renderers;
  bool cpu = true;
};
inline const TestTarget& target() {
  static const TestTarget t = [] {
    const std::string dev = knobs::DEV;
    if (dev.empty() || DeviceSpec::parse(dev).device == "CPU")
      // The test binary's CPU device, shared without ownership (it outlives every user).
      return TestTarget{{std::shared_ptr<Device>{}, &cpu::test::device()}, {"LLVM", "C"}, true};
    std::shared_ptr<Device> d = DeviceRegistry::global().open(dev);
    return TestTarget{d, {resolve_renderer(*d, DeviceSpec::parse(dev))}, false};
  }();
  return t;
}
inline const std::vector<std::string>& renderers() { return target().renderers; }
inline bool on_cpu() { return target().cpu; }
inline Device& test_device() { return *target().device; }
// The target's caps (its first renderer's): what the suites lower for.
inline const RendererCaps& target_caps() {
  return test_device().renderer(renderers().front()).caps();
}
// The CPU's caps, for tests about the CPU's heuristics and limits on any target.
inline const RendererCaps& cpu_caps() { return cpu::test::device().renderer("LLVM").caps(); }

// A GPU's caps for lowering without a GPU (what a CUDA device reports): work groups of up to
// 1024 work items (1024 x 1024 x 64), 48 KiB of local memory.
inline RendererCaps gpu_caps() {
  RendererCaps c;
  c.has_local = true;
  c.has_shared = true;
  c.local_max = {1024, 1024, 64};
  c.global_max = {0x7fffffff, 65535, 65535};
  c.shared_max = 48 * 1024;
  return c;
}

// NOOPT=1 in the environment: lower_kernel applies no optimizations.
inline bool noopt() { return knobs::NOOPT != 0; }

// Renders, compiles and loads a lowered kernel with `renderer` on the target, copies `bufs` in,
// launches it over its global and local sizes, and copies every buffer back out.
inline void run_kernel(const std::string& renderer, const LoweredKernel& k,
                       std::vector<HostBuf>& bufs, std::vector<int64_t> vars = {}) {
  Device& dev = test_device();
  const std::string src = dev.renderer(renderer).render(k.name, k.uops);
  auto binary = dev.compiler(renderer).compile(src);
  auto prg = dev.load(k.name, binary);
  Allocator& a = dev.allocator();
  LaunchArgs args;
  for (auto& b : bufs) {
    DevicePtr p = a.alloc(b.bytes.size());
    a.copy_in(p, b.bytes.data(), b.bytes.size());
    args.buffers.push_back(p);
  }
  args.vars = std::move(vars);
  args.global = k.global;
  args.local = k.local;
  prg->run(args, false);
  for (size_t i = 0; i < bufs.size(); ++i) {
    a.copy_out(bufs[i].bytes.data(), args.buffers[i], bufs[i].bytes.size());
    a.free(args.buffers[i], bufs[i].bytes.size());
  }
}

// Lowers `ast` for the target and runs it with `renderer` on `bufs` (copied back).
inline LoweredKernel run_ast(const UOpPtr& ast, const std::string& renderer,
                             std::vector<HostBuf>& bufs, std::vector<int64_t> vars = {}) {
  LoweredKernel k = lower_kernel(ast, target_caps());
  run_kernel(renderer, k, bufs, std::move(vars));
  return k;
}

// The same with explicit Opts (instead of the heuristic) and renderer capabilities.
inline LoweredKernel run_ast_opts(const UOpPtr& ast, const std::string& renderer,
                                  std::vector<HostBuf>& bufs, const std::vector<Opt>& opts,
                                  const RendererCaps& caps, std::vector<int64_t> vars = {}) {
  LoweredKernel k = lower_kernel_with_opts(ast, caps, opts);
  run_kernel(renderer, k, bufs, std::move(vars));
  return k;
}

// Row maxima of an R x C float32 and an int32 matrix, each a REDUCE of its own (outputs in
// slots 0 and 2). The inputs are all negative and the float matrix's first row is -inf, so a
// wrong accumulator identity (0) shows.
struct MaxReduceCase {
  int64_t rows, cols;
  UOpPtr ast;
  std::vector<float> fv;
  std::vector<int32_t> iv;

  std::vector<HostBuf> buffers() const {
    return {HostBuf::zeros<float>(rows), HostBuf::of(fv), HostBuf::zeros<int32_t>(rows),
            HostBuf::of(iv)};
  }
  void check(const std::vector<HostBuf>& bufs) const {
    auto of = bufs[0].as<float>();
    auto oi = bufs[2].as<int32_t>();
    for (int64_t y = 0; y < rows; ++y) {
      REQUIRE(of[y] == *std::max_element(fv.begin() + y * cols, fv.begin() + (y + 1) * cols));
      REQUIRE(oi[y] == *std::max_element(iv.begin() + y * cols, iv.begin() + (y + 1) * cols));
    }
  }
};
inline MaxReduceCase max_reduce_case(int64_t R, int64_t C) {
  MaxReduceCase m{R, C, nullptr, std::vector<float>(R * C), std::vector<int32_t>(R * C)};
  auto outf = buf(0, dtypes::float32, R), xf = buf(1, dtypes::float32, R * C);
  auto outi = buf(2, dtypes::int32, R), xi = buf(3, dtypes::int32, R * C);
  auto i = rng(R, 0), k = rng(C, 1, AxisType::Reduce), k2 = rng(C, 2, AxisType::Reduce);
  m.ast = UOp::sink({st(outf, i, reduce(Ops::MAX, ld(xf, i * C + k), {k})),
                     st(outi, i, reduce(Ops::MAX, ld(xi, i * C + k2), {k2}))});
  for (int64_t t = 0; t < R * C; ++t) {
    m.fv[t] = t < C ? -std::numeric_limits<float>::infinity() : -1000.0f + (t * 37) % 101;
    m.iv[t] = std::numeric_limits<int32_t>::min() + static_cast<int32_t>((t * 13) % 17);
  }
  return m;
}

} // namespace tg::codegen_test
