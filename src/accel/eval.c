/* Evaluate one mapping of a problem on an accelerator (see accel.h). */
#include "config.h"
#include "accel/accel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NL ST_ACCEL_MAX_LEVELS
#define ND ST_AD_COUNT
#define NT ST_TENSOR_COUNT

unsigned st_adim_relevant(st_tensor t)
{
    switch (t) {
    case ST_TENSOR_INPUTS:
        return (1u << ST_AD_G) | (1u << ST_AD_N) | (1u << ST_AD_C) | (1u << ST_AD_P) |
               (1u << ST_AD_Q) | (1u << ST_AD_R) | (1u << ST_AD_S);
    case ST_TENSOR_WEIGHTS:
        return (1u << ST_AD_G) | (1u << ST_AD_M) | (1u << ST_AD_C) | (1u << ST_AD_R) |
               (1u << ST_AD_S);
    case ST_TENSOR_OUTPUTS:
        return (1u << ST_AD_G) | (1u << ST_AD_N) | (1u << ST_AD_M) | (1u << ST_AD_P) |
               (1u << ST_AD_Q);
    default: return 0;
    }
}

void st_aprob_init(st_aprob *p, const char *name)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name ? name : "");
    for (int d = 0; d < ND; d++)
        p->d[d] = 1;
    p->wstride = p->hstride = p->wdil = p->hdil = 1;
}

double st_aprob_macs(const st_aprob *p)
{
    double m = 1;
    for (int d = 0; d < ND; d++)
        m *= (double)p->d[d];
    return m;
}

/* Words of tensor t spanned by extents e[] (a tile or the whole tensor). */
static double footprint(const st_aprob *p, st_tensor t, const double *e)
{
    switch (t) {
    case ST_TENSOR_INPUTS: {
        double w = p->wstride * (e[ST_AD_P] - 1) + p->wdil * (e[ST_AD_R] - 1) + 1;
        double h = p->hstride * (e[ST_AD_Q] - 1) + p->hdil * (e[ST_AD_S] - 1) + 1;
        return e[ST_AD_G] * e[ST_AD_N] * e[ST_AD_C] * w * h;
    }
    case ST_TENSOR_WEIGHTS:
        return e[ST_AD_G] * e[ST_AD_M] * e[ST_AD_C] * e[ST_AD_R] * e[ST_AD_S];
    case ST_TENSOR_OUTPUTS:
        return e[ST_AD_G] * e[ST_AD_N] * e[ST_AD_M] * e[ST_AD_P] * e[ST_AD_Q];
    default: return 0;
    }
}

double st_aprob_tensor_words(const st_aprob *p, st_tensor t)
{
    double e[ND];
    for (int d = 0; d < ND; d++)
        e[d] = (double)p->d[d];
    return footprint(p, t, e);
}

void st_accel_fanout(const st_accel *a, int i, int *fx, int *fy)
{
    const st_mem_level *l = &a->level[i];
    int lx = l->mesh_x ? l->mesh_x : l->instances, ly = l->instances / lx;
    if (i + 1 < a->n_levels) {
        const st_mem_level *c = &a->level[i + 1];
        int cx = c->mesh_x ? c->mesh_x : c->instances, cy = c->instances / cx;
        *fx = cx / lx;
        *fy = cy / ly;
    } else {
        /* the innermost level feeds the MAC array */
        *fx = a->pe_x % lx == 0 ? a->pe_x / lx : 1;
        *fy = a->pe_y % ly == 0 ? a->pe_y / ly : 1;
    }
}

void st_amap_init(st_amap *m, const st_accel *a, const st_aprob *p)
{
    memset(m, 0, sizeof *m);
    m->n = a->n_levels;
    for (int i = 0; i < m->n; i++) {
        for (int d = 0; d < ND; d++) {
            m->t[i][d] = i == 0 ? (unsigned)p->d[d] : 1;
            m->sx[i][d] = m->sy[i][d] = 1;
            m->perm[i][d] = (unsigned char)d;
        }
        for (int t = 0; t < NT; t++)
            if (a->level[i].keeps[t] && a->level[i].cls != ST_MEM_FANOUT)
                m->keep[i] |= (unsigned char)(1u << t);
    }
}

