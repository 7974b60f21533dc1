/* Sweep files (strata-sweep(5)): evaluator, fixed parameters, axes,
 * objectives, constraints and sampling; every preset and workload named is
 * loaded once and referenced by index. */
#include "config.h"
#include "io/fields.h"
#include "io/io.h"
#include "io/timeloop.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_AXIS_VALUES 100000

int st_load_cluster_or_node(const char *name, st_cluster *out, st_error *err)
{
    st_error e2;
    if (st_load_cluster(name, out, err) == 0)
        return 0;
    st_node node;
    if (st_load_node(name, &node, &e2) != 0) {
        /* a node file with a fault (its own, or its GPU's: "...but a gpu
         * is needed here"): the node loader's FILE:LINE:COL, not "a node
         * file, but a cluster is needed"; a file that is not a node: the
         * cluster loader's message */
        const char *pre = "no cluster named ", *npre = "no node named ";
        if (err->code == ST_ENOTFOUND && e2.code == ST_ENOTFOUND && !strncmp(err->msg, pre, strlen(pre)) &&
            !strncmp(e2.msg, npre, strlen(npre))) {
            /* neither: one message for both kinds, with the suggestion of
             * whichever loader found a near name (the cluster's first) */
            int use_node = !strstr(err->msg, "did you mean") && strstr(e2.msg, "did you mean");
            char tail[sizeof err->msg];
            snprintf(tail, sizeof tail, "%s", use_node ? e2.msg + strlen(npre) : err->msg + strlen(pre));
            st_error_set(err, ST_ENOTFOUND, "no cluster or node named %s", tail);
        } else if (!strstr(e2.msg, "but a node is needed here")) {
            *err = e2;
        }
        return err->code;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->id, sizeof out->id, "%s", node.id);
    snprintf(out->name, sizeof out->name, "%s", node.name);
    snprintf(out->node_id, sizeof out->node_id, "%s", node.id);
    out->node = node;
    out->nodes = 1;
    if (st_resolve(name, ST_FILE_NODE, out->node_src, sizeof out->node_src, &e2))
        out->node_src[0] = '\0';
    return 0;
}

int st_load_node_for_gpu(const char *gpu_id, int gpus, st_cluster *out, st_error *err)
{
    st_catalog cat;
    int rc = st_catalog_scan(&cat, err);
    if (rc)
        return rc;
    rc = ST_ENOTFOUND;
    for (size_t i = 0; i < cat.n && rc; i++) {
        if (cat.items[i].kind != ST_FILE_NODE)
            continue;
        st_node node;
        st_error e2 = {0};
        if (st_load_node(cat.items[i].path, &node, &e2) == 0 && strcmp(node.gpu.id, gpu_id) == 0 &&
            node.gpus >= gpus && !node.reference_only)
            rc = st_load_cluster_or_node(cat.items[i].id, out, err);
    }
    st_catalog_free(&cat);
    if (rc == ST_ENOTFOUND)
        st_error_set(err, ST_ENOTFOUND,
                     "no node preset has %d or more %s GPUs; pass --cluster with a node or a multi-node cluster (strata list --kind node, --kind cluster)", gpus,
                     gpu_id);
    return rc;
}

/* Defaults for the objects an evaluator needs: H100 + Llama-2-7B for the GPU,
 * the Eyeriss-like design + ResNet-50 for the accelerator, a 4 x H100 node +
 * GPT-3 XL for training (scenario suite), H100 + Llama-3.1-8B for serving. */
static const char *default_ref(st_sweep_kind k, st_param p)
{
    switch (k) {
    case ST_SWEEP_GPU: return p == ST_P_GPU ? "h100-sxm" : p == ST_P_WORKLOAD ? "llama2-7b" : NULL;
    case ST_SWEEP_ACCEL: return p == ST_P_ARCH ? "eyeriss-like" : p == ST_P_WORKLOAD ? "resnet50" : NULL;
    case ST_SWEEP_TRAIN: return p == ST_P_CLUSTER ? "hgx-h100-4gpu" : p == ST_P_WORKLOAD ? "gpt3-xl" : NULL;
    case ST_SWEEP_SERVE: return p == ST_P_GPU ? "h100-sxm" : p == ST_P_WORKLOAD ? "llama3.1-8b" : NULL;
    default: return NULL;
    }
}

