/* The GPU kernel coefficient table (calibration/gpu-kernels.yaml). */
#include "config.h"
#include "gpu/gpu.h"
#include "io/fields.h"
#include "io/io.h"
#include "io/loaders.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int read_classes(const fctx *c, const st_ynode *map, st_gpu_coef *out)
{
    if (map->kind != ST_Y_MAP)
        return f_error(c, map, "'classes' must be a mapping of class name to coefficients");
    int seen[ST_KC_COUNT] = {0};
    for (size_t i = 0; i < map->n; i++) {
        const st_ynode *key = map->keys[i], *v = map->items[i];
        int cls = -1;
        for (int k = 0; k < ST_KC_COUNT; k++)
            if (strcmp(key->scalar, st_kclass_name((st_kclass)k)) == 0)
                cls = k;
        if (cls < 0)
            return f_error(c, key, "unknown kernel class '%s' (known: gemm_simt, gemm_tc, conv, "
                                   "elementwise, norm, softmax)", key->scalar);
        static const fkey keys[] = {
            {"features", 1, "list of feature names"},
            {"beta", 1, "list of coefficients"},
            {"sigma", 1, "log-space spread"},
            {"n_fit", 0, "samples fitted"},
            {"overlap", 0, "max (compute and memory overlap) or sum"},
            {"train_mape", 0, "fit MAPE, percent"},
        };
        if (f_check_map(c, v, keys, sizeof keys / sizeof keys[0]))
            return ST_EINVAL;
        const char *const *names;
        int nf = st_kclass_features((st_kclass)cls, &names);
        const st_ynode *fs = f_get(v, "features"), *bs = f_get(v, "beta");
        if (fs->kind != ST_Y_SEQ || (int)fs->n != nf)
            return f_error(c, fs, "class %s needs the %d features this strata computes; the table "
                                  "was written by another version: regenerate it with tools/calibrate",
                           key->scalar, nf);
        for (int k = 0; k < nf; k++)
            if (fs->items[k]->kind != ST_Y_SCALAR || strcmp(fs->items[k]->scalar, names[k]) != 0)
                return f_error(c, fs->items[k], "feature %d of class %s must be '%s'; regenerate "
                                                "the table with tools/calibrate", k + 1, key->scalar,
                               names[k]);
        if (bs->kind != ST_Y_SEQ || (int)bs->n != nf)
            return f_error(c, bs, "class %s: 'beta' must list %d numbers, one per feature",
                           key->scalar, nf);
        for (int k = 0; k < nf; k++)
            /* each beta weighs a time (a feature in seconds): a negative one would
             * let a kernel run faster than no work at all; the fit keeps them >= 0 */
            if (f_node_number(c, bs->items[k], "beta", 0, 1e9, &out->cls[cls].beta[k]))
                return ST_EINVAL;
        int z = st_gpu_coef_zero_leading(out, (st_kclass)cls);
        if (z >= 0)
            return f_error(c, bs->items[z], "class %s: beta '%s' is 0, so its %s would take no time "
                           "(faster than any GPU's peak); regenerate the table with tools/calibrate",
                           key->scalar, names[z], strcmp(names[z], "compute") == 0 ? "math" : "bytes");
        if (f_number(c, v, "sigma", 0, 10, 1, "", &out->cls[cls].sigma))
            return ST_EINVAL;
        if (f_int32(c, v, "n_fit", 0, 1000000000, &out->cls[cls].n_fit))
            return ST_EINVAL;
        const st_ynode *ov = f_get(v, "overlap");
        out->cls[cls].sum = 0;
        if (ov) {
            if (ov->kind != ST_Y_SCALAR || (strcmp(ov->scalar, "max") != 0 && strcmp(ov->scalar, "sum") != 0))
                return f_error(c, ov, "class %s: 'overlap' must be max or sum", key->scalar);
            out->cls[cls].sum = strcmp(ov->scalar, "sum") == 0;
        }
        out->cls[cls].n = nf;
        seen[cls] = 1;
    }
    for (int k = 0; k < ST_KC_COUNT; k++)
        if (!seen[k])
            return f_error(c, map, "class '%s' is missing; regenerate the table with tools/calibrate",
                           st_kclass_name((st_kclass)k));
    return 0;
}

