#pragma once
// The C++ interfaces a device plugin implements, in the spirit of tinygrad's Compiled device:
// an Allocator, Renderers (linearized UOps -> source), a Compiler per renderer (source ->
// binary), Programs (binary -> something launchable), an in-order Queue with timeline
// signals and timestamps so launches are asynchronous, and optional Graphs (a recorded list
// of launches replayed as one submission). Objects created by a plugin are destroyed through
// their virtual destructors while the plugin's library is loaded (the core guarantees it).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tg/ir/uop.hpp"
#include "tg/plugin/tensor_core.hpp"

namespace tg {

// An opaque device address: a host pointer on CPU, a CUdeviceptr on CUDA, ...
using DevicePtr = uint64_t;

class Allocator {
public:
  virtual ~Allocator() = default;
  virtual DevicePtr alloc(size_t bytes) = 0; // throws tg::Error when out of memory
  virtual void free(DevicePtr p, size_t bytes) = 0;
  virtual void copy_in(DevicePtr dst, const void* src, size_t bytes) = 0; // host -> device
  virtual void copy_out(void* dst, DevicePtr src, size_t bytes) = 0;      // device -> host
  // A view `offset` bytes into `base` (no copy). Devices with flat addresses add.
  virtual DevicePtr offset(DevicePtr base, size_t offset) { return base + offset; }
};

class PatternMatcher;

// What a renderer's target can do; codegen passes read these.
struct RendererCaps {
  bool has_local = false;  // work groups (GPU)
  bool has_shared = false; // shared/local memory
  bool supports_float4 = true;
  bool supports_half = true; // float16 arithmetic (else emulated in float32)
  // EXP2, LOG2 and SIN in hardware or a math library (else codegen decomposes them into
  // polynomials; TRANSCENDENTAL=2 forces that everywhere)
  bool has_transcendentals = true;
  std::array<int64_t, 3> global_max{0x7fffffff, 0, 0}; // 0: dimension absent
  std::array<int64_t, 3> local_max{0, 0, 0};
  int64_t shared_max = 0;
  // ABI 1.1 (appended; a 1.0 plugin's caps end before these and read as empty).
  std::vector<TensorCore> tensor_cores; // empty when none
  // Rules codegen applies after devectorize, before gpudims (tinygrad's extra_matcher): the
  // renderer's own spellings, e.g. a fused multiply-add. Owned by the renderer, may be null.
  const PatternMatcher* extra_matcher = nullptr;
  // Rules codegen applies with its decompositions, before reduce lowering: ops the renderer
  // lacks rewritten into ops it has. Owned by the renderer, may be null.
  const PatternMatcher* decompositions = nullptr;
  // ABI 1.2 (appended; a 1.1 plugin's caps end before it and read as the default).
  // How many float32 lanes one vector register of the target holds (16 with AVX-512, 8 with
  // AVX2, 4 with SSE or NEON): the kernel optimizer sizes register tiles by it.
  int64_t vector_lanes = 4;
  // ABI 1.3 (appended; a 1.2 plugin's caps end before it and read as false).
  // The renderer spells Ops::DOT4 itself (an int8 dot product instruction such as x86's
  // vpdpbusd); otherwise codegen decomposes DOT4 into shifts, masks, multiplies and adds, and a
  // model picks another formulation where that is slower.
  bool has_dot4 = false;
};

// Whether `u` computes in float16 or rounds to it between ops (an ALU op or a cast of float16
// dtype). A renderer that lets its compiler contract multiply-adds into FMAs does not for a
// kernel with such a node: a half multiply-add rounds after the multiply (as tinygrad's does),
// and on a CPU with AVX512-FP16 the compiler would fuse the two into one half-precision FMA.
inline bool rounds_to_half(const UOp& u) {
  return u.dtype.scalar_type == ScalarType::Float16 &&
         (GroupOp::ALU.contains(u.op) || u.op == Ops::CAST);
}

// Turns one linearized kernel (docs/KERNEL_IR.md) into source for its compiler.
class Renderer {
public:
  virtual ~Renderer() = default;
  virtual std::string name() const = 0; // "LLVM", "C", "CUDA", ...
  virtual const RendererCaps& caps() const = 0;
  virtual std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) = 0;
};

class Compiler {
public:
  virtual ~Compiler() = default;
  // Part of the on-disk cache key: changes whenever the same source would compile differently
  // (compiler version, target CPU/arch, flags).
  virtual std::string identity() const = 0;
  virtual std::vector<uint8_t> compile(const std::string& source) = 0; // throws tg::Error
  virtual std::string disassemble(std::span<const uint8_t> /*binary*/) { return {}; }
};

