/* strata show: one preset's spec sheet, or a workload's operator list. */
#include "config.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void json_op(st_json *j, const st_op *op)
{
    double rep = (double)op->repeat;
    st_json_begin_object(j, NULL);
    st_json_string(j, "name", op->name);
    st_json_string(j, "layer", op->layer);
    st_json_string(j, "kind", st_op_kind_name(op->kind));
    st_json_string(j, "pass", st_pass_name(op->pass));
    st_json_string(j, "dtype", st_dtype_name(op->dtype));
    st_json_int(j, "repeat", op->repeat);
    st_json_begin_object(j, "shape");
    switch (op->kind) {
    case ST_OP_GEMM:
    case ST_OP_BMM:
    case ST_OP_MOE_EXPERTS:
        st_json_int(j, "batch", op->batch);
        st_json_int(j, "m", op->m);
        st_json_int(j, "n", op->n);
        st_json_int(j, "k", op->k);
        break;
    case ST_OP_CONV:
    case ST_OP_POOL:
        st_json_int(j, "n", op->batch);
        st_json_int(j, "c", op->c);
        if (op->kind == ST_OP_CONV)
            st_json_int(j, "k", op->k_out);
        st_json_int(j, "h", op->h);
        st_json_int(j, "w", op->w);
        st_json_int(j, "r", op->r);
        st_json_int(j, "s", op->s);
        st_json_int(j, "stride", op->stride);
        st_json_int(j, "pad", op->pad);
        if (op->kind == ST_OP_CONV)
            st_json_int(j, "groups", op->groups);
        st_json_int(j, "p", op->p);
        st_json_int(j, "q", op->q);
        break;
    case ST_OP_ATTENTION:
        st_json_int(j, "batch", op->batch);
        st_json_int(j, "heads", op->heads);
        st_json_int(j, "kv_heads", op->kv_heads);
        st_json_int(j, "q_len", op->q_len);
        st_json_int(j, "kv_len", op->kv_len);
        st_json_int(j, "head_dim", op->head_dim);
        st_json_bool(j, "causal", op->causal);
        break;
    default:
        st_json_int(j, "rows", op->rows);
        st_json_int(j, "cols", op->cols);
        break;
    }
    st_json_end_object(j);
    if (op->grad != ST_GRAD_NONE)
        st_json_string(j, "grad", op->grad == ST_GRAD_DATA ? "data" : "weight");
    st_json_number(j, "flops", op->flops * rep);
    st_json_number(j, "bytes", (op->bytes_read + op->bytes_written) * rep);
    st_json_number(j, "bytes_read", op->bytes_read * rep);
    st_json_number(j, "bytes_written", op->bytes_written * rep);
    st_json_number(j, "flops_per_call", op->flops);
    st_json_number(j, "bytes_per_call", op->bytes_read + op->bytes_written);
    st_json_end_object(j);
}

static void print_ops(const st_model *m, const st_gen_opts *o, const st_oplist *l)
{
    char f[32], b[32], tf[32], tb[32];
    double total_f = st_oplist_total_flops(l), total_b = st_oplist_total_bytes(l);
    cli_print_model_header(m, stdout);
    printf("  step               %s, batch %lld", st_phase_name(o->phase), o->batch);
    if (o->phase == ST_PHASE_DECODE)
        printf(", KV length %lld", o->kv_len);
    else if (m->kind == ST_MODEL_TRANSFORMER)
        printf(", sequence %lld", o->seq);
    printf(", %s", st_dtype_name(o->dtype));
    if (m->kind == ST_MODEL_TRANSFORMER)
        printf(", %s attention", cli_attn_words(o->attn));
    cli_print_train_opts(o, stdout);
    printf("\n\n");
    printf("  %-34s %-11s %-4s %6s %12s %12s %8s\n", "OPERATOR", "KIND", "PASS", "x", "FLOP",
           "BYTES", "FLOP/B");
    for (size_t i = 0; i < l->n; i++) {
        const st_op *op = &l->ops[i];
        double rep = (double)op->repeat, by = op->bytes_read + op->bytes_written;
        cli_si(f, sizeof f, op->flops * rep, "");
        cli_si(b, sizeof b, by * rep, "");
        printf("  %-34s %-11s %-4s %6lld %12s %12s %8.3g\n", op->name, st_op_kind_name(op->kind),
               st_pass_name(op->pass), op->repeat, f, b, by > 0 ? op->flops / by : 0);
    }
    cli_si(tf, sizeof tf, total_f, "FLOP");
    cli_si(tb, sizeof tb, total_b, "B");
    printf("\n  total              %s, %s moved (compulsory), %zu operators\n", tf, tb, l->n);
}

static void json_model(const st_model *m, const st_gen_opts *o, const st_oplist *l)
{
    st_json j;
    st_json_init(&j, stdout, 1);
    st_json_begin_object(&j, NULL);
    st_json_string(&j, "id", m->id);
    st_json_string(&j, "kind", m->kind == ST_MODEL_TRANSFORMER ? "transformer" : "cnn");
    st_json_string(&j, "name", m->name);
    st_json_number(&j, "params", st_model_params(m));
    st_json_number(&j, "params_non_embedding", st_model_params_non_embedding(m));
    cli_json_step(&j, m, o);
    cli_json_train_opts(&j, o);
    st_json_begin_array(&j, "ops");
    for (size_t i = 0; i < l->n; i++)
        json_op(&j, &l->ops[i]);
    st_json_end_array(&j);
    st_json_int(&j, "n_ops", (long long)l->n);
    st_json_number(&j, "total_flops", st_oplist_total_flops(l));
    st_json_number(&j, "total_bytes", st_oplist_total_bytes(l));
    st_json_end_object(&j);
    st_json_finish(&j);
}

