/* Error statistics shared by validate and calibrate reports. */
#include "config.h"
#include "calib/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int st_apes_push(st_apes *a, double pred, double meas)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 64;
        double *p = realloc(a->v, nc * sizeof *p);
        if (!p)
            return ST_ENOMEM;
        a->v = p;
        a->cap = nc;
    }
    a->v[a->n++] = fabs(pred - meas) / meas;
    return 0;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Nearest-rank percentile of sorted v. */
static double pct(const double *v, size_t n, double p)
{
    if (!n)
        return 0;
    size_t r = (size_t)ceil(p / 100.0 * (double)n);
    if (r < 1)
        r = 1;
    return v[r - 1];
}

void st_apes_summary(st_apes *a, st_ape_summary *s)
{
    memset(s, 0, sizeof *s);
    s->n = a->n;
    if (!a->n)
        return;
    qsort(a->v, a->n, sizeof *a->v, cmp_d);
    double sum = 0;
    for (size_t i = 0; i < a->n; i++)
        sum += a->v[i];
    s->mape = 100 * sum / (double)a->n;
    s->median = 100 * pct(a->v, a->n, 50);
    s->p90 = 100 * pct(a->v, a->n, 90);
    s->max = 100 * a->v[a->n - 1];
}

void st_apes_free(st_apes *a)
{
    free(a->v);
    memset(a, 0, sizeof *a);
}
