#pragma once
// A GPU architecture as NVRTC, ptxas and the driver name it: "sm_90" is compute capability 9.0.
// The caps a kernel is optimized for follow from it (work-group limits, shared memory, tensor
// cores), so the renderer and the compiler work without a device for compile-only use.
#include <string>

#include "tg/ir/pattern_matcher.hpp"
#include "tg/plugin/device.hpp"

namespace tg::cuda {

struct Arch {
  int major = 0, minor = 0;
  std::string sm() const { return "sm_" + std::to_string(major * 10 + minor); }
  std::string compute() const { return "compute_" + std::to_string(major * 10 + minor); }
  int number() const { return major * 10 + minor; }
};

// "sm_90" (or "sm90", "90") -> {9, 0}; raises tg::Error for anything else or an architecture
// before sm_50, naming what it takes.
Arch parse_arch(const std::string& text);

// The limits the codegen heuristic uses for `arch`: 1024 threads per block (x, y up to 1024,
// z up to 64), 48 KiB of static shared memory, warps of 32, grids of 2^31-1 x 65535 x 65535,
// and the mma.sync tensor cores on sm_80 and newer.
RendererCaps caps_for(const Arch& arch);

// The rule both renderers add (RendererCaps::extra_matcher): a float's negation as a flip of its
// sign bit. NVIDIA GPUs negate by an add of -0 (neg.f32), which makes a NaN the positive
// canonical one, where the CPU and copysign keep its sign.
const PatternMatcher& sign_flip_negation();

} // namespace tg::cuda
