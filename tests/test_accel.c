/*
 * Accelerator model: access counts and tile sizes of small mappings worked
 * out by hand (comments give the arithmetic), capacity and factor errors,
 * and the mapper's determinism and optimality on small spaces.
 */
#include "config.h"
#include "testutil.h"

#include <math.h>

#include "accel/accel.h"
#include "io/io.h"

/* DRAM (block 1 word) over one buffer of `words` words, optionally under a
 * fan-out of `pes` PEs along X, each PE one MAC. Energies 1 pJ per access
 * at DRAM, 0.1 pJ in the buffer, MAC 0.5 pJ, no leakage. */
static void tiny_arch(st_accel *a, int pes, long long words)
{
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "tiny");
    a->clock_hz = 1e9;
    a->pe_x = pes;
    a->pe_y = 1;
    a->macs_per_pe = 1;
    a->e_mac = 0.5e-12;
    a->n_levels = 2;
    st_mem_level *d = &a->level[0], *b = &a->level[1];
    snprintf(d->name, sizeof d->name, "DRAM");
    d->cls = ST_MEM_DRAM;
    d->instances = d->mesh_x = 1;
    d->width_bits = d->word_bits = 8;
    d->e_read = d->e_write = d->e_update = 1e-12;
    snprintf(b->name, sizeof b->name, "buf");
    b->cls = ST_MEM_REGFILE;
    b->instances = b->mesh_x = pes;
    b->depth = words;
    b->width_bits = b->word_bits = 8;
    b->e_read = b->e_write = b->e_update = 0.1e-12;
    for (int t = 0; t < ST_TENSOR_COUNT; t++)
        d->keeps[t] = b->keeps[t] = 1;
    for (int i = 0; i < 2; i++)
        a->level[i].t_allow = a->level[i].sx_allow = a->level[i].sy_allow = ST_AD_ALL;
}

/* GEMM M=4 (outputs), C=2 (reduction), P=3 (tokens): 24 MACs. */
static void tiny_gemm(st_aprob *p)
{
    st_aprob_init(p, "tiny");
    p->d[ST_AD_M] = 4;
    p->d[ST_AD_C] = 2;
    p->d[ST_AD_P] = 3;
}

static void set_perm(st_amap *m, int lv, const char *inner_first)
{
    int k = 0;
    unsigned used = 0;
    for (const char *s = inner_first; *s; s++) {
        int d = (int)(strchr(ST_AD_LETTERS, *s) - ST_AD_LETTERS);
        m->perm[lv][k++] = (unsigned char)d;
        used |= 1u << d;
    }
    for (int d = 0; d < ST_AD_COUNT; d++)
        if (!(used & (1u << d)))
            m->perm[lv][k++] = (unsigned char)d;
}

/* DRAM: for M in 2 | buf: for M in 2, for C in 2, for P in 3 (P innermost). */
static void test_temporal_counts(void **state)
{
    (void)state;
    st_accel a;
    st_aprob p;
    st_amap m;
    st_astats s;
    st_error err;
    tiny_arch(&a, 1, 64);
    tiny_gemm(&p);
    st_amap_init(&m, &a, &p);
    m.t[0][ST_AD_M] = 2, m.t[0][ST_AD_C] = 1, m.t[0][ST_AD_P] = 1;
    m.t[1][ST_AD_M] = 2, m.t[1][ST_AD_C] = 2, m.t[1][ST_AD_P] = 3;
    set_perm(&m, 1, "PCM");
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), 0);
    /* tiles in buf: inputs C2 x P3 = 6, weights M2 x C2 = 4, outputs M2 x P3 = 6 */
    assert_true(s.lv[1].tile[ST_TENSOR_INPUTS] == 6);
    assert_true(s.lv[1].tile[ST_TENSOR_WEIGHTS] == 4);
    assert_true(s.lv[1].tile[ST_TENSOR_OUTPUTS] == 6);
    /* the DRAM M loop does not index inputs: they are fetched once (6);
     * weights and outputs change with it: 2 x 4 = 8 and 2 x 6 = 12 words,
     * the outputs' first visit needing no fill (partition 12): 0 fills */
    assert_true(s.lv[1].fills[ST_TENSOR_INPUTS] == 6);
    assert_true(s.lv[1].fills[ST_TENSOR_WEIGHTS] == 8);
    assert_true(s.lv[1].fills[ST_TENSOR_OUTPUTS] == 0);
    /* the MAC reads both operands and updates the output every cycle: 24;
     * an output's first update reads nothing: 24 - 12 = 12 reads */
    assert_true(s.lv[1].reads[ST_TENSOR_INPUTS] == 24);
    assert_true(s.lv[1].reads[ST_TENSOR_WEIGHTS] == 24);
    assert_true(s.lv[1].updates[ST_TENSOR_OUTPUTS] == 24);
    assert_true(s.lv[1].reads[ST_TENSOR_OUTPUTS] == 12);
    /* DRAM serves the fills and takes each output once */
    assert_true(s.lv[0].reads[ST_TENSOR_INPUTS] == 6);
    assert_true(s.lv[0].reads[ST_TENSOR_WEIGHTS] == 8);
    assert_true(s.lv[0].updates[ST_TENSOR_OUTPUTS] == 12);
    assert_true(s.lv[0].reads[ST_TENSOR_OUTPUTS] == 0);
    /* 24 cycles on one MAC; energy: DRAM 26 x 1 pJ, buf (14 fills + 72 reads
     * and updates + 12 reads) x 0.1 pJ, MACs 24 x 0.5 pJ */
    assert_true(s.cycles == 24);
    assert_true(fabs(s.energy - (26e-12 + (14 + 24 + 24 + 24 + 12) * 0.1e-12 + 12e-12)) < 1e-18);
    /* put the M loop innermost in buf: same counts (M is inside the tile) */
    set_perm(&m, 1, "MCP");
    st_astats s2;
    assert_int_equal(st_accel_eval(&a, &p, &m, &s2, &err), 0);
    assert_true(s2.energy == s.energy);
}

