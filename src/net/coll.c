/* The alpha-beta collective model (see net.h for the algorithms). */
#include "config.h"
#include "net/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const coll_names[ST_COLL_COUNT] = {"allreduce", "allgather", "reducescatter",
                                                      "alltoall",  "broadcast", "sendrecv"};
static const char *const coll_alt[ST_COLL_COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                                    "all_to_all", "bcast",      "send_recv"};
static const char *const algo_names[ST_ALGO_COUNT] = {"auto",   "ring",             "tree",
                                                      "direct", "halving_doubling", "hierarchical"};

static const char *const proto_names[ST_PROTO_COUNT] = {"auto", "ll", "ll128", "simple"};

const char *st_coll_name(st_coll c) { return (unsigned)c < ST_COLL_COUNT ? coll_names[c] : "?"; }
const char *st_proto_name(st_proto p) { return (unsigned)p < ST_PROTO_COUNT ? proto_names[p] : "?"; }

int st_proto_parse(const char *s, st_proto *out)
{
    for (int i = 0; i < ST_PROTO_COUNT; i++)
        if (!strcasecmp(s, proto_names[i])) { /* any case, as NCCL_PROTO takes it */
            *out = (st_proto)i;
            return 0;
        }
    return ST_EINVAL;
}
const char *st_algo_name(st_algo a) { return (unsigned)a < ST_ALGO_COUNT ? algo_names[a] : "?"; }

int st_coll_parse(const char *s, st_coll *out)
{
    for (int i = 0; i < ST_COLL_COUNT; i++)
        if (!strcmp(s, coll_names[i]) || !strcmp(s, coll_alt[i])) {
            *out = (st_coll)i;
            return 0;
        }
    return ST_EINVAL;
}

int st_algo_parse(const char *s, st_algo *out)
{
    for (int i = 0; i < ST_ALGO_COUNT; i++)
        if (!strcmp(s, algo_names[i]) || (i == ST_ALGO_HD && !strcmp(s, "hd")) ||
            (i == ST_ALGO_HIER && !strcmp(s, "hier"))) {
            *out = (st_algo)i;
            return 0;
        }
    return ST_EINVAL;
}

double st_coll_bus_factor(st_coll c, int n)
{
    if (n <= 1)
        return 0;
    switch (c) {
    case ST_COLL_ALLREDUCE: return 2.0 * (n - 1) / n;
    case ST_COLL_ALLGATHER:
    case ST_COLL_REDUCESCATTER:
    case ST_COLL_ALLTOALL: return (double)(n - 1) / n;
    default: return 1;
    }
}

int st_net_group_init(const st_cluster *c, int n, int per_node, st_net_group *g, st_error *err)
{
    return st_net_group_place(c, n, per_node, 1, g, err);
}

/* The scale-out levels one copy of the group sits in: its k nodes from
 * node `first`, ns apart; per dimension i, how many of its groups it
 * touches (dom) and the fewest of its nodes in one of them (span). */
static void copy_levels(const st_cluster *c, long long first, int k, long long ns, int *dom, int *span)
{
    for (int i = 0; i < c->n_dims; i++) {
        long long reach = c->net[i].reach > 0 ? c->net[i].reach : c->nodes, cur = -1;
        int d = 0, cnt = 0, fewest = k;
        for (int j = 0; j < k; j++) {
            long long dm = (first + j * ns) / reach;
            if (dm != cur) {
                if (d && cnt < fewest)
                    fewest = cnt;
                cur = dm, cnt = 0, d++;
            }
            cnt++;
        }
        dom[i] = d;
        span[i] = cnt < fewest ? cnt : fewest;
    }
}

int st_net_group_place(const st_cluster *c, int n, int per_node, int stride, st_net_group *g, st_error *err)
{
    return st_net_group_place_job(c, n, per_node, stride, 0, 0, g, err);
}

/* Fold one copy's levels into the group's (the worst so far: the most
 * groups touched, the fewest nodes in one where it crosses); the copy that
 * touches the most groups in all gives dom_of its geometry. */
static void worst_copy(const st_cluster *c, st_net_group *g, long long first, int k, long long ns, int *most)
{
    int dom[ST_NET_MAX_DIMS], span[ST_NET_MAX_DIMS], sum = 0;
    if (first + (long long)(k - 1) * ns >= c->nodes)
        return;
    copy_levels(c, first, k, ns, dom, span);
    for (int i = 0; i < c->n_dims; i++) {
        if (dom[i] > 1 && (g->lv_dom[i] == 1 || span[i] < g->lv_span[i]))
            g->lv_span[i] = span[i];
        if (dom[i] > g->lv_dom[i])
            g->lv_dom[i] = dom[i];
        sum += dom[i];
    }
    if (sum > *most) {
        *most = sum;
        g->lv_first = first;
        g->lv_ns = ns;
    }
}

