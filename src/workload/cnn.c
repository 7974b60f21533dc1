/*
 * CNN / UNet layer list -> forward operator list, and its parameter count.
 *
 * The walk tracks the current tensor (C channels, H x W) through the items.
 * Blocks expand to the layers their papers define: ResNet bottleneck and
 * basic blocks (He et al. 2016; stride on the 3x3 as torchvision v1.5),
 * MobileNet-V2 inverted residuals (Sandler et al. 2018), and the diffusion
 * UNet's resblock and spatial transformer (Rombach et al. 2022, as in
 * diffusers' UNet2DConditionModel). Convolutions followed by batch norm have
 * no bias; the others do.
 */
#include "config.h"
#include "workload/workload.h"

#include <stdarg.h>
#include <string.h>

#define D(x) ((double)(x))

typedef struct walk {
    const st_model *m;
    const st_gen_opts *o;
    st_oplist *out; /* NULL: only count parameters */
    st_error *err;
    long long n;    /* images */
    long long c, h, w;
    char layer[48];
    long long repeat;
    double params;  /* per repeat of the current item, accumulated into total */
    double total_params;
    const st_cnn_item *it; /* the item being expanded, for error positions */
    int rc;
} walk;

/* "FILE:LINE:COL: LAYER: message" at the current item; returns ST_EINVAL. */
__attribute__((format(printf, 2, 3))) static int loc_error(walk *k, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return st_error_set(k->err, ST_EINVAL, "%s:%d:%d: %s: %s", k->m->path,
                        k->it ? k->it->line : 1, k->it ? k->it->col : 1, k->layer, msg);
}

static st_op new_op(walk *k, st_op_kind kind, const char *name)
{
    return st_op_new(k->layer, name, kind, k->o->dtype, k->repeat, k->n);
}

static void push(walk *k, st_op *op)
{
    if (k->rc || !k->out)
        return;
    st_op_cost(op);
    k->rc = st_oplist_push(k->out, op, k->err);
}

static void eltwise(walk *k, const char *name, long long channels, int arity, double fpe)
{
    st_op op = new_op(k, ST_OP_ELEMENTWISE, name);
    op.rows = k->n;
    op.cols = channels * k->h * k->w;
    op.arity = arity;
    op.ew_flops = fpe;
    push(k, &op);
}

/* Residual add on the current tensor: no backward kernel. */
static void add(walk *k, const char *name, long long channels)
{
    st_op op = new_op(k, ST_OP_ELEMENTWISE, name);
    op.rows = k->n;
    op.cols = channels * k->h * k->w;
    op.arity = 2;
    op.ew_flops = 1;
    op.passthrough = 1;
    push(k, &op);
}

static void act(walk *k, const char *name, st_act a, long long channels)
{
    if (a == ST_ACT_NONE)
        return;
    st_op op = new_op(k, ST_OP_ELEMENTWISE, name);
    op.rows = k->n;
    op.cols = channels * k->h * k->w;
    op.arity = 1;
    op.ew_flops = st_act_flops(a);
    op.act = a;
    push(k, &op);
}

/* Layer norm over rows tokens of cols features (inside the transformer blocks). */
static void layernorm(walk *k, const char *name, long long rows, long long cols)
{
    st_op op = new_op(k, ST_OP_LAYERNORM, name);
    op.rows = rows;
    op.cols = cols;
    push(k, &op);
    k->params += 2 * D(cols);
}

static void norm_op(walk *k, st_op_kind kind, const char *name, long long channels)
{
    if (kind == ST_OP_GROUPNORM) {
        /* an explicit groupnorm's groups, else the 32 of the diffusion
         * blocks (diffusers' ResnetBlock2D and Transformer2DModel), which
         * torch.nn.GroupNorm requires to divide the channels */
        long long groups = k->it && k->it->kind == ST_CNN_GROUPNORM && k->it->groups > 0 ? k->it->groups : 32;
        if (channels % groups) {
            if (!k->rc)
                k->rc = loc_error(k, "%s: groupnorm groups %lld must divide the %lld channels%s", name,
                                  groups, channels,
                                  k->it && k->it->kind == ST_CNN_GROUPNORM
                                      ? ""
                                      : " (this block normalises in 32 groups, as diffusers does)");
            return;
        }
    }
    st_op op = new_op(k, kind, name);
    op.c = channels;
    op.rows = k->n;
    op.cols = channels * k->h * k->w;
    push(k, &op);
    k->params += 2 * D(channels); /* scale and shift */
}

