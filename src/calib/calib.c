/* Calibration: measured kernels -> samples -> per-class weighted least squares. */
#include "config.h"
#include "calib/calib.h"
#include "io/io.h"

#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

void st_calib_data_free(st_calib_data *d)
{
    free(d->gpus);
    free(d->dev_names);
    free(d->s);
    memset(d, 0, sizeof *d);
}

/* Index of the preset for a device name, loading it the first time. */
static int gpu_index(st_calib_data *d, const char *device, const char *preset, st_error *err)
{
    for (size_t i = 0; i < d->n_gpus; i++)
        if (strcmp(d->dev_names[i], device) == 0)
            return (int)i;
    st_gpu g;
    int rc = preset ? st_load_gpu(preset, &g, err) : st_find_gpu_for_device(device, &g, err);
    if (rc)
        return rc;
    st_gpu *ng = realloc(d->gpus, (d->n_gpus + 1) * sizeof *ng);
    if (!ng)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    d->gpus = ng;
    char(*nn)[64] = realloc(d->dev_names, (d->n_gpus + 1) * sizeof *nn);
    if (!nn)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    d->dev_names = nn;
    d->gpus[d->n_gpus] = g;
    snprintf(d->dev_names[d->n_gpus], 64, "%s", device);
    return (int)d->n_gpus++;
}

static int push(st_calib_data *d, const st_calib_sample *s, st_error *err)
{
    if (d->n == d->cap) {
        size_t nc = d->cap ? 2 * d->cap : 4096;
        st_calib_sample *p = realloc(d->s, nc * sizeof *p);
        if (!p)
            return st_error_set(err, ST_ENOMEM, "out of memory");
        d->s = p;
        d->cap = nc;
    }
    d->s[d->n++] = *s;
    return 0;
}

/* Push a sample measured on a device named as the data names it: a device
 * no preset describes is counted as skipped, not an error. */
static int push_on_device(st_calib_data *d, const char *device, st_calib_sample *s, double t_s, st_error *err)
{
    st_error e2;
    int gi = gpu_index(d, device, NULL, &e2);
    if (gi == ST_ENOTFOUND) {
        d->skipped_unknown_device++;
        return 0;
    }
    if (gi < 0) {
        *err = e2;
        return gi;
    }
    if (!st_gpu_supports(&d->gpus[gi], s->k.dtype)) {
        d->skipped_dtype++; /* e.g. FP8 rows on a GPU without FP8 units */
        return 0;
    }
    s->gpu = gi;
    s->t_s = t_s;
    return push(d, s, err);
}

/* ALU operations per element of NeuSight's elementwise ops: one FP32
 * instruction for add/mul/relu; division is a reciprocal plus a Newton step
 * (about 4); powf, erff (GELU) and tanhf are polynomial library routines of
 * 15-20 instructions. These are estimates: only their ratios matter, since
 * the alu coefficient is fitted, and they only matter where ALU time shows
 * over the bytes (the ops are memory-bound on every GPU here). */
static double ew_flops(st_meas_op op)
{
    switch (op) {
    case ST_MEAS_DIV:
    case ST_MEAS_DIVU: return 4;
    case ST_MEAS_POW:
    case ST_MEAS_POWU: return 20;
    case ST_MEAS_GELU: return 20;
    case ST_MEAS_TANH: return 15;
    default: return 1;
    }
}

