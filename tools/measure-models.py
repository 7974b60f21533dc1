#!/usr/bin/env python3
"""Time whole Hugging Face models on the GPU this runs on, the way NeuSight's
harness times them, and take them apart, for strata's ground truth.

NeuSight's single-GPU labels (its `neusight/Tracing/trace.py`, measure_e2e)
build the model from its config.json with AutoModelForCausalLM (BERT:
AutoModelForPreTraining to train, AutoModelForSequenceClassification to
infer), eager attention, FP32, feed `torch.ones` token ids, and run 25
iterations, each one starting with gc.collect() and torch.cuda.empty_cache();
the forward and (in training) the backward are each timed between two CUDA
events with a synchronize after it, the loss computed between them untimed,
and each is the mean of its fastest 5. There is no optimizer step.

For each configuration NAME (MODEL-inf|train-SEQ-BATCH[-fusion], as NeuSight's
label files are named; MODEL.json read from --models) this writes one row per
variant to OUT/models.csv:

  neusight  the harness above, as it is
  steady    the same without gc.collect()/empty_cache() (PyTorch's caching
            allocator warm, as in a training loop)
  profile   one steady iteration under torch.profiler: the sum of the GPU's
            kernel, copy and set times, their union (busy) and their span,
            and the kernel count, per phase (compiled runs too: Inductor's
            Triton kernels by name)

and, for the neusight variant, OUT/labels/DEVICE/NAME.json in NeuSight's label
format (num_layer, e2e_latency, fw_latency, bwall_latency in ms; DEVICE the
GPU's name with spaces as underscores), which `strata validate neusight`
scores; the per-kernel totals of the profiled iteration go to OUT/kernels.csv (name,
phase, count, total us). nvidia-smi samples the SM clock, memory clock, power
and temperature every 100 ms into OUT/smi.csv for the whole run, and
OUT/log.txt holds each configuration's wall-clock start and end, so sustained
clocks can be read against each run.

--gemm adds OUT/gemm.csv: one FP32 GEMM (4096 x 1280 by 1280 x 5120, GPT-2
Large's first MLP GEMM at batch 4) timed isolated (synchronize after each run,
as the kernel sweeps) and back to back for about two seconds.

--variants picks among neusight, steady, profile (the default three) and
adamw: forward, backward into fresh gradients, torch.optim.AdamW's step
(PyTorch's default foreach implementation) and zero_grad(set_to_none=True),
each between CUDA events (training configurations only; opt_ms is the step).

Usage: measure-models.py --models DIR --out DIR [--budget S] [--iters N]
       [--sample N] [--variants LIST] [--gemm] NAME...
"""
import argparse
import gc
import json
import os
import subprocess
import sys
import time

# torch and transformers load in main(), after the arguments (--help and a
# bad option answer without a GPU stack)
torch = F = ProfilerActivity = profile = None
AutoConfig = AutoModelForCausalLM = AutoModelForPreTraining = AutoModelForSequenceClassification = None


def load_stack():
    global torch, F, ProfilerActivity, profile
    global AutoConfig, AutoModelForCausalLM, AutoModelForPreTraining, AutoModelForSequenceClassification
    import torch as t
    import torch.nn.functional as f
    from torch.profiler import ProfilerActivity as pa, profile as pr
    import transformers as tr
    torch, F, ProfilerActivity, profile = t, f, pa, pr
    AutoConfig, AutoModelForCausalLM = tr.AutoConfig, tr.AutoModelForCausalLM
    AutoModelForPreTraining, AutoModelForSequenceClassification = tr.AutoModelForPreTraining, tr.AutoModelForSequenceClassification
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

from measure_common import log, open_log  # noqa: E402 (tools/ is on sys.path)


def parse_name(name):
    parts = name.split("-")
    fusion = parts[-1] == "fusion"
    if fusion:
        parts = parts[:-1]
    if len(parts) != 4 or parts[1] not in ("inf", "train"):
        raise SystemExit(f"{name}: expected MODEL-inf|train-SEQ-BATCH[-fusion]")
    return parts[0], parts[1] == "train", int(parts[2]), int(parts[3]), fusion


