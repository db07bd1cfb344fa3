"""Elementwise ops, operators, reductions, movement and indexing, against numpy."""
import math
import numpy as np
import pytest

from tinygrad_cpp import Tensor, dtypes

UNARY = {
  "neg": np.negative, "abs": np.abs, "exp": np.exp, "exp2": np.exp2, "sqrt": lambda x: np.sqrt(np.abs(x)),
  "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0),
  "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "square": np.square, "trunc": np.trunc, "floor": np.floor,
  "ceil": np.ceil, "round": np.round, "sign": np.sign, "sinh": np.sinh, "cosh": np.cosh, "atan": np.arctan,
  "reciprocal": lambda x: 1 / x, "silu": lambda x: x / (1 + np.exp(-x)),
  "softsign": lambda x: x / (1 + np.abs(x)), "relu6": lambda x: np.clip(x, 0, 6),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, rng):
  x = rng.uniform(-3, 3, (5, 7)).astype(np.float32)
  if name == "sqrt":
    got = Tensor(x).abs().sqrt().numpy()
  else:
    got = getattr(Tensor(x), name)().numpy()
  np.testing.assert_allclose(got, UNARY[name](x), rtol=1e-5, atol=1e-5)


def test_log_family(rng):
  x = rng.uniform(0.1, 5, (17,)).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).log().numpy(), np.log(x), rtol=1e-5)
  np.testing.assert_allclose(Tensor(x).log2().numpy(), np.log2(x), rtol=1e-5)
  np.testing.assert_allclose(Tensor(x).rsqrt().numpy(), 1 / np.sqrt(x), rtol=1e-5)
  y = rng.uniform(-0.9, 0.9, (9,)).astype(np.float32)
  np.testing.assert_allclose(Tensor(y).asin().numpy(), np.arcsin(y), atol=1e-4)
  np.testing.assert_allclose(Tensor(y).acos().numpy(), np.arccos(y), atol=1e-4)


