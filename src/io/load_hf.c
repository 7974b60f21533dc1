/*
 * A Hugging Face config.json -> st_model (transformer).
 *
 * HF configs name the same quantity differently per family (hidden_size,
 * n_embd, d_model); each field below lists the spellings in the order tried.
 * Keys strata does not need are ignored here, unlike in strata's own files:
 * a config.json carries dozens of training and tokenizer settings.
 */
#include "config.h"
#include "io/loaders.h"

#include <string.h>
#include <strings.h>


#define BIG ST_WL_SIZE_MAX

/* First of the keys present (and not null). */
static const st_ynode *first_of(const st_ynode *root, const char *const *keys, const char **which)
{
    for (; *keys; keys++) {
        const st_ynode *v = f_get(root, *keys);
        if (v && !st_ynode_is_null(v)) {
            if (which)
                *which = *keys;
            return v;
        }
    }
    return NULL;
}

static int hf_int_max(const fctx *c, const st_ynode *root, const char *const *keys, int required, long long min,
                      long long max, long long *out);

static int hf_int(const fctx *c, const st_ynode *root, const char *const *keys, int required,
                  long long min, long long *out)
{
    return hf_int_max(c, root, keys, required, min, BIG, out);
}

static int hf_int_max(const fctx *c, const st_ynode *root, const char *const *keys, int required, long long min,
                      long long max, long long *out)
{
    const char *which = NULL;
    const st_ynode *v = first_of(root, keys, &which);
    if (!v) {
        if (!required)
            return 0;
        char list[256] = "";
        for (const char *const *k = keys; *k; k++) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s'%s'", k == keys ? "" : " or ", *k);
        }
        return f_error(c, root, "Hugging Face config: missing %s", list);
    }
    return f_node_int(c, v, which, min, max, out);
}

static int is_type(const char *model_type, const char *const *types)
{
    for (; *types; types++)
        if (strcasecmp(model_type, *types) == 0)
            return 1;
    return 0;
}

/* A boolean key: true or false (JSON's), else dflt when absent or null;
 * anything else (0, "no", a list) is an error at the value, since reading
 * it either way would change the model silently. */
static int hf_bool(const fctx *c, const st_ynode *root, const char *key, int dflt, int *out)
{
    const st_ynode *v = f_get(root, key);
    *out = dflt;
    if (!v || st_ynode_is_null(v))
        return 0;
    if (v->kind == ST_Y_SCALAR && !strcmp(v->scalar, "true"))
        *out = 1;
    else if (v->kind == ST_Y_SCALAR && !strcmp(v->scalar, "false"))
        *out = 0;
    else
        return f_error(c, v, "key '%s': expected true or false, found %s%s%s", key,
                       v->kind == ST_Y_SCALAR ? "'" : "", v->kind == ST_Y_SCALAR ? v->scalar : "a list or map",
                       v->kind == ST_Y_SCALAR ? "'" : "");
    return 0;
}

/* A dropout probability: the first key present, else dflt; 0 <= p <= 0.99. */
static int hf_prob(const fctx *c, const st_ynode *root, const char *const *keys, double dflt, double *out)
{
    const char *which = NULL;
    const st_ynode *v = first_of(root, keys, &which);
    *out = dflt;
    return v ? f_node_number(c, v, which, 0, 0.99, out) : 0;
}

/* Eager attention and training dropout as the family's Hugging Face modeling
 * code runs them (transformers 4.3x, the eager path), and the family's
 * config defaults where the key is absent. */
