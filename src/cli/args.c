/* Option parsing and error reporting shared by the commands. */
#include "config.h"
#include "cli/cli.h"
#include "explore/explore.h"
#include "io/io.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

/* Does msg start with "FILE:LINE:COL: "? Such errors are printed as they
 * are, the way compilers print them, so editors can jump to the place. */
static int has_location(const char *msg)
{
    const char *p = strchr(msg, ':');
    for (int field = 0; field < 2; field++) {
        if (!p || !(p[1] >= '0' && p[1] <= '9'))
            return 0;
        p++;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p != ':')
            return 0;
    }
    return p[1] == ' ';
}

int cli_fail(const st_error *err)
{
    fprintf(stderr, has_location(err->msg) ? "%s\n" : "strata: %s\n", err->msg);
    return 1;
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "strata %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: strata %s\n", cmd->usage);
    return 2;
}

int cli_one_operand(const cli_command *cmd, int argc, char **argv, const char *missing)
{
    if (optind >= argc)
        return cli_usage_error(cmd, "%s", missing);
    if (!argv[optind][0])
        return cli_usage_error(cmd, "an empty argument where a name belongs: %s", missing);
    if (optind + 1 < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
    return 0;
}

void cli_print_help(const cli_command *cmd, FILE *out)
{
    fprintf(out, "usage: strata %s\n\n%s\n\n%s", cmd->usage, cmd->summary, cmd->help);
}

int cli_parse_ll(const cli_command *cmd, const char *opt, const char *text, long long min,
                 long long max, long long *out)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < min || v > max || !(*text >= '0' && *text <= '9')) {
        cli_usage_error(cmd, "%s: expected a whole number in [%lld, %lld], got '%s'", opt, min,
                        max, text);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_num(const cli_command *cmd, const char *opt, const char *text, double lo, double hi, double *out)
{
    char *e;
    double v = strtod(text, &e);
    /* decimal only, as every other number strata reads: strtod would also
     * take hex (0x10), leading blanks and a '+' */
    int dec = (isdigit((unsigned char)text[0]) || text[0] == '.' || text[0] == '-') && !strpbrk(text, "xXpP");
    if (!dec || e == text || *e || !isfinite(v) || v < lo || v > hi) {
        cli_usage_error(cmd, "%s: expected a number in [%g, %g], got '%s'", opt, lo, hi, text);
        return 2;
    }
    *out = v;
    return 0;
}

int cli_digits_pair(const char *text)
{
    size_t a = strspn(text, "0123456789");
    return a > 0 && text[a] == ':' && text[a + 1] && strspn(text + a + 1, "0123456789") == strlen(text + a + 1);
}

int cli_parse_torch(const cli_command *cmd, const char *text, int *ver)
{
    if (st_torch_parse(text, ver) != 0) {
        cli_usage_error(cmd, "--torch: expected a PyTorch release 1.x to 3.x as torch.__version__ gives it (e.g. "
                        "2.1 or 2.11.0), got '%s'", text);
        return -1;
    }
    return 0;
}

/* Whether `name` is one of the space-separated words of list (NULL: none) */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *w = list; w && *w;) {
        size_t l = strcspn(w, " ");
        if (l == n && strncmp(w, name, n) == 0)
            return 1;
        w += l + (w[l] == ' ');
    }
    return 0;
}

