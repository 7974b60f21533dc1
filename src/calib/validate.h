/* Validation against held-out measurements (the validate command's engine). */
#ifndef STRATA_CALIB_VALIDATE_H
#define STRATA_CALIB_VALIDATE_H

#include "calib/calib.h"
#include "calib/stats.h"
#include "net/net.h"

#include <stdio.h>

typedef struct st_val_row {
    char device[64];  /* as the data names it */
    char preset[64];
    char op[32];      /* op class, or "all" */
    int tp;           /* vidur: TP degree (0 elsewhere) */
    st_ape_summary s;
} st_val_row;

typedef struct st_val_model {
    char device[64], preset[64], model[48], mode[8];
    long long seq, batch;
    int fusion;
    double measured_ms, predicted_ms;
    double lo_ms, hi_ms;         /* the default band (correlated, see compose.h) */
    double lo_unc_ms, hi_unc_ms; /* uncorrelated band */
    /* the forward and backward parts: measured where the label splits its
     * time (fw_latency, bwall_latency), strata's from st_step.pass_s */
    int has_split;
    double measured_fwd_ms, measured_bwd_ms, predicted_fwd_ms, predicted_bwd_ms;
    /* the label's own operator profile (LABEL.csv, st_read_neusight_profile):
     * each operator timed alone, added up; has_profile 0 where there is none */
    int has_profile;
    double profiled_fwd_ms, profiled_bwd_ms;
    char profile_block[64];
} st_val_model;

typedef struct st_val_result {
    st_val_row *rows, *dev_rows, *model_dev_rows;
    size_t n_rows, n_dev_rows, n_model_dev_rows;
    st_val_model *models;
    size_t n_models;
    size_t skipped;       /* rows of a device no preset describes */
    size_t skipped_dtype; /* rows in a datatype their GPU has no rate for */
    size_t skipped_labels; /* whole-model labels left out: no model configs (models "") */
} st_val_result;

/* samples (may be NULL): one CSV row per measured kernel with its prediction;
 * models (may be NULL: DIR/models): the folder of the labels' model configs;
 * "" leaves the labels out (counted in skipped_labels) */
int st_validate_neusight(const char *dir, const char *models, const st_gpu_coef *c, FILE *samples,
                         st_val_result *out, st_error *err);
int st_validate_vidur(const char *dir, const st_gpu_coef *c, long long min_tokens, FILE *samples,
                      st_val_result *out, st_error *err);
void st_val_result_free(st_val_result *r);
/* The whole-model labels of DIR/labels (part of st_validate_neusight),
 * priced for the PyTorch release torch_ver (st_kernel.torch_ver) */
int st_validate_models(const char *dir, const char *models, const st_gpu_coef *c, int torch_ver,
                       st_val_result *out, st_error *err);

/* Collectives: one row per measured machine x collective x (GPUs, GPUs per
 * node), error over sizes >= min_bytes; the smallest size's measured and
 * predicted time show the latency floor. */
typedef struct st_val_coll {
    char cluster[32];  /* VIDUR's folder name, e.g. "a100_dgx" */
    char preset[64];   /* the cluster preset that describes it */
    st_coll coll;
    int gpus, per_node;
    int characterised; /* rows that set the preset's figures (2 GPUs: the links; 8 GPUs at 4 a
                          node: the node's scale-out), not held out */
    st_apes a;         /* internal */
    st_ape_summary s;
    double floor_bytes, floor_meas_s, floor_pred_s;
} st_val_coll;

/* skipped: network folders in the data that have no preset. The rows are
 * malloc'd (free them). No network folder: 0 rows, not an error. */
int st_validate_collectives(const char *vidur_dir, double min_bytes, FILE *samples, st_val_coll **out,
                            size_t *n_out, size_t *skipped, st_error *err);

/* The op class NeuSight op names are reported under ("add" -> "elementwise"). */
const char *st_val_op_class(const char *op);

#endif
