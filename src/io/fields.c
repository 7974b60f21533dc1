/* Typed readers over the YAML tree, with the error sentences users see. */
#include "config.h"
#include "io/fields.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int f_error(const fctx *c, const st_ynode *n, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return st_error_set(c->err, ST_EINVAL, "%s:%d:%d: %s", c->path, n ? n->line : 1,
                        n ? n->col : 1, msg);
}

const st_ynode *f_get(const st_ynode *map, const char *key)
{
    if (!map || map->kind != ST_Y_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->scalar, key) == 0)
            return map->items[i];
    return NULL;
}

/* A short rendering of what was found, for messages. */
static const char *found(const st_ynode *v, char *buf, size_t n)
{
    if (v->kind != ST_Y_SCALAR) {
        snprintf(buf, n, "%s", st_ykind_name(v->kind));
        return buf;
    }
    if (st_ynode_is_null(v)) {
        snprintf(buf, n, "no value");
        return buf;
    }
    /* printable excerpt */
    size_t j = 0;
    buf[j++] = '\'';
    for (const unsigned char *p = (const unsigned char *)v->scalar; *p && j + 5 < n; p++)
        buf[j++] = (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p;
    if (strlen(v->scalar) > n - 6 && j + 4 < n) {
        buf[j++] = '.';
        buf[j++] = '.';
    }
    buf[j++] = '\'';
    buf[j] = '\0';
    return buf;
}

int f_check_map(const fctx *c, const st_ynode *n, const fkey *keys, size_t nkeys)
{
    char missing[512] = "";
    size_t nmissing = 0;
    if (!n || n->kind != ST_Y_MAP) {
        char buf[96];
        return f_error(c, n, "%s: expected a mapping of `key: value` lines, found %s", c->what,
                       n ? found(n, buf, sizeof buf) : "nothing");
    }
    for (size_t i = 0; i < n->n; i++) {
        const char *k = n->keys[i]->scalar;
        size_t j;
        for (j = 0; j < nkeys; j++)
            if (strcmp(k, keys[j].key) == 0)
                break;
        if (j == nkeys) {
            const char *names[64];
            size_t m = nkeys < 64 ? nkeys : 64;
            for (size_t t = 0; t < m; t++)
                names[t] = keys[t].key;
            const char *s = st_suggest(k, names, m);
            if (s)
                return f_error(c, n->keys[i], "%s: unknown key '%s'; did you mean '%s'?", c->what,
                               k, s);
            return f_error(c, n->keys[i], "%s: unknown key '%s' (see %s for the keys this file kind takes)",
                           c->what, k, c->doc ? c->doc : "strata-presets(5) / strata-workloads(5)");
        }
    }
    for (size_t j = 0; j < nkeys; j++) {
        const st_ynode *v = f_get(n, keys[j].key);
        /* a required key written without a value: point at it */
        if (keys[j].required && v && st_ynode_is_null(v))
            return f_error(c, v, "%s: key '%s' has no value; give %s", c->what, keys[j].key, keys[j].expect);
        if (keys[j].required && !v) {
            size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s'%s' (%s)", nmissing ? ", " : "",
                     keys[j].key, keys[j].expect);
            nmissing++;
        }
    }
    if (nmissing)
        return f_error(c, n, "%s: missing required key%s %s", c->what, nmissing > 1 ? "s" : "",
                       missing);
    return 0;
}

static int node_number(const fctx *c, const st_ynode *v, const char *key, double min,
                       double max, const char *unit, double *out)
{
    char buf[96], range[96];
    char *end;
    double x;
    snprintf(range, sizeof range, "a number in [%g, %g]%s%s%s", min, max,
             unit && *unit ? " (" : "", unit && *unit ? unit : "", unit && *unit ? ")" : "");
    if (v->kind != ST_Y_SCALAR || st_ynode_is_null(v))
        return f_error(c, v, "key '%s': expected %s, found %s", key, range,
                       found(v, buf, sizeof buf));
    /* a quoted scalar is a string in YAML (and JSON): "3" is not 3 */
    if (!v->plain)
        return f_error(c, v, "key '%s': expected %s, found the quoted string '%s'; write the number without "
                       "quotes", key, range, v->scalar);
    errno = 0;
    x = strtod(v->scalar, &end);
    /* strtod also takes hex, inf and nan: none of them belongs in a spec */
    if (end == v->scalar || *end != '\0' || strpbrk(v->scalar, "xXnNiI"))
        return f_error(c, v, "key '%s': expected %s, found %s", key, range,
                       found(v, buf, sizeof buf));
    if (errno == ERANGE || !isfinite(x))
        return f_error(c, v, "key '%s': expected %s, found %s, which is out of range", key, range,
                       found(v, buf, sizeof buf));
    if (x < min || x > max)
        return f_error(c, v, "key '%s': expected %s, found %s", key, range,
                       found(v, buf, sizeof buf));
    *out = x == 0 ? 0 : x; /* -0 reads as 0 (it printed as -0.0000) */
    return 0;
}

int f_node_number(const fctx *c, const st_ynode *v, const char *key, double min, double max,
                  double *out)
{
    return node_number(c, v, key, min, max, NULL, out);
}

int f_node_int(const fctx *c, const st_ynode *v, const char *key, long long min, long long max,
               long long *out)
{
    char buf[96];
    char *end;
    long long x;
    if (v->kind != ST_Y_SCALAR || st_ynode_is_null(v))
        return f_error(c, v, "key '%s': expected a whole number in [%lld, %lld], found %s", key,
                       min, max, found(v, buf, sizeof buf));
    if (!v->plain)
        return f_error(c, v, "key '%s': expected a whole number in [%lld, %lld], found the quoted string '%s'; "
                       "write the number without quotes", key, min, max, v->scalar);
    errno = 0;
    x = strtoll(v->scalar, &end, 10);
    if (end == v->scalar || *end != '\0' || v->scalar[0] == ' ')
        return f_error(c, v, "key '%s': expected a whole number in [%lld, %lld], found %s", key,
                       min, max, found(v, buf, sizeof buf));
    if (errno == ERANGE || x < min || x > max)
        return f_error(c, v, "key '%s': expected a whole number in [%lld, %lld], found %s", key,
                       min, max, found(v, buf, sizeof buf));
    *out = x;
    return 0;
}

