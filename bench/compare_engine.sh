#!/usr/bin/env bash
# The synthetic engine against the stacked PyTorch peer
# (bench/pytorch_stacked_bench.py), one invocation, same machine and thread
# count: trial-steps/s of training_bench --mode=speed (analytic engine, and
# the autograd reference engine) and of the peer for T = 1, 8, 32 trials
# stacked, all four parameterizations; then the ratios, and the analytic
# engine's achieved GFLOP/s against torch.bmm's rate on [32, 50, 50].
#
#   bench/compare_engine.sh [STEPS] [THREADS]
#
# GFLOP/s counts the matrix products the analytic engine performs per
# trial-step at batch 32, vocabulary 50 (docs/PERFORMANCE.md): 9, 6, 6 and 3
# products of 32 x 50 x 50 for FAFO, FACO, CAFO and CACO.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-2000}
threads=${2:-1}
"$root/deploy/install-deps.sh" python3-torch
bin=${QKOV_BUILD_DIR:-$root/build}/bin
ours=$("$bin/training_bench" --mode=speed --engine=analytic --steps="$steps" --threads="$threads" --stack=1,8,32)
echo "$ours"
reference=$("$bin/training_bench" --mode=speed --engine=autograd --steps="$steps" --threads="$threads" --stack=1,8,32)
echo "$reference"
peer=$(/usr/bin/python3 "$root/bench/pytorch_stacked_bench.py" --steps "$steps" --threads "$threads" --stack 1,8,32 --bmm-rate)
echo "$peer"
rate=$(echo "$peer" | awk '/^batched product rate:/ {print $4}')
echo
echo "analytic engine / stacked peer, and / autograd engine; GFLOP/s at T=32 (share of the bmm rate $rate GFLOP/s)"
echo "param  peer T=1    T=8    T=32   autograd T=1  T=8   T=32   GFLOP/s T=32"
while read -r p a1 a8 a32; do
  e=$(echo "$peer" | awk -v p="$p" '$1 == p {print $2, $3, $4}')
  g=$(echo "$reference" | awk -v p="$p" '$1 == p {print $2, $3, $4}')
  [ -n "$e" ] && [ -n "$g" ] || continue
  awk -v p="$p" -v a1="$a1" -v a8="$a8" -v a32="$a32" -v e="$e" -v g="$g" -v r="$rate" '
    BEGIN {
      split(e, pe, " "); split(g, ga, " ");
      products = (p == "FAFO") ? 9 : (p == "CACO") ? 3 : 6;
      gflops = a32 * products * 2 * 32 * 50 * 50 / 1e9;
      printf "%-6s %5.1fx %6.1fx %6.1fx   %9.1fx %5.1fx %5.1fx   %6.1f (%.0f%%)\n",
        p, a1/pe[1], a8/pe[2], a32/pe[3], a1/ga[1], a8/ga[2], a32/ga[3],
        gflops, 100 * gflops / r
    }'
done < <(echo "$ours" | grep -E '^(FAFO|FACO|CAFO|CACO) ')
