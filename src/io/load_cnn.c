/* kind: cnn -> st_model: a layer list with CNN and UNet blocks. */
#include "config.h"
#include "io/loaders.h"

#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {
    "conv", "dwconv", "fc", "maxpool", "avgpool", "global_avgpool", "batchnorm", "groupnorm",
    "act", "upsample",
};
static const char *const block_names[] = {
    "bottleneck", "basic", "inverted_residual", "resblock", "spatial_transformer", "downsample",
    "upsample",
};
#define N_OPS (sizeof op_names / sizeof op_names[0])
#define N_BLOCKS (sizeof block_names / sizeof block_names[0])

static const fkey item_keys[] = {
    {"op", 0, "layer kind"}, {"block", 0, "block kind"}, {"name", 0, "layer name"},
    {"repeat", 0, "copies"}, {"in", 0, "input channels"}, {"out", 0, "output channels"},
    {"kernel", 0, "kernel size"}, {"stride", 0, "stride"}, {"pad", 0, "padding"},
    {"groups", 0, "groups"}, {"bn", 0, "batch norm after"}, {"act", 0, "activation after"},
    {"fn", 0, "activation"}, {"mid", 0, "bottleneck width"}, {"expand", 0, "expansion"},
    {"heads", 0, "attention heads"}, {"head_dim", 0, "per-head size"},
    {"depth", 0, "transformer layers"}, {"temb_dim", 0, "time-embedding size"},
    {"factor", 0, "upsampling factor"},
};

/* Keys each item kind takes, beyond op/block/name/repeat. */
static const char *allowed_for(st_cnn_item_kind k)
{
    switch (k) {
    case ST_CNN_CONV: return "in out kernel stride pad groups bn act";
    case ST_CNN_DWCONV: return "in kernel stride pad bn act";
    case ST_CNN_FC: return "in out";
    case ST_CNN_MAXPOOL:
    case ST_CNN_AVGPOOL: return "kernel stride pad";
    case ST_CNN_GLOBAL_AVGPOOL: return "";
    case ST_CNN_BATCHNORM: return "";
    case ST_CNN_GROUPNORM: return "groups";
    case ST_CNN_ACT: return "fn";
    case ST_CNN_UPSAMPLE_OP: return "factor";
    case ST_CNN_BOTTLENECK: return "in mid out stride";
    case ST_CNN_BASIC: return "in out stride";
    case ST_CNN_INVERTED_RESIDUAL: return "in out expand stride kernel act";
    case ST_CNN_RESBLOCK: return "in out temb_dim";
    case ST_CNN_SPATIAL_TRANSFORMER: return "heads head_dim depth";
    case ST_CNN_DOWNSAMPLE: return "in";
    case ST_CNN_UPSAMPLE: return "";
    case ST_CNN_ITEM_KIND_COUNT: break;
    }
    return "";
}

