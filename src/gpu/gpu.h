/*
 * gpu: the latency of one kernel on one GPU, from the GPU's spec sheet and a
 * small table of calibrated coefficients (calibration/gpu-kernels.yaml).
 *
 * Every kernel class has a list of features, each a time in seconds that a
 * physical mechanism would take on this GPU at its spec-sheet peak (the
 * FLOPs of the padded tiles one SM runs, at the sustained per-SM rate; the
 * compulsory DRAM bytes at peak bandwidth; a per-CTA prologue counted in
 * cycles; ...). The kernel time is the fixed costs plus the longer of the
 * compute and memory sides, each a coefficient-weighted sum of its features
 * (st_kclass_time): a coefficient of 1.25 on the compute feature means
 * "80% of peak".
 * Because the features carry all the device dependence, a GPU with no
 * measurements is predicted from its preset alone.
 *
 * Streaming DRAM: bytes over the peak bandwidth, one coefficient for HBM
 * behind a Volta-or-later controller and one for other memory. Measured
 * large FP32 adds stream HBM at 87-92% of peak from Volta to Hopper (V100
 * 91.9%, A100 40GB and 80GB 87.1-87.2% in NeuSight's sweeps; H100 SXM
 * 90.4% and H200 89.5% in data/measured), whatever the bandwidth per SM
 * (11.3 to 36.4 GB/s): a per-SM in-flight limit, which an earlier version
 * fitted on the A100 80GB, predicted 82% and 75% for the two Hopper parts.
 *
 * GEMMs use a tile/wave model: the library tile (e.g. 128x64) is picked the
 * way cuBLAS's heuristics behave (the candidate that the model predicts to
 * be fastest, among the tiles the library uses on that architecture for
 * that kind of launch, plain or batched), output tiles are split along K
 * when they are too few to fill the SMs, and the SM that runs the most
 * tiles sets the time (wave quantisation). The main loop has a throughput
 * side (the tile's FLOPs and operand staging) and a latency side (each K
 * step waits on its loads, once per round of the tiles an SM holds at
 * once); they overlap or add as the class's fitted overlap mode says (the
 * shipped SIMT fit adds them); a per-CTA prologue/epilogue adds.
 *
 * Sustained clock: a GPU whose TDP is small against its peak rate (T4, P4,
 * L4, A100 PCIe 40GB on tensor cores) cannot hold its boost clock under
 * dense math. The compute peak is scaled by min(1, (TDP / peak TFLOP/s) / e),
 * where e, the power per TFLOP/s at boost, is e_ref (fitted in calibration,
 * W per FP32 TFLOP/s on a 12 nm part: V100, T4) times process_nm / 12, since
 * energy per operation falls about in proportion to the node (TSMC's own
 * iso-speed figures: 16FF+ to N7 -60%, N7 to N5 -30%, against 7/16 and 5/7),
 * and times tc_energy_ratio for tensor-core math. Nodes of 12 nm and up
 * are not scaled: TSMC's 12FFN (T4, V100) is an optimised 16FF+ (P4, P100)
 * at the same design rules, one energy class. Measured, not assumed: scaling
 * 16 nm by 16/12 and refitting takes the T4's kernels-test MAPE from 13.9%
 * to 20.6% and the P4's from 10.3% to 11.6%. A preset without process_nm
 * is taken at the 12 nm reference.
 *
 * Host dispatch (the framework's per-operator CPU cost) is a separate term
 * (st_kernel_est.dispatch_s): the compose layer overlaps it with GPU time,
 * so an op issued back to back costs max(dispatch, kernel).
 */
#ifndef STRATA_GPU_H
#define STRATA_GPU_H

#include "core/core.h"
#include "hw/hw.h"

/* Fitted model families (one coefficient vector each). */
typedef enum st_kclass {
    ST_KC_GEMM_SIMT = 0, /* FP32 GEMM on CUDA cores / vector ALUs */
    ST_KC_GEMM_TC,       /* GEMM on tensor / matrix cores (TF32, FP16, BF16, FP8, INT8,
                            INT4; FP32 on AMD's MFMA) */
    ST_KC_CONV,          /* convolution as implicit GEMM (FP32, SIMT) */
    ST_KC_ELEMENTWISE,   /* unary, binary, broadcast; rotary; activation */
    ST_KC_NORM,          /* layer norm, RMS norm (row reductions) */
    ST_KC_SOFTMAX,       /* row softmax */
    ST_KC_COUNT
} st_kclass;
const char *st_kclass_name(st_kclass c);

