/* The serving layer: scheduler behaviour that follows from the policies'
 * definitions, KV-cache arithmetic by hand, speculative decoding against
 * its closed form, the arrival processes' moments, the prefix cache's hit
 * ratio, and bad traces. */
#include "config.h"
#include "io/io.h"
#include "serve/serve.h"
#include "testutil.h"

#include <math.h>
#include <unistd.h>

typedef struct fixture {
    st_model m;
    st_gpu g;
    st_gpu_coef coef;
    st_cluster node;
} fixture;

static fixture F;

static int setup(void **state)
{
    (void)state;
    st_error err = {0};
    if (st_load_model("llama3.1-8b", &F.m, &err) || st_load_gpu("h100-sxm", &F.g, &err) ||
        st_gpu_coef_load(NULL, &F.coef, &err) || st_load_cluster_or_node("dgx-h100", &F.node, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    st_model_free(&F.m);
    return 0;
}

static void cfg_init(st_serve_cfg *c)
{
    st_serve_cfg_default(c);
    c->model = &F.m;
    c->gpu = &F.g;
    c->coef = &F.coef;
    c->cluster = &F.node;
}

static st_reqset fixed_set(size_t n, const int *in, const int *out, double gap)
{
    st_reqset s;
    s.n = n;
    s.r = calloc(n, sizeof *s.r);
    for (size_t i = 0; i < n; i++) {
        s.r[i].arrival = gap * (double)i;
        s.r[i].in = in[i];
        s.r[i].out = out[i];
        s.r[i].prefix_group = -1;
    }
    return s;
}

/* Static batching: one batch runs to its longest output, so every request
 * of it gets its first token together, and a request that did not fit waits
 * for the whole batch. Continuous batching (vllm) lets it in as soon as a
 * seat frees: at the end of the step in which request 0 finished. */
static void test_static_vs_continuous(void **state)
{
    (void)state;
    int in[5] = {100, 100, 100, 100, 100}, out[5] = {10, 20, 30, 40, 10};
    st_reqset rq = fixed_set(5, in, out, 0);
    st_serve_cfg c;
    cfg_init(&c);
    c.max_num_seqs = 4;
    c.sched = ST_SCHED_STATIC;
    st_serve_result r;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    for (int i = 1; i < 4; i++)
        assert_true(r.req[i].first == r.req[0].first);
    assert_true(r.req[0].done < r.req[1].done && r.req[1].done < r.req[2].done && r.req[2].done < r.req[3].done);
    assert_true(r.req[4].scheduled >= r.req[3].done);
    /* padded decode steps: 39 of them after the prefill, all at the same
     * batch size, so request 3's decode time is 39/9 of request 0's */
    double d0 = r.req[0].done - r.req[0].first, d3 = r.req[3].done - r.req[3].first;
    assert_true(rel_diff(d3 / d0, 39.0 / 9.0) < 0.02);
    st_serve_result_free(&r);

    c.sched = ST_SCHED_VLLM;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.req[4].scheduled == r.req[0].done);
    assert_true(r.req[4].done < r.req[3].done + (r.req[3].done - r.req[3].first));
    st_serve_result_free(&r);
    st_reqset_free(&rq);
}

/* KV block arithmetic by hand: Llama 3.1 8B keeps 32 layers x 8 KV heads x
 * 128 x (K, V) x 2 bytes = 131,072 bytes a token, 2 MiB a 16-token block;
 * TP 2 halves it. Weights: 8.03e9 parameters x 2 bytes; W4A16 stores the
 * block weights at 0.5 byte plus a 2-byte scale per 128. */
static void test_kv_arithmetic(void **state)
{
    (void)state;
    int in[1] = {100}, out[1] = {5};
    st_reqset rq = fixed_set(1, in, out, 0);
    st_serve_cfg c;
    cfg_init(&c);
    st_serve_result r;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.kv_bytes_per_block == 16.0 * 32 * 8 * 128 * 2 * 2);
    double params = st_model_params(&F.m);
    assert_true(rel_diff(r.weights_bytes_per_gpu, 2.0 * params) < 1e-9);
    /* vLLM multiplies the total CUDA reports: an H100's 79.22 GiB, as its
     * profiler logs it (PR 10511), not the datasheet's 80 */
    assert_true(F.g.cuda_total_bytes == 79.22 * 1073741824.0);
    double avail = 79.22 * 1073741824.0 * 0.9 - r.weights_bytes_per_gpu - r.activation_reserve_bytes -
                   c.runtime_reserve_bytes;
    assert_true(r.kv_blocks == (long long)floor(avail / r.kv_bytes_per_block));
    long long blocks1 = r.kv_blocks;
    st_serve_result_free(&r);

    c.tp = 2;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.kv_bytes_per_block == 16.0 * 32 * 4 * 128 * 2 * 2);
    assert_true(r.kv_blocks > 2 * blocks1);
    st_serve_result_free(&r);

    c.tp = 1;
    c.quant = ST_QUANT_W4A16;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    double emb = params - st_model_params_non_embedding(&F.m);
    double want = (params - emb) * (0.5 + 2.0 / 128) + emb * 2;
    assert_true(rel_diff(r.weights_bytes_per_gpu, want) < 1e-9);
    assert_true(r.kv_blocks > blocks1);
    st_serve_result_free(&r);
    st_reqset_free(&rq);
}

