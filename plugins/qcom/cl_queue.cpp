#include "cl_queue.hpp"

#include "cl_allocator.hpp"
#include "cl_program.hpp"
#include "tg/error.hpp"

namespace tg::cl {

ClQueue::~ClQueue() {
  try {
    wait(next_ - 1);
  } catch (const std::exception&) { // a failure nobody waited for: nothing left to tell
  }
}

uint64_t ClQueue::push(cl_event ev, std::string what, std::shared_ptr<const void> keepalive,
                       bool is_timestamp) {
  std::lock_guard lock(mu_);
  const uint64_t v = next_++;
  pending_.push_back({v, ev, std::move(what), std::move(keepalive), is_timestamp});
  return v;
}

void ClQueue::exec(std::shared_ptr<Program> prg, LaunchArgs args) {
  auto* p = dynamic_cast<ClProgram*>(prg.get());
  if (p == nullptr) throw Error("OpenCL queue: the program was not loaded by an OpenCL device");
  cl_event ev = p->enqueue(args);
  api().clFlush(ctx_->queue);
  push(ev, "kernel " + p->name(), prg);
}

void ClQueue::copy_in(DevicePtr dst, std::vector<uint8_t> data) {
  if (data.empty()) return;
  auto held = std::make_shared<std::vector<uint8_t>>(std::move(data));
  const ClBuffer* b = as_buffer(dst);
  cl_event ev = nullptr;
  {
    std::lock_guard lock(ctx_->mu);
    check(api().clEnqueueWriteBuffer(ctx_->queue, b->base, CL_FALSE, b->offset, held->size(),
                                     held->data(), 0, nullptr, &ev),
          "clEnqueueWriteBuffer of " + std::to_string(held->size()) + " bytes");
  }
  push(ev, "copy in", held);
}

void ClQueue::copy_out(void* dst, DevicePtr src, size_t bytes) {
  if (bytes == 0) return;
  const ClBuffer* b = as_buffer(src);
  cl_event ev = nullptr;
  {
    std::lock_guard lock(ctx_->mu);
    check(api().clEnqueueReadBuffer(ctx_->queue, b->base, CL_FALSE, b->offset, bytes, dst, 0,
                                    nullptr, &ev),
          "clEnqueueReadBuffer of " + std::to_string(bytes) + " bytes");
  }
  push(ev, "copy out");
}

uint64_t ClQueue::signal() {
  cl_event ev = nullptr;
  {
    std::lock_guard lock(ctx_->mu);
    check(api().clEnqueueMarkerWithWaitList(ctx_->queue, 0, nullptr, &ev),
          "clEnqueueMarkerWithWaitList");
  }
  api().clFlush(ctx_->queue);
  return push(ev, "marker");
}

uint64_t ClQueue::timestamp() {
  cl_event ev = nullptr;
  {
    std::lock_guard lock(ctx_->mu);
    check(api().clEnqueueMarkerWithWaitList(ctx_->queue, 0, nullptr, &ev),
          "clEnqueueMarkerWithWaitList (timestamp)");
  }
  return push(ev, "timestamp", nullptr, true);
}

void ClQueue::retire(uint64_t value) {
  const Api& a = api();
  while (true) {
    Pending p;
    {
      std::lock_guard lock(mu_);
      if (pending_.empty() || pending_.front().value > value) return;
      p = std::move(pending_.front());
      pending_.pop_front();
    }
    cl_int status = CL_COMPLETE;
    a.clGetEventInfo(p.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    double t = 0;
    if (p.is_timestamp && status == CL_COMPLETE) {
      cl_ulong end = 0;
      a.clGetEventProfilingInfo(p.event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      t = static_cast<double>(end) * 1e-9;
    }
    a.clReleaseEvent(p.event);
    std::lock_guard lock(mu_);
    if (status < 0 && error_.empty())
      error_ = "OpenCL: " + p.what + " on " + ctx_->device_name + " failed: " + error_name(status);
    if (p.is_timestamp) {
      times_[p.value] = t;
      if (times_.size() > 65536) times_.erase(times_.begin());
    }
    done_ = std::max(done_, p.value);
  }
}

void ClQueue::wait(uint64_t value) {
  cl_event ev = nullptr;
  {
    std::lock_guard lock(mu_);
    if (value >= next_)
      throw Error("OpenCL queue: wait(" + std::to_string(value) + ") for a value not signaled yet");
    // In order: the last pending command at or before `value` completes after all before it.
    for (const Pending& p : pending_)
      if (p.value <= value) ev = p.event;
    if (ev) api().clRetainEvent(ev);
  }
  if (ev) {
    api().clFlush(ctx_->queue);
    api().clWaitForEvents(1, &ev); // a failure shows in the event statuses retire() reads
    api().clReleaseEvent(ev);
  }
  retire(value);
  std::lock_guard lock(mu_);
  done_ = std::max(done_, value);
  if (!error_.empty()) throw Error(std::exchange(error_, std::string()));
}

uint64_t ClQueue::completed() const {
  std::lock_guard lock(mu_);
  uint64_t done = done_;
  for (const Pending& p : pending_) {
    cl_int status = CL_QUEUED;
    api().clGetEventInfo(p.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                         nullptr);
    if (status != CL_COMPLETE && status >= 0) break;
    done = p.value;
  }
  return done;
}

double ClQueue::timestamp_seconds(uint64_t value) {
  std::lock_guard lock(mu_);
  auto it = times_.find(value);
  if (it != times_.end()) return it->second;
  bool pending = false;
  for (const Pending& p : pending_) pending |= p.value == value && p.is_timestamp;
  if (pending)
    throw Error("OpenCL queue: timestamp " + std::to_string(value) + " is not reached yet; wait(" +
                std::to_string(value) + ") first");
  throw Error("OpenCL queue: value " + std::to_string(value) +
              " is not a timestamp (timestamp() returns them) or is too old");
}

} // namespace tg::cl