/* What the caller asks about: one kernel (a framework op may launch more). */
typedef enum st_kop {
    ST_KOP_GEMM = 0,   /* y = x W: b x (m x k) . (k x n), W shared across b */
    ST_KOP_BMM,        /* b independent (m x k) . (k x n) */
    ST_KOP_GROUPED,    /* MoE experts: b groups (experts), m tokens each on average */
    ST_KOP_CONV,       /* implicit GEMM: m = N P Q, n = K_out / groups, k = C/groups R S */
    ST_KOP_FLASH,      /* fused attention (FlashAttention-2), prefill or decode */
    ST_KOP_ELEMENTWISE,
    ST_KOP_SOFTMAX,
    ST_KOP_NORM,
    ST_KOP_EMBEDDING,  /* row gather */
    ST_KOP_TOPK,       /* MoE router: softmax + top-k over rows of experts */
    ST_KOP_COUNT
} st_kop;
const char *st_kop_name(st_kop k);
int st_kop_parse(const char *s, st_kop *out);

/* Which kernel runs a weight-only INT4 GEMM (W4A16). Marlin (vLLM's GPTQ
 * and AWQ path) stages the weights through shared memory several stages
 * ahead of its MMAs; PyTorch's tinygemm (torch._weight_int4pack_mm, the
 * int4 layout of torchao and gpt-fast) gives each 16x8 output tile its own
 * thread block, which loads its A rows and weights straight from global
 * memory (aten/src/ATen/native/cuda/int4mm.cu). */
typedef enum st_int4_kernel { ST_INT4_MARLIN = 0, ST_INT4_TINYGEMM } st_int4_kernel;
const char *st_int4_kernel_name(st_int4_kernel k);
int st_int4_kernel_parse(const char *s, st_int4_kernel *out);
struct st_kernel;
/* Why tinygemm cannot run kernel k on g, in a phrase ("its activations are
 * BF16"); NULL where it can: op gemm, NVIDIA with BF16 tensor cores
 * (Ampere and later), BF16 activations, N a multiple of its 8-column tiles
 * and K of 128 (8 packed k-tiles of 16, and the quantisation group). */
const char *st_tinygemm_unsupported(const st_gpu *g, const struct st_kernel *k);

