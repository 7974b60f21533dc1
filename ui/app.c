/* The application: terminal set-up and restore, the event loop (keyboard and
 * sweep queue polled together), screens and panes, prompt, error panel. */
#include "config.h"
#include "cli/cli.h"
#include "ui/ui.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;
static const char *const screen_names[UI_S_COUNT] = {"Presets", "Workloads", "Sweep", "Results", "Breakdown",
                                                      "Parallel"};

int ui_attr(int c)
{
    if (ui_colour && c > 0)
        return (int)COLOR_PAIR(c);
    switch (c) {
    case UI_C_SEL: return UI_REVERSE;
    case UI_C_TITLE:
    case UI_C_FRONT:
    case UI_C_ERR: return UI_BOLD;
    case UI_C_DIM: return UI_DIM;
    case UI_C_BAR1:
    case UI_C_BAR2:
    case UI_C_BAR3:
    case UI_C_BAR4:
    case UI_C_BAR5: return UI_REVERSE;
    default: return UI_NORMAL;
    }
}

static void colours_init(void)
{
    const char *nc = getenv("NO_COLOR");
    ui_colour = has_colors() && !(nc && *nc);
    if (!ui_colour)
        return;
    start_color();
    use_default_colors();
    init_pair(UI_C_TITLE, COLOR_CYAN, -1);
    init_pair(UI_C_SEL, COLOR_BLACK, COLOR_CYAN);
    init_pair(UI_C_FRONT, COLOR_YELLOW, -1);
    init_pair(UI_C_DIM, COLOR_BLUE, -1);
    init_pair(UI_C_ERR, COLOR_WHITE, COLOR_RED);
    init_pair(UI_C_OK, COLOR_GREEN, -1);
    init_pair(UI_C_BAR1, COLOR_RED, -1);
    init_pair(UI_C_BAR2, COLOR_YELLOW, -1);
    init_pair(UI_C_BAR3, COLOR_GREEN, -1);
    init_pair(UI_C_BAR4, COLOR_CYAN, -1);
    init_pair(UI_C_BAR5, COLOR_MAGENTA, -1);
}

void ui_error(ui_app *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->error, sizeof a->error, fmt, ap);
    va_end(ap);
}

void ui_status(ui_app *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
}

void ui_prompt_open(ui_app *a, ui_prompt_kind k, const char *label, const char *initial)
{
    a->prompt = k;
    snprintf(a->prompt_label, sizeof a->prompt_label, "%s", label);
    snprintf(a->prompt_buf, sizeof a->prompt_buf, "%s", initial ? initial : "");
    a->prompt_len = strlen(a->prompt_buf);
}

ui_list *ui_focused_list(ui_app *a)
{
    switch (a->screen) {
    case UI_S_PRESETS: return &a->hw_list;
    case UI_S_WORKLOADS: return a->pane ? &a->ops_list : &a->wl_list;
    case UI_S_SWEEP: return a->pane ? &a->form_list : &a->file_list;
    case UI_S_RESULTS: return &a->front_list;
    case UI_S_BREAKDOWN: return &a->layer_list;
    default: return NULL;
    }
}

/* ---- the sweep ------------------------------------------------------------------ */
static void retire(ui_app *a)
{
    ui_detail_job *job = a->job; /* a breakdown still being evaluated reads the sweep too */
    a->job = NULL;
    a->detail_want = a->detail_failed = -1;
    if (!a->run && !job) {
        if (a->sweep) {
            st_sweep_free(a->sweep);
            free(a->sweep);
        }
        a->sweep = NULL;
        return;
    }
    if (a->run)
        st_sweep_cancel(a->run);
    ui_retired *r = malloc(sizeof *r);
    if (!r) { /* no memory to defer: wait for the workers this once */
        if (a->run)
            st_sweep_run_free(a->run);
        ui_detail_job_free(job);
        st_sweep_free(a->sweep);
        free(a->sweep);
    } else {
        r->run = a->run;
        r->sweep = a->sweep;
        r->job = job;
        r->next = a->retired;
        a->retired = r;
    }
    a->run = NULL;
    a->sweep = NULL;
}