/* Speculative decoding with i.i.d. acceptance: each verify step yields
 * (1 - a^(k+1)) / (1 - a) tokens on average (Leviathan et al. 2023), so with
 * the draft free and the verify priced as one decode, TPOT shrinks by that
 * factor. One request at a time (no batch effects), long outputs. */
static void test_spec_closed_form(void **state)
{
    (void)state;
    enum { N = 40 };
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = 200, out[i] = 2000;
    st_reqset rq = fixed_set(N, in, out, 1000.0);
    st_serve_cfg c;
    cfg_init(&c);
    c.max_num_seqs = 1;
    st_serve_result base, spec;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &rq, &base, &err), 0);
    const int ks[2] = {2, 4};
    const double as[2] = {0.6, 0.8};
    for (int t = 0; t < 2; t++) {
        c.spec_k = ks[t];
        c.spec_accept = as[t];
        c.spec_ideal = 1;
        assert_int_equal(st_serve_run(&c, &rq, &spec, &err), 0);
        double e = st_spec_expected_tokens(ks[t], as[t]);
        assert_true(rel_diff(spec.spec_tokens_per_step, e) < 0.02);
        assert_true(rel_diff(base.tpot.mean / spec.tpot.mean, e) < 0.02);
        st_serve_result_free(&spec);
        /* with its real costs, a self-drafting head costs time per step */
        c.spec_ideal = 0;
        assert_int_equal(st_serve_run(&c, &rq, &spec, &err), 0);
        assert_true(base.tpot.mean / spec.tpot.mean < e);
        assert_true(base.tpot.mean / spec.tpot.mean > 1.0);
        st_serve_result_free(&spec);
    }
    assert_true(fabs(st_spec_expected_tokens(4, 0.5) - 1.9375) < 1e-12);
    st_serve_result_free(&base);
    st_reqset_free(&rq);
}

/* A cache too small for the offered load preempts; every request still
 * finishes, preempted ones later; recompute and swap both terminate. */
