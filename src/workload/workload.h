/*
 * workload: models as descriptions, and the operator lists generated from them.
 *
 * A transformer (dense or MoE; MHA, GQA or MQA; gated or plain MLP; RoPE,
 * learned, relative or ALiBi positions; pre or post norm; encoder-only,
 * decoder-only or encoder-decoder) or a CNN (a layer list with ResNet,
 * MobileNet-V2 and diffusion-UNet blocks) is turned, for one phase (prefill,
 * decode against a KV length, training forward + backward + optimizer), a
 * batch and a sequence length, into a list of operators: kind, shape, dtype,
 * FLOPs, bytes read and written (compulsory traffic: each input read once,
 * each output written once), and a repeat count (the ops of one transformer
 * block appear once with repeat = number of blocks).
 *
 * FLOP convention: a multiply-add is 2 FLOPs. Unfused ("eager") attention
 * computes the full S x S score matrix, causal or not, as a Hugging Face
 * forward does; the fused kind (FlashAttention) counts only the unmasked
 * half for causal prefill. The LM head runs on every position by default.
 * Checked against hand counts in tests/test_workload.c.
 */
#ifndef STRATA_WORKLOAD_H
#define STRATA_WORKLOAD_H

#include "core/core.h"
#include "hw/hw.h"

/* ---- model descriptions --------------------------------------------------- */
typedef enum st_act { ST_ACT_NONE = 0, ST_ACT_RELU, ST_ACT_RELU6, ST_ACT_GELU, ST_ACT_GELU_TANH, ST_ACT_SILU } st_act;
typedef enum st_norm { ST_NORM_LAYERNORM = 0, ST_NORM_RMSNORM } st_norm;
typedef enum st_pos { ST_POS_LEARNED = 0, ST_POS_ROPE, ST_POS_RELATIVE, ST_POS_ALIBI, ST_POS_SINUSOIDAL } st_pos;

const char *st_act_name(st_act a);
double st_act_flops(st_act a); /* FLOPs per element */
const char *st_norm_name(st_norm n);
const char *st_pos_name(st_pos p);