static long long gcd_ll(long long a, long long b)
{
    while (b) {
        long long t = a % b;
        a = b, b = t;
    }
    return a;
}

int st_net_group_place_job(const st_cluster *c, int n, int per_node, int stride, long long job, int chain,
                           st_net_group *g, st_error *err)
{
    int G = c->node.gpus;
    memset(g, 0, sizeof *g);
    if (n < 1)
        return st_error_set(err, ST_EINVAL, "a group needs at least 1 GPU, got %d", n);
    if (per_node <= 0)
        per_node = n < G ? n : G;
    if (per_node > G)
        return st_error_set(err, ST_EINVAL, "%d GPUs per node asked, but a %s node has %d", per_node,
                            c->node.id, G);
    if (n % per_node)
        return st_error_set(err, ST_EINVAL, "%d GPUs do not split evenly into nodes of %d; give a "
                            "GPU count that is a multiple of %d", n, per_node, per_node);
    g->n = n;
    g->per_node = per_node;
    g->nodes = n / per_node;
    if (g->nodes > c->nodes)
        return st_error_set(err, ST_EINVAL, "%d GPUs at %d per node need %d nodes; cluster %s has %d",
                            n, per_node, g->nodes, c->id, c->nodes);
    g->bw_intra = c->node.intra.bw * c->node.intra.efficiency;
    g->p2p_intra = c->node.intra.bw * c->node.intra.p2p_efficiency;
    g->lat_intra = c->node.intra.latency_s;
    g->base_s = c->node.coll_base_s;
    /* NCCL enables LL128 on NVLink fabrics only (tuning.cc); LL and Simple
     * everywhere; the node may narrow the list */
    g->intra_pci = c->node.intra.topology == ST_TOPO_PCIE;
    g->protos = (1u << ST_PROTO_LL) | (1u << ST_PROTO_SIMPLE) | (g->intra_pci ? 0 : 1u << ST_PROTO_LL128);
    if (c->node.nccl_protocols)
        g->protos = c->node.nccl_protocols;
    /* NCCL tuning.cc llMaxBws: on one node by GPU generation (compute
     * capability 8.x Ampere and Ada, 9.x Hopper, 10 and up Blackwell, the
     * rest as Volta; AMD GPUs as Volta, RCCL's own tables not modelled);
     * across nodes by host CPU vendor and node count */
    const char *arch = c->node.gpu.arch;
    int amd_cpu = strstr(c->node.cpu, "AMD") || strstr(c->node.cpu, "EPYC");
    if (g->nodes <= 1)
        g->ll_max_bw = c->node.gpu.vendor != ST_VENDOR_NVIDIA ? 39.0e9
                       : !strncmp(arch, "blackwell", 9)     ? 282.0e9
                       : !strcmp(arch, "hopper")            ? 141.0e9
                       : !strcmp(arch, "ampere") || !strcmp(arch, "ada") ? 87.7e9
                                                                         : 39.0e9;
    else
        g->ll_max_bw = (amd_cpu ? (g->nodes == 2 ? 22.5 : 19.0) : (g->nodes == 2 ? 39.0 : 20.4)) * 1e9;
    /* tuning.cc getNetOverhead: 2 us a network post on AMD x86 hosts, 1 us
     * on Intel and the rest (NCCL_NET_OVERHEAD unset) */
    g->net_overhead_s = g->nodes > 1 ? (amd_cpu ? 2e-6 : 1e-6) : 0;
    /* a direct NVLink mesh splits a GPU's links over its peers: one pair
     * (send/recv) gets 1/(G-1) of them; collectives use all at once */
    if (c->node.intra.topology == ST_TOPO_NVLINK_MESH && G > 1)
        g->p2p_intra /= G - 1;
    if (c->node.intra.hop_dims > 0) {
        /* a ring or torus: the group's steps routed over its links (net.h) */
        const st_link *l = &c->node.intra;
        if (stride < 1)
            stride = 1;
        if ((long long)(per_node - 1) * stride >= G)
            return st_error_set(err, ST_EINVAL, "%d GPUs %d apart do not fit a %s node of %d", per_node, stride,
                                c->node.id, G);
        g->hop_dims = l->hop_dims;
        memcpy(g->hop_shape, l->shape, sizeof g->hop_shape);
        g->hop_stride = stride;
        g->hop_link = st_link_hop_bw(l) * l->efficiency;
        g->hop_link_p2p = st_link_hop_bw(l) * l->p2p_efficiency;
        g->hop_lat = l->latency_s;
        int rc = st_hop_group(g, err);
        if (rc)
            return rc;
        if (per_node > 1) {
            g->bw_intra = g->hop_link / g->k_ring;
            g->p2p_intra = g->hop_link_p2p / g->k_p2p;
            g->lat_intra = g->h_ring * g->hop_lat;
        }
    }
    if (g->nodes > 1) {
        if (c->n_dims < 1 || c->node.nics < 1)
            return st_error_set(err, ST_EINVAL, "cluster %s has no scale-out network (network: or nics:)",
                                c->id);
        const st_link *l = &c->net[0];
        double bw = l->bw;
        if (c->node.nic_bw > 0 && c->node.nic_bw < bw)
            bw = c->node.nic_bw;
        /* A rail-optimized fabric keeps same-rail traffic under one leaf;
         * other topologies cross the spine, oversubscribed. */
        double over = l->topology == ST_TOPO_RAIL_OPTIMIZED ? 1 : l->oversubscription;
        g->bw_nic = bw * l->efficiency / over;
        g->p2p_nic = bw * l->p2p_efficiency / over;
        g->lat_net = l->latency_s;
        g->nics_per_node = c->node.nics;
        /* the node's shared path: the link's efficiencies, not the
         * spine's oversubscription (it sits before the fabric) */
        if (c->node.scaleout_bw > 0) {
            g->bw_node = c->node.scaleout_bw * l->efficiency;
            g->p2p_node = c->node.scaleout_bw * l->p2p_efficiency;
        }
        /* the levels the group's nodes sit in: node j of the group is the
         * j x (stride / G)-th (one GPU a node: the stride skips nodes). In a
         * job of `job` GPUs the group has copies (the same group at every
         * other rank offset), and the job runs at its worst-placed copy's
         * pace: the most groups touched, the fewest nodes in one of them
         * where it crosses a level. */
        long long ns = stride >= G && stride % G == 0 ? stride / G : 1;
        if ((long long)(g->nodes - 1) * ns >= c->nodes)
            ns = 1;
        g->lv_n = c->n_dims;
        g->lv_lat[0] = g->lat_net;
        g->lv_ns = ns;
        g->lv_first = 0;
        for (int i = 0; i < c->n_dims; i++)
            g->lv_reach[i] = c->net[i].reach > 0 ? c->net[i].reach : c->nodes;
        copy_levels(c, 0, g->nodes, ns, g->lv_dom, g->lv_span);
        int most = 0;
        for (int i = 0; i < c->n_dims; i++)
            most += g->lv_dom[i];
        /* the job's other copies: a group's tile the ranks in blocks of
         * stride x n; a pair that is one hop of a chain of |chain| members
         * (pipeline stages; chain < 0: a ring, a context-parallel group)
         * is every hop of every chain, the chains in blocks of stride x
         * |chain|. Placements repeat every lcm(block, the top level's
         * groups' GPUs) ranks: no further copy is new. */
        long long st = stride > 0 ? stride : 1, L = chain < 0 ? -chain : chain;
        long long block = st * (chain ? L : n);
        long long top = (long long)g->lv_reach[c->n_dims > 1 ? c->n_dims - 2 : 0] * G;
        long long gd = gcd_ll(block, top), period = block / gd > job / top ? job : block / gd * top;
        if (period > job)
            period = job;
        for (long long b = 0; c->n_dims > 1 && b < period; b += block)
            for (long long t = 0; t < st && b + t < job; t += st >= G ? G : st) {
                long long r0 = b + t;
                if (!chain) {
                    if (r0 + (long long)(n - 1) * st < job)
                        worst_copy(c, g, r0 / G, g->nodes, ns, &most);
                    continue;
                }
                for (long long j = 0; j < L && r0 + j * st < job; j++) {
                    long long other = j + 1 < L ? j + 1 : chain < 0 && L > 2 ? 0 : -1;
                    if (other < 0 || r0 + other * st >= job)
                        continue;
                    long long a = (r0 + j * st) / G, z = (r0 + other * st) / G;
                    if (a != z)
                        worst_copy(c, g, a < z ? a : z, 2, a < z ? z - a : a - z, &most);
                }
            }
        for (int i = 1; i < c->n_dims; i++) {
            /* the group's share of its dimension-(i-1) group's uplinks, the
             * cluster full of groups like it (all of a node's NICs busy):
             * each NIC's uplink rate x NICs x its nodes there x the share
             * of a node's GPUs it holds */
            const st_link *u = &c->net[i];
            double share = (double)c->node.nics * g->lv_span[i - 1] * per_node / G;
            g->lv_cap[i] = u->bw * u->efficiency / u->oversubscription * share;
            g->lv_p2p[i] = u->bw * u->p2p_efficiency / u->oversubscription * share;
            g->lv_lat[i] = u->latency_s;
        }
    }
    return 0;
}