def get_model(path, train, fusion):
    with open(path) as f:
        cj = json.load(f)
    arch = cj["architectures"][0].lower()
    config = AutoConfig.from_pretrained(path)
    with torch.device("cuda"):
        if "bert" in arch:
            cls = AutoModelForPreTraining if train else AutoModelForSequenceClassification
        else:
            cls = AutoModelForCausalLM
        model = cls.from_config(config, attn_implementation="eager")
    model = model.float()
    model = model.train() if train else model.eval()
    if fusion:
        model = torch.compile(model)
    return model


def loss_of(result, ids):
    logits = result["prediction_logits"] if "prediction_logits" in result else result["logits"]
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), ids.reshape(-1))


def timed(model, ids, train, iters, sample, clean):
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    fw, bw = [], []
    for _ in range(iters):
        if clean:
            gc.collect()
            torch.cuda.empty_cache()
        if train:
            a.record()
            result = model(ids)
            b.record()
            torch.cuda.synchronize()
            fw.append(a.elapsed_time(b))
            loss = loss_of(result, ids)
            result = None
            a.record()
            loss.backward()
            b.record()
            loss = None
            torch.cuda.synchronize()
            bw.append(a.elapsed_time(b))
        else:
            with torch.no_grad():
                a.record()
                result = model(ids)
                b.record()
                torch.cuda.synchronize()
                fw.append(a.elapsed_time(b))
                result = None
    fw.sort()
    bw.sort()
    f = sum(fw[:sample]) / len(fw[:sample])
    g = sum(bw[:sample]) / len(bw[:sample]) if bw else 0.0
    return f, g, fw, bw


def adamw_step(model, ids, iters, sample):
    """A training step as a training loop runs it: forward, loss, backward
    into fresh gradients (zero_grad(set_to_none=True) after each step, so no
    accumulation adds), then torch.optim.AdamW's step (PyTorch's default
    implementation on CUDA, foreach). Each part between CUDA events: the
    mean of the fastest `sample` of forward, backward, step and whole."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(5)]
    fw, bw, st, whole = [], [], [], []
    for _ in range(iters):
        ev[0].record()
        result = model(ids)
        ev[1].record()
        loss = loss_of(result, ids)
        result = None
        ev[2].record()
        loss.backward()
        ev[3].record()
        loss = None
        opt.step()
        opt.zero_grad(set_to_none=True)
        ev[4].record()
        torch.cuda.synchronize()
        fw.append(ev[0].elapsed_time(ev[1]))
        bw.append(ev[2].elapsed_time(ev[3]))
        st.append(ev[3].elapsed_time(ev[4]))
        whole.append(ev[0].elapsed_time(ev[4]))
    opt = None
    m = lambda v: sum(sorted(v)[:sample]) / len(sorted(v)[:sample])
    return m(fw), m(bw), m(st), m(whole), whole


def write_label(out, name, config, fw, bw):
    """NeuSight's label format, so `strata validate neusight` reads it."""
    with open(config) as f:
        cj = json.load(f)
    layers = cj.get("n_layer", cj.get("num_hidden_layers", cj.get("num_layers", 0)))
    dev = torch.cuda.get_device_name(0).replace(" ", "_")
    d = os.path.join(out, "labels", dev)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump({"num_layer": layers, "e2e_latency": fw + bw, "fw_latency": fw, "bwall_latency": bw}, f, indent=4)


def gpu_events(prof):
    out = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            r = e.time_range
            out.append((e.name, r.start, r.end))
    return out


def summarise(evs):
    if not evs:
        return 0.0, 0.0, 0.0, 0
    tot = sum(e - s for _, s, e in evs)
    iv = sorted((s, e) for _, s, e in evs)
    busy, cs, ce = 0.0, iv[0][0], iv[0][1]
    for s, e in iv[1:]:
        if s > ce:
            busy += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    busy += ce - cs
    span = max(e for _, _, e in evs) - min(s for _, s, _ in evs)
    return tot / 1e3, busy / 1e3, span / 1e3, len(evs)


