/* The collective model: hand-computed alpha-beta times, the identities a
 * collective model must keep (reduce-scatter + all-gather = all-reduce, the
 * bus factors, all-to-all scaling) and the simulation against both. */
#include "config.h"
#include "io/io.h"
#include "net/net.h"
#include "testutil.h"

#include <math.h>

static st_cluster load(const char *id)
{
    st_cluster c;
    st_error err;
    int rc = st_load_cluster(id, &c, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    return c;
}

static double est(const st_cluster *c, int n, int pn, st_coll coll, st_algo a, double bytes)
{
    st_net_group g;
    st_coll_est e;
    st_error err;
    assert_int_equal(st_net_group_init(c, n, pn, &g, &err), 0);
    int rc = st_coll_estimate(&g, coll, a, bytes, &e, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    return e.time_s;
}

/* Ring all-reduce of 1 GiB on one DGX A100, by hand: 2 (n-1)/n S / (300 GB/s
 * x 0.775) + 8.4 us + 14 steps x 3.4 us. */
static void test_ring_by_hand(void **state)
{
    (void)state;
    st_cluster c = load("ib-a100");
    double S = 1073741824.0;
    double want = 2.0 * 7 / 8 * S / (300e9 * 0.775) + 8.4e-6 + 14 * 3.4e-6;
    assert_true(rel_diff(est(&c, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, S), want) < 1e-9);
    /* two nodes, 16 GPUs: 8 rings leave each node through 8 NICs of 25 GB/s
     * x 0.96 = 192 GB/s < 232.5 GB/s NVLink; steps weigh 14 of 16 hops at
     * max(3.4, 6) us (NCCL's net overhead across nodes: 2 us on the DGX
     * A100's AMD hosts, three times on Simple) and 2 at 14 us */
    double rate = 8 * 25e9 * 0.96;
    want = 2.0 * 15 / 16 * S / rate + 8.4e-6 + 30 * (14 * 6e-6 + 2 * 14e-6) / 16;
    assert_true(rel_diff(est(&c, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, S), want) < 1e-9);
}

/* Bandwidth identities of ring collectives on large messages. */
static void test_identities(void **state)
{
    (void)state;
    st_cluster c = load("ib-h100");
    double S = 4.0 * 1073741824.0;
    for (int n = 2; n <= 8; n *= 2) {
        double ar = est(&c, n, n, ST_COLL_ALLREDUCE, ST_ALGO_RING, S);
        double rs = est(&c, n, n, ST_COLL_REDUCESCATTER, ST_ALGO_RING, S);
        double ag = est(&c, n, n, ST_COLL_ALLGATHER, ST_ALGO_RING, S);
        assert_true(fabs(rs / ar - 0.5) < 0.01);
        assert_true(rel_diff(rs + ag, ar) < 0.01);
        /* bus bandwidth -> the link's effective rate, 450 GB/s x 0.82 */
        st_net_group g;
        st_coll_est e;
        assert_int_equal(st_net_group_init(&c, n, n, &g, NULL), 0);
        assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLREDUCE, ST_ALGO_RING, S, &e, NULL), 0);
        assert_true(rel_diff(e.busbw, 450e9 * 0.82) < 0.01);
        assert_true(rel_diff(e.busbw / e.algbw, 2.0 * (n - 1) / n) < 1e-12);
    }
    assert_true(rel_diff(st_coll_bus_factor(ST_COLL_ALLREDUCE, 8), 1.75) < 1e-12);
    assert_true(rel_diff(st_coll_bus_factor(ST_COLL_ALLGATHER, 4), 0.75) < 1e-12);
    assert_true(st_coll_bus_factor(ST_COLL_ALLREDUCE, 1) == 0);
}

/* All-to-all: inside a node it is bandwidth bound on NVLink; across nodes
 * the off-node share (n - g)/n of each rank's buffer goes through its NIC. */
static void test_alltoall(void **state)
{
    (void)state;
    st_cluster c = load("ib-a100");
    double S = 1073741824.0;
    double t1 = est(&c, 8, 8, ST_COLL_ALLTOALL, ST_ALGO_AUTO, S);
    double t2 = est(&c, 8, 8, ST_COLL_ALLTOALL, ST_ALGO_AUTO, 2 * S);
    assert_true(fabs(t2 / t1 - 2) < 0.01);
    /* 32 GPUs on 4 nodes: 24/32 of S per rank over 24 GB/s per NIC */
    double want = 24.0 / 32 * S / (25e9 * 0.96);
    double got = est(&c, 32, 8, ST_COLL_ALLTOALL, ST_ALGO_AUTO, S);
    assert_true(got > want && rel_diff(got, want) < 0.02); /* + latency */
    /* doubling the nodes at a fixed per-rank buffer costs more off-node bytes */
    assert_true(est(&c, 64, 8, ST_COLL_ALLTOALL, ST_ALGO_AUTO, S) > got);
}

/* Algorithm choices follow the latency/bandwidth trade-off. */
static void test_algorithms(void **state)
{
    (void)state;
    st_cluster c = load("ib-h100");
    st_net_group g;
    st_coll_est e;
    st_error err;
    /* 128 GPUs, 4 KiB: tree's log-depth latency beats the ring's 254 steps */
    assert_int_equal(st_net_group_init(&c, 128, 8, &g, &err), 0);
    assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, 4096, &e, &err), 0);
    assert_int_equal(e.algo, ST_ALGO_TREE);
    /* hierarchical moves 1/g of the buffer across nodes: it wins where the
     * network is slow next to NVLink (VIDUR's 7.8 GB/s per GPU), and loses
     * on a full-rate rail fabric where rings use all NICs at once */
    st_cluster v = load("vidur-a100-dgx");
    assert_true(est(&v, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_HIER, 1e9) <
                est(&v, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, 1e9));
    assert_true(est(&c, 128, 8, ST_COLL_ALLREDUCE, ST_ALGO_HIER, 1e9) >
                est(&c, 128, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, 1e9));
    /* invalid combinations say why */
    assert_int_equal(st_net_group_init(&c, 6, 6, &g, &err), 0);
    assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLREDUCE, ST_ALGO_HD, 1e6, &e, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "power-of-two"));
    assert_int_equal(st_coll_estimate(&g, ST_COLL_SENDRECV, ST_ALGO_AUTO, 1e6, &e, &err), ST_EINVAL);
    assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLTOALL, ST_ALGO_RING, 1e6, &e, &err), ST_EINVAL);
    assert_int_equal(st_net_group_init(&c, 12, 8, &g, &err), ST_EINVAL);
    assert_int_equal(st_net_group_init(&c, 8 * 33, 8, &g, &err), ST_EINVAL); /* 33 nodes > 32 */
    assert_int_equal(st_net_group_init(&c, 8, 8, &g, &err), 0);
    assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLREDUCE, ST_ALGO_RING, NAN, &e, &err), ST_EINVAL);
}