/* a retired entry's run (none: done) and detail job (none: done) have finished */
static int retired_done(ui_retired *r)
{
    int done = !r->job || ui_detail_job_done(r->job);
    if (r->run) {
        st_sweep_progress p;
        st_sweep_drain(r->run);
        st_sweep_get_progress(r->run, &p);
        done = done && p.finished;
    }
    return done;
}

/* Free retired runs whose workers have all left (never blocks on one). */
static void reap(ui_app *a, int all)
{
    ui_retired **pp = &a->retired;
    while (*pp) {
        ui_retired *r = *pp;
        if (retired_done(r) || all) {
            *pp = r->next;
            if (r->run)
                st_sweep_run_free(r->run);
            ui_detail_job_free(r->job);
            st_sweep_free(r->sweep);
            free(r->sweep);
            free(r);
        } else {
            pp = &r->next;
        }
    }
}

static const char *front_label(void *ctx, size_t i, char *buf, size_t n)
{
    ui_app *a = ctx;
    long long first;
    const st_point *pts = st_sweep_points(a->run, &first, NULL);
    const st_point *p = &pts[a->front[i] - first];
    char v[ST_SWEEP_MAX_OBJ][32], lab[256];
    for (int k = 0; k < a->sweep->n_obj; k++)
        ui_fmt_metric(v[k], sizeof v[k], a->sweep->obj[k], p->m[a->sweep->obj[k]]);
    st_sweep_point_label(a->sweep, a->front[i], lab, sizeof lab);
    size_t u = 0;
    for (int k = 0; k < a->sweep->n_obj && u < n; k++)
        u += (size_t)snprintf(buf + u, n - u, "%-11s ", v[k]);
    if (u < n)
        snprintf(buf + u, n - u, "%s", lab);
    return buf;
}

static ui_app *sort_app; /* qsort has no context argument in C99 */

/* Front members by the first objective, then by index. */
static int cmp_front(const void *x, const void *y)
{
    ui_app *a = sort_app;
    long long first;
    const st_point *pts = st_sweep_points(a->run, &first, NULL);
    long long i = *(const long long *)x, j = *(const long long *)y;
    double u = pts[i - first].m[a->sweep->obj[0]], v = pts[j - first].m[a->sweep->obj[0]];
    if (u != v)
        return u < v ? -1 : 1;
    return (i > j) - (i < j);
}

static void rebuild_front(ui_app *a)
{
    const st_pareto *f = st_sweep_front(a->run);
    long long *nf = realloc(a->front, (f->n ? f->n : 1) * sizeof *nf);
    if (!nf)
        return;
    a->front = nf;
    a->n_front = (long long)f->n;
    st_pareto_sorted(f, a->front);
    sort_app = a;
    qsort(a->front, f->n, sizeof *a->front, cmp_front);
    st_error err;
    ui_list_set(&a->front_list, f->n, front_label, a, &err);
}

/* Gather (x, y, front) of the feasible points for the plot. */
static void gather_points(ui_app *a)
{
    long long first, count;
    const st_point *pts = st_sweep_points(a->run, &first, &count);
    if ((size_t)count > a->pcap) {
        double *x = realloc(a->px, (size_t)count * sizeof *x), *y = realloc(a->py, (size_t)count * sizeof *y);
        unsigned char *h = realloc(a->phi, (size_t)count);
        if (x)
            a->px = x;
        if (y)
            a->py = y;
        if (h)
            a->phi = h;
        if (!x || !y || !h)
            return;
        a->pcap = (size_t)count;
    }
    st_metric mx = a->sweep->obj[a->plot_x], my = a->sweep->obj[a->plot_y];
    a->pn = 0;
    for (long long i = 0; i < count; i++) {
        const st_point *p = &pts[i];
        if (p->status != ST_PT_OK || !p->feasible)
            continue;
        a->px[a->pn] = p->m[mx];
        a->py[a->pn] = p->m[my];
        a->phi[a->pn] = 0;
        a->pn++;
    }
    const st_pareto *f = st_sweep_front(a->run);
    for (size_t k = 0; k < f->n; k++) { /* front members drawn last, highlighted */
        const st_point *p = &pts[f->idx[k] - first];
        if (a->pn < a->pcap) {
            a->px[a->pn] = p->m[mx];
            a->py[a->pn] = p->m[my];
            a->phi[a->pn] = 1;
            a->pn++;
        }
    }
}

