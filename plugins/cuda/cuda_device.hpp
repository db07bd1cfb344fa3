#pragma once
// The CUDA device: one per GPU (CUDA, CUDA:1, ...), on the GPU's primary context, with one
// stream as its in-order queue. Memory comes from cuMemAlloc; host copies go through a pinned
// staging buffer and copies between CUDA devices stay on the GPUs; the queue's timeline is a
// list of recorded events (timestamps are events with timing, measured from one recorded when
// the queue was made); programs are modules loaded from cubins (or PTX the driver compiles);
// graphs are CUDA graphs.
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_api.hpp"
#include "cuda_arch.hpp"
#include "cuda_compiler.hpp"
#include "cuda_renderer.hpp"
#include "ptx_compiler.hpp"
#include "ptx_renderer.hpp"

namespace tg::cuda {

// One GPU's primary context (released with the last holder) and its facts.
struct Gpu {
  Gpu() = default;
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;
  ~Gpu();
  int index = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;
  Arch arch;
  size_t memory = 0;
  void make_current() const;
};

class CudaQueue;

class CudaAllocator final : public Allocator {
public:
  explicit CudaAllocator(std::shared_ptr<CudaQueue> queue);
  ~CudaAllocator() override;
  DevicePtr alloc(size_t bytes) override;
  void free(DevicePtr p, size_t bytes) override;
  void copy_in(DevicePtr dst, const void* src, size_t bytes) override;
  void copy_out(void* dst, DevicePtr src, size_t bytes) override;

private:
  // The pinned staging buffer, at least `bytes` large (grown as needed, up to kStagingMax).
  void* staging(size_t bytes);
  std::shared_ptr<CudaQueue> owner_;
  const Gpu& gpu_;
  CudaQueue& queue_;
  std::mutex mu_;
  void* staging_ = nullptr;
  size_t staging_bytes_ = 0;
};

class CudaProgram final : public Program {
public:
  // The program keeps the queue (and through it the context) alive.
  CudaProgram(std::shared_ptr<CudaQueue> queue, const std::string& name,
              std::span<const uint8_t> binary);
  ~CudaProgram() override;
  double run(const LaunchArgs& args, bool timed) override;
  // Queues the launch on `stream` without waiting.
  void launch(const LaunchArgs& args, CUstream stream) const;
  // The kernel-node parameters of `args`; `storage` receives the argument values the
  // returned pointers point into (it must outlive their use).
  CudaKernelNodeParams node_params(const LaunchArgs& args, std::vector<unsigned long long>& values,
                                   std::vector<void*>& pointers) const;
  const std::string& name() const { return name_; }

private:
  std::shared_ptr<CudaQueue> owner_;
  const Gpu& gpu_;
  CudaQueue& queue_;
  std::string name_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

class CudaQueue final : public Queue {
public:
  explicit CudaQueue(std::shared_ptr<const Gpu> gpu);
  ~CudaQueue() override;
  void exec(std::shared_ptr<Program> prg, LaunchArgs args) override;
  void copy_in(DevicePtr dst, std::vector<uint8_t> data) override;
  void copy_out(void* dst, DevicePtr src, size_t bytes) override;
  uint64_t signal() override;
  void wait(uint64_t value) override;
  uint64_t completed() const override;
  uint64_t timestamp() override;
  double timestamp_seconds(uint64_t value) override;

  CUstream stream() const { return stream_; }
  const Gpu& gpu() const { return gpu_; }
  // Keeps `what` alive until the work queued so far has finished.
  void hold(std::shared_ptr<void> what);
  // Waits for everything queued (stream synchronize), rethrowing a launch's error.
  void drain();

private:
  struct Point {
    uint64_t value;
    CUevent event;
    bool timed;
    std::vector<std::shared_ptr<void>> held; // freed once the point is reached
  };
  uint64_t record(bool timed);         // mu_ held
  void retire_through(uint64_t value); // mu_ held
  std::shared_ptr<const Gpu> owner_;
  const Gpu& gpu_;
  CUstream stream_ = nullptr;
  // The last timestamp reached (at first one recorded when the queue was made) and its time:
  // each timestamp is the previous one plus the events' difference, kept in double.
  CUevent last_timed_ = nullptr;
  double last_time_ = 0;
  mutable std::mutex mu_;
  uint64_t next_ = 0;
  mutable uint64_t completed_ = 0;
  mutable std::deque<Point> pending_;
  std::vector<std::shared_ptr<void>> unsignalled_; // held until the next point
  std::unordered_map<uint64_t, double> times_;     // timestamp value -> seconds from origin_
  std::vector<CUevent> free_events_, free_timed_events_;
};

class CudaDevice final : public Device {
public:
  // `name` is the registry's ("CUDA", "CUDA:1"), `arch` the architecture kernels are built
  // for (nullopt: the GPU's own).
  CudaDevice(std::string name, int index, std::optional<Arch> arch);
  ~CudaDevice() override;
  std::string name() const override { return name_; }
  Allocator& allocator() override { return *allocator_; }
  std::vector<std::string> renderers() const override { return {"CUDA", "PTX"}; }
  Renderer& renderer(const std::string& name) override;
  Compiler& compiler(const std::string& renderer_name) override;
  std::shared_ptr<Program> load(const std::string& kernel_name,
                                std::span<const uint8_t> binary) override;
  Queue& queue() override { return *queue_; }
  std::shared_ptr<Graph> graph(std::vector<GraphLaunch> launches) override;
  std::string arch() const override { return explicit_arch_ ? arch_.sm() : ""; }
  // From another CUDA device's memory: on one GPU by its copy engine, between two GPUs by the
  // driver's peer copy (direct where peer access was enabled at creation, else staged by the
  // driver). False for any other plugin's device.
  bool copy_from(DevicePtr dst, Device& from, DevicePtr src, size_t bytes) override;
  const Gpu& gpu() const { return *gpu_; }

private:
  std::string name_;
  std::shared_ptr<Gpu> gpu_;
  Arch arch_;
  bool explicit_arch_ = false;
  std::shared_ptr<CudaQueue> queue_;
  std::unique_ptr<CudaAllocator> allocator_;
  std::unique_ptr<CudaRenderer> renderer_;
  std::unique_ptr<PtxRenderer> ptx_renderer_;
  std::mutex compiler_mu_;
  std::unique_ptr<CudaCompiler> compiler_;
  std::unique_ptr<PtxCompiler> ptx_compiler_;
};

// The GPUs the driver lists: "CUDA = NVIDIA H200 (sm_90, 139 GiB)", for messages.
std::string describe_gpus();

} // namespace tg::cuda
