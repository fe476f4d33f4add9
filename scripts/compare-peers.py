#!/usr/bin/env python3
"""Our calibrated figures beside the public suites' on the same GPU, from one run (issue 15).

  scripts/compare-peers.py --ours OURS.json --probes OURS.probes.json [--ours OURS2.json --probes ...] \
      --peers RAW_DIR --out PREFIX

OURS.json: `ceiling show --hw D --json` of a descriptor calibrated in the run (several: the
repeats, for the spread). OURS.probes.json: that calibration's probe details (L2 by size). RAW_DIR:
the peers' raw outputs as run-peers.sh writes them (<suite>.txt). Writes PREFIX.md and PREFIX.json:
one row per figure, ours (median of the repeats, and the spread), each peer's value, ours / best
peer, and which is higher. Our parsers of the peers' outputs are ours; the peers' code is not here.

Definitions (docs/PEERS.md): bandwidths in TB/s (10^12 B/s), compute in TFLOP/s or TOP/s,
latencies in cycles, tensor throughput of mma.sync in FMA/clock/SM (clock-free). For bandwidth and
compute, higher is better and ours should be >= the best peer; for latency, ours should be within
2% of the peer or the difference is one of method (documented per row).
"""
import argparse
import json
import math
import os
import re
import statistics
import sys


