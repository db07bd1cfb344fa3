// The scatter-add (a SCATTER_ADD node: one kernel for the base, one that adds the values in
// order, see core/schedule/rangeify.hpp) and the gradient of a gather as a scatter-add: the
// one-hot form of a gather differentiates into a dense reduce over every (row, index, column),
// the scatter-add touches only (index, column).
#include <numeric>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg::detail {

namespace {

// `dim` first, the other axes in order.
Shape dim_first(int64_t ndim, int64_t dim) {
  Shape perm{dim};
  for (int64_t i = 0; i < ndim; ++i)
    if (i != dim) perm.push_back(i);
  return perm;
}

Shape inverse_of(const Shape& perm) {
  Shape inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

// `t` with `dim` first and the other axes flattened: (t.size(dim), the rest).
Tensor rows_by(const Tensor& t, int64_t dim) {
  const int64_t n = t.size(dim);
  const int64_t rest = n == 0 ? 0 : t.numel() / n;
  Tensor p = t.permute(dim_first(t.ndim(), dim));
  if (n == 0) {
    int64_t r = 1;
    for (int64_t i = 0; i < t.ndim(); ++i)
      if (i != dim) r *= t.size(i);
    return p.reshape({0, r});
  }
  return p.reshape({n, rest});
}

} // namespace

Tensor scatter_add_along(const Tensor& base, int64_t dim, const Tensor& index,
                         const Tensor& values) {
  if (!index.dtype().is_int())
    throw Error("scatter_add: index tensor has dtype " + index.dtype().name() +
                "; indices must be an integer dtype");
  if (index.shape() != values.shape() || index.ndim() != base.ndim() || base.ndim() == 0)
    throw Error("scatter_add: index " + shape_str(index.shape()) + " and values " +
                shape_str(values.shape()) + " must have one shape, of base " +
                shape_str(base.shape()) + "'s rank (at least 1)");
  for (int64_t i = 0; i < base.ndim(); ++i)
    if (i != dim && index.size(i) != base.size(i))
      throw Error("scatter_add: index " + shape_str(index.shape()) + " must have base " +
                  shape_str(base.shape()) + "'s size off dimension " + std::to_string(dim));
  const std::string& dev = base.device();
  const Tensor b = rows_by(base, dim);
  const Tensor r = rows_by(index.to(dev), dim);
  const Tensor v = rows_by(values.to(dev).cast(base.dtype()), dim);
  Tensor out =
      make(UOp::make(Ops::SCATTER_ADD, base.dtype(), {b.uop(), r.uop(), v.uop()}), {&b, &r, &v});
  Shape permuted;
  const Shape perm = dim_first(base.ndim(), dim);
  for (const sint& a : perm) permuted.push_back(base.size(static_cast<int64_t>(a)));
  out = out.reshape(permuted).permute(inverse_of(perm));
  if (!base.dtype().is_float()) return out;
  // d(base) = g; d(values) = g at the rows they were added to (0 where none: out of range).
  return with_gradient(
      out, {base, index, values}, "scatter_add:" + std::to_string(dim),
      [dim](const Tensor& g, const std::vector<Tensor>& in) {
        const int64_t n = in[0].size(dim);
        const Tensor& idx = in[1];
        const Tensor wrapped = idx.lt(0).where(idx.add(n), idx);
        return std::vector<Tensor>{g, Tensor(), g.gather(dim, wrapped).cast(in[2].dtype())};
      });
}

Tensor gather_with_scatter_gradient(const Tensor& value, const Tensor& x, int64_t dim,
                                    const Tensor& index) {
  if (!x.dtype().is_float()) return value;
  return with_gradient(value, {x, index}, "gather_rows:" + std::to_string(dim),
                       [dim](const Tensor& g, const std::vector<Tensor>& in) {
                         const Tensor &x0 = in[0], &idx = in[1];
                         // g: x's axes before dim, then idx's, then x's after dim.
                         Shape flat, along;
                         for (int64_t i = 0; i < dim; ++i) flat.push_back(x0.size(i));
                         flat.push_back(idx.numel());
                         for (int64_t i = dim + 1; i < x0.ndim(); ++i) flat.push_back(x0.size(i));
                         along.assign(flat.size(), 1);
                         along[static_cast<size_t>(dim)] = idx.numel();
                         const Tensor gf = g.reshape(flat);
                         const Tensor rows = idx.reshape(along).expand(flat);
                         return std::vector<Tensor>{
                             scatter_add_along(Tensor::zeros_like(x0), dim, rows, gf), Tensor()};
                       });
}

Tensor gather_elements_with_scatter_gradient(const Tensor& value, const Tensor& x, int64_t dim,
                                             const Tensor& index) {
  if (!x.dtype().is_float()) return value;
  return with_gradient(value, {x, index}, "gather_elements:" + std::to_string(dim),
                       [dim](const Tensor& g, const std::vector<Tensor>& in) {
                         // A negative index selected nothing: its row is out of range here too.
                         const Tensor& idx = in[1];
                         const Tensor rows = idx.lt(0).where(in[0].size(dim), idx);
                         return std::vector<Tensor>{
                             scatter_add_along(Tensor::zeros_like(in[0]), dim, rows, g), Tensor()};
                       });
}

} // namespace tg::detail
