/* Widgets: filtered list, boxes, text, bars, stacked bars, braille scatter. */
#include "config.h"
#include "ui/ui.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

int ui_utf8 = 1;
int ui_colour;

/* ---- list ---------------------------------------------------------------------- */
void ui_list_free(ui_list *l)
{
    free(l->vis);
    l->vis = NULL;
    l->n_vis = l->n = 0;
}

static int rebuild(ui_list *l, st_error *err)
{
    size_t keep = ui_list_current(l);
    st_regex *re = NULL;
    if (l->filter[0] && st_regex_compile(&re, l->filter, 1, err))
        return ST_EINVAL;
    size_t *v = realloc(l->vis, (l->n ? l->n : 1) * sizeof *v);
    if (!v) {
        st_regex_free(re);
        return st_error_set(err, ST_ENOMEM, "out of memory");
    }
    l->vis = v;
    l->n_vis = 0;
    char buf[512];
    for (size_t i = 0; i < l->n; i++) {
        const char *t = l->label(l->ctx, i, buf, sizeof buf);
        if (!re || st_regex_match(re, t) == 1)
            l->vis[l->n_vis++] = i;
    }
    st_regex_free(re);
    l->sel = 0;
    for (size_t k = 0; k < l->n_vis; k++)
        if (l->vis[k] == keep)
            l->sel = k;
    if (l->top > l->sel)
        l->top = l->sel;
    return 0;
}

int ui_list_set(ui_list *l, size_t n, ui_label_fn label, void *ctx, st_error *err)
{
    l->n = n;
    l->label = label;
    l->ctx = ctx;
    return rebuild(l, err);
}

int ui_list_set_filter(ui_list *l, const char *re, st_error *err)
{
    char old[sizeof l->filter];
    memcpy(old, l->filter, sizeof old);
    snprintf(l->filter, sizeof l->filter, "%s", re);
    int rc = rebuild(l, err);
    if (rc) {
        memcpy(l->filter, old, sizeof old);
        st_error e2;
        rebuild(l, &e2);
    }
    return rc;
}

size_t ui_list_current(const ui_list *l)
{
    return l->vis && l->sel < l->n_vis ? l->vis[l->sel] : (size_t)-1;
}

int ui_list_key(ui_list *l, int key, int page)
{
    if (!l->n_vis)
        return 0;
    switch (key) {
    case KEY_UP:
    case 'k': l->sel = l->sel ? l->sel - 1 : 0; break;
    case KEY_DOWN:
    case 'j': l->sel = l->sel + 1 < l->n_vis ? l->sel + 1 : l->sel; break;
    case KEY_PPAGE: l->sel = l->sel > (size_t)page ? l->sel - (size_t)page : 0; break;
    case KEY_NPAGE: l->sel = l->sel + (size_t)page < l->n_vis ? l->sel + (size_t)page : l->n_vis - 1; break;
    case KEY_HOME:
    case 'g': l->sel = 0; break;
    case KEY_END:
    case 'G': l->sel = l->n_vis - 1; break;
    default: return 0;
    }
    return 1; /* a movement key, even at the end of the list */
}

void ui_list_scroll(ui_list *l, int h)
{
    if (h <= 0)
        return;
    if (l->sel < l->top)
        l->top = l->sel;
    if (l->sel >= l->top + (size_t)h)
        l->top = l->sel - (size_t)h + 1;
    /* a taller box (the terminal grown) shows the rows above rather than
     * blank rows below: the last row at the box's foot at most */
    if (l->n_vis > (size_t)h && l->top > l->n_vis - (size_t)h)
        l->top = l->n_vis - (size_t)h;
    else if (l->n_vis <= (size_t)h)
        l->top = 0;
}

