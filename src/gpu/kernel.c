/* Kernel latency: features from the spec sheet, times calibrated coefficients. */
#include "config.h"
#include "gpu/gpu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const kclass_names[ST_KC_COUNT] = {
    "gemm_simt", "gemm_tc", "conv", "elementwise", "norm", "softmax",
};
const char *st_kclass_name(st_kclass c)
{
    return (c >= 0 && c < ST_KC_COUNT) ? kclass_names[c] : "?";
}

static const char *const kop_names[ST_KOP_COUNT] = {
    "gemm", "bmm", "grouped", "conv", "flash", "elementwise", "softmax", "norm", "embedding", "topk",
};
const char *st_kop_name(st_kop k)
{
    return (k >= 0 && k < ST_KOP_COUNT) ? kop_names[k] : "?";
}
int st_kop_parse(const char *s, st_kop *out)
{
    for (int i = 0; i < ST_KOP_COUNT; i++)
        if (strcasecmp(s, kop_names[i]) == 0) {
            *out = (st_kop)i;
            return 0;
        }
    return ST_EINVAL;
}

int st_torch_parse(const char *s, int *ver)
{
    if (!s)
        return ST_EINVAL;
    if (*s == 'p' || *s == 'v' || *s == 'V')
        s++;
    long major = 0, minor = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9' && digits < 3; s++, digits++)
        major = major * 10 + (*s - '0');
    if (!digits || *s != '.')
        return ST_EINVAL;
    s++;
    digits = 0;
    const char *m0 = s;
    for (; *s >= '0' && *s <= '9' && digits < 2; s++, digits++)
        minor = minor * 10 + (*s - '0');
    if (!digits || (digits == 2 && *m0 == '0')) /* "2.01" is no release */
        return ST_EINVAL;
    if (*s == '.' && s[1] >= '0' && s[1] <= '9') { /* a patch release */
        s++;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    /* a pre-release (a0, b1, rc2, .dev20250601), then a local part (+cu121) */
    const char *pre[] = {"a", "b", "rc", ".dev"};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        size_t n = strlen(pre[i]);
        if (strncmp(s, pre[i], n) == 0 && s[n] >= '0' && s[n] <= '9') {
            s += n;
            while (*s >= '0' && *s <= '9')
                s++;
            break;
        }
    }
    if (*s == '+') { /* a local version: letters, digits and dots (cu128, git1a2b3c) */
        if (!s[1])
            return ST_EINVAL;
        for (s++; *s; s++)
            if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '.'))
                return ST_EINVAL;
    }
    if (*s)
        return ST_EINVAL;
    if (major < 1 || major > 3) /* releases 1.x and 2.x, and room for a 3.x */
        return ST_EINVAL;
    *ver = (int)(major * 100 + minor);
    return 0;
}

int st_torch_effective(int ver)
{
    return ver > 0 ? ver : ST_TORCH_FITTED;
}

double st_topk_k(const st_kernel *k)
{
    double kk = k->k > 0 ? (double)k->k : 2;
    return k->cols > 0 && kk > (double)k->cols ? (double)k->cols : kk;
}

int st_embedding_vectorized(const st_kernel *k)
{
    if (k->op != ST_KOP_EMBEDDING || st_torch_effective(k->torch_ver) < ST_TORCH_VECTORIZED_GATHER)
        return 0;
    double row = (double)k->cols * st_dtype_bytes(k->dtype);
    return row > 0 && fmod(row, 16.0) == 0;
}

double st_gpu_sustained_tflops(const st_gpu *g, st_dtype t)
{
    if (!(g->tc_sustained_w_per_tflops > 0 && g->tdp_w > 0))
        return 0;
    double cap16 = g->tdp_w / g->tc_sustained_w_per_tflops;
    double p16 = g->matrix[ST_BF16].dense > 0 ? g->matrix[ST_BF16].dense : g->matrix[ST_FP16].dense;
    double pk = t >= 0 && t < ST_DTYPE_COUNT ? g->matrix[t].dense : 0;
    return pk > 0 && p16 > 0 ? cap16 * pk / p16 : cap16;
}

double st_softmax_reg_count(double cols)
{
    return ceil(cols / 1024.0);
}

/* host_softmax before 2.7 (and its backward in every release strata
 * prices): the warp kernel for dim_size <= 1024 and dim_size x
 * sizeof(scalar_t) <= 4096, else a block kernel */
static st_softmax_kernel softmax_path_21(double cols, double es)
{
    return cols <= 1024 && cols * es <= 4096 ? ST_SMX_WARP : ST_SMX_BLOCK;
}

st_softmax_kernel st_softmax_path(const st_gpu *g, const st_kernel *k)
{
    double cols = (double)k->cols, es = st_dtype_bytes(k->dtype);
    if (st_torch_effective(k->torch_ver) < ST_TORCH_SOFTMAX_REG)
        return softmax_path_21(cols, es);
    /* from 2.7: the warp kernel to 2048 and 8192 bytes; above, on CUDA, a
     * block of min(dim_size, 1024) threads and potential_register_count =
     * ceil(dim_size / block) < 10 take the register kernel (ROCm builds use
     * their fast block softmax there) */
    if (cols <= 2048 && cols * es <= 8192)
        return ST_SMX_WARP;
    if (g->vendor != ST_VENDOR_NVIDIA)
        return ST_SMX_BLOCK;
    return st_softmax_reg_count(cols) < 10 ? ST_SMX_REG : ST_SMX_BLOCK;
}

const char *st_int4_kernel_name(st_int4_kernel k)
{
    return k == ST_INT4_TINYGEMM ? "tinygemm" : "marlin";
}

int st_int4_kernel_parse(const char *s, st_int4_kernel *out)
{
    if (!strcasecmp(s, "marlin"))
        *out = ST_INT4_MARLIN;
    else if (!strcasecmp(s, "tinygemm"))
        *out = ST_INT4_TINYGEMM;
    else
        return -1;
    return 0;
}

const char *st_tinygemm_unsupported(const st_gpu *g, const st_kernel *k)
{
    if (k->op != ST_KOP_GEMM)
        return "it multiplies one 2-D activation by one weight (op gemm)";
    if (g->vendor != ST_VENDOR_NVIDIA)
        return "its ROCm build (16x16 tiles, wave64) is not modelled";
    if (!(g->matrix[ST_BF16].dense > 0))
        return "it needs BF16 tensor cores (NVIDIA Ampere or later)";
    if (k->dtype != ST_BF16)
        return "its activations are BF16";
    if (k->n % 8)
        return "N must be a multiple of 8 (its output tiles are 8 columns wide)";
    if (k->k % 128)
        return "K must be a multiple of 128 (8 packed k-tiles of 16, and its quantisation groups)";
    return NULL;
}

const char *st_softmax_kernel_name(st_softmax_kernel p)
{
    switch (p) {
    case ST_SMX_WARP:
        return "softmax_warp_forward";
    case ST_SMX_REG:
        return "cunn_SoftMaxForwardReg";
    default:
        return "cunn_SoftMaxForward";
    }
}

static const char *const disp_names[ST_DISP_COUNT] = {
    "bmm", "linear", "conv", "elementwise", "norm", "softmax", "other",
};
const char *st_dispatch_name(st_dispatch d)
{
    return (d >= 0 && d < ST_DISP_COUNT) ? disp_names[d] : "?";
}

/* ---- features ----------------------------------------------------------- */
enum { GF_COMPUTE, GF_OPERAND, GF_DRAM, GF_CTA, GF_KLOOP, GF_LAUNCH, GF_REFETCH, GF_EPILOGUE, GF_N };
static const char *const gemm_features[GF_N] = {
    "compute", "operand", "dram", "cta", "kloop", "launch", "refetch", "epilogue",
};
/* Elementwise kernels: bytes from DRAM (HBM or other), bytes served by L2,
 * vector-pipe work, launch. 'rocm' is the extra per-byte cost of the ROCm
 * builds of the same framework kernels on AMD GPUs (a software stack, shared
 * by every AMD preset). */
enum { VF_DRAM_HBM, VF_DRAM_OTHER, VF_L2, VF_ALU, VF_LAUNCH, EF_ROCM, EF_N };
static const char *const ew_features[EF_N] = {
    "dram_hbm", "dram_other", "l2", "alu", "launch", "rocm",
};
/* Row kernels (norms, softmax): 'stream' is the time the elementwise class's
 * coefficients give their traffic (first pass, and the re-reads that miss L2
 * from DRAM again; a hit costs no bandwidth), so 1 means they stream like the
 * elementwise kernels; 'rows' is a warp-wide pass per row in turn; 'rocm'
 * the ROCm builds' own extra per-byte cost for these kernels; 'rocm_rows'
 * their per-row cost on AMD where a row is reduced across a whole block
 * (LDS and barriers: PyTorch's cunn_SoftMaxForward for rows over 1024
 * elements, the layer norm's block reduction), in units of 1000 CU cycles
 * per row, the busiest CU's rows. NeuSight's MI100 and MI210 softmax sweeps
 * show it: past 1024 columns the time is the A100's per-byte rate (1.08
 * against 1.08 us per MB) plus about 3,000 cycles per row per CU on both
 * chips, where the A100 shows none; rows of up to 1024 (the wave-wide
 * softmax) stream at the general rate. The memory efficiency is learned
 * once, from the far larger elementwise set. */
enum { RF_STREAM, RF_ALU, RF_LAUNCH, RF_ROWS, RF_ROCM, RF_ROCM_ROWS, RF_N };
static const char *const row_features[RF_N] = {
    "stream", "alu", "launch", "rows", "rocm", "rocm_rows",
};

int st_kclass_features(st_kclass c, const char *const **names)
{
    switch (c) {
    case ST_KC_GEMM_SIMT:
    case ST_KC_GEMM_TC:
    case ST_KC_CONV:
        *names = gemm_features;
        return GF_N;
    case ST_KC_ELEMENTWISE:
        *names = ew_features;
        return EF_N;
    case ST_KC_NORM:
    case ST_KC_SOFTMAX:
        *names = row_features;
        return RF_N;
    default:
        *names = NULL;
        return 0;
    }
}

