#!/usr/bin/env bash
# Times `ceiling report --fleet` on the synthetic 1000-GPU fleet of the CPU test (issue 16 target:
# under 10 s): the test generates it into DIR (kept), then farm-bench (or `time`) runs the command.
#   scripts/fleet-bench.sh [BUILD=build] [DIR=/tmp/ceiling-fleet-1000]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dir=${2:-/tmp/ceiling-fleet-1000}
CEILING_FLEET_KEEP="$dir" "$build/tests/ceiling_tests" -tc="fleet: 1000 synthetic GPUs*" > /dev/null
rm -rf "$dir.out"
if command -v farm-bench > /dev/null; then
  farm-bench -n 3 -- sh -c "'$build/cli/ceiling' report --fleet '$dir' --out '$dir.out' > /dev/null 2>&1; true"
else
  time "$build/cli/ceiling" report --fleet "$dir" --out "$dir.out" || true
fi
"$build/cli/ceiling" report --fleet "$dir" --out "$dir.out" | head -8 || true
