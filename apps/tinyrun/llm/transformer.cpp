// The llama-family forward pass; see transformer.hpp.
#include "transformer.hpp"

#include <array>
#include <cmath>
#include <numbers>

#include "tg/error.hpp"
#include "tg/ggml_int8.hpp"
#include "tg/ggml_quants.hpp"

namespace tg::llm {

std::vector<double> rope_inv_freqs(const ModelConfig& c, std::span<const float> freq_factors) {
  const int64_t half = c.head_dim / 2;
  std::vector<double> f(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i)
    f[static_cast<size_t>(i)] =
        std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(c.head_dim));
  if (c.rope_scaling.enabled) { // llama-3.1: long wavelengths slowed by `factor`, smoothly
    const Llama3RopeScaling& s = c.rope_scaling;
    const double old = static_cast<double>(s.original_context);
    const double low_wavelen = old / s.low_freq_factor, high_wavelen = old / s.high_freq_factor;
    for (double& freq : f) {
      const double wavelen = 2 * std::numbers::pi / freq;
      if (wavelen < high_wavelen) continue;
      if (wavelen > low_wavelen) {
        freq /= s.factor;
        continue;
      }
      const double smooth =
          (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      freq = (1 - smooth) * freq / s.factor + smooth * freq;
    }
  }
  if (!freq_factors.empty()) {
    if (static_cast<int64_t>(freq_factors.size()) != half)
      throw Error("rope_freqs.weight has " + std::to_string(freq_factors.size()) +
                  " factors; the head dimension needs " + std::to_string(half));
    for (int64_t i = 0; i < half; ++i)
      f[static_cast<size_t>(i)] /= static_cast<double>(freq_factors[static_cast<size_t>(i)]);
  }
  return f;
}

Transformer::Transformer(const Model& model, int64_t context)
    : model_(model), config_(model.config), context_(context) {
  if (context_ <= 0 || context_ > config_.context)
    context_ = std::min<int64_t>(context_ <= 0 ? config_.context : context_, config_.context);
  const Weight& embd = model_.at("token_embd.weight");
  device_ = embd.data.device();
  embd_type_ = embd.type;
  embd_host_ = embd.data.to_bytes();
  if (embd.shape != Shape{config_.vocab, config_.dim})
    throw Error(model_.path.string() + ": token_embd.weight has shape " + embd.data.str() +
                ", the config says (" + std::to_string(config_.vocab) + ", " +
                std::to_string(config_.dim) + ")");

  std::vector<float> factors;
  if (const Weight* rf = model_.find("rope_freqs.weight")) factors = rf->dense().to_vector<float>();
  const std::vector<double> inv = rope_inv_freqs(config_, factors);
  const int64_t half = config_.head_dim / 2;
  std::vector<float> cs(static_cast<size_t>(context_ * half)), sn(cs.size());
  for (int64_t p = 0; p < context_; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double a = static_cast<double>(p) * inv[static_cast<size_t>(i)];
      cs[static_cast<size_t>(p * half + i)] = static_cast<float>(std::cos(a));
      sn[static_cast<size_t>(p * half + i)] = static_cast<float>(std::sin(a));
    }
  rope_cos_ = Tensor::from_vector(cs, Shape{context_, half}, device_).realize();
  rope_sin_ = Tensor::from_vector(sn, Shape{context_, half}, device_).realize();
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    const Shape s{context_, config_.n_kv_heads, config_.head_dim};
    cache_k_.push_back(Tensor::zeros(s, dtypes::float32, device_).contiguous().realize());
    cache_v_.push_back(Tensor::zeros(s, dtypes::float32, device_).contiguous().realize());
  }
}

int64_t Transformer::kv_cache_bytes() const {
  return 2 * config_.n_layers * context_ * config_.n_kv_heads * config_.head_dim * 4;
}

