/* strata eval: a workload's step on one GPU, layer by layer, with error bars. */
#include "config.h"
#include "cli/cli.h"
#include "compose/compose.h"
#include "train/train.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* What the step needs in GPU memory against what the GPU has:
 * st_step_memory (train/train.h), the rule GPU sweeps use too. */
static void print_memory(const st_step_mem *em, int edge)
{
    const double gib = 1024.0 * 1024 * 1024;
    if (em->activations_counted && em->kv_cache == 0 && em->states > 0 && em->activations > 0)
        printf("  memory             %.2f GiB of %.2f GiB (weights %.2f GiB, gradients and optimizer states %.2f GiB, "
               "activations and buffers %.2f GiB)\n", em->total / gib, em->capacity / gib, em->weights / gib, em->states / gib,
               em->activations / gib);
    else if (em->activations_counted)
        printf("  memory             %.2f GiB of %.2f GiB (weights %.2f GiB, with gradients, optimizer states and "
               "activations)\n", em->total / gib, em->capacity / gib, em->weights / gib);
    else
        printf("  memory             %.2f GiB of %.2f GiB (weights %.2f GiB, KV cache %.2f GiB, the largest "
               "operator's live tensors %.2f GiB)\n", em->total / gib, em->capacity / gib, em->weights / gib,
               em->kv_cache / gib, em->activations / gib);
    if (!em->fits)
        printf("  DOES NOT FIT       the step needs more memory than the %s has; the time is what it would take "
               "with the memory\n", edge ? "device" : "GPU");
}

static void json_memory(st_json *j, const st_step_mem *em)
{
    st_json_begin_object(j, "memory");
    st_json_number(j, "bytes", em->total);
    st_json_number(j, "weights_bytes", em->weights);
    st_json_number(j, "kv_cache_bytes", em->kv_cache);
    st_json_number(j, "gradient_optimizer_bytes", em->states);
    st_json_number(j, "activation_bytes", em->activations);
    st_json_bool(j, "activations_counted", em->activations_counted);
    st_json_number(j, "capacity_bytes", em->capacity);
    st_json_bool(j, "fits", em->fits);
    st_json_end_object(j);
}

/* The shape an operator's kernel runs, as text ("20 x 1024x64 . 64x1024"). */
static void op_shape(const st_op *op, char *buf, size_t n)
{
    st_kernel k;
    st_op_to_kernel(op, &k);
    switch (k.op) {
    case ST_KOP_GEMM:
    case ST_KOP_BMM:
    case ST_KOP_GROUPED:
    case ST_KOP_CONV:
        if (k.b > 1)
            snprintf(buf, n, "%lld x %lldx%lld . %lldx%lld", k.b, k.m, k.k, k.k, k.n);
        else
            snprintf(buf, n, "%lldx%lld . %lldx%lld", k.m, k.k, k.k, k.n);
        break;
    case ST_KOP_FLASH:
        snprintf(buf, n, "%lld x %lldh q%lld kv%lld d%lld", op->batch, k.heads, k.q_len, k.kv_len, op->head_dim);
        break;
    default:
        if (op->kind == ST_OP_POOL) /* the input, window and output of a pooling */
            snprintf(buf, n, "%lld x %lldx%lldx%lld %lldx%lld -> %lldx%lld", op->batch, op->c, op->h, op->w, op->r,
                     op->s, op->p, op->q);
        else
            snprintf(buf, n, "%lld x %lld", k.rows, k.cols);
        break;
    }
}

static const char *op_pass(const st_op *op)
{
    return op->pass == ST_PASS_BWD ? "bwd" : op->pass == ST_PASS_FWD ? "fwd" : "step";
}

