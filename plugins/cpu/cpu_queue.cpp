#include "cpu_queue.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tg/error.hpp"

namespace tg::cpu {

CpuQueue::CpuQueue() : thread_([this] { worker(); }) {}

CpuQueue::~CpuQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_work_.notify_one();
  thread_.join();
}

uint64_t CpuQueue::submit(std::function<void()> fn) {
  uint64_t v;
  {
    std::lock_guard lock(mu_);
    v = ++submitted_;
    work_.emplace_back(v, std::move(fn));
  }
  cv_work_.notify_one();
  return v;
}

void CpuQueue::exec(std::shared_ptr<Program> prg, LaunchArgs args) {
  submit([prg = std::move(prg), args = std::move(args)] { prg->run(args, false); });
}

void CpuQueue::copy_in(DevicePtr dst, std::vector<uint8_t> data) {
  submit([dst, data = std::move(data)] {
    if (!data.empty()) std::memcpy(reinterpret_cast<void*>(dst), data.data(), data.size());
  });
}

void CpuQueue::copy_out(void* dst, DevicePtr src, size_t bytes) {
  submit([dst, src, bytes] {
    if (bytes) std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  });
}

uint64_t CpuQueue::signal() {
  return submit({}); // an empty command: completes once everything before it has
}

uint64_t CpuQueue::timestamp() {
  uint64_t v;
  {
    std::lock_guard lock(mu_);
    v = ++submitted_;
    stamps_.emplace(v, std::numeric_limits<double>::quiet_NaN());
    if (stamps_.size() > kMaxTimestamps) stamps_.erase(stamps_.begin());
    work_.emplace_back(v, [this, v] {
      const double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
              .count();
      std::lock_guard stamp_lock(mu_);
      if (auto it = stamps_.find(v); it != stamps_.end()) it->second = t;
    });
  }
  cv_work_.notify_one();
  return v;
}

double CpuQueue::timestamp_seconds(uint64_t value) {
  std::lock_guard lock(mu_);
  auto it = stamps_.find(value);
  if (it == stamps_.end())
    throw Error("CPU queue: timeline value " + std::to_string(value) +
                " is not a timestamp (or is older than the last " + std::to_string(kMaxTimestamps) +
                " kept); use a value timestamp() returned");
  if (completed_ < value || std::isnan(it->second))
    throw Error("CPU queue: timestamp " + std::to_string(value) +
                " is not reached yet (completed " + std::to_string(completed_) + "); wait(" +
                std::to_string(value) + ") before reading it");
  return it->second;
}

void CpuQueue::wait(uint64_t value) {
  std::unique_lock lock(mu_);
  cv_done_.wait(lock, [&] { return completed_ >= value; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

uint64_t CpuQueue::completed() const {
  std::lock_guard lock(mu_);
  return completed_;
}

void CpuQueue::worker() {
  for (;;) {
    std::pair<uint64_t, std::function<void()>> cmd;
    {
      std::unique_lock lock(mu_);
      cv_work_.wait(lock, [&] { return stop_ || !work_.empty(); });
      if (work_.empty()) return; // stopping, and everything submitted has run
      cmd = std::move(work_.front());
      work_.pop_front();
    }
    std::exception_ptr err;
    try {
      if (cmd.second) cmd.second();
    } catch (...) {
      err = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      if (err && !error_) error_ = err;
      completed_ = cmd.first;
    }
    cv_done_.notify_all();
  }
}

} // namespace tg::cpu
