// Hand-built linearized kernels run through both CPU renderers against plain C++ references.
#include <doctest/doctest.h>

#include <cmath>

#include "cpu_test_util.hpp"
#include "tg/ir/exec_alu.hpp"
#include "tg/ir/float_formats.hpp"
#include "tg/knobs.hpp"

using namespace tg;
using namespace tg::cpu::test;

TEST_SUITE("cpu.kernels") {

  TEST_CASE("elementwise add") {
    const int64_t n = 1000;
    Linear k;
    auto out = k.add(param(0, dtypes::float32, n));
    auto a = k.add(param(1, dtypes::float32, n));
    auto b = k.add(param(2, dtypes::float32, n));
    auto g = k.add(special("gidx0", n));
    k.add(store(index(out, g), load(index(a, g)) + load(index(b, g))));
    std::vector<float> av(n), bv(n);
    for (int64_t i = 0; i < n; ++i) av[i] = 0.5f * i, bv[i] = 3.0f - i;
    for (const std::string& r : kRenderers) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(av), HostBuf::of(bv)};
      run_kernel(device(), r, "add_kernel", k.list(), bufs, {}, {n, 1, 1});
      auto o = bufs[0].as<float>();
      for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == av[i] + bv[i]);
    }
  }

  TEST_CASE("float MAX propagates NaN and prefers +0 over -0, as exec_alu, in both renderers") {
    const std::vector<float> av{NAN, 1.0f, -0.0f, 0.0f, 2.0f, -INFINITY, -1.0f};
    const std::vector<float> bv{1.0f, NAN, 0.0f, -0.0f, 3.0f, -5.0f, -1.0f};
    const int64_t n = static_cast<int64_t>(av.size());
    Linear k;
    auto out = k.add(param(0, dtypes::float32, n));
    auto a = k.add(param(1, dtypes::float32, n));
    auto b = k.add(param(2, dtypes::float32, n));
    auto g = k.add(special("gidx0", n));
    k.add(store(index(out, g), load(index(a, g))->maximum(load(index(b, g)))));
    for (const std::string& r : kRenderers) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(av), HostBuf::of(bv)};
      run_kernel(device(), r, "max_kernel", k.list(), bufs, {}, {n, 1, 1});
      auto o = bufs[0].as<float>();
      for (int64_t i = 0; i < n; ++i) {
        const ConstValue ops[2] = {static_cast<double>(av[i]), static_cast<double>(bv[i])};
        const double want = as_double(*exec_alu(Ops::MAX, dtypes::float32, ops));
        CAPTURE(i);
        if (std::isnan(want)) {
          CHECK(std::isnan(o[i]));
        } else {
          CHECK(o[i] == want);
          CHECK(std::signbit(o[i]) == std::signbit(want));
        }
      }
    }
  }

  TEST_CASE("FP_CONTRACT: a * b + c rounds once (a fused multiply-add) or twice, both renderers") {
    // x * x for x = 1 + 2^-12 is 1 + 2^-11 + 2^-24: rounded to float it loses the 2^-24 (a
    // tie, to even), so x * x - (1 + 2^-11) is 0 with two roundings and 2^-24 with one.
    const float x = 1.0f + std::ldexp(1.0f, -12), c = -(1.0f + std::ldexp(1.0f, -11));
    Linear k;
    auto out = k.add(param(0, dtypes::float32, 2));
    auto a = k.add(param(1, dtypes::float32, 2));
    auto g = k.add(special("gidx0", 1));
    auto v = k.add(load(index(a, g)));
    auto w = k.add(load(index(a, g + 1)));
    k.add(store(index(out, g), v * v + w));
    k.add(store(index(out, g + 1), v->alu(Ops::MULACC, {v, w})));
    for (const int64_t contract : {0, 1})
      for (const std::string& r : kRenderers) {
        CAPTURE(r);
        CAPTURE(contract);
        Context ctx{{"FP_CONTRACT", contract}};
        std::vector<HostBuf> bufs{HostBuf::zeros<float>(2), HostBuf::of(std::vector<float>{x, c})};
        run_kernel(device(), r, "fma_kernel", k.list(), bufs, {}, {1, 1, 1});
        const float want = contract ? std::ldexp(1.0f, -24) : 0.0f;
        CHECK(bufs[0].as<float>() == std::vector<float>{want, want});
      }
  }

  TEST_CASE("row sums with an accumulator register") {
    const int64_t rows = 37, cols = 53;
    Linear k;
    auto out = k.add(param(0, dtypes::float32, rows));
    auto x = k.add(param(1, dtypes::float32, rows * cols));
    auto row = k.add(special("gidx0", rows));
    auto acc =
        k.add(UOp::make(Ops::DEFINE_REG, dtypes::float32.ptr(1, AddrSpace::Reg), {}, int64_t{0}));
    auto acc0 = index(acc, ci(0));
    k.add(store(acc0, cnst(dtypes::float32, 0.0)));
    auto c = k.add(UOp::range(ci(cols), 1, AxisType::Reduce));
    auto st = k.add(store(acc0, load(acc0) + load(index(x, row * cols + c))));
    auto done = k.add(end(c, st));
    auto after = UOp::make(Ops::AFTER, acc->dtype, {acc, done});
    k.add(store(index(out, row), load(index(after, ci(0)))));
    std::vector<float> xv(rows * cols);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 7) % 11) - 5.0f;
    for (const std::string& r : kRenderers) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(rows), HostBuf::of(xv)};
      run_kernel(device(), r, "row_sum", k.list(), bufs, {}, {rows, 1, 1});
      auto o = bufs[0].as<float>();
      for (int64_t i = 0; i < rows; ++i) {
        float ref = 0;
        for (int64_t j = 0; j < cols; ++j) ref += xv[i * cols + j];
        REQUIRE(o[i] == ref);
      }
    }
  }

  TEST_CASE("small matmul over gidx0 x gidx1 with MULACC") {
    const int64_t m = 9, n = 7, kk = 13;
    Linear k;
    auto out = k.add(param(0, dtypes::float32, m * n));
    auto a = k.add(param(1, dtypes::float32, m * kk));
    auto b = k.add(param(2, dtypes::float32, kk * n));
    auto i = k.add(special("gidx0", m));
    auto j = k.add(special("gidx1", n));
    auto acc =
        k.add(UOp::make(Ops::DEFINE_REG, dtypes::float32.ptr(1, AddrSpace::Reg), {}, int64_t{0}));
    auto acc0 = index(acc, ci(0));
    k.add(store(acc0, cnst(dtypes::float32, 0.0)));
    auto r = k.add(UOp::range(ci(kk), 2, AxisType::Reduce));
    auto prod = UOp::make(Ops::MULACC, dtypes::float32,
                          {load(index(a, i * kk + r)), load(index(b, r * n + j)), load(acc0)});
    auto st = k.add(store(acc0, prod));
    auto done = k.add(end(r, st));
    auto after = UOp::make(Ops::AFTER, acc->dtype, {acc, done});
    k.add(store(index(out, i * n + j), load(index(after, ci(0)))));
    std::vector<float> av(m * kk), bv(kk * n);
    for (size_t t = 0; t < av.size(); ++t) av[t] = static_cast<float>(t % 5) - 2;
    for (size_t t = 0; t < bv.size(); ++t) bv[t] = static_cast<float>(t % 3) * 0.5f;
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(av), HostBuf::of(bv)};
      run_kernel(device(), rn, "matmul", k.list(), bufs, {}, {m, n, 1});
      auto o = bufs[0].as<float>();
      for (int64_t x = 0; x < m; ++x)
        for (int64_t y = 0; y < n; ++y) {
          float ref = 0;
          for (int64_t t = 0; t < kk; ++t) ref = av[x * kk + t] * bv[t * n + y] + ref;
          REQUIRE(o[x * n + y] == ref);
        }
    }
  }

  TEST_CASE("a scalar variable bounds a loop and scales the values") {
    const int64_t cap = 64;
    Linear k;
    auto out = k.add(param(0, dtypes::int32, cap));
    auto a = k.add(param(1, dtypes::int32, cap));
    auto nv = k.add(UOp::variable("n", 1, cap, dtypes::int32));
    auto scale = k.add(UOp::variable("s", -100, 100, dtypes::int32));
    auto r = k.add(UOp::range(nv, 0, AxisType::Loop));
    auto st = k.add(store(index(out, r), load(index(a, r)) * scale));
    k.add(end(r, st));
    std::vector<int32_t> av(cap);
    for (int64_t i = 0; i < cap; ++i) av[i] = static_cast<int32_t>(i * 3 - 17);
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(cap), HostBuf::of(av)};
      run_kernel(device(), rn, "var_kernel", k.list(), bufs, {40, -3});
      auto o = bufs[0].as<int32_t>();
      for (int64_t i = 0; i < cap; ++i) REQUIRE(o[i] == (i < 40 ? av[i] * -3 : 0));
    }
  }

  TEST_CASE("int and float16 loads, stores and casts") {
    const int64_t n = 256;
    Linear k;
    auto h = k.add(param(0, dtypes::float16, n));
    auto back = k.add(param(1, dtypes::int32, n));
    auto in = k.add(param(2, dtypes::int32, n));
    auto i8 = k.add(param(3, dtypes::int8, n));
    auto g = k.add(special("gidx0", n));
    auto x = k.add(load(index(in, g)));
    auto half = k.add(x.get()->cast(dtypes::float16) * cnst(dtypes::float16, 0.25));
    k.add(store(index(h, g), half));
    k.add(store(index(back, g), load(index(h, g)).get()->cast(dtypes::int32)));
    k.add(store(index(i8, g), x.get()->cast(dtypes::int8) + UOp::const_(dtypes::int8, 100)));
    std::vector<int32_t> iv(n);
    for (int64_t i = 0; i < n; ++i) iv[i] = static_cast<int32_t>(i * 37 - 4000);
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<uint16_t>(n), HostBuf::zeros<int32_t>(n),
                                HostBuf::of(iv), HostBuf::zeros<int8_t>(n)};
      run_kernel(device(), rn, "half_kernel", k.list(), bufs, {}, {n, 1, 1});
      auto hv = bufs[0].as<uint16_t>();
      auto bv = bufs[1].as<int32_t>();
      auto cv = bufs[3].as<int8_t>();
      for (int64_t i = 0; i < n; ++i) {
        const double ref = half_to_float(float_to_half(half_to_float(float_to_half(iv[i])) * 0.25));
        REQUIRE(half_to_float(hv[i]) == ref);
        REQUIRE(bv[i] == static_cast<int32_t>(std::trunc(ref)));
        REQUIRE(cv[i] ==
                static_cast<int8_t>(static_cast<uint8_t>(static_cast<int8_t>(iv[i]) + 100)));
      }
    }
  }

  TEST_CASE("casts among bool, ints, uints, float16, bfloat16, float32 and float64") {
    const DType types[] = {dtypes::bool_,  dtypes::int8,    dtypes::uint8,    dtypes::int16,
                           dtypes::uint16, dtypes::int32,   dtypes::uint32,   dtypes::int64,
                           dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                           dtypes::float64};
    // Values every type holds exactly in the source float32 and that convert without UB.
    const std::vector<float> vals{0.0f, 1.0f, 2.0f, 3.5f, 7.0f, 100.25f, 42.0f, 126.0f};
    const int64_t n = static_cast<int64_t>(vals.size());
    for (DType to : types) {
      CAPTURE(to.name());
      // float32 -> to -> float32
      Linear k;
      auto out = k.add(param(0, dtypes::float32, n));
      auto mid = k.add(param(1, to, n));
      auto in = k.add(param(2, dtypes::float32, n));
      auto g = k.add(special("gidx0", n));
      k.add(store(index(mid, g), load(index(in, g)).get()->cast(to)));
      k.add(store(index(out, g), load(index(mid, g)).get()->cast(dtypes::float32)));
      for (const std::string& rn : kRenderers) {
        CAPTURE(rn);
        std::vector<HostBuf> bufs{HostBuf::zeros<float>(n),
                                  HostBuf{std::vector<uint8_t>(n * to.itemsize())},
                                  HostBuf::of(vals)};
        run_kernel(device(), rn, "cast_kernel", k.list(), bufs, {}, {n, 1, 1});
        auto o = bufs[0].as<float>();
        for (int64_t i = 0; i < n; ++i)
          REQUIRE(o[i] == static_cast<float>(as_double(
                              cast_const(cast_const(double(vals[i]), to), dtypes::float32))));
      }
    }
  }

  TEST_CASE("casts from float64 and int64 sources round once") {
    const DType types[] = {dtypes::float16, dtypes::bfloat16, dtypes::float32,
                           dtypes::int32,   dtypes::uint8,    dtypes::bool_};
    // 1 + 2^-11 + 2^-30 rounds up to 1 + 2^-10 in float16 directly, but to 1 (a tie, to even)
    // through float32 first: only a single rounding gets it right.
    // Likewise 1 + 2^-8 + 2^-40 in bfloat16.
    const std::vector<double> vals{0.0,
                                   1.0 + 0x1p-11 + 0x1p-30,
                                   -3.75,
                                   65504.0,
                                   100.125,
                                   1.0 + 0x1p-8 + 0x1p-40,
                                   -(1.0 + 0x1p-8 + 0x1p-40),
                                   1e-300};
    const int64_t n = static_cast<int64_t>(vals.size());
    for (DType to : types) {
      CAPTURE(to.name());
      Linear k;
      auto out = k.add(param(0, dtypes::float64, n));
      auto in = k.add(param(1, dtypes::float64, n));
      auto g = k.add(special("gidx0", n));
      k.add(store(index(out, g), load(index(in, g)).get()->cast(to).get()->cast(dtypes::float64)));
      for (const std::string& rn : kRenderers) {
        CAPTURE(rn);
        std::vector<HostBuf> bufs{HostBuf::zeros<double>(n), HostBuf::of(vals)};
        run_kernel(device(), rn, "cast64", k.list(), bufs, {}, {n, 1, 1});
        auto o = bufs[0].as<double>();
        for (int64_t i = 0; i < n; ++i) {
          if (to.is_unsigned() && vals[i] < 0) continue; // undefined in C
          CAPTURE(i);
          REQUIRE(o[i] == as_double(cast_const(cast_const(vals[i], to), dtypes::float64)));
        }
      }
    }
  }

  TEST_CASE("bitcast float32 <-> int32 and bfloat16 bits") {
    const int64_t n = 4;
    Linear k;
    auto out = k.add(param(0, dtypes::int32, n));
    auto bf = k.add(param(1, dtypes::int16, n));
    auto in = k.add(param(2, dtypes::float32, n));
    auto g = k.add(special("gidx0", n));
    auto x = k.add(load(index(in, g)));
    k.add(store(index(out, g), x.get()->bitcast(dtypes::int32)));
    k.add(store(index(bf, g), x.get()->cast(dtypes::bfloat16).get()->bitcast(dtypes::int16)));
    const std::vector<float> vals{1.0f, -2.5f, 3.14159f, 1e30f};
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(n), HostBuf::zeros<int16_t>(n),
                                HostBuf::of(vals)};
      run_kernel(device(), rn, "bitcast_kernel", k.list(), bufs, {}, {n, 1, 1});
      auto o = bufs[0].as<int32_t>();
      auto b = bufs[1].as<uint16_t>();
      for (int64_t i = 0; i < n; ++i) {
        int32_t bits;
        std::memcpy(&bits, &vals[i], 4);
        REQUIRE(o[i] == bits);
        REQUIRE(b[i] == float_to_bf16(vals[i]));
      }
    }
  }

  TEST_CASE("gated loads and stores, and where") {
    const int64_t n = 100, valid = 61;
    Linear k;
    auto out = k.add(param(0, dtypes::float32, n));
    auto out2 = k.add(param(1, dtypes::float32, n));
    auto a = k.add(param(2, dtypes::float32, valid));
    auto g = k.add(special("gidx0", n));
    auto in_range = k.add(g.get()->lt(ci(valid)));
    // out[i] = i < valid ? a[i] : -1 (a gated load: a has only `valid` elements)
    auto v = k.add(load(index(a, g, in_range), dtypes::float32, cnst(dtypes::float32, -1.0)));
    k.add(store(index(out, g), v));
    // out2[i] = where(v > 10, v, 0), stored only at even i (a gated store)
    auto even = k.add((g % 2).get()->eq(ci(0)));
    auto w = cnst(dtypes::float32, 10.0).get()->lt(v).get()->where(v, cnst(dtypes::float32, 0.0));
    k.add(store(index(out2, g, even), w));
    std::vector<float> av(valid);
    for (int64_t i = 0; i < valid; ++i) av[i] = static_cast<float>(i) * 0.5f;
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(std::vector<float>(n, 7.0f)),
                                HostBuf::of(av)};
      run_kernel(device(), rn, "gated", k.list(), bufs, {}, {n, 1, 1});
      auto o = bufs[0].as<float>();
      auto o2 = bufs[1].as<float>();
      for (int64_t i = 0; i < n; ++i) {
        const float ref = i < valid ? av[i] : -1.0f;
        REQUIRE(o[i] == ref);
        REQUIRE(o2[i] == (i % 2 == 0 ? (ref > 10 ? ref : 0.0f) : 7.0f));
      }
    }
  }

  TEST_CASE("IF / ENDIF blocks") {
    const int64_t n = 20;
    Linear k;
    auto out = k.add(param(0, dtypes::int32, n));
    auto g = k.add(special("gidx0", n));
    auto cond = k.add(ci(5).get()->lt(g));
    auto iff = k.add(UOp::make(Ops::IF, dtypes::void_, {cond}));
    k.add(store(index(out, g), g * 2));
    k.add(UOp::make(Ops::ENDIF, dtypes::void_, {iff}));
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::of(std::vector<int32_t>(n, -1))};
      run_kernel(device(), rn, "if_kernel", k.list(), bufs, {}, {n, 1, 1});
      auto o = bufs[0].as<int32_t>();
      for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == (i > 5 ? 2 * i : -1));
    }
  }

  TEST_CASE("float4 vectors: vector load, VECTORIZE, GEP, vector store") {
    const int64_t n = 8; // two float4s per buffer
    const DType f4 = dtypes::float32.vec(4);
    Linear k;
    auto out = k.add(param(0, dtypes::float32, n));
    auto a = k.add(param(1, dtypes::float32, n));
    auto sums = k.add(param(2, dtypes::float32, 2));
    auto g = k.add(special("gidx0", 2));
    auto v = k.add(load(index(a, g * 4), f4));
    auto l0 = UOp::make(Ops::GEP, dtypes::float32, {v}, Shape{0});
    auto l3 = UOp::make(Ops::GEP, dtypes::float32, {v}, Shape{3});
    auto rev = k.add(UOp::make(Ops::VECTORIZE, f4,
                               {l3, UOp::make(Ops::GEP, dtypes::float32, {v}, Shape{2}),
                                UOp::make(Ops::GEP, dtypes::float32, {v}, Shape{1}), l0}));
    k.add(store(index(out, g * 4), rev + v));
    k.add(store(index(sums, g), l0 + l3));
    std::vector<float> av{1, 2, 3, 4, 10, 20, 30, 40};
    for (const std::string& rn : kRenderers) {
      CAPTURE(rn);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(av),
                                HostBuf::zeros<float>(2)};
      run_kernel(device(), rn, "vec_kernel", k.list(), bufs, {}, {2, 1, 1});
      auto o = bufs[0].as<float>();
      auto s = bufs[2].as<float>();
      for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == av[i] + av[(i / 4) * 4 + 3 - i % 4]);
      REQUIRE(s[0] == 5);
      REQUIRE(s[1] == 50);
    }
  }

  TEST_CASE("large elementwise outputs get non-temporal stores (LLVM): at the threshold, aligned "
            "or not; not below it, nor in a kernel with an accumulator") {
    const int64_t n = int64_t{1} << 18; // 1 MiB of float32
    const DType f16 = dtypes::float32.vec(16);
    // out[16 g + shift ...] = 2 * a[16 g ...]; a shift of 3 makes every vector store unaligned.
    auto kernel = [&](int64_t shift, bool with_register) {
      Linear k;
      auto out = k.add(param(0, dtypes::float32, n + 16));
      auto a = k.add(param(1, dtypes::float32, n));
      if (with_register)
        k.add(UOp::make(Ops::DEFINE_REG, dtypes::float32.ptr(1, AddrSpace::Reg), {}, int64_t{0}));
      auto g = k.add(special("gidx0", n / 16));
      auto v = k.add(load(index(a, g * 16), f16));
      k.add(store(index(out, g * 16 + static_cast<int>(shift)), v + v));
      return k.list();
    };
    auto llvm_ir = [&](int64_t mb, bool with_register) {
      Context ctx{{"CPU_NT_STORE_MB", mb}};
      return device().renderer("LLVM").render("nt", kernel(0, with_register));
    };
    CHECK(llvm_ir(1, false).find("!nontemporal") != std::string::npos);
    CHECK(llvm_ir(2, false).find("!nontemporal") == std::string::npos);
    CHECK(llvm_ir(0, false).find("!nontemporal") == std::string::npos);
    CHECK(llvm_ir(1, true).find("!nontemporal") == std::string::npos);
    std::vector<float> av(static_cast<size_t>(n));
    for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 1000) - 500.0f;
    Context ctx{{"CPU_NT_STORE_MB", 1}};
    for (const int64_t shift : {0, 3}) {
      CAPTURE(shift);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(static_cast<size_t>(n + 16)),
                                HostBuf::of(av)};
      run_kernel(device(), "LLVM", "nt_kernel", kernel(shift, false), bufs, {}, {n / 16, 1, 1});
      const auto o = bufs[0].as<float>();
      for (int64_t i = 0; i < n; ++i)
        REQUIRE(o[static_cast<size_t>(i + shift)] == 2 * av[static_cast<size_t>(i)]);
    }
  }

} // TEST_SUITE
