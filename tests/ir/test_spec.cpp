#include <doctest/doctest.h>

#include "tg/error.hpp"
#include "tg/ir/spec.hpp"

using namespace tg;

namespace {
struct SpecOn {
  SpecOn() { set_spec_checking(true); }
  ~SpecOn() { set_spec_checking(false); }
};
UOpPtr i32(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOpPtr f32(double v) { return UOp::const_(dtypes::float32, v); }
} // namespace

TEST_SUITE("ir.spec") {
  TEST_CASE("well-formed nodes pass") {
    SpecOn on;
    UOpPtr a = UOp::variable("a", 0, 10, dtypes::int32);
    UOpPtr e = (a * 4 + 3) % 5;
    CHECK_NOTHROW(verify_graph(e->lt(i32(3))->where(f32(1), f32(2))));
    CHECK_NOTHROW(UOp::make(Ops::VECTORIZE, dtypes::int32.vec(2), {a, a}));
    CHECK_NOTHROW(UOp::make(Ops::SINK, dtypes::void_, {a}));
  }

  TEST_CASE("a wrong source count raises SpecError naming the node") {
    SpecOn on;
    CHECK_THROWS_WITH_AS(
        UOp::make(Ops::ADD, dtypes::int32, {i32(1)}),
        doctest::Contains("UOp(Ops.ADD, int32, src=(CONST)) is malformed: takes 2 sources, got 1"),
        SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::WHERE, dtypes::int32, {i32(1), i32(2)}),
                         doctest::Contains("takes 3 sources"), SpecError);
  }

  TEST_CASE("wrong dtypes raise SpecError naming the node and the dtypes") {
    SpecOn on;
    CHECK_THROWS_WITH_AS(UOp::make(Ops::ADD, dtypes::int32, {i32(1), f32(2)}),
                         doctest::Contains("has dtype float32 but the result is int32"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::CMPLT, dtypes::int32, {i32(1), i32(2)}),
                         doctest::Contains("a comparison produces bool"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::EXP2, dtypes::int32, {i32(1)}),
                         doctest::Contains("EXP2 needs a float dtype"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::IDIV, dtypes::float32, {f32(1), f32(2)}),
                         doctest::Contains("IDIV needs an integer dtype"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::WHERE, dtypes::int32, {i32(1), i32(2), i32(3)}),
                         doctest::Contains("the condition must be bool"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::BITCAST, dtypes::int64, {f32(1)}),
                         doctest::Contains("cannot bitcast float32 to int64"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::CONST, dtypes::int32, {}, 1.5),
                         doctest::Contains("is not a value of dtype int32"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::SINK, dtypes::int32, {}),
                         doctest::Contains("dtype must be void"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::VECTORIZE, dtypes::int32.vec(4), {i32(1), i32(1)}),
                         doctest::Contains("has width 4 but 2 sources"), SpecError);
    CHECK_THROWS_WITH_AS(
        UOp::make(Ops::RANGE, dtypes::index, {i32(4)}, RangeArg{0, AxisType::Loop}),
        doctest::Contains("has dtype int32, not index"), SpecError);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::REDUCE, dtypes::int32, {i32(1)}, ReduceArg{Ops::SUB, {}}),
                         doctest::Contains("reduce op must be ADD, MUL or MAX"), SpecError);
  }

  TEST_CASE("BIND checks the value against the variable's bounds") {
    SpecOn on;
    UOpPtr v = UOp::variable("n", 1, 8);
    CHECK_NOTHROW(UOp::make(Ops::BIND, dtypes::index, {v, UOp::const_(dtypes::index, int64_t{4})}));
    CHECK_THROWS_WITH_AS(
        UOp::make(Ops::BIND, dtypes::index, {v, UOp::const_(dtypes::index, int64_t{9})}),
        doctest::Contains("value 9 outside [1, 8] of variable 'n'"), SpecError);
  }

  TEST_CASE("without SPEC the node is built, and verify_graph still finds it") {
    set_spec_checking(false);
    UOpPtr bad = UOp::make(Ops::ADD, dtypes::int32, {i32(1), f32(2)});
    UOpPtr root = UOp::sink({bad});
    CHECK_THROWS_WITH_AS(verify_graph(root), doctest::Contains("UOp(Ops.ADD, int32"), SpecError);
  }
}
