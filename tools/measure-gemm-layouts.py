#!/usr/bin/env python3
"""Time FP32 GEMMs of the same size in the operand layouts and with or
without the bias epilogue a model's linear layers use, for strata's ground
truth on why cuBLAS's CUDA-core kernels run some shapes slower than others.

On Hopper, NeuSight's linear rows (F.linear with a bias: cuBLASLt's addmm,
both operands K-contiguous, "tn") that cuBLAS runs with its 128x64, 64x64,
64x128 and 256x128 xmma tiles measure 12-27% slower than strata prices
them, where batched GEMMs (torch.bmm, "nn") on the same tiles are priced
within a few percent. This separates the layout from the bias: for each
shape (m tokens, k input features, n output features) it times

  tn_bias  F.linear(x, W, b)       W: n x k; NeuSight's op
  tn       F.linear(x, W)          the same without the bias
  nn       torch.mm(x, Wt)         Wt: k x n, contiguous

each as tools/measure-kernels.py times a row (two warm-ups, 25 runs
between CUDA events with a synchronize after each, or 5..25 when a run
takes over 2 ms; the mean of the fastest fifth), TF32 off, torch.randn
operands, and names the longest kernel of one more run under
torch.profiler.

Shapes: the FP32 rows of a NeuSight-layout linear.csv (its M, N = input
features and K = output features columns; B x M tokens where a row has a
batch B), every --every'th distinct shape in file order, until --budget
seconds.

Usage: measure-gemm-layouts.py --linear CSV --out DIR [--every N] [--budget S]
"""
import argparse
import csv
import os
import subprocess
import sys
import time

from measure_common import log, open_log

VARIANTS = ("tn_bias", "tn", "nn")


def fastest_fifth(ts):
    ts = sorted(ts)
    k = max(1, len(ts) // 5)
    return sum(ts[:k]) / k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--linear", required=True, help="a NeuSight-layout linear.csv (M, N, K columns)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--budget", type=float, default=150)
    args = ap.parse_args()
    if args.every < 1:
        sys.exit("measure-gemm-layouts.py: --every must be at least 1")
    shapes = []
    with open(args.linear, newline="") as f:
        for i, r in enumerate(csv.DictReader(f)):
            if (r.get("Dtype") or "fp32") != "fp32":
                continue
            try:
                m, k, n = int(r["M"]) * int(r.get("B") or 1), int(r["N"]), int(r["K"])
            except (KeyError, ValueError):
                sys.exit(f"measure-gemm-layouts.py: {args.linear}: row {i + 2} has no integer M, N, K")
            if (m, k, n) not in shapes:
                shapes.append((m, k, n))
    shapes = shapes[::args.every]
    import torch
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile
    torch.backends.cuda.matmul.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    open_log(os.path.join(args.out, "log.txt"))
    p = torch.cuda.get_device_properties(0)
    log(f"# {p.name}, {p.multi_processor_count} SMs; torch {torch.__version__}, CUDA {torch.version.cuda}; "
        f"{len(shapes)} shapes from {args.linear}")
    try:
        log("#", subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit",
                                 "--format=csv,noheader"], capture_output=True, text=True).stdout.strip())
    except OSError:
        pass
    out = open(os.path.join(args.out, "layouts.csv"), "w", newline="")
    w = csv.writer(out)
    w.writerow(["m", "k", "n", "variant", "latency_ms", "runs", "kernel"])
    t0 = time.time()
    done = 0
    for (m, k, n) in shapes:
        if time.time() - t0 > args.budget:
            log(f"stop: past the {args.budget:.0f} s budget after {done} of {len(shapes)} shapes")
            break
        if 4.0 * (m * k + k * n * 2 + m * n + n) > 12e9:
            log(f"skip {m}x{k}x{n}: over 12 GB")
            continue
        x = torch.randn(m, k, device="cuda")
        W = torch.randn(n, k, device="cuda")
        Wt = W.t().contiguous()
        b = torch.randn(n, device="cuda")
        fns = {"tn_bias": lambda: F.linear(x, W, b), "tn": lambda: F.linear(x, W), "nn": lambda: torch.mm(x, Wt)}
        for v in VARIANTS:
            fn = fns[v]
            fn()
            fn()
            torch.cuda.synchronize()
            ts = []
            ea, eb = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            runs = 25
            i = 0
            while i < runs:
                ea.record()
                fn()
                eb.record()
                torch.cuda.synchronize()
                ts.append(ea.elapsed_time(eb))
                if i == 0 and ts[0] > 2.0:
                    runs = max(5, min(25, int(50.0 / ts[0])))
                i += 1
            with profile(activities=[ProfilerActivity.CUDA]) as pf:
                fn()
                torch.cuda.synchronize()
            ks = [e for e in pf.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            name = ""
            if ks:
                top = max(ks, key=lambda e: e.time_range.elapsed_us())
                name = top.name
            w.writerow([m, k, n, v, f"{fastest_fifth(ts):.6f}", len(ts), name])
        out.flush()
        done += 1
        del x, W, Wt, b
    log(f"# {done} shapes x {len(VARIANTS)} variants in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
