/*
 * Every shipped preset and workload loads, and the spec sheets hold together:
 * FP32 peak = SMs x FP32 lanes/SM x 2 x boost clock (lanes from the vendors'
 * architecture whitepapers, listed here independently of the presets), 2:4
 * sparse = 2 x dense, and the Eyeriss-like preset matches Timeloop's ERT.
 */
#include "config.h"
#include "testutil.h"

#include "io/fields.h"
#include "io/io.h"

#include <dirent.h>
#include <math.h>

static void test_catalog_loads_everything(void **state)
{
    st_catalog cat;
    st_error err;
    size_t per_kind[ST_FILE_KIND_COUNT] = {0};
    (void)state;
    assert_int_equal(st_catalog_scan(&cat, &err), 0);
    for (size_t i = 0; i < cat.n; i++) {
        st_loaded *l = malloc(sizeof *l);
        assert_non_null(l);
        if (st_load(cat.items[i].path, l, &err) != 0)
            fail_msg("%s", err.msg);
        assert_int_equal(l->kind, cat.items[i].kind);
        assert_true(cat.items[i].name[0] != '\0');
        per_kind[l->kind]++;
        st_loaded_free(l);
        free(l);
    }
    /* issue #2's list: 19 GPUs, 2 accelerators, 2 edge, 2+ nodes, 1+ cluster, 22 workloads */
    assert_true(per_kind[ST_FILE_GPU] >= 19);
    assert_true(per_kind[ST_FILE_ACCEL] >= 2);
    assert_true(per_kind[ST_FILE_EDGE] >= 2);
    assert_true(per_kind[ST_FILE_NODE] >= 2);
    assert_true(per_kind[ST_FILE_CLUSTER] >= 1);
    assert_true(per_kind[ST_FILE_MODEL] >= 22);
    st_catalog_free(&cat);
}

/* FP32 lanes per SM/CU, from the architecture whitepapers: Pascal GP100 64,
 * GP104 (P4) 128; Volta 64; Turing 64; Ampere GA100 64, GA102 (A40) 128;
 * Ada 128; Hopper 128; Blackwell 128; AMD CDNA 1-3: 64 lanes per CU. */
static const struct {
    const char *id;
    int lanes;
} fp32_lanes[] = {
    {"p100-pcie-16gb", 64}, {"p4", 128},  {"v100-sxm2-32gb", 64}, {"v100-pcie-32gb", 64},
    {"t4", 64},             {"a100-40gb-sxm", 64}, {"a100-80gb-sxm", 64},
    {"a100-40gb-pcie", 64}, {"a100-80gb-pcie", 64}, {"a40", 128}, {"l4", 128},
    {"h100-sxm", 128},      {"h100-pcie", 128}, {"h200", 128}, {"b200", 128},
    {"rtx-4090", 128},      {"rtx-pro-6000", 128},
    {"mi100", 64},          {"mi210", 64}, {"mi250", 64}, {"mi300x", 64},
};

static void test_gpu_spec_consistency(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof fp32_lanes / sizeof fp32_lanes[0]; i++) {
        st_gpu g;
        st_error err;
        if (st_load_gpu(fp32_lanes[i].id, &g, &err) != 0)
            fail_msg("%s", err.msg);
        double derived = g.sm_count * fp32_lanes[i].lanes * 2.0 * g.boost_clock_hz;
        if (rel_diff(g.vector[ST_FP32], derived) > 0.02)
            fail_msg("%s: vector fp32 %.4g vs SMs x lanes x 2 x clock %.4g", g.id,
                     g.vector[ST_FP32], derived);
        for (int t = 0; t < ST_DTYPE_COUNT; t++)
            if (g.matrix[t].sparse > 0 && rel_diff(g.matrix[t].sparse, 2 * g.matrix[t].dense) > 0.01)
                fail_msg("%s %s: sparse %.4g is not 2x dense %.4g", g.id,
                         st_dtype_name((st_dtype)t), g.matrix[t].sparse, g.matrix[t].dense);
        /* tensor/matrix paths are never slower than plain fp32 */
        for (int t = ST_TF32; t < ST_DTYPE_COUNT; t++)
            if (g.matrix[t].dense > 0 && g.matrix[t].dense < g.matrix[ST_FP32].dense * 0.99 &&
                t != ST_TF32)
                fail_msg("%s: %s dense %.4g below fp32 %.4g", g.id, st_dtype_name((st_dtype)t),
                         g.matrix[t].dense, g.matrix[ST_FP32].dense);
        assert_true(g.warp_size == (g.vendor == ST_VENDOR_AMD ? 64 : 32));
        /* the FP32 issue set, where given, agrees with the lanes above */
        if (g.fp32_lanes_per_sm > 0 && g.fp32_lanes_per_sm != fp32_lanes[i].lanes)
            fail_msg("%s: fp32_lanes_per_sm %d vs %d", g.id, g.fp32_lanes_per_sm,
                     fp32_lanes[i].lanes);
        assert_true(g.mem_bw > 1e11 && g.mem_bytes > 4e9);
    }
}