static void test_preemption(void **state)
{
    (void)state;
    enum { N = 8 };
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = 100, out[i] = 200;
    st_reqset rq = fixed_set(N, in, out, 0);
    st_serve_cfg c;
    cfg_init(&c);
    c.num_gpu_blocks = 40; /* 640 tokens: two requests of 300 at most */
    st_serve_result r;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.preemptions > 0);
    assert_true(r.n_done == N);
    assert_true(r.kv_peak_frac <= 1.0 && r.kv_peak_frac > 0.9);
    st_serve_result_free(&r);
    c.sched = ST_SCHED_VLLM_V0;
    c.preempt = ST_PREEMPT_SWAP;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.n_done == N);
    st_serve_result_free(&r);
    /* a request larger than the cache is refused with a sentence */
    /* V1 only recomputes */
    c.sched = ST_SCHED_VLLM;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "vllm-v0"));
    c.preempt = ST_PREEMPT_RECOMPUTE;
    int big_in[1] = {1000}, big_out[1] = {10};
    st_reqset big = fixed_set(1, big_in, big_out, 0);
    assert_int_equal(st_serve_run(&c, &big, &r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "KV blocks"));
    st_reqset_free(&big);
    st_reqset_free(&rq);
}

/* Poisson gaps have mean 1/qps and CV 1; gamma gaps the CV asked for. */
static void test_arrivals(void **state)
{
    (void)state;
    st_lenspec l;
    st_error err = {0};
    assert_int_equal(st_lenspec_parse("uniform:10-20,5-5", &l, &err), 0);
    for (int g = 0; g < 2; g++) {
        st_arrivals a = {0};
        a.gamma = g;
        a.qps = 5;
        a.cv = g ? 3.0 : 1.0;
        a.n = 200000;
        a.seed = 7;
        st_reqset s;
        assert_int_equal(st_requests_generate(&a, &l, &s, &err), 0);
        double sum = 0, sq = 0;
        for (size_t i = 1; i < s.n; i++) {
            double d = s.r[i].arrival - s.r[i - 1].arrival;
            sum += d;
            sq += d * d;
        }
        double n = (double)(s.n - 1), mean = sum / n, sd = sqrt(sq / n - mean * mean);
        assert_true(rel_diff(mean, 0.2) < 0.02);
        assert_true(rel_diff(sd / mean, a.cv) < 0.05);
        for (size_t i = 0; i < s.n; i++)
            assert_true(s.r[i].in >= 10 && s.r[i].in <= 20 && s.r[i].out == 5);
        st_reqset_free(&s);
    }
    assert_int_equal(st_lenspec_parse("uniform:20-10,5-5", &l, &err), ST_EINVAL);
    assert_int_equal(st_lenspec_parse("zipf:0,100,100", &l, &err), ST_EINVAL);
    assert_int_equal(st_lenspec_parse("normal:1,2", &l, &err), ST_EINVAL);
}

/* One shared 512-token prefix: after the first request computes it, every
 * later one reads its 32 blocks from the cache. */
static void test_prefix_cache(void **state)
{
    (void)state;
    st_lenspec l;
    st_error err = {0};
    assert_int_equal(st_lenspec_parse("uniform:600-1000,20-40", &l, &err), 0);
    st_arrivals a = {0};
    a.qps = 1;
    a.n = 400;
    a.seed = 3;
    a.prefix_groups = 1;
    a.prefix_len = 512;
    st_reqset s;
    assert_int_equal(st_requests_generate(&a, &l, &s, &err), 0);
    double prompt = 0;
    for (size_t i = 0; i < s.n; i++)
        prompt += s.r[i].in;
    st_serve_cfg c;
    cfg_init(&c);
    st_serve_result on, off;
    assert_int_equal(st_serve_run(&c, &s, &on, &err), 0);
    assert_true(rel_diff(on.prefix_hit_ratio, 512.0 * (double)(s.n - 1) / prompt) < 0.01);
    c.prefix_cache = 0;
    assert_int_equal(st_serve_run(&c, &s, &off, &err), 0);
    assert_true(off.prefix_hit_ratio == 0);
    assert_true(on.ttft.mean < off.ttft.mean);
    st_serve_result_free(&on);
    st_serve_result_free(&off);
    st_reqset_free(&s);
}

