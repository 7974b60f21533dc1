/*
 * The serving simulation: replicas, schedulers, the paged KV cache, and the
 * event loop (see serve.h).
 *
 * Units of scheduling. A replica is one engine instance (TP x PP GPUs)
 * with its own waiting queue, running list and KV blocks. Replicas that
 * step together form a group: the DP ranks of an expert-parallel MoE
 * deployment (vLLM runs DP+EP ranks in lockstep, idle ranks run a dummy
 * batch), otherwise a group of one. Groups that share GPUs under
 * time-sliced co-location form a device: only one of them runs a step at
 * a time.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "serve/cost.h"

enum { RS_WAITING = 0, RS_RUNNING, RS_DONE, RS_TRANSFER };
enum { ROLE_BOTH = 0, ROLE_PREFILL, ROLE_DECODE };

/* per request: what every step touches, kept small (40 bytes) */
typedef struct rstate {
    int computed;  /* tokens whose KV is in the cache */
    int generated; /* output tokens emitted */
    int priv;      /* private blocks held */
    int shared;    /* prefix blocks referenced from the group cache */
    int in, out;   /* copies of the request's lengths */
    unsigned char state, swapped, in_flight, decoding;
    unsigned char ve; /* PP: the virtual engine (pipeline slot) it runs in */
    unsigned char self_cached; /* preempted (V1): its blocks wait in the free queue (fseg) */
    double last;   /* time of its last token */
} rstate;



typedef struct entry {
    int req, num_new;
} entry;

typedef struct pgroup {
    int blocks, ref;
    double lru;
} pgroup;

/* vLLM V1's free block queue, as runs of blocks (see fq_push): allocation
 * takes from the head; a run owned by a preempted request is its blocks
 * still in the prefix cache, the rest hold nothing anyone will look up */
typedef struct fseg {
    int owner; /* request id, or -1 */
    int start; /* an owned run: the position of its first block in the request */
    long long n;
} fseg;

typedef struct replica {
    int model, role, group;
    st_serve_cost *cost;
    long long total, free_blocks, evictable;
    fseg *fq; /* ring deque; used where fq_on */
    size_t fcap, fhead, fn;
    int fq_on;
    int *wq; /* ring deque of request ids */
    size_t wcap, whead, wn;
    int *run;
    int nrun, runcap;
    pgroup *pg;
    int npg;
    /* static batching */
    int *sb;
    int sbn, sb_in, sb_out, sb_step;
    long long outstanding; /* routed, not finished (routing) */
    long long host_blocks; /* --preempt swap: blocks swapped out to host memory */
    /* async scheduling (vLLM V1's batch queue, see build_v1): the last
     * step's start and end (lag_end 0: none to lag behind), and what its
     * finished requests gave back, which the batch built as it ends cannot
     * use yet: their blocks and seats, and a placeholder row each */
    double step_start, lag_cut, lag_end;
    long long fresh_blocks;
    int fresh_seats;
    int *ph, nph, phcap;
} replica;

typedef struct slot {
    entry *e;
    int n;
    double t_end;
    int active;
    long long tokens;
} slot;

typedef struct group {
    int first, n; /* replicas [first, first+n) */
    int device;
    int pp;
    int inflight;
    double next_ok;  /* PP: next stage slot */
    slot *slots;     /* pp x n slots: slot [k*n + i] for replica first+i */
    int waiting_device;
    int dev_next; /* the next group on the same device (a ring; itself when alone) */
} group;

typedef struct event {
    double t;
    int kind, a, b;
    long long seq;
} event;
enum { EV_STEP = 0, EV_KV };

typedef struct heap {
    event *v;
    size_t n, cap;
} heap;

static int ev_less(const event *x, const event *y)
{
    if (x->t != y->t)
        return x->t < y->t;
    return x->seq < y->seq;
}

static int heap_push(heap *h, event e)
{
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        event *p = realloc(h->v, nc * sizeof *p);
        if (!p)
            return ST_ENOMEM;
        h->v = p;
        h->cap = nc;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!ev_less(&e, &h->v[up]))
            break;
        h->v[i] = h->v[up];
        i = up;
    }
    h->v[i] = e;
    return 0;
}

