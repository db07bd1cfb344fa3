// The hand-coded heuristic (tinygrad's heuristic.py): which Opts a kernel gets when none are
// given, read from the strides of its index expressions instead of ShapeTrackers. With work
// groups (a GPU) it first tries a matrix-vector layout and grouped reduces, and ends with local
// sizes; without them (the CPU) it upcasts wider instead.
#include <algorithm>
#include <optional>
#include <unordered_set>

#include "axes.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"
#include "tg/knobs.hpp"

namespace tg {

using namespace opt_detail;

namespace {

// The coefficient of range `r` in a linear index expression: 0 when `idx` does not use it,
// nullopt when it is not linear in it.
std::optional<int64_t> coeff(const UOp* idx, const UOp* r) {
  if (idx == r) return 1;
  if (!idx->backward_slice().count(r)) return 0;
  if (idx->op == Ops::ADD) {
    auto a = coeff(idx->src[0].get(), r), b = coeff(idx->src[1].get(), r);
    if (a && b) return *a + *b;
    return std::nullopt;
  }
  if (idx->op == Ops::MUL) {
    for (int s = 0; s < 2; ++s)
      if (idx->src[s]->is_const()) {
        auto o = coeff(idx->src[1 - s].get(), r);
        if (o) return *o * idx->src[s]->ivmin();
      }
  }
  return std::nullopt;
}

// The n of a CPU matmul's register tile for a @ b: two vector registers of a row of b. Also
// the width of the column panels Tensor::matmul packs b into (matmul_panel_width).
int64_t tile_n(const RendererCaps& caps) { return 2 * std::max<int64_t>(caps.vector_lanes, 4); }

// The coefficient of range `r` in `idx` while r moves within one aligned tile of `w` values:
// as coeff, except that x % c and x // c, for c a multiple of w and x with coefficient 1 in r,
// read as x and as 0: the tile's values are consecutive in x % c and share x // c. That is how
// a matrix stored in column panels is read (a @ b with b packed as [n / w][k][w]: element
// (k, n) at (n // w) * k_size * w + k * w + n % w). It assumes x's other terms keep the tile
// aligned; the heuristic only reads it to pick Opts, which are correct either way.
std::optional<int64_t> coeff_in_tile(const UOp* idx, const UOp* r, int64_t w) {
  if (idx == r) return 1;
  if (!idx->backward_slice().count(r)) return 0;
  switch (idx->op) {
  case Ops::ADD: {
    auto a = coeff_in_tile(idx->src[0].get(), r, w), b = coeff_in_tile(idx->src[1].get(), r, w);
    if (a && b) return *a + *b;
    return std::nullopt;
  }
  case Ops::MUL:
    for (int s = 0; s < 2; ++s)
      if (idx->src[s]->is_const()) {
        auto o = coeff_in_tile(idx->src[1 - s].get(), r, w);
        if (o) return *o * idx->src[s]->ivmin();
      }
    return std::nullopt;
  case Ops::MOD:
  case Ops::IDIV: {
    const UOp* c = idx->src[1].get();
    if (!c->is_const() || c->ivmin() <= 0 || c->ivmin() % w != 0 ||
        coeff_in_tile(idx->src[0].get(), r, w) != 1)
      return std::nullopt;
    return idx->op == Ops::MOD ? 1 : 0;
  }
  default:
    return std::nullopt;
  }
}

// The addresses (index expressions, gates included) of every buffer access of the kernel.
std::vector<const UOp*> accesses(const UOpPtr& ast) {
  std::vector<const UOp*> out;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::INDEX && u->src.size() >= 2 && u->src[0]->op == Ops::PARAM) out.push_back(u);
  return out;
}

// The stride of `r` in an access: 0 when the address does not depend on it, its coefficient
// when linear, a large number otherwise.
int64_t stride(const UOp* index, const UOp* r) {
  const UOp* idx = index->src[1].get();
  if (!index->backward_slice().count(r)) return 0;
  auto c = coeff(idx, r);
  return c && *c != 0 ? std::abs(*c) : int64_t{1} << 40;
}

// The output axes' sizes multiplied (nullopt when one is symbolic).
std::optional<int64_t> output_size(const UOpPtr& k) {
  int64_t n = 1;
  for (const auto& r : opt_axes(k, false)) {
    const int64_t s = const_size(r.get());
    if (s < 0) return std::nullopt;
    n *= s;
  }
  return n;
}

// A CPU column reduce's axis: the first output axis, a whole number of vectors long, that some
// load reads contiguously while striding along every reduce axis (per-channel sums of a
// channels-last activation), or -1. With `strided_store`, only an axis the output is not
// stored contiguously along (a pool over a channels-last input into a channels-first output).
int column_reduce_axis(const UOpPtr& k, const RendererCaps& caps, bool strided_store) {
  const auto red = opt_axes(k, true);
  if (red.empty()) return -1;
  std::unordered_set<const UOp*> stored_at;
  for (const UOp* u : k->toposort())
    if (u->op == Ops::STORE) stored_at.insert(u->src[0].get());
  const auto out_axes = opt_axes(k, false);
  for (size_t a = 0; a < out_axes.size(); ++a) {
    const UOp* r = out_axes[a].get();
    const int64_t s = const_size(r), w = std::max<int64_t>(caps.vector_lanes, 4);
    if (rarg(r).type != AxisType::Global || s <= 0 || s % w != 0) continue;
    bool column = false, store_along = false;
    for (const UOp* b : accesses(k)) {
      if (stored_at.count(b)) {
        store_along |= stride(b, r) == 1;
        continue;
      }
      if (stride(b, r) != 1) continue;
      bool strided = true;
      for (const auto& rr : red) strided &= stride(b, rr.get()) > 1;
      column |= strided;
    }
    if (column && !(strided_store && store_along)) return static_cast<int>(a);
  }
  return -1;
}

// The position of the range with id `id` among the output axes (-1: gone).
int axis_of_id(const UOpPtr& k, int64_t id) {
  const auto axes = opt_axes(k, false);
  for (size_t a = 0; a < axes.size(); ++a)
    if (rarg(axes[a].get()).id == id) return static_cast<int>(a);
  return -1;
}

// tinygrad's matvec rule: a sum of x[k] * W[j, k] (x contiguous along the first reduce axis,
// every axis of x also one of W's) gets GROUP MV_THREADS_PER_ROW (8) on k, LOCAL MV_BLOCKSIZE
// (4) and UPCAST MV_ROWS_PER_THREAD (4) on a row axis; a factor of 1 is no opt.
template <class TryApply>
bool matvec(const UOpPtr& k, const RendererCaps& caps, const TryApply& try_apply) {
  if (!caps.has_shared) return false;
  const UOp* red = nullptr;
  for (const UOp* u : k->toposort())
    if (u->op == Ops::REDUCE) red = u;
  if (red == nullptr || std::get<ReduceArg>(red->arg).op != Ops::ADD) return false;
  const UOp* mul = red->src[0].get();
  if (mul->op != Ops::MUL || mul->src[0]->op != Ops::LOAD || mul->src[1]->op != Ops::LOAD)
    return false;
  const auto reduces = opt_axes(k, OptOp::GROUP);
  if (reduces.empty()) return false;
  const UOp* first = reduces.front().get();
  for (int s = 0; s < 2; ++s) {
    const UOp* vec = mul->src[s]->src[0].get();
    const UOp* mat = mul->src[1 - s]->src[0].get();
    if (vec->op != Ops::INDEX || mat->op != Ops::INDEX) continue;
    if (coeff(vec->src[1].get(), first) != 1) continue;
    bool inside = true;
    for (const UOp* u : vec->backward_slice())
      if (u->op == Ops::RANGE) inside &= mat->backward_slice().count(u) != 0;
    if (!inside) continue;
    const auto out = opt_axes(k, false);
    const int threads = static_cast<int>(knobs::MV_THREADS_PER_ROW.get()),
              block = static_cast<int>(knobs::MV_BLOCKSIZE.get()),
              rows = static_cast<int>(knobs::MV_ROWS_PER_THREAD.get());
    for (size_t a = 0; a < out.size(); ++a) {
      if (rarg(out[a].get()).type != AxisType::Global) continue;
      if (const_size(first) % threads != 0 || const_size(out[a].get()) % (block * rows) != 0)
        continue;
      if (threads > 1 && !try_apply({OptOp::GROUP, 0, threads})) return false;
      const int axis = static_cast<int>(a);
      return (block == 1 || try_apply({OptOp::LOCAL, axis, block})) &&
             (rows == 1 || try_apply({OptOp::UPCAST, axis, rows}));
    }
  }
  return false;
}

// A matrix-vector product on a CPU: some load depends on no output axis but on the last reduce
// axis (the vector), and every other one reads the last reduce axis contiguously (the matrix
// rows), not at all (a quantized row's block scales) or, for a buffer of bytes, through a
// division or remainder of it (the bit fields of a quantized row: Q4_0's element i is a nibble
// of byte i % 16). A load that depends on no output axis and not on the last reduce axis is no
// vector (a convolution's input channel bias, added before the product): it is skipped.
// The general upcasts skip it: wide row upcasts buy nothing (the vector stays in L1) and cut
// a quantized row into short strided pieces; the reduce is unrolled wide instead, into vector
// accumulators (a matrix of loaded floats takes two rows per item, below).
bool cpu_matvec(const UOpPtr& k) {
  const auto red = opt_axes(k, true);
  const auto out = opt_axes(k, false);
  if (red.empty() || out.empty()) return false;
  const UOp* last = red.back().get();
  // One REDUCE: the unroll below reaches only the last reduce axis, so a kernel of two (a
  // gated FFN's two products) keeps its independent row accumulators instead.
  std::unordered_set<const UOp*> stored_at;
  int reduces = 0;
  for (const UOp* u : k->toposort()) {
    if (u->op == Ops::STORE) stored_at.insert(u->src[0].get());
    reduces += u->op == Ops::REDUCE;
  }
  if (reduces != 1) return false;
  bool rows = false, vector = false;
  for (const UOp* b : accesses(k)) {
    if (stored_at.count(b)) continue;
    bool per_output = false;
    for (const auto& r : out) per_output |= stride(b, r.get()) != 0;
    if (!per_output) {
      vector |= stride(b, last) != 0;
      continue;
    }
    const int64_t s = stride(b, last);
    const bool bit_fields = !coeff(b->src[1].get(), last) && b->dtype.base().itemsize() == 1;
    if (s != 1 && s != 0 && !bit_fields) return false;
    rows |= s == 1 || bit_fields;
  }
  return rows && vector;
}

// The INDEX a product's operand reads: a LOAD of a buffer, or a CAST of one.
const UOp* operand_index(const UOp* x) {
  if (x->op == Ops::CAST) x = x->src[0].get();
  // A load through a padded view, where(valid, load, 0): reduce_bounds takes the gate out of
  // the loop when it bounds a tap of a convolution, so the tile treats it as the load.
  if (x->op == Ops::WHERE && x->src[2]->is_const_value(0) && x->src[1]->op == Ops::LOAD &&
      x->src[1]->src[0]->src.size() == 3 && x->src[1]->src[0]->src[2] == x->src[0])
    x = x->src[1].get();
  if (x->op != Ops::LOAD || x->src[0]->op != Ops::INDEX || x->src[0]->src[0]->op != Ops::PARAM)
    return nullptr;
  return x->src[0].get();
}

// The buffer accesses (INDEX of a PARAM) a value reads.
std::vector<const UOp*> reads_of(const UOp* x) {
  std::vector<const UOp*> out;
  for (const UOp* u : x->toposort())
    if (u->op == Ops::INDEX && u->src.size() >= 2 && u->src[0]->op == Ops::PARAM) out.push_back(u);
  return out;
}
bool depends(const std::vector<const UOp*>& reads, const UOp* r) {
  for (const UOp* b : reads)
    if (stride(b, r) != 0) return true;
  return false;
}
bool contiguous(const std::vector<const UOp*>& reads, const UOp* r) {
  for (const UOp* b : reads)
    if (stride(b, r) == 1) return true;
  return false;
}

// The one STORE of a kernel whose value holds its one REDUCE, a sum of a product: what the
// matmul and convolution tiles start from.
struct SumOfProducts {
  const UOp* store;
  const UOp* mul;
};
std::optional<SumOfProducts> sum_of_products(const UOpPtr& k) {
  const UOp* red = nullptr;
  const UOp* store = nullptr;
  int reduces = 0, stores = 0;
  for (const UOp* u : k->toposort()) {
    if (u->op == Ops::REDUCE) red = u, ++reduces;
    if (u->op == Ops::STORE) store = u, ++stores;
  }
  if (reduces != 1 || stores != 1 || std::get<ReduceArg>(red->arg).op != Ops::ADD) return {};
  const UOp* mul = red->src[0].get();
  if (mul->op != Ops::MUL || store->src[0]->op != Ops::INDEX) return {};
  return SumOfProducts{store, mul};
}

// A matrix product on a CPU: one sum over the last reduce axis k of a[m, k] * b[k, n] (or
// b[n, k]), stored contiguously along n, maybe through an elementwise epilogue (a bias, a
// residual added, an activation: a transformer's output projections). The register tile is its
// outputs m x n (ids of the two output axes) and how the reduce is read. For a @ b both
// operands are plain loads and b is contiguous along n. For a @ b.T an operand may be any
// expression of loads (a quantized weight dequantized from its bytes and block scales) and
// neither need be linear in k: the tile checks that, once k is split, each operand reads its
// lanes contiguously (an attention output laid out [head, token, d], k = head * 64 + d).
struct CpuMatmul {
  int64_t m_id = 0, n_id = 0;
  bool b_along_n = false; // b contiguous along n (a @ b): rows of b are vectors
  bool a_computed = false, b_computed = false; // an operand computed from its loads
  std::vector<Arg> a_bufs, b_bufs;             // the buffers (PARAM args) each operand reads
  int64_t b_row_bytes = 0;                     // a @ b: bytes from one row of b (k) to the next
  int64_t b_bytes = 0;                         // a @ b: the size of b's buffer
  // b stored in column panels whose index is an output axis of its own (the product kept as
  // (m, n / w, w)): that axis's id, else -1. n is then one panel, read whole by the tile.
  int64_t panels_id = -1;
};

std::optional<CpuMatmul> cpu_matmul(const UOpPtr& k, const RendererCaps& caps) {
  const auto sp = sum_of_products(k);
  if (!sp) return {};
  const UOp *store = sp->store, *mul = sp->mul;
  const auto reduce_axes = opt_axes(k, true);
  if (reduce_axes.empty() || const_size(reduce_axes.back().get()) < 0) return {};
  const UOp* kr = reduce_axes.back().get();
  const auto out = opt_axes(k, false);
  for (int s = 0; s < 2; ++s) {
    const auto a = reads_of(mul->src[s].get()), b = reads_of(mul->src[1 - s].get());
    if (a.empty() || b.empty() || !depends(a, kr) || !depends(b, kr)) continue;
    const UOp *m_axis = nullptr, *n_axis = nullptr;
    for (const auto& r : out) {
      if (const_size(r.get()) < 0 || rarg(r.get()).type != AxisType::Global) continue;
      const bool da = depends(a, r.get()), db = depends(b, r.get());
      if (!n_axis && stride(store->src[0].get(), r.get()) == 1 && db && !da)
        n_axis = r.get();
      else if (!m_axis && da && !db)
        m_axis = r.get();
    }
    if (!m_axis || !n_axis) continue;
    const UOp* ai = operand_index(mul->src[s].get());
    const UOp* bi = operand_index(mul->src[1 - s].get());
    // a stored transposed (a gradient through attention's heads): the tile's rows of a are
    // taken along the axis a is contiguous in, so each k reads them from one cache line
    // instead of one line per row.
    if (ai && stride(ai, m_axis) != 1)
      for (const auto& r : out)
        if (rarg(r.get()).type == AxisType::Global && const_size(r.get()) > 0 &&
            stride(ai, r.get()) == 1 && !depends(b, r.get()))
          m_axis = r.get();
    CpuMatmul res{rarg(m_axis).id, rarg(n_axis).id, false, {}, {}};
    for (const UOp* x : a) res.a_bufs.push_back(x->src[0]->arg);
    for (const UOp* x : b) res.b_bufs.push_back(x->src[0]->arg);
    // b contiguous along n, or along each tile of n (b stored in column panels as wide as the
    // tile: Tensor::matmul packs it so on a CPU).
    const int64_t panel = tile_n(caps);
    res.b_along_n =
        ai && bi &&
        (stride(bi, n_axis) == 1 || coeff_in_tile(bi->src[1].get(), n_axis, panel) == 1);
    if (res.b_along_n) {
      res.b_row_bytes = stride(bi, kr) * bi->dtype.scalar_itemsize();
      res.b_bytes = bi->src[0]->dtype.size * static_cast<int64_t>(bi->dtype.scalar_itemsize());
    }
    if (res.b_along_n && stride(bi, kr) == const_size(n_axis))
      for (const auto& r : out)
        if (r.get() != n_axis && rarg(r.get()).type == AxisType::Global && !depends(a, r.get()) &&
            stride(bi, r.get()) == const_size(n_axis) * const_size(kr))
          res.panels_id = rarg(r.get()).id;
    res.a_computed = !ai, res.b_computed = !bi;
    return res;
  }
  return {};
}

// Whether, in kernel `k` after the reduce was split, each operand of `mm` reads the new Unroll
// range `u` contiguously: every read of its buffers either does not depend on `u` or has
// coefficient 1 in it, and at least one does.
bool reads_lanes_contiguously(const UOpPtr& k, const CpuMatmul& mm, const UOp* u) {
  auto check = [&](const std::vector<Arg>& bufs) {
    bool some = false;
    for (const UOp* x : accesses(k)) {
      if (std::find(bufs.begin(), bufs.end(), x->src[0]->arg) == bufs.end()) continue;
      const int64_t s = stride(x, u);
      if (s != 0 && s != 1) return false;
      some |= s == 1;
    }
    return some;
  };
  return check(mm.a_bufs) && check(mm.b_bufs);
}

// A CPU matrix product whose m or n the register tile does not divide (BERT's vocabulary,
// 30522 = 2 x 15261) is first padded up to a multiple of the tile (PADTO: the extra rows and
// columns are gated off), so the tile applies whole instead of shrinking to what divides
// (30522 rows of a @ b: 2 instead of 8). Only axes of at least 64 tiles: the padding's gated
// iterations are then at most 1/64 of the work.
template <class Apply>
void cpu_matmul_pad(UOpPtr& k, const RendererCaps& caps, const Apply& try_apply) {
  const auto mm = cpu_matmul(k, caps);
  if (!mm) return;
  const int64_t lanes = std::max<int64_t>(caps.vector_lanes, 4);
  const bool wide = lanes >= 16;
  const int64_t tm = mm->b_along_n ? (wide ? 8 : 4) : 4;
  const int64_t tn = mm->b_along_n ? tile_n(caps) : (wide ? 4 : 2);
  for (const auto& [id, t] : {std::pair{mm->m_id, tm}, std::pair{mm->n_id, tn}}) {
    const int a = axis_of_id(k, id);
    if (a < 0) continue;
    const int64_t size = const_size(opt_axes(k, false)[static_cast<size_t>(a)].get());
    if (size > 0 && size % t != 0 && size >= 64 * t)
      try_apply({OptOp::PADTO, a, static_cast<int>(t)});
  }
}

// The register tile of a CPU matrix product, from the width of the vector registers (16 float
// lanes: AVX-512's 32 registers; 8: AVX2's 16; 4: SSE's 16). For a @ b: 8 (4 with fewer
// registers) rows of a, broadcast lane by lane, times two vectors of a row of b, the reduce
// unrolled by 4: 16 (8) vector accumulators that each load feeds several of. For a @ b.T both
// operands are read along k: 4 x 8 (4 x 2) outputs, each a vector accumulator over 8 (4)
// lanes of k, summed across its lanes once at the end. A 1024 float32 matmul on one Zen 4 core:
// 45 -> 115 GFLOP/s (a @ b), 15 -> 135 (a @ b.T, then with a 4 x 4 tile); 4 x 8 (256 lanes,
// 16 of AVX-512's registers) took a 110M LLM's F32 prefill matmuls from 81-108 ms to 65-68 ms
// on a 2-core Xeon (4 x 4 and 8 x 8, which spills, were slower). When one operand of a @ b.T is
// computed (a quantized weight dequantized from its bytes) and the other is loaded, each computed
// vector of 16 k lanes is reused by 8 (4) of the other's rows and the computed side is not
// upcast: 8 outputs, the 128 lanes expansion keeps as vector accumulators (a 110M LLM's Q4_0
// prefill projections 100-160 -> 170-260 GFLOP/s; 4 x 2 and 4 x 4 tiles were slower). Sizes
// that do not divide fall back to half.
template <class Apply>
bool cpu_matmul_tile(UOpPtr& k, const RendererCaps& caps, const Apply& apply) {
  const auto mm = cpu_matmul(k, caps);
  if (!mm) return false;
  const int64_t lanes = std::max<int64_t>(caps.vector_lanes, 4);
  const bool wide = lanes >= 16;
  auto size_of_id = [&](int64_t id) {
    const int a = axis_of_id(k, id);
    return a < 0 ? int64_t{-1} : const_size(opt_axes(k, false)[static_cast<size_t>(a)].get());
  };
  const int64_t m = size_of_id(mm->m_id), n = size_of_id(mm->n_id);
  const int64_t kn = const_size(opt_axes(k, true).back().get());
  auto fit = [](int64_t size, int64_t t) {
    while (t > 1 && size % t != 0) t /= 2;
    return t;
  };
  // b contiguous along n but n narrower than a vector (a convolution's weight gradient: the
  // input's window slides along kx = n, 5 wide, and along x = k): the tile of a @ b.T, both
  // operands read along k, with n whole.
  const bool narrow_n = mm->b_along_n && n > 0 && n < lanes;
  const bool along_n = mm->b_along_n && !narrow_n;
  int64_t tm, tn, tk;
  if (along_n) {
    tm = wide ? 8 : 4, tn = tile_n(caps), tk = 4;
  } else {
    tm = 4, tn = wide ? 8 : 2, tk = std::min<int64_t>(lanes, 8);
  }
  if (!along_n && mm->a_computed != mm->b_computed) {
    tk = 16; // whole vectors of AVX-512; a Q4_0 block's 32 nibbles are two runs of 16 bytes
    (mm->b_computed ? tm : tn) = wide ? 8 : 4;
    (mm->b_computed ? tn : tm) = 1;
  }
  // a @ b.T of two loaded operands with n small and odd (a convolution's weight gradient as
  // products of rows, weight_gradient_by_rows: n is the filter's width, 3 or 5): n whole and k
  // read as whole vectors, each accumulator one vector register of one output, as many rows of
  // m as the accumulators allow. beautiful_mnist's first layer, 1 -> 32 5x5: 4 x 5 x 16 lanes,
  // 9 loads for 20 multiply-adds, 150 GFLOP/s on a 2-core Xeon; its fitted 4 x 1 x 8 ran at 72.
  const bool odd_n =
      !along_n && !mm->a_computed && !mm->b_computed && n > 2 && n <= tn && fit(n, tn) < n;
  tm = fit(m, tm), tk = fit(kn, odd_n ? lanes : tk);
  if (odd_n)
    while (tm > 1 && tm * n * tk > max_vector_accumulator_lanes(caps.vector_lanes)) tm /= 2;
  tn = (narrow_n || odd_n) && n > 0 && n <= tn ? n : fit(n, tn);
  // Too small a tile is no tile: leave the kernel to the general rules.
  if (tm * tn < 2 || tn < (along_n ? lanes : 1) || tk < 2) return false;
  const int last_red = static_cast<int>(opt_axes(k, true).size()) - 1;
  const Opt unroll_k{OptOp::UNROLL, last_red, static_cast<int>(tk == kn ? 0 : tk)};
  if (!along_n) {
    // Both operands must read k's lanes as whole vectors once k is split.
    const UOpPtr split = graph_rewrite(apply_opt(k, unroll_k, caps), symbolic(), "simplify");
    const UOp* u = nullptr;
    for (const UOp* r : ranges_of(split))
      if (rarg(r).type == AxisType::Unroll) u = r;
    if (u == nullptr || !reads_lanes_contiguously(split, *mm, u)) return false;
  }
  // m first: its lanes are the slower ones, so every row of the tile is whole vectors of n.
  if (tm > 1) apply({OptOp::UPCAST, axis_of_id(k, mm->m_id), static_cast<int>(tm == m ? 0 : tm)});
  if (tn > 1) apply({OptOp::UPCAST, axis_of_id(k, mm->n_id), static_cast<int>(tn == n ? 0 : tn)});
  apply(unroll_k);
  return true;
}

// A direct convolution on a CPU (the forward pass or the input gradient): one sum of
// w[m, ...] * in[..., y + ky, x + kx] whose output is contiguous along x, which the input
// (any expression of loads: a previous layer's bias and ReLU fuse in) reads contiguously and
// the weights do not depend on, as they do not on y; the last reduce axis (kx) slides the
// input window along x. Ids of m, x, y (-1: none) and ky (-1: none).
struct CpuConv {
  int64_t m_id = -1, x_id = -1, y_id = -1, ky_id = -1;
};

std::optional<CpuConv> cpu_conv(const UOpPtr& k) {
  const auto sp = sum_of_products(k);
  if (!sp) return {};
  const UOp *store = sp->store, *mul = sp->mul;
  const auto reduce_axes = opt_axes(k, true);
  if (reduce_axes.empty()) return {};
  const UOp* kx = reduce_axes.back().get();
  const auto out = opt_axes(k, false);
  for (int s = 0; s < 2; ++s) {
    const auto w = reads_of(mul->src[s].get()), in = reads_of(mul->src[1 - s].get());
    if (w.empty() || in.empty() || !contiguous(in, kx) || !depends(w, kx)) continue;
    CpuConv c;
    const UOp *x = nullptr, *y = nullptr;
    for (const auto& r : out) {
      if (const_size(r.get()) < 0 || rarg(r.get()).type != AxisType::Global) continue;
      const bool in_dep = depends(in, r.get()), w_dep = depends(w, r.get());
      if (!x && in_dep && !w_dep && contiguous(in, r.get()) &&
          stride(store->src[0].get(), r.get()) == 1)
        x = r.get();
      else if (c.m_id < 0 && w_dep && !in_dep)
        c.m_id = rarg(r.get()).id;
    }
    // No m: one output channel (the input gradient of a first layer's one input channel).
    if (!x) continue;
    c.x_id = rarg(x).id;
    // y: the output axis the input reads a row apart, and ky: the reduce axis that moves the
    // window by the same stride (the rows that neighbouring outputs share).
    for (const auto& r : out) {
      if (r.get() == x || const_size(r.get()) < 0 || rarg(r.get()).type != AxisType::Global ||
          depends(w, r.get()) || !depends(in, r.get()))
        continue;
      for (const auto& kr : reduce_axes) {
        if (kr.get() == kx || !depends(w, kr.get()) || const_size(kr.get()) < 0) continue;
        bool paired = false;
        for (const UOp* b : in)
          paired |= stride(b, r.get()) != 0 && stride(b, kr.get()) == stride(b, r.get());
        if (paired) y = r.get(), c.ky_id = rarg(kr.get()).id;
      }
      if (y) break;
    }
    if (y) c.y_id = rarg(y).id;
    return c;
  }
  return {};
}

// The register tile of a CPU convolution: a few rows of outputs (x, whole when at most 32
// long, else a vector), two neighbouring ys, and as many ms (output channels, each a weight
// broadcast to the row) as keep the accumulators within half the registers (16 of AVX-512's
// 32, 8 of AVX2's 16); ky unrolled so the rows two ys share are loaded once. x is upcast last
// so a row is whole vectors. One Zen 4 core, beautiful_mnist's 5x5 at batch 512: 28 -> 160
// GFLOP/cpu-s; its 3x3 (8x8 outputs) 43 -> 173; the ResNet 64 -> 64 3x3 at 56x56: 36 -> 170.
template <class Apply> bool cpu_conv_tile(UOpPtr& k, const RendererCaps& caps, const Apply& apply) {
  const auto c = cpu_conv(k);
  if (!c) return false;
  const int64_t lanes = std::max<int64_t>(caps.vector_lanes, 4);
  const int64_t budget = lanes >= 16 ? 16 : 8; // accumulator registers
  auto size_of_id = [&](int64_t id) {
    const int a = axis_of_id(k, id);
    return a < 0 ? int64_t{-1} : const_size(opt_axes(k, false)[static_cast<size_t>(a)].get());
  };
  const int64_t xs = size_of_id(c->x_id), ms = size_of_id(c->m_id);
  int64_t tx = xs;
  if (xs > 32) {
    tx = 0;
    for (int64_t t : {2 * lanes, lanes, lanes / 2})
      if (!tx && xs % t == 0) tx = t;
    if (!tx) return false;
  }
  // Registers one row of tx floats takes: its power-of-two pieces of at most `lanes`.
  int64_t row_regs = 0;
  for (int64_t rest = tx, piece = lanes; rest > 0; piece /= 2)
    while (piece > 0 && rest >= piece) rest -= piece, ++row_regs;
  int64_t ty = c->y_id >= 0 && size_of_id(c->y_id) % 2 == 0 ? 2 : 1;
  // A row narrower than a vector (hlb_cifar10's 4x4 images) takes more ys, so that the rows
  // together fill whole registers: 4 ys x 4 xs are one AVX-512 accumulator, not four quarter
  // used ones (its 512 -> 512 channel 3x3 at batch 256: 218 -> 350 GFLOP/s).
  int64_t tile_regs = ty * row_regs; // accumulator registers per m
  // With 32 registers, rows of half a vector (8x8 images: beautiful_mnist's 32 -> 64 forward
  // and 64 -> 64 input gradient) take as many ys as fill two registers per m: each weight
  // broadcast then feeds two multiply-adds instead of one, and the broadcasts no longer bound
  // the loop (its 64 -> 64 input gradient at batch 512 on a 2-core Xeon: 6.7-9.0 -> 5.7-5.9 ms;
  // four registers per m was slower, 6.1-6.2).
  if (lanes >= 16 && c->y_id >= 0 && tx < lanes && lanes % tx == 0 &&
      size_of_id(c->y_id) % (2 * lanes / tx) == 0) {
    ty = 2 * lanes / tx;
    tile_regs = 2;
  } else if (c->y_id >= 0 && tx * ty < lanes) {
    const int64_t ys = size_of_id(c->y_id);
    for (int64_t t = lanes / tx; t > ty; t /= 2)
      if (ys % t == 0) {
        ty = t;
        break;
      }
    tile_regs = (tx * ty + lanes - 1) / lanes;
  }
  int64_t tm = 0;
  for (int64_t t : {16, 8, 4, 2})
    if (!tm && ms % t == 0 && t * tile_regs <= budget) tm = t;
  if (c->m_id < 0) {
    // One output channel: no weight is reused across channels, so more rows share each loaded
    // input row instead (the ky unroll): 4 where they divide (beautiful_mnist's first-layer
    // input gradient, 28 rows of 28 from 32 channels: 31 -> 2.4 ms at batch 512).
    tm = 1;
    if (c->y_id >= 0 && size_of_id(c->y_id) % 4 == 0 && 4 * row_regs <= budget) {
      ty = 4;
      tile_regs = ty * row_regs;
    }
  }
  if (!tm) return false;
  if (tm > 1) apply({OptOp::UPCAST, axis_of_id(k, c->m_id), static_cast<int>(tm == ms ? 0 : tm)});
  if (ty > 1) {
    const int64_t ys = size_of_id(c->y_id);
    apply({OptOp::UPCAST, axis_of_id(k, c->y_id), static_cast<int>(ys == ty ? 0 : ty)});
  }
  apply({OptOp::UPCAST, axis_of_id(k, c->x_id), static_cast<int>(tx == xs ? 0 : tx)});
  if (c->ky_id >= 0) {
    const auto red = opt_axes(k, true);
    for (size_t a = 0; a < red.size(); ++a)
      if (rarg(red[a].get()).id == c->ky_id && const_size(red[a].get()) <= 7) {
        apply({OptOp::UNROLL, static_cast<int>(a), 0});
        break;
      }
  }
  return true;
}

// A sum of products of two loaded buffers, over 32 or more elements, into an output with a
// symbolic axis.
bool symbolic_product(const UOpPtr& k) {
  bool symbolic_out = false;
  for (const auto& r : opt_axes(k, false)) symbolic_out |= const_size(r.get()) < 0;
  int64_t reduce_size = 1;
  for (const auto& r : opt_axes(k, true)) reduce_size *= std::max<int64_t>(const_size(r.get()), 1);
  const auto sp = sum_of_products(k);
  return symbolic_out && reduce_size >= 32 && sp && operand_index(sp->mul->src[0].get()) &&
         operand_index(sp->mul->src[1].get());
}

} // namespace

