/* Step timeline: host dispatch against GPU time, per-layer breakdown, error bands. */
#include "config.h"
#include "compose/compose.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void st_compose_opts_default(st_compose_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dispatch_scale = 1.0;
}

/* An op priced as a stream of the bytes and ALU work it counts (the
 * elementwise kernel model). */
static void stream_kernel(const st_op *op, int n_in, st_dispatch d, st_kernel *k)
{
    k->op = ST_KOP_ELEMENTWISE;
    k->rows = op->rows > 0 ? op->rows : 1;
    k->cols = op->cols > 0 ? op->cols : 1;
    k->n_in = n_in;
    k->n_out = 1;
    double elems = (double)k->rows * (double)k->cols;
    k->flops_per_elem = elems > 0 ? op->flops / elems : 0;
    k->bytes_total = op->bytes_read + op->bytes_written;
    k->dispatch = d;
    /* PyTorch's non-vectorized kernel: a warp-wide load per operand and a
     * store per 32 elements (the broadcast operand's loads hit L2, still a
     * request past L1), in blocks of 128 threads of 2 elements
     * (elementwise_kernel<128, 2> in data/measured/h100's profiles) */
    if (op->scalar_loads > 0) {
        k->mem_requests = ceil(elems / 32.0) * (op->scalar_loads + 1);
        k->lsu_blocks = ceil(elems / 256.0);
    }
}

void st_op_to_kernel(const st_op *op, st_kernel *k)
{
    memset(k, 0, sizeof *k);
    k->dtype = op->dtype;
    k->b = op->batch > 0 ? op->batch : 1;
    /* in a model step every operand comes from DRAM (see st_kernel.cold) */
    k->cold = 1;
    switch (op->kind) {
    case ST_OP_GEMM:
        k->op = ST_KOP_GEMM;
        k->m = op->m, k->n = op->n, k->k = op->k;
        k->weight_only_int4 = op->weight_int4;
        k->dispatch = ST_DISP_LINEAR;
        break;
    case ST_OP_BMM:
        k->op = ST_KOP_BMM;
        k->m = op->m, k->n = op->n, k->k = op->k;
        k->dispatch = ST_DISP_BMM;
        break;
    case ST_OP_MOE_EXPERTS:
        k->op = ST_KOP_GROUPED;
        k->m = op->m, k->n = op->n, k->k = op->k;
        k->weight_only_int4 = op->weight_int4;
        k->dispatch = ST_DISP_LINEAR;
        break;
    case ST_OP_CONV: {
        long long g = op->groups > 0 ? op->groups : 1;
        k->op = ST_KOP_CONV;
        k->b = 1;
        k->groups = g;
        k->m = op->batch * op->p * op->q;
        k->n = op->k_out / g;
        k->k = op->c / g * op->r * op->s;
        k->filter = op->r == op->s ? op->r : 0; /* a non-square filter: no fast algorithm assumed */
        k->stride = op->stride > 0 ? op->stride : 1;
        if (k->n < 1)
            k->n = 1;
        if (k->k < 1)
            k->k = 1;
        k->dispatch = ST_DISP_CONV;
        break;
    }
    case ST_OP_ATTENTION:
        k->op = ST_KOP_FLASH;
        k->heads = op->heads, k->kv_heads = op->kv_heads, k->q_len = op->q_len;
        k->kv_len = op->kv_len, k->head_dim = op->head_dim, k->causal = op->causal;
        k->backward = op->pass != ST_PASS_FWD;
        k->fa3 = op->fa3;
        k->dispatch = ST_DISP_OTHER;
        break;
    case ST_OP_SOFTMAX:
        k->op = ST_KOP_SOFTMAX;
        k->rows = op->rows, k->cols = op->cols;
        k->dispatch = ST_DISP_SOFTMAX;
        /* the gradient y * (dy - sum(dy * y)) reads the saved output and dy */
        if (op->pass != ST_PASS_FWD)
            k->n_in = 2;
        break;
    case ST_OP_MOE_ROUTER:
        k->rows = op->rows, k->cols = op->cols;
        k->dispatch = ST_DISP_SOFTMAX;
        if (op->pass != ST_PASS_FWD) {
            /* the selection has no gradient of its own: torch.topk's
             * backward zero-fills an FP32 gradient of all the experts and
             * scatters the kept weights' into it, then the FP32 softmax's
             * backward reads y and dy and writes dx, and BF16 logits get
             * dx cast back (read 4, write 2 bytes); priced by those bytes
             * (the scatter's few are left out) */
            double el = (double)op->rows * (double)op->cols;
            k->op = ST_KOP_SOFTMAX;
            k->dtype = ST_FP32;
            k->n_in = 2;
            k->bytes_total = el * (4 + 3 * 4) + (op->dtype == ST_BF16 ? el * (4 + 2) : 0);
            break;
        }
        k->op = ST_KOP_TOPK;
        k->k = op->k;
        break;
    case ST_OP_LAYERNORM:
    case ST_OP_RMSNORM:
    case ST_OP_GROUPNORM:
    case ST_OP_BATCHNORM:
        if (op->pass != ST_PASS_FWD && op->grad == ST_GRAD_WEIGHT) {
            /* the parameter gradients: a reduction over the rows that
             * streams dy and x once (GammaBetaBackward) */
            stream_kernel(op, 2, ST_DISP_NORM, k);
            break;
        }
        k->op = ST_KOP_NORM;
        k->rows = op->rows, k->cols = op->cols;
        k->dispatch = ST_DISP_NORM;
        /* batch norm in a forward pass scales and shifts with running
         * statistics: RMSNorm's kind of work, not Welford's */
        k->rms = op->kind == ST_OP_RMSNORM || (op->kind == ST_OP_BATCHNORM && op->pass == ST_PASS_FWD);
        if (op->kind == ST_OP_GROUPNORM || op->kind == ST_OP_BATCHNORM || op->pass != ST_PASS_FWD)
            k->bytes_total = op->bytes_read + op->bytes_written;
        break;
    case ST_OP_EMBEDDING:
        k->op = ST_KOP_EMBEDDING;
        k->rows = op->rows, k->cols = op->cols;
        k->n_in = 1, k->n_out = 1;
        k->dispatch = ST_DISP_OTHER;
        /* the forward gather is index_select; the backward scatter-add
         * (embedding_dense_backward) is priced by its bytes */
        if (op->pass == ST_PASS_FWD)
            k->index_elems = (double)op->rows * (double)op->cols;
        break;
    default: /* elementwise, rope, pool, optimizer: bytes and ALU work as counted */
        stream_kernel(op, op->arity > 0 ? op->arity : 1,
                      op->kind == ST_OP_OPTIMIZER ? ST_DISP_OTHER : ST_DISP_ELEMENTWISE, k);
        break;
    }
}

