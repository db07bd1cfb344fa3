#include "torch_bench.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tinyrun {

namespace {

// Where the machine's CPU is named, for the benchmark's header line.
std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string run(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    rc = -1;
    return out;
  }
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

} // namespace

double run_torch_beside(const std::string& python, const std::string& script,
                        const std::string& args, double ours_ms) {
  std::printf("machine: %u cores, %s\n", std::thread::hardware_concurrency(), cpu_name().c_str());
  const std::filesystem::path path = std::filesystem::path(TG_SOURCE_DIR) / "bench" / script;
  int rc = 0;
  if (!std::filesystem::exists(path)) {
    std::printf("PyTorch: not run (%s is not there: run from a source tree)\n",
                path.string().c_str());
    return -1;
  }
  run("'" + python + "' -c 'import torch' 2>&1", rc);
  if (rc != 0) {
    std::printf("PyTorch: not run (%s cannot import torch; `bash scripts/install-deps.sh "
                "--bench` installs Debian's python3-torch, or pass --python PATH)\n",
                python.c_str());
    return -1;
  }
  std::fflush(stdout);
  const std::string out = run("'" + python + "' '" + path.string() + "' " + args + " 2>&1", rc);
  std::printf("%s", out.c_str());
  const size_t at = out.find("ms/step: ");
  if (rc != 0 || at == std::string::npos) {
    std::printf("PyTorch: the benchmark failed (exit %d)\n", rc);
    return -1;
  }
  const double torch_ms = std::strtod(out.c_str() + at + 9, nullptr);
  std::printf("ratio: tinygrad-cpp %.1f ms/step / PyTorch %.1f ms/step = %.2fx%s\n", ours_ms,
              torch_ms, ours_ms / torch_ms,
              ours_ms < torch_ms ? " (faster than PyTorch)" : " (slower than PyTorch)");
  return torch_ms;
}

} // namespace tinyrun
