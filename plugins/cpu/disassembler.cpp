#include "disassembler.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include <llvm/ADT/StringRef.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

namespace tg::cpu {

std::string disassemble_host_elf(std::span<const uint8_t> binary) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetDisassembler();
  });
  const llvm::StringRef bytes(reinterpret_cast<const char*>(binary.data()), binary.size());
  auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "kernel"));
  if (!obj) return "(cannot read the binary: " + llvm::toString(obj.takeError()) + ")";
  const std::string triple = llvm::sys::getProcessTriple();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (target == nullptr) return "(no disassembler for " + triple + ": " + err + ")";
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(triple));
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCAsmInfo> mai(target->createMCAsmInfo(*mri, triple, options));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, llvm::sys::getHostCPUName(), ""));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  llvm::MCContext ctx(llvm::Triple(triple), mai.get(), mri.get(), sti.get());
  std::unique_ptr<llvm::MCDisassembler> dis(target->createMCDisassembler(*sti, ctx));
  std::unique_ptr<llvm::MCInstPrinter> printer(
      target->createMCInstPrinter(llvm::Triple(triple), 0, *mai, *mii, *mri));
  if (!dis || !printer) return "(no disassembler for " + triple + ")";

  std::string out;
  llvm::raw_string_ostream os(out);
  for (const llvm::object::SectionRef& section : (*obj)->sections()) {
    if (!section.isText()) continue;
    auto contents = section.getContents();
    if (!contents) continue;
    // Function labels by address within the section.
    std::map<uint64_t, std::string> labels;
    for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
      auto sec = sym.getSection();
      auto name = sym.getName();
      auto addr = sym.getAddress();
      if (!sec || !name || !addr || *sec != section || name->empty()) continue;
      labels[*addr - section.getAddress()] = name->str();
    }
    const llvm::ArrayRef<uint8_t> code(reinterpret_cast<const uint8_t*>(contents->data()),
                                       contents->size());
    for (uint64_t offset = 0; offset < code.size();) {
      if (auto l = labels.find(offset); l != labels.end()) os << l->second << ":\n";
      llvm::MCInst inst;
      uint64_t size = 0;
      const uint64_t address = section.getAddress() + offset;
      if (dis->getInstruction(inst, size, code.slice(offset), address, llvm::nulls()) !=
          llvm::MCDisassembler::Success) {
        os << "\t(bad instruction)\n";
        size = std::max<uint64_t>(size, 1);
      } else {
        printer->printInst(&inst, address, "", *sti, os);
        os << "\n";
      }
      offset += size;
    }
  }
  os.flush();
  return out;
}

} // namespace tg::cpu
