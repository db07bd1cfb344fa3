#include "cl_program.hpp"

#include "cl_compiler.hpp"
#include "tg/error.hpp"

namespace tg::cl {

namespace {
std::string dims(const int64_t* d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}
} // namespace

ClProgram::ClProgram(std::shared_ptr<ClContext> ctx, std::string name,
                     std::span<const uint8_t> binary)
    : ctx_(std::move(ctx)), name_(std::move(name)) {
  const Api& a = api();
  const unsigned char* bin = binary.data();
  const size_t size = binary.size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  program_ =
      a.clCreateProgramWithBinary(ctx_->context, 1, &ctx_->info.id, &size, &bin, &status, &err);
  if (err == CL_SUCCESS) err = status;
  check(err, "clCreateProgramWithBinary for kernel " + name_ +
                 " (a stale compile cache entry? "
                 "TG_COMPILER_CACHE=0 bypasses it)");
  err = a.clBuildProgram(program_, 1, &ctx_->info.id, "", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = build_log(*ctx_, program_);
    a.clReleaseProgram(program_);
    throw Error("OpenCL: loading kernel " + name_ + " from its binary failed: " + error_name(err) +
                (log.empty() ? "" : "\n" + log));
  }
  kernel_ = a.clCreateKernel(program_, name_.c_str(), &err);
  if (err != CL_SUCCESS) {
    a.clReleaseProgram(program_);
    check(err, "clCreateKernel(\"" + name_ + "\")");
  }
  cl_uint n = 0;
  if (a.clGetKernelInfo(kernel_, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr) == CL_SUCCESS)
    num_args_ = n;
  a.clGetKernelWorkGroupInfo(kernel_, ctx_->info.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_group_,
                             &max_group_, nullptr);
  a.clGetKernelWorkGroupInfo(kernel_, ctx_->info.id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local_mem_,
                             &local_mem_, nullptr);
}

ClProgram::~ClProgram() {
  const Api& a = api();
  if (kernel_) a.clReleaseKernel(kernel_);
  if (program_) a.clReleaseProgram(program_);
}

ClProgram::Sizes ClProgram::set_args(cl_kernel kernel, const LaunchArgs& args) {
  const Api& a = api();
  const std::string where = "kernel " + name_ + " on " + ctx_->device_name;
  if (local_mem_ > ctx_->info.local_mem_size)
    throw Error(where + " needs " + std::to_string(local_mem_) +
                " bytes of local memory (CL_KERNEL_LOCAL_MEM_SIZE), the device has " +
                std::to_string(ctx_->info.local_mem_size) + " (CL_DEVICE_LOCAL_MEM_SIZE)");
  int64_t group = 1;
  for (int i = 0; i < 3; ++i) {
    if (args.local[i] < 1 || args.global[i] < 1)
      throw Error(where + ": work sizes must be at least 1, got global " +
                  dims(args.global.data()) + " local " + dims(args.local.data()));
    if (static_cast<size_t>(args.local[i]) > ctx_->info.max_work_item_sizes[i])
      throw Error(where + ": local size " + dims(args.local.data()) + " exceeds the device's " +
                  std::to_string(ctx_->info.max_work_item_sizes[i]) + " in dimension " +
                  std::to_string(i) + " (CL_DEVICE_MAX_WORK_ITEM_SIZES)");
    group *= args.local[i];
  }
  if (max_group_ > 0 && static_cast<size_t>(group) > max_group_)
    throw Error(where + ": a work group of " + dims(args.local.data()) + " = " +
                std::to_string(group) + " work items exceeds this kernel's maximum of " +
                std::to_string(max_group_) + " (CL_KERNEL_WORK_GROUP_SIZE)");
  const size_t nbuf = num_args_ >= args.vars.size() ? num_args_ - args.vars.size() : 0;
  if (num_args_ > 0 && (args.buffers.size() < nbuf))
    throw Error(where + " takes " + std::to_string(nbuf) + " buffers and " +
                std::to_string(args.vars.size()) + " variables, got " +
                std::to_string(args.buffers.size()) + " buffers");
  for (size_t i = 0; i < nbuf; ++i) {
    const ClBuffer* b = as_buffer(args.buffers[i]);
    if (b == nullptr || b->mem == nullptr)
      throw Error(where + ": buffer " + std::to_string(i) +
                  (b == nullptr ? " is null"
                                : " is a view at byte offset " + std::to_string(b->offset) +
                                      ", not a multiple of the device's base-address alignment (" +
                                      std::to_string(ctx_->info.base_address_align) +
                                      " bytes, CL_DEVICE_MEM_BASE_ADDR_ALIGN)"));
    check(a.clSetKernelArg(kernel, static_cast<cl_uint>(i), sizeof(cl_mem), &b->mem),
          "clSetKernelArg(buffer " + std::to_string(i) + ") of " + where);
  }
  for (size_t i = 0; i < args.vars.size(); ++i) {
    const cl_long v = args.vars[i];
    check(a.clSetKernelArg(kernel, static_cast<cl_uint>(nbuf + i), sizeof v, &v),
          "clSetKernelArg(variable " + std::to_string(i) + ") of " + where);
  }
  Sizes s{};
  s.driver_local = group == 1;
  for (int i = 0; i < 3; ++i) {
    s.local[i] = static_cast<size_t>(args.local[i]);
    s.global[i] = static_cast<size_t>(args.global[i] * args.local[i]);
  }
  return s;
}

cl_kernel ClProgram::new_kernel() const {
  cl_int err = CL_SUCCESS;
  cl_kernel k = api().clCreateKernel(program_, name_.c_str(), &err);
  check(err, "clCreateKernel(\"" + name_ + "\")");
  return k;
}

cl_event ClProgram::enqueue(const LaunchArgs& args) {
  std::lock_guard lock(ctx_->mu);
  const Sizes s = set_args(kernel_, args);
  cl_event ev = nullptr;
  check(api().clEnqueueNDRangeKernel(ctx_->queue, kernel_, 3, nullptr, s.global,
                                     s.driver_local ? nullptr : s.local, 0, nullptr, &ev),
        "clEnqueueNDRangeKernel of kernel " + name_ + " on " + ctx_->device_name);
  return ev;
}

double ClProgram::run(const LaunchArgs& args, bool timed) {
  const Api& a = api();
  cl_event ev = enqueue(args);
  const cl_int err = a.clWaitForEvents(1, &ev);
  double t = 0;
  if (err == CL_SUCCESS && timed) {
    cl_ulong start = 0, end = 0;
    a.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    a.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    t = static_cast<double>(end - start) * 1e-9;
  }
  a.clReleaseEvent(ev);
  check(err, "running kernel " + name_ + " on " + ctx_->device_name);
  return t;
}

} // namespace tg::cl