typedef struct st_transformer {
    long long hidden, layers, encoder_layers, heads, kv_heads, head_dim;
    long long ffn_hidden, vocab, max_seq;
    st_act activation;
    int gated_mlp;
    st_norm norm;
    int pre_norm; /* 1: pre-norm, 0: post-norm */
    /* attention and MLP side by side on the block's input (GPT-J, GPT-NeoX,
     * Falcon, PaLM): ST_PAR_NONE in sequence; ST_PAR_TWO_NORMS each with its
     * own norm (GPT-NeoX's use_parallel_residual, Falcon-40B), the same
     * kernels as in sequence; ST_PAR_SHARED_NORM one norm feeding both
     * (GPT-J, Falcon-7B), one norm kernel fewer a block */
    int parallel_block;
    st_pos position;
    int causal, bias, tied_embeddings, lm_head;
    /* > 0: a sequence-classification head over num_labels classes instead
     * of the LM head (lm_head is then 0): bidirectional encoders pool the
     * first token (dense + tanh) and classify one row per sequence (BERT's
     * ForSequenceClassification); causal models score every position
     * (GPT2ForSequenceClassification) */
    long long num_labels;
    long long experts, top_k, moe_every, expert_ffn_hidden; /* experts = 0: dense */
    /* Token-embedding width when it differs from hidden (OPT-350m's
     * word_embed_proj_dim): a project_in GEMM widens the embedding into the
     * blocks and a project_out narrows the final state for the LM head,
     * which is embed_dim x vocab. 0: hidden. */
    long long embed_dim;
    /* Eager attention as the framework's reference code runs it: elementwise
     * passes over the (batch x heads x q x kv) score matrix between the two
     * matmuls, besides the softmax. Unary: a pass whose other operand is a
     * scalar or a small broadcast (GPT-2's scale and causal `where`, BERT's
     * scale and padding-mask add, OPT's clamp, Llama's scale); binary: an
     * add of a second score-sized operand (OPT's and Llama's (B,1,S,S) causal
     * mask repeated over heads, T5's position bias). */
    int score_unary, score_binary;
    /* Of those, the passes whose other operand is a broadcast tensor (the
     * mask: GPT-2's `where`, BERT's (B,1,1,S) add, OPT's and Llama's
     * (B,1,S,S) add over the heads), the last unary and the last binary
     * ones: PyTorch runs them through its non-vectorized elementwise kernel
     * (st_op.scalar_loads). A scale by a scalar stays vectorized. */
    int score_unary_bcast, score_binary_bcast;
    /* The broadcast unary passes are selects (GPT-2's torch.where: the
     * gradient is a select of dy against the mask, a broadcast kernel too)
     * rather than adds (BERT's mask: the gradient is dy itself, no kernel). */
    int score_bcast_select;
    /* Of the eager attention's inputs Q, K and V, how many are copied
     * head-major before their products (0-3). Hugging Face's modeling code
     * views the projections as (batch, heads, seq, dim) by a permute, and
     * torch.matmul's reshape to (batch x heads, seq, dim) cannot merge
     * batch and heads in that view, so it copies (a strided source: the
     * non-vectorized copy kernel); OPT calls .contiguous() on them itself.
     * Megatron-LM's (seq, batch, heads, dim) layout needs none. The
     * gradient of such a copy is a reshape (no kernel), but the
     * projection's gradient assembles dQ, dK and dV token-major again (a
     * cat or a reshape of permuted tensors): one copy of each. Under
     * grouped-query attention K and V are repeat_kv's expansion to every
     * head. With one query per sequence (decode) Q's size-1 sequence
     * merges and a contiguous cache needs no copy, but repeat_kv still
     * expands the cache, and T5's cross-attention cache (the permuted view)
     * is copied (src/workload/transformer.c, attention_core). */
    int head_copies;
    /* Dropout probabilities in training (0: no dropout kernels): on hidden
     * states (after the embedding, attention output and MLP) and on the
     * attention probabilities (eager attention only). */
    double hidden_dropout, attn_dropout;
    /* the embedding's own dropout (GPT-2's embd_pdrop) where the source
     * gives one (embed_dropout_set); else hidden_dropout applies there */
    double embed_dropout;
    int embed_dropout_set;
    /* The MLP activation as the framework's eager code runs it, in
     * elementwise kernels: 0/0 = one kernel (and one gradient kernel), as
     * torch's fused gelu, relu and silu. Otherwise the unary (a tensor and
     * scalars) and binary (two tensors) kernels of its composition and of
     * autograd's backward through it, accumulation of the input's gradient
     * included (Hugging Face's NewGELUActivation: 6 + 2 forward, 5 + 6
     * backward; see load_hf.c). */
    int act_unary, act_binary, act_grad_unary, act_grad_binary;
} st_transformer;

typedef enum st_cnn_item_kind {
    ST_CNN_CONV = 0, ST_CNN_DWCONV, ST_CNN_FC, ST_CNN_MAXPOOL, ST_CNN_AVGPOOL,
    ST_CNN_GLOBAL_AVGPOOL, ST_CNN_BATCHNORM, ST_CNN_GROUPNORM, ST_CNN_ACT, ST_CNN_UPSAMPLE_OP,
    ST_CNN_BOTTLENECK, ST_CNN_BASIC, ST_CNN_INVERTED_RESIDUAL, ST_CNN_RESBLOCK,
    ST_CNN_SPATIAL_TRANSFORMER, ST_CNN_DOWNSAMPLE, ST_CNN_UPSAMPLE,
    ST_CNN_ITEM_KIND_COUNT
} st_cnn_item_kind;

typedef struct st_cnn_item {
    st_cnn_item_kind kind;
    char name[48];
    long long repeat;
    long long in;  /* 0: current channels */
    long long out; /* 0: keep channels */
    long long kernel, stride, pad, groups; /* pad < 0: kernel/2 */
    long long mid, expand, heads, head_dim, depth, temb_dim, factor;
    int bn;
    st_act act;
    int line, col; /* source position, for error messages */
} st_cnn_item;

