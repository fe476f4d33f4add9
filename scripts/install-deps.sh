#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages ceiling builds against, only those that are missing.
set -euo pipefail
# python3: the test generated_wgmma_ops_fresh runs scripts/gen_wgmma_ops.py --check; python3-yaml:
# scripts/together-check.py and its test together_check_synthetic read descriptors.
# clang + libclang-rt-14-dev: the libFuzzer targets of scripts/ci-sanitize.sh (Debian 12's clang 14).
# slurmctld + slurmd + slurm-client: the test slurm_selftest (tests/slurm/slurm-selftest.sh) starts
# its own one-node cluster with auth/none, so munge (which they pull in) need not run.
packages=(cmake ninja-build g++ libeigen3-dev libyaml-cpp-dev libspdlog-dev doctest-dev
          libcli11-dev nlohmann-json3-dev gnuplot-nox python3 python3-yaml clang libclang-rt-14-dev
          slurmctld slurmd slurm-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present" >&2
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
