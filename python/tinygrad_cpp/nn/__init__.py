"""tinygrad's nn: the core's layers, with nn.optim and nn.state."""
from .. import _tinygrad_cpp as _C

Module = _C.nn.Module
Linear = _C.nn.Linear
Conv1d = _C.nn.Conv1d
Conv2d = _C.nn.Conv2d
ConvTranspose2d = _C.nn.ConvTranspose2d
BatchNorm = _C.nn.BatchNorm
BatchNorm1d = _C.nn.BatchNorm1d
BatchNorm2d = _C.nn.BatchNorm2d
LayerNorm = _C.nn.LayerNorm
GroupNorm = _C.nn.GroupNorm
InstanceNorm1d = _C.nn.InstanceNorm1d
InstanceNorm2d = _C.nn.InstanceNorm2d
RMSNorm = _C.nn.RMSNorm
Embedding = _C.nn.Embedding
Dropout = _C.nn.Dropout
LSTMCell = _C.nn.LSTMCell

from . import optim, state  # noqa: E402,F401
