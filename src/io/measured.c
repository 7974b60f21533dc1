/*
 * Readers for measured data: NeuSight kernel CSVs and VIDUR MLP profiles.
 * CSV per RFC 4180 (quoted fields, doubled quotes, CRLF); columns are found
 * by their header names, so column order and extra columns do not matter.
 */
#include "config.h"
#include "io/measured.h"
#include "io/fields.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static const char *const op_names[ST_MEAS_OP_COUNT] = {
    "bmm", "linear", "conv", "add", "addu", "mul", "mulu", "div", "divu",
    "pow", "powu", "gelu", "relu", "tanh", "ln", "softmax", "rmsnorm",
};

const char *st_meas_op_name(st_meas_op op)
{
    return (op >= 0 && op < ST_MEAS_OP_COUNT) ? op_names[op] : "?";
}

int st_meas_op_parse(const char *s, st_meas_op *out)
{
    for (int i = 0; i < ST_MEAS_OP_COUNT; i++)
        if (strcmp(s, op_names[i]) == 0) {
            *out = (st_meas_op)i;
            return 0;
        }
    return ST_EINVAL;
}

/* ---- CSV ------------------------------------------------------------------ */
#define MAX_FIELDS 128

typedef struct csv {
    const char *path;
    char *buf;      /* whole file */
    size_t len, pos;
    int line;       /* first line of the record being read (1-based) */
    int next_line;  /* first line of the next record */
    char *field[MAX_FIELDS];
    int fline[MAX_FIELDS], col[MAX_FIELDS]; /* where each field starts */
    int n;
    char *scratch;  /* unquoted copy of the current record */
    size_t scratch_cap;
} csv;

static int read_all(const char *path, char **buf, size_t *len, st_error *err)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 20, n = 0;
    char *b;
    if (!f)
        return st_error_set(err, ST_EIO, "%s: cannot open: %s", path, strerror(errno));
    b = malloc(cap + 1);
    while (b) {
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    if (!b) {
        fclose(f);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory reading the file", path);
    }
    if (ferror(f)) {
        int e = errno;
        free(b);
        fclose(f);
        return st_error_set(err, ST_EIO, "%s: read error: %s", path, strerror(e));
    }
    fclose(f);
    b[n] = '\0';
    /* a NUL byte would end every string read from the file there: not a
     * text file (a cell would be read short without a word) */
    const char *z = memchr(b, '\0', n);
    if (z) {
        size_t line = 1, col = 1;
        for (const char *q = b; q < z; q++)
            if (*q == '\n')
                line++, col = 1;
            else
                col++;
        free(b);
        return st_error_set(err, ST_EINVAL, "%s:%zu:%zu: a NUL byte: a CSV file is text; re-export it", path, line,
                            col);
    }
    *buf = b;
    *len = n;
    return 0;
}

/* Split the next record into fields; 0 at end of file, 1 for a record,
 * negative on error. Lines may end in \n or \r\n; quoted fields may hold
 * commas, doubled quotes and newlines. */
static int next_record(csv *c, st_error *err)
{
    size_t need, out = 0;
    int col = 1, start_line;
    if (c->pos >= c->len)
        return 0;
    need = c->len - c->pos + 1;
    if (need > c->scratch_cap) {
        char *s = realloc(c->scratch, need);
        if (!s)
            return st_error_set(err, ST_ENOMEM, "%s: out of memory", c->path);
        c->scratch = s;
        c->scratch_cap = need;
    }
    c->line = start_line = ++c->next_line;
    c->n = 0;
    for (;;) {
        int quoted = 0;
        if (c->n == MAX_FIELDS)
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: more than %d columns", c->path,
                                start_line, col, MAX_FIELDS);
        c->field[c->n] = c->scratch + out;
        c->fline[c->n] = c->next_line;
        c->col[c->n] = col;
        c->n++;
        if (c->pos < c->len && c->buf[c->pos] == '"') {
            quoted = 1;
            c->pos++;
            col++;
        }
        for (;;) {
            char ch = c->pos < c->len ? c->buf[c->pos] : '\n';
            if (quoted) {
                if (c->pos >= c->len)
                    return st_error_set(err, ST_EINVAL,
                                        "%s:%d:%d: a quoted field is not closed", c->path,
                                        c->fline[c->n - 1], c->col[c->n - 1]);
                c->pos++;
                col++;
                if (ch == '"') {
                    if (c->pos < c->len && c->buf[c->pos] == '"') {
                        c->scratch[out++] = '"';
                        c->pos++;
                        col++;
                        continue;
                    }
                    quoted = 0;
                    continue;
                }
                if (ch == '\n') { /* a newline inside quotes */
                    c->next_line++;
                    col = 1;
                }
                c->scratch[out++] = ch;
                continue;
            }
            if (ch == ',' || ch == '\n' || ch == '\r')
                break;
            c->scratch[out++] = ch;
            c->pos++;
            col++;
        }
        c->scratch[out++] = '\0';
        {
            char ch = c->pos < c->len ? c->buf[c->pos] : '\n';
            if (ch == ',') {
                c->pos++;
                col++;
                continue;
            }
            if (ch == '\r')
                c->pos++;
            if (c->pos < c->len && c->buf[c->pos] == '\n')
                c->pos++;
            return 1;
        }
    }
}

/* The next record that holds data: blank lines skipped, and a record whose
 * field count differs from the header's (nh) is an error at its line. 1: a
 * record, 0: the end, < 0: an error. */
static int next_data_row(csv *c, int nh, st_error *err)
{
    int rc;
    while ((rc = next_record(c, err)) == 1) {
        if (c->n == 1 && c->field[0][0] == '\0')
            continue;
        if (c->n != nh)
            return st_error_set(err, ST_EINVAL, "%s:%d:1: the row has %d columns, the header has %d", c->path,
                                c->line, c->n, nh);
        return 1;
    }
    return rc;
}

static int find_col(char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* A field as a finite number >= 0 (strtod also takes hex, inf and nan:
 * none of them belongs in a measurement). */
/* Measured times are in milliseconds; a kernel, operator or collective
 * timed at over 1e7 ms (2.8 hours) is a broken row, not a measurement. */
#define MAX_MS 1e7
/* Sizes in bytes and a kernel's multiply-adds: strata counts up to 2^53. */
#define MAX_COUNT 9007199254740992.0

static int field_number(const csv *c, int idx, const char *name, double max, double *out, st_error *err)
{
    char *end;
    const char *s = c->field[idx];
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || strpbrk(s, "xXnNiI") || errno == ERANGE || !isfinite(v))
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a number, "
                            "found '%.40s'", c->path, c->fline[idx], c->col[idx], name, s);
    if (v < 0 || v > max)
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a number in [0, %g], "
                            "found '%.40s'", c->path, c->fline[idx], c->col[idx], name, max, s);
    *out = v;
    return 0;
}

/* A field as a whole number in [0, max]. */
static int field_int(const csv *c, int idx, const char *name, long long max, long long *out,
                     st_error *err)
{
    char *end;
    const char *s = c->field[idx];
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || v > max || errno == ERANGE)
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a whole number "
                            "in [0, %lld], found '%.40s'", c->path, c->fline[idx], c->col[idx],
                            name, max, s);
    *out = v;
    return 0;
}

/* A time in a column of `unit`s (per_s of them a second): a number in
 * (0, max]; a zero or negative time is an error at its field. */
