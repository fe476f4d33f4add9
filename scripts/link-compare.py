#!/usr/bin/env python3
"""Puts ceiling's host<->device link figures next to PyTorch's on the same GPU (issue 16).

  python3 scripts/link-compare.py CALIBRATE_JSON [CALIBRATE_JSON...] TORCH_JSON > table.md

CALIBRATE_JSON: stdout of `ceiling calibrate --devices all --links-only --json` (one or more runs);
TORCH_JSON: stdout of scripts/link-torch-check.py. Prints one Markdown row per path: ours per run
(bandwidth, latency), PyTorch's, and ours/PyTorch of the best run.
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
    for path in ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable", "host_sm_read"):
        ours = []
        for r in runs:
            host = r.get("links", {}).get("host", [])
            f = host[0].get(path, {}) if host else {}
            ours.append(f)
        t = torch.get("paths", {}).get(path)
        ob = [f.get("bandwidth") for f in ours if "bandwidth" in f]
        ol = [f.get("latency") for f in ours if "latency" in f]
        bw_runs = ", ".join(gbs(x) for x in ob) or "failed"
        lat_runs = ", ".join(us(x) for x in ol) or "failed"
        if t and "bandwidth" in t and ob:
            ratio = f"{max(ob) / t['bandwidth']:.3f}"
            tb, tl = gbs(t["bandwidth"]), us(t["latency"])
        else:
            ratio, tb, tl = "-", ("-" if not t else t.get("error", "-")), "-"
        print(f"| {path} | {bw_runs} | {tb} | {ratio} | {lat_runs} | {tl} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
