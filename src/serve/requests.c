/*
 * Request sets: arrivals from a process or a trace, lengths from a spec.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

void st_reqset_free(st_reqset *s)
{
    free(s->r);
    s->r = NULL;
    s->n = 0;
}

void st_lenspec_free(st_lenspec *l)
{
    st_reqset_free(&l->trace);
}

/* ---- length specs ---------------------------------------------------------- */
/* zipf: the longest length its tables take (80 MB each) */
#define ST_ZIPF_MAX 10000000

static int parse_range(const char *s, int *lo, int *hi, const char **end)
{
    char *e;
    errno = 0;
    /* digits only: strtol would also take blanks and a sign */
    if (!isdigit((unsigned char)*s))
        return -1;
    long a = strtol(s, &e, 10);
    if (e == s || errno || a < 1 || a > 100000000)
        return -1;
    long b = a;
    if (*e == '-') {
        const char *s2 = e + 1;
        if (!isdigit((unsigned char)*s2))
            return -1;
        b = strtol(s2, &e, 10);
        if (e == s2 || errno || b < a || b > 100000000)
            return -1;
    }
    *lo = (int)a;
    *hi = (int)b;
    *end = e;
    return 0;
}

int st_lenspec_parse(const char *s, st_lenspec *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    const char *colon = strchr(s, ':');
    size_t kl = colon ? (size_t)(colon - s) : strlen(s);
    const char *arg = colon ? colon + 1 : "";
    const char *e = arg;
    if (kl == 5 && strncmp(s, "fixed", 5) == 0) {
        int a, b, c, d;
        out->kind = ST_LEN_FIXED;
        if (parse_range(arg, &a, &b, &e) || a != b || *e != ',' || parse_range(e + 1, &c, &d, &e) || c != d ||
            *e)
            goto bad;
        out->in_lo = out->in_hi = a;
        out->out_lo = out->out_hi = c;
        return 0;
    }
    if (kl == 7 && strncmp(s, "uniform", 7) == 0) {
        out->kind = ST_LEN_UNIFORM;
        if (parse_range(arg, &out->in_lo, &out->in_hi, &e) || *e != ',' ||
            parse_range(e + 1, &out->out_lo, &out->out_hi, &e) || *e)
            goto bad;
        return 0;
    }
    if (kl == 4 && strncmp(s, "zipf", 4) == 0) {
        char *x;
        out->kind = ST_LEN_ZIPF;
        /* decimal only: strtod would also take blanks, a sign and hexadecimal */
        if (!isdigit((unsigned char)*arg) && *arg != '.')
            goto bad;
        out->zipf_s = strtod(arg, &x);
        if (x == arg || *x != ',' || !(out->zipf_s > 0) || out->zipf_s > 10 || memchr(arg, 'x', (size_t)(x - arg)) ||
            memchr(arg, 'X', (size_t)(x - arg)))
            goto bad;
        out->in_lo = out->out_lo = 1;
        if (parse_range(x + 1, &out->in_hi, &out->in_hi, &e) || *e != ',' ||
            parse_range(e + 1, &out->out_hi, &out->out_hi, &e) || *e)
            goto bad;
        /* each draws from a table of MAX doubles */
        if (out->in_hi > ST_ZIPF_MAX || out->out_hi > ST_ZIPF_MAX) {
            st_error_set(err, ST_EINVAL, "--lengths '%s': zipf draws from a table per length, at most %d tokens "
                         "long; lower MAX_IN and MAX_OUT", s, ST_ZIPF_MAX);
            return ST_EINVAL;
        }
        return 0;
    }
    if (kl == 5 && strncmp(s, "trace", 5) == 0) {
        out->kind = ST_LEN_TRACE;
        if (!*arg)
            goto bad;
        int rc = st_requests_load(arg, &out->trace, err);
        if (rc)
            return rc;
        if (out->trace.n == 0) {
            st_error_set(err, ST_EINVAL, "%s: no requests to draw lengths from", arg);
            return ST_EINVAL;
        }
        return 0;
    }
bad:
    st_error_set(err, ST_EINVAL,
                 "bad --lengths '%s': use fixed:IN,OUT, uniform:LO-HI,LO-HI, zipf:S,MAX_IN,MAX_OUT "
                 "(S in (0,10]) or trace:FILE (token counts from 1 to 1e8)",
                 s);
    return ST_EINVAL;
}