/* Convolution cin -> cout on the current H x W; updates H, W and C. */
static void conv(walk *k, const char *name, long long cin, long long cout, long long ks,
                 long long stride, long long pad, long long groups, int bn, st_act a)
{
    char sub[48];
    if (pad < 0)
        pad = ks / 2;
    long long p = (k->h + 2 * pad - ks) / stride + 1;
    long long q = (k->w + 2 * pad - ks) / stride + 1;
    if (k->rc)
        return;
    if (p < 1 || q < 1) {
        k->rc = loc_error(k, "a %lldx%lld kernel with stride %lld and padding %lld does not fit "
                             "the %lldx%lld input",
                          ks, ks, stride, pad, k->h, k->w);
        return;
    }
    if (cin % groups != 0 || cout % groups != 0) {
        k->rc = loc_error(k, "groups %lld must divide both the input channels (%lld) and the "
                             "output channels (%lld)",
                          groups, cin, cout);
        return;
    }
    st_op op = new_op(k, ST_OP_CONV, name);
    op.c = cin;
    op.k_out = cout;
    op.h = k->h;
    op.w = k->w;
    op.r = op.s = ks;
    op.stride = stride;
    op.pad = pad;
    op.groups = groups;
    op.p = p;
    op.q = q;
    op.bias = !bn; /* a batch norm after it makes a bias redundant */
    push(k, &op);
    k->params += D(cout) * D(cin / groups) * D(ks) * D(ks) + (bn ? 0 : D(cout));
    k->h = p;
    k->w = q;
    k->c = cout;
    if (bn) {
        snprintf(sub, sizeof sub, "%s.bn", name);
        norm_op(k, ST_OP_BATCHNORM, sub, cout);
    }
    snprintf(sub, sizeof sub, "%s.act", name);
    act(k, sub, a, cout);
}

/* Linear layer over rows tokens: k_in -> n_out. */
static void linear(walk *k, const char *name, long long rows, long long k_in, long long n_out,
                   int bias)
{
    st_op op = new_op(k, ST_OP_GEMM, name);
    op.batch = 1;
    op.m = rows;
    op.k = k_in;
    op.n = n_out;
    op.bias = bias;
    push(k, &op);
    k->params += D(k_in) * D(n_out) + (bias ? D(n_out) : 0);
}

/* Pooling with a kr x ks window. */
static void pool(walk *k, const char *name, long long kr, long long ks, long long stride,
                 long long pad)
{
    st_op op = new_op(k, ST_OP_POOL, name);
    op.c = k->c;
    op.h = k->h;
    op.w = k->w;
    op.r = kr;
    op.s = ks;
    op.stride = stride;
    op.pad = pad;
    op.p = (k->h + 2 * pad - kr) / stride + 1;
    op.q = (k->w + 2 * pad - ks) / stride + 1;
    if (k->rc)
        return;
    if (op.p < 1 || op.q < 1) {
        k->rc = loc_error(k, "a %lldx%lld pooling window does not fit the %lldx%lld input", kr,
                          ks, k->h, k->w);
        return;
    }
    if (2 * pad > kr || 2 * pad > ks) {
        k->rc = loc_error(k, "padding %lld is more than half the %lldx%lld window (as PyTorch, "
                             "strata requires pad <= kernel/2)",
                          pad, kr, ks);
        return;
    }
    push(k, &op);
    k->h = op.p;
    k->w = op.q;
}

static void upsample(walk *k, const char *name, long long factor)
{
    st_op op = new_op(k, ST_OP_POOL, name); /* nearest: a copy, no arithmetic */
    op.c = k->c;
    op.h = k->h;
    op.w = k->w;
    op.r = op.s = 0;
    op.stride = 1;
    op.p = k->h * factor;
    op.q = k->w * factor;
    push(k, &op);
    k->h = op.p;
    k->w = op.q;
}

static void attention(walk *k, const char *name, long long heads, long long hd, long long q_len,
                      long long kv_len)
{
    char sub[48];
    if (st_attn_fused(k->o->attn)) {
        st_op op = new_op(k, ST_OP_ATTENTION, name);
        op.fa3 = k->o->attn == ST_ATTN_FLASH3;
        op.heads = op.kv_heads = heads;
        op.q_len = q_len;
        op.kv_len = kv_len;
        op.head_dim = hd;
        push(k, &op);
        return;
    }
    snprintf(sub, sizeof sub, "%s.score", name);
    st_op s = new_op(k, ST_OP_BMM, sub);
    s.batch = k->n * heads;
    s.m = q_len;
    s.k = hd;
    s.n = kv_len;
    push(k, &s);
    snprintf(sub, sizeof sub, "%s.softmax", name);
    st_op sm = new_op(k, ST_OP_SOFTMAX, sub);
    sm.rows = k->n * heads * q_len;
    sm.cols = kv_len;
    push(k, &sm);
    snprintf(sub, sizeof sub, "%s.value", name);
    st_op v = new_op(k, ST_OP_BMM, sub);
    v.batch = k->n * heads;
    v.m = q_len;
    v.k = kv_len;
    v.n = hd;
    push(k, &v);
}

