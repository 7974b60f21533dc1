/* One training iteration under a parallel configuration (see train.h). */
#include "config.h"
#include "train/train.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0
/* Relative error of exposed communication in the band: the collective
 * model's held-out error on VIDUR's intra-node all-reduce (validate vidur:
 * 8.5% and 13.8% MAPE on 4 and 8 GPUs), rounded up. */
#define COMM_SPREAD 0.15

static const char *const sched_names[] = {"1f1b", "gpipe", "interleaved"};
static const char *const recomp_names[] = {"none", "selective", "full"};

const char *st_pp_sched_name(st_pp_sched s) { return (unsigned)s < 3 ? sched_names[s] : "?"; }
const char *st_recompute_name(st_recompute r) { return (unsigned)r < 3 ? recomp_names[r] : "?"; }

int st_pp_sched_parse(const char *s, st_pp_sched *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, sched_names[i])) {
            *out = (st_pp_sched)i;
            return 0;
        }
    return ST_EINVAL;
}

int st_recompute_parse(const char *s, st_recompute *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, recomp_names[i])) {
            *out = (st_recompute)i;
            return 0;
        }
    return ST_EINVAL;
}

void st_train_cfg_default(st_train_cfg *c, const st_model *m, int gpus)
{
    memset(c, 0, sizeof *c);
    c->dp = gpus > 0 ? gpus : 1;
    c->tp = c->pp = c->cp = c->ep = 1;
    c->chunks = 1;
    c->microbatches = 1;
    c->global_batch = c->dp;
    c->seq = m && m->kind == ST_MODEL_TRANSFORMER ? (m->tf.max_seq < 2048 ? m->tf.max_seq : 2048) : 1;
    c->dtype = m ? m->dtype : ST_BF16;
    c->moe_imbalance = 1;
    c->bucket_bytes = 25 * MIB; /* PyTorch DDP bucket_cap_mb default */
}

void st_train_default_batches(st_train_cfg *k, long long mbs, long long gb)
{
    k->microbatches = mbs ? mbs : k->pp == 1 ? 1 : gb && gb % k->dp == 0 ? gb / k->dp : 4LL * k->pp;
    k->global_batch = gb ? gb : (long long)k->dp * k->microbatches;
}

int st_train_stages_straddle(long long stage, long long pp, int node_gpus)
{
    int G = node_gpus;
    int straddles = stage > G && stage % G;
    for (long long i = 0; stage < G && i < pp && !straddles; i++)
        straddles = i * stage / G != ((i + 1) * stage - 1) / G;
    return straddles;
}

int st_train_check_scope(const st_model *m, const st_cluster *c, long long gpus, long long seq, st_error *err)
{
    if (gpus > (long long)c->node.gpus * c->nodes)
        return st_error_set(err, ST_EINVAL, "%lld GPUs asked (dp x tp x pp x cp); cluster %s has %lld (%d node%s x %d)",
                            gpus, c->id, (long long)c->node.gpus * c->nodes, c->nodes, c->nodes == 1 ? "" : "s",
                            c->node.gpus);
    if (seq < 1 || seq > m->tf.max_seq)
        return st_error_set(err, ST_EINVAL, "sequence length %lld is outside 1..%lld (max_seq of %s)", seq,
                            m->tf.max_seq, m->id);
    return 0;
}

long long st_pipeline_stage_layers(long long L, long long V, long long vs)
{
    if (V < 1 || vs < 0 || vs >= V)
        return 0;
    long long base = L / V, r = L % V;
    /* rank among the ends: last 0, first 1, second-to-last 2, second 3, ... */
    long long rank = vs >= V - 1 - vs ? 2 * (V - 1 - vs) : 2 * vs + 1;
    return rank < V - r ? base : base + 1;
}

void st_train_state_bytes(st_dtype t, double *grad, double *opt)
{
    int fp32_store = t == ST_FP32 || t == ST_TF32;
    *grad = fp32_store ? 4 : 2;
    *opt = fp32_store ? 8 : 12;
}

int st_train_check_options(const st_train_cfg *k, st_error *err)
{
    if (k->dp < 1 || k->tp < 1 || k->pp < 1 || k->cp < 1 || k->ep < 1)
        return st_error_set(err, ST_EINVAL, "parallel degrees must be >= 1");
    if (k->sp && k->tp < 2)
        return st_error_set(err, ST_EINVAL, "sequence parallelism needs TP >= 2");
    if (k->sched == ST_PP_INTERLEAVED && k->pp < 2)
        return st_error_set(err, ST_EINVAL, "interleaved 1F1B needs PP >= 2 (it interleaves model chunks across "
                            "pipeline stages); PP is %d: give --pp 2 or more, or another --schedule", k->pp);
    if (k->sched == ST_PP_INTERLEAVED && k->chunks < 2)
        return st_error_set(err, ST_EINVAL, "interleaved 1F1B needs --chunks >= 2 (model chunks a stage); "
                            "chunks is %d", k->chunks);
    if (k->sched == ST_PP_INTERLEAVED && k->microbatches % k->pp)
    {
        /* the fix: the next multiple of PP, at the microbatch size the run
         * has, which the global batch must then cover on every DP rank */
        long long want = (k->microbatches + k->pp - 1) / k->pp * k->pp;
        long long mbs = k->global_batch > 0 && k->dp > 0 ? k->global_batch / ((long long)k->dp * k->microbatches) : 1;
        if (mbs < 1)
            mbs = 1;
        return st_error_set(err, ST_EINVAL, "interleaved 1F1B needs microbatches a multiple of PP (Megatron-LM's "
                            "rule): %lld microbatches on PP %d; give --microbatches %lld with --global-batch %lld "
                            "(DP %d x %lld microbatches of %lld)", k->microbatches, k->pp, want,
                            (long long)k->dp * want * mbs, k->dp, want, mbs);
    }
    if (k->microbatches > ST_TRAIN_MAX_MICROBATCHES)
        return st_error_set(err, ST_EINVAL, "%lld microbatches: strata simulates the pipeline one microbatch at a "
                            "time and takes at most %d per iteration; use larger microbatches",
                            k->microbatches, ST_TRAIN_MAX_MICROBATCHES);
    if (k->global_batch < 1 || k->microbatches < 1 || k->global_batch % ((long long)k->dp * k->microbatches))
        return st_error_set(err, ST_EINVAL, "global batch %lld must split into DP %d x %lld microbatches of "
                            "whole sequences", k->global_batch, k->dp, k->microbatches);
    /* ring attention is blockwise attention with an online softmax across
     * the K/V blocks that arrive: a fused kernel's loop (Megatron-LM's
     * context parallelism runs on Transformer Engine's fused attention);
     * eager attention normalises a whole score row at once */
    if (k->cp > 1 && !k->flash && !k->fa3)
        return st_error_set(err, ST_EINVAL, "CP %d: context parallelism (ring attention) needs fused attention; "
                            "add --flash (or --fa3 on Hopper)", k->cp);
    if (k->zero < 0 || k->zero > 3)
        return st_error_set(err, ST_EINVAL, "ZeRO stage must be 0, 1, 2 or 3");
    if (k->zero == 3 && k->pp > 1)
        return st_error_set(err, ST_EINVAL, "ZeRO-3 with pipeline parallelism is not modelled (DeepSpeed "
                            "refuses the pair; FSDP2 with PP, as torchtitan runs it, re-gathers each stage's "
                            "weights per microbatch, which strata does not price); use ZeRO 1 or 2 with PP");
    if (k->lora_rank < 0 || k->lora_rank > 65536)
        return st_error_set(err, ST_EINVAL, "LoRA rank must be in 1..65536");
    if (!(k->moe_imbalance >= 1) || k->moe_imbalance > 64)
        return st_error_set(err, ST_EINVAL, "MoE load imbalance must be in [1, 64]");
    if (k->dtype != ST_FP32 && k->dtype != ST_FP16 && k->dtype != ST_BF16 && k->dtype != ST_FP8 && k->dtype != ST_TF32)
        return st_error_set(err, ST_EINVAL, "training dtype must be fp32, tf32, fp16, bf16 or fp8");
    return 0;
}

int st_train_check(const st_model *m, const st_cluster *c, const st_train_cfg *k, st_error *err)
{
    if (m->kind != ST_MODEL_TRANSFORMER)
        return st_error_set(err, ST_EINVAL, "%s is not a transformer; the training layer models transformers", m->id);
    const st_transformer *tf = &m->tf;
    int G = c->node.gpus;
    long long gpus = (long long)k->dp * k->tp * k->pp * k->cp;
    int rc = st_train_check_options(k, err);
    if (rc)
        return rc;
    rc = st_train_check_scope(m, c, gpus, k->seq, err);
    if (rc)
        return rc;
    if (k->tp > G)
        return st_error_set(err, ST_EINVAL, "TP %d spans more than one %d-GPU node; keep TP inside a node", k->tp, G);
    if (G % k->tp || (k->tp * k->cp <= G && G % (k->tp * k->cp)))
        return st_error_set(err, ST_EINVAL, "TP %d x CP %d must divide the %d GPUs of a node", k->tp, k->cp, G);
    /* a pipeline stage (TP x CP x DP GPUs, Megatron's rank order) that
     * spans nodes must take whole nodes, or its DP group has a ragged
     * member count per node */
    long long stage = (long long)k->tp * k->cp * k->dp;
    if (st_train_stages_straddle(stage, k->pp, G))
        return st_error_set(err, ST_EINVAL, "a pipeline stage is TP %d x CP %d x DP %d = %lld GPUs, so stages "
                            "straddle %d-GPU nodes; choose degrees so that a stage is a divisor or a multiple of "
                            "%d GPUs (e.g. another PP)", k->tp, k->cp, k->dp, stage, G, G);
    if (tf->heads % k->tp)
        return st_error_set(err, ST_EINVAL, "TP %d must divide the %lld attention heads of %s", k->tp, tf->heads, m->id);
    if (tf->kv_heads % k->tp && k->tp % tf->kv_heads)
        return st_error_set(err, ST_EINVAL, "TP %d and the %lld KV heads of %s: one must divide the other", k->tp,
                            tf->kv_heads, m->id);
    long long V = (long long)k->pp * (k->sched == ST_PP_INTERLEAVED ? k->chunks : 1);
    long long L = tf->layers + tf->encoder_layers;
    /* the two end stages may hold no layer (the first only the
     * embedding, the last only the head and loss: Llama 3's 126 layers on
     * 128 model chunks); every other stage needs one */
    if (L < V - 2 || L < 1)
        return st_error_set(err, ST_EINVAL, "%lld layers cannot fill %lld pipeline stages%s (only the first and "
                            "the last may hold no layer); choose PP%s of at most %lld",
                            L, V, k->sched == ST_PP_INTERLEAVED ? " x chunks" : "",
                            k->sched == ST_PP_INTERLEAVED ? " x chunks" : "", L + 2);
    if (L % V && tf->encoder_layers)
        return st_error_set(err, ST_EINVAL, "%lld encoder and decoder layers do not split evenly into %lld pipeline "
                            "stages%s; an encoder-decoder model needs PP%s dividing %lld",
                            L, V, k->sched == ST_PP_INTERLEAVED ? " x chunks" : "",
                            k->sched == ST_PP_INTERLEAVED ? " x chunks" : "", L);
    /* the sequence length defaults from the model: these fit it, not the options alone */
    if (k->seq % k->cp)
        return st_error_set(err, ST_EINVAL, "CP %d must divide the sequence length %lld", k->cp, k->seq);
    if (k->sp && (k->seq / k->cp) % k->tp)
        return st_error_set(err, ST_EINVAL, "sequence parallelism: TP %d must divide the %lld tokens per rank",
                            k->tp, k->seq / k->cp);
    /* causal load balance: Megatron-LM cuts the sequence into 2 x CP chunks
     * and gives rank i chunks i and 2 CP - 1 - i */
    if (k->cp > 1 && tf->causal && k->seq % (2LL * k->cp))
        return st_error_set(err, ST_EINVAL, "CP %d: a causal model's sequence is cut into 2 x CP = %d chunks for "
                            "load balance (Megatron-LM); make the sequence length %lld a multiple of %d",
                            k->cp, 2 * k->cp, k->seq, 2 * k->cp);
    if (k->ep > 1 && !tf->experts)
        return st_error_set(err, ST_EINVAL, "EP %d: %s is dense (no experts to spread); expert parallelism needs "
                            "an MoE model", k->ep, m->id);
    if (k->ep > 1 && tf->experts % k->ep)
        return st_error_set(err, ST_EINVAL, "EP %d does not divide the %lld experts of %s", k->ep, tf->experts,
                            m->id);
    if (k->ep > 1 && ((long long)k->dp * k->cp) % k->ep)
        return st_error_set(err, ST_EINVAL, "EP %d must divide DP x CP (%lld): the expert ranks are the data "
                            "(and context) parallel ranks", k->ep, (long long)k->dp * k->cp);
    /* an adapter B A of rank r on a d_in -> d_out layer has rank at most
     * min(d_in, d_out): past the adapted layers' smallest side (the hidden
     * size, or the attention's heads x head_dim where smaller) a rank only
     * adds parameters */
    long long lora_max = tf->hidden;
    if (tf->heads * tf->head_dim > 0 && tf->heads * tf->head_dim < lora_max)
        lora_max = tf->heads * tf->head_dim;
    if (tf->ffn_hidden > 0 && tf->ffn_hidden < lora_max) /* an MLP narrower than the model */
        lora_max = tf->ffn_hidden;
    if (tf->experts > 0 && tf->expert_ffn_hidden > 0 && tf->expert_ffn_hidden < lora_max)
        lora_max = tf->expert_ffn_hidden; /* Qwen3-30B-A3B's experts: 2048 x 768 */
    if (k->lora_rank > 0 && k->lora_rank > lora_max)
        return st_error_set(err, ST_EINVAL, "LoRA rank %d is more than %s's adapted layers can use: an adapter's rank "
                            "is at most its layer's smaller side, here %lld; give --lora %lld or less",
                            k->lora_rank, m->id, lora_max, lora_max);
    /* the busiest expert gets at most every token (each picks an expert
     * once), against a mean of tokens x top_k / experts */
    if (tf->experts > 0 && tf->top_k > 0 && k->moe_imbalance > (double)tf->experts / tf->top_k)
        return st_error_set(err, ST_EINVAL, "MoE load imbalance %g is more than %s can have: with %lld experts and "
                            "top-%lld routing the busiest expert gets at most every token, %g x the mean",
                            k->moe_imbalance, m->id, tf->experts,
                            tf->top_k, (double)tf->experts / tf->top_k);
    if (k->dtype == ST_FP8 && !(c->node.gpu.matrix[ST_FP8].dense > 0))
        return st_error_set(err, ST_EINVAL, "%s has no FP8 tensor cores; FP8 training needs Hopper or later",
                            c->node.gpu.id);
    /* attention runs in BF16 under the FP8 recipe (st_train_lists), and has a backward */
    if (k->fa3 && st_fa3_check(&c->node.gpu, k->dtype == ST_FP8 ? ST_BF16 : k->dtype, 1, err))
        return ST_EINVAL;
    return 0;
}

