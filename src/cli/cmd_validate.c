/* strata validate: accuracy against measured kernels, operators and models. */
#include "config.h"
#include "calib/calib.h"
#include "calib/edge_fit.h"
#include "calib/stats.h"
#include "calib/validate.h"
#include "cli/cli.h"
#include "cli/validate_vllm.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


#define COLL_MIN_BYTES 1048576.0

static void print_rows(const char *title, const st_val_row *r, size_t n)
{
    printf("%s\n  %-24s %-16s %-26s %3s %6s %7s %7s %7s %7s\n", title, "DEVICE", "PRESET", "OP", "TP", "N",
           "MAPE%", "MED%", "P90%", "MAX%");
    for (size_t i = 0; i < n; i++) {
        char tp[8] = "-";
        if (r[i].tp > 0)
            snprintf(tp, sizeof tp, "%d", r[i].tp);
        printf("  %-24s %-16s %-26s %3s %6zu %7.2f %7.2f %7.2f %7.2f\n", r[i].device, r[i].preset, r[i].op, tp,
               r[i].s.n, r[i].s.mape, r[i].s.median, r[i].s.p90, r[i].s.max);
    }
}

static void json_rows(st_json *j, const char *key, const st_val_row *r, size_t n)
{
    st_json_begin_array(j, key);
    for (size_t i = 0; i < n; i++) {
        st_json_begin_object(j, NULL);
        st_json_string(j, "device", r[i].device);
        st_json_string(j, "preset", r[i].preset);
        st_json_string(j, "op", r[i].op);
        if (r[i].tp > 0)
            st_json_int(j, "tp", r[i].tp);
        st_json_int(j, "n", (long long)r[i].s.n);
        st_json_number(j, "mape", r[i].s.mape);
        st_json_number(j, "median", r[i].s.median);
        st_json_number(j, "p90", r[i].s.p90);
        st_json_number(j, "max", r[i].s.max);
        st_json_end_object(j);
    }
    st_json_end_array(j);
}

static void print_models(const st_val_model *m, size_t n)
{
    printf("\nwhole models (measured end-to-end vs strata in ms, 90%% band; ERR%% = (predicted - measured) / "
           "measured)\n");
    printf("  %-22s %-11s %-5s %5s %5s %-6s %11s %11s %7s %11s %11s %3s\n", "DEVICE", "MODEL", "MODE", "SEQ",
           "BATCH", "FUSION", "MEASURED", "PREDICTED", "ERR%", "LO", "HI", "IN");
    for (size_t i = 0; i < n; i++) {
        const st_val_model *r = &m[i];
        int in = r->measured_ms >= r->lo_ms && r->measured_ms <= r->hi_ms;
        printf("  %-22s %-11s %-5s %5lld %5lld %-6s %11.2f %11.2f %7.2f %11.2f %11.2f %3s\n", r->device, r->model,
               r->mode, r->seq, r->batch, r->fusion ? "yes" : "no", r->measured_ms, r->predicted_ms,
               100 * (r->predicted_ms - r->measured_ms) / r->measured_ms, r->lo_ms, r->hi_ms, in ? "yes" : "no");
    }
}

/* A label's pass: measured (the label's split; an inference label's
 * whole time is its forward), profiled and predicted, in ms. 0 when the
 * label does not time that pass. */
static int pass_of(const st_val_model *r, int bwd, double *meas, double *prof, double *pred)
{
    int train = strcmp(r->mode, "train") == 0;
    if (bwd && !train)
        return 0;
    if (train && !r->has_split)
        return 0;
    *meas = train ? (bwd ? r->measured_bwd_ms : r->measured_fwd_ms) : r->measured_ms;
    *prof = r->has_profile ? (bwd ? r->profiled_bwd_ms : r->profiled_fwd_ms) : 0;
    *pred = bwd ? r->predicted_bwd_ms : r->predicted_fwd_ms;
    return *meas > 0;
}