/* Key i of an architecture map (`table`) into dst (size n): a family name
 * that fits, not given before in any case (keys are looked up without
 * regard to case) */
static int arch_key(const fctx *c, const st_ynode *map, size_t i, const char *table, const char *example,
                    char *dst, size_t n)
{
    const char *key = map->keys[i]->scalar;
    /* a family a preset can name (a set of batched tiles adds ".bmm"):
     * any other key would be kept and never looked up */
    size_t na, fl = strlen(key);
    const char *const *archs = st_gpu_archs(&na);
    if (strcmp(table, "tiles") == 0 && fl > strlen(ST_TILES_BATCHED) &&
        strcasecmp(key + fl - strlen(ST_TILES_BATCHED), ST_TILES_BATCHED) == 0)
        fl -= strlen(ST_TILES_BATCHED);
    int known = 0;
    for (size_t a = 0; a < na && !known; a++)
        known = strlen(archs[a]) == fl && strncasecmp(archs[a], key, fl) == 0;
    if (!known) {
        char choices[256] = "";
        for (size_t a = 0; a < na; a++) {
            size_t u = strlen(choices);
            snprintf(choices + u, sizeof choices - u, "%s%s", a ? ", " : "", archs[a]);
        }
        const char *s = st_suggest(key, archs, na);
        char hint[64] = "";
        if (s)
            snprintf(hint, sizeof hint, "did you mean '%s'? ", s);
        return f_error(c, map->keys[i], "'%s' in '%s' is not an architecture family; %sone of: %s%s", key, table,
                       hint, choices,
                       strcmp(table, "tiles") == 0 ? " (a set of batched tiles adds .bmm, like 'ampere.bmm')" : "");
    }
    if (strlen(key) >= n)
        return f_error(c, map->keys[i],
                       "architecture key '%s' is longer than %zu characters; use the family name, like %s", key,
                       n - 1, example);
    for (size_t j = 0; j < i; j++)
        if (strcasecmp(map->keys[j]->scalar, key) == 0)
            return f_error(c, map->keys[i],
                           "architecture '%s' appears twice in '%s' (as '%s' before; case does not matter); "
                           "keep one",
                           key, table, map->keys[j]->scalar);
    snprintf(dst, n, "%s", key);
    return 0;
}

static int read_tiles(const fctx *c, const st_ynode *map, st_gpu_coef *out)
{
    if (map->kind != ST_Y_MAP)
        return f_error(c, map, "'tiles' must map an architecture to a list like [128x64, 64x64]");
    if (map->n > sizeof out->tiles / sizeof out->tiles[0])
        return f_error(c, map, "at most %zu architectures in 'tiles'",
                       sizeof out->tiles / sizeof out->tiles[0]);
    for (size_t i = 0; i < map->n; i++) {
        const st_ynode *seq = map->items[i];
        if (seq->kind != ST_Y_SEQ || seq->n == 0 || seq->n > ST_GPU_MAX_TILES)
            return f_error(c, seq, "tiles of '%s' must be a list of 1 to %d tiles like 128x64",
                           map->keys[i]->scalar, ST_GPU_MAX_TILES);
        if (arch_key(c, map, i, "tiles", "'ampere' or 'ampere.bmm'", out->tiles[i].arch,
                     sizeof out->tiles[i].arch))
            return ST_EINVAL;
        for (size_t k = 0; k < seq->n; k++) {
            const st_ynode *t = seq->items[k];
            int m = 0, n = 0;
            char tail;
            if (t->kind != ST_Y_SCALAR || sscanf(t->scalar, "%dx%d%c", &m, &n, &tail) != 2 || m < 8 ||
                n < 8 || m > 512 || n > 512)
                return f_error(c, t, "a tile is ROWSxCOLS with each 8..512, like 128x64");
            out->tiles[i].t[k].m = m;
            out->tiles[i].t[k].n = n;
        }
        out->tiles[i].n = (int)seq->n;
    }
    out->n_tile_sets = (int)map->n;
    return 0;
}

/* A per-family map (gemm_epilogue_cycles, norm_row_cycles, ...):
 * architecture family -> SM cycles, into t[] and *n; `eg` a value for the
 * example in the error */
