/* The sweep: metrics, the parameter table, the evaluator table, point
 * addressing (grid or seeded random) and constraint checks. */
#include "config.h"
#include "explore/evaluators.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[ST_METRIC_COUNT] = {
    "latency", "energy", "edp", "throughput", "memory", "cost", "mfu", "ttft", "tpot", "goodput",
};
static const char *const metric_units[ST_METRIC_COUNT] = {
    "s", "J", "J*s", "/s", "B", "dev-s", "", "s", "s", "/s",
};

const char *st_metric_name(st_metric m) { return (unsigned)m < ST_METRIC_COUNT ? metric_names[m] : "?"; }
const char *st_metric_unit(st_metric m) { return (unsigned)m < ST_METRIC_COUNT ? metric_units[m] : ""; }
int st_metric_maximize(st_metric m) { return m == ST_M_THROUGHPUT || m == ST_M_MFU || m == ST_M_GOODPUT; }

int st_metric_parse(const char *s, st_metric *out)
{
    for (int i = 0; i < ST_METRIC_COUNT; i++)
        if (strcmp(s, metric_names[i]) == 0) {
            *out = (st_metric)i;
            return 0;
        }
    return ST_EINVAL;
}


/* The parameter table: every name a sweep file may use. */
static const st_param_info params[ST_PARAM_COUNT] = {
    [ST_P_WORKLOAD] = {"workload", ST_PK_WORKLOAD, 0, 0, "workload id, name or path"},
    [ST_P_PHASE] = {"phase", ST_PK_PHASE, 0, 0, "prefill, decode or train"},
    [ST_P_BATCH] = {"batch", ST_PK_INT, 1, 1 << 20, "sequences (or images) per step"},
    [ST_P_SEQ] = {"seq", ST_PK_INT, 1, 1 << 24, "tokens per sequence"},
    [ST_P_KV] = {"kv", ST_PK_INT, 0, 1 << 24, "decode: cached tokens per sequence"},
    [ST_P_DTYPE] = {"dtype", ST_PK_DTYPE, 0, 0, "compute datatype"},
    [ST_P_ATTN] = {"attn", ST_PK_ATTN, 0, 0, "eager, flash or flash3"},
    [ST_P_FUSED] = {"fused", ST_PK_BOOL, 0, 1, "compiled mode (fused elementwise, launch-only dispatch)"},
    [ST_P_GPU] = {"gpu", ST_PK_GPU, 0, 0, "GPU preset"},
    [ST_P_SMS] = {"sms", ST_PK_INT, 1, 4096, "SM (compute unit) count; peaks scale with it"},
    [ST_P_CLOCK_SCALE] = {"clock_scale", ST_PK_NUM, 0.05, 20, "clock multiplier; peaks scale with it"},
    [ST_P_BW_SCALE] = {"bw_scale", ST_PK_NUM, 0.05, 20, "memory bandwidth multiplier"},
    [ST_P_MEM_SCALE] = {"mem_scale", ST_PK_NUM, 0.05, 20, "memory capacity multiplier"},
    [ST_P_ARCH] = {"arch", ST_PK_ARCH, 0, 0, "accelerator preset"},
    [ST_P_PE_X] = {"pe_x", ST_PK_INT, 1, 4096, "PE array columns"},
    [ST_P_PE_Y] = {"pe_y", ST_PK_INT, 1, 4096, "PE array rows"},
    [ST_P_GLB_KIB] = {"glb_kib", ST_PK_NUM, 1, 1 << 22, "global buffer (first SRAM level) size, KiB"},
    [ST_P_SPAD_SCALE] = {"spad_scale", ST_PK_NUM, 0.0625, 64, "multiplier on every register-file depth"},
    [ST_P_CLOCK_MHZ] = {"clock_mhz", ST_PK_NUM, 1, 1e5, "accelerator clock, MHz"},
    [ST_P_OBJECTIVE] = {"objective", ST_PK_AOBJ, 0, 0, "mapper objective: edp, energy or delay"},
    [ST_P_MAPPER_EVALS] = {"mapper_evals", ST_PK_INT, 10, 1e9, "mappings evaluated per layer"},
    [ST_P_SEED] = {"mapper_seed", ST_PK_INT, 0, 1e15, "mapper seed"},
    [ST_P_CLUSTER] = {"cluster", ST_PK_CLUSTER, 0, 0, "cluster or node preset"},
    [ST_P_GPUS] = {"gpus", ST_PK_INT, 1, 1 << 20, "GPUs used"},
    [ST_P_DP] = {"dp", ST_PK_INT, 1, 1 << 20, "data-parallel degree (default: gpus / (tp pp cp))"},
    [ST_P_TP] = {"tp", ST_PK_INT, 1, 1024, "tensor-parallel degree"},
    [ST_P_PP] = {"pp", ST_PK_INT, 1, 1024, "pipeline stages"},
    [ST_P_CP] = {"cp", ST_PK_INT, 1, 1024, "context-parallel degree (train: > 1 with fused attention)"},
    [ST_P_EP] = {"ep", ST_PK_INT, 1, 1024, "expert-parallel degree"},
    [ST_P_SP] = {"sp", ST_PK_BOOL, 0, 1, "Megatron sequence parallelism"},
    [ST_P_ZERO] = {"zero", ST_PK_INT, 0, 3, "ZeRO stage"},
    [ST_P_RECOMPUTE] = {"recompute", ST_PK_RECOMPUTE, 0, 0, "none, selective or full"},
    [ST_P_MICROBATCHES] = {"microbatches", ST_PK_INT, 1, 1 << 20, "microbatches per iteration"},
    [ST_P_GLOBAL_BATCH] = {"global_batch", ST_PK_INT, 1, 1 << 24, "sequences per iteration"},
    [ST_P_SCHEDULE] = {"schedule", ST_PK_SCHEDULE, 0, 0, "1f1b, gpipe or interleaved"},
    [ST_P_CHUNKS] = {"chunks", ST_PK_INT, 1, 64, "interleaved: model chunks per stage"},
    [ST_P_LORA] = {"lora", ST_PK_INT, 0, 65536, "LoRA rank (0: full training)"},
    [ST_P_FLASH] = {"flash", ST_PK_BOOL, 0, 1, "FlashAttention"},
    [ST_P_SCHED] = {"sched", ST_PK_SCHED, 0, 0, "serving scheduler: vllm, vllm-v0, sarathi, orca or static"},
    [ST_P_MAX_SEQS] = {"max_num_seqs", ST_PK_INT, 1, 65536, "running requests per replica"},
    [ST_P_MAX_TOKENS] = {"max_batched_tokens", ST_PK_INT, 1, 1 << 24, "token budget per step"},
    [ST_P_CHUNK] = {"chunk", ST_PK_INT, 1, 1 << 24, "sarathi: chunk size (token budget)"},
    [ST_P_BLOCK] = {"block_size", ST_PK_INT, 1, 1024, "KV block size, tokens"},
    [ST_P_MEM_UTIL] = {"gpu_mem_util", ST_PK_NUM, 0.01, 1, "fraction of GPU memory for the engine"},
    [ST_P_MAX_MODEL_LEN] = {"max_model_len", ST_PK_INT, 1, 1 << 24, "longest request, tokens (default: the model's context)"},
    [ST_P_QPS] = {"qps", ST_PK_NUM, 1e-6, 1e7, "Poisson arrival rate, requests/s"},
    [ST_P_REQUESTS] = {"requests", ST_PK_INT, 1, (double)ST_SERVE_MAX_REQUESTS, "requests per run"},
    [ST_P_LENGTHS] = {"lengths", ST_PK_LENGTHS, 0, 0, "length distribution (strata serve --lengths)"},
    [ST_P_QUANT] = {"quant", ST_PK_QUANT, 0, 0, "none, w4a16, w8a8 or fp8"},
    [ST_P_SPEC_K] = {"spec_k", ST_PK_INT, 0, 16, "speculative decoding: draft tokens per step"},
    [ST_P_SPEC_ACCEPT] = {"spec_accept", ST_PK_NUM, 0, 1, "speculative decoding: acceptance per token"},
    [ST_P_PREFIX_CACHE] = {"prefix_cache", ST_PK_BOOL, 0, 1, "reuse cached prefix blocks"},
    [ST_P_RESERVE_FULL_ISL] = {"reserve_full_isl", ST_PK_BOOL, 0, 1,
                               "vllm: admit a request only when its whole prompt's KV blocks fit (vLLM 0.19)"},
    [ST_P_ASYNC_SCHED] = {"async_scheduling", ST_PK_BOOL, 0, 1,
                          "vllm: schedule each batch as the step before it starts (vLLM 0.19's batch queue)"},
    [ST_P_SLO_TTFT] = {"slo_ttft", ST_PK_NUM, 0, 1e6, "goodput SLO on TTFT, s (0: none)"},
    [ST_P_SLO_TPOT] = {"slo_tpot", ST_PK_NUM, 0, 1e6, "goodput SLO on TPOT, s (0: none)"},
    [ST_P_SERVE_SEED] = {"seed", ST_PK_INT, 0, 1e15, "arrival, length and acceptance seed"},
};

