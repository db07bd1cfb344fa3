// nn functional ops that are not convolutions or losses: log_softmax,
// logsumexp, einsum, linear, the normalizations, dropout and scaled dot-product attention, all
// composed of elementwise, movement and reduce ops as tinygrad's Tensor builds them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The trailing axes of `x` that `normalized_shape` names; raises unless they match.
std::vector<int64_t> trailing_axes(const Tensor& x, const Shape& normalized_shape,
                                   const std::string& op) {
  const auto n = static_cast<int64_t>(normalized_shape.size());
  bool ok = n >= 1 && n <= x.ndim();
  for (int64_t i = 0; ok && i < n; ++i)
    ok = x.shape()[static_cast<size_t>(x.ndim() - n + i)] ==
         normalized_shape[static_cast<size_t>(i)];
  if (!ok)
    throw Error(op + ": normalized_shape " + shape_str(normalized_shape) +
                " does not match the trailing dimensions of input " + shape_str(x.shape()));
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < n; ++i) axes.push_back(x.ndim() - n + i);
  return axes;
}

void check_affine(const Tensor::OptTensor& t, const Shape& want, const char* name,
                  const std::string& op) {
  if (t && t->shape() != want)
    throw Error(op + ": " + name + " has shape " + shape_str(t->shape()) + ", expected " +
                shape_str(want));
}

// A per-channel (C,) tensor as (1, C, 1, ...) for an input of `ndim` dimensions.
Tensor channel_view(const Tensor& t, int64_t ndim) {
  Shape s(static_cast<size_t>(ndim), 1);
  s[1] = t.shape()[0];
  return t.reshape(s);
}

} // namespace

Tensor Tensor::log_softmax(int64_t dim) const {
  Tensor x = cast(least_upper_float(dtype()));
  Tensor m = x.sub(x.max({dim}, true));
  return m.sub(m.exp().sum({dim}, true).log());
}

Tensor Tensor::logsumexp(std::vector<int64_t> dims, bool keepdim) const {
  Tensor x = cast(least_upper_float(dtype()));
  Tensor m = x.max(dims, true);
  // An infinite maximum would give inf - inf; shift by 0 there (PyTorch's rule).
  Tensor safe = m.abs().eq(kInf).where(0.0, m);
  Tensor r = x.sub(safe).exp().sum(dims, true).log().add(safe);
  if (keepdim) return r;
  std::vector<int64_t> ax = dims;
  if (ax.empty()) {
    ax.resize(static_cast<size_t>(ndim()));
    std::iota(ax.begin(), ax.end(), 0);
  }
  for (int64_t& a : ax) a = detail::normalize_axis(a, ndim(), "logsumexp");
  Shape s;
  for (int64_t i = 0; i < ndim(); ++i)
    if (std::find(ax.begin(), ax.end(), i) == ax.end())
      s.push_back(shape()[static_cast<size_t>(i)]);
  return r.reshape(s);
}