// Arguments of one launch: buffers in PARAM slot order, DEFINE_VAR values in the order the
// kernel lists them, and the global/local work sizes.
struct LaunchArgs {
  std::vector<DevicePtr> buffers;
  std::vector<int64_t> vars;
  std::array<int64_t, 3> global{1, 1, 1};
  std::array<int64_t, 3> local{1, 1, 1};
};

class Program {
public:
  virtual ~Program() = default;
  // Runs to completion on the calling thread. Returns the kernel's time in seconds when
  // `timed` (0 otherwise).
  virtual double run(const LaunchArgs& args, bool timed) = 0;
};

// An in-order queue on a timeline: work runs in submission order, off the caller's thread
// where the device allows, and `signal(v)` marks the point after which `wait(v)` returns.
// `timestamp()` captures the device's clock when the queue reaches that point (HCQ-style
// profiling): every queued command before it has finished, none after it has started.
class Queue {
public:
  virtual ~Queue() = default;
  virtual void exec(std::shared_ptr<Program> prg, LaunchArgs args) = 0;
  virtual void copy_in(DevicePtr dst, std::vector<uint8_t> data) = 0;
  virtual void copy_out(void* dst, DevicePtr src, size_t bytes) = 0; // dst valid until waited
  virtual uint64_t signal() = 0;          // the timeline value that completes with this point
  virtual void wait(uint64_t value) = 0;  // blocks until the timeline reaches value; rethrows
                                          // the first error a queued command raised
  virtual uint64_t completed() const = 0; // the last value reached
  // Queues a capture of the device's time; returns the timeline value that completes with it.
  virtual uint64_t timestamp() = 0;
  // The device time in seconds of the capture that timestamp() returned `value` for; valid
  // once the timeline reached it (after wait(value)). Only differences between timestamps of
  // one queue mean anything. Throws tg::Error for a value that was not a timestamp or that
  // the queue has not reached yet.
  virtual double timestamp_seconds(uint64_t value) = 0;
  void synchronize() { wait(signal()); }
};

// One recorded launch of a Graph.
struct GraphLaunch {
  std::shared_ptr<Program> program;
  LaunchArgs args;
};

// A recorded list of launches that the device replays as one unit (tinygrad's GraphRunner,
// CUDA graphs): replay() queues all of them, in order, on the device's queue at the cost of
// about one submission. Each replay passes the arguments of every launch, in the recorded
// count and order; buffers and variable values may differ from the recording, the number of
// buffers and variables and the global/local sizes may not (tg::Error). A Graph keeps its
// programs alive and is destroyed before the Device that made it.
class Graph {
public:
  virtual ~Graph() = default;
  virtual void replay(std::span<const LaunchArgs> args) = 0;
  virtual size_t size() const = 0; // the number of launches recorded
};

// One device instance (DEV=CPU, DEV=CUDA:1 ...), created by a plugin.
class Device {
public:
  virtual ~Device() = default;
  virtual std::string name() const = 0; // "CPU"
  virtual Allocator& allocator() = 0;
  virtual std::vector<std::string> renderers() const = 0;  // first is the default
  virtual Renderer& renderer(const std::string& name) = 0; // throws tg::Error naming choices
  virtual Compiler& compiler(const std::string& renderer_name) = 0;
  virtual std::shared_ptr<Program> load(const std::string& kernel_name,
                                        std::span<const uint8_t> binary) = 0;
  virtual Queue& queue() = 0;
  // A graph of `launches` (in order), or nullptr when the device has no graph form (then the
  // caller launches them one by one on queue()). Throws tg::Error for launches it cannot
  // record (a null program).
  virtual std::shared_ptr<Graph> graph(std::vector<GraphLaunch> /*launches*/) { return nullptr; }

  // ABI 1.1 (appended: the core asks a 1.0 plugin's devices through an adapter instead).
  // True when the device's addresses are host pointers the host can read and write, so host
  // memory can be borrowed (zero-copy from_blob, mapped safetensors) instead of copied.
  virtual bool host_visible() const { return false; }
  // The architecture the device was created for (DEV=DEVICE:RENDERER:ARCH), "" for its default.
  virtual std::string arch() const { return ""; }

  // ABI 1.4 (appended; a 1.3 plugin's devices answer false through the adapter).
  // Copies `bytes` from `src` on `from` into `dst` on this device without staging them in host
  // memory: within the device, or between two devices of this plugin (peer to peer where the
  // hardware allows). The core has waited for both devices' queues before it calls, and the
  // copy is complete when this returns. False, having copied nothing, when this device cannot
  // reach `from` (a device of another plugin): the core then copies through the host.
  virtual bool copy_from(DevicePtr /*dst*/, Device& /*from*/, DevicePtr /*src*/, size_t /*bytes*/) {
    return false;
  }
};

} // namespace tg
