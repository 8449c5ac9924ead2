#!/usr/bin/env bash
# A real single-node SLURM cluster on localhost, for h5sweep's SLURM tests.
#
#   tests/slurm/local-cluster.sh start   install (Debian slurm-wlm, as root) and start it
#   tests/slurm/local-cluster.sh stop    stop the daemons
#   tests/slurm/local-cluster.sh status  exit 0 if a job can run now
#
# No systemd and no cgroups: the daemons are started directly, with process tracking by
# /proc and no accounting database (status checks use squeue; job completions are logged to
# $STATE/jobcomp.log, which the tests read as SLURM's own record).
#
# It never touches a real cluster: it refuses to start or stop where a SLURM configuration it
# did not write is present, or a SLURM daemon it did not start is running, and it stops only
# the daemons whose PID files it wrote.
set -euo pipefail

STATE=${H5SWEEP_SLURM_STATE:-/var/lib/h5sweep-slurm}
CONF=${H5SWEEP_SLURM_CONF:-/etc/slurm/slurm.conf}  # the tests of this script point it elsewhere
MARK="# Written by h5sweep's tests/slurm/local-cluster.sh: one node, this machine."
CLUSTER_NAME=h5sweep-test

log() { echo "local-cluster: $*" >&2; }

refuse() { log "refusing to $1: $2"; exit 3; }

ours_conf() { [[ ! -e $CONF ]] || [[ $(head -n 1 "$CONF") == "$MARK" ]]; }

# pid of a daemon this script started (its PID file, and the process still that daemon), or nothing
our_pid() {
    local file=$STATE/$1.pid pid
    [[ -s $file ]] || return 0
    pid=$(cat "$file")
    [[ -r /proc/$pid/comm && $(cat "/proc/$pid/comm") == "$1" ]] && echo "$pid"
    return 0
}

# refuse when a daemon named $1 runs that this script did not start
check_no_foreign() {
    local running ours
    running=$(pgrep -x "$1" || true)
    ours=$(our_pid "$1")
    for pid in $running; do
        [[ $pid == "$ours" ]] || refuse "$2" "a $1 this script did not start is running (pid $pid)"
    done
}

guard() {
    ours_conf || refuse "$1" "$CONF was not written by this script (a site's SLURM?)"
    check_no_foreign slurmctld "$1"
    check_no_foreign slurmd "$1"
}

install() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
        && command -v munged >/dev/null; then
        return
    fi
    [[ $(id -u) == 0 ]] || { log "installing SLURM needs root"; exit 1; }
    log "installing slurmctld, slurmd, slurm-client and munge from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
}

write_config() {
    local cpus mem
    cpus=$(nproc)
    # what slurmd sees, minus headroom for the controller and the workflow itself
    mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
    mem=$(( mem > 1024 ? mem - 512 : mem ))
    mkdir -p /etc/slurm "$STATE"/{ctld,d} /var/log/slurm
    cat >"$CONF" <<CONF
$MARK
ClusterName=$CLUSTER_NAME
SlurmctldHost=localhost
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$STATE/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
EnforcePartLimits=ALL
MinJobAge=300
SchedulerParameters=sched_interval=1
MailProg=/bin/true
ReturnToService=2
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
}

start_munge() {
    if pgrep -x munged >/dev/null; then return; fi  # a running munge is shared, never stopped
    touch "$STATE/munged.started"
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
    if [[ ! -s /etc/munge/munge.key ]]; then
        (command -v mungekey >/dev/null && mungekey --create --force) || \
            dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
        chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    fi
    if id munge >/dev/null 2>&1; then
        su -s /bin/sh munge -c "/usr/sbin/munged"
    else
        /usr/sbin/munged --force
    fi
}

ready() {
    # the cluster answering must be this script's, not another one on this machine
    [[ $(timeout 10 scontrol show config 2>/dev/null | sed -n 's/^ClusterName *= *//p') == "$CLUSTER_NAME" ]] \
        || return 1
    timeout 20 srun -t 1 --mem 10 -N 1 true >/dev/null 2>&1
}

start() {
    install
    guard start
    mkdir -p "$STATE"
    write_config
    start_munge
    [[ -n $(our_pid slurmctld) ]] || slurmctld
    sleep 1
    [[ -n $(our_pid slurmd) ]] || slurmd -N localhost
    # sinfo may say "idle" from saved state before slurmd registered: wait for a real job
    for _ in $(seq 1 60); do
        scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true
        if ready; then
            log "ready: $(sinfo -h -o '%P %D %c CPUs %m MB %T')"
            return 0
        fi
        sleep 1
    done
    log "the cluster did not run a test job within a minute; see /var/log/slurm/"
    tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
    exit 1
}

stop() {
    guard stop
    [[ -z $(our_pid slurmctld) ]] || scancel --user root >/dev/null 2>&1 || true
    local pid
    for daemon in slurmd slurmctld; do
        pid=$(our_pid "$daemon")
        [[ -z $pid ]] || kill "$pid"
    done
    if [[ -e $STATE/munged.started && -s /run/munge/munged.pid ]]; then
        kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
        rm -f "$STATE/munged.started"
    fi
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) ready ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