void ui_replot(ui_app *a)
{
    if (a->run)
        gather_points(a);
}

int ui_start_sweep(ui_app *a, st_sweep *s)
{
    st_error err;
    st_sweep_run *run = NULL;
    /* a sweep that does not start leaves the last one and its results in
     * place: start first, retire the old run after */
    if (st_sweep_start(s, a->threads, 0, s->points, &run, &err)) {
        ui_error(a, "%s%s", err.msg, a->run ? " (the previous sweep's results are kept)" : "");
        st_sweep_free(s);
        free(s);
        return -1;
    }
    retire(a);
    a->run = run;
    a->sweep = s;
    ui_fmt_set_kind(s->kind);
    a->plot_x = 0;
    a->plot_y = s->n_obj > 1 ? 1 : 0;
    a->n_front = 0;
    a->detail_idx = -1;
    a->detail_want = a->detail_failed = -1;
    a->why_done = 0;
    a->why[0] = 0;
    ui_list_set(&a->front_list, 0, front_label, a, &err);
    ui_status(a, "sweep %s: %lld points on the pool", s->name, s->points);
    return 0;
}

void ui_poll_sweep(ui_app *a)
{
    reap(a, 0);
    if (!a->run)
        return;
    long long n = st_sweep_drain(a->run);
    if (n > 0 || (size_t)a->n_front != st_sweep_front(a->run)->n)
        rebuild_front(a);
    if (n > 0)
        gather_points(a);
}

void ui_cancel(ui_app *a, const char *done_msg)
{
    if (!a->run)
        return;
    st_sweep_progress p;
    st_sweep_get_progress(a->run, &p);
    if (p.finished) {
        ui_status(a, "the sweep has %s: nothing to cancel", p.cancelled ? "been cancelled" : "finished");
        return;
    }
    st_sweep_cancel(a->run);
    ui_status(a, "%s", done_msg);
}

int ui_export(ui_app *a, const char *dir, st_error *err)
{
    if (!a->run)
        return st_error_set(err, ST_EINVAL, "no sweep to export: run one first (Sweep screen, r)");
    /* a running sweep's points and front are still moving (the front flag
     * is set when the run ends): export what a run has settled */
    st_sweep_progress p;
    st_sweep_get_progress(a->run, &p);
    if (!p.finished)
        return st_error_set(err, ST_EINVAL, "the sweep is still running: wait for it, or cancel it (c) and export "
                                            "the points finished so far");
    /* as `strata sweep --out` writes them: never into the data folders,
     * all four files or none */
    int rc = cli_out_dir(dir, "export", err);
    return rc ? rc : cli_sweep_export(dir, a->sweep, a->run, err);
}

void ui_open_sweep(ui_app *a, const char *path)
{
    st_error err;
    st_sweep *s = malloc(sizeof *s);
    if (!s) {
        ui_error(a, "out of memory");
    } else if (st_load_sweep(path, s, &err)) {
        free(s);
        ui_error(a, "%s", err.msg);
    } else {
        ui_form_from_sweep(&a->form, s);
        ui_sweep_form_changed(a);
        if (ui_start_sweep(a, s) == 0)
            a->screen = UI_S_RESULTS;
    }
}

/* ---- frame -------------------------------------------------------------------- */
static void draw_header(ui_app *a)
{
    int x = 0;
    attron(ui_attr(UI_C_TITLE) | UI_BOLD);
    mvaddstr(0, 0, " strata ");
    attroff(ui_attr(UI_C_TITLE) | UI_BOLD);
    x = 8;
    for (int s = 0; s < UI_S_COUNT; s++) {
        char t[32];
        snprintf(t, sizeof t, " %d %s ", s + 1, screen_names[s]);
        int at = s == a->screen ? ui_attr(UI_C_SEL) | UI_BOLD : UI_NORMAL;
        ui_text(0, x, COLS - x, at, "%s", t);
        x += (int)strlen(t) + 1;
    }
    ui_text(0, x + 1, COLS - x - 1, ui_attr(UI_C_DIM), "? help  q quit");
}

