/*
 * explore: design-space sweeps over the other layers.
 *
 * A sweep names one evaluator (the layer a design point runs through: gpu,
 * accel or train), fixed parameters, axes (a parameter and its list of
 * values), 1 to 3 objectives and constraints. A design point is addressed by
 * its index in [0, points): on a grid the index is a mixed-radix number over
 * the axes (first axis slowest); with seeded random sampling point i draws
 * each axis value from a hash of (seed, i, axis), so any index range can be
 * evaluated anywhere and the partial fronts merge exactly.
 *
 * Evaluation runs on a pthread pool: workers take chunks of indices, write
 * each point's metrics into its own slot and queue the finished chunk; one
 * consumer (the UI thread or the headless driver) drains the queue and folds
 * points into an incremental Pareto front. The front is a set defined by the
 * points alone (equal objective vectors: the lower index wins), so it is the
 * same for any thread count and any order of completion.
 *
 * Evaluators are a table (st_evaluator): a new model kind adds parameters to
 * the parameter table and an entry to the evaluator table; the pool and the
 * Pareto code do not change. Sweep files are read by io/ (st_load_sweep),
 * which resolves every preset and workload named in them.
 */
#ifndef STRATA_EXPLORE_H
#define STRATA_EXPLORE_H

#include "accel/accel.h"
#include "compose/compose.h"
#include "serve/serve.h"
#include "train/train.h"

/* ---- metrics (objectives and constraints) --------------------------------- */
typedef enum st_metric {
    ST_M_LATENCY = 0, /* s: the step, the whole network, or one iteration */
    ST_M_ENERGY,      /* J per step / network pass / iteration */
    ST_M_EDP,         /* J*s */
    ST_M_THROUGHPUT,  /* tokens/s (gpu, train) or inferences/s (accel) */
    ST_M_MEMORY,      /* bytes per device (GPU memory; on-chip storage for accel) */
    ST_M_COST,        /* device-seconds per unit of work (GPU-s per 1k tokens; PE-s per inference) */
    ST_M_MFU,         /* model FLOP utilisation, 0..1 (accel: MAC utilisation) */
    ST_M_TTFT,        /* serve: mean time to first token, s */
    ST_M_TPOT,        /* serve: mean time per output token after the first, s */
    ST_M_GOODPUT,     /* serve: requests/s that meet the TTFT and TPOT SLOs */
    ST_METRIC_COUNT
} st_metric;

const char *st_metric_name(st_metric m);  /* "latency", ... */
const char *st_metric_unit(st_metric m);  /* "s", "J", ... */
int st_metric_parse(const char *s, st_metric *out);
int st_metric_maximize(st_metric m);      /* throughput and mfu go up */

/* ---- parameters ------------------------------------------------------------ */
typedef enum st_pkind {
    ST_PK_INT = 0, ST_PK_NUM, ST_PK_BOOL,
    ST_PK_DTYPE, ST_PK_PHASE, ST_PK_ATTN, ST_PK_RECOMPUTE, ST_PK_SCHEDULE, ST_PK_AOBJ,
    ST_PK_SCHED, ST_PK_QUANT, ST_PK_LENGTHS,
    ST_PK_GPU, ST_PK_ARCH, ST_PK_CLUSTER, ST_PK_WORKLOAD /* names resolved by io/ */
} st_pkind;

