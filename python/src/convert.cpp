#include "convert.hpp"

#include <cstring>
#include <map>
#include <memory>

#include "tg/buffer.hpp"
#include "tg/error.hpp"

namespace tgpy {

namespace {

// tinygrad's aliases next to the canonical names DType::name() gives.
const std::map<std::string, tg::DType>& dtype_names() {
  static const std::map<std::string, tg::DType> names = [] {
    std::map<std::string, tg::DType> m;
    for (tg::DType d : tg::dtypes::all()) m[d.name()] = d;
    m["half"] = tg::dtypes::float16;
    m["float"] = tg::dtypes::float32;
    m["double"] = tg::dtypes::float64;
    m["int"] = tg::dtypes::int32;
    m["long"] = tg::dtypes::int64;
    m["uint"] = tg::dtypes::uint32;
    m["ulong"] = tg::dtypes::uint64;
    m["char"] = tg::dtypes::int8;
    m["uchar"] = tg::dtypes::uint8;
    m["short"] = tg::dtypes::int16;
    m["ushort"] = tg::dtypes::uint16;
    m["bf16"] = tg::dtypes::bfloat16;
    return m;
  }();
  return names;
}

// Keeps a Python object alive for as long as a borrowed Buffer reads its memory; released
// under the GIL (and leaked if the interpreter is already gone at process exit).
std::shared_ptr<const void> keep_alive(py::object o) {
  return std::shared_ptr<const void>(new py::object(std::move(o)), [](const void* p) {
    auto* obj = static_cast<py::object*>(const_cast<void*>(p));
    if (!Py_IsInitialized() || _Py_IsFinalizing()) {
      obj->release();
      delete obj;
      return;
    }
    py::gil_scoped_acquire gil;
    delete obj;
  });
}

Tensor from_array(py::array arr, const std::string& device) {
  const tg::DType d = from_numpy_dtype(arr.dtype());
  tg::Shape shape(arr.shape(), arr.shape() + arr.ndim());
  const std::string dev = tg::canonical_device(device);
  const bool in_place = (arr.flags() & py::array::c_style) && arr.writeable() &&
                        reinterpret_cast<uintptr_t>(arr.data()) % d.itemsize() == 0 &&
                        arr.size() > 0 && tg::Buffer::host_visible(dev);
  if (!in_place) {
    py::array c = py::array::ensure(arr, py::array::c_style | py::array::forcecast);
    return Tensor::from_bytes(c.data(), static_cast<size_t>(c.size()) * d.itemsize(), shape, d,
                              dev);
  }
  auto buf = tg::Buffer::borrow_host(dev, d, static_cast<int64_t>(arr.size()), arr.mutable_data(),
                                     keep_alive(arr));
  tg::UOpPtr u = buf->uop();
  if (shape != tg::Shape{static_cast<int64_t>(arr.size())})
    u = tg::UOp::make(tg::Ops::RESHAPE, d, {u}, shape);
  return Tensor(u, {buf}, dev);
}

} // namespace

tg::DType to_dtype(py::handle h) {
  if (py::isinstance<tg::DType>(h)) return h.cast<tg::DType>();
  if (py::isinstance<py::str>(h)) {
    const std::string name = h.cast<std::string>();
    auto it = dtype_names().find(name);
    if (it == dtype_names().end())
      throw UnknownName("unknown dtype '" + name +
                        "': use a dtypes.* value or a name such as float32");
    return it->second;
  }
  if (h.is(py::type::of(py::bool_()))) return tg::dtypes::bool_;
  if (h.is(py::type::of(py::int_()))) return tg::dtypes::int32;
  if (h.is(py::type::of(py::float_()))) return tg::dtypes::float32;
  py::module_ np = py::module_::import("numpy");
  return from_numpy_dtype(np.attr("dtype")(h).cast<py::dtype>());
}

std::optional<tg::DType> to_opt_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

std::string to_device(py::handle h) {
  if (h.is_none()) return "";
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h))
    throw tg::Error("multi-device tensors (a tuple of devices) are not supported: give one device");
  return py::str(h).cast<std::string>();
}