const st_param_info *st_param_info_of(st_param p) { return (unsigned)p < ST_PARAM_COUNT ? &params[p] : NULL; }

int st_param_parse(const char *name, st_param *out)
{
    for (int i = 0; i < ST_PARAM_COUNT; i++)
        if (strcmp(name, params[i].name) == 0) {
            *out = (st_param)i;
            return 0;
        }
    return ST_EINVAL;
}

/* ---- the evaluator table ------------------------------------------------------- */
static const st_param gpu_params[] = {
    ST_P_GPU, ST_P_WORKLOAD, ST_P_PHASE, ST_P_BATCH, ST_P_SEQ, ST_P_KV, ST_P_DTYPE, ST_P_ATTN,
    ST_P_FUSED, ST_P_SMS, ST_P_CLOCK_SCALE, ST_P_BW_SCALE, ST_P_MEM_SCALE,
};
static const st_param accel_params[] = {
    ST_P_ARCH, ST_P_WORKLOAD, ST_P_PHASE, ST_P_BATCH, ST_P_SEQ, ST_P_KV, ST_P_PE_X, ST_P_PE_Y,
    ST_P_GLB_KIB, ST_P_SPAD_SCALE, ST_P_CLOCK_MHZ, ST_P_OBJECTIVE, ST_P_MAPPER_EVALS, ST_P_SEED,
};
static const st_param train_params[] = {
    ST_P_CLUSTER, ST_P_WORKLOAD, ST_P_GPUS, ST_P_DP, ST_P_TP, ST_P_PP, ST_P_CP, ST_P_EP, ST_P_SP,
    ST_P_ZERO, ST_P_RECOMPUTE, ST_P_MICROBATCHES, ST_P_GLOBAL_BATCH, ST_P_SEQ, ST_P_DTYPE,
    ST_P_SCHEDULE, ST_P_CHUNKS, ST_P_LORA, ST_P_FLASH, ST_P_ATTN, ST_P_FUSED,
};
static const st_param serve_params[] = {
    ST_P_GPU, ST_P_WORKLOAD, ST_P_CLUSTER, ST_P_TP, ST_P_PP, ST_P_CP, ST_P_DP, ST_P_EP, ST_P_SCHED, ST_P_MAX_SEQS,
    ST_P_MAX_TOKENS, ST_P_CHUNK, ST_P_BLOCK, ST_P_MEM_UTIL, ST_P_QPS, ST_P_REQUESTS, ST_P_LENGTHS,
    ST_P_QUANT, ST_P_SPEC_K, ST_P_SPEC_ACCEPT, ST_P_PREFIX_CACHE, ST_P_SLO_TTFT, ST_P_SLO_TPOT,
    ST_P_SERVE_SEED, ST_P_ATTN, ST_P_MAX_MODEL_LEN, ST_P_RESERVE_FULL_ISL, ST_P_ASYNC_SCHED,
};

