/* Screen 3, sweep set-up: the example sweep files, and a form with one row per
 * parameter of the evaluator. A row holds a value (fixed), a list "a, b, c"
 * or a range "A..B x2" / "A..B +S" / "A..B nN" (an axis), or nothing (the
 * default). r builds the sweep through the same YAML loader as the CLI. */
#include "config.h"
#include "ui/ui.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { ROW_EVALUATE = 0, ROW_FIRST_PARAM };

/* A row's list separator: a length distribution's own text has commas
 * ("uniform:100-2000,50-800"), so its list takes ';'; every other list ','. */
static char list_sep(st_param p)
{
    return st_param_info_of(p)->kind == ST_PK_LENGTHS ? ';' : ',';
}

/* Is row text t of parameter p an axis? A list (its separator), or for a
 * number a range A..B; a name or path may hold "..". */
static int row_is_axis(st_param p, const char *t)
{
    st_pkind k = st_param_info_of(p)->kind;
    if (strchr(t, list_sep(p)))
        return 1;
    return (k == ST_PK_INT || k == ST_PK_NUM) && strstr(t, "..") != NULL;
}

static int row_is_range(st_param p, const char *t)
{
    return row_is_axis(p, t) && !strchr(t, list_sep(p));
}

/* Rows: evaluate, the evaluator's parameters, objectives, constraints, sampling. */
static int row_params(const ui_form *f, st_param *out)
{
    int n = 0;
    for (int p = 0; p < ST_PARAM_COUNT; p++)
        if (st_sweep_kind_takes(f->kind, (st_param)p))
            out[n++] = (st_param)p;
    return n;
}

static size_t n_rows(const ui_form *f)
{
    st_param ps[ST_PARAM_COUNT];
    return (size_t)(1 + row_params(f, ps) + 3);
}

/* The text of row i (NULL for the evaluator row), its label and capacity. */
static char *row_text(ui_form *f, size_t i, const char **label, size_t *cap)
{
    st_param ps[ST_PARAM_COUNT];
    size_t np = (size_t)row_params(f, ps);
    *cap = 0;
    if (i == ROW_EVALUATE) {
        *label = "evaluate";
        return NULL;
    }
    if (i - 1 < np) {
        *label = st_param_info_of(ps[i - 1])->name;
        *cap = sizeof f->value[0];
        return f->value[ps[i - 1]];
    }
    i -= 1 + np;
    *label = i == 0 ? "objectives" : i == 1 ? "constraints" : "sampling";
    *cap = i == 0 ? sizeof f->objectives : i == 1 ? sizeof f->constraints : sizeof f->sampling;
    return i == 0 ? f->objectives : i == 1 ? f->constraints : f->sampling;
}

static const char *form_label(void *ctx, size_t i, char *buf, size_t n)
{
    ui_app *a = ctx;
    const char *label;
    size_t cap;
    char *t = row_text(&a->form, i, &label, &cap);
    const char *kind = "";
    st_param ps[ST_PARAM_COUNT];
    int approx = 0;
    if (t && i > ROW_EVALUATE && i < ROW_FIRST_PARAM + (size_t)row_params(&a->form, ps)) {
        if (row_is_axis(ps[i - ROW_FIRST_PARAM], t))
            kind = "axis ";
        else if (*t)
            kind = "fixed";
        approx = a->form.inexact[ps[i - ROW_FIRST_PARAM]];
    }
    snprintf(buf, n, "%-13s %-5s %s%s", label, kind, t ? (*t ? t : "(default)") : st_sweep_kind_name(a->form.kind),
             approx ? "  (approximates the file's values: edit to run)" : "");
    return buf;
}

static const char *file_label(void *ctx, size_t i, char *buf, size_t n)
{
    ui_app *a = ctx;
    const char *s = strrchr(a->files[i], '/');
    snprintf(buf, n, "%s", s ? s + 1 : a->files[i]);
    return buf;
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

void ui_sweep_files_scan(ui_app *a)
{
    char root[512], dir[600];
    st_error err;
    if (st_data_root(root, sizeof root, &err))
        return;
    snprintf(dir, sizeof dir, "%s/workloads/sweeps", root);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".yaml"))
            continue;
        char **nf = realloc(a->files, (a->n_files + 1) * sizeof *nf);
        if (!nf)
            break;
        a->files = nf;
        size_t need = strlen(dir) + l + 2;
        if (!(a->files[a->n_files] = malloc(need)))
            break;
        snprintf(a->files[a->n_files], need, "%s/%s", dir, e->d_name);
        a->n_files++;
    }
    closedir(d);
    qsort(a->files, a->n_files, sizeof *a->files, cmp_str);
    ui_list_set(&a->file_list, a->n_files, file_label, a, &err);
}

