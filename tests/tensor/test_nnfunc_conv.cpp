// nn functional, part 1: convolutions, transposed convolutions, pooling, adaptive pooling and
// interpolation against direct C++ loops (suite tensor.nnfunc), and conv2d's kernel count on NULL.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>

#include "tensor/ref.hpp"
#include "tg/codegen.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/schedule.hpp"

using namespace tgt;
using Ints = std::vector<int64_t>;

namespace {

// Iterates over every index of `s`.
template <class F> void for_each_index(const Shape& s, F&& f) {
  for (int64_t i = 0; i < numel(s); ++i) f(unravel(i, s));
}

// Direct convolution: x (N, Cin, *i), w (Cout, Cin/g, *k), padding (before, after) per dim.
Arr conv_ref(const Arr& x, const Arr& w, const Arr* bias, const Ints& s, const Pairs& p,
             const Ints& d, int64_t g) {
  const size_t nsp = x.shape.size() - 2;
  const int64_t cout = w.shape[0], cg = w.shape[1];
  Shape out{x.shape[0], cout}, ks(w.shape.begin() + 2, w.shape.end());
  for (size_t j = 0; j < nsp; ++j)
    out.push_back((x.shape[2 + j] + p[j].first + p[j].second - d[j] * (ks[j] - 1) - 1) / s[j] + 1);
  return generate(out, [&](const std::vector<int64_t>& idx) {
    const int64_t n = idx[0], co = idx[1], grp = co / (cout / g);
    double acc = bias ? bias->v[static_cast<size_t>(co)] : 0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for_each_index(ks, [&](const std::vector<int64_t>& k) {
        std::vector<int64_t> xi{n, grp * cg + ci}, wi{co, ci};
        for (size_t j = 0; j < nsp; ++j) {
          const int64_t pos = idx[2 + j] * s[j] - p[j].first + k[j] * d[j];
          if (pos < 0 || pos >= x.shape[2 + j]) return;
          xi.push_back(pos);
          wi.push_back(k[j]);
        }
        acc += x.at(xi) * w.at(wi);
      });
    return acc;
  });
}

// Direct transposed convolution: w (Cin, Cout/g, *k); out[o] gathers x[i] with o = i*s - p + k*d.
Arr conv_t_ref(const Arr& x, const Arr& w, const Arr* bias, const Ints& s, const Ints& p,
               const Ints& op, const Ints& d, int64_t g) {
  const size_t nsp = x.shape.size() - 2;
  const int64_t cin = x.shape[1], cog = w.shape[1], cig = cin / g;
  Shape out{x.shape[0], cog * g}, ks(w.shape.begin() + 2, w.shape.end());
  for (size_t j = 0; j < nsp; ++j)
    out.push_back((x.shape[2 + j] - 1) * s[j] - 2 * p[j] + d[j] * (ks[j] - 1) + op[j] + 1);
  return generate(out, [&](const std::vector<int64_t>& idx) {
    const int64_t n = idx[0], co = idx[1], grp = co / cog;
    double acc = bias ? bias->v[static_cast<size_t>(co)] : 0;
    for (int64_t ci = grp * cig; ci < (grp + 1) * cig; ++ci)
      for_each_index(ks, [&](const std::vector<int64_t>& k) {
        std::vector<int64_t> xi{n, ci}, wi{ci, co % cog};
        for (size_t j = 0; j < nsp; ++j) {
          const int64_t num = idx[2 + j] + p[j] - k[j] * d[j];
          if (num < 0 || num % s[j] != 0 || num / s[j] >= x.shape[2 + j]) return;
          xi.push_back(num / s[j]);
          wi.push_back(k[j]);
        }
        acc += x.at(xi) * w.at(wi);
      });
    return acc;
  });
}

// PyTorch's pooling output size.
int64_t pool_out(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t num = i + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (o - 1) * s >= i + p) --o;
  return o;
}

// Max pool over the last two dims with PyTorch's first-maximum flat index.
std::pair<Arr, Arr> max_pool2d_ref(const Arr& x, const Ints& k, const Ints& s, const Ints& p,
                                   const Ints& d, bool ceil_mode) {
  const size_t nd = x.shape.size() - 2;
  const int64_t h = x.shape[nd], w = x.shape[nd + 1];
  Shape out(x.shape.begin(), x.shape.end() - 2);
  out.push_back(pool_out(h, k[0], s[0], p[0], d[0], ceil_mode));
  out.push_back(pool_out(w, k[1], s[1], p[1], d[1], ceil_mode));
  Arr vals{out, {}}, idxs{out, {}};
  for_each_index(out, [&](const std::vector<int64_t>& o) {
    double best = -std::numeric_limits<double>::infinity(), bi = -1;
    for (int64_t a = 0; a < k[0]; ++a)
      for (int64_t b = 0; b < k[1]; ++b) {
        const int64_t y = o[nd] * s[0] - p[0] + a * d[0], xx = o[nd + 1] * s[1] - p[1] + b * d[1];
        if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
        std::vector<int64_t> src(o.begin(), o.end() - 2);
        src.push_back(y);
        src.push_back(xx);
        const double v = x.at(src);
        if (v > best) {
          best = v;
          bi = static_cast<double>(y * w + xx);
        }
      }
    vals.v.push_back(best);
    idxs.v.push_back(bi);
  });
  return {vals, idxs};
}

Arr avg_pool2d_ref(const Arr& x, const Ints& k, const Ints& s, const Ints& p, bool ceil_mode,
                   bool count_include_pad, std::optional<int64_t> divisor) {
  const size_t nd = x.shape.size() - 2;
  const int64_t h = x.shape[nd], w = x.shape[nd + 1];
  Shape out(x.shape.begin(), x.shape.end() - 2);
  out.push_back(pool_out(h, k[0], s[0], p[0], 1, ceil_mode));
  out.push_back(pool_out(w, k[1], s[1], p[1], 1, ceil_mode));
  return generate(out, [&](const std::vector<int64_t>& o) {
    int64_t hs = o[nd] * s[0] - p[0], ws = o[nd + 1] * s[1] - p[1];
    int64_t he = std::min(hs + k[0], h + p[0]), we = std::min(ws + k[1], w + p[1]);
    const int64_t pool_size = (he - hs) * (we - ws);
    hs = std::max<int64_t>(hs, 0);
    ws = std::max<int64_t>(ws, 0);
    he = std::min(he, h);
    we = std::min(we, w);
    double acc = 0;
    for (int64_t y = hs; y < he; ++y)
      for (int64_t xx = ws; xx < we; ++xx) {
        std::vector<int64_t> src(o.begin(), o.end() - 2);
        src.push_back(y);
        src.push_back(xx);
        acc += x.at(src);
      }
    const double div = divisor             ? static_cast<double>(*divisor)
                       : count_include_pad ? static_cast<double>(pool_size)
                                           : static_cast<double>((he - hs) * (we - ws));
    return acc / div;
  });
}

