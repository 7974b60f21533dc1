/* The training layer: the simulated pipeline against the closed forms, the
 * memory terms against hand arithmetic, communication identities, and the
 * configuration rules. */
#include "config.h"
#include "io/io.h"
#include "train/train.h"
#include "testutil.h"

#include <math.h>

static void test_pipeline(void **state)
{
    (void)state;
    st_train_cfg k;
    st_train_cfg_default(&k, NULL, 1);
    double bubble, inflight;
    k.pp = 4, k.microbatches = 8;
    /* 1F1B and GPipe: bubble (p-1)/(m+p-1) (Narayanan et al. 2021) */
    for (int s = 0; s < 2; s++) {
        k.sched = s ? ST_PP_GPIPE : ST_PP_1F1B;
        assert_int_equal(st_pipeline_sim(&k, 1, 2, &bubble, &inflight, NULL), 0);
        assert_true(fabs(bubble - 3.0 / 11) < 1e-9);
        /* 1F1B holds p microbatches on the first stage, GPipe all m */
        assert_true(fabs(inflight - (s ? 8 : 4)) < 1e-9);
    }
    /* interleaved with v chunks: the bubble shrinks by v, (p-1)/v over m */
    k.sched = ST_PP_INTERLEAVED, k.chunks = 2;
    assert_int_equal(st_pipeline_sim(&k, 1, 2, &bubble, &inflight, NULL), 0);
    double want = (3.0 / 2) / (8 + 3.0 / 2);
    assert_true(fabs(bubble - want) < 0.02);
    k.sched = ST_PP_1F1B;
    k.microbatches = 1, k.pp = 1;
    assert_int_equal(st_pipeline_sim(&k, 1, 2, &bubble, &inflight, NULL), 0);
    assert_true(bubble == 0);
}

typedef struct fx {
    st_model m;
    st_cluster c;
    st_gpu_coef coef;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    st_error err;
    if (!f || st_load_model("gpt2-large", &f->m, &err) || st_gpu_coef_load(NULL, &f->coef, &err))
        return -1;
    st_node n;
    if (st_load_node("hgx-a100-4gpu", &n, &err))
        return -1;
    f->c.node = n;
    f->c.nodes = 1;
    snprintf(f->c.id, sizeof f->c.id, "%s", n.id);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    st_model_free(&f->m);
    free(f);
    return 0;
}

static void test_memory(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_train_result r, z;
    st_error err;
    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 4, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    /* 16-bit AdamW: 2 + 2 + 12 bytes per parameter (ZeRO paper) */
    double P = r.mem.weights / 2;
    assert_true(rel_diff(P, st_model_params(&f->m)) < 0.01);
    assert_true(rel_diff(r.mem.grads, 2 * P) < 1e-9 && rel_diff(r.mem.optimizer, 12 * P) < 1e-9);
    /* activations with FlashAttention: s b h (16e + 2) per block
     * (Korthikanti's, with the two one-byte dropout masks of GPT-2's
     * resid_pdrop 0.1; FlashAttention keeps no score matrix), 36 blocks,
     * one microbatch of one sequence */
    double sbh = 1024.0 * 1280;
    assert_true(rel_diff(r.mem.activations, 36 * sbh * 34) < 1e-9);
    /* fp32: 4 + 4 + 8 (m, v; no master copy); TF32 is a math mode over fp32
     * storage (A100 whitepaper), so its memory is fp32's */
    k.dtype = ST_FP32;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(rel_diff(z.mem.grads, 4 * P) < 0.01 && rel_diff(z.mem.optimizer, 8 * P) < 0.01);
    st_train_result t32;
    k.dtype = ST_TF32;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &t32, NULL, &err), 0);
    assert_true(t32.mem.weights == z.mem.weights && t32.mem.grads == z.mem.grads &&
                t32.mem.optimizer == z.mem.optimizer);
    k.dtype = ST_BF16;
    /* ZeRO-1 shards the optimizer over DP 4, ZeRO-3 everything */
    k.zero = 1;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(rel_diff(z.mem.optimizer, r.mem.optimizer / 4) < 1e-9 && rel_diff(z.mem.grads, r.mem.grads) < 1e-9);
    k.zero = 3;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(rel_diff(z.mem.weights, r.mem.weights / 4) < 1e-9);
    /* full recompute keeps e s b h per block, and the block being
     * recomputed holds its whole forward (34 s b h with FlashAttention)
     * until its backward is done: one at a time */
    k.zero = 0, k.recompute = ST_RECOMP_FULL;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(rel_diff(z.mem.activations, 36 * sbh * 2 + 34 * sbh) < 1e-9);
    assert_true(z.iteration_s > r.iteration_s); /* and it costs a forward */
    /* LoRA: no optimizer state for the frozen base; at 16 sequences per
     * microbatch skipping the base's weight gradients outweighs the adapter
     * GEMMs (at 1 sequence their launches dominate, as in eager PEFT) */
    k.recompute = ST_RECOMP_NONE, k.lora_rank = 16;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(z.mem.optimizer < r.mem.optimizer / 50);
    k.global_batch = 64, k.lora_rank = 0;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    k.lora_rank = 16;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(z.iteration_s < r.iteration_s);
}

