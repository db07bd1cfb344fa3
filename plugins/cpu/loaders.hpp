#pragma once
// Turning a compiled binary into a CpuProgram. The binary says what it is: an ELF
// relocatable object (ET_REL, from the LLVM compiler) goes into the device's ORC LLJIT, one
// JITDylib per program, removed when the program goes; an ELF shared object (ET_DYN, from
// clang) is written to a temporary file and dlopen()ed, and dlclose()d with the program.
#include <memory>
#include <mutex>

#include "runtime.hpp"

namespace llvm::orc {
class LLJIT;
}

namespace tg::cpu {

// The device's one LLJIT (created on first use).
class JitHost {
public:
  JitHost();
  ~JitHost();
  std::shared_ptr<Program> load(std::shared_ptr<CpuRuntime> rt, const std::string& kernel_name,
                                std::span<const uint8_t> object);

  struct State; // the LLJIT and its lock, shared with the programs so they can unload safely

private:
  std::shared_ptr<State> st_;
};

std::shared_ptr<Program> load_shared_object(std::shared_ptr<CpuRuntime> rt,
                                            const std::string& kernel_name,
                                            std::span<const uint8_t> so);

// ELF e_type of a binary: 1 relocatable, 3 shared object; 0 when it is not ELF.
int elf_type(std::span<const uint8_t> binary);

} // namespace tg::cpu
