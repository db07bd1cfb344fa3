// Closes the loops still open at the SINK (output loops that did not become SPECIALs): each
// such RANGE gets an END whose body is everything of the SINK that depends on it. The ranges
// nest in id order (the scheduler numbers axes from the outside in), so
// SINK(STORE over r0, r1) becomes SINK(END(r0, END(r1, STORE))).
#include <algorithm>

#include "live_ranges.hpp"
#include "tg/codegen.hpp"

namespace tg {

UOpPtr add_ends(const UOpPtr& ast) {
  using codegen_detail::range_contains;
  const auto live = codegen_detail::live_ranges(ast);
  codegen_detail::RangeSet open;
  for (const auto& s : ast->src) open = codegen_detail::range_union(open, live.at(s.get()));
  if (open.empty()) return ast;
  std::sort(open.begin(), open.end(), [](const UOp* a, const UOp* b) {
    return std::get<RangeArg>(a->arg).id < std::get<RangeArg>(b->arg).id;
  });
  std::vector<UOpPtr> rest(ast->src.begin(), ast->src.end());
  UOpPtr inner;
  for (auto it = open.rbegin(); it != open.rend(); ++it) {
    std::vector<UOpPtr> body{(*it)->ptr()};
    if (inner) body.push_back(inner);
    std::erase_if(rest, [&](const UOpPtr& s) {
      if (!range_contains(live.at(s.get()), *it)) return false;
      body.push_back(s);
      return true;
    });
    inner = UOp::make(Ops::END, dtypes::void_, std::move(body));
  }
  rest.push_back(inner);
  return UOp::sink(std::move(rest));
}

} // namespace tg