typedef struct st_kernel {
    st_kop op;
    st_dtype dtype;
    int weight_only_int4; /* W4A16: weights INT4, dequantised to dtype in the main loop */
    st_int4_kernel int4_kernel; /* W4A16: the kernel that runs it (default Marlin) */
    /* GEMM, BMM, GROUPED, CONV */
    long long b, m, n, k;
    long long groups;     /* CONV: groups (multiplies the independent GEMMs) */
    /* CONV: the square filter's side and the stride (0: not known). cuDNN
     * runs 3x3 stride-1 dense convolutions by Winograd or FFT, doing fewer
     * multiplies than the direct FLOP count: that is the conv class's domain
     * (every NeuSight conv is one). Any other conv, or one of unknown
     * filter, is an implicit GEMM at the FP32 GEMM class's rate, which no
     * algorithm trick lifts past the peak (st_conv_fast). */
    long long filter, stride;
    /* CONV on tensor cores: the activations are NHWC (channels last, as
     * torch.compile's layout optimisation or .to(memory_format=
     * torch.channels_last) leaves them); 0: PyTorch's default NCHW, which
     * cuDNN transposes around the kernel (see conv_layout_passes) */
    int channels_last;
    /* FLASH */
    long long heads, kv_heads, q_len, kv_len, head_dim;
    int causal;
    int backward;         /* FLASH: the backward (recompute S; dV, dP, dQ, dK) */
    int fa3;              /* FLASH: FlashAttention-3 (Hopper only; 0: FlashAttention-2) */
    double kv_bytes;      /* FLASH: bytes per cached K/V element (FP8 KV cache: 1); 0: the dtype's */
    /* vector ops: rows x cols elements */
    long long rows, cols;
    int n_in, n_out;      /* full-size tensors read and written (elementwise) */
    double flops_per_elem;
    double bytes_total;   /* vector ops: when > 0, the bytes moved (pooling, optimizer) */
    /* dispatch class of the framework op (see st_dispatch) */
    int dispatch;
    /* GEMM, BMM, GROUPED, FLASH: the operands come from DRAM (a model step,
     * whose working set is far beyond L2), not from a benchmark loop that
     * re-reads the same tensors: the kernel then takes at least as long as
     * the best streaming kernel needs for its bytes (see st_kernel_estimate) */
    int cold;
    /* vector ops written to load one element per thread per instruction
     * (vLLM/Sarathi's norm, activation and rotary kernels, one block per
     * row; PyTorch's non-vectorized elementwise kernel, taken for broadcast
     * and strided operands, st_op.scalar_loads): the warp-wide memory
     * instructions they issue in all, split into those that go past L1 and
     * those L1 serves. Each SM retires such requests at a limited rate
     * (its outstanding misses over the memory latency; st_gpu_coef.lsu_cycles),
     * which bounds these kernels well below DRAM bandwidth on HBM parts. 0:
     * the framework's vectorised kernels (16 bytes per thread per
     * instruction), whose request rate is not modelled. NVIDIA only: the
     * cost is fitted on NVIDIA SMs and 32-lane warps. */
    double mem_requests;  /* those that miss the SM's L1: DRAM/L2 loads, stores */
    double mem_hits;      /* those served by L1 (a row re-read, a small table) */
    double lsu_blocks;    /* thread blocks that work spreads over; 0: one per row */
    /* elements whose source and destination offsets the kernel works out
     * with PyTorch's TensorInfo arithmetic, three 32-bit divisions by the
     * row width per element (index_select's indexSelectLargeIndex, the
     * embedding's forward): SM-bound integer work priced by
     * st_gpu_coef.index_cycles. 0: none. */
    double index_elems;
    /* NORM: 1 for RMSNorm (a sum of squares, then a scale), 0 for a norm
     * that keeps Welford statistics (layer norm, group norm); sets the
     * kernel's ALU work when flops_per_elem is 0 (see norm_lane_ops) */
    int rms;
    /* The PyTorch release that runs the op, as major x 100 + minor (2.11:
     * 211); 0: the release the coefficient table was fitted on
     * (ST_TORCH_FITTED, NeuSight's and VIDUR's 2.1). It changes a price only
     * where releases launch different kernels for one op: see
     * st_embedding_vectorized. */
    int torch_ver;
    /* 1: priced as part of a step that keeps the GPU busy for seconds (a
     * training iteration), where the board sits at its power limit: a
     * tensor-core kernel's work at most tdp_w / tc_sustained_w_per_tflops
     * (st_kernel_est.bound "power"). 0: as benchmarks time a kernel alone,
     * at boost. */
    int sustained;
    /* TOPK (a MoE router over rows = tokens, cols = experts; k = the
     * experts each token keeps, 0: taken as 2): 1 for one fused kernel
     * (vLLM's and SGLang's topk_softmax, a warp per token, softmax and
     * selection in registers), 0 for PyTorch's eager path (Hugging Face's
     * Mixtral and Qwen-MoE, Megatron-LM's default router): the FP32 cast of
     * BF16 logits, the softmax, gatherTopK's radix select and a bitonic
     * sort of the winners (see topk_estimate in kernel.c) */
    int router_fused;
} st_kernel;

/* The PyTorch release of the calibration data (NeuSight's sweeps: p2.1.0). */
#define ST_TORCH_FITTED 201
/* The first release whose index_select (the embedding's forward) copies
 * rows with vectorized_gather_kernel: PyTorch PRs 151490 ("faster gather
 * implementation") and 151715 ("Use gather in index_select") landed in
 * April-May 2025, before the 2.8 branch cut; the H100 sweeps in
 * data/measured (2.11) run it. */