py::dtype numpy_dtype(tg::DType d) {
  using tg::ScalarType;
  switch (d.scalar_type) {
  case ScalarType::Bool:
    return py::dtype("bool");
  case ScalarType::Int8:
    return py::dtype("int8");
  case ScalarType::UInt8:
    return py::dtype("uint8");
  case ScalarType::Int16:
    return py::dtype("int16");
  case ScalarType::UInt16:
    return py::dtype("uint16");
  case ScalarType::Int32:
    return py::dtype("int32");
  case ScalarType::UInt32:
    return py::dtype("uint32");
  case ScalarType::Int64:
    return py::dtype("int64");
  case ScalarType::UInt64:
    return py::dtype("uint64");
  case ScalarType::Float16:
    return py::dtype("float16");
  case ScalarType::Float32:
    return py::dtype("float32");
  case ScalarType::Float64:
    return py::dtype("float64");
  default:
    throw tg::Error("numpy has no " + d.name() + " dtype: cast first, e.g. t.float().numpy()");
  }
}

tg::DType from_numpy_dtype(const py::dtype& d) {
  const char kind = d.kind();
  // Read through Python: pybind11 before 2.12 (Debian's 2.10) reads the element size from
  // numpy 1's descriptor layout, which numpy 2 changed.
  const auto size = d.attr("itemsize").cast<py::ssize_t>();
  if (kind == 'b') return tg::dtypes::bool_;
  if (kind == 'f' && size == 2) return tg::dtypes::float16;
  if (kind == 'f' && size == 4) return tg::dtypes::float32;
  if (kind == 'f' && size == 8) return tg::dtypes::float64;
  if (kind == 'i' || kind == 'u') {
    const bool u = kind == 'u';
    switch (size) {
    case 1:
      return u ? tg::dtypes::uint8 : tg::dtypes::int8;
    case 2:
      return u ? tg::dtypes::uint16 : tg::dtypes::int16;
    case 4:
      return u ? tg::dtypes::uint32 : tg::dtypes::int32;
    case 8:
      return u ? tg::dtypes::uint64 : tg::dtypes::int64;
    default:
      break;
    }
  }
  throw tg::Error("numpy dtype " + d.attr("name").cast<std::string>() +
                  " has no tensor dtype: use bool, an integer or float16/32/64");
}

tg::Shape shape_from_args(const py::args& args) {
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) return int_list(args[0]);
  tg::Shape s;
  for (py::handle a : args) {
    if (!py::isinstance<py::int_>(a) && !py::hasattr(a, "__index__"))
      throw py::value_error("a shape is ints or one sequence of ints, got " +
                            py::repr(args).cast<std::string>());
    s.push_back(a.cast<int64_t>());
  }
  return s;
}

std::vector<int64_t> int_list(py::handle h) {
  if (py::isinstance<py::str>(h) || py::isinstance<py::float_>(h))
    throw py::type_error("expected an int or a sequence of ints, got " +
                         py::str(py::type::of(h)).cast<std::string>());
  if (py::isinstance<py::int_>(h) || py::hasattr(h, "__index__")) {
    if (!py::isinstance<py::sequence>(h)) return {h.cast<int64_t>()};
  }
  std::vector<int64_t> v;
  for (py::handle x : h) v.push_back(x.cast<int64_t>());
  return v;
}

std::vector<int64_t> axes(py::handle h) {
  if (h.is_none()) return {};
  return int_list(h);
}

bool is_scalar(py::handle h) {
  if (py::isinstance<py::bool_>(h) || py::isinstance<py::int_>(h) || py::isinstance<py::float_>(h))
    return true;
  py::module_ np = py::module_::import("numpy");
  return py::isinstance(h, np.attr("generic"));
}

tg::Scalar to_scalar(py::handle h) {
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance<py::bool_>(h) || py::isinstance(h, np.attr("bool_")))
    return tg::Scalar(h.cast<bool>());
  if (py::isinstance<py::int_>(h) || py::isinstance(h, np.attr("integer"))) {
    // Up to uint64's maximum: above INT64_MAX the value keeps its bit pattern (ConstValue).
    py::int_ i(py::reinterpret_borrow<py::object>(h));
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow == 0) return tg::Scalar(static_cast<int64_t>(v));
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
      if (!PyErr_Occurred()) return tg::Scalar(static_cast<int64_t>(u));
      PyErr_Clear();
    }
    throw py::value_error("integer " + py::str(h).cast<std::string>() +
                          " is out of the range of int64 and uint64");
  }
  if (py::isinstance<py::float_>(h) || py::isinstance(h, np.attr("floating")))
    return tg::Scalar(h.cast<double>());
  throw py::type_error("expected a bool, int or float, got " +
                       py::str(py::type::of(h)).cast<std::string>());
}

