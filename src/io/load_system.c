/* kind: node and kind: cluster -> st_node, st_cluster (GPU and node resolved). */
#include "config.h"
#include "io/loaders.h"

#include <string.h>

static const fkey node_keys[] = {
    {"kind", 1, "node"},
    {"name", 1, "node name"},
    {"gpu", 1, "GPU preset id"},
    {"gpus", 1, "GPUs per node"},
    {"intra", 1, "{topology, bw_gbs, latency_us}"},
    {"host_link", 1, "{kind, bw_gbs}"},
    {"nics", 1, "scale-out NICs"},
    {"nic_bw_gbs", 1, "GB/s per NIC per direction"},
    {"scaleout_bw_gbs", 0, "the node's whole scale-out GB/s per direction, where less than its NICs' sum"},
    {"cpu", 0, "host CPU"},
    {"coll_latency_us", 0, "fixed cost of one collective, us (default 8.4, NCCL's base latency)"},
    {"nccl_protocols", 0, "the NCCL protocols collectives may use: a list of ll, ll128, simple (default: all the fabric allows)"},
    {"reference_only", 0, "true: another tool's configuration, never picked for a GPU by default"},
};

/* A reference to another preset: an id, or a path, taken relative to the
 * folder of the file that holds the reference. */
static void reference(const char *holder, const char *ref, char *out, size_t n)
{
    const char *slash = strrchr(holder, '/');
    int is_path = strchr(ref, '/') || strstr(ref, ".yaml") || strstr(ref, ".yml") ||
                  strstr(ref, ".json");
    if (is_path && ref[0] != '/' && slash)
        snprintf(out, n, "%.*s/%s", (int)(slash - holder), holder, ref);
    else
        snprintf(out, n, "%s", ref);
}

/* A multi-hop node fabric's grid: `shape` (ring: optional, [gpus]; torus2d
 * and torus3d: 2 and 3 sizes), each size >= 2, their product the node's
 * GPUs. */
static int read_shape(const fctx *c, const st_ynode *v, int gpus, st_link *l)
{
    int want = l->topology == ST_TOPO_TORUS3D ? 3 : l->topology == ST_TOPO_TORUS2D ? 2 : 1;
    const st_ynode *sh = f_get(v, "shape"), *list;
    int rc;
    if (!st_topology_multihop(l->topology)) {
        if (sh)
            return f_error(c, sh, "%s: key 'shape': topology %s has no grid (shape is for ring, torus2d and torus3d); "
                           "leave the key out", c->what, st_topology_name(l->topology));
        return 0;
    }
    if (gpus < 2)
        return f_error(c, f_get(v, "topology"), "%s: key 'topology': a %s joins 2 or more GPUs, and this node has "
                       "%d; give nvswitch for a one-GPU node", c->what, st_topology_name(l->topology), gpus);
    l->hop_dims = want;
    if (!sh) {
        if (want > 1)
            return f_error(c, v, "%s: a %s needs `shape: [%s]`, its GPUs per dimension (their product %d, the "
                           "node's GPUs)", c->what, st_topology_name(l->topology), want == 2 ? "X, Y" : "X, Y, Z", gpus);
        l->shape[0] = gpus;
        return 0;
    }
    if ((rc = f_list(c, v, "shape", 3, "dimension sizes", &list)))
        return rc;
    if ((int)list->n != want)
        return f_error(c, sh, "%s: key 'shape': a %s has %d dimension%s, and %zu sizes are given; give [%s]", c->what,
                       st_topology_name(l->topology), want, want > 1 ? "s" : "", list->n,
                       want == 3 ? "X, Y, Z" : want == 2 ? "X, Y" : "GPUs");
    long long prod = 1;
    for (int d = 0; d < want; d++) {
        long long m;
        if ((rc = f_node_int(c, list->items[d], "shape", 2, 4096, &m)))
            return rc;
        l->shape[d] = (int)m;
        prod *= m;
    }
    if (prod != gpus)
        return f_error(c, sh, "%s: key 'shape': the grid holds %lld GPUs and the node has %d (gpus:); give sizes "
                       "whose product is %d", c->what, prod, gpus, gpus);
    return 0;
}

