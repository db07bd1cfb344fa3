#pragma once
// CUDA C -> PTX through NVRTC, then (for a device) PTX -> a cubin for its architecture through
// nvJitLink. Both are loaded at run time (toolkit.hpp). The identity the compile cache keys on
// holds NVRTC's (and nvJitLink's) version, the architecture and the flags. A build error names
// the kernel and shows NVRTC's log with the offending source lines.
#include <optional>
#include <string>

#include "cuda_arch.hpp"
#include "tg/plugin/device.hpp"

namespace tg::cuda {

class CudaCompiler : public Compiler {
public:
  // NVRTC compiles for `arch` (compute_XX); with `link_to`, nvJitLink links the PTX into a cubin
  // for that GPU (a device's own), else compile() returns the PTX. Raises tg::Error when NVRTC
  // (or, with link_to, nvJitLink) cannot be loaded.
  explicit CudaCompiler(const Arch& arch, std::optional<Arch> link_to = std::nullopt);
  std::string identity() const override { return identity_; }
  std::vector<uint8_t> compile(const std::string& source) override;
  // PTX is its own listing; a cubin is disassembled by nvdisasm where the toolkit has it.
  std::string disassemble(std::span<const uint8_t> binary) override;

  // CUDA C -> PTX text (what compile() returns for Output::Ptx, without the trailing NUL).
  std::string to_ptx(const std::string& source) const;
  // PTX -> cubin for link_to (or arch).
  std::vector<uint8_t> link(const std::string& ptx) const;
  const Arch& arch() const { return arch_; }

private:
  Arch arch_;
  std::optional<Arch> link_to_;
  std::string identity_;
};

// PTX -> a cubin for `target` through nvJitLink; raises tg::Error with nvJitLink's log.
std::vector<uint8_t> link_ptx(const std::string& ptx, const Arch& target);

// The kernel's name in CUDA C or PTX source ("?" when none is found), for messages.
std::string kernel_name_in(const std::string& source);

} // namespace tg::cuda
