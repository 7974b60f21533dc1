/* Plan search: enumerate parallel configurations, evaluate them on a thread
 * pool (each point written to its own slot, so any thread count gives the
 * same result), sort by time with memory as the constraint, mark the
 * time-memory Pareto front. */
#include "config.h"
#include "train/train.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct job {
    const st_model *m;
    const st_cluster *c;
    const st_gpu_coef *coef;
    st_train_memo *memo;
    st_plan_point *pts;
    int *ok;
    size_t n;
    int stride, first;
    size_t *done;             /* shared: configurations evaluated */
    const st_plan_opts *o;    /* the caller's (its progress), thread 0 only */
    double t0, last;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (size_t i = (size_t)j->first; i < j->n; i += (size_t)j->stride) {
        j->ok[i] = st_train_eval_memo(j->m, j->c, j->coef, &j->pts[i].cfg, &j->pts[i].r, NULL, j->memo, NULL) == 0;
        size_t d = __atomic_add_fetch(j->done, 1, __ATOMIC_RELAXED);
        if (j->o && j->o->progress) {
            double t = st_mono_s();
            if (t - j->last >= j->o->progress_every_s) {
                j->o->progress(j->o->progress_ctx, d, j->n, t - j->t0);
                j->last = t;
            }
        }
    }
    return NULL;
}

static int cmp_point(const void *a, const void *b)
{
    const st_plan_point *x = a, *y = b;
    if (x->r.mem.oom != y->r.mem.oom)
        return x->r.mem.oom - y->r.mem.oom;
    if (x->r.iteration_s != y->r.iteration_s)
        return x->r.iteration_s < y->r.iteration_s ? -1 : 1;
    return x->r.memory_per_gpu_bytes < y->r.memory_per_gpu_bytes ? -1 : x->r.memory_per_gpu_bytes > y->r.memory_per_gpu_bytes;
}