static void spatial_transformer(walk *k, const st_cnn_item *it)
{
    const st_cnn *cnn = &k->m->cnn;
    long long c = k->c, t = k->h * k->w, rows = k->n * t;
    long long heads = it->heads, hd = it->head_dim > 0 ? it->head_dim : c / heads;
    long long inner = heads * hd, ff = 4 * c;
    if (it->head_dim <= 0 && c % heads) {
        if (!k->rc)
            k->rc = loc_error(k, "heads %lld do not divide the %lld channels reaching this "
                                 "spatial_transformer; give a head count that divides %lld, or "
                                 "head_dim explicitly",
                              heads, c, c);
        return;
    }
    if (cnn->context_tokens <= 0) {
        if (!k->rc)
            k->rc = loc_error(k, "spatial_transformer needs a cross-attention context: add "
                                 "`context: {tokens: 77, dim: 768}` at the top level");
        return;
    }
    norm_op(k, ST_OP_GROUPNORM, "norm", c);
    conv(k, "proj_in", c, inner, 1, 1, 0, 1, 0, ST_ACT_NONE);
    for (long long d = 0; d < (it->depth > 0 ? it->depth : 1); d++) {
        layernorm(k, "attn1.norm", rows, inner);
        linear(k, "attn1.qkv", rows, inner, 3 * inner, 0);
        attention(k, "attn1", heads, hd, t, t);
        linear(k, "attn1.out", rows, inner, inner, 1);
        add(k, "attn1.residual", inner);
        layernorm(k, "attn2.norm", rows, inner);
        linear(k, "attn2.q", rows, inner, inner, 0);
        linear(k, "attn2.kv", k->n * cnn->context_tokens, cnn->context_dim, 2 * inner, 0);
        attention(k, "attn2", heads, hd, t, cnn->context_tokens);
        linear(k, "attn2.out", rows, inner, inner, 1);
        add(k, "attn2.residual", inner);
        layernorm(k, "ff.norm", rows, inner);
        linear(k, "ff.geglu", rows, inner, 2 * ff, 1); /* GEGLU: value and gate halves */
        eltwise(k, "ff.gelu", ff, 1, st_act_flops(ST_ACT_GELU));
        eltwise(k, "ff.mul", ff, 2, 1);
        linear(k, "ff.out", rows, ff, inner, 1);
        add(k, "ff.residual", inner);
    }
    conv(k, "proj_out", inner, c, 1, 1, 0, 1, 0, ST_ACT_NONE);
    add(k, "residual", c);
}

static void resblock(walk *k, const st_cnn_item *it)
{
    long long cin = it->in > 0 ? it->in : k->c, cout = it->out > 0 ? it->out : cin;
    k->c = cin;
    norm_op(k, ST_OP_GROUPNORM, "norm1", cin);
    act(k, "act1", ST_ACT_SILU, cin);
    conv(k, "conv1", cin, cout, 3, 1, 1, 1, 0, ST_ACT_NONE);
    if (it->temb_dim > 0) {
        linear(k, "time_emb", k->n, it->temb_dim, cout, 1);
        add(k, "time_add", cout);
    }
    norm_op(k, ST_OP_GROUPNORM, "norm2", cout);
    act(k, "act2", ST_ACT_SILU, cout);
    conv(k, "conv2", cout, cout, 3, 1, 1, 1, 0, ST_ACT_NONE);
    if (cin != cout) {
        long long h = k->h, w = k->w;
        conv(k, "skip", cin, cout, 1, 1, 0, 1, 0, ST_ACT_NONE);
        k->h = h;
        k->w = w;
    }
    add(k, "residual", cout);
}

static void shortcut(walk *k, long long cin, long long cout, long long stride, long long h0,
                     long long w0)
{
    if (stride != 1 || cin != cout) {
        long long h = k->h, w = k->w, c = k->c;
        k->h = h0;
        k->w = w0;
        conv(k, "downsample", cin, cout, 1, stride, 0, 1, 1, ST_ACT_NONE);
        k->h = h;
        k->w = w;
        k->c = c;
    }
}

