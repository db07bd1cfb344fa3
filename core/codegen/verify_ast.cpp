// Checks that a graph is a kernel AST before any pass runs, so that a scheduler bug shows up
// as an error naming the node rather than as a wrong kernel or a renderer failure.
#include <unordered_map>

#include "tg/codegen.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {
[[noreturn]] void bad(const UOp& u, const std::string& why) {
  throw Error("codegen: malformed kernel AST at " + u.str() + ": " + why);
}
} // namespace

void verify_kernel_ast(const UOpPtr& ast) {
  if (!ast) throw Error("codegen: the kernel AST is null");
  if (ast->op != Ops::SINK) bad(*ast, "the root must be a SINK of STOREs");
  if (ast->src.empty()) bad(*ast, "a kernel must store at least one output");
  for (const auto& st : ast->src) {
    if (st->op != Ops::STORE || st->src.size() != 2)
      bad(*st, "each source of the SINK must be STORE(INDEX(PARAM, idx), value)");
    const UOpPtr& idx = st->src[0];
    if (idx->op != Ops::INDEX || idx->src.size() < 2 || idx->src[0]->op != Ops::PARAM)
      bad(*st, "a STORE must write to INDEX(PARAM, idx)");
  }
  // Each REDUCE owns its loops: lowering closes them with that REDUCE's END.
  std::unordered_map<const UOp*, const UOp*> reduced_by;
  for (const UOp* u : ast->toposort()) {
    switch (u->op) {
    case Ops::REDUCE: {
      const auto* ra = std::get_if<ReduceArg>(&u->arg);
      if (ra == nullptr) bad(*u, "a REDUCE needs a ReduceArg");
      if (ra->op != Ops::ADD && ra->op != Ops::MUL && ra->op != Ops::MAX)
        bad(*u, "a REDUCE combines with ADD, MUL or MAX");
      if (u->src.size() < 2)
        bad(*u, "a kernel-level REDUCE lists the RANGEs it reduces after its value");
      for (size_t i = 1; i < u->src.size(); ++i) {
        if (u->src[i]->op != Ops::RANGE) bad(*u, "every source after the value must be a RANGE");
        const auto* ax = std::get_if<RangeArg>(&u->src[i]->arg);
        if (ax != nullptr && ax->type == AxisType::Sequential)
          bad(*u->src[i], "a Sequential RANGE runs its iterations in order and is never reduced");
      }
      for (size_t i = 1; i < u->src.size(); ++i)
        if (!reduced_by.emplace(u->src[i].get(), u).second)
          bad(*u->src[i], "a RANGE is reduced by two REDUCEs; give each REDUCE its own RANGEs");
      break;
    }
    case Ops::RANGE:
      if (!std::holds_alternative<RangeArg>(u->arg)) bad(*u, "a RANGE needs a RangeArg");
      if (u->src.size() != 1 || !u->src[0]->dtype.is_int()) bad(*u, "a RANGE has one integer end");
      break;
    case Ops::PARAM:
      if (!u->dtype.is_ptr || !std::holds_alternative<int64_t>(u->arg))
        bad(*u, "a PARAM is a pointer with an int64 slot");
      break;
    case Ops::LOAD:
      if (u->src.empty() || u->src[0]->op != Ops::INDEX) bad(*u, "a LOAD reads through an INDEX");
      break;
    case Ops::END:
    case Ops::DEFINE_REG:
    case Ops::SPECIAL:
    case Ops::AFTER:
      bad(*u, "kernel ASTs do not hold this op; codegen adds it");
    default:
      break;
    }
  }
}

} // namespace tg