/* Zipf over 1..n with exponent s by inversion of the cumulative sum; the
 * table is rebuilt per call site only once (n up to 1e6 is cheap). */
typedef struct zipf_tab {
    int n;
    double *cdf;
} zipf_tab;

static int zipf_init(zipf_tab *z, int n, double s)
{
    z->n = n;
    z->cdf = malloc((size_t)n * sizeof *z->cdf);
    if (!z->cdf)
        return ST_ENOMEM;
    double acc = 0;
    for (int i = 0; i < n; i++) {
        acc += pow((double)(i + 1), -s);
        z->cdf[i] = acc;
    }
    for (int i = 0; i < n; i++)
        z->cdf[i] /= acc;
    return 0;
}

static int zipf_draw(const zipf_tab *z, double u)
{
    int lo = 0, hi = z->n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (z->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo + 1;
}

int st_requests_generate(const st_arrivals *a, const st_lenspec *l, st_reqset *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(a->qps > 0) || !isfinite(a->qps)) {
        st_error_set(err, ST_EINVAL, "--qps must be a positive rate (requests per second)");
        return ST_EINVAL;
    }
    if (a->n == 0 || a->n > ST_SERVE_MAX_REQUESTS) {
        st_error_set(err, ST_EINVAL, "--requests must be between 1 and %lld", ST_SERVE_MAX_REQUESTS);
        return ST_EINVAL;
    }
    if (a->gamma && !(a->cv > 0)) {
        st_error_set(err, ST_EINVAL, "--cv must be > 0 for gamma arrivals (1 is Poisson)");
        return ST_EINVAL;
    }
    out->r = calloc(a->n, sizeof *out->r);
    if (!out->r) {
        st_error_set(err, ST_ENOMEM, "out of memory for %zu requests", a->n);
        return ST_ENOMEM;
    }
    zipf_tab zi = {0}, zo = {0};
    if (l->kind == ST_LEN_ZIPF && (zipf_init(&zi, l->in_hi, l->zipf_s) || zipf_init(&zo, l->out_hi, l->zipf_s))) {
        free(zi.cdf);
        free(zo.cdf);
        st_reqset_free(out);
        st_error_set(err, ST_ENOMEM, "out of memory for the zipf tables");
        return ST_ENOMEM;
    }
    /* gamma gaps with shape k = 1/cv^2 and mean 1/qps (Marsaglia-Tsang) */
    double shape = a->gamma ? 1.0 / (a->cv * a->cv) : 1.0;
    double t = 0;
    for (size_t i = 0; i < a->n; i++) {
        st_rng g;
        st_rng_init(&g, a->seed, i, ST_SERVE_RNG_ARRIVAL);
        double gap;
        if (a->gamma)
            gap = st_rng_gamma(&g, shape) / (shape * a->qps);
        else
            gap = -log(1.0 - st_rng_u01(&g)) / a->qps;
        if (i > 0)
            t += gap;
        st_request *r = &out->r[i];
        r->arrival = t;
        st_rng_init(&g, a->seed, i, ST_SERVE_RNG_LENGTH);
        switch (l->kind) {
        case ST_LEN_FIXED:
        case ST_LEN_UNIFORM:
            r->in = l->in_lo + (int)(st_rng_u01(&g) * (l->in_hi - l->in_lo + 1));
            r->out = l->out_lo + (int)(st_rng_u01(&g) * (l->out_hi - l->out_lo + 1));
            break;
        case ST_LEN_ZIPF:
            r->in = zipf_draw(&zi, st_rng_u01(&g));
            r->out = zipf_draw(&zo, st_rng_u01(&g));
            break;
        case ST_LEN_TRACE: {
            size_t k = (size_t)(st_rng_u01(&g) * (double)l->trace.n);
            r->in = l->trace.r[k].in;
            r->out = l->trace.r[k].out;
            break;
        }
        }
        r->prefix_group = -1;
        if (a->prefix_groups > 0) {
            r->prefix_group = (int)(st_rng_u01(&g) * a->prefix_groups);
            r->prefix_len = a->prefix_len;
            if (r->in <= r->prefix_len)
                r->in = r->prefix_len + 1;
        }
        r->model = a->models > 1 ? (int)(i % (size_t)a->models) : 0;
    }
    free(zi.cdf);
    free(zo.cdf);
    if (t > ST_SERVE_MAX_SPAN_S) {
        st_error_set(err, ST_EINVAL, "%zu requests at --qps %g arrive over %.3g s, past the %.0e s the simulator's clock "
                     "resolves to a microsecond; raise --qps or lower --requests", a->n, a->qps, t, ST_SERVE_MAX_SPAN_S);
        st_reqset_free(out);
        return ST_EINVAL;
    }
    out->n = a->n;
    return 0;
}