typedef struct st_cnn {
    long long in_channels, in_h, in_w;
    long long context_tokens, context_dim;
    size_t n_items;
    st_cnn_item *items; /* owned */
} st_cnn;

enum { ST_PAR_NONE = 0, ST_PAR_TWO_NORMS, ST_PAR_SHARED_NORM };

typedef enum st_model_kind { ST_MODEL_TRANSFORMER = 0, ST_MODEL_CNN } st_model_kind;

typedef struct st_model {
    char id[ST_ID_MAX];
    char name[ST_NAME_MAX];
    char path[512];
    st_model_kind kind;
    st_dtype dtype;
    st_transformer tf; /* when kind == ST_MODEL_TRANSFORMER */
    st_cnn cnn;        /* when kind == ST_MODEL_CNN */
} st_model;

void st_model_free(st_model *m);
/* Parameters in total and outside embeddings/LM head (0 on bad model). */
double st_model_params(const st_model *m);
double st_model_params_non_embedding(const st_model *m);
/* A transformer's parameters outside its blocks and its embedding/head
 * matrices: the final norms (and a post-norm model's embedding norm), an
 * MLM head's transform, a classifier. */
double st_transformer_params_other(const st_transformer *tf);
/* Parameters of the routed experts (0 for dense models). */
double st_model_params_expert(const st_model *m);
/* Parameters of one decoder block (moe: a block with routed experts);
 * *experts, when given, gets the routed experts' MLP share of it (0 for a
 * dense block): the part expert parallelism divides, while attention, the
 * norms and the router stay whole on every EP rank. */
double st_transformer_block_params(const st_transformer *tf, int moe, double *experts);
/* Bytes of K and V that `tokens` tokens keep in one block's cache, at es
 * bytes an element (the serving KV cache, eval's memory) */
double st_transformer_kv_bytes(const st_transformer *tf, double tokens, double es);
/* The token embedding's width: embed_dim when set, else hidden. */
long long st_transformer_embed_width(const st_transformer *tf);
/* Shard a transformer the way Megatron-LM / vLLM do for tensor parallelism
 * tp (heads, KV heads (replicated below tp), MLP hidden, vocabulary) and
 * expert parallelism ep (experts). Divisibility is the caller's check. */
void st_transformer_shard(st_transformer *tf, int tp, int ep);
/* Parameters of a CNN model (weights, biases, norm scales and shifts). */
double st_cnn_params(const st_model *m);

/* ---- operators ------------------------------------------------------------ */
typedef enum st_op_kind {
    ST_OP_GEMM = 0,   /* activations x weights (linear layers) */
    ST_OP_BMM,        /* batched activations x activations */
    ST_OP_CONV,
    ST_OP_ATTENTION,  /* fused (FlashAttention-style) */
    ST_OP_SOFTMAX,
    ST_OP_LAYERNORM,
    ST_OP_RMSNORM,
    ST_OP_GROUPNORM,
    ST_OP_BATCHNORM,
    ST_OP_ELEMENTWISE,
    ST_OP_EMBEDDING,
    ST_OP_POOL,
    ST_OP_ROPE,
    ST_OP_MOE_ROUTER, /* gate logits softmax + top-k */
    ST_OP_MOE_EXPERTS,/* grouped expert GEMM */
    ST_OP_OPTIMIZER,
    ST_OP_KIND_COUNT
} st_op_kind;
const char *st_op_kind_name(st_op_kind k);

typedef enum st_pass { ST_PASS_FWD = 0, ST_PASS_BWD, ST_PASS_OPT } st_pass;
const char *st_pass_name(st_pass p);

typedef enum st_grad { ST_GRAD_NONE = 0, ST_GRAD_DATA, ST_GRAD_WEIGHT } st_grad;

