#!/usr/bin/env bash
# One device call for the memory probes: GPU tests, SASS check, quick + full calibration, memcheck.
# Usage (on the GPU host, from the bundle's parent): bash BUNDLE/mem-device-run.sh BUNDLE OUTDIR
B=${1:-.bundle-mem}
O=${2:-${OUT:-out}}
mkdir -p "$O/quick" "$O/full"
probes=sm-clock,pchase-latency,dram-bandwidth,l2-bandwidth,l1-bandwidth,shared-bandwidth
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
  echo "== SASS: memory instructions per kernel"
  cuobjdump --dump-sass "$B/bin/ceiling" 2>/dev/null | awk '
    /Function :/ {fn=$3; next}
    fn ~ /stream_kernel|l2_kernel|per_sm_kernel|chase_global|chase_shared/ && match($0, /(LDG|STG|LDS|LDL|STL)[.A-Z0-9]*/) {
      c[fn " " substr($0, RSTART, RLENGTH)]++ }
    END {for (k in c) print c[k], k}' | sed 's/_ZN7ceiling6probes3mem[0-9A-Za-z_]*cu_[0-9a-f]*//' | sort -k2 | head -80
  echo "== GPU tests"
  timeout 120 "$B/bin/ceiling_gpu_tests" 2>&1 | tail -60; echo "gpu tests rc=${PIPESTATUS[0]}"
} > "$O/run.log" 2>&1
{
  echo "== quick"
  s=$(date +%s%N); timeout 120 "$B/bin/ceiling" calibrate --quick --probes $probes --out "$O/quick/h200.yaml"; rc=$?; echo "quick rc=$rc wall=$(( ($(date +%s%N) - s) / 1000000 )) ms"
  echo "== full"
  s=$(date +%s%N); timeout 180 "$B/bin/ceiling" calibrate --probes $probes --out "$O/full/h200.yaml"; rc=$?; echo "full rc=$rc wall=$(( ($(date +%s%N) - s) / 1000000 )) ms"
} > "$O/calib.log" 2>&1
timeout 100 compute-sanitizer --tool memcheck "$B/bin/ceiling_gpu_tests" > "$O/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$O/memcheck.log"
tail -5 "$O/memcheck.log"; grep -v stream_kernel "$O/run.log" | tail -70; cat "$O/calib.log"