static void draw_progress_line(ui_app *a, int y)
{
    if (!a->run) {
        ui_text(y, 0, COLS, ui_attr(UI_C_DIM), " no sweep running: Sweep screen (3), pick or edit one, r to run");
        return;
    }
    st_sweep_progress p;
    st_sweep_get_progress(a->run, &p);
    double frac = p.total ? (double)p.done / (double)p.total : 1;
    char eta[32];
    if (p.finished)
        snprintf(eta, sizeof eta, "%s", p.cancelled ? "cancelled" : "done");
    else if (isfinite(p.eta_s))
        snprintf(eta, sizeof eta, "ETA %.0f s", p.eta_s);
    else
        snprintf(eta, sizeof eta, "ETA -");
    char info[200];
    char rate[24];
    /* slow sweeps (serving runs) go well under a point a second */
    snprintf(rate, sizeof rate, p.rate >= 10 ? "%.0f" : "%.2g", p.rate);
    snprintf(info, sizeof info, " %5.1f%% %lld/%lld points  %s points/s  %s  front %lld ", 100 * frac, p.done,
             p.total, rate, eta, p.front);
    int bw = COLS - (int)strlen(info) - 30;
    if (bw < 10)
        bw = 10;
    ui_text(y, 0, 28, UI_BOLD, " %-26.26s", a->sweep->name);
    attron(ui_attr(UI_C_DIM));
    for (int i = 0; i < bw; i++)
        mvaddstr(y, 28 + i, ui_utf8 ? "\u2591" : ".");
    attroff(ui_attr(UI_C_DIM));
    ui_bar(y, 28, bw, frac, ui_attr(UI_C_OK));
    ui_text(y, 28 + bw, COLS - 28 - bw, UI_NORMAL, "%s", info);
}

static void draw_prompt(ui_app *a)
{
    int y = LINES - 1;
    move(y, 0);
    clrtoeol();
    if (a->prompt) {
        ui_text(y, 0, COLS, UI_BOLD, "%s", a->prompt_label);
        int lx = (int)strlen(a->prompt_label);
        ui_text(y, lx, COLS - lx, UI_NORMAL, "%s", a->prompt_buf);
        move(y, lx + (int)a->prompt_len < COLS ? lx + (int)a->prompt_len : COLS - 1);
        curs_set(1);
        return;
    }
    curs_set(0);
    ui_text(y, 0, COLS, ui_attr(UI_C_DIM), " %s", a->status[0] ? a->status :
            "1-6 [ ] screens  Tab panes  up/down j/k move  Enter drill in  Esc back  / filter  ? help  q quit");
}

static void draw_error(ui_app *a)
{
    int w = COLS - 8 < 90 ? COLS - 8 : 90;
    if (w < 20)
        w = COLS;
    /* wrap the message into lines of w - 4 display columns, at a space in
     * the line's second half where there is one, never inside a character */
    char lines[12][512];
    int n = 0;
    const char *s = a->error;
    while (*s && n < 12) {
        size_t take = ui_fit_bytes(s, w - 4); /* w is at most 90: 344 bytes of 4-byte characters */
        if (s[take]) {
            for (size_t k = take; k > take / 2; k--)
                if (s[k] == ' ') {
                    take = k;
                    break;
                }
        }
        if (!take)
            take = 1; /* a character wider than the line: show it alone */
        snprintf(lines[n++], sizeof lines[0], "%.*s", (int)take, s);
        s += take;
        while (*s == ' ')
            s++;
    }
    ui_rect r = {(LINES - n - 4) / 2, (COLS - w) / 2, n + 4, w};
    for (int y = 0; y < r.h; y++)
        ui_text(r.y + y, r.x, w, ui_attr(UI_C_ERR), "%*s", w, "");
    attron(ui_attr(UI_C_ERR));
    ui_box(r, "Error", 1);
    attroff(ui_attr(UI_C_ERR));
    for (int i = 0; i < n; i++)
        ui_text(r.y + 1 + i, r.x + 2, w - 4, ui_attr(UI_C_ERR) | UI_BOLD, "%s", lines[i]);
    ui_text(r.y + r.h - 2, r.x + 2, w - 4, ui_attr(UI_C_ERR), "press any key; the explorer keeps running");
}