int cli_getopt(const cli_command *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts)
{
    /* a leading ':' makes getopt_long answer ':' (not '?') for a known
     * option, short or long, that lacks its value */
    char opts[128];
    snprintf(opts, sizeof opts, ":%s", shortopts);
    opterr = 0;
    /* options given so far in this parse (every command restarts getopt
     * with optind = 0), for refusing one given twice */
    static struct {
        int val;
        const char *arg;
    } seen[64];
    static int n_seen;
    if (optind == 0)
        n_seen = 0;
    int li = -1;
    int c = getopt_long(argc, argv, opts, longopts, &li);
    /* a value that is another of the command's options ("--qps --requests
     * 2": a value left out, as a scenario's `qps: true` writes it) */
    if (c != '?' && c != ':' && li >= 0 && longopts[li].has_arg == required_argument && optarg &&
        optarg[0] == '-' && optarg[1] == '-' && optarg[2]) {
        char word[64];
        snprintf(word, sizeof word, "%s", optarg + 2);
        word[strcspn(word, "=")] = '\0';
        for (const struct option *o = longopts; o->name; o++)
            if (strcmp(o->name, word) == 0) {
                cli_usage_error(cmd, "option --%s needs a value; '%s' is another option", longopts[li].name, optarg);
                return '?';
            }
    }
    /* an abbreviation one letter short of a plural (--gpu for --gpus) is
     * the singular another command takes (serve's --gpu PRESET), not a
     * prefix the user meant: refuse it rather than read a count from it */
    if (c != '?' && c != ':' && li >= 0 && optind >= 1 && optind <= argc) {
        const char *w = NULL;
        for (int i = optind - 1; i >= 1 && i >= optind - 2; i--)
            if (argv[i][0] == '-' && argv[i][1] == '-') {
                w = argv[i] + 2;
                break;
            }
        size_t wl = w ? strcspn(w, "=") : 0, nl = strlen(longopts[li].name);
        if (w && wl + 1 == nl && !strncmp(w, longopts[li].name, wl) && longopts[li].name[nl - 1] == 's') {
            int cluster = 0;
            for (const struct option *o = longopts; o->name; o++)
                cluster |= !strcmp(o->name, "cluster");
            cli_usage_error(cmd, "unknown option '--%.*s'; did you mean --%s? (spell it out%s)", (int)wl, w,
                            longopts[li].name,
                            wl == 3 && !strncmp(w, "gpu", wl) && cluster
                                ? "; --gpus is a count, the GPU and node come from --cluster"
                                : "");
            return '?';
        }
    }
    if (c == '?' || c == ':') {
        const char *bad = argv[optind - 1];
        if (c == ':') {
            cli_usage_error(cmd, "option %s needs a value", bad);
        } else {
            const char *names[64];
            size_t n = 0;
            char word[64];
            snprintf(word, sizeof word, "%s", bad + strspn(bad, "-"));
            char *eq = strchr(word, '=');
            if (eq)
                *eq = '\0';
            for (const struct option *o = longopts; o->name && n < 64; o++)
                names[n++] = o->name;
            /* a long option's prefix that starts several (--spec for
             * --spec-k and --spec-accept): name them all */
            char cands[400] = "";
            size_t nc = 0, wl = strlen(word);
            for (size_t i = 0; i < n && wl > 0 && bad[0] == '-' && bad[1] == '-'; i++)
                if (strncmp(names[i], word, wl) == 0) {
                    size_t l = strlen(cands);
                    snprintf(cands + l, sizeof cands - l, "%s--%s", nc ? ", " : "", names[i]);
                    nc++;
                }
            /* a one-letter word (-x) is no misspelling of a long name */
            const char *s = strlen(word) > 1 ? st_suggest(word, names, n) : NULL;
            if (nc > 1)
                cli_usage_error(cmd, "option '%s' is ambiguous: it could be %s; spell it out", bad, cands);
            else if (s)
                cli_usage_error(cmd, "unknown option '%s'; did you mean --%s?", bad, s);
            else
                cli_usage_error(cmd, "unknown option '%s'", bad);
        }
        return '?';
    }
    /* an option that takes a value, given twice (--tp 2 --tp 4), is refused
     * rather than the last one silently winning; the options a command lists
     * as collecting a list (its `repeatable`) may repeat */
    const struct option *o = li >= 0 ? &longopts[li] : NULL;
    for (const struct option *p = longopts; !o && p->name; p++)
        if (p->val == c && !p->flag)
            o = p;
    if (o && o->has_arg != no_argument && !listed(cmd->repeatable, o->name)) {
        for (int i = 0; i < n_seen; i++)
            if (seen[i].val == c) {
                cli_usage_error(cmd, "option --%s given twice ('%s', then '%s'); give it once", o->name,
                                seen[i].arg ? seen[i].arg : "", optarg ? optarg : "");
                return '?';
            }
        if (n_seen < (int)(sizeof seen / sizeof seen[0]))
            seen[n_seen].val = c, seen[n_seen++].arg = optarg;
    }
    return c;
}


