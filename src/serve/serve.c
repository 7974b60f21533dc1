/*
 * serve: names, defaults, distributions, per-request output.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/serve.h"

static const char *const sched_names[ST_SCHED_COUNT] = {"vllm", "vllm-v0", "sarathi", "orca", "static"};
static const char *const quant_names[ST_QUANT_COUNT] = {"none", "w4a16", "w8a8", "fp8"};

const char *st_sched_name(st_sched s) { return (unsigned)s < ST_SCHED_COUNT ? sched_names[s] : "?"; }
const char *st_quant_name(st_quant q) { return (unsigned)q < ST_QUANT_COUNT ? quant_names[q] : "?"; }
/* the choices as error messages list them, in the order of the names above */
const char *st_sched_choices(void) { return "vllm, vllm-v0, sarathi, orca or static"; }
const char *st_quant_choices(void) { return "none, w4a16, w8a8 or fp8"; }
const char *st_route_name(st_route r)
{
    return r == ST_ROUTE_LEAST ? "least" : r == ST_ROUTE_VLLM ? "vllm" : r == ST_ROUTE_AUTO ? "auto" : "rr";
}

static int parse_name(const char *s, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return ST_EINVAL;
}

int st_sched_parse(const char *s, st_sched *out)
{
    int v = 0;
    if (parse_name(s, sched_names, ST_SCHED_COUNT, &v))
        return ST_EINVAL;
    *out = (st_sched)v;
    return 0;
}

int st_quant_parse(const char *s, st_quant *out)
{
    int v = 0;
    if (parse_name(s, quant_names, ST_QUANT_COUNT, &v))
        return ST_EINVAL;
    *out = (st_quant)v;
    return 0;
}

int st_route_parse(const char *s, st_route *out)
{
    if (strcmp(s, "rr") == 0 || strcmp(s, "round-robin") == 0) {
        *out = ST_ROUTE_RR;
        return 0;
    }
    if (strcmp(s, "least") == 0 || strcmp(s, "least-outstanding") == 0) {
        *out = ST_ROUTE_LEAST;
        return 0;
    }
    if (strcmp(s, "vllm") == 0) {
        *out = ST_ROUTE_VLLM;
        return 0;
    }
    if (strcmp(s, "auto") == 0) {
        *out = ST_ROUTE_AUTO;
        return 0;
    }
    return ST_EINVAL;
}

int st_serve_cp_per_node(const st_serve_cfg *c)
{
    int cp = c->cp > 0 ? c->cp : 1, tp = c->tp > 0 ? c->tp : 1;
    if (cp == 1 || !c->cluster || c->cluster->nodes <= 1)
        return cp;
    int per = c->cluster->node.gpus / tp;
    return per < 1 ? 1 : per < cp ? per : cp;
}

void st_serve_cfg_default(st_serve_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->tp = c->pp = c->dp = c->ep = c->cp = 1;
    c->sched = ST_SCHED_VLLM;
    /* vLLM 0.19 EngineArgs for the OpenAI server: max_num_seqs and
     * max_num_batched_tokens by the GPU (st_serve_batch_defaults, once the
     * GPU is known), block_size 16, gpu_memory_utilization 0.9,
     * enable_prefix_caching on (V1) */
    c->max_num_seqs = 0;
    c->max_batched_tokens = 0;
    c->chunk = 512; /* Sarathi-Serve's evaluated chunk sizes are 256-2048 */
    c->block_size = 16;
    c->gpu_mem_util = 0.9;
    c->prefix_cache = 1;
    c->reserve_full_isl = 1;
    c->async_sched = 0; /* off: see --async-scheduling in strata(1) and the README */
    c->watermark = 0.01; /* vLLM V0 BlockSpaceManager watermark */
    /* Assumption, not measured: what vLLM's profiler charges besides the
     * weights and the activations counted in cost.c (the CUDA-graph pool,
     * NCCL and cuBLAS workspaces, allocator fragmentation): 0.7 GiB per GPU.
     * Set from the RTX 4090 run's logged KV size (2,588 blocks of 2 MiB, vLLM
     * 0.19): of CUDA's 23.55 GiB x 0.9, the weights (14.96 GiB) and the KV
     * leave 1.18 GiB, of which cost.c's activations take 0.47. Not modelled:
     * vLLM V0's NCCL buffers beside it (PR 10511's H100 log: 1.79 GiB of
     * non-torch memory at TP 1, 3.58 at TP 2). See serve.h. */
    c->runtime_reserve_bytes = 0.7 * 1073741824.0;
    c->swap_space_bytes = 4.0 * 1073741824.0; /* vLLM V0's swap_space default: 4 GiB a GPU */
    c->route = ST_ROUTE_AUTO; /* vLLM's balancer under V1, round-robin otherwise */
    c->spec_accept = -1; /* no default: the acceptance rate is the user's to give */
    c->fa3 = -1;         /* as vLLM: FlashAttention-3 on Hopper, FlashAttention-2 elsewhere */
    c->seed = 42;
    c->trace_max_events = 200000;
}

