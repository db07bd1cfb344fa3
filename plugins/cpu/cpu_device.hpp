#pragma once
// The CPU device: host allocator, renderers LLVM (default) and C, their compilers, program
// loading by binary kind (see loaders.hpp), the worker-thread queue and graphs replayed on
// it. CPU_THREADS is read when the device is created.
#include <memory>
#include <mutex>

#include "clang_compiler.hpp"
#include "cpu_graph.hpp"
#include "cpu_queue.hpp"
#include "host_allocator.hpp"
#include "llvm_compiler.hpp"
#include "llvm_renderer.hpp"
#include "loaders.hpp"
#include "tg/plugin/c_renderer.hpp"

namespace tg::cpu {

// This machine's CPU as LLVM names it ("znver4"): the one architecture the device serves.
std::string host_cpu();
// The float32 lanes of this machine's widest vector registers, which both renderers compile
// for: 16 with AVX-512F, 8 with AVX, 4 otherwise (SSE).
int64_t host_vector_lanes();
// Whether the host has vpdpbusd on 128-, 256- and 512-bit vectors (AVX512-VNNI with AVX512-VL)
// and CPU_DOT4 allows it: the LLVM renderer then spells Ops::DOT4 with it.
bool host_has_vpdpbusd();

class CpuDevice : public Device {
public:
  // `arch`: "" or this machine's CPU (host_cpu()); kernels always compile for the host.
  explicit CpuDevice(std::string arch = "");
  ~CpuDevice() override;
  std::string name() const override { return "CPU"; }
  bool host_visible() const override { return true; } // addresses are host pointers
  std::string arch() const override { return arch_; }
  Allocator& allocator() override { return allocator_; }
  std::vector<std::string> renderers() const override { return {"LLVM", "C"}; }
  Renderer& renderer(const std::string& name) override;
  Compiler& compiler(const std::string& renderer_name) override;
  std::shared_ptr<Program> load(const std::string& kernel_name,
                                std::span<const uint8_t> binary) override;
  Queue& queue() override;
  // A CpuGraph replaying on queue().
  std::shared_ptr<Graph> graph(std::vector<GraphLaunch> launches) override;
  int threads() const { return runtime_->threads(); }

private:
  std::string arch_;
  HostAllocator allocator_;
  LlvmRenderer llvm_renderer_{host_vector_lanes(), host_has_vpdpbusd()};
  CRenderer c_renderer_{host_vector_lanes()};
  std::shared_ptr<CpuRuntime> runtime_;
  std::mutex mu_; // the lazily created parts below
  std::unique_ptr<LlvmCompiler> llvm_compiler_;
  std::unique_ptr<ClangCompiler> clang_compiler_;
  std::unique_ptr<JitHost> jit_;
  std::unique_ptr<CpuQueue> queue_;
};

} // namespace tg::cpu