static int neusight_sample(const st_kernel_sample *r, st_calib_sample *s)
{
    memset(s, 0, sizeof *s);
    st_kernel *k = &s->k;
    k->dtype = r->dtype;
    s->has_dispatch = 1;
    snprintf(s->op, sizeof s->op, "%s", st_meas_op_name(r->op));
    switch (r->op) {
    /* NeuSight's GEMM columns: bmm multiplies (B, M, N) by (B, N, K) and
     * linear maps N input features to K outputs (its profiling scripts
     * build x = randn(B, M, N), y = randn(B, N, K)), so the reduction is N
     * and the output M x K. The launch grids in the data agree: grid.x =
     * ceil(K / tile) and grid.y = ceil(M / tile) on every cuBLAS kernel
     * (e.g. M 2048, N 2048, K 64 on ampere_sgemm_128x128: grid 1 x 16). In
     * strata's (m x k).(k x n) that is m = M, k = N, n = K. */
    case ST_MEAS_BMM:
        k->op = ST_KOP_BMM;
        k->b = r->b, k->m = r->m, k->n = r->k, k->k = r->n;
        k->dispatch = ST_DISP_BMM;
        break;
    case ST_MEAS_LINEAR:
        k->op = ST_KOP_GEMM;
        k->b = 1, k->m = r->b * r->m, k->n = r->k, k->k = r->n;
        k->dispatch = ST_DISP_LINEAR;
        break;
    case ST_MEAS_CONV: {
        long long p = (r->size + 2 * r->pad - r->kernel) / (r->stride > 0 ? r->stride : 1) + 1;
        if (p <= 0)
            return 0;
        k->op = ST_KOP_CONV;
        k->b = 1, k->m = r->b * p * p, k->n = r->c_out, k->k = r->c_in * r->kernel * r->kernel;
        k->groups = 1;
        k->filter = r->kernel, k->stride = r->stride > 0 ? r->stride : 1;
        k->dispatch = ST_DISP_CONV;
        break;
    }
    case ST_MEAS_LN:
    case ST_MEAS_RMSNORM:
        k->op = ST_KOP_NORM;
        k->rms = r->op == ST_MEAS_RMSNORM;
        k->rows = r->b, k->cols = r->n;
        k->dispatch = ST_DISP_NORM;
        break;
    case ST_MEAS_SOFTMAX:
        k->op = ST_KOP_SOFTMAX;
        k->rows = r->b, k->cols = r->n;
        k->dispatch = ST_DISP_SOFTMAX;
        break;
    default: {
        int binary = r->op == ST_MEAS_ADD || r->op == ST_MEAS_MUL || r->op == ST_MEAS_DIV ||
                     r->op == ST_MEAS_POW;
        k->op = ST_KOP_ELEMENTWISE;
        k->rows = r->b, k->cols = r->n;
        k->n_in = binary ? 2 : 1;
        k->n_out = 1;
        k->flops_per_elem = ew_flops(r->op);
        k->dispatch = ST_DISP_ELEMENTWISE;
        break;
    }
    }
    if (k->op == ST_KOP_GEMM || k->op == ST_KOP_BMM || k->op == ST_KOP_CONV) {
        if (!st_parse_kernel_tile(r->kernel_name, &s->named))
            s->named.m = s->named.n = 0;
        double units = (double)r->grid[0] * r->grid[1] * r->grid[2];
        s->grid_ctas = units;
        double tiles = s->named.m > 0 && s->named.n > 0
                           ? (double)k->b * ceil((double)k->m / s->named.m) * ceil((double)k->n / s->named.n)
                           : 0;
        if (k->op != ST_KOP_CONV && tiles > 0) { /* a zero dimension: no split to infer */
            double sp = floor(units / tiles + 0.5);
            s->named_split = sp >= 2 ? (int)sp : 1;
        }
    }
    return 1;
}

int st_calib_add_neusight(st_calib_data *d, const char *dir, st_error *err)
{
    st_kernel_set ks = {0};
    int rc = st_read_neusight_dir(dir, &ks, err);
    if (rc) {
        st_kernel_set_free(&ks); /* what it read before the error */
        return rc;
    }
    for (size_t i = 0; i < ks.n && !rc; i++) {
        st_calib_sample s;
        if (!neusight_sample(&ks.items[i], &s))
            continue;
        rc = push_on_device(d, ks.items[i].device, &s, ks.items[i].latency_s, err);
    }
    st_kernel_set_free(&ks);
    return rc;
}

