/* Multi-hop node fabrics (ring, torus2d, torus3d): routes and link loads
 * (see net.h, "Multi-hop fabrics"). */
#include "config.h"
#include "net/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Coordinates of local GPU l on the grid. */
static void coords(const st_net_group *g, int l, int *x)
{
    for (int d = 0; d < g->hop_dims; d++) {
        x[d] = l % g->hop_shape[d];
        l /= g->hop_shape[d];
    }
}

int st_hop_links(const st_net_group *g)
{
    int n = 1;
    for (int d = 0; d < g->hop_dims; d++)
        n *= g->hop_shape[d];
    return n * g->hop_dims * 2;
}

int st_hop_route(const st_net_group *g, int src, int dst, unsigned way, int *links)
{
    int a[3] = {0}, b[3] = {0}, hops = 0, D = g->hop_dims;
    coords(g, src, a);
    coords(g, dst, b);
    int stride = 1, l = src;
    for (int d = 0; d < D; d++) {
        int m = g->hop_shape[d], fwd = ((b[d] - a[d]) % m + m) % m, back = (m - fwd) % m;
        int plus = fwd < back || (fwd == back && !(way >> d & 1));
        int steps = plus ? fwd : back;
        for (int s = 0; s < steps; s++) {
            if (links)
                links[hops] = (l * D + d) * 2 + !plus;
            hops++;
            /* move one step along d, wrapping round */
            int c = l / stride % m, nc = plus ? (c + 1) % m : (c + m - 1) % m;
            l += (nc - c) * stride;
        }
        stride *= m;
    }
    return hops;
}

unsigned st_hop_ties(const st_net_group *g, int src, int dst)
{
    int a[3] = {0}, b[3] = {0};
    unsigned t = 0;
    coords(g, src, a);
    coords(g, dst, b);
    for (int d = 0; d < g->hop_dims; d++) {
        int m = g->hop_shape[d], fwd = ((b[d] - a[d]) % m + m) % m;
        if (fwd && 2 * fwd == m)
            t |= 1u << d;
    }
    return t;
}

/* Add `bytes` from src to dst, split evenly over the ways a tie allows,
 * into a difference array along each line (diff[], indexed as the
 * directed links), so a route costs its dimensions, not its hops;
 * diff_finish turns the array into link loads. Returns the route's hops. */
static int add_route_diff(const st_net_group *g, double *diff, int src, int dst, double bytes)
{
    unsigned ties = st_hop_ties(g, src, dst);
    int n_way = 1 << __builtin_popcount(ties), D = g->hop_dims, hops = 0;
    int a[3] = {0}, b[3] = {0};
    coords(g, src, a);
    coords(g, dst, b);
    for (unsigned way = 0; way < 8; way++) {
        if (way & ~ties)
            continue;
        double w = bytes / n_way;
        int x[3] = {a[0], a[1], a[2]}, stride = 1;
        hops = 0;
        for (int d = 0; d < D; d++) {
            int m = g->hop_shape[d], fwd = ((b[d] - x[d]) % m + m) % m, back = (m - fwd) % m;
            int plus = fwd < back || (fwd == back && !(way >> d & 1)), steps = plus ? fwd : back;
            if (steps) {
                /* the node of the line at coordinate 0, then the run's
                 * first link and the one past its last, by coordinate */
                int base = 0, st2 = 1;
                for (int e = 0; e < D; e++) {
                    if (e != d)
                        base += x[e] * st2;
                    st2 *= g->hop_shape[e];
                }
                int lo = plus ? x[d] : ((x[d] - steps + 1) % m + m) % m;
                int hi = lo + steps; /* exclusive; may pass m: wraps */
                int dir = !plus;
#define DIFF(c, v) diff[((base + (c) * stride) * D + d) * 2 + dir] += (v)
                DIFF(lo, w);
                if (hi < m)
                    DIFF(hi, -w);
                else {
                    DIFF(0, w);
                    if (hi - m < m)
                        DIFF(hi - m, -w);
                }
#undef DIFF
            }
            hops += steps;
            x[d] = b[d];
            stride *= m;
        }
    }
    return hops;
}

