#pragma once
// Building kernel ASTs by hand (the scheduler's output) and running them, lowered, on the CPU
// device through a renderer.
#include <string>
#include <vector>

#include "cpu/cpu_test_util.hpp"
#include "tg/codegen.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/env.hpp"

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

inline const RendererCaps& cpu_caps() { return cpu::test::device().renderer("LLVM").caps(); }

// NOOPT=1 in the environment: lower_kernel applies no optimizations.
inline bool noopt() { return getenv_int("NOOPT") != 0; }

// Lowers `ast` for the CPU and runs it with `renderer` on `bufs` (copied back).
inline LoweredKernel run_ast(const UOpPtr& ast, const std::string& renderer,
                             std::vector<HostBuf>& bufs, std::vector<int64_t> vars = {}) {
  LoweredKernel k = lower_kernel(ast, cpu_caps());
  cpu::test::run_kernel(cpu::test::device(), renderer, k.name, k.uops, bufs, std::move(vars),
                        k.global);
  return k;
}

// The same with explicit Opts (instead of the heuristic) and renderer capabilities.
inline LoweredKernel run_ast_opts(const UOpPtr& ast, const std::string& renderer,
                                  std::vector<HostBuf>& bufs, const std::vector<Opt>& opts,
                                  const RendererCaps& caps, std::vector<int64_t> vars = {}) {
  LoweredKernel k = lower_kernel_with_opts(ast, caps, opts);
  cpu::test::run_kernel(cpu::test::device(), renderer, k.name, k.uops, bufs, std::move(vars),
                        k.global);
  return k;
}

} // namespace tg::codegen_test
