// The layers of tg::nn with tinygrad's (and PyTorch's) constructor arguments. Their tensors
// are handles on the module's own state: t.assign(...) through them updates the layer.
#include "bindings.hpp"
#include "tg/nn.hpp"

namespace tgpy {

namespace {

using tg::nn::Module;

py::object opt(const std::optional<Tensor>& t) { return t ? py::cast(*t) : py::none(); }

// weight, bias and the running statistics where a layer has them.
template <class L> void tensors(py::class_<L, Module>& c) {
  if constexpr (requires(L l) { l.weight.defined(); })
    c.def_property_readonly("weight", [](const L& l) { return l.weight; });
  else if constexpr (requires(L l) { l.weight.has_value(); })
    c.def_property_readonly("weight", [](const L& l) { return opt(l.weight); });
  if constexpr (requires(L l) { l.bias.has_value(); })
    c.def_property_readonly("bias", [](const L& l) { return opt(l.bias); });
  if constexpr (requires(L l) { l.running_mean.has_value(); }) {
    c.def_property_readonly("running_mean", [](const L& l) { return opt(l.running_mean); });
    c.def_property_readonly("running_var", [](const L& l) { return opt(l.running_var); });
  }
  c.def(
      "__call__", [](const L& l, const Tensor& x) { return l(x); }, py::arg("x"));
}

tg::Shape shape_of(py::handle h) { return int_list(h); }

} // namespace

void bind_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("nn", "tinygrad's nn layers");
  py::class_<Module>(nn, "Module")
      .def("get_state_dict",
           [](const Module& mod) {
             py::dict d;
             for (const auto& [k, v] : mod.named_state()) d[py::str(k)] = v;
             return d;
           })
      .def("get_parameters", &Module::get_parameters)
      .def("load_state_dict", &Module::load_state_dict, py::arg("state_dict"),
           py::arg("strict") = true);

  py::class_<tg::nn::Linear, Module> linear(nn, "Linear");
  linear.def(py::init<int64_t, int64_t, bool>(), py::arg("in_features"), py::arg("out_features"),
             py::arg("bias") = true);
  tensors(linear);