/* Three memory and traffic rules, each against a hand count on GPT-2
 * Large (36 blocks, h 1280, vocabulary 50,257, 1,024 learned positions,
 * tied embeddings) on 4 A100s:
 * - FP8 keeps an FP8 copy of the block GEMMs' weights only: 3 bytes a
 *   block parameter, 2 for the embedding (V h + 1024 h) and the final layer
 *   norm (2 h), so 3 P - emb - 2 h;
 * - GPipe's last stage keeps every microbatch's logits (bf16 + fp32 loss,
 *   6 bytes a vocabulary entry a token) until its backward;
 * - ZeRO-2 without PP reduce-scatters every microbatch's gradients
 *   (DeepSpeed's stage 2): 4 microbatches, 4 times the traffic, gradients
 *   still a quarter; with PP the gradients accumulate whole and are
 *   reduced once, so a stage holds them as without ZeRO. */
static void test_fp8_gpipe_zero2(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_train_result r, z;
    st_error err;
    double V = 50257, h = 1280, emb = V * h + 1024 * h;
    st_cluster hc = {0}; /* FP8 needs Hopper */
    assert_int_equal(st_load_node("hgx-h100-4gpu", &hc.node, &err), 0);
    hc.nodes = 1;
    snprintf(hc.id, sizeof hc.id, "%s", hc.node.id);
    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 4, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1;
    assert_int_equal(st_train_eval(&f->m, &hc, &f->coef, &k, &r, NULL, &err), 0);
    double P = r.mem.weights / 2;
    k.dtype = ST_FP8;
    assert_int_equal(st_train_eval(&f->m, &hc, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(rel_diff(z.mem.weights, 3 * P - emb - 2 * h) < 1e-9); /* ln_f's 2h stay 16-bit too */

    st_train_cfg_default(&k, &f->m, 1);
    k.pp = 4, k.microbatches = 8, k.global_batch = 8, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1;
    k.sched = ST_PP_1F1B;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    /* 1F1B: the first stage, p microbatches in flight, is the busiest and
     * holds no logits; GPipe: the last, with all 8 and their logits */
    assert_true(r.mem.inflight == 4 && r.mem.logits == 0);
    k.sched = ST_PP_GPIPE;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(rel_diff(z.mem.logits, 8 * 1024 * V * 6) < 1e-9);

    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 16, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1, k.zero = 2;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    k.microbatches = 4;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(r.dp_s > 0 && rel_diff(z.dp_s, 4 * r.dp_s) < 1e-9);
    assert_true(rel_diff(z.mem.grads, 2 * P / 4) < 0.01);
    st_train_cfg_default(&k, &f->m, 2);
    k.pp = 2, k.microbatches = 4, k.global_batch = 8, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    k.zero = 2;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    assert_true(z.mem.grads == r.mem.grads && z.mem.optimizer < r.mem.optimizer);
}

/* A bias's gradient is a kernel of its own (a sum of dy over the tokens),
 * so without LoRA a biased model's step is slower than the same model
 * without biases; under LoRA the base (biases included) is frozen and the
 * adapters have none, so the biases change no kernel and the step is the
 * same to the bit. GPT-2 Large on 4 A100s, DP 4. */
static void test_bias_grads_lora(void **state)
{
    fx *f = *state;
    st_model nb = f->m;
    nb.tf.bias = 0;
    st_train_cfg k;
    st_train_result with, without;
    st_error err;
    st_train_cfg_default(&k, &f->m, 4);
    k.dp = 4, k.global_batch = 4, k.seq = 1024, k.dtype = ST_BF16;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &with, NULL, &err), 0);
    assert_int_equal(st_train_eval(&nb, &f->c, &f->coef, &k, &without, NULL, &err), 0);
    assert_true(with.iteration_s > without.iteration_s);
    k.lora_rank = 16;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &with, NULL, &err), 0);
    assert_int_equal(st_train_eval(&nb, &f->c, &f->coef, &k, &without, NULL, &err), 0);
    assert_true(with.iteration_s == without.iteration_s);
}

