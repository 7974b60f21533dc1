/* Scenario files (strata-scenario(5)) for `strata suite`, and lookups by
 * path into a command's --json output (a JSON document is YAML flow style,
 * so libyaml reads it into the same tree as every other file). */
#include "config.h"
#include "io/fields.h"
#include "io/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const st_scenario_commands[] = {
    "show", "summary", "kernel", "eval", "map", "accel", "coll", "train", "plan", "serve", NULL,
};

/* Options a scenario may not give: the suite adds --json itself and runs
 * commands for their printed result, so nothing that writes a file (cmd
 * NULL: on any command; train's --trace writes, serve's reads). */
static const struct {
    const char *cmd, *opt, *why;
} refused[] = {
    {NULL, "json", "the suite adds --json itself"},
    {NULL, "help", "a scenario runs the command"},
    {NULL, "out", "a scenario writes no file"},
    {NULL, "samples", "a scenario writes no file"},
    {NULL, "coll-samples", "a scenario writes no file"},
    {"train", "trace", "a scenario writes no file"},
    {"serve", "trace-out", "a scenario writes no file"},
    {"serve", "per-request", "a scenario writes no file"},
};

static const char *const format_names[] = {"auto", "time", "bytes", "percent", "rate", "energy", "number", "count"};
#define N_FORMATS ((int)(sizeof format_names / sizeof format_names[0]))

void st_scenario_free(st_scenario *s)
{
    for (size_t c = 0; c < s->n_cases; c++)
        for (int i = 0; i < s->cases[c].argc; i++)
            free(s->cases[c].argv[i]);
    memset(s, 0, sizeof *s);
}

/* dst = src, cut to n - 1 bytes (dst and src are fields of one struct) */
static void copy_text(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memmove(dst, src, l);
    dst[l] = '\0';
}

static int is_name_char(char ch, const char *extra)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch && strchr(extra, ch));
}

/* A scalar's text as an argument: no control characters, ${shared}
 * replaced by the shared-data folder (or kept, and the scenario marked, when
 * there is none). */
static int arg_text(const fctx *c, const st_ynode *v, const char *what, const char *shared, st_scenario *s,
                    char *out, size_t n)
{
    if (v->kind != ST_Y_SCALAR || st_ynode_is_null(v) || !v->scalar[0])
        return f_error(c, v, "%s: expected a value (text or a number)%s", what,
                       v->kind == ST_Y_SCALAR ? ", found nothing" : "");
    const char *p = v->scalar;
    size_t j = 0;
    /* an operand or value that reads as an option would slip options past
     * the checks on option names (strata-scenario(5)) */
    if (p[0] == '-')
        return f_error(c, v, "%s: '%s' starts with '-'; give options under options:, by name", what, p);
    while (*p) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return f_error(c, v, "%s: the text contains a control character (byte 0x%02x); remove it", what,
                           (unsigned char)*p);
        if (strncmp(p, "${shared}", 9) == 0) {
            s->needs_shared = 1;
            const char *rep = shared ? shared : "${shared}";
            if (!shared)
                s->shared_missing = 1;
            size_t l = strlen(rep);
            if (j + l >= n)
                return f_error(c, v, "%s: longer than %zu bytes", what, n - 1);
            memcpy(out + j, rep, l);
            j += l;
            p += 9;
            continue;
        }
        if (strncmp(p, "${", 2) == 0) {
            size_t l = strcspn(p, "}");
            return f_error(c, v, "%s: unknown variable '%.*s'; the only one is ${shared} (the measured-data folder)",
                           what, (int)(p[l] ? l + 1 : l), p);
        }
        if (j + 1 >= n)
            return f_error(c, v, "%s: longer than %zu bytes", what, n - 1);
        out[j++] = *p++;
    }
    out[j] = '\0';
    return 0;
}

/* ---- building each case's argv -------------------------------------------- */
typedef struct argv_b {
    st_scn_case *k;
    const fctx *c;
} argv_b;

