#pragma once
// Device CL (and CL:1, CL:2 ...): one OpenCL device through the ICD loader, its context and
// in-order queue, the OpenCL C renderer with the device's limits as caps, the clBuildProgram
// compiler, cl_mem buffers and command-buffer graphs.
#include <memory>

#include "cl_allocator.hpp"
#include "cl_compiler.hpp"
#include "cl_queue.hpp"
#include "opencl_renderer.hpp"

namespace tg::cl {

// The renderer caps of an OpenCL device: work groups and local memory as the device reports
// them (the largest group is local_max[0] and bounds every dimension), vectors, half when it
// has cl_khr_fp16.
RendererCaps opencl_caps(const DeviceInfo& info);

class ClDevice : public Device {
public:
  // `name` is "CL" or "CL:<n>"; `renderer_name` the renderer's name.
  ClDevice(std::string name, DeviceInfo info, std::string renderer_name = "OpenCL");
  std::string name() const override { return ctx_->device_name; }
  Allocator& allocator() override { return allocator_; }
  std::vector<std::string> renderers() const override { return {renderer_.name()}; }
  Renderer& renderer(const std::string& name) override;
  Compiler& compiler(const std::string& renderer_name) override;
  std::shared_ptr<Program> load(const std::string& kernel_name,
                                std::span<const uint8_t> binary) override;
  Queue& queue() override { return queue_; }
  std::shared_ptr<Graph> graph(std::vector<GraphLaunch> launches) override;
  std::string arch() const override { return ""; }
  const DeviceInfo& info() const { return ctx_->info; }

private:
  std::shared_ptr<ClContext> ctx_;
  ClAllocator allocator_;
  OpenCLRenderer renderer_;
  ClCompiler compiler_;
  ClQueue queue_;
  CommandBufferApi cb_;
  bool simultaneous_use_ = false;
};

} // namespace tg::cl
