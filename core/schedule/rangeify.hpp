#pragma once
// Rangeify: the kernel AST that stores one realized tensor-level node. Output loops are RANGEs
// over the node's shape; movement ops turn the index vector into their source's (reshape by
// divmod, permute by reordering, expand by a zero index, pad by a validity condition that
// gates loads, shrink and flip by offsets); REDUCEs open loops of their own; nodes that are
// stored elsewhere (buffers, other realized nodes) are loaded from PARAMs.
#include <functional>
#include <vector>

#include "tg/ir/uop.hpp"

namespace tg::sched {

struct KernelSlots {
  // The node whose memory each PARAM slot is: slot 0 is the output, then inputs in order of
  // first use. A BUFFER placeholder or a realized node.
  std::vector<const UOp*> nodes;
};

// `is_stored(u)`: u's value lives in memory (a BUFFER, or realized by another kernel).
// `root` is the realized node; for an ASSIGN it is stored into the buffer under its target; for
// a SCATTER_ADD this kernel stores its base (the first of its two kernels).
UOpPtr build_kernel(const UOpPtr& root, const std::function<bool(const UOp*)>& is_stored,
                    KernelSlots& slots);

// The second kernel of a SCATTER_ADD (V, H) over rows and values (T, H): the output axis h
// (Global) outside a Sequential axis t, and inside both
//   out[row * H + h] = out[row * H + h] + values[t, h]   (gated by 0 <= row < V)
// with row = rows[t, h], plus V when negative. Slot 0 is the SCATTER_ADD's memory, which its
// first kernel filled with the base.
UOpPtr build_scatter_add_kernel(const UOpPtr& root,
                                const std::function<bool(const UOp*)>& is_stored,
                                KernelSlots& slots);

// The element count of a shape.
int64_t shape_numel(const Shape& s);     // raises tg::Error on a symbolic size
int64_t shape_numel_max(const Shape& s); // the most elements over every value of the symbols

} // namespace tg::sched