/* Same inputs and seed: bit-identical results. */
static void test_determinism(void **state)
{
    (void)state;
    st_lenspec l;
    st_error err = {0};
    assert_int_equal(st_lenspec_parse("zipf:1.1,2000,800", &l, &err), 0);
    st_arrivals a = {0};
    a.qps = 20;
    a.n = 2000;
    a.seed = 11;
    st_reqset s;
    assert_int_equal(st_requests_generate(&a, &l, &s, &err), 0);
    st_serve_cfg c;
    cfg_init(&c);
    c.spec_k = 3;
    c.spec_accept = 0.7;
    st_serve_result x, y;
    assert_int_equal(st_serve_run(&c, &s, &x, &err), 0);
    assert_int_equal(st_serve_run(&c, &s, &y, &err), 0);
    assert_memory_equal(&x.ttft, &y.ttft, sizeof x.ttft);
    assert_memory_equal(&x.itl, &y.itl, sizeof x.itl);
    assert_memory_equal(x.req, y.req, s.n * sizeof *x.req);
    st_serve_result_free(&x);
    st_serve_result_free(&y);
    st_reqset_free(&s);
}

/* Disaggregation moves each prompt's KV (in x 131,072 bytes) over the node
 * link; co-location time-slices the GPU, so a model served next to another
 * gets slower tokens than alone. */
static void test_disagg_colocate(void **state)
{
    (void)state;
    enum { N = 50 };
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = 1000, out[i] = 50;
    st_reqset rq = fixed_set(N, in, out, 0.05);
    st_serve_cfg c;
    cfg_init(&c);
    c.prefill_replicas = 1;
    c.decode_replicas = 1;
    st_serve_result r;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.n_done == N);
    /* NVLink 4 on a DGX H100: the transfer takes at least bytes / 450 GB/s */
    assert_true(r.kv_transfer_s >= 1000.0 * 131072 / 450e9);
    assert_true(r.kv_transfer_s < 1e-3);
    assert_true(r.gpus == 2);
    st_serve_result_free(&r);

    st_serve_cfg a;
    cfg_init(&a);
    st_serve_result alone, shared;
    assert_int_equal(st_serve_run(&a, &rq, &alone, &err), 0);
    st_reqset two = fixed_set(N, in, out, 0.05);
    for (size_t i = 0; i < two.n; i++)
        two.r[i].model = (int)(i % 2);
    a.colocated[0] = &F.m;
    a.n_colocated = 1;
    assert_int_equal(st_serve_run(&a, &two, &shared, &err), 0);
    double t_alone = alone.tpot.mean, t_shared = 0;
    size_t n0 = 0;
    for (size_t i = 0; i < two.n; i++)
        if (shared.req[i].model == 0) {
            t_shared += (shared.req[i].done - shared.req[i].first) / (shared.req[i].out - 1);
            n0++;
        }
    t_shared /= (double)n0;
    assert_true(t_shared > t_alone);
    st_serve_result_free(&alone);
    st_serve_result_free(&shared);
    st_reqset_free(&two);
    st_reqset_free(&rq);
}

/* Regressions found in review: a pipeline keeps pp batches in flight (a
 * burst on PP 2 finishes in well under the PP 1 time, PP 4 under PP 2); a
 * speculative verify that the token budget cannot take falls back to one
 * token instead of stalling; three co-located models route round-robin. */