typedef enum st_param {
    /* workload */
    ST_P_WORKLOAD = 0, ST_P_PHASE, ST_P_BATCH, ST_P_SEQ, ST_P_KV, ST_P_DTYPE, ST_P_ATTN,
    ST_P_FUSED,
    /* GPU hardware */
    ST_P_GPU, ST_P_SMS, ST_P_CLOCK_SCALE, ST_P_BW_SCALE, ST_P_MEM_SCALE,
    /* accelerator hardware and mapper */
    ST_P_ARCH, ST_P_PE_X, ST_P_PE_Y, ST_P_GLB_KIB, ST_P_SPAD_SCALE, ST_P_CLOCK_MHZ,
    ST_P_OBJECTIVE, ST_P_MAPPER_EVALS, ST_P_SEED,
    /* training and parallelism */
    ST_P_CLUSTER, ST_P_GPUS, ST_P_DP, ST_P_TP, ST_P_PP, ST_P_CP, ST_P_EP, ST_P_SP, ST_P_ZERO,
    ST_P_RECOMPUTE, ST_P_MICROBATCHES, ST_P_GLOBAL_BATCH, ST_P_SCHEDULE, ST_P_CHUNKS,
    ST_P_LORA, ST_P_FLASH,
    /* serving */
    ST_P_SCHED, ST_P_MAX_SEQS, ST_P_MAX_TOKENS, ST_P_CHUNK, ST_P_BLOCK, ST_P_MEM_UTIL, ST_P_QPS,
    ST_P_REQUESTS, ST_P_LENGTHS, ST_P_QUANT, ST_P_SPEC_K, ST_P_SPEC_ACCEPT, ST_P_PREFIX_CACHE,
    ST_P_SLO_TTFT, ST_P_SLO_TPOT, ST_P_SERVE_SEED, ST_P_MAX_MODEL_LEN, ST_P_RESERVE_FULL_ISL,
    ST_P_ASYNC_SCHED, ST_PARAM_COUNT
} st_param;

typedef struct st_param_info {
    const char *name;
    st_pkind kind;
    double min, max; /* numbers: allowed range */
    const char *help;
} st_param_info;

const st_param_info *st_param_info_of(st_param p);
int st_param_parse(const char *name, st_param *out);

/* One value of a parameter: its text as written, its number (ints, numbers,
 * bools, enum members) or the index of the resolved object in the sweep's
 * tables (presets, workloads). */
typedef struct st_pvalue {
    char text[256]; /* a value as written: a number, a name or a preset's path */
    double num;
    int obj;
} st_pvalue;

/* ---- the sweep --------------------------------------------------------------- */
#define ST_SWEEP_MAX_AXES 12
#define ST_SWEEP_MAX_OBJ 3
#define ST_SWEEP_MAX_CON 8

typedef enum st_sweep_kind {
    ST_SWEEP_GPU = 0, ST_SWEEP_ACCEL, ST_SWEEP_TRAIN, ST_SWEEP_SERVE, ST_SWEEP_KIND_COUNT
} st_sweep_kind;
const char *st_sweep_kind_name(st_sweep_kind k);
int st_sweep_kind_parse(const char *s, st_sweep_kind *out);

typedef struct st_sweep_axis {
    st_param param;
    size_t n;
    st_pvalue *v;
    int line, col; /* where the axis is written */
} st_sweep_axis;

typedef enum st_cmp { ST_CMP_LE = 0, ST_CMP_GE } st_cmp;

typedef struct st_constraint {
    int fits;      /* 1: "fits": the point fits in device memory */
    st_metric m;   /* otherwise: metric <= / >= bound */
    st_cmp cmp;
    double bound;
    char text[64];
} st_constraint;

typedef struct st_sweep {
    char name[64];
    char path[512];
    st_sweep_kind kind;
    st_pvalue base[ST_PARAM_COUNT]; /* fixed values (defaults filled in by the loader) */
    int base_set[ST_PARAM_COUNT];
    size_t n_axes;
    st_sweep_axis axes[ST_SWEEP_MAX_AXES];
    int n_obj;
    st_metric obj[ST_SWEEP_MAX_OBJ];
    int n_con;
    st_constraint con[ST_SWEEP_MAX_CON];
    int random;                /* 0: grid; 1: seeded random sampling */
    unsigned long long seed;
    long long samples;         /* random: number of points */
    long long points;          /* points in the sweep */
    /* resolved objects, indexed by st_pvalue.obj */
    st_gpu *gpus;         size_t n_gpus;
    /* an edge preset among the gpus: its view in gpus[i], the device in
     * edges[i] with is_edge[i] set (eval sweeps only; see gpu/edge.h) */
    st_edge *edges;       int *is_edge;
    st_edge_coef edge_coef; /* loaded when a sweep names an edge preset */
    st_accel *accels;     size_t n_accels;
    st_cluster *clusters; size_t n_clusters;
    st_model *models;     size_t n_models;
    st_gpu_coef coef;
} st_sweep;

