#pragma once
// The OpenCL Graph. Where the device has cl_khr_command_buffer (POCL does), a replay enqueues
// one command buffer holding every launch, each waiting for the one before (sync points).
// Without cl_khr_command_buffer_mutable_dispatch a recorded command's arguments are fixed, so a
// buffer is recorded per distinct set of arguments (each command with a kernel object of its
// own, whose arguments nothing else touches) and the last few are kept; a TinyJit replay whose
// inputs come back from the allocator at the same addresses reuses them. Without the
// extension a replay enqueues the launches one by one.
#include <list>

#include "cl_api.hpp"
#include "cl_queue.hpp"
#include "tg/plugin/recorded_graph.hpp"

namespace tg::cl {

class ClGraph : public plugin::RecordedGraph {
public:
  ClGraph(std::shared_ptr<ClContext> ctx, ClQueue& queue, CommandBufferApi cb,
          bool simultaneous_use, std::vector<GraphLaunch> launches);
  ~ClGraph() override;
  void replay(std::span<const LaunchArgs> args) override;
  // Command buffers recorded so far (a test checks that replays reuse them).
  size_t recorded() const { return recorded_; }

private:
  struct Recording {
    std::vector<DevicePtr> buffers;
    std::vector<int64_t> vars;
    cl_command_buffer_khr cmd = nullptr;
    std::vector<cl_kernel> kernels; // one per command
    uint64_t last = 0;              // the timeline value of its last enqueue
  };
  Recording record(std::span<const LaunchArgs> args);
  void release(Recording& r);

  std::shared_ptr<ClContext> ctx_;
  ClQueue& queue_;
  CommandBufferApi cb_;
  bool simultaneous_use_;
  std::list<Recording> cache_; // most recently used first
  size_t recorded_ = 0;
};

} // namespace tg::cl
