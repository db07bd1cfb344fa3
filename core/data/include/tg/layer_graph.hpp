#pragma once
// A model's layer graph as JSON (`*.graph.json`, the form a TFLite flatbuffer converts to): a
// list of tensors (name, shape, element type, whether constant), a list of ops in execution
// order, each naming its input and output tensors by index, with options, and the graph's
// input and output tensors. The parse is pure (no tensor, no device, no file system: the fuzz
// target calls it) and checks every index and dimension; what the ops mean is the
// interpreter's business (apps/tinyrun/graph_model.cpp).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tg::data {

struct GraphTensor {
  std::string name;
  std::vector<int64_t> shape; // each dimension in [0, 2^31)
  std::string type;           // "F32", "I32", ... as written
  bool is_const = false;
};

using GraphOption = std::variant<int64_t, double, std::string>;

struct GraphOp {
  std::string op;              // "CONV_2D", "ADD", ...
  std::vector<size_t> inputs;  // indices into LayerGraph::tensors
  std::vector<size_t> outputs; // indices into LayerGraph::tensors
  std::map<std::string, GraphOption> opts;
  // The option `key` as an integer, or tg::Error naming the op when it is absent or not one.
  int64_t int_opt(const std::string& key) const;
  // The option `key` as a string, or tg::Error naming the op.
  std::string str_opt(const std::string& key) const;
};

struct LayerGraph {
  std::vector<GraphTensor> tensors;
  std::vector<GraphOp> ops;
  std::vector<size_t> inputs, outputs;
};

// Limits no real layer graph comes near; beyond them a file is refused before anything is
// sized by it.
inline constexpr uint64_t kLayerGraphMaxBytes = 64ull << 20;
inline constexpr uint64_t kLayerGraphMaxDim = (1ull << 31) - 1;

// Raises tg::Error "ORIGIN: FIELD = VALUE: WHY" for invalid JSON, missing or mistyped fields,
// a dimension outside [0, 2^31), an index that names no tensor, an option that is not a number
// or a string, and a file over kLayerGraphMaxBytes.
LayerGraph parse_layer_graph(std::string_view text, const std::string& origin);

// Reads and parses a file; errors name it.
LayerGraph read_layer_graph(const std::filesystem::path& path);

} // namespace tg::data
