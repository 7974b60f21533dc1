/* strata train: one training iteration under a parallel configuration;
 * strata plan: search the configurations. */
#include "config.h"
#include "cli/cli.h"
#include "train/train.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Options shared by train and plan. */
typedef struct topts {
    const char *cluster, *dtype, *coef, *trace, *sched, *recompute;
    long long gpus, dp, tp, pp, cp, ep, mbs, zero, gb, seq, lora, chunks, threads, max_tp, max_pp;
    double imbalance;
    int sp, flash, fa3, fused, json, top, torch_ver, isolated, quiet;
} topts;

/* Options that only one of the two commands reads: train evaluates the one
 * configuration it is given, plan searches the split, microbatches, ZeRO and
 * recompute itself (1F1B, unfused, balanced experts). Given to the other
 * command they are refused as soon as they are seen, before their value is
 * read, each with what to do instead. */
static const struct {
    int code;
    const char *name;
    int plan; /* 1: plan only, 0: train only */
    const char *instead;
} scoped[] = {
    {'D', "--dp", 0, "plan searches DP x TP x PP x CP itself"},
    {'T', "--tp", 0, "plan searches TP itself; bound it with --max-tp"},
    {'P', "--pp", 0, "plan searches PP itself; bound it with --max-pp"},
    {'C', "--cp", 0, "plan searches CP itself (CP > 1 with --flash or --fa3)"},
    {'E', "--ep", 0, "plan searches EP itself (MoE models)"},
    {'S', "--sp", 0, "plan tries SP with every TP >= 2"},
    {'M', "--microbatches", 0, "plan searches the microbatch size"},
    {'Z', "--zero", 0, "plan searches ZeRO 0-3"},
    {'R', "--recompute", 0, "plan searches none, selective and full"},
    {'t', "--trace", 0, "trace one configuration with `strata train`"},
    {'H', "--schedule", 0, "plan ranks 1F1B schedules only; compare schedules with `strata train`"},
    {'V', "--chunks", 0, "plan ranks 1F1B schedules only; try interleaving with `strata train`"},
    {'I', "--moe-imbalance", 0, "plan assumes balanced experts; try an imbalance with `strata train`"},
    {'U', "--fused", 0, "plan ranks unfused (eager) kernels; try --fused with `strata train`"},
    {'j', "--threads", 1, "train evaluates one configuration on one thread"},
    {'a', "--max-tp", 1, "give train its TP with --tp"},
    {'b', "--max-pp", 1, "give train its PP with --pp"},
    {'o', "--top", 1, "train prints its one configuration"},
    {'q', "--quiet", 1, "train prints no progress"},
};

/* 2 (after a usage error) when option code c belongs to the other command */
static int refuse_other(const cli_command *cmd, int c)
{
    int plan = cmd == &cmd_plan;
    for (size_t i = 0; i < sizeof scoped / sizeof scoped[0]; i++)
        if (scoped[i].code == c && scoped[i].plan != plan)
            return cli_usage_error(cmd, "%s is a%s option: %s", scoped[i].name, plan ? " train" : " plan",
                                   scoped[i].instead);
    return 0;
}