static void item(walk *k, const st_cnn_item *it)
{
    long long cin = it->in > 0 ? it->in : k->c;
    long long h0 = k->h, w0 = k->w, stride = it->stride > 0 ? it->stride : 1;
    switch (it->kind) {
    case ST_CNN_CONV:
        conv(k, "conv", cin, it->out, it->kernel, stride, it->pad, it->groups > 0 ? it->groups : 1,
             it->bn, it->act);
        break;
    case ST_CNN_DWCONV:
        conv(k, "dwconv", cin, cin, it->kernel, stride, it->pad, cin, it->bn, it->act);
        break;
    case ST_CNN_FC:
        if (it->in > 0) { /* a side vector (e.g. the time embedding) */
            linear(k, "fc", k->n, it->in, it->out, 1);
        } else if (k->h != 1 || k->w != 1) {
            if (!k->rc)
                k->rc = loc_error(k, "fc needs a 1x1 input (add global_avgpool before it), or "
                                     "`in:` for a side vector; the tensor here is %lldx%lldx%lld",
                                  k->c, k->h, k->w);
        } else {
            linear(k, "fc", k->n, k->c, it->out, 1);
            k->c = it->out;
        }
        break;
    case ST_CNN_MAXPOOL:
    case ST_CNN_AVGPOOL:
        pool(k, it->kind == ST_CNN_MAXPOOL ? "maxpool" : "avgpool", it->kernel, it->kernel,
             stride, it->pad < 0 ? 0 : it->pad);
        break;
    case ST_CNN_GLOBAL_AVGPOOL:
        pool(k, "avgpool", k->h, k->w, 1, 0);
        break;
    case ST_CNN_BATCHNORM: norm_op(k, ST_OP_BATCHNORM, "bn", k->c); break;
    case ST_CNN_GROUPNORM: norm_op(k, ST_OP_GROUPNORM, "gn", k->c); break;
    case ST_CNN_ACT: act(k, "act", it->act, k->c); break;
    case ST_CNN_UPSAMPLE_OP: upsample(k, "upsample", it->factor > 0 ? it->factor : 2); break;
    case ST_CNN_BOTTLENECK:
        k->c = cin;
        conv(k, "conv1", cin, it->mid, 1, 1, 0, 1, 1, ST_ACT_RELU);
        conv(k, "conv2", it->mid, it->mid, 3, stride, 1, 1, 1, ST_ACT_RELU);
        conv(k, "conv3", it->mid, it->out, 1, 1, 0, 1, 1, ST_ACT_NONE);
        shortcut(k, cin, it->out, stride, h0, w0);
        add(k, "residual", it->out);
        act(k, "relu", ST_ACT_RELU, it->out);
        break;
    case ST_CNN_BASIC:
        k->c = cin;
        conv(k, "conv1", cin, it->out, 3, stride, 1, 1, 1, ST_ACT_RELU);
        conv(k, "conv2", it->out, it->out, 3, 1, 1, 1, 1, ST_ACT_NONE);
        shortcut(k, cin, it->out, stride, h0, w0);
        add(k, "residual", it->out);
        act(k, "relu", ST_ACT_RELU, it->out);
        break;
    case ST_CNN_INVERTED_RESIDUAL: {
        long long hidden = cin * (it->expand > 0 ? it->expand : 1);
        long long ks = it->kernel > 0 ? it->kernel : 3;
        k->c = cin;
        st_act a = it->act != ST_ACT_NONE ? it->act : ST_ACT_RELU6; /* MobileNetV2's, unless given */
        if (hidden != cin)
            conv(k, "expand", cin, hidden, 1, 1, 0, 1, 1, a);
        conv(k, "dwconv", hidden, hidden, ks, stride, ks / 2, hidden, 1, a);
        conv(k, "project", hidden, it->out, 1, 1, 0, 1, 1, ST_ACT_NONE);
        if (stride == 1 && cin == it->out)
            add(k, "residual", it->out);
        break;
    }
    case ST_CNN_RESBLOCK: resblock(k, it); break;
    case ST_CNN_SPATIAL_TRANSFORMER: spatial_transformer(k, it); break;
    case ST_CNN_DOWNSAMPLE: conv(k, "conv", cin, cin, 3, 2, 1, 1, 0, ST_ACT_NONE); break;
    case ST_CNN_UPSAMPLE:
        upsample(k, "upsample", 2);
        conv(k, "conv", k->c, k->c, 3, 1, 1, 1, 0, ST_ACT_NONE);
        break;
    case ST_CNN_ITEM_KIND_COUNT:
        break;
    }
}

