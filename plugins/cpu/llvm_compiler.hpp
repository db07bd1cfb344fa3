#pragma once
// Compiler for renderer "LLVM": LLVM IR text -> an ELF relocatable object for the host CPU,
// optimized at -O2 with the host's features (getHostCPUName / getHostCPUFeatures: AVX2, FMA
// here). The object is the binary (what the disk cache stores); the device loads it into its
// ORC LLJIT with addObjectFile.
#include <memory>
#include <mutex>

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
  std::mutex mu_; // the TargetMachine is not safe to share between threads
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::string identity_;
};

} // namespace tg::cpu
