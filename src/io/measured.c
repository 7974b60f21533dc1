/*
 * Readers for measured data: NeuSight kernel CSVs and VIDUR MLP profiles.
 * CSV per RFC 4180 (quoted fields, doubled quotes, CRLF); columns are found
 * by their header names, so column order and extra columns do not matter.
 */
#include "config.h"
#include "io/measured.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[ST_MEAS_OP_COUNT] = {
    "bmm", "linear", "conv", "add", "addu", "mul", "mulu", "div", "divu",
    "pow", "powu", "gelu", "relu", "tanh", "ln", "softmax",
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
    int line;       /* line of the record being read (1-based) */
    char *field[MAX_FIELDS];
    int col[MAX_FIELDS]; /* starting column of each field */
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
    c->line++;
    start_line = c->line;
    c->n = 0;
    for (;;) {
        int quoted = 0;
        if (c->n == MAX_FIELDS)
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: more than %d columns", c->path,
                                start_line, col, MAX_FIELDS);
        c->field[c->n] = c->scratch + out;
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
                                        start_line, c->col[c->n - 1]);
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
                if (ch == '\n') {
                    c->line++;
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

static int find_col(char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static int field_number(const csv *c, int idx, const char *name, double min, double *out,
                        st_error *err)
{
    char *end;
    const char *s = c->field[idx];
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || strpbrk(s, "xXnNiI") || v < min)
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a number >= %g, "
                            "found '%.40s'", c->path, c->line, c->col[idx], name, min, s);
    *out = v;
    return 0;
}

static int field_int(const csv *c, int idx, const char *name, long long *out, st_error *err)
{
    char *end;
    const char *s = c->field[idx];
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || errno == ERANGE)
        return st_error_set(err, ST_EINVAL, "%s:%d:%d: column '%s': expected a whole number "
                            ">= 0, found '%.40s'", c->path, c->line, c->col[idx], name, s);
    *out = v;
    return 0;
}

static int csv_open(csv *c, const char *path, char ***header, int *nheader, st_error *err)
{
    int rc;
    memset(c, 0, sizeof *c);
    c->path = path;
    if ((rc = read_all(path, &c->buf, &c->len, err)))
        return rc;
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

/* ---- NeuSight ------------------------------------------------------------ */
enum { C_OP, C_LAT, C_DEV, C_KNAME, C_GX, C_GY, C_GZ, C_BX, C_BY, C_BZ, C_B, C_M, C_N, C_K,
       C_H, C_CIN, C_COUT, C_KS, C_SIZE, C_STRIDE, C_PAD, N_COLS };
static const char *const col_names[N_COLS] = {
    "OPName", "Latency", "Device", "Kernel Name", "Grid x", "Grid y", "Grid z", "Block x",
    "Block y", "Block z", "B", "M", "N", "K", "H", "Input_Channel", "Output_Channel",
    "Kernel_Szie", "Input_Size", "Stride", "Padding",
};

int st_read_neusight_csv(const char *path, st_kernel_set *out, st_error *err)
{
    csv c;
    char **header;
    int nh, rc, idx[N_COLS];
    if ((rc = csv_open(&c, path, &header, &nh, err)))
        return rc;
    for (int i = 0; i < N_COLS; i++)
        idx[i] = find_col(header, nh, col_names[i]);
    for (int i = 0; i <= C_DEV; i++)
        if (idx[i] < 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:1:1: no '%s' column; expected a NeuSight "
                              "kernel CSV (OPName, Latency, Device, ...)", path, col_names[i]);
            csv_close(&c, header, nh);
            return rc;
        }
    while ((rc = next_record(&c, err)) == 1) {
        st_kernel_sample s;
        st_meas_op op;
        double v;
        rc = 0;
        if (c.n == 1 && c.field[0][0] == '\0')
            continue; /* blank line */
        if (c.n != nh) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: %d columns, the header has %d", path,
                              c.line, c.n, nh);
            break;
        }
        if (st_meas_op_parse(c.field[idx[C_OP]], &op) != 0)
            continue; /* an op strata does not calibrate */
        memset(&s, 0, sizeof s);
        s.op = op;
        s.line = c.line;
        snprintf(s.device, sizeof s.device, "%s", c.field[idx[C_DEV]]);
        if (idx[C_KNAME] >= 0) {
            const char *k = c.field[idx[C_KNAME]];
            size_t n = strcspn(k, "(");
            while (n > 0 && k[n - 1] == ' ')
                n--;
            snprintf(s.kernel_name, sizeof s.kernel_name, "%.*s", (int)n, k);
        }
        if ((rc = field_number(&c, idx[C_LAT], "Latency", 0, &v, err)))
            break;
        if (v <= 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'Latency': expected a time > 0 "
                              "ms, found '%s'", path, c.line, c.col[idx[C_LAT]],
                              c.field[idx[C_LAT]]);
            break;
        }
        s.latency_s = v / 1e3; /* ms -> s; division rounds correctly */
        {
            /* the shape columns this op has */
            static const int gemm[] = {C_B, C_M, C_N, C_K};
            static const int vec[] = {C_B, C_H};
            static const int conv[] = {C_B, C_CIN, C_COUT, C_KS, C_SIZE, C_STRIDE, C_PAD};
            long long *gemm_dst[] = {&s.b, &s.m, &s.n, &s.k};
            long long *vec_dst[] = {&s.b, &s.n};
            long long *conv_dst[] = {&s.b, &s.c_in, &s.c_out, &s.kernel, &s.size, &s.stride,
                                     &s.pad};
            const int *cols = op == ST_MEAS_CONV ? conv : (op <= ST_MEAS_LINEAR ? gemm : vec);
            long long **dst = op == ST_MEAS_CONV ? conv_dst : (op <= ST_MEAS_LINEAR ? gemm_dst
                                                                                   : vec_dst);
            int n = op == ST_MEAS_CONV ? 7 : (op <= ST_MEAS_LINEAR ? 4 : 2);
            for (int i = 0; i < n && rc == 0; i++) {
                if (idx[cols[i]] < 0) {
                    rc = st_error_set(err, ST_EINVAL, "%s:1:1: op '%s' needs a '%s' column",
                                      path, op_names[op], col_names[cols[i]]);
                    break;
                }
                errno = 0;
                rc = field_int(&c, idx[cols[i]], col_names[cols[i]], dst[i], err);
            }
            for (int i = 0; i < 3 && rc == 0; i++) {
                if (idx[C_GX + i] >= 0 && c.field[idx[C_GX + i]][0]) {
                    double g;
                    if ((rc = field_number(&c, idx[C_GX + i], col_names[C_GX + i], 0, &g, err)))
                        break;
                    s.grid[i] = (long long)g;
                }
                if (idx[C_BX + i] >= 0 && c.field[idx[C_BX + i]][0]) {
                    double b;
                    if ((rc = field_number(&c, idx[C_BX + i], col_names[C_BX + i], 0, &b, err)))
                        break;
                    s.block[i] = (long long)b;
                }
            }
        }
        if (rc)
            break;
        if (grow((void **)&out->items, &out->cap, out->n, sizeof *out->items)) {
            rc = st_error_set(err, ST_ENOMEM, "%s: out of memory", path);
            break;
        }
        out->items[out->n++] = s;
    }
    csv_close(&c, header, nh);
    return rc < 0 ? rc : 0;
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
    size_t n = 0, cap = 0;
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
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = st_read_neusight_csv(path, out, err);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

