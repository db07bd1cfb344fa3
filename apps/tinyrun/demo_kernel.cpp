#include "demo_kernel.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tg/codegen.hpp"
#include "tg/ir/uop.hpp"
#include "tg/runner.hpp"

namespace tinyrun {

namespace {

using namespace tg;

constexpr int64_t kN = 4096;

// out[i] = a[i] * 2.5 + b[i] over one Global range, as the scheduler will hand it to codegen
// (docs/KERNEL_IR.md, "The kernel AST").
UOpPtr saxpy_ast() {
  auto param = [](int64_t slot) {
    return UOp::make(Ops::PARAM, dtypes::float32.ptr(kN), {}, slot);
  };
  UOpPtr out = param(0), a = param(1), b = param(2);
  UOpPtr i = UOp::range(UOp::const_(dtypes::index, kN), 0, AxisType::Global);
  auto at = [&](const UOpPtr& buf) { return UOp::make(Ops::INDEX, buf->dtype, {buf, i}); };
  UOpPtr la = UOp::make(Ops::LOAD, dtypes::float32, {at(a)});
  UOpPtr lb = UOp::make(Ops::LOAD, dtypes::float32, {at(b)});
  UOpPtr val = la * UOp::const_(dtypes::float32, 2.5) + lb;
  return UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {at(out), val})});
}

} // namespace

int run_demo_kernel(const std::shared_ptr<Device>& dev, const std::string& renderer) {
  Device& device = *dev;
  std::vector<float> a(kN), b(kN), want(kN), got(kN, -1.0f);
  for (int64_t i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(i) * 0.25f - 100.0f;
    b[i] = static_cast<float>(i % 17) - 8.0f;
    want[i] = a[i] * 2.5f + b[i];
  }
  auto t0 = std::chrono::steady_clock::now();
  LoweredKernel kernel = lower_kernel(saxpy_ast(), device.renderer(renderer).caps());
  CompiledRunner runner(dev, renderer, kernel);
  double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  Allocator& alloc = device.allocator();
  const size_t bytes = kN * sizeof(float);
  DevicePtr d_out = alloc.alloc(bytes), d_a = alloc.alloc(bytes), d_b = alloc.alloc(bytes);
  Queue& q = device.queue();
  auto bytes_of = [&](const std::vector<float>& v) {
    std::vector<uint8_t> r(bytes);
    std::memcpy(r.data(), v.data(), bytes);
    return r;
  };
  q.copy_in(d_a, bytes_of(a));
  q.copy_in(d_b, bytes_of(b));
  {
    LaunchTotal total; // DEBUG=2: the launch line, then the total of this one-kernel batch
    runner.run({d_out, d_a, d_b});
  }
  q.copy_out(got.data(), d_out, bytes);
  q.synchronize();
  alloc.free(d_out, bytes);
  alloc.free(d_a, bytes);
  alloc.free(d_b, bytes);

  std::printf("kernel %s (out = a*2.5 + b, %lld floats) on %s:%s, built in %.1f ms\n",
              kernel.name.c_str(), static_cast<long long>(kN), device.name().c_str(),
              renderer.c_str(), build_ms);
  if (device.name() == "NULL") {
    std::printf("  the NULL device renders and compiles but never runs: nothing to check\n");
    return 0;
  }
  int64_t wrong = 0;
  for (int64_t i = 0; i < kN; ++i) wrong += got[i] != want[i];
  std::printf("  out[0..3] = %g %g %g %g; %lld of %lld differ from the host\n", got[0], got[1],
              got[2], got[3], static_cast<long long>(wrong), static_cast<long long>(kN));
  return wrong == 0 ? 0 : 1;
}

} // namespace tinyrun