int64_t matmul_panel_width(const RendererCaps& caps) { return caps.has_local ? 0 : tile_n(caps); }

std::vector<Opt> hand_coded_optimizations(const UOpPtr& ast, const RendererCaps& caps) {
  std::vector<Opt> applied;
  UOpPtr k = ast;
  auto apply = [&](const Opt& o) {
    k = graph_rewrite(apply_opt(k, o, caps), symbolic(), "simplify");
    applied.push_back(o);
  };
  // An Opt the kernel may refuse (a grouped reduce where the shape does not allow one).
  auto try_apply = [&](const Opt& o) {
    try {
      apply(o);
      return true;
    } catch (const OptError&) {
      return false;
    }
  };

  // Tensor cores first (tinygrad's order): a sum of products whose dtypes one of the
  // renderer's tensor cores takes, with one reduce axis (or more at TC_OPT >= 1), gets the TC
  // opt on the first of axes 0..2 that applies; then M's and N's outer ranges are upcast by
  // the first of 5, 4, 3, 2 that divides them, N's gets LOCAL 4 or 2, and nothing else.
  if (knobs::TC > 0 && !caps.tensor_cores.empty() &&
      (opt_axes(k, true).size() == 1 || knobs::TC_OPT >= 1)) {
    const TcArg arg{static_cast<int>(knobs::TC_SELECT), static_cast<int>(knobs::TC_OPT),
                    static_cast<int>(knobs::TC)};
    for (int axis = 0; axis < 3; ++axis) {
      TcApplied t;
      try {
        t = apply_tc(k, axis, arg, caps);
      } catch (const OptError&) {
        continue;
      }
      k = graph_rewrite(t.ast, symbolic(), "simplify");
      applied.push_back({OptOp::TC, axis, tc_arg(arg)});
      std::array<int64_t, 2> ids{-1, -1}; // N's and M's outer ranges
      for (size_t d = 0; d < 2; ++d)
        if (t.axes[d]) ids[d] = rarg(t.axes[d].get()).id;
      auto size_of_id = [&](int64_t id) {
        const int a = id < 0 ? -1 : axis_of_id(k, id);
        return a < 0 ? int64_t{-1} : const_size(opt_axes(k, false)[static_cast<size_t>(a)].get());
      };
      for (size_t d : {size_t{1}, size_t{0}})
        for (int amount : {5, 4, 3, 2})
          if (const int64_t n = size_of_id(ids[d]); n > 0 && n % amount == 0) {
            try_apply({OptOp::UPCAST, axis_of_id(k, ids[d]), amount});
            break;
          }
      for (int amount : {4, 2})
        if (const int64_t n = size_of_id(ids[0]); n > 0 && n % amount == 0) {
          try_apply({OptOp::LOCAL, axis_of_id(k, ids[0]), amount});
          break;
        }
      return applied;
    }
  }

  if (caps.has_local) {
    const UOpPtr before = k;
    const size_t n_before = applied.size();
    if (matvec(k, caps, try_apply)) return applied;
    k = before; // a partial matvec layout is dropped
    applied.resize(n_before);
    // Few outputs and a reduce: the work group shares the reduce, and nothing else is done.
    // GROUP, not tinygrad's GROUPTOP: neighbouring work items then read neighbouring elements,
    // which GPUs coalesce and POCL vectorizes across work items (bench/cl_bench.cpp: a 16M sum
    // at 23 GB/s with GROUP 16, 2.3 GB/s with GROUPTOP 16).
    if (auto out = output_size(k); out && *out <= 2048) {
      for (int axis = 0; axis < 3; ++axis)
        if (try_apply({OptOp::GROUP, axis, 16})) return applied;
    }
  }
  if (!caps.has_local) {
    cpu_matmul_pad(k, caps, try_apply);
    // The operand along n at least 4x larger than the one along m (a vocabulary projection:
    // 30522 rows of weights against 2048 tokens): n's tiles go outermost, so each tile of the
    // large operand is read from memory once and the small one is re-read from cache, instead
    // of the large one streaming past every tile of m (BERT's logits: 47 -> 118 GFLOP/s).
    // Not with a computed operand (a quantized weight): its tile already reuses each
    // dequantized row across 8 tokens, and swapped it ran slower (110M Q4_0 pp512 850 -> 580).
    // For a @ b also when b's rows are not a multiple of 2 KiB apart and b is larger than 192
    // KiB: a column panel of b (its k rows x the tile's n) then stays in L2 while every tile of
    // m passes over it, instead of all of b streaming past each tile of m (on a 2-core Xeon:
    // 768 and 1152 square float32 matmuls 195 -> 365 and 174 -> 412 GFLOP/s). At a multiple of
    // 2 KiB the panel's rows map to a few cache sets and evict each other, so n outermost gains
    // nothing (1024: 10% slower, 1536 7% slower, 2048 the same).
    std::optional<std::pair<int64_t, int64_t>> outer_n;
    if (const auto mm = cpu_matmul(k, caps)) {
      // Rows of the m operand: every output but n's (tokens over batch and sequence axes).
      const int ma = axis_of_id(k, mm->m_id), na = axis_of_id(k, mm->n_id);
      const auto out = opt_axes(k, false);
      int64_t total = 1;
      for (const auto& r : out) total *= std::max<int64_t>(const_size(r.get()), 1);
      const int64_t n = na < 0 ? -1 : const_size(out[static_cast<size_t>(na)].get());
      // Not for a b of at most 192 KiB: a convolution's filter (64 -> 64 3x3: 147 KiB) stays
      // in L2 beside a's stream whatever the order, and swapped, a streams from memory once
      // per panel (beautiful_mnist's 64 -> 64 forward at batch 512 on a 2-core Xeon: 5.0 ->
      // 4.0 ms unswapped). A weight gradient's b, the whole batch's dy, still swaps.
      const bool b_panels =
          mm->b_along_n && mm->b_row_bytes % 2048 != 0 && mm->b_bytes > 192 * 1024;
      if (ma >= 0 && na > ma && n > 0 && (n >= 4 * (total / n) || b_panels) && !mm->a_computed &&
          !mm->b_computed)
        outer_n = std::pair{mm->m_id, mm->n_id};
      // n one panel (the tile reads it whole, so its axis goes): the panels' axis goes
      // outermost instead.
      const int pa = axis_of_id(k, mm->panels_id);
      if (outer_n && pa > ma && n <= tile_n(caps)) outer_n = std::pair{mm->m_id, mm->panels_id};
    }
    if (cpu_matmul_tile(k, caps, apply)) {
      if (outer_n)
        try_apply({OptOp::SWAP, axis_of_id(k, outer_n->first), axis_of_id(k, outer_n->second)});
      return applied;
    }
    if (cpu_conv_tile(k, caps, apply)) return applied;
  }
  auto upcast_ranges = [&] {
    std::vector<const UOp*> out;
    for (const UOp* r : ranges_of(k))
      if (is_upcast_axis(rarg(r).type)) out.push_back(r);
    return out;
  };
  auto lanes = [&] {
    int64_t n = 1;
    for (const UOp* r : upcast_ranges()) n *= const_size(r);
    return n;
  };

  // Small output axes that gate some access (a Tensor.stack's or cat's planes, chosen by the
  // axis's value) are upcast whole, as tinygrad does (up to 7 each, 49 together): each lane's
  // gates then fold to constants, and the kernel computes each plane once instead of every
  // plane's expression behind a branch per element. The int8 matvec's activations (words,
  // offsets and scales stacked in one kernel): 2.3% -> 1.1% of a Q4_0 decode's perf samples.
  {
    std::vector<int64_t> masked_ids;
    int64_t product = 1;
    for (const auto& r : opt_axes(k, false)) {
      const int64_t s = const_size(r.get());
      if (s <= 1 || s > 7 || product * s > 49) continue;
      bool gates = false;
      for (const UOp* b : accesses(k))
        gates |= b->src.size() >= 3 && b->src[2]->backward_slice().count(r.get()) != 0;
      if (!gates) continue;
      masked_ids.push_back(rarg(r.get()).id);
      product *= s;
    }
    for (auto it = masked_ids.rbegin(); it != masked_ids.rend(); ++it)
      apply({OptOp::UPCAST, axis_of_id(k, *it), 0});
  }

  // A CPU matrix-vector product of two loaded buffers takes two rows of the matrix per
  // work item: two streams of the matrix in flight per thread instead of one. Memory-bound (a
  // float32 LLM's decode), that reads faster (the 110M llama's F32 tg128 +3.7% and +4.6% in
  // two A/Bs of 8 pairs; four rows: the same as two). A computed matrix (a quantized row
  // dequantized in the kernel) keeps one row per item.
  if (!caps.has_local && cpu_matvec(k)) {
    const auto sp = sum_of_products(k);
    const auto out = opt_axes(k, false);
    const bool loaded_product =
        sp && operand_index(sp->mul->src[0].get()) && operand_index(sp->mul->src[1].get());
    for (size_t a = 0; a < out.size() && loaded_product; ++a) {
      const int64_t rows = const_size(out[a].get());
      if (rows >= 64 && rows % 2 == 0) {
        apply({OptOp::UPCAST, static_cast<int>(a), 2});
        break;
      }
    }
  }
  // Upcast output axes some buffer broadcasts over, while the output is large.
  std::vector<int64_t> upcasted_ids;
  // A CPU column reduce whose output is stored along another axis (a max pool over the
  // channels-last output of a convolution, into channels-first): the general upcasts would
  // take an axis the input is strided along (the batch, its norm's parameters broadcast over
  // it), each lane a float of its own cache line. It goes to the column rule below instead:
  // vectors of neighbouring channels (beautiful_mnist's pools forward and backward, 4 kernels
  // of a training step at batch 512 on a 2-core Xeon: 5.7-7.1 -> 2.7-3.9 ms).
  const bool column_first =
      !caps.has_local && output_size(k) && column_reduce_axis(k, caps, true) >= 0;
  // On a CPU an elementwise kernel (no reduce) skips an axis its store is strided along: each
  // lane would write its own cache line, and what the upcast buys, a load of a broadcast value
  // shared by the lanes, costs less than that. beautiful_mnist's norm backward into the
  // channels-last dy of its 32 -> 32 convolution took the batch 4 wide: 2.9 -> 1.8 ms, and 4
  // transposing copies of its step 0.2-0.9 ms each (BEAM picks no such upcast there either).
  const bool elementwise_cpu = !caps.has_local && opt_axes(k, true).empty();
  // On a CPU a buffer that stays in L1 (at most 1024 elements) and is tiny beside the kernel's
  // largest (1/64 of it or less): a bias, a norm's per-channel parameters. It is no reason to
  // upcast an axis it broadcasts over: what lanes sharing its loads save is less than what
  // they cost where every other access is strided along that axis (beautiful_mnist's bias
  // gradient over 16 chunks of a 64-channel conv output took the chunks 4 wide: 2.4 -> 0.5 ms
  // without).
  int64_t largest = 0;
  for (const UOp* b : accesses(k)) largest = std::max(largest, b->src[0]->dtype.size);
  const auto small_broadcast = [&](const UOp* b) {
    const int64_t n = b->src[0]->dtype.size;
    return !caps.has_local && n >= 0 && n <= 1024 && n * 64 <= largest;
  };
  while (!column_first) {
    const auto out_axes = opt_axes(k, false);
    // A symbolic axis (attention's keys so far) counts at its largest: the constant axes beside
    // it are still worth upcasting (a prefill's scores, keys x queries, tile over the queries).
    int64_t out_size = 1;
    for (const auto& r : out_axes) {
      const int64_t s = const_size(r.get());
      out_size *= std::max<int64_t>(s < 0 ? r->src[0]->ivmax() : s, 1);
    }
    if (out_size < 1024 || out_axes.empty()) break;
    if (!caps.has_local && cpu_matvec(k)) break;
    const auto acc = accesses(k);
    const auto ups = upcast_ranges();
    std::unordered_set<const UOp*> stored_at;
    for (const UOp* u : k->toposort())
      if (u->op == Ops::STORE) stored_at.insert(u->src[0].get());
    // (not read along it, buffers with a nonzero stride, sum of strides, axis, amount):
    // smallest first. When no axis the output is contiguous along can be upcast, an axis some
    // load reads contiguously (the input channels of a weight gradient, stored channels-last)
    // comes first and 8 wide: whole vector loads and the other operand broadcast, instead of
    // shuffles (a 5x5 weight gradient: 3x faster).
    auto contiguity = [&](const UOp* r) {
      std::pair<bool, bool> lc_sc{false, false}; // (some load, the store) along r
      for (const UOp* b : acc)
        (stored_at.count(b) ? lc_sc.second : lc_sc.first) |= stride(b, r) == 1;
      return lc_sc;
    };
    auto splits = [&](const UOp* r) {
      const int64_t s = const_size(r);
      return s > 0 && ((s % 3 == 0 && s != 3) || (s % 4 == 0 && s != 4));
    };
    bool store_contig_candidate = false;
    for (const auto& r : out_axes)
      store_contig_candidate |= splits(r.get()) && contiguity(r.get()).second;
    std::optional<std::tuple<int, int64_t, int64_t, int, int>> best;
    for (size_t a = 0; a < out_axes.size(); ++a) {
      const UOp* r = out_axes[a].get();
      if (std::find(upcasted_ids.begin(), upcasted_ids.end(), rarg(r).id) != upcasted_ids.end())
        continue;
      const int64_t s = const_size(r);
      const auto [load_contig, store_contig] = contiguity(r);
      if (elementwise_cpu && !store_contig) {
        bool strided_store = false;
        for (const UOp* b : acc) strided_store |= stored_at.count(b) && stride(b, r) > 1;
        if (strided_store) continue;
      }
      const int first = load_contig && !store_contig && !store_contig_candidate ? 0 : 1;
      for (int amount : {3, 4, 8}) {
        if (amount == 8 && first != 0) continue;
        if (s < 0 || s % amount != 0 || s == amount) continue;
        bool broadcast = false;
        for (const UOp* b : acc) {
          bool has_zero_upcast = false;
          for (const UOp* u : ups) has_zero_upcast |= stride(b, u) == 0;
          broadcast |= stride(b, r) == 0 && !has_zero_upcast && !small_broadcast(b);
        }
        if (!broadcast) continue;
        int64_t nonzero = 0, sum = 0;
        for (const UOp* b : acc) {
          const int64_t st = stride(b, r);
          nonzero += st > 0;
          sum += st;
        }
        std::tuple<int, int64_t, int64_t, int, int> cand{first, nonzero, sum, static_cast<int>(a),
                                                         first == 0 ? -amount : amount};
        if (!best || cand < *best) best = cand;
      }
    }
    if (!best) break;
    const UOp* chosen = out_axes[static_cast<size_t>(std::get<3>(*best))].get();
    int amount = std::abs(std::get<4>(*best));
    // Without work groups (CPU) the first upcast of an axis that is contiguous in the output
    // goes 16 wide: every row read along it uses whole cache lines and the stores are two
    // 8-float vectors (a 1024 matmul: 16 -> 97 GFLOP/s here, against tinygrad's 4).
    if (!caps.has_local && upcasted_ids.empty()) {
      bool contiguous_out = false;
      for (const UOp* u : k->toposort())
        if (u->op == Ops::STORE && u->src[0]->op == Ops::INDEX)
          contiguous_out |= stride(u->src[0].get(), chosen) == 1;
      const int64_t s = const_size(chosen);
      for (int wide : {16, 8})
        if (contiguous_out && s % wide == 0 && s > wide) {
          amount = wide;
          break;
        }
      // A product that cannot tile over a second axis because it is symbolic (a prefill's
      // attention scores, keys so far x queries) takes four vectors of this one, in memory
      // order: a key's element is then loaded once for 64 queries instead of 16.
      if (contiguous_out && amount >= 8 && s % (4 * amount) == 0 && s > 4 * amount &&
          symbolic_product(k))
        amount *= 4;
    }
    upcasted_ids.push_back(rarg(chosen).id);
    apply({OptOp::UPCAST, std::get<3>(*best), amount});
    if (upcasted_ids.size() >= 2) break;
  }

  // A CPU column reduce that nothing above upcast (few outputs, or no input broadcast over
  // them): each a sum over rows of an input read contiguously along the outputs and strided
  // along every reduce axis (per-channel sums of a channels-last activation: a batch norm's
  // statistics, a bias's gradient; a prefill's softmax over keys, laid out (heads, keys,
  // queries)). One output per loop reads one float of each cache line, and the neighbouring
  // outputs read the same lines again later, from memory once the input outgrows L2. Upcast by
  // the vector width, each load is a whole vector of neighbouring outputs (beautiful_mnist's
  // 64-channel sums over 512 x 6 x 6: 1.9 -> 8.3 GB/s, its training step 295 -> 226 ms on a
  // 2-core Xeon; the 110M llama's softmax reductions at pp512: 41 -> 26 ms).
  if (const int a = !caps.has_local && upcasted_ids.empty() && output_size(k)
                        ? column_reduce_axis(k, caps, false)
                        : -1;
      a >= 0) {
    const auto red = opt_axes(k, true);
    const UOp* r = opt_axes(k, false)[static_cast<size_t>(a)].get();
    const int64_t s = const_size(r), w = std::max<int64_t>(caps.vector_lanes, 4);
    // A long reduce (at least 64, or symbolic: a decode's attention over the keys so far)
    // takes four vectors while eight work items are left: four independent accumulators
    // instead of one chain of dependent adds (the 110M llama's attention-weighted values at
    // decode: 36 -> 24 ms over 256 tokens, tg512 6% faster).
    bool long_reduce = false;
    int64_t reduce_size = 1;
    for (const auto& rr : red) {
      const int64_t rs = const_size(rr.get());
      long_reduce |= rs < 0;
      reduce_size *= std::max<int64_t>(rs, 1);
      long_reduce |= reduce_size >= 64;
    }
    const int64_t items_at_four = *output_size(k) / s * (s / (4 * w));
    const int64_t amount = long_reduce && s % (4 * w) == 0 && items_at_four >= 8 ? 4 * w : w;
    apply({OptOp::UPCAST, a, static_cast<int>(s == amount ? 0 : amount)});
    upcasted_ids.push_back(rarg(r).id);
  }

  // With 32 vector registers (16 lanes: AVX-512), a long reduce into two upcast axes (a
  // convolution's weight gradient: output channels x input channels, summed over the batch's
  // pixels) takes more of the first axis, up to 128 accumulator lanes: each input vector loaded
  // then feeds four times the multiply-adds. BEAM picks this for the beautiful_mnist and
  // hlb_cifar10 weight gradients (the 5x5 one: 85 -> 49 ms).
  if (!caps.has_local && caps.vector_lanes >= 16 && upcasted_ids.size() == 2 && lanes() <= 32) {
    int64_t reduce_size = 1;
    for (const auto& r : opt_axes(k, true))
      reduce_size *= std::max<int64_t>(const_size(r.get()), 1);
    const int a = axis_of_id(k, upcasted_ids[0]);
    const int64_t rest = a < 0 ? -1 : const_size(opt_axes(k, false)[static_cast<size_t>(a)].get());
    // Only a product of two loaded buffers: a computed operand (a quantized weight) has its
    // own tile, and recomputing it for 4x more lanes costs more than it saves.
    const auto sp = sum_of_products(k);
    const bool loaded_product =
        sp && operand_index(sp->mul->src[0].get()) && operand_index(sp->mul->src[1].get());
    if (reduce_size >= 64 && rest > 1 && loaded_product)
      for (int64_t f : {int64_t{4}, int64_t{2}})
        if (rest % f == 0 && lanes() * f <= 128) {
          apply({OptOp::UPCAST, a, static_cast<int>(f == rest ? 0 : f)});
          break;
        }
  }

  // A sum of DOT4s (a quantized matmul's int8 dot products) unrolls its innermost reduce axes
  // until the int32 lanes fill one vector register: one vpdpbusd then covers 64 bytes of the
  // weight and 64 of the activations, and a block's scale is loaded once for its lanes.
  const bool dot4_sum = !caps.has_local && std::ranges::any_of(k->toposort(), [](const UOp* u) {
    return u->op == Ops::DOT4;
  });
  // The axes are planned innermost first and unrolled outermost first, which lays the lanes
  // out in memory order (no permutes of the loaded words).
  if (dot4_sum) {
    const auto red = opt_axes(k, true);
    std::vector<std::pair<int, int64_t>> plan; // (reduce axis, unroll amount; 0: whole)
    int64_t room = caps.vector_lanes / lanes();
    for (int a = static_cast<int>(red.size()) - 1; a >= 0 && room >= 2; --a) {
      const int64_t s = const_size(red[static_cast<size_t>(a)].get());
      if (s <= 1) break;
      if (s <= room) {
        plan.emplace_back(a, 0);
        room /= s;
        continue;
      }
      if (s % room == 0) plan.emplace_back(a, room);
      break;
    }
    // Outermost first; an axis unrolled whole leaves the reduce axes, moving those after it.
    int gone = 0;
    for (auto it = plan.rbegin(); it != plan.rend(); ++it) {
      apply({OptOp::UNROLL, it->first - gone, static_cast<int>(it->second)});
      gone += it->second == 0;
    }
  }

  // Unroll the last reduce axis: whole when small (and the vectors stay within 128 lanes), else
  // by 4.
  if (!dot4_sum) {
    const auto red = opt_axes(k, true);
    if (!red.empty() && lanes() < 32) {
      const int last = static_cast<int>(red.size()) - 1;
      const int64_t s = const_size(red.back().get());
      if (s > 1 && s <= 32 && lanes() * s <= 128) {
        apply({OptOp::UNROLL, last, 0});
        // A second tiny reduce axis goes too.
        const auto red2 = opt_axes(k, true);
        if (s <= 3 && !red2.empty()) {
          const int64_t s2 = const_size(red2.back().get());
          if (s2 > 1 && s2 <= 3) apply({OptOp::UNROLL, static_cast<int>(red2.size()) - 1, 0});
        }
      } else if (s > 4 && s % 4 == 0) {
        // Without work groups, a reduce some load reads contiguously unrolls up to 16 wide
        // (within 64 lanes): expansion keeps an unrolled reduce's lanes as vector accumulators,
        // so a matrix-vector row is summed a whole vector load at a time.
        int amount = 4;
        if (!caps.has_local) {
          bool contiguous = false;
          for (const UOp* b : accesses(k)) contiguous |= stride(b, red.back().get()) == 1;
          for (int wide : {16, 8})
            if (contiguous && s % wide == 0 && s > wide && lanes() * wide <= 64) {
              amount = wide;
              break;
            }
        }
        apply({OptOp::UNROLL, last, amount});
      }
    }
  }

  // Nothing upcast yet: float4 stores along the last output axis when it is contiguous there.
  // Without work groups, an elementwise kernel (no reduce) whose every access reads that axis
  // contiguously or not at all goes a whole vector register wide (caps.vector_lanes): exp,
  // sigmoid and GELU's polynomials then run on full registers.
  if (upcast_ranges().empty()) {
    const auto out_axes = opt_axes(k, false);
    if (!out_axes.empty()) {
      const UOp* r = out_axes.back().get();
      const int64_t s = const_size(r);
      bool contiguous = false;
      for (const UOpPtr& st : k->src)
        if (st->op == Ops::STORE) contiguous |= coeff(st->src[0]->src[1].get(), r) == 1;
      int64_t amount = 4;
      if (!caps.has_local && opt_axes(k, true).empty() && caps.vector_lanes > 4) {
        bool whole = true;
        for (const UOp* b : accesses(k)) whole &= stride(b, r) == 0 || stride(b, r) == 1;
        if (whole && s > caps.vector_lanes && s % caps.vector_lanes == 0)
          amount = caps.vector_lanes;
      }
      if (s > amount && s % amount == 0 && contiguous)
        apply({OptOp::UPCAST, static_cast<int>(out_axes.size()) - 1, static_cast<int>(amount)});
    }
  }

  // Work-group sizes: Global axes some buffer broadcasts over first (the group shares its
  // reads), later axes before earlier ones; 32 for the first axis, else 16, 8, 4, 3 or 2, at
  // most 128 work items a group, up to three axes.
  if (caps.has_local) {
    const auto out_axes = opt_axes(k, false);
    const auto acc = accesses(k);
    std::vector<std::pair<bool, int>> ranking;
    for (size_t a = 0; a < out_axes.size(); ++a) {
      const UOp* r = out_axes[a].get();
      if (rarg(r).type != AxisType::Global || const_size(r) < 0) continue;
      bool broadcast = false;
      for (const UOp* b : acc) broadcast |= stride(b, r) == 0;
      ranking.emplace_back(broadcast, static_cast<int>(a));
    }
    std::sort(ranking.begin(), ranking.end(), [](const auto& x, const auto& y) { return x > y; });
    std::vector<std::pair<int64_t, int64_t>> to_local; // (range id, size)
    int64_t group = 1;
    for (const auto& [broadcast, a] : ranking) {
      const int64_t s = const_size(out_axes[static_cast<size_t>(a)].get());
      std::vector<int64_t> choices{16, 8, 4, 3, 2};
      if (a == 0) choices.insert(choices.begin(), 32);
      for (int64_t c : choices)
        if (s % c == 0 && group * c <= 128) {
          to_local.emplace_back(rarg(out_axes[static_cast<size_t>(a)].get()).id, c);
          group *= c;
          break;
        }
      if (to_local.size() == 3) break;
    }
    std::sort(to_local.begin(), to_local.end());
    for (const auto& [id, size] : to_local)
      try_apply({OptOp::LOCAL, axis_of_id(k, id), static_cast<int>(size)});
  }
  return applied;
}

} // namespace tg
