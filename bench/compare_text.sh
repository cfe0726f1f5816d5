#!/usr/bin/env bash
# HateXplain model training speed against the same model in PyTorch eager,
# same machine, same thread count, same pieces, one run (docs/PERFORMANCE.md).
#
#   bench/compare_text.sh [STEPS] [THREADS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=${1:-200}
threads=${2:-1}
# The PyTorch peers' OpenBLAS pool at the same size, as SetTrainingThreads
# (worker/training/cpu_runtime.h) sets qkov's.
export OPENBLAS_NUM_THREADS=$threads
data=${QKOV_SHARED_DATA_DIR:-$root/../shared/data}
"$root/deploy/install-deps.sh" python3-torch
bin=${QKOV_BUILD_DIR:-$root/build}/bin
ids=$(mktemp)
trap 'rm -f "$ids"' EXIT
"$bin/qkov-data" --format=hatexplain --path="$data/hatexplain/train-reconstructed.jsonl" \
  --vocab="$data/tokenizers/bert-base-uncased/vocab.txt" --json > "$ids"
ours=$("$bin/text_bench" --data="$data" --steps="$steps" --threads="$threads")
eager=$(/usr/bin/python3 "$root/bench/text_eager_bench.py" --ids "$ids" --steps "$steps" --threads "$threads")
echo "$ours"
echo "$eager"
a=$(echo "$ours" | sed -n 's/.*: \([0-9.]*\) steps\/s.*/\1/p')
b=$(echo "$eager" | sed -n 's/.*: \([0-9.]*\) steps\/s.*/\1/p')
awk -v a="$a" -v b="$b" 'BEGIN {printf "qkov / eager: %.2fx per trial\n", a / b}'
