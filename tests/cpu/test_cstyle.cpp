// The C-style renderer base: a toy GPU dialect shows the hooks and the op table at work.
#include <doctest/doctest.h>

#include "cpu_test_util.hpp"
#include "tg/plugin/cstyle.hpp"

using namespace tg;
using namespace tg::cpu::test;

namespace {

class ToyGpuRenderer : public CStyleRenderer {
public:
  ToyGpuRenderer() {
    // A spelling the dialect changes: MAX as a function.
    op_table()[static_cast<size_t>(Ops::MAX)] = [](const std::vector<std::string>& a,
                                                   DType) -> std::optional<std::string> {
      return "max(" + a[0] + "," + a[1] + ")";
    };
  }
  std::string name() const override { return "TOY"; }
  const RendererCaps& caps() const override { return caps_; }
  std::string kernel_prefix() const override { return "extern \"C\" __global__ "; }
  std::string special_index(const UOp& s) const override {
    const auto& n = std::get<std::string>(s.arg);
    return std::string(n[0] == 'g' ? "blockIdx." : "threadIdx.") + "xyz"[n.back() - '0'];
  }

private:
  RendererCaps caps_;
};

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST_SUITE("cpu.cstyle") {

  TEST_CASE("a dialect's hooks and op table shape the kernel") {
    Linear k;
    auto out = k.add(param(0, dtypes::float32, 64));
    auto a = k.add(param(1, dtypes::float32, 64));
    auto nv = k.add(UOp::variable("n", 1, 64, dtypes::int32));
    auto g = k.add(special("gidx0", 16));
    auto l = k.add(special("lidx0", 4));
    auto i = k.add(g * 4 + l);
    auto x = load(index(a, i, i.get()->lt(nv)), dtypes::float32, cnst(dtypes::float32, 0.0));
    k.add(store(index(out, i),
                x.get()->maximum(cnst(dtypes::float32, -std::numeric_limits<double>::infinity()))));
    ToyGpuRenderer r;
    const std::string src = r.render("toy", k.list());
    CAPTURE(src);
    CHECK(has(src, "extern \"C\" __global__ void toy(float* data0, float* data1, const int n) {"));
    CHECK(has(src, "int gidx0 = blockIdx.x;"));
    CHECK(has(src, "int lidx0 = threadIdx.x;"));
    CHECK(has(src, "?(*(data1+alu1)):0x0p+0f)"));
    CHECK(has(src, "max(val0,(-__builtin_inff()))"));
    CHECK(has(src, "*(data0+alu1) = alu3;"));
  }

  TEST_CASE("the C dialect declares vector types and the CPU calling convention") {
    Linear k;
    auto out = k.add(param(0, dtypes::float32, 8));
    auto g = k.add(special("gidx0", 2));
    k.add(store(index(out, g * 4), cnst(dtypes::float32.vec(4), 1.5)));
    const std::string src = device().renderer("C").render("vec", k.list());
    CAPTURE(src);
    CHECK(has(src, "typedef float float4 __attribute__((ext_vector_type(4), aligned(4)));"));
    CHECK(has(src, "void vec(void** restrict bufs, const long long* restrict vars, long long "
                   "gidx0_begin, long long gidx0_end) {"));
    CHECK(has(src, "for (int gidx0 = gidx0_begin; gidx0 < gidx0_end; gidx0++) {"));
  }

} // TEST_SUITE