const char *st_vidur_gpu_preset(const char *folder)
{
    /* VIDUR profiled on Azure A100 80GB SXM4 (NDm A100 v4) and A40 nodes */
    if (strcasecmp(folder, "a100") == 0)
        return "a100-80gb-sxm";
    if (strcasecmp(folder, "a40") == 0)
        return "a40";
    if (strcasecmp(folder, "h100") == 0)
        return "h100-sxm";
    return folder;
}

/* One VIDUR operator at (num_tokens, tp) as a kernel. 0: not modelled.
 * VIDUR (vidur/profiling/mlp/mlp_impl.py) runs one block with Sarathi-Serve's
 * kernels (csrc/ of microsoft/sarathi-serve): RMSNorm called without a
 * residual (rms_norm_kernel), SiluAndMul (silu_and_mul_kernel) and the
 * rotary kernel, each one token per thread block and one element per thread
 * per memory instruction; its embedding is F.embedding (PyTorch's
 * index_select). A model whose profile has no post-attention norm
 * (`parallel`: phi-2, VIDUR's post_attn_norm false) is a parallel block with
 * torch.nn.LayerNorm and GELU (PyTorch's vectorised kernels) whose residual
 * sum is two adds. */
/* threads per warp (CUDA C++ Programming Guide; VIDUR's GPUs are NVIDIA):
 * a warp-wide step of these kernels covers this many elements */
#define WARP 32.0