/* Compiled mode fuses the model's elementwise ops into their producers;
 * the optimizer step is not part of the compiled model (torch.compile of
 * the model leaves optimizer.step() eager), so its passes stay apart. */
static int is_fusible(const st_op *op)
{
    return (op->kind == ST_OP_ELEMENTWISE || op->kind == ST_OP_ROPE) && op->pass != ST_PASS_OPT;
}

/* Compiled mode follows Inductor's default schedule (PyTorch 2.1 to 2.11,
 * and vLLM's compiled graphs): a library matmul (cuBLAS GEMM, cuDNN conv,
 * SDPA's flash kernel, a grouped expert GEMM) is an extern call, so the
 * pointwise ops after it cannot run in its epilogue. They form a generated
 * kernel of their own that reads the extern's output: on an H100 BERT-Large's
 * bias + GELU after the up projection is one 92 us Triton kernel a layer,
 * as long as eager's GELU alone (data/measured/h100/whole-models,
 * kernels-fusion.csv). A chain of them that reaches a norm or a softmax is
 * that reduction's prologue instead (bias + residual + LayerNorm, scale +
 * mask + softmax: one kernel each there), priced as an epilogue; at the end
 * of a repeated block the chain meets the next repeat's first op. A layout
 * copy (a head-major split or merge made contiguous) reads a tensor of its
 * own: always a kernel (BERT-Large's four a layer, 21 us each there). */
static int is_extern(const st_op *op)
{
    return op->kind == ST_OP_GEMM || op->kind == ST_OP_BMM || op->kind == ST_OP_CONV ||
           op->kind == ST_OP_ATTENTION || op->kind == ST_OP_MOE_EXPERTS;
}

static int is_reduction(const st_op *op)
{
    return op->kind == ST_OP_SOFTMAX || op->kind == ST_OP_LAYERNORM || op->kind == ST_OP_RMSNORM ||
           op->kind == ST_OP_GROUPNORM || op->kind == ST_OP_BATCHNORM;
}

/* A parameter gradient's side kernel (a bias gradient's sum over the rows,
 * an add into .grad): it reads tensors of its own, so it is a kernel of its
 * own and no elementwise op after it consumes its output. */
