/* The incremental Pareto front: a set of mutually non-dominated points. */
#include "config.h"
#include "explore/explore.h"

#include <stdlib.h>
#include <string.h>

void st_pareto_init(st_pareto *p, int k, const int *sign)
{
    memset(p, 0, sizeof *p);
    p->k = k < 1 ? 1 : k > ST_SWEEP_MAX_OBJ ? ST_SWEEP_MAX_OBJ : k;
    for (int i = 0; i < p->k; i++)
        p->sign[i] = sign && sign[i] < 0 ? -1 : 1;
}

void st_pareto_free(st_pareto *p)
{
    free(p->idx);
    free(p->v);
    memset(p, 0, sizeof *p);
}

/* a dominates b: no worse in every objective and better in one; equal
 * vectors are ordered by index so that exactly one of two twins survives,
 * whichever arrives first. */
int st_pareto_dominates(int k, const double *a, long long ia, const double *b, long long ib)
{
    int better = 0;
    for (int i = 0; i < k; i++) {
        if (a[i] > b[i])
            return 0;
        if (a[i] < b[i])
            better = 1;
    }
    return better || ia < ib;
}

int st_pareto_insert(st_pareto *p, long long idx, const double *obj)
{
    double v[ST_SWEEP_MAX_OBJ];
    for (int i = 0; i < p->k; i++)
        v[i] = p->sign[i] * obj[i];
    for (size_t j = 0; j < p->n; j++)
        if (st_pareto_dominates(p->k, p->v + j * p->k, p->idx[j], v, idx))
            return 0;
    /* drop the members the newcomer dominates (compact in place) */
    size_t w = 0;
    for (size_t j = 0; j < p->n; j++) {
        if (st_pareto_dominates(p->k, v, idx, p->v + j * p->k, p->idx[j]))
            continue;
        if (w != j) {
            p->idx[w] = p->idx[j];
            memcpy(p->v + w * p->k, p->v + j * p->k, (size_t)p->k * sizeof *v);
        }
        w++;
    }
    p->n = w;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        long long *ni = realloc(p->idx, cap * sizeof *ni);
        if (!ni)
            return ST_ENOMEM;
        p->idx = ni;
        double *nv = realloc(p->v, cap * (size_t)p->k * sizeof *nv);
        if (!nv)
            return ST_ENOMEM;
        p->v = nv;
        p->cap = cap;
    }
    p->idx[p->n] = idx;
    memcpy(p->v + p->n * p->k, v, (size_t)p->k * sizeof *v);
    p->n++;
    return 1;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

void st_pareto_sorted(const st_pareto *p, long long *out)
{
    if (p->n)
        memcpy(out, p->idx, p->n * sizeof *out);
    qsort(out, p->n, sizeof *out, cmp_ll);
}