/* Append obj to a table unless an entry of that id is there; *idx: its slot. */
#define TABLE_ADD(arr, n, type, value, idx)                                                        \
    do {                                                                                           \
        size_t k_;                                                                                 \
        for (k_ = 0; k_ < (n); k_++)                                                               \
            if (strcmp((arr)[k_].id, (value).id) == 0)                                             \
                break;                                                                             \
        if (k_ == (n)) {                                                                           \
            type *g_ = realloc((arr), ((n) + 1) * sizeof *g_);                                     \
            if (!g_)                                                                               \
                return st_error_set(err, ST_ENOMEM, "out of memory");                              \
            (arr) = g_;                                                                            \
            (arr)[(n)++] = (value);                                                                \
            claimed = 1;                                                                           \
        }                                                                                          \
        *(idx) = (int)k_;                                                                          \
    } while (0)

static int load_ref(st_sweep *s, st_pkind kind, const char *text, int *idx, st_error *err)
{
    int rc, claimed = 0;
    switch (kind) {
    case ST_PK_GPU: {
        st_gpu g;
        st_edge e;
        int edge = 0;
        if ((rc = st_load_gpu_or_edge(text, &g, &e, &edge, err)))
            return rc;
        if (edge) {
            /* an edge preset: the eval evaluator prices it with the edge model */
            if (s->kind != ST_SWEEP_GPU)
                return st_error_set(err, ST_EINVAL, "%s is an edge preset: it runs in eval sweeps only "
                                                    "(inference of a converted graph), not in %s sweeps",
                                    e.id, st_sweep_kind_name(s->kind));
            if (!s->edge_coef.cpu_efficiency && (rc = st_edge_coef_load(NULL, &s->edge_coef, err)))
                return rc;
        }
        size_t before = s->n_gpus;
        TABLE_ADD(s->gpus, s->n_gpus, st_gpu, g, idx);
        if (s->n_gpus > before) { /* a new entry: its edge slot too */
            st_edge *ne = realloc(s->edges, s->n_gpus * sizeof *ne);
            if (ne)
                s->edges = ne;
            int *ni = ne ? realloc(s->is_edge, s->n_gpus * sizeof *ni) : NULL;
            if (ni)
                s->is_edge = ni;
            if (!ne || !ni)
                return st_error_set(err, ST_ENOMEM, "out of memory");
            s->is_edge[s->n_gpus - 1] = edge;
            if (edge)
                s->edges[s->n_gpus - 1] = e;
            else
                memset(&s->edges[s->n_gpus - 1], 0, sizeof s->edges[0]);
        }
        return 0;
    }
    case ST_PK_ARCH: {
        st_accel *a = malloc(sizeof *a);
        if (!a)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if ((rc = st_load_arch(text, NULL, a, err))) {
            free(a);
            return rc;
        }
        TABLE_ADD(s->accels, s->n_accels, st_accel, *a, idx);
        free(a);
        return 0;
    }
    case ST_PK_CLUSTER: {
        st_cluster *c = malloc(sizeof *c);
        if (!c)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        if ((rc = st_load_cluster_or_node(text, c, err))) {
            free(c);
            return rc;
        }
        TABLE_ADD(s->clusters, s->n_clusters, st_cluster, *c, idx);
        free(c);
        return 0;
    }
    case ST_PK_WORKLOAD: {
        st_model m;
        if ((rc = st_load_model(text, &m, err)))
            return rc;
        TABLE_ADD(s->models, s->n_models, st_model, m, idx);
        if (!claimed)
            st_model_free(&m);
        return 0;
    }
    default: return st_error_set(err, ST_EINVAL, "not a preset parameter");
    }
}

static int parse_number(const char *text, double *v)
{
    char *end;
    /* strtod also takes hex, inf and nan, and skips leading blanks: none
     * belongs in a value (the preset loaders refuse them too) */
    if (!text || !*text || isspace((unsigned char)*text) || strpbrk(text, "xXnNiI"))
        return -1;
    *v = strtod(text, &end);
    return *end || !isfinite(*v) ? -1 : 0;
}

