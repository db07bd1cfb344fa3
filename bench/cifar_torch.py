#!/usr/bin/env python3
"""PyTorch's figure beside `tinyrun cifar bench`: the same hlb_cifar10 training step
(tinygrad's examples/hlb_cifar10.py SpeedyResNet: whitening conv, three ConvGroups with
batch-statistics BatchNorm and quick_gelu, label smoothing 0.2, the loss summed and scaled by
512 / batch, two nesterov SGDs) on random images of CIFAR's shape, with the random crop of the
reflect-padded 36x36 images and the flip inside the timed step as ours has them. Torch threads =
cores. Prints ms/step and images/s in tinyrun's format.

usage: /usr/bin/python3 bench/cifar_torch.py [--steps 5] [--batch 256] [--threads NPROC]
"""

from torch_common import bench_args, require_torch, time_steps, timed

torch = require_torch("cifar_torch.py")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def quick_gelu(x):
    return x * torch.sigmoid(1.702 * x)


class BatchNorm(nn.Module):
    """Batch statistics always, eps 1e-12, scale fixed at 1, bias trained (the recipe's)."""

    def __init__(self, c):
        super().__init__()
        self.register_buffer("weight", torch.ones(c))
        self.bias = nn.Parameter(torch.zeros(c))

    def forward(self, x):
        mean = x.mean((0, 2, 3), keepdim=True)
        var = ((x - mean.detach()) ** 2).mean((0, 2, 3), keepdim=True)
        return (x - mean) * (var + 1e-12).rsqrt() * self.weight.view(1, -1, 1, 1) + \
            self.bias.view(1, -1, 1, 1)


class ConvGroup(nn.Module):
    def __init__(self, ci, co):
        super().__init__()
        self.conv1 = nn.Conv2d(ci, co, 3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(co, co, 3, padding=1, bias=False)
        self.norm1, self.norm2 = BatchNorm(co), BatchNorm(co)

    def forward(self, x):
        x = quick_gelu(self.norm1(F.max_pool2d(self.conv1(x), 2)))
        return quick_gelu(self.norm2(self.conv2(x))) + x


class SpeedyResNet(nn.Module):
    def __init__(self, whitening):
        super().__init__()
        self.register_buffer("whitening", whitening)
        self.conv0 = nn.Conv2d(12, 32, 1, bias=False)
        self.groups = nn.Sequential(ConvGroup(32, 64), ConvGroup(64, 256), ConvGroup(256, 512))
        self.fc = nn.Linear(512, 10, bias=False)

    def forward(self, x):
        x = F.pad(F.conv2d(x, self.whitening), (1, 0, 0, 1))
        x = self.groups(quick_gelu(self.conv0(x)))
        return self.fc(torch.amax(x, dim=(2, 3))) / 9.0


def augment(x):
    b = x.shape[0]
    lx = torch.randint(0, 4, (b, 1, 1, 1))
    ly = torch.randint(0, 4, (b, 1, 1, 1))
    ix = torch.arange(32).view(1, 1, 1, 32)
    iy = torch.arange(32).view(1, 1, 32, 1)
    x = x.gather(-1, (lx + ix).expand(b, 3, 36, 32)).gather(-2, (ly + iy).expand(b, 3, 32, 32))
    return torch.where(torch.rand(b, 1, 1, 1) < 0.5, x.flip(-1), x)


def main():
    a = bench_args("cifar_torch.py", steps=5, batch=256)
    model = SpeedyResNet(torch.randn(12, 3, 2, 2) * 0.1).train()
    bias = [p for n, p in model.named_parameters() if "bias" in n]
    rest = [p for n, p in model.named_parameters() if "bias" not in n]
    bs = float(a.batch)
    opts = [torch.optim.SGD(bias, lr=1.76 * 58 / 512, momentum=0.85, nesterov=True,
                            weight_decay=1.08 * 6.45e-4 * bs / 58),
            torch.optim.SGD(rest, lr=1.76 / 512, momentum=0.85, nesterov=True,
                            weight_decay=1.08 * 6.45e-4 * bs)]
    images = torch.randn(a.batch, 3, 36, 36)
    labels = torch.randint(0, 10, (a.batch,))

    @timed
    def step():
        for o in opts:
            o.zero_grad()
        out = model(augment(images))
        loss = (F.cross_entropy(out, labels, reduction="none", label_smoothing=0.2) *
                (512 / bs)).sum()
        loss.backward()
        for o in opts:
            o.step()
        loss.item()

    ms = time_steps(step, 2, a.steps)
    print(f"PyTorch {torch.__version__} hlb_cifar10 training step, batch {a.batch}, {a.steps} "
          f"steps after 2 warm-up, {a.threads} threads")
    print(f"ms/step: {ms:.1f}")
    print(f"images/s: {a.batch * 1000 / ms:.1f}")


if __name__ == "__main__":
    main()