  py::class_<tg::nn::ConvNd, Module> convnd(nn, "ConvNd");
  tensors(convnd);
  py::class_<tg::nn::Conv1d, tg::nn::ConvNd>(nn, "Conv1d")
      .def(py::init([](int64_t in, int64_t out, py::handle k, py::handle stride, py::handle padding,
                       py::handle dilation, int64_t groups, bool bias) {
             return std::make_unique<tg::nn::Conv1d>(
                 in, out, int_list(k), int_list(stride),
                 py::isinstance<py::str>(padding) ? Tensor::ConvPadding(padding.cast<std::string>())
                                                  : Tensor::ConvPadding(int_list(padding)),
                 int_list(dilation), groups, bias);
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"),
           py::arg("stride") = 1, py::arg("padding") = 0, py::arg("dilation") = 1,
           py::arg("groups") = 1, py::arg("bias") = true);
  py::class_<tg::nn::Conv2d, tg::nn::ConvNd>(nn, "Conv2d")
      .def(py::init([](int64_t in, int64_t out, py::handle k, py::handle stride, py::handle padding,
                       py::handle dilation, int64_t groups, bool bias) {
             return std::make_unique<tg::nn::Conv2d>(
                 in, out, int_list(k), int_list(stride),
                 py::isinstance<py::str>(padding) ? Tensor::ConvPadding(padding.cast<std::string>())
                                                  : Tensor::ConvPadding(int_list(padding)),
                 int_list(dilation), groups, bias);
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"),
           py::arg("stride") = 1, py::arg("padding") = 0, py::arg("dilation") = 1,
           py::arg("groups") = 1, py::arg("bias") = true);
  py::class_<tg::nn::ConvTranspose2d, Module> convt(nn, "ConvTranspose2d");
  convt.def(
      py::init([](int64_t in, int64_t out, py::handle k, py::handle stride, py::handle padding,
                  py::handle output_padding, int64_t groups, bool bias, py::handle dilation) {
        return std::make_unique<tg::nn::ConvTranspose2d>(
            in, out, int_list(k), int_list(stride), int_list(padding), int_list(output_padding),
            groups, bias, int_list(dilation));
      }),
      py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"),
      py::arg("stride") = 1, py::arg("padding") = 0, py::arg("output_padding") = 0,
      py::arg("groups") = 1, py::arg("bias") = true, py::arg("dilation") = 1);
  tensors(convt);

  py::class_<tg::nn::BatchNorm, Module> bn(nn, "BatchNorm");
  bn.def(py::init<int64_t, double, double, bool, bool>(), py::arg("sz"), py::arg("eps") = 1e-5,
         py::arg("momentum") = 0.1, py::arg("affine") = true,
         py::arg("track_running_stats") = true);
  tensors(bn);
  nn.attr("BatchNorm2d") = nn.attr("BatchNorm");
  nn.attr("BatchNorm1d") = nn.attr("BatchNorm");
  py::class_<tg::nn::LayerNorm, Module> ln(nn, "LayerNorm");
  ln.def(py::init([](py::handle shape, double eps, bool affine) {
           return std::make_unique<tg::nn::LayerNorm>(shape_of(shape), eps, affine);
         }),
         py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("elementwise_affine") = true);
  tensors(ln);
  py::class_<tg::nn::GroupNorm, Module> gn(nn, "GroupNorm");
  gn.def(py::init<int64_t, int64_t, double, bool>(), py::arg("num_groups"), py::arg("num_channels"),
         py::arg("eps") = 1e-5, py::arg("affine") = true);
  tensors(gn);
  py::class_<tg::nn::InstanceNorm, Module> in(nn, "InstanceNorm");
  tensors(in);
  py::class_<tg::nn::InstanceNorm1d, tg::nn::InstanceNorm>(nn, "InstanceNorm1d")
      .def(py::init<int64_t, double, double, bool, bool>(), py::arg("num_features"),
           py::arg("eps") = 1e-5, py::arg("momentum") = 0.1, py::arg("affine") = false,
           py::arg("track_running_stats") = false);
  py::class_<tg::nn::InstanceNorm2d, tg::nn::InstanceNorm>(nn, "InstanceNorm2d")
      .def(py::init<int64_t, double, double, bool, bool>(), py::arg("num_features"),
           py::arg("eps") = 1e-5, py::arg("momentum") = 0.1, py::arg("affine") = false,
           py::arg("track_running_stats") = false);
  py::class_<tg::nn::RMSNorm, Module> rms(nn, "RMSNorm");
  rms.def(py::init([](py::handle shape, std::optional<double> eps, bool affine) {
            return std::make_unique<tg::nn::RMSNorm>(shape_of(shape), eps, affine);
          }),
          py::arg("dim"), py::arg("eps") = 1e-6, py::arg("elementwise_affine") = true);
  tensors(rms);
  py::class_<tg::nn::Embedding, Module> emb(nn, "Embedding");
  emb.def(py::init<int64_t, int64_t>(), py::arg("vocab_size"), py::arg("embed_size"));
  tensors(emb);
  py::class_<tg::nn::Dropout, Module> drop(nn, "Dropout");
  drop.def(py::init<double>(), py::arg("p") = 0.5);
  drop.def("__call__", [](const tg::nn::Dropout& d, const Tensor& x) { return d(x); });
  py::class_<tg::nn::LSTMCell, Module>(nn, "LSTMCell")
      .def(py::init<int64_t, int64_t, bool>(), py::arg("input_size"), py::arg("hidden_size"),
           py::arg("bias") = true)
      .def_property_readonly("weight_ih", [](const tg::nn::LSTMCell& l) { return l.weight_ih; })
      .def_property_readonly("weight_hh", [](const tg::nn::LSTMCell& l) { return l.weight_hh; })
      .def(
          "__call__",
          [](const tg::nn::LSTMCell& l, const Tensor& x, py::handle hc) {
            std::optional<std::pair<Tensor, Tensor>> state;
            if (!hc.is_none()) state = hc.cast<std::pair<Tensor, Tensor>>();
            auto [h, c] = l(x, state);
            return py::make_tuple(h, c);
          },
          py::arg("x"), py::arg("hc") = py::none());
}

} // namespace tgpy