static int field_time(const csv *c, int idx, const char *name, const char *unit, double per_s, double max,
                      double *out_s, st_error *err)
{
    double v = 0;
    int rc = field_number(c, idx, name, max, &v, err);
    if (rc)
        return rc;
    if (!(v > 0))
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a time > 0 (%s), found '%.40s'",
                            c->path, c->fline[idx], c->col[idx], name, unit, c->field[idx]);
    *out_s = v / per_s;
    return 0;
}

static void csv_close(csv *c, char **header, int nheader)
{
    for (int i = 0; i < nheader; i++)
        free(header[i]);
    free(header);
    free(c->buf);
    free(c->scratch);
}

static int csv_open(csv *c, const char *path, char ***header, int *nheader, st_error *err)
{
    int rc;
    memset(c, 0, sizeof *c);
    c->path = path;
    if ((rc = read_all(path, &c->buf, &c->len, err)))
        return rc;
    if (c->len >= 3 && memcmp(c->buf, "\xef\xbb\xbf", 3) == 0)
        c->pos = 3; /* a UTF-8 byte-order mark, as spreadsheets write */
    rc = next_record(c, err);
    if (rc <= 0) {
        free(c->buf);
        free(c->scratch);
        return rc < 0 ? rc : st_error_set(err, ST_EINVAL, "%s:1:1: the file is empty; "
                                          "expected a CSV header line", path);
    }
    /* keep the header: copy its fields out of the scratch buffer */
    *header = malloc((size_t)c->n * sizeof **header);
    if (!*header) {
        free(c->buf);
        free(c->scratch);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
    }
    for (int i = 0; i < c->n; i++) {
        (*header)[i] = strdup(c->field[i]);
        if (!(*header)[i]) {
            for (int j = 0; j < i; j++)
                free((*header)[j]);
            free(*header);
            free(c->buf);
            free(c->scratch);
            return st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
        }
    }
    *nheader = c->n;
    /* a column named twice: which one a reader takes would be a guess */
    for (int i = 0; i < c->n; i++)
        for (int j = 0; j < i; j++)
            if ((*header)[i][0] && strcmp((*header)[i], (*header)[j]) == 0) {
                rc = st_error_set(err, ST_EINVAL, "%s:1:%d: column '%.60s' appears twice (also at 1:%d); keep "
                                  "one", path, c->col[i], (*header)[i], c->col[j]);
                csv_close(c, *header, c->n);
                return rc;
            }
    return 0;
}

/* Find the n columns a reader needs; the first missing one is an error at
 * PATH:1:1 saying what the file should be ("expected WHAT"), and the file
 * is closed. */
static int require_cols(csv *c, char **header, int nh, const char *const *names, int n, int *idx,
                        const char *what, st_error *err)
{
    for (int i = 0; i < n; i++)
        if ((idx[i] = find_col(header, nh, names[i])) < 0) {
            int rc = st_error_set(err, ST_EINVAL, "%s:1:1: no '%s' column; expected %s", c->path, names[i], what);
            csv_close(c, header, nh);
            return rc;
        }
    return 0;
}

static int grow(void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    void *p = realloc(*items, nc * size);
    if (!p)
        return ST_ENOMEM;
    *items = p;
    *cap = nc;
    return 0;
}

/* A table beside a sweep that may be absent (harness.csv, attention.csv,
 * ops.csv): *absent = 1 and 0 returned when there is no file; else it is
 * opened and its n columns found, as require_cols. */
static int csv_open_optional(csv *c, const char *path, char ***header, int *nh, const char *const *names, int n,
                             int *idx, const char *what, int *absent, st_error *err)
{
    FILE *probe = fopen(path, "r");
    *absent = !probe;
    if (!probe)
        return 0;
    fclose(probe);
    int rc = csv_open(c, path, header, nh, err);
    return rc ? rc : require_cols(c, *header, *nh, names, n, idx, what, err);
}

/* Append one item of `size` bytes to a growing array (n items of cap). */
static int append_item(void **items, size_t *cap, size_t *n, const void *item, size_t size, const char *path,
                       st_error *err)
{
    if (grow(items, cap, *n, size))
        return st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
    memcpy((char *)*items + *n * size, item, size);
    (*n)++;
    return 0;
}

/* Close a reader's file; on an error (rc < 0) the set goes back to the n0
 * items it had, so a failed read adds nothing. */
static int close_rows(csv *c, char **header, int nh, size_t *n, size_t n0, int rc)
{
    csv_close(c, header, nh);
    if (rc < 0) {
        *n = n0;
        return rc;
    }
    return 0;
}

/* ---- NeuSight ------------------------------------------------------------ */
enum { C_OP, C_LAT, C_DEV, C_KNAME, C_GX, C_GY, C_GZ, C_BX, C_BY, C_BZ, C_B, C_M, C_N, C_K,
       C_H, C_CIN, C_COUT, C_KS, C_SIZE, C_STRIDE, C_PAD, C_DTYPE, N_COLS };
static const char *const col_names[N_COLS] = {
    "OPName", "Latency", "Device", "Kernel Name", "Grid x", "Grid y", "Grid z", "Block x",
    "Block y", "Block z", "B", "M", "N", "K", "H", "Input_Channel", "Output_Channel",
    "Kernel_Szie", "Input_Size", "Stride", "Padding", /* "Szie" as NeuSight spells it */
    "Dtype", /* strata's own measurements (data/measured): absent in NeuSight's, FP32 */
};

/* The kernel name without its argument list: cut at the first '(' that does
 * not open "(anonymous namespace)" (else every softmax and layer-norm kernel
 * would be named "void" or "void at::native::"), trimmed. */
static void kernel_name(const char *k, char *out, size_t size)
{
    static const char anon[] = "(anonymous namespace)";
    const char *end = k;
    while ((end = strchr(end, '(')) != NULL && strncmp(end, anon, sizeof anon - 1) == 0)
        end += sizeof anon - 1;
    if (!end)
        end = k + strlen(k);
    while (k < end && strchr(" \t\r\n", *k))
        k++;
    while (end > k && strchr(" \t\r\n", end[-1]))
        end--;
    snprintf(out, size, "%.*s", (int)(end - k), k);
}

/* The shape columns of one op class and where each goes in a sample. */
static int shape_of(st_meas_op op, st_kernel_sample *s, const int **cols, long long **dst)
{
    static const int gemm[] = {C_B, C_M, C_N, C_K};
    static const int vec[] = {C_B, C_H};
    static const int conv[] = {C_B, C_CIN, C_COUT, C_KS, C_SIZE, C_STRIDE, C_PAD};
    if (op == ST_MEAS_BMM || op == ST_MEAS_LINEAR) {
        long long *d[] = {&s->b, &s->m, &s->n, &s->k};
        memcpy(dst, d, sizeof d);
        *cols = gemm;
        return 4;
    }
    if (op == ST_MEAS_CONV) {
        long long *d[] = {&s->b, &s->c_in, &s->c_out, &s->kernel, &s->size, &s->stride, &s->pad};
        memcpy(dst, d, sizeof d);
        *cols = conv;
        return 7;
    }
    {
        long long *d[] = {&s->b, &s->n};
        memcpy(dst, d, sizeof d);
        *cols = vec;
        return 2;
    }
}

/* One data record into a sample. An op strata does not model is an error
 * (every op in NeuSight's sweeps and strata's own is one it models), so a
 * misspelt row is not dropped from the scores unseen. */
