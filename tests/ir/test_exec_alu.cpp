// exec_alu: the reference semantics of scalar ALU ops (wrap-around, C division, IEEE floats).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/exec_alu.hpp"

namespace {

using namespace tg;
using enum Ops;

std::optional<ConstValue> ex(Ops op, DType d, std::vector<ConstValue> v) {
  return exec_alu(op, d, v);
}
int64_t ei(Ops op, DType d, std::vector<ConstValue> v) {
  auto r = ex(op, d, std::move(v));
  REQUIRE(r.has_value());
  REQUIRE(std::holds_alternative<int64_t>(*r));
  return std::get<int64_t>(*r);
}
double ef(Ops op, DType d, std::vector<ConstValue> v) {
  auto r = ex(op, d, std::move(v));
  REQUIRE(r.has_value());
  REQUIRE(std::holds_alternative<double>(*r));
  return std::get<double>(*r);
}
bool eb(Ops op, DType d, std::vector<ConstValue> v) {
  auto r = ex(op, d, std::move(v));
  REQUIRE(r.has_value());
  REQUIRE(std::holds_alternative<bool>(*r));
  return std::get<bool>(*r);
}
ConstValue I(int64_t v) { return v; }
ConstValue F(double v) { return v; }
ConstValue B(bool v) { return v; }

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

} // namespace