static int push(argv_b *b, const st_ynode *at, const char *text)
{
    if (b->k->argc >= ST_SCN_MAX_ARGS - 1) /* one slot kept for --json */
        return f_error(b->c, at, "more than %d arguments in one command line", ST_SCN_MAX_ARGS - 1);
    char *d = strdup(text);
    if (!d)
        return st_error_set(b->c->err, ST_ENOMEM, "out of memory");
    b->k->argv[b->k->argc++] = d;
    return 0;
}

static int check_option_key(const fctx *c, const st_ynode *key, const char *command)
{
    const char *k = key->scalar;
    if (!k[0] || k[0] == '-')
        return f_error(c, key, "option '%s': write the long option's name without the dashes (cluster, "
                               "global-batch, ...)", k);
    for (const char *p = k; *p; p++)
        if (!is_name_char(*p, "-"))
            return f_error(c, key, "option '%s': a long option's name has letters, digits and '-' only", k);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if ((!refused[i].cmd || strcmp(refused[i].cmd, command) == 0) && strcmp(refused[i].opt, k) == 0)
            return f_error(c, key, "option '%s' is not allowed in a scenario (%s)", k, refused[i].why);
    return 0;
}

/* The arguments of one option: `--key value`, `--key` for true, nothing
 * for false, the option once per item of a list. */
static int push_option(argv_b *b, const st_ynode *key, const st_ynode *v, const char *shared, st_scenario *s)
{
    char flag[96], text[512], what[128];
    snprintf(flag, sizeof flag, "--%s", key->scalar);
    snprintf(what, sizeof what, "option '%s'", key->scalar);
    if (v->kind == ST_Y_SCALAR && v->plain && strcmp(v->scalar, "false") == 0)
        return 0;
    if (v->kind == ST_Y_SCALAR && v->plain && strcmp(v->scalar, "true") == 0)
        return push(b, key, flag);
    if (v->kind == ST_Y_MAP)
        return f_error(b->c, v, "%s: expected a value, true (a flag) or a list (the option repeated), found a "
                                "mapping", what);
    if (v->kind == ST_Y_SEQ) {
        if (v->n == 0)
            return f_error(b->c, v, "%s: the list is empty; leave the option out instead", what);
        for (size_t i = 0; i < v->n; i++) {
            int rc = arg_text(b->c, v->items[i], what, shared, s, text, sizeof text);
            if (rc || (rc = push(b, v->items[i], flag)) || (rc = push(b, v->items[i], text)))
                return rc;
        }
        return 0;
    }
    int rc = arg_text(b->c, v, what, shared, s, text, sizeof text);
    if (rc || (rc = push(b, key, flag)))
        return rc;
    return push(b, v, text);
}

static const st_ynode *map_key(const st_ynode *map, const char *key)
{
    for (size_t i = 0; map && i < map->n; i++)
        if (strcmp(map->keys[i]->scalar, key) == 0)
            return map->keys[i];
    return NULL;
}

static int build_case(const fctx *c, st_scenario *s, st_scn_case *k, const st_ynode *operands,
                      const st_ynode *options, const st_ynode *over, const char *shared)
{
    argv_b b = {k, c};
    char text[512];
    int rc;
    if ((rc = push(&b, options ? options : operands, s->command)))
        return rc;
    if (operands) {
        if (operands->kind == ST_Y_SCALAR) {
            if ((rc = arg_text(c, operands, "operands", shared, s, text, sizeof text)) || (rc = push(&b, operands, text)))
                return rc;
        } else {
            for (size_t i = 0; i < operands->n; i++)
                if ((rc = arg_text(c, operands->items[i], "operands", shared, s, text, sizeof text)) ||
                    (rc = push(&b, operands->items[i], text)))
                    return rc;
        }
    }
    /* the base options in their order, a case's value in place of its own */
    for (size_t i = 0; options && i < options->n; i++) {
        const st_ynode *key = options->keys[i], *v = options->items[i];
        const st_ynode *ov = over ? f_get(over, key->scalar) : NULL;
        if (ov) {
            if (st_ynode_is_null(ov))
                continue; /* the case leaves the option out */
            key = map_key(over, key->scalar);
            v = ov;
        }
        if ((rc = push_option(&b, key, v, shared, s)))
            return rc;
    }
    /* then the case's own options */
    for (size_t i = 0; over && i < over->n; i++) {
        const st_ynode *key = over->keys[i], *v = over->items[i];
        if (strcmp(key->scalar, "case") == 0 || (options && f_get(options, key->scalar)))
            continue;
        if (st_ynode_is_null(v))
            return f_error(c, v, "case option '%s': no value, and the scenario's options do not give it "
                                 "either; leave it out", key->scalar);
        if ((rc = push_option(&b, key, v, shared, s)))
            return rc;
    }
    k->argv[k->argc++] = strdup("--json");
    if (!k->argv[k->argc - 1])
        return st_error_set(c->err, ST_ENOMEM, "out of memory");
    return 0;
}

