// NVRTC and nvJitLink, and the error messages of a failed build.
#include "cuda_compiler.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "toolkit.hpp"

namespace tg::cuda {

namespace {

const Nvrtc& nvrtc() {
  std::string why;
  const Nvrtc* n = load_nvrtc(why);
  if (n == nullptr) throw Error("CUDA compiler: " + why);
  return *n;
}

const NvJitLink& nvjitlink() {
  std::string why;
  const NvJitLink* n = load_nvjitlink(why);
  if (n == nullptr) throw Error("CUDA compiler: " + why);
  return *n;
}

// NVRTC's log with each "kernel.cu(N): error" followed by source line N.
std::string annotate_log(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream src(source);
  for (std::string l; std::getline(src, l);) lines.push_back(l);
  std::string out;
  std::istringstream in(log);
  static const std::regex where(R"(\((\d+)\): (error|warning))");
  for (std::string l; std::getline(in, l);) {
    out += "  " + l + "\n";
    std::smatch m;
    if (std::regex_search(l, m, where)) {
      const size_t n = std::stoul(m[1].str());
      if (n >= 1 && n <= lines.size())
        out += "  line " + std::to_string(n) + ": " + lines[n - 1] + "\n";
    }
  }
  return out;
}

// The options every compile passes: the virtual architecture, exact float rounding.
std::vector<std::string> nvrtc_options(const Arch& arch, const Nvrtc& n) {
  std::vector<std::string> opts = {"--gpu-architecture=" + arch.compute(), "--fmad=false",
                                   "-std=c++17", "-default-device"};
  if (!n.include_dir.empty()) opts.push_back("--include-path=" + n.include_dir);
  return opts;
}

} // namespace

std::string kernel_name_in(const std::string& source) {
  static const std::regex cuda_c(R"(__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\()");
  static const std::regex ptx(R"(\.entry (\w+)\()");
  std::smatch m;
  if (std::regex_search(source, m, cuda_c)) return m[1].str();
  if (std::regex_search(source, m, ptx)) return m[1].str();
  return "?";
}

CudaCompiler::CudaCompiler(const Arch& arch, std::optional<Arch> link_to)
    : arch_(arch), link_to_(link_to) {
  const Nvrtc& n = nvrtc();
  identity_ = "cuda nvrtc " + std::to_string(n.major) + "." + std::to_string(n.minor);
  for (const std::string& o : nvrtc_options(arch, n))
    if (o.rfind("--include-path", 0) != 0) identity_ += " " + o;
  if (link_to) {
    const NvJitLink& j = nvjitlink();
    identity_ += " nvjitlink " + std::to_string(j.major) + "." + std::to_string(j.minor) + " " +
                 link_to->sm();
  }
}

std::string CudaCompiler::to_ptx(const std::string& source) const {
  const Nvrtc& n = nvrtc();
  const std::string name = kernel_name_in(source);
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r = n.nvrtcCreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr, nullptr);
      r != 0)
    throw Error("CUDA compiler: nvrtcCreateProgram for kernel " + name +
                " failed: " + n.nvrtcGetErrorString(r));
  struct Destroy {
    const Nvrtc& n;
    nvrtcProgram& p;
    ~Destroy() { n.nvrtcDestroyProgram(&p); }
  } destroy{n, prog};
  const std::vector<std::string> opts = nvrtc_options(arch_, n);
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = n.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  if (r != 0) {
    size_t log_size = 0;
    n.nvrtcGetProgramLogSize(prog, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) n.nvrtcGetProgramLog(prog, log.data());
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    throw Error("CUDA compiler: building kernel " + name + " for " + arch_.compute() + " failed (" +
                n.nvrtcGetErrorString(r) + "); NVRTC's log:\n" + annotate_log(log, source));
  }
  size_t size = 0;
  n.nvrtcGetPTXSize(prog, &size);
  std::string ptx(size, '\0');
  n.nvrtcGetPTX(prog, ptx.data());
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

std::vector<uint8_t> link_ptx(const std::string& ptx, const Arch& target) {
  const NvJitLink& j = nvjitlink();
  const std::string name = kernel_name_in(ptx);
  const std::string arch_opt = "-arch=" + target.sm();
  const char* opts[] = {arch_opt.c_str()};
  nvJitLinkHandle h = nullptr;
  if (nvJitLinkResult r = j.nvJitLinkCreate(&h, 1, opts); r != 0)
    throw Error("CUDA compiler: nvJitLinkCreate for " + target.sm() + " failed (" +
                std::to_string(r) + ")");
  struct Destroy {
    const NvJitLink& j;
    nvJitLinkHandle& h;
    ~Destroy() { j.nvJitLinkDestroy(&h); }
  } destroy{j, h};
  auto fail = [&](const std::string& step, nvJitLinkResult r) {
    size_t log_size = 0;
    j.nvJitLinkGetErrorLogSize(h, &log_size);
    std::string log(log_size, '\0');
    if (log_size > 0) j.nvJitLinkGetErrorLog(h, log.data());
    throw Error("CUDA compiler: linking kernel " + name + " for " + target.sm() + ": " + step +
                " failed (" + std::to_string(r) + "); nvJitLink's log:\n" + annotate_log(log, ptx));
  };
  if (nvJitLinkResult r =
          j.nvJitLinkAddData(h, kNvJitLinkInputPtx, ptx.data(), ptx.size() + 1, "kernel.ptx");
      r != 0)
    fail("nvJitLinkAddData", r);
  if (nvJitLinkResult r = j.nvJitLinkComplete(h); r != 0) fail("nvJitLinkComplete", r);
  size_t size = 0;
  j.nvJitLinkGetLinkedCubinSize(h, &size);
  std::vector<uint8_t> cubin(size);
  j.nvJitLinkGetLinkedCubin(h, cubin.data());
  return cubin;
}

std::vector<uint8_t> CudaCompiler::link(const std::string& ptx) const {
  return link_ptx(ptx, link_to_.value_or(arch_));
}

std::vector<uint8_t> CudaCompiler::compile(const std::string& source) {
  // PTX from the LLVM renderer needs no NVRTC step.
  const bool is_ptx =
      source.find(".entry ") != std::string::npos && source.find("__global__") == std::string::npos;
  const std::string ptx = is_ptx ? source : to_ptx(source);
  if (link_to_) return link(ptx);
  std::vector<uint8_t> out(ptx.begin(), ptx.end());
  out.push_back(0); // cuModuleLoadData takes PTX as a NUL-terminated string
  return out;
}

std::string CudaCompiler::disassemble(std::span<const uint8_t> binary) {
  if (!link_to_)
    return std::string(binary.begin(), binary.end() - (binary.empty() || binary.back() ? 0 : 1));
  // SASS through nvdisasm (or cuobjdump) from the toolkit, where it is installed.
  std::string tool = toolkit_program("nvdisasm");
  std::string flags = " -c ";
  if (tool.empty()) {
    tool = toolkit_program("cuobjdump");
    flags = " -sass ";
  }
  if (tool.empty()) return {};
  std::error_code ec;
  const std::string dir = knobs::TMPDIR.get().empty() ? "/tmp" : knobs::TMPDIR.get();
  const std::string path = dir + "/tg-cuda-" + std::to_string(getpid()) + ".cubin";
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(binary.data()),
            static_cast<std::streamsize>(binary.size()));
  }
  std::string out;
  if (FILE* p = popen((tool + flags + path + " 2>&1").c_str(), "r")) {
    char buf[4096];
    for (size_t k; (k = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, k);
    pclose(p);
  }
  std::filesystem::remove(path, ec);
  return out;
}

} // namespace tg::cuda
