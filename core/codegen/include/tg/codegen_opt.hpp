#pragma once
// Codegen, the kernel optimizer (core/codegen/opt/: apply_opt.cpp applies Opts, heuristic.cpp
// chooses them, tensor_cores.cpp matches tensor cores; tinygrad's codegen/opt) and vector
// expansion (tinygrad's expander and devectorizer). lower_kernel() runs them between
// simplify_kernel and lower_reduces:
//
//   optimize_kernel   explicit Opts, or hand_coded_optimizations (NOOPT=1: none)
//   expand_kernel     Upcast/Unroll RANGEs become vector lanes
//   lower_reduces     (codegen.hpp) a vector REDUCE gets a register of one element per lane
//   devectorize       vector LOAD/STORE split where not contiguous and aligned, or everything
//                     split into scalars where the renderer has no vectors
#include <string>
#include <vector>

#include "tg/codegen.hpp"

namespace tg {

// tinygrad's OptOps. UPCAST and UNROLL are implemented; the others raise tg::Error until a
// renderer with local memory needs them.
enum class OptOp : uint8_t { UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, THREAD, PADTO, SWAP, TC };
std::string_view opt_op_name(OptOp op);

// One optimization: `axis` counts the kernel's output axes (UPCAST, LOCAL) or its reduce axes
// (UNROLL), each in range id order, among those that are not already Upcast/Unroll, as
// tinygrad's Opt counts axes. `amount` 0 means the whole axis.
struct Opt {
  OptOp op = OptOp::UPCAST;
  int axis = 0;
  int amount = 0;
  bool operator==(const Opt&) const = default;
  std::string str() const; // "Opt(UPCAST, 1, 4)"
};

// The RANGEs an Opt's axis numbers refer to: output axes (Global, Loop, Local) or reduce axes,
// each in id order.
std::vector<UOpPtr> opt_axes(const UOpPtr& ast, bool reduce);

// tinygrad's shift_to: the range of `opt.axis` with a constant size N divisible by `amount`
// becomes outer * amount + inner, outer a range of N / amount with the old kind and id (gone
// when N == amount), inner a range of `amount` of kind Upcast (UPCAST) or Unroll (UNROLL) with
// a new id. An Opt that does not apply raises tg::Error naming it and why.
UOpPtr apply_opt(const UOpPtr& ast, const Opt& opt);

// The default heuristic, in the spirit of tinygrad's heuristic.py: while the output has at
// least 1024 elements, upcast an output axis some buffer broadcasts over (stride 0 in its
// index) by 3 or 4, up to two axes; unroll the last reduce axis whole when it is at most 32
// long (and all lanes stay within 128), else by 4 when divisible; upcast the last output axis
// by 4 when nothing is upcast yet and it is contiguous in the output. Symbolic or indivisible
// axes are skipped. `caps` is not consulted yet (no LOCAL/GROUP/TC on the CPU).
std::vector<Opt> hand_coded_optimizations(const UOpPtr& ast, const RendererCaps& caps);

// The tensor cores of `caps` that multiply dtype_in and accumulate in dtype_out, in the
// renderer's order (what the TC Opt will choose from). Raises tg::Error when one of the
// renderer's tensor cores is inconsistent (TensorCore::check says how).
std::vector<TensorCore> tensor_cores_for(const RendererCaps& caps, DType dtype_in, DType dtype_out);

// Pass: applies `opts` in order (each through apply_opt).
UOpPtr optimize_kernel(const UOpPtr& ast, const std::vector<Opt>& opts);

// Pass: expansion (tinygrad's expander). Every node that depends on Upcast/Unroll ranges
// becomes a vector of one lane per combination of them (the first such range, by id, the
// slowest): ALU ops on vectors, GEP to line up operands that depend on different ranges, a
// LOAD or STORE over INDEX(buf, VECTORIZE(lane indices)[, VECTORIZE(lane gates)]), and a
// REDUCE over an Unroll range combining that range's lanes first (CONTRACT), then reducing the
// remaining ranges on a vector of the other lanes. Index arithmetic stays scalar: its lanes are
// the expression with each range replaced by the lane's value, simplified.
UOpPtr expand_kernel(const UOpPtr& ast);

// Pass: devectorize. A vector LOAD or STORE (from expansion, or a register access from
// lower_reduces) becomes loads/stores of runs of consecutive addresses that are provably
// aligned to their length (lengths 2..16, powers of two) under one gate, and single-lane ones
// for the rest, rebuilt with VECTORIZE/GEP. With caps.supports_float4 false every access is
// single-lane and every vector ALU op is split into one scalar op per lane, so nothing vector
// reaches the renderer. GEP/VECTORIZE pairs fold away.
UOpPtr devectorize(const UOpPtr& ast, const RendererCaps& caps);

// lower_kernel with these Opts instead of the heuristic (an empty list: no optimization).
LoweredKernel lower_kernel_with_opts(const UOpPtr& ast, const RendererCaps& caps,
                                     const std::vector<Opt>& opts);

} // namespace tg