/* Distinct data among the children of one fan-out stage: children differ by
 * the stage's spatial indices; two hold the same data when their offsets
 * project to the same place in tensor t. e[] are the extents of one child's
 * subtree, f[] the stage's spatial factor per dimension. */
static double distinct_children(const st_aprob *p, st_tensor t, const double *e,
                                const unsigned *f)
{
    unsigned rel = st_adim_relevant(t);
    double n = 1;
    for (int d = 0; d < ND; d++) {
        if (!(rel & (1u << d)) || f[d] == 1)
            continue;
        if (t == ST_TENSOR_INPUTS && (d == ST_AD_P || d == ST_AD_R || d == ST_AD_Q ||
                                      d == ST_AD_S))
            continue;
        n *= f[d];
    }
    if (t == ST_TENSOR_INPUTS) {
        /* window axes: offsets stride*k*e[P] + dil*l*e[R] may coincide */
        for (int axis = 0; axis < 2; axis++) {
            int dp = axis ? ST_AD_Q : ST_AD_P, dr = axis ? ST_AD_S : ST_AD_R;
            long long st = axis ? p->hstride : p->wstride, di = axis ? p->hdil : p->wdil;
            unsigned fp = f[dp], fr = f[dr];
            if (fp == 1 || fr == 1) {
                n *= (double)fp * fr;
                continue;
            }
            /* both split: offsets a*k + b*l (k < fp, l < fr). With a, b
             * divided by their gcd, (k, l) and (k + b, l - a) give the same
             * offset, and each offset's chain of such pairs has exactly one
             * pair that cannot step on (k + b >= fp or l < a), so
             * distinct = fp*fr - max(0, fp - b) * max(0, fr - a). */
            long long a = st * (long long)e[dp], b = di * (long long)e[dr], g = a, h = b;
            while (h) {
                long long r = g % h;
                g = h;
                h = r;
            }
            a /= g;
            b /= g;
            long long ka = (long long)fp - b, la = (long long)fr - a;
            long long distinct = (long long)fp * fr - (ka > 0 && la > 0 ? ka * la : 0);
            n *= (double)distinct;
        }
    }
    return n;
}

typedef struct evctx {
    int bad_level, bad_dim; /* what an invalid mapping got wrong (-1: not one level/dim) */
    double ext[NL][ND];   /* extents inside level i (its loops and all below) */
    double tile[NL][NT];
    double inst[NL + 1];  /* instances in use at level i (inst[n] = MACs) */
    double t_all;         /* product of every temporal factor */
    double refill[NL][NT];/* times level i's tile of t is (re)filled, per instance */
    int stage_used[NL];   /* level i's fan-out has a spatial factor > 1 */
    double sp_above[NL + 1][ND]; /* spatial product of levels < i, per dim */
    /* the non-unit temporal loops from the innermost outward */
    int nloops;
    unsigned char loop_dim[NL * ND];
    double loop_bound[NL * ND];
    int first_loop_above[NL + 1]; /* index of the first loop of a level < i */
    double noc_words[NL];         /* words sent through level i's fan-out */
    double above_prod[NL + 1];    /* product of the temporal loops of levels < i */
} evctx;

/* Times level i's tile of tensor t changes: walk the temporal loops above i
 * from the innermost outward, skip those that do not index t, then every
 * iteration of the rest refills. */
static double refills(const evctx *x, int i, unsigned rel)
{
    double skipped = 1;
    for (int k = x->first_loop_above[i]; k < x->nloops; k++) {
        if (rel & (1u << x->loop_dim[k]))
            break;
        skipped *= x->loop_bound[k];
    }
    return x->above_prod[i] / skipped;
}

/* Words per refill event the parent serves through the outermost used
 * fan-out stage in [p, c), that stage in *stage; 0 (and -1) when no stage
 * between is used. */
