#!/usr/bin/env python3
"""Counters against declared W and Q: ceiling's own kernels profiled with `ceiling profile`.

  scripts/profile-selfcheck.py PROFILE.json VALIDATION.json [PROFILE.json VALIDATION.json ...]

PROFILE.json: `ceiling profile --per-launch --out PROFILE.json -- ceiling validate ... --out VALIDATION.json`
(or `ceiling profile --from-ncu export.csv --per-launch --out ...`). Each profiled launch of a
known kernel is matched to the validate result of the same kernel and variant whose declared Q is
nearest to the launch's L2 traffic (sizes differ by orders of magnitude). Prints a Markdown table:
counter W over declared W, DRAM and L2 Q over declared Q, and for tensor-core kernels the flops
per tensor instruction. Exits 1 when a launch of a memory-bound kernel out of L2 has DRAM Q more
than 3% from the declared Q.
"""
import json
import math
import sys

# short_name -> (kernel, variant, implementation or None)
KNOWN = {
    "scale_cuda_core": ("scale", "cuda_core", None),
    "scale_tensor_core_fp64": ("scale", "tensor_core", None),
    "gemv_cuda_core": ("gemv", "cuda_core", None),
    "gemv_tensor_core": ("gemv", "tensor_core", None),
    "stencil_plain_kernel": ("stencil", "cuda_core", "plain"),
    "stencil_plain_point_kernel": ("stencil", "cuda_core", "plain"),
    "spmv_csr_binned": ("spmv-csr", "cuda_core", "ours"),
    "csrmv_v3_kernel": ("spmv-csr", "cuda_core", "cusparse"),
    "spmv_packed_cuda_core": ("spmv-csr", "cuda_core", "packed"),
    "spmv_tensor_core_groups": ("spmv-csr", "tensor_core", None),
    "intensity_cuda_core_fp64": ("intensity", "cuda_core", None, "fp64"),
    "intensity_cuda_core_fp32": ("intensity", "cuda_core", None, "fp32"),
    "intensity_cuda_core_fp16": ("intensity", "cuda_core", None, "fp16"),
    "intensity_tensor_core_fp64": ("intensity", "tensor_core", None, "fp64"),
    "intensity_tensor_core_fp16": ("intensity", "tensor_core", None, "fp16"),
}


def size_text(r):
    if r.get("label"):
        return r["label"]
    s = r.get("size", {})
    if "nx" in s:
        return "x".join(str(s[k]) for k in ("nx", "ny", "nz") if k in s)
    return ",".join(f"{k}={v}" for k, v in s.items())


def main(argv):
    if len(argv) < 3 or len(argv) % 2 != 1:
        print(__doc__, file=sys.stderr)
        return 2
    rows, bad = [], 0
    for prof_path, val_path in zip(argv[1::2], argv[2::2]):
        prof = json.load(open(prof_path))
        val = json.load(open(val_path))
        for k in prof["kernels"]:
            key = KNOWN.get(k["short_name"])
            if not key:
                continue
            cands = [r for r in val["results"] if r["kernel"] == key[0] and r["variant"] == key[1]
                     and (key[2] is None or r.get("implementation") == key[2])
                     and (len(key) < 4 or r.get("precision") == key[3])]
            if not cands:
                continue
            if not k.get("per_launch"):
                print(f"{prof_path}: no per_launch data (profile with --per-launch)", file=sys.stderr)
                return 2
            # One launch per input, in the order validate ran them: match in order; else by the
            # declared Q nearest to the launch's traffic.
            distinct = []
            for r in cands:
                if all(size_text(r) != size_text(d) for d in distinct):
                    distinct.append(r)
            def probe_of(l):
                tr = l["counts"]["traffic"]
                return tr.get("l2", {}).get("bytes", 0) or tr.get("dram", {}).get("bytes", 0)

            in_order = len(k["per_launch"]) == len(distinct) and all(
                abs(math.log(max(probe_of(l), 1) / r["traffic_bytes"])) < math.log(4)
                for l, r in zip(k["per_launch"], distinct))
            for i, l in enumerate(k["per_launch"]):
                c = l["counts"]
                tr = c["traffic"]
                q_l2 = tr.get("l2", {}).get("bytes", 0)
                q_dram = tr.get("dram", {}).get("bytes", 0)
                probe = q_l2 or q_dram
                r = distinct[i] if in_order else min(
                    cands, key=lambda r: abs(math.log(max(probe, 1) / r["traffic_bytes"])))
                w_cc = sum(c["work"]["cuda_core"].values())
                w_tc = sum(c["work"]["tensor_core"].values())
                inst = sum(c["tensor_instructions"].values())
                out_of_l2 = r["memory_level"] == "dram"
                dq = q_dram / r["traffic_bytes"]
                if out_of_l2 and key[0] in ("scale", "gemv") and abs(dq - 1) > 0.03:
                    bad += 1
                rows.append((k["short_name"], size_text(r), r["memory_level"], r["work_flop"], w_cc, w_tc,
                             (w_tc / inst) if inst else 0, r["traffic_bytes"], dq, q_l2 / r["traffic_bytes"],
                             l["efficiency"], l["verdict"]))
    print("| kernel | size | level | declared W | counter W (CC) | counter W (TC) | flop/TC inst | declared Q | DRAM Q / declared | L2 Q / declared | eff. | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, size, lvl, w, wcc, wtc, fpi, q, dq, lq, eff, verdict) in rows:
        print(f"| {name} | {size} | {lvl} | {w:.6g} | {wcc / w:.4f} x | {wtc / w:.4f} x | {fpi:.0f} | {q:.6g} B | "
              f"{dq:.4f} | {lq:.4f} | {eff * 100:.1f}% | {verdict} |")
    if bad:
        print(f"\n{bad} SCALE/GEMV launch(es) out of L2 with DRAM Q more than 3% from the declared Q", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
