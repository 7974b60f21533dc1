/*
 * Iteration time and memory of one model on one replica (see serve.h).
 *
 * A step's time is split by what it depends on, so that the parts can be
 * memoised and a million-request run stays fast:
 *   lin(n)    every operator except attention and the LM head, for n
 *             tokens (GEMMs, norms, rotary, activations, MoE routing and
 *             experts, embedding): composed once per distinct n;
 *   head(m)   final norm + LM head for the m sequences that sample;
 *   comm(n)   TP all-reduces (two per block) and EP all-to-alls (dispatch
 *             and combine per MoE block) of n tokens' activations;
 *   attention decode attention of the decoding sequences (one kernel,
 *             batched over sequences at their mean KV length, memoised on
 *             (sequences, query tokens, KV length rounded up to 16)) and one
 *             causal kernel per prefill chunk against its cached context.
 *
 * Context parallelism (cp > 1) splits every sequence's tokens over cp
 * ranks: a rank runs the dense layers on its share of the prefill tokens
 * (and on every decoding token: a decode step has one token per sequence
 * to share), holds 1/cp of each sequence's KV, and computes a prefill
 * chunk's attention as ring attention, pass-KV (Liu et al., "Ring Attention
 * with Blockwise Transformers", 2023; Yang et al., "Context Parallelism for
 * Scalable Million-Token Inference", 2024): cp steps, each the rank's
 * queries against one rank's K/V block, the next block's send/recv
 * overlapped with the block in hand. A decode step attends each rank's
 * shard and merges the partial outputs: an all-reduce of the log-sum-exps,
 * then one of the rescaled outputs, per block.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "serve/cost.h"

static int memo_get(memo *m, long long n, double *v)
{
    if (n < m->cap && !isnan(m->v[n])) {
        *v = m->v[n];
        return 1;
    }
    return 0;
}

static void memo_put(memo *m, long long n, double v)
{
    if (n >= m->cap) {
        long long nc = m->cap ? m->cap : 256;
        while (nc <= n)
            nc *= 2;
        double *p = realloc(m->v, (size_t)nc * sizeof *p);
        if (!p)
            return; /* not memoised: recomputed next time */
        for (long long i = m->cap; i < nc; i++)
            p[i] = NAN;
        m->v = p;
        m->cap = nc;
    }
    m->v[n] = v;
}

static int is_head(const char *layer)
{
    return strcmp(layer, "final") == 0 || strcmp(layer, "head") == 0;
}

static int in_block(const char *layer)
{
    return strstr(layer, "block") != NULL;
}

/* Compose the operators of the model at `rows` tokens that belong to the
 * head (want_head) or to everything else but attention. */
static double compose_part(st_serve_cost *c, long long rows, int want_head)
{
    st_gen_opts o;
    st_gen_opts_default(&o, &c->shard);
    o.phase = ST_PHASE_PREFILL;
    o.batch = rows;
    o.seq = 1;
    o.dtype = c->dtype;
    o.attn = c->fa3 ? ST_ATTN_FLASH3 : ST_ATTN_FLASH; /* its attention ops are priced by attention() */
    o.logits_all = 1;
    st_oplist all = {0}, part = {0};
    st_error err = {0};
    double t = 0;
    if (st_model_ops(&c->shard, &o, &all, &err) == 0) {
        for (size_t i = 0; i < all.n; i++) {
            st_op op = all.ops[i];
            if (is_head(op.layer) != want_head)
                continue;
            if (op.kind == ST_OP_ATTENTION || op.kind == ST_OP_BMM || op.kind == ST_OP_SOFTMAX)
                continue; /* priced by attention() */
            int gemm = op.kind == ST_OP_GEMM || op.kind == ST_OP_MOE_EXPERTS;
            if (gemm && in_block(op.layer) && c->quant != ST_QUANT_NONE) {
                if (c->quant == ST_QUANT_W4A16) {
                    op.weight_int4 = 1;
                } else {
                    op.dtype = c->quant == ST_QUANT_FP8 ? ST_FP8 : ST_INT8;
                    st_op cast = st_op_input_cast(&op, c->dtype);
                    st_oplist_push(&part, &cast, &err);
                }
                st_op_cost(&op);
            }
            st_oplist_push(&part, &op, &err);
        }
        st_compose_opts co;
        st_compose_opts_default(&co);
        co.fused = !c->eager;
        co.fused_router = 1; /* vLLM's fused_moe routes with its topk_softmax kernel, eager or not */
        st_step step;
        if (part.n && st_compose(&c->gpu, c->coef, &part, &co, &step, &err) == 0)
            t = step.total_s;
    }
    st_oplist_free(&all);
    st_oplist_free(&part);
    return t;
}

