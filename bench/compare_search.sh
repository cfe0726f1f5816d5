#!/usr/bin/env bash
# A ratio search against the grid of equal resolution over the same range
# (docs/adaptive.md): the paper-ratio-search preset (FAFO, distinct-token
# attention >= 0.6, lr_ratio in [1, 100], resolution 1.2), and the same sweep
# as a grid (`--set search=null`) of ceil(ln 100 / ln 1.2) + 1 = 27 ratios
# log-spaced from 1 to 100, on one local server with WORKERS workers. Prints
# the trials each used, each one's bracket, and whether the search's answer
# (the smallest ratio it found reaching the target) lies inside the grid's
# bracket.
#
#   bench/compare_search.sh [--quick] [WORKERS]
# Needs a build (deploy/build.sh); --quick is the preset's quick budget.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${QKOV_BUILD_DIR:-$root/build}/bin
quick=()
if [ "${1:-}" = "--quick" ]; then quick=(--quick); shift; fi
workers=${1:-$(nproc)}
data=$(mktemp -d /tmp/qkov-compare-search-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

"$bin/qkov-server" --db="$data/results.db" --listen=127.0.0.1:0 \
  --port_file="$data/server.port" 2>>"$data/server.log" &
pids+=($!)
for _ in $(seq 1 300); do [ -s "$data/server.port" ] && break; sleep 0.1; done
export QKOV_SERVER="127.0.0.1:$(cat "$data/server.port")"

ratios=$(awk 'BEGIN { n = 27; for (i = 0; i < n; i++)
  printf "%s%.10g", (i ? ", " : ""), exp(log(100) * i / (n - 1)) }')
search=$("$bin/qkov" submit --preset paper-ratio-search "${quick[@]}" --set name=search)
grid=$("$bin/qkov" submit --preset paper-ratio-search "${quick[@]}" --set name=grid \
  --set search=null --set "axes.lr_ratio=[$ratios]")
echo "$search"
echo "$grid"
start=$(date +%s)
for i in $(seq 1 "$workers"); do
  "$bin/qkov-worker" --server="$QKOV_SERVER" --name="w$i" --exit_when_idle \
    2>>"$data/worker-$i.log" &
  pids+=($!)
done
"$bin/qkov" watch search >/dev/null
"$bin/qkov" watch grid >/dev/null
echo "wall time: $(( $(date +%s) - start )) s for both, $workers workers"

count() { "$bin/qkov" sql "SELECT COUNT(*) FROM trials t JOIN sweeps s USING (sweep_id) WHERE s.name = '$1'" --format csv | tail -1; }
n_search=$(count search)
n_grid=$(count grid)
echo
"$bin/qkov" search search
echo
echo "the search's probes (seed mean of distinct_attention per ratio):"
"$bin/qkov" results search --by lr_ratio --metrics distinct_attention
# The grid's bracket: the smallest ratio whose seed mean reaches 0.6, and the
# largest ratio under it.
"$bin/qkov" results grid --by lr_ratio --metrics distinct_attention --format csv |
  awk -F, -v ns="$n_search" -v ng="$n_grid" -v search="$("$bin/qkov" search search --format csv | sed -n 2p)" '
  NR > 1 { r[NR] = $1; m[NR] = $3; last = NR }
  END {
    split(search, s, ",")
    for (i = 2; i <= last; i++) if (m[i] >= 0.6) { above = r[i]; below = (i > 2 ? r[i-1] : 0); break }
    printf "\ngrid bracket:   [%.6g, %.6g] (means %.4g, %.4g)\n", below, above, m[i-1], m[i]
    printf "search bracket: [%.6g, %.6g] (state %s)\n", s[4], s[5], s[3]
    printf "trials: search %d, grid %d (%.2f of the grid)\n", ns, ng, ns / ng
    # The search'"'"'s answer: the smallest ratio it found reaching the target.
    inside = (s[5] + 0 > below * (1 + 1e-9) && s[5] + 0 <= above * (1 + 1e-9))
    printf "search answer %.6g inside the grid bracket: %s\n", s[5], inside ? "yes" : "no"
  }'
echo "data: $data"
