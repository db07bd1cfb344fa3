"""The PyTorch ops tinygrad lacks, through the bindings, against numpy."""
import numpy as np
import pytest

from tinygrad_cpp import Tensor


@pytest.mark.parametrize("name,ref,lo,hi", [
  ("log1p", np.log1p, -0.9, 3), ("expm1", np.expm1, -3, 3), ("log10", np.log10, 0.1, 9),
  ("asinh", np.arcsinh, -3, 3), ("atanh", np.arctanh, -0.9, 0.9), ("acosh", np.arccosh, 1, 9),
  ("quick_gelu", lambda x: x / (1 + np.exp(-1.702 * x)), -3, 3),
  ("frac", lambda x: x - np.trunc(x), -5, 5),
])
def test_unary_math(name, ref, lo, hi, rng):
  x = rng.uniform(lo, hi, (6, 5)).astype(np.float32)
  np.testing.assert_allclose(getattr(Tensor(x), name)().numpy(), ref(x), rtol=1e-5, atol=1e-6)


def test_binary_math(rng):
  a = rng.uniform(-3, 3, (4, 5)).astype(np.float32)
  b = rng.uniform(0.5, 3, (4, 5)).astype(np.float32) * np.sign(rng.uniform(-1, 1, (4, 5))).astype(np.float32)
  ta, tb = Tensor(a), Tensor(b)
  np.testing.assert_allclose(ta.atan2(tb).numpy(), np.arctan2(a, b), atol=1e-5)
  np.testing.assert_allclose(ta.fmod(tb).numpy(), np.fmod(a, b), atol=1e-5)
  np.testing.assert_allclose(ta.fmod(2).numpy(), np.fmod(a, 2), atol=1e-5)
  np.testing.assert_allclose(ta.logaddexp(tb).numpy(), np.logaddexp(a, b), atol=1e-5)
  np.testing.assert_allclose(ta.hypot(tb).numpy(), np.hypot(a, b), rtol=1e-5)
  np.testing.assert_allclose(ta.abs().xlogy(tb.abs()).numpy(), np.abs(a) * np.log(np.abs(b)), atol=1e-5)
  lo, hi = Tensor(np.full((1, 5), -1, np.float32)), Tensor(np.full((4, 1), 1, np.float32))
  np.testing.assert_allclose(ta.clamp(lo, hi).numpy(), np.clip(a, -1, 1))
  assert ta.isclose(ta + 1e-7).numpy().all()
  assert not ta.isclose(ta + 1).numpy().any()
  assert ta.allclose(Tensor(a.copy()))


def test_reductions(rng):
  x = rng.uniform(-3, 3, (4, 6)).astype(np.float32)
  t = Tensor(x)
  np.testing.assert_allclose(t.norm().numpy(), np.linalg.norm(x), rtol=1e-5)
  np.testing.assert_allclose(t.norm(p=1, dim=1).numpy(), np.abs(x).sum(1), rtol=1e-5)
  np.testing.assert_allclose(t.matrix_norm("fro").numpy(), np.linalg.norm(x, "fro"), rtol=1e-5)
  np.testing.assert_allclose(t.quantile(0.3, dim=1).numpy(), np.quantile(x, 0.3, axis=1), rtol=1e-5)
  values, indices = t.median(dim=1)
  srt = np.sort(x, axis=1)
  np.testing.assert_allclose(values.numpy(), srt[:, (x.shape[1] - 1) // 2])
  assert indices.numpy().shape == (4,)
  y = x.copy()
  y[1, 2] = np.nan
  np.testing.assert_allclose(Tensor(y).nansum().numpy(), np.nansum(y), rtol=1e-5)
  assert Tensor(np.array([0, 1, 0, 3])).count_nonzero().item() == 2
  np.testing.assert_allclose(t.logcumsumexp(axis=1).numpy(), np.logaddexp.accumulate(x, axis=1), rtol=1e-5)
  np.testing.assert_allclose(t.diff().numpy(), np.diff(x), atol=1e-6)


def test_linear_algebra(rng):
  a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
  b = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
  np.testing.assert_allclose(Tensor(a[:, :3]).trace().numpy(), np.trace(a[:, :3]), rtol=1e-6)
  np.testing.assert_allclose(Tensor(a[0]).outer(Tensor(b[:, 0])).numpy(), np.outer(a[0], b[:, 0]), rtol=1e-6)
  np.testing.assert_allclose(Tensor(a).kron(Tensor(b)).numpy(), np.kron(a, b), rtol=1e-6)
  u, v = rng.uniform(-1, 1, (5, 3)).astype(np.float32), rng.uniform(-1, 1, (5, 3)).astype(np.float32)
  np.testing.assert_allclose(Tensor(u).cross(Tensor(v)).numpy(), np.cross(u, v), atol=1e-6)
  np.testing.assert_allclose(Tensor(a).tensordot(Tensor(b), dims=1).numpy(), np.tensordot(a, b, 1), atol=1e-6)
  x, y = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32), rng.uniform(-1, 1, (2, 4, 5)).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).bmm(Tensor(y)).numpy(), x @ y, atol=1e-6)
  d = np.sqrt(((u[:, None, :] - v[None, :, :]) ** 2).sum(-1))
  np.testing.assert_allclose(Tensor(u).cdist(Tensor(v)).numpy(), d, atol=1e-5)


