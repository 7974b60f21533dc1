/*
 * accel: layer 1, a spatial accelerator as a loop nest over a storage
 * hierarchy (Timeloop's role).
 *
 * A problem is an 8-D loop nest G N M C P Q R S (G groups, N batch, M output
 * channels, C input channels, P x Q output positions, R x S filter taps) with
 * strides and dilations. Three tensors: Inputs [G N C W H] with
 * W = Wstride*P + Wdilation*R and H = Hstride*Q + Hdilation*S (Timeloop's
 * conv2D projection), Weights [G M C R S], Outputs [G N M P Q] (read-write).
 * A GEMM is M x C x P; a batched GEMM adds G; a depthwise conv is G = channels
 * with C = M = 1.
 *
 * A mapping gives every storage level its temporal factors and loop order,
 * the spatial factors (X and Y) of the fan-out below it, and which tensors it
 * keeps. Evaluation follows Timeloop's conventions, checked against
 * Timeloop's own reference run (see README "Accelerator model"):
 *  - a level's tile is the footprint of every loop inside it;
 *  - a tile is refilled each time a loop above it, from the first one that
 *    indexes the tensor outward, advances (no sliding-window credit across
 *    refills, as in Timeloop's stride-reset rule);
 *  - a parent serves the children of the outermost fan-out stage between it
 *    and the child keeper, once per group of children whose data are
 *    identical (multicast; for outputs, spatial reduction);
 *  - outputs: updates come from below, reads = updates - partition size,
 *    fills = refills - partition size;
 *  - energy = accesses x action energy / block words (+ leakage per cycle on
 *    the instances in use); cycles = max(compute, each level's bandwidth).
 */
#ifndef STRATA_ACCEL_H
#define STRATA_ACCEL_H

#include "hw/hw.h"
#include "workload/workload.h"

enum { ST_AD_G = 0, ST_AD_N, ST_AD_M, ST_AD_C, ST_AD_P, ST_AD_Q, ST_AD_R, ST_AD_S, ST_AD_COUNT };
#define ST_AD_ALL 0xffu

typedef struct st_aprob {
    char name[64];
    long long d[ST_AD_COUNT];
    int wstride, hstride, wdil, hdil;
} st_aprob;

/* Dimensions that index tensor t (bit d = dimension d). */
unsigned st_adim_relevant(st_tensor t);
double st_aprob_macs(const st_aprob *p);
double st_aprob_tensor_words(const st_aprob *p, st_tensor t);
/* Same loop bounds, strides and dilations (the name may differ): one mapping
 * search serves both. */
int st_aprob_equal(const st_aprob *a, const st_aprob *b);
/* Fill strides/dilations with 1 and every dimension with 1. */
void st_aprob_init(st_aprob *p, const char *name);
/* A compute op (GEMM, BMM, conv, grouped experts, unfused attention's two
 * GEMMs are given as BMMs) as a problem; ST_EINVAL for ops that are not loop
 * nests of MACs. */
int st_aprob_from_op(const st_op *op, st_aprob *p, st_error *err);

typedef struct st_amap {
    int n;                                       /* levels, = accel n_levels */
    unsigned t[ST_ACCEL_MAX_LEVELS][ST_AD_COUNT];  /* temporal factors */
    unsigned char perm[ST_ACCEL_MAX_LEVELS][ST_AD_COUNT]; /* dims, innermost first */
    unsigned sx[ST_ACCEL_MAX_LEVELS][ST_AD_COUNT]; /* fan-out below the level, X */
    unsigned sy[ST_ACCEL_MAX_LEVELS][ST_AD_COUNT]; /* ... Y */
    unsigned char keep[ST_ACCEL_MAX_LEVELS];       /* bit t: tensor t kept */
} st_amap;

/* Every factor in the backing store, every level keeping what it may. */
void st_amap_init(st_amap *m, const st_accel *a, const st_aprob *p);

typedef struct st_alevel_stats {
    double reads[ST_TENSOR_COUNT], fills[ST_TENSOR_COUNT], updates[ST_TENSOR_COUNT];
    double tile[ST_TENSOR_COUNT];      /* words held per instance */
    double partition[ST_TENSOR_COUNT]; /* distinct words an instance ever holds */
    double instances;                  /* instances in use */
    double energy[ST_TENSOR_COUNT];    /* J, all instances, access energy */
    double leak;                       /* J */
    double energy_total;               /* J */
    double cycles;                     /* cycles the level's bandwidth needs */
} st_alevel_stats;