/* Activation memory follows the architecture: with GPT's dropouts it is
 * Korthikanti et al. 2022, Table 2, exactly (34 s b h + 5 a s^2 b per layer
 * at 16 bits; TP t: s b h (10 + 24/t) + 5 a s^2 b / t); a gated MLP keeps
 * four f-wide tensors eagerly; MoE with EP keeps attention whole per rank. */
static void test_activation_terms(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_train_result r;
    st_error err;
    st_model m = f->m;
    m.tf.hidden_dropout = m.tf.attn_dropout = 0.1;
    st_train_cfg_default(&k, &m, 1);
    k.global_batch = 1, k.seq = 1024, k.dtype = ST_BF16, k.flash = 0;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    double sbh = 1024.0 * 1280, as2b = 20.0 * 1024 * 1024;
    assert_true(rel_diff(r.mem.activations, 36 * (34 * sbh + 5 * as2b)) < 1e-9);
    /* selective recompute drops the 5 a s^2 b of every block but the one
     * whose attention core is being recomputed */
    k.recompute = ST_RECOMP_SELECTIVE;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.mem.activations, 36 * 34 * sbh + 5 * as2b) < 1e-9);
    st_train_cfg_default(&k, &m, 4);
    k.global_batch = 1, k.seq = 1024, k.dtype = ST_BF16, k.tp = 4, k.dp = 1;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.mem.activations, 36 * (sbh * (10 + 24.0 / 4) + 5 * as2b / 4)) < 1e-9);

    /* Llama-2-7B, BF16, FlashAttention, no dropout: per token and block
     * 4eh (norm and GEMM inputs) + e(2q + 2kv) (Q, K, V, projection input)
     * + 4ef (gate, SiLU output, up, product) = 32768 + 32768 + 88064 */
    st_model l;
    assert_int_equal(st_load_model("llama2-7b", &l, &err), 0);
    st_train_cfg_default(&k, &l, 1);
    k.global_batch = 1, k.seq = 2048, k.dtype = ST_BF16, k.flash = 1;
    assert_int_equal(st_train_eval(&l, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.mem.activations, 32 * 2048.0 * 153600) < 1e-9);
    /* fused SwiGLU keeps gate and up only: 3ef, 66048 */
    k.fused = 1;
    assert_int_equal(st_train_eval(&l, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.mem.activations, 32 * 2048.0 * (32768 + 32768 + 66048)) < 1e-9);
    st_model_free(&l);

    /* Mixtral 8x7B, TP 2, PP 4, EP 8 on 64 H100s: per block and TP rank,
     * (attention 4096 x 6144 + 4096 x 4096 and experts 8 x 3 x 4096 x 14336
     * / EP 8) / TP 2, the norms 2 x 4096 and the router 4096 x 8 whole on
     * every rank (Megatron-LM replicates them); 8 blocks per stage and the
     * first stage's 32000 x 4096 / 2 embedding, in BF16 */
    st_model x;
    st_cluster cl;
    assert_int_equal(st_load_model("mixtral-8x7b", &x, &err), 0);
    assert_int_equal(st_load_cluster("ib-h100", &cl, &err), 0);
    st_train_cfg_default(&k, &x, 64);
    k.tp = 2, k.pp = 4, k.ep = 8, k.sp = 1, k.dp = 8, k.flash = 1, k.dtype = ST_BF16;
    k.global_batch = 256, k.seq = 4096, k.microbatches = 32;
    assert_int_equal(st_train_eval(&x, &cl, &f->coef, &k, &r, NULL, &err), 0);
    double blk = (4096.0 * 6144 + 4096.0 * 4096 + 8 * 3 * 4096.0 * 14336 / 8) / 2 + 2 * 4096 + 4096 * 8;
    /* memory is the first stage's (1F1B keeps the most microbatches in
     * flight there): its embedding, not the last stage's head and final
     * RMSNorm, 4096 parameters more */
    assert_true(rel_diff(r.mem.weights, 2 * (8 * blk + 32000.0 * 4096 / 2)) < 1e-9);
    /* ZeRO-1 shards the dense part's 12-byte Adam state over DP 8, the
     * experts' only over the dp / ep = 1 ranks that hold the same expert
     * shard (Megatron-LM's expert-data-parallel group): nothing */
    k.zero = 1;
    assert_int_equal(st_train_eval(&x, &cl, &f->coef, &k, &r, NULL, &err), 0);
    double xpert = 8 * (8 * 3 * 4096.0 * 14336 / 8 / 2), dense = 8 * blk + 32000.0 * 4096 / 2 - xpert;
    assert_true(rel_diff(r.mem.optimizer, 12 * (dense / 8 + xpert)) < 1e-9);
    /* the gradient buckets: the dense part's all-reduced over the DP 8
     * ranks (TP 2 apart: 4 per 8-GPU node), the experts' over their group
     * of one, which has nothing to reduce */
    k.zero = 0;
    assert_int_equal(st_train_eval(&x, &cl, &f->coef, &k, &r, NULL, &err), 0);
    {
        st_net_group g8;
        st_coll_est e8;
        /* the reduction is the stage with the most parameters: the last,
         * with the final RMSNorm's 4096 beside its head */
        double bytes = 2 * (dense + 4096), nb = ceil(bytes / (25.0 * 1024 * 1024));
        assert_int_equal(st_net_group_init(&cl, 8, 4, &g8, &err), 0);
        assert_int_equal(st_coll_estimate(&g8, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, bytes / nb, &e8, &err), 0);
        assert_true(rel_diff(r.dp_s, nb * e8.time_s * r.dp_contention) < 1e-9);
    }
    st_model_free(&x);

    /* ReLU keeps only its output (its backward takes the mask from it):
     * GPT-2 Large made ReLU, BF16, flash, no dropout: per token and block
     * 4eh + e(2q + 2kv) + ef = 10240 + 10240 + 10240 B, against GELU's
     * input and output, 2ef */
    m.tf.hidden_dropout = m.tf.attn_dropout = 0;
    m.tf.activation = ST_ACT_RELU;
    st_train_cfg_default(&k, &m, 1);
    k.global_batch = 1, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.mem.activations, 36 * 1024.0 * 30720) < 1e-9);
    m.tf.activation = ST_ACT_GELU;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.mem.activations, 36 * 1024.0 * 40960) < 1e-9);

    /* K and V heads fewer than TP are replicated, not split: GPT-2 Large
     * with 2 KV heads at TP 4 keeps one KV head per rank. Per token and
     * block: 4eh = 10240 whole, Q and the projection input 5 heads x 64 x
     * 2 B each (1280), K and V one head each (256), the GELU pair 2 x 1280
     * x 2 B (5120). FP32 weights per rank and block: QKV 1280 x (320 + 2 x
     * 64) and its bias, projection 320 x 1280 and its whole 1280 bias,
     * fc1 1280 x 1280 and its bias, fc2 1280 x 1280 and its whole bias,
     * both norms' 2 x 1280 whole; the embedding 50257 x 1280 / 4, the
     * 1024 x 1280 positions and the final layer norm's 2 x 1280, whole */
    m.tf.kv_heads = 2;
    st_train_cfg_default(&k, &m, 4);
    k.global_batch = 1, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1, k.tp = 4, k.dp = 1;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.mem.activations, 36 * 1024.0 * (10240 + 1280 + 256 + 5120)) < 1e-9);
    k.dtype = ST_FP32;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    double h = 1280, wblk = h * (320 + 128) + (320 + 128) + 320 * h + h + 2 * h * 1280 + 1280 + h + 2 * (2 * h);
    assert_true(rel_diff(r.mem.weights, 4 * (36 * wblk + 50257 * h / 4 + 1024 * h + 2 * h)) < 1e-9);
}

