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
    {"class", 1, "dram, sram, regfile or fanout"},
    {"instances", 1, "copies of the level"},
    {"mesh_x", 0, "instances along X"},
    {"depth", 0, "rows (omit for DRAM)"},
    {"width_bits", 0, "bits per row (required unless class: fanout)"},
    {"word_bits", 0, "bits per datum (required unless class: fanout)"},
    {"banks", 0, "banks"},
    {"read_bw_words", 0, "words per cycle"},
    {"write_bw_words", 0, "words per cycle"},
    {"keeps", 0, "list of inputs, weights, outputs (required unless class: fanout)"},
    {"energy_pj", 0, "{read, write, update, leak} (required unless class: fanout)"},
    {"constraints", 0, "{temporal, permutation, spatial_x, spatial_y, factors, spatial_x_factors, spatial_y_factors}"},
};

/* A list of loop-dimension letters (G N M C P Q R S) -> bit mask, and the
 * letters in order into perm (when perm != NULL). */
static int read_dims(const fctx *c, const st_ynode *map, const char *key, unsigned *mask,
                     char *perm, size_t perm_n)
{
    static const char letters[] = ST_AD_LETTERS;
    const st_ynode *v = f_get(map, key);
    size_t np = 0;
    if (!v)
        return 0;
    if (v->kind != ST_Y_SEQ)
        return f_error(c, v, "key '%s': expected a list of loop dimensions such as [C, M], "
                             "found %s", key, st_ykind_name(v->kind));
    *mask = 0;
    for (size_t k = 0; k < v->n; k++) {
        const st_ynode *t = v->items[k];
        const char *hit = (t->kind == ST_Y_SCALAR && strlen(t->scalar) == 1)
                              ? strchr(letters, t->scalar[0]) : NULL;
        if (!hit || !t->scalar[0])
            return f_error(c, t, "key '%s': expected one of G, N, M, C, P, Q, R, S, found %s",
                           key, t->kind == ST_Y_SCALAR ? t->scalar : st_ykind_name(t->kind));
        if (*mask & (1u << (hit - letters)))
            return f_error(c, t, "key '%s': dimension %s is listed twice", key, t->scalar);
        *mask |= 1u << (hit - letters);
        if (perm && np + 1 < perm_n)
            perm[np++] = t->scalar[0];
    }
    if (perm)
        perm[np] = 0;
    return 0;
}

/* {R: 3, M: 16}: factors fixed here (Timeloop's `factors: [R=3, M=16]`).
 * Each dim's value goes to fixed[d] (above 1), and the dim leaves *allow:
 * no other factor joins it (1 keeps the dim out, as leaving it out of the
 * allow list does). */
static int read_fixed(const fctx *c, const st_ynode *map, const char *key, unsigned *fixed, unsigned *allow)
{
    static const char letters[] = ST_AD_LETTERS;
    const st_ynode *v = f_get(map, key);
    if (!v)
        return 0;
    if (v->kind != ST_Y_MAP)
        return f_error(c, v, "key '%s': expected a mapping of loop dimensions to factors such as {R: 3}, found %s",
                       key, st_ykind_name(v->kind));
    for (size_t k = 0; k < v->n; k++) {
        const char *name = v->keys[k]->scalar;
        const char *hit = strlen(name) == 1 ? strchr(letters, name[0]) : NULL;
        if (!hit || !name[0])
            return f_error(c, v->keys[k], "key '%s': expected one of G, N, M, C, P, Q, R, S, found %s", key, name);
        long long f;
        int rc = f_node_int(c, v->items[k], name, 1, 1 << 24, &f);
        if (rc)
            return rc;
        int d = (int)(hit - letters);
        fixed[d] = f > 1 ? (unsigned)f : 0;
        *allow &= ~(1u << d);
    }
    return 0;
}

