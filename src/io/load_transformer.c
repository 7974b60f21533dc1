/* kind: transformer -> st_model (see strata-workloads(5)). */
#include "config.h"
#include "io/loaders.h"

#include <string.h>

#define BIG ST_WL_SIZE_MAX

static const fkey tf_keys[] = {
    {"kind", 1, "transformer"},
    {"name", 1, "model name"},
    {"hidden", 1, "d_model"},
    {"layers", 1, "blocks"},
    {"encoder_layers", 0, "encoder blocks"},
    {"heads", 1, "attention heads"},
    {"kv_heads", 0, "key/value heads"},
    {"head_dim", 0, "per-head size"},
    {"ffn_hidden", 1, "MLP inner size"},
    {"vocab", 1, "vocabulary size"},
    {"max_seq", 1, "context length"},
    {"activation", 1, "gelu, gelu_tanh, relu or silu"},
    {"gated_mlp", 1, "true/false"},
    {"norm", 1, "layernorm or rmsnorm"},
    {"norm_position", 1, "pre or post"},
    {"parallel_block", 0, "none, two_norms or shared_norm (attention and MLP side by side)"},
    {"position", 1, "learned, rope, relative, alibi or sinusoidal"},
    {"causal", 1, "true/false"},
    {"bias", 1, "true/false"},
    {"tied_embeddings", 1, "true/false"},
    {"lm_head", 0, "true/false"},
    {"num_labels", 0, "classes of a sequence-classification head (replaces the LM head)"},
    {"moe", 0, "{experts, top_k, every, expert_ffn_hidden}"},
    {"dtype", 0, "fp32, fp16, bf16, ..."},
    {"eager_score_unary", 0, "elementwise passes over the eager score matrix (0-8)"},
    {"eager_score_binary", 0, "score-sized operands added to the eager scores (0-8)"},
    {"eager_score_unary_bcast", 0, "of the unary passes, those against a broadcast mask (non-vectorized kernel)"},
    {"eager_score_binary_bcast", 0, "of the added operands, those broadcast over the heads (non-vectorized kernel)"},
    {"eager_score_bcast_select", 0, "true: the broadcast unary passes are selects (their gradient a kernel); false: adds"},
    {"eager_head_copies", 0, "of Q, K and V, those copied head-major before the eager products (0-3)"},
    {"hidden_dropout", 0, "training dropout on hidden states (0-0.99)"},
    {"embed_dropout", 0, "training dropout after the embedding (0-0.99; default hidden_dropout)"},
    {"attention_dropout", 0, "training dropout on attention probabilities (0-0.99)"},
    {"eager_act_unary", 0, "unary kernels of the activation's eager composition (0-16)"},
    {"eager_act_binary", 0, "two-tensor kernels of the activation's eager composition (0-16)"},
    {"eager_act_grad_unary", 0, "unary kernels of its backward (0-32)"},
    {"eager_act_grad_binary", 0, "two-tensor kernels of its backward (0-32)"},
};

int st_read_dtype(const fctx *c, const st_ynode *map, const char *key, st_dtype *out)
{
    const st_ynode *v = f_get(map, key);
    if (!v)
        return 0;
    if (v->kind != ST_Y_SCALAR || st_dtype_parse(v->scalar, out) != 0)
        return f_error(c, v, "key '%s': expected one of %s, found '%s'", key, st_dtype_choices(),
                       v->kind == ST_Y_SCALAR ? v->scalar : st_ykind_name(v->kind));
    return 0;
}

/* Checks shared by YAML and Hugging Face transformers. */
/* The node of the first of two spellings present (YAML or HF), else at. */
static const st_ynode *key_node(const st_ynode *at, const char *a, const char *b)
{
    const st_ynode *n = f_get(at, a);
    if (!n)
        n = f_get(at, b);
    return n ? n : at;
}