/* One ZeRO-3 round for `bytes` of weights on group g: all-gather forward
 * and backward, reduce-scatter of the gradients. */
static double z3_round(const st_net_group *g, double bytes)
{
    st_coll_est e;
    st_error err;
    assert_int_equal(st_coll_estimate(g, ST_COLL_ALLGATHER, ST_ALGO_AUTO, bytes, &e, &err), 0);
    double ag = e.time_s;
    assert_int_equal(st_coll_estimate(g, ST_COLL_REDUCESCATTER, ST_ALGO_AUTO, bytes, &e, &err), 0);
    return 2 * ag + e.time_s;
}

static void test_comm(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_train_result r;
    st_error err;
    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 16, k.seq = 1024, k.dtype = ST_FP32;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    /* DP: a 4-GPU ring all-reduce of every gradient, mostly hidden */
    assert_true(r.dp_s > 0 && r.dp_exposed_s < r.dp_s);
    assert_true(r.comm_s < 0.05 * r.iteration_s);
    assert_true(r.bubble_fraction == 0);
    assert_true(r.mfu > 0 && r.mfu < 1);
    assert_true(rel_diff(r.tokens_per_s, 16.0 * 1024 / r.iteration_s) < 1e-12);
    assert_true(r.lo_s < r.iteration_s && r.hi_s > r.iteration_s);
    /* TP 4: 4 all-reduces of b s h per block per microbatch, on the critical
     * path, and Megatron-LM's two at the vocabulary-parallel ends (the
     * embedding's output forward, the head's input gradient backward) */
    k.dp = 1, k.tp = 4;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    st_net_group g;
    st_coll_est e;
    assert_int_equal(st_net_group_init(&f->c, 4, 4, &g, &err), 0);
    assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, 16.0 * 1024 * 1280 * 4, &e, &err), 0);
    assert_true(rel_diff(r.tp_s, (36 * 4 + 2) * e.time_s) < 1e-9);
    /* PP 4 over 16 microbatches: bubble near 3/19, plus the send/recvs */
    k.tp = 1, k.pp = 4, k.microbatches = 16;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(r.bubble_fraction > 0.08 && r.bubble_fraction < 0.25);
    assert_true(r.pp_s > 0);

    /* ZeRO-3 over DP 4, one microbatch, BF16: every block's weights
     * gathered forward and backward and its gradients reduce-scattered
     * (the ZeRO paper's 1.5x of DP's volume), GPT-2 Large's block 12h^2 +
     * 13h parameters; the tied embedding (50257 + 1024 positions) x h, and
     * on the head's side the final layer norm's 2h, the same way; nothing
     * else communicates */
    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 4, k.seq = 1024, k.dtype = ST_BF16, k.zero = 3;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    double h = 1280, blk = 2 * (12 * h * h + 13 * h), emb = 2 * (50257 + 1024) * h, lnf = 2 * (2 * h);
    /* the embedding's round, and the head side's: the tied head has no
     * matrix of its own, only the final layer norm's 2h */
    assert_true(rel_diff(r.comm_total_s, 36 * z3_round(&g, blk) + z3_round(&g, emb) + z3_round(&g, lnf)) < 1e-9);
    assert_true(r.dp_s == 0 && r.zero_s > 0 && r.zero_s == r.comm_s && r.comm_s < r.comm_total_s);
    /* the first block's gather is paid whole each way: at least 2 ag + rs
     * exposed, besides the embedding's */
    assert_true(r.comm_s >= z3_round(&g, blk) + z3_round(&g, emb) - 1e-12);
    /* memory: the running and the prefetched block gathered whole, and one
     * block's BF16 gradients before their reduce-scatter; no DP buckets */
    /* ... or, larger here, the gathered tied embedding (64 M parameters)
     * and its gradient at the ends */
    assert_true(2 * emb > 3 * blk && rel_diff(r.mem.buffers, 2 * emb) < 1e-9);
    /* ZeRO-3 with CP 2 x DP 2: the four ranks share the weights (Megatron-
     * LM reduces CP's gradients with DP's and shards over both), so the
     * same rounds run on a group of 4, and a quarter of the weights stays */
    k.dp = 2, k.cp = 2, k.global_batch = 2, k.flash = 1; /* ring attention runs fused */
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_true(rel_diff(r.comm_total_s - r.cp_all_s, 36 * z3_round(&g, blk) + z3_round(&g, emb) +
                                                           z3_round(&g, lnf)) < 1e-9);
    assert_true(r.dp_s == 0 && r.cp_all_s >= r.cp_s); /* CP's ring: cp_all_s, its exposed part cp_s */
    assert_true(rel_diff(r.mem.weights, (36 * blk + emb + lnf) / 4) < 1e-9);
    /* untied head (Llama-2-7B, PP 1): the one stage gathers embedding and
     * head both, each 32000 x 4096 BF16 (the head with the final RMSNorm's
     * 4096), and comm counts both */
    st_model l;
    assert_int_equal(st_load_model("llama2-7b", &l, &err), 0);
    st_train_cfg_default(&k, &l, 4);
    k.global_batch = 4, k.seq = 1024, k.dtype = ST_BF16, k.zero = 3, k.flash = 1;
    assert_int_equal(st_train_eval(&l, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    double lb = 2 * (4096.0 * 4096 * 4 + 3 * 4096.0 * 11008 + 2 * 4096), le = 2 * 32000.0 * 4096;
    assert_true(rel_diff(r.comm_total_s, 32 * z3_round(&g, lb) + z3_round(&g, le) + z3_round(&g, le + 2 * 4096.0)) <
                1e-9);
    st_model_free(&l);
}

/* Uneven pipeline stages: the split, by hand, and its effect. */
static void test_uneven_stages(void **state)
{
    fx *f = *state;
    /* Llama 3 405B: 126 layers on 16 stages, 7 on the first and the last,
     * 8 on the rest (Llama 3 paper, Sec. 3.3.2); 11 on 4: the last short */
    long long sum = 0;
    for (int vs = 0; vs < 16; vs++) {
        long long n = st_pipeline_stage_layers(126, 16, vs);
        assert_int_equal(n, vs == 0 || vs == 15 ? 7 : 8);
        sum += n;
    }
    assert_int_equal(sum, 126);
    long long want11[4] = {3, 3, 3, 2}, want10[4] = {2, 3, 3, 2};
    for (int vs = 0; vs < 4; vs++) {
        assert_int_equal(st_pipeline_stage_layers(11, 4, vs), want11[vs]);
        assert_int_equal(st_pipeline_stage_layers(10, 4, vs), want10[vs]);
    }
    assert_int_equal(st_pipeline_stage_layers(10, 4, 4), 0);
    /* Llama 3 with one layer per model chunk: 126 layers on 128 chunks, the
     * first holding only the embedding, the last only the head */
    for (int vs = 0; vs < 128; vs++)
        assert_int_equal(st_pipeline_stage_layers(126, 128, vs), vs == 0 || vs == 127 ? 0 : 1);
    /* 34 layers on PP 4 (8, 9, 9, 8) run between the even 32 and 36; the
     * busiest device holds 9 blocks */
    st_model m = f->m;
    m.tf.vocab = 1000; /* a light head, so that a middle stage can be the busiest */
    st_train_cfg k;
    st_train_result r32, r34, r36;
    st_error err;
    st_train_cfg_default(&k, &m, 4);
    k.global_batch = 16, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1;
    k.dp = 1, k.pp = 4, k.microbatches = 16;
    m.tf.layers = 32;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r32, NULL, &err), 0);
    m.tf.layers = 34;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r34, NULL, &err), 0);
    m.tf.layers = 36;
    assert_int_equal(st_train_eval(&m, &f->c, &f->coef, &k, &r36, NULL, &err), 0);
    assert_true(r34.iteration_s > r32.iteration_s && r34.iteration_s <= r36.iteration_s);
    assert_int_equal(r34.stage_layers_min, 8);
    /* the busiest stage is a 9-block middle one, not an end (8 blocks and
     * the embedding or head, as every stage of the 32-layer split) */
    assert_true(r34.fwd_s > r32.fwd_s && r34.bwd_s > r32.bwd_s);
    assert_int_equal(r34.stage_layers_max, 9);
    /* memory is each device's own: 1F1B holds 4, 3, 2, 1 microbatches on
     * devices 0..3. Device 0: 8 blocks of weights (16 B x 12 x 1280^2 =
     * 315 MB each with AdamW) and 8 x 4 = 32 block-microbatches of
     * activations (1024 x 1280 x 34 B = 44.6 MB each): 3.95 GB; device 1:
     * 9 blocks and 9 x 3 = 27: 4.04 GB, the busiest, so its 27 are reported
     * (against 9 x 4 = 36 on device 0 of the even 36-layer split) */
    assert_true(rel_diff(r34.mem.activations, r36.mem.activations * 27 / 36) < 1e-9);
    /* only the two end stages may be empty: 2 layers on 4 stages run, 1 is
     * refused */
    m.tf.layers = 2;
    assert_int_equal(st_train_check(&m, &f->c, &k, &err), 0);
    m.tf.layers = 1;
    assert_int_equal(st_train_check(&m, &f->c, &k, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "cannot fill"));
}

