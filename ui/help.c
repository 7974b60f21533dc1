/* The help overlay: each key's description wrapped to the terminal's width;
 * on a terminal too short for all of it, the lines that fit and a note. */
#include "config.h"
#include "ui/ui.h"

#include <string.h>

typedef struct entry {
    const char *key, *desc; /* key NULL: a blank line; desc NULL: a heading */
} entry;

static const entry entries[] = {
    {"1..6, [ ], left/right", "switch screen: Presets Workloads Sweep Results Breakdown Parallel"},
    {"Tab / Shift-Tab", "switch pane"},
    {"up/down, j/k", "move in a list (PgUp/PgDn, g/G: a page, the ends)"},
    {"Enter", "drill in (details, edit a row, breakdown of a point)"},
    {"Esc", "back one level; closes this help and the error panel"},
    {"/", "filter the focused list with a PCRE2 regex (empty clears)"},
    {"q, Ctrl-C", "quit (the terminal is restored; Ctrl-C exits 130)"},
    {NULL, NULL},
    {"Sweep", NULL},
    {"Enter on a file", "load and run it; o open one by path"},
    {"n", "a new form: gpu, accel, train, serve in turn"},
    {"Enter on a row", "edit it: a, b, c or A..B x2 / A..B +S / A..B nN make an axis; lengths list with ';' "
                       "(fixed:100,50; uniform:10-99,5-50); sampling: grid, random N [seed S]"},
    {"r, c", "run the form; cancel the running sweep"},
    {"Results", NULL},
    {"x / y", "change the plotted objectives (with two, swap the axes)"},
    {"Enter", "breakdown of the selected point"},
    {"r, c, e", "re-run; cancel; export CSV + JSON (once the sweep has finished or been cancelled)"},
    {"Parallel", NULL},
    {"d/D t/T p/P", "halve/double DP, TP, PP"},
    {"m/M z r s", "microbatches; ZeRO stage; recompute; sequence parallelism"},
    {"a", "attention: eager, FlashAttention-2, FlashAttention-3 (Hopper)"},
    {"w, c", "next model; next cluster"},
    {NULL, NULL},
    {"", "Every number here has a CLI command: strata eval, accel, train, serve, sweep (strata(1), "
         "strata-sweep(5))."},
};

#define KEYW 22 /* the key column */
#define MAXL 96

/* Lay the entries out for a text width w: up to MAXL lines of text. */
static int layout(int w, char out[MAXL][256])
{
    int n = 0, dw = w - KEYW;
    if (dw < 10)
        dw = 10;
    for (size_t i = 0; i < sizeof entries / sizeof *entries && n < MAXL; i++) {
        const entry *e = &entries[i];
        if (!e->key) {
            out[n++][0] = 0;
            continue;
        }
        if (!e->desc) {
            snprintf(out[n++], 256, "%s", e->key);
            continue;
        }
        const char *d = e->desc;
        int first = 1;
        while (*d && n < MAXL) {
            int len = (int)strlen(d);
            int take = len;
            if (len > dw) { /* break at the last space that fits */
                take = dw;
                while (take > 0 && d[take] != ' ')
                    take--;
                if (take == 0)
                    take = dw;
            }
            snprintf(out[n++], 256, "%-*.*s%.*s", KEYW, KEYW - 1, first ? e->key : "", take, d);
            d += take;
            while (*d == ' ')
                d++;
            first = 0;
        }
    }
    return n;
}

void ui_help_draw(ui_app *a)
{
    (void)a;
    int w = COLS - 2 < 124 ? COLS - 2 : 124;
    if (w < 20)
        return;
    static char text[MAXL][256];
    int n = layout(w - 4, text);
    int rows = LINES - 2 < n + 2 ? LINES - 2 : n + 2; /* leave the status bar */
    if (rows < 3)
        return;
    int shown = rows - 2, cut = shown < n;
    ui_rect r = {(LINES - 1 - rows) / 2, (COLS - w) / 2, rows, w};
    if (r.y < 0)
        r.y = 0;
    for (int y = 0; y < r.h; y++)
        ui_text(r.y + y, r.x, w, UI_NORMAL, "%*s", w, "");
    ui_box(r, "Help (any key closes)", 1);
    for (int i = 0; i < shown; i++) {
        if (cut && i == shown - 1) {
            ui_text(r.y + 1 + i, r.x + 2, w - 4, ui_attr(UI_C_DIM), "... %d more lines: a taller terminal shows them",
                    n - i);
            break;
        }
        int heading = text[i][0] && text[i][0] != ' ' && strlen(text[i]) < KEYW;
        ui_text(r.y + 1 + i, r.x + 2, w - 4, heading ? UI_BOLD : UI_NORMAL, "%s", text[i]);
    }
}
