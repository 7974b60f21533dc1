#!/usr/bin/env python3
"""Measure real kernels on the GPU this runs on, for strata's ground truth.

Writes CSVs in the layout of NeuSight's kernels-test (OPName, Latency in ms,
Device, Kernel Name, launch grid and block, B/M/N/K or B/H), plus a Dtype
column, so that `strata validate neusight --data DIR` reads them as they are:

  OUT/bmm.csv OUT/linear.csv OUT/elem.csv OUT/ln.csv OUT/softmax.csv
  OUT/attention.csv (fused scaled-dot-product attention, one row per shape)
  OUT/meta.txt (GPU, driver, library versions, settings), OUT/log.txt

Shapes:
  * FP32 (PyTorch defaults: no TF32): the shapes of NeuSight's kernels-test
    files (read from --shapes DIR, each distinct shape once), in a
    deterministic random order, each op class within a time budget.
  * TF32/FP16/BF16/FP8/INT8 GEMMs on LLM projection shapes and attention
    BMMs; BF16 norms, softmax and elementwise ops; RMSNorm.
  * Fused attention (torch SDPA, flash backend) for prefill and decode.

Timing (NeuSight's method, so the two sets compare): each kernel is run
twice to warm up, then R times, each run between two CUDA events with a
synchronize after it; Latency is the mean of the fastest fifth (at least
one). R is 25, fewer (not under 5) when one run takes over 2 ms. Inputs are
random normal (never zeros). Kernel names and launch grids come from one
further run of each shape under torch.profiler (timed runs are not
profiled). Usage: measure-kernels.py --shapes DIR --out DIR [--budget S]
"""
import argparse
import csv
import json
import math
import os
import random
import subprocess
import sys
import time
import traceback


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", help="a NeuSight-layout kernels-test folder (the sweep and --linear-rest)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=300.0, help="seconds of measuring in all")
    ap.add_argument("--floors", action="store_true",
                    help="only the harness floors: each op class's smallest op (one element), "
                         "200 runs, written to OUT/harness.csv; with --ops, before the sweep and "
                         "again after it (OUT/harness-after.csv)")
    ap.add_argument("--attention-backward", action="store_true",
                    help="only FlashAttention-2's forward and backward on 8 shapes: OUT/fa-backward.csv")
    ap.add_argument("--linear-rest", metavar="CSV",
                    help="only FP32 linear shapes of --shapes that CSV (an earlier linear.csv) lacks")
    ap.add_argument("--ops", metavar="KERNELS_DIR",
                    help="only the op classes beyond NeuSight's test set: convolutions (NeuSight's "
                         "conv shapes from KERNELS_DIR/conv__*.csv, ResNet-50's in FP32/TF32/BF16) to "
                         "OUT/conv.csv; MoE grouped GEMMs, weight-only INT4 GEMMs beside BF16, "
                         "embedding gathers and MoE routers to OUT/ops.csv (within --budget)")
    ap.add_argument("--only", metavar="CLASSES",
                    help="with --ops: only these classes, a comma list of conv, grouped, int4, "
                         "embedding, router (the budget is shared among them)")
    a = ap.parse_args()
    if a.only is not None and not a.ops:
        ap.error("--only goes with --ops")
    if not a.shapes and (a.linear_rest or not (a.floors or a.attention_backward or a.ops)):
        ap.error("--shapes is needed for the sweep and --linear-rest")
    if a.only is not None:
        bad = [c for c in a.only.split(",") if c not in OPS_CLASSES]
        if bad or not a.only:
            ap.error("--only: unknown class %r (one of %s)" % (",".join(bad), ", ".join(OPS_CLASSES)))
    return a


# the --ops sweep's classes and their shares of --budget
OPS_CLASSES = {"conv": {"conv_ns": 0.30, "conv_rn": 0.25}, "grouped": {"grouped": 0.13},
               "int4": {"int4": 0.14}, "embedding": {"emb": 0.08}, "router": {"router": 0.10}}

# the options first, so that --help and a bad option answer without a GPU stack
ARGS = parse_args() if __name__ == "__main__" else None

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from measure_common import log, open_log  # noqa: E402 (tools/ is on sys.path)


