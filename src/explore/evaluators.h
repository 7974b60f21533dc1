/* Private to explore/: the evaluators behind the sweep table. Each reads the
 * point's parameter values (NULL: not given, use the default), fills the
 * point's metrics and, when asked, the detail. A return of ST_EINVAL marks the
 * point invalid with the reason in err. */
#ifndef STRATA_EXPLORE_EVALUATORS_H
#define STRATA_EXPLORE_EVALUATORS_H

#include "explore/explore.h"

int st_explore_eval_gpu(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                        st_error *err);
int st_explore_eval_accel(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                          st_error *err);
int st_explore_eval_serve(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                          st_error *err);
int st_explore_eval_train(const st_sweep *s, const st_pvalue *const *v, st_point *pt, st_detail *d,
                          st_error *err);

/* GPU board energy over a step of total_s seconds of which busy_s keep the
 * GPU computing: idle draw all the time plus (TDP - idle) while busy; NAN
 * without a TDP. An envelope, not a fitted power model (no power data in
 * ../shared/data). The idle draw is an assumption, ST_GPU_IDLE_FRACTION of
 * TDP: NVIDIA's A100 SXM4 datasheet-class boards idle at roughly 50-60 W of
 * 400 W in nvidia-smi, H100 SXM at roughly 70-100 W of 700 W. */
#define ST_GPU_IDLE_FRACTION 0.15

/* The cancel flag of the sweep run whose worker evaluates the point on this
 * thread (NULL outside a run): long evaluators poll it and return
 * ST_ECANCELED, which the pool takes as a stop, not a failure. */
const int *st_explore_cancel_flag(void);
void st_explore_set_cancel_flag(const int *flag);
double st_explore_gpu_energy(double tdp_w, double total_s, double busy_s);

#endif