/* Issue slots an FP32 FMA holds, from the SM figures of the whitepapers
 * (partitions per SM, FP32 lanes and dispatch units per partition):
 * GP100 2 x 32 lanes, 2 dispatch; GP104 4 x 32, 2; GV100, TU10x, GA100
 * 4 x 16, 1; GA102, AD10x, GH100, GB202 4 x 32, 1. Every NVIDIA GPU in the
 * calibration data must hold 2 (the reference the fitted operand term is
 * stated at, src/gpu/kernel.c); the AMD presets give none. */
static void test_fma_issue_cycles(void **state)
{
    static const struct {
        const char *id;
        double cycles;
    } want[] = {
        {"p100-pcie-16gb", 2}, {"p4", 2}, {"v100-pcie-32gb", 2}, {"v100-sxm2-32gb", 2}, {"t4", 2},
        {"a100-40gb-pcie", 2}, {"a100-40gb-sxm", 2}, {"a100-80gb-pcie", 2}, {"a100-80gb-sxm", 2},
        {"a40", 1}, {"l4", 1}, {"rtx-4090", 1}, {"h100-sxm", 1}, {"h100-pcie", 1}, {"h200", 1},
        {"b200", 1}, {"rtx-pro-6000", 1}, {"mi100", 0}, {"mi210", 0}, {"mi250", 0}, {"mi300x", 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        st_gpu g;
        st_error err;
        if (st_load_gpu(want[i].id, &g, &err) != 0)
            fail_msg("%s", err.msg);
        if (st_gpu_fma_issue_cycles(&g) != want[i].cycles)
            fail_msg("%s: an FMA holds %g issue slots, want %g", g.id, st_gpu_fma_issue_cycles(&g),
                     want[i].cycles);
    }
}

/* NeuSight's device sheets (shared data) agree on SM count and bandwidth.
 * Left out where NeuSight's sheet is wrong: P4 (it says 40 SMs; GP104 has
 * 2560 CUDA cores = 20 SMs of 128), L4 (60; AD104 as L4 has 7424 cores = 58
 * SMs), MI250 (a copy of the MI210 entry). */
static void test_against_neusight_devices(void **state)
{
    static const struct {
        const char *id, *file;
    } pairs[] = {
        {"a100-40gb-pcie", "NVIDIA_A100-PCIE-40GB"}, {"a100-40gb-sxm", "NVIDIA_A100-SXM4-40GB"},
        {"a100-80gb-pcie", "NVIDIA_A100_80GB_PCIe"}, {"v100-pcie-32gb", "Tesla_V100-PCIE-32GB"},
        {"t4", "Tesla_T4"},
        {"p100-pcie-16gb", "Tesla_P100-PCIE-16GB"},  {"mi100", "AMD_Instinct_MI100"},
        {"mi210", "AMD_Instinct_MI210"},
    };
    const char *root = shared_data();
    (void)state;
    if (!root) {
        printf("# skip: ../shared/data is absent\n");
        skip();
    }
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char path[1200];
        st_ydoc doc;
        st_error err;
        st_gpu g;
        double sm = 0, bw = 0;
        fctx c = {path, "device", &err, NULL};
        snprintf(path, sizeof path, "%s/neusight/devices/%s.json", root, pairs[i].file);
        assert_int_equal(st_ydoc_load_file(&doc, path, &err), 0);
        assert_int_equal(f_number(&c, doc.root, "Num_Sm", 1, 1e6, 1, "", &sm), 0);
        assert_int_equal(f_number(&c, doc.root, "Mem_Bw", 1, 1e6, 1e9, "", &bw), 0);
        st_ydoc_free(&doc);
        assert_int_equal(st_load_gpu(pairs[i].id, &g, &err), 0);
        if (g.sm_count != (int)sm || rel_diff(g.mem_bw, bw) > 0.05)
            fail_msg("%s: %d SMs %.4g B/s vs NeuSight %s: %.0f SMs %.4g B/s", g.id, g.sm_count,
                     g.mem_bw, pairs[i].file, sm, bw);
    }
}

