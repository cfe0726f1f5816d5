#!/usr/bin/env bash
# Submits qkov workers to Slurm as one job array (not one job per trial).
#
#   deploy/slurm/launch-workers.sh --env-file ~/.qkov/cluster.env --workers 64 --concurrent 16 \
#       [--time 04:00:00] [--partition gpu] [--cpus-per-worker 1] [--gpus-per-worker 1] \
#       [--slots 1] [--batch-trials 8] [--warning 120] [--log-dir DIR] [--worker-bin PATH]
#       [-- extra sbatch args]
#
# The env file (keep it mode 0600) sets QKOV_SERVER=host:port and, on a
# cluster, QKOV_TOKEN_FILE (a worker-role token) and QKOV_TLS_* if the
# coordinator uses TLS. Prints the array job id. docs/cluster.md walks
# through a full example.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
env_file="" workers=4 concurrent="" time_limit="" partition="" cpus=1 gpus="" slots=1 warning=120
# --batch-trials, else $QKOV_BATCH_TRIALS from the shell, else 8.
batch=${QKOV_BATCH_TRIALS:-8}
# A build tree's worker when run from the source tree, else the installed one
# (the qkov-worker package puts this script in /usr/share/qkov/slurm).
worker_bin="$root/build/bin/qkov-worker"
[ -x "$worker_bin" ] || worker_bin=$(command -v qkov-worker || echo "$worker_bin")
log_dir="$PWD/qkov-slurm-logs"
extra=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --env-file) env_file=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --concurrent) concurrent=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --partition) partition=$2; shift 2 ;;
    --cpus-per-worker) cpus=$2; shift 2 ;;
    --gpus-per-worker) gpus=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    --batch-trials) batch=$2; shift 2 ;;
    --warning) warning=$2; shift 2 ;;
    --log-dir) log_dir=$2; shift 2 ;;
    --worker-bin) worker_bin=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "launch-workers: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$env_file" ] || { echo "launch-workers: --env-file is required" >&2; exit 2; }
[ -r "$env_file" ] || { echo "launch-workers: cannot read $env_file" >&2; exit 2; }
env_file=$(cd "$(dirname "$env_file")" && pwd)/$(basename "$env_file")
if [ -n "$(find "$env_file" -perm /077 2>/dev/null)" ]; then
  echo "launch-workers: warning: $env_file is readable by others; chmod 600 it" >&2
fi
grep -q '^QKOV_SERVER=' "$env_file" || { echo "launch-workers: $env_file does not set QKOV_SERVER" >&2; exit 2; }
[ -x "$worker_bin" ] || { echo "launch-workers: no worker binary at $worker_bin (build first or --worker-bin)" >&2; exit 2; }
[[ "$workers" =~ ^[0-9]+$ ]] && [ "$workers" -ge 1 ] || { echo "launch-workers: --workers must be >= 1" >&2; exit 2; }
mkdir -p "$log_dir"

args=(--parsable --array="0-$((workers - 1))${concurrent:+%$concurrent}"
      --cpus-per-task="$cpus" --signal="B:USR1@$warning"
      --output="$log_dir/qkov-worker-%A_%a.log" --chdir="$log_dir"
      --export="ALL,QKOV_ENV_FILE=$env_file,QKOV_WORKER_BIN=$worker_bin,QKOV_SLOTS=$slots,QKOV_BATCH_TRIALS=$batch")
[ -n "$time_limit" ] && args+=(--time="$time_limit")
[ -n "$partition" ] && args+=(--partition="$partition")
[ -n "$gpus" ] && args+=(--gpus-per-task="$gpus")
sbatch "${args[@]}" "${extra[@]}" "$here/qkov-worker.sbatch"
