#!/usr/bin/env python3
"""The SQuAD decoder in PyTorch eager, as a researcher would write it (a
nanoGPT-style pre-LN block with one nn.Linear per projection): the peer of
squad_bench.

6 layers, d_model 300, 6 heads of 50, MLP 1200 (exact GELU), dropout 0.2
(embeddings, attention weights, attention and MLP outputs), 256 learned
positions, final LayerNorm, output tied to the token embedding; the loss is
label-smoothed (0.1) cross-entropy on the answer positions only, which alone
are unembedded. AdamW in three groups (QK at 20x, token embedding at 0.1x
without weight decay, the rest with weight decay 0.05), global-norm clipping
0.5. Reads the questions that `squad_bench --dump` wrote, in its order, so
both sides train on the same batches.

    squad_bench --steps=10 --dump=q.jsonl
    /usr/bin/python3 bench/squad_eager_bench.py --questions q.jsonl --batch 32

Prints training tokens/s (prompt and answer tokens, padding not counted)
over every batch of the file after --warmup untimed ones. Needs Debian's
python3-torch.
"""
import argparse
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, NCTX, D, H, DMLP, LAYERS, DROP = 50257, 256, 300, 6, 1200, 6, 0.2
EOT = 50256


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.q, self.k = nn.Linear(D, D), nn.Linear(D, D)
        self.v, self.o = nn.Linear(D, D), nn.Linear(D, D)
        self.fc, self.proj = nn.Linear(D, DMLP), nn.Linear(DMLP, D)
        self.drop = nn.Dropout(DROP)

    def forward(self, x, causal):
        b, t, _ = x.shape
        h = self.ln1(x)
        def heads(y):
            return y.view(b, t, H, D // H).transpose(1, 2)
        q, k, v = heads(self.q(h)), heads(self.k(h)), heads(self.v(h))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
        a = self.drop(s.masked_fill(causal[:t, :t], float("-inf")).softmax(-1))
        z = (a @ v).transpose(1, 2).reshape(b, t, D)
        x = x + self.drop(self.o(z))
        return x + self.drop(self.proj(F.gelu(self.fc(self.ln2(x)))))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D)
        nn.init.normal_(self.wte.weight, std=0.1)
        self.wpe = nn.Embedding(NCTX, D)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(D)
        self.drop = nn.Dropout(DROP)
        self.register_buffer(
            "causal", torch.triu(torch.ones(NCTX, NCTX, dtype=torch.bool), 1))

    def forward(self, ids):
        x = self.drop(self.wte(ids) + self.wpe.weight[:ids.shape[1]])
        for block in self.blocks:
            x = block(x, self.causal)
        return self.ln_f(x)


def make_batch(questions):
    seqs = [q["prompt"] + q["answer"] for q in questions]
    length = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), length), EOT, dtype=torch.long)
    labels = torch.full((len(seqs), length), EOT, dtype=torch.long)
    mask = torch.zeros((len(seqs), length), dtype=torch.bool)
    for i, (q, s) in enumerate(zip(questions, seqs)):
        ids[i, :len(s)] = torch.tensor(s)
        labels[i, :len(s) - 1] = torch.tensor(s[1:])
        p = len(q["prompt"])
        mask[i, p - 1:len(s) - 1] = True  # the positions predicting answer tokens
    return ids, labels, mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1234)
    with open(args.questions) as f:
        questions = [json.loads(line) for line in f]
    batches = [make_batch(questions[i:i + args.batch])
               for i in range(0, len(questions), args.batch)]
    model = Decoder()
    qk, embed, rest = [], [], []
    for name, p in model.named_parameters():
        if name == "wte.weight":
            embed.append(p)
        elif ".q." in name or ".k." in name:
            qk.append(p)
        else:
            rest.append(p)
    base = 5e-5
    opt = torch.optim.AdamW([
        {"params": qk, "lr": 20 * base, "weight_decay": 0.05},
        {"params": embed, "lr": 0.1 * base, "weight_decay": 0.0},
        {"params": rest, "lr": base, "weight_decay": 0.05},
    ])
    model.train()

    def step(ids, labels, mask):
        opt.zero_grad()
        h = model(ids)
        logits = h[mask] @ model.wte.weight.t()
        loss = F.cross_entropy(logits, labels[mask], label_smoothing=0.1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss.item()

    for i in range(args.warmup):
        step(*batches[i % len(batches)])
    start = time.perf_counter()
    for b in batches:
        step(*b)
    seconds = time.perf_counter() - start
    tokens = sum(len(q["prompt"]) + len(q["answer"]) for q in questions)
    print(f"pytorch eager squad: {tokens / seconds:.1f} tokens/s "
          f"({len(batches) / seconds:.3f} steps/s; batch {args.batch}, "
          f"{len(batches)} timed steps, {tokens} tokens, {args.threads} "
          f"threads, torch {torch.__version__})")


if __name__ == "__main__":
    main()