/* ---- the sharded per-GPU operator lists ------------------------------------- */
static int is_block(const char *layer) { return strstr(layer, "block") != NULL; }

/* The attention core, which selective recompute reruns (Korthikanti et al.
 * 2022): a block's batched GEMMs, softmax and fused attention. */
static int is_core(const st_op *op)
{
    return is_block(op->layer) &&
           (op->kind == ST_OP_BMM || op->kind == ST_OP_SOFTMAX || op->kind == ST_OP_ATTENTION);
}

typedef struct lists {
    st_oplist fwd, bwd, core; /* forward, backward, attention core (selective recompute) */
    long long blocks;         /* blocks generated (all of one stage's share: L / V) */
} lists;

static void lists_free(lists *l)
{
    st_oplist_free(&l->fwd);
    st_oplist_free(&l->bwd);
    st_oplist_free(&l->core);
}

/* The block GEMMs that take a LoRA adapter: every projection but the MoE
 * router, whose n (the experts, 8 for Mixtral) no adapter's rank fits and
 * which PEFT's usual targets leave out */
static int lora_target(const st_op *op)
{
    return op->kind == ST_OP_GEMM && !strstr(op->name, "router");
}

static int push_lora(st_oplist *l, const st_op *base, int r, st_error *err)
{
    st_op a = *base, b = *base;
    snprintf(a.name, sizeof a.name, "%.50s.lora_a", base->name);
    snprintf(b.name, sizeof b.name, "%.50s.lora_b", base->name);
    a.n = r;
    b.k = r;
    a.batch = b.batch = base->batch;
    a.bias = b.bias = 0; /* the adapters have no bias */
    st_op_cost(&a);
    st_op_cost(&b);
    int rc = st_oplist_push(l, &a, err);
    return rc ? rc : st_oplist_push(l, &b, err);
}

/* The busiest EP rank's routed tokens over an average rank's, for the
 * busiest expert at x times the mean: that expert's rank holds E / EP
 * experts (n), and the other experts share the remaining tokens evenly,
 * (E - x) / (E - 1) of the mean each, so the rank holds
 * x + (n - 1)(E - x)/(E - 1) means against n on average. One expert a rank
 * (EP = E): x. Every expert on each rank (EP 1, experts TP-sharded): 1,
 * since a rank that holds all experts gets every token whatever their
 * spread. */
static double moe_rank_load(const st_transformer *tf, int ep, double x)
{
    double E = (double)tf->experts;
    if (!(x > 1) || E <= 1 || ep <= 1)
        return 1; /* every rank holds every expert: exactly 1, not 1 + an ulp */
    double n = E / ep;
    double f = (x + (n - 1) * (E - x) / (E - 1)) / n;
    return f > 1 ? f : 1;
}

static int build(const st_model *m, const st_train_cfg *k, long long mb, lists *out, st_error *err)
{
    st_model ms = *m; /* shallow: a transformer holds no pointers we free */
    st_transformer *tf = &ms.tf;
    long long V = (long long)k->pp * (k->sched == ST_PP_INTERLEAVED ? k->chunks : 1);
    long long L = m->tf.layers + m->tf.encoder_layers;
    memset(out, 0, sizeof *out);
    double moe_load = moe_rank_load(&m->tf, k->ep, k->moe_imbalance); /* before sharding: all experts */
    st_transformer_shard(tf, k->tp, k->ep);
    /* one stage's blocks; an encoder-decoder keeps its proportions */
    long long per = L / V > 0 ? L / V : 1; /* cost per block; end stages may have none */
    if (m->tf.encoder_layers) {
        tf->encoder_layers = per * m->tf.encoder_layers / L;
        tf->layers = per - tf->encoder_layers;
    } else {
        tf->layers = per;
    }
    out->blocks = per;
    st_gen_opts o;
    st_gen_opts_default(&o, &ms);
    o.phase = ST_PHASE_TRAIN;
    o.batch = mb;
    o.seq = k->seq / k->cp;
    o.dtype = k->dtype == ST_FP8 ? ST_BF16 : k->dtype;
    o.attn = k->fa3 ? ST_ATTN_FLASH3 : k->flash ? ST_ATTN_FLASH : ST_ATTN_EAGER;
    o.with_optimizer = 0;
    int rc = st_transformer_ops(&ms, &o, &out->fwd, err);
    if (rc) {
        lists_free(out);
        return rc;
    }
    size_t n0 = out->fwd.n;
    for (size_t i = 0; i < n0 && !rc; i++) {
        st_op *op = &out->fwd.ops[i];
        int blk = is_block(op->layer);
        /* CP (ring attention, fused: st_train_check): every query of this
         * rank meets all S keys, or under a causal mask the keys before it.
         * Megatron-LM's load balance gives rank i chunks i and 2 CP - 1 - i
         * of the 2 CP chunks of c = S / 2 CP tokens, so every rank has
         * (S^2 / CP + S / CP) / 2 unmasked pairs, the whole sequence's over
         * CP. One causal op of q = S / CP queries against (S + q) / 2 keys
         * has exactly that many (q (kv - q) + q (q + 1) / 2); an integer,
         * since 2 CP divides S */
        if (k->cp > 1 && blk && op->kind == ST_OP_ATTENTION)
            op->kv_len = op->causal ? op->kv_len * (k->cp + 1) / 2 : op->kv_len * k->cp;
        /* SP: norms, residual adds and dropouts on S/tp tokens */
        if (k->sp && (op->kind == ST_OP_LAYERNORM || op->kind == ST_OP_RMSNORM ||
                      (op->kind == ST_OP_ELEMENTWISE && strstr(op->name, "residual"))))
            op->rows = (op->rows + k->tp - 1) / k->tp;
        /* MoE: the busiest expert sets the grouped GEMM's pace */
        if (op->kind == ST_OP_MOE_EXPERTS && moe_load > 1)
            op->m = (long long)ceil(op->m * moe_load);
        /* FP8: block GEMMs in FP8 */
        if (k->dtype == ST_FP8 && blk && (op->kind == ST_OP_GEMM || op->kind == ST_OP_MOE_EXPERTS))
            op->dtype = ST_FP8;
        st_op_cost(op);
        if (k->dtype == ST_FP8 && blk && (op->kind == ST_OP_GEMM || op->kind == ST_OP_MOE_EXPERTS)) {
            /* cast the BF16 input to FP8 (read 2 bytes, write 1 per element) */
            st_op cast = st_op_input_cast(op, ST_BF16);
            rc = st_oplist_push(&out->fwd, &cast, err);
            op = &out->fwd.ops[i];
        }
        if (!rc && k->lora_rank && blk && lora_target(op))
            rc = push_lora(&out->fwd, op, k->lora_rank, err);
    }
    /* LoRA: nothing below the adapters needs the input gradient at the first
     * block's input either, but every GEMM still passes dgrad on */
    if (!rc) {
        st_oplist all = {0};
        for (size_t i = 0; i < out->fwd.n && !rc; i++)
            rc = st_oplist_push(&all, &out->fwd.ops[i], err);
        if (!rc)
            rc = st_ops_add_backward(&all, out->fwd.n, 0, err);
        for (size_t i = out->fwd.n; i < all.n && !rc; i++) {
            const st_op *b = &all.ops[i];
            int frozen = k->lora_rank && b->grad == ST_GRAD_WEIGHT && !strstr(b->name, ".lora_");
            if (!frozen)
                rc = st_oplist_push(&out->bwd, b, err);
        }
        st_oplist_free(&all);
    }
    for (size_t i = 0; i < out->fwd.n && !rc; i++) {
        const st_op *op = &out->fwd.ops[i];
        if (is_core(op))
            rc = st_oplist_push(&out->core, op, err);
    }
    if (rc)
        lists_free(out);
    return rc;
}

/* FLOPs of one sequence's training step on the unsharded model with
 * attention kernel `attn`: the forward, and the backward without the
 * weight gradients LoRA freezes (each weight gradient costs its GEMM's
 * forward; the adapters keep theirs, attention its dQ, dK, dV and dP);
 * *again: the forward work that recompute runs a second time. One
 * sequence, times the global batch by the caller: FLOPs are linear in the
 * batch, and a whole-batch list can pass the 2^53 count that one
 * sequence's does not. */
