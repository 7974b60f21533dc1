/* make bench: throughput of the GPU kernel model and of one whole-step estimate.
 * Prints kernel estimates per second on one core (bar: >= 1 M), the time of
 * one Llama-2-70B train-step estimate, all layers forward and backward (bar:
 * < 1 ms), the accelerator mapper's rate, sweep throughput on 2 threads for
 * the shipped GPU and accelerator sweeps, the TUI's frame time while a
 * 100k-point sweep runs, and the serving simulator on 1,000,000 requests
 * (bar: < 10 s on one core, < 200 MB peak; run in a child process so that
 * its peak memory is its own). Timed with CLOCK_MONOTONIC. */
#include "config.h"
#include "accel/accel.h"
#include "compose/compose.h"
#include "io/io.h"
#include "net/net.h"
#include "serve/serve.h"
#include "train/train.h"
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Points per second of a shipped sweep on `threads` threads (whole sweep). */
static int bench_sweep(const char *file, int threads, double *rate, long long *points)
{
    char path[1024];
    const char *root = getenv("STRATA_DATA");
    snprintf(path, sizeof path, "%s/workloads/sweeps/%s", root ? root : ".", file);
    st_error err;
    st_sweep *s = malloc(sizeof *s);
    st_sweep_run *r;
    if (!s || st_load_sweep(path, s, &err)) {
        fprintf(stderr, "bench: %s\n", s ? err.msg : "out of memory");
        free(s);
        return 1;
    }
    if (st_sweep_start(s, threads, 0, s->points, &r, &err) || st_sweep_wait(r)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        st_sweep_free(s);
        free(s);
        return 1;
    }
    st_sweep_progress p;
    st_sweep_get_progress(r, &p);
    *rate = p.rate;
    *points = p.done;
    st_sweep_run_free(r);
    st_sweep_free(s);
    free(s);
    return 0;
}