static double served_per_event(const st_aprob *p, const st_amap *m, const evctx *x, int par,
                               int c, int n, st_tensor t, const double *child_ext, int *stage)
{
    int js = -1;
    for (int j = par; j < c; j++)
        if (x->stage_used[j]) {
            js = j;
            break;
        }
    *stage = js;
    if (js < 0)
        return 0;
    double e[ND];
    for (int d = 0; d < ND; d++) {
        e[d] = child_ext[d];
        if (js + 1 < c)
            e[d] *= x->sp_above[c < n ? c : n][d] / x->sp_above[js + 1][d];
    }
    unsigned f[ND];
    for (int d = 0; d < ND; d++)
        f[d] = m->sx[js][d] * m->sy[js][d];
    return distinct_children(p, t, e, f) * footprint(p, t, e);
}

#define fail(err, ...) st_error_set((err), ST_EINVAL, __VA_ARGS__)

/* Structure checks shared by both entry points. */
static int check(const st_accel *a, const st_aprob *p, const st_amap *m, evctx *x, st_error *err)
{
    if (m->n != a->n_levels)
        return fail(err, "the mapping has %d levels, the architecture %d", m->n, a->n_levels);
    for (int d = 0; d < ND; d++) {
        double prod = 1;
        for (int i = 0; i < m->n; i++)
            prod *= (double)m->t[i][d] * m->sx[i][d] * m->sy[i][d];
        if (prod != (double)p->d[d])
            return x->bad_dim = d, fail(err, "the factors of %c multiply to %.0f, the problem has %c=%lld; "
                             "every dimension's factors must multiply to its size",
                        ST_AD_LETTERS[d], prod, ST_AD_LETTERS[d], p->d[d]);
    }
    for (int i = 0; i < m->n; i++) {
        const st_mem_level *l = &a->level[i];
        int fx, fy;
        double px = 1, py = 1;
        st_accel_fanout(a, i, &fx, &fy);
        for (int d = 0; d < ND; d++) {
            if (m->t[i][d] == 0 || m->sx[i][d] == 0 || m->sy[i][d] == 0)
                return x->bad_level = i, fail(err, "level %s: a factor of %c is 0", l->name, ST_AD_LETTERS[d]);
            px *= m->sx[i][d];
            py *= m->sy[i][d];
        }
        if (px > fx || py > fy)
            return x->bad_level = i, fail(err, "level %s: spatial factors use %.0f x %.0f instances below it, "
                             "the fan-out is %d x %d",
                        l->name, px, py, fx, fy);
        if (l->cls == ST_MEM_FANOUT) {
            for (int d = 0; d < ND; d++)
                if (m->t[i][d] != 1)
                    return x->bad_level = i, fail(err, "level %s is a fan-out stage and holds no data; its "
                                     "temporal factor of %c must be 1",
                                l->name, ST_AD_LETTERS[d]);
            if (m->keep[i])
                return x->bad_level = i, fail(err, "level %s is a fan-out stage and cannot keep a tensor",
                            l->name);
        }
        for (int t = 0; t < NT; t++)
            if ((m->keep[i] & (1u << t)) && !l->keeps[t])
                return x->bad_level = i, fail(err, "level %s cannot keep %s (the architecture keeps only what "
                                 "its `keeps:` lists)",
                            l->name, st_tensor_name((st_tensor)t));
        unsigned seen = 0;
        for (int k = 0; k < ND; k++)
            seen |= 1u << m->perm[i][k];
        if (seen != ST_AD_ALL)
            return x->bad_level = i, fail(err, "level %s: the loop order does not list every dimension once",
                        l->name);
    }
    if ((m->keep[0] & 7u) != 7u)
        return x->bad_level = 0, fail(err, "the backing store %s must keep every tensor", a->level[0].name);
    return 0;
}

