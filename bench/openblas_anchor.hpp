#pragma once
// The OpenBLAS anchor of the benchmarks: its kernels for this CPU, not its generic ones.
//
// OpenBLAS picks its kernels by CPU model when it loads; a model newer than the library (the
// Xeons here, with Debian's 0.3.21) falls back to its generic x86-64 kernels ("Prescott"), a
// third of the speed of its AVX-512 ones. Such a run starts again with OPENBLAS_CORETYPE naming
// the newest kernels the CPU can run, so the anchor is what OpenBLAS gives on this ISA. Call it
// first in main(), before anything is printed.
#include <cblas.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>

namespace tg_bench {

inline void pin_openblas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr ||
      std::string_view(openblas_get_corename()) != "Prescott")
    return;
  const char* core = __builtin_cpu_supports("avx512f") ? "SkylakeX"
                     : __builtin_cpu_supports("avx2")  ? "Haswell"
                                                       : nullptr;
  if (core == nullptr) return;
  std::fprintf(stderr,
               "OpenBLAS does not know this CPU (kernels: Prescott); rerunning with "
               "OPENBLAS_CORETYPE=%s\n",
               core);
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv("/proc/self/exe", argv);
  std::perror("execv /proc/self/exe"); // keep going with the generic kernels
}

// OpenBLAS's worker threads spin for a while after each call (THREAD_TIMEOUT, about 2^28
// cycles) before they sleep, and while they spin they take the cores from whatever runs next:
// a 1024 float32 matmul timed right after cblas_sasum ran at half its speed (0.47-0.53x of
// sgemm, against 0.97-1.05x with OPENBLAS_NUM_THREADS=1 or after a pause). Call this after an
// anchor, before timing anything else.
inline void let_openblas_threads_sleep() {
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
}

} // namespace tg_bench
