// The cl plugin on the OpenCL device here (POCL on the CPU cores): the device and its facts,
// the OpenCL C it renders (grouped reduces through __local memory and barriers, work groups for
// a matmul, float16 without cl_khr_fp16), the same results as the CPU, the queue's timeline and
// timestamps, command-buffer graphs, views, and bad input: build errors with the offending line,
// more local memory or a larger work group than the device has, each naming the kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "cl_device.hpp"
#include "cl_graph.hpp"
#include "tg/codegen.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/runner_cache.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tg;

namespace {

// One device made from the plugin's code in this binary (the registry's comes from the .so).
cl::ClDevice& device() {
  static cl::ClDevice* dev = [] {
    std::string why;
    auto devices = cl::list_devices(why);
    REQUIRE_MESSAGE(!devices.empty(), why);
    return new cl::ClDevice("CL", devices.front());
  }();
  return *dev;
}

// The sources of the kernels `t` schedules on CL, compiled through the runner cache.
std::vector<std::string> kernel_sources(const Tensor& t) {
  std::vector<std::string> out;
  for (const ScheduleItem& item : t.schedule())
    if (item.kind == ScheduleItem::Kind::Kernel)
      out.push_back(runner_for(item.device, item.ast)->source());
  return out;
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

std::vector<float> host_pattern(size_t n, int mod, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (static_cast<float>((i * 37 + 11) % mod) - mod / 2.0f) * scale;
  return v;
}

} // namespace

TEST_SUITE("cl.device") {
  TEST_CASE("DEV=CL is an OpenCL device through the ICD loader, with its limits as caps") {
    std::shared_ptr<Device> dev = DeviceRegistry::global().open("CL");
    CHECK(dev->name() == "CL");
    CHECK(dev->renderers() == std::vector<std::string>{"OpenCL"});
    const RendererCaps& caps = dev->renderer("OpenCL").caps();
    CHECK(caps.has_local);
    CHECK(caps.has_shared);
    CHECK(caps.local_max[0] >= 1);
    CHECK(caps.shared_max == static_cast<int64_t>(device().info().local_mem_size));
    CHECK(caps.supports_half == device().info().has_extension("cl_khr_fp16"));
    CHECK(caps.extra_matcher != nullptr); // vector ALU split into lanes
    CHECK(contains(dev->compiler("OpenCL").identity(), device().info().driver_version));
    CHECK_FALSE(dev->host_visible());
  }

  TEST_CASE("CL:1 is the second device; one that is not there lists those that are") {
    std::string why;
    const size_t n = cl::list_devices(why).size();
    const std::string past = "CL:" + std::to_string(n);
    CHECK_THROWS_WITH_AS(DeviceRegistry::global().open(past),
                         doctest::Contains((past + ": there ").c_str()), Error);
    CHECK_THROWS_WITH_AS(DeviceRegistry::global().open(past),
                         doctest::Contains(("CL = " + device().info().name).c_str()), Error);
    CHECK(DeviceRegistry::global().open("CL:0") == DeviceRegistry::global().open("CL"));
    CHECK_THROWS_WITH_AS(DeviceRegistry::global().open("CL:OpenCL:sm_90"),
                         doctest::Contains("takes no architecture"), Error);
  }

  TEST_CASE("QCOM is refused here with its reason") {
    CHECK_THROWS_WITH_AS(DeviceRegistry::global().open("QCOM"),
                         doctest::Contains("/dev/kgsl-3d0 not found on this machine"), Error);
  }
}

TEST_SUITE("cl.renderer") {
  TEST_CASE("a long reduction is a grouped reduce through __local memory and a barrier") {
    const int64_t n = 1 << 16;
    std::vector<float> xv = host_pattern(n, 101, 0.01f);
    Tensor x = Tensor::from_vector(xv, {n}, "CL");
    Tensor s = x.sum();
    bool grouped = false;
    for (const std::string& src : kernel_sources(s))
      grouped |= contains(src, "__local float") && contains(src, "barrier(CLK_LOCAL_MEM_FENCE);") &&
                 contains(src, "get_local_id(0)");
    CHECK(grouped);
    const float cl_sum = s.item<float>();
    const float cpu_sum = Tensor::from_vector(xv, {n}, "CPU").sum().item<float>();
    CHECK(cl_sum == doctest::Approx(cpu_sum).epsilon(1e-5));
    // The same over rows: a max with -inf and negative values, each row a group's work.
    Tensor m = Tensor::from_vector(xv, {16, n / 16}, "CL").max({1});
    std::vector<float> cl_max = m.to_vector<float>();
    std::vector<float> cpu_max =
        Tensor::from_vector(xv, {16, n / 16}, "CPU").max({1}).to_vector<float>();
    CHECK(cl_max == cpu_max);
  }

  TEST_CASE("a matmul runs in work groups (local ids), with the CPU's results") {
    const int64_t M = 64, K = 48, N = 80;
    std::vector<float> av = host_pattern(M * K, 13, 0.25f), bv = host_pattern(K * N, 7, 0.5f);
    Tensor c = Tensor::from_vector(av, {M, K}, "CL").matmul(Tensor::from_vector(bv, {K, N}, "CL"));
    const auto sources = kernel_sources(c);
    REQUIRE(sources.size() == 1);
    CHECK(contains(sources[0], "get_local_id("));
    CHECK(contains(sources[0], "get_group_id("));
    const bool vectors = contains(sources[0], "vload4(") || contains(sources[0], "vstore4(");
    CHECK(vectors);
    const auto got = c.to_vector<float>();
    const auto want = Tensor::from_vector(av, {M, K}, "CPU")
                          .matmul(Tensor::from_vector(bv, {K, N}, "CPU"))
                          .to_vector<float>();
    CHECK(got == want); // small exact values: every order of the sums agrees
  }

  TEST_CASE("float16 without cl_khr_fp16 is read and written through vload_half/vstore_half") {
    if (device().info().has_extension("cl_khr_fp16")) return;
    std::vector<float> av = host_pattern(256, 29, 0.37f), bv = host_pattern(256, 17, 1.3f);
    auto half = [](const std::vector<float>& v, const std::string& dev) {
      return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}, dev).cast(dtypes::float16);
    };
    Tensor c = (half(av, "CL") * half(bv, "CL") + half(av, "CL")).contiguous();
    const auto sources = kernel_sources(c);
    REQUIRE(!sources.empty());
    CHECK(contains(sources.back(), "__global half*"));
    CHECK(contains(sources.back(), "vstore_half"));
    CHECK_FALSE(contains(sources.back(), "cl_khr_fp16"));
    Tensor cpu = (half(av, "CPU") * half(bv, "CPU") + half(av, "CPU")).contiguous();
    CHECK(c.cast(dtypes::float32).to_vector<float>() ==
          cpu.cast(dtypes::float32).to_vector<float>());
  }
}

