/* strata map: evaluate or search a mapping of one layer on an accelerator. */
#include "config.h"
#include "accel/accel.h"
#include "cli/cli.h"
#include "io/timeloop.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_load_arch(const char *name, const char *ert, st_accel *a, st_error *err)
{
    return st_load_arch(name, ert, a, err);
}

/* WORKLOAD:LAYER -> the compute op whose name or layer matches (more than
 * one: an error). */
int cli_layer_problem(const char *spec, st_aprob *p, st_error *err)
{
    char wl[512];
    const char *colon = strrchr(spec, ':');
    st_model m;
    st_gen_opts o;
    st_oplist ops = {0};
    int rc;
    if (!colon || colon == spec || !colon[1])
        return st_error_set(err, ST_EINVAL, "--layer '%s': expected WORKLOAD:LAYER, e.g. "
                                            "resnet50:conv1 (see `strata accel WORKLOAD` for "
                                            "layer names)", spec);
    snprintf(wl, sizeof wl, "%.*s", (int)(colon - spec), spec);
    if ((rc = st_load_model(wl, &m, err)))
        return rc;
    st_gen_opts_default(&o, &m);
    o.attn = ST_ATTN_EAGER; /* attention as its two batched GEMMs */
    if ((rc = st_model_ops(&m, &o, &ops, err))) {
        st_model_free(&m);
        return rc;
    }
    rc = ST_ENOTFOUND;
    /* an op of exactly that name wins; else the compute ops under that
     * layer (NAME.op) */
    const char *want = colon + 1;
    size_t ln = strlen(want), first = 0, matches = 0, exact = 0, first_exact = 0;
    for (size_t i = 0; i < ops.n; i++) {
        const st_op *op = &ops.ops[i];
        const char *nm = op->name;
        if (strcmp(nm, want) == 0) {
            if (!exact++)
                first_exact = i;
        } else if (strncmp(nm, want, ln) == 0 && nm[ln] == '.' && (op->kind == ST_OP_CONV || op->kind == ST_OP_GEMM)) {
            if (!matches++)
                first = i;
        }
    }
    if (exact) {
        matches = exact;
        first = first_exact;
    }
    if (matches > 1) {
        char names[400] = "";
        int dup = 0, shown = 0;
        for (size_t i = first; i < ops.n && shown < 6; i++) {
            const st_op *op = &ops.ops[i];
            int hit = exact ? strcmp(op->name, want) == 0
                            : strncmp(op->name, want, ln) == 0 && op->name[ln] == '.' &&
                                  (op->kind == ST_OP_CONV || op->kind == ST_OP_GEMM);
            if (!hit)
                continue;
            for (size_t j = first; j < i && !dup; j++)
                dup = strcmp(ops.ops[j].name, op->name) == 0;
            size_t u = strlen(names);
            snprintf(names + u, sizeof names - u, "%s%s", shown++ ? ", " : "", op->name);
        }
        /* two layers under one name: the first would be mapped silently
         * and the others could never be; distinct names under one layer:
         * the user picks one */
        if (dup || exact)
            rc = st_error_set(err, ST_EINVAL, "--layer: %s has %zu layers named '%s' (%s); give each layer of the "
                              "workload its own name so that one can be picked", m.id, matches, want, names);
        else
            rc = st_error_set(err, ST_EINVAL, "--layer: '%s' holds %zu compute layers of %s (%s%s); name one of them",
                              want, matches, m.id, names, matches > (size_t)shown ? ", ..." : "");
    } else if (matches == 1) {
        const st_op *op = &ops.ops[first];
        rc = st_aprob_from_op(op, p, err);
        if (rc == 0)
            snprintf(p->name, sizeof p->name, "%s:%s", m.id, op->name);
    }
    if (rc == ST_ENOTFOUND) {
        char names[640] = "";
        int shown = 0;
        for (size_t i = 0; i < ops.n && shown < 12; i++) {
            st_aprob q;
            if (st_aprob_from_op(&ops.ops[i], &q, NULL) == 0) {
                size_t u = strlen(names);
                snprintf(names + u, sizeof names - u, "%s%s", shown++ ? ", " : "",
                         ops.ops[i].name);
            }
        }
        rc = st_error_set(err, ST_ENOTFOUND, "--layer: %s has no layer '%s'; its layers "
                                             "include %s ...", m.id, colon + 1, names);
    }
    st_oplist_free(&ops);
    st_model_free(&m);
    return rc;
}

