#!/usr/bin/env bash
# Device run for issue #5 (copied into the bundle beside bin/): GPU kernel tests, SASS check,
# full validate twice (repeatability), outputs under $OUT.
#   bash .bundle-kernels/device_run.sh [DESCRIPTOR=h200] [TEST_FILTER]
B=$(cd "$(dirname "$0")" && pwd)
cd "$B"
hw=${1:-h200}
filter=${2:+-ts=$2}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/smi.txt 2>&1
timeout 150 bin/ceiling_gpu_tests $filter > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?" >> $OUT/gpu_tests.log
bash ./check_sass.sh bin/ceiling $OUT/sass.txt; echo "sass rc=$?" >> $OUT/sass.txt
s=$(date +%s.%N)
timeout 200 bin/ceiling validate --hw "$hw" --out $OUT/validation.json > $OUT/table.txt 2> $OUT/validate.log
rc=$?; e=$(date +%s.%N)
echo "validate rc=$rc wall $(awk -v a=$s -v b=$e 'BEGIN{print b-a}') s" | tee -a $OUT/table.txt
if [[ $rc == 0 ]]; then
  timeout 120 bin/ceiling validate --hw "$hw" --out $OUT/validation-2.json > $OUT/table2.txt 2>&1
  echo "validate#2 rc=$?" >> $OUT/table2.txt
fi
tail -4 $OUT/gpu_tests.log; cat $OUT/sass.txt; grep -E "warn|error" $OUT/validate.log | head; grep -A30 "Tensor-core speedup" $OUT/table.txt | tail -22
