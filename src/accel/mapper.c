/*
 * The mapper: search the factorizations and loop orders a constrained
 * architecture allows for the best mapping of one problem.
 *
 * The space: every prime factor of every dimension goes to one "slot" (a
 * level's temporal loops, or the X or Y split of a fan-out) that the
 * constraints allow; the backing store takes whatever is left. Loop order
 * matters only through which tensor the innermost loops of a level leave
 * untouched (each of G's companions N M C P Q R S indexes exactly two of the
 * three tensors), so each level with two or more loops has three orders
 * worth trying: inputs-, weights- or outputs-stationary.
 *
 * Small spaces are enumerated exhaustively. Larger ones: independent
 * restarts, each a seeded random valid start followed by steepest descent
 * over single-prime moves, prime swaps and loop-order changes. Restart r
 * always uses the same seed and the best is chosen by (score, r), so the
 * answer is the same for any thread count. A wall-clock budget may stop the
 * search early; the result then says truncated.
 */
#include "config.h"
#include "accel/accel.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define ND ST_AD_COUNT
#define MAX_PRIMES 96
#define MAX_SLOTS (3 * ST_ACCEL_MAX_LEVELS)

enum { SLOT_T = 0, SLOT_X, SLOT_Y };

typedef struct space {
    const st_accel *a;
    const st_aprob *p;
    st_aobj obj;
    int nslots;
    int slot_level[MAX_SLOTS], slot_kind[MAX_SLOTS];
    int nprimes;
    int prime_dim[MAX_PRIMES];
    unsigned prime_val[MAX_PRIMES];
    int nallowed[MAX_PRIMES];
    unsigned char allowed[MAX_PRIMES][MAX_SLOTS]; /* slot indices; [0] is the backing store */
    unsigned char pinned[MAX_PRIMES]; /* a prime of a constraint's fixed factor: its one slot, never moved */
    int perm_levels[ST_ACCEL_MAX_LEVELS];         /* levels whose order may vary */
    int nperm;
    st_amap base; /* keeps and fixed orders */
} space;

typedef struct state {
    unsigned char slot[MAX_PRIMES];
    unsigned char cls[ST_ACCEL_MAX_LEVELS]; /* order class per level */
} state;

