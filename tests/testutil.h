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
