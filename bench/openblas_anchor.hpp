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

#include <cstdio>
#include <cstdlib>
#include <string_view>

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

} // namespace tg_bench