int st_check_transformer(const fctx *c, const st_ynode *at, st_transformer *tf)
{
    if (tf->kv_heads == 0)
        tf->kv_heads = tf->heads;
    if (tf->head_dim == 0) {
        if (tf->hidden % tf->heads != 0)
            return f_error(c, key_node(at, "heads", "num_attention_heads"),
                           "hidden %lld is not divisible by heads %lld; give head_dim",
                           tf->hidden, tf->heads);
        tf->head_dim = tf->hidden / tf->heads;
    }
    if (tf->kv_heads > tf->heads || tf->heads % tf->kv_heads != 0)
        return f_error(c, key_node(at, "kv_heads", "num_key_value_heads"),
                       "kv_heads %lld must divide heads %lld (MHA: equal, GQA: a divisor, MQA: 1)",
                       tf->kv_heads, tf->heads);
    if (tf->experts > 0) {
        if (tf->top_k < 1 || tf->top_k > tf->experts)
            return f_error(c, key_node(at, "moe", "num_experts_per_tok"),
                           "moe: top_k %lld must be between 1 and experts %lld",
                           tf->top_k, tf->experts);
        if (tf->moe_every == 0)
            tf->moe_every = 1;
        /* every Nth block of each stack (decoder, and an encoder's) is an
         * MoE block: past the longer stack, none is */
        long long longest = tf->layers > tf->encoder_layers ? tf->layers : tf->encoder_layers;
        if (tf->layers / tf->moe_every + tf->encoder_layers / tf->moe_every == 0) {
            const st_ynode *mn = f_get(at, "moe"), *en = mn && mn->kind == ST_Y_MAP ? f_get(mn, "every") : NULL;
            return f_error(c, en ? en : key_node(at, "decoder_sparse_step", "moe"),
                           "moe: an MoE block every %lld blocks leaves none of the %lld-block stack%s an MoE "
                           "block; give every 1 to %lld, or leave out moe for a dense model",
                           tf->moe_every, longest, tf->encoder_layers ? "s" : "", longest);
        }
        if (tf->expert_ffn_hidden == 0)
            tf->expert_ffn_hidden = tf->ffn_hidden;
    }
    /* the largest head any attention kernel takes (FlashAttention's and
     * the eager path's alike are priced up to it) */
    if (tf->head_dim > ST_MAX_HEAD_DIM) {
        const st_ynode *hn = f_get(at, "head_dim") ? f_get(at, "head_dim") : key_node(at, "hidden", "hidden_size");
        return f_error(c, hn, "a head dimension of %lld: attention kernels take heads up to %d; give a smaller "
                       "head_dim (or hidden over heads)", tf->head_dim, ST_MAX_HEAD_DIM);
    }
    /* counts strata keeps exactly, up to 2^53: checked here so that the
     * error names the file and the key that makes the model that large */
    st_model tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.kind = ST_MODEL_TRANSFORMER;
    tmp.tf = *tf;
    double params = st_model_params(&tmp);
    if (!(params <= ST_MAX_ELEMENTS))
        return f_error(c, key_node(at, "hidden", "hidden_size"),
                       "with this hidden size the model has %.3g parameters; strata counts up to 2^53 = 9.0e15: "
                       "make it smaller (hidden, ffn_hidden, vocab or layers)", params);
    return 0;
}