static int read_constraints(const fctx *lc, const st_ynode *it, st_mem_level *l)
{
    static const fkey ckeys[] = {
        {"temporal", 0, "dims whose temporal factor may exceed 1"},
        {"permutation", 0, "fixed loop order, innermost first"},
        {"spatial_x", 0, "dims the fan-out below may split along X"},
        {"spatial_y", 0, "dims the fan-out below may split along Y"},
        {"factors", 0, "temporal factors fixed here, {R: 3}"},
        {"spatial_x_factors", 0, "X splits fixed for the fan-out below, {M: 16}"},
        {"spatial_y_factors", 0, "Y splits fixed for the fan-out below, {C: 4}"}};
    const st_ynode *cn = f_get(it, "constraints");
    fctx cc = *lc;
    unsigned pmask = 0;
    int rc;
    l->t_allow = l->sx_allow = l->sy_allow = 0xffu;
    l->t_perm[0] = 0;
    if (l->cls == ST_MEM_FANOUT)
        l->t_allow = 0; /* a fan-out stage holds no data, so no temporal loops */
    if (!cn)
        return 0;
    cc.what = "constraints";
    if ((rc = f_check_map(&cc, cn, ckeys, 7)) ||
        (rc = read_dims(&cc, cn, "temporal", &l->t_allow, NULL, 0)) ||
        (rc = read_dims(&cc, cn, "permutation", &pmask, l->t_perm, sizeof l->t_perm)) ||
        (rc = read_dims(&cc, cn, "spatial_x", &l->sx_allow, NULL, 0)) ||
        (rc = read_dims(&cc, cn, "spatial_y", &l->sy_allow, NULL, 0)) ||
        (rc = read_fixed(&cc, cn, "factors", l->t_fixed, &l->t_allow)) ||
        (rc = read_fixed(&cc, cn, "spatial_x_factors", l->sx_fixed, &l->sx_allow)) ||
        (rc = read_fixed(&cc, cn, "spatial_y_factors", l->sy_fixed, &l->sy_allow)))
        return rc;
    for (int d = 0; d < ST_AD_COUNT; d++)
        if (l->sx_fixed[d] && l->sy_fixed[d])
            return f_error(&cc, f_get(cn, "spatial_y_factors"), "dimension %c is fixed along both X and Y; give "
                           "it one axis", ST_AD_LETTERS[d]);
    if (l->cls == ST_MEM_FANOUT && l->t_allow)
        return f_error(&cc, f_get(cn, "temporal"), "a fanout level holds no data and cannot "
                       "have temporal loops; remove 'temporal'");
    for (int d = 0; d < ST_AD_COUNT; d++)
        if (l->cls == ST_MEM_FANOUT && l->t_fixed[d])
            return f_error(&cc, f_get(cn, "factors"), "a fanout level holds no data and cannot have temporal loops; "
                           "fix its splits with spatial_x_factors or spatial_y_factors");
    return 0;
}

