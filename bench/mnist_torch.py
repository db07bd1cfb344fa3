#!/usr/bin/env python3
"""PyTorch's figure beside `tinyrun mnist bench`: the same beautiful_mnist model (tinygrad's
examples/beautiful_mnist.py), Adam lr 1e-3, batch 512, random digits of MNIST's shape (pixels
0..255 as float, labels 0..9), torch threads = cores. Times N training steps after 3 warm-up
steps and prints ms/step and images/s in tinyrun's format.

usage: /usr/bin/python3 bench/mnist_torch.py [--steps 10] [--batch 512] [--threads NPROC]
                                             [--device cpu|cuda]
"""

from torch_common import bench_args, require_torch, time_steps, timed

torch = require_torch("mnist_torch.py")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Conv2d(1, 32, 5), nn.Conv2d(32, 32, 5), nn.BatchNorm2d(32),
            nn.Conv2d(32, 64, 3), nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64),
            nn.Linear(576, 10)])

    def forward(self, x):
        c1, c2, bn1, c3, c4, bn2, fc = self.layers
        x = F.max_pool2d(bn1(F.relu(c2(F.relu(c1(x))))), 2)
        x = F.max_pool2d(bn2(F.relu(c4(F.relu(c3(x))))), 2)
        return fc(x.flatten(1))


def main():
    a = bench_args("mnist_torch.py", steps=10, batch=512)
    model = Model().to(a.device).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randint(0, 256, (4096, 1, 28, 28)).float().to(a.device)
    labels = torch.randint(0, 10, (4096,)).to(a.device)

    def train(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss.item()

    def step():
        idx = torch.randint(0, images.shape[0], (a.batch,), device=a.device)
        x, y = images[idx], labels[idx]
        return timed(lambda: train(x, y))()

    ms = time_steps(step, 3, a.steps)
    print(f"PyTorch {torch.__version__} beautiful_mnist training step, batch {a.batch}, "
          f"{a.steps} steps after 3 warm-up, {torch.get_num_threads()} threads, device {a.device}")
    print(f"ms/step: {ms:.1f}")
    print(f"images/s: {a.batch * 1000 / ms:.1f}")


if __name__ == "__main__":
    main()