/* One GPU, one microbatch: train's step is eval's (forward, backward and
 * optimizer composed the same way), so the relative 90% band must be the
 * same, the compose layer's correlated band summed over the step. */
static void test_band_matches_eval(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_train_result r;
    st_error err;
    st_train_cfg_default(&k, &f->m, 1);
    k.global_batch = 1, k.seq = 1024, k.dtype = ST_FP32;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    st_gen_opts o;
    st_gen_opts_default(&o, &f->m);
    o.phase = ST_PHASE_TRAIN, o.batch = 1, o.seq = 1024, o.dtype = ST_FP32;
    st_oplist ops = {0};
    assert_int_equal(st_model_ops(&f->m, &o, &ops, &err), 0);
    st_compose_opts co;
    st_compose_opts_default(&co);
    st_step *s = malloc(sizeof *s);
    assert_non_null(s);
    assert_int_equal(st_compose(&f->c.node.gpu, &f->coef, &ops, &co, s, &err), 0);
    assert_true(rel_diff(r.iteration_s, s->total_s) < 0.01);
    /* the low end: the band, or the kernels' floors where those bind (recompute here), whose
     * share follows the two times (within 1%) */
    assert_true(fabs(r.lo_s / r.iteration_s - s->lo_s / s->total_s) < 5e-3);
    assert_true(fabs(r.hi_s / r.iteration_s - s->hi_s / s->total_s) < 5e-4);
    /* full recompute: the backward reruns each block's forward, in both */
    k.recompute = ST_RECOMP_FULL, co.recompute = 1;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    assert_int_equal(st_compose(&f->c.node.gpu, &f->coef, &ops, &co, s, &err), 0);
    assert_true(rel_diff(r.iteration_s, s->total_s) < 0.01);
    /* the low end: the band, or the kernels' floors where those bind (recompute here), whose
     * share follows the two times (within 1%) */
    assert_true(fabs(r.lo_s / r.iteration_s - s->lo_s / s->total_s) < 5e-3);
    assert_true(fabs(r.hi_s / r.iteration_s - s->hi_s / s->total_s) < 5e-4);
    free(s);
    st_oplist_free(&ops);
}

