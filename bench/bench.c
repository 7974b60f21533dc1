/* make bench: throughput of the GPU kernel model and of one whole-step estimate.
 * Prints kernel estimates per second on one core (bar: >= 1 M) and the time of
 * one Llama-2-70B train-step estimate, all layers forward and backward (bar:
 * < 1 ms). Timed with CLOCK_MONOTONIC over repeated runs; reports the median. */
#include "config.h"
#include "compose/compose.h"
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    st_error err;
    st_gpu g;
    st_gpu_coef c;
    st_model m;
    if (st_load_gpu("h100-sxm", &g, &err) || st_gpu_coef_load(NULL, &c, &err) ||
        st_load_model("llama2-70b", &m, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    /* a mix of kernel shapes: GEMMs of many sizes, attention, vector ops */
    enum { NK = 1024 };
    st_kernel *ks = calloc(NK, sizeof *ks);
    unsigned s = 12345;
    for (int i = 0; i < NK; i++) {
        st_kernel *k = &ks[i];
        s = s * 1103515245u + 12345u;
        int kind = (int)((s >> 16) % 4);
        k->dtype = ST_BF16;
        k->b = 1;
        long long d1 = 64 << ((s >> 8) % 8), d2 = 64 << ((s >> 12) % 8), d3 = 64 << ((s >> 20) % 8);
        if (kind <= 1) {
            k->op = ST_KOP_GEMM, k->m = d1, k->n = d2, k->k = d3;
        } else if (kind == 2) {
            k->op = ST_KOP_FLASH, k->heads = 32, k->kv_heads = 8, k->q_len = d1, k->kv_len = d1 + d2,
            k->head_dim = 128, k->causal = 1;
        } else {
            k->op = ST_KOP_NORM, k->rows = d1, k->cols = d2;
        }
    }
    double sink = 0, rates[7];
    for (int r = 0; r < 7; r++) {
        long long n = 0;
        double t0 = now();
        while (now() - t0 < 0.2) {
            for (int i = 0; i < NK; i++) {
                st_kernel_est e;
                if (st_kernel_estimate(&g, &c, &ks[i], NULL, 0, &e, &err) == 0)
                    sink += e.gpu_s;
            }
            n += NK;
        }
        rates[r] = (double)n / (now() - t0);
    }
    qsort(rates, 7, sizeof *rates, cmp_d);
    printf("kernel estimates per second (1 core, median of 7): %.3g  [bar >= 1e6]\n", rates[3]);

    st_gen_opts o;
    st_gen_opts_default(&o, &m);
    o.phase = ST_PHASE_TRAIN;
    o.batch = 1;
    o.seq = 4096;
    o.dtype = ST_BF16;
    o.attn = ST_ATTN_FLASH;
    st_compose_opts co;
    st_compose_opts_default(&co);
    double times[21];
    st_step *step = malloc(sizeof *step);
    for (int r = 0; r < 21; r++) {
        double t0 = now();
        st_oplist ops = {0, 0, NULL};
        if (st_model_ops(&m, &o, &ops, &err) || st_compose(&g, &c, &ops, &co, step, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = now() - t0;
        sink += step->total_s;
        st_oplist_free(&ops);
    }
    qsort(times, 21, sizeof *times, cmp_d);
    printf("Llama-2-70B train step (seq 4096, all 80 layers fwd+bwd+AdamW) estimate: %.3f ms "
           "(median of 21)  [bar < 1 ms]\n", times[10] * 1e3);
    printf("  (predicted step on H100 SXM: %.1f ms)\n", step->total_s * 1e3);
    free(step);
    free(ks);
    st_model_free(&m);
    return sink > 0 ? 0 : 1;
}
