#!/usr/bin/env bash
# Replays each fuzz target's seed corpus, then fuzzes it for a fixed time.
#
#   tests/fuzz/run.sh [--seconds N] [--build DIR] [--merge] [TARGET...]
#
# --seconds N  fuzzing time per target (default 20; 0: replay only).
# --build DIR  where the targets were built (default build-asan beside
#              build/, as tests/sanitizers.sh makes it with -DQKOV_FUZZ=ON).
# --merge      add the inputs that reach new coverage to the seed corpus
#              (tests/fuzz/corpus/TARGET; libFuzzer's -merge=1). Without it
#              the corpus is only read.
# TARGET...    some targets only (default: all of tests/fuzz/*_fuzzer.cc).
#
# Prints one line per target: seconds, executions, edges covered (cov),
# features (ft), corpus size, findings. A finding (crash, leak, timeout,
# out-of-memory, a broken property) is kept under $build/fuzz-findings/ and
# fails the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=20
build=${QKOV_ASAN_BUILD_DIR:-${QKOV_BUILD_DIR:-$root/build}-asan}
merge=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$root"/tests/fuzz/*_fuzzer.cc; do
    targets+=("$(basename "$f" .cc)")
  done
fi
findings=$build/fuzz-findings
mkdir -p "$findings"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
# The checkpoint target trains tiny models: one BLAS thread.
export OPENBLAS_NUM_THREADS=1
failed=()
for t in "${targets[@]}"; do
  bin=$build/bin/$t
  seeds=$root/tests/fuzz/corpus/$t
  if [ ! -x "$bin" ]; then
    echo "fuzz: $t is not built in $build (cmake -DQKOV_FUZZ=ON)" >&2
    failed+=("$t")
    continue
  fi
  rm -f "$findings/$t-"*
  work=$(mktemp -d)
  log=$build/fuzz-$t.log
  # New inputs go to the first folder ($work); the seeds are only read.
  # -timeout: one input may take 10 s (the HTTP target waits up to 5 s for
  # a reply by itself); -rss_limit_mb bounds memory.
  flags=(-timeout=10 -rss_limit_mb=2560 -max_len=65536 -print_final_stats=1
    "-artifact_prefix=$findings/$t-")
  if [ "$seconds" -gt 0 ]; then
    flags+=("-max_total_time=$seconds")
  else
    flags+=(-runs=0)
  fi
  if (cd "$work" && timeout $((seconds + 120)) "$bin" "${flags[@]}" \
        "$work" "$seeds") >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$t")
  fi
  execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" |
    awk '{print $2}' | tail -1 || true)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corpus=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$last")
  found=$(ls "$findings" | grep -c "^$t-" || true)
  echo "fuzz: $t: $status, ${seconds} s, ${execs:-?} executions," \
    "cov ${cov:-?}, ft ${ft:-?}, corpus ${corpus:-?}, findings $found"
  if [ "$status" != ok ]; then
    grep -E 'ERROR:|property broken|runtime error|SUMMARY' "$log" | head -5 >&2
    echo "fuzz: $t: its log: $log" >&2
  fi
  if [ "$merge" = 1 ] && [ "$status" = ok ]; then
    "$bin" -merge=1 "$seeds" "$work" >>"$log" 2>&1
  fi
  rm -rf "$work"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
