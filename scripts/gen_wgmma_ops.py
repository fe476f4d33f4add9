#!/usr/bin/env python3
"""Writes probes/mma_wgmma_ops.cuh: one trait struct per wgmma variant the probe times, and
probes/mma_wgmma_sp_ops.cuh: the sparse wgmma.mma_async.sp variants of the wgmma-sp probe.
Inline PTX needs every accumulator register spelled out (N/2 of them for N=256), so the
operand lists are generated here rather than typed. Run: python3 scripts/gen_wgmma_ops.py
--check writes nothing and exits 1 when a committed header differs from what this script
generates (the ctest generated_wgmma_ops_fresh runs it)."""
import difflib
import os
import sys

# (struct tag, ptx types, K, A elem, C elem, input precision, acc precision, extra SS args, extra RS args, Ns)
VARIANTS = [
    ("F16F32", "f32.f16.f16", 16, "f16", "f32", "fp16", "fp32", "p, 1, 1, 0, 0", "p, 1, 1, 0", [8, 16, 32, 64, 128, 256]),
    ("F16F16", "f16.f16.f16", 16, "f16", "f16", "fp16", "fp16", "p, 1, 1, 0, 0", "p, 1, 1, 0", [128, 256]),
    ("BF16F32", "f32.bf16.bf16", 16, "bf16", "f32", "bf16", "fp32", "p, 1, 1, 0, 0", "p, 1, 1, 0", [256]),
    ("TF32F32", "f32.tf32.tf32", 8, "tf32", "f32", "tf32", "fp32", "p, 1, 1", "p, 1, 1", [256]),
    ("E4M3F32", "f32.e4m3.e4m3", 32, "e4m3", "f32", "fp8", "fp32", "p, 1, 1", "p, 1, 1", [256]),
    ("E5M2F32", "f32.e5m2.e5m2", 32, "e5m2", "f32", "fp8", "fp32", "p, 1, 1", "p, 1, 1", [256]),
    ("S8S32", "s32.s8.s8", 32, "s8", "s32", "int8", "int32", "p", "p", [256]),
]

def regs(first, count):
    return ", ".join(f"%{i}" for i in range(first, first + count))

def emit(tag, types, k, a, c, pin, pacc, ss_args, rs_args, n):
    creg, cons = {"f32": ("float", "f"), "f16": ("uint32_t", "r"), "s32": ("uint32_t", "r")}[c]
    nc = n // 4 if c == "f16" else n // 2
    nv = n // 2
    shape = f"m64n{n}k{k}"
    outs = ", ".join(f'"+{cons}"(d[{i}])' for i in range(nc))
    ins_ss = f'"l"(desc_a), "l"(desc_b), "r"(scale_d)'
    ins_rs = f'"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d)'
    ss = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nc + 2}, 0;\\n"\n'
          f'        "wgmma.mma_async.sync.aligned.{shape}.{types} {{{regs(0, nc)}}}, %{nc}, %{nc + 1}, {ss_args};\\n}}\\n"')
    rs = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nc + 5}, 0;\\n"\n'
          f'        "wgmma.mma_async.sync.aligned.{shape}.{types} {{{regs(0, nc)}}}, {{{regs(nc, 4)}}}, %{nc + 4}, {rs_args};\\n}}\\n"')
    return f"""
struct WG_{tag}_N{n} {{
  static constexpr const char* shape = "{shape}";
  static constexpr int M = 64, N = {n}, K = {k};
  static constexpr Elem a_elem = Elem::{a}, c_elem = Elem::{c};
  static constexpr Precision input = Precision::{pin}, accumulate = Precision::{pacc};
  using CReg = {creg};
  static constexpr int NC = {nc}, NV = {nv};
  __device__ __forceinline__ static void ss(CReg (&d)[NC], uint64_t desc_a, uint64_t desc_b, uint32_t scale_d) {{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile({ss}
        : {outs}
        : {ins_ss});
#endif
  }}
  __device__ __forceinline__ static void rs(CReg (&d)[NC], const uint32_t (&a)[4], uint64_t desc_b, uint32_t scale_d) {{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile({rs}
        : {outs}
        : {ins_rs});
#endif
  }}
}};
"""

# Sparse (wgmma.mma_async.sp): (struct tag, ptx types, logical K, A elem, C elem, input
# precision, acc precision, SS immediates after scale-d, RS immediates after scale-d, Ns).
# PTX ISA "wgmma.mma_async.sp" syntax, SS: d, a-desc, b-desc, sp-meta, sp-sel, scale-d,
# imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b (.f16/.bf16); RS: d, {a0..a3}, b-desc,
# sp-meta, sp-sel, scale-d, imm-scale-a, imm-scale-b, imm-trans-b (no trans-a: A is in registers).
# .tf32 and FP8 take no transposes; integer types take no scales either.
SPARSE_VARIANTS = [
    ("F16F32", "f32.f16.f16", 32, "f16", "f32", "fp16", "fp32", ", 1, 1, 0, 0", ", 1, 1, 0", [64, 128, 256]),
    ("BF16F32", "f32.bf16.bf16", 32, "bf16", "f32", "bf16", "fp32", ", 1, 1, 0, 0", ", 1, 1, 0", [256]),
    ("TF32F32", "f32.tf32.tf32", 16, "tf32", "f32", "tf32", "fp32", ", 1, 1", ", 1, 1", [256]),
    ("E4M3F32", "f32.e4m3.e4m3", 64, "e4m3", "f32", "fp8", "fp32", ", 1, 1", ", 1, 1", [256]),
    ("S8S32", "s32.s8.s8", 64, "s8", "s32", "int8", "int32", "", "", [256]),
]

