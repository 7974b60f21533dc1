/*
 * net: collective communication on a cluster, in seconds and bus bandwidth.
 *
 * A group of n ranks sits on a cluster preset, per_node of them on each
 * node (ranks 0..per_node-1 on the first node, and so on, as NCCL and
 * torchrun number them). Two link levels carry its traffic:
 *   intra  the node's GPU fabric (NVSwitch, NVLink mesh, PCIe): bandwidth
 *          B_i per GPU per direction, per-step latency a_i;
 *   net    the scale-out fabric (cluster network[0]): one NIC per GPU on a
 *          rail (or nics/per_node of one when NICs are fewer than GPUs),
 *          bandwidth B_e per NIC, per-step latency a_e. A fat tree with
 *          oversubscription s gives each NIC B_e/s across the spine. A
 *          node whose NICs share a narrower path (node scaleout_bw_gbs:
 *          one uplink, a PCIe switch, the host bridge) caps its GPUs'
 *          off-node bytes together at U, at the link's efficiency (its
 *          p2p_efficiency for send/recv; not divided by the spine's
 *          oversubscription): the ring's R x B_e becomes min(R x B_e, U),
 *          a GPU's NIC share at most U / g when all g send, and the
 *          simulation queues off-node transfers on a node out-port and
 *          in-port served at U besides their NIC ports.
 * Effective bandwidth = link bandwidth x the link's `efficiency` (NCCL's
 * bus bandwidth on large messages over the wire rate, from nccl-tests; see
 * the presets) or `p2p_efficiency` for send/recv.
 *
 * alpha-beta model. A collective is a sequence of steps; each step costs
 * the latency of the slowest link it crosses, and the bytes each rank sends
 * cost bytes / rate of the link they cross:
 *     t = base + steps x a + sum over phases of bytes_per_rank / rate
 * base = the node's coll_latency_us (default 8.4 us, NCCL's base latency for
 * the ring/Simple protocol, src/graph/tuning.cc baseLat; send/recv always
 * 8.4 us); a_i, a_e from the presets (NCCL's hwLat).
 * Sizes follow nccl-tests: `bytes` is the whole buffer (all-reduce: the
 * vector; all-gather/reduce-scatter: the gathered vector; all-to-all: one
 * rank's send buffer; send/recv: the message). Bus bandwidth =
 * algorithm bandwidth (bytes / t) x the bus factor: 2(n-1)/n for
 * all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for
 * broadcast and send/recv.
 *
 * Algorithms (n ranks, g per node, k nodes):
 *   ring          n-1 steps per pass (all-reduce: a reduce-scatter pass and
 *                 an all-gather pass). Across nodes NCCL runs one ring per
 *                 NIC, so the rate is min(B_i, R x B_e) with R = min(g, nics).
 *   tree          NCCL's Tree: a chain through the GPUs of a node and a
 *                 double binary tree among nodes, 2((g-1) + ceil(log2 k))
 *                 steps for all-reduce (half for broadcast); the ring's
 *                 bytes at 0.92 of its rate (NCCL tuning.cc); all-reduce and
 *                 broadcast only.
 *   direct        every rank sends to every other (n-1 messages per pass,
 *                 each with its own latency): intra bytes over B_i and
 *                 off-node bytes over the rank's NIC share, whichever is
 *                 slower.
 *   halving_doubling  recursive halving then doubling (Rabenseifner):
 *                 step j exchanges bytes/2^(j+1) with the rank n/2^(j+1)
 *                 away; the step crosses nodes when that distance >= g.
 *                 n must be a power of two.
 *   hierarchical  intra-node reduce-scatter, then the collective among the
 *                 k nodes on each GPU's 1/g shard (ring over NICs), then
 *                 intra-node all-gather (all-reduce; for all-gather and
 *                 reduce-scatter the matching half).
 *   auto          the fastest of NCCL's own algorithms that apply: ring or
 *                 tree; direct for all-to-all and send/recv (NCCL's tuner
 *                 does the same with its model). The simulation's auto
 *                 takes ring where the model picks tree.
 *
 * Protocols. NCCL moves a collective's bytes with one of three protocols
 * and picks, per call, the one its own cost model (src/graph/tuning.cc)
 * finds fastest; strata does the same with the same constants:
 *   ll      8-byte stores carrying a 4-byte flag: the lowest latency (ring
 *           hwLat NVLink 0.6 us a step against Simple's 3.4; PCIe 1.0 vs
 *           5.7; network 2.7 vs 14, or the tree's 5.0 where a group has
 *           one GPU per node, as NCCL charges it) at half the bandwidth (ring; tree
 *           1/3.8) and at most NCCL's llMaxBws (one node: 39 GB/s bus
 *           bandwidth before Ampere, 87.7 Ampere and Ada, 141 Hopper, 282
 *           Blackwell; across nodes by host CPU, Intel 39 / 20.4 and AMD
 *           22.5 / 19.0 for 2 / more nodes), base 6.6 us against Simple's 8.4;
 *   ll128   128-byte lines with an 8-byte flag: NVLink 1.9 us a step (PCIe
 *           2.5, network 4.0; 8.5 at one GPU per node) at 0.92 of the
 *           bandwidth (tree: 7/9 on one
 *           node, 120/128 across nodes), base 14 us; NCCL enables it on
 *           NVLink fabrics only, as strata does;
 *   simple  the preset's figures as they stand (its latencies are NCCL's
 *           Simple hwLat or were characterised with Simple-sized messages).
 * A protocol scales the preset's per-step latencies (the ring's Simple
 * figures) by NCCL's figure for the algorithm and link kind over that
 * (the tree has its own: NVLink 0.6 / 1.25, PCIe 1.0 / 1.9, network 5.0 /
 * 8.5 on LL / LL128) and shifts the node's coll_latency_us by NCCL's
 * baseLat difference (a characterised fixed cost beyond NCCL's 8.4 us
 * stays; never below 0). Not modelled: NCCL's floor of 1-2 us on a
 * cross-node ring's on-node steps (netOverhead), its LL128 per-channel
 * caps, and its LL128 limit to compute capability 7.0, 8.0 and 9.0. The
 * small-message floor falls (64 KiB all-reduce on 8 NVSwitch GPUs: LL,
 * about 17 us where Simple alone gave 56); large messages keep Simple.
 * A node's `nccl_protocols` restricts the choice (as NCCL_PROTO does):
 * astra-hgx-h100 is Simple only, since ASTRA-sim models no protocol.
 * Send/recv and all-to-all run on NCCL's point-to-point path: Simple.
 *
 * Levels. A cluster's network may have several dimensions, innermost
 * first (a rail's leaf, a pod's spine, an aggregation layer): dimension i
 * joins groups of `nodes` nodes (the last, the cluster). Traffic between
 * two of dimension i-1's groups crosses dimension i, on its uplinks: each
 * NIC's bw x efficiency / oversubscription there, the cluster taken full
 * of groups like this one (all NICs busy, as a fat tree's single
 * dimension already is), so the group's share of a dimension-(i-1)
 * group's uplinks is that x NICs x the group's nodes there (the fewest in
 * any group it touches: a node alone past a boundary sets the pace) x its
 * GPUs per node / the node's GPUs (lv_cap). Then: a ring (R rings)
 * crosses each such boundary once per ring, its across rate min(R x NIC,
 * lv_cap); the hierarchical inter-node rings the same over per_node
 * rings; direct sends a GPU's bytes beyond its group at lv_cap / its GPUs
 * there, a direct broadcast's root alone at lv_cap; a halving-doubling
 * step at lv_cap / the most GPUs of one group whose partners are past it
 * (a binomial broadcast's: the holders), at every level some cross;
 * send/recv at a GPU's share. Each hop between two of dimension i-1's
 * groups costs dimension i's latency. The simulation queues those
 * transfers at each crossed group's out- and in-port (served at lv_cap,
 * beside the NIC ports, as the node's cap is). A group's GPUs sit where
 * the rank order puts them: consecutive nodes, or stride / GPUs-per-node
 * nodes apart for one GPU a node; in a training job, its worst-placed
 * copy (st_net_group_place_job). The first of several levels has no
 * oversubscription of its own (its links are the NICs'; the blocking is
 * the next level's).
 *
 * The discrete-event simulation (st_net_simulate) runs the same algorithms
 * as chunk transfers through per-GPU ports (NVLink out/in, NIC out/in; an
 * NVSwitch is non-blocking, so only the ends of a transfer contend), so
 * several collectives that share GPUs or NICs slow each other down as they
 * would on the machine: TP and DP collectives on one node, all-to-all
 * across nodes. Each chunk waits for its ports (first come, first served)
 * and for the chunk it forwards; a chunk takes bytes/rate on both ports and
 * arrives one link latency later.
 */
