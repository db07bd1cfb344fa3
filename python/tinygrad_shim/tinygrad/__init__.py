"""A `tinygrad` import path over tinygrad_cpp, for running tinygrad's own tests against the C++
core (scripts/tinygrad-test-ops.sh). Only names: every call goes to tinygrad_cpp."""
from tinygrad_cpp import Tensor, TinyJit, dtypes, nn  # noqa: F401
from tinygrad.device import Device  # noqa: F401
from tinygrad.helpers import Context, GlobalCounters, getenv  # noqa: F401
