/* Options and set-up of `strata serve` (see serve_opts.h). */
#include "config.h"
#include "cli/serve_opts.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

void cli_serve_opts_init(cli_serve_opts *o)
{
    memset(o, 0, sizeof *o);
    st_serve_cfg d;
    st_serve_cfg_default(&d);
    o->gpu = "h100-sxm";
    o->tp = o->pp = o->cp = o->dp = 1;
    o->max_num_seqs = d.max_num_seqs;
    o->max_batched_tokens = d.max_batched_tokens;
    o->chunk = d.chunk;
    o->block_size = d.block_size;
    o->gpu_mem_util = d.gpu_mem_util;
    o->seed = (long long)d.seed;
    o->spec_accept = d.spec_accept;
    o->prefix_cache = d.prefix_cache;
    o->reserve_full_isl = d.reserve_full_isl;
    o->async_sched = d.async_sched;
    o->runtime_reserve = d.runtime_reserve_bytes;
    o->swap_space = d.swap_space_bytes;
    o->cv = 1;
}

static int pair(const cli_command *cmd, const char *opt, const char *text, long long *a, long long *b)
{
    char *e;
    if (!cli_digits_pair(text)) {
        cli_usage_error(cmd, "%s: expected A:B with positive integers, got '%s'", opt, text);
        return 2;
    }
    long long x = strtoll(text, &e, 10);
    if (e == text || *e != ':' || x < 1) {
        cli_usage_error(cmd, "%s: expected A:B with positive integers, got '%s'", opt, text);
        return 2;
    }
    const char *t2 = e + 1;
    long long y = strtoll(t2, &e, 10);
    if (e == t2 || *e || y < 1 || x > 1000000 || y > 10000000) {
        cli_usage_error(cmd, "%s: expected A:B with positive integers, got '%s'", opt, text);
        return 2;
    }
    *a = x;
    *b = y;
    return 0;
}

static int serve_enums(const cli_serve_opts *o, st_serve_cfg *c, st_error *err);

