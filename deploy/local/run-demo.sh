#!/usr/bin/env bash
# The main job, in one command: install what is missing, build, start a local
# qkov-server (SQLite file in a data folder) and one qkov-worker per core,
# submit the demo sweep, show progress, print the results table, write the
# figures, stop everything.
#
#   deploy/local/run-demo.sh                          # the demo sweep
#   deploy/local/run-demo.sh SWEEP_FILE [--set k=v]   # any sweep file
#   deploy/local/run-demo.sh --preset paper-ratio [--quick] [--set k=v]
#
# Environment: QKOV_DATA (data folder; default qkov-data/demo-<time>),
# QKOV_WORKERS (default: number of cores), QKOV_BATCH_TRIALS (compatible
# trials each worker trains together; default 8), QKOV_HTTP_LISTEN (the
# dashboard's address; default 127.0.0.1:0, a free port, printed).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
submit_args=()
if [ "${1:-}" = "--preset" ]; then
  submit_args=("$@")
  set --
elif [ "$#" -gt 0 ]; then
  submit_args=("$1")
  shift
else
  submit_args=("$root/deploy/local/demo-sweep.yaml")
fi

"$root/deploy/install-deps.sh"
echo "== building (first build takes several minutes on 2 cores)"
# Only what this script runs: the server, the worker and the CLI.
QKOV_BUILD_TARGETS="qkov-server qkov-worker qkov" "$root/deploy/build.sh"
bin=${QKOV_BUILD_DIR:-$root/build}/bin

data=${QKOV_DATA:-$root/qkov-data/demo-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$data"
workers=${QKOV_WORKERS:-$(nproc)}
pids=()
server_pid=""
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$bin/qkov-server" --db="$data/results.db" --listen=127.0.0.1:0 --port_file="$data/server.port" \
  --http_listen="${QKOV_HTTP_LISTEN:-127.0.0.1:0}" --http_port_file="$data/http.port" \
  2>>"$data/server.log" &
server_pid=$!
for _ in $(seq 1 300); do
  [ -s "$data/server.port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$data/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$data/server.port" ] || { echo "qkov-server did not start; see $data/server.log" >&2; exit 1; }
export QKOV_SERVER="127.0.0.1:$(cat "$data/server.port")"
echo "== qkov-server on $QKOV_SERVER, database $data/results.db"
for _ in $(seq 1 50); do [ -s "$data/http.port" ] && break; sleep 0.1; done
http_host=${QKOV_HTTP_LISTEN:-127.0.0.1:0}
http_host=${http_host%:*}
[ "$http_host" = "0.0.0.0" ] && http_host=localhost
echo "== dashboard: http://$http_host:$(cat "$data/http.port")/ (open it in a browser; live while the sweep runs)"

submit_out=$("$bin/qkov" submit "${submit_args[@]}" "$@")
echo "$submit_out"
sweep=$(echo "$submit_out" | sed -n 's/^sweep \([^:]*\):.*/\1/p')

for i in $(seq 1 "$workers"); do
  "$bin/qkov-worker" --server="$QKOV_SERVER" --name="local-$i" --batch_trials="${QKOV_BATCH_TRIALS:-8}" \
    --exit_when_idle 2>>"$data/worker-$i.log" &
  pids+=($!)
done
echo "== $workers workers started; logs in $data"

"$bin/qkov" watch "$sweep"
for p in "${pids[@]}"; do wait "$p"; done
pids=()

echo "== results (one row per trial; definitions in docs/metrics.md)"
"$bin/qkov" results "$sweep" | tee "$data/results.txt"
echo "== mean over seeds, 95% confidence interval"
# The real-text presets: their task's summary metrics
# (client/metric_defaults.cc) per arm; the authors' presets hold named arms
# (docs/sweep-files.md, "Arms"), the ablation two ratios.
case "$sweep" in
  paper-hatexplain* | paper-sva* | paper-squad*)
    summary=(--by arm,lr_ratio,eta_ov) ;;
  ablation-hatexplain*)
    summary=(--by parameterization,lr_ratio,eta_ov) ;;
  *) summary=(--by parameterization,lr_ratio --metrics accuracy,distinct_attention,ac) ;;
esac
"$bin/qkov" results "$sweep" "${summary[@]}" | tee "$data/summary.txt"
"$bin/qkov" export "$sweep" -o "$data/results.csv"
"$bin/qkov" export "$sweep" --per point -o "$data/curves.csv"
echo "== figures"
"$bin/qkov" plot "$sweep" --out "$data/plots"
# A preset's quick run: its view (a matched comparison) and what it shows,
# or why it cannot on this budget (common/presets.cc).
preset=""
quick=0
for ((i = 0; i < ${#submit_args[@]}; i++)); do
  [ "${submit_args[$i]}" = "--preset" ] && preset=${submit_args[$((i + 1))]:-}
  [ "${submit_args[$i]}" = "--quick" ] && quick=1
done
if [ -n "$preset" ] && [ "$quick" = 1 ]; then
  mapfile -t view < <("$bin/qkov" presets "$preset" --view)
  if [ "${#view[@]}" -gt 0 ]; then
    echo "== the view that shows it: qkov results $sweep ${view[*]}"
    "$bin/qkov" results "$sweep" "${view[@]}" | tee "$data/view.txt" ||
      echo "(the view could not be computed; see the line above)"
  fi
  echo "== what this quick run shows"
  "$bin/qkov" presets "$preset" --note | fold -s -w 100
fi
echo "== in $data: results.db, results.txt, summary.txt, results.csv, curves.csv, plots/"
echo "== the dashboard stops with this script; to browse these results again:"
echo "   $bin/qkov-server --db=$data/results.db --http_listen=127.0.0.1:8080   # then http://127.0.0.1:8080/"
