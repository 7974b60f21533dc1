/* Validation: kernels-test per device x op class, VIDUR operator profiles, and
 * (validate_models.c) NeuSight whole-model labels. */
#include "config.h"
#include "calib/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *st_val_op_class(const char *op)
{
    static const char *const ew[] = {"add", "addu", "mul", "mulu", "div", "divu", "pow", "powu",
                                     "gelu", "relu", "tanh"};
    for (size_t i = 0; i < sizeof ew / sizeof ew[0]; i++)
        if (strcmp(op, ew[i]) == 0)
            return "elementwise";
    return op;
}

typedef struct group {
    st_val_row row;
    st_apes a;
} group;

typedef struct groups {
    group *g;
    size_t n, cap;
} groups;

static int add_to(groups *gs, const char *dev, const char *preset, const char *op, int tp, double pred,
                  double meas)
{
    group *g = NULL;
    for (size_t i = 0; i < gs->n; i++)
        if (strcmp(gs->g[i].row.device, dev) == 0 && strcmp(gs->g[i].row.op, op) == 0 &&
            gs->g[i].row.tp == tp) {
            g = &gs->g[i];
            break;
        }
    if (!g) {
        if (gs->n == gs->cap) {
            size_t nc = gs->cap ? 2 * gs->cap : 16;
            group *p = realloc(gs->g, nc * sizeof *p);
            if (!p)
                return ST_ENOMEM;
            gs->g = p;
            gs->cap = nc;
        }
        g = &gs->g[gs->n++];
        memset(g, 0, sizeof *g);
        snprintf(g->row.device, sizeof g->row.device, "%s", dev);
        snprintf(g->row.preset, sizeof g->row.preset, "%s", preset);
        snprintf(g->row.op, sizeof g->row.op, "%s", op);
        g->row.tp = tp;
    }
    return st_apes_push(&g->a, pred, meas);
}

static int row_cmp(const void *x, const void *y)
{
    const st_val_row *a = x, *b = y;
    int c = strcmp(a->device, b->device);
    if (!c)
        c = strcmp(a->op, b->op);
    if (!c)
        c = a->tp - b->tp;
    return c;
}

/* Summaries out of the groups, sorted; frees the groups. */
static int finish(groups *gs, st_val_row **out, size_t *n)
{
    *out = calloc(gs->n ? gs->n : 1, sizeof **out);
    if (!*out)
        return ST_ENOMEM;
    for (size_t i = 0; i < gs->n; i++) {
        (*out)[i] = gs->g[i].row;
        st_apes_summary(&gs->g[i].a, &(*out)[i].s);
        st_apes_free(&gs->g[i].a);
    }
    *n = gs->n;
    qsort(*out, *n, sizeof **out, row_cmp);
    free(gs->g);
    memset(gs, 0, sizeof *gs);
    return 0;
}

static int sample_cmp(const void *x, const void *y)
{
    return memcmp(x, y, sizeof(st_calib_sample));
}

void st_val_result_free(st_val_result *r)
{
    free(r->rows);
    free(r->dev_rows);
    free(r->model_dev_rows);
    free(r->models);
    memset(r, 0, sizeof *r);
}

/* Predict every sample of d (VIDUR: only those with >= min_tokens tokens)
 * and summarise per device x op class (x TP degree for VIDUR) and per
 * device. Frees d. */
static int score(st_calib_data *d, const st_gpu_coef *c, long long min_tokens, FILE *samples,
                 st_val_result *out, st_error *err)
{
    if (samples)
        fprintf(samples, "device,preset,op,tp,b,m,n,k,rows,cols,tile,split_k,bound,measured_s,"
                         "predicted_s,ape_pct,lib_tile,dtype,heads,kv_heads,q_len,kv_len,head_dim,causal,"
                         "lib_split,predicted_lib_s\n");
    groups per = {0}, dev = {0};
    int rc = 0;
    for (size_t i = 0; i < d->n && !rc; i++) {
        const st_calib_sample *s = &d->s[i];
        if (s->tokens < min_tokens)
            continue;
        st_kernel_est e;
        double pred;
        if ((rc = st_calib_predict(d, i, c, &e, &pred, err)))
            break;
        const char *dn = d->dev_names[s->gpu], *pn = d->gpus[s->gpu].id;
        const char *op = s->tp > 0 ? s->op : st_val_op_class(s->op);
        char opd[48];
        if (s->has_dispatch && s->k.dtype != ST_FP32) { /* timed op by op (strata's sweeps): a class per datatype */
            snprintf(opd, sizeof opd, "%s-%s", op, st_dtype_name(s->k.dtype));
            op = opd;
        }
        /* the same kernel on the library's own tile and split (empty where
         * the kernel names none) */
        char lib[64] = ",";
        if (samples) {
            st_kernel_est ne;
            double npred;
            /* a tile the model cannot run (an error of its own) leaves the
             * columns empty: the row's main prediction stands */
            st_error nerr = {0};
            if (st_calib_predict_named(d, i, c, &ne, &npred, &nerr) == 0)
                snprintf(lib, sizeof lib, "%d,%.9g", ne.split_k, npred);
        }
        if (samples)
            fprintf(samples, "\"%s\",%s,%s,%d,%lld,%lld,%lld,%lld,%lld,%lld,%dx%d,%d,%s,%.9g,%.9g,%.3f,%dx%d,"
                             "%s,%lld,%lld,%lld,%lld,%lld,%d,%s\n",
                    dn, pn, s->op, s->tp, s->k.b, s->k.m, s->k.n, s->k.k, s->k.rows, s->k.cols,
                    e.tile.m, e.tile.n, e.split_k, e.bound ? e.bound : "", s->t_s, pred,
                    100.0 * fabs(pred - s->t_s) / s->t_s, s->named.m, s->named.n, st_dtype_name(s->k.dtype),
                    s->k.heads, s->k.kv_heads, s->k.q_len, s->k.kv_len, s->k.head_dim, s->k.causal, lib);
        if (add_to(&per, dn, pn, op, s->tp, pred, s->t_s) || add_to(&dev, dn, pn, "all", 0, pred, s->t_s))
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
    }
    out->skipped = d->skipped_unknown_device;
    out->skipped_dtype = d->skipped_dtype;
    st_calib_data_free(d);
    if (!rc && (finish(&per, &out->rows, &out->n_rows) || finish(&dev, &out->dev_rows, &out->n_dev_rows)))
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    free(per.g);
    free(dev.g);
    return rc;
}

