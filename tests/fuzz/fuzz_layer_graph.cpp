// libFuzzer target: the layer-graph parse (tg/layer_graph.hpp parse_layer_graph) on arbitrary
// text. A tg::Error is the expected answer; anything else is a finding, as is an accepted graph
// with an index that names no tensor or a dimension outside [0, 2^31).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tg/error.hpp"
#include "tg/layer_graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tg::data::LayerGraph g;
  try {
    g = tg::data::parse_layer_graph(std::string_view(reinterpret_cast<const char*>(data), size),
                                    "fuzz.graph.json");
  } catch (const tg::Error&) {
    return 0;
  }
  const size_t n = g.tensors.size();
  auto check = [n](const std::vector<size_t>& idx) {
    for (size_t k : idx)
      if (k >= n) std::abort();
  };
  check(g.inputs);
  check(g.outputs);
  for (const auto& op : g.ops) {
    check(op.inputs);
    check(op.outputs);
  }
  for (const auto& t : g.tensors)
    for (int64_t d : t.shape)
      if (d < 0 || static_cast<uint64_t>(d) > tg::data::kLayerGraphMaxDim) std::abort();
  return 0;
}
