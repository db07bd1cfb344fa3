#pragma once
// The binding files, one per area of the API; module.cpp calls each once. Binding a further
// Tensor method is one line in the file of its area, e.g.
//   t.def("log1p", &Tensor::log1p);
// (an overloaded method picks its form with tgpy::unary/binary below or a lambda).
#include "convert.hpp"

namespace tgpy {

using TensorClass = py::class_<Tensor>;

void bind_dtype_device(py::module_& m);       // DType, dtypes, Device, the error type
void bind_tensor_create(TensorClass& t);      // constructor, creation functions, conversion
void bind_tensor_elementwise(TensorClass& t); // unary and binary ops, operators
void bind_tensor_reduce(TensorClass& t);      // reductions, scans, sorting
void bind_tensor_movement(TensorClass& t);    // views, cat/stack, split, pad
void bind_tensor_indexing(TensorClass& t);    // __getitem__, __setitem__, gather/scatter
void bind_tensor_nn(TensorClass& t);          // functional nn: conv, pool, norms, losses
void bind_tensor_torch(TensorClass& t);       // the PyTorch ops tinygrad lacks
void bind_autograd(TensorClass& t);           // requires_grad, grad, backward, gradient
void bind_jit(py::module_& m);                // TinyJit
void bind_nn(py::module_& m);                 // layers
void bind_optim(py::module_& m);              // optimizers
void bind_state(py::module_& m);              // safetensors, gguf, state dicts

// A method taking one tensor operand (a Tensor, a scalar or data) with tinygrad's `reverse`.
template <class F> auto binary(F f) {
  return [f](const Tensor& self, py::handle x, bool reverse) {
    const Tensor o = operand(self, x);
    return reverse ? (o.*f)(self) : (self.*f)(o);
  };
}
using BinaryMethod = Tensor (Tensor::*)(const Tensor&) const;

} // namespace tgpy
