#!/usr/bin/env bash
# SQuAD decoder (the authors' size) training speed against the same model in
# PyTorch eager, same machine, same thread count, same batches, one run
# (docs/PERFORMANCE.md).
#
#   bench/compare_squad.sh [STEPS] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-10}
threads=${2:-1}
# The PyTorch peers' OpenBLAS pool at the same size, as SetTrainingThreads
# (worker/training/cpu_runtime.h) sets qkov's.
export OPENBLAS_NUM_THREADS=$threads
data=${QKOV_SHARED_DATA_DIR:-$root/../shared/data}
"$root/deploy/install-deps.sh" python3-torch
bin=${QKOV_BUILD_DIR:-$root/build}/bin
questions=$(mktemp)
trap 'rm -f "$questions"' EXIT
ours=$("$bin/squad_bench" --data="$data" --steps="$steps" --threads="$threads" --dump="$questions")
eager=$(/usr/bin/python3 "$root/bench/squad_eager_bench.py" --questions "$questions" --threads "$threads")
echo "$ours"
echo "$eager"
a=$(echo "$ours" | sed -n 's/.*: \([0-9.]*\) tokens\/s.*/\1/p')
b=$(echo "$eager" | sed -n 's/.*: \([0-9.]*\) tokens\/s.*/\1/p')
awk -v a="$a" -v b="$b" 'BEGIN {printf "qkov / eager: %.2fx tokens/s\n", a / b}'
