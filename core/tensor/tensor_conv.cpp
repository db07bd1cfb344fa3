// Convolution, pooling and resizing, as tinygrad builds them: a convolution or
// a pool is a sliding-window view of the (padded) input made by movement ops only (`pool_view`,
// tinygrad's Tensor._pool: repeat, shrink, reshape, permute), then a multiply and a reduce, so
// the whole forward pass is one kernel with no copy of the windows. Resizing and adaptive pooling
// are per-axis contractions with a weight matrix built from aranges on the device.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "gradient.hpp"
#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;
using Ints = std::vector<int64_t>;

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; } // a >= 0, b > 0

std::string ints_str(const Ints& v) {
  std::string r = "(";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r + (v.size() == 1 ? ",)" : ")");
}

// PyTorch's int-or-tuple: one value for every spatial dimension, or exactly one per dimension.
Ints expand_arg(const Tensor::IntOrTuple& a, size_t n, const std::string& op, const char* what,
                int64_t min_value) {
  Ints r;
  if (a.v.size() == 1)
    r.assign(n, a.v[0]);
  else if (a.v.size() == n)
    r = a.v;
  else
    throw Error(op + ": " + what + " " + ints_str(a.v) + " must be one int or " +
                std::to_string(n) + " ints");
  for (int64_t x : r)
    if (x < min_value)
      throw Error(op + ": " + what + " " + ints_str(a.v) +
                  " must be >= " + std::to_string(min_value));
  return r;
}

// tinygrad's Tensor._pool: (..., *i) -> (..., *o, *k), the k-windows with stride s and dilation
// d of the last len(k) dimensions, by movement ops only.
Tensor pool_view(const Tensor& x, const Ints& k, const Ints& s, const Ints& d,
                 const std::string& op) {
  const size_t nk = k.size(), nd = static_cast<size_t>(x.ndim()) - nk;
  Ints in(nk), out(nk);
  for (size_t j = 0; j < nk; ++j) {
    in[j] = x.shape()[nd + j];
    const int64_t span = d[j] * (k[j] - 1) + 1;
    if (span > in[j])
      throw Error(op + ": kernel size " + ints_str(k) + " (dilation " + ints_str(d) +
                  ") is larger than the padded input " + shape_str(x.shape()) +
                  " in its spatial dimension " + std::to_string(j));
    out[j] = cdiv(in[j] - (span - 1), s[j]);
  }
  bool overlap = false;
  for (size_t j = 0; j < nk; ++j) overlap |= k[j] > s[j] || d[j] != 1;
  Pairs keep(nd, {0, 0});
  for (size_t j = 0; j < nd; ++j) keep[j] = {0, x.shape()[j]};
  Shape lead(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(nd));
  Shape order;
  for (size_t j = 0; j < nd; ++j) order.push_back(static_cast<int64_t>(j));
  if (overlap) {
    // Repeat the input so that windows become rows: (k, i*f + d) rows, one shifted by d each.
    Ints f(nk), reps(nd, 1);
    for (size_t j = 0; j < nk; ++j) {
      f[j] = 1 + (out[j] * s[j] > in[j] - d[j] * (k[j] - 1) ? 1 : 0);
      reps.push_back(cdiv(k[j] * (in[j] * f[j] + d[j]), in[j]));
    }
    Tensor t = x.repeat(reps);
    Pairs r1 = keep;
    Shape s1 = lead;
    for (size_t j = 0; j < nk; ++j) {
      r1.emplace_back(0, k[j] * (in[j] * f[j] + d[j]));
      s1.push_back(k[j]);
      s1.push_back(in[j] * f[j] + d[j]);
    }
    t = t.shrink(r1).reshape(s1);
    Pairs r2 = keep;
    Shape s2 = lead;
    for (size_t j = 0; j < nk; ++j) {
      r2.emplace_back(0, k[j]);
      r2.emplace_back(0, out[j] * s[j]);
      s2.push_back(k[j]);
      s2.push_back(out[j]);
      s2.push_back(s[j]);
    }
    t = t.shrink(r2).reshape(s2);
    Pairs r3 = keep;
    Shape s3 = lead;
    for (size_t j = 0; j < nk; ++j) {
      r3.emplace_back(0, k[j]);
      r3.emplace_back(0, out[j]);
      r3.emplace_back(0, 1);
      s3.push_back(k[j]);
      s3.push_back(out[j]);
    }
    t = t.shrink(r3).reshape(s3);
    for (size_t j = 0; j < nk; ++j) order.push_back(static_cast<int64_t>(nd + 2 * j + 1));
    for (size_t j = 0; j < nk; ++j) order.push_back(static_cast<int64_t>(nd + 2 * j));
    return t.permute(order);
  }
  // Non-overlapping windows: pad to o*s, split each axis in (o, s), keep the first k of s.
  Pairs p(nd, {0, 0}), r1 = keep, r2 = keep;
  Shape s1 = lead;
  for (size_t j = 0; j < nk; ++j) {
    p.emplace_back(0, std::max<int64_t>(0, out[j] * s[j] - in[j]));
    r1.emplace_back(0, out[j] * s[j]);
    s1.push_back(out[j]);
    s1.push_back(s[j]);
    r2.emplace_back(0, out[j]);
    r2.emplace_back(0, k[j]);
  }
  Tensor t = x.pad(p).shrink(r1).reshape(s1).shrink(r2);
  for (size_t j = 0; j < nk; ++j) order.push_back(static_cast<int64_t>(nd + 2 * j));
  for (size_t j = 0; j < nk; ++j) order.push_back(static_cast<int64_t>(nd + 2 * j + 1));
  return t.permute(order);
}

// Pads only the last pads.size() dimensions.
Tensor pad_spatial(const Tensor& x, const Pairs& pads, Scalar value = 0) {
  Pairs p(static_cast<size_t>(x.ndim()) - pads.size(), {0, 0});
  p.insert(p.end(), pads.begin(), pads.end());
  return x.pad(p, value);
}

Tensor conv_core(const Tensor& x, const Tensor& w, const Tensor::OptTensor& bias,
                 const Ints& stride, const Pairs& pads, const Ints& dilation, int64_t groups,
                 const std::string& op);
bool channels_last_pays(const Tensor& x, const Tensor& w, const Ints& k, const Ints& stride,
                        const Pairs& pads, const Ints& dilation, int64_t groups);
Tensor finish_conv(Tensor r, const Tensor& x, const Tensor& w, const Tensor::OptTensor& bias,
                   const Ints& stride, const Pairs& pads, const Ints& dilation, int64_t groups,
                   const std::string& op);

// The fewest images, dividing the batch n, whose `per_image` (bytes, pixels) reach `target`:
// a chunk of the batch whose partial sums a weight gradient adds last (the whole batch when
// none reaches it).
int64_t images_per_chunk(int64_t n, int64_t per_image, int64_t target) {
  for (int64_t c = 1; c <= n; ++c)
    if (n % c == 0 && c * per_image >= target) return c;
  return n;
}

// s-1 zeros between the elements of each spatial dimension: (.., n) -> (.., (n-1)*s+1).
Tensor dilate_spatial(const Tensor& x, const Ints& s) {
  const size_t nsp = s.size(), lead = static_cast<size_t>(x.ndim()) - nsp;
  bool any = false;
  for (int64_t v : s) any |= v > 1;
  if (!any) return x;
  Shape s1, s2;
  Pairs p, r;
  for (size_t j = 0; j < lead; ++j) {
    const int64_t n = x.size(static_cast<int64_t>(j));
    s1.push_back(n);
    s2.push_back(n);
    p.emplace_back(0, 0);
    r.emplace_back(0, n);
  }
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t n = x.size(static_cast<int64_t>(lead + j));
    s1.push_back(n);
    s1.push_back(1);
    p.emplace_back(0, 0);
    p.emplace_back(0, s[j] - 1);
    s2.push_back(n * s[j]);
    r.emplace_back(0, (n - 1) * s[j] + 1);
  }
  PadArg keep;
  for (auto [a, b] : r) keep.emplace_back(a, b);
  return x.reshape(s1).pad(p).reshape(s2).shrink(keep);
}

