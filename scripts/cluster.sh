#!/usr/bin/env bash
# A single-node Slurm cluster (munge + slurmctld + slurmd) on this machine, for the Slurm end-to-end
# tests (tests/e2e/slurm_test.cpp) and for trying `deep-profile run --launcher 'srun -n 2'` and
# `deep-profile sweep --executor slurm --submit` without a real cluster. No systemd needed.
#
#   eval "$(scripts/cluster.sh start)"   # prints `export SLURM_CONF=...` once sinfo says idle
#   scripts/cluster.sh stop              # stops exactly the daemons it started (PID files), never by name
#   scripts/cluster.sh status
#
# State (configuration, PID files, logs, spool, munge key and socket) lives in $LLMPROF_CLUSTER_DIR
# (default /tmp/llmprof-cluster); one directory is one cluster, so tests give each their own and
# several can run on one host at once: the controller and node ports are picked free at start.
# Needs root (the daemons run as root, munged as the munge user) and the packages slurmctld slurmd
# slurm-client munge (scripts/install-deps.sh installs them). Exit 1 with the reason when it cannot start.
# The node advertises 4 GPUs whose gres.conf File= entries are character devices made here (plain
# files leave CUDA_VISIBLE_DEVICES empty), so `--gpus=1` and `--gpus-per-task=1` work without GPUs.
set -euo pipefail
state="${LLMPROF_CLUSTER_DIR:-/tmp/llmprof-cluster}"
conf="$state/slurm.conf"

die() { echo "cluster.sh: $*" >&2; exit 1; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# A TCP port nobody listens on now (the kernel's choice), so two clusters on one host do not collide.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

write_config() {
  local host cpus ctld_port node_port
  host="$(hostname -s)"
  cpus="$(nproc)"
  ctld_port="$(free_port)"
  node_port="$(free_port)"
  mkdir -p "$state/spool/ctld" "$state/spool/d" "$state/log" "$state/dev" "$state/munge"
  for i in 0 1 2 3; do [ -e "$state/dev/gpu$i" ] || mknod "$state/dev/gpu$i" c 1 3; done
  # jobcomp/filetxt: its log gives array task states and exit codes without slurmdbd.
  # sched_min_interval=0,batch_sched_delay=0: an array of 4 runs in 1.8 s instead of 3.6 s.
  cat > "$conf" <<CONF
ClusterName=llmprof
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$node_port
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
  for tool in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do
    [ -x "$tool" ] || die "$tool is missing: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge"
  done
  command -v sinfo >/dev/null || die "sinfo is missing: apt-get install --no-install-recommends slurm-client"
  command -v python3 >/dev/null || die "python3 is missing (it picks free ports): apt-get install python3"
  if pid_alive "$state/slurmctld.pid" && pid_alive "$state/slurmd.pid"; then
    echo "export SLURM_CONF=$conf"
    return 0
  fi
  stop  # what is left of an earlier start in this directory (a daemon that died alone)
  write_config
  # munged refuses a key or socket directory that others can write; a fresh key per cluster.
  chown munge:munge "$state/munge"
  chmod 0700 "$state/munge"
  [ -f "$state/munge/munge.key" ] || runuser -u munge -- /usr/sbin/mungekey --create --keyfile="$state/munge/munge.key" >/dev/null 2>&1 \
    || runuser -u munge -- sh -c "dd if=/dev/urandom bs=1 count=1024 of='$state/munge/munge.key' 2>/dev/null && chmod 0400 '$state/munge/munge.key'"
  runuser -u munge -- /usr/sbin/munged --socket="$state/munge/munge.socket" --pid-file="$state/munge/munged.pid" \
    --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed" --key-file="$state/munge/munge.key" --force \
    || die "munged did not start; see $state/munge/munged.log"
  export SLURM_CONF="$conf"
  /usr/sbin/slurmctld -f "$conf" -i || die "slurmctld did not start; see $state/log/slurmctld.log"
  /usr/sbin/slurmd -f "$conf" || die "slurmd did not start; see $state/log/slurmd.log"
  # Polled, bounded: the node registers once slurmd has started; a loaded machine may need more than 10 s, so the
  # bound (60 s) is only there to turn a node that never registers into a failure.
  for _ in $(seq 1 600); do
    if [ "$(sinfo -h -o %T 2>/dev/null | head -1)" = "idle" ]; then
      echo "export SLURM_CONF=$conf"
      return 0
    fi
    sleep 0.1
  done
  echo "cluster.sh: the node did not become idle within 60 s; last lines of the logs in $state/log:" >&2
  tail -5 "$state/log/slurmctld.log" "$state/log/slurmd.log" >&2 || true
  stop
  exit 1
}

# Stops the daemons whose PID files this directory holds, node first, and waits for each to exit.
stop() {
  local pidfile pid
  for pidfile in "$state/slurmd.pid" "$state/slurmctld.pid" "$state/munge/munged.pid"; do
    if pid_alive "$pidfile"; then
      pid="$(cat "$pidfile")"
      kill "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
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