def event_runs(fn, runs, warm):
    """warm untimed runs, then `runs` runs each between two CUDA events with
    a synchronize after it: the times in ms, fastest first."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(runs):
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return sorted(ts)


def fastest_fifth(ts):
    """The mean of the fastest fifth (at least one) of sorted times."""
    k = max(1, len(ts) // 5)
    return sum(ts[:k]) / k


def ev_time(fn, max_runs=25):
    """Mean of the fastest fifth of up to max_runs event-timed runs (ms):
    after two warm-ups, 25 runs, or 5..25 when the first takes over 2 ms."""
    first = event_runs(fn, 1, 2)[0]
    runs = max_runs if first <= 2.0 else max(5, min(max_runs, int(50.0 / first)))
    ts = sorted([first] + event_runs(fn, runs - 1, 0))
    return fastest_fifth(ts), len(ts)


class Section:
    """One output file's rows, with a profiling pass for kernel names."""

    def __init__(self, name, cols):
        self.name = name
        self.cols = cols
        self.rows = []
        self.pending = []  # (row, make_fn) awaiting kernel names

    def add(self, row, make_fn):
        self.rows.append(row)
        self.pending.append((row, make_fn))

    def name_kernels(self, main_re):
        """Run each pending shape once under the profiler; fill names and grids."""
        if not self.pending:
            return
        from torch.profiler import profile, ProfilerActivity, record_function
        chunk = 150
        for c0 in range(0, len(self.pending), chunk):
            part = self.pending[c0:c0 + chunk]
            try:
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                    for j, (row, make) in enumerate(part):
                        try:
                            fn = make()
                            torch.cuda.synchronize()
                            with record_function("strata_shape_%d" % j):
                                fn()
                            torch.cuda.synchronize()
                            del fn
                        except Exception:
                            torch.cuda.empty_cache()
                    torch.cuda.synchronize()
                path = "/tmp/strata_prof_%s_%d.json" % (self.name, c0)
                prof.export_chrome_trace(path)
                with open(path) as f:
                    tr = json.load(f)
                os.unlink(path)
                evs = tr["traceEvents"] if isinstance(tr, dict) else tr
                ann = []
                launch_ts = {}
                kerns = []
                for e in evs:
                    cat = e.get("cat", "")
                    nm = e.get("name", "")
                    if cat == "user_annotation" and nm.startswith("strata_shape_"):
                        ann.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)),
                                    int(nm.rsplit("_", 1)[1])))
                    elif cat == "cuda_runtime" or cat == "cuda_driver":
                        corr = e.get("args", {}).get("correlation")
                        if corr is not None:
                            launch_ts[corr] = float(e["ts"])
                    elif cat == "kernel":
                        kerns.append(e)
                per = {}
                for e in kerns:
                    corr = e.get("args", {}).get("correlation")
                    t = launch_ts.get(corr)
                    if t is None:
                        continue
                    for s, en, j in ann:
                        if s <= t <= en:
                            per.setdefault(j, []).append(e)
                            break
                for j, (row, _) in enumerate(part):
                    ks = per.get(j, [])
                    if not ks:
                        continue
                    main = [k for k in ks if main_re is None or main_re(k["name"])]
                    pick = max(main or ks, key=lambda k: float(k.get("dur", 0)))
                    g = pick.get("args", {}).get("grid", [0, 0, 0])
                    bl = pick.get("args", {}).get("block", [0, 0, 0])
                    row["Kernel Name"] = pick["name"]
                    row["Grid x"], row["Grid y"], row["Grid z"] = g[0], g[1], g[2]
                    row["Block x"], row["Block y"], row["Block z"] = bl[0], bl[1], bl[2]
                    blocks = g[0] * g[1] * g[2]
                    warps = math.ceil(bl[0] * bl[1] * bl[2] / 32.0)
                    row["Blocks per SM"] = round(blocks / SMS, 4)
                    row["Warps per SM"] = round(blocks * warps / SMS, 4)
                    row["Kernels"] = ";".join(k["name"][:120] for k in ks)
            except Exception:
                log("profiling failed for", self.name, "chunk", c0)
                log(traceback.format_exc())
            torch.cuda.empty_cache()
        self.pending = []

    def write(self, out):
        path = os.path.join(out, self.name + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.cols, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow(r)
        log("wrote", path, len(self.rows), "rows")


MM_COLS = ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "Kernel Name",
           "Warps per SM", "Blocks per SM", "Grid x", "Grid y", "Grid z", "Block x", "Block y",
           "Block z", "CUDA Version", "Kernels", "B", "M", "N", "K", "Dtype", "Runs"]
VEC_COLS = ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "Kernel Name",
            "Warps per SM", "Blocks per SM", "Grid x", "Grid y", "Grid z", "Block x", "Block y",
            "Block z", "CUDA Version", "B", "H", "large", "Dtype", "Runs"]
ATT_COLS = ["OPName", "Latency", "Device", "Torch Version", "Kernel Name", "Grid x", "Grid y",
            "Grid z", "Block x", "Block y", "Block z", "CUDA Version", "Kernels", "Batch",
            "Heads", "KV Heads", "Q", "KV", "D", "Causal", "Dtype", "Runs"]

DT = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
      "bf16": torch.bfloat16}


def base_row(op, dtype):
    return {"OPName": op, "Device": DEVICE, "Torch Version": TORCH_V, "CUDNN Version": CUDNN_V,
            "CUDA Version": CUDA_V, "Dtype": dtype, "Kernel Name": "", "Kernels": ""}


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


# ---- makers: return a zero-argument function running the op once ----------
def make_mm(op, dtype, b, m, n, k, init=torch.randn):
    dev = "cuda"
    if dtype in ("fp8", "int8"):
        if dtype == "fp8":
            x = init(b * m, n, device=dev).to(torch.float8_e4m3fn)
            w = init(k, n, device=dev).to(torch.float8_e4m3fn)
            sa = torch.ones((), device=dev)
            sb = torch.ones((), device=dev)
            bias = init(k, device=dev).to(torch.bfloat16)
            return lambda: torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb, bias=bias,
                                            out_dtype=torch.bfloat16)
        x = torch.randint(-8, 8, (b * m, n), device=dev, dtype=torch.int8)
        w = torch.randint(-8, 8, (k, n), device=dev, dtype=torch.int8)
        return lambda: torch._int_mm(x, w.t())
    t = DT[dtype]
    if op == "bmm":
        x = init(b, m, n, device=dev, dtype=t)
        y = init(b, n, k, device=dev, dtype=t)
        return lambda: torch.bmm(x, y)
    x = init(b, m, n, device=dev, dtype=t)
    w = init(k, n, device=dev, dtype=t)
    bias = init(k, device=dev, dtype=t)
    return lambda: F.linear(x, w, bias)


