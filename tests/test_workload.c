/*
 * Operator generation against hand counts. Every expected number below is
 * computed here from the model's published shape, independently of the
 * generator (which sums per-operator costs).
 */
#include "config.h"
#include "testutil.h"

#include <math.h>

#include "io/io.h"

static st_model load(const char *name)
{
    st_model m;
    st_error err;
    if (st_load_model(name, &m, &err) != 0)
        fail_msg("%s", err.msg);
    return m;
}

static st_oplist ops_for(const st_model *m, st_phase phase, long long batch, long long seq,
                         long long kv, st_attn_impl attn)
{
    st_gen_opts o;
    st_oplist l = {0, 0, NULL};
    st_error err;
    st_gen_opts_default(&o, m);
    o.phase = phase;
    o.batch = batch;
    o.seq = seq;
    o.kv_len = kv;
    o.attn = attn;
    if (st_model_ops(m, &o, &l, &err) != 0)
        fail_msg("%s", err.msg);
    return l;
}

static const st_op *find(const st_oplist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->ops[i].name, name) == 0)
            return &l->ops[i];
    fail_msg("no operator %s", name);
    return NULL;
}

static double sum_kind(const st_oplist *l, st_op_kind k, st_pass p)
{
    double t = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->ops[i].kind == k && l->ops[i].pass == p)
            t += l->ops[i].flops * (double)l->ops[i].repeat;
    return t;
}

/* Issue #2's figure: 2 * 6.48e9 * 2048 + 4*32*4096*2048^2 + 2*4096*32000*2048. */
static void test_llama2_7b_prefill_flops(void **state)
{
    st_model m = load("llama2-7b");
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 1, 2048, 0, ST_ATTN_EAGER);
    double d = 4096, L = 32, f = 11008, V = 32000, s = 2048;
    double block_matmul_params = 4 * d * d + 3 * d * f;
    double hand = 2 * L * block_matmul_params * s + 4 * L * d * s * s + 2 * d * V * s;
    double total = st_oplist_total_flops(&l);
    assert_true(rel_diff(total, 2.93e13) < 0.01);
    /* the matmuls alone are exactly the hand count; the rest (norms, softmax,
     * rope, SiLU, adds) is well under 1% */
    double mm = sum_kind(&l, ST_OP_GEMM, ST_PASS_FWD) + sum_kind(&l, ST_OP_BMM, ST_PASS_FWD);
    assert_true(mm == hand);
    assert_true(total > hand && total < hand * 1.01);
    st_oplist_free(&l);
}

/* GPT-2 small (124M): 12 layers, d 768, vocab 50257, context 1024. */
static void test_gpt2_prefill_flops(void **state)
{
    st_model m = load("gpt2-small");
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 2, 1024, 0, ST_ATTN_EAGER);
    double d = 768, L = 12, V = 50257, t = 2 * 1024.0, s = 1024;
    double hand = 2 * L * 12 * d * d * t + 4 * L * d * s * s * 2 + 2 * d * V * t;
    double mm = sum_kind(&l, ST_OP_GEMM, ST_PASS_FWD) + sum_kind(&l, ST_OP_BMM, ST_PASS_FWD);
    assert_true(mm == hand);
    assert_true(rel_diff(st_oplist_total_flops(&l), hand) < 0.01);
    /* HF's published count for gpt2: 124,439,808 parameters */
    assert_true(st_model_params(&m) == 124439808.0);
    st_oplist_free(&l);
}

static void test_gqa_shapes(void **state)
{
    st_model m = load("llama2-70b"); /* 64 heads, 8 KV heads, head_dim 128 */
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 1, 512, 0, ST_ATTN_EAGER);
    const st_op *qkv = find(&l, "block.attn.qkv");
    assert_int_equal(qkv->n, (64 + 2 * 8) * 128);
    assert_int_equal(qkv->k, 8192);
    assert_int_equal(qkv->m, 512);
    assert_true(qkv->flops == 2.0 * 512 * 8192 * 10240);
    assert_int_equal(qkv->repeat, 80);
    st_oplist_free(&l);
}

static void test_decode_shapes(void **state)
{
    st_model m = load("llama2-7b");
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_DECODE, 4, 2048, 1023, ST_ATTN_EAGER);
    const st_op *score = find(&l, "block.attn.score");
    assert_int_equal(score->batch, 4 * 32);
    assert_int_equal(score->m, 1);
    assert_int_equal(score->n, 1024); /* 1023 cached + the new token */
    assert_true(score->flops == 2.0 * 128 * 1 * 128 * 1024);
    /* weights are read once per step whatever the batch: the decode GEMM
     * reads 4096 x 11008 fp16 weights plus 4 rows of activations */
    const st_op *down = find(&l, "block.mlp.down");
    assert_true(down->bytes_read == (4.0 * 11008 + 11008.0 * 4096) * 2);
    st_oplist_free(&l);
}

static void test_flash_causal(void **state)
{
    st_model m = load("llama2-7b");
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 2, 1000, 0, ST_ATTN_FLASH);
    const st_op *fa = find(&l, "block.attn.flash");
    /* causal: s(s+1)/2 unmasked pairs per head, 2 matmuls of 2 FLOP/MAC */
    assert_true(fa->flops == 4.0 * 2 * 32 * (1000.0 * 1001 / 2) * 128);
    st_oplist_free(&l);
}

/* Training: each forward GEMM gets a data and a weight gradient of equal
 * FLOPs, so backward GEMM FLOPs are exactly twice forward. */