/* Where a whole-model error comes from: each pass measured end to end, the
 * same pass as the label's own operator profile adds it up, and strata. */
static void print_passes(const st_val_model *m, size_t n)
{
    size_t rows = 0, with_prof = 0, agree = 0;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 2; b++) {
            double me, pr, pd;
            if (!m[i].fusion && pass_of(&m[i], b, &me, &pr, &pd)) {
                rows++;
                if (pr > 0) {
                    with_prof++;
                    agree += fabs(me / pr - 1) <= 0.10;
                }
            }
        }
    if (!rows)
        return;
    printf("\nwhole models by pass (ms): MEASURED end to end; PROFILED = the label's own operator profile\n"
           "(LABEL.csv, each operator timed alone: everything outside block 0 + num_layer x block 0);\n"
           "ERR%% = strata vs measured, PROF%% = strata vs profiled\n");
    printf("  %-22s %-11s %-5s %5s %5s %-4s %11s %11s %9s %11s %7s %7s\n", "DEVICE", "MODEL", "MODE", "SEQ",
           "BATCH", "PASS", "MEASURED", "PROFILED", "MEAS/PROF", "PREDICTED", "ERR%", "PROF%");
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 2; b++) {
            const st_val_model *r = &m[i];
            double me, pr, pd;
            if (r->fusion || !pass_of(r, b, &me, &pr, &pd))
                continue;
            printf("  %-22s %-11s %-5s %5lld %5lld %-4s %11.2f ", r->device, r->model, r->mode, r->seq, r->batch,
                   b ? "bwd" : "fwd", me);
            if (pr > 0)
                printf("%11.2f %9.2f ", pr, me / pr);
            else
                printf("%11s %9s ", "-", "-");
            printf("%11.2f %7.2f ", pd, 100 * (pd - me) / me);
            if (pr > 0)
                printf("%7.2f\n", 100 * (pd - pr) / pr);
            else
                printf("%7s\n", "-");
        }
    if (with_prof)
        printf("  %zu of %zu profiled passes measure within 10%% of their own operators added up%s\n", agree,
               with_prof, agree < with_prof ? "; the others\n  gain (or lose) time end to end that no operator "
               "shows when timed alone, which no kernel model sees" : "");
}

static void json_ms_or_null(st_json *j, const char *key, int have, double v)
{
    if (have)
        st_json_number(j, key, v);
    else
        st_json_null(j, key);
}