Tensor Tensor::einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> ins;
  for (size_t b = 0;;) {
    const size_t e = lhs.find(',', b);
    ins.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (ins.size() != operands.size())
    throw Error("einsum: '" + equation + "' names " + std::to_string(ins.size()) +
                " operands but " + std::to_string(operands.size()) + " were given");
  // "..." becomes fresh upper-case-free letters (from the end of the private range).
  int64_t ell_dims = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    const size_t p = ins[i].find("...");
    if (p == std::string::npos) continue;
    const int64_t named = static_cast<int64_t>(ins[i].size()) - 3;
    ell_dims = std::max(ell_dims, operands[i].ndim() - named);
  }
  const std::string ell_letters = "0123456789"; // never valid subscripts, so never clash
  if (ell_dims > static_cast<int64_t>(ell_letters.size()))
    throw Error("einsum: too many dimensions under '...'");
  for (size_t i = 0; i < ins.size(); ++i) {
    const size_t p = ins[i].find("...");
    for (char c : ins[i])
      if (!std::isalpha(static_cast<unsigned char>(c)) && c != '.')
        throw Error("einsum: invalid subscript '" + std::string(1, c) + "' in '" + equation + "'");
    if (p == std::string::npos) continue;
    const int64_t n = operands[i].ndim() - (static_cast<int64_t>(ins[i].size()) - 3);
    if (n < 0)
      throw Error("einsum: operand " + std::to_string(i) + " of shape " +
                  shape_str(operands[i].shape()) + " has fewer dimensions than '" + ins[i] + "'");
    ins[i].replace(p, 3,
                   ell_letters.substr(static_cast<size_t>(ell_dims - n), static_cast<size_t>(n)));
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    const size_t p = out.find("...");
    if (p != std::string::npos)
      out.replace(p, 3, ell_letters.substr(0, static_cast<size_t>(ell_dims)));
  } else {
    // Implicit: the "..." dimensions, then the letters seen once, alphabetically.
    std::map<char, int> count;
    for (const std::string& s : ins)
      for (char c : s) ++count[c];
    out = ell_letters.substr(0, static_cast<size_t>(ell_dims));
    for (auto [c, n] : count)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) out += c;
  }
  // Sizes per letter (size 1 broadcasts).
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (static_cast<int64_t>(ins[i].size()) != operands[i].ndim())
      throw Error("einsum: subscripts '" + ins[i] + "' do not match operand " + std::to_string(i) +
                  " of shape " + shape_str(operands[i].shape()));
    for (size_t k = 0; k < ins[i].size(); ++k) {
      const int64_t n = operands[i].shape()[k];
      auto [it, fresh] = sizes.emplace(ins[i][k], n);
      if (fresh || it->second == n || n == 1) continue;
      if (it->second == 1) {
        it->second = n;
        continue;
      }
      throw Error("einsum: subscript '" + std::string(1, ins[i][k]) + "' has size " +
                  std::to_string(it->second) + " and " + std::to_string(n) + " (operand " +
                  std::to_string(i) + " of shape " + shape_str(operands[i].shape()) + ")");
    }
  }
  for (char c : out)
    if (!sizes.count(c))
      throw Error("einsum: output subscript '" + std::string(1, c) + "' is not in any input");
  // All letters: output first, then the summed ones.
  std::string all = out;
  for (auto [c, n] : sizes)
    if (all.find(c) == std::string::npos) all += c;
  Shape full;
  for (char c : all) full.push_back(sizes[c]);
  Tensor prod;
  for (size_t i = 0; i < ins.size(); ++i) {
    Tensor t = operands[i];
    std::string sub = ins[i];
    // Repeated letters: take the diagonal (flatten the pair, pad, reshape, shrink, as tinygrad).
    for (size_t a = 0; a < sub.size(); ++a) {
      for (size_t b = a + 1; b < sub.size();) {
        if (sub[b] != sub[a]) {
          ++b;
          continue;
        }
        const int64_t n = t.shape()[a];
        if (t.shape()[b] != n)
          throw Error("einsum: repeated subscript '" + std::string(1, sub[a]) + "' has sizes " +
                      std::to_string(n) + " and " + std::to_string(t.shape()[b]) + " in operand " +
                      std::to_string(i));
        Shape order;
        for (size_t k = 0; k < sub.size(); ++k)
          if (k != a && k != b) order.push_back(static_cast<int64_t>(k));
        order.push_back(static_cast<int64_t>(a));
        order.push_back(static_cast<int64_t>(b));
        t = t.permute(order).flatten(-2);
        const auto nd = static_cast<size_t>(t.ndim());
        std::vector<std::pair<int64_t, int64_t>> pads(nd, {0, 0}), keep;
        pads[nd - 1] = {0, n};
        Shape s(t.shape().begin(), t.shape().end() - 1);
        for (int64_t d : s) keep.emplace_back(0, d);
        s.push_back(n);
        s.push_back(n + 1);
        keep.emplace_back(0, n);
        keep.emplace_back(0, 1);
        t = t.pad(pads).reshape(s).shrink(keep).squeeze(-1);
        std::string ns;
        for (size_t k = 0; k < sub.size(); ++k)
          if (k != a && k != b) ns += sub[k];
        ns += sub[a];
        sub = ns;
        a = 0; // restart the scan on the new subscripts
        b = 1;
      }
    }
    // Permute to `all`'s order, unsqueeze missing letters, expand.
    Shape order, shp;
    for (char c : all) {
      const size_t p = sub.find(c);
      if (p != std::string::npos) order.push_back(static_cast<int64_t>(p));
    }
    t = t.permute(order);
    size_t k = 0;
    for (char c : all)
      shp.push_back(sub.find(c) != std::string::npos ? int64_t{t.shape()[k++]} : 1);
    t = t.reshape(shp).expand(full);
    prod = prod.defined() ? prod.mul(t) : t;
  }
  std::vector<int64_t> sum_axes;
  for (size_t k = out.size(); k < all.size(); ++k) sum_axes.push_back(static_cast<int64_t>(k));
  std::vector<DType> ds;
  for (const Tensor& t : operands) ds.push_back(t.dtype());
  const DType dt = least_upper_dtype(std::span<const DType>(ds));
  if (sum_axes.empty()) return prod.cast(dt);
  return prod.sum(sum_axes).cast(dt);
}

