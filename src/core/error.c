/* Error sentences: one buffer per call chain, owned by the caller. */
#include "config.h"
#include "core/core.h"

#include <stdarg.h>
#include <string.h>

int st_error_set(st_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int st_error_prefix(st_error *err, const char *fmt, ...)
{
    char prefix[512], old[sizeof err->msg];
    va_list ap;
    if (!err)
        return ST_EINVAL;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
    return err->code;
}

void st_error_clear(st_error *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}
