/* The help overlay. */
#include "config.h"
#include "ui/ui.h"

static const char *const lines[] = {
    "strata explorer: keys",
    "",
    "1..6, [ ], left/right   switch screen: Presets Workloads Sweep Results Breakdown Parallel",
    "Tab / Shift-Tab         switch pane",
    "up/down, j/k, PgUp/PgDn, g/G   move in a list",
    "Enter                   drill in (details, edit a row, breakdown of a point)",
    "Esc                     back one level; closes this help and the error panel",
    "/                       filter the focused list with a PCRE2 regex (empty clears)",
    "q, Ctrl-C               quit (the terminal is restored)",
    "",
    "Sweep      Enter on a file: load and run it; o open by path; n new form (gpu, accel, train)",
    "           Enter on a row: edit it (a, b, c or A..B x2 / A..B +S / A..B nN make an axis; lengths list",
    "           with ';': fixed:100,50; uniform:10-99,5-50); sampling: grid, random N [seed S]; r run; c cancel",
    "Results    x / y change the plotted objectives; Enter breakdown; r re-run; c cancel; e export CSV+JSON",
    "Parallel   d/D t/T p/P halve/double DP TP PP; m/M microbatches; z ZeRO; r recompute; s SP;",
    "           a attention (eager, FlashAttention-2, FlashAttention-3 on Hopper); w next model; c next cluster",
    "",
    "Every number here has a CLI command: strata eval, accel, train, sweep (see strata(1), strata-sweep(5)).",
};

void ui_help_draw(ui_app *a)
{
    (void)a;
    int n = (int)(sizeof lines / sizeof *lines), w = COLS - 4 < 104 ? COLS - 4 : 104;
    ui_rect r = {(LINES - n - 2) / 2, (COLS - w) / 2, n + 2, w};
    for (int y = 0; y < r.h; y++)
        ui_text(r.y + y, r.x, w, UI_NORMAL, "%*s", w, "");
    ui_box(r, "Help (any key closes)", 1);
    for (int i = 0; i < n; i++)
        ui_text(r.y + 1 + i, r.x + 2, w - 4, i == 0 ? UI_BOLD : UI_NORMAL, "%s", lines[i]);
}