void cli_wl_init(cli_wl *w)
{
    memset(w, 0, sizeof *w);
    w->kv = -1;
}

int cli_wl_option(const cli_command *cmd, int c, const char *arg, cli_wl *w)
{
    switch (c) {
    case 'p': w->phase = arg; return 1;
    case 'd': w->dtype = arg; return 1;
    case 'a': w->attn = arg; return 1;
    case 'O': w->no_opt = 1; return 1;
    case 'Z': w->optimizer = arg; return 1;
    case 'G': w->accum = 1; return 1;
    case 'b': return cli_parse_ll(cmd, "--batch", arg, 1, 1000000, &w->batch) ? -1 : 1;
    case 's': return cli_parse_ll(cmd, "--seq", arg, 1, 100000000, &w->seq) ? -1 : 1;
    case 'k': return cli_parse_ll(cmd, "--kv", arg, 0, 100000000, &w->kv) ? -1 : 1;
    default: return 0;
    }
}

int cli_wl_check(const cli_command *cmd, const cli_wl *w)
{
    st_phase ph;
    st_dtype dt;
    if (w->phase && st_phase_parse(w->phase, &ph) != 0)
        return cli_usage_error(cmd, "--phase: expected prefill, decode or train, got '%s'", w->phase);
    if (w->dtype && st_dtype_parse(w->dtype, &dt) != 0)
        return cli_usage_error(cmd, "--dtype: expected one of %s, got '%s'", st_dtype_choices(), w->dtype);
    st_attn_impl at;
    if (w->attn && st_attn_parse(w->attn, &at) != 0)
        return cli_usage_error(cmd, "--attn: expected " ST_ATTN_CHOICES ", got '%s'", w->attn);
    if (w->optimizer && strcmp(w->optimizer, "fused") != 0 && strcmp(w->optimizer, "foreach") != 0)
        return cli_usage_error(cmd, "--optimizer: expected fused or foreach, got '%s'", w->optimizer);
    if (w->optimizer && w->no_opt)
        return cli_usage_error(cmd, "--optimizer and --no-optimizer: give one of them");
    return 0;
}

void cli_wl_apply(const cli_wl *w, const st_model *m, st_gen_opts *o)
{
    st_gen_opts_default(o, m);
    if (w->phase)
        st_phase_parse(w->phase, &o->phase);
    if (w->dtype)
        st_dtype_parse(w->dtype, &o->dtype);
    if (w->batch)
        o->batch = w->batch;
    if (w->seq)
        o->seq = w->seq;
    if (w->kv >= 0)
        o->kv_len = w->kv;
    else if (o->phase == ST_PHASE_DECODE)
        o->kv_len = o->seq - 1; /* decode the token after a full --seq context */
    if (w->attn)
        st_attn_parse(w->attn, &o->attn);
    o->with_optimizer = !w->no_opt;
    o->optim_foreach = w->optimizer && strcmp(w->optimizer, "foreach") == 0;
    o->accumulate_grads = w->accum;
}

void cli_json_step(st_json *j, const st_model *m, const st_gen_opts *o)
{
    int tfm = m->kind == ST_MODEL_TRANSFORMER;
    st_json_string(j, "phase", st_phase_name(o->phase));
    st_json_int(j, "batch", o->batch);
    if (tfm)
        st_json_int(j, "seq", o->seq);
    else
        st_json_null(j, "seq");
    st_json_int(j, "kv_len", o->kv_len);
    st_json_string(j, "dtype", st_dtype_name(o->dtype));
    if (tfm)
        st_json_string(j, "attention", st_attn_name(o->attn));
    else
        st_json_null(j, "attention");
}

void cli_json_train_opts(st_json *j, const st_gen_opts *o)
{
    if (o->phase != ST_PHASE_TRAIN)
        return;
    st_json_string(j, "optimizer", !o->with_optimizer ? "none" : o->optim_foreach ? "foreach" : "fused");
    st_json_bool(j, "accumulate_grads", o->accumulate_grads);
}

void cli_print_train_opts(const st_gen_opts *o, FILE *out)
{
    if (o->phase != ST_PHASE_TRAIN)
        return;
    fputs(!o->with_optimizer ? ", no optimizer step"
          : o->optim_foreach ? ", AdamW foreach (torch.optim default)"
                             : ", fused AdamW", out);
    if (o->accumulate_grads)
        fputs(", gradients accumulate", out);
}