void st_sweep_init(st_sweep *s, st_sweep_kind kind);
void st_sweep_free(st_sweep *s);
/* Which parameters an evaluator takes (1) and whether a parameter is one. */
int st_sweep_kind_takes(st_sweep_kind k, st_param p);
/* Metrics an evaluator defines (bit m). */
unsigned st_sweep_kind_metrics(st_sweep_kind k);
/* Check objectives/constraints against the evaluator and count the points
 * (ST_EINVAL on more than 2^40 points or an objective it cannot give). */
int st_sweep_finish(st_sweep *s, st_error *err);
/* The values of point idx, one per parameter (axis value, else the fixed one). */
void st_sweep_point_values(const st_sweep *s, long long idx, const st_pvalue **vals);
/* Axis value index of point idx on axis a. */
size_t st_sweep_axis_index(const st_sweep *s, long long idx, size_t a);

/* ---- one design point --------------------------------------------------------- */
typedef enum st_pstatus { ST_PT_PENDING = 0, ST_PT_OK, ST_PT_INVALID } st_pstatus;

typedef struct st_point {
    double m[ST_METRIC_COUNT]; /* NAN where the evaluator does not define it */
    double lo_s, hi_s;         /* latency 90% band */
    unsigned char status;      /* st_pstatus */
    unsigned char fits;        /* fits in device memory */
    unsigned char feasible;    /* valid and meets every constraint */
    unsigned char front;       /* on the Pareto front (set by the consumer) */
} st_point;

/* What a point is made of, for the breakdown screen: per-layer latency with
 * error, per-layer energy by component (accel), training parts. */
#define ST_DETAIL_MAX_LAYERS 64

typedef struct st_detail_layer {
    char name[48];
    double time_s, sd_s, err_share;
    double energy[ST_AC_COUNT]; /* J (accel) */
    double count;               /* repeats */
} st_detail_layer;

typedef struct st_detail {
    st_sweep_kind kind;
    st_point pt;
    size_t n_layers;
    st_detail_layer layers[ST_DETAIL_MAX_LAYERS];
    double energy[ST_AC_COUNT]; /* accel totals */
    st_step step;               /* gpu */
    st_train_result train;      /* train */
    st_serve_summary serve;     /* serve */
    char note[160];             /* why a point is invalid, or what was assumed */
} st_detail;

/* Evaluate point idx (thread-safe; st_sweep is read only). detail may be
 * NULL. An invalid point (a parallel split that does not divide, a dtype the
 * GPU lacks) is not an error: status ST_PT_INVALID and the reason in err. */
int st_sweep_eval(const st_sweep *s, long long idx, st_point *pt, st_detail *detail, st_error *err);

/* ---- Pareto front ------------------------------------------------------------ */
typedef struct st_pareto {
    int k;                 /* objectives */
    int sign[ST_SWEEP_MAX_OBJ]; /* +1 minimise, -1 maximise */
    size_t n, cap;
    long long *idx;        /* members, unordered */
    double *v;             /* k values per member, signed (minimised) */
} st_pareto;

void st_pareto_init(st_pareto *p, int k, const int *sign);
void st_pareto_free(st_pareto *p);
/* Offer a point: 1 if it joined the front (dominated members leave), 0 if
 * dominated, ST_ENOMEM. Equal vectors: the lower index stays. */
