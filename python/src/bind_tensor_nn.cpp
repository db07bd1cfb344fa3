// The functional nn ops as Tensor methods with tinygrad's names and arguments: conv2d and the
// pools take any number of spatial dimensions (dispatching to the core's 1-D/2-D/3-D forms),
// linear's weight is (in, out) as tinygrad's, and the losses take tinygrad's keywords.
#include <tuple>

#include "bindings.hpp"

namespace tgpy {

namespace {

using OptTensor = Tensor::OptTensor;

OptTensor opt_tensor(const Tensor& self, py::handle h) {
  if (h.is_none()) return std::nullopt;
  return operand(self, h);
}

// tinygrad's int-or-tuple argument, for `n` spatial dimensions.
std::vector<int64_t> per_dim(py::handle h, size_t n) {
  std::vector<int64_t> v = int_list(h);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  return v;
}

// Padding: an int, one per spatial dimension, a flat (before, after) list with equal halves,
// or "same"/"valid".
Tensor::ConvPadding conv_padding(py::handle h, size_t n) {
  if (py::isinstance<py::str>(h)) return Tensor::ConvPadding(h.cast<std::string>());
  std::vector<int64_t> v = per_dim(h, n);
  if (v.size() == 2 * n && n > 0) {
    // tinygrad's flat form lists (left, right) per axis, last axis first.
    std::vector<int64_t> sym(n);
    for (size_t i = 0; i < n; ++i) {
      if (v[2 * i] != v[2 * i + 1])
        throw py::value_error(
            "asymmetric padding is not supported by the core's conv/pool: pad first");
      sym[n - 1 - i] = v[2 * i];
    }
    v = sym;
  }
  return Tensor::ConvPadding(v);
}

// tinygrad's conv padding the core's conv does not take (a flat (before, after) list with
// unequal halves, or negative values) as a pad of the input's spatial axes (negative crops),
// after which the conv runs unpadded; nullopt when the core takes the padding as it is.
std::optional<std::vector<std::pair<int64_t, int64_t>>> input_padding(py::handle h, size_t n,
                                                                      int64_t ndim) {
  if (py::isinstance<py::str>(h)) return std::nullopt;
  const std::vector<int64_t> v = per_dim(h, n);
  bool needed = false;
  for (int64_t x : v) needed = needed || x < 0;
  if (v.size() == 2 * n)
    for (size_t i = 0; i < n; ++i) needed = needed || v[2 * i] != v[2 * i + 1];
  if (!needed) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> pairs(static_cast<size_t>(ndim), {0, 0});
  for (size_t i = 0; i < n; ++i) {
    const auto axis = static_cast<size_t>(ndim) - 1 - i; // the flat form is last axis first
    pairs[axis] = v.size() == 2 * n ? std::pair{v[2 * i], v[2 * i + 1]}
                                    : std::pair{v[n - 1 - i], v[n - 1 - i]};
  }
  return pairs;
}

size_t spatial_dims_of(py::handle kernel_size) {
  return py::isinstance<py::int_>(kernel_size) ? 2 : py::len(kernel_size);
}

} // namespace

void bind_tensor_nn(TensorClass& t) {
  t.def(
      "linear",
      [](const Tensor& self, const Tensor& weight, py::handle bias) {
        const Tensor y = weight.ndim() == 1 ? self.mul(weight) : self.matmul(weight);
        return bias.is_none() ? y : y.add(operand(self, bias));
      },
      py::arg("weight"), py::arg("bias") = py::none());
  t.def_static(
      "einsum",
      [](const std::string& formula, const py::args& operands) {
        std::vector<Tensor> ops;
        for (py::handle o : operands) {
          if (py::isinstance<Tensor>(o)) {
            ops.push_back(o.cast<Tensor>());
          } else {
            for (py::handle x : o) ops.push_back(x.cast<Tensor>());
          }
        }
        return Tensor::einsum(formula, ops);
      },
      py::arg("formula"));

  t.def(
      "conv2d",
      [](const Tensor& self, const Tensor& weight, py::handle bias, int64_t groups,
         py::handle stride, py::handle dilation, py::handle padding, py::handle dtype) {
        const size_t n = static_cast<size_t>(weight.ndim() - 2);
        Tensor x = dtype.is_none() ? self : self.cast(to_dtype(dtype));
        const OptTensor b = opt_tensor(self, bias);
        const auto s = per_dim(stride, n), d = per_dim(dilation, n);
        const auto pre = input_padding(padding, n, x.ndim());
        if (pre) x = x.pad(*pre);
        const auto p = pre ? Tensor::ConvPadding(0) : conv_padding(padding, n);
        if (n == 1) return x.conv1d(weight, b, s, p, d, groups);
        if (n == 3) return x.conv3d(weight, b, s, p, d, groups);
        return x.conv2d(weight, b, s, p, d, groups);
      },
      py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
      py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("dtype") = py::none());
  t.def(
      "conv_transpose2d",
      [](const Tensor& self, const Tensor& weight, py::handle bias, int64_t groups,
         py::handle stride, py::handle dilation, py::handle padding, py::handle output_padding) {
        const size_t n = static_cast<size_t>(weight.ndim() - 2);
        const OptTensor b = opt_tensor(self, bias);
        const auto s = per_dim(stride, n), d = per_dim(dilation, n), p = per_dim(padding, n),
                   op = per_dim(output_padding, n);
        if (n == 1) return self.conv_transpose1d(weight, b, s, p, op, groups, d);
        if (n == 3) return self.conv_transpose3d(weight, b, s, p, op, groups, d);
        return self.conv_transpose2d(weight, b, s, p, op, groups, d);
      },
      py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
      py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("output_padding") = 0);

  t.def(
      "max_pool2d",
      [](const Tensor& self, py::handle kernel_size, py::handle stride, py::handle dilation,
         py::handle padding, bool ceil_mode, bool return_indices) -> py::object {
        const size_t n = spatial_dims_of(kernel_size);
        // padding: one int, one per dimension, or the flat (before, after) form as the core.
        const auto k = per_dim(kernel_size, n), d = per_dim(dilation, n), p = int_list(padding);
        std::optional<Tensor::IntOrTuple> s;
        if (!stride.is_none()) s = per_dim(stride, n);
        using Pool = std::pair<Tensor, Tensor> (Tensor::*)(
            Tensor::IntOrTuple, std::optional<Tensor::IntOrTuple>, Tensor::IntOrTuple,
            Tensor::IntOrTuple, bool) const;
        const Pool pool = n == 1   ? &Tensor::max_pool1d_with_indices
                          : n == 3 ? &Tensor::max_pool3d_with_indices
                                   : &Tensor::max_pool2d_with_indices;
        if (return_indices) {
          auto [v, i] = (self.*pool)(k, s, p, d, ceil_mode);
          return py::make_tuple(v, i);
        }
        if (n == 1) return py::cast(self.max_pool1d(k, s, p, d, ceil_mode));
        if (n == 3) return py::cast(self.max_pool3d(k, s, p, d, ceil_mode));
        return py::cast(self.max_pool2d(k, s, p, d, ceil_mode));
      },
      py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(),
      py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("ceil_mode") = false,
      py::arg("return_indices") = false);
  t.def(
      "avg_pool2d",
      [](const Tensor& self, py::handle kernel_size, py::handle stride, py::handle dilation,
         py::handle padding, bool ceil_mode, bool count_include_pad) {
        const size_t n = spatial_dims_of(kernel_size);
        const auto k = per_dim(kernel_size, n), p = int_list(padding);
        for (int64_t d : per_dim(dilation, n))
          if (d != 1) throw py::value_error("avg_pool2d: the core has no dilated average pooling");
        std::optional<Tensor::IntOrTuple> s;
        if (!stride.is_none()) s = per_dim(stride, n);
        if (n == 1) return self.avg_pool1d(k, s, p, ceil_mode, count_include_pad);
        if (n == 3) return self.avg_pool3d(k, s, p, ceil_mode, count_include_pad);
        return self.avg_pool2d(k, s, p, ceil_mode, count_include_pad);
      },
      py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(),
      py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("ceil_mode") = false,
      py::arg("count_include_pad") = true);
  // tinygrad's max_unpool2d: any number of spatial dimensions (those of kernel_size);
  // output_size's leading batch and channel entries are ignored.
  t.def(
      "max_unpool2d",
      [](const Tensor& self, const Tensor& indices, py::handle kernel_size, py::handle stride,
         py::handle dilation, py::handle padding, py::handle output_size) {
        const size_t n = spatial_dims_of(kernel_size);
        const auto k = per_dim(kernel_size, n), d = per_dim(dilation, n), p = int_list(padding);
        std::optional<Tensor::IntOrTuple> s;
        if (!stride.is_none()) s = per_dim(stride, n);
        std::optional<std::vector<int64_t>> out;
        if (!output_size.is_none()) out = int_list(output_size);
        if (n == 1) return self.max_unpool1d(indices, k, s, p, out, d);
        if (n == 3) return self.max_unpool3d(indices, k, s, p, out, d);
        return self.max_unpool2d(indices, k, s, p, out, d);
      },
      py::arg("indices"), py::arg("kernel_size") = py::make_tuple(2, 2),
      py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0,
      py::arg("output_size") = py::none());
  t.def(
      "adaptive_avg_pool2d",
      [](const Tensor& self, py::handle output_size) {
        return self.adaptive_avg_pool2d(per_dim(output_size, 2));
      },
      py::arg("output_size"));
  // PyTorch's adaptive max pooling (tinygrad has none), with its return_indices.
  using AdaptiveMax = std::pair<Tensor, Tensor> (Tensor::*)(Tensor::IntOrTuple) const;
  for (auto [name, n, pool] :
       {std::tuple<const char*, size_t, AdaptiveMax>{"adaptive_max_pool1d", 1,
                                                     &Tensor::adaptive_max_pool1d_with_indices},
        std::tuple<const char*, size_t, AdaptiveMax>{"adaptive_max_pool2d", 2,
                                                     &Tensor::adaptive_max_pool2d_with_indices}})
    t.def(
        name,
        [n, pool](const Tensor& self, py::handle output_size, bool return_indices) -> py::object {
          auto [v, i] = (self.*pool)(per_dim(output_size, n));
          return return_indices ? py::object(py::make_tuple(v, i)) : py::cast(v);
        },
        py::arg("output_size"), py::arg("return_indices") = false);
  t.def(
      "adaptive_avg_pool1d",
      [](const Tensor& self, py::handle output_size) {
        return self.adaptive_avg_pool1d(per_dim(output_size, 1));
      },
      py::arg("output_size"));
  t.def("batch_norm", &Tensor::batch_norm, py::arg("running_mean"), py::arg("running_var"),
        py::arg("weight") = py::none(), py::arg("bias") = py::none(), py::arg("training") = false,
        py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
  t.def(
      "interpolate",
      [](const Tensor& self, py::handle size, const std::string& mode, bool align_corners) {
        const std::vector<int64_t> s = int_list(size);
        // tinygrad's "linear" interpolates every resized dimension linearly.
        std::string m = mode;
        if (mode == "linear")
          m = s.size() == 1 ? "linear" : s.size() == 2 ? "bilinear" : "trilinear";
        const bool linear = m == "linear" || m == "bilinear" || m == "trilinear";
        return self.interpolate(Tensor::IntOrTuple(s), {}, m,
                                linear ? std::optional<bool>(align_corners) : std::nullopt);
      },
      py::arg("size"), py::arg("mode") = "linear", py::arg("align_corners") = false);

  t.def(
      "layernorm",
      [](const Tensor& self, py::handle axis, double eps) {
        // tinygrad's layernorm over trailing axes, without an affine part.
        std::vector<int64_t> ax = int_list(axis);
        tg::Shape trailing;
        for (size_t i = 0; i < ax.size(); ++i) {
          const int64_t want = self.ndim() - static_cast<int64_t>(ax.size() - i);
          const int64_t a = ax[i] < 0 ? ax[i] + self.ndim() : ax[i];
          if (a != want) throw py::value_error("layernorm: only trailing axes are supported");
          trailing.push_back(self.size(a));
        }
        return self.layer_norm(trailing, std::nullopt, std::nullopt, eps);
      },
      py::arg("axis") = -1, py::arg("eps") = 1e-5);
  t.def(
      "layer_norm",
      [](const Tensor& self, py::handle normalized_shape, OptTensor weight, OptTensor bias,
         double eps) { return self.layer_norm(int_list(normalized_shape), weight, bias, eps); },
      py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
      py::arg("eps") = 1e-5);
  t.def("group_norm", &Tensor::group_norm, py::arg("num_groups"), py::arg("weight") = py::none(),
        py::arg("bias") = py::none(), py::arg("eps") = 1e-5);
  t.def(
      "rms_norm",
      [](const Tensor& self, py::handle normalized_shape, OptTensor weight,
         std::optional<double> eps) {
        return self.rms_norm(int_list(normalized_shape), weight, eps);
      },
      py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("eps") = py::none());
  t.def(
      "dropout", [](const Tensor& self, double p) { return self.dropout(p, Tensor::training); },
      py::arg("p") = 0.5);
  t.def("scaled_dot_product_attention", &Tensor::scaled_dot_product_attention, py::arg("key"),
        py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("dropout_p") = 0.0,
        py::arg("is_causal") = false, py::arg("scale") = py::none(), py::arg("enable_gqa") = false);

  t.def(
      "cross_entropy",
      [](const Tensor& self, const Tensor& Y, const std::string& reduction,
         double label_smoothing) {
        return self.cross_entropy(Y, std::nullopt, -100, reduction, label_smoothing);
      },
      py::arg("Y"), py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0);
  t.def(
      "nll_loss",
      [](const Tensor& self, const Tensor& Y, OptTensor weight, std::optional<int64_t> ignore_index,
         const std::string& reduction) {
        return self.nll_loss(Y, weight, ignore_index.value_or(-100), reduction);
      },
      py::arg("Y"), py::arg("weight") = py::none(), py::arg("ignore_index") = py::none(),
      py::arg("reduction") = "mean");
  t.def("sparse_categorical_crossentropy", &Tensor::sparse_categorical_crossentropy, py::arg("Y"),
        py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0,
        py::arg("reduction") = "mean");
  t.def(
      "binary_crossentropy",
      [](const Tensor& self, const Tensor& Y, const std::string& reduction) {
        return self.binary_cross_entropy(Y, std::nullopt, reduction);
      },
      py::arg("Y"), py::arg("reduction") = "mean");
  t.def(
      "binary_crossentropy_logits",
      [](const Tensor& self, const Tensor& Y, const std::string& reduction, OptTensor pos_weight) {
        return self.binary_cross_entropy_with_logits(Y, std::nullopt, reduction, pos_weight);
      },
      py::arg("Y"), py::arg("reduction") = "mean", py::arg("pos_weight") = py::none());
  t.def("mse_loss", &Tensor::mse_loss, py::arg("target"), py::arg("reduction") = "mean");
  t.def("l1_loss", &Tensor::l1_loss, py::arg("target"), py::arg("reduction") = "mean");
  t.def("smooth_l1_loss", &Tensor::smooth_l1_loss, py::arg("target"), py::arg("reduction") = "mean",
        py::arg("beta") = 1.0);
}

} // namespace tgpy
