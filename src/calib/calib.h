/*
 * calib: fit the GPU kernel coefficients to measured kernels, and measure
 * the model's accuracy against held-out kernels and whole-model runs.
 *
 * Measured data comes in the layouts of ../shared/data/neusight (PyTorch
 * eager FP32 kernel sweeps, whole-model labels) and ../shared/data/vidur
 * (FP16 per-operator profiles of one transformer block); see io/measured.h.
 * strata reads them in place and never copies them.
 */
#ifndef STRATA_CALIB_H
#define STRATA_CALIB_H

#include "gpu/gpu.h"
#include "io/measured.h"

/* VIDUR rows scored and fitted from this many tokens up (issue 3's bar for
 * the A100 operator profiles: num_tokens >= 64); below it the launch, not
 * the GPU's throughput, sets the time */
#define ST_VIDUR_MIN_TOKENS 64

/* One measured kernel, turned into what the model estimates. */
typedef struct st_calib_sample {
    st_kernel k;
    int gpu;              /* index into st_calib_data.gpus */
    double t_s;           /* measured; includes host dispatch when has_dispatch */
    int has_dispatch;
    st_tile named;        /* tile parsed from the kernel name (0x0: none) */
    int named_split;      /* split-K inferred from the launch grid (0: unknown) */
    double grid_ctas;     /* CTAs the measured launch had (grid x*y*z; 0: unknown) */
    int tp;               /* VIDUR: tensor-parallel degree (0 elsewhere) */
    long long tokens;     /* VIDUR: num_tokens */
    char op[32];          /* source op name: "bmm", "add", "mlp_up_proj" ... */
    int validate_only;    /* measured, but not one kernel the model can fit to */
    double own_floor_s;   /* > 0: the data's own harness (DIR/harness.csv): its one-element
                             op took this long; replaces the table's dispatch and harness */
    int own_floor_router; /* that floor is the harness's router (softmax + topk of one token
                             over 8 experts, four kernels), not a one-launch op */
    int epilogue_fit;     /* an FP32 GEMM of an --ops folder's sweep: fits its family's
                             gemm_epilogue_cycles (st_calib_epilogue_fit) */
    int norm_fit;         /* a layer-norm forward row of an --ops folder's sweep: fits its
                             family's norm_row_cycles and norm_iter_cycles */
} st_calib_sample;

typedef struct st_calib_data {
    st_gpu *gpus;
    size_t n_gpus;
    char (*dev_names)[64]; /* the measurement's device name per gpu */
    st_calib_sample *s;
    size_t n, cap;
    size_t skipped_unknown_device;
    size_t skipped_dtype; /* rows in a datatype their GPU's preset has no rate for */
} st_calib_data;

void st_calib_data_free(st_calib_data *d);
/* Append NeuSight kernel CSVs of a folder (kernels/ or kernels-test/). */
int st_calib_add_neusight(st_calib_data *d, const char *dir, st_error *err);
/* Append a fused-attention sweep (DIR/attention.csv of strata's own
 * measurements; validation only: no class fit reads attention). Absent: 0. */
int st_calib_add_attention(st_calib_data *d, const char *path, st_error *err);
/* Append a sweep of single ops in strata kernel's terms (DIR/ops.csv of
 * strata's own measurements: grouped GEMMs, weight-only INT4, embedding
 * gathers, MoE routers; validation only). Absent: 0. Rows without a torch
 * field take torch_default (the folder's release, st_calib_harness_torch;
 * 0: none); a row naming another release than a non-zero torch_default is
 * an error at its field. */
int st_calib_add_ops(st_calib_data *d, const char *path, int torch_default, st_error *err);
/* DIR/harness.csv, where the data has one: each sample from index `from` on
 * takes, for its dispatch class, the harness's own measured floor (strata's
 * sweeps, data/measured) instead of the table's NeuSight host figures.
 * *torch_ver: the release its rows name (their `torch` column; 0: none),
 * the stack the folder's whole-model labels ran on; rows that disagree are
 * an error. Absent: 0, nothing changed. */