static void test_train_backward(void **state)
{
    st_model m = load("llama2-7b");
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_TRAIN, 1, 1024, 0, ST_ATTN_EAGER);
    double fwd = sum_kind(&l, ST_OP_GEMM, ST_PASS_FWD) + sum_kind(&l, ST_OP_BMM, ST_PASS_FWD);
    double bwd = sum_kind(&l, ST_OP_GEMM, ST_PASS_BWD) + sum_kind(&l, ST_OP_BMM, ST_PASS_BWD);
    assert_true(bwd == 2 * fwd);
    /* the optimizer step touches every parameter once */
    const st_op *opt = find(&l, "optimizer.adamw");
    assert_true((double)opt->rows == st_model_params(&m));
    /* AdamW with fp16 weights: read master+m+v (fp32) and the fp16 grad,
     * and the grad once more for clip-by-global-norm's norm */
    assert_true(opt->bytes_read == st_model_params(&m) * (12 + 2 + 2));
    assert_true(opt->bytes_written == st_model_params(&m) * (12 + 2));
    st_oplist_free(&l);
}

/* FP8 is the Transformer Engine recipe (NVIDIA TE docs: FP8 GEMMs, other
 * operators in higher precision): block GEMMs in FP8 with a BF16 input
 * cast each, softmax and the LM head in BF16, the optimizer over BF16 */
static void test_fp8_recipe(void **state)
{
    st_model m = load("llama2-7b");
    (void)state;
    st_gen_opts o;
    st_oplist l = {0, 0, NULL};
    st_error err;
    st_gen_opts_default(&o, &m);
    o.phase = ST_PHASE_TRAIN, o.batch = 1, o.seq = 512, o.dtype = ST_FP8;
    assert_int_equal(st_model_ops(&m, &o, &l, &err), 0);
    int fwd_gemm = 0, casts = 0, head = 0;
    for (size_t i = 0; i < l.n; i++) {
        const st_op *op = &l.ops[i];
        if (op->kind == ST_OP_SOFTMAX || op->kind == ST_OP_RMSNORM)
            assert_int_equal(op->dtype, ST_BF16);
        if (op->kind == ST_OP_GEMM && op->pass == ST_PASS_FWD) {
            if (strstr(op->layer, "block"))
                fwd_gemm++, assert_int_equal(op->dtype, ST_FP8);
            else
                head++, assert_int_equal(op->dtype, ST_BF16);
        }
        if (op->pass == ST_PASS_FWD && strstr(op->name, "cast"))
            casts++;
    }
    /* Llama's block GEMMs: qkv (one fused launch), out, gate, up, down,
     * each one op repeated over the 32 blocks */
    assert_int_equal(fwd_gemm, 5);
    assert_int_equal(casts, fwd_gemm);
    assert_int_equal(head, 1);
    const st_op *opt = find(&l, "optimizer.adamw");
    assert_int_equal(opt->dtype, ST_BF16);
    st_oplist_free(&l);
}

/* OPT-350m embeds tokens at word_embed_proj_dim 512 and projects them into
 * its 1024-wide blocks (project_in) and back for the tied LM head
 * (project_out): 331,196,416 parameters (the Hugging Face model
 * facebook/opt-350m; by hand: 50272 x 512 + 2050 x 1024 positions +
 * 2 x 512 x 1024 + 24 x 12,596,224 per layer), the head GEMM 512 wide.
 * strata is 2,048 over (0.0006%): it reads 2048 positions, not OPT's
 * 2048 + 2, and gives this post-norm model an embedding norm and a final
 * norm that OPT-350m lacks (+4,096); without the projections' 1.0 M and at
 * the 1024-wide embedding the count was 25.7 M off. */
static void test_opt350m_projections(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/opt-350m-config.json"));
    assert_true(fabs(st_model_params(&m) - 331196416.0) / 331196416.0 < 1e-5);
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 1, 128, 0, ST_ATTN_EAGER);
    const st_op *in = find(&l, "embed.project_in"), *out = find(&l, "head.project_out"), *h = find(&l, "head.lm_head");
    assert_true(in->k == 512 && in->n == 1024 && out->k == 1024 && out->n == 512);
    assert_true(h->k == 512 && h->n == 50272 && h->flops == 2.0 * 128 * 512 * 50272);
    st_oplist_free(&l);
    st_model_free(&m);
}

static void test_moe_routing(void **state)
{
    st_model m = load("mixtral-8x7b"); /* 8 experts, top-2, ffn 14336 */
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 1, 2048, 0, ST_ATTN_EAGER);
    const st_op *up = find(&l, "moe_block.moe.up");
    assert_int_equal(up->batch, 8);
    assert_int_equal(up->m, 2048 * 2 / 8);
    /* each token visits top_k experts: FLOPs of top_k dense MLPs */
    assert_true(up->flops == 2.0 * 2048 * 2 * 4096 * 14336);
    /* published total: 46.7B parameters (Mistral AI, Mixtral of Experts 2024) */
    assert_true(rel_diff(st_model_params(&m), 46.7e9) < 0.005);
    st_oplist_free(&l);
}

static void test_cnn_resnet50(void **state)
{
    st_model m = load("resnet50");
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 1, 1, 0, ST_ATTN_EAGER);
    const st_op *c1 = &l.ops[0];
    assert_int_equal(c1->kind, ST_OP_CONV);
    assert_int_equal(c1->p, 112); /* (224 + 2*3 - 7)/2 + 1 */
    assert_true(c1->flops == 2.0 * 64 * 112 * 112 * 3 * 7 * 7);
    /* torchvision's published counts: 25,557,032 parameters, 4.09 GMAC */
    assert_true(st_model_params(&m) == 25557032.0);
    double convfc = sum_kind(&l, ST_OP_CONV, ST_PASS_FWD) + sum_kind(&l, ST_OP_GEMM, ST_PASS_FWD);
    assert_true(rel_diff(convfc / 2, 4.09e9) < 0.01);
    st_oplist_free(&l);
    st_model_free(&m);
    m = load("mobilenet-v2"); /* torchvision: 3,504,872 parameters, 0.30 GMAC */
    assert_true(st_model_params(&m) == 3504872.0);
    l = ops_for(&m, ST_PHASE_PREFILL, 1, 1, 0, ST_ATTN_EAGER);
    convfc = sum_kind(&l, ST_OP_CONV, ST_PASS_FWD) + sum_kind(&l, ST_OP_GEMM, ST_PASS_FWD);
    assert_true(rel_diff(convfc / 2, 0.30e9) < 0.02);
    st_oplist_free(&l);
    st_model_free(&m);
}

