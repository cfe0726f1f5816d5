#!/usr/bin/env bash
# What watching a sweep, or judging it by an early-stopping rule, costs
# the server, measured as a researcher meets it: a real qkov-server (SQLite
# file), real qkov-worker processes (one per core), the real `qkov watch`.
# The same sweep (SEEDS FAFO synthetic trials of STEPS steps, reporting
# every REPORT_EVERY steps, never stopping at a target loss) runs once per
# mode in each of ROUNDS rounds, interleaved, on one server whose history
# grows from run to run. Modes (MODES, comma-separated):
#   none    no watcher, no rule
#   watch   one `qkov watch` for the whole run
#   median  early_stopping {rule: median, metric: train_loss, min_steps:
#           STEPS/20}, no watcher
# Prints, per run: wall time, the server's CPU seconds, its CPU per report,
# and the reports stored.
#
#   bench/watch_cost.sh [ROUNDS] [STEPS] [REPORT_EVERY] [SEEDS] [MODES]
#   (defaults 3 300000 250 2 none,watch; the early-stopping case of
#   docs/PERFORMANCE.md: 2 100000 50 8 none,median)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
steps=${2:-300000}
every=${3:-250}
seeds=${4:-2}
modes=${5:-none,watch}
bin=${QKOV_BUILD_DIR:-$root/build}/bin
QKOV_BUILD_TARGETS="qkov-server qkov-worker qkov" "$root/deploy/build.sh" >/dev/null
dir=$(mktemp -d /tmp/qkov-watch-cost-XXXXXX)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

"$bin/qkov-server" --db="$dir/results.db" --listen=127.0.0.1:0 \
  --port_file="$dir/server.port" 2>>"$dir/server.log" &
server_pid=$!
for _ in $(seq 1 300); do
  [ -s "$dir/server.port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$dir/server.port" ] || { echo "qkov-server did not start" >&2; exit 1; }
export QKOV_SERVER="127.0.0.1:$(cat "$dir/server.port")"
tick=$(getconf CLK_TCK)
# The server's CPU seconds so far (user + system, /proc/PID/stat).
server_cpu() {
  awk -v t="$tick" '{printf "%.2f", ($14 + $15) / t}' "/proc/$server_pid/stat"
}
workers=$(nproc)

seed_list=$(seq -s, 1 "$seeds")
write_sweep() {  # NAME [EARLY_STOPPING]
  cat <<YAML
name: $1
axes:
  parameterization: [FAFO]
  lr_ratio: [1]
  eta_ov: [0.1]
  seed: [$seed_list]
${2:-}
training:
  task: synthetic
  max_steps: $steps
  batch_size: 32
  report_every: $every
  target_loss: -1
  optimizer: {kind: sgd, schedule: constant}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
YAML
}

echo "watch_cost: $seeds FAFO trials of $steps steps, a report every $every steps, $workers workers, $rounds rounds of: ${modes//,/ }"
printf '%-8s %-5s %9s %12s %14s %9s\n' run round "wall s" "server CPU s" "CPU/report ms" reports
for round in $(seq 1 "$rounds"); do
  for mode in ${modes//,/ }; do
    name="watched-$round-$mode"
    rule=
    [ "$mode" = median ] && rule="early_stopping: {rule: median, metric: train_loss, min_steps: $((steps / 20))}"
    write_sweep "$name" "$rule" >"$dir/sweep.yaml"
    "$bin/qkov" submit "$dir/sweep.yaml" >/dev/null
    cpu0=$(server_cpu)
    t0=$(date +%s.%N)
    pids=()
    for i in $(seq 1 "$workers"); do
      "$bin/qkov-worker" --server="$QKOV_SERVER" --name="bench-$i" \
        --exit_when_idle 2>>"$dir/worker.log" &
      pids+=($!)
    done
    watch_pid=
    if [ "$mode" = watch ]; then
      "$bin/qkov" watch "$name" >"$dir/watch.out" 2>&1 &
      watch_pid=$!
    fi
    for p in "${pids[@]}"; do wait "$p"; done
    t1=$(date +%s.%N)
    cpu1=$(server_cpu)
    [ -n "$watch_pid" ] && wait "$watch_pid"
    reports=$("$bin/qkov" sql "SELECT COUNT(DISTINCT m.trial_id || '/' || m.step) FROM metrics m JOIN trials t USING (trial_id) JOIN sweeps s USING (sweep_id) WHERE s.name = '$name'" --format=csv 2>/dev/null | tail -1)
    awk -v r="$mode" -v n="$round" -v a="$t0" -v b="$t1" -v c0="$cpu0" -v c1="$cpu1" -v k="$reports" \
      'BEGIN {printf "%-8s %-5s %9.1f %12.2f %14.3f %9d\n", r, n, b - a, c1 - c0, 1000 * (c1 - c0) / k, k}'
  done
done