double st_serve_coll(const st_cluster *cl, st_coll kind, int n, int per_node, double bytes)
{
    return st_serve_coll_placed(cl, kind, n, per_node, 1, bytes);
}

double st_serve_coll_placed(const st_cluster *cl, st_coll kind, int n, int per_node, int stride, double bytes)
{
    if (n <= 1 || !cl || bytes <= 0)
        return 0;
    st_net_group g;
    st_coll_est e;
    st_error err = {0};
    if (st_net_group_place(cl, n, per_node, stride, &g, &err) ||
        st_coll_estimate(&g, kind, ST_ALGO_AUTO, bytes, &e, &err))
        return 0; /* st_serve_check has built these groups: cannot fail here */
    return e.time_s;
}

/* the non-attention operators at n tokens (part 0) or the head at n
 * sequences (part 1), memoised */
static double part_time(st_serve_cost *c, long long n, int head)
{
    memo *m = head ? &c->head : &c->lin;
    double v;
    if (n <= 0)
        return 0;
    if (memo_get(m, n, &v))
        return v;
    v = compose_part(c, n, head);
    memo_put(m, n, v);
    return v;
}

static double comm_time(st_serve_cost *c, long long n)
{
    double v;
    if (memo_get(&c->comm, n, &v))
        return v;
    const st_transformer *tf = &c->full->tf;
    double act = (double)n * (double)tf->hidden * st_dtype_bytes(c->dtype);
    v = 2.0 * (double)c->blocks * st_serve_coll(c->cluster, ST_COLL_ALLREDUCE, c->tp, 0, act);
    if (tf->experts > 0 && c->ep > 1) {
        double moe_blocks = (double)c->blocks / (double)tf->moe_every;
        v += 2.0 * moe_blocks * st_serve_coll(c->cluster, ST_COLL_ALLTOALL, c->ep, 0, act * (double)tf->top_k);
    }
    /* a stage's activations to the next, tp GPUs on: on one node while the
     * replica's tp x pp GPUs fit one, else some stage's hop crosses to the
     * next node (the pipeline runs at its slowest hop's pace) */
    if (c->pp > 1)
        v += st_serve_coll_placed(c->cluster, ST_COLL_SENDRECV, 2,
                                  c->cluster && (long long)c->tp * c->pp <= c->cluster->node.gpus ? 2 : 1, c->tp, act);
    memo_put(&c->comm, n, v);
    return v;
}

static double flash(st_serve_cost *c, long long b, long long q, long long kv, int causal)
{
    const st_transformer *tf = &c->shard.tf;
    st_kernel k;
    memset(&k, 0, sizeof k);
    k.op = ST_KOP_FLASH;
    k.dtype = c->dtype;
    k.b = b;
    k.heads = tf->heads;
    k.kv_heads = tf->kv_heads;
    k.q_len = q;
    k.kv_len = kv;
    k.head_dim = tf->head_dim;
    k.causal = causal;
    k.cold = 1;
    k.kv_bytes = c->kv_fp8 ? 1.0 : 0;
    k.fa3 = c->fa3;
    st_kernel_est e;
    st_error err = {0};
    if (st_kernel_estimate(&c->gpu, c->coef, &k, NULL, 0, &e, &err))
        return 0;
    return e.gpu_s;
}