static st_coll_est est_p(const st_cluster *c, int n, int pn, st_coll coll, st_algo a, st_proto p, double bytes)
{
    st_net_group g;
    st_coll_est e;
    st_error err;
    assert_int_equal(st_net_group_init(c, n, pn, &g, &err), 0);
    int rc = st_coll_estimate_proto(&g, coll, a, p, bytes, &e, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    return e;
}

/* NCCL's protocols by hand, with tuning.cc's constants. One DGX A100 (the
 * node of ib-a100), 8 GPUs, NVSwitch at 300 GB/s x 0.775:
 *   64 KiB: ring on LL, baseLat 6.6 us + 14 steps x 0.6 us, and 2 x 7/8 of
 *   the buffer at half the rate (116.25 GB/s) capped at NCCL's 87.7 GB/s
 *   for Ampere on one node;
 *   4 MiB on LL128: 14 us + 14 x 1.9 us, at 0.92 of the rate;
 *   1 GiB: Simple, the preset's figures (test_ring_by_hand). */
static void test_protocols(void **state)
{
    (void)state;
    st_cluster c = load("ib-a100");
    double S = 65536;
    st_coll_est e = est_p(&c, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, ST_PROTO_AUTO, S);
    assert_int_equal(e.algo, ST_ALGO_RING);
    assert_int_equal(e.proto, ST_PROTO_LL);
    assert_true(rel_diff(e.time_s, 6.6e-6 + 14 * 0.6e-6 + 2.0 * 7 / 8 * S / 87.7e9) < 1e-9);
    S = 4.0 * 1048576;
    e = est_p(&c, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_LL128, S);
    assert_true(rel_diff(e.time_s, 14e-6 + 14 * 1.9e-6 + 2.0 * 7 / 8 * S / (300e9 * 0.775 * 0.92)) < 1e-9);
    e = est_p(&c, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, ST_PROTO_AUTO, 1073741824.0);
    assert_int_equal(e.proto, ST_PROTO_SIMPLE);
    /* auto is the fastest of the three, each taken alone; all three win
     * somewhere between 1 KiB and 1 GiB */
    int won[ST_PROTO_COUNT] = {0};
    for (double b = 1024; b <= 1073741824.0; b *= 4) {
        st_coll_est a = est_p(&c, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, ST_PROTO_AUTO, b);
        double best = INFINITY;
        for (int q = ST_PROTO_LL; q <= ST_PROTO_SIMPLE; q++) {
            st_coll_est one = est_p(&c, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, (st_proto)q, b);
            best = one.time_s < best ? one.time_s : best;
        }
        assert_true(a.time_s == best);
        won[a.proto]++;
    }
    assert_true(won[ST_PROTO_LL] > 0 && won[ST_PROTO_LL128] > 0 && won[ST_PROTO_SIMPLE] > 0);
    /* the tree has NCCL's own latencies: 64 GPUs on 8 nodes, 1 MiB on
     * LL128, 14 us + 2 x (7 NVLink steps x 1.25 us + log2 8 network steps x
     * 8.5 us), the ring's bytes at 0.92 x 120/128 of min(NVLink 232.5, 8
     * NICs x 24 GB/s) */
    S = 1048576;
    e = est_p(&c, 64, 8, ST_COLL_ALLREDUCE, ST_ALGO_TREE, ST_PROTO_LL128, S);
    assert_true(rel_diff(e.time_s, 14e-6 + 2 * (7 * 1.25e-6 + 3 * 8.5e-6) +
                                        2.0 * 63 / 64 * S / (0.92 * 120.0 / 128 * 8 * 25e9 * 0.96)) < 1e-9);
    /* one GPU per node: NCCL charges the network's tree latency on LL128
     * (8.5 us a step, not the ring's 4.0): 16 nodes, reduce-scatter of
     * 16 MiB, 15 steps, one NIC at 25 GB/s x 0.96 x 0.92 */
    S = 16.0 * 1048576;
    e = est_p(&c, 16, 1, ST_COLL_REDUCESCATTER, ST_ALGO_RING, ST_PROTO_LL128, S);
    assert_true(rel_diff(e.time_s, 14e-6 + 15 * 8.5e-6 + 15.0 / 16 * S / (25e9 * 0.96 * 0.92)) < 1e-9);
    /* LL across 2 nodes of AMD hosts: NCCL's cap is 22.5 GB/s */
    st_net_group g;
    st_net_group_init(&c, 16, 8, &g, NULL);
    assert_true(rel_diff(g.ll_max_bw, 22.5e9) < 1e-12);
    /* point-to-point collectives stay on Simple; a PCIe node has no LL128 */
    st_error err;
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLTOALL, ST_ALGO_AUTO, ST_PROTO_LL, 1e6, &e, &err),
                     ST_EINVAL);
    assert_non_null(strstr(err.msg, "point-to-point"));
    assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLTOALL, ST_ALGO_AUTO, 1024, &e, &err), 0);
    assert_int_equal(e.proto, ST_PROTO_SIMPLE);
    st_cluster pc;
    assert_int_equal(st_load_cluster_or_node("rtx-4090-workstation", &pc, &err), 0);
    assert_int_equal(st_net_group_init(&pc, pc.node.gpus, 0, &g, &err), 0);
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, ST_PROTO_LL128, 1e6, &e, &err),
                     ST_EINVAL);
    assert_non_null(strstr(err.msg, "PCIe"));
    for (double b = 1024; b <= 1073741824.0; b *= 4) {
        assert_int_equal(st_coll_estimate(&g, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, b, &e, &err), 0);
        assert_int_not_equal(e.proto, ST_PROTO_LL128);
    }
    /* ASTRA-sim's configuration allows Simple alone (nccl_protocols) */
    st_cluster a;
    assert_int_equal(st_load_cluster_or_node("astra-hgx-h100", &a, &err), 0);
    e = est_p(&a, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, ST_PROTO_AUTO, 1024);
    assert_int_equal(e.proto, ST_PROTO_SIMPLE);
    /* names */
    st_proto p;
    assert_int_equal(st_proto_parse("ll128", &p), 0);
    assert_int_equal(p, ST_PROTO_LL128);
    assert_string_equal(st_proto_name(ST_PROTO_LL), "ll");
    assert_int_equal(st_proto_parse("LL128", &p), 0); /* any case, as NCCL_PROTO */
    assert_int_equal(p, ST_PROTO_LL128);
    assert_int_equal(st_proto_parse("ll64", &p), ST_EINVAL);
}

