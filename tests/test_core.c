/*
 * core: ridge least squares against closed-form solutions, the JSON number
 * format (shortest text that reads back exactly), did-you-mean distances.
 */
#include "config.h"
#include "testutil.h"

#include "core/core.h"

#include <math.h>

/* y = 2 + 3x exactly: ordinary least squares recovers it to rounding. */
static void test_ridge_exact_line(void **state)
{
    double X[10 * 2], y[10], beta[2], sd;
    st_error err;
    (void)state;
    for (int i = 0; i < 10; i++) {
        X[2 * i] = 1;
        X[2 * i + 1] = i * 0.5;
        y[i] = 2 + 3 * (i * 0.5);
    }
    assert_int_equal(st_ridge(X, y, NULL, 10, 2, 0, beta, &sd, &err), 0);
    assert_true(fabs(beta[0] - 2) < 1e-12 && fabs(beta[1] - 3) < 1e-12);
    assert_true(sd < 1e-12);
}

/* One feature, no intercept: beta = sum(w x y) / (sum(w x^2) + lambda). */
static void test_ridge_closed_form(void **state)
{
    double x[4] = {1, 2, 3, 4}, y[4] = {2, 3, 7, 8}, w[4] = {1, 2, 1, 0.5}, beta;
    double lambda = 3, num = 0, den = lambda;
    st_error err;
    (void)state;
    for (int i = 0; i < 4; i++) {
        num += w[i] * x[i] * y[i];
        den += w[i] * x[i] * x[i];
    }
    assert_int_equal(st_ridge(x, y, w, 4, 1, lambda, &beta, NULL, &err), 0);
    assert_true(fabs(beta - num / den) < 1e-12);
}

static void test_ridge_errors(void **state)
{
    double X[2 * 2] = {1, 2, 2, 4}, y[2] = {1, 2}, beta[2];
    st_error err;
    (void)state;
    /* collinear columns without a penalty: rank deficient, said so */
    assert_int_equal(st_ridge(X, y, NULL, 2, 2, 0, beta, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "linearly dependent"));
    /* the penalty makes it solvable */
    assert_int_equal(st_ridge(X, y, NULL, 2, 2, 1e-6, beta, NULL, &err), 0);
    /* too few rows */
    assert_int_equal(st_ridge(X, y, NULL, 1, 2, 0, beta, NULL, &err), ST_EINVAL);
}

static void test_json_numbers(void **state)
{
    static const double v[] = {0.1, 1e-300, 2.93e13, 6738415616.0, 1.0 / 3, -0.5, 123456789.125};
    char buf[40];
    (void)state;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        st_format_double(buf, sizeof buf, v[i]);
        assert_true(strtod(buf, NULL) == v[i]);
    }
    st_format_double(buf, sizeof buf, 0.1);
    assert_string_equal(buf, "0.1"); /* the shortest form, not 0.10000000000000001 */
    st_format_double(buf, sizeof buf, 6738415616.0);
    assert_string_equal(buf, "6738415616");
    st_format_double(buf, sizeof buf, INFINITY);
    assert_string_equal(buf, "null");
}

static void test_suggest(void **state)
{
    static const char *const keys[] = {"sm_count", "memory_gib", "warp_size"};
    (void)state;
    assert_int_equal(st_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(st_edit_distance("SM_COUNT", "sm_count"), 0);
    assert_string_equal(st_suggest("sm_cout", keys, 3), "sm_count");
    assert_null(st_suggest("completely_different", keys, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ridge_exact_line),
        cmocka_unit_test(test_ridge_closed_form),
        cmocka_unit_test(test_ridge_errors),
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