Tensor Tensor::linear(const Tensor& weight, const OptTensor& bias) const {
  if (weight.ndim() != 2 && weight.ndim() != 1)
    throw Error("linear: weight must be (out_features, in_features), got shape " +
                shape_str(weight.shape()));
  const int64_t in = weight.shape().back();
  if (ndim() == 0 || shape().back() != in)
    throw Error("linear: input " + shape_str(shape()) + " does not end in in_features=" +
                std::to_string(in) + " of weight " + shape_str(weight.shape()));
  Tensor r = weight.ndim() == 1 ? mul(weight).sum({-1}) : matmul(weight.transpose());
  if (!bias) return r;
  const int64_t out = weight.ndim() == 1 ? 1 : int64_t{weight.shape()[0]};
  if (bias->numel() != out || bias->ndim() > 1)
    throw Error("linear: bias of shape " + shape_str(bias->shape()) + " does not match " +
                std::to_string(out) + " out_features of weight " + shape_str(weight.shape()));
  return r.add(weight.ndim() == 1 ? bias->reshape({}) : *bias);
}

Tensor Tensor::layer_norm(const Shape& normalized_shape, const OptTensor& weight,
                          const OptTensor& bias, double eps) const {
  const std::vector<int64_t> axes = trailing_axes(*this, normalized_shape, "layer_norm");
  check_affine(weight, normalized_shape, "weight", "layer_norm");
  check_affine(bias, normalized_shape, "bias", "layer_norm");
  Tensor x = cast(least_upper_float(dtype()));
  Tensor c = x.sub(x.mean(axes, true));
  Tensor r = c.mul(c.square().mean(axes, true).add(eps).rsqrt());
  if (weight) r = r.mul(*weight);
  if (bias) r = r.add(*bias);
  return r.cast(least_upper_float(dtype()));
}

Tensor Tensor::batch_norm(OptTensor running_mean, OptTensor running_var, const OptTensor& weight,
                          const OptTensor& bias, bool train, double momentum, double eps) const {
  const std::string op = "batch_norm";
  if (ndim() < 2) throw Error(op + ": input must be (N, C, *), got shape " + shape_str(shape()));
  const int64_t c = shape()[1];
  const Shape cs{c};
  check_affine(running_mean, cs, "running_mean", op);
  check_affine(running_var, cs, "running_var", op);
  check_affine(weight, cs, "weight", op);
  check_affine(bias, cs, "bias", op);
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < ndim(); ++i) axes.push_back(i);
  const int64_t n = numel() / std::max<int64_t>(c, 1);
  Tensor x = cast(least_upper_float(dtype()));
  Tensor mean, invstd;
  if (train) {
    if (n <= 1)
      throw Error(op + ": expected more than 1 value per channel when training, got input " +
                  shape_str(shape()));
    Tensor bm = x.mean(axes, true);
    Tensor var = x.sub(bm).square().mean(axes, true); // biased, for normalizing
    mean = bm;
    invstd = var.add(eps).rsqrt();
    if (running_mean)
      running_mean->assign(running_mean->mul(1 - momentum).add(bm.reshape(cs).mul(momentum)));
    if (running_var) {
      Tensor unbiased = var.reshape(cs).mul(static_cast<double>(n) / static_cast<double>(n - 1));
      running_var->assign(running_var->mul(1 - momentum).add(unbiased.mul(momentum)));
    }
  } else {
    if (!running_mean || !running_var)
      throw Error(op + ": running_mean and running_var are needed when not training");
    mean = channel_view(*running_mean, ndim());
    invstd = channel_view(*running_var, ndim()).add(eps).rsqrt();
  }
  Tensor r = x.sub(mean).mul(invstd);
  if (weight) r = r.mul(channel_view(*weight, ndim()));
  if (bias) r = r.add(channel_view(*bias, ndim()));
  return r.cast(x.dtype());
}

Tensor Tensor::group_norm(int64_t num_groups, const OptTensor& weight, const OptTensor& bias,
                          double eps) const {
  const std::string op = "group_norm";
  if (ndim() < 2) throw Error(op + ": input must be (N, C, *), got shape " + shape_str(shape()));
  const int64_t n = shape()[0], c = shape()[1];
  if (num_groups < 1 || c % num_groups != 0)
    throw Error(op + ": num_groups=" + std::to_string(num_groups) + " does not divide the " +
                std::to_string(c) + " channels of input " + shape_str(shape()));
  check_affine(weight, Shape{c}, "weight", op);
  check_affine(bias, Shape{c}, "bias", op);
  Tensor x = cast(least_upper_float(dtype())).reshape({n, num_groups, -1});
  Tensor ctr = x.sub(x.mean({-1}, true));
  Tensor r = ctr.mul(ctr.square().mean({-1}, true).add(eps).rsqrt()).reshape(shape());
  if (weight) r = r.mul(channel_view(*weight, ndim()));
  if (bias) r = r.add(channel_view(*bias, ndim()));
  return r.cast(x.dtype());
}