static int parse(const cli_command *cmd, int argc, char **argv, topts *t, int *help)
{
    static const struct option opts[] = {
        {"cluster", required_argument, NULL, 'c'},   {"gpus", required_argument, NULL, 'n'},
        {"dp", required_argument, NULL, 'D'},        {"tp", required_argument, NULL, 'T'},
        {"pp", required_argument, NULL, 'P'},        {"cp", required_argument, NULL, 'C'},
        {"ep", required_argument, NULL, 'E'},        {"sp", no_argument, NULL, 'S'},
        {"microbatches", required_argument, NULL, 'M'}, {"zero", required_argument, NULL, 'Z'},
        {"recompute", required_argument, NULL, 'R'}, {"global-batch", required_argument, NULL, 'B'},
        {"seq", required_argument, NULL, 's'},       {"dtype", required_argument, NULL, 'd'},
        {"lora", required_argument, NULL, 'L'},      {"trace", required_argument, NULL, 't'},
        {"schedule", required_argument, NULL, 'H'},  {"chunks", required_argument, NULL, 'V'},
        {"moe-imbalance", required_argument, NULL, 'I'}, {"flash", no_argument, NULL, 'F'},
        {"fa3", no_argument, NULL, '3'},
        {"fused", no_argument, NULL, 'U'},           {"coef", required_argument, NULL, 'x'},
        {"torch", required_argument, NULL, 'W'},    {"isolated", no_argument, NULL, 'i'},
        {"threads", required_argument, NULL, 'j'},   {"max-tp", required_argument, NULL, 'a'},
        {"max-pp", required_argument, NULL, 'b'},    {"top", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'J'},            {"help", no_argument, NULL, 'h'},
        {"quiet", no_argument, NULL, 'q'},           {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    while ((c = cli_getopt(cmd, argc, argv, "c:n:h", opts)) != -1) {
        long long *dst = NULL, lo = 1, hi = 1 << 24;
        const char *nm = NULL;
        if (refuse_other(cmd, c))
            return 2;
        switch (c) {
        case 'c': t->cluster = optarg; break;
        case 'n': dst = &t->gpus, nm = "--gpus"; break;
        case 'D': dst = &t->dp, nm = "--dp"; break;
        case 'T': dst = &t->tp, nm = "--tp"; break;
        case 'P': dst = &t->pp, nm = "--pp"; break;
        case 'C': dst = &t->cp, nm = "--cp"; break;
        case 'E': dst = &t->ep, nm = "--ep"; break;
        case 'S': t->sp = 1; break;
        case 'M': dst = &t->mbs, nm = "--microbatches", hi = ST_TRAIN_MAX_MICROBATCHES; break;
        case 'Z': dst = &t->zero, nm = "--zero", lo = 0, hi = 3; break;
        case 'R': t->recompute = optarg; break;
        case 'B': dst = &t->gb, nm = "--global-batch", hi = 1LL << 30; break;
        case 's': dst = &t->seq, nm = "--seq", hi = 1LL << 30; break;
        case 'd': t->dtype = optarg; break;
        case 'L': dst = &t->lora, nm = "--lora", hi = 65536; break;
        case 't': t->trace = optarg; break;
        case 'H': t->sched = optarg; break;
        case 'V': dst = &t->chunks, nm = "--chunks", hi = 1024; break;
        case 'I':
            if (cli_parse_num(cmd, "--moe-imbalance", optarg, 1, 64, &t->imbalance))
                return 2;
            break;
        case 'F': t->flash = 1; break;
        case '3': t->flash = t->fa3 = 1; break;
        case 'U': t->fused = 1; break;
        case 'i': t->isolated = 1; break;
        case 'W':
            if (cli_parse_torch(cmd, optarg, &t->torch_ver))
                return 2;
            break;
        case 'x': t->coef = optarg; break;
        case 'j': dst = &t->threads, nm = "--threads", hi = 256; break;
        case 'a': dst = &t->max_tp, nm = "--max-tp", hi = 4096; break;
        case 'b': dst = &t->max_pp, nm = "--max-pp", hi = 4096; break;
        case 'o': {
            long long v;
            if (cli_parse_ll(cmd, "--top", optarg, 1, 100000, &v))
                return 2;
            t->top = (int)v;
            break;
        }
        case 'J': t->json = 1; break;
        case 'q': t->quiet = 1; break;
        case 'h': *help = 1; return 0;
        default: return 2;
        }
        if (dst && cli_parse_ll(cmd, nm, optarg, lo, hi, dst))
            return 2;
    }
    return cli_one_operand(cmd, argc, argv, "which model? e.g. gpt2-large (strata list --kind workload)");
}

typedef struct setup {
    st_model m;
    st_cluster cl;
    st_gpu_coef coef;
    st_dtype dtype;
} setup;

/* Options, help, then the files: shared by train and plan. Returns -1 when
 * the command should go on, else the exit status. */
static int start(const cli_command *cmd, int argc, char **argv, topts *t, setup *s)
{
    int help = 0, rc;
    st_error err;
    t->cluster = "ib-a100";
    if ((rc = parse(cmd, argc, argv, t, &help)) || help) {
        if (help)
            cli_print_help(cmd, stdout);
        return help ? 0 : rc;
    }
    const char *model = argv[optind];
    if ((rc = cli_out_guard(cmd, "--trace", t->trace, "MODEL", model)) ||
        (rc = cli_out_guard(cmd, "--trace", t->trace, "--cluster", t->cluster)) ||
        (rc = cli_out_guard(cmd, "--trace", t->trace, "--coef", t->coef)))
        return rc;
    if (st_load_cluster_or_node(t->cluster, &s->cl, &err))
        return cli_fail(&err);
    if ((rc = cli_out_guard_cluster(cmd, "--trace", t->trace, t->cluster, &s->cl)))
        return rc;
    if (st_gpu_coef_load(t->coef, &s->coef, &err))
        return cli_fail(&err);
    if (st_load_model(model, &s->m, &err))
        return cli_fail(&err);
    s->dtype = s->m.dtype;
    if (t->dtype && st_dtype_parse(t->dtype, &s->dtype)) {
        st_model_free(&s->m);
        return cli_usage_error(cmd, "--dtype: expected one of %s, got '%s'", st_dtype_choices(), t->dtype);
    }
    /* a type training does not run in is the user's to change, whatever
     * the split: a usage error up front, not 'no valid configuration' */
    if (t->dtype && s->dtype != ST_FP32 && s->dtype != ST_TF32 && s->dtype != ST_FP16 && s->dtype != ST_BF16 &&
        s->dtype != ST_FP8) {
        st_model_free(&s->m);
        return cli_usage_error(cmd, "--dtype %s: training runs in fp32, tf32, fp16, bf16 or fp8 (int8 and int4 "
                                    "are inference types; see strata serve --quant)", t->dtype);
    }
    if (!t->dtype && s->dtype != ST_FP32 && s->dtype != ST_TF32 && s->dtype != ST_FP16 && s->dtype != ST_BF16 &&
        s->dtype != ST_FP8) {
        const char *dn = st_dtype_name(s->dtype);
        st_model_free(&s->m);
        return cli_usage_error(cmd, "%s: the workload's dtype is %s, an inference type; train it with --dtype "
                                    "bf16 (or fp16, fp32, tf32, fp8)", model, dn);
    }
    return -1;
}

static void json_result(st_json *j, const st_train_cfg *k, const st_train_result *r)
{
    st_json_number(j, "iteration_s", r->iteration_s);
    st_json_bool(j, "sustained", r->sustained);
    st_json_number(j, "lo_s", r->lo_s);
    st_json_number(j, "hi_s", r->hi_s);
    st_json_number(j, "mfu", r->mfu);
    st_json_number(j, "tflops_per_gpu", r->tflops_per_gpu);
    st_json_number(j, "hw_tflops_per_gpu", r->hw_tflops_per_gpu);
    st_json_number(j, "tokens_per_s", r->tokens_per_s);
    st_json_number(j, "memory_per_gpu_bytes", r->memory_per_gpu_bytes);
    st_json_number(j, "bubble_fraction", r->bubble_fraction);
    st_json_number(j, "comm_s", r->comm_s);
    st_json_bool(j, "oom", r->mem.oom);
    st_json_begin_object(j, "config");
    st_json_int(j, "gpus", r->gpus);
    st_json_int(j, "dp", k->dp);
    st_json_int(j, "tp", k->tp);
    st_json_int(j, "pp", k->pp);
    st_json_int(j, "cp", k->cp);
    st_json_int(j, "ep", k->ep);
    st_json_bool(j, "sp", k->sp);
    st_json_int(j, "zero", k->zero);
    st_json_string(j, "recompute", st_recompute_name(k->recompute));
    st_json_string(j, "schedule", st_pp_sched_name(k->sched));
    st_json_int(j, "chunks", k->sched == ST_PP_INTERLEAVED ? k->chunks : 1); /* model chunks per device */
    st_json_int(j, "microbatches", k->microbatches);
    st_json_int(j, "micro_batch", r->micro_batch);
    st_json_int(j, "global_batch", k->global_batch);
    st_json_int(j, "seq", k->seq);
    st_json_string(j, "dtype", st_dtype_name(k->dtype));
    st_json_string(j, "attention", k->fa3 ? "flash3" : k->flash ? "flash" : "eager");
    st_json_int(j, "lora_rank", k->lora_rank);
    st_json_int(j, "stage_layers_min", r->stage_layers_min);
    st_json_int(j, "stage_layers_max", r->stage_layers_max);
    st_json_end_object(j);
    st_json_begin_object(j, "breakdown");
    st_json_number(j, "forward_microbatch_s", r->fwd_s);
    st_json_number(j, "backward_microbatch_s", r->bwd_s);
    st_json_number(j, "pipeline_s", r->pipeline_s);
    st_json_number(j, "tp_comm_s", r->tp_s);
    st_json_number(j, "cp_comm_s", r->cp_s);
    st_json_number(j, "cp_comm_total_s", r->cp_all_s); /* the whole K/V ring, hidden or not */
    st_json_number(j, "ep_comm_s", r->ep_s);
    st_json_number(j, "pp_comm_s", r->pp_s);
    st_json_number(j, "dp_comm_s", r->dp_s);
    st_json_number(j, "dp_exposed_s", r->dp_exposed_s);
    /* the share of the gradient reduction the backward hides (null: no DP) */
    if (r->dp_s > 0)
        st_json_number(j, "dp_overlap_fraction", 1 - r->dp_exposed_s / r->dp_s);
    else
        st_json_null(j, "dp_overlap_fraction");
    st_json_number(j, "dp_contention", r->dp_contention);
    st_json_number(j, "zero_gather_s", r->zero_s);
    st_json_number(j, "optimizer_s", r->optimizer_s);
    st_json_number(j, "comm_total_s", r->comm_total_s);
    st_json_number(j, "model_flops", r->model_flops);
    st_json_number(j, "hw_flops", r->hw_flops);
    st_json_end_object(j);
    st_json_begin_object(j, "memory");
    st_json_number(j, "weights", r->mem.weights);
    st_json_number(j, "grads", r->mem.grads);
    st_json_number(j, "optimizer", r->mem.optimizer);
    st_json_number(j, "activations", r->mem.activations);
    st_json_number(j, "logits", r->mem.logits);
    st_json_number(j, "buffers", r->mem.buffers);
    st_json_number(j, "capacity", r->mem.capacity);
    st_json_number(j, "microbatches_in_flight", r->mem.inflight);
    st_json_end_object(j);
}

/* A split that does not fit the default one node (no --gpus): say that it is
 * the default, and name a --gpus that would work on the cluster (the
 * smallest multiple of the split from one node up whose pipeline stages do
 * not straddle nodes, or the split itself when exact), or that none would
 * (TP x CP must divide a node, and the stages fit the nodes) */
static int default_node_error(const st_cluster *cl, long long node_gpus, const char *what, long long split, int tp,
                              int cp, int pp, int exact)
{
    long long total = (long long)cl->node.gpus * cl->nodes;
    int G = cl->node.gpus;
    int fits_node = tp <= G && G % tp == 0 && ((long long)tp * cp > G || G % (tp * cp) == 0);
    long long want = -1;
    if (fits_node) {
        if (exact) {
            if (split <= total && !st_train_stages_straddle(split / pp, pp, G))
                want = split;
        } else {
            /* the smallest multiple from one node up; on a cluster too small
             * for any, the largest below a node (--pp 3 on one 8-GPU node:
             * 6, stages of 2) */
            for (long long m = split; m <= total && want < node_gpus; m += split)
                if (!st_train_stages_straddle(m / pp, pp, G))
                    want = m; /* each valid one replaces the last until one reaches a node */
        }
    }
    if (want > 0)
        return cli_usage_error(&cmd_train, "%s = %lld does not fit the %lld GPUs of one %s node (the default without "
                               "--gpus): pass --gpus %lld", what, split, node_gpus, cl->id, want);
    return cli_usage_error(&cmd_train, "%s = %lld does not fit the %lld GPUs of one %s node (the default without "
                           "--gpus), and no --gpus would: the cluster has %lld GPUs, %d a node; TP x CP must "
                           "divide a node, and a pipeline stage (TP x CP x DP GPUs) must be a divisor or a "
                           "multiple of a node; use a larger --cluster or another split", what, split, node_gpus,
                           cl->id, total, G);
}

static int run_train(int argc, char **argv)
{
    topts t = {0};
    setup s;
    int rc = start(&cmd_train, argc, argv, &t, &s);
    if (rc >= 0)
        return rc;
    st_train_cfg k;
    long long gpus = t.gpus ? t.gpus : (long long)s.cl.node.gpus;
    st_train_cfg_default(&k, &s.m, (int)gpus);
    k.tp = t.tp ? (int)t.tp : 1;
    k.pp = t.pp ? (int)t.pp : 1;
    k.cp = t.cp ? (int)t.cp : 1;
    k.ep = t.ep ? (int)t.ep : 1;
    /* each degree is at most 2^24: the products are formed in double
     * first, and past the GPUs there are they are refused before they could
     * overflow */
    long long total = (long long)s.cl.node.gpus * s.cl.nodes, lim = t.gpus ? gpus : total;
    double dsplit = (double)k.tp * k.pp * k.cp, dall = dsplit * (t.dp ? (double)t.dp : 1);
    if (dall > (double)lim) {
        st_model_free(&s.m);
        if (t.gpus)
            return cli_usage_error(&cmd_train, "%s = %.0f is more than --gpus %lld", t.dp ? "dp x tp x pp x cp" :
                                   "tp x pp x cp", dall, gpus);
        return cli_usage_error(&cmd_train, "%s = %.0f is more than the %lld GPUs of cluster %s; use smaller "
                               "degrees or a larger --cluster", t.dp ? "dp x tp x pp x cp" : "tp x pp x cp", dall,
                               total, s.cl.id);
    }
    long long tpc = (long long)k.tp * k.pp * k.cp;
    if (gpus % tpc) {
        st_model_free(&s.m);
        if (!t.gpus)
            return default_node_error(&s.cl, gpus, "tp x pp x cp", tpc, k.tp, k.cp, k.pp, 0);
        return cli_usage_error(&cmd_train, "--gpus %lld is not a multiple of tp x pp x cp = %lld", gpus, tpc);
    }
    k.dp = t.dp ? (int)t.dp : (int)(gpus / tpc);
    if ((long long)k.dp * tpc != gpus) {
        st_model_free(&s.m);
        if (!t.gpus)
            return default_node_error(&s.cl, gpus, "dp x tp x pp x cp", (long long)k.dp * tpc, k.tp, k.cp, k.pp, 1);
        return cli_usage_error(&cmd_train, "dp x tp x pp x cp = %lld, but --gpus is %lld", (long long)k.dp * tpc, gpus);
    }
    k.sp = t.sp;
    k.zero = (int)t.zero;
    st_train_default_batches(&k, t.mbs, t.gb);
    if (t.seq)
        k.seq = t.seq;
    k.dtype = s.dtype;
    k.lora_rank = (int)t.lora;
    k.chunks = t.chunks ? (int)t.chunks : 2;
    k.flash = t.flash;
    k.fa3 = t.fa3;
    k.fused = t.fused;
    k.torch_ver = t.torch_ver;
    k.isolated = t.isolated;
    if (t.imbalance > 0 && !s.m.tf.experts) {
        /* the option does not fit the workload (exit 1, as --ep on a dense model) */
        st_error e;
        st_error_set(&e, ST_EINVAL, "--moe-imbalance: %s is dense (no experts to imbalance)", s.m.id);
        st_model_free(&s.m);
        return cli_fail(&e);
    }
    if (t.imbalance >= 1)
        k.moe_imbalance = t.imbalance;
    if (t.sched && st_pp_sched_parse(t.sched, &k.sched)) {
        st_model_free(&s.m);
        return cli_usage_error(&cmd_train, "--schedule: expected 1f1b, gpipe or interleaved, got '%s'", t.sched);
    }
    if (t.chunks && k.sched != ST_PP_INTERLEAVED) {
        st_model_free(&s.m);
        return cli_usage_error(&cmd_train, "--chunks sets the model chunks per device of the interleaved schedule, "
                                           "but the schedule is %s: use --schedule interleaved",
                               st_pp_sched_name(k.sched));
    }
    if (k.sched != ST_PP_INTERLEAVED)
        k.chunks = 1;
    if (t.recompute && st_recompute_parse(t.recompute, &k.recompute)) {
        st_model_free(&s.m);
        return cli_usage_error(&cmd_train, "--recompute: expected none, selective or full, got '%s'", t.recompute);
    }
    st_error err;
    /* options that contradict each other whatever the model and cluster
     * (SP without TP, CP without fused attention, ...) are usage errors */
    if (st_train_check_options(&k, &err)) {
        st_model_free(&s.m);
        return cli_usage_error(&cmd_train, "%s", err.msg);
    }
    st_train_result r;
    cli_out tr = {0};
    if (t.trace && cli_out_open(&tr, t.trace, &err)) {
        st_model_free(&s.m);
        return cli_fail(&err);
    }
    rc = st_train_eval(&s.m, &s.cl, &s.coef, &k, &r, tr.f, &err);
    if (cli_out_close(&tr, rc == 0, rc ? NULL : &err) && rc == 0)
        rc = ST_EIO;
    if (rc) {
        st_model_free(&s.m);
        return cli_fail(&err);
    }
    if (t.json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "model", s.m.id);
        st_json_string(&j, "cluster", s.cl.id);
        st_json_string(&j, "gpu", s.cl.node.gpu.id);
        json_result(&j, &k, &r);
        if (t.trace)
            cli_json_trace(&j, "trace", t.trace, "tasks", r.trace_tasks, r.trace_tasks_total);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        char a[32], b[32], c2[32], m1[32], m2[32];
        /* --flash is PyTorch's fused SDPA: FlashAttention-2 needs Ampere or
         * later, 16-bit inputs and head dims up to 256; otherwise its
         * memory-efficient kernel runs (priced alike) */
        int mem_eff = k.flash && !k.fa3 &&
                      (!st_gpu_fa2(&s.cl.node.gpu) || k.dtype == ST_FP32 || s.m.tf.head_dim > 256);
        printf("%s on %d x %s (%s), %s, %s attention\n", s.m.name, r.gpus, s.cl.node.gpu.name, s.cl.id,
               st_dtype_name(k.dtype),
               k.fa3 ? "FlashAttention-3" : mem_eff ? "memory-efficient (SDPA)" : k.flash ? "FlashAttention-2" : "eager");
        char split[64] = "";
        if (r.stage_layers_min != r.stage_layers_max)
            snprintf(split, sizeof split, ", %lld-%lld layers per %s, fewer at the ends", r.stage_layers_min,
                     r.stage_layers_max, k.sched == ST_PP_INTERLEAVED ? "model chunk" : "stage");
        printf("  DP %d  TP %d%s  PP %d (%s, %lld microbatch%s of %lld%s)  CP %d  EP %d  ZeRO %d  recompute %s%s\n",
               k.dp, k.tp, k.sp ? "+SP" : "", k.pp, st_pp_sched_name(k.sched), k.microbatches,
               k.microbatches == 1 ? "" : "es", r.micro_batch, split,
               k.cp, k.ep, k.zero, st_recompute_name(k.recompute), k.lora_rank ? " LoRA" : "");
        cli_secs(a, sizeof a, r.iteration_s);
        cli_secs(b, sizeof b, r.lo_s);
        cli_secs(c2, sizeof c2, r.hi_s);
        printf("\n  iteration    %s  (90%% band %s .. %s)\n", a, b, c2);
        const st_gpu *gg = &s.cl.node.gpu;
        if (gg->tc_sustained_w_per_tflops > 0 && gg->tdp_w > 0)
            printf("  clock        %s\n", r.sustained ? "tensor cores at the sustained power limit (--isolated: at boost)"
                                                   : "tensor cores at boost, as kernels timed alone (--isolated)");
        printf("  throughput   %.0f tokens/s   MFU %.1f%%\n", r.tokens_per_s, 100 * r.mfu);
        printf("  TFLOP/s/GPU  %.1f model", r.tflops_per_gpu);
        if (r.hw_flops > r.model_flops) {
            int rec = k.recompute != ST_RECOMP_NONE, eager = !k.flash && !k.fa3;
            printf(", %.1f executed (%s%s%s counted)", r.hw_tflops_per_gpu, rec ? "recompute" : "",
                   rec && eager ? " and " : "", eager ? "eager attention's extra work" : "");
        }
        printf("\n");
        printf("  bubble       %.1f%% of the pipeline\n", 100 * r.bubble_fraction);
        cli_secs(a, sizeof a, r.comm_s);
        cli_secs(b, sizeof b, r.comm_total_s);
        printf("  comm         %s exposed of %s\n", a, b);
        cli_secs(a, sizeof a, r.fwd_s);
        cli_secs(b, sizeof b, r.bwd_s);
        printf("  microbatch   forward %s, backward %s (busiest stage, comm included)\n", a, b);
        cli_secs(a, sizeof a, r.tp_s);
        cli_secs(b, sizeof b, r.pp_s);
        cli_secs(c2, sizeof c2, r.dp_exposed_s);
        printf("  parts        TP %s, PP %s", a, b);
        /* every exposed part that comm sums, so that they add up to it */
        if (r.cp_s > 0) {
            cli_secs(a, sizeof a, r.cp_s);
            printf(", CP %s", a);
        }
        if (r.ep_s > 0) {
            cli_secs(a, sizeof a, r.ep_s);
            printf(", EP %s", a);
        }
        printf(", DP exposed %s", c2);
        if (r.zero_s > 0) {
            cli_secs(a, sizeof a, r.zero_s);
            printf(", ZeRO %s %s", k.zero == 3 ? "gathers and reduce-scatters" : "weight all-gather", a);
        }
        cli_secs(a, sizeof a, r.optimizer_s);
        printf(", optimizer %s\n", a);
        cli_bytes(m1, sizeof m1, r.memory_per_gpu_bytes);
        cli_bytes(m2, sizeof m2, r.mem.capacity);
        printf("\n  memory/GPU   %s of %s%s\n", m1, m2, r.mem.oom ? "  OUT OF MEMORY" : "");
        const char *names[] = {"weights", "grads", "optimizer", "activations", "logits", "buffers"};
        double vals[] = {r.mem.weights, r.mem.grads, r.mem.optimizer, r.mem.activations, r.mem.logits, r.mem.buffers};
        for (int i = 0; i < 6; i++) {
            cli_bytes(m1, sizeof m1, vals[i]);
            printf("    %-12s %s\n", names[i], m1);
        }
        if (t.trace) {
            printf("\n  trace written to %s (open in ui.perfetto.dev or chrome://tracing)\n", t.trace);
            if (r.trace_tasks < r.trace_tasks_total)
                printf("  it holds %lld of the iteration's %lld forward/backward tasks: each of the %d pipeline "
                       "stages keeps its first %lld\n", r.trace_tasks, r.trace_tasks_total, k.pp,
                       (long long)(ST_TRAIN_TRACE_MAX_TASKS / k.pp));
        }
    }
    st_model_free(&s.m);
    return 0;
}

/* plan's progress on stderr (not with --quiet): after the first second, a
 * line rewritten in place on a terminal, else one every 2 s */
typedef struct plan_progress {
    int tty, printed;
    size_t total;
    double elapsed;
} plan_progress;

static void plan_progress_line(void *ctx, size_t done, size_t total, double elapsed_s)
{
    plan_progress *pg = ctx;
    pg->total = total;
    pg->elapsed = elapsed_s;
    if (elapsed_s < 1.0)
        return;
    fprintf(stderr, "%splan: %zu/%zu configurations (%.1f%%)  %.0f/s%s", pg->tty ? "\r" : "", done, total,
            total ? 100.0 * (double)done / (double)total : 100.0, elapsed_s > 0 ? (double)done / elapsed_s : 0,
            pg->tty ? "   " : "\n");
    fflush(stderr);
    pg->printed = 1;
}

static int run_plan(int argc, char **argv)
{
    topts t = {0};
    setup s;
    int rc = start(&cmd_plan, argc, argv, &t, &s);
    if (rc >= 0)
        return rc;
    st_plan_opts o;
    memset(&o, 0, sizeof o);
    o.gpus = t.gpus ? (int)t.gpus : s.cl.node.gpus;
    o.global_batch = t.gb ? t.gb : o.gpus;
    o.seq = t.seq ? t.seq : (s.m.tf.max_seq < 2048 ? s.m.tf.max_seq : 2048);
    o.dtype = s.dtype;
    o.flash = t.flash;
    o.fa3 = t.fa3;
    o.torch_ver = t.torch_ver;
    o.isolated = t.isolated;
    st_error e;
    /* the check st_train_check makes of every configuration, once before the
     * search: else every configuration fails on it and the search reports
     * only "no valid configuration" */
    if (o.fa3 && st_fa3_check(&s.cl.node.gpu, o.dtype == ST_FP8 ? ST_BF16 : o.dtype, 1, &e)) {
        st_model_free(&s.m);
        return cli_fail(&e);
    }
    o.lora_rank = (int)t.lora;
    o.threads = t.threads ? (int)t.threads : 2;
    o.max_tp = (int)t.max_tp;
    o.max_pp = (int)t.max_pp;
    plan_progress pg = {isatty(2), 0, 0, 0};
    if (!t.quiet) {
        o.progress = plan_progress_line;
        o.progress_ctx = &pg;
        o.progress_every_s = pg.tty ? 0.2 : 2.0;
    }
    st_error err;
    st_plan_point *p;
    size_t n;
    int prc = st_plan(&s.m, &s.cl, &s.coef, &o, &p, &n, &err);
    if (pg.printed) /* the last count, then the line ends */
        fprintf(stderr, "%splan: %zu configurations in %.3g s%s\n", pg.tty ? "\r" : "", pg.total, pg.elapsed,
                pg.tty ? "                    " : "");
    if (prc) {
        st_model_free(&s.m);
        return cli_fail(&err);
    }
    size_t top = t.top ? (size_t)t.top : 10;
    if (t.json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "model", s.m.id);
        st_json_string(&j, "cluster", s.cl.id);
        st_json_int(&j, "evaluated", (long long)n);
        st_json_bool(&j, "cp_searched", o.flash); /* CP > 1 runs fused attention only */
        st_json_begin_array(&j, "plans");
        for (size_t i = 0; i < n && i < top; i++) {
            st_json_begin_object(&j, NULL);
            json_result(&j, &p[i].cfg, &p[i].r);
            st_json_bool(&j, "pareto", p[i].pareto);
            st_json_end_object(&j);
        }
        st_json_end_array(&j);
        st_json_begin_array(&j, "pareto");
        for (size_t i = 0; i < n; i++)
            if (p[i].pareto) {
                st_json_begin_object(&j, NULL);
                json_result(&j, &p[i].cfg, &p[i].r);
                st_json_end_object(&j);
            }
        st_json_end_array(&j);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        printf("%s on %d x %s (%s): %zu configurations evaluated, fastest first (* = time-memory Pareto front)\n",
               s.m.name, o.gpus, s.cl.node.gpu.name, s.cl.id, n);
        if (!o.flash && o.gpus > 1)
            printf("(CP 1 only: context parallelism runs fused attention; add --flash to search it)\n");
        if (s.cl.node.gpu.tc_sustained_w_per_tflops > 0)
            printf("(%s)\n", o.isolated ? "tensor cores at boost, as kernels timed alone: --isolated"
                                         : "tensor cores at the sustained power limit; --isolated: at boost");
        printf("\n");
        printf("  %3s %3s %3s %3s %3s %4s %4s %-9s %4s %11s %7s %9s %6s %s\n", "DP", "TP", "PP", "CP", "EP", "MB", "ZeRO",
               "RECOMP", "SP", "ITERATION", "MFU%", "MEM GiB", "BUBBLE", "");
        for (size_t i = 0; i < n && i < top; i++) {
            const st_plan_point *q = &p[i];
            char a[32];
            cli_secs(a, sizeof a, q->r.iteration_s);
            printf("  %3d %3d %3d %3d %3d %4lld %4d %-9s %4s %11s %7.1f %9.1f %5.1f%% %s%s\n", q->cfg.dp, q->cfg.tp,
                   q->cfg.pp, q->cfg.cp, q->cfg.ep, q->r.micro_batch, q->cfg.zero, st_recompute_name(q->cfg.recompute),
                   q->cfg.sp ? "yes" : "no", a, 100 * q->r.mfu, q->r.memory_per_gpu_bytes / 1073741824.0,
                   100 * q->r.bubble_fraction, q->pareto ? "*" : "", q->r.mem.oom ? " OOM" : "");
        }
        size_t fit = 0, least = 0;
        for (size_t i = 0; i < n; i++) {
            fit += !p[i].r.mem.oom;
            if (p[i].r.memory_per_gpu_bytes < p[least].r.memory_per_gpu_bytes)
                least = i;
        }
        if (n && !fit) {
            const st_train_mem *M = &p[least].r.mem;
            double state = M->weights + M->grads + M->optimizer, gib = 1073741824.0;
            long long all = (long long)s.cl.nodes * s.cl.node.gpus;
            printf("\n  none of the %zu configurations fits: the smallest needs %.1f GiB per GPU against %.1f GiB",
                   n, p[least].r.memory_per_gpu_bytes / gib, M->capacity / gib);
            /* say which part does not fit, and the lever that moves it */
            const char *more = o.gpus < all ? "--gpus, up to this cluster's GPUs" : "a --cluster with more GPUs than these";
            if (state > M->capacity && o.lora_rank)
                /* the frozen base weights: LoRA already leaves them no
                 * gradients or optimizer states, and its adapters are a
                 * sliver, so a smaller rank barely moves this */
                printf(";\n  its weights, gradients and optimizer states alone take %.1f GiB, %.1f GiB of it the weights,\n"
                       "  nearly all the frozen base (a smaller --lora rank saves little): they shrink only with more\n"
                       "  GPUs to shard over (%s)\n",
                       state / gib, M->weights / gib, more);
            else if (state > M->capacity)
                printf(";\n  its weights, gradients and optimizer states alone take %.1f GiB: they shrink only with more\n"
                       "  GPUs to shard over (%s), or train adapters only (strata train --lora RANK)\n",
                       state / gib, more);
            else
                printf(";\n  %.1f GiB of it is activations: a smaller --global-batch, a shorter --seq or more\n"
                       "  GPUs (%s) would fit; plan already searches recompute, TP, PP and ZeRO\n",
                       M->activations / gib,
                       o.gpus < all ? "--gpus, up to this cluster's GPUs" : "a larger --cluster");
        }
        else if (n)
            printf("\n  %zu of %zu configurations fit in memory\n", fit, n);
    }
    free(p);
    st_model_free(&s.m);
    return 0;
}

