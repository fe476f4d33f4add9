#!/usr/bin/env bash
# Calibrates NODES nodes of a Slurm cluster and writes the fleet report (scripts/slurm/README.md):
#
#   scripts/slurm/submit.sh OUT NODES [sbatch options...]
#
# Submits calibrate.sbatch as a job array of NODES tasks (one exclusive node each) and fleet.sbatch
# with --dependency=afterany on the array, both with OUT (made absolute; it must be on a file system
# every node sees) as their argument and any further options (partition, account, time limit, ...).
# Slurm's own output of each job goes to OUT/logs/. Prints both job ids and where the report will
# be; OUT/jobs.env holds them as CALIBRATE_JOB=... and FLEET_JOB=....
# Environment: CEILING (the binary, default `ceiling` on PATH; made absolute when it is a path),
# CEILING_DEVICES (default all), CEILING_CALIBRATE_ARGS (e.g. "--quick --base h200"); sbatch
# passes them to the jobs. SBATCH: the sbatch to run (default sbatch).
set -euo pipefail

usage() {
  echo "usage: $0 OUT NODES [sbatch options...]" >&2
  echo "  OUT: shared output directory (OUT/nodes/<node>-t<task>/, OUT/fleet/); NODES: array tasks, one node each" >&2
  exit 2
}
(($# >= 2)) || usage
out=$1
nodes=$2
shift 2
[[ $nodes =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: NODES must be a positive integer, got '$nodes'" >&2; usage; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SBATCH=${SBATCH:-sbatch}
command -v "$SBATCH" > /dev/null || { echo "submit.sh: $SBATCH not found (no Slurm client here?)" >&2; exit 1; }

mkdir -p "$out/nodes" "$out/logs"
out=$(cd "$out" && pwd)
if [[ -n $(ls -A "$out/nodes") ]]; then
  echo "submit.sh: warning: $out/nodes is not empty: what is there from an earlier run joins the fleet report (use a new OUT for a new campaign)" >&2
fi
# A relative path would be resolved in the job's working directory: make these absolute here
# (CEILING_CALIBRATE_EXE and CEILING_SIMULATED_NODE: the stand-ins of the self-test).
for v in CEILING CEILING_CALIBRATE_EXE CEILING_SIMULATED_NODE; do
  p=${!v:-}
  if [[ $p == */* && $p != /* && -e $p ]]; then
    printf -v "$v" '%s/%s' "$(cd "$(dirname "$p")" && pwd)" "$(basename "$p")"
    export "${v?}"  # the variable named by v
  fi
done

first=$("$SBATCH" --parsable --array="0-$((nodes - 1))" --output="$out/logs/calibrate-%A_%a.out" \
  "$@" "$here/calibrate.sbatch" "$out")
calibrate_job=${first%%;*}  # --parsable: "id" or "id;cluster"
[[ $calibrate_job =~ ^[0-9]+$ ]] || { echo "submit.sh: sbatch answered '$first', not a job id" >&2; exit 1; }

second=$("$SBATCH" --parsable --dependency="afterany:$calibrate_job" --output="$out/logs/fleet-%j.out" \
  "$@" "$here/fleet.sbatch" "$out") || second=""
fleet_job=${second%%;*}
if [[ ! $fleet_job =~ ^[0-9]+$ ]]; then
  echo "submit.sh: the fleet job was not submitted (sbatch answered '$second'); the array $calibrate_job was:" \
    "scancel $calibrate_job, or once it is done: ${CEILING:-ceiling} report --fleet $out/nodes --out $out/fleet" >&2
  exit 1
fi

printf 'CALIBRATE_JOB=%s\nFLEET_JOB=%s\nOUT=%q\n' "$calibrate_job" "$fleet_job" "$out" > "$out/jobs.env"
echo "calibrate: job array $calibrate_job (tasks 0-$((nodes - 1)), one node each) -> $out/nodes/<node>-t<task>/"
echo "fleet: job $fleet_job (after the array, afterany) -> $out/fleet/fleet.md, fleet.csv, fleet.json"
echo "Slurm logs: $out/logs/; watch: squeue -j $calibrate_job,$fleet_job"
