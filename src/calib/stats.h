/* Absolute percentage errors and their summary (MAPE, median, P90, max). */
#ifndef STRATA_CALIB_STATS_H
#define STRATA_CALIB_STATS_H

#include "core/core.h"

typedef struct st_apes {
    double *v;
    size_t n, cap;
} st_apes;

typedef struct st_ape_summary {
    size_t n;
    double mape, median, p90, max; /* percent */
} st_ape_summary;

int st_apes_push(st_apes *a, double pred, double meas);
/* Sorts a->v in place. */
void st_apes_summary(st_apes *a, st_ape_summary *s);
void st_apes_free(st_apes *a);

#endif