/* ---- traces ------------------------------------------------------------------ */
static int push(st_reqset *s, size_t *cap, const st_request *r)
{
    if (s->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        st_request *p = realloc(s->r, nc * sizeof *p);
        if (!p)
            return ST_ENOMEM;
        s->r = p;
        *cap = nc;
    }
    s->r[s->n++] = *r;
    return 0;
}

/* Requests in arrival order, a stable sort (equal times keep the file's
 * order, on any C library: qsort alone promises no order for ties). */
typedef struct keyed {
    double arrival;
    size_t at;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->arrival != y->arrival)
        return (x->arrival > y->arrival) - (x->arrival < y->arrival);
    return (x->at > y->at) - (x->at < y->at);
}

static int sort_by_arrival(st_reqset *s, st_error *err)
{
    size_t i = 1;
    while (i < s->n && s->r[i - 1].arrival <= s->r[i].arrival)
        i++;
    if (i >= s->n)
        return 0; /* in order already: a trace usually is */
    keyed *k = malloc(s->n * sizeof *k);
    st_request *r = malloc(s->n * sizeof *r);
    if (!k || !r) {
        free(k);
        free(r);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (i = 0; i < s->n; i++)
        k[i] = (keyed){s->r[i].arrival, i};
    qsort(k, s->n, sizeof *k, cmp_keyed);
    for (i = 0; i < s->n; i++)
        r[i] = s->r[k[i].at];
    free(k);
    free(s->r);
    s->r = r;
    return 0;
}

/* a plain decimal number: a digit, '.' or '-' first, and no hex digits'
 * markers (strtod alone takes 0x1 and leading blanks) */
static int decimal_text(const char *t)
{
    return (isdigit((unsigned char)t[0]) || t[0] == '.' || t[0] == '-') && !strpbrk(t, "xXpP");
}

/* A token count: a whole number from 1 to 1e8 (a fraction is a typo or a
 * mean, not a request). */
static int tok_ok(double v) { return v >= 1 && v <= 1e8 && v == floor(v); }

static int csv_col(char **cells, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cells[i], name) == 0)
            return i;
    return -1;
}

/* A trace CSV's columns at most (VIDUR's traces have a handful) */
#define TRACE_CSV_MAX_COLS 256

/* Split a CSV line into at most max cells; -1 when it has more. */
static int split_csv(char *line, char **cells, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return -1;
        cells[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = 0;
        p = c + 1;
    }
    for (int i = 0; i < n; i++) {
        size_t l = strlen(cells[i]);
        while (l && (cells[i][l - 1] == '\n' || cells[i][l - 1] == '\r' || cells[i][l - 1] == ' '))
            cells[i][--l] = 0;
    }
    return n;
}

