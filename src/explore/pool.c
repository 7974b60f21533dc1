/* The sweep pool: workers evaluate chunks of point indices; finished chunks
 * go through one queue to a single consumer that folds them into the front.
 * A byte on a pipe per finished chunk lets the consumer poll() the queue
 * together with its keyboard. Cancel is a flag checked between points. */
#include "config.h"
#include "explore/evaluators.h"
#include "explore/explore.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct range {
    long long a, b; /* offsets into pts, [a, b) */
} range;

struct st_sweep_run {
    const st_sweep *s;
    long long first, count, chunk;
    st_point *pts;
    int threads;
    pthread_t *tid;
    int started;           /* threads actually started */
    int pipe_fd[2];
    pthread_mutex_t mu;
    long long next;        /* next offset to hand out (mu) */
    range *queue;          /* finished chunks, FIFO (mu) */
    size_t q_head, q_tail, q_cap;
    int workers_left;      /* (mu) */
    int failed;            /* a worker hit ST_ENOMEM (mu) */
    st_error err;          /* (mu) */
    int cancel;            /* atomic */
    long long done;        /* atomic: points evaluated */
    /* consumer side */
    long long folded, valid, feasible;
    st_pareto front;
    int joined;
    struct timespec t0;
    double end_s; /* elapsed when the last point finished (0: running) */
};

static double now_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void notify(st_sweep_run *r)
{
    char c = 1;
    ssize_t w = write(r->pipe_fd[1], &c, 1);
    (void)w; /* a full pipe already wakes the consumer */
}

static _Thread_local const int *cancel_flag;
const int *st_explore_cancel_flag(void) { return cancel_flag; }
void st_explore_set_cancel_flag(const int *flag) { cancel_flag = flag; }