static int hf_eager(const fctx *c, const st_ynode *root, const char *type, st_transformer *tf)
{
    static const char *const bert_types[] = {"bert", "roberta", "electra", NULL};
    static const char *const t5_types[] = {"t5", "mt5", "switch_transformers", NULL};
    int rc = 0;
    /* every family's eager path views Q, K and V head-major by a permute
     * (GPT-2's _split_heads, BERT's transpose_for_scores, T5's shape, the
     * shared eager_attention_forward's transpose) and multiplies them with
     * torch.matmul, whose reshape copies them; OPT copies them with
     * .contiguous() */
    tf->head_copies = 3;
    if (strcasecmp(type, "gpt2") == 0) {
        /* GPT2Attention._attn: matmul, / sqrt(d) (scale_attn_weights, default
         * true), torch.where(causal_mask, w, min), softmax, attn_dropout */
        int scale;
        if ((rc = hf_bool(c, root, "scale_attn_weights", 1, &scale)))
            return rc;
        tf->score_unary = 1 + scale;
        tf->score_unary_bcast = 1; /* the where against the (1,1,S,S) causal mask */
        tf->score_bcast_select = 1;
        if ((rc = hf_prob(c, root, (const char *const[]){"resid_pdrop", NULL}, 0.1, &tf->hidden_dropout)) ||
            (rc = hf_prob(c, root, (const char *const[]){"attn_pdrop", NULL}, 0.1, &tf->attn_dropout)) ||
            (rc = hf_prob(c, root, (const char *const[]){"embd_pdrop", NULL}, 0.1, &tf->embed_dropout)))
            return rc;
        tf->embed_dropout_set = 1; /* GPT2Model.drop: nn.Dropout(config.embd_pdrop) */
    } else if (is_type(type, bert_types)) {
        /* BertSelfAttention: matmul, / sqrt(d), + the (B,1,1,S) padding mask
         * (a broadcast operand), softmax, dropout */
        tf->score_unary = 2;
        tf->score_unary_bcast = 1; /* the mask add: its gradient is dy itself */
        if ((rc = hf_prob(c, root, (const char *const[]){"hidden_dropout_prob", NULL}, 0.1, &tf->hidden_dropout)) ||
            (rc = hf_prob(c, root, (const char *const[]){"attention_probs_dropout_prob", NULL}, 0.1,
                          &tf->attn_dropout)))
            return rc;
    } else if (strcasecmp(type, "opt") == 0) {
        /* OPTAttention: q scaled before the bmm (a token-sized pass, not
         * counted), + the (B,1,S,S) causal mask repeated over heads,
         * torch.max(w, finfo.min), softmax, dropout */
        tf->score_unary = 1;
        tf->score_binary = 1;
        tf->score_binary_bcast = 1; /* the mask over the heads; torch.max against a scalar stays vectorized */
        if ((rc = hf_prob(c, root, (const char *const[]){"dropout", NULL}, 0.1, &tf->hidden_dropout)) ||
            (rc = hf_prob(c, root, (const char *const[]){"attention_dropout", NULL}, 0.0, &tf->attn_dropout)))
            return rc;
    } else if (is_type(type, t5_types)) {
        /* T5Attention: no scale; + position bias (with the mask folded in),
         * softmax, dropout; dropout_rate everywhere */
        tf->score_binary = 1;
        if ((rc = hf_prob(c, root, (const char *const[]){"dropout_rate", NULL}, 0.1, &tf->hidden_dropout)))
            return rc;
        tf->attn_dropout = tf->hidden_dropout;
    } else {
        /* the shared eager_attention_forward (Llama, Mistral, Qwen, ...):
         * matmul * scaling, + the (B,1,S,S) causal mask, softmax, dropout at
         * attention_dropout (default 0); no hidden-state dropout */
        tf->score_unary = 1;
        tf->score_binary = 1;
        tf->score_binary_bcast = 1; /* the (B,1,S,S) mask over the heads */
        if ((rc = hf_prob(c, root, (const char *const[]){"attention_dropout", NULL}, 0.0, &tf->attn_dropout)) ||
            (rc = hf_prob(c, root, (const char *const[]){"hidden_dropout", "resid_pdrop", NULL}, 0.0,
                          &tf->hidden_dropout)))
            return rc;
    }
    return 0;
}


