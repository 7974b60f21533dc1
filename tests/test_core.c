/*
 * core: ridge least squares against closed-form solutions, the JSON number
 * format (shortest text that reads back exactly), did-you-mean distances.
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include "config.h"
#include "testutil.h"

#include "core/core.h"
#include "cli/cli.h"

#include <math.h>
#include <sched.h>
#include <unistd.h>

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
    /* a negative or NaN weight is an error, not a silent zero */
    double w[2] = {1, -1};
    assert_int_equal(st_ridge(X, y, w, 2, 2, 1e-6, beta, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "weight of row 1"));
    w[1] = NAN;
    assert_int_equal(st_ridge(X, y, w, 2, 2, 1e-6, beta, NULL, &err), ST_EINVAL);
    /* a non-finite feature is reported with its row */
    w[1] = 1;
    X[2] = INFINITY;
    assert_int_equal(st_ridge(X, y, w, 2, 2, 1e-6, beta, NULL, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "row 1 is not finite"));
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
    /* whole numbers in full, never in exponent form (2.250297344e+10) */
    st_format_double(buf, sizeof buf, 22502973440.0);
    assert_string_equal(buf, "22502973440");
    st_format_double(buf, sizeof buf, 2.93e13);
    assert_string_equal(buf, "29300000000000");
    st_format_double(buf, sizeof buf, 1e20); /* past 2^53: shortest form */
    assert_string_equal(buf, "1e+20");
    st_format_double(buf, sizeof buf, INFINITY);
    assert_string_equal(buf, "null");
    /* 16 and 17 digits where fewer do not read back (Python's repr agrees) */
    st_format_double(buf, sizeof buf, 0.1 + 0.2);
    assert_string_equal(buf, "0.30000000000000004");
    st_format_double(buf, sizeof buf, 1.0 / 3);
    assert_string_equal(buf, "0.3333333333333333");
    st_format_double(buf, sizeof buf, 123456789.125);
    assert_string_equal(buf, "123456789.125");
}

/* The reference: the least N whose %.Ng reads back, by trying every N. */
static void shortest_by_search(char *buf, size_t n, double v)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* The formatter's shortcut (15 digits first) against the exhaustive
 * search, on 200,000 doubles: random bit patterns over every exponent,
 * and short decimals (k / 10^d) that read back in few digits. */
static void test_json_numbers_shortest(void **state)
{
    char a[40], b[40];
    unsigned long long x = 88172645463325252ULL;
    (void)state;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        double v;
        if (i % 2) {
            unsigned long long bits = x & ~(0x7ffULL << 52);
            bits |= (unsigned long long)(1 + (x >> 40) % 2046) << 52; /* finite, normal */
            memcpy(&v, &bits, sizeof v);
        } else {
            static const double scale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e9, 1e12};
            v = (double)(x % 1000000007ULL) / scale[(x >> 32) % 9] - 5e8;
        }
        st_format_double(a, sizeof a, v);
        if (fabs(v) < 9007199254740992.0 && v == floor(v))
            continue; /* whole numbers print in full (above) */
        shortest_by_search(b, sizeof b, v);
        if (strcmp(a, b) != 0)
            fail_msg("%.17g: formatted '%s', shortest '%s'", v, a, b);
    }
}

/* JSONL lines are JSON (RFC 8259): one object per line, every value
 * checked, the keys asked for read as numbers. Columns counted by hand. */
