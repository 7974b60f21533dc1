/* The edge model against reference latencies: load, predict, fit (see
 * calib/edge_fit.h and gpu/edge.h). */
#include "config.h"
#include "calib/edge_fit.h"
#include "compose/compose.h"
#include "io/io.h"
#include "io/measured.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_edge_refs_free(st_edge_refs *r)
{
    for (size_t i = 0; i < r->n; i++)
        st_oplist_free(&r->row[i].ops);
    free(r->row);
    memset(r, 0, sizeof *r);
}

static int prepare(st_edge_ref *r, const char *path, int line, const int *col, st_error *err)
{
    st_error e;
    if (st_load_edge(r->preset, &r->edge, &e))
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: preset '%s': %s", path, line, col[2], r->preset, e.msg);
    st_model m;
    if (st_load_model(r->workload, &m, &e))
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: workload '%s': %s", path, line, col[1], r->workload, e.msg);
    st_gen_opts o;
    st_gen_opts_default(&o, &m);
    o.phase = ST_PHASE_PREFILL;
    o.batch = 1;
    o.dtype = r->dtype;
    int rc = st_model_ops(&m, &o, &r->ops, &e);
    st_model_free(&m);
    if (rc)
        return st_error_set(err, rc, "%s:%d:%d: workload '%s': %s", path, line, col[1], r->workload, e.msg);
    /* what the edge model would refuse, found now and placed */
    if (!(r->edge.peak[r->dtype].dense > 0))
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: %s has no %s throughput; give a dtype it runs (fp32%s)",
                            path, line, col[3], r->edge.id, st_dtype_name(r->dtype),
                            r->edge.peak[ST_FP16].dense > 0 ? " or fp16" : "");
    st_edge_coef one;
    memset(&one, 0, sizeof one);
    one.cpu_efficiency = one.cpu_dw_efficiency = one.gpu_efficiency = 1;
    for (size_t i = 0; i < r->ops.n; i++) {
        st_edge_est est;
        if (st_edge_folds(&r->ops, i))
            continue;
        if (st_edge_op_time(&r->edge, &one, 1, &r->ops.ops[i], &est, &e)) {
            int preset_side = strstr(e.msg, r->edge.id) == e.msg;
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: %s", path, line, preset_side ? col[2] : col[1], e.msg);
        }
    }
    return 0;
}

