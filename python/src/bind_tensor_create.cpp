// Tensor's constructor, the creation functions with tinygrad's `*shape, **kwargs` form, and
// the ways back to Python (numpy, tolist, item) and properties.
#include <cmath>
#include <cstdint>

#include "bindings.hpp"
#include "tg/error.hpp"

namespace tgpy {

namespace {

// The keyword arguments every creation function takes: dtype, device, requires_grad.
struct CreateOptions {
  std::optional<tg::DType> dtype;
  std::string device;
  py::object requires_grad = py::none();

  explicit CreateOptions(const py::kwargs& kw) {
    for (auto [k, v] : kw) {
      const std::string key = py::str(k);
      if (key == "dtype")
        dtype = to_opt_dtype(v);
      else if (key == "device")
        device = to_device(v);
      else if (key == "requires_grad")
        requires_grad = py::reinterpret_borrow<py::object>(v);
      else
        throw py::type_error("unexpected keyword argument '" + key +
                             "' (creation functions take dtype, device and requires_grad)");
    }
  }
  tg::DType dtype_or(tg::DType d) const { return dtype.value_or(d); }
  Tensor done(Tensor t) const { return with_requires_grad(std::move(t), requires_grad); }
};

bool is_integer(py::handle h) {
  return py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h);
}

} // namespace

