#pragma once
// Compiler for renderer "C": runs clang-19 (-O2 -march=native -fwrapv -ffp-contract=off
// -shared -fPIC) on the source; the shared object's bytes are the binary, which the device
// writes to a temporary file and dlopen()s.
#include <mutex>

#include "tg/plugin/device.hpp"

namespace tg::cpu {

// The clang-19 executable: /usr/bin/clang-19 or /usr/lib/llvm-19/bin/clang; "" when neither.
std::string find_clang();

class ClangCompiler : public Compiler {
public:
  ClangCompiler();
  std::string identity() const override { return identity_; }
  std::vector<uint8_t> compile(const std::string& source) override;
  std::string disassemble(std::span<const uint8_t> binary) override;

private:
  std::string clang_;         // found lazily: the C renderer is optional, LLVM is the default
  std::once_flag clang_once_; // compiles may run in parallel (BEAM)
  std::string identity_;
  const std::string& clang_path();
};

} // namespace tg::cpu