const char *cli_attn_words(st_attn_impl a)
{
    return a == ST_ATTN_FLASH3 ? "fused (FlashAttention-3)" : a == ST_ATTN_FLASH ? "fused" : "eager";
}

int cli_wl_applies(const cli_command *cmd, const cli_wl *w, const st_model *m, const st_gen_opts *o)
{
    char why[320];
    if (st_gen_refusal(m, o->phase, w->seq != 0, w->kv >= 0, w->attn != NULL, "--", why, sizeof why))
        return cli_usage_error(cmd, "%s", why);
    if (w->no_opt && o->phase != ST_PHASE_TRAIN)
        return cli_usage_error(cmd, "--no-optimizer applies to --phase train");
    if (w->optimizer && o->phase != ST_PHASE_TRAIN)
        return cli_usage_error(cmd, "--optimizer applies to --phase train");
    if (w->accum && o->phase != ST_PHASE_TRAIN)
        return cli_usage_error(cmd, "--accumulate-grads applies to --phase train");
    return 0;
}

static int path_target(const char *path, char *out, size_t n);

/* Is the file at path (there or not yet, through any links) inside the
 * data root's folder sub? Compared by real paths. */
static int inside_data(const char *path, const char *sub)
{
    char root[512], want[1100], real[PATH_MAX], target[PATH_MAX];
    st_error e = {0};
    if (st_data_root(root, sizeof root, &e) != 0)
        return 0;
    snprintf(want, sizeof want, "%s/%s", root, sub);
    if (!realpath(want, real) || path_target(path, target, sizeof target) != 0)
        return 0;
    size_t l = strlen(real);
    return strncmp(target, real, l) == 0 && target[l] == '/';
}

/* Temporaries being written, removed if the process is interrupted
 * (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT), so that an interrupted run leaves nothing half
 * written either. The handler only calls unlink(2), which is safe in a
 * signal handler, then restores the previous action and raises the signal
 * again (a curses TUI's handler still restores the terminal); a signal the
 * parent set to be ignored is left alone. Only the main thread opens and
 * closes outputs. */
#define CLI_OUT_SLOTS 8
static char pending[CLI_OUT_SLOTS][sizeof ((cli_out *)0)->tmp];
static volatile sig_atomic_t pending_used[CLI_OUT_SLOTS];
#define CLI_N_SIGNALS 5
static struct sigaction prev_action[CLI_N_SIGNALS];
/* a closed pipe (strata ... | head) ends the process by SIGPIPE too */
static const int cleanup_signals[CLI_N_SIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};

static void cleanup_on_signal(int sig)
{
    for (int i = 0; i < CLI_OUT_SLOTS; i++)
        if (pending_used[i])
            unlink(pending[i]);
    for (int i = 0; i < CLI_N_SIGNALS; i++)
        if (cleanup_signals[i] == sig)
            sigaction(sig, &prev_action[i], NULL);
    raise(sig);
}

static void pending_add(const char *tmp)
{
    static int installed;
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cleanup_on_signal;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < CLI_N_SIGNALS; i++) /* a signal the parent ignores (nohup) stays ignored */
            if (sigaction(cleanup_signals[i], NULL, &prev_action[i]) == 0 &&
                prev_action[i].sa_handler != SIG_IGN)
                sigaction(cleanup_signals[i], &sa, NULL);
        installed = 1;
    }
    for (int i = 0; i < CLI_OUT_SLOTS; i++)
        if (!pending_used[i]) {
            snprintf(pending[i], sizeof pending[i], "%s", tmp);
            pending_used[i] = 1;
            return;
        }
}

static void pending_drop(const char *tmp)
{
    for (int i = 0; i < CLI_OUT_SLOTS; i++)
        if (pending_used[i] && !strcmp(pending[i], tmp))
            pending_used[i] = 0;
}

/* every command loads presets, workloads and the coefficient table from
 * the data root, often without naming them (a node's GPU, the default
 * table): an output there would replace what runs read. Only calibrate
 * writes the table, into calibration/. */
