/* strata validate vllm (see validate_vllm.c). */
#ifndef STRATA_CLI_VALIDATE_VLLM_H
#define STRATA_CLI_VALIDATE_VLLM_H

#include <stdio.h>

#include "core/core.h"

int cli_validate_vllm(const char *dir, int json, const char *coef, FILE *out, st_error *err);

#endif
