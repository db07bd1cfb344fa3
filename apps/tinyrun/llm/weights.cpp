// Loading model weights from GGUF or a Hugging Face folder; see weights.hpp.
#include "weights.hpp"

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tg/error.hpp"
#include "tg/ggml_quants.hpp"
#include "tg/runner_cache.hpp"
#include "tg/safetensors.hpp"
#include "tg/torch_checkpoint.hpp"

namespace tg::llm {

namespace fs = std::filesystem;

namespace {
// From this many rows of x on (a prefill chunk), a weight stored as anything but float32 is
// converted once into a float32 temporary that the matmul then reads, instead of inside the
// matmul: a register tile of the fused matmul covers 8 rows, so it would redo the conversion
// rows/8 times. Measured on a 110M llama with 128-token chunks, Q4_0 prefill is 12% faster
// (paired runs); 16-token chunks stay fused, where the copy costs more than it saves.
constexpr int64_t kDequantizeOnceRows = 64;
} // namespace

Tensor Weight::dense() const {
  if (type == GgmlType::F32) return data;
  if (type == GgmlType::F16 || type == GgmlType::BF16) return data.cast(dtypes::float32);
  return ggml_dequantize(data, type, shape);
}

namespace {
// Rows of x (every axis but the last), at their largest where symbolic.
int64_t rows_of(const Tensor& x) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < x.shape().size(); ++i) rows *= x.shape()[i].vmax();
  return rows;
}
} // namespace

Tensor Weight::linear(const Tensor& x) const {
  const int64_t rows = rows_of(x);
  if (type != GgmlType::F32 && rows >= kDequantizeOnceRows) return x.linear(dense().contiguous());
  // One row only: the int8 kernel has no register tile over rows of x, and two rows already
  // take longer than the fused float32 dequantization (2048 x 768 Q4_0: 161 against 90 us).
  if (dot_words && rows == 1) return ggml_linear_int8(x, *dot_words);
  const int64_t be = ggml_type_info(type).block_elems;
  if (be == 1 || shape.size() != 2) return x.linear(dense());
  const int64_t out = shape[0], in = shape[1], nb = in / be;
  Shape xs = x.shape();
  xs.back() = nb;
  xs.push_back(be);
  xs.insert(xs.end() - 2, 1);
  Shape ws(xs.size() - 3, 1);
  ws.insert(ws.end(), {out, nb, be});
  return (x.reshape(xs) * dense().reshape(ws)).sum({-2, -1});
}

int64_t Weight::nbytes() const { return data.numel() * data.dtype().itemsize(); }

const WeightGroup* Model::group_for(const std::string& key, const Tensor& x) const {
  auto it = groups.find(key);
  return it == groups.end() || rows_of(x) != 1 ? nullptr : &it->second;
}

const Weight* Model::find(const std::string& name) const {
  auto it = weights.find(name);
  return it == weights.end() ? nullptr : &it->second;
}

const Weight& Model::at(const std::string& name) const {
  if (const Weight* w = find(name)) return *w;
  throw Error(path.string() + ": the model has no tensor '" + name + "' (a " + config.arch +
              " model needs it)");
}

int64_t Model::weight_bytes() const {
  int64_t n = 0;
  for (const auto& [name, w] : weights)
    if (name != "token_embd.weight" || config.tied_embeddings || !find("output.weight"))
      n += w.nbytes();
  return n;
}

