#pragma once
// OpenCL C -> a program binary for one device (clBuildProgram, then CL_PROGRAM_BINARIES), which
// the compile cache keeps on disk under identity(): platform, device, driver and C version. A
// build failure raises tg::Error naming the kernel, with the build log and, for every line the
// log points at, that line of the source.
#include "cl_context.hpp"
#include "tg/plugin/device.hpp"

namespace tg::cl {

class ClCompiler : public Compiler {
public:
  explicit ClCompiler(std::shared_ptr<ClContext> ctx) : ctx_(std::move(ctx)) {}
  std::string identity() const override;
  std::vector<uint8_t> compile(const std::string& source) override;

private:
  std::shared_ptr<ClContext> ctx_;
};

// The build log of `program` for the context's device.
std::string build_log(const ClContext& ctx, cl_program program);

} // namespace tg::cl
