#!/usr/bin/env bash
# Stands in for Nsight Compute's ncu in CPU tests of `ceiling profile`: writes a recorded export
# to the --log-file, or fails the ways ncu fails. FAKE_NCU_MODE: ok (default), perm, nokernel,
# appfail, noexport, crash. FAKE_NCU_EXPORT: the export to write. FAKE_NCU_ARGS: file to record argv in.
log=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do [[ ${args[i]} == --log-file ]] && log=${args[i + 1]}; done
[[ -n ${FAKE_NCU_ARGS:-} ]] && printf '%s\n' "$@" > "$FAKE_NCU_ARGS"
case "${FAKE_NCU_MODE:-ok}" in
  ok)
    echo "output of the application"
    cat "$FAKE_NCU_EXPORT" > "$log" ;;
  perm)
    printf '==PROF== Connected to process 7 (/usr/bin/app)\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n' > "$log"
    exit 1 ;;
  nokernel)
    printf '==PROF== Connected to process 7 (/usr/bin/app)\n==PROF== Disconnected from process 7\n==WARNING== No kernels were profiled.\nAvailable Kernels:\n1. scale_cuda_core\n2. gemv_tensor_core\n' > "$log" ;;
  appfail)
    echo "Traceback: the application fell over"
    printf '==PROF== Connected to process 7 (/usr/bin/app)\n==ERROR== The application returned an error code (3).\n' > "$log"
    exit 3 ;;
  noexport)
    echo "==ERROR== Failed to prepare kernel for profiling" >&2
    exit 9 ;;
  crash)
    kill -SEGV $$ ;;
esac
