"""tinygrad_cpp: tinygrad's Python API over the tinygrad-cpp C++ core.

    import tinygrad_cpp as tg
    x = tg.Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x * 2).sum().backward()
    print(x.grad.numpy())

Everything forwards to the C++ API (the extension _tinygrad_cpp); this file only lays it out
under tinygrad's names (dtypes, Device, Tensor.train, nn, nn.optim, nn.state).
"""
import contextlib as _contextlib

from . import _tinygrad_cpp as _C
from ._tinygrad_cpp import DType, Error, Tensor, TinyJit, __version__


class dtypes:
  """tinygrad's dtypes: dtypes.float32, dtypes.int32, ... and tinygrad's aliases."""
  default_float = _C.dtype_table["float32"]
  default_int = _C.dtype_table["int32"]

  @staticmethod
  def is_float(x): return x.is_float()

  @staticmethod
  def is_int(x): return x.is_int()

  @staticmethod
  def is_unsigned(x): return x.is_unsigned()

  @staticmethod
  def from_np(x): return _C.to_dtype(x)

  @staticmethod
  def fields(): return dict(_C.dtype_table)


for _name, _dt in _C.dtype_table.items(): setattr(dtypes, _name, _dt)
for _alias, _name in {"half": "float16", "float": "float32", "double": "float64", "int": "int32",
                      "long": "int64", "uint": "uint32", "ulong": "uint64", "char": "int8",
                      "uchar": "uint8", "short": "int16", "ushort": "uint16"}.items():
  setattr(dtypes, _alias, _C.dtype_table[_name])


class _DeviceMeta(type):
  @property
  def DEFAULT(cls): return _C.default_device()


class Device(metaclass=_DeviceMeta):
  """Device.DEFAULT: the device tensors go to when none is named (DEV=..., else the registry's
  default)."""
  canonicalize = staticmethod(_C.canonical_device)
  devices = staticmethod(_C.devices)


@_contextlib.contextmanager
def _train(mode: bool = True):
  prev = Tensor.training
  Tensor.training = mode
  try:
    yield
  finally:
    Tensor.training = prev


# `with Tensor.train():` and `with Tensor.test():`, as tinygrad.
Tensor.train = staticmethod(_train)
Tensor.test = staticmethod(lambda: _train(False))

from . import nn  # noqa: E402  (nn needs Tensor above)

__all__ = ["Tensor", "TinyJit", "Device", "dtypes", "DType", "Error", "nn", "__version__"]
