"""What the PyTorch twins of tinyrun's benchmarks (mnist_torch.py, cifar_torch.py,
bert_torch.py) share: the torch import with the install hint, the common command-line options,
and the timing loop with the lines tinyrun's bench commands read ("ms/step: X")."""
import argparse
import os
import sys
import time


def require_torch(script):
    """Imports torch, or exits saying how to install Debian's python3-torch."""
    try:
        import torch
    except ImportError:
        sys.exit(f"{script}: {sys.executable} cannot import torch; install Debian's "
                 "python3-torch with `bash scripts/install-deps.sh --bench` (as root) and run "
                 "this script with /usr/bin/python3")
    return torch


def bench_args(script, steps, batch, extra=None):
    """--steps, --batch, --threads (default: the cores), --seed, --device (cpu), plus what
    `extra(ap)` adds;
    exits when a count is below 1. Sets torch's threads and seed."""
    import torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="torch's device: cpu, cuda")
    if extra:
        extra(ap)
    a = ap.parse_args()
    if a.steps < 1 or a.batch < 1 or a.threads < 1:
        sys.exit(f"{script}: --steps, --batch and --threads must be at least 1")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    return a


def time_steps(step, warmup, steps):
    """Runs `step()` (which returns the seconds it took) `warmup` times untimed, then `steps`
    times; returns the mean ms/step of the timed ones."""
    for _ in range(warmup):
        step()
    return 1000 * sum(step() for _ in range(steps)) / steps


def timed(fn):
    """A step for time_steps: the wall time of one call of `fn`."""
    def step():
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    return step