static void test_jsonl(void **state)
{
    static const char *const keys[2] = {"a", "b"};
    static const struct {
        const char *line;
        int col;          /* 0: valid */
        const char *why;  /* part of the message */
    } cases[] = {
        {"{\"a\": 1, \"b\": -2.5e1}\n", 0, NULL},
        {"  {\"s\": \"x\\\"y\\u00e9\", \"n\": {\"m\": [1, {}, [], null, true]}, \"a\": 0}  \r\n", 0, NULL},
        {"{}", 0, NULL},
        {"{\"a\": 1", 8, "not closed"},
        {"{\"a\": 1} x", 10, "text after"},
        {"{\"a\": 1, \"a\": 2}", 10, "duplicate key \"a\""},
        {"{\"a\": \"1\"}", 7, "\"a\" must be a number"},
        {"{\"a\": 01}", 8, "expected ','"},
        {"{\"a\": 1.}", 9, "digit after the decimal"},
        {"{\"a\": 1e}", 9, "exponent"},
        {"{\"a\": 1e999}", 7, "out of range"},
        {"{\"a\": 1,, \"b\": 2}", 9, "expected a key"},
        {"{a: 1}", 2, "expected a key"},
        {"{\"a\" 1}", 6, "expected ':'"},
        {"{\"s\": \"\\q\"}", 8, "unknown escape"},
        {"{\"s\": [1, 2}", 12, "expected ',' or ']'"},
        {"{\"s\": tru}", 7, "expected a value"},
        {"[1]", 1, "JSON object"},
        {"{\"s\": \"abc", 11, "unterminated"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v[2] = {0, 0};
        int found[2], col = 0;
        char why[160] = "";
        int rc = st_jsonl_parse(cases[i].line, keys, 2, v, found, &col, why, sizeof why);
        if (!cases[i].col) {
            if (rc)
                fail_msg("case %zu: %s at %d", i, why, col);
            continue;
        }
        if (rc != -1 || col != cases[i].col || !strstr(why, cases[i].why))
            fail_msg("case %zu: rc %d col %d (want %d) '%s' (want '%s')", i, rc, col, cases[i].col, why,
                     cases[i].why);
    }
    double v[2];
    int found[2], col;
    char why[160];
    assert_int_equal(st_jsonl_parse("{\"x\": {\"a\": 5}, \"b\": -2.5e1}", keys, 2, v, found, &col, why, sizeof why), 0);
    assert_int_equal(found[0], 0); /* a nested "a" is not the top-level key */
    assert_int_equal(found[1], 22);
    assert_true(v[1] == -25);
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

/* Human-readable quantities keep three significant digits and never print
 * a four-digit mantissa: a value that rounds to 1000 moves to the next
 * prefix (999.7 B/s is 1 kB/s), 1000-1023 bytes are a fraction of a KiB. */
static void test_units(void **state)
{
    (void)state;
    char b[32];
    cli_si(b, sizeof b, 999.7, "B/s");
    assert_string_equal(b, "1 kB/s");
    cli_si(b, sizeof b, 999, "Hz");
    assert_string_equal(b, "999 Hz");
    cli_si(b, sizeof b, 1.41e9, "Hz");
    assert_string_equal(b, "1.41 GHz");
    cli_si(b, sizeof b, 0.9996, "s");
    assert_string_equal(b, "1 s");
    cli_si(b, sizeof b, 0.9994e-3, "s");
    assert_string_equal(b, "999 us");
    cli_si(b, sizeof b, 5e-4, "s");
    assert_string_equal(b, "500 us");
    cli_bytes(b, sizeof b, 999);
    assert_string_equal(b, "999 B");
    cli_bytes(b, sizeof b, 1023);
    assert_string_equal(b, "0.999 KiB");
    cli_bytes(b, sizeof b, 1048575);
    assert_string_equal(b, "1 MiB");
    cli_bytes(b, sizeof b, 40.0 * 1024 * 1024 * 1024);
    assert_string_equal(b, "40 GiB");
}

/* st_cpu_count follows the affinity mask: pinned to one CPU it is 1, and
 * unpinned it is between 1 and the machine's CPUs. */
static void test_cpu_count(void **state)
{
    (void)state;
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    int n = st_cpu_count();
    long machine = sysconf(_SC_NPROCESSORS_CONF);
    assert_true(n >= 1 && (machine < 1 || n <= machine));
    assert_int_equal(n, CPU_COUNT(&all));
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    int pinned = st_cpu_count();
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    assert_int_equal(pinned, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ridge_exact_line),
        cmocka_unit_test(test_ridge_closed_form),
        cmocka_unit_test(test_ridge_errors),
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_json_numbers_shortest),
        cmocka_unit_test(test_jsonl),
        cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_cpu_count),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
