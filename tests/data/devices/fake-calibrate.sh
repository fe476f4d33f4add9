#!/usr/bin/env bash
# Stands in for `ceiling calibrate --device N --out FILE --json` in CPU tests of calibrate --devices
# (CEILING_CALIBRATE_EXE): device 1 fails the way a GPU without a driver does; any other device
# writes the shipped H200 descriptor with its own UUID to --out. FAKE_CALIBRATE_ARGS names a prefix: each
# child records its argv in PREFIX.<device>.<pid> (one file per child: the children run at once, and
# appends to one shared file can interleave).
dev="" out=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [[ ${args[i]} == --device ]] && dev=${args[i + 1]}
  [[ ${args[i]} == --out ]] && out=${args[i + 1]}
done
[[ -n ${FAKE_CALIBRATE_ARGS:-} ]] && printf '%s\n' "$@" > "$FAKE_CALIBRATE_ARGS.$dev.$$"
echo "[1/11] dram-bandwidth: running" >&2
if [[ $dev == 1 ]]; then
  echo "[error] calibrate: device 1: cudaErrorNoDevice: no CUDA-capable device is detected" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
sed -E "s/^(  uuid: ).*/\1\"GPU-fake000$dev-0000-0000-0000-000000000000\"/" "$here/../../../hardware/h200.yaml" > "$out"
echo "{\"descriptor\": \"$out\", \"device\": {\"name\": \"NVIDIA H200\", \"uuid\": \"GPU-fake000$dev-0000-0000-0000-000000000000\"}, \"seconds\": 0.1}"
