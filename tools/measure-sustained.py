#!/usr/bin/env python3
"""Tensor-core GEMMs timed alone and under sustained load, with the clock and
power the GPU ran them at: ground truth for strata's sustained-clock model
(st_gpu_power_factor), which a kernel sweep cannot check, since each of its
runs is short and followed by a synchronize (the GPU idles between them).

For each GEMM (--dtype, BF16 by default; FP32 accumulate, cuBLAS through
torch.mm):
  isolated   2 warm-ups, 25 runs each between CUDA events with a synchronize
             after it, the mean of the fastest 5 (the kernel sweep's method);
  sustained  the same GEMM issued back to back for --seconds, an event pair
             around each block of 20; the time per GEMM is the mean over the
             second half of the window (after the clock has settled), and
             the SM clock and board power are the means of nvidia-smi's
             100 ms samples over that half.
Then `mix`: one Llama 3 405B layer's four GEMMs at TP 8 in order (QKV, the
attention output, gate+up, down; 8,192 tokens), repeated for --seconds, the
same way: the load a training step puts on the GPU.

Each measurement (isolated or sustained) starts after a 2 s pause, so
none begins on a board still capped by the load before it.

Writes OUT/sustained.csv (one row per GEMM or mix: m, n, k, dtype,
isolated_ms, sustained_ms, ratio = isolated/sustained, TFLOP/s of each,
sm_mhz and power_w over the sustained half, samples), OUT/smi.csv (every
sample: timestamp, SM clock, memory clock, power, temperature, clock-event
reasons; data/measured keeps it gzipped) and OUT/meta.txt.

Usage: measure-sustained.py --out DIR [--seconds S] [--dtype bf16|fp16|fp32|tf32]
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_common import log, open_log  # noqa: E402

# (name, m, n, k): output m x n, reduction k
SHAPES = [
    ("square-8192", 8192, 8192, 8192),
    # Llama 3 405B (hidden 16384, 128 query and 8 KV heads of 128, FFN
    # 53248) at TP 8 on 8,192 tokens
    ("l405-qkv", 8192, (16384 + 2 * 8 * 128) // 8, 16384),
    ("l405-out", 8192, 16384, 16384 // 8),
    ("l405-gateup", 8192, 2 * 53248 // 8, 16384),
    ("l405-down", 8192, 16384, 53248 // 8),
]
MIX = ["l405-qkv", "l405-out", "l405-gateup", "l405-down"]
SMI_FIELDS = "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=8.0, help="sustained window per GEMM (default 8)")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32", "tf32"],
                    help="the GEMMs' datatype (default bf16; fp32 runs on the CUDA cores, TF32 off; "
                         "tf32 is FP32 tensors with TF32 allowed)")
    args = ap.parse_args()
    if args.seconds < 2:
        raise SystemExit("--seconds must be at least 2 (the second half is measured)")
    import torch
    os.makedirs(args.out, exist_ok=True)
    open_log(os.path.join(args.out, "log.txt"))
    smi_path = os.path.join(args.out, "smi.csv")
    with open(smi_path, "w") as f:
        f.write("timestamp, clocks.sm [MHz], clocks.mem [MHz], power.draw [W], temperature.gpu, "
                "clocks_event_reasons.active\n")
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=" + SMI_FIELDS, "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    samples = []  # (unix time of the sample, sm MHz, power W)

    def reader():
        with open(smi_path, "a", buffering=1) as f:
            for line in smi.stdout:
                f.write(line)
                parts = [p.strip() for p in line.split(",")]
                try:
                    # nvidia-smi's own timestamp (local time, "YYYY/MM/DD HH:MM:SS.mmm")
                    stamp, frac = parts[0].split(".")
                    t = time.mktime(time.strptime(stamp, "%Y/%m/%d %H:%M:%S")) + float("0." + frac)
                    samples.append((t, float(parts[1]), float(parts[3])))
                except (ValueError, IndexError):
                    pass
    import threading
    rd = threading.Thread(target=reader)
    rd.start()

    p = torch.cuda.get_device_properties(0)
    with open(os.path.join(args.out, "meta.txt"), "w") as f:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit",
                            "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
        f.write("device: %s\nsms: %d\ntorch: %s\ncuda: %s\ndate_utc: %s\nnvidia-smi: %s\n" % (
            p.name, p.multi_processor_count, torch.__version__, torch.version.cuda,
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), q))
        f.write("method: isolated = 2 warm-ups, 25 event-timed runs with a synchronize after each, mean of the "
                "fastest 5; sustained = back to back for %.1f s, blocks of 20 between events, mean over the "
                "second half; sm_mhz, power_w = nvidia-smi 100 ms samples over that half\n" % args.seconds)
    ops = {}
    tdt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}[args.dtype]
    torch.backends.cuda.matmul.allow_tf32 = args.dtype == "tf32"
    for name, m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=tdt)
        b = torch.randn(k, n, device="cuda", dtype=tdt)
        c = torch.empty(m, n, device="cuda", dtype=tdt)
        ops[name] = (m, n, k, (lambda a=a, b=b, c=c: torch.mm(a, b, out=c)))

    def isolated(fns):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(2):
            for fn in fns:
                fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(25):
            e0.record()
            for fn in fns:
                fn()
            e1.record()
            torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1))
        ts.sort()
        return sum(ts[:5]) / 5

    def sustained(fns):
        blocks = []  # (unix end time, ms per pass)
        t0 = time.time()
        while time.time() - t0 < args.seconds:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(20):
                for fn in fns:
                    fn()
            e1.record()
            e1.synchronize()
            blocks.append((time.time(), e0.elapsed_time(e1) / 20))
        half = t0 + args.seconds / 2
        late = [ms for (t, ms) in blocks if t >= half]
        s = [x for x in samples if half <= x[0] <= time.time()]
        mhz = sum(x[1] for x in s) / len(s) if s else float("nan")
        w = sum(x[2] for x in s) / len(s) if s else float("nan")
        return sum(late) / len(late), mhz, w, len(s)

    rows = []
    for name, m, n, k in SHAPES:
        fn = ops[name][3]
        time.sleep(2)  # let the board come back from the previous load
        iso = isolated([fn])
        time.sleep(2)
        sus, mhz, w, ns = sustained([fn])
        rows.append((name, m, n, k, 2.0 * m * n * k, iso, sus, mhz, w, ns))
        log("%s %dx%dx%d isolated %.4f ms sustained %.4f ms (%.3f) at %.0f MHz %.0f W (%d samples)" % (
            name, m, n, k, iso, sus, iso / sus, mhz, w, ns))
    fns = [ops[x][3] for x in MIX]
    flops = sum(2.0 * ops[x][0] * ops[x][1] * ops[x][2] for x in MIX)
    time.sleep(2)
    iso = isolated(fns)
    time.sleep(2)
    sus, mhz, w, ns = sustained(fns)
    rows.append(("mix", 0, 0, 0, flops, iso, sus, mhz, w, ns))
    log("mix isolated %.4f ms sustained %.4f ms (%.3f) at %.0f MHz %.0f W" % (iso, sus, iso / sus, mhz, w))
    time.sleep(0.3)  # the last samples of the mix
    smi.terminate()
    smi.wait()
    rd.join()
    with open(os.path.join(args.out, "sustained.csv"), "w") as f:
        f.write("gemm,m,n,k,dtype,isolated_ms,sustained_ms,ratio,isolated_tflops,sustained_tflops,sm_mhz,power_w,"
                "samples\n")
        for (name, m, n, k, fl, iso, sus, mhz, w, ns) in rows:
            f.write("%s,%d,%d,%d,%s,%.4f,%.4f,%.4f,%.1f,%.1f,%.0f,%.1f,%d\n" % (
                name, m, n, k, args.dtype, iso, sus, iso / sus, fl / iso / 1e9, fl / sus / 1e9, mhz, w, ns))


if __name__ == "__main__":
    main()