static int data_guard(const char *path, int calibration_ok, st_error *err)
{
    static const char *const data_dirs[] = {"presets", "workloads", "calibration", "data"};
    for (int i = 0; i < 4; i++)
        if (!(i == 2 && calibration_ok) && inside_data(path, data_dirs[i]))
            return st_error_set(err, ST_EINVAL, "will not write %s: it is inside strata's data folder (%s/), %s; "
                                "write it elsewhere", path, data_dirs[i],
                                i == 3 ? "the measurements the calibration and validation read"
                                       : "whose files every run reads");
    return 0;
}

int cli_out_dir(const char *dir, const char *what, st_error *err)
{
    return cli_out_dir_made(dir, what, NULL, 0, err);
}

/* a folder cli_out_dir_made made: one line each in made (n bytes); one that
 * does not fit is not listed (undo then leaves it) */
static void made_add(char *made, size_t n, const char *path)
{
    if (!made || !n)
        return;
    size_t used = strlen(made), len = strlen(path);
    if (used + len + 2 <= n)
        snprintf(made + used, n - used, "%s\n", path);
}

int cli_out_dir_made(const char *dir, const char *what, char *made, size_t n, st_error *err)
{
    struct stat st;
    if (made && n)
        made[0] = 0;
    if (!dir[0])
        return st_error_set(err, ST_EINVAL, "%s is empty: give the folder for the export files", what);
    /* before the folder is made: a refused one is not left behind */
    if (data_guard(dir, 0, err))
        return ST_EINVAL;
    /* the parents too, as mkdir -p makes them */
    char part[4096];
    if (snprintf(part, sizeof part, "%s", dir) >= (int)sizeof part)
        return st_error_set(err, ST_EINVAL, "%s folder name too long: %s", what, dir);
    for (char *p = part + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (data_guard(part, 0, err)) /* each level, before it is made */
                return ST_EINVAL;
            if (mkdir(part, 0777) == 0) {
                made_add(made, n, part);
            } else if (errno != EEXIST) {
                return st_error_set(err, ST_EIO, "cannot make %s for the %s folder %s: %s", part, what, dir,
                                    strerror(errno));
            }
            *p = '/';
        }
    errno = 0;
    int mk = mkdir(dir, 0777);
    if ((mk && errno != EEXIST) || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        if (errno == EEXIST || errno == 0)
            errno = ENOTDIR;
        return st_error_set(err, ST_EIO, "cannot use %s as the %s folder: %s", dir, what, strerror(errno));
    }
    if (mk == 0)
        made_add(made, n, dir);
    return 0;
}

void cli_out_dir_undo(const char *made)
{
    if (!made || !made[0])
        return;
    /* exactly the folders mkdir made, the last made first (a path with ..
     * or doubled slashes names them as they were made) */
    char list[4096];
    snprintf(list, sizeof list, "%s", made);
    for (;;) {
        size_t len = strlen(list);
        if (len && list[len - 1] == '\n')
            list[--len] = 0;
        if (!len)
            return;
        char *nl = strrchr(list, '\n');
        char *p = nl ? nl + 1 : list;
        if (rmdir(p) != 0)
            return;
        *p = 0;
    }
}

int cli_out_open(cli_out *o, const char *path, st_error *err)
{
    return cli_out_open_in(o, path, 0, err);
}