static int run_neusight(const char *dir, const char *models, int json, const st_gpu_coef *coef, FILE *samples)
{
    st_error err;
    st_val_result res;
    int rc = st_validate_neusight(dir, models, coef, samples, &res, &err);
    if (rc)
        return cli_fail(&err);
    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        json_rows(&j, "kernels", res.rows, res.n_rows);
        json_rows(&j, "devices", res.dev_rows, res.n_dev_rows);
        st_json_begin_array(&j, "models");
        for (size_t i = 0; i < res.n_models; i++) {
            const st_val_model *r = &res.models[i];
            st_json_begin_object(&j, NULL);
            st_json_string(&j, "device", r->device);
            st_json_string(&j, "preset", r->preset);
            st_json_string(&j, "model", r->model);
            st_json_string(&j, "mode", r->mode);
            st_json_int(&j, "seq", r->seq);
            st_json_int(&j, "batch", r->batch);
            st_json_bool(&j, "fusion", r->fusion);
            st_json_number(&j, "measured_ms", r->measured_ms);
            st_json_number(&j, "predicted_ms", r->predicted_ms);
            st_json_number(&j, "lo_ms", r->lo_ms);
            st_json_number(&j, "hi_ms", r->hi_ms);
            st_json_number(&j, "lo_uncorrelated_ms", r->lo_unc_ms);
            st_json_number(&j, "hi_uncorrelated_ms", r->hi_unc_ms);
            /* by pass: measured where the label splits it (an inference
             * label's forward is its whole time), strata's always */
            int train = strcmp(r->mode, "train") == 0;
            json_ms_or_null(&j, "measured_fwd_ms", train ? r->has_split : 1,
                            train ? r->measured_fwd_ms : r->measured_ms);
            json_ms_or_null(&j, "measured_bwd_ms", train ? r->has_split : 0, r->measured_bwd_ms);
            st_json_number(&j, "predicted_fwd_ms", r->predicted_fwd_ms);
            json_ms_or_null(&j, "predicted_bwd_ms", train, r->predicted_bwd_ms);
            json_ms_or_null(&j, "profiled_fwd_ms", r->has_profile, r->profiled_fwd_ms);
            json_ms_or_null(&j, "profiled_bwd_ms", r->has_profile && train, r->profiled_bwd_ms);
            if (r->has_profile)
                st_json_string(&j, "profile_block", r->profile_block);
            else
                st_json_null(&j, "profile_block");
            st_json_end_object(&j);
        }
        st_json_end_array(&j);
        json_rows(&j, "model_devices", res.model_dev_rows, res.n_model_dev_rows);
        /* rows not scored: a device no preset describes, a datatype its GPU has no rate for */
        st_json_int(&j, "skipped", (long long)res.skipped);
        st_json_int(&j, "skipped_dtype", (long long)res.skipped_dtype);
        st_json_string(&j, "coefficients", coef->source);
        /* where the scored labels' models came from (null: no label scored) */
        char mpath[720];
        snprintf(mpath, sizeof mpath, "%s/models", dir);
        if (res.n_models)
            st_json_string(&j, "model_configs", models && *models ? models : mpath);
        else
            st_json_null(&j, "model_configs");
        st_json_int(&j, "skipped_labels", (long long)res.skipped_labels);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        printf("coefficients: %s\n", coef->source);
        if (models && res.n_models)
            printf("model configs: %s\n", models);
        if (res.skipped_labels)
            printf("whole-model labels: %zu left out: %s/models is absent and so is the shared data's "
                   "neusight/models; name the model configs with --models DIR\n", res.skipped_labels, dir);
        print_rows("kernels (kernels-test/, per device x op class)", res.rows, res.n_rows);
        print_rows("\nkernels, all op classes per device", res.dev_rows, res.n_dev_rows);
        if (res.n_models) {
            print_models(res.models, res.n_models);
            print_rows("\nwhole models per device", res.model_dev_rows, res.n_model_dev_rows);
            size_t in = 0;
            for (size_t i = 0; i < res.n_models; i++)
                in += res.models[i].measured_ms >= res.models[i].lo_ms &&
                      res.models[i].measured_ms <= res.models[i].hi_ms;
            printf("  90%% band contains the measurement for %zu of %zu configurations (%.0f%%)\n", in,
                   res.n_models, 100.0 * in / res.n_models);
            print_passes(res.models, res.n_models);
        }
        if (res.skipped)
            printf("  (%zu rows skipped: device without a preset)\n", res.skipped);
        if (res.skipped_dtype)
            printf("  (%zu rows skipped: a datatype the device's preset has no rate for)\n", res.skipped_dtype);
    }
    st_val_result_free(&res);
    return 0;
}

/* Pooled MAPE over rows (held_out: only those not used to characterise). */
static double pooled(const st_val_coll *r, size_t n, int held_out, size_t *count)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!held_out || !r[i].characterised)
            sum += r[i].s.mape * r[i].s.n, k += r[i].s.n;
    *count = k;
    return k ? sum / k : 0;
}

