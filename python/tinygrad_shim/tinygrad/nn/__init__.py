from tinygrad_cpp.nn import *  # noqa: F401,F403
from tinygrad_cpp.nn import optim, state  # noqa: F401
