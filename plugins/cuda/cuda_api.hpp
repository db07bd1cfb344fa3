#pragma once
// The CUDA driver API, loaded at run time: libcuda.so.1 (the NVIDIA driver's) is dlopen'ed on
// first use and never linked, so the plugin loads on a machine without a GPU and says why.
// The few types and constants the plugin uses are declared here (the driver's ABI, stable
// across releases), so the plugin builds without the CUDA toolkit's headers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tg::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphNode = struct CUgraphNode_st*;
using CUgraphExec = struct CUgraphExec_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2; // Y, Z follow
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;  // Y, Z follow
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 1;

// The kernel-node parameters of cuGraphAddKernelNode / cuGraphExecKernelNodeSetParams (the
// original, unversioned entry points, which every driver since CUDA 10 exports).
struct CudaKernelNodeParams {
  CUfunction func;
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
  unsigned shared_bytes;
  void** kernel_params;
  void** extra;
};

// The lowest driver the plugin runs on: CUDA 12.0 (cuDriverGetVersion's 12000).
constexpr int kMinDriverVersion = 12000;

// name, signature: every driver entry point the plugin calls (the exported symbol's name).
#define TG_CUDA_FUNCTIONS(X)                                                                       \
  X(cuInit, CUresult(unsigned))                                                                    \
  X(cuDriverGetVersion, CUresult(int*))                                                            \
  X(cuGetErrorName, CUresult(CUresult, const char**))                                              \
  X(cuGetErrorString, CUresult(CUresult, const char**))                                            \
  X(cuDeviceGetCount, CUresult(int*))                                                              \
  X(cuDeviceGet, CUresult(CUdevice*, int))                                                         \
  X(cuDeviceGetName, CUresult(char*, int, CUdevice))                                               \
  X(cuDeviceGetAttribute, CUresult(int*, int, CUdevice))                                           \
  X(cuDeviceTotalMem_v2, CUresult(size_t*, CUdevice))                                              \
  X(cuDevicePrimaryCtxRetain, CUresult(CUcontext*, CUdevice))                                      \
  X(cuDevicePrimaryCtxRelease_v2, CUresult(CUdevice))                                              \
  X(cuCtxSetCurrent, CUresult(CUcontext))                                                          \
  X(cuCtxSynchronize, CUresult())                                                                  \
  X(cuCtxEnablePeerAccess, CUresult(CUcontext, unsigned))                                          \
  X(cuDeviceCanAccessPeer, CUresult(int*, CUdevice, CUdevice))                                     \
  X(cuMemAlloc_v2, CUresult(CUdeviceptr*, size_t))                                                 \
  X(cuMemFree_v2, CUresult(CUdeviceptr))                                                           \
  X(cuMemHostAlloc, CUresult(void**, size_t, unsigned))                                            \
  X(cuMemFreeHost, CUresult(void*))                                                                \
  X(cuMemcpyHtoDAsync_v2, CUresult(CUdeviceptr, const void*, size_t, CUstream))                    \
  X(cuMemcpyDtoHAsync_v2, CUresult(void*, CUdeviceptr, size_t, CUstream))                          \
  X(cuMemcpyDtoDAsync_v2, CUresult(CUdeviceptr, CUdeviceptr, size_t, CUstream))                    \
  X(cuMemcpyPeerAsync, CUresult(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)) \
  X(cuStreamCreate, CUresult(CUstream*, unsigned))                                                 \
  X(cuStreamDestroy_v2, CUresult(CUstream))                                                        \
  X(cuStreamSynchronize, CUresult(CUstream))                                                       \
  X(cuStreamWaitEvent, CUresult(CUstream, CUevent, unsigned))                                      \
  X(cuEventCreate, CUresult(CUevent*, unsigned))                                                   \
  X(cuEventDestroy_v2, CUresult(CUevent))                                                          \
  X(cuEventRecord, CUresult(CUevent, CUstream))                                                    \
  X(cuEventSynchronize, CUresult(CUevent))                                                         \
  X(cuEventQuery, CUresult(CUevent))                                                               \
  X(cuEventElapsedTime, CUresult(float*, CUevent, CUevent))                                        \
  X(cuModuleLoadData, CUresult(CUmodule*, const void*))                                            \
  X(cuModuleUnload, CUresult(CUmodule))                                                            \
  X(cuModuleGetFunction, CUresult(CUfunction*, CUmodule, const char*))                             \
  X(cuLaunchKernel, CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,         \
                             unsigned, unsigned, CUstream, void**, void**))                        \
  X(cuGraphCreate, CUresult(CUgraph*, unsigned))                                                   \
  X(cuGraphAddKernelNode,                                                                          \
    CUresult(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const CudaKernelNodeParams*))      \
  X(cuGraphInstantiateWithFlags, CUresult(CUgraphExec*, CUgraph, unsigned long long))              \
  X(cuGraphExecKernelNodeSetParams,                                                                \
    CUresult(CUgraphExec, CUgraphNode, const CudaKernelNodeParams*))                               \
  X(cuGraphLaunch, CUresult(CUgraphExec, CUstream))                                                \
  X(cuGraphExecDestroy, CUresult(CUgraphExec))                                                     \
  X(cuGraphDestroy, CUresult(CUgraph))

struct DriverApi {
#define TG_CUDA_MEMBER(fn, type) std::add_pointer_t<type> fn = nullptr;
  TG_CUDA_FUNCTIONS(TG_CUDA_MEMBER)
#undef TG_CUDA_MEMBER
  int driver_version = 0; // cuDriverGetVersion: 12040 for 12.4
  int device_count = 0;
};

// The driver, loaded and initialized once (cuInit), or nullptr with `why` saying which step
// failed: no libcuda.so.1, a symbol it lacks, cuInit's error (its CUresult name), a driver
// older than kMinDriverVersion, or no device.
const DriverApi* load_driver(std::string& why);
// The driver for code that runs after a device was created (it was loaded then).
const DriverApi& driver();

// "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" (the name alone where the driver lacks one).
std::string error_name(CUresult code);
// Raises tg::Error "CUDA: <what> failed: <error_name>" unless code is CUDA_SUCCESS.
void check(CUresult code, const std::string& what);

// "12.4" from 12040.
std::string version_text(int version);

} // namespace tg::cuda