static int read_level(const fctx *lc, const st_ynode *it, st_mem_level *l)
{
    static const char *const classes[] = {"dram", "sram", "regfile", "fanout"};
    static const char *const tensors[] = {"inputs", "weights", "outputs"};
    static const fkey energy_keys[] = {{"read", 1, "pJ"}, {"write", 1, "pJ"},
                                       {"update", 1, "pJ"}, {"leak", 1, "pJ per cycle"}};
    int rc, cls = 0;
    const st_ynode *keeps, *en;
    fctx ec = *lc;
    if ((rc = f_check_map(lc, it, level_keys, sizeof level_keys / sizeof level_keys[0])) ||
        (rc = f_string(lc, it, "name", l->name, sizeof l->name)) ||
        (rc = f_enum(lc, it, "class", classes, 4, &cls)) ||
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
    /* absent: no bandwidth limit; 0 given would stall every access */
    static const char *const bw_keys[2] = {"read_bw_words", "write_bw_words"};
    for (int b = 0; b < 2; b++) {
        const st_ynode *v = f_get(it, bw_keys[b]);
        double bw = b ? l->write_bw_words : l->read_bw_words;
        if (v && bw <= 0)
            return f_error(lc, v, "key '%s': 0 words a cycle would stall every access; give the bandwidth, or "
                                  "leave the key out for no limit", bw_keys[b]);
        /* under a word per 1000 cycles no mapping of a layer finishes in
         * any sensible time (and the search crawls through it) */
        if (v && bw < 1e-3)
            return f_error(lc, v, "key '%s': %g words a cycle is under one word per 1000 cycles; give the level's "
                                  "bandwidth in words per cycle (1e-3 to 1e9)", bw_keys[b], bw);
    }
    if ((rc = read_constraints(lc, it, l)))
        return rc;
    if (l->cls == ST_MEM_FANOUT) {
        static const char *const storage_only[] = {"depth", "width_bits", "word_bits", "banks",
                                                   "read_bw_words", "write_bw_words", "keeps",
                                                   "energy_pj"};
        for (size_t k = 0; k < sizeof storage_only / sizeof storage_only[0]; k++)
            if (f_get(it, storage_only[k]))
                return f_error(lc, f_get(it, storage_only[k]),
                               "key '%s': a fanout level stores nothing; remove the key",
                               storage_only[k]);
        if (l->mesh_x == 0)
            l->mesh_x = l->instances;
        if (l->instances % l->mesh_x != 0)
            return f_error(lc, f_get(it, "mesh_x"),
                           "key 'mesh_x': %d does not divide instances %d", l->mesh_x,
                           l->instances);
        return 0;
    }
    {
        static const char *const needed[] = {"width_bits", "word_bits", "keeps", "energy_pj"};
        for (size_t k = 0; k < sizeof needed / sizeof needed[0]; k++)
            if (!f_get(it, needed[k]))
                return f_error(lc, it, "%s: missing required key '%s' (only a fanout level "
                                       "may omit it)", lc->what, needed[k]);
    }
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
        if (l->keeps[found])
            return f_error(lc, t, "key 'keeps': %s is listed twice; list each tensor the level keeps once",
                           tensors[found]);
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
    if ((rc = f_list(c, root, "levels", ST_ACCEL_MAX_LEVELS, "storage levels, DRAM first",
                     &levels)))
        return rc;
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
        if (st_level_name_reserved(a->level[i].name))
            return f_error(&lc, levels->items[i], "level name '%s' is the energy breakdown's own entry for the "
                           "%s; name the level something else", a->level[i].name,
                           strcmp(a->level[i].name, "mac") == 0 ? "MACs" : "network on chip");
    }
    a->n_levels = (int)levels->n;
    for (int i = 1; i < a->n_levels; i++) {
        const st_mem_level *p = &a->level[i - 1], *l = &a->level[i];
        int px = p->mesh_x ? p->mesh_x : p->instances, lx = l->mesh_x ? l->mesh_x : l->instances;
        int py = p->instances / px, ly = l->instances / lx;
        if (l->instances % p->instances || lx % px || ly % py)
            return f_error(c, levels->items[i],
                           "levels[%d] (%s): %d instances laid out %dx%d cannot sit under "
                           "%d instances of %s laid out %dx%d; each level's X and Y counts "
                           "must be multiples of the level above",
                           i, l->name, l->instances, lx, ly, p->instances, p->name, px, py);
    }
    {
        /* the MACs sit under the innermost level: one PE to each of its
         * instances, laid out as its mesh */
        const st_mem_level *in = &a->level[a->n_levels - 1];
        int ix = in->mesh_x ? in->mesh_x : in->instances;
        if ((long long)a->pe_x * a->pe_y != in->instances || a->pe_x != ix)
            return f_error(c, pe,
                           "pe_array %dx%d does not match the innermost level, %s: %d instances laid out %dx%d, one "
                           "per PE; make pe_array {x: %d, y: %d} or change the levels",
                           a->pe_x, a->pe_y, in->name, in->instances, ix, in->instances / ix, ix,
                           in->instances / ix);
    }
    if (a->level[0].cls == ST_MEM_FANOUT)
        return f_error(c, levels->items[0], "levels[0] (%s) is the backing store and cannot "
                                            "be a fanout level", a->level[0].name);
    /* fixed splits within the fan-out below each level */
    for (int i = 0; i < a->n_levels; i++) {
        const st_mem_level *l = &a->level[i];
        int fx, fy;
        st_accel_fanout(a, i, &fx, &fy);
        long long px = st_alevel_fixed_split(l, 0), py = st_alevel_fixed_split(l, 1);
        if (px > fx || py > fy) {
            const st_ynode *cn = f_get(levels->items[i], "constraints");
            return f_error(c, f_get(cn, px > fx ? "spatial_x_factors" : "spatial_y_factors"),
                           "levels[%d] (%s): its fixed splits take %lld along %c, but the fan-out below it has %d "
                           "there", i, l->name, px > fx ? px : py, px > fx ? 'X' : 'Y', px > fx ? fx : fy);
        }
    }
    for (int t = 0; t < ST_TENSOR_COUNT; t++)
        if (!a->level[0].keeps[t])
            return f_error(c, levels->items[0],
                           "levels[0] (%s) is the backing store and must keep all tensors; "
                           "add %s to its keeps",
                           a->level[0].name, st_tensor_name((st_tensor)t));
    return 0;
}
