// sint: integer or symbolic sizes (tg/ir/sint.hpp): folding, simplification, bounds,
// evaluation, bindings and the errors that keep symbolic sizes from being used as numbers.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "tg/error.hpp"
#include "tg/ir/uop.hpp"

using namespace tg;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST_SUITE("ir.sint") {
  TEST_CASE("integers fold and compare as integers") {
    sint a = 6, b = 7;
    CHECK(a.is_int());
    CHECK(sint::mul(a, b) == 42);
    CHECK(sint::add(a, b) == 13);
    CHECK(sint::idiv(sint(42), b) == 6);
    CHECK(int64_t{sint::sub(a, b)} == -1);
    CHECK(sint_prod({2, 3, 4}) == 24);
    CHECK(sint(3).str() == "3");
  }
  TEST_CASE("a variable is symbolic with its bounds") {
    sint i = Variable("i", 1, 10);
    CHECK(i.is_symbolic());
    CHECK(i.str() == "i");
    CHECK(i.vmin() == 1);
    CHECK(i.vmax() == 10);
    sint n = sint::mul(sint::add(i, 1), 3);
    CHECK(n.is_symbolic());
    CHECK(n.vmin() == 6);
    CHECK(n.vmax() == 33);
    CHECK_FALSE(n == 6);
    // Interned expressions: the same expression built twice is equal.
    CHECK(sint::mul(sint::add(i, 1), 3) == n);
    CHECK(sint::mul(3, i) == sint::mul(i, 3)); // the simplifier orders the terms
    // Arithmetic that cancels folds back to an integer.
    CHECK(sint::sub(sint::add(i, 5), i) == 5);
    CHECK(sint::idiv(sint::mul(i, 4), 4) == i);
  }
  TEST_CASE("a symbolic size is not an integer") {
    sint i = Variable("i", 1, 10);
    const std::string e = error_of([&] { (void)int64_t{i}; });
    CHECK(e.find("symbolic size i") != std::string::npos);
    CHECK(e.find("does not support symbolic shapes") != std::string::npos);
  }
  TEST_CASE("bindings: bounds, evaluation, and they never change identity") {
    sint i = Variable("i", 1, 10);
    sint b = i.bind(4);
    CHECK(b == i); // bindings do not count in equality
    CHECK(b.eval() == 4);
    CHECK(sint::mul(b, 3).eval() == 12);
    CHECK(sint::mul(b, 3).bindings().size() == 1);
    CHECK(sint::mul(b, 3).unbound().bindings().empty());
    CHECK(error_of([&] { (void)i.eval(); }).find("'i' has no value") != std::string::npos);
    CHECK(error_of([&] { (void)i.bind(11); }).find("outside the bounds [1, 10]") !=
          std::string::npos);
    CHECK(error_of([&] { (void)sint::add(i, 1).bind(2); }).find("only a plain variable") !=
          std::string::npos);
    // One variable bound to two values in one expression is refused.
    CHECK(error_of([&] { (void)sint::add(i.bind(2), i.bind(3)); }).find("bound to 2 and to 3") !=
          std::string::npos);
    CHECK(error_of([] { (void)Variable("j", -1, 3); }).find("min >= 0") != std::string::npos);
  }
  TEST_CASE("shapes with bindings build the same node as without") {
    sint i = Variable("i", 1, 10);
    UOpPtr buf = UOp::make(Ops::BUFFER, dtypes::float32,
                           {UOp::make(Ops::UNIQUE, dtypes::void_, {}, int64_t{1}),
                            UOp::make(Ops::DEVICE, dtypes::void_, {}, std::string("NULL"))},
                           int64_t{30});
    UOpPtr a = UOp::make(Ops::SHRINK, dtypes::float32, {buf}, PadArg{{0, sint::mul(i.bind(2), 3)}});
    UOpPtr b = UOp::make(Ops::SHRINK, dtypes::float32, {buf}, PadArg{{0, sint::mul(i.bind(7), 3)}});
    CHECK(a == b);
    CHECK(std::get<PadArg>(a->arg)[0].second.bindings().empty());
    CHECK((*a->shape())[0] == sint::mul(i, 3));
    // Out of range for some value of i: refused.
    CHECK_THROWS_AS(UOp::make(Ops::SHRINK, dtypes::float32, {buf}, PadArg{{0, sint::mul(i, 4)}}),
                    Error);
    UOpPtr r = UOp::make(Ops::RESHAPE, dtypes::float32, {a}, Shape{3, i});
    CHECK((*r->shape())[1] == i);
    CHECK_THROWS_AS(UOp::make(Ops::RESHAPE, dtypes::float32, {a}, Shape{4, i}), Error);
  }
}