Tensor t_of(Arr& a, DType d = dtypes::float32) { return to_tensor(a, d); }

int64_t kernels(const std::vector<tg::ScheduleItem>& items) {
  int64_t n = 0;
  for (const tg::ScheduleItem& i : items) n += i.kind == tg::ScheduleItem::Kind::Kernel;
  return n;
}

// The CPU renderer's caps.
tg::RendererCaps cpu_caps() {
  auto dev = tg::DeviceRegistry::global().open("CPU");
  return dev->renderer(dev->renderers().front()).caps();
}

// The kernel ASTs lowered with the heuristic's Opts (none given) while `run` executes.
std::vector<tg::UOpPtr> heuristic_asts(const std::function<void()>& run) {
  std::mutex mu;
  std::vector<tg::UOpPtr> asts;
  tg::set_lowering_observer(
      [&](const tg::UOpPtr& ast, const std::vector<tg::Opt>* opts, const tg::RendererCaps&) {
        std::lock_guard lock(mu);
        if (opts == nullptr) asts.push_back(ast);
      });
  struct Reset {
    ~Reset() { tg::set_lowering_observer({}); }
  } reset;
  run();
  return asts;
}

// The widest register a kernel keeps (its vector accumulators), lowered for `caps`.
size_t kernel_accumulator_lanes(const tg::UOpPtr& ast, const tg::RendererCaps& caps) {
  size_t lanes = 0;
  for (const auto& u : tg::lower_kernel(ast, caps).uops)
    if (u->op == tg::Ops::DEFINE_REG) lanes = std::max<size_t>(lanes, u->dtype.size);
  return lanes;
}

// The same, the widest over the kernels `run` lowers with the heuristic.
size_t accumulator_lanes(const std::function<void()>& run, const tg::RendererCaps& caps) {
  size_t lanes = 0;
  for (const auto& ast : heuristic_asts(run))
    lanes = std::max(lanes, kernel_accumulator_lanes(ast, caps));
  return lanes;
}

struct ConvCase {
  const char* name;
  Shape x, w;
  Ints stride, dilation;
  Tensor::ConvPadding padding;
  Pairs pads; // what the padding means
  int64_t groups;
  bool bias;
};

} // namespace

