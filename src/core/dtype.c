/* Numeric formats and their storage sizes. */
#include "config.h"
#include "core/core.h"

#include <strings.h>

static const char *const dtype_names[ST_DTYPE_COUNT] = {
    "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4",
};

/* tf32 is a compute mode over fp32 storage; int4 packs two values a byte. */
static const double dtype_bytes[ST_DTYPE_COUNT] = {4, 4, 2, 2, 1, 1, 0.5};

const char *st_dtype_name(st_dtype t)
{
    return (t >= 0 && t < ST_DTYPE_COUNT) ? dtype_names[t] : "?";
}

int st_dtype_parse(const char *s, st_dtype *out)
{
    for (int i = 0; i < ST_DTYPE_COUNT; i++)
        if (strcasecmp(s, dtype_names[i]) == 0) {
            *out = (st_dtype)i;
            return 0;
        }
    return ST_EINVAL;
}

double st_dtype_bytes(st_dtype t)
{
    return (t >= 0 && t < ST_DTYPE_COUNT) ? dtype_bytes[t] : 0;
}

const char *st_dtype_choices(void)
{
    return "fp32, tf32, fp16, bf16, fp8, int8, int4";
}
