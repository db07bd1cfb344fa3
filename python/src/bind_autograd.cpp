// Autograd: requires_grad, .grad, backward(), gradient(*targets), detach, and Tensor.training.
#include "bindings.hpp"

namespace tgpy {

void bind_autograd(TensorClass& t) {
  t.def_property("requires_grad", &Tensor::requires_grad, [](Tensor& self, py::handle v) {
    self.requires_grad_(!v.is_none() && v.cast<bool>());
  });
  t.def(
      "requires_grad_",
      [](py::object obj, bool v) {
        obj.cast<Tensor&>().requires_grad_(v);
        return obj;
      },
      py::arg("requires_grad") = true);
  t.def_property(
      "grad",
      [](const Tensor& self) -> py::object {
        Tensor g = self.grad();
        return g.defined() ? py::cast(g) : py::none();
      },
      [](Tensor& self, py::handle g) { self.set_grad(g.is_none() ? Tensor() : g.cast<Tensor>()); });
  t.def(
      "backward",
      [](py::object obj, py::handle gradient) {
        const auto& self = obj.cast<const Tensor&>();
        self.backward(gradient.is_none() ? Tensor() : operand(self, gradient));
        return obj;
      },
      py::arg("gradient") = py::none());
  t.def(
      "gradient",
      [](const Tensor& self, const py::args& targets, py::handle gradient) {
        std::vector<Tensor> ts;
        for (py::handle x : targets) ts.push_back(x.cast<Tensor>());
        return self.gradient(ts, gradient.is_none() ? Tensor() : operand(self, gradient));
      },
      py::kw_only(), py::arg("gradient") = py::none());
  t.def("detach", &Tensor::detach);
  t.def("contiguous_backward", &Tensor::contiguous_backward);
  t.def_property_static(
      "training", [](py::handle) { return Tensor::training; },
      [](py::handle, bool v) { Tensor::training = v; });
}

} // namespace tgpy
