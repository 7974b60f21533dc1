/*
 * Backward operators of a training step, derived from the forward list.
 *
 * For y = x W (x: m x k, W: k x n) autograd runs dgrad dx = dy W^T
 * (m x n . n x k) and wgrad dW = x^T dy (k x m . m x n): twice the forward
 * FLOPs. Batched matmuls of two activations get both input gradients;
 * convolutions a data and a weight gradient of the forward's FLOPs; fused
 * attention the FlashAttention-2 backward; vector ops one gradient kernel
 * each. A residual add passes its gradient through and launches nothing.
 * Backward ops run in reverse order of the forward ones.
 */
#include "config.h"
#include "workload/workload.h"

#include <string.h>

static void named(st_op *op, const st_op *fwd, const char *suffix)
{
    snprintf(op->name, sizeof op->name, "%.50s.%s", fwd->name, suffix);
}

static int push_grad(st_oplist *l, st_op *op, st_error *err)
{
    op->pass = ST_PASS_BWD;
    st_op_cost(op);
    return st_oplist_push(l, op, err);
}

int st_ops_add_backward(st_oplist *l, size_t n_fwd, st_error *err)
{
    for (size_t i = n_fwd; i-- > 0;) {
        const st_op f = l->ops[i]; /* copy: pushing may move the array */
        st_op a = f, b = f;
        int rc = 0;
        switch (f.kind) {
        case ST_OP_GEMM:
        case ST_OP_MOE_EXPERTS:
            if (!f.no_dgrad) {
                named(&a, &f, "dgrad");
                a.grad = ST_GRAD_DATA;
                a.k = f.n;
                a.n = f.k;
                rc = push_grad(l, &a, err);
            }
            if (rc == 0) {
                named(&b, &f, "wgrad");
                b.grad = ST_GRAD_WEIGHT;
                b.m = f.k;
                b.k = f.m;
                b.n = f.n;
                rc = push_grad(l, &b, err);
            }
            break;
        case ST_OP_BMM: /* c = a b: da = dc b^T, db = a^T dc */
            named(&a, &f, "grad_a");
            a.grad = ST_GRAD_DATA;
            a.k = f.n;
            a.n = f.k;
            rc = push_grad(l, &a, err);
            if (rc == 0) {
                named(&b, &f, "grad_b");
                b.grad = ST_GRAD_DATA;
                b.m = f.k;
                b.k = f.m;
                b.n = f.n;
                rc = push_grad(l, &b, err);
            }
            break;
        case ST_OP_CONV:
            if (!f.no_dgrad) {
                named(&a, &f, "dgrad");
                a.grad = ST_GRAD_DATA;
                rc = push_grad(l, &a, err);
            }
            if (rc == 0) {
                named(&b, &f, "wgrad");
                b.grad = ST_GRAD_WEIGHT;
                rc = push_grad(l, &b, err);
            }
            break;
        case ST_OP_ELEMENTWISE:
            if (f.passthrough) /* an add hands dy to both inputs; see st_op */
                break;
            if (f.grad_unary + f.grad_binary > 0) {
                /* a composition's backward: unary kernels read dy and write
                 * one gradient, binary ones also read a saved tensor */
                for (int j = 0; j < f.grad_unary + f.grad_binary && rc == 0; j++) {
                    a = f;
                    snprintf(a.name, sizeof a.name, "%.50s.grad%d", f.name, j + 1);
                    a.grad = ST_GRAD_DATA;
                    a.arity = 1;
                    a.grad_no_input = j < f.grad_unary;
                    a.ew_flops = 1;
                    rc = push_grad(l, &a, err);
                }
                break;
            }
            named(&a, &f, "grad");
            a.grad = ST_GRAD_DATA;
            rc = push_grad(l, &a, err);
            break;
        case ST_OP_OPTIMIZER:
            break;
        default:
            named(&a, &f, "grad");
            a.grad = f.kind == ST_OP_EMBEDDING ? ST_GRAD_WEIGHT : ST_GRAD_DATA;
            rc = push_grad(l, &a, err);
            /* a layer or RMS norm: one autograd call, two kernels (PyTorch's
             * layer_norm_kernel.cu, apex's fused RMSNorm): dx per row, then
             * the parameter gradients, a reduction over the rows that reads
             * dy and x again */
            if (rc == 0 && (f.kind == ST_OP_LAYERNORM || f.kind == ST_OP_RMSNORM)) {
                named(&b, &f, "grad_params");
                b.grad = ST_GRAD_WEIGHT;
                b.launch_only = 1;
                rc = push_grad(l, &b, err);
            }
            break;
        }
        if (rc)
            return rc;
    }
    return 0;
}
