/* Screen 4, live results: the Pareto scatter (braille), the front as a list
 * and the selected point's parameters and metrics. */
#include "config.h"
#include "ui/ui.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a metric's name (10) and a formatted value (up to 12) in the detail box */
#define UI_DETAIL_COL 23

static const st_point *selected(ui_app *a, long long *idx)
{
    size_t k = ui_list_current(&a->front_list);
    if (!a->run || k == (size_t)-1 || (long long)k >= a->n_front)
        return NULL;
    long long first;
    const st_point *pts = st_sweep_points(a->run, &first, NULL);
    *idx = a->front[k];
    return &pts[*idx - first];
}

void ui_results_draw(ui_app *a, ui_rect r)
{
    if (!a->sweep) {
        ui_text(r.y + 1, r.x + 2, r.w - 4, UI_BOLD, "No sweep yet: go to the Sweep screen (3), pick a file or "
                "edit the form, press r.");
        return;
    }
    int pw = r.w * 3 / 5, dh = 9;
    ui_rect plot = {r.y, r.x, r.h, pw};
    char title[160];
    st_metric mx = a->sweep->obj[a->plot_x], my = a->sweep->obj[a->plot_y];
    snprintf(title, sizeof title, "%s: %s (up) vs %s (right), evaluate: %s", a->sweep->name, st_metric_name(my),
             st_metric_name(mx), st_sweep_kind_name(a->sweep->kind));
    ui_box(plot, title, 0);
    long long idx = -1;
    const st_point *sel = selected(a, &idx);
    ui_plot p = {a->px, a->py, a->phi, a->pn, NAN, NAN, mx, my};
    if (sel) {
        p.mark_x = sel->m[p.mx];
        p.mark_y = sel->m[p.my];
    }
    ui_plot_draw(&p, (ui_rect){plot.y + 1, plot.x + 1, plot.h - 2, plot.w - 2});
    /* a finished run with no valid point: say why (the first refusal,
     * evaluated again once: a point keeps no text) instead of an empty plot */
    st_sweep_progress pr;
    if (a->run) {
        st_sweep_get_progress(a->run, &pr);
        if (pr.finished && !pr.cancelled && pr.done > 0 && pr.valid > 0 && pr.feasible == 0) {
            /* every point evaluated and every one broke a constraint */
            int w = plot.w - 6, y = plot.y + plot.h / 2 - 1;
            ui_text(plot.y + 1 + (plot.h - 2) / 2, plot.x + 1, plot.w - 2, UI_NORMAL, "%*s", plot.w - 2, "");
            ui_text(y, plot.x + 3, w, ui_attr(UI_C_ERR) | UI_BOLD, "No feasible point: each of the %lld valid points",
                    pr.valid);
            ui_text(y + 1, plot.x + 3, w, UI_NORMAL, "breaks a constraint; relax the constraints on the Sweep screen (3)");
        }
        if (pr.finished && !pr.cancelled && pr.done > 0 && pr.valid == 0) {
            if (!a->why_done) {
                char why[sizeof a->why - 24];
                long long at = st_sweep_first_invalid(a->sweep, a->run, why, sizeof why);
                snprintf(a->why, sizeof a->why, "#%lld: %s", at, why);
                a->why_done = 1;
            }
            int w = plot.w - 6, y = plot.y + plot.h / 2 - 2;
            if (y < plot.y + 1)
                y = plot.y + 1;
            /* over the plot's "(no points yet)" */
            ui_text(plot.y + 1 + (plot.h - 2) / 2, plot.x + 1, plot.w - 2, UI_NORMAL, "%*s", plot.w - 2, "");
            ui_text(y, plot.x + 3, w, ui_attr(UI_C_ERR) | UI_BOLD, "No valid point: all %lld were refused. The first,",
                    pr.done);
            for (size_t off = 0, len = strlen(a->why); off < len && w > 0 && y < plot.y + plot.h - 2; off += (size_t)w)
                ui_text(++y, plot.x + 3, w, UI_NORMAL, "%-*.*s", w, w, a->why + off);
        }
    }
    ui_text(plot.y + plot.h - 1, plot.x + 2, plot.w - 4, ui_attr(UI_C_DIM),
            " %s front  %s other feasible points  x/y: change axes ", ui_utf8 ? "\u28ff" : "*", ui_utf8 ? "\u2801" : ".");
    ui_rect list = {r.y, r.x + pw, r.h - dh, r.w - pw};
    char head[128];
    snprintf(head, sizeof head, "Front, by %s", st_metric_name(a->sweep->obj[0]));
    ui_list_draw(&a->front_list, list, head, 1);
    ui_rect det = {r.y + r.h - dh, r.x + pw, dh, r.w - pw};
    ui_box(det, "Selected point (Enter: breakdown)", 0);
    if (!sel)
        return;
    char lab[256], v[32];
    st_sweep_point_label(a->sweep, idx, lab, sizeof lab);
    ui_text(det.y + 1, det.x + 2, det.w - 4, UI_BOLD, "#%lld %s", idx, lab);
    int row = 2, col = 0;
    /* two columns where each holds a name and a whole value, else one: a
     * value is never cut; the name gives way first */
    int two = det.w >= 2 * UI_DETAIL_COL + 4;
    unsigned defined = st_sweep_kind_metrics(a->sweep->kind);
    for (int m = 0; m < ST_METRIC_COUNT; m++) {
        if (!(defined & (1u << m)))
            continue;
        ui_fmt_metric(v, sizeof v, (st_metric)m, sel->m[m]);
        int cw = two ? (col ? det.w - col - 2 : det.w / 2) - 2 : det.w - 4;
        int lw = cw - (int)strlen(v) - 1;
        if (lw > 10)
            lw = 10;
        if (lw < 0)
            lw = 0;
        if (row < dh - 2) /* inside the box: its last row holds the band, then the border */
            ui_text(det.y + row, det.x + 2 + col, cw, UI_NORMAL, "%-*.*s %s", lw, lw, st_metric_name((st_metric)m), v);
        if (two && !col) {
            col = det.w / 2;
        } else {
            col = 0;
            row++;
        }
    }
    char lo[32], hi[32];
    ui_fmt_metric(lo, sizeof lo, ST_M_LATENCY, sel->lo_s);
    ui_fmt_metric(hi, sizeof hi, ST_M_LATENCY, sel->hi_s);
    ui_text(det.y + dh - 2, det.x + 2, det.w - 4, ui_attr(UI_C_DIM), "latency 90%% band %s .. %s", lo, hi);
}