void cli_json_astats(st_json *j, const st_accel *a, const st_astats *s)
{
    st_json_number(j, "energy_j", s->energy);
    st_json_number(j, "cycles", s->cycles);
    st_json_number(j, "compute_cycles", s->compute_cycles);
    st_json_number(j, "seconds", s->seconds);
    st_json_number(j, "utilization", s->utilization);
    st_json_number(j, "macs", s->macs);
    st_json_number(j, "edp", s->edp);
    st_json_number(j, "fj_per_mac", s->energy / s->macs * 1e15);
    st_json_begin_object(j, "energy_breakdown");
    st_json_number(j, "mac", s->e_mac);
    for (int i = 0; i < s->n; i++)
        if (a->level[i].cls != ST_MEM_FANOUT)
            st_json_number(j, a->level[i].name, s->lv[i].energy_total);
    st_json_number(j, "noc", s->e_noc);
    st_json_end_object(j);
    st_json_begin_object(j, "energy_by_tensor");
    for (int t = 0; t < ST_TENSOR_COUNT; t++)
        st_json_number(j, st_tensor_name((st_tensor)t), s->e_tensor[t]);
    st_json_end_object(j);
    st_json_begin_array(j, "levels");
    for (int i = 0; i < s->n; i++) {
        const st_alevel_stats *L = &s->lv[i];
        if (a->level[i].cls == ST_MEM_FANOUT)
            continue;
        st_json_begin_object(j, NULL);
        st_json_string(j, "name", a->level[i].name);
        st_json_number(j, "instances", L->instances);
        st_json_number(j, "energy_j", L->energy_total);
        st_json_number(j, "leak_j", L->leak);
        st_json_number(j, "bandwidth_cycles", L->cycles);
        for (int t = 0; t < ST_TENSOR_COUNT; t++) {
            if (L->tile[t] == 0 && L->reads[t] == 0 && L->updates[t] == 0)
                continue;
            st_json_begin_object(j, st_tensor_name((st_tensor)t));
            st_json_number(j, "tile_words", L->tile[t]);
            st_json_number(j, "reads", L->reads[t]);
            st_json_number(j, "fills", L->fills[t]);
            st_json_number(j, "updates", L->updates[t]);
            st_json_number(j, "energy_j", L->energy[t]);
            st_json_end_object(j);
        }
        st_json_end_object(j);
    }
    st_json_end_array(j);
}

void cli_json_amap(st_json *j, const st_accel *a, const st_amap *m)
{
    st_json_begin_array(j, "mapping");
    for (int i = 0; i < m->n; i++) {
        char perm[ST_AD_COUNT + 1], f[64], keep[64] = "";
        st_json_begin_object(j, NULL);
        st_json_string(j, "target", a->level[i].name);
        f[0] = 0;
        for (int d = 0; d < ST_AD_COUNT; d++) {
            size_t u = strlen(f);
            snprintf(f + u, sizeof f - u, "%s%c%u", d ? " " : "", ST_AD_LETTERS[d], m->t[i][d]);
        }
        st_json_string(j, "temporal", f);
        for (int k = 0; k < ST_AD_COUNT; k++)
            perm[k] = ST_AD_LETTERS[m->perm[i][k]];
        perm[ST_AD_COUNT] = 0;
        st_json_string(j, "permutation", perm);
        for (int xy = 0; xy < 2; xy++) {
            f[0] = 0;
            for (int d = 0; d < ST_AD_COUNT; d++) {
                unsigned v = xy ? m->sy[i][d] : m->sx[i][d];
                size_t u = strlen(f);
                if (v > 1)
                    snprintf(f + u, sizeof f - u, "%s%c%u", f[0] ? " " : "", ST_AD_LETTERS[d], v);
            }
            st_json_string(j, xy ? "spatial_y" : "spatial_x", f);
        }
        for (int t = 0; t < ST_TENSOR_COUNT; t++)
            if (m->keep[i] & (1u << t)) {
                size_t u = strlen(keep);
                snprintf(keep + u, sizeof keep - u, "%s%s", keep[0] ? " " : "",
                         st_tensor_name((st_tensor)t));
            }
        st_json_string(j, "keep", keep);
        st_json_end_object(j);
    }
    st_json_end_array(j);
}

void cli_print_astats(const st_accel *a, const st_astats *s, FILE *out)
{
    fprintf(out, "  MACs %.0f   cycles %.0f (compute %.0f)   utilization %.2f%%\n", s->macs,
            s->cycles, s->compute_cycles, 100 * s->utilization);
    fprintf(out, "  energy %.4g uJ (%.2f fJ/MAC)   EDP %.3e J*cycle   time %.4g us\n",
            s->energy * 1e6, s->energy / s->macs * 1e15, s->edp, s->seconds * 1e6);
    fprintf(out, "  %-24s %12s %8s  %s\n", "component", "energy uJ", "share", "per tensor (uJ)");
    fprintf(out, "  %-24s %12.4f %7.1f%%\n", "mac", s->e_mac * 1e6, cli_pct(s->e_mac, s->energy));
    for (int i = 0; i < s->n; i++) {
        const st_alevel_stats *L = &s->lv[i];
        char per[160] = "";
        if (a->level[i].cls == ST_MEM_FANOUT)
            continue;
        for (int t = 0; t < ST_TENSOR_COUNT; t++)
            if (L->energy[t] > 0) {
                size_t u = strlen(per);
                snprintf(per + u, sizeof per - u, "%s%s %.4f", per[0] ? ", " : "",
                         st_tensor_name((st_tensor)t), L->energy[t] * 1e6);
            }
        fprintf(out, "  %-24s %12.4f %7.1f%%  %s\n", a->level[i].name, L->energy_total * 1e6,
                cli_pct(L->energy_total, s->energy), per);
    }
    if (s->e_noc > 0)
        fprintf(out, "  %-24s %12.4f %7.1f%%\n", "noc", s->e_noc * 1e6, cli_pct(s->e_noc, s->energy));
}