static void test_review_regressions(void **state)
{
    (void)state;
    enum { N = 200 };
    int in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = 500, out[i] = 200;
    st_reqset burst = fixed_set(N, in, out, 0);
    st_serve_cfg c;
    cfg_init(&c);
    c.max_num_seqs = 1024;
    c.max_batched_tokens = 2048;
    st_serve_result r1, r2, r4;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &burst, &r1, &err), 0);
    c.pp = 2;
    assert_int_equal(st_serve_run(&c, &burst, &r2, &err), 0);
    c.pp = 4;
    assert_int_equal(st_serve_run(&c, &burst, &r4, &err), 0);
    assert_true(r2.duration_s < 0.7 * r1.duration_s);
    assert_true(r4.duration_s < 0.85 * r2.duration_s); /* the LM head runs on every stage here */
    assert_true(r2.busy_frac > 0.9 && r4.busy_frac > 0.9);
    st_serve_result_free(&r1);
    st_serve_result_free(&r2);
    st_serve_result_free(&r4);
    st_reqset_free(&burst);

    for (int i = 0; i < N; i++)
        in[i] = 20, out[i] = 500;
    st_reqset b2 = fixed_set(N, in, out, 0);
    cfg_init(&c);
    c.sched = ST_SCHED_SARATHI;
    c.chunk = 512;
    c.spec_k = 4;
    c.spec_accept = 0.7;
    assert_int_equal(st_serve_run(&c, &b2, &r1, &err), 0);
    assert_true(r1.n_done == N);
    st_serve_result_free(&r1);
    for (size_t i = 0; i < b2.n; i++)
        b2.r[i].model = (int)(i % 3);
    cfg_init(&c);
    c.colocated[0] = c.colocated[1] = &F.m;
    c.n_colocated = 2;
    /* a third of an H100 each cannot hold a 131,072-token request, which
     * vLLM refuses at start-up */
    assert_int_equal(st_serve_run(&c, &b2, &r1, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "--max-model-len"));
    c.max_model_len = 8192;
    assert_int_equal(st_serve_run(&c, &b2, &r1, &err), 0);
    assert_true(r1.n_done == N);
    st_serve_result_free(&r1);
    st_reqset_free(&b2);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Traces: JSONL and CSV, arrivals shifted to 0 and sorted; errors name the
 * file, line and column. */
/* A set cancel flag stops the run within 1024 events with ST_ECANCELED and
 * leaves nothing to free; a clear one changes nothing (the same result as
 * without the flag). */
static void test_cancel(void **state)
{
    (void)state;
    int in[1] = {100}, out[1] = {3000};
    st_reqset rq = fixed_set(1, in, out, 0); /* 3,000 decode steps: well over 1024 events */
    st_serve_cfg c;
    cfg_init(&c);
    st_serve_result r, r2;
    st_error err = {0};
    int flag = 1;
    c.cancel = &flag;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), ST_ECANCELED);
    flag = 0;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    c.cancel = NULL;
    assert_int_equal(st_serve_run(&c, &rq, &r2, &err), 0);
    assert_true(r.steps == r2.steps && r.e2e.mean == r2.e2e.mean);
    st_serve_result_free(&r);
    st_serve_result_free(&r2);
    st_reqset_free(&rq);
}

/* the test configuration with the KV cache forced to `blocks` blocks */
static st_serve_cfg small_cache(long long blocks)
{
    st_serve_cfg c;
    cfg_init(&c);
    c.num_gpu_blocks = blocks;
    return c;
}

/* The livelock guard: preemptions in a row with no token emitted stop the
 * run with the reason. Two 32-token prompts on 7 blocks: the second is
 * preempted once at step 18 (tests/cli.sh has the hand trace); a limit of 1
 * stops the run there, the default lets it finish. */
static void test_thrash_guard(void **state)
{
    (void)state;
    int in[2] = {32, 32}, out[2] = {40, 40};
    st_reqset rq = fixed_set(2, in, out, 0);
    st_serve_cfg c = small_cache(8);
    st_serve_result r;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_int_equal(r.preemptions, 1);
    st_serve_result_free(&r);
    c.max_stuck = 1;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "the KV cache thrashes: 1 preemptions and no token emitted since"));
    st_reqset_free(&rq);
}