/* Four PEs split M along X under DRAM: inputs are multicast, weights and
 * outputs are per PE. */
static void test_multicast(void **state)
{
    (void)state;
    st_accel a;
    st_aprob p;
    st_amap m;
    st_astats s;
    st_error err;
    tiny_arch(&a, 4, 64);
    tiny_gemm(&p);
    st_amap_init(&m, &a, &p);
    m.t[0][ST_AD_M] = 1, m.t[0][ST_AD_C] = 1, m.t[0][ST_AD_P] = 1;
    m.sx[0][ST_AD_M] = 4;
    m.t[1][ST_AD_C] = 2, m.t[1][ST_AD_P] = 3;
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), 0);
    /* each PE: inputs C2 x P3 = 6, weights C2 = 2, outputs P3 = 3 */
    assert_true(s.lv[1].instances == 4);
    assert_true(s.lv[1].fills[ST_TENSOR_INPUTS] == 6);
    assert_true(s.lv[1].fills[ST_TENSOR_WEIGHTS] == 2);
    /* DRAM: one multicast of the 6 inputs; 4 x 2 weights; 4 x 3 outputs */
    assert_true(s.lv[0].reads[ST_TENSOR_INPUTS] == 6);
    assert_true(s.lv[0].reads[ST_TENSOR_WEIGHTS] == 8);
    assert_true(s.lv[0].updates[ST_TENSOR_OUTPUTS] == 12);
    assert_true(s.cycles == 6);
    assert_true(fabs(s.utilization - 1.0) < 1e-12);
    /* split C instead (2 PEs used): outputs reduced spatially, so DRAM takes
     * M4 x P3 = 12 updates, not 24 */
    st_amap_init(&m, &a, &p);
    m.t[0][ST_AD_M] = 4, m.t[0][ST_AD_C] = 1, m.t[0][ST_AD_P] = 1;
    m.sx[0][ST_AD_C] = 2;
    m.t[1][ST_AD_P] = 3;
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), 0);
    assert_true(s.lv[0].updates[ST_TENSOR_OUTPUTS] == 12);
    assert_true(fabs(s.utilization - 0.5) < 1e-12);
    /* a 1-D conv, Q3 x S2, both split across 6 PEs: PE (q, s) reads input
     * row q + s, so rows 0..3 go out once each (4 reads, not 6), and only
     * the 2 filter taps differ among the PEs' weights */
    tiny_arch(&a, 6, 64);
    st_aprob_init(&p, "conv1d");
    p.d[ST_AD_Q] = 3;
    p.d[ST_AD_S] = 2;
    st_amap_init(&m, &a, &p);
    m.t[0][ST_AD_Q] = m.t[0][ST_AD_S] = 1;
    m.sx[0][ST_AD_Q] = 3;
    m.sx[0][ST_AD_S] = 2;
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), 0);
    assert_true(s.lv[0].reads[ST_TENSOR_INPUTS] == 4);
    assert_true(s.lv[0].reads[ST_TENSOR_WEIGHTS] == 2);
    assert_true(s.lv[0].updates[ST_TENSOR_OUTPUTS] == 3);
}

