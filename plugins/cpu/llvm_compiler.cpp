// LLVM IR -> optimized object file, in process.
#include "llvm_compiler.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include "disassembler.hpp"
#include "tg/error.hpp"

namespace tg::cpu {

void init_llvm_native() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

LlvmCompiler::LlvmCompiler() {
  init_llvm_native();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    throw Error("CPU plugin: LLVM cannot describe this host (" + llvm::toString(jtmb.takeError()) +
                "); is LLVM 19's native target installed?");
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default); // -O2
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    throw Error("CPU plugin: LLVM cannot create a target machine: " +
                llvm::toString(tm.takeError()));
  tm_ = std::move(*tm);
  identity_ = "llvm-" LLVM_VERSION_STRING "/" + tm_->getTargetTriple().str() + "/" +
              tm_->getTargetCPU().str() + "/" + tm_->getTargetFeatureString().str() + "/O2";
}

LlvmCompiler::~LlvmCompiler() = default;

std::vector<uint8_t> LlvmCompiler::compile(const std::string& source) { return emit(source); }

std::string LlvmCompiler::disassemble(std::span<const uint8_t> binary) {
  return disassemble_host_elf(binary);
}

std::unique_ptr<llvm::TargetMachine> LlvmCompiler::acquire() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      std::unique_ptr<llvm::TargetMachine> tm = std::move(free_.back());
      free_.pop_back();
      return tm;
    }
  }
  std::unique_ptr<llvm::TargetMachine> tm(tm_->getTarget().createTargetMachine(
      tm_->getTargetTriple().str(), tm_->getTargetCPU(), tm_->getTargetFeatureString(),
      tm_->Options, tm_->getRelocationModel(), tm_->getCodeModel(), tm_->getOptLevel()));
  if (!tm) throw Error("LLVM compiler: cannot create another target machine for this host");
  return tm;
}

void LlvmCompiler::release(std::unique_ptr<llvm::TargetMachine> tm) {
  if (!tm) return;
  std::lock_guard lock(mu_);
  free_.push_back(std::move(tm));
}

std::vector<uint8_t> LlvmCompiler::emit(const std::string& source) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  auto mod = llvm::parseIR(llvm::MemoryBufferRef(source, "kernel.ll"), diag, ctx);
  if (!mod) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    diag.print("kernel.ll", os, false);
    throw Error("LLVM compiler: the kernel's IR does not parse: " + os.str() +
                "(a renderer bug; DEBUG=4 prints the IR)");
  }
  std::string verify_msg;
  llvm::raw_string_ostream vos(verify_msg);
  if (llvm::verifyModule(*mod, &vos))
    throw Error("LLVM compiler: the kernel's IR is invalid: " + vos.str() +
                "(a renderer bug; DEBUG=4 prints the IR)");

  std::unique_ptr<llvm::TargetMachine> tm = acquire();
  struct Release {
    LlvmCompiler* self;
    std::unique_ptr<llvm::TargetMachine>& tm;
    ~Release() { self->release(std::move(tm)); }
  } release_at_end{this, tm};
  mod->setDataLayout(tm->createDataLayout());
  mod->setTargetTriple(tm->getTargetTriple().str());

  // -O2, with the target's cost model so the vectorizers use AVX2 widths.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(*mod, mam);

  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw Error("LLVM compiler: this target cannot emit objects");
  pm.run(*mod);
  return std::vector<uint8_t>(out.begin(), out.end());
}

} // namespace tg::cpu