// The weight gradient for few input channels per group (a first layer's 1 or 3) with a stride
// or in three dimensions, where the matrix product of weight_gradient has too few rows for its
// tile and weight_gradient_by_rows does not apply: a convolution of x by dy with the batch as
// its input channels, in groups.
Tensor weight_gradient_by_batch(const Tensor& x, const Tensor& g, const Ints& k, const Ints& stride,
                                const Pairs& pads, const Ints& dilation, int64_t groups) {
  const size_t nsp = k.size();
  const int64_t n = x.size(0), cin = x.size(1), cout = g.size(1);
  const int64_t cig = cin / groups, cog = cout / groups;
  Ints o;
  for (size_t j = 0; j < nsp; ++j) o.push_back(g.size(static_cast<int64_t>(2 + j)));
  // The batch is cut into C chunks of about 1 MB of input each, reduced as separate groups
  // whose partial sums are added last. One pass over the whole batch per output tile would
  // stream it from memory for every tile (batch 512: 6.7 GFLOP/s).
  //   x padded (C, N/C, G, Cin/G, *i) -> (Cin/G, G*C*N/C, *i)
  //   dy (C, N/C, G, Cout/G, *o) -> (G*C*Cout/G, N/C, *o), G*C groups.
  Tensor xp = pad_spatial(x, pads);
  int64_t image_bytes = cin * static_cast<int64_t>(x.dtype().itemsize());
  for (size_t j = 0; j < nsp; ++j) image_bytes *= xp.size(static_cast<int64_t>(2 + j));
  int64_t per_chunk = 1;
  for (int64_t c = n; c >= 1; --c)
    if (n % c == 0 && c * image_bytes <= (int64_t{1} << 20)) {
      per_chunk = c;
      break;
    }
  const int64_t chunks = n / per_chunk;
  Shape xs{chunks, per_chunk, groups, cig}, xs2{cig, groups * n};
  Shape gs{chunks, per_chunk, groups, cog}, gs2{groups * chunks * cog, per_chunk};
  Shape order{3, 2, 0, 1}, gorder{2, 0, 3, 1};
  Shape parts{cig, groups, chunks, cog};
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t ip = xp.size(static_cast<int64_t>(2 + j));
    xs.push_back(ip);
    xs2.push_back(ip);
    gs.push_back(o[j]);
    gs2.push_back(o[j]);
    order.push_back(static_cast<int64_t>(4 + j));
    gorder.push_back(static_cast<int64_t>(4 + j));
  }
  // Stored channels-last first, so that the kernel's loads run along Cin/G (an output axis it
  // vectorizes) instead of along the reduced window.
  Shape last{0};
  for (size_t j = 0; j < nsp; ++j) last.push_back(static_cast<int64_t>(2 + j));
  last.push_back(1);
  Shape back{0, static_cast<int64_t>(nsp + 1)};
  for (size_t j = 0; j < nsp; ++j) back.push_back(static_cast<int64_t>(1 + j));
  const Tensor xcl = xp.permute(last).contiguous().permute(back);
  const Tensor xt = xcl.reshape(xs).permute(order).reshape(xs2);
  const Tensor gt = g.reshape(gs).permute(gorder).reshape(gs2);
  Tensor dw = conv_core(xt, gt, std::nullopt, dilation, Pairs(nsp, {0, 0}), stride, groups * chunks,
                        "conv backward (weight)"); // (Cin/G, G*C*Cout/G, *k')
  Shape summed{cig, cout};
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t kj = dw.size(static_cast<int64_t>(2 + j));
    parts.push_back(kj);
    summed.push_back(kj);
  }
  if (chunks > 1) dw = dw.reshape(parts).sum(std::vector<int64_t>{2});
  dw = dw.reshape(summed);
  PadArg keep{{0, cig}, {0, cout}};
  for (int64_t v : k) keep.emplace_back(0, v);
  dw = dw.shrink(keep).transpose(0, 1);
  return dw;
}

// The weight gradient for few input channels per group (a first layer's 1 or 3) at stride 1 in
// one or two spatial dimensions, as products of contiguous runs:
//   dw[co, ci, *k] = sum_{n, *o} dy[n, co, *o] * x(n, ci, *o + *k * d)
// The last axis's taps are stored as shifted copies of x cropped to the output width,
//   xs[kl, n, ci, *i', ol] = x(n, ci, *i', ol + kl * d),
// whose rows are as wide as dy's: an image's pixels are then one contiguous run in dy and in
// xs, and a tap of the first axis is that run moved by whole rows (a window over the flattened
// rows with a dilation of d0 * ol). The reduce runs along contiguous memory in both operands,
// whole vectors wide whatever the image width; weight_gradient_by_batch reads 8-lane rows of
// a 24-wide image at 51 GFLOP/s. The batch is cut into chunks of about 512 KB of dy whose
// partial sums are added last, so that a chunk stays in cache for every output tile.
Tensor weight_gradient_by_rows(const Tensor& x, const Tensor& g, const Ints& k, const Pairs& pads,
                               const Ints& dilation, int64_t groups) {
  const size_t nsp = k.size(), last = nsp - 1;
  const auto sp = [](size_t j) { return static_cast<int64_t>(j); };
  const int64_t n = x.size(0), cin = x.size(1), cout = g.size(1);
  const int64_t cig = cin / groups, cog = cout / groups, ol = g.size(sp(1 + nsp));
  int64_t pixels = 1;
  for (size_t j = 0; j < nsp; ++j) pixels *= g.size(sp(2 + j));
  // xs (kl, N, Cin, *i', ol), stored.
  const Tensor taps = pool_view(pad_spatial(x, pads), {k[last]}, {1}, {dilation[last]},
                                "conv backward (weight)"); // (N, Cin, *i', ol, kl)
  Shape to_front{sp(nsp + 2)};
  for (size_t j = 0; j < nsp + 2; ++j) to_front.push_back(sp(j));
  Tensor xs = taps.permute(to_front).contiguous();
  int64_t rows = 1;
  for (size_t j = 0; j < last; ++j) rows *= xs.size(sp(3 + j));
  xs = xs.reshape({k[last], n, cin, rows * ol});
  // The first axis's taps: windows over the flattened rows -> (kl, N, Cin, pixels, *k').
  Ints front_k;
  if (nsp == 2) {
    front_k.push_back(k[0]);
    xs = pool_view(xs, {k[0]}, {1}, {dilation[0] * ol}, "conv backward (weight)");
  }
  const int64_t bytes_per_image = cout * pixels * static_cast<int64_t>(g.dtype().itemsize());
  const int64_t per_chunk = images_per_chunk(n, bytes_per_image, int64_t{1} << 19);
  const int64_t chunks = n / per_chunk;
  // (kl, C, P, G, Cin/G, pixels, *k') -> (C, G, 1, Cin/G, *k', kl, P, pixels)
  Shape xsplit{k[last], chunks, per_chunk, groups, cig, pixels};
  for (int64_t v : front_k) xsplit.push_back(v);
  Shape xorder{1, 3, 4};
  for (size_t j = 0; j < front_k.size(); ++j) xorder.push_back(sp(6 + j));
  xorder.push_back(0), xorder.push_back(2), xorder.push_back(5);
  const Tensor xv = xs.reshape(xsplit).permute(xorder).unsqueeze(2);
  // dy (C, P, G, Cout/G, pixels) -> (C, G, Cout/G, 1, *1, 1, P, pixels)
  Shape gv{chunks, groups, cog, 1};
  for (size_t j = 0; j < nsp; ++j) gv.push_back(1);
  gv.push_back(per_chunk), gv.push_back(pixels);
  const Tensor gt =
      g.reshape({chunks, per_chunk, groups, cog, pixels}).permute({0, 2, 3, 1, 4}).reshape(gv);
  Tensor dw = (xv * gt).sum(std::vector<int64_t>{sp(nsp + 4), sp(nsp + 5)}); // (C, G, cog, cig, *k)
  dw = chunks > 1 ? dw.sum(std::vector<int64_t>{0})
                  : dw.reshape(Shape(dw.shape().begin() + 1, dw.shape().end()));
  Shape wshape{cout, cig};
  for (int64_t v : k) wshape.push_back(v);
  return dw.reshape(wshape);
}

// x (N, C, *i) stored channels-last, (N, *i, C), and seen in its own order again: a pixel's
// channels are then contiguous, the reduce the CPU a @ b tile reads along (weight_gradient,
// conv_channels_last). An x that already is such a view (a convolution's dy, stored once for
// both of its gradients) is returned as it is.
Tensor channels_last(const Tensor& x) {
  const size_t nsp = static_cast<size_t>(x.ndim()) - 2;
  const auto sp = [](size_t j) { return static_cast<int64_t>(j); };
  Shape last{0}, back{0, sp(nsp + 1)};
  for (size_t j = 0; j < nsp; ++j) last.push_back(sp(2 + j)), back.push_back(sp(1 + j));
  last.push_back(1);
  const UOpPtr& u = x.uop();
  if (u->op == Ops::PERMUTE && std::get<Shape>(u->arg) == back && u->src[0]->op == Ops::CONTIGUOUS)
    return x;
  return x.permute(last).contiguous().permute(back);
}

// The same as stored: (N, *i, C).
Tensor channels_last_stored(const Tensor& x) {
  const size_t nsp = static_cast<size_t>(x.ndim()) - 2;
  Shape last{0};
  for (size_t j = 0; j < nsp; ++j) last.push_back(static_cast<int64_t>(2 + j));
  last.push_back(1);
  return channels_last(x).permute(last);
}