static event heap_pop(heap *h)
{
    event top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const event *mv = &last;
        if (l < h->n && ev_less(&h->v[l], mv)) {
            m = l;
            mv = &h->v[l];
        }
        if (r < h->n && ev_less(&h->v[r], mv))
            m = r;
        if (m == i)
            break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* Inter-token latency histogram: bins are 1/64 of an octave (1.1% wide),
 * read straight from the double's exponent and top mantissa bits, from
 * 2^-30 s (1 ns) to 2^10 s. A percentile is its bin's geometric centre. */
#define ITL_SUB 64
#define ITL_LO_EXP (-30)
#define ITL_BINS (40 * ITL_SUB)
typedef struct itl_hist {
    unsigned long long c[ITL_BINS];
    double sum, max;
    unsigned long long n;
} itl_hist;

static inline int itl_bin(double v)
{
    int b = 0;
    if (v > 0) {
        unsigned long long bits;
        memcpy(&bits, &v, sizeof bits);
        int e = (int)((bits >> 52) & 0x7ff) - 1023;
        int m = (int)((bits >> (52 - 6)) & (ITL_SUB - 1));
        b = (e - ITL_LO_EXP) * ITL_SUB + m;
    }
    if (b < 0)
        b = 0;
    if (b >= ITL_BINS)
        b = ITL_BINS - 1;
    return b;
}

/* a step's tokens mostly share one gap: count runs of equal bins locally */
typedef struct itl_run {
    int bin;
    unsigned long long count;
    double sum, max;
    double last; /* the gap whose bin `bin` is (NaN: none yet) */
} itl_run;

static inline void itl_add(itl_run *r, itl_hist *h, double v)
{
    /* the step's decoding requests mostly share one gap: its bin once */
    if (v != r->last) {
        int b = itl_bin(v);
        r->last = v;
        if (b != r->bin) {
            if (r->count)
                h->c[r->bin] += r->count;
            r->bin = b;
            r->count = 0;
        }
    }
    r->count++;
    r->sum += v;
    if (v > r->max)
        r->max = v;
}

static void itl_flush(itl_run *r, itl_hist *h)
{
    if (r->count)
        h->c[r->bin] += r->count;
    h->sum += r->sum;
    if (r->max > h->max)
        h->max = r->max;
}

static double itl_q(const itl_hist *h, double q)
{
    if (!h->n)
        return 0;
    unsigned long long want = (unsigned long long)ceil(q * (double)h->n), acc = 0;
    if (want < 1)
        want = 1;
    for (int b = 0; b < ITL_BINS; b++) {
        acc += h->c[b];
        if (acc >= want) {
            double lo = ldexp(1.0 + (double)(b % ITL_SUB) / ITL_SUB, b / ITL_SUB + ITL_LO_EXP);
            double hi = ldexp(1.0 + (double)(b % ITL_SUB + 1) / ITL_SUB, b / ITL_SUB + ITL_LO_EXP);
            double v = sqrt(lo * hi);
            return v < h->max ? v : h->max;
        }
    }
    return h->max;
}

typedef struct sim {
    const st_serve_cfg *cfg;
    const st_reqset *rq;
    rstate *rs;
    int groups; /* prefix caching on and some request has a prefix group */
    int kv_rep;     /* the replica whose KV use is sampled: the first that decodes */
    int cur_ve;     /* PP: the pipeline slot being scheduled (vLLM's virtual engine) */
    long long max_len; /* max_model_len resolved */
    replica *rep;
    int nrep;
    group *grp;
    int ngrp;
    int *dev_busy; /* device: group running a step, -1 free */
    int ndev;
    st_serve_cost cost[4];
    st_serve_cost draft;
    double kv_peak_bytes; /* most KV bytes in use on the sampled replica's GPUs */
    st_model draft_model;
    int have_draft;
    int nmodels;
    heap h;
    long long seq;
    double now;
    st_serve_result *out;
    itl_hist *itl;
    double kv_dt, kv_next;
    double busy;
    long long spec_steps, spec_tokens;
    long long trace_events;
    double kv_transfer_sum;
    long long kv_transfers;
    long long resume_cached; /* tokens preempted requests found cached on resuming (V1) */
    long long stuck; /* preemptions since a step last emitted a token (a livelock guard) */
    int rr[8]; /* round-robin position per (model, pool) */
    st_route route; /* resolved (never ST_ROUTE_AUTO) */
    long long lb_tick; /* ST_ROUTE_VLLM: the coordinator's last publication (100 ms ticks) */
    long long *lb_w, *lb_r; /* ... and the counts it published, per replica (waiting, running) */
    int err;
    char errmsg[320]; /* s->err with a message of its own (ST_EINVAL) */
} sim;

static int bs_of(const sim *s) { return s->cfg->block_size; }

static int blocks_for(const sim *s, long long tokens)
{
    return (int)((tokens + bs_of(s) - 1) / bs_of(s));
}

/* ---- waiting deque ----------------------------------------------------------- */
static int wq_grow(replica *r)
{
    size_t nc = r->wcap ? r->wcap * 2 : 256;
    int *p = malloc(nc * sizeof *p);
    if (!p)
        return ST_ENOMEM;
    for (size_t i = 0; i < r->wn; i++)
        p[i] = r->wq[(r->whead + i) % r->wcap];
    free(r->wq);
    r->wq = p;
    r->wcap = nc;
    r->whead = 0;
    return 0;
}

static int wq_push_back(replica *r, int id)
{
    if (r->wn == r->wcap && wq_grow(r))
        return ST_ENOMEM;
    r->wq[(r->whead + r->wn++) % r->wcap] = id;
    return 0;
}

static int wq_push_front(replica *r, int id)
{
    if (r->wn == r->wcap && wq_grow(r))
        return ST_ENOMEM;
    r->whead = (r->whead + r->wcap - 1) % r->wcap;
    r->wq[r->whead] = id;
    r->wn++;
    return 0;
}

static int wq_front(const replica *r) { return r->wq[r->whead]; }

static void wq_pop(replica *r)
{
    r->whead = (r->whead + 1) % r->wcap;
    r->wn--;
}

/* ---- KV blocks and the prefix cache -------------------------------------------- */
/* vLLM V1 keeps a preempted request's blocks in the prefix cache: its
 * KVCacheManager frees them to the tail of the free block queue in reverse
 * order (the last block nearest the head, evicted first), and allocation
 * takes blocks from the head, so the blocks freed earliest go first. When
 * the request is scheduled again its computed prefix is looked up like any
 * prompt's, and what is still cached is not recomputed. The queue is kept
 * as runs: free_blocks is their sum where fq_on. */
static fseg *fq_at(replica *r, size_t i) { return &r->fq[(r->fhead + i) % r->fcap]; }

static int fq_push(replica *r, int owner, long long n)
{
    if (n <= 0)
        return 0;
    if (owner < 0 && r->fn > 0) {
        fseg *t = fq_at(r, r->fn - 1);
        if (t->owner < 0) {
            t->n += n;
            return 0;
        }
    }
    if (r->fn == r->fcap) {
        size_t nc = r->fcap ? r->fcap * 2 : 16;
        fseg *a = malloc(nc * sizeof *a);
        if (!a)
            return ST_ENOMEM;
        for (size_t i = 0; i < r->fn; i++)
            a[i] = *fq_at(r, i);
        free(r->fq);
        r->fq = a;
        r->fcap = nc;
        r->fhead = 0;
    }
    fseg *t = &r->fq[(r->fhead + r->fn) % r->fcap];
    t->owner = owner;
    t->start = 0;
    t->n = n;
    r->fn++;
    return 0;
}

/* a preempted request's cached blocks, from block `start` of it on */
static int fq_push_run(replica *r, int id, long long n, int start)
{
    if (n <= 0)
        return 0;
    int rc = fq_push(r, id, n);
    if (!rc)
        fq_at(r, r->fn - 1)->start = start;
    return rc;
}

/* allocation: n blocks from the head of the queue */
static void fq_take(sim *s, replica *r, long long n)
{
    while (n > 0 && r->fn > 0) {
        fseg *h = fq_at(r, 0);
        long long k = h->n < n ? h->n : n;
        h->n -= k;
        n -= k;
        if (h->n == 0) {
            if (h->owner >= 0)
                s->rs[h->owner].self_cached = 0;
            r->fhead = (r->fhead + 1) % r->fcap;
            r->fn--;
        }
    }
}

/* request id's run of cached blocks (NULL when none is left) */
static fseg *fq_find(replica *r, int id)
{
    for (size_t i = 0; i < r->fn; i++) {
        fseg *f = fq_at(r, i);
        if (f->owner == id)
            return f->n > 0 ? f : NULL;
    }
    return NULL;
}

/* blocks come back to the pool: to the free queue's tail where it is kept */
static void give_back(sim *s, replica *r, long long n)
{
    r->free_blocks += n;
    if (r->fq_on && fq_push(r, -1, n))
        s->err = ST_ENOMEM;
}

/* blocks leave the pool (most decode steps take none: no call then) */
static inline void take_blocks(sim *s, replica *r, long long n)
{
    r->free_blocks -= n;
    if (n > 0 && r->fq_on)
        fq_take(s, r, n);
}

static void evict(sim *s, replica *r, long long need)
{
    while (r->free_blocks < need && r->evictable > 0) {
        int best = -1;
        for (int g = 0; g < r->npg; g++)
            if (r->pg[g].ref == 0 && r->pg[g].blocks > 0 && (best < 0 || r->pg[g].lru < r->pg[best].lru))
                best = g;
        if (best < 0)
            break;
        give_back(s, r, r->pg[best].blocks);
        r->evictable -= r->pg[best].blocks;
        r->pg[best].blocks = 0;
    }
}

static inline int can_alloc(sim *s, replica *r, long long need)
{
    if (need <= r->free_blocks)
        return 1;
    if (need <= r->free_blocks + r->evictable) {
        evict(s, r, need);
        return 1;
    }
    return 0;
}

static void release(sim *s, replica *r, int id)
{
    rstate *q = &s->rs[id];
    give_back(s, r, q->priv);
    q->priv = 0;
    if (q->shared) {
        pgroup *g = &r->pg[s->rq->r[id].prefix_group];
        if (--g->ref == 0) {
            g->lru = s->now;
            r->evictable += g->blocks;
        }
        q->shared = 0;
    }
}

/* blocks a request must add to hold `tokens` */
static inline int need_blocks(const sim *s, const rstate *q, long long tokens)
{
    long long have = (long long)(q->priv + q->shared) * bs_of(s);
    if (tokens <= have)
        return 0;
    return blocks_for(s, tokens) - q->priv - q->shared;
}

/* prefix-cache hit on admission: full blocks of the group's cached prefix */
static int prefix_lookup(sim *s, replica *r, int id)
{
    const st_request *rq = &s->rq->r[id];
    rstate *q = &s->rs[id];
    if (!s->cfg->prefix_cache || rq->prefix_group < 0 || q->computed > 0 || q->swapped)
        return 0;
    pgroup *g = &r->pg[rq->prefix_group];
    if (g->blocks <= 0)
        return 0;
    int seq_len = q->in + q->generated;
    int max_hit = (seq_len - 1) / bs_of(s); /* the last token is always computed */
    int hit = g->blocks < max_hit ? g->blocks : max_hit;
    if (hit <= 0)
        return 0;
    if (g->ref++ == 0)
        r->evictable -= g->blocks;
    q->shared = g->blocks;
    q->computed = hit * bs_of(s);
    /* the prompt tokens served from the cache, as vLLM counts them
     * (num_cached_tokens): at the first admission only; a preempted
     * request found the prefix again on every re-admission, and its
     * count passed its prompt (hit ratios above 1, a negative MFU) */
    if (s->out->req[id].scheduled < 0)
        s->out->req[id].cached_tokens += q->computed;
    return q->computed;
}

/* admission failed after a prefix hit: give the blocks back */
static void prefix_undo(sim *s, replica *r, int id, int hit)
{
    rstate *q = &s->rs[id];
    if (!hit)
        return;
    release(s, r, id);
    q->computed = 0;
    if (s->out->req[id].scheduled < 0) /* counted by that lookup */
        s->out->req[id].cached_tokens -= hit;
}

/* after a step: a request that computed its group's prefix donates it */
static inline void prefix_publish(sim *s, replica *r, int id)
{
    if (!s->groups)
        return;
    const st_request *rq = &s->rq->r[id];
    rstate *q = &s->rs[id];
    if (rq->prefix_group < 0 || q->shared)
        return;
    int P = rq->prefix_len / bs_of(s);
    pgroup *g = &r->pg[rq->prefix_group];
    if (P <= 0 || g->blocks > 0 || q->computed < P * bs_of(s) || q->priv < P)
        return;
    q->priv -= P;
    q->shared = P;
    g->blocks = P;
    g->ref = 1;
}

/* ---- preemption ---------------------------------------------------------------- */
static double host_bw(const sim *s)
{
    return s->cfg->cluster && s->cfg->cluster->node.host_bw > 0 ? s->cfg->cluster->node.host_bw : 0;
}

/* Preemptions in a row with no token emitted that stop a run as a livelock
 * (two requests in different pipeline slots evicting each other in turn).
 * A guard, not a model parameter: every step that keeps a decoding request
 * emits a token, so a run that progresses resets the count at once: the
 * most measured between two tokens was 2, over the RTX 4090 vLLM run (221
 * preemptions) and three stress runs of 244-579; 1daf76e's livelock passed
 * a million. */
#define ST_SERVE_MAX_STUCK 100000

/* returns extra step time (swap-out) */
static double preempt(sim *s, replica *r, int pos)
{
    int id = r->run[pos];
    rstate *q = &s->rs[id];
    double t = 0;
    int swap = s->cfg->preempt == ST_PREEMPT_SWAP && host_bw(s) > 0;
    if (swap) {
        double block_bytes = s->cost[r->model].kv_bytes_per_token * bs_of(s);
        t = (double)q->priv * block_bytes / host_bw(s);
        r->free_blocks += q->priv;
        q->swapped = 1;
        if (q->shared) {
            /* the shared prefix travels with it */
            pgroup *g = &r->pg[s->rq->r[id].prefix_group];
            q->priv += q->shared;
            if (--g->ref == 0) {
                g->lru = s->now;
                r->evictable += g->blocks;
            }
            q->shared = 0;
        }
        /* the host's swap space (num_cpu_blocks = swap_space / block bytes) */
        long long cpu_blocks = block_bytes > 0 ? (long long)floor(s->cfg->swap_space_bytes / block_bytes) : 0;
        r->host_blocks += q->priv;
        if (r->host_blocks > cpu_blocks && !s->err) {
            s->err = ST_EINVAL;
            snprintf(s->errmsg, sizeof s->errmsg,
                     "at %.3f s request %d's %d KV blocks do not fit the host's swap space (%lld blocks of %.3g MB "
                     "in --swap-space %.3g GiB, %lld in use): vLLM V0 aborts the engine there; raise --swap-space "
                     "or use --preempt recompute",
                     s->now, id, q->priv, cpu_blocks, block_bytes / 1e6, s->cfg->swap_space_bytes / 1073741824.0,
                     r->host_blocks - q->priv);
        }
    } else if (r->fq_on) {
        /* V1: the full blocks of its computed tokens stay cached, behind
         * the rest of its blocks in the queue (freed in reverse order); a
         * shared prefix's blocks (the first q->shared) go back to their
         * group, its own blocks follow them */
        int P = q->shared;
        long long priv = q->priv, cached = q->computed / bs_of(s) - P;
        if (cached > priv)
            cached = priv;
        if (cached < 0)
            cached = 0;
        q->priv = 0;
        release(s, r, id); /* the group's reference */
        give_back(s, r, priv - cached);
        r->free_blocks += cached;
        if (fq_push_run(r, id, cached, P))
            s->err = ST_ENOMEM;
        q->self_cached = cached > 0;
        q->computed = 0;
    } else {
        release(s, r, id);
        q->computed = 0;
    }
    s->out->req[id].preemptions++;
    s->out->preemptions++;
    long long limit = s->cfg->max_stuck > 0 ? s->cfg->max_stuck : ST_SERVE_MAX_STUCK;
    if (++s->stuck >= limit && !s->err) {
        s->err = ST_EINVAL;
        snprintf(s->errmsg, sizeof s->errmsg,
                 "at %.3f s the KV cache thrashes: %lld preemptions and no token emitted since (requests in flight "
                 "on other pipeline stages cannot be preempted, and the rest do not fit beside them); give the "
                 "cache more blocks, or lower --max-num-seqs or --pp", s->now, limit);
    }
    q->state = RS_WAITING;
    memmove(&r->run[pos], &r->run[pos + 1], (size_t)(r->nrun - pos - 1) * sizeof *r->run);
    r->nrun--;
    wq_push_front(r, id);
    return t;
}

static int run_push(replica *r, int id)
{
    if (r->nrun == r->runcap) {
        int nc = r->runcap ? r->runcap * 2 : 64;
        int *p = realloc(r->run, (size_t)nc * sizeof *p);
        if (!p)
            return ST_ENOMEM;
        r->run = p;
        r->runcap = nc;
    }
    r->run[r->nrun++] = id;
    return 0;
}

/* ---- batch building -------------------------------------------------------------- */
typedef struct scratch {
    int *chunk, *ctx;
    int cap;
} scratch;

/* append a prefill chunk (n new tokens after ctx cached ones); 0 or ST_ENOMEM */
static int chunk_push(scratch *sc, int *nch, int n, int ctx)
{
    if (*nch == sc->cap) {
        int nc = sc->cap ? sc->cap * 2 : 256;
        int *a = realloc(sc->chunk, (size_t)nc * sizeof *a), *bb = NULL;
        if (a) {
            sc->chunk = a;
            bb = realloc(sc->ctx, (size_t)nc * sizeof *bb);
        }
        if (!a || !bb)
            return ST_ENOMEM;
        sc->ctx = bb;
        sc->cap = nc;
    }
    sc->chunk[*nch] = n;
    sc->ctx[*nch] = ctx;
    (*nch)++;
    return 0;
}

typedef struct batch {
    entry *e;
    int n, cap;
    long long tokens;
    double extra_s; /* swaps */
    /* what the step prices (filled as entries are added) */
    long long n_dec, logits;
    double sum_kv;
    int q, nch, oom;
    scratch *sc;
} batch;

static inline int spec_k(const sim *s, const replica *r)
{
    return (r->model == 0 && s->cfg->spec_k > 0) ? s->cfg->spec_k : 0;
}

/* tokens a running request computes next step */
static inline int next_tokens(const sim *s, const replica *r, int id)
{
    const rstate *q = &s->rs[id];
    int seq_len = s->rs[id].in + q->generated;
    int n = seq_len - q->computed;
    if (n == 1 && q->decoding)
        n += spec_k(s, r);
    return n;
}

static inline void batch_add(sim *s, replica *r, batch *b, int id, int n)
{
    b->e[b->n].req = id;
    b->e[b->n].num_new = n;
    b->n++;
    b->tokens += n;
    if (s->cfg->sched == ST_SCHED_STATIC)
        return; /* priced from the batch's padding (price) */
    const rstate *st = &s->rs[id];
    int k = spec_k(s, r), ctx = st->computed;
    if (st->decoding && n == 1 + k) {
        b->n_dec++;
        b->sum_kv += ctx + n;
        b->logits += n;
        b->q = 1 + k;
        return;
    }
    if (chunk_push(b->sc, &b->nch, n, ctx)) {
        b->oom = 1;
        return;
    }
    b->logits += ctx + n >= st->in + st->generated;
}

static int max_seqs(const sim *s) { return s->cfg->max_num_seqs; }

/* a step's share for a request the budget cannot fully take: a prefill is
 * chunked to the budget; a speculative verify (1 + k tokens) falls back to
 * one plain decode token (vLLM V1 drops the drafts that do not fit) */
static int trim(const sim *s, const replica *r, const rstate *q, int n, long long budget)
{
    int k = spec_k(s, r);
    if (k > 0 && q->decoding && n == 1 + k && q->computed + 1 == q->in + q->generated)
        return 1;
    return (int)budget;
}

/* move the head of the waiting queue into the running batch with its blocks */
static void admit(sim *s, replica *r, batch *b, int id, int need, int n)
{
    rstate *q = &s->rs[id];
    q->ve = (unsigned char)s->cur_ve;
    wq_pop(r);
    take_blocks(s, r, need);
    q->priv += need;
    q->state = RS_RUNNING;
    if (s->out->req[id].scheduled < 0)
        s->out->req[id].scheduled = s->now;
    run_push(r, id);
    batch_add(s, r, b, id, n);
}

/* Frees blocks for running request i until `need` fit, preempting the
 * lowest-priority (last) running requests that are not in flight; returns 1
 * when request i itself had to go. Sets *preempted when it preempts. */
static int make_room(sim *s, replica *r, batch *b, int i, int need, int *preempted)
{
    while (!can_alloc(s, r, need)) {
        int last = r->nrun - 1;
        while (last > i && s->rs[r->run[last]].in_flight)
            last--;
        b->extra_s += preempt(s, r, last);
        if (preempted)
            *preempted = 1;
        if (last == i)
            return 1;
    }
    return 0;
}

/* vLLM V1 / Sarathi: running first, then waiting, under a token budget.
 * cut >= 0: only requests that arrived by then join (a new one; a preempted
 * one is back in the queue already); held: seats not free yet (build_v1) */
static void build_v1_core(sim *s, replica *r, batch *b, long long budget, double cut, int held)
{
    int preempted = 0;
    for (int i = 0; i < r->nrun && budget > 0; i++) {
        int id = r->run[i];
        rstate *q = &s->rs[id];
        if (q->in_flight || q->ve != s->cur_ve)
            continue;
        int n = next_tokens(s, r, id);
        if (n > budget)
            n = trim(s, r, q, n, budget);
        if (n <= 0)
            continue;
        int need = need_blocks(s, q, (long long)q->computed + n);
        if (make_room(s, r, b, i, need, &preempted))
            break;
        take_blocks(s, r, need);
        q->priv += need;
        batch_add(s, r, b, id, n);
        budget -= n;
    }
    /* V1 admits no new request in a step that preempted, unless the step
     * would otherwise be empty (the preempted request itself comes back) */
    if (preempted && b->n > 0)
        return;
    while (r->wn > 0 && r->nrun + held < max_seqs(s) && budget > 0) {
        int id = wq_front(r);
        rstate *q = &s->rs[id];
        if (cut >= 0 && q->generated == 0 && q->computed == 0 && !q->swapped && s->rq->r[id].arrival > cut)
            break;
        int hit = prefix_lookup(s, r, id);
        /* a preempted request's own blocks still cached (V1): the full
         * blocks of its tokens but the last, which is always computed, that
         * continue what the prefix lookup found (a lookup stops at the first
         * block missing: its own blocks past a group prefix no longer cached
         * are not found) */
        const fseg *own = NULL;
        int own_hit = 0;
        if (q->self_cached && (own = fq_find(r, id)) != NULL) {
            long long max_hit = (q->in + q->generated - 1) / bs_of(s), hb = hit / bs_of(s);
            long long usable = own->start <= hb ? own->start + own->n - hb : 0;
            if (usable > max_hit - hb)
                usable = max_hit - hb;
            own_hit = usable > 0 ? (int)usable : 0;
            q->computed = (int)(hb + own_hit) * bs_of(s);
            q->priv = own_hit;
        }
        /* a prompt, a recomputation, or (decode pool) a request whose KV arrived */
        int n = next_tokens(s, r, id);
        if (n > budget)
            n = trim(s, r, q, n, budget);
        int need = need_blocks(s, q, (long long)q->computed + n);
        /* vLLM 0.19 (scheduler_reserve_full_isl, on by default): the blocks
         * of the whole sequence so far must fit, less those it shares
         * (kv_cache_manager.allocate_slots with full_sequence_must_fit;
         * free counts the cached blocks nobody holds), or the waiting queue
         * stops there without preempting: a long prompt no longer gets in
         * on its first chunk's blocks, to be preempted (the newest) when a
         * later chunk finds no room */
        long long full = 0;
        if (s->cfg->sched == ST_SCHED_VLLM && s->cfg->reserve_full_isl)
            full = blocks_for(s, (long long)q->in + q->generated) - q->shared;
        /* the blocks it finds are no longer free for the rest */
        if (full > r->free_blocks + r->evictable || !can_alloc(s, r, need + own_hit)) {
            if (own) { /* its blocks stay in the queue: none are its own yet */
                q->priv = 0;
                q->computed = 0;
            }
            prefix_undo(s, r, id, hit);
            break;
        }
        if (own) {
            /* its cached blocks leave the queue; the rest of its run is
             * nobody's now. Looked up again: an eviction in can_alloc may
             * have moved the queue */
            fseg *run = fq_find(r, id);
            if (run) {
                run->n -= own_hit;
                run->owner = -1;
            }
            q->self_cached = 0;
            r->free_blocks -= own_hit;
            s->resume_cached += own_hit * bs_of(s);
        }
        admit(s, r, b, id, need, n);
        budget -= n;
    }
}

/* vLLM V1's async scheduling (on by default for generation in 0.19,
 * vllm/config/vllm.py; the engine core's batch queue, two deep,
 * vllm/v1/engine/core.py step_with_batch_queue) schedules the next batch as
 * soon as it submits one, its running requests continuing on placeholder
 * tokens. So the batch that runs after a step was built when that step
 * started: it saw the arrivals up to then, not the seats and blocks the
 * step's finished requests gave back, and it carries a row for each of
 * them, whose output is dropped. A replica that was idle schedules at once.
 * Not modelled with PP (its own batch queue), speculative decoding or
 * disaggregated pools: they run as before. */
static int async_on(const sim *s, const group *g)
{
    const st_serve_cfg *c = s->cfg;
    return c->async_sched && c->sched == ST_SCHED_VLLM && g->pp == 1 && c->spec_k == 0 && c->prefill_replicas == 0;
}

static void build_v1(sim *s, replica *r, batch *b, long long budget)
{
    int lag = r->lag_end > 0 && r->lag_end == s->now;
    r->lag_end = 0;
    if (!lag) {
        build_v1_core(s, r, b, budget, -1, 0);
        return;
    }
    for (int i = 0; i < r->nph && budget > 0; i++, budget--)
        batch_add(s, r, b, r->ph[i], 1);
    long long hidden = r->fresh_blocks < r->free_blocks ? r->fresh_blocks : r->free_blocks;
    r->free_blocks -= hidden;
    build_v1_core(s, r, b, budget, r->lag_cut, r->fresh_seats);
    r->free_blocks += hidden;
    /* nothing to run, not even a placeholder, though requests wait: the
     * engine had nothing queued, so it schedules them now */
    if (b->n == 0 && r->wn > 0)
        build_v1_core(s, r, b, budget, -1, 0);
}

/* vLLM V0: prefill-first; swapped requests come back first */
static void build_v0(sim *s, replica *r, batch *b)
{
    long long budget = s->cfg->max_batched_tokens;
    /* BlockSpaceManager: watermark_blocks = int(watermark * num_gpu_blocks) */
    double wm = floor(s->cfg->watermark * (double)r->total);
    /* swap-ins */
    while (r->wn > 0 && s->rs[wq_front(r)].swapped && r->nrun < max_seqs(s)) {
        int id = wq_front(r);
        rstate *q = &s->rs[id];
        if (!can_alloc(s, r, q->priv + 1))
            break;
        wq_pop(r);
        r->free_blocks -= q->priv;
        r->host_blocks -= q->priv;
        b->extra_s += (double)q->priv * s->cost[r->model].kv_bytes_per_token * bs_of(s) / host_bw(s);
        q->swapped = 0;
        q->state = RS_RUNNING;
        run_push(r, id);
    }
    /* prefills, whole prompts */
    while (r->wn > 0 && !s->rs[wq_front(r)].swapped && r->nrun < max_seqs(s)) {
        int id = wq_front(r);
        rstate *q = &s->rs[id];
        int hit = prefix_lookup(s, r, id);
        int n = s->rs[id].in + q->generated - q->computed;
        int need = need_blocks(s, q, (long long)q->computed + n);
        if ((b->n > 0 && b->tokens + n > budget) || !can_alloc(s, r, need) ||
            (double)(r->free_blocks + r->evictable - need) < wm) {
            prefix_undo(s, r, id, hit);
            break;
        }
        admit(s, r, b, id, need, n);
    }
    if (b->n > 0)
        return;
    /* decodes */
    for (int i = 0; i < r->nrun; i++) {
        int id = r->run[i];
        rstate *q = &s->rs[id];
        if (q->in_flight || q->ve != s->cur_ve)
            continue;
        int n = next_tokens(s, r, id);
        int need = need_blocks(s, q, (long long)q->computed + n);
        if (make_room(s, r, b, i, need, NULL))
            break;
        r->free_blocks -= need;
        q->priv += need;
        batch_add(s, r, b, id, n);
    }
}

/* Orca: whole prompts join at any iteration; each reserves max_model_len */
static void build_orca(sim *s, replica *r, batch *b)
{
    long long budget = s->cfg->max_batched_tokens, prompt = 0;
    for (int i = 0; i < r->nrun; i++) {
        int id = r->run[i];
        if (s->rs[id].in_flight)
            continue;
        batch_add(s, r, b, id, next_tokens(s, r, id));
    }
    long long reserve = blocks_for(s, s->max_len);
    if (reserve > r->total)
        reserve = r->total; /* Orca (Max) capped at the cache */
    while (r->wn > 0 && r->nrun < max_seqs(s)) {
        int id = wq_front(r);
        rstate *q = &s->rs[id];
        int n = s->rs[id].in - q->computed;
        if (prompt > 0 && prompt + n > budget)
            break;
        long long res = reserve > blocks_for(s, s->rs[id].in + s->rs[id].out)
                            ? reserve
                            : blocks_for(s, s->rs[id].in + s->rs[id].out);
        if (!can_alloc(s, r, res))
            break;
        wq_pop(r);
        r->free_blocks -= res;
        q->priv = (int)res;
        q->state = RS_RUNNING;
        s->out->req[id].scheduled = s->now;
        run_push(r, id);
        batch_add(s, r, b, id, n);
        prompt += n;
    }
}

/* static batching: one padded batch at a time */
static void build_static(sim *s, replica *r, batch *b)
{
    if (r->sbn == 0) {
        int pin = 0, pout = 0;
        while (r->wn > 0 && r->sbn < max_seqs(s)) {
            int id = wq_front(r);
            int in = s->rs[id].in > pin ? s->rs[id].in : pin;
            int o = s->rs[id].out > pout ? s->rs[id].out : pout;
            long long need = (long long)(r->sbn + 1) * blocks_for(s, (long long)in + o);
            if (r->sbn > 0 && need > r->total)
                break;
            wq_pop(r);
            r->sb[r->sbn++] = id;
            pin = in;
            pout = o;
            s->rs[id].state = RS_RUNNING;
            s->out->req[id].scheduled = s->now;
        }
        if (r->sbn == 0)
            return;
        r->sb_in = pin;
        r->sb_out = pout;
        r->sb_step = 0;
        r->free_blocks = r->total - (long long)r->sbn * blocks_for(s, (long long)pin + pout);
        if (r->free_blocks < 0)
            r->free_blocks = 0;
    }
    int n = r->sb_step == 0 ? r->sb_in : 1;
    for (int i = 0; i < r->sbn; i++)
        batch_add(s, r, b, r->sb[i], n);
}

/* ---- step pricing ----------------------------------------------------------------- */
static double price(sim *s, replica *r, batch *b, scratch *sc)
{
    st_serve_cost *c = s->cost + r->model;
    int k = spec_k(s, r);
    if (b->oom)
        return INFINITY;
    if (s->cfg->sched == ST_SCHED_STATIC) {
        /* padded: every request at the batch's longest prompt, then decodes */
        if (r->sb_step == 0) {
            for (int i = 0; i < b->n; i++)
                if (chunk_push(sc, &b->nch, r->sb_in, 0))
                    return INFINITY;
            b->logits = b->n;
        } else {
            b->n_dec = b->n;
            b->sum_kv = (double)b->n * (r->sb_in + r->sb_step);
            b->logits = b->n;
        }
    }
    long long n_dec = b->n_dec, logits = b->logits;
    double sum_kv = b->sum_kv;
    int nch = b->nch, q = b->q;
    long long tokens = b->tokens;
    if (k > 0 && s->cfg->spec_ideal) {
        /* verify priced as a plain decode: one token per decoding request */
        tokens -= n_dec * k;
        logits -= n_dec * k;
        q = 1;
    }
    double t = st_serve_step_time(c, tokens, logits, n_dec, q, sum_kv, sc->chunk, sc->ctx, nch);
    if (k > 0 && n_dec > 0 && !s->cfg->spec_ideal) {
        /* k sequential draft steps over the decoding requests */
        st_serve_cost *d = &s->draft;
        double dt = 0;
        for (int j = 0; j < k; j++)
            dt += st_serve_step_time(d, n_dec, n_dec, n_dec, 1, sum_kv - (double)n_dec * (k - j), NULL, NULL, 0);
        t += dt;
    }
    return t + b->extra_s;
}

/* KV bytes one token of model m holds per GPU: the target's, and a draft's
 * in the same block table */
static double kv_tok_bytes(const sim *s, int m)
{
    return s->cost[m].kv_bytes_per_token + (m == 0 && s->have_draft ? s->draft.kv_bytes_per_token : 0);
}

/* ---- results bookkeeping ------------------------------------------------------------ */
static void kv_sample(sim *s)
{
    st_serve_result *o = s->out;
    const replica *r = &s->rep[s->kv_rep];
    while (s->now >= s->kv_next) {
        if (o->n_kv == ST_SERVE_KV_SAMPLES) {
            for (size_t i = 0; i < ST_SERVE_KV_SAMPLES / 2; i++)
                o->kv[i] = o->kv[2 * i];
            o->n_kv = ST_SERVE_KV_SAMPLES / 2;
            s->kv_dt *= 2;
        }
        st_kv_sample *k = &o->kv[o->n_kv++];
        k->t = s->kv_next;
        k->used = r->total > 0 ? (float)((double)(r->total - r->free_blocks - r->evictable) / (double)r->total) : 0;
        k->running = r->nrun + r->sbn;
        k->waiting = (int)r->wn;
        s->kv_next = o->kv[0].t + s->kv_dt * (double)o->n_kv;
    }
    if (r->total > 0) {
        double u = (double)(r->total - r->free_blocks - r->evictable) / (double)r->total;
        if (u > o->kv_peak_frac)
            o->kv_peak_frac = u;
    }
    /* KV bytes on that replica's GPUs: its own blocks and those of the
     * models co-located with it (replica m x dp + the same index) */
    int dp = s->nrep / s->nmodels, d = s->kv_rep % dp;
    double bytes = 0;
    for (int m = 0; m < s->nmodels; m++) {
        const replica *q = &s->rep[m * dp + d];
        bytes += (double)(q->total - q->free_blocks - q->evictable) * kv_tok_bytes(s, m) * bs_of(s);
    }
    if (bytes > s->kv_peak_bytes)
        s->kv_peak_bytes = bytes;
}

static void trace_step(sim *s, int rep, double t0, double dur, const batch *b)
{
    FILE *f = s->cfg->trace_out;
    if (!f)
        return;
    s->out->trace_steps_total++;
    if (s->trace_events >= s->cfg->trace_max_events)
        return;
    /* prefills: the entries priced as prompt chunks (a preempted request's
     * recompute among them); a static batch counts them by its requests */
    int pre = 0;
    if (s->cfg->sched == ST_SCHED_STATIC)
        for (int i = 0; i < b->n; i++)
            pre += !s->rs[b->e[i].req].decoding;
    else
        pre = b->n - (int)b->n_dec;
    fprintf(f, "%s{\"name\":\"step\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
               "\"args\":{\"tokens\":%lld,\"seqs\":%d,\"prefills\":%d}}",
            s->trace_events ? ",\n" : "", rep, t0 * 1e6, dur * 1e6, b->tokens, b->n, pre);
    s->out->trace_steps = ++s->trace_events;
}

/* ---- routing ---------------------------------------------------------------------------- */
/* the DP coordinator's publication interval (vLLM's stats_update_interval_ms
 * default, coordinator.py) */
#define ST_DPLB_TICK_S 0.1

/* may replica i take a request of model `model` for pool `role`? */
static int routable(const sim *s, int i, int model, int role)
{
    return s->rep[i].model == model && (s->rep[i].role == role || s->rep[i].role == ROLE_BOTH);
}

static int route(sim *s, int model, int role)
{
    int best = -1;
    int cand = 0;
    for (int i = 0; i < s->nrep; i++)
        cand += routable(s, i, model, role);
    if (s->route == ST_ROUTE_VLLM) {
        /* vLLM V1's DPLBAsyncMPClient: the engine with the least 4 x waiting
         * + running (the first on ties), from the counts the DP coordinator
         * publishes every ST_DPLB_TICK_S; between publications each request
         * routed adds one waiting to its engine's count */
        long long tick = (long long)floor(s->now / ST_DPLB_TICK_S);
        if (tick != s->lb_tick) {
            s->lb_tick = tick;
            for (int i = 0; i < s->nrep; i++) {
                s->lb_w[i] = (long long)s->rep[i].wn;
                s->lb_r[i] = s->rep[i].nrun;
            }
        }
        for (int i = 0; i < s->nrep; i++)
            if (routable(s, i, model, role) &&
                (best < 0 || 4 * s->lb_w[i] + s->lb_r[i] < 4 * s->lb_w[best] + s->lb_r[best]))
                best = i;
        if (best >= 0)
            s->lb_w[best]++;
        return best;
    }
    if (s->route == ST_ROUTE_RR) {
        int k = s->rr[model * 2 + (role == ROLE_DECODE)]++ % cand;
        for (int i = 0; i < s->nrep; i++)
            if (routable(s, i, model, role) && k-- == 0)
                return i;
    }
    for (int i = 0; i < s->nrep; i++)
        if (routable(s, i, model, role) && (best < 0 || s->rep[i].outstanding < s->rep[best].outstanding))
            best = i;
    return best;
}

/* ---- the step loop ------------------------------------------------------------------------ */
static void try_start(sim *s, int gi, scratch *sc);

static int group_has_work(const sim *s, const group *g)
{
    for (int i = 0; i < g->n; i++) {
        const replica *r = &s->rep[g->first + i];
        if (r->wn > 0 || r->nrun > 0 || r->sbn > 0)
            return 1;
    }
    return 0;
}

/* Build and price every replica's batch of pipeline slot k of a group; 1
 * when any has work. */
static int build_slot(sim *s, group *g, int k, batch *bs, scratch *sc, double *dur_out)
{
    double dur = 0;
    int any = 0;
    for (int i = 0; i < g->n; i++) {
        replica *r = &s->rep[g->first + i];
        slot *sl = &g->slots[k * g->n + i];
        batch *b = &bs[i];
        memset(b, 0, sizeof *b);
        b->e = sl->e;
        b->q = 1;
        b->sc = sc;
        switch (s->cfg->sched) {
        case ST_SCHED_VLLM:
            build_v1(s, r, b, s->cfg->max_batched_tokens);
            break;
        case ST_SCHED_SARATHI:
            build_v1(s, r, b, s->cfg->chunk);
            break;
        case ST_SCHED_VLLM_V0:
            if (r->role == ROLE_DECODE)
                build_v1(s, r, b, s->cfg->max_batched_tokens);
            else
                build_v0(s, r, b);
            break;
        case ST_SCHED_ORCA:
            build_orca(s, r, b);
            break;
        case ST_SCHED_STATIC:
            build_static(s, r, b);
            break;
        default:
            break;
        }
        double t = 0;
        if (b->n > 0) {
            t = price(s, r, b, sc);
            any = 1;
        }
        sl->n = b->n;
        sl->tokens = b->tokens;
        if (t > dur)
            dur = t;
        if (g->pp > 1)
            for (int j = 0; j < b->n; j++)
                s->rs[b->e[j].req].in_flight = 1;
    }
    *dur_out = dur;
    return any;
}

static void try_start(sim *s, int gi, scratch *sc)
{
    group *g = &s->grp[gi];
    if (g->inflight >= g->pp || (g->inflight > 0 && s->now < g->next_ok) || !group_has_work(s, g))
        return;
    if (s->dev_busy[g->device] >= 0 && s->dev_busy[g->device] != gi) {
        g->waiting_device = 1;
        return;
    }
    /* PP: like vLLM's virtual engines, each slot keeps the requests it
     * admitted, new ones join the slot being scheduled; the first free slot
     * with work runs */
    int k;
    double dur = 0;
    int any = 0;
    batch bs[64];
    for (k = 0; k < g->pp && !any; k++) {
        if (g->slots[k * g->n].active)
            continue;
        s->cur_ve = k;
        dur = 0;
        any = build_slot(s, g, k, bs, sc, &dur);
    }
    k--;
    if (!any)
        return;
    if (g->n > 1) {
        /* lockstep: idle ranks run a one-token dummy batch */
        for (int i = 0; i < g->n; i++)
            if (g->slots[k * g->n + i].n == 0) {
                double t = st_serve_step_time(&s->cost[s->rep[g->first + i].model], 1, 1, 0, 1, 0, NULL, NULL, 0);
                if (t > dur)
                    dur = t;
            }
    }
    /* PP: a pass takes pp stages; a new batch may enter after one stage */
    double stage = dur;
    double total = dur * g->pp;
    for (int i = 0; i < g->n; i++) {
        slot *sl = &g->slots[k * g->n + i];
        sl->active = 1;
        sl->t_end = s->now + total;
        s->rep[g->first + i].step_start = s->now;
        trace_step(s, g->first + i, s->now, total, &bs[i]);
    }
    s->busy += stage * (double)g->n;
    g->inflight++;
    g->next_ok = s->now + stage;
    s->dev_busy[g->device] = gi;
    s->out->steps++;
    event e = {s->now + total, EV_STEP, gi, k, s->seq++};
    if (heap_push(&s->h, e))
        s->err = ST_ENOMEM;
    if (g->pp > 1) {
        /* wake up for the next stage slot */
        event w = {s->now + stage, EV_STEP, gi, -1, s->seq++};
        if (heap_push(&s->h, w))
            s->err = ST_ENOMEM;
    }
}

static void finish_req(sim *s, replica *r, int id)
{
    rstate *q = &s->rs[id];
    q->state = RS_DONE;
    s->out->req[id].done = s->now;
    s->out->n_done++;
    r->outstanding--;
}

static void remove_running(replica *r, int id)
{
    for (int i = 0; i < r->nrun; i++)
        if (r->run[i] == id) {
            memmove(&r->run[i], &r->run[i + 1], (size_t)(r->nrun - i - 1) * sizeof *r->run);
            r->nrun--;
            return;
        }
}

static void kv_transfer(sim *s, replica *from, int id)
{
    const st_serve_cost *c = &s->cost[from->model];
    int dst = route(s, from->model, ROLE_DECODE);
    double bytes = (double)(s->rs[id].in) * c->kv_bytes_per_token;
    /* the pools share a node when they fit in one and the cluster has one
     * node; a multi-node cluster puts them on separate nodes (the KV crosses
     * the scale-out network, as in Splitwise/DistServe) */
    int total = (s->cfg->prefill_replicas + s->cfg->decode_replicas) * c->tp * c->pp;
    int per_node = total <= s->cfg->cluster->node.gpus && s->cfg->cluster->nodes <= 1 ? 2 : 1;
    double t = st_serve_coll(s->cfg->cluster, ST_COLL_SENDRECV, 2, per_node, bytes);
    s->kv_transfer_sum += t;
    s->kv_transfers++;
    rstate *q = &s->rs[id];
    q->state = RS_TRANSFER;
    s->out->req[id].replica = dst;
    s->rep[dst].outstanding++;
    from->outstanding--;
    event e = {s->now + t, EV_KV, id, dst, s->seq++};
    if (heap_push(&s->h, e))
        s->err = ST_ENOMEM;
}

/* a request finished in the step just ended, under async scheduling: its
 * blocks and seat come back a step late, and the next batch keeps a row for
 * it (build_v1) */
static void note_finished(sim *s, replica *r, int id)
{
    r->fresh_blocks += s->rs[id].priv;
    r->fresh_seats++;
    if (r->nph == r->phcap) {
        int nc = r->phcap ? 2 * r->phcap : 64;
        int *p = realloc(r->ph, (size_t)nc * sizeof *p);
        if (!p) {
            s->err = ST_ENOMEM;
            return;
        }
        r->ph = p;
        r->phcap = nc;
    }
    r->ph[r->nph++] = id;
}

static void apply_step(sim *s, int gi, int k)
{
    group *g = &s->grp[gi];
    itl_run run = {-1, 0, 0, 0, NAN};
    unsigned long long ntok = 0;
    for (int i = 0; i < g->n; i++) {
        replica *r = &s->rep[g->first + i];
        if (async_on(s, g)) {
            /* what the next batch, built as this step started, cannot see */
            r->lag_end = s->now;
            r->lag_cut = r->step_start;
            r->nph = r->fresh_seats = 0;
            r->fresh_blocks = 0;
        }
        slot *sl = &g->slots[k * g->n + i];
        int kk = spec_k(s, r);
        int is_static = s->cfg->sched == ST_SCHED_STATIC;
        for (int j = 0; j < sl->n; j++) {
            int id = sl->e[j].req, n = sl->e[j].num_new;
            rstate *q = &s->rs[id];
            q->in_flight = 0;
            if (q->state != RS_RUNNING)
                continue; /* preempted while in flight (PP) */
            if (is_static) {
                if (q->generated >= q->out)
                    continue;
            } else {
                q->computed += n;
            }
            int seq_len = q->in + q->generated;
            if (!is_static && q->computed < seq_len)
                continue; /* a prefill chunk: no token yet */
            int emit = 1;
            if (kk > 0 && q->decoding && n == 1 + kk) {
                /* i.i.d. acceptance: tokens = 1 + accepted prefix of the k drafts */
                st_rng rg;
                st_rng_init(&rg, s->cfg->seed, (unsigned long long)id * 1048576ULL + (unsigned long long)q->generated,
                            ST_SERVE_RNG_SPEC);
                int acc = 0;
                while (acc < kk && st_rng_u01(&rg) < s->cfg->spec_accept)
                    acc++;
                emit = 1 + acc;
                q->computed -= kk - acc; /* rejected drafts' KV is discarded */
                s->spec_steps++;
                s->spec_tokens += emit;
            }
            if (emit > q->out - q->generated)
                emit = q->out - q->generated;
            if (q->generated == 0) {
                s->out->req[id].first = s->now;
            } else {
                itl_add(&run, s->itl, s->now - q->last);
                ntok++;
            }
            q->last = s->now;
            q->generated += emit;
            s->stuck = 0;
            q->decoding = 1;
            if (!is_static)
                prefix_publish(s, r, id);
            if (q->generated >= q->out) {
                /* a static batch keeps its blocks until its longest request
                 * ends (below); the request's own tokens are done now */
                if (!is_static && r->lag_end == s->now)
                    note_finished(s, r, id);
                if (!is_static) {
                    release(s, r, id);
                    remove_running(r, id);
                }
                finish_req(s, r, id);
            } else if (r->role == ROLE_PREFILL) {
                release(s, r, id);
                remove_running(r, id);
                kv_transfer(s, r, id);
            }
        }
        if (is_static && sl->n > 0) {
            r->sb_step++;
            if (r->sb_step >= r->sb_out) {
                r->sbn = 0;
                r->free_blocks = r->total;
            }
        }
        sl->active = 0;
        sl->n = 0;
    }
    itl_flush(&run, s->itl);
    s->itl->n += ntok;
    g->inflight--;
    if (s->dev_busy[g->device] == gi && g->inflight == 0)
        s->dev_busy[g->device] = -1;
}

static void wake_device(sim *s, int dev, int after, scratch *sc)
{
    if (s->dev_busy[dev] >= 0)
        return;
    /* round-robin around the device's ring of groups, starting after
     * `after` and ending with it */
    int gi = after;
    do {
        gi = s->grp[gi].dev_next;
        s->grp[gi].waiting_device = 0;
        try_start(s, gi, sc);
    } while (gi != after && s->dev_busy[dev] < 0);
}

/* ---- set-up ------------------------------------------------------------------------------------- */
/* vLLM (ModelConfig.verify_with_parallel_config via the attention layer's
 * head split): KV heads are split over TP, or replicated when TP exceeds
 * them, so one must divide the other */
static int kv_heads_check(const st_model *m, int tp, st_error *err)
{
    if (m->tf.kv_heads % tp && tp % m->tf.kv_heads) {
        st_error_set(err, ST_EINVAL,
                     "--tp %d and the %lld KV heads of %s: neither divides the other, so the KV heads can be neither "
                     "split nor replicated evenly; use a --tp that divides %lld or is a multiple of it",
                     tp, m->tf.kv_heads, m->id, m->tf.kv_heads);
        return ST_EINVAL;
    }
    return 0;
}

int st_serve_check(const st_serve_cfg *c_in, st_error *err)
{
    st_serve_cfg c_r = *c_in;
    st_serve_resolve_batch(&c_r);
    const st_serve_cfg *c = &c_r;
    const st_model *m = c->model;
    if (!m || !c->gpu || !c->coef) {
        st_error_set(err, ST_EINVAL, "serve needs a model, a GPU and coefficients");
        return ST_EINVAL;
    }
    if (m->kind != ST_MODEL_TRANSFORMER || !m->tf.causal) {
        st_error_set(err, ST_EINVAL, "%s is not a decoder language model; serve a causal transformer", m->id);
        return ST_EINVAL;
    }
    if (c->fa3 > 0 && st_fa3_check(c->gpu, st_serve_dtype(c), 0, err))
        return ST_EINVAL;
    const st_transformer *tf = &m->tf;
    if (c->tp < 1 || c->pp < 1 || c->dp < 1 || c->ep < 1 || c->cp < 1) {
        st_error_set(err, ST_EINVAL, "--tp, --pp, --dp, --cp must be >= 1");
        return ST_EINVAL;
    }
    if (c->cp > 1) {
        const char *what = c->ep > 1               ? "--ep"
                           : c->spec_k > 0         ? "speculative decoding (--spec-k)"
                           : c->prefill_replicas > 0 ? "--disagg"
                           : c->n_colocated > 0    ? "--colocate"
                                                   : NULL;
        if (what) {
            st_error_set(err, ST_EINVAL, "context parallelism (--cp) is not modelled with %s; drop one of them", what);
            return ST_EINVAL;
        }
    }
    if (tf->heads % c->tp) {
        st_error_set(err, ST_EINVAL, "--tp %d does not divide the %lld attention heads of %s", c->tp, tf->heads, m->id);
        return ST_EINVAL;
    }
    if (kv_heads_check(m, c->tp, err))
        return ST_EINVAL;
    if (tf->layers < c->pp) {
        st_error_set(err, ST_EINVAL, "--pp %d exceeds the %lld layers of %s", c->pp, tf->layers, m->id);
        return ST_EINVAL;
    }
    if (c->ep > 1 && (tf->experts <= 0 || tf->experts % c->ep)) {
        if (tf->experts <= 0)
            st_error_set(err, ST_EINVAL, "--ep needs a mixture-of-experts model; %s is dense", m->id);
        else
            st_error_set(err, ST_EINVAL, "the expert-parallel degree %d does not divide the %lld experts of %s", c->ep,
                         tf->experts, m->id);
        return ST_EINVAL;
    }
    if (c->ep > 1 && c->pp > 1) {
        st_error_set(err, ST_EINVAL, "expert parallelism with --pp > 1 is not modelled; use --tp and --dp");
        return ST_EINVAL;
    }
    if (c->ep > 1 && c->dp * c->tp != c->ep) {
        st_error_set(err, ST_EINVAL, "expert parallelism spans the DP x TP ranks (%d); got %d", c->dp * c->tp, c->ep);
        return ST_EINVAL;
    }
    if (c->prefill_replicas + c->decode_replicas > 64) {
        st_error_set(err, ST_EINVAL, "--disagg %d:%d: at most 64 replicas", c->prefill_replicas, c->decode_replicas);
        return ST_EINVAL;
    }
    const st_model *others[5] = {c->draft};
    int no = c->spec_k > 0 && c->draft ? 1 : 0;
    for (int i = 0; i < c->n_colocated && i < 3; i++)
        others[no++] = c->colocated[i];
    for (int i = 0; i < no; i++) {
        const st_model *o = others[i];
        if (!o || o->kind != ST_MODEL_TRANSFORMER || !o->tf.causal) {
            st_error_set(err, ST_EINVAL, "%s is not a decoder language model; %s a causal transformer",
                         o ? o->id : "?", i == 0 && c->spec_k > 0 && c->draft ? "draft with" : "co-locate");
            return ST_EINVAL;
        }
        if (o->tf.heads % c->tp) {
            st_error_set(err, ST_EINVAL, "--tp %d does not divide the %lld attention heads of %s", c->tp, o->tf.heads,
                         o->id);
            return ST_EINVAL;
        }
        if (kv_heads_check(o, c->tp, err))
            return ST_EINVAL;
    }
    if (c->dp > 64) {
        st_error_set(err, ST_EINVAL, "--dp %d: at most 64 replicas", c->dp);
        return ST_EINVAL;
    }
    int gpus = c->tp * c->pp * c->cp;
    if (gpus > 1 || c->prefill_replicas > 0 || c->preempt == ST_PREEMPT_SWAP) {
        if (!c->cluster) {
            st_error_set(err, ST_EINVAL,
                         "%s needs the links between GPUs: pass --cluster NODE (a node or cluster preset)",
                         gpus > 1 ? "--tp/--pp/--cp" : c->prefill_replicas > 0 ? "--disagg" : "--preempt swap");
            return ST_EINVAL;
        }
        st_net_group g;
        int rc = gpus > 1 ? st_net_group_init(c->cluster, gpus, 0, &g, err) : 0;
        if (rc)
            return rc;
        /* the CP ring and the decode merge run over cp ranks, tp apart */
        int per = st_serve_cp_per_node(c);
        if (c->cp > 1 && st_net_group_init(c->cluster, c->cp, per, &g, err)) {
            st_error_set(err, ST_EINVAL,
                         "--cp %d with --tp %d on %s: a node holds %d CP ranks, which do not divide %d; use a CP "
                         "that is a multiple of %d (or at most %d)",
                         c->cp, c->tp, c->cluster->id, per, c->cp, per, per);
            return ST_EINVAL;
        }
    }
    if (c->max_num_seqs < 1 || c->max_batched_tokens < 1 || c->block_size < 1 || c->block_size > 1024) {
        st_error_set(err, ST_EINVAL, "--max-num-seqs, --max-batched-tokens must be >= 1 and --block-size in 1..1024");
        return ST_EINVAL;
    }
    /* vLLM's SchedulerConfig refuses a step budget smaller than its seats
     * ("max_num_batched_tokens ... must be greater than or equal to
     * max_num_seqs"): every running sequence needs a token a step */
    if ((c->sched == ST_SCHED_VLLM || c->sched == ST_SCHED_VLLM_V0) && c->max_batched_tokens < c->max_num_seqs) {
        st_error_set(err, ST_EINVAL, "a step budget of %lld tokens (--max-batched-tokens, vLLM's "
                     "max_num_batched_tokens) is below the %lld seats (--max-num-seqs, max_num_seqs): vLLM refuses "
                     "that, as each running sequence needs a token a step; raise the budget or lower the seats",
                     (long long)c->max_batched_tokens, (long long)c->max_num_seqs);
        return ST_EINVAL;
    }
    /* vLLM V0 without chunked prefill runs a prompt in one step, so its
     * SchedulerConfig refuses a step budget below max_model_len (a prompt
     * that long could never be scheduled) */
    if (c->sched == ST_SCHED_VLLM_V0 && c->model && c->model->kind == ST_MODEL_TRANSFORMER) {
        long long mlen = c->max_model_len > 0 ? c->max_model_len : c->model->tf.max_seq;
        if (c->max_batched_tokens < mlen) {
            st_error_set(err, ST_EINVAL,
                         "a step budget of %lld tokens (--max-batched-tokens) is below max_model_len %lld: vLLM V0 "
                         "runs a prompt in one step and refuses that; raise the budget to %lld, or lower "
                         "--max-model-len (or use --sched vllm or sarathi, which chunk prompts)",
                         (long long)c->max_batched_tokens, mlen, mlen);
            return ST_EINVAL;
        }
    }
    /* vLLM V1's FlashAttention backends read the paged cache in 16-token
     * pages: "Block size must be a multiple of 16." */
    if (c->sched == ST_SCHED_VLLM && c->block_size % 16) {
        st_error_set(err, ST_EINVAL,
                     "--block-size %d: vLLM V1's FlashAttention backends take multiples of 16 (16, 32, 64, 128); "
                     "use one of them, or --sched vllm-v0, whose paged-attention kernel takes 8",
                     c->block_size);
        return ST_EINVAL;
    }
    if (c->sched == ST_SCHED_SARATHI && c->chunk < 1) {
        st_error_set(err, ST_EINVAL, "--sched sarathi needs --chunk N (the token budget per step)");
        return ST_EINVAL;
    }
    if (!(c->gpu_mem_util > 0 && c->gpu_mem_util <= 1)) {
        st_error_set(err, ST_EINVAL, "--gpu-mem-util must be in (0, 1]");
        return ST_EINVAL;
    }
    if (c->spec_k < 0 || c->spec_k > 16 || (c->spec_k > 0 && !(c->spec_accept >= 0 && c->spec_accept <= 1))) {
        st_error_set(err, ST_EINVAL, "--spec-k must be 0..16, and speculative decoding needs --spec-accept A in [0, 1] "
                                     "(the per-token acceptance of the drafts)");
        return ST_EINVAL;
    }
    if (c->pp > 1 && (c->sched == ST_SCHED_STATIC || c->sched == ST_SCHED_ORCA)) {
        st_error_set(err, ST_EINVAL, "--pp > 1 is modelled with --sched vllm, vllm-v0 or sarathi");
        return ST_EINVAL;
    }
    if (c->spec_k > 0 && c->sched != ST_SCHED_VLLM && c->sched != ST_SCHED_SARATHI) {
        st_error_set(err, ST_EINVAL, "speculative decoding is modelled with --sched vllm or sarathi");
        return ST_EINVAL;
    }
    if (c->prefill_replicas < 0 || c->decode_replicas < 0 ||
        (c->prefill_replicas > 0) != (c->decode_replicas > 0)) {
        st_error_set(err, ST_EINVAL, "--disagg P:D needs P >= 1 prefill and D >= 1 decode replicas");
        return ST_EINVAL;
    }
    if (c->prefill_replicas > 0 && (c->sched == ST_SCHED_STATIC || c->sched == ST_SCHED_ORCA || c->ep > 1)) {
        st_error_set(err, ST_EINVAL, "--disagg works with --sched vllm, vllm-v0 or sarathi on dense or TP models");
        return ST_EINVAL;
    }
    if (c->preempt == ST_PREEMPT_SWAP && (c->sched != ST_SCHED_VLLM_V0 || c->prefill_replicas > 0)) {
        st_error_set(err, ST_EINVAL, "--preempt swap is vLLM V0's (--sched vllm-v0); V1 and the others recompute");
        return ST_EINVAL;
    }
    if (c->prefill_replicas > 0 && c->cluster && c->cluster->nodes <= 1 &&
        (c->prefill_replicas + c->decode_replicas) * c->tp * c->pp > c->cluster->node.gpus) {
        st_error_set(err, ST_EINVAL,
                     "--disagg %d:%d needs %d GPUs; %s has %d: use fewer replicas or a multi-node --cluster",
                     c->prefill_replicas, c->decode_replicas,
                     (c->prefill_replicas + c->decode_replicas) * c->tp * c->pp, c->cluster->id,
                     c->cluster->node.gpus);
        return ST_EINVAL;
    }
    /* expert parallelism all-to-alls across the DP x TP ranks: on a node
     * preset (no network between nodes) that group must fit in the node,
     * or its traffic would be priced on NVLink it does not have */
    if (c->ep > 1 && c->cluster && c->cluster->n_dims == 0 && c->ep > c->cluster->node.gpus) {
        st_error_set(err, ST_EINVAL,
                     "--ep: the expert-parallel group spans DP %d x TP %d = %d GPUs, beyond the %d of node %s, "
                     "which has no network between nodes: pass a multi-node --cluster of %s GPUs, or fewer "
                     "replicas",
                     c->dp, c->tp, c->ep, c->cluster->node.gpus, c->cluster->id, c->cluster->node.gpu.id);
        return ST_EINVAL;
    }
    /* A multi-node cluster preset has a size: every replica's GPUs must fit
     * in it. A node preset (no scale-out network) only names the links, and
     * its replicas may run on as many nodes of that kind as they need. */
    if (c->cluster && c->cluster->n_dims > 0) {
        long long need = (long long)c->dp * c->tp * c->pp * c->cp;
        long long have = (long long)c->cluster->nodes * c->cluster->node.gpus;
        if (need > have) {
            char split[64] = "";
            if (c->prefill_replicas > 0)
                snprintf(split, sizeof split, " (%d prefill + %d decode)", c->prefill_replicas, c->decode_replicas);
            int per = c->tp * c->pp * c->cp;
            st_error_set(err, ST_EINVAL,
                         "%d replica%s%s x %d GPU%s (TP %d x PP %d x CP %d) need %lld GPUs; cluster %s has %lld "
                         "(%d node%s x %d): use fewer replicas or a larger --cluster",
                         c->dp, c->dp == 1 ? "" : "s", split, per, per == 1 ? "" : "s", c->tp, c->pp, c->cp, need,
                         c->cluster->id, have, c->cluster->nodes, c->cluster->nodes == 1 ? "" : "s",
                         c->cluster->node.gpus);
            return ST_EINVAL;
        }
    }
    if (c->cluster && strcmp(c->cluster->node.gpu.id, c->gpu->id) != 0) {
        st_error_set(err, ST_EINVAL, "cluster %s is built from %s GPUs, not %s: pass --gpu %s or another --cluster",
                     c->cluster->id, c->cluster->node.gpu.id, c->gpu->id, c->cluster->node.gpu.id);
        return ST_EINVAL;
    }
    if (c->n_colocated > 0 && (c->prefill_replicas > 0 || c->ep > 1)) {
        st_error_set(err, ST_EINVAL, "co-location is modelled without --disagg and --ep");
        return ST_EINVAL;
    }
    if (c->dtype_set && !st_gpu_supports(c->gpu, c->dtype)) {
        st_error_set(err, ST_EINVAL, "--dtype %s: %s has no %s throughput (vLLM refuses it too); use --dtype %s",
                     st_dtype_name(c->dtype), c->gpu->id, st_dtype_name(c->dtype),
                     c->dtype == ST_BF16 ? "fp16" : "bf16");
        return ST_EINVAL;
    }
    if (c->quant == ST_QUANT_FP8 && !st_gpu_supports(c->gpu, ST_FP8)) {
        st_error_set(err, ST_EINVAL, "%s has no FP8 tensor cores; use --quant w8a8 or w4a16", c->gpu->id);
        return ST_EINVAL;
    }
    if (c->quant == ST_QUANT_W8A8 && !st_gpu_supports(c->gpu, ST_INT8)) {
        st_error_set(err, ST_EINVAL, "%s has no INT8 tensor throughput in its preset; use --quant w4a16", c->gpu->id);
        return ST_EINVAL;
    }
    return 0;
}

int st_serve_run(const st_serve_cfg *cfg_in, const st_reqset *rq, st_serve_result *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    st_serve_cfg cfg_r = *cfg_in; /* the batch limits the GPU defaults (0) resolved */
    st_serve_resolve_batch(&cfg_r);
    const st_serve_cfg *cfg = &cfg_r;
    int rc = st_serve_check(cfg, err);
    if (rc)
        return rc;
    sim s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.rq = rq;
    s.out = out;
    s.nmodels = 1 + cfg->n_colocated;
    const st_model *models[4] = {cfg->model, NULL, NULL, NULL};
    for (int i = 0; i < cfg->n_colocated; i++)
        models[i + 1] = cfg->colocated[i];
    for (size_t i = 0; i < rq->n; i++)
        if (rq->r[i].model >= s.nmodels) {
            st_error_set(err, ST_EINVAL, "request %zu is for model %d; only %d models are served", i, rq->r[i].model,
                         s.nmodels);
            return ST_EINVAL;
        }
    double frac = (cfg->n_colocated > 0 && cfg->share == ST_SHARE_SPACE) ? 1.0 / s.nmodels : 1.0;
    for (int m = 0; m < s.nmodels && !rc; m++)
        rc = st_serve_cost_init(&s.cost[m], cfg, models[m], frac, err);
    if (!rc && cfg->spec_k > 0) {
        st_model dm;
        if (cfg->draft) {
            dm = *cfg->draft;
        } else {
            /* self-drafting head (EAGLE/MTP-style): one block and the LM head */
            dm = *cfg->model;
            dm.tf.layers = 1;
        }
        s.draft_model = dm;
        rc = st_serve_cost_init(&s.draft, cfg, &s.draft_model, frac, err);
        s.have_draft = !rc;
    }
    long long max_len = cfg->max_model_len > 0 ? cfg->max_model_len : cfg->model->tf.max_seq;
    s.max_len = max_len;
    s.kv_rep = cfg->prefill_replicas > 0 ? cfg->prefill_replicas : 0;
    /* replicas */
    int dp = cfg->prefill_replicas > 0 ? cfg->prefill_replicas + cfg->decode_replicas : cfg->dp;
    s.nrep = dp * s.nmodels;
    s.rep = calloc((size_t)s.nrep, sizeof *s.rep);
    s.rs = calloc(rq->n ? rq->n : 1, sizeof *s.rs);
    s.itl = calloc(1, sizeof *s.itl);
    out->req = calloc(rq->n ? rq->n : 1, sizeof *out->req);
    out->kv = calloc(ST_SERVE_KV_SAMPLES, sizeof *out->kv);
    s.route = cfg->route == ST_ROUTE_AUTO ? (cfg->sched == ST_SCHED_VLLM ? ST_ROUTE_VLLM : ST_ROUTE_RR) : cfg->route;
    s.lb_tick = LLONG_MIN;
    s.lb_w = calloc((size_t)s.nrep, sizeof *s.lb_w);
    s.lb_r = calloc((size_t)s.nrep, sizeof *s.lb_r);
    if (!rc && (!s.rep || !s.rs || !s.itl || !out->req || !out->kv || !s.lb_w || !s.lb_r)) {
        st_error_set(err, ST_ENOMEM, "out of memory for %zu requests", rq->n);
        rc = ST_ENOMEM;
    }
    int lockstep = cfg->ep > 1;
    if (!rc) {
        s.ngrp = lockstep ? s.nmodels : s.nrep;
        s.grp = calloc((size_t)s.ngrp, sizeof *s.grp);
        s.ndev = dp;
        s.dev_busy = malloc((size_t)(s.ndev + s.ngrp) * sizeof *s.dev_busy);
        if (!s.grp || !s.dev_busy)
            rc = ST_ENOMEM;
    }
    for (int m = 0; m < s.nmodels && !rc; m++) {
        double mem_frac = 1.0 / s.nmodels;
        long long blocks = st_serve_kv_blocks(&s.cost[m], cfg, mem_frac);
        if (m == 0 && s.have_draft && cfg->num_gpu_blocks <= 0) {
            /* the drafter keeps its own K and V in the same block table
             * (vLLM gives both models one block count), so a block costs
             * the target's bytes and the draft's; a separate draft model's
             * weights come out of the same memory */
            double avail = st_serve_kv_avail_bytes(&s.cost[0], cfg, mem_frac) - (cfg->draft ? s.draft.weights_bytes : 0);
            blocks = avail > 0 ? (long long)floor(avail / (kv_tok_bytes(&s, 0) * cfg->block_size)) : 0;
        }
        if (blocks < 1 || blocks * cfg->block_size < 1) {
            double usable = st_serve_cuda_total(&s.cost[m].gpu) * cfg->gpu_mem_util * mem_frac;
            double reserve = cfg->runtime_reserve_bytes;
            if (reserve >= usable)
                st_error_set(err, ST_EINVAL,
                             "--runtime-reserve %.2f GB alone fills the %.2f GB that --gpu-mem-util %.2f leaves of "
                             "%s%s; lower --runtime-reserve",
                             reserve / 1e9, usable / 1e9, cfg->gpu_mem_util, cfg->gpu->id,
                             s.nmodels > 1 ? " (this model's share)" : "");
            else if (m == 0 && cfg->spec_k > 0 && cfg->draft)
                st_error_set(err, ST_EINVAL,
                             "%s with its draft %s does not fit: %.2f GB of weights, %.2f GB of the draft's, %.2f GB "
                             "of activations and %.2f GB of runtime reserve per GPU leave no KV cache in the %.2f GB "
                             "that --gpu-mem-util %.2f leaves of %s; use a smaller --draft, raise --tp or quantise "
                             "(--quant)",
                             models[m]->id, cfg->draft->id, s.cost[m].weights_bytes / 1e9, s.draft.weights_bytes / 1e9,
                             s.cost[m].act_bytes / 1e9, reserve / 1e9, usable / 1e9, cfg->gpu_mem_util, cfg->gpu->id);
            else
                st_error_set(err, ST_EINVAL,
                             "%s does not fit: %.2f GB of weights, %.2f GB of activations and %.2f GB of runtime "
                             "reserve per GPU leave no KV cache in the %.2f GB that --gpu-mem-util %.2f leaves of %s; "
                             "raise --tp, quantise (--quant) or use a larger GPU",
                             models[m]->id, s.cost[m].weights_bytes / 1e9, s.cost[m].act_bytes / 1e9, reserve / 1e9,
                             usable / 1e9, cfg->gpu_mem_util, cfg->gpu->id);
            rc = ST_EINVAL;
            break;
        }
        /* vLLM refuses to start when the cache cannot hold one request of
         * max_model_len (V1 check_enough_kv_cache_memory, V0's cache-size
         * check); with num_gpu_blocks_override it does not look */
        long long mlen_m = cfg->max_model_len > 0 ? cfg->max_model_len : models[m]->tf.max_seq;
        long long usable_m = blocks; /* vLLM compares with the whole pool, its null block included */
        if (cfg->num_gpu_blocks <= 0 && mlen_m > 0 && blocks_for(&s, mlen_m) > usable_m) {
            double per_block = kv_tok_bytes(&s, m) * cfg->block_size;
            st_error_set(err, ST_EINVAL,
                         "%s's max_model_len %lld needs %d KV blocks (%.2f GB a GPU) but the cache holds %lld "
                         "(%.2f GB), and vLLM refuses to start then; pass --max-model-len (a sweep's "
                         "max_model_len) %lld or less, or raise --gpu-mem-util, --tp or --cp",
                         models[m]->id, mlen_m, blocks_for(&s, mlen_m), blocks_for(&s, mlen_m) * per_block / 1e9,
                         usable_m, (double)usable_m * per_block / 1e9, usable_m * (long long)cfg->block_size);
            rc = ST_EINVAL;
            break;
        }
        if (m == 0) {
            out->kv_blocks = blocks;
            out->kv_tokens = blocks * cfg->block_size;
            out->weights_bytes_per_gpu = s.cost[0].weights_bytes;
            out->kv_bytes_per_block = kv_tok_bytes(&s, 0) * cfg->block_size;
            out->activation_reserve_bytes = s.cost[0].act_bytes;
        }
        for (int d = 0; d < dp; d++) {
            int i = m * dp + d;
            replica *r = &s.rep[i];
            r->model = m;
            r->cost = &s.cost[m];
            /* vLLM V1's BlockPool takes block 0 as its null block (the
             * placeholder of skipped blocks): one block fewer to allocate */
            r->total = r->free_blocks = blocks - (cfg->sched == ST_SCHED_VLLM ? 1 : 0);
            /* the free block queue's order matters where V1 keeps a
             * preempted request's blocks cached (fq_push) */
            r->fq_on = cfg->sched == ST_SCHED_VLLM && cfg->prefix_cache && cfg->preempt == ST_PREEMPT_RECOMPUTE;
            if (r->fq_on && fq_push(r, -1, r->total))
                rc = ST_ENOMEM;
            r->role = cfg->prefill_replicas > 0 ? (d < cfg->prefill_replicas ? ROLE_PREFILL : ROLE_DECODE) : ROLE_BOTH;
            r->group = lockstep ? m : i;
            int maxg = 0;
            for (size_t j = 0; j < rq->n; j++)
                if (rq->r[j].prefix_group + 1 > maxg)
                    maxg = rq->r[j].prefix_group + 1;
            r->npg = maxg;
            s.groups = cfg->prefix_cache && maxg > 0;
            r->pg = maxg ? calloc((size_t)maxg, sizeof *r->pg) : NULL;
            r->sb = cfg->sched == ST_SCHED_STATIC ? malloc((size_t)cfg->max_num_seqs * sizeof *r->sb) : NULL;
            if ((maxg && !r->pg) || (cfg->sched == ST_SCHED_STATIC && !r->sb))
                rc = ST_ENOMEM;
        }
    }
    /* groups and devices */
    for (int gi = 0; gi < s.ngrp && !rc; gi++) {
        group *g = &s.grp[gi];
        if (lockstep) {
            g->first = gi * dp;
            g->n = dp;
            g->device = gi;
        } else {
            g->first = gi;
            g->n = 1;
            /* time-sliced co-location: replica d of every model shares device d */
            g->device = (cfg->n_colocated > 0 && cfg->share == ST_SHARE_TIME) ? gi % dp : gi;
        }
        g->pp = cfg->pp;
        if (g->n > 64) {
            rc = ST_EINVAL;
            st_error_set(err, ST_EINVAL, "at most 64 lockstep ranks");
            break;
        }
        int cap = cfg->max_num_seqs + 1;
        g->slots = calloc((size_t)(g->pp * g->n), sizeof *g->slots);
        if (!g->slots) {
            rc = ST_ENOMEM;
            break;
        }
        for (int k = 0; k < g->pp * g->n; k++) {
            g->slots[k].e = malloc((size_t)cap * sizeof(entry));
            if (!g->slots[k].e)
                rc = ST_ENOMEM;
        }
    }
    for (int gi = 0; gi < s.ngrp && !rc; gi++) {
        /* ring of the groups that share gi's device, in index order */
        int nx = gi;
        for (int j = 1; j <= s.ngrp; j++)
            if (s.grp[(gi + j) % s.ngrp].device == s.grp[gi].device) {
                nx = (gi + j) % s.ngrp;
                break;
            }
        s.grp[gi].dev_next = nx;
    }
    if (!rc) {
        s.ndev = s.ngrp; /* device ids are < ngrp */
        for (int d = 0; d < s.ndev; d++)
            s.dev_busy[d] = -1;
    }
    if (rc == ST_ENOMEM && !err->code)
        st_error_set(err, ST_ENOMEM, "out of memory setting up the replicas");
    for (size_t i = 0; i < rq->n && !rc; i++) {
        out->req[i].scheduled = -1;
        out->req[i].replica = -1;
        s.rs[i].in = rq->r[i].in;
        s.rs[i].out = rq->r[i].out;
        const st_model *rm = models[rq->r[i].model];
        long long mlen = cfg->max_model_len > 0 ? cfg->max_model_len : rm->tf.max_seq;
        long long cap = s.rep[rq->r[i].model * dp].total;
        if (cfg->sched == ST_SCHED_VLLM_V0)
            cap -= (long long)floor(cfg->watermark * (double)cap); /* V0 keeps the watermark free */
        /* the last output token's K and V are never written: a request holds
         * at most in + out - 1 tokens (plus the drafts of a speculative step) */
        int held = cfg->sched == ST_SCHED_ORCA || cfg->sched == ST_SCHED_STATIC ? 0 : 1; /* those reserve in + out */
        int need = blocks_for(&s, (long long)rq->r[i].in + rq->r[i].out - held + (rq->r[i].model == 0 ? cfg->spec_k : 0));
        if ((long long)rq->r[i].in + rq->r[i].out > mlen) {
            char where[48] = "";
            if (rq->r[i].line > 0)
                snprintf(where, sizeof where, " (line %d of the trace)", rq->r[i].line);
            st_error_set(err, ST_EINVAL,
                         "request %zu%s has %d + %d tokens, beyond %s's max_model_len %lld; raise --max-model-len or "
                         "trim the requests (--trim)",
                         i, where, rq->r[i].in, rq->r[i].out, rm->id, mlen);
            rc = ST_EINVAL;
        } else if (need > cap && cfg->num_gpu_blocks > 0) {
            /* the count was forced: say what it takes, the null block (V1)
             * and vllm-v0's watermark on top of the request's blocks */
            long long pool = s.rep[rq->r[i].model * dp].total, null_blocks = cfg->num_gpu_blocks - pool, n = need;
            while (n - null_blocks - (cfg->sched == ST_SCHED_VLLM_V0 ? (long long)floor(cfg->watermark * (double)(n - null_blocks)) : 0) < need)
                n++;
            st_error_set(err, ST_EINVAL,
                         "request %zu needs %d KV blocks, and --num-gpu-blocks %lld leaves it %lld%s; give "
                         "--num-gpu-blocks %lld or more",
                         i, need, cfg->num_gpu_blocks, cap,
                         null_blocks > 0 && pool > cap ? " (less the null block and vllm-v0's watermark)"
                         : null_blocks > 0 ? " (one is the engine's null block)"
                         : pool > cap ? " (less vllm-v0's watermark)" : "",
                         n);
            rc = ST_EINVAL;
        } else if (need > cap) {
            const st_serve_cost *mc = &s.cost[rq->r[i].model];
            st_error_set(err, ST_EINVAL,
                         "request %zu needs %d KV blocks, more than the %lld the cache can give it%s; use a larger GPU, "
                         "--tp or --cp, or leave the cache more memory (the activations of a %lld-token step, "
                         "--max-batched-tokens, reserve %.2f GB a GPU; --gpu-mem-util is %.2f)",
                         i, need, cap, cfg->sched == ST_SCHED_VLLM_V0 ? " (less vllm-v0's watermark)" : "",
                         cfg->max_batched_tokens, mc->act_bytes / 1e9, cfg->gpu_mem_util);
            rc = ST_EINVAL;
        }
    }
    scratch sc = {0};
    if (!rc) {
        /* event loop */
        size_t next = 0;
        unsigned long long polls = 0; /* events run, for the cancel poll */
        s.kv_dt = 0.05; /* first sample spacing; doubles whenever the buffer fills */
        s.kv_next = rq->n ? rq->r[0].arrival : 0;
        for (;;) {
            double ta = next < rq->n ? rq->r[next].arrival : INFINITY;
            double te = s.h.n ? s.h.v[0].t : INFINITY;
            if (ta == INFINITY && te == INFINITY)
                break;
            if (ta <= te) {
                /* every request that arrives at this instant queues before
                 * any replica schedules */
                s.now = ta;
                kv_sample(&s);
                size_t first = next;
                while (next < rq->n && rq->r[next].arrival == ta) {
                    int id = (int)next++;
                    int ri = route(&s, rq->r[id].model, cfg->prefill_replicas > 0 ? ROLE_PREFILL : ROLE_BOTH);
                    out->req[id].replica = ri;
                    s.rep[ri].outstanding++;
                    if (wq_push_back(&s.rep[ri], id)) {
                        rc = ST_ENOMEM;
                        break;
                    }
                }
                for (size_t id = first; id < next && !rc; id++)
                    try_start(&s, s.rep[out->req[id].replica].group, &sc);
            } else {
                event e = heap_pop(&s.h);
                s.now = e.t;
                kv_sample(&s);
                if (e.kind == EV_STEP) {
                    if (e.b >= 0)
                        apply_step(&s, e.a, e.b);
                    /* a pipeline still holding its device takes its next stage
                     * slot; a free device goes round-robin: the other groups
                     * that share it first, this one last */
                    if (s.dev_busy[s.grp[e.a].device] == e.a)
                        try_start(&s, e.a, &sc);
                    else
                        wake_device(&s, s.grp[e.a].device, e.a, &sc);
                } else {
                    replica *r = &s.rep[e.b];
                    s.rs[e.a].state = RS_WAITING;
                    if (wq_push_back(r, e.a)) {
                        rc = ST_ENOMEM;
                        break;
                    }
                    try_start(&s, r->group, &sc);
                }
            }
            if (s.err) {
                rc = s.err;
                break;
            }
            if (cfg->cancel && (++polls & 1023) == 0 && __atomic_load_n(cfg->cancel, __ATOMIC_RELAXED)) {
                rc = ST_ECANCELED;
                st_error_set(err, rc, "cancelled");
                break;
            }
        }
        if (rc == ST_ENOMEM)
            st_error_set(err, ST_ENOMEM, "out of memory during the simulation");
        else if (rc && s.errmsg[0])
            st_error_set(err, rc, "%s", s.errmsg);
    }
    if (!rc && out->n_done != rq->n) {
        st_error_set(err, ST_EINVAL, "%zu of %zu requests never finished (a request larger than the KV cache?)",
                     rq->n - out->n_done, rq->n);
        rc = ST_EINVAL;
    }
    if (!rc) {
        /* metrics */
        size_t n = rq->n;
        double *v = malloc((n ? n : 1) * sizeof *v);
        if (!v) {
            rc = ST_ENOMEM;
            st_error_set(err, ST_ENOMEM, "out of memory for the metrics");
        } else {
            double t0 = n ? rq->r[0].arrival : 0, t1 = t0, out_tok = 0, all_tok = 0, cached = 0, prompt = 0;
            size_t good = 0;
            for (size_t i = 0; i < n; i++) {
                st_req_out *o = &out->req[i];
                o->arrival = rq->r[i].arrival;
                o->scheduled = out->req[i].scheduled >= 0 ? out->req[i].scheduled : out->req[i].first;
                o->in = rq->r[i].in;
                o->out = rq->r[i].out;
                o->model = rq->r[i].model;
                if (out->req[i].done > t1)
                    t1 = out->req[i].done;
                out_tok += rq->r[i].out;
                all_tok += rq->r[i].out + rq->r[i].in;
                cached += out->req[i].cached_tokens;
                prompt += rq->r[i].in;
                double ttft = out->req[i].first - o->arrival;
                double tpot = rq->r[i].out > 1 ? (out->req[i].done - out->req[i].first) / (rq->r[i].out - 1) : 0;
                if ((cfg->slo_ttft_s <= 0 || ttft <= cfg->slo_ttft_s) && (cfg->slo_tpot_s <= 0 || tpot <= cfg->slo_tpot_s))
                    good++;
            }
            size_t all;
            st_serve_req_dists(out->req, n, -1, v, &out->ttft, &out->tpot, &out->e2e, &all);
            for (size_t i = 0; i < n; i++)
                v[i] = out->req[i].scheduled - out->req[i].arrival;
            st_dist_of(v, n, &out->queue);
            free(v);
            const itl_hist *h = s.itl;
            out->itl.n = (size_t)h->n;
            out->itl.mean = h->n ? h->sum / (double)h->n : 0;
            out->itl.p50 = itl_q(h, 0.5);
            out->itl.p90 = itl_q(h, 0.9);
            out->itl.p95 = itl_q(h, 0.95);
            out->itl.p99 = itl_q(h, 0.99);
            out->itl.max = h->max;
            out->n_requests = n;
            double dur = t1 - t0;
            out->duration_s = dur;
            out->throughput_tok_s = dur > 0 ? out_tok / dur : 0;
            out->throughput_total_tok_s = dur > 0 ? all_tok / dur : 0;
            out->throughput_req_s = dur > 0 ? (double)n / dur : 0;
            out->goodput_req_s = dur > 0 ? (double)good / dur : 0;
            out->slo_attainment = n ? (double)good / (double)n : 0;
            out->prefix_hit_ratio = prompt > 0 ? cached / prompt : 0;
            out->resume_cached_tokens = s.resume_cached;
            out->spec_tokens_per_step = s.spec_steps ? (double)s.spec_tokens / (double)s.spec_steps : 0;
            int gpus = s.nrep / s.nmodels * cfg->tp * cfg->pp * cfg->cp;
            out->gpus = gpus;
            double held = cfg->runtime_reserve_bytes * s.nmodels + s.kv_peak_bytes;
            for (int m = 0; m < s.nmodels; m++)
                held += s.cost[m].weights_bytes + s.cost[m].act_bytes;
            if (s.have_draft)
                held += s.draft.weights_bytes;
            out->memory_per_gpu_bytes = held;
            /* the peak of the type the block GEMMs run in: FP8 or INT8 under
             * fp8 and w8a8 quantisation (W4A16 dequantises to 16 bits) */
            st_dtype mm = cfg->quant == ST_QUANT_FP8 ? ST_FP8 : cfg->quant == ST_QUANT_W8A8 ? ST_INT8 : s.cost[0].dtype;
            double peak = st_gpu_peak(cfg->gpu, mm, 0);
            /* MFU counts the model FLOPs the requests needed: each prompt
             * token computed once (not the ones the prefix cache served) and
             * each output token; a static batch's padding, rejected draft
             * tokens, the draft model and recomputation after preemption
             * are work the GPUs did, not model FLOPs (as train keeps mfu
             * apart from hw_tflops) */
            double model_flops = 0;
            for (size_t i = 0; i < n; i++)
                model_flops += (double)(out->req[i].in - out->req[i].cached_tokens + out->req[i].out) *
                               s.cost[out->req[i].model].flops_per_token;
            out->mfu = dur > 0 && peak > 0 ? model_flops / (dur * gpus * peak) : 0;
            /* time-shared co-location: the models take turns on dp devices;
             * otherwise every replica has its own GPUs (or its share) */
            double units = cfg->n_colocated > 0 && cfg->share == ST_SHARE_TIME ? (double)(s.nrep / s.nmodels)
                                                                                : (double)s.nrep;
            out->busy_frac = dur > 0 ? s.busy / (dur * units) : 0;
            if (out->busy_frac > 1)
                out->busy_frac = 1;
            out->kv_transfer_s = s.kv_transfers ? s.kv_transfer_sum / (double)s.kv_transfers : 0;
        }
    }
    /* clean up */
    free(sc.chunk);
    free(sc.ctx);
    for (int i = 0; s.rep && i < s.nrep; i++) {
        free(s.rep[i].wq);
        free(s.rep[i].run);
        free(s.rep[i].pg);
        free(s.rep[i].sb);
        free(s.rep[i].fq);
        free(s.rep[i].ph);
    }
    for (int gi = 0; s.grp && gi < s.ngrp; gi++) {
        for (int k = 0; s.grp[gi].slots && k < s.grp[gi].pp * s.grp[gi].n; k++)
            free(s.grp[gi].slots[k].e);
        free(s.grp[gi].slots);
    }
    free(s.grp);
    free(s.dev_busy);
    free(s.rep);
    free(s.lb_w);
    free(s.lb_r);
    free(s.rs);
    free(s.itl);
    free(s.h.v);
    for (int m = 0; m < s.nmodels; m++)
        st_serve_cost_free(&s.cost[m]);
    if (s.have_draft)
        st_serve_cost_free(&s.draft);
    if (rc)
        st_serve_result_free(out);
    return rc;
}
