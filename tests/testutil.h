/* Shared by the cmocka tests: fixture paths and the shared-data location. */
#ifndef STRATA_TESTUTIL_H
#define STRATA_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

/* tests/data/REL under $STRATA_TESTDATA (set by make check). */
static inline const char *testdata(const char *rel)
{
    static char buf[1024];
    const char *root = getenv("STRATA_TESTDATA");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : "tests/data", rel);
    return buf;
}

/* The error message names tests/data/REL at WHERE first (":LINE:COL:" or
 * ":LINE:") and says NEEDLE somewhere after. */
static inline void assert_error_at(const char *msg, const char *rel, const char *where, const char *needle)
{
    char want[1200];
    snprintf(want, sizeof want, "%s%s", testdata(rel), where);
    if (strncmp(msg, want, strlen(want)) != 0 || !strstr(msg, needle))
        fail_msg("%s: wanted '%s' and '%s', got: %s", rel, want, needle, msg);
}

/* ../shared/data, or NULL (tests that need it then skip). */
static inline const char *shared_data(void)
{
    static char buf[1024];
    struct stat st;
    const char *root = getenv("STRATA_SHARED");
    snprintf(buf, sizeof buf, "%s", root ? root : "../shared/data");
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return buf;
}

/* Relative difference |a - b| / |b|. */
static inline double rel_diff(double a, double b)
{
    double d = a - b;
    if (d < 0)
        d = -d;
    return b != 0 ? d / (b < 0 ? -b : b) : d;
}

#endif