int st_pareto_insert(st_pareto *p, long long idx, const double *obj);
/* Members sorted by index. */
void st_pareto_sorted(const st_pareto *p, long long *out);
/* 1 if a dominates b (minimising signed values; ties broken by index). */
int st_pareto_dominates(int k, const double *a, long long ia, const double *b, long long ib);

/* ---- the pool ---------------------------------------------------------------- */
typedef struct st_sweep_progress {
    long long total, done, valid, feasible, front;
    double elapsed_s, rate, eta_s; /* points/s, seconds left */
    int finished, cancelled;
} st_sweep_progress;

typedef struct st_sweep_run st_sweep_run;

/* Start evaluating points [first, first+count) on `threads` threads (0: the
 * cores). Returns at once; workers run until done or cancelled. */
int st_sweep_start(const st_sweep *s, int threads, long long first, long long count, st_sweep_run **out,
                   st_error *err);
/* Readable (one byte per finished chunk) when there is something to drain. */
int st_sweep_notify_fd(const st_sweep_run *r);
/* Fold finished chunks into the front (the consumer's side); returns the
 * number of points folded, or ST_ENOMEM. */
long long st_sweep_drain(st_sweep_run *r);
void st_sweep_get_progress(st_sweep_run *r, st_sweep_progress *p);
void st_sweep_cancel(st_sweep_run *r);
/* Wait for the workers, then drain what is left. */
int st_sweep_wait(st_sweep_run *r);
void st_sweep_run_free(st_sweep_run *r);
/* The error that stopped the workers (out of memory), or NULL. */
const st_error *st_sweep_run_error(const st_sweep_run *r);
/* A finished run over points [first, first+count) evaluated elsewhere
 * (other processes: strata sweep --mpi gathers them): takes the points
 * (count of them, from malloc; freed by st_sweep_run_free, or here on
 * failure), folds them into the front as a local run would, and marks its
 * members. The front is the same whatever order or split produced them. */
int st_sweep_run_adopt(const st_sweep *s, long long first, long long count, st_point *pts, double elapsed_s,
                       st_sweep_run **out, st_error *err);
/* Points [first, first+count), indexed from 0 = first. */
const st_point *st_sweep_points(const st_sweep_run *r, long long *first, long long *count);
const st_pareto *st_sweep_front(const st_sweep_run *r);

/* ---- export -------------------------------------------------------------------- */
const char *st_metric_key(st_metric m); /* "latency_s", "energy_j", ... (CSV columns, JSON keys) */
/* "batch=8 dtype=fp8": the point's axis values. */
void st_sweep_point_label(const st_sweep *s, long long idx, char *buf, size_t n);
/* The run's first refused point and its reason in why (evaluated again: a
 * point keeps no text), or -1 when none was refused. */
long long st_sweep_first_invalid(const st_sweep *s, const st_sweep_run *r, char *why, size_t n);
/* Every evaluated point (front_only: the front) as CSV with a header row, or
 * as one JSON object {sweep, evaluate, points_total, objectives, axes, first,
 * count, points: [{index, params, status, feasible, front, metrics...}]}. */
int st_sweep_write_csv(const st_sweep *s, const st_sweep_run *r, int front_only, FILE *f);
int st_sweep_write_json(const st_sweep *s, const st_sweep_run *r, int front_only, FILE *f);
/* The four export files (--out DIR, the explorer's e key). */
#define ST_SWEEP_EXPORTS 4
typedef struct st_sweep_export {
    const char *name; /* "points.csv", "front.csv", "points.json", "front.json" */
    int front, json;
} st_sweep_export;
extern const st_sweep_export st_sweep_exports[ST_SWEEP_EXPORTS];
int st_sweep_write_export(const st_sweep *s, const st_sweep_run *r, int which, FILE *f);
void st_sweep_json_header(const st_sweep *s, st_json *j);
void st_sweep_json_point(const st_sweep *s, long long idx, const st_point *p, st_json *j);

#endif
