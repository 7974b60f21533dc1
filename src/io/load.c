/* st_load: resolve, parse, dispatch on `kind:`; the typed loaders on top. */
#include "config.h"
#include "io/loaders.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *st_file_kind_name(st_file_kind k)
{
    static const char *const names[] = {"gpu", "edge", "accelerator", "node", "cluster",
                                        "workload"};
    return (k >= 0 && k < ST_FILE_KIND_COUNT) ? names[k] : "?";
}

const char *st_file_kind_article(st_file_kind k)
{
    return k == ST_FILE_EDGE || k == ST_FILE_ACCEL ? "an" : "a";
}

/* The id of a file: its name without folder and extension. */
static void file_id(const char *path, char *id, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(id, n, "%s", base);
    char *dot = strrchr(id, '.');
    if (dot && dot != id)
        *dot = '\0';
}

/* The id field of whatever out holds. */
static char *loaded_id(st_loaded *out)
{
    switch (out->kind) {
    case ST_FILE_GPU: return out->gpu.id;
    case ST_FILE_EDGE: return out->edge.id;
    case ST_FILE_ACCEL: return out->accel.id;
    case ST_FILE_NODE: return out->node.id;
    case ST_FILE_CLUSTER: return out->cluster.id;
    default: return out->model.id;
    }
}

static int load_doc(const st_ydoc *doc, st_loaded *out, st_error *err)
{
    /* `kind:` values, and what a message calls a file of each */
    static const char *const kinds[] = {"gpu", "edge", "accelerator", "node", "cluster",
                                        "transformer", "cnn"};
    static const char *const whats[] = {"gpu preset", "edge preset", "accelerator preset",
                                        "node preset", "cluster preset", "transformer workload",
                                        "cnn workload"};
    fctx c = {doc->path, "", err, NULL};
    const st_ynode *root = doc->root, *kind;
    char id[ST_ID_MAX];
    int k = -1, rc;
    file_id(doc->path, id, sizeof id);
    if (!root)
        return st_error_set(err, ST_EINVAL,
                            "%s:1:1: the file is empty; a preset or workload is a mapping that "
                            "starts with `kind:` (see strata-presets(5))",
                            doc->path);
    if (root->kind != ST_Y_MAP)
        return f_error(&c, root, "expected a mapping of `key: value` lines at the top, found %s",
                       st_ykind_name(root->kind));
    kind = f_get(root, "kind");
    if (!kind) {
        if (f_get(root, "model_type") || f_get(root, "architectures")) {
            c.what = "Hugging Face config";
            memset(&out->model, 0, sizeof out->model);
            out->kind = ST_FILE_MODEL;
            snprintf(out->model.id, sizeof out->model.id, "%s", id);
            snprintf(out->model.path, sizeof out->model.path, "%s", doc->path);
            return st_read_hf(&c, root, &out->model);
        }
        /* Timeloop's own files: map and accel read them, with their ERT */
        if (f_get(root, "architecture") || f_get(root, "problem"))
            return f_error(&c, root, "a Timeloop %s file, not a strata preset or workload: `strata map --arch "
                           "ARCH.yaml --problem PROB.yaml` reads Timeloop files (an architecture with its ERT beside "
                           "it, or --ert)", f_get(root, "architecture") ? "architecture" : "problem");
        return f_error(&c, root,
                       "missing required key 'kind' (gpu, edge, accelerator, node, cluster, "
                       "transformer or cnn)");
    }
    if ((rc = f_enum(&c, root, "kind", kinds, 7, &k)))
        return rc;
    c.what = whats[k];
    switch (k) {
    case 0: rc = st_read_gpu(&c, root, &out->gpu); break;
    case 1: rc = st_read_edge(&c, root, &out->edge); break;
    case 2: rc = st_read_accel(&c, root, &out->accel); break;
    case 3: rc = st_read_node(&c, root, &out->node); break;
    case 4: rc = st_read_cluster(&c, root, &out->cluster); break;
    default:
        memset(&out->model, 0, sizeof out->model);
        snprintf(out->model.path, sizeof out->model.path, "%s", doc->path);
        rc = k == 5 ? st_read_transformer(&c, root, &out->model)
                    : st_read_cnn(&c, root, &out->model);
        break;
    }
    out->kind = k < 5 ? (st_file_kind)k : ST_FILE_MODEL;
    snprintf(loaded_id(out), ST_ID_MAX, "%s", id);
    return rc;
}

/* The kind a document declares (HF configs are workloads), -1 if unknown. */
static int declared_kind(const st_ydoc *doc)
{
    static const char *const kinds[] = {"gpu", "edge", "accelerator", "node", "cluster",
                                        "transformer", "cnn"};
    const st_ynode *k = f_get(doc->root, "kind");
    if (!k)
        return (f_get(doc->root, "model_type") || f_get(doc->root, "architectures"))
                   ? ST_FILE_MODEL : -1;
    for (int i = 0; i < 7 && k->kind == ST_Y_SCALAR; i++)
        if (strcasecmp(k->scalar, kinds[i]) == 0) /* as load_doc's f_enum */
            return i < 5 ? i : ST_FILE_MODEL;
    return -1;
}