#ifndef STRATA_NET_H
#define STRATA_NET_H

#include "hw/hw.h"

typedef enum st_coll {
    ST_COLL_ALLREDUCE = 0,
    ST_COLL_ALLGATHER,
    ST_COLL_REDUCESCATTER,
    ST_COLL_ALLTOALL,
    ST_COLL_BROADCAST,
    ST_COLL_SENDRECV,
    ST_COLL_COUNT
} st_coll;
const char *st_coll_name(st_coll c); /* "allreduce", ... */
int st_coll_parse(const char *s, st_coll *out); /* also accepts all_reduce, send_recv */

typedef enum st_algo {
    ST_ALGO_AUTO = 0,
    ST_ALGO_RING,
    ST_ALGO_TREE,
    ST_ALGO_DIRECT,
    ST_ALGO_HD,
    ST_ALGO_HIER,
    ST_ALGO_COUNT
} st_algo;
const char *st_algo_name(st_algo a); /* "auto", "ring", "tree", "direct", "halving_doubling", "hierarchical" */
int st_algo_parse(const char *s, st_algo *out);

/* NCCL's base latency per collective (ring, Simple protocol), seconds. */
#define ST_NET_BASE_LATENCY 8.4e-6

typedef enum st_proto {
    ST_PROTO_AUTO = 0, /* the fastest the node allows */
    ST_PROTO_LL,
    ST_PROTO_LL128,
    ST_PROTO_SIMPLE,
    ST_PROTO_COUNT
} st_proto;
const char *st_proto_name(st_proto p); /* "auto", "ll", "ll128", "simple" */
int st_proto_parse(const char *s, st_proto *out);