Tensor tensor_from_data(py::handle data, std::optional<tg::DType> dtype,
                        const std::string& device) {
  if (py::isinstance<Tensor>(data)) {
    Tensor t = data.cast<Tensor>();
    if (dtype && *dtype != t.dtype()) t = t.cast(*dtype);
    if (!device.empty() && tg::canonical_device(device) != t.device()) t = t.to(device);
    return t;
  }
  if (data.is_none())
    throw py::type_error("Tensor(None): give data (a list, a scalar, a numpy array or bytes)");
  if (is_scalar(data) && !py::isinstance<py::array>(data)) {
    const tg::Scalar s = to_scalar(data);
    const bool is_int = std::holds_alternative<int64_t>(s.value);
    // A Python int becomes tinygrad's default int (int32), a numpy scalar keeps its type.
    std::optional<tg::DType> d = dtype;
    py::module_ np = py::module_::import("numpy");
    if (!d && py::isinstance(data, np.attr("generic")))
      d = from_numpy_dtype(data.attr("dtype").cast<py::dtype>());
    if (!d && is_int) d = tg::dtypes::int32;
    return Tensor::full({}, s, d, device);
  }
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance<py::bytes>(data) || py::isinstance<py::bytearray>(data)) {
    py::array arr = np.attr("frombuffer")(data, "uint8");
    Tensor t = from_array(arr, device);
    return dtype ? t.cast(*dtype) : t;
  }
  const bool from_python = !py::isinstance<py::array>(data);
  py::array arr = np.attr("asarray")(data);
  if (arr.dtype().kind() == 'O' || arr.dtype().kind() == 'U' || arr.dtype().kind() == 'S')
    throw py::type_error("Tensor(): data must be numbers of one nesting depth per axis, got " +
                         arr.dtype().attr("name").cast<std::string>() + " elements");
  if (from_python) {
    // Python lists: floats are default_float, ints default_int (numpy would say 64-bit), an
    // empty list float32; a dtype numpy has is applied while converting.
    const char kind = arr.dtype().kind();
    std::optional<py::dtype> want;
    const bool numpy_has = dtype && dtype->scalar_type != tg::ScalarType::BFloat16 &&
                           dtype->scalar_type != tg::ScalarType::FP8E4M3 &&
                           dtype->scalar_type != tg::ScalarType::FP8E5M2;
    if (numpy_has)
      want = numpy_dtype(*dtype);
    else if (kind == 'f' || arr.size() == 0)
      want = py::dtype("float32");
    else if (kind == 'i' || kind == 'u')
      want = py::dtype("int32");
    if (want) arr = np.attr("asarray")(arr, *want);
  }
  Tensor t = from_array(arr, device);
  return dtype && *dtype != t.dtype() ? t.cast(*dtype) : t;
}

Tensor operand(const Tensor& self, py::handle other) {
  if (py::isinstance<Tensor>(other)) return other.cast<Tensor>();
  if (is_scalar(other) && !py::isinstance<py::array>(other))
    return self.scalar_like(to_scalar(other));
  return tensor_from_data(other, std::nullopt, self.device());
}

std::vector<Tensor> operands(const Tensor& self, const py::args& args) {
  std::vector<Tensor> v{self};
  for (py::handle a : args) v.push_back(operand(self, a));
  return v;
}

py::array to_numpy(const Tensor& t) {
  const py::dtype d = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  const std::vector<uint8_t> bytes = t.to_bytes();
  // C-order strides from our element size: pybind11 before 2.12 would compute them from numpy
  // 1's descriptor layout, wrong under numpy 2.
  const auto item = static_cast<py::ssize_t>(t.dtype().itemsize());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = item;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<py::ssize_t>(shape[i], 1);
  }
  py::array out(d, shape, strides);
  const size_t nbytes = static_cast<size_t>(out.size()) * static_cast<size_t>(item);
  if (nbytes != bytes.size())
    throw tg::Error("numpy(): " + std::to_string(bytes.size()) + " bytes for a tensor of " +
                    std::to_string(nbytes));
  if (!bytes.empty()) std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  return out;
}

py::object item(const Tensor& t) {
  const tg::DType d = t.dtype();
  if (d.is_float()) return py::float_(t.item<double>());
  if (d.is_bool()) return py::bool_(t.item<bool>());
  if (d.is_unsigned()) return py::int_(t.item<uint64_t>());
  return py::int_(t.item<int64_t>());
}

Tensor with_requires_grad(Tensor t, py::handle requires_grad) {
  if (!requires_grad.is_none() && requires_grad.cast<bool>()) t.requires_grad_(true);
  return t;
}

} // namespace tgpy
