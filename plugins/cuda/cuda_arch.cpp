// Architectures and the caps that follow from them.
#include "cuda_arch.hpp"

#include <cstdint>

#include "tg/error.hpp"

namespace tg::cuda {

Arch parse_arch(const std::string& text) {
  std::string digits = text;
  if (digits.rfind("sm_", 0) == 0)
    digits = digits.substr(3);
  else if (digits.rfind("sm", 0) == 0)
    digits = digits.substr(2);
  // Suffixes of architecture-specific features (sm_90a) are NVRTC's: not served here.
  if (digits.size() < 2 || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    throw Error("CUDA: architecture '" + text +
                "' is not one; write it as NVRTC does: sm_80, sm_86, sm_89, sm_90, ...");
  const int n = std::stoi(digits);
  if (n < 50)
    throw Error("CUDA: architecture '" + text +
                "' is older than sm_50, which NVRTC no longer "
                "compiles for; use sm_50 or newer");
  return Arch{n / 10, n % 10};
}

namespace {

// mma.sync.aligned.m16n8k16 with float32 accumulation (tinygrad's cuda_81616): a warp computes
// an 8 (N) x 16 (M) tile over K = 16.
TensorCore mma_m16n8k16(DType in) {
  TensorCore tc;
  tc.dims = {8, 16, 16};
  tc.threads = 32;
  tc.elements_per_thread = {8, 4, 4};
  tc.dtype_in = in;
  tc.dtype_out = dtypes::float32;
  tc.opts = {"u0", "l0", "l0", "l1", "l1", "l1", "u1"};
  tc.swizzle = {
      TensorCore::Operand{{"r1", "r2", "l2", "l3", "l4"}, {"u1", "r3"}, {"l0", "l1", "u0", "r0"}},
      TensorCore::Operand{{"r1", "r2", "u0", "l0", "l1"}, {"r0", "r3"}, {"l2", "l3", "l4", "u1"}}};
  return tc;
}

} // namespace

RendererCaps caps_for(const Arch& arch) {
  RendererCaps caps;
  caps.has_local = true;
  caps.has_shared = true;
  caps.supports_float4 = true;
  caps.supports_half = false; // computed in float32 (see cuda_renderer.hpp)
  caps.has_transcendentals = true;
  caps.global_max = {0x7fffffff, 65535, 65535};
  caps.local_max = {1024, 1024, 64};
  caps.shared_max = 48 * 1024; // static __shared__ arrays
  if (arch.major >= 8)
    caps.tensor_cores = {mma_m16n8k16(dtypes::float16), mma_m16n8k16(dtypes::bfloat16)};
  return caps;
}

const PatternMatcher& sign_flip_negation() {
  static const PatternMatcher pm({
      {UPat(Ops::NEG, {}, std::nullopt, "x"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& x = c["x"];
         const ScalarType s = x->dtype.scalar_type;
         if (s != ScalarType::Float32 && s != ScalarType::Float64) return nullptr;
         const bool wide = s == ScalarType::Float64;
         const DType bits = (wide ? dtypes::int64 : dtypes::int32).vec(x->dtype.count);
         UOpPtr sign = UOp::const_(bits.scalar(), wide ? INT64_MIN : int64_t{INT32_MIN});
         if (bits.count > 1)
           sign = UOp::make(Ops::VECTORIZE, bits, std::vector<UOpPtr>(bits.count, sign));
         return x->src[0]->bitcast(bits)->alu(Ops::XOR, {sign})->bitcast(x->dtype);
       }},
  });
  return pm;
}

} // namespace tg::cuda