int st_sweep_parse_value(st_sweep *s, st_param p, const char *text, st_pvalue *out, st_error *err)
{
    const st_param_info *pi = st_param_info_of(p);
    memset(out, 0, sizeof *out);
    if (strlen(text) >= sizeof out->text)
        return st_error_set(err, ST_EINVAL, "%s: value '%.40s...' is too long (%zu characters; at most %zu): give "
                            "a shorter path, e.g. relative to the working folder", pi->name, text, strlen(text),
                            sizeof out->text - 1);
    snprintf(out->text, sizeof out->text, "%s", text);
    if (!text[0])
        return st_error_set(err, ST_EINVAL, "%s: no value given", pi->name);
    double v;
    int e = 0;
    switch (pi->kind) {
    case ST_PK_INT:
    case ST_PK_NUM:
        if (parse_number(text, &v) || (pi->kind == ST_PK_INT && v != floor(v)))
            return st_error_set(err, ST_EINVAL, "%s: expected %s, got '%s'", pi->name,
                                pi->kind == ST_PK_INT ? "an integer" : "a number", text);
        if (v < pi->min || v > pi->max)
            return st_error_set(err, ST_EINVAL, "%s: %s is out of range [%.15g, %.15g]", pi->name, text, pi->min,
                                pi->max);
        out->num = v;
        return 0;
    case ST_PK_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "yes") || !strcmp(text, "on") || !strcmp(text, "1"))
            out->num = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "no") || !strcmp(text, "off") || !strcmp(text, "0"))
            out->num = 0;
        else
            return st_error_set(err, ST_EINVAL, "%s: expected true or false, got '%s'", pi->name, text);
        return 0;
    case ST_PK_DTYPE: {
        st_dtype d;
        if (st_dtype_parse(text, &d))
            return st_error_set(err, ST_EINVAL, "%s: unknown datatype '%s' (one of %s)", pi->name, text,
                                st_dtype_choices());
        out->num = d;
        return 0;
    }
    case ST_PK_PHASE: {
        st_phase ph;
        e = st_phase_parse(text, &ph);
        out->num = ph;
        if (e)
            return st_error_set(err, ST_EINVAL, "%s: expected prefill, decode or train, got '%s'", pi->name, text);
        return 0;
    }
    case ST_PK_ATTN:
    {
        st_attn_impl a;
        if (st_attn_parse(text, &a))
            return st_error_set(err, ST_EINVAL, "%s: expected " ST_ATTN_CHOICES ", got '%s'", pi->name, text);
        out->num = a;
        return 0;
    }
    case ST_PK_RECOMPUTE: {
        st_recompute r;
        if (st_recompute_parse(text, &r))
            return st_error_set(err, ST_EINVAL, "%s: expected none, selective or full, got '%s'", pi->name,
                                text);
        out->num = r;
        return 0;
    }
    case ST_PK_SCHEDULE: {
        st_pp_sched q;
        if (st_pp_sched_parse(text, &q))
            return st_error_set(err, ST_EINVAL, "%s: expected 1f1b, gpipe or interleaved, got '%s'", pi->name,
                                text);
        out->num = q;
        return 0;
    }
    case ST_PK_SCHED: {
        st_sched q;
        if (st_sched_parse(text, &q))
            return st_error_set(err, ST_EINVAL, "%s: expected %s, got '%s'", pi->name,
                                st_sched_choices(), text);
        out->num = q;
        return 0;
    }
    case ST_PK_QUANT: {
        st_quant q;
        if (st_quant_parse(text, &q))
            return st_error_set(err, ST_EINVAL, "%s: expected %s, got '%s'", pi->name, st_quant_choices(),
                                text);
        out->num = q;
        return 0;
    }
    case ST_PK_LENGTHS: {
        /* checked (and a trace read) once here; parsed again per point */
        st_lenspec l;
        int rc = st_lenspec_parse(text, &l, err);
        st_lenspec_free(&l);
        if (rc)
            return st_error_prefix(err, "%s", pi->name);
        return 0;
    }
    case ST_PK_AOBJ: {
        st_aobj o;
        if (st_aobj_parse(text, &o))
            return st_error_set(err, ST_EINVAL, "%s: expected edp, energy or delay, got '%s'", pi->name, text);
        out->num = o;
        return 0;
    }
    default:
        return load_ref(s, pi->kind, text, &out->obj, err);
    }
}

/* ---- the file ----------------------------------------------------------------- */
static int param_at(const fctx *c, const st_sweep *s, const st_ynode *key, st_param *p)
{
    if (st_param_parse(key->scalar, p) == 0 && st_sweep_kind_takes(s->kind, *p))
        return 0;
    const char *names[ST_PARAM_COUNT];
    char list[600] = "";
    size_t n = 0;
    for (int i = 0; i < ST_PARAM_COUNT; i++)
        if (st_sweep_kind_takes(s->kind, (st_param)i)) {
            names[n++] = st_param_info_of((st_param)i)->name;
            size_t u = strlen(list);
            snprintf(list + u, sizeof list - u, "%s%s", u ? ", " : "", names[n - 1]);
        }
    const char *sug = st_suggest(key->scalar, names, n);
    if (sug)
        return f_error(c, key, "'%s' is not a parameter of evaluate: %s; did you mean '%s'?", key->scalar,
                       st_sweep_kind_name(s->kind), sug);
    return f_error(c, key, "'%s' is not a parameter of evaluate: %s (it takes %s)", key->scalar,
                   st_sweep_kind_name(s->kind), list);
}