void ui_list_draw(ui_list *l, ui_rect r, const char *title, int focused)
{
    char t[160];
    if (l->filter[0])
        snprintf(t, sizeof t, "%s  /%s/ %zu of %zu", title, l->filter, l->n_vis, l->n);
    else
        snprintf(t, sizeof t, "%s (%zu)", title, l->n);
    ui_box(r, t, focused);
    int h = r.h - 2;
    if (h <= 0)
        return;
    ui_list_scroll(l, h);
    char buf[512];
    for (int row = 0; row < h; row++) {
        size_t k = l->top + (size_t)row;
        if (k >= l->n_vis)
            break;
        const char *s = l->label(l->ctx, l->vis[k], buf, sizeof buf);
        int attr = k == l->sel ? (focused ? ui_attr(UI_C_SEL) : UI_BOLD) : UI_NORMAL;
        ui_text(r.y + 1 + row, r.x + 1, r.w - 2, attr, "%-*s", r.w - 2, s);
    }
    if (!l->n_vis)
        ui_text(r.y + 1, r.x + 2, r.w - 3, ui_attr(UI_C_DIM), "%s", l->filter[0] ? "(no match)" : "(empty)");
}

/* ---- drawing -------------------------------------------------------------------- */
size_t ui_fit_bytes(const char *s, int w)
{
    /* display columns: a wide (CJK) character takes two, a combining mark
     * none; a byte that starts no valid character, one */
    int cols = 0;
    size_t i = 0, len = strlen(s);
    mbstate_t st;
    memset(&st, 0, sizeof st);
    while (i < len) {
        wchar_t wc;
        size_t n = mbrtowc(&wc, s + i, len - i, &st);
        int cw = 1;
        if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
            n = 1;
            memset(&st, 0, sizeof st);
        } else {
            cw = wcwidth(wc);
            if (cw < 0)
                cw = 1;
        }
        if (cols + cw > w)
            break;
        cols += cw;
        i += n;
    }
    return i;
}

void ui_text(int y, int x, int w, int attr, const char *fmt, ...)
{
    if (w <= 0 || y < 0 || y >= LINES)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t i = ui_fit_bytes(buf, w);
    buf[i] = 0;
    attron(attr);
    mvaddstr(y, x, buf);
    attroff(attr);
}

void ui_box(ui_rect r, const char *title, int focused)
{
    if (r.h < 2 || r.w < 2)
        return;
    int at = focused ? ui_attr(UI_C_TITLE) | UI_BOLD : ui_attr(UI_C_DIM);
    attron(at);
    mvhline(r.y, r.x + 1, ACS_HLINE, r.w - 2);
    mvhline(r.y + r.h - 1, r.x + 1, ACS_HLINE, r.w - 2);
    mvvline(r.y + 1, r.x, ACS_VLINE, r.h - 2);
    mvvline(r.y + 1, r.x + r.w - 1, ACS_VLINE, r.h - 2);
    mvaddch(r.y, r.x, ACS_ULCORNER);
    mvaddch(r.y, r.x + r.w - 1, ACS_URCORNER);
    mvaddch(r.y + r.h - 1, r.x, ACS_LLCORNER);
    mvaddch(r.y + r.h - 1, r.x + r.w - 1, ACS_LRCORNER);
    attroff(at);
    if (title && *title)
        ui_text(r.y, r.x + 2, r.w - 4, focused ? ui_attr(UI_C_TITLE) | UI_BOLD : UI_BOLD, " %s ", title);
}

static const char *const eighths[9] = {"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589",
                                       "\u2588"};

void ui_bar(int y, int x, int w, double frac, int attr)
{
    if (w <= 0 || !(frac > 0))
        return;
    if (frac > 1)
        frac = 1;
    int e = (int)floor(frac * w * 8 + 0.5);
    attron(attr);
    move(y, x);
    for (int i = 0; i < e / 8; i++)
        addstr(ui_utf8 ? eighths[8] : "#");
    if (e % 8 && ui_utf8)
        addstr(eighths[e % 8]);
    attroff(attr);
}