static double decode_attn(st_serve_cost *c, long long n_dec, int q, double sum_kv)
{
    long long kv = (long long)ceil(sum_kv / (double)n_dec);
    kv = (kv + 15) / 16 * 16;
    if (kv < 16)
        kv = 16;
    unsigned long long key = ((unsigned long long)n_dec << 40) ^ ((unsigned long long)q << 32) ^ (unsigned long long)kv;
    attn_memo *m = &c->attn;
    if (m->cap) {
        size_t h = (size_t)(st_mix64(key) & (m->cap - 1));
        while (m->key[h]) {
            if (m->key[h] == key)
                return m->val[h];
            h = (h + 1) & (m->cap - 1);
        }
    }
    double v = flash(c, n_dec, q, kv, 0);
    if (m->n * 2 >= m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4096;
        unsigned long long *nk = calloc(nc, sizeof *nk);
        double *nv = calloc(nc, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return v;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->key[i])
                continue;
            size_t h = (size_t)(st_mix64(m->key[i]) & (nc - 1));
            while (nk[h])
                h = (h + 1) & (nc - 1);
            nk[h] = m->key[i];
            nv[h] = m->val[i];
        }
        free(m->key);
        free(m->val);
        m->key = nk;
        m->val = nv;
        m->cap = nc;
    }
    size_t h = (size_t)(st_mix64(key) & (m->cap - 1));
    while (m->key[h])
        h = (h + 1) & (m->cap - 1);
    m->key[h] = key;
    m->val[h] = v;
    m->n++;
    return v;
}

/* bytes of K and V that n tokens hold on one GPU of a TP group */
static double kv_bytes_local(const st_serve_cost *c, long long n)
{
    return st_transformer_kv_bytes(&c->shard.tf, (double)n, c->kv_fp8 ? 1.0 : st_dtype_bytes(c->dtype));
}

/* CP decode: merging n query tokens' partial attention over the cp ranks,
 * per block: an all-reduce of the FP32 log-sum-exps (one per head), then of
 * the outputs rescaled by them */
static double cp_merge_time(st_serve_cost *c, long long n)
{
    double v;
    if (memo_get(&c->cp_merge, n, &v))
        return v;
    const st_transformer *tf = &c->shard.tf;
    double heads = (double)tf->heads;
    double lse = (double)n * heads * 4.0;
    double out = (double)n * heads * (double)tf->head_dim * st_dtype_bytes(c->dtype);
    v = st_serve_coll(c->cluster, ST_COLL_ALLREDUCE, c->cp, c->cp_per_node, lse) +
        st_serve_coll(c->cluster, ST_COLL_ALLREDUCE, c->cp, c->cp_per_node, out);
    memo_put(&c->cp_merge, n, v);
    return v;
}

/* one ring hop of n tokens' K/V blocks: every rank sends to its successor at
 * once; the hop crosses nodes when the ring does */
static double cp_send_time(st_serve_cost *c, long long n)
{
    double v;
    if (memo_get(&c->cp_send, n, &v))
        return v;
    v = st_serve_coll(c->cluster, ST_COLL_SENDRECV, 2, c->cp_per_node >= c->cp ? 2 : 1, kv_bytes_local(c, n));
    memo_put(&c->cp_send, n, v);
    return v;
}

/* Ring attention (pass-KV) of a prefill chunk of `chunk` tokens after `ctx`
 * cached ones, on one rank: its chunk/cp queries against each of the cp K/V
 * blocks of (ctx + chunk)/cp tokens in turn. With load-balanced sharding
 * every rank gets the same share of the causal mask: of the chunk x (ctx +
 * chunk) query-key pairs, (ctx + (chunk + 1) / 2) / (ctx + chunk) are
 * unmasked. The first block is the rank's own; each of the other cp - 1
 * arrives while the previous one is computed, so a step takes the longer of
 * the two. */
static double ring_attn(st_serve_cost *c, long long chunk, long long ctx)
{
    long long kv = ctx + chunk, p = c->cp;
    long long qr = (chunk + p - 1) / p, kr = (kv + p - 1) / p;
    double f = ((double)ctx + ((double)chunk + 1.0) / 2.0) / (double)kv;
    double step = flash(c, 1, qr, kr, 0) * f;
    double hop = cp_send_time(c, kr);
    /* a context shorter than the ring leaves ranks without K/V: only the
     * blocks that hold tokens travel */
    long long blocks = kv < p ? kv : p;
    return step + (double)(blocks - 1) * (hop > step ? hop : step);
}

