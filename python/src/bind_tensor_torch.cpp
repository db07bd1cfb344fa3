// The PyTorch ops tinygrad's Tensor lacks (tg/tensor.hpp's "PyTorch ops" block), with tinygrad's
// keyword names where tinygrad has the op (softmin(axis=), logcumsumexp(axis=)) and PyTorch's
// elsewhere.
#include "bindings.hpp"

namespace tgpy {

namespace {

using UnaryMethod = Tensor (Tensor::*)() const;

std::optional<int64_t> opt_int(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return h.cast<int64_t>();
}

Tensor::OptTensor opt_operand(const Tensor& self, py::handle h) {
  if (h.is_none()) return {};
  return operand(self, h);
}

} // namespace

void bind_tensor_torch(TensorClass& t) {
  const std::pair<const char*, UnaryMethod> unary[] = {
      {"log1p", &Tensor::log1p},
      {"expm1", &Tensor::expm1},
      {"erfc", &Tensor::erfc},
      {"erfinv", &Tensor::erfinv},
      {"lgamma", &Tensor::lgamma},
      {"log10", &Tensor::log10},
      {"asinh", &Tensor::asinh},
      {"acosh", &Tensor::acosh},
      {"quick_gelu", &Tensor::quick_gelu},
      {"atanh", &Tensor::atanh},
      {"frac", &Tensor::frac},
      {"trace", &Tensor::trace},
      {"argwhere", &Tensor::argwhere},
  };
  for (const auto& [name, f] : unary) t.def(name, f);
  t.def(
      "logit",
      [](const Tensor& self, py::handle eps) {
        return self.logit(eps.is_none() ? std::nullopt : std::optional<double>(eps.cast<double>()));
      },
      py::arg("eps") = py::none());

  const std::pair<const char*, BinaryMethod> binaries[] = {
      {"atan2", &Tensor::atan2}, {"logaddexp", &Tensor::logaddexp}, {"hypot", &Tensor::hypot},
      {"outer", &Tensor::outer}, {"kron", &Tensor::kron},           {"bmm", &Tensor::bmm},
  };
  for (const auto& [name, f] : binaries)
    t.def(name, binary(f), py::arg("x"), py::arg("reverse") = false);
  t.def(
      "fmod",
      [](const Tensor& self, py::handle x) {
        if (is_scalar(x) && !py::isinstance<Tensor>(x)) return self.fmod(to_scalar(x));
        return self.fmod(operand(self, x));
      },
      py::arg("x"));
  t.def(
      "xlogy",
      [](const Tensor& self, py::handle y) {
        if (is_scalar(y) && !py::isinstance<Tensor>(y)) return self.xlogy(to_scalar(y));
        return self.xlogy(operand(self, y));
      },
      py::arg("other"));
  t.def(
      "isclose",
      [](const Tensor& self, py::handle other, double rtol, double atol, bool equal_nan) {
        return self.isclose(operand(self, other), rtol, atol, equal_nan);
      },
      py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
      py::arg("equal_nan") = false);
  t.def(
      "allclose",
      [](const Tensor& self, py::handle other, double rtol, double atol, bool equal_nan) {
        return self.allclose(operand(self, other), rtol, atol, equal_nan);
      },
      py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8,
      py::arg("equal_nan") = false);

  // ---- norms and order statistics -------------------------------------------------------
  t.def(
      "norm",
      [](const Tensor& self, py::handle p, py::handle dim, bool keepdim) {
        const std::vector<int64_t> d = dim.is_none() ? std::vector<int64_t>{} : axes(dim);
        if (py::isinstance<py::str>(p)) return self.norm(p.cast<std::string>(), d, keepdim);
        return self.norm(p.is_none() ? 2.0 : p.cast<double>(), d, keepdim);
      },
      py::arg("p") = "fro", py::arg("dim") = py::none(), py::arg("keepdim") = false);
  t.def(
      "vector_norm",
      [](const Tensor& self, double ord, py::handle dim, bool keepdim) {
        return self.vector_norm(ord, dim.is_none() ? std::vector<int64_t>{} : axes(dim), keepdim);
      },
      py::arg("ord") = 2.0, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  t.def(
      "matrix_norm",
      [](const Tensor& self, py::handle ord, py::handle dim, bool keepdim) {
        const std::vector<int64_t> d = dim.is_none() ? std::vector<int64_t>{-2, -1} : int_list(dim);
        if (py::isinstance<py::str>(ord))
          return self.matrix_norm(ord.cast<std::string>(), d, keepdim);
        return self.matrix_norm(ord.cast<double>(), d, keepdim);
      },
      py::arg("ord") = "fro", py::arg("dim") = py::none(), py::arg("keepdim") = false);
  t.def(
      "median",
      [](const Tensor& self, py::handle dim, bool keepdim) -> py::object {
        if (dim.is_none()) return py::cast(self.median());
        const tg::ValuesIndices v = self.median(dim.cast<int64_t>(), keepdim);
        return py::make_tuple(v.values, v.indices);
      },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  t.def(
      "quantile",
      [](const Tensor& self, py::handle q, py::handle dim, bool keepdim,
         const std::string& interpolation) {
        if (is_scalar(q))
          return self.quantile(q.cast<double>(), opt_int(dim), keepdim, interpolation);
        return self.quantile(q.cast<std::vector<double>>(), opt_int(dim), keepdim, interpolation);
      },
      py::arg("q"), py::arg("dim") = py::none(), py::arg("keepdim") = false,
      py::arg("interpolation") = "linear");
  t.def(
      "nansum",
      [](const Tensor& self, py::handle axis, bool keepdim) {
        return self.nansum(axis.is_none() ? std::vector<int64_t>{} : axes(axis), keepdim);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def(
      "nanmean",
      [](const Tensor& self, py::handle axis, bool keepdim) {
        return self.nanmean(axis.is_none() ? std::vector<int64_t>{} : axes(axis), keepdim);
      },
      py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def(
      "count_nonzero",
      [](const Tensor& self, py::handle dim) {
        return self.count_nonzero(dim.is_none() ? std::vector<int64_t>{} : axes(dim));
      },
      py::arg("dim") = py::none());
  t.def("logcumsumexp", &Tensor::logcumsumexp, py::arg("axis") = 0);
  t.def(
      "diff",
      [](const Tensor& self, int64_t n, int64_t dim, py::handle prepend, py::handle append) {
        return self.diff(n, dim, opt_operand(self, prepend), opt_operand(self, append));
      },
      py::arg("n") = 1, py::arg("dim") = -1, py::arg("prepend") = py::none(),
      py::arg("append") = py::none());

  // ---- linear algebra ---------------------------------------------------------------------
  t.def("cross", &Tensor::cross, py::arg("other"), py::arg("dim") = -1);
  t.def(
      "tensordot",
      [](const Tensor& self, const Tensor& other, py::handle dims) {
        if (py::isinstance<py::int_>(dims)) return self.tensordot(other, dims.cast<int64_t>());
        const auto pair = dims.cast<std::pair<std::vector<int64_t>, std::vector<int64_t>>>();
        return self.tensordot(other, pair.first, pair.second);
      },
      py::arg("other"), py::arg("dims") = 2);
  t.def("cdist", &Tensor::cdist, py::arg("x2"), py::arg("p") = 2.0);

  // ---- shape and search -------------------------------------------------------------------
  t.def(
      "rot90",
      [](const Tensor& self, int64_t k, py::handle dims) { return self.rot90(k, int_list(dims)); },
      py::arg("k") = 1, py::arg("dims") = py::make_tuple(0, 1));
  t.def("diagonal", &Tensor::diagonal, py::arg("offset") = 0, py::arg("dim1") = 0,
        py::arg("dim2") = 1);
  t.def("narrow", &Tensor::narrow, py::arg("dim"), py::arg("start"), py::arg("length"));
  t.def("unbind", &Tensor::unbind, py::arg("dim") = 0);
  t.def("unfold", &Tensor::unfold, py::arg("dim"), py::arg("size"), py::arg("step"));
  t.def(
      "searchsorted",
      [](const Tensor& self, py::handle values, bool out_int32, bool right, const std::string& side,
         py::handle sorter) {
        return self.searchsorted(operand(self, values), out_int32, right, side,
                                 opt_operand(self, sorter));
      },
      py::arg("values"), py::arg("out_int32") = false, py::arg("right") = false,
      py::arg("side") = "", py::arg("sorter") = py::none());
  t.def("bucketize", &Tensor::bucketize, py::arg("boundaries"), py::arg("out_int32") = false,
        py::arg("right") = false);
  t.def(
      "index_add",
      [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
         py::handle alpha) { return self.index_add(dim, index, source, to_scalar(alpha)); },
      py::arg("dim"), py::arg("index"), py::arg("source"), py::arg("alpha") = 1);

  // ---- nn functional ----------------------------------------------------------------------
  t.def("cosine_similarity", &Tensor::cosine_similarity, py::arg("x2"), py::arg("dim") = 1,
        py::arg("eps") = 1e-8);
  t.def("normalize", &Tensor::normalize, py::arg("p") = 2.0, py::arg("dim") = 1,
        py::arg("eps") = 1e-12);
  t.def("pixel_shuffle", &Tensor::pixel_shuffle, py::arg("upscale_factor"));
  t.def("pixel_unshuffle", &Tensor::pixel_unshuffle, py::arg("downscale_factor"));
  t.def(
      "softmin",
      [](const Tensor& self, int64_t axis, py::handle dtype) {
        return (dtype.is_none() ? self : self.cast(to_dtype(dtype))).softmin(axis);
      },
      py::arg("axis") = -1, py::arg("dtype") = py::none());
  t.def("glu", &Tensor::glu, py::arg("dim") = -1);
  t.def("prelu", &Tensor::prelu, py::arg("weight"));
  t.def("kl_div", &Tensor::kl_div, py::arg("target"), py::arg("reduction") = "mean",
        py::arg("log_target") = false);
  t.def("huber_loss", &Tensor::huber_loss, py::arg("target"), py::arg("reduction") = "mean",
        py::arg("delta") = 1.0);
}

} // namespace tgpy