static int run(int argc, char **argv)
{
    int rc_arg;
    static const struct option opts[] = {
        CLI_WL_LONGOPTS,
        {"logits", required_argument, NULL, 'l'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    const char *logits = NULL;
    cli_wl wl;
    int json = 0, c, rc, model_opts = 0;
    st_error err;
    st_loaded *l;
    optind = 0;
    cli_wl_init(&wl);
    while ((c = cli_getopt(&cmd_show, argc, argv, CLI_WL_SHORTOPTS "l:jh", opts)) != -1) {
        model_opts += c != 'j' && c != 'h';
        int t = cli_wl_option(&cmd_show, c, optarg, &wl);
        if (t < 0)
            return 2;
        if (t)
            continue;
        switch (c) {
        case 'l': logits = optarg; break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_show, stdout); return 0;
        default: return 2;
        }
    }
    if ((rc_arg = cli_one_operand(&cmd_show, argc, argv, "which preset or workload? (strata list shows them)")))
        return rc_arg;
    l = malloc(sizeof *l);
    if (!l) {
        fprintf(stderr, "strata: out of memory\n");
        return 1;
    }
    rc = st_load(argv[optind], l, &err);
    if (rc) {
        free(l);
        return cli_fail(&err);
    }
    if (l->kind != ST_FILE_MODEL) {
        if (model_opts) {
            const char *kind = st_file_kind_name(l->kind);
            free(l);
            return cli_usage_error(&cmd_show, "--phase, --batch, --seq, --kv, --dtype, --attn, "
                                              "--logits, --no-optimizer, --optimizer and "
                                              "--accumulate-grads apply to workloads, and %s is a %s preset",
                                   argv[optind], kind);
        }
        if (json) {
            st_json j;
            st_json_init(&j, stdout, 1);
            cli_json_loaded(&j, l);
            st_json_finish(&j);
        } else {
            cli_print_loaded(l, stdout);
        }
        free(l);
        return 0;
    }

    st_model *m = &l->model;
    st_gen_opts o;
    st_oplist ops = {0, 0, NULL};
    rc = cli_wl_check(&cmd_show, &wl);
    if (rc == 0 && logits && strcmp(logits, "all") && strcmp(logits, "last"))
        rc = cli_usage_error(&cmd_show, "--logits: expected all or last, got '%s'", logits);
    if (rc == 0) {
        cli_wl_apply(&wl, m, &o);
        if (logits)
            o.logits_all = strcmp(logits, "all") == 0;
        rc = cli_wl_applies(&cmd_show, &wl, m, &o);
        if (rc == 0 && logits && m->kind != ST_MODEL_TRANSFORMER)
            rc = cli_usage_error(&cmd_show, "--logits applies to transformer workloads (their LM head); %s is a "
                                            "CNN", m->id);
        if (rc) {
            /* the usage error is printed */
        } else if ((rc = st_model_ops(m, &o, &ops, &err)) != 0) {
            rc = cli_fail(&err);
        } else {
            if (json)
                json_model(m, &o, &ops);
            else
                print_ops(m, &o, &ops);
            st_oplist_free(&ops);
        }
    }
    st_loaded_free(l);
    free(l);
    return rc;
}

const cli_command cmd_show = {
    "show",
    "show NAME|FILE [--phase prefill|decode|train] [--batch B] [--seq S] [--kv K]\n"
    "                   [--dtype D] [--attn eager|flash|flash3] [--logits all|last] [--no-optimizer]\n"
    "                   [--optimizer fused|foreach] [--accumulate-grads] [--json]",
    "Show a preset's specification, or a workload with its generated operator list.",
    "  NAME|FILE        a preset or workload id (strata list), its full name, or a path to a\n"
    "                   YAML file or a Hugging Face config.json\n"
    "  --phase P        prefill (default), decode (one new token per sequence) or train\n"
    "                   (forward, backward and an AdamW step)\n"
    "  --batch B        sequences (images for a CNN); default 1\n"
    "  --seq S          tokens per sequence; default 2048 or the model's max_seq if smaller\n"
    "  --kv K           decode: tokens already in the KV cache; default seq - 1\n"
    "  --dtype D        compute dtype: fp32, tf32, fp16, bf16, fp8, int8, int4; default the\n"
    "                   model's\n"
    "  --attn A         eager (default: full-square score matrices, as a Hugging Face forward)\n"
    "                   or flash (fused; causal prefill counts only the unmasked half); flash3 is\n"
    "                   flash's operators run by FlashAttention-3 (eval, Hopper only)\n"
    "  --logits L       LM head on all positions (default) or only the last of each sequence\n"
    "  --no-optimizer   train: leave out the optimizer step\n"
    "  --optimizer O    train: fused (default; one AdamW op) or foreach (torch.optim.AdamW's\n"
    "                   default: eight elementwise passes)\n"
    "  --accumulate-grads  train: an add of each parameter's gradient into .grad\n"
    "  --json           machine-readable output; a workload gives ops[] (name, layer, kind,\n"
    "                   pass, dtype, repeat, shape, flops, bytes, ...), total_flops, total_bytes\n",
    run,
    NULL,
};
