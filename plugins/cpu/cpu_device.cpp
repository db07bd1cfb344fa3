#include "cpu_device.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/TargetParser/Host.h>

#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg::cpu {

std::string host_cpu() { return llvm::sys::getHostCPUName().str(); }

namespace {
bool host_has(const char* feature) {
  static const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto it = features.find(feature);
  return it != features.end() && it->second;
}
} // namespace

int64_t host_vector_lanes() {
  if (host_has("avx512f")) return 16;
  if (host_has("avx")) return 8;
  return 4;
}

bool host_has_vpdpbusd() {
  return knobs::CPU_DOT4.get() != 0 && host_has("avx512vnni") && host_has("avx512vl");
}

CpuDevice::CpuDevice(std::string arch)
    : arch_(std::move(arch)), runtime_(std::make_shared<CpuRuntime>(cpu_threads_from_env())) {
  if (!arch_.empty() && arch_ != host_cpu())
    throw Error("the CPU device compiles for this machine's CPU (" + host_cpu() +
                ") only; it cannot serve architecture '" + arch_ + "'");
}

// The queue goes first: its worker may still be running programs.
CpuDevice::~CpuDevice() { queue_.reset(); }

namespace {
[[noreturn]] void unknown_renderer(const std::string& name) {
  throw Error("CPU device has no renderer '" + name +
              "'; choose LLVM (the default) or C, e.g. DEV=CPU:C");
}
} // namespace

Renderer& CpuDevice::renderer(const std::string& name) {
  if (name == "LLVM") return llvm_renderer_;
  if (name == "C") return c_renderer_;
  unknown_renderer(name);
}

Compiler& CpuDevice::compiler(const std::string& renderer_name) {
  std::lock_guard lock(mu_);
  if (renderer_name == "LLVM") {
    if (!llvm_compiler_) llvm_compiler_ = std::make_unique<LlvmCompiler>();
    return *llvm_compiler_;
  }
  if (renderer_name == "C") {
    if (!clang_compiler_) clang_compiler_ = std::make_unique<ClangCompiler>();
    return *clang_compiler_;
  }
  unknown_renderer(renderer_name);
}

std::shared_ptr<Program> CpuDevice::load(const std::string& kernel_name,
                                         std::span<const uint8_t> binary) {
  switch (elf_type(binary)) {
  case 1: {
    JitHost* jit;
    {
      std::lock_guard lock(mu_);
      if (!jit_) jit_ = std::make_unique<JitHost>();
      jit = jit_.get();
    }
    return jit->load(runtime_, kernel_name, binary);
  }
  case 3:
    return load_shared_object(runtime_, kernel_name, binary);
  default:
    throw Error("CPU device: the binary for " + kernel_name +
                " is neither an ELF object (LLVM renderer) nor an ELF shared object (C renderer); "
                "was it compiled for another device? Clear the compiler cache (TG_CACHE_DIR) if it "
                "is stale");
  }
}

Queue& CpuDevice::queue() {
  std::lock_guard lock(mu_);
  if (!queue_) queue_ = std::make_unique<CpuQueue>();
  return *queue_;
}

std::shared_ptr<Graph> CpuDevice::graph(std::vector<GraphLaunch> launches) {
  auto& q = static_cast<CpuQueue&>(queue());
  return std::make_shared<CpuGraph>(q, std::move(launches));
}

} // namespace tg::cpu
