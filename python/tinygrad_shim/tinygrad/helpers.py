"""tinygrad.helpers: the environment helpers tinygrad's tests import."""
import contextlib
import functools
import math
import operator
import os
import platform
import sys


@functools.cache
def getenv(key: str, default=0): return type(default)(os.getenv(key, default))


DEBUG = getenv("DEBUG")
IMAGE = getenv("IMAGE")
CI = os.getenv("CI", "") != ""
OSX = platform.system() == "Darwin"
WIN = sys.platform == "win32"


class _Dev:
  """DEV=DEVICE:RENDERER as tinygrad parses it (interface is tinygrad's MOCK/remote prefix)."""
  def __init__(self, spec: str):
    dev, _, ren = spec.partition(":")
    self.device = dev.upper() or "CPU"
    self.renderer = ren.upper() or ("LLVM" if self.device == "CPU" else "")
    self.interface = ""


DEV = _Dev(os.getenv("DEV", ""))


@contextlib.contextmanager
def Context(**kwargs):
  """Sets environment knobs for a scope (the core reads most knobs per use)."""
  old = {k: os.environ.get(k) for k in kwargs}
  os.environ.update({k: str(v) for k, v in kwargs.items()})
  try:
    yield
  finally:
    for k, v in old.items():
      if v is None: os.environ.pop(k, None)
      else: os.environ[k] = v


class GlobalCounters:
  global_ops = 0
  global_mem = 0
  kernel_count = 0
  mem_used = 0

  @staticmethod
  def reset(): pass


def prod(x): return functools.reduce(operator.mul, x, 1)
def all_same(items): return all(x == items[0] for x in items)
def flatten(items): return [x for sub in items for x in sub]
def argfix(*x): return tuple(x[0]) if x and isinstance(x[0], (tuple, list)) else x
def dedup(x): return list(dict.fromkeys(x))
def ceildiv(num, amt): return -(num // -amt)
def round_up(num, amt): return (num + amt - 1) // amt * amt
def colored(st, color=None, background=False): return st
isqrt = math.isqrt