// The weight gradient of a convolution as a matrix product over the pixels p = (n, *o):
//   dw[g, ci, *k, co] = sum_p x(n, g, ci, o * s + k * d) * dy(n, g, co, o)
// with both operands stored channels-last, so that it is an a @ b for the CPU matmul tile: the
// input channels are the rows (one window tap's channels are contiguous) and dy's rows are
// vectors of output channels. The pixels are cut into chunks of whole images (512 to 2048
// pixels, fewer the more output channels) whose partial sums are added last: a chunk's dy stays
// in cache while the tiles of that chunk run, and the partials (chunks x the weights) cost
// little beside the product.
Tensor weight_gradient(const Tensor& x, const Tensor& g, const Ints& k, const Ints& stride,
                       const Pairs& pads, const Ints& dilation, int64_t groups) {
  const size_t nsp = k.size();
  const auto sp = [](size_t j) { return static_cast<int64_t>(j); };
  const int64_t n = x.size(0), cin = x.size(1), cout = g.size(1);
  const int64_t cig = cin / groups, cog = cout / groups;
  int64_t pixels = 1;
  for (size_t j = 0; j < nsp; ++j) pixels *= g.size(sp(2 + j));
  // At least `target` pixels a chunk, in whole images: the fewest images that divide the batch
  // (20x20 images at batch 512: 8 of them, 64 chunks). The target keeps a chunk's dy (pixels x
  // output channels) near 512 KB, within 512 and 2048 pixels: 2048 for beautiful_mnist's 32 and
  // 64 channels (1024-8192 measured), 512 for hlb_cifar10's 256 and 512 (its 256 -> 256 at 8x8
  // 84 -> 54 ms, 256 -> 512 180 -> 114 ms; 256 pixels were slower again).
  const int64_t target = std::clamp<int64_t>(131072 / std::max<int64_t>(cog, 1), 512, 2048);
  const int64_t per_chunk = images_per_chunk(n, pixels, target);
  const int64_t chunks = n / per_chunk;
  // The padding is stored: here the taps are output axes and the pixels the reduce, whose tile
  // was tuned on ungated loads.
  const Tensor windows = pool_view(channels_last(pad_spatial(x, pads)), k, stride, dilation,
                                   "conv backward (weight)"); // (N, Cin, *o, *k)
  // (C, N/C, G, Cin/G, *o, *k) -> (C, N/C, *o, G, Cin/G, *k, 1)
  Shape xs{chunks, per_chunk, groups, cig}, xorder{0, 1};
  for (size_t j = 0; j < nsp; ++j) xs.push_back(windows.size(sp(2 + j)));
  for (size_t j = 0; j < nsp; ++j) xs.push_back(k[j]);
  for (size_t j = 0; j < nsp; ++j) xorder.push_back(sp(4 + j));
  xorder.push_back(2), xorder.push_back(3);
  for (size_t j = 0; j < nsp; ++j) xorder.push_back(sp(4 + nsp + j));
  const Tensor xv = windows.reshape(xs).permute(xorder).unsqueeze(-1);
  // dy stored channels-last (N, *o, G * Cout/G) -> (C, N/C, *o, G, 1, *1, Cout/G)
  Shape gv{chunks, per_chunk};
  for (size_t j = 0; j < nsp; ++j) gv.push_back(g.size(sp(2 + j)));
  gv.push_back(groups), gv.push_back(1);
  for (size_t j = 0; j < nsp; ++j) gv.push_back(1);
  gv.push_back(cog);
  const Tensor gt = channels_last_stored(g).reshape(gv);
  std::vector<int64_t> pixel_axes{1};
  for (size_t j = 0; j < nsp; ++j) pixel_axes.push_back(sp(2 + j));
  Tensor dw = (xv * gt).sum(pixel_axes); // (C, G, Cin/G, *k, Cout/G)
  // The chunks' partial sums, added in their own layout (contiguous reads) and only then
  // permuted: a sum read through the permutation strides across the partials (2 GB/s).
  if (chunks > 1)
    dw = dw.sum(std::vector<int64_t>{0}).contiguous();
  else
    dw = dw.reshape(Shape(dw.shape().begin() + 1, dw.shape().end()));
  // (G, Cin/G, *k, Cout/G) -> (G, Cout/G, Cin/G, *k) -> (Cout, Cin/G, *k)
  Shape worder{0, sp(nsp + 2), 1}, wshape{cout, cig};
  for (size_t j = 0; j < nsp; ++j) worder.push_back(sp(2 + j));
  for (int64_t v : k) wshape.push_back(v);
  return dw.permute(worder).reshape(wshape);
}

// The gradients of a convolution (PyTorch's convolution_backward). Autograd through the
// sliding-window view would work too, but its kernels sum over every repeat of the window
// trick with index arithmetic per term, tens of times slower than these:
//   dx = the transposed convolution of dy with w (dy dilated by the stride, w flipped),
//   dw = a matrix product of the input's windows and dy over the pixels (weight_gradient).
std::vector<UOpPtr> conv_vjp(const UOpPtr& grad, std::span<const UOpPtr> inputs, const Ints& stride,
                             const Pairs& pads, const Ints& dilation, int64_t groups) {
  const Tensor g0 = detail::make(grad, {}), x = detail::make(inputs[0], {}),
               w = detail::make(inputs[1], {});
  const size_t nsp = stride.size();
  const int64_t cin = x.size(1), cout = w.size(0);
  const int64_t cig = cin / groups, cog = cout / groups;
  Ints k, o, ins;
  for (size_t j = 0; j < nsp; ++j) {
    k.push_back(w.size(static_cast<int64_t>(2 + j)));
    o.push_back(g0.size(static_cast<int64_t>(2 + j)));
    ins.push_back(x.size(static_cast<int64_t>(2 + j)));
  }
  std::vector<int64_t> spatial;
  for (size_t j = 0; j < nsp; ++j) spatial.push_back(static_cast<int64_t>(j));

  // dx: (G, Cout/G, Cin/G, *k) -> (G*Cin/G, Cout/G, *k), flipped.
  Shape wg{groups, cog, cig};
  for (int64_t v : k) wg.push_back(v);
  std::vector<int64_t> flip_axes;
  for (size_t j = 0; j < nsp; ++j) flip_axes.push_back(static_cast<int64_t>(3 + j));
  // Stored in its new order: read through the transposed view, the reduce over Cout/G would
  // stride across the filter (3x slower on the 512-channel convs of hlb_cifar10).
  const Tensor wt = w.reshape(wg).transpose(1, 2).flip(flip_axes).flatten(0, 1).contiguous();
  Pairs tp;
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t span = dilation[j] * (k[j] - 1), before = span - pads[j].first;
    tp.emplace_back(before, ins[j] + span - ((o[j] - 1) * stride[j] + 1) - before);
  }
  bool unit_stride = true;
  for (int64_t v : stride) unit_stride &= v == 1;
  // dy is read by both convolutions and by dw once per filter tap: stored once, it is not
  // recomputed there (the backward of a pool or a norm above the conv would be, per read). When
  // both gradients read it channels-last (the input gradient's channels-last product, the
  // weight gradient's matrix product), it is stored so, once, instead of as it is and then
  // copied for each (beautiful_mnist's 32 -> 32 5x5: 26 MB written three times a step).
  const bool dx_channels_last = unit_stride && x.size(0) > 1 &&
                                channels_last_pays(g0, wt, k, Ints(nsp, 1), tp, dilation, groups);
  const Tensor g =
      dx_channels_last && cig >= 8 && groups == 1 ? channels_last(g0) : g0.contiguous();
  Tensor dx = conv_core(dilate_spatial(g, stride), wt, std::nullopt, Ints(nsp, 1), tp, dilation,
                        groups, "conv backward (input)");

  const Tensor dw = cig >= 8 ? weight_gradient(x, g, k, stride, pads, dilation, groups)
                    : unit_stride && nsp <= 2
                        ? weight_gradient_by_rows(x, g, k, pads, dilation, groups)
                        : weight_gradient_by_batch(x, g, k, stride, pads, dilation, groups);
  return {dx.cast(x.dtype()).uop(), dw.cast(w.dtype()).uop()};
}

std::string conv_rule_name(const Ints& stride, const Pairs& pads, const Ints& dilation,
                           int64_t groups) {
  std::string s = "conv stride=" + ints_str(stride) + " pads=(";
  for (auto [a, b] : pads) s += std::to_string(a) + ":" + std::to_string(b) + ",";
  return s + ") dilation=" + ints_str(dilation) + " groups=" + std::to_string(groups);
}

// Whether conv_channels_last beats the direct convolution: a direct tile's rows are whole
// vectors only when its output width is a multiple of 8 (two rows make 16 lanes) or large.
// Other narrow widths (beautiful_mnist's 6 and 10, hlb_cifar10's 4) waste most lanes: its
// 64 -> 64 3x3 to 6x6 runs at 185 GFLOP/s direct, 430 channels-last, where 8x8 outputs of 256
// channels run 15% faster direct. Up to 23 wide: beautiful_mnist's 32 -> 32 5x5 to 20x20 runs
// 46 -> 24 ms a step channels-last on a 2-core Xeon (its direct tile's rows are 16 + 4 lanes).
// The next ops read the result channels-last, so its BatchNorm's per-channel sums read
// columns; those are vectors of channels since the heuristic upcasts a column reduce (before
// that, they ran 4x slower and wider outputs stayed direct). The product's tile needs
// channels: at least 8 in (its reduce is unrolled by 4) and whole vectors of 16 out. Whatever
// the width, it pays where a quarter or more of the window taps fall on the padding (an input
// gradient's dy is padded by the filter size less one): its loops skip those taps, which the
// direct tile multiplies through. beautiful_mnist's 32 -> 32 5x5 input gradient (24 wide, 69%
// of the taps inside) runs 37 -> 22 ms; its 64 -> 64 3x3 one (8 wide, 56%) 6.5 -> 2.9 ms. At
// 85% (hlb_cifar10's 8x8 convolutions, 84% inside, would go too) its step took 1.61 s, not 1.38.
// The share of a convolution's window taps that fall inside the input (not on its padding).
double inside_share(const Tensor& x, const Ints& k, const Ints& stride, const Pairs& pads,
                    const Ints& dilation) {
  double share = 1;
  for (size_t j = 0; j < k.size(); ++j) {
    const int64_t in = x.size(static_cast<int64_t>(2 + j));
    const int64_t out =
        (in + pads[j].first + pads[j].second - dilation[j] * (k[j] - 1) - 1) / stride[j] + 1;
    int64_t inside = 0;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t t = 0; t < k[j]; ++t) {
        const int64_t p = o * stride[j] + t * dilation[j] - pads[j].first;
        inside += p >= 0 && p < in;
      }
    share *= static_cast<double>(inside) / static_cast<double>(std::max<int64_t>(1, out * k[j]));
  }
  return share;
}

