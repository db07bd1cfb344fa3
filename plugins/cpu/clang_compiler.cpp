// Runs clang as a child process (posix_spawn, no shell), stderr captured for the error.
#include "clang_compiler.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/TargetParser/Host.h>

#include "disassembler.hpp"
#include "temp_files.hpp"
#include "tg/error.hpp"

extern char** environ;

namespace tg::cpu {
namespace {

// Flags: -fwrapv because kernels wrap on integer overflow as exec_alu does; -ffp-contract=off
// so that a*b+c rounds twice, as the reference semantics and the LLVM renderer do.
const std::vector<std::string> kFlags = {
    "-O2", "-march=native", "-fwrapv", "-ffp-contract=off", "-fPIC", "-x", "c", "-std=gnu11", "-w"};

// Runs argv; returns its exit status, with stderr in `err`.
int run(const std::vector<std::string>& args, const std::string& err_path, std::string& err) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw Error("C compiler: cannot run " + args[0] + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  auto bytes = read_file(err_path);
  err.assign(bytes.begin(), bytes.end());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

std::string find_clang() {
  for (const char* p : {"/usr/bin/clang-19", "/usr/lib/llvm-19/bin/clang"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

ClangCompiler::ClangCompiler() {
  identity_ = "clang-19/" + llvm::sys::getHostCPUName().str();
  for (const auto& f : kFlags) identity_ += " " + f;
}

const std::string& ClangCompiler::clang_path() {
  std::call_once(clang_once_, [this] { clang_ = find_clang(); });
  if (clang_.empty())
    throw Error("C compiler: clang-19 not found (looked for /usr/bin/clang-19 and "
                "/usr/lib/llvm-19/bin/clang); install Debian's clang-19 or use the default "
                "LLVM renderer (DEV=CPU:LLVM)");
  return clang_;
}

std::vector<uint8_t> ClangCompiler::compile(const std::string& source) {
  TempDir dir;
  const std::string src = dir.file("kernel.c"), out = dir.file("kernel.so");
  write_file(src, std::span(reinterpret_cast<const uint8_t*>(source.data()), source.size()));
  std::vector<std::string> args{clang_path()};
  args.insert(args.end(), kFlags.begin(), kFlags.end());
  args.insert(args.end(), {"-shared", "-nostartfiles", src, "-o", out, "-lm"});
  std::string err;
  if (run(args, dir.file("stderr.txt"), err) != 0)
    throw Error("C compiler: clang failed on the kernel (a renderer bug; DEBUG=4 prints the "
                "source):\n" +
                err);
  return read_file(out);
}

std::string ClangCompiler::disassemble(std::span<const uint8_t> binary) {
  return disassemble_host_elf(binary);
}

} // namespace tg::cpu
