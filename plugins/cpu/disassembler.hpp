#pragma once
// Assembly text of a host binary (either compiler's: an ELF object from LLVM, an ELF shared
// object from clang) through LLVM's disassembler, in process: what DEBUG=7 prints, from the
// cached binary itself, so a compile-cache hit shows the same code that runs.
#include <cstdint>
#include <span>
#include <string>

namespace tg::cpu {

// One line per instruction, each function under a label; a line saying why when the binary
// cannot be read.
std::string disassemble_host_elf(std::span<const uint8_t> binary);

} // namespace tg::cpu