/* The search's wall-clock rate goes to stderr: stdout stays the same for the
 * same inputs and seed, whatever the thread count or the machine's load. */
static void search_rate(const st_mapper_opts *mo, const st_mapper_result *r, const char *mapf)
{
    if (mapf)
        return;
    fprintf(stderr, "strata map: %lld mappings in %.2f s (%.3g /s, %d thread%s)\n", r->evaluated, r->seconds,
            r->evals_per_s, mo->threads, mo->threads > 1 ? "s" : "");
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"arch", required_argument, NULL, 'a'},      {"ert", required_argument, NULL, 'E'},
        {"layer", required_argument, NULL, 'l'},     {"problem", required_argument, NULL, 'p'},
        {"mapping", required_argument, NULL, 'm'},   {"objective", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 's'},      {"threads", required_argument, NULL, 't'},
        {"budget", required_argument, NULL, 'b'},    {"evals", required_argument, NULL, 'e'},
        {"exhaustive", no_argument, NULL, 'X'},
        {"json", no_argument, NULL, 'j'},            {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *arch = NULL, *ert = NULL, *layer = NULL, *prob = NULL, *mapf = NULL;
    const char *search_flag = NULL; /* a search option given (not with --mapping) */
    st_mapper_opts mo;
    int json = 0, c;
    long long v;
    st_mapper_opts_default(&mo);
    optind = 0;
    while ((c = cli_getopt(&cmd_map, argc, argv, "a:l:p:m:o:s:t:jh", opts)) != -1) {
        if (!search_flag)
            search_flag = c == 'o' ? "--objective" : c == 's' ? "--seed" : c == 't' ? "--threads" : c == 'b' ? "--budget"
                        : c == 'e' ? "--evals" : c == 'X' ? "--exhaustive" : NULL;
        switch (c) {
        case 'a': arch = optarg; break;
        case 'E': ert = optarg; break;
        case 'l': layer = optarg; break;
        case 'p': prob = optarg; break;
        case 'm': mapf = optarg; break;
        case 'o':
            if (st_aobj_parse(optarg, &mo.objective))
                return cli_usage_error(&cmd_map, "--objective: expected edp, energy or delay, "
                                                 "got '%s'", optarg);
            break;
        case 's':
            if (cli_parse_ll(&cmd_map, "--seed", optarg, 0, 1LL << 62, &v))
                return 2;
            mo.seed = (unsigned long long)v;
            break;
        case 't':
            if (cli_parse_ll(&cmd_map, "--threads", optarg, 1, 256, &v))
                return 2;
            mo.threads = (int)v;
            break;
        case 'b':
            /* seconds; 0 would be no budget, so the least is a microsecond */
            if (cli_parse_num(&cmd_map, "--budget", optarg, 1e-6, 1e6, &mo.budget_s))
                return 2;
            break;
        case 'e':
            if (cli_parse_ll(&cmd_map, "--evals", optarg, 1000, 1LL << 40, &v))
                return 2;
            mo.max_evals = v;
            break;
        case 'X': mo.exhaustive = 1; break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_map, stdout); return 0;
        default: return 2;
        }
    }
    if (mo.exhaustive && mo.max_evals > 0)
        return cli_usage_error(&cmd_map, "--exhaustive enumerates every mapping; --evals caps a search: give one");
    if (optind < argc)
        return cli_usage_error(&cmd_map, "unexpected argument '%s'", argv[optind]);
    if (mapf && search_flag)
        return cli_usage_error(&cmd_map, "%s steers the mapping search, and --mapping evaluates the file's mapping "
                               "without one: give one or the other", search_flag);
    if (!arch)
        return cli_usage_error(&cmd_map, "--arch PRESET|FILE is required (e.g. eyeriss-like)");
    if (!!layer == !!prob)
        return cli_usage_error(&cmd_map, "give exactly one of --layer WORKLOAD:LAYER or "
                                         "--problem FILE.prob.yaml");
    st_error err;
    st_accel a;
    st_aprob p;
    if (cli_load_arch(arch, ert, &a, &err))
        return cli_fail(&err);
    if (prob ? st_load_timeloop_problem(prob, &p, &err) : cli_layer_problem(layer, &p, &err))
        return cli_fail(&err);
    st_mapper_result r;
    memset(&r, 0, sizeof r);
    if (mapf) {
        /* the loader also refuses a mapping that does not fit the problem
         * or the architecture, at the entry to fix */
        if (st_load_timeloop_mapping(mapf, &a, &p, &r.best, &err) || st_accel_eval(&a, &p, &r.best, &r.stats, &err))
            return cli_fail(&err);
    } else if (st_accel_map(&a, &p, &mo, &r, &err)) {
        return cli_fail(&err);
    }
    st_error cerr;
    int cons_ok = st_amap_check_constraints(&a, &r.best, &cerr) == 0;
    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "arch", a.id[0] ? a.id : a.name);
        st_json_string(&j, "problem", p.name);
        st_json_string(&j, "source", mapf ? "mapping file" : "mapper");
        cli_json_astats(&j, &a, &r.stats);
        cli_json_amap(&j, &a, &r.best);
        st_json_bool(&j, "meets_constraints", cons_ok);
        if (cons_ok) /* the first constraint broken, as the text's note says it */
            st_json_null(&j, "constraint_violation");
        else
            st_json_string(&j, "constraint_violation", cerr.msg);
        if (!mapf) {
            st_json_begin_object(&j, "search");
            st_json_string(&j, "objective", st_aobj_name(mo.objective));
            st_json_int(&j, "seed", (long long)mo.seed);
            st_json_int(&j, "evaluated", r.evaluated);
            st_json_bool(&j, "exhaustive", r.exhaustive);
            st_json_bool(&j, "truncated", r.truncated);
            st_json_end_object(&j);
        }
        st_json_end_object(&j);
        st_json_finish(&j);
        search_rate(&mo, &r, mapf);
        return 0;
    }
    printf("%s on %s  (%s)\n", p.name, a.name,
           mapf ? "mapping from file" : "best mapping found");
    printf("  problem G%lld N%lld M%lld C%lld P%lld Q%lld R%lld S%lld, stride %dx%d\n", p.d[0],
           p.d[1], p.d[2], p.d[3], p.d[4], p.d[5], p.d[6], p.d[7], p.wstride, p.hstride);
    st_amap_print(&a, &r.best, stdout);
    cli_print_astats(&a, &r.stats, stdout);
    if (!cons_ok)
        printf("  note: %s\n", cerr.msg);
    if (!mapf)
        printf("  search: %s, %s objective, %lld mappings evaluated%s\n",
               r.exhaustive ? "exhaustive" : "restarts + descent", st_aobj_name(mo.objective),
               r.evaluated, r.truncated ? "; stopped by --budget (result may vary run to run)" : "");
    search_rate(&mo, &r, mapf);
    return 0;
}