static int value_at(const fctx *c, st_sweep *s, st_param p, const st_ynode *n, const char *text, st_pvalue *out)
{
    st_error e;
    int rc = st_sweep_parse_value(s, p, text, out, &e);
    if (rc == ST_ENOMEM)
        return st_error_set(c->err, rc, "%s", e.msg);
    if (rc)
        return f_error(c, n, "%s", e.msg);
    return 0;
}

static int push_value(const fctx *c, st_sweep *s, st_sweep_axis *ax, const st_ynode *n, const char *text)
{
    if (ax->n >= MAX_AXIS_VALUES)
        return f_error(c, n, "axis %s has more than %d values", st_param_info_of(ax->param)->name,
                       MAX_AXIS_VALUES);
    /* capacity doubles at powers of two from 8 (no field of its own): a
     * long range grows in O(n), not one realloc a value */
    int have = ax->n;
    if (have == 0 || (have >= 8 && (have & (have - 1)) == 0)) {
        size_t want = have == 0 ? 8 : 2 * (size_t)have;
        st_pvalue *v = realloc(ax->v, want * sizeof *v);
        if (!v)
            return st_error_set(c->err, ST_ENOMEM, "out of memory");
        ax->v = v;
    }
    int rc = value_at(c, s, ax->param, n, text, &ax->v[ax->n]);
    if (!rc)
        ax->n++;
    return rc;
}

/* A value given twice would evaluate the same points twice (and tie on the
 * front); as with objectives, it is an error. Values sort by their key (a
 * length distribution as written, a preset by the one it loads, whether
 * named by id, name or path, else the number), so
 * 100,000 of them take no longer to check than to read. */
typedef struct vkey {
    const st_pvalue *v;
    size_t i;
    st_pkind k;
} vkey;

static int vkey_cmp_keys(const vkey *a, const vkey *b)
{
    if (a->k == ST_PK_LENGTHS)
        return strcmp(a->v->text, b->v->text);
    if (a->k >= ST_PK_GPU) /* the loaded preset (one per id): an id, a name and a path to one file agree */
        return a->v->obj < b->v->obj ? -1 : a->v->obj > b->v->obj;
    return a->v->num < b->v->num ? -1 : a->v->num > b->v->num;
}

static int vkey_cmp(const void *pa, const void *pb)
{
    const vkey *a = pa, *b = pb;
    int c = vkey_cmp_keys(a, b);
    return c ? c : a->i < b->i ? -1 : a->i > b->i;
}

/* the first value (in the axis's order) equal to one before it: its index,
 * and in *before the earlier one's; -1 when all differ */
static long long first_repeat(const st_sweep_axis *ax, size_t *before, int *oom)
{
    *oom = 0;
    if (ax->n < 2)
        return -1;
    vkey *ks = malloc(ax->n * sizeof *ks);
    if (!ks) {
        *oom = 1;
        return -1;
    }
    st_pkind k = st_param_info_of(ax->param)->kind;
    for (size_t i = 0; i < ax->n; i++)
        ks[i] = (vkey){&ax->v[i], i, k};
    qsort(ks, ax->n, sizeof *ks, vkey_cmp);
    long long best = -1;
    for (size_t j = 1; j < ax->n; j++) {
        /* within a run of equal keys the first is the earliest: the second
         * repeats it */
        if (vkey_cmp_keys(&ks[j], &ks[j - 1]) || (j >= 2 && !vkey_cmp_keys(&ks[j - 1], &ks[j - 2])))
            continue;
        if (best < 0 || ks[j].i < (size_t)best) {
            best = (long long)ks[j].i;
            *before = ks[j - 1].i;
        }
    }
    free(ks);
    return best;
}

static int listed_once(const fctx *c, const st_sweep_axis *ax, const st_ynode *seq)
{
    size_t before = 0;
    int oom;
    long long j = first_repeat(ax, &before, &oom);
    if (oom)
        return st_error_set(c->err, ST_ENOMEM, "out of memory");
    if (j < 0)
        return 0;
    return f_error(c, seq->items[j], "axis %s: '%s' is the same value as '%s', given before; list each value once",
                   st_param_info_of(ax->param)->name, ax->v[j].text, ax->v[before].text);
}

/* {from: A, to: B, step: D} | {from, to, factor: F} | {from, to, steps: N} |
 * {from, to, scale: log2} (= factor 2) */
