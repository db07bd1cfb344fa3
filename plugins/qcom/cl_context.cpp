#include "cl_context.hpp"

namespace tg::cl {

ClContext::ClContext(DeviceInfo dev) : info(std::move(dev)) {
  const Api& a = api();
  cl_int err = CL_SUCCESS;
  context = a.clCreateContext(nullptr, 1, &info.id, nullptr, nullptr, &err);
  check(err, "clCreateContext for " + info.describe());
  queue = a.clCreateCommandQueue(context, info.id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    a.clReleaseContext(context);
    check(err, "clCreateCommandQueue (in order, with profiling) for " + info.describe());
  }
}

ClContext::~ClContext() {
  const Api& a = api();
  if (queue) {
    a.clFinish(queue);
    a.clReleaseCommandQueue(queue);
  }
  if (context) a.clReleaseContext(context);
}

} // namespace tg::cl