/* Every operator as the step prices it (--kernels), in issue order. */
static st_op_time *op_times(const st_gpu *g, const st_gpu_coef *c, const st_oplist *ops, const st_compose_opts *co,
                            st_error *err)
{
    st_op_time *t = calloc(ops->n ? ops->n : 1, sizeof *t);
    if (!t) {
        st_error_set(err, ST_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < ops->n; i++)
        if (st_compose_op_time(g, c, ops, i, co, &t[i], err)) {
            free(t);
            return NULL;
        }
    return t;
}

static void print_kernels(const st_oplist *ops, const st_op_time *times, const st_compose_opts *co)
{
    /* columns as wide as their widest entry: names are shown whole */
    int nw = 8, sw = 5;
    char shape[96];
    for (size_t i = 0; i < ops->n; i++) {
        int l = (int)strlen(ops->ops[i].name);
        nw = l > nw ? l : nw;
        op_shape(&ops->ops[i], shape, sizeof shape);
        l = (int)strlen(shape);
        sw = l > sw ? l : sw;
    }
    printf("\n  %-4s %-*s %-*s %6s %-12s %-8s %-8s %12s %12s %12s\n", "PASS", nw, "OPERATOR", sw, "SHAPE", "RUNS",
           "CLASS", "BOUND", "TILE", "TIME us", "HOST us", "+-SD us");
    for (size_t i = 0; i < ops->n; i++) {
        const st_op_time t = times[i];
        const st_op *op = &ops->ops[i];
        char tile[16] = "-";
        op_shape(op, shape, sizeof shape);
        const char *cls = co->edge ? "edge" : t.has_est ? st_kclass_name(t.est.cls) : "-";
        const char *bound = t.none ? "folded" : t.has_est ? t.est.bound : "-";
        if (t.has_est && t.est.tile.m > 0)
            snprintf(tile, sizeof tile, "%dx%d", t.est.tile.m, t.est.tile.n);
        printf("  %-4s %-*s %-*s %6lld %-12s %-8s %-8s %12.6g %12.6g %12.6g\n", op_pass(op), nw, op->name, sw, shape,
               t.none ? 0 : t.runs, cls, bound, tile, t.gpu_s * 1e6, t.host_s * 1e6, t.sd_s * 1e6);
    }
    printf("  (times per run; RUNS: runs in the step%s; BOUND epilogue: run inside the previous kernel, "
           "no launch of its own%s)\n",
           co->recompute ? ", the forward replays of --recompute included" : "",
           co->edge && co->edge->cls == ST_EDGE_MOBILE_CPU ? "; on a mobile CPU the interpreter's cost is in TIME" : "");
}

static void json_kernels(st_json *j, const st_oplist *ops, const st_op_time *times, const st_compose_opts *co)
{
    st_json_begin_array(j, "operators");
    for (size_t i = 0; i < ops->n; i++) {
        const st_op_time t = times[i];
        const st_op *op = &ops->ops[i];
        char shape[96];
        op_shape(op, shape, sizeof shape);
        st_json_begin_object(j, NULL);
        st_json_string(j, "name", op->name);
        st_json_string(j, "layer", op->layer);
        st_json_string(j, "pass", op_pass(op));
        st_json_string(j, "shape", shape);
        st_json_int(j, "runs", t.none ? 0 : t.runs);
        st_json_bool(j, "fused", t.fused);
        st_json_bool(j, "folded", t.none);
        if (t.has_est) {
            st_json_string(j, "class", co->edge ? "edge" : st_kclass_name(t.est.cls));
            st_json_string(j, "bound", t.est.bound);
            if (t.est.tile.m > 0) {
                char tile[16];
                snprintf(tile, sizeof tile, "%dx%d", t.est.tile.m, t.est.tile.n);
                st_json_string(j, "tile", tile);
            }
        }
        st_json_number(j, "time_s", t.gpu_s);
        st_json_number(j, "host_s", t.host_s);
        st_json_number(j, "sd_s", t.sd_s);
        st_json_number(j, "flops", op->flops);
        st_json_number(j, "bytes", op->bytes_read + op->bytes_written);
        st_json_end_object(j);
    }
    st_json_end_array(j);
}

static void print_step(const st_model *m, const st_gpu *g, const st_gen_opts *o, const st_compose_opts *co,
                       const st_step *s, const st_step_mem *em)
{
    cli_print_model_header(m, stdout);
    printf("  on                 %s (%s)\n", g->name, g->id);
    printf("  step               %s, batch %lld", st_phase_name(o->phase), o->batch);
    if (o->phase == ST_PHASE_DECODE)
        printf(", KV length %lld", o->kv_len);
    else if (m->kind == ST_MODEL_TRANSFORMER)
        printf(", sequence %lld", o->seq);
    if (co->edge)
        printf(", %s, the converted TFLite graph (batch norms folded, activations fused)\n\n",
               st_dtype_name(o->dtype));
    else {
        printf(", %s", st_dtype_name(o->dtype));
        if (m->kind == ST_MODEL_TRANSFORMER)
            printf(", %s attention", cli_attn_words(o->attn));
        printf(", %s%s", co->fused ? "fused (compiled) mode" : "eager mode", co->recompute ? ", full recompute" : "");
        if (co->torch_ver)
            printf(", PyTorch %d.%d", co->torch_ver / 100, co->torch_ver % 100);
        cli_print_train_opts(o, stdout);
        printf("\n\n");
    }
    int lw = 22; /* as wide as the longest layer name */
    for (size_t i = 0; i < s->n_layers; i++)
        lw = (int)strlen(s->layers[i].layer) > lw ? (int)strlen(s->layers[i].layer) : lw;
    printf("  %-*s %12s %7s %9s %12s %8s\n", lw, "LAYER", "TIME ms", "SHARE", "KERNELS", "+-SD ms", "ERR%");
    for (size_t i = 0; i < s->n_layers; i++) {
        const st_layer_time *l = &s->layers[i];
        printf("  %-*s %12.4f %6.1f%% %9lld %12.4f %7.1f%%\n", lw, l->layer, l->time_s * 1e3,
               100 * l->time_s / s->total_s, l->kernels, l->sd_s * 1e3, 100 * l->err_share);
    }
    printf("\n  total              %.4f ms  (90%% band %.4f .. %.4f ms, errors correlated: the default)\n",
           s->total_s * 1e3, s->lo_s * 1e3, s->hi_s * 1e3);
    printf("                     uncorrelated band %.4f .. %.4f ms\n", s->lo_unc_s * 1e3, s->hi_unc_s * 1e3);
    if (co->edge && co->edge->cls == ST_EDGE_MOBILE_CPU) {
        printf("  core busy          %.4f ms in %lld operators (the interpreter's %.1f us an operator included)\n",
               s->kernel_s * 1e3, s->kernels, co->edge->dispatch_overhead_s * 1e6);
    } else {
        printf("  GPU busy           %.4f ms in %lld kernels; idle waiting on the host %.4f ms; final sync %.4f ms\n",
               s->kernel_s * 1e3, s->kernels, s->idle_s * 1e3, s->sync_s * 1e3);
        printf("  host dispatch      %.4f ms\n", s->host_s * 1e3);
    }
    if (o->phase == ST_PHASE_TRAIN)
        printf("  by pass            forward %.4f ms, backward %.4f ms%s, optimizer %.4f ms (idle before a "
               "kernel counted with it)\n", s->pass_s[ST_PASS_FWD] * 1e3, s->pass_s[ST_PASS_BWD] * 1e3,
               co->recompute ? " (the forward replay included)" : "", s->pass_s[ST_PASS_OPT] * 1e3);
    if (o->phase == ST_PHASE_TRAIN && !co->edge && g->tc_sustained_w_per_tflops > 0)
        printf("  clock              %s\n", co->sustained ? "tensor cores at the sustained power limit (--isolated: "
                                                          "at boost)"
                                                        : "tensor cores at boost, as kernels timed alone (--isolated)");
    double peak = st_gpu_peak(g, o->dtype, 0);
    if (s->flops > 0)
        printf("  achieved           %.4g TFLOP/s%s", s->flops / s->total_s * 1e-12, peak > 0 ? "" : "\n");
    if (s->flops > 0 && peak > 0) {
        double share = s->flops / s->total_s / peak;
        /* past the peak only where convolutions run as Winograd or FFT,
         * which multiply less than the direct FLOPs counted */
        printf(" (%.1f%% of the %s peak%s)\n", 100 * share, st_dtype_name(o->dtype),
               share > 1 ? ": direct-convolution FLOPs, which Winograd and FFT convolutions beat" : "");
    }
    print_memory(em, co->edge != NULL);
}

static void json_step(const st_model *m, const st_gpu *g, const st_gen_opts *o, const st_compose_opts *co,
                      const st_step *s, const st_step_mem *em, const st_oplist *ops, const st_op_time *times)
{
    st_json j;
    st_json_init(&j, stdout, 1);
    st_json_begin_object(&j, NULL);
    st_json_string(&j, "workload", m->id);
    st_json_string(&j, "gpu", g->id);
    cli_json_step(&j, m, o);
    st_json_bool(&j, "fused", co->fused);
    st_json_bool(&j, "recompute", co->recompute);
    st_json_bool(&j, "sustained", co->sustained && g->tc_sustained_w_per_tflops > 0);
    if (!co->edge) {
        int tv = st_torch_effective(co->torch_ver);
        char t[16];
        snprintf(t, sizeof t, "%d.%d", tv / 100, tv % 100);
        st_json_string(&j, "torch", t);
    }
    cli_json_train_opts(&j, o);
    if (co->edge)
        st_json_string(&j, "edge_class", co->edge->cls == ST_EDGE_MOBILE_CPU ? "mobile_cpu" : "mobile_gpu");
    st_json_number(&j, "total_s", s->total_s);
    st_json_number(&j, "lo_s", s->lo_s);
    st_json_number(&j, "hi_s", s->hi_s);
    st_json_string(&j, "band", "correlated");
    st_json_number(&j, "lo_uncorrelated_s", s->lo_unc_s);
    st_json_number(&j, "hi_uncorrelated_s", s->hi_unc_s);
    st_json_number(&j, "kernel_s", s->kernel_s);
    st_json_number(&j, "host_s", s->host_s);
    st_json_number(&j, "idle_s", s->idle_s);
    st_json_number(&j, "sync_s", s->sync_s);
    /* wall time by pass; with sync_s they add up to total_s */
    st_json_number(&j, "forward_s", s->pass_s[ST_PASS_FWD]);
    st_json_number(&j, "backward_s", s->pass_s[ST_PASS_BWD]);
    st_json_number(&j, "optimizer_s", s->pass_s[ST_PASS_OPT]);
    st_json_int(&j, "kernels", s->kernels);
    st_json_number(&j, "flops", s->flops);
    st_json_number(&j, "bytes", s->bytes);
    json_memory(&j, em);
    st_json_begin_array(&j, "layers");
    for (size_t i = 0; i < s->n_layers; i++) {
        const st_layer_time *l = &s->layers[i];
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "layer", l->layer);
        st_json_number(&j, "time_s", l->time_s);
        st_json_number(&j, "kernel_s", l->kernel_s);
        st_json_number(&j, "sd_s", l->sd_s);
        st_json_number(&j, "error_share", l->err_share);
        st_json_int(&j, "kernels", l->kernels);
        st_json_end_object(&j);
    }
    st_json_end_array(&j);
    if (times)
        json_kernels(&j, ops, times, co);
    st_json_end_object(&j);
    st_json_finish(&j);
}

