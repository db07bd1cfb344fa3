#pragma once
// Conversions between Python values and the C++ API's arguments, shared by the binding files.
// This is the only logic the package owns: turning tinygrad's Python conventions (`*shape`,
// axis=None|int|tuple, scalars next to tensors, nested lists and numpy arrays as data) into
// the arguments of tg::Tensor's methods.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/tensor.hpp"

namespace tgpy {

namespace py = pybind11;
using tg::Tensor;

// A name that names nothing (a dtype "float13"): raised as a tinygrad_cpp.Error that is also an
// AttributeError, as tinygrad's getattr(dtypes, name) raises.
class UnknownName : public tg::Error {
public:
  using tg::Error::Error;
};

// A dtype argument: a DType, its name ("float32", "half"), or anything numpy.dtype() takes.
tg::DType to_dtype(py::handle h);
std::optional<tg::DType> to_opt_dtype(py::handle h); // None: nullopt
// A device argument: None is the default device, else the spec's text ("CPU", "cpu:c").
std::string to_device(py::handle h);
// numpy's dtype for `d`; tg::Error for types numpy lacks (bfloat16, fp8).
py::dtype numpy_dtype(tg::DType d);
tg::DType from_numpy_dtype(const py::dtype& d);

// tinygrad's `*shape`: f(2, 3), f((2, 3)) and f([2, 3]) all mean (2, 3).
tg::Shape shape_from_args(const py::args& args);
// An int or a sequence of ints.
std::vector<int64_t> int_list(py::handle h);
// A reduction's axis: None (every axis: the empty list), an int or a sequence of ints.
std::vector<int64_t> axes(py::handle h);

bool is_scalar(py::handle h); // bool, int or float (Python's or numpy's)
tg::Scalar to_scalar(py::handle h);

// A tensor from Python data: a Tensor (cast/moved as asked), a scalar (0-d), bytes (uint8),
// nested lists/tuples or a numpy array. Lists of floats are float32 and of ints int32
// (tinygrad's default_float and default_int); arrays keep their dtype. A C-contiguous,
// aligned, writeable array is read in place on a host-visible device (zero copy; the tensor
// keeps the array alive), otherwise copied.
Tensor tensor_from_data(py::handle data, std::optional<tg::DType> dtype, const std::string& device);
// The other operand of a binary op: a Tensor as is, a Python scalar through scalar_like
// (tinygrad's promotion: an int next to float16 stays float16), other data as a tensor on
// self's device.
Tensor operand(const Tensor& self, py::handle other);
// Several operands (tinygrad's `*args` of cat/stack), each through operand().
std::vector<Tensor> operands(const Tensor& self, const py::args& args);

// The tensor's elements as a new numpy array of its shape (realizing it).
py::array to_numpy(const Tensor& t);
// A Python scalar of the tensor's one element.
py::object item(const Tensor& t);

// requires_grad=None|bool as tinygrad's creation functions take it.
Tensor with_requires_grad(Tensor t, py::handle requires_grad);

} // namespace tgpy
