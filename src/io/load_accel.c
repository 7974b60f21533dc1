/* kind: accelerator -> st_accel: a Timeloop-style spatial design. */
#include "config.h"
#include "io/loaders.h"

#include <string.h>

static const fkey accel_keys[] = {
    {"kind", 1, "accelerator"},
    {"name", 1, "design name"},
    {"technology", 0, "process node"},
    {"clock_mhz", 1, "MHz"},
    {"pe_array", 1, "{x: N, y: M}"},
    {"mac", 1, "{energy_pj, multiplier_bits, adder_bits}"},
    {"noc", 1, "{hop_energy_pj, multicast, spatial_reduction}"},
    {"levels", 1, "storage levels, outermost first"},
};

static const fkey level_keys[] = {
    {"name", 1, "level name"},
    {"class", 1, "dram, sram or regfile"},
    {"instances", 1, "copies of the level"},
    {"mesh_x", 0, "instances along X"},
    {"depth", 0, "rows (omit for DRAM)"},
    {"width_bits", 1, "bits per row"},
    {"word_bits", 1, "bits per datum"},
    {"banks", 0, "banks"},
    {"read_bw_words", 0, "words per cycle"},
    {"write_bw_words", 0, "words per cycle"},
    {"keeps", 1, "list of inputs, weights, outputs"},
    {"energy_pj", 1, "{read, write, update, leak}"},
};

static int read_level(const fctx *lc, const st_ynode *it, st_mem_level *l)
{
    static const char *const classes[] = {"dram", "sram", "regfile"};
    static const char *const tensors[] = {"inputs", "weights", "outputs"};
    static const fkey energy_keys[] = {{"read", 1, "pJ"}, {"write", 1, "pJ"},
                                       {"update", 1, "pJ"}, {"leak", 1, "pJ per cycle"}};
    int rc, cls = 0;
    const st_ynode *keeps, *en;
    fctx ec = *lc;
    if ((rc = f_check_map(lc, it, level_keys, sizeof level_keys / sizeof level_keys[0])) ||
        (rc = f_string(lc, it, "name", l->name, sizeof l->name)) ||
        (rc = f_enum(lc, it, "class", classes, 3, &cls)) ||
        (rc = f_int32(lc, it, "instances", 1, 1000000, &l->instances)) ||
        (rc = f_int32(lc, it, "mesh_x", 1, 1000000, &l->mesh_x)) ||
        (rc = f_int(lc, it, "depth", 1, 1LL << 40, &l->depth)) ||
        (rc = f_int32(lc, it, "width_bits", 1, 1 << 20, &l->width_bits)) ||
        (rc = f_int32(lc, it, "word_bits", 1, 1024, &l->word_bits)) ||
        (rc = f_int32(lc, it, "banks", 1, 1 << 20, &l->banks)) ||
        (rc = f_number(lc, it, "read_bw_words", 0, 1e9, 1, "words/cycle", &l->read_bw_words)) ||
        (rc = f_number(lc, it, "write_bw_words", 0, 1e9, 1, "words/cycle", &l->write_bw_words)))
        return rc;
    l->cls = (st_mem_class)cls;
    if (l->mesh_x == 0)
        l->mesh_x = l->instances;
    if (l->instances % l->mesh_x != 0)
        return f_error(lc, f_get(it, "mesh_x"),
                       "key 'mesh_x': %d does not divide instances %d; instances are laid out "
                       "as mesh_x columns",
                       l->mesh_x, l->instances);
    if (l->width_bits % l->word_bits != 0)
        return f_error(lc, f_get(it, "width_bits"),
                       "key 'width_bits': %d is not a multiple of word_bits %d", l->width_bits,
                       l->word_bits);
    if (l->cls != ST_MEM_DRAM && l->depth == 0)
        return f_error(lc, it, "%s: on-chip level '%s' needs `depth:` (rows)", lc->what, l->name);
    keeps = f_get(it, "keeps");
    if (keeps->kind != ST_Y_SEQ)
        return f_error(lc, keeps, "key 'keeps': expected a list such as [inputs, outputs], "
                                  "found %s", st_ykind_name(keeps->kind));
    for (size_t k = 0; k < keeps->n; k++) {
        const st_ynode *t = keeps->items[k];
        int found = -1;
        for (int j = 0; j < ST_TENSOR_COUNT && t->kind == ST_Y_SCALAR; j++)
            if (strcmp(t->scalar, tensors[j]) == 0)
                found = j;
        if (found < 0)
            return f_error(lc, t, "key 'keeps': expected inputs, weights or outputs, found %s",
                           t->kind == ST_Y_SCALAR ? t->scalar : st_ykind_name(t->kind));
        l->keeps[found] = 1;
    }
    en = f_get(it, "energy_pj");
    ec.what = "energy_pj";
    if ((rc = f_check_map(&ec, en, energy_keys, 4)) ||
        (rc = f_number(&ec, en, "read", 0, 1e9, PJ, "pJ", &l->e_read)) ||
        (rc = f_number(&ec, en, "write", 0, 1e9, PJ, "pJ", &l->e_write)) ||
        (rc = f_number(&ec, en, "update", 0, 1e9, PJ, "pJ", &l->e_update)) ||
        (rc = f_number(&ec, en, "leak", 0, 1e9, PJ, "pJ", &l->e_leak)))
        return rc;
    return 0;
}