int st_kclass_feature(st_kclass c, const char *name)
{
    const char *const *names;
    int n = st_kclass_features(c, &names);
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static const st_kfgroup gemm_groups[GF_N] = {
    [GF_COMPUTE] = ST_KF_COMPUTE, [GF_OPERAND] = ST_KF_COMPUTE, [GF_DRAM] = ST_KF_MEMORY,
    [GF_CTA] = ST_KF_FIXED,       [GF_KLOOP] = ST_KF_MEMORY,     [GF_LAUNCH] = ST_KF_FIXED,
    [GF_REFETCH] = ST_KF_MEMORY,  [GF_EPILOGUE] = ST_KF_FIXED,
};
static const st_kfgroup row_groups[RF_N] = {
    [RF_STREAM] = ST_KF_MEMORY, [RF_ALU] = ST_KF_COMPUTE, [RF_LAUNCH] = ST_KF_FIXED,
    [RF_ROWS] = ST_KF_COMPUTE,  [RF_ROCM] = ST_KF_MEMORY, [RF_ROCM_ROWS] = ST_KF_MEMORY,
};
static const st_kfgroup ew_groups[EF_N] = {
    [VF_DRAM_HBM] = ST_KF_MEMORY, [VF_DRAM_OTHER] = ST_KF_MEMORY, [VF_L2] = ST_KF_MEMORY,
    [VF_ALU] = ST_KF_COMPUTE,     [VF_LAUNCH] = ST_KF_FIXED,      [EF_ROCM] = ST_KF_MEMORY,
};
static const st_kfgroup *class_groups(st_kclass c)
{
    if (c == ST_KC_GEMM_SIMT || c == ST_KC_GEMM_TC || c == ST_KC_CONV)
        return gemm_groups;
    return c == ST_KC_ELEMENTWISE ? ew_groups : row_groups;
}

st_kfgroup st_kclass_feature_group(st_kclass c, int f)
{
    const char *const *names;
    int n = st_kclass_features(c, &names);
    if (f < 0 || f >= n)
        return ST_KF_FIXED;
    return class_groups(c)[f];
}

/* fixed costs add; the compute and memory sides overlap (the longer
 * counts) or, in sum mode, add */
static double combine(double fixed, double compute, double memory, int sum)
{
    return sum ? fixed + compute + memory : fixed + (compute > memory ? compute : memory);
}

double st_kclass_time(st_kclass c, const double *beta, const double *x, int nx, int sum,
                      double *compute, double *memory, double *fixed)
{
    double part[3] = {0, 0, 0};
    const st_kfgroup *grp = class_groups(c);
    for (int i = 0; i < nx; i++)
        part[grp[i]] += beta[i] * x[i];
    if (compute)
        *compute = part[ST_KF_COMPUTE];
    if (memory)
        *memory = part[ST_KF_MEMORY];
    if (fixed)
        *fixed = part[ST_KF_FIXED];
    return combine(part[ST_KF_FIXED], part[ST_KF_COMPUTE], part[ST_KF_MEMORY], sum);
}

/* ---- hardware helpers ----------------------------------------------------- */
/* FlashAttention-2's query block (Br), and the key block (Bc) of its
 * backward, whose outer loop runs over the keys (Dao 2023, Algorithm 2;
 * 128 for head dims up to 128 in its sm80 kernels, 64 above:
 * Flash_bwd_kernel_traits<256, 64, 64, ...>) */
#define FA_BLOCK_M 128
#define FA_BWD_BLOCK_N 128
#define FA_BWD_BLOCK_N_WIDE 64

/* FlashAttention-2's split-KV (decode) kernel walks the keys in blocks of
 * 256 for head dims up to 64, 128 up to 128 and 64 above
 * (run_mha_fwd_splitkv_dispatch's kBlockN) */
static double fa2_splitkv_block_n(double head_dim)
{
    return head_dim <= 64 ? 256 : head_dim <= 128 ? 128 : 64;
}

/* How many ways FlashAttention-2 splits the keys of `ctas` (batch x heads x
 * query blocks) over `sms` SMs with n_blocks key blocks (flash_api.cpp's
 * num_splits_heuristic): none once the CTAs nearly fill the GPU (80% of the
 * SMs); else, of the splits up to min(128, SMs, key blocks) that change the
 * blocks each split walks, the fewest whose wave efficiency (waves over
 * whole waves) reaches 85% of the best one's. More keys never take fewer
 * splits while the grid stays short, so a longer cache is never priced
 * faster by a jump in the split. */
static int fa2_num_splits(double ctas, double sms, double n_blocks)
{
    if (ctas >= 0.8 * sms || n_blocks <= 1)
        return 1;
    double maxs = 128;
    if (sms < maxs)
        maxs = sms;
    if (n_blocks < maxs)
        maxs = n_blocks;
    /* each eligible split's efficiency once (0: walks the same blocks a
     * split as one fewer), then the fewest within 85% of the best */
    double eff[128], best = 0;
    int m = (int)maxs;
    for (int ns = 1; ns <= m; ns++) {
        double waves = ctas * ns / sms;
        eff[ns - 1] = ns > 1 && ceil(n_blocks / ns) == ceil(n_blocks / (ns - 1)) ? 0 : waves / ceil(waves);
        if (eff[ns - 1] > best)
            best = eff[ns - 1];
    }
    for (int ns = 1; ns <= m; ns++)
        if (eff[ns - 1] > 0 && eff[ns - 1] >= 0.85 * best)
            return ns;
    return 1;
}
/* FlashAttention-3 (Hopper): the keys of a tile's key loop that its
 * pipelining cannot hide, FA3_PROLOGUE x FA3_BLOCK_N = 192 (see the FLASH
 * case of st_kernel_estimate). The product is the one constant set on the
 * FA3 paper's forward figures; it is written as key blocks of 128, the unit
 * of the model's tiles, not as FA3's own block widths (128-176 keys at head
 * dims 64-128) */
#define FA3_BLOCK_N 128
#define FA3_PROLOGUE 1.5
/* The tensor rate that synchronous (Ampere-style) MMAs reach on GPUs with
 * asynchronous warpgroup MMAs (st_gpu_async_mma): see gemm_estimate */
#define ST_SYNC_MMA_SHARE 0.5
const char *st_gpu_family(const st_gpu *g)
{
    return g->arch[0] ? g->arch : "unknown";
}

int st_gpu_supports(const st_gpu *g, st_dtype t)
{
    if (t < 0 || t >= ST_DTYPE_COUNT)
        return 0;
    return g->matrix[t].dense > 0 || g->vector[t] > 0;
}

/* The FP32 SIMT rate: the vector figure, else the matrix one. */
static double simt_peak(const st_gpu *g)
{
    if (g->vector[ST_FP32] > 0)
        return g->vector[ST_FP32];
    return g->matrix[ST_FP32].dense;
}

/* The vector (CUDA-core) rate for dtype t: the preset's figure, else the
 * FP32 SIMT rate (a type with no vector figure of its own, FP8, runs its
 * elementwise math converted) */
static double vector_peak(const st_gpu *g, st_dtype t)
{
    double v = t >= 0 && t < ST_DTYPE_COUNT ? g->vector[t] : 0;
    double s = simt_peak(g);
    return v > s ? v : s;
}

/* Peak of the pipe a GEMM of dtype t runs on; *tensor set when not SIMT. */
static double gemm_peak(const st_gpu *g, st_dtype t, int *tensor)
{
    *tensor = 0;
    if (t == ST_FP32) {
        /* matrix cores that take FP32 operands, faster than the vector
         * path: AMD CDNA's MFMA f32 (MI100 46.1 against 23.1 TFLOP/s
         * vector, MI210 45.3 against 22.6; AMD Instinct datasheets), which
         * rocBLAS's Tensile kernels use for SGEMM. NVIDIA's tensor cores
         * take TF32, not FP32 (TF32 is its own dtype): FP32 stays on the
         * CUDA cores whatever the preset's fp32 figures say. */
        if (g->vendor == ST_VENDOR_AMD && g->matrix[ST_FP32].dense > simt_peak(g)) {
            *tensor = 1;
            return g->matrix[ST_FP32].dense;
        }
        return simt_peak(g);
    }
    /* a throughput entry no faster than the vector path is the vector path
     * itself, as presets without tensor cores give it (P100's packed FP16:
     * 18.7 both): SIMT, not tensor-core coefficients */
    if (g->matrix[t].dense > 0 && !(g->vector[t] >= g->matrix[t].dense)) {
        *tensor = 1;
        return g->matrix[t].dense;
    }
    return g->vector[t]; /* e.g. FP16 on a GPU without matrix units: vector path */
}

/* The SM clock the cycle counts are priced at: the preset's boost clock
 * (1 GHz for a preset without one) */
static double boost_hz(const st_gpu *g)
{
    return g->boost_clock_hz > 0 ? g->boost_clock_hz : 1e9;
}

double st_arch_cycles_for(const st_arch_cycles *t, int n, const st_gpu *g)
{
    const char *fam = st_gpu_family(g);
    for (int i = 0; i < n; i++)
        if (strcasecmp(t[i].arch, fam) == 0)
            return t[i].cycles;
    return 0;
}

double st_gpu_coef_epilogue_cycles(const st_gpu_coef *c, const st_gpu *g)
{
    return st_arch_cycles_for(c->epilogue, c->n_epilogue, g);
}

double st_layer_norm_row_cycles(const st_gpu_coef *c, const st_gpu *g, double cols, double es)
{
    double r = st_arch_cycles_for(c->norm_row, c->n_norm_row, g);
    double it = st_arch_cycles_for(c->norm_iter, c->n_norm_iter, g);
    if (!(r > 0) && !(it > 0))
        return 0;
    return r + it * ceil(cols / (ST_LN_VEC * ST_LN_THREADS)) * es / 4.0;
}

double st_gpu_coef_dram_other(const st_gpu_coef *c)
{
    return c->cls[ST_KC_ELEMENTWISE].beta[VF_DRAM_OTHER];
}

int st_fa3_check(const st_gpu *g, st_dtype dt, int backward, st_error *err)
{
    if (!st_gpu_fa3(g))
        return st_error_set(err, ST_EINVAL,
                            "FlashAttention-3 runs on Hopper only (its kernels are built for sm_90a: warpgroup "
                            "MMAs and TMA); %s is %s: use FlashAttention-2 (kernel: leave out --fa3; eval and "
                            "serve: --attn flash; train and plan: --flash)", g->id, st_gpu_family(g));
    if (dt != ST_FP16 && dt != ST_BF16 && dt != ST_FP8)
        return st_error_set(err, ST_EINVAL, "FlashAttention-3 takes FP16, BF16 or FP8 (E4M3) inputs, not %s",
                            st_dtype_name(dt));
    if (backward && dt == ST_FP8)
        return st_error_set(err, ST_EINVAL, "FlashAttention-3's FP8 kernels are forward only (inference); its "
                                            "backward runs in FP16 or BF16");
    return 0;
}

double st_gpu_power_factor(const st_gpu *g, const st_gpu_coef *c, int tensor)
{
    double peak = simt_peak(g);
    double eref = c->e_ref_w_per_tflop;
    if (tensor) {
        /* the densest tensor path the GPU has for 16-bit math */
        double p16 = g->matrix[ST_FP16].dense > 0 ? g->matrix[ST_FP16].dense : g->matrix[ST_BF16].dense;
        if (p16 > 0)
            peak = p16;
        eref *= c->tc_energy_ratio;
    }
    /* energy per FLOP scales with the process node below the 16/12 nm
     * class that sets e_ref (see gpu.h) */
    if (g->process_nm > 0 && g->process_nm < ST_POWER_REF_NM)
        eref *= g->process_nm / ST_POWER_REF_NM;
    if (g->tdp_w <= 0 || peak <= 0 || eref <= 0)
        return 1.0;
    double f = (g->tdp_w / (peak * 1e-12)) / eref;
    return f < 1.0 ? f : 1.0;
}

/* Memory whose streaming efficiency the 'dram_hbm' coefficient describes:
 * HBM behind a Volta-or-later (or AMD) memory controller. GP100 (Pascal) was
 * the first HBM2 part; NVIDIA's Tesla V100 architecture whitepaper (2017,
 * "HBM2 memory architecture") credits Volta's new controller with 1.5x the
 * delivered bandwidth of GP100 and up to 95% utilisation. The NeuSight sweeps
 * agree: large adds stream at 75% of peak on the P100, like the GDDR cards
 * (T4, P4: 75%), against 91% on the V100 and 85-89% on the A100. So GP100
 * HBM2 shares the 'dram_other' coefficient. */
static int is_hbm(const st_gpu *g)
{
    return strncasecmp(g->mem_type, "HBM", 3) == 0 && strcasecmp(st_gpu_family(g), "pascal") != 0;
}

/* ---- tile names ------------------------------------------------------------ */
static st_regex *tile_re;
static void compile_tile_re(void)
{
    st_error e;
    if (st_regex_compile(&tile_re, "(?:gemm|_MT)_?([0-9]{1,4})x([0-9]{1,4})|tilesize([0-9]{1,4})x([0-9]{1,4})", 0,
                         &e) != 0)
        tile_re = NULL;
}

int st_parse_kernel_tile(const char *name, st_tile *out)
{
    /* cuBLAS/CUTLASS names: <arch>_sgemm_<A>x<B>_<layout>, sgemm_<A>x<B>x<K>_<layout>,
     * <arch>_h1688gemm_<A>x<B>_..., rocBLAS Cijk_..._MT<A>x<B>x<K>_... The
     * libraries are column-major: the first extent covers our output
     * columns (n), the second our rows (m). cuBLAS 12's xmma kernels
     * (sm80_xmma_gemm_f32f32_..._tilesize<A>x<B>x<K>_...) name theirs the
     * other way round: in strata's own H100 and H200 sweeps the launch
     * grid's x is ceil(rows / A) on 2,966 of their 3,100 FP32 launches
     * (2,193 of them where rows and columns give different counts; the
     * columns' count on 6), e.g. tilesize128x32 over 768 x 3072 on a 6 x
     * 96 grid. The pattern is compiled once; matching is thread-safe
     * (st_regex_groups). */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, compile_tile_re);
    if (!tile_re)
        return 0;
    long long s[5], en[5];
    if (st_regex_groups(tile_re, name, s, en, 5) != 1)
        return 0;
    int xmma = s[1] < 0;
    if (xmma ? (s[3] < 0 || s[4] < 0) : s[2] < 0)
        return 0;
    int a = atoi(name + s[xmma ? 3 : 1]), b = atoi(name + s[xmma ? 4 : 2]);
    if (a <= 0 || b <= 0)
        return 0;
    out->n = xmma ? b : a;
    out->m = xmma ? a : b;
    return 1;
}