const cli_command cmd_map = {
    "map",
    "map --arch PRESET|FILE [--ert FILE] (--layer WORKLOAD:LAYER | --problem FILE.prob.yaml)\n"
    "                   [--mapping FILE.map.yaml] [--objective edp|energy|delay] [--seed N] [--threads N]\n"
    "                   [--budget SECONDS] [--evals N] [--exhaustive] [--json]",
    "Evaluate a mapping of one layer on an accelerator, or search for the best one.",
    "  --arch A         accelerator preset (eyeriss-like, tpu-like, simba-like) or a Timeloop\n"
    "                   v0.4 architecture file (its *.ERT.yaml is read from beside it)\n"
    "  --ert FILE       Accelergy ERT for a Timeloop architecture file\n"
    "  --layer W:L      a layer of a workload, e.g. resnet50:conv1 (prefill, batch 1, the\n"
    "                   workload's default sequence length)\n"
    "  --problem FILE   a Timeloop v0.4 problem file (conv2D shape)\n"
    "  --mapping FILE   a Timeloop mapping to evaluate; without it the mapper searches\n"
    "  --objective O    edp (default), energy or delay\n"
    "  --seed N         search seed (default 1); same seed, same answer at any thread count\n"
    "  --threads N      search threads (default 1)\n"
    "  --budget S       wall-clock cap on the search; hitting it makes the result depend on\n"
    "                   machine speed (reported as truncated)\n"
    "  --evals N        cap the evaluations at N >= 1000 (deterministic) instead\n"
    "  --exhaustive     enumerate every mapping the constraints allow (minutes on big layers);\n"
    "                   spaces under 300,000 mappings are always enumerated\n"
    "  --json           energy_j, cycles, utilization, macs, edp, energy_breakdown, mapping, ...\n",
    run,
    NULL,
};
