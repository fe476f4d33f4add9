#!/usr/bin/env python3
"""Does calibrating several GPUs at once change a figure? (issue 18)

  python3 scripts/together-check.py --alone DIR [DIR...] --together DIR [DIR...] [--json OUT.json] > table.md

Each DIR is an --out-dir of `ceiling calibrate --devices ...` (descriptors named by UUID prefix).
For every GPU (by UUID) and every measured figure (`measured.median` anywhere in the descriptor),
it prints the alone runs, the together runs, the run-to-run spread of each group
((max - min) / median), and the difference of the medians of the groups. A figure "moved" when
that difference is larger than both groups' own spread and 1%: running together changed it more
than repeating a run does. Wall times come from the DIRs' node.yaml/calibrate.json where present.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys

import yaml

UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12}


def number(v):
    """'3.259 TB/s' -> (3.259e12, 'B/s'); '1004.337' -> (1004.337, ''). None when not a number."""
    if isinstance(v, (int, float)):
        return float(v), ""
    m = re.match(r"^\s*([-+0-9.eE]+)\s*([a-zA-Z/%]*)", str(v))
    if not m:
        return None
    x, unit = float(m.group(1)), m.group(2)
    binary = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    if len(unit) > 2 and unit[:2] in binary and unit[2:] in ("B", "B/s"):  # "57 MiB" (capacities are written so)
        return x * binary[unit[:2]], unit[2:]
    if unit in ("us", "ns", "ms", "ps") or (len(unit) > 1 and unit[0] in UNITS and unit[0] not in ("B",) and unit[1:] in ("B/s", "Hz", "FLOP/s", "OP/s", "s", "B")):
        return x * UNITS[unit[0]], unit[1:]
    return x, unit


def figures(node, path=""):
    if isinstance(node, dict):
        if "measured" in node and isinstance(node["measured"], dict) and "median" in node["measured"]:
            n = number(node["measured"]["median"])
            if n:
                yield path, n
        for k, v in node.items():
            if k == "measured":
                continue
            yield from figures(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            key = i
            if isinstance(v, dict):  # tensor instructions: name them, not by position
                key = ".".join(str(v[k]) for k in ("api", "shape", "input", "input_detail", "accumulate", "sparse") if k in v)
            yield from figures(v, f"{path}[{key}]")


def load(dirs):
    runs = {}  # uuid -> list of {path: value}
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "*.yaml"))):
            if os.path.basename(f) == "node.yaml":
                continue
            desc = yaml.safe_load(open(f))
            uuid = str(((desc.get("identity") or {}).get("uuid")) or os.path.basename(f))
            runs.setdefault(uuid, []).append(dict((p, v) for p, (v, _) in figures(desc)))
    return runs


def spread(xs):
    return (max(xs) - min(xs)) / abs(statistics.median(xs)) if len(xs) > 1 and statistics.median(xs) else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alone", nargs="+", required=True)
    ap.add_argument("--together", nargs="+", required=True)
    ap.add_argument("--json")
    a = ap.parse_args()
    alone, together = load(a.alone), load(a.together)
    rows, moved = [], 0
    for uuid in sorted(set(alone) & set(together)):
        paths = sorted(set().union(*alone[uuid]) & set().union(*together[uuid]))
        for p in paths:
            xa = [r[p] for r in alone[uuid] if p in r]
            xt = [r[p] for r in together[uuid] if p in r]
            if not xa or not xt:
                continue
            ma, mt = statistics.median(xa), statistics.median(xt)
            diff = (mt - ma) / abs(ma) if ma else 0.0
            noise = max(spread(xa), spread(xt))
            flag = abs(diff) > max(noise, 0.01)
            moved += flag
            rows.append({"gpu": uuid, "figure": p, "alone": xa, "together": xt, "diff": diff,
                         "spread_alone": spread(xa), "spread_together": spread(xt), "moved": flag})
    print(f"| GPU | figure | alone (runs) | together (runs) | together/alone - 1 | spread alone | spread together | moved |")
    print("|---|---|---|---|---:|---:|---:|---|")
    for r in rows:
        g = r["gpu"][:12]
        fmt = lambda xs: ", ".join(f"{x:.4g}" for x in xs)
        print(f"| {g} | {r['figure']} | {fmt(r['alone'])} | {fmt(r['together'])} | {100 * r['diff']:+.2f}% | "
              f"{100 * r['spread_alone']:.2f}% | {100 * r['spread_together']:.2f}% | {'**yes**' if r['moved'] else ''} |")
    n = len(rows)
    within = sum(1 for r in rows if abs(r["diff"]) <= 0.01)
    print(f"\n{n} figures over {len(set(r['gpu'] for r in rows))} GPU(s): {within} within 1%, {moved} moved more "
          f"than both groups' run-to-run spread and 1%.")
    if a.json:
        json.dump({"rows": rows, "figures": n, "within_1pct": within, "moved": moved}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