void ui_form_default(ui_form *f, st_sweep_kind k)
{
    memset(f, 0, sizeof *f);
    f->kind = k;
    snprintf(f->name, sizeof f->name, "%s-sweep", st_sweep_kind_name(k));
    snprintf(f->constraints, sizeof f->constraints, "fits");
    snprintf(f->sampling, sizeof f->sampling, "grid");
    switch (k) {
    case ST_SWEEP_GPU: /* the default: H100 + Llama-2-7B */
        snprintf(f->name, sizeof f->name, "h100-llama2-7b");
        snprintf(f->value[ST_P_GPU], 256, "h100-sxm");
        snprintf(f->value[ST_P_WORKLOAD], 256, "llama2-7b");
        snprintf(f->value[ST_P_PHASE], 256, "prefill");
        snprintf(f->value[ST_P_SEQ], 256, "128..4096 x2");
        snprintf(f->value[ST_P_BATCH], 256, "1..64 x2");
        snprintf(f->value[ST_P_DTYPE], 256, "fp16, bf16, fp8");
        snprintf(f->value[ST_P_ATTN], 256, "flash");
        snprintf(f->objectives, sizeof f->objectives, "latency, throughput");
        break;
    case ST_SWEEP_ACCEL:
        snprintf(f->value[ST_P_ARCH], 256, "eyeriss-like");
        snprintf(f->value[ST_P_WORKLOAD], 256, "resnet50");
        snprintf(f->value[ST_P_PE_X], 256, "8, 14, 16");
        snprintf(f->value[ST_P_PE_Y], 256, "8, 12, 16");
        snprintf(f->value[ST_P_GLB_KIB], 256, "64, 128, 256");
        snprintf(f->objectives, sizeof f->objectives, "latency, energy");
        f->constraints[0] = 0;
        break;
    case ST_SWEEP_TRAIN:
        snprintf(f->value[ST_P_CLUSTER], 256, "dgx-h100");
        snprintf(f->value[ST_P_WORKLOAD], 256, "llama2-7b");
        snprintf(f->value[ST_P_GLOBAL_BATCH], 256, "32");
        snprintf(f->value[ST_P_SEQ], 256, "4096");
        snprintf(f->value[ST_P_DTYPE], 256, "bf16");
        snprintf(f->value[ST_P_FLASH], 256, "true");
        snprintf(f->value[ST_P_TP], 256, "1, 2, 4, 8");
        snprintf(f->value[ST_P_PP], 256, "1, 2, 4");
        snprintf(f->value[ST_P_MICROBATCHES], 256, "1, 4, 8");
        snprintf(f->value[ST_P_ZERO], 256, "0, 1, 3");
        snprintf(f->objectives, sizeof f->objectives, "latency, memory");
        break;
    case ST_SWEEP_SERVE:
        snprintf(f->value[ST_P_GPU], 256, "h100-sxm");
        snprintf(f->value[ST_P_WORKLOAD], 256, "llama3.1-8b");
        snprintf(f->value[ST_P_REQUESTS], 256, "500");
        snprintf(f->value[ST_P_LENGTHS], 256, "uniform:100-2000,50-800");
        snprintf(f->value[ST_P_QPS], 256, "2, 4, 8, 12, 16, 24");
        snprintf(f->value[ST_P_SCHED], 256, "vllm, sarathi");
        snprintf(f->value[ST_P_SLO_TTFT], 256, "2");
        snprintf(f->value[ST_P_SLO_TPOT], 256, "0.05");
        snprintf(f->objectives, sizeof f->objectives, "latency, throughput");
        f->constraints[0] = 0;
        break;
    default: break;
    }
}

/* Do the axis's values step by a constant factor (geometric) or a constant
 * step (arithmetic), to 1e-9 of each? */
