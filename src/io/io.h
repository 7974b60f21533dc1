/*
 * io: files -> plain structs. The only layer that reads files.
 *
 * Presets (presets/gpu, edge, accel, node, cluster) and workloads
 * (workloads/: transformer and cnn descriptions, or a Hugging Face
 * config.json) are YAML read with libyaml. Every input error names
 * FILE:LINE:COL, the key, what was expected and what was found; unknown keys
 * are errors with a did-you-mean; all missing required keys are named at
 * once. Nothing is half-loaded: on error the output struct is left empty.
 *
 * A name is resolved against the data root: $STRATA_DATA, else the folder
 * of the running executable when it holds presets/ (a source-tree build),
 * else the installed $(pkgdatadir). Anything that looks like a path (has a
 * '/' or ends in .yaml/.yml/.json) is read as a file.
 */
#ifndef STRATA_IO_H
#define STRATA_IO_H

#include "hw/hw.h"
#include "workload/workload.h"
#include "explore/explore.h"

typedef enum st_file_kind {
    ST_FILE_GPU = 0,
    ST_FILE_EDGE,
    ST_FILE_ACCEL,
    ST_FILE_NODE,
    ST_FILE_CLUSTER,
    ST_FILE_MODEL,
    ST_FILE_KIND_COUNT
} st_file_kind;
const char *st_file_kind_name(st_file_kind k); /* "gpu", ..., "workload" */
const char *st_file_kind_article(st_file_kind k); /* "an" before "accelerator" and "edge", else "a" */

/* Any loaded file. Large (a cluster holds its node and GPU): heap-allocate. */
typedef struct st_loaded {
    st_file_kind kind;
    st_gpu gpu;
    st_edge edge;
    st_accel accel;
    st_node node;
    st_cluster cluster;
    st_model model;
} st_loaded;

/* A cluster preset, or a node preset as a one-node cluster. */
int st_load_cluster_or_node(const char *name, st_cluster *out, st_error *err);
/* The first node preset (by id) of at least `gpus` GPUs of preset gpu_id, as
 * a one-node cluster; ST_ENOTFOUND with a sentence naming --cluster. */
int st_load_node_for_gpu(const char *gpu_id, int gpus, st_cluster *out, st_error *err);

/* Sweep files (strata-sweep(5)). Every preset and workload named is loaded;
 * parameters the file leaves out get the evaluator's defaults; the point
 * count is set. Nothing is kept on error. */
int st_load_sweep(const char *path, st_sweep *out, st_error *err);
int st_load_sweep_buffer(const char *label, const char *buf, size_t len, st_sweep *out, st_error *err);
/* One value of parameter p as text (loads a named preset into s's tables). */
int st_sweep_parse_value(st_sweep *s, st_param p, const char *text, st_pvalue *out, st_error *err);
int st_sweep_parse_constraint(const char *text, st_constraint *out, st_error *err);
/* Defaults, coefficient table and point count, after building s by hand. */
int st_sweep_complete(st_sweep *s, st_error *err);

/* ---- scenario files (strata-scenario(5)) ---------------------------------
 * One practitioner question (the brief's scenario suite): a strata command
 * with its operands and options, optional cases that vary them, and the
 * metrics to report, each a path into the command's --json output. Every
 * case is an argv of that command (without "strata", ending in --json), so
 * a scenario's numbers are reproduced by one command line each. */
#define ST_SCN_MAX_CASES 16
#define ST_SCN_MAX_REPORT 24
#define ST_SCN_MAX_ARGS 96
#define ST_SCN_PATH_MAX 128

typedef enum st_scn_format {
    ST_SCN_FMT_AUTO = 0, /* from the key's suffix: _s time, _bytes bytes, ... */
    ST_SCN_FMT_TIME, ST_SCN_FMT_BYTES, ST_SCN_FMT_PERCENT, ST_SCN_FMT_RATE, ST_SCN_FMT_ENERGY,
    ST_SCN_FMT_NUMBER, ST_SCN_FMT_COUNT
} st_scn_format;

typedef struct st_scn_metric {
    char label[64];
    char path[ST_SCN_PATH_MAX];          /* "ttft_s.p50", "layers.0.energy_j" */
    char band[2][ST_SCN_PATH_MAX];       /* optional 90% band edges ("" none) */
    st_scn_format format;
    int speedup_over;                    /* case index the ratio is against, -1 none */
    int line, col;                       /* where the item is written */
} st_scn_metric;

typedef struct st_scn_case {
    char name[32];                       /* "" for a scenario without cases */
    int argc;
    char *argv[ST_SCN_MAX_ARGS];         /* command, operands, options, "--json" */
    int line, col;
} st_scn_case;