static int kernel_row(const csv *c, const int *idx, st_kernel_sample *s, st_error *err)
{
    const int *cols;
    long long *dst[7];
    st_meas_op op;
    int n, rc;
    if (st_meas_op_parse(c->field[idx[C_OP]], &op) != 0) {
        char ops[256] = "";
        for (int i = 0; i < ST_MEAS_OP_COUNT; i++) {
            size_t used = strlen(ops);
            snprintf(ops + used, sizeof ops - used, "%s%s", i ? ", " : "", op_names[i]);
        }
        const char *near = st_suggest(c->field[idx[C_OP]], op_names, ST_MEAS_OP_COUNT);
        char hint[64] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'OPName': '%.40s' is not an op strata models%s; "
                            "expected one of %s (fix the name or remove the row)", c->path,
                            c->fline[idx[C_OP]], c->col[idx[C_OP]], c->field[idx[C_OP]], hint, ops);
    }
    memset(s, 0, sizeof *s);
    s->op = op;
    s->line = c->line;
    snprintf(s->device, sizeof s->device, "%s", c->field[idx[C_DEV]]);
    if (idx[C_KNAME] >= 0)
        kernel_name(c->field[idx[C_KNAME]], s->kernel_name, sizeof s->kernel_name);
    if ((rc = field_time(c, idx[C_LAT], "Latency", "ms", 1e3, MAX_MS, &s->latency_s, err)))
        return rc;
    s->dtype = ST_FP32;
    /* INT4 is a weight-only format, not a kernel's datatype: no row has it */
    if (idx[C_DTYPE] >= 0 && c->field[idx[C_DTYPE]][0] &&
        (st_dtype_parse(c->field[idx[C_DTYPE]], &s->dtype) != 0 || s->dtype == ST_INT4))
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'Dtype': unknown datatype '%.40s'; use fp32, "
                            "tf32, fp16, bf16, fp8 or int8 (empty: fp32)", c->path,
                            c->fline[idx[C_DTYPE]], c->col[idx[C_DTYPE]], c->field[idx[C_DTYPE]]);
    n = shape_of(op, s, &cols, dst);
    for (int i = 0; i < n; i++) {
        if (idx[cols[i]] < 0)
            return st_error_set(err, ST_EINVAL, "%s:1:1: op '%s' (line %d) needs a '%s' "
                                "column", c->path, op_names[op], c->line, col_names[cols[i]]);
        if ((rc = field_int(c, idx[cols[i]], col_names[cols[i]], 1LL << 40, dst[i], err)))
            return rc;
        if (*dst[i] < 1 && cols[i] != C_PAD)
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a whole number in [1, %lld], "
                                "found '%.40s'", c->path, c->fline[idx[cols[i]]], c->col[idx[cols[i]]],
                                col_names[cols[i]], 1LL << 40, c->field[idx[cols[i]]]);
    }
    /* the multiply-adds (or elements) the row describes: as many as the
     * kernel command takes; a conv's are b x p^2 x cout x cin x ks^2 */
    double work = 1;
    if (op == ST_MEAS_CONV) {
        long long p = (s->size + 2 * s->pad - s->kernel) / s->stride + 1;
        if (p < 1)
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: a %lldx%lld kernel with stride %lld and padding %lld "
                                "does not fit the %lldx%lld input", c->path, c->fline[idx[C_KS]], c->col[idx[C_KS]],
                                s->kernel, s->kernel, s->stride, s->pad, s->size, s->size);
        work = (double)s->b * (double)p * (double)p * (double)s->c_out * (double)s->c_in * (double)s->kernel *
               (double)s->kernel;
    } else {
        for (int i = 0; i < n; i++)
            work *= (double)*dst[i];
    }
    if (work > MAX_COUNT)
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: a %s of %.3g multiply-adds (or elements): strata counts "
                            "up to 2^53 = 9.0e15; the row's sizes are wrong", c->path, c->fline[idx[cols[0]]],
                            c->col[idx[cols[0]]], op_names[op], work);
    /* launch geometry: optional, an empty field reads as 0 */
    for (int i = 0; i < 3; i++) {
        if (idx[C_GX + i] >= 0 && c->field[idx[C_GX + i]][0] &&
            (rc = field_int(c, idx[C_GX + i], col_names[C_GX + i], LLONG_MAX, &s->grid[i], err)))
            return rc;
        if (idx[C_BX + i] >= 0 && c->field[idx[C_BX + i]][0] &&
            (rc = field_int(c, idx[C_BX + i], col_names[C_BX + i], LLONG_MAX, &s->block[i],
                            err)))
            return rc;
    }
    return 0;
}

int st_read_neusight_csv(const char *path, st_kernel_set *out, st_error *err)
{
    csv c;
    char **header;
    size_t n0 = out->n;
    int nh, rc, idx[N_COLS];
    if ((rc = csv_open(&c, path, &header, &nh, err)))
        return rc;
    if ((rc = require_cols(&c, header, nh, col_names, C_DEV + 1, idx, "a NeuSight kernel CSV (OPName, Latency, "
                           "Device, ...)", err)))
        return rc;
    for (int i = C_DEV + 1; i < N_COLS; i++)
        idx[i] = find_col(header, nh, col_names[i]);
    while ((rc = next_record(&c, err)) == 1) {
        st_kernel_sample s;
        if (c.n == 1 && c.field[0][0] == '\0')
            continue; /* blank line */
        if (c.n != nh) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: the row has %d columns, the header "
                              "has %d", path, c.line, c.n, nh);
            break;
        }
        rc = kernel_row(&c, idx, &s, err);
        if (rc)
            break;
        if (grow((void **)&out->items, &out->cap, out->n, sizeof *out->items)) {
            rc = st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
            break;
        }
        out->items[out->n++] = s;
    }
    csv_close(&c, header, nh);
    if (rc < 0) {
        out->n = n0; /* nothing half-read */
        return rc;
    }
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int st_read_neusight_dir(const char *dir, st_kernel_set *out, st_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0, n0 = out->n;
    int rc = 0;
    if (!d)
        return st_error_set(err, ST_EIO, "%s: cannot open folder: %s", dir, strerror(errno));
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 4, ".csv") != 0)
            continue;
        if (grow((void **)&names, &cap, n, sizeof *names) ||
            !(names[n] = strdup(de->d_name))) {
            rc = st_error_set(err, ST_ENOMEM, "%s: out of memory", dir);
            break;
        }
        n++;
    }
    closedir(d);
    if (rc == 0 && n)
        qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[4096];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= sizeof path) {
            rc = st_error_set(err, ST_EINVAL, "%s/%s: path too long", dir, names[i]);
            break;
        }
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* a folder or dangling link named *.csv */
        rc = st_read_neusight_csv(path, out, err);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc)
        out->n = n0;
    return rc;
}

