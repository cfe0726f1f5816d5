#!/usr/bin/env bash
# docs/results.md: the reproduction report (docs/report.md) of the sweeps
# behind it, written from their results database.
#
#   deploy/local/results.sh run DIR        # run the sweeps into DIR/results.db,
#                                          # then write docs/results.md from it
#   deploy/local/results.sh write DB [OUT] # write OUT (default docs/results.md)
#                                          # from the database DB (or DB.xz)
#   deploy/local/results.sh submit DIR     # submit the sweeps into
#                                          # DIR/results.db, train nothing
#   deploy/local/results.sh check DIR [SECONDS] [REFERENCE]
#                                          # train them again for SECONDS
#                                          # (default 480) and compare with
#                                          # REFERENCE (default the committed
#                                          # database)
#
# `run` submits the sweeps listed in `sweeps` below to a local qkov-server
# and trains them with one qkov-worker per core (QKOV_WORKERS), each worker
# taking one trial at a time. The committed database holds 4.8 hours of
# worker time, wall-clock per attempt (docs/results.md gives each claim's
# sweep's and says which shared their cores).
#
# docs/results/results.db.xz is the database docs/results.md was written
# from; `run` leaves DIR/results.db, which `xz -9` makes such a file.
#
# `check` is how a change shows it moves no number: it submits the sweeps,
# the short ones first (check_order below), trains them as `run` does for
# SECONDS, and compares every final result and curve point the new
# database holds with REFERENCE's (a database, or one compressed with xz),
# matched by sweep name, config hash and metric name (and step): bit for
# bit (SQLite keeps the doubles as they were reported). It prints the
# counts and exits 1 if any value differs or nothing was compared. At the
# default, the quick synthetic, ODE, fixed-attention and SQuAD sweeps end
# and the two text ablations train for about four minutes on 2 cores.
# Bit for bit holds only on the same BLAS kernels (provenance's `blas`:
# OpenBLAS picks them by CPU), which `check` prints for both databases; on
# another machine, make the reference with the code before the change:
# `QKOV_BUILD_DIR=OLD_BUILD results.sh check REF_DIR`, then
# `results.sh check NEW_DIR 480 REF_DIR/results.db`.
#
# `write` serves a copy of DB (the original is never opened for writing) on
# a Unix socket named the same on every run, asks that server for the
# report, and writes OUT: the report's Markdown, then docs/results-reading.md
# (the hand-written reading of the verdicts). The same database and the same
# code give the same file byte for byte.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${QKOV_BUILD_DIR:-$root/build}/bin

# The sweeps of docs/results.md, as `qkov submit` arguments, one per line,
# in the order they went into its database. The first eight are the quick
# sweeps and two ablations (HateXplain's arms alike but for the ratio, SVA's
# with the token embedding at the base rate); the next four are the
# authors' experiments at the paper's budgets (their HateXplain arms, the
# fixed-attention run at 125,000 steps with 3 seeds, the fast-QK ratios and
# the four parameterizations at base rate 0.01); the last is the authors'
# SVA arms on the shipped file at their step count, then the HateXplain
# preset as it is (validation curves every 25 steps on 500 posts,
# docs/metrics.md), which serves the HateXplain claims; the same arms with
# curves every 250 steps on the whole validation split stay beside it for
# comparison. The SVA
# ablation and the quick SQuAD sweep have no named arms: `axes.arm=null`
# and the ratio axis make the configs they hold. Where two sweeps of a task
# hold the same number of finished trials per arm, the newer serves.
sweeps=(
  "--preset paper-four-param --quick"
  "--preset paper-ratio --quick"
  "--preset paper-theory"
  "--preset paper-fixed-attention --quick"
  "--preset ablation-hatexplain-ratio-only --set training.evaluation.eval_every=500 --set training.evaluation.eval_examples=256"
  "--preset paper-sva --quick --set axes.arm=null --set axes.lr_ratio=[1,100] --set training.text.embed_group=ov --set training.evaluation.eval_examples=256 --set axes.seed=[1234,1235,1236] --set name=ablation-sva-quick-embed-ov-3-seeds"
  "--preset paper-squad --quick --set axes.arm=null --set axes.lr_ratio=[1,20] --set axes.eta_ov=[3.0e-3]"
  "--preset paper-fixed-attention --quick --set axes.seed=[1234,1235,1236] --set name=paper-fixed-attention-quick-3-seeds"
  "--preset paper-fixed-attention --set axes.seed=[1234,1235,1236] --set name=paper-fixed-attention-3-seeds"
  "--preset paper-hatexplain --set training.evaluation.eval_every=250 --set training.evaluation.eval_examples=100000 --set name=paper-hatexplain-eval-250-full-split"
  "--preset paper-ratio"
  "--preset paper-four-param"
  "--preset paper-sva --quick --set axes.seed=[1234,1235,1236] --set name=paper-sva-quick-authors-3-seeds"
  "--preset paper-hatexplain"
)
# No claim is tied to a sweep here: `qkov report` serves each claim from
# the sweep of its task that holds the most finished trials of both arms
# (docs/report.md, "Which sweep serves a claim").

