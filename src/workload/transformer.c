/*
 * Transformer -> forward operator list, and its parameter count.
 *
 * One block is emitted once with repeat = number of such blocks (dense and
 * MoE blocks, encoder and decoder blocks are distinct block types). Shapes
 * follow the Hugging Face eager implementations (separate Q/K/V-fused
 * projection, gate and up projections, full-square attention scores).
 */
#include "config.h"
#include "workload/workload.h"

#include <string.h>

#define D(x) ((double)(x))

/* What one generator call needs to know, shared by all helpers. */
typedef struct gen {
    const st_model *m;
    const st_transformer *tf;
    const st_gen_opts *o;
    st_oplist *out;
    st_error *err;
    long long tokens; /* tokens processed this step */
    long long q_len, kv_len; /* self-attention per sequence */
    long long enc_len;       /* encoder length (encoder-decoder models) */
    const char *layer;
    long long repeat;
    int causal; /* self-attention of the blocks being emitted is causal */
    int rc;
} gen;

static st_op new_op(gen *g, st_op_kind kind, const char *name)
{
    return st_op_new(g->layer, name, kind, g->o->dtype, g->repeat, 1);
}

static void push(gen *g, st_op *op)
{
    if (g->rc)
        return;
    st_op_cost(op);
    g->rc = st_oplist_push(g->out, op, g->err);
}

/* A GEMM; bias: it adds one (its gradient, a column sum of dy, is a
 * backward kernel of its own). The blocks' projections carry the model's
 * biases, and so do an encoder's heads (BERT's MLM transform and decoder,
 * pooler and classifier); the router, the embedding projections and a causal
 * model's LM head or score layer have none. */
static void gemm(gen *g, const char *name, long long m, long long k, long long n, int bias)
{
    st_op op = new_op(g, ST_OP_GEMM, name);
    op.m = m;
    op.k = k;
    op.n = n;
    op.bias = bias;
    push(g, &op);
}

static void vec(gen *g, st_op_kind kind, const char *name, long long rows, long long cols)
{
    st_op op = new_op(g, kind, name);
    op.rows = rows;
    op.cols = cols;
    push(g, &op);
}

/* An elementwise op over rows x cols, not yet pushed (callers mark how its
 * gradient behaves). */
static st_op ew_op(gen *g, const char *name, long long rows, long long cols, int arity,
                   double flops_per_elem)
{
    st_op op = new_op(g, ST_OP_ELEMENTWISE, name);
    op.rows = rows;
    op.cols = cols;
    op.arity = arity;
    op.ew_flops = flops_per_elem;
    return op;
}

static void eltwise(gen *g, const char *name, long long rows, long long cols, int arity,
                    double flops_per_elem)
{
    st_op op = ew_op(g, name, rows, cols, arity, flops_per_elem);
    push(g, &op);
}

/* An elementwise pass whose gradient needs dy alone (a scale by a constant,
 * a select against a fixed mask): its backward reads dy and writes dx.
 * scalar_loads: see st_op (0: vectorized); passthrough: an add of a mask,
 * whose gradient is dy itself (no kernel). */
static void linear_ew(gen *g, const char *name, long long rows, long long cols, int scalar_loads,
                      int passthrough)
{
    st_op op = ew_op(g, name, rows, cols, 1, 1);
    op.grad_no_input = 1;
    op.scalar_loads = scalar_loads;
    op.passthrough = passthrough;
    push(g, &op);
}

/* Philox4x32-10 draws four 32-bit numbers in 10 rounds of two 32x32->64
 * multiplies and a few xors/adds, about 15 integer ops per number; with
 * the compare and the scale, about 20 per element. */
#define DROPOUT_OPS_PER_ELEM 20

/* Dropout in training, as PyTorch runs it: one fused kernel draws the keep
 * mask, scales the kept values and writes the mask (one byte per element);
 * the gradient multiplies dy by the saved mask. No kernel outside training
 * or at probability 0. */
