#pragma once
// A loaded kernel: the program built from its binary, the cl_kernel, and what the device allows
// it (work-group size, local memory). enqueue() sets its arguments (buffers as cl_mem, every
// variable as a long) and queues it on the in-order queue over global * local work items, after
// checking the launch against those limits with errors naming the kernel.
#include <string>

#include "cl_allocator.hpp"
#include "cl_context.hpp"
#include "tg/plugin/device.hpp"

namespace tg::cl {

class ClProgram : public Program {
public:
  ClProgram(std::shared_ptr<ClContext> ctx, std::string name, std::span<const uint8_t> binary);
  ~ClProgram() override;
  // Queues the launch and returns its completion event (the caller releases it).
  cl_event enqueue(const LaunchArgs& args);
  // Sets the arguments of `kernel` (this program's, or one from new_kernel()) for `args` and
  // checks the launch; returns the work sizes.
  struct Sizes {
    size_t global[3], local[3];
    bool driver_local; // no local indices: the driver picks the work-group size
  };
  Sizes set_args(cl_kernel kernel, const LaunchArgs& args);
  // Another kernel object of this program, with arguments of its own (a graph's recorded
  // launch keeps one); the caller releases it.
  cl_kernel new_kernel() const;
  double run(const LaunchArgs& args, bool timed) override;
  const std::string& name() const { return name_; }
  cl_kernel kernel() const { return kernel_; }

private:
  std::shared_ptr<ClContext> ctx_;
  std::string name_;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  cl_uint num_args_ = 0;
  size_t max_group_ = 0;   // CL_KERNEL_WORK_GROUP_SIZE
  cl_ulong local_mem_ = 0; // CL_KERNEL_LOCAL_MEM_SIZE
};

} // namespace tg::cl
