/*
 * strata validate vllm: replay real vLLM runs (DIR/RUN/requests.jsonl with
 * the engine settings in DIR/RUN/meta.json) and compare TTFT, TPOT and
 * latency with the engine's own timestamps.
 *
 * The model is the workload whose id, stripped of punctuation, is the
 * longest prefix of the Hugging Face name's last part ("meta-llama/
 * Llama-3.1-8B" -> llama3.1-8b); the GPU is the preset whose id or alias
 * matches the run folder's name up to its first '_' ("RTXPRO6000_..." ->
 * rtx-pro-6000). The KV block count is predicted, not taken from the log;
 * the logged count, where the meta has one, is printed beside it.
 */
#include "config.h"
#include "cli/serve_opts.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/validate_vllm.h"
#include "io/measured.h"

static void norm(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        if (isalnum((unsigned char)*s))
            out[k++] = (char)tolower((unsigned char)*s);
    out[k] = 0;
}

/* longest catalog id of kind `kind` whose normalised form prefixes (model)
 * or equals (gpu: also aliases) the normalised name */
static int match(const char *name, st_file_kind kind, char *out, size_t n, st_error *err)
{
    char want[256];
    norm(name, want, sizeof want);
    st_catalog cat;
    int rc = st_catalog_scan(&cat, err);
    if (rc)
        return rc;
    size_t best = 0;
    out[0] = 0;
    for (size_t i = 0; i < cat.n; i++) {
        if (cat.items[i].kind != kind)
            continue;
        char id[128];
        norm(cat.items[i].id, id, sizeof id);
        size_t l = strlen(id);
        int ok = kind == ST_FILE_MODEL ? (l > best && strncmp(want, id, l) == 0) : strcmp(want, id) == 0;
        if (!ok && kind == ST_FILE_GPU) {
            st_gpu g;
            st_error e2 = {0};
            if (st_load_gpu(cat.items[i].path, &g, &e2) == 0)
                for (int a = 0; a < g.n_aliases && !ok; a++) {
                    char al[128];
                    norm(g.aliases[a], al, sizeof al);
                    ok = strcmp(al, want) == 0;
                }
        }
        if (ok) {
            best = l;
            snprintf(out, n, "%s", cat.items[i].id);
            if (kind == ST_FILE_GPU)
                break;
        }
    }
    st_catalog_free(&cat);
    if (!out[0])
        return st_error_set(err, ST_ENOTFOUND, "no %s preset matches '%s'; add one (strata list --kind %s)",
                            kind == ST_FILE_MODEL ? "workload" : "GPU", name, kind == ST_FILE_MODEL ? "workload" : "gpu");
    return 0;
}

typedef struct measured {
    int have;
    st_dist ttft, tpot, e2e;
} measured;