def test_shape_and_search(rng):
  x = np.arange(24, dtype=np.float32).reshape(4, 6)
  t = Tensor(x)
  np.testing.assert_array_equal(t.rot90().numpy(), np.rot90(x))
  np.testing.assert_array_equal(t.diagonal(1).numpy(), np.diagonal(x, 1))
  y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  np.testing.assert_array_equal(Tensor(y).diagonal(-1, 2, 1).numpy(), np.diagonal(y, -1, 2, 1))
  np.testing.assert_array_equal(t.narrow(1, 2, 3).numpy(), x[:, 2:5])
  assert [u.numpy().tolist() for u in t.unbind(0)] == [r.tolist() for r in x]
  np.testing.assert_array_equal(Tensor(np.arange(8, dtype=np.float32)).unfold(0, 3, 2).numpy(),
                                np.array([[0, 1, 2], [2, 3, 4], [4, 5, 6]], np.float32))
  seq = np.array([1, 3, 5, 7], np.float32)
  vals = np.array([0, 3, 6, 9], np.float32)
  np.testing.assert_array_equal(Tensor(seq).searchsorted(Tensor(vals)).numpy(), np.searchsorted(seq, vals))
  np.testing.assert_array_equal(Tensor(vals).bucketize(Tensor(seq)).numpy(), np.searchsorted(seq, vals))
  z = np.array([[0, 1], [2, 0]], np.float32)
  np.testing.assert_array_equal(Tensor(z).nonzero().numpy(), np.argwhere(z))
  base = Tensor(np.zeros((3, 2), np.float32))
  src = Tensor(np.ones((2, 2), np.float32))
  got = base.index_add(0, Tensor(np.array([0, 0], np.int32)), src, alpha=2).numpy()
  np.testing.assert_array_equal(got, np.array([[4, 4], [0, 0], [0, 0]], np.float32))


def test_nn_functional(rng):
  x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
  t = Tensor(x)
  np.testing.assert_allclose(t.normalize(dim=1).numpy(), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5)
  e = np.exp(-x)
  np.testing.assert_allclose(t.softmin(axis=1).numpy(), e / e.sum(1, keepdims=True), rtol=1e-5)
  a, b = x[:, :2], x[:, 2:]
  np.testing.assert_allclose(t.glu(dim=1).numpy(), a / (1 + np.exp(-b)), rtol=1e-5)
  cs = (x * x[::-1]).sum(1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(x[::-1], axis=1))
  np.testing.assert_allclose(t.cosine_similarity(Tensor(x[::-1].copy())).numpy(), cs, rtol=1e-5)
  img = np.arange(2 * 8 * 2 * 3, dtype=np.float32).reshape(2, 8, 2, 3)
  ps = Tensor(img).pixel_shuffle(2)
  assert ps.shape == (2, 2, 4, 6)
  np.testing.assert_array_equal(ps.pixel_unshuffle(2).numpy(), img)
  d = x - x[::-1]
  hub = np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5).mean()
  np.testing.assert_allclose(t.huber_loss(Tensor(x[::-1].copy())).numpy(), hub, rtol=1e-5)


def test_bad_arguments_raise_with_the_core_message():
  with pytest.raises(Exception, match="SVD|singular"):
    Tensor(np.ones((2, 2), np.float32)).matrix_norm("nuc")
  with pytest.raises(Exception):
    Tensor(np.ones((2, 3), np.float32)).cross(Tensor(np.ones((2, 3), np.float32)), dim=0)