typedef struct st_scenario {
    char id[32];
    char title[160];
    char path[512];
    char command[16];
    int needs_shared;                    /* an argument names ${shared} */
    int shared_missing;                  /* ... and no shared-data folder was given */
    size_t n_cases;
    st_scn_case cases[ST_SCN_MAX_CASES];
    size_t n_metrics;
    st_scn_metric metrics[ST_SCN_MAX_REPORT];
    int line, col;                       /* where the options are written */
} st_scenario;

/* Commands a scenario may run: those that print one --json result and
 * write no file. */
extern const char *const st_scenario_commands[];
/* Load a scenario file. shared: the folder ${shared} stands for in operands
 * and option values (NULL: none; such a scenario loads with shared_missing
 * set). Nothing is kept on error. */
int st_load_scenario(const char *path, const char *shared, st_scenario *out, st_error *err);
int st_load_scenario_buffer(const char *label, const char *buf, size_t len, const char *shared,
                            st_scenario *out, st_error *err);
void st_scenario_free(st_scenario *s);

/* A JSON document (a command's --json output) read for lookups by path:
 * keys separated by '.', a number indexes a list ("layers.0.energy_j"). */
typedef struct st_jdoc st_jdoc;
int st_jdoc_parse(const char *label, const char *buf, size_t len, st_jdoc **out, st_error *err);
void st_jdoc_free(st_jdoc *d);
/* The scalar at path: its text (numbers as written, true/false, "" for
 * null) and, when it is a number, *num (else NAN). ST_ENOTFOUND with a
 * sentence naming the missing key, a did-you-mean and the keys there. */
int st_jdoc_get(const st_jdoc *d, const char *path, char *text, size_t n, double *num, st_error *err);

/* Load a preset or workload by name or path. */
int st_load(const char *name_or_path, st_loaded *out, st_error *err);
void st_loaded_free(st_loaded *l);

/* A GPU preset, or an edge preset (*is_edge set, g its st_edge_gpu_view):
 * a name or path that resolves to an edge file is loaded as one, so a
 * broken edge file reports its own FILE:LINE:COL error. */
int st_load_gpu_or_edge(const char *name_or_path, st_gpu *g, st_edge *e, int *is_edge, st_error *err);

/* Typed loaders; fail with a clear sentence when the file is another kind. */
int st_load_gpu(const char *name_or_path, st_gpu *out, st_error *err);
int st_load_node(const char *name_or_path, st_node *out, st_error *err);
int st_load_cluster(const char *name_or_path, st_cluster *out, st_error *err);
int st_load_accel(const char *name_or_path, st_accel *out, st_error *err);
int st_load_edge(const char *name_or_path, st_edge *out, st_error *err);
int st_load_model(const char *name_or_path, st_model *out, st_error *err);

/* Parse a buffer as a file of that name (tests, the TUI's editor). */
int st_load_buffer(const char *label, const char *buf, size_t len, st_loaded *out,
                   st_error *err);

/* ---- the catalog of shipped and installed files --------------------------- */
typedef struct st_catalog_entry {
    char id[ST_ID_MAX];
    char name[ST_NAME_MAX]; /* from the file's name: key ("" if unreadable) */
    char path[512];
    st_file_kind kind;      /* from the folder it lives in */
} st_catalog_entry;

typedef struct st_catalog {
    size_t n, cap;
    st_catalog_entry *items; /* sorted by kind, then id */
    char root[512];
} st_catalog;

/* The data root in use (see above); ST_ENOTFOUND when none has presets/. */
int st_data_root(char *buf, size_t n, st_error *err);
/* A file the caller may name: `given` when not NULL, else the data root's
 * `rel` (e.g. "calibration/edge.yaml") written into buf; NULL on error. */
const char *st_data_file(const char *given, const char *rel, char *buf, size_t n, st_error *err);
int st_catalog_scan(st_catalog *cat, st_error *err);
void st_catalog_free(st_catalog *cat);
/* Resolve a name (id or full name, case-insensitive) or path to a path.
 * want < 0: any kind. Unknown names get a did-you-mean. */
int st_resolve(const char *name_or_path, int want, char *path, size_t n, st_error *err);
/* Does st_resolve read this name as a path (a '/' or a .yaml, .yml or
 * .json ending) rather than an id or display name? */
int st_name_is_path(const char *s);

/* The GPU preset a measurement's device name denotes: the name a driver
 * reports ("Tesla V100-PCIE-32GB") or a file name made from it
 * ("Tesla_V100-PCIE-32GB"), matched without regard to case or '_' vs ' '
 * against each GPU preset's id, name and aliases. ST_ENOTFOUND when none. */
int st_find_gpu_for_device(const char *device, st_gpu *out, st_error *err);

#endif