#define ST_TORCH_VECTORIZED_GATHER 208
/* The first release whose forward softmax (SoftMax.cu's host_softmax) sends
 * rows of up to 2,048 elements (8 KiB) to the persistent warp kernel (1,024
 * before) and longer rows that a 1,024-thread block covers in under 10
 * elements a thread (up to 9,216) to cunn_SoftMaxForwardReg, which holds
 * the row in registers: PyTorch PR 144679 ("Improve softmax's perf in
 * cuda", January 2025, before the 2.7 branch cut). */
#define ST_TORCH_SOFTMAX_REG 207
/* Parse a PyTorch version: "2.11", "2.11.0", "v2.8" or NeuSight's "p2.1.0",
 * with a pre-release (a0, rc1, .dev20250601) and a local part (+cu128)
 * ignored, into major x 100 + minor. ST_EINVAL for anything else. A
 * nightly counts as its release, though one may predate a change the
 * release has (st_embedding_vectorized's PRs landed in 2.8's nightlies). */
int st_torch_parse(const char *s, int *ver);
/* The release an op is priced for: k->torch_ver, or ST_TORCH_FITTED. */
int st_torch_effective(int ver);
/* 1 when the embedding gather runs PyTorch's vectorized_gather_kernel (one
 * block per index, 16-byte copies: a plain copy at memory speed, with no
 * per-element offset arithmetic): a release from ST_TORCH_VECTORIZED_GATHER
 * on and rows whose bytes are a multiple of 16 (the kernel's alignment;
 * other rows take the per-element path, priced as index_select's). */
int st_embedding_vectorized(const st_kernel *k);
/* The kernel PyTorch runs a forward softmax on (k->op SOFTMAX, one input)
 * for its release (st_torch_effective), the GPU's vendor and the row
 * length: the persistent warp kernel (a row per warp, in registers),
 * cunn_SoftMaxForwardReg (a row per 1,024-thread block, in registers; from
 * ST_TORCH_SOFTMAX_REG, CUDA builds only: ROCm's take their fast block
 * softmax instead) or the block kernels that read the row again for each
 * pass (cunn_SoftMaxForward, or its variants). */
typedef enum { ST_SMX_WARP, ST_SMX_REG, ST_SMX_BLOCK } st_softmax_kernel;
st_softmax_kernel st_softmax_path(const st_gpu *g, const st_kernel *k);
const char *st_softmax_kernel_name(st_softmax_kernel p);
/* A tensor-core kernel's most TFLOP/s in datatype t under sustained load
 * (st_kernel.sustained): tdp_w / tc_sustained_w_per_tflops at the 16-bit
 * rate, scaled by t's peak over the 16-bit peak (a datatype's peak draws
 * the power the 16-bit one does); 0 where the board has no measured figure */
double st_gpu_sustained_tflops(const st_gpu *g, st_dtype t);
/* cunn_SoftMaxForwardReg's elements a thread: ceil(cols / 1024) */
double st_softmax_reg_count(double cols);
/* TOPK: the experts each token keeps (k->k; 0: 2), at most the columns */
double st_topk_k(const st_kernel *k);
/* Waves of PyTorch's single-block top-k (sbtopk::gatherTopK) over the SMs:
 * a block per row of min(cols rounded up to a warp, 1024) threads, as many
 * at once per SM as its thread and block limits allow. */
double st_topk_waves(const st_gpu *g, double rows, double cols);
/* 1 where torch.topk takes its multi-block path instead (PyTorch
 * TensorTopK.cu should_use_multiblock, the CUB build: e.g. more than 4,000
 * rows of 400 or more columns); strata prices the single-block path there
 * too, unmeasured (the `kernel topk` output says so). */
int st_topk_multiblock(double rows, double cols);


/* Framework dispatch classes: the per-op host cost differs between them. */
typedef enum st_dispatch {
    ST_DISP_BMM = 0, ST_DISP_LINEAR, ST_DISP_CONV, ST_DISP_ELEMENTWISE, ST_DISP_NORM,
    ST_DISP_SOFTMAX, ST_DISP_OTHER, ST_DISP_COUNT
} st_dispatch;
const char *st_dispatch_name(st_dispatch d);

/* A convolution cuDNN can run by a fast algorithm (Winograd, FFT): dense
 * (one group), 3x3, stride 1, on a GPU whose library has those kernels
 * (st_gpu_winograd_conv). */