int cli_serve_parse(const cli_command *cmd, int argc, char **argv, cli_serve_opts *o, int *help)
{
    static const struct option opts[] = {
        {"gpu", required_argument, NULL, 'g'},          {"cluster", required_argument, NULL, 'c'},
        {"tp", required_argument, NULL, 'T'},           {"pp", required_argument, NULL, 'P'},
        {"dp", required_argument, NULL, 'D'},           {"ep", no_argument, NULL, 'E'},
        {"cp", required_argument, NULL, 'c' + 256},
        {"sched", required_argument, NULL, 'S'},        {"max-num-seqs", required_argument, NULL, 'n'},
        {"max-batched-tokens", required_argument, NULL, 'B'}, {"chunk", required_argument, NULL, 'C'},
        {"block-size", required_argument, NULL, 'b'},   {"gpu-mem-util", required_argument, NULL, 'u'},
        {"max-model-len", required_argument, NULL, 'L'}, {"num-gpu-blocks", required_argument, NULL, 'K'},
        {"runtime-reserve", required_argument, NULL, 'W'}, {"preempt", required_argument, NULL, 'X'},
        {"swap-space", required_argument, NULL, 'W' + 256},
        {"route", required_argument, NULL, 'r'},        {"trace", required_argument, NULL, 't'},
        {"qps", required_argument, NULL, 'q'},          {"requests", required_argument, NULL, 'N'},
        {"lengths", required_argument, NULL, 'l'},      {"arrival", required_argument, NULL, 'a'},
        {"cv", required_argument, NULL, 'v'},           {"seed", required_argument, NULL, 's'},
        {"prefix-cache", no_argument, NULL, 'p'},       {"no-prefix-cache", no_argument, NULL, 'o'},
        {"reserve-full-isl", no_argument, NULL, 'i' + 256}, {"no-reserve-full-isl", no_argument, NULL, 'j' + 256},
        {"async-scheduling", no_argument, NULL, 'k' + 256}, {"no-async-scheduling", no_argument, NULL, 'l' + 256},
        {"usage-context", required_argument, NULL, 'u' + 256},
        {"shared-prefix", required_argument, NULL, 'H'}, {"spec-k", required_argument, NULL, 'k'},
        {"spec-accept", required_argument, NULL, 'A'},  {"draft", required_argument, NULL, 'd'},
        {"quant", required_argument, NULL, 'Q'},        {"kv-dtype", required_argument, NULL, 'V'},
        {"dtype", required_argument, NULL, 'Y'},
        {"disagg", required_argument, NULL, 'G'},       {"colocate", required_argument, NULL, 'm'},
        {"share", required_argument, NULL, 'h' + 256},  {"slo-ttft", required_argument, NULL, 'f'},
        {"slo-tpot", required_argument, NULL, 'F'},     {"eager", no_argument, NULL, 'e'},
        {"per-request", required_argument, NULL, 'R'},  {"trace-out", required_argument, NULL, 'O'},
        {"coef", required_argument, NULL, 'x'},         {"json", no_argument, NULL, 'J'},
        {"trim", no_argument, NULL, 'Z'},              {"attn", required_argument, NULL, 'a' + 256},
        {"help", no_argument, NULL, 'h'},               {NULL, 0, NULL, 0},
    };
    cli_serve_opts_init(o);
    *help = 0;
    optind = 0;
    int c, chunk_given = 0, swap_given = 0, isl_given = 0, pc_given = 0, as_given = 0;
    while ((c = cli_getopt(cmd, argc, argv, "g:h", opts)) != -1) {
        long long *dst = NULL, lo = 1, hi = 1LL << 30;
        const char *nm = NULL;
        int rc = 0;
        switch (c) {
        case 'g': o->gpu = optarg; break;
        case 'c': o->cluster = optarg; break;
        case 'T': dst = &o->tp, nm = "--tp", hi = 1024; break;
        case 'P': dst = &o->pp, nm = "--pp", hi = 1024; break;
        case 'D': dst = &o->dp, nm = "--dp", hi = 64; break;
        case 'c' + 256: dst = &o->cp, nm = "--cp", hi = 1024; break;
        case 'E': o->ep = 1; break;
        case 'S': o->sched = optarg; break;
        case 'n': dst = &o->max_num_seqs, nm = "--max-num-seqs", hi = 65536; break;
        case 'B': dst = &o->max_batched_tokens, nm = "--max-batched-tokens", hi = 1 << 24; break;
        case 'C': dst = &o->chunk, nm = "--chunk", hi = 1 << 24, chunk_given = 1; break;
        case 'b': dst = &o->block_size, nm = "--block-size", hi = 1024; break;
        case 'u': rc = cli_parse_num(cmd, "--gpu-mem-util", optarg, 0.01, 1, &o->gpu_mem_util); break;
        case 'L': dst = &o->max_model_len, nm = "--max-model-len", hi = 1 << 26; break;
        case 'K': dst = &o->num_gpu_blocks, nm = "--num-gpu-blocks", hi = 1LL << 40; break;
        case 'W': rc = cli_parse_bytes(cmd, "--runtime-reserve", optarg, &o->runtime_reserve); break;
        case 'W' + 256:
            rc = cli_parse_bytes(cmd, "--swap-space", optarg, &o->swap_space);
            swap_given = 1;
            break;
        case 'X': o->preempt = optarg; break;
        case 'r': o->route = optarg; break;
        case 'u' + 256: o->usage = optarg; break;
        case 't': o->trace = optarg; break;
        case 'q': rc = cli_parse_num(cmd, "--qps", optarg, 1e-9, 1e9, &o->qps); break;
        case 'N': dst = &o->requests, nm = "--requests", hi = ST_SERVE_MAX_REQUESTS; break;
        case 'l': o->lengths = optarg; break;
        case 'a': o->arrival = optarg; break;
        case 'v': rc = cli_parse_num(cmd, "--cv", optarg, 1e-3, 100, &o->cv); break;
        case 's': dst = &o->seed, nm = "--seed", lo = 0, hi = (1LL << 62); break;
        case 'p': o->prefix_cache = 1, pc_given |= 1; break;
        case 'o': o->prefix_cache = 0, pc_given |= 2; break;
        case 'i' + 256: o->reserve_full_isl = 1, isl_given |= 1; break;
        case 'j' + 256: o->reserve_full_isl = 0, isl_given |= 2; break;
        case 'k' + 256: o->async_sched = 1, as_given |= 1; break;
        case 'l' + 256: o->async_sched = 0, as_given |= 2; break;
        case 'H': rc = pair(cmd, "--shared-prefix", optarg, &o->prefix_groups, &o->prefix_len); break;
        case 'k': dst = &o->spec_k, nm = "--spec-k", lo = 0, hi = 16; break;
        case 'A':
            rc = cli_parse_num(cmd, "--spec-accept", optarg, 0, 1, &o->spec_accept);
            o->spec_accept_given = 1;
            break;
        case 'd': o->draft = optarg; break;
        case 'Q': o->quant = optarg; break;
        case 'V': o->kv_dtype = optarg; break;
        case 'Y': o->dtype = optarg; break;
        case 'a' + 256: o->attn = optarg; break;
        case 'G': rc = pair(cmd, "--disagg", optarg, &o->disagg_p, &o->disagg_d); break;
        case 'm':
            if (o->n_colocate == 3) {
                cli_usage_error(cmd, "--colocate: at most 3 further models");
                return 2;
            }
            o->colocate[o->n_colocate++] = optarg;
            break;
        case 'h' + 256: o->share = optarg; break;
        case 'f':
        case 'F': {
            /* an SLO of 0 would read as "no SLO" downstream: refuse it */
            const char *nm2 = c == 'f' ? "--slo-ttft" : "--slo-tpot";
            double *v = c == 'f' ? &o->slo_ttft : &o->slo_tpot;
            char *end;
            double pre = strtod(optarg, &end); /* a number at or below 0 gets the SLO's own words */
            rc = end != optarg && !*end && pre <= 0 ? 0 : cli_parse_num(cmd, nm2, optarg, 0, 1e6, v);
            if (!rc && end != optarg && !*end && pre <= 0)
                *v = pre;
            if (!rc && *v <= 0) {
                cli_usage_error(cmd, "%s: an SLO is a positive number of seconds, got '%s' (leave the option out "
                                     "for none)", nm2, optarg);
                rc = 2;
            }
            break;
        }
        case 'e': o->eager = 1; break;
        case 'R': o->per_request = optarg; break;
        case 'O': o->trace_out = optarg; break;
        case 'Z': o->trim = 1; break;
        case 'x': o->coef = optarg; break;
        case 'J': o->json = 1; break;
        case 'h': *help = 1; return 0;
        default: return 2;
        }
        if (rc)
            return 2;
        if (dst && cli_parse_ll(cmd, nm, optarg, lo, hi, dst))
            return 2;
    }
    /* a switch and its negation together: which was meant? */
    if (pc_given == 3 || isl_given == 3 || as_given == 3) {
        const char *what = pc_given == 3 ? "prefix-cache" : isl_given == 3 ? "reserve-full-isl" : "async-scheduling";
        cli_usage_error(cmd, "--%s and --no-%s contradict each other: give one", what, what);
        return 2;
    }
    {
        st_serve_cfg scratch;
        st_error e;
        st_serve_cfg_default(&scratch);
        if (serve_enums(o, &scratch, &e)) {
            cli_usage_error(cmd, "%s", e.msg);
            return 2;
        }
        /* only sarathi reads --chunk (its step budget, which also sizes its
         * activation reserve); the others' budget is --max-batched-tokens */
        if (chunk_given && scratch.sched != ST_SCHED_SARATHI) {
            cli_usage_error(cmd, "--chunk is sarathi's step budget; under --sched %s the budget is "
                                 "--max-batched-tokens", st_sched_name(scratch.sched));
            return 2;
        }
        /* vLLM V1's own switches: its admission gate (0.19) and batch queue */
        if ((as_given || isl_given) && scratch.sched != ST_SCHED_VLLM) {
            cli_usage_error(cmd, "--%s sets vLLM V1's %s; --sched %s has none of them: drop it, or use --sched "
                                 "vllm", isl_given ? "reserve-full-isl" : "async-scheduling",
                            isl_given ? "admission gate" : "batch queue", st_sched_name(scratch.sched));
            return 2;
        }
        /* only swap preemption uses the host's swap space */
        if (swap_given && scratch.preempt != ST_PREEMPT_SWAP) {
            cli_usage_error(cmd, "--swap-space sizes --preempt swap's host memory; add --preempt swap (with "
                                 "--sched vllm-v0), or drop it");
            return 2;
        }
    }
    if (o->trace && (o->qps > 0 || o->requests > 0 || o->lengths || o->arrival)) {
        cli_usage_error(cmd, "--trace replays its own arrivals and lengths; drop --qps/--requests/--lengths/--arrival");
        return 2;
    }
    if (!o->trace && !(o->qps > 0 && o->requests > 0 && o->lengths)) {
        cli_usage_error(cmd, "give --trace FILE, or --qps Q --requests N --lengths SPEC (e.g. --lengths uniform:100-2000,50-800)");
        return 2;
    }
    /* a malformed SPEC is a usage error like any other option; trace:FILE
     * is read later, where a file's faults are I/O errors */
    if (o->lengths && strncmp(o->lengths, "trace:", 6) != 0) {
        st_lenspec ls;
        st_error e;
        if (st_lenspec_parse(o->lengths, &ls, &e)) {
            cli_usage_error(cmd, "%s", e.msg);
            return 2;
        }
        st_lenspec_free(&ls);
    }
    if (o->per_request && o->trace_out && cli_same_file(o->per_request, o->trace_out)) {
        cli_usage_error(cmd, "--per-request and --trace-out name the same file");
        return 2;
    }
    if (o->spec_k > 0 && !o->spec_accept_given) {
        cli_usage_error(cmd, "--spec-k needs --spec-accept A, the per-token acceptance of the drafts (measure it "
                             "for your draft and data)");
        return 2;
    }
    if ((o->draft || o->spec_accept_given) && o->spec_k == 0) {
        cli_usage_error(cmd, "--draft and --spec-accept need --spec-k K, 1 or more draft tokens a step (--spec-k 0 "
                             "is no speculation: drop them)");
        return 2;
    }
    if (o->share && o->n_colocate == 0) {
        cli_usage_error(cmd, "--share splits the GPUs between co-located models; add --colocate MODEL");
        return 2;
    }
    if (o->trace && o->prefix_groups) {
        cli_usage_error(cmd, "--shared-prefix describes generated requests; a --trace carries no prefix groups");
        return 2;
    }
    if (o->cv != 1 && !(o->arrival && strcmp(o->arrival, "gamma") == 0)) {
        cli_usage_error(cmd, "--cv is the gamma process's; add --arrival gamma");
        return 2;
    }
    if (o->disagg_p && o->dp > 1) {
        cli_usage_error(cmd, "--disagg P:D sets the replicas (P + D); drop --dp");
        return 2;
    }
    if (o->arrival && strcmp(o->arrival, "poisson") && strcmp(o->arrival, "gamma")) {
        cli_usage_error(cmd, "--arrival: poisson or gamma, got '%s'", o->arrival);
        return 2;
    }
    return 0;
}