bool channels_last_pays(const Tensor& x, const Tensor& w, const Ints& k, const Ints& stride,
                        const Pairs& pads, const Ints& dilation, int64_t groups) {
  if (groups != 1 || w.size(1) < 8 || w.size(0) % 16 != 0) return false;
  if (inside_share(x, k, stride, pads, dilation) < 0.75) return true;
  const size_t last = k.size() - 1;
  const int64_t in = x.size(static_cast<int64_t>(2 + last)) + pads[last].first + pads[last].second;
  const int64_t width = (in - dilation[last] * (k[last] - 1) - 1) / stride[last] + 1;
  return width < 24 && width % 8 != 0;
}

// A convolution of x padded by `pads` as a matrix product of channels-last operands:
//   y[n, *o, co] = sum_{*k, ci} x(n, ci, o * s + k * d) * w[*k, ci, co]
// with x stored (N, *i, Cin) and w (*k, Cin, Cout), so that it is an a @ b for the CPU matmul
// tile: the input channels are the reduce (contiguous in both operands) and the weights' rows
// are vectors of output channels. A direct convolution's register tile is a few rows of x, which
// an image narrower than a vector fills badly (beautiful_mnist's 6x6 outputs); here the
// vectors run along the output channels whatever the image size. For a batch, the padding is
// a view of the stored x, not stored: each tap's loop then runs only over the pixels inside the
// image (reduce_bounds), where a stored border would be multiplied through (an input gradient's
// dy, padded by the filter size less one, is 30-45% zeros at beautiful_mnist's sizes). The
// result is seen as (N, Cout, *o) again: its consumers read it through that permutation.
Tensor conv_channels_last(const Tensor& x, const Pairs& pads, const Tensor& w, const Ints& k,
                          const Ints& stride, const Ints& dilation, const std::string& op) {
  const size_t nsp = k.size();
  const auto sp = [](size_t j) { return static_cast<int64_t>(j); };
  const int64_t cin = w.size(1), cout = w.size(0);
  // The padding stays a view where the CPU tile's rows are images at one pixel, so that each
  // tap's loop is bounded to the image. With one image the rows are pixels along a row, whose
  // taps differ lane by lane: a view would gate every load (2.7x slower), so it is stored.
  const Tensor xp =
      x.size(0) > 1 ? pad_spatial(channels_last(x), pads) : channels_last(pad_spatial(x, pads));
  const Tensor windows = pool_view(xp, k, stride, dilation, op);
  // (N, Cin, *o, *k) -> (N, *o, *k, Cin, 1)
  Shape xorder{0};
  for (size_t j = 0; j < 2 * nsp; ++j) xorder.push_back(sp(2 + j));
  xorder.push_back(1);
  const Tensor xv = windows.permute(xorder).unsqueeze(-1);
  // (Cout, Cin, *k) -> stored (*k, Cin, Cout) -> (1, *1, *k, Cin, Cout)
  Shape worder, wv{1};
  for (size_t j = 0; j < nsp; ++j) worder.push_back(sp(2 + j)), wv.push_back(1);
  worder.push_back(1), worder.push_back(0);
  for (int64_t v : k) wv.push_back(v);
  wv.push_back(cin), wv.push_back(cout);
  const Tensor wt = w.permute(worder).contiguous().reshape(wv);
  std::vector<int64_t> axes;
  for (size_t j = 0; j <= nsp; ++j) axes.push_back(sp(1 + nsp + j));
  const Tensor y = (xv * wt).sum(axes).contiguous(); // (N, *o, Cout)
  Shape order{0, sp(nsp + 1)};
  for (size_t j = 0; j < nsp; ++j) order.push_back(sp(1 + j));
  return y.permute(order);
}

// The convolution core: x (N, Cin, *i), w (Cout, Cin/groups, *k), explicit (before, after)
// padding per spatial dimension (negative removes). Its gradients come from conv_vjp.
Tensor conv_core(const Tensor& x, const Tensor& w, const Tensor::OptTensor& bias,
                 const Ints& stride, const Pairs& pads, const Ints& dilation, int64_t groups,
                 const std::string& op) {
  const size_t nsp = pads.size();
  const int64_t bs = x.shape()[0], cin = w.shape()[1], cout = w.shape()[0];
  Ints k;
  for (size_t j = 0; j < nsp; ++j) k.push_back(w.shape()[2 + j]);
  // Padding is stored first: windows over a padded view would test every tap against the
  // borders, which keeps the kernel from vectorizing (10x slower here than this extra copy).
  bool padded = false;
  for (auto [a, b] : pads) padded |= a > 0 || b > 0;
  if (channels_last_pays(x, w, k, stride, pads, dilation, groups))
    return finish_conv(conv_channels_last(x, pads, w, k, stride, dilation, op), x, w, bias, stride,
                       pads, dilation, groups, op);
  const Tensor xp = padded ? pad_spatial(x, pads).contiguous() : pad_spatial(x, pads);
  Tensor p = pool_view(xp, k, stride, dilation, op); // (N, Cin, *o, *k)
  Ints o;
  for (size_t j = 0; j < nsp; ++j) o.push_back(p.shape()[2 + j]);
  const int64_t rcout = cout / groups;
  // (N, G, Cin/G, 1, *o, *k) -> expand Cout/G -> permute to (N, G, Cout/G, *o, Cin/G, *k).
  Shape s1{bs, groups, cin, 1}, e1{bs, groups, cin, rcout};
  s1.insert(s1.end(), o.begin(), o.end());
  e1.insert(e1.end(), o.begin(), o.end());
  s1.insert(s1.end(), k.begin(), k.end());
  e1.insert(e1.end(), k.begin(), k.end());
  Shape order{0, 1, 3};
  for (size_t j = 0; j < nsp; ++j) order.push_back(static_cast<int64_t>(4 + j));
  order.push_back(2);
  for (size_t j = 0; j < nsp; ++j) order.push_back(static_cast<int64_t>(4 + nsp + j));
  Tensor xv = p.reshape(s1).expand(e1).permute(order);
  Shape ws{1, groups, rcout};
  for (size_t j = 0; j < nsp; ++j) ws.push_back(1);
  ws.push_back(cin);
  ws.insert(ws.end(), k.begin(), k.end());
  std::vector<int64_t> axes;
  for (size_t j = 0; j <= nsp; ++j) axes.push_back(-1 - static_cast<int64_t>(j));
  Shape out{bs, cout};
  out.insert(out.end(), o.begin(), o.end());
  Tensor r = xv.mul(w.reshape(ws)).sum(axes).reshape(out);
  return finish_conv(r, x, w, bias, stride, pads, dilation, groups, op);
}

// The convolution's gradient rule (conv_vjp) attached to its result r, and the bias added.
Tensor finish_conv(Tensor r, const Tensor& x, const Tensor& w, const Tensor::OptTensor& bias,
                   const Ints& stride, const Pairs& pads, const Ints& dilation, int64_t groups,
                   const std::string& op) {
  const size_t nsp = pads.size();
  const int64_t cout = w.shape()[0];
  const std::string rule = conv_rule_name(stride, pads, dilation, groups);
  detail::register_vjp(rule, [=](const UOpPtr& g, std::span<const UOpPtr> in) {
    return conv_vjp(g, in, stride, pads, dilation, groups);
  });
  r = detail::make(detail::custom_vjp(r.uop(), {x.uop(), w.uop()}, rule), {&r, &x, &w});
  if (bias) {
    if (bias->ndim() != 1 || bias->shape()[0] != cout)
      throw Error(op + ": bias of shape " + shape_str(bias->shape()) + " does not match the " +
                  std::to_string(cout) + " output channels of weight " + shape_str(w.shape()));
    Shape bsh{1, cout};
    for (size_t j = 0; j < nsp; ++j) bsh.push_back(1);
    r = r.add(bias->reshape(bsh));
  }
  return r;
}

// Checks the ranks and channels, adds a batch dimension to an unbatched input.
std::pair<Tensor, bool> conv_input(const Tensor& x, const Tensor& w, size_t nsp,
                                   const std::string& op) {
  const auto want = static_cast<int64_t>(nsp + 2);
  if (w.ndim() != want)
    throw Error(op + ": weight must have " + std::to_string(want) +
                " dimensions (out, in/groups, " + "*kernel), got shape " + shape_str(w.shape()));
  if (x.ndim() == want) return {x, false};
  if (x.ndim() == want - 1) return {x.unsqueeze(0), true};
  throw Error(op + ": input must have " + std::to_string(want) + " (batched) or " +
              std::to_string(want - 1) + " (unbatched) dimensions, got shape " +
              shape_str(x.shape()));
}