static int axis_is_range(const st_sweep_axis *ax, int geometric)
{
    double a = ax->v[0].num, b = ax->v[1].num;
    for (size_t i = 2; i < ax->n; i++) {
        double want = geometric ? a * pow(b / a, (double)i) : a + (b - a) * (double)i;
        if (fabs(ax->v[i].num - want) > 1e-9 * (fabs(want) > 1 ? fabs(want) : 1))
            return 0;
    }
    return 1;
}

/* An axis as form text: the list, or a range when the list is too long.
 * Returns 0 where the text only approximates the values (the range through
 * the first and last of values that are not evenly spaced, or the names
 * that fit), 1 where it gives them exactly. */
static int axis_text(const st_sweep_axis *ax, char *out, size_t n)
{
    size_t u = 0;
    char sep = list_sep(ax->param);
    out[0] = 0;
    int fits = 1;
    for (size_t i = 0; i < ax->n; i++) {
        int w = snprintf(out + u, n - u, "%s%s", i ? (sep == ';' ? "; " : ", ") : "", ax->v[i].text);
        if (w < 0 || (size_t)w >= n - u) {
            fits = 0;
            out[u] = 0; /* no cut piece of a name left behind */
            break;
        }
        u += (size_t)w;
    }
    if (ax->n == 1 && fits) { /* one value must stay an axis: "v," would read as a list */
        snprintf(out + u, n - u, "%c", sep);
        return 1;
    }
    if (fits)
        return 1;
    if (!(st_param_info_of(ax->param)->kind == ST_PK_INT || st_param_info_of(ax->param)->kind == ST_PK_NUM))
        return 0; /* names that do not fit: the values that do (no range of names) */
    double a = ax->v[0].num, b = ax->v[1].num;
    char step[40];
    if (a > 0 && b / a > 1 && axis_is_range(ax, 1)) {
        snprintf(out, n, "%s..%s x%.15g", ax->v[0].text, ax->v[ax->n - 1].text, b / a);
        return 1;
    }
    if (b > a && axis_is_range(ax, 0)) {
        snprintf(step, sizeof step, "%.15g", b - a);
        snprintf(out, n, "%s..%s +%s", ax->v[0].text, ax->v[ax->n - 1].text, step);
        return 1;
    }
    snprintf(out, n, "%s..%s n%zu", ax->v[0].text, ax->v[ax->n - 1].text, ax->n);
    return 0;
}

void ui_form_from_sweep(ui_form *f, const st_sweep *s)
{
    memset(f, 0, sizeof *f);
    f->kind = s->kind;
    snprintf(f->name, sizeof f->name, "%s", s->name);
    for (int p = 0; p < ST_PARAM_COUNT; p++)
        if (s->base_set[p])
            snprintf(f->value[p], sizeof f->value[p], "%s", s->base[p].text);
    for (size_t i = 0; i < s->n_axes; i++) {
        st_param p = s->axes[i].param;
        f->inexact[p] = !axis_text(&s->axes[i], f->value[p], sizeof f->value[0]);
        f->inexact_n[p] = s->axes[i].n;
        if (f->n_axis_order < ST_PARAM_COUNT)
            f->axis_order[f->n_axis_order++] = s->axes[i].param;
    }
    size_t u = 0;
    for (int i = 0; i < s->n_obj; i++)
        u += (size_t)snprintf(f->objectives + u, sizeof f->objectives - u, "%s%s", i ? ", " : "",
                              st_metric_name(s->obj[i]));
    u = 0;
    for (int i = 0; i < s->n_con && u < sizeof f->constraints; i++)
        u += (size_t)snprintf(f->constraints + u, sizeof f->constraints - u, "%s%s", i ? ", " : "", s->con[i].text);
    if (s->random)
        snprintf(f->sampling, sizeof f->sampling, "random %lld seed %llu", s->samples, s->seed);
    else
        snprintf(f->sampling, sizeof f->sampling, "grid");
}

/* Append to a growing buffer. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    int bad;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->bad = 1;
            return;
        }
        if (b->s && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = (b->cap + (size_t)w + 1) * 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->bad = 1;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
}

static void put_quoted(sbuf *b, const char *t, size_t len)
{
    put(b, "\"");
    for (size_t i = 0; i < len; i++)
        put(b, "%s%c", t[i] == '"' || t[i] == '\\' ? "\\" : "", t[i]);
    put(b, "\"");
}

static const char *trim(const char *s, size_t *len)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    *len = n;
    return s;
}

/* a range's number: plain when it is one (the loader takes no quoted
 * numbers), else quoted, for the loader to name what it got */
