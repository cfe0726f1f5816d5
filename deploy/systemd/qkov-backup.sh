#!/usr/bin/env bash
# Online backup of the results database while qkov-server runs: SQLite's
# VACUUM INTO writes a consistent, compact copy from a read transaction (WAL
# lets the server keep writing). Keeps the newest --keep copies.
#
#   qkov-backup.sh /var/lib/qkov/results.db /var/backups/qkov [--keep 14]
#
# The copy is written under a name no reader takes for a backup
# (.results-TIME.db.partial), checked with PRAGMA integrity_check, and only
# then renamed to results-TIME.db: every results-*.db in the folder passed
# its check when it was written, and the newest is the last good backup
# (qkov-server --backup_dir turns its age into a metric). A copy that fails
# is deleted and the script exits 1, naming the check's first lines; the
# older copies are kept. Exit codes: 0 a verified copy, 1 the copy failed,
# 2 bad arguments.
set -euo pipefail
usage="usage: qkov-backup.sh DB BACKUP_DIR [--keep N]"
db=${1:-}
out=${2:-}
[ -n "$db" ] && [ -n "$out" ] || { echo "qkov-backup: $usage" >&2; exit 2; }
keep=14
if [ "${3:-}" = "--keep" ]; then keep=${4:-}; fi
case "$keep" in
  '' | *[!0-9]* | 0) echo "qkov-backup: --keep takes a whole number of at least 1 ($usage)" >&2; exit 2 ;;
esac
[ -f "$db" ] || { echo "qkov-backup: no database $db" >&2; exit 2; }
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
partial="$out/.results-$stamp.db.partial"
target="$out/results-$stamp.db"
trap 'rm -f "$partial"' EXIT
rm -f "$partial"
sqlite3 "file:$db?mode=ro" "VACUUM INTO '$partial'"
check=$(sqlite3 "$partial" 'PRAGMA integrity_check' 2>&1 || true)
if [ "$check" != ok ]; then
  echo "qkov-backup: the copy of $db failed integrity_check; no backup written: $(printf '%s' "$check" | head -n 3 | tr '\n' ' ')" >&2
  exit 1
fi
sync "$partial" 2>/dev/null || true
mv "$partial" "$target"
echo "$target"
ls -1t "$out"/results-*.db | tail -n +"$((keep + 1))" | xargs -r rm -f