std::optional<std::string> gguf_name_of_hf(const std::string& n) {
  static const std::vector<std::pair<std::string, std::string>> layer_names{
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.q_proj.bias", "attn_q.bias"},
      {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  if (n == "model.embed_tokens.weight") return "token_embd.weight";
  if (n == "model.norm.weight") return "output_norm.weight";
  if (n == "lm_head.weight") return "output.weight";
  static const std::regex layer(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(n, m, layer))
    for (const auto& [hf, gg] : layer_names)
      if (m[2] == hf) return "blk." + m[1].str() + "." + gg;
  return std::nullopt;
}

namespace {

std::string megabytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(p.string() + ": cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

GgmlType ggml_type_of(DType d, const std::string& origin, const std::string& name) {
  if (d == dtypes::float32) return GgmlType::F32;
  if (d == dtypes::float16) return GgmlType::F16;
  if (d == dtypes::bfloat16) return GgmlType::BF16;
  throw Error(origin + ": tensor '" + name + "' is " + d.name() +
              "; a model's weights must be F32, F16 or BF16");
}

// A layer's weights that read the same input, stacked for one decode matvec (Model::groups).
struct GroupSpec {
  const char* key;
  std::vector<const char*> members;
};
const std::vector<GroupSpec>& group_specs() {
  static const std::vector<GroupSpec> specs{{"attn_qkv", {"attn_q", "attn_k", "attn_v"}},
                                            {"ffn_gate_up", {"ffn_gate", "ffn_up"}}};
  return specs;
}

// The 2-D Q4_0 and Q8_0 weights that matmuls read (not the token embedding, which is gathered
// by row) repacked for DOT4, where the device's renderer has it; CPU_DOT4=0 keeps them as they
// are. A layer's q, k and v (gate and up) of one type are repacked together into a group.
void repack_for_dot4(Model& m) {
  std::vector<Tensor> words;
  auto keep = [&](DotWords& dw) {
    dw.qs = dw.qs.contiguous();
    dw.d = dw.d.contiguous();
    words.insert(words.end(), {dw.qs, dw.d});
  };
  auto repackable = [&](const std::string& name, const Weight& w) {
    return ggml_has_dot_words(w.type) && w.shape.size() == 2 && name != "token_embd.weight" &&
           renderer_caps(w.data.device()).has_dot4;
  };
  // Groups first: their members' blocks concatenated (rows are whole blocks, so the bytes of
  // the stacked matrix are the members' bytes one after the other).
  std::set<std::string> grouped;
  for (int64_t l = 0; l < m.config.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    for (const GroupSpec& spec : group_specs()) {
      WeightGroup g;
      std::vector<Tensor> blocks;
      int64_t rows = 0;
      const Weight* first = m.find(p + spec.members[0] + ".weight");
      for (const char* mem : spec.members) {
        const std::string name = p + mem + ".weight";
        const Weight* w = m.find(name);
        if (!w || !first || !repackable(name, *w) || w->type != first->type ||
            w->shape[1] != first->shape[1])
          break;
        g.names.push_back(name);
        g.rows.push_back(static_cast<int64_t>(w->shape[0]));
        blocks.push_back(w->data.reshape({w->data.numel()}));
        rows += g.rows.back();
      }
      if (g.names.size() != spec.members.size()) continue;
      g.words = ggml_dot_words(Tensor::cat(blocks), first->type, rows,
                               static_cast<int64_t>(first->shape[1]));
      keep(g.words);
      grouped.insert(g.names.begin(), g.names.end());
      m.groups[p + spec.key] = std::move(g);
    }
  }
  for (auto& [name, w] : m.weights) {
    if (grouped.count(name) || !repackable(name, w)) continue;
    keep(w.dot_words.emplace(ggml_dot_words(w.data, w.type, static_cast<int64_t>(w.shape[0]),
                                            static_cast<int64_t>(w.shape[1]))));
  }
  Tensor::realize_all(std::move(words));
}

Model load_gguf(const fs::path& path, const std::string& device) {
  GgufFile g = gguf_load(path, device);
  Model m;
  m.path = path;
  m.format = "gguf";
  m.config = config_from_gguf(g.metadata);
  m.metadata = std::move(g.metadata);
  for (GgufTensor& t : g.tensors) {
    const std::vector<int64_t> s = t.info.shape();
    m.weights[t.info.name] = Weight{t.info.type, Shape(s.begin(), s.end()), std::move(t.data)};
  }
  repack_for_dot4(m);
  return m;
}

Model load_hf(const fs::path& dir, const std::string& device) {
  Model m;
  m.path = dir;
  m.format = "hf";
  m.config = config_from_hf_json(read_text(dir / "config.json"), (dir / "config.json").string());
  if (fs::exists(dir / "tokenizer.json")) m.tokenizer_json = read_text(dir / "tokenizer.json");
  // *.safetensors, else the PyTorch checkpoints (pytorch_model*.bin) older uploads ship.
  std::vector<fs::path> files, checkpoints;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
    if (e.path().extension() == ".bin" &&
        e.path().filename().string().rfind("pytorch_model", 0) == 0)
      checkpoints.push_back(e.path());
  }
  const bool torch_format = files.empty() && !checkpoints.empty();
  if (torch_format) files = checkpoints;
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw Error(dir.string() +
                ": no *.safetensors or pytorch_model*.bin weights next to config.json");
  for (const fs::path& f : files) {
    std::vector<std::pair<std::string, Tensor>> tensors =
        torch_format ? torch_load(f, device).tensors : safe_load(f, device).tensors;
    for (auto& [name, t] : tensors) {
      const std::optional<std::string> gg = gguf_name_of_hf(name);
      if (!gg) continue;
      m.weights[*gg] = Weight{ggml_type_of(t.dtype(), f.string(), name), t.shape(), t};
    }
  }
  if (!m.find("output.weight")) m.config.tied_embeddings = true;
  return m;
}

} // namespace

Model load_model(const fs::path& path, const std::string& device, bool progress) {
  if (!fs::exists(path)) throw Error(path.string() + ": no such file or folder");
  const bool hf = fs::is_directory(path);
  if (hf && !fs::exists(path / "config.json"))
    throw Error(path.string() +
                ": a model folder must hold config.json and *.safetensors (or pytorch_model*.bin)");
  if (progress) std::fprintf(stderr, "loading %s ...\n", path.string().c_str());
  Model m = hf ? load_hf(path, device) : load_gguf(path, device);
  if (!m.find("output.weight")) m.config.tied_embeddings = true;
  if (progress) {
    const ModelConfig& c = m.config;
    std::fprintf(stderr,
                 "loaded %s (%s): %s, %lld layers, dim %lld, %lld/%lld heads, vocab %lld, "
                 "%zu tensors, %s\n",
                 path.filename().string().c_str(), m.format.c_str(), c.arch.c_str(),
                 static_cast<long long>(c.n_layers), static_cast<long long>(c.dim),
                 static_cast<long long>(c.n_heads), static_cast<long long>(c.n_kv_heads),
                 static_cast<long long>(c.vocab), m.weights.size(),
                 megabytes(m.weight_bytes()).c_str());
  }
  return m;
}

} // namespace tg::llm