def vec_fn(op, x, y, c, dtype):
    h = x.shape[-1]
    plain = {"add": lambda: torch.add(x, y), "mul": lambda: torch.mul(x, y),
             "div": lambda: torch.div(x, y), "pow": lambda: torch.pow(x, y),
             "addu": lambda: torch.add(x, c), "mulu": lambda: torch.mul(x, c),
             "divu": lambda: torch.div(x, c), "powu": lambda: torch.pow(x, c),
             "relu": lambda: torch.relu(x), "gelu": lambda: F.gelu(x),
             "tanh": lambda: torch.tanh(x), "softmax": lambda: torch.softmax(x, dim=-1)}
    if op in plain:
        return plain[op]
    if op == "ln":
        w = torch.ones(h, device="cuda", dtype=x.dtype)
        bb = torch.zeros(h, device="cuda", dtype=x.dtype)
        return lambda: F.layer_norm(x, (h,), w, bb)
    if op == "rmsnorm":
        w = torch.ones(h, device="cuda", dtype=x.dtype)
        return lambda: F.rms_norm(x, (h,), w)
    raise ValueError(op)


BINARY = ("add", "mul", "div", "pow")


def make_vec(op, dtype, b, h, init=torch.randn):
    t = DT[dtype]
    x = init(b, h, device="cuda", dtype=t)
    if op in ("pow", "powu"):
        x = x.abs() + 0.5 if init is torch.randn else x
    y = init(b, h, device="cuda", dtype=t) if op in BINARY else None
    if y is not None and op in ("div",) and init is torch.randn:
        y = y.abs() + 0.5
    return vec_fn(op, x, y, 0.7310585786, dtype)


def make_att(dtype, batch, heads, kvh, q, kv, d, causal, init=torch.randn):
    t = DT[dtype]
    Q = init(batch, heads, q, d, device="cuda", dtype=t)
    K = init(batch, kvh, kv, d, device="cuda", dtype=t)
    V = init(batch, kvh, kv, d, device="cuda", dtype=t)
    gqa = kvh != heads

    return lambda: F.scaled_dot_product_attention(Q, K, V, is_causal=causal, enable_gqa=gqa)


def shape_of_row(row):
    """A row's sizes (its whole-number columns), for the log."""
    return {k: v for k, v in row.items() if isinstance(v, int) and not isinstance(v, bool)}


def measure(section, row, make, deadline):
    """Time one shape; append it. False once the section's time is spent."""
    if time.time() > deadline:
        return False
    try:
        fn = make(torch.randn)
        with torch.no_grad():
            ms, runs = ev_time(fn)
        del fn
        row["Latency"] = ms
        row["Runs"] = runs
        section.add(row, lambda: make(torch.empty))
    except torch.cuda.OutOfMemoryError:
        log("skip (out of memory)", row.get("OPName"), row.get("Dtype"), shape_of_row(row))
        torch.cuda.empty_cache()
    except Exception as e:  # an unsupported shape or dtype: note it, go on
        log("skip", row.get("OPName"), row.get("Dtype"), shape_of_row(row), type(e).__name__, str(e)[:160])
        torch.cuda.empty_cache()
    return True


def read_shapes(d, fname, keys):
    path = os.path.join(d, fname)
    if not os.path.exists(path):
        log("no", path)
        return []
    seen = set()
    out = []
    with open(path) as f:
        for r in csv.DictReader(f):
            key = tuple([r["OPName"]] + [int(r[k]) for k in keys])
            if key not in seen:
                seen.add(key)
                out.append(key)
    out.sort()
    random.Random(20261126).shuffle(out)
    return out


def mm_bytes(dtype, b, m, n, k):
    e = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}[dtype]
    return e * (b * m * n + b * n * k) + 4 * b * m * k


