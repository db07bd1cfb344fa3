#include <doctest/doctest.h>

#include "tg/ir/print.hpp"

using namespace tg;

TEST_SUITE("ir.print") {
  TEST_CASE("expression form of index arithmetic") {
    UOpPtr x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 3);
    CHECK(render_expr((x * 4 + y) / 4) == "(((x*4)+y)//4)");
    CHECK(render_expr(x % 3) == "(x%3)");
    CHECK(render_expr(x->maximum(y)) == "max(x, y)");
    CHECK(render_expr(x->lt(y)->where(x, y)) == "((x<y)?x:y)");
    CHECK(render_expr(-x) == "(-x)");
    UOpPtr r = UOp::range(UOp::const_(dtypes::index, 16), 3);
    CHECK(render_expr(r + 1) == "(r3+1)");
  }

  TEST_CASE("one node per line, sources numbered before users") {
    UOpPtr x = UOp::variable("x", 0, 10);
    std::string g = print_graph(x * 4 + 1);
    CHECK(g.find("   0 DEFINE_VAR   index") != std::string::npos);
    CHECK(g.find("('x', 0, 10)") != std::string::npos);
    CHECK(g.find("MUL          index") != std::string::npos);
    CHECK(g.find("(0, 1)") != std::string::npos);
    CHECK(std::count(g.begin(), g.end(), '\n') == 5);
  }

  TEST_CASE("node str names op, dtype, arg and sources") {
    UOpPtr x = UOp::variable("x", 0, 10);
    CHECK((x + 1)->str() == "UOp(Ops.ADD, index, src=(DEFINE_VAR, CONST))");
    CHECK(UOp::const_(dtypes::int32, int64_t{7})->str() == "UOp(Ops.CONST, int32, arg=7)");
  }
}

TEST_SUITE("ir.ops") {
  TEST_CASE("every op has a name and the groups are consistent") {
    for (int i = 0; i < kNumOps; ++i) CHECK(op_name(static_cast<Ops>(i)) != "?");
    CHECK(op_name(Ops::MULACC) == "MULACC");
    CHECK(op_name(Ops::CUSTOM) == "CUSTOM");
    for (int i = 0; i < kNumOps; ++i) {
      Ops op = static_cast<Ops>(i);
      int groups = GroupOp::Unary.contains(op) + GroupOp::Binary.contains(op) +
                   GroupOp::Ternary.contains(op);
      CHECK(groups == static_cast<int>(GroupOp::ALU.contains(op)));
      if (GroupOp::Commutative.contains(op)) CHECK(GroupOp::Binary.contains(op));
      if (GroupOp::Comparison.contains(op)) CHECK(GroupOp::Binary.contains(op));
    }
    CHECK((GroupOp::ALU - GroupOp::Binary - GroupOp::Ternary) == GroupOp::Unary);
  }
}