static void dropout(gen *g, const char *name, long long rows, long long cols, double p)
{
    if (g->o->phase != ST_PHASE_TRAIN || p <= 0)
        return;
    st_op op = ew_op(g, name, rows, cols, 1, DROPOUT_OPS_PER_ELEM);
    op.grad_no_input = 1;
    op.aux_bytes = 1;
    push(g, &op);
}

/* Residual or embedding add: y = a + b; its gradient is dy itself. */
static void add(gen *g, const char *name, long long rows, long long cols, int scalar_loads)
{
    st_op op = ew_op(g, name, rows, cols, 2, 1);
    op.passthrough = 1;
    op.scalar_loads = scalar_loads;
    push(g, &op);
}

static void norm(gen *g, const char *name, long long rows)
{
    vec(g, g->tf->norm == ST_NORM_RMSNORM ? ST_OP_RMSNORM : ST_OP_LAYERNORM, name, rows,
        g->tf->hidden);
}

/* A copy between the token-major and head-major layouts: a strided source,
 * so PyTorch's non-vectorized copy kernel, and its gradient a copy of dy
 * back (the same kernel). */
static st_op strided_copy(gen *g, const char *name, long long rows, long long cols)
{
    st_op op = ew_op(g, name, rows, cols, 1, 0);
    op.grad_no_input = 1;
    op.scalar_loads = 1;
    op.layout_copy = 1;
    return op;
}

/* Attention core for q_len queries per sequence against kv_len keys;
 * kv_view: the cached K and V are the permuted views themselves (T5's
 * cross-attention keeps its first step's), so a decode step copies them. */
