// clBuildProgram and the build log.
#include "cl_compiler.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

#include "tg/error.hpp"

namespace tg::cl {

namespace {

// The kernel's name: what follows "__kernel void " in the source.
std::string kernel_name_of(const std::string& source) {
  const std::string key = "__kernel void ";
  const size_t at = source.find(key);
  if (at == std::string::npos) return "(unnamed)";
  const size_t begin = at + key.size();
  return source.substr(begin, source.find('(', begin) - begin);
}

// Each source line the log names (":LINE:COLUMN:" as clang-based compilers write it, POCL
// after the path of its temporary copy of the source), numbered, once.
std::string offending_lines(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  static const std::regex at(R"(:(\d+):(\d+):)");
  std::string out;
  std::vector<size_t> shown;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), at); it != std::sregex_iterator();
       ++it) {
    const size_t n = std::stoul((*it)[1].str());
    if (n == 0 || n > lines.size() || std::find(shown.begin(), shown.end(), n) != shown.end())
      continue;
    shown.push_back(n);
    out += "  line " + std::to_string(n) + ": " + lines[n - 1] + "\n";
  }
  return out;
}

} // namespace

std::string build_log(const ClContext& ctx, cl_program program) {
  const Api& a = api();
  size_t n = 0;
  if (a.clGetProgramBuildInfo(program, ctx.info.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) !=
          CL_SUCCESS ||
      n == 0)
    return "";
  std::string log(n, '\0');
  a.clGetProgramBuildInfo(program, ctx.info.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string ClCompiler::identity() const { return "opencl|" + ctx_->info.identity(); }

std::vector<uint8_t> ClCompiler::compile(const std::string& source) {
  const Api& a = api();
  const std::string kernel = kernel_name_of(source);
  const char* src = source.c_str();
  const size_t len = source.size();
  cl_int err = CL_SUCCESS;
  cl_program program = a.clCreateProgramWithSource(ctx_->context, 1, &src, &len, &err);
  check(err, "clCreateProgramWithSource for kernel " + kernel);
  struct Release {
    cl_program p;
    ~Release() { api().clReleaseProgram(p); }
  } release{program};
  err = a.clBuildProgram(program, 1, &ctx_->info.id, "", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(*ctx_, program);
    throw Error("OpenCL: building kernel " + kernel + " for " + ctx_->device_name + " (" +
                ctx_->info.name + ") failed: " + error_name(err) + "\n" +
                offending_lines(log, source) + "build log:\n" + log + "\nsource:\n" + source);
  }
  size_t size = 0;
  check(a.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES) for kernel " + kernel);
  std::vector<uint8_t> binary(size);
  unsigned char* ptr = binary.data();
  check(a.clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES) for kernel " + kernel);
  if (binary.empty())
    throw Error("OpenCL: the driver of " + ctx_->info.name + " returned no binary for kernel " +
                kernel);
  return binary;
}

} // namespace tg::cl
