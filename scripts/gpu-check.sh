#!/usr/bin/env bash
# Everything ceiling does on a GPU host, in one command, from a bundle (scripts/bundle.sh):
#   bash scripts/gpu-check.sh BUNDLE OUTDIR [ID]
# GPU tests, SASS checks (probes and validation kernels), calibrate (--quick and full, timed),
# validate against the shipped descriptor and the calibrated one, report, full `ceiling run` end to
# end, compute-sanitizer memcheck on the tiny GPU-test configurations, memcheck/racecheck/synccheck
# over calibrate --quick and the GPU tests, and calibrate killed with SIGKILL then resumed.
# Sanitizers and resume only (~10 min on an H100): SANITIZE_ONLY=1 bash scripts/gpu-check.sh BUNDLE OUTDIR [ID]
# Leaves OUTDIR/summary.log (read it first) and OUTDIR/all.tgz (every file written).
set -uo pipefail
B=$(cd "${1:?usage: gpu-check.sh BUNDLE OUTDIR [ID]}" && pwd)
O=${2:?usage: gpu-check.sh BUNDLE OUTDIR [ID]}
ID=${3:-h200}
W=$(mktemp -d)
S=$O/summary.log
mkdir -p "$O"
here=$(cd "$(dirname "$0")" && pwd)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
step() { echo "== $*" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv | tee -a "$S"

if [[ -z ${SANITIZE_ONLY:-} ]]; then
step "GPU tests"
t=$(date +%s%N); timeout 300 "$B/bin/ceiling_gpu_tests" > "$W/gpu-tests.log" 2>&1; rc=$?
echo "gpu tests rc=$rc $(ms $t) ms: $(grep -E 'test cases' "$W/gpu-tests.log" | tail -1)" | tee -a "$S"

step "SASS"
bash "$here/sass_check.sh" "$B/bin/ceiling" > "$W/sass.txt" 2>&1; echo "sass rc=$?" | tee -a "$S"
grep -E "DMMA=|^(MISSING|MISMATCH|MERGED)|FAIL" "$W/sass.txt" | tee -a "$S"

step "calibrate --quick"
t=$(date +%s%N); timeout 120 "$B/bin/ceiling" calibrate --quick --base "$ID" --out "$W/quick/$ID.yaml" > "$W/calibrate-quick.log" 2>&1
echo "calibrate --quick rc=$? wall $(ms $t) ms" | tee -a "$S"

step "calibrate (full)"
mkdir -p "$W/full"
t=$(date +%s%N); timeout 400 "$B/bin/ceiling" calibrate --base "$ID" --out "$W/full/$ID.yaml" > "$W/calibrate-full.log" 2>&1
echo "calibrate rc=$? wall $(ms $t) ms" | tee -a "$S"
tail -40 "$W/calibrate-full.log" >> "$S"

step "validate (shipped $ID)"
t=$(date +%s%N); timeout 300 "$B/bin/ceiling" validate --hw "$ID" --out "$W/shipped-$ID-validation.json" > "$W/validate-shipped.txt" 2> "$W/validate-shipped.log"
echo "validate (shipped) rc=$? wall $(ms $t) ms" | tee -a "$S"

step "validate"
t=$(date +%s%N); timeout 300 "$B/bin/ceiling" validate --hw "$W/full/$ID.yaml" --out "$W/full/$ID-validation.json" > "$W/validate.txt" 2> "$W/validate.log"
echo "validate rc=$? wall $(ms $t) ms" | tee -a "$S"
cat "$W/validate.txt" >> "$S"

step "report"
t=$(date +%s%N); timeout 120 "$B/bin/ceiling" report --hw "$W/full/$ID.yaml" --results "$W/full/$ID-validation.json" --out "$W/report" > "$W/report.log" 2>&1
echo "report rc=$? wall $(ms $t) ms" | tee -a "$S"

step "run (end to end, full)"
t=$(date +%s%N); (cd "$W" && timeout 500 "$B/bin/ceiling" run --out "$W/run-full" > "$W/run-full.log" 2>&1)
echo "run rc=$? wall $(ms $t) ms" | tee -a "$S"

step "memcheck"
t=$(date +%s%N); timeout 240 compute-sanitizer --tool memcheck "$B/bin/ceiling_gpu_tests" > "$W/memcheck.log" 2>&1
echo "memcheck rc=$? $(ms $t) ms: $(grep -E 'ERROR SUMMARY' "$W/memcheck.log" | tail -1)" | tee -a "$S"

fi  # SANITIZE_ONLY

step "compute-sanitizer: memcheck, racecheck, synccheck (every quick probe via calibrate --quick, every kernel variant via the GPU tests' tiny sizes)"
# Each run is bounded to 45 s so this step stays under 5 minutes on an H100; rc 124 = cut short.
for tool in memcheck racecheck synccheck; do
  if [[ $tool == racecheck ]]; then
    # racecheck is slow on the memory ramp's many launches (174 s on an H100): one probe at a
    # time, each with its own limit, so every probe is covered.
    for p in $("$B/bin/ceiling" calibrate --list | awk '/^[a-z]/ {print $1}'); do
      lim=90; [[ $p == memory-ramp ]] && lim=240
      t=$(date +%s%N)
      timeout $lim compute-sanitizer --tool racecheck --error-exitcode 99 "$B/bin/ceiling" calibrate --quick --probes "$p" \
        --base "$ID" --out "$W/sanitize-racecheck-$p/$ID.yaml" > "$W/racecheck-calibrate-$p.log" 2>&1
      echo "racecheck calibrate --quick --probes $p rc=$? $(ms $t) ms: $(grep -E 'RACECHECK SUMMARY' "$W/racecheck-calibrate-$p.log" | tail -1)" | tee -a "$S"
    done
  else
    t=$(date +%s%N)
    timeout 45 compute-sanitizer --tool $tool --error-exitcode 99 "$B/bin/ceiling" calibrate --quick --base "$ID" \
      --out "$W/sanitize-$tool/$ID.yaml" > "$W/$tool-calibrate.log" 2>&1
    echo "$tool calibrate --quick rc=$? $(ms $t) ms: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/$tool-calibrate.log" | tail -1)" | tee -a "$S"
  fi
  t=$(date +%s%N)
  timeout 45 compute-sanitizer --tool $tool --error-exitcode 99 "$B/bin/ceiling_gpu_tests" > "$W/$tool-gpu-tests.log" 2>&1
  echo "$tool GPU tests rc=$? $(ms $t) ms: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/$tool-gpu-tests.log" | tail -1)" | tee -a "$S"
done

step "resume after SIGKILL (scripts/resume-check.sh)"
t=$(date +%s%N); timeout 90 bash "$here/resume-check.sh" "$B/bin/ceiling" "$W/resume" "$ID" > "$W/resume-check.log" 2>&1
echo "resume-check rc=$? $(ms $t) ms" | tee -a "$S"
cat "$W/resume-check.log" >> "$S"

tar -C "$W" -czf "$O/all.tgz" . && echo "files: $O/all.tgz" | tee -a "$S"
