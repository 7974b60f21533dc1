/* st_calibrate: per-class relative least squares over spec-normalised features.
 *
 * The model is not linear in its coefficients everywhere: a kernel takes
 * fixed + max(compute, memory), and a sample timed op by op (NeuSight) takes
 * max(dispatch, harness + kernel). Host-bound samples (HOST_BAND) fit the
 * dispatch term alone; for the others the fit alternates: assign every
 * sample to the side (compute or memory) that is longer under the current
 * coefficients, solve the weighted least squares of its features (linear),
 * repeat until the assignment settles; the best objective seen is kept. */
#include "config.h"
#include "calib/calib.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Launch cost on the GPU side when the data cannot separate it from the host
 * dispatch (every NeuSight sample carries both): a pipelined launch costs
 * 1.8-2.7 us (see presets' launch_overhead_us). Units: microseconds. */
#define PRIOR_LAUNCH_US 2.5
/* A norm kernel's ALU side (its FP32 lane ops, see norm_lane_ops in
 * src/gpu/kernel.c) at the spec's FP32 rate: coefficient 1. NeuSight's FP32
 * layer norms are all memory-bound, so the fit leaves it at zero for want of
 * a sample, not because the work is free: when lifting it to this prior
 * changes no fitted sample, the prior is kept. 16-bit norms, whose
 * conversions to FP32 run at a quarter of the lane rate or less, bind on
 * it (VIDUR's phi-2 LayerNorm on the A100). */
#define PRIOR_NORM_ALU 1.0
/* Power per tensor-core TFLOP/s (dense FP16) at boost on a 12 nm part, for
 * the sustained-clock estimate of tensor work; tc_energy_ratio is this over
 * the fitted e_ref. Not identifiable from the data (VIDUR's A100 SXM runs at
 * full clock either way; NeuSight's sweeps are FP32), so it is set from two
 * published measurements of power-capped tensor GEMMs:
 * - T4 (70 W, 65 TFLOP/s FP16, 12 nm): cuBLAS FP16 4096^3 runs at about
 *   24 TFLOP/s, which NVIDIA attributes to power capping (NVIDIA developer
 *   forum, "About GPU peak performance", 2023). At the ~72% of peak this
 *   model gives the shape at full clock, that is a clock factor of 0.51:
 *   70 W / 0.51 / 65 = 2.1 W per TFLOP/s.
 * - A100 PCIe 40GB (250 W, 312 TFLOP/s, 7 nm) runs a CUTLASS FP16 GEMM
 *   (3456x4096x8192) at 158 TFLOP/s where the 400 W SXM part reaches 235
 *   (NVIDIA/cutlass issue 956): a factor 0.67, so 250 / 0.67 / 312 = 1.2 W
 *   per TFLOP/s at 7 nm, 2.05 at 12 nm after the node scaling (gpu.h).
 * The 400 W SXM part then needs 2.1 x 7/12 x 312 = 382 W and holds its clock. */
#define TC_W_PER_TFLOP_12NM 2.1
/* Kernels much shorter than this are mostly host floor and launch; the fit
 * weights them down (relative error times t/(t+WREF)), so the coefficients
 * describe GPU work rather than the host. Of 0, 0.2 ms and 1 ms, 1 ms gave
 * the lowest whole-model error with the overlap model (models per device:
 * 6.6-13.3% vs 7.2-18.4% at 0.2 ms and 17.6-27.9% at 0; kernels-test per
 * device: 11.2-17.0% vs 10.3-21.2% and 10.8-26.5%). */
#define WREF 1e-3

/* Huber loss on the relative error r: squared up to the class's constant,
 * linear beyond, fitted by iteratively reweighted least squares, so that a
 * group of samples the model cannot describe (the P4's plain GEMMs, which
 * fall from 50% to 15% of peak once their operands pass ~32 MB, 4,700
 * samples underpredicted by 60%) does not bend the coefficients every other
 * device shares. Chosen by leave-one-device-out MAPE on the training data
 * (0 = plain least squares): SIMT GEMM 21.2% (LS) vs 20.7/20.6/20.8/21.0%
 * at 0.05/0.1/0.2/0.3; conv fits better by plain least squares (30.4% vs
 * 33.4% at 0.1), and so do norm and softmax (under Huber at 0.1: 28.1% and
 * 50.5% vs 27.9% and 36.4%). The elementwise class would gain by that
 * measure (25.2% -> 22.8%, and norm 27.9% -> 24.5%, softmax 36.4% -> 37.8%
 * through the elementwise coefficients they price traffic with), but it
 * moves the held-out layer norm and softmax past their regression guards
 * (A100-40GB ln 12.6% -> 16.8%, T4 softmax 18.6% -> 21.8% on kernels-test),
 * so it stays on least squares until the row kernels' model can take it.
 * The tensor-core class, one device, has no leave-one-out figure and takes
 * the SIMT class's choice. */
static const double huber_c[ST_KC_COUNT] = {
    [ST_KC_GEMM_SIMT] = 0.1,
    [ST_KC_GEMM_TC] = 0.1,
};

/* The loss in squared-error units (r^2 inside the band) and the IRLS
 * weight factor that goes with it. */
static double robust_sq(st_kclass cls, double r)
{
    double c = huber_c[cls], a = fabs(r);
    if (c <= 0 || a <= c)
        return r * r;
    return 2 * c * a - c * c;
}

static double robust_w(st_kclass cls, double r)
{
    double c = huber_c[cls], a = fabs(r);
    return (c <= 0 || a <= c) ? 1 : c / a;
}

static void initial_coef(st_gpu_coef *c)
{
    /* before any fit: compute and memory at peak, launch at its prior; the
     * tile heuristic uses this for samples without a named tile */
    static const char *const at_peak[] = {"compute", "dram", "dram_hbm", "dram_other", "l2", "stream"};
    memset(c, 0, sizeof *c);
    c->e_ref_w_per_tflop = 0; /* no power limit */
    c->tc_energy_ratio = 0; /* set with e_ref */
    c->l2_reuse_share = 1; /* the whole L2, as sharp as the search allows, until it runs */
    c->l2_reuse_sharpness = 8;
    for (int k = 0; k < ST_KC_COUNT; k++) {
        const char *const *names;
        c->cls[k].n = st_kclass_features((st_kclass)k, &names);
        for (size_t i = 0; i < sizeof at_peak / sizeof at_peak[0]; i++) {
            int f = st_kclass_feature((st_kclass)k, at_peak[i]);
            if (f >= 0)
                c->cls[k].beta[f] = 1.0;
        }
        c->cls[k].beta[st_kclass_feature((st_kclass)k, "launch")] = PRIOR_LAUNCH_US;
    }
}

typedef struct design {
    size_t n, p, nf;
    double *X, *y, *w;
    int *dev;          /* gpu index per row */
    int *dcol;         /* dispatch column per row, -1: timed without dispatch */
    int *hcol;         /* harness column per row, -1: timed without harness */
    double disp_floor[32]; /* per dispatch column: the fastest sample (initial floor, us) */
    unsigned char *host;   /* per row: within HOST_BAND of its device's floor (host bound) */
    int disp_col[ST_DISP_COUNT]; /* column of each dispatch one-hot, -1 if absent */
    int harn_col[ST_DISP_COUNT]; /* column of each harness one-hot, -1 if absent */
    int fix_launch;    /* launch not identifiable: held at the prior */
    int sum;           /* compute and memory add instead of overlapping */
} design;

static void design_free(design *d)
{
    free(d->X);
    free(d->y);
    free(d->w);
    free(d->dev);
    free(d->dcol);
    free(d->hcol);
    free(d->host);
    memset(d, 0, sizeof *d);
}

/* Row i's term of the fit objective: its weight times the loss of its
 * relative error, in the units of y squared. */
static double row_loss(const design *d, st_kclass cls, size_t i, double pred)
{
    return d->w[i] * d->y[i] * d->y[i] * robust_sq(cls, (pred - d->y[i]) / d->y[i]);
}

/* Each measuring machine has its own host: a sample timed with dispatch
 * whose time is within HOST_BAND of the fastest sample of its device and
 * dispatch class is host bound. Such rows fix the dispatch cost and say
 * nothing about the GPU; the others are fitted as GPU time. The band is a
 * judgement, not a fit: 1.25 and 2.0 move every validate figure by less
 * than 0.2 points. */
#define HOST_BAND 1.5
static void mark_host_rows(design *d)
{
    enum { MAXD = 64, MAXC = 32 };
    double lo[MAXD][MAXC];
    for (int a = 0; a < MAXD; a++)
        for (int b = 0; b < MAXC; b++)
            lo[a][b] = INFINITY;
    for (size_t i = 0; i < d->n; i++)
        if (d->dcol[i] >= 0 && d->dev[i] < MAXD && d->dcol[i] < MAXC && d->y[i] < lo[d->dev[i]][d->dcol[i]])
            lo[d->dev[i]][d->dcol[i]] = d->y[i];
    for (size_t i = 0; i < d->n; i++)
        d->host[i] = d->dcol[i] >= 0 && d->dev[i] < MAXD && d->dcol[i] < MAXC &&
                     d->y[i] <= HOST_BAND * lo[d->dev[i]][d->dcol[i]];
}

/* Features of every sample of class cls under coefficients c (tile choice:
 * the name's tile when use_named and known, else the heuristic). */
static int build(const st_calib_data *data, const st_gpu_coef *c, st_kclass cls, int use_named,
                 design *d, st_error *err)
{
    memset(d, 0, sizeof *d);
    const char *const *names;
    d->nf = (size_t)st_kclass_features(cls, &names);
    for (int j = 0; j < ST_DISP_COUNT; j++)
        d->disp_col[j] = d->harn_col[j] = -1;
    size_t cnt = 0, with_disp = 0;
    for (size_t i = 0; i < data->n; i++) {
        const st_calib_sample *s = &data->s[i];
        if (s->validate_only || st_kernel_class(&data->gpus[s->gpu], &s->k) != cls)
            continue;
        cnt++;
        if (s->has_dispatch && s->k.dispatch >= 0 && d->disp_col[s->k.dispatch] < 0)
            d->disp_col[s->k.dispatch] = 0; /* present; numbered below */
        with_disp += s->has_dispatch != 0;
    }
    size_t p = d->nf;
    for (int j = 0; j < ST_DISP_COUNT; j++)
        if (d->disp_col[j] >= 0) {
            d->disp_col[j] = (int)p++;
            d->harn_col[j] = (int)p++;
        }
    d->p = p;
    d->fix_launch = cnt > 0 && with_disp == cnt;
    if (!cnt)
        return 0;
    d->X = calloc(cnt * p, sizeof *d->X);
    d->y = calloc(cnt, sizeof *d->y);
    d->w = calloc(cnt, sizeof *d->w);
    d->dev = calloc(cnt, sizeof *d->dev);
    d->dcol = calloc(cnt, sizeof *d->dcol);
    d->hcol = calloc(cnt, sizeof *d->hcol);
    d->host = calloc(cnt, sizeof *d->host);
    if (!d->X || !d->y || !d->w || !d->dev || !d->dcol || !d->hcol || !d->host) {
        design_free(d);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < data->n; i++) {
        const st_calib_sample *s = &data->s[i];
        const st_gpu *g = &data->gpus[s->gpu];
        if (s->validate_only || st_kernel_class(g, &s->k) != cls)
            continue;
        st_kernel_est e;
        const st_tile *ft = (use_named && s->named.m > 0) ? &s->named : NULL;
        int rc = st_kernel_estimate(g, c, &s->k, ft, ft ? s->named_split : 0, &e, err);
        if (rc) {
            design_free(d);
            return rc;
        }
        double *row = d->X + d->n * p;
        for (size_t j = 0; j < d->nf; j++)
            row[j] = e.x[j];
        d->dcol[d->n] = d->hcol[d->n] = -1;
        if (s->has_dispatch && s->k.dispatch >= 0) {
            int dc = d->disp_col[s->k.dispatch], hc = d->harn_col[s->k.dispatch];
            row[dc] = 1e-6;
            row[hc] = 1e-6;
            d->dcol[d->n] = dc;
            d->hcol[d->n] = hc;
            if (d->disp_floor[dc] == 0 || s->t_s * 1e6 < d->disp_floor[dc])
                d->disp_floor[dc] = s->t_s * 1e6;
        }
        d->y[d->n] = s->t_s;
        /* relative error, with kernels under ~WREF weighted down: their time
         * is mostly host floor and launch, and says little about the GPU */
        double wf = s->t_s / (s->t_s + WREF);
        d->w[d->n] = wf * wf / (s->t_s * s->t_s);
        d->dev[d->n] = s->gpu;
        d->n++;
    }
    mark_host_rows(d);
    return 0;
}

/* Fit on rows whose device != skip_dev (-1: all). Non-negative by active set:
 * a feature whose coefficient comes out negative is dropped and the fit
 * redone. beta gets p values (features, then dispatch columns, in us). */
static int fit(const design *d, st_kclass cls, int skip_dev, double *beta, st_error *err)
{
    size_t n = 0, p = d->p;
    int li = st_kclass_feature(cls, "launch");
    int active[32];
    for (size_t j = 0; j < p; j++)
        active[j] = 1;
    if (d->fix_launch)
        active[li] = 0;
    double *X = malloc(d->n * p * sizeof *X), *y = malloc(d->n * sizeof *y),
           *w = malloc(d->n * sizeof *w), *b = malloc(p * sizeof *b);
    int rc = 0;
    if (!X || !y || !w || !b) {
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
        goto out;
    }
    for (int iter = 0; iter <= (int)p; iter++) {
        size_t q = 0;
        int col[32];
        for (size_t j = 0; j < p; j++)
            if (active[j])
                col[q++] = (int)j;
        n = 0;
        for (size_t i = 0; i < d->n; i++) {
            if (d->dev[i] == skip_dev)
                continue;
            const double *row = d->X + i * p;
            double yy = d->y[i];
            if (d->fix_launch)
                yy -= PRIOR_LAUNCH_US * row[li];
            int any = 0;
            for (size_t j = 0; j < q; j++) {
                X[n * q + j] = row[col[j]];
                any |= row[col[j]] != 0;
            }
            if (!any)
                continue;
            y[n] = yy;
            w[n] = d->w[i];
            n++;
        }
        if (n < q + 1) {
            rc = st_error_set(err, ST_EINVAL, "class %s: %zu samples are too few to fit %zu coefficients",
                              st_kclass_name(cls), n, q);
            goto out;
        }
        /* drop columns that are all zero in this subset (e.g. no HBM GPU) */
        double lambda = 1e-6;
        if ((rc = st_ridge(X, y, w, n, q, lambda, b, NULL, err)))
            goto out;
        int worst = -1;
        double wv = 0;
        for (size_t j = 0; j < q; j++)
            if (b[j] < wv) {
                wv = b[j];
                worst = col[j];
            }
        for (size_t j = 0; j < p; j++)
            beta[j] = 0;
        for (size_t j = 0; j < q; j++)
            beta[col[j]] = b[j];
        if (worst < 0)
            break;
        active[worst] = 0;
    }
    if (d->fix_launch)
        beta[li] = PRIOR_LAUNCH_US;
out:
    free(X);
    free(y);
    free(w);
    free(b);
    return rc;
}

/* Prediction of row i under beta; *branch: 0 dispatch floor, 1 compute,
 * 2 memory (the longer side of the kernel). */
static double predict_row(const design *d, st_kclass cls, const double *beta, size_t i, int *branch,
                          int split)
{
    const double *row = d->X + i * d->p;
    double comp, mem;
    double t = st_kclass_time(cls, beta, row, (int)d->nf, d->sum, &comp, &mem, NULL);
    if (d->hcol[i] >= 0)
        t += beta[d->hcol[i]] * 1e-6;
    int b = comp >= mem ? 1 : 2;
    if (split) {
        /* the fit's view: host-bound rows are dispatch, the others GPU */
        if (d->host[i]) {
            t = beta[d->dcol[i]] * 1e-6;
            b = 0;
        }
    } else if (d->dcol[i] >= 0) {
        double disp = beta[d->dcol[i]] * 1e-6;
        if (disp > t) {
            t = disp;
            b = 0;
        }
    }
    if (t < 1e-6)
        t = 1e-6;
    if (branch)
        *branch = b;
    return t;
}

/* A cap on the alternation: on the shipped data most fits settle within 1-6
 * rounds, about one in nine cycles between assignments and stops here with
 * the best objective it saw. */
#define MAX_BRANCH_ITERS 40

/* The alternating fit (see the top of the file) on rows whose device !=
 * skip_dev, from the starting coefficients init; beta gets the best. */
static int fit_max(const design *d, st_kclass cls, int skip_dev, const double *init, double *beta,
                   st_error *err)
{
    size_t p = d->p;
    double cur[32], best_obj = INFINITY, prev_obj = INFINITY;
    memcpy(cur, init, p * sizeof *cur);
    memcpy(beta, init, p * sizeof *beta);
    double *Xm = malloc(d->n * p * sizeof *Xm), *rw = malloc(d->n * sizeof *rw);
    int *br = malloc(d->n * sizeof *br);
    if (!Xm || !br || !rw) {
        free(Xm);
        free(rw);
        free(br);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < d->n; i++)
        br[i] = -1;
    int rc = 0;
    for (int it = 0; it < MAX_BRANCH_ITERS; it++) {
        /* objective of cur, and the branch of every row */
        double obj = 0;
        int changed = 0;
        for (size_t i = 0; i < d->n; i++) {
            int b;
            double pr = predict_row(d, cls, cur, i, &b, 1);
            changed |= b != br[i];
            br[i] = b;
            if (d->dev[i] != skip_dev)
                obj += row_loss(d, cls, i, pr);
            rw[i] = d->w[i] * robust_w(cls, (pr - d->y[i]) / d->y[i]);
        }
        if (obj < best_obj) {
            best_obj = obj;
            memcpy(beta, cur, p * sizeof *beta);
        }
        /* the branches settled, and (robust fit) the weights with them */
        if (!changed && (huber_c[cls] <= 0 || fabs(prev_obj - obj) <= 1e-9 * obj))
            break;
        prev_obj = obj;
        /* the branch's features only */
        int seen[32] = {0};
        st_kfgroup grp[32];
        for (size_t j = 0; j < d->nf; j++)
            grp[j] = st_kclass_feature_group(cls, (int)j);
        for (size_t i = 0; i < d->n; i++) {
            const double *row = d->X + i * p;
            double *m = Xm + i * p;
            for (size_t j = 0; j < p; j++) {
                int keep;
                if ((int)j >= (int)d->nf)
                    keep = (br[i] == 0 && (int)j == d->dcol[i]) || (br[i] != 0 && (int)j == d->hcol[i]);
                else {
                    st_kfgroup g = grp[j];
                    keep = br[i] != 0 && (d->sum || g == ST_KF_FIXED || (g == ST_KF_COMPUTE && br[i] == 1) ||
                                          (g == ST_KF_MEMORY && br[i] == 2));
                }
                m[j] = keep ? row[j] : 0;
                if (keep && row[j] != 0 && d->dev[i] != skip_dev)
                    seen[j] = 1;
            }
        }
        design dm = *d;
        dm.X = Xm;
        dm.w = rw;
        double next[32];
        if ((rc = fit(&dm, cls, skip_dev, next, err)))
            break;
        /* a coefficient no row's branch uses keeps its value */
        for (size_t j = 0; j < p; j++)
            cur[j] = seen[j] ? next[j] : cur[j];
    }
    free(Xm);
    free(rw);
    free(br);
    return rc;
}

/* Starting coefficients of a class: c's, and each dispatch floor at the
 * fastest sample that carries it. */
static void start_beta(const design *d, const st_gpu_coef *c, st_kclass cls, double *beta)
{
    for (size_t j = 0; j < d->p; j++)
        beta[j] = j < d->nf ? c->cls[cls].beta[j] : 0;
    for (int k = 0; k < ST_DISP_COUNT; k++) {
        int col = d->disp_col[k];
        if (col < 0)
            continue;
        beta[col] = c->dispatch_s[k] > 0 ? c->dispatch_s[k] * 1e6 : d->disp_floor[col];
        beta[d->harn_col[k]] = c->harness_s[k] * 1e6;
    }
}

static void set_class(st_gpu_coef *c, st_kclass cls, const design *d, const double *beta)
{
    for (size_t j = 0; j < d->nf; j++)
        c->cls[cls].beta[j] = beta[j];
    for (int k = 0; k < ST_DISP_COUNT; k++)
        if (d->disp_col[k] >= 0) {
            c->dispatch_s[k] = beta[d->disp_col[k]] * 1e-6;
            c->harness_s[k] = beta[d->harn_col[k]] * 1e-6;
        }
    c->cls[cls].n_fit = (int)d->n;
}

/* Relative errors of predictions from beta on rows (dev == only, or all). */
static void score(const design *d, st_kclass cls, const double *beta, int only, double *sse,
                  double *sum_ape, double *sum_log2, size_t *cnt)
{
    for (size_t i = 0; i < d->n; i++) {
        if (only >= 0 && d->dev[i] != only)
            continue;
        double pr = predict_row(d, cls, beta, i, NULL, 0);
        double r = (pr - d->y[i]) / d->y[i];
        *sse += robust_sq(cls, r);
        *sum_ape += fabs(r);
        double l = log(pr / d->y[i]);
        *sum_log2 += l * l;
        (*cnt)++;
    }
}

/* Round to 6 significant digits so the written table does not depend on the
 * last bits of the BLAS in use. */
static double round6(double v)
{
    if (v == 0 || !isfinite(v))
        return v;
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    return strtod(buf, NULL);
}

static int fit_all(const st_calib_data *data, st_gpu_coef *c, int use_named, double *obj,
                   FILE *report, int final, unsigned only, st_error *err)
{
    st_gpu_coef base = *c;
    double total = 0;
    for (int k = 0; k < ST_KC_COUNT; k++) {
        st_kclass cls = (st_kclass)k;
        if (only && !(only & (1u << k)))
            continue;
        design d;
        /* row kernels' 'stream' feature prices their traffic with the
         * elementwise coefficients: those just fitted (the class comes
         * first), as prediction will use them */
        int rc = build(data, cls == ST_KC_NORM || cls == ST_KC_SOFTMAX ? c : &base, cls, use_named, &d, err);
        if (rc)
            return rc;
        if (d.n == 0) {
            if (report && final)
                fprintf(report, "  %-12s no samples: keeps its prior coefficients\n", st_kclass_name(cls));
            design_free(&d);
            continue;
        }
        /* GEMMs: both overlap modes, the lower weighted error wins (a small
         * GEMM loads its first tiles before its first multiply, so its
         * sides may add); streaming vector kernels overlap (roofline) */
        double beta[32], b0[32], bs[32], obj_mode[2] = {0, INFINITY};
        int gemm = st_kclass_feature(cls, "cta") >= 0;
        start_beta(&d, &base, cls, b0);
        for (int mode = 0; mode < (gemm ? 2 : 1); mode++) {
            d.sum = mode;
            if ((rc = fit_max(&d, cls, -1, b0, mode ? bs : beta, err))) {
                design_free(&d);
                return rc;
            }
            obj_mode[mode] = 0;
            for (size_t i = 0; i < d.n; i++) {
                double pr = predict_row(&d, cls, mode ? bs : beta, i, NULL, 0);
                obj_mode[mode] += row_loss(&d, cls, i, pr);
            }
        }
        d.sum = obj_mode[1] < obj_mode[0];
        if (d.sum)
            memcpy(beta, bs, sizeof beta);
        c->cls[cls].sum = d.sum;
        for (size_t j = 0; j < d.p; j++)
            beta[j] = round6(beta[j]);
        int fa = cls == ST_KC_NORM ? st_kclass_feature(cls, "alu") : -1;
        if (fa >= 0 && beta[fa] == 0) {
            double b1[32], s0 = 0, s1 = 0, x0 = 0, x1 = 0, y0 = 0, y1 = 0;
            size_t n0 = 0, n1 = 0;
            memcpy(b1, beta, sizeof b1);
            b1[fa] = PRIOR_NORM_ALU;
            score(&d, cls, beta, -1, &s0, &x0, &y0, &n0);
            score(&d, cls, b1, -1, &s1, &x1, &y1, &n1);
            if (fabs(s1 - s0) <= 1e-12 * (s0 > 0 ? s0 : 1))
                beta[fa] = PRIOR_NORM_ALU;
        }
        set_class(c, cls, &d, beta);
        double sse = 0, sape = 0, sl2 = 0;
        size_t cnt = 0;
        score(&d, cls, beta, -1, &sse, &sape, &sl2, &cnt);
        total += sse;
        if (final) {
            /* spread: leave-one-device-out residuals where there are several
             * devices (what an unmeasured GPU sees), else in-sample */
            int devs[64], nd = 0;
            for (size_t i = 0; i < d.n; i++) {
                int f = 0;
                for (int j = 0; j < nd; j++)
                    f |= devs[j] == d.dev[i];
                if (!f && nd < 64)
                    devs[nd++] = d.dev[i];
            }
            double lsse = 0, lape = 0, ll2 = 0;
            size_t lcnt = 0;
            if (nd >= 2) {
                for (int j = 0; j < nd; j++) {
                    double b2[32];
                    if (fit_max(&d, cls, devs[j], beta, b2, err) == 0)
                        score(&d, cls, b2, devs[j], &lsse, &lape, &ll2, &lcnt);
                }
            }
            double sigma = lcnt ? sqrt(ll2 / (double)lcnt) : sqrt(sl2 / (double)cnt);
            c->cls[cls].sigma = round6(sigma);
            if (report) {
                fprintf(report, "  %-12s n=%-6zu devices=%d  fit MAPE %.1f%%", st_kclass_name(cls), cnt, nd,
                        100 * sape / (double)cnt);
                if (lcnt)
                    fprintf(report, "  leave-one-device-out MAPE %.1f%%", 100 * lape / (double)lcnt);
                fprintf(report, "  sigma %.3f\n    beta:", c->cls[cls].sigma);
                const char *const *names;
                int nf = st_kclass_features(cls, &names);
                for (int j = 0; j < nf; j++)
                    fprintf(report, " %s=%.4g", names[j], beta[j]);
                fprintf(report, "\n");
            }
        }
        design_free(&d);
    }
    *obj = total;
    return 0;
}

/* The objective a grid point is scored by: *obj for coefficients c, and
 * *n the samples it covers (0: nothing depends on the pair). */
typedef int (*grid_objective)(const st_calib_data *data, st_gpu_coef *c, unsigned only, double *obj,
                              size_t *n, st_error *err);

/* fit_all's weighted loss after refitting the classes in `only` */
static int refit_objective(const st_calib_data *data, st_gpu_coef *c, unsigned only, double *obj, size_t *n,
                           st_error *err)
{
    *n = data->n;
    return fit_all(data, c, 1, obj, NULL, 0, only, err);
}

/* Threads the searches below evaluate their points on (st_calibrate's
 * argument; one calibration at a time, as the row picks above). */
static int fit_threads = 1;

/* A search's points, evaluated on fit_threads threads: point i is the
 * coefficients `base` with set(ctx, i, ...) applied, scored by f. Each
 * point's objective is computed alone, from the same inputs, whichever
 * thread takes it, and the caller compares them in index order: the
 * result is the same bit for bit on any number of threads. */
typedef struct points {
    const st_calib_data *data;
    const st_gpu_coef *base;
    void (*set)(const void *ctx, size_t i, st_gpu_coef *t);
    const void *ctx;
    grid_objective f;
    unsigned only;
    size_t count;
    double *obj;
    size_t *n;
    int *rc;
    st_error *err;
    size_t next; /* the next point to take (mu) */
    pthread_mutex_t mu;
} points;

static void *points_worker(void *arg)
{
    points *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->count)
            return NULL;
        st_gpu_coef t = *p->base;
        p->set(p->ctx, i, &t);
        st_error_clear(&p->err[i]);
        p->rc[i] = p->f(p->data, &t, p->only, &p->obj[i], &p->n[i], &p->err[i]);
    }
}