void ui_stacked(int y, int x, int w, const double *parts, int n, double total)
{
    static const char letters[] = "DGSMN#";
    if (!(total > 0) || w <= 0)
        return;
    double acc = 0;
    int col = 0;
    for (int i = 0; i < n; i++) {
        acc += parts[i];
        int end = (int)floor(acc / total * w + 0.5);
        if (end > w)
            end = w;
        int attr = ui_attr(UI_C_BAR1 + i % 5);
        attron(attr);
        for (; col < end; col++) {
            if (ui_colour)
                mvaddstr(y, x + col, ui_utf8 ? eighths[8] : "#");
            else
                mvaddch(y, x + col, (chtype)letters[i < 5 ? i : 5]);
        }
        attroff(attr);
    }
}

/* cost is GPU-seconds per 1000 tokens except in accel sweeps, where it is
 * PE-seconds per inference (strata-sweep(5)) */
static const char *cost_unit = "dev-s/1k";

void ui_fmt_set_kind(st_sweep_kind k) { cost_unit = k == ST_SWEEP_ACCEL ? "PE-s/inf" : "dev-s/1k"; }

void ui_fmt_metric(char *buf, size_t n, st_metric m, double v)
{
    static const char *const pre[] = {"p", "n", "u", "m", "", "k", "M", "G", "T", "P"};
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return;
    }
    if (m == ST_M_COST) {
        snprintf(buf, n, "%.3g %s", v, cost_unit);
        return;
    }
    if (m == ST_M_MEMORY) { /* binary units, as the CLI prints memory */
        static const char *const bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        double a = fabs(v);
        int k = 0;
        while (a >= 1024 && k < 5)
            a /= 1024, k++;
        snprintf(buf, n, "%.3g %s", v / pow(1024, k), bin[k]);
        return;
    }
    if (m == ST_M_MFU) {
        snprintf(buf, n, "%.1f%%", 100 * v);
        return;
    }
    const char *unit = m == ST_M_MEMORY ? "B" : m == ST_M_THROUGHPUT ? "/s" : st_metric_unit(m);
    double a = fabs(v);
    int e = 4; /* index of "" */
    if (a > 0) {
        int k = (int)floor(log10(a) / 3);
        k = k < -4 ? -4 : k > 5 ? 5 : k;
        e = 4 + k;
    }
    snprintf(buf, n, "%.3g %s%s", v / pow(1000, e - 4), pre[e], unit);
}

/* ---- braille scatter ------------------------------------------------------------ */
/* Braille dot bits by (column 0..1, row 0..3), Unicode 2800 block order. */
static const unsigned char dot_bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

static int use_log(double lo, double hi) { return lo > 0 && hi / lo > 50; }

static double to_unit(double v, double lo, double hi, int lg)
{
    if (lg)
        return hi > lo ? (log(v) - log(lo)) / (log(hi) - log(lo)) : 0.5;
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
}

