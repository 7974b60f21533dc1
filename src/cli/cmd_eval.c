/* strata eval: a workload's step on one GPU, layer by layer, with error bars. */
#include "config.h"
#include "cli/cli.h"
#include "compose/compose.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void print_step(const st_model *m, const st_gpu *g, const st_gen_opts *o, const st_compose_opts *co,
                       const st_step *s)
{
    cli_print_model_header(m, stdout);
    printf("  on                 %s (%s)\n", g->name, g->id);
    printf("  step               %s, batch %lld", st_phase_name(o->phase), o->batch);
    if (o->phase == ST_PHASE_DECODE)
        printf(", KV length %lld", o->kv_len);
    else if (m->kind == ST_MODEL_TRANSFORMER)
        printf(", sequence %lld", o->seq);
    printf(", %s, %s attention, %s%s\n\n", st_dtype_name(o->dtype), o->attn == ST_ATTN_FLASH ? "fused" : "eager",
           co->fused ? "fused (compiled) mode" : "eager mode", co->recompute ? ", full recompute" : "");
    printf("  %-22s %12s %7s %9s %12s %8s\n", "LAYER", "TIME ms", "SHARE", "KERNELS", "+-SD ms", "ERR%");
    for (size_t i = 0; i < s->n_layers; i++) {
        const st_layer_time *l = &s->layers[i];
        printf("  %-22s %12.4f %6.1f%% %9lld %12.4f %7.1f%%\n", l->layer, l->time_s * 1e3,
               100 * l->time_s / s->total_s, l->kernels, l->sd_s * 1e3, 100 * l->err_share);
    }
    printf("\n  total              %.4f ms  (90%% band %.4f .. %.4f ms, errors correlated: the default)\n",
           s->total_s * 1e3, s->lo_s * 1e3, s->hi_s * 1e3);
    printf("                     uncorrelated band %.4f .. %.4f ms\n", s->lo_unc_s * 1e3, s->hi_unc_s * 1e3);
    printf("  GPU busy           %.4f ms in %lld kernels; idle waiting on the host %.4f ms\n", s->kernel_s * 1e3,
           s->kernels, s->idle_s * 1e3);
    printf("  host dispatch      %.4f ms\n", s->host_s * 1e3);
    double peak = st_gpu_peak(g, o->dtype, 0);
    if (s->flops > 0)
        printf("  achieved           %.4g TFLOP/s%s", s->flops / s->total_s * 1e-12, peak > 0 ? "" : "\n");
    if (s->flops > 0 && peak > 0)
        printf(" (%.1f%% of the %s peak)\n", 100 * s->flops / s->total_s / peak, st_dtype_name(o->dtype));
}

