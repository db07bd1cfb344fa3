"""Tensor creation and conversion back to Python, against numpy."""
import numpy as np
import pytest

import tinygrad_cpp as tg
from tinygrad_cpp import Tensor, dtypes


def test_nested_lists_take_default_dtypes():
  t = Tensor([[1, 2], [3, 4]])
  assert t.shape == (2, 2) and t.dtype == dtypes.int32
  assert t.tolist() == [[1, 2], [3, 4]]
  f = Tensor([[1.5, 2], [3, 4]])
  assert f.dtype == dtypes.float32 and f.tolist() == [[1.5, 2.0], [3.0, 4.0]]
  b = Tensor([True, False])
  assert b.dtype == dtypes.bool and b.tolist() == [True, False]
  assert Tensor([]).shape == (0,) and Tensor([]).dtype == dtypes.float32


def test_lists_with_a_dtype():
  assert Tensor([1, 2, 3], dtype=dtypes.float32).tolist() == [1.0, 2.0, 3.0]
  assert Tensor([1.7, -2.7], dtype=dtypes.int32).tolist() == [1, -2]
  assert Tensor([1, 2], dtype="int8").dtype == dtypes.int8
  h = Tensor([1.0, 2.0], dtype=dtypes.half)
  assert h.dtype == dtypes.float16 and h.numpy().dtype == np.float16
  bf = Tensor([1.0, 2.5], dtype=dtypes.bfloat16)
  assert bf.dtype == dtypes.bfloat16 and bf.float().tolist() == [1.0, 2.5]


@pytest.mark.parametrize("npdtype", [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16,
                                     np.int32, np.int64, np.uint32, np.bool_])
def test_numpy_arrays_keep_their_dtype(npdtype, rng):
  a = (rng.standard_normal((3, 4)) * 10).astype(npdtype)
  t = Tensor(a)
  assert t.shape == (3, 4)
  assert t.numpy().dtype == a.dtype
  np.testing.assert_array_equal(t.numpy(), a)


def test_numpy_contiguous_array_is_read_in_place():
  a = np.arange(6, dtype=np.float32).reshape(2, 3)
  t = Tensor(a)
  a[0, 0] = 42.0  # the tensor reads the array's memory (zero copy)
  assert t.numpy()[0, 0] == 42.0
  del a  # the tensor keeps the array alive
  assert (t + 1).tolist() == [[43.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_numpy_views_are_copied():
  base = np.arange(12, dtype=np.float32).reshape(3, 4)
  view = base[:, ::2]  # not C-contiguous
  t = Tensor(view)
  base[0, 0] = -1
  np.testing.assert_array_equal(t.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2])
  ro = np.arange(4, dtype=np.int32)
  ro.flags.writeable = False
  assert Tensor(ro).tolist() == [0, 1, 2, 3]


def test_scalars_and_bytes():
  assert Tensor(3).shape == () and Tensor(3).dtype == dtypes.int32 and Tensor(3).item() == 3
  assert Tensor(2.5).dtype == dtypes.float32 and Tensor(2.5).item() == 2.5
  assert Tensor(True).item() is True
  assert Tensor(np.float64(1.25)).dtype == dtypes.float64
  assert Tensor(b"\x01\x02\xff").tolist() == [1, 2, 255]
  assert Tensor(2**64 - 1, dtype=dtypes.uint64).item() == 2**64 - 1
  assert Tensor(Tensor([1, 2])).tolist() == [1, 2]


def test_creation_functions_take_shape_both_ways():
  for shape in [(2, 3), [2, 3]]:
    assert Tensor.zeros(shape).shape == (2, 3)
  assert Tensor.zeros(2, 3).numpy().sum() == 0
  assert Tensor.ones(2, 3, dtype=dtypes.int32).tolist() == [[1, 1, 1], [1, 1, 1]]
  assert Tensor.empty(4, 5).shape == (4, 5)
  assert Tensor.full((2, 2), 7).tolist() == [[7, 7], [7, 7]]
  assert Tensor.full((2,), 1.5).dtype == dtypes.float32
  assert Tensor.full(3, 2, dtype=dtypes.float16).dtype == dtypes.float16
  np.testing.assert_array_equal(Tensor.eye(3).numpy(), np.eye(3, dtype=np.float32))
  np.testing.assert_array_equal(Tensor.eye(2, 4).numpy(), np.eye(2, 4, dtype=np.float32))


def test_arange_and_linspace():
  assert Tensor.arange(5).tolist() == [0, 1, 2, 3, 4] and Tensor.arange(5).dtype == dtypes.int32
  assert Tensor.arange(2, 8, 2).tolist() == [2, 4, 6]
  np.testing.assert_allclose(Tensor.arange(0, 1, 0.25).numpy(), np.arange(0, 1, 0.25, dtype=np.float32))
  assert Tensor.arange(0, 1, 0.25).dtype == dtypes.float32
  assert Tensor.arange(5, dtype=dtypes.float32).dtype == dtypes.float32
  assert Tensor.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
  assert Tensor.arange(2**31, 2**31 + 3).dtype == dtypes.int64
  assert Tensor.arange(2**31, 2**31 + 3).tolist() == [2**31, 2**31 + 1, 2**31 + 2]
  np.testing.assert_allclose(Tensor.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5, dtype=np.float32))


