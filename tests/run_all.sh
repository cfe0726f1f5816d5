#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is
# missing, builds with warnings as errors, runs the sanitized suites
# (tests/sanitizers.sh), then every ctest label (unit, integration, slow).
# ../shared/data must sit beside the checkout for the dataset tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Each phase's wall time, on stderr as it ends (CI's 90-minute budget).
phase() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "run_all: $name took $((SECONDS - start)) s" >&2
}
# Chromium and python3-websocket: the dashboard's browser test only;
# help2man: the man pages the package test packs; iproute2 and iptables:
# the multihost fault tests' namespaces and cuts; clang and its runtime
# (libFuzzer, the sanitizers): tests/sanitizers.sh's build and fuzz targets.
# prometheus (with promtool): the metrics tests and the alert rules tests.
# universal-ctags: the function-length check (tests/lint).
# python3-grpcio, -protobuf, -pandas, -numpy, -tqdm and -pytest: the
# notebook client (client/python) and its tests (tests/python); with
# -nbconvert, -ipykernel and -matplotlib, the notebook they execute; with
# -venv, -pip and -setuptools, `pip install ./client/python` in a venv;
# python3-build with the -setuptools-whl and -wheel-whl wheels, the
# isolated offline sdist and wheel builds (tests/python/test_pip_install.py).
phase install "$root/deploy/install-deps.sh" chromium python3-websocket help2man iproute2 \
  prometheus \
  python3-grpcio python3-protobuf python3-pandas python3-numpy python3-tqdm \
  python3-pytest python3-nbconvert python3-ipykernel python3-matplotlib \
  python3-venv python3-pip python3-setuptools \
  python3-build python3-setuptools-whl python3-wheel-whl \
  iptables clang libclang-rt-14-dev universal-ctags
QKOV_BUILD_DIR=${QKOV_BUILD_DIR:-$root/build} phase build "$root/deploy/build.sh" \
  -DQKOV_WERROR=ON -DQKOV_BUILD_TESTS=ON
# The store, coordinator and service suites under ASan+UBSan, and the fuzz
# targets (their own clang build tree); before the main suite, so that
# ctest's summary ends the run.
phase sanitizers "$root/tests/sanitizers.sh"
# The multi-threaded suites and the concurrency stress test under
# ThreadSanitizer (a third tree, with Abseil's Mutex built for TSan).
phase tsan "$root/tests/tsan.sh"
cd "${QKOV_BUILD_DIR:-$root/build}"
phase ctest ctest -j"$(nproc)" --output-on-failure --timeout 900
