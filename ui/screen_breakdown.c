/* Screen 5, breakdowns of the selected front point: per-layer latency with
 * error bars and each layer's share of the total error (gpu), energy per
 * component and per layer as stacked bars (accel), the parts of a training
 * iteration and its memory (train); serve points open the serving view
 * (screen_serving.c). */
#include "config.h"
#include "ui/ui.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *layer_label(void *ctx, size_t i, char *buf, size_t n)
{
    ui_app *a = ctx;
    snprintf(buf, n, "%s", a->detail->layers[i].name);
    return buf;
}

static void *detail_worker(void *arg)
{
    ui_detail_job *j = arg;
    st_point pt;
    j->rc = st_sweep_eval(j->sweep, j->idx, &pt, j->out, &j->err);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int ui_detail_job_done(const ui_detail_job *j)
{
    return __atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
}

void ui_detail_job_free(ui_detail_job *j)
{
    if (!j)
        return;
    pthread_join(j->tid, NULL);
    free(j->out);
    free(j);
}

void ui_detail_request(ui_app *a, long long idx)
{
    if (idx != a->detail_failed)
        a->detail_failed = -1; /* another point asked for: a failed one may be tried again later */
    a->detail_want = idx;
    if (idx < 0 || idx == a->detail_idx || idx == a->detail_failed || a->job || !a->sweep)
        return; /* there, refused, or next once the running job is in */
    ui_detail_job *j = calloc(1, sizeof *j);
    st_detail *out = j ? calloc(1, sizeof *out) : NULL;
    if (!out) {
        free(j);
        a->detail_failed = idx;
        ui_error(a, "out of memory for point #%lld's breakdown", idx);
        return;
    }
    j->sweep = a->sweep;
    j->idx = idx;
    j->out = out;
    st_error_clear(&j->err);
    if (pthread_create(&j->tid, NULL, detail_worker, j) != 0) {
        free(out);
        free(j);
        a->detail_failed = idx;
        ui_error(a, "cannot start a thread for point #%lld's breakdown", idx);
        return;
    }
    a->job = j;
}

void ui_poll_detail(ui_app *a)
{
    ui_detail_job *j = a->job;
    if (!j || !ui_detail_job_done(j))
        return;
    a->job = NULL;
    if (j->rc) {
        a->detail_failed = j->idx; /* not evaluated again until another point is asked for */
        ui_error(a, "%s", j->err.msg);
    } else {
        st_detail *old = a->detail;
        a->detail = j->out;
        j->out = old;
        a->detail_idx = j->idx;
        st_error err;
        ui_list_set(&a->layer_list, a->detail->n_layers, layer_label, a, &err);
    }
    ui_detail_job_free(j);
    if (a->detail_want >= 0 && a->detail_want != a->detail_idx)
        ui_detail_request(a, a->detail_want);
}

/* the point under the Results screen's cursor, asked for */
static void ensure_detail(ui_app *a)
{
    size_t k = ui_list_current(&a->front_list);
    if (!a->sweep || k == (size_t)-1 || (long long)k >= a->n_front)
        return;
    ui_detail_request(a, a->front[k]);
}

/* z of the two-sided 90% band of a normal spread, as compose's lo/hi use */
#define Z90 1.645

static void draw_gpu(ui_app *a, ui_rect r)
{
    const st_detail *d = a->detail;
    const st_step *s = &d->step;
    double tmax = 0;
    for (size_t i = 0; i < d->n_layers; i++)
        tmax = fmax(tmax, d->layers[i].time_s + Z90 * d->layers[i].sd_s);
    ui_text(r.y, r.x + 1, r.w - 2, ui_attr(UI_C_DIM), "%-22s %11s %9s %7s  %s", "layer", "time", "+-sd", "err%",
            "time with 90% error bar (share of the total error)");
    int bw = r.w - 55;
    ui_list *l = &a->layer_list;
    int h = r.h - 4;
    ui_list_scroll(l, h);
    for (int row = 0; row < h && l->top + (size_t)row < l->n_vis; row++) {
        size_t k = l->top + (size_t)row, i = l->vis[k];
        const st_detail_layer *x = &d->layers[i];
        char t[32], sd[32];
        ui_fmt_metric(t, sizeof t, ST_M_LATENCY, x->time_s);
        ui_fmt_metric(sd, sizeof sd, ST_M_LATENCY, x->sd_s);
        int at = k == l->sel ? ui_attr(UI_C_SEL) : UI_NORMAL;
        ui_text(r.y + 1 + row, r.x + 1, 53, at, "%-22.22s %11s %9s %6.1f%%", x->name, t, sd, 100 * x->err_share);
        if (bw > 8 && tmax > 0) {
            ui_bar(r.y + 1 + row, r.x + 55, bw, x->time_s / tmax, ui_attr(UI_C_OK));
            int lo = (int)floor(fmax(0, x->time_s - Z90 * x->sd_s) / tmax * bw);
            int hi = (int)floor((x->time_s + Z90 * x->sd_s) / tmax * bw);
            if (hi > lo && hi < bw) {
                attron(ui_attr(UI_C_FRONT) | UI_BOLD);
                mvaddstr(r.y + 1 + row, r.x + 55 + hi, ui_utf8 ? "\u2524" : "|");
                if (lo < (int)floor(x->time_s / tmax * bw))
                    mvaddstr(r.y + 1 + row, r.x + 55 + lo, ui_utf8 ? "\u251c" : "|");
                attroff(ui_attr(UI_C_FRONT) | UI_BOLD);
            }
        }
    }
    char tot[32], lo[32], hi[32], ulo[32], uhi[32];
    ui_fmt_metric(tot, sizeof tot, ST_M_LATENCY, s->total_s);
    ui_fmt_metric(lo, sizeof lo, ST_M_LATENCY, s->lo_s);
    ui_fmt_metric(hi, sizeof hi, ST_M_LATENCY, s->hi_s);
    ui_fmt_metric(ulo, sizeof ulo, ST_M_LATENCY, s->lo_unc_s);
    ui_fmt_metric(uhi, sizeof uhi, ST_M_LATENCY, s->hi_unc_s);
    ui_text(r.y + r.h - 3, r.x + 1, r.w - 2, UI_BOLD, "total %s   90%% band %s .. %s (errors correlated: the default)",
            tot, lo, hi);
    ui_text(r.y + r.h - 2, r.x + 1, r.w - 2, UI_NORMAL,
            "uncorrelated band %s .. %s   GPU busy %.1f%%, idle on the host %.1f%%, %lld kernels", ulo, uhi,
            100 * s->kernel_s / s->total_s, 100 * s->idle_s / s->total_s, s->kernels);
}

static void draw_accel(ui_app *a, ui_rect r)
{
    const st_detail *d = a->detail;
    double tot = 0, emax = 0;
    for (int c = 0; c < ST_AC_COUNT; c++)
        tot += d->energy[c];
    for (size_t i = 0; i < d->n_layers; i++) {
        double e = 0;
        for (int c = 0; c < ST_AC_COUNT; c++)
            e += d->layers[i].energy[c];
        emax = fmax(emax, e);
    }
    int x = r.x + 1;
    ui_text(r.y, x, r.w - 2, UI_BOLD, "energy by component:");
    x += 22;
    int right = r.x + r.w - 1; /* the box's right border */
    for (int c = 0; c < ST_AC_COUNT; c++) {
        /* an entry that does not fit before the border is left out, as are
         * the ones after it (a narrow terminal shows the first few) */
        char ent[48];
        snprintf(ent, sizeof ent, "%s %.1f%%", st_acomp_name(c), tot > 0 ? 100 * d->energy[c] / tot : 0);
        if (x + 3 + (int)strlen(ent) > right)
            break;
        double part[ST_AC_COUNT] = {0};
        part[c] = 1;
        ui_stacked(r.y, x, 2, part, ST_AC_COUNT, 1);
        ui_text(r.y, x + 3, right - x - 3, UI_NORMAL, "%s", ent);
        x += 8 + (int)strlen(st_acomp_name(c)) + 4;
    }
    ui_stacked(r.y + 1, r.x + 1, r.w - 2, d->energy, ST_AC_COUNT, tot);
    ui_text(r.y + 2, r.x + 1, r.w - 2, ui_attr(UI_C_DIM), "%-24s %5s %11s %11s  %s", "layer", "x", "energy", "time",
            "energy per component (stacked, scaled to the largest layer)");
    ui_list *l = &a->layer_list;
    int h = r.h - 4, bw = r.w - 58;
    ui_list_scroll(l, h);
    for (int row = 0; row < h && l->top + (size_t)row < l->n_vis; row++) {
        size_t k = l->top + (size_t)row, i = l->vis[k];
        const st_detail_layer *y = &d->layers[i];
        double e = 0;
        for (int c = 0; c < ST_AC_COUNT; c++)
            e += y->energy[c];
        char es[32], ts[32];
        ui_fmt_metric(es, sizeof es, ST_M_ENERGY, e);
        ui_fmt_metric(ts, sizeof ts, ST_M_LATENCY, y->time_s);
        ui_text(r.y + 3 + row, r.x + 1, 56, k == l->sel ? ui_attr(UI_C_SEL) : UI_NORMAL, "%-24.24s %5.0f %11s %11s",
                y->name, y->count, es, ts);
        if (bw > 4 && emax > 0)
            ui_stacked(r.y + 3 + row, r.x + 57, (int)floor(bw * e / emax + 0.5), y->energy, ST_AC_COUNT, e);
    }
}

static void draw_train(ui_app *a, ui_rect r)
{
    const st_train_result *t = &a->detail->train;
    struct { const char *name; double v; } parts[] = {
        {"forward (1 microbatch)", t->fwd_s}, {"backward (1 microbatch)", t->bwd_s},
        {"TP all-reduce, exposed", t->tp_s}, {"CP ring, exposed", t->cp_s}, {"EP all-to-all", t->ep_s},
        {"PP send/recv", t->pp_s}, {"DP reduction, total", t->dp_s}, {"DP reduction, exposed", t->dp_exposed_s},
        {"ZeRO gathers, exposed", t->zero_s}, {"optimizer step", t->optimizer_s},
        {"bubble", t->bubble_fraction * t->iteration_s},
    };
    double mx = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        mx = fmax(mx, parts[i].v);
    char v[32];
    ui_fmt_metric(v, sizeof v, ST_M_LATENCY, t->iteration_s);
    ui_text(r.y, r.x + 1, r.w - 2, UI_BOLD, "iteration %s on %d GPUs, MFU %.1f%%, %.0f tokens/s, bubble %.1f%%", v,
            t->gpus, 100 * t->mfu, t->tokens_per_s, 100 * t->bubble_fraction);
    for (size_t i = 0; i < sizeof parts / sizeof *parts && (int)i < r.h - 6; i++) {
        ui_fmt_metric(v, sizeof v, ST_M_LATENCY, parts[i].v);
        ui_text(r.y + 2 + (int)i, r.x + 1, 38, UI_NORMAL, "%-25s %11s", parts[i].name, v);
        if (mx > 0)
            ui_bar(r.y + 2 + (int)i, r.x + 39, r.w - 41, parts[i].v / mx, ui_attr(UI_C_OK));
    }
    const st_train_mem *m = &t->mem;
    double mem[5] = {m->weights, m->grads, m->optimizer, m->activations, m->logits + m->buffers};
    int y = r.y + r.h - 3;
    char tot[32], cap[32];
    ui_fmt_metric(tot, sizeof tot, ST_M_MEMORY, m->total);
    ui_fmt_metric(cap, sizeof cap, ST_M_MEMORY, m->capacity);
    ui_text(y, r.x + 1, r.w - 2, m->oom ? ui_attr(UI_C_ERR) : UI_BOLD,
            "memory per GPU %s of %s%s: weights, grads, optimizer, activations, logits+buffers", tot, cap,
            m->oom ? " OUT OF MEMORY" : "");
    ui_stacked(y + 1, r.x + 1, (int)floor((r.w - 2) * fmin(1, m->total / fmax(m->capacity, m->total))), mem, 5,
               m->total);
}

void ui_breakdown_draw(ui_app *a, ui_rect r)
{
    ensure_detail(a);
    if (a->detail_want >= 0 && a->detail_want == a->detail_failed && !a->job) {
        ui_box(r, "Breakdown (Esc: back to results)", 1);
        ui_text(r.y + 1, r.x + 2, r.w - 4, UI_BOLD, "point #%lld: its breakdown could not be evaluated (the "
                "error panel said why); pick another point", a->detail_want);
        return;
    }
    if (a->job || (a->detail_want >= 0 && a->detail_want != a->detail_idx)) {
        /* the keys and signals stay live while it runs (a serving point of
         * many requests takes seconds) */
        ui_box(r, "Breakdown (Esc: back to results)", 1);
        ui_text(r.y + 1, r.x + 2, r.w - 4, UI_BOLD, "evaluating point #%lld with its breakdown ...",
                a->job ? a->job->idx : a->detail_want);
        return;
    }
    if (a->detail_idx < 0) {
        ui_text(r.y + 1, r.x + 2, r.w - 4, UI_BOLD, "Pick a point on the Results screen (4) and press Enter.");
        return;
    }
    char lab[256];
    st_sweep_point_label(a->sweep, a->detail_idx, lab, sizeof lab);
    ui_box(r, "Breakdown (Esc: back to results)", 1);
    ui_text(r.y + 1, r.x + 2, r.w - 4, UI_BOLD, "#%lld %s", a->detail_idx, lab);
    ui_text(r.y + 2, r.x + 2, r.w - 4, ui_attr(UI_C_DIM), "%s", a->detail->note);
    ui_rect body = {r.y + 4, r.x + 1, r.h - 5, r.w - 2};
    switch (a->detail->kind) {
    case ST_SWEEP_GPU: draw_gpu(a, body); break;
    case ST_SWEEP_ACCEL: draw_accel(a, body); break;
    case ST_SWEEP_TRAIN: draw_train(a, body); break;
    case ST_SWEEP_SERVE: ui_serving_draw(a, body); break;
    default: break;
    }
}

int ui_breakdown_key(ui_app *a, int key)
{
    return ui_list_key(&a->layer_list, key, LINES / 2);
}