const cli_command cmd_train = {
    "train",
    "train MODEL [--cluster PRESET] [--gpus N] [--dp D --tp T --pp P --sp --cp C --ep E]\n"
    "                   [--microbatches M] [--zero Z] [--recompute none|selective|full] [--global-batch B]\n"
    "                   [--seq S] [--dtype D] [--lora RANK] [--schedule 1f1b|gpipe|interleaved] [--chunks V]\n"
    "                   [--flash] [--fa3] [--fused] [--torch VER] [--isolated] [--moe-imbalance X] [--trace FILE]\n"
    "                   [--coef FILE] [--json]",
    "Predict one training iteration: time with its band, MFU, tokens/s, memory per GPU, bubble, communication.",
    "  --cluster P      cluster preset, or a node preset as a one-node cluster (default ib-a100)\n"
    "  --gpus N         GPUs (default one node); dp defaults to N / (tp x pp x cp)\n"
    "  --sp             Megatron sequence parallelism (TP >= 2)\n"
    "  --microbatches M microbatches per iteration per pipeline (default 1 without PP; with PP\n"
    "                   global-batch / dp, i.e. microbatches of one sequence, or 4 x PP)\n"
    "  --global-batch B sequences per iteration (default dp x microbatches)\n"
    "  --zero Z         ZeRO stage 0-3 (3 = FSDP full sharding)\n"
    "  --dtype D        fp32, tf32, fp16, bf16 or fp8 (default the model's)\n"
    "  --lora RANK      LoRA adapters of this rank on every linear layer of the blocks but an MoE\n"
    "                   router (Q, K and V as one fused projection: one adapter); base frozen\n"
    "  --flash          FlashAttention-2 (default eager attention, as plain PyTorch); --cp > 1\n"
    "                   needs it (ring attention is a fused kernel's online softmax), and a\n"
    "                   causal model's --seq a multiple of 2 x CP (Megatron-LM's balanced chunks)\n"
    "  --fa3            FlashAttention-3 (implies --flash; Hopper only: warpgroup MMAs at the full\n"
    "                   tensor rate, where FlashAttention-2's synchronous MMAs reach half;\n"
    "                   FP16/BF16/FP8)\n"
    "  --fused          compiled / fused kernels (the compose layer's fused mode)\n"
    "  --torch VER      the PyTorch release (default 2.1, the calibration data's); from 2.8 the\n"
    "                   embedding gather copies rows 16 bytes a thread (see strata kernel)\n"
    "  --isolated       tensor-core kernels at boost, as a benchmark times each alone (default:\n"
    "                   at the board's sustained power limit where the preset has a measured\n"
    "                   tc_sustained_w_per_tflops: H100 SXM, H200)\n"
    "  --moe-imbalance  busiest expert's tokens over the mean (default 1; at most experts / top-k,\n"
    "                   every token on one expert): its rank's expert GEMMs, activations and\n"
    "                   all-to-all share grow by the rank's load, the others sharing the rest\n"
    "                   evenly: X at one expert a rank, 1 where each rank holds all experts\n"
    "  --trace FILE     write a Chrome/Perfetto trace of the iteration (each pipeline stage's first\n"
    "                   200,000 / PP forward and backward tasks)\n"
    "  --coef FILE      kernel coefficient table (default calibration/gpu-kernels.yaml)\n"
    "  --json           iteration_s, sustained, lo_s, hi_s, mfu and tflops_per_gpu (model FLOPs: causal\n"
    "                   attention's unmasked pairs whichever kernel runs), hw_tflops_per_gpu\n"
    "                   (executed: eager attention's extra work and recompute counted),\n"
    "                   tokens_per_s, memory_per_gpu_bytes, bubble_fraction, comm_s, oom,\n"
    "                   config{}, breakdown{}, memory{}\n"
    "\nLayers that do not divide over the stages go one fewer on the end stages (Llama 3: 126 on 16).\n",
    run_train,
    NULL,
};