static int range_axis(const fctx *c, st_sweep *s, st_sweep_axis *ax, const st_ynode *n)
{
    static const fkey keys[] = {
        {"from", 1, "first value"}, {"to", 1, "last value"}, {"step", 0, "arithmetic step"},
        {"factor", 0, "geometric factor"}, {"steps", 0, "number of evenly spaced values"},
        {"scale", 0, "log2: powers of two from `from`"},
    };
    int rc = f_check_map(c, n, keys, sizeof keys / sizeof *keys);
    if (rc)
        return rc;
    st_pkind k = st_param_info_of(ax->param)->kind;
    if (k != ST_PK_INT && k != ST_PK_NUM)
        return f_error(c, n, "a range needs a numeric parameter; %s takes names: list them",
                       st_param_info_of(ax->param)->name);
    double from = 0, to = 0, step = 0, factor = 0;
    long long steps = 0;
    char scale[16] = "";
    if ((rc = f_number(c, n, "from", -1e300, 1e300, 1, "", &from)) ||
        (rc = f_number(c, n, "to", -1e300, 1e300, 1, "", &to)) ||
        (rc = f_number(c, n, "step", -1e300, 1e300, 1, "", &step)) ||
        (rc = f_number(c, n, "factor", -1e300, 1e300, 1, "", &factor)) ||
        (rc = f_int(c, n, "steps", 1, MAX_AXIS_VALUES, &steps)) ||
        (rc = f_string(c, n, "scale", scale, sizeof scale)))
        return rc;
    /* a step or factor of 0 moves nowhere: said as such, not counted as absent */
    if (f_get(n, "step") && !(step > 0))
        return f_error(c, f_get(n, "step"), "step: a range's step must be above 0");
    if (f_get(n, "factor") && !(factor > 0))
        return f_error(c, f_get(n, "factor"), "factor: a geometric range needs a factor above 1");
    if (scale[0]) {
        if (strcmp(scale, "log2"))
            return f_error(c, f_get(n, "scale"), "scale: expected log2, got '%s'", scale);
        if (f_get(n, "factor"))
            return f_error(c, f_get(n, "scale"), "scale: log2 is factor 2; give one of them, not both");
        factor = 2;
    }
    int ways = (step > 0) + (factor > 0) + (steps > 0);
    if (ways != 1)
        return f_error(c, n, "a range takes exactly one of step, factor, steps or scale: log2");
    if (to < from)
        return f_error(c, n, "range: to (%g) is below from (%g)", to, from);
    if (factor > 0 && (factor <= 1 || from <= 0))
        return f_error(c, n, "a geometric range needs factor > 1 and from > 0");
    char buf[64];
    for (long long i = 0;; i++) {
        double v;
        if (steps > 0) {
            if (i >= steps)
                break;
            v = steps == 1 ? from : from + (to - from) * (double)i / (double)(steps - 1);
        } else if (step > 0) {
            v = from + step * (double)i;
        } else {
            v = from * pow(factor, (double)i);
        }
        /* from + i x step in binary leaves noise in the last digits
         * (0.1 + 2 x 0.1 = 0.30000000000000004): the value meant has 15
         * significant digits at most */
        snprintf(buf, sizeof buf, "%.15g", v);
        v = strtod(buf, NULL);
        if (v > to * (1 + 1e-12))
            break;
        if (k == ST_PK_INT && fabs(v - (double)llround(v)) > 1e-9 * (fabs(v) > 1 ? fabs(v) : 1)) {
            st_format_double(buf, sizeof buf, v);
            return f_error(c, n, "the range gives %s, but %s takes whole numbers; choose from and the step or "
                                 "factor so that every value is one", buf, st_param_info_of(ax->param)->name);
        }
        if (k == ST_PK_INT)
            snprintf(buf, sizeof buf, "%lld", (long long)llround(v));
        else
            st_format_double(buf, sizeof buf, v);
        if ((rc = push_value(c, s, ax, n, buf)))
            return rc;
        /* a range rises, so a repeat follows its twin: from = to with
         * several steps, or a step below the 15 digits a value keeps */
        if (ax->n >= 2 && ax->v[ax->n - 1].num == ax->v[ax->n - 2].num)
            return f_error(c, n, "axis %s: the range gives %s twice (%s); a sweep takes each value once",
                           st_param_info_of(ax->param)->name, buf,
                           from == to ? "from and to are equal: give the one value"
                           : k == ST_PK_INT ? "its values round to the same whole number: widen the step"
                                            : "its step is below the 15 significant digits a value keeps: widen it");
    }
    return 0;
}

