#include "cl_graph.hpp"

#include "cl_program.hpp"
#include "tg/error.hpp"

namespace tg::cl {

namespace {
constexpr size_t kKeptRecordings = 8;

void flatten(std::span<const LaunchArgs> args, std::vector<DevicePtr>& buffers,
             std::vector<int64_t>& vars) {
  for (const LaunchArgs& a : args) {
    buffers.insert(buffers.end(), a.buffers.begin(), a.buffers.end());
    vars.insert(vars.end(), a.vars.begin(), a.vars.end());
  }
}
} // namespace

ClGraph::ClGraph(std::shared_ptr<ClContext> ctx, ClQueue& queue, CommandBufferApi cb,
                 bool simultaneous_use, std::vector<GraphLaunch> launches)
    : RecordedGraph(ctx->device_name, std::move(launches)), ctx_(std::move(ctx)), queue_(queue),
      cb_(cb), simultaneous_use_(simultaneous_use) {
  for (const GraphLaunch& l : this->launches())
    if (dynamic_cast<ClProgram*>(l.program.get()) == nullptr)
      throw Error(ctx_->device_name + " graph: a launch's program was not loaded by this device");
}

ClGraph::~ClGraph() {
  for (Recording& r : cache_) release(r);
}

void ClGraph::release(Recording& r) {
  if (r.last) {
    try {
      queue_.wait(r.last);
    } catch (const std::exception&) { // the failure was the replay's to report
    }
  }
  if (r.cmd) cb_.release(r.cmd);
  for (cl_kernel k : r.kernels) api().clReleaseKernel(k);
  r.cmd = nullptr;
  r.kernels.clear();
}

ClGraph::Recording ClGraph::record(std::span<const LaunchArgs> args) {
  Recording r;
  flatten(args, r.buffers, r.vars);
  cl_int err = CL_SUCCESS;
  const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                    CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  r.cmd = cb_.create(1, &ctx_->queue, simultaneous_use_ ? props : nullptr, &err);
  check(err, "clCreateCommandBufferKHR");
  try {
    std::lock_guard lock(ctx_->mu);
    cl_sync_point_khr prev = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      auto& prg = static_cast<ClProgram&>(*launches()[i].program);
      r.kernels.push_back(prg.new_kernel());
      const ClProgram::Sizes s = prg.set_args(r.kernels.back(), args[i]);
      cl_sync_point_khr point = 0;
      check(cb_.ndrange(r.cmd, nullptr, nullptr, r.kernels.back(), 3, nullptr, s.global,
                        s.driver_local ? nullptr : s.local, i ? 1 : 0, i ? &prev : nullptr, &point,
                        nullptr),
            "clCommandNDRangeKernelKHR of kernel " + prg.name());
      prev = point;
    }
    check(cb_.finalize(r.cmd), "clFinalizeCommandBufferKHR");
  } catch (...) {
    release(r);
    throw;
  }
  ++recorded_;
  return r;
}

void ClGraph::replay(std::span<const LaunchArgs> args) {
  check_replay(args);
  if (args.empty()) return;
  if (!cb_.available()) {
    for (size_t i = 0; i < args.size(); ++i) queue_.exec(launches()[i].program, args[i]);
    return;
  }
  std::vector<DevicePtr> buffers;
  std::vector<int64_t> vars;
  flatten(args, buffers, vars);
  auto it = cache_.begin();
  while (it != cache_.end() && (it->buffers != buffers || it->vars != vars)) ++it;
  if (it == cache_.end()) {
    if (cache_.size() >= kKeptRecordings) {
      release(cache_.back());
      cache_.pop_back();
    }
    cache_.push_front(record(args));
  } else {
    cache_.splice(cache_.begin(), cache_, it);
  }
  Recording& r = cache_.front();
  // Without simultaneous use a command buffer may not be enqueued while it is still pending.
  if (!simultaneous_use_ && r.last) queue_.wait(r.last);
  cl_event ev = nullptr;
  {
    std::lock_guard lock(ctx_->mu);
    check(cb_.enqueue(0, nullptr, r.cmd, 0, nullptr, &ev), "clEnqueueCommandBufferKHR");
  }
  api().clFlush(ctx_->queue);
  r.last =
      queue_.push(ev, ctx_->device_name + " graph of " + std::to_string(args.size()) + " launches");
}

} // namespace tg::cl
