/* PCRE2 wrapper: every --filter and the TUI's `/` search go through here. */
#include "config.h"
#include "core/core.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

struct st_regex {
    pcre2_code *code;
    pcre2_match_data *md;
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
    re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
    if (!re->md) {
        pcre2_code_free(re->code);
        free(re);
        return st_error_set(err, ST_ENOMEM, "out of memory compiling regex");
    }
    *out = re;
    return 0;
}

int st_regex_match(const st_regex *re, const char *subject)
{
    int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, strlen(subject), 0, 0, re->md,
                         NULL);
    return rc >= 0;
}

void st_regex_free(st_regex *re)
{
    if (!re)
        return;
    pcre2_match_data_free(re->md);
    pcre2_code_free(re->code);
    free(re);
}
