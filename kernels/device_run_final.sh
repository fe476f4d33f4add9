#!/usr/bin/env bash
# Final device run for issue #5: kernel GPU tests, SASS check, DRAM/L2 calibration (mem's probes)
# for the target ratios, validate against the shipped h200 and against the calibrated descriptor.
B=$(cd "$(dirname "$0")" && pwd)
cd "$B"
log=$OUT/run.log
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,driver_version --format=csv > $log 2>&1
timeout 150 bin/ceiling_gpu_tests -ts=kernels >> $log 2>&1; echo "gpu tests rc=$?" >> $log
bash ./check_sass.sh bin/ceiling $OUT/sass.tmp >> $log 2>&1; echo "sass rc=$?" >> $log; rm -f $OUT/sass.tmp
s=$(date +%s.%N)
timeout 200 bin/ceiling validate --hw h200 --out $OUT/h200-validation.json > $OUT/table.txt 2>> $log
rc=$?; e=$(date +%s.%N)
echo "validate (shipped h200) rc=$rc wall $(awk -v a=$s -v b=$e 'BEGIN{print b-a}') s" | tee -a $log
timeout 240 bin/ceiling calibrate --base h200 --probes dram-bandwidth,l2-bandwidth --out $OUT/h200-cal.yaml >> $log 2>&1
echo "calibrate rc=$?" >> $log
if [[ -f $OUT/h200-cal.yaml ]]; then
  timeout 120 bin/ceiling validate --hw $OUT/h200-cal.yaml --out $OUT/h200-cal-validation.json > $OUT/table-cal.txt 2>> $log
  echo "validate (calibrated) rc=$?" >> $log
fi
grep -E "rc=|DMMA=|test cases" $log; sed -n '/^Geometric/,$p' $OUT/table.txt; sed -n '/^Summary/,$p' $OUT/table-cal.txt; grep beats-bound $OUT/table-cal.txt | head -5
