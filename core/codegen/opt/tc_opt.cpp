// The TC opt (tinygrad's Scheduler._apply_tc_opt): a sum of products whose inputs and
// accumulator match a tensor core becomes, per warp, WMMAs over the tile's fragments.
//
// The REDUCE(ADD) of MUL(A, B) (maybe through a CAST to the accumulator dtype) picks its N, M
// and K ranges among the ranges only B has, only A has, and the reduce's own (each list
// highest id first, `axis` counting their product, N slowest). Ranges that do not divide by the
// tile are padded (PADTO) where tc_opt is 2. Each of the tensor core's opts then splits a bit
// off N ("?0") or M ("?1"): "u" opts as Upcast ranges, "l" opts as bits of the warp (one Local
// range of `threads` with id -1, bit i the lane's bit i); K's bits become Unroll ranges.
// The product's operands are rewritten so that each tile bit lives on the axis the swizzle
// names for that operand (A's M bit 3 on the range that is N's bit 0 in C, for CUDA's
// m16n8k16), and the REDUCE becomes
//
//   REDUCE(WMMA(A', B', 0), the reduce's other ranges)       (no REDUCE when none are left)
//
// The WMMA's arg lists, for A, B and C, the ranges a thread's fragment runs over (wmma_axes.hpp);
// expansion turns it into one WMMA per combination of the other upcast lanes.
#include <algorithm>

#include "../wmma_axes.hpp"
#include "axes.hpp"
#include "tc_names.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg {

int tc_arg(const TcArg& a) {
  return a.tc_select + 1 + 100 * a.tc_opt + 1000 * (a.use_tensor_cores - 1);
}

TcArg tc_arg_of(int amount) { return {amount % 100 - 1, (amount / 100) % 10, amount / 1000 + 1}; }

namespace opt_detail {

namespace {

[[noreturn]] void refuse(const Opt& opt, const UOpPtr& ast, const std::string& why) {
  throw OptError("codegen: cannot apply " + opt.str() + " to " + kernel_name(ast) + ": " + why);
}

UOpPtr range_with_id(const UOpPtr& ast, int64_t id) {
  for (const UOp* r : ranges_of(ast))
    if (rarg(r).id == id) return r->ptr();
  return nullptr;
}

// The sum the opt rewrites: the first REDUCE of the kernel.
const UOp* first_reduce(const UOpPtr& ast) {
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::REDUCE) return u;
  return nullptr;
}

// The product under a reduce's value: through PADTO's WHERE(valid, x, 0) (the loads in the
// padding yield 0 already) and a CAST to the accumulator dtype.
const UOp* product_of(const UOp* red) {
  const UOp* v = red->src[0].get();
  if (v->op == Ops::WHERE && v->src[2]->is_const_value(0)) v = v->src[1].get();
  if (v->op == Ops::CAST) v = v->src[0].get();
  return v->op == Ops::MUL ? v : nullptr;
}

// Ranges open in `a` and not in `b`, highest id first.
std::vector<UOpPtr> only_in(const UOp* a, const UOp* b) {
  const auto ra = open_ranges(a), rb = open_ranges(b);
  std::vector<UOpPtr> out;
  for (const UOp* r : ra)
    if (std::find(rb.begin(), rb.end(), r) == rb.end()) out.push_back(r->ptr());
  std::sort(out.begin(), out.end(),
            [](const UOpPtr& x, const UOpPtr& y) { return rarg(x.get()).id > rarg(y.get()).id; });
  return out;
}

} // namespace

