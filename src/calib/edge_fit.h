/*
 * The edge model (gpu/edge.h) against reference latencies of whole models:
 * rows of calibration/edge-reference.csv (model, workload, preset, dtype,
 * latency_ms, role), predicted through the compose layer, and the fit of
 * calibration/edge.yaml to the rows whose role is fit.
 */
#ifndef STRATA_EDGE_FIT_H
#define STRATA_EDGE_FIT_H

#include "compose/compose.h"
#include "gpu/edge.h"

typedef struct st_edge_ref {
    char model[64], workload[512], preset[512];
    st_dtype dtype;
    double ref_s;
    int fit;      /* role: fit (1) or test (0) */
    int line;     /* in the CSV */
    st_edge edge; /* the preset, loaded */
    st_oplist ops; /* the workload's inference ops at batch 1 */
} st_edge_ref;

typedef struct st_edge_refs {
    st_edge_ref *row;
    size_t n, cap;
} st_edge_refs;

/* Read a reference CSV ('#' comments); every preset and workload loaded.
 * Errors name FILE:LINE:COL. */
int st_edge_refs_load(const char *path, st_edge_refs *out, st_error *err);
void st_edge_refs_free(st_edge_refs *r);
/* One row's predicted step with the coefficients given. */
int st_edge_ref_predict(const st_edge_ref *r, const st_gpu_coef *gc, const st_edge_coef *ec, st_step *s,
                        st_error *err);
/* Fit the edge coefficients to the fit rows (deterministic grid search in
 * log space, least squares on log latency), per device class; a class
 * without fit rows keeps base's coefficients. Refuses a class with one fit
 * row, a coefficient the rows do not determine, and one the rows push to
 * the end of its range. report (may be NULL) gets a summary. */
int st_edge_calibrate(const st_edge_refs *R, const st_gpu_coef *gc, const st_edge_coef *base, st_edge_coef *out,
                      FILE *report, st_error *err);

#endif