/* latency .. mfu; the serving metrics only from the serving evaluator */
#define ALL_METRICS ((1u << ST_M_TTFT) - 1)
#define SERVE_METRICS ((1u << ST_METRIC_COUNT) - 1)

static const struct evaluator {
    const char *name;
    const st_param *params;
    size_t n_params;
    unsigned metrics;
    int (*eval)(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d, st_error *err);
} evaluators[ST_SWEEP_KIND_COUNT] = {
    [ST_SWEEP_GPU] = {"gpu", gpu_params, sizeof gpu_params / sizeof *gpu_params, ALL_METRICS, st_explore_eval_gpu},
    [ST_SWEEP_ACCEL] = {"accel", accel_params, sizeof accel_params / sizeof *accel_params, ALL_METRICS,
                        st_explore_eval_accel},
    [ST_SWEEP_TRAIN] = {"train", train_params, sizeof train_params / sizeof *train_params, ALL_METRICS,
                        st_explore_eval_train},
    [ST_SWEEP_SERVE] = {"serve", serve_params, sizeof serve_params / sizeof *serve_params, SERVE_METRICS,
                        st_explore_eval_serve},
};

const char *st_sweep_kind_name(st_sweep_kind k)
{
    return (unsigned)k < ST_SWEEP_KIND_COUNT ? evaluators[k].name : "?";
}

int st_sweep_kind_parse(const char *s, st_sweep_kind *out)
{
    for (int i = 0; i < ST_SWEEP_KIND_COUNT; i++)
        if (strcmp(s, evaluators[i].name) == 0) {
            *out = (st_sweep_kind)i;
            return 0;
        }
    return ST_EINVAL;
}

int st_sweep_kind_takes(st_sweep_kind k, st_param p)
{
    if ((unsigned)k >= ST_SWEEP_KIND_COUNT)
        return 0;
    for (size_t i = 0; i < evaluators[k].n_params; i++)
        if (evaluators[k].params[i] == p)
            return 1;
    return 0;
}

unsigned st_sweep_kind_metrics(st_sweep_kind k)
{
    return (unsigned)k < ST_SWEEP_KIND_COUNT ? evaluators[k].metrics : 0;
}