/* Prefix sums along every line: difference arrays -> loads. */
static void diff_finish(const st_net_group *g, double *diff)
{
    int D = g->hop_dims, G = 1, stride = 1;
    for (int d = 0; d < D; d++)
        G *= g->hop_shape[d];
    for (int d = 0; d < D; d++) {
        int m = g->hop_shape[d];
        for (int l = 0; l < G; l++) {
            if (l / stride % m) /* not the line's first node */
                continue;
            for (int dir = 0; dir < 2; dir++) {
                double acc = 0;
                for (int c = 0; c < m; c++) {
                    double *v = &diff[((l + c * stride) * D + d) * 2 + dir];
                    acc += *v;
                    *v = acc;
                }
            }
        }
        stride *= m;
    }
}

static double max_of(const double *v, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

/* the group's i-th GPU on a node */
static int member(const st_net_group *g, int i) { return i * g->hop_stride; }

int st_hop_group(st_net_group *g, st_error *err)
{
    int pn = g->per_node, nl = st_hop_links(g);
    g->k_ring = g->k_p2p = 0;
    g->h_ring = 0;
    g->grid = 0;
    if (pn < 2)
        return 0;
    double *load = calloc((size_t)nl, sizeof *load);
    if (!load)
        return st_error_set(err, ST_ENOMEM, "out of memory routing the node's fabric");
    /* the ring in rank order, run both ways, half the block each; a
     * chunk goes round through every route in turn, so a step's latency
     * is a route's mean hops */
    double hsum = 0;
    for (int i = 0; i < pn; i++)
        hsum += add_route_diff(g, load, member(g, i), member(g, (i + 1) % pn), 0.5) +
                add_route_diff(g, load, member(g, i), member(g, (i + pn - 1) % pn), 0.5);
    diff_finish(g, load);
    g->h_ring = hsum / (2.0 * pn);
    g->k_ring = max_of(load, nl);
    memset(load, 0, (size_t)nl * sizeof *load);
    add_route_diff(g, load, member(g, 0), member(g, 1), 1);
    diff_finish(g, load);
    g->k_p2p = max_of(load, nl);
    /* the GPUs as a grid: every combination of the coordinates they take */
    int vals[3][4096], m[3] = {0, 0, 0}, D = g->hop_dims;
    for (int i = 0; i < pn; i++) {
        int x[3] = {0};
        coords(g, member(g, i), x);
        for (int d = 0; d < D; d++) {
            int seen = 0;
            for (int j = 0; j < m[d] && !seen; j++)
                seen = vals[d][j] == x[d];
            if (!seen)
                vals[d][m[d]++] = x[d];
        }
    }
    long long prod = 1;
    for (int d = 0; d < D; d++)
        prod *= m[d];
    if (prod == pn) {
        g->grid = 1;
        for (int d = 0; d < D; d++) {
            /* the coordinates in order: a dimension's ring visits them so */
            for (int a = 1; a < m[d]; a++)
                for (int b = a; b > 0 && vals[d][b - 1] > vals[d][b]; b--) {
                    int t = vals[d][b];
                    vals[d][b] = vals[d][b - 1];
                    vals[d][b - 1] = t;
                }
            g->grid_m[d] = m[d];
            g->grid_k[d] = 0;
            g->grid_h[d] = 0;
            if (m[d] < 2)
                continue;
            memset(load, 0, (size_t)nl * sizeof *load);
            double gsum = 0;
            for (int i = 0; i < pn; i++) {
                int l = member(g, i), x[3] = {0}, j = 0, stride = 1;
                coords(g, l, x);
                for (int e = 0; e < d; e++)
                    stride *= g->hop_shape[e];
                while (vals[d][j] != x[d])
                    j++;
                int next = l + (vals[d][(j + 1) % m[d]] - x[d]) * stride;
                int prev = l + (vals[d][(j + m[d] - 1) % m[d]] - x[d]) * stride;
                gsum += add_route_diff(g, load, l, next, 0.5) + add_route_diff(g, load, l, prev, 0.5);
            }
            diff_finish(g, load);
            g->grid_k[d] = max_of(load, nl);
            g->grid_h[d] = gsum / (2.0 * pn);
        }
    }
    free(load);
    return 0;
}

int st_hop_add(const st_net_group *g, int kind, int dist, double w, double *diff)
{
    int pn = g->per_node, hops = 0;
    for (int i = 0; i < pn; i++) {
        if (kind == ST_HOP_ROOT && i > 0)
            break;
        if (kind == ST_HOP_BCAST && (i % (2 * dist) || i + dist >= pn))
            continue; /* only the GPUs holding the data send, each to i + dist */
        /* the partner of a pair or broadcast step, every other GPU else */
        int one = kind == ST_HOP_PAIRS ? i ^ dist : kind == ST_HOP_BCAST ? i + dist : -1;
        for (int j = one >= 0 ? one : 0; j < pn; j++) {
            if (j != i) {
                int h = add_route_diff(g, diff, member(g, i), member(g, j), w);
                if (h > hops)
                    hops = h;
            }
            if (one >= 0)
                break;
        }
    }
    return hops;
}

double st_hop_max(const st_net_group *g, double *diff)
{
    diff_finish(g, diff);
    return max_of(diff, st_hop_links(g));
}

double st_hop_pattern(const st_net_group *g, int kind, int dist, double *hops)
{
    int pn = g->per_node, nl = st_hop_links(g), G = nl / (2 * g->hop_dims);
    *hops = 0;
    if (pn < 2)
        return 0;
    double *load = calloc((size_t)nl, sizeof *load);
    if (!load)
        return NAN;
    double k;
    if (kind == ST_HOP_ALL && pn == G && g->hop_stride == 1) {
        /* every GPU to every other on the whole grid: a torus looks the
         * same from every GPU, so each link of one dimension and way
         * carries what GPU 0's routes put on all of them together */
        double cls[6] = {0};
        for (int j = 1; j < pn; j++) {
            int h = add_route_diff(g, load, 0, j, 1);
            if (h > *hops)
                *hops = h;
        }
        diff_finish(g, load);
        for (int i = 0; i < nl; i++)
            cls[i % (2 * g->hop_dims)] += load[i];
        k = max_of(cls, 2 * g->hop_dims);
    } else {
        *hops = st_hop_add(g, kind, dist, 1, load);
        k = st_hop_max(g, load);
    }
    free(load);
    return k;
}

/* One pass (reduce-scatter or all-gather) of the dimension-wise algorithm
 * over S bytes: the data in as many parts as the grid has dimensions with
 * 2 or more GPUs, part q taking them in turn from the q-th, so that each
 * phase keeps every dimension's links busy with one part. */
void st_hop_dims_pass(const st_net_group *g, double S, double *xfer, double *lat, int *steps)
{
    int act[3], na = 0;
    for (int d = 0; d < g->hop_dims; d++)
        if (g->grid_m[d] > 1)
            act[na++] = d;
    for (int p = 0; p < na; p++) {
        double t = 0, l = 0;
        int st = 0;
        for (int q = 0; q < na; q++) {
            double size = S / na;
            for (int e = 0; e < p; e++)
                size /= g->grid_m[act[(q + e) % na]];
            int d = act[(q + p) % na], m = g->grid_m[d];
            double tq = (double)(m - 1) / m * size * g->grid_k[d] / g->hop_link;
            if (tq > t)
                t = tq;
            if ((m - 1) * g->grid_h[d] * g->hop_lat > l)
                l = (m - 1) * g->grid_h[d] * g->hop_lat;
            if (m - 1 > st)
                st = m - 1;
        }
        *xfer += t;
        *lat += l;
        *steps += st;
    }
}
