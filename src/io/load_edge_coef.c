/* The edge coefficient table (calibration/edge.yaml; see src/gpu/edge.h). */
#include "config.h"
#include "gpu/edge.h"
#include "io/fields.h"
#include "io/io.h"

#include <stdio.h>
#include <string.h>

int st_edge_coef_load(const char *path, st_edge_coef *out, st_error *err)
{
    char buf[600];
    if (!(path = st_data_file(path, "calibration/edge.yaml", buf, sizeof buf, err)))
        return err ? err->code : ST_ENOTFOUND;
    memset(out, 0, sizeof *out);
    st_ydoc doc;
    int rc = st_ydoc_load_file(&doc, path, err);
    if (rc)
        return rc;
    fctx c = {doc.path, "edge coefficients", err, "the table `strata calibrate --edge` writes (src/gpu/edge.h)"};
    static const fkey keys[] = {
        {"kind", 1, "edge-coefficients"},
        {"cpu_efficiency", 1, "mobile CPU: fraction of SIMD peak on GEMM-like operators"},
        {"cpu_depthwise_efficiency", 1, "mobile CPU: fraction of SIMD peak on depthwise convolutions"},
        {"gpu_efficiency", 1, "mobile GPU: fraction of peak on the GPU delegate's kernels"},
        {"gpu_kernel_us", 1, "mobile GPU: GPU-side cost per kernel, us"},
        {"sigma_cpu", 1, "mobile CPU: log-space spread of the fit"},
        {"sigma_gpu", 1, "mobile GPU: log-space spread of the fit"},
        {"n_fit_cpu", 0, "reference models the CPU coefficients were fitted on"},
        {"n_fit_gpu", 0, "reference models the GPU coefficients were fitted on"},
    };
    char kind[32] = "";
    double us = 0;
    rc = ST_EINVAL;
    if (!doc.root) {
        st_error_set(err, ST_EINVAL, "%s:1:1: empty coefficient file; regenerate it with tools/calibrate-edge",
                     doc.path);
        goto done;
    }
    /* the kind first: another table (the GPU kernels' gpu-coefficients)
     * is named as such, not by its first unknown key */
    if (doc.root->kind == ST_Y_MAP && f_get(doc.root, "kind") && f_string(&c, doc.root, "kind", kind, sizeof kind))
        goto done;
    if (kind[0] && strcmp(kind, "edge-coefficients") != 0) {
        f_error(&c, f_get(doc.root, "kind"), "kind must be 'edge-coefficients', not '%s'%s", kind,
                strcmp(kind, "gpu-coefficients") == 0 ? ": that is the GPU kernel table (--coef takes it); "
                                                         "--edge-coef takes calibration/edge.yaml" : "");
        goto done;
    }
    if (f_check_map(&c, doc.root, keys, sizeof keys / sizeof keys[0]) ||
        f_string(&c, doc.root, "kind", kind, sizeof kind))
        goto done;
    if (f_number(&c, doc.root, "cpu_efficiency", 1e-4, 1, 1, "", &out->cpu_efficiency) ||
        f_number(&c, doc.root, "cpu_depthwise_efficiency", 1e-4, 1, 1, "", &out->cpu_dw_efficiency) ||
        f_number(&c, doc.root, "gpu_efficiency", 1e-4, 1, 1, "", &out->gpu_efficiency) ||
        f_number(&c, doc.root, "gpu_kernel_us", 0, 1e6, 1, "us", &us) ||
        f_number(&c, doc.root, "sigma_cpu", 0, 10, 1, "", &out->sigma_cpu) ||
        f_number(&c, doc.root, "sigma_gpu", 0, 10, 1, "", &out->sigma_gpu) ||
        f_int32(&c, doc.root, "n_fit_cpu", 0, 1000000, &out->n_fit_cpu) ||
        f_int32(&c, doc.root, "n_fit_gpu", 0, 1000000, &out->n_fit_gpu))
        goto done;
    out->gpu_kernel_s = us * 1e-6;
    rc = 0;
done:
    st_ydoc_free(&doc);
    return rc;
}

int st_edge_coef_write(FILE *f, const st_edge_coef *c, const char *header)
{
    if (header)
        fputs(header, f);
    fprintf(f, "kind: edge-coefficients\n");
    fprintf(f, "cpu_efficiency: %.6g\n", c->cpu_efficiency);
    fprintf(f, "cpu_depthwise_efficiency: %.6g\n", c->cpu_dw_efficiency);
    fprintf(f, "gpu_efficiency: %.6g\n", c->gpu_efficiency);
    fprintf(f, "gpu_kernel_us: %.6g\n", c->gpu_kernel_s * 1e6);
    fprintf(f, "sigma_cpu: %.6g\n", c->sigma_cpu);
    fprintf(f, "sigma_gpu: %.6g\n", c->sigma_gpu);
    fprintf(f, "n_fit_cpu: %d\n", c->n_fit_cpu);
    fprintf(f, "n_fit_gpu: %d\n", c->n_fit_gpu);
    return ferror(f) ? ST_EIO : 0;
}
