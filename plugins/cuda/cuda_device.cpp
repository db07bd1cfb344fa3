// The CUDA device's runtime: memory, copies, the stream's timeline, modules and launches.
#include "cuda_device.hpp"

#include <algorithm>
#include <cstring>

#include "cuda_graph.hpp"
#include "tg/error.hpp"
#include "toolkit.hpp"

namespace tg::cuda {

namespace {

constexpr size_t kStagingMax = size_t{64} << 20; // larger copies go through it in pieces

unsigned dim(int64_t v, const std::string& what) {
  if (v < 1 || v > 0x7fffffff)
    throw Error("CUDA: launch " + what + " " + std::to_string(v) + " is outside 1..2^31-1");
  return static_cast<unsigned>(v);
}

} // namespace

void Gpu::make_current() const { check(driver().cuCtxSetCurrent(context), "cuCtxSetCurrent"); }

Gpu::~Gpu() {
  if (context != nullptr) driver().cuDevicePrimaryCtxRelease_v2(device);
}

// ---- allocator ----

CudaAllocator::CudaAllocator(std::shared_ptr<CudaQueue> queue)
    : owner_(std::move(queue)), gpu_(owner_->gpu()), queue_(*owner_) {}

CudaAllocator::~CudaAllocator() {
  if (staging_ != nullptr) {
    gpu_.make_current();
    driver().cuMemFreeHost(staging_);
  }
}

DevicePtr CudaAllocator::alloc(size_t bytes) {
  gpu_.make_current();
  CUdeviceptr p = 0;
  const CUresult r = driver().cuMemAlloc_v2(&p, std::max<size_t>(bytes, 1));
  if (r != CUDA_SUCCESS)
    throw Error("CUDA: allocating " + std::to_string(bytes) + " bytes on " + gpu_.name +
                " failed: " + error_name(r) + "; free buffers or use a smaller batch");
  return p;
}

void CudaAllocator::free(DevicePtr p, size_t) {
  gpu_.make_current();
  // Work still queued may use the buffer: cuMemFree waits for the device only where needed,
  // so finish the queue first.
  queue_.drain();
  check(driver().cuMemFree_v2(p), "cuMemFree");
}

void* CudaAllocator::staging(size_t bytes) {
  if (bytes > staging_bytes_) {
    if (staging_ != nullptr) check(driver().cuMemFreeHost(staging_), "cuMemFreeHost");
    staging_ = nullptr;
    staging_bytes_ = 0;
    const size_t want = std::min(kStagingMax, std::max(bytes, size_t{1} << 20));
    check(driver().cuMemHostAlloc(&staging_, want, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    staging_bytes_ = want;
  }
  return staging_;
}

void CudaAllocator::copy_in(DevicePtr dst, const void* src, size_t bytes) {
  std::lock_guard lock(mu_);
  gpu_.make_current();
  queue_.drain(); // the staging buffer and the destination are free to write
  const auto* from = static_cast<const uint8_t*>(src);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(bytes - done, kStagingMax);
    void* stage = staging(n);
    std::memcpy(stage, from + done, n);
    check(driver().cuMemcpyHtoDAsync_v2(dst + done, stage, n, queue_.stream()), "cuMemcpyHtoD");
    check(driver().cuStreamSynchronize(queue_.stream()), "copy to " + gpu_.name);
    done += n;
  }
}

void CudaAllocator::copy_out(void* dst, DevicePtr src, size_t bytes) {
  std::lock_guard lock(mu_);
  gpu_.make_current();
  auto* to = static_cast<uint8_t*>(dst);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(bytes - done, kStagingMax);
    void* stage = staging(n);
    // In stream order: the copy sees every kernel queued before it.
    check(driver().cuMemcpyDtoHAsync_v2(stage, src + done, n, queue_.stream()), "cuMemcpyDtoH");
    check(driver().cuStreamSynchronize(queue_.stream()), "copy from " + gpu_.name);
    std::memcpy(to + done, stage, n);
    done += n;
  }
}

// ---- programs ----

CudaProgram::CudaProgram(std::shared_ptr<CudaQueue> queue, const std::string& name,
                         std::span<const uint8_t> binary)
    : owner_(std::move(queue)), gpu_(owner_->gpu()), queue_(*owner_), name_(name) {
  gpu_.make_current();
  std::vector<uint8_t> image(binary.begin(), binary.end());
  if (image.empty() || (image[0] != 0x7f && image.back() != 0)) image.push_back(0); // PTX text
  const CUresult r = driver().cuModuleLoadData(&module_, image.data());
  if (r != CUDA_SUCCESS)
    throw Error("CUDA: loading kernel " + name + " on " + gpu_.name + " (" + gpu_.arch.sm() +
                ") failed: " + error_name(r) +
                (driver().driver_version < 13000
                     ? "; PTX from a newer toolkit than the driver needs nvJitLink beside NVRTC"
                     : ""));
  check(driver().cuModuleGetFunction(&function_, module_, name.c_str()),
        "cuModuleGetFunction(" + name + ")");
}

CudaProgram::~CudaProgram() {
  if (module_ != nullptr) {
    try {
      gpu_.make_current();
      queue_.drain();
    } catch (...) { // a failed launch was reported where it was waited for
    }
    driver().cuModuleUnload(module_);
  }
}

CudaKernelNodeParams CudaProgram::node_params(const LaunchArgs& args,
                                              std::vector<unsigned long long>& values,
                                              std::vector<void*>& pointers) const {
  values.clear();
  for (DevicePtr b : args.buffers) values.push_back(b);
  for (int64_t v : args.vars) values.push_back(static_cast<unsigned long long>(v));
  pointers.clear();
  for (auto& v : values) pointers.push_back(&v);
  CudaKernelNodeParams p{};
  p.func = function_;
  p.grid_x = dim(args.global[0], "grid x");
  p.grid_y = dim(args.global[1], "grid y");
  p.grid_z = dim(args.global[2], "grid z");
  p.block_x = dim(args.local[0], "block x");
  p.block_y = dim(args.local[1], "block y");
  p.block_z = dim(args.local[2], "block z");
  p.shared_bytes = 0; // shared memory is static (__shared__ arrays) in the kernel
  p.kernel_params = pointers.data();
  p.extra = nullptr;
  return p;
}

void CudaProgram::launch(const LaunchArgs& args, CUstream stream) const {
  std::vector<unsigned long long> values;
  std::vector<void*> pointers;
  const CudaKernelNodeParams p = node_params(args, values, pointers);
  gpu_.make_current();
  // The driver copies the argument values before returning.
  check(driver().cuLaunchKernel(p.func, p.grid_x, p.grid_y, p.grid_z, p.block_x, p.block_y,
                                p.block_z, p.shared_bytes, stream, p.kernel_params, nullptr),
        "launching " + name_ + " on " + gpu_.name);
}

double CudaProgram::run(const LaunchArgs& args, bool timed) {
  if (!timed) {
    launch(args, queue_.stream());
    queue_.drain();
    return 0;
  }
  const uint64_t start = queue_.timestamp();
  launch(args, queue_.stream());
  const uint64_t end = queue_.timestamp();
  queue_.wait(end);
  return queue_.timestamp_seconds(end) - queue_.timestamp_seconds(start);
}

// ---- queue ----

CudaQueue::CudaQueue(std::shared_ptr<const Gpu> gpu) : owner_(std::move(gpu)), gpu_(*owner_) {
  gpu_.make_current();
  check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(driver().cuEventCreate(&last_timed_, CU_EVENT_DEFAULT), "cuEventCreate");
  check(driver().cuEventRecord(last_timed_, stream_), "cuEventRecord");
}

CudaQueue::~CudaQueue() {
  gpu_.make_current();
  driver().cuStreamSynchronize(stream_);
  for (Point& p : pending_) driver().cuEventDestroy_v2(p.event);
  for (CUevent e : free_events_) driver().cuEventDestroy_v2(e);
  for (CUevent e : free_timed_events_) driver().cuEventDestroy_v2(e);
  driver().cuEventDestroy_v2(last_timed_);
  driver().cuStreamDestroy_v2(stream_);
}

void CudaQueue::exec(std::shared_ptr<Program> prg, LaunchArgs args) {
  auto* p = dynamic_cast<CudaProgram*>(prg.get());
  if (p == nullptr) throw Error("CUDA queue: the program was not loaded by a CUDA device");
  p->launch(args, stream_);
  hold(std::move(prg));
}

void CudaQueue::copy_in(DevicePtr dst, std::vector<uint8_t> data) {
  gpu_.make_current();
  auto bytes = std::make_shared<std::vector<uint8_t>>(std::move(data));
  check(driver().cuMemcpyHtoDAsync_v2(dst, bytes->data(), bytes->size(), stream_),
        "cuMemcpyHtoDAsync");
  hold(bytes);
}

void CudaQueue::copy_out(void* dst, DevicePtr src, size_t bytes) {
  gpu_.make_current();
  check(driver().cuMemcpyDtoHAsync_v2(dst, src, bytes, stream_), "cuMemcpyDtoHAsync");
}

void CudaQueue::hold(std::shared_ptr<void> what) {
  std::lock_guard lock(mu_);
  unsignalled_.push_back(std::move(what));
}

uint64_t CudaQueue::record(bool timed) {
  gpu_.make_current(); // the caller's thread may have no context current
  auto& pool = timed ? free_timed_events_ : free_events_;
  CUevent e = nullptr;
  if (!pool.empty()) {
    e = pool.back();
    pool.pop_back();
  } else {
    check(driver().cuEventCreate(&e, timed ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
          "cuEventCreate");
  }
  check(driver().cuEventRecord(e, stream_), "cuEventRecord");
  Point p{++next_, e, timed, std::move(unsignalled_)};
  unsignalled_.clear();
  pending_.push_back(std::move(p));
  return next_;
}

uint64_t CudaQueue::signal() {
  std::lock_guard lock(mu_);
  return record(false);
}

uint64_t CudaQueue::timestamp() {
  std::lock_guard lock(mu_);
  return record(true);
}

void CudaQueue::retire_through(uint64_t value) {
  while (!pending_.empty() && pending_.front().value <= value) {
    Point& p = pending_.front();
    if (p.timed) {
      float ms = 0;
      check(driver().cuEventElapsedTime(&ms, last_timed_, p.event), "cuEventElapsedTime");
      last_time_ += static_cast<double>(ms) / 1000.0;
      times_[p.value] = last_time_;
      free_timed_events_.push_back(last_timed_);
      last_timed_ = p.event;
    } else {
      free_events_.push_back(p.event);
    }
    completed_ = std::max(completed_, p.value);
    pending_.pop_front();
  }
}

void CudaQueue::wait(uint64_t value) {
  std::lock_guard lock(mu_);
  if (value > next_)
    throw Error("CUDA queue: wait for timeline value " + std::to_string(value) +
                ", which was never signalled (the last is " + std::to_string(next_) + ")");
  gpu_.make_current();
  // Points completed() saw reached are retired here too (their timestamps read).
  for (const Point& p : pending_)
    if (p.value >= value && value > completed_) {
      const CUresult r = driver().cuEventSynchronize(p.event);
      if (r != CUDA_SUCCESS)
        throw Error("CUDA: a kernel or copy queued on " + gpu_.name + " failed: " + error_name(r) +
                    " (the context is unusable after most such errors)");
      break;
    }
  retire_through(value);
}

uint64_t CudaQueue::completed() const {
  std::lock_guard lock(mu_);
  // Points reached are reported here and retired by the next wait.
  if (!pending_.empty()) gpu_.make_current();
  for (const Point& p : pending_) {
    if (driver().cuEventQuery(p.event) != CUDA_SUCCESS) break;
    completed_ = std::max(completed_, p.value);
  }
  return completed_;
}

double CudaQueue::timestamp_seconds(uint64_t value) {
  std::lock_guard lock(mu_);
  auto it = times_.find(value);
  if (it == times_.end())
    throw Error("CUDA queue: timeline value " + std::to_string(value) +
                " is not a timestamp the queue has reached; wait(value) first");
  return it->second;
}

void CudaQueue::drain() {
  const uint64_t v = signal();
  wait(v);
}

// ---- device ----

CudaDevice::CudaDevice(std::string name, int index, std::optional<Arch> arch)
    : name_(std::move(name)), gpu_(std::make_shared<Gpu>()) {
  const DriverApi& d = driver();
  gpu_->index = index;
  check(d.cuDeviceGet(&gpu_->device, index), "cuDeviceGet(" + std::to_string(index) + ")");
  char buf[256] = {};
  check(d.cuDeviceGetName(buf, sizeof buf - 1, gpu_->device), "cuDeviceGetName");
  gpu_->name = name_ + " (" + buf + ")";
  int major = 0, minor = 0;
  check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, gpu_->device),
        "cuDeviceGetAttribute");
  check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, gpu_->device),
        "cuDeviceGetAttribute");
  gpu_->arch = Arch{major, minor};
  d.cuDeviceTotalMem_v2(&gpu_->memory, gpu_->device);
  check(d.cuDevicePrimaryCtxRetain(&gpu_->context, gpu_->device), "cuDevicePrimaryCtxRetain");
  explicit_arch_ = arch.has_value();
  arch_ = arch.value_or(gpu_->arch);
  if (arch_.number() > gpu_->arch.number())
    throw Error(name_ + " is " + gpu_->arch.sm() + "; kernels for " + arch_.sm() +
                " cannot run on it (ask for " + gpu_->arch.sm() + " or an older architecture)");
  // Peer access to every other GPU that allows it, for the driver's device-to-device copies.
  for (int other = 0; other < d.device_count; ++other) {
    if (other == index) continue;
    CUdevice peer = 0;
    int can = 0;
    if (d.cuDeviceGet(&peer, other) != CUDA_SUCCESS ||
        d.cuDeviceCanAccessPeer(&can, gpu_->device, peer) != CUDA_SUCCESS || !can)
      continue;
    CUcontext peer_ctx = nullptr;
    if (d.cuDevicePrimaryCtxRetain(&peer_ctx, peer) != CUDA_SUCCESS) continue;
    gpu_->make_current();
    d.cuCtxEnablePeerAccess(peer_ctx, 0); // ALREADY_ENABLED is fine
    d.cuDevicePrimaryCtxRelease_v2(peer);
  }
  queue_ = std::make_shared<CudaQueue>(gpu_);
  allocator_ = std::make_unique<CudaAllocator>(queue_);
  // The renderer's limits are the GPU's where it reports them.
  RendererCaps caps = caps_for(arch_);
  int v = 0;
  for (int i = 0; i < 3; ++i) {
    if (d.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i, gpu_->device) ==
        CUDA_SUCCESS)
      caps.local_max[i] = v;
    if (d.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i, gpu_->device) ==
        CUDA_SUCCESS)
      caps.global_max[i] = v;
  }
  if (d.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, gpu_->device) ==
      CUDA_SUCCESS)
    caps.shared_max = std::min<int64_t>(v, caps.shared_max);
  RendererCaps ptx_caps = caps;
  ptx_caps.has_transcendentals = false;
  renderer_ = std::make_unique<CudaRenderer>(std::move(caps));
  ptx_renderer_ = std::make_unique<PtxRenderer>(std::move(ptx_caps));
}