static void attention_core(gen *g, const char *prefix, long long q_len, long long kv_len,
                           int causal, long long kv_heads, int kv_view)
{
    const st_transformer *tf = g->tf;
    long long b = g->o->batch;
    char name[48];
    if (st_attn_fused(g->o->attn)) {
        st_op op = new_op(g, ST_OP_ATTENTION, "");
        op.fa3 = g->o->attn == ST_ATTN_FLASH3;
        snprintf(op.name, sizeof op.name, "%s.%s.flash", g->layer, prefix);
        op.batch = b;
        op.heads = tf->heads;
        op.kv_heads = kv_heads;
        op.q_len = q_len;
        op.kv_len = kv_len;
        op.head_dim = tf->head_dim;
        op.causal = causal;
        push(g, &op);
        return;
    }
    /* Eager: scores over the full q x kv rectangle (the mask is applied to
     * them, not skipped), the model's elementwise passes over them (scale,
     * mask, bias: st_transformer.score_*), softmax, dropout in training,
     * then the weighted sum of values. */
    /* Q, K and V copied head-major first (st_transformer.head_copies): a
     * strided copy each, whose gradient is the projection's own copy back
     * token-major. Under grouped-query attention K and V are expanded to
     * every query head (Hugging Face's repeat_kv: an expand and a reshape,
     * reading the KV heads and writing all heads), then multiplied as they
     * are. With one query per sequence (decode) Q's size-1 sequence merges
     * and the cache is contiguous: no copy, but repeat_kv still expands the
     * whole cache under GQA, and a cache that keeps the permuted view (T5's
     * cross-attention) is copied by the matmul each step. */
    static const char *const what[3] = {"q", "k", "v"};
    int gqa = kv_heads < tf->heads;
    for (int i = 0; i < tf->head_copies && i < 3; i++) {
        if (!(q_len > 1 || (i > 0 && (gqa || kv_view))))
            continue;
        long long len = i == 0 ? q_len : kv_len;
        snprintf(name, sizeof name, "%s.%s_heads", prefix, what[i]);
        st_op copy = strided_copy(g, name, b * len, tf->heads * tf->head_dim);
        if (i > 0 && gqa) {
            copy.read_share = (double)kv_heads / (double)tf->heads;
            copy.launch_only = 0; /* repeat_kv: a call of its own */
        } else {
            /* inside the matmul's call (and its gradient inside autograd's):
             * the host pays the launch, not a dispatch of its own */
            copy.launch_only = 1;
        }
        push(g, &copy);
    }
    st_op score = new_op(g, ST_OP_BMM, "");
    snprintf(score.name, sizeof score.name, "%s.%s.score", g->layer, prefix);
    score.batch = b * tf->heads;
    score.m = q_len;
    score.k = tf->head_dim;
    score.n = kv_len;
    push(g, &score);
    long long rows = b * tf->heads * q_len;
    /* a pass against a broadcast mask loads the scores and the mask one
     * element at a time (st_transformer.score_*_bcast) */
    for (int i = 0; i < tf->score_unary; i++) {
        int bcast = i >= tf->score_unary - tf->score_unary_bcast;
        snprintf(name, sizeof name, "%s.score_ew%d", prefix, i + 1);
        linear_ew(g, name, rows, kv_len, bcast ? 2 : 0, bcast && !tf->score_bcast_select);
    }
    for (int i = 0; i < tf->score_binary; i++) {
        snprintf(name, sizeof name, "%s.score_add%d", prefix, i + 1);
        /* the gradient is dy itself */
        add(g, name, rows, kv_len, i >= tf->score_binary - tf->score_binary_bcast ? 2 : 0);
    }
    snprintf(name, sizeof name, "%s.softmax", prefix);
    vec(g, ST_OP_SOFTMAX, name, rows, kv_len);
    snprintf(name, sizeof name, "%s.dropout", prefix);
    dropout(g, name, rows, kv_len, tf->attn_dropout);
    st_op value = new_op(g, ST_OP_BMM, "");
    snprintf(value.name, sizeof value.name, "%s.%s.value", g->layer, prefix);
    value.batch = b * tf->heads;
    value.m = q_len;
    value.k = kv_len;
    value.n = tf->head_dim;
    push(g, &value);
    /* The context comes out head-major (batch, heads, q, d) and is copied
     * back token-major before the output projection: Hugging Face's
     * `.transpose(1, 2).contiguous()` (GPT-2's _merge_heads, BERT's
     * permute), Megatron-LM's `permute(...).contiguous()`. A plain copy.
     * Its gradient is dy permuted back to head-major, which the value
     * GEMM's backward reshapes to (batch x heads, q, d): batch and heads
     * cannot merge in that view, so it is copied too. With one query per
     * sequence (decode) or one head the permuted tensor is contiguous
     * already (PyTorch skips size-1 dimensions): no kernel either way. */
    if (q_len > 1 && tf->heads > 1) {
        snprintf(name, sizeof name, "%s.merge_heads", prefix);
        st_op merge = strided_copy(g, name, b * q_len, (long long)tf->heads * tf->head_dim);
        push(g, &merge);
    }
}

static void self_attention(gen *g)
{
    const st_transformer *tf = g->tf;
    long long t = g->tokens, qdim = tf->heads * tf->head_dim;
    long long kvdim = tf->kv_heads * tf->head_dim;
    if (tf->pre_norm)
        norm(g, "attn.norm", t);
    gemm(g, "attn.qkv", t, tf->hidden, qdim + 2 * kvdim, tf->bias);
    if (tf->position == ST_POS_ROPE) {
        st_op op = new_op(g, ST_OP_ROPE, "attn.rope");
        op.rows = t;
        op.cols = qdim + kvdim;
        op.head_dim = tf->head_dim;
        push(g, &op);
    }
    attention_core(g, "attn", g->q_len, g->kv_len, g->causal, tf->kv_heads, 0);
    gemm(g, "attn.out", t, qdim, tf->hidden, tf->bias);
    dropout(g, "attn.out.dropout", t, tf->hidden, tf->hidden_dropout);
    add(g, "attn.residual", t, tf->hidden, 0);
    if (!tf->pre_norm)
        norm(g, "attn.norm", t);
}