static void draw(ui_app *a)
{
    double t0 = st_mono_s();
    erase();
    if (LINES < 12 || COLS < 60) {
        /* short lines: the message has to fit the terminal it complains of */
        ui_text(0, 0, COLS, UI_BOLD, "strata: need 60x12");
        if (LINES > 1)
            ui_text(1, 0, COLS, UI_NORMAL, "now %dx%d", COLS, LINES);
        refresh();
        return;
    }
    draw_header(a);
    ui_rect body = {1, 0, LINES - 3, COLS};
    switch (a->screen) {
    case UI_S_PRESETS: ui_presets_draw(a, body); break;
    case UI_S_WORKLOADS: ui_workloads_draw(a, body); break;
    case UI_S_SWEEP: ui_sweep_draw(a, body); break;
    case UI_S_RESULTS: ui_results_draw(a, body); break;
    case UI_S_BREAKDOWN: ui_breakdown_draw(a, body); break;
    case UI_S_PARALLEL: ui_parallel_draw(a, body); break;
    default: break;
    }
    draw_progress_line(a, LINES - 2);
    if (a->help)
        ui_help_draw(a);
    if (a->error[0])
        draw_error(a);
    draw_prompt(a);
    refresh();
    double dt = st_mono_s() - t0;
    a->frame_s_sum += dt;
    a->frame_s_max = dt > a->frame_s_max ? dt : a->frame_s_max;
    a->frames++;
}

/* ---- keys ----------------------------------------------------------------------- */
static void prompt_done(ui_app *a)
{
    st_error err;
    char text[sizeof a->prompt_buf];
    snprintf(text, sizeof text, "%s", a->prompt_buf);
    ui_prompt_kind k = a->prompt;
    a->prompt = UI_P_NONE;
    switch (k) {
    case UI_P_FILTER:
        if (a->prompt_list && strlen(text) >= sizeof a->prompt_list->filter)
            ui_error(a, "filter /%.40s.../: %zu bytes, longer than the %zu a filter holds", text, strlen(text),
                     sizeof a->prompt_list->filter - 1);
        else if (a->prompt_list && ui_list_set_filter(a->prompt_list, text, &err))
            ui_error(a, "filter /%s/: %s", text, err.msg);
        break;
    case UI_P_FORM:
        ui_sweep_store_row(a, text);
        break;
    case UI_P_OPEN:
        if (!*text)
            ui_error(a, "open: no file name given; type a sweep file's path (e.g. workloads/sweeps/gpu-batch-dtype.yaml), "
                        "or pick one from the list");
        else
            ui_open_sweep(a, text);
        break;
    case UI_P_EXPORT:
        if (ui_export(a, text, &err))
            ui_error(a, "%s", err.msg);
        else
            ui_status(a, "wrote %s/points.csv, front.csv, points.json, front.json", text);
        break;
    default: break;
    }
}

static void prompt_key(ui_app *a, int ch)
{
    if (ch == 27) {
        a->prompt = UI_P_NONE;
        return;
    }
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        prompt_done(a);
        return;
    }
    if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && a->prompt_len > 0) {
        /* one character: a UTF-8 sequence's continuation bytes, then its lead */
        do
            a->prompt_len--;
        while (a->prompt_len > 0 && ((unsigned char)a->prompt_buf[a->prompt_len] & 0xC0) == 0x80);
        a->prompt_buf[a->prompt_len] = 0;
        return;
    }
    if (ch == 21) { /* Ctrl-U */
        a->prompt_len = 0;
        a->prompt_buf[0] = 0;
        return;
    }
    if (ch >= 32 && ch < 256 && ch != 127 && a->prompt_len + 1 < sizeof a->prompt_buf) {
        a->prompt_buf[a->prompt_len++] = (char)ch;
        a->prompt_buf[a->prompt_len] = 0;
    }
}