/* The Eyeriss-like preset is Timeloop's design: energies from its ERT. */
static void test_eyeriss_matches_timeloop_ert(void **state)
{
    static const struct {
        const char *level, *ert;
    } map[] = {
        {"DRAM", "system_top_level.DRAM[1..1]"},
        {"shared_glb", "system_top_level.shared_glb[1..1]"},
        {"ifmap_spad", "system_top_level.ifmap_spad[1..168]"},
        {"weights_spad", "system_top_level.weights_spad[1..168]"},
        {"psum_spad", "system_top_level.psum_spad[1..168]"},
    };
    const char *root = shared_data();
    st_accel a;
    st_error err;
    (void)state;
    assert_int_equal(st_load_accel("eyeriss-like", &a, &err), 0);
    assert_int_equal(a.pe_x * a.pe_y, 168);
    if (!root) {
        printf("# skip: ../shared/data is absent\n");
        skip();
    }
    char path[1200];
    st_ydoc doc;
    snprintf(path, sizeof path, "%s/timeloop/eyeriss_like.ERT.yaml", root);
    assert_int_equal(st_ydoc_load_file(&doc, path, &err), 0);
    const st_ynode *tables = f_get(f_get(doc.root, "ERT"), "tables");
    assert_non_null(tables);
    for (size_t m = 0; m < sizeof map / sizeof map[0]; m++) {
        const st_mem_level *lvl = NULL;
        for (int i = 0; i < a.n_levels; i++)
            if (strcmp(a.level[i].name, map[m].level) == 0)
                lvl = &a.level[i];
        if (!lvl)
            fail_msg("no level %s in eyeriss-like", map[m].level);
        int found = 0;
        for (size_t t = 0; t < tables->n; t++) {
            const st_ynode *name = f_get(tables->items[t], "name");
            if (!name || strcmp(name->scalar, map[m].ert) != 0)
                continue;
            const st_ynode *actions = f_get(tables->items[t], "actions");
            for (size_t k = 0; k < actions->n; k++) {
                const char *an = f_get(actions->items[k], "name")->scalar;
                double pj = atof(f_get(actions->items[k], "energy")->scalar);
                double mine = !strcmp(an, "read")    ? lvl->e_read
                            : !strcmp(an, "write")   ? lvl->e_write
                            : !strcmp(an, "update")  ? lvl->e_update
                            : !strcmp(an, "leak")    ? lvl->e_leak : -1;
                if (mine >= 0 && fabs(mine * 1e12 - pj) > 1e-9 * (1 + pj))
                    fail_msg("%s %s: preset %.9g pJ, ERT %.9g pJ", map[m].level, an, mine * 1e12,
                             pj);
                found++;
            }
        }
        if (found < 4)
            fail_msg("%s: only %d ERT actions compared", map[m].level, found);
    }
    st_ydoc_free(&doc);
}

/* Measured files name devices the way the driver does; each must find its
 * preset (expected ids written here from the vendors' product names). */
