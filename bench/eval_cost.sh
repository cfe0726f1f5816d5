#!/usr/bin/env bash
# The cost of evaluation during training (docs/metrics.md, "Curves during
# training"): each task's trial timed with its default evaluation.eval_every
# and with eval_every 0, interleaved ROUNDS times, through a real server and
# one worker (one thread). Prints seconds per trial and the ratio.
#   bench/eval_cost.sh [ROUNDS]     from the repository root, after a build
#   TASKS=hatexplain bench/eval_cost.sh 2    one task (hatexplain, squad)
set -euo pipefail
rounds=${1:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${QKOV_BIN:-$root/build/bin}
dir=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$dir"' EXIT
"$bin/qkov-server" --db="$dir/r.db" --listen=127.0.0.1:0 \
  --port_file="$dir/port" > "$dir/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do [[ -s $dir/port ]] && break; sleep 0.1; done
q() { "$bin/qkov" --server="127.0.0.1:$(cat "$dir/port")" "$@"; }
cd "$root"
# task name, preset and settings, its default eval_every
tasks=(
  "hatexplain|--preset paper-hatexplain --quick --set axes.lr_ratio=[1]"
  "squad|$root/docs/experiments/squad-matched.yaml --set axes.lr_ratio=[1] --set training.max_steps=1000 --set training.optimizer.warmup_steps=100 --set training.evaluation.eval_every=500"
)
for round in $(seq "$rounds"); do
  for t in "${tasks[@]}"; do
    name=${t%%|*}
    [[ -n ${TASKS:-} && " $TASKS " != *" $name "* ]] && continue
    args=${t#*|}
    for every in default 0; do
      sweep="cost-$name-$every-$round"
      extra=()
      [[ $every == 0 ]] && extra=(--set training.evaluation.eval_every=0)
      # shellcheck disable=SC2086
      q submit $args "${extra[@]}" --set "name=$sweep" > /dev/null
      "$bin/qkov-worker" --server="127.0.0.1:$(cat "$dir/port")" --threads=1 \
        --exit_when_idle > /dev/null 2>&1
      secs=$(sqlite3 "$dir/r.db" "SELECT (a.ended_ms - a.started_ms) / 1000.0 \
        FROM attempts a JOIN trials t USING (trial_id) JOIN sweeps s \
        USING (sweep_id) WHERE s.name = '$sweep' AND a.state = 'done'")
      echo "$name eval_every=$every round $round: $secs s"
    done
  done
done
