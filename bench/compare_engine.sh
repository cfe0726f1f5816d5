#!/usr/bin/env bash
# The synthetic engine against the stacked PyTorch peer
# (bench/pytorch_stacked_bench.py), in one invocation on one machine and
# thread count: trial-steps/s of training_bench --mode=speed with the
# analytic engine (the trainer's) and the autograd engine (its reference),
# and of the peer (as written, and again with subnormal floats flushed to
# zero, as qkov-worker and training_bench run by default), for T = 1, 8,
# 32 trials stacked and all four parameterizations; then the ratios, and the
# analytic engine's achieved GFLOP/s against torch.bmm's rate on
# [32, 50, 50].
#
#   bench/compare_engine.sh [STEPS] [THREADS] [ROUNDS]
#
# The four run in turn, ROUNDS times (default 3), and each figure is the
# best of its rounds: the VM's speed drifts within minutes, and
# interleaving exposes them to the same drift. GFLOP/s counts the matrix
# products the analytic engine performs per trial-step at batch 32,
# vocabulary 50 (docs/PERFORMANCE.md): 9, 6, 6 and 3 products of
# 32 x 50 x 50 for FAFO, FACO, CAFO and CACO.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-2000}
threads=${2:-1}
# The PyTorch peers' OpenBLAS pool at the same size, as SetTrainingThreads
# (worker/training/cpu_runtime.h) sets qkov's.
export OPENBLAS_NUM_THREADS=$threads
rounds=${3:-3}
"$root/deploy/install-deps.sh" python3-torch
bin=${QKOV_BUILD_DIR:-$root/build}/bin
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$rounds"); do
  "$bin/training_bench" --mode=speed --engine=analytic --steps="$steps" --threads="$threads" --stack=1,8,32 >"$out/analytic.$r"
  "$bin/training_bench" --mode=speed --engine=autograd --steps="$steps" --threads="$threads" --stack=1,8,32 >"$out/autograd.$r"
  /usr/bin/python3 "$root/bench/pytorch_stacked_bench.py" --steps "$steps" --threads "$threads" --stack 1,8,32 --bmm-rate >"$out/peer.$r"
  /usr/bin/python3 "$root/bench/pytorch_stacked_bench.py" --steps "$steps" --threads "$threads" --stack 1,8,32 --flush-denormal >"$out/peerftz.$r"
  echo "round $r of $rounds done" >&2
done
# best PREFIX: per parameterization the best of the rounds, "p t1 t8 t32".
best() {
  cat "$out/$1".* | awk '/^(FAFO|FACO|CAFO|CACO) / {
      for (i = 2; i <= 4; ++i) if ($i > b[$1, i]) b[$1, i] = $i; seen[$1] = 1 }
    END { n = split("FAFO FACO CAFO CACO", order, " ");
      for (k = 1; k <= n; ++k) { p = order[k]; if (seen[p])
        printf "%s %d %d %d\n", p, b[p, 2], b[p, 3], b[p, 4] } }'
}
ours=$(best analytic)
reference=$(best autograd)
peer=$(best peer)
peerftz=$(best peerftz)
rate=$(cat "$out"/peer.* | awk '/^batched product rate:/ { if ($4 > r) r = $4 } END { print r }')
for part in analytic:ours autograd:reference peer:peer peerftz:peerftz; do
  head -1 "$out/${part%%:*}.1"
  echo "param T=1 T=8 T=32"
  table=${part##*:}
  echo "${!table}"
done
echo "batched product rate: $rate GFLOP/s (torch.bmm [32, 50, 50] x [32, 50, 50], $threads thread; best of $rounds)"
echo
echo "best of $rounds rounds; analytic engine over the stacked peer (as written, and with subnormals flushed as qkov flushes them) and over the autograd engine; GFLOP/s at T=32 (share of the bmm rate)"
echo "param  peer T=1    T=8   T=32   peer+FTZ T=1   T=8   T=32   autograd T=1   T=8   T=32   GFLOP/s T=32"
while read -r p a1 a8 a32; do
  e=$(echo "$peer" | awk -v p="$p" '$1 == p {print $2, $3, $4}')
  f=$(echo "$peerftz" | awk -v p="$p" '$1 == p {print $2, $3, $4}')
  g=$(echo "$reference" | awk -v p="$p" '$1 == p {print $2, $3, $4}')
  [ -n "$e" ] && [ -n "$f" ] && [ -n "$g" ] || continue
  awk -v p="$p" -v a1="$a1" -v a8="$a8" -v a32="$a32" -v e="$e" -v f="$f" -v g="$g" -v r="$rate" '
    BEGIN {
      split(e, pe, " "); split(f, pf, " "); split(g, ga, " ");
      products = (p == "FAFO") ? 9 : (p == "CACO") ? 3 : 6;
      gflops = a32 * products * 2 * 32 * 50 * 50 / 1e9;
      printf "%-6s %5.1fx %6.1fx %5.1fx   %9.1fx %5.1fx %5.1fx   %9.1fx %5.1fx %5.1fx   %6.1f (%.0f%%)\n",
        p, a1/pe[1], a8/pe[2], a32/pe[3], a1/pf[1], a8/pf[2], a32/pf[3],
        a1/ga[1], a8/ga[2], a32/ga[3], gflops, 100 * gflops / r
    }'
done <<<"$ours"
