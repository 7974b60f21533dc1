/* Operator lists and the cost (FLOPs, compulsory bytes) of one operator. */
#include "config.h"
#include "workload/workload.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define D(x) ((double)(x))

static const char *const op_kind_names[ST_OP_KIND_COUNT] = {
    "gemm", "bmm", "conv", "attention", "softmax", "layernorm", "rmsnorm", "groupnorm",
    "batchnorm", "elementwise", "embedding", "pool", "rope", "moe_router", "moe_experts",
    "optimizer",
};

const char *st_op_kind_name(st_op_kind k)
{
    return (k >= 0 && k < ST_OP_KIND_COUNT) ? op_kind_names[k] : "?";
}

const char *st_pass_name(st_pass p)
{
    switch (p) {
    case ST_PASS_FWD: return "fwd";
    case ST_PASS_BWD: return "bwd";
    case ST_PASS_OPT: return "opt";
    }
    return "?";
}

static const char *const phase_names[] = {"prefill", "decode", "train"};

const char *st_phase_name(st_phase p)
{
    return (p >= 0 && p <= ST_PHASE_TRAIN) ? phase_names[p] : "?";
}

/* the index of s in names[0..n) (case-insensitive), or -1 */
static int name_index(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

int st_phase_parse(const char *s, st_phase *out)
{
    int i = name_index(s, phase_names, ST_PHASE_TRAIN + 1);
    if (i < 0)
        return ST_EINVAL;
    *out = (st_phase)i;
    return 0;
}

static const char *const attn_names[] = {"eager", "flash", "flash3"};

const char *st_attn_name(st_attn_impl a)
{
    return (a >= 0 && a <= ST_ATTN_FLASH3) ? attn_names[a] : "?";
}

int st_attn_parse(const char *s, st_attn_impl *out)
{
    int i = name_index(s, attn_names, ST_ATTN_FLASH3 + 1);
    if (i < 0)
        return ST_EINVAL;
    *out = (st_attn_impl)i;
    return 0;
}

const char *st_act_name(st_act a)
{
    static const char *const n[] = {"none", "relu", "relu6", "gelu", "gelu_tanh", "silu"};
    return (a >= 0 && a <= ST_ACT_SILU) ? n[a] : "?";
}

/* FLOPs per element of each activation, counted as the arithmetic a kernel
 * performs: relu = max; relu6 = max, min; silu = x / (1 + exp(-x)): neg, exp,
 * add, div; gelu (erf) = 0.5 x (1 + erf(x / sqrt 2)): div, erf, add, mul, mul;
 * gelu_tanh: x^3 (2), mul, add, mul, tanh, add, mul, mul = 9. */
double st_act_flops(st_act a)
{
    switch (a) {
    case ST_ACT_NONE: return 0;
    case ST_ACT_RELU: return 1;
    case ST_ACT_RELU6: return 2;
    case ST_ACT_SILU: return 4;
    case ST_ACT_GELU: return 5;
    case ST_ACT_GELU_TANH: return 9;
    }
    return 0;
}

const char *st_norm_name(st_norm x) { return x == ST_NORM_RMSNORM ? "rmsnorm" : "layernorm"; }

const char *st_pos_name(st_pos p)
{
    static const char *const n[] = {"learned", "rope", "relative", "alibi", "sinusoidal"};
    return (p >= 0 && p <= ST_POS_SINUSOIDAL) ? n[p] : "?";
}

/* Unmasked (query, key) pairs of one head: causal attention of q_len new
 * tokens against kv_len keys, the last q_len of which are the new ones. */
static double attention_pairs(const st_op *op)
{
    double q = D(op->q_len), kv = D(op->kv_len);
    if (!op->causal)
        return q * kv;
    return q * (kv - q) + q * (q + 1) / 2;
}

/* FLOPs per element of the vector ops, counted as the arithmetic a kernel
 * performs: softmax = max, subtract, exp, sum, divide; layer norm = mean,
 * variance (sub, square, add), normalize (sub, mul), scale, shift; RMS norm =
 * square, add, mul, scale; inference batch norm = scale, shift; RoPE =
 * x*cos + rot(x)*sin (mul, mul, add); MoE router = softmax (5) + one compare
 * for top-k; AdamW per parameter (Loshchilov & Hutter 2019, Alg. 2, bias
 * corrections folded into the step size) = m = b1 m + (1-b1) g (mul, mul,
 * add), v = b2 v + (1-b2) g^2 (square, mul, mul, add), m / (sqrt(v) + eps)
 * (sqrt, add, div), p -= lr (that + wd p) (mul, add, mul, sub) = 14. */
enum { SOFTMAX_FLOPS = 5, LAYERNORM_FLOPS = 8, RMSNORM_FLOPS = 4, BATCHNORM_FLOPS = 2,
       ROPE_FLOPS = 3, ROUTER_FLOPS = 6, ADAMW_FLOPS = 14 };

void st_op_cost(st_op *op)
{
    double e = st_dtype_bytes(op->dtype);
    double elems = D(op->rows) * D(op->cols);
    int bwd = op->pass == ST_PASS_BWD;
    op->flops = op->bytes_read = op->bytes_written = 0;

    switch (op->kind) {
    case ST_OP_GEMM:
    case ST_OP_BMM:
    case ST_OP_MOE_EXPERTS: {
        /* Backward GEMMs are stored already transposed (dgrad: m x n . n x k,
         * wgrad: k x m . m x n), so one formula serves all passes. */
        double b = D(op->batch > 0 ? op->batch : 1);
        double a_elems = b * D(op->m) * D(op->k);
        double b_elems = (op->kind == ST_OP_GEMM ? 1 : b) * D(op->k) * D(op->n);
        op->flops = 2 * b * D(op->m) * D(op->n) * D(op->k);
        op->bytes_read = (a_elems + b_elems) * e;
        op->bytes_written = b * D(op->m) * D(op->n) * e;
        break;
    }
    case ST_OP_CONV: {
        double cg = D(op->c) / D(op->groups > 0 ? op->groups : 1);
        double in = D(op->batch) * D(op->c) * D(op->h) * D(op->w);
        double out = D(op->batch) * D(op->k_out) * D(op->p) * D(op->q);
        double wts = D(op->k_out) * cg * D(op->r) * D(op->s);
        op->flops = 2 * out * cg * D(op->r) * D(op->s);
        if (op->grad == ST_GRAD_DATA) { /* dx = conv_transpose(dy, W) */
            op->bytes_read = (out + wts) * e;
            op->bytes_written = in * e;
        } else if (op->grad == ST_GRAD_WEIGHT) { /* dW = corr(x, dy) */
            op->bytes_read = (in + out) * e;
            op->bytes_written = wts * e;
        } else {
            op->bytes_read = (in + wts) * e;
            op->bytes_written = out * e;
        }
        break;
    }
    case ST_OP_ATTENTION: {
        double pairs = attention_pairs(op);
        double q = D(op->batch) * D(op->heads) * D(op->q_len) * D(op->head_dim);
        double kv = 2 * D(op->batch) * D(op->kv_heads) * D(op->kv_len) * D(op->head_dim);
        /* Forward: S = QK^T and O = PV, 2 FLOPs per MAC each. Backward
         * (FlashAttention-2): recompute S, then dV, dP, dQ, dK: 5 matmuls. */
        op->flops = (bwd ? 10 : 4) * D(op->batch) * D(op->heads) * pairs * D(op->head_dim);
        if (bwd) { /* read Q, K, V, O, dO; write dQ, dK, dV */
            op->bytes_read = (3 * q + kv) * e;
            op->bytes_written = (q + kv) * e;
        } else {
            op->bytes_read = (q + kv) * e;
            op->bytes_written = q * e;
        }
        break;
    }
    case ST_OP_SOFTMAX:
        op->flops = (bwd ? 4 : SOFTMAX_FLOPS) * elems; /* bwd: y * (dy - sum(dy*y)) */
        op->bytes_read = (bwd ? 2 : 1) * elems * e;
        op->bytes_written = elems * e;
        break;
    case ST_OP_LAYERNORM:
    case ST_OP_RMSNORM:
    case ST_OP_GROUPNORM:
    case ST_OP_BATCHNORM: {
        double per = op->kind == ST_OP_RMSNORM ? RMSNORM_FLOPS
                   : op->kind == ST_OP_BATCHNORM ? BATCHNORM_FLOPS : LAYERNORM_FLOPS;
        int nparams = op->kind == ST_OP_RMSNORM ? 1 : 2;
        double params = nparams * D(op->kind == ST_OP_GROUPNORM || op->kind == ST_OP_BATCHNORM
                                        ? op->c : op->cols);
        if (bwd && op->grad == ST_GRAD_WEIGHT) {
            /* layer/RMS norm's parameter gradients (a second kernel): a
             * multiply-add per parameter per element over dy and x */
            op->flops = 2.0 * nparams * elems;
            op->bytes_read = 2 * elems * e;
            op->bytes_written = params * e;
            break;
        }
        if (bwd && (op->kind == ST_OP_LAYERNORM || op->kind == ST_OP_RMSNORM)) {
            /* dx: the forward's work again over dy, x and the weight
             * (gamma; a layer norm's beta does not enter dx) */
            op->flops = per * elems;
            op->bytes_read = (2 * elems + D(op->cols)) * e;
            op->bytes_written = elems * e;
            break;
        }
        /* Backward (group and batch norm): dx and the parameter gradients
         * in one pass, about twice the work. */
        op->flops = (bwd ? 2 : 1) * per * elems;
        op->bytes_read = ((bwd ? 2 : 1) * elems + params) * e;
        op->bytes_written = (elems + (bwd ? params : 0)) * e;
        break;
    }
    case ST_OP_ELEMENTWISE: {
        int arity = op->arity > 0 ? op->arity : 1;
        double share = op->read_share > 0 ? op->read_share : 1;
        op->flops = op->ew_flops * elems;
        if (bwd) { /* read the inputs and dy; write one gradient per input */
            op->bytes_read = (op->grad_no_input ? 1 : arity * share + 1) * elems * e + op->aux_bytes * elems;
            op->bytes_written = arity * share * elems * e;
        } else {
            op->bytes_read = arity * share * elems * e;
            op->bytes_written = elems * e + op->aux_bytes * elems;
        }
        break;
    }
    case ST_OP_EMBEDDING:
        if (bwd) { /* scatter-add dy into the touched rows of dW */
            op->flops = elems;
            op->bytes_read = elems * e + D(op->rows) * 8;
            op->bytes_written = elems * e;
        } else { /* gather: token ids (int64) in, rows out */
            op->bytes_read = elems * e + D(op->rows) * 8;
            op->bytes_written = elems * e;
        }
        break;
    case ST_OP_POOL: {
        double in = D(op->batch) * D(op->c) * D(op->h) * D(op->w);
        double out = D(op->batch) * D(op->c) * D(op->p) * D(op->q);
        op->flops = out * D(op->r) * D(op->s);
        op->bytes_read = (bwd ? out : in) * e;
        op->bytes_written = (bwd ? in : out) * e;
        break;
    }
    case ST_OP_ROPE:
        op->flops = ROPE_FLOPS * elems;
        op->bytes_read = elems * e + 2 * D(op->rows) * D(op->head_dim) * e; /* + cos, sin */
        op->bytes_written = elems * e;
        break;
    case ST_OP_MOE_ROUTER:
        /* softmax over the expert logits and top-k selection per token */
        op->flops = ROUTER_FLOPS * elems;
        op->bytes_read = elems * e;
        op->bytes_written = D(op->rows) * D(op->k) * (e + 4); /* weights + int32 ids */
        break;
    case ST_OP_OPTIMIZER: {
        /* AdamW over rows parameters: fp32 master weight, m and v, plus the
         * gradient in the training dtype; writes master, m, v and the
         * low-precision weight copy (none when training in fp32). Before
         * it, clip-by-global-norm (the default of Megatron-LM, DeepSpeed
         * and the HF Trainer: max norm 1.0) reads every gradient once more
         * for the norm, 2 FLOPs each; the rescaling pass runs only on steps
         * whose norm exceeds the limit and is not counted. */
        double p = D(op->rows);
        double lowp = op->dtype == ST_FP32 || op->dtype == ST_TF32 ? 0 : e; /* TF32: fp32 storage */
        op->flops = (ADAMW_FLOPS + 2) * p;
        op->bytes_read = p * (12 + e) + p * e;
        op->bytes_written = p * (12 + lowp);
        break;
    }
    case ST_OP_KIND_COUNT:
        break;
    }
}

void st_oplist_free(st_oplist *l)
{
    free(l->ops);
    memset(l, 0, sizeof *l);
}

int st_oplist_push(st_oplist *l, const st_op *op, st_error *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        st_op *ops = realloc(l->ops, cap * sizeof *ops);
        if (!ops)
            return st_error_set(err, ST_ENOMEM, "out of memory building the operator list");
        l->ops = ops;
        l->cap = cap;
    }
    l->ops[l->n++] = *op;
    return 0;
}