/* gpus: the node's GPUs for its intra link; 0 for a network dimension. */
static int read_link(const fctx *c, const st_ynode *v, int need_name, int gpus, st_link *l)
{
    static const fkey link_keys[] = {{"name", 0, "dimension name"},
                                     {"topology", 1, "nvswitch, fat_tree, ..."},
                                     {"bw_gbs", 1, "GB/s per GPU per direction"},
                                     {"latency_us", 1, "microseconds"},
                                     {"oversubscription", 0, ">= 1"},
                                     {"efficiency", 0, "collective bus bandwidth / bw, (0, 1]"},
                                     {"p2p_efficiency", 0, "send/recv bandwidth / bw, (0, 1]"},
                                     {"shape", 0, "ring, torus2d, torus3d: GPUs per dimension"},
                                     {"nodes", 0, "network dimension: the nodes one of its groups joins"}};
    /* st_topology's names (hw.c), then ASTRA-sim's name for a direct link
     * between every pair, read as nvlink_mesh */
    const char *topo_names[ST_TOPO_COUNT + 1];
    for (int i = 0; i < ST_TOPO_COUNT; i++)
        topo_names[i] = st_topology_name((st_topology)i);
    topo_names[ST_TOPO_COUNT] = "fully_connected";
    int rc, topo = 0;
    memset(l, 0, sizeof *l);
    l->oversubscription = 1;
    l->efficiency = 1;
    l->p2p_efficiency = -1;
    if ((rc = f_check_map(c, v, link_keys, sizeof link_keys / sizeof link_keys[0])) ||
        (rc = f_string(c, v, "name", l->name, sizeof l->name)) ||
        (rc = f_enum(c, v, "topology", topo_names, ST_TOPO_COUNT + 1, &topo)) ||
        (rc = f_number(c, v, "bw_gbs", 1e-3, 1e7, GBS, "GB/s", &l->bw)) ||
        (rc = f_number(c, v, "latency_us", 0, 1e6, US, "us", &l->latency_s)) ||
        (rc = f_number(c, v, "oversubscription", 1, 1e3, 1, "", &l->oversubscription)) ||
        (rc = f_number(c, v, "efficiency", 0.01, 1, 1, "", &l->efficiency)) ||
        (rc = f_number(c, v, "p2p_efficiency", 0.01, 1, 1, "", &l->p2p_efficiency)))
        return rc;
    if (l->p2p_efficiency < 0)
        l->p2p_efficiency = l->efficiency;
    if (need_name && !l->name[0])
        return f_error(c, v, "%s: a network dimension needs `name:`", c->what);
    int named = topo; /* as the file spells it, for messages */
    if (topo == ST_TOPO_COUNT)
        topo = ST_TOPO_NVLINK_MESH; /* fully_connected */
    l->topology = (st_topology)topo;
    /* The fabrics the collective model and simulation price (src/net).
     * Inside a node: a switch (NVSwitch), a direct NVLink mesh, PCIe, and
     * the multi-hop ring, 2D and 3D torus, whose transfers are routed over
     * their links. Across nodes: a switch, a fat tree (its spine
     * oversubscribed by `oversubscription`), a rail-optimized fabric; a
     * ring or torus of nodes is not priced (its NICs' traffic would need
     * routing through other nodes), so it is refused, not priced as a
     * switch. */
    const unsigned node_ok = 1u << ST_TOPO_NVSWITCH | 1u << ST_TOPO_SWITCH | 1u << ST_TOPO_NVLINK_MESH |
                             1u << ST_TOPO_PCIE | 1u << ST_TOPO_RING | 1u << ST_TOPO_TORUS2D |
                             1u << ST_TOPO_TORUS3D;
    const unsigned net_ok = 1u << ST_TOPO_NVSWITCH | 1u << ST_TOPO_SWITCH | 1u << ST_TOPO_FAT_TREE |
                            1u << ST_TOPO_RAIL_OPTIMIZED;
    if (!((need_name ? net_ok : node_ok) & (1u << topo)))
        return f_error(c, f_get(v, "topology"),
                       "%s: key 'topology': %s is not a fabric strata prices %s (there: %s); %s",
                       c->what, topo_names[named], need_name ? "across nodes" : "inside a node",
                       need_name ? "switch, nvswitch, fat_tree or rail_optimized"
                                 : "nvswitch, switch, nvlink_mesh (fully_connected), pcie, ring, torus2d or torus3d",
                       st_topology_multihop((st_topology)topo)
                           ? "a ring or torus of nodes would route NIC traffic through other nodes, which strata "
                             "does not model; a torus of accelerators (a pod) is one node whose intra link is the "
                             "torus (with its shape)"
                           : "give one of those");
    if ((rc = read_shape(c, v, gpus, l)))
        return rc;
    if (!need_name && f_get(v, "nodes"))
        return f_error(c, f_get(v, "nodes"), "%s: key 'nodes': a node's own link joins its GPUs, not nodes; "
                       "leave the key out", c->what);
    if ((rc = f_int32(c, v, "nodes", 1, 1000000, &l->reach)))
        return rc;
    /* the collectives divide a scale-out link's bandwidth by its
     * oversubscription, except on a rail-optimized fabric, which keeps a
     * rail's traffic under its leaf (NCCL's PXN moves cross-rail bytes over
     * NVLink first); a node's own links are never divided */
    const st_ynode *ov = f_get(v, "oversubscription");
    if (ov && l->oversubscription != 1 && (!need_name || topo == ST_TOPO_RAIL_OPTIMIZED))
        return f_error(c, ov, "%s: key 'oversubscription': %g:1 on %s, which strata never divides by (%s); "
                       "leave oversubscription out%s", c->what, l->oversubscription,
                       need_name ? "a rail_optimized fabric" : "a node's own link",
                       need_name ? "a rail's traffic stays under its leaf, NCCL's PXN moving cross-rail bytes "
                                   "over NVLink first"
                                 : "the GPUs of a node reach each other at the link's bandwidth",
                       need_name ? ", or give topology: fat_tree or switch for a blocking spine" : "");
    return 0;
}

