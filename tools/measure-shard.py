#!/usr/bin/env python3
"""Time one tensor-parallel rank's training step of a GPT model on one GPU,
laid out as Megatron-LM lays it out, with the collectives left out: the
compute a TP rank runs between its all-reduces, for strata's ground truth.

NeuSight's distributed labels (its scripts/asplos/collect_label_distributed.py)
time GPT-2 Large and GPT3-XL built by Hugging Face Accelerate's Megatron-LM
plugin, FP32, under DP 4, TP 4 and PP 4 on four GPUs. One GPU cannot run the
collectives, but it can run what each rank computes: a DP rank is the whole
model at a quarter of the batch (TP 1), a TP rank the whole batch through a
quarter of every column- and row-parallel matrix. Timing both on one GPU
separates the compute difference between them from the communication.

The rank's operators, in Megatron-LM's order and layout ([seq, batch, hidden]
activations), FP32, eager PyTorch:

  embedding  vocabulary-parallel lookup (with TP > 1 the ids outside the
             rank's slice are masked out before and zeroed after), plus
             learned positions, a transpose to [s, b, h] and dropout
  per layer  layer norm; QKV as a column-parallel matmul with its bias
             added after; scores as baddbmm over (batch x local heads) with
             1/sqrt(d) folded in; the query-key layer-scaling multiply (by
             the layer number, --no-layer-scaling drops it); the causal
             mask as masked_fill_; softmax; dropout; context bmm; the
             permute back to [s, b, h] as a copy; the output projection as
             a row-parallel matmul without its bias; bias + dropout +
             residual; layer norm; the first MLP matmul without its bias;
             bias + GELU (tanh form); the second MLP matmul; bias + dropout
             + residual
  head       final layer norm; logits against the (vocabulary-parallel,
             padded to a multiple of 128 x TP) embedding; Megatron's
             vocabulary-parallel cross entropy (max, shift, the target's
             logit gathered, exp, sum, log; its backward the softmax less
             one at the target) and the masked mean

Variants: `jit` scripts the bias + GELU and bias + dropout + residual
functions with torch.jit.script, as Megatron-LM's fusions do; `eager` runs
them as separate eager kernels (GELU as Hugging Face's gelu_new: eight).

Each configuration: W warm-up steps, then R steps, each its forward and its
backward between CUDA events with a synchronize after, gradients set to None
between steps (Megatron-LM's FP32 optimizer zero_grad); *_ms are the means of
the fastest F steps (ranked by forward + backward). opt_ms: gradient-norm
clipping to 1.0 and torch.optim.AdamW's foreach step, mean of the same count.
One more step runs under torch.profiler for the GPU's activity totals
(forward and backward separately; every CUDA event: kernels, copies and
memsets, which *_kernel_ms and *_kernels count) and OUT/kernels.csv (config,
phase, name, count, total_us). Token ids and labels are all 1, as NeuSight's
harness feeds torch.ones.

Usage: measure-shard.py --out DIR [--configs LIST] [--variants jit,eager]
       [--warmup W] [--runs R] [--fastest F] [--budget S] [--no-layer-scaling]

LIST: comma-separated MODEL:tpT:bB (MODEL one of the built-in shapes below,
from NeuSight's model config files; sequence length each model's context).
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import time

from measure_common import log, open_log

torch = F = None

# (layers, hidden, heads, vocab, seq) from NeuSight's
# scripts/asplos/data/DLmodel_configs/{gpt2_large,gpt3_xl}.json
MODELS = {
    "gpt2_large": (36, 1280, 20, 50257, 1024),
    "gpt3_xl": (24, 3072, 24, 50257, 2048),
}
DEFAULT_CONFIGS = ("gpt2_large:tp1:b1,gpt2_large:tp4:b4,gpt2_large:tp1:b4,gpt2_large:tp4:b16,"
                   "gpt3_xl:tp1:b1,gpt3_xl:tp4:b4")


def parse_config(s):
    try:
        name, tp, b = s.split(":")
        if name not in MODELS or not tp.startswith("tp") or not b.startswith("b"):
            raise ValueError
        tp, b = int(tp[2:]), int(b[1:])
        if tp < 1 or b < 1:
            raise ValueError
    except ValueError:
        sys.exit(f"measure-shard.py: bad config '{s}': want MODEL:tpT:bB, MODEL one of {', '.join(MODELS)}")
    L, h, a, v, s_ = MODELS[name]
    if a % tp:
        sys.exit(f"measure-shard.py: TP {tp} does not divide the {a} heads of {name}")
    return name, tp, b


def bias_dropout_add(x, bias, residual, p: float, training: bool):
    return residual + F.dropout(x + bias, p=p, training=training)


def eager_gelu_new(x):
    # Hugging Face's NewGELUActivation, op for op
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def build(name, tp, batch, variant, layer_scaling, dev):
    L, h, a, vocab, s = MODELS[name]
    d = h // a
    ap = a // tp
    ffn = 4 * h
    mult = 128 * tp
    vp = (vocab + mult - 1) // mult * mult
    vl = vp // tp
    g = torch.Generator(device="cpu").manual_seed(1234)

    def w(*shape):
        return torch.nn.Parameter((torch.randn(*shape, generator=g) * 0.02).to(dev))

    def z(*shape):
        return torch.nn.Parameter(torch.zeros(*shape, device=dev))

    def o(*shape):
        return torch.nn.Parameter(torch.ones(*shape, device=dev))

    P = {"wte": w(vl, h), "wpe": w(s, h), "lnfw": o(h), "lnfb": z(h)}
    for i in range(L):
        P.update({f"{i}.ln1w": o(h), f"{i}.ln1b": z(h), f"{i}.wqkv": w(3 * h // tp, h), f"{i}.bqkv": z(3 * h // tp),
                  f"{i}.wo": w(h, h // tp), f"{i}.bo": z(h), f"{i}.ln2w": o(h), f"{i}.ln2b": z(h),
                  f"{i}.w1": w(ffn // tp, h), f"{i}.b1": z(ffn // tp), f"{i}.w2": w(h, ffn // tp), f"{i}.b2": z(h)})
    mask = torch.triu(torch.ones(1, 1, s, s, dtype=torch.bool, device=dev), diagonal=1)
    start = 0  # rank 0's vocabulary slice
    pdrop = 0.1

    if variant == "jit":
        gelu_fwd = torch.jit.script(bias_gelu_fwd_fn())
        gelu_bwd = torch.jit.script(bias_gelu_bwd_fn())
        bda = torch.jit.script(bias_dropout_add)

        class BiasGelu(torch.autograd.Function):
            @staticmethod
            def forward(ctx, y, bias):
                ctx.save_for_backward(y, bias)
                return gelu_fwd(bias, y)

            @staticmethod
            def backward(ctx, go):
                y, bias = ctx.saved_tensors
                t = gelu_bwd(go, bias, y)
                return t, t

        def bias_gelu(y, bias):
            return BiasGelu.apply(y, bias)
    else:
        bda = bias_dropout_add

        def bias_gelu(y, bias):
            return eager_gelu_new(y + bias)

    class VocabParallelCE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, target):
            m = torch.max(logits, dim=-1)[0]
            logits = logits - m.unsqueeze(-1)
            tmask = (target < start) | (target >= start + vl)
            mt = target.clone() - start
            mt[tmask] = 0
            l2 = logits.view(-1, vl)
            mt1 = mt.view(-1)
            ar = torch.arange(0, l2.size(0), device=l2.device)
            pred = l2[ar, mt1].clone().contiguous().view_as(target)
            pred[tmask] = 0.0
            torch.exp(logits, out=logits)
            sexp = logits.sum(dim=-1)
            loss = torch.log(sexp) - pred
            logits.div_(sexp.unsqueeze(-1))
            ctx.save_for_backward(logits, tmask, mt1)
            return loss

        @staticmethod
        def backward(ctx, go):
            sm, tmask, mt1 = ctx.saved_tensors
            gi = sm
            g2 = gi.view(-1, vl)
            ar = torch.arange(0, g2.size(0), device=g2.device)
            g2[ar, mt1] -= 1.0 - tmask.view(-1).float()
            gi.mul_(go.unsqueeze(-1))
            return gi, None

    def forward(ids, labels, loss_mask):
        if tp > 1:
            imask = (ids < start) | (ids >= start + vl)
            mi = ids.clone() - start
            mi[imask] = 0
            e = F.embedding(mi, P["wte"])
            e[imask, :] = 0.0
        else:
            e = F.embedding(ids, P["wte"])
        e = e + F.embedding(pos, P["wpe"])
        x = F.dropout(e.transpose(0, 1).contiguous(), p=pdrop, training=True)
        for i in range(L):
            res = x
            y = F.layer_norm(x, (h,), P[f"{i}.ln1w"], P[f"{i}.ln1b"], 1e-5)
            qkv = torch.matmul(y, P[f"{i}.wqkv"].t()) + P[f"{i}.bqkv"]
            qkv = qkv.view(s, batch, ap, 3 * d)
            q, k, v = torch.split(qkv, d, dim=-1)
            q = q.reshape(s, batch * ap, d)
            k = k.reshape(s, batch * ap, d)
            v = v.reshape(s, batch * ap, d)
            coeff = float(i + 1) if layer_scaling else 1.0
            buf = torch.empty(batch * ap, s, s, device=dev)
            sc = torch.baddbmm(buf, q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2), beta=0.0,
                               alpha=1.0 / (math.sqrt(d) * coeff))
            sc = sc.view(batch, ap, s, s)
            if layer_scaling:
                sc = sc * coeff
            sc.masked_fill_(mask, -10000.0)
            pr = torch.softmax(sc, dim=-1)
            pr = F.dropout(pr, p=pdrop, training=True)
            cx = torch.bmm(pr.view(batch * ap, s, s), v.transpose(0, 1))
            cx = cx.view(batch, ap, s, d).permute(2, 0, 1, 3).contiguous().view(s, batch, ap * d)
            out = torch.matmul(cx, P[f"{i}.wo"].t())
            x = bda(out, P[f"{i}.bo"], res, pdrop, True)
            res = x
            y = F.layer_norm(x, (h,), P[f"{i}.ln2w"], P[f"{i}.ln2b"], 1e-5)
            f = bias_gelu(torch.matmul(y, P[f"{i}.w1"].t()), P[f"{i}.b1"])
            out = torch.matmul(f, P[f"{i}.w2"].t())
            x = bda(out, P[f"{i}.b2"], res, pdrop, True)
        x = F.layer_norm(x, (h,), P["lnfw"], P["lnfb"], 1e-5)
        logits = torch.matmul(x, P["wte"].t())
        losses = VocabParallelCE.apply(logits, labels.transpose(0, 1).contiguous())
        losses = losses.transpose(0, 1).contiguous()
        return torch.sum(losses.view(-1) * loss_mask.view(-1)) / loss_mask.sum()

    pos = torch.arange(s, device=dev).unsqueeze(0).expand(batch, s)
    ids = torch.ones(batch, s, dtype=torch.long, device=dev)
    labels = torch.ones(batch, s, dtype=torch.long, device=dev)
    lmask = torch.ones(batch, s, device=dev)
    return P, lambda: forward(ids, labels, lmask), (L, h, a, vp, s)


def bias_gelu_fwd_fn():
    def f(bias, y):
        x = bias + y
        return x * 0.5 * (1.0 + torch.tanh(0.7978845608028654 * x * (1.0 + 0.044715 * x * x)))
    return f


def bias_gelu_bwd_fn():
    def f(g, bias, y):
        x = bias + y
        t = torch.tanh(0.7978845608028654 * x * (1.0 + 0.044715 * x * x))
        d = 0.5 * x * ((1.0 - t * t) * (0.7978845608028654 + 0.1070322243 * x * x)) + 0.5 * (1.0 + t)
        return d * g
    return f


def kernel_totals(prof):
    tot = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            n = e.name
            c, us = tot.get(n, (0, 0.0))
            tot[n] = (c + 1, us + e.time_range.elapsed_us())
    return tot


def main():
    global torch, F
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", default=DEFAULT_CONFIGS)
    ap.add_argument("--variants", default="jit,eager")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--fastest", type=int, default=5)
    ap.add_argument("--budget", type=float, default=240, help="seconds; configurations past it are skipped")
    ap.add_argument("--no-layer-scaling", action="store_true")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    configs = [parse_config(c) for c in args.configs.split(",") if c]
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in ("jit", "eager"):
            sys.exit(f"measure-shard.py: unknown variant '{v}' (jit, eager)")
    if not 1 <= args.fastest <= args.runs:
        sys.exit("measure-shard.py: --fastest must be 1..--runs")
    import torch as _t
    import torch.nn.functional as _F
    torch, F = _t, _F
    from torch.profiler import ProfilerActivity, profile
    os.makedirs(args.out, exist_ok=True)
    open_log(os.path.join(args.out, "log.txt"))
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if cuda:
        p = torch.cuda.get_device_properties(dev)
        log(f"# {p.name}, {p.multi_processor_count} SMs; torch {torch.__version__}, CUDA {torch.version.cuda}")
        try:
            log("#", subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit",
                                     "--format=csv,noheader"], capture_output=True, text=True).stdout.strip())
        except OSError:
            pass
    t_start = time.time()
    fields = ["model", "layers", "hidden", "heads", "vocab_padded", "seq", "batch", "tp", "variant", "layer_scaling",
              "runs", "fastest", "fwd_ms", "bwd_ms", "step_ms", "opt_ms", "fwd_kernel_ms", "bwd_kernel_ms",
              "fwd_kernels", "bwd_kernels", "peak_gib"]
    fo = open(os.path.join(args.out, "shard.csv"), "w", newline="")
    wr = csv.DictWriter(fo, fieldnames=fields)
    wr.writeheader()
    fk = open(os.path.join(args.out, "kernels.csv"), "w", newline="")
    wk = csv.writer(fk)
    wk.writerow(["config", "phase", "kernel", "count", "total_us"])

    def sync():
        if cuda:
            torch.cuda.synchronize()

    for name, tp, batch in configs:
        for variant in variants:
            tag = f"{name}:tp{tp}:b{batch}:{variant}"
            if time.time() - t_start > args.budget:
                log(f"skip {tag}: past the {args.budget:.0f} s budget")
                continue
            if cuda:
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
            P, step, (L, h, a, vp, s) = build(name, tp, batch, variant, not args.no_layer_scaling, dev)
            params = list(P.values())
            opt = torch.optim.AdamW(params, lr=1e-5, foreach=True)
            runs = []
            for it in range(args.warmup + args.runs):
                sync()
                if cuda:
                    e0, e1, e2, e3 = (torch.cuda.Event(enable_timing=True) for _ in range(4))
                    e0.record()
                t0 = time.perf_counter()
                loss = step()
                if cuda:
                    e1.record()
                t1 = time.perf_counter()
                loss.backward()
                if cuda:
                    e2.record()
                    e2.synchronize()
                t2 = time.perf_counter()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                if cuda:
                    e3.record()
                    e3.synchronize()
                t3 = time.perf_counter()
                for p_ in params:
                    p_.grad = None
                if it >= args.warmup:
                    if cuda:
                        runs.append((e0.elapsed_time(e1), e1.elapsed_time(e2), e2.elapsed_time(e3)))
                    else:
                        runs.append(((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3))
            runs.sort(key=lambda r: r[0] + r[1])
            best = runs[:args.fastest]
            fwd = sum(r[0] for r in best) / len(best)
            bwd = sum(r[1] for r in best) / len(best)
            optm = sum(r[2] for r in best) / len(best)
            act = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
            sync()
            with profile(activities=act) as pf:
                loss = step()
                sync()
            kf = kernel_totals(pf)
            with profile(activities=act) as pb:
                loss.backward()
                sync()
            kb = kernel_totals(pb)
            for p_ in params:
                p_.grad = None
            for phase, kt in (("forward", kf), ("backward", kb)):
                for kn, (c, us) in sorted(kt.items(), key=lambda x: -x[1][1]):
                    wk.writerow([tag, phase, kn, c, f"{us:.1f}"])
            row = {"model": name, "layers": L, "hidden": h, "heads": a, "vocab_padded": vp, "seq": s,
                   "batch": batch, "tp": tp, "variant": variant, "layer_scaling": int(not args.no_layer_scaling),
                   "runs": args.runs, "fastest": args.fastest, "fwd_ms": f"{fwd:.3f}", "bwd_ms": f"{bwd:.3f}",
                   "step_ms": f"{fwd + bwd:.3f}", "opt_ms": f"{optm:.3f}",
                   "fwd_kernel_ms": f"{sum(x[1] for x in kf.values()) / 1e3:.3f}",
                   "bwd_kernel_ms": f"{sum(x[1] for x in kb.values()) / 1e3:.3f}",
                   "fwd_kernels": sum(x[0] for x in kf.values()), "bwd_kernels": sum(x[0] for x in kb.values()),
                   "peak_gib": f"{torch.cuda.max_memory_allocated() / 2**30:.2f}" if cuda else ""}
            wr.writerow(row)
            fo.flush()
            fk.flush()
            log(f"{tag}: fwd {fwd:.2f} bwd {bwd:.2f} step {fwd + bwd:.2f} opt {optm:.2f} ms; kernels "
                f"{row['fwd_kernel_ms']} + {row['bwd_kernel_ms']} ms ({row['fwd_kernels']} + {row['bwd_kernels']})")
            del P, params, opt, step, loss
    log(f"# done in {time.time() - t_start:.0f} s")


if __name__ == "__main__":
    main()
