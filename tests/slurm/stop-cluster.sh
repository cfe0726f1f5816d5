#!/usr/bin/env bash
# Stops the test cluster started by start-cluster.sh: cancels every job
# (unless --keep-jobs), then stops slurmd, slurmctld and the munged it started.
set -uo pipefail
if [ "$(id -u)" -ne 0 ]; then exec sudo -E "$0" "$@"; fi
keep=0
for a in "$@"; do [ "$a" = "--keep-jobs" ] && keep=1; done
if [ "$keep" = 0 ] && command -v scancel >/dev/null; then scancel --user=root 2>/dev/null; scancel -u "$(logname 2>/dev/null || echo root)" 2>/dev/null; fi
for f in /run/slurm/slurmd.pid /run/slurm/slurmctld.pid /run/local-slurm/munged.pid; do
  # shellcheck disable=SC2046
  [ -f "$f" ] && kill $(cat "$f") 2>/dev/null
done
rm -f /run/local-slurm/munged.pid
for _ in $(seq 1 100); do
  alive=0
  for f in /run/slurm/slurmd.pid /run/slurm/slurmctld.pid; do
    [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1
  done
  [ "$alive" = 0 ] && break
  sleep 0.1
done
exit 0