void st_kernel_set_free(st_kernel_set *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* ---- VIDUR ----------------------------------------------------------------- */
#define MAX_VIDUR_OPS 32

/* gpu and ORG/MODEL from .../compute/GPU/ORG/MODEL/FILE; empty otherwise. */
static void vidur_names(const char *path, st_vidur_set *out)
{
    const char *p = NULL, *q;
    out->gpu[0] = out->model[0] = '\0';
    if (strncmp(path, "compute/", 8) == 0)
        p = path + 8;
    for (q = path; (q = strstr(q, "/compute/")) != NULL; q++)
        p = q + 9; /* the last one */
    if (p) {
        const char *org = strchr(p, '/');
        const char *model = org ? strchr(org + 1, '/') : NULL;
        const char *file = model ? strchr(model + 1, '/') : NULL;
        if (!org || org == p || !model || model == org + 1 || !file || file == model + 1 ||
            strchr(file + 1, '/') || !file[1])
            return;
        snprintf(out->gpu, sizeof out->gpu, "%.*s", (int)(org - p), p);
        snprintf(out->model, sizeof out->model, "%.*s", (int)(file - org - 1), org + 1);
    }
}

int st_read_vidur_mlp(const char *path, st_vidur_set *out, st_error *err)
{
    static const char *const stats[5] = {"min", "max", "mean", "median", "std"};
    static const char *const meta[8] = {"n_head", "n_kv_head", "n_embd", "n_expanded_embd",
                                        "vocab_size", "use_gated_mlp", "num_tokens",
                                        "num_tensor_parallel_workers"};
    csv c;
    char **header;
    size_t n0 = out->n;
    int nh, rc, midx[8];
    char ops[MAX_VIDUR_OPS][32];
    int opcol[MAX_VIDUR_OPS][5], nops = 0;
    if ((rc = csv_open(&c, path, &header, &nh, err)))
        return rc;
    if ((rc = require_cols(&c, header, nh, meta, 8, midx, "a VIDUR mlp.csv", err)))
        return rc;
    /* operators: every time_stats.OP.mean column that has all four siblings */
    for (int i = 0; i < nh && nops < MAX_VIDUR_OPS; i++) {
        const char *h = header[i];
        size_t l = strlen(h);
        int complete = 1;
        if (strncmp(h, "time_stats.", 11) != 0 || l < 17 || strcmp(h + l - 5, ".mean") != 0 ||
            l - 16 >= sizeof ops[0])
            continue;
        snprintf(ops[nops], sizeof ops[nops], "%.*s", (int)(l - 16), h + 11);
        for (int k = 0; k < 5; k++) {
            char name[80];
            snprintf(name, sizeof name, "time_stats.%s.%s", ops[nops], stats[k]);
            opcol[nops][k] = find_col(header, nh, name);
            complete &= opcol[nops][k] >= 0;
        }
        if (complete)
            nops++;
    }
    while ((rc = next_record(&c, err)) == 1) {
        st_vidur_sample base;
        long long v[8];
        rc = 0;
        if (c.n == 1 && c.field[0][0] == '\0')
            continue;
        if (c.n != nh) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: the row has %d columns, the header "
                              "has %d", path, c.line, c.n, nh);
            break;
        }
        for (int i = 0; i < 8 && rc == 0; i++) {
            const char *s = c.field[midx[i]];
            if (i != 5) {
                rc = field_int(&c, midx[i], meta[i], i == 7 ? INT_MAX : LLONG_MAX, &v[i], err);
                continue;
            }
            /* use_gated_mlp: Python's True/False */
            if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0)
                v[i] = 1;
            else if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0)
                v[i] = 0;
            else
                rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'use_gated_mlp': "
                                  "expected True or False, found '%.20s'", path,
                                  c.fline[midx[i]], c.col[midx[i]], s);
        }
        if (rc)
            break;
        memset(&base, 0, sizeof base);
        base.n_head = v[0];
        base.n_kv_head = v[1];
        base.n_embd = v[2];
        base.n_expanded_embd = v[3];
        base.vocab_size = v[4];
        base.gated_mlp = (int)v[5];
        base.num_tokens = v[6];
        base.tp = (int)v[7];
        base.line = c.line;
        for (int o = 0; o < nops && rc == 0; o++) {
            st_vidur_sample s = base;
            double ms[5];
            snprintf(s.op, sizeof s.op, "%s", ops[o]);
            for (int k = 0; k < 5 && rc == 0; k++)
                rc = field_number(&c, opcol[o][k], header[opcol[o][k]], MAX_MS, &ms[k], err);
            if (rc)
                break;
            s.min_s = ms[0] / 1e3;
            s.max_s = ms[1] / 1e3;
            s.mean_s = ms[2] / 1e3;
            s.median_s = ms[3] / 1e3;
            s.std_s = ms[4] / 1e3;
            if (grow((void **)&out->items, &out->cap, out->n, sizeof *out->items)) {
                rc = st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
                break;
            }
            out->items[out->n++] = s;
        }
        if (rc)
            break;
    }
    csv_close(&c, header, nh);
    if (rc < 0) {
        out->n = n0;
        return rc;
    }
    vidur_names(path, out);
    return 0;
}

void st_vidur_set_free(st_vidur_set *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* An optional `torch` column (the PyTorch release the row ran on, as
 * torch.__version__ or NeuSight's "p2.1.0"): 0 where the file has no such
 * column or the field is empty; an unreadable version is an error at its
 * place. ti: the column's index, -1 when absent. */
static int field_torch(csv *c, int ti, int *ver, st_error *err)
{
    *ver = 0;
    if (ti < 0 || !c->field[ti][0])
        return 0;
    if (st_torch_parse(c->field[ti], ver) != 0)
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'torch': '%.40s' is not a PyTorch version; write it "
                            "as torch.__version__ gives it (e.g. 2.11.0 or 2.11.0+cu128) or leave it empty",
                            c->path, c->fline[ti], c->col[ti], c->field[ti]);
    return 0;
}

int st_read_harness_csv(const char *path, st_harness_row *rows, int max, int *n, st_error *err)
{
    csv c;
    char **header;
    int nh, rc, di, fi, absent;
    *n = 0;
    static const char *const hcols[2] = {"dispatch", "floor_us"};
    int hidx[2];
    /* no harness file: the coefficient table's harness applies */
    if ((rc = csv_open_optional(&c, path, &header, &nh, hcols, 2, hidx, "a harness table (dispatch, floor_us: the "
                                "time of each dispatch class's one-element op)", &absent, err)) || absent)
        return rc;
    di = hidx[0], fi = hidx[1];
    int ti = find_col(header, nh, "torch");
    while ((rc = next_data_row(&c, nh, err)) == 1) {
        rc = 0;
        if (*n >= max) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: more than %d rows; one per dispatch class", path,
                              c.line, max);
            break;
        }
        st_harness_row *r = &rows[*n];
        if ((rc = field_time(&c, fi, "floor_us", "us", 1e6, 1e6, &r->floor_s, err)) ||
            (rc = field_torch(&c, ti, &r->torch_ver, err)))
            break;
        r->torch_col = ti >= 0 ? c.col[ti] : 0;
        snprintf(r->dispatch, sizeof r->dispatch, "%s", c.field[di]);
        r->line = c.fline[di];
        r->col = c.col[di];
        (*n)++;
    }
    csv_close(&c, header, nh);
    if (rc < 0)
        *n = 0;
    return rc < 0 ? rc : 0;
}