/* Inputs of a strided window: W = stride (P-1) + dilation (R-1) + 1. */
static void test_window_footprint(void **state)
{
    (void)state;
    st_aprob p;
    st_aprob_init(&p, "conv");
    p.d[ST_AD_P] = 4;
    p.d[ST_AD_R] = 3;
    p.wstride = 2;
    /* 2 x 3 + 1 x 2 + 1 = 9 columns */
    assert_true(st_aprob_tensor_words(&p, ST_TENSOR_INPUTS) == 9);
    p.wdil = 2; /* 2 x 3 + 2 x 2 + 1 = 11 */
    assert_true(st_aprob_tensor_words(&p, ST_TENSOR_INPUTS) == 11);
    assert_true(st_aprob_macs(&p) == 12);
}

static void test_rejections(void **state)
{
    (void)state;
    st_accel a;
    st_aprob p;
    st_amap m;
    st_astats s;
    st_error err;
    /* tiles 6 + 4 + 6 = 16 words in a 10-word buffer */
    tiny_arch(&a, 1, 10);
    tiny_gemm(&p);
    st_amap_init(&m, &a, &p);
    m.t[0][ST_AD_M] = 2, m.t[0][ST_AD_C] = 1, m.t[0][ST_AD_P] = 1;
    m.t[1][ST_AD_M] = 2, m.t[1][ST_AD_C] = 2, m.t[1][ST_AD_P] = 3;
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "16 words"));
    /* bypassing outputs in buf leaves 10 words: fits */
    m.keep[1] &= (unsigned char)~(1u << ST_TENSOR_OUTPUTS);
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), 0);
    /* factors that do not multiply to the problem */
    m.t[1][ST_AD_P] = 2;
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "P=3"));
    /* a split wider than the fan-out */
    tiny_arch(&a, 2, 64);
    st_amap_init(&m, &a, &p);
    m.t[0][ST_AD_M] = 1;
    m.sx[0][ST_AD_M] = 4;
    assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "fan-out"));
}

/* On a space small enough to enumerate, descent restarts and enumeration
 * agree; on Eyeriss-like the answer is the same for 1 and 3 threads. */
static void test_mapper(void **state)
{
    (void)state;
    st_accel a;
    st_aprob p;
    st_error err;
    st_mapper_opts o;
    st_mapper_result *r1 = malloc(sizeof *r1), *r2 = malloc(sizeof *r2);
    assert_non_null(r1);
    assert_non_null(r2);
    tiny_arch(&a, 4, 64);
    tiny_gemm(&p);
    st_mapper_opts_default(&o);
    assert_int_equal(st_accel_map(&a, &p, &o, r1, &err), 0);
    assert_true(r1->exhaustive);
    /* at least as good as the hand mapping of test_multicast (M split 4 ways) */
    {
        st_amap m;
        st_astats s;
        st_amap_init(&m, &a, &p);
        m.t[0][ST_AD_M] = 1;
        m.sx[0][ST_AD_M] = 4;
        m.t[1][ST_AD_C] = 2, m.t[1][ST_AD_P] = 3;
        m.t[0][ST_AD_C] = m.t[0][ST_AD_P] = 1;
        assert_int_equal(st_accel_eval(&a, &p, &m, &s, &err), 0);
        assert_true(r1->stats.edp <= s.edp);
    }
    assert_int_equal(st_load_accel("eyeriss-like", &a, &err), 0);
    st_aprob_init(&p, "res2");
    p.d[ST_AD_C] = p.d[ST_AD_M] = 64;
    p.d[ST_AD_P] = p.d[ST_AD_Q] = 56;
    p.d[ST_AD_R] = p.d[ST_AD_S] = 3;
    o.threads = 1;
    assert_int_equal(st_accel_map(&a, &p, &o, r1, &err), 0);
    assert_false(r1->exhaustive);
    o.threads = 3;
    assert_int_equal(st_accel_map(&a, &p, &o, r2, &err), 0);
    assert_memory_equal(&r1->best, &r2->best, sizeof r1->best);
    assert_true(r1->stats.edp == r2->stats.edp);
    /* the result obeys the preset's constraints and is a valid mapping */
    assert_int_equal(st_amap_check_constraints(&a, &r1->best, &err), 0);
    /* every MAC slot of the array: utilization cannot exceed 1 */
    assert_true(r1->stats.utilization <= 1.0 + 1e-12);
    free(r1);
    free(r2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_temporal_counts), cmocka_unit_test(test_multicast),
        cmocka_unit_test(test_window_footprint), cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_mapper),
    };
    return cmocka_run_group_tests_name("accel", tests, NULL, NULL);
}