int st_calib_apply_harness(const char *dir, st_calib_data *d, size_t from, int *torch_ver, st_error *err);
/* The release DIR/harness.csv names (its rows checked as
 * st_calib_apply_harness does; 0: no file or no torch column). */
int st_calib_harness_torch(const char *dir, int *torch_ver, st_error *err);
/* Append the MoE router rows (op topk) and tinygemm's weight-only INT4 rows
 * of DIR/ops.csv, and where they exist the softmax rows of
 * DIR/kernels-test/softmax.csv, the FP32 GEMM rows of
 * DIR/kernels-test/{bmm,linear}.csv and the layer-norm rows of
 * DIR/kernels-test/ln.csv (run on the folder's release), with
 * DIR/harness.csv's floors, for `strata calibrate --ops` to fit
 * topk_pass_cycles, tinygemm_wavefront_cycles, the softmax cycles, the GEMM
 * epilogue cycles and the layer norm's cycles on (and nothing else: they
 * stay validation-only for every class). No ops.csv, or one without topk
 * rows: an error. */
int st_calib_add_router_fit(st_calib_data *d, const char *dir, st_error *err);
/* The softmax kernel (st_softmax_kernel: warp or register) whose cycles
 * sample s fits, or -1: forward softmax rows on a release from
 * ST_TORCH_SOFTMAX_REG that run one of the two register kernels. */
int st_calib_softmax_fit_path(const st_calib_data *data, const st_calib_sample *s);
/* 1 where sample s fits tinygemm_wavefront_cycles: a weight-only INT4 GEMM
 * that tinygemm ran (st_int4_kernel). */
int st_calib_tinygemm_fit(const st_calib_sample *s);
/* 1 where sample s fits its GPU family's gemm_epilogue_cycles: an FP32
 * GEMM of an --ops folder's sweep that the CUDA cores run. */
int st_calib_epilogue_fit(const st_calib_data *data, const st_calib_sample *s);
/* 1 where sample s fits its GPU family's norm_row_cycles and
 * norm_iter_cycles: a layer-norm forward row of an --ops folder's sweep. */
int st_calib_norm_fit(const st_calib_data *data, const st_calib_sample *s);
/* Append VIDUR mlp.csv profiles under DIR/profiling/compute/GPU/ (gpu_filter:
 * only that GPU folder, e.g. "a100"; NULL for all). */
int st_calib_add_vidur(st_calib_data *d, const char *vidur_dir, const char *gpu_filter,
                       st_error *err);
/* The GPU preset a VIDUR GPU folder name denotes ("a100" -> a100-80gb-sxm). */
const char *st_vidur_gpu_preset(const char *folder);

/* Fit every class, on `threads` threads (1 to ST_CALIB_MAX_THREADS; the
 * table is the same on any number). report (may be NULL) gets a human
 * summary. One calibration at a time per process. */
#define ST_CALIB_MAX_THREADS 1024
int st_calibrate(const st_calib_data *d, int threads, st_gpu_coef *out, FILE *report, st_error *err);

/* Predicted time of a sample (with dispatch where the sample has it). */
int st_calib_predict(const st_calib_data *d, size_t i, const st_gpu_coef *c, st_kernel_est *e,
                     double *pred_s, st_error *err);
/* The same on the tile the sample's kernel name gives and the split its
 * launch grid implies (named_split; 0, unknown: the model's own choice of
 * split for that tile), as the calibration's final fit prices it: tells a
 * wrong tile choice from a wrong price of the tile. 1 (nothing set) where
 * the sample is not a library GEMM or names no tile; else as
 * st_calib_predict. */
int st_calib_predict_named(const st_calib_data *d, size_t i, const st_gpu_coef *c, st_kernel_est *e,
                           double *pred_s, st_error *err);

#endif
