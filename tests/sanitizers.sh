#!/usr/bin/env bash
# The store, coordinator, service, CLI and common suites, and the watchers'
# load test, built with AddressSanitizer and UndefinedBehaviorSanitizer
# (-DQKOV_SANITIZE=address,undefined, in build-asan/ beside build/) and run:
# any report fails the run. tests/run_all.sh runs it before the main suite.
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
  -DQKOV_SANITIZE=address,undefined -DQKOV_BUILD_TESTS=ON \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
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
if [ "${#failed[@]}" -gt 0 ]; then
  echo "sanitizers: ${#failed[@]} suite(s) failed: ${failed[*]}" >&2
  exit 1
fi