/* The torchvision networks the edge model is checked on: parameter counts
 * and multiply-adds as torchvision's model tables publish them (resnet18
 * 11,689,512 / 1.81 GMAC; vgg16 138,357,544 / 15.47; alexnet 61,100,840 /
 * 0.71; mnasnet1_0 4,383,312 / 0.31). */
static void test_cnn_torchvision(void **state)
{
    static const struct {
        const char *id;
        double params, gmac;
    } want[] = {
        {"resnet18", 11689512, 1.81}, {"vgg16", 138357544, 15.47}, {"alexnet", 61100840, 0.71},
        {"mnasnet", 4383312, 0.31},
    };
    (void)state;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        st_model m = load(want[i].id);
        assert_true(st_model_params(&m) == want[i].params);
        st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 1, 1, 0, ST_ATTN_EAGER);
        double convfc = sum_kind(&l, ST_OP_CONV, ST_PASS_FWD) + sum_kind(&l, ST_OP_GEMM, ST_PASS_FWD);
        assert_true(rel_diff(convfc / 2, want[i].gmac * 1e9) < 0.05);
        st_oplist_free(&l);
        st_model_free(&m);
    }
}

/* Global pooling over a non-square map uses the whole H x W window. */
static void test_cnn_nonsquare_pool(void **state)
{
    st_model m = load(testdata("cnn-nonsquare.yaml"));
    (void)state;
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 2, 1, 0, ST_ATTN_EAGER);
    const st_op *pool = NULL, *fc = NULL;
    for (size_t i = 0; i < l.n; i++) {
        if (l.ops[i].kind == ST_OP_POOL)
            pool = &l.ops[i];
        if (l.ops[i].kind == ST_OP_GEMM)
            fc = &l.ops[i];
    }
    assert_non_null(pool);
    assert_int_equal(pool->r, 32);
    assert_int_equal(pool->s, 64);
    assert_int_equal(pool->p, 1);
    assert_int_equal(pool->q, 1);
    assert_true(pool->flops == 2.0 * 8 * 32 * 64); /* one add per input element */
    assert_non_null(fc);
    assert_int_equal(fc->k, 8);
    /* conv 8x3x3x3 (no bias: BN follows) + BN 2x8 + fc 8x10 + 10 */
    assert_true(st_model_params(&m) == 8 * 27 + 16 + 80 + 10);
    st_oplist_free(&l);
    st_model_free(&m);
}

static void test_bad_options(void **state)
{
    st_gen_opts o;
    st_oplist l = {0, 0, NULL};
    st_error err;
    st_model m = load("llama2-7b");
    (void)state;
    st_gen_opts_default(&o, &m);
    o.seq = 5000; /* max_seq 4096 */
    assert_int_equal(st_model_ops(&m, &o, &l, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "outside 1..4096"));
    assert_null(l.ops);
    st_gen_opts_default(&o, &m);
    o.phase = ST_PHASE_TRAIN;
    o.dtype = ST_INT8; /* no integer training */
    assert_int_equal(st_model_ops(&m, &o, &l, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "not int8"));
    m = load("bert-large");
    st_gen_opts_default(&o, &m);
    o.phase = ST_PHASE_DECODE;
    assert_int_equal(st_model_ops(&m, &o, &l, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "encoder-only"));
    /* an encoder-decoder in decode: the encoded input (--seq) is bounded by
     * max_seq (512 for Switch-XL), as in prefill */
    m = load("switch-xl-4");
    st_gen_opts_default(&o, &m);
    o.phase = ST_PHASE_DECODE;
    o.kv_len = 10;
    o.seq = 513;
    assert_int_equal(st_model_ops(&m, &o, &l, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "encoder input length (--seq) 513 is outside 1..512"));
    o.seq = 512;
    assert_int_equal(st_model_ops(&m, &o, &l, &err), 0);
    st_oplist_free(&l);
    m = load("resnet50");
    st_gen_opts_default(&o, &m);
    o.phase = ST_PHASE_DECODE;
    assert_int_equal(st_model_ops(&m, &o, &l, &err), ST_EINVAL);
    st_model_free(&m);
}

/* Generating `model` (a file under gen-bad/ or a shipped name) with the
 * default options, phase/batch/seq changed where >= 0 / > 0, fails with
 * EINVAL and no op list; the message starts with the file's path and `at`
 * (line:col: item: ...) when given, else contains `want`. */
static void gen_fails(const char *model, int phase, long long batch, long long seq, const char *at,
                      const char *want)
{
    st_gen_opts o;
    st_oplist l = {0, 0, NULL};
    st_error err;
    st_model m = load(model);
    st_gen_opts_default(&o, &m);
    if (phase >= 0)
        o.phase = (st_phase)phase;
    if (batch > 0)
        o.batch = batch;
    if (seq > 0)
        o.seq = seq;
    assert_int_equal(st_model_ops(&m, &o, &l, &err), ST_EINVAL);
    assert_null(l.ops);
    if (at) {
        char prefix[1100];
        snprintf(prefix, sizeof prefix, "%s:%s", model, at);
        if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
            fail_msg("got: %s", err.msg);
    } else {
        assert_non_null(strstr(err.msg, want));
    }
    st_model_free(&m);
}

/* Generation errors: located at the item (CNN), and counts past 2^53 refused
 * rather than overflowing. */