def emit_sp(tag, types, k, a, c, pin, pacc, imm, imm_rs, n):
    creg, cons = {"f32": ("float", "f"), "s32": ("uint32_t", "r")}[c]
    nc = n // 2
    shape = f"m64n{n}k{k}"
    outs = ", ".join(f'"+{cons}"(d[{i}])' for i in range(nc))
    asm = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nc + 3}, 0;\\n"\n'
           f'        "wgmma.mma_async.sp.sync.aligned.{shape}.{types} {{{regs(0, nc)}}}, %{nc}, %{nc + 1}, '
           f'%{nc + 2}, 0, p{imm};\\n}}\\n"')
    rs = (f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nc + 6}, 0;\\n"\n'
          f'        "wgmma.mma_async.sp.sync.aligned.{shape}.{types} {{{regs(0, nc)}}}, {{{regs(nc, 4)}}}, '
          f'%{nc + 4}, %{nc + 5}, 0, p{imm_rs};\\n}}\\n"')
    return f"""
struct WGSP_{tag}_N{n} {{
  static constexpr const char* shape = "{shape}";
  static constexpr int M = 64, N = {n}, K = {k};  // K: the logical (dense-equivalent) K
  static constexpr Elem a_elem = Elem::{a}, c_elem = Elem::{c};
  static constexpr Precision input = Precision::{pin}, accumulate = Precision::{pacc};
  using CReg = {creg};
  static constexpr int NC = {nc}, NV = {nc};
  // Sparsity selector 0 (an immediate): threads T0/T1 of each group of four carry the metadata
  // (all four for 8-bit types, where 0 is the only valid selector).
  __device__ __forceinline__ static void ss(CReg (&d)[NC], uint64_t desc_a, uint64_t desc_b, uint32_t meta,
                                            uint32_t scale_d) {{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile({asm}
        : {outs}
        : "l"(desc_a), "l"(desc_b), "r"(meta), "r"(scale_d));
#endif
  }}
  // RS form: the compressed A (M x K/2) from 4 registers per thread, in the dense fragment layout
  // of K/2 (the dense instruction of the same type's A layout).
  __device__ __forceinline__ static void rs(CReg (&d)[NC], const uint32_t (&a)[4], uint64_t desc_b, uint32_t meta,
                                            uint32_t scale_d) {{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile({rs}
        : {outs}
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(meta), "r"(scale_d));
#endif
  }}
}};
"""

def generate_sparse():
    body = ["// Generated by scripts/gen_wgmma_ops.py; do not edit. Sparse wgmma.mma_async.sp variants timed by the",
            "// wgmma-sp probe: A (compressed, M x K/2) from a shared-memory descriptor (SS) or 4 registers (RS),",
            "// B from a shared-memory descriptor, one metadata register.",
            "#pragma once", "#include <cstdint>", "", '#include "mma_common.cuh"', "",
            "namespace ceiling::probes::compute::wgmma_sp_ops {"]
    for v in SPARSE_VARIANTS:
        for n in v[-1]:
            body.append(emit_sp(*v[:-1], n))
    body.append("}  // namespace ceiling::probes::compute::wgmma_sp_ops")
    return "\n".join(body) + "\n"

def generate():
    body = ["// Generated by scripts/gen_wgmma_ops.py; do not edit. wgmma variants timed by the wgmma probe:",
            "// SS (A and B from shared-memory descriptors) and RS (A from 4 registers per thread).",
            "#pragma once", "#include <cstdint>", "", '#include "mma_common.cuh"', "",
            "namespace ceiling::probes::compute::wgmma_ops {"]
    for v in VARIANTS:
        for n in v[-1]:
            body.append(emit(*v[:-1], n))
    body.append("}  // namespace ceiling::probes::compute::wgmma_ops")
    return "\n".join(body) + "\n"

def main(argv):
    if any(a not in ("--check",) for a in argv):
        sys.exit("usage: gen_wgmma_ops.py [--check]")
    here = os.path.dirname(os.path.abspath(__file__))
    outputs = [("mma_wgmma_ops.cuh", generate()), ("mma_wgmma_sp_ops.cuh", generate_sparse())]
    status = 0
    for name, text in outputs:
        path = os.path.normpath(os.path.join(here, "..", "probes", name))
        if "--check" not in argv:
            with open(path, "w") as f:
                f.write(text)
            continue
        try:
            with open(path) as f:
                current = f.read()
        except OSError as e:
            print(f"{path}: cannot read ({e}); run: python3 scripts/gen_wgmma_ops.py", file=sys.stderr)
            status = 1
            continue
        if current == text:
            print(f"{path} is up to date")
            continue
        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), "committed", "generated",
                                         lineterm="", n=1))
        print(f"{path} is stale ({len(diff)} diff lines); regenerate it with: python3 scripts/gen_wgmma_ops.py",
              file=sys.stderr)
        for line in diff[:40]:
            print(line, file=sys.stderr)
        status = 1
    return status

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
