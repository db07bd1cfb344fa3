// Python indexing (ints, slices, None, Ellipsis, lists and tensors; setitem through the
// core's setitem) and the gather/scatter family.
#include "bindings.hpp"

namespace tgpy {

namespace {

std::optional<int64_t> opt_int(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<int64_t>();
}

tg::Index to_index(const Tensor& self, py::handle h) {
  if (py::isinstance<py::bool_>(h))
    throw py::type_error("a bool is not a tensor index: use a bool tensor as a mask");
  if (py::isinstance<py::int_>(h)) return tg::Index(h.cast<int64_t>());
  if (h.is_none()) return tg::Index(tg::None);
  if (h.is(py::ellipsis())) return tg::Index(tg::Ellipsis);
  if (py::isinstance<py::slice>(h)) {
    tg::Slice s;
    s.start = opt_int(h.attr("start"));
    s.stop = opt_int(h.attr("stop"));
    const auto step = opt_int(h.attr("step"));
    if (step) s.step = *step;
    return tg::Index(s);
  }
  if (py::isinstance<Tensor>(h)) return tg::Index(h.cast<Tensor>());
  if (py::isinstance<py::list>(h)) {
    bool ints = true;
    for (py::handle x : h)
      ints = ints && py::isinstance<py::int_>(x) && !py::isinstance<py::bool_>(x);
    if (ints && py::len(h) > 0) return tg::Index(h.cast<std::vector<int64_t>>());
  }
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(h, np.attr("integer"))) return tg::Index(h.cast<int64_t>());
  if (py::isinstance<py::float_>(h) || py::isinstance(h, np.attr("floating")))
    throw py::type_error("a float is not a tensor index: use an int, a slice or an int tensor");
  return tg::Index(tensor_from_data(h, std::nullopt, self.device()));
}

std::vector<tg::Index> to_indices(const Tensor& self, py::handle key) {
  std::vector<tg::Index> v;
  if (py::isinstance<py::tuple>(key)) {
    for (py::handle k : key) v.push_back(to_index(self, k));
  } else {
    v.push_back(to_index(self, key));
  }
  return v;
}

} // namespace

void bind_tensor_indexing(TensorClass& t) {
  t.def("__getitem__",
        [](const Tensor& self, py::handle key) { return self.getitem(to_indices(self, key)); });
  t.def("__setitem__", [](Tensor& self, py::handle key, py::handle value) {
    if (is_scalar(value) && !py::isinstance<Tensor>(value))
      self.setitem(to_indices(self, key), to_scalar(value));
    else
      self.setitem(to_indices(self, key), operand(self, value));
  });
  t.def("__iter__", [](const Tensor& self) {
    if (self.ndim() == 0) throw py::type_error("iteration over a 0-d tensor");
    py::list rows;
    for (int64_t i = 0; i < self.size(0); ++i) rows.append(self.index(i));
    return py::iter(rows);
  });
  t.def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"));
  t.def(
      "scatter",
      [](const Tensor& self, int64_t dim, const Tensor& index, py::handle src, py::handle reduce) {
        const std::string r = reduce.is_none() ? "" : py::str(reduce).cast<std::string>();
        if (is_scalar(src) && !py::isinstance<Tensor>(src))
          return self.scatter(dim, index, to_scalar(src), r);
        // tinygrad's rule: reduce goes with a scalar src only (scatter_reduce takes tensors).
        if (!r.empty())
          throw tg::TypeError("scatter: reduce=\"" + r +
                              "\" takes a scalar src; for a Tensor src use scatter_reduce");
        return self.scatter(dim, index, operand(self, src));
      },
      py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce") = py::none());
  t.def("scatter_reduce", &Tensor::scatter_reduce, py::arg("dim"), py::arg("index"), py::arg("src"),
        py::arg("reduce"), py::arg("include_self") = true);
  t.def("index_select", &Tensor::index_select, py::arg("dim"), py::arg("index"));
  t.def("take_along_dim", &Tensor::take_along_dim, py::arg("indices"), py::arg("dim") = py::none());
  t.def(
      "masked_fill",
      [](const Tensor& self, const Tensor& mask, py::handle value) {
        if (is_scalar(value) && !py::isinstance<Tensor>(value))
          return self.masked_fill(mask, to_scalar(value));
        return self.masked_fill(mask, operand(self, value));
      },
      py::arg("mask"), py::arg("value"));
  // size= gives tinygrad's fixed-length forms (padded with fill_value; no host read).
  t.def(
      "masked_select",
      [](const Tensor& self, const Tensor& mask, std::optional<int64_t> size, py::handle fill) {
        if (!size) return self.masked_select(mask);
        return self.masked_select(mask, *size, to_scalar(fill));
      },
      py::arg("mask"), py::arg("size") = py::none(), py::arg("fill_value") = 0);
  t.def(
      "nonzero",
      [](const Tensor& self, std::optional<int64_t> size, py::handle fill) {
        if (!size) return self.nonzero();
        return self.nonzero_static(*size, tg::as_int(to_scalar(fill).value));
      },
      py::arg("size") = py::none(), py::arg("fill_value") = 0);
  // tinygrad's one_hot: num_classes is required and non-negative (no inferring from the
  // values); in tinygrad's default int (int32), the core returns PyTorch's int64.
  t.def(
      "one_hot",
      [](const Tensor& self, int64_t num_classes) {
        if (num_classes < 0)
          throw py::value_error("one_hot: num_classes must be non-negative, got " +
                                std::to_string(num_classes));
        return self.one_hot(num_classes).cast(tg::dtypes::int32);
      },
      py::arg("num_classes"));
  t.def(
      "assign",
      [](py::object obj, py::handle x) {
        auto& self = obj.cast<Tensor&>();
        if (is_scalar(x) && !py::isinstance<Tensor>(x))
          self.assign(to_scalar(x));
        else
          self.assign(operand(self, x));
        return obj;
      },
      py::arg("x"));
}

} // namespace tgpy
