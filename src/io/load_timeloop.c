/*
 * Timeloop v0.4 files: problem (*.prob.yaml), mapping (*.map.yaml), the
 * architecture (the v0.4 tree of !Container/!Component nodes, or the
 * flattened `subtree:/local:` form Timeloop's front end dumps) and
 * Accelergy's ERT energy table. What is and is not supported is listed in
 * strata-presets(5), section "Timeloop files".
 */
#include "config.h"
#include "io/timeloop.h"
#include "io/loaders.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int dim_of(char ch)
{
    const char *p = ch ? strchr(ST_AD_LETTERS, ch) : NULL;
    return p ? (int)(p - ST_AD_LETTERS) : -1;
}

/* Parse a Timeloop file; an empty one is an error naming what was expected. */
static int load_doc(const char *path, const char *expect, st_ydoc *doc, st_error *err)
{
    int rc = st_ydoc_load_file(doc, path, err);
    if (rc == 0 && !doc->root) {
        st_ydoc_free(doc);
        rc = st_error_set(err, ST_EINVAL, "%s:1:1: the file is empty; expected a Timeloop %s",
                          path, expect);
    }
    return rc;
}

static int tensor_of(const char *s)
{
    if (strcasecmp(s, "Inputs") == 0)
        return ST_TENSOR_INPUTS;
    if (strcasecmp(s, "Weights") == 0)
        return ST_TENSOR_WEIGHTS;
    if (strcasecmp(s, "Outputs") == 0)
        return ST_TENSOR_OUTPUTS;
    return -1;
}

/* ---- problem ---------------------------------------------------------------- */

/* Timeloop's format version: 0.4 (written as a number or a string), or none */
static int tl_version(const fctx *c, const st_ynode *n)
{
    const st_ynode *v = f_get(n, "version");
    if (!v || st_ynode_is_null(v) || (v->kind == ST_Y_SCALAR && strcmp(v->scalar, "0.4") == 0))
        return 0;
    return f_error(c, v, "version %s: strata reads Timeloop's v0.4 format (version: 0.4)",
                   v->kind == ST_Y_SCALAR ? v->scalar : st_ykind_name(v->kind));
}

/* The shape must be Timeloop's conv2D: anything else would be read wrongly. */
static int check_shape(const fctx *c, const st_ynode *shape)
{
    static const char *const want_dims = "CMRSNPQ";
    const st_ynode *dims, *ds;
    if (!shape)
        return 0;
    /* Timeloop also takes a shape by name: its built-in conv2D one */
    if (shape->kind == ST_Y_SCALAR) {
        if (strcasecmp(shape->scalar, "cnn-layer") == 0 || strcasecmp(shape->scalar, "cnn_layer") == 0)
            return 0;
        return f_error(c, shape, "problem shape '%s': strata maps Timeloop's conv2D shape only (by name "
                       "cnn-layer, or written out); write GEMMs as C x M x P", shape->scalar);
    }
    if (shape->kind != ST_Y_MAP)
        return f_error(c, shape, "problem shape: expected a map (dimensions, data_spaces, coefficients) or the name "
                       "cnn-layer, found %s", st_ykind_name(shape->kind));
    dims = f_get(shape, "dimensions");
    ds = f_get(shape, "data_spaces");
    if ((dims && dims->kind != ST_Y_SEQ) || (ds && ds->kind != ST_Y_SEQ))
        return f_error(c, dims && dims->kind != ST_Y_SEQ ? dims : ds, "problem shape: '%s' must be a list",
                       dims && dims->kind != ST_Y_SEQ ? "dimensions" : "data_spaces");
    if (dims) {
        unsigned seen = 0;
        for (size_t i = 0; i < dims->n; i++) {
            const st_ynode *d = dims->items[i];
            if (d->kind != ST_Y_SCALAR || strlen(d->scalar) != 1 || !strchr(want_dims, d->scalar[0]))
                return f_error(c, d, "problem shape: dimension %s is not one of Timeloop's "
                                     "conv2D dimensions C M R S N P Q; only the conv2D shape "
                                     "is supported (write GEMMs as C x M x P)",
                               d->kind == ST_Y_SCALAR ? d->scalar : st_ykind_name(d->kind));
            unsigned bit = 1u << (strchr(want_dims, d->scalar[0]) - want_dims);
            if (seen & bit)
                return f_error(c, d, "problem shape: dimension %s is listed twice; conv2D's are C M R S N P Q, "
                                     "each once", d->scalar);
            seen |= bit;
        }
        if (seen != (1u << 7) - 1)
            return f_error(c, dims, "problem shape: the dimensions must be C M R S N P Q, each once (conv2D); "
                                    "%zu are listed", dims->n);
    }
    if (ds) {
        if (ds->n != 3)
            return f_error(c, ds, "problem shape: %zu data spaces; the conv2D shape has three "
                                  "(Weights, Inputs, Outputs)", ds->n);
        for (size_t i = 0; i < ds->n; i++) {
            const st_ynode *nm = f_get(ds->items[i], "name"), *pr = f_get(ds->items[i], "projection");
            const size_t want = 4; /* conv2D: every data space has four ranks */
            if (!nm || nm->kind != ST_Y_SCALAR)
                return f_error(c, ds->items[i], "problem shape: a data space without a name");
            if (tensor_of(nm->scalar) < 0)
                return f_error(c, nm, "problem shape: data space '%s' is not Weights, Inputs "
                                      "or Outputs; only the conv2D shape is supported",
                               nm->scalar);
            if (pr && pr->kind == ST_Y_SEQ && pr->n != want)
                return f_error(c, pr, "problem shape: data space %s has %zu ranks; conv2D's "
                                      "has %zu", nm->scalar, pr->n, want);
        }
    }
    return 0;
}

static int st_read_timeloop_problem(const char *path, const st_ynode *root, st_aprob *p, st_error *err)
{
    static const fkey inst_keys[] = {
        {"C", 1, "input channels"}, {"M", 1, "output channels"}, {"R", 1, "filter width"},
        {"S", 1, "filter height"}, {"N", 1, "batch"}, {"P", 1, "output width"},
        {"Q", 1, "output height"}, {"G", 0, "groups"}, {"Hstride", 0, "stride"},
        {"Wstride", 0, "stride"}, {"Hdilation", 0, "dilation"}, {"Wdilation", 0, "dilation"},
        {"H", 0, "input height (informative)"}, {"W", 0, "input width (informative)"},
        {"Hpad", 0, "padding (informative)"}, {"Wpad", 0, "padding (informative)"},
        {"densities", 0, "sparsity (not modelled; must be empty)"}};
    static const fkey prob_keys[] = {{"version", 0, "0.4"}, {"instance", 1, "dimension sizes"},
                                     {"shape", 0, "conv2D shape"}};
    fctx c = {path, "problem", err, "Timeloop v0.4's problem format"};
    const st_ynode *pr = f_get(root, "problem"), *inst;
    int rc;
    long long v;
    const char *names = ST_AD_LETTERS;
    st_aprob_init(p, "");
    if (!pr)
        return f_error(&c, root, "not a Timeloop problem file: no top-level `problem:` key");
    if ((rc = f_check_map(&c, pr, prob_keys, 3)))
        return rc;
    if ((rc = tl_version(&c, pr)))
        return rc;
    inst = f_get(pr, "instance");
    c.what = "problem.instance";
    if ((rc = f_check_map(&c, inst, inst_keys, sizeof inst_keys / sizeof inst_keys[0])))
        return rc;
    for (int d = 0; d < ST_AD_COUNT; d++) {
        char key[2] = {names[d], 0};
        if (!f_get(inst, key))
            continue;
        if ((rc = f_int(&c, inst, key, 1, 1LL << 31, &v)))
            return rc;
        p->d[d] = v;
    }
    {
        const char *keys[4] = {"Wstride", "Hstride", "Wdilation", "Hdilation"};
        int *dst[4] = {&p->wstride, &p->hstride, &p->wdil, &p->hdil};
        for (int k = 0; k < 4; k++)
            if (f_get(inst, keys[k]) && (rc = f_int32(&c, inst, keys[k], 1, 1 << 16, dst[k])))
                return rc;
    }
    {
        const st_ynode *dn = f_get(inst, "densities");
        if (dn && !st_ynode_is_null(dn) && !(dn->kind == ST_Y_MAP && dn->n == 0))
            return f_error(&c, dn, "problem.instance.densities: sparse workloads are not "
                                   "modelled; remove the densities");
    }
    {
        /* the MACs: every dimension's product, counted up to 2^53 as the
         * workloads count (strata's counters are doubles) */
        double macs = 1;
        for (int d = 0; d < ST_AD_COUNT; d++)
            if (p->d[d] > 0)
                macs *= (double)p->d[d];
        if (macs > 9007199254740992.0)
            return f_error(&c, inst, "%.3g multiply-accumulates: strata counts up to 2^53 = 9.0e15; use "
                                     "smaller dimensions", macs);
    }
    c.what = "problem.shape";
    if ((rc = check_shape(&c, f_get(pr, "shape"))))
        return rc;
    {
        const char *base = strrchr(path, '/');
        snprintf(p->name, sizeof p->name, "%s", base ? base + 1 : path);
        char *dot = strstr(p->name, ".prob");
        if (dot)
            *dot = 0;
    }
    return 0;
}