Tensor conv_nd(const Tensor& input, const Tensor& w, const Tensor::OptTensor& bias,
               const Tensor::IntOrTuple& stride_, const Tensor::ConvPadding& padding,
               const Tensor::IntOrTuple& dilation_, int64_t groups, size_t nsp,
               const std::string& op) {
  auto [x, unbatched] = conv_input(input, w, nsp, op);
  if (groups < 1) throw Error(op + ": groups must be positive, got " + std::to_string(groups));
  const int64_t cin_x = x.shape()[1], cout = w.shape()[0], cin_w = w.shape()[1];
  if (cin_x % groups != 0 || cout % groups != 0)
    throw Error(op + ": groups=" + std::to_string(groups) +
                " does not divide the input channels (" + std::to_string(cin_x) +
                ") and output channels (" + std::to_string(cout) + ") of input " +
                shape_str(input.shape()) + " and weight " + shape_str(w.shape()));
  if (cin_w * groups != cin_x)
    throw Error(op + ": input " + shape_str(input.shape()) + " has " + std::to_string(cin_x) +
                " channels but weight " + shape_str(w.shape()) + " expects " +
                std::to_string(cin_w * groups) + " (weight.shape[1] * groups = " +
                std::to_string(cin_w) + " * " + std::to_string(groups) + ")");
  const Ints stride = expand_arg(stride_, nsp, op, "stride", 1);
  const Ints dilation = expand_arg(dilation_, nsp, op, "dilation", 1);
  Pairs pads;
  if (padding.mode.empty()) {
    for (int64_t p : expand_arg(Tensor::IntOrTuple(padding.v), nsp, op, "padding", 0))
      pads.emplace_back(p, p);
  } else if (padding.mode == "valid") {
    pads.assign(nsp, {0, 0});
  } else if (padding.mode == "same") {
    for (int64_t s : stride)
      if (s != 1)
        throw Error(op + ": padding='same' is not supported for strided convolutions (stride " +
                    ints_str(stride) + ")");
    // PyTorch: the total d*(k-1), the extra one (even kernels) on the right.
    for (size_t j = 0; j < nsp; ++j) {
      const int64_t total = dilation[j] * (w.shape()[2 + j] - 1);
      pads.emplace_back(total / 2, total - total / 2);
    }
  } else {
    throw Error(op + ": padding must be an int, a tuple of ints, 'same' or 'valid', got '" +
                padding.mode + "'");
  }
  Tensor r = conv_core(x, w, bias, stride, pads, dilation, groups, op);
  return unbatched ? r.squeeze(0) : r;
}

Tensor conv_transpose_nd(const Tensor& input, const Tensor& w, const Tensor::OptTensor& bias,
                         const Tensor::IntOrTuple& stride_, const Tensor::IntOrTuple& padding_,
                         const Tensor::IntOrTuple& output_padding_, int64_t groups,
                         const Tensor::IntOrTuple& dilation_, size_t nsp, const std::string& op) {
  auto [x, unbatched] = conv_input(input, w, nsp, op);
  if (groups < 1) throw Error(op + ": groups must be positive, got " + std::to_string(groups));
  const int64_t cin = x.shape()[1], cin_w = w.shape()[0], rcout = w.shape()[1];
  if (cin_w % groups != 0)
    throw Error(op + ": groups=" + std::to_string(groups) + " does not divide the " +
                std::to_string(cin_w) + " input channels of weight " + shape_str(w.shape()));
  if (cin != cin_w)
    throw Error(op + ": input " + shape_str(input.shape()) + " has " + std::to_string(cin) +
                " channels but weight " + shape_str(w.shape()) + " (in, out/groups, *kernel) " +
                "expects " + std::to_string(cin_w));
  const Ints stride = expand_arg(stride_, nsp, op, "stride", 1);
  const Ints dilation = expand_arg(dilation_, nsp, op, "dilation", 1);
  const Ints padding = expand_arg(padding_, nsp, op, "padding", 0);
  const Ints outpad = expand_arg(output_padding_, nsp, op, "output_padding", 0);
  for (size_t j = 0; j < nsp; ++j)
    if (outpad[j] >= stride[j] && outpad[j] >= dilation[j])
      throw Error(op + ": output_padding " + ints_str(outpad) +
                  " must be smaller than either stride " + ints_str(stride) + " or dilation " +
                  ints_str(dilation));
  // The equivalent convolution's weight: (G, Cin/G, Cout/G, *k) -> (G*Cout/G, Cin/G, *k) flipped.
  Shape ws{groups, cin_w / groups, rcout};
  for (size_t j = 0; j < nsp; ++j) ws.push_back(w.shape()[2 + j]);
  std::vector<int64_t> flip_axes;
  for (size_t j = 0; j < nsp; ++j) flip_axes.push_back(static_cast<int64_t>(3 + j));
  Tensor wc = w.reshape(ws).transpose(1, 2).flip(flip_axes).flatten(0, 1);
  // Stride: s-1 zeros between input elements ((n) -> (n,1) -> pad (n,s) -> (n*s) -> shrink).
  bool strided = false;
  for (int64_t s : stride) strided |= s > 1;
  if (strided) {
    Shape s1{x.shape()[0], cin}, s2{x.shape()[0], cin};
    Pairs p{{0, 0}, {0, 0}}, r{{0, x.shape()[0]}, {0, cin}};
    for (size_t j = 0; j < nsp; ++j) {
      const int64_t n = x.shape()[2 + j];
      s1.push_back(n);
      s1.push_back(1);
      p.emplace_back(0, 0);
      p.emplace_back(0, stride[j] - 1);
      s2.push_back(n * stride[j]);
      r.emplace_back(0, n * stride[j] - (stride[j] - 1));
    }
    x = x.reshape(s1).pad(p).reshape(s2).shrink(r);
  }
  Pairs pads;
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t e = (w.shape()[2 + j] - 1) * dilation[j];
    pads.emplace_back(e - padding[j], e - padding[j] + outpad[j]);
  }
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t n = x.shape()[2 + j] + pads[j].first + pads[j].second;
    if (n < dilation[j] * (w.shape()[2 + j] - 1) + 1)
      throw Error(op + ": padding " + ints_str(padding) + " leaves no output for input " +
                  shape_str(input.shape()) + " and weight " + shape_str(w.shape()));
  }
  Tensor r = conv_core(x, wc, bias, Ints(nsp, 1), pads, dilation, groups, op);
  return unbatched ? r.squeeze(0) : r;
}

// ---- pooling -------------------------------------------------------------------------------

struct PoolArgs {
  Ints k, s, d;
  Pairs pads;
};

PoolArgs pool_args(const Tensor& x, const Tensor::IntOrTuple& kernel,
                   const std::optional<Tensor::IntOrTuple>& stride, const Tensor::IntOrTuple& pad,
                   const Tensor::IntOrTuple& dilation, size_t nsp, bool max_pool,
                   const std::string& op) {
  if (x.ndim() < static_cast<int64_t>(nsp + 1))
    throw Error(op + ": input must have at least " + std::to_string(nsp + 1) +
                " dimensions, got shape " + shape_str(x.shape()));
  PoolArgs a;
  a.k = expand_arg(kernel, nsp, op, "kernel_size", 1);
  a.s = stride && !stride->v.empty() ? expand_arg(*stride, nsp, op, "stride", 1) : a.k;
  a.d = expand_arg(dilation, nsp, op, "dilation", 1);
  if (pad.v.size() == 2 * nsp) {
    // F.pad's flat order: (before, after) of the last spatial dimension first.
    for (size_t j = 0; j < nsp; ++j)
      a.pads.emplace_back(pad.v[2 * (nsp - 1 - j)], pad.v[2 * (nsp - 1 - j) + 1]);
  } else {
    for (int64_t p : expand_arg(pad, nsp, op, "padding", 0)) a.pads.emplace_back(p, p);
  }
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t span = max_pool ? a.d[j] * (a.k[j] - 1) + 1 : a.k[j];
    const auto [before, after] = a.pads[j];
    if (before < 0 || after < 0 || 2 * std::max(before, after) > span)
      throw Error(op + ": padding " + ints_str(pad.v) + " must be >= 0 and at most half of the " +
                  (max_pool ? "effective " : "") + "kernel size " + ints_str(a.k));
  }
  return a;
}

// tinygrad's _apply_ceil_mode: extra padding on the right so the last partial window counts,
// but no window starts in the right padding (PyTorch's rule).
Pairs ceil_pads(const Tensor& x, const PoolArgs& a) {
  const size_t nsp = a.k.size(), nd = static_cast<size_t>(x.ndim()) - nsp;
  Pairs r = a.pads;
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t i = x.shape()[nd + j], s = a.s[j], span = a.d[j] * (a.k[j] - 1) + 1;
    const auto [pb, pa] = a.pads[j];
    const int64_t o = std::max<int64_t>(0, cdiv(std::max<int64_t>(0, i + pb + pa - span), s)) + 1;
    r[j].second +=
        s * (o - 1) + span - (i + pb + pa) - std::max<int64_t>(s * (o - 1) - (pb + i - 1), 0);
  }
  return r;
}

Scalar lowest(DType d) {
  if (d.is_float()) return -std::numeric_limits<double>::infinity();
  if (d.is_bool()) return false;
  if (d.is_unsigned()) return int64_t{0};
  if (d.itemsize() >= 8) return std::numeric_limits<int64_t>::min();
  return -(int64_t{1} << (8 * d.itemsize() - 1));
}

std::vector<int64_t> last_axes(size_t n) {
  std::vector<int64_t> r;
  for (size_t j = 0; j < n; ++j) r.push_back(-1 - static_cast<int64_t>(j));
  return r;
}