typedef struct st_op {
    char name[64];  /* e.g. "block.attn.qkv" */
    char layer[48]; /* e.g. "block", "embed", "head", "layer2.0" */
    st_op_kind kind;
    st_pass pass;
    st_dtype dtype;
    long long repeat;
    /* Shape. GEMM/BMM/MOE_EXPERTS: batch x (m x k) . (k x n).
     * CONV: n, c (in), k_out, h, w (input), r, s, stride, pad, groups, p, q.
     * ATTENTION: batch, heads, kv_heads, q_len, kv_len, head_dim, causal.
     * Vector ops (softmax, norms, elementwise, rope, pool, embedding): rows x cols. */
    long long batch, m, n, k;
    long long c, k_out, h, w, r, s, stride, pad, groups, p, q;
    long long heads, kv_heads, q_len, kv_len, head_dim;
    int causal;
    int fa3;         /* ATTENTION: FlashAttention-3's kernel (else FlashAttention-2's) */
    long long rows, cols;
    int arity;       /* elementwise inputs (1 unary, 2 binary) */
    double ew_flops; /* elementwise: FLOPs per output element */
    st_grad grad;    /* backward ops: which gradient this op computes */
    int no_dgrad;    /* forward op whose input needs no gradient (model input) */
    int passthrough; /* no backward kernel of its own: an add (its gradient is dy
                        itself), or a later kernel of a composition whose first op
                        carries the composition's gradient kernels */
    int grad_no_input; /* elementwise: the gradient needs dy only (scale, mask select, dropout) */
    /* elementwise: operands PyTorch's non-vectorized kernel loads per element
     * (elementwise_kernel<128, vt>, taken when an operand is broadcast or
     * strided: a mask over the score matrix, a permuted copy), one element
     * per thread per load and store; priced as memory instructions
     * (st_kernel.mem_requests). 0: the vectorized kernel. */
    int scalar_loads;
    int layout_copy;   /* elementwise: a permuted view made contiguous (a head-major
                          split or merge); compiled mode keeps it a kernel of its own */
    double aux_bytes;  /* elementwise: bytes per element written forward and read by the
                          gradient besides the tensors (dropout's keep mask, one byte) */
    double read_share; /* elementwise: input elements per output element (0: 1); a
                          broadcast copy reads fewer (Hugging Face's repeat_kv: kv_heads
                          over heads), and its gradient sums back into that many */
    int grad_unary, grad_binary; /* elementwise: the gradient runs this many unary and
                                    binary kernels instead of one (a composed activation) */
    int weight_int4; /* GEMM: weights stored in INT4 and dequantised (W4A16) */
    int bias;        /* GEMM, CONV: adds a bias (n, or k_out channels); its gradient is a
                        sum of dy over the rows (pixels), a kernel of its own in backward
                        (PyTorch's addmm / Linear, convolution_backward) */
    int launch_only; /* a further kernel of the previous op's framework call (one
                        dispatch, two launches): the host pays the launch alone */
    st_act act;      /* elementwise: the activation it applies (ST_ACT_NONE: not one) */
    /* Per call (one repeat). */
    double flops;
    double bytes_read, bytes_written;
} st_op;

typedef struct st_oplist {
    size_t n, cap;
    st_op *ops;
} st_oplist;

/* A forward op named LAYER.NAME with everything else zero. */
st_op st_op_new(const char *layer, const char *name, st_op_kind kind, st_dtype dtype,
                long long repeat, long long batch);
void st_oplist_free(st_oplist *l);
/* Append a copy; ST_ENOMEM on failure. */
int st_oplist_push(st_oplist *l, const st_op *op, st_error *err);
double st_oplist_total_flops(const st_oplist *l);
/* The cast that feeds a low-precision GEMM (FP8, INT8): its input, read in
 * `from` and written at the GEMM's dtype, as an elementwise op. */
st_op st_op_input_cast(const st_op *gemm, st_dtype from);
double st_oplist_total_bytes(const st_oplist *l);

/* ---- generation ----------------------------------------------------------- */
typedef enum st_phase { ST_PHASE_PREFILL = 0, ST_PHASE_DECODE, ST_PHASE_TRAIN } st_phase;
const char *st_phase_name(st_phase p);
int st_phase_parse(const char *s, st_phase *out);