int st_validate_neusight(const char *dir, const char *models, const st_gpu_coef *c, FILE *samples,
                         st_val_result *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    char kdir[700];
    snprintf(kdir, sizeof kdir, "%s/kernels-test", dir);
    st_calib_data d = {0};
    char apath[720];
    snprintf(apath, sizeof apath, "%s/attention.csv", dir);
    char opath[720];
    snprintf(opath, sizeof opath, "%s/ops.csv", dir);
    /* a folder of strata's own op or attention rows alone (data/measured/
     * h200/floors) has no kernels-test/; one with neither is a wrong --data */
    int rc = 0;
    if (access(kdir, F_OK) == 0)
        rc = st_calib_add_neusight(&d, kdir, err);
    else if (access(opath, F_OK) != 0 && access(apath, F_OK) != 0)
        rc = st_error_set(err, ST_ENOTFOUND, "%s: no kernels-test/, ops.csv or attention.csv there; give a folder "
                          "laid out like ../shared/data/neusight, or one of strata's own sweeps "
                          "(data/measured/h100, data/measured/h200)", dir);
    if (rc) {
        st_calib_data_free(&d);
        return rc;
    }
    /* kernels-test/vec.csv repeats the rows of elem.csv, ln.csv and softmax.csv:
     * count each measurement once */
    if (d.n > 1) /* an empty kernels-test/ has no array to sort (qsort(NULL) is undefined) */
        qsort(d.s, d.n, sizeof *d.s, sample_cmp);
    size_t u = 0;
    for (size_t i = 0; i < d.n; i++)
        if (u == 0 || memcmp(&d.s[u - 1], &d.s[i], sizeof d.s[i]) != 0)
            d.s[u++] = d.s[i];
    d.n = u;
    /* the attention sweep beside it (strata's own measurements) */
    size_t n_kt = d.n;
    int torch_ver = 0;
    if ((rc = st_calib_harness_torch(dir, &torch_ver, err)) || (rc = st_calib_add_attention(&d, apath, err)) ||
        (rc = st_calib_add_ops(&d, opath, torch_ver, err)) ||
        (rc = st_calib_apply_harness(dir, &d, 0, &torch_ver, err))) {
        st_calib_data_free(&d);
        return rc;
    }
    /* the kernel sweep ran on the folder's release (its softmax kernels
     * follow it: st_softmax_path) */
    for (size_t i = 0; i < n_kt; i++)
        if (!d.s[i].k.torch_ver)
            d.s[i].k.torch_ver = torch_ver;
    rc = score(&d, c, 0, samples, out, err);
    if (!rc)
        rc = st_validate_models(dir, models, c, torch_ver, out, err);
    /* a folder that scores nothing is a mistake (a wrong --data, rows only
     * on devices without a preset), not a perfect score */
    if (!rc && out->n_rows == 0 && out->n_models == 0)
        rc = st_error_set(err, ST_ENOTFOUND, "nothing to score in %s: no kernel rows in kernels-test/*.csv%s%s and "
                          "no whole-model labels in labels/*/*.json%s; give the folder laid out like "
                          "../shared/data/neusight", dir,
                          out->skipped ? " on a GPU strata has a preset for (the rows name other devices)" : "",
                          out->skipped_dtype ? " in a datatype their GPU runs (the rows' Dtype has no rate there)" : "",
                          out->skipped_labels ? " with their model configs (--models DIR)" : "");
    if (rc)
        st_val_result_free(out);
    return rc;
}

int st_validate_vidur(const char *dir, const st_gpu_coef *c, long long min_tokens, FILE *samples,
                      st_val_result *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    st_calib_data d = {0};
    int rc = st_calib_add_vidur(&d, dir, NULL, err);
    if (rc)
        st_calib_data_free(&d);
    else
        rc = score(&d, c, min_tokens, samples, out, err);
    if (rc)
        st_val_result_free(out);
    return rc;
}
