/* The batch CLI: one command per file (cmd_*.c), dispatched by main.c. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

#include "core/core.h"
#include "io/io.h"

typedef struct cli_command {
    const char *name;
    const char *usage;   /* one line: "list [--kind K] [--filter REGEX] [--json]" */
    const char *summary; /* one sentence */
    const char *help;    /* option details, printed by --help */
    int (*run)(int argc, char **argv);
    /* long options, space-separated, that collect a list and so may be
     * given more than once (cli_getopt refuses any other option given
     * twice with a value); NULL: none */
    const char *repeatable;
} cli_command;

extern const cli_command cmd_list;
extern const cli_command cmd_show;
extern const cli_command cmd_summary;
extern const cli_command cmd_calibrate;
extern const cli_command cmd_validate;
extern const cli_command cmd_kernel;
extern const cli_command cmd_eval;
extern const cli_command cmd_map;
extern const cli_command cmd_accel;
extern const cli_command cmd_coll;
extern const cli_command cmd_train;
extern const cli_command cmd_plan;
extern const cli_command cmd_sweep;
extern const cli_command cmd_ui;
extern const cli_command cmd_serve;
extern const cli_command cmd_suite;

/* argv[0] as main received it (the suite runs this program again). */
extern const char *cli_argv0;


/* Print "strata: MESSAGE" to stderr; returns exit status 1 (2 for usage). */
int cli_fail(const st_error *err);
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cli_print_help(const cli_command *cmd, FILE *out);
/* After getopt: exactly one operand at argv[optind]; 0, or 2 after a usage
 * error (`missing` when there is none, "unexpected argument" when more). */
int cli_one_operand(const cli_command *cmd, int argc, char **argv, const char *missing);

/* The measured-data folder SUB (neusight, vidur): `given` if set, else
 * $STRATA_SHARED/SUB, else ../shared/data/SUB beside the data root. */
/* An output file written whole or not at all: cli_out_open writes to a
 * temporary beside path; cli_out_close(ok) renames it over path when ok
 * and every write succeeded, else removes it. A path that is a symbolic
 * link to a regular file is resolved first (the file is replaced, not the
 * link); one that names something other than a regular file (a device, a
 * pipe, /dev/stdout) is written in place, since renaming over it would
 * replace the device node. Both return 0 or fail with a message in err. */
typedef struct cli_out {
    FILE *f;
    int direct; /* writing in place (not a regular file) */
    int closed; /* closed by cli_out_close_all, its temporary not yet renamed or removed */
    char path[1024], target[4096], tmp[4200];
} cli_out;
int cli_out_open(cli_out *o, const char *path, st_error *err);
/* An export folder: refused inside strata's data folders (before it is
 * made), made if absent, an error if it is not a folder; what names it in
 * messages ("--out"). */
int cli_out_dir(const char *dir, const char *what, st_error *err);
/* cli_out_dir, and in made (n bytes) each folder it made, a line each ("" when
 * it made none); cli_out_dir_undo removes them, the last made first, while
 * each is empty (a failed run leaves no folders behind) */
int cli_out_dir_made(const char *dir, const char *what, char *made, size_t n, st_error *err);
void cli_out_dir_undo(const char *made);
/* A sweep's export files (points.csv, front.csv, points.json, front.json)
 * into dir, all or none (cmd_sweep.c; the TUI's export too). */
struct st_sweep;
struct st_sweep_run;
int cli_sweep_export(const char *dir, const struct st_sweep *s, const struct st_sweep_run *r, st_error *err);
/* The same; a file inside the data root's presets/, workloads/ or
 * calibration/ is refused (runs read those without naming them), except
 * calibration/ when calibration_ok (calibrate writes the table there). */
int cli_out_open_in(cli_out *o, const char *path, int calibration_ok, st_error *err);
int cli_out_close(cli_out *o, int ok, st_error *err);
/* Several outputs of one run, all or none: each is closed; only when every
 * one was written and ok are they renamed into place (a failure on one
 * removes the others' temporaries too). An interrupted run (SIGINT, SIGTERM,
 * SIGHUP) removes the temporaries it has open. */
int cli_out_close_all(cli_out *o, int n, int ok, st_error *err);
/* Do paths a and b name the same file? Files that exist compare by device
 * and inode (x.csv, ./x.csv, a link to it); files not there yet by their
 * folder's real path and name, after the links that lead to them. */
int cli_same_file(const char *a, const char *b);
/* Would writing output path `out` destroy input `in`: the same file, or a
 * file inside folder `in`? An input that does not exist (a preset id, not
 * a path) is never hit. */
int cli_out_hits(const char *out, const char *in);
/* Usage error (returns 2) when output option `oopt` ('out') would overwrite
 * input `iopt` ('in'); 0 when either is NULL or they are apart. */
int cli_out_guard(const cli_command *cmd, const char *oopt, const char *out, const char *iopt,
                  const char *in);
/* ... nor the node or GPU preset file a loaded cluster (or node) read,
 * which --cluster names only through its own file */
int cli_out_guard_cluster(const cli_command *cmd, const char *oopt, const char *out, const char *cluster,
                          const st_cluster *cl);

/* part as a percentage of whole; 0 where the whole is 0 (an architecture
 * whose energies are all 0, say) */
static inline double cli_pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

int cli_shared_dir(const char *given, const char *sub, const char *opt, char *buf, size_t n, st_error *err);

/* Option values. */
int cli_parse_ll(const cli_command *cmd, const char *opt, const char *text, long long min,
                 long long max, long long *out);