int st_read_accel(const fctx *c, const st_ynode *root, st_accel *a)
{
    static const fkey pe_keys[] = {{"x", 1, "PEs along X"}, {"y", 1, "PEs along Y"}};
    static const fkey mac_keys[] = {{"energy_pj", 1, "pJ per MAC"},
                                    {"multiplier_bits", 1, "bits"},
                                    {"adder_bits", 1, "bits"},
                                    {"count_per_pe", 0, "MACs per PE"}};
    static const fkey noc_keys[] = {{"hop_energy_pj", 1, "pJ per word per hop"},
                                    {"multicast", 1, "true/false"},
                                    {"spatial_reduction", 1, "true/false"}};
    const st_ynode *pe, *mac, *noc, *levels;
    fctx sc = *c;
    int rc;
    memset(a, 0, sizeof *a);
    if ((rc = f_check_map(c, root, accel_keys, sizeof accel_keys / sizeof accel_keys[0])) ||
        (rc = f_string(c, root, "name", a->name, sizeof a->name)) ||
        (rc = f_string(c, root, "technology", a->technology, sizeof a->technology)) ||
        (rc = f_number(c, root, "clock_mhz", 1e-3, 1e5, MHZ, "MHz", &a->clock_hz)))
        return rc;
    pe = f_get(root, "pe_array");
    sc.what = "pe_array";
    if ((rc = f_check_map(&sc, pe, pe_keys, 2)) ||
        (rc = f_int32(&sc, pe, "x", 1, 65536, &a->pe_x)) ||
        (rc = f_int32(&sc, pe, "y", 1, 65536, &a->pe_y)))
        return rc;
    mac = f_get(root, "mac");
    sc.what = "mac";
    a->macs_per_pe = 1;
    if ((rc = f_check_map(&sc, mac, mac_keys, 4)) ||
        (rc = f_number(&sc, mac, "energy_pj", 0, 1e6, PJ, "pJ", &a->e_mac)) ||
        (rc = f_int32(&sc, mac, "multiplier_bits", 1, 128, &a->mac_bits)) ||
        (rc = f_int32(&sc, mac, "adder_bits", 1, 256, &a->adder_bits)) ||
        (rc = f_int32(&sc, mac, "count_per_pe", 1, 65536, &a->macs_per_pe)))
        return rc;
    noc = f_get(root, "noc");
    sc.what = "noc";
    if ((rc = f_check_map(&sc, noc, noc_keys, 3)) ||
        (rc = f_number(&sc, noc, "hop_energy_pj", 0, 1e6, PJ, "pJ", &a->e_hop)) ||
        (rc = f_bool(&sc, noc, "multicast", &a->noc_multicast)) ||
        (rc = f_bool(&sc, noc, "spatial_reduction", &a->noc_reduction)))
        return rc;
    levels = f_get(root, "levels");
    if (levels->kind != ST_Y_SEQ)
        return f_error(c, levels, "key 'levels': expected a list of storage levels (DRAM first), "
                                  "found %s", st_ykind_name(levels->kind));
    if (levels->n == 0)
        return f_error(c, levels, "key 'levels': the list is empty; give at least the backing "
                                  "store (DRAM)");
    if (levels->n > ST_ACCEL_MAX_LEVELS)
        return f_error(c, levels, "key 'levels': %zu levels, at most %d are supported", levels->n,
                       ST_ACCEL_MAX_LEVELS);
    for (size_t i = 0; i < levels->n; i++) {
        char what[48];
        fctx lc = *c;
        snprintf(what, sizeof what, "levels[%zu]", i);
        lc.what = what;
        if ((rc = read_level(&lc, levels->items[i], &a->level[i])))
            return rc;
        for (size_t j = 0; j < i; j++)
            if (strcmp(a->level[j].name, a->level[i].name) == 0)
                return f_error(&lc, levels->items[i], "level name '%s' is used twice",
                               a->level[i].name);
    }
    a->n_levels = (int)levels->n;
    for (int t = 0; t < ST_TENSOR_COUNT; t++)
        if (!a->level[0].keeps[t])
            return f_error(c, levels->items[0],
                           "levels[0] (%s) is the backing store and must keep all tensors; "
                           "add %s to its keeps",
                           a->level[0].name, st_tensor_name((st_tensor)t));
    return 0;
}
