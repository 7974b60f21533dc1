/* Chunk-level discrete-event simulation of collectives sharing a cluster's
 * links (see net.h). Each collective becomes a DAG of chunk transfers; a
 * transfer is ready when the transfers it waits on have arrived, takes its
 * source's out-port and its destination's in-port for bytes/rate (first
 * come, first served, ties broken by creation order so results do not
 * depend on anything but the input), and arrives one link latency later. */
#include "config.h"
#include "net/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRANSFERS 4000000
#define MAX_CHUNKS 16
/* NCCL's buffer slots per channel and peer (NCCL_STEPS in its device
 * headers): how far a sender may run ahead of its receiver's forwarding */
#define NCCL_STEPS 8

typedef struct xfer {
    int src, dst;     /* global GPU ranks */
    int flow;
    int waits;        /* transfers still to arrive before this one is ready */
    int join;         /* a zero-time join point: no ports, no latency */
    double bytes;
    double ready;
    int first_dep, n_dep; /* dependents, in the CSR array */
} xfer;

typedef struct dag {
    xfer *x;
    size_t n, cap;
    struct edge {
        int from, to; /* "to waits on from" */
    } *edges;
    size_t n_edges, cap_edges;
    int *deps;                /* CSR of dependents */
} dag;

typedef struct sim {
    const st_cluster *c;
    st_net_group g;       /* rates and latencies (per flow group shape) */
    dag d;
    int failed;
    int counting;         /* first pass: count transfers, build nothing */
    int chunks;           /* of the flow being generated (for the message) */
    st_error *err;
} sim;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 1024;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * size);
    if (!q)
        return ST_ENOMEM;
    *p = q;
    *cap = nc;
    return 0;
}

/* Add a transfer; returns its index or -1 (sim failed). */
static int add_x(sim *s, int flow, int src, int dst, double bytes, double ready)
{
    if (s->failed)
        return -1;
    if (s->d.n >= MAX_TRANSFERS) {
        char fewer[128] = "";
        if (s->chunks > 1)
            snprintf(fewer, sizeof fewer, "fewer chunks per step (a larger --chunk; each step is cut into %d now), ",
                     s->chunks);
        st_error_set(s->err, ST_EINVAL, "simulation too large: over %d chunk transfers; use %san algorithm "
                     "with fewer steps (halving_doubling, hierarchical), fewer GPUs, or the analytical model",
                     MAX_TRANSFERS, fewer);
        s->failed = 1;
        return -1;
    }
    if (s->counting)
        return (int)s->d.n++;
    if (grow((void **)&s->d.x, &s->d.cap, s->d.n + 1, sizeof(xfer))) {
        st_error_set(s->err, ST_ENOMEM, "out of memory in the network simulation");
        s->failed = 1;
        return -1;
    }
    xfer *x = &s->d.x[s->d.n];
    memset(x, 0, sizeof *x);
    x->src = src, x->dst = dst, x->flow = flow, x->bytes = bytes, x->ready = ready;
    return (int)s->d.n++;
}

static int add_join(sim *s, int flow, double ready)
{
    int x = add_x(s, flow, 0, 0, 0, ready);
    if (x >= 0 && !s->counting)
        s->d.x[x].join = 1;
    return x;
}

/* `to` waits for `from` to arrive. */
static void dep(sim *s, int from, int to)
{
    if (s->failed || s->counting || from < 0 || to < 0)
        return;
    if (grow((void **)&s->d.edges, &s->d.cap_edges, s->d.n_edges + 1, sizeof *s->d.edges)) {
        st_error_set(s->err, ST_ENOMEM, "out of memory in the network simulation");
        s->failed = 1;
        return;
    }
    s->d.edges[s->d.n_edges++] = (struct edge){from, to};
    s->d.x[to].waits++;
}

/* ---- generators: one per algorithm ------------------------------------------ */
typedef struct gen {
    sim *s;
    int flow;
    const int *rank; /* group index -> global GPU */
    int n, per_node, nodes, chunks;
    double t0;
} gen;