/* ---- metrics ---------------------------------------------------------------- */
static int check_path(const fctx *c, const st_ynode *v, const char *what, char *out)
{
    if (v->kind != ST_Y_SCALAR || st_ynode_is_null(v) || !v->scalar[0])
        return f_error(c, v, "%s: expected a key path into the command's --json output (iteration_s, "
                             "ttft_s.p99, layers.0.time_s)", what);
    const char *p = v->scalar;
    if (strlen(p) >= ST_SCN_PATH_MAX)
        return f_error(c, v, "%s: a path longer than %d bytes", what, ST_SCN_PATH_MAX - 1);
    int seg = 0;
    for (; *p; p++) {
        if (*p == '.') {
            if (!seg)
                return f_error(c, v, "%s: '%s' has an empty key between dots", what, v->scalar);
            seg = 0;
        } else if (is_name_char(*p, "_-")) {
            seg++;
        } else {
            return f_error(c, v, "%s: '%s': keys have letters, digits, '_' and '-', separated by '.'", what,
                           v->scalar);
        }
    }
    if (!seg)
        return f_error(c, v, "%s: '%s' ends in a dot", what, v->scalar);
    snprintf(out, ST_SCN_PATH_MAX, "%s", v->scalar);
    return 0;
}

static int load_metric(const fctx *c, const st_ynode *item, st_scenario *s, const st_ynode *cases,
                       st_scn_metric *m)
{
    memset(m, 0, sizeof *m);
    m->speedup_over = -1;
    m->line = item->line;
    m->col = item->col;
    int rc;
    if (item->kind == ST_Y_SCALAR) {
        if ((rc = check_path(c, item, "report item", m->path)))
            return rc;
        copy_text(m->label, sizeof m->label, m->path);
        return 0;
    }
    static const fkey keys[] = {
        {"metric", 1, "a key path into the command's --json output"},
        {"label", 0, "the name printed for it"},
        {"band", 0, "the paths of the 90% band's low and high edges"},
        {"format", 0, "time, bytes, percent, rate, energy, number or count"},
        {"speedup_over", 0, "a case's name: print each case's ratio to it"},
    };
    fctx ci = *c;
    ci.what = "report item";
    if ((rc = f_check_map(&ci, item, keys, sizeof keys / sizeof keys[0])))
        return rc;
    if ((rc = check_path(c, f_get(item, "metric"), "report item 'metric'", m->path)))
        return rc;
    copy_text(m->label, sizeof m->label, m->path);
    if ((rc = f_string(c, item, "label", m->label, sizeof m->label)))
        return rc;
    const st_ynode *band = f_get(item, "band");
    if (band) {
        if (band->kind != ST_Y_SEQ || band->n != 2)
            return f_error(c, band, "report item 'band': expected a list of two paths, [low, high] (for "
                                    "train: [lo_s, hi_s])");
        for (int e = 0; e < 2; e++)
            if ((rc = check_path(c, band->items[e], "report item 'band'", m->band[e])))
                return rc;
    }
    int fmt = 0;
    if ((rc = f_enum(c, item, "format", format_names, N_FORMATS, &fmt)))
        return rc;
    m->format = (st_scn_format)fmt;
    const st_ynode *sp = f_get(item, "speedup_over");
    if (sp) {
        if (sp->kind != ST_Y_SCALAR || st_ynode_is_null(sp))
            return f_error(c, sp, "report item 'speedup_over': expected a case's name");
        if (!cases)
            return f_error(c, sp, "report item 'speedup_over': the scenario has no cases to compare");
        for (size_t i = 0; i < s->n_cases; i++)
            if (strcmp(s->cases[i].name, sp->scalar) == 0)
                m->speedup_over = (int)i;
        if (m->speedup_over < 0) {
            const char *names[ST_SCN_MAX_CASES];
            for (size_t i = 0; i < s->n_cases; i++)
                names[i] = s->cases[i].name;
            const char *g = st_suggest(sp->scalar, names, s->n_cases);
            return f_error(c, sp, "report item 'speedup_over': no case named '%s'%s%s%s", sp->scalar,
                           g ? "; did you mean '" : "", g ? g : "", g ? "'?" : "");
        }
    }
    return 0;
}