double st_oplist_total_flops(const st_oplist *l)
{
    double t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += l->ops[i].flops * D(l->ops[i].repeat);
    return t;
}

double st_oplist_total_bytes(const st_oplist *l)
{
    double t = 0;
    for (size_t i = 0; i < l->n; i++)
        t += (l->ops[i].bytes_read + l->ops[i].bytes_written) * D(l->ops[i].repeat);
    return t;
}

void st_model_free(st_model *m)
{
    if (m && m->kind == ST_MODEL_CNN) {
        free(m->cnn.items);
        m->cnn.items = NULL;
        m->cnn.n_items = 0;
    }
}

/* torch.optim.AdamW's default on CUDA (foreach=None picks the foreach path;
 * torch/optim/adam.py, _multi_tensor_adam with decoupled weight decay): one
 * multi-tensor pass per _foreach_ call over the FP32 parameters p, gradients
 * g and states m, v, and a temporary t: p *= 1 - lr wd (read 1, write 1);
 * lerp m toward g (2, 1); v *= beta2 (1, 1); v += (1 - beta2) g g (2, 1:
 * the same g twice, one DRAM read); t = sqrt(v) (1, 1); t /= bias
 * correction (1, 1); t += eps (1, 1); p -= step m / t (3, 1): 12 reads and
 * 8 writes of 4 bytes, 80 bytes a parameter (the fused step: 32). */