int st_load_timeloop_problem(const char *path, st_aprob *p, st_error *err)
{
    st_ydoc doc;
    int rc = load_doc(path, "problem (`problem: {instance: ...}`)", &doc, err);
    if (rc)
        return rc;
    rc = st_read_timeloop_problem(path, doc.root, p, err);
    st_ydoc_free(&doc);
    return rc;
}

/* ---- mapping ---------------------------------------------------------------- */

/* "C1 M8 R1" or "C=1,M=8" -> factors; absent dims stay 1. */
static int parse_factors(const fctx *c, const st_ynode *entry, const st_ynode *v, unsigned *f)
{
    const char *s;
    if (!v || v->kind != ST_Y_SCALAR)
        return f_error(c, v ? v : entry, "key 'factors': expected a string such as \"C1 M8 R3\", found %s",
                       v ? st_ykind_name(v->kind) : "nothing");
    s = v->scalar;
    unsigned seen = 0;
    while (*s) {
        char *end;
        int d;
        long val;
        while (*s == ' ' || *s == ',' || *s == '\t')
            s++;
        if (!*s)
            break;
        d = dim_of(*s);
        if (d < 0)
            return f_error(c, v, "key 'factors': '%c' is not a dimension (C M R S N P Q, or G); "
                                 "write factors as \"C1 M8 R3\"", *s);
        s++;
        if (*s == '=')
            s++;
        val = strtol(s, &end, 10);
        if (end == s || val < 1 || val > (1L << 30))
            return f_error(c, v, "key 'factors': %c needs a positive integer factor, as in "
                                 "\"%c4\"", ST_AD_LETTERS[d], ST_AD_LETTERS[d]);
        if (seen & (1u << d))
            return f_error(c, v, "key 'factors': %c is given twice; give each dimension once", ST_AD_LETTERS[d]);
        seen |= 1u << d;
        f[d] = (unsigned)val;
        s = end;
    }
    return 0;
}

static int parse_perm(const fctx *c, const st_ynode *v, unsigned char *perm, char *order,
                      size_t norder)
{
    unsigned seen = 0;
    int k = 0;
    /* no permutation key: the dimensions in their canonical order, as an
     * empty string gives (every caller reads all ST_AD_COUNT entries) */
    if (v && v->kind != ST_Y_SCALAR)
        return f_error(c, v, "key 'permutation': expected a string of dimensions, innermost "
                             "first, such as \"MCRSNPQ\"");
    for (const char *s = v ? v->scalar : ""; *s; s++) {
        int d;
        if (*s == ' ' || *s == ',')
            continue;
        d = dim_of(*s);
        if (d < 0 || (seen & (1u << d)))
            return f_error(c, v, "key 'permutation': '%c' is %s", *s,
                           d < 0 ? "not a dimension" : "listed twice");
        seen |= 1u << d;
        if (order && (size_t)k + 1 < norder)
            order[k] = *s, order[k + 1] = 0;
        perm[k++] = (unsigned char)d;
    }
    for (int d = 0; d < ST_AD_COUNT; d++)
        if (!(seen & (1u << d)))
            perm[k++] = (unsigned char)d;
    return 0;
}

static int find_level(const st_accel *a, const char *name)
{
    size_t n = strcspn(name, "[");
    for (int i = 0; i < a->n_levels; i++)
        if (strlen(a->level[i].name) == n && strncmp(a->level[i].name, name, n) == 0)
            return i;
    return -1;
}

static int read_tensor_list(const fctx *c, const st_ynode *v, const char *key, unsigned *mask)
{
    *mask = 0;
    if (!v || st_ynode_is_null(v))
        return 0;
    if (v->kind != ST_Y_SEQ)
        return f_error(c, v, "key '%s': expected a list such as [Inputs, Outputs]", key);
    for (size_t i = 0; i < v->n; i++) {
        int t = v->items[i]->kind == ST_Y_SCALAR ? tensor_of(v->items[i]->scalar) : -1;
        if (t < 0)
            return f_error(c, v->items[i], "key '%s': expected Inputs, Weights or Outputs",
                           key);
        *mask |= 1u << t;
    }
    return 0;
}