int st_conv_fast(const st_gpu *g, const st_kernel *k);

#define ST_GPU_MAX_FEATURES 10
#define ST_GPU_MAX_TILES 16
/* suffix of a family's batched-GEMM tile set key in st_gpu_coef.tiles */
#define ST_TILES_BATCHED ".bmm"

typedef struct st_tile {
    int m, n;
} st_tile;

/* one architecture family's SM-side cost (st_gpu_coef.epilogue,
 * .norm_row, .norm_iter) */
typedef struct st_arch_cycles {
    char arch[24];  /* family, as st_gpu_family names it */
    double cycles;  /* SM cycles per unit of the table's work */
} st_arch_cycles;
#define ST_ARCH_CYCLES_MAX 8

typedef struct st_gpu_coef {
    double e_ref_w_per_tflop;  /* sustained-clock reference (see above) */
    double tc_energy_ratio;    /* tensor FLOP energy / FP32 SIMT FLOP energy */
    /* Row kernels (norms, softmax) re-read each row; the re-read hits L2
     * with probability 1 / (1 + (W / (l2_reuse_share * L2))^l2_reuse_sharpness),
     * W the rows the SMs hold at once (launch configuration x row bytes). A
     * share below 1 stands for what else the cache holds meanwhile (the
     * rows' outputs, the next rows' first reads); the sharpness for how
     * abruptly hits stop once W passes it. The sharpness also shapes how
     * much of a whole tensor of T bytes L2 keeps between passes (the same
     * curve with T against the whole L2). Both are fitted by `strata calibrate`
     * (a grid search); a table without them (0) gives no hits and no
     * L2-resident traffic. */
    double l2_reuse_share;
    double l2_reuse_sharpness;
    /* GEMM operand panels: a wave of CTAs shares its A and B panels through
     * L2 while it stays in step along K; with F the wave's panels over the
     * whole K, the share still shared is 1 / (1 + (F / (span x L2))^sharpness)
     * and the rest is re-fetched per CTA (the "refetch" feature). Fitted by
     * `strata calibrate` (a grid search); 0 (a table without them) turns the
     * re-fetch off. */
    double gemm_reuse_span;
    double gemm_reuse_sharpness;
    /* SM time per warp-wide memory instruction of a kernel that moves one
     * element per thread per instruction (st_kernel.mem_requests), in SM
     * cycles at the boost clock: an SM keeps a bounded number of misses in
     * flight, so such a kernel is bound by its instruction count rather than
     * by bytes. Fitted by `strata calibrate` (a 2-D grid, with
     * lsu_hit_share, on the VIDUR A100 profiles of those kernels); 0 (a
     * table without it) turns it off. Cycles, not nanoseconds: the A100
     * rows fit either way, and on the A40 rows, held out (1.74 GHz against
     * the A100's 1.41), cycles bring the rotary kernel from 8.4-20.2% to
     * 8.1-15.2% per TP degree and the activation from 4.2-11.4 to 4.0-10.6. */
    double lsu_cycles;
    double lsu_hit_share;  /* an L1 hit's share of that time (fitted with it) */
    /* SM cycles per element of index_select (st_kernel.index_elems): its
     * 128-thread blocks, at most 8 per SM (aten/src/ATen/native/cuda/
     * Indexing.cu), loop over the elements doing the offset divisions, so
     * the time is elements x cycles over the busy SMs' clock, whatever the
     * memory. Fitted by `strata calibrate` (a 1-D grid on the VIDUR A100
     * embedding profiles); 0 (a table without it) turns it off. */
    double index_cycles;
    /* SM cycles per pass of PyTorch's single-block radix select
     * (sbtopk::gatherTopK, the eager MoE router's top-k; see
     * st_kernel.router_fused): a pass scans the block's slice, counts one
     * 2-bit digit into a shared-memory histogram with warp votes and
     * atomics, and crosses three barriers, a chain of dependent latencies
     * rather than throughput. Fitted by `strata calibrate --ops` (a 1-D grid
     * on the GPU-bound router rows of strata's own sweeps); 0 (a table
     * without it) prices no selection time. */
    double topk_pass_cycles;
    /* SM cycles per element of the forward softmax's register-resident
     * kernels (st_softmax_path), a floor under their memory-side time: the
     * persistent warp kernel (softmax_warp_cycles, per element of a row)
     * and cunn_SoftMaxForwardReg (softmax_reg_cycles, per register slot:
     * 1,024 x st_softmax_reg_count a row). Each issues scalar loads, two
     * reductions and two exponentials an element, and on Hopper runs at
     * the same rate per SM cycle whatever the datatype and the HBM (H100
     * and H200 alike): bound by the SM, not by memory. Fitted by `strata
     * calibrate --ops` (a 1-D grid each on the softmax rows of strata's own
     * sweep, DIR/kernels-test/softmax.csv); 0 (a table without them): no
     * floor. */
    double softmax_warp_cycles;
    double softmax_reg_cycles;
    /* SM cycles per L1 wavefront of tinygemm's loads (st_int4_kernel), a
     * floor under its time: every warp loads its A fragment with four
     * 32-bit loads per k-tile, each spanning 8 rows K elements apart, so a
     * load instruction costs the L1 one wavefront per row it touches, and
     * its 16-row tiles re-read A once per 8 output columns. Fitted by
     * `strata calibrate --ops` (a 1-D grid on the tinygemm rows of strata's
     * own sweep, DIR/ops.csv); 0 (a table without it): pricing tinygemm
     * is an error (without its floor it would come out several times fast). */
    double tinygemm_wavefront_cycles;
    /* SM cycles per 128-byte line of output a CUDA-core library GEMM's
     * epilogue stores (gemm, bmm, grouped, conv; not fused attention, which
     * no rate was measured on), per architecture family (key "hopper", any
     * family a preset's arch names), a floor under the epilogue term: the
     * SM drains its output tiles at this rate however fast the memory is.
     * It prices through the class's epilogue coefficient, so a table with
     * a rate needs that coefficient above 0. On the calibration GPUs (Pascal to Ampere) the
     * stores are DRAM-bound: a batched GEMM's time at K = 0 (the fixed
     * part, extrapolated over K = 64-256) is about half the output's DRAM
     * write time on the A100 40GB and 80GB alike, and scales with their
     * bandwidth. On Hopper it does not: 1.5x that write time on the H100
     * and 1.9x on the H200, the same time per byte within 14% where the
     * H200's HBM is 43% faster, so the SM, not the memory, sets it
     * (cuBLAS runs Ampere's sm80 SIMT kernels there, four warps to a
     * 128x128 tile). Fitted by `strata calibrate --ops` per family present
     * in a sweep's DIR/kernels-test/{bmm,linear}.csv FP32 rows (a 1-D grid
     * each); a family without an entry keeps the DRAM term alone. A line
     * is ST_EPILOGUE_LINE bytes (a warp's 4-byte stores). */
    st_arch_cycles epilogue[ST_ARCH_CYCLES_MAX];
    int n_epilogue;
    /* SM cycles of PyTorch's vectorized_layer_norm_kernel forward (the
     * layer norm's one-kernel path: one 128-thread block per row, 4-element
     * vectors, so ceil(cols / 512) iterations of its loops whatever the
     * datatype), a floor under its memory-side time, per architecture
     * family: norm_row_cycles per row plus norm_iter_cycles per iteration
     * per 4 bytes of element (an FP32 iteration; a 16-bit one costs half),
     * the busiest SM's rows. A row costs by its iterations, not only its
     * bytes: 768 and 1,024 FP32 columns (two iterations each) take the same
     * time. The halving is the form that fits, not derived: a 16-bit
     * iteration does the same four Welford updates a thread, but the H100's
     * and H200's BF16 rows cost about half an FP32 iteration (with whole
     * iterations, every pair of cycles that brought the H200's FP32 rows
     * under 10% put its BF16 rows at 14-34%).
     * On Hopper the cost per SM cycle is the same on the H100 and the H200
     * whatever the HBM: rows of up to 1,600 FP32 columns are bound by the
     * SM on both (the H200's 43% faster HBM gains them nothing), which a
     * memory-side price misses by 22-35% on the H200. On the A100, cycles
     * like these over-price the layer norm (a prototype's 300 and 250 took
     * NeuSight's A100 80GB rows from 6.0 to 6.8%), so it is per family.
     * Not the RMSNorm (no Welford update; its rows run faster) nor the
     * backward. Fitted by `strata calibrate --ops` per family present in a
     * sweep's DIR/kernels-test/ln.csv (a 2-D grid on its layer-norm rows);
     * a family without an entry keeps the memory-side price. */
    st_arch_cycles norm_row[ST_ARCH_CYCLES_MAX];
    int n_norm_row;
    st_arch_cycles norm_iter[ST_ARCH_CYCLES_MAX];
    int n_norm_iter;
    struct {
        int n;                 /* features in use (must match the code) */
        double beta[ST_GPU_MAX_FEATURES];
        double sigma;          /* log-space sd of residuals (spread) */
        int sum;               /* 1: compute and memory add (no overlap), 0: the longer counts */
        int n_fit;             /* samples it was fitted on */
    } cls[ST_KC_COUNT];
    double dispatch_s[ST_DISP_COUNT]; /* framework per-op host cost, eager mode */
    /* per-op overhead of a timing harness that synchronises around every op
     * (NeuSight's kernel sweeps): measured = max(dispatch, harness + kernel).
     * A property of how the calibration data was taken, not of the GPU:
     * used to score against such data, never in a model step. */
    double harness_s[ST_DISP_COUNT];
    /* tiles the library uses, per architecture family, learned from the
     * kernel names: key "ampere" for plain GEMMs, "ampere.bmm" for batched
     * ones (cuBLAS's batched SGEMM on Ampere uses 128x128 alone, its plain
     * SGEMM six tiles); a family without a ".bmm" set uses its plain set */
    struct {
        char arch[24];
        int n;
        st_tile t[ST_GPU_MAX_TILES];
    } tiles[16];
    int n_tile_sets;
    char source[512];          /* where it was loaded from */
} st_gpu_coef;

