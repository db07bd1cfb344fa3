// Objects into ORC LLJIT.
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include "llvm_compiler.hpp"
#include "loaders.hpp"
#include "tg/error.hpp"

namespace tg::cpu {

int elf_type(std::span<const uint8_t> b) {
  if (b.size() < 18 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F') return 0;
  return b[16] | (b[17] << 8); // little-endian e_type (x86-64)
}

struct JitHost::State {
  std::mutex mu;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  uint64_t next = 0;
};

JitHost::JitHost() : st_(std::make_shared<State>()) {
  init_llvm_native();
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    throw Error("CPU plugin: cannot start LLVM's ORC JIT: " + llvm::toString(jit.takeError()));
  st_->jit = std::move(*jit);
}

JitHost::~JitHost() = default;

std::shared_ptr<Program> JitHost::load(std::shared_ptr<CpuRuntime> rt,
                                       const std::string& kernel_name,
                                       std::span<const uint8_t> object) {
  std::lock_guard lock(st_->mu);
  llvm::orc::LLJIT* jit = st_->jit.get();
  // A dylib per program: kernels of the same name never clash, and unloading is per program.
  auto jd = jit->createJITDylib("tg_kernel_" + std::to_string(st_->next++));
  if (!jd)
    throw Error("CPU plugin: cannot create a JIT library: " + llvm::toString(jd.takeError()));
  llvm::orc::JITDylib* dylib = &*jd;
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char*>(object.data()), object.size()), kernel_name);
  if (auto err = jit->addObjectFile(*dylib, std::move(buf)))
    throw Error("CPU plugin: the JIT refuses the object of " + kernel_name + ": " +
                llvm::toString(std::move(err)));
  auto sym = jit->lookup(*dylib, kernel_name);
  if (!sym)
    throw Error("CPU plugin: kernel " + kernel_name + " not found in its object (" +
                llvm::toString(sym.takeError()) + "); was it compiled under another name?");
  auto fn = sym->toPtr<KernelFn>();
  std::shared_ptr<void> code(dylib, [st = st_](void* d) {
    std::lock_guard l(st->mu);
    llvm::consumeError(
        st->jit->getExecutionSession().removeJITDylib(*static_cast<llvm::orc::JITDylib*>(d)));
  });
  return std::make_shared<CpuProgram>(std::move(rt), fn, std::move(code));
}

} // namespace tg::cpu