/* ---- the sweep ------------------------------------------------------------------ */
void st_sweep_init(st_sweep *s, st_sweep_kind kind)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->n_obj = 2;
    s->obj[0] = ST_M_LATENCY;
    s->obj[1] = kind == ST_SWEEP_TRAIN ? ST_M_MEMORY : kind == ST_SWEEP_SERVE ? ST_M_THROUGHPUT : ST_M_ENERGY;
    s->seed = 1;
}

void st_sweep_free(st_sweep *s)
{
    for (size_t a = 0; a < s->n_axes; a++)
        free(s->axes[a].v);
    for (size_t i = 0; i < s->n_models; i++)
        st_model_free(&s->models[i]);
    free(s->gpus);
    free(s->edges);
    free(s->is_edge);
    s->edges = NULL;
    s->is_edge = NULL;
    free(s->accels);
    free(s->clusters);
    free(s->models);
    s->n_axes = s->n_models = s->n_gpus = s->n_accels = s->n_clusters = 0;
    s->gpus = NULL;
    s->accels = NULL;
    s->clusters = NULL;
    s->models = NULL;
}

#define MAX_POINTS (1LL << 40)

int st_sweep_finish(st_sweep *s, st_error *err)
{
    unsigned have = st_sweep_kind_metrics(s->kind);
    for (int i = 0; i < s->n_obj; i++)
        if (!(have & (1u << s->obj[i])))
            return st_error_set(err, ST_EINVAL, "objective %s is not defined for evaluate: %s",
                                st_metric_name(s->obj[i]), st_sweep_kind_name(s->kind));
    if (s->random) {
        s->points = s->samples;
        return 0;
    }
    long long n = 1;
    for (size_t a = 0; a < s->n_axes; a++) {
        if (s->axes[a].n == 0)
            return st_error_set(err, ST_EINVAL, "axis %s has no values", st_param_info_of(s->axes[a].param)->name);
        if (n > MAX_POINTS / (long long)s->axes[a].n)
            return st_error_set(err, ST_EINVAL, "the grid has more than 2^40 points; sample it instead "
                                                "(sampling: {random: N, seed: S})");
        n *= (long long)s->axes[a].n;
    }
    s->points = n;
    return 0;
}

size_t st_sweep_axis_index(const st_sweep *s, long long idx, size_t a)
{
    const st_sweep_axis *ax = &s->axes[a];
    if (s->random)
        return (size_t)(st_mix64(s->seed ^ st_mix64((unsigned long long)idx * 0x100000001b3ULL + a)) % ax->n);
    long long stride = 1;
    for (size_t b = a + 1; b < s->n_axes; b++)
        stride *= (long long)s->axes[b].n;
    return (size_t)((idx / stride) % (long long)ax->n);
}

void st_sweep_point_values(const st_sweep *s, long long idx, const st_pvalue **vals)
{
    for (int p = 0; p < ST_PARAM_COUNT; p++)
        vals[p] = s->base_set[p] ? &s->base[p] : NULL;
    for (size_t a = 0; a < s->n_axes; a++)
        vals[s->axes[a].param] = &s->axes[a].v[st_sweep_axis_index(s, idx, a)];
}

static int meets(const st_constraint *c, const st_point *pt)
{
    if (c->fits)
        return pt->fits;
    double v = pt->m[c->m];
    if (isnan(v))
        return 0;
    return c->cmp == ST_CMP_LE ? v <= c->bound : v >= c->bound;
}

int st_sweep_eval(const st_sweep *s, long long idx, st_point *pt, st_detail *d, st_error *err)
{
    const st_pvalue *vals[ST_PARAM_COUNT];
    memset(pt, 0, sizeof *pt);
    for (int i = 0; i < ST_METRIC_COUNT; i++)
        pt->m[i] = NAN;
    pt->lo_s = pt->hi_s = NAN;
    if (d) {
        memset(d, 0, sizeof *d);
        d->kind = s->kind;
    }
    if (idx < 0 || idx >= s->points)
        return st_error_set(err, ST_EINVAL, "point %lld is outside the sweep (0..%lld)", idx, s->points - 1);
    st_sweep_point_values(s, idx, vals);
    int rc = evaluators[s->kind].eval(s, vals, pt, d, err);
    if (rc == ST_ENOMEM || rc == ST_ECANCELED)
        return rc;
    if (rc) {
        pt->status = ST_PT_INVALID;
        if (d) {
            snprintf(d->note, sizeof d->note, "%s", err->msg);
            d->pt = *pt;
        }
        return 0; /* an invalid point is a result, not a failure */
    }
    pt->status = ST_PT_OK;
    pt->feasible = 1;
    for (int i = 0; i < s->n_obj; i++)
        if (!isfinite(pt->m[s->obj[i]]))
            pt->feasible = 0;
    for (int c = 0; c < s->n_con; c++)
        if (!meets(&s->con[c], pt))
            pt->feasible = 0;
    if (d)
        d->pt = *pt;
    return 0;
}