static int st_read_timeloop_mapping(const char *path, const st_ynode *root, const st_accel *a,
                             const st_aprob *p, st_amap *m, st_error *err)
{
    static const fkey entry_keys[] = {
        {"target", 1, "level name"}, {"type", 1, "temporal, spatial, datatype or bypass"},
        {"factors", 0, "\"C1 M8 ...\""}, {"permutation", 0, "dims, innermost first"},
        {"split", 0, "X/Y split position"}, {"keep", 0, "tensors kept"},
        {"bypass", 0, "tensors bypassed"}};
    fctx c = {path, "mapping", err, "Timeloop v0.4's mapping format"};
    const st_ynode *list = root && root->kind == ST_Y_MAP ? f_get(root, "mapping") : root;
    unsigned set_t[ST_ACCEL_MAX_LEVELS] = {0}, set_s[ST_ACCEL_MAX_LEVELS] = {0};
    int rc;
    st_amap_init(m, a, p);
    for (int i = 0; i < m->n; i++)
        for (int d = 0; d < ST_AD_COUNT; d++)
            m->t[i][d] = 1;
    if (!list || list->kind != ST_Y_SEQ)
        return f_error(&c, list ? list : root, "not a Timeloop mapping: expected `mapping:` "
                                               "with a list of {target, type, ...} entries");
    for (size_t k = 0; k < list->n; k++) {
        const st_ynode *e = list->items[k], *tg, *ty;
        char what[48];
        int lv;
        snprintf(what, sizeof what, "mapping[%zu]", k);
        c.what = what;
        if ((rc = f_check_map(&c, e, entry_keys, sizeof entry_keys / sizeof entry_keys[0])))
            return rc;
        tg = f_get(e, "target");
        ty = f_get(e, "type");
        if (tg->kind != ST_Y_SCALAR || ty->kind != ST_Y_SCALAR)
            return f_error(&c, e, "%s: target and type must be plain words", what);
        lv = find_level(a, tg->scalar);
        if (lv < 0) {
            char names[512] = "";
            for (int i = 0; i < a->n_levels; i++) {
                size_t u = strlen(names);
                snprintf(names + u, sizeof names - u, "%s%s", i ? ", " : "", a->level[i].name);
            }
            return f_error(&c, tg, "%s: target '%s' is not a level of %s (levels: %s)", what,
                           tg->scalar, a->name, names);
        }
        if (strcmp(ty->scalar, "temporal") == 0) {
            unsigned f[ST_AD_COUNT] = {1, 1, 1, 1, 1, 1, 1, 1};
            if (set_t[lv]++)
                return f_error(&c, e, "%s: a second temporal entry for %s", what, tg->scalar);
            if ((rc = parse_factors(&c, e, f_get(e, "factors"), f)) ||
                (rc = parse_perm(&c, f_get(e, "permutation"), m->perm[lv], NULL, 0)))
                return rc;
            memcpy(m->t[lv], f, sizeof f);
        } else if (strcmp(ty->scalar, "spatial") == 0) {
            unsigned f[ST_AD_COUNT] = {1, 1, 1, 1, 1, 1, 1, 1};
            unsigned char perm[ST_AD_COUNT];
            long long split = -1;
            int fx, fy;
            if (set_s[lv]++)
                return f_error(&c, e, "%s: a second spatial entry for %s", what, tg->scalar);
            if ((rc = parse_factors(&c, e, f_get(e, "factors"), f)) ||
                (rc = parse_perm(&c, f_get(e, "permutation"), perm, NULL, 0)))
                return rc;
            if (f_get(e, "split") && (rc = f_int(&c, e, "split", 0, 1 << 20, &split)))
                return rc;
            st_accel_fanout(a, lv, &fx, &fy);
            if (split < 0)
                split = fy > 1 && fx == 1 ? 0 : ST_AD_COUNT; /* all on the axis that exists */
            for (int pos = 0; pos < ST_AD_COUNT; pos++) {
                int d = perm[pos];
                /* Timeloop: dims before `split` in the permutation go to X */
                if (pos < split)
                    m->sx[lv][d] = f[d];
                else
                    m->sy[lv][d] = f[d];
            }
        } else if (strcmp(ty->scalar, "datatype") == 0 || strcmp(ty->scalar, "bypass") == 0) {
            unsigned keep, byp;
            if ((rc = read_tensor_list(&c, f_get(e, "keep"), "keep", &keep)) ||
                (rc = read_tensor_list(&c, f_get(e, "bypass"), "bypass", &byp)))
                return rc;
            if (keep & byp)
                return f_error(&c, e, "%s: a tensor is both kept and bypassed", what);
            m->keep[lv] = (unsigned char)((m->keep[lv] | keep) & ~byp);
        } else {
            return f_error(&c, ty, "%s: type '%s' is not temporal, spatial, datatype or bypass",
                           what, ty->scalar);
        }
    }
    return 0;
}

/* A mapping that reads but does not fit the problem or the architecture:
 * the evaluator's reason, at the entry it concerns (the level's first entry,
 * or the first factors naming the dimension whose factors do not multiply to
 * its size), else at the mapping list. */
static int mapping_fits(const char *path, const st_ynode *root, const st_accel *a, const st_aprob *p,
                        const st_amap *m, st_error *err)
{
    st_astats *st = malloc(sizeof *st);
    if (!st)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int lv, dim, rc = st_accel_eval_at(a, p, m, st, &lv, &dim, err);
    free(st);
    if (!rc)
        return 0;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    const st_ynode *list = root && root->kind == ST_Y_MAP ? f_get(root, "mapping") : root, *at = list;
    for (size_t k = 0; list && list->kind == ST_Y_SEQ && k < list->n; k++) {
        const st_ynode *e = list->items[k], *tg = f_get(e, "target"), *fa = f_get(e, "factors");
        if (lv >= 0 && tg && tg->kind == ST_Y_SCALAR && find_level(a, tg->scalar) == lv) {
            at = e;
            break;
        }
        if (dim >= 0 && fa && fa->kind == ST_Y_SCALAR) {
            const char *q = strchr(fa->scalar, ST_AD_LETTERS[dim]);
            if (q && atoi(q + 1 + (q[1] == '=')) != 1) { /* "Q3" or "Q=3" */
                at = fa;
                break;
            }
        }
    }
    fctx c = {path, "mapping", err, "Timeloop v0.4's mapping format"};
    return f_error(&c, at, "the mapping: %s", msg);
}

int st_load_timeloop_mapping(const char *path, const st_accel *a, const st_aprob *p,
                             st_amap *m, st_error *err)
{
    st_ydoc doc;
    int rc = load_doc(path, "mapping (`mapping: [...]`)", &doc, err);
    if (rc)
        return rc;
    rc = st_read_timeloop_mapping(path, doc.root, a, p, m, err);
    if (!rc)
        rc = mapping_fits(path, doc.root, a, p, m, err);
    st_ydoc_free(&doc);
    return rc;
}

/* ---- architecture + ERT ----------------------------------------------------- */

typedef struct tl_cons {
    char target[48];
    int has_t, has_s, has_keep;
    unsigned t_fixed1, s_fixed1;  /* dims whose factor is fixed (to 1 or more) */
    unsigned t_fixed[ST_AD_COUNT], s_fixed[ST_AD_COUNT]; /* the fixed values above 1 */
    const st_ynode *t_node, *s_node; /* their `factors:`, for errors */
    const st_ynode *at;              /* the first entry naming the target, for errors */
    char t_perm[12], s_perm[12];
    long long split;              /* -1: not given */
    unsigned keep, bypass;
} tl_cons;

#define TL_MAX_NAMES 256

typedef struct tl_build {
    fctx c;
    st_accel *a;
    int mesh_x, count;   /* instances of the current subtree, laid out mesh_x wide */
    int have_mac;
    tl_cons cons[2 * ST_ACCEL_MAX_LEVELS];
    int ncons;
    char names[TL_MAX_NAMES][48]; /* every component and container, for constraint targets */
    int nnames;
    int names_full; /* more than TL_MAX_NAMES: targets are not checked against them */
    double cycle_s;
} tl_build;

/* a named node (component or container), its [range] left off */
static void tl_name_seen(tl_build *b, const char *name)
{
    if (b->nnames < TL_MAX_NAMES)
        snprintf(b->names[b->nnames++], sizeof b->names[0], "%.*s", (int)strcspn(name, "["), name);
    else
        b->names_full = 1;
}

static int tl_name_known(const tl_build *b, const char *name)
{
    size_t n = strcspn(name, "[");
    for (int i = 0; i < b->nnames; i++)
        if (strlen(b->names[i]) == n && strncmp(b->names[i], name, n) == 0)
            return 1;
    return 0;
}

/* "N=1 C=16", "[N=1, C=16]" or a list of such -> the dims fixed (bits of
 * *fixed1) and their values above 1 (fixed[d]; 1 leaves it 0). */