static void json_coll(st_json *j, const st_val_coll *r, size_t n)
{
    size_t k;
    st_json_begin_array(j, "collectives");
    for (size_t i = 0; i < n; i++) {
        st_json_begin_object(j, NULL);
        st_json_string(j, "cluster", r[i].cluster);
        st_json_string(j, "preset", r[i].preset);
        st_json_string(j, "collective", st_coll_name(r[i].coll));
        st_json_int(j, "gpus", r[i].gpus);
        st_json_int(j, "per_node", r[i].per_node);
        st_json_bool(j, "characterised", r[i].characterised);
        st_json_int(j, "n", (long long)r[i].s.n);
        st_json_number(j, "mape", r[i].s.mape);
        st_json_number(j, "median", r[i].s.median);
        st_json_number(j, "p90", r[i].s.p90);
        st_json_number(j, "max", r[i].s.max);
        st_json_number(j, "floor_bytes", r[i].floor_bytes);
        st_json_number(j, "floor_measured_s", r[i].floor_meas_s);
        st_json_number(j, "floor_predicted_s", r[i].floor_pred_s);
        st_json_end_object(j);
    }
    st_json_end_array(j);
    st_json_begin_object(j, "collectives_summary");
    st_json_number(j, "min_bytes", COLL_MIN_BYTES);
    st_json_number(j, "mape", pooled(r, n, 0, &k));
    st_json_int(j, "n", (long long)k);
    st_json_number(j, "held_out_mape", pooled(r, n, 1, &k));
    st_json_int(j, "held_out_n", (long long)k);
    st_json_end_object(j);
}

static void print_coll(const st_val_coll *r, size_t n, size_t skipped)
{
    size_t k;
    printf("\nNCCL collectives, messages >= 1 MiB (per machine x collective x GPUs)\n");
    printf("  %-9s %-15s %-10s %4s %5s %5s %7s %7s %7s %7s  %-22s\n", "DATA", "PRESET", "COLL", "GPUS", "/NODE",
           "N", "MAPE%", "MED%", "P90%", "MAX%", "FLOOR (2 KiB) MEAS/PRED");
    for (size_t i = 0; i < n; i++)
        printf("  %-9s %-15s %-10s %4d %5d %5zu %7.2f %7.2f %7.2f %7.2f  %6.1f / %5.1f us%s\n", r[i].cluster,
               r[i].preset, st_coll_name(r[i].coll), r[i].gpus, r[i].per_node, r[i].s.n, r[i].s.mape,
               r[i].s.median, r[i].s.p90, r[i].s.max, r[i].floor_meas_s * 1e6, r[i].floor_pred_s * 1e6,
               !r[i].characterised ? ""
               : r[i].gpus == 2    ? "  (2 GPUs: characterised the preset)"
                                   : "  (characterised the node's scale-out)");
    double all = pooled(r, n, 0, &k);
    printf("  all rows: MAPE %.2f%% over %zu sizes;", all, k);
    all = pooled(r, n, 1, &k);
    printf(" held out (the rest): MAPE %.2f%% over %zu sizes\n", all, k);
    printf("  The floor: below ~1 MiB time stops falling with size; NCCL's base latency, one\n"
           "  link latency per algorithm step and the kernel launch dominate (see net.h).\n");
    if (skipped)
        printf("  (%zu network folders skipped: no preset describes those machines)\n", skipped);
}

static int run_vidur(const char *dir, int json, const st_gpu_coef *coef, long long min_tokens,
                     FILE *samples, FILE *coll_samples)
{
    st_error err;
    st_val_result res;
    int rc = st_validate_vidur(dir, coef, min_tokens, samples, &res, &err);
    if (rc)
        return cli_fail(&err);
    st_val_coll *coll = NULL;
    size_t n_coll = 0, skipped = 0;
    if (st_validate_collectives(dir, COLL_MIN_BYTES, coll_samples, &coll, &n_coll, &skipped, &err)) {
        st_val_result_free(&res);
        return cli_fail(&err);
    }
    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        json_rows(&j, "mlp", res.rows, res.n_rows);
        json_rows(&j, "devices", res.dev_rows, res.n_dev_rows);
        json_coll(&j, coll, n_coll);
        st_json_int(&j, "min_tokens", min_tokens);
        st_json_string(&j, "coefficients", coef->source);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        printf("coefficients: %s\n", coef->source);
        char t[160];
        snprintf(t, sizeof t, "VIDUR operator profiles, num_tokens >= %lld (per GPU x op x TP)", min_tokens);
        print_rows(t, res.rows, res.n_rows);
        if (!res.n_rows)
            printf("  (no profiled row has num_tokens >= %lld: lower --min-tokens)\n", min_tokens);
        print_rows("\nper GPU, all ops", res.dev_rows, res.n_dev_rows);
        if (n_coll)
            print_coll(coll, n_coll, skipped);
    }
    free(coll);
    st_val_result_free(&res);
    return 0;
}

