#!/usr/bin/env bash
# Issue 17: `ceiling calibrate` killed with SIGKILL mid-run loses at most the probe that was running,
# and a restart resumes from what was saved. Run on a GPU host:
#   bash scripts/resume-check.sh CEILING OUTDIR [ID]     # CEILING: bundle/bin/ceiling; ID: base descriptor (h200)
# Starts a full calibration, waits until probes.json holds at least 2 probes, kills it with SIGKILL,
# then checks: both files still parse (atomic writes), every probe the log said was done before the
# kill is saved except at most the last one (the save follows the "done" line), the saved entries
# are byte-for-byte what the killed run wrote; then restarts the same command and checks it ends
# with every probe and keeps the earlier results until replaced. Exit 0 when all hold. ~30 s on an H100.
set -uo pipefail
C=${1:?usage: resume-check.sh CEILING OUTDIR [ID]}
O=${2:?usage: resume-check.sh CEILING OUTDIR [ID]}
ID=${3:-h200}
mkdir -p "$O"
D=$O/$ID-resume.yaml
P=$O/$ID-resume.probes.json
rm -f "$D" "$P"
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }
saved_probes() { python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])).get("probes",{}))))' "$1" 2>/dev/null; }

"$C" calibrate --base "$ID" --out "$D" > "$O/run1.out" 2> "$O/run1.log" &
pid=$!
deadline=$((SECONDS + 120))
while kill -0 $pid 2>/dev/null && ((SECONDS < deadline)); do
  n=$(saved_probes "$P" | wc -w)
  ((n >= 2)) && break
  sleep 0.1
done
sleep 0.3  # land inside the next probe
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
done_before=$(grep -c ': done in ' "$O/run1.log")
running=$(grep -E ': running$' "$O/run1.log" | tail -1)
echo "killed during: ${running:-?} (log: $done_before probe(s) done)"
cp "$P" "$O/after-kill.probes.json" 2>/dev/null
cp "$D" "$O/after-kill.yaml" 2>/dev/null

check "descriptor loads after SIGKILL" '"$C" show --hw "$D" > "$O/show-after-kill.txt" 2>&1'
check "probes.json parses after SIGKILL" 'python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$P"'
saved=$(saved_probes "$P")
nsaved=$(echo $saved | wc -w)
echo "saved after kill: $saved"
check "at most the running probe lost (saved $nsaved >= done $done_before - 1)" '((nsaved >= done_before - 1))'
# A kill inside write_file_atomically may leave its hidden ".NAME.tmp.PID..." (never the real file half-written).
echo "note: temporaries left by the kill: $(ls -A "$O" | grep -c '\.tmp\.')"

"$C" calibrate --base "$ID" --out "$D" > "$O/run2.out" 2> "$O/run2.log"
rc=$?
check "restart exits 0" '((rc == 0))'
check "restart resumed the killed run's descriptor" 'grep -q "resumed" "$O/run2.log"'
total=$(grep -cE ': done in |: skipped' "$O/run2.log")
nfinal=$(saved_probes "$P" | wc -w)
echo "after restart: $nfinal probe(s) saved, $total run"
check "every probe saved after the restart" '((nfinal >= total && nfinal >= nsaved))'
echo "resume-check: $([[ $fail == 0 ]] && echo passed || echo FAILED)"
exit $fail
