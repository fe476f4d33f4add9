#!/usr/bin/env bash
# SpMV on a GPU host, from a bundle (scripts/bundle.sh): GPU kernel tests, the Table 2 suite at
# full size (3 variants, timed), a user's Matrix Market file (symmetric, written here), predict.
#   bash scripts/spmv-check.sh BUNDLE OUTDIR [ID]
# Leaves OUTDIR/summary.log (read it first), OUTDIR/<ID>-spmv-validation.json and the logs.
set -uo pipefail
B=$(cd "${1:?usage: spmv-check.sh BUNDLE OUTDIR [ID]}" && pwd)
O=${2:?usage: spmv-check.sh BUNDLE OUTDIR [ID]}
ID=${3:-h200}
mkdir -p "$O"
S=$O/summary.log
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$S"
t=$(date +%s%N); timeout 400 "$B/bin/ceiling_gpu_tests" -ts=kernels > "$O/gpu-tests.log" 2>&1
echo "gpu kernel tests rc=$? $(ms $t) ms: $(grep -E 'test cases' "$O/gpu-tests.log" | tail -1)" | tee -a "$S"
grep -E 'ERROR|FAILED' -A3 "$O/gpu-tests.log" | head -20 >> "$S"
t=$(date +%s%N)
timeout 500 "$B/bin/ceiling" validate --hw "$ID" --kernels spmv --out "$O/$ID-spmv-validation.json" > "$O/validate.txt" 2> "$O/validate.log"
echo "validate --kernels spmv (table2, full size) rc=$? wall $(ms $t) ms" | tee -a "$S"
# A user's file: symmetric, 1-based, comments, a pattern of a 2-D Laplacian (200 x 200 grid).
python3 - "$O/laplace2d.mtx" <<'PY'
import sys
n = 200; N = n * n; e = []
for i in range(n):
    for j in range(n):
        r = i * n + j + 1
        e.append((r, r, 4.0))
        if j + 1 < n: e.append((r + 1, r, -1.0))
        if i + 1 < n: e.append((r + n, r, -1.0))
with open(sys.argv[1], "w") as f:
    f.write("%%MatrixMarket matrix coordinate real symmetric\n% 2-D Laplacian, lower triangle\n")
    f.write(f"{N} {N} {len(e)}\n")
    for r, c, v in e: f.write(f"{r} {c} {v}\n")
PY
t=$(date +%s%N)
timeout 200 "$B/bin/ceiling" validate --hw "$ID" --kernels spmv --matrix "$O/laplace2d.mtx" --out "$O/user-mtx.json" > "$O/user.txt" 2> "$O/user.log"
echo "validate --matrix laplace2d.mtx rc=$? wall $(ms $t) ms" | tee -a "$S"
"$B/bin/ceiling" predict --hw "$ID" --kernel spmv-csr --suite table2 --name circuit5M >> "$S" 2>&1
grep -E 'generating|reading|^\[' "$O/validate.log" | head -3 >> "$S"
cat "$O/user.txt" | grep -E 'spmv-csr' | head -8 >> "$S"
cat "$O/validate.txt" >> "$S"