double st_serve_step_time(st_serve_cost *c, long long n_tok, long long n_logits, long long n_dec, int q,
                          double sum_kv, const int *chunk, const int *ctx, int n_chunks)
{
    if (n_tok <= 0)
        return 0;
    long long rows = n_tok;
    if (c->cp > 1) {
        /* a rank's tokens: its share of the prefill, every decoding token */
        long long dec = n_dec * (long long)q, pre = n_tok - dec;
        if (pre < 0)
            pre = 0;
        rows = (pre + c->cp - 1) / c->cp + dec;
    }
    double t = part_time(c, rows, 0) + part_time(c, n_logits, 1) + comm_time(c, rows);
    double attn = 0;
    if (n_dec > 0) {
        attn += decode_attn(c, n_dec, q, sum_kv / (double)c->cp);
        if (c->cp > 1)
            attn += cp_merge_time(c, n_dec * (long long)q);
    }
    for (int i = 0; i < n_chunks; i++)
        attn += c->cp > 1 ? ring_attn(c, chunk[i], ctx[i]) : flash(c, 1, chunk[i], (long long)ctx[i] + chunk[i], 1);
    return t + attn * (double)c->blocks;
}

int st_serve_cost_init(st_serve_cost *c, const st_serve_cfg *cfg, const st_model *m, double frac,
                       st_error *err)
{
    memset(c, 0, sizeof *c);
    if (m->kind != ST_MODEL_TRANSFORMER) {
        st_error_set(err, ST_EINVAL, "%s is not a transformer: serving needs a language model", m->id);
        return ST_EINVAL;
    }
    c->full = m;
    c->shard = *m; /* shallow: a transformer owns no pointers */
    c->gpu = *cfg->gpu;
    c->coef = cfg->coef;
    c->cluster = cfg->cluster;
    c->tp = cfg->tp > 0 ? cfg->tp : 1;
    c->pp = cfg->pp > 0 ? cfg->pp : 1;
    c->ep = cfg->ep > 0 ? cfg->ep : 1;
    c->cp = cfg->cp > 0 ? cfg->cp : 1;
    c->cp_per_node = st_serve_cp_per_node(cfg);
    c->quant = cfg->quant;
    c->kv_fp8 = cfg->kv_fp8;
    c->fa3 = st_serve_fa3(cfg);
    c->eager = cfg->eager;
    c->dtype = st_serve_dtype(cfg);
    if (frac < 1.0) {
        /* spatial sharing (MPS-style): a share of the SMs and of the bandwidth */
        c->gpu.sm_count = (int)floor(c->gpu.sm_count * frac);
        if (c->gpu.sm_count < 1)
            c->gpu.sm_count = 1;
        c->gpu.mem_bw *= frac;
        for (int d = 0; d < ST_DTYPE_COUNT; d++) {
            c->gpu.matrix[d].dense *= frac;
            c->gpu.matrix[d].sparse *= frac;
            c->gpu.vector[d] *= frac;
        }
    }
    st_transformer *tf = &c->shard.tf;
    st_transformer_shard(tf, c->tp, c->ep);
    long long L = m->tf.layers;
    tf->layers = (L + c->pp - 1) / c->pp;
    c->blocks = tf->layers;

    /* memory per GPU */
    const st_transformer *ft = &m->tf;
    double p_all = st_model_params(m), p_exp = st_model_params_expert(m);
    double p_nonblock = p_all - st_model_params_non_embedding(m);
    double p_block = p_all - p_nonblock - p_exp;
    double qb = 2.0; /* bytes per block weight */
    if (cfg->quant == ST_QUANT_W4A16)
        qb = 0.5 + 2.0 / 128.0; /* INT4 plus an FP16 scale per group of 128 (GPTQ/AWQ default) */
    else if (cfg->quant == ST_QUANT_W8A8 || cfg->quant == ST_QUANT_FP8)
        qb = 1.0;
    double es = st_dtype_bytes(c->dtype);
    double tp = c->tp;
    /* a stage holds its blocks (the largest stage ceil(L / pp) of them);
     * with PP the first stage holds the embedding, the last the LM head
     * (a tied one as a copy, as Megatron-LM and vLLM place them), so the
     * busiest GPU holds the larger of the two, not both */
    double stage_share = (double)c->blocks / (double)(L > 0 ? L : 1);
    double exp_split = c->ep > 1 ? (double)c->ep : tp;
    double nonblock = p_nonblock;
    if (c->pp > 1 && ft->lm_head && !ft->tied_embeddings)
        nonblock -= (double)ft->vocab * (double)st_transformer_embed_width(ft);
    c->weights_bytes = p_block * qb * stage_share / tp + p_exp * qb * stage_share / exp_split + nonblock * es / tp;
    /* CP shards the cache by token: a GPU holds 1/cp of each token's K/V */
    c->kv_bytes_per_token = (double)c->blocks * kv_bytes_local(c, 1) / (double)c->cp;
    /* vLLM's profiling forward at max_num_batched_tokens T: the block's live
     * tensors at its peak (residual, normed input, attention output and the
     * MLP's gate/up and activation outputs), and the sampler's FP32 logits
     * and probabilities over max_num_seqs rows */
    /* a CP rank's rows: its share of the prefill tokens and every decoding
     * token, at most ceil((T - d) / cp) + d with d = min(S, T) decodes */
    double T = (double)(cfg->sched == ST_SCHED_SARATHI ? cfg->chunk : cfg->max_batched_tokens),
           S = (double)cfg->max_num_seqs;
    if (c->cp > 1) {
        double d = S < T ? S : T;
        T = ceil((T - d) / (double)c->cp) + d;
    }
    double f_local = ft->experts > 0 ? (double)ft->top_k * (double)ft->expert_ffn_hidden / tp
                                     : (double)ft->ffn_hidden / tp;
    double mlp_live = (ft->gated_mlp ? 3.0 : 2.0) * f_local;
    c->act_bytes = T * (4.0 * (double)ft->hidden + mlp_live) * es + 2.0 * S * (double)ft->vocab * 4.0;
    /* MFU: 2 FLOPs per active parameter per token (embedding lookup excluded) */
    double active = p_all - p_exp - (double)ft->vocab * (double)st_transformer_embed_width(ft);
    if (ft->experts > 0)
        active += p_exp * (double)ft->top_k / (double)ft->experts;
    c->flops_per_token = 2.0 * active;
    return 0;
}

