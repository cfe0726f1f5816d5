#!/usr/bin/env python3
"""The HateXplain model in PyTorch eager, as a researcher would write it (the
authors' DemoTransformer style, per-head einsums): the peer of text_bench.

1 layer, d_model 64, 4 heads of 64, MLP 256 (GELU), residual, no LayerNorm,
causal mask, classifier at the first pad position; AdamW with three
parameter groups (token embedding and QK at 30x), cosine schedule with
warm-up, global-norm clipping 1.0; batch 32, length 128. Reads the ids that
`qkov-data --json` wrote, so both sides train on the same pieces.

    qkov-data --format=hatexplain --path=PATH --vocab=VOCAB --json > ids.jsonl
    /usr/bin/python3 bench/text_eager_bench.py --ids ids.jsonl --steps 200

Prints steps/s over --steps steps after --warmup untimed ones. Needs
Debian's python3-torch.
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, L, B = 30522, 128, 32
D, H, DH, DMLP, NCTX, CLASSES = 64, 4, 64, 256, 256, 3


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        def p(*shape):
            return nn.Parameter(torch.randn(*shape) * 0.02)
        self.W_E, self.W_pos = p(VOCAB, D), p(NCTX, D)
        self.W_Q, self.W_K, self.W_V = p(H, D, DH), p(H, D, DH), p(H, D, DH)
        self.b_Q = nn.Parameter(torch.zeros(H, DH))
        self.b_K = nn.Parameter(torch.zeros(H, DH))
        self.b_V = nn.Parameter(torch.zeros(H, DH))
        self.W_O, self.b_O = p(H, DH, D), nn.Parameter(torch.zeros(D))
        self.W_in, self.b_in = p(D, DMLP), nn.Parameter(torch.zeros(DMLP))
        self.W_out, self.b_out = p(DMLP, D), nn.Parameter(torch.zeros(D))
        self.head = nn.Linear(D, CLASSES)
        self.register_buffer(
            "causal", torch.triu(torch.ones(L, L, dtype=torch.bool), 1))

    def forward(self, ids):
        x = self.W_E[ids] + self.W_pos[:ids.shape[1]]
        q = torch.einsum("bpd,hdk->bphk", x, self.W_Q) + self.b_Q
        k = torch.einsum("bpd,hdk->bphk", x, self.W_K) + self.b_K
        v = torch.einsum("bpd,hdk->bphk", x, self.W_V) + self.b_V
        s = torch.einsum("bqhk,bphk->bhqp", q, k) / math.sqrt(DH)
        a = s.masked_fill(self.causal, -1e5).softmax(-1)
        z = torch.einsum("bhqp,bphk->bqhk", a, v)
        x = x + torch.einsum("bqhk,hkd->bqd", z, self.W_O) + self.b_O
        x = x + F.gelu(x @ self.W_in + self.b_in) @ self.W_out + self.b_out
        first_pad = (ids == 0).int().argmax(1)
        return self.head(x[torch.arange(ids.shape[0]), first_pad])


def load(path):
    ids, labels = [], []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            row = e["ids"][:L]
            ids.append(row + [0] * (L - len(row)))
            labels.append(e["label"])
    return torch.tensor(ids), torch.tensor(labels)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", required=True)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1234)
    ids, labels = load(args.ids)
    m = Model()
    qk = [m.W_E, m.W_Q, m.W_K, m.b_Q, m.b_K]
    mlp = [m.W_in, m.b_in, m.W_out, m.b_out]
    ov = [p for p in m.parameters()
          if all(p is not x for x in qk + mlp)]
    base = 5e-5
    opt = torch.optim.AdamW([
        {"params": qk, "lr": 30 * base, "weight_decay": 1e-4},
        {"params": ov, "lr": base, "weight_decay": 1e-4},
        {"params": mlp, "lr": base, "weight_decay": 1e-4}])
    total = math.ceil(len(ids) / B)
    warm = int(0.1 * total)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else
        0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm))))
    order = torch.randperm(len(ids))
    t0 = None
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            t0 = time.perf_counter()
        j = order[(step * B) % len(ids):][:B]
        loss = F.cross_entropy(m(ids[j]), labels[j])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        sched.step()
    s = time.perf_counter() - t0
    print(f"pytorch eager text FAFO: {args.steps / s:.2f} steps/s "
          f"(batch {B}, length {L}, {args.steps} timed steps, "
          f"{args.threads} thread, torch {torch.__version__})")


if __name__ == "__main__":
    main()