TEST_SUITE("cl.errors") {
  TEST_CASE("a build error names the kernel and shows the log and the offending line") {
    const std::string src = "__kernel void broken_kernel(__global float* data0) {\n"
                            "  float x = 1.0f;\n"
                            "  data0[0] = x + undefined_thing;\n"
                            "}\n";
    CHECK_THROWS_WITH_AS(device().compiler("OpenCL").compile(src),
                         doctest::Contains("building kernel broken_kernel for CL"), Error);
    CHECK_THROWS_WITH_AS(device().compiler("OpenCL").compile(src),
                         doctest::Contains("line 3:   data0[0] = x + undefined_thing;"), Error);
    CHECK_THROWS_WITH_AS(device().compiler("OpenCL").compile(src), doctest::Contains("build log:"),
                         Error);
  }

  TEST_CASE("more local memory than the device has: refused naming the kernel") {
    // By codegen: a grouped reduce that needs more than the device's local memory.
    const RendererCaps& caps = device().renderer("OpenCL").caps();
    auto out = UOp::make(Ops::PARAM, dtypes::float32.ptr(1 << 20), {}, int64_t{0});
    auto x = UOp::make(Ops::PARAM, dtypes::float32.ptr(1 << 26), {}, int64_t{1});
    auto i = UOp::range(UOp::const_(dtypes::index, 1 << 20), 0, AxisType::Global);
    auto k = UOp::range(UOp::const_(dtypes::index, 64), 1, AxisType::Reduce);
    auto red = UOp::make(
        Ops::REDUCE, dtypes::float32,
        {UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, x->dtype, {x, i * 64 + k})}),
         k},
        ReduceArg{Ops::ADD, {}});
    auto ast = UOp::sink(
        {UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, out->dtype, {out, i}), red})});
    // 64 x 64 work items, each 256 upcast lanes: 4 MiB of partial sums.
    REQUIRE(caps.shared_max < 64 * 64 * 256 * 4);
    REQUIRE(caps.local_max[0] >= 64 * 64);
    CHECK_THROWS_WITH_AS(
        lower_kernel_with_opts(
            ast, caps, {{OptOp::UPCAST, 0, 256}, {OptOp::LOCAL, 0, 64}, {OptOp::GROUP, 0, 64}}),
        doctest::Contains(
            ("bytes of local memory, the device has " + std::to_string(caps.shared_max)).c_str()),
        OptError);
    // By the device: a hand-written kernel whose __local array is larger than the device's.
    const size_t floats = device().info().local_mem_size / 4 + 1024;
    const std::string src = "__kernel void too_much_local(__global float* data0) {\n"
                            "  __local float t[" +
                            std::to_string(floats) +
                            "];\n"
                            "  t[get_local_id(0)] = 1.0f;\n"
                            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                            "  data0[get_local_id(0)] = t[" +
                            std::to_string(floats - 1) +
                            " - get_local_id(0)];\n"
                            "}\n";
    auto run = [&] {
      auto bin = device().compiler("OpenCL").compile(src);
      auto prg = device().load("too_much_local", bin);
      DevicePtr p = device().allocator().alloc(64 * 4);
      LaunchArgs args{{p}, {}, {1, 1, 1}, {64, 1, 1}};
      try {
        prg->run(args, false);
      } catch (...) {
        device().allocator().free(p, 64 * 4);
        throw;
      }
      device().allocator().free(p, 64 * 4);
    };
    CHECK_THROWS_WITH_AS(run(), doctest::Contains("too_much_local"), Error);
  }

  TEST_CASE("a work group larger than the device's maximum: refused naming the kernel") {
    const RendererCaps& caps = device().renderer("OpenCL").caps();
    auto out = UOp::make(Ops::PARAM, dtypes::float32.ptr(1 << 16), {}, int64_t{0});
    auto i = UOp::range(UOp::const_(dtypes::index, 1 << 16), 0, AxisType::Global);
    auto ast = UOp::sink(
        {UOp::make(Ops::STORE, dtypes::void_,
                   {UOp::make(Ops::INDEX, out->dtype, {out, i}), i->cast(dtypes::float32)})});
    const int too_many = static_cast<int>(caps.local_max[0] * 2);
    CHECK_THROWS_WITH_AS(
        lower_kernel_with_opts(ast, caps, {{OptOp::LOCAL, 0, too_many}}),
        doctest::Contains(
            ("exceeds the device's maximum of " + std::to_string(caps.local_max[0])).c_str()),
        OptError);
    // At launch: a lowered kernel given a local size beyond the device's.
    const LoweredKernel k = lower_kernel_with_opts(ast, caps, {{OptOp::LOCAL, 0, 16}});
    auto bin =
        device().compiler("OpenCL").compile(device().renderer("OpenCL").render(k.name, k.uops));
    auto prg = device().load(k.name, bin);
    DevicePtr p = device().allocator().alloc(4 << 16);
    LaunchArgs args{{p}, {}, {1, 1, 1}, {too_many, 1, 1}};
    CHECK_THROWS_WITH_AS(prg->run(args, false),
                         doctest::Contains(("kernel " + k.name + " on CL").c_str()), Error);
    args.local = {16, 1, 1};
    args.global = k.global;
    CHECK_NOTHROW(prg->run(args, false));
    device().allocator().free(p, 4 << 16);
  }
}

