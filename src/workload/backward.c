/*
 * Backward operators of a training step, derived from the forward list.
 *
 * For y = x W (x: m x k, W: k x n) autograd runs dgrad dx = dy W^T
 * (m x n . n x k) and wgrad dW = x^T dy (k x m . m x n): twice the forward
 * FLOPs. Batched matmuls of two activations get both input gradients;
 * convolutions a data and a weight gradient of the forward's FLOPs; fused
 * attention the FlashAttention-2 backward; vector ops one gradient kernel
 * each. A residual add passes its gradient through and launches nothing.
 * A GEMM with a bias sums dy over its rows for the bias gradient (a
 * reduction kernel of its own: PyTorch's addmm backward). With
 * accumulation, each parameter gradient is then added into the existing
 * .grad, one kernel per parameter tensor (autograd's AccumulateGrad).
 * Backward ops run in reverse order of the forward ones.
 */
#include "config.h"
#include "workload/workload.h"

#include <stddef.h>
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

/* A vector kernel of the backward pass derived from f: name f.suffix, rows x
 * cols, reading `in` and writing `out` elements of f's dtype. */
static int push_vec(st_oplist *l, const st_op *f, const char *suffix, double rows, double cols, double in,
                    double out, st_error *err)
{
    st_op a = *f;
    memset(&a.batch, 0, sizeof a - offsetof(st_op, batch));
    named(&a, f, suffix);
    a.kind = ST_OP_ELEMENTWISE;
    a.pass = ST_PASS_BWD;
    a.grad = ST_GRAD_WEIGHT;
    a.rows = (long long)rows;
    a.cols = (long long)cols;
    a.arity = 1;
    a.ew_flops = 1;
    /* gradients are kept in 16 bits or wider: an FP8 or INT8 GEMM's (the
     * FP8 recipe's block GEMMs) come out in BF16 */
    if (st_dtype_bytes(a.dtype) < 2)
        a.dtype = ST_BF16;
    double e = st_dtype_bytes(a.dtype);
    a.flops = in;
    a.bytes_read = in * e;
    a.bytes_written = out * e;
    return st_oplist_push(l, &a, err);
}

/* A gradient of `elems` elements added into the .grad a previous backward
 * left (autograd's AccumulateGrad): two reads and a write an element. */
static int push_accum(st_oplist *l, const st_op *f, const char *suffix, double elems, st_error *err)
{
    return push_vec(l, f, suffix, 1, elems, 2 * elems, elems, err);
}

/* A GEMM's or convolution's parameter gradients beyond its weight gradient:
 * the bias gradient (a sum of dy, dy elements, over its rows or pixels into
 * bias elements; 0: no bias) and, with accumulation, the adds of the weight's
 * (weight elements) and the bias's gradients into .grad. */
static int param_grads(st_oplist *l, const st_op *f, int accumulate, double weight, double bias, double dy,
                       st_error *err)
{
    int rc = 0;
    if (bias > 0)
        rc = push_vec(l, f, "bgrad", 1, bias, dy, bias, err);
    if (rc == 0 && accumulate)
        rc = push_accum(l, f, "wgrad.accum", weight, err);
    if (rc == 0 && accumulate && bias > 0)
        rc = push_accum(l, f, "bgrad.accum", bias, err);
    return rc;
}

int st_ops_add_backward(st_oplist *l, size_t n_fwd, int accumulate, st_error *err)
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
            if (rc == 0) {
                /* batch: a grouped expert GEMM's experts, each its own weight and bias */
                double nb = f.batch > 0 ? (double)f.batch : 1;
                rc = param_grads(l, &f, accumulate, nb * (double)f.k * (double)f.n,
                                 f.bias ? nb * (double)f.n : 0, nb * (double)f.m * (double)f.n, err);
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
            if (rc == 0) {
                double ch = (double)f.k_out;
                double w = ch * (double)f.c / (double)(f.groups > 0 ? f.groups : 1) * (double)f.r * (double)f.s;
                rc = param_grads(l, &f, accumulate, w, f.bias ? ch : 0,
                                 (double)(f.batch > 0 ? f.batch : 1) * ch * (double)f.p * (double)f.q, err);
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
                /* gamma (and LayerNorm's beta), one add each */
                for (int j = 0; rc == 0 && accumulate && j < (f.kind == ST_OP_LAYERNORM ? 2 : 1); j++)
                    rc = push_accum(l, &f, j ? "beta.accum" : "gamma.accum", (double)f.cols, err);
            }
            /* a batch or group norm's scale and shift, per channel */
            if (rc == 0 && accumulate && (f.kind == ST_OP_BATCHNORM || f.kind == ST_OP_GROUPNORM))
                for (int j = 0; rc == 0 && j < 2; j++)
                    rc = push_accum(l, &f, j ? "beta.accum" : "gamma.accum", (double)f.c, err);
            /* the table's gradient (vocab or positions x width) */
            if (rc == 0 && accumulate && f.kind == ST_OP_EMBEDDING && f.n > 0)
                rc = push_accum(l, &f, "accum", (double)f.n * (double)f.cols, err);
            break;
        }
        if (rc)
            return rc;
    }
    return 0;
}