static void test_generation_errors(void **state)
{
    (void)state;
    gen_fails(testdata("gen-bad/cnn-groups.yaml"), -1, 0, 0, "7:5: l1: groups 2 must divide", NULL);
    /* a model past 2^53 parameters is refused as it loads, at its hidden
     * size (line 4, column 9), not when its operators are generated */
    {
        st_model big;
        st_error e;
        char at[1100];
        assert_int_equal(st_load_model(testdata("gen-bad/huge.yaml"), &big, &e), ST_EINVAL);
        snprintf(at, sizeof at, "%s:4:9: with this hidden size the model has", testdata("gen-bad/huge.yaml"));
        if (strncmp(e.msg, at, strlen(at)) != 0 || !strstr(e.msg, "2^53"))
            fail_msg("got: %s", e.msg);
    }
    /* heads that do not divide the channels reaching a spatial transformer */
    gen_fails(testdata("gen-bad/cnn-st-heads.yaml"), -1, 0, 0, "9:5: l2: heads 3 do not divide the 64 channels",
              NULL);
    /* an item's own out width counts towards the 2^53 bound (3 x 1e6 x 2^20
     * x 1e4 elements would pass a bound of 8x the input width) */
    gen_fails(testdata("gen-bad/cnn-wide.yaml"), -1, 10000, 0, NULL, "2^53");
    /* the cross-attention context counts too: fine at batch 1, 1e16
     * elements at batch 1000 */
    st_gen_opts o;
    st_oplist l = {0, 0, NULL};
    st_error err;
    st_model m = load(testdata("gen-bad/cnn-context.yaml"));
    st_gen_opts_default(&o, &m);
    assert_int_equal(st_model_ops(&m, &o, &l, &err), 0);
    st_oplist_free(&l);
    st_model_free(&m);
    gen_fails(testdata("gen-bad/cnn-context.yaml"), -1, 1000, 0, "9:5: l1: a batch of 1000 makes tensors of 1e+16",
              NULL);
    /* a real model whose eager score tensor passes 2^53 elements:
     * 1e6 sequences x 32 heads x 32768^2 = 3.4e16 */
    gen_fails("mixtral-8x7b", -1, 1000000, 32768, NULL, "2^53");
}

/* Same inputs, same list, bit for bit. */
static void test_deterministic(void **state)
{
    st_model m = load("switch-xl-4");
    (void)state;
    st_oplist a = ops_for(&m, ST_PHASE_TRAIN, 3, 256, 0, ST_ATTN_FLASH);
    st_oplist b = ops_for(&m, ST_PHASE_TRAIN, 3, 256, 0, ST_ATTN_FLASH);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        assert_string_equal(a.ops[i].name, b.ops[i].name);
        assert_true(a.ops[i].flops == b.ops[i].flops);
        assert_true(a.ops[i].bytes_read == b.ops[i].bytes_read);
        assert_true(a.ops[i].bytes_written == b.ops[i].bytes_written);
        assert_int_equal(a.ops[i].repeat, b.ops[i].repeat);
    }
    st_oplist_free(&a);
    st_oplist_free(&b);
}

static const st_op *find_opt(const st_oplist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->ops[i].name, name) == 0)
            return &l->ops[i];
    return NULL;
}

/* GPT-2's eager attention as Hugging Face runs it (GPT2Attention._attn):
 * the score matrix is divided by sqrt(d) and passed through the causal
 * `where` before the softmax, and in training dropout runs on the
 * probabilities, after the embedding, the attention output and the MLP.
 * tests/data/hf/gpt2-tiny-config.json: hidden 64, 4 heads, FP32. */