void st_serve_cost_free(st_serve_cost *c)
{
    free(c->lin.v);
    free(c->head.v);
    free(c->comm.v);
    free(c->cp_merge.v);
    free(c->cp_send.v);
    free(c->attn.key);
    free(c->attn.val);
    memset(&c->lin, 0, sizeof c->lin);
    memset(&c->head, 0, sizeof c->head);
    memset(&c->comm, 0, sizeof c->comm);
    memset(&c->cp_merge, 0, sizeof c->cp_merge);
    memset(&c->cp_send, 0, sizeof c->cp_send);
    memset(&c->attn, 0, sizeof c->attn);
}

/* Bytes a model's KV cache may take on one GPU: its share of
 * gpu_memory_utilization x the memory CUDA reports (vLLM's
 * total_gpu_memory: the preset's cuda_total_gib, else memory_gib) less its
 * weights, its activation peak and
 * the runtime reserve. Co-located models are separate engines (processes),
 * each with its own CUDA context, workspaces and graph pool: each is charged
 * the whole reserve. */
double st_serve_cuda_total(const st_gpu *g)
{
    return g->cuda_total_bytes > 0 ? g->cuda_total_bytes : g->mem_bytes;
}

double st_serve_kv_avail_bytes(const st_serve_cost *c, const st_serve_cfg *cfg, double mem_frac)
{
    return st_serve_cuda_total(&c->gpu) * cfg->gpu_mem_util * mem_frac - c->weights_bytes - c->act_bytes -
           cfg->runtime_reserve_bytes;
}

long long st_serve_kv_blocks(const st_serve_cost *c, const st_serve_cfg *cfg, double mem_frac)
{
    if (cfg->num_gpu_blocks > 0)
        return cfg->num_gpu_blocks;
    double avail = st_serve_kv_avail_bytes(c, cfg, mem_frac);
    double per_block = c->kv_bytes_per_token * (double)cfg->block_size;
    if (avail <= 0 || per_block <= 0)
        return 0;
    return (long long)floor(avail / per_block);
}