int st_read_attention_csv(const char *path, st_attn_set *out, st_error *err)
{
    static const char *const cols[] = {"Latency", "Device", "Batch", "Heads", "KV Heads", "Q", "KV", "D",
                                       "Causal", "Dtype"};
    enum { A_LAT, A_DEV, A_B, A_H, A_KVH, A_Q, A_KV, A_D, A_CAUSAL, A_DTYPE, A_N };
    csv c;
    char **header;
    size_t n0 = out->n;
    int nh, rc, idx[A_N], absent;
    if ((rc = csv_open_optional(&c, path, &header, &nh, cols, A_N, idx, "an attention sweep (Latency, Device, "
                                "Batch, Heads, KV Heads, Q, KV, D, Causal, Dtype)", &absent, err)) || absent)
        return rc;
    int oi = find_col(header, nh, "OPName");
    while ((rc = next_data_row(&c, nh, err)) == 1) {
        st_attn_sample s;
        /* the rows are FlashAttention's forward through SDPA: a row the
         * sweep names as another kernel (math, memory-efficient, a
         * backward) would be scored as that forward */
        if (oi >= 0 && c.field[oi][0] && strcmp(c.field[oi], "sdpa_flash") != 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'OPName': '%.40s' is not a row this file holds; "
                              "attention.csv holds SDPA's fused forward (OPName sdpa_flash, or empty)", path, c.fline[oi], c.col[oi], c.field[oi]);
            break;
        }
        long long *dims[] = {&s.batch, &s.heads, &s.kv_heads, &s.q, &s.kv, &s.d};
        rc = 0;
        memset(&s, 0, sizeof s);
        s.line = c.line;
        snprintf(s.device, sizeof s.device, "%s", c.field[idx[A_DEV]]);
        if ((rc = field_time(&c, idx[A_LAT], "Latency", "ms", 1e3, MAX_MS, &s.latency_s, err)))
            break;
        for (int i = 0; i < 6 && !rc; i++) {
            rc = field_int(&c, idx[A_B + i], cols[A_B + i], 1LL << 31, dims[i], err);
            if (!rc && *dims[i] < 1)
                rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a whole number >= 1", path,
                                  c.fline[idx[A_B + i]], c.col[idx[A_B + i]], cols[A_B + i]);
        }
        if (rc)
            break;
        const char *cz = c.field[idx[A_CAUSAL]];
        if (strcasecmp(cz, "true") == 0 || strcmp(cz, "1") == 0)
            s.causal = 1;
        else if (!(strcasecmp(cz, "false") == 0 || strcmp(cz, "0") == 0)) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'Causal': expected True or False, found '%.40s'",
                              path, c.fline[idx[A_CAUSAL]], c.col[idx[A_CAUSAL]], cz);
            break;
        }
        if (st_dtype_parse(c.field[idx[A_DTYPE]], &s.dtype) != 0 ||
            !(s.dtype == ST_FP16 || s.dtype == ST_BF16 || s.dtype == ST_FP32)) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'Dtype': '%.40s' is no fused-attention datatype; "
                              "use fp16, bf16 or fp32", path, c.fline[idx[A_DTYPE]], c.col[idx[A_DTYPE]],
                              c.field[idx[A_DTYPE]]);
            break;
        }
        if (s.heads % s.kv_heads) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'KV Heads': %lld KV heads do not divide %lld query "
                              "heads", path, c.fline[idx[A_KVH]], c.col[idx[A_KVH]], s.kv_heads, s.heads);
            break;
        }
        if (s.causal && s.q > s.kv) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'Q': a causal row with %lld queries over %lld keys; "
                              "the queries are the last Q of the KV positions (Q <= KV)", path, c.fline[idx[A_Q]],
                              c.col[idx[A_Q]], s.q, s.kv);
            break;
        }
        if ((rc = append_item((void **)&out->items, &out->cap, &out->n, &s, sizeof s, path, err)))
            break;
    }
    return close_rows(&c, header, nh, &out->n, n0, rc);
}

void st_attn_set_free(st_attn_set *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* 1 where `needle` (lower case) occurs in `hay`, ignoring case */
static int has_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

int st_read_ops_csv(const char *path, st_ops_set *out, st_error *err)
{
    static const char *const cols[] = {"op", "dtype", "int4", "b", "m", "n", "k", "rows", "cols", "latency_ms",
                                       "device"};
    enum { O_OP, O_DTYPE, O_INT4, O_B, O_M, O_N, O_K, O_ROWS, O_COLS, O_LAT, O_DEV, O_N_ };
    csv c;
    char **header;
    size_t n0 = out->n;
    int nh, rc, idx[O_N_], absent;
    if ((rc = csv_open_optional(&c, path, &header, &nh, cols, O_N_, idx, "an op sweep (op, dtype, int4, b, m, n, "
                                "k, rows, cols, latency_ms, device)", &absent, err)) || absent)
        return rc;
    int ti = find_col(header, nh, "torch"), ki = find_col(header, nh, "topk"), kn = find_col(header, nh, "kernel");
    while ((rc = next_data_row(&c, nh, err)) == 1) {
        st_ops_sample s;
        long long *dims[] = {&s.b, &s.m, &s.n, &s.k, &s.rows, &s.cols};
        rc = 0;
        memset(&s, 0, sizeof s);
        s.line = c.line;
        snprintf(s.device, sizeof s.device, "%s", c.field[idx[O_DEV]]);
        if (!s.device[0]) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'device': empty; name the GPU as its driver reports "
                              "it (e.g. NVIDIA H100 80GB HBM3)", path, c.fline[idx[O_DEV]], c.col[idx[O_DEV]]);
            break;
        }
        const char *op = c.field[idx[O_OP]];
        if (st_kop_parse(op, &s.op) != 0 || s.op == ST_KOP_FLASH || s.op == ST_KOP_CONV) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'op': '%.40s' is not an op this file holds; use gemm, "
                              "bmm, grouped, elementwise, softmax, norm, embedding or topk (fused attention goes in "
                              "attention.csv, convolutions in kernels-test/conv.csv)", path, c.fline[idx[O_OP]],
                              c.col[idx[O_OP]], op);
            break;
        }
        if (st_dtype_parse(c.field[idx[O_DTYPE]], &s.dtype) != 0 || s.dtype == ST_INT4) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'dtype': unknown datatype '%.40s'; use fp32, tf32, "
                              "fp16, bf16, fp8 or int8 (weight-only INT4 is int4 = tinygemm or marlin on a fp16 or bf16 row)", path,
                              c.fline[idx[O_DTYPE]], c.col[idx[O_DTYPE]], c.field[idx[O_DTYPE]]);
            break;
        }
        if ((rc = field_time(&c, idx[O_LAT], "latency_ms", "ms", 1e3, MAX_MS, &s.latency_s, err)) ||
            (rc = field_torch(&c, ti, &s.torch_ver, err)))
            break;
        s.torch_col = ti >= 0 ? c.col[ti] : 0;
        const char *i4 = c.field[idx[O_INT4]];
        s.int4_col = c.col[idx[O_INT4]];
        if (!strcmp(i4, "1")) {
            /* the kernel the row's kernel column names: PyTorch's
             * _weight_int4pack_mm launches tinygemm_m16n8k16_chunk_kernel,
             * vLLM's GPTQ and AWQ path Marlin<...> */
            const char *kf = kn >= 0 ? c.field[kn] : "";
            int tg = has_ci(kf, "tinygemm"), ml = has_ci(kf, "marlin");
            if (tg == ml) {
                rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'int4': 1 takes the kernel from the row's kernel "
                                  "column, which %s; write the int4 field as tinygemm or marlin", path,
                                  c.fline[idx[O_INT4]], c.col[idx[O_INT4]],
                                  kn < 0 ? "this file does not have" : tg ? "names both tinygemm and Marlin"
                                                                          : "names neither tinygemm nor Marlin");
                break;
            }
            s.int4 = 1;
            s.int4_kernel = tg ? ST_INT4_TINYGEMM : ST_INT4_MARLIN;
        } else if (st_int4_kernel_parse(i4, &s.int4_kernel) == 0)
            s.int4 = 1;
        else if (i4[0] && strcmp(i4, "0")) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'int4': expected 0, 1, marlin or tinygemm (or empty), "
                              "found '%.40s'", path, c.fline[idx[O_INT4]], c.col[idx[O_INT4]], i4);
            break;
        }
        int gemm = s.op == ST_KOP_GEMM || s.op == ST_KOP_BMM || s.op == ST_KOP_GROUPED;
        if (s.int4 && (!gemm || (s.dtype != ST_FP16 && s.dtype != ST_BF16))) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'int4': weight-only INT4 is a GEMM with fp16 or bf16 "
                              "activations, not %s %s", path, c.fline[idx[O_INT4]], c.col[idx[O_INT4]],
                              st_kop_name(s.op), st_dtype_name(s.dtype));
            break;
        }
        /* the sizes the op takes must be given, the others left empty */
        double work = 1;
        for (int i = 0; i < 6 && !rc; i++) {
            int need = gemm ? i < 4 : i >= 4;
            int ci = idx[O_B + i];
            if (!need) {
                if (c.field[ci][0])
                    rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': %s takes %s; leave '%s' empty", path,
                                      c.fline[ci], c.col[ci], cols[O_B + i], st_kop_name(s.op),
                                      gemm ? "b, m, n and k" : "rows and cols", cols[O_B + i]);
                continue;
            }
            rc = field_int(&c, ci, cols[O_B + i], 1LL << 40, dims[i], err);
            if (!rc && *dims[i] < 1)
                rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a whole number >= 1", path,
                                  c.fline[ci], c.col[ci], cols[O_B + i]);
            work *= (double)*dims[i];
        }
        if (!rc && ki >= 0 && c.field[ki][0]) {
            if (s.op != ST_KOP_TOPK)
                rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'topk': only a topk row keeps experts; leave it "
                                  "empty for %s", path, c.fline[ki], c.col[ki], st_kop_name(s.op));
            else if (!(rc = field_int(&c, ki, "topk", 1LL << 20, &s.topk, err)) && (s.topk < 1 || s.topk > s.cols))
                rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'topk': %lld experts kept of %lld; give 1 to "
                                  "%lld (the row's cols)", path, c.fline[ki], c.col[ki], s.topk, s.cols, s.cols);
        }
        if (!rc && work > MAX_COUNT)
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: an op of %.3g multiply-adds (or elements): strata counts up "
                              "to 2^53 = 9.0e15; the row's sizes are wrong", path, c.line, work);
        if (rc)
            break;
        if ((rc = append_item((void **)&out->items, &out->cap, &out->n, &s, sizeof s, path, err)))
            break;
    }
    return close_rows(&c, header, nh, &out->n, n0, rc);
}

