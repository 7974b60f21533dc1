/*
 * edge: operator latency on a mobile CPU core or a mobile GPU (nn-Meter's
 * role), the way TensorFlow Lite runs a converted convolutional network.
 *
 * One operator is one kernel, timed like the GPU model's vector classes:
 * the longer of its compute side and its DRAM side, plus a fixed cost.
 *   compute = FLOPs / (peak[dtype] x fill x efficiency)
 *   memory  = bytes / bandwidth x mem_coef, for an operator whose operands
 *             and result do not fit the caches (0 when they do: the producer
 *             left them there)
 * fill is the share of the padded work that is real:
 *   - mobile CPU, GEMM-like (convolutions, fully connected): the register
 *     tile's padding, M (pixels) over M rounded up to mr times N (output
 *     channels) over N rounded up to nr, with nr = 2 vectors of lanes and
 *     mr = vector registers / 4 (accumulators take half the register
 *     file): 8 x 8 in FP32 on a 128-bit core with 32 registers (ruy's ARM64
 *     float kernel); depthwise convolutions put channels in the lanes;
 *   - mobile GPU (TFLite's GPU delegate, PHWC4 layout): a work item
 *     computes one 4-channel output slice of one pixel, so channels pad to
 *     4 and work items to a whole wave of the ALU lanes (peak / 2 / clock).
 * efficiency is the library's fraction of the SIMD peak on those kernels,
 * fitted per device class by `strata calibrate --edge` (tools/calibrate-edge)
 * on calibration/edge-reference.csv: on the CPU one for GEMM-like kernels
 * and one for depthwise convolutions (TFLite runs them with different
 * kernels, im2col + GEMM against a direct NEON loop), on the GPU one for
 * all; vector ops (pooling, adds) run at the peak and
 * are memory bound. mem_coef is the GPU table's coefficient for non-HBM
 * DRAM (the elementwise class's dram_other), LPDDR being such memory.
 * A mobile GPU kernel also costs gpu_kernel_s on the GPU (fitted): the gap
 * between dependent dispatches; the host's enqueue (the preset's
 * dispatch_overhead_us) overlaps the GPU. On the CPU the interpreter's
 * per-operator cost and the kernel run one after the other on the core.
 *
 * Graph rewrites the TFLite converter makes are applied when composing
 * (st_edge_folds): an inference batch norm folds into the convolution
 * before it and a ReLU or ReLU6 fuses into its producer (GELU and SiLU run
 * as operators of their own). The fits are of FP32 CPU and FP16 GPU runs of
 * convolutional networks; other dtypes and transformers are priced with
 * the same efficiencies, an extrapolation. On a mobile GPU the step ends
 * with one more host round trip (the preset's dispatch_overhead_us); on a
 * CPU it ends with the last operator.
 */
#ifndef STRATA_EDGE_H
#define STRATA_EDGE_H

#include "gpu/gpu.h"
#include "workload/workload.h"

typedef struct st_edge_coef {
    double cpu_efficiency; /* mobile CPU: fraction of SIMD peak on GEMM-like ops (fitted) */
    double cpu_dw_efficiency; /* mobile CPU: the same on depthwise convolutions (fitted) */
    double gpu_efficiency; /* mobile GPU: the same for the GPU delegate's kernels (fitted) */
    double gpu_kernel_s;   /* mobile GPU: GPU-side cost per kernel, s (fitted) */
    double sigma_cpu;      /* log-space spread of the fit's residuals, per class */
    double sigma_gpu;
    int n_fit_cpu, n_fit_gpu; /* reference models each was fitted on */
} st_edge_coef;

typedef struct st_edge_est {
    double compute_s, memory_s, fixed_s, time_s;
    double efficiency; /* fill x the class's efficiency */
    double sigma;
    const char *bound;
} st_edge_est;

/* One operator (one call) on an edge device. mem_coef: the DRAM
 * coefficient (see above). ST_EINVAL for a dtype the device lacks or an
 * operator the model does not price. */
int st_edge_op_time(const st_edge *e, const st_edge_coef *c, double mem_coef, const st_op *op,
                    st_edge_est *out, st_error *err);
/* Does op i vanish into the one before it (batch norm folded, ReLU/ReLU6
 * fused) when converted for TFLite? */
int st_edge_folds(const st_oplist *ops, size_t i);

/* The dtype TFLite runs a float model in on this device when none is
 * asked for: FP32 on a CPU, FP16 on a GPU that has it. */
st_dtype st_edge_default_dtype(const st_edge *e);

/* Load calibration/edge.yaml (path NULL: the data root's). */
int st_edge_coef_load(const char *path, st_edge_coef *out, st_error *err);
int st_edge_coef_write(FILE *f, const st_edge_coef *c, const char *header);

#endif
