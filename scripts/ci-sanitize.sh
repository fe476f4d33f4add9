#!/usr/bin/env bash
# CI's second half (README "ci:test"): the CPU-only code built with address and undefined-behaviour
# sanitizers runs the CPU tests, then every libFuzzer target runs briefly over its corpus and the
# regression inputs (docs/RELIABILITY.md). Own build directories: build-asan, build-fuzz.
#   scripts/ci-sanitize.sh [SECONDS_PER_FUZZ_TARGET]   # default 10 (7 targets, 2 at a time: ~40 s)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
start=$(date +%s)

# 1. ASan + UBSan, CPU only (no CUDA): every CPU test, the CLI tests included. Leak checks are off:
#    not yet tried on this code base, so a leak report cannot fail CI before someone has read one.
cmake -S . -B build-asan -G Ninja -DCEILING_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j 2
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j 2 -LE gpu
echo "ci-sanitize: sanitizer build and CPU tests passed in $(( $(date +%s) - start )) s" >&2

# 2. The fuzz targets (clang, libFuzzer), SECONDS each, two at a time.
CEILING_BUILD_JOBS=2 bash scripts/fuzz.sh build-fuzz "$seconds" 2
echo "ci-sanitize: passed in $(( $(date +%s) - start )) s" >&2