static void json_step(const st_model *m, const st_gpu *g, const st_gen_opts *o, const st_compose_opts *co,
                      const st_step *s)
{
    st_json j;
    st_json_init(&j, stdout, 1);
    st_json_begin_object(&j, NULL);
    st_json_string(&j, "workload", m->id);
    st_json_string(&j, "gpu", g->id);
    st_json_string(&j, "phase", st_phase_name(o->phase));
    st_json_int(&j, "batch", o->batch);
    st_json_int(&j, "seq", o->seq);
    st_json_int(&j, "kv_len", o->kv_len);
    st_json_string(&j, "dtype", st_dtype_name(o->dtype));
    st_json_string(&j, "attention", o->attn == ST_ATTN_FLASH ? "flash" : "eager");
    st_json_bool(&j, "fused", co->fused);
    st_json_bool(&j, "recompute", co->recompute);
    st_json_number(&j, "total_s", s->total_s);
    st_json_number(&j, "lo_s", s->lo_s);
    st_json_number(&j, "hi_s", s->hi_s);
    st_json_string(&j, "band", "correlated");
    st_json_number(&j, "lo_uncorrelated_s", s->lo_unc_s);
    st_json_number(&j, "hi_uncorrelated_s", s->hi_unc_s);
    st_json_number(&j, "kernel_s", s->kernel_s);
    st_json_number(&j, "host_s", s->host_s);
    st_json_number(&j, "idle_s", s->idle_s);
    st_json_int(&j, "kernels", s->kernels);
    st_json_number(&j, "flops", s->flops);
    st_json_number(&j, "bytes", s->bytes);
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
    st_json_end_object(&j);
    st_json_finish(&j);
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"gpu", required_argument, NULL, 'g'},   {"phase", required_argument, NULL, 'p'},
        {"batch", required_argument, NULL, 'b'}, {"seq", required_argument, NULL, 's'},
        {"kv", required_argument, NULL, 'k'},    {"dtype", required_argument, NULL, 'd'},
        {"attn", required_argument, NULL, 'a'},  {"fused", no_argument, NULL, 'F'},
        {"recompute", no_argument, NULL, 'R'},   {"no-optimizer", no_argument, NULL, 'O'},
        {"coef", required_argument, NULL, 'c'},  {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    const char *gpu = "h100-sxm", *phase = NULL, *dtype = NULL, *attn = NULL, *coefp = NULL;
    long long batch = 0, seq = 0, kv = -1;
    int json = 0, fused = 0, recompute = 0, no_opt = 0, c;
    optind = 0;
    while ((c = cli_getopt(&cmd_eval, argc, argv, "g:p:b:s:k:d:a:FROc:jh", opts)) != -1) {
        switch (c) {
        case 'g': gpu = optarg; break;
        case 'p': phase = optarg; break;
        case 'b':
            if (cli_parse_ll(&cmd_eval, "--batch", optarg, 1, 1000000, &batch))
                return 2;
            break;
        case 's':
            if (cli_parse_ll(&cmd_eval, "--seq", optarg, 1, 100000000, &seq))
                return 2;
            break;
        case 'k':
            if (cli_parse_ll(&cmd_eval, "--kv", optarg, 0, 100000000, &kv))
                return 2;
            break;
        case 'd': dtype = optarg; break;
        case 'a': attn = optarg; break;
        case 'F': fused = 1; break;
        case 'R': recompute = 1; break;
        case 'O': no_opt = 1; break;
        case 'c': coefp = optarg; break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_eval, stdout); return 0;
        default: return 2;
        }
    }
    if (optind >= argc)
        return cli_usage_error(&cmd_eval, "which workload? (strata list --kind workload)");
    if (optind + 1 < argc)
        return cli_usage_error(&cmd_eval, "unexpected argument '%s'", argv[optind + 1]);
    st_error err;
    st_gen_opts o;
    if (attn && strcmp(attn, "eager") && strcmp(attn, "flash"))
        return cli_usage_error(&cmd_eval, "--attn: expected eager or flash, got '%s'", attn);
    st_dtype dt = ST_FP32;
    if (dtype && st_dtype_parse(dtype, &dt))
        return cli_usage_error(&cmd_eval, "--dtype: expected one of %s, got '%s'", st_dtype_choices(), dtype);
    st_phase ph = ST_PHASE_PREFILL;
    if (phase && st_phase_parse(phase, &ph))
        return cli_usage_error(&cmd_eval, "--phase: expected prefill, decode or train, got '%s'", phase);
    st_gpu g;
    if (st_load_gpu(gpu, &g, &err))
        return cli_fail(&err);
    st_gpu_coef coef;
    if (st_gpu_coef_load(coefp, &coef, &err))
        return cli_fail(&err);
    st_model m;
    if (st_load_model(argv[optind], &m, &err))
        return cli_fail(&err);
    st_gen_opts_default(&o, &m);
    o.phase = ph;
    if (dtype)
        o.dtype = dt;
    if (batch)
        o.batch = batch;
    if (seq)
        o.seq = seq;
    if (kv >= 0)
        o.kv_len = kv;
    else if (o.phase == ST_PHASE_DECODE)
        o.kv_len = o.seq - 1;
    if (attn)
        o.attn = strcmp(attn, "flash") == 0 ? ST_ATTN_FLASH : ST_ATTN_EAGER;
    o.with_optimizer = !no_opt;
    int rc = 0;
    if (!st_gpu_supports(&g, o.dtype)) {
        st_error_set(&err, ST_EINVAL, "%s has no %s throughput; pass --dtype (e.g. %s)", g.id,
                     st_dtype_name(o.dtype), st_gpu_supports(&g, ST_FP16) ? "fp16" : "fp32");
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
    st_step *s = malloc(sizeof *s);
    if (!s || st_compose(&g, &coef, &ops, &co, s, &err)) {
        if (!s)
            st_error_set(&err, ST_ENOMEM, "out of memory");
        free(s);
        st_oplist_free(&ops);
        st_model_free(&m);
        return cli_fail(&err);
    }
    if (json)
        json_step(&m, &g, &o, &co, s);
    else
        print_step(&m, &g, &o, &co, s);
    free(s);
    st_oplist_free(&ops);
    st_model_free(&m);
    return 0;
}

const cli_command cmd_eval = {
    "eval",
    "eval WORKLOAD [--gpu PRESET] [--phase prefill|decode|train] [--batch B] [--seq S] [--kv L]\n"
    "                   [--dtype D] [--attn eager|flash] [--fused] [--recompute] [--no-optimizer] [--json]",
    "Estimate one step of a workload on one GPU: per-layer time, error share, total with 90% band.",
    "  WORKLOAD         a workload id, name or path (YAML or Hugging Face config.json)\n"
    "  --gpu PRESET     default h100-sxm\n"
    "  --phase P        prefill (default), decode (one token per sequence against --kv), train\n"
    "  --batch B        sequences; --seq S tokens per sequence; --kv L cached tokens (decode)\n"
    "  --dtype D        compute dtype (default: the workload's)\n"
    "  --attn A         eager (default: score matrix materialised) or flash (fused kernel)\n"
    "  --fused          compiled mode: launch-only dispatch, elementwise ops fused into epilogues\n"
    "  --recompute      train: replay each block's forward before its backward\n"
    "  --no-optimizer   train: forward + backward only\n"
    "  --coef FILE      coefficient table (default calibration/gpu-kernels.yaml)\n"
    "  --json           machine-readable; total_s, lo_s, hi_s (correlated band), layers[]\n",
    run,
};