/* Does the group's traffic cross level i (>= 1)? */
static int crosses(const st_net_group *g, int i) { return i < g->lv_n && g->lv_dom[i - 1] > 1; }

/* The dimension-(i-1) group rank r's node is in (the first copy's). */
static long long dom_of(const st_net_group *g, int i, int r)
{
    return (g->lv_first + (long long)(r / g->per_node) * g->lv_ns) / g->lv_reach[i - 1];
}

/* Of the ranks sending past their dimension-(i-1) group in a step at
 * distance dist (partner r ^ dist; a binomial broadcast's: the holders,
 * to r + dist), the most in one group: they share its uplinks. */
static int crossing_senders(const st_net_group *g, int i, int dist, int bcast)
{
    int most = 0, cnt = 0;
    long long cur = -1;
    for (int r = 0; r < g->n; r++) {
        long long dm = dom_of(g, i, r);
        if (dm != cur)
            cur = dm, cnt = 0;
        int p = bcast ? r + dist : r ^ dist;
        if ((bcast && r % (2 * dist)) || p >= g->n || dom_of(g, i, p) == dm)
            continue;
        if (++cnt > most)
            most = cnt;
    }
    return most;
}

/* The tightest uplink share over the levels the group crosses (INFINITY:
 * none) */
static double level_cap(const st_net_group *g, int p2p)
{
    double cap = INFINITY;
    for (int i = 1; i < g->lv_n; i++)
        if (crosses(g, i) && (p2p ? g->lv_p2p[i] : g->lv_cap[i]) < cap)
            cap = p2p ? g->lv_p2p[i] : g->lv_cap[i];
    return cap;
}

