#!/usr/bin/env bash
# docs/results.md is the reproduction report (docs/report.md) of the database
# it names, docs/results/results.db.xz: deploy/local/results.sh writes it
# again from that database with this build's qkov-server and qkov, and the
# file must come out byte for byte the same. A change to the claims or to the
# report's format fails here until docs/results.md is written again
# (`deploy/local/results.sh write docs/results/results.db.xz`).
# On the same report's JSON it then checks what issue 59 asked of the
# committed database: every level of fast-qk-sharpens and
# collapsed-ov-sharpens lies where an arm's metric has left its starting
# value (none on the plateau both arms share), and the ODE's end point is
# within the digits the authors' notebook prints.
#   results_md_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
QKOV_REPORT_DIR=$out/report QKOV_BUILD_DIR=$build \
  "$src/deploy/local/results.sh" write \
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
python3 - "$out/report/report.json" <<'EOF'
import json
import sys

claims = {c["id"]: c for c in json.load(open(sys.argv[1]))["claims"]}
for cid in ("fast-qk-sharpens", "collapsed-ov-sharpens"):
    c = claims[cid]
    choice = c["level_choice"]
    assert c["levels"], cid + ": no level"
    for level in c["levels"]:
        moved = [abs(level[arm]["mean"] - start) > threshold
                 for arm, start, threshold in zip(
                     ("faster", "baseline"), choice["arm_starts"],
                     choice["arm_thresholds"])]
        assert any(moved), (cid, level["level"], "on the plateau")
    print(cid, "levels", [l["level"] for l in c["levels"]],
          "each past the plateau (starts", choice["arm_starts"], ")")
notebook = {"mu-ov": (81.669, 42.282), "mu-qk": (0.559, 1.395),
            "alpha": (0.149, 0.287)}
for name, (at_001, at_01) in notebook.items():
    c = claims["ode-end-point-" + name]
    assert c["verdict"] == "reproduced", (name, c["why"])
    got = {l["level"]: l["faster"]["mean"] for l in c["levels"]}
    for r, value in ((0.01, at_001), (0.1, at_01)):
        assert abs(got[r] - value) <= 0.0005, (name, r, got[r], value)
    print("ode-end-point-" + name, "within the notebook's digits:", got)
EOF