static void test_hf_eager_and_dropout(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/gpt2-tiny-config.json"));
    assert_int_equal(m.tf.score_unary, 2);
    assert_int_equal(m.tf.score_binary, 0);
    st_oplist inf = ops_for(&m, ST_PHASE_PREFILL, 2, 16, 0, ST_ATTN_EAGER);
    st_oplist tr = ops_for(&m, ST_PHASE_TRAIN, 2, 16, 0, ST_ATTN_EAGER);
    /* scores: batch 2 x 4 heads x 16 x 16 = 2048 elements */
    const double se = 2048, he = 2.0 * 16 * 64; /* hidden states: 32 tokens x 64 */
    const st_op *s1 = find(&inf, "block.attn.score_ew1");
    assert_true(s1->rows == 2 * 4 * 16 && s1->cols == 16);
    assert_true(s1->bytes_read == se * 4);
    assert_true(s1->bytes_written == se * 4);
    /* the scale is a scalar pass (the vectorized kernel); the causal
     * `where` reads the (1,1,S,S) mask broadcast, so PyTorch runs its
     * non-vectorized kernel: two loads an element (scores, mask), and its
     * gradient (a where over dy) the same */
    assert_int_equal(m.tf.score_unary_bcast, 1);
    assert_int_equal(m.tf.score_bcast_select, 1);
    assert_int_equal(s1->scalar_loads, 0);
    assert_int_equal(find(&inf, "block.attn.score_ew2")->scalar_loads, 2);
    assert_int_equal(find(&tr, "block.attn.score_ew2.grad")->scalar_loads, 2);
    assert_int_equal(find(&tr, "block.attn.score_ew1.grad")->scalar_loads, 0);
    /* no dropout kernels outside training */
    assert_null(find_opt(&inf, "block.attn.dropout"));
    assert_null(find_opt(&inf, "embed.dropout"));
    /* training: fused dropout reads x, writes y and a one-byte keep mask */
    const st_op *d = find(&tr, "block.attn.dropout");
    assert_true(d->bytes_read == se * 4);
    assert_true(d->bytes_written == se * 4 + se);
    /* its gradient reads dy and the mask, writes dx */
    const st_op *dg = find(&tr, "block.attn.dropout.grad");
    assert_true(dg->bytes_read == se * 4 + se);
    assert_true(dg->bytes_written == se * 4);
    /* the scale's gradient needs dy only */
    const st_op *sg = find(&tr, "block.attn.score_ew1.grad");
    assert_true(sg->bytes_read == se * 4);
    const st_op *hd = find(&tr, "block.mlp.dropout");
    assert_true(hd->bytes_written == he * 4 + he);
    find(&tr, "block.attn.out.dropout");
    find(&tr, "embed.dropout");
    /* _merge_heads: the (2, 4, 16, 16) context is copied back to (2, 16, 64)
     * (permute + contiguous): 32 x 64 FP32 read and written once; its
     * gradient, permuted back, is copied again where the value matmul's
     * backward reshapes it to (8, 16, 16) */
    const st_op *mh = find(&tr, "block.attn.merge_heads");
    assert_true(mh->rows == 32 && mh->cols == 64);
    assert_true(mh->bytes_read == he * 4 && mh->bytes_written == he * 4);
    const st_op *mhg = find(&tr, "block.attn.merge_heads.grad");
    assert_true(mhg->bytes_read == he * 4 && mhg->bytes_written == he * 4);
    /* both copies read a strided source: the non-vectorized copy kernel */
    assert_true(mh->scalar_loads == 1 && mhg->scalar_loads == 1);
    /* the residual adds and the dropouts are contiguous: vectorized */
    assert_int_equal(find(&tr, "block.attn.residual")->scalar_loads, 0);
    assert_int_equal(d->scalar_loads, 0);
    /* Q, K and V are permuted views (_split_heads); torch.matmul reshapes
     * them to (8, 16, 16), which cannot merge batch and heads: three
     * strided copies of 32 tokens x 64 FP32 each, and in training three
     * copies of their gradients back token-major for c_attn's backward */
    assert_int_equal(m.tf.head_copies, 3);
    static const char *const qkv[3] = {"block.attn.q_heads", "block.attn.k_heads", "block.attn.v_heads"};
    for (int i = 0; i < 3; i++) {
        const st_op *c = find(&inf, qkv[i]);
        assert_true(c->bytes_read == he * 4 && c->bytes_written == he * 4);
        assert_int_equal(c->scalar_loads, 1);
        char gname[64];
        snprintf(gname, sizeof gname, "%s.grad", qkv[i]);
        const st_op *cg = find(&tr, gname);
        assert_true(cg->bytes_read == he * 4 && cg->bytes_written == he * 4);
    }
    /* decode: one query per sequence, the permuted context is contiguous
     * already (size-1 dimensions), and the cached K and V are contiguous
     * (torch.cat's output): no copy */
    st_oplist dec = ops_for(&m, ST_PHASE_DECODE, 2, 1, 16, ST_ATTN_EAGER);
    assert_null(find_opt(&dec, "block.attn.merge_heads"));
    assert_null(find_opt(&dec, "block.attn.q_heads"));
    assert_null(find_opt(&dec, "block.attn.k_heads"));
    assert_null(find_opt(&dec, "block.attn.v_heads"));
    st_oplist_free(&dec);
    /* a layer norm's backward is two kernels of one call: dx (reads dy, x
     * and the weight, writes dx) and the parameter gradients (reads dy and
     * x again, writes gamma's and beta's gradients) */
    const st_op *ng = find(&tr, "block.attn.norm.grad");
    assert_true(ng->bytes_read == (2 * he + 64) * 4 && ng->bytes_written == he * 4);
    assert_int_equal(ng->launch_only, 0);
    const st_op *np = find(&tr, "block.attn.norm.grad_params");
    assert_true(np->bytes_read == 2 * he * 4 && np->bytes_written == 2 * 64 * 4);
    assert_true(np->grad == ST_GRAD_WEIGHT && np->launch_only == 1);
    assert_true(np > ng); /* after dx */
    st_oplist_free(&inf);
    st_oplist_free(&tr);
    st_model_free(&m);
}

/* Grouped-query attention as Hugging Face's eager path runs it: repeat_kv
 * expands K and V to every query head (reads the 2 KV heads, writes all 4;
 * a call of its own), Q is copied by the matmul's reshape; in decode Q's
 * size-1 sequence needs no copy but repeat_kv still expands the whole
 * cache. tests/data/hf/llama-gqa-tiny-config.json: hidden 64, 4 heads of
 * 16, 2 KV heads, FP32. */
static void test_hf_gqa_copies(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/llama-gqa-tiny-config.json"));
    assert_int_equal(m.tf.head_copies, 3);
    st_oplist inf = ops_for(&m, ST_PHASE_PREFILL, 2, 16, 0, ST_ATTN_EAGER);
    const double all = 2.0 * 16 * 64 * 4; /* 32 tokens x 4 heads x 16, FP32 bytes */
    const st_op *q = find(&inf, "block.attn.q_heads"), *k = find(&inf, "block.attn.k_heads");
    assert_true(q->bytes_read == all && q->bytes_written == all && q->launch_only == 1);
    assert_true(k->bytes_read == all / 2 && k->bytes_written == all && k->launch_only == 0);
    st_oplist tr = ops_for(&m, ST_PHASE_TRAIN, 2, 16, 0, ST_ATTN_EAGER);
    /* the gradient sums the copies back into the 2 KV heads */
    const st_op *kg = find(&tr, "block.attn.k_heads.grad");
    assert_true(kg->bytes_read == all && kg->bytes_written == all / 2);
    /* decode, 16 cached tokens and the new one: the cache expanded, no Q copy */
    st_oplist dec = ops_for(&m, ST_PHASE_DECODE, 2, 1, 16, ST_ATTN_EAGER);
    assert_null(find_opt(&dec, "block.attn.q_heads"));
    const st_op *kd = find(&dec, "block.attn.k_heads");
    assert_true(kd->bytes_written == 2.0 * 17 * 64 * 4);
    find(&dec, "block.attn.v_heads");
    st_oplist_free(&inf);
    st_oplist_free(&tr);
    st_oplist_free(&dec);
    st_model_free(&m);
}

/* T5's cross-attention cache keeps the encoder's K and V as the permuted
 * views its first step made, so every decode step's matmul copies them (as
 * large as the cross-attention score's encoder length says), while the
 * self-attention's contiguous cache is not copied */
