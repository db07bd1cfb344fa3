"""tinygrad.dtype over tinygrad_cpp's."""
from tinygrad_cpp import DType, dtypes  # noqa: F401
from tinygrad.tensor import _to_np_dtype  # noqa: F401