static void *worker(void *arg)
{
    st_sweep_run *r = arg;
    st_error err;
    st_explore_set_cancel_flag(&r->cancel);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        long long a = r->next, b = a + r->chunk;
        if (b > r->count)
            b = r->count;
        r->next = b;
        pthread_mutex_unlock(&r->mu);
        if (a >= b || __atomic_load_n(&r->cancel, __ATOMIC_RELAXED))
            break;
        long long i = a;
        int rc = 0;
        for (; i < b && !__atomic_load_n(&r->cancel, __ATOMIC_RELAXED); i++) {
            if ((rc = st_sweep_eval(r->s, r->first + i, &r->pts[i], NULL, &err)))
                break;
            __atomic_fetch_add(&r->done, 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_lock(&r->mu);
        if (i > a)
            r->queue[r->q_tail++] = (range){a, i};
        if (rc == ST_ECANCELED) /* a point stopped by the cancel: not a failure */
            rc = 0;
        if (rc && !r->failed) {
            r->failed = rc;
            r->err = err;
            __atomic_store_n(&r->cancel, 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&r->mu);
        notify(r);
        if (rc)
            break;
    }
    pthread_mutex_lock(&r->mu);
    r->workers_left--;
    pthread_mutex_unlock(&r->mu);
    notify(r);
    return NULL;
}

/* A run over points [first, first+count) with an empty front and no
 * threads or pipe yet, in *out; fails when the range is outside the sweep
 * or memory is short. */
static int run_new(const st_sweep *s, long long first, long long count, st_sweep_run **out, st_error *err)
{
    *out = NULL;
    if (first < 0 || count < 0 || first + count > s->points)
        return st_error_set(err, ST_EINVAL, "points %lld..%lld are outside the sweep (0..%lld)", first,
                            first + count - 1, s->points - 1);
    st_sweep_run *r = calloc(1, sizeof *r);
    if (!r)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    r->s = s;
    r->first = first;
    r->count = count;
    r->pipe_fd[0] = r->pipe_fd[1] = -1;
    int sign[ST_SWEEP_MAX_OBJ];
    for (int i = 0; i < s->n_obj; i++)
        sign[i] = st_metric_maximize(s->obj[i]) ? -1 : 1;
    st_pareto_init(&r->front, s->n_obj, sign);
    *out = r;
    return 0;
}

/* the front's members carry the flag the exports show */
static void mark_front(st_sweep_run *r)
{
    for (size_t j = 0; j < r->front.n; j++)
        r->pts[r->front.idx[j] - r->first].front = 1;
}

int st_sweep_start(const st_sweep *s, int threads, long long first, long long count, st_sweep_run **out,
                   st_error *err)
{
    *out = NULL;
    if (threads <= 0) {
        /* the cores this process may run on, not all the machine's: more
         * threads would only share them */
        threads = st_cpu_count();
    }
    if (threads > 1024)
        threads = 1024;
    st_sweep_run *r;
    int rc = run_new(s, first, count, &r, err);
    if (rc)
        return rc;
    r->threads = threads;
    /* chunks small enough for a live front and even load, large enough that
     * the queue is not the bottleneck */
    long long chunk = count / ((long long)threads * 64);
    r->chunk = chunk < 1 ? 1 : chunk > 512 ? 512 : chunk;
    r->q_cap = (size_t)(count / r->chunk + threads + 2);
    /* more point records than the machine's memory: refused before the
     * allocation (an allocator may abort rather than fail, as ASan's does) */
    double phys = st_phys_memory_bytes();
    int too_big = phys > 0 && (double)count * sizeof *r->pts > phys;
    r->pts = too_big ? NULL : calloc(count ? (size_t)count : 1, sizeof *r->pts);
    r->queue = calloc(r->q_cap, sizeof *r->queue);
    r->tid = calloc((size_t)threads, sizeof *r->tid);
    if (!r->pts || !r->queue || !r->tid) {
        st_sweep_run_free(r);
        return st_error_set(err, ST_ENOMEM, "%lld points need %.3g GB of point records, more than this machine "
                            "gives: %s", count, (double)count * sizeof *r->pts / 1e9,
                            s->random ? "sample fewer (a smaller random: N)"
                                      : "sample them (sampling: {random: N}) or run a part (strata sweep --range "
                                        "FIRST:END)");
    }
    if (pipe(r->pipe_fd)) {
        st_sweep_run_free(r);
        return st_error_set(err, ST_EIO, "pipe: %s", strerror(errno));
    }
    for (int k = 0; k < 2; k++) {
        fcntl(r->pipe_fd[k], F_SETFL, fcntl(r->pipe_fd[k], F_GETFL) | O_NONBLOCK);
        fcntl(r->pipe_fd[k], F_SETFD, FD_CLOEXEC);
    }
    pthread_mutex_init(&r->mu, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    r->workers_left = threads;
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&r->tid[t], NULL, worker, r)) {
            pthread_mutex_lock(&r->mu);
            r->workers_left -= threads - t;
            pthread_mutex_unlock(&r->mu);
            break;
        }
        r->started++;
    }
    if (!r->started) {
        st_sweep_run_free(r);
        return st_error_set(err, ST_ENOMEM, "cannot start a worker thread");
    }
    *out = r;
    return 0;
}

int st_sweep_notify_fd(const st_sweep_run *r) { return r->pipe_fd[0]; }

static void fold(st_sweep_run *r, range g, int *nomem)
{
    const st_sweep *s = r->s;
    double v[ST_SWEEP_MAX_OBJ];
    for (long long i = g.a; i < g.b; i++) {
        st_point *p = &r->pts[i];
        r->folded++;
        if (p->status != ST_PT_OK)
            continue;
        r->valid++;
        if (!p->feasible)
            continue;
        r->feasible++;
        for (int k = 0; k < s->n_obj; k++)
            v[k] = p->m[s->obj[k]];
        if (st_pareto_insert(&r->front, r->first + i, v) < 0)
            *nomem = 1;
    }
}