static int run(int argc, char **argv)
{
    int rc_arg;
    static const struct option opts[] = {
        CLI_WL_LONGOPTS,
        {"gpu", required_argument, NULL, 'g'},   {"fused", no_argument, NULL, 'F'},
        {"recompute", no_argument, NULL, 'R'},   {"coef", required_argument, NULL, 'c'},
        {"edge-coef", required_argument, NULL, 'E'},
        {"kernels", no_argument, NULL, 'K'},
        {"torch", required_argument, NULL, 'T'},
        {"isolated", no_argument, NULL, 'I'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    const char *gpu = "h100-sxm", *coefp = NULL, *edge_coefp = NULL;
    cli_wl wl;
    int json = 0, fused = 0, recompute = 0, kernels = 0, torch_ver = 0, isolated = 0, c;
    optind = 0;
    cli_wl_init(&wl);
    while ((c = cli_getopt(&cmd_eval, argc, argv, CLI_WL_SHORTOPTS "g:FRc:E:KT:Ijh", opts)) != -1) {
        int t = cli_wl_option(&cmd_eval, c, optarg, &wl);
        if (t < 0)
            return 2;
        if (t)
            continue;
        switch (c) {
        case 'g': gpu = optarg; break;
        case 'F': fused = 1; break;
        case 'R': recompute = 1; break;
        case 'c': coefp = optarg; break;
        case 'E': edge_coefp = optarg; break;
        case 'K': kernels = 1; break;
        case 'I': isolated = 1; break;
        case 'T':
            if (cli_parse_torch(&cmd_eval, optarg, &torch_ver))
                return 2;
            break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_eval, stdout); return 0;
        default: return 2;
        }
    }
    if ((rc_arg = cli_one_operand(&cmd_eval, argc, argv, "which workload? (strata list --kind workload)")))
        return rc_arg;
    st_error err;
    st_gen_opts o;
    if (cli_wl_check(&cmd_eval, &wl))
        return 2;
    st_gpu g;
    st_edge edge;
    st_edge_coef ecoef;
    int is_edge = 0;
    st_attn_impl attn = ST_ATTN_EAGER; /* as cli_wl_apply will set it (cli_wl_check parsed it) */
    if (wl.attn)
        st_attn_parse(wl.attn, &attn);
    /* an edge preset (mobile CPU or GPU) runs through the edge model */
    if (st_load_gpu_or_edge(gpu, &g, &edge, &is_edge, &err))
        return cli_fail(&err);
    if (is_edge) {
        char bad[48] = "";
        if (fused)
            snprintf(bad, sizeof bad, "--fused");
        else if (torch_ver)
            snprintf(bad, sizeof bad, "--torch");
        else if (recompute)
            snprintf(bad, sizeof bad, "--recompute");
        else if (wl.phase && strcmp(wl.phase, "prefill") != 0)
            snprintf(bad, sizeof bad, "--phase %.30s", wl.phase);
        else if (attn != ST_ATTN_EAGER)
            snprintf(bad, sizeof bad, "--attn %.30s", wl.attn);
        if (bad[0])
            return cli_usage_error(&cmd_eval, "%s is an edge device: it runs the inference graph TFLite converts "
                                              "(batch norms folded, activations fused, attention as its "
                                              "matrix products); drop %s", edge.id, bad);
        if (st_edge_coef_load(edge_coefp, &ecoef, &err))
            return cli_fail(&err);
    } else if (edge_coefp) {
        return cli_usage_error(&cmd_eval, "--edge-coef is for edge presets (mobile-cpu, mobile-gpu, ...); %s is a GPU",
                               g.id);
    }
    st_gpu_coef coef;
    if (st_gpu_coef_load(coefp, &coef, &err))
        return cli_fail(&err);
    st_model m;
    if (st_load_model(argv[optind], &m, &err))
        return cli_fail(&err);
    cli_wl_apply(&wl, &m, &o);
    if (is_edge && !wl.dtype)
        o.dtype = st_edge_default_dtype(&edge);
    int rc = cli_wl_applies(&cmd_eval, &wl, &m, &o);
    if (rc == 0 && recompute && o.phase != ST_PHASE_TRAIN)
        rc = cli_usage_error(&cmd_eval, "--recompute applies to --phase train");
    if (rc == 0 && isolated && o.phase != ST_PHASE_TRAIN)
        rc = cli_usage_error(&cmd_eval, "--isolated applies to --phase train (an inference step is priced at "
                                        "boost already)");
    if (rc) {
        st_model_free(&m);
        return rc;
    }
    if (!st_gpu_supports(&g, o.dtype)) {
        st_error_set(&err, ST_EINVAL, "%s has no %s throughput; %s --dtype (e.g. %s)", g.id,
                     st_dtype_name(o.dtype), wl.dtype ? "pick another" : "pass",
                     st_gpu_supports(&g, ST_FP16) ? "fp16" : "fp32");
        st_model_free(&m);
        return cli_fail(&err);
    }
    st_oplist ops = {0, 0, NULL};
    if ((rc = st_model_ops(&m, &o, &ops, &err))) {
        st_model_free(&m);
        return cli_fail(&err);
    }
    st_compose_opts co;
    st_compose_opts_default(&co);
    co.fused = fused;
    co.recompute = recompute;
    co.torch_ver = torch_ver;
    /* a training step holds the board at its power limit, as `train`
     * prices it (st_kernel.sustained) */
    co.sustained = o.phase == ST_PHASE_TRAIN && !isolated;
    if (is_edge) {
        co.edge = &edge;
        co.edge_coef = &ecoef;
    }
    st_step *s = malloc(sizeof *s);
    if (!s || st_compose(&g, &coef, &ops, &co, s, &err)) {
        if (!s)
            st_error_set(&err, ST_ENOMEM, "out of memory");
        free(s);
        st_oplist_free(&ops);
        st_model_free(&m);
        return cli_fail(&err);
    }
    st_step_mem em;
    st_step_memory(&m, &g, &o, co.recompute, co.fused, &coef, &ops, &em);
    st_op_time *times = kernels ? op_times(&g, &coef, &ops, &co, &err) : NULL;
    if (kernels && !times) {
        rc = 1;
    } else if (json) {
        json_step(&m, &g, &o, &co, s, &em, &ops, times);
    } else {
        print_step(&m, &g, &o, &co, s, &em);
        if (times)
            print_kernels(&ops, times, &co);
    }
    free(times);
    free(s);
    st_oplist_free(&ops);
    st_model_free(&m);
    return rc ? cli_fail(&err) : 0;
}

const cli_command cmd_eval = {
    "eval",
    "eval WORKLOAD [--gpu PRESET] [--phase prefill|decode|train] [--batch B] [--seq S] [--kv L]\n"
    "                   [--dtype D] [--attn eager|flash|flash3] [--fused] [--recompute] [--no-optimizer]\n"
    "                   [--optimizer fused|foreach] [--accumulate-grads]\n"
    "                   [--kernels] [--torch VER] [--isolated] [--coef FILE] [--edge-coef FILE] [--json]",
    "Estimate one step of a workload on one GPU: per-layer time, error share, total with 90% band.",
    "  WORKLOAD         a workload id, name or path (YAML or Hugging Face config.json)\n"
    "  --gpu PRESET     default h100-sxm; an edge preset (mobile-cpu, mobile-gpu,\n"
    "                   mobile-gpu-adreno630) runs the converted TFLite graph on the edge model\n"
    "                   (inference only; the dtype defaults to the device's own: FP32 on\n"
    "                   the CPU, FP16 on the GPU delegate)\n"
    "  --phase P        prefill (default), decode (one token per sequence against --kv), train\n"
    "  --batch B        sequences; --seq S tokens per sequence; --kv L cached tokens (decode)\n"
    "  --dtype D        compute dtype (default: the workload's)\n"
    "  --attn A         eager (default: score matrix materialised), flash (FlashAttention-2's fused\n"
    "                   kernel; before Ampere, and in FP32, PyTorch's memory-efficient kernel,\n"
    "                   priced alike) or flash3 (FlashAttention-3: Hopper only, FP16/BF16/FP8)\n"
    "  --fused          compiled mode (Inductor's schedule): launch-only dispatch; elementwise ops\n"
    "                   after a library GEMM, conv or attention run as one kernel (or lead into a\n"
    "                   norm or softmax), after any other kernel in its epilogue\n"
    "  --recompute      train: replay each block's forward before its backward\n"
    "  --no-optimizer   train: forward + backward only\n"
    "  --optimizer O    train: fused (default: one AdamW pass with clip-by-norm's read, as\n"
    "                   Megatron-LM, DeepSpeed and fused=True run it) or foreach (torch.optim.AdamW's\n"
    "                   default: eight passes over FP32 state, 80 bytes a parameter)\n"
    "  --isolated       train: tensor-core kernels at boost, as timed alone (default: at the\n"
    "                   board's sustained power limit where the preset has a measured\n"
    "                   tc_sustained_w_per_tflops, as strata train prices a step)\n"
    "  --accumulate-grads  train: each gradient is added into an existing .grad (a later\n"
    "                   microbatch of gradient accumulation; a loop that never zeroes them)\n"
    "  --kernels        also list every operator: shape, runs in the step, kernel class, bound,\n"
    "                   tile, time and host cost per run (JSON: operators[])\n"
    "  --torch VER      the PyTorch release (default 2.1, the calibration data's); from 2.8 the\n"
    "                   embedding gather copies rows 16 bytes a thread (see strata kernel)\n"
    "  --coef FILE      coefficient table (default calibration/gpu-kernels.yaml)\n"
    "  --edge-coef FILE edge presets: the edge table (default calibration/edge.yaml)\n"
    "  --json           machine-readable; total_s, lo_s, hi_s (correlated band), memory{bytes,\n"
    "                   weights_bytes, kv_cache_bytes, gradient_optimizer_bytes, activation_bytes,\n"
    "                   activations_counted, capacity_bytes, fits},\n"
    "                   layers[], operators[] with --kernels\n"
    "\nMemory (the rule GPU sweeps use too): training a transformer counts what `strata train`\n"
    "counts on one GPU; training another model its weights, gradients, AdamW states and every\n"
    "forward output (kept for the backward); inference the weights, a decoder's KV cache and\n"
    "the largest operator's live tensors (activations are freed as their consumers run). The\n"
    "optimizer's states are counted with --no-optimizer too (it leaves the step out of the\n"
    "time, not the states out of memory).\n",
    run,
    NULL,
};
