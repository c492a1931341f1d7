#!/usr/bin/env bash
# A real two-node Slurm cluster on this host, for tests and for trying
# `cairnd --executor=slurm` (see docs/slurm.md).
#
#   scripts/slurm-local.sh start DIR   # prints: export SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh stop DIR
#
# start: its own munged (key, socket and pid file under DIR), slurmctld and
# two slurmd named n1 and n2 (2 CPUs each as far as Slurm knows), every file
# under DIR (config, state, spool, logs, pid files), free TCP ports picked at
# the first start. Returns once both nodes are idle. Idempotent: a cluster
# already running under DIR is left as it is.
# stop: cancels every job of the cluster, then stops exactly the daemons whose
# pid files lie under DIR. Idempotent.
#
# Needs Debian's slurmctld, slurmd, slurm-client and munge (CAIRN_PACKAGES in
# scripts/common.sh). Runs as root (the daemons and the jobs run as the
# calling user; SlurmUser is the calling user).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
cmd="$1"
mkdir -p "$2"
dir="$(cd "$2" && pwd)"
conf="$dir/slurm.conf"
export SLURM_CONF="$conf"

die() {
  echo "slurm-local: $*" >&2
  exit 1
}

# True if the pid file names a live (not zombie) process.
alive() {
  local pid
  [ -s "$1" ] || return 1
  pid="$(cat "$1")"
  [ -r "/proc/$pid/stat" ] || return 1
  # A daemon reparented to an init that does not reap stays a zombie a while.
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}

free_ports() {
  /usr/bin/python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

write_conf() {
  local ports ctld n1 n2 user host
  read -r ctld n1 n2 < <(free_ports 3)
  user="$(id -un)"
  host="$(hostname -s)"
  cat >"$conf.tmp" <<EOF
# Written by scripts/slurm-local.sh: a two-node test cluster on one host.
ClusterName=cairnlocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=10
SlurmctldPort=$ctld
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=2,bf_interval=2
EnforcePartLimits=ALL
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
JobRequeue=1
MinJobAge=300
ReturnToService=1
SlurmdTimeout=10
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$n1 CPUs=2 RealMemory=4000
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$n2 CPUs=2 RealMemory=4000
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.tmp" "$conf"
}

start_munge() {
  alive "$dir/munge/munged.pid" && return 0
  mkdir -p "$dir/munge"
  # Clients of every user reach the socket, as /run/munge (0755) on a real
  # cluster: srun inside a job runs as the job user. The key stays 0600.
  chmod 755 "$dir/munge"
  [ -s "$dir/munge/munge.key" ] ||
    mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null
  chmod 600 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
    die "munged did not start (see $dir/munge/munged.log)"
}

wait_idle() {
  local i out
  for i in $(seq 1 150); do
    out="$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u || true)"
    if [ "$(grep -cE '^n[12] idle$' <<<"$out")" = 2 ]; then return 0; fi
    sleep 0.1
  done
  die "nodes not idle after 15 s: $(tr '\n' ' ' <<<"$out") (logs: $dir/log)"
}

start() {
  for b in munged mungekey slurmctld slurmd sbatch sinfo scancel; do
    command -v "$b" >/dev/null ||
      die "$b not found: install slurmctld slurmd slurm-client munge"
  done
  mkdir -p "$dir/state" "$dir/spool/n1" "$dir/spool/n2" "$dir/run" "$dir/log"
  # Jobs run as other users (sbatch --uid): they exec their script from the
  # spool dir, so it must be reachable (a mktemp -d dir is 0700).
  chmod 755 "$dir" "$dir/spool" "$dir/spool/n1" "$dir/spool/n2"
  [ -s "$conf" ] || write_conf
  start_munge
  alive "$dir/run/slurmctld.pid" ||
    slurmctld -f "$conf" || die "slurmctld did not start (see $dir/log)"
  for n in n1 n2; do
    alive "$dir/run/slurmd-$n.pid" ||
      slurmd -f "$conf" -N "$n" || die "slurmd $n did not start (see $dir/log)"
  done
  wait_idle
  echo "export SLURM_CONF=$conf"
}

stop_pidfile() {
  local f="$1" pid i
  alive "$f" || {
    rm -f "$f"
    return 0
  }
  pid="$(cat "$f")"
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    alive "$f" || break
    sleep 0.05
  done
  alive "$f" && kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

stop() {
  [ -s "$conf" ] || return 0
  if alive "$dir/run/slurmctld.pid"; then
    # Jobs' processes outlive slurmd: cancel them first and wait a little.
    local ids
    ids="$(squeue -h -o %i 2>/dev/null || true)"
    # shellcheck disable=SC2086
    [ -z "$ids" ] || scancel --quiet $ids 2>/dev/null || true
    local i
    for i in $(seq 1 50); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  for n in n1 n2; do stop_pidfile "$dir/run/slurmd-$n.pid"; done
  stop_pidfile "$dir/run/slurmctld.pid"
  stop_pidfile "$dir/munge/munged.pid"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
