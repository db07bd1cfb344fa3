#pragma once
// The parts of the CUDA toolkit the compiler uses, loaded at run time with dlopen: NVRTC (CUDA C
// -> PTX) and nvJitLink (PTX -> a cubin for one GPU). They are looked for, in order, under
// $CUDA_PATH/lib64, /usr/local/cuda/lib64 and then by soname on the loader's path
// (libnvrtc.so.13, .12, ...), so an installed toolkit is found without configuration. Where
// none is, compiling CUDA C raises tg::Error saying where it looked.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tg::cuda {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
using nvJitLinkResult = int;
using nvJitLinkHandle = struct nvJitLink*;
constexpr int kNvJitLinkInputPtx = 2;

#define TG_NVRTC_FUNCTIONS(X)                                                                      \
  X(nvrtcVersion, nvrtcResult(int*, int*))                                                         \
  X(nvrtcGetErrorString, const char*(nvrtcResult))                                                 \
  X(nvrtcCreateProgram, nvrtcResult(nvrtcProgram*, const char*, const char*, int,                  \
                                    const char* const*, const char* const*))                       \
  X(nvrtcCompileProgram, nvrtcResult(nvrtcProgram, int, const char* const*))                       \
  X(nvrtcGetPTXSize, nvrtcResult(nvrtcProgram, size_t*))                                           \
  X(nvrtcGetPTX, nvrtcResult(nvrtcProgram, char*))                                                 \
  X(nvrtcGetProgramLogSize, nvrtcResult(nvrtcProgram, size_t*))                                    \
  X(nvrtcGetProgramLog, nvrtcResult(nvrtcProgram, char*))                                          \
  X(nvrtcDestroyProgram, nvrtcResult(nvrtcProgram*))

#define TG_NVJITLINK_FUNCTIONS(X)                                                                  \
  X(nvJitLinkVersion, nvJitLinkResult(unsigned*, unsigned*))                                       \
  X(nvJitLinkCreate, nvJitLinkResult(nvJitLinkHandle*, uint32_t, const char**))                    \
  X(nvJitLinkAddData, nvJitLinkResult(nvJitLinkHandle, int, const void*, size_t, const char*))     \
  X(nvJitLinkComplete, nvJitLinkResult(nvJitLinkHandle))                                           \
  X(nvJitLinkGetLinkedCubinSize, nvJitLinkResult(nvJitLinkHandle, size_t*))                        \
  X(nvJitLinkGetLinkedCubin, nvJitLinkResult(nvJitLinkHandle, void*))                              \
  X(nvJitLinkGetErrorLogSize, nvJitLinkResult(nvJitLinkHandle, size_t*))                           \
  X(nvJitLinkGetErrorLog, nvJitLinkResult(nvJitLinkHandle, char*))                                 \
  X(nvJitLinkDestroy, nvJitLinkResult(nvJitLinkHandle*))

struct Nvrtc {
#define TG_CUDA_MEMBER(fn, type) std::add_pointer_t<type> fn = nullptr;
  TG_NVRTC_FUNCTIONS(TG_CUDA_MEMBER)
#undef TG_CUDA_MEMBER
  int major = 0, minor = 0; // nvrtcVersion
  std::string library;      // the file or soname it was loaded from
  std::string include_dir;  // the toolkit's include folder (cuda_fp16.h), "" when not found
};

struct NvJitLink {
#define TG_CUDA_MEMBER(fn, type) std::add_pointer_t<type> fn = nullptr;
  TG_NVJITLINK_FUNCTIONS(TG_CUDA_MEMBER)
#undef TG_CUDA_MEMBER
  unsigned major = 0, minor = 0;
  std::string library;
};

// NVRTC, loaded once, or nullptr with `why` naming the places searched.
const Nvrtc* load_nvrtc(std::string& why);
// nvJitLink, loaded once (from beside NVRTC first), or nullptr with `why`.
const NvJitLink* load_nvjitlink(std::string& why);
// The path of a toolkit program (ptxas, nvdisasm, cuobjdump) under CUDA_PATH/bin or
// /usr/local/cuda/bin, "" when there is none.
std::string toolkit_program(const std::string& name);

} // namespace tg::cuda