static int is_side(const st_op *op)
{
    return op->kind == ST_OP_ELEMENTWISE && op->grad == ST_GRAD_WEIGHT;
}

static int same_run(const st_op *a, const st_op *b)
{
    return a->pass == b->pass && strcmp(a->layer, b->layer) == 0;
}

/* In compiled mode, op i (fusible, after an op of its layer and pass) runs
 * as a kernel of its own rather than in its producer's epilogue or its
 * consumer's prologue. */
static int fused_standalone(const st_oplist *ops, size_t i)
{
    assert(i > 0 && i < ops->n);
    const st_op *op = &ops->ops[i];
    if (op->layout_copy || is_side(op))
        return 1;
    /* the producer: the op before, past parameter-gradient side kernels */
    size_t p = i - 1;
    while (p > 0 && is_side(&ops->ops[p]) && same_run(&ops->ops[p - 1], op))
        p--;
    if (is_side(&ops->ops[p]))
        return 1;
    if (!is_extern(&ops->ops[p]))
        return 0;
    for (size_t j = i + 1;; j++) {
        const st_op *n = j < ops->n ? &ops->ops[j] : NULL;
        if (!n || !same_run(n, op)) {
            /* the layer's end: a repeated block's next repeat starts with
             * the first op of its run; otherwise the next layer's first op
             * follows */
            size_t first = i;
            while (op->repeat > 1 && first > 0 && same_run(&ops->ops[first - 1], op))
                first--;
            const st_op *next = op->repeat > 1 ? &ops->ops[first] : (n && n->pass == op->pass ? n : NULL);
            return !(next && is_reduction(next));
        }
        if (is_side(n))
            continue;
        if (is_reduction(n))
            return 0;
        if (!is_fusible(n) || n->layout_copy)
            return 1;
    }
}

typedef struct op_cost {
    double gpu_s, host_s, sd_s;
    double floor_s; /* the kernel's physical floor (st_kernel_est.floor_s) */
    int none;  /* folded into the op before it: no kernel */
    int fused; /* runs in the previous kernel's epilogue: time, no launch */
} op_cost;

static st_layer_time *layer_of(st_step *s, const char *name)
{
    for (size_t i = 0; i < s->n_layers; i++)
        if (strcmp(s->layers[i].layer, name) == 0)
            return &s->layers[i];
    if (s->n_layers == ST_COMPOSE_MAX_LAYERS) {
        s->layers_truncated = 1;
        return &s->layers[ST_COMPOSE_MAX_LAYERS - 1];
    }
    st_layer_time *l = &s->layers[s->n_layers++];
    memset(l, 0, sizeof *l);
    snprintf(l->layer, sizeof l->layer, "%s", name);
    return l;
}

