/*
 * ui: the ncursesw explorer. One file per screen (presets, workloads, sweep
 * set-up, results, breakdown, parallelism, help) and small widgets (list
 * with a PCRE2 filter, bars, braille scatter plot, prompt). The screens only
 * draw what src/ computes; every number shown has a CLI command that
 * reproduces it.
 *
 * The event loop polls the keyboard and the sweep pool's notify pipe at once
 * and never joins a running sweep: a cancelled run is retired and freed once
 * its workers have left.
 */
#ifndef STRATA_UI_H
#define STRATA_UI_H

#include "explore/explore.h"
#include "io/io.h"

#include <ncursesw/curses.h>
#include <pthread.h>

/* ---- widgets ------------------------------------------------------------------ */
typedef struct ui_rect {
    int y, x, h, w;
} ui_rect;

/* A list of n labelled items, filtered by a caseless PCRE2 regex. */
typedef const char *(*ui_label_fn)(void *ctx, size_t i, char *buf, size_t n);

typedef struct ui_list {
    size_t n;
    size_t *vis, n_vis; /* items shown (filter matches), in order */
    size_t sel, top;    /* positions in vis */
    char filter[128];
    ui_label_fn label;
    void *ctx;
} ui_list;

void ui_list_free(ui_list *l);
/* (Re)build after items or the filter changed; keeps the selected item when
 * it is still shown. ST_EINVAL with a sentence for a bad regex. */
int ui_list_set(ui_list *l, size_t n, ui_label_fn label, void *ctx, st_error *err);
int ui_list_set_filter(ui_list *l, const char *re, st_error *err);
/* Item index under the cursor, or (size_t)-1 when nothing is shown. */
size_t ui_list_current(const ui_list *l);
/* Arrows, vi keys, PgUp/PgDn, Home/End: 1 if the key moved the cursor. */
int ui_list_key(ui_list *l, int key, int page);
/* Keep the cursor within h visible rows. */
void ui_list_scroll(ui_list *l, int h);
void ui_list_draw(ui_list *l, ui_rect r, const char *title, int focused);

/* Colour pairs (monochrome: attributes only). */
enum { UI_C_NORMAL = 0, UI_C_TITLE, UI_C_SEL, UI_C_FRONT, UI_C_DIM, UI_C_ERR, UI_C_OK, UI_C_BAR1, UI_C_BAR2,
       UI_C_BAR3, UI_C_BAR4, UI_C_BAR5, UI_C_COUNT };
int ui_attr(int c);
/* curses attributes as int (attron's type), so they mix with ui_attr(). */
#define UI_NORMAL ((int)A_NORMAL)
#define UI_BOLD ((int)A_BOLD)
#define UI_REVERSE ((int)A_REVERSE)
#define UI_DIM ((int)A_DIM)
extern int ui_utf8;   /* the terminal takes UTF-8: braille, blocks, box lines */
extern int ui_colour; /* colours in use (off under NO_COLOR or on a monochrome terminal) */

void ui_box(ui_rect r, const char *title, int focused);
/* The bytes of s's longest prefix that fits w display columns, never
 * splitting a character (wide characters take two columns). */