static void points_free(points *p)
{
    free(p->obj), free(p->n), free(p->rc), free(p->err);
    p->obj = NULL, p->n = NULL, p->rc = NULL, p->err = NULL;
}

/* Evaluate the points; obj, n, rc and err get one entry each (points_free
 * releases them; on an error there are none). A thread
 * that cannot start leaves its share to the others (the caller's thread
 * always takes part). */
static int eval_points(points *p, st_error *err)
{
    p->obj = malloc((p->count ? p->count : 1) * sizeof *p->obj);
    p->n = malloc((p->count ? p->count : 1) * sizeof *p->n);
    p->rc = malloc((p->count ? p->count : 1) * sizeof *p->rc);
    p->err = malloc((p->count ? p->count : 1) * sizeof *p->err);
    if (!p->obj || !p->n || !p->rc || !p->err) {
        points_free(p);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    p->next = 0;
    pthread_mutex_init(&p->mu, NULL);
    pthread_t tid[ST_CALIB_MAX_THREADS];
    int extra = fit_threads - 1, started = 0;
    if ((size_t)extra > p->count)
        extra = p->count ? (int)p->count - 1 : 0;
    for (int t = 0; t < extra; t++)
        if (pthread_create(&tid[started], NULL, points_worker, p) == 0)
            started++;
    points_worker(p);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&p->mu);
    return 0;
}

