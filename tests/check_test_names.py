#!/usr/bin/env python3
"""Every doctest case of ceiling_tests must be reachable through ctest.

doctest_discover_tests hands each test-case name to CMake, which splits a name at ';' (its list
separator): the ctest entry then filters on a prefix that matches no case and passes with 0 test
cases run (until 2026-11-27, 23 cases never ran in CI, one of them failing). This check lists the
cases and refuses such names. Usage: check_test_names.py PATH/TO/ceiling_tests
"""
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = subprocess.run([sys.argv[1], "--list-test-cases", "--no-version"], capture_output=True, text=True, check=True).stdout
    names = [l.strip() for l in out.splitlines() if l.strip() and not l.startswith("[doctest]") and not l.startswith("=")]
    bad = [n for n in names if ";" in n]
    if len(names) < 100:
        print(f"only {len(names)} test cases listed: the listing format changed?", file=sys.stderr)
        return 1
    for n in bad:
        print(f"test case name has ';' (CMake splits it, so ctest would run 0 cases): {n}", file=sys.stderr)
    print(f"{len(names)} test cases, {len(bad)} with ';'")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