static int core(const st_accel *a, const st_aprob *p, const st_amap *m, st_astats *s,
                evctx *x, st_error *err)
{
    const int n = m->n;
    int rc;
    x->bad_level = x->bad_dim = -1;
    if ((rc = check(a, p, m, x, err)))
        return rc;
    /* extents, instances */
    for (int d = 0; d < ND; d++) {
        double e = 1;
        for (int i = n - 1; i >= 0; i--) {
            e *= (double)m->t[i][d] * m->sx[i][d] * m->sy[i][d];
            x->ext[i][d] = e;
        }
    }
    x->inst[0] = 1;
    x->t_all = 1;
    for (int d = 0; d < ND; d++)
        x->sp_above[0][d] = 1;
    for (int i = 0; i < n; i++) {
        double sp = 1;
        for (int d = 0; d < ND; d++) {
            double f = (double)m->sx[i][d] * m->sy[i][d];
            sp *= f;
            x->sp_above[i + 1][d] = x->sp_above[i][d] * f;
            x->t_all *= m->t[i][d];
        }
        x->stage_used[i] = sp > 1;
        x->inst[i + 1] = x->inst[i] * sp;
    }
    /* temporal loops, innermost first: level n-1's first, each in its order */
    x->nloops = 0;
    x->first_loop_above[n] = 0;
    x->above_prod[n] = x->t_all;
    for (int i = n - 1; i >= 0; i--) {
        double lp = 1;
        for (int k = 0; k < ND; k++) {
            int d = m->perm[i][k];
            if (m->t[i][d] > 1) {
                x->loop_dim[x->nloops] = (unsigned char)d;
                x->loop_bound[x->nloops++] = m->t[i][d];
                lp *= m->t[i][d];
            }
        }
        /* loops of levels < i start after level i's own */
        x->first_loop_above[i] = x->nloops;
        x->above_prod[i] = x->above_prod[i + 1] / lp;
    }
    memset(s, 0, sizeof *s);
    memset(x->noc_words, 0, sizeof x->noc_words);
    s->n = n;
    s->macs = st_aprob_macs(p);
    /* a PE runs macs_per_pe MACs a cycle (a preset's mac.count_per_pe) */
    s->compute_cycles = a->macs_per_pe > 1 ? ceil(x->t_all / a->macs_per_pe) : x->t_all;
    for (int i = 0; i < n; i++) {
        const st_mem_level *l = &a->level[i];
        double used = 0;
        s->lv[i].instances = x->inst[i];
        for (int t = 0; t < NT; t++) {
            x->tile[i][t] = footprint(p, (st_tensor)t, x->ext[i]);
            if (m->keep[i] & (1u << t)) {
                s->lv[i].tile[t] = x->tile[i][t];
                used += x->tile[i][t];
            }
        }
        /* the backing store too, when it is given a depth: it holds whole
         * tensors, and no mapping can move them further out */
        if (l->cls != ST_MEM_FANOUT && l->depth > 0 && used > st_mem_level_words(l))
            return x->bad_level = i,
                   i == 0 ? fail(err, "level %s, the backing store, holds %.0f words but the tensors it keeps need "
                                      "%.0f; give it the depth they need, or none (an unbounded DRAM)",
                                 l->name, st_mem_level_words(l), used)
                          : fail(err, "level %s: the tiles it keeps need %.0f words, it holds %.0f; "
                                      "move factors outward",
                                 l->name, used, st_mem_level_words(l));
    }
    /* the data movement of each tensor along its chain of keepers */
    for (int t = 0; t < NT; t++) {
        unsigned rel = st_adim_relevant((st_tensor)t);
        int rw = t == ST_TENSOR_OUTPUTS;
        int chain[NL], nc = 0;
        for (int i = 0; i < n; i++)
            if (m->keep[i] & (1u << t))
                chain[nc++] = i;
        for (int k = 0; k < nc; k++) {
            int c = chain[k];
            st_alevel_stats *L = &s->lv[c];
            double part = 1;
            {
                double e[ND];
                for (int d = 0; d < ND; d++)
                    e[d] = (double)p->d[d] / x->sp_above[c][d];
                part = footprint(p, (st_tensor)t, e);
            }
            L->partition[t] = part;
            /* what this keeper serves below: the next keeper, or the MACs */
            double served;
            int stage;
            if (k + 1 < nc) {
                int ch = chain[k + 1];
                double ev = refills(x, ch, rel);
                double per = served_per_event(p, m, x, c, ch, n, (st_tensor)t, x->ext[ch], &stage);
                x->refill[ch][t] = ev;
                served = ev * (per > 0 ? per : x->tile[ch][t]);
            } else {
                double unit[ND];
                for (int d = 0; d < ND; d++)
                    unit[d] = 1;
                double per = served_per_event(p, m, x, c, n, n, (st_tensor)t, unit, &stage);
                served = x->t_all * (per > 0 ? per : 1);
            }
            if (stage >= 0)
                x->noc_words[stage] += served * x->inst[c];
            if (rw) {
                L->updates[t] = served;
                L->reads[t] = served > part ? served - part : 0;
            } else {
                L->reads[t] = served;
            }
            if (k > 0) {
                double filled = x->refill[c][t] * x->tile[c][t];
                L->fills[t] = rw ? (filled > part ? filled - part : 0) : filled;
            }
        }
    }
    /* cycles: compute, or a level's bandwidth when it is the bottleneck */
    s->cycles = s->compute_cycles;
    for (int i = 0; i < n; i++) {
        const st_mem_level *l = &a->level[i];
        st_alevel_stats *L = &s->lv[i];
        double r = 0, w = 0, need = 0;
        for (int t = 0; t < NT; t++) {
            r += L->reads[t];
            w += L->fills[t] + L->updates[t];
        }
        if (l->read_bw_words > 0)
            need = r / l->read_bw_words;
        if (l->write_bw_words > 0 && w / l->write_bw_words > need)
            need = w / l->write_bw_words;
        L->cycles = need;
        if (need > s->cycles)
            s->cycles = need;
    }
    /* energy */
    s->e_mac = s->macs * a->e_mac;
    s->energy = s->e_mac;
    for (int i = 0; i < n; i++) {
        const st_mem_level *l = &a->level[i];
        st_alevel_stats *L = &s->lv[i];
        if (l->cls == ST_MEM_FANOUT)
            continue;
        double block = l->word_bits > 0 ? (double)(l->width_bits / l->word_bits) : 1;
        if (block < 1)
            block = 1;
        double held = 0;
        for (int t = 0; t < NT; t++) {
            L->energy[t] = (L->reads[t] * l->e_read + L->fills[t] * l->e_write +
                            L->updates[t] * l->e_update) / block * L->instances;
            L->energy_total += L->energy[t];
            held += L->tile[t];
        }
        L->leak = l->e_leak * s->cycles * L->instances;
        L->energy_total += L->leak;
        for (int t = 0; t < NT; t++)
            s->e_tensor[t] += L->energy[t] + (held > 0 ? L->leak * L->tile[t] / held : 0);
        s->energy += L->energy_total;
    }
    /* NoC: each word a parent sends through a fan-out stage crosses, on
     * average, half the used array in X and in Y (one hop per PE passed) */
    for (int i = 0; i < n && a->e_hop > 0; i++) {
        double ux = 1, uy = 1;
        for (int d = 0; d < ND; d++) {
            ux *= m->sx[i][d];
            uy *= m->sy[i][d];
        }
        s->e_noc += a->e_hop * x->noc_words[i] * (ux + uy) / 2.0;
    }
    s->energy += s->e_noc;
    s->utilization = s->macs / (s->cycles * (double)a->pe_x * a->pe_y * a->macs_per_pe);
    s->seconds = s->cycles / a->clock_hz;
    s->edp = s->energy * s->cycles;
    return 0;
}