static int tl_factors(const fctx *c, const st_ynode *v, unsigned *fixed1, unsigned *fixed)
{
    if (!v)
        return 0;
    if (v->kind == ST_Y_SEQ) {
        for (size_t i = 0; i < v->n; i++) {
            int rc = tl_factors(c, v->items[i], fixed1, fixed);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (v->kind != ST_Y_SCALAR)
        return f_error(c, v, "constraint factors: expected \"N=1 C=1\" or a list of them");
    for (const char *s = v->scalar; *s;) {
        while (*s == ' ' || *s == ',' || *s == '[' || *s == ']')
            s++;
        if (!*s)
            break;
        int d = dim_of(*s);
        if (d < 0)
            return f_error(c, v, "constraint factors: '%c' is not a dimension", *s);
        s++;
        if (*s == '=')
            s++;
        char *end;
        errno = 0;
        /* decimal digits, then a separator (space, comma, bracket) or the
         * end: not 0x3, 3.5 or 3C=3 */
        size_t nd = strspn(s, "0123456789");
        long val = nd ? strtol(s, &end, 10) : 0;
        if (!nd && *s != '-')
            return f_error(c, v, "constraint factors: %c needs a number", ST_AD_LETTERS[d]);
        if (nd && s[nd] && !strchr(" ,[]", s[nd]))
            return f_error(c, v, "constraint factors: %c=%.*s is not a whole number; give %c=N with N >= 1",
                           ST_AD_LETTERS[d], (int)strcspn(s, " ,[]"), s, ST_AD_LETTERS[d]);
        if (!nd || val < 1)
            return f_error(c, v, "constraint factors: %c=%.*s is not a factor; give %c=1 to keep the dimension "
                           "out of this level, or leave it out", ST_AD_LETTERS[d], (int)strcspn(s, " ,[]"), s,
                           ST_AD_LETTERS[d]);
        if (errno == ERANGE || val > 1 << 24)
            return f_error(c, v, "constraint factors: %c=%.*s is past any problem's bound (2^24)", ST_AD_LETTERS[d],
                           (int)nd, s);
        if (d == ST_AD_G && val > 1)
            return f_error(c, v, "constraint factors: G=%ld, but Timeloop's conv2D problem has no G (groups); "
                           "leave it out", val);
        end = (char *)s + nd;
        unsigned was = (*fixed1 >> d & 1u) ? (fixed[d] ? fixed[d] : 1u) : 0u;
        if (was && was != (unsigned)val)
            return f_error(c, v, "constraint factors: %c is fixed twice (%u, then %ld); give it once",
                           ST_AD_LETTERS[d], was, val);
        *fixed1 |= 1u << d;
        fixed[d] = val > 1 ? (unsigned)val : 0;
        s = end;
    }
    return 0;
}

static int tl_perm(const fctx *c, const st_ynode *v, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    if (!v)
        return 0;
    if (v->kind == ST_Y_SEQ) {
        for (size_t i = 0; i < v->n && k + 1 < n; i++) {
            if (v->items[i]->kind != ST_Y_SCALAR || dim_of(v->items[i]->scalar[0]) < 0)
                return f_error(c, v->items[i], "constraint permutation: expected dimensions");
            out[k++] = v->items[i]->scalar[0];
        }
    } else if (v->kind == ST_Y_SCALAR) {
        for (const char *s = v->scalar; *s && k + 1 < n; s++)
            if (dim_of(*s) >= 0)
                out[k++] = *s;
    } else {
        return f_error(c, v, "constraint permutation: expected a list or a string");
    }
    out[k] = 0;
    return 0;
}

static tl_cons *tl_cons_for(tl_build *b, const char *target)
{
    size_t n = strcspn(target, "[");
    for (int i = 0; i < b->ncons; i++)
        if (strlen(b->cons[i].target) == n && strncmp(b->cons[i].target, target, n) == 0)
            return &b->cons[i];
    if (b->ncons == (int)(sizeof b->cons / sizeof b->cons[0]))
        return NULL;
    tl_cons *k = &b->cons[b->ncons++];
    memset(k, 0, sizeof *k);
    k->split = -1;
    snprintf(k->target, sizeof k->target, "%.*s", (int)n, target);
    return k;
}

/* One constraint entry: {type: temporal|spatial|bypass|dataspace, ...}. */
static int tl_read_constraint(tl_build *b, tl_cons *k, const st_ynode *e, const char *type)
{
    int rc;
    if (!k->at)
        k->at = e;
    if (strcmp(type, "temporal") == 0) {
        k->has_t = 1;
        k->t_node = f_get(e, "factors") ? f_get(e, "factors") : k->t_node;
        if ((rc = tl_factors(&b->c, f_get(e, "factors"), &k->t_fixed1, k->t_fixed)) ||
            (rc = tl_perm(&b->c, f_get(e, "permutation"), k->t_perm, sizeof k->t_perm)))
            return rc;
    } else if (strcmp(type, "spatial") == 0) {
        k->has_s = 1;
        k->s_node = f_get(e, "factors") ? f_get(e, "factors") : k->s_node;
        if ((rc = tl_factors(&b->c, f_get(e, "factors"), &k->s_fixed1, k->s_fixed)) ||
            (rc = tl_perm(&b->c, f_get(e, "permutation"), k->s_perm, sizeof k->s_perm)))
            return rc;
        if (f_get(e, "split") && (rc = f_int(&b->c, e, "split", 0, 1 << 20, &k->split)))
            return rc;
    } else if (strcmp(type, "bypass") == 0 || strcmp(type, "dataspace") == 0 ||
               strcmp(type, "datatype") == 0) {
        k->has_keep = 1;
        if ((rc = read_tensor_list(&b->c, f_get(e, "keep"), "keep", &k->keep)) ||
            (rc = read_tensor_list(&b->c, f_get(e, "bypass"), "bypass", &k->bypass)))
            return rc;
        if (k->keep & k->bypass)
            return f_error(&b->c, e, "a tensor is both kept and bypassed; name it in one of keep and bypass");
    }
    /* other constraint types (utilization, ...) are not modelled */
    return 0;
}

/* v0.4 `constraints:` block of a node: {spatial: {...}, temporal: {...}, dataspace: {...}}. */
static int tl_node_constraints(tl_build *b, const char *target, const st_ynode *cn)
{
    static const char *const types[] = {"temporal", "spatial", "dataspace"};
    tl_cons *k;
    if (!cn)
        return 0;
    if (!(k = tl_cons_for(b, target)))
        return f_error(&b->c, cn, "too many constrained levels");
    for (int i = 0; i < 3; i++) {
        const st_ynode *e = f_get(cn, types[i]);
        int rc;
        if (e && (rc = tl_read_constraint(b, k, e, types[i])))
            return rc;
    }
    return 0;
}

static int tl_attr_int_min(const fctx *c, const st_ynode *attrs, const char *key, long long dflt,
                           long long min, long long *out)
{
    const st_ynode *v = f_get(attrs, key);
    *out = dflt;
    if (!v || st_ynode_is_null(v))
        return 0;
    return f_node_int(c, v, key, min, 1LL << 40, out);
}

/* the same within [min, max]: the widths strata keeps as int, at the
 * limits the preset loader puts on them */
static int tl_attr_int_in(const fctx *c, const st_ynode *attrs, const char *key, long long dflt, long long min,
                          long long max, long long *out)
{
    const st_ynode *v = f_get(attrs, key);
    *out = dflt;
    if (!v || st_ynode_is_null(v))
        return 0;
    return f_node_int(c, v, key, min, max, out);
}

static int tl_attr_int(const fctx *c, const st_ynode *attrs, const char *key, long long dflt,
                       long long *out)
{
    return tl_attr_int_min(c, attrs, key, dflt, 0, out);
}

/* Instances of one component across the architecture: a spatial mesh
 * multiplies them, so each stays an int with room (16 M PEs, over any
 * accelerator built). */
#define TL_MAX_INSTANCES (1LL << 24)

/* A mesh side (meshX, meshY): 1 to TL_MAX_INSTANCES, default 1. */
static int tl_mesh(const fctx *c, const st_ynode *attrs, const char *key, long long *out)
{
    const st_ynode *v = f_get(attrs, key);
    *out = 1;
    if (!v || st_ynode_is_null(v))
        return 0;
    return f_node_int(c, v, key, 1, TL_MAX_INSTANCES, out);
}

static int tl_add_level(tl_build *b, const st_ynode *at, const char *name, st_mem_class cls,
                        int instances, int mesh_x)
{
    st_accel *a = b->a;
    if (a->n_levels == ST_ACCEL_MAX_LEVELS)
        return f_error(&b->c, at, "more than %d storage levels", ST_ACCEL_MAX_LEVELS);
    /* a mapping, its constraints and the reports name levels: each once */
    int len = (int)strcspn(name, "[");
    if (len == 0 || len >= (int)sizeof a->level[0].name)
        return f_error(&b->c, at, "component name '%.40s%s': expected 1 to %d characters before any [range]", name,
                       strlen(name) > 40 ? "..." : "", (int)sizeof a->level[0].name - 1);
    for (int i = 0; i < a->n_levels; i++)
        if ((int)strlen(a->level[i].name) == len && strncmp(a->level[i].name, name, (size_t)len) == 0)
            return f_error(&b->c, at, "component name '%.*s' is given twice; a mapping names its levels, so "
                           "give each its own", len, name);
    if (a->n_levels > 0) {
        const st_mem_level *up = &a->level[a->n_levels - 1];
        if (instances < up->instances || instances % up->instances)
            return f_error(&b->c, at, "component %.*s has %d instances, but %s above it has %d; each of those feeds "
                           "a whole number of them, so give it a multiple of %d", len, name, instances, up->name,
                           up->instances, up->instances);
    }
    st_mem_level *l = &a->level[a->n_levels++];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%.*s", (int)strcspn(name, "["), name);
    if (st_level_name_reserved(l->name))
        return f_error(&b->c, at, "component name '%s' is the energy breakdown's own entry for the %s; name "
                       "the component something else", l->name, strcmp(l->name, "mac") == 0 ? "MACs" : "network on chip");
    l->cls = cls;
    l->instances = instances;
    l->mesh_x = mesh_x;
    l->t_allow = cls == ST_MEM_FANOUT ? 0 : ST_AD_ALL;
    l->sx_allow = l->sy_allow = ST_AD_ALL;
    return 0;
}

static int tl_component(tl_build *b, const st_ynode *node, const char *name, int instances,
                        int mesh_x)
{
    const st_ynode *cls = f_get(node, "class"), *attrs = f_get(node, "attributes");
    const char *k;
    long long depth, width, datawidth, banks, rbw, wbw, block;
    int rc;
    if (!cls || cls->kind != ST_Y_SCALAR)
        return f_error(&b->c, node, "component %s has no class", name);
    k = cls->scalar;
    if (strstr(k, "mac") || strstr(k, "MAC") || strstr(k, "compute")) {
        st_accel *a = b->a;
        long long mw, aw;
        if (b->have_mac++)
            return f_error(&b->c, node, "a second compute component (%s); one MAC array is "
                                        "supported", name);
        /* the MACs end the hierarchy, below its innermost storage: each of
         * that level's instances feeds a whole number of them */
        if (a->n_levels == 0)
            return f_error(&b->c, node, "compute component %s comes before any storage; Timeloop's hierarchy "
                                        "runs from the backing store (DRAM) down to the MACs: put it last", name);
        const st_mem_level *in = &a->level[a->n_levels - 1];
        if (instances < in->instances || instances % in->instances)
            return f_error(&b->c, node, "compute component %.*s has %d instance%s, but the storage above it (%s) "
                                        "has %d; each of those feeds a whole number of MACs, so give it a "
                                        "multiple of %d", (int)strcspn(name, "["), name, instances,
                           instances == 1 ? "" : "s", in->name, in->instances, in->instances);
        a->pe_x = mesh_x;
        a->pe_y = instances / mesh_x;
        a->macs_per_pe = 1;
        if ((rc = tl_attr_int_in(&b->c, attrs, "multiplier_width", 8, 1, 1024, &mw)) ||
            (rc = tl_attr_int_in(&b->c, attrs, "adder_width", 16, 1, 1024, &aw)) ||
            (rc = tl_attr_int_in(&b->c, attrs, "datawidth", mw, 1, 1024, &mw)))
            return rc;
        a->mac_bits = (int)mw;
        a->adder_bits = (int)aw;
        return 0;
    }
    if (b->have_mac)
        return f_error(&b->c, node, "component %s comes after the compute component; Timeloop's hierarchy ends "
                                    "at the MACs: put the storage above them", name);
    st_mem_class mc;
    if (strcasecmp(k, "DRAM") == 0 || strstr(k, "DRAM"))
        mc = ST_MEM_DRAM;
    else if (strstr(k, "SRAM") || strstr(k, "sram") || strcmp(k, "storage") == 0)
        mc = ST_MEM_SRAM;
    else if (strstr(k, "RF") || strstr(k, "regfile") || strstr(k, "reg"))
        mc = ST_MEM_REGFILE;
    else if (strcmp(k, "dummy_storage") == 0)
        return tl_add_level(b, node, name, ST_MEM_FANOUT, instances, mesh_x);
    else
        return f_error(&b->c, cls, "component %s: class '%s' is not supported (DRAM, "
                                   "*SRAM*, *RF*/regfile, dummy_storage, *mac*)", name, k);
    if ((rc = tl_attr_int_in(&b->c, attrs, "datawidth", 8, 1, 1024, &datawidth)) ||
        (rc = tl_attr_int_in(&b->c, attrs, "block_size", 0, 0, 1 << 20, &block)) ||
        (rc = tl_attr_int_in(&b->c, attrs, "width", block ? block * datawidth : datawidth, 1, 1 << 20, &width)) ||
        (rc = tl_attr_int(&b->c, attrs, "depth", 0, &depth)) ||
        (rc = tl_attr_int_in(&b->c, attrs, "n_banks", 0, 0, 1 << 20, &banks)) ||
        (rc = tl_attr_int(&b->c, attrs, "read_bandwidth", 0, &rbw)) ||
        (rc = tl_attr_int(&b->c, attrs, "write_bandwidth", 0, &wbw)))
        return rc;
    if (datawidth < 1 || width < datawidth || width % datawidth)
        return f_error(&b->c, attrs ? attrs : node, "component %s: width %lld is not a multiple "
                                                   "of datawidth %lld", name, width, datawidth);
    if (mc != ST_MEM_DRAM && depth < 1)
        return f_error(&b->c, attrs ? attrs : node, "component %s: on-chip storage needs a depth",
                       name);
    if ((rc = tl_add_level(b, node, name, mc, instances, mesh_x)))
        return rc;
    st_mem_level *l = &b->a->level[b->a->n_levels - 1];
    l->depth = mc == ST_MEM_DRAM ? 0 : depth;
    l->width_bits = (int)width;
    l->word_bits = (int)datawidth;
    l->banks = (int)banks;
    l->read_bw_words = (double)rbw;
    l->write_bw_words = (double)wbw;
    l->keeps[0] = l->keeps[1] = l->keeps[2] = 1;
    return 0;
}

/* The v0.4 tree: nodes list of containers, components and parallel groups. */
static int tl_walk(tl_build *b, const st_ynode *nodes)
{
    if (!nodes || nodes->kind != ST_Y_SEQ)
        return f_error(&b->c, nodes, "architecture: expected `nodes:` as a list");
    for (size_t i = 0; i < nodes->n; i++) {
        const st_ynode *nd = nodes->items[i], *nm = f_get(nd, "name"), *sub = f_get(nd, "nodes");
        int rc;
        if (sub && !nm) { /* !Parallel: its children in order */
            if ((rc = tl_walk(b, sub)))
                return rc;
            continue;
        }
        if (!nm || nm->kind != ST_Y_SCALAR)
            return f_error(&b->c, nd, "architecture node without a name");
        tl_name_seen(b, nm->scalar);
        if (f_get(nd, "class")) {
            if ((rc = tl_component(b, nd, nm->scalar, b->count, b->mesh_x)) ||
                (rc = tl_node_constraints(b, nm->scalar, f_get(nd, "constraints"))))
                return rc;
            continue;
        }
        /* no class: a container; one that carries storage attributes is a
         * component that lost its class, which would drop out of the
         * hierarchy without a word */
        const st_ynode *na = f_get(nd, "attributes");
        /* keys only storage takes (a container may carry width or
         * datawidth for its children to inherit) */
        static const char *const storage_keys[] = {"depth", "block_size", "n_banks"};
        for (size_t q = 0; na && q < sizeof storage_keys / sizeof storage_keys[0]; q++)
            if (f_get(na, storage_keys[q]))
                return f_error(&b->c, nd, "node %s has storage attributes (%s) but no class; a component needs "
                               "`class:` (DRAM, *SRAM*, *RF*/regfile, dummy_storage, *mac*)", nm->scalar,
                               storage_keys[q]);
        /* a container: a spatial mesh adds a fan-out stage, as Timeloop does */
        const st_ynode *sp = f_get(nd, "spatial");
        if (sp) {
            long long mx = 1, my = 1;
            char stage[64];
            static const fkey mesh_keys[] = {{"meshX", 0, "instances across"}, {"meshY", 0, "instances down"}};
            if ((rc = f_check_map(&b->c, sp, mesh_keys, 2)))
                return rc;
            if ((rc = tl_mesh(&b->c, sp, "meshX", &mx)) || (rc = tl_mesh(&b->c, sp, "meshY", &my)))
                return rc;
            long long m = mx * my; /* each side at most 2^24: no overflow */
            if (m > TL_MAX_INSTANCES / (b->count > 0 ? b->count : 1))
                return f_error(&b->c, sp, "a %lld x %lld mesh of %d instances each makes %.3g instances; strata "
                               "maps up to %lld (16 M)", mx, my, b->count, (double)b->count * mx * my,
                               TL_MAX_INSTANCES);
            snprintf(stage, sizeof stage, "inter_%s_spatial", nm->scalar);
            if ((rc = tl_add_level(b, nd, stage, ST_MEM_FANOUT, b->count, b->mesh_x)))
                return rc;
            if ((rc = tl_node_constraints(b, stage, f_get(nd, "constraints"))))
                return rc;
            b->count *= (int)(mx * my);
            b->mesh_x *= (int)mx;
        }
        if (sub && (rc = tl_walk(b, sub)))
            return rc;
    }
    return 0;
}

/* "name[1..168]" -> 168 (1 without a range); 0 past TL_MAX_INSTANCES. */
static int tl_range(const char *name)
{
    const char *lb = strchr(name, '[');
    long long lo, hi;
    int end = 0;
    if (!lb)
        return 1;
    /* NAME[LO..HI], LO <= HI, nothing after: else -1 (a typo, not one instance) */
    if (sscanf(lb, "[%lld..%lld]%n", &lo, &hi, &end) != 2 || end == 0 || lb[end] || hi < lo)
        return -1;
    /* bounds first: hi - lo of two large values would overflow */
    if (lo < -TL_MAX_INSTANCES || hi > TL_MAX_INSTANCES || hi - lo >= TL_MAX_INSTANCES)
        return 0;
    return (int)(hi - lo + 1);
}

/* The flattened form: subtree: [{name, attributes, local: [...], subtree: [...]}]. */
static int tl_flat(tl_build *b, const st_ynode *subtree)
{
    if (!subtree || subtree->kind != ST_Y_SEQ)
        return 0;
    for (size_t i = 0; i < subtree->n; i++) {
        const st_ynode *t = subtree->items[i], *attrs = f_get(t, "attributes");
        const st_ynode *local = f_get(t, "local");
        double gcs = 0;
        int rc;
        const st_ynode *tn = f_get(t, "name");
        if (tn && tn->kind == ST_Y_SCALAR)
            tl_name_seen(b, tn->scalar);
        if (attrs && f_get(attrs, "global_cycle_seconds")) {
            if ((rc = f_node_number(&b->c, f_get(attrs, "global_cycle_seconds"), "global_cycle_seconds", 1e-15, 1,
                                    &gcs)))
                return rc;
            b->cycle_s = gcs;
        }
        if (local && local->kind == ST_Y_SEQ)
            for (size_t k = 0; k < local->n; k++) {
                const st_ynode *comp = local->items[k], *nm = f_get(comp, "name");
                const st_ynode *ca = f_get(comp, "attributes");
                long long mx;
                if (!nm || nm->kind != ST_Y_SCALAR)
                    return f_error(&b->c, comp, "architecture component without a name");
                tl_name_seen(b, nm->scalar);
                int inst = tl_range(nm->scalar);
                if (inst < 0)
                    return f_error(&b->c, nm, "'%s': expected NAME[LO..HI], whole numbers with LO <= HI, for "
                                   "its instances (psum_spad[0..167] is 168)", nm->scalar);
                if (inst < 1)
                    return f_error(&b->c, nm, "'%s': more than %lld instances; strata maps up to that many (16 M)",
                                   nm->scalar, TL_MAX_INSTANCES);
                if ((rc = tl_attr_int(&b->c, ca, "meshX", inst, &mx)))
                    return rc;
                if (mx < 1 || inst % mx)
                    mx = inst;
                if ((rc = tl_component(b, comp, nm->scalar, inst, (int)mx)))
                    return rc;
            }
        if ((rc = tl_flat(b, f_get(t, "subtree"))))
            return rc;
    }
    return 0;
}

static int tl_read_ert(const char *path, st_accel *a, double *cycle_s, st_error *err)
{
    st_ydoc doc;
    fctx c = {path, "ERT", err, "Accelergy's ERT format"};
    int rc = st_ydoc_load_file(&doc, path, err);
    if (rc)
        return rc;
    const st_ynode *ert = doc.root ? f_get(doc.root, "ERT") : NULL;
    const st_ynode *tables = ert ? f_get(ert, "tables") : NULL;
    if (!tables || tables->kind != ST_Y_SEQ) {
        rc = f_error(&c, doc.root, "not an Accelergy ERT: expected `ERT: {tables: [...]}`");
        goto out;
    }
    /* which storage actions each level got, and whether the MAC got one:
     * a component without its energies would count as free */
    enum { ACT_READ = 1, ACT_WRITE = 2, ACT_UPDATE = 4, ACT_ALL = 7 };
    unsigned char got[ST_ACCEL_MAX_LEVELS] = {0};
    const st_ynode *where[ST_ACCEL_MAX_LEVELS] = {0};
    int have_mac = 0;
    for (size_t i = 0; i < tables->n; i++) {
        const st_ynode *t = tables->items[i], *nm = f_get(t, "name"), *acts = f_get(t, "actions");
        if (!nm || nm->kind != ST_Y_SCALAR || !acts || acts->kind != ST_Y_SEQ) {
            rc = f_error(&c, t, "ERT table without a name or actions");
            goto out;
        }
        /* "system_top_level.PE[1..14].psum_spad[1..168]": drop the ranges,
         * keep the last dotted name */
        char flat[256], comp[64];
        size_t fl = 0;
        int inbr = 0;
        for (const char *q = nm->scalar; *q && fl + 1 < sizeof flat; q++) {
            if (*q == '[')
                inbr = 1;
            else if (*q == ']')
                inbr = 0;
            else if (!inbr)
                flat[fl++] = *q;
        }
        flat[fl] = 0;
        const char *dot = strrchr(flat, '.');
        snprintf(comp, sizeof comp, "%s", dot ? dot + 1 : flat);
        int lv = -1;
        for (int k = 0; k < a->n_levels; k++)
            if (strcmp(a->level[k].name, comp) == 0)
                lv = k;
        if (lv >= 0)
            where[lv] = nm;
        for (size_t k = 0; k < acts->n; k++) {
            const st_ynode *ac = acts->items[k], *an = f_get(ac, "name"), *ev = f_get(ac, "energy");
            const st_ynode *args = f_get(ac, "arguments");
            double e;
            if (!an || an->kind != ST_Y_SCALAR || !ev) {
                rc = f_error(&c, ac, "ERT action without a name or energy");
                goto out;
            }
            if ((rc = f_node_number(&c, ev, "energy", 0, 1e12, &e)))
                goto out;
            e *= 1e-12; /* pJ */
            if (args && f_get(args, "global_cycle_seconds")) {
                double g;
                if ((rc = f_node_number(&c, f_get(args, "global_cycle_seconds"), "global_cycle_seconds", 1e-15, 1,
                                        &g)))
                    goto out;
                *cycle_s = g;
            }
            /* several entries for one action (argument variants): keep the largest */
            const char *s = an->scalar;
            if (lv >= 0) {
                st_mem_level *l = &a->level[lv];
                double *dst = strcmp(s, "read") == 0 ? &l->e_read
                              : strcmp(s, "write") == 0 ? &l->e_write
                              : strcmp(s, "update") == 0 ? &l->e_update
                              : strcmp(s, "leak") == 0 ? &l->e_leak : NULL;
                if (dst && e > *dst)
                    *dst = e;
                got[lv] |= strcmp(s, "read") == 0 ? ACT_READ : strcmp(s, "write") == 0 ? ACT_WRITE
                                                             : strcmp(s, "update") == 0 ? ACT_UPDATE : 0;
            } else if (strstr(s, "compute") || strcmp(s, "mac_random") == 0) {
                if (e > a->e_mac)
                    a->e_mac = e;
                have_mac = 1;
            }
        }
    }
    for (int k = 0; k < a->n_levels; k++) {
        const st_mem_level *l = &a->level[k];
        if (l->cls == ST_MEM_FANOUT || got[k] == ACT_ALL)
            continue;
        if (!where[k]) {
            rc = f_error(&c, tables, "no table for the architecture's storage component '%s': its accesses would "
                         "cost nothing; add a table named ...%s[...] with read, write and update actions "
                         "(Accelergy writes one per component)", l->name, l->name);
            goto out;
        }
        rc = f_error(&c, where[k], "table %s has no '%s' action: its %ss would cost nothing; add the action's "
                     "energy (pJ)", where[k]->scalar, !(got[k] & ACT_READ) ? "read" : !(got[k] & ACT_WRITE) ? "write" : "update",
                     !(got[k] & ACT_READ) ? "read" : !(got[k] & ACT_WRITE) ? "write" : "update");
        goto out;
    }
    if (!have_mac) {
        rc = f_error(&c, tables, "no energy for the MAC: no table has a compute (or mac_random) action; add the "
                     "compute component's table");
        goto out;
    }
    rc = 0;
out:
    st_ydoc_free(&doc);
    return rc;
}

int st_is_timeloop_arch(const char *path, st_error *err)
{
    st_ydoc doc;
    st_error own;
    int yes, rc;
    if ((rc = st_ydoc_load_file(&doc, path, err ? err : &own)))
        return rc < 0 ? rc : ST_EINVAL;
    yes = doc.root && f_get(doc.root, "architecture") != NULL;
    st_ydoc_free(&doc);
    return yes;
}

static int find_ert(const char *arch_path, char *out, size_t n, st_error *err)
{
    char dir[512];
    const char *slash = strrchr(arch_path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - arch_path) : 1, slash ? arch_path : ".");
    /* NAME.arch.yaml -> NAME.ERT.yaml, else the only *.ERT.yaml there */
    const char *base = slash ? slash + 1 : arch_path, *dot = strstr(base, ".arch.");
    if (dot) {
        snprintf(out, n, "%s/%.*s.ERT.yaml", dir, (int)(dot - base), base);
        FILE *f = fopen(out, "r");
        if (f) {
            fclose(f);
            return 0;
        }
    }
    return st_error_set(err, ST_EINVAL, "%s: no energy table found beside it (looked for "
                                        "NAME.ERT.yaml); give --ert FILE.ERT.yaml", arch_path);
}

int st_load_timeloop_arch(const char *arch_path, const char *ert_path, st_accel *a,
                          st_error *err)
{
    st_ydoc doc;
    tl_build *b;
    char ertbuf[600];
    int rc;
    memset(a, 0, sizeof *a);
    if ((rc = st_ydoc_load_file(&doc, arch_path, err)))
        return rc;
    if (!(b = calloc(1, sizeof *b))) {
        st_ydoc_free(&doc);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    b->c.path = arch_path;
    b->c.what = "architecture";
    b->c.err = err;
    b->a = a;
    b->count = b->mesh_x = 1;
    const st_ynode *arch = doc.root ? f_get(doc.root, "architecture") : NULL;
    if (!arch) {
        rc = f_error(&b->c, doc.root, "not a Timeloop architecture: no `architecture:` key");
        goto out;
    }
    if ((rc = tl_version(&b->c, arch)))
        goto out;
    if (f_get(arch, "nodes"))
        rc = tl_walk(b, f_get(arch, "nodes"));
    else if (f_get(arch, "subtree"))
        rc = tl_flat(b, f_get(arch, "subtree"));
    else
        rc = f_error(&b->c, arch, "architecture: expected `nodes:` (v0.4) or `subtree:` "
                                  "(flattened)");
    if (rc)
        goto out;
    /* flattened form: constraints sit in architecture_constraints.targets */
    {
        const st_ynode *ac = f_get(doc.root, "architecture_constraints");
        const st_ynode *tg = ac ? f_get(ac, "targets") : NULL;
        for (size_t i = 0; tg && tg->kind == ST_Y_SEQ && i < tg->n; i++) {
            const st_ynode *e = tg->items[i], *t = f_get(e, "target"), *ty = f_get(e, "type");
            tl_cons *k;
            if (!t || !ty || t->kind != ST_Y_SCALAR || ty->kind != ST_Y_SCALAR)
                continue;
            if (!(k = tl_cons_for(b, t->scalar))) {
                rc = f_error(&b->c, e, "too many constrained levels");
                goto out;
            }
            if ((rc = tl_read_constraint(b, k, e, ty->scalar)))
                goto out;
        }
    }
    if (!b->have_mac || a->n_levels == 0) {
        rc = f_error(&b->c, arch, "architecture: needs storage levels and a compute (mac) "
                                  "component");
        goto out;
    }
    /* apply the constraints to the levels they name */
    for (int i = 0; i < b->ncons; i++) {
        const tl_cons *k = &b->cons[i];
        int lv = find_level(a, k->target);
        if (lv < 0 && !b->names_full && !tl_name_known(b, k->target)) {
            /* a name nothing in the architecture has: a typo would drop its
             * bypass, keep and factors without a word */
            const char *cand[TL_MAX_NAMES];
            for (int q = 0; q < b->nnames; q++)
                cand[q] = b->names[q];
            const char *s = st_suggest(k->target, cand, (size_t)b->nnames);
            const st_ynode *at = k->t_node ? k->t_node : k->s_node ? k->s_node : k->at;
            rc = f_error(&b->c, at, "constraint target '%s' is no component or container of this architecture%s%s%s",
                         k->target, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
            goto out;
        }
        if (lv < 0) {
            /* a target with no level (the MAC, a container without a mesh):
             * factors fixed above 1 there would be lost */
            int fixed = 0;
            for (int d = 0; d < ST_AD_COUNT; d++)
                fixed |= k->t_fixed[d] > 1 || k->s_fixed[d] > 1;
            if (fixed) {
                rc = f_error(&b->c, k->t_node ? k->t_node : k->s_node, "constraint factors for '%s', which is not "
                             "a storage level or a fan-out of this architecture; put them on a level it has",
                             k->target);
                goto out;
            }
            continue;
        }
        st_mem_level *l = &a->level[lv];
        if (k->has_t) {
            l->t_allow = (l->cls == ST_MEM_FANOUT ? 0 : ST_AD_ALL) & ~k->t_fixed1;
            snprintf(l->t_perm, sizeof l->t_perm, "%s", k->t_perm);
            for (int d = 0; d < ST_AD_COUNT; d++) {
                if (!k->t_fixed[d])
                    continue;
                if (l->cls == ST_MEM_FANOUT) {
                    rc = f_error(&b->c, k->t_node, "constraint factors: %c=%u at %s, a fan-out that holds no data "
                                 "and runs no temporal loops; give it as a spatial constraint",
                                 ST_AD_LETTERS[d], k->t_fixed[d], l->name);
                    goto out;
                }
                l->t_fixed[d] = k->t_fixed[d];
            }
        }
        if (k->has_s) {
            unsigned all = ST_AD_ALL & ~k->s_fixed1;
            int fx, fy;
            st_accel_fanout(a, lv, &fx, &fy);
            if (k->split >= 0 && k->s_perm[0]) {
                l->sx_allow = l->sy_allow = 0;
                for (int pos = 0; k->s_perm[pos]; pos++) {
                    unsigned bit = 1u << dim_of(k->s_perm[pos]);
                    if (pos < k->split)
                        l->sx_allow |= bit;
                    else
                        l->sy_allow |= bit;
                }
                l->sx_allow &= all;
                l->sy_allow &= all;
            } else {
                l->sx_allow = fx > 1 ? all : 0;
                l->sy_allow = fy > 1 ? all : 0;
            }
            /* a fixed split goes to the axis its place in the permutation
             * names (before `split`: X), else to the only axis there is */
            for (int d = 0; d < ST_AD_COUNT; d++) {
                unsigned f = k->s_fixed[d];
                if (!f)
                    continue;
                const char *at = strchr(k->s_perm, ST_AD_LETTERS[d]);
                int onx;
                if (k->split >= 0 && at)
                    onx = (int)(at - k->s_perm) < k->split;
                else if (fx > 1 && fy <= 1)
                    onx = 1;
                else if (fy > 1 && fx <= 1)
                    onx = 0;
                else if (fx <= 1) {
                    rc = f_error(&b->c, k->s_node, "constraint factors: %c=%u at %s, which has no fan-out below it "
                                 "to split", ST_AD_LETTERS[d], f, l->name);
                    goto out;
                } else {
                    rc = f_error(&b->c, k->s_node, "constraint factors: %c=%u at %s, whose fan-out has both X and "
                                 "Y: give a permutation and split to say which axis it takes", ST_AD_LETTERS[d], f,
                                 l->name);
                    goto out;
                }
                if (onx)
                    l->sx_fixed[d] = f;
                else
                    l->sy_fixed[d] = f;
            }
            long long px = st_alevel_fixed_split(l, 0), py = st_alevel_fixed_split(l, 1);
            if (px > fx || py > fy) {
                rc = f_error(&b->c, k->s_node, "constraint factors at %s split %lld ways along %c, but its fan-out "
                             "has %d there; give factors whose product fits", l->name, px > fx ? px : py,
                             px > fx ? 'X' : 'Y', px > fx ? fx : fy);
                goto out;
            }
        }
        if (k->has_keep && l->cls != ST_MEM_FANOUT) {
            for (int t = 0; t < ST_TENSOR_COUNT; t++)
                if (k->bypass & (1u << t))
                    l->keeps[t] = 0;
                else if (k->keep)
                    l->keeps[t] = (k->keep >> t) & 1u;
        }
    }
    if (!ert_path) {
        if ((rc = find_ert(arch_path, ertbuf, sizeof ertbuf, err)))
            goto out;
        ert_path = ertbuf;
    }
    {
        double cyc = b->cycle_s;
        if ((rc = tl_read_ert(ert_path, a, &cyc, err)))
            goto out;
        a->clock_hz = cyc > 0 ? 1.0 / cyc : 1e9; /* Timeloop's default 1 ns cycle */
    }
    {
        const char *base = strrchr(arch_path, '/');
        base = base ? base + 1 : arch_path;
        snprintf(a->name, sizeof a->name, "%s (Timeloop architecture)", base);
        snprintf(a->id, sizeof a->id, "%.*s", (int)strcspn(base, "."), base);
    }
    a->noc_multicast = a->noc_reduction = 1;
    for (int t = 0; t < ST_TENSOR_COUNT; t++)
        if (!a->level[0].keeps[t]) {
            rc = st_error_set(err, ST_EINVAL, "%s: the outermost level %s must keep every "
                                              "tensor", arch_path, a->level[0].name);
            goto out;
        }
out:
    if (rc)
        memset(a, 0, sizeof *a);
    free(b);
    st_ydoc_free(&doc);
    return rc;
}

int st_load_arch(const char *name, const char *ert, st_accel *a, st_error *err)
{
    char path[512];
    int rc;
    if (strchr(name, '/') || strstr(name, ".yaml") || strstr(name, ".yml")) {
        int tl = st_is_timeloop_arch(name, err);
        if (tl > 0)
            return st_load_timeloop_arch(name, ert, a, err);
        /* a file that does not parse: its own error, not a guess at its kind
         * (without --ert the preset loader below reports it) */
        if (tl < 0 && ert)
            return tl;
    }
    if (ert) {
        /* a file that is no preset either (empty, another kind): its own
         * error, not the claim that it is a preset */
        st_accel probe;
        if ((rc = st_resolve(name, ST_FILE_ACCEL, path, sizeof path, err)) || (rc = st_load_accel(path, &probe, err)))
            return rc;
        return st_error_set(err, ST_EINVAL, "--ert applies to a Timeloop architecture file; "
                                            "%s is a strata preset with its energies inside",
                            name);
    }
    if ((rc = st_resolve(name, ST_FILE_ACCEL, path, sizeof path, err)))
        return rc;
    return st_load_accel(path, a, err);
}
