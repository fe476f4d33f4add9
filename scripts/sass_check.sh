#!/usr/bin/env bash
# Proves the compute-probe templates emitted the instructions they were meant to (STYLE habit 2):
#   scripts/sass_check.sh FILE...   (binaries or objects holding the probe kernels; needs cuobjdump)
# Prints, per probe kernel, the matrix/FMA opcodes and their counts, then checks each kernel
# family against the opcode it must contain. Exit 1 on a mismatch, 77 without cuobjdump.
set -uo pipefail
command -v cuobjdump >/dev/null || { echo "sass_check.sh: no cuobjdump here" >&2; exit 77; }
(($#)) || { echo "usage: $0 FILE..." >&2; exit 2; }
demangle=cat
command -v c++filt >/dev/null && demangle=c++filt
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in "$@"; do cuobjdump --dump-sass "$f"; done >"$tmp" || { echo "cuobjdump failed" >&2; exit 1; }
# function -> "OPCODE:count ..." for the opcodes of interest (architecture line kept per function).
awk '
  /arch = / { arch = $NF }
  /Function : / { fn = $3; key = fn " [" arch "]"; order[++n] = key; next }
  /\/\*[0-9a-f]+\*\/ / {
    line = $0; sub(/.*\*\/ +/, "", line); sub(/^@!?U?P[0-9T] +/, "", line)
    split(line, w, /[ ;]/); op = w[1]
    if (op ~ /^(DMMA|HMMA|IMMA|BMMA|HGMMA|QGMMA|IGMMA|BGMMA|DFMA|FFMA|HFMA2|IMAD|WARPGROUP|WARPSYNC|CALL)/) cnt[key, op]++
    if (op ~ /^(DMMA|HMMA|IMMA|HGMMA|QGMMA|IGMMA|DFMA|FFMA|HFMA2|IMAD|CALL)/) ops[key] = ops[key] " " op
  }
  END {
    for (i = 1; i <= n; ++i) {
      k = order[i]; out = ""
      delete seen
      m = split(ops[k], list, " ")
      for (j = 1; j <= m; ++j) if (!(list[j] in seen)) { seen[list[j]] = 1; out = out " " list[j] ":" cnt[k, list[j]] }
      print k "\t" out
    }
  }' "$tmp" | $demangle | grep -E "mma_check_kernel|mma_loop_kernel|wgmma_loop_kernel|fma_chains_kernel" |
  sed -E 's/ceiling::probes::compute::(\(anonymous namespace\)::)?//g; s/mma_ops::|wgmma_ops:://g' >"$tmp.sum"
cat "$tmp.sum"
# Expectations: kernel-name pattern -> opcode regex that must appear (sm_90 images).
status=0
check() {  # pattern opcode-regex [arch regex]
  local lines
  lines=$(grep -E "$1" "$tmp.sum" | grep -E "\\[${3:-sm_90a?}\\]")
  [[ -z $lines ]] && { echo "MISSING  $1 (no such kernel)"; status=1; return; }
  while IFS= read -r l; do
    if grep -Eq "$2" <<<"$l"; then echo "ok       $1 -> $2"; else echo "MISMATCH $1 -> $2: $l"; status=1; fi
  done <<<"$lines"
}
check 'mma_loop_kernel<F64_m8n8k4' ' DMMA\.8x8x4'
check 'mma_loop_kernel<F64_m16n8k4' ' DMMA\.16x8x4'
check 'mma_loop_kernel<F64_m16n8k8' ' DMMA\.16x8x8'
check 'mma_loop_kernel<F64_m16n8k16' ' DMMA\.16x8x16'
check 'mma_loop_kernel<(F16F16|F16F32|BF16)_m16n8k16' ' HMMA\.16816'
check 'mma_loop_kernel<(F16F16|F16F32|BF16)_m16n8k8' ' HMMA\.1688'
check 'mma_loop_kernel<TF32_m16n8k(4|8)' ' HMMA\.168[48]\.F32\.TF32'
check 'mma_loop_kernel<S8_m16n8k(16|32)' ' IMMA'
check 'mma_loop_kernel<S4_m16n8k32' ' IMMA\.16816\.S8\.S8'
check 'mma_loop_kernel<S4_m16n8k64' ' IMMA\.16832\.S8\.S8'
check 'mma_loop_kernel<E[45]M[32]_' ' HMMA\.16816\.F32'
check 'wgmma_loop_kernel<WG_(F16|BF16|TF32)' ' HGMMA' 'sm_90a'
check 'wgmma_loop_kernel<WG_E[45]M[32]' ' QGMMA' 'sm_90a'
check 'wgmma_loop_kernel<WG_S8' ' IGMMA' 'sm_90a'
check 'fma_chains_kernel<.*Fp64' ' DFMA'
check 'fma_chains_kernel<.*Fp32' ' FFMA'
check 'fma_chains_kernel<.*Fp16x2' ' HFMA2'
check 'fma_chains_kernel<.*Bf16x2' ' HFMA2'
check 'fma_chains_kernel<.*Int32' ' IMAD'
# Every ILP chain must survive: an mma_loop_kernel<Op, ILP> holds at least ILP matrix instructions
# (unless ptxas lowered the mma to a subroutine CALL, as for s4 on sm_90).
while IFS= read -r l; do
  grep -q ' CALL' <<<"$l" && continue
  ilp=$(sed -E 's/.*mma_loop_kernel<[A-Za-z0-9_]+, ([0-9]+)>.*/\1/' <<<"$l")
  n=$(grep -oE ' (DMMA|HMMA|IMMA)[A-Za-z0-9.]*:[0-9]+' <<<"$l" | awk -F: '{s += $2} END {print s + 0}')
  if ((n < ilp)); then echo "MERGED   $l (only $n matrix instructions for ILP $ilp)"; status=1; fi
done < <(grep -E 'mma_loop_kernel<' "$tmp.sum" | grep -v wgmma)
rm -f "$tmp.sum"
exit $status
