// Applying one Opt (tinygrad's Scheduler.apply_opt): which axis it means, whether it applies to
// this kernel on this renderer (each refusal an OptError naming the Opt and why), then the
// rewrite: a split (shift_to.cpp), a padding (padto.cpp) or a swap of two axes.
#include <unordered_map>

#include "../grouped_dims.hpp"
#include "axes.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"

namespace tg {

using namespace opt_detail;

std::string_view opt_op_name(OptOp op) {
  static constexpr std::string_view names[] = {"UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP",
                                               "THREAD", "PADTO",  "SWAP",  "TC"};
  return names[static_cast<size_t>(op)];
}

std::string Opt::str() const {
  std::string arg = std::to_string(amount);
  if (op == OptOp::TC) {
    const TcArg a = tc_arg_of(amount);
    arg = "(" + std::to_string(a.tc_select) + ", " + std::to_string(a.tc_opt) + ", " +
          std::to_string(a.use_tensor_cores) + ")";
  }
  return "Opt(" + std::string(opt_op_name(op)) + ", " + std::to_string(axis) + ", " + arg + ")";
}

std::vector<UOpPtr> opt_axes(const UOpPtr& ast, bool reduce) {
  std::vector<UOpPtr> out;
  for (const UOp* r : ranges_of(ast))
    if (reduce ? is_reduce_axis(rarg(r).type) : is_output_axis(rarg(r).type) && !is_warp(r))
      out.push_back(r->ptr());
  return out;
}

std::vector<UOpPtr> opt_axes(const UOpPtr& ast, OptOp op) {
  switch (op) {
  case OptOp::UNROLL:
    return opt_axes(ast, true);
  case OptOp::GROUP:
  case OptOp::GROUPTOP: {
    std::vector<UOpPtr> out;
    for (const UOp* r : ranges_of(ast))
      if (rarg(r).type == AxisType::Reduce) out.push_back(r->ptr());
    return out;
  }
  case OptOp::PADTO: {
    std::vector<UOpPtr> out = opt_axes(ast, false);
    for (const UOpPtr& r : opt_axes(ast, true)) out.push_back(r);
    return out;
  }
  default:
    return opt_axes(ast, false);
  }
}

std::vector<const UOp*> opt_detail::open_ranges(const UOp* root) {
  std::unordered_map<const UOp*, std::vector<const UOp*>> open;
  for (const UOp* u : root->toposort()) {
    std::vector<const UOp*> s;
    for (const auto& src : u->src)
      for (const UOp* r : open.at(src.get()))
        if (std::find(s.begin(), s.end(), r) == s.end()) s.push_back(r);
    if (u->op == Ops::RANGE) s.push_back(u);
    if (u->op == Ops::REDUCE)
      std::erase_if(s, [&](const UOp* r) {
        for (size_t i = 1; i < u->src.size(); ++i)
          if (u->src[i].get() == r) return true;
        return false;
      });
    open.emplace(u, std::move(s));
  }
  return open.at(root);
}

namespace {

// The kernel's ranges of the given kinds.
std::vector<const UOp*> ranges_of_type(const UOpPtr& ast, std::initializer_list<AxisType> types) {
  std::vector<const UOp*> out;
  for (const UOp* r : ranges_of(ast))
    if (std::find(types.begin(), types.end(), rarg(r).type) != types.end()) out.push_back(r);
  return out;
}

int64_t size_product(const std::vector<const UOp*>& ranges) {
  int64_t p = 1;
  for (const UOp* r : ranges) p *= std::max<int64_t>(const_size(r), 1);
  return p;
}

// The REDUCE that lists range `r`.
const UOp* reduce_over(const UOpPtr& ast, const UOp* r) {
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::REDUCE)
      for (size_t i = 1; i < u->src.size(); ++i)
        if (u->src[i].get() == r) return u;
  return nullptr;
}

class OptChecker {
public:
  OptChecker(const UOpPtr& ast, const Opt& opt, const RendererCaps& caps)
      : ast_(ast), opt_(opt), caps_(caps) {}

  void check(bool cond, const std::string& why) const {
    if (!cond) fail(why);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw OptError("codegen: cannot apply " + opt_.str() + " to " + kernel_name(ast_) + ": " + why);
  }