static void test_hf_t5_cross_copies(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/t5-base-config.json"));
    st_oplist dec = ops_for(&m, ST_PHASE_DECODE, 2, 16, 8, ST_ATTN_EAGER);
    const st_op *xs = find(&dec, "dec_block.xattn.score"), *xk = find(&dec, "dec_block.xattn.k_heads");
    find(&dec, "dec_block.xattn.v_heads");
    /* the score multiplies q (1) by enc_len keys over 12 heads of 64:
     * the copy reads and writes 2 x enc_len x 768 elements */
    double enc = xs->flops / (2.0 * 2 * 12 * 64);
    double es = xk->bytes_written / (2.0 * enc * 768);
    assert_true(enc >= 1 && (es == 2 || es == 4));
    assert_true(xk->bytes_read == xk->bytes_written);
    assert_null(find_opt(&dec, "dec_block.attn.k_heads"));
    assert_null(find_opt(&dec, "dec_block.xattn.q_heads"));
    st_oplist_free(&dec);
    st_model_free(&m);
}

/* OPT adds a (B,1,S,S) causal mask to the scores (a second score-sized
 * operand, whose gradient is dy itself: no backward kernel) and clamps
 * them; its attention dropout defaults to 0: no kernel. */
static void test_hf_opt_eager(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/opt-tiny-config.json"));
    assert_int_equal(m.tf.score_unary, 1);
    assert_int_equal(m.tf.score_binary, 1);
    assert_true(m.tf.attn_dropout == 0 && m.tf.hidden_dropout == 0.1);
    st_oplist tr = ops_for(&m, ST_PHASE_TRAIN, 1, 8, 0, ST_ATTN_EAGER);
    const st_op *a = find(&tr, "block.attn.score_add1");
    assert_true(a->bytes_read == 2.0 * 4 * 8 * 8 * 4); /* 4 heads x 8 x 8, two operands, FP32 */
    /* the mask is broadcast over the heads: the non-vectorized kernel; the
     * clamp against a scalar is not */
    assert_int_equal(a->scalar_loads, 2);
    assert_int_equal(find(&tr, "block.attn.score_ew1")->scalar_loads, 0);
    assert_null(find_opt(&tr, "block.attn.score_add1.grad"));
    assert_null(find_opt(&tr, "block.attn.dropout"));
    find(&tr, "block.mlp.dropout");
    /* flash attention runs none of the eager passes */
    st_oplist fl = ops_for(&m, ST_PHASE_TRAIN, 1, 8, 0, ST_ATTN_FLASH);
    assert_null(find_opt(&fl, "block.attn.score_add1"));
    /* its output is token-major already: no merge copy, and it takes Q, K
     * and V as they are */
    assert_null(find_opt(&fl, "block.attn.merge_heads"));
    assert_null(find_opt(&fl, "block.attn.q_heads"));
    /* OPT's _shape(...).contiguous() copies K and V, and Q the same way */
    find(&tr, "block.attn.k_heads");
    find(&tr, "block.attn.merge_heads");
    st_oplist_free(&tr);
    st_oplist_free(&fl);
    st_model_free(&m);
}

/* GPT-2's gelu_new runs as eight eager kernels (HF NewGELUActivation:
 * 0.5x, pow, 0.044715 *, +x, c *, tanh, 1 +: six unary; the two tensor
 * products +x and the final multiply: two binary) and autograd's backward
 * through them: the final product's two gradients, tanh's, pow's (x^2, a
 * scale and a product), three scalings and two adds accumulating dx over
 * x's three uses: five unary and six binary kernels. */
static void test_hf_gelu_new_composed(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/gpt2-tiny-config.json"));
    assert_int_equal(m.tf.act_unary, 6);
    assert_int_equal(m.tf.act_binary, 2);
    st_oplist inf = ops_for(&m, ST_PHASE_PREFILL, 2, 16, 0, ST_ATTN_EAGER);
    const double el = 32.0 * 256; /* 32 tokens x the 4 x 64 MLP */
    const st_op *a = find(&inf, "block.mlp.act");
    assert_true(a->bytes_read == el * 4 && a->bytes_written == el * 4);
    find(&inf, "block.mlp.act_ew6");
    assert_null(find_opt(&inf, "block.mlp.act_ew7"));
    const st_op *mul = find(&inf, "block.mlp.act_mul2");
    assert_true(mul->bytes_read == 2 * el * 4 && mul->bytes_written == el * 4);
    assert_null(find_opt(&inf, "block.mlp.act_mul3"));
    st_oplist tr = ops_for(&m, ST_PHASE_TRAIN, 2, 16, 0, ST_ATTN_EAGER);
    const st_op *g1 = find(&tr, "block.mlp.act.grad1"); /* unary: dy in, dx out */
    assert_true(g1->bytes_read == el * 4 && g1->bytes_written == el * 4);
    find(&tr, "block.mlp.act.grad5");
    const st_op *g6 = find(&tr, "block.mlp.act.grad6"); /* binary: dy and a saved tensor */
    assert_true(g6->bytes_read == 2 * el * 4 && g6->bytes_written == el * 4);
    find(&tr, "block.mlp.act.grad11");
    assert_null(find_opt(&tr, "block.mlp.act.grad12"));
    assert_null(find_opt(&tr, "block.mlp.act.grad"));
    assert_null(find_opt(&tr, "block.mlp.act_ew2.grad"));
    assert_null(find_opt(&tr, "block.mlp.act_mul1.grad"));
    st_oplist_free(&inf);
    st_oplist_free(&tr);
    st_model_free(&m);
}

/* BertForSequenceClassification: the pooler (dense + tanh on each
 * sequence's first token) and a classifier over id2label's 3 classes, no
 * LM head; 64 x 64 + 64 + 64 x 3 + 3 = 4355 parameters more than the bare
 * encoder. BERT's gelu is one kernel. */
