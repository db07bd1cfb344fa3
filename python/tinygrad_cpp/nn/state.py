"""tinygrad's nn.state: safetensors and GGUF through the core, and the state-dict helpers.

get_state_dict walks any Python object as tinygrad's does (a layer's own state, then
attributes, lists and dicts), so models written as plain classes over nn layers work; the
tensors it returns are handles on the model's own, and load_state_dict assigns into them.
"""
from .. import _tinygrad_cpp as _C
from .._tinygrad_cpp import Tensor

safe_load = _C.state.safe_load
safe_save = _C.state.safe_save
safe_load_metadata = _C.state.safe_load_metadata
gguf_load = _C.state.gguf_load


def get_state_dict(obj, prefix: str = "", tensor_type=Tensor) -> dict:
  if isinstance(obj, tensor_type): return {prefix.strip("."): obj}
  if isinstance(obj, _C.nn.Module):
    return {f"{prefix}{k}": v for k, v in obj.get_state_dict().items()}
  if hasattr(obj, "_asdict"): return get_state_dict(obj._asdict(), prefix, tensor_type)
  if isinstance(obj, (list, tuple)):
    return {k: v for i, x in enumerate(obj) for k, v in get_state_dict(x, f"{prefix}{i}.", tensor_type).items()}
  if isinstance(obj, dict):
    return {k: v for n, x in obj.items() for k, v in get_state_dict(x, f"{prefix}{n}.", tensor_type).items()}
  if hasattr(obj, "__dict__"): return get_state_dict(obj.__dict__, prefix, tensor_type)
  return {}


def get_parameters(obj) -> list:
  return list(get_state_dict(obj).values())


def load_state_dict(model, state_dict: dict, strict: bool = True, verbose: bool = False, realize: bool = True):
  """Assigns each tensor of state_dict into the model's tensor of that name (shapes must match)."""
  own = get_state_dict(model)
  missing = [k for k in own if k not in state_dict]
  if strict and missing: raise KeyError(f"load_state_dict: missing keys {missing}")
  for k, v in own.items():
    if k not in state_dict: continue
    if v.shape != state_dict[k].shape:
      raise ValueError(f"load_state_dict: shape mismatch for {k}: model {v.shape}, state {state_dict[k].shape}")
    v.assign(state_dict[k].cast(v.dtype))
    if verbose: print(f"loaded {k} {v.shape}")
  if realize: Tensor.realize(*own.values()) if own else None
