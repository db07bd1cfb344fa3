// CompiledRunner: a lowered kernel compiled once and launched on a device's queue, with
// tinygrad's DEBUG=2 launch line.
#include "tg/runner.hpp"

#include <mutex>

#include "tg/compile_cache.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg {

namespace {

std::mutex g_counters_mu;
LaunchCounters g_counters;

std::string dims_str(const std::array<int64_t, 3>& global, const std::array<int64_t, 3>& local) {
  // "4,8" for a global of {4, 8, 1}; the local size only where there is one.
  auto join = [](const std::array<int64_t, 3>& d) {
    size_t n = 3;
    while (n > 1 && d[n - 1] == 1) --n;
    std::string s;
    for (size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s;
  };
  std::string s = join(global);
  if (local != std::array<int64_t, 3>{1, 1, 1}) s += ":" + join(local);
  return s;
}

} // namespace

LaunchCounters launch_counters() {
  std::lock_guard lock(g_counters_mu);
  return g_counters;
}

std::string time_to_str(double seconds, int width) {
  char buf[64];
  if (seconds > 10.0)
    std::snprintf(buf, sizeof buf, "%*.2fs ", width, seconds);
  else if (seconds > 10e-3)
    std::snprintf(buf, sizeof buf, "%*.2fms", width, seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%*.2fus", width, seconds * 1e6);
  return buf;
}

CompiledRunner::CompiledRunner(std::shared_ptr<Device> device, const std::string& renderer,
                               const LoweredKernel& kernel, std::FILE* out)
    : device_(std::move(device)), kernel_(kernel), debug_(knobs::DEBUG), out_(out) {
  if (!device_) throw Error("CompiledRunner: no device for kernel " + kernel_.name);
  source_ = device_->renderer(renderer).render(kernel_.name, kernel_.uops);
  if (debug_ >= 4) {
    std::fprintf(out_, "%s\n", source_.c_str());
    std::fflush(out_);
  }
  Compiler& compiler = device_->compiler(renderer);
  std::vector<uint8_t> binary = compile_cached(compiler, source_);
  if (debug_ >= 7) {
    const std::string assembly = compiler.disassemble(binary);
    std::fprintf(out_, "%s\n",
                 assembly.empty() ? "(this device's compiler has no disassembler)"
                                  : assembly.c_str());
    std::fflush(out_);
  }
  program_ = device_->load(kernel_.name, binary);
}

LaunchArgs CompiledRunner::launch_args(const std::vector<DevicePtr>& buffers,
                                       const std::vector<int64_t>& vars) const {
  // Wrong arguments would make the kernel read or write out of bounds: refuse them here.
  for (const KernelParam& p : kernel_.params)
    if (p.slot < 0 || static_cast<size_t>(p.slot) >= buffers.size())
      throw Error(kernel_.name + ": buffer slot " + std::to_string(p.slot) + " missing (" +
                  std::to_string(buffers.size()) + " buffers given)");
  if (vars.size() != kernel_.vars.size())
    throw Error(kernel_.name + ": takes " + std::to_string(kernel_.vars.size()) +
                " variables, got " + std::to_string(vars.size()));
  for (size_t i = 0; i < vars.size(); ++i) {
    const VarArg& v = kernel_.vars[i];
    if (vars[i] < v.min || vars[i] > v.max)
      throw Error(kernel_.name + ": " + v.name + "=" + std::to_string(vars[i]) + " outside [" +
                  std::to_string(v.min) + ", " + std::to_string(v.max) + "]");
  }

  return LaunchArgs{buffers, vars, kernel_.global, kernel_.local};
}

KernelEstimates CompiledRunner::launch_estimates(const std::vector<int64_t>& vars) const {
  // Without variables every launch does the same work: estimate it once (it walks the kernel).
  if (!vars.empty()) return estimates(vars);
  std::call_once(fixed_estimates_once_, [&] { fixed_estimates_ = estimates(); });
  return fixed_estimates_;
}

void CompiledRunner::count_launch(const std::vector<int64_t>& vars) const {
  const KernelEstimates est = debug_ >= 2 ? launch_estimates(vars) : KernelEstimates{};
  std::lock_guard lock(g_counters_mu);
  g_counters.kernel_count += 1;
  g_counters.ops += est.ops;
  g_counters.mem += est.mem;
}

double CompiledRunner::run(const std::vector<DevicePtr>& buffers, const std::vector<int64_t>& vars,
                           bool wait, std::string_view note) {
  LaunchArgs args = launch_args(buffers, vars);
  Queue& q = device_->queue();
  const bool timed = wait || debug_ >= 2;
  double et = 0;
  if (!timed) {
    q.exec(program_, std::move(args));
  } else {
    // Timestamps around the launch on the queue itself: earlier queued work (copies) is done
    // before the first, so the difference is this kernel alone.
    const uint64_t t0 = q.timestamp();
    q.exec(program_, std::move(args));
    const uint64_t t1 = q.timestamp();
    q.wait(t1);
    et = q.timestamp_seconds(t1) - q.timestamp_seconds(t0);
  }

  const KernelEstimates est = debug_ >= 2 ? launch_estimates(vars) : KernelEstimates{};
  LaunchCounters now;
  {
    std::lock_guard lock(g_counters_mu);
    g_counters.kernel_count += 1;
    g_counters.time_sum_s += et;
    g_counters.ops += est.ops;
    g_counters.mem += est.mem;
    now = g_counters;
  }
  if (debug_ >= 2) {
    const double t = et > 0 ? et : 1e-20;
    const std::string name = note.empty() ? kernel_.name : kernel_.name + " " + std::string(note);
    char line[512];
    std::snprintf(
        line, sizeof line,
        "*** %-7.7s %4lld %-30s dims %-12s arg %2zu tm %s/%9.2fms (%9.2f GFLOPS %6.1f|%-7.1f "
        "GB/s)\n",
        device_->name().c_str(), static_cast<long long>(now.kernel_count), name.c_str(),
        dims_str(kernel_.global, kernel_.local).c_str(), buffers.size(), time_to_str(et).c_str(),
        now.time_sum_s * 1e3, est.ops / t * 1e-9, est.mem / t * 1e-9, est.lds / t * 1e-9);
    std::fputs(line, out_);
    std::fflush(out_);
  }
  return et;
}

LaunchTotal::LaunchTotal(int64_t debug, std::FILE* out)
    : start_(launch_counters()), debug_(debug < 0 ? knobs::DEBUG : debug), out_(out) {}

void LaunchTotal::print() {
  if (printed_) return;
  printed_ = true;
  const LaunchCounters now = launch_counters();
  const int64_t n = now.kernel_count - start_.kernel_count;
  if (debug_ < 2 || n <= 0) return;
  const double t = now.time_sum_s - start_.time_sum_s;
  std::fprintf(out_, "*** total    %4lld kernels %9.2f ms %9.2f GFLOP %9.3f GB\n",
               static_cast<long long>(n), t * 1e3, (now.ops - start_.ops) * 1e-9,
               (now.mem - start_.mem) * 1e-9);
  std::fflush(out_);
}

} // namespace tg