static void put_number(sbuf *b, const char *t)
{
    char *end;
    if (*t && strspn(t, "0123456789.eE+-") == strlen(t)) {
        strtod(t, &end);
        if (!*end) {
            put(b, "%s", t);
            return;
        }
    }
    put_quoted(b, t, strlen(t));
}

/* "A..B x2" | "A..B +S" | "A..B nN" | "A..B" as a range map. */
static int put_range(sbuf *b, const char *t)
{
    char from[64], to[64], how[64] = "", extra[8] = "";
    const char *dots = strstr(t, "..");
    size_t fl;
    const char *f0 = trim(t, &fl);
    fl = (size_t)(dots - f0);
    if (fl == 0 || fl >= sizeof from)
        return -1;
    memcpy(from, f0, fl);
    from[fl] = 0;
    /* A..B [how], nothing after */
    if (sscanf(dots + 2, " %63s %63s %7s", to, how, extra) < 1 || extra[0])
        return -1;
    put(b, "{from: ");
    put_number(b, from);
    put(b, ", to: ");
    put_number(b, to);
    if (how[0] != 'x' && how[0] != '+' && how[0] != 'n' && how[0])
        return -1;
    put(b, ", %s: ", how[0] == 'x' ? "factor" : how[0] == 'n' ? "steps" : "step");
    put_number(b, how[0] ? how + 1 : "1");
    put(b, "}");
    return 0;
}

/* A row's list as YAML; -1 when an item is empty between others ("fp16,,bf16",
 * a separator at either end), as the same list in a file would be refused
 * (a row of separators alone is an empty list, which the loader names) */
static int put_list(sbuf *b, const char *t, char sep)
{
    char seps[2] = {sep, 0};
    put(b, "[");
    int first = 1, empty = 0;
    while (*t) {
        size_t n = strcspn(t, seps), len;
        char item[256];
        snprintf(item, sizeof item, "%.*s", (int)n, t);
        const char *it = trim(item, &len);
        if (len) {
            put(b, "%s", first ? "" : ", ");
            put_quoted(b, it, len);
            first = 0;
        } else {
            empty = 1;
        }
        t += n + (t[n] == sep);
        if (t[-1] == sep && !*t)
            empty = 1; /* a separator at the end */
    }
    put(b, "]");
    return empty && !first ? -1 : 0;
}

/* The loader names a place in the YAML the form was written to, which the
 * user never sees: "sweep set-up:6:10: msg" becomes "row 'batch': msg", the
 * row that line came from (its key). Other messages stay as they are. */