static int foreach_adamw(st_oplist *out, double params, st_error *err)
{
    static const struct {
        const char *name;
        int reads, writes;
    } pass[] = {{"decay", 1, 1}, {"lerp_m", 2, 1}, {"scale_v", 1, 1}, {"addcmul_v", 2, 1},
                {"sqrt", 1, 1},  {"div", 1, 1},    {"add_eps", 1, 1}, {"addcdiv_p", 3, 1}};
    for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "adamw.%s", pass[i].name);
        st_op op = st_op_new("optimizer", name, ST_OP_ELEMENTWISE, ST_FP32, 1, 0);
        op.pass = ST_PASS_OPT;
        op.rows = 1;
        op.cols = (long long)params;
        op.arity = pass[i].reads;
        op.ew_flops = 1;
        op.flops = params;
        op.bytes_read = 4.0 * pass[i].reads * params;
        op.bytes_written = 4.0 * pass[i].writes * params;
        int rc = st_oplist_push(out, &op, err);
        if (rc)
            return rc;
    }
    return 0;
}

int st_gen_refusal(const st_model *m, st_phase phase, int seq, int kv, int attn, const char *pre, char *buf,
                   size_t n)
{
    if (m->kind != ST_MODEL_TRANSFORMER && (seq || kv || attn)) {
        snprintf(buf, n, "%s%s applies to transformer workloads; %s is a CNN (its input size is in its file, "
                 "%sbatch sets the images)", pre, seq ? "seq" : kv ? "kv" : "attn", m->id, pre);
        return 1;
    }
    if (kv && phase != ST_PHASE_DECODE) {
        snprintf(buf, n, "%skv applies to %sphase decode (the cached tokens); %s processes %sseq tokens per "
                 "sequence", pre, pre, st_phase_name(phase), pre);
        return 1;
    }
    /* an encoder-decoder's decode has two lengths: seq the encoder's input,
     * kv the decoder's cache; elsewhere they name the same one */
    if (kv && seq && !(m->kind == ST_MODEL_TRANSFORMER && m->tf.encoder_layers > 0)) {
        snprintf(buf, n, "%sseq and %skv both set decode's context: %skv L is the cached tokens, %sseq S alone "
                 "means %skv S-1; give one of them", pre, pre, pre, pre, pre);
        return 1;
    }
    return 0;
}