Tensor Tensor::rms_norm(const Shape& normalized_shape, const OptTensor& weight,
                        std::optional<double> eps) const {
  const std::vector<int64_t> axes = trailing_axes(*this, normalized_shape, "rms_norm");
  check_affine(weight, normalized_shape, "weight", "rms_norm");
  const DType f = least_upper_float(dtype());
  const double e = eps                     ? *eps
                   : f == dtypes::float16  ? 0.0009765625
                   : f == dtypes::bfloat16 ? 0.0078125
                   : f == dtypes::float64
                       ? std::numeric_limits<double>::epsilon()
                       : static_cast<double>(std::numeric_limits<float>::epsilon());
  Tensor x = cast(f);
  Tensor r = x.mul(x.square().mean(axes, true).add(e).rsqrt());
  if (weight) r = r.mul(*weight);
  return r.cast(f);
}

Tensor Tensor::dropout(double p, bool train) const {
  if (!(p >= 0 && p <= 1))
    throw Error("dropout: probability has to be between 0 and 1, got " + std::to_string(p));
  if (!train || p == 0) return *this;
  if (p == 1) return mul(0);
  // The mask is its own kernel, as tinygrad's dropout has it (rand_like(...) >= p).contiguous():
  // threefry's long chain is not fused (and re-expanded) into every consumer.
  Tensor keep = Tensor::rand(shape(), dtypes::float32, device()).ge(p).contiguous();
  return keep.where(*this, 0).div(1.0 - p).cast(least_upper_float(dtype()));
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                            const OptTensor& attn_mask, double dropout_p,
                                            bool is_causal, std::optional<double> scale,
                                            bool enable_gqa) const {
  const std::string op = "scaled_dot_product_attention";
  if (ndim() < 2 || key.ndim() < 2 || value.ndim() < 2)
    throw Error(op + ": query, key and value need at least 2 dimensions, got " +
                shape_str(shape()) + ", " + shape_str(key.shape()) + ", " +
                shape_str(value.shape()));
  if (enable_gqa && ndim() >= 3 && key.ndim() >= 3 && value.ndim() >= 3) {
    const int64_t hq = shape()[shape().size() - 3], hk = key.shape()[key.shape().size() - 3],
                  hv = value.shape()[value.shape().size() - 3];
    if (hk != hv || hk <= 0 || hq % hk != 0)
      throw Error(op + ": with enable_gqa the query's " + std::to_string(hq) +
                  " heads must be a multiple of the key's " + std::to_string(hk) +
                  " and the value's " + std::to_string(hv) + " (equal)");
    if (hq != hk)
      return scaled_dot_product_attention(key.repeat_interleave(hq / hk, -3),
                                          value.repeat_interleave(hq / hk, -3), attn_mask,
                                          dropout_p, is_causal, scale, false);
  }
  const int64_t e = shape().back(), l = shape()[shape().size() - 2];
  const int64_t s = key.shape()[key.shape().size() - 2];
  if (key.shape().back() != e || value.shape()[value.shape().size() - 2] != s)
    throw Error(op + ": query " + shape_str(shape()) + ", key " + shape_str(key.shape()) +
                " and value " + shape_str(value.shape()) +
                " do not fit (..., L, E), (..., S, E), (..., S, Ev)");
  if (is_causal && attn_mask) throw Error(op + ": give attn_mask or is_causal, not both");
  const DType f = least_upper_dtype({dtype(), key.dtype(), dtypes::float32});
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(e));
  Tensor qk = cast(f).matmul(key.cast(f).transpose()).mul(sc);
  if (is_causal) {
    // Top-left aligned lower triangle: query i sees keys j <= i.
    Tensor i = Tensor::arange(l, dtypes::int32, device()).reshape({l, 1});
    Tensor j = Tensor::arange(s, dtypes::int32, device()).reshape({1, s});
    qk = j.le(i).where(qk, -kInf);
  } else if (attn_mask) {
    qk = attn_mask->dtype().is_bool() ? attn_mask->where(qk, -kInf) : qk.add(*attn_mask);
  }
  Tensor w = qk.cast(least_upper_float(dtype())).softmax(-1);
  if (dropout_p > 0) w = w.dropout(dropout_p, true);
  return w.matmul(value);
}

} // namespace tg