/* Full recompute re-issues the forward's TP all-reduces; executed FLOPs
 * count the recomputed forward. */
static void test_recompute_counts(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_train_result r, z;
    st_error err;
    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 4, k.seq = 1024, k.dtype = ST_BF16, k.flash = 1, k.dp = 1, k.tp = 4;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &r, NULL, &err), 0);
    k.recompute = ST_RECOMP_FULL;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &z, NULL, &err), 0);
    /* Megatron: 2 all-reduces forward, 2 backward, 2 more in the rerun, a
     * block; the two at the embedding and head are not rerun */
    assert_true(rel_diff((z.tp_s - r.tp_s) / (r.tp_s), (36.0 * 2) / (36 * 4 + 2)) < 1e-9);
    /* and the rerun sits in the backward: the backward grows by one
     * forward block, all-reduces included, per block. One block's forward
     * is the 36-layer forward less the 35-layer one. Without the rerun's
     * all-reduces the growth would be short by r.tp_s / 2 (about 10%). */
    st_model m35 = f->m;
    m35.tf.layers = 35;
    st_train_result r35;
    k.recompute = ST_RECOMP_NONE;
    assert_int_equal(st_train_eval(&m35, &f->c, &f->coef, &k, &r35, NULL, &err), 0);
    double f_blk = r.fwd_s - r35.fwd_s;
    assert_true(rel_diff(z.bwd_s - r.bwd_s, 36 * f_blk) < 0.02);
    assert_true(r.tp_s / 2 > 0.05 * (z.bwd_s - r.bwd_s));
    k.recompute = ST_RECOMP_FULL;
    assert_true(r.hw_flops == r.model_flops && z.model_flops == r.model_flops);
    /* the rerun forward is a third of fwd + bwd for the blocks: executed
     * FLOPs below 4/3 of model FLOPs (embedding and head are not rerun) and
     * above 1.3 (GPT-2 Large's head is 2.5% of its forward) */
    double ratio = z.hw_flops / z.model_flops;
    assert_true(ratio > 1.3 && ratio < 4.0 / 3);
    assert_true(rel_diff(z.hw_tflops_per_gpu / z.tflops_per_gpu, ratio) < 1e-12);
    assert_true(rel_diff(z.tflops_per_gpu, z.model_flops / z.iteration_s / 4 / 1e12) < 1e-12);
}