/* V1 keeps a preempted request's blocks past a shared prefix cached too. By
 * hand (block 16, 9 usable blocks, two 64-token prompts sharing a 32-token
 * prefix, both at t=0): step 1 computes both prompts (4 blocks each; A
 * publishes its first 2 as the group's, B keeps 4 of its own); step 2 both
 * want a 5th block, A takes the last free one and B (64 tokens computed) is
 * preempted, its 4 blocks cached. Step 3: B finds the group's 2 blocks and
 * its own blocks 2-3 after them (32 tokens), recomputes 1 token, and A, done
 * at 16 tokens out before wanting a 6th block, leaves room for the rest. */
static void test_resume_after_prefix(void **state)
{
    (void)state;
    int in[2] = {64, 64}, out[2] = {16, 40};
    st_reqset rq = fixed_set(2, in, out, 0);
    for (int i = 0; i < 2; i++) {
        rq.r[i].prefix_group = 0;
        rq.r[i].prefix_len = 32;
    }
    st_serve_cfg c = small_cache(10);
    st_serve_result r;
    st_error err = {0};
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_int_equal(r.preemptions, 1);
    assert_int_equal(r.req[1].preemptions, 1);
    assert_int_equal(r.resume_cached_tokens, 32);
    /* the group's prefix, found on resuming, is not counted: a request's
     * cached tokens are those of its first admission (vLLM's
     * num_cached_tokens), when the prefix was not published yet */
    assert_int_equal(r.req[1].cached_tokens, 0);
    st_serve_result_free(&r);
    st_reqset_free(&rq);
}

static void test_traces(void **state)
{
    (void)state;
    char p[64];
    snprintf(p, sizeof p, "/tmp/strata-trace-%d.jsonl", (int)getpid());
    write_file(p, "{\"input_toks\": 10, \"output_toks\": 3, \"arrival_time\": 105.5}\n"
                  "{\"input_toks\": 20, \"output_toks\": 4, \"arrival_time\": 100.0}\n");
    st_reqset s;
    st_error err = {0};
    assert_int_equal(st_requests_load(p, &s, &err), 0);
    assert_int_equal((int)s.n, 2);
    assert_true(s.r[0].arrival == 0 && s.r[0].in == 20 && s.r[1].arrival == 5.5);
    st_reqset_free(&s);
    write_file(p, "{\"input_toks\": 10, \"output_toks\": 3, \"arrival_time\": 1}\n"
                  "{\"input_toks\": x, \"output_toks\": 3, \"arrival_time\": 2}\n");
    assert_int_equal(st_requests_load(p, &s, &err), ST_EINVAL);
    char want[96];
    snprintf(want, sizeof want, "%s:2:16", p);
    assert_non_null(strstr(err.msg, want));
    /* JSON is checked, not scanned for keys: a line not closed, text after
     * the object, a key given twice, a fractional token count */
    static const struct {
        const char *text, *where, *why;
    } bad[] = {
        {"{\"input_toks\": 10, \"output_toks\": 3, \"arrival_time\": 1\n", ":1:55", "not closed"},
        {"{\"input_toks\": 10, \"output_toks\": 3, \"arrival_time\": 1} 7\n", ":1:57", "text after"},
        {"{\"input_toks\": 10, \"input_toks\": 20, \"output_toks\": 3, \"arrival_time\": 1}\n", ":1:20", "duplicate"},
        {"{\"input_toks\": 10.5, \"output_toks\": 3, \"arrival_time\": 1}\n", ":1:16", "whole number"},
        {"[{\"input_toks\": 10, \"output_toks\": 3, \"arrival_time\": 1}]\n", ":1:1", "JSON array"},
        {"arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,100,2.5\n", ":2:9", "whole number"},
        {"arrived_at,num_prefill_tokens,num_decode_tokens\n,100,2\n", ":2:1", "time"},
        {"arrived_at,num_prefill_tokens,num_decode_tokens\n0x1,100,2\n", ":2:1", "time"},
        {"arrived_at,num_prefill_tokens,num_decode_tokens\n0,0x64,2\n", ":2:3", "token count"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(p, bad[i].text);
        assert_int_equal(st_requests_load(p, &s, &err), ST_EINVAL);
        snprintf(want, sizeof want, "%s%s:", p, bad[i].where);
        if (!strstr(err.msg, want) || !strstr(err.msg, bad[i].why))
            fail_msg("case %zu: '%s' (want %s and '%s')", i, err.msg, want, bad[i].why);
    }
    write_file(p, "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,100,10\n0.25,50,0\n");
    assert_int_equal(st_requests_load(p, &s, &err), ST_EINVAL);
    snprintf(want, sizeof want, "%s:3:", p);
    assert_non_null(strstr(err.msg, want));
    write_file(p, "num_prefill_tokens,num_decode_tokens\n100,10\n50,5\n");
    assert_int_equal(st_requests_load(p, &s, &err), 0);
    assert_int_equal((int)s.n, 2);
    st_reqset_free(&s);
    remove(p);
}

/* The choices that error messages list name every scheduler and
 * quantisation, and nothing else: the lists are written out by hand in
 * serve.c, so a new enum value without its word fails here. */
static int count_words(const char *s)
{
    int n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        size_t w = strcspn(p, " ,");
        n += !(w == 2 && !strncmp(p, "or", 2));
        p += w;
    }
    return n;
}

