#!/usr/bin/env bash
# Relocatable bundle for GPU hosts that have only the driver (and maybe the CUDA runtime):
#   scripts/bundle.sh [BUILD_DIR=build] [OUT_DIR=bundle]
# produces OUT_DIR/bin/{ceiling,ceiling_gpu_tests}, OUT_DIR/lib/*.so (every shared library the
# binaries need except the C library family and the driver), OUT_DIR/hardware/ (descriptors and
# probe details) and OUT_DIR/results/ (shipped validation results, read by `ceiling report`).
# The binaries carry RPATH $ORIGIN/../lib, so `OUT_DIR/bin/ceiling ...` runs from anywhere.
set -euo pipefail
build=${1:-build}
out=${2:-bundle}
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/hardware" "$out/results"
bins=()
for b in "$build/cli/ceiling" "$build/tests/ceiling_gpu_tests"; do
  [[ -x $b ]] && bins+=("$b")
done
((${#bins[@]})) || { echo "bundle.sh: no binaries in $build (build first)" >&2; exit 1; }
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libcuda\.so|libnvidia)'
for b in "${bins[@]}"; do
  cp "$b" "$out/bin/"
  ldd "$b" | awk '/=>/ {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] && continue
    [[ -f $path ]] || { echo "bundle.sh: $b needs $name, not found here" >&2; exit 1; }
    cp -L "$path" "$out/lib/$name"
  done
done
cp "$root"/hardware/*.yaml "$out/hardware/"
cp "$root"/hardware/*.probes.json "$out/hardware/" 2>/dev/null || true
cp "$root"/results/*-validation.json "$out/results/" 2>/dev/null || true
du -sh "$out" >&2
echo "bundle.sh: $out ready: $(ls "$out/bin" | tr '\n' ' ')" >&2