/* Fraction of a row kernel's re-reads that hit L2 when w bytes of rows are
 * in flight across the GPU (0..1). */
double st_row_reread_hit(const st_gpu *g, const st_gpu_coef *c, double w);

/* Names of the features of a class, in order; returns the count. */
int st_kclass_features(st_kclass c, const char *const **names);
/* Index of a feature of a class by name ("launch", "compute", ...), -1 if absent. */
int st_kclass_feature(st_kclass c, const char *name);

/* How a feature enters the kernel time: fixed costs add (launch, per-CTA
 * prologue); the compute side (math, operand staging, vector ALU, row
 * passes) and the memory side (DRAM, L2, a GEMM main loop's load latency)
 * overlap, so the longer of the two counts: t = sum(fixed) +
 * max(sum(compute), sum(memory)), unless the class's fit says they add. */
typedef enum st_kfgroup { ST_KF_FIXED = 0, ST_KF_COMPUTE, ST_KF_MEMORY } st_kfgroup;
st_kfgroup st_kclass_feature_group(st_kclass c, int f);
/* The time of features x under coefficients beta (nx features of class c);
 * compute, memory, fixed (may be NULL) get the coefficient-weighted parts.
 * sum: the class's sides add instead of overlapping (the fit picks, per
 * class, whichever describes its data better: see calib/fit.c). */
