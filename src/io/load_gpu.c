/* kind: gpu -> st_gpu (see strata-presets(5)). */
#include "config.h"
#include "io/loaders.h"

#include <string.h>

static const fkey gpu_keys[] = {
    {"kind", 1, "gpu"},
    {"name", 1, "marketing name"},
    {"aliases", 0, "names the driver reports"},
    {"vendor", 1, "nvidia or amd"},
    {"arch", 1, "architecture, e.g. hopper"},
    {"form_factor", 0, "sxm, pcie or oam"},
    {"release_year", 0, "year"},
    {"sm_count", 1, "number of SMs or CUs"},
    {"boost_clock_mhz", 1, "MHz"},
    {"base_clock_mhz", 0, "MHz"},
    {"memory_gib", 1, "GiB"},
    {"cuda_total_gib", 0, "GiB the driver reports as total (cudaMemGetInfo), below memory_gib"},
    {"memory_type", 0, "e.g. HBM3"},
    {"memory_bw_gbs", 1, "GB/s"},
    {"l2_mib", 1, "MiB"},
    {"llc_mib", 0, "MiB"},
    {"smem_per_sm_kib", 1, "KiB"},
    {"regs_per_sm", 1, "32-bit registers per SM"},
    {"max_threads_per_sm", 1, "threads"},
    {"max_blocks_per_sm", 1, "blocks"},
    {"warp_size", 1, "32 or 64"},
    {"launch_overhead_us", 1, "microseconds"},
    {"tdp_w", 1, "watts"},
    {"process_nm", 0, "foundry node in nm, e.g. 4 for TSMC 4N"},
    {"tc_sustained_w_per_tflops", 0, "board W per dense 16-bit tensor TFLOP/s at the power limit, measured"},
    {"sm_partitions", 0, "warp schedulers per SM (4 since Maxwell; 2 on GP100)"},
    {"dispatch_per_partition", 0, "warp instructions per scheduler per clock"},
    {"fp32_lanes_per_sm", 0, "FP32 FMA results per clock per SM"},
    {"throughput", 1, "per-dtype peak TFLOPS"},
    {"vector_tflops", 1, "non-matrix peak TFLOPS"},
};

static const char *const vendors[] = {"nvidia", "amd"};
/* The architectures the model knows, with their vendor: the kernel model
 * keys behaviour on them (tile sets, Hopper's asynchronous MMAs and
 * FlashAttention-3, Pascal's HBM2 controller), so a misspelt one would
 * silently price another chip. A new architecture is added here with what
 * it changes. */
static const char *const archs[] = {"pascal", "volta",         "turing", "ampere", "ada",  "hopper",
                                    "blackwell", "blackwell-rtx", "cdna1",  "cdna2",  "cdna3"};
static const int arch_vendor[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1};

const char *const *st_gpu_archs(size_t *n)
{
    *n = sizeof archs / sizeof archs[0];
    return archs;
}
static const char *const form_factors[] = {"sxm", "pcie", "oam"};