/* Model FLOPs do not depend on the attention kernel: causal attention's
 * unmasked pairs, counted by hand for GPT-2 Large (36 layers, h 1280, fused
 * QKV, 4h MLP, 50,257-word head: 772,117,760 matmul weights); eager
 * attention executes the masked half too (hardware FLOPs). LoRA freezes
 * every weight gradient (2 N T less) and adds its adapters, each trained in
 * full (3 x 2 T r (k + n), summed over QKV, out, up, down: k + n = 20,480). */
static void test_model_flops_convention(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_train_result e, fl, lo;
    st_error err;
    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 4, k.seq = 1024, k.dtype = ST_BF16, k.dp = 1, k.tp = 4;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &e, NULL, &err), 0);
    k.flash = 1;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &fl, NULL, &err), 0);
    k.lora_rank = 16;
    assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &k, &lo, NULL, &err), 0);
    const double T = 1024, B = 4, L = 36, h = 1280, Nw = 772117760.0;
    double pairs = T * (T + 1) / 2;
    double useful = B * (6 * Nw * T + 3 * L * 4 * h * pairs);
    assert_true(e.model_flops == fl.model_flops);
    assert_true(rel_diff(fl.model_flops, useful) < 0.005);
    assert_true(fl.hw_flops == fl.model_flops);
    /* eager: the masked products as well (its extra softmax and mask
     * passes over the square are a few percent of that) */
    double masked = B * 3 * L * 4 * h * (T * T - pairs);
    assert_true(e.hw_flops > e.model_flops);
    assert_true(rel_diff(e.hw_flops - e.model_flops, masked) < 0.05);
    assert_true(rel_diff(e.mfu / fl.mfu, fl.iteration_s / e.iteration_s) < 1e-12);
    double adapters = B * L * 2 * T * 16 * 20480;
    assert_true(rel_diff(lo.model_flops, fl.model_flops - B * 2 * Nw * T + 3 * adapters) < 1e-3);
}