static void key(ui_app *a, int ch)
{
    if (ch == KEY_RESIZE)
        return;
    if (a->prompt) {
        prompt_key(a, ch);
        return;
    }
    if (a->error[0]) { /* any key closes the panel */
        a->error[0] = 0;
        return;
    }
    if (a->help) {
        a->help = 0;
        return;
    }
    a->status[0] = 0;
    int used = 0;
    switch (a->screen) {
    case UI_S_PRESETS: used = ui_presets_key(a, ch); break;
    case UI_S_WORKLOADS: used = ui_workloads_key(a, ch); break;
    case UI_S_SWEEP: used = ui_sweep_key(a, ch); break;
    case UI_S_RESULTS: used = ui_results_key(a, ch); break;
    case UI_S_BREAKDOWN: used = ui_breakdown_key(a, ch); break;
    case UI_S_PARALLEL: used = ui_parallel_key(a, ch); break;
    default: break;
    }
    if (used)
        return;
    switch (ch) {
    case 'q':
    case 'Q': a->quit = 1; break;
    case '?':
    case KEY_F(1): a->help = 1; break;
    case '\t': a->pane = !a->pane; break;
    case KEY_BTAB: a->pane = !a->pane; break;
    case 27: /* Esc: back one level */
        if (a->screen == UI_S_BREAKDOWN)
            a->screen = UI_S_RESULTS;
        else if (a->pane)
            a->pane = 0;
        break;
    case '/': {
        ui_list *l = ui_focused_list(a);
        if (l) {
            a->prompt_list = l;
            ui_prompt_open(a, UI_P_FILTER, "filter (PCRE2, empty clears): /", l->filter);
        }
        break;
    }
    case ']':
    case KEY_RIGHT:
        a->screen = (a->screen + 1) % UI_S_COUNT;
        a->pane = 0;
        break;
    case '[':
    case KEY_LEFT:
        a->screen = (a->screen + UI_S_COUNT - 1) % UI_S_COUNT;
        a->pane = 0;
        break;
    default:
        if (ch >= '1' && ch < '1' + UI_S_COUNT) {
            a->screen = ch - '1';
            a->pane = 0;
        }
        break;
    }
}

/* ---- set-up and teardown -------------------------------------------------------- */
static void on_signal(int sig) { got_signal = sig; }

static int terminal_up;

static void restore_terminal(void)
{
    if (terminal_up) {
        endwin();
        terminal_up = 0;
    }
}

static void on_fatal(int sig)
{
    restore_terminal(); /* endwin is not async-signal-safe, but a dead UI is worse */
    signal(sig, SIG_DFL);
    raise(sig);
}

static const char *hw_label(void *ctx, size_t i, char *buf, size_t n)
{
    ui_app *a = ctx;
    const st_catalog_entry *e = &a->cat.items[a->hw[i]];
    snprintf(buf, n, "%-5.5s %-16s %s", e->kind == ST_FILE_ACCEL ? "accel" : st_file_kind_name(e->kind), e->id, e->name[0] ? e->name : "(unreadable)");
    return buf;
}

static const char *wl_label(void *ctx, size_t i, char *buf, size_t n)
{
    ui_app *a = ctx;
    const st_catalog_entry *e = &a->cat.items[a->wl[i]];
    snprintf(buf, n, "%-16s %s", e->id, e->name[0] ? e->name : "(unreadable)");
    return buf;
}

