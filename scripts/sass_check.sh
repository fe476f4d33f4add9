#!/usr/bin/env bash
# Proves the templates emitted the instructions they were meant to (STYLE habit 2), for the
# compute probes and the validation kernels:
#   scripts/sass_check.sh FILE...   (the ceiling binary, ceiling_gpu_tests, or objects; needs cuobjdump)
# Prints, per probe kernel, the matrix/FMA opcodes and their counts, and checks each kernel family
# against the opcode it must contain; per validation kernel the DMMA and 16-byte LDG/STG counts
# (DMMA in the tensor-core variants, none in the CUDA-core ones, 16-byte global accesses), plus
# the SASS each registered variant declares (`ceiling validate --list`) where FILE answers it;
# the load/store opcodes of the memory-probe kernels, for reading only.
# Exit 1 on a mismatch, 2 on a usage error, 77 without cuobjdump.
set -uo pipefail
command -v cuobjdump >/dev/null || { echo "sass_check.sh: no cuobjdump here" >&2; exit 77; }
(($#)) || { echo "usage: $0 FILE..." >&2; exit 2; }
demangle=cat
command -v c++filt >/dev/null && demangle=c++filt
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT
for f in "$@"; do cuobjdump --dump-sass "$f"; done >"$tmp" || { echo "cuobjdump failed" >&2; exit 1; }

# function [arch] -> " OPCODE:count ..." (first-seen order) for the opcodes matching $1.
opcodes() {
  awk -v want="$1" '
    /arch = / { arch = $NF }
    /Function : / { fn = $3; key = fn " [" arch "]"; order[++n] = key; next }
    /\/\*[0-9a-f]+\*\/ / {
      line = $0; sub(/.*\*\/ +/, "", line); sub(/^@!?U?P[0-9T] +/, "", line)
      split(line, w, /[ ;]/); op = w[1]
      if (op ~ want) { if (!((key, op) in cnt)) ops[key] = ops[key] " " op; cnt[key, op]++ }
    }
    END {
      for (i = 1; i <= n; ++i) {
        k = order[i]; out = ""
        m = split(ops[k], list, " ")
        for (j = 1; j <= m; ++j) out = out " " list[j] ":" cnt[k, list[j]]
        print k "\t" out
      }
    }' "$tmp" | $demangle
}
status=0

echo "== compute probes: matrix and FMA opcodes per kernel"
opcodes '^(DMMA|HMMA|IMMA|BMMA|HGMMA|QGMMA|IGMMA|BGMMA|DFMA|FFMA|HFMA2|IMAD|CALL)' |
  grep -E "mma_check_kernel|mma_loop_kernel|wgmma_loop_kernel|wgmma_sp_loop_kernel|fma_chains_kernel" |
  sed -E 's/ceiling::probes::compute::(\(anonymous namespace\)::)?//g; s/wgmma_sp_ops::|mma_ops::|wgmma_ops:://g' >"$tmp.probes"
cat "$tmp.probes"
# Expectations: kernel-name pattern -> opcode regex that must appear (sm_90 images).
check() {  # pattern opcode-regex [arch regex]
  local lines
  lines=$(grep -E "$1" "$tmp.probes" | grep -E "\\[${3:-sm_90a?}\\]")
  [[ -z $lines ]] && { echo "MISSING  $1 (no such kernel)"; status=1; return; }
  while IFS= read -r l; do
    if grep -Eq "$2" <<<"$l"; then echo "ok       $1 -> $2"; else echo "MISMATCH $1 -> $2: $l"; status=1; fi
  done <<<"$lines"
}
if [[ -s $tmp.probes ]]; then
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
  check 'mma_loop_kernel<SP_(F16F32|F16F16|BF16|TF32)_' ' HMMA\.SP'
  check 'mma_loop_kernel<SP_S8_' ' IMMA\.SP'
  check 'wgmma_loop_kernel<WG_(F16|BF16|TF32)' ' HGMMA' 'sm_90a'
  check 'wgmma_loop_kernel<WG_E[45]M[32]' ' QGMMA' 'sm_90a'
  check 'wgmma_loop_kernel<WG_S8' ' IGMMA' 'sm_90a'
  # wgmma-sp (wgmma_sp_sm90a.cu): the sparse loops must issue the sparse GMMA (SASS spells it
  # HGMMA.SP.64x256x32...; the regex also takes a trailing .SP), the dense twins the dense one.
  check 'wgmma_sp_loop_kernel<SparseOp<WGSP_(F16|BF16|TF32)' ' HGMMA\.([^ :]*\.)?SP[.:]' 'sm_90a'
  check 'wgmma_sp_loop_kernel<SparseOp<WGSP_E4M3' ' QGMMA\.([^ :]*\.)?SP[.:]' 'sm_90a'
  check 'wgmma_sp_loop_kernel<SparseOp<WGSP_S8' ' IGMMA\.([^ :]*\.)?SP[.:]' 'sm_90a'
  check 'wgmma_sp_loop_kernel<DenseOp<WG_(F16|BF16|TF32)' ' HGMMA\.64x' 'sm_90a'
  check 'wgmma_sp_loop_kernel<DenseOp<WG_E4M3' ' QGMMA\.64x' 'sm_90a'
  check 'wgmma_sp_loop_kernel<DenseOp<WG_S8' ' IGMMA\.64x' 'sm_90a'
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
  done < <(grep -E 'mma_loop_kernel<' "$tmp.probes" | grep -v wgmma)
else
  echo "(no compute-probe kernels in $*)"
fi

echo "== dpx probe: min/max opcodes per kernel; each throughput kernel must hold its function's opcode (sm_90)"
# Expected on sm_90: VIMNMX3 / VIADDMNMX / VIMNMX (.RELU, 16x2 forms); before it IMNMX, IADD3, PRMT.
# __vibmax may become ISETP + SEL. Fewer than 256 min/max opcodes in a throughput kernel of a
# non-__vibmax function would mean the chains were folded.
# Kernels templated on the enum demangle as "(ceiling::probes::dpx::Fn)N": N is named from the
# enum's order in probes/host/dpx.hpp (kept in step by hand: 16 functions).
dpx_names=(vimax3_s32 vimin3_s32 vimax3_s16x2 vimin3_s16x2 viaddmax_s32 viaddmin_s32 viaddmax_s16x2 vimax_s32_relu
           vimax3_s32_relu vibmax_s32 vimax3_u32 vimin3_u32 viaddmax_u32 viaddmin_u32 vibmax_u32 vimax3_s16x2_relu)
opcodes '^(VIMNMX|VIMNMX3|VIADDMNMX|IMNMX|ISETP|SEL|PRMT|IADD3|VIADD|VHMNMX)' |
  grep -E "(latency|throughput|check)_kernel<\(?(ceiling::probes::)?dpx::Fn" |
  sed -E 's/ceiling::probes::(\(anonymous namespace\)::)?//g; s/ceiling::probes::dpx:://g; s/\(?dpx::Fn\)?:?:?//g' >"$tmp.dpx"
# The opcode each function's throughput kernel must hold on sm_90 (probes/host/dpx.hpp expected_sass).
declare -A dpx_want=([vimax3_s32]='VIMNMX3' [vimin3_s32]='VIMNMX3' [vimax3_s16x2]='VIMNMX3\.S16x2'
  [vimin3_s16x2]='VIMNMX3\.S16x2' [viaddmax_s32]='VIADDMNMX' [viaddmin_s32]='VIADDMNMX'
  [viaddmax_s16x2]='VIADDMNMX\.S16x2' [vimax_s32_relu]='VIMNMX3?\.RELU' [vimax3_s32_relu]='VIMNMX3\.RELU'
  [vibmax_s32]='SEL' [vimax3_u32]='VIMNMX3\.U32' [vimin3_u32]='VIMNMX3\.U32' [viaddmax_u32]='VIADDMNMX\.U32'
  [viaddmin_u32]='VIADDMNMX\.U32' [vibmax_u32]='SEL' [vimax3_s16x2_relu]='VIMNMX3\.S16x2\.RELU')
if [[ -s $tmp.dpx ]]; then
  while IFS= read -r l; do
    if [[ $l =~ _kernel\<([0-9]+)\> ]]; then l=${l/<${BASH_REMATCH[1]}>/<${dpx_names[${BASH_REMATCH[1]}]}>}; fi
    echo "$l"
    if [[ $l =~ throughput_kernel\<([a-z0-9_]+)\>.*\[sm_90a?\] ]]; then
      fn=${BASH_REMATCH[1]}
      if [[ -n ${dpx_want[$fn]:-} ]] && ! grep -Eq " ${dpx_want[$fn]}[A-Za-z0-9.]*:" <<<"$l"; then
        echo "MISMATCH dpx $fn: no ${dpx_want[$fn]}"; status=1
      fi
    fi
  done <"$tmp.dpx"
else
  echo "(no dpx kernels in $*)"
fi

echo "== async-copy probe: copy and barrier opcodes per kernel (reading only; a missing opcode prints 'expect', never fails)"
# Kernels are templated on an int (stages or loads per thread), so names read e.g. bulk_copy_kernel<4>;
# matched by function name. Expected on sm_90: sync_copy_kernel LDG.E.128 (.STRONG.GPU for ld.cg) + STS.128;
# cp_async_copy_kernel and matmul_async_pipe_kernel LDGSTS (+ LDGDEPBAR, DEPBAR); bulk_copy_kernel UBLKCP +
# SYNCS (mbarrier); tensor_copy_kernel UTMALDG + SYNCS; matmul_sync_share_kernel LDG + STS, no LDGSTS.
# On sm_80 images the bulk/tensor kernels are a trap (the host skips them below cc 9.0).
opcodes '^(LDGSTS|LDGDEPBAR|DEPBAR|UBLKCP|UTMALDG|UTMACMDFLUSH|SYNCS|LDG|STS|LDS|BAR|TRAP|BPT)' |
  grep -E "(sync_copy|cp_async_copy|bulk_copy|tensor_copy|matmul_sync_share|matmul_async_pipe)_kernel" |
  sed -E 's/ceiling::probes::(\(anonymous namespace\)::)?//g' >"$tmp.async"
if [[ -s $tmp.async ]]; then
  cat "$tmp.async"
  expect() {  # kernel-name pattern, opcode regex (sm_90 images only)
    local lines
    lines=$(grep -E "$1" "$tmp.async" | grep -E "\\[sm_90a?\\]")
    [[ -z $lines ]] && { echo "expect   $1: no sm_90 image"; return; }
    while IFS= read -r l; do grep -Eq "$2" <<<"$l" && echo "seen     $1 -> $2" || echo "expect   $1 -> $2 (not seen: $l)"; done <<<"$lines"
  }
  expect '(^|[ :])sync_copy_kernel<' ' LDG\.E[.A-Z0-9]*128:'
  expect '(^|[ :])sync_copy_kernel<' ' STS\.128:'
  expect 'cp_async_copy_kernel<' ' LDGSTS'
  expect 'matmul_async_pipe_kernel<' ' LDGSTS'
  expect 'bulk_copy_kernel<' ' UBLKCP'
  expect 'bulk_copy_kernel<' ' SYNCS'
  expect 'tensor_copy_kernel<' ' UTMALDG'
  expect 'tensor_copy_kernel<' ' SYNCS'
else
  echo "(no async-copy kernels in $*)"
fi

echo "== dsm probe: shared/cluster memory opcodes per kernel (reading only)"
# The cluster path (probes/dsm_sm90a.cu, PTX mapa + ld/st/red.shared::cluster, barrier.cluster):
# on sm_90 the remote accesses may show as generic LD/ST/RED (.E) on cluster-window addresses or as
# LDS/STS/ATOMS, MAPA for the address, UCGABAR_* / CGAERRBAR for the cluster barrier, S2R/S2UR for
# %smid and %cluster_ctarank. The sm_80 image (when built) has empty kernels. Matched by the kernel
# function names (dsm_latency_kernel, dsm_ring_kernel<ILP>, dsm_histogram_kernel), not by enums.
opcodes '^(LD|LDS|LDG|ST|STS|STG|ATOM|ATOMS|RED|MAPA|UCGABAR|CGABAR|CGAERRBAR|MEMBAR|FENCE|S2R|S2UR|CS2R)' |
  grep -E "dsm_(latency|ring|histogram)_kernel" |
  sed -E 's/ceiling::probes::(\(anonymous namespace\)::)?//g' || echo "(no dsm kernels in $*)"

echo "== validation kernels: DMMA and 16-byte global accesses"
opcodes '^(DMMA|LDG|STG)' | grep -E "(scale|gemv)_(tensor|cuda)_core" >"$tmp.kernels"
if [[ -s $tmp.kernels ]]; then
  ldg128='LDG\.E[A-Z0-9.]*\.128'
  stg128='STG\.E[A-Z0-9.]*\.128'
  count() { grep -oE " $1[A-Za-z0-9.]*:[0-9]+" "$2" | awk -F: '{s += $NF} END {print s + 0}'; }
  for k in scale_tensor_core_fp64 scale_cuda_core gemv_tensor_core gemv_cuda_core; do
    grep -F "$k" "$tmp.kernels" >"$tmp.k"
    fns=$(wc -l <"$tmp.k")
    dmma=$(count 'DMMA' "$tmp.k")
    ld=$(count "$ldg128" "$tmp.k")
    st=$(count "$stg128" "$tmp.k")
    echo "$k: functions=$fns DMMA=$dmma LDG.128=$ld STG.128=$st"
    ((fns > 0)) || { echo "  FAIL: no $k kernel"; status=1; continue; }
    case $k in
      *tensor_core*) ((dmma > 0)) || { echo "  FAIL: no DMMA in $k"; status=1; } ;;
      *) ((dmma == 0)) || { echo "  FAIL: DMMA in CUDA-core $k"; status=1; } ;;
    esac
    ((ld > 0)) || { echo "  FAIL: no 16-byte loads (LDG.128) in $k"; status=1; }
    # SCALE writes a vector as wide as it reads; GEMV writes one value per row.
    [[ $k != scale_* ]] || ((st > 0)) || { echo "  FAIL: no 16-byte stores (STG.128) in $k"; status=1; }
  done
  # What each registered variant declares ("SASS of FUNCTION: has /RE/, no /RE/"): every function
  # whose demangled name contains FUNCTION has an opcode matching the first, none matching the second.
  for f in "$@"; do
    "$f" validate --list 2>/dev/null | sed -nE 's|^ *SASS of (.*): has /([^/]*)/(, no /([^/]*)/)?$|\1\t\2\t\4|p'
  done | sort -u >"$tmp.declared"
  if [[ -s $tmp.declared ]]; then
    opcodes '.' >"$tmp.all"
    while IFS=$'\t' read -r fn require forbid; do
      lines=$(grep -F "$fn" "$tmp.all")
      [[ -z $lines ]] && { echo "MISSING  $fn (declared by a variant, no such function)"; status=1; continue; }
      while IFS= read -r l; do
        ops=${l#*$'\t'}
        if [[ -n $require ]] && ! grep -Eq " ($require)" <<<"$ops"; then
          echo "MISMATCH ${l%%$'\t'*}: no /$require/"; status=1
        elif [[ -n $forbid ]] && grep -Eq " ($forbid)" <<<"$ops"; then
          echo "MISMATCH ${l%%$'\t'*}: has /$forbid/"; status=1
        else
          echo "ok       $fn -> /$require/${forbid:+, no /$forbid/}"
        fi
      done <<<"$lines"
    done <"$tmp.declared"
  fi
else
  echo "(no validation kernels in $*)"
fi

echo "== memory probes: load/store opcodes per kernel (for reading)"
opcodes '^(LDG|STG|LDS|STS|LDSM|STSM|LDL|STL|LD|ST)(\.|$)' |
  grep -E "stream_kernel|l2_kernel|per_sm_kernel|chase_global|chase_shared|fragment_chase|ldmatrix_chase|lds_tput|ldmatrix_tput" |
  sed -E 's/ceiling::probes::mem::(\(anonymous namespace\)::)?//g'
exit $status
