#pragma once
// Running one lowered kernel on a device, tinygrad's CompiledRunner: rendered, compiled (through
// the compile cache) and loaded once, then launched on the device's queue as often as wanted.
// With DEBUG>=2 every launch waits, is timed with queue timestamps and prints one line:
//   *** CPU        1 E_4_8                          dims 4,8         arg  3 tm      5.21us/ ...
// with estimates of its work (FLOPs, bytes) turned into GFLOP/s and GB/s.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tg/codegen.hpp"
#include "tg/kernel_estimates.hpp"
#include "tg/plugin/device.hpp"

namespace tg {

// Process-wide totals over every launch, tinygrad's GlobalCounters. `ops` and `mem` (the
// kernels' estimates) count only launches made at DEBUG>=2, where they are printed: a kernel
// with a symbolic size is estimated anew at each launch by walking its list, which cost a jitted
// LLM decode step ~60 walks of up to a few hundred nodes (0.2-0.9 ms of a 3-4 ms step).
struct LaunchCounters {
  int64_t kernel_count = 0;
  double time_sum_s = 0; // measured launches only
  double ops = 0, mem = 0;
};
LaunchCounters launch_counters();

class CompiledRunner {
public:
  // Renders `kernel` with the device's renderer `renderer`, compiles (through the compile
  // cache) and loads it. Throws tg::Error when any step fails. For every device and also when
  // the binary comes from the cache, DEBUG>=4 prints the source and DEBUG>=7 the assembly
  // (Compiler::disassemble of the binary) to `out`; plugins print nothing themselves.
  CompiledRunner(std::shared_ptr<Device> device, const std::string& renderer,
                 const LoweredKernel& kernel, std::FILE* out = stdout);

  // Launches over the kernel's global/local size on the device's queue: `buffers` in PARAM slot
  // order, `vars` in kernel.vars order (each within its bounds, else tg::Error). With `wait`
  // (or DEBUG>=2) it waits and returns the kernel's device time in seconds, else returns 0 at
  // once. DEBUG>=2 prints the launch line.
  // `note` follows the kernel's name in the DEBUG>=2 line ("[jit]" for a JIT replay).
  double run(const std::vector<DevicePtr>& buffers, const std::vector<int64_t>& vars = {},
             bool wait = true, std::string_view note = {});

  // The launch run() queues, its arguments checked: for a device Graph to record or replay.
  LaunchArgs launch_args(const std::vector<DevicePtr>& buffers,
                         const std::vector<int64_t>& vars) const;
  // Adds one launch made outside run() (a Graph replay) to the process-wide counters.
  void count_launch(const std::vector<int64_t>& vars) const;
  const std::shared_ptr<Program>& program() const { return program_; }
  const std::shared_ptr<Device>& device() const { return device_; }

  const LoweredKernel& kernel() const { return kernel_; }
  const std::string& source() const { return source_; }
  KernelEstimates estimates(std::span<const int64_t> vars = {}) const {
    return estimate_kernel(kernel_, vars);
  }

  // The DEBUG level (read from the environment at construction) and where the launch lines go
  // (stdout); tests set both instead of the process environment.
  void set_debug(int64_t level) { debug_ = level; }
  void set_output(std::FILE* out) { out_ = out; }

private:
  std::shared_ptr<Device> device_;
  LoweredKernel kernel_;
  std::string source_;
  std::shared_ptr<Program> program_;
  int64_t debug_ = 0;
  std::FILE* out_ = stdout;
  KernelEstimates launch_estimates(const std::vector<int64_t>& vars) const;
  mutable std::once_flag fixed_estimates_once_;
  mutable KernelEstimates fixed_estimates_;
};

// A batch of launches (one realize): at destruction, or at print(), with DEBUG>=2 and at least
// one launch since construction, prints
//   *** total      3 kernels      0.05 ms      0.00 GFLOP      0.00 GB
class LaunchTotal {
public:
  explicit LaunchTotal(int64_t debug = -1, std::FILE* out = stdout); // -1: DEBUG from the env
  ~LaunchTotal() { print(); }
  LaunchTotal(const LaunchTotal&) = delete;
  LaunchTotal& operator=(const LaunchTotal&) = delete;
  void print(); // prints once; later calls print nothing

private:
  LaunchCounters start_;
  int64_t debug_;
  std::FILE* out_;
  bool printed_ = false;
};

// tinygrad's time_to_str: "     5.21us", "     1.50ms", "     2.00s " (`width` digits wide).
std::string time_to_str(double seconds, int width = 9);

} // namespace tg