/* Cost of one op (one call). */
static int cost_op(const st_gpu *g, const st_gpu_coef *c, const st_oplist *ops, size_t i,
                   const st_compose_opts *o, op_cost *out, double *flops, double *bytes,
                   st_kernel_est *est, st_error *err)
{
    if (est)
        memset(est, 0, sizeof *est);
    const st_op *op = &ops->ops[i];
    st_kernel k;
    st_op_to_kernel(op, &k);
    k.torch_ver = o->torch_ver;
    k.sustained = o->sustained;
    k.router_fused = o->fused_router;
    *flops = op->flops;
    *bytes = op->bytes_read + op->bytes_written;
    if (o->edge) {
        memset(out, 0, sizeof *out);
        if (st_edge_folds(ops, i)) {
            out->none = 1;
            return 0;
        }
        st_edge_est e;
        /* LPDDR is priced as the GPU table prices non-HBM DRAM */
        int rc = st_edge_op_time(o->edge, o->edge_coef, st_gpu_coef_dram_other(c), op, &e, err);
        if (rc)
            return rc;
        if (est)
            est->bound = e.bound;
        double disp = o->edge->dispatch_overhead_s * o->dispatch_scale;
        if (o->edge->cls == ST_EDGE_MOBILE_CPU) {
            out->gpu_s = e.time_s + disp; /* one core runs the interpreter and the kernel */
        } else {
            out->gpu_s = e.time_s;
            out->host_s = disp;
        }
        out->sd_s = e.time_s * e.sigma;
        return 0;
    }
    /* compiled: Inductor's layout optimisation runs a conv-heavy graph
     * channels last (torch._inductor.config.layout_optimization, on by
     * default), so cuDNN's tensor-core convs skip the NCHW transposes */
    if (o->fused && k.op == ST_KOP_CONV)
        k.channels_last = 1;
    if (o->fused && is_fusible(op) && i > 0 && strcmp(ops->ops[i - 1].layer, op->layer) == 0 &&
        ops->ops[i - 1].pass == op->pass && !fused_standalone(ops, i)) {
        /* Runs in the previous kernel's epilogue: its main input arrives in
         * registers and its output replaces the previous op's, so only the
         * other operands it reads cost (none for a scale or a mask select).
         * No launch of its own: keep only the memory part. */
        double es = st_dtype_bytes(op->dtype);
        double extra = op->bytes_read - es * (double)k.rows * (double)k.cols;
        memset(out, 0, sizeof *out);
        out->fused = 1;
        if (est) {
            est->cls = st_kernel_class(g, &k);
            est->bound = "epilogue";
        }
        if (extra <= 0)
            return 0;
        k.bytes_total = extra;
        st_kernel_est e;
        int rc = st_kernel_estimate(g, c, &k, NULL, 0, &e, err);
        if (rc)
            return rc;
        if (est) {
            *est = e;
            est->bound = "epilogue";
        }
        out->gpu_s = e.memory_s;
        out->sd_s = out->gpu_s * e.sigma;
        return 0;
    }
    st_kernel_est e;
    int rc = st_kernel_estimate(g, c, &k, NULL, 0, &e, err);
    if (rc)
        return rc;
    if (est)
        *est = e;
    out->gpu_s = e.gpu_s;
    out->floor_s = e.floor_s;
    /* eager: the framework's dispatch, and never less than the launch itself (the
     * calibration data hold no dispatch cost for flash attention, the
     * embedding gather or the optimizer: class "other") */
    double disp = e.dispatch_s * o->dispatch_scale;
    out->host_s = o->fused || op->launch_only || disp < g->launch_overhead_s ? g->launch_overhead_s : disp;
    out->sd_s = out->gpu_s * e.sigma;
    return 0;
}

/* The run of consecutive ops with the same repeat and pass that starts at i
 * ends at the returned index. */
static size_t run_end(const st_oplist *ops, size_t i)
{
    size_t j = i + 1;
    while (j < ops->n && ops->ops[j].repeat == ops->ops[i].repeat && ops->ops[j].pass == ops->ops[i].pass)
        j++;
    return j;
}

/* The forward run [*f0, *f1) that the backward run starting at b replays
 * under recompute: the forward run of the same repeat that holds the
 * backward run's layer (a model's blocks with equal repeat counts, ResNet's
 * stages or an encoder and a decoder, each replay their own forward). */
static int fwd_run_for(const st_oplist *ops, size_t b, size_t *f0, size_t *f1)
{
    const st_op *ob = &ops->ops[b];
    for (size_t a = 0; a < ops->n;) {
        size_t e = run_end(ops, a);
        if (ops->ops[a].pass == ST_PASS_FWD && ops->ops[a].repeat == ob->repeat)
            for (size_t k = a; k < e; k++)
                if (strcmp(ops->ops[k].layer, ob->layer) == 0) {
                    *f0 = a;
                    *f1 = e;
                    return 1;
                }
        a = e;
    }
    return 0;
}

