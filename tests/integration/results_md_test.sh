#!/usr/bin/env bash
# docs/results.md is the reproduction report (docs/report.md) of the database
# it names, docs/results/results.db.xz: deploy/local/results.sh writes it
# again from that database with this build's qkov-server and qkov, and the
# file must come out byte for byte the same. A change to the claims or to the
# report's format fails here until docs/results.md is written again
# (`deploy/local/results.sh write docs/results/results.db.xz`).
#   results_md_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
QKOV_BUILD_DIR=$build "$src/deploy/local/results.sh" write \
  "$src/docs/results/results.db.xz" "$out/results.md" >"$out/log" 2>&1 || {
  cat "$out/log" >&2
  exit 1
}
if ! cmp -s "$src/docs/results.md" "$out/results.md"; then
  echo "docs/results.md is not the report of docs/results/results.db.xz:" >&2
  diff -u "$src/docs/results.md" "$out/results.md" | head -40 >&2
  exit 1
fi
echo "docs/results.md: the report of docs/results/results.db.xz, byte for byte"