TcApplied apply_tc(const UOpPtr& ast, int axis, const TcArg& arg, const RendererCaps& caps) {
  const Opt opt{OptOp::TC, axis, tc_arg(arg)};
  auto fail = [&](const std::string& why) { refuse(opt, ast, why); };
  if (arg.tc_select < -1 || arg.tc_select >= static_cast<int>(caps.tensor_cores.size()))
    fail("tc_select must be -1 or one of the renderer's " +
         std::to_string(caps.tensor_cores.size()) + " tensor cores");
  if (arg.tc_opt < 0 || arg.tc_opt > 2) fail("tc_opt must be 0, 1 or 2");
  if (arg.use_tensor_cores < 1 || arg.use_tensor_cores > 2) fail("use_tensor_cores must be 1 or 2");
  for (const UOp* r : ranges_of(ast)) {
    const AxisType t = rarg(r).type;
    if (t != AxisType::Global && t != AxisType::Loop && t != AxisType::Reduce)
      fail("the tensor core opt must come first (the kernel has " + std::string(axis_type_name(t)) +
           " axes)");
  }
  const UOp* red = first_reduce(ast);
  if (red == nullptr) refuse(opt, ast, "no reduce for a tensor core");
  if (std::get<ReduceArg>(red->arg).op != Ops::ADD) fail("the reduce is not a sum");
  const UOp* mul = product_of(red);
  if (mul == nullptr) refuse(opt, ast, "the reduce does not sum a product (MUL)");
  const UOp* in0 = mul->src[0].get();
  const UOp* in1 = mul->src[1].get();

  std::vector<TensorCore> candidates = caps.tensor_cores;
  if (arg.tc_select >= 0) candidates = {caps.tensor_cores[static_cast<size_t>(arg.tc_select)]};
  for (const TensorCore& tc : candidates) {
    if (std::string why = tc.check(); !why.empty())
      throw Error("codegen: the renderer describes a tensor core it cannot have: " + why);
    if (tc.dtype_in != in0->dtype || tc.dtype_in != in1->dtype || tc.dtype_out != red->dtype)
      continue;
    if (tc.threads > 1 && !caps.has_local) continue; // the warp is a work group's threads
    const auto n_ranges = only_in(in1, in0), m_ranges = only_in(in0, in1);
    std::vector<UOpPtr> k_ranges;
    for (size_t i = 1; i < red->src.size(); ++i)
      if (red->src[i]->op == Ops::RANGE) k_ranges.push_back(red->src[i]);
    std::sort(k_ranges.begin(), k_ranges.end(),
              [](const UOpPtr& x, const UOpPtr& y) { return rarg(x.get()).id > rarg(y.get()).id; });
    const size_t choices = n_ranges.size() * m_ranges.size() * k_ranges.size();
    if (axis < 0 || static_cast<size_t>(axis) >= choices) continue;
    const auto a = static_cast<size_t>(axis);
    std::array<UOpPtr, 3> axes{n_ranges[a / (m_ranges.size() * k_ranges.size())],
                               m_ranges[a / k_ranges.size() % m_ranges.size()],
                               k_ranges[a % k_ranges.size()]};
    for (int i = 0; i < 2; ++i)
      if (is_reduce_axis(rarg(axes[static_cast<size_t>(i)].get()).type))
        fail("the tensor core's N and M axes cannot be reduce axes");

    // Pad the axes to the tile (tc_opt 2); a padding that does not apply skips this core.
    UOpPtr k = ast;
    bool fits = true;
    for (size_t i = 0; i < 3 && fits; ++i) {
      const int64_t size = const_size(axes[i].get());
      if (size < 0) {
        fits = false;
      } else if (size % tc.dims[i] != 0) {
        if (arg.tc_opt < 2) {
          fits = false;
          break;
        }
        const auto pad_axes = opt_axes(k, OptOp::PADTO);
        const auto pos = std::find(pad_axes.begin(), pad_axes.end(), axes[i]) - pad_axes.begin();
        try {
          k = apply_opt(k, {OptOp::PADTO, static_cast<int>(pos), static_cast<int>(tc.dims[i])},
                        caps);
        } catch (const OptError&) {
          fits = false;
        }
        if (fits) axes[i] = range_with_id(k, rarg(axes[i].get()).id);
      }
    }
    if (!fits) continue;

    // Split the tile's bits off N, M and K: ne[i] is the axis of base name i. The lane bits
    // are Local ranges here and become the warp's bits last.
    const opt_detail::TcNames names = tc_names(tc);
    std::vector<UOpPtr> ne;
    auto split = [&](size_t d, AxisType type) {
      const int64_t new_id = next_range_id(k);
      const int64_t old_id = rarg(axes[d].get()).id;
      k = shift_to(k, axes[d], 2, type, false);
      ne.push_back(range_with_id(k, new_id));
      axes[d] = range_with_id(k, old_id); // null when the tile took the whole axis
    };
    for (const std::string& o : tc.opts)
      split(static_cast<size_t>(o[1] - '0'), o[0] == 'l' ? AxisType::Local : AxisType::Upcast);
    for (int64_t i = 0; i < tc.reduce_axes(); ++i) split(2, AxisType::Unroll);

    if (arg.use_tensor_cores == 1) {
      const UOp* r = first_reduce(k);
      const UOp* p = product_of(r);
      std::array<UOpPtr, 2> operands;
      for (size_t op = 0; op < 2; ++op) {
        std::unordered_map<const UOp*, UOpPtr> moves;
        for (size_t i = 0; i < names.base.size(); ++i) {
          const UOpPtr& to =
              ne[static_cast<size_t>(names.index(names.carrier[op].at(names.base[i])))];
          if (to != ne[i]) moves[ne[i].get()] = to;
        }
        operands[op] = substitute(p->src[op], moves);
      }
      codegen_detail::WmmaAxes wa;
      wa.dims = tc.dims;
      wa.threads = tc.threads;
      for (size_t op = 0; op < 3; ++op)
        for (const std::string& f : names.fragment[op])
          wa.fragment[op].push_back(rarg(ne[static_cast<size_t>(names.index(f))].get()).id);
      const UOpPtr wmma = UOp::make(Ops::WMMA, tc.dtype_out,
                                    {operands[0], operands[1], UOp::const_(tc.dtype_out, 0.0)},
                                    codegen_detail::wmma_arg(wa));
      std::vector<UOpPtr> rest{wmma};
      for (size_t i = 1; i < r->src.size(); ++i)
        if (std::find(ne.begin(), ne.end(), r->src[i]) == ne.end()) rest.push_back(r->src[i]);
      const UOpPtr repl =
          rest.size() == 1 ? wmma : UOp::make(Ops::REDUCE, r->dtype, std::move(rest), r->arg);
      k = substitute(k, {{r, repl}});
    }

    // The lane bits: bit i of the warp, l0 the lowest.
    if (tc.threads > 1) {
      const UOpPtr warp = UOp::range(UOp::const_(dtypes::index, tc.threads), -1, AxisType::Local);
      std::unordered_map<const UOp*, UOpPtr> bits;
      int64_t div = 1;
      for (size_t i = 0; i < names.base.size(); ++i)
        if (names.base[i][0] == 'l') {
          bits[ne[i].get()] = warp / div % 2;
          div *= 2;
        }
      k = substitute(k, bits);
    }
    return {k, axes};
  }
  refuse(opt, ast,
         "no tensor core of the renderer fits the kernel (dtypes " + in0->dtype.name() + " x " +
             in1->dtype.name() + " -> " + red->dtype.name() + ", axis " + std::to_string(axis) +
             (arg.tc_opt < 2 ? ", no padding at tc_opt " + std::to_string(arg.tc_opt) : "") + ")");
}

} // namespace opt_detail

} // namespace tg
