/* kind: edge -> st_edge: a mobile CPU or mobile GPU (see strata-presets(5)). */
#include "config.h"
#include "io/loaders.h"

#include <string.h>

static const fkey edge_keys[] = {
    {"kind", 1, "edge"},
    {"name", 1, "device name"},
    {"class", 1, "mobile_cpu or mobile_gpu"},
    {"soc", 1, "system on chip"},
    {"cores", 1, "cores used"},
    {"clock_mhz", 1, "MHz"},
    {"throughput", 1, "per-dtype peak TFLOPS"},
    {"memory_gib", 1, "GiB"},
    {"memory_bw_gbs", 1, "GB/s"},
    {"l1_kib", 0, "KiB per core"},
    {"l2_kib", 0, "KiB"},
    {"llc_mib", 0, "MiB"},
    {"dispatch_overhead_us", 1, "microseconds per operator"},
    {"tdp_w", 1, "watts"},
    {"simd_bits", 0, "mobile_cpu: vector register width, bits"},
    {"vector_registers", 0, "mobile_cpu: vector registers"},
};

int st_read_edge(const fctx *c, const st_ynode *root, st_edge *e)
{
    static const char *const classes[] = {"mobile_cpu", "mobile_gpu"};
    int rc, cls = 0;
    memset(e, 0, sizeof *e);
    if ((rc = f_check_map(c, root, edge_keys, sizeof edge_keys / sizeof edge_keys[0])) ||
        (rc = f_string(c, root, "name", e->name, sizeof e->name)) ||
        (rc = f_enum(c, root, "class", classes, 2, &cls)) ||
        (rc = f_string(c, root, "soc", e->soc, sizeof e->soc)) ||
        (rc = f_int32(c, root, "cores", 1, 100000, &e->cores)) ||
        (rc = f_number(c, root, "clock_mhz", 1, 100000, MHZ, "MHz", &e->clock_hz)) ||
        (rc = st_read_throughput(c, root, "throughput", e->peak)) ||
        (rc = f_number(c, root, "memory_gib", 1e-3, 1e6, GIB, "GiB", &e->mem_bytes)) ||
        (rc = f_number(c, root, "memory_bw_gbs", 1e-3, 1e7, GBS, "GB/s", &e->mem_bw)) ||
        (rc = f_number(c, root, "l1_kib", 0, 1e6, KIB, "KiB", &e->l1_bytes)) ||
        (rc = f_number(c, root, "l2_kib", 0, 1e6, KIB, "KiB", &e->l2_bytes)) ||
        (rc = f_number(c, root, "llc_mib", 0, 1e5, MIB, "MiB", &e->llc_bytes)) ||
        (rc = f_number(c, root, "dispatch_overhead_us", 0, 1e6, US, "us",
                       &e->dispatch_overhead_s)) ||
        (rc = f_number(c, root, "tdp_w", 0.01, 1e6, 1, "W", &e->tdp_w)) ||
        (rc = f_int32(c, root, "simd_bits", 0, 4096, &e->simd_bits)) ||
        (rc = f_int32(c, root, "vector_registers", 0, 1024, &e->vector_registers)))
        return rc;
    e->cls = (st_edge_class)cls;
    /* the register tile's inputs: a CPU's vector width in whole 32-bit
     * lanes; a GPU preset has no such keys (its lanes follow from peak and
     * clock) */
    static const char *const cpu_only[] = {"simd_bits", "vector_registers"};
    for (int i = 0; i < 2; i++) {
        const st_ynode *n = f_get(root, cpu_only[i]);
        if (n && e->cls != ST_EDGE_MOBILE_CPU)
            return f_error(c, n, "'%s' describes a mobile_cpu's vector unit; a mobile_gpu preset does not "
                                 "take it (remove the key)", cpu_only[i]);
    }
    const st_ynode *sb = f_get(root, "simd_bits");
    if (sb && (e->simd_bits < 32 || e->simd_bits % 32))
        return f_error(c, sb, "simd_bits must be a whole number of 32-bit lanes, 32 or more (128 for Arm ASIMD, "
                              "256 for AVX2), not %d", e->simd_bits);
    const st_ynode *vr = f_get(root, "vector_registers");
    if (vr && e->vector_registers < 4)
        return f_error(c, vr, "vector_registers must be 4 or more (32 on AArch64), not %d", e->vector_registers);
    /* a CPU's GEMM register tile needs both: missing, the preset is
     * refused here, at its file, not when a model is first evaluated */
    for (int i = 0; i < 2 && e->cls == ST_EDGE_MOBILE_CPU; i++)
        if (!f_get(root, cpu_only[i]))
            return f_error(c, root, "a mobile_cpu preset needs '%s' (%s) for its GEMM register tile; add it",
                           cpu_only[i], i == 0 ? "the vector register width in bits: 128 for Arm ASIMD"
                                               : "the vector register count: 32 on AArch64");
    return 0;
}