int st_edge_refs_load(const char *path, st_edge_refs *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    st_edge_ref_row *rows;
    size_t n;
    int rc = st_read_edge_refs(path, &rows, &n, err);
    if (rc)
        return rc;
    out->row = calloc(n, sizeof *out->row);
    if (!out->row) {
        free(rows);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    out->cap = n;
    for (size_t i = 0; i < n && !rc; i++) {
        st_edge_ref *r = &out->row[i];
        const st_edge_ref_row *w = &rows[i];
        snprintf(r->model, sizeof r->model, "%s", w->model);
        snprintf(r->workload, sizeof r->workload, "%s", w->workload);
        snprintf(r->preset, sizeof r->preset, "%s", w->preset);
        r->dtype = w->dtype;
        r->ref_s = w->ref_s;
        r->fit = w->fit;
        r->line = w->line;
        out->n++; /* counted before prepare, so that free releases its ops */
        rc = prepare(r, path, w->line, w->col, err);
    }
    free(rows);
    if (rc)
        st_edge_refs_free(out);
    return rc;
}

int st_edge_ref_predict(const st_edge_ref *r, const st_gpu_coef *gc, const st_edge_coef *ec, st_step *s,
                        st_error *err)
{
    st_gpu view;
    st_edge_gpu_view(&r->edge, &view);
    st_compose_opts co;
    st_compose_opts_default(&co);
    co.edge = &r->edge;
    co.edge_coef = ec;
    return st_compose(&view, gc, &r->ops, &co, s, err);
}

/* Sum of squared log errors over one class's fit rows; *n rows. */
static int objective(const st_edge_refs *R, st_edge_class cls, const st_gpu_coef *gc, const st_edge_coef *ec,
                     int fit_only, double *sse, int *n, st_step *s, st_error *err)
{
    *sse = 0;
    *n = 0;
    for (size_t i = 0; i < R->n; i++) {
        const st_edge_ref *r = &R->row[i];
        if (r->edge.cls != cls || (fit_only && !r->fit))
            continue;
        int rc = st_edge_ref_predict(r, gc, ec, s, err);
        if (rc)
            return rc;
        double d = log(s->total_s / r->ref_s);
        *sse += d * d;
        (*n)++;
    }
    return 0;
}

/* Minimise the class's fit error over two coefficients, a and b, each on a
 * geometric grid between its bounds (b may also be 0), then twice more on
 * a grid a tenth as wide around the best, kept inside the bounds:
 * deterministic, no derivatives. *at_bound names a coefficient whose best
 * value is on a bound of its range (the data want it beyond), *flat one
 * the fit rows do not determine (halving or doubling it changes the error
 * by less than 1e-9). */
static int fit2(const st_edge_refs *R, st_edge_class cls, const st_gpu_coef *gc, st_edge_coef *ec, double *a,
                double alo, double ahi, double *b, double blo, double bhi, int b_zero, int *at_bound, int *flat,
                st_step *s, st_error *err)
{
    const int N = 48;
    double best = INFINITY, ba = alo, bb = b_zero ? 0 : blo;
    const double LA0 = log(alo), LA1 = log(ahi), LB0 = log(blo), LB1 = log(bhi);
    double la0 = LA0, la1 = LA1, lb0 = LB0, lb1 = LB1;
    int rc;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i <= N; i++) {
            for (int j = b_zero && round == 0 ? -1 : 0; j <= N; j++) {
                *a = exp(la0 + (la1 - la0) * i / N);
                *b = j < 0 ? 0 : exp(lb0 + (lb1 - lb0) * j / N);
                double sse;
                int n;
                if ((rc = objective(R, cls, gc, ec, 1, &sse, &n, s, err)))
                    return rc;
                if (sse < best * (1 - 1e-12)) {
                    best = sse;
                    ba = *a;
                    bb = *b;
                }
            }
        }
        /* the next round: a tenth of the span in log space around the best,
         * clipped to the bounds */
        double wa = (la1 - la0) / 10, wb = (lb1 - lb0) / 10;
        la0 = fmax(LA0, log(ba) - wa / 2), la1 = fmin(LA1, log(ba) + wa / 2);
        if (bb > 0)
            lb0 = fmax(LB0, log(bb) - wb / 2), lb1 = fmin(LB1, log(bb) + wb / 2);
    }
    *at_bound = 0, *flat = 0;
    if (fabs(log(ba) - LA0) < 1e-9 || fabs(log(ba) - LA1) < 1e-9)
        *at_bound = 1;
    else if (bb > 0 && (fabs(log(bb) - LB0) < 1e-9 || fabs(log(bb) - LB1) < 1e-9))
        *at_bound = 2;
    for (int k = 0; k < 4 && !*at_bound && !*flat; k++) {
        *a = k == 0 ? ba / 2 : k == 1 ? ba * 2 : ba;
        *b = k < 2 ? bb : k == 2 ? bb / 2 : bb * 2;
        if (k >= 2 && bb == 0)
            break; /* b = 0 (no per-kernel cost) is a choice the grid made, not a flat direction */
        double sse;
        int n;
        if ((rc = objective(R, cls, gc, ec, 1, &sse, &n, s, err)))
            return rc;
        if (sse - best < 1e-9)
            *flat = k < 2 ? 1 : 2;
    }
    *a = ba;
    *b = bb;
    return 0;
}

/* Round to 4 significant digits: the table must not depend on the last
 * bits of the platform's libm. */
static double sig4(double x)
{
    if (x == 0)
        return 0;
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", x);
    return strtod(buf, NULL);
}

