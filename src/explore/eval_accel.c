/* The accel evaluator: every MAC layer of a workload mapped onto an
 * accelerator preset (PE array, buffer sizes and clock changed as the point
 * says), the mapper searching a fixed budget per layer with a fixed seed. */
#include "config.h"
#include "explore/evaluators.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Mapping budget per distinct layer: a sweep trades depth of search for
 * points. Measured on eyeriss-like, ResNet-50: 3000 gives a network EDP 5.8%
 * above strata accel's full search (0.355 vs 0.336 mJ*s, ~70k mappings per
 * layer); 2000 gives 30% above. */
#define DEFAULT_MAPPER_EVALS 3000

static int apply_hw(st_accel *a, const st_pvalue *const *v, st_error *err)
{
    if (v[ST_P_PE_X] || v[ST_P_PE_Y]) {
        int x = v[ST_P_PE_X] ? (int)v[ST_P_PE_X]->num : a->pe_x;
        int y = v[ST_P_PE_Y] ? (int)v[ST_P_PE_Y]->num : a->pe_y;
        int rc = st_accel_resize_pe(a, x, y, err);
        if (rc)
            return rc;
    }
    if (v[ST_P_GLB_KIB]) {
        int i = 0;
        while (i < a->n_levels && a->level[i].cls != ST_MEM_SRAM)
            i++;
        if (i == a->n_levels)
            return st_error_set(err, ST_EINVAL, "%s has no SRAM level for glb_kib", a->id);
        double rows = v[ST_P_GLB_KIB]->num * 1024 * 8 / a->level[i].width_bits;
        int rc = st_accel_scale_level(a, i, rows, err);
        if (rc)
            return rc;
    }
    if (v[ST_P_SPAD_SCALE]) {
        for (int i = 0; i < a->n_levels; i++)
            if (a->level[i].cls == ST_MEM_REGFILE) {
                int rc = st_accel_scale_level(a, i, (double)a->level[i].depth * v[ST_P_SPAD_SCALE]->num, err);
                if (rc)
                    return rc;
            }
    }
    if (v[ST_P_CLOCK_MHZ])
        a->clock_hz = v[ST_P_CLOCK_MHZ]->num * 1e6;
    return 0;
}

typedef struct mapped {
    st_aprob p;
    double energy, cycles, macs, comp[ST_AC_COUNT];
} mapped;

/* On-chip storage: every level but DRAM, all instances. */
static double onchip_bytes(const st_accel *a)
{
    double b = 0;
    for (int i = 0; i < a->n_levels; i++) {
        const st_mem_level *l = &a->level[i];
        if (l->cls == ST_MEM_SRAM || l->cls == ST_MEM_REGFILE)
            b += (double)l->depth * l->width_bits / 8.0 * l->instances;
    }
    return b;
}

static void add_layer(st_detail *d, const char *name, double t, const double *comp, double rep)
{
    size_t i = d->n_layers;
    if (i == ST_DETAIL_MAX_LAYERS) {
        i = ST_DETAIL_MAX_LAYERS - 1; /* fold the rest into the last row */
        snprintf(d->layers[i].name, sizeof d->layers[i].name, "other");
    } else {
        snprintf(d->layers[i].name, sizeof d->layers[i].name, "%s", name);
        d->n_layers++;
    }
    d->layers[i].time_s += t * rep;
    d->layers[i].count += rep;
    for (int c = 0; c < ST_AC_COUNT; c++)
        d->layers[i].energy[c] += comp[c] * rep;
}