static const st_tile default_simt[] = {
    {128, 128}, {64, 128}, {128, 64}, {32, 128}, {128, 32}, {64, 64}, {32, 64}, {64, 32}, {32, 32},
};
static const st_tile default_tc[] = {
    {128, 256}, {256, 128}, {128, 128}, {64, 128}, {128, 64}, {64, 64}, {64, 32}, {32, 64},
};
/* W4A16 on tensor cores as vLLM runs it (Marlin: Frantar et al., "MARLIN:
 * Mixed-Precision Auto-Regressive Parallel Inference on Large Language
 * Models", 2024; IST-DASLab/marlin): a thread block covers 16 to 64 rows
 * (1-4 m16 MMA blocks; more rows run as further passes) by 128 or 256
 * output columns. */
static const st_tile int4_tc[] = {
    {16, 128}, {16, 256}, {32, 128}, {32, 256}, {64, 128}, {64, 256},
};

/* The learned tile set of g's family for a batched (bmm) or plain GEMM. */
static int learned_tiles(const st_gpu *g, const st_gpu_coef *c, int batched, const st_tile **t, int *n)
{
    /* key = family, plus ST_TILES_BATCHED for batched sets; compared in
     * place (this runs for every GEMM estimate) */
    const char *fam = st_gpu_family(g), *suffix = batched ? ST_TILES_BATCHED : "";
    size_t lf = strlen(fam);
    for (int i = 0; i < c->n_tile_sets; i++)
        if (strncasecmp(c->tiles[i].arch, fam, lf) == 0 && strcasecmp(c->tiles[i].arch + lf, suffix) == 0 &&
            c->tiles[i].n > 0) {
            *t = c->tiles[i].t;
            *n = c->tiles[i].n;
            return 1;
        }
    return 0;
}

static void candidate_tiles(const st_gpu *g, const st_gpu_coef *c, int tensor, int batched,
                            const st_tile **t, int *n)
{
    if (!tensor) {
        if ((batched && learned_tiles(g, c, 1, t, n)) || learned_tiles(g, c, 0, t, n))
            return;
        *t = default_simt;
        *n = (int)(sizeof default_simt / sizeof default_simt[0]);
        return;
    }
    *t = default_tc;
    *n = (int)(sizeof default_tc / sizeof default_tc[0]);
}

/* K per main-loop iteration: cuBLAS SIMT sgemm kernels step K by 8 (the
 * "x8" in sgemm_128x128x8 names of the measured data); CUTLASS tensor-core
 * kernels by 32 for 16-bit types (CUTLASS default GEMM configurations). */
#define KSTEP_SIMT 8
#define KSTEP_TC 32
/* Split-K: at least 256 of K per split and at most 64 splits, as CUTLASS's
 * split-K examples bound it; the model only takes a split that it predicts
 * to be faster. */
#define SPLITK_MIN_K 256.0
#define SPLITK_MAX 64
/* Row kernels (norms, softmax): threads per row block as PyTorch 2.x
 * launches them (aten/src/ATen/native/cuda). layer_norm_kernel.cu's
 * vectorized_layer_norm_kernel: a (32, 4) block per row. SoftMax.cu: rows of
 * up to 1024 elements go to the persistent warp softmax (one pass, the row
 * in registers); longer rows to cunn_SoftMaxForward with
 * SoftMax_getBlockSize(ILP): the power of two >= min(cols / ILP, 1024) / 2,
 * at least a warp, where ILP = sizeof(float4) / element size (4 for FP32, 8
 * for FP16), the halving in integers. The block sizes of all 3505 NVIDIA
 * softmax launches over 1024 columns in NeuSight's training sweeps agree
 * (FP32: 128 threads up to 1031 columns, 256 up to 2055, 512 above). */
static double row_block_threads(st_kop op, double cols, double es)
{
    if (op != ST_KOP_SOFTMAX && op != ST_KOP_TOPK)
        return 128;
    if (cols <= 1024)
        return 128;
    double ilp = es > 0 && es < 16 ? floor(16.0 / es) : 1;
    double max_bs = floor((cols / ilp < 1024 ? floor(cols / ilp) : 1024) / 2), bs = 1;
    while (bs < max_bs)
        bs *= 2;
    return bs < 32 ? 32 : bs;
}

/* Row blocks an SM holds at once: its thread limit over the block's threads,
 * capped by its block limit (registers and shared memory are not the limit
 * for these kernels' small footprints). */
static double rows_resident(const st_gpu *g, double bs)
{
    double r = floor(g->max_threads_per_sm / bs); /* a required preset field, >= 1 */
    if (g->max_blocks_per_sm > 0 && r > g->max_blocks_per_sm)
        r = g->max_blocks_per_sm;
    return r < 1 ? 1 : r;
}

/* SMs that get work from a grid of `blocks` thread blocks */
static double busy_sms(const st_gpu *g, double blocks)
{
    double sm = g->sm_count > 0 ? g->sm_count : 1;
    return blocks < sm ? blocks : sm;
}

/* Share of data still served by a cache of `cap` bytes when `w` bytes
 * compete for it: 1 / (1 + (w / cap)^sharpness), 0 without a cache. The row
 * kernels' re-reads, a whole tensor between passes and the GEMM operand
 * panels use it. */
static double cache_kept(double w, double cap, double sharpness)
{
    if (cap <= 0 || sharpness <= 0)
        return 0;
    return 1.0 / (1.0 + pow(w / cap, sharpness));
}

/* Fraction of row re-reads served by L2: the rows in flight across the GPU
 * (w bytes) against the share of L2 they can keep (see st_gpu_coef). */
double st_row_reread_hit(const st_gpu *g, const st_gpu_coef *c, double w)
{
    return cache_kept(w, (g->l2_bytes + g->llc_bytes) * c->l2_reuse_share, c->l2_reuse_sharpness);
}

/* ---- GEMM features ---------------------------------------------------------- */
typedef struct gemm_shape {
    double b, m, n, k;  /* independent GEMMs x (m x k).(k x n) */
    double bytes;       /* compulsory DRAM bytes */
    double flops;       /* FLOPs the kernel runs (causal attention: with its diagonal blocks) */
    double extra_alu;   /* vector-pipe FLOPs inside the main loop (softmax) */
    double dequant_s;   /* W4A16: the dequantisation's time had one SM done all of it, at boost */
    double kstep;       /* K per main-loop iteration */
    double es;          /* operand element bytes (0: no panel re-fetch model) */
    double es_out;      /* output element bytes (0: no epilogue term, tensor cores) */
    int sm_epilogue;    /* a library GEMM (cuBLAS/CUTLASS/cuDNN kernels: gemm, bmm, grouped,
                           conv): its family's SM-side epilogue rate applies (st_gpu_coef.epilogue);
                           not fused attention, whose kernels no rate was measured on */
    double span, sharp; /* st_gpu_coef.gemm_reuse_span / _sharpness */
    int batched;        /* a batched GEMM launch (the library's batched tile set) */
    int async_mma;      /* operand loads overlap the MMAs (see the GEMM case of st_kernel_estimate) */
    double k_max;       /* the longest tile's k when tiles differ (causal attention); 0: all k */
    int pipelined;      /* a mixed-input W4A16 kernel (Marlin): its own tiles, weight stream overlapped */
    double sigma_floor; /* least band sigma (a path the calibration data has no kernel of) */
    double sync_ceiling; /* > 0: the share of the tensor peak warp-synchronous MMAs issue at (see INT8) */
} gemm_shape;

/* Output tiles an SM holds at once: register-bound. Library GEMM kernels
 * keep about two 32-bit registers per output element in flight (the
 * accumulator plus its share of the staged operands: cuBLAS SIMT kernels
 * run 64 outputs per thread at about 128 registers, the data's 128x128
 * tiles use 256 threads, 128x64 128 and 64x64 64), against the preset's
 * registers per SM (64K on NVIDIA since Kepler); capped by the SM's block
 * limit. */
static double gemm_resident_tiles(const st_gpu *g, st_tile t)
{
    double r = floor((double)g->regs_per_sm / (2.0 * t.m * t.n)); /* a required preset field */
    if (g->max_blocks_per_sm > 0 && r > g->max_blocks_per_sm)
        r = g->max_blocks_per_sm;
    return r < 1 ? 1 : r;
}

/* The operand-staging instructions (shared-memory loads, address
 * arithmetic) take issue slots of their own; the fitted 'operand'
 * coefficient prices them on GPUs where an FP32 FMA occupies its pipe for
 * ST_FMA_ISSUE_REF dispatch cycles (every NVIDIA GPU in the calibration
 * data: P100 and P4 dual-dispatch to 32 lanes, V100, T4 and A100
 * single-dispatch to 16), so half the slots are free and partly hide them.
 * Where an FMA takes one slot (32 lanes per single-dispatch partition:
 * GA102, Ada, Hopper, Blackwell) the same instructions displace FMAs one
 * for one, so against the FMA time their cost doubles: the feature scales
 * by ST_FMA_ISSUE_REF / the GPU's cycles. No new coefficient: the ratio
 * comes from the preset's whitepaper figures. A preset without them (AMD,
 * whose wave64 issue differs) stays at the reference. Tensor-core GEMMs
 * issue MMA instructions, not FMAs: not scaled. */
#define ST_FMA_ISSUE_REF 2.0
static double operand_issue_scale(const st_gpu *g)
{
    double cyc = st_gpu_fma_issue_cycles(g);
    return cyc > 0 ? ST_FMA_ISSUE_REF / cyc : 1.0;
}