/* The simulation: one flow agrees with the model; flows sharing GPUs slow
 * each other down; flows on different nodes do not. */
static void test_simulation(void **state)
{
    (void)state;
    st_cluster c = load("ib-a100");
    double S = 256.0 * 1048576;
    st_error err;
    st_flow f[2] = {{ST_COLL_ALLREDUCE, ST_ALGO_RING, S, 0, 0, 1, 8, ST_PROTO_AUTO}, {ST_COLL_ALLREDUCE, ST_ALGO_RING, S, 0, 0, 1, 8, ST_PROTO_AUTO}};
    st_flow_result r[2];
    assert_int_equal(st_net_simulate(&c, f, 1, 0, r, &err), 0);
    double model = est(&c, 8, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, S);
    assert_true(rel_diff(r[0].time_s, model) < 0.10);
    /* the same GPUs: both finish at about twice the time */
    assert_int_equal(st_net_simulate(&c, f, 2, 0, r, &err), 0);
    double both = r[0].end_s > r[1].end_s ? r[0].end_s : r[1].end_s;
    assert_true(fabs(both / model - 2) < 0.2);
    /* node 1 for the second flow: no contention */
    f[1].first_rank = 8;
    assert_int_equal(st_net_simulate(&c, f, 2, 0, r, &err), 0);
    assert_true(rel_diff(r[1].time_s, r[0].time_s) < 1e-12);
    assert_true(rel_diff(r[0].time_s, model) < 0.10);
    /* every simulable algorithm of an 8-GPU all-reduce lands near the model */
    st_algo algos[] = {ST_ALGO_DIRECT, ST_ALGO_HD, ST_ALGO_HIER};
    for (size_t i = 0; i < 3; i++) {
        f[0].algo = algos[i];
        assert_int_equal(st_net_simulate(&c, f, 1, 0, r, &err), 0);
        assert_true(rel_diff(r[0].time_s, est(&c, 8, 8, ST_COLL_ALLREDUCE, algos[i], S)) < 0.15);
    }
    /* all-to-all across 2 nodes: NIC bound as the model says */
    st_flow a2a = {ST_COLL_ALLTOALL, ST_ALGO_AUTO, S, 0, 0, 1, 16, ST_PROTO_AUTO};
    assert_int_equal(st_net_simulate(&c, &a2a, 1, 0, r, &err), 0);
    assert_true(rel_diff(r[0].time_s, est(&c, 16, 8, ST_COLL_ALLTOALL, ST_ALGO_AUTO, S)) < 0.15);
    /* deterministic */
    st_flow_result again;
    assert_int_equal(st_net_simulate(&c, &a2a, 1, 0, &again, &err), 0);
    assert_true(again.time_s == r[0].time_s);
    /* outside the cluster */
    a2a.first_rank = 160 - 8;
    assert_int_equal(st_net_simulate(&c, &a2a, 1, 0, r, &err), ST_EINVAL);
}

/* NCCL tuning.cc: "Inter-node rings still have to launch nsteps * net
 * overhead": across nodes a ring's on-node steps cost at least the
 * network post's host cost, 2 us on AMD x86 hosts (the DGX A100's EPYC
 * 7742) and 1 us on Intel (the DGX H100's Xeon 8480C), three times that on
 * Simple. By hand for a 64 KiB Simple ring all-reduce over two DGX A100s
 * (16 GPUs, 8 a node): 2 (n - 1) = 30 steps, of which (n - k) / n = 14/16
 * are on-node, each max(link latency, 6 us) instead of the link latency.
 * One node, the tree and LL's smaller floor follow the same rule. */
static void test_net_overhead(void **state)
{
    (void)state;
    st_cluster a = load("ib-a100"), h = load("ib-h100");
    st_net_group g, v, z;
    st_error err;
    assert_int_equal(st_net_group_init(&a, 16, 8, &g, &err), 0);
    assert_true(g.net_overhead_s == 2e-6);
    st_net_group_proto(&g, ST_ALGO_RING, ST_PROTO_SIMPLE, &v);
    assert_true(v.lat_intra == fmax(g.lat_intra, 6e-6));
    st_net_group_proto(&g, ST_ALGO_RING, ST_PROTO_LL, &v);
    assert_true(v.lat_intra == fmax(g.lat_intra * 0.6 / 3.4, 2e-6));
    st_net_group_proto(&g, ST_ALGO_TREE, ST_PROTO_SIMPLE, &v);
    assert_true(v.lat_intra == g.lat_intra);
    /* the 64 KiB all-reduce, with and without the overhead */
    z = g;
    z.net_overhead_s = 0;
    st_coll_est e1, e0;
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_SIMPLE, 65536, &e1, &err), 0);
    assert_int_equal(st_coll_estimate_proto(&z, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_SIMPLE, 65536, &e0, &err), 0);
    double want = 30.0 * 14.0 / 16.0 * (fmax(g.lat_intra, 6e-6) - g.lat_intra);
    assert_true(want > 0);
    if (fabs((e1.time_s - e0.time_s) - want) > 1e-12)
        fail_msg("net overhead adds %.4g us, by hand %.4g us", (e1.time_s - e0.time_s) * 1e6, want * 1e6);
    /* Intel hosts: 1 us, 3 on Simple; one node: none */
    assert_int_equal(st_net_group_init(&h, 16, 8, &g, &err), 0);
    assert_true(g.net_overhead_s == 1e-6);
    st_net_group_proto(&g, ST_ALGO_RING, ST_PROTO_SIMPLE, &v);
    assert_true(v.lat_intra == fmax(g.lat_intra, 3e-6));
    assert_int_equal(st_net_group_init(&a, 8, 8, &g, &err), 0);
    assert_true(g.net_overhead_s == 0);
    st_net_group_proto(&g, ST_ALGO_RING, ST_PROTO_SIMPLE, &v);
    assert_true(v.lat_intra == g.lat_intra);
}

