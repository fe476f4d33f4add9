#!/usr/bin/env bash
# How wrong is "x read once" (Eq. 10's n D)? Nsight Compute's DRAM bytes of our CSR kernel's
# first launch per matrix (ncu flushes the caches before it), against the model's Q.
#   bash scripts/spmv-ncu.sh BUNDLE OUTDIR [ID] [MATRIX...]
set -uo pipefail
B=$(cd "${1:?usage: spmv-ncu.sh BUNDLE OUTDIR [ID] [MATRIX...]}" && pwd)
O=${2:?}; ID=${3:-h200}; shift 3 || shift $#
mkdir -p "$O"
names=("$@"); ((${#names[@]})) || names=(cant pwtk Si41Ge41H72 webbase-1M in-2004 circuit5M)
command -v ncu > /dev/null || { echo "spmv-ncu.sh: no ncu on PATH" | tee "$O/ncu.txt"; exit 0; }
echo "matrix dram_read_bytes dram_write_bytes" > "$O/ncu.txt"
for m in "${names[@]}"; do
  timeout 300 ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum -k regex:spmv_csr_binned -c 1 --csv \
    "$B/bin/ceiling" validate --hw "$ID" --kernels spmv --suite table2 --name "$m" --out "$O/ncu-$m.json" \
    > "$O/ncu-$m.csv" 2> "$O/ncu-$m.log"
  rd=$(grep -E 'dram__bytes_read.sum' "$O/ncu-$m.csv" | awk -F'","' '{print $(NF-1)" "$NF}' | tr -d '"')
  wr=$(grep -E 'dram__bytes_write.sum' "$O/ncu-$m.csv" | awk -F'","' '{print $(NF-1)" "$NF}' | tr -d '"')
  echo "$m read: $rd write: $wr" | tee -a "$O/ncu.txt"
done