/* vLLM's block accounting, each case against its source:
 * - V1's BlockPool keeps block 0 as its null block, so 10 blocks give 9;
 * - V0's watermark is int(0.01 x blocks), 0 of 10;
 * - a request of in + out tokens holds in + out - 1 (the last token's K and
 *   V are never written): 100 + 61 tokens fill exactly 10 blocks of 16;
 * - KV heads that TP neither splits nor replicates evenly are refused;
 * - a draft model keeps its K and V in the same block table: with the model
 *   as its own draft, a block costs twice the bytes and the draft's weights
 *   come out of the cache;
 * - Sarathi's profiling step is its chunk, not max_num_batched_tokens. */
static void test_vllm_block_accounting(void **state)
{
    (void)state;
    int in[1] = {100}, out[1] = {61};
    st_reqset rq = fixed_set(1, in, out, 0);
    st_serve_cfg c;
    st_serve_result r;
    st_error err = {0};
    cfg_init(&c);
    c.num_gpu_blocks = 10;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), ST_EINVAL);
    /* 160 tokens held: 10 blocks, one of the forced 10 is V1's null block,
     * so the message names 9 and asks for 11 */
    assert_non_null(strstr(err.msg, "leaves it 9"));
    assert_non_null(strstr(err.msg, "give --num-gpu-blocks 11 or more"));
    c.sched = ST_SCHED_VLLM_V0;
    err = (st_error){0};
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.n_done == 1);
    st_serve_result_free(&r);
    rq.r[0].out = 62; /* 161 tokens held: 11 blocks */
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), ST_EINVAL);
    /* V0: no null block, and int(0.01 x 11) = 0 blocks of watermark */
    assert_non_null(strstr(err.msg, "give --num-gpu-blocks 11 or more"));
    rq.r[0].out = 61;

    st_model g = F.m;
    g.tf.heads = 48;
    g.tf.kv_heads = 8;
    cfg_init(&c);
    c.model = &g;
    c.tp = 6;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "KV heads"));

    cfg_init(&c);
    c.max_model_len = 8192;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    long long plain = r.kv_blocks;
    double per_block = r.kv_bytes_per_block, weights = r.weights_bytes_per_gpu;
    st_serve_result_free(&r);
    c.spec_k = 2;
    c.spec_accept = 0.5;
    c.draft = &F.m;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    double expect = ((double)plain * per_block - weights) / (2.0 * per_block);
    assert_true(fabs((double)r.kv_blocks - expect) <= 1.0);
    st_serve_result_free(&r);

    cfg_init(&c);
    c.max_model_len = 8192;
    c.max_batched_tokens = 512;
    c.max_num_seqs = 256;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    double act512 = r.activation_reserve_bytes;
    long long blocks512 = r.kv_blocks;
    st_serve_result_free(&r);
    cfg_init(&c);
    c.max_model_len = 8192;
    c.sched = ST_SCHED_SARATHI;
    c.chunk = 512;
    c.max_num_seqs = 256;
    assert_int_equal(st_serve_run(&c, &rq, &r, &err), 0);
    assert_true(r.activation_reserve_bytes == act512);
    assert_true(r.kv_blocks == blocks512); /* the pool vLLM reports; V1's null block is inside it */
    st_serve_result_free(&r);
    st_reqset_free(&rq);

    /* vLLM's batch defaults for the OpenAI server (get_batch_defaults):
     * 1024 sequences and 8,192 tokens on a GPU of 70 GiB or more that is
     * not an A100, else 256 and 2,048 */
    int seqs;
    long long toks;
    st_serve_batch_defaults(&F.g, &seqs, &toks);
    assert_true(seqs == 1024 && toks == 8192);
    st_gpu a100;
    assert_int_equal(st_load_gpu("a100-80gb-sxm", &a100, &err), 0);
    st_serve_batch_defaults(&a100, &seqs, &toks);
    assert_true(seqs == 256 && toks == 2048);
    st_gpu l4;
    assert_int_equal(st_load_gpu("l4", &l4, &err), 0);
    st_serve_batch_defaults(&l4, &seqs, &toks);
    assert_true(seqs == 256 && toks == 2048);
    cfg_init(&c);
    c.gpu = &a100;
    c.max_num_seqs = 64; /* a value given stays */
    st_serve_resolve_batch(&c);
    assert_true(c.max_num_seqs == 64 && c.max_batched_tokens == 2048);
    /* an unset seat count is at most the budget given (vLLM:
     * min(default, max_num_batched_tokens)); V0 without chunked prefill
     * (vLLM 0.6's SchedulerConfig: max(max_model_len, 2048) tokens, 256
     * sequences) takes Llama 3.1's whole 131,072-token context a step */
    cfg_init(&c);
    c.max_batched_tokens = 128;
    st_serve_resolve_batch(&c);
    assert_true(c.max_num_seqs == 128);
    cfg_init(&c);
    c.sched = ST_SCHED_VLLM_V0;
    st_serve_resolve_batch(&c);
    assert_true(c.max_batched_tokens == 131072 && c.max_num_seqs == 256);
}

