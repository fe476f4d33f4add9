#!/usr/bin/env bash
# The Slurm path for real (issue 16): starts a private one-node Slurm cluster (slurmctld + slurmd of
# this machine, own config, ports, state and logs in a temporary directory), submits with
# scripts/slurm/submit.sh and checks what the jobs wrote. ctest -L slurm runs it (tests/CMakeLists.txt).
#
#   tests/slurm/slurm-selftest.sh [CEILING_BINARY [SOURCE_DIR]]
#
# Scenarios (submitted one after the other; --exclusive runs their tasks one at a time on the node):
#   nogpu    3 tasks of `calibrate --devices all` on a node without GPU (CUDA_VISIBLE_DEVICES=-1
#            hides any GPU): every task records "no GPU here", node.yaml failed; fleet exit 3.
#   devices  3 tasks of `calibrate --devices 0,1,2 --quick --base h200 --no-links` with the stand-in
#            tests/data/devices/fake-calibrate.sh (CEILING_CALIBRATE_EXE; its device 1 fails):
#            the fleet report has the 6 simulated H200s and 3 failures of device 1.
#   simnode  1 task of `calibrate --devices all` on the simulated 4-GPU node
#            tests/data/links/nvswitch-4.yaml (CEILING_SIMULATED_NODE; skipped where the file is
#            absent): the fleet has its GPUs, their links, the degraded link as an outlier.
#   crash    1 task whose calibrate dies at once (a wrapper exits 139): calibrate.sbatch writes the
#            node.yaml of status failed itself and the fleet lists the node with that reason.
# Exit 0: all checks passed; 1: a check failed (daemon logs printed); 77: skipped (not root, or no
# slurmctld/slurmd/sbatch here). The daemons are stopped on every exit (trap), and a watchdog
# stops them if this script is killed. CEILING_SLURM_KEEP=1 keeps the temporary directory;
# CEILING_SLURM_DEADLINE (seconds, default 100) bounds the whole run.
# shellcheck disable=SC2317,SC2016  # functions run through check/trap; bash -c scripts in single quotes
set -uo pipefail

t_start=$(date +%s)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${2:-$(cd "$here/../.." && pwd)}
src=$(cd "$src" && pwd)
ceiling=${1:-$src/build/cli/ceiling}
[[ $ceiling == /* ]] || ceiling=$PWD/$ceiling
deadline=$((t_start + ${CEILING_SLURM_DEADLINE:-100}))

say() { echo "slurm_selftest: $*"; }
skip() { say "SKIP: $*"; exit 77; }

# ---- what the test needs: root and the Slurm daemons and clients (else skipped) ----
((EUID == 0)) || skip "not root (the private slurmctld/slurmd run as SlurmUser=root)"
PATH=$PATH:/usr/sbin:/sbin
for b in slurmctld slurmd sbatch squeue scontrol sinfo scancel; do
  command -v "$b" > /dev/null || skip "$b not found (Debian: apt-get install slurmctld slurmd slurm-client)"
done
for b in python3 flock setsid; do
  command -v "$b" > /dev/null || { say "FAIL: $b not found (scripts/install-deps.sh)"; exit 1; }
done
[[ -x $ceiling ]] || { say "FAIL: ceiling binary $ceiling not found (build it, or pass it as the first argument)"; exit 1; }
slurm_version=$(slurmctld -V 2> /dev/null)  # (sbatch --version wants a configuration)

# Nothing of a Slurm job or cluster around this run may leak in (ctest inside a Slurm job...).
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM_|SBATCH_|SALLOC_|SRUN_|SQUEUE_|SINFO_)')
unset CEILING CEILING_DEVICES CEILING_CALIBRATE_ARGS CEILING_CALIBRATE_EXE CEILING_SIMULATED_NODE FAKE_CALIBRATE_ARGS

work=$(mktemp -d /tmp/ceiling-slurm.XXXXXX) || { say "FAIL: mktemp"; exit 1; }
mkdir -p "$work/state" "$work/spool" "$work/log"
conf=$work/slurm.conf
node=$(hostname -s)
export SLURM_CONF=$conf  # the clients (sbatch, squeue, ...) of this shell and its children
ctld_pid="" slurmd_pid="" watchdog_pid=""
failures=0 checks=0 passed=0

# The processes of this run: those with the marker in their environment (the daemons, the jobs)
# or a file or working directory under $work open (slurmstepd wipes its environment, not its log).
run_pids() {  # run_pids WORK [EXCLUDED_PID...]
  local work=$1
  shift
  {
    grep -lzxF "CEILING_SLURM_SELFTEST_RUN=$work" /proc/[0-9]*/environ
    find /proc/[0-9]*/fd /proc/[0-9]*/cwd -maxdepth 1 -lname "$work/*"
  } 2> /dev/null | sed -nE 's|^/proc/([0-9]+)/.*|\1|p' | sort -u | grep -vxF -f <(printf '%s\n' "$@" 0)
}
marked_pids() { run_pids "$work" "$$" "$BASHPID"; }

