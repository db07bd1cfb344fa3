// The extension module _tinygrad_cpp: tinygrad's Python API over tg::Tensor and friends. The
// pure-Python package tinygrad_cpp re-exports it under tinygrad's module layout.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_tinygrad_cpp, m) {
  m.doc() = "tinygrad-cpp: tinygrad's Tensor API over the C++ core";
  m.attr("__version__") = TG_VERSION;
  tgpy::bind_dtype_device(m);
  // Tensor is registered before any binding mentions it in a signature.
  tgpy::TensorClass t(m, "Tensor", py::dynamic_attr());
  tgpy::bind_tensor_create(t);
  tgpy::bind_tensor_elementwise(t);
  tgpy::bind_tensor_reduce(t);
  tgpy::bind_tensor_movement(t);
  tgpy::bind_tensor_indexing(t);
  tgpy::bind_tensor_nn(t);
  tgpy::bind_tensor_torch(t);
  tgpy::bind_autograd(t);
  tgpy::bind_jit(m);
  tgpy::bind_nn(m);
  tgpy::bind_optim(m);
  tgpy::bind_state(m);
  m.def(
      "devices", [] { return tg::DeviceRegistry::global().available_devices(); },
      "The devices the plugins found can serve");
}