int st_edge_calibrate(const st_edge_refs *R, const st_gpu_coef *gc, const st_edge_coef *base, st_edge_coef *out,
                      FILE *report, st_error *err)
{
    memset(out, 0, sizeof *out);
    st_step *s = malloc(sizeof *s);
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    st_edge_coef c;
    if (base) {
        c = *base;
    } else {
        memset(&c, 0, sizeof c);
        c.cpu_efficiency = c.cpu_dw_efficiency = c.gpu_efficiency = 1;
    }
    int rc = 0, nfit[2] = {0, 0};
    for (size_t i = 0; i < R->n; i++)
        nfit[R->row[i].edge.cls] += R->row[i].fit;
    static const char *const cname[2] = {"mobile_cpu", "mobile_gpu"};
    static const char *const aname[2] = {"cpu_efficiency", "gpu_efficiency"};
    static const char *const bname[2] = {"cpu_depthwise_efficiency", "gpu_kernel_us"};
    static const char *const hint[2] = {"a depthwise-heavy network such as mobilenet-v2 beside a dense one such as vgg16",
                                        "a network of many small kernels such as mobilenet-v2 beside a dense one such as vgg16"};
    if (nfit[0] + nfit[1] == 0)
        rc = st_error_set(err, ST_EINVAL, "no reference row has the role fit, so there is nothing to fit; mark "
                                          "the rows to fit with role fit (the rest, test, score the table)");
    for (int k = 0; k < 2 && !rc; k++) {
        if (nfit[k] == 0 && !base) {
            rc = st_error_set(err, ST_EINVAL, "no fit rows for the %s class, and no current table to keep its "
                                              "coefficients from (calibration/edge.yaml did not load)", cname[k]);
            break;
        }
        if (nfit[k] == 0) {
            if (report)
                fprintf(report, "  %s: no fit rows; its coefficients are kept from the current table\n", cname[k]);
            continue;
        }
        if (nfit[k] < 2) {
            rc = st_error_set(err, ST_EINVAL, "%d fit row for the %s class: its two coefficients need two or more "
                                              "(%s)", nfit[k], cname[k], hint[k]);
            break;
        }
        int at_bound, flat;
        if (k == 0)
            rc = fit2(R, ST_EDGE_MOBILE_CPU, gc, &c, &c.cpu_efficiency, 0.01, 1, &c.cpu_dw_efficiency, 0.001, 1, 0,
                      &at_bound, &flat, s, err);
        else /* the per-kernel cost: 0, or 0.1 us .. 10 ms */
            rc = fit2(R, ST_EDGE_MOBILE_GPU, gc, &c, &c.gpu_efficiency, 0.001, 1, &c.gpu_kernel_s, 1e-7, 1e-2, 1,
                      &at_bound, &flat, s, err);
        if (!rc && at_bound)
            rc = st_error_set(err, ST_EINVAL,
                              "the %s fit puts %s at the end of its range (%s): no efficiency the model allows "
                              "gives the fit rows' latencies (an efficiency above 1 would mean faster than the "
                              "preset's peak); check the rows' presets, dtypes and threads (the model runs TFLite "
                              "on one CPU thread)",
                              cname[k], at_bound == 1 ? aname[k] : bname[k],
                              at_bound == 1 ? (k ? "0.001 to 1" : "0.01 to 1") : (k ? "0.1 us to 10 ms" : "0.001 to 1"));
        if (!rc && flat)
            rc = st_error_set(err, ST_EINVAL, "the %s fit rows do not determine %s (halving or doubling it changes "
                                              "nothing): add fit rows such as %s", cname[k],
                              flat == 1 ? aname[k] : bname[k], hint[k]);
    }
    if (!rc) {
        c.cpu_efficiency = sig4(c.cpu_efficiency);
        c.cpu_dw_efficiency = sig4(c.cpu_dw_efficiency);
        c.gpu_efficiency = sig4(c.gpu_efficiency);
        c.gpu_kernel_s = sig4(c.gpu_kernel_s * 1e6) * 1e-6;
        /* the spread: root-mean-square log error over every reference row
         * of the class, the held-out ones included (the fit rows alone are
         * matched nearly exactly by two coefficients) */
        for (int k = 0; k < 2 && !rc; k++) {
            if (!nfit[k])
                continue;
            double sse;
            int n;
            rc = objective(R, (st_edge_class)k, gc, &c, 0, &sse, &n, s, err);
            double sig = n ? sig4(sqrt(sse / n)) : 0;
            if (!rc && sig > 10)
                rc = st_error_set(err, ST_EINVAL, "the %s rows and the model disagree by a factor of e^%.1f on "
                                                  "average: check the rows' latencies (milliseconds) and presets",
                                  cname[k], sig);
            if (k)
                c.sigma_gpu = sig, c.n_fit_gpu = nfit[k];
            else
                c.sigma_cpu = sig, c.n_fit_cpu = nfit[k];
        }
    }
    if (!rc && report)
        fprintf(report,
                "  mobile CPU: GEMM-like %.4g of peak, depthwise %.4g (spread %.3g)\n"
                "  mobile GPU: %.4g of peak, %.4g us a kernel (spread %.3g)\n",
                c.cpu_efficiency, c.cpu_dw_efficiency, c.sigma_cpu, c.gpu_efficiency, c.gpu_kernel_s * 1e6,
                c.sigma_gpu);
    if (!rc)
        *out = c;
    free(s);
    return rc;
}
