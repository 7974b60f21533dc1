/*
 * Measured-data readers: hand-made CSV fixtures checked field by field
 * (quoted names with commas and doubled quotes, CRLF, skipped ops, malformed
 * rows), and the shared NeuSight/VIDUR files counted against their lines.
 */
#include "config.h"
#include "testutil.h"

#include <math.h>

#include "calib/calib.h"
#include "io/measured.h"

/* Every field of one kernel sample (vector ops: n = H; conv fields 0). */
static void check_kernel(const st_kernel_sample *k, st_meas_op op, const char *device,
                         const char *name, double latency_ms, const long long bmnk[4],
                         const long long grid[3], const long long block[3], int line)
{
    assert_int_equal(k->op, op);
    assert_string_equal(k->device, device);
    assert_string_equal(k->kernel_name, name);
    assert_true(k->latency_s == latency_ms / 1e3);
    assert_int_equal(k->b, bmnk[0]);
    assert_int_equal(k->m, bmnk[1]);
    assert_int_equal(k->n, bmnk[2]);
    assert_int_equal(k->k, bmnk[3]);
    assert_int_equal(k->c_in, 0);
    assert_int_equal(k->c_out, 0);
    assert_int_equal(k->kernel, 0);
    assert_int_equal(k->size, 0);
    assert_int_equal(k->stride, 0);
    assert_int_equal(k->pad, 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(k->grid[i], grid[i]);
        assert_int_equal(k->block[i], block[i]);
    }
    assert_int_equal(k->line, line);
}

static void test_neusight_fixture(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_csv(testdata("measured/kernels.csv"), &s, &err), 0);
    assert_int_equal(s.n, 2);
    check_kernel(&s.items[0], ST_MEAS_BMM, "Tesla T4", "volta_sgemm_128x64_nn", 0.5,
                 (const long long[]){4, 100, 200, 300}, (const long long[]){2, 3, 4},
                 (const long long[]){256, 1, 1}, 2);
    /* a quoted name with a doubled quote and commas, cut at '(' */
    check_kernel(&s.items[1], ST_MEAS_LINEAR, "Tesla T4", "void \"quoted\", kernel<float, 4>",
                 2.25, (const long long[]){1, 64, 128, 256}, (const long long[]){5, 1, 1},
                 (const long long[]){128, 1, 1}, 3);
    st_kernel_set_free(&s);
}

/* an op strata does not model is an error at its field, not a row dropped
 * from the scores unseen */
static void test_neusight_unknown_op(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_csv(testdata("measured/unknown-op.csv"), &s, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "unknown-op.csv:2:1: column 'OPName': 'frobnicate' is not an op strata models"));
    assert_int_equal(s.n, 0);
    st_kernel_set_free(&s);
}

static void test_neusight_crlf_vector(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_csv(testdata("measured/vector-crlf.csv"), &s, &err), 0);
    assert_int_equal(s.n, 2);
    /* no '\r' left on the last field (H) nor in the header's 'H' */
    check_kernel(&s.items[0], ST_MEAS_ADD, "Tesla T4",
                 "void at::native::vectorized_elementwise_kernel<4, "
                 "at::native::CUDAFunctor_add<float> >",
                 0.026, (const long long[]){127, 0, 168, 0}, (const long long[]){42, 1, 1},
                 (const long long[]){128, 1, 1}, 2);
    check_kernel(&s.items[1], ST_MEAS_LN, "Tesla T4", "k", 0.05,
                 (const long long[]){60, 0, 272, 0}, (const long long[]){60, 1, 1},
                 (const long long[]){32, 4, 1}, 3);
    st_kernel_set_free(&s);
}

/* A quoted field holding newlines: one record, numbered by its first line. */
static void test_neusight_multiline(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_csv(testdata("measured/multiline.csv"), &s, &err), 0);
    assert_int_equal(s.n, 1);
    check_kernel(&s.items[0], ST_MEAS_RELU, "Tesla P4", "void relu<float>", 0.25,
                 (const long long[]){2, 0, 3, 0}, (const long long[]){0, 0, 0},
                 (const long long[]){0, 0, 0}, 2);
    st_kernel_set_free(&s);
}