/* Decoder cross-attention over the encoder output (enc_len per sequence).
 * In decode the encoder's K/V projections are cached and not recomputed. */
static void cross_attention(gen *g)
{
    const st_transformer *tf = g->tf;
    long long t = g->tokens, qdim = tf->heads * tf->head_dim;
    long long kvdim = tf->kv_heads * tf->head_dim;
    if (tf->pre_norm)
        norm(g, "xattn.norm", t);
    gemm(g, "xattn.q", t, tf->hidden, qdim, tf->bias);
    if (g->o->phase != ST_PHASE_DECODE)
        gemm(g, "xattn.kv", g->o->batch * g->enc_len, tf->hidden, 2 * kvdim, tf->bias);
    attention_core(g, "xattn", g->q_len, g->enc_len, 0, tf->kv_heads, 1);
    gemm(g, "xattn.out", t, qdim, tf->hidden, tf->bias);
    dropout(g, "xattn.out.dropout", t, tf->hidden, tf->hidden_dropout);
    add(g, "xattn.residual", t, tf->hidden, 0);
    if (!tf->pre_norm)
        norm(g, "xattn.norm", t);
}

/* The MLP activation: one kernel, or its eager composition
 * (st_transformer.act_*, act_unary >= 1). The first kernel carries the activation's ALU work
 * and all of its gradient kernels; the others are the composition's further
 * unary passes (act_ewN) and two-tensor products (act_mulN). */
static void activation(gen *g, const char *p, long long rows, long long cols)
{
    const st_transformer *tf = g->tf;
    char name[48];
    snprintf(name, sizeof name, "%s.act", p);
    st_op op = ew_op(g, name, rows, cols, 1, st_act_flops(tf->activation));
    int composed = tf->act_unary > 0;
    if (composed) {
        op.grad_unary = tf->act_grad_unary;
        op.grad_binary = tf->act_grad_binary;
    }
    push(g, &op);
    if (!composed)
        return;
    for (int i = 1; i < tf->act_unary; i++) {
        snprintf(name, sizeof name, "%s.act_ew%d", p, i + 1);
        op = ew_op(g, name, rows, cols, 1, 1);
        op.passthrough = 1; /* the first kernel carries the gradient */
        push(g, &op);
    }
    for (int i = 0; i < tf->act_binary; i++) {
        snprintf(name, sizeof name, "%s.act_mul%d", p, i + 1);
        op = ew_op(g, name, rows, cols, 2, 1);
        op.passthrough = 1; /* the first kernel carries the gradient */
        push(g, &op);
    }
}

static void mlp_body(gen *g, const char *p, long long rows_m, long long experts, long long f)
{
    const st_transformer *tf = g->tf;
    char name[48];
    /* Expert GEMMs are grouped: batch = experts, m = tokens per expert. */
    st_op_kind kind = experts > 0 ? ST_OP_MOE_EXPERTS : ST_OP_GEMM;
    long long b = experts > 0 ? experts : 1;
    st_op op;
    const char *mats[2] = {"up", "gate"};
    for (int i = 0; i < (tf->gated_mlp ? 2 : 1); i++) {
        snprintf(name, sizeof name, "%s.%s", p, mats[i]);
        op = new_op(g, kind, name);
        op.batch = b;
        op.m = rows_m;
        op.k = tf->hidden;
        op.n = f;
        op.bias = tf->bias;
        push(g, &op);
    }
    activation(g, p, b * rows_m, f);
    if (tf->gated_mlp) {
        snprintf(name, sizeof name, "%s.mul", p);
        eltwise(g, name, b * rows_m, f, 2, 1);
    }
    snprintf(name, sizeof name, "%s.down", p);
    op = new_op(g, kind, name);
    op.batch = b;
    op.m = rows_m;
    op.k = f;
    op.n = tf->hidden;
    op.bias = tf->bias;
    push(g, &op);
}