std::pair<Tensor, Tensor> max_pool_nd(const Tensor& x, const Tensor::IntOrTuple& kernel,
                                      const std::optional<Tensor::IntOrTuple>& stride,
                                      const Tensor::IntOrTuple& pad,
                                      const Tensor::IntOrTuple& dilation, bool ceil_mode,
                                      bool indices, size_t nsp, const std::string& op) {
  PoolArgs a = pool_args(x, kernel, stride, pad, dilation, nsp, true, op);
  const Pairs pads = ceil_mode ? ceil_pads(x, a) : a.pads;
  const auto axes = last_axes(nsp);
  Tensor pooled = pool_view(pad_spatial(x, pads, lowest(x.dtype())), a.k, a.s, a.d, op);
  // The gradient goes to the first maximum of each window (PyTorch), not split across ties.
  // The values and the indices share one max reduce (keepdim) instead of pooling twice.
  Tensor mk = detail::max_to_first(pooled, axes);
  Shape vs(mk.shape().begin(), mk.shape().end() - static_cast<std::ptrdiff_t>(nsp));
  Tensor m = mk.reshape(vs);
  if (!indices) return {m, Tensor()};
  // The first maximum has the largest countdown value n - flat_index.
  const size_t nd = static_cast<size_t>(x.ndim()) - nsp;
  Shape plane(x.shape().begin() + static_cast<std::ptrdiff_t>(nd), x.shape().end());
  int64_t n = 1;
  for (int64_t v : plane) n *= v;
  Tensor count =
      Tensor::arange(static_cast<double>(n), 0, -1, dtypes::int32, x.device()).reshape(plane);
  Tensor cw = pool_view(pad_spatial(count, pads, int64_t{0}), a.k, a.s, a.d, op);
  Tensor is_max = pooled.eq(mk);
  Tensor idx = is_max.where(cw, 0).max(axes);
  return {m, idx.mul(-1).add(n)};
}

Tensor avg_pool_nd(const Tensor& x, const Tensor::IntOrTuple& kernel,
                   const std::optional<Tensor::IntOrTuple>& stride, const Tensor::IntOrTuple& pad,
                   bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor,
                   size_t nsp, const std::string& op) {
  PoolArgs a = pool_args(x, kernel, stride, pad, 1, nsp, false, op);
  if (divisor && *divisor == 0) throw Error(op + ": divisor_override must be non-zero");
  const auto axes = last_axes(nsp);
  const Pairs cp = ceil_pads(x, a);
  const Pairs& pads = ceil_mode ? cp : a.pads;
  Tensor xf = x.cast(least_upper_float(x.dtype()));
  Tensor sum = pool_view(pad_spatial(xf, pads), a.k, a.s, a.d, op).sum(axes);
  Tensor r;
  if (divisor) {
    r = sum.div(static_cast<double>(*divisor));
  } else {
    // The count per window, by PyTorch's formula from aranges (elementwise, so it fuses into
    // the sum's kernel): the window [o*s - p, min(o*s - p + k, i + p)), clipped to the input
    // [0, i) unless padding counts; never the extra padding ceil_mode adds.
    const size_t nd = static_cast<size_t>(x.ndim()) - nsp;
    const int64_t nd_out = sum.ndim();
    Tensor cnt;
    for (size_t j = 0; j < nsp; ++j) {
      const int64_t o = sum.shape()[static_cast<size_t>(nd_out) - nsp + j];
      const int64_t i = x.shape()[nd + j];
      const auto [before, after] = a.pads[j];
      Tensor start = Tensor::arange(o, dtypes::int32, x.device()).mul(a.s[j]).sub(before);
      Tensor end = start.add(a.k[j]).minimum(i + after);
      Tensor len = count_include_pad ? end.sub(start) : end.minimum(i).sub(start.maximum(0));
      Shape sh(nsp, 1);
      sh[j] = o;
      len = len.reshape(sh);
      cnt = cnt.defined() ? cnt.mul(len) : len;
    }
    r = sum.div(cnt.cast(xf.dtype()));
  }
  return r.cast(xf.dtype());
}

// An (out, in) map per axis: `mask` says which inputs feed each output, `w` their weights.
Tensor contract_axis(const Tensor& x, int64_t axis, const Tensor& mask, const Tensor& w) {
  Tensor xt = x.transpose(axis, -1).unsqueeze(-2); // (..., 1, in)
  Tensor r = mask.where(xt.mul(w), 0).sum({-1});   // (..., out)
  return r.transpose(axis, -1);
}

Tensor adaptive_avg_pool_nd(const Tensor& x, const Tensor::IntOrTuple& output_size, size_t nsp,
                            const std::string& op) {
  if (x.ndim() < static_cast<int64_t>(nsp + 1))
    throw Error(op + ": input must have at least " + std::to_string(nsp + 1) +
                " dimensions, got shape " + shape_str(x.shape()));
  const Ints out = expand_arg(output_size, nsp, op, "output_size", 1);
  const DType f = least_upper_float(x.dtype());
  Tensor r = x.cast(f);
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t axis = x.ndim() - static_cast<int64_t>(nsp - j);
    const int64_t in = x.shape()[static_cast<size_t>(axis)], o = out[j];
    if (in == 0) throw Error(op + ": input " + shape_str(x.shape()) + " has an empty spatial dim");
    Tensor oi = Tensor::arange(o, dtypes::int32, x.device()).reshape({o, 1});
    Tensor ji = Tensor::arange(in, dtypes::int32, x.device()).reshape({1, in});
    Tensor start = oi.mul(in).idiv(o);
    Tensor end = oi.add(1).mul(in).add(o - 1).idiv(o);
    Tensor mask = ji.ge(start).bitwise_and(ji.lt(end));
    Tensor w = end.sub(start).cast(f).reciprocal();
    r = contract_axis(r, axis, mask, w);
  }
  return r.cast(f);
}

// PyTorch's adaptive bins along one axis: an (out, in) mask, output i over
// [floor(i*in/out), ceil((i+1)*in/out)).
Tensor adaptive_bins(int64_t in, int64_t o, const std::string& device) {
  Tensor oi = Tensor::arange(o, dtypes::int32, device).reshape({o, 1});
  Tensor ji = Tensor::arange(in, dtypes::int32, device).reshape({1, in});
  Tensor start = oi.mul(in).idiv(o);
  Tensor end = oi.add(1).mul(in).add(o - 1).idiv(o);
  return ji.ge(start).bitwise_and(ji.lt(end));
}

std::pair<Tensor, Tensor> adaptive_max_pool_nd(const Tensor& x,
                                               const Tensor::IntOrTuple& output_size, size_t nsp,
                                               bool indices, const std::string& op) {
  if (x.ndim() < static_cast<int64_t>(nsp + 1))
    throw Error(op + ": input must have at least " + std::to_string(nsp + 1) +
                " dimensions, got shape " + shape_str(x.shape()));
  const Ints out = expand_arg(output_size, nsp, op, "output_size", 1);
  const size_t nd = static_cast<size_t>(x.ndim()) - nsp;
  std::vector<Tensor> masks;
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t in = x.shape()[nd + j];
    if (in == 0) throw Error(op + ": input " + shape_str(x.shape()) + " has an empty spatial dim");
    masks.push_back(adaptive_bins(in, out[j], x.device()));
  }
  // The maximum of a box is the maximum over one axis of the maxima over the next: one masked
  // (out, in) max per axis, the last axis first, so the gradient goes to the first maximum in
  // row-major order (max_to_first along each axis).
  Tensor r = x;
  for (size_t jj = nsp; jj-- > 0;) {
    const int64_t axis = static_cast<int64_t>(nd + jj);
    Tensor xt = r.transpose(axis, -1).unsqueeze(-2); // (..., 1, in)
    Tensor m = masks[jj].where(xt, lowest(x.dtype()));
    r = detail::max_to_first(m, {-1}).squeeze(-1).transpose(axis, -1);
  }
  if (!indices) return {r, Tensor()};
  // Indices: the first position in each box equal to its maximum (NaN equal to NaN), as the
  // largest countdown value n - flat, over the full (*out, *in) box view.
  Shape plane(x.shape().begin() + static_cast<std::ptrdiff_t>(nd), x.shape().end());
  int64_t n = 1;
  for (int64_t v : plane) n *= v;
  Shape box_in; // (..., 1 x nsp, *in)
  Shape lead(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(nd));
  box_in = lead;
  for (size_t j = 0; j < nsp; ++j) box_in.push_back(1);
  for (int64_t v : plane) box_in.push_back(v);
  Tensor box;
  for (size_t j = 0; j < nsp; ++j) {
    Shape s(2 * nsp, 1);
    s[j] = out[j];
    s[nsp + j] = plane[j];
    Tensor mj = masks[j].reshape(s);
    box = box.defined() ? box.bitwise_and(mj) : mj;
  }
  Shape vals = r.shape();
  for (size_t j = 0; j < nsp; ++j) vals.push_back(1);
  Tensor hit = box.bitwise_and(detail::eq_nan(x.reshape(box_in), r.reshape(vals)));
  Tensor count =
      Tensor::arange(static_cast<double>(n), 0, -1, dtypes::int32, x.device()).reshape(plane);
  Tensor idx = hit.where(count, 0).max(last_axes(nsp));
  return {r, idx.mul(-1).add(n)};
}