static int iteration_flops(const st_model *m, const st_train_cfg *k, st_attn_impl attn, double *step,
                           double *again, st_error *err)
{
    st_model full = *m;
    st_gen_opts go;
    st_gen_opts_default(&go, &full);
    go.phase = ST_PHASE_PREFILL;
    go.batch = 1;
    go.seq = k->seq;
    go.attn = attn;
    go.dtype = k->dtype == ST_FP8 ? ST_BF16 : k->dtype;
    st_oplist fo = {0}, all = {0};
    int rc = st_transformer_ops(&full, &go, &fo, err);
    for (size_t i = 0; i < fo.n && !rc; i++) {
        rc = st_oplist_push(&all, &fo.ops[i], err);
        if (!rc && k->lora_rank && is_block(fo.ops[i].layer) && lora_target(&fo.ops[i]))
            rc = push_lora(&all, &fo.ops[i], k->lora_rank, err);
    }
    size_t nf = all.n;
    double fwd = st_oplist_total_flops(&all), frozen = 0, re = 0; /* before the backward joins it */
    if (!rc && k->lora_rank) {
        rc = st_ops_add_backward(&all, nf, 0, err);
        for (size_t i = nf; i < all.n && !rc; i++) {
            const st_op *b = &all.ops[i];
            if (b->grad == ST_GRAD_WEIGHT && !strstr(b->name, ".lora_"))
                frozen += b->flops * (double)b->repeat;
        }
    }
    for (size_t i = 0; i < nf && !rc; i++) {
        const st_op *op = &all.ops[i];
        if ((k->recompute == ST_RECOMP_FULL && is_block(op->layer)) ||
            (k->recompute == ST_RECOMP_SELECTIVE && is_core(op)))
            re += op->flops * (double)op->repeat;
    }
    st_oplist_free(&fo);
    st_oplist_free(&all);
    if (rc)
        return rc;
    *step = 3 * fwd - frozen;
    if (again)
        *again = re;
    return 0;
}

typedef struct parts {
    double blk, embed, head; /* seconds: one block, the embedding, final norm + head */
    double lo_rel, hi_rel;   /* the step's correlated band, relative (the low end before its floor) */
    double floor_rel;        /* the kernels' physical floors, relative (st_step.floor_s) */
    double total;            /* the step's time (the band's weight) */
    double flops;
} parts;

static int compose_once(const st_gpu *g, const st_gpu_coef *coef, const st_oplist *ops, long long blocks,
                        const st_compose_opts *o, parts *p, st_error *err)
{
    memset(p, 0, sizeof *p);
    if (!ops->n)
        return 0;
    st_step *s = malloc(sizeof *s);
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = st_compose(g, coef, ops, o, s, err);
    if (!rc) {
        double b = 0;
        for (size_t i = 0; i < s->n_layers; i++) {
            const st_layer_time *l = &s->layers[i];
            if (is_block(l->layer))
                b += l->time_s;
            else if (!strcmp(l->layer, "embed"))
                p->embed += l->time_s;
            else
                p->head += l->time_s;
        }
        p->blk = blocks ? b / blocks : 0;
        /* the band's low end before the floor clamps it: the band is
         * symmetric in log space, so total / hi; the floor is combined
         * apart, as st_compose clamps a whole step's band */
        p->lo_rel = s->hi_s > 0 ? s->total_s / s->hi_s : 1;
        p->floor_rel = s->total_s > 0 ? s->floor_s / s->total_s : 0;
        p->hi_rel = s->total_s > 0 ? s->hi_s / s->total_s : 1;
        p->total = s->total_s;
        p->flops = s->flops;
    }
    free(s);
    return rc;
}

static int compose_parts(const st_gpu *g, const st_gpu_coef *coef, const st_oplist *ops, long long blocks,
                         const st_train_cfg *k, parts *p, st_error *err)
{
    st_compose_opts o;
    st_compose_opts_default(&o);
    o.fused = k->fused;
    o.torch_ver = k->torch_ver;
    o.sustained = !k->isolated && g->tc_sustained_w_per_tflops > 0;
    int rc = compose_once(g, coef, ops, blocks, &o, p, err);
    if (rc || !o.sustained)
        return rc;
    /* the power limit only slows kernels, but where the host sets the pace
     * a slower kernel moves time between the timeline's layers (a later
     * GPU start shifts the next layer's wait into this one): no part may
     * come out faster than with every kernel at boost */
    parts iso;
    o.sustained = 0;
    if ((rc = compose_once(g, coef, ops, blocks, &o, &iso, err)))
        return rc;
    p->blk = fmax(p->blk, iso.blk);
    p->embed = fmax(p->embed, iso.embed);
    p->head = fmax(p->head, iso.head);
    double t = fmax(p->total, iso.total);
    /* nor the band's ends (relative to the total) */
    if (t > 0) {
        p->lo_rel = fmax(p->lo_rel * p->total, iso.lo_rel * iso.total) / t;
        p->hi_rel = fmax(p->hi_rel * p->total, iso.hi_rel * iso.total) / t;
    }
    p->total = t;
    return 0;
}

/* Recompute: every block of the backward p reruns the block work of r
 * (the forward, or its attention core); the step's band takes the rerun's
 * at its share of the time. */
static void add_rerun(parts *p, const parts *r, long long blocks)
{
    double add = r->blk * (double)blocks, t = p->total + add;
    if (t > 0) {
        p->lo_rel = (p->lo_rel * p->total + r->lo_rel * add) / t;
        p->hi_rel = (p->hi_rel * p->total + r->hi_rel * add) / t;
        p->floor_rel = (p->floor_rel * p->total + r->floor_rel * add) / t;
    }
    p->total = t;
    p->blk += r->blk;
}

/* ---- communication -------------------------------------------------------------- */
/* the GPUs a configuration runs on */
#define JOB(k) ((long long)(k)->dp * (k)->tp * (k)->pp * (k)->cp)

/* n GPUs `stride` apart, per_node of them on a node (the stride places
 * them on a ring or torus node's grid), one of the groups like it in a job
 * of `job` GPUs (its worst-placed copy's network levels; chain != 0: a
 * send/recv pair, one hop of chains of that many, st_net_group_place_job) */
static double coll_time(const st_cluster *c, st_coll coll, int n, int per_node, int stride, long long job,
                        int chain, double bytes, st_error *err, int *rc)
{
    st_net_group g;
    st_coll_est e;
    if (*rc || n <= 1 || bytes <= 0)
        return 0;
    if ((*rc = st_net_group_place_job(c, n, per_node, stride, job, chain, &g, err)) || (*rc = st_coll_estimate(&g, coll, ST_ALGO_AUTO, bytes, &e, err)))
        return 0;
    return e.time_s;
}

static int per_node_of(int G, int stride, int n)
{
    if (stride >= G)
        return 1;
    int fit = G / stride;
    return n < fit ? n : fit;
}

/* ---- the pipeline schedule -------------------------------------------------------- */
typedef struct task {
    int fwd;       /* 1 forward, 0 backward */
    int vs;        /* virtual stage */
    long long mb;
    double start, end;
} task;

typedef struct sched {
    task **t;      /* per device, in order */
    int *n;
    double *busy;
    double *inflight; /* max microbatch-blocks in flight, in units of one stage's blocks */
} sched;

static void sched_free(sched *s, int pp)
{
    if (s->t)
        for (int d = 0; d < pp; d++)
            free(s->t[d]);
    free(s->t), free(s->n), free(s->busy), free(s->inflight);
}

/* The order each device runs its tasks in. */
static int order(const st_train_cfg *k, int d, task *out)
{
    int pp = k->pp, v = k->sched == ST_PP_INTERLEAVED ? k->chunks : 1;
    long long M = k->microbatches, total = M * v, n = 0;
    if (k->sched == ST_PP_GPIPE) {
        for (long long m = 0; m < M; m++)
            out[n++] = (task){1, d, m, 0, 0};
        for (long long m = 0; m < M; m++)
            out[n++] = (task){0, d, m, 0, 0};
        return (int)n;
    }
    /* 1F1B, and Megatron's interleaved order for v > 1: forward k-th task
     * is microbatch (k / (pp v)) pp + k % pp of chunk (k / pp) % v; backward
     * the same with the chunks reversed */
    long long warm = v == 1 ? pp - d - 1 : (long long)(pp - d - 1) * 2 + (long long)(v - 1) * pp;
    if (warm > total)
        warm = total;
    long long f = 0, b = 0;
#define FW(kk) (task){1, (int)(((kk) / pp) % v) * pp + d, ((kk) / ((long long)pp * v)) * pp + (kk) % pp, 0, 0}
#define BW(kk) (task){0, (int)(v - 1 - ((kk) / pp) % v) * pp + d, ((kk) / ((long long)pp * v)) * pp + (kk) % pp, 0, 0}
    for (; f < warm; f++)
        out[n++] = FW(f);
    while (f < total) {
        out[n++] = FW(f);
        f++;
        out[n++] = BW(b);
        b++;
    }
    while (b < total) {
        out[n++] = BW(b);
        b++;
    }
#undef FW
#undef BW
    return (int)n;
}

/* Run the schedule: F(vs, m) after F(vs-1, m) has arrived, B(vs, m) after
 * B(vs+1, m) (the last virtual stage: after its own F). */
static int simulate(const st_train_cfg *k, const double *F, const double *B, double p2p, sched *s, st_error *err)
{
    int pp = k->pp, v = k->sched == ST_PP_INTERLEAVED ? k->chunks : 1, V = pp * v;
    long long M = k->microbatches;
    memset(s, 0, sizeof *s);
    s->t = calloc((size_t)pp, sizeof *s->t);
    s->n = calloc((size_t)pp, sizeof *s->n);
    s->busy = calloc((size_t)pp, sizeof *s->busy);
    s->inflight = calloc((size_t)pp, sizeof *s->inflight);
    double *fdone = malloc((size_t)V * M * sizeof(double)), *bdone = malloc((size_t)V * M * sizeof(double));
    int *next = calloc((size_t)pp, sizeof(int));
    double *free_at = calloc((size_t)pp, sizeof(double));
    int rc = 0;
    if (!s->t || !s->n || !s->busy || !s->inflight || !fdone || !bdone || !next || !free_at)
        rc = st_error_set(err, ST_ENOMEM, "out of memory");
    for (int d = 0; d < pp && !rc; d++) {
        s->t[d] = malloc((size_t)(2 * M * v) * sizeof(task));
        if (!s->t[d])
            rc = st_error_set(err, ST_ENOMEM, "out of memory");
        else
            s->n[d] = order(k, d, s->t[d]);
    }
    for (long long i = 0; !rc && i < (long long)V * M; i++)
        fdone[i] = bdone[i] = -1;
    long long left = 0;
    for (int d = 0; d < pp && !rc; d++)
        left += s->n[d];
    while (!rc && left > 0) {
        int progressed = 0;
        for (int d = 0; d < pp; d++) {
            while (next[d] < s->n[d]) {
                task *t = &s->t[d][next[d]];
                double ready;
                if (t->fwd)
                    ready = t->vs == 0 ? 0 : fdone[(long long)(t->vs - 1) * M + t->mb];
                else
                    ready = t->vs == V - 1 ? fdone[(long long)t->vs * M + t->mb] : bdone[(long long)(t->vs + 1) * M + t->mb];
                if (ready < 0)
                    break;
                if (t->vs > 0 && t->fwd)
                    ready += p2p;
                if (!t->fwd && t->vs < V - 1)
                    ready += p2p;
                t->start = ready > free_at[d] ? ready : free_at[d];
                double dur = t->fwd ? F[t->vs] : B[t->vs];
                t->end = t->start + dur;
                free_at[d] = t->end;
                s->busy[d] += dur;
                (t->fwd ? fdone : bdone)[(long long)t->vs * M + t->mb] = t->end;
                next[d]++;
                left--;
                progressed = 1;
            }
        }
        if (!progressed && left > 0)
            rc = st_error_set(err, ST_EINVAL, "pipeline schedule deadlocked (internal error)");
    }
    /* microbatch-chunks in flight (forward done, backward not yet) */
    for (int d = 0; d < pp && !rc; d++) {
        double cur = 0, mx = 0;
        for (int i = 0; i < s->n[d]; i++) {
            cur += s->t[d][i].fwd ? 1.0 / v : -1.0 / v;
            mx = cur > mx ? cur : mx;
        }
        s->inflight[d] = mx;
    }
    free(fdone), free(bdone), free(next), free(free_at);
    if (rc)
        sched_free(s, pp);
    return rc;
}

