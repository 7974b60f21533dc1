/* A streaming JSON writer with deterministic number formatting. */
#include "config.h"
#include "core/core.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_format_double(char *buf, size_t n, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "null"); /* JSON has no inf/nan */
        return;
    }
    if (v == 0) {
        snprintf(buf, n, "0");
        return;
    }
    /* The shortest %.Ng that reads back exactly: stable across platforms
     * with correctly rounded printf/strtod (glibc). More digits never read
     * back worse, so the shortest is found by bisection (sweeps export
     * millions of numbers). */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, n, "%.*g", mid, v);
        if (strtod(buf, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(buf, n, "%.*g", lo, v);
}

static void indent(st_json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

static void write_escaped(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* Comma, newline and key before a value in the current container. */
static void begin_value(st_json *j, const char *key)
{
    if (j->need_comma[j->depth])
        fputc(',', j->out);
    j->need_comma[j->depth] = 1;
    if (j->depth > 0)
        indent(j);
    if (key) {
        write_escaped(j->out, key);
        fputs(j->pretty ? ": " : ":", j->out);
    }
}

void st_json_init(st_json *j, FILE *out, int pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

static void open_container(st_json *j, const char *key, char c)
{
    begin_value(j, key);
    fputc(c, j->out);
    if (j->depth < 63)
        j->depth++;
    j->need_comma[j->depth] = 0;
}

static void close_container(st_json *j, char c)
{
    int had = j->need_comma[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had)
        indent(j);
    fputc(c, j->out);
}

void st_json_begin_object(st_json *j, const char *key) { open_container(j, key, '{'); }
void st_json_end_object(st_json *j) { close_container(j, '}'); }
void st_json_begin_array(st_json *j, const char *key) { open_container(j, key, '['); }
void st_json_end_array(st_json *j) { close_container(j, ']'); }

void st_json_string(st_json *j, const char *key, const char *value)
{
    begin_value(j, key);
    write_escaped(j->out, value ? value : "");
}

void st_json_number(st_json *j, const char *key, double value)
{
    char buf[40];
    st_format_double(buf, sizeof buf, value);
    begin_value(j, key);
    fputs(buf, j->out);
}

void st_json_int(st_json *j, const char *key, long long value)
{
    begin_value(j, key);
    fprintf(j->out, "%lld", value);
}

void st_json_bool(st_json *j, const char *key, int value)
{
    begin_value(j, key);
    fputs(value ? "true" : "false", j->out);
}

void st_json_null(st_json *j, const char *key)
{
    begin_value(j, key);
    fputs("null", j->out);
}

void st_json_finish(st_json *j)
{
    fputc('\n', j->out);
    fflush(j->out);
}

/* A flat JSON object on one line (JSONL): a scan, not a parser, so that
 * million-line traces read fast. */
int st_jsonl_number(const char *line, const char *key, double *v, int *col)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p)
        return 0;
    const char *q = p + strlen(pat);
    while (*q == ' ' || *q == '\t')
        q++;
    if (*q != ':') {
        *col = (int)(q - line) + 1;
        return -1;
    }
    q++;
    while (*q == ' ' || *q == '\t')
        q++;
    char *e;
    errno = 0;
    *v = strtod(q, &e);
    if (e == q || errno || !isfinite(*v)) {
        *col = (int)(q - line) + 1;
        return -1;
    }
    return 1;
}