/* A node whose NICs share a narrower path (scaleout_bw_gbs): by hand, two
 * DGX A100s (8 NICs of 25 GB/s x 0.96) capped at 50 GB/s x 0.96 = 48 GB/s
 * carry a 16-GPU ring all-reduce at 48 GB/s instead of 8 x 24 = 192; the
 * latency terms are test_ring_by_hand's. A cap above the NICs' sum changes
 * nothing, to the bit. The simulation queues both flows of two groups that
 * share the nodes (on different GPUs and NICs) on the cap: each alone runs
 * near the model, together about twice as long; uncapped they do not meet. */
static void test_node_cap(void **state)
{
    (void)state;
    st_cluster c = load("ib-a100"), u = c;
    st_error err0;
    double S = 1073741824.0;
    double free_t = est(&c, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, S);
    c.node.scaleout_bw = 50e9;
    double want = 2.0 * 15 / 16 * S / (50e9 * 0.96) + 8.4e-6 + 30 * (14 * 6e-6 + 2 * 14e-6) / 16;
    double got = est(&c, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, S);
    if (rel_diff(got, want) > 1e-9)
        fail_msg("capped ring all-reduce %.6g s, by hand %.6g s", got, want);
    /* the tree, all-to-all and send/recv across nodes feel it too */
    assert_true(est(&c, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_TREE, S) >
                2 * est(&u, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_TREE, S));
    assert_true(est(&c, 16, 8, ST_COLL_ALLTOALL, ST_ALGO_AUTO, S) >
                2 * est(&u, 16, 8, ST_COLL_ALLTOALL, ST_ALGO_AUTO, S));
    /* under one NIC's 25 GB/s: caps a single pair's send/recv, at the
     * link's p2p efficiency, and nothing else changes */
    c.node.scaleout_bw = 20e9;
    double pe = c.net[0].p2p_efficiency;
    want = S / (20e9 * pe) - S / (25e9 * pe);
    got = est(&c, 2, 1, ST_COLL_SENDRECV, ST_ALGO_AUTO, S) - est(&u, 2, 1, ST_COLL_SENDRECV, ST_ALGO_AUTO, S);
    if (rel_diff(got, want) > 1e-6)
        fail_msg("capped send/recv adds %.6g s, by hand %.6g s", got, want);
    c.node.scaleout_bw = 8 * 25e9 + 1;
    assert_true(est(&c, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, S) == free_t);
    /* by hand at 50 GB/s x 0.96 = 48, what each algorithm's cross-node
     * bytes add over the uncapped 24 GB/s a GPU: halving-doubling's first
     * step of each pass (distance 8 >= 8 a node) moves S/2 per GPU, all 8
     * of a node at once, 6 GB/s each; hierarchical's two passes move
     * (1/2) S/8 per GPU at 6 GB/s; a direct broadcast's root alone sends
     * 8 S at its NIC's 24 GB/s, under the cap: no change */
    c.node.scaleout_bw = 50e9;
    struct { st_coll coll; st_algo a; double add; } rows[] = {
        {ST_COLL_ALLREDUCE, ST_ALGO_HD, 2 * (S / 2) * (1 / 6e9 - 1 / 24e9)},
        {ST_COLL_ALLREDUCE, ST_ALGO_HIER, 2 * 0.5 * (S / 8) * (1 / 6e9 - 1 / 24e9)},
        {ST_COLL_BROADCAST, ST_ALGO_DIRECT, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        st_net_group gc, gu;
        st_coll_est ec, eu;
        assert_int_equal(st_net_group_init(&c, 16, 8, &gc, &err0), 0);
        assert_int_equal(st_net_group_init(&u, 16, 8, &gu, &err0), 0);
        assert_int_equal(st_coll_estimate_proto(&gc, rows[i].coll, rows[i].a, ST_PROTO_SIMPLE, S, &ec, &err0), 0);
        assert_int_equal(st_coll_estimate_proto(&gu, rows[i].coll, rows[i].a, ST_PROTO_SIMPLE, S, &eu, &err0), 0);
        double add = ec.time_s - eu.time_s;
        if (fabs(add - rows[i].add) > 1e-9 * (rows[i].add + eu.time_s))
            fail_msg("%s %s: the cap adds %.6g s, by hand %.6g s", st_coll_name(rows[i].coll),
                     st_algo_name(rows[i].a), add, rows[i].add);
    }
    /* LL128 scales the cap as it scales the NICs (0.92): by hand the ring
     * all-reduce's bytes at 48 x 0.92 instead of 192 x 0.92 */
    {
        st_net_group gc, gu;
        st_coll_est ec, eu;
        assert_int_equal(st_net_group_init(&c, 16, 8, &gc, &err0), 0);
        assert_int_equal(st_net_group_init(&u, 16, 8, &gu, &err0), 0);
        assert_int_equal(st_coll_estimate_proto(&gc, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_LL128, S, &ec, &err0), 0);
        assert_int_equal(st_coll_estimate_proto(&gu, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_LL128, S, &eu, &err0), 0);
        want = 2.0 * 15 / 16 * S * (1 / (48e9 * 0.92) - 1 / (192e9 * 0.92));
        if (rel_diff(ec.time_s - eu.time_s, want) > 1e-9)
            fail_msg("LL128 under the cap adds %.6g s, by hand %.6g s", ec.time_s - eu.time_s, want);
    }
    /* simulated: one 16-GPU ring near the model */
    c.node.scaleout_bw = 50e9;
    st_error err;
    st_flow f[2] = {{ST_COLL_ALLREDUCE, ST_ALGO_RING, S / 4, 0, 0, 1, 16, ST_PROTO_SIMPLE},
                    {ST_COLL_ALLREDUCE, ST_ALGO_RING, S / 4, 0, 1, 2, 8, ST_PROTO_SIMPLE}};
    st_flow_result r[2];
    assert_int_equal(st_net_simulate(&c, f, 1, 0, r, &err), 0);
    double model = est(&c, 16, 8, ST_COLL_ALLREDUCE, ST_ALGO_RING, S / 4);
    if (rel_diff(r[0].time_s, model) > 0.10)
        fail_msg("simulated capped ring %.4g s, model %.4g s", r[0].time_s, model);
    /* two 8-GPU groups, 4 GPUs a node each, on disjoint GPUs and NICs */
    f[0] = f[1];
    f[0].first_rank = 0;
    assert_int_equal(st_net_simulate(&c, f, 1, 0, r, &err), 0);
    double alone = r[0].time_s;
    assert_int_equal(st_net_simulate(&c, f, 2, 0, r, &err), 0);
    double both = fmax(r[0].end_s, r[1].end_s);
    if (fabs(both / alone - 2) > 0.25)
        fail_msg("two groups on one capped node pair: %.4g s against %.4g s alone (want about 2x)", both, alone);
    assert_int_equal(st_net_simulate(&u, f, 2, 0, r, &err), 0);
    double free_both = fmax(r[0].end_s, r[1].end_s);
    assert_int_equal(st_net_simulate(&u, f, 1, 0, r, &err), 0);
    assert_true(rel_diff(free_both, r[0].time_s) < 1e-12);
    /* the cap is a budget in time: a send/recv pair under a 20 GB/s cap,
     * and a second pair on the same nodes after the first has finished,
     * each take what one alone takes; at once they share it (2x) */
    c.node.scaleout_bw = 20e9;
    st_flow p[2] = {{ST_COLL_SENDRECV, ST_ALGO_AUTO, S / 8, 0, 0, 8, 2, ST_PROTO_AUTO},
                    {ST_COLL_SENDRECV, ST_ALGO_AUTO, S / 8, 0, 1, 8, 2, ST_PROTO_AUTO}};
    assert_int_equal(st_net_simulate(&c, p, 1, 0, r, &err), 0);
    alone = r[0].time_s;
    p[1].start_s = 10 * alone;
    assert_int_equal(st_net_simulate(&c, p, 2, 0, r, &err), 0);
    assert_true(rel_diff(r[0].time_s, alone) < 1e-9 && rel_diff(r[1].time_s, alone) < 1e-9);
    p[1].start_s = 0;
    assert_int_equal(st_net_simulate(&c, p, 2, 0, r, &err), 0);
    both = fmax(r[0].end_s, r[1].end_s);
    if (fabs(both / alone - 2) > 0.1)
        fail_msg("two send/recvs at once under the cap: %.4g s against %.4g s alone", both, alone);
    /* a direct broadcast: the root alone sends off its node, under the cap */
    st_flow bc = {ST_COLL_BROADCAST, ST_ALGO_DIRECT, S / 8, 0, 0, 1, 16, ST_PROTO_SIMPLE};
    c.node.scaleout_bw = 50e9;
    assert_int_equal(st_net_simulate(&c, &bc, 1, 0, r, &err), 0);
    double capped = r[0].time_s;
    assert_int_equal(st_net_simulate(&u, &bc, 1, 0, r, &err), 0);
    if (rel_diff(capped, r[0].time_s) > 1e-12)
        fail_msg("direct broadcast under a cap above the root's NIC: %.6g s, uncapped %.6g s", capped, r[0].time_s);
}

/* A node of `gpus` GPUs on a ring or torus of the given shape, bw bytes/s
 * per GPU per direction (bw / (2 x dims) a link), 1 us a hop, efficiency 1. */
static st_cluster hop_node(st_topology t, int dims, const int *shape, int gpus, double bw)
{
    st_cluster c = load("ib-h100");
    c.node.gpus = gpus;
    c.node.intra.topology = t;
    c.node.intra.hop_dims = dims;
    for (int d = 0; d < 3; d++)
        c.node.intra.shape[d] = d < dims ? shape[d] : 0;
    c.node.intra.bw = bw;
    c.node.intra.latency_s = 1e-6;
    c.node.intra.efficiency = c.node.intra.p2p_efficiency = 1;
    return c;
}

static st_coll_est hop_est(const st_cluster *c, int n, int stride, st_coll coll, st_algo a, double S)
{
    st_net_group g;
    st_coll_est e;
    st_error err;
    int pn = n < c->node.gpus ? n : c->node.gpus;
    assert_int_equal(st_net_group_place(c, n, pn, stride, &g, &err), 0);
    int rc = st_coll_estimate_proto(&g, coll, a, ST_PROTO_SIMPLE, S, &e, &err);
    if (rc)
        fail_msg("%s", err.msg);
    return e;
}

/* Multi-hop fabrics against hand-routed link loads (net.h). */
static void test_multihop(void **state)
{
    (void)state;
    double S = 1e9;
    int r4[] = {4}, t44[] = {4, 4}, t444[] = {4, 4, 4};
    /* a ring of 4 at 200 GB/s a GPU (2 links of 100): the ring both ways
     * round loads each link with half a block, so it runs at the GPU's
     * 200 GB/s like a switch: 2 x 3/4 x S / 200 GB/s */
    st_cluster ring = hop_node(ST_TOPO_RING, 1, r4, 4, 200e9);
    st_coll_est e = hop_est(&ring, 4, 1, ST_COLL_ALLREDUCE, ST_ALGO_RING, S);
    assert_true(rel_diff(e.transfer_s, 2 * 0.75 * S / 200e9) < 1e-9);
    /* 6 steps of one hop, and the base */
    assert_true(rel_diff(e.latency_s, 6 * 1e-6 + 8.4e-6) < 1e-9);
    /* all-to-all: GPU 0 sends S/4 to 1 (one hop up), 3 (one down) and 2
     * (two hops, half each way): 2 hop-units on the up links from each of 4
     * GPUs over 4 up links -> 2 x S/4 over 100 GB/s, where a switch
     * takes 3 x S/4 over 200 */
    e = hop_est(&ring, 4, 1, ST_COLL_ALLTOALL, ST_ALGO_DIRECT, S);
    assert_true(rel_diff(e.transfer_s, 2 * (S / 4) / 100e9) < 1e-9);
    /* halving-doubling: distance 2 (half a block each way over 2 hops,
     * two pairs crossing each link: a whole half-buffer per link), then
     * distance 1 (a quarter per link): (S/2 + S/4) / 100 GB/s a pass */
    e = hop_est(&ring, 4, 1, ST_COLL_ALLREDUCE, ST_ALGO_HD, S);
    assert_true(rel_diff(e.transfer_s, 2 * 0.75 * S / 100e9) < 1e-9);

    /* a 4x4 torus at 400 GB/s a GPU (4 links of 100): the rank-order ring
     * uses the X links and a few Y links, each at half a block: 200 GB/s */
    st_cluster t2 = hop_node(ST_TOPO_TORUS2D, 2, t44, 16, 400e9);
    e = hop_est(&t2, 16, 1, ST_COLL_ALLREDUCE, ST_ALGO_RING, S);
    assert_true(rel_diff(e.transfer_s, 2 * 15.0 / 16 * S / 200e9) < 1e-9);
    /* the dimension-wise algorithm keeps all 4 links busy: a ring at the
     * GPU's whole 400 GB/s, 2 x 15/16 x S / 400 GB/s, in (3 + 3) x 2 steps */
    e = hop_est(&t2, 16, 1, ST_COLL_ALLREDUCE, ST_ALGO_HIER, S);
    assert_true(rel_diff(e.transfer_s, 2 * 15.0 / 16 * S / 400e9) < 1e-9);
    assert_int_equal(e.steps, 12);
    assert_int_equal(hop_est(&t2, 16, 1, ST_COLL_ALLREDUCE, ST_ALGO_AUTO, S).algo, ST_ALGO_HIER);
    /* a row (4 GPUs in a row) and a column (4 GPUs 4 apart) are physical
     * rings of 2 links each: 2 x 3/4 x S / 200 GB/s either way */
    assert_true(rel_diff(hop_est(&t2, 4, 1, ST_COLL_ALLREDUCE, ST_ALGO_RING, S).transfer_s, 1.5 * S / 200e9) < 1e-9);
    assert_true(rel_diff(hop_est(&t2, 4, 4, ST_COLL_ALLREDUCE, ST_ALGO_RING, S).transfer_s, 1.5 * S / 200e9) < 1e-9);
    /* all-to-all on the whole torus: GPU 0's routes put 4 x (1 + 2 x 1/2)
     * hop-units on the X-up links, over 16 X-up links from 16 GPUs: each
     * carries 8 messages of S/16 */
    e = hop_est(&t2, 16, 1, ST_COLL_ALLTOALL, ST_ALGO_DIRECT, S);
    assert_true(rel_diff(e.transfer_s, 8 * (S / 16) / 100e9) < 1e-9);

    /* a 4x4x4 torus at 600 GB/s (6 links of 100): the dimension-wise
     * algorithm at the GPU's whole rate; a 4x4 plane of it at 4 links' */
    st_cluster t3 = hop_node(ST_TOPO_TORUS3D, 3, t444, 64, 600e9);
    e = hop_est(&t3, 64, 1, ST_COLL_ALLREDUCE, ST_ALGO_HIER, S);
    assert_true(rel_diff(e.transfer_s, 2 * 63.0 / 64 * S / 600e9) < 1e-9);
    e = hop_est(&t3, 16, 1, ST_COLL_ALLREDUCE, ST_ALGO_HIER, S);
    assert_true(rel_diff(e.transfer_s, 2 * 15.0 / 16 * S / 400e9) < 1e-9);

    /* LL's bandwidth cap meets every algorithm on the fabric alike: on a
     * ring the dimension-wise algorithm is the ring, to the bit */
    st_net_group g;
    st_coll_est a, b;
    st_error e0;
    assert_int_equal(st_net_group_init(&ring, 4, 4, &g, &e0), 0);
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_LL, 2097152, &a, &e0), 0);
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLREDUCE, ST_ALGO_HIER, ST_PROTO_LL, 2097152, &b, &e0), 0);
    assert_true(rel_diff(a.time_s, b.time_s) < 1e-12);
    /* a binomial broadcast on a ring of 8 (400 GB/s a GPU, links of 200):
     * 0 -> 4 half each way over 4 hops, 0 -> 2 and 4 -> 6, then 0 -> 1 ...
     * 6 -> 7 load link 0-up with S/2 + S + S: 2.5 S / 200 GB/s */
    int r8[] = {8}, r16[] = {16};
    st_cluster ring8 = hop_node(ST_TOPO_RING, 1, r8, 8, 400e9);
    e = hop_est(&ring8, 8, 1, ST_COLL_BROADCAST, ST_ALGO_HD, S);
    assert_true(rel_diff(e.transfer_s, 2.5 * S / 200e9) < 1e-9);
    /* 8 GPUs of a ring of 16: the rank-order ring's routes are 1 hop but
     * 7 -> 0 (7 hops back): a step's latency is the mean, 14 / 8 hops */
    st_cluster ring16 = hop_node(ST_TOPO_RING, 1, r16, 16, 400e9);
    e = hop_est(&ring16, 8, 1, ST_COLL_ALLREDUCE, ST_ALGO_RING, S);
    assert_true(rel_diff(e.latency_s, 14 * (14.0 / 8) * 1e-6 + 8.4e-6) < 1e-9);
    /* direct: each of the 3 messages a step's latency, the 2-hop route
     * one hop more */
    e = hop_est(&ring, 4, 1, ST_COLL_ALLTOALL, ST_ALGO_DIRECT, S);
    assert_true(rel_diff(e.latency_s, 4 * 1e-6 + 8.4e-6) < 1e-9);

    /* the simulation routes each chunk: the ring and all-to-all agree with
     * the model's link loads, and so does halving-doubling, whose steps
     * the simulation pipelines chunk by chunk over different links */
    st_flow f = {ST_COLL_ALLREDUCE, ST_ALGO_RING, S, 0, 0, 1, 4, ST_PROTO_SIMPLE};
    st_flow_result r;
    st_error err;
    assert_int_equal(st_net_simulate(&ring, &f, 1, 0, &r, &err), 0);
    assert_true(rel_diff(r.time_s, hop_est(&ring, 4, 1, ST_COLL_ALLREDUCE, ST_ALGO_RING, S).time_s) < 0.01);
    f = (st_flow){ST_COLL_ALLTOALL, ST_ALGO_DIRECT, S, 0, 0, 1, 16, ST_PROTO_SIMPLE};
    assert_int_equal(st_net_simulate(&t2, &f, 1, 0, &r, &err), 0);
    assert_true(rel_diff(r.time_s, hop_est(&t2, 16, 1, ST_COLL_ALLTOALL, ST_ALGO_DIRECT, S).time_s) < 0.01);
    f = (st_flow){ST_COLL_ALLREDUCE, ST_ALGO_HD, S, 0, 0, 1, 16, ST_PROTO_SIMPLE};
    assert_int_equal(st_net_simulate(&t2, &f, 1, 0, &r, &err), 0);
    assert_true(rel_diff(r.time_s, hop_est(&t2, 16, 1, ST_COLL_ALLREDUCE, ST_ALGO_HD, S).time_s) < 0.01);
    /* a row's ring and a column's ring share no link: together as fast as
     * alone; two rows' rings on one row's links take twice as long */
    st_flow two[2] = {{ST_COLL_ALLREDUCE, ST_ALGO_RING, S, 0, 0, 1, 4, ST_PROTO_SIMPLE},
                      {ST_COLL_ALLREDUCE, ST_ALGO_RING, S, 0, 0, 4, 4, ST_PROTO_SIMPLE}};
    st_flow_result rr[2];
    assert_int_equal(st_net_simulate(&t2, two, 1, 0, rr, &err), 0);
    double alone = rr[0].time_s;
    assert_int_equal(st_net_simulate(&t2, two, 2, 0, rr, &err), 0);
    assert_true(rel_diff(rr[0].time_s, alone) < 0.01);
    two[1] = two[0];
    assert_int_equal(st_net_simulate(&t2, two, 2, 0, rr, &err), 0);
    assert_true(rr[1].end_s > 1.9 * alone);
    /* the dimension-wise passes have no simulation: refused, not run flat */
    f = (st_flow){ST_COLL_ALLREDUCE, ST_ALGO_HIER, S, 0, 0, 1, 16, ST_PROTO_SIMPLE};
    assert_int_equal(st_net_simulate(&t2, &f, 1, 0, &r, &err), ST_EINVAL);
}