static int word_in(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Keys each item kind needs, beyond op/block. */
static const char *required_for(st_cnn_item_kind k)
{
    switch (k) {
    case ST_CNN_CONV: return "out kernel";
    case ST_CNN_DWCONV: return "kernel";
    case ST_CNN_FC: return "out";
    case ST_CNN_MAXPOOL:
    case ST_CNN_AVGPOOL: return "kernel stride";
    case ST_CNN_ACT: return "fn";
    case ST_CNN_BOTTLENECK: return "mid out";
    case ST_CNN_BASIC:
    case ST_CNN_INVERTED_RESIDUAL: return "out";
    case ST_CNN_SPATIAL_TRANSFORMER: return "heads";
    default: return "";
    }
}

static int read_item(const fctx *c, const st_ynode *v, st_cnn_item *it)
{
    static const char *const acts[] = {"none", "relu", "relu6", "gelu", "gelu_tanh", "silu"};
    const st_ynode *op, *block;
    int rc, kind = -1, a = 0, fn = 0;
    char req[64];
    memset(it, 0, sizeof *it);
    it->repeat = 1;
    it->pad = -1;
    it->line = v->line;
    it->col = v->col;
    if ((rc = f_check_map(c, v, item_keys, sizeof item_keys / sizeof item_keys[0])))
        return rc;
    op = f_get(v, "op");
    block = f_get(v, "block");
    if ((op && block) || (!op && !block))
        return f_error(c, v, "%s: give exactly one of `op:` (%s) or `block:` (%s)", c->what,
                       "conv, dwconv, fc, ...", "bottleneck, inverted_residual, ...");
    if (op && (rc = f_enum(c, v, "op", op_names, (int)N_OPS, &kind)))
        return rc;
    if (block) {
        if ((rc = f_enum(c, v, "block", block_names, (int)N_BLOCKS, &kind)))
            return rc;
        kind += (int)N_OPS;
    }
    it->kind = (st_cnn_item_kind)kind;
    for (size_t i = 0; i < v->n; i++) {
        const char *k = v->keys[i]->scalar;
        if (!word_in(k, "op block name repeat") && !word_in(k, allowed_for(it->kind))) {
            char keys[128] = "name, repeat";
            for (const char *p = allowed_for(it->kind); *p;) {
                size_t n = strcspn(p, " "), used = strlen(keys);
                snprintf(keys + used, sizeof keys - used, ", %.*s", (int)n, p);
                p += n + (p[n] == ' ');
            }
            return f_error(c, v->keys[i], "%s: key '%s' does not apply to %s '%s' (its keys: %s)",
                           c->what, k, op ? "op" : "block", op ? op->scalar : block->scalar,
                           keys);
        }
    }
    if ((rc = f_string(c, v, "name", it->name, sizeof it->name)) ||
        (rc = f_int(c, v, "repeat", 1, 10000, &it->repeat)) ||
        (rc = f_int(c, v, "in", 1, 1000000, &it->in)) ||
        (rc = f_int(c, v, "out", 1, 1000000, &it->out)) ||
        (rc = f_int(c, v, "kernel", 1, 1024, &it->kernel)) ||
        (rc = f_int(c, v, "stride", 1, 1024, &it->stride)) ||
        (rc = f_int(c, v, "pad", 0, 1024, &it->pad)) ||
        (rc = f_int(c, v, "groups", 1, 1000000, &it->groups)) ||
        (rc = f_bool(c, v, "bn", &it->bn)) ||
        (rc = f_enum(c, v, "act", acts, 6, &a)) ||
        (rc = f_enum(c, v, "fn", acts, 6, &fn)) ||
        (rc = f_int(c, v, "mid", 1, 1000000, &it->mid)) ||
        (rc = f_int(c, v, "expand", 1, 1024, &it->expand)) ||
        (rc = f_int(c, v, "heads", 1, 4096, &it->heads)) ||
        (rc = f_int(c, v, "head_dim", 1, 65536, &it->head_dim)) ||
        (rc = f_int(c, v, "depth", 1, 1024, &it->depth)) ||
        (rc = f_int(c, v, "temb_dim", 1, 1000000, &it->temb_dim)) ||
        (rc = f_int(c, v, "factor", 1, 64, &it->factor)))
        return rc;
    it->act = (st_act)(it->kind == ST_CNN_ACT ? fn : a);
    snprintf(req, sizeof req, "%s", required_for(it->kind));
    for (char *k = strtok(req, " "); k; k = strtok(NULL, " "))
        if (!f_get(v, k))
            return f_error(c, v, "%s: %s '%s' needs key '%s'", c->what, op ? "op" : "block",
                           op ? op->scalar : block->scalar, k);
    if (it->kind == ST_CNN_GROUPNORM && it->groups == 0)
        it->groups = 32;
    return 0;
}

int st_read_cnn(const fctx *c, const st_ynode *root, st_model *m)
{
    static const fkey cnn_keys[] = {
        {"kind", 1, "cnn"}, {"name", 1, "model name"}, {"input", 1, "{channels, height, width}"},
        {"context", 0, "{tokens, dim}"}, {"layers", 1, "layer list"}, {"dtype", 0, "fp16, ..."},
    };
    static const fkey in_keys[] = {{"channels", 1, "input channels"},
                                   {"height", 1, "input height"},
                                   {"width", 1, "input width"}};
    static const fkey ctx_keys[] = {{"tokens", 1, "context tokens"}, {"dim", 1, "context width"}};
    st_cnn *cnn = &m->cnn;
    const st_ynode *in, *ctx, *layers;
    fctx sc = *c;
    int rc;
    memset(cnn, 0, sizeof *cnn);
    m->kind = ST_MODEL_CNN;
    m->dtype = ST_FP16;
    if ((rc = f_check_map(c, root, cnn_keys, sizeof cnn_keys / sizeof cnn_keys[0])) ||
        (rc = f_string(c, root, "name", m->name, sizeof m->name)) ||
        (rc = st_read_dtype(c, root, "dtype", &m->dtype)))
        return rc;
    in = f_get(root, "input");
    sc.what = "input";
    if ((rc = f_check_map(&sc, in, in_keys, 3)) ||
        (rc = f_int(&sc, in, "channels", 1, 1000000, &cnn->in_channels)) ||
        (rc = f_int(&sc, in, "height", 1, 1000000, &cnn->in_h)) ||
        (rc = f_int(&sc, in, "width", 1, 1000000, &cnn->in_w)))
        return rc;
    ctx = f_get(root, "context");
    if (ctx) {
        sc.what = "context";
        if ((rc = f_check_map(&sc, ctx, ctx_keys, 2)) ||
            (rc = f_int(&sc, ctx, "tokens", 1, 10000000, &cnn->context_tokens)) ||
            (rc = f_int(&sc, ctx, "dim", 1, 1000000, &cnn->context_dim)))
            return rc;
    }
    if ((rc = f_list(c, root, "layers", 0, "layers", &layers)))
        return rc;
    cnn->items = calloc(layers->n, sizeof *cnn->items);
    if (!cnn->items)
        return st_error_set(c->err, ST_ENOMEM, "%s: out of memory", c->path);
    for (size_t i = 0; i < layers->n; i++) {
        char what[48];
        fctx ic = *c;
        snprintf(what, sizeof what, "layers[%zu]", i);
        ic.what = what;
        if ((rc = read_item(&ic, layers->items[i], &cnn->items[i]))) {
            free(cnn->items);
            cnn->items = NULL;
            return rc;
        }
    }
    cnn->n_items = layers->n;
    return 0;
}