static int app_init(ui_app *a, const ui_opts *o, st_error *err)
{
    memset(a, 0, sizeof *a);
    a->threads = o->threads;
    a->detail_idx = -1;
    a->detail_want = a->detail_failed = -1;
    a->hw_detail_for = a->ops_for = (size_t)-1;
    a->screen = UI_S_RESULTS;
    if (st_catalog_scan(&a->cat, err))
        return -1;
    a->hw = calloc(a->cat.n + 1, sizeof *a->hw);
    a->wl = calloc(a->cat.n + 1, sizeof *a->wl);
    a->tf_models = calloc(a->cat.n + 1, sizeof *a->tf_models);
    a->clusters = calloc(a->cat.n + 1, sizeof *a->clusters);
    a->detail = calloc(1, sizeof *a->detail);
    if (!a->hw || !a->wl || !a->tf_models || !a->clusters || !a->detail)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    for (size_t i = 0; i < a->cat.n; i++) {
        st_file_kind k = a->cat.items[i].kind;
        if (k == ST_FILE_MODEL)
            a->wl[a->n_wl++] = i;
        else
            a->hw[a->n_hw++] = i;
        if (k == ST_FILE_NODE || k == ST_FILE_CLUSTER)
            a->clusters[a->n_clusters++] = i;
    }
    if (ui_list_set(&a->hw_list, a->n_hw, hw_label, a, err) || ui_list_set(&a->wl_list, a->n_wl, wl_label, a, err))
        return -1;
    /* the presets screen opens on the H100 */
    for (size_t k = 0; k < a->hw_list.n_vis; k++)
        if (strcmp(a->cat.items[a->hw[a->hw_list.vis[k]]].id, "h100-sxm") == 0)
            a->hw_list.sel = k;
    for (size_t k = 0; k < a->wl_list.n_vis; k++)
        if (strcmp(a->cat.items[a->wl[a->wl_list.vis[k]]].id, "llama2-7b") == 0)
            a->wl_list.sel = k;
    ui_sweep_files_scan(a);
    st_sweep *s = malloc(sizeof *s);
    if (!s)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    int rc;
    if (o->sweep_path) {
        rc = st_load_sweep(o->sweep_path, s, err);
        if (!rc)
            ui_form_from_sweep(&a->form, s);
        else /* the error panel says why; the form holds the default set-up */
            ui_form_default(&a->form, ST_SWEEP_GPU);
    } else {
        ui_form_default(&a->form, ST_SWEEP_GPU);
        rc = ui_form_build(&a->form, s, err);
    }
    ui_sweep_form_changed(a);
    if (rc) {
        free(s);
        /* the UI still opens; the error panel says what is wrong */
        ui_error(a, "%s", err->msg);
        a->screen = UI_S_SWEEP;
    } else if (ui_start_sweep(a, s)) {
        a->screen = UI_S_SWEEP;
    }
    a->par_dirty = 1;
    return 0;
}

static void app_free(ui_app *a)
{
    retire(a);
    reap(a, 1);
    ui_list_free(&a->hw_list);
    ui_list_free(&a->wl_list);
    ui_list_free(&a->ops_list);
    ui_list_free(&a->file_list);
    ui_list_free(&a->form_list);
    ui_list_free(&a->front_list);
    ui_list_free(&a->layer_list);
    for (size_t i = 0; i < a->n_files; i++)
        free(a->files[i]);
    free(a->files);
    free(a->hw_detail);
    st_oplist_free(&a->ops);
    free(a->hw);
    free(a->wl);
    free(a->tf_models);
    free(a->clusters);
    free(a->front);
    free(a->px);
    free(a->py);
    free(a->phi);
    free(a->detail);
    if (a->par_m_loaded)
        st_model_free(&a->par_m);
    st_catalog_free(&a->cat);
}

static void detect_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    ui_utf8 = cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

