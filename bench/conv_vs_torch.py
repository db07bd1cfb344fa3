"""conv2d forward, input gradient and weight gradient in tinygrad-cpp and in PyTorch, in one run
on this machine: beautiful_mnist's four convolutions (batch 512), a ResNet layer (batch 64,
64 -> 64 channels, 56x56, 3x3, padding 1) and hlb_cifar10's six 3x3 ones (batch 256).
Each figure is the best of --reps runs of one realized kernel graph (ours) or one call (torch),
torch on --threads threads (ours on every core: CPU_THREADS limits it); the ratio is
ours / torch (below 1: faster than PyTorch). PyTorch's times swing from run to run here (its
first 5x5 conv 18 to 180 ms): compare ratios over a few runs.

  cd build/default/python && PYTHONPATH=. /usr/bin/python3 ../../../bench/conv_vs_torch.py
      [--only mnist,resnet,cifar] [--reps 5] [--threads N]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import require_torch  # noqa: E402

torch = require_torch("conv_vs_torch.py")
import numpy as np  # noqa: E402

try:
    import tinygrad_cpp as tg
except ImportError:
    sys.exit("conv_vs_torch.py: cannot import tinygrad_cpp; run it from build/default/python "
             "with PYTHONPATH=. (make build first)")

# (name, batch, in channels, out channels, image size, kernel size, padding)
SHAPES = {
    "mnist": [("mnist conv1", 512, 1, 32, 28, 5, 0), ("mnist conv2", 512, 32, 32, 24, 5, 0),
              ("mnist conv3", 512, 32, 64, 10, 3, 0), ("mnist conv4", 512, 64, 64, 8, 3, 0)],
    "resnet": [("resnet 64x56", 64, 64, 64, 56, 3, 1)],
    "cifar": [("cifar 32->64 32", 256, 32, 64, 32, 3, 1), ("cifar 64->64 16", 256, 64, 64, 16, 3, 1),
              ("cifar 64->256 16", 256, 64, 256, 16, 3, 1),
              ("cifar 256->256 8", 256, 256, 256, 8, 3, 1),
              ("cifar 256->512 8", 256, 256, 512, 8, 3, 1),
              ("cifar 512->512 4", 256, 512, 512, 4, 3, 1)],
}


def best(fn, reps):
    """The least wall time of `reps` calls of fn, after one untimed call."""
    fn()
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def ours(n, ci, co, hw, k, pad, reps):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((n, ci, hw, hw), dtype=np.float32)
    ws = (rng.standard_normal((co, ci, k, k), dtype=np.float32) * 0.05).astype(np.float32)
    o = hw + 2 * pad - k + 1
    gs = rng.standard_normal((n, co, o, o), dtype=np.float32)
    x, w, g = tg.Tensor(xs).realize(), tg.Tensor(ws).realize(), tg.Tensor(gs).realize()

    def fwd():
        x.conv2d(w, padding=pad).realize()

    def grad_of(which):
        # a fresh leaf over the realized buffer each call, so .grad does not accumulate and
        # the timing holds the backward kernels only, not a copy of the input
        def run():
            xr = x.detach().requires_grad_(True) if which == 0 else x
            wr = w.detach().requires_grad_(True) if which == 1 else w
            (xr.conv2d(wr, padding=pad) * g).sum().backward()
            (xr if which == 0 else wr).grad.realize()
        return run
    return best(fwd, reps), best(grad_of(0), reps), best(grad_of(1), reps)


def theirs(n, ci, co, hw, k, pad, reps):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, ci, hw, hw, generator=gen)
    w = torch.randn(co, ci, k, k, generator=gen) * 0.05
    o = hw + 2 * pad - k + 1
    g = torch.randn(n, co, o, o, generator=gen)
    fwd = best(lambda: torch.nn.functional.conv2d(x, w, padding=pad), reps)
    dx = best(lambda: torch.nn.grad.conv2d_input(x.shape, w, g, padding=pad), reps)
    dw = best(lambda: torch.nn.grad.conv2d_weight(x, w.shape, g, padding=pad), reps)
    return fwd, dx, dw


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="mnist,resnet,cifar")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    if a.reps < 1 or a.threads < 1:
        sys.exit("conv_vs_torch.py: --reps and --threads must be at least 1")
    unknown = [s for s in a.only.split(",") if s not in SHAPES]
    if unknown:
        sys.exit(f"conv_vs_torch.py: unknown set(s) {unknown}; choose from {sorted(SHAPES)}")
    torch.set_num_threads(a.threads)
    print(f"conv2d, float32, {a.threads} threads, best of {a.reps}; PyTorch {torch.__version__}; "
          "ratio = ours / torch time")
    print(f"{'shape':18s} {'pass':6s} {'ours ms':>9s} {'GFLOP/s':>8s} {'torch ms':>9s} "
          f"{'GFLOP/s':>8s} {'ratio':>6s}")
    for group in a.only.split(","):
        for name, n, ci, co, hw, k, pad in SHAPES[group]:
            o = hw + 2 * pad - k + 1
            gflop = 2 * n * o * o * co * ci * k * k / 1e9
            mine, torchs = ours(n, ci, co, hw, k, pad, a.reps), theirs(n, ci, co, hw, k, pad, a.reps)
            for p, tm, tt in zip(("fwd", "dx", "dw"), mine, torchs):
                print(f"{name:18s} {p:6s} {tm * 1e3:9.2f} {gflop / tm:8.0f} {tt * 1e3:9.2f} "
                      f"{gflop / tt:8.0f} {tm / tt:6.2f}", flush=True)


if __name__ == "__main__":
    main()