int st_compose(const st_gpu *g, const st_gpu_coef *c, const st_oplist *ops, const st_compose_opts *o,
               st_step *s, st_error *err)
{
    memset(s, 0, sizeof *s);
    op_cost *cost = NULL;
    if (ops->n == 0)
        return st_error_set(err, ST_EINVAL, "empty operator list");
    cost = calloc(ops->n, sizeof *cost);
    if (!cost)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < ops->n && !rc; i++) {
        double f, b;
        rc = cost_op(g, c, ops, i, o, &cost[i], &f, &b, NULL, err);
        s->flops += f * (double)ops->ops[i].repeat;
        s->bytes += b * (double)ops->ops[i].repeat;
    }
    if (rc) {
        free(cost);
        return rc;
    }
    double host = 0, gpu = 0, sd_corr = 0, var = 0, floor = 0;
    /* Runs of consecutive ops with the same repeat (> 1) are one block,
     * executed repeat times in order; with recompute, a backward block is
     * preceded by its forward block again. */
    size_t i = 0;
    while (i < ops->n) {
        size_t j = run_end(ops, i);
        long long rep = ops->ops[i].repeat > 0 ? ops->ops[i].repeat : 1;
        /* the forward run matching this backward run, for recompute */
        size_t fi = 0, fj = 0;
        int replay = o->recompute && ops->ops[i].pass == ST_PASS_BWD && rep > 1 && fwd_run_for(ops, i, &fi, &fj);
        for (long long r = 0; r < rep; r++) {
            for (int pass = replay ? 0 : 1; pass < 2; pass++) {
                size_t a0 = pass == 0 ? fi : i, a1 = pass == 0 ? fj : j;
                for (size_t a = a0; a < a1; a++) {
                    const op_cost *oc = &cost[a];
                    if (oc->none)
                        continue;
                    host += oc->host_s;
                    double start = gpu > host ? gpu : host;
                    double end = start + oc->gpu_s;
                    st_layer_time *l = layer_of(s, ops->ops[a].layer[0] ? ops->ops[a].layer : "model");
                    l->time_s += end - gpu;
                    s->pass_s[ops->ops[i].pass] += end - gpu;
                    l->kernel_s += oc->gpu_s;
                    l->sd_s += oc->sd_s;
                    l->kernels += !oc->fused;
                    s->idle_s += start - gpu;
                    gpu = end;
                    s->kernel_s += oc->gpu_s;
                    floor += oc->floor_s;
                    sd_corr += oc->sd_s;
                    var += oc->sd_s * oc->sd_s;
                    s->kernels += !oc->fused;
                }
            }
        }
        i = j;
    }
    free(cost);
    /* the step ends when the host has seen the GPU finish */
    double sync = g->launch_overhead_s > 0 ? g->launch_overhead_s : 2.5e-6;
    if (o->edge && o->edge->cls == ST_EDGE_MOBILE_CPU)
        sync = 0; /* the core that ran the last operator is the host */
    s->host_s = host;
    s->sync_s = sync;
    s->total_s = (gpu > host ? gpu : host) + sync;
    const double z = 1.6448536269514722;
    double rc_ = sd_corr / s->total_s, ru = sqrt(var) / s->total_s;
    s->lo_s = s->total_s * exp(-z * rc_);
    s->hi_s = s->total_s * exp(z * rc_);
    s->lo_unc_s = s->total_s * exp(-z * ru);
    s->hi_unc_s = s->total_s * exp(z * ru);
    /* neither band goes below what the kernels' physical floors add up to
     * (st_kernel_est.floor_s): the GPU runs them one after another */
    if (floor > s->total_s)
        floor = s->total_s;
    s->floor_s = floor;
    if (s->lo_s < floor)
        s->lo_s = floor;
    if (s->lo_unc_s < floor)
        s->lo_unc_s = floor;
    for (size_t k = 0; k < s->n_layers; k++)
        s->layers[k].err_share = sd_corr > 0 ? s->layers[k].sd_s / sd_corr : 0;
    return 0;
}

/* Runs of op i in one step: its repeat, and with recompute a forward op of
 * a repeated block runs again before each backward run that replays its
 * run (as st_compose does). */
static long long op_runs(const st_oplist *ops, size_t i, const st_compose_opts *o)
{
    const st_op *op = &ops->ops[i];
    long long rep = op->repeat > 0 ? op->repeat : 1;
    if (!o->recompute || op->pass != ST_PASS_FWD || rep <= 1)
        return rep;
    long long runs = rep;
    for (size_t a = 0; a < ops->n;) {
        size_t e = run_end(ops, a), f0, f1;
        if (ops->ops[a].pass == ST_PASS_BWD && ops->ops[a].repeat == op->repeat && fwd_run_for(ops, a, &f0, &f1) &&
            i >= f0 && i < f1)
            runs += rep;
        a = e;
    }
    return runs;
}

int st_compose_op_time(const st_gpu *g, const st_gpu_coef *c, const st_oplist *ops, size_t i,
                       const st_compose_opts *o, st_op_time *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    if (i >= ops->n)
        return st_error_set(err, ST_EINVAL, "operator %zu of %zu", i, ops->n);
    op_cost oc;
    memset(&oc, 0, sizeof oc); /* cost_op sets only what its path prices */
    double f, b;
    int rc = cost_op(g, c, ops, i, o, &oc, &f, &b, &out->est, err);
    if (rc)
        return rc;
    out->gpu_s = oc.gpu_s;
    out->host_s = oc.host_s;
    out->sd_s = oc.sd_s;
    out->none = oc.none;
    out->fused = oc.fused;
    out->has_est = out->est.bound != NULL;
    out->runs = op_runs(ops, i, o);
    return 0;
}