typedef struct st_astats {
    double macs, compute_cycles, cycles, utilization, energy, edp, seconds;
    double e_mac, e_noc;
    double e_tensor[ST_TENSOR_COUNT]; /* access + leak share by tensor, J */
    int n;
    st_alevel_stats lv[ST_ACCEL_MAX_LEVELS];
} st_astats;

/* Fan-out of level i to the level below (or to the MACs): X and Y counts. */
void st_accel_fanout(const st_accel *a, int i, int *fx, int *fy);
/* The split that level l's constraints fix along X (y = 0) or Y (y = 1):
 * the product of its fixed factors there, saturating at 2^31 (past any
 * fan-out; three factors of 2^24 would overflow). */
long long st_alevel_fixed_split(const st_mem_level *l, int y);

/* Evaluate a mapping. ST_EINVAL with a sentence for an invalid one (factors
 * that do not multiply to the problem, a spatial split wider than the
 * fan-out, a tile over a level's capacity, a tensor kept where the
 * architecture cannot keep it). Constraints are not checked here: see
 * st_amap_check_constraints. */
int st_accel_eval(const st_accel *a, const st_aprob *p, const st_amap *m, st_astats *s,
                  st_error *err);
/* The same, and where an invalid mapping is wrong: the level (the index of
 * its entry) and the dimension whose factors do not multiply to the
 * problem's, each -1 when not one of them (NULL: not wanted). */
int st_accel_eval_at(const st_accel *a, const st_aprob *p, const st_amap *m, st_astats *s, int *level, int *dim,
                     st_error *err);
/* The fast path the mapper uses: energy (J) and cycles, 0 when invalid. */
int st_accel_eval_fast(const st_accel *a, const st_aprob *p, const st_amap *m,
                       double *energy, double *cycles);
/* ST_EINVAL naming the first constraint of a the mapping breaks. */
int st_amap_check_constraints(const st_accel *a, const st_amap *m, st_error *err);

/* Print the mapping as a loop nest, outermost first, Timeloop style. */
void st_amap_print(const st_accel *a, const st_amap *m, FILE *out);

/* Energy of an evaluated mapping by component class: DRAM, global buffers
 * (SRAM), scratchpads (register files), MACs, NoC. */
enum { ST_AC_DRAM = 0, ST_AC_GLB, ST_AC_SPAD, ST_AC_MAC, ST_AC_NOC, ST_AC_COUNT };
const char *st_acomp_name(int c); /* "dram", "global_buffer", ... */
void st_astats_components(const st_accel *a, const st_astats *s, double *c);

/* ---- design changes (sweeps) -------------------------------------------- */
/* A pe_x x pe_y PE array: levels spanning the old array span the new one. */
int st_accel_resize_pe(st_accel *a, int pe_x, int pe_y, st_error *err);
/* Level i holds `depth` rows; per-access energy scales with sqrt(capacity),
 * leakage linearly (first-order CACTI). */
int st_accel_scale_level(st_accel *a, int i, double depth, st_error *err);

/* ---- mapper ---------------------------------------------------------------- */
typedef enum st_aobj { ST_AOBJ_EDP = 0, ST_AOBJ_ENERGY, ST_AOBJ_DELAY } st_aobj;
int st_aobj_parse(const char *s, st_aobj *out);
const char *st_aobj_name(st_aobj o);

typedef struct st_mapper_opts {
    st_aobj objective;
    unsigned long long seed;
    int threads;
    double budget_s;        /* wall-clock cap; 0 = none */
    long long max_evals;    /* evaluation budget (deterministic); 0 = default */
    int exhaustive;         /* enumerate the whole constrained space, however big */
} st_mapper_opts;

typedef struct st_mapper_result {
    st_amap best;
    st_astats stats;
    double score;
    long long evaluated, valid;
    double seconds, evals_per_s;
    int exhaustive; /* 1: every mapping in the constrained space was evaluated */
    int truncated;  /* 1: the wall-clock budget stopped the search early */
} st_mapper_result;

void st_mapper_opts_default(st_mapper_opts *o);
int st_accel_map(const st_accel *a, const st_aprob *p, const st_mapper_opts *o,
                 st_mapper_result *r, st_error *err);

#endif