void st_ops_set_free(st_ops_set *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

int st_read_vidur_network(const char *path, st_net_set *out, st_error *err)
{
    static const char *const cols[4] = {"collective", "size", "num_workers", "devices_per_node"};
    csv c;
    char **header;
    size_t n0 = out->n;
    int nh, rc, idx[5];
    if ((rc = csv_open(&c, path, &header, &nh, err)))
        return rc;
    if ((rc = require_cols(&c, header, nh, cols, 4, idx, "a VIDUR network profile (collective, size, num_workers, "
                           "devices_per_node, time_stats.*.median)", err)))
        return rc;
    idx[4] = -1;
    for (int i = 0; i < nh; i++) {
        size_t l = strlen(header[i]);
        if (!strncmp(header[i], "time_stats.", 11) && l > 18 && !strcmp(header[i] + l - 7, ".median"))
            idx[4] = i;
    }
    if (idx[4] < 0) {
        rc = st_error_set(err, ST_EINVAL, "%s:1:1: no 'time_stats.COLLECTIVE.median' column", path);
        csv_close(&c, header, nh);
        return rc;
    }
    while ((rc = next_data_row(&c, nh, err)) == 1) {
        st_net_sample s;
        long long w, pn;
        double ms;
        rc = 0;
        memset(&s, 0, sizeof s);
        snprintf(s.collective, sizeof s.collective, "%s", c.field[idx[0]]);
        if ((rc = field_number(&c, idx[1], "size", MAX_COUNT, &s.bytes, err)) ||
            (rc = field_int(&c, idx[2], "num_workers", 1 << 20, &w, err)) ||
            (rc = field_int(&c, idx[3], "devices_per_node", 1 << 20, &pn, err)) ||
            (rc = field_number(&c, idx[4], header[idx[4]], MAX_MS, &ms, err)))
            break;
        if (w < 1 || pn < 1 || ms <= 0 || s.bytes < 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: num_workers and devices_per_node must be >= 1, "
                              "size >= 0 and the time > 0 (a timed collective takes some); fix or drop the row",
                              path, c.line);
            break;
        }
        s.workers = (int)w, s.per_node = (int)pn, s.median_s = ms / 1e3, s.line = c.line;
        s.col_collective = c.col[idx[0]], s.col_workers = c.col[idx[2]];
        if ((rc = append_item((void **)&out->items, &out->cap, &out->n, &s, sizeof s, path, err)))
            break;
    }
    return close_rows(&c, header, nh, &out->n, n0, rc);
}

