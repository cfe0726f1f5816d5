#!/usr/bin/env bash
# Configures and builds qkov-sweep into build/ (binaries in build/bin).
# Extra arguments go to cmake's configure step. QKOV_BUILD_TARGETS (names
# separated by spaces) builds only those targets and what they need, as the
# main job does; unset, everything configured is built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${QKOV_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
targets=()
for t in ${QKOV_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