static int vidur_sample(const st_vidur_sample *v, int parallel, st_kernel *k)
{
    memset(k, 0, sizeof *k);
    k->dtype = ST_FP16;
    k->dispatch = -1;
    long long t = v->num_tokens, h = v->n_embd, tp = v->tp > 0 ? v->tp : 1;
    long long hd = v->n_head > 0 ? h / v->n_head : 0;
    long long ffn = v->n_expanded_embd;
    double td = (double)t, hdd = (double)h;
    k->b = 1;
    k->m = t;
    if (strcmp(v->op, "attn_pre_proj") == 0) {
        k->op = ST_KOP_GEMM, k->k = h, k->n = (v->n_head + 2 * v->n_kv_head) * hd / tp;
    } else if (strcmp(v->op, "attn_post_proj") == 0) {
        k->op = ST_KOP_GEMM, k->k = v->n_head * hd / tp, k->n = h;
    } else if (strcmp(v->op, "mlp_up_proj") == 0) {
        k->op = ST_KOP_GEMM, k->k = h, k->n = (v->gated_mlp ? 2 : 1) * ffn / tp;
    } else if (strcmp(v->op, "mlp_down_proj") == 0) {
        k->op = ST_KOP_GEMM, k->k = ffn / tp, k->n = h;
    } else if (strcmp(v->op, "input_layernorm") == 0 || strcmp(v->op, "post_attention_layernorm") == 0) {
        k->op = ST_KOP_NORM, k->rows = t, k->cols = h;
        k->rms = !parallel;
        if (!parallel) {
            /* rms_norm_kernel: reads the row for its sum of squares, again
             * (an L1 hit on the instruction side; the byte side prices the
             * re-read as every row kernel's, st_row_reread_hit) with the
             * weight (L1) to normalise it, and writes it */
            k->bytes_total = 2.0 * (2.0 * td * hdd + hdd);
            k->mem_requests = 2.0 * td * ceil(hdd / WARP);
            k->mem_hits = 2.0 * td * ceil(hdd / WARP);
        }
    } else if (strcmp(v->op, "mlp_act") == 0) {
        k->op = ST_KOP_ELEMENTWISE, k->rows = t, k->cols = ffn / tp;
        k->n_in = v->gated_mlp ? 2 : 1, k->n_out = 1, k->flops_per_elem = v->gated_mlp ? 6 : 20;
        /* silu_and_mul_kernel: two loads and a store per warp-wide step */
        if (v->gated_mlp)
            k->mem_requests = 3.0 * td * ceil((double)k->cols / WARP);
    } else if (strcmp(v->op, "add") == 0) {
        k->op = ST_KOP_ELEMENTWISE, k->rows = t, k->cols = h;
        k->n_in = 2, k->n_out = 1, k->flops_per_elem = 1;
        if (parallel) /* attn + mlp + residual: two binary adds */
            k->bytes_total = 2.0 * 3.0 * 2.0 * td * hdd, k->flops_per_elem = 2;
    } else if (strcmp(v->op, "attn_rope") == 0) {
        /* q and k rotated in place; the kernel handles one (x, y) pair per
         * thread: x, y loads and two stores per warp-wide step, cos and sin
         * from L1, over the query heads then the KV heads */
        k->op = ST_KOP_ELEMENTWISE, k->rows = t, k->cols = (v->n_head + v->n_kv_head) * hd / tp;
        k->n_in = 1, k->n_out = 1, k->flops_per_elem = 6;
        double pq = (double)(v->n_head / tp * hd / 2), pk = (double)(v->n_kv_head / tp * hd / 2);
        k->mem_requests = td * (1.0 + 4.0 * (ceil(pq / WARP) + ceil(pk / WARP)));
        k->mem_hits = td * 2.0 * (ceil(pq / WARP) + ceil(pk / WARP));
    } else if (strcmp(v->op, "emb") == 0) {
        /* F.embedding is index_select (indexSelectLargeIndex): offset
         * arithmetic per element, see st_kernel.index_elems */
        k->op = ST_KOP_EMBEDDING, k->rows = t, k->cols = h;
        k->n_in = 1, k->n_out = 1;
        k->index_elems = td * hdd;
    } else {
        return 0;
    }
    if ((k->op == ST_KOP_GEMM && (k->n <= 0 || k->k <= 0)) || (k->op != ST_KOP_GEMM && k->cols <= 0))
        return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int st_calib_add_vidur(st_calib_data *d, const char *vidur_dir, const char *gpu_filter,
                       st_error *err)
{
    char pat[1024];
    snprintf(pat, sizeof pat, "%s/profiling/compute/%s/*/*/mlp.csv", vidur_dir,
             gpu_filter ? gpu_filter : "*");
    glob_t gl;
    int g = glob(pat, 0, NULL, &gl);
    if (g == GLOB_NOMATCH)
        return st_error_set(err, ST_ENOTFOUND, "no VIDUR profiles match %s", pat);
    if (g != 0)
        return st_error_set(err, ST_EIO, "cannot list %s", pat);
    qsort(gl.gl_pathv, gl.gl_pathc, sizeof *gl.gl_pathv, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < gl.gl_pathc && !rc; i++) {
        st_vidur_set vs = {0};
        if ((rc = st_read_vidur_mlp(gl.gl_pathv[i], &vs, err))) {
            st_vidur_set_free(&vs);
            break;
        }
        st_error e2;
        int gi = gpu_index(d, vs.gpu, st_vidur_gpu_preset(vs.gpu), &e2);
        if (gi < 0) {
            st_vidur_set_free(&vs);
            if (gi == ST_ENOTFOUND) {
                d->skipped_unknown_device++;
                continue;
            }
            *err = e2;
            rc = gi;
            break;
        }
        int parallel = 1;
        for (size_t j = 0; j < vs.n; j++)
            parallel &= strcmp(vs.items[j].op, "post_attention_layernorm") != 0;
        for (size_t j = 0; j < vs.n && !rc; j++) {
            st_calib_sample s;
            memset(&s, 0, sizeof s);
            if (!vidur_sample(&vs.items[j], parallel, &s.k) || !(vs.items[j].median_s > 0))
                continue;
            s.gpu = gi;
            s.t_s = vs.items[j].median_s;
            s.tp = vs.items[j].tp;
            s.tokens = vs.items[j].num_tokens;
            /* VIDUR's vector ops are Sarathi's one-element-per-thread
             * kernels (see vidur_sample), not the framework kernels the class
             * fits describe: the class fits keep to its GEMMs, and the
             * memory-instruction rate (lsu_cycles) is fitted on these rows */
            s.validate_only = s.k.op != ST_KOP_GEMM;

            snprintf(s.op, sizeof s.op, "%s", vs.items[j].op);
            rc = push(d, &s, err);
        }
        st_vidur_set_free(&vs);
    }
    globfree(&gl);
    return rc;
}

int st_calib_add_attention(st_calib_data *d, const char *path, st_error *err)
{
    st_attn_set as = {0, 0, NULL};
    int rc = st_read_attention_csv(path, &as, err);
    for (size_t i = 0; i < as.n && !rc; i++) {
        const st_attn_sample *a = &as.items[i];
        st_calib_sample s;
        memset(&s, 0, sizeof s);
        st_kernel *k = &s.k;
        k->op = ST_KOP_FLASH;
        k->dtype = a->dtype;
        k->b = a->batch;
        k->heads = a->heads;
        k->kv_heads = a->kv_heads;
        k->q_len = a->q;
        k->kv_len = a->kv;
        k->head_dim = a->d;
        k->causal = a->causal && a->q > 1;
        k->dispatch = ST_DISP_OTHER;
        s.has_dispatch = 1;
        s.validate_only = 1;
        snprintf(s.op, sizeof s.op, "attention%s", a->q == 1 ? "-decode" : (k->causal ? "-causal" : ""));
        rc = push_on_device(d, a->device, &s, a->latency_s, err);
    }
    st_attn_set_free(&as);
    return rc;
}

int st_calib_add_ops(st_calib_data *d, const char *path, int torch_default, st_error *err)
{
    st_ops_set os = {0, 0, NULL};
    int rc = st_read_ops_csv(path, &os, err);
    for (size_t i = 0; i < os.n && !rc; i++) {
        const st_ops_sample *o = &os.items[i];
        if (o->torch_ver && torch_default && o->torch_ver != torch_default) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: this row ran on PyTorch %d.%d, the folder's harness.csv "
                              "on %d.%d; a folder's sweeps come from one software stack: split it", path, o->line,
                              o->torch_col, o->torch_ver / 100, o->torch_ver % 100, torch_default / 100,
                              torch_default % 100);
            break;
        }
        st_calib_sample s;
        memset(&s, 0, sizeof s);
        st_kernel *k = &s.k;
        k->op = o->op;
        k->dtype = o->dtype;
        k->weight_only_int4 = o->int4;
        k->int4_kernel = o->int4_kernel;
        k->b = o->b, k->m = o->m, k->n = o->n, k->k = o->k;
        k->rows = o->rows, k->cols = o->cols;
        k->n_in = 1, k->n_out = 1;
        k->torch_ver = o->torch_ver ? o->torch_ver : torch_default; /* the release the row ran on */
        if (o->op == ST_KOP_TOPK)
            k->k = o->topk; /* the experts kept */
        k->flops_per_elem = o->op == ST_KOP_ELEMENTWISE ? 1 : 0;
        /* each op goes through the framework's dispatcher as the op whose
         * harness floor is nearest in kind: a matmul (torch.mm, the grouped
         * GEMM) as bmm, a gather as an elementwise kernel, a router as a
         * softmax */
        switch (o->op) {
        case ST_KOP_EMBEDDING:
            k->index_elems = (double)o->rows * (double)o->cols; /* index_select, as compose prices it */
            /* fall through */
        case ST_KOP_ELEMENTWISE:
            k->dispatch = ST_DISP_ELEMENTWISE;
            break;
        case ST_KOP_SOFTMAX:
        case ST_KOP_TOPK:
            k->dispatch = ST_DISP_SOFTMAX;
            break;
        case ST_KOP_NORM:
            k->dispatch = ST_DISP_NORM;
            break;
        default:
            k->dispatch = ST_DISP_BMM;
            break;
        }
        s.has_dispatch = 1;
        s.validate_only = 1;
        snprintf(s.op, sizeof s.op, "%s%s", st_kop_name(o->op),
                 !o->int4 ? "" : o->int4_kernel == ST_INT4_TINYGEMM ? "-int4-tinygemm" : "-int4");
        size_t n0 = d->n;
        rc = push_on_device(d, o->device, &s, o->latency_s, err);
        const char *why = !rc && d->n > n0 && o->int4 && o->int4_kernel == ST_INT4_TINYGEMM
                              ? st_tinygemm_unsupported(&d->gpus[d->s[n0].gpu], k) : NULL;
        if (why)
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: tinygemm on %s %s: %s; fix the row's int4 (marlin), "
                              "op or dtype", path, o->line, o->int4_col, d->gpus[d->s[n0].gpu].id,
                              st_kop_name(o->op), why);
    }
    st_ops_set_free(&os);
    return rc;
}

