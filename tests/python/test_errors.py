"""Bad input raises a Python exception carrying the core's message; nothing crashes."""
import numpy as np
import pytest

import tinygrad_cpp as tg
from tinygrad_cpp import Tensor, dtypes


def test_error_type_is_runtime_value_and_index_error():
  assert issubclass(tg.Error, RuntimeError) and issubclass(tg.Error, ValueError) and issubclass(tg.Error, IndexError)


def test_bad_shapes_carry_the_core_message():
  with pytest.raises(tg.Error, match="reshape"):
    Tensor.ones(2, 3).reshape(4, 4)
  with pytest.raises(tg.Error):
    Tensor.ones(2, 3) + Tensor.ones(4)
  with pytest.raises(tg.Error):
    Tensor.ones(2, 3) @ Tensor.ones(2, 3)
  with pytest.raises(tg.Error):
    Tensor.cat(Tensor.ones(2, 3), Tensor.ones(2, 4))
  with pytest.raises(ValueError):
    Tensor.zeros(2, -3)
  with pytest.raises(tg.Error):
    Tensor.ones(3).permute(1, 0)


def test_index_out_of_range():
  with pytest.raises(IndexError, match="zero-dimensional"):
    Tensor(3.14).cat(Tensor(3.14))
  with pytest.raises(IndexError):
    Tensor.ones(3).cumsum(axis=1)
  t = Tensor([1, 2, 3])
  with pytest.raises(tg.Error, match="3"):
    t[3]
  with pytest.raises(tg.Error):
    t[-4]
  with pytest.raises(tg.Error):
    t[0, 0]
  with pytest.raises(tg.Error):
    Tensor.ones(2, 2).sum(axis=2)


def test_wrong_types_raise_type_error():
  with pytest.raises(TypeError):
    Tensor(None)
  with pytest.raises(TypeError):
    Tensor(["a", "b"])
  with pytest.raises(TypeError):
    Tensor([1.0])[1.5]
  with pytest.raises(TypeError):
    Tensor([1.0]).reshape("x")
  with pytest.raises(TypeError):
    Tensor.zeros(2, bogus=1)
  with pytest.raises(ValueError):
    Tensor.kaiming_uniform((-3, 3), 3)
  with pytest.raises(TypeError):
    Tensor([1.0]) + object()


def test_bad_values():
  with pytest.raises(tg.Error, match="dtype"):
    Tensor([1.0], dtype="float13")
  with pytest.raises(tg.Error):
    Tensor([1.0, 2.0]).item()
  with pytest.raises(tg.Error, match="numpy has no bfloat16"):
    Tensor([1.0], dtype=dtypes.bfloat16).numpy()
  with pytest.raises(ValueError, match="rounding_mode"):
    Tensor([1]).div(2, rounding_mode="up")
  with pytest.raises(tg.Error):
    Tensor([1.0]).to("NOSUCHDEVICE").realize()
  with pytest.raises(tg.Error):
    tg.nn.state.safe_load("/nonexistent/file.safetensors")


def test_the_interpreter_survives_a_run_of_errors():
  for bad in [lambda: Tensor.ones(2).reshape(3), lambda: Tensor([1])[5], lambda: Tensor.ones(2, 2).expand(3, 3)]:
    with pytest.raises(tg.Error):
      bad()
  assert (Tensor([1.0]) + 1).tolist() == [2.0]


@pytest.mark.parametrize("bad", [
  lambda: Tensor([1, 2])[2**62], lambda: Tensor.ones(2, 2)[:, :, None, None, 0],
  lambda: Tensor.ones(2).reshape(-1, -1), lambda: Tensor.ones(2).permute(0, 0), lambda: Tensor.ones(4).split(0),
  lambda: Tensor.ones(2, 2).conv2d(Tensor.ones(1, 1, 3, 3)), lambda: Tensor.ones(1, 1, 2, 2).max_pool2d(3),
  lambda: Tensor.ones(3).gather(0, Tensor([[0]])), lambda: Tensor.ones(3).shrink(((2, 1),)),
  lambda: Tensor.ones(3).topk(5), lambda: Tensor.ones(2, 3).transpose(0, 5), lambda: Tensor.randint(3, low=5, high=1),
  lambda: Tensor.ones(2).multinomial(5), lambda: Tensor.ones(3).one_hot(2), lambda: Tensor.ones(3).pad(((1, 1), (1, 1))),
])
def test_core_errors_reach_python(bad):
  with pytest.raises(tg.Error) as e:
    bad()
  assert len(str(e.value)) > 10  # the core's message, not a bare type


def test_error_kinds_are_also_the_builtin_python_expects():
  with pytest.raises(NotImplementedError, match="typo"):
    Tensor.ones(3, 3).pad((1, 0), mode="typo")
  with pytest.raises(OverflowError):
    Tensor.arange(129, dtype=dtypes.int8)
  with pytest.raises(TypeError, match="scatter_reduce"):
    Tensor.ones(4).scatter(dim=0, index=Tensor([0]), src=Tensor.ones(1), reduce="add")
  with pytest.raises(AttributeError):
    Tensor([1.0]).sum(dtype="")
  with pytest.raises(ValueError):
    Tensor([1, 2]).one_hot(-1)
  # Every kind is a tinygrad_cpp.Error too.
  for bad in [lambda: Tensor.ones(3).pad((1, 0), mode="typo"), lambda: Tensor.arange(129, dtype=dtypes.int8),
              lambda: Tensor([1.0]).sum(dtype="")]:
    with pytest.raises(tg.Error):
      bad()
