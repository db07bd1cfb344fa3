#include "demo_kernel.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tg/compile_cache.hpp"
#include "tg/ir/uop.hpp"

namespace tinyrun {

namespace {

using namespace tg;

constexpr int64_t kN = 4096;

// out[gidx0] = a[gidx0] * 2.5 + b[gidx0], as docs/KERNEL_IR.md lays a kernel out.
std::vector<UOpPtr> saxpy_kernel() {
  UOpPtr out = UOp::make(Ops::PARAM, dtypes::float32.ptr(kN), {}, int64_t{0});
  UOpPtr a = UOp::make(Ops::PARAM, dtypes::float32.ptr(kN), {}, int64_t{1});
  UOpPtr b = UOp::make(Ops::PARAM, dtypes::float32.ptr(kN), {}, int64_t{2});
  UOpPtr size = UOp::const_(dtypes::int32, kN);
  UOpPtr gid = UOp::make(Ops::SPECIAL, dtypes::int32, {size}, std::string("gidx0"));
  auto at = [&](const UOpPtr& buf) { return UOp::make(Ops::INDEX, buf->dtype, {buf, gid}); };
  UOpPtr la = UOp::make(Ops::LOAD, dtypes::float32, {at(a)});
  UOpPtr lb = UOp::make(Ops::LOAD, dtypes::float32, {at(b)});
  UOpPtr scale = UOp::const_(dtypes::float32, 2.5);
  UOpPtr val = la * scale + lb;
  UOpPtr st = UOp::make(Ops::STORE, dtypes::void_, {at(out), val});
  return {out, a, b, size, gid, at(a), la, at(b), lb, scale, la * scale, val, at(out), st};
}

} // namespace

int run_demo_kernel(Device& device, const std::string& renderer) {
  std::vector<float> a(kN), b(kN), want(kN), got(kN, -1.0f);
  for (int64_t i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(i) * 0.25f - 100.0f;
    b[i] = static_cast<float>(i % 17) - 8.0f;
    want[i] = a[i] * 2.5f + b[i];
  }
  auto t0 = std::chrono::steady_clock::now();
  const std::string src = device.renderer(renderer).render("E_4096", saxpy_kernel());
  std::vector<uint8_t> binary = compile_cached(device.compiler(renderer), src);
  std::shared_ptr<Program> prg = device.load("E_4096", binary);
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
  LaunchArgs args;
  args.buffers = {d_out, d_a, d_b};
  args.global = {kN, 1, 1};
  q.exec(prg, args);
  q.copy_out(got.data(), d_out, bytes);
  q.synchronize();
  alloc.free(d_out, bytes);
  alloc.free(d_a, bytes);
  alloc.free(d_b, bytes);

  std::printf("kernel E_4096 (out = a*2.5 + b, %lld floats) on %s:%s, built in %.1f ms\n",
              static_cast<long long>(kN), device.name().c_str(), renderer.c_str(), build_ms);
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