/* The schedule's own bubble: the idle share of the busiest stage with no
 * time between stages, (p - 1) / (m + p - 1) for equal stages. The
 * pipeline's send/recv lengthens the iteration too, but that time is
 * communication (comm_s carries it), not the schedule's idle: counted in
 * both, the bubble of a slow link stayed above 5% at any microbatch count. */
static void bubble_of(const sched *S, int pp, double *bubble, double *inflight)
{
    double end = 0, busy = 0, fl = 0;
    for (int d = 0; d < pp; d++) {
        double e = S->t[d][S->n[d] - 1].end;
        end = e > end ? e : end;
        busy = S->busy[d] > busy ? S->busy[d] : busy;
        fl = S->inflight[d] > fl ? S->inflight[d] : fl;
    }
    *bubble = end > 0 ? 1 - busy / end : 0;
    if (inflight)
        *inflight = fl;
}

/* the schedule run again without the send/recv (bubble_of S itself where
 * it had none) */
static int schedule_bubble(const st_train_cfg *k, const double *F, const double *B, double *bubble,
                           double *inflight, st_error *err)
{
    sched S;
    int rc = simulate(k, F, B, 0, &S, err);
    if (rc)
        return rc;
    bubble_of(&S, k->pp, bubble, inflight);
    sched_free(&S, k->pp);
    return 0;
}

int st_pipeline_sim(const st_train_cfg *k, double f, double b, double *bubble, double *inflight, st_error *err)
{
    int v = k->sched == ST_PP_INTERLEAVED ? k->chunks : 1, V = k->pp * v;
    if (k->pp < 1 || v < 1 || k->microbatches < 1 || (v > 1 && k->microbatches % k->pp))
        return st_error_set(err, ST_EINVAL, "pipeline: PP, chunks and microbatches must be >= 1 (interleaved: "
                            "microbatches a multiple of PP)");
    double *F = malloc((size_t)V * sizeof(double)), *B = malloc((size_t)V * sizeof(double));
    if (!F || !B) {
        free(F), free(B);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (int i = 0; i < V; i++)
        F[i] = f / v, B[i] = b / v;
    int rc = schedule_bubble(k, F, B, bubble, inflight, err);
    free(F), free(B);
    return rc;
}

/* ---- parameters --------------------------------------------------------------------- */
/* Activation bytes one block keeps for its backward, per token of the
 * microbatch (multiply by b s), with e bytes per element: Korthikanti et
 * al. 2022's accounting (Table 2) term by term, so that it follows the
 * architecture instead of assuming GPT's 4h GELU MLP and dropout:
 *   kept whole under TP (split by SP): the two norms' inputs, the QKV and
 *     first MLP GEMMs' inputs (e h each), one-byte keep masks of the
 *     hidden dropouts (h each, when the model has dropout);
 *   split by TP: Q and K, V, the output projection's input (e (2q + 2kv),
 *     q = heads x head_dim, kv = KV heads x head_dim), and the MLP's
 *     intermediates: a GELU MLP keeps the activation's input and output
 *     (2 e f); a gated one eagerly keeps the gate, the activation's output,
 *     the up projection and their product (4 e f), fused (Megatron-LM's
 *     swiglu, Transformer Engine) the gate and up only, recomputing the
 *     rest (3 e f);
 *   an MoE block instead sends top_k copies of each token to its experts:
 *     their inputs and outputs (2 top_k e h, kept whole), the experts'
 *     intermediates at expert_ffn_hidden (top_k times the MLP's, split by
 *     TP), the router's fp32 logits (4 x experts);
 *   the attention scores (eager attention, no recompute) are separate.
 * For GPT (q = kv = h, f = 4h, GELU, dropout) it is Korthikanti's
 * (16e + 2) h, 4e + 2 of it kept whole. *rep gets the part TP keeps whole. */
static double block_act_per_token(const st_transformer *tf, int moe, int fused, double e, double imb, double *rep)
{
    double h = (double)tf->hidden, q = (double)tf->heads * tf->head_dim, kv = (double)tf->kv_heads * tf->head_dim;
    double masks = tf->hidden_dropout > 0 ? 2 * h : 0;
    /* f-wide tensors the MLP keeps: a gated MLP's gate, up, activation
     * and product (the activation recomputed in a fused kernel); GELU's
     * input and output; ReLU only its output, from which its backward
     * takes the mask (PyTorch's threshold_backward) */
    double mult = tf->gated_mlp ? (fused ? 3 : 4) : tf->activation == ST_ACT_RELU ? 1 : 2;
    double whole = 4 * e * h + masks;
    double split = e * (2 * q + 2 * kv);
    if (moe) {
        /* the routed copies (dispatched in, expert outputs back) and the
         * experts' intermediates sit on the rank whose experts got them:
         * the busiest holds imb times the average */
        double k = (double)tf->top_k;
        whole += imb * 2 * k * e * h + 4.0 * (double)tf->experts;
        split += imb * k * mult * e * (double)tf->expert_ffn_hidden;
    } else {
        split += mult * e * (double)tf->ffn_hidden;
    }
    *rep = whole;
    return whole + split;
}

/* The average over a model's blocks of a quantity that is `dense` on a
 * dense block and `moe` on an MoE block (one block in moe_every). */
static double block_mix(const st_transformer *tf, double dense, double moe)
{
    long long n_all = tf->layers + tf->encoder_layers;
    long long n_moe = tf->experts ? n_all / tf->moe_every : 0;
    return ((double)(n_all - n_moe) * dense + (double)n_moe * moe) / (double)n_all;
}

/* LoRA adapter parameters of one block (rank r on every linear layer). */
static double lora_params(const st_transformer *tf, int r, int tp)
{
    double h = (double)tf->hidden, q = (double)(tf->heads * tf->head_dim), kv = (double)(tf->kv_heads * tf->head_dim);
    double f = (double)tf->ffn_hidden;
    double mats = r * ((h + q + 2 * kv) + (q + h) + (tf->gated_mlp ? 2 : 1) * (h + f) + (f + h));
    return mats / tp;
}

/* ---- the evaluation -------------------------------------------------------------------- */
typedef struct ev {
    int pid, tid;
    const char *name;
    long long mb;
    double ts, dur;
} ev;

/* Communication inside one model chunk's forward or backward task, for the
 * trace: the exposed collectives that lengthen the task (TP, CP, EP) and
 * ZeRO-3's gathers and reduce-scatters, which run beside its compute (the
 * exposed part of those is in the task's length too). */
typedef struct task_comm {
    double tp, cp, ep, z3;
} task_comm;

typedef struct trace_comm {
    const task_comm *f, *b; /* per virtual stage */
    double p2p;             /* one microbatch's pipeline send/recv */
    int tp_sp;              /* TP runs as reduce-scatter + all-gather (SP) */
} trace_comm;

/* What a forward or backward task is made of, in the order it runs, for
 * the trace's layer spans (each task's parts add up to its length): per
 * block, its compute and its exposed collectives (TP, CP, EP, ZeRO-3
 * beyond its prefetch) after it; the embedding with the TP collective of
 * its output (first stage), the final norm, head and loss with the head's
 * (last stage); ZeRO-3's exposed gather before a chunk's first block, and
 * its embedding and head collectives. */
typedef struct trace_parts {
    long long layers; /* the model's blocks (encoder and decoder) */
    double cmp[2], blk[2];        /* [0] forward, [1] backward: a block's compute, and with its exposed comm */
    double tp[2], cp[2], ep[2], z3[2]; /* a block's exposed collectives */
    double emb[2], head[2];       /* compute */
    double end0[2], endl[2];      /* the TP collectives at the first and last stage */
    double fill[2];               /* ZeRO-3: a chunk's first gather (and reduce-scatter), exposed */
    double z3_emb, z3_head;       /* ZeRO-3: the ends' three collectives, a third forward */
    st_recompute recompute;       /* a backward block reruns its forward (full) or attention core */
} trace_parts;

/* a task's layer spans: at most this many events in all, else the trace
 * keeps its task spans only (otherData layers false) */
#define TRACE_MAX_LAYER_EVENTS 400000

static void trace_event(st_json *j, const char *name, const char *cat, int pid, int tid, double ts, double dur)
{
    st_json_begin_object(j, NULL);
    st_json_string(j, "name", name);
    st_json_string(j, "cat", cat);
    st_json_string(j, "ph", "X");
    st_json_int(j, "pid", pid);
    st_json_int(j, "tid", tid);
    st_json_number(j, "ts", ts * 1e6);
    st_json_number(j, "dur", dur * 1e6);
    st_json_end_object(j);
}

static void trace_thread_name(st_json *j, int pid, int tid, const char *name)
{
    st_json_begin_object(j, NULL);
    st_json_string(j, "name", "thread_name");
    st_json_string(j, "ph", "M");
    st_json_int(j, "pid", pid);
    st_json_int(j, "tid", tid);
    st_json_begin_object(j, "args");
    st_json_string(j, "name", name);
    st_json_end_object(j);
    st_json_end_object(j);
}

/* Threads of a stage's trace: 0 the tasks, their layers and the optimizer
 * step, 1 the collectives a task waits on (after the layer that issues them;
 * past TRACE_MAX_LAYER_EVENTS, without the layers, drawn from the task's
 * start, one after the other), 2 the communication that overlaps compute
 * (ZeRO-3 per task, DP buckets, ZeRO-1/2's weight all-gather), 3 the
 * pipeline's sends. */
/* The first block of virtual stage vs (stages hold consecutive blocks). */
static long long first_layer(long long L, long long V, int vs)
{
    long long first = 0;
    for (long long i = 0; i < vs; i++)
        first += st_pipeline_stage_layers(L, V, i);
    return first;
}

/* One task's layer spans on thread 0 (category "layer") and its exposed
 * collectives on thread 1 where they fall: parts in the order the task runs
 * them, scaled to the task's own length (they add up to it). */
static void trace_task_layers(st_json *j, int d, const task *t, const trace_parts *lp, const trace_comm *tc,
                              long long V)
{
    int w = t->fwd ? 0 : 1;
    long long nbl = st_pipeline_stage_layers(lp->layers, V, t->vs), first = first_layer(lp->layers, V, t->vs);
    int is_first = t->vs == 0, is_last = t->vs == V - 1;
    double zw = (is_first ? lp->z3_emb : 0) + (is_last ? lp->z3_head : 0);
    double sum = (nbl > 0 ? lp->fill[w] : 0) + (double)nbl * lp->blk[w] + (is_first ? lp->emb[w] + lp->end0[w] : 0) +
                 (is_last ? lp->head[w] + lp->endl[w] : 0) + (t->fwd ? zw / 3 : 2 * zw / 3);
    double dur = t->end - t->start, sc = sum > 0 ? dur / sum : 0, at = t->start;
    /* a block's two (Megatron-LM: after attention and after the MLP), as one span */
    const char *tp_name = tc->tp_sp ? "TP reduce-scatters + all-gathers (attention, MLP)"
                                    : "TP all-reduces (attention, MLP)";
    char nm[64];
    /* a part of the task: compute on thread 0, a collective on thread 1 */
#define PART(NAME, CAT, TID, LEN)                                   \
    do {                                                            \
        double len_ = (LEN) * sc;                                   \
        if (len_ > 0)                                               \
            trace_event(j, NAME, CAT, d, TID, at, len_);            \
        at += len_;                                                 \
    } while (0)
    /* the block's exposed collectives after its compute */
#define BLOCK_COMM()                                                                  \
    do {                                                                              \
        PART(tp_name, "comm", 1, lp->tp[w]);                                          \
        PART("CP ring exchange (exposed)", "comm", 1, lp->cp[w]);                    \
        PART("EP all-to-all", "comm", 1, lp->ep[w]);                                  \
        PART(t->fwd ? "ZeRO-3 all-gather (exposed)" : "ZeRO-3 all-gather + reduce-scatter (exposed)", "comm", 1, \
             lp->z3[w]);                                                              \
    } while (0)
    if (t->fwd) {
        if (nbl > 0)
            PART("ZeRO-3 all-gather of the first block (exposed)", "comm", 1, lp->fill[0]);
        if (is_first) {
            PART("embedding", "layer", 0, lp->emb[0]);
            PART(tc->tp_sp ? "TP reduce-scatter of the embedding" : "TP all-reduce of the embedding", "comm", 1,
                 lp->end0[0]);
        }
        for (long long i = 0; i < nbl; i++) {
            snprintf(nm, sizeof nm, "layer %lld", first + i);
            PART(nm, "layer", 0, lp->cmp[0]);
            BLOCK_COMM();
        }
        if (is_last) {
            PART("final norm, head and loss", "layer", 0, lp->head[0]);
            PART("TP all-gather of the head's input", "comm", 1, lp->endl[0]);
        }
        PART("ZeRO-3 all-gather of the embedding and head", "comm", 1, zw / 3);
    } else {
        if (is_last) {
            PART("final norm, head and loss", "layer", 0, lp->head[1]);
            PART(tc->tp_sp ? "TP reduce-scatter of the head's input gradient"
                           : "TP all-reduce of the head's input gradient",
                 "comm", 1, lp->endl[1]);
        }
        for (long long i = nbl - 1; i >= 0; i--) {
            snprintf(nm, sizeof nm, "layer %lld%s", first + i,
                     lp->recompute == ST_RECOMP_FULL        ? " (forward rerun, backward)"
                     : lp->recompute == ST_RECOMP_SELECTIVE ? " (attention rerun, backward)"
                                                            : "");
            PART(nm, "layer", 0, lp->cmp[1]);
            BLOCK_COMM();
        }
        if (is_first) {
            PART("embedding", "layer", 0, lp->emb[1]);
            PART("TP all-gather of the embedding's gradient", "comm", 1, lp->end0[1]);
        }
        if (nbl > 0)
            PART("ZeRO-3 all-gather + reduce-scatter of the first block (exposed)", "comm", 1, lp->fill[1]);
        PART("ZeRO-3 collectives of the embedding and head", "comm", 1, 2 * zw / 3);
    }
#undef BLOCK_COMM
#undef PART
}

static void write_trace(FILE *f, const sched *s, const st_train_cfg *k, const trace_comm *tc, const trace_parts *lp,
                        const double *dp_start, const double *dp_end, double pipe_end, double opt_s, double zero_s,
                        st_train_result *r)
{
    long long cap = ST_TRAIN_TRACE_MAX_TASKS / k->pp;
    long long V = (long long)k->pp * (k->sched == ST_PP_INTERLEAVED ? k->chunks : 1);
    r->trace_tasks = r->trace_tasks_total = 0;
    double events = 0; /* layer spans and their collectives, at most */
    for (int d = 0; d < k->pp; d++) {
        r->trace_tasks_total += s->n[d];
        r->trace_tasks += s->n[d] < cap ? s->n[d] : cap;
        /* at most: per block its span and 4 collectives (TP, CP, EP,
         * ZeRO-3), per task 9 more (ends, fills, ZeRO-3 ends) */
        for (int i = 0; i < s->n[d] && i < cap; i++)
            events += 9.0 + 5.0 * (double)st_pipeline_stage_layers(lp->layers, V, s->t[d][i].vs);
    }
    int layers = lp && events <= TRACE_MAX_LAYER_EVENTS;
    st_json j;
    st_json_init(&j, f, 0);
    st_json_begin_object(&j, NULL);
    st_json_string(&j, "displayTimeUnit", "ms");
    st_json_begin_array(&j, "traceEvents");
    for (int d = 0; d < k->pp; d++) {
        char nm[48];
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "name", "process_name");
        st_json_string(&j, "ph", "M");
        st_json_int(&j, "pid", d);
        st_json_begin_object(&j, "args");
        snprintf(nm, sizeof nm, "pipeline stage %d (GPU 0 of its %d)", d, k->dp * k->tp * k->cp);
        st_json_string(&j, "name", nm);
        st_json_end_object(&j);
        st_json_end_object(&j);
        trace_thread_name(&j, d, 0, "compute");
        trace_thread_name(&j, d, 1, "communication the task waits on");
        trace_thread_name(&j, d, 2, "communication beside compute");
        if (k->pp > 1)
            trace_thread_name(&j, d, 3, "pipeline send/recv");
        for (int i = 0; i < s->n[d] && i < cap; i++) {
            const task *t = &s->t[d][i];
            snprintf(nm, sizeof nm, "%s mb%lld", t->fwd ? "F" : "B", t->mb);
            if (k->sched == ST_PP_INTERLEAVED)
                snprintf(nm, sizeof nm, "%s mb%lld chunk%d", t->fwd ? "F" : "B", t->mb, t->vs / k->pp);
            trace_event(&j, nm, t->fwd ? "forward" : "backward", d, 0, t->start, t->end - t->start);
            const task_comm *c = t->fwd ? &tc->f[t->vs] : &tc->b[t->vs];
            double at = t->start;
            if (layers) {
                /* the task's layers, each with its collectives where they fall */
                trace_task_layers(&j, d, t, lp, tc, V);
            } else if (c->tp > 0) {
                trace_event(&j, tc->tp_sp ? "TP reduce-scatter + all-gather" : "TP all-reduce", "comm", d, 1, at,
                            c->tp);
                at += c->tp;
            }
            if (c->cp > 0 && !layers) {
                trace_event(&j, "CP ring exchange (exposed)", "comm", d, 1, at, c->cp);
                at += c->cp;
            }
            if (c->ep > 0 && !layers)
                trace_event(&j, "EP all-to-all", "comm", d, 1, at, c->ep);
            if (c->z3 > 0)
                trace_event(&j, t->fwd ? "ZeRO-3 all-gather of weights" : "ZeRO-3 all-gather + reduce-scatter",
                            "comm", d, 2, t->start, c->z3);
            /* the activation goes downstream after a forward, its gradient
             * upstream after a backward */
            if (tc->p2p > 0 && (t->fwd ? t->vs < V - 1 : t->vs > 0))
                trace_event(&j, t->fwd ? "PP send activation" : "PP send gradient", "comm", d, 3, t->end, tc->p2p);
        }
        if (dp_end[d] > dp_start[d])
            trace_event(&j, k->zero >= 1 ? "DP reduce-scatter (buckets)" : "DP all-reduce (buckets)", "comm", d, 2,
                        dp_start[d], dp_end[d] - dp_start[d]);
        trace_event(&j, "optimizer step", "optimizer", d, 0, pipe_end, opt_s);
        if (zero_s > 0)
            trace_event(&j, "ZeRO all-gather of weights", "comm", d, 2, pipe_end + opt_s, zero_s);
    }
    st_json_end_array(&j);
    /* what the trace holds: all of the iteration's tasks, or each stage's first */
    st_json_begin_object(&j, "otherData");
    st_json_int(&j, "tasks_written", r->trace_tasks);
    st_json_int(&j, "tasks_total", r->trace_tasks_total);
    st_json_int(&j, "tasks_per_stage_max", cap);
    /* each task's layers and their collectives, or (past
     * TRACE_MAX_LAYER_EVENTS events) its collectives drawn from its start */
    st_json_bool(&j, "layers", layers);
    st_json_end_object(&j);
    st_json_end_object(&j);
    st_json_finish(&j);
}

