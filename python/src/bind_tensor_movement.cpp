// Movement ops (views), joining and splitting, with tinygrad's `*args` forms: t.reshape(2, 3)
// and t.reshape((2, 3)) alike; t.cat(u, v, dim=1) and Tensor.cat(t, u, dim=1) alike.
#include "bindings.hpp"

namespace tgpy {

namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// tinygrad's per-axis form ((before, after) or None per axis) or PyTorch's flat form
// (left, right, top, bottom, ...: last axis first) as (before, after) per axis.
Pairs padding_pairs(const Tensor& self, py::handle padding) {
  py::sequence seq = py::reinterpret_borrow<py::sequence>(padding);
  Pairs pairs;
  const bool per_axis =
      seq.size() > 0 && (seq[0].is_none() || py::isinstance<py::sequence>(seq[0]));
  if (per_axis) {
    for (py::handle p : seq)
      pairs.push_back(
          p.is_none() ? std::pair<int64_t, int64_t>{0, 0}
                      : std::pair{p[py::int_(0)].cast<int64_t>(), p[py::int_(1)].cast<int64_t>()});
    return pairs;
  }
  const std::vector<int64_t> flat = int_list(padding);
  if (flat.size() % 2 != 0 || static_cast<int64_t>(flat.size() / 2) > self.ndim())
    throw py::value_error("pad: a flat padding has two values per axis, at most " +
                          std::to_string(2 * self.ndim()) + " here, got " +
                          std::to_string(flat.size()));
  pairs.assign(static_cast<size_t>(self.ndim()), {0, 0});
  for (size_t i = 0; i < flat.size() / 2; ++i)
    pairs[pairs.size() - 1 - i] = {flat[2 * i], flat[2 * i + 1]};
  return pairs;
}

// reshape's shape: ints (one -1 inferred) or None for "this axis as it is", as tinygrad.
tg::Shape reshape_shape(const Tensor& self, const py::args& args) {
  const bool one_sequence =
      args.size() == 1 && !py::isinstance<py::int_>(args[0]) && !args[0].is_none();
  py::object seq = one_sequence ? py::reinterpret_borrow<py::object>(args[0]) : py::object(args);
  tg::Shape shape;
  int64_t axis = 0;
  for (py::handle d : seq) {
    shape.push_back(d.is_none() ? self.size(axis) : d.cast<int64_t>());
    ++axis;
  }
  return shape;
}

// cat/stack's tensors: x.cat(y, z), Tensor.cat(x, y, z) or Tensor.cat((x, y, z)) (tinygrad
// takes the sequence form too, so `self` may be a list or tuple here).
std::vector<Tensor> tensor_list(py::handle self, const py::args& more) {
  std::vector<Tensor> v;
  if (py::isinstance<Tensor>(self)) {
    v = operands(self.cast<Tensor>(), more);
    return v;
  }
  if (!more.empty())
    throw py::value_error("cat/stack: give the tensors one by one or as one sequence, not both");
  for (py::handle x : self) v.push_back(x.cast<Tensor>());
  if (v.empty()) throw py::value_error("cat/stack: no tensors given");
  return v;
}

} // namespace

void bind_tensor_movement(TensorClass& t) {
  t.def("reshape", [](const Tensor& self, const py::args& shape) {
    return self.reshape(reshape_shape(self, shape));
  });
  t.def("view", [](const Tensor& self, const py::args& shape) {
    return self.reshape(reshape_shape(self, shape));
  });
  t.def("permute", [](const Tensor& self, const py::args& order) {
    return self.permute(shape_from_args(order));
  });
  t.def("expand", [](const Tensor& self, const py::args& shape) {
    return self.expand(shape_from_args(shape));
  });
  t.def("flip",
        [](const Tensor& self, const py::args& axis) { return self.flip(shape_from_args(axis)); });
  t.def("repeat", [](const Tensor& self, const py::args& repeats) {
    return self.repeat(shape_from_args(repeats));
  });
  t.def("tile",
        [](const Tensor& self, const py::args& dims) { return self.tile(shape_from_args(dims)); });
  t.def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0);
  t.def_property_readonly("T", [](const Tensor& self) { return self.transpose(1, 0); });
  t.def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  t.def(
      "unflatten",
      [](const Tensor& self, int64_t dim, py::handle sizes) {
        return self.unflatten(dim, int_list(sizes));
      },
      py::arg("dim"), py::arg("sizes"));
  t.def("squeeze", &Tensor::squeeze, py::arg("dim") = py::none());
  t.def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"));
  t.def(
      "pad",
      [](const Tensor& self, py::handle padding, const std::string& mode, py::handle value) {
        return self.pad(padding_pairs(self, padding), tg::PadMode(mode), to_scalar(value));
      },
      py::arg("padding"), py::arg("mode") = "constant", py::arg("value") = 0.0);
  t.def(
      "shrink",
      [](const Tensor& self, py::handle arg) {
        Pairs ranges;
        int64_t axis = 0;
        for (py::handle r : arg) {
          ranges.push_back(r.is_none() ? std::pair<int64_t, int64_t>{0, self.size(axis)}
                                       : std::pair{r[py::int_(0)].cast<int64_t>(),
                                                   r[py::int_(1)].cast<int64_t>()});
          ++axis;
        }
        return self.shrink(ranges);
      },
      py::arg("arg"));
  t.def(
      "cat",
      [](py::handle self, const py::args& more, int64_t dim) {
        return Tensor::cat(tensor_list(self, more), dim);
      },
      py::kw_only(), py::arg("dim") = 0);
  t.def(
      "stack",
      [](py::handle self, const py::args& more, int64_t dim) {
        return Tensor::stack(tensor_list(self, more), dim);
      },
      py::kw_only(), py::arg("dim") = 0);
  t.def(
      "meshgrid",
      [](const Tensor& self, const py::args& more, const std::string& indexing) {
        return Tensor::meshgrid(operands(self, more), indexing);
      },
      py::kw_only(), py::arg("indexing") = "ij");
  t.def(
      "split",
      [](const Tensor& self, py::handle sizes, int64_t dim) {
        if (py::isinstance<py::int_>(sizes)) return self.split(sizes.cast<int64_t>(), dim);
        return self.split(int_list(sizes), dim);
      },
      py::arg("sizes"), py::arg("dim") = 0);
  t.def("chunk", &Tensor::chunk, py::arg("chunks"), py::arg("dim") = 0);
  t.def(
      "roll",
      [](const Tensor& self, py::handle shifts, py::handle dims) {
        return self.roll(int_list(shifts), axes(dims));
      },
      py::arg("shifts"), py::arg("dims") = py::none());
  t.def(
      "movedim",
      [](const Tensor& self, py::handle source, py::handle destination) {
        return self.movedim(int_list(source), int_list(destination));
      },
      py::arg("source"), py::arg("destination"));
  t.def(
      "repeat_interleave",
      [](const Tensor& self, py::handle repeats, std::optional<int64_t> dim) {
        if (py::isinstance<py::int_>(repeats))
          return self.repeat_interleave(repeats.cast<int64_t>(), dim);
        return self.repeat_interleave(int_list(repeats), dim);
      },
      py::arg("repeats"), py::arg("dim") = py::none());
  t.def("tril", &Tensor::tril, py::arg("diagonal") = 0);
  t.def("triu", &Tensor::triu, py::arg("diagonal") = 0);
  t.def("diag", &Tensor::diag, py::arg("diagonal") = 0);
  t.def(
      "to", [](const Tensor& self, py::handle device) { return self.to(to_device(device)); },
      py::arg("device"));
}

} // namespace tgpy