double st_kclass_time(st_kclass c, const double *beta, const double *x, int nx, int sum,
                      double *compute, double *memory, double *fixed);

typedef struct st_kernel_est {
    double gpu_s;      /* kernel time on the GPU */
    double dispatch_s; /* host cost of launching it from an eager framework */
    double sigma;      /* log-space sd; 90% band = gpu_s * exp(+-1.645 sigma) */
    double lo_s, hi_s; /* 90% band of gpu_s */
    st_kclass cls;
    /* GEMM-like details (0 for others) */
    st_tile tile;
    int split_k;
    double tiles, waves, sm_work; /* output tiles, waves over SMs, tiles on the busiest SM */
    double flops, bytes;
    double compute_s, memory_s;   /* the two leading features, coefficient-weighted */
    double lsu_s;                 /* memory-instruction time per SM (on the compute side) */
    double index_s;               /* index_select's offset arithmetic per SM (compute side) */
    double layout_s;              /* conv on tensor cores: cuDNN's NCHW <-> NHWC transposes, in gpu_s */
    double alu_min_s;             /* elementwise: the least time of the ALU side, the op's
                                   * FLOPs at the dtype's vector peak (the fitted
                                   * coefficient, 0 where no calibration kernel is
                                   * ALU-bound, cannot price ALU work below it) */
    const char *bound;            /* "compute", "memory" or "latency" */
    double floor_s;               /* what no kernel can beat: its FLOPs at the GPU's fastest
                                   * pipe for the dtype, and the bytes no cache can hold
                                   * (beyond L2 + LLC) at peak DRAM bandwidth; the band's
                                   * low end never goes below it */
    double power_factor;          /* sustained / boost clock */
    double x[ST_GPU_MAX_FEATURES];/* features (s) */
    int nx;
} st_kernel_est;