void bind_tensor_create(TensorClass& t) {
  t.def(
      py::init([](py::handle data, py::handle device, py::handle dtype, py::handle requires_grad) {
        return with_requires_grad(tensor_from_data(data, to_opt_dtype(dtype), to_device(device)),
                                  requires_grad);
      }),
      py::arg("data"), py::arg("device") = py::none(), py::arg("dtype") = py::none(),
      py::arg("requires_grad") = py::none());

  // ---- creation ---------------------------------------------------------------------------
  t.def_static("empty", [](const py::args& shape, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(Tensor::empty(shape_from_args(shape), o.dtype_or(tg::dtypes::float32), o.device));
  });
  t.def_static("zeros", [](const py::args& shape, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(Tensor::zeros(shape_from_args(shape), o.dtype_or(tg::dtypes::float32), o.device));
  });
  t.def_static("ones", [](const py::args& shape, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(Tensor::ones(shape_from_args(shape), o.dtype_or(tg::dtypes::float32), o.device));
  });
  t.def_static(
      "full",
      [](py::handle shape, py::handle fill_value, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::full(int_list(shape), to_scalar(fill_value), o.dtype, o.device));
      },
      py::arg("shape"), py::arg("fill_value"));
  t.def_static(
      "arange",
      [](py::handle start, py::handle stop, py::handle step, const py::kwargs& kw) {
        CreateOptions o(kw);
        py::handle b = stop.is_none() ? py::handle(py::int_(0)) : start;
        py::handle e = stop.is_none() ? start : stop;
        // All-integer arguments give tinygrad's default int, any float its default float.
        const bool ints = is_integer(b) && is_integer(e) && is_integer(step);
        // An integer range beyond int32 takes int64, as tinygrad.
        const auto fits32 = [](py::handle x) {
          const int64_t v = x.cast<int64_t>();
          return v >= INT32_MIN && v <= INT32_MAX;
        };
        const tg::DType int_dtype =
            ints && fits32(b) && fits32(e) ? tg::dtypes::int32 : tg::dtypes::int64;
        const tg::DType d = o.dtype_or(ints ? int_dtype : tg::dtypes::float32);
        return o.done(
            Tensor::arange(b.cast<double>(), e.cast<double>(), step.cast<double>(), d, o.device));
      },
      py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1);
  t.def_static(
      "eye",
      [](int64_t n, std::optional<int64_t> m_, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::eye(n, m_, o.dtype_or(tg::dtypes::float32), o.device));
      },
      py::arg("n"), py::arg("m") = py::none());
  t.def_static(
      "linspace",
      [](double start, double stop, int64_t steps, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(
            Tensor::linspace(start, stop, steps, o.dtype_or(tg::dtypes::float32), o.device));
      },
      py::arg("start"), py::arg("stop"), py::arg("steps"));
  t.def_static("manual_seed", &Tensor::manual_seed, py::arg("seed") = 0);
  t.def_static("rand", [](const py::args& shape, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(Tensor::rand(shape_from_args(shape), o.dtype_or(tg::dtypes::float32), o.device));
  });
  t.def_static("randn", [](const py::args& shape, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(Tensor::randn(shape_from_args(shape), o.dtype_or(tg::dtypes::float32), o.device));
  });
  t.def_static(
      "randint",
      [](const py::args& shape, int64_t low, int64_t high, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::randint(shape_from_args(shape), low, high,
                                      o.dtype_or(tg::dtypes::int32), o.device));
      },
      py::kw_only(), py::arg("low") = 0, py::arg("high") = 10);
  t.def_static(
      "normal",
      [](const py::args& shape, double mean, double std, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::normal(shape_from_args(shape), mean, std,
                                     o.dtype_or(tg::dtypes::float32), o.device));
      },
      py::kw_only(), py::arg("mean") = 0.0, py::arg("std") = 1.0);
  t.def_static(
      "uniform",
      [](const py::args& shape, double low, double high, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::uniform(shape_from_args(shape), low, high,
                                      o.dtype_or(tg::dtypes::float32), o.device));
      },
      py::kw_only(), py::arg("low") = 0.0, py::arg("high") = 1.0);
  t.def_static(
      "kaiming_uniform",
      [](const py::args& shape, double a, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::kaiming_uniform(shape_from_args(shape), a, "fan_in", "leaky_relu",
                                              o.dtype_or(tg::dtypes::float32), o.device));
      },
      py::kw_only(), py::arg("a") = 0.01);
  t.def_static(
      "kaiming_normal",
      [](const py::args& shape, double a, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::kaiming_normal(shape_from_args(shape), a, "fan_in", "leaky_relu",
                                             o.dtype_or(tg::dtypes::float32), o.device));
      },
      py::kw_only(), py::arg("a") = 0.01);
  t.def_static("glorot_uniform", [](const py::args& shape, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(Tensor::glorot_uniform(shape_from_args(shape), 1, o.dtype_or(tg::dtypes::float32),
                                         o.device));
  });
  t.def_static("scaled_uniform", [](const py::args& shape, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(
        Tensor::scaled_uniform(shape_from_args(shape), o.dtype_or(tg::dtypes::float32), o.device));
  });
  t.def_static(
      "randperm",
      [](int64_t n, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::randperm(n, o.dtype_or(tg::dtypes::int32), o.device));
      },
      py::arg("n"));
  // The *_like functions: the core's when no dtype or device is asked, else the plain form.
  t.def("zeros_like", [](const Tensor& self, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(o.dtype || !o.device.empty()
                      ? Tensor::zeros(self.shape(), o.dtype_or(self.dtype()),
                                      o.device.empty() ? self.device() : o.device)
                      : Tensor::zeros_like(self));
  });
  t.def("ones_like", [](const Tensor& self, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(o.dtype || !o.device.empty()
                      ? Tensor::ones(self.shape(), o.dtype_or(self.dtype()),
                                     o.device.empty() ? self.device() : o.device)
                      : Tensor::ones_like(self));
  });
  t.def("empty_like", [](const Tensor& self, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(Tensor::empty(self.shape(), o.dtype_or(self.dtype()),
                                o.device.empty() ? self.device() : o.device));
  });
  t.def(
      "full_like",
      [](const Tensor& self, py::handle fill_value, const py::kwargs& kw) {
        CreateOptions o(kw);
        return o.done(Tensor::full(self.shape(), to_scalar(fill_value), o.dtype_or(self.dtype()),
                                   o.device.empty() ? self.device() : o.device));
      },
      py::arg("fill_value"));
  t.def("rand_like", [](const Tensor& self, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(o.dtype || !o.device.empty()
                      ? Tensor::rand(self.shape(), o.dtype_or(self.dtype()),
                                     o.device.empty() ? self.device() : o.device)
                      : Tensor::rand_like(self));
  });
  t.def("randn_like", [](const Tensor& self, const py::kwargs& kw) {
    CreateOptions o(kw);
    return o.done(o.dtype || !o.device.empty()
                      ? Tensor::randn(self.shape(), o.dtype_or(self.dtype()),
                                      o.device.empty() ? self.device() : o.device)
                      : Tensor::randn_like(self));
  });

  // ---- running and reading back -----------------------------------------------------------
  t.def("realize", [](py::object self, const py::args& more) {
    std::vector<Tensor> all{self.cast<Tensor>()};
    for (py::handle x : more) all.push_back(x.cast<Tensor>());
    Tensor::realize_all(all);
    return self;
  });
  t.def("numpy", &to_numpy);
  t.def("tolist", [](const Tensor& self) { return to_numpy(self).attr("tolist")(); });
  t.def("item", &item);
  t.def(
      "__array__",
      [](const Tensor& self, py::handle dtype) {
        py::array a = to_numpy(self);
        return dtype.is_none() ? py::object(a) : a.attr("astype")(dtype);
      },
      py::arg("dtype") = py::none());

  // ---- properties -------------------------------------------------------------------------
  t.def_property_readonly("shape", [](const Tensor& self) {
    py::tuple s(self.shape().size());
    for (size_t i = 0; i < self.shape().size(); ++i) s[i] = self.size(static_cast<int64_t>(i));
    return s;
  });
  t.def_property_readonly("dtype", &Tensor::dtype);
  t.def_property_readonly("device", &Tensor::device);
  t.def_property_readonly("ndim", &Tensor::ndim);
  t.def("dim", &Tensor::ndim);
  t.def("numel", &Tensor::numel);
  t.def(
      "size",
      [](const Tensor& self, py::handle dim) -> py::object {
        if (!dim.is_none()) return py::int_(self.size(dim.cast<int64_t>()));
        return py::module_::import("builtins").attr("getattr")(py::cast(self), "shape");
      },
      py::arg("dim") = py::none());
  t.def("element_size", [](const Tensor& self) { return self.dtype().itemsize(); });
  t.def("nbytes", [](const Tensor& self) { return self.numel() * self.dtype().itemsize(); });
  t.def("__repr__", &Tensor::str);
  t.def("__len__", [](const Tensor& self) {
    if (self.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
    return self.size(0);
  });
  t.def("__bool__", [](const Tensor&) -> bool {
    throw py::type_error("__bool__ on Tensor is not defined: use .item() or (t == x).all().item()");
  });
  t.def("__hash__",
        [](const Tensor& self) { return reinterpret_cast<uintptr_t>(self.state().get()); });
}

} // namespace tgpy
