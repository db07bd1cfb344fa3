#include "cl_device.hpp"

#include <algorithm>

#include "cl_graph.hpp"
#include "cl_program.hpp"
#include "tg/error.hpp"

namespace tg::cl {

namespace {
std::shared_ptr<ClContext> make_context(std::string name, DeviceInfo info) {
  auto ctx = std::make_shared<ClContext>(std::move(info));
  ctx->device_name = std::move(name);
  return ctx;
}
} // namespace

RendererCaps opencl_caps(const DeviceInfo& info) {
  RendererCaps caps;
  caps.has_local = true;
  caps.has_shared = info.local_mem_size > 0;
  caps.shared_max = static_cast<int64_t>(info.local_mem_size);
  caps.supports_float4 = true;
  caps.supports_half = info.has_extension("cl_khr_fp16");
  caps.has_transcendentals = true;
  const auto group = static_cast<int64_t>(info.max_work_group_size);
  for (size_t i = 0; i < 3; ++i) {
    caps.local_max[i] = std::min<int64_t>(static_cast<int64_t>(info.max_work_item_sizes[i]), group);
    caps.global_max[i] = 0x7fffffff;
  }
  return caps;
}

ClDevice::ClDevice(std::string name, DeviceInfo info, std::string renderer_name)
    : ctx_(make_context(std::move(name), std::move(info))), allocator_(ctx_),
      renderer_(std::move(renderer_name), opencl_caps(ctx_->info),
                {ctx_->info.has_extension("cl_khr_fp16"), ctx_->info.has_extension("cl_khr_fp64")}),
      compiler_(ctx_), queue_(ctx_) {
  if (ctx_->info.has_extension("cl_khr_command_buffer")) {
    cb_ = command_buffer_api(ctx_->info.platform);
    cl_device_command_buffer_capabilities_khr cap = 0;
    if (api().clGetDeviceInfo(ctx_->info.id, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof cap,
                              &cap, nullptr) == CL_SUCCESS)
      simultaneous_use_ = (cap & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
  }
}

Renderer& ClDevice::renderer(const std::string& name) {
  if (name != renderer_.name())
    throw Error(ctx_->device_name + " has no renderer '" + name + "'; it has " + renderer_.name());
  return renderer_;
}

Compiler& ClDevice::compiler(const std::string& renderer_name) {
  renderer(renderer_name);
  return compiler_;
}

std::shared_ptr<Program> ClDevice::load(const std::string& kernel_name,
                                        std::span<const uint8_t> binary) {
  return std::make_shared<ClProgram>(ctx_, kernel_name, binary);
}

std::shared_ptr<Graph> ClDevice::graph(std::vector<GraphLaunch> launches) {
  for (size_t i = 0; i < launches.size(); ++i)
    if (!launches[i].program)
      throw Error(ctx_->device_name + " graph: launch " + std::to_string(i) + " has no program");
  return std::make_shared<ClGraph>(ctx_, queue_, cb_, simultaneous_use_, std::move(launches));
}

} // namespace tg::cl