static int read_measured(const char *path, measured *m, st_error *err)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f)
        return st_error_set(err, ST_EIO, "%s: %s", path, strerror(errno));
    size_t cap = 0, n = 0, cap2 = 0, n2 = 0;
    double *tt = NULL, *e2 = NULL, *tp = NULL;
    char *line = NULL;
    size_t lcap = 0;
    int rc = 0, any = 0, missing = 0;
    size_t lineno = 0, missing_line = 0;
    const char *missing_key = NULL;
    static const char *const keys[4] = {"queued_ts", "first_token_ts", "last_token_ts", "output_toks"};
    ssize_t len;
    while ((len = st_read_line(&line, &lcap, f, ST_TRACE_LINE_MAX)) != -1) {
        lineno++;
        if (len < 0) {
            rc = len == -3 ? st_error_set(err, ST_ENOMEM, "out of memory reading %s", path)
                           : st_error_set(err, ST_EINVAL, "%s:%zu:1: a line longer than 256 MiB: requests.jsonl has a "
                                          "request a line", path, lineno);
            break;
        }
        const char *z = memchr(line, '\0', (size_t)len);
        if (z) {
            rc = st_error_set(err, ST_EINVAL, "%s:%zu:%d: a NUL byte: requests.jsonl is text", path, lineno,
                              (int)(z - line) + 1);
            break;
        }
        const char *p = line;
        int bom = lineno == 1 && len >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
                  (unsigned char)p[2] == 0xBF; /* a UTF-8 byte-order mark, as serve --trace takes it */
        if (bom)
            p += 3;
        const char *obj = p;
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            continue;
        double v[4];
        int found[4], col;
        char why[160];
        if (st_jsonl_parse(obj, keys, 4, v, found, &col, why, sizeof why)) {
            rc = st_error_set(err, ST_EINVAL, "%s:%zu:%d: %s", path, lineno, col + (bom ? 3 : 0), why);
            break;
        }
        if (!found[0] || !found[1] || !found[2] || !found[3]) {
            if (!missing) {
                missing_line = lineno;
                missing_key = keys[!found[0] ? 0 : !found[1] ? 1 : !found[2] ? 2 : 3];
            }
            missing = 1;
            continue;
        }
        double qv = v[0], av = v[1], lv = v[2], ov = v[3];
        /* an engine's timestamps run forward: queued, first token, last */
        const char *bad = !isfinite(qv) || !isfinite(av) || !isfinite(lv) ? "timestamps must be finite numbers"
                          : av < qv ? "first_token_ts is before queued_ts"
                          : lv < av ? "last_token_ts is before first_token_ts"
                          : lv - qv > 1e7 ? "the request spans more than 10^7 s (timestamps in seconds?)"
                          : ov < 1 || ov != floor(ov) ? "output_toks must be a whole number >= 1"
                                                      : NULL;
        if (bad) {
            rc = st_error_set(err, ST_EINVAL, "%s:%zu:1: %s (queued %.17g, first token %.17g, last token "
                              "%.17g, %.17g output tokens); fix or drop the line", path, lineno, bad, qv, av,
                              lv, ov);
            break;
        }
        any = 1;
        if (n == cap) {
            cap = cap ? cap * 2 : 512;
            double *x = realloc(tt, cap * sizeof *x), *y = x ? realloc(e2, cap * sizeof *y) : NULL;
            if (x)
                tt = x;
            if (y)
                e2 = y;
            if (!x || !y) {
                rc = ST_ENOMEM;
                break;
            }
        }
        tt[n] = av - qv;
        e2[n] = lv - qv;
        n++;
        if (ov > 1) {
            if (n2 == cap2) {
                cap2 = cap2 ? cap2 * 2 : 512;
                double *x = realloc(tp, cap2 * sizeof *x);
                if (!x) {
                    rc = ST_ENOMEM;
                    break;
                }
                tp = x;
            }
            tp[n2++] = (lv - av) / (ov - 1);
        }
    }
    free(line);
    fclose(f);
    /* timestamps on some lines and not others: a broken log, not a run
     * without timestamps (which is predicted only) */
    if (!rc && any && missing)
        rc = st_error_set(err, ST_EINVAL, "%s:%zu:1: no %s, while other lines have the engine's timestamps: every "
                          "line needs queued_ts, first_token_ts and last_token_ts (with output_toks), or none of the "
                          "three (then the run is predicted only); fix or drop the line", path, missing_line, missing_key);
    if (!rc && any && !missing) {
        m->have = 1;
        st_dist_of(tt, n, &m->ttft);
        st_dist_of(tp, n2, &m->tpot);
        st_dist_of(e2, n, &m->e2e);
    }
    free(tt);
    free(e2);
    free(tp);
    if (rc == ST_ENOMEM)
        st_error_set(err, rc, "out of memory reading %s", path);
    return rc;
}

/* signed error in percent; NaN (null, "n/a") where either side has no sample
 * or the measurement is not positive: no error can be scored against it */
static double ape(double pred, double meas)
{
    return isfinite(pred) && isfinite(meas) && meas > 0 ? 100.0 * (pred - meas) / meas : NAN;
}

