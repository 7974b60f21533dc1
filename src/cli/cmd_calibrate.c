/* strata calibrate: fit the GPU kernel coefficients to measured kernels. */
#include "config.h"
#include "calib/calib.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    "# that they add. lsu_ns is an SM's time per warp-wide memory instruction\n"
    "# of kernels that move one element per thread per instruction (an L1 hit\n"
    "# costs lsu_hit_share of it). index_cycles is index_select's SM cycles\n"
    "# per element (the embedding's gather).\n";

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"neusight", required_argument, NULL, 'n'}, {"vidur", required_argument, NULL, 'v'},
        {"out", required_argument, NULL, 'o'},      {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    const char *ns = NULL, *vd = NULL, *out = NULL;
    int quiet = 0, c, rc_g;
    optind = 0;
    while ((c = cli_getopt(&cmd_calibrate, argc, argv, "n:v:o:qh", opts)) != -1) {
        switch (c) {
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
    st_error err;
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
    rc = st_calibrate(&d, &coef, rep, &err);
    if (rc) {
        st_calib_data_free(&d);
        cli_out_close(&o, 0, NULL);
        return cli_fail(&err);
    }
    char devs[1024] = "";
    for (size_t i = 0; i < d.n_gpus; i++) {
        size_t l = strlen(devs);
        snprintf(devs + l, sizeof devs - l, " %s", d.gpus[i].id);
    }
    char header[4096];
    /* the header names the data by its last two path parts, so the file does
     * not depend on where the checkout lives */
    snprintf(header, sizeof header, header_fmt, "shared/data/neusight", "shared/data/vidur", d.n, devs);
    st_calib_data_free(&d);
    if (!out)
        return st_gpu_coef_write(stdout, &coef, header) ? 1 : 0;
    rc = st_gpu_coef_write(o.f, &coef, header);
    if (rc)
        st_error_set(&err, ST_EIO, "writing %s failed (disk full?); nothing written", out);
    if (cli_out_close(&o, rc == 0, &err) || rc)
        return cli_fail(&err);
    if (rep)
        fprintf(rep, "wrote %s\n", out);
    return 0;
}

const cli_command cmd_calibrate = {
    "calibrate",
    "calibrate [--neusight DIR] [--vidur DIR] [--out FILE] [--quiet]",
    "Fit the GPU kernel coefficients to measured kernels and write them as YAML.",
    "  --neusight DIR   a folder laid out like ../shared/data/neusight (its kernels/ CSVs are\n"
    "                   the training set); default $STRATA_SHARED/neusight\n"
    "  --vidur DIR      a folder laid out like ../shared/data/vidur (its A100 profiles are\n"
    "                   fitted too); default $STRATA_SHARED/vidur\n"
    "  --out FILE       write there (atomically) instead of stdout; tools/calibrate writes\n"
    "                   calibration/gpu-kernels.yaml\n"
    "  --quiet          no fit report on stderr\n",
    run,
};