def floors(out, fname="harness.csv", count=True):
    """Each dispatch class's smallest single-kernel op (conv: cudnn.benchmark
    on, as in the sweep), timed as every row is: the time the harness and the framework add to a kernel (event to
    launch), plus a small kernel. bmm and linear use 16 x 16 operands: with
    one element cuBLAS runs two or three kernels (gemv, a split-K reduce, a
    copy of the bias)."""
    from torch.nn.attention import sdpa_kernel, SDPBackend

    def sdpa(i):
        q = i(1, 1, 16, 64, device="cuda", dtype=torch.bfloat16)
        k = i(1, 1, 16, 64, device="cuda", dtype=torch.bfloat16)
        v = i(1, 1, 16, 64, device="cuda", dtype=torch.bfloat16)
        # the flash-only context is entered once, around all the floors
        # (as the sweep does), never between the events
        return lambda: F.scaled_dot_product_attention(q, k, v)
    ops = [("bmm", "bmm 1x16x16x16 fp32", lambda i: make_mm("bmm", "fp32", 1, 16, 16, 16, i)),
           ("linear", "linear 16x16->16 fp32 with bias", lambda i: make_mm("linear", "fp32", 1, 16, 16, 16, i)),
           ("elementwise", "add 1x1 fp32", lambda i: make_vec("add", "fp32", 1, 1, i)),
           ("elementwise_scalar", "add 1x1 + python scalar fp32", lambda i: make_vec("addu", "fp32", 1, 1, i)),
           ("norm", "layer_norm 1x1 fp32", lambda i: make_vec("ln", "fp32", 1, 1, i)),
           ("softmax", "softmax 1x1 fp32", lambda i: make_vec("softmax", "fp32", 1, 1, i)),
           ("attention", "SDPA flash 1x1x16x16 head dim 64 bf16", sdpa),
           # NeuSight's conv (no bias), 3x3 over a 1x1x4x4 input: cuDNN's FP32
           # implicit GEMM, one kernel; the TF32/BF16 engines add layout passes
           ("conv", "conv2d 3x3 1x1x4x4 -> 1 channel fp32", lambda i: make_conv("fp32", 1, 1, 1, 3, 4, 1, 1, i)),
           # the --ops sweep's gather and router at one token: F.embedding's
           # Python path and torch.topk's four kernels cost more host time
           # than one add (the H100's smallest measure 28-31 and 60-65 us)
           ("embedding", "F.embedding 1 token x 16 wide fp32", lambda i: make_embedding("fp32", 1, 16, 32000, i)),
           ("router", "softmax fp32 + topk 2 of 8 experts, 1 token", lambda i: make_router(1, 8, 2, i))]
    from torch.profiler import profile, ProfilerActivity
    with open(os.path.join(out, fname), "w", newline="") as f, \
            sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        w = csv.writer(f)
        w.writerow(["dispatch", "floor_us", "median_us", "runs", "device", "torch", "op", "kernels"])
        # each op's 200 runs back to back, as the sweep times its rows: the
        # ops taking turns (tried on 2026-11-27) read about 20% above that,
        # the host path cold for each call (an H200's router floor 52.1 us
        # against 42 us for a 64-token router of the sweep)
        fns = [mk(torch.randn) for _, _, mk in ops]
        times = []
        with torch.no_grad():
            for fn in fns:
                times.append([t * 1000.0 for t in event_runs(fn, 200, 20)])  # us
        # count=False (before an op sweep's timed rows): no kernel count, for
        # once torch.profiler has run in a process every later launch costs
        # more (an H200's add floor 17.5 -> 23.9 us)
        for (name, desc, _), fn, ts in zip(ops, fns, times):
            ts.sort()
            nk = ""
            if count:
                with torch.no_grad(), profile(activities=[ProfilerActivity.CUDA]) as prof:
                    fn()
                    torch.cuda.synchronize()
                nk = sum(1 for e in prof.events() if e.device_type.name == "CUDA")
            fl = fastest_fifth(ts)
            w.writerow([name, "%.3f" % fl, "%.3f" % ts[len(ts) // 2], len(ts), DEVICE, TORCH_V, desc, nk])
            log("floor", name, "%.2f us (median %.2f), %s kernel(s)" % (fl, ts[len(ts) // 2], nk or "?"))


def attention_backward(out):
    """FlashAttention-2's forward and backward through SDPA (flash backend,
    BF16): the forward under no_grad, the backward as torch.autograd.grad of
    the output (its kernel, rowsum(dO * O), the dQ conversion and the
    autograd call's host path); 3 warm-ups, 10 event-timed runs each, mean
    of the fastest 2. Writes OUT/fa-backward.csv."""
    from torch.nn.attention import sdpa_kernel, SDPBackend

    def t(fn):
        return fastest_fifth(event_runs(fn, 10, 3))
    shapes = [(4, 32, 2048, 128, False), (4, 32, 2048, 128, True), (16, 32, 2048, 128, False),
              (4, 32, 4096, 128, True), (4, 32, 4096, 64, False), (16, 16, 4096, 64, True),
              (1, 32, 8192, 128, True), (8, 32, 1024, 128, True)]
    with open(os.path.join(out, "fa-backward.csv"), "w", newline="") as f, \
            sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        w = csv.writer(f)
        w.writerow(["batch", "heads", "seq", "d", "causal", "fwd_ms", "bwd_ms"])
        for (b, h, n, d, c) in shapes:
            q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            g = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
            with torch.no_grad():
                fwd = t(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=c))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=c)
            bwd = t(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True))
            w.writerow([b, h, n, d, c, "%.4f" % fwd, "%.4f" % bwd])
            log("attention backward", b, h, n, d, c, "fwd %.3f ms bwd %.3f ms" % (fwd, bwd))


def linear_rest(a):
    have = set()
    with open(a.linear_rest) as f:
        for r in csv.DictReader(f):
            if r["Dtype"] == "fp32":
                have.add((int(r["B"]), int(r["M"]), int(r["N"]), int(r["K"])))
    sec = Section("linear-rest", MM_COLS)  # OUT/linear-rest.csv: append it to linear.csv
    dl = time.time() + a.budget
    shapes = read_shapes(a.shapes, "linear.csv", ("B", "M", "N", "K"))
    for (o, b, m, n, k) in shapes:
        if (b, m, n, k) in have or mm_bytes("fp32", b, m, n, k) > 12e9:
            continue
        row = base_row("linear", "fp32")
        row.update(B=b, M=m, N=n, K=k)
        if not measure(sec, row, lambda init, b=b, m=m, n=n, k=k: make_mm("linear", "fp32", b, m, n, k, init), dl):
            break
    log("linear rest:", len(sec.rows), "new shapes")
    sec.write(a.out)
    sec.name_kernels(lambda n: any(t in n.lower() for t in ("gemm", "xmma", "cutlass", "nvjet")))
    sec.write(a.out)


CONV_COLS = ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "Kernel Name",
             "Warps per SM", "Blocks per SM", "Grid x", "Grid y", "Grid z", "Block x", "Block y",
             "Block z", "CUDA Version", "Kernels", "B", "Input_Channel", "Output_Channel",
             "Kernel_Szie", "Input_Size", "Stride", "Padding", "Dtype", "Runs"]
# ops.csv: one row per op in `strata kernel`'s own terms (gemm/grouped: b x (m x k).(k x n);
# embedding, topk: rows x cols), so `strata kernel OP --b .. --m ..` reproduces a row
OPS_COLS = ["op", "dtype", "int4", "b", "m", "n", "k", "rows", "cols", "vocab", "topk",
            "latency_ms", "runs", "device", "torch", "kernel", "kernels"]


def make_conv(dtype, b, cin, cout, ks, size, stride, pad, init=torch.randn):
    """NeuSight's conv: nn.Conv2d without bias, NCHW."""
    t = DT[dtype]
    x = init(b, cin, size, size, device="cuda", dtype=t)
    w = init(cout, cin, ks, ks, device="cuda", dtype=t)
    return lambda: F.conv2d(x, w, None, stride=stride, padding=pad)


def make_grouped(dtype, e, m, n, k, init=torch.randn):
    """MoE experts: e groups of m tokens, (m x k).(k x n) each, as one
    torch._grouped_mm (CUTLASS grouped GEMM); each expert's weight stored
    (n x k) as nn.Linear keeps it."""
    t = DT[dtype]
    a = init(e * m, k, device="cuda", dtype=t)
    w = init(e, n, k, device="cuda", dtype=t).transpose(-2, -1)
    offs = torch.arange(m, e * m + 1, m, device="cuda", dtype=torch.int32)
    gm = getattr(torch, "_grouped_mm", None) or F.grouped_mm
    return lambda: gm(a, w, offs=offs)


def make_gemm16(m, n, k, init=torch.randn):
    x = init(m, k, device="cuda", dtype=torch.bfloat16)
    w = init(n, k, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.mm(x, w.t())


def make_int4(m, n, k, init=torch.randn, group=128):
    """W4A16 as PyTorch's tinygemm runs it (torch._weight_int4pack_mm, as
    torchao's int4 weight-only layout): BF16 activations, weights packed
    two per byte, a BF16 scale and zero per group of 128 along k."""
    x = init(m, k, device="cuda", dtype=torch.bfloat16)
    wq = torch.randint(0, 256, (n, k // 2), device="cuda", dtype=torch.uint8)
    wp = torch._convert_weight_to_int4pack(wq, 8)
    sz = torch.randn(k // group, n, 2, device="cuda", dtype=torch.bfloat16)
    return lambda: torch._weight_int4pack_mm(x, wp, group, sz)


def make_embedding(dtype, rows, cols, vocab, init=torch.randn):
    table = init(vocab, cols, device="cuda", dtype=DT[dtype])
    ids = torch.randint(0, vocab, (rows,), device="cuda")
    return lambda: F.embedding(ids, table)


def make_router(rows, cols, topk, init=torch.randn):
    """A MoE router after its gate GEMM, as Mixtral's and Qwen-MoE's
    Hugging Face code has it: softmax of the BF16 logits in FP32, then the
    top k per token."""
    logits = init(rows, cols, device="cuda", dtype=torch.bfloat16)
    return lambda: torch.topk(torch.softmax(logits, dim=-1, dtype=torch.float32), topk, dim=-1)


RESNET50 = [  # (in channels, out channels, filter, input size, stride, padding)
    (3, 64, 7, 224, 2, 3), (64, 64, 1, 56, 1, 0), (64, 64, 3, 56, 1, 1), (64, 256, 1, 56, 1, 0),
    (256, 64, 1, 56, 1, 0), (256, 128, 1, 56, 1, 0), (128, 128, 3, 56, 2, 1), (128, 512, 1, 28, 1, 0),
    (256, 512, 1, 56, 2, 0), (512, 128, 1, 28, 1, 0), (128, 128, 3, 28, 1, 1), (512, 256, 1, 28, 1, 0),
    (256, 256, 3, 28, 2, 1), (256, 1024, 1, 14, 1, 0), (256, 256, 3, 14, 1, 1), (1024, 256, 1, 14, 1, 0),
    (1024, 512, 1, 14, 1, 0), (512, 512, 3, 14, 2, 1), (512, 2048, 1, 7, 1, 0), (512, 512, 3, 7, 1, 1),
    (2048, 512, 1, 7, 1, 0),
    # the layer3 and layer4 downsample convs (not in the committed 2026-11-27 runs)
    (512, 1024, 1, 28, 2, 0), (1024, 2048, 1, 14, 2, 0)]


def conv_runs(conv, todo, deadline, big):
    """Time each (dtype, B, Cin, Cout, filter, size, stride, padding) conv
    into the section, TF32 on only for its rows; shapes whose operands pass
    `big` bytes are skipped."""
    try:
        for (dt, b, ci, co, ks, sz, st, pd) in todo:
            if 4 * (b * ci * sz * sz + co * ci * ks * ks + b * co * sz * sz) > big:
                continue
            set_tf32(dt == "tf32")
            row = base_row("conv", dt)
            row.update({"B": b, "Input_Channel": ci, "Output_Channel": co, "Kernel_Szie": ks,
                        "Input_Size": sz, "Stride": st, "Padding": pd})
            if not measure(conv, row, lambda init, q=(dt, b, ci, co, ks, sz, st, pd): make_conv(*q, init=init),
                           deadline):
                break
    finally:
        set_tf32(False)


def name_kernels_tf32(section, main_re):
    """Name a section's kernels; its TF32 rows in a pass of their own with
    TF32 on, as they were timed."""
    tf = [p for p in section.pending if p[0]["Dtype"] == "tf32"]
    section.pending = [p for p in section.pending if p[0]["Dtype"] != "tf32"]
    section.name_kernels(main_re)
    set_tf32(True)
    section.pending = tf
    section.name_kernels(main_re)
    set_tf32(False)


def ops_sweep(a):
    """Convolutions into OUT/conv.csv (NeuSight's conv columns plus Dtype),
    the other op classes into OUT/ops.csv (strata kernel's terms)."""
    import glob
    B = a.budget
    sel = a.only.split(",") if a.only else list(OPS_CLASSES)
    share = {k: 0.0 for c in OPS_CLASSES.values() for k in c}
    for c in sel:
        share.update(OPS_CLASSES[c])
    tot = sum(share.values())
    share = {k: v / tot for k, v in share.items()}  # a skipped class: 0, its section is passed over
    conv = Section("conv", CONV_COLS)
    ops = Section("ops", OPS_COLS)
    big = 12e9
    # ---- NeuSight's conv shapes (all 3x3, stride 1), FP32 as NeuSight ran them ----
    if share["conv_ns"]:
        try:
            seen = set()
            shapes = []
            for path in sorted(glob.glob(os.path.join(a.ops, "conv__*.csv"))):
                with open(path) as f:
                    for r in csv.DictReader(f):
                        key = tuple(int(r[c]) for c in ("B", "Input_Channel", "Output_Channel", "Kernel_Szie",
                                                       "Input_Size", "Stride", "Padding"))
                        if key not in seen:
                            seen.add(key)
                            shapes.append(key)
            shapes.sort()
            random.Random(20261127).shuffle(shapes)
            todo = [("fp32",) + s for s in shapes]
            # every eighth shape again in TF32 and BF16
            todo[1:1] = [(dt,) + s for s in shapes[::8] for dt in ("tf32", "bf16")]
            random.Random(11).shuffle(todo)
            conv_runs(conv, todo, time.time() + share["conv_ns"] * B, big)
            log("conv (NeuSight shapes):", len(conv.rows), "of", len(todo))
        except Exception:
            log(traceback.format_exc())
    # ---- ResNet-50's convolutions: 1x1, strided, 7x7 ----
    if share["conv_rn"]:
        try:
            n0 = len(conv.rows)
            todo = [(dt, b) + s for dt in ("fp32", "tf32", "bf16") for b in (1, 8, 32, 128) for s in RESNET50]
            random.Random(12).shuffle(todo)
            conv_runs(conv, todo, time.time() + share["conv_rn"] * B, big)
            log("conv (ResNet-50):", len(conv.rows) - n0, "of", len(todo))
        except Exception:
            log(traceback.format_exc())

    def orow(op, dt, **kw):
        r = {"OPName": op, "Dtype": dt, "op": op, "dtype": dt, "int4": 0, "device": DEVICE, "torch": TORCH_V,
             "Kernel Name": "", "Kernels": ""}
        r.update(kw)
        return r
    def sweep_class(key, label, op, make_todo, seed, row_of, maker, skip=None):
        """One class of the op sweep: its shapes in a seeded random order,
        each timed until the class's share of the budget runs out; a class
        that fails is logged and the sweep goes on."""
        if not share[key]:
            return
        try:
            todo = make_todo()
            random.Random(seed).shuffle(todo)
            dl = time.time() + share[key] * B
            for q in todo:
                if skip and skip(q):
                    continue
                if not measure(ops, row_of(q), lambda init, q=q: maker(q, init), dl):
                    break
            log(label + ":", sum(1 for r in ops.rows if r["op"] == op), "of", len(todo))
        except Exception:
            log(traceback.format_exc())

    # ---- MoE expert GEMMs: one grouped GEMM over e experts ----
    def grouped_todo():
        if not hasattr(torch, "_grouped_mm") and not hasattr(F, "grouped_mm"):
            raise RuntimeError("this PyTorch has no torch._grouped_mm")
        return [(e, m, n, k) for e in (8, 16, 64, 128) for m in (16, 64, 256, 1024)
                for (n, k) in ((14336, 4096), (4096, 14336), (1408, 2048), (2048, 1408), (2048, 7168),
                               (7168, 2048))]
    sweep_class("grouped", "grouped", "grouped", grouped_todo, 13,
                lambda q: orow("grouped", "bf16", b=q[0], m=q[1], n=q[2], k=q[3]),
                lambda q, init: make_grouped("bf16", *q, init=init),
                skip=lambda q: 2 * (q[0] * q[1] * q[3] + q[0] * q[2] * q[3] + q[0] * q[1] * q[2]) > big)
    # ---- weight-only INT4 beside the same GEMM in BF16 ----
    # (the int4 field names the kernel it runs, so no profile is needed)
    sweep_class("int4", "gemm int4/bf16", "gemm",
                lambda: [(i4, m, n, k) for i4 in (1, 0) for m in (1, 4, 16, 64, 256, 1024, 4096)
                         for (k, n) in ((4096, 4096), (4096, 12288), (4096, 11008), (11008, 4096), (8192, 8192),
                                        (8192, 28672), (28672, 8192), (5120, 5120))], 14,
                lambda q: orow("gemm", "bf16", int4="tinygemm" if q[0] else 0, b=1, m=q[1], n=q[2], k=q[3]),
                lambda q, init: (make_int4 if q[0] else make_gemm16)(*q[1:], init=init))
    # ---- embedding gathers ----
    sweep_class("emb", "embedding", "embedding",
                lambda: [(dt, r, c, v) for dt in ("bf16", "fp32") for r in (128, 1024, 8192, 32768)
                         for c in (768, 2048, 4096, 8192) for v in (32000, 128256)], 15,
                lambda q: orow("embedding", q[0], rows=q[1], cols=q[2], vocab=q[3]),
                lambda q, init: make_embedding(*q, init=init))
    # ---- MoE routers: softmax + top-k over the experts ----
    sweep_class("router", "router", "topk",
                lambda: [(r, c, t) for r in (64, 512, 4096, 16384, 65536) for c in (8, 64, 128, 256)
                         for t in (2, 8)], 16,
                lambda q: orow("topk", "bf16", rows=q[0], cols=q[1], topk=q[2]),
                lambda q, init: make_router(*q, init=init))

    def fill_ops():
        for r in ops.rows:
            r["latency_ms"] = r.get("Latency")
            r["runs"] = r.get("Runs")
            r["kernel"] = r.get("Kernel Name", "")
            r["kernels"] = r.get("Kernels", "")
    if a.floors:
        # floors on both sides of the timed runs, in their process, and no
        # torch.profiler before the last of them (once it has run, every
        # launch costs more): the host's dispatch time drifts (16 -> 37 us
        # between processes a minute apart), so a folder's floors are its
        # rows' only when the two agree
        floors(a.out, "harness-after.csv")
    log("timing done; naming kernels")
    secs = [s for s in (conv, ops) if s.rows or not a.only]  # --only: no empty file
    fill_ops()
    for s in secs:
        s.write(a.out)
    name_kernels_tf32(conv, None)
    ops.name_kernels(None)
    fill_ops()
    for s in secs:
        s.write(a.out)


def main():
    global DEVICE, TORCH_V, CUDA_V, CUDNN_V, SMS
    a = ARGS
    os.makedirs(a.out, exist_ok=True)
    open_log(os.path.join(a.out, "log.txt"))  # every mode appends: one log per folder
    t_start = time.time()
    props = torch.cuda.get_device_properties(0)
    DEVICE = torch.cuda.get_device_name().strip()
    TORCH_V = "p" + torch.__version__.split("+")[0]
    CUDA_V = "cu" + (torch.version.cuda or "").replace(".", "")
    CUDNN_V = str(torch.backends.cudnn.version())
    SMS = props.multi_processor_count
    torch.backends.cudnn.benchmark = True
    set_tf32(False)
    mode = ("ops" if a.ops else "floors" if a.floors else "attention-backward" if a.attention_backward
            else "linear-rest" if a.linear_rest else "")
    with open(os.path.join(a.out, "meta-%s.txt" % mode if mode else "meta.txt"), "w") as f:
        f.write("device: %s\nsms: %d\nmemory_bytes: %d\ntorch: %s\ncuda: %s\ncudnn: %s\n" %
                (DEVICE, SMS, props.total_memory, torch.__version__, torch.version.cuda, CUDNN_V))
        f.write("l2_bytes: %s\n" % getattr(props, "L2_cache_size", "?"))
        f.write("date_utc: %s\n" % time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        f.write("method: warm-up 2 runs; R event-timed runs (25; 5..25 when a run > 2 ms), "
                "synchronize after each; Latency = mean of the fastest R/5; randn inputs; "
                "kernel names from one more run under torch.profiler\n")
        for q in ("name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,"
                  "temperature.gpu,pstate",):
            try:
                r = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv"],
                                   capture_output=True, text=True, timeout=20)
                f.write("nvidia-smi: " + r.stdout.replace("\n", " | ") + "\n")
            except Exception as e:
                f.write("nvidia-smi failed: %s\n" % e)
    log("device", DEVICE, "SMs", SMS, "torch", torch.__version__)
    if a.floors:
        floors(a.out, count=not a.ops)  # before an op sweep: no profiler yet
    if a.attention_backward:
        attention_backward(a.out)
    if a.linear_rest:
        linear_rest(a)
    if a.ops:
        ops_sweep(a)
    if a.floors or a.linear_rest or a.attention_backward or a.ops:
        return

    B = a.budget
    # fractions of the budget per section (sum 1)
    share = {"bmm": 0.20, "linear": 0.17, "elem": 0.09, "ln": 0.04, "softmax": 0.04,
             "gemm_dt": 0.16, "bmm_dt": 0.08, "vec_dt": 0.08, "att": 0.14}
    mm = {"bmm": Section("bmm", MM_COLS), "linear": Section("linear", MM_COLS)}
    vec = {"elem": Section("elem", VEC_COLS), "ln": Section("ln", VEC_COLS),
           "softmax": Section("softmax", VEC_COLS)}
    att = Section("attention", ATT_COLS)
    big = 12e9  # bytes of operands a shape may take

    def gemm_re(n):
        n = n.lower()
        return (("gemm" in n or "xmma" in n or "cutlass" in n or "nvjet" in n or "gemv" in n or "dot" in n)
                and "splitk" not in n)

    # ---- FP32 on NeuSight's shapes ----
    for op in ("bmm", "linear"):
        try:
            dl = time.time() + share[op] * B
            shapes = read_shapes(a.shapes, op + ".csv", ("B", "M", "N", "K"))
            for (o, b, m, n, k) in shapes:
                if mm_bytes("fp32", b, m, n, k) > big:
                    continue
                row = base_row(op, "fp32")
                row.update(B=b, M=m, N=n, K=k)
                if not measure(mm[op], row, lambda init, o=op, b=b, m=m, n=n, k=k:
                               make_mm(o, "fp32", b, m, n, k, init), dl):
                    break
            log(op, "fp32:", len(mm[op].rows), "of", len(shapes), "shapes")
        except Exception:
            log(traceback.format_exc())
    for sec in ("elem", "ln", "softmax"):
        try:
            dl = time.time() + share[sec] * B
            shapes = read_shapes(a.shapes, sec + ".csv", ("B", "H"))
            for (o, b, h) in shapes:
                if 4 * 3 * b * h > big:
                    continue
                row = base_row(o, "fp32")
                lim = 8192 if sec == "elem" else 4096
                row.update(B=b, H=h, large=(b > lim and h > 512))
                if not measure(vec[sec], row, lambda init, o=o, b=b, h=h: make_vec(o, "fp32", b, h, init), dl):
                    break
            log(sec, "fp32:", len(vec[sec].rows), "of", len(shapes), "shapes")
        except Exception:
            log(traceback.format_exc())

    # ---- other datatypes: LLM projections (tokens x in -> out) ----
    try:
        dl = time.time() + share["gemm_dt"] * B
        nk = [(4096, 4096), (4096, 12288), (4096, 11008), (11008, 4096), (8192, 8192),
              (8192, 28672), (28672, 8192), (2048, 2048), (5120, 5120), (1024, 4096)]
        toks = [16, 128, 512, 2048, 8192]
        todo = [(dt, t, n, k) for dt in ("bf16", "fp16", "fp8", "tf32", "int8")
                for t in toks for (n, k) in nk]
        random.Random(7).shuffle(todo)
        for dt, t, n, k in todo:
            set_tf32(dt == "tf32")
            row = base_row("linear", dt)
            row.update(B=1, M=t, N=n, K=k)
            if not measure(mm["linear"], row, lambda init, dt=dt, t=t, n=n, k=k:
                           make_mm("linear", dt, 1, t, n, k, init), dl):
                break
        set_tf32(False)
        log("linear dtypes:", sum(1 for r in mm["linear"].rows if r["Dtype"] != "fp32"), "of", len(todo))
    except Exception:
        set_tf32(False)
        log(traceback.format_exc())
    try:
        dl = time.time() + share["bmm_dt"] * B
        todo = []
        for dt in ("bf16", "fp16", "tf32"):
            for bh in (16, 64, 256):
                for s in (512, 1024, 2048, 4096):
                    for d in (64, 128):
                        todo.append((dt, bh, s, d, s))  # scores: (s x d).(d x s)
                        todo.append((dt, bh, s, s, d))  # context: (s x s).(s x d)
        random.Random(8).shuffle(todo)
        for dt, b, m, n, k in todo:
            if mm_bytes(dt, b, m, n, k) > big:
                continue
            set_tf32(dt == "tf32")
            row = base_row("bmm", dt)
            row.update(B=b, M=m, N=n, K=k)
            if not measure(mm["bmm"], row, lambda init, dt=dt, b=b, m=m, n=n, k=k:
                           make_mm("bmm", dt, b, m, n, k, init), dl):
                break
        set_tf32(False)
    except Exception:
        set_tf32(False)
        log(traceback.format_exc())
    try:
        dl = time.time() + share["vec_dt"] * B
        todo = []
        for b in (1024, 4096, 16384, 65536):
            for h in (768, 1024, 2048, 4096, 8192):
                for o in ("ln", "rmsnorm", "softmax", "add", "mul", "gelu"):
                    todo.append(("bf16", o, b, h))
                todo.append(("fp32", "rmsnorm", b, h))
        random.Random(9).shuffle(todo)
        for dt, o, b, h in todo:
            sec = "ln" if o in ("ln", "rmsnorm") else ("softmax" if o == "softmax" else "elem")
            row = base_row(o, dt)
            lim = 8192 if sec == "elem" else 4096
            row.update(B=b, H=h, large=(b > lim and h > 512))
            if not measure(vec[sec], row, lambda init, dt=dt, o=o, b=b, h=h: make_vec(o, dt, b, h, init), dl):
                break
    except Exception:
        log(traceback.format_exc())

    # ---- fused attention (the flash backend only: the context is entered
    # once, outside the timed region) ----
    from torch.nn.attention import sdpa_kernel, SDPBackend
    flash_only = sdpa_kernel([SDPBackend.FLASH_ATTENTION])
    flash_only.__enter__()
    try:
        dl = time.time() + share["att"] * B
        todo = []
        for dt in ("bf16",):
            for batch in (1, 4, 16):
                for heads in (16, 32):
                    for s in (512, 1024, 2048, 4096, 8192):
                        for d in (64, 128):
                            for causal in (True, False):
                                todo.append((dt, batch, heads, heads, s, s, d, causal))
            for batch in (1, 8, 32, 128):
                for kv in (512, 2048, 8192, 32768):
                    todo.append((dt, batch, 32, 32, 1, kv, 128, False))
                    todo.append((dt, batch, 32, 8, 1, kv, 128, False))
        todo.append(("fp16", 4, 32, 32, 2048, 2048, 128, True))
        todo.append(("fp16", 8, 32, 32, 1, 8192, 128, False))
        random.Random(10).shuffle(todo)
        for dt, batch, heads, kvh, q, kv, d, causal in todo:
            if 2 * (batch * heads * q * d + 2 * batch * kvh * kv * d) > big:
                continue
            row = {"OPName": "sdpa_flash", "Device": DEVICE, "Torch Version": TORCH_V,
                   "CUDA Version": CUDA_V, "Dtype": dt, "Kernel Name": "", "Kernels": "",
                   "Batch": batch, "Heads": heads, "KV Heads": kvh, "Q": q, "KV": kv, "D": d,
                   "Causal": causal}
            if not measure(att, row, lambda init, a_=(dt, batch, heads, kvh, q, kv, d, causal):
                           make_att(*a_, init=init), dl):
                break
        log("attention:", len(att.rows), "of", len(todo))
    except Exception:
        log(traceback.format_exc())

    log("timing done at %.1f s; naming kernels" % (time.time() - t_start))
    # write the timings first, so a failure while naming loses nothing
    for s in list(mm.values()) + list(vec.values()) + [att]:
        s.write(a.out)
    set_tf32(False)
    # tf32 rows must be profiled with tf32 on: name them in two passes
    for s in list(mm.values()):
        name_kernels_tf32(s, gemm_re)
    for s in vec.values():
        s.name_kernels(None)
    att.name_kernels(lambda n: "flash" in n.lower() or "fmha" in n.lower())
    flash_only.__exit__(None, None, None)
    for s in list(mm.values()) + list(vec.values()) + [att]:
        s.write(a.out)
    log("done at %.1f s" % (time.time() - t_start))


if __name__ == "__main__":
    main()
