#!/usr/bin/env bash
# The store, coordinator, service, CLI and common suites, and the watchers'
# load test, built with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# (-DQKOV_SANITIZE=address,undefined) in build-asan/ beside build/, and run:
# any report fails the run. The same build holds the libFuzzer targets
# (-DQKOV_FUZZ=ON): each replays its seed corpus and fuzzes for
# QKOV_FUZZ_SECONDS (default 20) through tests/fuzz/run.sh. tests/run_all.sh
# runs this before the main suite.
#
# Not here yet: the suites that load LibTorch (worker, training,
# integration through qkov-worker), and ThreadSanitizer, which cannot see
# absl::Mutex in Debian's uninstrumented Abseil (CMakeLists.txt,
# QKOV_SANITIZE).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${QKOV_ASAN_BUILD_DIR:-${QKOV_BUILD_DIR:-$root/build}-asan}
targets=(common_test storage_test server_core_test service_test client_test
  watch_load_test)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DQKOV_SANITIZE=address,undefined -DQKOV_FUZZ=ON -DQKOV_BUILD_TESTS=ON \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" qkov_fuzzers
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for t in "${targets[@]}"; do
  log="$build/$t.log"
  if timeout 900 "$build/bin/$t" >"$log" 2>&1 &&
    ! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log"; then
    echo "sanitizers: $t: $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
  else
    echo "sanitizers: $t FAILED; its output:" >&2
    tail -60 "$log" >&2
    failed+=("$t")
  fi
done
if ! "$root/tests/fuzz/run.sh" --build "$build" \
  --seconds "${QKOV_FUZZ_SECONDS:-20}"; then
  failed+=(fuzzers)
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "sanitizers: ${#failed[@]} suite(s) failed: ${failed[*]}" >&2
  exit 1
fi