/* The bus factor of a collective over n ranks (see above). */
double st_coll_bus_factor(st_coll c, int n);

/* Where a group sits and what its links give it. */
typedef struct st_net_group {
    int n, per_node, nodes;
    double bw_intra, lat_intra;  /* effective, per GPU per direction */
    double bw_nic, lat_net;      /* effective, per NIC (0 when one node) */
    int nics_per_node;
    double bw_node;              /* effective cap on a node's off-node bytes, all GPUs together
                                    (node scaleout_bw_gbs; 0: none) */
    double p2p_intra, p2p_nic;   /* send/recv rates */
    double p2p_node;             /* send/recv's share of bw_node's cap (0: none) */
    double base_s;               /* fixed cost per collective (node preset) */
    int intra_pci;               /* the node's GPUs talk over PCIe (NCCL's PCI latencies, no LL128) */
    double ll_max_bw;            /* NCCL's cap on LL's bus bandwidth (tuning.cc llMaxBws), bytes/s */
    unsigned protos;             /* protocols allowed, bit (1 << st_proto) */
    double net_overhead_s;       /* NCCL getNetOverhead: a network post's host cost (0 on one node) */
    /* A multi-hop node fabric (ring, torus; hop_dims 0: none). The group's
     * GPUs on a node are local 0, hop_stride, 2 hop_stride, ... */
    int hop_dims, hop_shape[3], hop_stride;
    double hop_link, hop_link_p2p; /* effective per link per direction (collectives, send/recv) */
    double hop_lat;                /* per hop */
    double k_ring;   /* the busiest link's bytes per byte of a ring step (both ways, half each) */
    double k_p2p;    /* the same for one transfer from the first GPU to the second */
    double h_ring;   /* a ring step's routes' mean hops (a chunk goes round through them all) */
    int grid;        /* the node's GPUs of the group are a grid (every combination of their coordinates) */
    int grid_m[3];            /* per dimension: GPUs */
    double grid_k[3];         /* per dimension: its ring's busiest link, as k_ring */
    double grid_h[3];         /* per dimension: its ring's routes' mean hops */
    /* Scale-out levels (the cluster's network dimensions; net.h "Levels"):
     * per dimension i, lv_dom[i] of its groups hold the group's nodes,
     * lv_span[i] of those nodes in the first one; for i >= 1, traffic
     * between two of dimension i-1's groups crosses it, with the group's
     * share of their uplinks lv_cap[i] (collectives) and lv_p2p[i]
     * (send/recv), and lv_lat[i] a hop (lv_lat[0] = lat_net). lv_span is
     * the fewest of its nodes in one group it touches, of its worst-placed
     * copy in a job. */
    int lv_n;
    int lv_dom[ST_NET_MAX_DIMS], lv_span[ST_NET_MAX_DIMS];
    int lv_reach[ST_NET_MAX_DIMS]; /* nodes one group of dimension i joins */
    long long lv_first, lv_ns;     /* the worst-placed copy's nodes: lv_first, then lv_ns apart */
    double lv_cap[ST_NET_MAX_DIMS], lv_p2p[ST_NET_MAX_DIMS], lv_lat[ST_NET_MAX_DIMS];
} st_net_group;