/* ---- the file ------------------------------------------------------------------ */
static int load_doc(const st_ydoc *doc, const char *shared, st_scenario *s, st_error *err)
{
    fctx c = {doc->path, "scenario", err, "strata-scenario(5)"};
    static const fkey keys[] = {
        {"scenario", 1, "the scenario's id, e.g. T1.1"},
        {"title", 1, "one line saying what is asked"},
        {"command", 1, "the strata command that answers it"},
        {"operands", 0, "the command's operands: a workload, a collective"},
        {"options", 0, "the command's long options: value, true for a flag"},
        {"cases", 0, "runs that change some options"},
        {"report", 1, "the metrics to print"},
    };
    const st_ynode *root = doc->root;
    int rc;
    if (!root)
        return f_error(&c, NULL, "the file is empty; a scenario needs scenario, title, command and report");
    if ((rc = f_check_map(&c, root, keys, sizeof keys / sizeof keys[0])))
        return rc;
    snprintf(s->path, sizeof s->path, "%s", doc->path);
    if ((rc = f_string(&c, root, "scenario", s->id, sizeof s->id)) ||
        (rc = f_string(&c, root, "title", s->title, sizeof s->title)) ||
        (rc = f_string(&c, root, "command", s->command, sizeof s->command)))
        return rc;
    for (const char *p = s->id; *p; p++)
        if (!is_name_char(*p, "._-"))
            return f_error(&c, f_get(root, "scenario"), "key 'scenario': '%s': an id has letters, digits, '.', "
                                                       "'_' and '-' only", s->id);
    int known = 0;
    for (int i = 0; st_scenario_commands[i]; i++)
        known |= strcmp(st_scenario_commands[i], s->command) == 0;
    if (!known) {
        char list[256] = "";
        for (int i = 0; st_scenario_commands[i]; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     st_scenario_commands[i]);
        size_t nc = 0;
        while (st_scenario_commands[nc])
            nc++;
        const char *g = st_suggest(s->command, st_scenario_commands, nc);
        return f_error(&c, f_get(root, "command"), "key 'command': '%s' is not a command a scenario can run%s%s%s "
                                                  "(one of %s)", s->command, g ? "; did you mean '" : "",
                       g ? g : "", g ? "'?" : "", list);
    }
    const st_ynode *operands = f_get(root, "operands"), *options = f_get(root, "options"),
                   *cases = f_get(root, "cases"), *report;
    if (operands && operands->kind == ST_Y_MAP)
        return f_error(&c, operands, "key 'operands': expected a list of operands (or one), found a mapping");
    if (operands && operands->kind == ST_Y_SEQ && operands->n == 0)
        operands = NULL;
    if (options && st_ynode_is_null(options))
        options = NULL;
    if (options && options->kind != ST_Y_MAP)
        return f_error(&c, options, "key 'options': expected a mapping of long options (cluster: dgx-a100, "
                                    "sp: true), found %s", st_ykind_name(options->kind));
    for (size_t i = 0; options && i < options->n; i++)
        if ((rc = check_option_key(&c, options->keys[i], s->command)))
            return rc;
    s->line = options ? options->line : root->line;
    s->col = options ? options->col : root->col;
    /* cases: each a mapping with its name under 'case' */
    if (cases) {
        if ((rc = f_list(&c, root, "cases", ST_SCN_MAX_CASES, "cases", &cases)))
            return rc;
        for (size_t i = 0; i < cases->n; i++) {
            const st_ynode *k = cases->items[i], *name = k->kind == ST_Y_MAP ? f_get(k, "case") : NULL;
            if (k->kind != ST_Y_MAP)
                return f_error(&c, k, "cases: expected a mapping (case: NAME, then the options it changes), found "
                                      "%s", st_ykind_name(k->kind));
            if (!name || name->kind != ST_Y_SCALAR || st_ynode_is_null(name) || !name->scalar[0])
                return f_error(&c, k, "cases: every case needs 'case: NAME' (the column it prints under)");
            if (strlen(name->scalar) >= sizeof s->cases[0].name)
                return f_error(&c, name, "case '%s': a name of at most %zu bytes", name->scalar,
                               sizeof s->cases[0].name - 1);
            for (const char *p = name->scalar; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                    return f_error(&c, name, "case: the name contains a control character; remove it");
            for (size_t j = 0; j < i; j++)
                if (strcmp(s->cases[j].name, name->scalar) == 0)
                    return f_error(&c, name, "case '%s' is named twice; give each case its own name",
                                   name->scalar);
            for (size_t j = 0; j < k->n; j++)
                if (strcmp(k->keys[j]->scalar, "case") != 0 && (rc = check_option_key(&c, k->keys[j], s->command)))
                    return rc;
            st_scn_case *sc = &s->cases[s->n_cases++];
            snprintf(sc->name, sizeof sc->name, "%s", name->scalar);
            sc->line = k->line;
            sc->col = k->col;
            if ((rc = build_case(&c, s, sc, operands, options, k, shared)))
                return rc;
        }
    } else {
        st_scn_case *sc = &s->cases[s->n_cases++];
        sc->line = s->line;
        sc->col = s->col;
        if ((rc = build_case(&c, s, sc, operands, options, NULL, shared)))
            return rc;
    }
    if ((rc = f_list(&c, root, "report", ST_SCN_MAX_REPORT, "metrics", &report)))
        return rc;
    for (size_t i = 0; i < report->n; i++)
        if ((rc = load_metric(&c, report->items[i], s, cases, &s->metrics[s->n_metrics++])))
            return rc;
    return 0;
}

/* After parsing (rc its result): the scenario from the tree, nothing kept
 * on error. */
static int load_parsed(st_ydoc *doc, int rc, const char *shared, st_scenario *out, st_error *err)
{
    if (rc)
        return rc;
    rc = load_doc(doc, shared, out, err);
    st_ydoc_free(doc);
    if (rc)
        st_scenario_free(out);
    return rc;
}

int st_load_scenario_buffer(const char *label, const char *buf, size_t len, const char *shared,
                            st_scenario *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    st_ydoc doc;
    return load_parsed(&doc, st_ydoc_load_buffer(&doc, label, buf, len, err), shared, out, err);
}

int st_load_scenario(const char *path, const char *shared, st_scenario *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    st_ydoc doc;
    return load_parsed(&doc, st_ydoc_load_file(&doc, path, err), shared, out, err);
}

/* ---- lookups in a command's JSON output ---------------------------------------- */
struct st_jdoc {
    st_ydoc doc;
};

int st_jdoc_parse(const char *label, const char *buf, size_t len, st_jdoc **out, st_error *err)
{
    *out = NULL;
    st_jdoc *d = calloc(1, sizeof *d);
    if (!d)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = st_ydoc_load_buffer(&d->doc, label, buf, len, err);
    if (!rc && (!d->doc.root || d->doc.root->kind == ST_Y_SCALAR))
        rc = st_error_set(err, ST_EINVAL, "%s: expected a JSON object, found %s", label,
                          d->doc.root ? "a single value" : "nothing");
    if (rc) {
        st_ydoc_free(&d->doc);
        free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void st_jdoc_free(st_jdoc *d)
{
    if (!d)
        return;
    st_ydoc_free(&d->doc);
    free(d);
}

/* "keys there: a, b, c" (the first dozen) for a mapping; "a list of N" */
static void describe(const st_ynode *n, char *buf, size_t len)
{
    if (n->kind == ST_Y_SEQ) {
        snprintf(buf, len, "a list of %zu (index it from 0)", n->n);
        return;
    }
    snprintf(buf, len, "keys there: ");
    for (size_t i = 0; i < n->n && i < 12; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? ", " : "", n->keys[i]->scalar);
    if (n->n > 12)
        snprintf(buf + strlen(buf), len - strlen(buf), ", ... (%zu in all)", n->n);
}

int st_jdoc_get(const st_jdoc *d, const char *path, char *text, size_t n, double *num, st_error *err)
{
    const st_ynode *cur = d->doc.root;
    char seg[ST_SCN_PATH_MAX], at[ST_SCN_PATH_MAX] = "", where[640];
    const char *p = path;
    *num = NAN;
    while (*p) {
        size_t l = strcspn(p, ".");
        if (l == 0 || l >= sizeof seg)
            return st_error_set(err, ST_EINVAL, "'%s' is not a key path", path);
        memcpy(seg, p, l);
        seg[l] = '\0';
        const st_ynode *next = NULL;
        if (cur->kind == ST_Y_MAP) {
            next = f_get(cur, seg);
            if (!next) {
                const char *names[256];
                size_t m = cur->n < 256 ? cur->n : 256;
                for (size_t i = 0; i < m; i++)
                    names[i] = cur->keys[i]->scalar;
                const char *g = st_suggest(seg, names, m);
                describe(cur, where, sizeof where);
                char sug[96] = "";
                if (g)
                    snprintf(sug, sizeof sug, "; did you mean '%s'?", g);
                return st_error_set(err, ST_ENOTFOUND, "no key '%s'%s%s%s%s (%s)", seg, at[0] ? " under '" : "", at,
                                    at[0] ? "'" : "", sug, where);
            }
        } else if (cur->kind == ST_Y_SEQ) {
            char *end;
            long idx = strtol(seg, &end, 10);
            if (*end || idx < 0 || (size_t)idx >= cur->n)
                return st_error_set(err, ST_ENOTFOUND, "'%s' is a list of %zu; '%s' is not an index in 0..%zu",
                                    at[0] ? at : "the output", cur->n, seg, cur->n ? cur->n - 1 : 0);
            next = cur->items[idx];
        } else {
            return st_error_set(err, ST_ENOTFOUND, "'%s' is a value, it has no key '%s'", at, seg);
        }
        snprintf(at + strlen(at), sizeof at - strlen(at), "%s%s", at[0] ? "." : "", seg);
        cur = next;
        p += l;
        if (*p == '.')
            p++;
    }
    if (cur->kind != ST_Y_SCALAR) {
        describe(cur, where, sizeof where);
        return st_error_set(err, ST_ENOTFOUND, "'%s' is %s, not a value; name one of its %s (%s)", path,
                            cur->kind == ST_Y_MAP ? "a mapping" : "a list",
                            cur->kind == ST_Y_MAP ? "keys" : "items", where);
    }
    const char *t = st_ynode_is_null(cur) ? "" : cur->scalar;
    snprintf(text, n, "%s", t);
    if (cur->plain && t[0]) {
        char *end;
        double v = strtod(t, &end);
        if (!*end && isfinite(v))
            *num = v;
    }
    return 0;
}