/* A ring pass over `order` (m members) with T steps moving `block` bytes
 * per step per member, in `chunks` pipelined chunks. in[i*chunks+c] holds
 * the transfer member i waits on before its first step (or -1); on return
 * out[i*chunks+c] holds the last transfer into member i. */
static void ring_pass(gen *q, const int *order, int m, int T, double block, const int *in, int *out)
{
    int C = q->chunks;
    int *prev = malloc((size_t)m * C * sizeof(int)), *cur = malloc((size_t)m * C * sizeof(int));
    if (!prev || !cur) {
        free(prev), free(cur);
        st_error_set(q->s->err, ST_ENOMEM, "out of memory in the network simulation");
        q->s->failed = 1;
        return;
    }
    for (int i = 0; i < m * C; i++)
        prev[i] = in ? in[i] : -1; /* prev[i]: last arrival into member i */
    for (int t = 0; t < T && !q->s->failed; t++) {
        for (int i = 0; i < m; i++)
            for (int c = 0; c < C; c++) {
                int j = (i + 1) % m;
                int x = add_x(q->s, q->flow, order[i], order[j], block / C, q->t0);
                dep(q->s, prev[i * C + c], x);
                cur[j * C + c] = x;
            }
        memcpy(prev, cur, (size_t)m * C * sizeof(int));
    }
    if (out)
        memcpy(out, prev, (size_t)m * C * sizeof(int));
    free(prev), free(cur);
}

/* NCCL-style rings: R rings, ring r enters each node at local GPU r, so
 * each ring leaves a node through a different GPU and NIC. */
static void gen_ring(gen *q, st_coll c, double S)
{
    int rings = 1, g = q->per_node;
    if (q->nodes > 1) {
        int nics = q->s->g.nics_per_node;
        rings = g < nics ? g : nics;
    }
    int *order = malloc((size_t)q->n * sizeof(int));
    if (!order) {
        st_error_set(q->s->err, ST_ENOMEM, "out of memory in the network simulation");
        q->s->failed = 1;
        return;
    }
    /* on a ring or torus node the rings run both ways round, half the
     * data each, as the model's ring does (net.h) */
    int ways = q->s->g.hop_dims && g > 1 ? 2 : 1;
    for (int r = 0; r < rings * ways; r++) {
        for (int a = 0; a < q->nodes; a++)
            for (int l = 0; l < g; l++)
                order[a * g + l] = q->rank[a * g + (l + r / ways) % g];
        if (r % ways) /* the other way round */
            for (int i = 0, j = q->n - 1; i < j; i++, j--) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        if (c == ST_COLL_BROADCAST) {
            /* a pipelined chain down the ring from the root (member 0),
             * under NCCL's flow control: a GPU holds at most NCCL_STEPS
             * chunks its successor has not forwarded yet, so chunk ch
             * leaves only once chunk ch - NCCL_STEPS has left the next GPU
             * (without it the root emptied its whole share into the first
             * link ahead of every other ring's traffic there, and a
             * two-node broadcast took 1.6x its bandwidth bound) */
            int p0 = 0, hops = q->n - 1;
            for (int i = 0; i < q->n; i++)
                if (order[i] == q->rank[0])
                    p0 = i;
            int *row = malloc((size_t)(NCCL_STEPS + 1) * (size_t)hops * sizeof(int));
            if (!row) {
                st_error_set(q->s->err, ST_ENOMEM, "out of memory in the network simulation");
                q->s->failed = 1;
                break;
            }
            for (int ch = 0; ch < q->chunks; ch++) {
                int *cur = &row[(size_t)(ch % (NCCL_STEPS + 1)) * hops];
                const int *old = ch >= NCCL_STEPS ? &row[(size_t)((ch - NCCL_STEPS) % (NCCL_STEPS + 1)) * hops] : NULL;
                int prev = -1;
                for (int i = 0; i < hops; i++) {
                    int x = add_x(q->s, q->flow, order[(p0 + i) % q->n], order[(p0 + i + 1) % q->n],
                                  S / rings / ways / q->chunks, q->t0);
                    dep(q->s, prev, x);
                    if (old && i + 1 < hops)
                        dep(q->s, old[i + 1], x);
                    cur[i] = prev = x;
                }
            }
            free(row);
        } else {
            int T = c == ST_COLL_ALLREDUCE ? 2 * (q->n - 1) : q->n - 1;
            ring_pass(q, order, q->n, T, S / rings / ways / q->n, NULL, NULL);
        }
    }
    free(order);
}