def test_like_functions():
  x = Tensor([[1, 2, 3]], dtype=dtypes.int16)
  assert Tensor.zeros_like(x).dtype == dtypes.int16 and x.zeros_like().tolist() == [[0, 0, 0]]
  assert x.ones_like(dtype=dtypes.float32).dtype == dtypes.float32
  assert x.full_like(9).tolist() == [[9, 9, 9]]
  assert x.empty_like().shape == (1, 3)
  y = Tensor.ones(100, 100)
  r = y.rand_like().numpy()
  assert r.shape == (100, 100) and 0 <= r.min() and r.max() < 1


def test_random_functions_are_seeded():
  Tensor.manual_seed(7)
  a = Tensor.rand(64).numpy()
  Tensor.manual_seed(7)
  b = Tensor.rand(64).numpy()
  np.testing.assert_array_equal(a, b)
  n = Tensor.randn(4000).numpy()
  assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
  i = Tensor.randint(500, low=3, high=6).numpy()
  assert i.dtype == np.int32 and i.min() >= 3 and i.max() < 6
  u = Tensor.uniform(1000, low=-2.0, high=-1.0).numpy()
  assert u.min() >= -2 and u.max() < -1
  nm = Tensor.normal(4000, mean=3.0, std=0.5).numpy()
  assert abs(nm.mean() - 3) < 0.1
  assert sorted(Tensor.randperm(6).tolist()) == list(range(6))
  assert Tensor.kaiming_uniform(8, 4).shape == (8, 4) and Tensor.glorot_uniform(3, 5).shape == (3, 5)


def test_properties_and_python_protocols():
  t = Tensor.ones(2, 3, 4)
  assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
  assert t.size() == (2, 3, 4) and t.size(1) == 3
  assert t.element_size() == 4 and t.nbytes() == 96
  assert t.device == tg.Device.DEFAULT
  assert "shape=(2, 3, 4)" in repr(t)
  rows = list(Tensor([[1, 2], [3, 4]]))
  assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
  np.testing.assert_array_equal(np.asarray(Tensor([1.0, 2.0])), np.array([1.0, 2.0], dtype=np.float32))
  assert Tensor([[2.5]]).item() == 2.5
  with pytest.raises(TypeError):
    bool(Tensor([1]))


def test_realize_many_and_returns_self():
  a, b = Tensor([1, 2]) + 1, Tensor([3]) * 2
  assert a.realize(b) is not None
  assert a.tolist() == [2, 3] and b.tolist() == [6]


def test_dtypes_and_device():
  assert dtypes.float == dtypes.float32 and dtypes.half == dtypes.float16 and dtypes.int == dtypes.int32
  assert dtypes.default_float == dtypes.float32 and dtypes.default_int == dtypes.int32
  assert dtypes.int8.min == -128 and dtypes.int32.max == 2**31 - 1 and dtypes.bool.max is True
  assert dtypes.float32.itemsize == 4 and dtypes.float64.name == "float64"
  assert dtypes.is_float(dtypes.float16) and dtypes.is_int(dtypes.uint8) and dtypes.is_unsigned(dtypes.uint8)
  assert not dtypes.is_float(dtypes.int32)
  assert {dtypes.float32: 1}[dtypes.float] == 1
  assert dtypes.from_np(np.float64) == dtypes.float64
  assert isinstance(tg.Device.DEFAULT, str) and tg.Device.DEFAULT in tg.Device.devices()
  assert tg.__version__.count(".") == 2


def test_module_main_prints_version_and_devices():
  import subprocess
  import sys
  out = subprocess.run([sys.executable, "-m", "tinygrad_cpp"], capture_output=True, text=True, check=True).stdout
  assert f"tinygrad_cpp {tg.__version__}" in out
  assert "devices: " in out and tg.Device.DEFAULT in out.split("devices: ")[1]
