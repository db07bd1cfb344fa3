// DType and the dtypes table, the device registry's view, and tg::Error as a Python exception.
#include <functional>

#include "bindings.hpp"
#include "tg/buffer.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"

namespace tgpy {

namespace {

py::object const_value(const tg::ConstValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) return py::bool_(*b);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return py::int_(*i);
  return py::float_(std::get<double>(v));
}

} // namespace

void bind_dtype_device(py::module_& m) {
  // tg::Error is raised for bad values, out-of-range indices and dimensions, and failures
  // alike, so its Python type is a RuntimeError, a ValueError and an IndexError (what tinygrad
  // raises for each); it carries the core's text.
  static PyObject* error_type = [] {
    py::tuple bases = py::make_tuple(py::handle(PyExc_RuntimeError), py::handle(PyExc_ValueError),
                                     py::handle(PyExc_IndexError));
    return PyErr_NewException("tinygrad_cpp.Error", bases.ptr(), nullptr);
  }();
  m.attr("Error") = py::handle(error_type);
  // The kinds of tg::Error Python code tells apart by type: each a tinygrad_cpp.Error that is
  // also the built-in exception PyTorch and tinygrad raise for it.
  const auto kind = [](const char* name, PyObject* builtin) {
    py::tuple bases = py::make_tuple(py::handle(error_type), py::handle(builtin));
    return PyErr_NewException(name, bases.ptr(), nullptr);
  };
  static PyObject* type_error = kind("tinygrad_cpp.TypeError", PyExc_TypeError);
  static PyObject* not_implemented =
      kind("tinygrad_cpp.NotImplementedError", PyExc_NotImplementedError);
  static PyObject* overflow = kind("tinygrad_cpp.OverflowError", PyExc_OverflowError);
  static PyObject* unknown_name = kind("tinygrad_cpp.AttributeError", PyExc_AttributeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tg::TypeError& e) {
      PyErr_SetString(type_error, e.what());
    } catch (const tg::NotImplementedError& e) {
      PyErr_SetString(not_implemented, e.what());
    } catch (const tg::OverflowError& e) {
      PyErr_SetString(overflow, e.what());
    } catch (const UnknownName& e) {
      PyErr_SetString(unknown_name, e.what());
    } catch (const tg::Error& e) {
      PyErr_SetString(error_type, e.what());
    } catch (const py::cast_error& e) {
      // A value of the wrong type inside an argument (a str among a shape's ints).
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });

  py::class_<tg::DType>(m, "DType")
      .def_property_readonly("name", &tg::DType::name)
      .def_property_readonly("itemsize", &tg::DType::itemsize)
      .def_readonly("count", &tg::DType::count)
      .def_property_readonly("scalar", &tg::DType::scalar)
      .def("vec", &tg::DType::vec, py::arg("sz"))
      .def("is_float", &tg::DType::is_float)
      .def("is_int", &tg::DType::is_int)
      .def("is_unsigned", &tg::DType::is_unsigned)
      .def_property_readonly("min",
                             [](const tg::DType& d) { return const_value(tg::dtype_min(d)); })
      .def_property_readonly("max",
                             [](const tg::DType& d) { return const_value(tg::dtype_max(d)); })
      .def("__eq__",
           [](const tg::DType& a, py::handle b) {
             return py::isinstance<tg::DType>(b) && a == b.cast<tg::DType>();
           })
      .def("__hash__", [](const tg::DType& d) { return std::hash<tg::DType>()(d); })
      .def("__repr__", [](const tg::DType& d) { return "dtypes." + d.name(); })
      .def("__str__", [](const tg::DType& d) { return "dtypes." + d.name(); });
  py::dict table;
  for (tg::DType d : tg::dtypes::all()) table[py::str(d.name())] = d;
  m.attr("dtype_table") = table;
  m.def("to_dtype", &to_dtype, py::arg("x"), "A DType from a DType, a name or a numpy dtype");
  m.def("least_upper_dtype", [](const py::args& ds) {
    std::vector<tg::DType> v;
    for (py::handle d : ds) v.push_back(to_dtype(d));
    return tg::least_upper_dtype(std::span<const tg::DType>(v));
  });
  m.def("least_upper_float", &tg::least_upper_float);
  m.def("numpy_dtype", [](const tg::DType& d) { return numpy_dtype(d); });

  m.def("default_device", &tg::default_device_spec, "DEV when set, else the registry's default");
  m.def("canonical_device", &tg::canonical_device, py::arg("device"));
}

} // namespace tgpy