static int bench_explorer(void)
{
    double rate;
    long long n;
    if (bench_sweep("gpu-design-100k.yaml", 2, &rate, &n))
        return 1;
    printf("sweep throughput, GPU (gpu-design-100k: Llama-2-7B on a rescaled H100, 2 threads): %lld points "
           "in %.2f s = %.0f points/s\n", n, n / rate, rate);
    if (bench_sweep("accel-pe-buffer.yaml", 2, &rate, &n))
        return 1;
    printf("sweep throughput, accelerator (accel-pe-buffer: ResNet-50, every conv layer mapped with 3000 "
           "mappings, 2 threads): %lld points in %.2f s = %.1f points/s\n", n, n / rate, rate);
    double mean, worst, sweep_s;
    long long frames;
    st_error err;
    char path[1024];
    const char *root = getenv("STRATA_DATA");
    snprintf(path, sizeof path, "%s/workloads/sweeps/gpu-design-100k.yaml", root ? root : ".");
    if (ui_bench_frames(path, 2, &mean, &worst, &frames, &sweep_s, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    printf("TUI frame time while the 100k-point sweep runs (160x50, results screen, drain + plot + draw): "
           "mean %.2f ms, worst %.2f ms over %lld frames; sweep %.2f s under the UI, 2 threads\n", mean * 1e3, worst * 1e3,
           frames, sweep_s);
    return 0;
}

/* 1M requests, one replica of Llama-3.1-8B on an RTX PRO 6000, vLLM V1,
 * offered far above capacity (qps 1000: the queue never drains, every step
 * is full). Lengths: resampled from the ShareGPT requests of the real vLLM
 * run when ../shared/data is present, else uniform with the same means
 * (857 prompt, 652 output tokens). */
static int serve_child(void)
{
    st_error err = {0};
    st_model m;
    st_gpu g;
    st_gpu_coef coef;
    if (st_load_model("llama3.1-8b", &m, &err) || st_load_gpu("rtx-pro-6000", &g, &err) ||
        st_gpu_coef_load(NULL, &coef, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    const char *sh = getenv("STRATA_SHARED");
    char spec[1200];
    struct stat st;
    snprintf(spec, sizeof spec, "%s/vllm/RTXPRO6000_Llama-3.1-8B/requests.jsonl", sh ? sh : "../shared/data");
    int have = stat(spec, &st) == 0;
    char lens[1300];
    snprintf(lens, sizeof lens, have ? "trace:%s" : "uniform:1-1713,1-1303", spec);
    double t0 = st_mono_s();
    st_lenspec ls;
    st_arrivals a = {0};
    a.qps = 1000;
    a.n = 1000000;
    a.seed = 1;
    st_reqset rq;
    st_serve_cfg c;
    st_serve_cfg_default(&c);
    c.model = &m;
    c.gpu = &g;
    c.coef = &coef;
    st_serve_result r;
    if (st_lenspec_parse(lens, &ls, &err) || st_requests_generate(&a, &ls, &rq, &err) ||
        st_serve_run(&c, &rq, &r, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    double t = st_mono_s() - t0;
    printf("serving simulation, 1,000,000 requests (%s lengths, 1 replica, vLLM V1, 1 core): %.2f s, "
           "%lld steps, %.3g requests/s simulated  [bar < 10 s]\n",
           have ? "ShareGPT" : "uniform ShareGPT-mean", t, r.steps, 1e6 / t);
    printf("  (VIDUR measured 6.5 ms of CPU per request: %.0fx)\n", 6.5e-3 * 1e6 / t);
    st_serve_result_free(&r);
    st_reqset_free(&rq);
    st_lenspec_free(&ls);
    st_model_free(&m);
    fflush(stdout);
    return 0;
}

static int bench_serve(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0)
        _exit(serve_child());
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
        return 1;
    printf("  peak memory of the serving run: %.1f MB  [bar < 200 MB]\n", ru.ru_maxrss / 1024.0);
    return 0;
}

/* Layer 4. (1) The chunk-level simulation with contention across 4,096 GPUs:
 * ib-h100 (DGX SuperPOD H100 nodes and fabric) scaled to 512 nodes; one
 * 1 GiB all-reduce over all 4,096 GPUs (halving-doubling, 64 KiB chunks)
 * while every pair of nodes runs an expert-parallel all-to-all of 256 MiB
 * per GPU across the same NICs: 257 flows in one simulation. (2) The full plan search for
 * Llama-2-70B on 64 GPUs of ib-h100, on 2 threads. Bars: < 1 s and < 5 s. */
static int bench_layer4(void)
{
    st_error err;
    st_cluster cl;
    if (st_load_cluster("ib-h100", &cl, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    cl.nodes = 512;
    int G = cl.node.gpus, N = G * cl.nodes;
    size_t nf = 1 + (size_t)cl.nodes / 2;
    st_flow *f = calloc(nf, sizeof *f);
    st_flow_result *r = calloc(nf, sizeof *r);
    if (!f || !r) {
        free(f), free(r);
        return 1;
    }
    f[0] = (st_flow){ST_COLL_ALLREDUCE, ST_ALGO_HD, 1073741824.0, 0, 0, 1, N, ST_PROTO_AUTO};
    for (int a = 0; a < cl.nodes / 2; a++)
        f[1 + a] = (st_flow){ST_COLL_ALLTOALL, ST_ALGO_DIRECT, 256.0 * 1048576, 0, 2 * a * G, 1, 2 * G, ST_PROTO_AUTO};
    double alone = 0, t[5];
    long long xfers = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = st_mono_s();
        if (st_net_simulate(&cl, f, nf, 65536, r, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            free(f), free(r);
            return 1;
        }
        t[rep] = st_mono_s() - t0;
    }
    double dp = r[0].time_s;
    for (size_t i = 0; i < nf; i++)
        xfers += r[i].transfers;
    if (st_net_simulate(&cl, f, 1, 65536, r, &err) == 0)
        alone = r[0].time_s;
    qsort(t, 5, sizeof *t, cmp_d);
    printf("collective simulation with contention, 4,096 GPUs (1 GiB all-reduce over all + an all-to-all "
           "on every node pair, %lld chunk transfers): %.3f s (median of 5)  [bar < 1 s]\n", xfers, t[2]);
    printf("  (simulated all-reduce: %.1f ms alone, %.1f ms under the all-to-all traffic)\n", alone * 1e3, dp * 1e3);
    free(f), free(r);

    st_model m;
    st_gpu_coef coef;
    if (st_load_cluster("ib-h100", &cl, &err) || st_load_model("llama2-70b", &m, &err) ||
        st_gpu_coef_load(NULL, &coef, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    st_plan_opts o;
    memset(&o, 0, sizeof o);
    o.gpus = 64, o.global_batch = 1024, o.seq = 4096, o.dtype = ST_BF16, o.flash = 1, o.threads = 2;
    st_plan_point *pts = NULL;
    size_t n = 0;
    for (int rep = 0; rep < 3; rep++) {
        free(pts);
        double t0 = st_mono_s();
        if (st_plan(&m, &cl, &coef, &o, &pts, &n, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            st_model_free(&m);
            return 1;
        }
        t[rep] = st_mono_s() - t0;
    }
    qsort(t, 3, sizeof *t, cmp_d);
    printf("plan search, Llama-2-70B on 64 GPUs of ib-h100 (global batch 1024, seq 4096, BF16; %zu "
           "configurations, 2 threads): %.3f s (median of 3)  [bar < 5 s]\n", n, t[1]);
    free(pts);
    st_model_free(&m);
    return 0;
}

int main(int argc, char **argv)
{
    /* `strata-bench serve`: the serving run alone, in this process (for perf) */
    if (argc > 1 && !strcmp(argv[1], "serve"))
        return serve_child();
    if (argc > 1) {
        fprintf(stderr, "usage: strata-bench [serve]\n");
        return 2;
    }
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
        double t0 = st_mono_s();
        while (st_mono_s() - t0 < 0.2) {
            for (int i = 0; i < NK; i++) {
                st_kernel_est e;
                if (st_kernel_estimate(&g, &c, &ks[i], NULL, 0, &e, &err) == 0)
                    sink += e.gpu_s;
            }
            n += NK;
        }
        rates[r] = (double)n / (st_mono_s() - t0);
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
        double t0 = st_mono_s();
        st_oplist ops = {0, 0, NULL};
        if (st_model_ops(&m, &o, &ops, &err) || st_compose(&g, &c, &ops, &co, step, &err)) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = st_mono_s() - t0;
        sink += step->total_s;
        st_oplist_free(&ops);
    }
    qsort(times, 21, sizeof *times, cmp_d);
    printf("Llama-2-70B train step (seq 4096, all 80 layers fwd+bwd+AdamW) estimate: %.3f ms "
           "(median of 21)  [bar < 1 ms]\n", times[10] * 1e3);
    printf("  (predicted step on H100 SXM: %.1f ms)\n", step->total_s * 1e3);
    if (bench_layer4())
        return 1;
    free(step);
    free(ks);
    st_model_free(&m);

    /* accelerator: mapping evaluations per second on the ResNet-50 3x3 layer
     * (res2: C=M=64, P=Q=56, R=S=3) on the Eyeriss-like design, one core */
    st_accel a;
    if (st_load_accel("eyeriss-like", &a, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    st_aprob p;
    st_aprob_init(&p, "resnet50_res2_3x3");
    p.d[ST_AD_C] = p.d[ST_AD_M] = 64;
    p.d[ST_AD_P] = p.d[ST_AD_Q] = 56;
    p.d[ST_AD_R] = p.d[ST_AD_S] = 3;
    st_mapper_opts mo;
    st_mapper_opts_default(&mo);
    st_mapper_result *mr = malloc(sizeof *mr);
    if (!mr || st_accel_map(&a, &p, &mo, mr, &err)) {
        fprintf(stderr, "bench: %s\n", mr ? err.msg : "out of memory");
        free(mr);
        return 1;
    }
    double erates[7];
    for (int rep = 0; rep < 7; rep++) {
        const int n = 200000;
        double t0 = st_mono_s();
        for (int i = 0; i < n; i++) {
            double e, cy;
            mr->best.t[0][ST_AD_N] = 1 + (unsigned)(i & 0); /* keep the loop honest */
            sink += st_accel_eval_fast(&a, &p, &mr->best, &e, &cy) ? e : 0;
        }
        erates[rep] = n / (st_mono_s() - t0);
    }
    qsort(erates, 7, sizeof *erates, cmp_d);
    printf("accelerator mapping evaluations per second, ResNet-50 3x3 on eyeriss-like (1 core, "
           "median of 7): %.3g  [bar >= 1e6]\n", erates[3]);
    printf("  (the mapper's own rate there, moves + checks included: %.3g /s; best EDP %.4g "
           "J*cycle)\n", mr->evals_per_s, mr->stats.edp);
    free(mr);
    if (bench_explorer() || bench_serve())
        return 1;
    return sink > 0 ? 0 : 1;
}