static void test_choice_lists(void **state)
{
    (void)state;
    assert_int_equal(count_words(st_sched_choices()), ST_SCHED_COUNT);
    for (int s = 0; s < ST_SCHED_COUNT; s++)
        assert_non_null(strstr(st_sched_choices(), st_sched_name((st_sched)s)));
    assert_int_equal(count_words(st_quant_choices()), ST_QUANT_COUNT);
    for (int q = 0; q < ST_QUANT_COUNT; q++)
        assert_non_null(strstr(st_quant_choices(), st_quant_name((st_quant)q)));
    assert_int_equal(count_words(st_dtype_choices()), ST_DTYPE_COUNT);
    for (int t = 0; t < ST_DTYPE_COUNT; t++)
        assert_non_null(strstr(st_dtype_choices(), st_dtype_name((st_dtype)t)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_vs_continuous), cmocka_unit_test(test_kv_arithmetic),
        cmocka_unit_test(test_spec_closed_form),     cmocka_unit_test(test_preemption),
        cmocka_unit_test(test_arrivals),             cmocka_unit_test(test_prefix_cache),
        cmocka_unit_test(test_determinism),          cmocka_unit_test(test_disagg_colocate),
        cmocka_unit_test(test_resume_after_prefix),  cmocka_unit_test(test_cancel),               cmocka_unit_test(test_thrash_guard),               cmocka_unit_test(test_traces),               cmocka_unit_test(test_review_regressions),
        cmocka_unit_test(test_choice_lists),         cmocka_unit_test(test_vllm_block_accounting),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
