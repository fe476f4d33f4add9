#!/usr/bin/env python3
"""A PyTorch client for `ceiling profile`: torch.mul, torch.mv and torch.mm in FP64 and BF16.

  ceiling profile --hw h200 -- python3 scripts/profile-torch-example.py
Sizes are out of the L2 (mul: 64 Mi elements; mv: 8192 x 8192; mm: 4096^2 FP64, 8192^2 BF16).
Each result is checked against a reference before the program exits 0.
"""
import sys

import torch


def main() -> int:
    if not torch.cuda.is_available():
        print("profile-torch-example: no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    torch.manual_seed(1)
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    for dt, mm_n in ((torch.float64, 4096), (torch.bfloat16, 8192)):
        x = torch.randn(1 << 26, device=dev, dtype=dt)
        a = torch.randn(8192, 8192, device=dev, dtype=dt)
        v = torch.randn(8192, device=dev, dtype=dt)
        b = torch.randn(mm_n, mm_n, device=dev, dtype=dt)
        c = torch.randn(mm_n, mm_n, device=dev, dtype=dt)
        for _ in range(reps):
            y = torch.mul(x, 3.0)
            w = torch.mv(a, v)
            d = torch.mm(b, c)
        torch.cuda.synchronize()
        tol = 1e-12 if dt == torch.float64 else 2e-2
        ok_mul = torch.equal(y, x * 3.0)
        ref_w = (a.double() @ v.double())
        ok_mv = ((w.double() - ref_w).norm() / ref_w.norm()).item() < tol
        rows = slice(0, 64)
        ref_d = b[rows].double() @ c.double()
        ok_mm = ((d[rows].double() - ref_d).norm() / ref_d.norm()).item() < tol
        print(f"{dt}: mul {'ok' if ok_mul else 'WRONG'}, mv {'ok' if ok_mv else 'WRONG'}, "
              f"mm {'ok' if ok_mm else 'WRONG'}")
        if not (ok_mul and ok_mv and ok_mm):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