int ui_run(const ui_opts *o)
{
    ui_app *a = calloc(1, sizeof *a);
    st_error err;
    if (!a) {
        fprintf(stderr, "strata: out of memory\n");
        return 1;
    }
    setlocale(LC_ALL, "");
    detect_utf8();
    if (app_init(a, o, &err)) {
        fprintf(stderr, "strata: %s\n", err.msg);
        app_free(a);
        free(a);
        return 1;
    }
    /* newterm, not initscr: initscr prints curses' own "Error opening
     * terminal" and exits on a TERM it cannot use */
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (scr) {
        set_term(scr);
        /* a terminal that cannot address the cursor (TERM=dumb) would
         * show the screens as a stream of text */
        char *cup = tigetstr("cup");
        if (!cup || cup == (char *)-1) {
            endwin();
            delscreen(scr);
            scr = NULL;
        }
    }
    if (!scr) {
        const char *term = getenv("TERM");
        fprintf(stderr, "strata: cannot start the terminal UI on TERM=%s (no terminfo entry for it, or it cannot "
                        "address the cursor); set TERM to your terminal's type (e.g. xterm-256color), or use the "
                        "batch commands (strata sweep, strata suite)\n", term && *term ? term : "(unset)");
        app_free(a);
        free(a);
        return 1;
    }
    terminal_up = 1;
    atexit(restore_terminal);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* every signal whose default ends the process: the terminating ones
     * quit through the loop (the terminal restored, exit 128 + the
     * signal), the core-dumping ones restore it and die as they would */
    static const int quit_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF};
    static const int fatal_sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGQUIT, SIGILL, SIGTRAP, SIGSYS,
                                     SIGXCPU, SIGXFSZ};
    for (size_t i = 0; i < sizeof quit_sigs / sizeof quit_sigs[0]; i++)
        sigaction(quit_sigs[i], &sa, NULL);
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
        signal(fatal_sigs[i], on_fatal);
    raw(); /* Ctrl-C arrives as a key too; both quit */
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    colours_init();
    draw(a);
    while (!a->quit && !got_signal) {
        struct pollfd fds[2] = {{0, POLLIN, 0}, {a->run ? st_sweep_notify_fd(a->run) : -1, POLLIN, 0}};
        /* wake at least 4 times a second for the progress line while running */
        int rc = poll(fds, 2, a->run || a->retired || a->job ? 250 : 1000);
        if (rc < 0 && errno != EINTR)
            break;
        int ch;
        while ((ch = getch()) != ERR) {
            if (ch == 3) { /* Ctrl-C in raw mode: as SIGINT */
                a->quit = 1;
                got_signal = SIGINT;
                break;
            }
            key(a, ch);
            if (a->quit)
                break;
        }
        ui_poll_sweep(a);
        ui_poll_detail(a);
        draw(a);
    }
    restore_terminal();
    if (getenv("STRATA_UI_STATS"))
        fprintf(stderr, "frames %lld, mean %.3f ms, worst %.3f ms\n", a->frames,
                a->frames ? 1e3 * a->frame_s_sum / (double)a->frames : 0, 1e3 * a->frame_s_max);
    /* the shell's convention: 128 + the signal */
    int code = got_signal ? 128 + (int)got_signal : 0;
    /* Workers still inside a point (a serving simulation can take many
     * seconds) cannot be interrupted, and freeing the run waits for them:
     * with the terminal restored and nothing left to write, leave now. */
    int busy = 0;
    if (a->run) {
        st_sweep_cancel(a->run);
        st_sweep_progress p;
        st_sweep_get_progress(a->run, &p);
        busy |= !p.finished;
    }
    busy |= a->job && !ui_detail_job_done(a->job);
    for (ui_retired *r = a->retired; r && !busy; r = r->next)
        busy |= !retired_done(r);
    if (busy) {
        fflush(NULL);
        _exit(code);
    }
    app_free(a);
    free(a);
    return code;
}

int ui_bench_frames(const char *sweep_path, int threads, double *mean_s, double *max_s, long long *frames,
                    double *sweep_s, st_error *err)
{
    ui_app *a = calloc(1, sizeof *a);
    if (!a)
        return st_error_set(err, ST_ENOMEM, "out of memory");
    ui_opts o = {sweep_path, threads};
    setlocale(LC_ALL, "");
    detect_utf8();
    if (app_init(a, &o, err) || a->error[0]) {
        if (a->error[0])
            st_error_set(err, ST_EINVAL, "%s", a->error);
        app_free(a);
        free(a);
        return ST_EINVAL;
    }
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
    if (!scr) {
        if (out)
            fclose(out);
        if (in)
            fclose(in);
        app_free(a);
        free(a);
        return st_error_set(err, ST_EIO, "cannot open a curses screen on /dev/null");
    }
    resizeterm(50, 160);
    colours_init();
    double t0 = st_mono_s();
    st_sweep_progress p;
    do { /* as the event loop does: wait on the queue, drain, draw */
        struct pollfd fd = {st_sweep_notify_fd(a->run), POLLIN, 0};
        poll(&fd, 1, 50);
        ui_poll_sweep(a);
        draw(a);
        st_sweep_get_progress(a->run, &p);
    } while (!p.finished);
    *sweep_s = st_mono_s() - t0;
    *mean_s = a->frames ? a->frame_s_sum / (double)a->frames : 0;
    *max_s = a->frame_s_max;
    *frames = a->frames;
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
    app_free(a);
    free(a);
    return 0;
}
