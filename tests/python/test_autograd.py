"""Autograd through the bindings: backward, .grad, gradient(), requires_grad, detach."""
import numpy as np
import pytest

from tinygrad_cpp import Tensor


def test_backward_fills_grad(rng):
  x = rng.standard_normal((3, 4)).astype(np.float32)
  t = Tensor(x, requires_grad=True)
  assert t.requires_grad and t.grad is None
  out = (t * t).sum()
  assert out.backward() is out
  np.testing.assert_allclose(t.grad.numpy(), 2 * x, rtol=1e-6)
  t.grad = None
  assert t.grad is None


def test_gradient_of_several_targets(rng):
  a = Tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
  b = Tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
  ga, gb = (a @ b).sum().gradient(a, b)
  np.testing.assert_allclose(ga.numpy(), np.ones((2, 2), np.float32) @ b.numpy().T, rtol=1e-5)
  np.testing.assert_allclose(gb.numpy(), a.numpy().T @ np.ones((2, 2), np.float32), rtol=1e-5)
  assert a.grad is None  # gradient() leaves .grad alone


def test_backward_with_a_gradient_and_chain(rng):
  x = Tensor([1.0, 2.0, 3.0]).requires_grad_()
  y = x.exp()
  y.backward(Tensor([1.0, 0.0, 2.0]))
  np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0, 3.0]) * [1, 0, 2], rtol=1e-5)
  z = Tensor([2.0], requires_grad=True)
  (z.relu().sigmoid() * 3).sum().backward()
  s = 1 / (1 + np.exp(-2.0))
  np.testing.assert_allclose(z.grad.numpy(), [3 * s * (1 - s)], rtol=1e-5)


def test_detach_and_requires_grad_setter():
  x = Tensor([1.0, 2.0])
  x.requires_grad = True
  assert x.requires_grad
  d = x.detach()
  assert not d.requires_grad
  (x * d).sum().backward()
  assert x.grad.tolist() == [1.0, 2.0]


def test_grad_of_nn_ops(rng):
  x = Tensor(rng.standard_normal((2, 5)).astype(np.float32), requires_grad=True)
  y = Tensor([1, 3])
  loss = x.sparse_categorical_crossentropy(y)
  loss.backward()
  p = np.exp(x.numpy()) / np.exp(x.numpy()).sum(1, keepdims=True)
  p[np.arange(2), [1, 3]] -= 1
  np.testing.assert_allclose(x.grad.numpy(), p / 2, rtol=1e-4, atol=1e-6)


def test_backward_needs_a_scalar():
  with pytest.raises(RuntimeError):
    Tensor([1.0, 2.0], requires_grad=True).backward()