static int enum_err(st_error *err, const char *opt, const char *v, const char *choices)
{
    return st_error_set(err, ST_EINVAL, "%s '%s': choose %s", opt, v, choices);
}

/* The named choices (--sched, --quant, --route, --preempt, --kv-dtype,
 * --share) into c: checked at parse time (a usage error) and applied at
 * set-up. */
static int serve_enums(const cli_serve_opts *o, st_serve_cfg *c, st_error *err)
{
    if (o->sched && st_sched_parse(o->sched, &c->sched))
        return enum_err(err, "--sched", o->sched, st_sched_choices());
    if (o->quant && st_quant_parse(o->quant, &c->quant))
        return enum_err(err, "--quant", o->quant, st_quant_choices());
    if (o->route && st_route_parse(o->route, &c->route))
        return enum_err(err, "--route", o->route, "rr, least, vllm or auto");
    if (o->usage && st_usage_parse(o->usage, &c->usage))
        return enum_err(err, "--usage-context", o->usage, "serve (vllm serve), llm (the offline LLM class) or engine");
    if (o->preempt) {
        if (strcmp(o->preempt, "swap") == 0)
            c->preempt = ST_PREEMPT_SWAP;
        else if (strcmp(o->preempt, "recompute") != 0)
            return enum_err(err, "--preempt", o->preempt, "recompute or swap");
    }
    if (o->dtype && strcmp(o->dtype, "auto") != 0) {
        /* vLLM's --dtype spellings too */
        if (!strcmp(o->dtype, "fp16") || !strcmp(o->dtype, "float16") || !strcmp(o->dtype, "half"))
            c->dtype = ST_FP16, c->dtype_set = 1;
        else if (!strcmp(o->dtype, "bf16") || !strcmp(o->dtype, "bfloat16"))
            c->dtype = ST_BF16, c->dtype_set = 1;
        else
            return enum_err(err, "--dtype", o->dtype, "auto (the checkpoint's 16-bit type), fp16 or bf16");
    }
    if (o->kv_dtype) {
        if (strcmp(o->kv_dtype, "fp8") == 0)
            c->kv_fp8 = 1;
        else if (strcmp(o->kv_dtype, "auto") != 0 && strcmp(o->kv_dtype, "bf16") != 0)
            return enum_err(err, "--kv-dtype", o->kv_dtype, "auto (the model's dtype; bf16 means the same) or fp8");
    }
    if (o->attn && strcasecmp(o->attn, "auto") != 0) {
        st_attn_impl a;
        if (st_attn_parse(o->attn, &a) || a == ST_ATTN_EAGER) /* vLLM has no unfused attention path */
            return enum_err(err, "--attn", o->attn,
                            "auto (default: FlashAttention-3 on Hopper, FlashAttention-2 elsewhere, as vLLM), "
                            "flash (FlashAttention-2) or flash3 (FlashAttention-3, Hopper only)");
        c->fa3 = a == ST_ATTN_FLASH3;
    }
    if (o->share) {
        if (strcmp(o->share, "space") == 0)
            c->share = ST_SHARE_SPACE;
        else if (strcmp(o->share, "time") != 0)
            return enum_err(err, "--share", o->share, "time or space");
    }
    return 0;
}

