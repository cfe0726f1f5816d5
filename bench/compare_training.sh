#!/usr/bin/env bash
# Training throughput against PyTorch eager, same machine, same thread count,
# one run. Prints trial-steps/s for LibTorch with T trials stacked
# and for the authors' model in PyTorch eager, and the ratio in trials/hour.
#
#   bench/compare_training.sh [STEPS] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-2000}
threads=${2:-1}
# The PyTorch peers' OpenBLAS pool at the same size, as SetTrainingThreads
# (worker/training/cpu_runtime.h) sets qkov's.
export OPENBLAS_NUM_THREADS=$threads
"$root/deploy/install-deps.sh" python3-torch
bin=${QKOV_BUILD_DIR:-$root/build}/bin
ours=$("$bin/training_bench" --mode=speed --steps="$steps" --threads="$threads" --stack=1,8,16,32)
eager=$(/usr/bin/python3 "$root/bench/pytorch_eager_bench.py" --steps "$steps" --threads "$threads")
echo "$ours"
echo "$eager"
echo
echo "trials/hour, LibTorch over PyTorch eager (same trial length):"
echo "param T=1 T=8 T=16 T=32"
while read -r p t1 t8 t16 t32; do
  e=$(echo "$eager" | awk -v p="$p" '$1 == p {print $2}')
  [ -n "$e" ] || continue
  awk -v p="$p" -v e="$e" -v a="$t1" -v b="$t8" -v c="$t16" -v d="$t32" \
    'BEGIN {printf "%s %.1fx %.1fx %.1fx %.1fx\n", p, a/e, b/e, c/e, d/e}'
done < <(echo "$ours" | grep -E '^(FAFO|FACO|CAFO|CACO) ')