static void gemm_features_for(const st_gpu *g, double peak, double pf, double op_scale, double epi_sm,
                              const gemm_shape *s, st_tile t, int split, double *x,
                              double *sm_work, double *waves, double *tiles_out)
{
    double sm = g->sm_count > 0 ? g->sm_count : 1;
    double clk = boost_hz(g);
    double p_sm = peak * pf / sm;
    double mtile = s->b * ceil(s->m / t.m), ntile = ceil(s->n / t.n);
    double tiles = mtile * ntile, resident = gemm_resident_tiles(g, t);
    double units = tiles * split;
    /* Marlin stripes its tiles' K slices over the SMs so that each gets an
     * equal share of the work (no partial last wave) */
    double w = s->pipelined ? units / sm : ceil(units / sm);
    double kk = ceil(s->k / split);
    double vec = simt_peak(g) * pf / sm;
    double alu_per_unit = s->extra_alu / units;
    /* tiles of unequal work (causal attention: the last query block reads
     * every key, the first one block): the SM's rounds of average tiles,
     * or the longest tile alone when that is longer (few tiles) */
    double rounds_k = w * kk;
    if (s->k_max > 0 && s->k_max / split > rounds_k)
        rounds_k = s->k_max / split;
    double wk = kk > 0 ? rounds_k / kk : w;
    x[GF_COMPUTE] = wk * (2.0 * t.m * t.n * kk / p_sm + (vec > 0 ? alu_per_unit / vec : 0) +
                          s->dequant_s / pf / units);
    /* operands staged per FMA: a CTA loads (tm + tn) words per k for tm*tn
     * FMAs, so the staging share scales as 1/tm + 1/tn; the 32 only sets
     * the unit (1 for a 64x64 tile), the coefficient is fitted */
    x[GF_OPERAND] = x[GF_COMPUTE] * (32.0 / t.m + 32.0 / t.n) * op_scale;
    /* split-K writes and re-reads partial outputs */
    double bytes = s->bytes + (split > 1 ? 2.0 * 4.0 * s->b * s->m * s->n * split : 0);
    x[GF_DRAM] = g->mem_bw > 0 ? bytes / g->mem_bw : 0;
    /* fixed cost per CTA (prologue, epilogue) in units of 1000 cycles; the
     * coefficient is fitted, the unit only keeps it near 1 */
    x[GF_CTA] = w * 1000.0 / clk;
    /* the main loop's latency side: each K step waits on its global loads
     * (in units of 100 cycles, coefficient fitted); the tiles an SM holds at
     * once overlap their waits, so it is paid once per round of resident
     * tiles, not per tile (gemm_resident_tiles) */
    double rounds = ceil(units / (sm * resident));
    x[GF_KLOOP] = rounds * ceil(kk / s->kstep) * 100.0 / clk;
    x[GF_LAUNCH] = 1e-6;
    /* operand panels re-fetched from DRAM: a wave of resident CTAs, launched
     * in raster order, shares the A panels of its tile rows and the B panels
     * of its tile columns through L2 only while the CTAs stay close in K; the
     * wave's panels over the whole K (F bytes) against L2 times the span that
     * CTAs keep in step (st_gpu_coef.gemm_reuse_span) give the share still
     * shared, 1 / (1 + (F / (span x L2))^sharpness); the rest each CTA
     * fetches for itself, (tm + tn) x K elements, in sector-sized pieces
     * from rows K elements apart (the coefficient prices that pattern) */
    x[GF_REFETCH] = 0;
    double l2 = g->l2_bytes + g->llc_bytes;
    if (s->es > 0 && !s->batched && g->mem_bw > 0 && s->span > 0) {
        double wave = sm * resident;
        if (wave > units)
            wave = units;
        double db = wave < ntile ? wave : ntile, da = ceil(wave / ntile);
        if (da > mtile)
            da = mtile;
        double f = (da * t.m + db * t.n) * kk * s->es;
        double h = cache_kept(f, s->span * l2, s->sharp);
        x[GF_REFETCH] = (1 - h) * units * (t.m + t.n) * kk * s->es / g->mem_bw;
    }
    /* the epilogue: a CTA stores its output tile after its main loop, so
     * the store is not hidden behind that CTA's own FMAs; the SM's tiles
     * at its share of DRAM bandwidth. It shows where K is short: batched
     * attention GEMMs with K = 64 run 5-13% slower relative to K = 4096
     * on every GPU in NeuSight's sweeps (P100, T4, V100, A100), and 26%
     * on an H100 (data/measured), whose FP32 rate per byte of bandwidth is
     * twice the A100's. CUDA-core kernels only (es_out 0 otherwise): the
     * tensor-core class's data (VIDUR's A100 FP16 projections) shows no
     * such trend, and fitted with the term its TP-8 attention projection
     * went from 8.0% to 10.4%. */
    x[GF_EPILOGUE] = g->mem_bw > 0 ? w * t.m * t.n * s->es_out / (g->mem_bw / sm) : 0;
    /* where the SM drains its tiles slower than its DRAM share takes them
     * (Hopper: st_gpu_coef.epilogue), that rate sets the term: epi_sm is
     * the SM's seconds per output byte over the class's epilogue
     * coefficient, so that the term prices at the SM's rate */
    double epi_at_sm = w * t.m * t.n * s->es_out * epi_sm;
    if (epi_at_sm > x[GF_EPILOGUE])
        x[GF_EPILOGUE] = epi_at_sm;
    *sm_work = w;
    *waves = ceil(units / sm);
    *tiles_out = tiles;
}

/* The 90% band of a log-normal spread sigma around the estimate. */
static void set_band(st_kernel_est *e, double sigma)
{
    const double z90 = 1.6448536269514722;
    e->sigma = sigma;
    e->lo_s = e->gpu_s * exp(-z90 * sigma);
    e->hi_s = e->gpu_s * exp(z90 * sigma);
}

/* A floor on the SM side (a kernel's cycle count, the board's power): the
 * estimate rises to it where it is longer, bound by it, with the band kept */
static void raise_to(st_kernel_est *e, double t, const char *bound)
{
    if (t > e->gpu_s) {
        e->gpu_s = t;
        e->compute_s = t;
        e->bound = bound;
        set_band(e, e->sigma);
    }
}

static void finish_overlap(const st_gpu_coef *c, st_kernel_est *e, int sum)
{
    double fixed;
    st_kclass_time(e->cls, c->cls[e->cls].beta, e->x, e->nx, sum, &e->compute_s, &e->memory_s, &fixed);
    /* memory instructions and index arithmetic issue on the SM side, with
     * the ALU work */
    e->compute_s += e->lsu_s + e->index_s;
    if (e->compute_s < e->alu_min_s)
        e->compute_s = e->alu_min_s;
    double t = combine(fixed, e->compute_s, e->memory_s, sum);
    if (fixed > e->compute_s && fixed > e->memory_s)
        e->bound = "latency";
    else
        e->bound = e->compute_s >= e->memory_s ? "compute" : "memory";
    /* a kernel cannot beat its own launch: keep at least the launch term */
    if (t < 1e-6)
        t = 1e-6;
    e->gpu_s = t;
    set_band(e, c->cls[e->cls].sigma);
}

/* The class's own overlap of the compute and memory sides */
static void finish(const st_gpu_coef *c, st_kernel_est *e)
{
    finish_overlap(c, e, c->cls[e->cls].sum);
}

static int gemm_estimate(const st_gpu *g, const st_gpu_coef *c, st_kclass cls, double peak,
                         int tensor, const gemm_shape *s, const st_tile *force, int force_split,
                         st_kernel_est *e)
{
    double pf = st_gpu_power_factor(g, c, tensor);
    /* FMAs on the CUDA cores compete for issue slots; MMA instructions do not */
    double op_scale = tensor ? 1.0 : operand_issue_scale(g);
    const double *beta = c->cls[cls].beta;
    const st_tile *cand;
    int nc;
    st_tile one;
    if (force && force->m > 0 && force->n > 0) {
        one = *force;
        cand = &one;
        nc = 1;
    } else if (s->pipelined) {
        cand = int4_tc;
        nc = (int)(sizeof int4_tc / sizeof int4_tc[0]);
    } else {
        candidate_tiles(g, c, tensor, s->batched, &cand, &nc);
    }
    /* Marlin streams the weights with asynchronous copies several stages
     * ahead of the dequantisation and the MMAs, so the memory and compute
     * sides overlap (its near-4x speed-up over FP16 up to 16-32 tokens is
     * the weight bytes' ratio); other kernels keep their class's overlap */
    int sum = c->cls[cls].sum && !s->pipelined && !s->async_mma;
    double sm = g->sm_count > 0 ? g->sm_count : 1;
    /* the SM-side epilogue rate, as seconds per output byte over the
     * class's epilogue coefficient (none where that coefficient is 0: the
     * table prices no epilogue) */
    double epi_sm = 0, epi_cyc = st_gpu_coef_epilogue_cycles(c, g);
    if (epi_cyc > 0 && s->es_out > 0 && s->sm_epilogue && beta[GF_EPILOGUE] > 0)
        epi_sm = epi_cyc / ST_EPILOGUE_LINE / boost_hz(g) /
                 beta[GF_EPILOGUE];
    double best = INFINITY;
    for (int i = 0; i < nc; i++) {
        st_tile t = cand[i];
        double tiles = s->b * ceil(s->m / t.m) * ceil(s->n / t.n);
        int splits[2] = {1, 1};
        int ns = 1;
        if (force_split > 0) {
            splits[0] = force_split;
        } else if (tiles < sm && !s->pipelined) {
            /* split K so that the tiles fill the SMs, keeping >= SPLITK_MIN_K
             * of K per split; the model keeps the split only when it is
             * faster (its partial sums cost DRAM traffic) */
            double want = floor(sm / tiles);
            double kmax = floor(s->k / SPLITK_MIN_K);
            double sp = want < kmax ? want : kmax;
            if (sp >= 2) {
                splits[1] = (int)(sp > SPLITK_MAX ? SPLITK_MAX : sp);
                ns = 2;
            }
        }
        for (int j = 0; j < ns; j++) {
            double x[GF_N], w, waves, tl;
            gemm_features_for(g, peak, pf, op_scale, epi_sm, s, t, splits[j], x, &w, &waves, &tl);
            /* the compute side takes at least the MMA ceiling's time: where
             * the class's own efficiency would run faster than that ceiling,
             * the ceiling binds */
            if (s->sync_ceiling > 0 && beta[GF_COMPUTE] > 0 && beta[GF_COMPUTE] * s->sync_ceiling < 1)
                x[GF_COMPUTE] /= beta[GF_COMPUTE] * s->sync_ceiling;
            double tt = st_kclass_time(cls, beta, x, GF_N, sum, NULL, NULL, NULL);
            /* prefer the larger tile on ties (fewer CTAs, better reuse) */
            if (tt < best * (1 - 1e-9)) {
                best = tt;
                memcpy(e->x, x, sizeof x);
                e->nx = GF_N;
                e->tile = t;
                e->split_k = splits[j];
                e->sm_work = w;
                e->waves = waves;
                e->tiles = tl;
            }
        }
    }
    e->cls = cls;
    e->power_factor = pf;
    e->flops = s->flops;
    e->bytes = s->bytes;
    finish_overlap(c, e, sum);
    if (s->sigma_floor > e->sigma)
        set_band(e, s->sigma_floor);
    return 0;
}

/* tinygemm (PyTorch's _weight_int4pack_mm, int4mm.cu): one thread block of
 * 8 warps per 16x8 output tile; each warp takes 8 k-tiles (16 deep) per
 * iteration, every 8th such slice of K, and for each k-tile loads its A
 * fragment with four 32-bit loads, two over rows 0-7 of the tile and two
 * over rows 8-15, each lane 4 bytes of one row: a load instruction touches
 * one L1 line per row, so it costs the L1 as many wavefronts as valid rows
 * (rows past M are predicated off; such a load still takes one issue).
 * The weights come as one 16-byte load per lane (512 bytes, 4 lines) and
 * the scales and zeros as one line per iteration. The busiest SM's
 * wavefronts at the fitted cycles each (st_gpu_coef) bound the kernel from
 * below: measured on an H100, its time per output FLOP stays flat from 64
 * rows to 4,096 (about 29 TFLOP/s, 3% of the BF16 peak), as a cost per
 * 16-row tile and not per weight byte would make it. */
#define TINYGEMM_WARP_KTILES 8.0
static double tinygemm_wavefronts(double rows)
{
    double lo = rows < 8 ? rows : 8, hi = rows > 8 ? (rows < 16 ? rows - 8 : 8) : 0;
    double a = 2 * (lo > 0 ? lo : 1) + 2 * (hi > 0 ? hi : 1); /* the 4 loads of a k-tile */
    return TINYGEMM_WARP_KTILES * a + 4 + 1;
}

