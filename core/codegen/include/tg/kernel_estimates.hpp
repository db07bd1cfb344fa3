#pragma once
// How much work a lowered kernel does per launch, as tinygrad's estimate_uop_stats counts it:
// the numbers behind DEBUG=2's GFLOP/s and GB/s, and what a search would rank kernels by.
#include <cstdint>
#include <span>

#include "tg/codegen.hpp"

namespace tg {

struct KernelEstimates {
  double ops = 0; // ALU ops (MULACC counts 2) times the trips of the loops and SPECIALs around
                  // each; index arithmetic feeding an INDEX is not counted
  double lds = 0; // bytes of every LOAD and STORE to a global buffer times its trips
  double mem = 0; // bytes of the global buffers touched (each at most its lds share)
};

// `vars` are the DEFINE_VAR values in kernel.vars order; loop ends that depend on a variable
// missing from it use the variable's maximum.
KernelEstimates estimate_kernel(const LoweredKernel& kernel, std::span<const int64_t> vars = {});

} // namespace tg