Tensor max_unpool_nd(const Tensor& x, const Tensor& indices, const Tensor::IntOrTuple& kernel,
                     const std::optional<Tensor::IntOrTuple>& stride, const Tensor::IntOrTuple& pad,
                     const std::optional<Ints>& output_size, const Tensor::IntOrTuple& dilation,
                     size_t nsp, const std::string& op) {
  const PoolArgs a = pool_args(x, kernel, stride, pad, dilation, nsp, true, op);
  if (indices.shape() != x.shape())
    throw Error(op + ": indices " + shape_str(indices.shape()) + " must have the input's shape " +
                shape_str(x.shape()));
  if (!indices.dtype().is_int())
    throw Error(op + ": indices must be integers, got " + indices.dtype().name());
  const size_t nd = static_cast<size_t>(x.ndim()) - nsp;
  Ints out(nsp);
  if (output_size) {
    if (output_size->size() < nsp)
      throw Error(op + ": output_size " + ints_str(*output_size) + " needs at least " +
                  std::to_string(nsp) + " entries (the spatial size)");
    std::copy(output_size->end() - static_cast<std::ptrdiff_t>(nsp), output_size->end(),
              out.begin());
  } else {
    for (size_t j = 0; j < nsp; ++j)
      out[j] = (x.size(static_cast<int64_t>(nd + j)) - 1) * a.s[j] - a.pads[j].first -
               a.pads[j].second + a.d[j] * (a.k[j] - 1) + 1;
  }
  int64_t plane = 1, in_plane = 1;
  for (int64_t o : out) {
    if (o < 0) throw Error(op + ": output size " + ints_str(out) + " is negative");
    plane *= o;
  }
  Shape lead(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(nd));
  for (size_t j = nd; j < static_cast<size_t>(x.ndim()); ++j) in_plane *= x.shape()[j].eval({});
  // Every output position compares itself with every index of its plane: one reduce.
  Shape col = lead, row(nd, 1), result = lead;
  col.insert(col.end(), {in_plane, 1});
  row.insert(row.end(), {1, plane});
  result.insert(result.end(), out.begin(), out.end());
  const Tensor pos = Tensor::arange(plane, dtypes::int32, x.device()).reshape(row);
  const Tensor hit = indices.cast(dtypes::int32).reshape(col).eq(pos);
  return hit.where(x.reshape(col), 0).sum({-2}).cast(x.dtype()).reshape(result);
}

} // namespace

Tensor detail::sliding_windows(const Tensor& x, const Ints& k, const Ints& s, const Ints& d,
                               const std::string& op) {
  return pool_view(x, k, s, d, op);
}

