#pragma once
// Codegen, the kernel optimizer (core/codegen/opt/: apply_opt.cpp checks and applies Opts,
// shift_to.cpp splits ranges, padto.cpp pads them, heuristic.cpp chooses Opts, tensor_cores.cpp
// and tc_opt.cpp put sums of products on tensor cores; tinygrad's codegen/opt) and vector
// expansion (tinygrad's expander and devectorizer). lower_kernel() runs them between
// simplify_kernel and lower_reduces:
//
//   optimize_kernel   explicit Opts, or hand_coded_optimizations (NOOPT=1: none)
//   expand_kernel     Upcast/Unroll RANGEs become vector lanes
//   lower_reduces     (codegen.hpp) a vector REDUCE gets a register of one element per lane
//   devectorize       vector LOAD/STORE split where not contiguous and aligned, or everything
//                     split into scalars where the renderer has no vectors
#include <array>
#include <string>
#include <vector>

#include "tg/codegen.hpp"
#include "tg/error.hpp"

namespace tg {

// tinygrad's OptOps. THREAD raises OptError until a renderer needs it.
enum class OptOp : uint8_t { UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, THREAD, PADTO, SWAP, TC };
std::string_view opt_op_name(OptOp op);

// One optimization, tinygrad's Opt(op, axis, arg). `axis` counts the axes opt_axes(ast, op)
// lists (each in range id order); `amount` is the split size (0: the whole axis) for UPCAST,
// UNROLL, LOCAL, GROUP and GROUPTOP, the multiple to pad to for PADTO, and the other axis for
// SWAP.
//
//   UPCAST    an output axis (Global, Loop, Local) -> outer * amount + Upcast (vector lanes)
//   UNROLL    a reduce axis (Reduce, GroupReduce)  -> outer * amount + Unroll (vector lanes)
//   LOCAL     a Global axis                        -> outer * amount + Local (work items of a
//             group: lidx)
//   GROUP     a Reduce axis -> outer * amount + GroupReduce: each work item of the group
//             reduces a strided share, the group combines the partial results through local
//             memory (group_reduces)
//   GROUPTOP  as GROUP with the group index outermost: GroupReduce * (size/amount) + outer, so
//             each work item reduces a contiguous share
//   PADTO     an output or reduce axis of size n -> round_up(n, amount), the extra iterations
//             masked: loads and stores gated, a reduce's value replaced by its identity
//   SWAP      two Global axes exchange places (their ids: which is outer, which gidx they get)
//   TC        tinygrad's tensor-core opt (tc_opt.cpp); `axis` picks the (N, M, K) ranges among
//             the candidates, `amount` packs tinygrad's arg (tc_select, tc_opt,
//             use_tensor_cores) as tc_arg() writes it. It must come first. The N, M and K ranges
//             (padded to the tile where tc_opt is 2) are split by the tensor core's opts: "l"
//             bits become the bits of one Warp range (a Local range with id -1, the first local
//             dimension: the lane), "u" bits Upcast ranges, K's bits Unroll ranges; then
//             (use_tensor_cores 1) the REDUCE of MUL(A, B) becomes WMMA(A', B', 0) reduced over
//             the rest of K, A' and B' being A and B with their tile bits moved to the ranges the
//             swizzle names, or (2) the kernel keeps its reduce in that shape.
struct Opt {
  OptOp op = OptOp::UPCAST;
  int axis = 0;
  int amount = 0;
  bool operator==(const Opt&) const = default;
  std::string str() const; // "Opt(UPCAST, 1, 4)", "Opt(TC, 0, (-1, 2, 1))"
};

// A TC Opt's amount from tinygrad's arg: tc_select (-1: the first tensor core that fits, else
// the index in RendererCaps::tensor_cores), tc_opt (0..2: 2 pads N, M and K to the tile) and
// use_tensor_cores (1: WMMA, 2: the shape only), as tc_select + 1 + 100 * tc_opt + 1000 *
// (use_tensor_cores - 1).
struct TcArg {
  int tc_select = -1, tc_opt = 0, use_tensor_cores = 1;
};
int tc_arg(const TcArg& a);
TcArg tc_arg_of(int amount);

// An Opt that does not apply to a kernel (tinygrad's KernelOptError): the message names the
// Opt and why. A search over Opts catches it to skip a candidate.
class OptError : public Error {
public:
  using Error::Error;
};

// The RANGEs an Opt's axis numbers refer to, in id order: output axes (Global, Loop, Local,
// Thread) for UPCAST, LOCAL, THREAD and SWAP; reduce axes (Reduce, GroupReduce) for UNROLL;
// Reduce axes only for GROUP and GROUPTOP; output axes then reduce axes for PADTO.
std::vector<UOpPtr> opt_axes(const UOpPtr& ast, OptOp op);
// Output axes (reduce false) or reduce axes (reduce true).
std::vector<UOpPtr> opt_axes(const UOpPtr& ast, bool reduce);

// Applies one Opt (tinygrad's Scheduler.apply_opt), checked against the kernel and the
// renderer's caps: work groups (has_local) for LOCAL/GROUP/GROUPTOP, local sizes within
// local_max (each dimension, and the whole group within local_max[0], the largest group a
// device takes), a grouped reduce's local memory within shared_max. A split (UPCAST, UNROLL,
// LOCAL, GROUP, GROUPTOP) is tinygrad's shift_to: a RANGE of constant size N divisible by
// `amount` becomes outer * amount + inner (GROUPTOP: inner * N/amount + outer), outer keeping
// the old id and kind (gone when N == amount), inner a new RANGE (next free id) of the Opt's
// kind. Raises OptError naming the Opt and why it does not apply.
UOpPtr apply_opt(const UOpPtr& ast, const Opt& opt, const RendererCaps& caps);

// The default heuristic, in the spirit of tinygrad's heuristic.py. First, where the renderer
// has tensor cores and the knob TC is not 0: a sum of products with one reduce axis (any number
// at TC_OPT >= 1) gets TC (axes 0..2, arg (TC_SELECT, TC_OPT, TC)), M's and N's outer ranges an
// UPCAST by the first of 5, 4, 3, 2 that divides them, N's a LOCAL of 4 or 2, and nothing else.
// Otherwise, with work groups
// (caps.has_local): a matrix-vector product gets GROUP 8, LOCAL 4 and UPCAST 4 on its rows; a
// kernel with few outputs (at most 2048) and a long reduce gets GROUP 16 and nothing more.
// Without work groups (a CPU), a matrix product (one sum over k of a[m, k] * b[k, n] or
// b[n, k], stored along n) gets a register tile sized by caps.vector_lanes and nothing more:
// a @ b upcasts m by 8 (4 below 16 lanes) and then n by two vectors, and unrolls k by 4;
// a @ b.T upcasts m by 4 and n by 4 (2) and unrolls k by 8, or, when one operand is computed
// from its loads (a quantized weight) and the other loaded, upcasts the loaded one's axis by 8
// (4) and unrolls k by 16; a @ b.T's operands need only read k's lanes contiguously once k is
// split (an index such as k % 64 + (k / 64) * 8192 qualifies). A direct convolution (forward or
// input gradient) gets output channels x 2 rows x the whole row (a vector when longer than
// 32), accumulators within 16 (8) registers, ky unrolled. Then, on every device: while the output
// has at least 1024 elements, upcast an output axis some buffer broadcasts over (stride 0 in its
// index) by 3 or 4, up to two axes (without work groups the first one 16 or 8 wide when contiguous
// in the output); unroll the last reduce axis whole when it is at most 32 long (and all lanes stay
// within 128), else by 4 when divisible; upcast the last output axis by 4 when nothing is upcast
// yet and it is contiguous in the output (without work groups, in a kernel without a reduce
// whose every access reads it contiguously or not at all, by caps.vector_lanes). Last, with work
// groups: up to three Global axes get local sizes (32 for the first axis, else 16, 8, 4, 3 or 2; at
// most 128 work items a group), axes some buffer broadcasts over first. Symbolic or indivisible
// axes are skipped.
std::vector<Opt> hand_coded_optimizations(const UOpPtr& ast, const RendererCaps& caps);

// The width (in elements) of the column panels in which a CPU reads b of a float32 a @ b best:
// the n of the heuristic's register tile (two vector registers). Tensor::matmul copies b into
// panels [n / w][k][w] first where that pays (knob CPU_MATMUL_PACK), so each tile's k rows of b
// are one contiguous run that stays in L2 while every tile of a passes over it; read in place,
// rows a power-of-two apart map to a few cache sets and evict each other. 0 on a device with
// work groups (a GPU), which reads b through its own tiling.
int64_t matmul_panel_width(const RendererCaps& caps);

// The tensor cores of `caps` that multiply dtype_in and accumulate in dtype_out, in the
// renderer's order (what the TC Opt will choose from). Raises tg::Error when one of the
// renderer's tensor cores is inconsistent (TensorCore::check says how).
std::vector<TensorCore> tensor_cores_for(const RendererCaps& caps, DType dtype_in, DType dtype_out);

// Where the elements of a tensor core's fragments lie in its tile, for one thread (`lane`):
// A's element e at (m, k) = a[e], B's at (k, n) = b[e], C's (and D's) at (m, n) = c[e]. Read
// from the opts and swizzles the way the TC opt lays the tile out (tinygrad's TensorCore).
struct TensorCoreLayout {
  std::vector<std::array<int64_t, 2>> a, b, c;
};
TensorCoreLayout tensor_core_layout(const TensorCore& tc, int64_t lane);

// Pass: a WMMA of a single-thread tensor core of caps (threads 1: a layout of multiply-adds,
// as tinygrad's AMX on the CPU) becomes those multiply-adds over its fragments' lanes, so that
// any renderer runs it; WMMAs of multi-thread tensor cores are the renderer's.
UOpPtr lower_single_thread_wmma(const UOpPtr& ast, const RendererCaps& caps);

// Pass: applies `opts` in order (each through apply_opt).
UOpPtr optimize_kernel(const UOpPtr& ast, const std::vector<Opt>& opts, const RendererCaps& caps);

// Pass: expansion (tinygrad's expander). Every node that depends on Upcast/Unroll ranges
// becomes a vector of one lane per combination of them (the first such range, by id, the
// slowest): ALU ops on vectors, GEP to line up operands that depend on different ranges, a
// LOAD or STORE over INDEX(buf, VECTORIZE(lane indices)[, VECTORIZE(lane gates)]), and a
// REDUCE over an Unroll range combining that range's lanes first (CONTRACT), then reducing the
// remaining ranges on a vector of the other lanes. Index arithmetic stays scalar: its lanes are
// the expression with each range replaced by the lane's value, simplified. `vector_lanes` (the
// renderer's) bounds how many lanes an unrolled reduce keeps as vector accumulators.
UOpPtr expand_kernel(const UOpPtr& ast, int64_t vector_lanes = 0);

// How many lanes an unrolled reduce may keep as vector accumulators (expand_kernel), which the
// CPU heuristic sizes its register tiles by: 20 vector registers of AVX-512's 32 (the 12 left
// hold a tile's operands: a 4 x 5 tile loads 9), else 128 (AVX2's 16 registers of 8, and every
// narrower target).
int64_t max_vector_accumulator_lanes(int64_t vector_lanes);

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