int st_read_hf(const fctx *c, const st_ynode *root, st_model *m)
{
    static const char *const k_hidden[] = {"hidden_size", "n_embd", "d_model", "dim", NULL};
    static const char *const k_layers[] = {"num_hidden_layers", "n_layer", "num_layers", "n_layers",
                                           NULL};
    static const char *const k_heads[] = {"num_attention_heads", "n_head", "num_heads", "n_heads",
                                          NULL};
    static const char *const k_kv[] = {"num_key_value_heads", NULL};
    static const char *const k_hd[] = {"head_dim", "d_kv", NULL};
    static const char *const k_ffn[] = {"intermediate_size", "n_inner", "ffn_dim", "d_ff",
                                        "hidden_dim", NULL};
    static const char *const k_moe_ffn[] = {"moe_intermediate_size", NULL};
    static const char *const k_vocab[] = {"vocab_size", NULL};
    /* MPT: max_seq_len; Qwen (1) and ChatGLM: seq_length */
    static const char *const k_seq[] = {"max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "seq_length",
                                        NULL};
    static const char *const k_experts[] = {"num_local_experts", "num_experts", NULL};
    static const char *const k_topk[] = {"num_experts_per_tok", NULL};
    static const char *const k_every[] = {"decoder_sparse_step", NULL};
    static const char *const k_dec[] = {"num_decoder_layers", NULL};
    /* Gemma: hidden_activation, when given, is what GemmaMLP runs (its
     * hidden_act is kept for old checkpoints) */
    static const char *const k_act[] = {"hidden_activation", "hidden_act", "activation_function", "dense_act_fn",
                                        NULL};
    static const char *const rope_types[] = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe",
                                             "qwen3", "qwen3_moe", "gemma", "gemma2", "phi3",
                                             "gpt_neox", "gptj", "falcon", "deepseek_v2", NULL};
    static const char *const learned_types[] = {"gpt2", "opt", "bert", "roberta", "gpt_neo",
                                                "bart", "distilbert", "electra", NULL};
    static const char *const relative_types[] = {"t5", "switch_transformers", "mt5", NULL};
    static const char *const alibi_types[] = {"bloom", "mpt", NULL};
    static const char *const encoder_types[] = {"bert", "roberta", "distilbert", "electra", NULL};
    static const char *const biased_types[] = {"gpt2", "opt", "bert", "roberta", "gpt_neo",
                                               "bloom", "gptj", "gpt_neox", "bart", NULL};
    st_transformer *tf = &m->tf;
    const st_ynode *mt = f_get(root, "model_type"), *v;
    const char *type = mt && mt->kind == ST_Y_SCALAR ? mt->scalar : "";
    const char *act_key = NULL;
    int rc;
    memset(tf, 0, sizeof *tf);
    m->kind = ST_MODEL_TRANSFORMER;
    m->dtype = ST_BF16;
    if (root->kind != ST_Y_MAP)
        return f_error(c, root, "Hugging Face config: expected a JSON object");
    if (mt && (mt->kind != ST_Y_SCALAR || st_ynode_is_null(mt) || mt->plain))
        return f_error(c, mt, "key 'model_type': expected a string such as \"llama\"");
    /* Architecture features strata does not model: refused where they
     * change the model (reading such a config as its plain cousin gave a
     * silently wrong model: DeepSeek-V2-Lite as a dense 2.7B, Qwen1.5-MoE
     * without its shared expert, OPT-350m without its projections) */
    static const struct {
        const char *key, *what;
    } unmodelled[] = {
        {"kv_lora_rank", "multi-head latent attention (DeepSeek's compressed KV)"},
        {"q_lora_rank", "multi-head latent attention (DeepSeek's compressed queries)"},
        {"n_shared_experts", "shared experts beside the routed ones"},
        {"shared_expert_intermediate_size", "a shared expert beside the routed ones"},
        {"n_routed_experts", "DeepSeek-style routed experts"},
    };
    for (size_t i = 0; i < sizeof unmodelled / sizeof unmodelled[0]; i++) {
        v = f_get(root, unmodelled[i].key);
        if (v && !st_ynode_is_null(v) && !(v->kind == ST_Y_SCALAR && !strcmp(v->scalar, "0")))
            return f_error(c, v,
                           "key '%s': %s is not modelled by strata; describe the nearest model strata "
                           "does model in a workload YAML (see strata-workloads(5)) and say what it leaves out",
                           unmodelled[i].key, unmodelled[i].what);
    }
    if ((rc = hf_int(c, root, k_hidden, 1, 1, &tf->hidden)) ||
        (rc = hf_int_max(c, root, k_layers, 1, 1, ST_WL_COUNT_MAX, &tf->layers)) ||
        (rc = hf_int_max(c, root, k_heads, 1, 1, ST_WL_COUNT_MAX, &tf->heads)) ||
        (rc = hf_int_max(c, root, k_kv, 0, 1, ST_WL_COUNT_MAX, &tf->kv_heads)) ||
        (rc = hf_int_max(c, root, k_hd, 0, 1, ST_MAX_HEAD_DIM, &tf->head_dim)) ||
        (rc = hf_int(c, root, k_ffn, 0, 1, &tf->ffn_hidden)) ||
        (rc = hf_int(c, root, k_moe_ffn, 0, 1, &tf->expert_ffn_hidden)) ||
        (rc = hf_int(c, root, k_vocab, 1, 1, &tf->vocab)) ||
        (rc = hf_int(c, root, k_seq, 0, 1, &tf->max_seq)) ||
        (rc = hf_int_max(c, root, k_experts, 0, 1, ST_WL_COUNT_MAX, &tf->experts)) ||
        (rc = hf_int_max(c, root, k_topk, 0, 1, ST_WL_COUNT_MAX, &tf->top_k)) ||
        (rc = hf_int_max(c, root, k_every, 0, 1, ST_WL_COUNT_MAX, &tf->moe_every)))
        return rc;
    if (tf->ffn_hidden == 0)
        tf->ffn_hidden = 4 * tf->hidden; /* GPT-2: n_inner null means 4 * n_embd */
    /* OPT: word_embed_proj_dim, the embedding width (350m: 512 of 1024) */
    static const char *const k_embed[] = {"word_embed_proj_dim", NULL};
    if ((rc = hf_int(c, root, k_embed, 0, 1, &tf->embed_dim)))
        return rc;
    if (tf->embed_dim == tf->hidden)
        tf->embed_dim = 0;
    if (tf->max_seq == 0) {
        /* no context length in the config: the T5 family (relative
         * positions) trained at 512, Falcon at 2048 (TII's model cards:
         * "sequence length 2048"); any other model must say */
        if (is_type(type, relative_types))
            tf->max_seq = 512;
        else if (is_type(type, (const char *const[]){"falcon", "RefinedWeb", "RefinedWebModel", "bloom", NULL}))
            tf->max_seq = 2048; /* and BLOOM (BigScience's model card: sequence length 2048) */
    }
    int mq, encdec;
    if ((rc = hf_bool(c, root, "multi_query", 0, &mq)) || (rc = hf_bool(c, root, "is_encoder_decoder", 0, &encdec)))
        return rc;
    if (mq)
        tf->kv_heads = 1;
    if (encdec) {
        long long dec = 0;
        if ((rc = hf_int_max(c, root, k_dec, 0, 1, ST_WL_COUNT_MAX, &dec)))
            return rc;
        tf->encoder_layers = tf->layers;
        if (dec > 0)
            tf->layers = dec;
    }
    if (tf->experts > 0 && tf->top_k == 0)
        tf->top_k = 1; /* Switch routing sends each token to one expert */

    /* activation and gating: hidden_act and its spellings, else the T5
     * family's feed_forward_proj ("relu", "gated-gelu", ...) */
    tf->activation = ST_ACT_GELU;
    v = first_of(root, k_act, &act_key);
    /* Gemma without hidden_activation: GemmaMLP runs gelu_pytorch_tanh
     * whatever hidden_act says (transformers warns and overrides it) */
    if (is_type(type, (const char *const[]){"gemma", NULL}) && !f_get(root, "hidden_activation")) {
        v = NULL;
        tf->activation = ST_ACT_GELU_TANH;
    }
    if (!v) {
        v = f_get(root, "feed_forward_proj");
        act_key = "feed_forward_proj";
    }
    if (v) {
        /* Eager kernels of the activations transformers' activations.py
         * composes from tensor ops (the rest call one torch kernel), forward
         * unary/binary and backward unary/binary, from the expression and
         * autograd's derivative of each op (a scalar scale: one unary
         * kernel; a tensor product: one binary kernel per operand; tanh and
         * sigmoid: one binary kernel on the saved output; pow(x, 3):
         * x.pow(2), a scale and a product; an add: none), plus the adds that
         * accumulate the input's gradient over its uses:
         *   gelu_new    0.5x * (1 + tanh(c (x + 0.044715 pow(x,3))))  6+2, 5+6
         *   gelu_fast   0.5x * (1 + tanh(x c (1 + 0.044715 x x)))     6+3, 3+10
         *   quick_gelu  x * sigmoid(1.702 x)                          2+1, 1+4
         * NeuSight's A100 trace of GPT-2 shows the eight forward kernels of
         * gelu_new (six at unary, two at binary cost). */
        static const struct {
            const char *name;
            st_act act;
            int fu, fb, gu, gb;
        } acts[] = {{"silu", ST_ACT_SILU, 0, 0, 0, 0},  {"swish", ST_ACT_SILU, 0, 0, 0, 0},
                    {"relu", ST_ACT_RELU, 0, 0, 0, 0},  {"gelu", ST_ACT_GELU, 0, 0, 0, 0},
                    {"gelu_new", ST_ACT_GELU_TANH, 6, 2, 5, 6},
                    {"gelu_pytorch_tanh", ST_ACT_GELU_TANH, 0, 0, 0, 0},
                    {"gelu_fast", ST_ACT_GELU_TANH, 6, 3, 3, 10},
                    {"gelu_tanh", ST_ACT_GELU_TANH, 0, 0, 0, 0},
                    {"quick_gelu", ST_ACT_GELU, 2, 1, 1, 4}};
        const char *a;
        size_t i;
        if (v->kind != ST_Y_SCALAR || st_ynode_is_null(v))
            return f_error(c, v, "key '%s': expected an activation name such as \"silu\"",
                           act_key);
        a = v->scalar;
        if (strncmp(a, "gated-", 6) == 0)
            a += 6;
        /* T5Config: feed_forward_proj "gated-gelu" runs gelu_new */
        if (strcmp(act_key, "feed_forward_proj") == 0 && strcmp(v->scalar, "gated-gelu") == 0)
            a = "gelu_new";
        for (i = 0; i < sizeof acts / sizeof acts[0]; i++)
            if (strcmp(a, acts[i].name) == 0)
                break;
        if (i == sizeof acts / sizeof acts[0])
            return f_error(c, v, "key '%s': activation '%s' is not modelled; strata knows silu, "
                           "swish, relu, gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, quick_gelu",
                           act_key, v->scalar);
        tf->activation = acts[i].act;
        tf->act_unary = acts[i].fu;
        tf->act_binary = acts[i].fb;
        tf->act_grad_unary = acts[i].gu;
        tf->act_grad_binary = acts[i].gb;
    }
    v = f_get(root, "feed_forward_proj");
    int gated_act;
    if ((rc = hf_bool(c, root, "is_gated_act", 0, &gated_act)))
        return rc;
    tf->gated_mlp = gated_act ||
                    (v && v->kind == ST_Y_SCALAR && strncmp(v->scalar, "gated", 5) == 0) ||
                    is_type(type, rope_types);
    if (is_type(type, (const char *const[]){"gpt_neox", "gptj", "falcon", "phi3", NULL}))
        tf->gated_mlp = strcasecmp(type, "phi3") == 0;

    tf->norm = (f_get(root, "rms_norm_eps") || is_type(type, relative_types)) ? ST_NORM_RMSNORM
                                                                                : ST_NORM_LAYERNORM;
    int pre, bias, tied;
    if ((rc = hf_bool(c, root, "do_layer_norm_before", 1, &pre)) ||
        (rc = hf_bool(c, root, "attention_bias", is_type(type, biased_types), &bias)) ||
        (rc = hf_bool(c, root, "tie_word_embeddings", 1, &tied))) /* HF's default is true */
        return rc;
    tf->pre_norm = !is_type(type, encoder_types) && pre;
    /* side-by-side attention and MLP (transformers' modeling files): GPT-J
     * always, one ln_1 feeding both; GPT-NeoX when use_parallel_residual
     * (default true), input_layernorm and post_attention_layernorm each on
     * the block input; Falcon when parallel_attn (default true): with
     * new_decoder_architecture (Falcon-40B/180B) ln_attn and ln_mlp, else
     * one input_layernorm */
    if (tf->pre_norm) {
        int par = 0, newarch = 0;
        if (is_type(type, (const char *const[]){"gptj", NULL}))
            tf->parallel_block = ST_PAR_SHARED_NORM;
        else if (is_type(type, (const char *const[]){"gpt_neox", NULL})) {
            if ((rc = hf_bool(c, root, "use_parallel_residual", 1, &par)))
                return rc;
            tf->parallel_block = par ? ST_PAR_TWO_NORMS : ST_PAR_NONE;
        } else if (is_type(type, (const char *const[]){"falcon", "RefinedWeb", "RefinedWebModel", NULL})) {
            if ((rc = hf_bool(c, root, "parallel_attn", 1, &par)) ||
                (rc = hf_bool(c, root, "new_decoder_architecture", 0, &newarch)))
                return rc;
            tf->parallel_block = newarch ? ST_PAR_TWO_NORMS : par ? ST_PAR_SHARED_NORM : ST_PAR_NONE;
        }
    }
    tf->position = is_type(type, relative_types) ? ST_POS_RELATIVE
                 : is_type(type, alibi_types)    ? ST_POS_ALIBI
                 : is_type(type, learned_types)  ? ST_POS_LEARNED
                 : ST_POS_ROPE;
    tf->causal = !is_type(type, encoder_types);
    tf->bias = bias;
    tf->tied_embeddings = tied;
    tf->lm_head = 1;
    {
        /* *ForSequenceClassification: a classifier over num_labels classes
         * (transformers' default 2, or as many as id2label names) */
        const st_ynode *arch = f_get(root, "architectures");
        const st_ynode *a0 = (arch && arch->kind == ST_Y_SEQ && arch->n > 0) ? arch->items[0] : NULL;
        if (a0 && a0->kind == ST_Y_SCALAR && strstr(a0->scalar, "ForSequenceClassification")) {
            const st_ynode *labels = f_get(root, "id2label");
            tf->num_labels = labels && labels->kind == ST_Y_MAP && labels->n > 0 ? (long long)labels->n : 2;
            if ((rc = hf_int(c, root, (const char *const[]){"num_labels", NULL}, 0, 1, &tf->num_labels)))
                return rc;
            tf->lm_head = 0;
        }
    }
    if (!is_type(type, rope_types) && !is_type(type, learned_types) &&
        !is_type(type, relative_types) && !is_type(type, alibi_types) &&
        !is_type(type, encoder_types) && !f_get(root, "rope_theta"))
        return f_error(c, mt ? mt : root,
                       "Hugging Face config: %s%s%s is not one strata knows how to map "
                       "(llama, mistral, mixtral, qwen2/3, gpt2, opt, bert, t5/switch, bloom, "
                       "...); write a strata workload YAML instead (strata-workloads(5))",
                       type[0] ? "model_type '" : "a config without model_type", type, type[0] ? "'" : "");

    if ((rc = hf_eager(c, root, type, tf)))
        return rc;
    v = f_get(root, "torch_dtype");
    if (v && !st_ynode_is_null(v)) {
        if (v->kind == ST_Y_SCALAR && (!strcmp(v->scalar, "float16") || !strcmp(v->scalar, "half")))
            m->dtype = ST_FP16;
        else if (v->kind == ST_Y_SCALAR && (!strcmp(v->scalar, "float32") || !strcmp(v->scalar, "float")))
            m->dtype = ST_FP32;
        else if (v->kind == ST_Y_SCALAR && !strcmp(v->scalar, "bfloat16"))
            m->dtype = ST_BF16;
        else
            return f_error(c, v, "key 'torch_dtype': expected float32, float16 or bfloat16, found '%s'",
                           v->kind == ST_Y_SCALAR ? v->scalar : "a list or map");
    }
    /* the repository the config came from names the model; without one,
     * the file's own name does, with the class (many configs share
     * GPT2LMHeadModel: gpt2_large and NeuSight's gpt3_xl alike) */
    v = f_get(root, "_name_or_path");
    if (v && v->kind == ST_Y_SCALAR && v->scalar[0]) {
        snprintf(m->name, sizeof m->name, "%s", v->scalar);
    } else {
        const st_ynode *arch = f_get(root, "architectures");
        v = (arch && arch->kind == ST_Y_SEQ && arch->n > 0) ? arch->items[0] : NULL;
        snprintf(m->name, sizeof m->name, "%s (%s)", m->id,
                 v && v->kind == ST_Y_SCALAR && v->scalar[0] ? v->scalar : type);
    }
    /* a config is someone else's file: keep its name printable */
    for (char *p = m->name; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    /* checked last, so that a key's own fault is reported first */
    if (tf->max_seq == 0)
        return f_error(c, root, "no context length (max_position_embeddings, n_positions or n_ctx): add "
                                "\"max_position_embeddings\": N, the model's context, to the config");
    return st_check_transformer(c, root, tf);
}