stop_daemons() {
  local quiet=${1:-}
  if [[ -n $ctld_pid ]] && kill -0 "$ctld_pid" 2> /dev/null; then
    timeout 5 scancel --quiet --user=root > /dev/null 2>&1 || true  # this cluster's jobs only (SLURM_CONF)
  fi
  local p live=()
  for p in $ctld_pid $slurmd_pid; do kill -TERM "$p" 2> /dev/null && live+=("$p"); done
  for _ in $(seq 1 50); do
    local any=0
    for p in "${live[@]}"; do kill -0 "$p" 2> /dev/null && any=1; done
    ((any)) || break
    sleep 0.1
  done
  for p in "${live[@]}"; do kill -KILL "$p" 2> /dev/null && [[ -z $quiet ]] && say "slurm daemon $p killed (did not stop on SIGTERM)"; done
  for p in "${live[@]}"; do wait "$p" 2> /dev/null; done
  # slurmstepd and job processes of this run, should any be left
  for p in $(marked_pids); do kill -KILL "$p" 2> /dev/null && [[ -z $quiet ]] && say "left-over process $p killed"; done
  ctld_pid="" slurmd_pid=""
}

show_logs() {
  local f
  for f in "$work"/log/slurmctld "$work"/log/slurmd; do
    if [[ -s $f.log ]]; then f=$f.log; else f=$f.stdout; fi  # -D: the log file, else the terminal
    [[ -s $f ]] || continue
    echo "----- ${f#"$work"/} (last 40 lines) -----"
    tail -n 40 "$f"
  done
  for f in "$work"/*/logs/*.out; do
    [[ -s $f ]] || continue
    echo "----- ${f#"$work"/} -----"
    tail -n 15 "$f"
  done
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  stop_daemons
  [[ -n $watchdog_pid ]] && kill "$watchdog_pid" 2> /dev/null
  if ((rc != 0 && rc != 77)); then
    show_logs
    say "temporary directory kept: $work"
  elif [[ ${CEILING_SLURM_KEEP:-0} == 1 ]]; then
    say "temporary directory kept: $work"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'say "interrupted"; exit 1' INT TERM

fatal() { say "FAIL: $*"; exit 1; }
check() {  # check DESCRIPTION COMMAND...: one assertion
  checks=$((checks + 1))
  if "${@:2}" > "$work/check.out" 2>&1; then
    passed=$((passed + 1))
    echo "  ok    $1"
  else
    failures=$((failures + 1))
    echo "  FAIL  $1"
    sed 's/^/        /' "$work/check.out" | head -n 20
  fi
}
left() { echo $((deadline - $(date +%s))); }

# ---- ports: two free ones from 20000-29999, chosen under a lock until the daemons listen ----
port_free() {
  python3 - "$1" << 'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("0.0.0.0", int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
}
pick_port() {  # pick_port EXCLUDED
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 10000))
    [[ $p == "${1:-}" ]] && continue
    ss -Htan "( sport = :$p )" 2> /dev/null | grep -q . && continue
    port_free "$p" && { echo "$p"; return 0; }
  done
  return 1
}

write_conf() {
  # PlugStackConfig: an empty one of ours (not /etc/slurm/plugstack.conf and its SPANK plugins).
  : > "$work/plugstack.conf"
  cat > "$conf" << EOF
# Written by tests/slurm/slurm-selftest.sh: a private one-node cluster, torn down at the end.
ClusterName=ceilingselftest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$work/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=100 State=UNKNOWN
PartitionName=selftest Nodes=$node Default=YES MaxTime=10 State=UP
EOF
}

start_cluster() {
  local attempt ctld_port slurmd_port state
  exec 9> /tmp/ceiling-slurm-selftest.ports.lock
  flock -w 30 9 || fatal "could not take /tmp/ceiling-slurm-selftest.ports.lock in 30 s"
  for attempt in 1 2 3; do
    if [[ $attempt == 1 && -n ${CEILING_SLURM_PORTS:-} ]]; then  # "CTLD SLURMD": to test the retry
      read -r ctld_port slurmd_port <<< "$CEILING_SLURM_PORTS"
    else
      ctld_port=$(pick_port) && slurmd_port=$(pick_port "$ctld_port") || fatal "no free TCP port in 20000-29999"
    fi
    write_conf "$ctld_port" "$slurmd_port"
    rm -rf "$work/state"/* "$work/spool"/*
    CEILING_SLURM_SELFTEST_RUN=$work slurmctld -D -i -f "$conf" > "$work/log/slurmctld.stdout" 2>&1 &
    ctld_pid=$!
    CEILING_SLURM_SELFTEST_RUN=$work slurmd -D -f "$conf" -N "$node" > "$work/log/slurmd.stdout" 2>&1 &
    slurmd_pid=$!
    state=""
    for _ in $(seq 1 100); do  # 20 s
      kill -0 "$ctld_pid" 2> /dev/null && kill -0 "$slurmd_pid" 2> /dev/null || break
      state=$(sinfo -h -n "$node" -o %T 2> /dev/null)
      [[ $state == idle ]] && break
      sleep 0.2
    done
    if [[ $state == idle ]]; then
      say "cluster up: slurmctld pid $ctld_pid port $ctld_port, slurmd pid $slurmd_pid port $slurmd_port, node $node idle ($slurm_version, $(($(date +%s) - t_start)) s)"
      exec 9>&-
      return 0
    fi
    say "cluster did not come up on ports $ctld_port/$slurmd_port (attempt $attempt, node state '${state:-none}')"
    stop_daemons quiet
    if ((attempt == 3)) || ! grep -qiE "address already in use|bind" "$work"/log/*; then
      exec 9>&-
      fatal "slurmctld/slurmd did not start (logs below)"
    fi
    for f in "$work"/log/*; do mv "$f" "$f.attempt$attempt"; done
  done
}

# The watchdog: should this script die without its trap (SIGKILL, a ctest timeout), it stops
# the daemons and the jobs. setsid: a kill of this script's process group spares it.
start_watchdog() {
  setsid bash -c "$(declare -f run_pids)"'
    parent=$1 work=$2; shift 2
    while kill -0 "$parent" 2> /dev/null; do sleep 1; done
    kill -TERM "$@" 2> /dev/null; sleep 2; kill -KILL "$@" 2> /dev/null
    for p in $(run_pids "$work" "$BASHPID"); do kill -KILL "$p"; done 2> /dev/null
' watchdog "$$" "$work" "$ctld_pid" "$slurmd_pid" < /dev/null > /dev/null 2>&1 &
  watchdog_pid=$!
}

# submit NAME NODES [VAR=VALUE...]: scripts/slurm/submit.sh with that environment, from another
# directory than the source tree (the scripts must not depend on the working directory).
submit() {
  local name=$1 nodes=$2
  shift 2
  mkdir -p "$work/cwd"
  (cd "$work/cwd" && env CEILING_SLURM_SELFTEST_RUN="$work" CEILING="$ceiling" CUDA_VISIBLE_DEVICES=-1 "$@" \
    bash "$src/scripts/slurm/submit.sh" "$work/$name" "$nodes") > "$work/$name.submit.txt" 2>&1 ||
    { cat "$work/$name.submit.txt"; fatal "submit.sh $name failed"; }
  sed "s/^/  [$name] /" "$work/$name.submit.txt"
}

# Waits until no job of the list is pending or running.
wait_jobs() {
  local ids=$1
  while :; do
    [[ -z $(squeue -h -j "$ids" -o %i 2> /dev/null) ]] && return 0
    (($(left) > 0)) || fatal "jobs $ids not done within the deadline ($(squeue -j "$ids" 2>&1 | tr '\n' ';'))"
    kill -0 "$ctld_pid" 2> /dev/null || fatal "slurmctld died"
    kill -0 "$slurmd_pid" 2> /dev/null || fatal "slurmd died"
    sleep 0.3
  done
}

jobs_of() {  # "CALIBRATE_JOB FLEET_JOB" of a scenario (its submit.sh wrote jobs.env)
  # shellcheck source=/dev/null
  (source "$work/$1/jobs.env" && echo "$CALIBRATE_JOB $FLEET_JOB")
}

# ---- checks shared by the scenarios ----
# Slurm's view: every array task and the fleet job COMPLETED with exit 0, the fleet job started
# no earlier than the last task ended.
check_slurm_jobs() {  # check_slurm_jobs NAME TASKS
  local name=$1 tasks=$2 cal fleet
  read -r cal fleet < <(jobs_of "$name")
  python3 - "$cal" "$fleet" "$tasks" << 'EOF'
import subprocess, sys
cal, fleet, tasks = sys.argv[1], sys.argv[2], int(sys.argv[3])
def jobs(jid):
    out = subprocess.run(["scontrol", "-o", "show", "job", jid], capture_output=True, text=True, check=True).stdout
    return [dict(kv.split("=", 1) for kv in line.split() if "=" in kv) for line in out.splitlines() if line.strip()]
arr = jobs(cal)
fl = jobs(fleet)
ok = True
ids = sorted(int(j["ArrayTaskId"]) for j in arr if "ArrayTaskId" in j)
if ids != list(range(tasks)):
    print(f"array job {cal}: tasks {ids}, expected 0-{tasks - 1}"); ok = False
for j in arr:
    if j["JobState"] != "COMPLETED" or j["ExitCode"] != "0:0":
        print(f"array task {j.get('ArrayTaskId')}: {j['JobState']} exit {j['ExitCode']}"); ok = False
f = fl[0]
if f["JobState"] != "COMPLETED" or f["ExitCode"] != "0:0":
    print(f"fleet job {fleet}: {f['JobState']} exit {f['ExitCode']}"); ok = False
last_end = max(j["EndTime"] for j in arr)
if f["StartTime"] < last_end:
    print(f"fleet job started {f['StartTime']} before the array's last task ended {last_end}"); ok = False
print(f"array {cal}: {len(arr)} task(s), last ended {last_end}; fleet {fleet} started {f['StartTime']}")
sys.exit(0 if ok else 1)
EOF
}

check_task_dirs() {  # check_task_dirs NAME TASKS: OUT/nodes/<node>-t<i> for i < TASKS, nothing else
  local out=$work/$1/nodes i want="" got
  for ((i = 0; i < $2; i++)); do want+="$node-t$i "; done
  got=$(cd "$out" && ls -1 | tr '\n' ' ')
  echo "task directories: $got"
  [[ $got == "$want" ]]
}

each_task() {  # each_task NAME TASKS COMMAND...: COMMAND with {} replaced by each task directory
  local i d rc=0 a args
  for ((i = 0; i < $2; i++)); do
    d=$work/$1/nodes/$node-t$i
    args=()
    for a in "${@:3}"; do args+=("${a//\{\}/$d}"); done
    "${args[@]}" || { echo "task $i ($d): failed: ${args[*]}"; rc=1; }
  done
  return "$rc"
}

slurm_logs_say() {  # slurm_logs_say NAME TASKS TEXT: each task's Slurm output has TEXT
  local cal fleet i rc=0
  read -r cal fleet < <(jobs_of "$1")
  for ((i = 0; i < $2; i++)); do
    grep -qF "$3" "$work/$1/logs/calibrate-${cal}_$i.out" || { echo "logs/calibrate-${cal}_$i.out lacks '$3'"; rc=1; }
  done
  grep -qF "fleet report exit code" "$work/$1/logs/fleet-$fleet.out" || { echo "logs/fleet-$fleet.out lacks its summary"; rc=1; }
  return "$rc"
}

check_fleet_files() {  # exit code 3 recorded, the three files written
  local f=$work/$1
  grep -qx "exit_code: 3" "$f/fleet.txt" && [[ -s $f/fleet/fleet.md && -s $f/fleet/fleet.csv && -s $f/fleet/fleet.json ]]
}

# fleet_json NAME PYTHON: PYTHON runs with d = fleet.json, ok(cond, message) records a failure.
fleet_json() {
  python3 - "$work/$1/fleet/fleet.json" "$work/$1/nodes" "$node" "$2" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
nodes_dir, node, code = sys.argv[2], sys.argv[3], sys.argv[4]
bad = []
def ok(cond, message):
    if not cond: bad.append(message)
assert d["schema"] == "ceiling/fleet/1", d.get("schema")
members, groups = d["members"], d["groups"]
good = [m for m in members if not m["error"]]
failed = [m for m in members if m["error"]]
exec(code)
print(f"fleet.json: {len(members)} member(s), {len(good)} measured, {len(failed)} failed, groups "
      + ", ".join(f"{g['model']} x{g['gpus']}" for g in groups))
for m in bad: print(m)
sys.exit(1 if bad else 0)
EOF
}

# ---- run ----
say "temporary directory $work, deadline $((deadline - t_start)) s"
start_cluster
start_watchdog
# The marker finds the daemons (so that the last check, nothing of this run left, means something).
marked=" $(marked_pids | tr '\n' ' ')"
[[ $marked == *" $ctld_pid "* && $marked == *" $slurmd_pid "* ]] || fatal "the daemons lack the marker CEILING_SLURM_SELFTEST_RUN"

sim_node=$src/tests/data/links/nvswitch-4.yaml
fake=$src/tests/data/devices/fake-calibrate.sh
submit nogpu 3
submit devices 3 CEILING_CALIBRATE_EXE="$fake" CEILING_DEVICES=0,1,2 \
  CEILING_CALIBRATE_ARGS="--quick --base h200 --no-links" FAKE_CALIBRATE_ARGS="$work/devices-fake-args.txt"
if [[ -f $sim_node ]]; then
  submit simnode 1 CEILING_CALIBRATE_EXE="$fake" CEILING_SIMULATED_NODE="$sim_node" CEILING_CALIBRATE_ARGS="--quick"
else
  say "scenario simnode skipped: $sim_node not found"
fi

# A ceiling whose calibrate dies before writing anything (as in a crash); its report is the real one.
printf '#!/bin/bash\nif [[ $1 == calibrate ]]; then echo "Segmentation fault (simulated)" >&2; exit 139; fi\nexec %q "$@"\n' \
  "$ceiling" > "$work/crashing-ceiling"
chmod +x "$work/crashing-ceiling"
submit crash 1 CEILING="$work/crashing-ceiling"

ids=$(for s in nogpu devices simnode crash; do [[ -f $work/$s/jobs.env ]] && jobs_of "$s"; done | tr ' \n' ',,' | sed 's/,*$//')
wait_jobs "$ids"
say "all jobs done ($(($(date +%s) - t_start)) s)"

echo "scenario nogpu: calibrate --devices all on a node without GPU, 3 tasks"
check "Slurm: 3 array tasks and the fleet job completed, fleet after the array" check_slurm_jobs nogpu 3
check "OUT/nodes has one directory per task" check_task_dirs nogpu 3
check "each task's calibrate.err says 'no GPU here'" each_task nogpu 3 grep -qF "no GPU here" "{}/calibrate.err"
check "each task's node.yaml: status failed, reason no GPU here" \
  each_task nogpu 3 grep -qE '^reason: ".*no GPU here' "{}/node.yaml"
check "each task.txt records calibrate's exit code 2" each_task nogpu 3 grep -qx "exit_code: 2" "{}/task.txt"
check "Slurm output of each task and of the fleet job in OUT/logs" slurm_logs_say nogpu 3 "calibrate exit code 2"
check "fleet: exit code 3 recorded, fleet.md/csv/json written" check_fleet_files nogpu
check "fleet.json: the 3 nodes listed as failed with 'no GPU here', no GPU group" fleet_json nogpu '
ok(len(members) == 3 and not good and not groups, "expected 3 failed members and no group")
ok(sorted(m["file"] for m in failed) == sorted(f"{nodes_dir}/{node}-t{i}/node.yaml" for i in range(3)),
   "failed members: " + str([m["file"] for m in failed]))
ok(all("no GPU here" in m["error"] for m in failed), "errors: " + str([m["error"] for m in failed]))'

echo "scenario devices: calibrate --devices 0,1,2 with the stand-in (device 1 fails), 3 tasks"
check "Slurm: 3 array tasks and the fleet job completed, fleet after the array" check_slurm_jobs devices 3
check "OUT/nodes has one directory per task" check_task_dirs devices 3
check "each task: gpu0.yaml and gpu2.yaml written, no gpu1.yaml" \
  each_task devices 3 bash -c '[[ -s $1/gpu0.yaml && -s $1/gpu2.yaml && ! -e $1/gpu1.yaml ]]' _ "{}"
check "each task: device 1's log has its error (cudaErrorNoDevice)" \
  each_task devices 3 grep -qF "cudaErrorNoDevice" "{}/gpu1.calibrate.log"
check "each task: calibrate's summary says 2 of 3, device 1 failed" \
  each_task devices 3 grep -qE "^calibrated 2 of 3 GPU|device 1 .*failed" "{}/calibrate.out"
check "each task: node.yaml status partial" each_task devices 3 grep -qx "status: partial" "{}/node.yaml"
check "each task.txt records calibrate's exit code 1" each_task devices 3 grep -qx "exit_code: 1" "{}/task.txt"
check "CEILING_CALIBRATE_ARGS reached every GPU's calibrate (--quick --base h200), 9 GPUs" python3 -c '
import sys
import glob
# (one argument a line; one file per stand-in child: PREFIX.<device>.<pid>)
a = [l for f in glob.glob(sys.argv[1] + ".*") for l in open(f).read().split("\n")]
n, q, b, h = (a.count(x) for x in ("--device", "--quick", "--base", "h200"))
print(f"--device x{n}, --quick x{q}, --base x{b}, h200 x{h}")
sys.exit(0 if n == q == b == h == 9 else 1)' "$work/devices-fake-args.txt"
check "Slurm output of each task and of the fleet job in OUT/logs" slurm_logs_say devices 3 "calibrate exit code 1"
check "fleet: exit code 3 recorded, fleet.md/csv/json written" check_fleet_files devices
check "fleet.json: 6 simulated H200s in one group, device 1 failed on each of the 3 tasks" fleet_json devices '
ok(len(groups) == 1 and groups[0]["model"] == "NVIDIA H200" and groups[0]["gpus"] == 6, "groups: " + str([(g["model"], g["gpus"]) for g in groups]))
ok(len(good) == 6 and {m["uuid"] for m in good} == {"GPU-fake0000-0000-0000-0000-000000000000", "GPU-fake0002-0000-0000-0000-000000000000"},
   "measured: " + str([(m["file"], m["uuid"]) for m in good]))
ok(sorted(m["file"] for m in good) == sorted(f"{nodes_dir}/{node}-t{i}/gpu{g}.yaml" for i in range(3) for g in (0, 2)), "measured files")
ok(len(failed) == 3 and all("device 1 failed" in m["error"] and "cudaErrorNoDevice" in m["error"] for m in failed),
   "failed: " + str([m["error"] for m in failed]))
ok(sorted(m["file"] for m in failed) == sorted(f"{nodes_dir}/{node}-t{i}/node.yaml" for i in range(3)), "failed files")'

if [[ -f $work/simnode/jobs.env ]]; then
  echo "scenario simnode: calibrate --devices all on a simulated 4-GPU NVSwitch node, 1 task"
  check "Slurm: 1 array task and the fleet job completed, fleet after the array" check_slurm_jobs simnode 1
  check "OUT/nodes has one directory per task" check_task_dirs simnode 1
  check "the task: node.yaml partial, 3 descriptors, device 1's log has its error" each_task simnode 1 bash -c '
    grep -qx "status: partial" "$1/node.yaml" && [[ $(ls "$1"/*.yaml | wc -l) == 4 ]] &&
      grep -qF cudaErrorNoDevice "$1"/h200-fake0001.calibrate.log' _ "{}"
  check "fleet.json: 3 simulated GPUs with links, GPU 2's half-width PCIe flagged, 3->0 broken, device 1 failed" fleet_json simnode '
ok(len(groups) == 1 and groups[0]["gpus"] == 3, "groups: " + str([(g["model"], g["gpus"]) for g in groups]))
ok(len(good) == 3 and all(m["node"] == node for m in good), "measured: " + str([(m["id"], m["node"]) for m in good]))
ok(groups and "link.h2d_pinned.bandwidth" in groups[0]["figures"], "no link figures in the group")
ok(groups and any(o["id"] == "h200-fake0002" and o["figure"] == "link.h2d_pinned.bandwidth" for o in groups[0]["outliers"]),
   "GPU 2 h2d_pinned not flagged: " + str([(o["id"], o["figure"]) for o in (groups[0]["outliers"] if groups else [])]))
ok(any("3->0 peer_sm_read" in p for m in good for p in m["link_problems"]), "the broken path 3->0 is not listed")
ok(len(failed) == 1 and "device 1 failed" in failed[0]["error"], "failed: " + str([m["error"] for m in failed]))'
fi

echo "scenario crash: calibrate dies without writing node.yaml, 1 task"
check "Slurm: 1 array task and the fleet job completed, fleet after the array" check_slurm_jobs crash 1
check "the task: exit code 139 recorded, calibrate.sbatch wrote node.yaml (failed, with the reason)" each_task crash 1 bash -c '
  grep -qx "exit_code: 139" "$1/task.txt" && grep -qx "status: failed" "$1/node.yaml" &&
    grep -qE "^reason: \"ceiling calibrate exited 139 on task 0: Segmentation fault \(simulated\)\"$" "$1/node.yaml"' _ "{}"
check "fleet: exit code 3 recorded, fleet.md/csv/json written" check_fleet_files crash
check "fleet.json: the node listed as failed with calibrate.sbatch's reason" fleet_json crash '
ok(len(members) == 1 and not good and "exited 139" in failed[0]["error"] and failed[0]["node"] == node,
   "members: " + str([(m["node"], m["error"]) for m in members]))'

stop_daemons
check "no slurmctld/slurmd/slurmstepd or job process of this run left" bash -c '[[ -z $1 ]] || { echo "left: $1"; exit 1; }' _ "$(marked_pids | tr '\n' ' ')"

t_total=$(($(date +%s) - t_start))
if ((failures == 0)); then
  say "PASS: $passed/$checks checks in $t_total s ($slurm_version)"
  exit 0
fi
say "FAIL: $failures of $checks checks failed in $t_total s"
exit 1
