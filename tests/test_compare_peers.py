#!/usr/bin/env python3
"""CPU test of scripts/compare-peers.py on a recorded one-run comparison (H200, 2026-11-25:
tests/data/peers/h200: the peers' raw outputs as run-peers.sh wrote them, and our calibration of
the same run as `ceiling show --json` plus its probe details). Run by ctest (compare_peers_recorded)."""
import json
import os
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(SRC, "tests", "data", "peers", "h200")
SCRIPT = os.path.join(SRC, "scripts", "compare-peers.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def close(a, b, rel=1e-3):
    return a is not None and b is not None and abs(a - b) <= rel * abs(b)


with tempfile.TemporaryDirectory() as tmp:
    prefix = os.path.join(tmp, "peers-h200")
    r = subprocess.run([sys.executable, SCRIPT, "--ours", os.path.join(DATA, "ours-1.json"), "--probes",
                        os.path.join(DATA, "ours-1.probes.json"), "--peers", os.path.join(DATA, "peers"),
                        "--out", prefix], capture_output=True, text=True)
    check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    doc = json.load(open(prefix + ".json"))
    md = open(prefix + ".md").read()
    rows = {row["figure"]: row for row in doc["rows"]}
    check(doc["schema"] == "ceiling/peers/1", "schema")
    check(doc["gpu"] == "NVIDIA H200", "gpu name")
    peer = lambda fig, name: next((p["value"] for p in rows[fig]["peers"] if p["peer"] == name), None)
    # The peers' figures as their raw outputs print them (best of each suite).
    check(close(peer("dram.read", "gpu-stream"), 2.715), "gpu-stream read")
    check(close(peer("dram.copy", "BabelStream"), 3.981, 2e-3), "BabelStream copy")
    check(close(peer("dram.copy", "torch"), 4.216, 2e-3), "torch copy_")
    check(close(peer("l2.30MiB", "gpu-l2-cache"), 9.5743), "gpu-l2-cache at 30 MiB")
    check(close(peer("mma.fp16.fp32", "DissectingTensorCores"), 1357.3, 2e-3), "DTC fp16/fp32")
    check(close(peer("wgmma.fp16", "Hopper-benchmark"), 895.983), "HPMLL wgmma fp16")
    check(close(peer("latency.l2", "gpu-latency"), 277.6, 2e-3), "gpu-latency L2")
    check(close(peer("compute.fp64", "mixbench"), 31.17, 2e-3), "mixbench fp64")
    # Ours from the descriptor and the probe details of the same run.
    check(close(rows["dram.read"]["ours"], 4.624, 2e-2), f"ours DRAM read {rows['dram.read']['ours']}")
    check(close(rows["l2.30MiB"]["ours"], 9.487, 2e-3), f"ours L2 30 MiB {rows['l2.30MiB']['ours']}")
    check(close(rows["mma.int8"]["ours"], 2730, 2e-3), "ours mma int8")
    # Verdicts: higher is better for rates; latencies within 2% or a named side.
    check(rows["dram.read"]["verdict"] == "ours >= best peer", "read verdict")
    check(rows["l2.30MiB"]["verdict"] == "peer ahead", "L2 30 MiB verdict")
    check(rows["latency.l2"]["verdict"] == "within 2%", "L2 latency verdict")
    check(rows["latency.l1"]["verdict"] == "ours lower", "L1 latency verdict")
    check("Peer ahead on" in md and "L2 at 30 MiB" in md, "markdown summary line")
    check("the peer's figure at that rate needs" in md, "wgmma clock note")
    # The wgmma probe alone (calibrate --probes wgmma --tc-rest-ms): shown on the wgmma rows a peer leads.
    show = json.load(open(os.path.join(DATA, "ours-1.json")))
    for ti in show["tensor_instructions"]:
        if ti.get("key") == "wgmma.m64n256k16.fp16.fp32.ss":
            ti["throughput"]["value"] = 1.05 * 895.983e12
        if ti.get("key") == "wgmma.m64n256k8.tf32.fp32.ss":
            ti["throughput"]["value"] *= 0.5
    rested = os.path.join(tmp, "rested.json")
    json.dump(show, open(rested, "w"))
    r2 = subprocess.run([sys.executable, SCRIPT, "--ours", os.path.join(DATA, "ours-1.json"), "--probes",
                         os.path.join(DATA, "ours-1.probes.json"), "--peers", os.path.join(DATA, "peers"),
                         "--rested", rested, "--rested-ms", "400", "--out", prefix + "-rested"],
                        capture_output=True, text=True)
    check(r2.returncode == 0, f"rested: exit {r2.returncode}: {r2.stderr}")
    rrows = {row["figure"]: row for row in json.load(open(prefix + "-rested.json"))["rows"]}
    check(rrows["wgmma.fp16"]["ours"] == rows["wgmma.fp16"]["ours"], "the rested run does not replace ours")
    check(rrows["wgmma.fp16"]["verdict"] == "peer ahead; ours alone >= best peer",
          f"rested fp16 verdict: {rrows['wgmma.fp16']['verdict']}")
    check(rrows["wgmma.tf32"]["verdict"] == "peer ahead; ours alone < best peer",
          f"rested tf32 verdict: {rrows['wgmma.tf32']['verdict']}")
    check("(calibrate --probes wgmma --tc-rest-ms 400, a process of its own) 940.8" in rrows["wgmma.fp16"]["note"], rrows["wgmma.fp16"]["note"])
    check("our probe alone (a process of its own) >= the best peer on 1: wgmma FP16 N=256" in open(prefix + "-rested.md").read(),
          "rested summary line")
    # Two runs whose FP64 peak differs by 1% because their SM clocks do: the spread per clock is 0.
    run2 = json.load(open(os.path.join(DATA, "ours-1.json")))
    fp64 = run2["compute"]["cuda_core"]["fp64"]
    fp64["value"] *= 1.01
    fp64["measured"]["sm_clock_hz"] = 1.01 * (fp64["measured"].get("sm_clock_hz") or 1.98e9)
    base_clock = json.load(open(os.path.join(DATA, "ours-1.json")))["compute"]["cuda_core"]["fp64"]["measured"].get("sm_clock_hz")
    r2path = os.path.join(tmp, "run2.json")
    json.dump(run2, open(r2path, "w"))
    r3 = subprocess.run([sys.executable, SCRIPT, "--ours", os.path.join(DATA, "ours-1.json"), "--probes",
                         os.path.join(DATA, "ours-1.probes.json"), "--ours", r2path, "--probes",
                         os.path.join(DATA, "ours-1.probes.json"), "--peers", os.path.join(DATA, "peers"),
                         "--out", prefix + "-two"], capture_output=True, text=True)
    check(r3.returncode == 0, f"two runs: exit {r3.returncode}: {r3.stderr}")
    trows = {row["figure"]: row for row in json.load(open(prefix + "-two.json"))["rows"]}
    if base_clock:
        check(close(trows["compute.fp64"]["ours_spread"], 0.01 / 1.005, 1e-2), f"fp64 spread {trows['compute.fp64']['ours_spread']}")
        check(trows["compute.fp64"]["ours_spread_per_clock"] is not None
              and trows["compute.fp64"]["ours_spread_per_clock"] < 1e-9, "fp64 spread per clock")
        check("per SM clock" in open(prefix + "-two.md").read(), "per-clock spread in the table")
    else:
        check(trows["compute.fp64"]["ours_spread_per_clock"] is None, "no clock recorded: no spread per clock")
    # Rates without a recorded clock (DRAM) have none.
    check(trows["dram.read"]["ours_spread_per_clock"] is None, "DRAM has no spread per clock")
    # A missing peers directory: one line, exit 1.
    bad = subprocess.run([sys.executable, SCRIPT, "--ours", os.path.join(DATA, "ours-1.json"), "--peers",
                          os.path.join(tmp, "nope"), "--out", prefix], capture_output=True, text=True)
    check(bad.returncode == 1 and "no such directory" in bad.stderr and bad.stderr.count("\n") == 1, "missing dir")

if failures:
    print("compare-peers test FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("compare-peers test: all checks passed")