static int cnn_walk(const st_model *m, const st_gen_opts *o, st_oplist *out, st_error *err,
                    double *params)
{
    const st_cnn *cnn = &m->cnn;
    walk k;
    memset(&k, 0, sizeof k);
    k.m = m;
    k.o = o;
    k.out = out;
    k.err = err;
    k.n = o->batch;
    k.c = cnn->in_channels;
    k.h = cnn->in_h;
    k.w = cnn->in_w;
    for (size_t i = 0; i < cnn->n_items && !k.rc; i++) {
        const st_cnn_item *it = &cnn->items[i];
        long long c0 = it->in > 0 ? it->in : k.c, h0 = k.h, w0 = k.w;
        if (it->name[0])
            snprintf(k.layer, sizeof k.layer, "%s", it->name);
        else
            snprintf(k.layer, sizeof k.layer, "l%zu", i + 1);
        k.repeat = it->repeat > 0 ? it->repeat : 1;
        k.params = 0;
        k.it = it;
        {
            /* the largest tensor this item can make must stay countable: a
             * block widens C to its out, mid or expanded width, or up to 8x
             * (a transformer's GEGLU); an upsample grows H x W by factor^2;
             * attention holds T x T scores per head */
            double c = D(c0 > k.c ? c0 : k.c), hw = D(k.h) * D(k.w);
            double wide = c * 8;
            if (D(it->out) > wide)
                wide = D(it->out);
            if (D(it->mid) > wide)
                wide = D(it->mid);
            if (c * D(it->expand) > wide)
                wide = c * D(it->expand);
            if (it->heads > 0 && D(it->heads) * D(it->head_dim) * 3 > wide)
                wide = D(it->heads) * D(it->head_dim) * 3;
            if (it->kind == ST_CNN_UPSAMPLE_OP || it->kind == ST_CNN_UPSAMPLE) {
                double f = it->factor > 0 ? D(it->factor) : 2;
                hw *= f * f;
            }
            double biggest = D(k.n) * wide * hw;
            if (it->kind == ST_CNN_SPATIAL_TRANSFORMER) {
                /* self-attention scores (T x T per head), cross-attention
                 * scores (T x context tokens), the context and its K/V */
                double tok = D(cnn->context_tokens), inner = it->head_dim > 0 ? D(it->heads) * D(it->head_dim) : c;
                double ctx = D(k.n) * tok * (D(cnn->context_dim) > 2 * inner ? D(cnn->context_dim) : 2 * inner);
                double cross = D(k.n) * D(it->heads) * hw * tok;
                biggest += D(k.n) * D(it->heads) * hw * hw;
                if (ctx > biggest)
                    biggest = ctx;
                if (cross > biggest)
                    biggest = cross;
            }
            if (biggest > ST_MAX_ELEMENTS) {
                k.rc = loc_error(&k, "a batch of %lld makes tensors of %.3g elements here; "
                                     "strata counts up to 2^53 = 9.0e15",
                                 k.n, biggest);
                break;
            }
        }
        size_t first = out ? out->n : 0;
        item(&k, it);
        if (!k.rc && out && first < out->n)
            out->ops[first].no_dgrad = (i == 0); /* the image needs no gradient */
        if (!k.rc && k.repeat > 1 && (k.c != c0 || k.h != h0 || k.w != w0))
            k.rc = loc_error(&k, "repeat %lld needs a block that keeps its shape, but it maps "
                                 "%lldx%lldx%lld to %lldx%lldx%lld; write the first block as its "
                                 "own item and repeat the rest",
                             k.repeat, c0, h0, w0, k.c, k.h, k.w);
        k.total_params += k.params * D(k.repeat);
    }
    if (params)
        *params = k.total_params;
    return k.rc;
}

int st_cnn_ops(const st_model *m, const st_gen_opts *o, st_oplist *out, st_error *err)
{
    if (o->phase == ST_PHASE_DECODE)
        return st_error_set(err, ST_EINVAL,
                            "%s is a CNN: it has no decode phase; use --phase prefill (inference) "
                            "or train",
                            m->id);
    return cnn_walk(m, o, out, err, NULL);
}

double st_cnn_params(const st_model *m)
{
    st_gen_opts o;
    double p = 0;
    st_gen_opts_default(&o, m);
    if (cnn_walk(m, &o, NULL, NULL, &p) != 0)
        return 0;
    return p;
}