static void mlp(gen *g, int moe)
{
    const st_transformer *tf = g->tf;
    long long t = g->tokens;
    if (tf->pre_norm && tf->parallel_block != ST_PAR_SHARED_NORM)
        norm(g, "mlp.norm", t);
    if (!moe) {
        mlp_body(g, "mlp", t, 0, tf->ffn_hidden);
    } else {
        /* Router logits, softmax + top-k, then each expert gets on average
         * tokens * top_k / experts rows (balanced routing; imbalance is the
         * training layer's knob). With fewer routed tokens than experts
         * (small-batch decode) only t * top_k experts run and read weights. */
        long long routed = t * tf->top_k;
        long long active = routed < tf->experts ? routed : tf->experts;
        long long per_expert = (routed + active - 1) / active;
        gemm(g, "moe.router", t, tf->hidden, tf->experts, 0);
        st_op r = new_op(g, ST_OP_MOE_ROUTER, "moe.topk");
        r.rows = t;
        r.cols = tf->experts;
        r.k = tf->top_k;
        push(g, &r);
        mlp_body(g, "moe", per_expert, active, tf->expert_ffn_hidden);
        /* weighted sum of the top_k expert outputs per token */
        eltwise(g, "moe.combine", t * tf->top_k, tf->hidden, 2, 2);
    }
    dropout(g, "mlp.dropout", t, tf->hidden, tf->hidden_dropout);
    add(g, "mlp.residual", t, tf->hidden, 0);
    if (!tf->pre_norm)
        norm(g, "mlp.norm", t);
}

static void blocks(gen *g, const char *dense_name, const char *moe_name, long long count,
                   int cross, int causal)
{
    const st_transformer *tf = g->tf;
    long long n_moe = tf->experts > 0 ? count / tf->moe_every : 0;
    long long n_dense = count - n_moe;
    g->causal = causal;
    if (n_dense > 0) {
        g->layer = dense_name;
        g->repeat = n_dense;
        self_attention(g);
        if (cross)
            cross_attention(g);
        mlp(g, 0);
    }
    if (n_moe > 0) {
        g->layer = moe_name;
        g->repeat = n_moe;
        self_attention(g);
        if (cross)
            cross_attention(g);
        mlp(g, 1);
    }
}

static void embeddings(gen *g, long long tokens)
{
    const st_transformer *tf = g->tf;
    g->layer = "embed";
    g->repeat = 1;
    long long ed = st_transformer_embed_width(tf);
    st_op op = new_op(g, ST_OP_EMBEDDING, "tokens");
    op.rows = tokens;
    op.cols = ed;
    op.n = tf->vocab;
    push(g, &op);
    if (ed != tf->hidden)
        gemm(g, "project_in", tokens, ed, tf->hidden, 0);
    if (tf->position == ST_POS_LEARNED) {
        op = new_op(g, ST_OP_EMBEDDING, "positions");
        op.rows = tokens;
        op.cols = tf->hidden;
        op.n = tf->max_seq;
        push(g, &op);
        add(g, "add", tokens, tf->hidden, 0);
    }
    if (!tf->pre_norm)
        norm(g, "norm", tokens);
    dropout(g, "dropout", tokens, tf->hidden, tf->embed_dropout_set ? tf->embed_dropout : tf->hidden_dropout);
}

/* The decoder's output back to the embedding's width where they differ
 * (OPT's project_out, no bias); returns the width the head reads. */
static long long project_out(gen *g, long long rows)
{
    long long ed = st_transformer_embed_width(g->tf);
    if (ed != g->tf->hidden)
        gemm(g, "project_out", rows, g->tf->hidden, ed, 0);
    return ed;
}