/* per_node <= 0: as many as fit (min(n, GPUs per node)). Fails when the
 * group does not fit the cluster or per_node does not divide n. */
int st_net_group_init(const st_cluster *c, int n, int per_node, st_net_group *g, st_error *err);
/* The same for a group whose GPUs are `stride` apart (a DP group across TP
 * groups: stride TP); it matters on a multi-hop fabric only, where where
 * the GPUs sit sets the routes. */
int st_net_group_place(const st_cluster *c, int n, int per_node, int stride, st_net_group *g, st_error *err);
/* The same for one of a job's groups: the job of `job` GPUs (rank order
 * node-major) holds copies of it at every other offset, and on a cluster of
 * several network levels the worst-placed copy's levels are the group's
 * (job 0: the first copy alone). chain != 0 (n = 2): the pair is one hop
 * of chains of |chain| members stride apart (pipeline stages; chain < 0:
 * a ring, its last member back to its first), and every hop of every
 * chain in the job is a copy. */
int st_net_group_place_job(const st_cluster *c, int n, int per_node, int stride, long long job, int chain,
                           st_net_group *g, st_error *err);

/* ---- multi-hop fabrics (fabric.c) ------------------------------------------
 * Inside a node whose intra link is a ring, torus2d or torus3d, GPU l sits
 * at grid coordinates (l mod X, l / X mod Y, l / XY) and has two links per
 * dimension, one each way round, each carrying bw / (2 x dimensions) per
 * direction (a ring's GPU: 2 links, a 2D torus's: 4, a 3D torus's: 6), at
 * the link's efficiency; latency_us is one hop's. A transfer takes
 * dimension-order routing, each dimension the shorter way round (a
 * distance of half the ring either way: half the bytes each way), and
 * costs its route's hops x the hop latency. A step of an algorithm, with
 * all its transfers at once, takes as long as its busiest directed link
 * needs for the bytes routed over it. So:
 *   ring         the ring in rank order, run both ways on half the data
 *                each (NCCL's rings go both ways on NVLink): rate = link
 *                rate / k_ring, a step's latency the routes' mean hops (a
 *                chunk goes round through all of them). On a physical
 *                ring that is the GPU's whole bandwidth; on a torus a
 *                rank-order ring uses 2 of a GPU's 4 or 6 links.
 *   direct       every pair's routes at once: the busiest link's load;
 *                each message a step's latency, as on a switch, and the
 *                longest route its further hops once.
 *   halving_doubling  the steps inside the node added up link by link
 *                (the chunks pipeline from step to step, as in the
 *                simulation; a binomial broadcast's steps the holders'
 *                routes only), each step its longest route's latency.
 *   the direct broadcast  the root's routes, its longest route's latency.
 *   hierarchical inside the node, the dimension-wise algorithm of torus
 *                machines (TPU pods, Ying et al. 2018): reduce-scatter
 *                along each dimension's rings in turn, then all-gather
 *                back, the data in one part per dimension, each part
 *                starting on another dimension so every link is busy:
 *                (m-1) steps per dimension of m GPUs, all of a 2D or 3D
 *                torus GPU's links used. The GPUs of a node must be a grid
 *                (a row, a column, a plane, all); otherwise the intra
 *                passes are the rank-order ring. `auto` considers it on a
 *                multi-hop fabric, where a torus machine's library runs it.
 *   tree         NCCL's chain and tree at the ring's rate (a torus machine
 *                does not run NCCL; kept for comparison).
 * The simulation routes each chunk over its links (a queue per directed
 * link; a chunk holds each from when it is free, as wormhole routing's
 * flits stream through) and runs the ring, direct and halving-doubling;
 * it has no dimension-wise passes. Against the model: the ring, direct
 * and halving-doubling all-reduce within 1-2%; a binomial broadcast on a
 * torus between the link-load bound the model takes and the sum of its
 * steps (its chunks wait on the step before). LL's bandwidth cap scales
 * the links as it scales the group's ring. */
enum { ST_HOP_ALL = 0, ST_HOP_ROOT, ST_HOP_PAIRS, ST_HOP_BCAST };
/* directed links on a node: (local GPU x dimensions + dimension) x 2 + way (0 up, 1 down) */
int st_hop_links(const st_net_group *g);
/* The route src -> dst (local GPUs): writes its directed links (links may
 * be NULL), returns its hops. Bit d of `way` picks the down way where
 * dimension d's two ways are equally long. */