/* Every rank sends per_peer bytes to every other, peers staggered as NCCL's
 * p2p schedule does. join (may be NULL): per rank, a transfer the rank's
 * sends wait on. into (may be NULL): per rank, a join that waits for
 * everything this phase sends to the rank. */
static void gen_direct_phase(gen *q, double per_peer, const int *join, int *into)
{
    int C = q->chunks, n = q->n;
    if (into)
        for (int j = 0; j < n; j++)
            into[j] = add_join(q->s, q->flow, q->t0);
    /* round k: every rank i sends to i + k, a permutation, so the rounds
     * keep every port busy (NCCL's p2p schedule does the same) */
    for (int c = 0; c < C; c++)
        for (int k = 1; k < n; k++)
            for (int i = 0; i < n; i++) {
                int j = (i + k) % n;
                int x = add_x(q->s, q->flow, q->rank[i], q->rank[j], per_peer / C, q->t0);
                if (join)
                    dep(q->s, join[i], x);
                if (into)
                    dep(q->s, x, into[j]);
            }
}

static void gen_direct(gen *q, st_coll c, double S)
{
    if (c == ST_COLL_SENDRECV) {
        for (int ch = 0; ch < q->chunks; ch++)
            add_x(q->s, q->flow, q->rank[0], q->rank[1], S / q->chunks, q->t0);
        return;
    }
    if (c == ST_COLL_BROADCAST) {
        for (int j = 1; j < q->n; j++)
            for (int ch = 0; ch < q->chunks; ch++)
                add_x(q->s, q->flow, q->rank[0], q->rank[j], S / q->chunks, q->t0);
        return;
    }
    if (c != ST_COLL_ALLREDUCE) {
        gen_direct_phase(q, S / q->n, NULL, NULL);
        return;
    }
    int *mid = malloc((size_t)q->n * sizeof(int));
    if (!mid) {
        st_error_set(q->s->err, ST_ENOMEM, "out of memory in the network simulation");
        q->s->failed = 1;
        return;
    }
    gen_direct_phase(q, S / q->n, NULL, mid); /* reduce-scatter */
    gen_direct_phase(q, S / q->n, mid, NULL); /* all-gather of the reduced shards */
    free(mid);
}

/* Recursive halving (reduce-scatter) and/or doubling (all-gather). */
static void gen_hd(gen *q, st_coll c, double S)
{
    int n = q->n, steps = 0, C = q->chunks;
    while ((1 << steps) < n)
        steps++;
    int *last = malloc((size_t)n * C * sizeof(int)), *cur = malloc((size_t)n * C * sizeof(int));
    if (!last || !cur) {
        free(last), free(cur);
        st_error_set(q->s->err, ST_ENOMEM, "out of memory in the network simulation");
        q->s->failed = 1;
        return;
    }
    for (int i = 0; i < n * C; i++)
        last[i] = -1;
    int passes = c == ST_COLL_ALLREDUCE ? 2 : 1;
    for (int p = 0; p < passes; p++)
        for (int j = 0; j < steps; j++) {
            int halving = (c == ST_COLL_ALLREDUCE && p == 0) || c == ST_COLL_REDUCESCATTER;
            int jj = halving ? j : steps - 1 - j; /* doubling: short distances first */
            int dist = n >> (jj + 1);
            double b = c == ST_COLL_BROADCAST ? S : S / (double)(2LL << jj);
            if (c == ST_COLL_BROADCAST)
                dist = n >> (j + 1);
            for (int i = 0; i < n; i++) {
                int partner = i ^ dist;
                if (c == ST_COLL_BROADCAST && (i % (2 * dist)) != 0)
                    continue; /* binomial tree: only holders send */
                for (int ch = 0; ch < C; ch++) {
                    int x = add_x(q->s, q->flow, q->rank[i], q->rank[partner], b / C, q->t0);
                    dep(q->s, last[i * C + ch], x);
                    cur[partner * C + ch] = x;
                }
            }
            for (int i = 0; i < n; i++) {
                int partner = i ^ dist;
                if (c == ST_COLL_BROADCAST && (i % (2 * dist)) != 0)
                    continue;
                memcpy(&last[partner * C], &cur[partner * C], (size_t)C * sizeof(int));
            }
        }
    free(last), free(cur);
}