int st_transformer_ops(const st_model *m, const st_gen_opts *o, st_oplist *out, st_error *err)
{
    const st_transformer *tf = &m->tf;
    gen g;
    memset(&g, 0, sizeof g);
    g.m = m;
    g.tf = tf;
    g.o = o;
    g.out = out;
    g.err = err;

    if (o->phase == ST_PHASE_DECODE) {
        if (o->kv_len < 0 || o->kv_len + 1 > tf->max_seq)
            return st_error_set(err, ST_EINVAL,
                                "decode KV length %lld is outside 0..%lld (max_seq %lld of %s "
                                "minus the new token)",
                                o->kv_len, tf->max_seq - 1, tf->max_seq, m->id);
        /* an encoder-decoder's decoder attends to the encoded input, --seq
         * tokens of it, which the encoder bounds as in prefill */
        if (tf->encoder_layers > 0 && (o->seq < 1 || o->seq > tf->max_seq))
            return st_error_set(err, ST_EINVAL,
                                "encoder input length (--seq) %lld is outside 1..%lld (max_seq of %s)",
                                o->seq, tf->max_seq, m->id);
        g.tokens = o->batch;
        g.q_len = 1;
        g.kv_len = o->kv_len + 1;
        g.enc_len = o->seq;
    } else {
        if (o->seq < 1 || o->seq > tf->max_seq)
            return st_error_set(err, ST_EINVAL,
                                "sequence length %lld is outside 1..%lld (max_seq of %s)", o->seq,
                                tf->max_seq, m->id);
        g.tokens = o->batch * o->seq;
        g.q_len = g.kv_len = o->seq;
        g.enc_len = o->seq;
    }
    {
        /* Every tensor and the parameter count must stay exactly countable
         * (and the integer products below must not overflow). */
        double T = D(g.tokens), b = D(o->batch);
        double widest = D(tf->hidden);
        double qkv = D(tf->heads + 2 * tf->kv_heads) * D(tf->head_dim);
        double ffn = D(tf->experts > 0 ? tf->expert_ffn_hidden : tf->ffn_hidden) *
                     D(tf->experts > 0 ? tf->top_k : 1);
        if (qkv > widest) widest = qkv;
        if (ffn > widest) widest = ffn;
        if (D(tf->vocab) > widest) widest = D(tf->vocab);
        double biggest = T * widest;
        double scores = b * D(tf->heads) * D(g.q_len) * D(g.kv_len > g.enc_len ? g.kv_len : g.enc_len);
        if (scores > biggest) biggest = scores;
        /* one layer's cached keys (a decode step reads the whole cache) */
        double cache = b * D(g.kv_len) * D(tf->kv_heads) * D(tf->head_dim);
        if (cache > biggest) biggest = cache;
        if (biggest > ST_MAX_ELEMENTS || st_model_params(m) > ST_MAX_ELEMENTS)
            return st_error_set(err, ST_EINVAL,
                                "%s at batch %lld and sequence %lld needs tensors of %.3g "
                                "elements (or %.3g parameters); strata counts up to 2^53 = "
                                "9.0e15: use a smaller batch or sequence",
                                m->id, o->batch, o->phase == ST_PHASE_DECODE ? o->kv_len : o->seq,
                                biggest, st_model_params(m));
    }
    if (o->phase == ST_PHASE_DECODE && !tf->causal)
        return st_error_set(err, ST_EINVAL,
                            "%s is an encoder-only model (causal: false): it has no decode phase; "
                            "use --phase prefill or train",
                            m->id);

    if (tf->encoder_layers > 0 && o->phase != ST_PHASE_DECODE) {
        long long dec_tokens = g.tokens;
        embeddings(&g, o->batch * g.enc_len);
        g.tokens = o->batch * g.enc_len;
        long long q = g.q_len, kv = g.kv_len;
        g.q_len = g.kv_len = g.enc_len;
        blocks(&g, "enc_block", "enc_moe_block", tf->encoder_layers, 0, 0);
        g.layer = "enc_final";
        g.repeat = 1;
        if (tf->pre_norm)
            norm(&g, "norm", g.tokens);
        g.tokens = dec_tokens;
        g.q_len = q;
        g.kv_len = kv;
    }
    embeddings(&g, g.tokens);
    if (tf->encoder_layers > 0)
        blocks(&g, "dec_block", "dec_moe_block", tf->layers, 1, tf->causal);
    else
        blocks(&g, "block", "moe_block", tf->layers, 0, tf->causal);

    g.layer = "final";
    g.repeat = 1;
    if (tf->pre_norm)
        norm(&g, "norm", g.tokens);
    if (tf->lm_head) {
        long long rows = (o->logits_all || o->phase == ST_PHASE_DECODE) ? g.tokens : o->batch;
        g.layer = "head";
        if (!tf->causal) { /* masked-LM head transform (BERT): dense, act, norm */
            gemm(&g, "transform", rows, tf->hidden, tf->hidden, tf->bias);
            activation(&g, "transform", rows, tf->hidden);
            norm(&g, "transform.norm", rows);
        }
        gemm(&g, "lm_head", rows, project_out(&g, rows), tf->vocab, tf->bias && !tf->causal);
        if (o->phase == ST_PHASE_TRAIN)
            vec(&g, ST_OP_SOFTMAX, "loss", rows, tf->vocab); /* cross-entropy */
    } else if (tf->num_labels > 0) {
        long long rows = tf->causal ? g.tokens : o->batch;
        g.layer = "head";
        if (!tf->causal) { /* pooler: dense + tanh on the first token */
            gemm(&g, "pooler", o->batch, tf->hidden, tf->hidden, tf->bias);
            eltwise(&g, "pooler.act", o->batch, tf->hidden, 1, 1); /* tanh, one op */
        }
        /* a causal model's score layer reads the decoder's output, after
         * project_out (OPTForSequenceClassification: word_embed_proj_dim) */
        long long width = tf->causal ? project_out(&g, rows) : tf->hidden;
        gemm(&g, "classifier", rows, width, tf->num_labels, tf->bias && !tf->causal);
        if (o->phase == ST_PHASE_TRAIN)
            vec(&g, ST_OP_SOFTMAX, "loss", o->batch, tf->num_labels);
    }
    return g.rc;
}

