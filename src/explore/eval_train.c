/* The train evaluator: one training iteration under a parallel split (train
 * layer, which calls compose, gpu and net). */
#include "config.h"
#include "explore/evaluators.h"

#include <math.h>
#include <string.h>

static int ival(const st_pvalue *v, int dflt) { return v ? (int)v->num : dflt; }

int st_explore_eval_train(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                          st_error *err)
{
    st_cluster c = s->clusters[v[ST_P_CLUSTER]->obj];
    const st_model *m = &s->models[v[ST_P_WORKLOAD]->obj];
    int per_node = c.node.gpus > 0 ? c.node.gpus : 1;
    int gpus = ival(v[ST_P_GPUS], per_node * c.nodes);
    if (v[ST_P_GPUS]) /* as many nodes as the GPUs need */
        c.nodes = (gpus + per_node - 1) / per_node;
    st_train_cfg k;
    st_train_cfg_default(&k, m, gpus);
    k.tp = ival(v[ST_P_TP], 1);
    k.pp = ival(v[ST_P_PP], 1);
    k.cp = ival(v[ST_P_CP], 1);
    k.ep = ival(v[ST_P_EP], 1);
    if (v[ST_P_DP]) {
        k.dp = (int)v[ST_P_DP]->num;
        long long all = (long long)k.dp * k.tp * k.pp * k.cp;
        if (all != gpus) /* as `strata train` refuses a --dp that leaves GPUs out */
            return st_error_set(err, ST_EINVAL, "dp %d x tp %d x pp %d x cp %d = %lld, but gpus is %d%s", k.dp, k.tp,
                                k.pp, k.cp, all, gpus, v[ST_P_GPUS] ? "" : " (the cluster's, without gpus)");
    } else {
        long long rest = (long long)k.tp * k.pp * k.cp;
        if (gpus % rest)
            return st_error_set(err, ST_EINVAL, "tp %d x pp %d x cp %d does not divide %d GPUs", k.tp, k.pp,
                                k.cp, gpus);
        k.dp = (int)(gpus / rest);
    }
    k.sp = ival(v[ST_P_SP], 0);
    k.zero = ival(v[ST_P_ZERO], 0);
    if (v[ST_P_RECOMPUTE])
        k.recompute = (st_recompute)v[ST_P_RECOMPUTE]->num;
    /* as `strata train` defaults them */
    st_train_default_batches(&k, v[ST_P_MICROBATCHES] ? (long long)v[ST_P_MICROBATCHES]->num : 0,
                             v[ST_P_GLOBAL_BATCH] ? (long long)v[ST_P_GLOBAL_BATCH]->num : 0);
    if (v[ST_P_SEQ])
        k.seq = (long long)v[ST_P_SEQ]->num;
    if (v[ST_P_DTYPE])
        k.dtype = (st_dtype)v[ST_P_DTYPE]->num;
    if (v[ST_P_SCHEDULE])
        k.sched = (st_pp_sched)v[ST_P_SCHEDULE]->num;
    k.chunks = ival(v[ST_P_CHUNKS], 1);
    if (v[ST_P_CHUNKS] && k.sched != ST_PP_INTERLEAVED)
        return st_error_set(err, ST_EINVAL, "chunks sets the model chunks per device of the interleaved schedule, "
                            "but the schedule is %s: add schedule: interleaved", st_pp_sched_name(k.sched));
    k.lora_rank = ival(v[ST_P_LORA], 0);
    k.flash = ival(v[ST_P_FLASH], 0);
    if (v[ST_P_ATTN]) { /* attn (eager, flash, flash3) says it all, where given */
        k.flash = st_attn_fused((st_attn_impl)v[ST_P_ATTN]->num);
        k.fa3 = v[ST_P_ATTN]->num == ST_ATTN_FLASH3;
    }
    k.fused = ival(v[ST_P_FUSED], 0);
    int rc = st_train_check(m, &c, &k, err);
    if (rc)
        return rc;
    st_train_result local, *r = d ? &d->train : &local;
    if ((rc = st_train_eval(m, &c, &s->coef, &k, r, NULL, err)))
        return rc;
    double t = r->iteration_s, tokens = (double)k.global_batch * (double)k.seq;
    /* busy: the iteration less the pipeline bubble and exposed communication */
    double busy = t * (1 - r->bubble_fraction) - r->comm_s;
    pt->m[ST_M_LATENCY] = t;
    pt->lo_s = r->lo_s;
    pt->hi_s = r->hi_s;
    pt->m[ST_M_ENERGY] = r->gpus * st_explore_gpu_energy(c.node.gpu.tdp_w, t, busy > 0 ? busy : 0);
    pt->m[ST_M_EDP] = pt->m[ST_M_ENERGY] * t;
    pt->m[ST_M_THROUGHPUT] = r->tokens_per_s;
    pt->m[ST_M_MEMORY] = r->memory_per_gpu_bytes;
    pt->m[ST_M_COST] = r->gpus * t / tokens * 1000; /* GPU-seconds per 1000 tokens */
    pt->m[ST_M_MFU] = r->mfu;
    pt->fits = !r->mem.oom;
    if (d)
        snprintf(d->note, sizeof d->note, "%s on %d x %s: dp %d tp %d pp %d cp %d ep %d%s zero %d, %s, %lld "
                 "microbatches", m->id, r->gpus, c.node.gpu.id, k.dp, k.tp, k.pp, k.cp, k.ep, k.sp ? " sp" : "",
                 k.zero, st_recompute_name(k.recompute), k.microbatches);
    return 0;
}
