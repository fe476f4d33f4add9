#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (docs/RELIABILITY.md "Fuzzing"): configures and builds
# them with clang in BUILD (default build-fuzz) when needed, then runs each target for SECONDS
# (default 60) over its corpus, JOBS targets at a time (default 1). New inputs go to
# BUILD/fuzz-corpus/<target>/ (kept between runs), crashes to BUILD/fuzz-crashes/<target>/,
# logs to BUILD/fuzz-logs/<target>.log. Exit status 1 when any target found a crash.
#   scripts/fuzz.sh                          # every target, 60 s each
#   scripts/fuzz.sh build-fuzz 10            # CI: 10 s each
#   TARGETS="units json" scripts/fuzz.sh build-fuzz 600 2
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
seconds=${2:-60}
jobs=${3:-1}
targets=${TARGETS:-descriptor kernel_file results probes manifest units json matrix_market stencil_shape ncu_csv node_yaml}

if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCEILING_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "${CEILING_BUILD_JOBS:-2}" >/dev/null

run_one() {
  local t=$1
  local corpus=$build/fuzz-corpus/$t crashes=$build/fuzz-crashes/$t log=$build/fuzz-logs/$t.log
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  # Inputs over 64 KiB mutate slowly; limits: 512 MB per allocation (issue 17), 10 s per input.
  if "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 -malloc_limit_mb=512 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" \
       "$build/tests/fuzz/corpus/$t" >"$log" 2>&1; then
    echo "fuzz $t: ok, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds} s" >&2
  else
    echo "fuzz $t: FAILED (see $log; inputs in $crashes/, add them to tests/fuzz/regressions/$t/)" >&2
    grep -m3 -E 'ceiling fuzz|ERROR:|runtime error' "$log" >&2 || true
    return 1
  fi
}

status=0
running=0
for t in $targets; do
  run_one "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