int st_accel_eval(const st_accel *a, const st_aprob *p, const st_amap *m, st_astats *s,
                  st_error *err)
{
    return st_accel_eval_at(a, p, m, s, NULL, NULL, err);
}

int st_accel_eval_at(const st_accel *a, const st_aprob *p, const st_amap *m, st_astats *s, int *level, int *dim,
                     st_error *err)
{
    evctx x;
    int rc = core(a, p, m, s, &x, err);
    if (rc)
        memset(s, 0, sizeof *s);
    if (level)
        *level = rc ? x.bad_level : -1;
    if (dim)
        *dim = rc ? x.bad_dim : -1;
    return rc;
}

int st_accel_eval_fast(const st_accel *a, const st_aprob *p, const st_amap *m, double *energy,
                       double *cycles)
{
    evctx x;
    st_astats s;
    if (core(a, p, m, &s, &x, NULL))
        return 0;
    *energy = s.energy;
    *cycles = s.cycles;
    return 1;
}

long long st_alevel_fixed_split(const st_mem_level *l, int y)
{
    const unsigned *f = y ? l->sy_fixed : l->sx_fixed;
    long long p = 1;
    for (int d = 0; d < ND; d++)
        if (f[d] > 1)
            p = p > (1LL << 31) ? p : p * f[d];
    return p;
}

