#pragma once
// A model given as a layer graph (tg/layer_graph.hpp: the JSON form of a TFLite graph) and its
// weights in safetensors: the MLPerf Tiny ResNet-8 of `tinyrun cifar eval`. Activations are
// NHWC as in TFLite and conv filters OHWI; the interpreter runs them as NCHW/OIHW convolutions
// and converts back wherever the layout is visible (a RESHAPE, the output).
//
// Ops: CONV_2D (SAME or VALID padding, strides, fused activation NONE/RELU/RELU6), ADD (fused
// activation), AVERAGE_POOL_2D and MAX_POOL_2D (VALID), RESHAPE, FULLY_CONNECTED, SOFTMAX.
// Another op (DEPTHWISE_CONV_2D, ...), an unsupported option or a weight whose shape differs
// from the graph's raises tg::Error naming it.
//
// Weights: the k-th CONV_2D of the graph reads `conv<k>.weight` and `conv<k>.bias`, the k-th
// FULLY_CONNECTED `fc.weight`/`fc.bias` (then `fc1.*`, ...), the names the converter gave them.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tg/layer_graph.hpp"
#include "tg/tensor.hpp"

namespace tinyrun {

class GraphModel {
public:
  GraphModel(tg::data::LayerGraph graph, std::map<std::string, tg::Tensor> weights,
             std::string origin);
  static GraphModel load(const std::filesystem::path& weights, const std::filesystem::path& graph);
  // x: the graph's one input with any batch size, (N, H, W, C) float. Returns the graph's one
  // output, and through `logits` (when given) the input of a final SOFTMAX.
  tg::Tensor operator()(const tg::Tensor& x, tg::Tensor* logits = nullptr) const;
  const tg::data::GraphTensor& input() const;

private:
  struct Bound { // an op's weights
    tg::Tensor weight;
    std::optional<tg::Tensor> bias;
  };
  tg::data::LayerGraph graph_;
  std::vector<std::optional<Bound>> bound_; // per op
  std::string origin_;
};

} // namespace tinyrun