def test_parameterized_activations(rng):
  x = rng.uniform(-3, 3, (40,)).astype(np.float32)
  t = Tensor(x)
  np.testing.assert_allclose(t.leaky_relu(0.2).numpy(), np.where(x > 0, x, 0.2 * x), rtol=1e-6)
  np.testing.assert_allclose(t.leaky_relu(neg_slope=0.1).numpy(), np.where(x > 0, x, 0.1 * x), rtol=1e-6)
  np.testing.assert_allclose(t.elu(alpha=0.5).numpy(), np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(t.hardtanh(-0.5, 0.5).numpy(), np.clip(x, -0.5, 0.5))
  np.testing.assert_allclose(t.clip(-1, 2).numpy(), np.clip(x, -1, 2))
  np.testing.assert_allclose(t.clamp(min_=0).numpy(), np.maximum(x, 0))
  np.testing.assert_allclose(t.clamp(max_=0.5).numpy(), np.minimum(x, 0.5))
  np.testing.assert_allclose(t.softplus().numpy(), np.log1p(np.exp(x)), rtol=1e-5, atol=1e-6)
  tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
  np.testing.assert_allclose(t.gelu().numpy(), tanh_gelu, rtol=1e-4, atol=1e-5)
  assert Tensor([1.0, float("inf"), float("nan")]).isinf().tolist() == [False, True, False]
  assert Tensor([1.0, float("inf"), float("nan")]).isnan().tolist() == [False, False, True]


BINARY = [("add", np.add, "__add__"), ("sub", np.subtract, "__sub__"), ("mul", np.multiply, "__mul__"),
          ("div", np.divide, "__truediv__"), ("maximum", np.maximum, None), ("minimum", np.minimum, None)]


@pytest.mark.parametrize("name,ref,dunder", BINARY)
def test_binary_tensor_scalar_and_reverse(name, ref, dunder, rng):
  a = rng.uniform(1, 3, (4, 5)).astype(np.float32)
  b = rng.uniform(1, 3, (5,)).astype(np.float32)
  np.testing.assert_allclose(getattr(Tensor(a), name)(Tensor(b)).numpy(), ref(a, b), rtol=1e-6)
  np.testing.assert_allclose(getattr(Tensor(a), name)(2.0).numpy(), ref(a, np.float32(2.0)), rtol=1e-6)
  np.testing.assert_allclose(getattr(Tensor(a), name)(2.0, reverse=True).numpy(), ref(np.float32(2.0), a), rtol=1e-6)
  if dunder:
    np.testing.assert_allclose(getattr(Tensor(a), dunder)(Tensor(b)).numpy(), ref(a, b), rtol=1e-6)


def test_operators_with_scalars_on_both_sides(rng):
  a = rng.uniform(1, 3, (3, 3)).astype(np.float32)
  t = Tensor(a)
  np.testing.assert_allclose((t + 1).numpy(), a + 1)
  np.testing.assert_allclose((1 + t).numpy(), 1 + a)
  np.testing.assert_allclose((2 - t).numpy(), 2 - a)
  np.testing.assert_allclose((2 / t).numpy(), 2 / a, rtol=1e-6)
  np.testing.assert_allclose((t ** 2).numpy(), a ** 2, rtol=1e-6)
  np.testing.assert_allclose((2 ** t).numpy(), 2 ** a, rtol=1e-5)
  np.testing.assert_allclose((-t).numpy(), -a)
  np.testing.assert_allclose((t @ t).numpy(), a @ a, rtol=1e-5)
  np.testing.assert_allclose((t + [1.0, 2.0, 3.0]).numpy(), a + np.array([1, 2, 3], np.float32))
  assert (Tensor([-2.0]) ** 2).tolist() == [4.0]
  assert (Tensor([-2.0]) ** 3).tolist() == [-8.0]


def test_integer_operators():
  a = Tensor([7, -7, 12, 5])
  assert (a // 2).tolist() == [3, -4, 6, 2]
  assert (a % 3).tolist() == [1, 2, 0, 2]
  assert (a & 6).tolist() == list(np.array([7, -7, 12, 5]) & 6)
  assert (a | 1).tolist() == list(np.array([7, -7, 12, 5]) | 1)
  assert (a ^ 3).tolist() == list(np.array([7, -7, 12, 5]) ^ 3)
  assert (Tensor([1, 2]) << 3).tolist() == [8, 16]
  assert (Tensor([16, 32]) >> 2).tolist() == [4, 8]
  assert (~Tensor([0, 5])).tolist() == [-1, -6]
  assert Tensor([7, -7]).div(2, rounding_mode="trunc").tolist() == [3, -3]
  assert Tensor([7, -7]).div(2, rounding_mode="floor").tolist() == [3, -4]
  assert (Tensor([1, 2]) / 2).dtype == dtypes.float32
  assert (Tensor([1, 2], dtype=dtypes.float16) * 2).dtype == dtypes.float16  # an int keeps half


def test_comparisons_and_where():
  a = Tensor([1, 2, 3])
  assert (a < 2).tolist() == [True, False, False]
  assert (a <= 2).tolist() == [True, True, False]
  assert (a > 2).tolist() == [False, False, True]
  assert (a >= 2).tolist() == [False, True, True]
  assert (a == 2).tolist() == [False, True, False]
  assert (a != 2).tolist() == [True, False, True]
  assert (2 < a).tolist() == [False, False, True]
  assert (a == 2).where(a, 0).tolist() == [0, 2, 0]
  assert (a > 1).where(1.5, -1.5).tolist() == [-1.5, 1.5, 1.5]
  assert (a > 1).where(Tensor([9, 9, 9]), a).tolist() == [1, 9, 9]
  assert Tensor([True, False]).logical_not().tolist() == [False, True]


def test_in_place_operators_assign():
  t = Tensor([1.0, 2.0, 3.0]).realize()
  alias = t
  t += 1
  assert alias.tolist() == [2.0, 3.0, 4.0] and t is alias
  t *= Tensor([2.0, 2.0, 2.0])
  t -= 1
  t /= 2
  assert alias.tolist() == [1.5, 2.5, 3.5]
  i = Tensor([8, 9]).realize()
  i //= 2
  i %= 3
  assert i.tolist() == [1, 1]


def test_casts():
  f = Tensor([1.7, -2.2, 3.5])
  assert f.int().tolist() == [1, -2, 3] and f.int().dtype == dtypes.int32
  assert f.cast(dtypes.int8).dtype == dtypes.int8
  assert f.cast("float16").dtype == dtypes.float16
  assert f.half().dtype == dtypes.float16 and f.double().dtype == dtypes.float64
  assert f.bool().tolist() == [True, True, True] and f.long().dtype == dtypes.int64
  assert Tensor([1.0]).bitcast(dtypes.uint32).tolist() == [0x3F800000]
  assert Tensor([1, 0]).float().tolist() == [1.0, 0.0]


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(axis, keepdim, rng):
  x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
  t = Tensor(x)
  for name, ref in [("sum", np.sum), ("max", np.max), ("min", np.min), ("mean", np.mean), ("prod", np.prod)]:
    got = getattr(t, name)(axis=axis, keepdim=keepdim).numpy()
    np.testing.assert_allclose(got, ref(x, axis=axis, keepdims=keepdim), rtol=1e-5, atol=1e-6, err_msg=name)
  np.testing.assert_allclose(t.var(axis=axis, keepdim=keepdim).numpy(), np.var(x, axis=axis, keepdims=keepdim, ddof=1), rtol=1e-4)
  np.testing.assert_allclose(t.std(axis=axis, keepdim=keepdim, correction=0).numpy(), np.std(x, axis=axis, keepdims=keepdim), rtol=1e-4)


def test_more_reductions(rng):
  x = rng.uniform(-2, 2, (3, 5)).astype(np.float32)
  t = Tensor(x)
  assert t.argmax().item() == int(np.argmax(x))
  assert t.argmax(axis=1).tolist() == list(np.argmax(x, axis=1))
  assert t.argmin(axis=0, keepdim=True).shape == (1, 5)
  assert Tensor([[True, False]]).any().item() is True and Tensor([[True, False]]).all().item() is False
  np.testing.assert_allclose(t.sum(dtype=dtypes.float64).numpy(), x.astype(np.float64).sum(), rtol=1e-6)
  assert Tensor([1, 2, 3], dtype=dtypes.int8).sum().dtype == dtypes.int64
  e = np.exp(x - x.max(axis=-1, keepdims=True))
  np.testing.assert_allclose(t.softmax().numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5)
  np.testing.assert_allclose(t.log_softmax(axis=0).numpy(), x - np.log(np.exp(x).sum(0, keepdims=True)), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(t.logsumexp(axis=1).numpy(), np.log(np.exp(x).sum(1)), rtol=1e-5)
  np.testing.assert_allclose(t.cumsum(axis=1).numpy(), np.cumsum(x, axis=1), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(t.cumprod(0).numpy(), np.cumprod(x, axis=0), rtol=1e-5, atol=1e-6)
  v, i = t.cummax(axis=1)
  np.testing.assert_allclose(v.numpy(), np.maximum.accumulate(x, axis=1))
  sv, si = t.sort(dim=1, descending=True)
  np.testing.assert_allclose(sv.numpy(), -np.sort(-x, axis=1))
  assert si.numpy().tolist() == np.argsort(-x, axis=1, kind="stable").tolist()
  tv, ti = t.topk(2)
  np.testing.assert_allclose(tv.numpy(), -np.sort(-x, axis=1)[:, :2])
  assert t.argsort(dim=0).numpy().tolist() == np.argsort(x, axis=0, kind="stable").tolist()
  mv, mi = t.max_dim(1)
  np.testing.assert_allclose(mv.numpy(), x.max(1))
  assert mi.tolist() == list(np.argmax(x, 1))
  vr, mn = t.var_mean(axis=1)
  np.testing.assert_allclose(mn.numpy(), x.mean(1), rtol=1e-5)


def test_matmul_shapes(rng):
  a = rng.standard_normal((2, 3, 4)).astype(np.float32)
  b = rng.standard_normal((4, 5)).astype(np.float32)
  np.testing.assert_allclose(Tensor(a).matmul(Tensor(b)).numpy(), a @ b, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(Tensor(a).dot(Tensor(b)).numpy(), a @ b, rtol=1e-4, atol=1e-5)
  v = rng.standard_normal(4).astype(np.float32)
  np.testing.assert_allclose((Tensor(b.T) @ Tensor(v)).numpy(), b.T @ v, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(Tensor.einsum("ij,jk->ik", Tensor(b.T), Tensor(b)).numpy(), b.T @ b, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(Tensor.einsum("ij,jk->ik", [Tensor(b.T), Tensor(b)]).numpy(), b.T @ b, rtol=1e-4, atol=1e-5)


def test_movement(rng):
  x = rng.standard_normal((2, 3, 4)).astype(np.float32)
  t = Tensor(x)
  np.testing.assert_array_equal(t.reshape(6, 4).numpy(), x.reshape(6, 4))
  np.testing.assert_array_equal(t.reshape((4, -1)).numpy(), x.reshape(4, -1))
  np.testing.assert_array_equal(t.reshape((None, -1)).numpy(), x.reshape(2, -1))
  np.testing.assert_array_equal(t.view(24).numpy(), x.reshape(24))
  np.testing.assert_array_equal(t.permute(2, 0, 1).numpy(), x.transpose(2, 0, 1))
  np.testing.assert_array_equal(t.permute((1, 0, 2)).numpy(), x.transpose(1, 0, 2))
  np.testing.assert_array_equal(t.transpose().numpy(), x.swapaxes(1, 0))
  np.testing.assert_array_equal(t.transpose(-1, -2).numpy(), x.swapaxes(-1, -2))
  np.testing.assert_array_equal(t.flip(0).numpy(), x[::-1])
  np.testing.assert_array_equal(t.flip((0, 2)).numpy(), x[::-1, :, ::-1])
  np.testing.assert_array_equal(t.flatten().numpy(), x.reshape(-1))
  np.testing.assert_array_equal(t.flatten(1).numpy(), x.reshape(2, 12))
  np.testing.assert_array_equal(t.unsqueeze(1).numpy(), x[:, None])
  np.testing.assert_array_equal(t.unsqueeze(1).squeeze(1).numpy(), x)
  np.testing.assert_array_equal(t[:, :1].squeeze().numpy(), x[:, 0])
  np.testing.assert_array_equal(t.expand(3, 2, 3, 4).numpy(), np.broadcast_to(x, (3, 2, 3, 4)))
  np.testing.assert_array_equal(t.repeat(2, 1, 1).numpy(), np.tile(x, (2, 1, 1)))
  np.testing.assert_array_equal(t.shrink(((0, 1), None, (1, 3))).numpy(), x[0:1, :, 1:3])
  np.testing.assert_array_equal(t.pad(((0, 0), (1, 2), None)).numpy(), np.pad(x, ((0, 0), (1, 2), (0, 0))))
  np.testing.assert_array_equal(t.pad((1, 1)).numpy(), np.pad(x, ((0, 0), (0, 0), (1, 1))))
  np.testing.assert_array_equal(t.pad((1, 1), value=5.0).numpy(), np.pad(x, ((0, 0), (0, 0), (1, 1)), constant_values=5))
  np.testing.assert_array_equal(t.pad((2, 1), mode="reflect").numpy(), np.pad(x, ((0, 0), (0, 0), (2, 1)), mode="reflect"))
  np.testing.assert_array_equal(t.unflatten(2, (2, 2)).numpy(), x.reshape(2, 3, 2, 2))
  np.testing.assert_array_equal(t.roll(1, 2).numpy(), np.roll(x, 1, 2))
  np.testing.assert_array_equal(t.movedim(0, 2).numpy(), np.moveaxis(x, 0, 2))
  np.testing.assert_array_equal(t.T.numpy() if t.ndim == 2 else t[0].T.numpy(), x[0].T)
  np.testing.assert_array_equal(Tensor(x[0]).tril().numpy(), np.tril(x[0]))
  np.testing.assert_array_equal(Tensor(x[0]).triu(1).numpy(), np.triu(x[0], 1))
  np.testing.assert_array_equal(t.repeat_interleave(2, dim=1).numpy(), np.repeat(x, 2, axis=1))


def test_cat_stack_split(rng):
  a = rng.standard_normal((2, 3)).astype(np.float32)
  b = rng.standard_normal((2, 3)).astype(np.float32)
  np.testing.assert_array_equal(Tensor(a).cat(Tensor(b)).numpy(), np.concatenate([a, b]))
  np.testing.assert_array_equal(Tensor.cat(Tensor(a), Tensor(b), dim=1).numpy(), np.concatenate([a, b], 1))
  np.testing.assert_array_equal(Tensor.stack(Tensor(a), Tensor(b), dim=1).numpy(), np.stack([a, b], 1))
  np.testing.assert_array_equal(Tensor(a).stack(Tensor(b)).numpy(), np.stack([a, b]))
  np.testing.assert_array_equal(Tensor.stack((Tensor(a), Tensor(b)), dim=2).numpy(), np.stack([a, b], 2))
  np.testing.assert_array_equal(Tensor.cat([Tensor(a), Tensor(b)], dim=1).numpy(), np.concatenate([a, b], 1))
  parts = Tensor(a).split(1, dim=1)
  assert len(parts) == 3 and all(p.shape == (2, 1) for p in parts)
  parts = Tensor(a).split([1, 2], dim=1)
  np.testing.assert_array_equal(parts[1].numpy(), a[:, 1:])
  assert [c.shape for c in Tensor(a).chunk(2, dim=1)] == [(2, 2), (2, 1)]
  xs, ys = Tensor([1, 2]).meshgrid(Tensor([3, 4, 5]))
  assert xs.shape == (2, 3) and ys.tolist() == [[3, 4, 5], [3, 4, 5]]


def test_getitem(rng):
  x = rng.standard_normal((4, 5, 6)).astype(np.float32)
  t = Tensor(x)
  for key in [1, -1, (1, 2), slice(1, 3), (slice(None), 2), (slice(None, None, 2),), (slice(None, None, -1),),
              (Ellipsis, 1), (None, 1), (1, None, Ellipsis, 2), (slice(-3, None), slice(1, -1), slice(0, 6, 4))]:
    np.testing.assert_array_equal(t[key].numpy(), x[key], err_msg=str(key))
  np.testing.assert_array_equal(t[[0, 2]].numpy(), x[[0, 2]])
  np.testing.assert_array_equal(t[:, [1, 3, 4]].numpy(), x[:, [1, 3, 4]])
  np.testing.assert_array_equal(t[Tensor([3, 0])].numpy(), x[[3, 0]])
  np.testing.assert_array_equal(t[Tensor([[1], [2]]), Tensor([0, 4])].numpy(), x[np.array([[1], [2]]), np.array([0, 4])])
  np.testing.assert_array_equal(t[np.array([1, 1])].numpy(), x[[1, 1]])
  np.testing.assert_array_equal(t[np.int64(2)].numpy(), x[2])
  m = x[:, 0, 0] > 0
  np.testing.assert_array_equal(t[:, 0, 0][Tensor(m)].numpy(), x[:, 0, 0][m])


def test_setitem():
  t = Tensor.zeros(3, 4).contiguous().realize()
  t[1] = 5.0
  t[:, 0] = Tensor([1.0, 2.0, 3.0])
  t[2, 1:3] = 7
  ref = np.zeros((3, 4), np.float32)
  ref[1] = 5
  ref[:, 0] = [1, 2, 3]
  ref[2, 1:3] = 7
  np.testing.assert_array_equal(t.numpy(), ref)


def test_gather_scatter_and_masks(rng):
  x = rng.standard_normal((3, 4)).astype(np.float32)
  idx = np.array([[0, 1], [3, 2], [1, 1]])
  np.testing.assert_array_equal(Tensor(x).gather(1, Tensor(idx)).numpy(), np.take_along_axis(x, idx, 1))
  s = Tensor.zeros(3, 4).scatter(1, Tensor([[0], [1], [2]]), Tensor.ones(3, 1)).numpy()
  np.testing.assert_array_equal(s, np.eye(3, 4, dtype=np.float32))
  s2 = Tensor.ones(2, 2).scatter(0, Tensor([[1, 0]]), 3.0, reduce="add").numpy()
  np.testing.assert_array_equal(s2, [[1, 4], [4, 1]])
  m = x > 0
  np.testing.assert_array_equal(Tensor(x).masked_fill(Tensor(m), 0.0).numpy(), np.where(m, 0, x))
  np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(m)).numpy(), x[m])
  np.testing.assert_array_equal(Tensor([0, 2, 1]).one_hot(3).numpy(), np.eye(3)[[0, 2, 1]])
  np.testing.assert_array_equal(Tensor(x).index_select(1, Tensor([3, 0])).numpy(), x[:, [3, 0]])


def test_fixed_length_selection_and_clone():
  t, mask = Tensor([0, 1, 2, 3, 4]), Tensor([True, False, True, False, True])
  np.testing.assert_array_equal(t.masked_select(mask, size=2).numpy(), [0, 2])
  np.testing.assert_array_equal(t.masked_select(mask, size=5, fill_value=-1).numpy(), [0, 2, 4, -1, -1])
  np.testing.assert_array_equal(Tensor([[1, 0], [0, 2]]).nonzero().numpy(), [[0, 0], [1, 1]])
  assert Tensor([1, 0]).nonzero().dtype == dtypes.int32
  np.testing.assert_array_equal(Tensor([1, 0, 2]).nonzero(size=3, fill_value=-1.5).numpy(), [[0], [2], [-1]])
  # A buffer of its own: writing the source after the clone is realized leaves it alone.
  x = Tensor([1.0, 2.0]).realize()
  c = x.clone().realize()
  x.assign(Tensor([5.0, 6.0])).realize()
  np.testing.assert_array_equal(c.numpy(), [1.0, 2.0])


def test_unpool_and_flat_pool_padding(rng):
  x = Tensor(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
  v, i = x.max_pool2d(kernel_size=(2, 2), return_indices=True)
  u = Tensor.max_unpool2d(v, i, kernel_size=(2, 2)).numpy()
  assert u.shape == (1, 2, 6, 6)
  np.testing.assert_array_equal(np.sort(u[u != 0]), np.sort(v.numpy().ravel()))
  # (left, right, top, bottom) as F.pad: the same as padding with -inf first.
  p = x.pad((1, 0, 0, 1), value=-math.inf).max_pool2d(kernel_size=(3, 3)).numpy()
  np.testing.assert_array_equal(x.max_pool2d(kernel_size=(3, 3), padding=(1, 0, 0, 1)).numpy(), p)
  assert x.reshape(1, 1, 2, 6, 6).avg_pool2d(kernel_size=(2, 2, 2)).shape == (1, 1, 1, 3, 3)