TEST_SUITE("cl.runtime") {
  TEST_CASE("the queue's timeline, timestamps around a kernel, copies in and out") {
    const RendererCaps& caps = device().renderer("OpenCL").caps();
    const int64_t n = 4096;
    auto out = UOp::make(Ops::PARAM, dtypes::float32.ptr(n), {}, int64_t{0});
    auto in = UOp::make(Ops::PARAM, dtypes::float32.ptr(n), {}, int64_t{1});
    auto i = UOp::range(UOp::const_(dtypes::index, n), 0, AxisType::Global);
    auto v = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, in->dtype, {in, i})});
    auto ast = UOp::sink({UOp::make(Ops::STORE, dtypes::void_,
                                    {UOp::make(Ops::INDEX, out->dtype, {out, i}), v + v})});
    const LoweredKernel k = lower_kernel(ast, caps);
    auto prg = device().load(k.name, device().compiler("OpenCL").compile(
                                         device().renderer("OpenCL").render(k.name, k.uops)));
    Allocator& a = device().allocator();
    DevicePtr po = a.alloc(n * 4), pi = a.alloc(n * 4);
    std::vector<float> xv(n);
    std::iota(xv.begin(), xv.end(), 0.0f);
    std::vector<uint8_t> bytes(n * 4);
    std::memcpy(bytes.data(), xv.data(), bytes.size());
    Queue& q = device().queue();
    q.copy_in(pi, bytes);
    const uint64_t t0 = q.timestamp();
    q.exec(prg, LaunchArgs{{po, pi}, {}, k.global, k.local});
    const uint64_t t1 = q.timestamp();
    std::vector<float> got(n);
    q.copy_out(got.data(), po, n * 4);
    const uint64_t done = q.signal();
    CHECK(t0 < t1);
    CHECK(t1 < done);
    q.wait(done);
    CHECK(q.completed() >= done);
    CHECK(q.timestamp_seconds(t1) >= q.timestamp_seconds(t0));
    for (int64_t t = 0; t < n; ++t) REQUIRE(got[t] == 2.0f * xv[t]);
    CHECK_THROWS_WITH_AS(q.timestamp_seconds(done), doctest::Contains("is not a timestamp"), Error);
    a.free(po, n * 4);
    a.free(pi, n * 4);
  }

  TEST_CASE("a graph replays through a command buffer, recorded once per set of arguments") {
    const RendererCaps& caps = device().renderer("OpenCL").caps();
    const int64_t n = 1024;
    auto out = UOp::make(Ops::PARAM, dtypes::float32.ptr(n), {}, int64_t{0});
    auto in = UOp::make(Ops::PARAM, dtypes::float32.ptr(n), {}, int64_t{1});
    auto i = UOp::range(UOp::const_(dtypes::index, n), 0, AxisType::Global);
    auto v = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, in->dtype, {in, i})});
    auto ast = UOp::sink({UOp::make(
        Ops::STORE, dtypes::void_,
        {UOp::make(Ops::INDEX, out->dtype, {out, i}), v + UOp::const_(dtypes::float32, 1.0)})});
    const LoweredKernel k = lower_kernel(ast, caps);
    auto prg = device().load(k.name, device().compiler("OpenCL").compile(
                                         device().renderer("OpenCL").render(k.name, k.uops)));
    Allocator& a = device().allocator();
    std::vector<DevicePtr> b;
    for (int t = 0; t < 3; ++t) b.push_back(a.alloc(n * 4));
    std::vector<float> zero(n, 0.0f);
    a.copy_in(b[0], zero.data(), n * 4);
    // b1 = b0 + 1, b2 = b1 + 1: the second launch must see the first's result.
    std::vector<GraphLaunch> launches{{prg, {{b[1], b[0]}, {}, k.global, k.local}},
                                      {prg, {{b[2], b[1]}, {}, k.global, k.local}}};
    auto graph = device().graph(launches);
    auto* clg = dynamic_cast<cl::ClGraph*>(graph.get());
    REQUIRE(clg != nullptr);
    std::vector<LaunchArgs> args{launches[0].args, launches[1].args};
    graph->replay(args);
    graph->replay(args);
    device().queue().synchronize();
    std::vector<float> got(n);
    a.copy_out(got.data(), b[2], n * 4);
    CHECK(got[0] == 2.0f);
    CHECK(got[n - 1] == 2.0f);
    const bool command_buffers = device().info().has_extension("cl_khr_command_buffer");
    CHECK(clg->recorded() == (command_buffers ? 1u : 0u));
    // Other buffers: another recording, and the replay reads them.
    std::vector<LaunchArgs> swapped{{{b[1], b[2]}, {}, k.global, k.local},
                                    {{b[0], b[1]}, {}, k.global, k.local}};
    graph->replay(swapped);
    device().queue().synchronize();
    a.copy_out(got.data(), b[0], n * 4);
    CHECK(got[5] == 4.0f);
    CHECK(clg->recorded() == (command_buffers ? 2u : 0u));
    // A replay with another launch shape is refused.
    swapped[0].global = {1, 1, 1};
    CHECK_THROWS_WITH_AS(graph->replay(swapped), doctest::Contains("graph replay: launch 0"),
                         Error);
    graph.reset();
    for (DevicePtr p : b) a.free(p, n * 4);
  }

  TEST_CASE("views: copies at any offset, kernels only at an aligned one") {
    Allocator& a = device().allocator();
    const size_t align = device().info().base_address_align;
    const size_t bytes = align * 8;
    DevicePtr base = a.alloc(bytes);
    std::vector<uint8_t> pattern(bytes);
    std::iota(pattern.begin(), pattern.end(), uint8_t{0});
    a.copy_in(base, pattern.data(), bytes);
    DevicePtr odd = a.offset(base, 4);
    std::vector<uint8_t> back(8);
    a.copy_out(back.data(), odd, back.size());
    CHECK(back[0] == 4);
    CHECK(back[7] == 11);
    const cl::ClBuffer* aligned = cl::as_buffer(a.offset(base, align));
    CHECK(aligned->mem != nullptr); // a sub-buffer kernels can take
    CHECK(cl::as_buffer(odd)->mem == nullptr);
    a.free(base, bytes);
  }
}