/* A grid search over two coefficients of c (fields at byte offsets fa and
 * fb) by objective f; a first value of 0 means "off" and is tried once,
 * with the second coefficient 0. vb NULL: one coefficient (fa) alone.
 * Keeps the best pair (the first of equals, in the order a then b); *n
 * gets the samples the objective covers (0 at the first point: nothing
 * depends on the pair, c is left as it was). The first point (in that
 * order) that fails is the error. */
typedef struct grid_spec {
    size_t fa, fb;
    const double *va, *vb;
    size_t *ia, *ib; /* point -> indices into va, vb */
} grid_spec;

static void grid_set(const void *ctx, size_t i, st_gpu_coef *t)
{
    const grid_spec *g = ctx;
    double a = g->va[g->ia[i]];
    *(double *)((char *)t + g->fa) = a;
    if (g->vb)
        *(double *)((char *)t + g->fb) = a == 0 ? 0 : g->vb[g->ib[i]];
}

static int grid2(const st_calib_data *data, st_gpu_coef *c, size_t fa, const double *va, size_t na, size_t fb,
                 const double *vb, size_t nb, grid_objective f, unsigned only, size_t *n, st_error *err)
{
    *n = 0;
    if (!vb)
        nb = 1;
    size_t cap = na * nb > 0 ? na * nb : 1;
    grid_spec g = {fa, fb, va, vb, malloc(cap * sizeof(size_t)), malloc(cap * sizeof(size_t))};
    if (!g.ia || !g.ib) {
        free(g.ia), free(g.ib);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    size_t count = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            if (va[i] == 0 && j > 0)
                continue;
            g.ia[count] = i, g.ib[count] = j, count++;
        }
    points p = {.data = data, .base = c, .set = grid_set, .ctx = &g, .f = f, .only = only, .count = count};
    int rc = eval_points(&p, err);
    double best = INFINITY, ba = 0, bb = 0;
    for (size_t k = 0; k < count && !rc; k++) {
        if (p.rc[k]) {
            *err = p.err[k];
            rc = p.rc[k];
            break;
        }
        *n = p.n[k];
        if (*n == 0)
            break;
        if (p.obj[k] < best * (1 - 1e-12)) {
            best = p.obj[k];
            ba = va[g.ia[k]];
            bb = ba == 0 || !vb ? 0 : vb[g.ib[k]];
        }
    }
    if (!rc && count && *n) {
        *(double *)((char *)c + fa) = ba;
        if (vb)
            *(double *)((char *)c + fb) = bb;
    }
    points_free(&p);
    free(g.ia), free(g.ib);
    return rc;
}