/* The elementwise ops NeuSight times with a Python scalar operand */
static int scalar_op(const char *op)
{
    return !strcmp(op, "addu") || !strcmp(op, "mulu") || !strcmp(op, "divu") || !strcmp(op, "powu");
}

/* see calib.h */
int st_calib_apply_harness(const char *dir, st_calib_data *d, size_t from, int *torch_ver, st_error *err)
{
    char path[720];
    snprintf(path, sizeof path, "%s/harness.csv", dir);
    st_harness_row rows[ST_HARNESS_MAX];
    int n, rc = st_read_harness_csv(path, rows, ST_HARNESS_MAX, &n, err);
    *torch_ver = 0;
    if (rc || n == 0)
        return rc;
    /* after the dispatch classes: scalar elementwise, fused attention, the
     * embedding gather (F.embedding's Python path) and the MoE router
     * (softmax, then torch.topk: four kernels), each op's own floor where the
     * harness timed one, else its dispatch class's */
    enum { F_SCALAR = ST_DISP_COUNT, F_ATTN, F_EMB, F_ROUTER, F_N };
    double floor[F_N] = {0};
    for (int i = 0; i < n; i++) {
        int k = -1;
        if (rows[i].torch_ver && *torch_ver && rows[i].torch_ver != *torch_ver)
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: this row ran on PyTorch %d.%d, an earlier one on %d.%d; "
                                "a folder's floors (and its labels) come from one software stack: split it",
                                path, rows[i].line, rows[i].torch_col, rows[i].torch_ver / 100, rows[i].torch_ver % 100,
                                *torch_ver / 100, *torch_ver % 100);
        if (rows[i].torch_ver)
            *torch_ver = rows[i].torch_ver;
        if (!strcmp(rows[i].dispatch, "elementwise_scalar"))
            k = F_SCALAR;
        else if (!strcmp(rows[i].dispatch, "attention"))
            k = F_ATTN;
        else if (!strcmp(rows[i].dispatch, "embedding"))
            k = F_EMB;
        else if (!strcmp(rows[i].dispatch, "router"))
            k = F_ROUTER;
        for (int j = 0; j < ST_DISP_COUNT && k < 0; j++)
            if (!strcmp(rows[i].dispatch, st_dispatch_name((st_dispatch)j)))
                k = j;
        if (k >= 0 && floor[k] > 0)
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: a second row for dispatch class '%s'; give each "
                                "class one floor", path, rows[i].line, rows[i].col, rows[i].dispatch);
        if (k < 0)
            return st_error_set(err, ST_EINVAL, "%s:%d:%d: unknown dispatch class '%s'; use bmm, linear, "
                                "conv, elementwise, elementwise_scalar, norm, softmax, attention, embedding, router "
                                "or other", path, rows[i].line, rows[i].col, rows[i].dispatch);
        floor[k] = rows[i].floor_s;
    }
    /* A convolution is a library GEMM launched through the same dispatcher
     * as bmm: where the harness timed no conv, bmm's floor stands in (a
     * bias-free op, as NeuSight's convs are), rather than the table's figure
     * for NeuSight's 2023 stack (its conv harness cost, 0.3 ms, is 12-15
     * times a current GEMM floor). On the H100 the smallest TF32/BF16 convs
     * measure 31-35 us, above it; on the H200 19-21 us, near it */
    if (floor[ST_DISP_CONV] <= 0)
        floor[ST_DISP_CONV] = floor[ST_DISP_BMM];
    for (size_t i = from; i < d->n; i++) {
        st_calib_sample *s = &d->s[i];
        int k = s->k.dispatch;
        if (!s->has_dispatch || k < 0 || k >= ST_DISP_COUNT)
            continue;
        if (k == ST_DISP_ELEMENTWISE && scalar_op(s->op) && floor[F_SCALAR] > 0)
            k = F_SCALAR;
        if (s->k.op == ST_KOP_FLASH)
            k = F_ATTN;
        if (s->k.op == ST_KOP_EMBEDDING && floor[F_EMB] > 0)
            k = F_EMB;
        if (s->k.op == ST_KOP_TOPK && !s->k.router_fused && floor[F_ROUTER] > 0)
            k = F_ROUTER;
        s->own_floor_s = floor[k];
        s->own_floor_router = k == F_ROUTER;
    }
    return 0;
}

