#include "graph_model.hpp"

#include <optional>

#include "tg/error.hpp"
#include "tg/safetensors.hpp"

namespace tinyrun {

using tg::Error;
using tg::Tensor;
using tg::data::GraphOp;

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

// TFLite's fused activations: 0 none, 1 RELU, 3 RELU6.
Tensor activation(const Tensor& x, const GraphOp& op, const std::string& where) {
  const int64_t act = op.opts.count("act") ? op.int_opt("act") : 0;
  if (act == 0) return x;
  if (act == 1) return x.relu();
  if (act == 3) return x.relu6();
  throw Error(where + ": fused activation " + std::to_string(act) +
              " is not supported (0 none, 1 RELU, 3 RELU6)");
}

// TFLite's SAME padding for one spatial axis: out = ceil(in / stride), the extra pixel of an
// odd total goes after (bottom/right).
std::pair<int64_t, int64_t> same_pad(int64_t in, int64_t k, int64_t stride) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + k - in, 0);
  return {total / 2, total - total / 2};
}

} // namespace

GraphModel::GraphModel(tg::data::LayerGraph graph, std::map<std::string, Tensor> weights,
                       std::string origin)
    : graph_(std::move(graph)), origin_(std::move(origin)) {
  if (graph_.inputs.size() != 1 || graph_.outputs.size() != 1)
    throw Error(origin_ + ": the graph must have one input and one output, it has " +
                std::to_string(graph_.inputs.size()) + " and " +
                std::to_string(graph_.outputs.size()));
  int64_t convs = 0, fcs = 0;
  bound_.resize(graph_.ops.size());
  auto take = [&](const std::string& name, size_t tensor_index, const std::string& where) {
    auto it = weights.find(name);
    if (it == weights.end())
      throw Error(origin_ + ": " + where + " needs the weight '" + name +
                  "', which the weights file does not hold");
    const auto& want = graph_.tensors[tensor_index].shape;
    const tg::Shape& have = it->second.shape();
    if (std::vector<int64_t>(have.begin(), have.end()) != want)
      throw Error(origin_ + ": " + where + ": the weight '" + name + "' has shape " +
                  it->second.str() + " but the graph's tensor '" +
                  graph_.tensors[tensor_index].name + "' is " + shape_str(want));
    Tensor t = it->second.cast(tg::dtypes::float32);
    weights.erase(it);
    return t;
  };
  for (size_t i = 0; i < graph_.ops.size(); ++i) {
    const GraphOp& op = graph_.ops[i];
    const std::string where = "op " + std::to_string(i) + " (" + op.op + ")";
    if (op.op == "CONV_2D" || op.op == "FULLY_CONNECTED") {
      if (op.inputs.size() < 2 || op.inputs.size() > 3 || op.outputs.size() != 1)
        throw Error(origin_ + ": " + where +
                    " must have an input, a weight, an optional bias "
                    "and one output");
      const std::string base = op.op == "CONV_2D"
                                   ? "conv" + std::to_string(convs++)
                                   : (fcs == 0 ? std::string("fc") : "fc" + std::to_string(fcs));
      if (op.op == "FULLY_CONNECTED") ++fcs;
      Bound b{take(base + ".weight", op.inputs[1], where), std::nullopt};
      if (op.inputs.size() == 3) b.bias = take(base + ".bias", op.inputs[2], where);
      bound_[i] = b;
    } else if (op.op != "ADD" && op.op != "AVERAGE_POOL_2D" && op.op != "MAX_POOL_2D" &&
               op.op != "RESHAPE" && op.op != "SOFTMAX") {
      throw Error(origin_ + ": " + where +
                  " is not supported (CONV_2D, ADD, AVERAGE_POOL_2D, MAX_POOL_2D, RESHAPE, "
                  "FULLY_CONNECTED, SOFTMAX are)");
    }
  }
  if (!weights.empty())
    throw Error(origin_ + ": the weights file holds '" + weights.begin()->first +
                "', which no op of the graph reads (is it the graph of another model?)");
}

GraphModel GraphModel::load(const std::filesystem::path& weights,
                            const std::filesystem::path& graph) {
  if (!std::filesystem::is_regular_file(weights))
    throw Error(weights.string() + ": no such model file");
  tg::data::LayerGraph g = tg::data::read_layer_graph(graph);
  tg::SafetensorsFile f = tg::safe_load(weights);
  std::map<std::string, Tensor> w(f.tensors.begin(), f.tensors.end());
  return GraphModel(std::move(g), std::move(w), weights.string());
}

const tg::data::GraphTensor& GraphModel::input() const { return graph_.tensors[graph_.inputs[0]]; }

