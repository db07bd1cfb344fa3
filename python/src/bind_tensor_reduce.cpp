// Reductions (axis=None|int|tuple, keepdim), statistics, scans and sorting with tinygrad's
// keyword names. Ops that return values and indices return a tuple (values, indices).
#include "bindings.hpp"

namespace tgpy {

namespace {

using ReduceMethod = Tensor (Tensor::*)(std::vector<int64_t>, bool) const;

// tinygrad's dtype= of sum/prod/softmax: the input is cast to it first.
Tensor cast_to(const Tensor& t, py::handle dtype) {
  return dtype.is_none() ? t : t.cast(to_dtype(dtype));
}

py::tuple pair(const tg::ValuesIndices& v) { return py::make_tuple(v.values, v.indices); }
py::tuple pair(const std::pair<Tensor, Tensor>& v) { return py::make_tuple(v.first, v.second); }

} // namespace

void bind_tensor_reduce(TensorClass& t) {
  const std::pair<const char*, ReduceMethod> reductions[] = {
      {"max", &Tensor::max}, {"min", &Tensor::min}, {"mean", &Tensor::mean},
      {"any", &Tensor::any}, {"all", &Tensor::all},
  };
  for (const auto& [name, f] : reductions) {
    const ReduceMethod m = f;
    t.def(
        name,
        [m](const Tensor& self, py::handle axis, bool keepdim) {
          return (self.*m)(axes(axis), keepdim);
        },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  }
  t.def(
      "sum",
      [](const Tensor& self, py::handle axis, bool keepdim, py::handle dtype) {
        return cast_to(self, dtype).sum(axes(axis), keepdim);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
  t.def(
      "prod",
      [](const Tensor& self, py::handle axis, bool keepdim, py::handle dtype) {
        return cast_to(self, dtype).prod(axes(axis), keepdim);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
  t.def(
      "var",
      [](const Tensor& self, py::handle axis, bool keepdim, double correction) {
        return self.var(axes(axis), keepdim, correction);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1);
  t.def(
      "std",
      [](const Tensor& self, py::handle axis, bool keepdim, double correction) {
        return self.std(axes(axis), keepdim, correction);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1);
  t.def(
      "var_mean",
      [](const Tensor& self, py::handle axis, bool keepdim, double correction) {
        return pair(self.var_mean(axes(axis), keepdim, correction));
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1);
  t.def(
      "std_mean",
      [](const Tensor& self, py::handle axis, bool keepdim, double correction) {
        return pair(self.std_mean(axes(axis), keepdim, correction));
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1);
  t.def("argmax", &Tensor::argmax, py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("argmin", &Tensor::argmin, py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def(
      "softmax",
      [](const Tensor& self, int64_t axis, py::handle dtype) {
        return cast_to(self, dtype).softmax(axis);
      },
      py::arg("axis") = -1, py::arg("dtype") = py::none());
  t.def(
      "log_softmax",
      [](const Tensor& self, int64_t axis, py::handle dtype) {
        return cast_to(self, dtype).log_softmax(axis);
      },
      py::arg("axis") = -1, py::arg("dtype") = py::none());
  t.def(
      "logsumexp",
      [](const Tensor& self, py::handle axis, bool keepdim) {
        return self.logsumexp(axes(axis), keepdim);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false);

  t.def("cumsum", &Tensor::cumsum, py::arg("axis") = 0);
  t.def("cumprod", &Tensor::cumprod, py::arg("axis"));
  t.def(
      "cummax", [](const Tensor& self, int64_t axis) { return pair(self.cummax(axis)); },
      py::arg("axis") = 0);
  t.def(
      "cummin", [](const Tensor& self, int64_t axis) { return pair(self.cummin(axis)); },
      py::arg("axis") = 0);
  t.def(
      "sort",
      [](const Tensor& self, int64_t dim, bool descending) {
        return pair(self.sort(dim, descending));
      },
      py::arg("dim") = -1, py::arg("descending") = false);
  t.def("argsort", &Tensor::argsort, py::arg("dim") = -1, py::arg("descending") = false);
  t.def(
      "topk",
      [](const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
        return pair(self.topk(k, dim, largest, sorted));
      },
      py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted_") = true);
  // torch.max(x, dim) / torch.min(x, dim): (values, indices).
  t.def(
      "max_dim",
      [](const Tensor& self, int64_t dim, bool keepdim) {
        return pair(self.max_dim(dim, keepdim));
      },
      py::arg("dim"), py::arg("keepdim") = false);
  t.def(
      "min_dim",
      [](const Tensor& self, int64_t dim, bool keepdim) {
        return pair(self.min_dim(dim, keepdim));
      },
      py::arg("dim"), py::arg("keepdim") = false);
  t.def("multinomial", &Tensor::multinomial, py::arg("num_samples") = 1,
        py::arg("replacement") = false);
}

} // namespace tgpy