def read(raw, name):
    try:
        with open(os.path.join(raw, name + ".txt"), errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def num(s):
    try:
        v = float(s)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------- peers
def peers_figures(raw):
    """{figure key: [(peer, value, how)]} from the raw outputs."""
    f = {}

    def add(key, peer, value, how):
        if value is not None:
            f.setdefault(key, []).append((peer, value, how))

    # gpu-stream (gpu-benches): lines "... GB/s: init read scale triad ..." over block sizes; best of each.
    rows = []
    for line in read(raw, "gpu-stream").splitlines():
        if "GB/s:" in line:
            vals = [num(x) for x in line.split("GB/s:")[1].split()]
            if len(vals) >= 4 and None not in vals[:4]:
                rows.append(vals)
    if rows:
        best = [max(r[i] for r in rows) / 1000 for i in range(4)]
        add("dram.write", "gpu-stream", best[0], "init kernel, best over its block sizes")
        add("dram.read", "gpu-stream", best[1], "read kernel, best over its block sizes")
        add("dram.scale", "gpu-stream", best[2], "scale kernel, best over its block sizes")
        add("dram.triad", "gpu-stream", best[3], "triad kernel, best over its block sizes")

    # BabelStream: "Copy  <MB/s> <min> <max> <avg>" (MBytes/sec of the fastest run).
    bs = read(raw, "babelstream")
    for name, key in (("Copy", "dram.copy"), ("Mul", "dram.scale"), ("Triad", "dram.triad")):
        m = re.search(rf"^{name}\s+([\d.]+)", bs, re.M)
        if m:
            add(key, "BabelStream", float(m.group(1)) / 1e6, f"{name}, FP64 2^27 elements, fastest of 100")

    # PyTorch copy_ and mul (median of 10, events).
    t = read(raw, "torch")
    m = re.search(r"^d2d copy fp64 2\^28: ([\d.]+)", t, re.M)
    if m:
        add("dram.copy", "torch", float(m.group(1)), "copy_ of 2^28 FP64, median of 10")
    m = re.search(r"^scale fp64 2\^28 \(torch mul\): ([\d.]+)", t, re.M)
    if m:
        add("dram.scale", "torch", float(m.group(1)), "torch.mul of 2^28 FP64, median of 10")

    # mixbench: CSV rows, FP32 GFLOPS col 3, FP64 col 7; bandwidths cols 4 and 8.
    mrows = []
    for line in read(raw, "mixbench").splitlines():
        fs = [x.strip() for x in line.split(",")]
        if len(fs) >= 17 and re.fullmatch(r"\d+", fs[0]):
            v = [num(x) for x in fs[:17]]
            if None not in v:
                mrows.append(v)
    if mrows:
        add("compute.fp32", "mixbench", max(r[3] for r in mrows) / 1000, "FP32 peak of its intensity sweep")
        add("compute.fp64", "mixbench", max(r[7] for r in mrows) / 1000, "FP64 peak of its intensity sweep")

    # gpu-l2-cache: "<per block kB> kB <total kB> kB <ms> <spread>% <GB/s> GB/s"; the size nearest each point.
    l2 = []
    for line in read(raw, "gpu-l2-cache").splitlines():
        m = re.match(r"\s*(\d+) kB\s+(\d+) kB\s+\d+ms\s+[\d.]+%\s+([\d.]+) GB/s", line)
        if m:
            l2.append((int(m.group(2)) * 1024, float(m.group(3)) / 1000))
    for mib in (7.5, 15, 30):
        if l2:
            size, v = min(l2, key=lambda r: abs(math.log(r[0] / (mib * 2**20))))
            if abs(size / (mib * 2**20) - 1) < 0.25:
                add(f"l2.{mib:g}MiB", "gpu-l2-cache", v, f"{size / 2**20:.1f} MiB working set, L1-allocating loads")

    # gpu-cache: "<kB> kB <ms> <spread>% <GB/s> GB/s"; L1 = peak at <= 192 kB per SM.
    gc = []
    for line in read(raw, "gpu-cache").splitlines():
        m = re.match(r"\s*(\d+) kB\s+\d+ms\s+[\d.]+%\s+([\d.]+) GB/s", line)
        if m:
            gc.append((int(m.group(1)), float(m.group(2)) / 1000))
    l1 = [r for r in gc if r[0] <= 192]
    if l1:
        pk = max(l1, key=lambda r: r[1])
        add("l1.bandwidth", "gpu-cache", pk[1], f"peak at {pk[0]} kB, one block per SM")

    # gpu-latency: rows "<i> <clock MHz> <kB> <?> <cycles>".
    lat = []
    for line in read(raw, "gpu-latency").splitlines():
        fs = line.split()
        if len(fs) == 5 and all(re.fullmatch(r"[\d.]+", x) for x in fs):
            lat.append((int(float(fs[1])), int(float(fs[2])), float(fs[4])))
    if lat:
        add("latency.l1", "gpu-latency", lat[0][2], f"{lat[0][1]} kB chain")
        l2c = [r[2] for r in lat if 1024 <= r[1] <= 16384]
        if l2c:
            add("latency.l2", "gpu-latency", statistics.median(l2c), "median over 1-16 MB chains")
        add("latency.dram", "gpu-latency", lat[-1][2], f"{lat[-1][1] / 1024:.0f} MB chain")
        # Its chains between near L2 (> 1.3x its L2 figure) and DRAM (< 0.9x its last chain): listed
        # beside our far-L2 level, not compared with it - one element per 64 bytes (two per 128-byte
        # line) mixes near hits into the far chains, so they show no level of their own.
        if l2c:
            near, dram = statistics.median(l2c), lat[-1][2]
            mid = [r for r in lat if 1.3 * near < r[2] < 0.9 * dram]
            if mid:
                peers_chains["latency.l2_far"] = "gpu-latency chains between near L2 and DRAM: " + ", ".join(
                    f"{r[1] / 1024:.1f} MB {r[2]:.0f}" for r in mid) + " cycles (one element per 64 bytes: two per " \
                    "128-byte line, so near hits mix into them)"

    # DissectingTensorCores: "-- <kernel> ILP=<n>", "FMA tensor bandwidth = <FMA/clk/SM>"; best per kernel.
    cur = None
    dtc = {}
    for line in read(raw, "dtc").splitlines():
        m = re.match(r"-- (\S+) ILP=(\d+)", line)
        if m:
            cur = m.group(1)
            continue
        m = re.search(r"FMA tensor bandwidth = ([\d.]+)", line)
        if m and cur:
            dtc[cur] = max(dtc.get(cur, 0.0), float(m.group(1)))
    for kernel, key in (("mma_m16n8k16_half", "mma.fp16.fp16"), ("mma_m16n8k16_fp32", "mma.fp16.fp32"),
                        ("mma_m16n8k8_tf32", "mma.tf32"), ("mma_m16n8k32_int", "mma.int8")):
        if kernel in dtc:
            add(key, "DissectingTensorCores", dtc[kernel], f"{kernel}, best over ILP 1-4 and warps")

    # Hopper benchmark (HPMLL) wgmma: "SM90_64xNx.._<TYPE> random A in shem M=64,N=256,K=.. ... <X>TFLOPS".
    for line in read(raw, "wgmma").splitlines():
        m = re.search(r"(SM90_64xNx\d+_\S+) (random|zero) A in (shem|reg) M=64,N=(\d+),K=(\d+)\s+elapsed_time: "
                      r"[\d.]+ms ([\d.]+)TFLOPS(, latancy)?", line)
        if not m or m.group(7) or m.group(4) != "256" or m.group(2) != "random" or m.group(3) != "shem":
            continue
        typ = re.search(r"_(F32F16F16|F32TF32TF32|F32E4M3E4M3|S32S8S8)", m.group(1))
        key = {"F32F16F16": "wgmma.fp16", "F32TF32TF32": "wgmma.tf32", "F32E4M3E4M3": "wgmma.fp8",
               "S32S8S8": "wgmma.int8"}.get(typ.group(1) if typ else "")
        if key:
            add(key, "Hopper-benchmark", float(m.group(6)), f"m64n256k{m.group(5)}, random A in shared memory")
    return f


# ---------------------------------------------------------------- ours
def field_value(fld):
    if not fld:
        return None
    return fld.get("value")


def ours_figures(show, probes):
    """{figure key: (value, how)} from `ceiling show --json` and the probe details."""
    o = {}
    mem = show.get("memory", {})
    clock = None
    for k, key in (("read", "dram.read"), ("write", "dram.write"), ("copy", "dram.copy"), ("scale", "dram.scale"),
                   ("triad", "dram.triad")):
        v = field_value(mem.get("dram", {}).get("patterns", {}).get(k))
        if v:
            o[key] = (v / 1e12, f"dram-bandwidth {k} pattern, median")
    runs = (probes or {}).get("probes", {}).get("l2-bandwidth", {}).get("details", {}).get("runs", [])
    for mib in (7.5, 15, 30):
        near = [r for r in runs if abs(r.get("buffer_bytes", 0) / (mib * 2**20) - 1) < 0.25]
        if near:
            r = max(near, key=lambda r: r["bytes_per_s"])
            o[f"l2.{mib:g}MiB"] = (r["bytes_per_s"] / 1e12, f"l2-bandwidth at {r['buffer_bytes'] / 2**20:.1f} MiB")
    sms = show.get("identity", {}).get("sm_count")
    l1 = mem.get("l1", {}).get("bandwidth_per_sm")
    l1c = (probes or {}).get("probes", {}).get("l1-bandwidth", {}).get("details", {}).get("sm_clock_hz")
    if isinstance(l1c, list):
        l1c = statistics.median(l1c) if l1c else None
    if field_value(l1) and sms:
        clk = (l1.get("measured") or {}).get("sm_clock_hz") or l1c
        if clk:
            o["l1.bandwidth"] = (field_value(l1) * sms * clk / 1e12,
                                 f"{field_value(l1):.1f} B/clk/SM x {sms} SMs x {clk / 1e9:.3f} GHz")
    for lvl in ("l1", "l2", "dram"):
        v = field_value(mem.get(lvl, {}).get("latency"))
        if v:
            o[f"latency.{lvl}"] = (v, "pchase-latency (cycles)")
    v = field_value(mem.get("l2", {}).get("extra", {}).get("far_latency"))
    if v:
        o["latency.l2_far"] = (v, "pchase-latency, one element per 128-byte line between the near and the far knee (cycles)")
    comp = show.get("compute", {}).get("cuda_core", {})
    for p in ("fp32", "fp64"):
        v = field_value(comp.get(p))
        if v:
            o[f"compute.{p}"] = (v / 1e12, "cuda-core probe")
            clk = (comp.get(p).get("measured") or {}).get("sm_clock_hz")
            if clk:
                o[f"compute.{p}.clk"] = (clk, None)
    for ti in show.get("tensor_instructions", []):
        key = ti.get("key", "")
        fma = field_value(ti.get("fma_per_clock_per_sm"))
        thr = field_value(ti.get("throughput"))
        for k, fig in (("mma.m16n8k16.fp16.fp16", "mma.fp16.fp16"), ("mma.m16n8k16.fp16.fp32", "mma.fp16.fp32"),
                       ("mma.m16n8k8.tf32.fp32", "mma.tf32"), ("mma.m16n8k32.int8.int32", "mma.int8")):
            if key == k and fma:
                o[fig] = (fma, f"{k}, FMA/clk/SM")
        for k, fig in (("wgmma.m64n256k16.fp16.fp32.ss", "wgmma.fp16"), ("wgmma.m64n256k8.tf32.fp32.ss", "wgmma.tf32"),
                       ("wgmma.m64n256k32.fp8_e4m3.fp32.ss", "wgmma.fp8"), ("wgmma.m64n256k32.int8.int32.ss", "wgmma.int8")):
            if key == k and thr:
                clk = ((ti.get("throughput") or {}).get("measured") or {}).get("sm_clock_hz")
                o[fig] = (thr / 1e12, f"{k}, random operands, {fma or 0:.1f} FMA/clk/SM at the run's SM clock "
                                      f"{(clk or 0) / 1e9:.3f} GHz")
                o[fig + ".fma_clk"] = (fma, clk)
                if clk:
                    o[fig + ".clk"] = (clk, None)
    return o


peers_chains = {}  # figure -> a peer's raw points, shown in the row's note


FIGURES = [
    ("dram.read", "DRAM read", "TB/s"), ("dram.write", "DRAM write", "TB/s"), ("dram.copy", "DRAM copy", "TB/s"),
    ("dram.scale", "DRAM scale", "TB/s"), ("dram.triad", "DRAM triad", "TB/s"),
    ("l2.7.5MiB", "L2 at 7.5 MiB", "TB/s"), ("l2.15MiB", "L2 at 15 MiB", "TB/s"), ("l2.30MiB", "L2 at 30 MiB", "TB/s"),
    ("l1.bandwidth", "L1 bandwidth", "TB/s"),
    ("latency.l1", "L1 latency", "cycles"), ("latency.l2", "L2 latency", "cycles"),
    ("latency.l2_far", "far L2 latency", "cycles"), ("latency.dram", "DRAM latency", "cycles"),
    ("compute.fp64", "FP64 CUDA cores", "TFLOP/s"), ("compute.fp32", "FP32 CUDA cores", "TFLOP/s"),
    ("mma.fp16.fp16", "mma FP16 (FP16 acc.)", "FMA/clk/SM"), ("mma.fp16.fp32", "mma FP16 (FP32 acc.)", "FMA/clk/SM"),
    ("mma.tf32", "mma TF32", "FMA/clk/SM"), ("mma.int8", "mma INT8", "FMA/clk/SM"),
    ("wgmma.fp16", "wgmma FP16 N=256", "TFLOP/s"), ("wgmma.tf32", "wgmma TF32 N=256", "TFLOP/s"),
    ("wgmma.fp8", "wgmma FP8 N=256", "TFLOP/s"), ("wgmma.int8", "wgmma INT8 N=256", "TOP/s"),
]


def compare(ours_runs, probes_runs, raw, rested=None, rested_ms=None):
    peers = peers_figures(raw)
    rested_figs = ours_figures(rested, None) if rested else {}
    ours = [ours_figures(s, probes_runs[i] if i < len(probes_runs) else (probes_runs[0] if probes_runs else None))
            for i, s in enumerate(ours_runs)]
    rows = []
    for key, label, unit in FIGURES:
        vals = [o[key][0] for o in ours if key in o]
        how = next((o[key][1] for o in ours if key in o), "")
        mine = statistics.median(vals) if vals else None
        spread = (max(vals) - min(vals)) / mine if vals and mine else None
        # A flop/s figure follows the SM clock of its run: the spread per clock as well, where every
        # run recorded its clock, tells the clock's share of the run-to-run spread.
        clks = [o[key + ".clk"][0] for o in ours if key in o and key + ".clk" in o]
        spread_per_clock = None
        if len(clks) == len(vals) and len(vals) > 1 and all(clks):
            per = [v / c for v, c in zip(vals, clks)]
            spread_per_clock = (max(per) - min(per)) / statistics.median(per)
        ps = peers.get(key, [])
        latency = key.startswith("latency.")
        best = (min if latency else max)(ps, key=lambda p: p[1]) if ps else None
        ratio = mine / best[1] if mine and best else None
        if ratio is None:
            verdict = ("no peer" + (" level (see note)" if key in peers_chains else "")) if mine else "not measured by us"
        elif latency:
            verdict = "within 2%" if abs(ratio - 1) <= 0.02 else ("ours lower" if ratio < 1 else "ours higher")
        else:
            verdict = "ours >= best peer" if ratio >= 1 else "peer ahead"
        note = peers_chains.get(key, "")
        if key.startswith("wgmma.") and best:
            # Tensor throughput in flop/s follows the SM clock the power limit allows during the run: the
            # peer's clock, were its FMA/clk/SM ours, and ours.
            fc = [o[key + ".fma_clk"] for o in ours if key + ".fma_clk" in o and o[key + ".fma_clk"][0]]
            sms = ours_runs[0].get("identity", {}).get("sm_count")
            if fc and sms:
                fma = statistics.median(f for f, c in fc)
                clk = statistics.median(c for f, c in fc if c)
                peer_clk = best[1] * 1e12 / (2 * fma * sms)
                note = (f"ours {fma:.1f} FMA/clk/SM at {clk / 1e9:.3f} GHz (median of the runs); the peer's figure "
                        f"at that rate needs {peer_clk / 1e9:.3f} GHz")
            if key in rested_figs and ratio is not None and ratio < 1:
                # The wgmma probe alone in a process of its own (as each peer run is), with longer rests
                # (calibrate --probes wgmma --tc-rest-ms): inside a full calibration the same board ran
                # it ~3% slower (docs/PEERS.md).
                rv = rested_figs[key][0]
                rc = (rested_figs.get(key + ".fma_clk") or (None, None))[1]
                ahead = rv >= best[1]
                verdict = f"peer ahead; ours alone {'>=' if ahead else '<'} best peer"
                note += (f"; ours alone (calibrate --probes wgmma --tc-rest-ms {rested_ms}, a process of its own) {rv:.4g}"
                         + (f" at {rc / 1e9:.3f} GHz" if rc else "") + f", {rv / best[1]:.3f} of the best peer")
        rows.append({"figure": key, "label": label, "unit": unit, "ours": mine, "ours_runs": vals, "note": note,
                     "ours_spread": spread, "ours_how": how, "ours_spread_per_clock": spread_per_clock,
                     "ours_clock_hz_runs": clks if spread_per_clock is not None else [],
                     "peers": [{"peer": p, "value": v, "how": h} for p, v, h in ps],
                     "best_peer": best[0] if best else None, "ratio": ratio, "verdict": verdict})
    return rows


def markdown(rows, title):
    out = [f"# {title}", "",
           "| figure | unit | ours (median; spread over runs) | peers | ours / best peer | verdict |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        per_clock = (f"; {r['ours_spread_per_clock'] * 100:.2f}% per SM clock"
                     if r.get("ours_spread_per_clock") is not None else "")
        ours = "n/a" if r["ours"] is None else f"{r['ours']:.4g}" + (
            f" ({r['ours_spread'] * 100:.2f}% over {len(r['ours_runs'])}{per_clock})"
            if r["ours_spread"] is not None and len(r["ours_runs"]) > 1 else "")
        peers = "; ".join(f"{p['peer']} {p['value']:.4g}" for p in r["peers"]) or "—"
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.3f}"
        out.append(f"| {r['label']} | {r['unit']} | {ours} | {peers} | {ratio} | {r['verdict']} |")
    ahead = [r["label"] for r in rows if r["verdict"].startswith("peer ahead")]
    rested = [r["label"] for r in rows if "ours alone >=" in r["verdict"]]
    out += ["", f"Peer ahead on {len(ahead)} figure(s)" + (": " + ", ".join(ahead) if ahead else "") + "."
            + (f" Of these, our probe alone (a process of its own) >= the best peer on {len(rested)}: "
               + ", ".join(rested) + "." if rested else "")]
    out += ["", "How each figure was measured:", ""]
    for r in rows:
        hows = [f"ours: {r['ours_how']}"] if r["ours_how"] else []
        hows += [f"{p['peer']}: {p['how']}" for p in r["peers"]]
        if r.get("note"):
            hows.append(r["note"])
        if hows:
            out.append(f"- {r['label']}: " + "; ".join(hows))
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ours", action="append", required=True, help="`ceiling show --json` of a calibrated descriptor (repeatable)")
    ap.add_argument("--probes", action="append", default=[],
                    help="each calibration's <stem>.probes.json, in the order of --ours (repeatable)")
    ap.add_argument("--peers", required=True, help="the peers' raw outputs (run-peers.sh's $OUT/peers)")
    ap.add_argument("--out", required=True, help="output prefix: PREFIX.md and PREFIX.json")
    ap.add_argument("--title", default="ceiling vs the public suites, one run")
    ap.add_argument("--rested", help="`ceiling show --json` of the wgmma probe alone in a process of its own "
                                     "(calibrate --probes wgmma --tc-rest-ms MS), shown on the wgmma rows a peer leads")
    ap.add_argument("--rested-ms", type=int, default=500, help="the rest of --rested in ms (default 500)")
    a = ap.parse_args(argv[1:])
    try:
        runs = [json.load(open(p)) for p in a.ours]
        probes = [json.load(open(p)) for p in a.probes]
        rested = json.load(open(a.rested)) if a.rested else None
    except (OSError, ValueError) as e:
        print(f"compare-peers: {e}", file=sys.stderr)
        return 1
    if not os.path.isdir(a.peers):
        print(f"compare-peers: {a.peers}: no such directory (the peers' raw outputs)", file=sys.stderr)
        return 1
    rows = compare(runs, probes, a.peers, rested, a.rested_ms)
    gpu = runs[0].get("identity", {}).get("name", "?")
    doc = {"schema": "ceiling/peers/1", "gpu": gpu, "descriptor": runs[0].get("id"), "rows": rows}
    with open(a.out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write(markdown(rows, f"{a.title}: {gpu}"))
    print(markdown(rows, f"{a.title}: {gpu}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