int ui_results_key(ui_app *a, int key)
{
    if (ui_list_key(&a->front_list, key, LINES / 2))
        return 1;
    switch (key) {
    case 'x':
    case 'y':
        if (a->sweep && a->sweep->n_obj > 1) {
            int *slot = key == 'x' ? &a->plot_x : &a->plot_y, other = key == 'x' ? a->plot_y : a->plot_x;
            if (a->sweep->n_obj == 2) { /* two objectives: swap the axes */
                int t = a->plot_x;
                a->plot_x = a->plot_y;
                a->plot_y = t;
            } else {
                *slot = (*slot + 1) % a->sweep->n_obj;
                if (*slot == other) /* one objective against itself plots nothing */
                    *slot = (*slot + 1) % a->sweep->n_obj;
            }
            ui_poll_sweep(a);
            ui_replot(a);
        }
        return 1;
    case '\n':
    case KEY_ENTER:
        if (a->n_front) {
            a->screen = UI_S_BREAKDOWN;
            a->pane = 0;
        }
        return 1;
    case 'c': ui_cancel(a, "sweep cancelled; the front holds the points finished so far"); return 1;
    case 'r': {
        st_error err;
        st_sweep *s = malloc(sizeof *s);
        if (!s)
            return 1;
        if (ui_form_build(&a->form, s, &err)) {
            free(s);
            ui_error(a, "%s", err.msg);
        } else {
            ui_start_sweep(a, s);
        }
        return 1;
    }
    case 'e': {
        char dir[128];
        snprintf(dir, sizeof dir, "strata-%s", a->sweep ? a->sweep->name : "sweep");
        /* a folder beside the working one, whatever the name holds ('/',
         * '..', spaces): anything but letters, digits, '.', '_' and '-'
         * becomes '-', and so the name never leaves the folder */
        for (char *p = dir; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                  *p == '.' || *p == '_' || *p == '-'))
                *p = '-';
        ui_prompt_open(a, UI_P_EXPORT, "export to folder: ", dir);
        return 1;
    }
    default: return 0;
    }
}
