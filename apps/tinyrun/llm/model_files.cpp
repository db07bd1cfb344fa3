// Quantizing and generating GGUF models; see model_files.hpp.
#include "model_files.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "tg/error.hpp"
#include "tg/ggml_quants.hpp"
#include "tg/gguf.hpp"
#include "transformer.hpp"

namespace tg::llm {

namespace fs = std::filesystem;

uint32_t llama_file_type(GgmlType type) {
  switch (type) {
  case GgmlType::F32:
    return 0;
  case GgmlType::F16:
    return 1;
  case GgmlType::Q4_0:
    return 2;
  case GgmlType::Q4_1:
    return 3;
  case GgmlType::Q8_0:
    return 7;
  case GgmlType::Q5_0:
    return 8;
  case GgmlType::Q5_1:
    return 9;
  case GgmlType::Q2_K:
    return 10;
  case GgmlType::Q3_K:
    return 12;
  case GgmlType::Q4_K:
    return 15;
  case GgmlType::Q5_K:
    return 17;
  case GgmlType::Q6_K:
    return 18;
  case GgmlType::BF16:
    return 32;
  default:
    return 0;
  }
}

GgmlType quantize_fallback(GgmlType type, int64_t n) {
  // llama-quant.cpp: K-quants step down to a 32-block type, 32-block types to F16.
  for (int step = 0; step < 4; ++step) {
    if (n % ggml_type_info(type).block_elems == 0) return type;
    switch (type) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
      type = GgmlType::Q5_0;
      break;
    case GgmlType::Q5_K:
      type = GgmlType::Q5_1;
      break;
    case GgmlType::Q6_K:
      type = GgmlType::Q8_0;
      break;
    default:
      type = GgmlType::F16;
      break;
    }
  }
  return type;
}

QuantizeReport quantize_model(const fs::path& in, const fs::path& out, GgmlType type,
                              bool progress) {
  if (!ggml_can_quantize(type))
    throw Error("quantize: cannot write " + std::string(ggml_type_name(type)) +
                " (can: " + ggml_loadable_type_names() + ")");
  const GgufFile h = gguf_load(in);
  GgufMetadata meta = h.metadata;
  // In llama-quantize's order, so a file of the same weights is the same file.
  meta.set("general.quantization_version", GgufValue::of_u32(2));
  meta.set("general.file_type", GgufValue::of_u32(llama_file_type(type)));
  QuantizeReport r;
  std::vector<GgufWriteTensor> tensors;
  for (const GgufTensor& gt : h.tensors) {
    const GgufTensorInfo& t = gt.info;
    const std::vector<uint8_t> bytes = gt.data.to_bytes();
    r.bytes_in += static_cast<int64_t>(t.nbytes);
    GgufWriteTensor w{t.name, t.ne, t.type, {}};
    const bool weight = t.ne.size() == 2 && t.name.size() > 7 &&
                        t.name.compare(t.name.size() - 7, 7, ".weight") == 0;
    if (!weight || t.type == type) {
      w.bytes.assign(bytes.begin(), bytes.end());
      ++r.kept;
    } else {
      const std::vector<float> x = ggml_dequantize_host(t.type, bytes);
      const auto n = static_cast<int64_t>(t.ne[0]);
      w.type = quantize_fallback(type, n);
      w.bytes = ggml_quantize(w.type, x, n);
      if (w.type != type) {
        ++r.fell_back;
        if (progress)
          std::fprintf(stderr, "  %s: rows of %lld are not whole %s blocks; %s instead\n",
                       t.name.c_str(), static_cast<long long>(n),
                       std::string(ggml_type_name(type)).c_str(),
                       std::string(ggml_type_name(w.type)).c_str());
      }
      ++r.quantized;
    }
    r.bytes_out += static_cast<int64_t>(w.bytes.size());
    tensors.push_back(std::move(w));
  }
  gguf_write(out, meta, tensors, h.alignment);
  return r;
}