void st_net_set_free(st_net_set *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* Load a JSON file whose root must be an object (naming what it holds in
 * the error otherwise); on success the caller frees doc. */
static int load_object(const char *path, const char *holds, st_ydoc *doc, st_error *err)
{
    int rc = st_ydoc_load_file(doc, path, err);
    if (rc)
        return rc;
    if (!doc->root || doc->root->kind != ST_Y_MAP) {
        st_ydoc_free(doc);
        return st_error_set(err, ST_EINVAL, "%s:1:1: expected a JSON object with %s", path, holds);
    }
    return 0;
}

/* the value of key under map, unless absent or null */
static const st_ynode *present(const st_ynode *map, const char *key)
{
    const st_ynode *v = map ? f_get(map, key) : NULL;
    return v && !st_ynode_is_null(v) ? v : NULL;
}

int st_read_neusight_label(const char *path, st_ns_label *out, st_error *err)
{
    st_ydoc doc;
    memset(out, 0, sizeof *out);
    int rc = load_object(path, "e2e_latency", &doc, err);
    if (rc)
        return rc;
    fctx c = {doc.path, "NeuSight label", err, NULL};
    rc = ST_EINVAL;
    const st_ynode *v = f_get(doc.root, "e2e_latency");
    if (!v) {
        f_error(&c, doc.root, "missing e2e_latency (milliseconds)");
        goto done;
    }
    double ms;
    if (f_node_number(&c, v, "e2e_latency", 1e-9, 1e12, &ms))
        goto done;
    out->e2e_s = ms * 1e-3;
    /* num_layer is informational (null or 0 in some switch labels), but a
     * value that is there must be a layer count */
    const st_ynode *nl = f_get(doc.root, "num_layer");
    if (nl && !st_ynode_is_null(nl) && f_int(&c, doc.root, "num_layer", 0, 100000, &out->num_layer))
        goto done;
    /* the forward / backward split: both parts or neither */
    const st_ynode *fw = present(doc.root, "fw_latency"), *bw = present(doc.root, "bwall_latency");
    if (fw || bw) {
        if (!fw || !bw) {
            f_error(&c, fw ? fw : bw, "has %s but not %s: give both parts of e2e_latency (milliseconds) "
                    "or neither", fw ? "fw_latency" : "bwall_latency", fw ? "bwall_latency" : "fw_latency");
            goto done;
        }
        double f_ms, b_ms;
        if (f_node_number(&c, fw, "fw_latency", 0, 1e12, &f_ms) ||
            f_node_number(&c, bw, "bwall_latency", 0, 1e12, &b_ms))
            goto done;
        /* the parts of the whole: a label whose parts do not add up has
         * one of the three wrong (NeuSight's labels agree to 1e-7) */
        if (fabs(f_ms + b_ms - ms) > 1e-3 * ms) {
            f_error(&c, fw, "fw_latency + bwall_latency = %.6g ms, but e2e_latency is %.6g ms: the forward and "
                    "backward parts must add up to the whole (within 0.1%%)", f_ms + b_ms, ms);
            goto done;
        }
        out->has_split = 1;
        out->fwd_s = f_ms * 1e-3;
        out->bwd_s = b_ms * 1e-3;
    }
    rc = 0;
done:
    st_ydoc_free(&doc);
    return rc;
}

/* The outermost numbered module in an operator's nn_module_stack (the
 * first path ending in ".N": a block of a repeated stack, as
 * "transformer.h.0"): 1 with the path and N, 0 when there is none, -1 when
 * the text cannot be matched (not valid UTF-8). */
static int block_of(const st_regex *re, const char *meta, char *out, size_t size, long long *index)
{
    long long st[3], en[3];
    int r = st_regex_groups(re, meta, st, en, 3);
    if (r < 0)
        return -1;
    if (r != 1 || st[1] < 0 || st[2] < 0)
        return 0;
    size_t n = (size_t)(en[1] - st[1]);
    if (n >= size)
        n = size - 1;
    memcpy(out, meta + st[1], n);
    out[n] = '\0';
    *index = strtoll(meta + st[2], NULL, 10);
    return 1;
}

int st_read_neusight_profile(const char *path, long long num_layer, st_ns_profile *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    csv c;
    char **h;
    int nh, rc;
    if ((rc = csv_open(&c, path, &h, &nh, err)))
        return rc;
    static const char *const names[4] = {"fw_latency", "bw_latency", "acc_latency", "meta"};
    int idx[4];
    if ((rc = require_cols(&c, h, nh, names, 4, idx, "a NeuSight operator profile (fw_latency, bw_latency, "
                           "acc_latency, meta)", err)))
        return rc;
    st_regex *re = NULL;
    if ((rc = st_regex_compile(&re, "\\('([A-Za-z_][\\w.]*\\.([0-9]+))'", 0, err))) {
        csv_close(&c, h, nh);
        return rc;
    }
    double in[2] = {0, 0}, rest[2] = {0, 0};
    /* not "the rest + num_layer x block 0": two repeated stacks (an
     * encoder's block 0 and a decoder's), or a block other than 0 traced */
    int not_one_block = 0;
    while ((rc = next_data_row(&c, nh, err)) == 1) {
        double v[3];
        for (int k = 0; k < 3 && rc == 1; k++)
            rc = field_number(&c, idx[k], names[k], MAX_MS, &v[k], err) ? ST_EINVAL : 1;
        if (rc != 1)
            break;
        char blk[64];
        long long index = 0;
        double *to = rest;
        int b = block_of(re, c.field[idx[3]], blk, sizeof blk, &index);
        if (b < 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'meta': not valid UTF-8; expected the operator's "
                              "nn_module_stack as text", path, c.fline[idx[3]], c.col[idx[3]]);
            break;
        }
        if (b && index != 0) {
            not_one_block = 1;
        } else if (b) {
            if (!out->block[0])
                snprintf(out->block, sizeof out->block, "%s", blk);
            if (strcmp(blk, out->block) != 0)
                not_one_block = 1;
            to = in;
            out->block_ops++;
        }
        to[0] += v[0];
        to[1] += v[1] + v[2];
    }
    st_regex_free(re);
    csv_close(&c, h, nh);
    if (rc < 0) {
        memset(out, 0, sizeof *out); /* nothing half-read */
        return rc;
    }
    if (num_layer <= 0 || !out->block_ops || not_one_block)
        return 0;
    out->ok = 1;
    out->fwd_s = (rest[0] + (double)num_layer * in[0]) * 1e-3;
    out->bwd_s = (rest[1] + (double)num_layer * in[1]) * 1e-3;
    return 0;
}

int st_read_vllm_meta(const char *path, st_vllm_meta *m, st_error *err)
{
    st_ydoc doc;
    int rc = load_object(path, "model and engine_kwargs", &doc, err);
    if (rc)
        return rc;
    fctx c = {doc.path, "vLLM run meta", err, NULL};
    rc = ST_EINVAL;
    const st_ynode *ek = present(doc.root, "engine_kwargs"), *kv = present(doc.root, "kv_cache");
    if (ek && ek->kind != ST_Y_MAP) {
        f_error(&c, ek, "engine_kwargs must be an object");
        goto done;
    }
    if (kv && kv->kind != ST_Y_MAP) {
        f_error(&c, kv, "kv_cache must be an object (the engine's logged KV cache: num_gpu_blocks, ...)");
        goto done;
    }
    m->engine_line = ek ? ek->line : 1;
    m->engine_col = ek ? ek->col : 1;
    {
        const st_ynode *sv = present(doc.root, "schema_version");
        long long ver = 1;
        if (sv && f_node_int(&c, sv, "schema_version", 0, 1LL << 30, &ver))
            goto done;
        if (ver != 1) {
            f_error(&c, sv, "schema_version %lld: strata reads version 1 of the run format", ver);
            goto done;
        }
    }
    /* the serving types vLLM takes; strata serves 16-bit activations (the
     * checkpoint's type under "auto") and models an FP8 KV cache */
    {
        static const char *const dtypes[] = {"auto", "bfloat16", "float16", "half", "bf16", "fp16"};
        static const char *const kvtypes[] = {"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"};
        const char *const *lists[2] = {dtypes, kvtypes};
        const char *keys[2] = {"dtype", "kv_cache_dtype"};
        for (int t = 0; t < 2; t++) {
            const st_ynode *v = present(ek, keys[t]);
            if (!v)
                continue;
            if (v->kind != ST_Y_SCALAR || !v->scalar) {
                f_error(&c, v, "engine_kwargs.%s: expected a string", keys[t]);
                goto done;
            }
            int hit = -1;
            for (int k = 0; k < 6; k++)
                if (!strcmp(v->scalar, lists[t][k]))
                    hit = k;
            if (hit < 0) {
                f_error(&c, v, "engine_kwargs.%s '%s' is not modelled: strata serves %s", keys[t], v->scalar,
                        t ? "a 16-bit or an FP8 KV cache (auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2)"
                          : "16-bit activations (auto, bfloat16, float16, half)");
                goto done;
            }
            if (t == 1)
                m->kv_fp8 = hit >= 3;
            else
                m->dtype = hit == 0 ? NULL : (hit == 1 || hit == 4) ? "bf16" : "fp16";
        }
    }
    m->vllm_major = m->vllm_minor = -1;
    {
        /* the release, for what changed between them (the admission gate of 0.19) */
        const st_ynode *vv = present(doc.root, "vllm_version");
        int ma = 0, mi = 0; /* X.Y, then anything: 0.19.0, 0.19.0rc1, 0.19.1+cu128 */
        if (vv && (vv->kind != ST_Y_SCALAR || sscanf(vv->scalar, "%d.%d", &ma, &mi) != 2 || ma < 0 || mi < 0)) {
            f_error(&c, vv, "vllm_version: expected a release such as \"0.19.0\"");
            goto done;
        }
        if (vv)
            m->vllm_major = ma, m->vllm_minor = mi;
    }
    m->model[0] = 0;
    {
        const st_ynode *mv = present(doc.root, "model");
        m->model_line = mv ? mv->line : 1;
        m->model_col = mv ? mv->col : 1;
    }
    if (f_string(&c, doc.root, "model", m->model, sizeof m->model) || !m->model[0]) {
        if (!m->model[0])
            st_error_set(err, ST_EINVAL, "%s:1:1: no \"model\" (the Hugging Face name of the served model)", path);
        goto done;
    }
    struct {
        const st_ynode *map;
        const char *key;
        long long lo, hi, *out;
    } ints[] = {
        {ek, "tensor_parallel_size", 1, 1024, &m->tp},   {ek, "data_parallel_size", 1, 64, &m->dp},
        {ek, "max_num_seqs", 1, 65536, &m->max_num_seqs}, {ek, "max_num_batched_tokens", 1, 1 << 24, &m->max_batched_tokens},
        {ek, "max_model_len", 1, 1 << 26, &m->max_model_len}, {ek, "seed", 0, 1LL << 62, &m->seed},
        {kv, "block_size", 1, 1024, &m->block_size},    {kv, "num_gpu_blocks", 1, 1LL << 40, &m->num_gpu_blocks},
    };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        const st_ynode *v = present(ints[i].map, ints[i].key);
        if (v && f_node_int(&c, v, ints[i].key, ints[i].lo, ints[i].hi, ints[i].out))
            goto done;
    }
    if ((present(ek, "enable_expert_parallel") && f_bool(&c, ek, "enable_expert_parallel", &m->ep)) ||
        (present(kv, "enable_prefix_caching") && f_bool(&c, kv, "enable_prefix_caching", &m->prefix_cache)))
        goto done;
    const st_ynode *u = present(kv, "gpu_memory_utilization");
    if (u && f_node_number(&c, u, "gpu_memory_utilization", 0.01, 1, &m->gpu_mem_util))
        goto done;
    rc = 0;