void st_gen_opts_default(st_gen_opts *o, const st_model *m)
{
    memset(o, 0, sizeof *o);
    o->phase = ST_PHASE_PREFILL;
    o->batch = 1;
    o->seq = 2048;
    if (m && m->kind == ST_MODEL_TRANSFORMER && m->tf.max_seq > 0 && m->tf.max_seq < o->seq)
        o->seq = m->tf.max_seq;
    o->kv_len = 0;
    o->dtype = m ? m->dtype : ST_BF16;
    o->attn = ST_ATTN_EAGER;
    o->logits_all = 1;
    o->with_optimizer = 1;
}

int st_model_ops(const st_model *m, const st_gen_opts *o, st_oplist *out, st_error *err)
{
    int rc;
    if (o->batch < 1 || o->batch > 1000000)
        return st_error_set(err, ST_EINVAL, "batch must be between 1 and 1000000, got %lld",
                            o->batch);
    if (o->phase == ST_PHASE_TRAIN && (o->dtype == ST_INT8 || o->dtype == ST_INT4))
        return st_error_set(err, ST_EINVAL,
                            "a training step computes in fp32, tf32, fp16, bf16 or fp8, not %s "
                            "(integer formats are for inference)",
                            st_dtype_name(o->dtype));
    if (st_model_params(m) > ST_MAX_ELEMENTS)
        return st_error_set(err, ST_EINVAL,
                            "%s%s%s has %.3g parameters; strata counts up to 2^53 = 9.0e15: make the "
                            "model smaller",
                            m->path[0] ? m->path : "", m->path[0] ? ": " : "", m->id, st_model_params(m));
    /* FP8 on a transformer is the Transformer Engine recipe that train and
     * serve's --quant fp8 model: the blocks' GEMMs in FP8, each input cast
     * from BF16; attention, norms, elementwise work, the LM head and the
     * optimizer stay in BF16 (their tensors were priced at one byte before).
     * INT8 is W8A8 as serve's --quant w8a8 models it (SmoothQuant): the
     * blocks' GEMMs in INT8, each input quantised from FP16, everything else
     * in FP16 (no attention kernel takes INT8; it was priced at the INT8
     * tensor rate before) */
    int fp8 = m->kind == ST_MODEL_TRANSFORMER && (o->dtype == ST_FP8 || o->dtype == ST_INT8);
    st_dtype low = o->dtype, high = o->dtype == ST_INT8 ? ST_FP16 : ST_BF16;
    st_gen_opts go = *o;
    if (fp8)
        go.dtype = high;
    rc = m->kind == ST_MODEL_TRANSFORMER ? st_transformer_ops(m, &go, out, err)
                                         : st_cnn_ops(m, o, out, err);
    for (size_t i = 0, n = out->n; fp8 && rc == 0 && i < n; i++) {
        st_op *op = &out->ops[i];
        if ((op->kind != ST_OP_GEMM && op->kind != ST_OP_MOE_EXPERTS) || !strstr(op->layer, "block"))
            continue;
        op->dtype = low;
        st_op_cost(op);
        st_op cast = st_op_input_cast(op, high);
        rc = st_oplist_push(out, &cast, err);
    }
    if (rc == 0 && o->phase == ST_PHASE_TRAIN) {
        size_t n_fwd = out->n;
        rc = st_ops_add_backward(out, n_fwd, o->accumulate_grads, err);
        /* a tied word embedding gets two gradients (the LM head's and the
         * embedding's); autograd sums them before accumulating, one add over
         * the table (with accumulation the two adds are already there) */
        if (rc == 0 && !o->accumulate_grads && m->kind == ST_MODEL_TRANSFORMER && m->tf.tied_embeddings &&
            m->tf.lm_head) {
            double t = (double)m->tf.vocab * (double)st_transformer_embed_width(&m->tf);
            st_op sum = st_op_new("embed", "tokens.tied_sum", ST_OP_ELEMENTWISE,
                                  st_dtype_bytes(go.dtype) < 2 ? ST_BF16 : go.dtype, 1, 0);
            sum.pass = ST_PASS_BWD;
            sum.grad = ST_GRAD_WEIGHT;
            sum.rows = 1;
            sum.cols = (long long)t;
            sum.arity = 2;
            sum.ew_flops = 1;
            sum.flops = t;
            sum.bytes_read = 2 * t * st_dtype_bytes(sum.dtype);
            sum.bytes_written = t * st_dtype_bytes(sum.dtype);
            rc = st_oplist_push(out, &sum, err);
        }
        if (rc == 0 && o->with_optimizer && o->optim_foreach) {
            rc = foreach_adamw(out, st_model_params(m), err);
        } else if (rc == 0 && o->with_optimizer) {
            st_op opt;
            memset(&opt, 0, sizeof opt);
            snprintf(opt.name, sizeof opt.name, "optimizer.adamw");
            snprintf(opt.layer, sizeof opt.layer, "optimizer");
            opt.kind = ST_OP_OPTIMIZER;
            opt.pass = ST_PASS_OPT;
            opt.dtype = fp8 ? high : o->dtype;
            opt.repeat = 1;
            opt.rows = (long long)st_model_params(m);
            opt.cols = 1;
            st_op_cost(&opt);
            rc = st_oplist_push(out, &opt, err);
        }
    }
    if (rc != 0)
        st_oplist_free(out);
    return rc;
}