/* ---- parameter count ----------------------------------------------------- */
static double norm_params(const st_transformer *tf)
{
    return D(tf->norm == ST_NORM_RMSNORM ? 1 : 2) * D(tf->hidden);
}

static double attn_params(const st_transformer *tf)
{
    double q = D(tf->heads * tf->head_dim), kv = D(tf->kv_heads * tf->head_dim);
    double w = D(tf->hidden) * (q + 2 * kv) + q * D(tf->hidden);
    double b = tf->bias ? q + 2 * kv + D(tf->hidden) : 0;
    return w + b + norm_params(tf);
}

static double mlp_params(const st_transformer *tf, double f)
{
    double mats = tf->gated_mlp ? 3 : 2;
    double b = tf->bias ? (tf->gated_mlp ? 2 : 1) * f + D(tf->hidden) : 0;
    return mats * D(tf->hidden) * f + b;
}

static double block_params(const st_transformer *tf, int moe, int cross)
{
    double p = attn_params(tf) * (cross ? 2 : 1) + norm_params(tf);
    if (moe)
        p += D(tf->experts) * mlp_params(tf, D(tf->expert_ffn_hidden)) +
             D(tf->hidden) * D(tf->experts);
    else
        p += mlp_params(tf, D(tf->ffn_hidden));
    return p;
}

long long st_transformer_embed_width(const st_transformer *tf)
{
    return tf->embed_dim > 0 ? tf->embed_dim : tf->hidden;
}

double st_transformer_kv_bytes(const st_transformer *tf, double tokens, double es)
{
    return 2.0 * tokens * (double)tf->kv_heads * (double)tf->head_dim * es;
}

