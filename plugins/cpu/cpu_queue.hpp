#pragma once
// The CPU's in-order queue: commands run one after another on a worker thread, so a caller
// that submits launches is not blocked until it waits. The timeline is a counter: each
// command or signal() gets the next value, and the worker publishes the last value it
// finished (completed()) under a condition variable. The first error a command raises is kept
// and rethrown by the next wait(); commands after it still run (they may not depend on it).
// A timestamp is a command that reads std::chrono::steady_clock when the worker reaches it;
// the last kMaxTimestamps captures stay readable.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "tg/plugin/device.hpp"

namespace tg::cpu {

class CpuQueue : public Queue {
public:
  CpuQueue();
  ~CpuQueue() override; // drains the queue, then stops the worker
  void exec(std::shared_ptr<Program> prg, LaunchArgs args) override;
  void copy_in(DevicePtr dst, std::vector<uint8_t> data) override;
  void copy_out(void* dst, DevicePtr src, size_t bytes) override;
  uint64_t signal() override;
  void wait(uint64_t value) override;
  uint64_t completed() const override;
  uint64_t timestamp() override;
  double timestamp_seconds(uint64_t value) override; // steady_clock time, in seconds
  static constexpr size_t kMaxTimestamps = 1 << 16;
  // Any command (tests and the engine's host callbacks).
  uint64_t submit(std::function<void()> fn);

private:
  void worker();
  mutable std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  std::deque<std::pair<uint64_t, std::function<void()>>> work_;
  uint64_t submitted_ = 0, completed_ = 0;
  std::map<uint64_t, double> stamps_; // timeline value -> seconds (NaN until reached)
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread thread_;
};

} // namespace tg::cpu
