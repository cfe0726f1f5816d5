#!/usr/bin/env python3
"""The paper's synthetic model in PyTorch eager: the speed anchor a researcher
would otherwise run (the authors' notebooks, docs/paper.md §1-2), same shapes and
thread count as training_bench.

    /usr/bin/python3 bench/pytorch_eager_bench.py --steps 2000 --threads 1

Prints steps/s per parameterization. Needs Debian's python3-torch.
"""
import argparse
import time

import torch
import torch.nn as nn

V, T, B = 50, 64, 32


class Net(nn.Module):
    """One-hot input, last-position query, 1/sqrt(V) scaling (authors' Net_p1..p4)."""

    def __init__(self, p):
        super().__init__()
        self.p = p
        if p in ("FAFO", "FACO"):
            self.q = nn.Linear(V, V, bias=False)
            self.k = nn.Linear(V, V, bias=False)
        else:
            self.qk = nn.Linear(V, V, bias=False)
        if p in ("FAFO", "CAFO"):
            self.v = nn.Linear(V, V, bias=False)
        self.o = nn.Linear(V, V, bias=False)

    def forward(self, x):  # x: [B, T-1, V] one-hot
        xt = x[:, -1, :]
        if self.p in ("FAFO", "FACO"):
            scores = torch.einsum("bd,btd->bt", self.q(xt), self.k(x))
        else:
            scores = torch.einsum("bd,btd->bt", xt, self.qk(x))
        a = torch.softmax(scores / V ** 0.5, dim=1)
        vals = self.v(x) if self.p in ("FAFO", "CAFO") else x
        return self.o(torch.einsum("bt,btd->bd", a, vals))


def batch(gen, probs):
    c = torch.randint(0, 4, (B,), generator=gen)
    ctx = torch.multinomial(probs[c], T - 2, replacement=True, generator=gen)
    tokens = torch.cat([ctx, (5 + c)[:, None]], dim=1)
    return nn.functional.one_hot(tokens, V).float(), 1 + c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    w = torch.zeros(4, V)
    w[:, :10] = 1
    for c in range(4):
        w[c, (c + 1) * 10:(c + 2) * 10] = torch.arange(1, 11) / 10
    probs = w / w.sum(1, keepdim=True)
    print(f"parameterization steps_per_s (PyTorch eager {torch.__version__}, batch {B}, seq {T}, vocab {V}, "
          f"{args.threads} thread)")
    for p in ("FAFO", "FACO", "CAFO", "CACO"):
        gen = torch.Generator().manual_seed(1234)
        net = Net(p)
        qk = [m.weight for n, m in net.named_children() if n in ("q", "k", "qk")]
        ov = [m.weight for n, m in net.named_children() if n in ("v", "o")]
        opt = torch.optim.SGD([{"params": qk, "lr": 0.2}, {"params": ov, "lr": 0.01}])
        loss_fn = nn.CrossEntropyLoss()
        for _ in range(50):  # warm-up
            x, y = batch(gen, probs)
            opt.zero_grad()
            loss_fn(net(x), y).backward()
            opt.step()
        t0 = time.perf_counter()
        for _ in range(args.steps):
            x, y = batch(gen, probs)
            opt.zero_grad()
            loss_fn(net(x), y).backward()
            opt.step()
        print(f"{p} {args.steps / (time.perf_counter() - t0):.0f}")


if __name__ == "__main__":
    main()
