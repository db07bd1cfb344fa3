"""tinygrad's nn.optim over the core's optimizers."""
from .. import _tinygrad_cpp as _C

Optimizer = _C.optim.Optimizer
SGD = _C.optim.SGD
Adam = _C.optim.Adam
AdamW = _C.optim.AdamW
LAMB = _C.optim.LAMB
Muon = _C.optim.Muon