/* x (the number `text` spells) times scale. A power of ten scales the
 * decimal itself, "66.9" x 1e12 read as 66.9e12, so that the result is the
 * double nearest the number the file means (66900000000000, where the
 * product of two roundings gives 66900000000000.01); other scales multiply. */
static double scaled(const char *text, double x, double scale)
{
    int e = (int)lround(log10(scale));
    if (scale <= 0 || e < -30 || e > 30 || pow(10, e) != scale)
        return x * scale;
    const char *ex = strpbrk(text, "eE");
    char buf[128];
    long have = ex ? strtol(ex + 1, NULL, 10) : 0;
    size_t mant = ex ? (size_t)(ex - text) : strlen(text);
    if (mant > 80 || have > 100000 || have < -100000)
        return x * scale;
    snprintf(buf, sizeof buf, "%.*se%ld", (int)mant, text, have + e);
    char *end;
    double y = strtod(buf, &end);
    return *end || !isfinite(y) ? x * scale : (y == 0 ? 0 : y);
}

int f_number(const fctx *c, const st_ynode *map, const char *key, double min, double max,
             double scale, const char *unit, double *out)
{
    const st_ynode *v = f_get(map, key);
    double x = 0;
    int rc;
    if (!v)
        return 0;
    rc = node_number(c, v, key, min, max, unit, &x);
    if (rc == 0)
        *out = scaled(v->scalar, x, scale);
    return rc;
}

int f_int(const fctx *c, const st_ynode *map, const char *key, long long min, long long max,
          long long *out)
{
    const st_ynode *v = f_get(map, key);
    if (!v)
        return 0;
    return f_node_int(c, v, key, min, max, out);
}

int f_int32(const fctx *c, const st_ynode *map, const char *key, long long min, long long max,
            int *out)
{
    long long x = *out;
    int rc = f_int(c, map, key, min, max, &x);
    if (rc == 0)
        *out = (int)x;
    return rc;
}

int f_bool(const fctx *c, const st_ynode *map, const char *key, int *out)
{
    const st_ynode *v = f_get(map, key);
    char buf[96];
    if (!v)
        return 0;
    if (v->kind == ST_Y_SCALAR && v->plain) {
        if (!strcasecmp(v->scalar, "true") || !strcasecmp(v->scalar, "yes")) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(v->scalar, "false") || !strcasecmp(v->scalar, "no")) {
            *out = 0;
            return 0;
        }
    }
    return f_error(c, v, "key '%s': expected true or false, found %s", key,
                   found(v, buf, sizeof buf));
}

int f_string(const fctx *c, const st_ynode *map, const char *key, char *out, size_t n)
{
    const st_ynode *v = f_get(map, key);
    char buf[96];
    if (!v)
        return 0;
    if (v->kind != ST_Y_SCALAR || st_ynode_is_null(v))
        return f_error(c, v, "key '%s': expected text, found %s", key, found(v, buf, sizeof buf));
    if (v->scalar[0] == '\0')
        return f_error(c, v, "key '%s': the text is empty; give a value or leave the key out",
                       key);
    for (const unsigned char *p = (const unsigned char *)v->scalar; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return f_error(c, v, "key '%s': the text contains a control character (byte 0x%02x); "
                           "remove it", key, *p);
    if (strlen(v->scalar) >= n)
        return f_error(c, v, "key '%s': text longer than %zu bytes", key, n - 1);
    snprintf(out, n, "%s", v->scalar);
    return 0;
}

int f_enum(const fctx *c, const st_ynode *map, const char *key, const char *const *names,
           int count, int *out)
{
    const st_ynode *v = f_get(map, key);
    char buf[96], choices[512] = "";
    if (!v)
        return 0;
    if (v->kind == ST_Y_SCALAR)
        for (int i = 0; i < count; i++)
            if (strcasecmp(v->scalar, names[i]) == 0) {
                *out = i;
                return 0;
            }
    for (int i = 0; i < count; i++) {
        size_t used = strlen(choices);
        snprintf(choices + used, sizeof choices - used, "%s%s", i ? ", " : "", names[i]);
    }
    if (v->kind == ST_Y_SCALAR) {
        const char *s = st_suggest(v->scalar, names, (size_t)count);
        if (s)
            return f_error(c, v, "key '%s': expected one of %s, found %s; did you mean '%s'?", key,
                           choices, found(v, buf, sizeof buf), s);
    }
    return f_error(c, v, "key '%s': expected one of %s, found %s", key, choices,
                   found(v, buf, sizeof buf));
}

int f_list(const fctx *c, const st_ynode *map, const char *key, size_t max, const char *items,
           const st_ynode **out)
{
    const st_ynode *v = f_get(map, key);
    *out = v;
    if (!v || v->kind != ST_Y_SEQ)
        return f_error(c, v ? v : map, "key '%s': expected a list of %s, found %s", key, items,
                       v ? st_ykind_name(v->kind) : "nothing");
    if (v->n == 0)
        return f_error(c, v, "key '%s': the list is empty; give at least one of the %s", key,
                       items);
    if (max > 0 && v->n > max)
        return f_error(c, v, "key '%s': %zu %s, at most %zu are supported", key, v->n, items,
                       max);
    return 0;
}