int cli_out_open_in(cli_out *o, const char *path, int calibration_ok, st_error *err)
{
    memset(o, 0, sizeof *o);
    /* strata suite runs its commands for their printed result only */
    const char *ro = getenv("STRATA_READ_ONLY");
    if (ro && *ro && strcmp(ro, "0") != 0)
        return st_error_set(err, ST_EINVAL, "will not write %s: STRATA_READ_ONLY is set (strata suite runs "
                                            "commands that write no file)", path);
    /* every command loads presets, workloads and the coefficient table
     * from the data root, often without naming them (a node's GPU, the
     * default table): an output there would replace what runs read. Only
     * calibrate writes the table, into calibration/. */
    if (data_guard(path, calibration_ok, err))
        return ST_EINVAL;
    if (!path[0])
        return st_error_set(err, ST_EINVAL, "empty output path: give a file name");
    if (!strcmp(path, "-"))
        return st_error_set(err, ST_EINVAL, "'-' is not an output file here (standard output carries the "
                                            "report): give a file name, or /dev/stdout to mix the two on a "
                                            "pipe or terminal");
    if (strlen(path) >= sizeof o->path)
        return st_error_set(err, ST_EINVAL, "output path too long: %.60s...", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->target, sizeof o->target, "%s", path);
    struct stat st, lst, so;
    int exists = stat(path, &st) == 0, link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    /* the file standard output is redirected to (`--trace r.json >
     * r.json`, /dev/stdout then): the output would be renamed over it and
     * the report written to the replaced file, lost with exit 0 */
    if (!calibration_ok && /* calibrate prints nothing on stdout when it writes a file */
        exists && S_ISREG(st.st_mode) && fstat(STDOUT_FILENO, &so) == 0 && S_ISREG(so.st_mode) &&
        so.st_dev == st.st_dev && so.st_ino == st.st_ino)
        return st_error_set(err, ST_EINVAL, "cannot write %s: it is the file standard output goes to, so the "
                            "report printed there would be lost; give the output another name, or send the "
                            "report elsewhere", path);
    if ((exists && !S_ISREG(st.st_mode)) || (link && !exists)) {
        /* a device, a pipe, or a link to one (or to a file not there yet):
         * write through it; a rename would replace the node or the link */
        if (exists && S_ISDIR(st.st_mode))
            return st_error_set(err, ST_EINVAL, "cannot write %s: it is a folder (give a file name)", path);
        o->direct = 1;
        o->f = fopen(path, "w");
    } else {
        if (link) { /* replace the file the link points to, keep the link */
            char real[PATH_MAX];
            if (!realpath(path, real) || strlen(real) >= sizeof o->target)
                return st_error_set(err, ST_EIO, "cannot resolve %s: %s", path, strerror(errno));
            snprintf(o->target, sizeof o->target, "%s", real);
        }
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->target, (long)getpid());
        pending_add(o->tmp); /* before the file exists: a signal in between finds nothing to remove */
        o->f = fopen(o->tmp, "w");
        if (!o->f)
            pending_drop(o->tmp);
    }
    if (!o->f && !o->direct)
        return st_error_set(err, ST_EIO, "cannot write %s: creating %s beside it failed: %s (strata writes a "
                            "temporary file in the same folder and renames it over the target: the folder "
                            "must exist and be writable)", path, o->tmp, strerror(errno));
    if (!o->f)
        return st_error_set(err, ST_EIO, "cannot write %s: %s (check the folder exists and is writable)",
                            path, strerror(errno));
    return 0;
}

int cli_out_close(cli_out *o, int ok, st_error *err)
{
    return cli_out_close_all(o, 1, ok, err);
}

int cli_out_close_all(cli_out *o, int n, int ok, st_error *err)
{
    /* close every file first: one that failed to write fails them all */
    const char *bad = NULL;
    int opened = 0, bad_direct = 0, bad_errno = 0;
    for (int i = 0; i < n; i++) {
        if (!o[i].f)
            continue;
        opened++;
        int b = ferror(o[i].f), e = 0;
        /* the buffered rest goes out here (ENOSPC, EIO); errno means
         * something only when this close failed (a failed earlier write
         * leaves ferror set and no reason) */
        if (fclose(o[i].f) != 0) {
            b = 1;
            e = errno;
        }
        o[i].f = NULL;
        o[i].closed = 1;
        if (b && !bad)
            bad = o[i].path, bad_direct = o[i].direct, bad_errno = e;
    }
    char why[96] = "";
    if (bad_errno)
        snprintf(why, sizeof why, ": %s", strerror(bad_errno));
    if (!opened)
        return 0;
    int rc = 0;
    if (!ok || bad) {
        for (int i = 0; i < n; i++)
            if (o[i].closed && !o[i].direct) {
                remove(o[i].tmp);
                pending_drop(o[i].tmp);
            }
        /* a device or pipe: what went out cannot be taken back */
        if (ok && bad_direct && opened == 1)
            rc = st_error_set(err, ST_EIO, "writing %s failed%s", bad, why[0] ? why : " (no space, or the device "
                                                                                   "refused the bytes)");
        else if (ok)
            rc = st_error_set(err, ST_EIO, "writing %s failed%s; %s", bad, why[0] ? why : " (disk full?)",
                              opened > 1 ? "none of the output files written" : "nothing written");
        return rc;
    }
    for (int i = 0; i < n; i++) {
        if (!o[i].closed || o[i].direct)
            continue;
        if (rename(o[i].tmp, o[i].target) != 0) {
            int e = errno;
            remove(o[i].tmp);
            if (!rc)
                rc = st_error_set(err, ST_EIO, "cannot replace %s: %s", o[i].path, strerror(e));
        }
        pending_drop(o[i].tmp);
    }
    return rc;
}