static void test_device_names(void **state)
{
    static const struct {
        const char *device, *id;
    } cases[] = {
        {"Tesla V100-PCIE-32GB", "v100-pcie-32gb"}, {"Tesla_V100-PCIE-32GB", "v100-pcie-32gb"},
        {"NVIDIA A100-PCIE-40GB", "a100-40gb-pcie"}, {"NVIDIA_A100_80GB_PCIe", "a100-80gb-pcie"},
        {"NVIDIA A100-SXM4-40GB", "a100-40gb-sxm"},  {"NVIDIA H100 80GB HBM3", "h100-sxm"},
        {"Tesla P100-PCIE-16GB", "p100-pcie-16gb"},  {"Tesla P4", "p4"},
        {"tesla t4", "t4"},                          {"NVIDIA_L4", "l4"},
        {"AMD Instinct MI100", "mi100"},             {"AMD_Instinct_MI210", "mi210"},
        {"AMD Instinct MI250", "mi250"},             {"h100-sxm", "h100-sxm"},
    };
    st_gpu g;
    st_error err;
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (st_find_gpu_for_device(cases[i].device, &g, &err) != 0)
            fail_msg("%s: %s", cases[i].device, err.msg);
        assert_string_equal(g.id, cases[i].id);
    }
    assert_int_equal(st_find_gpu_for_device("NVIDIA H100 80GB HBM3 TP", &g, &err), ST_ENOTFOUND);
    assert_non_null(strstr(err.msg, "aliases"));
}

/* Every device sheet in the shared NeuSight data has a preset, but for the
 * _TP pseudo-device (two H100s as one). */
static void test_neusight_devices_have_presets(void **state)
{
    const char *root = shared_data();
    char path[1100];
    DIR *d;
    struct dirent *de;
    int n = 0;
    (void)state;
    if (!root) {
        printf("# skip: ../shared/data is absent\n");
        skip();
    }
    snprintf(path, sizeof path, "%s/neusight/devices", root);
    d = opendir(path);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        char name[256];
        st_gpu g;
        st_error err;
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0 || strstr(de->d_name, "_TP."))
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(l - 5), de->d_name);
        if (st_find_gpu_for_device(name, &g, &err) != 0)
            fail_msg("%s: %s", name, err.msg);
        n++;
    }
    closedir(d);
    assert_true(n >= 12);
}

static void test_nodes_and_clusters(void **state)
{
    st_cluster c;
    st_node n;
    st_error err;
    (void)state;
    assert_int_equal(st_load_node("dgx-h100", &n, &err), 0);
    assert_int_equal(n.gpus, 8);
    assert_string_equal(n.gpu.id, "h100-sxm");
    /* NVLink 4: 18 links x 25 GB/s per direction = 450 GB/s (H100 whitepaper) */
    assert_true(rel_diff(n.intra.bw, 450e9) < 0.01);
    /* DGX H200: the same NVLink4 fabric around eight 141 GB H200s (datasheet) */
    assert_int_equal(st_load_node("dgx-h200", &n, &err), 0);
    assert_int_equal(n.gpus, 8);
    assert_string_equal(n.gpu.id, "h200");
    assert_true(rel_diff(n.intra.bw, 450e9) < 0.01);
    assert_true(n.gpu.mem_bytes > 130e9 && n.gpu.tc_sustained_w_per_tflops > 0);
    assert_int_equal(st_load_cluster("ib-h100", &c, &err), 0);
    assert_true(c.nodes >= 2 && c.n_dims >= 1);
    assert_string_equal(c.node.gpu.id, "h100-sxm");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_loads_everything),
        cmocka_unit_test(test_gpu_spec_consistency),
        cmocka_unit_test(test_fma_issue_cycles),
        cmocka_unit_test(test_against_neusight_devices),
        cmocka_unit_test(test_eyeriss_matches_timeloop_ert),
        cmocka_unit_test(test_device_names),
        cmocka_unit_test(test_neusight_devices_have_presets),
        cmocka_unit_test(test_nodes_and_clusters),
    };
    return cmocka_run_group_tests_name("presets", tests, NULL, NULL);
}