static unsigned long long rng_next(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int st_aobj_parse(const char *s, st_aobj *out)
{
    static const char *const names[] = {"edp", "energy", "delay"};
    for (int i = 0; i < 3; i++)
        if (strcasecmp(s, names[i]) == 0) {
            *out = (st_aobj)i;
            return 0;
        }
    return ST_EINVAL;
}

const char *st_aobj_name(st_aobj o)
{
    static const char *const names[] = {"edp", "energy", "delay"};
    return (o >= 0 && o <= ST_AOBJ_DELAY) ? names[o] : "?";
}

void st_mapper_opts_default(st_mapper_opts *o)
{
    memset(o, 0, sizeof *o);
    o->objective = ST_AOBJ_EDP;
    o->seed = 1;
    o->threads = 1;
}

/* Loop order of level i for class c: dims that do not index tensor c
 * innermost. A fixed order from the constraints wins. */
static void order_for(const st_accel *a, int i, int c, unsigned char *perm)
{
    const st_mem_level *l = &a->level[i];
    unsigned used = 0;
    int k = 0;
    for (const char *s = l->t_perm; *s; s++) {
        int d = (int)(strchr(ST_AD_LETTERS, *s) - ST_AD_LETTERS);
        perm[k++] = (unsigned char)d;
        used |= 1u << d;
    }
    if (!l->t_perm[0]) {
        unsigned rel = st_adim_relevant((st_tensor)c);
        for (int d = 0; d < ND; d++)
            if (!(rel & (1u << d)))
                perm[k++] = (unsigned char)d, used |= 1u << d;
    }
    for (int d = 0; d < ND; d++)
        if (!(used & (1u << d)))
            perm[k++] = (unsigned char)d;
}

/* Two primes that the search may exchange freely: the same value of the
 * same dim, neither pinned by a constraint. Runs of them are enumerated once
 * (as a multiset), and only the first of a run is moved. */
static int same_run(const space *sp, int a, int b)
{
    return sp->prime_dim[a] == sp->prime_dim[b] && sp->prime_val[a] == sp->prime_val[b] && !sp->pinned[a] &&
           !sp->pinned[b];
}

/* The factor slot s fixes for dim d (0: none). */
static unsigned slot_fixed(const space *sp, int s, int d)
{
    const st_mem_level *l = &sp->a->level[sp->slot_level[s]];
    return sp->slot_kind[s] == SLOT_T ? l->t_fixed[d] : sp->slot_kind[s] == SLOT_X ? l->sx_fixed[d] : l->sy_fixed[d];
}

static int any_fixed(const unsigned *f)
{
    for (int d = 0; d < ND; d++)
        if (f[d] > 1)
            return 1;
    return 0;
}

/* Append v's prime factors as primes of dim d; pinned to slot `pin` (>= 0)
 * or free over the slots whose constraints allow d. */
static int add_primes(space *sp, const st_aprob *p, int d, long long v, int pin, st_error *err)
{
    for (long long f = 2; v > 1; f++) {
        if (f * f > v)
            f = v;
        while (v % f == 0) {
            if (sp->nprimes == MAX_PRIMES)
                return st_error_set(err, ST_EINVAL, "problem %s has more than %d prime "
                                                    "factors; the mapper cannot search it",
                                    p->name, MAX_PRIMES);
            int k = sp->nprimes++;
            sp->prime_dim[k] = d;
            sp->prime_val[k] = (unsigned)f;
            if (pin >= 0) {
                sp->pinned[k] = 1;
                sp->allowed[k][sp->nallowed[k]++] = (unsigned char)pin;
            } else {
                /* the backing store takes what no other level does, but a
                 * constraint on it (DRAM's factors: [C=1] or [M=4]) binds
                 * there too */
                for (int s = 0; s < sp->nslots; s++) {
                    const st_mem_level *l = &sp->a->level[sp->slot_level[s]];
                    unsigned mask = sp->slot_kind[s] == SLOT_T ? l->t_allow
                                    : sp->slot_kind[s] == SLOT_X ? l->sx_allow : l->sy_allow;
                    if (mask & (1u << d))
                        sp->allowed[k][sp->nallowed[k]++] = (unsigned char)s;
                }
                if (sp->nallowed[k] == 0)
                    return st_error_set(err, ST_EINVAL, "the constraints of %s leave no level a factor of %c: the "
                                        "problem %s has %c = %lld, whose factors beyond those fixed must go "
                                        "somewhere; allow %c at some level", sp->a->name, ST_AD_LETTERS[d],
                                        p->name, ST_AD_LETTERS[d], p->d[d], ST_AD_LETTERS[d]);
            }
            v /= f;
        }
    }
    return 0;
}

static int build_space(space *sp, const st_accel *a, const st_aprob *p, st_aobj obj,
                       st_error *err)
{
    memset(sp, 0, sizeof *sp);
    sp->a = a;
    sp->p = p;
    sp->obj = obj;
    st_amap_init(&sp->base, a, p);
    /* slot 0: the backing store's temporal loops */
    for (int i = 0; i < a->n_levels; i++) {
        const st_mem_level *l = &a->level[i];
        int fx, fy;
        st_accel_fanout(a, i, &fx, &fy);
        /* fixed splits past the fan-out (an array a sweep made smaller than
         * the constraints assume) leave no mapping: say so, not drop them */
        long long px = st_alevel_fixed_split(l, 0), py = st_alevel_fixed_split(l, 1);
        if (px > fx || py > fy)
            return st_error_set(err, ST_EINVAL, "the constraints of %s split %lld ways along %c at %s, but its "
                                "fan-out has %d there", a->name, px > fx ? px : py, px > fx ? 'X' : 'Y', l->name,
                                px > fx ? fx : fy);
        if (l->cls != ST_MEM_FANOUT && (i == 0 || l->t_allow || any_fixed(l->t_fixed))) {
            sp->slot_level[sp->nslots] = i;
            sp->slot_kind[sp->nslots++] = SLOT_T;
        }
        if (fx > 1 && (l->sx_allow || any_fixed(l->sx_fixed))) {
            sp->slot_level[sp->nslots] = i;
            sp->slot_kind[sp->nslots++] = SLOT_X;
        }
        if (fy > 1 && (l->sy_allow || any_fixed(l->sy_fixed))) {
            sp->slot_level[sp->nslots] = i;
            sp->slot_kind[sp->nslots++] = SLOT_Y;
        }
        /* the loop order can only matter where two or more dims may loop:
         * the free ones and those a constraint fixes above 1 */
        unsigned loops = l->t_allow;
        for (int d = 0; d < ND; d++)
            loops |= l->t_fixed[d] > 1 ? 1u << d : 0;
        if (l->cls != ST_MEM_FANOUT && !l->t_perm[0] && (i == 0 || __builtin_popcount(loops) >= 2))
            sp->perm_levels[sp->nperm++] = i;
        order_for(a, i, ST_TENSOR_OUTPUTS, sp->base.perm[i]);
    }
    /* the factors constraints fix come out of each dim first: what is left
     * is the mapper's to place; the fixed ones are pinned to their slots */
    for (int d = 0; d < ND; d++) {
        long long fixed = 1;
        double shown = 1; /* the product as written, for the message */
        char at[160] = "";
        for (int s = 0; s < sp->nslots; s++) {
            unsigned f = slot_fixed(sp, s, d);
            if (f > 1) {
                /* past the problem's size it cannot divide: stop there
                 * rather than overflow (three levels at 2^24 wrapped to 0) */
                fixed = fixed > p->d[d] ? fixed : fixed * f;
                shown *= f;
                size_t n = strlen(at);
                snprintf(at + n, sizeof at - n, "%s%u at %s%s", n ? " x " : "", f,
                         a->level[sp->slot_level[s]].name,
                         sp->slot_kind[s] == SLOT_T ? "" : sp->slot_kind[s] == SLOT_X ? " (X)" : " (Y)");
            }
        }
        if (fixed > 1 && (fixed > p->d[d] || p->d[d] % fixed))
            return st_error_set(err, ST_EINVAL, "the constraints of %s fix %c's factors (%s = %.17g), which do not "
                                "divide problem %s's %c = %lld; relax the constraint or map another problem",
                                a->name, ST_AD_LETTERS[d], at, shown, p->name, ST_AD_LETTERS[d], p->d[d]);
        int rc = add_primes(sp, p, d, p->d[d] / fixed, -1, err);
        for (int s = 0; s < sp->nslots && !rc; s++)
            if (slot_fixed(sp, s, d) > 1)
                rc = add_primes(sp, p, d, slot_fixed(sp, s, d), s, err);
        if (rc)
            return rc;
    }
    return 0;
}

static void to_map(const space *sp, const state *st, st_amap *m)
{
    *m = sp->base;
    for (int i = 0; i < m->n; i++)
        for (int d = 0; d < ND; d++)
            m->t[i][d] = m->sx[i][d] = m->sy[i][d] = 1;
    for (int k = 0; k < sp->nprimes; k++) {
        int s = st->slot[k], i = sp->slot_level[s], d = sp->prime_dim[k];
        unsigned *f = sp->slot_kind[s] == SLOT_T ? &m->t[i][d]
                      : sp->slot_kind[s] == SLOT_X ? &m->sx[i][d] : &m->sy[i][d];
        *f *= sp->prime_val[k];
    }
    for (int j = 0; j < sp->nperm; j++) {
        int i = sp->perm_levels[j];
        order_for(sp->a, i, st->cls[i], m->perm[i]);
    }
}

/* A mapping's score: the objective (a), then what breaks its ties (b):
 * cycles under energy and EDP (also where every access and MAC is free, an
 * architecture of zero energies), energy under delay. Compared in that
 * order: a tie-break folded into one double (c x (1 + 1e-12 e)) fell below
 * its precision, and delay kept a mapping of twice the energy at the same
 * cycles. a < 0: not a valid mapping. */
typedef struct mscore {
    double a, b;
} mscore;

static const mscore NO_SCORE = {-1, 0};

static int valid_score(mscore s) { return s.a >= 0; }

/* x is better than y: a valid one beats none, then the lower objective, then
 * the lower tie-break */
static int better(mscore x, mscore y)
{
    if (!valid_score(x))
        return 0;
    if (!valid_score(y))
        return 1;
    return x.a < y.a || (x.a == y.a && x.b < y.b);
}

static int same_score(mscore x, mscore y) { return x.a == y.a && x.b == y.b; }

static mscore score_of(const space *sp, const state *st, long long *evals)
{
    st_amap m;
    double e, c;
    to_map(sp, st, &m);
    (*evals)++;
    if (!st_accel_eval_fast(sp->a, sp->p, &m, &e, &c))
        return NO_SCORE;
    switch (sp->obj) {
    case ST_AOBJ_ENERGY: return (mscore){e, c};
    case ST_AOBJ_DELAY: return (mscore){c, e};
    default: return (mscore){e * c, c};
    }
}

/* Steepest descent from st over moves, swaps and order changes. */
static mscore descend(const space *sp, state *st, mscore cur, long long *evals, long long cap)
{
    state best, cand;
    mscore bs;
    for (;;) {
        best = *st;
        bs = cur;
        for (int k = 0; k < sp->nprimes; k++)
            for (int a = 0; a < sp->nallowed[k]; a++) {
                int s = sp->allowed[k][a];
                if (s == st->slot[k])
                    continue;
                /* identical primes of one dim: move only the first of a run */
                if (k > 0 && same_run(sp, k - 1, k) && st->slot[k - 1] == st->slot[k])
                    continue;
                cand = *st;
                cand.slot[k] = (unsigned char)s;
                mscore v = score_of(sp, &cand, evals);
                if (better(v, bs))
                    bs = v, best = cand;
                if (cap > 0 && *evals >= cap)
                    goto capped;
            }
        for (int k = 0; k < sp->nprimes; k++)
            for (int l = k + 1; l < sp->nprimes; l++) {
                if (sp->prime_dim[k] == sp->prime_dim[l] || st->slot[k] == st->slot[l])
                    continue;
                int ok1 = 0, ok2 = 0;
                for (int a = 0; a < sp->nallowed[k]; a++)
                    ok1 |= sp->allowed[k][a] == st->slot[l];
                for (int a = 0; a < sp->nallowed[l]; a++)
                    ok2 |= sp->allowed[l][a] == st->slot[k];
                if (!ok1 || !ok2)
                    continue;
                cand = *st;
                cand.slot[k] = st->slot[l];
                cand.slot[l] = st->slot[k];
                mscore v = score_of(sp, &cand, evals);
                if (better(v, bs))
                    bs = v, best = cand;
                if (cap > 0 && *evals >= cap)
                    goto capped;
            }
        for (int j = 0; j < sp->nperm; j++)
            for (int c = 0; c < 3; c++) {
                int i = sp->perm_levels[j];
                if (c == st->cls[i])
                    continue;
                cand = *st;
                cand.cls[i] = (unsigned char)c;
                mscore v = score_of(sp, &cand, evals);
                if (better(v, bs))
                    bs = v, best = cand;
                if (cap > 0 && *evals >= cap)
                    goto capped;
            }
        if (!better(bs, cur) || (cap > 0 && *evals >= cap))
            return cur;
        *st = best;
        cur = bs;
    }
capped:
    /* the cap reached inside a pass: keep the best move found so far */
    if (better(bs, cur)) {
        *st = best;
        cur = bs;
    }
    return cur;
}

/* A random valid start: primes in random order, each to a random allowed
 * slot unless that breaks validity (then it stays in the backing store). */
static mscore random_start(const space *sp, state *st, unsigned long long *rs, long long *evals)
{
    int order[MAX_PRIMES];
    memset(st, 0, sizeof *st);
    for (int j = 0; j < sp->nperm; j++)
        st->cls[sp->perm_levels[j]] = (unsigned char)(rng_next(rs) % 3);
    /* every prime starts in its first allowed slot: the backing store,
     * unless a constraint there keeps it out */
    for (int k = 0; k < sp->nprimes; k++)
        st->slot[k] = sp->allowed[k][0];
    for (int k = 0; k < sp->nprimes; k++)
        order[k] = k;
    for (int k = sp->nprimes - 1; k > 0; k--) {
        int r = (int)(rng_next(rs) % (unsigned long long)(k + 1)), t = order[k];
        order[k] = order[r];
        order[r] = t;
    }
    mscore cur = score_of(sp, st, evals);
    for (int q = 0; q < sp->nprimes; q++) {
        int k = order[q];
        if (sp->pinned[k])
            continue;
        int s = sp->allowed[k][rng_next(rs) % (unsigned long long)sp->nallowed[k]];
        if (s == sp->allowed[k][0])
            continue;
        st->slot[k] = (unsigned char)s;
        mscore v = score_of(sp, st, evals);
        if (!valid_score(v))
            st->slot[k] = sp->allowed[k][0];
        else
            cur = v;
    }
    return cur;
}

/* ---- exhaustive enumeration ------------------------------------------------ */
typedef struct exh {
    const space *sp;
    state st, best;
    mscore best_score;
    long long evals, valid;
    int split, threads, tid; /* the first `split` primes' choices are dealt out */
    long long combo, best_combo;
    pthread_t th;
} exh;

static void exh_perms(exh *x, int j)
{
    if (j == x->sp->nperm) {
        mscore v = score_of(x->sp, &x->st, &x->evals);
        if (valid_score(v)) {
            x->valid++;
            if (better(v, x->best_score))
                x->best_score = v, x->best = x->st, x->best_combo = x->combo;
        }
        return;
    }
    for (int c = 0; c < 3; c++) {
        x->st.cls[x->sp->perm_levels[j]] = (unsigned char)c;
        exh_perms(x, j + 1);
    }
}

static void exh_primes(exh *x, int k)
{
    const space *sp = x->sp;
    if (k == x->split) {
        /* combination number of the first primes' choices: deal them out */
        if (x->combo++ % x->threads != x->tid)
            return;
    }
    if (k == sp->nprimes) {
        exh_perms(x, 0);
        return;
    }
    for (int a = 0; a < sp->nallowed[k]; a++) {
        int s = sp->allowed[k][a];
        /* equal primes of one dim in non-decreasing slot order: no duplicates */
        if (k > 0 && same_run(sp, k - 1, k) && s < x->st.slot[k - 1])
            continue;
        x->st.slot[k] = (unsigned char)s;
        exh_primes(x, k + 1);
    }
}

static void *exh_worker(void *arg)
{
    exh *x = arg;
    exh_primes(x, 0);
    return NULL;
}

/* Mappings in the space (counting equal primes once), capped. */
static double space_size(const space *sp)
{
    double n = 1;
    for (int k = 0; k < sp->nprimes;) {
        int run = 1;
        while (k + run < sp->nprimes && same_run(sp, k + run - 1, k + run))
            run++;
        /* multisets of size run over nallowed slots: C(run + s - 1, run) */
        double c = 1;
        int s = sp->nallowed[k];
        for (int i = 1; i <= run; i++)
            c = c * (s - 1 + i) / i;
        n *= c;
        k += run;
    }
    for (int j = 0; j < sp->nperm; j++)
        n *= 3;
    return n;
}

/* ---- restarts over threads ------------------------------------------------- */
typedef struct job {
    const space *sp;
    unsigned long long seed;
    int restarts, threads, tid;
    long long cap_per_restart;
    double deadline;
    state best;
    mscore best_score;
    int best_r;
    long long evals;
    int truncated;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    j->best_score = NO_SCORE;
    j->best_r = -1;
    for (int r = j->tid; r < j->restarts; r += j->threads) {
        if (j->deadline > 0 && st_mono_s() > j->deadline) {
            j->truncated = 1;
            break;
        }
        /* restart r's stream: the seed, then r, through the generator's mixer */
        unsigned long long rs = j->seed, mix = rng_next(&rs) ^ (unsigned long long)r;
        rs = rng_next(&mix);
        state st;
        long long ev = 0;
        mscore v = random_start(j->sp, &st, &rs, &ev);
        v = descend(j->sp, &st, v, &ev, j->cap_per_restart);
        j->evals += ev;
        if (better(v, j->best_score) || (valid_score(v) && same_score(v, j->best_score) && r < j->best_r)) {
            j->best_score = v;
            j->best = st;
            j->best_r = r;
        }
    }
    return NULL;
}

/* Search sizes, chosen from measurements on the shipped presets (2-core VM):
 * - enumerating runs at about 2 M mappings/s per core, so 300,000 costs
 *   about 0.15 s, no more than the restarts it replaces;
 * - one descent takes 630 to 4,700 evaluations on ResNet-50 and BERT-Large
 *   layers on eyeriss-like and simba-like (about 2,000 typically);
 * - 96 restarts reach the exhaustively verified EDP optimum of ResNet-50
 *   Conv1 on eyeriss-like for seeds 1 to 5, in about 0.05 s. */
#define EXHAUSTIVE_MAX 300000.0
#define DEFAULT_RESTARTS 96
#define EVALS_PER_DESCENT 2000

int st_accel_map(const st_accel *a, const st_aprob *p, const st_mapper_opts *o,
                 st_mapper_result *r, st_error *err)
{
    space *sp = malloc(sizeof *sp);
    double t0 = st_mono_s();
    int rc;
    memset(r, 0, sizeof *r);
    if (!sp)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    if ((rc = build_space(sp, a, p, o->objective, err))) {
        free(sp);
        return rc;
    }
    /* the backing store keeps its tensors whole, whatever the mapping: a depth
     * below them is said as such, not as no mapping found */
    const st_mem_level *l0 = &a->level[0];
    if (a->n_levels > 0 && l0->cls != ST_MEM_FANOUT && l0->depth > 0) {
        double used = 0;
        for (int t = 0; t < ST_TENSOR_COUNT; t++)
            if (l0->keeps[t])
                used += st_aprob_tensor_words(p, (st_tensor)t);
        if (used > st_mem_level_words(l0)) {
            free(sp);
            return st_error_set(err, ST_EINVAL, "level %s, the backing store of %s, holds %.0f words but the tensors "
                                "of %s it keeps need %.0f; give it the depth they need, or none (an unbounded "
                                "DRAM)", l0->name, a->name, st_mem_level_words(l0), p->name, used);
        }
    }
    state best;
    mscore best_score = NO_SCORE;
    memset(&best, 0, sizeof best);
    if (o->exhaustive || space_size(sp) <= EXHAUSTIVE_MAX) {
        int nt = o->threads > 0 ? o->threads : 1;
        exh *x = calloc((size_t)nt, sizeof *x);
        if (!x) {
            free(sp);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        for (int t = 0; t < nt; t++) {
            x[t].sp = sp;
            x[t].best_score = NO_SCORE;
            x[t].threads = nt;
            x[t].tid = t;
            x[t].split = sp->nprimes < 3 ? sp->nprimes : 3;
        }
        for (int t = 1; t < nt; t++)
            if (pthread_create(&x[t].th, NULL, exh_worker, &x[t]) != 0)
                x[t].threads = 0;
        exh_worker(&x[0]);
        long long best_combo = -1;
        for (int t = 0; t < nt; t++) {
            if (t > 0 && x[t].threads)
                pthread_join(x[t].th, NULL);
            else if (t > 0) { /* could not start: run its share here */
                x[t].threads = nt;
                exh_worker(&x[t]);
            }
            r->evaluated += x[t].evals;
            r->valid += x[t].valid;
            if (better(x[t].best_score, best_score) ||
                (valid_score(x[t].best_score) && same_score(x[t].best_score, best_score) &&
                 x[t].best_combo < best_combo)) {
                best_score = x[t].best_score;
                best = x[t].best;
                best_combo = x[t].best_combo;
            }
        }
        r->exhaustive = 1;
        free(x);
    } else {
        int nt = o->threads > 0 ? o->threads : 1;
        int restarts = DEFAULT_RESTARTS;
        long long cap = 0;
        if (o->max_evals > 0) {
            /* a budget of evaluations: fewer restarts, each capped */
            restarts = (int)(o->max_evals / EVALS_PER_DESCENT);
            if (restarts < 4)
                restarts = 4;
            cap = o->max_evals / restarts;
        }
        job *jobs = calloc((size_t)nt, sizeof *jobs);
        pthread_t *th = calloc((size_t)nt, sizeof *th);
        char *created = calloc((size_t)nt, 1);
        if (!jobs || !th || !created) {
            free(jobs);
            free(th);
            free(created);
            free(sp);
            return st_error_set(err, ST_ENOMEM, "out of memory");
        }
        for (int t = 0; t < nt; t++) {
            jobs[t].sp = sp;
            jobs[t].seed = o->seed;
            jobs[t].restarts = restarts;
            jobs[t].threads = nt;
            jobs[t].tid = t;
            jobs[t].cap_per_restart = cap;
            jobs[t].deadline = o->budget_s > 0 ? t0 + o->budget_s : 0;
        }
        for (int t = 1; t < nt; t++)
            created[t] = pthread_create(&th[t], NULL, worker, &jobs[t]) == 0;
        worker(&jobs[0]);
        for (int t = 1; t < nt; t++)
            if (created[t])
                pthread_join(th[t], NULL);
            else
                r->truncated = 1; /* its share of the restarts was not run */
        free(created);
        int best_r = -1;
        for (int t = 0; t < nt; t++) {
            r->evaluated += jobs[t].evals;
            r->truncated |= jobs[t].truncated;
            if (better(jobs[t].best_score, best_score) ||
                (valid_score(jobs[t].best_score) && same_score(jobs[t].best_score, best_score) &&
                 jobs[t].best_r < best_r)) {
                best_score = jobs[t].best_score;
                best = jobs[t].best;
                best_r = jobs[t].best_r;
            }
        }
        r->valid = -1; /* not counted during descent */
        free(jobs);
        free(th);
    }
    if (!valid_score(best_score)) {
        free(sp);
        if (r->truncated)
            return st_error_set(err, ST_EINVAL, "the search for a mapping of %s on %s stopped (its time budget "
                                                "ran out after %lld mappings) before it found a valid one; give "
                                                "it more time or a number of evaluations instead",
                                p->name, a->name, r->evaluated);
        return st_error_set(err, ST_EINVAL, "no valid mapping of %s fits %s under its "
                                            "constraints (every tile overflows a level or a "
                                            "split exceeds the fan-out)", p->name, a->name);
    }
    to_map(sp, &best, &r->best);
    free(sp);
    r->score = best_score.a;
    r->seconds = st_mono_s() - t0;
    r->evals_per_s = r->seconds > 0 ? (double)r->evaluated / r->seconds : 0;
    return st_accel_eval(a, p, &r->best, &r->stats, err);
}
