/* Design changes a sweep makes to an accelerator preset (the PE array, the
 * size of a storage level), and energy by component class. */
#include "config.h"
#include "accel/accel.h"

#include <math.h>
#include <string.h>

/* An extent that spans the whole array follows it; 1 stays 1; an inner
 * grouping (Simba's 4 weight buffers per PE) stays if it still divides. */
static int new_extent(int extent, int old_pe, int new_pe, int *out)
{
    if (extent == old_pe)
        *out = new_pe;
    else if (extent == 1)
        *out = 1;
    else if (new_pe % extent == 0)
        *out = extent;
    else
        return -1;
    return 0;
}

int st_accel_resize_pe(st_accel *a, int pe_x, int pe_y, st_error *err)
{
    if (pe_x < 1 || pe_y < 1)
        return st_error_set(err, ST_EINVAL, "PE array %dx%d: both sides must be >= 1", pe_x, pe_y);
    st_accel b = *a;
    for (int i = 0; i < b.n_levels; i++) {
        st_mem_level *l = &b.level[i];
        int lx = l->mesh_x ? l->mesh_x : l->instances, ly = l->instances / lx, nx, ny;
        if (new_extent(lx, a->pe_x, pe_x, &nx) || new_extent(ly, a->pe_y, pe_y, &ny))
            return st_error_set(err, ST_EINVAL, "%s: level %s is laid out %dx%d, which a %dx%d PE array "
                                "cannot keep (pick sides that are multiples of it)",
                                a->id, l->name, lx, ly, pe_x, pe_y);
        l->instances = nx * ny;
        if (l->mesh_x)
            l->mesh_x = nx;
    }
    b.pe_x = pe_x;
    b.pe_y = pe_y;
    *a = b;
    return 0;
}

/* Per-access energy of an SRAM or register file grows about as the square
 * root of its capacity (bit-line and word-line length of a square array, the
 * first-order CACTI scaling); leakage grows with the cells, linearly. */
int st_accel_scale_level(st_accel *a, int i, double depth, st_error *err)
{
    if (i < 0 || i >= a->n_levels)
        return st_error_set(err, ST_EINVAL, "no storage level %d", i);
    st_mem_level *l = &a->level[i];
    if (l->cls == ST_MEM_DRAM || l->cls == ST_MEM_FANOUT || l->depth <= 0)
        return st_error_set(err, ST_EINVAL, "level %s has no size to change", l->name);
    long long d = (long long)llround(depth);
    if (d < 1)
        d = 1;
    double f = (double)d / (double)l->depth;
    l->e_read *= sqrt(f);
    l->e_write *= sqrt(f);
    l->e_update *= sqrt(f);
    l->e_leak *= f;
    l->depth = d;
    return 0;
}

static const char *const comp_names[ST_AC_COUNT] = {"dram", "global_buffer", "scratchpads", "mac", "noc"};
const char *st_acomp_name(int c) { return c >= 0 && c < ST_AC_COUNT ? comp_names[c] : "?"; }

void st_astats_components(const st_accel *a, const st_astats *s, double *c)
{
    memset(c, 0, ST_AC_COUNT * sizeof *c);
    c[ST_AC_MAC] = s->e_mac;
    c[ST_AC_NOC] = s->e_noc;
    for (int i = 0; i < s->n; i++) {
        switch (a->level[i].cls) {
        case ST_MEM_DRAM: c[ST_AC_DRAM] += s->lv[i].energy_total; break;
        case ST_MEM_SRAM: c[ST_AC_GLB] += s->lv[i].energy_total; break;
        case ST_MEM_REGFILE: c[ST_AC_SPAD] += s->lv[i].energy_total; break;
        case ST_MEM_FANOUT: break;
        }
    }
}
