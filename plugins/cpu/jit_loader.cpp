// Objects into ORC LLJIT.
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <unistd.h>

#include <cstdio>

#include "llvm_compiler.hpp"
#include "loaders.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg::cpu {

int elf_type(std::span<const uint8_t> b) {
  if (b.size() < 18 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F') return 0;
  return b[16] | (b[17] << 8); // little-endian e_type (x86-64)
}

namespace {

// The size of symbol `name` in an ELF relocatable object (0 when it has none).
uint64_t symbol_size(std::span<const uint8_t> object, const std::string& name) {
  auto obj = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char*>(object.data()), object.size()), name));
  if (!obj) {
    llvm::consumeError(obj.takeError());
    return 0;
  }
  for (const llvm::object::SymbolRef& sym : (*obj)->symbols()) {
    auto n = sym.getName();
    if (!n) {
      llvm::consumeError(n.takeError());
      continue;
    }
    if (*n == name) return llvm::object::ELFSymbolRef(sym).getSize();
  }
  return 0;
}

// perf's map of JIT code (/tmp/perf-PID.map: "START SIZE NAME" in hex, a line per function):
// with it, perf report names the kernels instead of showing bare addresses. Called under the
// host's lock.
void add_to_perf_map(uint64_t address, uint64_t size, const std::string& name) {
  static FILE* map = [] {
    const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
    FILE* f = std::fopen(path.c_str(), "a");
    if (f == nullptr)
      std::fprintf(stderr, "CPU plugin: CPU_PERF_MAP: cannot open %s for writing\n", path.c_str());
    return f;
  }();
  if (map == nullptr) return;
  std::fprintf(map, "%llx %llx %s\n", static_cast<unsigned long long>(address),
               static_cast<unsigned long long>(size), name.c_str());
  std::fflush(map);
}

} // namespace

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
  if (knobs::CPU_PERF_MAP.get() != 0)
    if (const uint64_t size = symbol_size(object, kernel_name))
      add_to_perf_map(sym->getValue(), size, kernel_name);
  std::shared_ptr<void> code(dylib, [st = st_](void* d) {
    std::lock_guard l(st->mu);
    llvm::consumeError(
        st->jit->getExecutionSession().removeJITDylib(*static_cast<llvm::orc::JITDylib*>(d)));
  });
  return std::make_shared<CpuProgram>(std::move(rt), fn, std::move(code));
}

} // namespace tg::cpu