int st_amap_check_constraints(const st_accel *a, const st_amap *m, st_error *err)
{
    for (int i = 0; i < m->n && i < a->n_levels; i++) {
        const st_mem_level *l = &a->level[i];
        for (int d = 0; d < ND; d++) {
            if (l->t_fixed[d] > 1 ? m->t[i][d] != l->t_fixed[d] : m->t[i][d] > 1 && !(l->t_allow & (1u << d)))
                return fail(err, "level %s: constraint: the temporal factor of %c must be %u "
                                 "(found %u)",
                            l->name, ST_AD_LETTERS[d], l->t_fixed[d] > 1 ? l->t_fixed[d] : 1, m->t[i][d]);
            if (l->sx_fixed[d] > 1 && m->sx[i][d] != l->sx_fixed[d])
                return fail(err, "level %s: constraint: %c must be split %u ways along X (found %u)", l->name,
                            ST_AD_LETTERS[d], l->sx_fixed[d], m->sx[i][d]);
            if (l->sy_fixed[d] > 1 && m->sy[i][d] != l->sy_fixed[d])
                return fail(err, "level %s: constraint: %c must be split %u ways along Y (found %u)", l->name,
                            ST_AD_LETTERS[d], l->sy_fixed[d], m->sy[i][d]);
            if (!l->sx_fixed[d] && m->sx[i][d] > 1 && !(l->sx_allow & (1u << d)))
                return fail(err, "level %s: constraint: %c may not be split along X",
                            l->name, ST_AD_LETTERS[d]);
            if (!l->sy_fixed[d] && m->sy[i][d] > 1 && !(l->sy_allow & (1u << d)))
                return fail(err, "level %s: constraint: %c may not be split along Y",
                            l->name, ST_AD_LETTERS[d]);
        }
        if (l->t_perm[0]) {
            /* the non-unit loops must appear in the fixed relative order */
            int last = -1;
            for (int k = 0; k < ND; k++) {
                int d = m->perm[i][k];
                if (m->t[i][d] == 1)
                    continue;
                const char *at = strchr(l->t_perm, ST_AD_LETTERS[d]);
                if (!at)
                    continue;
                if ((int)(at - l->t_perm) < last)
                    return fail(err, "level %s: constraint: loops must run in the order %s "
                                     "(innermost first)",
                                l->name, l->t_perm);
                last = (int)(at - l->t_perm);
            }
        }
    }
    return 0;
}

void st_amap_print(const st_accel *a, const st_amap *m, FILE *out)
{
    int depth = 0;
    for (int i = 0; i < m->n; i++) {
        const st_mem_level *l = &a->level[i];
        char keeps[64] = "";
        for (int t = 0; t < NT; t++)
            if (m->keep[i] & (1u << t)) {
                if (keeps[0])
                    strcat(keeps, " ");
                strcat(keeps, st_tensor_name((st_tensor)t));
            }
        fprintf(out, "%*s%s [%s]\n", 2 * depth, "", l->name,
                l->cls == ST_MEM_FANOUT ? "fan-out" : keeps);
        for (int k = ND - 1; k >= 0; k--) {
            int d = m->perm[i][k];
            if (m->t[i][d] > 1)
                fprintf(out, "%*sfor %c in [0:%u)\n", 2 * ++depth, "", ST_AD_LETTERS[d],
                        m->t[i][d]);
        }
        for (int xy = 0; xy < 2; xy++)
            for (int d = 0; d < ND; d++) {
                unsigned f = xy ? m->sy[i][d] : m->sx[i][d];
                if (f > 1)
                    fprintf(out, "%*sfor %c in [0:%u) (Spatial-%c)\n", 2 * ++depth, "",
                            ST_AD_LETTERS[d], f, xy ? 'Y' : 'X');
            }
    }
    fprintf(out, "%*s<< Compute >>\n", 2 * (depth + 1), "");
}