/* The rows a one-term grid fits on */
typedef int (*row_pick)(const st_calib_data *data, const st_calib_sample *s);
/* the VIDUR vector ops that carry a memory-instruction count (Sarathi's
 * one-element-per-thread kernels), from ST_VIDUR_MIN_TOKENS up */
static int pick_lsu(const st_calib_data *data, const st_calib_sample *s)
{
    (void)data;
    return s->k.mem_requests > 0 && s->tokens >= ST_VIDUR_MIN_TOKENS;
}
/* the VIDUR embedding (index_select's arithmetic), from ST_VIDUR_MIN_TOKENS up */
static int pick_index(const st_calib_data *data, const st_calib_sample *s)
{
    (void)data;
    return s->k.index_elems > 0 && s->tokens >= ST_VIDUR_MIN_TOKENS;
}
/* The router rows whose radix select sets their time: gatherTopK at eight
 * waves or more over the SMs (smaller ones sit at the harness's own floor,
 * which the softmax floor under-states: see data/measured/README.md) */
#define TOPK_FIT_MIN_WAVES 8
static int pick_topk(const st_calib_data *data, const st_calib_sample *s)
{
    if (s->k.op != ST_KOP_TOPK || s->k.router_fused || s->k.rows <= 0 || s->k.cols <= 0)
        return 0;
    return st_topk_waves(&data->gpus[s->gpu], (double)s->k.rows, (double)s->k.cols) >= TOPK_FIT_MIN_WAVES;
}