/* Load coefficients from a file, or (path NULL) from the data root's
 * calibration/gpu-kernels.yaml. */
int st_gpu_coef_load(const char *path, st_gpu_coef *out, st_error *err);
/* The first leading feature of class cls (a GEMM's compute, a stream's
 * DRAM bytes) whose coefficient is not above 0, or -1: a table with one
 * would price that work at no time, so it is neither loaded nor written. */
int st_gpu_coef_zero_leading(const st_gpu_coef *c, st_kclass cls);
/* Write as YAML (the calibrate command's output). */
int st_gpu_coef_write(FILE *f, const st_gpu_coef *c, const char *header);

/* The architecture family used for tile sets ("volta", "ampere", "cdna2"...). */
const char *st_gpu_family(const st_gpu *g);
/* 0 when FlashAttention-3 runs this: a Hopper GPU, FP16/BF16/FP8 inputs, FP8
 * forward only; else ST_EINVAL with the reason (the one check every layer uses) */
int st_fa3_check(const st_gpu *g, st_dtype dt, int backward, st_error *err);
/* The process node e_ref is stated at (nm). */
#define ST_POWER_REF_NM 12.0
/* The elementwise class's time coefficient for streaming non-HBM DRAM
 * (GDDR, LPDDR, Pascal's HBM2): bytes / bandwidth x this. */
double st_gpu_coef_dram_other(const st_gpu_coef *c);
#define ST_EPILOGUE_LINE 128.0
/* The table's epilogue cycles per output line for g's family (0: none). */
double st_gpu_coef_epilogue_cycles(const st_gpu_coef *c, const st_gpu *g);
/* A per-family table's entry for g's family (0: none). */
double st_arch_cycles_for(const st_arch_cycles *t, int n, const st_gpu *g);
/* PyTorch's vectorized layer norm forward: ST_LN_THREADS threads a row,
 * ST_LN_VEC-element vectors (layer_norm_kernel.cu, any datatype) */
#define ST_LN_THREADS 128
#define ST_LN_VEC 4
/* The SM cycles one row of `cols` elements of es bytes costs that kernel
 * on g's family (st_gpu_coef.norm_row; 0: the table has none for it). */
double st_layer_norm_row_cycles(const st_gpu_coef *c, const st_gpu *g, double cols, double es);
/* Sustained / boost clock factor for a math pipe (tensor: 1, else 0). */
double st_gpu_power_factor(const st_gpu *g, const st_gpu_coef *c, int tensor);

/* Class a kernel is costed with on this GPU. */
st_kclass st_kernel_class(const st_gpu *g, const st_kernel *k);
/* Does this GPU run the dtype at all (matrix or vector path)? */
int st_gpu_supports(const st_gpu *g, st_dtype t);

/* Estimate one kernel. tile: force a tile (m,n > 0) and split (>0) for
 * calibration against named kernels; NULL to let the heuristic choose.
 * Returns 0, or ST_EINVAL with a sentence when the GPU lacks the dtype or the
 * shape is empty. */
int st_kernel_estimate(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k,
                       const st_tile *force_tile, int force_split, st_kernel_est *out,
                       st_error *err);

/* Parse a library kernel name for its tile ("volta_sgemm_128x64_nn" ->
 * 128x64, "sgemm_128x128x8_NT_vec" -> 128x128). 0 when none. */
int st_parse_kernel_tile(const char *name, st_tile *out);

#endif
