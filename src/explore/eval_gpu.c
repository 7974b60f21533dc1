/* The gpu evaluator: one step of a workload on one GPU (gpu + compose layers),
 * on a preset optionally rescaled (SMs, clock, bandwidth, capacity). */
#include "config.h"
#include "explore/evaluators.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double st_explore_gpu_energy(double tdp_w, double total_s, double busy_s)
{
    if (!(tdp_w > 0))
        return NAN;
    double idle = ST_GPU_IDLE_FRACTION * tdp_w;
    if (busy_s > total_s)
        busy_s = total_s;
    return idle * total_s + (tdp_w - idle) * busy_s;
}

/* Peaks scale with SMs x clock: both are per-SM-per-cycle rates times those. */
static void scale_peaks(st_gpu *g, double f)
{
    for (int t = 0; t < ST_DTYPE_COUNT; t++) {
        g->matrix[t].dense *= f;
        g->matrix[t].sparse *= f;
        g->vector[t] *= f;
    }
}

static void apply_hw(st_gpu *g, const st_pvalue *const *v)
{
    if (v[ST_P_SMS] && g->sm_count > 0) {
        scale_peaks(g, v[ST_P_SMS]->num / g->sm_count);
        g->sm_count = (int)v[ST_P_SMS]->num;
    }
    if (v[ST_P_CLOCK_SCALE]) {
        double c = v[ST_P_CLOCK_SCALE]->num;
        scale_peaks(g, c);
        g->boost_clock_hz *= c;
        g->base_clock_hz *= c;
    }
    if (v[ST_P_BW_SCALE])
        g->mem_bw *= v[ST_P_BW_SCALE]->num;
    if (v[ST_P_MEM_SCALE])
        g->mem_bytes *= v[ST_P_MEM_SCALE]->num;
}