int st_read_node(const fctx *c, const st_ynode *root, st_node *n)
{
    static const fkey host_keys[] = {{"kind", 1, "e.g. pcie5-x16"},
                                     {"bw_gbs", 1, "GB/s per GPU per direction"}};
    const st_ynode *host;
    fctx sc = *c;
    char ref[512], path[1024];
    int rc;
    memset(n, 0, sizeof *n);
    if ((rc = f_check_map(c, root, node_keys, sizeof node_keys / sizeof node_keys[0])) ||
        (rc = f_string(c, root, "name", n->name, sizeof n->name)) ||
        (rc = f_string(c, root, "gpu", ref, sizeof ref)) ||
        (rc = f_int32(c, root, "gpus", 1, 4096, &n->gpus)) ||
        (rc = f_int32(c, root, "nics", 0, 4096, &n->nics)) ||
        (rc = f_number(c, root, "nic_bw_gbs", 0, 1e6, GBS, "GB/s", &n->nic_bw)) ||
        (rc = f_string(c, root, "cpu", n->cpu, sizeof n->cpu)))
        return rc;
    /* a NIC moves bytes at some rate: 0 GB/s is only for a node without NICs */
    if (n->nics > 0 && !(n->nic_bw > 0))
        return f_error(c, f_get(root, "nic_bw_gbs"), "key 'nic_bw_gbs': %d NICs at 0 GB/s cannot carry the scale-out "
                       "traffic; give each NIC's GB/s per direction, or nics: 0 for a node without a network",
                       n->nics);
    if (n->nics > 0 && n->nic_bw < 1e-3 * GBS)
        return f_error(c, f_get(root, "nic_bw_gbs"), "key 'nic_bw_gbs': %g GB/s is under 1 MB/s, no NIC a "
                       "cluster runs on; give each NIC's GB/s per direction (0.001 to 1e6)", n->nic_bw / GBS);
    if ((rc = f_number(c, root, "scaleout_bw_gbs", 1e-3, 1e6, GBS, "GB/s", &n->scaleout_bw)))
        return rc;
    if (n->scaleout_bw > 0 && n->nics < 1)
        return f_error(c, f_get(root, "scaleout_bw_gbs"),
                       "key 'scaleout_bw_gbs': %g GB/s on a node without NICs (nics: 0); leave the key out, or give "
                       "the node its NICs", n->scaleout_bw / GBS);
    /* above the NICs' sum it would cap nothing: most likely Gb/s for GB/s */
    if (n->scaleout_bw > n->nics * n->nic_bw * (1 + 1e-9)) /* the sum itself is allowed: rounding in GB/s */
        return f_error(c, f_get(root, "scaleout_bw_gbs"),
                       "key 'scaleout_bw_gbs': %g GB/s is more than the node's %d NICs carry (%g GB/s in all), so it "
                       "would cap nothing; give GB/s (bytes, not bits) up to %g, or leave the key out",
                       n->scaleout_bw / GBS, n->nics, n->nics * n->nic_bw / GBS, n->nics * n->nic_bw / GBS);
    n->coll_base_s = 8.4e-6; /* NCCL src/graph/tuning.cc baseLat, Ring/Simple */
    if ((rc = f_number(c, root, "coll_latency_us", 0, 1e6, US, "us", &n->coll_base_s)) ||
        (rc = f_bool(c, root, "reference_only", &n->reference_only)))
        return rc;
    if (f_get(root, "nccl_protocols")) {
        /* the ones the library may pick from, as NCCL_PROTO restricts them */
        static const char *const protos[] = {"ll", "ll128", "simple"};
        const st_ynode *pl;
        if ((rc = f_list(c, root, "nccl_protocols", 3, "NCCL protocols (ll, ll128, simple)", &pl)))
            return rc;
        for (size_t i = 0; i < pl->n; i++) {
            const st_ynode *it = pl->items[i];
            int k = -1;
            for (int j = 0; j < 3 && it->kind == ST_Y_SCALAR; j++)
                if (!strcmp(it->scalar, protos[j]))
                    k = j;
            if (k < 0)
                return f_error(c, it, "key 'nccl_protocols': expected ll, ll128 or simple, found '%s'",
                               it->kind == ST_Y_SCALAR ? it->scalar : st_ykind_name(it->kind));
            if (n->nccl_protocols & (1u << (k + 1)))
                return f_error(c, it, "key 'nccl_protocols': '%s' is listed twice", protos[k]);
            n->nccl_protocols |= 1u << (k + 1); /* st_proto: LL = 1, LL128 = 2, SIMPLE = 3 */
        }
    }
    sc.what = "intra";
    if ((rc = read_link(&sc, f_get(root, "intra"), 0, n->gpus, &n->intra)))
        return rc;
    host = f_get(root, "host_link");
    sc.what = "host_link";
    if ((rc = f_check_map(&sc, host, host_keys, 2)) ||
        (rc = f_string(&sc, host, "kind", n->host_link_kind, sizeof n->host_link_kind)) ||
        (rc = f_number(&sc, host, "bw_gbs", 1e-3, 1e6, GBS, "GB/s", &n->host_bw)))
        return rc;
    reference(c->path, ref, path, sizeof path);
    rc = st_load_gpu(path, &n->gpu, c->err);
    if (rc) {
        const st_ynode *g = f_get(root, "gpu");
        st_error_prefix(c->err, "%s:%d:%d: key 'gpu'", c->path, g->line, g->col);
        return rc;
    }
    snprintf(n->gpu_id, sizeof n->gpu_id, "%s", n->gpu.id);
    /* the file it came from (it loaded, so it resolves) */
    st_error quiet = {0};
    if (st_resolve(path, ST_FILE_GPU, n->gpu_src, sizeof n->gpu_src, &quiet))
        n->gpu_src[0] = '\0';
    return 0;
}