/* The latency a ring (or chain) over the group's nodes adds up on its
 * cross-node hops: of its `hops` among nodes, those between two of
 * dimension i-1's groups (one per group touched, the ring closing) cross
 * level i. With `log`, a tree's: log2 of the groups touched per level. */
static double net_lat(const st_net_group *g, double hops, int log)
{
    double t = 0, prev = hops;
    for (int i = 1; i < g->lv_n; i++) {
        double c = crosses(g, i) ? g->lv_dom[i - 1] : 0;
        if (log && c > 0) {
            int s = 0;
            while ((1 << s) < c)
                s++;
            c = s;
        }
        t += (prev - c) * g->lv_lat[i - 1];
        prev = c;
    }
    return t + prev * g->lv_lat[g->lv_n > 0 ? g->lv_n - 1 : 0];
}

static int is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }
static int log2_ceil(int n)
{
    int s = 0;
    while ((1 << s) < n)
        s++;
    return s;
}
static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

int st_coll_algo_valid(const st_net_group *g, st_coll c, st_algo a, st_error *err)
{
    const char *why = NULL;
    if (c == ST_COLL_SENDRECV && g->n != 2)
        why = "send/recv is between 2 GPUs (--gpus 2; --per-node 1 puts them on two nodes)";
    else if (c == ST_COLL_SENDRECV && a != ST_ALGO_AUTO && a != ST_ALGO_DIRECT)
        why = "send/recv is one direct transfer (algorithm auto or direct)";
    else if (a == ST_ALGO_TREE && c != ST_COLL_ALLREDUCE && c != ST_COLL_BROADCAST)
        why = "the tree algorithm does all-reduce and broadcast only";
    else if (c == ST_COLL_ALLTOALL && a != ST_ALGO_AUTO && a != ST_ALGO_DIRECT)
        why = "all-to-all is direct (every rank to every rank), as NCCL does it";
    else if (a == ST_ALGO_HD && !is_pow2(g->n))
        why = "halving-doubling needs a power-of-two GPU count";
    else if (a == ST_ALGO_HIER && c == ST_COLL_BROADCAST)
        why = "hierarchical is defined for all-reduce, all-gather and reduce-scatter";
    if (why)
        return st_error_set(err, ST_EINVAL, "%s with %s on %d GPUs: %s", st_coll_name(c), st_algo_name(a),
                            g->n, why);
    return 0;
}

/* A rate capped by the node's shared path (bw_node 0: no cap). */
static double node_cap(double rate, double cap)
{
    return cap > 0 && cap < rate ? cap : rate;
}

/* Off-node share of one GPU's NIC bandwidth (NICs shared when fewer)... */
static double nic_share_of(const st_net_group *g)
{
    return g->nics_per_node >= g->per_node ? g->bw_nic : g->bw_nic * g->nics_per_node / g->per_node;
}