int st_plan(const st_model *m, const st_cluster *c, const st_gpu_coef *coef, const st_plan_opts *o,
            st_plan_point **out, size_t *n_out, st_error *err)
{
    *out = NULL, *n_out = 0;
    if (o->gpus < 1)
        return st_error_set(err, ST_EINVAL, "plan needs at least 1 GPU");
    if (m->kind != ST_MODEL_TRANSFORMER)
        return st_error_set(err, ST_EINVAL, "%s is not a transformer; the training layer (and its plan "
                            "search) models transformers", m->id);
    /* the reasons that rule out every configuration, said once */
    int rc = st_train_check_scope(m, c, o->gpus, o->seq, err);
    if (rc)
        return rc;
    size_t cap = 256, n = 0;
    st_plan_point *pts = malloc(cap * sizeof *pts);
    if (!pts)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    static const int mbs[] = {1, 2, 4, 8, 16};
    long long n_split = 0, n_check = 0;
    st_error first = {0};
    int same = 1;
    int G = c->node.gpus;
    for (int tp = 1; tp <= G && tp <= o->gpus; tp *= 2) {
        if (o->max_tp && tp > o->max_tp)
            break;
        for (int pp = 1; pp <= o->gpus / tp; pp++) {
            if (o->gpus % (tp * pp) || (o->max_pp && pp > o->max_pp))
                continue;
            for (int cp = 1; cp <= o->gpus / (tp * pp); cp *= 2) {
                if (o->gpus % (tp * pp * cp))
                    continue;
                int dp = o->gpus / (tp * pp * cp);
                int ep_max = m->tf.experts ? dp * cp : 1;
                for (int ep = 1; ep <= ep_max; ep *= 2)
                    for (size_t b = 0; b < sizeof mbs / sizeof mbs[0]; b++)
                        for (int rec = 0; rec < 3; rec++)
                            for (int zero = 0; zero <= (dp > 1 ? 3 : 0); zero++) {
                                st_train_cfg k;
                                st_train_cfg_default(&k, m, o->gpus);
                                k.dp = dp, k.tp = tp, k.pp = pp, k.cp = cp, k.ep = ep;
                                k.sp = tp > 1;
                                k.zero = zero;
                                k.recompute = (st_recompute)rec;
                                k.global_batch = o->global_batch;
                                k.seq = o->seq;
                                k.dtype = o->dtype;
                                k.flash = o->flash || o->fa3;
                                k.fa3 = o->fa3;
                                k.lora_rank = o->lora_rank;
                                k.torch_ver = o->torch_ver;
                                k.isolated = o->isolated;
                                if (o->global_batch % ((long long)dp * mbs[b])) {
                                    n_split++;
                                    continue;
                                }
                                k.microbatches = o->global_batch / ((long long)dp * mbs[b]);
                                st_error why;
                                if (st_train_check(m, c, &k, &why)) {
                                    /* keep the first reason, and whether every
                                     * rejection gave the same one */
                                    if (!n_check++)
                                        first = why;
                                    else if (strcmp(first.msg, why.msg))
                                        same = 0;
                                    continue;
                                }
                                if (n == cap) {
                                    st_plan_point *p = realloc(pts, 2 * cap * sizeof *p);
                                    if (!p) {
                                        free(pts);
                                        return st_error_set(err, ST_ENOMEM, "out of memory");
                                    }
                                    pts = p, cap *= 2;
                                }
                                memset(&pts[n], 0, sizeof pts[n]);
                                pts[n++].cfg = k;
                            }
            }
        }
    }
    if (!n) {
        free(pts);
        if (n_check && !n_split)
            return st_error_set(err, ST_EINVAL, "no valid configuration of %s on %d GPUs: %s%s", m->id, o->gpus,
                                first.msg, same ? "" : " (the first of several reasons)");
        if (!n_check)
            return st_error_set(err, ST_EINVAL, "no valid configuration of %s on %d GPUs: global batch %lld does not "
                                "split over the data-parallel ranks (dp x microbatch size 1-16 must divide it; dp is "
                                "GPUs / (tp x pp x cp))", m->id, o->gpus, o->global_batch);
        return st_error_set(err, ST_EINVAL, "no valid configuration of %s on %d GPUs with global batch %lld and "
                            "sequence %lld: %lld splits do not divide the batch, %lld break a rule (the first: %s)",
                            m->id, o->gpus, o->global_batch, o->seq, n_split, n_check, first.msg);
    }
    int *ok = calloc(n, sizeof *ok);
    int T = o->threads > 0 ? o->threads : 1;
    pthread_t *th = calloc((size_t)T, sizeof *th);
    job *jobs = calloc((size_t)T, sizeof *jobs);
    if (!ok || !th || !jobs) {
        free(ok), free(th), free(jobs), free(pts);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    int started = 0;
    st_train_memo *memo = st_train_memo_new();
    size_t done = 0;
    double t0 = st_mono_s();
    for (int t = 0; t < T; t++) {
        jobs[t] = (job){m, c, coef, memo, pts, ok, n, T, t, &done, t == 0 ? o : NULL, t0, t0};
        if (t > 0 && pthread_create(&th[t], NULL, worker, &jobs[t]) == 0)
            started++;
        else if (t > 0)
            jobs[t].stride = -1; /* not started: done below */
    }
    worker(&jobs[0]);
    for (int t = 1; t < T; t++) {
        if (jobs[t].stride < 0) {
            jobs[t].stride = T;
            worker(&jobs[t]);
        } else {
            pthread_join(th[t], NULL);
        }
    }
    (void)started;
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (ok[i])
            pts[w++] = pts[i];
    if (!w) {
        /* every configuration passed the checks but none evaluated (a
         * model too large for strata's counts): say why, by the first
         * configuration's error, the same for any thread count */
        st_train_result r;
        int e = st_train_eval_memo(m, c, coef, &pts[0].cfg, &r, NULL, memo, err);
        st_train_memo_free(memo);
        free(ok), free(th), free(jobs), free(pts);
        return e ? e : st_error_set(err, ST_EINVAL, "no configuration of %s on %d GPUs could be evaluated", m->id,
                                    o->gpus);
    }
    st_train_memo_free(memo);
    n = w;
    free(ok), free(th), free(jobs);
    qsort(pts, n, sizeof *pts, cmp_point);
    /* Pareto front of (time, memory) among those that fit: sorted by time,
     * a point is on it when it uses less memory than every faster point */
    double best_mem = 1e300;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].r.mem.oom)
            break;
        if (pts[i].r.memory_per_gpu_bytes < best_mem) {
            pts[i].pareto = 1;
            best_mem = pts[i].r.memory_per_gpu_bytes;
        }
    }
    *out = pts, *n_out = n;
    return 0;
}