/* strata validate edge: the edge model against its reference latencies */
static int run_edge(const char *path, const char *ecoefp, int json, const st_gpu_coef *coef)
{
    st_error err;
    char buf[600], ebuf[600];
    if (!(path = st_data_file(path, "calibration/edge-reference.csv", buf, sizeof buf, &err)) ||
        !(ecoefp = st_data_file(ecoefp, "calibration/edge.yaml", ebuf, sizeof ebuf, &err)))
        return cli_fail(&err);
    st_edge_coef ec;
    if (st_edge_coef_load(ecoefp, &ec, &err))
        return cli_fail(&err);
    st_edge_refs R;
    if (st_edge_refs_load(path, &R, &err))
        return cli_fail(&err);
    st_step *s = malloc(sizeof *s);
    double *pred = calloc(R.n, sizeof *pred), *lo = calloc(R.n, sizeof *lo), *hi = calloc(R.n, sizeof *hi);
    int rc = !s || !pred || !lo || !hi ? st_error_set(&err, ST_ENOMEM, "out of memory") : 0;
    for (size_t i = 0; i < R.n && !rc; i++) {
        rc = st_edge_ref_predict(&R.row[i], coef, &ec, s, &err);
        if (!rc)
            pred[i] = s->total_s, lo[i] = s->lo_s, hi[i] = s->hi_s;
    }
    free(s);
    if (rc) {
        free(pred), free(lo), free(hi);
        st_edge_refs_free(&R);
        return cli_fail(&err);
    }
    /* held-out MAPE per preset, in the order presets first appear (at
     * most one preset a row) */
    const char **names = calloc(R.n, sizeof *names);
    double *sum = calloc(R.n, sizeof *sum);
    int *cnt = calloc(R.n, sizeof *cnt), np = 0, n_all = 0, inband = 0;
    double all = 0;
    if (!names || !sum || !cnt) {
        free(names), free(sum), free(cnt), free(pred), free(lo), free(hi);
        st_edge_refs_free(&R);
        st_error_set(&err, ST_ENOMEM, "out of memory");
        return cli_fail(&err);
    }
    for (size_t i = 0; i < R.n; i++) {
        const st_edge_ref *r = &R.row[i];
        inband += r->ref_s >= lo[i] && r->ref_s <= hi[i];
        if (r->fit)
            continue;
        int k = 0;
        while (k < np && strcmp(names[k], r->preset) != 0)
            k++;
        if (k == np)
            names[np++] = r->preset;
        double ape = fabs(pred[i] - r->ref_s) / r->ref_s * 100;
        sum[k] += ape, cnt[k]++, all += ape, n_all++;
    }
    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_begin_array(&j, "edge");
        for (size_t i = 0; i < R.n; i++) {
            const st_edge_ref *r = &R.row[i];
            st_json_begin_object(&j, NULL);
            st_json_string(&j, "model", r->model);
            st_json_string(&j, "workload", r->workload);
            st_json_string(&j, "preset", r->preset);
            st_json_string(&j, "dtype", st_dtype_name(r->dtype));
            st_json_string(&j, "role", r->fit ? "fit" : "test");
            st_json_number(&j, "reference_ms", r->ref_s * 1e3);
            st_json_number(&j, "predicted_ms", pred[i] * 1e3);
            st_json_number(&j, "lo_ms", lo[i] * 1e3);
            st_json_number(&j, "hi_ms", hi[i] * 1e3);
            st_json_number(&j, "error_pct", (pred[i] - r->ref_s) / r->ref_s * 100);
            st_json_end_object(&j);
        }
        st_json_end_array(&j);
        st_json_begin_array(&j, "held_out");
        for (int k = 0; k < np; k++) {
            st_json_begin_object(&j, NULL);
            st_json_string(&j, "preset", names[k]);
            st_json_int(&j, "n", cnt[k]);
            st_json_number(&j, "mape", sum[k] / cnt[k]);
            st_json_end_object(&j);
        }
        st_json_end_array(&j);
        if (n_all)
            st_json_number(&j, "mape_held_out", all / n_all);
        else
            st_json_null(&j, "mape_held_out");
        st_json_string(&j, "coefficients", ecoefp);
        st_json_int(&j, "in_band", inband);
        st_json_int(&j, "rows", (long long)R.n);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        printf("edge model against %s (coefficients: %s)\n", path, ecoefp);
        printf("  %-14s %-22s %-5s %-4s %10s %10s %7s %10s %10s %3s\n", "MODEL", "PRESET", "DTYPE", "ROLE",
               "REF ms", "STRATA ms", "ERR%", "LO", "HI", "IN");
        for (size_t i = 0; i < R.n; i++) {
            const st_edge_ref *r = &R.row[i];
            int in = r->ref_s >= lo[i] && r->ref_s <= hi[i];
            printf("  %-14s %-22s %-5s %-4s %10.2f %10.2f %+7.1f %10.2f %10.2f %3s\n", r->model, r->preset,
                   st_dtype_name(r->dtype), r->fit ? "fit" : "test", r->ref_s * 1e3, pred[i] * 1e3,
                   (pred[i] - r->ref_s) / r->ref_s * 100, lo[i] * 1e3, hi[i] * 1e3, in ? "yes" : "no");
        }
        printf("\nheld-out rows (role test), MAPE per preset\n");
        for (int k = 0; k < np; k++)
            printf("  %-22s %2d rows  %6.2f%%\n", names[k], cnt[k], sum[k] / cnt[k]);
        if (n_all)
            printf("  %-22s %2d rows  %6.2f%%\n", "all held out", n_all, all / n_all);
        else
            printf("  (none: every row is a fit row)\n");
        printf("  90%% band contains the reference for %d of %zu rows (in-sample: the bands' width, sigma, "
               "comes from these rows)\n", inband, R.n);
    }
    free(pred), free(lo), free(hi), free(names), free(sum), free(cnt);
    st_edge_refs_free(&R);
    return 0;
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data", required_argument, NULL, 'd'}, {"coef", required_argument, NULL, 'c'},
        {"min-tokens", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"samples", required_argument, NULL, 's'}, {"coll-samples", required_argument, NULL, 'S'},
        {"edge-coef", required_argument, NULL, 'E'}, {"models", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    const char *data = NULL, *coefp = NULL, *samples = NULL, *coll_samples = NULL, *ecoefp = NULL, *models = NULL;
    long long min_tokens = ST_VIDUR_MIN_TOKENS;
    int json = 0, c, rc, min_tokens_given = 0;
    optind = 0;
    while ((c = cli_getopt(&cmd_validate, argc, argv, "d:c:t:s:E:M:jh", opts)) != -1) {
        switch (c) {
        case 'd': data = optarg; break;
        case 'c': coefp = optarg; break;
        case 't':
            if (cli_parse_ll(&cmd_validate, "--min-tokens", optarg, 1, 1LL << 40, &min_tokens))
                return 2;
            min_tokens_given = 1;
            break;
        case 's': samples = optarg; break;
        case 'S': coll_samples = optarg; break;
        case 'E': ecoefp = optarg; break;
        case 'M':
            if (!*optarg)
                return cli_usage_error(&cmd_validate, "--models: give a folder of model configs (MODEL.json)");
            models = optarg;
            break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_validate, stdout); return 0;
        default: return 2;
        }
    }
    if (optind >= argc)
        return cli_usage_error(&cmd_validate, "validate what? neusight, vidur, vllm or edge");
    const char *what = argv[optind];
    if (optind + 1 < argc)
        return cli_usage_error(&cmd_validate, "unexpected argument '%s'", argv[optind + 1]);
    if (strcmp(what, "edge") == 0) {
        if (min_tokens_given || samples || coll_samples || models)
            return cli_usage_error(&cmd_validate, "edge takes --data FILE, --edge-coef FILE, --coef FILE and "
                                                  "--json only");
        st_error e;
        st_gpu_coef gc;
        if (st_gpu_coef_load(coefp, &gc, &e))
            return cli_fail(&e);
        return run_edge(data, ecoefp, json, &gc);
    }
    if (ecoefp)
        return cli_usage_error(&cmd_validate, "--edge-coef is for validate edge");
    if (models && strcmp(what, "neusight") != 0)
        return cli_usage_error(&cmd_validate, "--models is for validate neusight (its labels' model configs)");
    int is_ns = strcmp(what, "neusight") == 0, is_vd = strcmp(what, "vidur") == 0, is_vl = strcmp(what, "vllm") == 0;
    if (!is_ns && !is_vd && !is_vl)
        return cli_usage_error(&cmd_validate, "unknown data set '%s': expected neusight, vidur, vllm or edge", what);
    if (min_tokens_given && !is_vd)
        return cli_usage_error(&cmd_validate, "--min-tokens is for vidur (its operator profiles by num_tokens)");
    st_error err;
    char dir[600];
    if (cli_shared_dir(data, what, "--data", dir, sizeof dir, &err))
        return cli_fail(&err);
    if (coll_samples && !is_vd)
        return cli_usage_error(&cmd_validate, "--coll-samples is for vidur (its NCCL timings)");
    if (samples && coll_samples && cli_same_file(samples, coll_samples))
        return cli_usage_error(&cmd_validate, "--samples '%s' and --coll-samples '%s' name the same file; give "
                                              "each its own", samples, coll_samples);
    if ((rc = cli_out_guard(&cmd_validate, "--samples", samples, "--data", dir)) ||
        (rc = cli_out_guard(&cmd_validate, "--coll-samples", coll_samples, "--data", dir)) ||
        (rc = cli_out_guard(&cmd_validate, "--samples", samples, "--coef", coefp)) ||
        (rc = cli_out_guard(&cmd_validate, "--coll-samples", coll_samples, "--coef", coefp)))
        return rc;
    if (is_vl) {
        if (samples)
            return cli_usage_error(&cmd_validate, "--samples is for neusight and vidur");
        st_error_clear(&err);
        /* the report goes out whole or not at all: into memory first */
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem) {
            st_error_set(&err, ST_ENOMEM, "out of memory");
            return cli_fail(&err);
        }
        rc = cli_validate_vllm(dir, json, coefp, mem, &err);
        if (fclose(mem) != 0 && !rc)
            rc = st_error_set(&err, ST_ENOMEM, "out of memory for the report");
        if (!rc)
            fwrite(buf, 1, len, stdout);
        free(buf);
        return rc ? cli_fail(&err) : 0;
    }
    st_gpu_coef coef;
    if (st_gpu_coef_load(coefp, &coef, &err))
        return cli_fail(&err);
    cli_out outf[2];
    memset(outf, 0, sizeof outf);
    if (samples && cli_out_open(&outf[0], samples, &err))
        return cli_fail(&err);
    if (coll_samples && cli_out_open(&outf[1], coll_samples, &err)) {
        cli_out_close_all(outf, 2, 0, NULL);
        return cli_fail(&err);
    }
    /* a label set without model copies (data/measured/h100): NeuSight's
     * configs from the shared data, when they are there */
    char mbuf[700];
    if (is_ns && !models) {
        snprintf(mbuf, sizeof mbuf, "%s/models", dir);
        struct stat st;
        st_error e2;
        if (stat(mbuf, &st) != 0 || !S_ISDIR(st.st_mode)) {
            /* without the shared data, the labels are left out (and said so) */
            models = cli_shared_dir(NULL, "neusight/models", "--models", mbuf, sizeof mbuf, &e2) == 0 ? mbuf : "";
        }
    }
    rc = is_ns ? run_neusight(dir, models, json, &coef, outf[0].f)
               : run_vidur(dir, json, &coef, min_tokens, outf[0].f, outf[1].f);
    /* the files are written whole, or none when the run or a write failed */
    if (cli_out_close_all(outf, 2, rc == 0, &err))
        return cli_fail(&err);
    return rc;
}

