#!/usr/bin/env python3
"""Host<->device copies as PyTorch does them, to put next to ceiling's link probe (issue 16).

  python3 scripts/link-torch-check.py [--bytes 268435456] [--repeats 20] [--device 0] > torch-links.json

Pinned: a page-locked CPU tensor copied with copy_(non_blocking=True), CUDA events around one
copy. Pageable: an ordinary CPU tensor, copy_ then torch.cuda.synchronize(), host clock around it.
Latency: the same with an 8-byte tensor. Medians and bests of --repeats after one warm-up;
every copy's result is compared with its source once.
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
except Exception as e:  # noqa: BLE001
    print(json.dumps({"error": f"torch unavailable: {e}"}))
    sys.exit(2)


def events(fn, reps):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) * 1e-3)
    return out


def host_clock(fn, reps):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=256 << 20)
    ap.add_argument("--small", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--device", type=int, default=0)
    a = ap.parse_args()
    dev = torch.device("cuda", a.device)
    torch.cuda.set_device(dev)
    result = {"device": torch.cuda.get_device_name(dev), "device_index": a.device, "torch": torch.__version__, "bytes": a.bytes,
              "small": a.small, "repeats": a.repeats, "paths": {}}
    for path in ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"):
        pinned = path.endswith("pinned")
        fig = {}
        for kind, n in (("large", a.bytes), ("small", a.small)):
            cpu = torch.randint(0, 255, (n,), dtype=torch.uint8)
            if pinned:
                cpu = cpu.pin_memory()
            gpu = torch.empty(n, dtype=torch.uint8, device=dev)
            if path.startswith("h2d"):
                gpu.fill_(0xA5)
                fn = (lambda g=gpu, c=cpu: g.copy_(c, non_blocking=True)) if pinned else (lambda g=gpu, c=cpu: g.copy_(c))
                fn()
                torch.cuda.synchronize()
                ok = torch.equal(gpu.cpu(), cpu.cpu())
            else:
                gpu.copy_(cpu)
                dst = torch.full((n,), 0xA5, dtype=torch.uint8)
                if pinned:
                    dst = dst.pin_memory()
                fn = (lambda d=dst, g=gpu: d.copy_(g, non_blocking=True)) if pinned else (lambda d=dst, g=gpu: d.copy_(g))
                fn()
                torch.cuda.synchronize()
                ok = torch.equal(dst, gpu.cpu())
            if not ok:
                fig["error"] = f"{kind} copy gave wrong bytes"
                break
            t = (events if pinned else host_clock)(fn, a.repeats)
            fig[kind] = t
        if "error" in fig:
            result["paths"][path] = {"error": fig["error"]}
            continue
        result["paths"][path] = {
            "bandwidth": a.bytes / statistics.median(fig["large"]),
            "bandwidth_max": a.bytes / min(fig["large"]),
            "latency": statistics.median(fig["small"]),
            "latency_min": min(fig["small"]),
            "timing": "cuda events" if pinned else "host clock + synchronize",
        }
    # GPU -> GPU (issue 18): copy_ between two devices' tensors, as a user moves data between GPUs.
    # PyTorch issues a cross-device copy on the source device's current stream (peer access is
    # enabled by PyTorch where the pair allows it), so the events are recorded there.
    n_dev = torch.cuda.device_count()
    result["device_count"] = n_dev
    for i in range(n_dev):
        for j in range(n_dev):
            if i == j:
                continue
            name = f"peer_{i}_{j}"
            fig = {}
            for kind, n in (("large", a.bytes), ("small", a.small)):
                src = torch.randint(0, 255, (n,), dtype=torch.uint8, device=torch.device("cuda", i))
                dst = torch.full((n,), 0xA5, dtype=torch.uint8, device=torch.device("cuda", j))
                fn = lambda d=dst, s_=src: d.copy_(s_, non_blocking=True)
                with torch.cuda.device(i):
                    fn()
                    torch.cuda.synchronize(i)
                    torch.cuda.synchronize(j)
                    if not torch.equal(dst.cpu(), src.cpu()):
                        fig["error"] = f"{kind} copy gave wrong bytes"
                        break
                    fig[kind] = events(fn, a.repeats)
                torch.cuda.synchronize(j)
            if "error" in fig:
                result["paths"][name] = {"error": fig["error"]}
                continue
            result["paths"][name] = {
                "bandwidth": a.bytes / statistics.median(fig["large"]),
                "bandwidth_max": a.bytes / min(fig["large"]),
                "latency": statistics.median(fig["small"]),
                "latency_min": min(fig["small"]),
                "timing": "cuda events on the source device's stream",
                "can_access_peer": bool(torch.cuda.can_device_access_peer(i, j)),
            }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
