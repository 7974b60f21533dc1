/*
 * Counter-based random numbers: every draw is a hash of (seed, key, purpose,
 * counter), so results do not depend on the order in which draws happen
 * (threads, event order) and a run is bit-identical for the same seed.
 */
#include <math.h>

#include "core/core.h"

unsigned long long st_mix64(unsigned long long z)
{
    /* splitmix64's finaliser: a bijection with good avalanche */
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void st_rng_init(st_rng *g, unsigned long long seed, unsigned long long key, unsigned purpose)
{
    g->state = st_mix64(seed ^ st_mix64(key * 0x100000001b3ULL + purpose));
}

unsigned long long st_rng_next(st_rng *g)
{
    g->state += 0x9e3779b97f4a7c15ULL;
    unsigned long long z = g->state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double st_rng_u01(st_rng *g)
{
    return (double)(st_rng_next(g) >> 11) * (1.0 / 9007199254740992.0);
}

static double normal(st_rng *g)
{
    /* Box-Muller; u1 in (0, 1] */
    double u1 = 1.0 - st_rng_u01(g), u2 = st_rng_u01(g);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double st_rng_gamma(st_rng *g, double shape)
{
    /* Marsaglia and Tsang (2000); shape < 1 by the boost x U^(1/shape) */
    if (shape < 1.0) {
        double u = 1.0 - st_rng_u01(g);
        return st_rng_gamma(g, shape + 1.0) * pow(u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = normal(g), v = 1.0 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = 1.0 - st_rng_u01(g);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}