/* throughput: {fp32: {dense: X, sparse: Y}, ...}; fp32 required. */
int st_read_throughput(const fctx *c, const st_ynode *map, const char *key, st_peak *peak)
{
    static const fkey dtypes[] = {
        {"fp32", 1, "peak FP32 TFLOPS"}, {"tf32", 0, ""}, {"fp16", 0, ""}, {"bf16", 0, ""},
        {"fp8", 0, ""}, {"int8", 0, ""}, {"int4", 0, ""},
    };
    static const fkey rate_keys[] = {{"dense", 1, "TFLOPS or TOPS without sparsity"},
                                     {"sparse", 0, "with 2:4 sparsity"}};
    const st_ynode *t = f_get(map, key);
    char what[64];
    fctx sub = *c;
    int rc;
    snprintf(what, sizeof what, "%s", key);
    sub.what = what;
    rc = f_check_map(&sub, t, dtypes, sizeof dtypes / sizeof dtypes[0]);
    if (rc)
        return rc;
    for (size_t i = 0; i < t->n; i++) {
        st_dtype d;
        char w2[64];
        fctx rc_ctx = *c;
        st_dtype_parse(t->keys[i]->scalar, &d); /* checked above */
        snprintf(w2, sizeof w2, "%s.%s", key, t->keys[i]->scalar);
        rc_ctx.what = w2;
        rc = f_check_map(&rc_ctx, t->items[i], rate_keys, 2);
        if (rc == 0)
            rc = f_number(&rc_ctx, t->items[i], "dense", 1e-6, 1e6, TERA, "TFLOPS", &peak[d].dense);
        if (rc == 0)
            rc = f_number(&rc_ctx, t->items[i], "sparse", 1e-6, 1e6, TERA, "TFLOPS",
                          &peak[d].sparse);
        if (rc)
            return rc;
        if (peak[d].sparse > 0 && peak[d].sparse < peak[d].dense)
            return f_error(&rc_ctx, t->items[i],
                           "key 'sparse': %g TFLOPS is below the dense rate %g; sparse is the "
                           "2:4 figure (usually twice dense)",
                           peak[d].sparse / TERA, peak[d].dense / TERA);
    }
    return 0;
}

/* sm_partitions, dispatch_per_partition, fp32_lanes_per_sm: all three or
 * none (a partial set is a typo or an omission, not a request for the
 * reference), NVIDIA only (they describe its SM partitions; an AMD CU
 * issues wave64 differently and stays at the reference), and a partition's
 * lanes divide the warp. */
static int check_issue_keys(const fctx *c, const st_ynode *root, const st_gpu *g)
{
    static const char *const keys[] = {"sm_partitions", "dispatch_per_partition",
                                       "fp32_lanes_per_sm"};
    int first = -1; /* the first key given: errors point at it */
    for (int i = 2; i >= 0; i--)
        if (f_get(root, keys[i]))
            first = i;
    if (first < 0)
        return 0;
    const st_ynode *at = f_get(root, keys[first]);
    if (g->vendor != ST_VENDOR_NVIDIA)
        return f_error(c, at,
                       "key '%s': the FP32 issue keys describe NVIDIA SM partitions; leave them "
                       "out of a non-NVIDIA preset",
                       keys[first]);
    for (int i = 0; i < 3; i++)
        if (!f_get(root, keys[i]))
            return f_error(c, at,
                           "key '%s' is missing: sm_partitions, dispatch_per_partition and "
                           "fp32_lanes_per_sm go together (give all three, or none to leave the "
                           "FP32 issue model at its fitted reference)",
                           keys[i]);
    const st_ynode *ln = f_get(root, "fp32_lanes_per_sm");
    if (g->fp32_lanes_per_sm % g->sm_partitions != 0)
        return f_error(c, ln,
                       "key 'fp32_lanes_per_sm': %d lanes do not split evenly over %d partitions",
                       g->fp32_lanes_per_sm, g->sm_partitions);
    int per = g->fp32_lanes_per_sm / g->sm_partitions;
    if (per > g->warp_size || g->warp_size % per != 0)
        return f_error(c, ln,
                       "key 'fp32_lanes_per_sm': %d lanes per partition must divide the warp of "
                       "%d (a warp's FMA runs over whole cycles of its partition's lanes)",
                       per, g->warp_size);
    return 0;
}

/* arch: one of archs[] (any case), of the preset's vendor */
static int f_arch(const fctx *c, const st_ynode *root, int vendor, st_gpu *g)
{
    int a = -1, rc = f_enum(c, root, "arch", archs, (int)(sizeof archs / sizeof archs[0]), &a);
    if (rc || a < 0)
        return rc;
    if (arch_vendor[a] != vendor)
        return f_error(c, f_get(root, "arch"), "key 'arch': %s is an %s architecture, but vendor is %s; fix "
                       "one of the two", archs[a], vendors[arch_vendor[a]], vendors[vendor]);
    snprintf(g->arch, sizeof g->arch, "%s", archs[a]);
    return 0;
}