/* Two scale-out levels: leaves of 2 DGX H100-like nodes on 50 GB/s rails
 * (efficiency 1), a 4:1 fat-tree spine of 50 GB/s per NIC above them. */
static st_cluster two_level(int levels)
{
    st_cluster c = load("ib-h100");
    c.nodes = 8;
    c.net[0].efficiency = c.net[0].p2p_efficiency = 1;
    c.net[0].latency_s = 5e-6;
    c.net[0].reach = levels > 1 ? 2 : 8;
    c.n_dims = levels;
    if (levels > 1) {
        c.net[1] = c.net[0];
        c.net[1].topology = ST_TOPO_FAT_TREE;
        c.net[1].oversubscription = 4;
        c.net[1].latency_s = 10e-6;
        c.net[1].reach = 8;
    }
    return c;
}

static void test_levels(void **state)
{
    (void)state;
    double S = 1e9;
    st_cluster one = two_level(1), two = two_level(2);
    /* inside one leaf the spine is not crossed: the same estimate */
    for (int a = ST_ALGO_RING; a <= ST_ALGO_HIER; a++)
        assert_true(rel_diff(est(&one, 16, 8, ST_COLL_ALLREDUCE, (st_algo)a, S),
                             est(&two, 16, 8, ST_COLL_ALLREDUCE, (st_algo)a, S)) < 1e-12);
    /* 64 GPUs over 4 leaves: 8 rings leave each leaf once each; the
     * leaf's share of the spine is 50 / 4 GB/s x 8 NICs x 2 nodes = 200
     * GB/s, under 8 NICs' 400 and NVLink's 369: 2 x 63/64 x S / 200 GB/s */
    st_net_group g;
    st_coll_est e;
    st_error err;
    assert_int_equal(st_net_group_init(&two, 64, 8, &g, &err), 0);
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_SIMPLE, S, &e, &err), 0);
    assert_true(rel_diff(e.transfer_s, 2 * 63.0 / 64 * S / 200e9) < 1e-9);
    /* all-to-all: each GPU sends 48 of its 64 shares past its leaf at a
     * GPU's share of the oversubscribed spine, 12.5 GB/s (the 56 off-node
     * shares at 50 GB/s take less) */
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLTOALL, ST_ALGO_DIRECT, ST_PROTO_SIMPLE, S, &e, &err), 0);
    assert_true(rel_diff(e.transfer_s, 48 * (S / 64) / 12.5e9) < 1e-9);
    /* the ring's 56 NVLink steps, 4 hops inside leaves (5 us) and 4
     * between them (10 us) per pass of 63 steps over 64 hops */
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_SIMPLE, S, &e, &err), 0);
    double hop = (56 * one.node.intra.latency_s + 4 * 5e-6 + 4 * 10e-6) / 64;
    assert_true(rel_diff(e.latency_s, 126 * hop + one.node.coll_base_s) < 1e-9);
    /* the simulation queues the leaves' uplinks: where they bind, its ring
     * takes the model's bandwidth time (within 2%), twice the one-level
     * fabric's (there NVLink and the NICs bind, at 400 GB/s in the
     * simulation, whose rings split a GPU's NVLink sends 7 to 1) */
    st_flow f = {ST_COLL_ALLREDUCE, ST_ALGO_RING, S, 0, 0, 1, 64, ST_PROTO_SIMPLE};
    st_flow_result r1, r2;
    assert_int_equal(st_net_simulate(&one, &f, 1, 0, &r1, &err), 0);
    assert_int_equal(st_net_simulate(&two, &f, 1, 0, &r2, &err), 0);
    if (rel_diff(r2.time_s, 2 * 63.0 / 64 * S / 200e9) > 0.02 || r2.time_s < 1.9 * r1.time_s)
        fail_msg("spine: simulated %.4g s, one level %.4g s, model's bandwidth time %.4g s", r2.time_s, r1.time_s,
                 2 * 63.0 / 64 * S / 200e9);
    /* one GPU a node: the stride places its nodes (8 GPUs apart: nodes 0
     * and 1, one leaf; 16 apart: nodes 0 and 2, two leaves) */
    assert_int_equal(st_net_group_place(&two, 2, 1, 8, &g, &err), 0);
    assert_int_equal(g.lv_dom[0], 1); /* nodes 0 and 1: one leaf */
    assert_int_equal(st_net_group_place(&two, 2, 1, 16, &g, &err), 0);
    assert_int_equal(g.lv_dom[0], 2); /* nodes 0 and 2: two leaves */
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_SENDRECV, ST_ALGO_DIRECT, ST_PROTO_SIMPLE, S, &e, &err), 0);
    /* send/recv across the spine at a GPU's share of it, 50 / 4 GB/s x 8 NICs / 8 GPUs */
    assert_true(rel_diff(e.transfer_s, S / 12.5e9) < 1e-9);
    /* in a job of 64 GPUs the pipeline's pairs 8 GPUs apart sit at every
     * offset: nodes 1 and 2 are in two leaves, so the pair crosses */
    assert_int_equal(st_net_group_place_job(&two, 2, 1, 8, 64, 8, &g, &err), 0);
    assert_int_equal(g.lv_dom[0], 2);
    /* a pipeline of 2 stages on nodes 0 and 1 (one leaf): no hop leaves the
     * job to pair the last stage with a node past it */
    assert_int_equal(st_net_group_place_job(&two, 2, 1, 8, 16, 2, &g, &err), 0);
    assert_int_equal(g.lv_dom[0], 1);
    /* context-parallel rings of 2 nodes ({0,1}, {2,3}: each one leaf): the
     * pair between two rings is no hop */
    assert_int_equal(st_net_group_place_job(&two, 2, 1, 8, 32, -2, &g, &err), 0);
    assert_int_equal(g.lv_dom[0], 1);
    /* stages of 3 nodes under leaves of 4: pair (0, 3) stays in a leaf, but
     * (1, 4) and (2, 5), the first block's other copies, cross */
    st_cluster l4 = two;
    l4.net[0].reach = 4;
    assert_int_equal(st_net_group_place_job(&l4, 2, 1, 24, 48, 2, &g, &err), 0);
    assert_int_equal(g.lv_dom[0], 2);
    /* a group of 3 nodes (24 GPUs; nodes 0-2) has one node alone in the
     * second leaf: that node's share, 50 / 4 x 8 NICs x 1 node = 100 GB/s,
     * paces the ring */
    assert_int_equal(st_net_group_init(&two, 24, 8, &g, &err), 0);
    assert_int_equal(g.lv_span[0], 1);
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_ALLREDUCE, ST_ALGO_RING, ST_PROTO_SIMPLE, S, &e, &err), 0);
    assert_true(rel_diff(e.transfer_s, 2 * 23.0 / 24 * S / 100e9) < 1e-9);
    /* a non-blocking level above never makes anything faster: the leaves'
     * 4:1 uplinks still bind halving-doubling, whose partners also cross
     * the top level (two_level's spine split in two, joined by a switch) */
    st_cluster three = two;
    three.n_dims = 3;
    three.net[1].reach = 4;
    three.net[2] = three.net[1];
    three.net[2].topology = ST_TOPO_SWITCH;
    three.net[2].oversubscription = 1;
    three.net[2].reach = 8;
    for (int c = ST_COLL_ALLREDUCE; c <= ST_COLL_BROADCAST; c++) {
        if (c == ST_COLL_ALLTOALL)
            continue;
        double t2 = est(&two, 64, 8, (st_coll)c, ST_ALGO_HD, S), t3 = est(&three, 64, 8, (st_coll)c, ST_ALGO_HD, S);
        if (t3 < t2 * (1 - 1e-9))
            fail_msg("%s halving-doubling: %.4g s under a non-blocking top level, %.4g s without it", st_coll_name(c), t3,
                     t2);
    }
    /* leaves of 3 nodes: halving-doubling's partners straddle them unevenly;
     * the model counts each step's senders per leaf as the simulation
     * queues them (within 10%) */
    st_cluster odd = two;
    odd.nodes = 12;
    odd.net[0].reach = 3;
    odd.net[1].reach = 12;
    f = (st_flow){ST_COLL_ALLGATHER, ST_ALGO_HD, S, 0, 0, 1, 64, ST_PROTO_SIMPLE};
    assert_int_equal(st_net_simulate(&odd, &f, 1, 0, &r2, &err), 0);
    double m = est(&odd, 64, 8, ST_COLL_ALLGATHER, ST_ALGO_HD, S);
    if (rel_diff(r2.time_s, m) > 0.1)
        fail_msg("halving-doubling over 3-node leaves: model %.4g s, simulated %.4g s", m, r2.time_s);
    /* a direct broadcast: the root alone sends past its leaf, at the
     * group's share of the spine (the simulation within 5%) */
    f = (st_flow){ST_COLL_BROADCAST, ST_ALGO_DIRECT, S, 0, 0, 8, 8, ST_PROTO_SIMPLE};
    assert_int_equal(st_net_simulate(&two, &f, 1, 0, &r2, &err), 0);
    assert_int_equal(st_net_group_place(&two, 8, 1, 8, &g, &err), 0);
    assert_int_equal(st_coll_estimate_proto(&g, ST_COLL_BROADCAST, ST_ALGO_DIRECT, ST_PROTO_SIMPLE, S, &e, &err), 0);
    if (rel_diff(r2.time_s, e.time_s) > 0.05)
        fail_msg("direct broadcast past the leaf: model %.4g s, simulated %.4g s", e.time_s, r2.time_s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_by_hand), cmocka_unit_test(test_identities),
        cmocka_unit_test(test_alltoall),     cmocka_unit_test(test_algorithms), cmocka_unit_test(test_protocols),
        cmocka_unit_test(test_simulation),
        cmocka_unit_test(test_net_overhead), cmocka_unit_test(test_node_cap),
        cmocka_unit_test(test_multihop), cmocka_unit_test(test_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