/* Read a parsed document into out (freeing the document); when want >= 0,
 * check its declared kind before reading it, so that a node naming a node
 * (or itself) as its GPU fails at once instead of recursing. */
static int read_doc(st_ydoc *doc, int want, st_loaded *out, st_error *err)
{
    int rc, kind = declared_kind(doc);
    if (want >= 0 && kind >= 0 && kind != want)
        rc = st_error_set(err, ST_EINVAL, "%s is %s %s file, but %s %s is needed here", doc->path,
                          st_file_kind_article((st_file_kind)kind), st_file_kind_name((st_file_kind)kind),
                          st_file_kind_article(want), st_file_kind_name(want));
    else
        rc = load_doc(doc, out, err);
    st_ydoc_free(doc);
    if (rc) {
        st_loaded_free(out);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

static int load_path(const char *path, int want, st_loaded *out, st_error *err)
{
    st_ydoc doc;
    int rc;
    memset(out, 0, sizeof *out);
    rc = st_ydoc_load_file(&doc, path, err);
    return rc ? rc : read_doc(&doc, want, out, err);
}

int st_load(const char *name_or_path, st_loaded *out, st_error *err)
{
    char path[512];
    int rc = st_resolve(name_or_path, -1, path, sizeof path, err);
    if (rc)
        return rc;
    return load_path(path, -1, out, err);
}

int st_load_buffer(const char *label, const char *buf, size_t len, st_loaded *out, st_error *err)
{
    st_ydoc doc;
    int rc;
    memset(out, 0, sizeof *out);
    rc = st_ydoc_load_buffer(&doc, label, buf, len, err);
    return rc ? rc : read_doc(&doc, -1, out, err);
}

void st_loaded_free(st_loaded *l)
{
    if (l && l->kind == ST_FILE_MODEL)
        st_model_free(&l->model);
}

/* Load a file of one kind into a heap st_loaded. */
static int load_kind(const char *name_or_path, st_file_kind want, st_loaded **out, st_error *err)
{
    char path[512];
    st_loaded *l;
    int rc = st_resolve(name_or_path, (int)want, path, sizeof path, err);
    if (rc)
        return rc;
    l = malloc(sizeof *l);
    if (!l)
        return st_error_set(err, ST_ENOMEM, "out of memory loading %s", path);
    rc = load_path(path, (int)want, l, err);
    if (rc == 0 && l->kind != want) { /* a file without a readable kind */
        rc = st_error_set(err, ST_EINVAL, "%s is not a %s file", path, st_file_kind_name(want));
        st_loaded_free(l);
    }
    if (rc) {
        free(l);
        return rc;
    }
    *out = l;
    return 0;
}

int st_load_gpu_or_edge(const char *name_or_path, st_gpu *g, st_edge *e, int *is_edge, st_error *err)
{
    *is_edge = 0;
    /* a name or path that resolves to an edge file loads as one, so that
     * its own errors (FILE:LINE:COL) are the ones reported */
    char path[512];
    st_error quiet;
    if (st_resolve(name_or_path, ST_FILE_EDGE, path, sizeof path, &quiet) == 0) {
        st_ydoc doc;
        if (st_ydoc_load_file(&doc, path, &quiet) == 0) {
            int kind = declared_kind(&doc);
            st_ydoc_free(&doc);
            if (kind == ST_FILE_EDGE) {
                int rc = st_load_edge(path, e, err);
                if (rc)
                    return rc;
                st_edge_gpu_view(e, g);
                *is_edge = 1;
                return 0;
            }
        }
    }
    return st_load_gpu(name_or_path, g, err);
}

#define TYPED_LOADER(fn, type, kind, field)                                              \
    int fn(const char *name_or_path, type *out, st_error *err)                           \
    {                                                                                    \
        st_loaded *l = NULL;                                                             \
        int rc = load_kind(name_or_path, kind, &l, err);                                 \
        if (rc)                                                                          \
            return rc;                                                                   \
        *out = l->field;                                                                 \
        free(l);                                                                         \
        return 0;                                                                        \
    }

TYPED_LOADER(st_load_gpu, st_gpu, ST_FILE_GPU, gpu)
TYPED_LOADER(st_load_edge, st_edge, ST_FILE_EDGE, edge)
TYPED_LOADER(st_load_accel, st_accel, ST_FILE_ACCEL, accel)
TYPED_LOADER(st_load_node, st_node, ST_FILE_NODE, node)
TYPED_LOADER(st_load_cluster, st_cluster, ST_FILE_CLUSTER, cluster)
TYPED_LOADER(st_load_model, st_model, ST_FILE_MODEL, model)
