#include "tensor_demo.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/codegen.hpp"
#include "tg/device_registry.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

namespace tinyrun {

namespace {

using namespace tg;

constexpr int64_t kN = 4096;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// out = a*2.5 + b: one fused elementwise kernel.
int64_t saxpy(const std::string& device, const std::string& where) {
  std::vector<float> a(kN), b(kN);
  for (int64_t i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(i) * 0.25f - 100.0f;
    b[i] = static_cast<float>(i % 17) - 8.0f;
  }
  Tensor ta = Tensor::from_vector(a, device), tb = Tensor::from_vector(b, device);
  Tensor out = ta * 2.5 + tb;
  std::vector<ScheduleItem> items = out.schedule();
  const std::string name = items.empty() ? "(none)" : kernel_name(items.front().ast);
  auto t0 = std::chrono::steady_clock::now();
  out.realize(); // DEBUG=2: the launch line, then the total of this realize
  const double ms = ms_since(t0);
  std::printf("kernel %s (out = a*2.5 + b, %lld floats) on %s, built and run in %.1f ms\n",
              name.c_str(), static_cast<long long>(kN), where.c_str(), ms);
  if (DeviceSpec::parse(device).device == "NULL") {
    std::printf("  the NULL device renders and compiles but never runs: nothing to check\n");
    return 0;
  }
  std::vector<float> got = out.to_vector<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < kN; ++i) wrong += got[i] != a[i] * 2.5f + b[i];
  std::printf("  out[0..3] = %g %g %g %g; %lld of %lld differ from the host\n", got[0], got[1],
              got[2], got[3], static_cast<long long>(wrong), static_cast<long long>(kN));
  return wrong;
}

// softmax over rows of a seeded random (4, 8) matrix, and a (4, 8) @ (8, 3) matmul.
int64_t softmax_matmul(const std::string& device) {
  Tensor::manual_seed(42);
  Tensor x = Tensor::randn({4, 8}, dtypes::float32, device).realize();
  Tensor w = Tensor::rand({8, 3}, dtypes::float32, device).realize();
  Tensor sm = x.softmax(-1);
  Tensor mm = x.matmul(w);
  const size_t kernels = sm.schedule().size() + mm.schedule().size();
  if (DeviceSpec::parse(device).device == "NULL") return 0;
  std::vector<float> hx = x.to_vector<float>(), hw = w.to_vector<float>();
  std::vector<float> hs = sm.to_vector<float>(), hm = mm.to_vector<float>();
  double err = 0;
  for (int r = 0; r < 4; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < 8; ++c) mx = std::max(mx, double(hx[r * 8 + c]));
    for (int c = 0; c < 8; ++c) sum += std::exp(hx[r * 8 + c] - mx);
    for (int c = 0; c < 8; ++c)
      err = std::max(err, std::abs(hs[r * 8 + c] - std::exp(hx[r * 8 + c] - mx) / sum));
    for (int c = 0; c < 3; ++c) {
      double acc = 0;
      for (int k = 0; k < 8; ++k) acc += double(hx[r * 8 + k]) * hw[k * 3 + c];
      err = std::max(err, std::abs(hm[r * 3 + c] - acc));
    }
  }
  std::printf("softmax (4, 8) and matmul (4, 8) @ (8, 3): %zu kernels, max |error| vs the host "
              "%.2g\n",
              kernels, err);
  return err < 1e-5 ? 0 : 1;
}

} // namespace

int run_tensor_demo() {
  const std::string device = default_device_spec();
  DeviceSpec spec = DeviceSpec::parse(device);
  std::shared_ptr<Device> dev = DeviceRegistry::global().open(spec);
  const std::string renderer = resolve_renderer(*dev, spec);
  int64_t wrong = saxpy(device, spec.device + ":" + renderer);
  wrong += softmax_matmul(device);
  return wrong == 0 ? 0 : 1;
}

} // namespace tinyrun
