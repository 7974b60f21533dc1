/*
 * strata summary (and strata with no arguments): the evaluation set-up of a
 * GPU and a workload at a glance: spec sheet, model shape, weight memory,
 * and the work of a prefill and a decode step against the GPU's ridge point.
 */
#include "config.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_GPU "h100-sxm"
#define DEFAULT_MODEL "llama2-7b"

typedef struct step {
    st_gen_opts o;
    double flops, bytes;
} step;

static int measure(const st_model *m, st_phase phase, st_dtype dtype, step *s, st_error *err)
{
    st_oplist ops = {0, 0, NULL};
    int rc;
    st_gen_opts_default(&s->o, m);
    s->o.phase = phase;
    s->o.dtype = dtype;
    if (phase == ST_PHASE_DECODE)
        s->o.kv_len = s->o.seq - 1;
    rc = st_model_ops(m, &s->o, &ops, err);
    if (rc)
        return rc;
    s->flops = st_oplist_total_flops(&ops);
    s->bytes = st_oplist_total_bytes(&ops);
    st_oplist_free(&ops);
    return 0;
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"gpu", required_argument, NULL, 'g'},
        {"model", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *gpu_name = DEFAULT_GPU, *model_name = DEFAULT_MODEL;
    int json = 0, c, rc;
    st_error err;
    st_gpu gpu;
    st_model model;
    step steps[2];
    optind = 0;
    while (argc > 1 && (c = cli_getopt(&cmd_summary, argc, argv, "g:m:jh", opts)) != -1) {
        switch (c) {
        case 'g': gpu_name = optarg; break;
        case 'm': model_name = optarg; break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_summary, stdout); return 0;
        default: return 2;
        }
    }
    if (argc > 1 && optind < argc)
        return cli_usage_error(&cmd_summary, "unexpected argument '%s'", argv[optind]);
    if ((rc = st_load_gpu(gpu_name, &gpu, &err)))
        return cli_fail(&err);
    if ((rc = st_load_model(model_name, &model, &err)))
        return cli_fail(&err);
    /* The GPU runs the model in its own dtype when it accelerates it; else
     * in fp16 when it has that, else in fp32 (what a framework falls back to). */
    st_dtype dtype = model.dtype;
    if (st_gpu_peak(&gpu, dtype, 0) <= 0)
        dtype = st_gpu_peak(&gpu, ST_FP16, 0) > 0 ? ST_FP16 : ST_FP32;
    int n_steps = (model.kind == ST_MODEL_TRANSFORMER && model.tf.causal) ? 2 : 1;
    if ((rc = measure(&model, ST_PHASE_PREFILL, dtype, &steps[0], &err)) ||
        (n_steps == 2 && (rc = measure(&model, ST_PHASE_DECODE, dtype, &steps[1], &err)))) {
        st_model_free(&model);
        return cli_fail(&err);
    }
    double weights = st_model_params(&model) * st_dtype_bytes(dtype);
    double ridge = st_gpu_ridge(&gpu, dtype);

    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        cli_json_gpu(&j, "gpu", &gpu);
        st_json_begin_object(&j, "workload");
        st_json_string(&j, "id", model.id);
        st_json_string(&j, "name", model.name);
        st_json_number(&j, "params", st_model_params(&model));
        st_json_string(&j, "dtype", st_dtype_name(model.dtype));
        st_json_string(&j, "compute_dtype", st_dtype_name(dtype));
        st_json_number(&j, "weight_bytes", weights);
        st_json_bool(&j, "weights_fit", weights < gpu.mem_bytes);
        st_json_end_object(&j);
        st_json_number(&j, "ridge_flop_per_byte", ridge);
        st_json_begin_array(&j, "steps");
        for (int i = 0; i < n_steps; i++) {
            st_json_begin_object(&j, NULL);
            st_json_string(&j, "phase", st_phase_name(steps[i].o.phase));
            st_json_int(&j, "batch", steps[i].o.batch);
            if (model.kind == ST_MODEL_TRANSFORMER) {
                st_json_int(&j, "seq", steps[i].o.seq);
                st_json_int(&j, "kv_len", steps[i].o.kv_len);
            }
            st_json_number(&j, "flops", steps[i].flops);
            st_json_number(&j, "bytes", steps[i].bytes);
            st_json_number(&j, "flop_per_byte", steps[i].flops / steps[i].bytes);
            st_json_end_object(&j);
        }
        st_json_end_array(&j);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        char a[32], b[32];
        printf("strata %s — %s evaluation set-up\n\n", ST_VERSION,
               strcmp(gpu_name, DEFAULT_GPU) == 0 && strcmp(model_name, DEFAULT_MODEL) == 0
                   ? "default" : "the");
        cli_print_gpu(&gpu, stdout);
        putchar('\n');
        cli_print_model_header(&model, stdout);
        cli_bytes(a, sizeof a, weights);
        cli_bytes(b, sizeof b, gpu.mem_bytes);
        if (dtype != model.dtype)
            printf("  note               %s has no accelerated %s path: counted in %s\n", gpu.id,
                   st_dtype_name(model.dtype), st_dtype_name(dtype));
        printf("  weights            %s in %s: %s the %s of device memory\n", a,
               st_dtype_name(dtype), weights < gpu.mem_bytes ? "fit in" : "DO NOT fit in", b);
        printf("\nwork per step (compulsory traffic; ridge point of %s in %s: %.0f FLOP/B)\n",
               gpu.id, st_dtype_name(dtype), ridge);
        for (int i = 0; i < n_steps; i++) {
            const step *s = &steps[i];
            double ai = s->flops / s->bytes;
            cli_si(a, sizeof a, s->flops, "FLOP");
            cli_si(b, sizeof b, s->bytes, "B");
            char where[32] = "";
            if (model.kind == ST_MODEL_TRANSFORMER)
                snprintf(where, sizeof where, ", %s %lld",
                         s->o.phase == ST_PHASE_DECODE ? "KV " : "seq",
                         s->o.phase == ST_PHASE_DECODE ? s->o.kv_len : s->o.seq);
            printf("  %-8s batch %lld%-12s %12s %12s  %7.1f FLOP/B  %s-bound\n",
                   st_phase_name(s->o.phase), s->o.batch, where, a, b, ai,
                   ai >= ridge ? "compute" : "memory");
        }
        printf("\nNext: `strata show %s%s` for its operators, `strata list` for other "
               "presets\nand workloads, `strata help` for the commands.\n",
               model.id, n_steps == 2 ? " --phase decode" : "");
    }
    st_model_free(&model);
    return 0;
}

const cli_command cmd_summary = {
    "summary",
    "summary [--gpu NAME|FILE] [--model NAME|FILE] [--json]",
    "Summarise a GPU + workload set-up (the default when strata runs with no command).",
    "  --gpu NAME       GPU preset (default " DEFAULT_GPU ")\n"
    "  --model NAME     workload (default " DEFAULT_MODEL ")\n"
    "  --json           machine-readable output\n",
    run,
    NULL,
};