static int read_arch_cycles(const fctx *c, const st_ynode *map, const char *key, const char *eg, double max,
                            st_arch_cycles *t, int *n)
{
    if (map->kind != ST_Y_MAP || map->n == 0)
        return f_error(c, map, "'%s' must map an architecture family to SM cycles, like {hopper: %s}", key, eg);
    if (map->n > ST_ARCH_CYCLES_MAX)
        return f_error(c, map, "at most %d architectures in '%s'", ST_ARCH_CYCLES_MAX, key);
    for (size_t i = 0; i < map->n; i++) {
        if (arch_key(c, map, i, key, "'hopper'", t[i].arch, sizeof t[i].arch) ||
            f_number(c, map, map->keys[i]->scalar, 0.001, max, 1, "cycles", &t[i].cycles))
            return ST_EINVAL;
    }
    *n = (int)map->n;
    return 0;
}

/* The first family of a[] that b[] lacks (-1: none) */
static int missing_family(const st_arch_cycles *a, int na, const st_arch_cycles *b, int nb)
{
    for (int i = 0; i < na; i++) {
        int found = 0;
        for (int j = 0; j < nb && !found; j++)
            found = strcasecmp(a[i].arch, b[j].arch) == 0;
        if (!found)
            return i;
    }
    return -1;
}

/* The layer norm's two maps price one floor: both or neither, over the
 * same families (a family in one alone would get half a floor) */
static int norm_pair(const fctx *c, const st_ynode *nr, const st_ynode *ni, const st_gpu_coef *out)
{
    if (!nr && !ni)
        return 0;
    if (!nr || !ni)
        return f_error(c, nr ? nr : ni, "%s without %s: the layer norm's floor needs both (SM cycles a row and "
                       "an iteration); regenerate the table with tools/calibrate",
                       nr ? "norm_row_cycles" : "norm_iter_cycles", nr ? "norm_iter_cycles" : "norm_row_cycles");
    int i = missing_family(out->norm_row, out->n_norm_row, out->norm_iter, out->n_norm_iter);
    if (i >= 0)
        return f_error(c, nr->keys[i], "'%s' has norm_row_cycles but no norm_iter_cycles: give the family both, "
                       "or neither", out->norm_row[i].arch);
    i = missing_family(out->norm_iter, out->n_norm_iter, out->norm_row, out->n_norm_row);
    if (i >= 0)
        return f_error(c, ni->keys[i], "'%s' has norm_iter_cycles but no norm_row_cycles: give the family both, "
                       "or neither", out->norm_iter[i].arch);
    return 0;
}

static void write_arch_cycles(FILE *f, const char *key, const st_arch_cycles *t, int n)
{
    if (n <= 0)
        return;
    fprintf(f, "%s:\n", key);
    for (int i = 0; i < n; i++)
        fprintf(f, "  %s: %.17g\n", t[i].arch, t[i].cycles);
}

/* A map of dispatch class -> microseconds into v (seconds); d may be NULL. */
static int read_disp(fctx *c, const st_ynode *d, const char *key, double *v)
{
    if (!d)
        return 0;
    if (d->kind != ST_Y_MAP)
        return f_error(c, d, "'%s' must map a dispatch class to microseconds", key);
    for (size_t i = 0; i < d->n; i++) {
        int k = -1;
        for (int j = 0; j < ST_DISP_COUNT; j++)
            if (strcmp(d->keys[i]->scalar, st_dispatch_name((st_dispatch)j)) == 0)
                k = j;
        if (k < 0)
            return f_error(c, d->keys[i], "unknown dispatch class '%s' (known: bmm, linear, conv, "
                                          "elementwise, norm, softmax, other)", d->keys[i]->scalar);
        double us;
        if (f_node_number(c, d->items[i], d->keys[i]->scalar, 0, 1e6, &us))
            return ST_EINVAL;
        v[k] = us * 1e-6;
    }
    /* every class priced: a class left out would cost nothing on the host
     * (or in the harness) without a word; 0 is written out where meant */
    for (int j = 0; j < ST_DISP_COUNT; j++) {
        int have = 0;
        for (size_t i = 0; i < d->n && !have; i++)
            have = strcmp(d->keys[i]->scalar, st_dispatch_name((st_dispatch)j)) == 0;
        if (!have)
            return f_error(c, d, "'%s' has no '%s' class; give every class (bmm, linear, conv, elementwise, "
                                 "norm, softmax, other), 0 where it costs nothing", key,
                           st_dispatch_name((st_dispatch)j));
    }
    return 0;
}