static const char *const usage_names[ST_USAGE_COUNT] = {"serve", "llm", "engine"};

const char *st_usage_name(st_usage u)
{
    return u >= 0 && u < ST_USAGE_COUNT ? usage_names[u] : "?";
}

int st_usage_parse(const char *s, st_usage *out)
{
    for (int i = 0; i < ST_USAGE_COUNT; i++)
        if (strcasecmp(s, usage_names[i]) == 0) {
            *out = (st_usage)i;
            return 0;
        }
    return -1;
}

void st_serve_batch_defaults(const st_gpu *g, int *max_num_seqs, long long *max_batched_tokens)
{
    st_serve_batch_defaults_for(g, ST_USAGE_SERVE, max_num_seqs, max_batched_tokens);
}

void st_serve_batch_defaults_for(const st_gpu *g, st_usage u, int *max_num_seqs, long long *max_batched_tokens)
{
    if (u == ST_USAGE_ENGINE) {
        /* no default for this context: SchedulerConfig's own */
        *max_num_seqs = 128;
        *max_batched_tokens = 2048;
        return;
    }
    int big = 0;
    if (g && g->mem_bytes >= 70.0 * 1073741824.0) {
        /* vLLM matches "a100" in the lower-cased device name */
        char name[sizeof g->name + sizeof g->id + 2];
        snprintf(name, sizeof name, "%s %s", g->name, g->id);
        for (char *p = name; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        big = !strstr(name, "a100");
    }
    *max_num_seqs = big ? 1024 : 256;
    if (u == ST_USAGE_LLM)
        *max_batched_tokens = big ? 16384 : 8192;
    else
        *max_batched_tokens = big ? 8192 : 2048;
}

void st_serve_resolve_batch(st_serve_cfg *c)
{
    int seqs;
    long long tokens;
    st_serve_batch_defaults_for(c->gpu, c->usage, &seqs, &tokens);
    if (c->sched == ST_SCHED_VLLM_V0) {
        /* vLLM V0 (its SchedulerConfig without chunked prefill, which is
         * how this scheduler runs): 256 sequences whatever the GPU, and a
         * step that takes a whole prompt, max(max_model_len, 2048) */
        long long mlen = c->max_model_len > 0 ? c->max_model_len : c->model ? c->model->tf.max_seq : 0;
        seqs = 256;
        tokens = mlen > 2048 ? mlen : 2048;
    }
    if (c->max_batched_tokens == 0)
        c->max_batched_tokens = tokens;
    /* vLLM: the default seats, at most the step budget */
    if (c->max_num_seqs == 0)
        c->max_num_seqs = (long long)seqs < c->max_batched_tokens ? seqs : (int)c->max_batched_tokens;
}

int st_serve_fa3(const st_serve_cfg *c)
{
    if (c->fa3 >= 0)
        return c->fa3 > 0;
    return c->gpu && st_gpu_fa3(c->gpu);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* linear interpolation between closest ranks (numpy's default) */
static double pct(const double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double f = pos - (double)lo;
    return v[lo] + (v[hi] - v[lo]) * f;
}

void st_dist_of(double *v, size_t n, st_dist *d)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    if (n == 0)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    d->mean = s / (double)n;
    d->p50 = pct(v, n, 0.50);
    d->p90 = pct(v, n, 0.90);
    d->p95 = pct(v, n, 0.95);
    d->p99 = pct(v, n, 0.99);
    d->max = v[n - 1];
}

/* vLLM's dtype "auto": the checkpoint's own 16-bit type (Llama 2 FP16,
 * Llama 3 BF16); an FP32 checkpoint is served in 16 bits, BF16 where the
 * GPU has it; BF16 on a GPU without it (V100, T4) runs as FP16. */
st_dtype st_serve_dtype(const st_serve_cfg *c)
{
    if (c->dtype_set)
        return c->dtype; /* st_serve_check: the GPU has it */
    st_dtype d = c->model ? c->model->dtype : ST_BF16;
    if (d != ST_FP16 && d != ST_BF16)
        d = ST_BF16;
    if (d == ST_BF16 && !st_gpu_supports(c->gpu, ST_BF16))
        d = ST_FP16;
    if (d == ST_FP16 && !st_gpu_supports(c->gpu, ST_FP16))
        d = ST_BF16;
    return d;
}

void st_serve_req_dists(const st_req_out *req, size_t n, int model, double *v, st_dist *ttft, st_dist *tpot,
                        st_dist *e2e, size_t *count)
{
    size_t k = 0, m = 0;
    for (size_t i = 0; i < n; i++)
        if (model < 0 || req[i].model == model)
            v[k++] = req[i].first - req[i].arrival;
    st_dist_of(v, k, ttft);
    for (size_t i = 0; i < n; i++)
        if ((model < 0 || req[i].model == model) && req[i].out > 1)
            v[m++] = (req[i].done - req[i].first) / (req[i].out - 1);
    st_dist_of(v, m, tpot);
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (model < 0 || req[i].model == model)
            v[k++] = req[i].done - req[i].arrival;
    st_dist_of(v, k, e2e);
    *count = k;
}

int st_serve_model_dists(const st_serve_result *r, int model, st_dist *ttft, st_dist *tpot, st_dist *e2e,
                         size_t *n)
{
    double *v = malloc((r->n_requests ? r->n_requests : 1) * sizeof *v);
    if (!v)
        return ST_ENOMEM;
    st_serve_req_dists(r->req, r->n_requests, model, v, ttft, tpot, e2e, n);
    free(v);
    return 0;
}

double st_spec_expected_tokens(int k, double a)
{
    if (k <= 0)
        return 1.0;
    if (a >= 1.0)
        return (double)(k + 1);
    return (1.0 - pow(a, k + 1)) / (1.0 - a);
}

void st_serve_result_free(st_serve_result *r)
{
    free(r->kv);
    free(r->req);
    r->kv = NULL;
    r->req = NULL;
    r->n_kv = 0;
}

int st_serve_write_requests(FILE *f, const st_serve_result *r)
{
    fprintf(f, "request,model,replica,input_toks,output_toks,arrival_s,scheduled_s,first_token_s,done_s,"
               "ttft_s,tpot_s,latency_s,preemptions,cached_tokens\n");
    for (size_t i = 0; i < r->n_requests; i++) {
        const st_req_out *q = &r->req[i];
        /* a one-token output has no time per output token: an empty field */
        char tpot[32] = "";
        if (q->out > 1)
            snprintf(tpot, sizeof tpot, "%.6f", (q->done - q->first) / (q->out - 1));
        fprintf(f, "%zu,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%.6f,%d,%d\n", i, q->model, q->replica, q->in,
                q->out, q->arrival, q->scheduled, q->first, q->done, q->first - q->arrival, tpot,
                q->done - q->arrival, q->preemptions, q->cached_tokens);
    }
    return ferror(f) ? ST_EIO : 0;
}

/* one async event of a request's track; args: a JSON object's members, or NULL */
static void async_event(FILE *f, int *first, const char *name, char ph, size_t id, int pid, double ts,
                        const char *args)
{
    fprintf(f, "%s{\"name\":\"%s\",\"cat\":\"request\",\"ph\":\"%c\",\"id\":%zu,\"pid\":%d,\"tid\":0,"
               "\"ts\":%.3f%s%s%s}",
            *first ? "" : ",\n", name, ph, id, pid, ts * 1e6, args ? ",\"args\":{" : "", args ? args : "",
            args ? "}" : "");
    *first = 0;
}

long long st_serve_write_request_trace(FILE *f, const st_serve_result *r, long long max, int after)
{
    int first = !after;
    long long n = 0;
    for (size_t i = 0; i < r->n_requests && n < max; i++, n++) {
        const st_req_out *q = &r->req[i];
        int pid = q->replica > 0 ? q->replica : 0;
        char nm[48], args[160];
        snprintf(nm, sizeof nm, "request %zu", i);
        snprintf(args, sizeof args, "\"model\":%d,\"input_toks\":%d,\"output_toks\":%d,\"preemptions\":%d,"
                 "\"cached_tokens\":%d", q->model, q->in, q->out, q->preemptions, q->cached_tokens);
        async_event(f, &first, nm, 'b', i, pid, q->arrival, args);
        /* its phases, each from where the last ended (a preempted request's
         * recompute is inside its decode span, as its tokens say) */
        double s = q->scheduled > q->arrival ? q->scheduled : q->arrival;
        double t1 = q->first > s ? q->first : s, t2 = q->done > t1 ? q->done : t1;
        async_event(f, &first, "queued", 'b', i, pid, q->arrival, NULL);
        async_event(f, &first, "queued", 'e', i, pid, s, NULL);
        async_event(f, &first, "prefill", 'b', i, pid, s, NULL);
        async_event(f, &first, "prefill", 'e', i, pid, t1, NULL);
        if (q->out > 1) {
            async_event(f, &first, "decode", 'b', i, pid, t1, NULL);
            async_event(f, &first, "decode", 'e', i, pid, t2, NULL);
        }
        async_event(f, &first, nm, 'e', i, pid, t2, NULL);
    }
    /* name the replicas' processes */
    int last = -1;
    for (size_t i = 0; i < r->n_requests; i++)
        last = r->req[i].replica > last ? r->req[i].replica : last;
    for (int p = 0; p <= last; p++) {
        fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"replica %d\"}}",
                first ? "" : ",\n", p, p);
        first = 0;
    }
    return n;
}

static void hist(const st_serve_result *r, int which, st_serve_summary *o)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < r->n_requests; i++) {
        const st_req_out *q = &r->req[i];
        if (which == 1 && q->out <= 1)
            continue;
        double v = which == 0 ? q->first - q->arrival : (q->done - q->first) / (q->out - 1);
        if (v > 0 && v < lo)
            lo = v;
        if (v > hi)
            hi = v;
    }
    if (!(hi > 0) || !isfinite(lo))
        return;
    if (hi <= lo * 1.0001)
        hi = lo * 1.01;
    o->hist_lo[which] = lo;
    o->hist_hi[which] = hi;
    double span = log(hi / lo);
    for (size_t i = 0; i < r->n_requests; i++) {
        const st_req_out *q = &r->req[i];
        if (which == 1 && q->out <= 1)
            continue;
        double v = which == 0 ? q->first - q->arrival : (q->done - q->first) / (q->out - 1);
        int b = v <= lo ? 0 : (int)(log(v / lo) / span * ST_SERVE_HIST);
        if (b >= ST_SERVE_HIST)
            b = ST_SERVE_HIST - 1;
        o->hist[which][b]++;
    }
}