static void test_hf_sequence_classifier(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/bert-tiny-cls-config.json"));
    assert_int_equal(m.tf.num_labels, 3);
    assert_int_equal(m.tf.lm_head, 0);
    assert_int_equal(m.tf.act_unary, 0);
    st_oplist inf = ops_for(&m, ST_PHASE_PREFILL, 2, 16, 0, ST_ATTN_EAGER);
    const st_op *p = find(&inf, "head.pooler");
    assert_true(p->m == 2 && p->k == 64 && p->n == 64);
    const st_op *c = find(&inf, "head.classifier");
    assert_true(c->m == 2 && c->k == 64 && c->n == 3);
    assert_null(find_opt(&inf, "head.lm_head"));
    assert_null(find_opt(&inf, "block.mlp.act_ew2"));
    st_oplist tr = ops_for(&m, ST_PHASE_TRAIN, 2, 16, 0, ST_ATTN_EAGER);
    const st_op *loss = find(&tr, "head.loss");
    assert_true(loss->rows == 2 && loss->cols == 3);
    find(&tr, "block.mlp.act.grad");
    /* BERT's scale, then its (B,1,1,S) padding-mask add: the add reads the
     * mask broadcast (the non-vectorized kernel) and its gradient is dy
     * itself (no kernel); the scale's gradient is a kernel */
    assert_true(m.tf.score_unary == 2 && m.tf.score_unary_bcast == 1 && !m.tf.score_bcast_select);
    assert_int_equal(find(&tr, "block.attn.score_ew2")->scalar_loads, 2);
    assert_null(find_opt(&tr, "block.attn.score_ew2.grad"));
    assert_int_equal(find(&tr, "block.attn.score_ew1.grad")->scalar_loads, 0);
    double with = st_model_params(&m);
    m.tf.num_labels = 0;
    assert_true(with - st_model_params(&m) == 4355);
    st_oplist_free(&inf);
    st_oplist_free(&tr);
    st_model_free(&m);
}

/* OPTForSequenceClassification (opt-350m, 3 labels): the decoder's
 * project_out (1024 -> 512, since word_embed_proj_dim != hidden_size) runs
 * before the score layer, nn.Linear(word_embed_proj_dim, num_labels,
 * bias=False), on every token (2 x 16 = 32 rows): 2 x 32 x 1024 x 512 =
 * 33554432 and 2 x 32 x 512 x 3 = 98304 FLOPs. Both models wrap OPTModel
 * and the causal LM's head is tied, so the classifier adds exactly
 * 512 x 3 = 1536 parameters to it (at the hidden width with a bias it was
 * 1024 x 3 + 3 = 3075). */
static void test_opt350m_classifier(void **state)
{
    (void)state;
    st_model lm = load(testdata("hf/opt-350m-config.json"));
    st_model m = load(testdata("hf/opt-350m-cls-config.json"));
    assert_int_equal(m.tf.num_labels, 3);
    assert_int_equal(m.tf.lm_head, 0);
    assert_true(st_model_params(&m) - st_model_params(&lm) == 1536.0);
    st_oplist l = ops_for(&m, ST_PHASE_PREFILL, 2, 16, 0, ST_ATTN_EAGER);
    const st_op *out = find(&l, "head.project_out"), *c = find(&l, "head.classifier");
    assert_true(out->m == 32 && out->k == 1024 && out->n == 512 && out->flops == 33554432.0);
    assert_true(c->m == 32 && c->k == 512 && c->n == 3 && c->flops == 98304.0);
    assert_true(out < c); /* project_out feeds the classifier */
    assert_null(find_opt(&l, "head.lm_head"));
    st_oplist_free(&l);
    st_model_free(&m);
    st_model_free(&lm);
}

/* A training step's options (optimizer off: the tests below look at the
 * backward), and its operator list; either failing fails the test. */
static st_gen_opts train_opts(const st_model *m, long long batch, long long seq)
{
    st_gen_opts o;
    st_gen_opts_default(&o, m);
    o.phase = ST_PHASE_TRAIN;
    o.batch = batch;
    o.seq = seq;
    o.with_optimizer = 0;
    return o;
}

static st_oplist gen(const st_model *m, const st_gen_opts *o)
{
    st_oplist l = {0, 0, NULL};
    st_error err;
    if (st_model_ops(m, o, &l, &err) != 0)
        fail_msg("%s", err.msg);
    return l;
}

/* The gradient-accumulation adds (".accum" ops): elements written at es
 * bytes each, and kernels, repeats counted. */
static void accum_totals(const st_oplist *l, double es, double *elems, double *kernels)
{
    *elems = *kernels = 0;
    for (size_t i = 0; i < l->n; i++)
        if (strstr(l->ops[i].name, ".accum")) {
            *elems += l->ops[i].bytes_written / es * (double)l->ops[i].repeat;
            *kernels += (double)l->ops[i].repeat;
        }
}

/* A Linear/Conv1D bias's gradient is a column sum of dy (PyTorch's addmm
 * backward runs a reduction kernel); with gradients accumulating (a second
 * backward without zero_grad, as NeuSight's label harness runs), each
 * parameter tensor's gradient is added into .grad by one kernel (autograd's
 * AccumulateGrad): 2 reads and 1 write per element. gpt2-tiny: hidden 64,
 * 2 blocks, 4 heads, FFN 256, vocab 100, 128 positions, tied LM head. */