int st_calib_harness_torch(const char *dir, int *torch_ver, st_error *err)
{
    st_calib_data none = {0};
    return st_calib_apply_harness(dir, &none, 0, torch_ver, err);
}

int st_calib_add_router_fit(st_calib_data *d, const char *dir, st_error *err)
{
    char path[720];
    snprintf(path, sizeof path, "%s/ops.csv", dir);
    size_t n0 = d->n;
    int tv;
    int rc = st_calib_harness_torch(dir, &tv, err);
    if (!rc)
        rc = st_calib_add_ops(d, path, tv, err);
    if (rc)
        return rc;
    if (d->n == n0)
        return st_error_set(err, ST_ENOTFOUND, "%s: no op sweep there (ops.csv, as tools/measure-kernels.py --ops "
                            "writes it, on a GPU strata has a preset for)", dir);
    /* the routers, and tinygemm's weight-only INT4 GEMMs (validation only
     * for the classes, as every op-sweep row: tinygemm_wavefront_cycles is
     * fitted on them); no other fitted term prices the other ops */
    size_t u = n0;
    for (size_t i = n0; i < d->n; i++)
        if (d->s[i].k.op == ST_KOP_TOPK || st_calib_tinygemm_fit(&d->s[i]))
            d->s[u++] = d->s[i];
    d->n = u;
    if (d->n == n0)
        return st_error_set(err, ST_ENOTFOUND, "%s: no topk rows: nothing to fit the router's radix select on",
                            path);
    /* the forward softmax rows of the folder's kernel sweep, where it has
     * one, run on the folder's release: softmax_warp_cycles and
     * softmax_reg_cycles are fitted on them; and its FP32 GEMMs (bmm.csv,
     * linear.csv), the epilogue cycles of their GPU's family, and its
     * layer norms (ln.csv, not the RMSNorm rows), the layer norm's cycles
     * of their family (validation only for the classes, as the routers) */
    static const char *const sweeps[] = {"softmax", "bmm", "linear", "ln"};
    for (size_t f = 0; f < sizeof sweeps / sizeof sweeps[0]; f++) {
        snprintf(path, sizeof path, "%s/kernels-test/%s.csv", dir, sweeps[f]);
        if (access(path, F_OK) != 0)
            continue;
        st_kernel_set ks = {0};
        if ((rc = st_read_neusight_csv(path, &ks, err)))
            return rc;
        for (size_t i = 0; i < ks.n && !rc; i++) {
            st_calib_sample s;
            if (!neusight_sample(&ks.items[i], &s))
                continue;
            if (f == 0   ? s.k.op != ST_KOP_SOFTMAX
                : f == 3 ? s.k.op != ST_KOP_NORM || s.k.rms
                         : (s.k.op != ST_KOP_BMM && s.k.op != ST_KOP_GEMM) || s.k.dtype != ST_FP32)
                continue;
            s.validate_only = 1;
            s.epilogue_fit = f == 1 || f == 2;
            s.norm_fit = f == 3;
            s.k.torch_ver = tv;
            rc = push_on_device(d, ks.items[i].device, &s, ks.items[i].latency_s, err);
        }
        st_kernel_set_free(&ks);
        if (rc)
            return rc;
    }
    return st_calib_apply_harness(dir, d, n0, &tv, err);
}

