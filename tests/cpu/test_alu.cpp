// Every ALU op (but THREEFRY) on ints and floats, through both renderers, against exec_alu,
// the IR's reference semantics. One kernel per dtype writes each op to its own buffer.
#include <doctest/doctest.h>

#include <cmath>

#include "cpu_test_util.hpp"
#include "tg/ir/exec_alu.hpp"
#include "tg/ir/float_formats.hpp"

using namespace tg;
using namespace tg::cpu::test;

namespace {

// Packs values of dtype `dt` (float16 as its bits) into a buffer.
HostBuf pack(DType dt, const std::vector<ConstValue>& vals) {
  HostBuf b;
  b.bytes.resize(vals.size() * dt.itemsize());
  for (size_t i = 0; i < vals.size(); ++i) {
    uint8_t* p = b.bytes.data() + i * dt.itemsize();
    const ConstValue v = cast_const(vals[i], dt);
    if (dt.scalar_type == ScalarType::Float16) {
      const uint16_t h = float_to_half(as_double(v));
      std::memcpy(p, &h, 2);
    } else if (dt == dtypes::float32) {
      const float f = static_cast<float>(as_double(v));
      std::memcpy(p, &f, 4);
    } else if (dt == dtypes::float64) {
      const double d = as_double(v);
      std::memcpy(p, &d, 8);
    } else if (dt.is_bool()) {
      *p = as_bool(v) ? 1 : 0;
    } else {
      const int64_t x = as_int(v);
      std::memcpy(p, &x, dt.itemsize()); // little-endian: the low bytes
    }
  }
  return b;
}

ConstValue unpack(DType dt, const HostBuf& b, size_t i) {
  const uint8_t* p = b.bytes.data() + i * dt.itemsize();
  if (dt.scalar_type == ScalarType::Float16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return half_to_float(h);
  }
  if (dt == dtypes::float32) {
    float f;
    std::memcpy(&f, p, 4);
    return static_cast<double>(f);
  }
  if (dt == dtypes::float64) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (dt.is_bool()) return *p != 0;
  uint64_t u = 0;
  std::memcpy(&u, p, dt.itemsize());
  return cast_const(static_cast<int64_t>(u), dt); // sign- or zero-extends to the dtype
}

struct Case {
  Ops op;
  int arity;
  bool shift_operand = false; // b is a shift amount / small exponent (input s)
  bool approx = false;        // libm functions: compare with a relative tolerance
};

void check_dtype(DType dt) {
  const bool flt = dt.is_float();
  std::vector<Case> cases;
  using enum Ops;
  if (flt) {
    cases = {{ADD, 2},
             {SUB, 2},
             {MUL, 2},
             {FDIV, 2},
             {MAX, 2},
             {CMPLT, 2},
             {CMPNE, 2},
             {CMPEQ, 2},
             {MOD, 2},
             {IDIV, 2},
             {NEG, 1},
             {TRUNC, 1},
             {RECIPROCAL, 1},
             {SQRT, 1},
             {EXP2, 1, false, true},
             {LOG2, 1, false, true},
             {SIN, 1, false, true},
             {POW, 2, false, true},
             {WHERE, 3},
             {MULACC, 3}};
  } else {
    cases = {{ADD, 2}, {SUB, 2},   {MUL, 2},       {IDIV, 2},      {MOD, 2},
             {MAX, 2}, {CMPLT, 2}, {CMPNE, 2},     {CMPEQ, 2},     {AND, 2},
             {OR, 2},  {XOR, 2},   {SHL, 2, true}, {SHR, 2, true}, {POW, 2, true},
             {NEG, 1}, {TRUNC, 1}, {WHERE, 3},     {MULACC, 3}};
  }
  const int64_t n = 64;
  std::vector<ConstValue> av, bv, sv;
  const int bits = 8 * dt.itemsize();
  for (int64_t i = 0; i < n; ++i) {
    if (flt) {
      av.push_back(0.37 * static_cast<double>(i + 1) - (i % 3 == 0 ? 0.0 : 0.1)); // > 0
      bv.push_back((i % 2 ? -1.0 : 1.0) * (0.5 + 0.25 * static_cast<double>(i % 9)));
      sv.push_back(0.0);
    } else {
      const int64_t x = (i * 2654435761LL) ^ (i << 7);
      av.push_back(dt.is_unsigned() ? x & 0x7fffffff : x - (int64_t{1} << 30));
      int64_t y = (i * 40503 + 7) % 1000 - 500;
      if (y == 0 || y == -1) y = 3; // no division by zero, no INT_MIN / -1
      bv.push_back(dt.is_unsigned() ? std::abs(y) : y);
      sv.push_back(i % bits);
    }
  }
  Linear k;
  auto a = k.add(param(0, dt, n));
  auto b = k.add(param(1, dt, n));
  auto s = k.add(param(2, dt, n));
  auto g = k.add(special("gidx0", n));
  auto x = k.add(load(index(a, g))), y = k.add(load(index(b, g))), z = k.add(load(index(s, g)));
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& cs = cases[c];
    const DType out_dt = GroupOp::Comparison.contains(cs.op) ? dtypes::bool_ : dt;
    auto out = k.add(param(static_cast<int64_t>(3 + c), out_dt, n));
    UOpPtr v;
    const UOpPtr& second = cs.shift_operand ? z : y;
    if (cs.arity == 1)
      v = UOp::make(cs.op, dt, {x});
    else if (cs.op == WHERE)
      v = UOp::make(WHERE, dt, {x.get()->lt(y), x, y});
    else if (cs.op == MULACC)
      v = UOp::make(MULACC, dt, {x, y, z});
    else
      v = UOp::make(cs.op, out_dt, {x, second});
    k.add(store(index(out, g), v));
  }
  for (const std::string& rn : kRenderers) {
    CAPTURE(rn);
    std::vector<HostBuf> bufs{pack(dt, av), pack(dt, bv), pack(dt, sv)};
    for (const Case& cs : cases)
      bufs.push_back(pack(GroupOp::Comparison.contains(cs.op) ? dtypes::bool_ : dt,
                          std::vector<ConstValue>(n, int64_t{0})));
    run_kernel(device(), rn, "alu_" + std::string(dt.name()), k.list(), bufs, {}, {n, 1, 1});
    for (size_t c = 0; c < cases.size(); ++c) {
      const Case& cs = cases[c];
      CAPTURE(op_name(cs.op));
      const DType out_dt = GroupOp::Comparison.contains(cs.op) ? dtypes::bool_ : dt;
      for (int64_t i = 0; i < n; ++i) {
        CAPTURE(i);
        // Operands as the kernel saw them (rounded to the dtype).
        const ConstValue ai = unpack(dt, bufs[0], i), bi = unpack(dt, bufs[1], i),
                         si = unpack(dt, bufs[2], i);
        const ConstValue second = cs.shift_operand ? si : bi;
        std::optional<ConstValue> ref;
        if (cs.arity == 1) {
          const ConstValue ops[] = {ai};
          ref = exec_alu(cs.op, dt, ops);
        } else if (cs.op == WHERE) {
          const ConstValue ops[] = {
              as_double(ai) < as_double(bi) || (!flt && as_int(ai) < as_int(bi)), ai, bi};
          ref = exec_alu(WHERE, dt, ops);
        } else if (cs.op == MULACC) {
          const ConstValue ops[] = {ai, bi, si};
          ref = exec_alu(MULACC, dt, ops);
        } else {
          const ConstValue ops[] = {ai, second};
          ref = exec_alu(cs.op, dt, ops);
        }
        REQUIRE(ref.has_value());
        const ConstValue got = unpack(out_dt, bufs[3 + c], i);
        if (out_dt.is_bool()) {
          REQUIRE(as_bool(got) == as_bool(*ref));
        } else if (flt) {
          const double r = as_double(*ref), v = as_double(got);
          if (std::isnan(r)) {
            REQUIRE(std::isnan(v));
          } else if (std::isinf(r)) {
            REQUIRE(v == r);
          } else if (cs.approx) {
            const double tol = dt == dtypes::float64 ? 1e-13 : dt == dtypes::float32 ? 1e-6 : 2e-3;
            REQUIRE(std::fabs(v - r) <= tol * std::max(1.0, std::fabs(r)));
          } else if (cs.op == IDIV) {
            REQUIRE(std::fabs(v - r) <= 1.0); // trunc(a/b) of the rounded quotient
          } else {
            REQUIRE(v == r);
          }
        } else {
          REQUIRE(as_int(got) == as_int(*ref));
        }
      }
    }
  }
}

} // namespace

TEST_SUITE("cpu.alu") {

  TEST_CASE("int32") { check_dtype(dtypes::int32); }
  TEST_CASE("uint32") { check_dtype(dtypes::uint32); }
  TEST_CASE("int8") { check_dtype(dtypes::int8); }
  TEST_CASE("uint16") { check_dtype(dtypes::uint16); }
  TEST_CASE("int64") { check_dtype(dtypes::int64); }
  TEST_CASE("uint64") { check_dtype(dtypes::uint64); }
  TEST_CASE("float32") { check_dtype(dtypes::float32); }
  TEST_CASE("float64") { check_dtype(dtypes::float64); }
  TEST_CASE("float16") { check_dtype(dtypes::float16); }

} // TEST_SUITE
