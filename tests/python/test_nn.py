"""nn layers, optimizers, state dicts and files, TinyJit, training mode."""
import numpy as np
import pytest

import tinygrad_cpp as tg
from tinygrad_cpp import Tensor, TinyJit, nn
from tinygrad_cpp.nn import optim
from tinygrad_cpp.nn.state import (get_parameters, get_state_dict, load_state_dict, safe_load,
                                   safe_save)


def test_linear_matches_numpy(rng):
  layer = nn.Linear(4, 3)
  assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
  x = rng.standard_normal((2, 4)).astype(np.float32)
  ref = x @ layer.weight.numpy().T + layer.bias.numpy()
  np.testing.assert_allclose(layer(Tensor(x)).numpy(), ref, rtol=1e-5, atol=1e-6)
  assert nn.Linear(4, 3, bias=False).bias is None


def test_conv2d_and_functional_conv(rng):
  conv = nn.Conv2d(2, 3, 3, padding=1)
  x = Tensor(rng.standard_normal((1, 2, 5, 5)).astype(np.float32))
  assert conv(x).shape == (1, 3, 5, 5)
  np.testing.assert_allclose(conv(x).numpy(), x.conv2d(conv.weight, conv.bias, padding=1).numpy(), rtol=1e-5)
  w = Tensor.ones(1, 1, 2, 2)
  out = Tensor.arange(9, dtype=tg.dtypes.float32).reshape(1, 1, 3, 3).conv2d(w).numpy()
  np.testing.assert_allclose(out, [[[[8, 12], [20, 24]]]])
  assert x.conv2d(Tensor.ones(4, 2, 3)[:, :, :].reshape(4, 2, 3, 1)).shape == (1, 4, 3, 5)


def test_pools(rng):
  x = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
  mp = Tensor(x).max_pool2d().numpy()
  np.testing.assert_allclose(mp, x.reshape(1, 1, 2, 2, 2, 2).max(axis=(3, 5)))
  ap = Tensor(x).avg_pool2d(kernel_size=(2, 2)).numpy()
  np.testing.assert_allclose(ap, x.reshape(1, 1, 2, 2, 2, 2).mean(axis=(3, 5)), rtol=1e-6)
  v, i = Tensor(x).max_pool2d(2, return_indices=True)
  assert v.shape == i.shape == (1, 1, 2, 2)
  assert Tensor(x).interpolate((8, 8)).shape == (1, 1, 8, 8)
  assert Tensor(x).interpolate((2, 2), mode="nearest").shape == (1, 1, 2, 2)
  # adaptive max pooling to 2x2 of a 4x4 image: the 2x2 blocks' maxima, flat indices into 4x4.
  amp, ai = Tensor(x).adaptive_max_pool2d(2, return_indices=True)
  np.testing.assert_allclose(amp.numpy(), mp)
  assert (x.reshape(16)[ai.numpy().reshape(4)] == mp.reshape(4)).all()
  np.testing.assert_allclose(Tensor(x[0]).adaptive_max_pool1d(2).numpy(),
                             x[0].reshape(1, 4, 2, 2).max(axis=3))