/* Intra-node ring pass, rings among nodes on each local GPU's shard, and
 * the intra-node pass back. */
static void gen_hier(gen *q, st_coll c, double S)
{
    int g = q->per_node, k = q->nodes, C = q->chunks, n = q->n;
    int *arr = malloc((size_t)n * C * sizeof(int)), *order = malloc((size_t)(g > k ? g : k) * sizeof(int));
    int *in = malloc((size_t)(g > k ? g : k) * C * sizeof(int)), *out = malloc((size_t)(g > k ? g : k) * C * sizeof(int));
    if (!arr || !order || !in || !out) {
        free(arr), free(order), free(in), free(out);
        st_error_set(q->s->err, ST_ENOMEM, "out of memory in the network simulation");
        q->s->failed = 1;
        return;
    }
    for (int i = 0; i < n * C; i++)
        arr[i] = -1;
    int intra_first = c != ST_COLL_ALLGATHER; /* RS/AR start inside the node */
    int phases[3], np = 0;
    if (c == ST_COLL_ALLREDUCE)
        phases[np++] = 0, phases[np++] = 1, phases[np++] = 2;
    else if (intra_first)
        phases[np++] = 0, phases[np++] = 1;
    else
        phases[np++] = 1, phases[np++] = 2;
    int last = -1; /* the scope of the phase that ran last (1: among nodes, 0: inside), -1: none */
    for (int ph = 0; ph < np; ph++) {
        if ((phases[ph] == 1 && k < 2) || (phases[ph] != 1 && g < 2))
            continue; /* nothing to move: no boundary either */
        /* the phases are separate collectives (NCCL calls one after the
         * other, as hierarchical all-reduces run them): a GPU starts this
         * one once all of the last one's chunks have reached it. Without
         * the boundary the chunks of an all-gather's inter-node phase
         * streamed straight into the intra-node ring while a
         * reduce-scatter's waited for its ring to finish, and the two
         * mirror images simulated 1.09 and 1.60 ms. On one node the
         * reduce-scatter and all-gather passes meet with no network call
         * between them and run on as the ring does. */
        int scope = phases[ph] == 1;
        if (last >= 0 && last != scope)
            for (int i = 0; i < n; i++) {
                int j = add_join(q->s, q->flow, q->t0);
                for (int ch = 0; ch < C; ch++) {
                    dep(q->s, arr[i * C + ch], j);
                    arr[i * C + ch] = j;
                }
            }
        last = scope;
        if (phases[ph] == 1) { /* among nodes, per local index */
            int T = c == ST_COLL_ALLREDUCE ? 2 * (k - 1) : k - 1;
            for (int l = 0; l < g; l++) {
                for (int a = 0; a < k; a++) {
                    order[a] = q->rank[a * g + l];
                    memcpy(&in[a * C], &arr[(a * g + l) * C], (size_t)C * sizeof(int));
                }
                ring_pass(q, order, k, T, S / g / k, in, out);
                for (int a = 0; a < k; a++)
                    memcpy(&arr[(a * g + l) * C], &out[a * C], (size_t)C * sizeof(int));
            }
        } else { /* inside each node */
            for (int a = 0; a < k; a++) {
                for (int l = 0; l < g; l++) {
                    order[l] = q->rank[a * g + l];
                    memcpy(&in[l * C], &arr[(a * g + l) * C], (size_t)C * sizeof(int));
                }
                ring_pass(q, order, g, g - 1, S / g, in, out);
                for (int l = 0; l < g; l++)
                    memcpy(&arr[(a * g + l) * C], &out[l * C], (size_t)C * sizeof(int));
            }
        }
    }
    free(arr), free(order), free(in), free(out);
}