def profiled(model, ids, train, kcsv, name):
    rows = {}
    res = []
    phases = ["fw", "bw"] if train else ["fw"]
    # one steady iteration first, so the allocator holds what it needs
    ctx = torch.enable_grad() if train else torch.no_grad()
    with ctx:
        result = model(ids)
        if train:
            loss_of(result, ids).backward()
        result = None
        torch.cuda.synchronize()
        for ph in phases:
            if ph == "fw":
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
                    t0 = time.perf_counter()
                    result = model(ids)
                    torch.cuda.synchronize()
                    wall = (time.perf_counter() - t0) * 1e3
                if train:
                    loss = loss_of(result, ids)
                result = None
            else:
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
                    t0 = time.perf_counter()
                    loss.backward()
                    torch.cuda.synchronize()
                    wall = (time.perf_counter() - t0) * 1e3
                loss = None
            evs = gpu_events(p)
            s, busy, span, n = summarise(evs)
            res.append((ph, wall, s, busy, span, n))
            for nm, a, b in evs:
                k = (ph, nm)
                c, t = rows.get(k, (0, 0.0))
                rows[k] = (c + 1, t + (b - a))
    for (ph, nm), (c, t) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        kcsv.write('%s,%s,"%s",%d,%.3f\n' % (name, ph, nm.replace('"', "'"), c, t))
    kcsv.flush()
    return res


