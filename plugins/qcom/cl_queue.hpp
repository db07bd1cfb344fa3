#pragma once
// The Queue on an OpenCL in-order command queue. Every command (kernel, copy, marker) gets the
// next timeline value and keeps its event until the timeline passes it: wait(v) waits for v's
// event (the queue is in order, so everything before it is done too), then checks the status of
// every event up to v and raises the first failure. A timestamp is a marker whose profiling
// end time (CL_QUEUE_PROFILING_ENABLE) is read once it completed. Data a copy_in sends stays
// alive until its command completed.
#include <deque>
#include <map>
#include <mutex>

#include "cl_context.hpp"
#include "tg/plugin/device.hpp"

namespace tg::cl {

class ClQueue : public Queue {
public:
  explicit ClQueue(std::shared_ptr<ClContext> ctx) : ctx_(std::move(ctx)) {}
  ~ClQueue() override;
  void exec(std::shared_ptr<Program> prg, LaunchArgs args) override;
  void copy_in(DevicePtr dst, std::vector<uint8_t> data) override;
  void copy_out(void* dst, DevicePtr src, size_t bytes) override;
  uint64_t signal() override;
  void wait(uint64_t value) override;
  uint64_t completed() const override;
  uint64_t timestamp() override;
  double timestamp_seconds(uint64_t value) override;

  // Adds a command's event to the timeline (ownership of the event passes to the queue).
  uint64_t push(cl_event ev, std::string what, std::shared_ptr<const void> keepalive = nullptr,
                bool is_timestamp = false);

private:
  struct Pending {
    uint64_t value = 0;
    cl_event event = nullptr;
    std::string what; // "kernel r_16_4" in errors
    std::shared_ptr<const void> keepalive;
    bool is_timestamp = false;
  };
  // Releases finished commands up to `value`, recording timestamps and the first failure.
  void retire(uint64_t value);

  std::shared_ptr<ClContext> ctx_;
  mutable std::mutex mu_;
  std::deque<Pending> pending_;
  uint64_t next_ = 1, done_ = 0;
  std::map<uint64_t, double> times_; // timestamp value -> seconds, the last 65,536
  std::string error_;                // the first failure not yet raised
};

} // namespace tg::cl