/* ...with every GPU of its node sending at once */
static double nic_share(const st_net_group *g)
{
    return node_cap(nic_share_of(g), g->bw_node / g->per_node);
}

/* The flat ring's rate: intra links, and R = min(g, nics) rings leaving
 * each node through distinct NICs. */
static double ring_rate(const st_net_group *g)
{
    if (g->nodes <= 1)
        return g->bw_intra;
    int rings = g->per_node < g->nics_per_node ? g->per_node : g->nics_per_node;
    double across = dmin(node_cap(rings * g->bw_nic, g->bw_node), level_cap(g, 0));
    return g->per_node > 1 ? dmin(g->bw_intra, across) : across;
}

/* One direct exchange phase in which each rank sends `per_peer` bytes to
 * every other rank: on-node bytes over NVLink, off-node over its NIC share. */
static double direct_phase(const st_net_group *g, double per_peer, double k_all)
{
    double on = (g->per_node - 1) * per_peer, off = (g->n - g->per_node) * per_peer;
    double t = on > 0 ? (g->hop_dims ? per_peer * k_all / g->hop_link : on / g->bw_intra) : 0;
    if (off > 0)
        t = dmax(t, off / nic_share(g));
    /* bytes to the GPUs beyond its dimension-(i-1) group: over the group's
     * share of those uplinks, per GPU */
    for (int i = 1; i < g->lv_n; i++)
        if (crosses(g, i)) {
            double span = (double)g->lv_span[i - 1] * g->per_node;
            t = dmax(t, (g->n - span) * per_peer * span / g->lv_cap[i]);
        }
    return t;
}

/* Recursive halving or doubling: the bytes and latency of its log2 n steps.
 * On a ring or torus node the steps inside the node are added up link by
 * link, their chunks pipelined from step to step as the simulation runs
 * them: a step on other links overlaps the one before (a switch's steps
 * share the GPU's ports, so there the two agree). */
static void hd_pass(const st_net_group *g, double bytes, int doubling_vector, double *xfer, double *lat)
{
    int steps = log2_ceil(g->n);
    double *diff = g->hop_dims && g->per_node > 1 ? calloc((size_t)st_hop_links(g), sizeof *diff) : NULL;
    for (int j = 0; j < steps; j++) {
        int dist = g->n >> (j + 1);
        double b = doubling_vector ? bytes : bytes / (double)(2LL << j);
        int cross = dist >= g->per_node;
        if (!cross && diff) { /* the pairs' routes (a binomial broadcast: the holders') */
            int hops = st_hop_add(g, doubling_vector ? ST_HOP_BCAST : ST_HOP_PAIRS, dist, b, diff);
            *lat += hops * g->hop_lat;
            continue;
        }
        /* across nodes: every level some partners cross, its uplinks
         * shared by the ranks of one group that send past it; the step's
         * latency the highest's */
        int lv = 0;
        double rate = cross ? node_cap(g->bw_nic, g->bw_node / g->per_node) : g->bw_intra;
        for (int i = 1; cross && i < g->lv_n; i++) {
            int senders = crosses(g, i) ? crossing_senders(g, i, dist, doubling_vector) : 0;
            if (senders) {
                rate = dmin(rate, g->lv_cap[i] / senders);
                lv = i;
            }
        }
        *xfer += b / rate;
        *lat += cross ? g->lv_lat[lv] : g->lat_intra;
    }
    if (diff) {
        *xfer += st_hop_max(g, diff) / g->hop_link;
        free(diff);
    }
}