static void test_bias_grad_and_accumulation(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/gpt2-tiny-config.json"));
    st_gen_opts o = train_opts(&m, 2, 16);
    st_oplist plain = gen(&m, &o);
    o.accumulate_grads = 1;
    st_oplist acc = gen(&m, &o);
    /* qkv: 32 tokens x 192 outputs; dy read once, 192 sums written */
    const st_op *bg = find(&plain, "block.attn.qkv.bgrad");
    assert_int_equal(bg->pass, ST_PASS_BWD);
    assert_true(bg->bytes_read == 32.0 * 192 * 4);
    assert_true(bg->bytes_written == 192.0 * 4);
    find(&plain, "block.mlp.down.bgrad");
    /* the LM head and the embeddings have no bias */
    for (size_t i = 0; i < plain.n; i++) {
        assert_null(strstr(plain.ops[i].name, "accum"));
        if (strstr(plain.ops[i].name, "bgrad"))
            assert_non_null(strstr(plain.ops[i].name, "block."));
    }
    const st_op *wa = find(&acc, "block.attn.qkv.wgrad.accum");
    assert_true(wa->bytes_read == 2.0 * 64 * 192 * 4 && wa->bytes_written == 64.0 * 192 * 4);
    const st_op *ba = find(&acc, "block.mlp.up.bgrad.accum");
    assert_true(ba->bytes_read == 2.0 * 256 * 4 && ba->bytes_written == 256.0 * 4);
    find(&acc, "block.attn.norm.gamma.accum");
    find(&acc, "block.attn.norm.beta.accum");
    find(&acc, "embed.positions.accum");
    /* every parameter once, the tied word embedding twice (autograd adds the
     * LM head's gradient to the embedding's before accumulating) */
    double elems, kernels;
    accum_totals(&acc, 4, &elems, &kernels);
    double per_block = 2 * 128 + 64 * 192 + 192 + 64 * 64 + 64 + 64 * 256 + 256 + 256 * 64 + 64;
    double params = 100 * 64 + 128 * 64 + 2 * per_block + 128;
    assert_true(params == st_model_params(&m));
    assert_true(elems == params + 100 * 64);
    /* 12 tensors a block, 2 embeddings, the final norm's 2, the LM head */
    assert_true(kernels == 2 * 12 + 2 + 2 + 1);
    st_oplist_free(&plain);
    st_oplist_free(&acc);
    /* the FP8 recipe's block GEMMs run in FP8; their gradients are BF16 */
    o.dtype = ST_FP8;
    o.accumulate_grads = 0;
    st_oplist f8 = gen(&m, &o);
    assert_int_equal(find(&f8, "block.attn.qkv")->dtype, ST_FP8);
    const st_op *b8 = find(&f8, "block.attn.qkv.bgrad");
    assert_int_equal(b8->dtype, ST_BF16);
    assert_true(b8->bytes_read == 32.0 * 192 * 2 && b8->bytes_written == 192.0 * 2);
    st_oplist_free(&f8);
    st_model_free(&m);
}

/* A CNN's parameters accumulate too: torchvision's ResNet-50 holds 161
 * parameter tensors (53 convolutions without bias, 53 batch norms' weight
 * and bias, the classifier's weight and bias: 53 + 106 + 2), 25,557,032
 * elements; one add each, every element once. */
static void test_cnn_accumulation(void **state)
{
    (void)state;
    st_model m = load("resnet50");
    st_gen_opts o = train_opts(&m, 1, 0);
    o.dtype = ST_FP32;
    o.accumulate_grads = 1;
    st_oplist l = gen(&m, &o);
    double elems, kernels;
    accum_totals(&l, 4, &elems, &kernels);
    assert_true(elems == 25557032.0);
    assert_true(kernels == 161);
    /* the classifier's bias gradient: 1000 sums over the batch's rows */
    find(&l, "fc.fc.bgrad");
    st_oplist_free(&l);
    st_model_free(&m);
}

/* torch.optim.AdamW's default foreach step: eight multi-tensor passes over
 * FP32 state, 12 reads and 8 writes of 4 bytes a parameter (p *= 1 - lr wd;
 * lerp m; v *= b2; v += (1 - b2) g g; t = sqrt v; t /= c2; t += eps;
 * p -= s m / t), against the fused step's one pass */
static void test_foreach_adamw(void **state)
{
    (void)state;
    st_model m = load(testdata("hf/gpt2-tiny-config.json"));
    st_gen_opts o = train_opts(&m, 1, 16);
    o.with_optimizer = 1;
    o.optim_foreach = 1;
    st_oplist l = gen(&m, &o);
    double p = st_model_params(&m), rd = 0, wr = 0;
    int n = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.ops[i].pass == ST_PASS_OPT) {
            assert_int_equal(l.ops[i].kind, ST_OP_ELEMENTWISE);
            assert_true((double)l.ops[i].cols == p);
            rd += l.ops[i].bytes_read;
            wr += l.ops[i].bytes_written;
            n++;
        }
    assert_int_equal(n, 8);
    assert_true(rd == 48 * p && wr == 32 * p);
    assert_null(find_opt(&l, "optimizer.adamw"));
    find(&l, "optimizer.adamw.addcdiv_p");
    st_oplist_free(&l);
    st_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama2_7b_prefill_flops),
        cmocka_unit_test(test_fp8_recipe),
        cmocka_unit_test(test_opt350m_projections),
        cmocka_unit_test(test_gpt2_prefill_flops),
        cmocka_unit_test(test_gqa_shapes),
        cmocka_unit_test(test_decode_shapes),
        cmocka_unit_test(test_flash_causal),
        cmocka_unit_test(test_train_backward),
        cmocka_unit_test(test_moe_routing),
        cmocka_unit_test(test_cnn_resnet50),
        cmocka_unit_test(test_cnn_torchvision),
        cmocka_unit_test(test_cnn_nonsquare_pool),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_generation_errors),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_hf_eager_and_dropout),
        cmocka_unit_test(test_hf_gqa_copies),
        cmocka_unit_test(test_hf_t5_cross_copies),
        cmocka_unit_test(test_hf_opt_eager),
        cmocka_unit_test(test_hf_gelu_new_composed),
        cmocka_unit_test(test_hf_sequence_classifier),
        cmocka_unit_test(test_opt350m_classifier),
        cmocka_unit_test(test_bias_grad_and_accumulation),
        cmocka_unit_test(test_foreach_adamw),
        cmocka_unit_test(test_cnn_accumulation),
    };
    return cmocka_run_group_tests_name("workload", tests, NULL, NULL);
}