int st_read_cluster(const fctx *c, const st_ynode *root, st_cluster *cl)
{
    static const fkey cluster_keys[] = {
        {"kind", 1, "cluster"},
        {"name", 1, "cluster name"},
        {"node", 1, "node preset id"},
        {"nodes", 1, "number of nodes"},
        {"network", 1, "scale-out dimensions, innermost first"},
    };
    const st_ynode *net;
    char ref[512], path[1024];
    int rc;
    memset(cl, 0, sizeof *cl);
    if ((rc = f_check_map(c, root, cluster_keys, 5)) ||
        (rc = f_string(c, root, "name", cl->name, sizeof cl->name)) ||
        (rc = f_string(c, root, "node", ref, sizeof ref)) ||
        (rc = f_int32(c, root, "nodes", 1, 1000000, &cl->nodes)))
        return rc;
    if ((rc = f_list(c, root, "network", ST_NET_MAX_DIMS, "network dimensions", &net)))
        return rc;
    for (size_t i = 0; i < net->n; i++) {
        char what[48];
        fctx nc = *c;
        snprintf(what, sizeof what, "network[%zu]", i);
        nc.what = what;
        if ((rc = read_link(&nc, net->items[i], 1, 0, &cl->net[i])))
            return rc;
        /* results and traces name a dimension: two of one name are one too many */
        for (size_t k = 0; k < i; k++)
            if (!strcmp(cl->net[k].name, cl->net[i].name))
                return f_error(&nc, f_get(net->items[i], "name"),
                               "key 'name': '%s' already names network[%zu]; give each dimension its own name",
                               cl->net[i].name, k);
    }
    /* Several dimensions are levels of one fabric, innermost first (a
     * rail's leaf, a pod's spine, the aggregation layer): each but the last
     * says how many nodes one of its groups joins, a multiple of the one
     * below; the last joins the cluster. */
    for (size_t i = 0; i < net->n; i++) {
        const st_ynode *nk = f_get(net->items[i], "nodes");
        char what[48];
        fctx nc = *c;
        snprintf(what, sizeof what, "network[%zu]", i);
        nc.what = what;
        int last = i + 1 == net->n, reach = cl->net[i].reach;
        if (last && nk && reach != cl->nodes)
            return f_error(&nc, nk, "%s: key 'nodes': the last dimension joins the cluster's %d nodes, not %d; "
                           "leave the key out, or add the dimension that joins its groups", what, cl->nodes, reach);
        if (!last && !nk)
            return f_error(&nc, net->items[i], "%s: `nodes:` is needed where a dimension follows: how many nodes "
                           "one of its groups joins (a leaf's, a pod's)", what);
        if (!last && cl->nodes == 1)
            return f_error(&nc, net->items[i + 1], "network[%zu]: a one-node cluster has no groups of nodes to join; "
                           "give one network dimension, or more nodes", i + 1);
        if (!last && (cl->nodes % reach || reach >= cl->nodes))
            return f_error(&nc, nk, "%s: key 'nodes': %d does not divide the cluster's %d nodes into 2 or more "
                           "groups; give a divisor of %d below it", what, reach, cl->nodes, cl->nodes);
        if (!last && i > 0 && reach % cl->net[i - 1].reach)
            return f_error(&nc, nk, "%s: key 'nodes': %d is not a whole number of network[%zu]'s groups of %d; give "
                           "a multiple of %d", what, reach, i - 1, cl->net[i - 1].reach, cl->net[i - 1].reach);
        if (!last && i > 0 && reach == cl->net[i - 1].reach)
            return f_error(&nc, nk, "%s: key 'nodes': %d, as network[%zu]'s: this dimension joins nothing more; "
                           "give a larger multiple or leave the dimension out", what, reach, i - 1);
        if (i > 0 && cl->net[i].topology == ST_TOPO_RAIL_OPTIMIZED)
            return f_error(&nc, f_get(net->items[i], "topology"), "%s: key 'topology': rail_optimized is how a "
                           "leaf joins its nodes' NICs, the first dimension; above it give switch or fat_tree",
                           what);
        /* the first dimension's own links are the NICs' into their leaf:
         * blocking above it is the next dimension's oversubscription */
        const st_ynode *ov = f_get(net->items[i], "oversubscription");
        if (i == 0 && !last && ov && cl->net[0].oversubscription != 1)
            return f_error(&nc, ov, "%s: key 'oversubscription': %g:1 on the first of several levels, whose links are "
                           "the NICs' into their group; give the blocking as network[1]'s oversubscription (its "
                           "uplinks), and leave this one out", what, cl->net[0].oversubscription);
        if (last)
            cl->net[i].reach = cl->nodes;
    }
    cl->n_dims = (int)net->n;
    reference(c->path, ref, path, sizeof path);
    rc = st_load_node(path, &cl->node, c->err);
    if (rc) {
        const st_ynode *nd = f_get(root, "node");
        st_error_prefix(c->err, "%s:%d:%d: key 'node'", c->path, nd->line, nd->col);
        return rc;
    }
    if (cl->n_dims > 0 && cl->node.nics < 1)
        return f_error(c, f_get(root, "node"),
                       "key 'node': node %s has no NICs (nics: %d), so its GPUs cannot reach the `network:` "
                       "below; give the node preset nics: >= 1", cl->node.id, cl->node.nics);
    snprintf(cl->node_id, sizeof cl->node_id, "%s", cl->node.id);
    st_error quiet = {0};
    if (st_resolve(path, ST_FILE_NODE, cl->node_src, sizeof cl->node_src, &quiet))
        cl->node_src[0] = '\0';
    return 0;
}
