/* Validation of the collective model against VIDUR's measured NCCL timings
 * (profiling/network/CLUSTER/{all_reduce,send_recv}.csv). */
#include "config.h"
#include "calib/validate.h"
#include "io/io.h"
#include "io/measured.h"
#include "net/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* VIDUR's network folders, the presets that describe those machines, and
 * the all-reduce (GPUs, GPUs a node) that set the node's whole scale-out
 * (scaleout_bw_gbs; presets/node/vidur-dgx-a100.yaml), which no 2-GPU row
 * can show: 8 GPUs at 4 a node. */
static const struct {
    const char *folder, *cluster;
    int scaleout_gpus, scaleout_per_node;
} machines[] = {{"a100_dgx", "vidur-a100-dgx", 8, 4}};

/* The size the vidur presets' link figures were characterised at. */
#define ANCHOR_BYTES 67108864.0

/* The rows machine m's preset was characterised from (the rest are held
 * out): the 2-GPU rows set each link (presets/node/vidur-dgx-a100.yaml,
 * presets/cluster/vidur-a100-dgx.yaml), and the machine's scale-out
 * all-reduce the node's cap, where the preset has one. */
static int characterising(size_t m, const st_cluster *cl, st_coll coll, int workers, int per_node)
{
    return workers == 2 || (cl->node.scaleout_bw > 0 && coll == ST_COLL_ALLREDUCE &&
                            workers == machines[m].scaleout_gpus && per_node == machines[m].scaleout_per_node);
}

static int one_file(const char *path, size_t m, const st_cluster *cl, double min_bytes, FILE *samples,
                    st_val_coll **rows, size_t *n, size_t *cap, st_error *err)
{
    const char *folder = machines[m].folder;
    st_net_set set = {0};
    int rc = st_read_vidur_network(path, &set, err);
    if (rc) {
        st_net_set_free(&set);
        return rc;
    }
    for (size_t i = 0; i < set.n && !rc; i++) {
        const st_net_sample *s = &set.items[i];
        st_coll coll;
        if (st_coll_parse(s->collective, &coll)) {
            rc = st_error_set(err, ST_EINVAL, "%s:%d:%d: unknown collective '%s' (all_reduce, all_gather, "
                              "reduce_scatter, all_to_all, broadcast or send_recv)", path, s->line, s->col_collective,
                              s->collective);
            break;
        }
        st_val_coll *r = NULL;
        for (size_t k = 0; k < *n; k++)
            if (!strcmp((*rows)[k].cluster, folder) && (*rows)[k].coll == coll && (*rows)[k].gpus == s->workers &&
                (*rows)[k].per_node == s->per_node)
                r = &(*rows)[k];
        if (!r) {
            if (*n == *cap) {
                size_t nc = *cap ? 2 * *cap : 16;
                st_val_coll *p = realloc(*rows, nc * sizeof *p);
                if (!p) {
                    rc = st_error_set(err, ST_ENOMEM, "out of memory");
                    break;
                }
                *rows = p, *cap = nc;
            }
            r = &(*rows)[(*n)++];
            memset(r, 0, sizeof *r);
            snprintf(r->cluster, sizeof r->cluster, "%s", folder);
            snprintf(r->preset, sizeof r->preset, "%s", cl->id);
            r->coll = coll, r->gpus = s->workers, r->per_node = s->per_node;
            r->characterised = characterising(m, cl, coll, s->workers, s->per_node);
            r->floor_bytes = -1;
        }
        st_net_group g;
        st_coll_est e;
        if ((rc = st_net_group_init(cl, s->workers, s->per_node, &g, err)) ||
            (rc = st_coll_estimate(&g, coll, ST_ALGO_AUTO, s->bytes, &e, err))) {
            st_error_prefix(err, "%s:%d:%d", path, s->line, s->col_workers);
            break;
        }
        if (r->floor_bytes < 0 || s->bytes < r->floor_bytes)
            r->floor_bytes = s->bytes, r->floor_meas_s = s->median_s, r->floor_pred_s = e.time_s;
        if (s->bytes >= min_bytes && s->median_s > 0) {
            if (st_apes_push(&r->a, e.time_s, s->median_s)) {
                rc = st_error_set(err, ST_ENOMEM, "out of memory");
                break;
            }
            if (samples)
                fprintf(samples, "%s,%s,%s,%d,%d,%.0f,%s,%.9g,%.9g,%.4f,%.4f,%s\n", folder, cl->id,
                        st_coll_name(coll), s->workers, s->per_node, s->bytes, st_algo_name(e.algo), s->median_s,
                        e.time_s, 100 * fabs(e.time_s - s->median_s) / s->median_s,
                        100 * (e.time_s - s->median_s) / s->median_s, st_proto_name(e.proto));
        }
    }
    st_net_set_free(&set);
    return rc;
}

int st_validate_collectives(const char *vidur_dir, double min_bytes, FILE *samples, st_val_coll **out, size_t *n_out,
                            size_t *skipped, st_error *err)
{
    static const char *const files[] = {"all_reduce.csv", "send_recv.csv"};
    st_val_coll *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    *out = NULL, *n_out = 0, *skipped = 0;
    if (samples)
        fprintf(samples, "folder,cluster,collective,gpus,per_node,bytes,algo,measured_s,predicted_s,ape_pct,error_pct,protocol\n");
    for (size_t m = 0; m < sizeof machines / sizeof machines[0] && !rc; m++) {
        st_cluster cl;
        int loaded = 0;
        for (size_t f = 0; f < 2 && !rc; f++) {
            char path[1200];
            struct stat st;
            snprintf(path, sizeof path, "%s/profiling/network/%s/%s", vidur_dir, machines[m].folder, files[f]);
            if (stat(path, &st) != 0)
                continue;
            if (!loaded && (rc = st_load_cluster(machines[m].cluster, &cl, err)))
                break;
            loaded = 1;
            rc = one_file(path, m, &cl, min_bytes, samples, &rows, &n, &cap, err);
        }
    }
    /* folders with no preset, counted so the report can say so */
    char net[1100];
    snprintf(net, sizeof net, "%s/profiling/network", vidur_dir);
    static const char *const others[] = {"a100_pairwise_nvlink", "a40_pairwise_nvlink", "h100_dgx",
                                         "h100_pair_nvlink", "a100_pair_nvlink"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        char p[1300];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", net, others[i]);
        *skipped += stat(p, &st) == 0;
    }
    for (size_t i = 0; i < n; i++) {
        st_apes_summary(&rows[i].a, &rows[i].s);
        st_apes_free(&rows[i].a);
    }
    if (rc) {
        free(rows);
        return rc;
    }
    *out = rows, *n_out = n;
    return 0;
}