TEST_SUITE("tensor.nnfunc") {
  TEST_CASE("conv2d against a direct loop: strides, padding, dilation, groups, same/valid") {
    const DType f = dtypes::float32;
    const std::vector<ConvCase> cases{
        {"3x2 kernel, batch 1",
         {1, 3, 7, 9},
         {4, 3, 3, 2},
         {1, 1},
         {1, 1},
         0,
         {{0, 0}, {0, 0}},
         1,
         false},
        {"stride 2, padding 1, bias, batch 2",
         {2, 3, 7, 8},
         {5, 3, 3, 3},
         {2, 2},
         {1, 1},
         1,
         {{1, 1}, {1, 1}},
         1,
         true},
        {"stride (2,1), padding (2,0)",
         {2, 2, 9, 6},
         {3, 2, 3, 2},
         {2, 1},
         {1, 1},
         Tensor::ConvPadding{2, 0},
         {{2, 2}, {0, 0}},
         1,
         true},
        {"dilation 2", {1, 2, 9, 10}, {3, 2, 3, 3}, {1, 1}, {2, 2}, 0, {{0, 0}, {0, 0}}, 1, false},
        {"dilation (2,1), stride 2, padding 2",
         {2, 2, 11, 9},
         {2, 2, 3, 2},
         {2, 2},
         {2, 1},
         2,
         {{2, 2}, {2, 2}},
         1,
         true},
        {"groups 2", {2, 4, 6, 7}, {6, 2, 3, 3}, {1, 1}, {1, 1}, 1, {{1, 1}, {1, 1}}, 2, true},
        {"groups 3 depthwise-like, stride 2",
         {1, 3, 8, 8},
         {3, 1, 3, 3},
         {2, 2},
         {1, 1},
         0,
         {{0, 0}, {0, 0}},
         3,
         false},
        {"same, even 4x2 kernel",
         {2, 3, 7, 8},
         {2, 3, 4, 2},
         {1, 1},
         {1, 1},
         "same",
         {{1, 2}, {0, 1}},
         1,
         true},
        {"same, dilation 2, 2x3 kernel",
         {1, 2, 6, 7},
         {3, 2, 2, 3},
         {1, 1},
         {2, 2},
         "same",
         {{1, 1}, {2, 2}},
         1,
         false},
        {"valid", {1, 2, 5, 6}, {2, 2, 3, 3}, {1, 1}, {1, 1}, "valid", {{0, 0}, {0, 0}}, 1, true},
        {"1x1 kernel", {2, 5, 3, 4}, {4, 5, 1, 1}, {1, 1}, {1, 1}, 0, {{0, 0}, {0, 0}}, 1, true},
    };
    for (const ConvCase& c : cases) {
      INFO(c.name);
      Arr x = random_arr(c.x, -2, 2, f, 11), w = random_arr(c.w, -1, 1, f, 12),
          b = random_arr({c.w[0]}, -1, 1, f, 13);
      Tensor tx = t_of(x), tw = t_of(w), tb = t_of(b);
      Tensor r = tx.conv2d(tw, c.bias ? Tensor::OptTensor(tb) : std::nullopt, c.stride, c.padding,
                           c.dilation, c.groups);
      check_close(r, conv_ref(x, w, c.bias ? &b : nullptr, c.stride, c.pads, c.dilation, c.groups),
                  tol_for(f, 4), c.name, f);
    }
  }

  TEST_CASE("conv2d: non-contiguous input and weight, unbatched input, float16") {
    const DType f = dtypes::float32;
    // The input reached through a permute (NHWC storage), the weight through a flip.
    Arr xs = random_arr({2, 6, 5, 3}, -2, 2, f, 21), ws = random_arr({4, 3, 3, 3}, -1, 1, f, 22);
    Tensor tx = t_of(xs).permute({0, 3, 1, 2}), tw = t_of(ws).flip({2});
    Arr x = permute(xs, {0, 3, 1, 2}), w = flip(ws, {2});
    check_close(tx.conv2d(tw, {}, 1, 1),
                conv_ref(x, w, nullptr, {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, 1), tol_for(f, 4),
                "permuted input, flipped weight");
    // Unbatched (C, H, W).
    Arr xu = random_arr({3, 6, 5}, -2, 2, f, 23);
    Tensor ru = t_of(xu).conv2d(t_of(ws), {}, 2, 1);
    Arr want =
        conv_ref(reshape(xu, {1, 3, 6, 5}), ws, nullptr, {2, 2}, {{1, 1}, {1, 1}}, {1, 1}, 1);
    check_close(ru, reshape(want, Shape(want.shape.begin() + 1, want.shape.end())), tol_for(f, 4),
                "unbatched");
    // float16: the sum accumulates in float32 and is stored as float16.
    const DType h = dtypes::float16;
    Arr xh = random_arr({2, 4, 6, 7}, -1, 1, h, 24), wh = random_arr({4, 2, 3, 3}, -1, 1, h, 25);
    Arr wanth = conv_ref(xh, wh, nullptr, {1, 1}, {{1, 1}, {1, 1}}, {1, 1}, 2);
    for (double& v : wanth.v) v = store(h, v);
    check_close(t_of(xh, h).conv2d(t_of(wh, h), {}, 1, 1, 1, 2), wanth, tol_for(h, 4), "float16",
                h);
  }

  TEST_CASE("a 5x5 weight gradient on a 16-lane CPU: the matmul register tile") {
    // beautiful_mnist's second convolution (32 -> 32 channels, 5x5, 24x24 input) at batch 16:
    // its weight gradient sums over the images' pixels into 32 x 32 x 25 weights, a matrix
    // product of the channels-last input windows and output gradient. With 32 vector registers
    // (AVX-512) the kernel keeps the a @ b tile, 8 input channels x 2 vectors of 16 output
    // channels: 256 accumulator lanes (batch 512 on Zen 4: 203 -> 304 GFLOP/s against the
    // convolution of x by dy it replaced).
    const tg::RendererCaps caps = cpu_caps();
    if (caps.vector_lanes < 16 || tg::knobs::NOOPT) return;
    const auto asts = heuristic_asts([] {
      auto x = Tensor::rand({16, 32, 24, 24}, dtypes::float32, "CPU");
      auto w = Tensor::rand({32, 32, 5, 5}, dtypes::float32, "CPU").requires_grad_(true);
      x.conv2d(w).sum().backward();
      w.grad().realize();
    });
    // The weight gradient: the kernel whose output holds a multiple of the 25,600 weights and
    // that reduces the most.
    size_t best_terms = 0, acc_lanes = 0;
    for (const auto& ast : asts) {
      int64_t out = 1, red = 1;
      for (const tg::UOp* u : ast->toposort())
        if (u->op == tg::Ops::RANGE && u->src[0]->is_const())
          (std::get<tg::RangeArg>(u->arg).type == tg::AxisType::Reduce ? red : out) *=
              u->src[0]->ivmin();
      if (out % (32 * 32 * 25) != 0 || red == 1 || size_t(out * red) <= best_terms) continue;
      best_terms = size_t(out * red);
      acc_lanes = kernel_accumulator_lanes(ast, caps);
    }
    REQUIRE(best_terms > 0);
    CHECK(acc_lanes == 256);
  }

  TEST_CASE("a 3x3 convolution of 4x4 images on a 16-lane CPU: rows fill whole registers") {
    // hlb_cifar10's last block (4x4 images): a row of 4 outputs is a quarter of an AVX-512
    // register, so the tile takes all 4 rows (one register per output channel) and 16 output
    // channels: 256 accumulator lanes (64 when each row was its own register).
    const tg::RendererCaps caps = cpu_caps();
    if (caps.vector_lanes < 16 || tg::knobs::NOOPT) return;
    // 4 input channels: too few for the channels-last matrix product narrow images take.
    CHECK(accumulator_lanes(
              [] {
                auto x = Tensor::rand({4, 4, 4, 4}, dtypes::float32, "CPU");
                auto w = Tensor::rand({32, 4, 3, 3}, dtypes::float32, "CPU");
                x.conv2d(w, {}, 1, 1).realize();
              },
              caps) == 256);
  }

  TEST_CASE("narrow images as a channels-last matrix product: values and both gradients") {
    // Outputs 6 and 5 wide (beautiful_mnist's last conv, a strided one) take the channels-last
    // product forward; a 10-wide input gradient takes it backward. Against direct loops, and
    // the gradients against those of the same convolution on float64 (the direct path).
    const DType f = dtypes::float32;
    struct Case {
      const char* name;
      Shape x, w;
      int64_t stride, pad;
    };
    for (const Case& c :
         {Case{"6x6 outputs", {3, 8, 8, 8}, {16, 8, 3, 3}, 1, 0},
          Case{"stride 2, padding 1: 5x5", {2, 16, 9, 9}, {32, 16, 3, 3}, 2, 1},
          Case{"8x8 outputs, 10 wide input gradient", {2, 16, 10, 10}, {16, 16, 3, 3}, 1, 0},
          Case{"16 wide input gradient, 44% of its taps on dy's padding",
               {2, 16, 16, 16},
               {16, 16, 5, 5},
               1,
               0}}) {
      INFO(c.name);
      Arr x = random_arr(c.x, -1, 1, f, 51), w = random_arr(c.w, -1, 1, f, 52),
          b = random_arr({c.w[0]}, -1, 1, f, 53);
      const Pairs pads{{c.pad, c.pad}, {c.pad, c.pad}};
      Tensor tx = t_of(x).requires_grad_(true), tw = t_of(w).requires_grad_(true);
      Tensor y = tx.conv2d(tw, t_of(b), c.stride, c.pad);
      check_close(y, conv_ref(x, w, &b, {c.stride, c.stride}, pads, {1, 1}, 1), tol_for(f, 8),
                  c.name, f);
      Tensor dy = Tensor::rand(y.shape(), dtypes::float32, y.device()).realize();
      (y * dy).sum().backward();
      Tensor x64 = t_of(x).cast(dtypes::float64).requires_grad_(true),
             w64 = t_of(w).cast(dtypes::float64).requires_grad_(true);
      (x64.conv2d(w64, {}, c.stride, c.pad) * dy.cast(dtypes::float64)).sum().backward();
      const auto close = [](const Tensor& a, const Tensor& ref) {
        return (a.cast(dtypes::float64) - ref).abs().max().item<double>() <=
               1e-4 * (1 + ref.abs().max().item<double>());
      };
      CHECK(close(tx.grad(), x64.grad()));
      CHECK(close(tw.grad(), w64.grad()));
    }
  }

  TEST_CASE("an input gradient on a small image loops over the taps inside dy only") {
    // dy (12x12) padded by 4 for a 5x5 filter: a direct tile would multiply 44% zeros. The
    // channels-last product's tap loops are bounded to the image instead, so the kernel reads
    // dy with no gate.
    // (A batch of 3: kernels another test compiled already are not lowered again.)
    Tensor x = Tensor::rand({3, 16, 16, 16}, dtypes::float32, "CPU").realize().requires_grad_(true);
    Tensor w = Tensor::rand({16, 16, 5, 5}, dtypes::float32, "CPU").realize();
    Tensor dy = Tensor::rand({3, 16, 12, 12}, dtypes::float32, "CPU").realize();
    const tg::RendererCaps caps = cpu_caps();
    int bounded = 0, gated = 0;
    for (const auto& ast : heuristic_asts([&] {
           (x.conv2d(w) * dy).sum().backward();
           x.grad().realize();
         }))
      for (const auto& u : tg::lower_kernel(ast, caps).uops) {
        bounded += u->op == tg::Ops::RANGE && !u->src[0]->is_const();
        gated += u->op == tg::Ops::INDEX && u->src.size() > 2;
      }
    CHECK(bounded == 2); // ky and kx
    CHECK(gated == 0);
  }

  TEST_CASE("a weight gradient summed over chunks of images, against a direct loop") {
    // 48x48 outputs are more pixels than one chunk of the matrix-product weight gradient
    // holds: each image is its own chunk, and the three partial sums are added last.
    const DType f = dtypes::float32;
    const int64_t n = 3, ci = 8, co = 2, hw = 48;
    Arr x = random_arr({n, ci, hw, hw}, -1, 1, f, 41), w = random_arr({co, ci, 3, 3}, -1, 1, f, 42),
        dy = random_arr({n, co, hw, hw}, -1, 1, f, 43);
    Arr want{{co, ci, 3, 3}, std::vector<double>(static_cast<size_t>(co * ci * 9), 0.0)};
    for (int64_t o = 0; o < co; ++o)
      for (int64_t c = 0; c < ci; ++c)
        for (int64_t ky = 0; ky < 3; ++ky)
          for (int64_t kx = 0; kx < 3; ++kx) {
            double acc = 0;
            for (int64_t b = 0; b < n; ++b)
              for (int64_t y = 0; y < hw; ++y)
                for (int64_t xx = 0; xx < hw; ++xx) {
                  const int64_t iy = y + ky - 1, ix = xx + kx - 1;
                  if (iy < 0 || iy >= hw || ix < 0 || ix >= hw) continue;
                  acc += x.at({b, c, iy, ix}) * dy.at({b, o, y, xx});
                }
            want.v[static_cast<size_t>(((o * ci + c) * 3 + ky) * 3 + kx)] = acc;
          }
    Tensor tw = t_of(w).requires_grad_(true);
    (t_of(x).conv2d(tw, {}, 1, 1) * t_of(dy)).sum().backward();
    check_close(tw.grad(), want, tol_for(f, 100), "weight gradient in 3 chunks", f);
  }

  TEST_CASE("a first layer's weight gradient as products of rows, against a direct loop") {
    // Few input channels at stride 1 (weight_gradient_by_rows): x's taps along a row stored as
    // shifted copies, those of the first axis windows over the flattened rows. 64x64 outputs
    // of 16 channels are 256 KB of dy an image, so 6 images are 3 chunks whose partial sums are
    // added last; the second case has groups, dilation, a non-square filter and image, and
    // padding on one axis only.
    const DType f = dtypes::float32;
    struct Case {
      const char* name;
      int64_t n, ci, co, h, w, kh, kw, ph, pw, dh, dw, groups;
    };
    for (const Case& c :
         {Case{"3 -> 16, 5x5, padding 2, 3 chunks", 6, 3, 16, 64, 64, 5, 5, 2, 2, 1, 1, 1},
          Case{"2 -> 4 in 2 groups, 3x2, dilation 2x1", 2, 2, 4, 9, 7, 3, 2, 1, 0, 2, 1, 2}}) {
      INFO(c.name);
      const int64_t cig = c.ci / c.groups, cog = c.co / c.groups;
      const int64_t oh = c.h + 2 * c.ph - c.dh * (c.kh - 1),
                    ow = c.w + 2 * c.pw - c.dw * (c.kw - 1);
      Arr x = random_arr({c.n, c.ci, c.h, c.w}, -1, 1, f, 61),
          w = random_arr({c.co, cig, c.kh, c.kw}, -1, 1, f, 62),
          dy = random_arr({c.n, c.co, oh, ow}, -1, 1, f, 63);
      Arr want{{c.co, cig, c.kh, c.kw},
               std::vector<double>(static_cast<size_t>(c.co * cig * c.kh * c.kw), 0.0)};
      for (int64_t o = 0; o < c.co; ++o)
        for (int64_t ci = 0; ci < cig; ++ci)
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              double acc = 0;
              for (int64_t b = 0; b < c.n; ++b)
                for (int64_t y = 0; y < oh; ++y)
                  for (int64_t xx = 0; xx < ow; ++xx) {
                    const int64_t iy = y + ky * c.dh - c.ph, ix = xx + kx * c.dw - c.pw;
                    if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                    acc += x.at({b, (o / cog) * cig + ci, iy, ix}) * dy.at({b, o, y, xx});
                  }
              want.v[static_cast<size_t>(((o * cig + ci) * c.kh + ky) * c.kw + kx)] = acc;
            }
      Tensor tw = t_of(w).requires_grad_(true);
      (t_of(x).conv2d(tw, {}, 1, {c.ph, c.pw}, {c.dh, c.dw}, c.groups) * t_of(dy)).sum().backward();
      check_close(tw.grad(), want, tol_for(f, 400), c.name, f);
    }
  }

  TEST_CASE("a first layer's 5x5 weight gradient on a 16-lane CPU: 4 x 5 vector accumulators") {
    // beautiful_mnist's first convolution (1 -> 32 channels, 5x5, 28x28 input) at batch 16:
    // products of rows, whose tile takes 4 output channels x the filter's 5 columns, each a
    // vector of 16 pixels: 320 accumulator lanes (batch 512 on a 2-core Xeon: 9.2 -> 3.2 ms;
    // the fitted 4 x 1 x 8 tile ran at half that speed).
    const tg::RendererCaps caps = cpu_caps();
    if (caps.vector_lanes < 16 || tg::knobs::NOOPT) return;
    CHECK(accumulator_lanes(
              [] {
                auto x = Tensor::rand({16, 1, 28, 28}, dtypes::float32, "CPU");
                auto w = Tensor::rand({32, 1, 5, 5}, dtypes::float32, "CPU").requires_grad_(true);
                x.conv2d(w).sum().backward();
                w.grad().realize();
              },
              caps) == 320);
  }

  TEST_CASE("conv1d and conv3d against a direct loop") {
    const DType f = dtypes::float32;
    Arr x = random_arr({2, 4, 11}, -2, 2, f, 31), w = random_arr({6, 2, 4}, -1, 1, f, 32),
        b = random_arr({6}, -1, 1, f, 33);
    check_close(t_of(x).conv1d(t_of(w), t_of(b), 2, 1, 2, 2),
                conv_ref(x, w, &b, {2}, {{1, 1}}, {2}, 2), tol_for(f, 4), "conv1d s2 p1 d2 g2", f);
    check_close(t_of(x).conv1d(t_of(w), {}, 1, "same", 1, 2),
                conv_ref(x, w, nullptr, {1}, {{1, 2}}, {1}, 2), tol_for(f, 4), "conv1d same", f);
    Arr x3 = random_arr({1, 2, 5, 6, 4}, -2, 2, f, 34),
        w3 = random_arr({3, 2, 3, 2, 2}, -1, 1, f, 35);
    check_close(t_of(x3).conv3d(t_of(w3), {}, {2, 1, 1}, {1, 0, 1}),
                conv_ref(x3, w3, nullptr, {2, 1, 1}, {{1, 1}, {0, 0}, {1, 1}}, {1, 1, 1}, 1),
                tol_for(f, 4), "conv3d", f);
  }

  TEST_CASE("conv_transpose1d/2d/3d against a direct loop") {
    const DType f = dtypes::float32;
    struct TC {
      const char* name;
      Shape x, w;
      Ints s, p, op, d;
      int64_t g;
    };
    const std::vector<TC> cases{
        {"plain 3x2", {1, 3, 4, 5}, {3, 2, 3, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1},
        {"stride 2, padding 1", {2, 2, 4, 3}, {2, 3, 3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 1},
        {"stride (2,3), output_padding (1,2)",
         {1, 2, 3, 4},
         {2, 2, 3, 4},
         {2, 3},
         {1, 0},
         {1, 2},
         {1, 1},
         1},
        {"dilation 2, groups 2", {2, 4, 5, 4}, {4, 3, 2, 3}, {1, 2}, {1, 1}, {0, 1}, {2, 2}, 2},
        {"padding beyond the kernel",
         {1, 2, 6, 6},
         {2, 2, 2, 2},
         {1, 1},
         {2, 2},
         {0, 0},
         {1, 1},
         1},
    };
    for (const TC& c : cases) {
      INFO(c.name);
      Arr x = random_arr(c.x, -2, 2, f, 41), w = random_arr(c.w, -1, 1, f, 42),
          b = random_arr({c.w[1] * c.g}, -1, 1, f, 43);
      check_close(t_of(x).conv_transpose2d(t_of(w), t_of(b), c.s, c.p, c.op, c.g, c.d),
                  conv_t_ref(x, w, &b, c.s, c.p, c.op, c.d, c.g), tol_for(f, 4), c.name, f);
    }
    Arr x = random_arr({2, 2, 5}, -2, 2, f, 44), w = random_arr({2, 3, 3}, -1, 1, f, 45);
    check_close(t_of(x).conv_transpose1d(t_of(w), {}, 3, 1, 2),
                conv_t_ref(x, w, nullptr, {3}, {1}, {2}, {1}, 1), tol_for(f, 4), "conv_transpose1d",
                f);
    Arr x3 = random_arr({2, 2, 3, 4, 3}, -2, 2, f, 46),
        w3 = random_arr({2, 3, 2, 3, 2}, -1, 1, f, 47);
    check_close(t_of(x3).conv_transpose3d(t_of(w3), {}, {2, 1, 2}, {1, 0, 1}, {1, 0, 0}),
                conv_t_ref(x3, w3, nullptr, {2, 1, 2}, {1, 0, 1}, {1, 0, 0}, {1, 1, 1}, 1),
                tol_for(f, 4), "conv_transpose3d", f);
  }

  TEST_CASE("kernel counts on NULL: conv2d forward is one kernel, two when padded") {
    Tensor x = Tensor::empty({4, 8, 14, 14}, dtypes::float32, "NULL");
    // 12 output channels: not whole vectors of 16, so these are direct convolutions.
    Tensor w = Tensor::empty({12, 8, 3, 3}, dtypes::float32, "NULL");
    Tensor b = Tensor::empty({12}, dtypes::float32, "NULL");
    // A padded convolution stores its padded input first (no border tests per tap): 2.
    CHECK(kernels(x.conv2d(w).schedule()) == 1);
    CHECK(kernels(x.conv2d(w, b, 1, 1).schedule()) == 2);
    CHECK(kernels(x.conv2d(w, b, 2, "valid", 2).schedule()) == 1);
    Tensor wg = Tensor::empty({12, 4, 3, 2}, dtypes::float32, "NULL");
    CHECK(kernels(x.conv2d(wg, b, 1, "same", 1, 2).schedule()) == 2);
    CHECK(kernels(x.max_pool2d(2).schedule()) == 1);
    // 16 output channels and outputs narrower than 16 but not a multiple of 8 (12 here): the
    // input and the weights stored channels-last, their product, and (realized on its own, not
    // read by a next op) the result copied back to (N, C, H, W).
    Tensor w16 = Tensor::empty({16, 8, 3, 3}, dtypes::float32, "NULL");
    CHECK(kernels(x.conv2d(w16).schedule()) == 4);
    CHECK(kernels(x.conv2d(w16, {}, 1, 1).schedule()) == 4);
    // The bench shape, transposed convolution (its stride is a view too), pooling.
    Tensor xb = Tensor::empty({64, 32, 28, 28}, dtypes::float32, "NULL");
    Tensor wb = Tensor::empty({32, 32, 3, 3}, dtypes::float32, "NULL");
    CHECK(kernels(xb.conv2d(wb, {}, 1, 1).schedule()) == 2);
    Tensor wt = Tensor::empty({8, 4, 3, 3}, dtypes::float32, "NULL");
    CHECK(kernels(x.conv_transpose2d(wt, {}, 2, 1, 1).schedule()) == 2);
    // avg_pool's divisor is elementwise arithmetic on aranges: no second reduce.
    CHECK(kernels(x.avg_pool2d(3, 2, 1, true, false).schedule()) == 1);
    CHECK(kernels(x.avg_pool2d(3, 2, 1, true, true).schedule()) == 1);
    // Values and indices share the max: the max (kept, it has two users), the first-index
    // reduce, and a copy of the kept max into the values' own buffer.
    auto [pv, pi] = x.max_pool2d_with_indices(3, 2, 1);
    CHECK(kernels(Tensor::schedule_all({pv, pi})) == 3);
    // Separable per-axis contractions: one kernel per spatial axis.
    CHECK(kernels(x.adaptive_avg_pool2d({3, 5}).schedule()) == 2);
    CHECK(kernels(x.interpolate(Tensor::IntOrTuple{20, 9}, {}, "bilinear").schedule()) == 2);
  }

  TEST_CASE("both gradients of a channels-last convolution read one stored dy") {
    // The input gradient (dy padded by 4 around 12x12: 44% of its taps on padding) and the
    // weight gradient both take dy channels-last: one kernel stores it so, none copies it.
    Tensor x = Tensor::empty({4, 16, 16, 16}, dtypes::float32, "NULL").requires_grad_(true);
    Tensor w = Tensor::empty({16, 16, 5, 5}, dtypes::float32, "NULL").requires_grad_(true);
    Tensor dy = Tensor::empty({4, 16, 12, 12}, dtypes::float32, "NULL");
    (x.conv2d(w) * dy).sum().backward();
    int64_t stores_of_dy = 0;
    for (const tg::ScheduleItem& i : Tensor::schedule_all({x.grad(), w.grad()})) {
      if (i.kind != tg::ScheduleItem::Kind::Kernel) continue;
      bool reduces = false;
      int64_t out = 0;
      for (const tg::UOp* u : i.ast->toposort()) {
        reduces |= u->op == tg::Ops::REDUCE;
        if (u->op == tg::Ops::PARAM && std::get<int64_t>(u->arg) == 0) out = u->dtype.size;
      }
      stores_of_dy += !reduces && out == dy.numel();
    }
    CHECK(stores_of_dy == 1);
  }

  TEST_CASE("max_pool1d/2d with indices against a loop") {
    const DType f = dtypes::float32;
    struct PC {
      const char* name;
      Shape x;
      Ints k, s, p, d;
      bool ceil;
    };
    const std::vector<PC> cases{
        {"2x2", {1, 2, 6, 8}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
        {"3x2 stride 2 padding 1", {2, 3, 7, 9}, {3, 2}, {2, 2}, {1, 1}, {1, 1}, false},
        {"3x3 stride 1 dilation 2", {1, 2, 9, 8}, {3, 3}, {1, 1}, {1, 0}, {2, 2}, false},
        {"3x3 stride 2 ceil_mode", {2, 1, 8, 7}, {3, 3}, {2, 2}, {0, 1}, {1, 1}, true},
        {"2x2 stride 2 ceil_mode odd", {1, 2, 5, 7}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
        {"3D input (C, H, W)", {3, 5, 6}, {2, 3}, {1, 2}, {1, 1}, {1, 1}, false},
    };
    for (const PC& c : cases) {
      INFO(c.name);
      // Few distinct values so that ties happen and the first maximum counts.
      Arr x = map(random_arr(c.x, 0, 5, dtypes::int32, 51), [](double v) { return v - 2.5; });
      auto [vals, idxs] = max_pool2d_ref(x, c.k, c.s, c.p, c.d, c.ceil);
      auto [tv, ti] = t_of(x).max_pool2d_with_indices(c.k, c.s, c.p, c.d, c.ceil);
      check_close(tv, vals, {}, std::string(c.name) + " values", f);
      check_close(ti, idxs, {}, std::string(c.name) + " indices", dtypes::int32);
      check_close(t_of(x).max_pool2d(c.k, c.s, c.p, c.d, c.ceil), vals, {}, "no indices", f);
    }
    // Default stride = kernel; int input; 1-D.
    Arr xi = random_arr({2, 3, 6, 6}, -50, 50, dtypes::int32, 52);
    check_close(t_of(xi, dtypes::int32).max_pool2d(3),
                max_pool2d_ref(xi, {3, 3}, {3, 3}, {0, 0}, {1, 1}, false).first, {}, "int32",
                dtypes::int32);
    Arr x1 = random_arr({2, 3, 11}, -2, 2, f, 53);
    auto [t1, ti1] = t_of(x1).max_pool1d_with_indices(3, 2, 1); // rounds x1 to float32 first
    auto [v1, i1] =
        max_pool2d_ref(reshape(x1, {2, 3, 1, 11}), {1, 3}, {1, 2}, {0, 1}, {1, 1}, false);
    check_close(t1, reshape(v1, {2, 3, 6}), {}, "max_pool1d");
    check_close(ti1, reshape(i1, {2, 3, 6}), {}, "max_pool1d indices");
  }

  TEST_CASE("avg_pool1d/2d: count_include_pad, ceil_mode, divisor_override") {
    const DType f = dtypes::float32;
    Arr x = random_arr({2, 3, 7, 9}, -2, 2, f, 61);
    Tensor tx = t_of(x);
    for (bool ceil : {false, true})
      for (bool cip : {true, false}) {
        INFO("ceil_mode " << ceil << " count_include_pad " << cip);
        check_close(tx.avg_pool2d({3, 2}, Tensor::IntOrTuple{2, 2}, {1, 1}, ceil, cip),
                    avg_pool2d_ref(x, {3, 2}, {2, 2}, {1, 1}, ceil, cip, {}), tol_for(f, 4),
                    "3x2 s2 p1", f);
        check_close(tx.avg_pool2d(3, Tensor::IntOrTuple{2, 3}, {0, 1}, ceil, cip),
                    avg_pool2d_ref(x, {3, 3}, {2, 3}, {0, 1}, ceil, cip, {}), tol_for(f, 4),
                    "3x3 s(2,3) p(0,1)", f);
      }
    check_close(tx.avg_pool2d(2), avg_pool2d_ref(x, {2, 2}, {2, 2}, {0, 0}, false, true, {}),
                tol_for(f, 4), "default stride", f);
    check_close(tx.avg_pool2d(3, 1, 1, false, true, 5),
                avg_pool2d_ref(x, {3, 3}, {1, 1}, {1, 1}, false, true, 5), tol_for(f, 4),
                "divisor_override", f);
    Arr x1 = random_arr({2, 11}, -2, 2, f, 62);
    check_close(
        t_of(x1).avg_pool1d(4, 3, 2, true, false),
        reshape(avg_pool2d_ref(reshape(x1, {2, 1, 11}), {1, 4}, {1, 3}, {0, 2}, true, false, {}),
                {2, 5}),
        tol_for(f, 4), "avg_pool1d", f);
    // int input averages in float32.
    Arr xi = random_arr({1, 1, 4, 6}, -9, 9, dtypes::int32, 63);
    check_close(t_of(xi, dtypes::int32).avg_pool2d(2),
                avg_pool2d_ref(xi, {2, 2}, {2, 2}, {0, 0}, false, true, {}), tol_for(f, 4),
                "int32 input", f);
  }

  TEST_CASE("adaptive_avg_pool1d/2d with PyTorch's bins") {
    const DType f = dtypes::float32;
    Arr x = random_arr({2, 3, 7, 5}, -2, 2, f, 71);
    for (Ints o : {Ints{3, 2}, Ints{1, 1}, Ints{7, 5}, Ints{4, 8}}) {
      Arr want = generate({2, 3, o[0], o[1]}, [&](const std::vector<int64_t>& i) {
        const int64_t h0 = i[2] * 7 / o[0], h1 = ((i[2] + 1) * 7 + o[0] - 1) / o[0];
        const int64_t w0 = i[3] * 5 / o[1], w1 = ((i[3] + 1) * 5 + o[1] - 1) / o[1];
        double acc = 0;
        for (int64_t y = h0; y < h1; ++y)
          for (int64_t xx = w0; xx < w1; ++xx) acc += x.at({i[0], i[1], y, xx});
        return acc / static_cast<double>((h1 - h0) * (w1 - w0));
      });
      check_close(t_of(x).adaptive_avg_pool2d(o), want, tol_for(f, 4),
                  "output " + shape_s(Shape(o.begin(), o.end())), f);
    }
    Arr x1 = random_arr({3, 10}, -2, 2, f, 72);
    Arr want1 = generate({3, 4}, [&](const std::vector<int64_t>& i) {
      const int64_t a = i[1] * 10 / 4, b = ((i[1] + 1) * 10 + 3) / 4;
      double acc = 0;
      for (int64_t j = a; j < b; ++j) acc += x1.at({i[0], j});
      return acc / static_cast<double>(b - a);
    });
    check_close(t_of(x1).adaptive_avg_pool1d(4), want1, tol_for(f, 4), "1d", f);
  }

  TEST_CASE("interpolate: nearest, nearest-exact, bilinear with and without align_corners") {
    const DType f = dtypes::float32;
    Arr x = random_arr({2, 3, 5, 4}, -2, 2, f, 81);
    Tensor tx = t_of(x);
    // PyTorch's source index (float32 arithmetic) per output index.
    auto nearest = [](int64_t dst, float scale, int64_t in, bool exact) {
      const float src =
          exact ? (static_cast<float>(dst) + 0.5f) * scale : static_cast<float>(dst) * scale;
      return std::min(static_cast<int64_t>(std::floor(src)), in - 1);
    };
    auto lin = [](int64_t dst, float scale, bool ac) {
      return ac ? scale * static_cast<float>(dst)
                : std::max(scale * (static_cast<float>(dst) + 0.5f) - 0.5f, 0.0f);
    };
    for (bool exact : {false, true})
      for (Ints o : {Ints{8, 7}, Ints{3, 2}, Ints{5, 9}}) {
        const float sh = 5.0f / static_cast<float>(o[0]), sw = 4.0f / static_cast<float>(o[1]);
        Arr want = generate({2, 3, o[0], o[1]}, [&](const std::vector<int64_t>& i) {
          return x.at({i[0], i[1], nearest(i[2], sh, 5, exact), nearest(i[3], sw, 4, exact)});
        });
        check_close(tx.interpolate(o, {}, exact ? "nearest-exact" : "nearest"), want, {},
                    std::string(exact ? "nearest-exact " : "nearest ") +
                        shape_s(Shape(o.begin(), o.end())),
                    f);
      }
    for (bool ac : {false, true})
      for (Ints o : {Ints{9, 7}, Ints{3, 2}, Ints{1, 6}}) {
        const float sh = ac ? (o[0] > 1 ? 4.0f / static_cast<float>(o[0] - 1) : 0.0f)
                            : 5.0f / static_cast<float>(o[0]);
        const float sw = ac ? (o[1] > 1 ? 3.0f / static_cast<float>(o[1] - 1) : 0.0f)
                            : 4.0f / static_cast<float>(o[1]);
        Arr want = generate({2, 3, o[0], o[1]}, [&](const std::vector<int64_t>& i) {
          const double hs = lin(i[2], sh, ac), ws = lin(i[3], sw, ac);
          const int64_t h0 = std::min<int64_t>(static_cast<int64_t>(hs), 4),
                        w0 = std::min<int64_t>(static_cast<int64_t>(ws), 3);
          const int64_t h1 = std::min<int64_t>(h0 + 1, 4), w1 = std::min<int64_t>(w0 + 1, 3);
          const double lh = hs - static_cast<double>(h0), lw = ws - static_cast<double>(w0);
          return (1 - lh) *
                     ((1 - lw) * x.at({i[0], i[1], h0, w0}) + lw * x.at({i[0], i[1], h0, w1})) +
                 lh * ((1 - lw) * x.at({i[0], i[1], h1, w0}) + lw * x.at({i[0], i[1], h1, w1}));
        });
        check_close(tx.interpolate(o, {}, "bilinear", ac), want, tol_for(f, 4),
                    std::string("bilinear align_corners=") + (ac ? "true " : "false ") +
                        shape_s(Shape(o.begin(), o.end())),
                    f);
      }
    // scale_factor: size floor(in * s), source step 1/s.
    Arr want = generate({2, 3, 10, 6}, [&](const std::vector<int64_t>& i) {
      return x.at(
          {i[0], i[1], nearest(i[2], 0.5f, 5, false), nearest(i[3], 1.0f / 1.5f, 4, false)});
    });
    check_close(tx.interpolate({}, {2.0, 1.5}), want, {}, "scale_factor (2, 1.5)", f);
    // bilinear by scale_factor 1.7: size floor(5 * 1.7) = 8 and floor(4 * 1.7) = 6, but the
    // source step is 1/1.7 (PyTorch without recompute_scale_factor), not in/out.
    const float st = static_cast<float>(1.0 / 1.7);
    Arr wantb = generate({2, 3, 8, 6}, [&](const std::vector<int64_t>& i) {
      const double hs = lin(i[2], st, false), ws = lin(i[3], st, false);
      const int64_t h0 = std::min<int64_t>(static_cast<int64_t>(hs), 4),
                    w0 = std::min<int64_t>(static_cast<int64_t>(ws), 3);
      const int64_t h1 = std::min<int64_t>(h0 + 1, 4), w1 = std::min<int64_t>(w0 + 1, 3);
      const double lh = hs - static_cast<double>(h0), lw = ws - static_cast<double>(w0);
      return (1 - lh) * ((1 - lw) * x.at({i[0], i[1], h0, w0}) + lw * x.at({i[0], i[1], h0, w1})) +
             lh * ((1 - lw) * x.at({i[0], i[1], h1, w0}) + lw * x.at({i[0], i[1], h1, w1}));
    });
    check_close(tx.interpolate({}, {1.7}, "bilinear"), wantb, tol_for(f, 4),
                "bilinear scale_factor 1.7", f);
    // 1-D linear.
    Arr x1 = random_arr({1, 2, 6}, -2, 2, f, 82);
    Arr want1 = generate({1, 2, 4}, [&](const std::vector<int64_t>& i) {
      const double s = lin(i[2], 1.5f, false);
      const int64_t a = static_cast<int64_t>(s), b = std::min<int64_t>(a + 1, 5);
      return (1 - (s - static_cast<double>(a))) * x1.at({i[0], i[1], a}) +
             (s - static_cast<double>(a)) * x1.at({i[0], i[1], b});
    });
    check_close(t_of(x1).interpolate(Tensor::IntOrTuple{4}, {}, "linear"), want1, tol_for(f, 4),
                "linear", f);
  }

  TEST_CASE("interpolate of uint8 images: PyTorch's integer bilinear, byte for byte") {
    // Its uint8 kernel: one pass per axis (the last first) with integer weights, each pass
    // rounding to uint8. Expected bytes from torch 2.9.1's F.interpolate(..., mode="bilinear");
    // large neighbour differences (0 next to 255) included.
    const std::vector<uint8_t> px{0,   255, 17,  200, 3,   90, 4,  250, 31, 128,
                                  255, 0,   255, 0,   255, 7,  77, 177, 1,  99};
    Tensor x = Tensor::from_vector(px, Shape{1, 1, 4, 5});
    auto bytes = [](const Tensor& t) {
      std::vector<int> v;
      for (uint8_t b : t.to_vector<uint8_t>()) v.push_back(b);
      return v;
    };
    Tensor down = x.interpolate(Tensor::IntOrTuple{3, 7}, {}, "bilinear");
    CHECK(down.dtype() == dtypes::uint8);
    CHECK(bytes(down) == std::vector<int>{15, 129, 168, 56, 139, 109, 24,  173, 75, 74, 253,
                                          84, 91,  192, 48, 57,  101, 190, 55,  54, 125});
    CHECK(bytes(x.interpolate(Tensor::IntOrTuple{6, 2}, {}, "bilinear")) ==
          std::vector<int>{191, 151, 109, 103, 32, 57, 58, 62, 62, 45, 60, 26});
    CHECK(bytes(x.interpolate(Tensor::IntOrTuple{3, 7}, {}, "bilinear", true)) ==
          std::vector<int>{0,  170, 176, 17, 139, 134, 3,   173, 59, 86, 253,
                           95, 74,  192, 7,  54,  110, 177, 60,  34, 99});
  }

  TEST_CASE("pooling a permuted (non-contiguous) input; zero-size batches") {
    const DType f = dtypes::float32;
    Arr xs = random_arr({2, 7, 6, 3}, -2, 2, f, 91);
    Tensor tx = t_of(xs).permute({0, 3, 1, 2}); // (2, 3, 7, 6) read through a permute
    Arr x = permute(xs, {0, 3, 1, 2});
    auto [mv, mi] = max_pool2d_ref(x, {3, 2}, {2, 1}, {1, 0}, {1, 2}, false);
    auto [tv, ti] = tx.max_pool2d_with_indices({3, 2}, Tensor::IntOrTuple{2, 1}, {1, 0}, {1, 2});
    check_close(tv, mv, {}, "max_pool2d of a permuted input", f);
    check_close(ti, mi, {}, "indices of a permuted input", dtypes::int32);
    check_close(tx.avg_pool2d(3, 2, 1, true, false),
                avg_pool2d_ref(x, {3, 3}, {2, 2}, {1, 1}, true, false, {}), tol_for(f, 4),
                "avg_pool2d of a permuted input", f);
    // A batch of 0 gives an empty result of the right shape.
    Tensor e = Tensor::zeros({0, 3, 5, 5});
    Tensor ce = e.conv2d(Tensor::ones({4, 3, 3, 3}), Tensor::ones({4}), 1, 1);
    CHECK(ce.shape() == Shape{0, 4, 5, 5});
    CHECK(ce.to_vector<float>().empty());
    Tensor pe = e.max_pool2d(2);
    CHECK(pe.shape() == Shape{0, 3, 2, 2});
    CHECK(pe.to_vector<float>().empty());
    CHECK(e.mse_loss(e, "sum").item<float>() == 0);
  }

  TEST_CASE("bad input to conv and pooling raises tg::Error naming the shapes") {
    Tensor x = Tensor::zeros({2, 4, 6, 6}), w = Tensor::zeros({8, 3, 3, 3});
    CHECK(has(error_of([&] { (void)x.conv2d(w); }),
              "(2, 4, 6, 6) has 4 channels but weight (8, 3, 3, 3)"));
    CHECK(has(error_of([&] {
                (void)x.conv2d(Tensor::zeros({6, 2, 3, 3}), {}, 1, 0, 1, 3);
              }),
              "groups=3 does not divide"));
    CHECK(has(error_of([&] {
                (void)x.conv2d(Tensor::zeros({8, 4, 9, 3}));
              }),
              "kernel size (9, 3)"));
    CHECK(has(error_of([&] { (void)x.conv2d(Tensor::zeros({8, 4, 9, 3})); }), "(2, 4, 6, 6)"));
    CHECK(has(error_of([&] { (void)x.conv2d(Tensor::zeros({8, 4, 3})); }), "weight must have 4"));
    CHECK(has(error_of([&] {
                (void)x.conv2d(Tensor::zeros({8, 4, 3, 3}), Tensor::zeros({7}));
              }),
              "bias of shape (7,)"));
    CHECK(has(error_of([&] {
                (void)x.conv2d(Tensor::zeros({8, 4, 3, 3}), {}, 2, "same");
              }),
              "'same' is not supported for strided"));
    CHECK(has(error_of([&] {
                (void)x.conv2d(Tensor::zeros({8, 4, 3, 3}), {}, {1, 2, 3});
              }),
              "stride (1, 2, 3) must be one int or 2 ints"));
    CHECK(has(error_of([&] {
                (void)x.conv2d(Tensor::zeros({8, 4, 3, 3}), {}, 1, "full");
              }),
              "'full'"));
    CHECK(has(error_of([&] {
                (void)x.conv_transpose2d(Tensor::zeros({3, 2, 3, 3}));
              }),
              "has 4 channels but weight (3, 2, 3, 3)"));
    CHECK(has(error_of([&] {
                (void)x.conv_transpose2d(Tensor::zeros({4, 2, 3, 3}), {}, 2, 0, 2);
              }),
              "output_padding (2, 2) must be smaller"));
    CHECK(has(error_of([&] { (void)x.max_pool2d(7); }), "kernel size (7, 7)"));
    CHECK(has(error_of([&] { (void)x.max_pool2d(2, {}, 2); }), "at most half"));
    CHECK(has(error_of([&] { (void)x.interpolate(); }), "exactly one of size and scale_factor"));
    CHECK(has(error_of([&] { (void)x.interpolate(Tensor::IntOrTuple{4}, {}, "linear"); }),
              "needs 3-D input"));
    CHECK(has(error_of([&] { (void)x.interpolate(Tensor::IntOrTuple{4}, {}, "nearest", true); }),
              "align_corners"));
  }
}