int st_read_transformer(const fctx *c, const st_ynode *root, st_model *m)
{
    static const char *const acts[] = {"relu", "relu6", "gelu", "gelu_tanh", "silu"};
    static const char *const norms[] = {"layernorm", "rmsnorm"};
    static const char *const places[] = {"pre", "post"};
    static const char *const positions[] = {"learned", "rope", "relative", "alibi", "sinusoidal"};
    static const fkey moe_keys[] = {{"experts", 1, "number of experts"},
                                    {"top_k", 1, "experts per token"},
                                    {"every", 0, "MoE every Nth block"},
                                    {"expert_ffn_hidden", 0, "expert MLP size"}};
    st_transformer *tf = &m->tf;
    int rc, act = 0, nrm = 0, place = 0, pos = 0;
    const st_ynode *moe;
    memset(tf, 0, sizeof *tf);
    tf->lm_head = 1;
    m->kind = ST_MODEL_TRANSFORMER;
    m->dtype = ST_BF16;
    if ((rc = f_check_map(c, root, tf_keys, sizeof tf_keys / sizeof tf_keys[0])) ||
        (rc = f_string(c, root, "name", m->name, sizeof m->name)) ||
        (rc = f_int(c, root, "hidden", 1, BIG, &tf->hidden)) ||
        (rc = f_int(c, root, "layers", 1, ST_WL_COUNT_MAX, &tf->layers)) ||
        (rc = f_int(c, root, "encoder_layers", 0, ST_WL_COUNT_MAX, &tf->encoder_layers)) ||
        (rc = f_int(c, root, "heads", 1, ST_WL_COUNT_MAX, &tf->heads)) ||
        (rc = f_int(c, root, "kv_heads", 1, ST_WL_COUNT_MAX, &tf->kv_heads)) ||
        (rc = f_int(c, root, "head_dim", 1, ST_MAX_HEAD_DIM, &tf->head_dim)) ||
        (rc = f_int(c, root, "ffn_hidden", 1, BIG, &tf->ffn_hidden)) ||
        (rc = f_int(c, root, "vocab", 1, BIG, &tf->vocab)) ||
        (rc = f_int(c, root, "max_seq", 1, BIG, &tf->max_seq)) ||
        (rc = f_enum(c, root, "activation", acts, 5, &act)) ||
        (rc = f_bool(c, root, "gated_mlp", &tf->gated_mlp)) ||
        (rc = f_enum(c, root, "norm", norms, 2, &nrm)) ||
        (rc = f_enum(c, root, "norm_position", places, 2, &place)) ||
        (rc = f_enum(c, root, "position", positions, 5, &pos)) ||
        (rc = f_bool(c, root, "causal", &tf->causal)) ||
        (rc = f_bool(c, root, "bias", &tf->bias)) ||
        (rc = f_bool(c, root, "tied_embeddings", &tf->tied_embeddings)) ||
        (rc = f_bool(c, root, "lm_head", &tf->lm_head)) ||
        (rc = f_int(c, root, "num_labels", 0, BIG, &tf->num_labels)) ||
        (rc = st_read_dtype(c, root, "dtype", &m->dtype)) ||
        (rc = f_int32(c, root, "eager_score_unary", 0, 8, &tf->score_unary)) ||
        (rc = f_int32(c, root, "eager_score_binary", 0, 8, &tf->score_binary)) ||
        (rc = f_int32(c, root, "eager_score_unary_bcast", 0, 8, &tf->score_unary_bcast)) ||
        (rc = f_int32(c, root, "eager_score_binary_bcast", 0, 8, &tf->score_binary_bcast)) ||
        (f_get(root, "eager_score_bcast_select") &&
         (rc = f_bool(c, root, "eager_score_bcast_select", &tf->score_bcast_select))) ||
        (rc = f_int32(c, root, "eager_head_copies", 0, 3, &tf->head_copies)) ||
        (rc = f_number(c, root, "hidden_dropout", 0, 0.99, 1, "", &tf->hidden_dropout)) ||
        (rc = f_number(c, root, "embed_dropout", 0, 0.99, 1, "", &tf->embed_dropout)) ||
        (rc = f_number(c, root, "attention_dropout", 0, 0.99, 1, "", &tf->attn_dropout)) ||
        (rc = f_int32(c, root, "eager_act_unary", 0, 16, &tf->act_unary)) ||
        (rc = f_int32(c, root, "eager_act_binary", 0, 16, &tf->act_binary)) ||
        (rc = f_int32(c, root, "eager_act_grad_unary", 0, 32, &tf->act_grad_unary)) ||
        (rc = f_int32(c, root, "eager_act_grad_binary", 0, 32, &tf->act_grad_binary)))
        return rc;
    tf->embed_dropout_set = f_get(root, "embed_dropout") != NULL;
    if (tf->num_labels > 0) {
        const st_ynode *v = f_get(root, "lm_head");
        if (v && tf->lm_head)
            return f_error(c, v,
                           "key 'lm_head': a model with num_labels has a classification head "
                           "instead of the LM head; drop 'lm_head: true' or 'num_labels'");
        tf->lm_head = 0;
    }
    if (tf->score_unary_bcast > tf->score_unary)
        return f_error(c, f_get(root, "eager_score_unary_bcast"),
                       "key 'eager_score_unary_bcast' (%d) counts among the %d eager_score_unary passes: "
                       "at most %d",
                       tf->score_unary_bcast, tf->score_unary, tf->score_unary);
    if (tf->score_binary_bcast > tf->score_binary)
        return f_error(c, f_get(root, "eager_score_binary_bcast"),
                       "key 'eager_score_binary_bcast' (%d) counts among the %d eager_score_binary operands: "
                       "at most %d",
                       tf->score_binary_bcast, tf->score_binary, tf->score_binary);
    if (tf->act_unary == 0) {
        const struct { const char *key; int v; } rest[] = {{"eager_act_binary", tf->act_binary},
                                                          {"eager_act_grad_unary", tf->act_grad_unary},
                                                          {"eager_act_grad_binary", tf->act_grad_binary}};
        for (size_t i = 0; i < 3; i++)
            if (rest[i].v > 0)
                return f_error(c, f_get(root, rest[i].key),
                               "key '%s' describes a composed activation, whose first kernel is "
                               "unary: set eager_act_unary to at least 1 (or leave the eager_act_* "
                               "keys out for a one-kernel activation)",
                               rest[i].key);
    }
    tf->activation = (st_act)(act + 1); /* names start at relu */
    tf->norm = (st_norm)nrm;
    tf->pre_norm = place == 0;
    {
        static const char *const pars[] = {"none", "two_norms", "shared_norm"};
        int par = 0;
        if (f_get(root, "parallel_block") && (rc = f_enum(c, root, "parallel_block", pars, 3, &par)))
            return rc;
        if (par != ST_PAR_NONE && !tf->pre_norm)
            return f_error(c, f_get(root, "parallel_block"), "key 'parallel_block': side-by-side attention and "
                                                             "MLP read the block's normalised input; it needs "
                                                             "norm_position: pre");
        tf->parallel_block = par;
    }
    tf->position = (st_pos)pos;
    moe = f_get(root, "moe");
    if (moe) {
        fctx mc = *c;
        mc.what = "moe";
        if ((rc = f_check_map(&mc, moe, moe_keys, 4)) ||
            (rc = f_int(&mc, moe, "experts", 1, ST_WL_COUNT_MAX, &tf->experts)) ||
            (rc = f_int(&mc, moe, "top_k", 1, ST_WL_COUNT_MAX, &tf->top_k)) ||
            (rc = f_int(&mc, moe, "every", 1, ST_WL_COUNT_MAX, &tf->moe_every)) ||
            (rc = f_int(&mc, moe, "expert_ffn_hidden", 1, BIG, &tf->expert_ffn_hidden)))
            return rc;
    }
    return st_check_transformer(c, root, tf);
}