const cli_command cmd_validate = {
    "validate",
    "validate neusight|vidur|vllm|edge [--data DIR] [--models DIR] [--coef FILE] [--min-tokens N]\n"
    "                 [--samples FILE.csv] [--coll-samples FILE.csv] [--edge-coef FILE] [--json]",
    "Measure prediction error against measured kernels, operator profiles and whole models.",
    "  neusight         kernels-test/*.csv per device x op class, and labels/*/*.json whole\n"
    "                   models (model from models/, device from devices/ and the folder name);\n"
    "                   a Dtype column scores a class per datatype, and DIR/harness.csv\n"
    "                   (dispatch, floor_us) replaces the table's host figures, and\n"
    "                   DIR/attention.csv adds fused-attention classes, as in\n"
    "                   data/measured/h100 (strata's own sweeps; a folder of ops.csv or\n"
    "                   attention.csv alone needs no kernels-test/)\n"
    "  vidur            profiling/compute/GPU/*/*/mlp.csv per GPU x operator x TP degree\n"
    "  vllm             replay DIR/RUN/requests.jsonl with the engine settings of RUN/meta.json\n"
    "                   (strata serve); TTFT, TPOT, latency mean/P50/P90/P99 against the\n"
    "                   engine's timestamps; runs without timestamps are predicted only\n"
    "  edge             the edge model (mobile CPU and GPU presets) against reference latencies of\n"
    "                   whole models: calibration/edge-reference.csv (nn-Meter's TFLite 2.1\n"
    "                   figures), per row and MAPE per preset over the held-out rows\n"
    "  --data DIR       the data folder; default $STRATA_SHARED/neusight, .../vidur or .../vllm\n"
    "                   (edge: a reference CSV, default calibration/edge-reference.csv)\n"
    "  --models DIR     neusight: the labels' model configs (MODEL.json) from DIR instead of\n"
    "                   DATA/models (default: DATA/models, else the shared data's\n"
    "                   neusight/models, as for data/measured/h100's own labels)\n"
    "  --edge-coef FILE edge: the edge table (default calibration/edge.yaml), e.g. one\n"
    "                   `strata calibrate --edge` wrote from your own reference rows\n"
    "  --coef FILE      coefficient table (default calibration/gpu-kernels.yaml)\n"
    "  --min-tokens N   vidur: only rows with num_tokens >= N (default 64)\n"
    "  --samples FILE   also write every measured kernel with its prediction as CSV\n"
    "                   (device, op, shape, chosen tile, bound, measured_s, predicted_s)\n"
    "  --coll-samples FILE  vidur: also write every NCCL timing of 1 MiB and up with its\n"
    "                   prediction as CSV (folder, cluster, collective, gpus, per_node, bytes,\n"
    "                   algo, measured_s, predicted_s, ape_pct, error_pct: signed, protocol)\n"
    "  --json           one JSON object: {\"kernels\":[...],\"models\":[...]}, {\"mlp\":[...]} or\n"
    "                   {\"runs\":[{run, model, gpu, ttft, tpot, latency: {predicted_mean, measured_mean,\n"
    "                   error_mean_pct, ...}, within_bars}]}\n"
    "                   with device, op, n, mape, p90 (percent) per row\n",
    run,
    NULL,
};