  // The range `opt.axis` names, with its constant size.
  UOpPtr axis(const std::string& what) const {
    const auto axes = opt_axes(ast_, opt_.op);
    check(opt_.axis >= 0 && static_cast<size_t>(opt_.axis) < axes.size(),
          "the kernel has " + std::to_string(axes.size()) + " " + what + ", no axis " +
              std::to_string(opt_.axis));
    return axes[static_cast<size_t>(opt_.axis)];
  }
  int64_t constant_size(const UOpPtr& r) const {
    const int64_t n = const_size(r.get());
    check(n >= 0, "axis size " + r->src[0]->str() + " is not a constant");
    check(n > 0, "the axis is empty (size 0)");
    return n;
  }
  // The split amount (0: the whole axis), at least 2 and dividing the axis.
  int64_t split_amount(int64_t n) const {
    const int64_t amt = opt_.amount == 0 ? n : opt_.amount;
    check(amt >= 2, "the amount must be at least 2");
    check(n % amt == 0,
          "axis of size " + std::to_string(n) + " is not divisible by " + std::to_string(amt));
    return amt;
  }

  void needs_work_groups() const {
    check(caps_.has_local, "the renderer has no work groups (RendererCaps::has_local is false)");
  }

  // Local sizes (existing ones and `extra`) that the device can launch: each dimension within
  // local_max, the whole group within local_max[0].
  void local_sizes_fit(int64_t extra) const {
    std::vector<int64_t> dims;
    int64_t total = extra;
    for (const UOp* r : ranges_of_type(ast_, {AxisType::Local, AxisType::GroupReduce})) {
      dims.push_back(const_size(r));
      total *= const_size(r);
    }
    dims.push_back(extra);
    auto str = [](const std::vector<int64_t>& v) {
      std::string s;
      for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
      return s;
    };
    const std::vector<int64_t> max(caps_.local_max.begin(), caps_.local_max.end());
    check(total <= caps_.local_max[0],
          "a work group of " + str(dims) + " = " + std::to_string(total) +
              " work items exceeds the device's maximum of " + std::to_string(caps_.local_max[0]) +
              " (RendererCaps::local_max)");
    const auto fitted = codegen_detail::limit_dims(dims, caps_.local_max);
    check(fitted.has_value(), "local sizes " + str(dims) +
                                  " do not fit the device's local dimensions " + str(max) +
                                  " (RendererCaps::local_max)");
    // A tensor core's warp is the first local dimension on its own: its index is the lane.
    bool warp = false;
    for (const UOp* r : ranges_of(ast_)) warp |= is_warp(r);
    check(!warp || *fitted == dims, "local sizes " + str(dims) +
                                        " would merge the tensor core's warp with other local "
                                        "axes into one dimension");
  }

  // A grouped reduce keeps one partial result per work item and upcast lane of the group in
  // local memory (tinygrad's check, which counts every later Opt of such a kernel too).
  void local_memory_fits(int64_t amount) const {
    const UOp* red = nullptr;
    for (const UOp* u : ast_->toposort())
      if (u->op == Ops::REDUCE) red = u;
    if (red == nullptr) return;
    const int64_t lanes = size_product(
        ranges_of_type(ast_, {AxisType::Upcast, AxisType::Local, AxisType::GroupReduce}));
    const int64_t bytes = amount * lanes * static_cast<int64_t>(red->dtype.scalar().itemsize());
    check(bytes <= caps_.shared_max, "the grouped reduce needs " + std::to_string(bytes) +
                                         " bytes of local memory, the device has " +
                                         std::to_string(caps_.shared_max) +
                                         " (RendererCaps::shared_max)");
  }

