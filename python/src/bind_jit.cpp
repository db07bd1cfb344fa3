// TinyJit over Python functions: the C++ TinyJit's argument handling for Python values. The
// tensor arguments (Tensors, and Tensors inside lists, tuples and dict values, positional or
// keyword) are the inputs; what the function returns (a Tensor, or Tensors inside a
// tuple/list) is realized, and a replay returns the recording call's value, as tinygrad.
#include "bindings.hpp"
#include "tg/jit.hpp"

namespace tgpy {

namespace {

void collect(py::handle x, std::vector<Tensor>& out) {
  if (py::isinstance<Tensor>(x)) {
    out.push_back(x.cast<Tensor>());
  } else if (py::isinstance<py::list>(x) || py::isinstance<py::tuple>(x)) {
    for (py::handle e : x) collect(e, out);
  } else if (py::isinstance<py::dict>(x)) {
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(x)) collect(v, out);
  }
}

class PyTinyJit {
public:
  explicit PyTinyJit(py::object fn) : fn_(std::move(fn)) {}

  py::object call(const py::args& args, const py::kwargs& kwargs) {
    std::vector<Tensor> inputs;
    collect(args, inputs);
    collect(kwargs, inputs);
    py::object fresh = py::none();
    const tg::JitCore::Step step = core_.call(inputs, {}, [&] {
      fresh = fn_(*args, **kwargs);
      std::vector<Tensor> outs;
      collect(fresh, outs);
      return outs;
    });
    if (step == tg::JitCore::Step::Record) recorded_ = fresh;
    return step == tg::JitCore::Step::Replay ? recorded_ : fresh;
  }

  tg::JitCore& core() { return core_; }
  py::object fn() const { return fn_; }

private:
  py::object fn_;
  tg::JitCore core_;
  py::object recorded_ = py::none();
};

} // namespace

void bind_jit(py::module_& m) {
  py::class_<PyTinyJit>(m, "TinyJit")
      .def(py::init<py::object>(), py::arg("fxn"))
      .def("__call__", &PyTinyJit::call)
      .def_property_readonly("fxn", &PyTinyJit::fn)
      .def_property_readonly("cnt", [](PyTinyJit& j) { return j.core().calls(); })
      .def_property_readonly("recorded_launches",
                             [](PyTinyJit& j) { return j.core().recorded_launches(); })
      .def("reset", [](PyTinyJit& j) { j.core().reset(); })
      // As a method decorator: the bound function, so `self` is passed on.
      .def(
          "__get__",
          [](py::object self, py::object obj, py::object) -> py::object {
            if (obj.is_none()) return self;
            return py::module_::import("functools").attr("partial")(self.attr("__call__"), obj);
          },
          py::arg("obj"), py::arg("objtype") = py::none());
}

} // namespace tgpy