/* --torch VER: a PyTorch release (st_torch_parse) into major x 100 + minor */
/* A decimal number in [lo, hi] (no hexadecimal, blanks or '+'); 2 after a
 * usage error naming opt. */
int cli_parse_num(const cli_command *cmd, const char *opt, const char *text, double lo, double hi, double *out);
int cli_parse_torch(const cli_command *cmd, const char *text, int *ver);
/* 1 when text is decimal digits, a colon, decimal digits ("16:1024"), the
 * A:B form of serve --shared-prefix and sweep --range (no blanks or signs,
 * which strtoll would take) */
int cli_digits_pair(const char *text);

/* A size in bytes: a number with an optional unit B, KiB/MiB/GiB/TiB (or
 * K/M/G/T, binary, as nccl-tests reads them), KB/MB/GB/TB (decimal). */
int cli_parse_bytes(const cli_command *cmd, const char *opt, const char *text, double *out);

/* getopt_long wrapper: reports unknown options with a did-you-mean. Returns
 * the option's value char, -1 at the end, or '?' after printing an error. */
struct option;
int cli_getopt(const cli_command *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);

/* Options that shape a workload's operator list, shared by show and eval:
 * --phase --batch --seq --kv --dtype --attn --no-optimizer --optimizer
 * --accumulate-grads (short letters p b s k d a O Z G; CLI_WL_LONGOPTS
 * lists them for getopt_long). */
typedef struct cli_wl {
    const char *phase, *dtype, *attn, *optimizer;
    long long batch, seq, kv; /* 0, 0, -1: not given */
    int no_opt, accum;
} cli_wl;
#define CLI_WL_SHORTOPTS "p:b:s:k:d:a:OZ:G"
#define CLI_WL_LONGOPTS                                                                         \
    {"phase", required_argument, NULL, 'p'}, {"batch", required_argument, NULL, 'b'},          \
        {"seq", required_argument, NULL, 's'}, {"kv", required_argument, NULL, 'k'},           \
        {"dtype", required_argument, NULL, 'd'}, {"attn", required_argument, NULL, 'a'},       \
        {"no-optimizer", no_argument, NULL, 'O'}, {"optimizer", required_argument, NULL, 'Z'},  \
        {"accumulate-grads", no_argument, NULL, 'G'}
void cli_wl_init(cli_wl *w);
/* Take getopt's result c if it is one of these: 1 taken, 0 not one of them,
 * -1 a bad value (the usage error is printed). */
int cli_wl_option(const cli_command *cmd, int c, const char *arg, cli_wl *w);
/* Check the named values (phase, dtype, attn): 0, or 2 after a usage error. */
int cli_wl_check(const cli_command *cmd, const cli_wl *w);
/* The model's defaults, then the options given (decode's KV length
 * defaults to a full --seq context). Call after cli_wl_check. */
void cli_wl_apply(const cli_wl *w, const st_model *m, st_gen_opts *o);
/* After cli_wl_apply: a usage error (2) when an option given does not apply
 * to this workload or phase (--seq/--kv/--attn on a CNN, --kv outside
 * decode, --no-optimizer outside train), else 0. */
int cli_wl_applies(const cli_command *cmd, const cli_wl *w, const st_model *m, const st_gen_opts *o);

/* JSON keys of a training step's options (optimizer: none, fused or
 * foreach; accumulate_grads); nothing outside --phase train. */
void cli_json_train_opts(st_json *j, const st_gen_opts *o);
/* The step a workload was generated for: phase, batch, seq, kv_len, dtype,
 * attention (seq and attention null for a CNN, whose input size is in its
 * file). */
void cli_json_step(st_json *j, const st_model *m, const st_gen_opts *o);
/* The same for the text step line (", fused AdamW, gradients accumulate"),
 * and the attention kernel's words ("eager", "fused", "fused
 * (FlashAttention-3)"). */
void cli_print_train_opts(const st_gen_opts *o, FILE *out);
const char *cli_attn_words(st_attn_impl a);

/* Human formatting: "29.3 T" style with a unit. */
void cli_si(char *buf, size_t n, double v, const char *unit);
void cli_bytes(char *buf, size_t n, double v); /* binary units: GiB, MiB */
void cli_secs(char *buf, size_t n, double s);  /* "12.3 us", "4.56 ms", "1.234 s" */
/* A written trace in --json: key{file, UNIT, UNIT_total, truncated}: how
 * many events (tasks, steps) it holds of the run's. */
void cli_json_trace(st_json *j, const char *key, const char *file, const char *unit, long long written,
                    long long total);

/* Printers shared by show and the summary (text and JSON). */
void cli_print_gpu(const st_gpu *g, FILE *out);
void cli_json_gpu(st_json *j, const char *key, const st_gpu *g);
void cli_print_loaded(const st_loaded *l, FILE *out);
void cli_json_loaded(st_json *j, const st_loaded *l);
void cli_print_model_header(const st_model *m, FILE *out);

/* Accelerator commands (map, accel): an architecture by preset name or
 * Timeloop file, a workload layer as a problem, and the stats printers. */
struct st_aprob;
struct st_astats;
struct st_amap;
int cli_load_arch(const char *name, const char *ert, st_accel *a, st_error *err);
int cli_layer_problem(const char *spec, struct st_aprob *p, st_error *err);
void cli_json_astats(st_json *j, const st_accel *a, const struct st_astats *s);
void cli_json_amap(st_json *j, const st_accel *a, const struct st_amap *m);
void cli_print_astats(const st_accel *a, const struct st_astats *s, FILE *out);

#endif
