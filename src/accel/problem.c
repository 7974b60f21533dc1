/* Operators of a workload as accelerator loop-nest problems. */
#include "config.h"
#include "accel/accel.h"

#include <stdio.h>
#include <string.h>

int st_aprob_from_op(const st_op *op, st_aprob *p, st_error *err)
{
    st_aprob_init(p, op->name);
    switch (op->kind) {
    case ST_OP_GEMM:
        /* activations (batch*m x k) x weights (k x n): weights shared over N */
        p->d[ST_AD_N] = op->batch > 0 ? op->batch : 1;
        p->d[ST_AD_P] = op->m;
        p->d[ST_AD_C] = op->k;
        p->d[ST_AD_M] = op->n;
        break;
    case ST_OP_BMM:
    case ST_OP_MOE_EXPERTS:
        /* independent GEMMs (attention heads, experts): G indexes all three */
        p->d[ST_AD_G] = op->batch > 0 ? op->batch : 1;
        p->d[ST_AD_P] = op->m;
        p->d[ST_AD_C] = op->k;
        p->d[ST_AD_M] = op->n;
        break;
    case ST_OP_CONV: {
        long long g = op->groups > 0 ? op->groups : 1;
        p->d[ST_AD_G] = g;
        p->d[ST_AD_N] = op->batch > 0 ? op->batch : 1;
        p->d[ST_AD_C] = op->c / g;
        p->d[ST_AD_M] = op->k_out / g;
        /* Timeloop's convention: P and R run along the width, Q and S along
         * the height */
        p->d[ST_AD_P] = op->q;
        p->d[ST_AD_Q] = op->p;
        p->d[ST_AD_R] = op->s > 0 ? op->s : 1;
        p->d[ST_AD_S] = op->r > 0 ? op->r : 1;
        p->wstride = p->hstride = op->stride > 0 ? (int)op->stride : 1;
        break;
    }
    default:
        return st_error_set(err, ST_EINVAL, "operator %s (%s) is not a loop nest of "
                                            "multiply-accumulates; only GEMM, batched GEMM, "
                                            "grouped experts and convolutions map onto the array",
                            op->name, st_op_kind_name(op->kind));
    }
    for (int d = 0; d < ST_AD_COUNT; d++)
        if (p->d[d] < 1)
            return st_error_set(err, ST_EINVAL, "operator %s: dimension %c is %lld", op->name,
                                ST_AD_LETTERS[d], p->d[d]);
    return 0;
}

int st_aprob_equal(const st_aprob *a, const st_aprob *b)
{
    return memcmp(a->d, b->d, sizeof a->d) == 0 && a->wstride == b->wstride && a->hstride == b->hstride &&
           a->wdil == b->wdil && a->hdil == b->hdil;
}