static void test_rules(void **state)
{
    fx *f = *state;
    st_train_cfg k;
    st_error err;
    st_train_cfg_default(&k, &f->m, 4);
    k.global_batch = 4, k.seq = 1024;
    k.dp = 1, k.tp = 3;
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    k.tp = 1, k.pp = 4, k.dp = 1, k.zero = 3, k.microbatches = 4;
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "ZeRO-3"));
    k.zero = 0, k.pp = 1, k.dp = 4, k.microbatches = 1, k.global_batch = 6;
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    k.global_batch = 4, k.seq = 4096;
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    k.seq = 1024, k.dtype = ST_FP8; /* an A100 has no FP8 */
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    k.dtype = ST_BF16, k.dp = 8;
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    /* CP is ring attention: a fused kernel's online softmax, and a causal
     * sequence in 2 x CP load-balanced chunks (Megatron-LM) */
    k.dp = 1, k.tp = 1, k.pp = 1, k.cp = 4, k.global_batch = 4, k.microbatches = 1, k.seq = 1024, k.flash = 0;
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--flash"));
    k.flash = 1;
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), 0);
    k.seq = 1020; /* a multiple of CP, not of 2 x CP */
    assert_int_equal(st_train_check(&f->m, &f->c, &k, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "multiple of 8"));
}

static void test_plan(void **state)
{
    fx *f = *state;
    st_plan_opts o;
    memset(&o, 0, sizeof o);
    o.gpus = 4, o.global_batch = 8, o.seq = 1024, o.dtype = ST_BF16, o.flash = 1;
    st_plan_point *a, *b;
    size_t na, nb;
    st_error err;
    o.threads = 1;
    assert_int_equal(st_plan(&f->m, &f->c, &f->coef, &o, &a, &na, &err), 0);
    o.threads = 3;
    assert_int_equal(st_plan(&f->m, &f->c, &f->coef, &o, &b, &nb, &err), 0);
    assert_true(na == nb && na > 20);
    for (size_t i = 0; i < na; i++)
        assert_true(a[i].r.iteration_s == b[i].r.iteration_s && a[i].pareto == b[i].pareto);
    /* sorted; the front is non-dominated */
    for (size_t i = 1; i < na; i++)
        assert_true(a[i].r.mem.oom > a[i - 1].r.mem.oom || a[i].r.iteration_s >= a[i - 1].r.iteration_s);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < na && a[i].pareto; j++)
            assert_false(!a[j].r.mem.oom && a[j].r.iteration_s < a[i].r.iteration_s &&
                         a[j].r.memory_per_gpu_bytes < a[i].r.memory_per_gpu_bytes);
    /* the plan's shared contention memo changes nothing: every point equals
     * its evaluation alone, and some point did simulate contention */
    int contended = 0;
    for (size_t i = 0; i < na; i++) {
        st_train_result r;
        assert_int_equal(st_train_eval(&f->m, &f->c, &f->coef, &a[i].cfg, &r, NULL, &err), 0);
        assert_true(r.iteration_s == a[i].r.iteration_s && r.dp_contention == a[i].r.dp_contention);
        contended += r.dp_contention > 1;
    }
    assert_true(contended > 0);
    free(a), free(b);
    /* no valid configuration: the reason every candidate gave, not a guess */
    o.gpus = 8 * f->c.node.gpus * f->c.nodes;
    assert_int_equal(st_plan(&f->m, &f->c, &f->coef, &o, &a, &na, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "GPUs asked (dp x tp x pp x cp); cluster ")); /* said once, not as a batch problem */
    o.gpus = 4, o.seq = f->m.tf.max_seq + 1;
    assert_int_equal(st_plan(&f->m, &f->c, &f->coef, &o, &a, &na, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "max_seq"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline),
        cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_activation_terms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bias_grads_lora, setup, teardown),
        cmocka_unit_test_setup_teardown(test_comm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uneven_stages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_flops_convention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recompute_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_band_matches_eval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fp8_gpipe_zero2, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