int st_calib_tinygemm_fit(const st_calib_sample *s)
{
    return s->k.weight_only_int4 && s->k.int4_kernel == ST_INT4_TINYGEMM;
}

int st_calib_epilogue_fit(const st_calib_data *data, const st_calib_sample *s)
{
    return s->epilogue_fit && st_kernel_class(&data->gpus[s->gpu], &s->k) == ST_KC_GEMM_SIMT;
}

int st_calib_norm_fit(const st_calib_data *data, const st_calib_sample *s)
{
    (void)data;
    return s->norm_fit;
}

/* st_calib_predict with the tile and split forced (tile NULL: the
 * heuristic's) */
static int predict(const st_calib_data *d, size_t i, const st_gpu_coef *c, const st_tile *tile, int split,
                   st_kernel_est *e, double *pred_s, st_error *err)
{
    const st_calib_sample *s = &d->s[i];
    int rc = st_kernel_estimate(&d->gpus[s->gpu], c, &s->k, tile, split, e, err);
    if (rc)
        return rc;
    /* NeuSight times every op alone: the host's dispatch sets a floor, and
     * above it the harness adds its own per-op overhead to the kernel */
    double t = e->gpu_s;
    if (s->own_floor_s > 0) {
        /* the data's own harness: its one-element op is the host's path to
         * the launch plus a kernel of one launch, so the harness adds the
         * floor less that launch to every kernel */
        int lf = st_kclass_feature(e->cls, "launch");
        double launch = lf >= 0 ? c->cls[e->cls].beta[lf] * 1e-6 : 0;
        if (s->own_floor_router) {
            /* the router floor is four kernels (tools/measure-kernels.py
             * --floors: BF16 logits of one token over 8 experts, keeping
             * 2): the harness adds the floor less their own GPU time */
            st_kernel f;
            memset(&f, 0, sizeof f);
            f.op = ST_KOP_TOPK, f.dtype = ST_BF16, f.rows = 1, f.cols = 8, f.k = 2, f.n_in = 1, f.n_out = 1;
            f.dispatch = ST_DISP_SOFTMAX;
            st_kernel_est fe;
            if ((rc = st_kernel_estimate(&d->gpus[s->gpu], c, &f, NULL, 0, &fe, err)))
                return rc;
            launch = fe.gpu_s;
        }
        double h = s->own_floor_s - launch;
        t += h > 0 ? h : 0;
        if (t < s->own_floor_s)
            t = s->own_floor_s;
    } else if (s->has_dispatch && s->k.dispatch >= 0 && s->k.dispatch < ST_DISP_COUNT) {
        t += c->harness_s[s->k.dispatch];
        if (e->dispatch_s > t)
            t = e->dispatch_s;
    }
    *pred_s = t;
    return 0;
}

int st_calib_predict(const st_calib_data *d, size_t i, const st_gpu_coef *c, st_kernel_est *e,
                     double *pred_s, st_error *err)
{
    return predict(d, i, c, NULL, 0, e, pred_s, err);
}

int st_calib_predict_named(const st_calib_data *d, size_t i, const st_gpu_coef *c, st_kernel_est *e,
                           double *pred_s, st_error *err)
{
    const st_calib_sample *s = &d->s[i];
    int gemm = s->k.op == ST_KOP_GEMM || s->k.op == ST_KOP_BMM || s->k.op == ST_KOP_GROUPED ||
               s->k.op == ST_KOP_CONV;
    if (!gemm || s->named.m <= 0 || s->named.n <= 0)
        return 1;
    return predict(d, i, c, &s->named, s->named_split, e, pred_s, err);
}