def gemm_check(out):
    a = torch.randn(4096, 1280, device="cuda")
    w = torch.randn(1280, 5120, device="cuda")
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        torch.mm(a, w)
    torch.cuda.synchronize()
    iso = []
    for _ in range(25):
        e0.record()
        torch.mm(a, w)
        e1.record()
        torch.cuda.synchronize()
        iso.append(e0.elapsed_time(e1))
    iso.sort()
    with open(os.path.join(out, "gemm.csv"), "w") as f:
        f.write("mode,runs,ms_per_gemm,tflops\n")
        fl = 2 * 4096 * 1280 * 5120
        m = sum(iso[:5]) / 5
        f.write("isolated_fastest5of25,25,%.5f,%.2f\n" % (m, fl / m / 1e9))
        for secs in (0.2, 2.0):
            n = max(10, int(secs / (m / 1e3)))
            e0.record()
            for _ in range(n):
                torch.mm(a, w)
            e1.record()
            torch.cuda.synchronize()
            t = e0.elapsed_time(e1) / n
            f.write("back_to_back_%gs,%d,%.5f,%.2f\n" % (secs, n, t, fl / t / 1e9))
    log("gemm check written")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=400)
    ap.add_argument("--iters", type=int, default=25)
    ap.add_argument("--sample", type=int, default=5)
    ap.add_argument("--gemm", action="store_true")
    ap.add_argument("--variants", default="neusight,steady,profile",
                    help="comma-separated: neusight, steady, profile, adamw (training only)")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    variants = set(args.variants.split(","))
    bad = variants - {"neusight", "steady", "profile", "adamw"}
    if bad:
        raise SystemExit("unknown variant(s): " + ",".join(sorted(bad)) + "; use neusight, steady, profile, adamw")
    for n in args.names:
        parse_name(n)
    load_stack()
    os.makedirs(args.out, exist_ok=True)
    open_log(os.path.join(args.out, "log.txt"))
    for n in args.names:
        m, _, _, _, _ = parse_name(n)
        if not os.path.exists(os.path.join(args.models, m + ".json")):
            raise SystemExit(f"{n}: no {m}.json in {args.models}")
    with open(os.path.join(args.out, "smi.csv"), "w") as f:
        f.write("timestamp, clocks.sm [MHz], clocks.mem [MHz], power.draw [W], temperature.gpu, "
                "clocks_event_reasons.active\n")
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active",
         "--format=csv,noheader", "-lms", "100"],
        stdout=open(os.path.join(args.out, "smi.csv"), "a"), stderr=subprocess.DEVNULL)
    with open(os.path.join(args.out, "meta.txt"), "w") as f:
        p = torch.cuda.get_device_properties(0)
        cpu = ""
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        import transformers
        f.write("device: %s\nsms: %d\ntorch: %s\ncuda: %s\ntransformers: %s\ncpu: %s x %d\ndate_utc: %s\n" % (
            p.name, p.multi_processor_count, torch.__version__, torch.version.cuda,
            transformers.__version__, cpu, os.cpu_count(),
            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        f.write("method: NeuSight measure_e2e (gc.collect + empty_cache each of %d iterations, "
                "fastest %d averaged); steady = same without them; profile = one steady iteration "
                "under torch.profiler\n" % (args.iters, args.sample))
    t_start = time.time()
    if args.gemm:
        gemm_check(args.out)
    mcsv = open(os.path.join(args.out, "models.csv"), "w")
    mcsv.write("config,variant,fw_ms,bw_ms,e2e_ms,fw_kernel_sum_ms,bw_kernel_sum_ms,"
               "fw_busy_ms,bw_busy_ms,fw_span_ms,bw_span_ms,fw_kernels,bw_kernels,fw_wall_ms,bw_wall_ms,"
               "fw_all,bw_all,opt_ms\n")
    kcsv = open(os.path.join(args.out, "kernels.csv"), "w")
    kcsv.write("config,phase,kernel,count,total_us\n")
    for name in args.names:
        if time.time() - t_start > args.budget:
            log("budget spent, skipped", name)
            continue
        m, train, seq, batch, fusion = parse_name(name)
        log("start", name, "%.3f" % time.time())
        try:
            gc.collect()
            torch.cuda.empty_cache()
            model = get_model(os.path.join(args.models, m + ".json"), train, fusion)
            ids = torch.ones(batch, seq, dtype=torch.int64, device="cuda")
            if "neusight" in variants:
                f, g, fl, bl = timed(model, ids, train, args.iters, args.sample, True)
                mcsv.write("%s,neusight,%.4f,%.4f,%.4f,,,,,,,,,,,%s,%s,\n" % (
                    name, f, g, f + g, " ".join("%.3f" % x for x in fl), " ".join("%.3f" % x for x in bl)))
                log(name, "neusight fw %.3f bw %.3f e2e %.3f" % (f, g, f + g))
                write_label(args.out, name, os.path.join(args.models, m + ".json"), f, g)
            if "steady" in variants:
                f, g, fl, bl = timed(model, ids, train, max(10, args.iters // 2), args.sample, False)
                mcsv.write("%s,steady,%.4f,%.4f,%.4f,,,,,,,,,,,%s,%s,\n" % (
                    name, f, g, f + g, " ".join("%.3f" % x for x in fl), " ".join("%.3f" % x for x in bl)))
                log(name, "steady fw %.3f bw %.3f e2e %.3f" % (f, g, f + g))
            if "profile" in variants:
                res = profiled(model, ids, train, kcsv, name)
                d = {x[0]: x[1:] for x in res}
                fw = d.get("fw", [0, 0, 0, 0, 0])
                bw = d.get("bw", [0, 0, 0, 0, 0])
                mcsv.write("%s,profile,,,,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%d,%d,%.3f,%.3f,,,\n" % (
                    name, fw[1], bw[1], fw[2], bw[2], fw[3], bw[3], fw[4], bw[4], fw[0], bw[0]))
                log(name, "profile fw kernels %.3f ms (%d) busy %.3f wall %.3f; bw kernels %.3f ms (%d) busy %.3f wall %.3f" % (
                    fw[1], fw[4], fw[2], fw[0], bw[1], bw[4], bw[2], bw[0]))
            if "adamw" in variants and train:
                model.zero_grad(set_to_none=True)
                f, g, st, whole, wl = adamw_step(model, ids, max(10, args.iters // 2), args.sample)
                mcsv.write("%s,adamw,%.4f,%.4f,%.4f,,,,,,,,,,,%s,,%.4f\n" % (
                    name, f, g, whole, " ".join("%.3f" % x for x in wl), st))
                log(name, "adamw fw %.3f bw %.3f step %.3f whole %.3f" % (f, g, st, whole))
            mcsv.flush()
        except Exception as e:  # an OOM or a model this transformers cannot build
            log(name, "failed:", repr(e)[:300])
        model = None
        ids = None
        log("end", name, "%.3f" % time.time())
    smi.terminate()
    log("done in %.1f s" % (time.time() - t_start))


if __name__ == "__main__":
    main()