void st_serve_summarize(const st_serve_result *r, st_serve_summary *o)
{
    memset(o, 0, sizeof *o);
    o->ttft = r->ttft;
    o->tpot = r->tpot;
    o->itl = r->itl;
    o->e2e = r->e2e;
    o->queue = r->queue;
    hist(r, 0, o);
    hist(r, 1, o);
    /* KV use: every sample when they fit, else evenly thinned */
    size_t n = r->n_kv, step = (n + ST_SERVE_KV_POINTS - 1) / ST_SERVE_KV_POINTS;
    if (step < 1)
        step = 1;
    for (size_t i = 0; i < n && o->n_kv < ST_SERVE_KV_POINTS; i += step) {
        o->kv_t[o->n_kv] = (float)r->kv[i].t;
        o->kv_used[o->n_kv] = r->kv[i].used;
        o->kv_running[o->n_kv] = r->kv[i].running;
        o->kv_waiting[o->n_kv] = r->kv[i].waiting;
        o->n_kv++;
    }
    o->throughput_tok_s = r->throughput_tok_s;
    o->throughput_req_s = r->throughput_req_s;
    o->goodput_req_s = r->goodput_req_s;
    o->slo_attainment = r->slo_attainment;
    o->duration_s = r->duration_s;
    o->prefix_hit_ratio = r->prefix_hit_ratio;
    o->spec_tokens_per_step = r->spec_tokens_per_step;
    o->mfu = r->mfu;
    o->kv_peak_frac = r->kv_peak_frac;
    o->preemptions = r->preemptions;
    o->kv_blocks = r->kv_blocks;
    o->n_requests = r->n_requests;
}