long long st_sweep_drain(st_sweep_run *r)
{
    char buf[256];
    while (read(r->pipe_fd[0], buf, sizeof buf) > 0)
        ;
    long long before = r->folded;
    int nomem = 0;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        int have = r->q_head < r->q_tail;
        range g = have ? r->queue[r->q_head++] : (range){0, 0};
        int finished = r->workers_left == 0 && r->q_head == r->q_tail;
        pthread_mutex_unlock(&r->mu);
        if (have)
            fold(r, g, &nomem);
        if (!have) {
            if (finished && r->end_s == 0) {
                r->end_s = now_s(&r->t0);
                if (r->end_s == 0)
                    r->end_s = 1e-9;
                mark_front(r);
            }
            break;
        }
    }
    return nomem ? ST_ENOMEM : r->folded - before;
}

int st_sweep_run_adopt(const st_sweep *s, long long first, long long count, st_point *pts, double elapsed_s,
                       st_sweep_run **out, st_error *err)
{
    *out = NULL;
    st_sweep_run *r;
    int rc = run_new(s, first, count, &r, err);
    if (rc) {
        free(pts);
        return rc;
    }
    r->pts = pts;
    r->joined = 1;
    r->done = count;
    clock_gettime(CLOCK_MONOTONIC, &r->t0);
    int nomem = 0;
    for (long long i = 0; i < count; i++)
        pts[i].front = 0; /* each process marked its own front */
    fold(r, (range){0, count}, &nomem);
    if (nomem) {
        st_sweep_run_free(r);
        return st_error_set(err, ST_ENOMEM, "out of memory for the front");
    }
    mark_front(r);
    r->end_s = elapsed_s > 0 ? elapsed_s : 1e-9;
    *out = r;
    return 0;
}

void st_sweep_get_progress(st_sweep_run *r, st_sweep_progress *p)
{
    memset(p, 0, sizeof *p);
    p->total = r->count;
    p->done = __atomic_load_n(&r->done, __ATOMIC_RELAXED);
    p->valid = r->valid;
    p->feasible = r->feasible;
    p->front = (long long)r->front.n;
    p->finished = r->end_s > 0;
    p->cancelled = __atomic_load_n(&r->cancel, __ATOMIC_RELAXED);
    p->elapsed_s = p->finished ? r->end_s : now_s(&r->t0);
    p->rate = p->elapsed_s > 0 ? (double)p->done / p->elapsed_s : 0;
    p->eta_s = p->rate > 0 ? (double)(p->total - p->done) / p->rate : NAN;
    if (p->finished)
        p->eta_s = 0;
}

void st_sweep_cancel(st_sweep_run *r) { __atomic_store_n(&r->cancel, 1, __ATOMIC_RELAXED); }

int st_sweep_wait(st_sweep_run *r)
{
    if (!r->joined) {
        for (int t = 0; t < r->started; t++)
            pthread_join(r->tid[t], NULL);
        r->joined = 1;
    }
    if (st_sweep_drain(r) < 0)
        return ST_ENOMEM;
    return r->failed;
}

void st_sweep_run_free(st_sweep_run *r)
{
    if (!r)
        return;
    if (r->started) {
        st_sweep_cancel(r);
        if (!r->joined)
            for (int t = 0; t < r->started; t++)
                pthread_join(r->tid[t], NULL);
        pthread_mutex_destroy(&r->mu);
    }
    for (int k = 0; k < 2; k++)
        if (r->pipe_fd[k] >= 0)
            close(r->pipe_fd[k]);
    st_pareto_free(&r->front);
    free(r->pts);
    free(r->queue);
    free(r->tid);
    free(r);
}

const st_point *st_sweep_points(const st_sweep_run *r, long long *first, long long *count)
{
    if (first)
        *first = r->first;
    if (count)
        *count = r->count;
    return r->pts;
}

const st_pareto *st_sweep_front(const st_sweep_run *r) { return &r->front; }

const st_error *st_sweep_run_error(const st_sweep_run *r) { return r->failed ? &r->err : NULL; }