/* Where a path that names no file yet would be created: its folder's real
 * path and its last component, following a dangling link (cli_out_open
 * writes through it) up to 40 hops, as the kernel does. */
static int path_target(const char *path, char *out, size_t n)
{
    char cur[PATH_MAX];
    if (strlen(path) >= sizeof cur)
        return -1;
    snprintf(cur, sizeof cur, "%s", path);
    for (int hop = 0; hop < 40; hop++) {
        char dir[PATH_MAX], real[PATH_MAX], link[PATH_MAX];
        const char *slash = strrchr(cur, '/'), *base = slash ? slash + 1 : cur;
        size_t dl = !slash ? 0 : slash == cur ? 1 : (size_t)(slash - cur);
        snprintf(dir, sizeof dir, "%.*s", dl ? (int)dl : 1, dl ? cur : ".");
        if (!realpath(dir, real))
            return -1;
        if ((size_t)snprintf(out, n, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) >= n)
            return -1;
        ssize_t k = readlink(out, link, sizeof link - 1);
        if (k < 0)
            return 0; /* not a link: the file itself */
        link[k] = '\0';
        if ((size_t)snprintf(cur, sizeof cur, "%s%s%s", link[0] == '/' ? "" : real,
                             link[0] == '/' || !strcmp(real, "/") ? "" : "/", link) >= sizeof cur)
            return -1;
    }
    return -1;
}

int cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea || eb)
        return 0;
    char ta[PATH_MAX], tb[PATH_MAX];
    if (path_target(a, ta, sizeof ta) || path_target(b, tb, sizeof tb))
        return !strcmp(a, b); /* a folder that is not there: opening either fails anyway */
    return !strcmp(ta, tb);
}

int cli_out_hits(const char *out, const char *in)
{
    struct stat si;
    char resolved[512];
    if (!out || !in)
        return 0;
    st_error e;
    /* a preset or workload id: the file it names, as the loaders read it
     * (a local folder of the same name is not what they open); a name that
     * is no id (a --data folder given bare) is taken as it stands */
    if (!st_name_is_path(in) && st_resolve(in, -1, resolved, sizeof resolved, &e) == 0 &&
        stat(resolved, &si) == 0)
        in = resolved;
    else if (stat(in, &si) != 0)
        return 0;
    if (!S_ISDIR(si.st_mode))
        return cli_same_file(out, in);
    char dir[PATH_MAX], target[PATH_MAX];
    if (!realpath(in, dir))
        return 0;
    struct stat so;
    if (stat(out, &so) == 0) {
        if (!realpath(out, target))
            return 0;
    } else if (path_target(out, target, sizeof target)) {
        return 0; /* its folder is not there: opening it fails anyway */
    }
    size_t n = strlen(dir);
    if (n == 1) /* the root folder holds everything */
        return 1;
    return strncmp(target, dir, n) == 0 && (target[n] == '/' || target[n] == '\0');
}

int cli_out_guard(const cli_command *cmd, const char *oopt, const char *out, const char *iopt,
                  const char *in)
{
    if (!cli_out_hits(out, in))
        return 0;
    struct stat si;
    if (stat(in, &si) == 0 && S_ISDIR(si.st_mode))
        return cli_usage_error(cmd, "%s '%s' is inside the %s folder '%s', which this run reads; write it "
                               "somewhere else", oopt, out, iopt, in);
    return cli_usage_error(cmd, "%s '%s' is the file %s '%s' names, which this run reads; write it somewhere "
                           "else", oopt, out, iopt, in);
}

