/* Sweep results as CSV and JSON (all points, or the front), and a point's
 * label; written to a stream the front end opens. */
#include "config.h"
#include "explore/explore.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Column / key names with units: the same in CSV and JSON. */
static const char *const metric_keys[ST_METRIC_COUNT] = {
    "latency_s", "energy_j", "edp_js", "throughput_per_s", "memory_bytes", "cost_dev_s", "mfu",
    "ttft_s", "tpot_s", "goodput_req_s",
};

const char *st_metric_key(st_metric m) { return (unsigned)m < ST_METRIC_COUNT ? metric_keys[m] : "?"; }

void st_sweep_point_label(const st_sweep *s, long long idx, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = 0;
    for (size_t a = 0; a < s->n_axes && u < n; a++) {
        const st_pvalue *v = &s->axes[a].v[st_sweep_axis_index(s, idx, a)];
        int w = snprintf(buf + u, n - u, "%s%s=%s", a ? " " : "", st_param_info_of(s->axes[a].param)->name,
                         v->text);
        if (w < 0)
            break;
        u += (size_t)w;
    }
}

static const char *status_name(const st_point *p)
{
    return p->status == ST_PT_OK ? "ok" : p->status == ST_PT_INVALID ? "invalid" : "pending";
}

static void csv_number(FILE *f, double v)
{
    char buf[40];
    if (isnan(v)) {
        fputs(",", f);
        return;
    }
    st_format_double(buf, sizeof buf, v);
    fprintf(f, ",%s", buf);
}

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_text(FILE *f, const char *t)
{
    if (!strpbrk(t, ",\"\n")) {
        fprintf(f, ",%s", t);
        return;
    }
    fputs(",\"", f);
    for (; *t; t++) {
        if (*t == '"')
            fputc('"', f);
        fputc(*t, f);
    }
    fputc('"', f);
}

static int wanted(const st_point *p, int front_only) { return !front_only || p->front; }

/* Why point idx is invalid: evaluated again for its message, as a point
 * keeps no text. Most invalid points fail at their checks before a model
 * runs (a split that does not divide, a dtype the GPU lacks); a serving
 * point the simulator rejects part-way is simulated again, once per export
 * file. "" for a valid point. */
static void invalid_reason(const st_sweep *s, long long idx, const st_point *p, char *buf, size_t n)
{
    buf[0] = '\0';
    if (p->status != ST_PT_INVALID)
        return;
    st_point again;
    st_error e = {0};
    st_sweep_eval(s, idx, &again, NULL, &e);
    snprintf(buf, n, "%s", e.msg);
}

long long st_sweep_first_invalid(const st_sweep *s, const st_sweep_run *r, char *why, size_t n)
{
    long long first, count;
    const st_point *pts = st_sweep_points(r, &first, &count);
    if (n)
        why[0] = '\0';
    for (long long i = 0; i < count; i++)
        if (pts[i].status == ST_PT_INVALID) {
            invalid_reason(s, first + i, &pts[i], why, n);
            return first + i;
        }
    return -1;
}

int st_sweep_write_csv(const st_sweep *s, const st_sweep_run *r, int front_only, FILE *f)
{
    long long first, count;
    const st_point *pts = st_sweep_points(r, &first, &count);
    fputs("index", f);
    for (size_t a = 0; a < s->n_axes; a++)
        fprintf(f, ",%s", st_param_info_of(s->axes[a].param)->name);
    fputs(",status,feasible,front", f);
    for (int m = 0; m < ST_METRIC_COUNT; m++) {
        fprintf(f, ",%s", metric_keys[m]);
        if (m == ST_M_LATENCY)
            fputs(",lo_s,hi_s", f);
    }
    fputs(",reason\n", f);
    for (long long i = 0; i < count; i++) {
        const st_point *p = &pts[i];
        if (!wanted(p, front_only) || p->status == ST_PT_PENDING)
            continue;
        fprintf(f, "%lld", first + i);
        for (size_t a = 0; a < s->n_axes; a++)
            csv_text(f, s->axes[a].v[st_sweep_axis_index(s, first + i, a)].text);
        fprintf(f, ",%s,%d,%d", status_name(p), p->feasible, p->front);
        for (int m = 0; m < ST_METRIC_COUNT; m++) {
            csv_number(f, p->m[m]);
            if (m == ST_M_LATENCY) {
                csv_number(f, p->lo_s);
                csv_number(f, p->hi_s);
            }
        }
        char why[sizeof ((st_error *)0)->msg];
        invalid_reason(s, first + i, p, why, sizeof why);
        csv_text(f, why);
        fputc('\n', f);
    }
    return ferror(f) ? ST_EIO : 0;
}