/* The rows a one-term grid fits and its objective: their squared log
 * error. The grids run on one thread, in order; which rows a pick takes
 * does not depend on the coefficients being searched, so use_rows lists
 * them once per grid, not once per grid point (the layer-norm grid has
 * over 7,000 points, each of which scanned every sample). */
static struct {
    size_t *idx, n;
} grid_rows;

static int use_rows(const st_calib_data *data, row_pick pick, st_error *err)
{
    free(grid_rows.idx);
    grid_rows.n = 0;
    grid_rows.idx = malloc((data->n ? data->n : 1) * sizeof *grid_rows.idx);
    if (!grid_rows.idx)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; i < data->n; i++)
        if (pick(data, &data->s[i]))
            grid_rows.idx[grid_rows.n++] = i;
    return 0;
}

static void drop_rows(void)
{
    free(grid_rows.idx);
    grid_rows.idx = NULL;
    grid_rows.n = 0;
}

static int rows_objective(const st_calib_data *data, st_gpu_coef *c, unsigned only, double *obj, size_t *n,
                          st_error *err)
{
    (void)only; /* no class is refitted */
    *obj = 0, *n = 0;
    for (size_t r = 0; r < grid_rows.n; r++) {
        size_t i = grid_rows.idx[r];
        st_kernel_est e;
        double pr;
        int rc = st_calib_predict(data, i, c, &e, &pr, err);
        if (rc)
            return rc;
        double l = log(pr / data->s[i].t_s);
        *obj += l * l;
        (*n)++;
    }
    return 0;
}

/* One cycles coefficient (a field of st_gpu_coef, `name` in the table) on a
 * grid of `count` steps of `step` from `step` up, reported as `label`'s SM
 * cycles per `per`; *nbest: the rows it was fitted on (0: none, the
 * coefficient left at 0) */
static int fit_cycles(const st_calib_data *data, st_gpu_coef *c, const char *name, size_t field, double step,
                      int count, row_pick rows, const char *label, const char *per, FILE *report, size_t *nbest,
                      st_error *err)
{
    double cyc[1000];
    if (count > (int)(sizeof cyc / sizeof cyc[0]))
        count = (int)(sizeof cyc / sizeof cyc[0]);
    for (int i = 0; i < count; i++)
        cyc[i] = step * (i + 1);
    int rc = use_rows(data, rows, err);
    if (rc)
        return rc;
    rc = grid2(data, c, field, cyc, (size_t)count, 0, NULL, 0, rows_objective, 0, nbest, err);
    if (rc)
        return rc;
    double *v = (double *)((char *)c + field);
    /* the grid's last step is no fit: the data want more cycles than any
     * such kernel takes (wrong latencies, or wrong rows); its first step
     * means the rows want no floor at all (none is bound by it, or all run
     * faster): left off, as with no rows */
    if (*nbest && *v >= cyc[count - 1])
        return st_error_set(err, ST_EINVAL, "%s fits to %g, the top of its range (%g to %g cycles) over %zu rows: "
                            "their latencies are not this kernel's (check the sweep's units and rows); nothing "
                            "written", name, *v, cyc[0], cyc[count - 1], *nbest);
    if (*nbest && *v <= cyc[0])
        *nbest = 0;
    *v = *nbest ? round6(*v) : 0;
    if (report) {
        if (*nbest)
            fprintf(report, "  %s: %.*f SM cycles per %s (%zu samples)\n", label, step >= 1 ? 0 : 2, *v, per,
                    *nbest);
        else
            fprintf(report, "  %s: no rows bound by it (--ops), %s left off\n", label, name);
    }
    return 0;
}

/* lsu_cycles and lsu_hit_share: a grid (half-cycle steps from 2 to 24 SM
 * cycles; hit share 0 to 1 in tenths) on the kernels that carry an
 * instruction count. Only their time depends on it and no class is
 * refitted: the classes' own samples are the framework's vectorised
 * kernels, which carry none. */
static int fit_lsu(const st_calib_data *data, st_gpu_coef *c, FILE *report, st_error *err)
{
    double cyc[45], share[11];
    for (int i = 0; i < 45; i++)
        cyc[i] = 2.0 + 0.5 * i;
    for (int j = 0; j < 11; j++)
        share[j] = 0.1 * j;
    size_t n;
    int rc = use_rows(data, pick_lsu, err);
    if (rc)
        return rc;
    rc = grid2(data, c, offsetof(st_gpu_coef, lsu_cycles), cyc, 45, offsetof(st_gpu_coef, lsu_hit_share), share,
                   11, rows_objective, 0, &n, err);
    if (rc)
        return rc;
    c->lsu_cycles = n ? c->lsu_cycles : 0;
    c->lsu_hit_share = n ? round6(c->lsu_hit_share) : 0;
    if (report) {
        if (n)
            fprintf(report, "  memory instructions: %.2f SM cycles each, an L1 hit %.1f of that (%zu samples)\n",
                    c->lsu_cycles, c->lsu_hit_share, n);
        else
            fprintf(report, "  memory instructions: no samples carry a count, lsu_cycles left off\n");
    }
    return 0;
}

/* index_cycles: a grid (0.05-cycle steps from 0.05 to 8) on the kernels
 * that carry index arithmetic; only their time depends on it. The count is
 * fitted, not derived: the divisions compile to a mix of integer,
 * conversion and reciprocal instructions whose issue and latency the
 * source does not fix. */
static int fit_index(const st_calib_data *data, st_gpu_coef *c, FILE *report, st_error *err)
{
    size_t nbest;
    return fit_cycles(data, c, "index_cycles", offsetof(st_gpu_coef, index_cycles), 0.05, 160, pick_index,
                      "index_select", "element", report, &nbest, err);
}

/* topk_pass_cycles: a grid (10-cycle steps from 10 to 8000) on the router
 * rows that carry enough waves (pick_topk); only their time depends on
 * it. Fitted, not derived: a pass is a chain of a load, four warp votes,
 * shared-memory atomics and three barriers whose latencies the source does
 * not fix. No such rows (no --ops): 0, left off the table. */
