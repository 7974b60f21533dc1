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
    /* a whole number that doubles count exactly (bytes, tokens) in full,
     * never as 2.250297344e+10: integer parsers read it */
    if (fabs(v) < 9007199254740992.0 && v == floor(v)) {
        snprintf(buf, n, "%.0f", v);
        return;
    }
    /* The shortest %.Ng that reads back exactly: stable across platforms
     * with correctly rounded printf/strtod (glibc). %.15g first: when it
     * reads back, it is that shortest text already (a shorter N that reads
     * back is v to within half an ulp, so v rounded to 15 digits is the
     * same decimal, and %g drops the trailing zeros; the notation agrees
     * too, since a non-integer below 2^53 prints its exponent + 1 digits or
     * more, and past 2^53 both print in e-notation). Otherwise 16, then 17,
     * which always reads back. Sweeps export millions of numbers: most
     * computed doubles need 16-17 digits, where this makes 2-3 conversions
     * against the 9-10 of a bisection over 1..17. */
    snprintf(buf, n, "%.15g", v); /* literal formats: glibc takes a slower path for %.*g */
    if (strtod(buf, NULL) == v)
        return;
    snprintf(buf, n, "%.16g", v);
    if (strtod(buf, NULL) == v)
        return;
    snprintf(buf, n, "%.17g", v);
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

/* One line of JSONL, checked against RFC 8259 as it is read: a scanner
 * with no tree, so that million-line traces read fast. */
typedef struct jl {
    const char *s, *p;
    const char *const *keys;
    int nkeys;
    double *v;
    int *found;
    char *why;
    size_t whyn;
} jl;

static int jl_fail(jl *j, const char *at, const char *msg)
{
    j->p = at;
    snprintf(j->why, j->whyn, "%s", msg);
    return -1;
}

/* White space inside the line; its end (NUL, \n or \r\n) ends the object. */
static void jl_ws(jl *j)
{
    while (*j->p == ' ' || *j->p == '\t')
        j->p++;
}

static int jl_eol(const char *p) { return !*p || *p == '\n' || (*p == '\r' && (!p[1] || p[1] == '\n')); }

static int jl_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* A string at j->p (the opening quote); its raw bytes are [*b, *e). */
static int jl_string(jl *j, const char **b, const char **e)
{
    const char *p = j->p + 1;
    *b = p;
    for (;;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            break;
        if (jl_eol(p))
            return jl_fail(j, p, "unterminated string");
        if (c < 0x20)
            return jl_fail(j, p, "control character in a string (escape it)");
        if (c == '\\') {
            p++;
            if (*p == 'u') {
                if (!jl_hex(p[1]) || !jl_hex(p[2]) || !jl_hex(p[3]) || !jl_hex(p[4]))
                    return jl_fail(j, p, "\\u needs four hex digits");
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
                return jl_fail(j, p - 1, "unknown escape in a string");
            }
        }
        p++;
    }
    *e = p;
    j->p = p + 1;
    return 0;
}

/* A number in JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int jl_number(jl *j, double *out)
{
    const char *p = j->p, *start = p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return jl_fail(j, start, "expected a value (number, string, object, array, true, false or null)");
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return jl_fail(j, p, "expected a digit after the decimal point");
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return jl_fail(j, p, "expected a digit in the exponent");
        while (*p >= '0' && *p <= '9')
            p++;
    }
    double v = strtod(start, NULL); /* the text is JSON's grammar, a subset of strtod's */
    if (!isfinite(v))
        return jl_fail(j, start, "number out of range");
    *out = v;
    j->p = p;
    return 0;
}

static int jl_value(jl *j, int depth, int *is_number, double *num);

static int jl_object(jl *j, int depth, int top)
{
    j->p++; /* { */
    jl_ws(j);
    if (*j->p == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        if (*j->p != '"')
            return jl_fail(j, j->p, "expected a key in double quotes");
        const char *kat = j->p, *kb, *ke;
        if (jl_string(j, &kb, &ke))
            return -1;
        int want = -1;
        if (top)
            for (int i = 0; i < j->nkeys; i++)
                if (strlen(j->keys[i]) == (size_t)(ke - kb) && !memcmp(j->keys[i], kb, (size_t)(ke - kb)))
                    want = i;
        if (want >= 0 && j->found[want]) {
            j->p = kat;
            snprintf(j->why, j->whyn, "duplicate key \"%s\" (give each key once)", j->keys[want]);
            return -1;
        }
        jl_ws(j);
        if (*j->p != ':')
            return jl_fail(j, j->p, "expected ':' after the key");
        j->p++;
        jl_ws(j);
        const char *vat = j->p;
        int isnum = 0;
        double num = 0;
        if (jl_value(j, depth + 1, &isnum, &num))
            return -1;
        if (want >= 0) {
            if (!isnum) {
                j->p = vat;
                snprintf(j->why, j->whyn, "\"%s\" must be a number", j->keys[want]);
                return -1;
            }
            j->found[want] = (int)(vat - j->s) + 1;
            j->v[want] = num;
        }
        jl_ws(j);
        if (*j->p == '}') {
            j->p++;
            return 0;
        }
        if (*j->p != ',')
            return jl_fail(j, j->p, jl_eol(j->p) ? "the object is not closed (expected '}')" : "expected ',' or '}'");
        j->p++;
        jl_ws(j);
    }
}

static int jl_value(jl *j, int depth, int *is_number, double *num)
{
    if (depth > 64) /* a bound on the recursion, so no line can exhaust the stack */
        return jl_fail(j, j->p, "nested more than 64 deep");
    const char *p = j->p;
    if (*p == '{')
        return jl_object(j, depth, 0);
    if (*p == '[') {
        j->p++;
        jl_ws(j);
        if (*j->p == ']') {
            j->p++;
            return 0;
        }
        for (;;) {
            int n = 0;
            double d = 0;
            if (jl_value(j, depth + 1, &n, &d))
                return -1;
            jl_ws(j);
            if (*j->p == ']') {
                j->p++;
                return 0;
            }
            if (*j->p != ',')
                return jl_fail(j, j->p, jl_eol(j->p) ? "the array is not closed (expected ']')" : "expected ',' or ']'");
            j->p++;
            jl_ws(j);
        }
    }
    if (*p == '"') {
        const char *b, *e;
        return jl_string(j, &b, &e);
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++)
        if (!strncmp(p, words[i], strlen(words[i]))) {
            j->p = p + strlen(words[i]);
            return 0;
        }
    *is_number = 1;
    return jl_number(j, num);
}

int st_jsonl_parse(const char *line, const char *const *keys, int nkeys, double *v, int *found, int *col,
                   char *why, size_t whyn)
{
    jl j = {line, line, keys, nkeys, v, found, why, whyn};
    for (int i = 0; i < nkeys; i++)
        found[i] = 0;
    jl_ws(&j);
    if (*j.p != '{') {
        jl_fail(&j, j.p, "expected a JSON object ('{') on each line");
    } else if (!jl_object(&j, 0, 1)) {
        jl_ws(&j);
        if (jl_eol(j.p))
            return 0;
        jl_fail(&j, j.p, "text after the object (one object per line)");
    }
    *col = (int)(j.p - line) + 1;
    return -1;
}

