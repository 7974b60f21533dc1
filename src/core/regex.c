/* PCRE2 wrapper: every --filter and the TUI's `/` search go through here. */
#include "config.h"
#include "core/core.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

struct st_regex {
    pcre2_code *code;
};

int st_regex_compile(st_regex **out, const char *pattern, int caseless, st_error *err)
{
    int errcode;
    PCRE2_SIZE erroff;
    st_regex *re = calloc(1, sizeof *re);
    if (!re)
        return st_error_set(err, ST_ENOMEM, "out of memory compiling regex");
    re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                             (caseless ? PCRE2_CASELESS : 0) | PCRE2_UTF, &errcode,
                             &erroff, NULL);
    if (!re->code) {
        PCRE2_UCHAR reason[256];
        pcre2_get_error_message(errcode, reason, sizeof reason);
        free(re);
        return st_error_set(err, ST_EINVAL,
                            "bad regular expression '%s' at offset %zu: %s", pattern,
                            (size_t)erroff, (const char *)reason);
    }
    *out = re;
    return 0;
}

/* Each call uses its own match data, so one compiled pattern may be shared
 * by threads (the sweep pool filters in parallel). */
int st_regex_groups(const st_regex *re, const char *subject, long long *starts, long long *ends,
                    int n)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
    if (!md)
        return -1;
    int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, strlen(subject), 0, 0, md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) {
        pcre2_match_data_free(md);
        return 0;
    }
    if (rc < 0) {
        pcre2_match_data_free(md);
        return -1;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    int got = (int)pcre2_get_ovector_count(md);
    for (int i = 0; i < n; i++) {
        if (i < got && ov[2 * i] != PCRE2_UNSET) {
            starts[i] = (long long)ov[2 * i];
            ends[i] = (long long)ov[2 * i + 1];
        } else {
            starts[i] = ends[i] = -1;
        }
    }
    pcre2_match_data_free(md);
    return 1;
}

int st_regex_match(const st_regex *re, const char *subject)
{
    long long s, e;
    return st_regex_groups(re, subject, &s, &e, 1) == 1;
}

void st_regex_free(st_regex *re)
{
    if (!re)
        return;
    pcre2_code_free(re->code);
    free(re);
}
