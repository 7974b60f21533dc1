/* strata accel: map every layer of a workload onto an accelerator. */
#include "config.h"
#include "accel/accel.h"
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct row {
    const st_op *op;
    st_aprob p;
    st_mapper_result *r; /* shared among rows with the same problem */
    int owner;
} row;

static int run(int argc, char **argv)
{
    int rc_arg;
    static const struct option opts[] = {
        {"arch", required_argument, NULL, 'A'},   {"ert", required_argument, NULL, 'E'},
        {"objective", required_argument, NULL, 'o'}, {"seed", required_argument, NULL, 'S'},
        {"threads", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},          CLI_WL_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *arch = NULL, *ert = NULL;
    st_mapper_opts mo;
    cli_wl w;
    int json = 0, c, rc;
    long long v;
    st_mapper_opts_default(&mo);
    cli_wl_init(&w);
    optind = 0;
    while ((c = cli_getopt(&cmd_accel, argc, argv, "A:o:t:jh" CLI_WL_SHORTOPTS, opts)) != -1) {
        int t = cli_wl_option(&cmd_accel, c, optarg, &w);
        if (t < 0)
            return 2;
        if (t)
            continue;
        switch (c) {
        case 'A': arch = optarg; break;
        case 'E': ert = optarg; break;
        case 'o':
            if (st_aobj_parse(optarg, &mo.objective))
                return cli_usage_error(&cmd_accel, "--objective: expected edp, energy or delay, "
                                                   "got '%s'", optarg);
            break;
        case 'S':
            if (cli_parse_ll(&cmd_accel, "--seed", optarg, 0, 1LL << 62, &v))
                return 2;
            mo.seed = (unsigned long long)v;
            break;
        case 't':
            if (cli_parse_ll(&cmd_accel, "--threads", optarg, 1, 256, &v))
                return 2;
            mo.threads = (int)v;
            break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_accel, stdout); return 0;
        default: return 2;
        }
    }
    if ((rc_arg = cli_one_operand(&cmd_accel, argc, argv, "which workload? e.g. resnet50, mobilenet-v2, "
                                           "bert-large (see `strata list --kind workload`)")))
        return rc_arg;
    if (!arch)
        return cli_usage_error(&cmd_accel, "--arch PRESET|FILE is required (e.g. eyeriss-like)");
    if ((rc = cli_wl_check(&cmd_accel, &w)))
        return rc;
    /* the accelerator's storage levels state their word widths; the mapper
     * counts words, so a dtype would change nothing */
    if (w.dtype)
        return cli_usage_error(&cmd_accel, "--dtype does not apply: the accelerator's word widths (bits per word "
                                           "of each storage level, and the MAC's) set the data sizes; edit the "
                                           "architecture to change them");
    if (w.no_opt || w.optimizer || w.accum)
        return cli_usage_error(&cmd_accel, "--%s does not apply: the accelerator layer maps inference "
                                           "(prefill or decode) layers, with no backward or optimizer step; drop it",
                               w.no_opt ? "no-optimizer" : w.optimizer ? "optimizer" : "accumulate-grads");
    st_error err;
    st_accel a;
    st_model m;
    st_gen_opts o;
    st_oplist ops = {0};
    if (cli_load_arch(arch, ert, &a, &err) || st_load_model(argv[optind], &m, &err))
        return cli_fail(&err);
    cli_wl_apply(&w, &m, &o);
    if ((rc = cli_wl_applies(&cmd_accel, &w, &m, &o))) {
        st_model_free(&m);
        return rc;
    }
    /* attention maps as its two batched GEMMs (QK^T, PV); a fused
     * FlashAttention kernel is a GPU kernel with no MAC-array mapping, and
     * mapping around it would drop the attention's MACs from the totals */
    if (o.attn != ST_ATTN_EAGER && w.attn) {
        st_model_free(&m);
        return cli_usage_error(&cmd_accel, "--attn %s does not apply: the accelerator layer maps attention as its "
                                           "two batched GEMMs (QK^T and PV); drop --attn or give --attn eager",
                               w.attn);
    }
    o.attn = ST_ATTN_EAGER;
    if (o.phase == ST_PHASE_TRAIN) {
        st_model_free(&m);
        return cli_usage_error(&cmd_accel, "--phase train: the accelerator layer maps inference "
                                           "(prefill or decode) layers");
    }
    if (o.phase == ST_PHASE_DECODE && m.kind != ST_MODEL_TRANSFORMER) {
        st_model_free(&m);
        return cli_usage_error(&cmd_accel, "--phase decode: %s is a CNN, which has no decode phase; use --phase "
                                           "prefill (inference)", m.id);
    }
    if ((rc = st_model_ops(&m, &o, &ops, &err))) {
        st_model_free(&m);
        return cli_fail(&err);
    }
    row *rows = calloc(ops.n ? ops.n : 1, sizeof *rows);
    size_t nr = 0;
    rc = 0;
    if (!rows) {
        st_error_set(&err, ST_ENOMEM, "out of memory");
        rc = 1;
    }
    for (size_t i = 0; rows && i < ops.n && !rc; i++) {
        row *r = &rows[nr];
        if (ops.ops[i].pass != ST_PASS_FWD || st_aprob_from_op(&ops.ops[i], &r->p, NULL))
            continue; /* vector ops run outside the MAC array */
        r->op = &ops.ops[i];
        for (size_t k = 0; k < nr; k++)
            if (st_aprob_equal(&rows[k].p, &r->p)) {
                r->r = rows[k].r;
                break;
            }
        if (!r->r) {
            r->r = malloc(sizeof *r->r);
            r->owner = 1;
            if (!r->r) {
                st_error_set(&err, ST_ENOMEM, "out of memory");
                rc = 1;
            } else if (st_accel_map(&a, &r->p, &mo, r->r, &err)) {
                st_error_prefix(&err, "layer %s", r->op->name);
                rc = 1;
                free(r->r);
                r->r = NULL;
            }
        }
        if (r->r)
            nr++;
    }
    if (rc) {
        for (size_t k = 0; k < nr; k++)
            if (rows[k].owner)
                free(rows[k].r);
        free(rows);
        st_oplist_free(&ops);
        st_model_free(&m);
        return cli_fail(&err);
    }
    double tot_e = 0, tot_c = 0, tot_m = 0, comp_tot[ST_AC_COUNT] = {0}, ten_tot[ST_TENSOR_COUNT] = {0};
    long long evals = 0;
    for (size_t k = 0; k < nr; k++) {
        const st_astats *s = &rows[k].r->stats;
        double rep = (double)(rows[k].op->repeat > 0 ? rows[k].op->repeat : 1), cc[ST_AC_COUNT];
        st_astats_components(&a, s, cc);
        tot_e += rep * s->energy;
        tot_c += rep * s->cycles;
        tot_m += rep * s->macs;
        for (int q = 0; q < ST_AC_COUNT; q++)
            comp_tot[q] += rep * cc[q];
        for (int t = 0; t < ST_TENSOR_COUNT; t++)
            ten_tot[t] += rep * s->e_tensor[t];
        if (rows[k].owner)
            evals += rows[k].r->evaluated;
    }
    double util = tot_c > 0 ? tot_m / (tot_c * (double)a.pe_x * a.pe_y * a.macs_per_pe) : 0;
    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "workload", m.id);
        st_json_string(&j, "arch", a.id[0] ? a.id : a.name);
        st_json_string(&j, "objective", st_aobj_name(mo.objective));
        st_json_begin_array(&j, "layers");
        for (size_t k = 0; k < nr; k++) {
            const st_astats *s = &rows[k].r->stats;
            const st_aprob *p = &rows[k].p;
            double cc[ST_AC_COUNT];
            char shape[160];
            st_astats_components(&a, s, cc);
            snprintf(shape, sizeof shape, "G%lld N%lld M%lld C%lld P%lld Q%lld R%lld S%lld /%d",
                     p->d[0], p->d[1], p->d[2], p->d[3], p->d[4], p->d[5], p->d[6], p->d[7],
                     p->wstride);
            st_json_begin_object(&j, NULL);
            st_json_string(&j, "name", rows[k].op->name);
            st_json_string(&j, "shape", shape);
            st_json_int(&j, "repeat", rows[k].op->repeat > 0 ? rows[k].op->repeat : 1);
            st_json_number(&j, "macs", s->macs);
            st_json_number(&j, "energy_j", s->energy);
            st_json_number(&j, "cycles", s->cycles);
            st_json_number(&j, "utilization", s->utilization);
            st_json_number(&j, "edp", s->edp);
            st_json_begin_object(&j, "energy_breakdown");
            for (int q = 0; q < ST_AC_COUNT; q++)
                st_json_number(&j, st_acomp_name(q), cc[q]);
            st_json_end_object(&j);
            st_json_begin_object(&j, "energy_by_tensor");
            for (int t = 0; t < ST_TENSOR_COUNT; t++)
                st_json_number(&j, st_tensor_name((st_tensor)t), s->e_tensor[t]);
            st_json_end_object(&j);
            cli_json_amap(&j, &a, &rows[k].r->best);
            st_json_end_object(&j);
        }
        st_json_end_array(&j);
        st_json_begin_object(&j, "total");
        st_json_number(&j, "macs", tot_m);
        st_json_number(&j, "energy_j", tot_e);
        st_json_number(&j, "cycles", tot_c);
        st_json_number(&j, "seconds", tot_c / a.clock_hz);
        st_json_number(&j, "utilization", util);
        st_json_begin_object(&j, "energy_breakdown");
        for (int q = 0; q < ST_AC_COUNT; q++)
            st_json_number(&j, st_acomp_name(q), comp_tot[q]);
        st_json_end_object(&j);
        st_json_begin_object(&j, "energy_by_tensor");
        for (int t = 0; t < ST_TENSOR_COUNT; t++)
            st_json_number(&j, st_tensor_name((st_tensor)t), ten_tot[t]);
        st_json_end_object(&j);
        st_json_int(&j, "mappings_evaluated", evals);
        st_json_end_object(&j);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        printf("%s on %s, each layer mapped for %s (%s)\n", m.name, a.name,
               st_aobj_name(mo.objective), st_phase_name(o.phase));
        printf("  %-26s %5s %9s %10s %9s %6s %8s %8s %8s %8s\n", "layer", "x", "MMAC", "energy uJ",
               "kcycles", "util%", "DRAM%", "GLB%", "spad%", "MAC%");
        for (size_t k = 0; k < nr; k++) {
            const st_astats *s = &rows[k].r->stats;
            double cc[ST_AC_COUNT];
            st_astats_components(&a, s, cc);
            printf("  %-26.26s %5lld %9.2f %10.3f %9.1f %6.1f %8.1f %8.1f %8.1f %8.1f\n",
                   rows[k].op->name, rows[k].op->repeat > 0 ? rows[k].op->repeat : 1,
                   s->macs * 1e-6, s->energy * 1e6, s->cycles * 1e-3, 100 * s->utilization,
                   cli_pct(cc[ST_AC_DRAM], s->energy), cli_pct(cc[ST_AC_GLB], s->energy),
                   cli_pct(cc[ST_AC_SPAD], s->energy), cli_pct(cc[ST_AC_MAC], s->energy));
        }
        printf("  total: %.4g GMAC, %.4g mJ (%.1f fJ/MAC), %.4g Mcycles = %.4g ms at %.0f MHz, "
               "utilization %.1f%%\n",
               tot_m * 1e-9, tot_e * 1e3, tot_e / tot_m * 1e15, tot_c * 1e-6,
               tot_c / a.clock_hz * 1e3, a.clock_hz * 1e-6, 100 * util);
        printf("  energy by component:");
        for (int q = 0; q < ST_AC_COUNT; q++)
            printf(" %s %.1f%%", st_acomp_name(q), cli_pct(comp_tot[q], tot_e));
        printf("\n  energy by tensor:");
        for (int t = 0; t < ST_TENSOR_COUNT; t++)
            printf(" %s %.1f%%", st_tensor_name((st_tensor)t), cli_pct(ten_tot[t], tot_e));
        printf("\n  (%zu layers, %lld mappings evaluated; vector ops such as norms, pooling and "
               "softmax are not mapped)\n", nr, evals);
    }
    for (size_t k = 0; k < nr; k++)
        if (rows[k].owner)
            free(rows[k].r);
    free(rows);
    st_oplist_free(&ops);
    st_model_free(&m);
    return 0;
}

const cli_command cmd_accel = {
    "accel",
    "accel WORKLOAD --arch PRESET|FILE [--ert FILE] [--objective edp|energy|delay] [--batch B] [--seq S]\n"
    "                   [--phase prefill|decode] [--kv L] [--threads N] [--seed N] [--json]",
    "Map every layer of a workload onto an accelerator: per-layer energy, cycles, breakdowns.",
    "  --arch A         accelerator preset (eyeriss-like, tpu-like, simba-like) or a Timeloop\n"
    "                   v0.4 architecture file (its *.ERT.yaml is read from beside it)\n"
    "  --ert FILE       Accelergy ERT for a Timeloop architecture file\n"
    "  --objective O    what each layer's mapping minimises: edp (default), energy, delay\n"
    "  --batch, --seq, --phase, --kv   the workload's shape (as in `strata eval`); the\n"
    "                   architecture's word widths set the data sizes (no --dtype);\n"
    "                   attention maps as its two batched GEMMs (no --attn flash)\n"
    "  --threads N      mapper threads; --seed N mapper seed\n"
    "  --json           layers[] (energy_j, cycles, utilization, energy_breakdown by\n"
    "                   component, energy_by_tensor, mapping) and total{}\n",
    run,
    NULL,
};
