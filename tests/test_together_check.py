#!/usr/bin/env python3
"""CPU test of scripts/together-check.py (issue 18) on synthetic descriptors: a figure that moves
more than both groups' run-to-run spread and 1% is flagged, one inside the noise or within 1% is
not; units are read from the descriptor's text values; GPUs are matched by UUID. Run by ctest
(together_check_synthetic)."""
import json
import os
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(SRC, "scripts", "together-check.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def descriptor(uuid, dram, launch, mma):
    return f"""schema: ceiling/hardware/1
identity:
  name: "Test GPU"
  uuid: "{uuid}"
memory:
  dram:
    bandwidth:
      measured:
        median: "{dram} TB/s"
fixed_costs:
  launch_single:
    measured:
      median: "{launch} us"
tensor_instructions:
  - api: mma
    shape: m16n8k16
    input: fp16
    accumulate: fp32
    throughput:
      measured:
        median: "{mma} TFLOP/s"
"""


with tempfile.TemporaryDirectory() as tmp:
    runs = {  # dir -> (dram TB/s, launch us, mma TFLOP/s) of GPU A; GPU B is steady everywhere
        "alone1": (3.00, 4.70, 700), "alone2": (3.01, 4.80, 701),
        "together1": (3.005, 5.50, 690), "together2": (3.002, 5.60, 720),
    }
    for d, (dram, launch, mma) in runs.items():
        os.makedirs(os.path.join(tmp, d))
        with open(os.path.join(tmp, d, "test-gpu-a.yaml"), "w") as f:
            f.write(descriptor("GPU-aaaa", dram, launch, mma))
        with open(os.path.join(tmp, d, "test-gpu-b.yaml"), "w") as f:
            f.write(descriptor("GPU-bbbb", 3.3, 4.0, 650))
        with open(os.path.join(tmp, d, "node.yaml"), "w") as f:
            f.write("schema: ceiling/node/1\n")  # skipped: not a GPU descriptor
    out = os.path.join(tmp, "check.json")
    r = subprocess.run([sys.executable, SCRIPT, "--alone", os.path.join(tmp, "alone1"), os.path.join(tmp, "alone2"),
                        "--together", os.path.join(tmp, "together1"), os.path.join(tmp, "together2"), "--json", out],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    j = json.load(open(out))
    rows = {(x["gpu"], x["figure"]): x for x in j["rows"]}
    check(j["figures"] == 6, f"6 figures expected (3 per GPU), got {j['figures']}")
    launch = rows.get(("GPU-aaaa", "fixed_costs.launch_single"))
    check(launch is not None and launch["moved"], "GPU A's launch cost moved (+17%, spreads 2%) and must be flagged")
    if launch:
        check(abs(launch["alone"][0] - 4.7e-6) < 1e-12, f"'4.70 us' read as seconds, got {launch['alone'][0]}")
        check(abs(launch["diff"] - (5.55 / 4.75 - 1)) < 1e-9, f"diff of the medians, got {launch['diff']}")
    dram = rows.get(("GPU-aaaa", "memory.dram.bandwidth"))
    check(dram is not None and not dram["moved"] and abs(dram["diff"]) < 0.01, "DRAM within 1%: not moved")
    if dram:
        check(abs(dram["alone"][0] - 3.0e12) < 1, f"'3.00 TB/s' read as B/s, got {dram['alone'][0]}")
    mma = rows.get(("GPU-aaaa", "tensor_instructions[mma.m16n8k16.fp16.fp32].throughput"))
    check(mma is not None and not mma["moved"], "mma +0.6% inside a 4.3% together spread: not moved")
    check(j["moved"] == 1, f"exactly one figure moved, got {j['moved']}")
    check(all(not x["moved"] for x in j["rows"] if x["gpu"] == "GPU-bbbb"), "GPU B is steady")
    check("1 moved more than" in r.stdout, "the summary line counts the moved figure")

# Units as descriptors write them, binary prefixes included (capacities are "57 MiB"; a run that
# wrote "59.31 MB" must compare with them in bytes, not as 59.31 against 57).
sys.path.insert(0, os.path.join(SRC, "scripts"))
import importlib.util  # noqa: E402
spec = importlib.util.spec_from_file_location("together_check", SCRIPT)
tc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tc)
check(tc.number("57 MiB") == (57 * 2**20, "B"), f"57 MiB -> {tc.number('57 MiB')}")
check(tc.number("59.3101 MB") == (59.3101e6, "B"), f"59.3101 MB -> {tc.number('59.3101 MB')}")
check(tc.number("2 GiB/s") == (2 * 2**30, "B/s"), f"2 GiB/s -> {tc.number('2 GiB/s')}")
check(tc.number("4.7 us") == (4.7e-6, "s"), f"4.7 us -> {tc.number('4.7 us')}")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("together-check: ok")