Tensor Tensor::conv1d(const Tensor& weight, const OptTensor& bias, IntOrTuple stride,
                      ConvPadding padding, IntOrTuple dilation, int64_t groups) const {
  return conv_nd(*this, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}
Tensor Tensor::conv2d(const Tensor& weight, const OptTensor& bias, IntOrTuple stride,
                      ConvPadding padding, IntOrTuple dilation, int64_t groups) const {
  return conv_nd(*this, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}
Tensor Tensor::conv3d(const Tensor& weight, const OptTensor& bias, IntOrTuple stride,
                      ConvPadding padding, IntOrTuple dilation, int64_t groups) const {
  return conv_nd(*this, weight, bias, stride, padding, dilation, groups, 3, "conv3d");
}
Tensor Tensor::conv_transpose1d(const Tensor& weight, const OptTensor& bias, IntOrTuple stride,
                                IntOrTuple padding, IntOrTuple output_padding, int64_t groups,
                                IntOrTuple dilation) const {
  return conv_transpose_nd(*this, weight, bias, stride, padding, output_padding, groups, dilation,
                           1, "conv_transpose1d");
}
Tensor Tensor::conv_transpose2d(const Tensor& weight, const OptTensor& bias, IntOrTuple stride,
                                IntOrTuple padding, IntOrTuple output_padding, int64_t groups,
                                IntOrTuple dilation) const {
  return conv_transpose_nd(*this, weight, bias, stride, padding, output_padding, groups, dilation,
                           2, "conv_transpose2d");
}

Tensor Tensor::conv_transpose3d(const Tensor& weight, const OptTensor& bias, IntOrTuple stride,
                                IntOrTuple padding, IntOrTuple output_padding, int64_t groups,
                                IntOrTuple dilation) const {
  return conv_transpose_nd(*this, weight, bias, stride, padding, output_padding, groups, dilation,
                           3, "conv_transpose3d");
}

Tensor Tensor::max_unpool1d(const Tensor& indices, IntOrTuple kernel_size,
                            std::optional<IntOrTuple> stride, IntOrTuple padding,
                            std::optional<std::vector<int64_t>> output_size,
                            IntOrTuple dilation) const {
  return max_unpool_nd(*this, indices, kernel_size, stride, padding, output_size, dilation, 1,
                       "max_unpool1d");
}
Tensor Tensor::max_unpool2d(const Tensor& indices, IntOrTuple kernel_size,
                            std::optional<IntOrTuple> stride, IntOrTuple padding,
                            std::optional<std::vector<int64_t>> output_size,
                            IntOrTuple dilation) const {
  return max_unpool_nd(*this, indices, kernel_size, stride, padding, output_size, dilation, 2,
                       "max_unpool2d");
}
Tensor Tensor::max_unpool3d(const Tensor& indices, IntOrTuple kernel_size,
                            std::optional<IntOrTuple> stride, IntOrTuple padding,
                            std::optional<std::vector<int64_t>> output_size,
                            IntOrTuple dilation) const {
  return max_unpool_nd(*this, indices, kernel_size, stride, padding, output_size, dilation, 3,
                       "max_unpool3d");
}

Tensor Tensor::max_pool1d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                          IntOrTuple padding, IntOrTuple dilation, bool ceil_mode) const {
  return max_pool_nd(*this, kernel_size, stride, padding, dilation, ceil_mode, false, 1,
                     "max_pool1d")
      .first;
}
Tensor Tensor::max_pool2d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                          IntOrTuple padding, IntOrTuple dilation, bool ceil_mode) const {
  return max_pool_nd(*this, kernel_size, stride, padding, dilation, ceil_mode, false, 2,
                     "max_pool2d")
      .first;
}
std::pair<Tensor, Tensor> Tensor::max_pool1d_with_indices(IntOrTuple kernel_size,
                                                          std::optional<IntOrTuple> stride,
                                                          IntOrTuple padding, IntOrTuple dilation,
                                                          bool ceil_mode) const {
  return max_pool_nd(*this, kernel_size, stride, padding, dilation, ceil_mode, true, 1,
                     "max_pool1d");
}
std::pair<Tensor, Tensor> Tensor::max_pool2d_with_indices(IntOrTuple kernel_size,
                                                          std::optional<IntOrTuple> stride,
                                                          IntOrTuple padding, IntOrTuple dilation,
                                                          bool ceil_mode) const {
  return max_pool_nd(*this, kernel_size, stride, padding, dilation, ceil_mode, true, 2,
                     "max_pool2d");
}
Tensor Tensor::avg_pool1d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                          IntOrTuple padding, bool ceil_mode, bool count_include_pad) const {
  return avg_pool_nd(*this, kernel_size, stride, padding, ceil_mode, count_include_pad, {}, 1,
                     "avg_pool1d");
}
Tensor Tensor::avg_pool2d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                          IntOrTuple padding, bool ceil_mode, bool count_include_pad,
                          std::optional<int64_t> divisor_override) const {
  return avg_pool_nd(*this, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d");
}
Tensor Tensor::adaptive_avg_pool1d(IntOrTuple output_size) const {
  return adaptive_avg_pool_nd(*this, output_size, 1, "adaptive_avg_pool1d");
}
Tensor Tensor::adaptive_avg_pool2d(IntOrTuple output_size) const {
  return adaptive_avg_pool_nd(*this, output_size, 2, "adaptive_avg_pool2d");
}

Tensor Tensor::adaptive_max_pool1d(IntOrTuple output_size) const {
  return adaptive_max_pool_nd(*this, output_size, 1, false, "adaptive_max_pool1d").first;
}
Tensor Tensor::adaptive_max_pool2d(IntOrTuple output_size) const {
  return adaptive_max_pool_nd(*this, output_size, 2, false, "adaptive_max_pool2d").first;
}
std::pair<Tensor, Tensor> Tensor::adaptive_max_pool1d_with_indices(IntOrTuple output_size) const {
  return adaptive_max_pool_nd(*this, output_size, 1, true, "adaptive_max_pool1d");
}
std::pair<Tensor, Tensor> Tensor::adaptive_max_pool2d_with_indices(IntOrTuple output_size) const {
  return adaptive_max_pool_nd(*this, output_size, 2, true, "adaptive_max_pool2d");
}
Tensor Tensor::max_pool3d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                          IntOrTuple padding, IntOrTuple dilation, bool ceil_mode) const {
  return max_pool_nd(*this, kernel_size, stride, padding, dilation, ceil_mode, false, 3,
                     "max_pool3d")
      .first;
}
std::pair<Tensor, Tensor> Tensor::max_pool3d_with_indices(IntOrTuple kernel_size,
                                                          std::optional<IntOrTuple> stride,
                                                          IntOrTuple padding, IntOrTuple dilation,
                                                          bool ceil_mode) const {
  return max_pool_nd(*this, kernel_size, stride, padding, dilation, ceil_mode, true, 3,
                     "max_pool3d");
}
Tensor Tensor::avg_pool3d(IntOrTuple kernel_size, std::optional<IntOrTuple> stride,
                          IntOrTuple padding, bool ceil_mode, bool count_include_pad,
                          std::optional<int64_t> divisor_override) const {
  return avg_pool_nd(*this, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d");
}

namespace {

// PyTorch's uint8 (bi)linear resize (its CPU kernel for uint8 images, PIL's algorithm): one
// pass per axis, the last first, each rounding back to uint8. A pass's taps are a triangle
// filter around the source position (normalized), in integers of `precision` bits, the largest
// that keeps the biggest weight within int16; out = clamp((sum w * x + 2^(p-1)) >> p, 0, 255).
// Integer weights from the host: PyTorch derives them there too, and the exact rounding is
// what makes the results equal to its bytes.
Tensor interpolate_linear_uint8(Tensor r, const Ints& out, const std::vector<double>& scales,
                                bool align_corners) {
  const size_t nsp = out.size();
  for (size_t jj = nsp; jj-- > 0;) {
    const int64_t axis = static_cast<int64_t>(2 + jj);
    const int64_t in = r.shape()[2 + jj], o = out[jj];
    if (in == o) continue;
    double scale = scales[jj] > 0 ? scales[jj] : static_cast<double>(in) / static_cast<double>(o);
    if (align_corners) scale = o > 1 ? static_cast<double>(in - 1) / static_cast<double>(o - 1) : 0;
    std::vector<std::pair<int64_t, std::vector<double>>> taps(static_cast<size_t>(o));
    double w_max = 0;
    for (int64_t i = 0; i < o; ++i) {
      const double center = align_corners ? scale * static_cast<double>(i) + 0.5
                                          : scale * (static_cast<double>(i) + 0.5);
      const auto lo = std::max<int64_t>(static_cast<int64_t>(center - 1 + 0.5), 0);
      const auto hi = std::min<int64_t>(static_cast<int64_t>(center + 1 + 0.5), in);
      std::vector<double> w;
      double total = 0;
      for (int64_t j = lo; j < hi; ++j)
        total += w.emplace_back(std::max(0.0, 1 - std::abs(static_cast<double>(j) - center + 0.5)));
      for (double& v : w) w_max = std::max(w_max, v /= total);
      taps[static_cast<size_t>(i)] = {lo, std::move(w)};
    }
    int precision = 0;
    for (; precision < 22; ++precision)
      if (static_cast<int64_t>(0.5 + w_max * static_cast<double>(int64_t{1} << (precision + 1))) >=
          (int64_t{1} << 15))
        break;
    std::vector<int32_t> wi(static_cast<size_t>(o * in), 0);
    for (int64_t i = 0; i < o; ++i) {
      const auto& [lo, w] = taps[static_cast<size_t>(i)];
      for (size_t t = 0; t < w.size(); ++t)
        wi[static_cast<size_t>(i * in + lo) + t] =
            static_cast<int32_t>(0.5 + w[t] * static_cast<double>(int64_t{1} << precision));
    }
    const Tensor weights = Tensor::from_vector(wi, Shape{o, in}, r.device());
    const Tensor acc = contract_axis(r.cast(dtypes::int32), axis,
                                     Tensor::ones({1, 1}, dtypes::bool_, r.device()), weights);
    r = acc.add(int64_t{1} << (precision - 1))
            .rshift(acc.scalar_like(int64_t{precision}))
            .maximum(0)
            .minimum(255)
            .cast(dtypes::uint8);
  }
  return r;
}

} // namespace

Tensor Tensor::interpolate(std::optional<IntOrTuple> out_size, std::vector<double> scale_factor,
                           const std::string& mode, std::optional<bool> align_corners) const {
  const std::string op = "interpolate";
  if (ndim() < 3)
    throw Error(op + ": input must be (N, C, *spatial) with at least one spatial dimension, got " +
                shape_str(shape()));
  const size_t nsp = static_cast<size_t>(ndim()) - 2;
  const bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  const bool cubic = mode == "bicubic", area = mode == "area";
  if (!linear && !cubic && !area && mode != "nearest" && mode != "nearest-exact")
    throw Error(op + ": mode '" + mode +
                "' is not supported (nearest, nearest-exact, linear, bilinear, trilinear, "
                "bicubic, area)");
  const size_t want = mode == "linear"              ? 1
                      : mode == "bilinear" || cubic ? 2
                      : mode == "trilinear"         ? 3
                                                    : nsp;
  if (want != nsp)
    throw Error(op + ": mode '" + mode + "' needs " + std::to_string(want + 2) +
                "-D input, got shape " + shape_str(shape()));
  if (align_corners && !linear && !cubic)
    throw Error(op + ": align_corners is only for the linear modes and bicubic, not '" + mode +
                "'");
  if (out_size.has_value() == !scale_factor.empty())
    throw Error(op + ": give exactly one of size and scale_factor");
  Ints out;
  std::vector<double> scales(nsp, 0); // 0: from the sizes
  if (out_size) {
    out = expand_arg(*out_size, nsp, op, "size", 0);
  } else {
    if (scale_factor.size() != 1 && scale_factor.size() != nsp)
      throw Error(op + ": scale_factor must be one value or " + std::to_string(nsp));
    for (size_t j = 0; j < nsp; ++j) {
      const double sf = scale_factor.size() == 1 ? scale_factor[0] : scale_factor[j];
      if (!(sf > 0)) throw Error(op + ": scale_factor must be positive, got " + std::to_string(sf));
      out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(shape()[2 + j]) * sf)));
      scales[j] = 1.0 / sf;
    }
  }
  if (area) return adaptive_avg_pool_nd(*this, out, nsp, op).cast(least_upper_float(dtype()));
  const bool ac = align_corners.value_or(false);
  if (linear && dtype() == dtypes::uint8) return interpolate_linear_uint8(*this, out, scales, ac);
  const DType f = least_upper_float(dtype());
  Tensor r = linear || cubic ? cast(f) : *this;
  for (size_t j = 0; j < nsp; ++j) {
    const int64_t axis = static_cast<int64_t>(2 + j);
    const int64_t in = shape()[2 + j], o = out[j];
    if (in == 0 || o == 0) throw Error(op + ": empty spatial size in " + shape_str(shape()));
    // PyTorch's area_pixel_compute_scale: the source step per output step (float32).
    double scale = scales[j] > 0 ? scales[j] : static_cast<double>(in) / static_cast<double>(o);
    if ((linear || cubic) && ac)
      scale = o > 1 ? static_cast<double>(in - 1) / static_cast<double>(o - 1) : 0.0;
    Tensor dst = Tensor::arange(o, dtypes::int32, device()).cast(dtypes::float32).reshape({o, 1});
    Tensor ji = Tensor::arange(in, dtypes::int32, device()).reshape({1, in});
    Tensor sc = Tensor::full({}, static_cast<float>(scale), dtypes::float32, device());
    if (cubic) {
      // PyTorch's upsample_bicubic2d: Keys' cubic convolution (A = -0.75) over the taps
      // floor(src) - 1 .. + 2, the taps clamped to the input (repeated border values), the
      // source unclamped.
      Tensor src = ac ? dst.mul(sc) : dst.add(0.5).mul(sc).sub(0.5);
      Tensor i0 = src.floor();
      Tensor t = src.sub(i0).cast(f);
      Tensor base = i0.cast(dtypes::int32);
      constexpr double A = -0.75;
      auto cc1 = [&](const Tensor& x) { return x.mul(A + 2).sub(A + 3).mul(x).mul(x).add(1.0); };
      auto cc2 = [&](const Tensor& x) {
        return x.mul(A).sub(5 * A).mul(x).add(8 * A).mul(x).sub(4 * A);
      };
      const Tensor taps[4] = {cc2(t.add(1.0)), cc1(t), cc1(t.neg().add(1.0)),
                              cc2(t.neg().add(2.0))};
      Tensor w;
      for (int k = 0; k < 4; ++k) {
        Tensor at = base.add(k - 1).maximum(0).minimum(static_cast<int64_t>(in - 1));
        Tensor wk = ji.eq(at).where(taps[k], 0.0);
        w = w.defined() ? w.add(wk) : wk;
      }
      r = contract_axis(r, axis, Tensor::ones({1, 1}, dtypes::bool_, device()), w);
    } else if (linear) {
      Tensor src = ac ? dst.mul(sc) : dst.add(0.5).mul(sc).sub(0.5).maximum(0.0);
      Tensor lo = src.floor().cast(dtypes::int32).minimum(static_cast<int64_t>(in - 1));
      Tensor hi = lo.add(1).minimum(static_cast<int64_t>(in - 1));
      Tensor lam = src.sub(lo.cast(dtypes::float32)).cast(f);
      Tensor w = ji.eq(lo).where(lam.mul(-1).add(1), 0).add(ji.eq(hi).where(lam, 0));
      r = contract_axis(r, axis, ji.eq(lo).bitwise_or(ji.eq(hi)), w);
    } else {
      Tensor src = mode == "nearest" ? dst.mul(sc) : dst.add(0.5).mul(sc);
      Tensor idx = src.floor().cast(dtypes::int32).minimum(static_cast<int64_t>(in - 1));
      Tensor mask = ji.eq(idx);
      r = contract_axis(r, axis, mask, Tensor::ones({1, 1}, r.dtype(), device()));
    }
  }
  return r.cast(linear || cubic ? f : dtype());
}

} // namespace tg
