"""tinygrad.tensor: Tensor and the numpy dtype helper tests import."""
import numpy as np

import tinygrad_cpp
from tinygrad_cpp import Tensor  # noqa: F401


def _to_np_dtype(dtype):
  try:
    return np.dtype(tinygrad_cpp._tinygrad_cpp.numpy_dtype(dtype)).type
  except tinygrad_cpp.Error:
    return None