TEST_SUITE("ir.exec_alu") {
  TEST_CASE("integer wrap-around at every width") {
    CHECK(ei(ADD, dtypes::int8, {I(127), I(1)}) == -128);
    CHECK(ei(ADD, dtypes::uint8, {I(255), I(1)}) == 0);
    CHECK(ei(ADD, dtypes::int16, {I(32767), I(1)}) == -32768);
    CHECK(ei(SUB, dtypes::uint16, {I(0), I(1)}) == 65535);
    CHECK(ei(ADD, dtypes::int32, {I(INT32_MAX), I(1)}) == INT32_MIN);
    CHECK(ei(SUB, dtypes::uint32, {I(0), I(1)}) == 4294967295LL);
    CHECK(ei(ADD, dtypes::int64, {I(kI64Max), I(1)}) == kI64Min);
    CHECK(ei(ADD, dtypes::index, {I(kI64Max), I(1)}) == kI64Min); // index is int64
    CHECK(ei(SUB, dtypes::uint64, {I(0), I(1)}) == -1);           // 2^64-1 as its bit pattern
    CHECK(ei(MUL, dtypes::int8, {I(16), I(16)}) == 0);
    CHECK(ei(MUL, dtypes::int8, {I(-128), I(-1)}) == -128);
    CHECK(ei(MUL, dtypes::int32, {I(65536), I(65536)}) == 0);
    CHECK(ei(MUL, dtypes::uint32, {I(65536), I(65537)}) == 65536);
    CHECK(ei(NEG, dtypes::int8, {I(-128)}) == -128);
    CHECK(ei(NEG, dtypes::int64, {I(kI64Min)}) == kI64Min);
    CHECK(ei(NEG, dtypes::uint8, {I(1)}) == 255);
    CHECK(ei(ADD, dtypes::int8, {I(200), I(0)}) == -56); // operands are read as the dtype
    CHECK(ei(AND, dtypes::uint8, {I(-1), I(0x1ff)}) == 255);
    CHECK(ei(XOR, dtypes::int8, {I(0x7f), I(-1)}) == -128);
    CHECK(ei(OR, dtypes::int16, {I(0x4000), I(0x8000)}) == -16384);
    CHECK(ei(TRUNC, dtypes::int32, {I(-5)}) == -5);
  }

  TEST_CASE("division truncates, remainder has the dividend's sign") {
    CHECK(ei(IDIV, dtypes::int32, {I(7), I(2)}) == 3);
    CHECK(ei(IDIV, dtypes::int32, {I(-7), I(2)}) == -3);
    CHECK(ei(IDIV, dtypes::int32, {I(7), I(-2)}) == -3);
    CHECK(ei(IDIV, dtypes::int32, {I(-7), I(-2)}) == 3);
    CHECK(ei(MOD, dtypes::int32, {I(7), I(2)}) == 1);
    CHECK(ei(MOD, dtypes::int32, {I(-7), I(2)}) == -1);
    CHECK(ei(MOD, dtypes::int32, {I(7), I(-2)}) == 1);
    CHECK(ei(MOD, dtypes::int32, {I(-7), I(-2)}) == -1);
    CHECK(ei(IDIV, dtypes::index, {I(-1), I(4)}) == 0);
    CHECK(ei(MOD, dtypes::index, {I(-1), I(4)}) == -1);
    CHECK_FALSE(ex(IDIV, dtypes::int32, {I(5), I(0)}).has_value());
    CHECK_FALSE(ex(MOD, dtypes::int32, {I(5), I(0)}).has_value());
    CHECK_FALSE(ex(IDIV, dtypes::uint8, {I(5), I(256)}).has_value()); // 256 is 0 in uint8
    // INT_MIN / -1 wraps instead of trapping, INT_MIN % -1 is 0.
    CHECK(ei(IDIV, dtypes::int32, {I(INT32_MIN), I(-1)}) == INT32_MIN);
    CHECK(ei(IDIV, dtypes::int64, {I(kI64Min), I(-1)}) == kI64Min);
    CHECK(ei(IDIV, dtypes::int8, {I(-128), I(-1)}) == -128);
    CHECK(ei(MOD, dtypes::int64, {I(kI64Min), I(-1)}) == 0);
    // Unsigned division works on the unsigned value.
    CHECK(ei(IDIV, dtypes::uint8, {I(200), I(3)}) == 66);
    CHECK(ei(IDIV, dtypes::uint64, {I(-1), I(2)}) == kI64Max);
    CHECK(ei(MOD, dtypes::uint64, {I(-1), I(10)}) == 5); // 18446744073709551615 % 10
    CHECK(ei(MOD, dtypes::uint32, {I(-1), I(10)}) == 5); // 4294967295 % 10
  }

  TEST_CASE("comparisons follow the dtype's signedness") {
    CHECK(eb(CMPLT, dtypes::uint8, {I(200), I(100)}) == false);
    CHECK(eb(CMPLT, dtypes::int8, {I(200), I(100)}) == true); // 200 is -56 as int8
    CHECK(eb(CMPLT, dtypes::uint32, {I(4294967295LL), I(1)}) == false);
    CHECK(eb(CMPLT, dtypes::uint64, {I(-1), I(1)}) == false);
    CHECK(eb(CMPLT, dtypes::int64, {I(-1), I(1)}) == true);
    CHECK(ei(MAX, dtypes::uint64, {I(-1), I(1)}) == -1);
    CHECK(ei(MAX, dtypes::int64, {I(-1), I(1)}) == 1);
    CHECK(ei(MAX, dtypes::uint8, {I(255), I(3)}) == 255);
    CHECK(eb(CMPNE, dtypes::int32, {I(3), I(4)}) == true);
    CHECK(eb(CMPEQ, dtypes::int32, {I(3), I(3)}) == true);
    CHECK(eb(CMPEQ, dtypes::uint8, {I(-1), I(255)}) == true);
  }

  TEST_CASE("shifts") {
    CHECK(ei(SHL, dtypes::int32, {I(1), I(31)}) == INT32_MIN);
    CHECK(ei(SHL, dtypes::int64, {I(1), I(63)}) == kI64Min);
    CHECK(ei(SHL, dtypes::uint8, {I(0xff), I(4)}) == 0xf0);
    CHECK_FALSE(ex(SHL, dtypes::int32, {I(1), I(32)}).has_value());
    CHECK_FALSE(ex(SHL, dtypes::int32, {I(1), I(-1)}).has_value());
    CHECK_FALSE(ex(SHL, dtypes::uint8, {I(1), I(8)}).has_value());
    CHECK_FALSE(ex(SHR, dtypes::int64, {I(1), I(64)}).has_value());
    CHECK(ei(SHR, dtypes::int32, {I(-8), I(1)}) == -4); // arithmetic for signed
    CHECK(ei(SHR, dtypes::int8, {I(-1), I(7)}) == -1);
    CHECK(ei(SHR, dtypes::uint8, {I(0x80), I(7)}) == 1); // logical for unsigned
    CHECK(ei(SHR, dtypes::uint32, {I(0x80000000LL), I(31)}) == 1);
    CHECK(ei(SHR, dtypes::uint64, {I(-1), I(63)}) == 1);
  }

  TEST_CASE("bool ops are logic") {
    CHECK(eb(ADD, dtypes::bool_, {B(true), B(true)}) == true);
    CHECK(eb(ADD, dtypes::bool_, {B(false), B(false)}) == false);
    CHECK(eb(MUL, dtypes::bool_, {B(true), B(false)}) == false);
    CHECK(eb(SUB, dtypes::bool_, {B(true), B(true)}) == false);
    CHECK(eb(MAX, dtypes::bool_, {B(false), B(true)}) == true);
    CHECK(eb(NEG, dtypes::bool_, {B(true)}) == false);
    CHECK(eb(AND, dtypes::bool_, {B(true), B(true)}) == true);
    CHECK(eb(OR, dtypes::bool_, {B(false), B(true)}) == true);
    CHECK(eb(XOR, dtypes::bool_, {B(true), B(true)}) == false);
    CHECK(eb(CMPLT, dtypes::bool_, {B(false), B(true)}) == true);
    CHECK(eb(CMPLT, dtypes::bool_, {B(true), B(true)}) == false);
    CHECK_FALSE(ex(IDIV, dtypes::bool_, {B(true), B(false)}).has_value());
  }

  TEST_CASE("floats are rounded to their dtype") {
    CHECK(ef(ADD, dtypes::float32, {F(0.1), F(0.2)}) == static_cast<double>(0.1f + 0.2f));
    CHECK(ef(ADD, dtypes::float32, {F(0.1), F(0.2)}) != 0.1 + 0.2);
    CHECK(ef(ADD, dtypes::float64, {F(0.1), F(0.2)}) == 0.1 + 0.2);
    CHECK(ef(ADD, dtypes::float32, {F(16777216.0), F(1.0)}) == 16777216.0);
    CHECK(ef(MUL, dtypes::float32, {F(1e38), F(10.0)}) == kInf);
    CHECK(ef(FDIV, dtypes::float16, {F(1.0), F(3.0)}) == 0.333251953125);
    CHECK(ef(ADD, dtypes::float16, {F(2048.0), F(1.0)}) == 2048.0); // tie to even
    CHECK(ef(MUL, dtypes::float16, {F(65504.0), F(2.0)}) == kInf);
    CHECK(ef(ADD, dtypes::bfloat16, {F(1.0), F(1.0 / 256)}) == 1.0);
    CHECK(ef(ADD, dtypes::bfloat16, {F(1.0), F(1.0 / 128)}) == 1.0078125);
    CHECK(ef(MUL, dtypes::fp8e4m3, {F(300.0), F(2.0)}) == 448.0); // e4m3 saturates
    CHECK(ef(MUL, dtypes::fp8e5m2, {F(57344.0), F(2.0)}) == kInf);
    CHECK(ef(TRUNC, dtypes::float32, {F(-2.7)}) == -2.0);
    CHECK(ef(POW, dtypes::float32, {F(2.0), F(10.0)}) == 1024.0);
    CHECK(ef(EXP2, dtypes::float64, {F(-1100.0)}) == 0.0);
    CHECK(ef(MAX, dtypes::float32, {F(-1.0), F(2.0)}) == 2.0);
    CHECK(ef(NEG, dtypes::float32, {F(1.5)}) == -1.5);
    CHECK(ef(MOD, dtypes::float32, {F(-7.5), F(2.0)}) == -1.5); // fmod
  }

  TEST_CASE("IEEE specials") {
    CHECK(ef(RECIPROCAL, dtypes::float32, {F(0.0)}) == kInf);
    CHECK(ef(RECIPROCAL, dtypes::float32, {F(-0.0)}) == -kInf);
    CHECK(ef(LOG2, dtypes::float32, {F(0.0)}) == -kInf);
    CHECK(std::isnan(ef(LOG2, dtypes::float32, {F(-1.0)})));
    CHECK(std::isnan(ef(SQRT, dtypes::float32, {F(-1.0)})));
    CHECK(std::isnan(ef(SIN, dtypes::float32, {F(kInf)})));
    CHECK(ef(EXP2, dtypes::float32, {F(200.0)}) == kInf); // fine in double, inf in float32
    CHECK(ef(EXP2, dtypes::float64, {F(200.0)}) == std::exp2(200.0));
    CHECK(ef(EXP2, dtypes::float64, {F(2000.0)}) == kInf);
    CHECK(std::isnan(ef(FDIV, dtypes::float32, {F(0.0), F(0.0)})));
    CHECK(ef(FDIV, dtypes::float32, {F(-1.0), F(0.0)}) == -kInf);
    CHECK(std::isnan(ef(MUL, dtypes::float32, {F(kInf), F(0.0)})));
    CHECK(std::isnan(ef(ADD, dtypes::float32, {F(kInf), F(-kInf)})));
    CHECK(std::isnan(ef(POW, dtypes::float64, {F(-8.0), F(1.0 / 3.0)})));
    CHECK(ef(POW, dtypes::float64, {F(0.0), F(-1.0)}) == kInf);
    CHECK(ef(POW, dtypes::float64, {F(kNan), F(0.0)}) == 1.0);
    CHECK(std::isnan(ef(MAX, dtypes::float32, {F(kNan), F(1.0)})));
    CHECK(std::isnan(ef(MAX, dtypes::float32, {F(1.0), F(kNan)})));
    CHECK(eb(CMPNE, dtypes::float32, {F(kNan), F(kNan)}) == true);
    CHECK(eb(CMPEQ, dtypes::float32, {F(kNan), F(kNan)}) == false);
    CHECK(eb(CMPLT, dtypes::float32, {F(kNan), F(1.0)}) == false);
    CHECK(eb(CMPLT, dtypes::float32, {F(-kInf), F(kInf)}) == true);
    CHECK_FALSE(ex(IDIV, dtypes::float32, {F(1.0), F(0.0)}).has_value());
  }

  TEST_CASE("MULACC rounds after each op; WHERE selects") {
    // float32: (1+2^-12)^2 = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11 before the add.
    const double a = 1.0 + std::ldexp(1.0, -12);
    CHECK(ef(MULACC, dtypes::float32, {F(a), F(a), F(-(1.0 + std::ldexp(1.0, -11)))}) == 0.0);
    CHECK(ef(MULACC, dtypes::float64, {F(a), F(a), F(-(1.0 + std::ldexp(1.0, -11)))}) ==
          std::ldexp(1.0, -24));
    CHECK(ei(MULACC, dtypes::int8, {I(100), I(2), I(100)}) == 44);
    CHECK(ei(MULACC, dtypes::int32, {I(3), I(4), I(5)}) == 17);
    CHECK(ei(WHERE, dtypes::int32, {B(true), I(1), I(2)}) == 1);
    CHECK(ei(WHERE, dtypes::int32, {B(false), I(1), I(2)}) == 2);
    CHECK(ei(WHERE, dtypes::int8, {I(7), I(300), I(2)}) == 44); // nonzero is true; cast to int8
    CHECK(ef(WHERE, dtypes::float32, {B(false), F(1.0), F(0.1)}) == static_cast<double>(0.1f));
  }

  TEST_CASE("DOT4 adds four products of unsigned and signed bytes, wrapping") {
    // bytes of a (lowest first) 1, 2, 3, 4 times b's 1, -1, 2, -2: 1 - 2 + 6 - 8 = -3.
    CHECK(ei(DOT4, dtypes::int32, {I(10), I(0x04030201), I(0xFE02FF01)}) == 7);
    // 0xff is 255 in a and -1 in b: 4 * 255 * -1.
    CHECK(ei(DOT4, dtypes::int32, {I(0), I(-1), I(-1)}) == -1020);
    CHECK(ei(DOT4, dtypes::int32, {I(INT32_MAX), I(1), I(1)}) == INT32_MIN);
    // int32 only: other dtypes do not fold.
    CHECK(!ex(DOT4, dtypes::int64, {I(0), I(1), I(1)}));
  }

  TEST_CASE("integer powers") {
    CHECK(ei(POW, dtypes::int32, {I(2), I(10)}) == 1024);
    CHECK(ei(POW, dtypes::int8, {I(2), I(7)}) == -128);
    CHECK(ei(POW, dtypes::int32, {I(3), I(0)}) == 1);
    CHECK(ei(POW, dtypes::int32, {I(2), I(-1)}) == 0);
    CHECK(ei(POW, dtypes::int32, {I(-1), I(-3)}) == -1);
    CHECK(ei(POW, dtypes::int32, {I(1), I(-5)}) == 1);
    CHECK_FALSE(ex(POW, dtypes::int32, {I(0), I(-1)}).has_value());
  }

  TEST_CASE("what exec_alu does not fold") {
    CHECK_FALSE(ex(THREEFRY, dtypes::uint64, {I(1), I(2)}).has_value());
    CHECK_FALSE(ex(CONST, dtypes::int32, {}).has_value());
    CHECK_FALSE(ex(FDIV, dtypes::int32, {I(1), I(2)}).has_value());
    CHECK_FALSE(ex(EXP2, dtypes::int32, {I(1)}).has_value());
    CHECK_FALSE(ex(AND, dtypes::float32, {F(1.0), F(1.0)}).has_value());
    CHECK_THROWS_AS(ex(ADD, dtypes::int32, {I(1)}), Error);
  }
}
