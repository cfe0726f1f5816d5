#!/usr/bin/env bash
# A stored trial is found again by its config_hash (a re-submission adds
# only the grid points a sweep lacks; UNIQUE (sweep_id, config_hash)), so a
# sweep submitted again must expand to the same canonical configs and
# hashes. docs/results/results.db.xz holds docs/results.md's sweeps as an
# earlier build expanded them (the synthetic, ODE, fixed-attention, text and
# SQuAD presets): this build submits the same sweeps to a fresh server
# (`deploy/local/results.sh submit`, nothing trained) and every trial's
# (sweep, config_hash, config_json) must come out the same. A change to a
# default or to the config's fields fails here until stored configs are
# migrated (or the change leaves them as they are).
#   config_hash_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
QKOV_BUILD_DIR=$build "$src/deploy/local/results.sh" submit "$out/new" \
  >"$out/log" 2>&1 || {
  cat "$out/log" >&2
  exit 1
}
xz -dc "$src/docs/results/results.db.xz" >"$out/committed.db"
query="SELECT s.name, t.config_hash, t.config_json FROM trials t
       JOIN sweeps s USING (sweep_id) ORDER BY 1, 2"
sqlite3 "$out/committed.db" "$query" >"$out/committed.txt"
sqlite3 "$out/new/results.db" "$query" >"$out/new.txt"
n=$(wc -l <"$out/committed.txt")
if [ "$n" -eq 0 ] || ! cmp -s "$out/committed.txt" "$out/new.txt"; then
  echo "the sweeps of docs/results/results.db.xz expand to other configs:" >&2
  diff "$out/committed.txt" "$out/new.txt" | cut -c1-300 | head -20 >&2
  exit 1
fi
echo "config_hash_test: $n trials expand to their stored configs and hashes"