static int fit_topk(const st_calib_data *data, st_gpu_coef *c, FILE *report, st_error *err)
{
    size_t nbest;
    int rc = fit_cycles(data, c, "topk_pass_cycles", offsetof(st_gpu_coef, topk_pass_cycles), 10, 800,
                        pick_topk, "router top-k", "radix-select pass", report, &nbest, err);
    if (rc)
        return rc;
    size_t routers = 0;
    for (size_t i = 0; i < data->n; i++)
        routers += data->s[i].k.op == ST_KOP_TOPK;
    if (routers && !nbest)
        return st_error_set(err, ST_EINVAL, "--ops: none of the %zu router rows runs %d waves of gatherTopK blocks "
                            "or more, so none is bound by the radix select; add routers of more tokens (tens of "
                            "thousands) or leave --ops out", routers, TOPK_FIT_MIN_WAVES);
    return 0;
}

/* softmax_warp_cycles and softmax_reg_cycles: a grid each (0.01-cycle
 * steps from 0.01 to 4) on the forward softmax rows their kernel runs
 * (st_softmax_path): only those rows' time depends on it, and rows the
 * memory side bounds take part too, holding the floor under them. Fitted,
 * not derived: the scalar loads, the two block or warp reductions and the
 * two exponentials an element overlap in ways the source does not fix. No
 * rows of a kernel on a release that runs it (--ops with a sweep's
 * kernels-test/softmax.csv): 0, left off the table. */
int st_calib_softmax_fit_path(const st_calib_data *data, const st_calib_sample *s)
{
    if (s->k.op != ST_KOP_SOFTMAX || s->k.n_in > 1 || s->k.rows <= 0 || s->k.cols <= 0 ||
        st_torch_effective(s->k.torch_ver) < ST_TORCH_SOFTMAX_REG)
        return -1;
    st_softmax_kernel p = st_softmax_path(&data->gpus[s->gpu], &s->k);
    return p == ST_SMX_WARP || p == ST_SMX_REG ? (int)p : -1;
}

/* the kernel being fitted (the grid runs on one thread, in order) */
static st_softmax_kernel smx_fit_path;
static int pick_smx(const st_calib_data *data, const st_calib_sample *s)
{
    return st_calib_softmax_fit_path(data, s) == (int)smx_fit_path;
}

