#!/usr/bin/env bash
# SASS evidence for the validation kernels: DMMA in the tensor-core variants, none in the
# CUDA-core ones, 16-byte global loads/stores (LDG.E.128 / STG.E.128) everywhere.
#   kernels/check_sass.sh BINARY [OUT_FILE]   (BINARY: ceiling or ceiling_gpu_tests)
set -euo pipefail
bin=${1:?usage: check_sass.sh BINARY [OUT_FILE]}
out=${2:-/dev/stdout}
command -v cuobjdump >/dev/null || { echo "check_sass.sh: cuobjdump not on PATH" >&2; exit 2; }
sass=$(mktemp)
cuobjdump --dump-sass "$bin" > "$sass"
status=0
{
  for k in scale_tensor_core_fp64 scale_cuda_core gemv_tensor_core gemv_cuda_core; do
    awk -v k="$k" '/Function : /{on = index($0, k) > 0; if (on) print "== " $0} on' "$sass" > "$sass.$k"
    fns=$(grep -c '^== ' "$sass.$k" || true)
    dmma=$(grep -c 'DMMA' "$sass.$k" || true)
    ld128=$(grep -cE 'LDG\.E\.(128|ENL2\.128)|LDG\.E\.[A-Z.]*128' "$sass.$k" || true)
    st128=$(grep -cE 'STG\.E[A-Z.]*\.128' "$sass.$k" || true)
    echo "$k: functions=$fns DMMA=$dmma LDG.128=$ld128 STG.128=$st128"
    case $k in
      *tensor_core*) ((dmma > 0)) || { echo "  FAIL: no DMMA in $k"; status=1; } ;;
      *) ((dmma == 0)) || { echo "  FAIL: DMMA in CUDA-core $k"; status=1; } ;;
    esac
    grep -m3 'DMMA' "$sass.$k" | sed 's/^ */    /' || true
  done
} > "$out"
rm -f "$sass" "$sass".*
[[ $out == /dev/stdout ]] || cat "$out"
exit $status