void st_kernel_set_free(st_kernel_set *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* ---- VIDUR ----------------------------------------------------------------- */
int st_read_vidur_mlp(const char *path, st_vidur_set *out, st_error *err)
{
    static const char *const stats[5] = {"min", "max", "mean", "median", "std"};
    static const char *const meta[] = {"n_head", "n_kv_head", "n_embd", "n_expanded_embd",
                                       "vocab_size", "use_gated_mlp", "num_tokens",
                                       "num_tensor_parallel_workers"};
    csv c;
    char **header;
    int nh, rc, midx[8];
    char ops[32][32];
    int opcol[32][5], nops = 0;
    if ((rc = csv_open(&c, path, &header, &nh, err)))
        return rc;
    /* gpu and ORG/MODEL from .../compute/GPU/ORG/MODEL/mlp.csv */
    {
        const char *p = strstr(path, "/compute/");
        out->gpu[0] = out->model[0] = '\0';
        if (p) {
            const char *g = p + 9, *o = strchr(g, '/'), *m = o ? strchr(o + 1, '/') : NULL;
            const char *f = m ? strchr(m + 1, '/') : NULL;
            if (o && m && f) {
                snprintf(out->gpu, sizeof out->gpu, "%.*s", (int)(o - g), g);
                snprintf(out->model, sizeof out->model, "%.*s", (int)(f - o - 1), o + 1);
            }
        }
    }
    for (int i = 0; i < 8; i++)
        if ((midx[i] = find_col(header, nh, meta[i])) < 0) {
            rc = st_error_set(err, ST_EINVAL, "%s:1:1: no '%s' column; expected a VIDUR "
                              "mlp.csv", path, meta[i]);
            csv_close(&c, header, nh);
            return rc;
        }
    /* operators: every time_stats.OP.mean column with its four siblings */
    for (int i = 0; i < nh && nops < 32; i++) {
        const char *h = header[i];
        size_t l = strlen(h);
        if (strncmp(h, "time_stats.", 11) != 0 || l < 16 || strcmp(h + l - 5, ".mean") != 0)
            continue;
        snprintf(ops[nops], sizeof ops[nops], "%.*s", (int)(l - 16), h + 11);
        int complete = 1;
        for (int s = 0; s < 5; s++) {
            char name[80];
            snprintf(name, sizeof name, "time_stats.%s.%s", ops[nops], stats[s]);
            opcol[nops][s] = find_col(header, nh, name);
            complete &= opcol[nops][s] >= 0;
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
            rc = st_error_set(err, ST_EINVAL, "%s:%d:1: %d columns, the header has %d", path,
                              c.line, c.n, nh);
            break;
        }
        memset(&base, 0, sizeof base);
        for (int i = 0; i < 8 && rc == 0; i++) {
            if (i == 5) { /* use_gated_mlp: True/False */
                const char *s = c.field[midx[i]];
                if (strcmp(s, "True") && strcmp(s, "False") && strcmp(s, "true") &&
                    strcmp(s, "false"))
                    rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: column 'use_gated_mlp': "
                                      "expected True or False, found '%.20s'", path, c.line,
                                      c.col[midx[i]], s);
                v[i] = s[0] == 'T' || s[0] == 't';
                continue;
            }
            errno = 0;
            rc = field_int(&c, midx[i], meta[i], &v[i], err);
        }
        if (rc)
            break;
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
            double x[5];
            snprintf(s.op, sizeof s.op, "%s", ops[o]);
            for (int k = 0; k < 5 && rc == 0; k++)
                rc = field_number(&c, opcol[o][k], header[opcol[o][k]], 0, &x[k], err);
            if (rc)
                break;
            s.min_s = x[0] / 1e3;
            s.max_s = x[1] / 1e3;
            s.mean_s = x[2] / 1e3;
            s.median_s = x[3] / 1e3;
            s.std_s = x[4] / 1e3;
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
    return rc < 0 ? rc : 0;
}

void st_vidur_set_free(st_vidur_set *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}