double st_transformer_block_params(const st_transformer *tf, int moe, double *experts)
{
    if (experts)
        *experts = moe ? D(tf->experts) * mlp_params(tf, D(tf->expert_ffn_hidden)) : 0;
    return block_params(tf, moe, 0);
}

static double stack_params(const st_transformer *tf, long long count, int cross)
{
    long long n_moe = tf->experts > 0 ? count / tf->moe_every : 0;
    return D(count - n_moe) * block_params(tf, 0, cross) + D(n_moe) * block_params(tf, 1, cross);
}

static double embedding_params(const st_transformer *tf)
{
    double ed = D(st_transformer_embed_width(tf));
    double p = D(tf->vocab) * ed;
    if (tf->position == ST_POS_LEARNED)
        p += D(tf->max_seq) * D(tf->hidden);
    if (tf->lm_head && !tf->tied_embeddings)
        p += D(tf->vocab) * ed;
    if (ed != D(tf->hidden)) /* project_in and project_out, no bias (OPT) */
        p += 2 * ed * D(tf->hidden);
    return p;
}

static double transformer_params_non_embedding(const st_transformer *tf)
{
    double p = stack_params(tf, tf->layers, tf->encoder_layers > 0) +
               stack_params(tf, tf->encoder_layers, 0) + norm_params(tf);
    if (tf->encoder_layers > 0)
        p += norm_params(tf); /* encoder final norm */
    if (!tf->pre_norm)
        p += norm_params(tf); /* post-norm models normalise the embeddings */
    if (tf->lm_head && !tf->causal) /* MLM transform: dense + bias + norm; decoder bias */
        p += D(tf->hidden) * D(tf->hidden) + D(tf->hidden) + norm_params(tf) +
             (tf->bias ? D(tf->vocab) : 0);
    /* encoders: pooler and classifier, with biases (BERT); causal models:
     * a score layer without bias on the embedding's width (Hugging Face's
     * GPT2-, Llama- and OPTForSequenceClassification: bias=False) */
    if (!tf->lm_head && tf->num_labels > 0)
        p += tf->causal ? D(st_transformer_embed_width(tf)) * D(tf->num_labels)
                        : D(tf->hidden) * D(tf->hidden) + D(tf->hidden) + D(tf->hidden) * D(tf->num_labels) +
                              D(tf->num_labels);
    return p;
}

double st_transformer_params_other(const st_transformer *tf)
{
    return transformer_params_non_embedding(tf) - stack_params(tf, tf->layers, tf->encoder_layers > 0) -
           stack_params(tf, tf->encoder_layers, 0);
}

double st_model_params_expert(const st_model *m)
{
    if (m->kind != ST_MODEL_TRANSFORMER || m->tf.experts <= 0)
        return 0;
    const st_transformer *tf = &m->tf;
    long long moe = tf->layers / tf->moe_every + tf->encoder_layers / tf->moe_every;
    return D(moe) * D(tf->experts) * mlp_params(tf, D(tf->expert_ffn_hidden));
}

void st_transformer_shard(st_transformer *tf, int tp, int ep)
{
    tf->heads /= tp;
    tf->kv_heads = tf->kv_heads >= tp ? tf->kv_heads / tp : 1;
    tf->ffn_hidden = (tf->ffn_hidden + tp - 1) / tp;
    tf->expert_ffn_hidden = (tf->expert_ffn_hidden + tp - 1) / tp;
    tf->vocab = (tf->vocab + tp - 1) / tp;
    if (tf->experts)
        tf->experts /= ep;
}

double st_model_params_non_embedding(const st_model *m)
{
    if (m->kind == ST_MODEL_TRANSFORMER)
        return transformer_params_non_embedding(&m->tf);
    return st_model_params(m);
}

double st_model_params(const st_model *m)
{
    if (m->kind == ST_MODEL_TRANSFORMER)
        return transformer_params_non_embedding(&m->tf) + embedding_params(&m->tf);
    return st_cnn_params(m);
}
