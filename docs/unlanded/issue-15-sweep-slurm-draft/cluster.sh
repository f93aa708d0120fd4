#!/usr/bin/env bash
# A single-node Slurm cluster (munge + slurmctld + slurmd) on this machine, for the multi-rank
# end-to-end tests and for trying `deep-profile run --launcher 'srun -n 2'` and
# `deep-profile sweep --executor slurm --submit` without a real cluster. No systemd needed.
#
#   scripts/cluster.sh start    # prints `export SLURM_CONF=...`; ready when sinfo says idle
#   scripts/cluster.sh stop     # stops exactly the daemons it started (PID files), never by name
#   scripts/cluster.sh status
#
# State (configuration, PID files, logs, spool) lives in $LLMPROF_CLUSTER_DIR (default
# /tmp/llmprof-cluster). Needs root (the daemons run as root; munged as the munge user) and the
# packages slurmctld slurmd slurm-client munge (scripts/install-deps.sh installs them).
# The node advertises 4 GPUs whose gres.conf File= entries are character devices made here, so
# `--gpus=1` and `--gpus-per-task=1` work (and set CUDA_VISIBLE_DEVICES) on a machine without GPUs.
set -euo pipefail
state="${LLMPROF_CLUSTER_DIR:-/tmp/llmprof-cluster}"
conf="$state/slurm.conf"

die() { echo "cluster.sh: $*" >&2; exit 1; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_config() {
  local host cpus
  host="$(hostname -s)"
  cpus="$(nproc)"
  mkdir -p "$state/spool/ctld" "$state/spool/d" "$state/log" "$state/dev" "$state/munge"
  for i in 0 1 2 3; do [ -e "$state/dev/gpu$i" ] || mknod "$state/dev/gpu$i" c 1 3; done
  cat > "$conf" <<CONF
ClusterName=llmprof
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$state/munge/munge.socket
CryptoType=crypto/munge
StateSaveLocation=$state/spool/ctld
SlurmdSpoolDir=$state/spool/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$state/log/jobcomp.log
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  : > "$state/gres.conf"
  for i in 0 1 2 3; do echo "NodeName=$host Name=gpu File=$state/dev/gpu$i" >> "$state/gres.conf"; done
}

start() {
  [ "$(id -u)" -eq 0 ] || die "needs root (the Slurm daemons run as root here)"
  for tool in munged slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || die "$tool is missing: apt-get install slurmctld slurmd slurm-client munge"
  done
  if pid_alive "$state/slurmctld.pid" && pid_alive "$state/slurmd.pid"; then
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  write_config
  chown munge:munge "$state/munge"
  if ! pid_alive "$state/munge/munged.pid"; then
    runuser -u munge -- /usr/sbin/munged --socket="$state/munge/munge.socket" --pid-file="$state/munge/munged.pid" \
      --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed" --force
  fi
  export SLURM_CONF="$conf"
  /usr/sbin/slurmctld -f "$conf" -i
  /usr/sbin/slurmd -f "$conf"
  for _ in $(seq 1 100); do
    if [ "$(sinfo -h -o %T 2>/dev/null | head -1)" = "idle" ]; then
      echo "export SLURM_CONF=$conf"
      return 0
    fi
    sleep 0.1
  done
  echo "cluster.sh: the node did not become idle within 10 s; logs in $state/log:" >&2
  tail -5 "$state/log/slurmctld.log" "$state/log/slurmd.log" >&2 || true
  stop
  exit 1
}

stop() {
  for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid" "$state/munge/munged.pid"; do
    if pid_alive "$pidfile"; then
      local pid
      pid="$(cat "$pidfile")"
      kill "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "$pidfile"
  done
}

status() {
  if pid_alive "$state/slurmctld.pid" && pid_alive "$state/slurmd.pid"; then
    SLURM_CONF="$conf" sinfo
  else
    echo "cluster.sh: not running (state in $state)"
    return 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: scripts/cluster.sh start|stop|status" >&2; exit 2 ;;
esac