done:
    st_ydoc_free(&doc);
    return rc;
}

/* ---- edge reference latencies ------------------------------------------- */
static const char *const ref_cols[] = {"model", "workload", "preset", "dtype", "latency_ms", "role"};
#define REF_NCOL 6

/* Split a line at commas into at most REF_NCOL fields (in place); the
 * column each starts at in *col. */
static int split(char *line, char **f, int *col)
{
    int n = 0;
    char *p = line;
    while (n < REF_NCOL + 1) {
        f[n] = p;
        col[n] = (int)(p - line) + 1;
        n++;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    for (int i = 0; i < n; i++) {
        char *e = f[i] + strlen(f[i]);
        while (e > f[i] && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\n'))
            *--e = '\0';
        while (*f[i] == ' ')
            f[i]++;
    }
    return n;
}

int st_read_edge_refs(const char *path, st_edge_ref_row **rows, size_t *nrows, st_error *err)
{
    *rows = NULL;
    *nrows = 0;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return st_error_set(err, ST_EINVAL, "%s is a folder; give the reference CSV file", path);
    FILE *f = fopen(path, "r");
    if (!f)
        return st_error_set(err, ST_ENOTFOUND, "cannot read %s: %s", path, strerror(errno));
    char buf[1024];
    int line = 0, header = 0, rc = 0;
    size_t n_rows = 0, cap_rows = 0;
    st_edge_ref_row *out = NULL;
    while (!rc && fgets(buf, sizeof buf, f)) {
        line++;
        if (!strchr(buf, '\n') && !feof(f)) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: line longer than %zu characters", path, line,
                              sizeof buf - 2);
            break;
        }
        char *p = buf;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
            continue;
        char *fld[REF_NCOL + 1];
        int col[REF_NCOL + 1];
        int n = split(buf, fld, col);
        if (!header) {
            for (int i = 0; i < REF_NCOL + 1 && !rc; i++)
                if (i < REF_NCOL ? i >= n || strcmp(fld[i], ref_cols[i]) != 0 : n > REF_NCOL)
                    rc = st_error_set(err, ST_EINVAL,
                                      "%s:%d:%d: expected the header model,workload,preset,dtype,latency_ms,role%s",
                                      path, line, i < n ? col[i] : 1,
                                      (unsigned char)buf[0] == 0xEF ? " (the file starts with a byte-order mark: "
                                                                      "save it as plain UTF-8)" : "");
            header = 1;
            continue;
        }
        if (n != REF_NCOL) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: %d fields, expected %d (%s)", path, line,
                              n > REF_NCOL ? col[REF_NCOL] : 1, n, REF_NCOL,
                              "model,workload,preset,dtype,latency_ms,role");
            break;
        }
        if (n_rows == cap_rows) {
            size_t cap = cap_rows ? 2 * cap_rows : 16;
            st_edge_ref_row *nr = realloc(out, cap * sizeof *nr);
            if (!nr) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                break;
            }
            out = nr;
            cap_rows = cap;
        }
        st_edge_ref_row *r = &out[n_rows];
        memset(r, 0, sizeof *r);
        r->line = line;
        memcpy(r->col, col, sizeof r->col);
        static const size_t cap[3] = {sizeof r->model, sizeof r->workload, sizeof r->preset};
        for (int i = 0; i < 3 && !rc; i++)
            if (strlen(fld[i]) >= cap[i] || !fld[i][0])
                rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: %s %s", path, line, col[i], ref_cols[i],
                                  fld[i][0] ? "is too long (a preset or workload id, or a short path)" : "is empty");
        if (rc)
            break;
        snprintf(r->model, sizeof r->model, "%s", fld[0]);
        snprintf(r->workload, sizeof r->workload, "%s", fld[1]);
        snprintf(r->preset, sizeof r->preset, "%s", fld[2]);
        if (st_dtype_parse(fld[3], &r->dtype) != 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: unknown dtype '%s' (fp32, fp16, ...)", path, line, col[3],
                              fld[3]);
            break;
        }
        char *end;
        errno = 0;
        double ms = strtod(fld[4], &end);
        if (end == fld[4] || *end || errno || strspn(fld[4], "0123456789.eE+-") != strlen(fld[4]) ||
            !(ms >= 1e-3) || ms > 1e7) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: latency_ms '%s' is not a decimal number of "
                                              "milliseconds from 0.001 (1 us) to 1e7", path, line, col[4], fld[4]);
            break;
        }
        r->ref_s = ms * 1e-3;
        if (!strcmp(fld[5], "fit"))
            r->fit = 1;
        else if (strcmp(fld[5], "test") != 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: role '%s' must be fit or test", path, line, col[5], fld[5]);
            break;
        }
        n_rows++;
    }
    if (!rc && ferror(f))
        rc = st_error_set(err, ST_EIO, "reading %s failed", path);
    fclose(f);
    if (!rc && !header)
        rc = st_error_set(err, ST_EINVAL, "%s:1:1: no header line (model,workload,preset,dtype,latency_ms,role)", path);
    if (!rc && n_rows == 0)
        rc = st_error_set(err, ST_EINVAL, "%s:%d:1: no reference rows", path, line);
    if (rc) {
        free(out);
        return rc;
    }
    *rows = out;
    *nrows = n_rows;
    return 0;
}
