#!/usr/bin/env bash
# Starts a real single-node Slurm cluster (munge, slurmctld, slurmd) on this
# machine for the Slurm integration tests, from the facts measured in
# ../shared/docs/slurm-single-node.md. Idempotent: a running, healthy cluster
# with the same config is left alone. Needs root (apt, /etc/slurm, /run).
#
# Environment: LOCAL_SLURM_CPUS (default: nproc), LOCAL_SLURM_MEM_MB,
# LOCAL_SLURM_NODE (default: short hostname), LOCAL_SLURM_SKIP_INSTALL=1.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  exec sudo -E "$0" "$@"
fi

if [ "${LOCAL_SLURM_SKIP_INSTALL:-0}" != 1 ]; then
  need=()
  for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  if [ "${#need[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1
  fi
fi

host=$(hostname -s)
node=${LOCAL_SLURM_NODE:-$host}
cpus=${LOCAL_SLURM_CPUS:-$(nproc)}
mem=${LOCAL_SLURM_MEM_MB:-$(awk '/MemTotal/ {print int($2/1024*0.9)}' /proc/meminfo)}
state=/run/local-slurm
mkdir -p "$state" /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm
chown slurm:slurm /var/spool/slurmctld /var/log/slurm 2>/dev/null || true

conf=$(cat <<CONF
ClusterName=qkov-test
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=cred_expire=10
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=2,bf_interval=2
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
KillWait=30
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} Boards=1 SocketsPerBoard=1 CoresPerSocket=${cpus} ThreadsPerCore=1 RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP
CONF
)

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

changed=1
if [ -f /etc/slurm/slurm.conf ] && [ "$(cat /etc/slurm/slurm.conf)" = "$conf" ]; then changed=0; fi
if [ "$changed" = 1 ]; then
  echo "$conf" > /etc/slurm/slurm.conf
  for d in slurmd slurmctld; do
    if running /run/slurm/$d.pid; then kill "$(cat /run/slurm/$d.pid)"; fi
  done
  for _ in $(seq 1 100); do
    running /run/slurm/slurmctld.pid || running /run/slurm/slurmd.pid || break
    sleep 0.1
  done
fi

# munge
if [ ! -f /etc/munge/munge.key ]; then mungekey --create >/dev/null 2>&1 || /usr/sbin/mungekey -c; fi
chown -R munge:munge /etc/munge && chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge && chmod 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  # munged writes its own pid file once it has daemonized.
  if [ -s /run/munge/munged.pid ]; then cp /run/munge/munged.pid "$state/munged.pid"; else pgrep -o -u munge munged > "$state/munged.pid" || true; fi
fi

running /run/slurm/slurmctld.pid || /usr/sbin/slurmctld -i
running /run/slurm/slurmd.pid || /usr/sbin/slurmd -N "$node"

for _ in $(seq 1 ${LOCAL_SLURM_TIMEOUT:-150}); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
    echo "slurm: node $node ready ($cpus CPUs)"
    exit 0
  fi
  scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1 || true
  sleep 0.2
done
echo "slurm: node did not become ready; see /var/log/slurm" >&2
exit 1