CudaDevice::~CudaDevice() = default;

bool CudaDevice::copy_from(DevicePtr dst, Device& from, DevicePtr src, size_t bytes) {
  const auto* other = dynamic_cast<const CudaDevice*>(&from);
  if (other == nullptr) return false;
  gpu_->make_current();
  const CUstream stream = queue_->stream();
  if (other->gpu_->context == gpu_->context)
    check(driver().cuMemcpyDtoDAsync_v2(dst, src, bytes, stream), "cuMemcpyDtoD on " + gpu_->name);
  else
    check(driver().cuMemcpyPeerAsync(dst, gpu_->context, src, other->gpu_->context, bytes, stream),
          "cuMemcpyPeer from " + other->gpu_->name + " to " + gpu_->name);
  check(driver().cuStreamSynchronize(stream), "copy to " + gpu_->name);
  return true;
}

Renderer& CudaDevice::renderer(const std::string& name) {
  if (name == "CUDA") return *renderer_;
  if (name == "PTX") return *ptx_renderer_;
  throw Error(name_ + " has no renderer '" + name + "'; it renders CUDA (the default) and PTX");
}

Compiler& CudaDevice::compiler(const std::string& renderer_name) {
  renderer(renderer_name);
  std::lock_guard lock(compiler_mu_);
  // A cubin for this GPU through nvJitLink; without nvJitLink the driver compiles the PTX.
  std::string why;
  const std::optional<Arch> link_to =
      load_nvjitlink(why) != nullptr ? std::optional(gpu_->arch) : std::nullopt;
  if (renderer_name == "PTX") {
    if (!ptx_compiler_) ptx_compiler_ = std::make_unique<PtxCompiler>(arch_, link_to);
    return *ptx_compiler_;
  }
  if (!compiler_) compiler_ = std::make_unique<CudaCompiler>(arch_, link_to);
  return *compiler_;
}

std::shared_ptr<Program> CudaDevice::load(const std::string& kernel_name,
                                          std::span<const uint8_t> binary) {
  return std::make_shared<CudaProgram>(queue_, kernel_name, binary);
}

std::shared_ptr<Graph> CudaDevice::graph(std::vector<GraphLaunch> launches) {
  return std::make_shared<CudaGraph>(name_, queue_, std::move(launches));
}

std::string describe_gpus() {
  const DriverApi& d = driver();
  std::string out;
  for (int i = 0; i < d.device_count; ++i) {
    CUdevice dev = 0;
    char buf[256] = {};
    int major = 0, minor = 0;
    if (d.cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    d.cuDeviceGetName(buf, sizeof buf - 1, dev);
    d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    out += (i ? ", " : "") + std::string(i ? "CUDA:" + std::to_string(i) : "CUDA") + " = " + buf +
           " (" + Arch{major, minor}.sm() + ")";
  }
  return out;
}

} // namespace tg::cuda
