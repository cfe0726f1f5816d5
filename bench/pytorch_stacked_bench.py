#!/usr/bin/env python3
"""The synthetic task's four models in PyTorch eager, written for speed as a
researcher who cares would write them: the peer of training_bench
--mode=speed at T trials stacked.

With one-hot inputs the circuits fold: the score of position i is
M[query token, token i] with M = W_Q^T W_K (FA) or W_QK (CA), and the
logits are sum_i a_i C[:, token i] with C = W_O W_V (FO) or W_O (CO). So T
trials stack on a leading dimension of every weight ([T, V, V]); a step
gathers the scores, takes the softmax, scatter-adds the attention into a
[T, B, V] context, multiplies by C, and runs one autograd pass for all T
trials; plain SGD applies each trial's own rates by hand (QK at lr_ratio x
eta_OV). Each trial draws its own batches of the synthetic task (vocabulary
50: common tokens 0-9, the labels 1-4 and queries 5-8 among them, 10
distinct tokens per class), batch 32, sequence 64 (63 inputs).

    /usr/bin/python3 bench/pytorch_stacked_bench.py --steps 2000 --stack 1,8,32 \
        [--flush-denormal] [--bmm-rate]

Prints trial-steps/s per parameterization and T, in training_bench's table
form, then (--bmm-rate) the machine's batched-product rate: torch.bmm of
[32, 50, 50] by [32, 50, 50], the products the engines are made of, in
GFLOP/s. Needs Debian's python3-torch.
"""
import argparse
import time

import torch
import torch.nn.functional as F

V, L, B = 50, 63, 32
COMMON, CLASSES, DISTINCT = 10, 4, 10


def draw(t, gen):
    """A batch per trial: tokens [T, B, L] (query last), labels [T, B]."""
    c = torch.randint(CLASSES, (t, B), generator=gen)
    common = torch.randint(COMMON, (t, B, L - 1), generator=gen)
    distinct = COMMON + c.unsqueeze(-1) * DISTINCT + torch.randint(
        DISTINCT, (t, B, L - 1), generator=gen)
    pick = torch.rand((t, B, L - 1), generator=gen) < 0.36
    tokens = torch.where(pick, distinct, common)
    query = (COMMON // 2 + c).unsqueeze(-1)
    return torch.cat([tokens, query], dim=2), 1 + c


def weights(p, t):
    def mat():
        return (torch.eye(V) * 1e-6).repeat(t, 1, 1).requires_grad_()
    qk = [mat(), mat()] if p in ("FAFO", "FACO") else [mat()]
    ov = [mat(), mat()] if p in ("FAFO", "CAFO") else [mat()]
    return qk, ov


def step(qk, ov, tokens, labels, lr_qk, lr_ov):
    t = tokens.shape[0]
    m = qk[0].transpose(1, 2) @ qk[1] if len(qk) == 2 else qk[0]   # [T, V, V]
    c = ov[1] @ ov[0] if len(ov) == 2 else ov[0]                   # W_O W_V
    rows = m.gather(1, tokens[:, :, -1:].expand(t, B, V))          # [T, B, V]
    scores = rows.gather(2, tokens) / V ** 0.5                     # [T, B, L]
    a = scores.softmax(-1)
    ctx = torch.zeros(t, B, V).scatter_add_(2, tokens, a)          # [T, B, V]
    logits = ctx @ c.transpose(1, 2)                               # [T, B, V]
    loss = F.cross_entropy(logits.reshape(t * B, V), labels.reshape(-1),
                           reduction="none").view(t, B).mean(1).sum()
    params = qk + ov
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for i, (w, g) in enumerate(zip(params, grads)):
            rate = lr_qk if i < len(qk) else lr_ov
            w.sub_(rate.view(t, 1, 1) * g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--stack", default="1,8,32")
    ap.add_argument("--flush-denormal", action="store_true",
                    help="torch.set_flush_denormal(True) first, as "
                    "qkov-worker flushes subnormal floats by default")
    ap.add_argument("--bmm-rate", action="store_true",
                    help="also measure torch.bmm on [32, 50, 50] operands")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    flushed = args.flush_denormal and torch.set_flush_denormal(True)
    stacks = [int(s) for s in args.stack.split(",")]
    print(f"pytorch stacked eager, trial-steps per second (batch {B}, seq "
          f"{L + 1}, vocab {V}, {args.threads} thread, torch "
          f"{torch.__version__}, subnormals {'flushed' if flushed else 'kept'}), "
          "by trials stacked")
    print("param " + " ".join(f"T={t}" for t in stacks))
    for p in ("FAFO", "FACO", "CAFO", "CACO"):
        line = [p]
        for t in stacks:
            gen = torch.Generator().manual_seed(1234)
            qk, ov = weights(p, t)
            lr_ov = torch.full((t,), 0.01)
            lr_qk = lr_ov * torch.arange(1, t + 1, dtype=torch.float32)
            for _ in range(20):  # untimed
                step(qk, ov, *draw(t, gen), lr_qk, lr_ov)
            start = time.perf_counter()
            for _ in range(args.steps):
                step(qk, ov, *draw(t, gen), lr_qk, lr_ov)
            line.append(f"{args.steps * t / (time.perf_counter() - start):.0f}")
        print(" ".join(line), flush=True)
    if args.bmm_rate:
        x, y = torch.randn(32, V, V), torch.randn(32, V, V)
        out = torch.empty(32, V, V)
        for _ in range(200):  # untimed
            torch.bmm(x, y, out=out)
        best = 0.0
        for _ in range(5):  # best of five rounds of 2,000 products
            start = time.perf_counter()
            for _ in range(2000):
                torch.bmm(x, y, out=out)
            best = max(best, 2000 * 2 * 32 * V ** 3 /
                       (time.perf_counter() - start) / 1e9)
        print(f"batched product rate: {best:.1f} GFLOP/s (torch.bmm "
              f"[32, {V}, {V}] x [32, {V}, {V}], {args.threads} thread)")


if __name__ == "__main__":
    main()
