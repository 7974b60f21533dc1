/*
 * compose: an operator list -> one step's timeline on one GPU, with error bars.
 *
 * Every operator becomes one kernel (gpu/gpu.h). The host issues operators
 * one after another, each costing its framework dispatch time; the GPU runs
 * a kernel when both the GPU is free and the host has issued it:
 *     host_t += dispatch;  start = max(gpu_t, host_t);  gpu_t = start + kernel
 * so short kernels leave the GPU idle, waiting on the host (the reason
 * small-batch steps are slower than the sum of their kernels). The step ends
 * with a synchronisation.
 *
 * Modes: eager (each op dispatched by the framework) or fused (a compiled
 * graph: dispatch is the bare launch cost, and elementwise ops that follow
 * another op in the same layer run in that op's epilogue: only the extra
 * operands they read cost time). Training lists (forward, backward, the
 * optimizer) come from the workload layer; `recompute` replays each block's
 * forward before its backward (full activation recomputation).
 *
 * Error bars: each kernel carries a log-space spread sigma_i from its class's
 * calibration residuals. With t_i its time, the step's spread is
 *   correlated   (default): sd = sum_i t_i sigma_i
 *   uncorrelated:           sd = sqrt(sum_i (t_i sigma_i)^2)
 * and the 90% band is total * exp(+-1.645 sd / total). The default is the
 * correlated band: the calibration residuals of one op class on one device
 * share a sign across sizes, so kernel errors within a step do not cancel.
 * A layer's share of the error is its part of sum t_i sigma_i.
 */
#ifndef STRATA_COMPOSE_H
#define STRATA_COMPOSE_H

#include "gpu/edge.h"
#include "gpu/gpu.h"
#include "workload/workload.h"

typedef struct st_compose_opts {
    int fused;          /* compiled mode: launch-only dispatch, elementwise fused */
    int recompute;      /* train: full activation recomputation */
    double dispatch_scale; /* multiplies the coefficient table's dispatch (default 1) */
    int torch_ver;      /* the PyTorch release (st_kernel.torch_ver; 0: the table's, 2.1) */
    int sustained;      /* a training step at the power limit (st_kernel.sustained) */
    int fused_router;   /* MoE routers as one fused kernel (st_kernel.router_fused: vLLM's
                         * topk_softmax); 0: PyTorch's eager softmax + torch.topk */
    /* An edge device (NULL: the GPU): operators priced by gpu/edge.h with
     * edge_coef, TFLite's folds applied. On a mobile CPU the interpreter's
     * per-operator cost and the kernel share the core (no overlap); on a
     * mobile GPU the host's enqueue overlaps the GPU like a GPU's dispatch.
     * The st_gpu passed alongside is st_edge_gpu_view's. */
    const st_edge *edge;
    const st_edge_coef *edge_coef;
} st_compose_opts;

void st_compose_opts_default(st_compose_opts *o);

#define ST_COMPOSE_MAX_LAYERS 64

typedef struct st_layer_time {
    char layer[48];
    double time_s;      /* wall time the layer adds to the step (idle included) */
    double kernel_s;    /* sum of its kernels */
    double sd_s;        /* sum t_i sigma_i */
    double err_share;   /* its share of the step's (correlated) error */
    long long kernels;  /* launches (repeats counted) */
} st_layer_time;

typedef struct st_step {
    double total_s;
    double lo_s, hi_s;          /* 90% band, correlated (default) */
    double lo_unc_s, hi_unc_s;  /* 90% band, uncorrelated */
    double floor_s;             /* the kernels' physical floors added up (st_kernel_est.floor_s): neither band's low end is below it */
    double kernel_s;            /* GPU busy */
    double host_s;              /* host dispatch total */
    double idle_s;              /* GPU waiting on the host */
    double sync_s;              /* the host seeing the last kernel finish: total = kernel + idle + sync */
    double pass_s[3];           /* wall time by pass (st_pass: forward, backward, optimizer), each
                                 * kernel with the idle time before it; a recompute replay counts
                                 * in the backward it serves: total = sum + sync */
    double flops, bytes;
    long long kernels;
    size_t n_layers;
    st_layer_time layers[ST_COMPOSE_MAX_LAYERS];
    int layers_truncated;       /* more distinct layer names than fit ("other") */
} st_step;

/* Map one operator to the kernel the GPU layer estimates. */
void st_op_to_kernel(const st_op *op, st_kernel *k);

int st_compose(const st_gpu *g, const st_gpu_coef *c, const st_oplist *ops, const st_compose_opts *o,
               st_step *out, st_error *err);

/* One operator as st_compose prices it: its kernel time, host cost and
 * spread per run, and its runs in the step (repeat, and the forward replay
 * under recompute), so that sum(gpu_s x runs) over the list is
 * st_step.kernel_s. none: not run at all (folded by an edge device's
 * converter); fused: runs in the previous kernel's epilogue (compiled
 * mode), its time counted, no launch of its own (st_step.kernels counts
 * launches). est: the GPU layer's estimate (class, bound, tile) when
 * has_est. */
typedef struct st_op_time {
    double gpu_s, host_s, sd_s;
    long long runs;
    int none, fused;
    int has_est;
    st_kernel_est est;
} st_op_time;
int st_compose_op_time(const st_gpu *g, const st_gpu_coef *c, const st_oplist *ops, size_t i,
                       const st_compose_opts *o, st_op_time *out, st_error *err);

#endif
