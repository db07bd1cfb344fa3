// LLVM's NVPTX back end, in process.
#include "ptx_compiler.hpp"

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "cuda_compiler.hpp"
#include "tg/error.hpp"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tg::cuda {

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

// The oldest PTX ISA that has the architecture (LLVM's NVPTX features).
std::string ptx_feature(const Arch& arch) {
  const int n = arch.number();
  if (n >= 90) return "+ptx80";
  if (n >= 89) return "+ptx78";
  if (n >= 87) return "+ptx74";
  if (n >= 86) return "+ptx71";
  if (n >= 80) return "+ptx70";
  if (n >= 75) return "+ptx63";
  return "+ptx60";
}

} // namespace

PtxCompiler::PtxCompiler(const Arch& arch, std::optional<Arch> link_to)
    : arch_(arch), link_to_(link_to) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (target == nullptr)
    throw Error("PTX compiler: LLVM has no NVPTX target (" + err +
                "); install an LLVM 19 built with it (Debian's is)");
  llvm::TargetOptions options; // no fast-math: IEEE results, as the CPU
  tm_.reset(target->createTargetMachine(kTriple, arch.sm(), ptx_feature(arch), options,
                                        std::nullopt, std::nullopt,
                                        llvm::CodeGenOptLevel::Aggressive));
  if (!tm_) throw Error("PTX compiler: LLVM cannot create an NVPTX target for " + arch.sm());
  identity_ = "llvm-" LLVM_VERSION_STRING " nvptx64 " + arch.sm() + " " + ptx_feature(arch) + " O3";
  if (link_to) identity_ += " nvjitlink " + link_to->sm();
}

PtxCompiler::~PtxCompiler() = default;

std::string PtxCompiler::to_ptx(const std::string& ir) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  auto mod = llvm::parseIR(llvm::MemoryBufferRef(ir, "kernel.ll"), diag, ctx);
  if (!mod) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    diag.print("kernel.ll", os, false);
    throw Error("PTX compiler: the kernel's IR does not parse: " + os.str() +
                "(a renderer bug; DEBUG=4 prints the IR)");
  }
  std::string verify_msg;
  llvm::raw_string_ostream vos(verify_msg);
  if (llvm::verifyModule(*mod, &vos))
    throw Error("PTX compiler: the kernel's IR is invalid: " + vos.str() +
                "(a renderer bug; DEBUG=4 prints the IR)");
  std::lock_guard lock(mu_);
  mod->setDataLayout(tm_->createDataLayout());
  mod->setTargetTriple(kTriple);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm_.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*mod, mam);
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm_->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw Error("PTX compiler: LLVM's NVPTX target cannot emit PTX");
  pm.run(*mod);
  return std::string(out.begin(), out.end());
}

std::vector<uint8_t> PtxCompiler::compile(const std::string& source) {
  const std::string ptx = to_ptx(source);
  if (link_to_) return link_ptx(ptx, *link_to_);
  std::vector<uint8_t> out(ptx.begin(), ptx.end());
  out.push_back(0);
  return out;
}

std::string PtxCompiler::disassemble(std::span<const uint8_t> binary) {
  if (link_to_) return {};
  return std::string(binary.begin(), binary.end() - (binary.empty() || binary.back() ? 0 : 1));
}

} // namespace tg::cuda