/* a statistic of a distribution, NaN when it has no sample (the TPOT of
 * one-token outputs) */
static double stat_of(const st_dist *d, double v) { return d->n > 0 ? v : NAN; }

/* mean, P50, P90 and P99 of d, each NaN without a sample */
static void stats4(const st_dist *d, double out[4])
{
    const double v[4] = {d->mean, d->p50, d->p90, d->p99};
    for (int i = 0; i < 4; i++)
        out[i] = stat_of(d, v[i]);
}

/* a table cell: "%10.3f UNIT", or n/a */
static void fmt_val(char *buf, size_t n, double v, const char *unit)
{
    if (isnan(v))
        snprintf(buf, n, "%10s %s", "n/a", unit);
    else
        snprintf(buf, n, "%10.3f %s", v, unit);
}

/* the bars: 1 met, 0 not, -1 not assessable (a metric without a score) */
static int bars_met(const st_serve_result *r, const measured *m)
{
    double e[3] = {ape(stat_of(&r->tpot, r->tpot.mean), stat_of(&m->tpot, m->tpot.mean)),
                   ape(stat_of(&r->e2e, r->e2e.mean), stat_of(&m->e2e, m->e2e.mean)),
                   ape(stat_of(&r->ttft, r->ttft.mean), stat_of(&m->ttft, m->ttft.mean))};
    for (int k = 0; k < 3; k++)
        if (isnan(e[k]))
            return -1;
    return fabs(e[0]) <= 10 && fabs(e[1]) <= 10 && fabs(e[2]) <= 25;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int cli_validate_vllm(const char *dir, int json, const char *coef, FILE *out, st_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return st_error_set(err, ST_EIO, "%s: %s", dir, strerror(errno));
    char **names = NULL;
    int nn = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char p[1200];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/requests.jsonl", dir, de->d_name);
        if (stat(p, &st) != 0)
            continue;
        char **grown = nn < cap ? names : realloc(names, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *names);
        char *nm = grown ? strdup(de->d_name) : NULL;
        if (grown)
            names = grown;
        if (!nm) {
            closedir(d);
            for (int i = 0; i < nn; i++)
                free(names[i]);
            free(names);
            return st_error_set(err, ST_ENOMEM, "out of memory listing %s", dir);
        }
        names[nn++] = nm;
    }
    closedir(d);
    if (nn > 1)
        qsort(names, (size_t)nn, sizeof *names, cmp_str);
    st_json j;
    if (json) {
        st_json_init(&j, out, 1);
        st_json_begin_object(&j, NULL);
        st_json_begin_array(&j, "runs");
    } else {
        fprintf(out, "vLLM serving runs (%s): predicted vs measured; error %% = (pred - meas) / meas\n\n", dir);
    }
    int rc = 0, done = 0;
    for (int i = 0; i < nn && !rc; i++) {
        char meta_p[1200], req_p[1200], gpu_name[128], model_id[128], gpu_id[128];
        snprintf(meta_p, sizeof meta_p, "%s/%s/meta.json", dir, names[i]);
        snprintf(req_p, sizeof req_p, "%s/%s/requests.jsonl", dir, names[i]);
        cli_serve_opts o;
        cli_serve_opts_init(&o);
        st_vllm_meta meta = {.tp = o.tp, .dp = o.dp, .max_num_seqs = o.max_num_seqs,
                             .max_batched_tokens = o.max_batched_tokens, .seed = o.seed,
                             .block_size = o.block_size, .prefix_cache = o.prefix_cache,
                             .gpu_mem_util = o.gpu_mem_util};
        if ((rc = st_read_vllm_meta(meta_p, &meta, err)))
            break;
        snprintf(gpu_name, sizeof gpu_name, "%s", names[i]);
        char *us = strchr(gpu_name, '_');
        if (us)
            *us = 0;
        const char *base = strrchr(meta.model, '/') ? strrchr(meta.model, '/') + 1 : meta.model;
        if ((rc = match(base, ST_FILE_MODEL, model_id, sizeof model_id, err))) {
            st_error_prefix(err, "%s:%d:%d: model", meta_p, meta.model_line, meta.model_col);
            break;
        }
        if ((rc = match(gpu_name, ST_FILE_GPU, gpu_id, sizeof gpu_id, err))) {
            st_error_prefix(err, "%s/%s: the folder's GPU (the name before '_')", dir, names[i]);
            break;
        }
        o.gpu = gpu_id;
        o.coef = coef;
        o.trace = req_p;
        o.tp = meta.tp;
        o.dp = meta.dp;
        o.ep = meta.ep;
        o.max_num_seqs = meta.max_num_seqs;
        o.max_batched_tokens = meta.max_batched_tokens;
        o.max_model_len = meta.max_model_len;
        o.block_size = meta.block_size;
        o.gpu_mem_util = meta.gpu_mem_util;
        o.prefix_cache = meta.prefix_cache;
        /* the full-prompt admission gate came with 0.19 (scheduler_reserve_full_isl) */
        if (meta.vllm_major >= 0 && (meta.vllm_major == 0 && meta.vllm_minor < 19))
            o.reserve_full_isl = 0;
        o.seed = meta.seed;
        if (meta.kv_fp8)
            o.kv_dtype = "fp8";
        o.dtype = meta.dtype;
        long long logged = meta.num_gpu_blocks;
        cli_serve_setup su;
        if ((rc = cli_serve_setup_load(&o, model_id, &su, err))) {
            /* the trace's own errors already name requests.jsonl:LINE:COL */
            if (strncmp(err->msg, req_p, strlen(req_p)) != 0)
                st_error_prefix(err, "%s:%d:%d: engine_kwargs", meta_p, meta.engine_line, meta.engine_col);
            break;
        }
        measured m;
        st_serve_result r;
        memset(&r, 0, sizeof r);
        if ((rc = read_measured(req_p, &m, err))) {
            cli_serve_setup_free(&su);
            break; /* the message names requests.jsonl:LINE:COL */
        }
        if ((rc = st_serve_run(&su.cfg, &su.reqs, &r, err))) {
            st_error_prefix(err, "%s:%d:%d: engine_kwargs", meta_p, meta.engine_line, meta.engine_col);
            cli_serve_setup_free(&su);
            break;
        }
        if (json) {
            st_json_begin_object(&j, NULL);
            st_json_string(&j, "run", names[i]);
            st_json_string(&j, "model", model_id);
            st_json_string(&j, "gpu", gpu_id);
            st_json_int(&j, "tp", su.cfg.tp);
            st_json_int(&j, "dp", su.cfg.dp);
            st_json_bool(&j, "ep", su.cfg.ep > 1);
            st_json_int(&j, "requests", (long long)r.n_requests);
            st_json_int(&j, "kv_blocks", r.kv_blocks);
            if (logged > 0)
                st_json_int(&j, "kv_blocks_logged", logged);
            st_json_int(&j, "preemptions", r.preemptions);
            st_json_int(&j, "resume_cached_tokens", r.resume_cached_tokens);
            const char *keys[3] = {"ttft", "tpot", "latency"};
            const st_dist *pd[3] = {&r.ttft, &r.tpot, &r.e2e}, *md[3] = {&m.ttft, &m.tpot, &m.e2e};
            for (int k = 0; k < 3; k++) {
                st_json_begin_object(&j, keys[k]);
                double pv[4], mv[4];
                stats4(pd[k], pv);
                stats4(md[k], mv);
                st_json_number(&j, "predicted_mean", pv[0]);
                st_json_number(&j, "predicted_p50", pv[1]);
                st_json_number(&j, "predicted_p90", pv[2]);
                st_json_number(&j, "predicted_p99", pv[3]);
                if (m.have) {
                    st_json_number(&j, "measured_mean", mv[0]);
                    st_json_number(&j, "measured_p50", mv[1]);
                    st_json_number(&j, "measured_p90", mv[2]);
                    st_json_number(&j, "measured_p99", mv[3]);
                    st_json_number(&j, "error_mean_pct", ape(pv[0], mv[0]));
                    st_json_number(&j, "error_p50_pct", ape(pv[1], mv[1]));
                    st_json_number(&j, "error_p90_pct", ape(pv[2], mv[2]));
                    st_json_number(&j, "error_p99_pct", ape(pv[3], mv[3]));
                }
                st_json_end_object(&j);
            }
            if (m.have) {
                int pass = bars_met(&r, &m);
                if (pass < 0)
                    st_json_null(&j, "within_bars");
                else
                    st_json_bool(&j, "within_bars", pass);
            }
            st_json_end_object(&j);
        } else {
            fprintf(out, "%s: %s on %s, TP %d DP %d%s, max_num_seqs %d, max_batched_tokens %lld, %zu requests\n",
                    names[i], model_id, gpu_id, su.cfg.tp, su.cfg.dp, su.cfg.ep > 1 ? " EP" : "",
                    su.cfg.max_num_seqs, su.cfg.max_batched_tokens, r.n_requests);
            fprintf(out, "  KV blocks predicted %lld", r.kv_blocks);
            if (logged > 0)
                fprintf(out, ", logged %lld (%+.1f%%)", logged, ape((double)r.kv_blocks, (double)logged));
            fprintf(out, "; preemptions %lld", r.preemptions);
            if (r.resume_cached_tokens > 0)
                fprintf(out, " (%lld tokens still cached on resuming)", r.resume_cached_tokens);
            fprintf(out, "; peak KV use %.1f%%\n", 100 * r.kv_peak_frac);
            fprintf(out, "  %-8s %-5s %12s %12s %8s\n", "METRIC", "STAT", "MEASURED", "PREDICTED", "ERR%");
            const char *keys[3] = {"TTFT", "TPOT", "latency"};
            const st_dist *pd[3] = {&r.ttft, &r.tpot, &r.e2e}, *md[3] = {&m.ttft, &m.tpot, &m.e2e};
            for (int k = 0; k < 3; k++) {
                const char *st[4] = {"mean", "p50", "p90", "p99"};
                double pv[4], mv[4];
                stats4(pd[k], pv);
                stats4(md[k], mv);
                for (int s = 0; s < 4; s++) {
                    double scale = k == 1 ? 1e3 : 1;
                    const char *unit = k == 1 ? "ms" : "s ";
                    char ms[32], ps[32], es[16];
                    fmt_val(ms, sizeof ms, mv[s] * scale, unit);
                    fmt_val(ps, sizeof ps, pv[s] * scale, unit);
                    double e = ape(pv[s], mv[s]);
                    if (isnan(e))
                        snprintf(es, sizeof es, "%7s", "n/a");
                    else
                        snprintf(es, sizeof es, "%+7.1f", e);
                    if (m.have)
                        fprintf(out, "  %-8s %-5s %s %s %s\n", keys[k], st[s], ms, ps, es);
                    else
                        fprintf(out, "  %-8s %-5s %12s %s\n", keys[k], st[s], "-", ps);
                }
            }
            if (m.have) {
                int pass = bars_met(&r, &m);
                fprintf(out, "  bars (TPOT and latency means within 10%%, TTFT mean within 25%%): %s\n\n",
                        pass < 0 ? "not assessed (a mean without a positive measurement or a sample)"
                        : pass  ? "met"
                                : "NOT met");
            } else {
                fprintf(out, "  (no engine timestamps in requests.jsonl: prediction only)\n\n");
            }
        }
        done++;
        st_serve_result_free(&r);
        cli_serve_setup_free(&su);
    }
    for (int i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (json) { /* valid JSON even when a run failed: the runs so far */
        st_json_end_array(&j);
        st_json_end_object(&j);
        st_json_finish(&j);
    }
    if (!rc && done == 0)
        return st_error_set(err, ST_ENOTFOUND, "%s: no RUN/requests.jsonl folders to replay", dir);
    return rc;
}