static int read_axes(const fctx *c, st_sweep *s, const st_ynode *axes)
{
    if (axes->kind != ST_Y_MAP)
        return f_error(c, axes, "axes: expected a mapping of `parameter: [values]` lines");
    if (axes->n > ST_SWEEP_MAX_AXES)
        return f_error(c, axes, "axes: at most %d axes", ST_SWEEP_MAX_AXES);
    for (size_t i = 0; i < axes->n; i++) {
        st_param p;
        int rc = param_at(c, s, axes->keys[i], &p);
        if (rc)
            return rc;
        for (size_t j = 0; j < s->n_axes; j++)
            if (s->axes[j].param == p)
                return f_error(c, axes->keys[i], "axis %s is given twice", axes->keys[i]->scalar);
        if (s->base_set[p])
            return f_error(c, axes->keys[i], "%s is both fixed and an axis; give it in one place",
                           axes->keys[i]->scalar);
        st_sweep_axis *ax = &s->axes[s->n_axes++];
        memset(ax, 0, sizeof *ax);
        ax->param = p;
        ax->line = axes->keys[i]->line;
        ax->col = axes->keys[i]->col;
        const st_ynode *v = axes->items[i];
        if (v->kind == ST_Y_MAP) {
            rc = range_axis(c, s, ax, v);
        } else if (v->kind == ST_Y_SEQ) {
            if (v->n == 0)
                return f_error(c, v, "axis %s: the list is empty", axes->keys[i]->scalar);
            for (size_t k = 0; k < v->n && !rc; k++) {
                if (v->items[k]->kind != ST_Y_SCALAR)
                    return f_error(c, v->items[k], "axis %s: expected a value, found a %s",
                                   axes->keys[i]->scalar, st_ykind_name(v->items[k]->kind));
                rc = push_value(c, s, ax, v->items[k], v->items[k]->scalar);
            }
            if (!rc)
                rc = listed_once(c, ax, v);
        } else {
            rc = push_value(c, s, ax, v, v->scalar); /* one value: an axis of one */
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int read_fixed(const fctx *c, st_sweep *s, const st_ynode *fixed)
{
    if (fixed->kind != ST_Y_MAP)
        return f_error(c, fixed, "fixed: expected a mapping of `parameter: value` lines");
    for (size_t i = 0; i < fixed->n; i++) {
        st_param p;
        int rc = param_at(c, s, fixed->keys[i], &p);
        if (rc)
            return rc;
        if (fixed->items[i]->kind != ST_Y_SCALAR)
            return f_error(c, fixed->items[i], "fixed %s: expected one value (put lists under axes:)",
                           fixed->keys[i]->scalar);
        if ((rc = value_at(c, s, p, fixed->items[i], fixed->items[i]->scalar, &s->base[p])))
            return rc;
        s->base_set[p] = 1;
    }
    return 0;
}

/* An objective or constraint's metric must be one the evaluator gives
 * (a train point has no TTFT): else an error at x naming those it gives */
static int metric_defined(const fctx *c, const st_ynode *x, const st_sweep *s, const char *what, st_metric m)
{
    unsigned have = st_sweep_kind_metrics(s->kind);
    if (have & (1u << m))
        return 0;
    char list[160] = "";
    for (int k = 0; k < ST_METRIC_COUNT; k++)
        if (have & (1u << k))
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
                     st_metric_name((st_metric)k));
    return f_error(c, x, "%s: %s is not defined for evaluate: %s (it gives %s)", what, st_metric_name(m),
                   st_sweep_kind_name(s->kind), list);
}

static int read_objectives(const fctx *c, st_sweep *s, const st_ynode *o)
{
    if (o->kind != ST_Y_SEQ || o->n < 1 || o->n > ST_SWEEP_MAX_OBJ)
        return f_error(c, o, "objectives: expected a list of 1 to %d metrics (latency, energy, edp, "
                             "throughput, memory, cost, mfu%s)", ST_SWEEP_MAX_OBJ,
                       s->kind == ST_SWEEP_SERVE ? ", ttft, tpot, goodput" : "");
    s->n_obj = (int)o->n;
    for (size_t i = 0; i < o->n; i++) {
        const st_ynode *x = o->items[i];
        if (x->kind != ST_Y_SCALAR || st_metric_parse(x->scalar, &s->obj[i]))
            return f_error(c, x, "objectives: unknown metric '%s' (latency, energy, edp, throughput, memory, "
                                 "cost, mfu, ttft, tpot or goodput)", x->kind == ST_Y_SCALAR ? x->scalar : "?");
        for (size_t j = 0; j < i; j++)
            if (s->obj[j] == s->obj[i])
                return f_error(c, x, "objectives: %s is listed twice", x->scalar);
        int rc = metric_defined(c, x, s, "objectives", s->obj[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int st_sweep_parse_constraint(const char *text, st_constraint *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->text, sizeof out->text, "%s", text);
    if (strcmp(text, "fits") == 0) {
        out->fits = 1;
        return 0;
    }
    char name[32];
    const char *op = strpbrk(text, "<>");
    if (!op || (op[1] != '=') || (size_t)(op - text) >= sizeof name)
        return st_error_set(err, ST_EINVAL, "constraint '%s': expected fits, or METRIC <= VALUE / METRIC >= "
                                            "VALUE (e.g. latency <= 0.05)", text);
    size_t len = (size_t)(op - text);
    memcpy(name, text, len);
    while (len && name[len - 1] == ' ')
        len--;
    name[len] = 0;
    const char *nm = name;
    while (*nm == ' ')
        nm++;
    if (st_metric_parse(nm, &out->m))
        return st_error_set(err, ST_EINVAL, "constraint '%s': unknown metric '%s'", text, nm);
    out->cmp = op[0] == '<' ? ST_CMP_LE : ST_CMP_GE;
    const char *v = op + 2;
    while (*v == ' ')
        v++;
    if (parse_number(v, &out->bound))
        return st_error_set(err, ST_EINVAL, "constraint '%s': expected a number after %c=, got '%s'", text,
                            op[0], v);
    return 0;
}

static int read_constraints(const fctx *c, st_sweep *s, const st_ynode *o)
{
    if (o->kind != ST_Y_SEQ || o->n > ST_SWEEP_MAX_CON)
        return f_error(c, o, "constraints: expected a list of up to %d items (fits, \"latency <= 0.05\")",
                       ST_SWEEP_MAX_CON);
    for (size_t i = 0; i < o->n; i++) {
        st_error e;
        if (o->items[i]->kind != ST_Y_SCALAR)
            return f_error(c, o->items[i], "constraints: expected a string such as \"memory <= 80e9\"");
        if (st_sweep_parse_constraint(o->items[i]->scalar, &s->con[s->n_con], &e))
            return f_error(c, o->items[i], "%s", e.msg);
        int rc;
        if (!s->con[s->n_con].fits && (rc = metric_defined(c, o->items[i], s, "constraints", s->con[s->n_con].m)))
            return rc;
        s->n_con++;
    }
    return 0;
}

static int read_sampling(const fctx *c, st_sweep *s, const st_ynode *o)
{
    if (o->kind == ST_Y_SCALAR && strcmp(o->scalar, "grid") == 0)
        return 0;
    static const fkey keys[] = {{"random", 1, "number of points"}, {"seed", 0, "PRNG seed"}};
    if (o->kind != ST_Y_MAP)
        return f_error(c, o, "sampling: expected grid or {random: N, seed: S}");
    int rc = f_check_map(c, o, keys, 2);
    long long seed = 1;
    if (rc || (rc = f_int(c, o, "random", 1, 1LL << 40, &s->samples)) ||
        (rc = f_int(c, o, "seed", 0, 1LL << 62, &seed)))
        return rc;
    s->random = 1;
    s->seed = (unsigned long long)seed;
    return 0;
}

static int read_sweep(const fctx *c, const st_ydoc *doc, st_sweep *s)
{
    static const fkey keys[] = {
        {"sweep", 0, "a name"}, {"evaluate", 1, "gpu, accel, train or serve"}, {"description", 0, "free text"},
        {"fixed", 0, "parameters held fixed"}, {"axes", 1, "parameters swept and their values"},
        {"objectives", 0, "1 to 3 metrics"}, {"constraints", 0, "fits, METRIC <= VALUE"},
        {"sampling", 0, "grid or {random: N, seed: S}"},
    };
    const st_ynode *root = doc->root;
    int rc = f_check_map(c, root, keys, sizeof keys / sizeof *keys);
    if (rc)
        return rc;
    char kind[16] = "";
    if ((rc = f_string(c, root, "evaluate", kind, sizeof kind)))
        return rc;
    st_sweep_kind k;
    if (st_sweep_kind_parse(kind, &k))
        return f_error(c, f_get(root, "evaluate"), "evaluate: expected gpu, accel, train or serve, got '%s'", kind);
    st_sweep_init(s, k);
    snprintf(s->path, sizeof s->path, "%s", doc->path);
    const char *stem = strrchr(doc->path, '/');
    stem = stem ? stem + 1 : doc->path;
    snprintf(s->name, sizeof s->name, "%.*s", (int)strcspn(stem, "."), stem);
    if ((rc = f_string(c, root, "sweep", s->name, sizeof s->name)))
        return rc;
    const st_ynode *n;
    if ((n = f_get(root, "fixed")) && (rc = read_fixed(c, s, n)))
        return rc;
    if ((rc = read_axes(c, s, f_get(root, "axes"))))
        return rc;
    /* speculative decoding needs its acceptance rate, as serve --spec-k
     * needs --spec-accept: without it every such point would be invalid */
    if (k == ST_SWEEP_SERVE) {
        const st_ynode *at = s->base_set[ST_P_SPEC_K] && s->base[ST_P_SPEC_K].num > 0
                                 ? f_get(f_get(root, "fixed"), "spec_k")
                                 : NULL;
        int accept = s->base_set[ST_P_SPEC_ACCEPT];
        for (size_t a = 0; a < s->n_axes; a++) {
            accept |= s->axes[a].param == ST_P_SPEC_ACCEPT;
            for (size_t v = 0; s->axes[a].param == ST_P_SPEC_K && v < s->axes[a].n && !at; v++)
                if (s->axes[a].v[v].num > 0)
                    at = f_get(f_get(root, "axes"), "spec_k");
        }
        if (at && !accept)
            return f_error(c, at, "spec_k > 0 needs spec_accept (the acceptance per draft token, in [0, 1]) under "
                                  "fixed: or axes:");
        /* and the other way, as serve refuses --spec-accept without
         * --spec-k: an acceptance no point uses would be silently kept */
        if (accept && !at) {
            const st_ynode *sa = f_get(f_get(root, "fixed"), "spec_accept");
            if (!sa)
                sa = f_get(f_get(root, "axes"), "spec_accept");
            return f_error(c, sa ? sa : root, "spec_accept without spec_k > 0 (under fixed: or on an axis) "
                                              "changes no point: no point speculates; give spec_k, or drop "
                                              "spec_accept");
        }
    }
    if ((n = f_get(root, "objectives")) && (rc = read_objectives(c, s, n)))
        return rc;
    if ((n = f_get(root, "constraints")) && (rc = read_constraints(c, s, n)))
        return rc;
    if ((n = f_get(root, "sampling")) && (rc = read_sampling(c, s, n)))
        return rc;
    return 0;
}

/* Fill the objects the evaluator needs and nobody named; check and count. */
int st_sweep_complete(st_sweep *s, st_error *err)
{
    for (int p = 0; p < ST_PARAM_COUNT; p++) {
        const char *d = default_ref(s->kind, (st_param)p);
        int on_axis = 0;
        for (size_t a = 0; a < s->n_axes; a++)
            on_axis |= s->axes[a].param == (st_param)p;
        if (!d || s->base_set[p] || on_axis)
            continue;
        int rc = st_sweep_parse_value(s, (st_param)p, d, &s->base[p], err);
        if (rc)
            return rc;
        s->base_set[p] = 1;
    }
    if (!s->coef.source[0]) {
        int rc = st_gpu_coef_load(NULL, &s->coef, err);
        if (rc)
            return rc;
    }
    return st_sweep_finish(s, err);
}

static int finish_load(st_ydoc *doc, st_sweep *out, st_error *err)
{
    fctx c = {doc->path, "sweep", err, "strata-sweep(5)"};
    int rc;
    if (!doc->root)
        rc = st_error_set(err, ST_EINVAL, "%s:1:1: the file is empty; a sweep needs evaluate: and axes:", doc->path);
    else if (!(rc = read_sweep(&c, doc, out)) && (rc = st_sweep_complete(out, err)))
        st_error_prefix(err, "%s", doc->path);
    st_ydoc_free(doc);
    if (rc)
        st_sweep_free(out);
    return rc;
}

int st_load_sweep(const char *path, st_sweep *out, st_error *err)
{
    st_ydoc doc;
    memset(out, 0, sizeof *out);
    int rc = st_ydoc_load_file(&doc, path, err);
    if (rc)
        return rc;
    return finish_load(&doc, out, err);
}

int st_load_sweep_buffer(const char *label, const char *buf, size_t len, st_sweep *out, st_error *err)
{
    st_ydoc doc;
    memset(out, 0, sizeof *out);
    int rc = st_ydoc_load_buffer(&doc, label, buf, len, err);
    if (rc)
        return rc;
    return finish_load(&doc, out, err);
}