int st_gpu_coef_zero_leading(const st_gpu_coef *c, st_kclass cls)
{
    /* the leading terms must cost something: at 0 a GEMM's math or a
     * stream's bytes would take no time, past any GPU's peak */
    static const char *const leading[] = {"compute", "dram_hbm", "dram_other", "stream"};
    const char *const *names;
    int nf = st_kclass_features(cls, &names);
    for (int k = 0; k < nf; k++)
        for (size_t q = 0; q < sizeof leading / sizeof leading[0]; q++)
            if (strcmp(names[k], leading[q]) == 0 && !(c->cls[cls].beta[k] > 0))
                return k;
    return -1;
}

int st_gpu_coef_load(const char *path, st_gpu_coef *out, st_error *err)
{
    char buf[600];
    if (!(path = st_data_file(path, "calibration/gpu-kernels.yaml", buf, sizeof buf, err)))
        return err ? err->code : ST_ENOTFOUND;
    memset(out, 0, sizeof *out);
    st_ydoc doc;
    int rc = st_ydoc_load_file(&doc, path, err);
    if (rc)
        return rc;
    fctx c = {doc.path, "GPU kernel coefficients", err, "the table `strata calibrate` writes (src/gpu/gpu.h)"};
    static const fkey keys[] = {
        {"kind", 1, "gpu-coefficients"},
        {"e_ref_w_per_tflop", 1, "W per FP32 TFLOP/s a GPU needs to hold boost clock"},
        {"tc_energy_ratio", 1, "tensor / SIMT energy per FLOP"},
        {"l2_reuse_share", 1, "share of L2 that row re-reads can hit in"},
        {"l2_reuse_sharpness", 1, "how abruptly row re-reads, and whole tensors between passes, stop hitting L2 (exponent)"},
        {"gemm_reuse_span", 0, "multiple of L2 a wave's GEMM operand panels may span and still be shared"},
        {"gemm_reuse_sharpness", 0, "how abruptly GEMM panels stop being shared (exponent)"},
        {"lsu_cycles", 0, "SM cycles per warp-wide memory instruction of one-element-per-thread kernels"},
        {"lsu_hit_share", 0, "an L1 hit's share of lsu_cycles"},
        {"index_cycles", 0, "SM cycles per element of index_select's offset arithmetic"},
        {"topk_pass_cycles", 0, "SM cycles per pass of PyTorch's single-block radix select (the router's top-k)"},
        {"softmax_warp_cycles", 0, "SM cycles per element of PyTorch's persistent warp softmax"},
        {"softmax_reg_cycles", 0, "SM cycles per register slot of PyTorch's cunn_SoftMaxForwardReg"},
        {"tinygemm_wavefront_cycles", 0, "SM cycles per L1 wavefront of tinygemm's loads (weight-only INT4)"},
        {"gemm_epilogue_cycles", 0, "SM cycles per 128-byte output line of a CUDA-core GEMM, per architecture"},
        {"norm_row_cycles", 0, "SM cycles per row of PyTorch's vectorized layer norm, per architecture"},
        {"norm_iter_cycles", 0, "SM cycles per FP32 loop iteration of PyTorch's vectorized layer norm, per architecture"},
        {"dispatch_us", 1, "framework per-op host cost by class"},
        {"harness_us", 0, "per-op overhead of the calibration data's timing harness by class"},
        {"classes", 1, "coefficients per kernel class"},
        {"tiles", 0, "library tiles per architecture"},
        {"source", 0, "what it was fitted on"},
    };
    rc = ST_EINVAL;
    if (!doc.root) {
        st_error_set(err, ST_EINVAL, "%s:1:1: empty coefficient file; regenerate it with tools/calibrate",
                     doc.path);
        goto done;
    }
    if (f_get(doc.root, "lsu_ns")) {
        /* tables written before the memory-instruction cost moved to cycles */
        f_error(&c, f_get(doc.root, "lsu_ns"),
                "lsu_ns (ns per memory instruction) is now lsu_cycles (SM cycles at the boost clock): "
                "regenerate the table with tools/calibrate, or write lsu_cycles: lsu_ns x the boost clock "
                "in GHz of the GPU it was fitted on (the A100's 1.41)");
        goto done;
    }
    if (f_check_map(&c, doc.root, keys, sizeof keys / sizeof keys[0]))
        goto done;
    char kind[32] = "";
    if (f_string(&c, doc.root, "kind", kind, sizeof kind))
        goto done;
    if (strcmp(kind, "gpu-coefficients") != 0) {
        f_error(&c, f_get(doc.root, "kind"), "kind must be 'gpu-coefficients', not '%s'", kind);
        goto done;
    }
    if (f_number(&c, doc.root, "e_ref_w_per_tflop", 0, 1000, 1, "W/TFLOP/s", &out->e_ref_w_per_tflop) ||
        f_number(&c, doc.root, "tc_energy_ratio", 0, 1, 1, "", &out->tc_energy_ratio))
        goto done;
    if (f_number(&c, doc.root, "l2_reuse_share", 0.01, 100, 1, "", &out->l2_reuse_share) ||
        f_number(&c, doc.root, "l2_reuse_sharpness", 0.5, 64, 1, "", &out->l2_reuse_sharpness) ||
        f_number(&c, doc.root, "gemm_reuse_span", 0.01, 1e6, 1, "", &out->gemm_reuse_span) ||
        f_number(&c, doc.root, "gemm_reuse_sharpness", 0.5, 64, 1, "", &out->gemm_reuse_sharpness) ||
        f_number(&c, doc.root, "lsu_cycles", 0.01, 1e5, 1, "cycles", &out->lsu_cycles) ||
        f_number(&c, doc.root, "lsu_hit_share", 0, 1, 1, "", &out->lsu_hit_share) ||
        f_number(&c, doc.root, "index_cycles", 0.01, 100, 1, "cycles", &out->index_cycles) ||
        f_number(&c, doc.root, "topk_pass_cycles", 1, 1e6, 1, "cycles", &out->topk_pass_cycles) ||
        f_number(&c, doc.root, "softmax_warp_cycles", 0.001, 1000, 1, "cycles", &out->softmax_warp_cycles) ||
        f_number(&c, doc.root, "softmax_reg_cycles", 0.001, 1000, 1, "cycles", &out->softmax_reg_cycles) ||
        f_number(&c, doc.root, "tinygemm_wavefront_cycles", 0.001, 1000, 1, "cycles",
                 &out->tinygemm_wavefront_cycles))
        goto done;
    if (read_disp(&c, f_get(doc.root, "dispatch_us"), "dispatch_us", out->dispatch_s) ||
        read_disp(&c, f_get(doc.root, "harness_us"), "harness_us", out->harness_s))
        goto done;
    if (read_classes(&c, f_get(doc.root, "classes"), out))
        goto done;
    const st_ynode *t = f_get(doc.root, "tiles");
    if (t && read_tiles(&c, t, out))
        goto done;
    const st_ynode *ep = f_get(doc.root, "gemm_epilogue_cycles"), *nr = f_get(doc.root, "norm_row_cycles"),
                   *ni = f_get(doc.root, "norm_iter_cycles");
    if ((ep && read_arch_cycles(&c, ep, "gemm_epilogue_cycles", "11.5", 1e4, out->epilogue, &out->n_epilogue)) ||
        (nr && read_arch_cycles(&c, nr, "norm_row_cycles", "300", 1e5, out->norm_row, &out->n_norm_row)) ||
        (ni && read_arch_cycles(&c, ni, "norm_iter_cycles", "250", 1e5, out->norm_iter, &out->n_norm_iter)) ||
        norm_pair(&c, nr, ni, out))
        goto done;
    /* the rate prices through the CUDA-core class's epilogue coefficient
     * (st_gpu_coef.epilogue): with that at 0 it would price nothing */
    int fe = st_kclass_feature(ST_KC_GEMM_SIMT, "epilogue");
    if (ep && (fe < 0 || !(out->cls[ST_KC_GEMM_SIMT].beta[fe] > 0))) {
        f_error(&c, ep, "gemm_epilogue_cycles needs class gemm_simt's 'epilogue' coefficient above 0 (the rate "
                "prices through it); regenerate the table with tools/calibrate");
        goto done;
    }
    snprintf(out->source, sizeof out->source, "%s", doc.path);
    rc = 0;
done:
    st_ydoc_free(&doc);
    return rc;
}

