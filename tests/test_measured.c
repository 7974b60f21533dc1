/*
 * Measured-data readers: hand-made CSV fixtures checked field by field
 * (quoted names with commas and doubled quotes, CRLF, skipped ops, malformed
 * rows), and the shared NeuSight/VIDUR files counted against their lines.
 */
#include "config.h"
#include "testutil.h"

#include "io/measured.h"

#include <dirent.h>

static void test_neusight_fixture(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_csv(testdata("measured/kernels.csv"), &s, &err), 0);
    assert_int_equal(s.n, 2); /* the 'frobnicate' row is skipped */
    assert_int_equal(s.items[0].op, ST_MEAS_BMM);
    assert_string_equal(s.items[0].device, "Tesla T4");
    assert_string_equal(s.items[0].kernel_name, "volta_sgemm_128x64_nn");
    assert_true(s.items[0].latency_s == 0.5e-3);
    assert_int_equal(s.items[0].b, 4);
    assert_int_equal(s.items[0].m, 100);
    assert_int_equal(s.items[0].n, 200);
    assert_int_equal(s.items[0].k, 300);
    assert_int_equal(s.items[0].grid[0], 2);
    assert_int_equal(s.items[0].grid[1], 3);
    assert_int_equal(s.items[0].grid[2], 4);
    assert_int_equal(s.items[0].block[0], 256);
    assert_int_equal(s.items[0].line, 2);
    /* a quoted name with a doubled quote and commas, cut at '(' */
    assert_int_equal(s.items[1].op, ST_MEAS_LINEAR);
    assert_string_equal(s.items[1].kernel_name, "void \"quoted\", kernel<float, 4>");
    assert_true(s.items[1].latency_s == 2.25e-3);
    assert_int_equal(s.items[1].k, 256);
    st_kernel_set_free(&s);
}

static void test_neusight_crlf_vector(void **state)
{
    st_kernel_set s = {0, 0, NULL};
    st_error err;
    (void)state;
    assert_int_equal(st_read_neusight_csv(testdata("measured/vector-crlf.csv"), &s, &err), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.items[0].op, ST_MEAS_ADD);
    assert_int_equal(s.items[0].b, 127);
    assert_int_equal(s.items[0].n, 168); /* H */
    assert_string_equal(s.items[0].kernel_name,
                        "void at::native::vectorized_elementwise_kernel<4, "
                        "at::native::CUDAFunctor_add<float> >");
    assert_int_equal(s.items[1].op, ST_MEAS_LN);
    assert_int_equal(s.items[1].n, 272);
    assert_int_equal(s.items[1].block[1], 4);
    st_kernel_set_free(&s);
}

static void test_neusight_malformed(void **state)
{
    static const struct {
        const char *file, *where, *needle;
    } cases[] = {
        {"measured/bad-latency.csv", ":2:", "column 'Latency': expected a number"},
        {"measured/short-row.csv", ":2:1:", "7 columns, the header has 8"},
        {"measured/negative-shape.csv", ":2:", "column 'M': expected a whole number >= 0"},
        {"measured/unclosed-quote.csv", ":2:", "a quoted field is not closed"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st_kernel_set s = {0, 0, NULL};
        st_error err;
        char want[1200];
        snprintf(want, sizeof want, "%s%s", testdata(cases[i].file), cases[i].where);
        if (st_read_neusight_csv(testdata(cases[i].file), &s, &err) == 0 ||
            strncmp(err.msg, want, strlen(want)) != 0 || !strstr(err.msg, cases[i].needle))
            fail_msg("%s: %s", cases[i].file, err.msg);
        st_kernel_set_free(&s);
    }
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
    assert_int_equal(v.n, 4); /* 2 rows x 2 operators */
    assert_string_equal(v.items[0].op, "add");
    assert_string_equal(v.items[1].op, "mlp_up_proj");
    assert_true(v.items[1].mean_s == 1.5e-3);
    assert_true(v.items[1].median_s == 1.4e-3);
    assert_true(v.items[1].std_s == 0.25e-3);
    assert_int_equal(v.items[3].num_tokens, 128);
    assert_int_equal(v.items[3].tp, 2);
    assert_int_equal(v.items[3].n_kv_head, 8);
    assert_int_equal(v.items[3].n_expanded_embd, 14336);
    assert_int_equal(v.items[3].gated_mlp, 1);
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
        assert_string_equal(v.model, "meta-llama/Llama-2-70b-hf");
        st_vidur_set_free(&v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_neusight_fixture),
        cmocka_unit_test(test_neusight_crlf_vector),
        cmocka_unit_test(test_neusight_malformed),
        cmocka_unit_test(test_vidur_fixture),
        cmocka_unit_test(test_shared_data),
    };
    return cmocka_run_group_tests_name("measured", tests, NULL, NULL);
}
