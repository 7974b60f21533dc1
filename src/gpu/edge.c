/*
 * Edge devices (nn-Meter's role): one operator's time on a mobile CPU core
 * or a mobile GPU, the way TensorFlow Lite runs it. See edge.h for the model
 * and calibration/edge.yaml for its fitted coefficients.
 */
#include "config.h"
#include "gpu/edge.h"

#include <math.h>
#include <string.h>

static double cdiv(double a, double b) { return ceil(a / b); }

/* The share of a padded extent that is real work: n over n rounded up to q. */
static double fill(double n, double q) { return n > 0 && q > 0 ? n / (cdiv(n, q) * q) : 1.0; }

/* A CPU GEMM microkernel's register tile: output channels in the vector
 * lanes, two vectors wide (nr), and as many output pixels (mr) as half the
 * register file holds accumulators for: registers / 4 rows. 8 pixels x 8
 * channels in FP32 on 32 128-bit registers (ruy's ARM64 float kernel is
 * 8 x 8; XNNPACK's f32 kernels 4-6 x 8, its f16 ones 6 x 16). */
static void cpu_tile(const st_edge *e, double es, double *mr, double *nr)
{
    double lanes = e->simd_bits / (8.0 * es);
    *nr = 2.0 * lanes;
    *mr = e->vector_registers / 4.0;
    if (*mr < 1)
        *mr = 1;
}

/* What the op is, for pricing: a GEMM (M x N per group), a depthwise
 * convolution (channels in vector lanes), or a vector op. */
typedef enum { EK_GEMM, EK_DEPTHWISE, EK_VECTOR } ekind;

static ekind classify(const st_op *op, double *M, double *N, double *groups, double *ch)
{
    *groups = 1, *ch = 0;
    if (op->kind == ST_OP_CONV) {
        double g = op->groups > 0 ? (double)op->groups : 1;
        double cin = (double)op->c / g, cout = (double)op->k_out / g;
        *M = (double)(op->batch > 0 ? op->batch : 1) * (double)op->p * (double)op->q;
        if (g > 1 && cin == 1 && cout == 1) {
            *ch = g;
            *N = 1;
            return EK_DEPTHWISE;
        }
        *N = cout;
        *groups = g;
        return EK_GEMM;
    }
    if (op->kind == ST_OP_GEMM || op->kind == ST_OP_BMM) {
        *M = (double)op->m * (double)(op->batch > 0 ? op->batch : 1);
        *N = (double)op->n;
        return EK_GEMM;
    }
    *M = *N = 0;
    return EK_VECTOR;
}

