// Tensor cores (tinygrad's TC opt, the part that needs no local memory yet): which of a
// renderer's tensor cores serve a kernel's input and accumulator dtypes. Applying one (the TC
// Opt, with its locals and swizzles) comes with the first renderer that has local memory.
#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"

namespace tg {

std::vector<TensorCore> tensor_cores_for(const RendererCaps& caps, DType dtype_in,
                                         DType dtype_out) {
  std::vector<TensorCore> out;
  for (const TensorCore& tc : caps.tensor_cores) {
    if (std::string why = tc.check(); !why.empty())
      throw Error("codegen: the renderer describes a tensor core it cannot have: " + why);
    if (tc.dtype_in == dtype_in && tc.dtype_out == dtype_out) out.push_back(tc);
  }
  return out;
}

} // namespace tg
