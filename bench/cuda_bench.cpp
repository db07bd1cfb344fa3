// CUDA matmul benchmark (DEV=CUDA on an NVIDIA GPU): a 4096 x 4096 x 4096 matmul in float32,
// float16 and bfloat16 as the Tensor front end schedules it, lowered by
// the GPU heuristic and timed with the queue's timestamps (best of 5 after a warm-up), next to
// cuBLAS (cublasGemmEx, loaded with dlopen by this benchmark only) on the same GPU in the same
// run. Prints TFLOP/s for both and their ratio.
//   tg_bench_cuda [N]     (default 4096)
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cuda_api.hpp"
#include "tg/buffer.hpp"
#include "tg/error.hpp"
#include "tg/runner_cache.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tg;
using namespace tg::cuda;

namespace {

// The cuBLAS entry points the benchmark calls (cublas_v2.h, CUDA 12/13).
struct Cublas {
  int (*create)(void**) = nullptr;
  int (*gemm_ex)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*,
                 int, int, const void*, void*, int, int, int, int) = nullptr;
  void* handle = nullptr;
};

bool load_cublas(Cublas& c, std::string& why) {
  void* lib = nullptr;
  for (const char* name :
       {"libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  if (lib == nullptr) {
    why = "libcublas.so.13/.12 not found";
    return false;
  }
  c.create = reinterpret_cast<decltype(c.create)>(dlsym(lib, "cublasCreate_v2"));
  c.gemm_ex = reinterpret_cast<decltype(c.gemm_ex)>(dlsym(lib, "cublasGemmEx"));
  if (c.create == nullptr || c.gemm_ex == nullptr) {
    why = "libcublas lacks cublasCreate_v2 or cublasGemmEx";
    return false;
  }
  if (c.create(&c.handle) != 0) {
    why = "cublasCreate failed";
    return false;
  }
  return true;
}

// cudaDataType of float32, float16, bfloat16.
int cuda_data_type(DType d) {
  if (d == dtypes::float16) return 2;
  if (d == dtypes::bfloat16) return 14;
  return 0;
}

double best_of(int runs, const std::function<double()>& once) {
  once(); // warm-up (compiles, caches)
  double best = 1e30;
  for (int i = 0; i < runs; ++i) best = std::min(best, once());
  return best;
}

// Seconds of one cuBLAS gemm (C = A * B, float32 accumulation), timed with driver events.
double cublas_seconds(Cublas& c, int64_t n, DType in) {
  const DriverApi& d = driver();
  const size_t in_bytes = static_cast<size_t>(n * n) * in.itemsize();
  CUdeviceptr a = 0, b = 0, out = 0;
  check(d.cuMemAlloc_v2(&a, in_bytes), "cuMemAlloc");
  check(d.cuMemAlloc_v2(&b, in_bytes), "cuMemAlloc");
  check(d.cuMemAlloc_v2(&out, static_cast<size_t>(n * n) * 4), "cuMemAlloc");
  CUevent start = nullptr, end = nullptr;
  check(d.cuEventCreate(&start, 0), "cuEventCreate");
  check(d.cuEventCreate(&end, 0), "cuEventCreate");
  const float one = 1, zero = 0;
  const int t = cuda_data_type(in), N = static_cast<int>(n);
  constexpr int kComputeF32 = 68; // CUBLAS_COMPUTE_32F
  const double s = best_of(5, [&] {
    check(d.cuEventRecord(start, nullptr), "cuEventRecord");
    if (c.gemm_ex(c.handle, 0, 0, N, N, N, &one, reinterpret_cast<void*>(a), t, N,
                  reinterpret_cast<void*>(b), t, N, &zero, reinterpret_cast<void*>(out), 0, N,
                  kComputeF32, -1) != 0)
      throw Error("cublasGemmEx failed");
    check(d.cuEventRecord(end, nullptr), "cuEventRecord");
    check(d.cuEventSynchronize(end), "cuEventSynchronize");
    float ms = 0;
    check(d.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
    return ms / 1000.0;
  });
  d.cuMemFree_v2(a);
  d.cuMemFree_v2(b);
  d.cuMemFree_v2(out);
  return s;
}

// Seconds of tg's kernel for the matmul (the schedule's one kernel), from queue timestamps.
double tg_seconds(int64_t n, DType in, std::string& kernel) {
  Tensor a = Tensor::rand({n, n}, dtypes::float32, "CUDA").cast(in).realize();
  Tensor b = Tensor::rand({n, n}, dtypes::float32, "CUDA").cast(in).realize();
  Tensor c = a.matmul(b);
  std::vector<ScheduleItem> items = c.schedule();
  const ScheduleItem* k = nullptr;
  for (const ScheduleItem& item : items)
    if (item.kind == ScheduleItem::Kind::Kernel) k = &item;
  if (k == nullptr) throw Error("the matmul scheduled no kernel");
  auto runner = runner_for(k->device, k->ast);
  kernel = runner->kernel().name;
  std::vector<DevicePtr> ptrs;
  for (const auto& buf : k->bufs) ptrs.push_back(buf->ptr());
  return best_of(5, [&] { return runner->run(ptrs, {}, true); });
}

} // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::stoll(argv[1]) : 4096;
  std::string why;
  if (load_driver(why) == nullptr) {
    std::printf("cuda bench skipped: %s\n", why.c_str());
    return 0;
  }
  Cublas cublas;
  const bool have_cublas = load_cublas(cublas, why);
  if (!have_cublas) std::printf("cuBLAS: %s (tg only)\n", why.c_str());
  const double flop =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::printf("matmul %lldx%lldx%lld on CUDA, float32 accumulation, best of 5\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n));
  for (DType in : {dtypes::float32, dtypes::float16, dtypes::bfloat16}) {
    std::string kernel;
    const double tg_s = tg_seconds(n, in, kernel);
    std::printf("  %-9s tg %8.2f TFLOP/s (%s)", in.name().c_str(), flop / tg_s / 1e12,
                kernel.c_str());
    if (have_cublas) {
      const double cb_s = cublas_seconds(cublas, n, in);
      std::printf("   cuBLAS %8.2f TFLOP/s   tg/cuBLAS %.2fx", flop / cb_s / 1e12, cb_s / tg_s);
    }
    std::printf("\n");
  }
  return 0;
}