/* ---- the contention memo ----------------------------------------------------
 * The DP-against-TP slow-down is a pure function of (collective, bucket,
 * activation all-reduce, TP, DP ranks) on one cluster, and simulating it
 * costs O(n^2) chunk transfers: a plan search asks for the same few shapes
 * (tens to hundreds) thousands of times, so a list searched in order under
 * a mutex is enough. Two threads that miss together both compute the same
 * value, so results never depend on thread count or order. */
typedef struct memo_ent {
    int coll, tp, n, stride;
    double bucket, act, value;
} memo_ent;

struct st_train_memo {
    pthread_mutex_t mu;
    memo_ent *e;
    size_t n, cap;
};

st_train_memo *st_train_memo_new(void)
{
    st_train_memo *m = calloc(1, sizeof *m);
    if (m && pthread_mutex_init(&m->mu, NULL)) {
        free(m);
        return NULL;
    }
    return m;
}

void st_train_memo_free(st_train_memo *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m->e);
    free(m);
}

static int memo_same(const memo_ent *a, const memo_ent *b)
{
    return a->coll == b->coll && a->tp == b->tp && a->n == b->n && a->stride == b->stride && a->bucket == b->bucket &&
           a->act == b->act;
}

static int memo_get(st_train_memo *m, const memo_ent *key, double *value)
{
    int hit = 0;
    if (!m)
        return 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n && !hit; i++)
        if (memo_same(&m->e[i], key))
            *value = m->e[i].value, hit = 1;
    pthread_mutex_unlock(&m->mu);
    return hit;
}

/* Remember a value (when out of memory, the next caller simulates again). */
static void memo_put(st_train_memo *m, const memo_ent *key, double value)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    int have = 0;
    for (size_t i = 0; i < m->n && !have; i++)
        have = memo_same(&m->e[i], key);
    if (!have && m->n == m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 64;
        memo_ent *ne = realloc(m->e, nc * sizeof *ne);
        if (ne)
            m->e = ne, m->cap = nc;
    }
    if (!have && m->n < m->cap) {
        m->e[m->n] = *key;
        m->e[m->n++].value = value;
    }
    pthread_mutex_unlock(&m->mu);
}

/* Bytes of one DP bucket of elements `elem` bytes over n ranks: PyTorch
 * DDP's 25 MiB (k->bucket_bytes); with ZeRO-1, Megatron-LM's distributed
 * optimizer, whose buckets hold max(40M, 1M x DP) parameters
 * (megatron/core/distributed: DistributedDataParallel's bucket_size), so
 * that the reduce-scatter's per-step latency, which grows with DP, stays
 * amortised. ZeRO-2 keeps the 25 MiB buckets (see train.h). */
static double dp_bucket_bytes(const st_train_cfg *k, int n, double elem)
{
    if (k->zero != 1)
        return k->bucket_bytes;
    double params = 1e6 * n > 40e6 ? 1e6 * n : 40e6;
    return params * elem > k->bucket_bytes ? params * elem : k->bucket_bytes;
}

/* Data-parallel gradient buckets of `bytes` in all, reduced over n ranks
 * `stride` apart in k->bucket_bytes pieces (PyTorch DDP's and Megatron-LM's
 * buckets): the time of one bucket, slowed by TP's concurrent all-reduce of
 * `act` bytes on the same GPUs where they share ports (simulated, the
 * slow-down in *contention), and their count in *nb. */
static double dp_buckets(const st_cluster *c, const st_train_cfg *k, int n, int stride, double bytes, double elem,
                         double act, double tp_ar, st_train_memo *memo, int *nb, double *contention, st_error *err,
                         int *rc)
{
    *nb = 0;
    *contention = 1;
    if (*rc || n <= 1 || bytes <= 0)
        return 0;
    int G = c->node.gpus, pn = per_node_of(G, stride, n);
    *nb = (int)ceil(bytes / dp_bucket_bytes(k, n, elem));
    if (*nb < 1)
        *nb = 1;
    double bucket = bytes / *nb;
    st_coll coll = k->zero >= 1 ? ST_COLL_REDUCESCATTER : ST_COLL_ALLREDUCE;
    double one = coll_time(c, coll, n, pn, stride, JOB(k), 0, bucket, err, rc);
    if (!*rc && k->tp > 1 && tp_ar > 0 && (long long)n * stride <= (long long)G * c->nodes) {
        st_flow fl[2] = {{coll, ST_ALGO_AUTO, bucket, 0, 0, stride, n, ST_PROTO_AUTO},
                         {ST_COLL_ALLREDUCE, ST_ALGO_AUTO, act, 0, 0, 1, k->tp, ST_PROTO_AUTO}};
        st_flow_result fr[2];
        /* With one DP rank per node the DP ring uses NIC ports only and
         * the TP group NVLink ports only: nothing shared, no slow-down. */
        int ok_shape = pn > 1 && (pn == n || pn * stride == G);
        memo_ent key = {(int)coll, k->tp, n, stride, bucket, act, 0};
        if (ok_shape && !memo_get(memo, &key, contention)) {
            if (st_net_simulate(c, fl, 1, 0, fr, NULL) == 0) {
                double alone = fr[0].time_s;
                if (st_net_simulate(c, fl, 2, 0, fr, NULL) == 0 && alone > 0)
                    *contention = fr[0].time_s / alone;
            }
            memo_put(memo, &key, *contention);
        }
    }
    return one * *contention;
}