# The sweeps `check` submits, as indices into `sweeps`: the quick ones,
# whose trials end in seconds, before the two text ablations.
check_order=(0 1 2 3 6 7 4 5)

usage() {
  sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

pids=()
tmp=""
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server DB DIR LISTEN: a qkov-server on DB, its port file in DIR.
start_server() {
  "$bin/qkov-server" --db="$1" --listen="$3" --port_file="$2/server.port" 2>>"$2/server.log" &
  pids+=($!)
  for _ in $(seq 1 300); do
    [ -s "$2/server.port" ] && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "results.sh: qkov-server did not start; see $2/server.log" >&2
  exit 1
}

# Starts a server on DIR/results.db (a new file) and submits the sweeps to
# it; the server keeps running (`cleanup` stops it).
submit_sweeps() {
  local dir=$1
  # The presets' data paths are relative to the repository root, for the
  # CLI's check on submit and for the workers alike.
  cd "$root"
  mkdir -p "$dir"
  [ -e "$dir/results.db" ] && { echo "results.sh: $dir/results.db exists" >&2; exit 2; }
  start_server "$dir/results.db" "$dir" 127.0.0.1:0
  export QKOV_SERVER="127.0.0.1:$(cat "$dir/server.port")"
  local s i
  local order=("${@:2}")
  [ ${#order[@]} -gt 0 ] || order=("${!sweeps[@]}")
  set -f  # split each line into arguments; `[...]` is not a file pattern
  for i in "${order[@]}"; do
    s=${sweeps[$i]}
    # shellcheck disable=SC2086  # the arguments are split on purpose
    "$bin/qkov" submit $s
  done
  set +f
}

# start_workers DIR: one worker per core (QKOV_WORKERS), one trial at a
# time, each leaving when the queue is empty; their pids in worker_pids.
worker_pids=()
start_workers() {
  local workers=${QKOV_WORKERS:-$(nproc)} i
  for i in $(seq 1 "$workers"); do
    "$bin/qkov-worker" --server="$QKOV_SERVER" --name="results-$i" \
      --batch_trials=1 --exit_when_idle 2>>"$1/worker-$i.log" &
    worker_pids+=($!)
    pids+=($!)
  done
}

# compare NEW_DB REFERENCE_DB: the counts of results and curve points of
# NEW_DB that the reference holds too, and of those that differ; 1 if any
# differs or none was compared.
compare() {
  sqlite3 -readonly "$1" "ATTACH 'file:$2?mode=ro' AS ref;
    CREATE TEMP VIEW new_results AS
      SELECT s.name AS sweep, t.config_hash AS h, r.name AS n, r.value AS v
      FROM main.sweeps s JOIN main.trials t USING (sweep_id)
      JOIN main.results r USING (trial_id);
    CREATE TEMP VIEW ref_results AS
      SELECT s.name AS sweep, t.config_hash AS h, r.name AS n, r.value AS v
      FROM ref.sweeps s JOIN ref.trials t USING (sweep_id)
      JOIN ref.results r USING (trial_id);
    CREATE TEMP VIEW new_points AS
      SELECT DISTINCT s.name AS sweep, t.config_hash AS h, m.name AS n,
             m.step AS step, m.value AS v
      FROM main.sweeps s JOIN main.trials t USING (sweep_id)
      JOIN main.metrics m USING (trial_id);
    CREATE TEMP VIEW ref_points AS
      SELECT DISTINCT s.name AS sweep, t.config_hash AS h, m.name AS n,
             m.step AS step, m.value AS v
      FROM ref.sweeps s JOIN ref.trials t USING (sweep_id)
      JOIN ref.metrics m USING (trial_id);
    SELECT 'results', COUNT(*), SUM(o.n IS NULL),
           SUM(o.n IS NOT NULL AND o.v IS NOT n.v)
    FROM new_results n LEFT JOIN ref_results o USING (sweep, h, n);
    SELECT 'curve points', COUNT(*), SUM(o.n IS NULL),
           SUM(o.n IS NOT NULL AND o.v IS NOT n.v)
    FROM new_points n LEFT JOIN ref_points o USING (sweep, h, n, step);
    SELECT 'differ', n.sweep, n.h, n.n, n.v, o.v
    FROM new_results n JOIN ref_results o USING (sweep, h, n)
    WHERE o.v IS NOT n.v LIMIT 5;" | awk -F'|' '
    $1 == "differ" { print "  differs: " $2 " " substr($3, 1, 12) " " $4 ": " $5 " (reference " $6 ")"; next }
    { stored = $2; absent = $3 + 0; differ = $4 + 0; same = stored - absent - differ
      printf "%s: %d stored, %d compared, %d identical, %d differ\n", $1, stored, stored - absent, same, differ
      if (differ > 0 || stored - absent == 0) bad = 1 }
    END { exit bad }'
}

# The BLAS kernels (provenance's `blas`) database $1 trained with.
blas_of() {
  sqlite3 -readonly "$1" "SELECT DISTINCT json_extract(provenance_json, '$.blas')
    FROM attempts WHERE provenance_json <> '' LIMIT 1;"
}

check() {
  local dir seconds=${2:-480} reference=${3:-$root/docs/results/results.db.xz}
  dir=$(realpath -m "$1")
  reference=$(realpath "$reference")
  submit_sweeps "$dir" "${check_order[@]}"
  start_workers "$dir"
  local deadline=$((SECONDS + seconds)) p
  while [ "$SECONDS" -lt "$deadline" ]; do
    local alive=0
    for p in "${worker_pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    sleep 1
  done
  "$bin/qkov" status
  cleanup
  pids=()
  local ref
  ref=$(mktemp)
  case "$reference" in
    *.xz) xz -dc "$reference" >"$ref" ;;
    *) cp "$reference" "$ref" ;;
  esac
  echo "blas: this run's $(blas_of "$dir/results.db")"
  echo "      the reference's $(blas_of "$ref")"
  local rc=0
  compare "$dir/results.db" "$ref" || rc=1
  rm -f "$ref"
  return "$rc"
}

run() {
  local dir
  dir=$(realpath -m "$1")
  submit_sweeps "$dir"
  start_workers "$dir"
  local i
  for i in "${worker_pids[@]}"; do wait "$i"; done
  "$bin/qkov" status
  cleanup
  pids=()
  write "$dir/results.db" "$root/docs/results.md"
}

write() {
  local db out=${2:-$root/docs/results.md}
  db=$(realpath "$1")
  out=$(realpath -m "$out")
  [ -f "$db" ] || { echo "results.sh: no database $1" >&2; exit 2; }
  local sum
  tmp=$(mktemp -d)
  trap 'cleanup; rm -rf "$tmp"' EXIT
  case "$db" in
    *.xz) xz -dc "$db" >"$tmp/results.db" ;;
    *)
      # A server still writing keeps recent commits in the -wal file beside.
      if [ -s "$db-wal" ]; then
        echo "results.sh: $db-wal is not empty: stop the server using $db first" >&2
        exit 2
      fi
      cp "$db" "$tmp/results.db"
      ;;
  esac
  sum=$(sha256sum "$tmp/results.db" | cut -d' ' -f1)
  # The report names the server's address: a socket path relative to the
  # server's folder keeps it the same on every run.
  cd "$tmp"
  start_server results.db . unix:qkov.sock
  QKOV_SERVER=unix:qkov.sock "$bin/qkov" report --out report
  {
    echo "<!-- Written by deploy/local/results.sh from a results database"
    echo "     (sha256 $sum)."
    echo "     Edit docs/results-reading.md or common/report/claims.cc, not this file. -->"
    echo
    cat report/report.md
    echo
    cat "$root/docs/results-reading.md"
  } >"$out.tmp"
  mv "$out.tmp" "$out"
  # QKOV_REPORT_DIR: also keep the report's three files there (its JSON has
  # every number; tests/integration/results_md_test.sh reads it).
  if [ -n "${QKOV_REPORT_DIR:-}" ]; then
    mkdir -p "$QKOV_REPORT_DIR"
    cp report/report.md report/report.html report/report.json "$QKOV_REPORT_DIR/"
  fi
  echo "results.sh: wrote $out"
}

case "${1:-}" in
  run) [ $# -eq 2 ] || usage; run "$2" ;;
  write) [ $# -ge 2 ] && [ $# -le 3 ] || usage; write "$2" "${3:-}" ;;
  submit) [ $# -eq 2 ] || usage; submit_sweeps "$(realpath -m "$2")"; cleanup ;;
  check) [ $# -ge 2 ] && [ $# -le 4 ] || usage; check "$2" "${3:-}" "${4:-}" ;;
  *) usage ;;
esac