size_t ui_fit_bytes(const char *s, int w);
void ui_text(int y, int x, int w, int attr, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A horizontal bar of value/max over w cells (eighth-blocks in UTF-8). */
void ui_bar(int y, int x, int w, double frac, int attr);
/* Stacked bar: parts[i]/total in colours UI_C_BAR1.. */
void ui_stacked(int y, int x, int w, const double *parts, int n, double total);
/* "12.3 ms", "4.56 J", "13.6 GB": a metric value with its unit. */
void ui_fmt_metric(char *buf, size_t n, st_metric m, double v);
/* The cost metric's unit follows the sweep's evaluator. */
void ui_fmt_set_kind(st_sweep_kind k);

/* Braille scatter: points (x, y), front points highlighted, one marked. */
typedef struct ui_plot {
    const double *x, *y;
    const unsigned char *hi; /* 1: on the front */
    size_t n;
    double mark_x, mark_y;   /* NAN: none */
    st_metric mx, my;
} ui_plot;
void ui_plot_draw(const ui_plot *p, ui_rect r);

/* ---- the application ---------------------------------------------------------- */
enum { UI_S_PRESETS = 0, UI_S_WORKLOADS, UI_S_SWEEP, UI_S_RESULTS, UI_S_BREAKDOWN, UI_S_PARALLEL, UI_S_COUNT };

/* The sweep set-up form: one text per parameter of the evaluator. */
typedef struct ui_form {
    char name[64];
    st_sweep_kind kind;
    char value[ST_PARAM_COUNT][256];
    char objectives[96], constraints[160], sampling[64];
    /* the axes of the sweep file the form was read from, in the file's
     * order: a re-run keeps that order, and so every point's index */
    st_param axis_order[ST_PARAM_COUNT];
    int n_axis_order;
    /* rows whose text only approximates the file's axis (a list longer than
     * a row that forms no exact range), until edited: a re-run from the
     * form refuses them rather than run other values */
    unsigned char inexact[ST_PARAM_COUNT];
    size_t inexact_n[ST_PARAM_COUNT];
} ui_form;

/* The breakdown's point, evaluated again with its detail off the UI thread
 * (a serving point of 10^6 requests takes seconds, an accelerator mapping
 * search longer): the job owns `out` until `done` (atomic) is set. */
typedef struct ui_detail_job {
    pthread_t tid;
    const st_sweep *sweep;
    long long idx;
    st_detail *out;
    st_error err;
    int rc;
    int done;
} ui_detail_job;

typedef struct ui_retired {
    st_sweep_run *run;     /* NULL: no run left, only a detail job */
    st_sweep *sweep;
    ui_detail_job *job;    /* a detail job still reading the sweep, or NULL */
    struct ui_retired *next;
} ui_retired;

typedef struct ui_app ui_app;

typedef enum ui_prompt_kind { UI_P_NONE = 0, UI_P_FILTER, UI_P_FORM, UI_P_OPEN, UI_P_EXPORT } ui_prompt_kind;

struct ui_app {
    int screen, pane, help, quit;
    int threads;               /* sweep workers (0: the cores) */
    char error[1024];          /* the error panel ("" when closed) */
    char status[256];          /* one-line message */
    /* the prompt line */
    ui_prompt_kind prompt;
    char prompt_label[64], prompt_buf[256];
    size_t prompt_len;
    ui_list *prompt_list;      /* the list a filter applies to */
    int prompt_row;            /* form row being edited */
    /* presets and workloads */
    st_catalog cat;
    size_t *hw, n_hw, *wl, n_wl; /* catalog indexes */
    ui_list hw_list, wl_list, ops_list;
    char *hw_detail;
    size_t hw_detail_for;
    st_oplist ops;
    size_t ops_for;
    char ops_note[160];
    /* sweep set-up */
    char **files;
    size_t n_files;
    ui_list file_list, form_list;
    ui_form form;
    /* the running sweep */
    st_sweep *sweep;
    st_sweep_run *run;
    int why_done;              /* why[] holds this run's first refusal */
    char why[300];             /* a finished run with no valid point: the first reason */
    ui_retired *retired;
    long long *front, n_front;
    ui_list front_list;
    int plot_x, plot_y;        /* objective slots on the axes */
    double *px, *py;
    unsigned char *phi;
    size_t pn, pcap;
    /* breakdown */
    st_detail *detail;
    long long detail_idx;      /* the point detail holds (-1: none) */
    long long detail_want;     /* the point the screen asks for (-1: none) */
    long long detail_failed;   /* a point whose evaluation failed (not retried), or -1 */
    ui_detail_job *job;        /* evaluating detail_want, or NULL */
    ui_list layer_list;
    /* parallelism */
    size_t *tf_models, n_tf_models, *clusters, n_clusters;
    size_t par_model, par_cluster;
    st_model par_m;
    int par_m_loaded;
    st_cluster par_c;
    st_train_cfg par_cfg;
    st_train_result par_r;
    char par_err[512];
    int par_dirty;
    /* timing */
    double frame_s_sum, frame_s_max;
    long long frames;
};

/* Screens: draw into the body, handle a key (1: used). */
void ui_presets_draw(ui_app *a, ui_rect r);
int ui_presets_key(ui_app *a, int key);
void ui_workloads_draw(ui_app *a, ui_rect r);
int ui_workloads_key(ui_app *a, int key);
void ui_sweep_draw(ui_app *a, ui_rect r);
int ui_sweep_key(ui_app *a, int key);
/* The form was replaced (a file loaded): rebuild its list. */
void ui_sweep_form_changed(ui_app *a);
/* The prompt finished editing the form row a->prompt_row with text. */
void ui_sweep_store_row(ui_app *a, const char *text);
void ui_results_draw(ui_app *a, ui_rect r);
int ui_results_key(ui_app *a, int key);
void ui_breakdown_draw(ui_app *a, ui_rect r);
void ui_serving_draw(ui_app *a, ui_rect r); /* breakdown of a serve point */
int ui_breakdown_key(ui_app *a, int key);
void ui_parallel_draw(ui_app *a, ui_rect r);
int ui_parallel_key(ui_app *a, int key);
void ui_help_draw(ui_app *a);

/* Shared actions. */
void ui_error(ui_app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ui_status(ui_app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ui_prompt_open(ui_app *a, ui_prompt_kind k, const char *label, const char *initial);
/* The list of the focused pane (for '/'), or NULL. */
ui_list *ui_focused_list(ui_app *a);
/* The breakdown's point: ask for idx (evaluated off the UI thread; detail
 * holds it once detail_idx == idx), and take a finished evaluation in (the
 * event loop, each round). */
void ui_detail_request(ui_app *a, long long idx);
void ui_poll_detail(ui_app *a);
int ui_detail_job_done(const ui_detail_job *j);
void ui_detail_job_free(ui_detail_job *j); /* joins the thread: call once done */
/* Start a sweep (takes ownership of s); the old one is cancelled and retired. */
int ui_start_sweep(ui_app *a, st_sweep *s);
/* Load a sweep file and run it (errors go to the panel). */
void ui_open_sweep(ui_app *a, const char *path);
/* Fold what the pool finished; rebuild the front list when it changed. */
void ui_poll_sweep(ui_app *a);
/* Re-gather the plotted points (the axes changed). */
void ui_replot(ui_app *a);
/* The form from a loaded sweep, and a sweep from the form. */
void ui_form_from_sweep(ui_form *f, const st_sweep *s);
void ui_form_default(ui_form *f, st_sweep_kind k);
int ui_form_build(const ui_form *f, st_sweep *out, st_error *err);
/* Write DIR/points.csv, front.csv, points.json, front.json. */
int ui_export(ui_app *a, const char *dir, st_error *err);
/* Cancel the running sweep and say done_msg; a finished one is left as it is. */
void ui_cancel(ui_app *a, const char *done_msg);
void ui_sweep_files_scan(ui_app *a);

/* Entry points. */
typedef struct ui_opts {
    const char *sweep_path; /* NULL: the default sweep (H100 + Llama-2-7B) */
    int threads;            /* sweep workers; 0: the cores */
} ui_opts;
int ui_run(const ui_opts *o);
/* Render frames to /dev/null while a sweep runs: mean and worst frame time. */
int ui_bench_frames(const char *sweep_path, int threads, double *mean_s, double *max_s, long long *frames,
                    double *sweep_s, st_error *err);

#endif
