/* strata calibrate: fit the GPU kernel coefficients to measured kernels. */
#include "config.h"
#include "calib/calib.h"
#include "calib/edge_fit.h"
#include "cli/cli.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_MALLOC_H
#include <malloc.h>
#endif

/* The fit solves thousands of least-squares systems over the same 10^5
 * samples, each in fresh arrays of a few to tens of MB. glibc hands those
 * back to the system on free (trimming the heap, or unmapping blocks over
 * its threshold), so each next fit faulted its pages in again: a quarter
 * of the run was the kernel zeroing pages. Keeping freed memory in the
 * heap for the process's life (one calibration) takes that to nothing;
 * the arrays are the same either way, so the table is too. */
static void keep_freed_memory(void)
{
#if defined(HAVE_MALLOPT) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's ceiling for the setting */
    /* 1 GiB: above what a fit frees at once (its peak is 262 MB on 2
     * threads, about 55 MB more a thread: measured maxRSS), so nothing is
     * trimmed */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

/* The shared-data folder: the option's value, else $STRATA_SHARED, else
 * ../shared/data beside the data root (a source checkout). */
int cli_shared_dir(const char *given, const char *sub, const char *opt, char *buf, size_t n, st_error *err)
{
    if (given) {
        snprintf(buf, n, "%s", given);
    } else {
        const char *env = getenv("STRATA_SHARED");
        char root[512];
        if (env && *env) {
            snprintf(buf, n, "%s/%s", env, sub);
        } else if (st_data_root(root, sizeof root, err) == 0) {
            snprintf(buf, n, "%s/../shared/data/%s", root, sub);
        } else {
            return ST_ENOTFOUND;
        }
    }
    struct stat sb;
    if (stat(buf, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return st_error_set(err, ST_ENOTFOUND,
                            "%s %s is a file, not a folder; pass %s DIR (a folder laid out like "
                            "../shared/data/%s)", opt, buf, opt, sub);
    if (access(buf, R_OK | X_OK) != 0)
        return st_error_set(err, ST_ENOTFOUND,
                            "measured data folder %s is not readable; pass %s DIR (a folder laid "
                            "out like ../shared/data/%s) or set STRATA_SHARED",
                            buf, opt, sub);
    return 0;
}

static const char header_fmt[] =
    "# strata GPU kernel coefficients (see src/gpu/gpu.h for the model).\n"
    "# Written by `strata calibrate`; regenerate bit-for-bit with tools/calibrate.\n"
    "# Fitted on %s/kernels (NeuSight, MIT: FP32 PyTorch eager kernel sweeps)\n"
    "# and %s/profiling/compute/a100 (VIDUR, MIT: FP16 operator profiles).\n"
    "# %zu samples; devices:%s\n"
    "# Features are times on the GPU's spec sheet, so a coefficient of 1.25 on\n"
    "# 'compute' means 80%% of peak. dispatch_us is the framework's per-op host\n"
    "# cost (PyTorch eager), which the compose layer overlaps with GPU time.\n"
    "# harness_us is the per-op overhead of the data's timing harness (scoring\n"
    "# only). overlap: max means the compute and memory sides overlap, sum\n"
    "# that they add. lsu_cycles is an SM's time per warp-wide memory\n"
    "# instruction, in cycles at the boost clock, of kernels that move one\n"
    "# element per thread per instruction (an L1 hit costs lsu_hit_share of\n"
    "# it). index_cycles is index_select's SM cycles per element (the\n"
    "# embedding's gather). topk_pass_cycles is an SM's time per pass of\n"
    "# PyTorch's radix select (the MoE router's torch.topk), in cycles.\n"
    "# softmax_warp_cycles and softmax_reg_cycles are an SM's cycles per row\n"
    "# element of PyTorch's warp softmax and per register slot of its\n"
    "# cunn_SoftMaxForwardReg (from 2.7), a floor under their time.\n"
    "# tinygemm_wavefront_cycles is an SM's cycles per L1 wavefront of the\n"
    "# loads of PyTorch's weight-only INT4 GEMM (tinygemm), a floor under it.\n"
    "# gemm_epilogue_cycles is an SM's cycles per 128-byte line of output a\n"
    "# CUDA-core GEMM stores, per architecture family, a floor under its\n"
    "# epilogue (a family without one: the DRAM term alone).\n"
    "# norm_row_cycles and norm_iter_cycles are an SM's cycles per row and per\n"
    "# FP32 loop iteration (ceil(cols / 512) of them; 16-bit: half the cycles)\n"
    "# of PyTorch's vectorized layer norm forward, per architecture family, a\n"
    "# floor under its time (a family without them: the memory side alone).\n";

/* Rows from..to of d that `pick` takes and whose family has an entry in
 * t[0..n); the families with any such rows go to fams (comma-separated) */
static size_t family_rows(const st_calib_data *d, size_t from, size_t to, const st_arch_cycles *t, int n,
                          int (*pick)(const st_calib_data *, const st_calib_sample *), char *fams, size_t fsz)
{
    size_t total = 0;
    for (int e = 0; e < n; e++) {
        size_t k = 0;
        for (size_t j = from; j < to; j++)
            k += pick(d, &d->s[j]) && strcasecmp(st_gpu_family(&d->gpus[d->s[j].gpu]), t[e].arch) == 0;
        size_t el = strlen(fams);
        if (k)
            snprintf(fams + el, fsz - el, "%s%s", el ? ", " : "", t[e].arch);
        total += k;
    }
    return total;
}


/* The written table lands (its temporary renamed over `out`) only when
 * the write succeeded: rc is the writer's. */
static int land(cli_out *o, const char *out, int rc, FILE *rep)
{
    st_error err;
    st_error_clear(&err);
    if (rc)
        st_error_set(&err, ST_EIO, "writing %s failed (disk full?); nothing written", out);
    if (cli_out_close(o, rc == 0, &err) || rc)
        return cli_fail(&err);
    if (rep)
        fprintf(rep, "wrote %s\n", out);
    return 0;
}

static const char edge_header_fmt[] =
    "# strata edge coefficients (see src/gpu/edge.h for the model).\n"
    "# Written by `strata calibrate --edge`; regenerate bit-for-bit with tools/calibrate-edge.\n"
    "# Fitted on the rows of %s whose role is fit (the file says where its\n"
    "# latencies come from). Efficiencies are fractions of\n"
    "# the preset's peak for its dtype; gpu_kernel_us is the GPU-side cost of one kernel;\n"
    "# sigma_* is the root-mean-square log error over every reference row of the class\n"
    "# (the 90%% band of a step is exp(+-1.645 sigma)).\n";

/* strata calibrate --edge FILE: the edge model's coefficients */
static int run_edge(const char *ref, const char *out, int quiet)
{
    st_error err;
    int rc_g;
    if ((rc_g = cli_out_guard(&cmd_calibrate, "--out", out, "--edge", ref)))
        return rc_g;
    cli_out o = {0};
    if (out && cli_out_open_in(&o, out, 1, &err))
        return cli_fail(&err);
    st_edge_refs R;
    st_gpu_coef gc;
    int rc = st_gpu_coef_load(NULL, &gc, &err);
    if (!rc)
        rc = st_edge_refs_load(ref, &R, &err);
    if (rc) {
        cli_out_close(&o, 0, NULL);
        return cli_fail(&err);
    }
    FILE *rep = quiet ? NULL : stderr;
    if (rep)
        fprintf(rep, "calibrating the edge model on %s (%zu reference rows)\n", ref, R.n);
    st_edge_coef ec;
    /* a class without fit rows keeps the current table's coefficients */
    st_edge_coef cur;
    st_error e2;
    int have_cur = st_edge_coef_load(NULL, &cur, &e2) == 0;
    rc = st_edge_calibrate(&R, &gc, have_cur ? &cur : NULL, &ec, rep, &err);
    st_edge_refs_free(&R);
    if (rc) {
        cli_out_close(&o, 0, NULL);
        return cli_fail(&err);
    }
    /* the header names the reference by its last path parts, so the file
     * does not depend on where the checkout lives */
    const char *base = strrchr(ref, '/');
    char header[1024];
    snprintf(header, sizeof header, edge_header_fmt, base ? base + 1 : ref);
    if (!out)
        return st_edge_coef_write(stdout, &ec, header) ? 1 : 0;
    return land(&o, out, st_edge_coef_write(o.f, &ec, header), rep);
}

/* The last n parts of a folder's path (data/measured/h100 for any
 * checkout's /.../data/measured/h100/), so the header does not depend on
 * where the checkout lives or how the folder was spelled. */
static const char *tail_parts(const char *path, int n)
{
    static char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    const char *p = buf + len;
    while (p > buf) {
        if (p[-1] == '/' && --n == 0)
            break;
        p--;
    }
    return p;
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"neusight", required_argument, NULL, 'n'}, {"vidur", required_argument, NULL, 'v'},
        {"out", required_argument, NULL, 'o'},      {"quiet", no_argument, NULL, 'q'},
        {"edge", required_argument, NULL, 'e'},     {"ops", required_argument, NULL, 'p'},
        {"threads", required_argument, NULL, 't'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *ns = NULL, *vd = NULL, *out = NULL, *edge = NULL, *ops[8];
    int quiet = 0, c, rc_g, nops = 0;
    long long threads = 0;
    optind = 0;
    while ((c = cli_getopt(&cmd_calibrate, argc, argv, "n:v:o:e:p:t:qh", opts)) != -1) {
        switch (c) {
        case 't':
            if (cli_parse_ll(&cmd_calibrate, "--threads", optarg, 1, ST_CALIB_MAX_THREADS, &threads))
                return 2;
            break;
        case 'e': edge = optarg; break;
        case 'p':
            if (nops == (int)(sizeof ops / sizeof ops[0]))
                return cli_usage_error(&cmd_calibrate, "--ops: at most %d folders", nops);
            ops[nops++] = optarg;
            break;
        case 'n': ns = optarg; break;
        case 'v': vd = optarg; break;
        case 'o': out = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': cli_print_help(&cmd_calibrate, stdout); return 0;
        default: return 2;
        }
    }
    if (optind < argc)
        return cli_usage_error(&cmd_calibrate, "unexpected argument '%s'", argv[optind]);
    if (edge && (ns || vd || nops || threads))
        return cli_usage_error(&cmd_calibrate, "--edge fits the edge model alone; --neusight, --vidur, --ops and "
                                               "--threads belong to the GPU table's fit (run them separately)");
    if (edge)
        return run_edge(edge, out, quiet);
    st_error err;
    /* an --ops folder without router rows, or one named twice, fails
     * before minutes of reading */
    char real[8][PATH_MAX];
    for (int i = 0; i < nops; i++) {
        char p[720];
        struct stat st;
        snprintf(p, sizeof p, "%s/ops.csv", ops[i]);
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || !realpath(ops[i], real[i])) {
            st_error_set(&err, ST_ENOTFOUND, "--ops %s: no op sweep there (ops.csv, as tools/measure-kernels.py "
                         "--ops writes it)", ops[i]);
            return cli_fail(&err);
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(real[i], real[j]))
                return cli_usage_error(&cmd_calibrate, "--ops %s: the same folder as --ops %s; give each once",
                                       ops[i], ops[j]);
        st_ops_set os = {0, 0, NULL};
        size_t routers = 0;
        if (st_read_ops_csv(p, &os, &err))
            return cli_fail(&err);
        for (size_t r = 0; r < os.n; r++)
            routers += os.items[r].op == ST_KOP_TOPK;
        st_ops_set_free(&os);
        if (!routers) {
            st_error_set(&err, ST_ENOTFOUND, "%s: no topk rows: nothing to fit the router's radix select on", p);
            return cli_fail(&err);
        }
    }
    char nsdir[600], vddir[600], kdir[700];
    if (cli_shared_dir(ns, "neusight", "--neusight", nsdir, sizeof nsdir, &err) ||
        cli_shared_dir(vd, "vidur", "--vidur", vddir, sizeof vddir, &err))
        return cli_fail(&err);
    if ((rc_g = cli_out_guard(&cmd_calibrate, "--out", out, "--neusight", nsdir)) ||
        (rc_g = cli_out_guard(&cmd_calibrate, "--out", out, "--vidur", vddir)))
        return rc_g;
    /* the output is opened (a temporary beside it) before the minutes of
     * fitting, so a path that cannot be written fails at once */
    cli_out o = {0};
    if (out && cli_out_open_in(&o, out, 1, &err))
        return cli_fail(&err);
    st_calib_data d = {0};
    snprintf(kdir, sizeof kdir, "%s/kernels", nsdir);
    int rc = st_calib_add_neusight(&d, kdir, &err);
    if (!rc)
        rc = st_calib_add_vidur(&d, vddir, "a100", &err);
    size_t nrouter[8] = {0}, nsoftmax[8] = {0}, ntiny[8] = {0}, nepi[8] = {0}, ops_end[8] = {0}, nbase = d.n;
    for (int i = 0; i < nops && !rc; i++) {
        size_t n0 = d.n;
        rc = st_calib_add_router_fit(&d, ops[i], &err);
        ops_end[i] = d.n;
        for (size_t j = n0; j < d.n; j++) {
            nrouter[i] += d.s[j].k.op == ST_KOP_TOPK;
            nsoftmax[i] += st_calib_softmax_fit_path(&d, &d.s[j]) >= 0;
            ntiny[i] += st_calib_tinygemm_fit(&d.s[j]);
        }
    }
    if (rc) {
        st_calib_data_free(&d);
        cli_out_close(&o, 0, NULL);
        return cli_fail(&err);
    }
    FILE *rep = quiet ? NULL : stderr;
    if (rep)
        fprintf(rep, "calibrating on %zu samples from %zu devices (%zu rows skipped: no preset)\n", d.n,
                d.n_gpus, d.skipped_unknown_device);
    st_gpu_coef coef;
    keep_freed_memory();
    /* the default: the cores, at most 4. Past that the fit's serial parts
     * set its time (44 s on 2 threads, 40 s on 8, 42 s on 16), while each
     * thread's concurrent fits hold about 55 MB more */
    if (!threads) {
        threads = st_cpu_count();
        if (threads > 4)
            threads = 4;
    }
    rc = st_calibrate(&d, (int)threads, &coef, rep, &err);
    if (rc) {
        st_calib_data_free(&d);
        cli_out_close(&o, 0, NULL);
        return cli_fail(&err);
    }
    /* a fit that leaves a leading term at 0 (too few samples of that kind)
     * would write a table nothing can load: say so, write nothing */
    for (int k = 0; k < ST_KC_COUNT; k++) {
        int z = st_gpu_coef_zero_leading(&coef, (st_kclass)k);
        if (z >= 0) {
            const char *const *names;
            st_kclass_features((st_kclass)k, &names);
            st_calib_data_free(&d);
            cli_out_close(&o, 0, NULL);
            st_error_set(&err, ST_EINVAL, "the fit left class %s's '%s' coefficient at 0: the data hold too few "
                         "samples bound by it to price that work; nothing written (add such measurements)",
                         st_kclass_name((st_kclass)k), names[z]);
            return cli_fail(&err);
        }
    }
    /* an --ops folder's GEMM and layer-norm rows count where their family
     * kept an entry, and the header names those families */
    char epifam[8][64] = {""}, normfam[8][64] = {""};
    size_t nnorm[8] = {0};
    for (int i = 0; i < nops; i++) {
        size_t from = i ? ops_end[i - 1] : nbase;
        nepi[i] = family_rows(&d, from, ops_end[i], coef.epilogue, coef.n_epilogue, st_calib_epilogue_fit, epifam[i],
                              sizeof epifam[i]);
        nnorm[i] = family_rows(&d, from, ops_end[i], coef.norm_iter, coef.n_norm_iter, st_calib_norm_fit, normfam[i],
                               sizeof normfam[i]);
    }
    /* the main fit's samples and devices: the --ops rows (appended after
     * nbase) fit their own coefficients and are named on lines of their own */
    char devs[1024] = "";
    size_t nmain = 0;
    for (size_t i = 0; i < d.n_gpus; i++) {
        size_t n = 0;
        for (size_t j = 0; j < nbase; j++)
            n += d.s[j].gpu == (int)i;
        nmain += n;
        size_t l = strlen(devs);
        if (n)
            snprintf(devs + l, sizeof devs - l, " %s", d.gpus[i].id);
    }
    char header[16384];
    /* the header names the data by its last two path parts, so the file does
     * not depend on where the checkout lives */
    int hl = snprintf(header, sizeof header, header_fmt, "shared/data/neusight", "shared/data/vidur", nmain, devs);
    for (int i = 0; i < nops && hl > 0 && (size_t)hl < sizeof header; i++) {
        hl += snprintf(header + hl, sizeof header - (size_t)hl,
                       "# topk_pass_cycles: fitted on the router rows of %s/ops.csv (strata's own sweep; %zu rows).\n",
                       tail_parts(ops[i], 3), nrouter[i]);
        if (nsoftmax[i] && hl > 0 && (size_t)hl < sizeof header)
            hl += snprintf(header + hl, sizeof header - (size_t)hl,
                           "# softmax_warp_cycles, softmax_reg_cycles: fitted on the softmax rows of "
                           "%s/kernels-test/softmax.csv (%zu rows).\n", tail_parts(ops[i], 3), nsoftmax[i]);
        if (ntiny[i] && hl > 0 && (size_t)hl < sizeof header)
            hl += snprintf(header + hl, sizeof header - (size_t)hl,
                           "# tinygemm_wavefront_cycles: fitted on the weight-only INT4 rows of %s/ops.csv "
                           "(tinygemm; %zu rows).\n", tail_parts(ops[i], 3), ntiny[i]);
        if (nepi[i] && hl > 0 && (size_t)hl < sizeof header)
            hl += snprintf(header + hl, sizeof header - (size_t)hl,
                           "# gemm_epilogue_cycles: fitted on the FP32 GEMM rows of %s/kernels-test/bmm.csv "
                           "and linear.csv (%s; %zu rows).\n", tail_parts(ops[i], 3), epifam[i], nepi[i]);
        if (nnorm[i] && hl > 0 && (size_t)hl < sizeof header)
            hl += snprintf(header + hl, sizeof header - (size_t)hl,
                           "# norm_row_cycles, norm_iter_cycles: fitted on the layer-norm rows of "
                           "%s/kernels-test/ln.csv (%s; %zu rows).\n", tail_parts(ops[i], 3), normfam[i], nnorm[i]);
    }
    st_calib_data_free(&d);
    if (hl < 0 || (size_t)hl >= sizeof header) {
        /* a cut header would run into the table's first key: write nothing */
        cli_out_close(&o, 0, NULL);
        st_error_set(&err, ST_EINVAL, "the table's header (the data it was fitted on, %d bytes) does not fit in "
                     "%zu; give fewer or shorter --ops folders; nothing written", hl, sizeof header);
        return cli_fail(&err);
    }
    if (!out)
        return st_gpu_coef_write(stdout, &coef, header) ? 1 : 0;
    return land(&o, out, st_gpu_coef_write(o.f, &coef, header), rep);
}

const cli_command cmd_calibrate = {
    "calibrate",
    "calibrate [--neusight DIR] [--vidur DIR] [--ops DIR]... [--threads N] [--out FILE] [--quiet]\n"
    "                   calibrate --edge FILE [--out FILE] [--quiet]",
    "Fit the GPU kernel coefficients to measured kernels and write them as YAML.",
    "  --neusight DIR   a folder laid out like ../shared/data/neusight (its kernels/ CSVs are\n"
    "                   the training set); default $STRATA_SHARED/neusight\n"
    "  --vidur DIR      a folder laid out like ../shared/data/vidur (its A100 profiles are\n"
    "                   fitted too); default $STRATA_SHARED/vidur\n"
    "  --ops DIR        a folder of strata's own op sweep (DIR/ops.csv and DIR/harness.csv, as\n"
    "                   tools/measure-kernels.py --ops and --floors write them): its MoE router\n"
    "                   rows fit topk_pass_cycles (PyTorch's radix select), and the forward\n"
    "                   softmax rows of DIR/kernels-test/softmax.csv, where it has one,\n"
    "                   softmax_warp_cycles and softmax_reg_cycles, and its weight-only INT4\n"
    "                   rows that tinygemm ran tinygemm_wavefront_cycles, and the FP32 rows\n"
    "                   of DIR/kernels-test/bmm.csv and linear.csv gemm_epilogue_cycles for\n"
    "                   their GPU's architecture family, and the layer-norm rows of\n"
    "                   DIR/kernels-test/ln.csv norm_row_cycles and norm_iter_cycles for\n"
    "                   theirs; nothing else;\n"
    "                   repeatable (up to 8); tools/calibrate gives data/measured/h100\n"
    "  --threads N      threads the fit's searches run on (default: the cores it may run on,\n"
    "                   at most 4; each holds about 55 MB more); the table is identical on any\n"
    "                   number\n"
    "  --out FILE       write there (atomically) instead of stdout; tools/calibrate writes\n"
    "                   calibration/gpu-kernels.yaml\n"
    "  --quiet          no fit report on stderr\n"
    "  --edge FILE      fit the edge model instead (src/gpu/edge.h) to FILE's rows whose role is\n"
    "                   fit (calibration/edge-reference.csv: model,workload,preset,dtype,\n"
    "                   latency_ms,role); tools/calibrate-edge writes calibration/edge.yaml\n",
    run,
    "ops",
};
