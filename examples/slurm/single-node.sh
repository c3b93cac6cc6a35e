#!/bin/bash
# Makes this machine a one-node Slurm cluster (Debian's slurm-wlm and munge), to try the
# shipped array job for real:
#
#   sudo examples/slurm/single-node.sh          (installs, configures and starts munged,
#                                                slurmctld and slurmd; idempotent)
#   CDNLAB=$PWD/target/release/cdnlab examples/slurm/submit.sh 2
#   squeue; tail -f cdnlab-reproduce-*.log
#   examples/slurm/single-node.sh stop          (stops the daemons)
#
# It starts the daemons directly (no systemd needed, so it also works in a container). The node
# is this host with the CPUs and memory `slurmd -C` finds; one partition, `main`.
set -euo pipefail
if [ "${1:-}" = stop ]; then
  pkill -x slurmd || true
  pkill -x slurmctld || true
  pkill -x munged || true
  exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
node=$(hostname -s)
cpus=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' | head -1)
mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' | head -1)
mkdir -p /etc/slurm /var/spool/slurmd /var/spool/slurmctld /var/log/slurm /run/munge
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=cdnlab
SlurmctldHost=$node
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$node CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
# munge: a key, and the daemon as its own user.
[ -s /etc/munge/munge.key ] || mungekey --create
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
chmod 0700 /etc/munge
pgrep -x munged >/dev/null || runuser -u munge -- munged
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 1 30); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    sinfo
    exit 0
  fi
  sleep 1
done
echo "the node did not come up; see /var/log/slurm/slurmctld.log and slurmd.log" >&2
sinfo >&2 || true
exit 1
