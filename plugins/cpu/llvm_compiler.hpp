#pragma once
// Compiler for renderer "LLVM": LLVM IR text -> an ELF relocatable object for the host CPU,
// optimized at -O2 with the host's features (getHostCPUName / getHostCPUFeatures: AVX2, FMA
// here). The object is the binary (what the disk cache stores); the device loads it into its
// ORC LLJIT with addObjectFile.
#include <memory>
#include <mutex>
#include <vector>

#include "tg/plugin/device.hpp"

namespace llvm {
class TargetMachine;
}

namespace tg::cpu {

// Initializes LLVM's native target once per process (thread-safe).
void init_llvm_native();

class LlvmCompiler : public Compiler {
public:
  LlvmCompiler();
  ~LlvmCompiler() override;
  std::string identity() const override { return identity_; }
  std::vector<uint8_t> compile(const std::string& source) override;
  std::string disassemble(std::span<const uint8_t> binary) override;

private:
  std::vector<uint8_t> emit(const std::string& source);
  // A TargetMachine is not safe to share between threads: each compile takes one of its own
  // from the pool (made like tm_ when none is free), so compiles run in parallel (BEAM).
  std::unique_ptr<llvm::TargetMachine> acquire();
  void release(std::unique_ptr<llvm::TargetMachine> tm);
  std::mutex mu_;
  std::unique_ptr<llvm::TargetMachine> tm_; // describes the target (identity, data layout)
  std::vector<std::unique_ptr<llvm::TargetMachine>> free_;
  std::string identity_;
};

} // namespace tg::cpu
