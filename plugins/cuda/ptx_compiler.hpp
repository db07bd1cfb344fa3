#pragma once
// LLVM IR -> PTX through LLVM's NVPTX target, in process (the PTX renderer's compiler; no
// NVRTC), then, for a device, a cubin through nvJitLink as for CUDA C. The identity holds
// LLVM's version, the architecture, the PTX version and the optimization level.
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cuda_arch.hpp"
#include "tg/plugin/device.hpp"

namespace llvm {
class TargetMachine;
}

namespace tg::cuda {

class PtxCompiler : public Compiler {
public:
  // PTX for `arch`; with `link_to`, linked into a cubin for that GPU.
  explicit PtxCompiler(const Arch& arch, std::optional<Arch> link_to = std::nullopt);
  ~PtxCompiler() override;
  std::string identity() const override { return identity_; }
  std::vector<uint8_t> compile(const std::string& source) override;
  std::string disassemble(std::span<const uint8_t> binary) override;
  // LLVM IR -> PTX text.
  std::string to_ptx(const std::string& ir);

private:
  Arch arch_;
  std::optional<Arch> link_to_;
  std::string identity_;
  std::mutex mu_;
  std::unique_ptr<llvm::TargetMachine> tm_;
};

} // namespace tg::cuda