/* Attention as eager PyTorch runs it (the score matrix materialised), or
 * fused: FlashAttention-2 (any GPU with tensor cores), FlashAttention-3
 * (Hopper only; warpgroup MMAs and TMA, twice FA2's rate there) */
typedef enum st_attn_impl { ST_ATTN_EAGER = 0, ST_ATTN_FLASH, ST_ATTN_FLASH3 } st_attn_impl;
const char *st_attn_name(st_attn_impl a);              /* "eager", "flash", "flash3" */
int st_attn_parse(const char *s, st_attn_impl *out);   /* 0, or ST_EINVAL */
#define ST_ATTN_CHOICES "eager, flash or flash3"
static inline int st_attn_fused(st_attn_impl a)
{
    return a == ST_ATTN_FLASH || a == ST_ATTN_FLASH3;
}

typedef struct st_gen_opts {
    st_phase phase;
    long long batch;   /* sequences */
    long long seq;     /* tokens per sequence (prefill/train); ignored in decode */
    long long kv_len;  /* decode: tokens already cached per sequence */
    st_dtype dtype;    /* compute dtype */
    st_attn_impl attn;
    int logits_all;    /* LM head on every position (default) or only the last */
    int with_optimizer;/* train: AdamW step over all parameters */
    /* train: the AdamW step as one fused pass with clip-by-global-norm's
     * read (0: Megatron-LM, DeepSpeed, apex FusedAdam, torch's fused=True)
     * or as torch.optim.AdamW's default foreach implementation (1: eight
     * passes over FP32 state, 80 bytes a parameter, no clipping) */
    int optim_foreach;
    /* train: each parameter's gradient is added into the .grad an earlier
     * backward left (gradients not zeroed between steps, or a later
     * microbatch of gradient accumulation in PyTorch): one add kernel per
     * parameter tensor, as autograd's AccumulateGrad runs it */
    int accumulate_grads;
} st_gen_opts;

/* The largest element count strata handles in one tensor or as a parameter
 * count: 2^53, where doubles stop counting exactly. */
#define ST_MAX_ELEMENTS 9007199254740992.0
/* Workload files' bounds: a size (hidden, ffn_hidden, vocab, max_seq) up
 * to 1e8, far past any real dimension and small enough that products of
 * dimensions stay exact in a double; a count (layers, heads, experts,
 * top-k) up to 100,000. The YAML form and config.json share them. */
#define ST_WL_SIZE_MAX 100000000LL
#define ST_WL_COUNT_MAX 100000LL

/* Defaults: prefill, batch 1, seq 2048, the model's dtype, eager attention,
 * logits on all positions, optimizer on. */
void st_gen_opts_default(st_gen_opts *o, const st_model *m);
/* The shape settings a step of model m refuses, given which were set
 * (seq, kv, attn) and the phase: seq, kv or attn on a CNN, kv outside
 * decode, seq with kv on a model without an encoder. 0 when they apply;
 * else 1 with the reason in buf, naming each setting as pre + its name
 * ("--" on the command line, "" in a sweep file). */
int st_gen_refusal(const st_model *m, st_phase phase, int seq, int kv, int attn, const char *pre, char *buf,
                   size_t n);

/* Generate the operator list. Fails (ST_EINVAL with a sentence) on options
 * that do not fit the model (seq beyond max_seq, decode on a CNN, ...). */
int st_model_ops(const st_model *m, const st_gen_opts *o, st_oplist *out, st_error *err);

/* The two generators behind st_model_ops (forward ops only). */
int st_transformer_ops(const st_model *m, const st_gen_opts *o, st_oplist *out, st_error *err);
int st_cnn_ops(const st_model *m, const st_gen_opts *o, st_oplist *out, st_error *err);

/* Fill FLOPs and bytes of an op from its kind and shape (used by generators
 * and by tests as the single definition of an op's cost). */
void st_op_cost(st_op *op);

/* Append the backward ops of forward list [0, n_fwd) of l (train phase);
 * accumulate: each parameter gradient is also added into an existing .grad
 * (st_gen_opts.accumulate_grads). */
int st_ops_add_backward(st_oplist *l, size_t n_fwd, int accumulate, st_error *err);

#endif