int st_gpu_coef_write(FILE *f, const st_gpu_coef *c, const char *header)
{
    if (header)
        fputs(header, f);
    fprintf(f, "kind: gpu-coefficients\n");
    fprintf(f, "e_ref_w_per_tflop: %.17g\n", c->e_ref_w_per_tflop);
    fprintf(f, "tc_energy_ratio: %.17g\n", c->tc_energy_ratio);
    fprintf(f, "l2_reuse_share: %.17g\n", c->l2_reuse_share);
    fprintf(f, "l2_reuse_sharpness: %.17g\n", c->l2_reuse_sharpness);
    if (c->gemm_reuse_span > 0) {
        fprintf(f, "gemm_reuse_span: %.17g\n", c->gemm_reuse_span);
        fprintf(f, "gemm_reuse_sharpness: %.17g\n", c->gemm_reuse_sharpness);
    }
    if (c->lsu_cycles > 0) {
        fprintf(f, "lsu_cycles: %.17g\n", c->lsu_cycles);
        fprintf(f, "lsu_hit_share: %.17g\n", c->lsu_hit_share);
    }
    if (c->index_cycles > 0)
        fprintf(f, "index_cycles: %.17g\n", c->index_cycles);
    if (c->topk_pass_cycles > 0)
        fprintf(f, "topk_pass_cycles: %.17g\n", c->topk_pass_cycles);
    if (c->softmax_warp_cycles > 0)
        fprintf(f, "softmax_warp_cycles: %.17g\n", c->softmax_warp_cycles);
    if (c->softmax_reg_cycles > 0)
        fprintf(f, "softmax_reg_cycles: %.17g\n", c->softmax_reg_cycles);
    if (c->tinygemm_wavefront_cycles > 0)
        fprintf(f, "tinygemm_wavefront_cycles: %.17g\n", c->tinygemm_wavefront_cycles);
    write_arch_cycles(f, "gemm_epilogue_cycles", c->epilogue, c->n_epilogue);
    write_arch_cycles(f, "norm_row_cycles", c->norm_row, c->n_norm_row);
    write_arch_cycles(f, "norm_iter_cycles", c->norm_iter, c->n_norm_iter);
    fprintf(f, "dispatch_us:\n");
    for (int i = 0; i < ST_DISP_COUNT; i++)
        fprintf(f, "  %s: %.17g\n", st_dispatch_name((st_dispatch)i), c->dispatch_s[i] * 1e6);
    fprintf(f, "harness_us:\n");
    for (int i = 0; i < ST_DISP_COUNT; i++)
        fprintf(f, "  %s: %.17g\n", st_dispatch_name((st_dispatch)i), c->harness_s[i] * 1e6);
    fprintf(f, "classes:\n");
    for (int k = 0; k < ST_KC_COUNT; k++) {
        const char *const *names;
        int nf = st_kclass_features((st_kclass)k, &names);
        fprintf(f, "  %s:\n    features: [", st_kclass_name((st_kclass)k));
        for (int i = 0; i < nf; i++)
            fprintf(f, "%s%s", i ? ", " : "", names[i]);
        fprintf(f, "]\n    beta: [");
        for (int i = 0; i < nf; i++)
            fprintf(f, "%s%.17g", i ? ", " : "", c->cls[k].beta[i]);
        fprintf(f, "]\n    overlap: %s\n    sigma: %.17g\n    n_fit: %d\n", c->cls[k].sum ? "sum" : "max",
                c->cls[k].sigma, c->cls[k].n_fit);
    }
    if (c->n_tile_sets) {
        fprintf(f, "tiles:\n");
        for (int i = 0; i < c->n_tile_sets; i++) {
            fprintf(f, "  %s: [", c->tiles[i].arch);
            for (int k = 0; k < c->tiles[i].n; k++)
                fprintf(f, "%s%dx%d", k ? ", " : "", c->tiles[i].t[k].m, c->tiles[i].t[k].n);
            fprintf(f, "]\n");
        }
    }
    return ferror(f) ? ST_EIO : 0;
}
