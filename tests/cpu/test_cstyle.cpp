// The C-style renderer base: a toy GPU dialect shows the hooks and the op table at work.
#include <doctest/doctest.h>

#include "cpu_test_util.hpp"
#include "tg/plugin/cstyle.hpp"
#include "tg/plugin/llvm_ir.hpp"

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
  std::string infinity() const override { return "INFINITY"; }
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
    CHECK(has(src, "max(val0,(-INFINITY))"));
    CHECK(has(src, "*(data0+alu1) = alu3;"));
  }

  TEST_CASE("the base leaves vendor spellings to the dialect, and names the hook it lacks") {
    class Bare final : public CStyleRenderer {
    public:
      std::string name() const override { return "BARE"; }
      const RendererCaps& caps() const override { return caps_; }

    private:
      RendererCaps caps_;
    };
    Bare r;
    auto render = [&](const UOpPtr& u) {
      Linear k;
      k.add(u);
      return r.render("k", k.list());
    };
    CHECK_THROWS_WITH_AS(render(UOp::make(Ops::BARRIER, dtypes::void_, {})),
                         doctest::Contains("the dialect spells no barrier (set barrier())"), Error);
    CHECK_THROWS_WITH_AS(
        render(UOp::make(Ops::DEFINE_LOCAL, dtypes::float32.ptr(16, AddrSpace::Local), {}, 0)),
        doctest::Contains("declares no work-group memory (set local_decl())"), Error);
    CHECK_THROWS_WITH_AS(
        render(UOp::const_(dtypes::float32, std::numeric_limits<double>::infinity())),
        doctest::Contains("spells no infinity (set infinity())"), Error);
    CHECK_THROWS_WITH_AS(r.type_name(dtypes::float16),
                         doctest::Contains("names no scalar float16 type (set type_name())"),
                         Error);
    CHECK(r.type_name(dtypes::float32) == "float"); // what every C-like language spells alike
  }

  TEST_CASE("the LLVM IR base leaves the calling convention to the target") {
    class BareIR final : public LLVMIRRenderer {
    public:
      std::string name() const override { return "BAREIR"; }
      const RendererCaps& caps() const override { return caps_; }

    private:
      RendererCaps caps_;
    };
    BareIR r;
    auto render = [&](const std::vector<UOpPtr>& uops) {
      Linear k;
      for (const UOpPtr& u : uops) k.add(u);
      return r.render("k", k.list());
    };
    CHECK_THROWS_WITH_AS(render({param(0, dtypes::float32, 4)}),
                         doctest::Contains("the target passes no buffers (set render_param())"),
                         Error);
    CHECK_THROWS_WITH_AS(render({special("gidx0", 4)}),
                         doctest::Contains("no work-item indices (set render_special())"), Error);
    CHECK_THROWS_WITH_AS(render({UOp::make(Ops::BARRIER, dtypes::void_, {})}),
                         doctest::Contains("spells no barrier (set render_barrier())"), Error);
    CHECK_THROWS_WITH_AS(render({}), doctest::Contains("defines no kernel function"), Error);
    // The CPU's target sets them all: the same nodes render.
    Linear k;
    k.add(param(0, dtypes::float32, 4));
    k.add(special("gidx0", 4));
    k.add(UOp::make(Ops::BARRIER, dtypes::void_, {}));
    const std::string src = device().renderer("LLVM").render("k", k.list());
    CHECK(has(src, "define void @k(ptr noalias nocapture readonly %bufs"));
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