static void form_error_row(const char *yaml, st_error *err)
{
    int line, col, used = 0;
    if (sscanf(err->msg, "sweep set-up:%d:%d: %n", &line, &col, &used) != 2 || used == 0 || line < 1)
        return;
    const char *l = yaml;
    for (int i = 1; i < line && l; i++) {
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    if (!l)
        return;
    while (*l == ' ')
        l++;
    size_t k = strcspn(l, ":\n");
    if (k == 0 || k > 40 || l[k] != ':')
        return;
    char rest[sizeof err->msg];
    snprintf(rest, sizeof rest, "%s", err->msg + used);
    snprintf(err->msg, sizeof err->msg, "row '%.*s': %s", (int)k, l, rest);
}

int ui_form_build(const ui_form *f, st_sweep *out, st_error *err)
{
    sbuf b = {0};
    st_param ps[ST_PARAM_COUNT];
    int np = row_params(f, ps), n_fixed = 0, n_axes = 0;
    for (int i = 0; i < np; i++)
        if (f->inexact[ps[i]])
            return st_error_set(err, ST_EINVAL, "row '%s' only approximates the file's %zu values (too many for "
                                "a row, and not evenly spaced); edit the row to run what it says, or open the file "
                                "again (o) to run it as written", st_param_info_of(ps[i])->name,
                                f->inexact_n[ps[i]]);
    /* the axes in the order of the file the form came from (the sweep's
     * point indices follow it), then any others in the form's order */
    st_param pa[ST_PARAM_COUNT];
    int npa = 0;
    for (int i = 0; i < f->n_axis_order; i++)
        for (int j = 0; j < np; j++)
            if (ps[j] == f->axis_order[i])
                pa[npa++] = ps[j];
    for (int j = 0; j < np; j++) {
        int seen = 0;
        for (int i = 0; i < npa; i++)
            seen |= pa[i] == ps[j];
        if (!seen)
            pa[npa++] = ps[j];
    }
    put(&b, "sweep: ");
    put_quoted(&b, f->name[0] ? f->name : "ui", strlen(f->name[0] ? f->name : "ui"));
    for (int i = 0; i < np; i++) { /* empty sections are written as {} */
        size_t len;
        const char *t = trim(f->value[ps[i]], &len);
        int axis = row_is_axis(ps[i], t);
        n_fixed += len && !axis;
        n_axes += len && axis;
    }
    put(&b, "\nevaluate: %s\nfixed:%s\n", st_sweep_kind_name(f->kind), n_fixed ? "" : " {}");
    for (int i = 0; i < np; i++) {
        const char *t = f->value[ps[i]];
        size_t len;
        t = trim(t, &len);
        if (!len || row_is_axis(ps[i], t))
            continue;
        put(&b, "  %s: ", st_param_info_of(ps[i])->name);
        put_quoted(&b, t, len);
        put(&b, "\n");
    }
    put(&b, "axes:%s\n", n_axes ? "" : " {}");
    for (int i = 0; i < npa; i++) {
        const char *t = f->value[pa[i]];
        size_t len;
        t = trim(t, &len);
        if (!len || !row_is_axis(pa[i], t))
            continue;
        put(&b, "  %s: ", st_param_info_of(pa[i])->name);
        if (row_is_range(pa[i], t)) {
            if (put_range(&b, t)) {
                free(b.s);
                return st_error_set(err, ST_EINVAL, "%s: '%s' is not a range; write A..B x2 (geometric), "
                                    "A..B +S (step S), A..B nN (N values) or a list a, b, c",
                                    st_param_info_of(pa[i])->name, t);
            }
        } else if (put_list(&b, t, list_sep(pa[i]))) {
            free(b.s);
            return st_error_set(err, ST_EINVAL, "%s: '%s' has an empty item; give each value once between "
                                "'%c's (a, b, c)", st_param_info_of(pa[i])->name, t, list_sep(pa[i]));
        }
        put(&b, "\n");
    }
    put(&b, "objectives: [%s]\n", f->objectives);
    put(&b, "constraints: [");
    const char *c = f->constraints;
    int first = 1;
    while (*c) {
        size_t n = strcspn(c, ","), len;
        char item[96];
        snprintf(item, sizeof item, "%.*s", (int)n, c);
        const char *it = trim(item, &len);
        if (len) {
            put(&b, "%s", first ? "" : ", ");
            put_quoted(&b, it, len);
            first = 0;
        }
        c += n + (c[n] == ',');
    }
    put(&b, "]\n");
    /* sampling: empty or "grid" (every point), or "random N" / "random N
     * seed S"; anything else is an error, not a silent grid */
    long long nrand;
    unsigned long long seed = 1;
    size_t slen;
    const char *sm = trim(f->sampling, &slen);
    char rest[8] = "";
    int got = sscanf(sm, "random %lld seed %llu %7s", &nrand, &seed, rest);
    if (got == 1 || got == 2) {
        if (got == 1) { /* "random N" and nothing else */
            char tail[8] = "";
            if (sscanf(sm, "random %lld %7s", &nrand, tail) != 1) {
                free(b.s);
                return st_error_set(err, ST_EINVAL, "sampling: '%.*s' is not grid, random N or random N seed S",
                                    (int)slen, sm);
            }
        }
        put(&b, "sampling: {random: %lld, seed: %llu}\n", nrand, seed);
    } else if (slen && !(slen == 4 && strncmp(sm, "grid", 4) == 0)) {
        free(b.s);
        return st_error_set(err, ST_EINVAL, "sampling: '%.*s' is not grid, random N or random N seed S", (int)slen,
                            sm);
    }
    if (b.bad) {
        free(b.s);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    int rc = st_load_sweep_buffer("sweep set-up", b.s, b.n, out, err);
    if (rc)
        form_error_row(b.s, err);
    free(b.s);
    return rc;
}

/* ---- the screen ----------------------------------------------------------------- */
void ui_sweep_draw(ui_app *a, ui_rect r)
{
    int lw = r.w / 4 < 36 ? r.w / 4 : 36;
    ui_list_draw(&a->file_list, (ui_rect){r.y, r.x, r.h - 7, lw}, "Sweep files", a->pane == 0);
    ui_text(r.y + r.h - 6, r.x + 1, lw - 1, ui_attr(UI_C_DIM), "Enter  load and run");
    ui_text(r.y + r.h - 5, r.x + 1, lw - 1, ui_attr(UI_C_DIM), "o      open a file by path");
    ui_text(r.y + r.h - 4, r.x + 1, lw - 1, ui_attr(UI_C_DIM), "n      new gpu/accel/train");
    ui_text(r.y + r.h - 3, r.x + 1, lw - 1, ui_attr(UI_C_DIM), "r      run the form");
    ui_text(r.y + r.h - 2, r.x + 1, lw - 1, ui_attr(UI_C_DIM), "c      cancel the run");
    char title[128];
    snprintf(title, sizeof title, "Sweep set-up: %s  (Enter edits a row; a, b, c or A..B x2 makes an axis; lengths a; b)",
             a->form.name);
    ui_list_draw(&a->form_list, (ui_rect){r.y, r.x + lw, r.h, r.w - lw}, title, a->pane == 1);
}

static void refresh_form(ui_app *a)
{
    st_error err;
    ui_list_set(&a->form_list, n_rows(&a->form), form_label, a, &err);
}

void ui_sweep_form_changed(ui_app *a) { refresh_form(a); }

void ui_sweep_store_row(ui_app *a, const char *text)
{
    const char *label;
    size_t cap;
    char *t = row_text(&a->form, (size_t)a->prompt_row, &label, &cap);
    if (t)
        snprintf(t, cap, "%s", text);
    for (int p = 0; p < ST_PARAM_COUNT; p++)
        if (t == a->form.value[p])
            a->form.inexact[p] = 0; /* the row says what the user wrote */
    refresh_form(a);
}

static void run_form(ui_app *a)
{
    st_error err;
    st_sweep *s = malloc(sizeof *s);
    if (!s) {
        ui_error(a, "out of memory");
        return;
    }
    if (ui_form_build(&a->form, s, &err)) {
        free(s);
        ui_error(a, "%s", err.msg);
        return;
    }
    if (ui_start_sweep(a, s) == 0)
        a->screen = UI_S_RESULTS;
}

int ui_sweep_key(ui_app *a, int key)
{
    ui_list *l = a->pane ? &a->form_list : &a->file_list;
    if (ui_list_key(l, key, LINES / 2))
        return 1;
    switch (key) {
    case '\n':
    case KEY_ENTER:
        if (a->pane == 0) {
            size_t i = ui_list_current(&a->file_list);
            if (i != (size_t)-1)
                ui_open_sweep(a, a->files[i]);
            return 1;
        } else {
            size_t row = ui_list_current(&a->form_list);
            if (row == (size_t)-1)
                return 1;
            if (row == ROW_EVALUATE) { /* cycle the evaluator: a fresh form */
                ui_form_default(&a->form, (st_sweep_kind)((a->form.kind + 1) % ST_SWEEP_KIND_COUNT));
                refresh_form(a);
                return 1;
            }
            const char *label;
            size_t cap;
            char *t = row_text(&a->form, row, &label, &cap);
            char lab[64];
            snprintf(lab, sizeof lab, "%s: ", label);
            a->prompt_row = (int)row;
            ui_prompt_open(a, UI_P_FORM, lab, t);
        }
        return 1;
    case 'o': ui_prompt_open(a, UI_P_OPEN, "open sweep file: ", ""); return 1;
    case 'n':
        ui_form_default(&a->form, (st_sweep_kind)((a->form.kind + 1) % ST_SWEEP_KIND_COUNT));
        refresh_form(a);
        a->pane = 1;
        return 1;
    case 'r': run_form(a); return 1;
    case 'c': ui_cancel(a, "sweep cancelled"); return 1;
    default: return 0;
    }
}