static void cost(const st_net_group *g, st_coll c, st_algo a, double S, double *lat, double *xfer, int *steps)
{
    int n = g->n, pn = g->per_node, k = g->nodes;
    /* a flat algorithm's step latency: of a ring's n hops, k cross nodes
     * (NCCL tuning.cc weighs intra and network latency the same way) */
    double a_step = k > 1 ? ((double)(n - k) * g->lat_intra + net_lat(g, k, 0)) / n : g->lat_intra;
    double fn = (double)(n - 1) / n;
    *lat = *xfer = 0;
    *steps = 0;
    switch (a) {
    case ST_ALGO_RING:
        if (c == ST_COLL_ALLREDUCE)
            *steps = 2 * (n - 1), *xfer = 2 * fn * S / ring_rate(g);
        else if (c == ST_COLL_BROADCAST)
            *steps = n - 1, *xfer = S / ring_rate(g); /* pipelined chain */
        else
            *steps = n - 1, *xfer = fn * S / ring_rate(g);
        *lat = *steps * a_step;
        break;
    case ST_ALGO_TREE: {
        /* NCCL's tree: a chain inside each node, a double binary tree
         * among nodes; its bandwidth is 0.92 of the ring's (tuning.cc) */
        int depth = (pn - 1) + log2_ceil(k);
        *steps = (c == ST_COLL_ALLREDUCE ? 2 : 1) * depth;
        *xfer = (c == ST_COLL_ALLREDUCE ? 2 * fn : 1) * S / (0.92 * ring_rate(g));
        *lat = (c == ST_COLL_ALLREDUCE ? 2 : 1) * ((pn - 1) * g->lat_intra + (k > 1 ? net_lat(g, log2_ceil(k), 1) : 0));
        break;
    }
    case ST_ALGO_DIRECT:
        if (c == ST_COLL_SENDRECV) {
            *steps = 1;
            *xfer = S / (k > 1 ? dmin(node_cap(g->p2p_nic, g->p2p_node), level_cap(g, 1)) : g->p2p_intra);
        } else if (c == ST_COLL_BROADCAST) {
            /* the root sends the whole buffer to every other rank (alone off
             * its node: its NIC share, up to the node's whole cap) */
            double on = (pn - 1) * S, off = (n - pn) * S, hops = 0;
            double t_on = on > 0 ? on / g->bw_intra : 0;
            if (on > 0 && g->hop_dims) /* the root's routes to the rest of its node */
                t_on = S * st_hop_pattern(g, ST_HOP_ROOT, 0, &hops) / g->hop_link;
            *steps = 1;
            *xfer = dmax(t_on, off > 0 ? off / node_cap(nic_share_of(g), g->bw_node) : 0);
            /* past the root's dimension-(i-1) group, over its uplinks (the
             * root alone sends: the group's whole share) */
            for (int i = 1; i < g->lv_n; i++)
                if (crosses(g, i)) {
                    int far = 0;
                    for (int r = 1; r < n; r++)
                        far += dom_of(g, i, r) != dom_of(g, i, 0);
                    *xfer = dmax(*xfer, far * S / g->lv_cap[i]);
                }
            if (on > 0 && g->hop_dims) { /* one step, as far as the root's longest route */
                *lat = dmax(hops * g->hop_lat, k > 1 ? a_step : 0);
                break;
            }
        } else {
            /* one message per peer per pass, each with its own latency */
            int passes = c == ST_COLL_ALLREDUCE ? 2 : 1;
            double k_all = 0, hops = 0;
            if (g->hop_dims && pn > 1) /* every GPU's routes to every other on the node */
                k_all = st_hop_pattern(g, ST_HOP_ALL, 0, &hops);
            *steps = passes * (n - 1);
            *xfer = passes * direct_phase(g, S / n, k_all);
            /* each message its own latency: of a GPU's n - pn off-node
             * peers, those beyond its dimension-(i-1) group cross level i */
            double off_lat = (double)(n - pn) * g->lat_net;
            for (int i = 1; i < g->lv_n; i++)
                if (crosses(g, i))
                    off_lat += (double)(n - (long long)g->lv_span[i - 1] * pn) * (g->lv_lat[i] - g->lv_lat[i - 1]);
            /* on a ring or torus each message costs a step's latency as on a
             * switch, and the longest route its further hops once (the
             * messages stream through the fabric together) */
            double on_lat = g->hop_dims ? ((pn - 1) + dmax(hops - 1, 0)) * g->hop_lat : (pn - 1) * g->lat_intra;
            *lat = passes * (on_lat + off_lat);
            break;
        }
        *lat = *steps * a_step;
        break;
    case ST_ALGO_HD:
        if (c == ST_COLL_BROADCAST) {
            hd_pass(g, S, 1, xfer, lat); /* binomial tree: whole buffer each step */
        } else {
            hd_pass(g, S, 0, xfer, lat);
            if (c == ST_COLL_ALLREDUCE)
                hd_pass(g, S, 0, xfer, lat);
        }
        *steps = (c == ST_COLL_ALLREDUCE ? 2 : 1) * log2_ceil(n);
        break;
    case ST_ALGO_HIER: {
        int passes = c == ST_COLL_ALLREDUCE ? 2 : 1;
        double fg = (double)(pn - 1) / pn, fk = (double)(k - 1) / k;
        /* intra-node pass(es) over the whole buffer: on a ring or torus
         * whose group is a grid, dimension by dimension (net.h) */
        int dim_steps = 0;
        if (g->hop_dims && g->grid && pn > 1)
            for (int p = 0; p < passes; p++)
                st_hop_dims_pass(g, S, xfer, lat, &dim_steps);
        else {
            *xfer += passes * fg * S / g->bw_intra * (pn > 1);
            *lat += passes * (pn - 1) * g->lat_intra;
            dim_steps = passes * (pn - 1);
        }
        /* among nodes, each GPU on its 1/g shard through its NIC share */
        if (k > 1) {
            /* pn rings among the nodes, sharing the levels' uplinks */
            *xfer += passes * fk * (S / pn) / dmin(nic_share(g), level_cap(g, 0) / pn);
            *lat += passes * (k - 1) * (g->lv_n > 1 ? net_lat(g, k, 0) / k : g->lat_net);
        }
        *steps = dim_steps + passes * (k - 1);
        break;
    }
    default: break;
    }
    *lat += c == ST_COLL_SENDRECV ? ST_NET_BASE_LATENCY : g->base_s;
}