int st_train_eval(const st_model *m, const st_cluster *c, const st_gpu_coef *coef, const st_train_cfg *k,
                  st_train_result *r, FILE *trace, st_error *err)
{
    return st_train_eval_memo(m, c, coef, k, r, trace, NULL, err);
}

int st_train_eval_memo(const st_model *m, const st_cluster *c, const st_gpu_coef *coef, const st_train_cfg *k,
                       st_train_result *r, FILE *trace, st_train_memo *memo, st_error *err)
{
    int rc = st_train_check(m, c, k, err);
    memset(r, 0, sizeof *r);
    if (rc)
        return rc;
    const st_transformer *tf = &m->tf;
    const st_gpu *gpu = &c->node.gpu;
    int G = c->node.gpus, pp = k->pp, v = k->sched == ST_PP_INTERLEAVED ? k->chunks : 1, V = pp * v;
    long long mb = k->global_batch / ((long long)k->dp * k->microbatches);
    double e = st_dtype_bytes(k->dtype == ST_FP8 ? ST_BF16 : k->dtype);
    long long s_loc = k->seq / k->cp;
    r->micro_batch = mb;
    r->gpus = k->dp * k->tp * k->pp * k->cp;

    lists L;
    if ((rc = build(m, k, mb, &L, err)))
        return rc;
    parts pf, pb, pc;
    if ((rc = compose_parts(gpu, coef, &L.fwd, L.blocks, k, &pf, err)) ||
        (rc = compose_parts(gpu, coef, &L.bwd, L.blocks, k, &pb, err)) ||
        (rc = compose_parts(gpu, coef, &L.core, L.blocks, k, &pc, err))) {
        lists_free(&L);
        return rc;
    }
    lists_free(&L);
    if (k->recompute == ST_RECOMP_FULL)
        add_rerun(&pb, &pf, L.blocks);
    else if (k->recompute == ST_RECOMP_SELECTIVE)
        add_rerun(&pb, &pc, L.blocks);

    /* communication per block and microbatch */
    double act = (double)mb * s_loc * tf->hidden * e;
    int tp_pn = per_node_of(G, 1, k->tp);
    double tp_ar = coll_time(c, ST_COLL_ALLREDUCE, k->tp, tp_pn, 1, JOB(k), 0, act, err, &rc);
    double tp_blk_f = 2 * tp_ar, tp_blk_b = 2 * tp_ar;
    double cp_blk_f = 0, cp_blk_b = 0, cp_all_blk = 0; /* exposed; all of it, forward + backward */
    double cp_ring = 0;                                    /* one pass of the K/V ring */
    if (k->cp > 1) {
        double kv = 2.0 * mb * s_loc * (double)(tf->kv_heads >= k->tp ? tf->kv_heads / k->tp : 1) * tf->head_dim * e;
        int pn = per_node_of(G, k->tp, k->cp);
        double step = coll_time(c, ST_COLL_SENDRECV, 2, pn >= 2 ? 2 : 1, k->tp, JOB(k), -k->cp, kv, err, &rc);
        double ring = (k->cp - 1) * step;
        cp_blk_f = ring > pc.blk ? ring - pc.blk : 0;         /* hidden behind attention */
        cp_blk_b = 2 * ring > 2 * pc.blk ? 2 * ring - 2 * pc.blk : 0;
        cp_all_blk = 3 * ring;
        cp_ring = ring;
    }
    double ep_blk_f = 0, ep_blk_b = 0;
    long long moe_blocks = tf->experts ? (L.blocks / tf->moe_every) : 0;
    if (k->ep > 1 && moe_blocks) {
        /* the busiest rank receives (and sends back) imbalance x the
         * average, and the exchange lasts as long as its share does */
        double bytes = (double)mb * s_loc * tf->top_k * tf->hidden * e * moe_rank_load(tf, k->ep, k->moe_imbalance);
        double a2a_bytes = bytes, tp_gather = 0;
        if (k->sp && k->tp > 1) {
            /* Megatron-core's MoE with TP runs sequence parallel: each TP
             * rank dispatches its 1/TP of the tokens over the EP group,
             * and the expert's TP group (the experts are TP-sharded here)
             * all-gathers what arrives, and reduce-scatters the outputs
             * back before the combine; that gather and scatter stand in
             * for the MLP's own TP collective (half of a block's two
             * all-reduces), which an MoE block does not run */
            a2a_bytes = bytes / k->tp;
            tp_gather = coll_time(c, ST_COLL_ALLGATHER, k->tp, tp_pn, 1, JOB(k), 0, bytes, err, &rc) - tp_ar / 2;
        }
        double a2a = coll_time(c, ST_COLL_ALLTOALL, k->ep, per_node_of(G, k->tp, k->ep), k->tp, JOB(k), 0, a2a_bytes, err, &rc) +
                     tp_gather;
        double share = (double)moe_blocks / L.blocks; /* per average block */
        ep_blk_f = 2 * a2a * share;
        ep_blk_b = 2 * a2a * share;
    }
    /* Recompute runs forward work again inside the backward, collectives
     * included: a fully recomputed block re-issues its TP all-reduces, its
     * ring-attention exchange and its MoE all-to-alls (Megatron-LM
     * checkpoints whole layers and reruns their forward); selective
     * recompute redoes the attention core only, whose one collective is
     * CP's ring. */
    if (k->recompute == ST_RECOMP_FULL) {
        tp_blk_b += tp_blk_f;
        cp_blk_b += cp_blk_f;
        ep_blk_b += ep_blk_f;
    } else if (k->recompute == ST_RECOMP_SELECTIVE) {
        cp_blk_b += cp_blk_f;
    }
    if (k->recompute == ST_RECOMP_FULL || k->recompute == ST_RECOMP_SELECTIVE)
        cp_all_blk += cp_ring; /* the rerun forward's ring, hidden or not */
    /* parameters on the largest stage (the first: embedding; or the last: head) */
    double blk_p = 0, blk_xp = 0; /* parameters per block and TP rank; blk_xp: routed experts' share */
    {
        /* one TP x EP rank's block as Megatron-LM lays it out: the column-
         * and row-parallel weights, the column-parallel biases and the
         * routed experts split; the norms, the row-parallel output biases
         * and the router whole on every rank; K and V heads replicated
         * where TP exceeds their count (st_transformer_shard) */
        st_transformer sh = *tf;
        st_transformer_shard(&sh, k->tp, k->ep);
        double experts = 0, dense = st_transformer_block_params(&sh, 0, NULL);
        double moe = tf->experts ? st_transformer_block_params(&sh, 1, &experts) : 0;
        if (tf->experts) /* the router scores all experts, not the rank's */
            moe += (double)tf->hidden * (double)(tf->experts - sh.experts);
        blk_p = block_mix(tf, dense, moe);
        blk_xp = block_mix(tf, 0, experts);
    }
    double ed = (double)st_transformer_embed_width(tf), proj = ed != tf->hidden ? ed * tf->hidden : 0;
    double emb_p = (double)tf->vocab * ed / k->tp + (tf->position == ST_POS_LEARNED ? (double)tf->max_seq * tf->hidden : 0) + proj;
    /* the head's side also holds the parameters outside the blocks and the
     * vocabulary matrices (final norms, an MLM head's transform, a
     * classifier), whole on every TP rank, as Megatron-LM keeps them */
    double head_p = (tf->lm_head && !tf->tied_embeddings ? (double)tf->vocab * ed / k->tp : 0) + proj +
                    st_transformer_params_other(tf);
    /* blocks and parameters per device (device d holds virtual stages d,
     * d + pp, ...); the busiest device sets memory and gradient bytes */
    long long L_all = tf->layers + tf->encoder_layers;
    double *dev_blocks = calloc((size_t)pp * 2, sizeof(double)), *dev_p = dev_blocks ? dev_blocks + pp : NULL;
    if (!dev_blocks)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    double stage_blocks = 0, stage_p = 0;
    for (int d = 0; d < pp; d++) {
        for (int ch = 0; ch < v; ch++)
            dev_blocks[d] += (double)st_pipeline_stage_layers(L_all, V, (long long)ch * pp + d);
        double p_d = dev_blocks[d] * blk_p + (d == 0 ? emb_p : 0) + (d == pp - 1 ? head_p : 0) +
                     (pp > 1 && d == pp - 1 && tf->tied_embeddings ? emb_p : 0);
        dev_p[d] = p_d;
        stage_blocks = dev_blocks[d] > stage_blocks ? dev_blocks[d] : stage_blocks;
        stage_p = p_d > stage_p ? p_d : stage_p;
    }
    double train_p = k->lora_rank ? stage_blocks * lora_params(tf, k->lora_rank, k->tp) : stage_p;

    /* ZeRO-3: each block's weights gathered forward and backward, its
     * gradients reduce-scattered in the backward (every microbatch: the
     * gradients stay sharded), each prefetched behind the previous block's
     * compute; a model chunk's first block has nothing before it to hide
     * behind, so its gather (forward) and its gather and reduce-scatter
     * (backward) are paid whole (z3_fill_*). A recomputed block's forward
     * rerun uses the gather of its backward. */
    /* the ranks that hold the same weights and reduce their gradients
     * together: DP x CP for the dense part (Megatron-LM reduces CP's
     * gradients with DP's and its distributed optimizer shards over both),
     * and for the routed experts the dp x cp / ep ranks that hold the same
     * expert shard (its expert-data-parallel group, EP ranks adjacent) */
    int zd = k->dp * k->cp, zx = zd / k->ep;
    int zd_pn = per_node_of(G, k->tp, zd), zx_pn = per_node_of(G, k->tp * k->ep, zx);
    double blk_d = (blk_p - blk_xp) * e, blk_x = blk_xp * e; /* a block's dense and expert bytes */
    double z3_f = 0, z3_b = 0, z3_ag = 0, z3_rs = 0, z3_fill_f = 0, z3_fill_b = 0;
    if (k->zero == 3 && zd > 1) {
        z3_ag = coll_time(c, ST_COLL_ALLGATHER, zd, zd_pn, k->tp, JOB(k), 0, blk_d, err, &rc) +
                coll_time(c, ST_COLL_ALLGATHER, zx, zx_pn, k->tp * k->ep, JOB(k), 0, blk_x, err, &rc);
        z3_rs = coll_time(c, ST_COLL_REDUCESCATTER, zd, zd_pn, k->tp, JOB(k), 0, blk_d, err, &rc) +
                coll_time(c, ST_COLL_REDUCESCATTER, zx, zx_pn, k->tp * k->ep, JOB(k), 0, blk_x, err, &rc);
        z3_f = z3_ag > pf.blk ? z3_ag - pf.blk : 0;
        z3_b = z3_ag + z3_rs > pb.blk ? z3_ag + z3_rs - pb.blk : 0;
        z3_fill_f = z3_ag - z3_f;
        z3_fill_b = z3_ag + z3_rs - z3_b;
    }
    /* ... and the embedding's and the head's, gathered before the first
     * block's forward and after the last block's, reduce-scattered after
     * their backward: paid whole */
    double z3_emb = 0, z3_head = 0;
    double head_w = head_p + (pp > 1 && tf->tied_embeddings ? emb_p : 0);
    if (k->zero == 3 && zd > 1) {
        z3_emb = coll_time(c, ST_COLL_ALLGATHER, zd, zd_pn, k->tp, JOB(k), 0, emb_p * e, err, &rc);
        z3_emb = 2 * z3_emb + coll_time(c, ST_COLL_REDUCESCATTER, zd, zd_pn, k->tp, JOB(k), 0, emb_p * e, err, &rc);
        if (head_w > 0) {
            z3_head = coll_time(c, ST_COLL_ALLGATHER, zd, zd_pn, k->tp, JOB(k), 0, head_w * e, err, &rc);
            z3_head = 2 * z3_head + coll_time(c, ST_COLL_REDUCESCATTER, zd, zd_pn, k->tp, JOB(k), 0, head_w * e, err, &rc);
        }
    }
    double f_blk = pf.blk + tp_blk_f + cp_blk_f + ep_blk_f + z3_f;
    double b_blk = pb.blk + tp_blk_b + cp_blk_b + ep_blk_b + z3_b;
    double *F = calloc((size_t)V, sizeof(double)), *B = calloc((size_t)V, sizeof(double));
    if (!F || !B) {
        free(F), free(B), free(dev_blocks);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    for (int vs = 0; vs < V; vs++) {
        double nbl = (double)st_pipeline_stage_layers(L_all, V, vs);
        F[vs] = nbl * f_blk + (vs == 0 ? pf.embed : 0) + (vs == V - 1 ? pf.head : 0) + (nbl > 0 ? z3_fill_f : 0);
        B[vs] = nbl * b_blk + (vs == 0 ? pb.embed : 0) + (vs == V - 1 ? pb.head : 0) + (nbl > 0 ? z3_fill_b : 0);
        /* ZeRO-3 embedding and head: one gather each way, a third of the
         * three collectives in the forward, two in the backward */
        double zw = (vs == 0 ? z3_emb : 0) + (vs == V - 1 ? z3_head : 0);
        F[vs] += zw / 3, B[vs] += 2 * zw / 3;
    }
    /* Megatron-LM's vocabulary-parallel ends: the embedding's output is
     * all-reduced over TP in the forward and the head's input gradient in
     * the backward; with SP each becomes a reduce-scatter (embedding
     * forward, head backward) and an all-gather (embedding backward, head
     * forward), about half an all-reduce each */
    double tp_end = k->tp > 1 ? tp_ar : 0, tp_head = tf->lm_head ? tp_end : 0; /* no LM head, no head collective */
    /* forward and backward at the first (embedding) and last (head) stage */
    double end_f0 = k->sp ? tp_end / 2 : tp_end, end_b0 = k->sp ? tp_end / 2 : 0;
    double end_fl = k->sp ? tp_head / 2 : 0, end_bl = k->sp ? tp_head / 2 : tp_head;
    F[0] += end_f0, B[0] += end_b0, F[V - 1] += end_fl, B[V - 1] += end_bl;
    /* pipeline send/recv of one microbatch's activations */
    double p2p = 0;
    if (pp > 1) {
        int stride = k->tp * k->cp * k->dp;
        double bytes = k->sp ? act / k->tp : act;
        /* Megatron-LM's scatter/gather (Narayanan et al. 2021, Sec. 4.1;
         * on by default with TP and without SP): each TP rank sends only its
         * 1/tp of the replicated activation, the receiving stage all-gathers
         * it over the node's fabric */
        if (!k->sp && k->tp > 1)
            bytes = act / k->tp;
        p2p = coll_time(c, ST_COLL_SENDRECV, 2, stride < G ? 2 : 1, stride, JOB(k),
                        k->sched == ST_PP_INTERLEAVED ? -pp : pp, bytes, err, &rc);
        if (!k->sp && k->tp > 1)
            p2p += coll_time(c, ST_COLL_ALLGATHER, k->tp, tp_pn, 1, JOB(k), 0, act, err, &rc);
    }
    sched S;
    if (!rc)
        rc = simulate(k, F, B, p2p, &S, err);
    if (rc) {
        free(F), free(B), free(dev_blocks);
        return rc;
    }
    /* DP gradient buckets during each device's last backward: the dense
     * gradients over DP x CP, the experts' over their own group, buckets
     * of either kind in turn (one average bucket's time); ZeRO-3
     * reduce-scatters each block's gradients in its backward instead */
    double grad_bytes = train_p * e, xgrad = k->lora_rank ? 0 : stage_blocks * blk_x;
    double dp_one = 0, contention = 1, cont_x = 1;
    int nb = 0;
    if (k->zero < 3 && zd > 1) {
        int nb_d = 0, nb_x = 0;
        double one_d = dp_buckets(c, k, zd, k->tp, grad_bytes - xgrad, e, act, tp_ar, memo, &nb_d, &contention, err,
                                  &rc);
        double one_x = dp_buckets(c, k, zx, k->tp * k->ep, xgrad, e, act, tp_ar, memo, &nb_x, &cont_x, err, &rc);
        nb = nb_d + nb_x;
        dp_one = nb ? (nb_d * one_d + nb_x * one_x) / nb : 0;
    }
    r->dp_contention = contention;
    int zero2_per_mb = k->zero == 2 && pp == 1 && k->microbatches > 1 && nb > 0;
    double *dps = calloc((size_t)pp, sizeof(double)), *dpe = calloc((size_t)pp, sizeof(double));
    double pipe_end = 0, end_all = 0, dp_exposed = 0;
    for (int d = 0; d < pp && dps && dpe; d++) {
        const task *last = &S.t[d][S.n[d] - 1];
        double t_end = last->end, bdur = last->end - last->start;
        double chain = zero2_per_mb ? 0 : t_end - bdur;
        /* ZeRO-2 without PP keeps only its shard of the gradients, so every
         * microbatch's backward reduce-scatters them (DeepSpeed's stage 2
         * at each micro-step, FSDP's default): buckets in every backward,
         * in turn on the one network; otherwise the last backward only */
        for (int t = zero2_per_mb ? 0 : S.n[d] - 1; t < S.n[d]; t++) {
            const task *tk = &S.t[d][t];
            if (tk->fwd)
                continue;
            double te = tk->end, bd = tk->end - tk->start;
            for (int i = 0; i < nb; i++) {
                double ready = te - bd + bd * (i + 1) / nb;
                chain = (chain > ready ? chain : ready) + dp_one;
            }
        }
        dps[d] = t_end - bdur;
        dpe[d] = nb ? chain : dps[d];
        double fin = nb && chain > t_end ? chain : t_end;
        if (t_end > pipe_end)
            pipe_end = t_end;
        if (fin > end_all) {
            end_all = fin;
            dp_exposed = fin - t_end;
        }
    }
    /* optimizer step over this GPU's share of the trainable parameters */
    double opt_s = 0, zero_ag = 0, opt_lo = 1, opt_hi = 1, opt_floor = 0;
    {
        st_oplist ol = {0};
        st_op o;
        memset(&o, 0, sizeof o);
        snprintf(o.name, sizeof o.name, "optimizer.adamw");
        snprintf(o.layer, sizeof o.layer, "optimizer");
        o.kind = ST_OP_OPTIMIZER;
        o.pass = ST_PASS_OPT;
        o.dtype = k->dtype == ST_FP8 ? ST_BF16 : k->dtype;
        o.repeat = 1;
        double xs = xgrad / e; /* the routed experts' share, sharded over their own group */
        o.rows = (long long)ceil(k->zero >= 1 ? (train_p - xs) / zd + xs / zx : train_p);
        o.cols = 1;
        st_op_cost(&o);
        if (!rc)
            rc = st_oplist_push(&ol, &o, err);
        parts po;
        if (!rc && o.rows > 0)
            rc = compose_parts(gpu, coef, &ol, 0, k, &po, err);
        if (!rc && o.rows > 0)
            opt_s = po.head, opt_lo = po.lo_rel, opt_hi = po.hi_rel, opt_floor = po.floor_rel;
        st_oplist_free(&ol);
        if (k->zero >= 1 && k->zero <= 2)
            zero_ag = coll_time(c, ST_COLL_ALLGATHER, zd, zd_pn, k->tp, JOB(k), 0, grad_bytes - xgrad, err, &rc) +
                      coll_time(c, ST_COLL_ALLGATHER, zx, zx_pn, k->tp * k->ep, JOB(k), 0, xgrad, err, &rc);
    }
    if (!rc) {
        /* memory on the busiest stage */
        st_train_mem *M = &r->mem;
        double wb = k->dtype == ST_FP8 ? 3 : e; /* FP8: BF16 weights + FP8 copy */
        /* ZeRO-2 with PP accumulates whole gradients over the microbatches
         * and reduce-scatters them after the last backward (FSDP under
         * PyTorch's pipeline schedules syncs gradients on the last
         * backward only; DeepSpeed refuses stage 2 with PP), so a stage
         * holds its gradients unsharded */
        int grads_whole = k->zero == 2 && pp > 1 && k->microbatches > 1;
        double shard_w = k->zero == 3 ? zd : 1, shard_g = k->zero >= 2 && !grads_whole ? zd : 1,
               shard_o = k->zero >= 1 ? zd : 1;
        /* TF32 is a math mode: weights, gradients and states stay fp32 */
        double grad_b, opt_bytes;
        st_train_state_bytes(k->dtype, &grad_b, &opt_bytes);
        double sbh = (double)mb * s_loc * tf->hidden;
        double as2b = (double)mb * (tf->heads) * s_loc * (double)k->seq; /* CP: local queries x all keys */
        double per_blk, full_blk, scores;
        {
            /* the blocks' average of block_act_per_token, over TP as
             * Korthikanti */
            double tok = (double)mb * s_loc, rep_d, rep_m = 0;
            /* K and V replicated where TP exceeds their heads: each rank
             * keeps one head's, as if there were TP of them */
            st_transformer ta = *tf;
            if (ta.kv_heads < k->tp)
                ta.kv_heads = k->tp;
            double all_d = block_act_per_token(&ta, 0, k->fused, e, 1, &rep_d);
            double all_m = tf->experts ? block_act_per_token(&ta, 1, k->fused, e, moe_rank_load(tf, k->ep, k->moe_imbalance),
                                                             &rep_m)
                                       : 0;
            double all = block_mix(tf, all_d, all_m), kept = block_mix(tf, rep_d, rep_m);
            full_blk = tok * (k->sp ? all / k->tp : kept + (all - kept) / k->tp);
            /* softmax output, its dropout mask and the dropped-out
             * probabilities PV reads (Korthikanti's a s^2 b (2e + 1));
             * without attention dropout PV reads the softmax output itself */
            scores = k->flash || k->fa3 ? 0 : as2b * (e + (tf->attn_dropout > 0 ? 1 + e : 0)) / k->tp;
            full_blk += scores;
        }
        /* what a block keeps until its backward, and what recomputing one
         * rebuilds for the duration of its backward (once per device: one
         * block is recomputed at a time): full recompute keeps its input
         * (Korthikanti's 2 s b h) and rebuilds the whole block; selective
         * drops the attention scores and rebuilds them */
        double rebuild = 0;
        if (k->recompute == ST_RECOMP_FULL) {
            per_blk = e * sbh / (k->sp ? k->tp : 1);
            rebuild = full_blk;
        } else if (k->recompute == ST_RECOMP_SELECTIVE) {
            per_blk = full_blk - scores;
            rebuild = scores;
        } else {
            per_blk = full_blk;
        }
        /* each device's own total (its blocks, its embedding or head, its
         * microbatches in flight, the logits on the last); the busiest
         * device's terms are reported */
        double logits = (double)mb * s_loc * ((double)tf->vocab / k->tp) * (e + 4);
        double bkt = dp_bucket_bytes(k, zd, e);
        double buffers = zd > 1 ? 2 * (bkt < grad_bytes ? bkt : grad_bytes) : 0;
        /* ZeRO-3 has no DP buckets: the gathered weights of the running
         * block and of the one being prefetched, and one block's gradients
         * before their reduce-scatter */
        if (k->zero == 3 && zd > 1) {
            buffers = 2 * blk_p * wb + blk_p * grad_b;
            /* at the ends the gathered embedding or head and its gradient
             * are live instead, when larger (a large vocabulary's are) */
            double ends = (emb_p > head_p ? emb_p : head_p) * (e + grad_b); /* no FP8 copy at the ends */
            if (ends > buffers)
                buffers = ends;
        }
        double inflight = 0;
        M->total = -1;
        for (int d = 0; d < pp; d++) {
            inflight = S.inflight[d] > inflight ? S.inflight[d] : inflight;
            double tr = k->lora_rank ? dev_blocks[d] * lora_params(tf, k->lora_rank, k->tp) : dev_p[d];
            st_train_mem m_d = {0};
            /* ZeRO shards over the ranks that hold the same weights (zd
             * for the dense part, zx for the routed experts); LoRA adapters
             * are dense */
            double xp = k->lora_rank ? 0 : dev_blocks[d] * blk_xp;
            double xw = k->zero == 3 ? zx : 1, xg = k->zero >= 2 && !grads_whole ? zx : 1, xo = k->zero >= 1 ? zx : 1;
            /* FP8 keeps an FP8 copy of the block GEMMs' weights only: the
             * embedding and the head run in 16 bits (as eval's step memory) */
            double nonblk = dev_p[d] - dev_blocks[d] * blk_p;
            m_d.weights = (dev_p[d] - xp - nonblk) * wb / shard_w + nonblk * e / shard_w + xp * wb / xw +
                          (k->lora_rank ? tr * e : 0);
            m_d.grads = (tr - xp) * grad_b / shard_g + xp * grad_b / xg;
            m_d.optimizer = (tr - xp) * opt_bytes / shard_o + xp * opt_bytes / xo;
            m_d.activations = per_blk * dev_blocks[d] * S.inflight[d] + (dev_blocks[d] > 0 ? rebuild : 0);
            /* GPipe runs every forward before any backward: the last stage
             * keeps each microbatch's logits until its backward */
            m_d.logits = d == pp - 1 ? logits * (k->sched == ST_PP_GPIPE && S.inflight[d] > 1 ? S.inflight[d] : 1) : 0;
            m_d.buffers = buffers;
            /* whole bytes: a share that does not divide evenly (a shard of
             * an odd parameter count, an imbalance factor) is held as the
             * next byte up on the GPU that holds it */
            m_d.weights = ceil(m_d.weights), m_d.grads = ceil(m_d.grads), m_d.optimizer = ceil(m_d.optimizer);
            m_d.activations = ceil(m_d.activations), m_d.logits = ceil(m_d.logits), m_d.buffers = ceil(m_d.buffers);
            m_d.total = m_d.weights + m_d.grads + m_d.optimizer + m_d.activations + m_d.logits + m_d.buffers;
            if (m_d.total > M->total)
                *M = m_d;
        }
        M->inflight = inflight;
        M->capacity = gpu->mem_bytes;
        M->oom = M->total > M->capacity;
        r->memory_per_gpu_bytes = M->total;

        /* the iteration */
        r->pipeline_s = pipe_end;
        r->dp_s = nb * dp_one * (zero2_per_mb ? k->microbatches : 1);
        /* the chain's end minus the backward's differs from the
         * reduction's own time by roundings (1e-17 s) where none of it is
         * hidden: within 1e-12 of it, it is all of it (never more; and a
         * JSON dp_overlap_fraction of 0, not 1.2e-14) */
        r->dp_exposed_s = dp_exposed >= r->dp_s * (1 - 1e-12) ? r->dp_s : dp_exposed > 0 ? dp_exposed : 0;
        r->optimizer_s = opt_s;
        r->zero_s = zero_ag;
        r->iteration_s = end_all + opt_s + zero_ag;
        if (p2p == 0)
            bubble_of(&S, pp, &r->bubble_fraction, NULL);
        else if ((rc = schedule_bubble(k, F, B, &r->bubble_fraction, NULL, err))) {
            free(dps), free(dpe), free(F), free(B), free(dev_blocks);
            sched_free(&S, pp);
            return rc;
        }
        long long nmb = k->microbatches;
        double blocks = stage_blocks;
        r->tp_s = nmb * (blocks * (tp_blk_f + tp_blk_b) + (pp > 1 ? tp_end : tp_end + tp_head));
        r->cp_s = nmb * blocks * (cp_blk_f + cp_blk_b);
        r->ep_s = nmb * blocks * (ep_blk_f + ep_blk_b);
        r->pp_s = pp > 1 ? 2.0 * nmb * v * p2p : 0;
        /* ZeRO-3's gathers and reduce-scatters on the busiest stage: exposed
         * (per block beyond its prefetch, plus each chunk's first) and all;
         * the embedding's or the head's on the busier end stage (one stage
         * pays both) */
        double z3_ends = pp == 1 ? z3_emb + z3_head : z3_emb > z3_head ? z3_emb : z3_head;
        double z3_exposed =
            nmb * (blocks * (z3_f + z3_b) + (k->zero == 3 ? v * (z3_fill_f + z3_fill_b) : 0) + z3_ends);
        double z3_all = nmb * (blocks * (2 * z3_ag + z3_rs) + z3_ends);
        if (k->zero == 3)
            r->zero_s = z3_exposed;
        r->comm_s = r->tp_s + r->cp_s + r->ep_s + r->pp_s + r->dp_exposed_s + zero_ag + z3_exposed;
        /* every transfer, hidden or not (CP's ring mostly hides behind
         * attention, so its exposed share understates what moves) */
        r->cp_all_s = nmb * blocks * cp_all_blk;
        r->comm_total_s = r->tp_s + r->cp_all_s + r->ep_s + r->pp_s + r->dp_s + zero_ag + z3_all;
        for (int vs = 0; vs < V; vs++) {
            r->fwd_s = F[vs] > r->fwd_s ? F[vs] : r->fwd_s;
            r->bwd_s = B[vs] > r->bwd_s ? B[vs] : r->bwd_s;
        }
        /* model FLOPs (MFU, tflops_per_gpu): the useful work, the same
         * whichever attention kernel runs: causal attention's unmasked
         * pairs only (the flash op's count; eager attention computes the
         * whole score square and discards half). Hardware FLOPs: what the
         * chosen kernels execute, plus the recomputed forward (the count
         * behind Megatron-LM's TFLOP/s, 96 B s l h^2 (...), eager attention
         * with full recompute: Narayanan et al. 2021, Sec. 5.1; Korthikanti
         * et al. 2022 call it hardware FLOPs) */
        st_attn_impl run_attn = k->fa3 ? ST_ATTN_FLASH3 : k->flash ? ST_ATTN_FLASH : ST_ATTN_EAGER;
        double useful = 0, executed = 0, again = 0;
        rc = iteration_flops(m, k, run_attn, &executed, &again, err);
        useful = executed; /* a fused kernel's count is the useful one (FA2 and FA3 alike) */
        if (!rc && run_attn == ST_ATTN_EAGER)
            rc = iteration_flops(m, k, ST_ATTN_FLASH, &useful, NULL, err);
        if (!rc) {
            r->model_flops = useful * (double)k->global_batch;
            r->hw_flops = (executed + again) * (double)k->global_batch;
        }
        st_dtype pk = k->dtype == ST_FP8 ? ST_FP8 : k->dtype;
        double peak = st_gpu_peak(gpu, pk, 0);
        if (!(peak > 0))
            peak = gpu->vector[ST_FP32];
        r->mfu = r->iteration_s > 0 && peak > 0 ? r->model_flops / (r->iteration_s * r->gpus * peak) : 0;
        r->sustained = !k->isolated && gpu->tc_sustained_w_per_tflops > 0;
        r->tflops_per_gpu = r->iteration_s > 0 ? r->model_flops / (r->iteration_s * r->gpus) / 1e12 : 0;
        r->hw_tflops_per_gpu = r->iteration_s > 0 ? r->hw_flops / (r->iteration_s * r->gpus) / 1e12 : 0;
        r->stage_layers_min = L_all / V;
        r->stage_layers_max = L_all / V + (L_all % V ? 1 : 0);
        r->tokens_per_s = r->iteration_s > 0 ? (double)k->global_batch * k->seq / r->iteration_s : 0;
        /* band: compute by the compose layer's correlated band, exposed
         * communication by COMM_SPREAD */
        double comp = r->iteration_s - r->comm_s;
        if (comp < 0)
            comp = 0;
        /* the relative bands of forward, backward and optimizer weighted
         * by their time, as the compose layer's correlated band adds up a
         * whole step's (eval --phase train on one GPU gives the same) */
        double w_f = (double)nmb * pf.total, w_b = (double)nmb * pb.total, wsum = w_f + w_b + opt_s;
        double lo_rel = wsum > 0 ? (w_f * pf.lo_rel + w_b * pb.lo_rel + opt_s * opt_lo) / wsum : 1;
        double hi_rel = wsum > 0 ? (w_f * pf.hi_rel + w_b * pb.hi_rel + opt_s * opt_hi) / wsum : 1;
        /* no lower than the kernels' physical floors (st_step.floor_s) */
        double floor_rel = wsum > 0 ? (w_f * pf.floor_rel + w_b * pb.floor_rel + opt_s * opt_floor) / wsum : 0;
        if (lo_rel < floor_rel)
            lo_rel = floor_rel;
        r->lo_s = comp * lo_rel + r->comm_s * (1 - COMM_SPREAD);
        r->hi_s = comp * hi_rel + r->comm_s * (1 + COMM_SPREAD);
        if (trace) {
            task_comm *tcf = calloc((size_t)V * 2, sizeof *tcf);
            if (!tcf) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
            } else {
                for (int vs = 0; vs < V; vs++) {
                    double nbl = (double)st_pipeline_stage_layers(L_all, V, vs);
                    double zw = (vs == 0 ? z3_emb : 0) + (vs == V - 1 ? z3_head : 0);
                    /* the vocabulary-parallel ends' TP collectives, as F and B have them */
                    double end_f = (vs == 0 ? end_f0 : 0) + (vs == V - 1 ? end_fl : 0);
                    double end_b = (vs == 0 ? end_b0 : 0) + (vs == V - 1 ? end_bl : 0);
                    tcf[vs] = (task_comm){nbl * tp_blk_f + end_f, nbl * cp_blk_f, nbl * ep_blk_f,
                                          nbl > 0 || zw > 0 ? nbl * z3_ag + zw / 3 : 0};
                    tcf[V + vs] = (task_comm){nbl * tp_blk_b + end_b, nbl * cp_blk_b, nbl * ep_blk_b,
                                              nbl > 0 || zw > 0 ? nbl * (z3_ag + z3_rs) + 2 * zw / 3 : 0};
                }
                trace_comm tc = {tcf, tcf + V, pp > 1 ? p2p : 0, k->sp};
                trace_parts lp = {
                    L_all,
                    {pf.blk, pb.blk},
                    {f_blk, b_blk},
                    {tp_blk_f, tp_blk_b},
                    {cp_blk_f, cp_blk_b},
                    {ep_blk_f, ep_blk_b},
                    {z3_f, z3_b},
                    {pf.embed, pb.embed},
                    {pf.head, pb.head},
                    {end_f0, end_b0},
                    {end_fl, end_bl},
                    {z3_fill_f, z3_fill_b},
                    z3_emb,
                    z3_head,
                    k->recompute,
                };
                write_trace(trace, &S, k, &tc, &lp, dps, dpe, end_all, opt_s, zero_ag, r);
                free(tcf);
            }
        }
    }
    free(dps), free(dpe), free(F), free(B), free(dev_blocks);
    sched_free(&S, pp);
    return rc;
}
