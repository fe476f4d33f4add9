#!/usr/bin/env bash
# Our calibration and the public suites in one run on this GPU host (issue 15), then the table.
#
#   bash scripts/compare-peers.sh PEERS_DIR OUTDIR [CEILING]
#
# PEERS_DIR: the peers bundle (../shared/peers copied as .peers, with run-peers.sh); CEILING: the
# ceiling binary (default bundle/bin/ceiling, else build/cli/ceiling). Runs `ceiling calibrate`
# REPEATS times (default 3, each a fresh descriptor from the shipped spec one), the wgmma probe once
# more alone (REST_MS, default 500, before each counted run), then run-peers.sh
# (PEERS_BUDGET_S, PEERS_ONLY as it documents), then scripts/compare-peers.py. Writes
#   OUTDIR/ours-N.yaml (+ .probes.json, calibrate-N.log), OUTDIR/peers/*.txt, OUTDIR/peers.log,
#   OUTDIR/peers-<id>-<date>.md and .json: figure, ours (median; spread), each peer, ratio, verdict.
# The project never contains the peers' code: they run from PEERS_DIR.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
peers=${1:?usage: compare-peers.sh PEERS_DIR OUTDIR [CEILING]}
out=${2:?usage: compare-peers.sh PEERS_DIR OUTDIR [CEILING]}
ceiling=${3:-}
[[ -z $ceiling && -x $here/../bundle/bin/ceiling ]] && ceiling=$here/../bundle/bin/ceiling
[[ -z $ceiling && -x $here/../build/cli/ceiling ]] && ceiling=$here/../build/cli/ceiling
[[ -x $ceiling ]] || { echo "compare-peers: no ceiling binary (give it as the third argument)" >&2; exit 2; }
[[ -f $peers/run-peers.sh ]] || { echo "compare-peers: $peers/run-peers.sh not found (the peers bundle)" >&2; exit 2; }
command -v nvidia-smi > /dev/null || { echo "compare-peers: nvidia-smi not found: run on a GPU host" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
# id: the shipped descriptor to start from; tag: the results file's name (peers-<tag>-<date>).
case "$name" in
  *GH200*) id=gh200 tag=gh200 ;;
  *H200*) id=h200 tag=h200 ;;
  *H100*) id=h100-sxm tag=h100 ;;
  *H800*) id=h800-pcie tag=h800 ;;
  *A100*) id=a100-80gb tag=a100 ;;
  *) id="" tag=gpu ;;
esac
base=()
[[ -n $id ]] && base=(--base "$id")
date=$(date -u +%Y-%m-%d)
repeats=${REPEATS:-3}
echo "compare-peers: $name, descriptor base '${id:-none}', $repeats calibration(s), then the peers" >&2
ours=()
for i in $(seq 1 "$repeats"); do
  rm -f "$out/ours-$i.yaml" "$out/ours-$i.probes.json"
  t0=$(date +%s%N)
  if "$ceiling" calibrate "${base[@]}" --out "$out/ours-$i.yaml" > "$out/calibrate-$i.log" 2>&1; then
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "calibrate $i: $((ms / 1000)).$(printf %03d $((ms % 1000))) s" | tee -a "$out/calibrate-times.txt" >&2
    "$ceiling" show --hw "$out/ours-$i.yaml" --json > "$out/ours-$i.json"
    ours+=(--ours "$out/ours-$i.json" --probes "$out/ours-$i.probes.json")
  else
    echo "compare-peers: calibrate $i failed (see $out/calibrate-$i.log)" >&2
  fi
done
((${#ours[@]})) || { echo "compare-peers: no calibration succeeded" >&2; exit 1; }
# The wgmma probe once more, alone in a process of its own as each peer run is, with REST_MS (default
# 500; 0 skips) before each counted run: inside a full calibration it ran ~3% slower (docs/PEERS.md).
rest_ms=${REST_MS:-500}
rested=()
if ((rest_ms > 0)); then
  rm -f "$out/ours-rested.yaml" "$out/ours-rested.probes.json"
  if "$ceiling" calibrate "${base[@]}" --probes wgmma --tc-rest-ms "$rest_ms" --out "$out/ours-rested.yaml" \
       > "$out/calibrate-rested.log" 2>&1; then
    "$ceiling" show --hw "$out/ours-rested.yaml" --json > "$out/ours-rested.json"
    rested=(--rested "$out/ours-rested.json" --rested-ms "$rest_ms")
  else
    echo "compare-peers: the rested wgmma calibration failed (see $out/calibrate-rested.log)" >&2
  fi
fi
OUT="$out" bash "$peers/run-peers.sh" > /dev/null 2>&1
echo "compare-peers: peers done ($(grep -c '^===' "$out/peers.log" 2>/dev/null) steps)" >&2
python3 "$here/compare-peers.py" "${ours[@]}" "${rested[@]}" --peers "$out/peers" \
  --out "$out/peers-$tag-$date"
