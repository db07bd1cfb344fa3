"""tinygrad.device: Device.DEFAULT and Device[name] with the renderer facts tests ask about."""
import tinygrad_cpp
from tinygrad_cpp import dtypes


class _Renderer:
  def supported_dtypes(self): return list(dtypes.fields().values())


class _CompiledDevice:
  def __init__(self, name: str):
    self.device = name
    self.renderer = _Renderer()


class _DeviceMeta(type):
  @property
  def DEFAULT(cls): return tinygrad_cpp.Device.DEFAULT

  def __getitem__(cls, name: str): return _CompiledDevice(tinygrad_cpp.Device.canonicalize(name))


class Device(metaclass=_DeviceMeta):
  canonicalize = staticmethod(tinygrad_cpp.Device.canonicalize)