def test_norm_layers(rng):
  x = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
  bn = nn.BatchNorm2d(3)
  with Tensor.train():
    assert Tensor.training
    y = bn(Tensor(x)).numpy()
  assert not Tensor.training
  mean, var = x.mean((0, 2, 3), keepdims=True), x.var((0, 2, 3), keepdims=True)
  np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean.reshape(3), rtol=1e-4, atol=1e-6)
  rm, rv = Tensor.zeros(3).contiguous().realize(), Tensor.ones(3).contiguous().realize()
  np.testing.assert_allclose(Tensor(x).batch_norm(rm, rv, training=True).numpy(), y, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(rm.numpy(), 0.1 * mean.reshape(3), rtol=1e-4, atol=1e-6)
  assert Tensor(x[:, :, 0]).adaptive_avg_pool1d(1).shape == (4, 3, 1)
  ln = nn.LayerNorm(2)
  lx = x.reshape(-1, 2)
  np.testing.assert_allclose(ln(Tensor(lx)).numpy(), (lx - lx.mean(-1, keepdims=True)) / np.sqrt(lx.var(-1, keepdims=True) + 1e-5), rtol=1e-3, atol=1e-4)
  np.testing.assert_allclose(Tensor(lx).layernorm().numpy(), ln(Tensor(lx)).numpy(), rtol=1e-5)
  assert nn.GroupNorm(1, 3)(Tensor(x)).shape == x.shape
  assert nn.RMSNorm(2)(Tensor(lx)).shape == lx.shape
  emb = nn.Embedding(10, 4)
  out = emb(Tensor([[1, 2], [3, 9]]))
  np.testing.assert_allclose(out.numpy()[1, 1], emb.weight.numpy()[9])


def test_dropout_follows_training_mode():
  x = Tensor.ones(1000)
  assert x.dropout(0.5).numpy().min() == 1.0  # not training: identity
  Tensor.training = True
  try:
    d = x.dropout(0.5).numpy()
  finally:
    Tensor.training = False
  assert set(np.unique(d)) <= {0.0, 2.0} and 300 < (d == 0).sum() < 700


class TinyNet:
  def __init__(self):
    self.l1 = nn.Linear(2, 8)
    self.l2 = nn.Linear(8, 1)

  def __call__(self, x): return self.l2(self.l1(x).relu())


@pytest.mark.parametrize("make_opt", [lambda p: optim.SGD(p, lr=0.05, momentum=0.9), lambda p: optim.Adam(p, lr=0.02),
                                      lambda p: optim.AdamW(p, lr=0.02), lambda p: optim.LAMB(p, lr=0.02)])
def test_optimizers_reduce_a_loss(make_opt):
  Tensor.manual_seed(0)
  net = TinyNet()
  params = get_parameters(net)
  assert len(params) == 4
  opt = make_opt(params)
  x = Tensor([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
  y = Tensor([[1.0], [1.0], [0.0], [0.0]])
  losses = []
  with Tensor.train():
    for _ in range(40):
      opt.zero_grad()
      loss = ((net(x) - y) ** 2).mean()
      loss.backward()
      opt.step()
      losses.append(loss.item())
  assert losses[-1] < losses[0] * 0.5
  opt.lr = 0.001
  assert abs(opt.lr - 0.001) < 1e-9


def test_state_dict_round_trip(tmp_path):
  net = TinyNet()
  sd = get_state_dict(net)
  assert sorted(sd) == ["l1.bias", "l1.weight", "l2.bias", "l2.weight"]
  path = str(tmp_path / "net.safetensors")
  safe_save(sd, path)
  loaded = safe_load(path)
  assert sorted(loaded) == sorted(sd)
  for k in sd: np.testing.assert_array_equal(loaded[k].numpy(), sd[k].numpy())
  other = TinyNet()
  load_state_dict(other, loaded)
  for k, v in get_state_dict(other).items(): np.testing.assert_array_equal(v.numpy(), sd[k].numpy())
  np.testing.assert_array_equal(other.l1.weight.numpy(), net.l1.weight.numpy())  # the layer's own tensor
  with pytest.raises(KeyError):
    load_state_dict(other, {"l1.weight": loaded["l1.weight"]})
  layer = nn.Linear(2, 8)
  layer.load_state_dict({"weight": loaded["l1.weight"], "bias": loaded["l1.bias"]})
  np.testing.assert_array_equal(layer.weight.numpy(), sd["l1.weight"].numpy())
  with pytest.raises(tg.Error, match="bias"):
    layer.load_state_dict({"weight": loaded["l1.weight"]})


def test_tinyjit_records_then_replays():
  calls = []

  @TinyJit
  def step(a, b):
    calls.append(1)
    return (a * b + 1).realize()

  for i in range(5):
    a = Tensor([float(i), 1.0]).realize()
    b = Tensor([2.0, 3.0]).realize()
    out = step(a, b)
    assert out.tolist() == [2.0 * i + 1, 4.0]
  assert len(calls) == 2  # eager, record; then replays without calling the function
  assert step.cnt == 5 and step.recorded_launches >= 1


def test_tinyjit_refuses_a_changed_input():
  @TinyJit
  def f(x): return (x * 2).realize()

  for _ in range(3): f(Tensor.ones(4).contiguous().realize())
  with pytest.raises(tg.Error):
    f(Tensor.ones(5).contiguous().realize())


def test_tinyjit_as_a_method_decorator():
  class M:
    def __init__(self): self.w = Tensor([3.0]).realize()

    @TinyJit
    def __call__(self, x): return (x * self.w).realize()

  m = M()
  for i in range(4): assert m(Tensor([float(i)]).realize()).tolist() == [3.0 * i]


def _gguf_bytes(tensors: dict, kv: dict) -> bytes:
  """A GGUF v3 file of float32 tensors and string/uint32 metadata, written as the format says."""
  import struct
  def s(x: str) -> bytes: return struct.pack("<Q", len(x.encode())) + x.encode()
  out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
  for k, v in kv.items():
    out += s(k) + (struct.pack("<I", 8) + s(v) if isinstance(v, str) else struct.pack("<II", 4, v))
  data, offsets = b"", []
  for name, arr in tensors.items():
    offsets.append(len(data))
    data += arr.astype(np.float32).tobytes()
    data += b"\0" * (-len(data) % 32)
  for (name, arr), off in zip(tensors.items(), offsets):
    out += s(name) + struct.pack("<I", arr.ndim) + struct.pack(f"<{arr.ndim}Q", *reversed(arr.shape))
    out += struct.pack("<IQ", 0, off)
  out += b"\0" * (-len(out) % 32)
  return out + data


def test_gguf_load(tmp_path, rng):
  from tinygrad_cpp.nn.state import gguf_load
  w = rng.standard_normal((2, 3)).astype(np.float32)
  b = rng.standard_normal(5).astype(np.float32)
  path = tmp_path / "tiny.gguf"
  path.write_bytes(_gguf_bytes({"w": w, "b": b}, {"general.name": "tiny", "tiny.count": 7}))
  kv, tensors = gguf_load(str(path))
  assert kv["general.name"] == "tiny" and kv["tiny.count"] == 7
  np.testing.assert_array_equal(tensors["w"].numpy(), w)
  np.testing.assert_array_equal(tensors["b"].numpy(), b)
  path.write_bytes(b"GGUF\x03")
  with pytest.raises(tg.Error):
    gguf_load(str(path))


def test_conv2d_asymmetric_and_negative_padding(rng):
  x = rng.standard_normal((1, 1, 5, 6)).astype(np.float32)
  w = rng.standard_normal((1, 1, 2, 2)).astype(np.float32)
  def ref(xp):  # a plain valid correlation
    out = np.zeros((xp.shape[2] - 1, xp.shape[3] - 1), np.float32)
    for i in range(out.shape[0]):
      for j in range(out.shape[1]): out[i, j] = (xp[0, 0, i:i + 2, j:j + 2] * w[0, 0]).sum()
    return out
  # tinygrad's flat form: (left, right, top, bottom)
  got = Tensor(x).conv2d(Tensor(w), padding=(1, 0, 2, 1)).numpy()[0, 0]
  np.testing.assert_allclose(got, ref(np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 0)))), rtol=1e-5, atol=1e-5)
  got = Tensor(x).conv2d(Tensor(w), padding=-1).numpy()[0, 0]
  np.testing.assert_allclose(got, ref(x[:, :, 1:-1, 1:-1]), rtol=1e-5, atol=1e-5)
