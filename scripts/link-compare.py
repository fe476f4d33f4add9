#!/usr/bin/env python3
"""Puts ceiling's host<->device link figures next to PyTorch's on the same GPU (issue 16).

  python3 scripts/link-compare.py CALIBRATE_JSON [CALIBRATE_JSON...] TORCH_JSON > table.md

CALIBRATE_JSON: stdout of `ceiling calibrate --devices all --links-only --json` (one or more runs);
TORCH_JSON: stdout of scripts/link-torch-check.py. Prints one Markdown row per path (per GPU for the
host paths, per ordered pair for GPU->GPU): ours per run (bandwidth, latency), PyTorch's, and
ours/PyTorch of the best run. PyTorch's peer_A_B copy_ is set beside our peer_ce.
"""
import json
import sys


def gbs(x):
    return f"{x / 1e9:.2f} GB/s"


def us(x):
    return f"{x * 1e6:.2f} us"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    runs = [json.load(open(f)) for f in argv[1:-1]]
    torch = json.load(open(argv[-1]))
    print(f"| path | ours bandwidth (runs) | PyTorch bandwidth | ours/PyTorch | ours latency (runs) | PyTorch latency |")
    print("|---|---|---:|---:|---|---:|")
    tdev = torch.get("device_index", 0)

    def row(label, ours, t):
        ob = [f.get("bandwidth") for f in ours if "bandwidth" in f]
        ol = [f.get("latency") for f in ours if "latency" in f]
        errs = sorted({f["error"] for f in ours if "error" in f})
        bw_runs = ", ".join(gbs(x) for x in ob) or ("failed: " + "; ".join(errs) if errs else "not measured")
        lat_runs = ", ".join(us(x) for x in ol) or "-"
        if t and "bandwidth" in t and ob:
            ratio = f"{max(ob) / t['bandwidth']:.3f}"
            tb, tl = gbs(t["bandwidth"]), us(t["latency"])
        else:
            ratio, tb, tl = "-", ("-" if not t else t.get("error", "-")), "-"
        print(f"| {label} | {bw_runs} | {tb} | {ratio} | {lat_runs} | {tl} |")

    devices = sorted({h.get("device", 0) for r in runs for h in r.get("links", {}).get("host", [])})
    for dev in devices:
        for path in ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable", "host_sm_read"):
            ours = []
            for r in runs:
                for h in r.get("links", {}).get("host", []):
                    if h.get("device", 0) == dev and path in h:
                        ours.append(h[path])
            # PyTorch's host paths were measured on one device (its --device).
            t = torch.get("paths", {}).get(path) if dev == tdev else None
            row(f"GPU {dev} {path}" if len(devices) > 1 else path, ours, t)
    pairs = sorted({(q["from"], q["to"]) for r in runs for q in r.get("links", {}).get("pairs", [])})
    for a, b in pairs:
        t = torch.get("paths", {}).get(f"peer_{a}_{b}")
        for path in ("peer_ce", "staged_ce", "peer_sm_read"):
            ours = []
            for r in runs:
                for q in r.get("links", {}).get("pairs", []):
                    if (q["from"], q["to"]) == (a, b) and path in q:
                        ours.append(q[path])
            if ours:
                # PyTorch's copy_ between devices is a copy-engine copy (peer where allowed):
                # compare it with peer_ce only.
                row(f"GPU {a}->{b} {path}", ours, t if path == "peer_ce" else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