const cli_command cmd_plan = {
    "plan",
    "plan MODEL [--cluster PRESET] [--gpus N] [--global-batch B] [--seq S] [--dtype D] [--lora R] [--flash] [--fa3]\n"
    "                   [--max-tp T] [--max-pp P] [--threads N] [--top K] [--torch VER] [--isolated] [--coef FILE]\n"
    "                   [--quiet] [--json]",
    "Search parallel configurations: rank by iteration time, memory as the constraint, time-memory Pareto set.",
    "  enumerates DP x TP x PP x CP (x EP for MoE) = N, microbatch sizes 1-16, recompute\n"
    "  none/selective/full, ZeRO 0-3, SP with TP; 1F1B schedule; CP > 1 only with --flash or\n"
    "  --fa3 (ring attention runs fused)\n"
    "  --threads N      evaluate on N threads (default 2; results do not depend on N)\n"
    "  --top K          rows to print (default 10)\n"
    "  --torch VER      the PyTorch release every configuration is priced for (as train's)\n"
    "  --isolated       tensor-core kernels at boost (as train's)\n"
    "  --coef FILE      kernel coefficient table (as train's)\n"
    "  --quiet          no progress line on stderr (shown after the first second otherwise)\n"
    "  --json           {\"plans\":[...], \"pareto\":[...]} with the train command's keys\n",
    run_plan,
    NULL,
};
