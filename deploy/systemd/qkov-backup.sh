#!/usr/bin/env bash
# Online backup of the results database while qkov-server runs: SQLite's
# VACUUM INTO writes a consistent, compact copy from a read transaction (WAL
# lets the server keep writing). Keeps the newest --keep copies.
#
#   qkov-backup.sh /var/lib/qkov/results.db /backup/qkov [--keep 14]
set -euo pipefail
db=${1:?usage: qkov-backup.sh DB BACKUP_DIR [--keep N]}
out=${2:?usage: qkov-backup.sh DB BACKUP_DIR [--keep N]}
keep=14
if [ "${3:-}" = "--keep" ]; then keep=${4:?}; fi
mkdir -p "$out"
target="$out/results-$(date -u +%Y%m%dT%H%M%SZ).db"
sqlite3 "file:$db?mode=ro" "VACUUM INTO '$target'"
# Check the copy before trusting it.
[ "$(sqlite3 "$target" 'PRAGMA integrity_check')" = ok ] || { echo "qkov-backup: $target failed integrity_check" >&2; exit 1; }
echo "$target"
ls -1t "$out"/results-*.db | tail -n +"$((keep + 1))" | xargs -r rm -f