int st_requests_load(const char *path, st_reqset *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        st_error_set(err, ST_EIO, "%s: %s", path, strerror(errno));
        return ST_EIO;
    }
    size_t cap = 0, lineno = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int rc = 0, csv = -1, c_arr = -1, c_in = -1, c_out = -1, ncols = 0;
    double t0 = 0;
    int have_t0 = 0;
    while ((len = st_read_line(&line, &lcap, f, ST_TRACE_LINE_MAX)) != -1) {
        lineno++;
        if (len < 0) {
            rc = len == -3 ? st_error_set(err, ST_ENOMEM, "out of memory reading %s", path)
                           : st_error_set(err, ST_EINVAL, "%s:%zu:1: a line longer than 256 MiB: a trace is JSON lines "
                                          "or CSV, a request a line", path, lineno);
            break;
        }
        char *p = line;
        /* a NUL byte would end the line there for every reader below */
        const char *z = memchr(line, '\0', (size_t)len);
        if (z) {
            st_error_set(err, ST_EINVAL, "%s:%zu:%d: a NUL byte: a trace is text (JSON lines or CSV)", path, lineno,
                         (int)(z - line) + 1);
            rc = ST_EINVAL;
            break;
        }
        if (lineno == 1 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
            p += 3; /* UTF-8 byte-order mark */
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || !*p)
            continue;
        if (csv < 0 && *p == '[') {
            st_error_set(err, ST_EINVAL, "%s:%zu:%d: a JSON array; a trace is JSON lines (one object per line) or CSV",
                         path, lineno, (int)(p - line) + 1);
            rc = ST_EINVAL;
            break;
        }
        if (csv < 0)
            csv = *p != '{';
        st_request r = {0};
        r.prefix_group = -1;
        r.line = lineno < (size_t)INT_MAX ? (int)lineno : INT_MAX;
        if (!csv) {
            static const char *const keys[3] = {"input_toks", "output_toks", "arrival_time"};
            double v[3];
            int found[3], col = 1;
            char why[160];
            if (st_jsonl_parse(p, keys, 3, v, found, &col, why, sizeof why)) {
                st_error_set(err, ST_EINVAL, "%s:%zu:%d: %s", path, lineno, col + (int)(p - line), why);
                rc = ST_EINVAL;
                break;
            }
            int miss = !found[0] ? 0 : !found[1] ? 1 : !found[2] ? 2 : -1;
            if (miss >= 0) {
                st_error_set(err, ST_EINVAL, "%s:%zu:1: missing \"%s\"; each line needs input_toks, output_toks and arrival_time",
                             path, lineno, keys[miss]);
                rc = ST_EINVAL;
                break;
            }
            int bad = !tok_ok(v[0]) ? 0 : !tok_ok(v[1]) ? 1 : -1;
            if (bad >= 0) {
                st_error_set(err, ST_EINVAL, "%s:%zu:%d: %s %g is not a token count (a whole number from 1 to 1e8)",
                             path, lineno, found[bad] + (int)(p - line), keys[bad], v[bad]);
                rc = ST_EINVAL;
                break;
            }
            if (!isfinite(v[2]) || v[2] < 0) {
                st_error_set(err, ST_EINVAL, "%s:%zu:%d: arrival_time %g is not a time (seconds, 0 or more)", path,
                             lineno, found[2] + (int)(p - line), v[2]);
                rc = ST_EINVAL;
                break;
            }
            r.in = (int)v[0];
            r.out = (int)v[1];
            r.arrival = v[2];
        } else {
            char *cells[TRACE_CSV_MAX_COLS];
            if (c_in < 0) {
                ncols = split_csv(p, cells, TRACE_CSV_MAX_COLS);
                if (ncols < 0) {
                    st_error_set(err, ST_EINVAL, "%s:%zu:1: the CSV header has more than %d columns; keep the "
                                 "trace's own (num_prefill_tokens, num_decode_tokens, arrived_at)", path, lineno,
                                 TRACE_CSV_MAX_COLS);
                    rc = ST_EINVAL;
                    break;
                }
                /* a column strata reads, named twice, would leave which one
                 * is read to the order (others it never reads may repeat) */
                int dup = -1;
                for (int a = 0; a < ncols && dup < 0; a++)
                    for (int b = a + 1; b < ncols; b++)
                        if ((!strcmp(cells[a], "arrived_at") || !strcmp(cells[a], "num_prefill_tokens") ||
                             !strcmp(cells[a], "num_decode_tokens")) && !strcmp(cells[a], cells[b])) {
                            dup = b;
                            break;
                        }
                if (dup >= 0) {
                    st_error_set(err, ST_EINVAL, "%s:%zu:%d: column '%s' is named twice in the header; keep one",
                                 path, lineno, (int)(cells[dup] - line) + 1, cells[dup]);
                    rc = ST_EINVAL;
                    break;
                }
                c_arr = csv_col(cells, ncols, "arrived_at");
                c_in = csv_col(cells, ncols, "num_prefill_tokens");
                c_out = csv_col(cells, ncols, "num_decode_tokens");
                if (c_in < 0 || c_out < 0) {
                    st_error_set(err, ST_EINVAL, "%s:%zu:1: CSV header needs num_prefill_tokens and num_decode_tokens (and optionally arrived_at)",
                                 path, lineno);
                    rc = ST_EINVAL;
                    break;
                }
                continue;
            }
            int n = split_csv(p, cells, TRACE_CSV_MAX_COLS);
            if (n != ncols) {
                if (n < 0)
                    st_error_set(err, ST_EINVAL, "%s:%zu:1: more than %d fields, the header has %d", path, lineno,
                                 TRACE_CSV_MAX_COLS, ncols);
                else
                    st_error_set(err, ST_EINVAL, "%s:%zu:1: %d fields, the header has %d", path, lineno, n, ncols);
                rc = ST_EINVAL;
                break;
            }
            char *e1, *e2, *e3 = NULL;
            double in = strtod(cells[c_in], &e1), outt = strtod(cells[c_out], &e2);
            double arr = c_arr >= 0 ? strtod(cells[c_arr], &e3) : 0;
            /* decimal only: strtod would also take hex (0x1) and blanks */
            int dec_in = decimal_text(cells[c_in]), dec_out = decimal_text(cells[c_out]);
            int dec_arr = c_arr < 0 || decimal_text(cells[c_arr]);
            if (*e1 || *e2 || (c_arr >= 0 && (*e3 || e3 == cells[c_arr])) || !tok_ok(in) || !tok_ok(outt) || !isfinite(arr) ||
                arr < 0 || !dec_in || !dec_out || !dec_arr) {
                int bad = *e1 || !tok_ok(in) || !dec_in ? c_in : (*e2 || !tok_ok(outt) || !dec_out) ? c_out : c_arr;
                st_error_set(err, ST_EINVAL, "%s:%zu:%d: '%s' is not a valid %s", path, lineno,
                             (int)(cells[bad] - line) + 1, cells[bad],
                             bad == c_arr ? "time (seconds, 0 or more)" : "token count (a whole number from 1 to 1e8)");
                rc = ST_EINVAL;
                break;
            }
            r.in = (int)in;
            r.out = (int)outt;
            r.arrival = arr;
        }
        if (!have_t0 || r.arrival < t0) {
            t0 = r.arrival;
            have_t0 = 1;
        }
        if (push(out, &cap, &r)) {
            st_error_set(err, ST_ENOMEM, "out of memory reading %s", path);
            rc = ST_ENOMEM;
            break;
        }
    }
    free(line);
    if (!rc && ferror(f)) {
        st_error_set(err, ST_EIO, "%s: read error (%s)", path, strerror(errno));
        rc = ST_EIO;
    }
    fclose(f);
    if (!rc && out->n == 0) {
        st_error_set(err, ST_EINVAL, "%s:1:1: no requests (a header, blank lines or nothing); a trace needs at least "
                     "one", path);
        rc = ST_EINVAL;
    }
    if (rc) {
        st_reqset_free(out);
        return rc;
    }
    for (size_t i = 0; i < out->n; i++) {
        out->r[i].arrival -= t0;
        if (!isfinite(out->r[i].arrival) || out->r[i].arrival > ST_SERVE_MAX_SPAN_S) {
            st_error_set(err, ST_EINVAL, "%s:%d:1: this request arrives more than %.0e s after the first, past the "
                         "simulator's clock resolution; check the arrival_time column", path, out->r[i].line,
                         ST_SERVE_MAX_SPAN_S);
            st_reqset_free(out);
            return ST_EINVAL;
        }
    }
    if (sort_by_arrival(out, err)) {
        st_reqset_free(out);
        return ST_ENOMEM;
    }
    return 0;
}