static double tinygemm_floor_s(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k)
{
    if (c->tinygemm_wavefront_cycles <= 0)
        return 0;
    double clk = boost_hz(g);
    double rows = (double)k->b * (double)k->m;
    double mt = ceil(rows / 16), nt = ceil((double)k->n / 8);
    double iters = ceil(ceil((double)k->k / 16) / TINYGEMM_WARP_KTILES); /* warp iterations per block */
    double last = rows - 16 * (mt - 1);
    double blocks = mt * nt;
    /* the busiest SM's blocks: whole 16-row tiles where there are any (a
     * partial last tile's blocks are the fewer), else the one partial row */
    double wf_block = iters * tinygemm_wavefronts(mt > 1 ? 16 : last);
    return ceil(blocks / busy_sms(g, blocks)) * wf_block * c->tinygemm_wavefront_cycles / clk;
}

/* One SM's time to dequantise one INT4 weight to FP16 and scale it, at the
 * boost clock. Marlin's code (IST-DASLab/marlin, marlin_cuda_kernel.cu:
 * dequant() and scale()) turns each 32-bit word of 8 weights into FP16 with
 * a shift and 4 LOP3s (integer pipe) and 4 half2 ops (a subtract or an FMA
 * with magic constants), then scales them with 4 half2 multiplies: per
 * weight 5/8 of an integer lane op and one half2 op. NVIDIA SMs since Volta
 * run 64 32-bit integer (logical, shift) ops per clock (CUDA C++
 * Programming Guide, arithmetic instruction throughput, CC 7.0-9.0); a
 * half2 op is 4 FP16 FLOPs at the preset's non-matrix FP16 rate (A100 4x
 * its FP32, H100 2x, GA102 and Ada 1x). Other vendors: the FP32 rate for
 * both (no figure). */
#define ST_INT32_LANES_PER_SM 64.0
static double dequant_s_per_weight(const st_gpu *g, st_dtype t)
{
    double sm = g->sm_count > 0 ? g->sm_count : 1;
    double clk = boost_hz(g);
    double fp32 = simt_peak(g) / sm; /* FLOP/s per SM */
    double int_rate = g->vendor == ST_VENDOR_NVIDIA ? ST_INT32_LANES_PER_SM * clk : fp32 / 2;
    /* the activations' 16-bit type: BF16 runs at its own vector rate (A100:
     * half its FP16 rate) */
    double v16 = g->vector[t] > 0 ? g->vector[t] : g->vector[ST_FP16];
    double h2 = v16 > 0 ? v16 / sm : fp32;
    return (5.0 / 8.0) / int_rate + 4.0 / h2;
}

/* FP32 on matrix cores (AMD MFMA) borrows the tensor-core class's
 * coefficients, fitted on NVIDIA FP16/BF16 kernels; no FP32 matrix-core
 * kernel is in the calibration data, so its band is at least that of the
 * class the op has on the vector path (FP32 GEMM or conv: the spread of
 * those kernels across the measured GPUs). */
static double fp32_matrix_sigma(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k, int tensor)
{
    if (!tensor || k->dtype != ST_FP32)
        return 0;
    return c->cls[st_conv_fast(g, k) ? ST_KC_CONV : ST_KC_GEMM_SIMT].sigma;
}

/* A kernel whose operands come from DRAM cannot move those bytes faster
 * than a streaming kernel does: at least launch + beta x bytes / BW, with
 * beta the elementwise class's fitted DRAM coefficient for this memory type
 * (in the committed table: 93% of peak on HBM, 76% on GDDR). The GEMM fit
 * itself describes benchmark loops in which a weight that fits in L2 stays
 * there between repetitions, so its own DRAM coefficient would let a
 * weight-streaming decode GEMM run above peak bandwidth. In a model step
 * (k->cold) every operand byte comes from DRAM; in a loop over one kernel,
 * the share an L2 can keep of a working set that large (the curve the
 * vector kernels use) is spared, so a weight ten times the L2 streams. */
static void stream_floor(const st_gpu *g, const st_gpu_coef *c, int cold, st_kernel_est *e)
{
    const double *vb = c->cls[ST_KC_ELEMENTWISE].beta;
    double beta = vb[is_hbm(g) ? VF_DRAM_HBM : VF_DRAM_OTHER];
    double bw = g->mem_bw > 0 ? g->mem_bw : 1e12;
    double dram = cold ? e->bytes
                       : e->bytes * (1 - cache_kept(e->bytes, g->l2_bytes + g->llc_bytes, c->l2_reuse_sharpness));
    double stream = beta * dram / bw;
    double floor_s = vb[VF_LAUNCH] * 1e-6 + stream;
    if (floor_s > e->gpu_s) {
        double r = floor_s / e->gpu_s;
        e->gpu_s = floor_s;
        e->lo_s *= r;
        e->hi_s *= r;
        /* the memory side as the model has it, or the stream where longer
         * (a warm kernel whose bytes L2 keeps streams almost nothing: its
         * memory side is not the stream's 0.1 ns) */
        if (stream > e->memory_s)
            e->memory_s = stream;
        /* the floor is the launch for a tiny kernel, the stream otherwise */
        e->bound = vb[VF_LAUNCH] * 1e-6 > stream ? "latency" : "memory";
    }
}

/* cuDNN's tensor-core convolutions take NHWC operands, and PyTorch hands
 * them NCHW tensors (its default memory format): for every dense conv but
 * a 1x1 stride-1 one, which runs as a plain GEMM on the NCHW layout
 * (cuBLAS's nvjet and CUTLASS kernels, one launch), cuDNN transposes the
 * input to NHWC, the filter to KRSC and the output back to NCHW around the
 * kernel (nchwToNhwcKernel, tensorTransformGeneric, nhwcToNchwKernel: all
 * three for 287 of the 312 such TF32 and BF16 convs timed on the H100 and
 * 232 of 255 on the H200, data/measured). Each transpose reads and writes
 * its tensor once: three streaming kernels at the elementwise class's DRAM
 * rate and launch cost, after the conv's own time. The input's pixels are
 * the output's times the stride squared (padding aside); its channels are
 * K over the filter's area; the filter is K x N. NVIDIA only (MIOpen runs
 * NCHW itself), measured on Hopper and assumed for cuDNN's tensor-core
 * convs on earlier GPUs. Not priced: an unknown filter (0), channels-last
 * activations, and grouped or depthwise convs (none measured; PyTorch
 * runs many depthwise convs with its own NCHW kernel). */
static void conv_layout_passes(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k, double es,
                               st_kernel_est *e)
{
    if (g->vendor != ST_VENDOR_NVIDIA || k->channels_last || k->groups > 1 || k->filter <= 0 ||
        (k->filter == 1 && k->stride <= 1))
        return;
    const double *vb = c->cls[ST_KC_ELEMENTWISE].beta;
    double beta = vb[is_hbm(g) ? VF_DRAM_HBM : VF_DRAM_OTHER];
    double bw = g->mem_bw > 0 ? g->mem_bw : 1e12;
    double st = k->stride > 0 ? (double)k->stride : 1.0;
    double in = (double)k->b * (double)k->m * st * st * (double)k->k / ((double)k->filter * (double)k->filter);
    double out = (double)k->b * (double)k->m * (double)k->n, filt = (double)k->n * (double)k->k;
    double bytes = 2.0 * es * (in + out + filt);
    double t = 3.0 * vb[VF_LAUNCH] * 1e-6 + beta * bytes / bw;
    double r = (e->gpu_s + t) / e->gpu_s;
    e->gpu_s += t;
    e->lo_s *= r;
    e->hi_s *= r;
    e->bytes += bytes;
    e->layout_s = t;
}

/* A norm kernel's ALU work per element, in FP32 lane operations, counted
 * from the kernels' code. PyTorch's vectorized_layer_norm_kernel
 * (layer_norm_kernel.cu) updates Welford statistics per element: a
 * subtract, an add, the count's reciprocal (one MUFU op and two FMAs), an
 * FMA and a subtract; then it normalises (subtract, multiply, FMA): 9 lane
 * ops and a MUFU op. An RMSNorm kernel (vLLM and Sarathi-Serve's
 * rms_norm_kernel) squares and sums (1), then scales by the reciprocal root
 * and by the weight (2). Both accumulate in FP32, so 16-bit data adds
 * conversions: x read twice and y written (3), and LayerNorm's gamma and
 * beta (2); RMSNorm's x twice, its weight and y (4). MUFU ops and
 * conversions run on 16 lanes per SM on every NVIDIA GPU since Maxwell
 * (CUDA C++ Programming Guide, arithmetic instruction throughput:
 * reciprocal, "type conversions"), so each takes fp32_lanes / 16 lane
 * slots: FP16 layer norm costs an A100 33 slots an element against FP32's
 * 13, while its bytes halve. Other vendors: one slot each (no figure). */
#define ST_SFU_LANES 16.0
static double norm_lane_ops(const st_gpu *g, const st_kernel *k, double es)
{
    double slow = g->vendor == ST_VENDOR_NVIDIA && g->fp32_lanes_per_sm > 0 ? g->fp32_lanes_per_sm / ST_SFU_LANES : 1.0;
    int half = es < 4;
    if (k->rms)
        return 3.0 + (half ? 4.0 : 0.0) * slow;
    return 9.0 + (1.0 + (half ? 5.0 : 0.0)) * slow;
}

/* Vector kernels: bytes and ALU work; norms and softmax also a per-row term.
 * block_rows: each row is reduced block-wide (a norm, a softmax kernel other
 * than the warp-wide one), which ROCm builds pay per row. */
static int vector_estimate(const st_gpu *g, const st_gpu_coef *c, st_kclass cls, double bytes, double alu_flops,
                           double rows, double cols, double reread, double row_bytes, double resident,
                           int block_rows, st_kernel_est *e)
{
    double bw = g->mem_bw > 0 ? g->mem_bw : 1e12;
    double l2 = g->l2_bytes + g->llc_bytes;
    double sm = g->sm_count > 0 ? g->sm_count : 1;
    double clk = boost_hz(g);
    double pf = st_gpu_power_factor(g, c, 0);
    double vec = simt_peak(g) * pf;
    /* a tensor well inside L2 mostly stays there between the repetitions
     * of a timing loop, and between producer and consumer in a model step;
     * one larger than L2 does not keep its last L2-sized part for the next
     * pass (least-recently-used eviction streams it out before it is read
     * again), so the share served by L2 falls with the same curve as the
     * row kernels' re-reads against the whole L2 (VIDUR's A100 residual
     * add, 94 MB against 40 MB of L2, streams at 87% of DRAM bandwidth:
     * counting 40 MB of it as L2 traffic under-predicted it by 20%) */
    double inl2 = bytes * cache_kept(bytes, l2, c->l2_reuse_sharpness);
    double dram = bytes - inl2;
    int dcol = is_hbm(g) ? VF_DRAM_HBM : VF_DRAM_OTHER;
    memset(e->x, 0, sizeof e->x);
    if (cls == ST_KC_ELEMENTWISE) {
        e->x[dcol] = dram / bw;
        e->x[VF_L2] = inl2 / bw;
        e->x[VF_ALU] = vec > 0 ? alu_flops / vec : 0;
        e->x[VF_LAUNCH] = 1e-6;
        if (g->vendor == ST_VENDOR_AMD)
            e->x[EF_ROCM] = bytes / bw;
        e->nx = EF_N;
    } else {
        /* passes after the first over each row: the share that misses L2
         * (rows in flight against L2, st_row_reread_hit) comes from DRAM
         * again at the first pass's cost. A hit costs no bandwidth: it
         * overlaps the other rows' DRAM stream. The NeuSight sweeps show it
         * on every GPU: rows whose re-reads fit run at the elementwise
         * kernels' DRAM rate (softmax over 2048 and 4096 columns; layer
         * norm up to 2048 columns on the A100, 1330 GB/s counting each
         * element once); pricing hits at the L2 cost over-predicted those
         * by 14-29%. */
        if (reread > 0)
            dram += (1 - st_row_reread_hit(g, c, sm * resident * row_bytes)) * reread;
        const double *eb = c->cls[ST_KC_ELEMENTWISE].beta;
        e->x[RF_STREAM] = (eb[dcol] * dram + eb[VF_L2] * inl2 +
                           (g->vendor == ST_VENDOR_AMD ? eb[EF_ROCM] * bytes : 0)) / bw;
        e->x[RF_ALU] = vec > 0 ? alu_flops / vec : 0;
        e->x[RF_LAUNCH] = 1e-6;
        /* `resident` rows per SM at once: the rows an SM runs in turn, each
         * cols/32 cycles of a warp-wide (32-lane) pass */
        e->x[RF_ROWS] = ceil(rows / (sm * resident)) * (cols / 32.0) / clk;
        if (g->vendor == ST_VENDOR_AMD) {
            e->x[RF_ROCM] = bytes / bw;
            /* a block-wide reduction per row: every layer norm row, and the
             * softmax rows past the wave-wide kernel (1024 elements before
             * PyTorch 2.7, 2048 from it: st_softmax_path) */
            if (block_rows)
                e->x[RF_ROCM_ROWS] = ceil(rows / sm) * 1000.0 / clk; /* whole rows per CU */
        }
        e->nx = RF_N;
    }
    e->cls = cls;
    e->power_factor = pf;
    e->flops = alu_flops;
    e->bytes = bytes;
    finish(c, e);
    return 0;
}

