/* The serving view of a selected serve point (screen 5 for serve sweeps):
 * TTFT and TPOT distributions as histograms with their cumulative share
 * (the CDF), KV-cache use and the running/waiting queues over time, and SLO
 * goodput. The throughput-vs-latency front across QPS is the Results
 * screen's scatter (objectives latency and throughput). */
#include "config.h"
#include "ui/ui.h"

#include <math.h>
#include <stdlib.h>

/* rows of a log histogram: bins merged to fit h rows; label = lower edge */
static void draw_hist(ui_rect r, const char *title, const st_serve_summary *s, int which, const st_dist *d)
{
    ui_box(r, title, 0);
    char p50[32], p90[32], p99[32], mean[32];
    ui_fmt_metric(mean, sizeof mean, ST_M_LATENCY, d->mean);
    ui_fmt_metric(p50, sizeof p50, ST_M_LATENCY, d->p50);
    ui_fmt_metric(p90, sizeof p90, ST_M_LATENCY, d->p90);
    ui_fmt_metric(p99, sizeof p99, ST_M_LATENCY, d->p99);
    ui_text(r.y + 1, r.x + 2, r.w - 4, UI_BOLD, "mean %s  p50 %s  p90 %s  p99 %s", mean, p50, p90, p99);
    int rows = r.h - 4;
    if (rows < 1 || !(s->hist_hi[which] > 0))
        return;
    int per = (ST_SERVE_HIST + rows - 1) / rows, n = (ST_SERVE_HIST + per - 1) / per;
    unsigned total = 0, mx = 0;
    for (int b = 0; b < ST_SERVE_HIST; b++)
        total += s->hist[which][b];
    for (int g = 0; g < n; g++) {
        unsigned c = 0;
        for (int b = g * per; b < (g + 1) * per && b < ST_SERVE_HIST; b++)
            c += s->hist[which][b];
        if (c > mx)
            mx = c;
    }
    ui_text(r.y + 2, r.x + 2, r.w - 4, ui_attr(UI_C_DIM), "%10s %6s %6s  %s", "from", "n", "cdf", "requests");
    double lo = s->hist_lo[which], span = log(s->hist_hi[which] / lo);
    unsigned cum = 0;
    for (int g = 0; g < n && g < rows; g++) {
        unsigned c = 0;
        for (int b = g * per; b < (g + 1) * per && b < ST_SERVE_HIST; b++)
            c += s->hist[which][b];
        cum += c;
        char edge[32];
        ui_fmt_metric(edge, sizeof edge, ST_M_LATENCY, lo * exp(span * (double)(g * per) / ST_SERVE_HIST));
        ui_text(r.y + 3 + g, r.x + 2, 26, UI_NORMAL, "%10s %6u %5.1f%%", edge, c, total ? 100.0 * cum / total : 0);
        if (mx > 0 && r.w > 32)
            ui_bar(r.y + 3 + g, r.x + 28, r.w - 30, (double)c / mx, ui_attr(UI_C_OK));
    }
}

void ui_serving_draw(ui_app *a, ui_rect r)
{
    const st_serve_summary *s = &a->detail->serve;
    char thr[32], good[32], dur[32];
    ui_fmt_metric(thr, sizeof thr, ST_M_THROUGHPUT, s->throughput_tok_s);
    ui_fmt_metric(good, sizeof good, ST_M_GOODPUT, s->goodput_req_s);
    ui_fmt_metric(dur, sizeof dur, ST_M_LATENCY, s->duration_s);
    ui_text(r.y, r.x + 1, r.w - 2, UI_BOLD,
            "%zu requests in %s: %s output tokens, goodput %s (%.1f%% meet the SLOs), %lld preemptions, MFU %.1f%%",
            s->n_requests, dur, thr, good, 100 * s->slo_attainment, s->preemptions, 100 * s->mfu);
    ui_text(r.y + 1, r.x + 1, r.w - 2, ui_attr(UI_C_DIM),
            "KV cache %lld blocks, peak use %.1f%%; prefix hits %.1f%% of prompt tokens%s", s->kv_blocks,
            100 * s->kv_peak_frac, 100 * s->prefix_hit_ratio, s->spec_tokens_per_step > 0 ? "; speculative" : "");
    int top = r.h * 3 / 5;
    if (top < 8)
        top = r.h - 2;
    ui_rect h1 = {r.y + 2, r.x, top - 2, r.w / 2};
    ui_rect h2 = {r.y + 2, r.x + r.w / 2, top - 2, r.w - r.w / 2};
    draw_hist(h1, "TTFT (time to first token)", s, 0, &s->ttft);
    draw_hist(h2, "TPOT (per output token after the first)", s, 1, &s->tpot);
    ui_rect kv = {r.y + top, r.x, r.h - top, r.w};
    if (kv.h < 5 || s->n_kv < 2)
        return;
    ui_box(kv, "KV-cache use over time (replica 0)", 0);
    double x[ST_SERVE_KV_POINTS], y[ST_SERVE_KV_POINTS];
    int run_max = 0, wait_max = 0;
    for (int i = 0; i < s->n_kv; i++) {
        x[i] = s->kv_t[i];
        y[i] = s->kv_used[i];
        run_max = s->kv_running[i] > run_max ? s->kv_running[i] : run_max;
        wait_max = s->kv_waiting[i] > wait_max ? s->kv_waiting[i] : wait_max;
    }
    ui_text(kv.y + 1, kv.x + 2, kv.w - 4, ui_attr(UI_C_DIM), "most running %d, most waiting %d", run_max,
            wait_max);
    ui_plot p = {x, y, NULL, (size_t)s->n_kv, NAN, NAN, ST_M_LATENCY, ST_M_MFU};
    ui_rect pr = {kv.y + 2, kv.x + 1, kv.h - 3, kv.w - 2};
    ui_plot_draw(&p, pr);
}