/* ---- the event loop ---------------------------------------------------------- */
/* Ready transfers ordered by (ready time, index). The time is copied into
 * the entry: a transfer's ready time is final once it is pushed (it waits
 * on nothing more), and the copy keeps the comparisons in cache. */
typedef struct hent {
    double ready;
    int i;
} hent;

typedef struct heap {
    hent *a;
    size_t n;
} heap;

static int before(hent x, hent y) { return x.ready < y.ready || (x.ready == y.ready && x.i < y.i); }

static void push(heap *h, const xfer *x, int v)
{
    size_t i = h->n++;
    hent e = {x[v].ready, v};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(e, h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = e;
}

static int pop(heap *h)
{
    int top = h->a[0].i;
    hent e = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = l;
        if (l >= h->n)
            break;
        if (r < h->n && before(h->a[r], h->a[l]))
            m = r;
        if (!before(h->a[m], e))
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    if (h->n)
        h->a[i] = e;
    return top;
}

/* Hold an out-port and an in-port for d seconds, each from when it and the
 * transfer (ready) are free, the in-port not before the out-port; returns
 * when the in-port is done. */
static double hold(double *port, size_t po, size_t pi, double ready, double d)
{
    double so = ready > port[po] ? ready : port[po];
    double si = so > port[pi] ? so : port[pi];
    port[po] = so + d;
    port[pi] = si + d;
    return si + d;
}

/* Hold every directed link of a route for d seconds, each from when it is
 * free and the transfer is ready: each link a queue of its own, as the
 * node's cap is (a wormhole-routed message's flits stream through every
 * link it crosses, so one busy link slows the message, not the others'
 * traffic on its other links); returns when the last is done. */
static double hold_route(double *port, size_t base, const int *links, int hops, double ready, double d)
{
    double end = ready;
    for (int h = 0; h < hops; h++) {
        double *p = &port[base + (size_t)links[h]];
        double s = ready > *p ? ready : *p;
        *p = s + d;
        if (s + d > end)
            end = s + d;
    }
    return end;
}

/* Run transfer x through its two ports; returns its arrival time. Off the
 * node, where the node caps its scale-out (bw_node), the transfer also
 * passes its source node's out-port and its destination node's in-port,
 * each a queue served at the cap in the order transfers become ready (a
 * fluid budget beside the NIC ports, not a stage after them: waiting for
 * its NIC does not hold the node's budget idle); it arrives after the
 * later of the two. On a ring or torus node an on-node transfer takes the
 * directed links of its route instead (hop_base: where the node's links
 * start among the ports), split evenly over the ways a tie allows. */
static double serve(const xfer *x, const st_net_group *g, const st_flow *flows, const st_cluster *c, int total,
                    int nics, size_t hop_base, const size_t *lv_base, double *port)
{
    int G = c->node.gpus, nodes = c->nodes;
    int sn = x->src / G, dn = x->dst / G;
    size_t po, pi;
    double rate, lat, cap = 0;
    int p2p = flows[x->flow].coll == ST_COLL_SENDRECV;
    if (sn == dn && g->hop_dims) {
        int path[3 * 4096], ls = x->src % G, ld = x->dst % G;
        unsigned ties = st_hop_ties(g, ls, ld);
        int ways = 1 << __builtin_popcount(ties);
        double end = x->ready, r = p2p ? g->hop_link_p2p : g->hop_link;
        size_t base = hop_base + (size_t)sn * (size_t)st_hop_links(g);
        for (unsigned way = 0; way < 8; way++) {
            if (way & ~ties)
                continue;
            int hops = st_hop_route(g, ls, ld, way, path);
            double e = hold_route(port, base, path, hops, x->ready, x->bytes / ways / r) + hops * g->hop_lat;
            if (e > end)
                end = e;
        }
        return end;
    }
    if (sn == dn) {
        po = (size_t)x->src * 2, pi = (size_t)x->dst * 2 + 1;
        rate = p2p ? g->p2p_intra : g->bw_intra;
        lat = g->lat_intra;
    } else { /* NIC ports: GPU l of a node uses NIC l * nics / G */
        int sl = (x->src % G) * nics / G, dl = (x->dst % G) * nics / G;
        po = (size_t)total * 2 + ((size_t)sn * nics + sl) * 2;
        pi = (size_t)total * 2 + ((size_t)dn * nics + dl) * 2 + 1;
        rate = p2p ? g->p2p_nic : g->bw_nic;
        lat = g->lat_net;
        cap = p2p ? g->p2p_node : g->bw_node;
    }
    double end = hold(port, po, pi, x->ready, x->bytes / rate);
    /* between two of dimension i-1's groups it also takes their uplinks at
     * the group's share of them (level i's queues, as the node's cap) */
    for (int i = 1; sn != dn && i < c->n_dims; i++) {
        int reach = c->net[i - 1].reach;
        if (sn / reach == dn / reach)
            break;
        double share = p2p ? g->lv_p2p[i] : g->lv_cap[i];
        double e = hold(port, lv_base[i] + (size_t)(sn / reach) * 2, lv_base[i] + (size_t)(dn / reach) * 2 + 1,
                        x->ready, x->bytes / share);
        if (e > end)
            end = e;
        lat = g->lv_lat[i];
    }
    if (cap > 0) {
        size_t base = (size_t)total * 2 + (size_t)nodes * nics * 2;
        double node_end = hold(port, base + (size_t)sn * 2, base + (size_t)dn * 2 + 1, x->ready, x->bytes / cap);
        if (node_end > end)
            end = node_end;
    }
    return end + lat;
}

int st_net_simulate(const st_cluster *c, const st_flow *flows, size_t n_flows, double chunk_bytes,
                    st_flow_result *out, st_error *err)
{
    if ((long long)c->node.gpus * c->nodes > (1LL << 28))
        return st_error_set(err, ST_EINVAL, "cluster %s has %lld GPUs; the simulation holds ports for at most 2^28; "
                            "use the analytical model", c->id, (long long)c->node.gpus * c->nodes);
    int G = c->node.gpus, total = G * c->nodes, rc = 0;
    sim s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.err = err;
    if (!(chunk_bytes > 0))
        chunk_bytes = 1 << 20;
    st_net_group *groups = calloc(n_flows ? n_flows : 1, sizeof *groups);
    if (!groups)
        return st_error_set(err, ST_ENOMEM, "out of memory in the network simulation");
    /* pass 0 counts the transfers (refusing a simulation too large before
     * it takes time and memory), pass 1 builds them */
    for (int pass = 0; pass < 2 && !rc; pass++) {
    s.counting = pass == 0;
    s.d.n = 0;
    for (size_t f = 0; f < n_flows && !rc; f++) {
        const st_flow *fl = &flows[f];
        memset(&out[f], 0, sizeof out[f]);
        int stride = fl->stride > 0 ? fl->stride : 1;
        if (fl->n < 1 || fl->first_rank < 0 || fl->first_rank + (long long)(fl->n - 1) * stride >= total) {
            rc = st_error_set(err, ST_EINVAL, "flow %zu: GPUs %d..%lld are outside cluster %s (%d GPUs)", f + 1,
                              fl->first_rank, fl->first_rank + (long long)(fl->n - 1) * stride, c->id, total);
            break;
        }
        int *rank = malloc((size_t)fl->n * sizeof(int));
        if (!rank) {
            rc = st_error_set(err, ST_ENOMEM, "out of memory in the network simulation");
            break;
        }
        for (int i = 0; i < fl->n; i++)
            rank[i] = fl->first_rank + i * stride;
        /* ranks per node: count members on the first member's node */
        int pn = 0;
        for (int i = 0; i < fl->n; i++)
            pn += rank[i] / G == rank[0] / G;
        rc = st_net_group_place(c, fl->n, pn, stride, &groups[f], err);
        /* the model's choice (it checks the algorithm and protocol asked
         * for); the simulation has no tree, so where auto picks it the ring
         * runs, on the ring's own fastest protocol. The chunks move on the
         * chosen protocol's latencies, base and rates. */
        st_algo a = fl->algo;
        st_coll_est e;
        if (!rc)
            rc = st_coll_estimate_proto(&groups[f], fl->coll, a, fl->proto, fl->bytes, &e, err);
        if (!rc && a == ST_ALGO_AUTO) {
            a = e.algo;
            if (a == ST_ALGO_TREE || (a == ST_ALGO_HIER && groups[f].hop_dims && groups[f].grid)) {
                a = ST_ALGO_RING;
                rc = st_coll_estimate_proto(&groups[f], fl->coll, a, fl->proto, fl->bytes, &e, err);
            }
        }
        if (!rc && a != ST_ALGO_TREE) {
            st_net_group_proto(&groups[f], a, e.proto, &groups[f]);
            out[f].proto = e.proto;
        }
        if (!rc && a == ST_ALGO_TREE)
            rc = st_error_set(err, ST_EINVAL, "flow %zu: the tree algorithm has no chunk-level simulation here; "
                              "use ring, direct, halving_doubling or hierarchical", f + 1);
        if (!rc && a == ST_ALGO_HIER && groups[f].hop_dims && groups[f].grid && pn > 1)
            rc = st_error_set(err, ST_EINVAL, "flow %zu: hierarchical on a %s node runs dimension by dimension, "
                              "which has no chunk-level simulation here; use ring, direct or halving_doubling",
                              f + 1, st_topology_name(c->node.intra.topology));
        out[f].algo = a;
        if (!rc && fl->n > 1 && fl->bytes > 0) {
            s.g = groups[f];
            /* chunk count from the bytes one step moves per member: a
             * broadcast pipelines each ring's whole share down its chain, a
             * send/recv the whole buffer; the others move 1/n a step */
            double per = fl->bytes / fl->n;
            int cap = MAX_CHUNKS;
            if (fl->coll == ST_COLL_SENDRECV)
                per = fl->bytes;
            else if (fl->coll == ST_COLL_BROADCAST) {
                int rings = 1, nodes = fl->n / pn;
                if (nodes > 1)
                    rings = pn < groups[f].nics_per_node ? pn : groups[f].nics_per_node;
                if (rings < 1)
                    rings = 1;
                per = fl->bytes / rings;
                /* a chain of n - 1 hops fills for n - 1 chunks: let it
                 * pipeline as NCCL's slices do, within a quarter of the
                 * transfer budget */
                double room = (double)MAX_TRANSFERS / (4.0 * rings * (fl->n - 1));
                cap = room > 1024 ? 1024 : room < MAX_CHUNKS ? MAX_CHUNKS : (int)room;
            }
            /* clamped in double: a tiny chunk against a large block passes
             * INT_MAX (8 GiB over 4 GPUs in 1-byte chunks) */
            double want = ceil(per / chunk_bytes);
            int chunks = want < 1 ? 1 : want > cap ? cap : (int)want;
            out[f].chunks = chunks;
            s.chunks = chunks;
            gen q = {&s, (int)f, rank, fl->n, pn, fl->n / pn, chunks, fl->start_s + (fl->coll == ST_COLL_SENDRECV ? ST_NET_BASE_LATENCY : groups[f].base_s)};
            switch (a) {
            case ST_ALGO_RING: gen_ring(&q, fl->coll, fl->bytes); break;
            case ST_ALGO_DIRECT: gen_direct(&q, fl->coll, fl->bytes); break;
            case ST_ALGO_HD: gen_hd(&q, fl->coll, fl->bytes); break;
            case ST_ALGO_HIER: gen_hier(&q, fl->coll, fl->bytes); break;
            default: break;
            }
            if (s.failed)
                rc = err ? err->code : ST_EINVAL;
        }
        free(rank);
    }
    }
    /* CSR of dependents */
    if (!rc && s.d.n) {
        s.d.deps = malloc((s.d.n_edges ? s.d.n_edges : 1) * sizeof(int));
        if (!s.d.deps)
            rc = st_error_set(err, ST_ENOMEM, "out of memory in the network simulation");
        else {
            for (size_t e = 0; e < s.d.n_edges; e++)
                s.d.x[s.d.edges[e].from].n_dep++;
            int acc = 0;
            for (size_t i = 0; i < s.d.n; i++) {
                s.d.x[i].first_dep = acc;
                acc += s.d.x[i].n_dep;
                s.d.x[i].n_dep = 0;
            }
            for (size_t e = 0; e < s.d.n_edges; e++) {
                xfer *x = &s.d.x[s.d.edges[e].from];
                s.d.deps[x->first_dep + x->n_dep++] = s.d.edges[e].to;
            }
        }
    }
    if (!rc) {
        int nics = c->node.nics > 0 ? c->node.nics : 1;
        /* the NIC ports, then each node's out- and in-port for its cap,
         * then a ring or torus node's directed links */
        size_t hop_base = (size_t)total * 2 + (size_t)c->nodes * nics * 2 + (size_t)c->nodes * 2;
        size_t hop_links = 0;
        for (size_t f = 0; f < n_flows; f++)
            if (groups[f].hop_dims)
                hop_links = (size_t)st_hop_links(&groups[f]);
        /* then each level's groups' out- and in-ports */
        size_t lv_base[ST_NET_MAX_DIMS] = {0}, nports = hop_base + (size_t)c->nodes * hop_links;
        for (int i = 1; i < c->n_dims; i++) {
            lv_base[i] = nports;
            nports += (size_t)(c->nodes / c->net[i - 1].reach) * 2;
        }
        double *port = calloc(nports, sizeof(double));
        heap h = {malloc((s.d.n ? s.d.n : 1) * sizeof(hent)), 0};
        if (!port || !h.a)
            rc = st_error_set(err, ST_ENOMEM, "out of memory in the network simulation");
        for (size_t i = 0; !rc && i < s.d.n; i++)
            if (s.d.x[i].waits == 0)
                push(&h, s.d.x, (int)i);
        for (size_t f = 0; f < n_flows; f++)
            out[f].end_s = flows[f].start_s;
        while (!rc && h.n) {
            int i = pop(&h);
            xfer *x = &s.d.x[i];
            double arrive = x->join ? x->ready : serve(x, &groups[x->flow], flows, c, total, nics, hop_base, lv_base, port);
            if (!x->join) {
                if (arrive > out[x->flow].end_s)
                    out[x->flow].end_s = arrive;
                out[x->flow].transfers++;
            }
            for (int k = 0; k < x->n_dep; k++) {
                xfer *y = &s.d.x[s.d.deps[x->first_dep + k]];
                if (arrive > y->ready)
                    y->ready = arrive;
                if (--y->waits == 0)
                    push(&h, s.d.x, s.d.deps[x->first_dep + k]);
            }
        }
        free(port);
        free(h.a);
    }
    for (size_t f = 0; !rc && f < n_flows; f++)
        out[f].time_s = out[f].end_s - flows[f].start_s;
    free(s.d.x), free(s.d.edges), free(s.d.deps), free(groups);
    return rc;
}