int st_explore_eval_accel(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                          st_error *err)
{
    st_accel a = s->accels[v[ST_P_ARCH]->obj];
    const st_model *m = &s->models[v[ST_P_WORKLOAD]->obj];
    int rc = apply_hw(&a, v, err);
    if (rc)
        return rc;
    st_gen_opts o;
    st_gen_opts_default(&o, m);
    o.attn = ST_ATTN_EAGER; /* attention as its two batched GEMMs */
    if (v[ST_P_PHASE])
        o.phase = (st_phase)v[ST_P_PHASE]->num;
    if (o.phase == ST_PHASE_TRAIN)
        return st_error_set(err, ST_EINVAL, "the accelerator layer maps inference (prefill or decode) layers");
    if (o.phase == ST_PHASE_DECODE && m->kind != ST_MODEL_TRANSFORMER) /* as `strata accel` says it */
        return st_error_set(err, ST_EINVAL, "phase decode: %s is a CNN, which has no decode phase; use phase "
                            "prefill (inference)", m->id);
    if (v[ST_P_BATCH])
        o.batch = (long long)v[ST_P_BATCH]->num;
    if (v[ST_P_SEQ])
        o.seq = (long long)v[ST_P_SEQ]->num;
    if (v[ST_P_KV])
        o.kv_len = (long long)v[ST_P_KV]->num;
    else if (o.phase == ST_PHASE_DECODE)
        o.kv_len = o.seq - 1;
    st_mapper_opts mo;
    st_mapper_opts_default(&mo);
    mo.threads = 1; /* the sweep's pool is the parallelism */
    mo.budget_s = 0;
    mo.max_evals = v[ST_P_MAPPER_EVALS] ? (long long)v[ST_P_MAPPER_EVALS]->num : DEFAULT_MAPPER_EVALS;
    if (v[ST_P_SEED])
        mo.seed = (unsigned long long)v[ST_P_SEED]->num;
    if (v[ST_P_OBJECTIVE])
        mo.objective = (st_aobj)v[ST_P_OBJECTIVE]->num;
    st_oplist ops = {0, 0, NULL};
    if ((rc = st_model_ops(m, &o, &ops, err)))
        return rc;
    mapped *done = calloc(ops.n ? ops.n : 1, sizeof *done);
    st_mapper_result *r = malloc(sizeof *r);
    if (!done || !r) {
        free(done);
        free(r);
        st_oplist_free(&ops);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    size_t nd = 0;
    double energy = 0, cycles = 0, macs = 0;
    for (size_t i = 0; i < ops.n && !rc; i++) {
        st_aprob p;
        if (ops.ops[i].pass != ST_PASS_FWD || st_aprob_from_op(&ops.ops[i], &p, NULL))
            continue; /* vector ops run outside the MAC array */
        size_t k = 0;
        while (k < nd && !st_aprob_equal(&done[k].p, &p))
            k++;
        if (k == nd) {
            if ((rc = st_accel_map(&a, &p, &mo, r, err))) {
                st_error_prefix(err, "layer %s", ops.ops[i].name);
                break;
            }
            done[nd].p = p;
            done[nd].energy = r->stats.energy;
            done[nd].cycles = r->stats.cycles;
            done[nd].macs = r->stats.macs;
            st_astats_components(&a, &r->stats, done[nd].comp);
            nd++;
        }
        double rep = (double)(ops.ops[i].repeat > 0 ? ops.ops[i].repeat : 1);
        energy += rep * done[k].energy;
        cycles += rep * done[k].cycles;
        macs += rep * done[k].macs;
        if (d) {
            add_layer(d, ops.ops[i].name, done[k].cycles / a.clock_hz, done[k].comp, rep);
            for (int c = 0; c < ST_AC_COUNT; c++)
                d->energy[c] += rep * done[k].comp[c];
        }
    }
    free(done);
    free(r);
    st_oplist_free(&ops);
    if (rc)
        return rc;
    if (!(cycles > 0))
        return st_error_set(err, ST_EINVAL, "%s has no layer the accelerator maps", m->id);
    double t = cycles / a.clock_hz, pes = (double)a.pe_x * a.pe_y;
    pt->m[ST_M_LATENCY] = t;
    pt->lo_s = pt->hi_s = t; /* the loop-nest model is exact for its mapping */
    pt->m[ST_M_ENERGY] = energy;
    pt->m[ST_M_EDP] = energy * t;
    pt->m[ST_M_THROUGHPUT] = (double)o.batch / t;
    pt->m[ST_M_MEMORY] = onchip_bytes(&a);
    pt->m[ST_M_COST] = pes * t / (double)o.batch; /* PE-seconds per inference */
    pt->m[ST_M_MFU] = macs / (cycles * pes * a.macs_per_pe);
    pt->fits = 1; /* DRAM is unbounded in the accelerator model */
    if (d)
        snprintf(d->note, sizeof d->note, "%s on %s (%dx%d PEs, %.0f MHz), batch %lld, %lld mappings/layer",
                 m->id, a.id, a.pe_x, a.pe_y, a.clock_hz * 1e-6, o.batch, mo.max_evals);
    return 0;
}