st_op st_op_new(const char *layer, const char *name, st_op_kind kind, st_dtype dtype,
                long long repeat, long long batch)
{
    st_op op;
    memset(&op, 0, sizeof op);
    snprintf(op.name, sizeof op.name, "%s.%s", layer, name);
    snprintf(op.layer, sizeof op.layer, "%s", layer);
    op.kind = kind;
    op.pass = ST_PASS_FWD;
    op.dtype = dtype;
    op.repeat = repeat;
    op.batch = batch;
    return op;
}

st_op st_op_input_cast(const st_op *gemm, st_dtype from)
{
    st_op cast = *gemm;
    memset(&cast.batch, 0, sizeof cast - offsetof(st_op, batch));
    snprintf(cast.name, sizeof cast.name, "%.55s.cast", gemm->name);
    cast.kind = ST_OP_ELEMENTWISE;
    cast.dtype = from;
    cast.rows = gemm->m * (gemm->batch > 0 ? gemm->batch : 1);
    cast.cols = gemm->k;
    cast.arity = 1;
    cast.ew_flops = 2;
    st_op_cost(&cast);
    /* read at `from`, written at the GEMM's width */
    cast.bytes_written *= st_dtype_bytes(gemm->dtype) / st_dtype_bytes(from);
    return cast;
}