std::vector<float> Transformer::embed(std::span<const int32_t> tokens) const {
  const auto dim = static_cast<uint64_t>(config_.dim);
  const uint64_t row = *ggml_nbytes(embd_type_, dim);
  std::vector<float> out;
  out.reserve(tokens.size() * dim);
  for (int32_t t : tokens) {
    if (t < 0 || t >= config_.vocab)
      throw Error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                  std::to_string(config_.vocab - 1) + ")");
    const std::span<const uint8_t> bytes(embd_host_.data() + static_cast<uint64_t>(t) * row, row);
    const std::vector<float> v = ggml_dequantize_host(embd_type_, bytes);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

namespace {

// x @ w^T for each member of `g`, one row of x: one stored int8 product, then a view of its
// columns per member.
std::vector<Tensor> grouped_linear(const WeightGroup& g, const Tensor& x) {
  const Tensor y = ggml_linear_int8(x, g.words).contiguous();
  std::vector<Tensor> out;
  int64_t from = 0;
  for (int64_t rows : g.rows) {
    out.push_back(y.shrink({{0, y.size(0)}, {from, from + rows}}));
    from += rows;
  }
  return out;
}

} // namespace

sint Transformer::start_pos_var(int64_t T) const { return Variable("start_pos", 0, context_ - T); }
sint Transformer::last_var(int64_t T) const { return Variable("last", 0, T - 1); }

Tensor Transformer::rms_norm(const Tensor& x, const Tensor& w) const {
  return x * (x.square().mean({-1}, true) + config_.norm_eps).rsqrt() * w;
}

Tensor Transformer::rope(const Tensor& x, const sint& start_pos, int64_t T) const {
  const int64_t H = x.size(1), hd = config_.head_dim, half = hd / 2;
  const PadArg rows{{start_pos, sint::add(start_pos, sint(T))}, {0, half}};
  const Tensor cos = rope_cos_.shrink(rows).reshape({T, 1, half});
  const Tensor sin = rope_sin_.shrink(rows).reshape({T, 1, half});
  Tensor x0, x1;
  if (config_.rope == RopeLayout::Normal) { // pairs (2i, 2i+1)
    const Tensor xr = x.reshape({T, H, half, 2});
    x0 = xr.shrink({{0, T}, {0, H}, {0, half}, {0, 1}}).reshape({T, H, half});
    x1 = xr.shrink({{0, T}, {0, H}, {0, half}, {1, 2}}).reshape({T, H, half});
  } else { // halves (i, i + d/2)
    x0 = x.shrink({{0, T}, {0, H}, {0, half}});
    x1 = x.shrink({{0, T}, {0, H}, {half, hd}});
  }
  const Tensor o0 = x0 * cos - x1 * sin;
  const Tensor o1 = x0 * sin + x1 * cos;
  if (config_.rope == RopeLayout::Normal) return Tensor::stack({o0, o1}, -1).reshape({T, H, hd});
  return Tensor::cat({o0, o1}, -1);
}

Tensor Transformer::attention(int64_t l, const Tensor& xn, const sint& start_pos, int64_t T) {
  const ModelConfig& c = config_;
  const std::string p = "blk." + std::to_string(l) + ".";
  // Each projection is stored (T, out) before RoPE: each rotated element reads two
  // projections, and the rotation of a fused matmul would compute every dot product twice (four
  // times through the stack). Stored as (T, out) and split into heads after: a (T, heads,
  // head_dim) output made the matmul loop over tokens outermost, streaming the whole weight
  // past every tile of tokens (1.7x slower in prefill than the same-shaped attn_output).
  const std::array<const char*, 3> names{"attn_q", "attn_k", "attn_v"};
  std::vector<Tensor> qkv;
  if (const WeightGroup* g = model_.group_for(p + "attn_qkv", xn))
    qkv = grouped_linear(*g, xn);
  else
    for (const char* name : names)
      qkv.push_back(model_.at(p + name + ".weight").linear(xn).contiguous());
  auto heads = [&](size_t i, int64_t n) {
    Tensor y = qkv[i];
    if (const Weight* b = model_.find(p + names[i] + ".bias")) y = y + b->dense();
    return y.reshape({T, n, c.head_dim});
  };
  Tensor q = heads(0, c.n_heads), k = heads(1, c.n_kv_heads), v = heads(2, c.n_kv_heads);
  if (c.qk_norm) {
    q = rms_norm(q, model_.at(p + "attn_q_norm.weight").dense());
    k = rms_norm(k, model_.at(p + "attn_k_norm.weight").dense());
  }
  // Stored head-major and transposed, (H, hd, T): the scores below are computed keys x queries,
  // vectors along the queries.
  q = rope(q, start_pos, T).permute({1, 2, 0}).contiguous();
  k = rope(k, start_pos, T);
  const sint end = sint::add(start_pos, sint(T));
  Tensor ck = cache_k_[static_cast<size_t>(l)].shrink(
      {{start_pos, end}, {0, c.n_kv_heads}, {0, c.head_dim}});
  Tensor cv = cache_v_[static_cast<size_t>(l)].shrink(
      {{start_pos, end}, {0, c.n_kv_heads}, {0, c.head_dim}});
  ck.assign(k);
  cv.assign(v);
  Tensor::realize_all({q, ck, cv});

  // Keys and values of every position so far, the KV heads shared by groups of query heads.
  const int64_t rep = c.n_heads / c.n_kv_heads;
  auto past = [&](const Tensor& cache) {
    Tensor t = cache.shrink({{0, end}, {0, c.n_kv_heads}, {0, c.head_dim}});
    if (rep > 1)
      t = t.reshape({end, c.n_kv_heads, 1, c.head_dim})
              .expand({end, c.n_kv_heads, rep, c.head_dim})
              .reshape({end, c.n_heads, c.head_dim});
    return t;
  };
  // Scores as (H, S, T), keys by queries: a prefill's kernel then broadcasts a key's element
  // over a vector of queries (stored contiguous in q above), where (H, T, S) took a 64-long dot
  // product and a horizontal sum per score (S, the keys so far, is symbolic and cannot be a
  // vector axis).
  const Tensor keys = past(cache_k_[static_cast<size_t>(l)]).permute({1, 0, 2});       // (H, S, hd)
  const Tensor values = past(cache_v_[static_cast<size_t>(l)]).permute({1, 0, 2});     // (H, S, hd)
  Tensor scores = keys.matmul(q) * (1.0 / std::sqrt(static_cast<double>(c.head_dim))); // (H, S, T)
  if (T > 1) { // causal: query i (at start_pos + i) sees keys 0..start_pos + i
    const Tensor kpos = Tensor::arange(context_, dtypes::int32, device_).shrink({{0, end}});
    const Tensor qpos = Tensor::arange(context_, dtypes::int32, device_).shrink({{start_pos, end}});
    const Tensor future = kpos.reshape({end, 1}) > qpos.reshape({1, T});
    scores = scores + future.where(-INFINITY, 0.0f);
  }
  const Tensor out = scores.softmax(-2).transpose(-1, -2).matmul(values).permute({1, 0, 2}).reshape(
      {T, c.n_heads * c.head_dim});
  return model_.at(p + "attn_output.weight").linear(out);
}

Tensor Transformer::forward(const Tensor& x, const sint& start_pos, const sint& last) {
  const ModelConfig& c = config_;
  const int64_t T = x.size(0);
  if (x.ndim() != 2 || x.size(1) != c.dim)
    throw Error("forward: the input must be (T, " + std::to_string(c.dim) + ") embeddings");
  Tensor h = x;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    // The normalized input and the gated activation are stored: fused into the matmuls that
    // read them they would be recomputed for every output row (a reduce and an exp per weight).
    const Tensor an = rms_norm(h, model_.at(p + "attn_norm.weight").dense()).contiguous();
    h = h + attention(l, an, start_pos, T);
    const Tensor xn = rms_norm(h, model_.at(p + "ffn_norm.weight").dense()).contiguous();
    // The gate product is stored too: with both products in one kernel, its two reduces
    // cannot both be unrolled into vector accumulators, and the first runs scalar (5x slower
    // than a kernel of its own); the stored gate costs one FFN-wide row per token.
    Tensor gate, up;
    if (const WeightGroup* g = model_.group_for(p + "ffn_gate_up", xn)) {
      const std::vector<Tensor> y = grouped_linear(*g, xn);
      gate = y[0];
      up = y[1];
    } else {
      gate = model_.at(p + "ffn_gate.weight").linear(xn).contiguous();
      up = model_.at(p + "ffn_up.weight").linear(xn);
    }
    h = h + model_.at(p + "ffn_down.weight").linear((gate.silu() * up).contiguous());
    // Stored per layer: the next layer's cache write reads it, and recomputing it there would
    // make a step quadratic in the layers.
    h = h.contiguous().realize();
  }
  const Weight& out_w =
      c.tied_embeddings ? model_.at("token_embd.weight") : model_.at("output.weight");
  const Tensor hl = h.shrink({{last, sint::add(last, sint(1))}, {0, c.dim}});
  return out_w.linear(rms_norm(hl, model_.at("output_norm.weight").dense()).contiguous())
      .reshape({c.vocab});
}

} // namespace tg::llm
