#pragma once
// The process-wide cache of compiled kernels: one CompiledRunner per (device, kernel AST, how
// its Opts are chosen), so identical kernels (the same interned AST) are compiled once however
// often they are scheduled, and a kernel lowered under NOOPT=1 or BEAM=N is not served the
// heuristic's runner (nor the other way round).
#include <memory>
#include <string>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/runner.hpp"
#include "tg/schedule.hpp"

namespace tg {

// How the Opts of a kernel lowered now are chosen: "noopt" (NOOPT=1), "beam<N>" (BEAM=N) or
// "heuristic". Part of the runner cache's key.
std::string opt_choice();

// The runner of `ast` on `device` (a device spec), lowered with the device's renderer caps and
// compiled on first use. Under BEAM=N the first use searches the kernel's Opts (through the
// disk cache, tg/beam.hpp), timing candidates on `bufs` (PARAM slot order; slots without one
// time on zeroed scratch memory) with the values `var_vals` binds.
std::shared_ptr<CompiledRunner> runner_for(const std::string& device, const UOpPtr& ast,
                                           const std::vector<std::shared_ptr<Buffer>>& bufs = {},
                                           const VarVals& var_vals = {});

// The caps of the renderer that kernels for `device` (a device spec) are lowered with, opening
// the device: what the Tensor layer reads to lay out work for it (Tensor::matmul's panels).
const RendererCaps& renderer_caps(const std::string& device);

} // namespace tg
