"""The package's own tests run from the build tree: ctest sets PYTHONPATH to <build>/python."""
import numpy as np
import pytest


@pytest.fixture
def rng():
  return np.random.default_rng(0)
