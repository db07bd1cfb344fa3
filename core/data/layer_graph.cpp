// The pure parse of a layer graph's JSON (tg/layer_graph.hpp).
#include "tg/layer_graph.hpp"

#include "file_bytes.hpp"
#include "tg/error.hpp"
#include "tg/json_fields.hpp"

namespace tg::data {

namespace {

namespace jf = json_fields;
namespace json = boost::json;

std::vector<size_t> indices(const json::value& v, size_t n_tensors, const std::string& origin,
                            const std::string& field) {
  std::vector<size_t> out;
  const json::array& a = jf::as_array(v, origin, field);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    const uint64_t k = jf::as_count(a[i], UINT64_MAX, origin, f);
    if (k >= n_tensors)
      throw_parse_error(origin, f, std::to_string(k),
                        "names no tensor (the graph has " + std::to_string(n_tensors) + ")");
    out.push_back(static_cast<size_t>(k));
  }
  return out;
}

GraphTensor parse_tensor(const json::value& v, const std::string& origin,
                         const std::string& where) {
  const json::object& o = jf::as_object(v, origin, where);
  GraphTensor t;
  t.name = jf::as_string(jf::member(o, "name", origin, where + "."), origin, where + ".name");
  const std::string sf = where + " ('" + t.name + "').shape";
  const json::array& shape = jf::as_array(jf::member(o, "shape", origin, where + "."), origin, sf);
  for (size_t d = 0; d < shape.size(); ++d)
    t.shape.push_back(static_cast<int64_t>(
        jf::as_count(shape[d], kLayerGraphMaxDim, origin, sf + "[" + std::to_string(d) + "]")));
  t.type = jf::as_string(jf::member(o, "type", origin, where + "."), origin, where + ".type");
  if (const json::value* c = o.if_contains("const")) {
    if (!c->is_bool())
      throw_parse_error(origin, where + ".const", json::serialize(*c), "must be true or false");
    t.is_const = c->as_bool();
  }
  return t;
}

GraphOp parse_op(const json::value& v, size_t n_tensors, const std::string& origin,
                 const std::string& where) {
  const json::object& o = jf::as_object(v, origin, where);
  GraphOp op;
  op.op = jf::as_string(jf::member(o, "op", origin, where + "."), origin, where + ".op");
  const std::string w = where + " (" + op.op + ")";
  op.inputs = indices(jf::member(o, "inputs", origin, w + "."), n_tensors, origin, w + ".inputs");
  op.outputs =
      indices(jf::member(o, "outputs", origin, w + "."), n_tensors, origin, w + ".outputs");
  if (const json::value* opts = o.if_contains("opts"); opts && !opts->is_null()) {
    for (const auto& [key, val] : jf::as_object(*opts, origin, w + ".opts")) {
      const std::string k(key), f = w + ".opts." + k;
      if (val.is_int64())
        op.opts[k] = val.as_int64();
      else if (val.is_uint64())
        throw_parse_error(origin, f, json::serialize(val), "out of range for an integer option");
      else if (val.is_double())
        op.opts[k] = val.as_double();
      else if (val.is_string())
        op.opts[k] = std::string(val.as_string());
      else if (val.is_bool())
        op.opts[k] = static_cast<int64_t>(val.as_bool());
      else
        throw_parse_error(origin, f, json::serialize(val), "must be a number or a string");
    }
  }
  return op;
}

} // namespace

int64_t GraphOp::int_opt(const std::string& key) const {
  auto it = opts.find(key);
  if (it == opts.end() || !std::holds_alternative<int64_t>(it->second))
    throw Error("layer graph: op " + op + " needs the integer option '" + key + "'");
  return std::get<int64_t>(it->second);
}

std::string GraphOp::str_opt(const std::string& key) const {
  auto it = opts.find(key);
  if (it == opts.end() || !std::holds_alternative<std::string>(it->second))
    throw Error("layer graph: op " + op + " needs the string option '" + key + "'");
  return std::get<std::string>(it->second);
}

LayerGraph parse_layer_graph(std::string_view text, const std::string& origin) {
  const json::value root = jf::parse_document(text, origin, kLayerGraphMaxBytes);
  const json::object& o = jf::as_object(root, origin, "the document");
  LayerGraph g;
  const json::array& tensors =
      jf::as_array(jf::member(o, "tensors", origin, ""), origin, "tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    g.tensors.push_back(parse_tensor(tensors[i], origin, "tensors[" + std::to_string(i) + "]"));
  const json::array& ops = jf::as_array(jf::member(o, "ops", origin, ""), origin, "ops");
  for (size_t i = 0; i < ops.size(); ++i)
    g.ops.push_back(parse_op(ops[i], g.tensors.size(), origin, "ops[" + std::to_string(i) + "]"));
  g.inputs = indices(jf::member(o, "inputs", origin, ""), g.tensors.size(), origin, "inputs");
  g.outputs = indices(jf::member(o, "outputs", origin, ""), g.tensors.size(), origin, "outputs");
  return g;
}

LayerGraph read_layer_graph(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) throw Error(path.string() + ": no such layer graph file");
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kLayerGraphMaxBytes)
    throw_parse_error(path.string(), "size", std::to_string(size) + " bytes",
                      "larger than a layer graph may be (" + std::to_string(kLayerGraphMaxBytes) +
                          " bytes)");
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_layer_graph(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path.string());
}

} // namespace tg::data