int st_conv_fast(const st_gpu *g, const st_kernel *k)
{
    return k->op == ST_KOP_CONV && k->groups <= 1 && k->filter == 3 && k->stride == 1 && st_gpu_winograd_conv(g);
}

st_kclass st_kernel_class(const st_gpu *g, const st_kernel *k)
{
    int tensor = 0;
    switch (k->op) {
    case ST_KOP_GEMM:
    case ST_KOP_BMM:
    case ST_KOP_GROUPED:
    case ST_KOP_FLASH:
        gemm_peak(g, k->dtype, &tensor);
        return tensor ? ST_KC_GEMM_TC : ST_KC_GEMM_SIMT;
    case ST_KOP_CONV:
        gemm_peak(g, k->dtype, &tensor);
        return tensor ? ST_KC_GEMM_TC : st_conv_fast(g, k) ? ST_KC_CONV : ST_KC_GEMM_SIMT;
    case ST_KOP_SOFTMAX:
    case ST_KOP_TOPK:
        return ST_KC_SOFTMAX;
    case ST_KOP_NORM:
        return ST_KC_NORM;
    default:
        return ST_KC_ELEMENTWISE;
    }
}

/* The physical floor of a kernel (st_kernel_est.floor_s): a GEMM-like
 * kernel's FLOPs at the fastest peak the GPU has for the dtype (matrix or
 * vector pipe; not a convolution that Winograd or FFT runs, whose nominal
 * FLOPs can pass the peak), and the bytes that even a perfect cache cannot
 * hold (beyond L2 and any last-level cache; all of them for a cold GEMM,
 * whose operands start in DRAM) at the spec sheet's DRAM bandwidth. The
 * fitted spread is log-normal, so without this the low end of a 90% band could
 * claim more than the hardware has (a 26% spread puts it at 0.65x the
 * estimate): a GEMM at 85% of peak would show 130% of peak. */
static double kernel_floor(const st_gpu *g, const st_kernel *k, const st_kernel_est *e)
{
    double peak = g->matrix[k->dtype].dense;
    if (g->vector[k->dtype] > peak)
        peak = g->vector[k->dtype];
    double fl = 0;
    /* GEMM-like kernels, and the elementwise ops whose FLOPs are the lane
     * work they name (e->alu_min_s); the other vector kernels' FLOPs are a
     * reporting convention (a norm's 8 an element) */
    int gemmlike = k->op == ST_KOP_GEMM || k->op == ST_KOP_BMM || k->op == ST_KOP_GROUPED ||
                   k->op == ST_KOP_FLASH || (k->op == ST_KOP_CONV && !st_conv_fast(g, k));
    if (peak > 0 && gemmlike)
        fl = e->flops / peak;
    if (e->alu_min_s > fl)
        fl = e->alu_min_s;
    /* a cold GEMM's operands are in DRAM by assumption (a model step; the
     * flag means nothing to vector kernels, whose inputs the kernel before
     * may have left in L2) */
    double beyond = k->cold && gemmlike ? e->bytes : e->bytes - (g->l2_bytes + g->llc_bytes);
    double mem = g->mem_bw > 0 && beyond > 0 ? beyond / g->mem_bw : 0;
    return fl > mem ? fl : mem;
}

static int kernel_estimate(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k,
                           const st_tile *force_tile, int force_split, st_kernel_est *e,
                           st_error *err);

/* Radix-select passes over 32-bit keys, 2 bits each (RADIX_BITS in
 * PyTorch's SortingRadixSelect.cuh), and the gather's two scans of the
 * slice (the keys above the k-th, then those equal to it) */
#define TOPK_RADIX_PASSES 16
#define TOPK_GATHER_PASSES 2

/* gatherTopK's block: the row's columns rounded up to a warp, at most 1024
 * threads (TensorTopK.cu's launch) */
static double topk_threads(const st_gpu *g, double cols)
{
    double warp = g->warp_size > 0 ? g->warp_size : 32, threads = ceil(cols / warp) * warp;
    return threads > 1024 ? 1024 : threads;
}

double st_topk_waves(const st_gpu *g, double rows, double cols)
{
    double sm = g->sm_count > 0 ? g->sm_count : 1;
    return ceil(rows / (sm * rows_resident(g, topk_threads(g, cols))));
}

int st_topk_multiblock(double rows, double cols)
{
    return (rows <= 20 && cols >= 20000) || (rows > 20 && rows <= 40 && cols >= 10000) ||
           (rows > 40 && rows <= 80 && cols >= 8000) || (rows > 80 && rows < 200 && cols >= 5000) ||
           (rows >= 200 && rows < 800 && cols >= 3000) || (rows >= 800 && rows <= 4000 && cols >= 800) ||
           (rows > 4000 && cols >= 400);
}

/* PyTorch's eager router, torch.softmax(logits, dim=-1, dtype=torch.float32)
 * then torch.topk (aten/src/ATen/native/SoftMax.cpp, cuda/TensorTopK.cu):
 * BF16 logits are first cast to FP32 (a copy kernel); FP16 ones go straight
 * to the softmax, which reads them as half and writes FP32 (_softmax's
 * half_to_float); then the FP32 softmax, sbtopk::gatherTopK and
 * bitonicSortKVInPlace, one after another. gatherTopK runs a block per row
 * (st_topk_waves); each block's time is its passes (each thread holding
 * ceil(cols / threads) keys) at topk_pass_cycles. The sort moves each row's
 * k values (FP32) and indices (int64) in and out. Shapes that PyTorch sends
 * to its multi-block kernels instead (st_topk_multiblock) are priced the
 * same way, unmeasured. The host makes two framework calls. */
static int topk_estimate(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k, st_kernel_est *e,
                         st_error *err)
{
    double rows = (double)k->rows, cols = (double)k->cols, kk = st_topk_k(k);
    st_kernel part = *k;
    part.op = ST_KOP_SOFTMAX;
    part.dtype = ST_FP32;
    part.n_in = 1, part.n_out = 1;
    part.flops_per_elem = 0, part.bytes_total = 0;
    if (k->dtype == ST_FP16) /* half in, float out */
        part.bytes_total = rows * cols * (st_dtype_bytes(ST_FP16) + 4);
    int rc = kernel_estimate(g, c, &part, NULL, 0, e, err);
    if (rc)
        return rc;
    double more = 0, bytes = 0;
    st_kernel_est pe;
    memset(&part, 0, sizeof part);
    part.op = ST_KOP_ELEMENTWISE;
    part.dtype = ST_FP32;
    part.n_in = 1, part.n_out = 1;
    if (k->dtype != ST_FP32 && k->dtype != ST_FP16) { /* the cast */
        part.rows = k->rows, part.cols = k->cols;
        part.bytes_total = rows * cols * (st_dtype_bytes(k->dtype) + 4);
        if ((rc = kernel_estimate(g, c, &part, NULL, 0, &pe, err)))
            return rc;
        more += pe.gpu_s, bytes += pe.bytes;
    }
    /* the sort of the winners */
    part.rows = k->rows, part.cols = (long long)kk;
    part.bytes_total = 2 * rows * kk * (4 + 8);
    if ((rc = kernel_estimate(g, c, &part, NULL, 0, &pe, err)))
        return rc;
    more += pe.gpu_s, bytes += pe.bytes;
    /* the radix select */
    double clk = boost_hz(g) * st_gpu_power_factor(g, c, 0);
    double sel = st_topk_waves(g, rows, cols) * (TOPK_RADIX_PASSES + TOPK_GATHER_PASSES) *
                 ceil(cols / topk_threads(g, cols)) * c->topk_pass_cycles / clk;
    /* gatherTopK reads each key once from DRAM; its passes after the first
     * hit L1 (the slice is the block's own) */
    bytes += rows * cols * 4 + rows * kk * (4 + 8);
    e->compute_s += sel;
    e->gpu_s += more + sel;
    e->bytes += bytes;
    if (sel > e->gpu_s - sel)
        e->bound = "latency";
    e->dispatch_s *= 2; /* torch.softmax, torch.topk */
    set_band(e, e->sigma);
    return 0;
}

