#pragma once
// Compiling kernels for CUDA without a GPU: the plugin's renderer for an architecture, NVRTC to
// PTX, and ptxas (the toolkit's assembler, as a subprocess) to SASS. Many kernels share one
// NVRTC translation unit (the renderer guards its helper definitions), since NVRTC's start-up
// is most of its cost.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "cuda_compiler.hpp"
#include "cuda_renderer.hpp"
#include "tg/codegen.hpp"
#include "toolkit.hpp"

namespace tg::cuda::test {

// Why CUDA kernels cannot be compiled here ("" when they can). Tests print it with the word
// "skipped", which ctest's SKIP_REGULAR_EXPRESSION reports as a skip.
inline std::string toolkit_missing() {
  std::string why;
  if (load_nvrtc(why) == nullptr) return why;
  if (toolkit_program("ptxas").empty()) return "ptxas not found under CUDA_PATH or /usr/local/cuda";
  return "";
}
#define TG_REQUIRE_CUDA_TOOLKIT()                                                                  \
  if (const std::string tg_why = ::tg::cuda::test::toolkit_missing(); !tg_why.empty()) {           \
    std::printf("cuda test skipped: %s\n", tg_why.c_str());                                        \
    return;                                                                                        \
  }

// One kernel rendered for CUDA: its (renamed) name and source.
struct RenderedKernel {
  std::string name, source;
};

// `kernel` rendered by `r` under the name `name`.
inline RenderedKernel render_as(CudaRenderer& r, const LoweredKernel& kernel,
                                const std::string& name) {
  return {name, r.render(name, kernel.uops)};
}

// Runs `command`, returning its exit status; its output goes to `output`.
inline int run_command(const std::string& command, std::string& output) {
  output.clear();
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  for (size_t k; (k = std::fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, k);
  return pclose(p);
}

// PTX through ptxas for `sm` ("sm_90"); returns "" on success, else ptxas's output.
inline std::string ptxas(const std::string& ptx, const std::string& sm,
                         const std::string& flags = "") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string base = (dir / ("tg-cuda-test-" + std::to_string(getpid()) + "-" + sm)).string();
  {
    std::ofstream f(base + ".ptx");
    f << ptx;
  }
  std::string out;
  const int rc = run_command(
      toolkit_program("ptxas") + " -arch=" + sm + flags + " -o " + base + ".cubin " + base + ".ptx",
      out);
  std::error_code ec;
  std::filesystem::remove(base + ".ptx", ec);
  std::filesystem::remove(base + ".cubin", ec);
  return rc == 0 ? "" : "ptxas -arch=" + sm + " failed:\n" + out;
}

// ptxas at its lowest optimization level: the checks are that the PTX assembles for the
// architecture, and -O3 on thousands of kernels would cost minutes.
inline const std::string kPtxasFlags = " -O0";

// Compiles `kernels` in batches of `batch` per NVRTC call for `arch`, then each batch's PTX with
// ptxas for every architecture of `sass`. Returns one message per failure (naming the kernels
// of the failing batch); empty when all compiled.
struct CompileTimes {
  double nvrtc = 0, ptxas = 0;
};
inline std::vector<std::string> compile_all(const std::vector<RenderedKernel>& kernels,
                                            const Arch& arch, const std::vector<std::string>& sass,
                                            CompileTimes& times, size_t batch = 80) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  CudaCompiler compiler(arch);
  std::vector<std::string> failures;
  for (size_t start = 0; start < kernels.size(); start += batch) {
    std::string source, names;
    for (size_t i = start; i < std::min(kernels.size(), start + batch); ++i) {
      source += kernels[i].source + "\n";
      names += (names.empty() ? "" : ", ") + kernels[i].name;
    }
    std::string ptx;
    const auto t0 = Clock::now();
    try {
      ptx = compiler.to_ptx(source);
      times.nvrtc += since(t0);
    } catch (const std::exception&) {
      // Find the kernels that fail alone, with NVRTC's log for each.
      for (size_t i = start; i < std::min(kernels.size(), start + batch); ++i) try {
          compiler.to_ptx(kernels[i].source);
        } catch (const std::exception& e) {
          failures.push_back("NVRTC, kernel " + kernels[i].name + ": " + e.what() + "\nsource:\n" +
                             kernels[i].source);
        }
      continue;
    }
    const auto t1 = Clock::now();
    for (const std::string& sm : sass)
      if (std::string err = ptxas(ptx, sm, kPtxasFlags); !err.empty())
        failures.push_back("kernels " + names + ": " + err);
    times.ptxas += since(t1);
  }
  return failures;
}

} // namespace tg::cuda::test
