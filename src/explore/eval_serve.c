/* The serve evaluator: one serving simulation per point (serve layer, which
 * calls compose, gpu and net). Defaults where the sweep is silent: 1,000
 * Poisson requests at 10/s with prompts uniform over 128-2048 tokens and
 * outputs over 64-512, seed 42, and vLLM's engine defaults (serve.c). */
#include "config.h"
#include "explore/evaluators.h"
#include "io/io.h"

#include <math.h>
#include <string.h>

#define DEFAULT_LENGTHS "uniform:128-2048,64-512"

static double nval(const st_pvalue *v, double dflt) { return v ? v->num : dflt; }

int st_explore_eval_serve(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                          st_error *err)
{
    const st_model *m = &s->models[v[ST_P_WORKLOAD]->obj];
    const st_gpu *g = &s->gpus[v[ST_P_GPU]->obj];
    st_serve_cfg c;
    st_serve_cfg_default(&c);
    c.model = m;
    c.gpu = g;
    c.coef = &s->coef;
    c.tp = (int)nval(v[ST_P_TP], 1);
    c.pp = (int)nval(v[ST_P_PP], 1);
    c.dp = (int)nval(v[ST_P_DP], 1);
    c.cp = (int)nval(v[ST_P_CP], 1);
    /* expert parallelism spans the DP x TP ranks, as vLLM's
     * --enable-expert-parallel lays it out (strata serve --ep): ep is 1 or
     * dp x tp, and any other degree is not a layout vLLM can run */
    double epv = nval(v[ST_P_EP], 1);
    if (epv > 1 && epv != (double)c.dp * c.tp)
        return st_error_set(err, ST_EINVAL, "ep %g: serving's expert parallelism spans the DP x TP ranks (vLLM's "
                            "--enable-expert-parallel), so ep is 1 or dp x tp = %d", epv, c.dp * c.tp);
    c.ep = epv > 1 ? c.dp * c.tp : 1;
    if (v[ST_P_SCHED])
        c.sched = (st_sched)v[ST_P_SCHED]->num;
    c.max_num_seqs = (int)nval(v[ST_P_MAX_SEQS], c.max_num_seqs);
    c.max_batched_tokens = (long long)nval(v[ST_P_MAX_TOKENS], (double)c.max_batched_tokens);
    c.max_model_len = (long long)nval(v[ST_P_MAX_MODEL_LEN], 0);
    st_serve_resolve_batch(&c); /* axes not swept: vLLM's defaults for the GPU */
    c.chunk = (long long)nval(v[ST_P_CHUNK], (double)c.chunk);
    c.block_size = (int)nval(v[ST_P_BLOCK], c.block_size);
    c.gpu_mem_util = nval(v[ST_P_MEM_UTIL], c.gpu_mem_util);
    if (v[ST_P_QUANT])
        c.quant = (st_quant)v[ST_P_QUANT]->num;
    if (v[ST_P_ATTN]) {
        if (v[ST_P_ATTN]->num == ST_ATTN_EAGER)
            return st_error_set(err, ST_EINVAL, "attn: serving runs fused attention; choose flash or flash3 "
                                                "(without attn: FlashAttention-3 on Hopper, as vLLM)");
        c.fa3 = v[ST_P_ATTN]->num == ST_ATTN_FLASH3;
    }
    /* what `strata serve` refuses, a point refuses with its words */
    if (nval(v[ST_P_EP], 1) > 1 && (m->kind != ST_MODEL_TRANSFORMER || m->tf.experts <= 0))
        return st_error_set(err, ST_EINVAL, "ep needs a mixture-of-experts model; %s is dense", m->id);
    if (v[ST_P_CHUNK] && c.sched != ST_SCHED_SARATHI)
        return st_error_set(err, ST_EINVAL, "chunk is sarathi's step budget; under sched %s the budget is "
                            "max_batched_tokens", st_sched_name(c.sched));
    c.spec_k = (int)nval(v[ST_P_SPEC_K], 0);
    c.spec_accept = nval(v[ST_P_SPEC_ACCEPT], c.spec_accept);
    c.prefix_cache = (int)nval(v[ST_P_PREFIX_CACHE], c.prefix_cache);
    /* vLLM V1's own switches, as strata serve refuses them elsewhere */
    if ((v[ST_P_RESERVE_FULL_ISL] || v[ST_P_ASYNC_SCHED]) && c.sched != ST_SCHED_VLLM)
        return st_error_set(err, ST_EINVAL, "%s sets vLLM V1's %s; sched %s has none of them",
                            v[ST_P_RESERVE_FULL_ISL] ? "reserve_full_isl" : "async_scheduling",
                            v[ST_P_RESERVE_FULL_ISL] ? "admission gate" : "batch queue", st_sched_name(c.sched));
    c.reserve_full_isl = (int)nval(v[ST_P_RESERVE_FULL_ISL], c.reserve_full_isl);
    c.async_sched = (int)nval(v[ST_P_ASYNC_SCHED], c.async_sched);
    c.slo_ttft_s = nval(v[ST_P_SLO_TTFT], 0);
    c.slo_tpot_s = nval(v[ST_P_SLO_TPOT], 0);
    c.seed = (unsigned long long)nval(v[ST_P_SERVE_SEED], (double)c.seed);
    st_cluster cl;
    int need_net = c.tp * c.pp * c.cp > 1 || c.ep > 1;
    if (v[ST_P_CLUSTER]) {
        c.cluster = &s->clusters[v[ST_P_CLUSTER]->obj];
    } else if (need_net) {
        int rc = st_load_node_for_gpu(g->id, c.ep > 1 ? c.ep : c.tp * c.pp * c.cp, &cl, err);
        if (rc)
            return rc == ST_ENOTFOUND ? ST_EINVAL : rc;
        c.cluster = &cl;
    }
    int rc = st_serve_check(&c, err);
    if (rc)
        return rc;
    st_lenspec ls;
    if ((rc = st_lenspec_parse(v[ST_P_LENGTHS] ? v[ST_P_LENGTHS]->text : DEFAULT_LENGTHS, &ls, err)))
        return rc;
    st_arrivals a;
    memset(&a, 0, sizeof a);
    a.qps = nval(v[ST_P_QPS], 10);
    a.n = (size_t)nval(v[ST_P_REQUESTS], 1000);
    a.seed = c.seed;
    st_reqset rq;
    rc = st_requests_generate(&a, &ls, &rq, err);
    st_lenspec_free(&ls);
    if (rc)
        return rc;
    st_serve_result r;
    c.cancel = st_explore_cancel_flag(); /* a cancelled sweep stops the run */
    rc = st_serve_run(&c, &rq, &r, err);
    st_reqset_free(&rq);
    if (rc)
        return rc; /* does not fit, a request beyond the cache, ...: an invalid point */
    double out_tok = r.throughput_tok_s * r.duration_s;
    pt->m[ST_M_LATENCY] = r.e2e.mean;
    /* no error band: the serving layer does not propagate kernel spreads */
    /* board energy over the run, per request */
    double e = (double)r.gpus * st_explore_gpu_energy(g->tdp_w, r.duration_s, r.busy_frac * r.duration_s);
    pt->m[ST_M_ENERGY] = r.n_requests ? e / (double)r.n_requests : NAN;
    pt->m[ST_M_EDP] = pt->m[ST_M_ENERGY] * r.e2e.mean;
    pt->m[ST_M_THROUGHPUT] = r.throughput_tok_s;
    pt->m[ST_M_MEMORY] = r.weights_bytes_per_gpu + r.kv_peak_frac * (double)r.kv_blocks * r.kv_bytes_per_block;
    pt->m[ST_M_COST] = out_tok > 0 ? (double)r.gpus * r.duration_s / out_tok * 1000 : NAN;
    pt->m[ST_M_MFU] = r.mfu;
    /* no sample (one-token outputs have no TPOT): NaN, as serve --json's null */
    pt->m[ST_M_TTFT] = r.ttft.n ? r.ttft.mean : NAN;
    pt->m[ST_M_TPOT] = r.tpot.n ? r.tpot.mean : NAN;
    pt->m[ST_M_GOODPUT] = r.goodput_req_s;
    pt->fits = 1;
    if (d) {
        st_serve_summarize(&r, &d->serve);
        snprintf(d->note, sizeof d->note, "%s on %d x %s: %s, tp %d cp %d dp %d%s, %lld KV blocks, %lld preemptions",
                 m->id, r.gpus, g->id, st_sched_name(c.sched), c.tp, c.cp, c.dp, c.ep > 1 ? " ep" : "", r.kv_blocks,
                 r.preemptions);
    }
    st_serve_result_free(&r);
    return 0;
}