int st_explore_eval_gpu(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                        st_error *err)
{
    int gi = v[ST_P_GPU]->obj;
    st_gpu g = s->gpus[gi];
    const st_model *m = &s->models[v[ST_P_WORKLOAD]->obj];
    apply_hw(&g, v);
    int edge = s->is_edge && s->is_edge[gi];
    st_edge e;
    if (edge) {
        /* the same rescaling on the device the edge model reads: cores and
         * clock scale its peaks, bandwidth and capacity as given */
        e = s->edges[gi];
        double f = 1;
        if (v[ST_P_SMS] && e.cores > 0)
            f *= v[ST_P_SMS]->num / e.cores, e.cores = (int)v[ST_P_SMS]->num;
        if (v[ST_P_CLOCK_SCALE])
            f *= v[ST_P_CLOCK_SCALE]->num, e.clock_hz *= v[ST_P_CLOCK_SCALE]->num;
        for (int t = 0; t < ST_DTYPE_COUNT; t++)
            e.peak[t].dense *= f, e.peak[t].sparse *= f;
        e.mem_bw = g.mem_bw;
        e.mem_bytes = g.mem_bytes;
    }
    st_gen_opts o;
    st_gen_opts_default(&o, m);
    if (v[ST_P_PHASE])
        o.phase = (st_phase)v[ST_P_PHASE]->num;
    if (v[ST_P_BATCH])
        o.batch = (long long)v[ST_P_BATCH]->num;
    if (v[ST_P_SEQ])
        o.seq = (long long)v[ST_P_SEQ]->num;
    if (v[ST_P_DTYPE])
        o.dtype = (st_dtype)v[ST_P_DTYPE]->num;
    else if (s->is_edge && s->is_edge[v[ST_P_GPU]->obj])
        o.dtype = st_edge_default_dtype(&s->edges[v[ST_P_GPU]->obj]);
    if (v[ST_P_ATTN])
        o.attn = (st_attn_impl)v[ST_P_ATTN]->num;
    /* what `strata eval` refuses, a point refuses with its words */
    char why[320];
    if (st_gen_refusal(m, o.phase, v[ST_P_SEQ] != NULL, v[ST_P_KV] != NULL, v[ST_P_ATTN] != NULL, "", why,
                       sizeof why))
        return st_error_set(err, ST_EINVAL, "%s", why);
    if (v[ST_P_KV])
        o.kv_len = (long long)v[ST_P_KV]->num;
    else if (o.phase == ST_PHASE_DECODE)
        o.kv_len = o.seq - 1;
    if (!st_gpu_supports(&g, o.dtype))
        return st_error_set(err, ST_EINVAL, "%s has no %s throughput", g.id, st_dtype_name(o.dtype));
    if (edge && (o.phase != ST_PHASE_PREFILL || (v[ST_P_FUSED] && v[ST_P_FUSED]->num)))
        return st_error_set(err, ST_EINVAL, "%s is an edge device: it runs a converted inference graph "
                                            "(phase prefill; batch norms folded and activations fused "
                                            "always, so fused does not apply)", g.id);
    st_oplist ops = {0, 0, NULL};
    int rc = st_model_ops(m, &o, &ops, err);
    if (rc)
        return rc;
    st_compose_opts co;
    st_compose_opts_default(&co);
    co.fused = v[ST_P_FUSED] ? (int)v[ST_P_FUSED]->num : 0;
    co.sustained = o.phase == ST_PHASE_TRAIN; /* as eval and train price a training step */
    if (edge) {
        co.edge = &e;
        co.edge_coef = &s->edge_coef;
    }
    st_step step_local, *step = d ? &d->step : &step_local;
    /* st_step is a few KiB: fine on a worker's stack */
    rc = st_compose(&g, &s->coef, &ops, &co, step, err);
    /* the memory `strata eval` reports for the same step */
    st_step_mem sm;
    if (!rc)
        st_step_memory(m, &g, &o, co.recompute, co.fused, &s->coef, &ops, &sm);
    double mem = rc ? 0 : sm.total;
    st_oplist_free(&ops);
    if (rc)
        return rc;
    double tokens = (double)o.batch;
    if (m->kind == ST_MODEL_TRANSFORMER && o.phase != ST_PHASE_DECODE)
        tokens *= (double)o.seq;
    double t = step->total_s, peak = st_gpu_peak(&g, o.dtype, 0);
    pt->m[ST_M_LATENCY] = t;
    pt->lo_s = step->lo_s;
    pt->hi_s = step->hi_s;
    pt->m[ST_M_ENERGY] = st_explore_gpu_energy(g.tdp_w, t, step->kernel_s);
    pt->m[ST_M_EDP] = pt->m[ST_M_ENERGY] * t;
    pt->m[ST_M_THROUGHPUT] = tokens / t;
    pt->m[ST_M_MEMORY] = mem;
    pt->m[ST_M_COST] = t / tokens * 1000; /* GPU-seconds per 1000 tokens (or samples) */
    pt->m[ST_M_MFU] = peak > 0 ? step->flops / t / peak : NAN;
    pt->fits = mem <= g.mem_bytes;
    if (d) {
        d->n_layers = step->n_layers < ST_DETAIL_MAX_LAYERS ? step->n_layers : ST_DETAIL_MAX_LAYERS;
        for (size_t i = 0; i < d->n_layers; i++) {
            st_detail_layer *l = &d->layers[i];
            snprintf(l->name, sizeof l->name, "%s", step->layers[i].layer);
            l->time_s = step->layers[i].time_s;
            l->sd_s = step->layers[i].sd_s;
            l->err_share = step->layers[i].err_share;
            l->count = (double)step->layers[i].kernels;
        }
        snprintf(d->note, sizeof d->note, "%s on %s, %s batch %lld seq %lld %s", m->id, g.id,
                 st_phase_name(o.phase), o.batch, o.phase == ST_PHASE_DECODE ? o.kv_len : o.seq,
                 st_dtype_name(o.dtype));
    }
    return 0;
}