namespace {

// A fast deterministic normal source (xorshift64* and Box-Muller).
class Gaussian {
public:
  explicit Gaussian(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  float next() {
    if (has_) {
      has_ = false;
      return spare_;
    }
    const double u1 = (static_cast<double>(bits() >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = static_cast<double>(bits() >> 11) / 9007199254740992.0;
    const double r = std::sqrt(-2 * std::log(u1)), a = 6.283185307179586 * u2;
    spare_ = static_cast<float>(r * std::sin(a));
    has_ = true;
    return static_cast<float>(r * std::cos(a));
  }

private:
  uint64_t bits() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 2685821657736338717ull;
  }
  uint64_t s_;
  float spare_ = 0;
  bool has_ = false;
};

// A vocabulary llama.cpp accepts: <unk>, <s>, </s>, the 256 byte tokens, then distinct pieces.
void add_placeholder_vocab(GgufMetadata& m, int64_t vocab) {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  auto add = [&](std::string t, int32_t type) {
    scores.push_back(-static_cast<float>(tokens.size()));
    tokens.push_back(std::move(t));
    types.push_back(type);
  };
  add("<unk>", 2);
  add("<s>", 3);
  add("</s>", 3);
  for (int b = 0; b < 256 && static_cast<int64_t>(tokens.size()) < vocab; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 6);
  }
  for (int64_t i = 0; static_cast<int64_t>(tokens.size()) < vocab; ++i) {
    std::string piece = "\xE2\x96\x81"; // U+2581: a word start
    for (int64_t k = i;; k = k / 26 - 1) {
      piece += static_cast<char>('a' + k % 26);
      if (k < 26) break;
    }
    add(piece, 1);
  }
  m.set("tokenizer.ggml.model", GgufValue::of_string("llama"));
  m.set("tokenizer.ggml.tokens", GgufValue::of_strings(tokens));
  m.set("tokenizer.ggml.scores", GgufValue::of_f32s(scores));
  m.set("tokenizer.ggml.token_type", GgufValue::of_i32s(types));
  m.set("tokenizer.ggml.bos_token_id", GgufValue::of_u32(1));
  m.set("tokenizer.ggml.eos_token_id", GgufValue::of_u32(2));
  m.set("tokenizer.ggml.unknown_token_id", GgufValue::of_u32(0));
}

} // namespace

void write_random_model(const RandomModelSpec& spec, const fs::path& out, bool progress) {
  RandomModelSpec s = spec;
  if (s.tokenizer)
    if (const GgufValue* t = s.tokenizer->find("tokenizer.ggml.tokens"))
      s.vocab = static_cast<int64_t>(t->strings.size());
  const int64_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (s.dim <= 0 || s.layers <= 0 || s.heads <= 0 || s.dim % s.heads != 0 ||
      s.heads % kv_heads != 0 || s.ffn <= 0 || (s.vocab < 259 && !s.tokenizer))
    throw Error("random: the sizes do not make a model (dim a multiple of heads, heads of "
                "kv-heads, vocab at least 259 for the byte tokens)");
  const int64_t head_dim = s.dim / s.heads, kv_dim = head_dim * kv_heads;
  GgufMetadata m;
  const std::string a = s.arch + ".";
  m.set("general.architecture", GgufValue::of_string(s.arch));
  m.set("general.name", GgufValue::of_string("random " + s.arch));
  m.set("general.file_type", GgufValue::of_u32(llama_file_type(s.type)));
  m.set(a + "context_length", GgufValue::of_u32(static_cast<uint32_t>(s.context)));
  m.set(a + "embedding_length", GgufValue::of_u32(static_cast<uint32_t>(s.dim)));
  m.set(a + "block_count", GgufValue::of_u32(static_cast<uint32_t>(s.layers)));
  m.set(a + "feed_forward_length", GgufValue::of_u32(static_cast<uint32_t>(s.ffn)));
  m.set(a + "attention.head_count", GgufValue::of_u32(static_cast<uint32_t>(s.heads)));
  m.set(a + "attention.head_count_kv", GgufValue::of_u32(static_cast<uint32_t>(kv_heads)));
  m.set(a + "rope.dimension_count", GgufValue::of_u32(static_cast<uint32_t>(head_dim)));
  m.set(a + "rope.freq_base", GgufValue::of_f32(static_cast<float>(s.rope_theta)));
  m.set(a + "attention.layer_norm_rms_epsilon", GgufValue::of_f32(static_cast<float>(s.norm_eps)));
  m.set(a + "vocab_size", GgufValue::of_u32(static_cast<uint32_t>(s.vocab)));
  if (s.arch == "qwen3") {
    m.set(a + "attention.key_length", GgufValue::of_u32(static_cast<uint32_t>(head_dim)));
    m.set(a + "attention.value_length", GgufValue::of_u32(static_cast<uint32_t>(head_dim)));
  }
  if (s.tokenizer)
    for (const auto& [k, v] : s.tokenizer->entries()) m.set(k, v);
  else
    add_placeholder_vocab(m, s.vocab);

  Gaussian g(s.seed);
  std::vector<GgufWriteTensor> tensors;
  auto weight = [&](const std::string& name, int64_t rows, int64_t cols) {
    std::vector<float> x(static_cast<size_t>(rows * cols));
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    for (float& v : x) v = g.next() * scale;
    const GgmlType t = quantize_fallback(s.type, cols);
    tensors.push_back({name,
                       {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)},
                       t,
                       ggml_quantize(t, x, cols)});
  };
  auto vec = [&](const std::string& name, int64_t n, float center, float spread) {
    std::vector<float> v(static_cast<size_t>(n), center);
    if (s.random_norms)
      for (float& x : v) x = center + spread * g.next();
    tensors.push_back(
        {name, {static_cast<uint64_t>(n)}, GgmlType::F32, ggml_quantize(GgmlType::F32, v, n)});
  };
  auto norm = [&](const std::string& name, int64_t n) { vec(name, n, 1.0f, 0.2f); };
  weight("token_embd.weight", s.vocab, s.dim);
  for (int64_t l = 0; l < s.layers; ++l) {
    if (progress)
      std::fprintf(stderr, "\rrandom: layer %lld/%lld", static_cast<long long>(l + 1),
                   static_cast<long long>(s.layers));
    const std::string p = "blk." + std::to_string(l) + ".";
    norm(p + "attn_norm.weight", s.dim);
    weight(p + "attn_q.weight", s.dim, s.dim);
    weight(p + "attn_k.weight", kv_dim, s.dim);
    weight(p + "attn_v.weight", kv_dim, s.dim);
    if (s.arch == "qwen2") {
      vec(p + "attn_q.bias", s.dim, 0.0f, 0.5f);
      vec(p + "attn_k.bias", kv_dim, 0.0f, 0.5f);
      vec(p + "attn_v.bias", kv_dim, 0.0f, 0.5f);
    }
    if (s.arch == "qwen3") {
      norm(p + "attn_q_norm.weight", head_dim);
      norm(p + "attn_k_norm.weight", head_dim);
    }
    weight(p + "attn_output.weight", s.dim, s.dim);
    norm(p + "ffn_norm.weight", s.dim);
    weight(p + "ffn_gate.weight", s.ffn, s.dim);
    weight(p + "ffn_up.weight", s.ffn, s.dim);
    weight(p + "ffn_down.weight", s.dim, s.ffn);
  }
  norm("output_norm.weight", s.dim);
  if (!s.tied) weight("output.weight", s.vocab, s.dim);
  if (s.llama3_rope_scaling) {
    // GGUF keeps llama-3's scaling as the divisor of each frequency (llama.cpp's rope_freqs).
    ModelConfig c;
    c.head_dim = head_dim;
    c.rope_theta = s.rope_theta;
    const std::vector<double> plain = rope_inv_freqs(c);
    c.rope_scaling = {true, s.rope_factor, s.rope_low_freq, s.rope_high_freq,
                      s.rope_original_context};
    const std::vector<double> scaled = rope_inv_freqs(c);
    std::vector<float> f(plain.size());
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(plain[i] / scaled[i]);
    tensors.push_back({"rope_freqs.weight",
                       {f.size()},
                       GgmlType::F32,
                       ggml_quantize(GgmlType::F32, f, static_cast<int64_t>(f.size()))});
  }
  if (progress) std::fprintf(stderr, "\n");
  gguf_write(out, m, tensors);
}

} // namespace tg::llm