/* NCCL src/graph/tuning.cc, ring: baseLat (us) and hwLat (us a step) per
 * protocol (LL, LL128, Simple) for NVLink, PCIe and the network */
static const double nccl_base_us[3] = {6.6, 14.0, 8.4};
static const double nccl_hwlat_us[3][3] = {{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};
/* the tree's (LL, LL128, Simple) per NVLink, PCIe and network step; NCCL
 * also charges the network's tree latencies to a ring with one GPU per
 * node ("with ppn=1 latencies are fully exposed") */
static const double nccl_tree_hwlat_us[3][3] = {{0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}};

/* point-to-point collectives (send/recv, all-to-all) take NCCL's p2p path */
static int p2p_coll(st_coll c) { return c == ST_COLL_SENDRECV || c == ST_COLL_ALLTOALL; }

int st_coll_proto_valid(const st_net_group *g, st_coll c, st_proto p, st_error *err)
{
    const char *why = NULL;
    if (p == ST_PROTO_AUTO || (p == ST_PROTO_SIMPLE && p2p_coll(c)))
        return 0;
    if (p2p_coll(c))
        why = "send/recv and all-to-all run on NCCL's point-to-point path, modelled with Simple (--proto simple "
              "or auto)";
    else if (!(g->protos & (1u << p)))
        why = p == ST_PROTO_LL128 && g->intra_pci
                  ? "NCCL enables LL128 on NVLink fabrics only, and this node's GPUs talk over PCIe"
                  : "the node preset's nccl_protocols leaves it out";
    if (why)
        return st_error_set(err, ST_EINVAL, "%s on protocol %s: %s", st_coll_name(c), st_proto_name(p), why);
    return 0;
}

void st_net_group_proto(const st_net_group *g, st_algo a, st_proto p, st_net_group *out)
{
    *out = *g;
    /* NCCL tuning.cc: "Inter-node rings still have to launch nsteps * net
     * overhead": a ring across nodes takes at least the network post's cost
     * (three times it on Simple) on each of its on-node steps too */
    double post = a == ST_ALGO_RING && g->nodes > 1
                      ? (p == ST_PROTO_SIMPLE ? 3 : p == ST_PROTO_LL || p == ST_PROTO_LL128 ? 1 : 0) * g->net_overhead_s
                      : 0;
    out->lat_intra = dmax(out->lat_intra, post);
    if (p != ST_PROTO_LL && p != ST_PROTO_LL128)
        return;
    /* a preset's latencies are the ring's Simple figures: a protocol scales
     * them by NCCL's figure for the algorithm over that (the tree has its
     * own; the network's tree figures also for a ring at one GPU a node) */
    int k = p == ST_PROTO_LL ? 0 : 1, intra = g->intra_pci ? 1 : 0, tree = a == ST_ALGO_TREE;
    out->lat_intra = g->lat_intra * (tree ? nccl_tree_hwlat_us[intra][k] : nccl_hwlat_us[intra][k]) /
                     nccl_hwlat_us[intra][2];
    double net_f = (tree || g->per_node == 1 ? nccl_tree_hwlat_us[2][k] : nccl_hwlat_us[2][k]) / nccl_hwlat_us[2][2];
    out->lat_net = g->lat_net * net_f;
    for (int i = 0; i < g->lv_n; i++) /* every level's hops as the network's */
        out->lv_lat[i] = g->lv_lat[i] * net_f;
    out->lat_intra = dmax(out->lat_intra, post);
    out->hop_lat = g->hop_lat * nccl_hwlat_us[intra][k] / nccl_hwlat_us[intra][2];
    out->base_s = g->base_s + (nccl_base_us[k] - nccl_base_us[2]) * 1e-6;
    if (out->base_s < 0)
        out->base_s = 0;
    /* bandwidth: the ring's LL moves 8 bytes per 4 of data, LL128 120 of
     * every 128; NCCL's tree gets 1/3.8 on LL and 7/9 (one node) or
     * 120/128 on LL128 */
    double f;
    if (a == ST_ALGO_TREE)
        f = p == ST_PROTO_LL ? 1 / 3.8 : g->nodes <= 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    else
        f = p == ST_PROTO_LL ? 0.5 : 0.92;
    out->bw_intra = g->bw_intra * f;
    out->hop_link = g->hop_link * f;
    out->bw_nic = g->bw_nic * f;
    for (int i = 1; i < g->lv_n; i++)
        out->lv_cap[i] = g->lv_cap[i] * f;
    out->bw_node = g->bw_node * f;
    /* NCCL caps LL last: the tree's 0.92 (applied in cost) comes before */
    if (p == ST_PROTO_LL && g->ll_max_bw > 0) {
        double cap = tree ? g->ll_max_bw / 0.92 : g->ll_max_bw;
        out->bw_intra = dmin(out->bw_intra, cap);
        out->bw_nic = dmin(out->bw_nic, cap);
        /* a ring or torus's links by as much as the cap cut the group's
         * ring, so every algorithm there meets it alike */
        if (g->hop_dims && g->bw_intra > 0)
            out->hop_link *= out->bw_intra / (g->bw_intra * f);
    }
}

int st_coll_estimate(const st_net_group *g, st_coll c, st_algo a, double bytes, st_coll_est *out,
                     st_error *err)
{
    return st_coll_estimate_proto(g, c, a, ST_PROTO_AUTO, bytes, out, err);
}

int st_coll_estimate_proto(const st_net_group *g, st_coll c, st_algo a, st_proto p, double bytes,
                           st_coll_est *out, st_error *err)
{
    memset(out, 0, sizeof *out);
    out->coll = c;
    out->bytes = bytes;
    if (!(bytes >= 0) || !isfinite(bytes))
        return st_error_set(err, ST_EINVAL, "message size must be a finite number of bytes >= 0");
    int rc = st_coll_algo_valid(g, c, a, err);
    if (!rc)
        rc = st_coll_proto_valid(g, c, p, err);
    if (rc)
        return rc;
    if (g->n <= 1 || bytes == 0) {
        out->algo = a == ST_ALGO_AUTO ? ST_ALGO_RING : a;
        out->proto = p == ST_PROTO_AUTO ? ST_PROTO_SIMPLE : p;
        return 0;
    }
    int lo = (int)a, hi = (int)a;
    if (a == ST_ALGO_AUTO) /* a ring or torus node adds its dimension-wise algorithm */
        lo = ST_ALGO_RING, hi = g->hop_dims && g->grid ? ST_ALGO_HIER : ST_ALGO_DIRECT;
    out->time_s = INFINITY;
    for (int i = lo; i <= hi; i++) {
        if (st_coll_algo_valid(g, c, (st_algo)i, NULL))
            continue;
        /* auto chooses among NCCL's algorithms: ring and tree, direct only
         * where NCCL has nothing else (all-to-all, send/recv); NCCL's tree
         * runs all-reduce alone (its broadcast, all-gather and
         * reduce-scatter are rings: src/device/broadcast.h implements
         * NCCL_ALGO_RING only), so an asked-for tree broadcast is strata's
         * own pipelined tree, never NCCL's choice */
        if (a == ST_ALGO_AUTO && i == ST_ALGO_DIRECT && c != ST_COLL_ALLTOALL && c != ST_COLL_SENDRECV)
            continue;
        if (a == ST_ALGO_AUTO && i == ST_ALGO_TREE && c != ST_COLL_ALLREDUCE)
            continue;
        if (a == ST_ALGO_AUTO && i == ST_ALGO_HD)
            continue;
        /* Simple first, so that a tie keeps it */
        for (int q = ST_PROTO_SIMPLE; q >= ST_PROTO_LL; q--) {
            if (p != ST_PROTO_AUTO && q != (int)p)
                continue;
            if (p2p_coll(c) ? q != ST_PROTO_SIMPLE : !(g->protos & (1u << q)))
                continue;
            st_net_group v;
            st_net_group_proto(g, (st_algo)i, (st_proto)q, &v);
            double lat, xfer;
            int steps;
            cost(&v, c, (st_algo)i, bytes, &lat, &xfer, &steps);
            if (lat + xfer < out->time_s) {
                out->algo = (st_algo)i;
                out->proto = (st_proto)q;
                out->time_s = lat + xfer;
                out->latency_s = lat;
                out->transfer_s = xfer;
                out->steps = steps;
            }
        }
    }
    out->algbw = bytes / out->time_s;
    out->busbw = out->algbw * st_coll_bus_factor(c, g->n);
    return 0;
}