int cli_out_guard_cluster(const cli_command *cmd, const char *oopt, const char *out, const char *cluster,
                          const st_cluster *cl)
{
    const char *src[2] = {cl->node_src, cl->node.gpu_src}, *what[2] = {"node", "GPU"};
    for (int i = 0; i < 2 && out; i++)
        if (src[i][0] && cli_same_file(out, src[i]))
            return cli_usage_error(cmd, "%s '%s' is the %s preset that --cluster '%s' reads (%s); write it "
                                   "somewhere else", oopt, out, what[i], cluster, src[i]);
    return 0;
}

int cli_parse_bytes(const cli_command *cmd, const char *opt, const char *text, double *out)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"", 1},      {"B", 1},       {"K", 1024},  {"KiB", 1024}, {"KB", 1e3},
                 {"M", 1 << 20}, {"MiB", 1 << 20}, {"MB", 1e6}, {"G", 1 << 30},  {"GiB", 1 << 30},
                 {"GB", 1e9},  {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"TB", 1e12},
                 {"P", 1125899906842624.0}, {"PiB", 1125899906842624.0}, {"PB", 1e15}};
    char *end;
    double v = strtod(text, &end);
    /* decimal only: strtod would also take hexadecimal (0x10, 0x1p4) */
    if (end != text && v >= 0 && isfinite(v) && *text >= '0' && *text <= '9' && !strpbrk(text, "xX")) {
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            if (strcmp(end, units[i].suffix) != 0)
                continue;
            double b = v * units[i].scale;
            if (b > 1e18) {
                cli_usage_error(cmd, "%s: '%s' is %.3g bytes; sizes go up to 1e18 bytes (about 888 PiB)", opt,
                                text, b);
                return -1;
            }
            if (units[i].scale == 1 && v != floor(v)) {
                cli_usage_error(cmd, "%s: '%s' is not a whole number of bytes; give whole bytes or a unit "
                                     "(0.5KiB is 512)", opt, text);
                return -1;
            }
            /* a nonzero digit that strtod underflowed to 0 (1e-400G) is under a byte too */
            if ((b > 0 && b < 0.5) || (b == 0 && strcspn(text, "123456789") < strcspn(text, "eE") && text[strcspn(text, "eE")])) {
                cli_usage_error(cmd, "%s: '%s' is less than one byte; sizes count whole bytes", opt, text);
                return -1;
            }
            *out = floor(b + 0.5); /* whole bytes: 0.1MiB is 104858 */
            return 0;
        }
        if (*end) {
            cli_usage_error(cmd, "%s: unknown unit '%s' in '%s'; units are B, K/KiB, M/MiB, G/GiB, T/TiB, "
                                 "P/PiB (powers of 1024) and KB, MB, GB, TB, PB (of 1000), as in 64MiB or 100MB", opt, end, text);
            return -1;
        }
    }
    cli_usage_error(cmd, "%s: expected a size such as 1048576, 64MiB, 64M (= MiB), 100MB or 1GiB, got '%s'",
                    opt, text);
    return -1;
}

/* The export files under dir, written all or none: each goes to a
 * temporary first; only when all four are written are they renamed into
 * place (a failure on the third leaves the first two untouched). */
int cli_sweep_export(const char *dir, const st_sweep *s, const st_sweep_run *r, st_error *err)
{
    cli_out o[ST_SWEEP_EXPORTS];
    memset(o, 0, sizeof o);
    int rc = 0;
    for (int i = 0; i < ST_SWEEP_EXPORTS && !rc; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, st_sweep_exports[i].name);
        rc = cli_out_open(&o[i], path, err);
    }
    for (int i = 0; i < ST_SWEEP_EXPORTS && !rc; i++)
        if ((rc = st_sweep_write_export(s, r, i, o[i].f)) || ferror(o[i].f))
            rc = st_error_set(err, ST_EIO, "writing %s/%s failed (disk full?); nothing written", dir,
                              st_sweep_exports[i].name);
    st_error e2;
    if (cli_out_close_all(o, ST_SWEEP_EXPORTS, rc == 0, rc ? &e2 : err) && !rc)
        rc = ST_EIO;
    return rc;
}
