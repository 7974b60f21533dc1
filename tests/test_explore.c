/* The explorer: the Pareto front against brute force, point addressing,
 * thread-count identity, range splits that merge exactly, the sweep file's
 * errors, accelerator resizing, and the GPU evaluator against hand sums. */
#include "config.h"
#include "explore/explore.h"
#include "io/io.h"
#include "testutil.h"

#include <math.h>

static unsigned long long rng = 88172645463325252ULL;
static unsigned long long xorshift(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Brute force: i is on the front iff no j dominates it (ties: lower index). */
static int brute_member(int k, const double *v, size_t n, size_t i)
{
    for (size_t j = 0; j < n; j++) {
        if (j == i)
            continue;
        int no_worse = 1, better = 0;
        for (int d = 0; d < k; d++) {
            if (v[j * k + d] > v[i * k + d])
                no_worse = 0;
            if (v[j * k + d] < v[i * k + d])
                better = 1;
        }
        if (no_worse && (better || j < i))
            return 0;
    }
    return 1;
}

static void test_pareto_brute_force(void **state)
{
    (void)state;
    for (int trial = 0; trial < 60; trial++) {
        int k = 2 + trial % 2;
        size_t n = 50 + xorshift() % 400;
        double *v = malloc(n * k * sizeof *v);
        assert_non_null(v);
        for (size_t i = 0; i < n * k; i++) /* coarse values: many ties and duplicates */
            v[i] = (double)(xorshift() % (trial % 3 == 0 ? 8 : 1000));
        int sign[3] = {1, 1, 1};
        st_pareto p;
        st_pareto_init(&p, k, sign);
        /* insert in a shuffled order: the front must not depend on it */
        size_t *ord = malloc(n * sizeof *ord);
        assert_non_null(ord);
        for (size_t i = 0; i < n; i++)
            ord[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = xorshift() % (i + 1), t = ord[i];
            ord[i] = ord[j];
            ord[j] = t;
        }
        for (size_t i = 0; i < n; i++)
            assert_true(st_pareto_insert(&p, (long long)ord[i], v + ord[i] * k) >= 0);
        size_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += (size_t)brute_member(k, v, n, i);
        assert_int_equal(p.n, want);
        for (size_t m = 0; m < p.n; m++)
            assert_true(brute_member(k, v, n, (size_t)p.idx[m]));
        st_pareto_free(&p);
        free(ord);
        free(v);
    }
}

/* Maximised objectives enter with their sign flipped. */
static void test_pareto_maximise(void **state)
{
    (void)state;
    int sign[2] = {1, -1}; /* min latency, max throughput */
    st_pareto p;
    st_pareto_init(&p, 2, sign);
    double a[2] = {1, 10}, b[2] = {2, 20}, c[2] = {2, 5}, d[2] = {3, 20};
    assert_int_equal(st_pareto_insert(&p, 0, a), 1);
    assert_int_equal(st_pareto_insert(&p, 1, b), 1);
    assert_int_equal(st_pareto_insert(&p, 2, c), 0); /* slower than a and less throughput */
    assert_int_equal(st_pareto_insert(&p, 3, d), 0); /* slower than b, same throughput */
    assert_int_equal(p.n, 2);
    st_pareto_free(&p);
}

static int load_buf(const char *yaml, st_sweep *s, st_error *err)
{
    return st_load_sweep_buffer("test.yaml", yaml, strlen(yaml), s, err);
}

static const char *gpu_sweep =
    "evaluate: gpu\n"
    "fixed: {gpu: a100-40gb-sxm, workload: gpt2-small, phase: prefill}\n"
    "axes:\n"
    "  batch: {from: 1, to: 32, scale: log2}\n"
    "  seq: [128, 256, 512, 1024]\n"
    "  dtype: [fp32, fp16]\n"
    "objectives: [latency, throughput]\n";

/* Mixed radix, first axis slowest: 6 x 4 x 2 points. */
static void test_grid_addressing(void **state)
{
    (void)state;
    st_sweep s;
    st_error err;
    int rc = load_buf(gpu_sweep, &s, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(s.points, 48);
    assert_int_equal(s.axes[0].n, 6); /* 1 2 4 8 16 32 */
    assert_string_equal(s.axes[0].v[5].text, "32");
    /* index 29 = 3*8 + 2*2 + 1: batch 8, seq 512, fp16 */
    assert_int_equal(st_sweep_axis_index(&s, 29, 0), 3);
    assert_int_equal(st_sweep_axis_index(&s, 29, 1), 2);
    assert_int_equal(st_sweep_axis_index(&s, 29, 2), 1);
    char label[128];
    st_sweep_point_label(&s, 29, label, sizeof label);
    assert_string_equal(label, "batch=8 seq=512 dtype=fp16");
    st_sweep_free(&s);
}

static void run_all(const st_sweep *s, int threads, long long first, long long count, st_point *out,
                    st_pareto *front)
{
    st_sweep_run *r;
    st_error err;
    assert_int_equal(st_sweep_start(s, threads, first, count, &r, &err), 0);
    assert_int_equal(st_sweep_wait(r), 0);
    const st_point *p = st_sweep_points(r, NULL, NULL);
    memcpy(out, p, (size_t)count * sizeof *p);
    const st_pareto *f = st_sweep_front(r);
    int sign[3];
    for (int i = 0; i < f->k; i++)
        sign[i] = f->sign[i];
    st_pareto_init(front, f->k, sign);
    for (size_t m = 0; m < f->n; m++) {
        double v[3];
        for (int i = 0; i < f->k; i++)
            v[i] = f->v[m * f->k + i] * f->sign[i];
        assert_true(st_pareto_insert(front, f->idx[m], v) >= 0);
    }
    st_sweep_run_free(r);
}

static void same_front(const st_pareto *a, const st_pareto *b)
{
    assert_int_equal(a->n, b->n);
    long long *x = malloc((a->n + 1) * sizeof *x), *y = malloc((b->n + 1) * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    st_pareto_sorted(a, x);
    st_pareto_sorted(b, y);
    assert_memory_equal(x, y, a->n * sizeof *x);
    free(x);
    free(y);
}

/* Bit-identical points and the same front on 1 and 4 threads; and two
 * halves evaluated apart merge into the whole sweep's front. */
static void test_threads_and_ranges(void **state)
{
    (void)state;
    st_sweep s;
    st_error err;
    assert_int_equal(load_buf(gpu_sweep, &s, &err), 0);
    long long n = s.points;
    st_point *p1 = calloc((size_t)n, sizeof *p1), *p4 = calloc((size_t)n, sizeof *p4);
    assert_non_null(p1);
    assert_non_null(p4);
    st_pareto f1, f4, fa, fb;
    run_all(&s, 1, 0, n, p1, &f1);
    run_all(&s, 4, 0, n, p4, &f4);
    assert_memory_equal(p1, p4, (size_t)n * sizeof *p1);
    same_front(&f1, &f4);
    assert_true(f1.n >= 2);
    long long half = n / 2 + 3;
    run_all(&s, 2, 0, half, p4, &fa);
    run_all(&s, 3, half, n - half, p4 + half, &fb);
    for (size_t m = 0; m < fb.n; m++) {
        double v[2] = {fb.v[2 * m] * fb.sign[0], fb.v[2 * m + 1] * fb.sign[1]};
        assert_true(st_pareto_insert(&fa, fb.idx[m], v) >= 0);
    }
    same_front(&fa, &f1);
    /* every point: throughput = tokens / latency, by definition */
    for (long long i = 0; i < n; i++) {
        const st_pvalue *v[ST_PARAM_COUNT];
        st_sweep_point_values(&s, i, v);
        double tokens = v[ST_P_BATCH]->num * v[ST_P_SEQ]->num;
        assert_int_equal(p1[i].status, ST_PT_OK);
        assert_true(rel_diff(p1[i].m[ST_M_THROUGHPUT], tokens / p1[i].m[ST_M_LATENCY]) < 1e-12);
        assert_true(p1[i].lo_s <= p1[i].m[ST_M_LATENCY] && p1[i].m[ST_M_LATENCY] <= p1[i].hi_s);
    }
    st_pareto_free(&f1);
    st_pareto_free(&f4);
    st_pareto_free(&fa);
    st_pareto_free(&fb);
    free(p1);
    free(p4);
    st_sweep_free(&s);
}

/* Random sampling: the same seed picks the same points; another seed not. */
static void test_random_sampling(void **state)
{
    (void)state;
    const char *a = "evaluate: gpu\naxes:\n  batch: {from: 1, to: 1000, step: 1}\n  seq: {from: 16, to: 4096, step: 16}\n"
                    "sampling: {random: 500, seed: 7}\n";
    st_sweep s, t;
    st_error err;
    assert_int_equal(load_buf(a, &s, &err), 0);
    assert_int_equal(load_buf(a, &t, &err), 0);
    assert_int_equal(s.points, 500);
    int same_as_other_seed = 0;
    t.seed = 8;
    size_t hist[10] = {0};
    for (long long i = 0; i < 500; i++) {
        size_t x = st_sweep_axis_index(&s, i, 0);
        assert_true(x < 1000);
        hist[x / 100]++;
        same_as_other_seed += x == st_sweep_axis_index(&t, i, 0);
        t.seed = 7;
        assert_int_equal(x, st_sweep_axis_index(&t, i, 0));
        t.seed = 8;
    }
    assert_true(same_as_other_seed < 10);
    for (int b = 0; b < 10; b++) /* 50 expected per decile */
        assert_true(hist[b] > 20 && hist[b] < 90);
    st_sweep_free(&s);
    st_sweep_free(&t);
}

static void expect_error(const char *yaml, const char *needle)
{
    st_sweep s;
    st_error err;
    int rc = load_buf(yaml, &s, &err);
    assert_int_not_equal(rc, 0);
    if (!strstr(err.msg, needle))
        fprintf(stderr, "expected '%s' in: %s\n", needle, err.msg);
    assert_non_null(strstr(err.msg, needle));
}

static void test_sweep_errors(void **state)
{
    (void)state;
    expect_error("evaluate: gpu\naxes:\n  bach: [1, 2]\n", "test.yaml:3:3: 'bach' is not a parameter of evaluate: gpu; "
                                                            "did you mean 'batch'?");
    expect_error("evaluate: gpu\naxes:\n  batch: [1, two]\n", "test.yaml:3:14: batch: expected an integer, got 'two'");
    expect_error("evaluate: gpu\naxes:\n  gpu: [h100-sxm, h999]\n", "test.yaml:3:19: no gpu named 'h999'");
    expect_error("evaluate: accel\naxes:\n  tp: [1, 2]\n", "'tp' is not a parameter of evaluate: accel");
    expect_error("evaluate: gpus\naxes: {batch: [1]}\n", "test.yaml:1:11: evaluate: expected gpu, accel, train or serve");
    expect_error("evaluate: gpu\naxes: {batch: [1]}\nobjectives: [latency, speed]\n", "unknown metric 'speed'");
    expect_error("evaluate: gpu\naxes: {batch: [1]}\nconstraints: [\"latency < 3\"]\n", "expected fits, or METRIC <=");
    expect_error("evaluate: gpu\naxes: {batch: {from: 8, to: 1, step: 1}}\n", "to (1) is below from (8)");
    expect_error("evaluate: gpu\naxes: {batch: {from: 1, to: 8}}\n", "exactly one of step, factor, steps");
    expect_error("evaluate: gpu\n", "missing required key 'axes'");
}

/* Changing the PE array keeps each level's layout relative to the array. */
static void test_accel_resize(void **state)
{
    (void)state;
    st_accel a;
    st_error err;
    assert_int_equal(st_load_accel("eyeriss-like", &a, &err), 0);
    assert_int_equal(st_accel_resize_pe(&a, 16, 8, &err), 0);
    for (int i = 0; i < a.n_levels; i++) {
        if (strcmp(a.level[i].name, "ifmap_spad") == 0) {
            assert_int_equal(a.level[i].instances, 128);
            assert_int_equal(a.level[i].mesh_x, 16);
        }
        if (strcmp(a.level[i].name, "inter_PE_spatial") == 0)
            assert_int_equal(a.level[i].instances, 16);
    }
    /* a quarter of the SRAM: sqrt(1/4) of the access energy, 1/4 the leak */
    int g = 1;
    double er = a.level[g].e_read, el = a.level[g].e_leak;
    assert_int_equal(st_accel_scale_level(&a, g, (double)a.level[g].depth / 4, &err), 0);
    assert_true(rel_diff(a.level[g].e_read, er / 2) < 1e-12);
    assert_true(rel_diff(a.level[g].e_leak, el / 4) < 1e-12);
    st_accel s;
    assert_int_equal(st_load_accel("simba-like", &s, &err), 0);
    /* four weight buffers per PE cannot serve a 6-wide LMAC array */
    assert_int_not_equal(st_accel_resize_pe(&s, 16, 6, &err), 0);
    assert_non_null(strstr(err.msg, "cannot keep"));
}

/* Llama-2-7B decode memory by hand: weights + the KV cache. */
static void test_gpu_memory(void **state)
{
    (void)state;
    const char *y = "evaluate: gpu\nfixed: {gpu: h100-sxm, workload: llama2-7b, phase: decode, dtype: fp16}\n"
                    "axes: {batch: [8], kv: [4095]}\nconstraints: [fits]\n";
    st_sweep s;
    st_error err;
    assert_int_equal(load_buf(y, &s, &err), 0);
    st_point p;
    assert_int_equal(st_sweep_eval(&s, 0, &p, NULL, &err), 0);
    assert_int_equal(p.status, ST_PT_OK);
    double params = st_model_params(&s.models[0]);
    /* 32 layers x K and V x 32 heads x 128 x 8 sequences x 4096 tokens x 2 B */
    double kv = 32.0 * 2 * 32 * 128 * 8 * 4096 * 2;
    double want = params * 2 + kv;
    assert_true(p.m[ST_M_MEMORY] >= want && p.m[ST_M_MEMORY] < want * 1.01);
    assert_true(p.fits); /* about 30 GB < 80 GB */
    assert_true(p.feasible);
    /* 8 tokens per decode step */
    assert_true(rel_diff(p.m[ST_M_THROUGHPUT], 8 / p.m[ST_M_LATENCY]) < 1e-12);
    st_sweep_free(&s);
}

/* The serve evaluator: below saturation the carried load is the offered
 * load (output tokens/s = qps x output tokens, Little's law over a finite
 * run: within 5%); speculative decoding on a scheduler that does not model
 * it is an invalid point with its reason; TTFT and TPOT are defined only
 * here. */
static void test_serve_sweep(void **state)
{
    (void)state;
    st_sweep s;
    st_error err = {0};
    const char *y = "sweep: t\nevaluate: serve\nfixed:\n  workload: llama3.1-8b\n  gpu: h100-sxm\n"
                    "  requests: 400\n  spec_accept: 0.7\n  lengths: \"fixed:200,100\"\naxes:\n  qps: [1, 2]\n"
                    "  sched: [vllm, orca]\n  spec_k: [0, 2]\nobjectives: [latency, throughput]\n";
    assert_int_equal(st_load_sweep_buffer("t.yaml", y, strlen(y), &s, &err), 0);
    assert_int_equal((int)s.points, 8);
    for (long long i = 0; i < s.points; i++) {
        const st_pvalue *v[ST_PARAM_COUNT];
        st_sweep_point_values(&s, i, v);
        st_point pt;
        int rc = st_sweep_eval(&s, i, &pt, NULL, &err);
        int orca_spec = v[ST_P_SCHED]->num == ST_SCHED_ORCA && v[ST_P_SPEC_K]->num > 0;
        if (orca_spec) {
            assert_int_equal(pt.status, ST_PT_INVALID);
            assert_non_null(strstr(err.msg, "speculative"));
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(pt.status, ST_PT_OK);
        assert_true(rel_diff(pt.m[ST_M_THROUGHPUT], v[ST_P_QPS]->num * 100) < 0.05);
        assert_true(pt.m[ST_M_TTFT] > 0 && pt.m[ST_M_TPOT] > 0 && pt.m[ST_M_TTFT] < pt.m[ST_M_LATENCY]);
    }
    assert_true(st_sweep_kind_metrics(ST_SWEEP_GPU) & (1u << ST_M_MFU));
    assert_false(st_sweep_kind_metrics(ST_SWEEP_GPU) & (1u << ST_M_TTFT));
    assert_true(st_metric_maximize(ST_M_GOODPUT));
    st_sweep_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pareto_brute_force), cmocka_unit_test(test_pareto_maximise),
        cmocka_unit_test(test_grid_addressing),    cmocka_unit_test(test_threads_and_ranges),
        cmocka_unit_test(test_random_sampling),    cmocka_unit_test(test_sweep_errors),
        cmocka_unit_test(test_accel_resize),       cmocka_unit_test(test_gpu_memory),
        cmocka_unit_test(test_serve_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
