#include "config.h"
#include "calib/validate.h"
int st_validate_models(const char *dir, const st_gpu_coef *c, st_val_result *out, st_error *err);
int st_validate_models(const char *dir, const st_gpu_coef *c, st_val_result *out, st_error *err)
{
    (void)dir; (void)c; (void)out; (void)err;
    return 0;
}