int st_hop_route(const st_net_group *g, int src, int dst, unsigned way, int *links);
/* bit d set: dimension d's two ways are equally long */
unsigned st_hop_ties(const st_net_group *g, int src, int dst);
/* Route the group's ring and grid rings (at init). */
int st_hop_group(st_net_group *g, st_error *err);
/* The busiest link's bytes per byte each transfer carries, for ST_HOP_ALL
 * (every GPU of the group on a node to every other), ST_HOP_ROOT (the
 * first to every other), ST_HOP_PAIRS (i with i ^ dist) or ST_HOP_BCAST
 * (a binomial tree's step: i to i + dist where i is a multiple of 2 dist);
 * *hops: the longest route. NAN when out of memory. */
double st_hop_pattern(const st_net_group *g, int kind, int dist, double *hops);
/* The same patterns added up, each transfer carrying w bytes, into a
 * difference array `diff` (st_hop_links doubles, zeroed); returns the
 * longest route. st_hop_max turns the array into loads and returns the
 * busiest link's. */
int st_hop_add(const st_net_group *g, int kind, int dist, double w, double *diff);
double st_hop_max(const st_net_group *g, double *diff);
/* One reduce-scatter or all-gather pass of the dimension-wise algorithm
 * over S bytes (g->grid set), added to *xfer, *lat and *steps. */
void st_hop_dims_pass(const st_net_group *g, double S, double *xfer, double *lat, int *steps);

typedef struct st_coll_est {
    st_coll coll;
    st_algo algo;     /* the algorithm used (auto resolved) */
    st_proto proto;   /* the protocol it runs (auto resolved) */
    double bytes;
    double time_s;
    double latency_s; /* base + steps x latency */
    double transfer_s;/* the bandwidth terms */
    double algbw, busbw; /* bytes/s */
    int steps;
} st_coll_est;

/* Is algorithm a defined for collective c on group g? 0 yes, else ST_EINVAL
 * with the reason in err. */
int st_coll_algo_valid(const st_net_group *g, st_coll c, st_algo a, st_error *err);

/* The alpha-beta estimate. bytes >= 0; algo AUTO picks the fastest, each
 * algorithm on the fastest protocol the group allows. */
int st_coll_estimate(const st_net_group *g, st_coll c, st_algo a, double bytes, st_coll_est *out,
                     st_error *err);
/* The same on protocol p (AUTO: the fastest allowed); ST_EINVAL with the
 * reason when p is not allowed for c on g. */
int st_coll_estimate_proto(const st_net_group *g, st_coll c, st_algo a, st_proto p, double bytes,
                           st_coll_est *out, st_error *err);
/* Is protocol p usable for collective c on g? 0 yes, else ST_EINVAL (err). */
int st_coll_proto_valid(const st_net_group *g, st_coll c, st_proto p, st_error *err);
/* The group as algorithm a on protocol p sees it: latencies, base and
 * collective bandwidths scaled as net.h says (p2p rates unchanged). */
void st_net_group_proto(const st_net_group *g, st_algo a, st_proto p, st_net_group *out);

/* ---- discrete-event simulation -------------------------------------------- */
typedef struct st_flow {
    st_coll coll;
    st_algo algo;      /* AUTO: the analytical model's choice */
    double bytes;
    double start_s;
    int first_rank;    /* the group is ranks first_rank .. first_rank + n*stride - 1 */
    int stride;        /* 1: contiguous; g: one rank per node-slot (DP across TP groups) */
    int n;
    st_proto proto;    /* AUTO: the model's choice for the algorithm */
} st_flow;

typedef struct st_flow_result {
    st_algo algo;
    st_proto proto;    /* the protocol its chunks move on (the model's pick for algo) */
    double end_s;      /* completion time */
    double time_s;     /* end_s - start_s */
    long long transfers;
    int chunks;        /* pipelined chunks per step: ceil(bytes / n / chunk_bytes), 1..16 */
} st_flow_result;

/* Simulate flows together on cluster c (GPUs numbered node-major: GPU r is
 * on node r / GPUs-per-node). chunk_bytes <= 0: 1 MiB. A step's block is
 * cut into ceil(bytes / n / chunk_bytes) chunks, at least 1 and at most 16
 * (out[].chunks says how many). The transfers are counted before any is
 * built: over 4,000,000 in all is refused (ST_EINVAL) without the build's
 * time and memory. Results in order. */
int st_net_simulate(const st_cluster *c, const st_flow *flows, size_t n_flows, double chunk_bytes,
                    st_flow_result *out, st_error *err);

#endif