void ui_plot_draw(const ui_plot *p, ui_rect r)
{
    char lab[64];
    int lw = 10; /* y tick labels */
    int cw = r.w - lw - 1, ch = r.h - 2;
    if (cw < 4 || ch < 2)
        return;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t i = 0; i < p->n; i++) {
        if (!isfinite(p->x[i]) || !isfinite(p->y[i]))
            continue;
        xlo = fmin(xlo, p->x[i]);
        xhi = fmax(xhi, p->x[i]);
        ylo = fmin(ylo, p->y[i]);
        yhi = fmax(yhi, p->y[i]);
    }
    if (!(xlo <= xhi)) {
        ui_text(r.y + r.h / 2, r.x + lw + cw / 2 - 7, 20, ui_attr(UI_C_DIM), "(no points yet)");
        return;
    }
    int lx = use_log(xlo, xhi), ly = use_log(ylo, yhi);
    size_t cells = (size_t)cw * (size_t)ch;
    unsigned char *dots = calloc(cells, 1), *front = calloc(cells, 1);
    if (!dots || !front) {
        free(dots);
        free(front);
        return;
    }
    int dw = 2 * cw, dh = 4 * ch;
    for (size_t i = 0; i < p->n; i++) {
        if (!isfinite(p->x[i]) || !isfinite(p->y[i]))
            continue;
        int dx = (int)floor(to_unit(p->x[i], xlo, xhi, lx) * (dw - 1) + 0.5);
        int dy = (int)floor((1 - to_unit(p->y[i], ylo, yhi, ly)) * (dh - 1) + 0.5);
        size_t c = (size_t)(dy / 4) * (size_t)cw + (size_t)(dx / 2);
        dots[c] |= dot_bit[dx % 2][dy % 4];
        if (p->hi && p->hi[i])
            front[c] = 1;
    }
    int mcx = -1, mcy = -1;
    if (isfinite(p->mark_x) && isfinite(p->mark_y)) {
        mcx = (int)floor(to_unit(p->mark_x, xlo, xhi, lx) * (dw - 1) + 0.5) / 2;
        mcy = (int)floor((1 - to_unit(p->mark_y, ylo, yhi, ly)) * (dh - 1) + 0.5) / 4;
    }
    for (int y = 0; y < ch; y++)
        for (int x = 0; x < cw; x++) {
            size_t c = (size_t)y * (size_t)cw + (size_t)x;
            int at = front[c] ? ui_attr(UI_C_FRONT) | UI_BOLD : ui_attr(UI_C_DIM);
            if (y == mcy && x == mcx) {
                attron(ui_attr(UI_C_SEL) | UI_BOLD);
                mvaddstr(r.y + y, r.x + lw + 1 + x, ui_utf8 ? "\u25c6" : "@");
                attroff(ui_attr(UI_C_SEL) | UI_BOLD);
                continue;
            }
            if (!dots[c])
                continue;
            attron(at);
            if (ui_utf8) {
                char u[4] = {(char)0xE2, (char)(0xA0 | (dots[c] >> 6)), (char)(0x80 | (dots[c] & 0x3F)), 0};
                mvaddstr(r.y + y, r.x + lw + 1 + x, u);
            } else {
                mvaddch(r.y + y, r.x + lw + 1 + x, front[c] ? '*' : '.');
            }
            attroff(at);
        }
    free(dots);
    free(front);
    /* axes: y ticks at top, middle, bottom; x ticks at both ends and middle */
    for (int t = 0; t < 3; t++) {
        double u = t / 2.0, v = ly ? exp(log(ylo) + u * (log(yhi) - log(ylo))) : ylo + u * (yhi - ylo);
        ui_fmt_metric(lab, sizeof lab, p->my, v);
        int row = r.y + (int)((1 - u) * (ch - 1) + 0.5);
        ui_text(row, r.x, lw, UI_NORMAL, "%*s", lw, lab);
    }
    attron(ui_attr(UI_C_DIM));
    mvvline(r.y, r.x + lw, ACS_VLINE, ch);
    mvhline(r.y + ch, r.x + lw, ACS_HLINE, cw + 1);
    mvaddch(r.y + ch, r.x + lw, ACS_LLCORNER);
    attroff(ui_attr(UI_C_DIM));
    for (int t = 0; t < 3; t++) {
        double u = t / 2.0, v = lx ? exp(log(xlo) + u * (log(xhi) - log(xlo))) : xlo + u * (xhi - xlo);
        ui_fmt_metric(lab, sizeof lab, p->mx, v);
        int col = r.x + lw + 1 + (int)(u * (cw - 1));
        int len = (int)strlen(lab);
        col = t == 0 ? col : t == 1 ? col - len / 2 : col - len + 1;
        ui_text(r.y + ch + 1, col, len, UI_NORMAL, "%s", lab);
    }
}