  const UOpPtr& ast_;
  const Opt& opt_;
  const RendererCaps& caps_;
};

UOpPtr apply_split(const OptChecker& c, const UOpPtr& ast, const Opt& opt,
                   const RendererCaps& caps) {
  const bool reduce_axis =
      opt.op == OptOp::UNROLL || opt.op == OptOp::GROUP || opt.op == OptOp::GROUPTOP;
  const UOpPtr r = c.axis(opt.op == OptOp::UNROLL ? "reduce axes"
                          : reduce_axis           ? "Reduce axes"
                                                  : "output axes");
  const int64_t n = c.constant_size(r);
  const int64_t amt = c.split_amount(n);
  const bool grouped = !ranges_of_type(ast, {AxisType::GroupReduce}).empty();
  switch (opt.op) {
  case OptOp::UPCAST:
  case OptOp::UNROLL:
    c.check(amt <= 256, "an amount above 256 would make vectors too wide");
    if (grouped) c.local_memory_fits(amt);
    return shift_to(ast, r, amt, opt.op == OptOp::UPCAST ? AxisType::Upcast : AxisType::Unroll,
                    false);
  case OptOp::LOCAL:
    c.needs_work_groups();
    c.check(rarg(r.get()).type == AxisType::Global,
            std::string("LOCAL splits a Global axis, not a ") +
                std::string(axis_type_name(rarg(r.get()).type)) + " one");
    c.local_sizes_fit(amt);
    if (grouped) c.local_memory_fits(amt);
    return shift_to(ast, r, amt, AxisType::Local, false);
  case OptOp::GROUP:
  case OptOp::GROUPTOP: {
    c.needs_work_groups();
    c.check(caps.has_shared,
            "the renderer has no local memory (RendererCaps::has_shared is false)");
    for (const UOp* u : ranges_of(ast)) c.check(!is_warp(u), "no grouping with tensor cores");
    const UOp* red = reduce_over(ast, r.get());
    c.check(red != nullptr, "no REDUCE lists the axis");
    // tinygrad's rule: the reduce must not run inside another reduce's loop, nor inside an
    // output loop: each iteration would need its own barriers.
    for (const UOp* u : open_ranges(red)) {
      const AxisType t = rarg(u).type;
      c.check(!is_reduce_axis(t) && t != AxisType::Unroll,
              "cannot group a reduce inside another reduce");
      c.check(t != AxisType::Loop && t != AxisType::Sequential,
              "cannot group a reduce inside a loop (a Loop or Sequential axis)");
      c.check(t != AxisType::Global || const_size(u) >= 0,
              "cannot group a reduce inside a loop of symbolic size " + u->src[0]->str());
    }
    c.local_sizes_fit(amt);
    c.local_memory_fits(amt);
    return shift_to(ast, r, amt, AxisType::GroupReduce, opt.op == OptOp::GROUPTOP);
  }
  default:
    c.fail("not a split");
  }
}

UOpPtr apply_padto(const OptChecker& c, const UOpPtr& ast, const Opt& opt) {
  const UOpPtr r = c.axis("output and reduce axes");
  const int64_t n = c.constant_size(r);
  c.check(opt.amount >= 2, "the multiple to pad to must be at least 2");
  const int64_t size = (n + opt.amount - 1) / opt.amount * opt.amount;
  c.check(size != n, "axis of size " + std::to_string(n) + " is a multiple of " +
                         std::to_string(opt.amount) + " already");
  c.check(n > size / 4, "padding " + std::to_string(n) + " to " + std::to_string(size) +
                            " more than quadruples the work");
  // Loads in the padding yield 0: a division by a value computed from them could trap.
  for (const UOp* u : ast->toposort())
    if ((u->op == Ops::IDIV || u->op == Ops::MOD) && !u->src[1]->is_const() &&
        u->src[1]->backward_slice().count(r.get()))
      c.fail("a division by a value along the axis could divide by zero in the padding");
  return pad_to(ast, r, size);
}

UOpPtr apply_swap(const OptChecker& c, const UOpPtr& ast, const Opt& opt) {
  const UOpPtr a = c.axis("output axes");
  const auto axes = opt_axes(ast, false);
  c.check(opt.amount >= 0 && static_cast<size_t>(opt.amount) < axes.size(),
          "the kernel has " + std::to_string(axes.size()) + " output axes, no axis " +
              std::to_string(opt.amount) + " to swap with");
  const UOpPtr& b = axes[static_cast<size_t>(opt.amount)];
  c.check(a != b, "an axis cannot swap with itself");
  c.check(rarg(a.get()).type == AxisType::Global && rarg(b.get()).type == AxisType::Global,
          "SWAP exchanges two Global axes");
  // The ranges trade ids: which one is outer, and which launch dimension each gets.
  auto with_id = [](const UOpPtr& r, int64_t id) {
    return UOp::range(r->src[0], id, rarg(r.get()).type);
  };
  return substitute(
      ast, {{a.get(), with_id(a, rarg(b.get()).id)}, {b.get(), with_id(b, rarg(a.get()).id)}});
}

} // namespace

UOpPtr apply_opt(const UOpPtr& ast, const Opt& opt, const RendererCaps& caps) {
  const OptChecker c(ast, opt, caps);
  switch (opt.op) {
  case OptOp::UPCAST:
  case OptOp::UNROLL:
  case OptOp::LOCAL:
  case OptOp::GROUP:
  case OptOp::GROUPTOP:
    return apply_split(c, ast, opt, caps);
  case OptOp::PADTO:
    return apply_padto(c, ast, opt);
  case OptOp::SWAP:
    return apply_swap(c, ast, opt);
  case OptOp::THREAD:
    c.fail("THREAD is not implemented: no renderer launches CPU threads per kernel axis");
  case OptOp::TC:
    return apply_tc(ast, opt.axis, tc_arg_of(opt.amount), caps).ast;
  }
  c.fail("unknown Opt");
}

UOpPtr optimize_kernel(const UOpPtr& ast, const std::vector<Opt>& opts, const RendererCaps& caps) {
  if (opts.empty()) return ast;
  UOpPtr k = ast;
  for (const Opt& o : opts) k = apply_opt(k, o, caps);
  return graph_rewrite(k, symbolic(), "simplify");
}

} // namespace tg