static int kernel_estimate(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k,
                           const st_tile *force_tile, int force_split, st_kernel_est *e,
                           st_error *err)
{
    memset(e, 0, sizeof *e);
    if (!st_gpu_supports(g, k->dtype)) {
        st_error_set(err, ST_EINVAL, "%s has no %s throughput in its preset; pick another --dtype%s",
                     g->id, st_dtype_name(k->dtype),
                     k->dtype == ST_INT4 ? " (int4 is INT4 arithmetic, W4A4; weight-only INT4 with 16-bit "
                                           "activations is serve --quant w4a16, or kernel --int4)" : "");
        return ST_EINVAL;
    }
    double es = st_dtype_bytes(k->dtype);
    e->dispatch_s = (k->dispatch >= 0 && k->dispatch < ST_DISP_COUNT) ? c->dispatch_s[k->dispatch] : 0;
    st_kclass cls = st_kernel_class(g, k);
    int tensor = 0;
    switch (k->op) {
    case ST_KOP_GEMM:
    case ST_KOP_BMM:
    case ST_KOP_GROUPED:
    case ST_KOP_CONV: {
        if (k->b <= 0 || k->m <= 0 || k->n <= 0 || k->k <= 0) {
            st_error_set(err, ST_EINVAL, "GEMM dimensions must be positive (b=%lld m=%lld n=%lld k=%lld)",
                         k->b, k->m, k->n, k->k);
            return ST_EINVAL;
        }
        double peak = gemm_peak(g, k->dtype, &tensor);
        gemm_shape s;
        memset(&s, 0, sizeof s);
        s.batched = k->op == ST_KOP_BMM;
        /* on GPUs whose library GEMMs stream operands asynchronously (TMA and
         * warpgroup MMAs: st_gpu_async_mma) the loads overlap the MMAs, so
         * the memory side overlaps too. Measured on an H100 and an H200
         * (data/measured, held out of the fit): BF16 and FP16 linears went
         * from 15-19% to 7-10% MAPE with it. cuBLAS GEMMs and BMMs only: not
         * INT8, which PyTorch runs on Hopper with CUTLASS's sm80 kernels
         * (cutlass_80_tensorop_i16832gemm, synchronous MMAs, in the same
         * sweep), nor convolutions: cuDNN's sm90 implicit-GEMM kernels
         * reach 100-160 TFLOP/s on the H100's large 3x3 TF32 and BF16 convs
         * (data/measured, conv.csv), and pricing them as asynchronous took
         * those from 0.80x to 0.67x of their measured time */
        s.async_mma = tensor && (k->op == ST_KOP_GEMM || k->op == ST_KOP_BMM) && k->dtype != ST_INT8 &&
                      st_gpu_async_mma(g);
        /* INT8 on those GPUs: CUTLASS's sm80 kernels issue warp-synchronous
         * MMAs, which Hopper's tensor cores run at half their rate (warpgroup
         * MMAs are twice as fast, ST_SYNC_MMA_SHARE). At half rate the
         * operand traffic that holds an A100 GEMM to the class's efficiency
         * has headroom, so the kernel runs at the ceiling itself: the
         * compute side is the FLOPs over half the peak, not the class's
         * fitted share of it (held-out INT8 linears on the H100 and H200
         * peak at 980 and 963 TOPS, 49.5% and 48.7% of 1979) */
        if (tensor && k->dtype == ST_INT8 && st_gpu_async_mma(g) && (k->op == ST_KOP_GEMM || k->op == ST_KOP_BMM))
            s.sync_ceiling = ST_SYNC_MMA_SHARE;
        double grp = (k->op == ST_KOP_CONV && k->groups > 1) ? (double)k->groups : 1.0;
        s.b = (double)k->b * grp;
        s.m = (double)k->m;
        /* x W with the weights shared over b: the library folds the batch
         * into the rows (torch.matmul of a [b, m, k] by a [k, n] is one mm
         * of b x m rows), so the tiles cover b x m rows, not b sets of m */
        if (k->op == ST_KOP_GEMM) {
            s.m *= s.b;
            s.b = 1;
        }
        s.n = (double)k->n;
        s.k = (double)k->k;
        /* W4A16: 4-bit weights plus a 16-bit scale per group of 128 (GPTQ's
         * and AWQ's default group size) */
        double wes = k->weight_only_int4 ? 0.5 + 2.0 / 128.0 : es;
        double wcount = (k->op == ST_KOP_GEMM || k->op == ST_KOP_CONV) ? grp * s.k * s.n : s.b * s.k * s.n;
        s.bytes = es * s.b * s.m * s.k + wes * wcount + es * s.b * s.m * s.n;
        s.flops = 2.0 * s.b * s.m * s.n * s.k;
        /* W4A16: every weight is dequantised once per pass of up to 64 rows
         * (Marlin's m blocks) */
        if (k->weight_only_int4)
            s.dequant_s = wcount * ceil(s.m / 64.0) * dequant_s_per_weight(g, k->dtype);
        /* Marlin's schedule (its tiles, striping, overlap) is a tensor-core
         * kernel's; elsewhere INT4 keeps the library GEMM's */
        s.pipelined = k->weight_only_int4 && tensor;
        int tiny = k->weight_only_int4 && k->int4_kernel == ST_INT4_TINYGEMM;
        st_tile tiny_tile = {16, 8};
        if (tiny) {
            const char *why = st_tinygemm_unsupported(g, k);
            if (!why && force_tile && force_tile->m > 0 && (force_tile->m != 16 || force_tile->n != 8))
                why = "it runs 16x8 output tiles only";
            if (!why && !(c->tinygemm_wavefront_cycles > 0))
                why = "the coefficient table has no tinygemm_wavefront_cycles, which bounds it (strata calibrate "
                      "--ops DIR fits it on a sweep with tinygemm rows; the shipped table has it)";
            if (why) {
                st_error_set(err, ST_EINVAL, "tinygemm (weight-only INT4 as PyTorch's _weight_int4pack_mm runs "
                             "it) on %s %s: %s", g->id, st_kop_name(k->op), why);
                return ST_EINVAL;
            }
            /* no staging: a warp loads, dequantises and multiplies in turn,
             * and its block dequantises its weights once per 16-row tile;
             * but an SM's 64 resident warps (8 blocks of 8) overlap one
             * another's loads and MMAs, so the memory and compute sides
             * overlap as in the asynchronous kernels (added, the one- to
             * four-token rows on the H100 came out 8-46% slow, overlapped
             * -20 to +25%) */
            s.pipelined = 0;
            s.async_mma = 1;
            s.dequant_s = s.k * s.n * ceil(s.b * s.m / 16.0) * dequant_s_per_weight(g, k->dtype);
            force_tile = &tiny_tile;
            force_split = 1;
        }
        s.kstep = tensor ? KSTEP_TC : KSTEP_SIMT;
        s.es = es;
        /* the epilogue term is the CUDA-core kernels' (below) */
        s.es_out = tensor ? 0 : es;
        s.sm_epilogue = 1;
        s.span = c->gemm_reuse_span;
        s.sharp = c->gemm_reuse_sharpness;
        s.sigma_floor = fp32_matrix_sigma(g, c, k, tensor);
        int r = gemm_estimate(g, c, cls, peak, tensor, &s, force_tile, force_split, e);
        if (!r && tiny)
            raise_to(e, tinygemm_floor_s(g, c, k), "compute");
        if (!r)
            stream_floor(g, c, k->cold, e);
        if (!r && k->op == ST_KOP_CONV && tensor)
            conv_layout_passes(g, c, k, es, e);
        return r;
    }
    case ST_KOP_FLASH: {
        if (k->b <= 0 || k->heads <= 0 || k->q_len <= 0 || k->kv_len <= 0 || k->head_dim <= 0) {
            st_error_set(err, ST_EINVAL, "attention needs positive batch, heads, q_len, kv_len and head_dim");
            return ST_EINVAL;
        }
        if (k->head_dim > ST_MAX_HEAD_DIM) {
            st_error_set(err, ST_EINVAL, "a head dimension of %lld: no attention kernel takes heads over %d "
                                         "wide (models use 64-256)", (long long)k->head_dim, ST_MAX_HEAD_DIM);
            return ST_EINVAL;
        }
        if (k->kv_heads > 0 && (k->kv_heads > k->heads || k->heads % k->kv_heads)) {
            st_error_set(err, ST_EINVAL,
                         "%lld KV heads do not divide %lld query heads; grouped-query attention "
                         "shares each KV head among an equal number of query heads",
                         (long long)k->kv_heads, (long long)k->heads);
            return ST_EINVAL;
        }
        if (k->causal && k->q_len > k->kv_len) {
            st_error_set(err, ST_EINVAL,
                         "causal attention with %lld queries over %lld keys: the queries are the "
                         "last q_len of the kv_len positions, so q_len must be <= kv_len",
                         (long long)k->q_len, (long long)k->kv_len);
            return ST_EINVAL;
        }
        double peak = gemm_peak(g, k->dtype, &tensor);
        /* FlashAttention-2, the fused attention PyTorch and most stacks ship,
         * is written with Ampere's synchronous MMAs (mma.sync, sm80-style
         * pytorch_flash::flash_fwd_kernel), and on a GPU built for
         * asynchronous warpgroup MMAs those reach about half the tensor
         * peak: PyTorch's FA2 forward peaks at 360 TFLOP/s on an H100 SXM
         * and an H200 (data/measured, head dim 128, against 989), as the
         * FlashAttention-3 paper (Shah et al. 2024) puts it: "only 35%
         * utilization on H100". Measured on the H100: non-causal prefill
         * 42.7% MAPE at the full rate, 7.5% at half (the H200, held out,
         * 6.8%). Its loads stay synchronous too: no async_mma. */
        if (k->dtype == ST_INT8 || k->dtype == ST_INT4 || (k->dtype == ST_FP8 && !k->fa3)) {
            st_error_set(err, ST_EINVAL,
                         "no FlashAttention kernel takes %s inputs: FlashAttention-2 runs FP16 or BF16 (FP32 is "
                         "PyTorch's memory-efficient kernel, priced alike), FP8 is FlashAttention-3's (Hopper), "
                         "and quantised models keep attention in 16 bits",
                         st_dtype_name(k->dtype));
            return ST_EINVAL;
        }
        if (k->fa3 && st_fa3_check(g, k->dtype, k->backward, err))
            return ST_EINVAL;
        if (k->fa3 && k->head_dim > 256) {
            st_error_set(err, ST_EINVAL, "FlashAttention-3 takes head dimensions up to 256, not %lld; without "
                         "--fa3 (--attn flash) PyTorch runs its memory-efficient kernel for such heads",
                         (long long)k->head_dim);
            return ST_EINVAL;
        }
        if (tensor && st_gpu_async_mma(g) && !k->fa3)
            peak *= ST_SYNC_MMA_SHARE;
        double kvh = k->kv_heads > 0 ? (double)k->kv_heads : (double)k->heads;
        double q = (double)k->q_len, kv = (double)k->kv_len, d = (double)k->head_dim;
        /* causal prefill: a query row sees on average half the keys, and
         * a block of Br query rows runs its diagonal key blocks in full (the
         * mask is applied inside them): each row of a block goes up to the
         * block's last key, Br/2 more than its own on average (q/2 when the
         * queries fit one block: every row then reads all kv keys) */
        double br = q >= 64 ? FA_BLOCK_M : 64; /* the query block (decode pads to 64 rows) */
        double kv_eff = (k->causal && q > 1) ? kv - q / 2.0 + (q < br ? q : br) / 2.0 : kv;
        if (kv_eff > kv)
            kv_eff = kv;
        if (kv_eff < 1)
            kv_eff = 1;
        gemm_shape s;
        memset(&s, 0, sizeof s);
        s.kstep = tensor ? KSTEP_TC : KSTEP_SIMT;
        s.es_out = tensor ? 0 : es;
        s.sigma_floor = fp32_matrix_sigma(g, c, k, tensor);
        s.async_mma = k->fa3;
        double kvb = k->kv_bytes > 0 ? k->kv_bytes : es;
        /* the backward (FlashAttention-2, Dao 2023, Algorithm 2) recomputes
         * S = QK^T and runs dV = P^T dO, dP = dO V^T, dQ = dS K and
         * dK = dS^T Q: five products of the forward's size against two, and
         * it reads Q, K, V, O and dO and writes dQ, dK and dV */
        double mm = k->backward ? 5.0 : 2.0;
        s.bytes = k->backward
                      ? (double)k->b * (es * 4.0 * q * k->heads * d + kvb * 4.0 * kv * kvh * d)
                      : (double)k->b * (es * 2.0 * q * k->heads * d + kvb * 2.0 * kv * kvh * d);
        s.flops = 2.0 * mm * (double)k->b * k->heads * q * kv_eff * d;
        /* the backward walks the key blocks in the outer loop, so every
         * block of keys (FA_BWD_BLOCK_N) adds its share of dQ into an FP32
         * accumulator in global memory (FA2's atomicAdd of dQaccum): a read
         * and a write of q x d x 4 bytes per key block and head. On an H100
         * (data/measured/h100/fa-backward.csv) the backward without it was
         * 19-44% fast, with it -20 to +12% on shapes of 1-16 MB of dQ per
         * head; no coefficient is fitted to it (the class's DRAM one) */
        double bwd_block = d > 128 ? FA_BWD_BLOCK_N_WIDE : FA_BWD_BLOCK_N;
        if (k->backward)
            s.bytes += 2.0 * 4.0 * (double)k->b * k->heads * q * d * ceil(kv_eff / bwd_block) +
                       /* and the two small kernels around it: rowsum(dO * O)
                        * reads O and dO; the FP32 accumulator is read back
                        * to write dQ */
                       (double)k->b * k->heads * q * d * (2.0 * es + 4.0);
        /* exp, max, scale, rescale: about 5 vector ops per score */
        s.extra_alu = 5.0 * (double)k->b * k->heads * q * kv_eff;
        /* as a GEMM per (sequence, head): m = query rows, n = head_dim,
         * k = two passes over the keys (QK^T, then PV) */
        st_tile t;
        t.n = (int)d;
        s.b = (double)k->b * k->heads;
        s.m = q;
        s.n = d;
        /* FlashAttention-3's forward overlaps a key block's softmax with the
         * next block's GEMMs (intra-warpgroup pipelining, ping-pong between
         * two warpgroups; Shah et al. 2024, section 3), so only the ends of
         * a tile's key loop are exposed: the first QK^T before any softmax
         * can start, the last softmax and PV after the loop, and the O
         * epilogue, FA3_PROLOGUE x FA3_BLOCK_N keys in all. That is
         * what its speed ramp with the sequence shows: on an H100 SXM at
         * head dim 128 (BF16, 16k tokens a batch) the paper measures 467
         * TFLOP/s at 512 tokens and 648 at 16k; strata gives 490 and 660
         * with the 1.5 blocks, 645 and 667 without (tests/test_gpu.c). The
         * backward has no such term: without one it is within 5% of the
         * paper at head dim 64, and 10-16% under it at 128. */
        double fa3_ends = k->fa3 && !k->backward ? FA3_PROLOGUE * FA3_BLOCK_N : 0;
        s.k = mm * (kv_eff + fa3_ends);
        if (k->causal && q > 1)
            s.k_max = mm * (kv + fa3_ends);
        int split = 1;
        if (q < 64 && kvh < k->heads) {
            /* decode under grouped-query attention: the heads/kv_heads query
             * heads that share a KV head are packed into the rows of one
             * block, so K and V are streamed once per KV head (FlashAttention
             * pack_gqa; flash-decoding; FlashInfer's GQA decode) */
            s.b = (double)k->b * kvh;
            s.m = q * ((double)k->heads / kvh);
        }
        if (q >= 64) {
            /* FlashAttention-2 forward: a CTA owns 128 query rows of one head
             * and streams the keys (block size Br = 128 for head_dim <= 128,
             * Dao 2023, "FlashAttention-2", section 3; PyTorch's kernels in
             * data/measured: Flash_fwd_kernel_traits<64|128, 128, ...>) */
            t.m = FA_BLOCK_M;
        } else {
            /* decode (flash-decoding, Dao et al. 2023): the few query rows pad
             * to the 64-row minimum MMA block, and the KV length is split the
             * way FlashAttention-2's split-KV kernel splits it */
            t.m = 64;
            split = fa2_num_splits(s.b * ceil(s.m / 64.0), g->sm_count > 0 ? g->sm_count : 1,
                                   ceil(kv_eff / fa2_splitkv_block_n(d)));
        }
        if (t.n < 16)
            t.n = 16;
        int r = gemm_estimate(g, c, cls, peak, tensor, &s, &t, split, e);
        if (!r)
            stream_floor(g, c, k->cold, e);
        return r;
    }
    case ST_KOP_ELEMENTWISE:
    case ST_KOP_EMBEDDING:
    case ST_KOP_SOFTMAX:
    case ST_KOP_TOPK:
    case ST_KOP_NORM: {
        if (k->rows <= 0 || k->cols <= 0) {
            st_error_set(err, ST_EINVAL, "rows and cols must be positive (rows=%lld cols=%lld)", k->rows,
                         k->cols);
            return ST_EINVAL;
        }
        if (k->op == ST_KOP_TOPK && !k->router_fused)
            return topk_estimate(g, c, k, e, err);
        double elems = (double)k->rows * (double)k->cols;
        int nin = k->n_in > 0 ? k->n_in : 1, nout = k->n_out > 0 ? k->n_out : 1;
        double fpe = k->flops_per_elem;
        double alu_fpe = -1; /* >= 0: the ALU side's work per element, when it differs from fpe */
        if (k->op == ST_KOP_SOFTMAX || k->op == ST_KOP_TOPK) {
            /* nin as given: a softmax's backward reads two rows (y and dy) */
            nout = 1;
            if (fpe <= 0)
                fpe = 5; /* max, subtract, exp, sum, scale */
        } else if (k->op == ST_KOP_NORM) {
            nin = 1;
            nout = 1;
            if (fpe <= 0)
                fpe = 8; /* mean, variance, normalise, scale, shift: the FLOPs reported */
            /* the ALU side is priced by lane slots (a lane op is 2 FLOPs of
             * the FMA peak); kernels priced by their memory instructions
             * (mem_requests: one element per thread) have their per-element
             * work in that price already */
            if (k->flops_per_elem <= 0)
                alu_fpe = k->mem_requests > 0 ? 0 : 2.0 * norm_lane_ops(g, k, es);
        }
        double bytes = es * elems * (nin + nout);
        /* an elementwise op's FLOPs are the lane work it names (an FMA
         * counted as 2, as the peak counts it): no faster than the dtype's
         * vector peak, whatever the fitted ALU coefficient says */
        if (k->op == ST_KOP_ELEMENTWISE && fpe > 0 && vector_peak(g, k->dtype) > 0)
            e->alu_min_s = elems * fpe / vector_peak(g, k->dtype);
        /* extra passes over the input (PyTorch aten/src/ATen/native/cuda:
         * SoftMax.cu dispatches rows of up to 1024 elements to the
         * persistent warp softmax, which holds the row in registers, and
         * longer rows to cunn_SoftMaxForward, which reads it for the max, the
         * sum and the write; layer_norm_kernel.cu reads a row for its Welford
         * statistics and again to normalise) */
        /* the forward softmax's kernel for the release (st_softmax_path);
         * the backward and the router's softmax keep 2.1's split */
        int fwd_smx = k->op == ST_KOP_SOFTMAX && nin == 1;
        st_softmax_kernel smx = ST_SMX_BLOCK;
        if (fwd_smx)
            smx = st_softmax_path(g, k);
        else if (k->op == ST_KOP_SOFTMAX || k->op == ST_KOP_TOPK)
            smx = softmax_path_21((double)k->cols, es);
        double passes = 0;
        if (k->op == ST_KOP_SOFTMAX)
            passes = smx == ST_SMX_BLOCK ? 2 : 0;
        else if (k->op == ST_KOP_NORM)
            passes = 1;
        /* The backward of a long row (cunn_SoftMaxBackward) reads y and dy
         * for the sum, then both again for dx: one re-read of two tensors,
         * the bytes of the forward's two re-reads of one. Rows in flight
         * hold both. */
        double reread = passes * es * elems, row_bytes = es * (double)k->cols * nin;
        if (k->op == ST_KOP_NORM)
            bytes += 2.0 * es * (double)k->cols; /* gamma, beta */
        if (k->bytes_total > 0)
            bytes = k->bytes_total;
        /* the SM-side work of these kernels spreads evenly over the SMs
         * that get a block (a fluid share: counting whole blocks on the
         * busiest SM fits the A100 rows worse, norm 14-17% and rope 8-14%
         * against 10-16 and 6-13) */
        double clk = boost_hz(g);
        if (k->mem_requests > 0 && c->lsu_cycles > 0 && g->vendor == ST_VENDOR_NVIDIA)
            e->lsu_s = c->lsu_cycles / clk * (k->mem_requests + c->lsu_hit_share * k->mem_hits) /
                       busy_sms(g, k->lsu_blocks > 0 ? k->lsu_blocks : (double)k->rows);
        /* PyTorch 2.8 on copies an embedding's rows 16 bytes a thread
         * (st_embedding_vectorized): no offset arithmetic to price */
        if (k->index_elems > 0 && c->index_cycles > 0 && !st_embedding_vectorized(k)) {
            /* indexSelectLargeIndex: min(ceil(elements / 128), 8 x SMs)
             * blocks of 128 threads (Indexing.cu), a grid-stride loop (the
             * cap only matters past one block per SM, where all SMs work).
             * At the boost clock: the VIDUR A40 rows, held out, run at it. */
            e->index_s = k->index_elems * c->index_cycles / (busy_sms(g, ceil(k->index_elems / 128.0)) * clk);
        }
        int row_op = k->op == ST_KOP_SOFTMAX || k->op == ST_KOP_TOPK;
        double bs = row_op && smx == ST_SMX_WARP ? 128 : row_op && smx == ST_SMX_REG ? 1024
                  : row_block_threads(k->op, (double)k->cols, es);
        double resident = rows_resident(g, bs);
        if (row_op && smx == ST_SMX_WARP)
            resident *= (k->cols <= 128 ? 8 : 4); /* warp softmax: a row (two up to 128) per warp */
        int block_rows = k->op == ST_KOP_NORM || (row_op && smx != ST_SMX_WARP);
        int rc = vector_estimate(g, c, cls, bytes, elems * (alu_fpe >= 0 ? alu_fpe : fpe), (double)k->rows,
                                 (double)k->cols, reread, row_bytes, resident, block_rows, e);
        e->flops = elems * fpe;
        /* the register-resident forward kernels are bound by the SM, not
         * the memory, when the elements are small or the HBM fast: the
         * busiest SM's rows, each element (or register slot) at the fitted
         * cycles of the whole SM. Fitted on Hopper (data/measured); ROCm's
         * wave64 builds of these kernels are unmeasured and keep none. */
        double cyc = !fwd_smx ? 0 : smx == ST_SMX_WARP ? c->softmax_warp_cycles
                   : smx == ST_SMX_REG ? c->softmax_reg_cycles : 0;
        if (!rc && cyc > 0 && k->bytes_total <= 0 && g->vendor == ST_VENDOR_NVIDIA) {
            double slots = smx == ST_SMX_REG ? 1024.0 * st_softmax_reg_count((double)k->cols) : (double)k->cols;
            /* rows a block runs: the warp kernel's 128-thread blocks hold a
             * row per warp (two up to 128 elements), the register kernel's a
             * row each; the busiest SM's blocks, all their rows */
            double rpb = smx == ST_SMX_WARP ? (k->cols <= 128 ? 8 : 4) : 1;
            double blocks = ceil((double)k->rows / rpb);
            raise_to(e, ceil(blocks / busy_sms(g, blocks)) * rpb * slots * cyc / clk, "compute");
        }
        /* the layer norm's vectorized forward kernel (FP32, FP16 or BF16 and
         * N % 4 == 0; otherwise PyTorch runs its two-kernel path): its
         * family's SM cycles per row and per loop iteration, the busiest
         * SM's rows (st_gpu_coef.norm_row) */
        if (!rc && k->op == ST_KOP_NORM && !k->rms && k->bytes_total <= 0 && k->cols % ST_LN_VEC == 0 &&
            (es == 2 || es == 4) && g->vendor == ST_VENDOR_NVIDIA) {
            double per_row = st_layer_norm_row_cycles(c, g, (double)k->cols, es);
            if (per_row > 0) {
                double rows = (double)k->rows;
                raise_to(e, ceil(rows / busy_sms(g, rows)) * per_row / clk, "compute");
            }
        }
        return rc;
    }
    default:
        break;
    }
    st_error_set(err, ST_EINVAL, "unknown kernel op %d", (int)k->op);
    return ST_EINVAL;
}

int st_kernel_estimate(const st_gpu *g, const st_gpu_coef *c, const st_kernel *k,
                       const st_tile *force_tile, int force_split, st_kernel_est *e,
                       st_error *err)
{
    int rc = kernel_estimate(g, c, k, force_tile, force_split, e, err);
    if (rc)
        return rc;
    /* a step at the power limit (k->sustained): a tensor-core kernel's
     * work, counted at the 16-bit rate (a datatype's peak draws the power
     * the 16-bit peak does), no faster than the board's measured watts per
     * TFLOP/s allow under its TDP; the time alone stays its floor */
    double cap = e->cls == ST_KC_GEMM_TC ? st_gpu_sustained_tflops(g, k->dtype) : 0;
    if (k->sustained && cap > 0 && e->flops > 0) {
        raise_to(e, e->flops * 1e-12 / cap, "power");
    }
    e->floor_s = kernel_floor(g, k, e);
    /* the estimate itself stays the model's (the committed table prices no
     * kernel below its floor: every validation figure is unchanged by it) */
    double lo_min = e->floor_s < e->gpu_s ? e->floor_s : e->gpu_s;
    if (e->lo_s < lo_min)
        e->lo_s = lo_min;
    return 0;
}
