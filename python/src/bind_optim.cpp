// tinygrad's nn.optim: SGD, Adam, AdamW, LAMB (and Muon) with tinygrad's argument names.
#include "bindings.hpp"
#include "tg/optim.hpp"

namespace tgpy {

void bind_optim(py::module_& m) {
  py::module_ optim = m.def_submodule("optim", "tinygrad's nn.optim");
  using tg::optim::Optimizer;
  py::class_<Optimizer>(optim, "Optimizer")
      .def("zero_grad", &Optimizer::zero_grad)
      .def("step", &Optimizer::step)
      .def("schedule_step", &Optimizer::schedule_step)
      .def_property("lr", &Optimizer::lr, &Optimizer::set_lr)
      .def_property_readonly("params", &Optimizer::params);
  py::class_<tg::optim::SGD, Optimizer>(optim, "SGD")
      .def(py::init([](std::vector<Tensor> params, double lr, double momentum, double weight_decay,
                       bool nesterov, double dampening) {
             return std::make_unique<tg::optim::SGD>(std::move(params), lr, momentum, weight_decay,
                                                     nesterov, dampening);
           }),
           py::arg("params"), py::arg("lr") = 0.001, py::arg("momentum") = 0.0,
           py::arg("weight_decay") = 0.0, py::arg("nesterov") = false, py::arg("dampening") = 0.0);
  py::class_<tg::optim::Adam, Optimizer>(optim, "Adam")
      .def(py::init([](std::vector<Tensor> params, double lr, double b1, double b2, double eps,
                       double weight_decay) {
             return std::make_unique<tg::optim::Adam>(std::move(params), lr, b1, b2, eps,
                                                      weight_decay);
           }),
           py::arg("params"), py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999,
           py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.0);
  py::class_<tg::optim::AdamW, tg::optim::Adam>(optim, "AdamW")
      .def(py::init([](std::vector<Tensor> params, double lr, double b1, double b2, double eps,
                       double weight_decay) {
             return std::make_unique<tg::optim::AdamW>(std::move(params), lr, b1, b2, eps,
                                                       weight_decay);
           }),
           py::arg("params"), py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999,
           py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.01);
  py::class_<tg::optim::LAMB, Optimizer>(optim, "LAMB")
      .def(py::init([](std::vector<Tensor> params, double lr, double b1, double b2, double eps,
                       double weight_decay, bool adam) {
             return std::make_unique<tg::optim::LAMB>(std::move(params), lr, b1, b2, eps,
                                                      weight_decay, adam);
           }),
           py::arg("params"), py::arg("lr") = 0.001, py::arg("b1") = 0.9, py::arg("b2") = 0.999,
           py::arg("eps") = 1e-6, py::arg("weight_decay") = 0.0, py::arg("adam") = false);
  py::class_<tg::optim::Muon, Optimizer>(optim, "Muon")
      .def(py::init([](std::vector<Tensor> params, double lr, double momentum, double weight_decay,
                       bool nesterov, int64_t ns_steps) {
             return std::make_unique<tg::optim::Muon>(std::move(params), lr, momentum, weight_decay,
                                                      nesterov, ns_steps);
           }),
           py::arg("params"), py::arg("lr") = 0.02, py::arg("momentum") = 0.95,
           py::arg("weight_decay") = 0.0, py::arg("nesterov") = true, py::arg("ns_steps") = 5);
}

} // namespace tgpy