int cli_serve_setup_load(const cli_serve_opts *o, const char *model, cli_serve_setup *s, st_error *err)
{
    memset(s, 0, sizeof *s);
    st_serve_cfg *c = &s->cfg;
    st_serve_cfg_default(c);
    if (serve_enums(o, c, err))
        return ST_EINVAL;
    int rc = st_load_model(model, &s->model, err);
    if (rc)
        return rc;
    if (o->ep && (s->model.kind != ST_MODEL_TRANSFORMER || s->model.tf.experts <= 0)) {
        st_error_set(err, ST_EINVAL, "--ep needs a mixture-of-experts model; %s is dense", s->model.id);
        st_model_free(&s->model);
        return ST_EINVAL;
    }
    if (o->draft) {
        if ((rc = st_load_model(o->draft, &s->draft, err)))
            goto fail;
        s->have_draft = 1;
        c->draft = &s->draft;
        if (s->draft.kind != ST_MODEL_TRANSFORMER || !s->draft.tf.lm_head) {
            rc = st_error_set(err, ST_EINVAL, "--draft %s: not a language model (a draft proposes tokens); draft "
                              "with a small model of %s's family", s->draft.id, s->model.id);
            goto fail;
        }
        /* speculative decoding verifies the draft's tokens: one tokenizer */
        if (s->draft.kind != ST_MODEL_TRANSFORMER || s->model.kind != ST_MODEL_TRANSFORMER ||
            s->draft.tf.vocab != s->model.tf.vocab) {
            rc = st_error_set(err, ST_EINVAL, "--draft %s: a draft model must share %s's tokenizer (vocabulary %lld "
                              "against %lld); draft with a model of its family", s->draft.id, s->model.id,
                              s->draft.kind == ST_MODEL_TRANSFORMER ? s->draft.tf.vocab : 0LL,
                              s->model.kind == ST_MODEL_TRANSFORMER ? s->model.tf.vocab : 0LL);
            goto fail;
        }
    }
    for (int i = 0; i < o->n_colocate; i++) {
        if ((rc = st_load_model(o->colocate[i], &s->colocated[i], err)))
            goto fail;
        s->n_colocated++;
        c->colocated[i] = &s->colocated[i];
    }
    c->n_colocated = s->n_colocated;
    if ((rc = st_load_gpu(o->gpu, &s->gpu, err)) || (rc = st_gpu_coef_load(o->coef, &s->coef, err)))
        goto fail;
    c->model = &s->model;
    c->gpu = &s->gpu;
    c->coef = &s->coef;
    c->tp = (int)o->tp;
    c->pp = (int)o->pp;
    c->dp = (int)o->dp;
    c->cp = (int)o->cp;
    c->ep = o->ep ? c->dp * c->tp : 1;
    c->max_num_seqs = (int)o->max_num_seqs;
    c->max_batched_tokens = o->max_batched_tokens;
    c->chunk = o->chunk;
    c->block_size = (int)o->block_size;
    c->gpu_mem_util = o->gpu_mem_util;
    c->max_model_len = o->max_model_len;
    c->num_gpu_blocks = o->num_gpu_blocks;
    c->runtime_reserve_bytes = o->runtime_reserve;
    c->swap_space_bytes = o->swap_space;
    c->prefix_cache = o->prefix_cache;
    c->reserve_full_isl = o->reserve_full_isl;
    c->async_sched = o->async_sched;
    st_serve_resolve_batch(c); /* unset: vLLM's defaults for the GPU (and the scheduler) */
    c->spec_k = (int)o->spec_k;
    c->spec_accept = o->spec_accept;
    c->prefill_replicas = (int)o->disagg_p;
    c->decode_replicas = (int)o->disagg_d;
    if (c->prefill_replicas > 0)
        c->dp = c->prefill_replicas + c->decode_replicas;
    c->slo_ttft_s = o->slo_ttft;
    c->slo_tpot_s = o->slo_tpot;
    c->seed = (unsigned long long)o->seed;
    c->eager = o->eager;
    int per_replica = c->tp * c->pp * c->cp;
    int need_net = per_replica > 1 || c->prefill_replicas > 0 || c->preempt == ST_PREEMPT_SWAP || c->ep > 1;
    if (o->cluster) {
        if ((rc = st_load_cluster_or_node(o->cluster, &s->cluster, err)))
            goto fail;
        s->have_cluster = 1;
    } else if (need_net) {
        int want = c->prefill_replicas > 0 ? (c->prefill_replicas + c->decode_replicas) * per_replica
                   : c->ep > 1                ? c->ep
                                              : per_replica;
        if ((rc = st_load_node_for_gpu(s->gpu.id, want, &s->cluster, err)))
            goto fail;
        s->have_cluster = 1;
    }
    if (s->have_cluster)
        c->cluster = &s->cluster;
    if (o->trace) {
        rc = st_requests_load(o->trace, &s->reqs, err);
    } else {
        st_lenspec ls;
        if ((rc = st_lenspec_parse(o->lengths, &ls, err))) {
            if (rc == ST_EIO) /* trace:FILE did not open: say which option named it */
                st_error_prefix(err, "--lengths");
            goto fail;
        }
        st_arrivals a;
        memset(&a, 0, sizeof a);
        a.gamma = o->arrival && strcmp(o->arrival, "gamma") == 0;
        a.qps = o->qps;
        a.cv = o->cv;
        a.n = (size_t)o->requests;
        a.seed = (unsigned long long)o->seed;
        a.prefix_groups = (int)o->prefix_groups;
        a.prefix_len = (int)o->prefix_len;
        a.models = 1 + s->n_colocated;
        rc = st_requests_generate(&a, &ls, &s->reqs, err);
        st_lenspec_free(&ls);
    }
    if (!rc && s->n_colocated > 0 && o->trace)
        for (size_t i = 0; i < s->reqs.n; i++)
            s->reqs.r[i].model = (int)(i % (size_t)(1 + s->n_colocated));
    /* --trim: a request longer than its model's context gives up the
     * excess from prompt and output in proportion to their lengths, each
     * share rounded up and at least one token of each kept, as VIDUR's
     * trace length generator fits traces to max_tokens */
    s->trimmed = 0;
    for (size_t i = 0; !rc && o->trim && i < s->reqs.n; i++) {
        st_request *q = &s->reqs.r[i];
        const st_model *m = q->model == 0 ? &s->model : &s->colocated[q->model - 1];
        long long mlen = o->max_model_len > 0 ? o->max_model_len : m->tf.max_seq;
        double total = (double)q->in + (double)q->out, diff = total - (double)mlen;
        if (diff <= 0)
            continue;
        if (mlen < 2) {
            rc = st_error_set(err, ST_EINVAL, "--trim keeps one prompt and one output token of a request, but "
                              "max_model_len %lld holds fewer; raise --max-model-len to 2 or more", mlen);
            break;
        }
        long long in = q->in - (long long)ceil(diff * q->in / total);
        long long out = q->out - (long long)ceil(diff * q->out / total);
        q->in = (int)(in < 1 ? 1 : in);
        q->out = (int)(out < 1 ? 1 : out);
        if (q->prefix_len > q->in)
            q->prefix_len = q->in;
        s->trimmed++;
    }
    if (rc)
        goto fail;
    return 0;
fail:
    cli_serve_setup_free(s);
    return rc;
}

void cli_serve_setup_free(cli_serve_setup *s)
{
    st_model_free(&s->model);
    if (s->have_draft)
        st_model_free(&s->draft);
    for (int i = 0; i < s->n_colocated; i++)
        st_model_free(&s->colocated[i]);
    st_reqset_free(&s->reqs);
    s->have_draft = s->n_colocated = 0;
}