static void test_neusight_malformed(void **state)
{
    static const struct {
        const char *file, *where, *needle;
    } cases[] = {
        {"measured/bad-latency.csv", ":2:5:", "column 'Latency': expected a number, found 'fast'"},
        {"measured/short-row.csv", ":2:1:", "the row has 7 columns, the header has 8"},
        {"measured/negative-shape.csv", ":2:22:", "column 'M': expected a whole number in [0, "},
        {"measured/unclosed-quote.csv", ":2:18:", "a quoted field is not closed"},
        {"measured/zero-latency.csv", ":2:5:", "column 'Latency': expected a time > 0 (ms)"},
        {"measured/huge-latency.csv", ":2:5:", "expected a number, found '1e999'"},
        /* finite but absurd: a kernel over 1e7 ms (2.8 hours) is a broken row */
        {"measured/absurd-latency.csv", ":2:5:", "column 'Latency': expected a number in [0, 1e+07], found '1e300'"},
        {"measured/zero-shape.csv", ":2:25:", "column 'M': expected a whole number in [1, 1099511627776]"},
        /* 1e33 multiply-adds: the kernel command refuses past 2^53 too */
        {"measured/huge-work.csv", ":2:23:", "strata counts up to 2^53"},
        /* 64 x 4096^2 x 2048 x 2048 x 9 = 4.1e16 multiply-adds */
        {"measured/huge-conv.csv", ":2:21:", "a conv of 4.05e+16 multiply-adds"},
        {"measured/empty-shape.csv", ":2:22:", "column 'H': expected a whole number"},
        {"measured/no-device.csv", ":1:1:", "no 'Device' column"},
        {"measured/empty.csv", ":1:1:", "the file is empty"},
        /* after a record spanning lines 2-4 */
        {"measured/multiline-bad.csv", ":5:21:", "column 'B': expected a whole number"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st_kernel_set s = {0, 0, NULL};
        st_error err;
        /* one good row first: a failed read must leave the set as it was */
        assert_int_equal(st_read_neusight_csv(testdata("measured/vector-crlf.csv"), &s, &err), 0);
        assert_int_equal(s.n, 2);
        if (st_read_neusight_csv(testdata(cases[i].file), &s, &err) == 0)
            fail_msg("%s: read without an error", cases[i].file);
        assert_error_at(err.msg, cases[i].file, cases[i].where, cases[i].needle);
        assert_int_equal(s.n, 2);
        assert_int_equal(err.code, ST_EINVAL);
        st_kernel_set_free(&s);
    }
}

/* strata's own sweeps (data/measured): an optional Dtype column (absent or
 * empty: FP32, as NeuSight's files are; case-insensitive) and RMSNorm rows */
static void test_neusight_dtype(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_csv(testdata("measured/dtype.csv"), &s, &err), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.items[0].op, ST_MEAS_LINEAR);
    assert_int_equal(s.items[0].dtype, ST_BF16);
    assert_int_equal(s.items[1].op, ST_MEAS_RMSNORM);
    assert_int_equal(s.items[1].dtype, ST_FP32);
    assert_int_equal(s.items[1].b, 1024);
    assert_int_equal(s.items[1].n, 2048);
    assert_int_equal(s.items[2].dtype, ST_FP8);
    /* the fixtures without the column read as FP32 */
    assert_int_equal(st_read_neusight_csv(testdata("measured/vector-crlf.csv"), &s, &err), 0);
    assert_int_equal(s.items[3].dtype, ST_FP32);
    /* an RMSNorm row is a norm kernel with the rms flag, in its own datatype */
    st_calib_data d = {0};
    assert_int_equal(st_calib_add_neusight(&d, testdata("measured/dtype-dir"), &err), 0);
    assert_int_equal(d.n, 3);
    assert_int_equal(d.s[0].k.op, ST_KOP_GEMM);
    assert_int_equal(d.s[0].k.dtype, ST_BF16);
    assert_int_equal(d.s[1].k.op, ST_KOP_NORM);
    assert_int_equal(d.s[1].k.rms, 1);
    assert_int_equal(d.s[1].k.rows, 1024);
    assert_int_equal(d.s[1].k.cols, 2048);
    st_calib_data_free(&d);
    st_kernel_set_free(&s);
    /* a datatype the GPU has no rate for (FP8 on a V100) is skipped and
     * counted, not an error deep in the scoring */
    st_calib_data d2 = {0};
    assert_int_equal(st_calib_add_neusight(&d2, testdata("measured/dtype-skip"), &err), 0);
    assert_int_equal(d2.n, 1);
    assert_int_equal(d2.skipped_dtype, 1);
    assert_int_equal(d2.s[0].k.dtype, ST_FP32);
    st_calib_data_free(&d2);
    /* INT4 is a weight format, no kernel's datatype */
    assert_int_equal(st_read_neusight_csv(testdata("measured/int4-dtype.csv"), &s, &err), ST_EINVAL);
    if (!strstr(err.msg, "int4-dtype.csv:2:53:") || !strstr(err.msg, "unknown datatype 'int4'"))
        fail_msg("%s", err.msg);
    /* an unknown datatype is FILE:LINE:COL, and names the choices */
    assert_int_equal(st_read_neusight_csv(testdata("measured/bad-dtype.csv"), &s, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/bad-dtype.csv", ":2:53:", "unknown datatype 'fp64'");
    assert_non_null(strstr(err.msg, "bf16"));
    st_kernel_set_free(&s);
}

/* A harness table: the one-element op's time per dispatch class; absent is
 * no table (0 rows, no error); bad rows are FILE:LINE:COL */
static void test_harness(void **state)
{
    st_harness_row r[ST_HARNESS_MAX];
    st_error err;
    int n = -1;
    (void)state;
    assert_int_equal(st_read_harness_csv(testdata("measured/harness.csv"), r, ST_HARNESS_MAX, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(r[0].dispatch, "bmm");
    assert_true(fabs(r[0].floor_s - 20.5e-6) < 1e-15);
    assert_string_equal(r[1].dispatch, "elementwise_scalar");
    assert_int_equal(r[1].line, 3);
    assert_int_equal(st_read_harness_csv(testdata("measured/no-such-harness.csv"), r, ST_HARNESS_MAX, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(st_read_harness_csv(testdata("measured/harness-negative.csv"), r, ST_HARNESS_MAX, &n, &err),
                     ST_EINVAL);
    assert_error_at(err.msg, "measured/harness-negative.csv", ":2:5:", "floor_us");
    assert_int_equal(n, 0);
    assert_int_equal(st_read_harness_csv(testdata("measured/harness-nocol.csv"), r, ST_HARNESS_MAX, &n, &err),
                     ST_EINVAL);
    assert_error_at(err.msg, "measured/harness-nocol.csv", ":1:1:", "no 'floor_us' column");
    /* the stack a folder ran on: a torch column, each row's own release
     * (an empty field: none), and the op floors for the gather and router */
    assert_int_equal(st_read_harness_csv(testdata("measured/stack/harness.csv"), r, ST_HARNESS_MAX, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(r[0].torch_ver, 211);
    assert_int_equal(r[1].torch_ver, 211);
    assert_int_equal(r[2].torch_ver, 0);
    st_calib_data d = {0};
    int tv = -1;
    assert_int_equal(st_calib_harness_torch(testdata("measured/stack"), &tv, &err), 0);
    assert_int_equal(tv, 211);
    assert_int_equal(st_calib_add_ops(&d, testdata("measured/stack/ops.csv"), tv, &err), 0);
    assert_int_equal(d.n, 4);
    tv = -1;
    assert_int_equal(st_calib_apply_harness(testdata("measured/stack"), &d, 0, &tv, &err), 0);
    assert_int_equal(tv, 211);
    assert_true(d.s[3].own_floor_router && !d.s[2].own_floor_router);
    assert_int_equal(d.s[2].k.torch_ver, 211); /* no torch field: the folder's */
    /* the gather and the router take their own floors, the rest their class's
     * (bmm: none timed here) */
    assert_true(fabs(d.s[2].own_floor_s - 28.5e-6) < 1e-15);
    assert_true(fabs(d.s[3].own_floor_s - 61.0e-6) < 1e-15);
    assert_true(d.s[0].own_floor_s == 0);
    /* samples before `from` keep what they had */
    d.s[2].own_floor_s = 0;
    assert_int_equal(st_calib_apply_harness(testdata("measured/stack"), &d, 3, &tv, &err), 0);
    assert_true(d.s[2].own_floor_s == 0 && d.s[3].own_floor_s > 0);
    /* the router floor is four kernels: the harness adds the floor less
     * the floor op's own price (one token over 8 experts, keeping 2), not
     * less one launch, so a router of that very shape predicts the floor */
    st_gpu_coef c;
    assert_int_equal(st_gpu_coef_load(NULL, &c, &err), 0);
    st_kernel_est e, fe;
    double pr;
    d.s[3].k.rows = 1, d.s[3].k.cols = 8, d.s[3].k.k = 2;
    assert_int_equal(st_calib_predict(&d, 3, &c, &e, &pr, &err), 0);
    assert_true(fabs(pr - 61.0e-6) < 1e-12);
    d.s[3].k.rows = 65536, d.s[3].k.cols = 256;
    assert_int_equal(st_calib_predict(&d, 3, &c, &e, &pr, &err), 0);
    st_kernel f = d.s[3].k;
    f.rows = 1, f.cols = 8;
    assert_int_equal(st_kernel_estimate(&d.gpus[d.s[3].gpu], &c, &f, NULL, 0, &fe, &err), 0);
    assert_true(fabs(pr - (e.gpu_s + 61.0e-6 - fe.gpu_s)) < 1e-12);
    st_calib_data_free(&d);
    /* rows on two releases: the harness's field, or an ops row's against it */
    memset(&d, 0, sizeof d);
    assert_int_equal(st_calib_apply_harness(testdata("measured/stack-mixed"), &d, 0, &tv, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/stack-mixed/harness.csv", ":3:13:",
                    "ran on PyTorch 2.10, an earlier one on 2.11");
    assert_int_equal(st_calib_add_ops(&d, testdata("measured/stack-mixed/ops.csv"), 211, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/stack-mixed/ops.csv", ":2:58:",
                    "ran on PyTorch 2.10, the folder's harness.csv on 2.11");
    assert_int_equal(d.n, 0);
    /* with no folder release, the row's own */
    assert_int_equal(st_calib_add_ops(&d, testdata("measured/stack-mixed/ops.csv"), 0, &err), 0);
    assert_int_equal(d.s[0].k.torch_ver, 210);
    st_calib_data_free(&d);
}

/* A fused-attention sweep: every field, the flash kernel it becomes, and
 * FILE:LINE:COL for a bad Causal field or a missing column */
static void test_attention(void **state)
{
    st_attn_set a = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_attention_csv(testdata("measured/attention.csv"), &a, &err), 0);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.items[0].device, "NVIDIA H100 80GB HBM3");
    assert_true(a.items[0].latency_s == 1.5e-3);
    assert_int_equal(a.items[0].batch, 4);
    assert_int_equal(a.items[0].heads, 32);
    assert_int_equal(a.items[0].kv_heads, 8);
    assert_int_equal(a.items[0].q, 1);
    assert_int_equal(a.items[0].kv, 8192);
    assert_int_equal(a.items[0].d, 128);
    assert_int_equal(a.items[0].causal, 0);
    assert_int_equal(a.items[0].dtype, ST_BF16);
    assert_int_equal(a.items[1].causal, 1);
    assert_int_equal(a.items[1].dtype, ST_FP16);
    assert_int_equal(a.items[1].line, 3);
    st_attn_set_free(&a);
    st_calib_data d = {0};
    assert_int_equal(st_calib_add_attention(&d, testdata("measured/attention.csv"), &err), 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.s[0].k.op, ST_KOP_FLASH);
    assert_int_equal(d.s[0].k.kv_heads, 8);
    assert_string_equal(d.s[0].op, "attention-decode");
    assert_string_equal(d.s[1].op, "attention-causal");
    assert_int_equal(d.s[1].k.causal, 1);
    assert_true(d.s[1].validate_only);
    st_calib_data_free(&d);
    /* absent: nothing, no error */
    assert_int_equal(st_read_attention_csv(testdata("measured/no-such-attention.csv"), &a, &err), 0);
    assert_int_equal(a.n, 0);
    assert_int_equal(st_read_attention_csv(testdata("measured/attention-bad-causal.csv"), &a, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/attention-bad-causal.csv", ":2:56:", "expected True or False, found 'maybe'");
    assert_int_equal(a.n, 0);
    static const struct {
        const char *file, *where, *needle;
    } bad[] = {
        {"measured/attention-bad-kvh.csv", ":2:43:", "5 KV heads do not divide 16 query heads"},
        {"measured/attention-bad-causal-q.csv", ":2:46:", "a causal row with 4096 queries over 2048 keys"},
        {"measured/attention-bad-dtype.csv", ":2:64:", "'int8' is no fused-attention datatype"},
        {"measured/attention-bad-op.csv", ":2:1:", "'sdpa_math' is not a row this file holds"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(st_read_attention_csv(testdata(bad[i].file), &a, &err), ST_EINVAL);
        assert_error_at(err.msg, bad[i].file, bad[i].where, bad[i].needle);
        assert_int_equal(a.n, 0);
    }
    assert_int_equal(st_read_attention_csv(testdata("measured/attention-nokvh.csv"), &a, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/attention-nokvh.csv", ":1:1:", "no 'KV Heads' column");
    st_attn_set_free(&a);
}

/* An op sweep in strata kernel's terms: every field, the kernel each row
 * becomes (the harness floor class it is scored with), and FILE:LINE:COL
 * for an op the file cannot hold, INT4 off a GEMM, a size the op does not
 * take or one it needs left empty, and a missing column */
static void test_ops(void **state)
{
    st_ops_set o = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_ops_csv(testdata("measured/ops.csv"), &o, &err), 0);
    assert_int_equal(o.n, 4);
    assert_int_equal(o.items[0].op, ST_KOP_GROUPED);
    assert_int_equal(o.items[0].b, 8);
    assert_int_equal(o.items[0].m, 256);
    assert_int_equal(o.items[0].n, 2048);
    assert_int_equal(o.items[0].k, 7168);
    assert_true(o.items[0].latency_s == 0.25e-3);
    assert_int_equal(o.items[1].int4, 1);
    assert_int_equal(o.items[1].int4_kernel, ST_INT4_MARLIN); /* its kernel column names Marlin */
    assert_int_equal(o.items[2].op, ST_KOP_EMBEDDING);
    assert_int_equal(o.items[2].dtype, ST_FP32);
    assert_int_equal(o.items[2].rows, 8192);
    assert_int_equal(o.items[2].cols, 4096);
    assert_int_equal(o.items[0].torch_ver, 211); /* p2.11.0 */
    assert_int_equal(o.items[2].topk, 0);
    assert_int_equal(o.items[3].topk, 2);
    assert_int_equal(o.items[3].int4, 0); /* empty: not INT4 */
    assert_int_equal(o.items[3].line, 5);
    assert_string_equal(o.items[3].device, "NVIDIA H100 80GB HBM3");
    st_ops_set_free(&o);
    st_calib_data d = {0};
    assert_int_equal(st_calib_add_ops(&d, testdata("measured/ops.csv"), 0, &err), 0);
    assert_int_equal(d.n, 4);
    assert_string_equal(d.s[0].op, "grouped");
    assert_int_equal(d.s[0].k.dispatch, ST_DISP_BMM);
    assert_string_equal(d.s[1].op, "gemm-int4");
    assert_int_equal(d.s[1].k.weight_only_int4, 1);
    assert_int_equal(d.s[2].k.dispatch, ST_DISP_ELEMENTWISE);
    assert_true(d.s[2].k.index_elems == 8192.0 * 4096.0);
    assert_int_equal(d.s[3].k.op, ST_KOP_TOPK);
    assert_int_equal(d.s[3].k.dispatch, ST_DISP_SOFTMAX);
    assert_true(d.s[3].validate_only && d.s[3].has_dispatch);
    assert_int_equal(d.s[3].k.k, 2);
    assert_int_equal(d.s[2].k.torch_ver, 211);
    st_calib_data_free(&d);
    /* the INT4 kernel: from the kernel column where int4 is 1, or named */
    assert_int_equal(st_read_ops_csv(testdata("measured/ops-int4.csv"), &o, &err), 0);
    assert_int_equal(o.n, 4);
    static const st_int4_kernel want[4] = {ST_INT4_TINYGEMM, ST_INT4_MARLIN, ST_INT4_TINYGEMM, ST_INT4_MARLIN};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(o.items[i].int4, 1);
        assert_int_equal(o.items[i].int4_kernel, want[i]);
    }
    st_ops_set_free(&o);
    assert_int_equal(st_calib_add_ops(&d, testdata("measured/ops-int4.csv"), 0, &err), 0);
    assert_int_equal(d.n, 4);
    assert_int_equal(d.s[0].k.int4_kernel, ST_INT4_TINYGEMM);
    assert_true(st_calib_tinygemm_fit(&d.s[0]) && !st_calib_tinygemm_fit(&d.s[1]));
    assert_string_equal(d.s[0].op, "gemm-int4-tinygemm"); /* its own class, apart from Marlin's */
    assert_string_equal(d.s[1].op, "gemm-int4");
    st_calib_data_free(&d);
    /* a tinygemm row the kernel cannot run: an error at its int4 field */
    assert_int_equal(st_calib_add_ops(&d, testdata("measured/ops-bad-tinygemm.csv"), 0, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/ops-bad-tinygemm.csv", ":2:11:", "tinygemm on h100-sxm gemm: its activations are BF16");
    st_calib_data_free(&d);
    assert_int_equal(st_read_ops_csv(testdata("measured/no-such-ops.csv"), &o, &err), 0);
    assert_int_equal(o.n, 0);
    static const struct {
        const char *file, *where, *needle;
    } bad[] = {
        {"measured/ops-bad-op.csv", ":2:1:", "'flash' is not an op this file holds"},
        {"measured/ops-bad-int4.csv", ":2:11:", "weight-only INT4 is a GEMM with fp16 or bf16 activations, not topk"},
        {"measured/ops-bad-int4-kernel.csv", ":2:11:", "expected 0, 1, marlin or tinygemm (or empty), found 'cutlass'"},
        {"measured/ops-int4-no-kernel.csv", ":2:11:", "1 takes the kernel from the row's kernel column, which names "
                                                      "neither tinygemm nor Marlin; write the int4 field as tinygemm or marlin"},
        {"measured/ops-extra-size.csv", ":2:28:", "gemm takes b, m, n and k; leave 'rows' empty"},
        {"measured/ops-missing-size.csv", ":2:18:", "column 'm': expected a whole number"},
        {"measured/ops-bad-dtype.csv", ":2:6:", "unknown datatype 'int4'"},
        {"measured/ops-noint4.csv", ":1:1:", "no 'int4' column"},
        {"measured/ops-no-device.csv", ":2:39:", "column 'device': empty"},
        {"measured/ops-bad-torch.csv", ":2:69:", "'2.x' is not a PyTorch version"},
        {"measured/ops-bad-topk.csv", ":2:25:", "65 experts kept of 64"},
        {"measured/ops-topk-off.csv", ":2:38:", "only a topk row keeps experts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(st_read_ops_csv(testdata(bad[i].file), &o, &err), ST_EINVAL);
        assert_error_at(err.msg, bad[i].file, bad[i].where, bad[i].needle);
        assert_int_equal(o.n, 0);
    }
    st_ops_set_free(&o);
}

/* A collective's size is bytes, counted up to 2^53 as `coll --bytes` counts */
static void test_vidur_network_bounds(void **state)
{
    (void)state;
    st_net_set n = {0};
    st_error err;
    assert_int_not_equal(st_read_vidur_network(testdata("measured/net-huge-size.csv"), &n, &err), 0);
    assert_error_at(err.msg, "measured/net-huge-size.csv", ":3:", "column 'size': expected a number in [0, 9.0072e+15]");
    assert_int_equal(n.n, 0);
    st_net_set_free(&n);
    /* a timed collective takes some time: a 0 ms median is a broken row,
     * not one to leave out of the score without a word */
    assert_int_not_equal(st_read_vidur_network(testdata("measured/net-zero-median.csv"), &n, &err), 0);
    assert_error_at(err.msg, "measured/net-zero-median.csv", ":3:1:", "the time > 0");
    assert_int_equal(n.n, 0);
    st_net_set_free(&n);
}

/* A label's operator profile (NeuSight's LABEL.csv): everything outside
 * block 0 once, block 0 (the outermost numbered module, however deep the
 * operator sits in it) num_layer times, backward = bw + acc. By hand,
 * num_layer 3: forward 0.5 + 1.0 + 3 x (0.125 + 0.375) = 3.0 ms;
 * backward 2.0 + 0.25 + 3 x (0.25 + 0.5 + 0.125) = 4.875 ms. */
static void test_neusight_profile(void **state)
{
    st_ns_profile p;
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_profile(testdata("measured/profile-gpt2.csv"), 3, &p, &err), 0);
    assert_int_equal(p.ok, 1);
    assert_true(fabs(p.fwd_s - 3.0e-3) < 1e-15);
    assert_true(fabs(p.bwd_s - 4.875e-3) < 1e-15);
    assert_int_equal(p.block_ops, 2);
    assert_string_equal(p.block, "transformer.h.0");
    /* no layer count: nothing to scale block 0 by */
    assert_int_equal(st_read_neusight_profile(testdata("measured/profile-gpt2.csv"), 0, &p, &err), 0);
    assert_int_equal(p.ok, 0);
    /* a trace that holds block 10 as well is not "block 0 x num_layer" */
    assert_int_equal(st_read_neusight_profile(testdata("measured/profile-h10.csv"), 3, &p, &err), 0);
    assert_int_equal(p.ok, 0);
    assert_int_equal(p.block_ops, 2);
    /* an encoder and a decoder stack: num_layer says how many of which? */
    assert_int_equal(st_read_neusight_profile(testdata("measured/profile-t5.csv"), 6, &p, &err), 0);
    assert_int_equal(p.ok, 0);
    assert_true(p.block_ops > 0);
    assert_string_equal(p.block, "encoder.block.0");
    assert_int_equal(st_read_neusight_profile(testdata("measured/profile-bad.csv"), 3, &p, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/profile-bad.csv", ":3:", "column 'fw_latency': expected a number");
    assert_int_equal(p.ok, 0);
    assert_int_equal(st_read_neusight_profile(testdata("measured/profile-nocol.csv"), 3, &p, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/profile-nocol.csv", ":1:1", "no 'acc_latency' column; expected a NeuSight operator profile");
    /* a byte that is not UTF-8 in meta: an error, not an operator counted once */
    assert_int_equal(st_read_neusight_profile(testdata("measured/profile-badutf8.csv"), 3, &p, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/profile-badutf8.csv", ":5:", "column 'meta': not valid UTF-8");
    assert_int_equal(p.ok, 0);
}

/* A label's forward / backward split: both parts, adding up to the whole,
 * or an error naming what is wrong. */
static void test_neusight_label_split(void **state)
{
    st_ns_label l;
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_label(testdata("measured/label-split.json"), &l, &err), 0);
    assert_int_equal(l.has_split, 1);
    assert_int_equal(l.num_layer, 3);
    assert_true(l.e2e_s == 9.875e-3 && l.fwd_s == 6.0e-3 && l.bwd_s == 3.875e-3);
    assert_int_equal(st_read_neusight_label(testdata("measured/label-half-split.json"), &l, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/label-half-split.json", ":3:", "has fw_latency but not bwall_latency");
    assert_int_equal(st_read_neusight_label(testdata("measured/label-split-sum.json"), &l, &err), ST_EINVAL);
    assert_error_at(err.msg, "measured/label-split-sum.json", ":3:", "must add up to the whole");
}

static void test_op_names(void **state)
{
    static const char *const names[ST_MEAS_OP_COUNT] = {
        "bmm", "linear", "conv", "add", "addu", "mul", "mulu", "div", "divu",
        "pow", "powu", "gelu", "relu", "tanh", "ln", "softmax", "rmsnorm"};
    st_meas_op op;
    (void)state;
    for (int i = 0; i < ST_MEAS_OP_COUNT; i++) {
        assert_string_equal(st_meas_op_name((st_meas_op)i), names[i]);
        assert_int_equal(st_meas_op_parse(names[i], &op), 0);
        assert_int_equal(op, i);
    }
    assert_int_equal(st_meas_op_parse("Softmax", &op), ST_EINVAL);
    assert_int_equal(st_meas_op_parse("", &op), ST_EINVAL);
}

/* A folder: *.csv only, not descending, sorted by name (a-vec before
 * b-conv); conv shapes; "(anonymous namespace)" kept in kernel names. */
static void test_neusight_dir(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_dir(testdata("measured/dir"), &s, &err), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.items[0].op, ST_MEAS_SOFTMAX);
    assert_string_equal(s.items[0].device, "Tesla V100-PCIE-32GB");
    assert_string_equal(s.items[0].kernel_name,
                        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, "
                        "float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>");
    assert_true(s.items[0].latency_s == 0.125e-3);
    assert_int_equal(s.items[0].b, 32768);
    assert_int_equal(s.items[0].n, 1600);
    assert_int_equal(s.items[0].m, 0);
    assert_int_equal(s.items[0].grid[0], 32768);
    assert_int_equal(s.items[0].block[0], 256);
    assert_int_equal(s.items[0].line, 2);
    /* after a blank line; a name with no argument list, trimmed */
    assert_int_equal(s.items[1].op, ST_MEAS_GELU);
    assert_string_equal(s.items[1].kernel_name, "void (anonymous namespace)::gelu_kernel<float>");
    assert_int_equal(s.items[1].line, 4);
    assert_int_equal(s.items[2].op, ST_MEAS_CONV);
    assert_string_equal(s.items[2].kernel_name, "volta_sgemm_64x64_nn");
    assert_true(s.items[2].latency_s == 2.7097493012746177 / 1e3);
    assert_int_equal(s.items[2].b, 38);
    assert_int_equal(s.items[2].c_in, 893);
    assert_int_equal(s.items[2].c_out, 326);
    assert_int_equal(s.items[2].kernel, 3);
    assert_int_equal(s.items[2].size, 5);
    assert_int_equal(s.items[2].stride, 1);
    assert_int_equal(s.items[2].pad, 1);
    assert_int_equal(s.items[2].grid[2], 36);
    assert_int_equal(s.items[2].block[0], 64);
    st_kernel_set_free(&s);
    assert_int_equal(s.n, 0);
    assert_null(s.items);
    /* a folder that is not there */
    assert_int_equal(st_read_neusight_dir(testdata("measured/no-such-dir"), &s, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "measured/no-such-dir: cannot open folder"));
    assert_int_equal(st_read_neusight_csv(testdata("measured/no-such.csv"), &s, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "measured/no-such.csv: cannot open"));
}

/* Every field of one VIDUR sample; times given in ms as in the file. */
static void check_vidur(const st_vidur_sample *v, const char *op, long long tokens, int tp,
                        const double ms[5], int line)
{
    assert_string_equal(v->op, op);
    assert_int_equal(v->num_tokens, tokens);
    assert_int_equal(v->tp, tp);
    assert_int_equal(v->n_head, 32);
    assert_int_equal(v->n_kv_head, 8);
    assert_int_equal(v->n_embd, 4096);
    assert_int_equal(v->n_expanded_embd, 14336);
    assert_int_equal(v->vocab_size, 128256);
    assert_int_equal(v->gated_mlp, 1);
    assert_true(v->min_s == ms[0] / 1e3);
    assert_true(v->max_s == ms[1] / 1e3);
    assert_true(v->mean_s == ms[2] / 1e3);
    assert_true(v->median_s == ms[3] / 1e3);
    assert_true(v->std_s == ms[4] / 1e3);
    assert_int_equal(v->line, line);
}

static void test_vidur_fixture(void **state)
{
    st_vidur_set v = {0, 0, NULL, "", ""};
    st_error err;
    (void)state;
    assert_int_equal(st_read_vidur_mlp(testdata("measured/compute/a100/org/model/mlp.csv"), &v,
                                       &err), 0);
    assert_string_equal(v.gpu, "a100");
    assert_string_equal(v.model, "org/model");
    assert_int_equal(v.n, 4); /* 2 rows x 2 operators, in header order */
    check_vidur(&v.items[0], "add", 64, 2, (const double[]){0.1, 0.3, 0.2, 0.2, 0.05}, 2);
    check_vidur(&v.items[1], "mlp_up_proj", 64, 2, (const double[]){1.0, 2.0, 1.5, 1.4, 0.25},
                2);
    check_vidur(&v.items[2], "add", 128, 2, (const double[]){0.11, 0.31, 0.21, 0.2, 0.05}, 3);
    check_vidur(&v.items[3], "mlp_up_proj", 128, 2, (const double[]){2.0, 3.0, 2.5, 2.4, 0.5},
                3);
    st_vidur_set_free(&v);
}

/* A path without compute/GPU/ORG/MODEL leaves gpu and model empty; an
 * operator lacking any of its five statistics is not read. */
static void test_vidur_flat_and_bad(void **state)
{
    st_vidur_set v = {0, 0, NULL, "x", "y"};
    st_error err;
    (void)state;
    assert_int_equal(st_read_vidur_mlp(testdata("measured/vidur-flat/mlp.csv"), &v, &err), 0);
    assert_string_equal(v.gpu, "");
    assert_string_equal(v.model, "");
    assert_int_equal(v.n, 1); /* 'emb' has only a mean */
    assert_string_equal(v.items[0].op, "add");
    assert_true(v.items[0].std_s == 0);
    assert_true(v.items[0].min_s == 0.1e-3);
    assert_true(v.items[0].max_s == 0.3e-3);
    assert_int_equal(v.items[0].gated_mlp, 0);
    assert_int_equal(v.items[0].n_head, 32);
    assert_int_equal(v.items[0].n_embd, 2560);
    assert_int_equal(v.items[0].vocab_size, 51200);
    assert_int_equal(v.items[0].line, 2);

    assert_int_not_equal(st_read_vidur_mlp(testdata("measured/vidur-bad-gated.csv"), &v, &err),
                         0);
    assert_non_null(strstr(err.msg, "vidur-bad-gated.csv:2:"));
    assert_non_null(strstr(err.msg, "column 'use_gated_mlp': expected True or False, found "
                                    "'Maybe'"));
    assert_int_equal(v.n, 1);
    assert_int_not_equal(st_read_vidur_mlp(testdata("measured/vidur-bad-mean.csv"), &v, &err), 0);
    assert_non_null(strstr(err.msg, "vidur-bad-mean.csv:3:9: column 'time_stats.add.mean': "
                                    "expected a number, found 'x'"));
    assert_int_equal(v.n, 1); /* the good row of the failed file is not kept */
    st_vidur_set_free(&v);
}

/* Data lines of a CSV (lines after the header), counted independently. */
static size_t data_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    int c, last = '\n';
    if (!f)
        return 0;
    while ((c = fgetc(f)) != EOF) {
        if (c == '\n')
            n++;
        last = c;
    }
    if (last != '\n')
        n++;
    fclose(f);
    return n - 1;
}

static void test_shared_data(void **state)
{
    const char *root = shared_data();
    static const char *const files[] = {"bmm.csv", "elem.csv", "linear.csv", "ln.csv",
                                        "softmax.csv", "vec.csv"};
    char path[1200];
    (void)state;
    if (!root) {
        printf("# skip: ../shared/data is absent\n");
        skip();
    }
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        st_kernel_set s = {0, 0, NULL};
        st_error err;
        snprintf(path, sizeof path, "%s/neusight/kernels-test/%s", root, files[i]);
        if (st_read_neusight_csv(path, &s, &err) != 0)
            fail_msg("%s", err.msg);
        if (s.n != data_lines(path))
            fail_msg("%s: %zu samples for %zu data lines", files[i], s.n, data_lines(path));
        for (size_t j = 0; j < s.n; j++)
            assert_true(s.items[j].latency_s > 0);
        st_kernel_set_free(&s);
    }
    {
        st_vidur_set v = {0, 0, NULL, "", ""};
        st_error err;
        snprintf(path, sizeof path,
                 "%s/vidur/profiling/compute/a100/meta-llama/Llama-2-70b-hf/mlp.csv", root);
        assert_int_equal(st_read_vidur_mlp(path, &v, &err), 0);
        /* ten operators per row: emb, two layernorms, four projections,
         * rope, activation, add */
        assert_int_equal(v.n, 10 * data_lines(path));
        assert_string_equal(v.gpu, "a100");
        assert_string_equal(v.model, "meta-llama/Llama-2-70b-hf");
        for (size_t j = 0; j < v.n; j++)
            assert_true(v.items[j].mean_s > 0 && v.items[j].min_s <= v.items[j].max_s);
        st_vidur_set_free(&v);
        /* phi-2 has parallel attention: no post_attention_layernorm columns */
        snprintf(path, sizeof path, "%s/vidur/profiling/compute/a40/microsoft/phi-2/mlp.csv",
                 root);
        assert_int_equal(st_read_vidur_mlp(path, &v, &err), 0);
        assert_int_equal(v.n, 9 * data_lines(path));
        assert_string_equal(v.gpu, "a40");
        assert_int_equal(v.items[0].gated_mlp, 0);
        st_vidur_set_free(&v);
    }
}

/* The GEMM shapes the calibration reads from NeuSight's B,M,N,K columns
 * must be the launches the profiler recorded: with the reduction on N and
 * the output M x K (NeuSight multiplies (B,M,N) by (B,N,K)), the output
 * tiles b * ceil(m / tile.m) * ceil(n / tile.n) of the kernel name's tile
 * equal the recorded grid's CTAs for nearly every launch (the rest are
 * split-K or sliced kernels, whose grids are multiples). Reading K as the
 * reduction instead matches 36% of bmm and 6% of linear launches. */
static void test_gemm_geometry(void **state)
{
    const char *root = shared_data();
    char path[1200];
    (void)state;
    if (!root) {
        printf("# skip: ../shared/data is absent\n");
        skip();
    }
    st_calib_data d;
    memset(&d, 0, sizeof d);
    st_error err;
    snprintf(path, sizeof path, "%s/neusight/kernels-test", root);
    if (st_calib_add_neusight(&d, path, &err) != 0)
        fail_msg("%s", err.msg);
    size_t n[2] = {0, 0}, exact[2] = {0, 0}, multiple[2] = {0, 0};
    for (size_t i = 0; i < d.n; i++) {
        const st_calib_sample *s = &d.s[i];
        if ((s->k.op != ST_KOP_BMM && s->k.op != ST_KOP_GEMM) || s->named.m <= 0 || s->grid_ctas <= 0)
            continue;
        int j = s->k.op == ST_KOP_BMM;
        double tiles = (double)s->k.b * ceil((double)s->k.m / s->named.m) * ceil((double)s->k.n / s->named.n);
        n[j]++;
        exact[j] += s->grid_ctas == tiles;
        multiple[j] += fmod(s->grid_ctas, tiles) == 0;
    }
    st_calib_data_free(&d);
    printf("# grid = tiles: bmm %zu of %zu, linear %zu of %zu\n", exact[1], n[1], exact[0], n[0]);
    assert_true(n[0] > 1000 && n[1] > 1000);
    assert_true(exact[1] >= 0.99 * n[1]);
    assert_true(exact[0] >= 0.8 * n[0]);
    assert_true(multiple[0] >= 0.95 * n[0] && multiple[1] >= 0.99 * n[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_names),
        cmocka_unit_test(test_neusight_dtype),
        cmocka_unit_test(test_harness),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_neusight_fixture),
        cmocka_unit_test(test_neusight_unknown_op),
        cmocka_unit_test(test_neusight_crlf_vector),
        cmocka_unit_test(test_neusight_multiline),
        cmocka_unit_test(test_neusight_malformed),
        cmocka_unit_test(test_neusight_dir),
        cmocka_unit_test(test_vidur_fixture),
        cmocka_unit_test(test_vidur_flat_and_bad), cmocka_unit_test(test_vidur_network_bounds),
        cmocka_unit_test(test_shared_data),
        cmocka_unit_test(test_neusight_profile), cmocka_unit_test(test_neusight_label_split),
        cmocka_unit_test(test_gemm_geometry),
    };
    return cmocka_run_group_tests_name("measured", tests, NULL, NULL);
}
