#!/usr/bin/env bash
# AddressSanitizer and UndefinedBehaviorSanitizer, and the fuzz targets, in
# one clang tree (build-asan/ beside build/: -DQKOV_SANITIZE=address,undefined
# -DQKOV_FUZZ=ON). Any report or finding fails the run.
#
#   tests/sanitizers.sh         the store, coordinator, service, CLI and
#                               common suites and watch_load_test, then each
#                               fuzz target but the checkpoint's replays its
#                               seeds and fuzzes QKOV_FUZZ_SECONDS (default
#                               20) through tests/fuzz/run.sh. About 10
#                               minutes on 2 cores; tests/run_all.sh runs it.
#   tests/sanitizers.sh --full  everything of the unit and integration
#                               labels, worker and LibTorch suites included,
#                               with the programs they start (qkov-server,
#                               qkov-worker, qkov, qkov-data) built the same
#                               way, and all fuzz targets, checkpoint_fuzzer
#                               included. 10.5 minutes on 2 cores once the
#                               whole tree is built. Run by hand before a
#                               release (README).
#
# Every sanitized process writes its reports under build-asan/asan-logs/,
# so a report from a server or worker that a test started counts too.
# LibTorch is not instrumented; tests/lsan.supp holds the leak reports
# inside it, one line each with its reason.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${QKOV_ASAN_BUILD_DIR:-${QKOV_BUILD_DIR:-$root/build}-asan}
full=0
if [ "${1:-}" = --full ]; then full=1; fi
targets=(common_test storage_test server_core_test service_test client_test
  watch_load_test)
fuzzers=(qkov_fuzzers)
fuzz_targets=()
for f in "$root"/tests/fuzz/*_fuzzer.cc; do
  name=$(basename "$f" .cc)
  [ "$name" = checkpoint_fuzzer ] || fuzz_targets+=("$name")
done
if [ "$full" = 1 ]; then
  fuzzers=(qkov_fuzzers checkpoint_fuzzer)
  fuzz_targets=()  # run.sh's default: every target
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DQKOV_SANITIZE=address,undefined -DQKOV_FUZZ=ON -DQKOV_BUILD_TESTS=ON \
  >/dev/null
logs=$build/asan-logs
rm -rf "$logs"
mkdir -p "$logs"
# allocator_may_return_null: an allocation too big for the machine fails as
# it would without ASan (the worker turns it into RESOURCE_EXHAUSTED) rather
# than aborting. quarantine_size_mb: freed memory held back to catch uses
# after free, 16 MB instead of 256, so the RSS budgets of the HTTP attack
# tests measure the server rather than the quarantine.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1:quarantine_size_mb=16:log_path=$logs/asan"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan"
failed=()
reports() {  # the report files written since the last call, listed
  # (a file holding only a WARNING, such as a refused allocation that the
  # code handles, is not a report)
  local found
  found=$(find "$logs" -type f -newer "$logs/.mark" \
    -exec grep -lE 'ERROR: |runtime error:' {} + 2>/dev/null | head -5)
  touch "$logs/.mark"
  [ -n "$found" ] && echo "$found"
  return 0
}
touch "$logs/.mark"
if [ "$full" = 1 ]; then
  cmake --build "$build" -j"$(nproc)" --target "${fuzzers[@]}"
  cmake --build "$build" -j"$(nproc)"
  # Every unit and integration test but three: the Slurm cluster's (its own
  # machine set-up); the multihost cases, whose cuts and leases are timed
  # for workers at full speed; and StackMemoryTest, which reads glibc's heap
  # statistics (mallinfo2), which ASan's allocator replaces.
  if ! (cd "$build" && ctest -j"$(nproc)" -L 'unit|integration' \
        -LE 'slurm|multihost' -E 'StackMemoryTest' \
        --timeout 2400 --output-on-failure >"$build/ctest-full.log" 2>&1); then
    grep -E 'tests passed|FAILED|Failed|Exception' "$build/ctest-full.log" |
      tail -30 >&2
    failed+=(ctest)
  fi
  tail -3 "$build/ctest-full.log"
  found=$(reports)
  if [ -n "$found" ]; then
    echo "sanitizers: reports from processes the tests started:" >&2
    for f in $found; do head -40 "$f" >&2; done
    failed+=(reports)
  fi
  targets=()
else
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" "${fuzzers[@]}"
fi
for t in "${targets[@]}"; do
  log="$build/$t.log"
  if timeout 900 "$build/bin/$t" >"$log" 2>&1 && [ -z "$(reports)" ]; then
    echo "sanitizers: $t: $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
  else
    echo "sanitizers: $t FAILED; its output and reports:" >&2
    tail -30 "$log" >&2
    for f in $(find "$logs" -type f -name 'asan*' -o -type f -name 'ubsan*'); do
      head -40 "$f" >&2
    done
    failed+=("$t")
  fi
done
# run.sh sets the sanitizers' options of the fuzz targets itself.
if ! "$root/tests/fuzz/run.sh" --build "$build" \
  --seconds "${QKOV_FUZZ_SECONDS:-20}" "${fuzz_targets[@]}"; then
  failed+=(fuzzers)
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "sanitizers: ${#failed[@]} suite(s) failed: ${failed[*]}" >&2
  exit 1
fi
