#!/usr/bin/env python3
"""PyTorch's figure beside `tinyrun bert bench`: the same MLPerf BERT pretraining step
(BertForPreTraining as Hugging Face's: post-LayerNorm encoder, GELU, masked-LM head tied to the
word embeddings, next-sentence head; the MLPerf loss; the gradients clipped to a global norm of
1; LAMB as tinygrad's in two groups) on the same synthetic data, in plain PyTorch. Torch threads
= cores. Prints ms/step in tinyrun's format.

usage: /usr/bin/python3 bench/bert_torch.py [--steps 5] [--layers 2] [--hidden 768] ...
"""
import math

from torch_common import bench_args, require_torch, time_steps, timed

torch = require_torch("bert_torch.py")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Layer(nn.Module):
    def __init__(self, h, heads, inter, p):
        super().__init__()
        self.heads, self.p = heads, p
        self.q, self.k, self.v = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.o, self.n1 = nn.Linear(h, h), nn.LayerNorm(h, eps=1e-12)
        self.i, self.out, self.n2 = nn.Linear(h, inter), nn.Linear(inter, h), nn.LayerNorm(h, eps=1e-12)

    def forward(self, x, mask):
        b, s, h = x.shape
        d = h // self.heads
        sp = lambda t: t.view(b, s, self.heads, d).transpose(1, 2)
        q, k, v = sp(self.q(x)), sp(self.k(x)), sp(self.v(x))
        a = F.dropout(torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + mask, -1), self.p,
                      self.training)
        c = (a @ v).transpose(1, 2).reshape(b, s, h)
        a = self.n1(F.dropout(self.o(c), self.p, self.training) + x)
        return self.n2(F.dropout(self.out(F.gelu(self.i(a))), self.p, self.training) + a)


class Pretraining(nn.Module):
    def __init__(self, vocab, h, layers, heads, inter, positions, p):
        super().__init__()
        self.p = p
        self.word, self.pos, self.typ = nn.Embedding(vocab, h), nn.Embedding(positions, h), nn.Embedding(2, h)
        self.norm = nn.LayerNorm(h, eps=1e-12)
        self.layers = nn.ModuleList([Layer(h, heads, inter, p) for _ in range(layers)])
        self.pool, self.transform = nn.Linear(h, h), nn.Linear(h, h)
        self.tnorm, self.bias, self.nsp = nn.LayerNorm(h, eps=1e-12), nn.Parameter(torch.zeros(vocab)), nn.Linear(h, 2)

    def forward(self, ids, types, mask, positions):
        b, s = ids.shape
        x = self.word(ids) + self.pos(torch.arange(s).expand(b, s)) + self.typ(types)
        x = F.dropout(self.norm(x), self.p, self.training)
        m = ((1.0 - mask.float()) * -10000.0).view(b, 1, 1, s)
        for l in self.layers:
            x = l(x, m)
        picked = torch.gather(x, 1, positions.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
        t = self.tnorm(F.gelu(self.transform(picked)))
        return t @ self.word.weight.T + self.bias, self.nsp(torch.tanh(self.pool(x[:, 0])))


class LAMB:
    """tinygrad's nn.optim.LAMB."""

    def __init__(self, params, lr, wd, b1=0.9, b2=0.999, eps=1e-6):
        self.params, self.lr, self.wd, self.b1, self.b2, self.eps, self.t = params, lr, wd, b1, b2, eps, 0
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]

    @torch.no_grad()
    def step(self):
        self.t += 1
        for p, m, v in zip(self.params, self.m, self.v):
            g = p.grad
            m.mul_(self.b1).add_(g, alpha=1 - self.b1)
            v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
            up = (m / (1 - self.b1 ** self.t)) / ((v / (1 - self.b2 ** self.t)).sqrt() + self.eps) + self.wd * p
            r1, r2 = p.norm(), up.norm()
            r = torch.where(r1 > 0, torch.where(r2 > 0, r1 / r2, torch.ones_like(r1)), torch.ones_like(r1))
            p.sub_(self.lr * r * up)


def main():
    def extra(ap):
        for k, d in [("layers", 2), ("hidden", 768), ("heads", 12), ("intermediate", 3072),
                     ("vocab", 30522), ("seq", 128), ("masked", 20)]:
            ap.add_argument(f"--{k}", type=int, default=d)
        ap.add_argument("--dropout", type=float, default=0.1)

    a = bench_args("bert_torch.py", steps=5, batch=16, extra=extra)
    model = Pretraining(a.vocab, a.hidden, a.layers, a.heads, a.intermediate, 512, a.dropout).train()
    for n, p in model.named_parameters():
        if "norm" in n:
            continue
        if n.endswith("bias"):
            nn.init.zeros_(p)
        else:
            nn.init.trunc_normal_(p, std=0.02, a=-0.04, b=0.04)
    no_wd = [p for n, p in model.named_parameters() if n.endswith("bias") or "norm" in n]
    wd = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "norm" in n)]
    lr = 0.000175 * math.sqrt(a.batch / 96)
    opts = [LAMB(wd, lr, 0.01), LAMB(no_wd, lr, 0.0)]
    b, s, m = a.batch, a.seq, a.masked
    ids = torch.randint(1000, a.vocab, (b, s))
    types = torch.zeros(b, s, dtype=torch.long)
    types[:, s // 2 + 1:] = 1
    mask = torch.ones(b, s, dtype=torch.long)
    positions = torch.stack([torch.randperm(s - 2)[:m] + 1 for _ in range(b)])
    labels = torch.gather(ids, 1, positions)
    weights = torch.ones(b, m)
    nsp = torch.randint(0, 2, (b,))

    @timed
    def step():
        model.zero_grad(set_to_none=True)
        mlm, ns = model(ids, types, mask, positions)
        logp = torch.log_softmax(mlm, -1)
        mlm_loss = -(logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1) * weights).sum() / (weights.sum() + 1e-5)
        loss = mlm_loss + F.cross_entropy(ns, nsp)
        loss.backward()
        params = [p for p in model.parameters() if p.grad is not None]
        norm = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
        if norm > 1.0:
            for p in params:
                p.grad /= norm
        for o in opts:
            o.step()
        loss.item()

    ms = time_steps(step, 2, a.steps)
    print(f"PyTorch {torch.__version__} BERT pretraining step ({a.layers} layers, hidden {a.hidden}, "
          f"seq {a.seq}, batch {a.batch}, vocab {a.vocab}), {a.steps} steps after 2 warm-up, "
          f"{a.threads} threads")
    print(f"ms/step: {ms:.1f}")


if __name__ == "__main__":
    main()