int st_read_gpu(const fctx *c, const st_ynode *root, st_gpu *g)
{
    static const fkey vec_keys[] = {{"fp32", 1, "peak FP32 non-matrix TFLOPS"},
                                    {"fp16", 0, ""}, {"bf16", 0, ""}, {"int8", 0, ""}};
    int rc, vendor = 0, ff = -1;
    const st_ynode *v;
    fctx vc = *c;
    memset(g, 0, sizeof *g);
    if ((rc = f_check_map(c, root, gpu_keys, sizeof gpu_keys / sizeof gpu_keys[0])))
        return rc;
    if ((rc = f_string(c, root, "name", g->name, sizeof g->name)) ||
        (rc = f_enum(c, root, "vendor", vendors, 2, &vendor)) ||
        (rc = f_arch(c, root, vendor, g)) ||
        (rc = f_enum(c, root, "form_factor", form_factors, 3, &ff)) ||
        (rc = f_int32(c, root, "release_year", 1990, 2100, &g->release_year)) ||
        (rc = f_int32(c, root, "sm_count", 1, 100000, &g->sm_count)) ||
        (rc = f_number(c, root, "boost_clock_mhz", 1, 100000, MHZ, "MHz", &g->boost_clock_hz)) ||
        (rc = f_number(c, root, "base_clock_mhz", 1, 100000, MHZ, "MHz", &g->base_clock_hz)) ||
        (rc = f_number(c, root, "memory_gib", 1e-3, 1e6, GIB, "GiB", &g->mem_bytes)) ||
        (rc = f_number(c, root, "cuda_total_gib", 1e-3, 1e6, GIB, "GiB", &g->cuda_total_bytes)) ||
        (rc = f_string(c, root, "memory_type", g->mem_type, sizeof g->mem_type)) ||
        (rc = f_number(c, root, "memory_bw_gbs", 1e-3, 1e7, GBS, "GB/s", &g->mem_bw)) ||
        (rc = f_number(c, root, "l2_mib", 0, 1e5, MIB, "MiB", &g->l2_bytes)) ||
        (rc = f_number(c, root, "llc_mib", 0, 1e5, MIB, "MiB", &g->llc_bytes)) ||
        (rc = f_number(c, root, "smem_per_sm_kib", 0, 1e5, KIB, "KiB", &g->smem_per_sm_bytes)) ||
        (rc = f_int32(c, root, "regs_per_sm", 1, 100000000, &g->regs_per_sm)) ||
        (rc = f_int32(c, root, "max_threads_per_sm", 1, 1000000, &g->max_threads_per_sm)) ||
        (rc = f_int32(c, root, "max_blocks_per_sm", 1, 100000, &g->max_blocks_per_sm)) ||
        (rc = f_int32(c, root, "warp_size", 1, 1024, &g->warp_size)) ||
        (rc = f_number(c, root, "launch_overhead_us", 0, 1e6, US, "us", &g->launch_overhead_s)) ||
        (rc = f_number(c, root, "tdp_w", 1, 1e6, 1, "W", &g->tdp_w)) ||
        (rc = f_number(c, root, "process_nm", 1, 100, 1, "nm", &g->process_nm)) ||
        (rc = f_number(c, root, "tc_sustained_w_per_tflops", 0, 100, 1, "W per TFLOP/s",
                       &g->tc_sustained_w_per_tflops)) ||
        (rc = f_int32(c, root, "sm_partitions", 1, 64, &g->sm_partitions)) ||
        (rc = f_int32(c, root, "dispatch_per_partition", 1, 8, &g->dispatch_per_partition)) ||
        (rc = f_int32(c, root, "fp32_lanes_per_sm", 1, 4096, &g->fp32_lanes_per_sm)) ||
        (rc = st_read_throughput(c, root, "throughput", g->matrix)))
        return rc;
    v = f_get(root, "aliases");
    if (v) {
        if (v->kind != ST_Y_SEQ || v->n > ST_GPU_MAX_ALIASES)
            return f_error(c, v, "key 'aliases': expected a list of at most %d names, found %s",
                           ST_GPU_MAX_ALIASES,
                           v->kind == ST_Y_SEQ ? "a longer list" : st_ykind_name(v->kind));
        for (size_t i = 0; i < v->n; i++) {
            const st_ynode *a = v->items[i];
            if (a->kind != ST_Y_SCALAR || st_ynode_is_null(a) || !a->scalar[0] ||
                strlen(a->scalar) >= ST_ID_MAX)
                return f_error(c, a, "key 'aliases': each alias is a name of 1 to %d bytes",
                               ST_ID_MAX - 1);
            snprintf(g->aliases[i], ST_ID_MAX, "%s", a->scalar);
        }
        g->n_aliases = (int)v->n;
    }
    g->vendor = (st_vendor)vendor;
    if (ff >= 0)
        snprintf(g->form_factor, sizeof g->form_factor, "%s", form_factors[ff]);
    v = f_get(root, "vector_tflops");
    vc.what = "vector_tflops";
    if ((rc = f_check_map(&vc, v, vec_keys, sizeof vec_keys / sizeof vec_keys[0])) ||
        (rc = f_number(&vc, v, "fp32", 1e-6, 1e6, TERA, "TFLOPS", &g->vector[ST_FP32])) ||
        (rc = f_number(&vc, v, "fp16", 1e-6, 1e6, TERA, "TFLOPS", &g->vector[ST_FP16])) ||
        (rc = f_number(&vc, v, "bf16", 1e-6, 1e6, TERA, "TFLOPS", &g->vector[ST_BF16])) ||
        (rc = f_number(&vc, v, "int8", 1e-6, 1e6, TERA, "TOPS", &g->vector[ST_INT8])))
        return rc;
    /* the driver keeps part of the memory for itself: CUDA's total is below
     * the datasheet's, never above */
    if (g->cuda_total_bytes > g->mem_bytes)
        return f_error(c, f_get(root, "cuda_total_gib"),
                       "key 'cuda_total_gib': %g GiB is more than memory_gib %g; give the total CUDA reports "
                       "(torch.cuda.mem_get_info()[1] / 2**30), which is below the datasheet's",
                       g->cuda_total_bytes / GIB, g->mem_bytes / GIB);
    if (g->warp_size != 32 && g->warp_size != 64)
        return f_error(c, f_get(root, "warp_size"),
                       "key 'warp_size': %d threads; NVIDIA GPUs run warps of 32, AMD CDNA wavefronts of 64",
                       g->warp_size);
    /* an SM holds at least one warp, and PyTorch's row kernels launch
     * blocks of up to 1024 threads, which the SM must be able to hold */
    if (g->max_threads_per_sm < 1024 || g->max_threads_per_sm % g->warp_size)
        return f_error(c, f_get(root, "max_threads_per_sm"),
                       "key 'max_threads_per_sm': %d threads; give the SM's resident thread limit, a multiple "
                       "of the warp (%d) and at least 1024 (a 1024-thread block must fit; 1024 to 2560 on every "
                       "GPU strata ships)",
                       g->max_threads_per_sm, g->warp_size);
    if ((rc = check_issue_keys(c, root, g)))
        return rc;
    if (g->base_clock_hz > g->boost_clock_hz)
        return f_error(c, f_get(root, "base_clock_mhz"),
                       "key 'base_clock_mhz': %g MHz is above boost_clock_mhz %g; swap them?",
                       g->base_clock_hz / MHZ, g->boost_clock_hz / MHZ);
    return 0;
}