Tensor GraphModel::operator()(const Tensor& x, Tensor* logits) const {
  const auto& in = input();
  if (x.ndim() != static_cast<int64_t>(in.shape.size()) || x.ndim() != 4 ||
      x.size(1) != in.shape[1] || x.size(2) != in.shape[2] || x.size(3) != in.shape[3])
    throw Error(origin_ + ": the input must be (N, " + std::to_string(in.shape[1]) + ", " +
                std::to_string(in.shape[2]) + ", " + std::to_string(in.shape[3]) +
                ") (NHWC), got " + x.str());
  // Values by tensor index; 4-D activations are held NCHW.
  std::vector<std::optional<Tensor>> v(graph_.tensors.size());
  v[graph_.inputs[0]] = x.cast(tg::dtypes::float32).permute({0, 3, 1, 2});
  auto get = [&](size_t k, const std::string& where) -> const Tensor& {
    if (!v[k])
      throw Error(origin_ + ": " + where + " reads tensor " + std::to_string(k) + " ('" +
                  graph_.tensors[k].name + "') before any op computes it");
    return *v[k];
  };
  auto nhwc = [](const Tensor& t) { return t.ndim() == 4 ? t.permute({0, 2, 3, 1}) : t; };
  for (size_t i = 0; i < graph_.ops.size(); ++i) {
    const GraphOp& op = graph_.ops[i];
    const std::string where = "op " + std::to_string(i) + " (" + op.op + ")";
    if (op.outputs.size() != 1) throw Error(origin_ + ": " + where + " must have one output");
    Tensor out;
    if (op.op == "CONV_2D") {
      const Tensor& a = get(op.inputs[0], where);
      const Tensor w = bound_[i]->weight.permute({0, 3, 1, 2}); // OHWI -> OIHW
      if (a.ndim() != 4 || a.size(1) != w.size(1))
        throw Error(origin_ + ": " + where + ": input " + a.str() + " does not fit filter " +
                    w.str());
      const int64_t sh = op.int_opt("stride_h"), sw = op.int_opt("stride_w");
      if (sh < 1 || sw < 1) throw Error(origin_ + ": " + where + ": strides must be >= 1");
      const std::string pad = op.str_opt("padding");
      Tensor p = a;
      if (pad == "SAME") {
        const auto [t, b] = same_pad(a.size(2), w.size(2), sh);
        const auto [l, r] = same_pad(a.size(3), w.size(3), sw);
        p = a.pad({l, r, t, b});
      } else if (pad != "VALID") {
        throw Error(origin_ + ": " + where + ": padding '" + pad + "' (SAME or VALID)");
      }
      out = activation(p.conv2d(w, bound_[i]->bias, {sh, sw}), op, where);
    } else if (op.op == "ADD") {
      if (op.inputs.size() != 2) throw Error(origin_ + ": " + where + " must have two inputs");
      out = activation(get(op.inputs[0], where) + get(op.inputs[1], where), op, where);
    } else if (op.op == "AVERAGE_POOL_2D" || op.op == "MAX_POOL_2D") {
      if (op.str_opt("padding") != "VALID")
        throw Error(origin_ + ": " + where + ": only VALID padding is supported");
      const Tensor& a = get(op.inputs[0], where);
      const tg::Tensor::IntOrTuple k{op.int_opt("filter_h"), op.int_opt("filter_w")};
      const tg::Tensor::IntOrTuple s{op.int_opt("stride_h"), op.int_opt("stride_w")};
      out = op.op == "MAX_POOL_2D" ? a.max_pool2d(k, s) : a.avg_pool2d(k, s);
      out = activation(out, op, where);
    } else if (op.op == "RESHAPE") {
      // The target shape is the output tensor's, its batch dimension the input's.
      std::vector<int64_t> shape = graph_.tensors[op.outputs[0]].shape;
      const Tensor a = nhwc(get(op.inputs[0], where));
      if (shape.empty()) throw Error(origin_ + ": " + where + ": reshape to a scalar");
      shape[0] = a.size(0);
      out = a.reshape(tg::Shape(shape.begin(), shape.end()));
      if (out.ndim() == 4) out = out.permute({0, 3, 1, 2});
    } else if (op.op == "FULLY_CONNECTED") {
      const Tensor a = nhwc(get(op.inputs[0], where));
      const Tensor flat = a.reshape({a.size(0), -1});
      out = activation(flat.linear(bound_[i]->weight, bound_[i]->bias), op, where);
    } else { // SOFTMAX
      const Tensor& a = get(op.inputs[0], where);
      if (logits) *logits = a;
      out = a.softmax(-1);
    }
    v[op.outputs[0]] = out;
  }
  return nhwc(get(graph_.outputs[0], "the graph's output"));
}

} // namespace tinyrun