static void json_metric(st_json *j, const char *key, double v)
{
    if (isnan(v))
        st_json_null(j, key);
    else
        st_json_number(j, key, v);
}

void st_sweep_json_point(const st_sweep *s, long long idx, const st_point *p, st_json *j)
{
    st_json_begin_object(j, NULL);
    st_json_int(j, "index", idx);
    st_json_begin_object(j, "params");
    for (size_t a = 0; a < s->n_axes; a++)
        st_json_string(j, st_param_info_of(s->axes[a].param)->name,
                       s->axes[a].v[st_sweep_axis_index(s, idx, a)].text);
    st_json_end_object(j);
    st_json_string(j, "status", status_name(p));
    st_json_bool(j, "feasible", p->feasible);
    st_json_bool(j, "front", p->front);
    for (int m = 0; m < ST_METRIC_COUNT; m++) {
        json_metric(j, metric_keys[m], p->m[m]);
        if (m == ST_M_LATENCY) {
            json_metric(j, "lo_s", p->lo_s);
            json_metric(j, "hi_s", p->hi_s);
        }
    }
    if (p->status == ST_PT_INVALID) {
        char why[sizeof ((st_error *)0)->msg];
        invalid_reason(s, idx, p, why, sizeof why);
        st_json_string(j, "reason", why);
    }
    st_json_end_object(j);
}

void st_sweep_json_header(const st_sweep *s, st_json *j)
{
    st_json_string(j, "sweep", s->name);
    st_json_string(j, "evaluate", st_sweep_kind_name(s->kind));
    st_json_int(j, "points_total", s->points);
    st_json_begin_array(j, "objectives");
    for (int i = 0; i < s->n_obj; i++)
        st_json_string(j, NULL, st_metric_name(s->obj[i]));
    st_json_end_array(j);
    st_json_begin_array(j, "axes");
    for (size_t a = 0; a < s->n_axes; a++) {
        st_json_begin_object(j, NULL);
        st_json_string(j, "name", st_param_info_of(s->axes[a].param)->name);
        st_json_int(j, "values", (long long)s->axes[a].n);
        st_json_end_object(j);
    }
    st_json_end_array(j);
}

int st_sweep_write_json(const st_sweep *s, const st_sweep_run *r, int front_only, FILE *f)
{
    long long first, count;
    const st_point *pts = st_sweep_points(r, &first, &count);
    st_json j;
    st_json_init(&j, f, 0);
    st_json_begin_object(&j, NULL);
    st_sweep_json_header(s, &j);
    st_json_int(&j, "first", first);
    st_json_int(&j, "count", count);
    /* a cancelled run holds fewer points than its range */
    long long evaluated = 0;
    for (long long i = 0; i < count; i++)
        evaluated += pts[i].status != ST_PT_PENDING;
    st_json_int(&j, "evaluated", evaluated);
    st_json_bool(&j, "complete", evaluated == count);
    st_json_begin_array(&j, "points");
    for (long long i = 0; i < count; i++)
        if (wanted(&pts[i], front_only) && pts[i].status != ST_PT_PENDING)
            st_sweep_json_point(s, first + i, &pts[i], &j);
    st_json_end_array(&j);
    st_json_end_object(&j);
    st_json_finish(&j);
    return ferror(f) ? ST_EIO : 0;
}

const st_sweep_export st_sweep_exports[ST_SWEEP_EXPORTS] = {
    {"points.csv", 0, 0}, {"front.csv", 1, 0}, {"points.json", 0, 1}, {"front.json", 1, 1},
};

int st_sweep_write_export(const st_sweep *s, const st_sweep_run *r, int which, FILE *f)
{
    const st_sweep_export *e = &st_sweep_exports[which];
    return e->json ? st_sweep_write_json(s, r, e->front, f) : st_sweep_write_csv(s, r, e->front, f);
}
