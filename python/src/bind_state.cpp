// tinygrad's nn.state file formats: safe_load / safe_save (safetensors) and gguf_load.
#include <pybind11/stl/filesystem.h>

#include "bindings.hpp"
#include "tg/gguf.hpp"
#include "tg/safetensors.hpp"

namespace tgpy {

namespace {

py::object gguf_value(const tg::GgufValue& v) {
  using T = tg::GgufValueType;
  switch (v.type) {
  case T::STRING:
    return py::str(v.str);
  case T::BOOL:
    return py::bool_(v.u != 0);
  case T::FLOAT32:
  case T::FLOAT64:
    return py::float_(v.f);
  case T::INT8:
  case T::INT16:
  case T::INT32:
  case T::INT64:
    return py::int_(v.i);
  case T::ARRAY: {
    py::list out;
    if (!v.strings.empty())
      for (const auto& s : v.strings) out.append(py::str(s));
    for (uint64_t u : v.uints)
      out.append(v.elem == T::BOOL ? py::object(py::bool_(u != 0)) : py::object(py::int_(u)));
    for (int64_t i : v.ints) out.append(py::int_(i));
    for (double f : v.floats) out.append(py::float_(f));
    for (const auto& a : v.arrays) out.append(gguf_value(a));
    return out;
  }
  default:
    return py::int_(v.u);
  }
}

} // namespace

void bind_state(py::module_& m) {
  py::module_ state = m.def_submodule("state", "tinygrad's nn.state file formats");
  state.def(
      "safe_load",
      [](const std::filesystem::path& path, const std::string& device) {
        const tg::SafetensorsFile f = tg::safe_load(path, device);
        py::dict d;
        for (const auto& [name, t] : f.tensors) d[py::str(name)] = t;
        return d;
      },
      py::arg("fn"), py::arg("device") = "");
  state.def(
      "safe_load_metadata",
      [](const std::filesystem::path& path) { return tg::safe_load(path).metadata; },
      py::arg("fn"));
  state.def(
      "safe_save",
      [](const std::map<std::string, Tensor>& tensors, const std::filesystem::path& path,
         std::optional<std::map<std::string, std::string>> metadata) {
        tg::safe_save(tensors, path, metadata.value_or(std::map<std::string, std::string>{}));
      },
      py::arg("tensors"), py::arg("fn"), py::arg("metadata") = py::none());
  // (metadata, tensors): the key-value metadata and every tensor as float32 (dequantized).
  state.def(
      "gguf_load",
      [](const std::filesystem::path& path, const std::string& device) {
        const tg::GgufFile f = tg::gguf_load(path, device);
        py::dict kv, tensors;
        for (const auto& [k, v] : f.metadata.entries()) kv[py::str(k)] = gguf_value(v);
        for (const auto& t : f.tensors) tensors[py::str(t.info.name)] = t.dequantized();
        return py::make_tuple(kv, tensors);
      },
      py::arg("fn"), py::arg("device") = "");
}

} // namespace tgpy