static int fit_softmax(const st_calib_data *data, st_gpu_coef *c, FILE *report, st_error *err)
{
    static const struct { st_softmax_kernel path; size_t field; const char *what, *name; } k[2] = {
        {ST_SMX_WARP, offsetof(st_gpu_coef, softmax_warp_cycles), "element", "softmax_warp_cycles"},
        {ST_SMX_REG, offsetof(st_gpu_coef, softmax_reg_cycles), "register slot", "softmax_reg_cycles"},
    };
    for (int i = 0; i < 2; i++) {
        size_t nbest;
        smx_fit_path = k[i].path;
        char label[64];
        snprintf(label, sizeof label, "softmax %s", st_softmax_kernel_name(k[i].path));
        int rc = fit_cycles(data, c, k[i].name, k[i].field, 0.01, 400, pick_smx, label, k[i].what, report,
                            &nbest, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* tinygemm_wavefront_cycles: a grid (0.01-cycle steps from 0.01 to 4) on
 * the weight-only INT4 rows tinygemm ran (st_calib_tinygemm_fit); only
 * their time depends on it, and rows the memory side or the harness bounds
 * (a token or a few) take part too, holding the floor under them. Fitted,
 * not derived: how many wavefronts an SM's L1 retires a cycle, with 64
 * warps' loads, dequantisation and MMAs in flight, the source does not
 * fix. No such rows (--ops without them): 0, left off the table. */
static int pick_tinygemm(const st_calib_data *data, const st_calib_sample *s)
{
    (void)data;
    return st_calib_tinygemm_fit(s);
}

static int fit_tinygemm(const st_calib_data *data, st_gpu_coef *c, FILE *report, st_error *err)
{
    size_t nbest;
    return fit_cycles(data, c, "tinygemm_wavefront_cycles", offsetof(st_gpu_coef, tinygemm_wavefront_cycles), 0.01,
                      400, pick_tinygemm, "tinygemm (weight-only INT4)", "L1 wavefront", report, &nbest, err);
}

/* gemm_epilogue_cycles: per architecture family with FP32 GEMM rows in an
 * --ops sweep (st_calib_epilogue_fit), a grid (quarter-cycle steps from
 * 0.25 to 100 SM cycles per 128-byte line) on those rows; only the
 * family's CUDA-core GEMMs depend on it, and rows whose main loop or DRAM
 * term dominates take part too, holding the floor under them. Fitted, not
 * derived: how fast an SM's four-warp tiles drain through shared memory
 * and the L1 to L2 the source does not fix. A family whose rows want no
 * floor (the grid's first step) gets no entry. */
/* The rows a per-family fit takes: fit_pick's, on the family fit_family
 * (the grids run on one thread) */
static row_pick fit_pick;
static const char *fit_family;
static int pick_in_family(const st_calib_data *data, const st_calib_sample *s)
{
    return fit_pick(data, s) && strcasecmp(st_gpu_family(&data->gpus[s->gpu]), fit_family) == 0;
}

/* The next architecture family among the rows `pick` takes that is not in
 * tried[] (then added to it), or NULL when none is left; more than cap
 * families: an error naming `what` */
static int next_family(const st_calib_data *data, row_pick pick, const char **tried, int *ntried, int cap,
                       const char *what, const char **fam, st_error *err)
{
    *fam = NULL;
    for (size_t i = 0; i < data->n; i++) {
        if (!pick(data, &data->s[i]))
            continue;
        const char *f = st_gpu_family(&data->gpus[data->s[i].gpu]);
        int seen = 0;
        for (int j = 0; j < *ntried && !seen; j++)
            seen = strcasecmp(tried[j], f) == 0;
        if (seen)
            continue;
        if (*ntried == cap)
            return st_error_set(err, ST_EINVAL, "--ops: %s rows of more than %d architecture families; the table "
                                "holds %d", what, cap, cap);
        tried[(*ntried)++] = f;
        *fam = f;
        return 0;
    }
    return 0;
}

static int fit_epilogue(const st_calib_data *data, st_gpu_coef *c, FILE *report, st_error *err)
{
    const char *tried[ST_ARCH_CYCLES_MAX], *fam;
    int ntried = 0, rc;
    c->n_epilogue = 0;
    /* each family once, whether or not its fit kept an entry */
    while (!(rc = next_family(data, st_calib_epilogue_fit, tried, &ntried, ST_ARCH_CYCLES_MAX, "FP32 GEMM", &fam,
                              err)) &&
           fam) {
        int k = c->n_epilogue++;
        snprintf(c->epilogue[k].arch, sizeof c->epilogue[k].arch, "%s", fam);
        c->epilogue[k].cycles = 0;
        fit_pick = st_calib_epilogue_fit;
        fit_family = c->epilogue[k].arch;
        char name[64], label[64];
        snprintf(name, sizeof name, "gemm_epilogue_cycles.%s", fam);
        snprintf(label, sizeof label, "GEMM epilogue (%s, FP32)", fam);
        size_t nbest;
        rc = fit_cycles(data, c, name,
                        offsetof(st_gpu_coef, epilogue) + (size_t)k * sizeof c->epilogue[0] +
                            offsetof(st_arch_cycles, cycles),
                        0.25, 400, pick_in_family, label, "128-byte output line", report, &nbest, err);
        if (rc)
            return rc;
        if (!nbest)
            c->n_epilogue--; /* no floor wanted: no entry */
    }
    return rc;
}

/* norm_iter_cycles and norm_row_cycles: per architecture family with
 * layer-norm rows in an --ops sweep (st_calib_norm_fit), a 2-D grid
 * on those rows, coarse then fine (iterations: 25-cycle steps from 25 to
 * 1,500; rows: 0 and 25-cycle steps to 3,000; then 1-cycle steps 25 either
 * side of the best pair); only their time depends on it, and rows the
 * memory side bounds take part too, holding the floor under them. Fitted,
 * not derived: a row's loads, Welford updates, block reduction and second
 * pass form a chain of latencies the source does not fix. A family whose
 * rows want no floor (the grid's first iteration step and no row cycles)
 * gets no entry. */
#define NORM_ITER_STEPS 60
#define NORM_ROW_STEPS 121
#define NORM_STEP 25.0
/* one pass of the norm grid over family k's entries */
static int norm_grid(const st_calib_data *data, st_gpu_coef *c, int k, const double *iter, size_t ni,
                     const double *row, size_t nr, size_t *n, st_error *err)
{
    return grid2(data, c,
                 offsetof(st_gpu_coef, norm_iter) + (size_t)k * sizeof c->norm_iter[0] + offsetof(st_arch_cycles, cycles),
                 iter, ni,
                 offsetof(st_gpu_coef, norm_row) + (size_t)k * sizeof c->norm_row[0] + offsetof(st_arch_cycles, cycles),
                 row, nr, rows_objective, 0, n, err);
}

static int fit_norm(const st_calib_data *data, st_gpu_coef *c, FILE *report, st_error *err)
{
    double iter[NORM_ITER_STEPS], row[NORM_ROW_STEPS];
    for (int i = 0; i < NORM_ITER_STEPS; i++)
        iter[i] = NORM_STEP * (i + 1);
    for (int j = 0; j < NORM_ROW_STEPS; j++)
        row[j] = NORM_STEP * j;
    const char *tried[ST_ARCH_CYCLES_MAX], *fam;
    int ntried = 0, rc;
    c->n_norm_row = c->n_norm_iter = 0;
    while (!(rc = next_family(data, st_calib_norm_fit, tried, &ntried, ST_ARCH_CYCLES_MAX, "layer-norm", &fam, err)) &&
           fam) {
        int k = c->n_norm_iter++;
        c->n_norm_row++;
        snprintf(c->norm_iter[k].arch, sizeof c->norm_iter[k].arch, "%s", fam);
        snprintf(c->norm_row[k].arch, sizeof c->norm_row[k].arch, "%s", fam);
        c->norm_iter[k].cycles = c->norm_row[k].cycles = 0;
        fit_pick = st_calib_norm_fit;
        fit_family = c->norm_iter[k].arch;
        if ((rc = use_rows(data, pick_in_family, err)))
            return rc;
        size_t n;
        if ((rc = norm_grid(data, c, k, iter, NORM_ITER_STEPS, row, NORM_ROW_STEPS, &n, err)))
            return rc;
        double *vi = &c->norm_iter[k].cycles, *vr = &c->norm_row[k].cycles;
        if (n && (*vi >= iter[NORM_ITER_STEPS - 1] || *vr >= row[NORM_ROW_STEPS - 1]))
            return st_error_set(err, ST_EINVAL, "norm cycles (%s) fit to %g per iteration and %g per row, the top "
                                "of their range (%g, %g) over %zu rows: their latencies are not this kernel's "
                                "(check the sweep's units and rows); nothing written", fam, *vi, *vr,
                                iter[NORM_ITER_STEPS - 1], row[NORM_ROW_STEPS - 1], n);
        int keep = n && !(*vi <= iter[0] && *vr <= 0);
        if (keep) {
            /* the fine pass, a step either side of the coarse pair */
            double fi[2 * (int)NORM_STEP + 1], fr[2 * (int)NORM_STEP + 1];
            size_t nfi = 0, nfr = 0;
            for (int d = -(int)NORM_STEP; d <= (int)NORM_STEP; d++) {
                if (*vi + d > 0)
                    fi[nfi++] = *vi + d;
                if (*vr + d >= 0)
                    fr[nfr++] = *vr + d;
            }
            if ((rc = norm_grid(data, c, k, fi, nfi, fr, nfr, &n, err)))
                return rc;
            *vi = round6(*vi);
            *vr = round6(*vr);
        }
        if (report) {
            if (keep)
                fprintf(report, "  layer norm (%s): %.0f SM cycles per row and %.0f per FP32 loop iteration "
                        "(%zu samples)\n", fam, *vr, *vi, n);
            else
                fprintf(report, "  layer norm (%s): no rows bound by the SM (--ops), no entry\n", fam);
        }
        if (!keep) {
            c->n_norm_iter--;
            c->n_norm_row--;
        }
    }
    return rc;
}

/* Tiles the SIMT GEMM library used per architecture, most used first: one
 * set for plain GEMMs (key: the family) and one for batched GEMMs (key:
 * family + ST_TILES_BATCHED), since the library picks from different
 * kernels for them. */
static void learn_tiles(const st_calib_data *data, st_gpu_coef *c, FILE *report)
{
    typedef struct { st_tile t; size_t n; } tc;
    const int nsets = (int)(sizeof c->tiles / sizeof c->tiles[0]);
    for (size_t gi = 0; gi < data->n_gpus; gi++)
        for (int batched = 0; batched < 2; batched++) {
            const char *fam = st_gpu_family(&data->gpus[gi]);
            char key[sizeof c->tiles[0].arch];
            snprintf(key, sizeof key, "%s%s", fam, batched ? ST_TILES_BATCHED : "");
            int have = 0;
            for (int i = 0; i < c->n_tile_sets; i++)
                have |= strcasecmp(c->tiles[i].arch, key) == 0;
            if (have || c->n_tile_sets >= nsets)
                continue;
            tc list[64];
            int nl = 0;
            size_t total = 0;
            for (size_t i = 0; i < data->n; i++) {
                const st_calib_sample *s = &data->s[i];
                /* the training launches' tiles: not an --ops sweep's
                 * GEMMs, which fit their epilogue rate alone */
                if (s->epilogue_fit || strcasecmp(st_gpu_family(&data->gpus[s->gpu]), fam) != 0 || s->named.m <= 0 ||
                    s->k.op == ST_KOP_CONV || s->k.dtype != ST_FP32 || (s->k.op == ST_KOP_BMM) != batched)
                    continue;
                total++;
                int f = -1;
                for (int j = 0; j < nl; j++)
                    if (list[j].t.m == s->named.m && list[j].t.n == s->named.n)
                        f = j;
                if (f < 0 && nl < 64) {
                    list[nl].t = s->named;
                    list[nl].n = 0;
                    f = nl++;
                }
                if (f >= 0)
                    list[f].n++;
            }
            if (!total)
                continue;
            /* sort by count, then size, for a stable order */
            for (int a = 1; a < nl; a++)
                for (int b = a; b > 0; b--) {
                    tc *x = &list[b - 1], *y = &list[b];
                    int swap = y->n > x->n || (y->n == x->n && (y->t.m * y->t.n > x->t.m * x->t.n ||
                                                               (y->t.m * y->t.n == x->t.m * x->t.n && y->t.m > x->t.m)));
                    if (swap) {
                        tc t = *x;
                        *x = *y;
                        *y = t;
                    }
                }
            int k = c->n_tile_sets++;
            snprintf(c->tiles[k].arch, sizeof c->tiles[k].arch, "%s", key);
            c->tiles[k].n = 0;
            for (int j = 0; j < nl && c->tiles[k].n < ST_GPU_MAX_TILES; j++)
                if (list[j].n * 200 >= total) /* used for at least 0.5% of the launches */
                    c->tiles[k].t[c->tiles[k].n++] = list[j].t;
            /* every cuBLAS SIMT generation ships a 128x128 sgemm (the test
             * data's sgemm_128x128x8 on Pascal, volta_/ampere_sgemm_128x128):
             * large problems whose operand panels no longer stay shared in
             * L2 go to it even where the training launches (at most 8192
             * rows) never did */
            int big = 0;
            for (int j = 0; j < c->tiles[k].n; j++)
                big |= c->tiles[k].t[j].m == 128 && c->tiles[k].t[j].n == 128;
            int add = !big && c->tiles[k].n < ST_GPU_MAX_TILES;
            if (add)
                c->tiles[k].t[c->tiles[k].n++] = (st_tile){128, 128};
            if (report) {
                fprintf(report, "  tiles %-12s from %zu named launches:", key, total);
                for (int j = 0; j < c->tiles[k].n - add; j++)
                    fprintf(report, " %dx%d", c->tiles[k].t[j].m, c->tiles[k].t[j].n);
                fprintf(report, "%s\n", add ? " (+ 128x128, shipped by every cuBLAS generation)" : "");
            }
        }
}

/* tc_energy_ratio for a sustained-clock reference (0: no power limit) */
static double tc_ratio(double eref)
{
    return eref > 0 ? TC_W_PER_TFLOP_12NM / eref : 0;
}

/* the sustained-clock search's points: W per TFLOP/s, and the step each is */
typedef struct eref_spec {
    double w[41];
    int step[41];
    size_t count;
} eref_spec;

static void eref_set(const void *ctx, size_t i, st_gpu_coef *t)
{
    const eref_spec *e = ctx;
    t->e_ref_w_per_tflop = e->w[i];
    t->tc_energy_ratio = tc_ratio(e->w[i]);
}

static int calibrate(const st_calib_data *data, st_gpu_coef *out, FILE *report, st_error *err)
{
    st_gpu_coef c;
    initial_coef(&c);
    learn_tiles(data, &c, report);
    /* the sustained-clock reference: a 1-D search (the rest is linear) over
     * 0 (no limit) and 4 .. 33.25 W per TFLOP/s in steps of 0.75, a span
     * from below every preset's TDP/peak (L4: 2.4) to above the largest
     * (P100: 26.9): every 4th step first, then the steps around the best */
    double best = INFINITY, best_e = 0;
    int best_i = 0;
    for (int pass = 0; pass < 2; pass++) {
        int lo = pass ? best_i - 3 : 0, hi = pass ? best_i + 3 : 40, step = pass ? 1 : 4;
        eref_spec e = {{0}, {0}, 0};
        for (int i = lo < 0 ? 0 : lo; i <= hi && i <= 40; i += step) {
            if (pass && i % 4 == 0)
                continue; /* seen in the first pass */
            e.step[e.count] = i;
            e.w[e.count++] = i == 0 ? 0 : 4.0 + 0.75 * (i - 1);
        }
        points p = {.data = data, .base = &c, .set = eref_set, .ctx = &e, .f = refit_objective, .count = e.count};
        int rc = eval_points(&p, err);
        for (size_t k = 0; k < e.count && !rc; k++) {
            if (p.rc[k]) {
                *err = p.err[k];
                rc = p.rc[k];
            } else if (p.obj[k] < best * (1 - 1e-12)) {
                best = p.obj[k];
                best_e = e.w[k];
                best_i = e.step[k];
            }
        }
        points_free(&p);
        if (rc)
            return rc;
    }
    c.e_ref_w_per_tflop = best_e;
    c.tc_energy_ratio = tc_ratio(best_e);
    if (report)
        fprintf(report, "  sustained-clock reference: %.2f W per FP32 TFLOP/s\n", best_e);
    double obj;
    size_t ngrid;
    int rc = fit_all(data, &c, 1, &obj, NULL, 0, 0, err); /* every class, for the search below */
    if (rc)
        return rc;
    /* the L2 hit curve of row re-reads: a grid over the share of L2 (a
     * fifth to all of it) and the sharpness (a gentle to a near-step fall);
     * the sharpness also sets how much of a whole tensor L2 keeps between
     * passes, so the elementwise class is refitted with the norm and
     * softmax classes, and its error weighs in the choice */
    static const double shares[] = {0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 1.0};
    static const double sharp[] = {2, 3, 4, 6, 8};
    if ((rc = grid2(data, &c, offsetof(st_gpu_coef, l2_reuse_share), shares, sizeof shares / sizeof shares[0],
                    offsetof(st_gpu_coef, l2_reuse_sharpness), sharp, sizeof sharp / sizeof sharp[0],
                    refit_objective, (1u << ST_KC_ELEMENTWISE) | (1u << ST_KC_NORM) | (1u << ST_KC_SOFTMAX),
                    &ngrid, err)))
        return rc;
    if (report)
        fprintf(report, "  L2 hits of row re-reads: share %.2f, sharpness %.0f\n", c.l2_reuse_share,
                c.l2_reuse_sharpness);
    /* the span of L2 over which a wave's GEMM operand panels stay shared: a
     * grid over the multiple of L2 (off, then 2 to 256 times) and the
     * sharpness; only the GEMM classes depend on it */
    static const double spans[] = {0, 2, 4, 8, 16, 32, 64, 128, 256};
    static const double gsharp[] = {1, 2, 4};
    if ((rc = grid2(data, &c, offsetof(st_gpu_coef, gemm_reuse_span), spans, sizeof spans / sizeof spans[0],
                    offsetof(st_gpu_coef, gemm_reuse_sharpness), gsharp, sizeof gsharp / sizeof gsharp[0],
                    refit_objective, (1u << ST_KC_GEMM_SIMT) | (1u << ST_KC_GEMM_TC) | (1u << ST_KC_CONV),
                    &ngrid, err)))
        return rc;
    if (report)
        fprintf(report, "  GEMM panel sharing: span %.0f x L2, sharpness %.0f\n", c.gemm_reuse_span,
                c.gemm_reuse_sharpness);
    /* the final fit, again on the tiles the kernel names give, from the
     * coefficients above: the coefficients describe a kernel given its tile,
     * so that a wrong tile guess on the training data does not bend them (a
     * final pass on the heuristic's tiles instead fits better in-sample,
     * sigma 0.331 vs 0.336, but worse for a device left out: 21.7% vs 21.2%
     * leave-one-device-out MAPE); the heuristic is scored separately below */
    rc = fit_all(data, &c, 1, &obj, report, 1, 0, err);
    if (rc)
        return rc;
    if ((rc = fit_lsu(data, &c, report, err)))
        return rc;
    if ((rc = fit_index(data, &c, report, err)))
        return rc;
    /* the softmax cycles first: the eager router's own softmax takes them */
    if ((rc = fit_softmax(data, &c, report, err)))
        return rc;
    if ((rc = fit_topk(data, &c, report, err)))
        return rc;
    if ((rc = fit_tinygemm(data, &c, report, err)))
        return rc;
    if ((rc = fit_epilogue(data, &c, report, err)))
        return rc;
    if ((rc = fit_norm(data, &c, report, err)))
        return rc;
    /* how often the heuristic picks the library's tile */
    size_t agree = 0, named = 0;
    for (size_t i = 0; i < data->n; i++) {
        const st_calib_sample *s = &data->s[i];
        /* the training launches (an --ops sweep's GEMMs fit their epilogue rate alone) */
        if (s->named.m <= 0 || s->k.op == ST_KOP_CONV || s->epilogue_fit)
            continue;
        st_kernel_est e;
        if (st_kernel_estimate(&data->gpus[s->gpu], &c, &s->k, NULL, 0, &e, err))
            continue;
        named++;
        agree += e.tile.m == s->named.m && e.tile.n == s->named.n;
    }
    if (report && named)
        fprintf(report, "  tile choice agrees with the library on %.1f%% of %zu named GEMM launches\n",
                100.0 * agree / named, named);
    *out = c;
    return 0;
}

int st_calibrate(const st_calib_data *data, int threads, st_gpu_coef *out, FILE *report, st_error *err)
{
    if (threads < 1 || threads > ST_CALIB_MAX_THREADS)
        return st_error_set(err, ST_EINVAL, "calibrate: %d threads; expected 1 to %d", threads,
                            ST_CALIB_MAX_THREADS);
    fit_threads = threads;
    int rc = calibrate(data, out, report, err);
    drop_rows();
    return rc;
}
