// estimate_kernel: tinygrad's estimate_uop_stats over the linearized list.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "tg/ir/exec_alu.hpp"
#include "tg/kernel_estimates.hpp"

namespace tg {

namespace {

using Bindings = std::unordered_map<const UOp*, int64_t>;

// The value of an integer expression (a loop end, a SPECIAL size) at launch time, with the loop
// indices in `at` bound to values. Anything it cannot evaluate counts as its upper bound, so
// estimates err high rather than at zero.
int64_t eval_int(const UOp* u, const std::vector<VarArg>& names, std::span<const int64_t> vals,
                 const Bindings& at = {}) {
  if (auto it = at.find(u); it != at.end()) return it->second;
  if (u->op == Ops::CONST) return as_int(u->const_value());
  if (u->op == Ops::DEFINE_VAR) {
    const auto& var = std::get<VarArg>(u->arg);
    for (size_t i = 0; i < names.size() && i < vals.size(); ++i)
      if (names[i].name == var.name) return vals[i];
    return var.max;
  }
  if (u->op == Ops::CAST && u->dtype.is_int()) return eval_int(u->src[0].get(), names, vals, at);
  if (GroupOp::ALU.contains(u->op) && !u->src.empty()) {
    std::vector<ConstValue> operands;
    for (const auto& s : u->src) operands.emplace_back(eval_int(s.get(), names, vals, at));
    if (auto r = exec_alu(u->op, u->src.back()->dtype, operands)) return as_int(*r);
  }
  return u->ivmax();
}

// A loop's mean trip count. An end that depends on enclosing loops (a tap bounded to the image
// by reduce_bounds) is averaged over every value of those loops, up to 2^16 of them.
double trip_count(const UOp* end, const std::vector<VarArg>& names, std::span<const int64_t> vals) {
  std::vector<std::pair<const UOp*, int64_t>> loops;
  int64_t points = 1;
  for (const UOp* u : end->toposort())
    if (u->op == Ops::RANGE || u->op == Ops::SPECIAL) {
      const int64_t n = std::max<int64_t>(1, eval_int(u->src[0].get(), names, vals));
      loops.emplace_back(u, n);
      points *= n;
      if (points > (1 << 16)) return static_cast<double>(std::max<int64_t>(0, end->ivmax()));
    }
  if (loops.empty()) return static_cast<double>(std::max<int64_t>(0, eval_int(end, names, vals)));
  Bindings at;
  double total = 0;
  for (int64_t p = 0; p < points; ++p) {
    int64_t rest = p;
    for (const auto& [u, n] : loops) at[u] = rest % n, rest /= n;
    total += static_cast<double>(std::max<int64_t>(0, eval_int(end, names, vals, at)));
  }
  return total / static_cast<double>(points);
}

// Index arithmetic: the ALU nodes an address (or an IF condition) is computed from, up to the
// loads it reads. tinygrad leaves them out of the FLOPs.
void mark_indexing(const UOp* u, std::unordered_set<const UOp*>& marked) {
  if (u->op == Ops::LOAD || GroupOp::Defines.contains(u->op) || !marked.insert(u).second) return;
  for (const auto& s : u->src) mark_indexing(s.get(), marked);
}

// The global buffer a LOAD or STORE goes through, or null for registers and locals.
const UOp* global_param(const UOp* mem) {
  const UOp* p = mem->src[0].get();
  if (p->op == Ops::INDEX) p = p->src[0].get();
  return p->op == Ops::PARAM && p->dtype.addrspace == AddrSpace::Global ? p : nullptr;
}

} // namespace

KernelEstimates estimate_kernel(const LoweredKernel& kernel, std::span<const int64_t> vars) {
  std::unordered_set<const UOp*> indexing;
  for (const auto& u : kernel.uops) {
    if (u->op == Ops::INDEX)
      for (size_t i = 1; i < u->src.size(); ++i) mark_indexing(u->src[i].get(), indexing);
    if (u->op == Ops::IF) mark_indexing(u->src[0].get(), indexing);
  }

  KernelEstimates est;
  std::map<int64_t, double> lds_by_slot; // per buffer, for mem
  std::map<int64_t, const UOp*> params;
  std::vector<double> outer; // trip counts outside each open RANGE
  double mult = 1;
  for (const auto& uptr : kernel.uops) {
    const UOp* u = uptr.get();
    if (u->op == Ops::RANGE) {
      outer.push_back(mult);
      mult *= trip_count(u->src[0].get(), kernel.vars, vars);
    } else if (u->op == Ops::END) {
      if (!outer.empty()) mult = outer.back(), outer.pop_back();
    } else if (u->op == Ops::SPECIAL) {
      // gidx/lidx are never closed: they enclose the rest of the kernel.
      mult *= static_cast<double>(eval_int(u->src[0].get(), kernel.vars, vars));
    } else if (u->op == Ops::LOAD || u->op == Ops::STORE) {
      const UOp* p = global_param(u);
      if (!p) continue;
      const DType value = u->op == Ops::LOAD ? u->dtype : u->src[1]->dtype;
      const double bytes = static_cast<double>(value.itemsize()) * mult;
      est.lds += bytes;
      const int64_t slot = std::get<int64_t>(p->arg);
      lds_by_slot[slot] += bytes;
      params[slot] = p;
    } else if (GroupOp::ALU.contains(u->op) && !indexing.count(u)) {
      est.ops += mult * (u->op == Ops::MULACC ? 2 : u->op == Ops::DOT4 ? 8 : 1) * u->dtype.count;
    }
  }
  // A buffer is read whole at most once per launch in the ideal; one of unknown size counts
  // its load/store bytes.
  for (const auto& [slot, bytes] : lds_by_slot) {
    const DType pt = params[slot]->dtype;
    const double size = static_cast<double>(pt.size) * pt.base().itemsize();
    est.mem += pt.size >= 0 ? std::min(size, bytes) : bytes;
  }
  return est;
}

} // namespace tg