int st_edge_op_time(const st_edge *e, const st_edge_coef *c, double mem_coef, const st_op *op,
                    st_edge_est *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    double peak = e->peak[op->dtype].dense;
    if (!(peak > 0))
        return st_error_set(err, ST_EINVAL, "%s has no %s throughput; pass --dtype (e.g. fp32)", e->id,
                            st_dtype_name(op->dtype));
    if (op->kind == ST_OP_ATTENTION || op->kind == ST_OP_MOE_EXPERTS || op->kind == ST_OP_MOE_ROUTER)
        return st_error_set(err, ST_EINVAL,
                            "the edge model prices convolutional networks' operators (convolutions, "
                            "fully connected layers, pooling, elementwise); %s is not one of them",
                            op->name);
    double es = st_dtype_bytes(op->dtype);
    double M, N, groups, ch;
    ekind kind = classify(op, &M, &N, &groups, &ch);
    double eff = 1.0, eta = 1.0;
    if (e->cls == ST_EDGE_MOBILE_CPU) {
        if (e->cores != 1)
            return st_error_set(err, ST_EINVAL,
                                "%s: the edge model runs TFLite on one CPU thread (nn-Meter's set-up, "
                                "the one its coefficients are fitted to); a preset of %d cores is not "
                                "modelled: give cores: 1",
                                e->id, e->cores);
        if (e->simd_bits <= 0 || e->vector_registers <= 0)
            return st_error_set(err, ST_EINVAL,
                                "%s: a mobile_cpu preset needs simd_bits and vector_registers (the "
                                "core's vector width and register count) for its GEMM tiles",
                                e->id);
        double lanes = e->simd_bits / (8.0 * es);
        if (kind == EK_GEMM) {
            double mr, nr;
            cpu_tile(e, es, &mr, &nr);
            /* fewer rows than the tile holds (a fully connected layer at
             * batch 1): the library runs a matrix-vector kernel over the
             * rows there are, not a padded tile (ruy and TFLite's
             * FULLY_CONNECTED take a GEMV path), so the rows do not pad */
            if (M < mr)
                mr = M;
            eff = fill(M, mr) * fill(N, nr);
            eta = c->cpu_efficiency;
        } else if (kind == EK_DEPTHWISE) {
            eff = fill(ch, lanes);
            eta = c->cpu_dw_efficiency;
        }
    } else {
        /* TFLite's GPU delegate stores tensors in slices of 4 channels and
         * gives each work item one output slice of one pixel (Lee et al.
         * 2019, "On-Device Neural Net Inference with Mobile GPUs", Sec. 4:
         * PHWC4); the ALU lanes run the work items in waves */
        double lanes = e->clock_hz > 0 ? floor(e->peak[ST_FP32].dense / (2.0 * e->clock_hz) + 0.5) : 0;
        if (kind != EK_VECTOR) {
            double items = M * cdiv(kind == EK_DEPTHWISE ? ch : N, 4.0) * (kind == EK_DEPTHWISE ? 1 : groups);
            eff = fill(kind == EK_DEPTHWISE ? ch : N, 4.0) * (lanes >= 1 ? fill(items, lanes) : 1.0);
            eta = c->gpu_efficiency;
        }
    }
    if (!(eta > 0))
        return st_error_set(err, ST_EINVAL, "edge coefficients: efficiency must be positive");
    out->compute_s = op->flops / (peak * eff * eta);
    /* DRAM: an operator whose operands and result fit the caches reads
     * what its producer left there; a larger one streams them all. The
     * price per byte is the GPU table's for non-HBM memory */
    double bytes = op->bytes_read + op->bytes_written;
    double cache = e->cls == ST_EDGE_MOBILE_CPU ? e->l2_bytes + e->llc_bytes : e->l2_bytes;
    out->memory_s = bytes > cache && e->mem_bw > 0 ? bytes / e->mem_bw * mem_coef : 0;
    out->fixed_s = e->cls == ST_EDGE_MOBILE_GPU ? c->gpu_kernel_s : 0;
    out->bound = out->compute_s >= out->memory_s ? "compute" : "memory";
    out->time_s = (out->compute_s > out->memory_s ? out->compute_s : out->memory_s) + out->fixed_s;
    out->sigma = e->cls == ST_EDGE_MOBILE_CPU ? c->sigma_cpu : c->sigma_gpu;
    out->efficiency = eff * eta;
    return 0;
}

int st_edge_folds(const st_oplist *ops, size_t i)
{
    const st_op *op = &ops->ops[i];
    if (i == 0 || op->pass != ST_PASS_FWD)
        return 0;
    const st_op *prev = &ops->ops[i - 1];
    if (strcmp(prev->layer, op->layer) != 0 || prev->pass != op->pass)
        return 0;
    /* the converter folds an inference batch norm into the convolution
     * before it, and fuses an activation into the operator before it
     * (TFLite's fused_activation_function on CONV_2D, DEPTHWISE_CONV_2D,
     * ADD, FULLY_CONNECTED) */
    if (op->kind == ST_OP_BATCHNORM)
        return prev->kind == ST_OP_CONV;
    /* TFLite's fused activations are RELU, RELU6, RELU_N1_TO_1 and TANH
     * (schema's ActivationFunctionType); GELU and SiLU run as operators of
     * their own */
    if (op->kind == ST_OP_ELEMENTWISE && op->arity <= 1 && (op->act == ST_ACT_RELU || op->act == ST_ACT_RELU6))
        return prev->kind == ST_OP_CONV || prev->kind == ST_OP_BATCHNORM || prev->kind == ST_OP_GEMM ||
               (prev->kind == ST_OP_ELEMENTWISE && prev->arity == 2);
    return 0;
}

st_dtype st_edge_default_dtype(const st_edge *e)
{
    /* TFLite's CPU kernels run a float model in FP32; its GPU delegate
     * computes in FP16 unless told otherwise (benchmark_model's
     * --gpu_precision_loss_allowed defaults to true) */
    if (e->cls == ST_EDGE_MOBILE_GPU && e->peak[ST_FP16].dense > 0)
        return ST_FP16;
    return ST_FP32;
}
