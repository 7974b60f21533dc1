/* strata suite: run the scenario suite (the brief's practitioner questions,
 * the YAML files in workloads/scenarios, strata-scenario(5)). Every case of every
 * scenario is one strata command line; the suite runs them as child
 * processes of this same program (--jobs at a time), reads each one's --json
 * output and prints the metrics the scenario names. A number the suite
 * prints is reproduced by running the command line it shows. */
#define _GNU_SOURCE /* pipe2: a pipe created close-on-exec in one step */
#include "config.h"
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A command's output is a few kB to a few MB (serve's KV samples); more
 * than this is not a result the suite reads. */
#define MAX_CAPTURE (64u << 20)
#define MAX_FILES 256
/* A case that runs longer than this is stopped and failed (the shipped
 * scenarios take under a second each; a simulation that hangs must not
 * hang the suite). */
#define DEFAULT_TIMEOUT_S 600

typedef struct child {
    const st_scenario *s;
    size_t c;           /* case */
    char *out, *err;    /* captured stdout, stderr */
    size_t n_out, n_err;
    int status;         /* wait status */
    char fail[1024];    /* why it could not run ("" if it ran) */
} child;

typedef struct pool {
    const char *exe;
    char **envp;        /* the environment, with STRATA_READ_ONLY=1 */
    double timeout_s;   /* per case; 0: none */
    child *runs;
    size_t n, next;
    pthread_mutex_t mu;
} pool;

/* Children running now, so that a suite stopped by SIGINT or SIGTERM
 * takes them with it (the slots are written by the workers, read by the
 * handler). */
#define MAX_JOBS 64
static volatile sig_atomic_t running[MAX_JOBS];

static void stop_children(int sig)
{
    for (int i = 0; i < MAX_JOBS; i++)
        if (running[i] > 0)
            kill((pid_t)running[i], SIGTERM);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- running one case ------------------------------------------------------ */
static int grow(char **buf, size_t *n, size_t *cap, const char *src, size_t len)
{
    if (*n + len + 1 > *cap) {
        size_t c = *cap ? *cap * 2 : 65536;
        while (c < *n + len + 1)
            c *= 2;
        char *b = realloc(*buf, c);
        if (!b)
            return -1;
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *n, src, len);
    *n += len;
    (*buf)[*n] = '\0';
    return 0;
}

/* Run one case: its argv under this program, stdin /dev/null, stdout and
 * stderr read through pipes made close-on-exec atomically (a child another
 * worker starts meanwhile must not hold them open), killed after timeout_s. */
static void run_case(const pool *p, int slot, child *r)
{
    const st_scn_case *k = &r->s->cases[r->c];
    char *argv[ST_SCN_MAX_ARGS + 2];
    argv[0] = (char *)p->exe;
    for (int i = 0; i < k->argc; i++)
        argv[i + 1] = k->argv[i];
    argv[k->argc + 1] = NULL;
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    pid_t pid = -1;
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        snprintf(r->fail, sizeof r->fail, "cannot make a pipe: %s", strerror(errno));
        goto closed;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    /* the suite ignores SIGPIPE; its children get the default back */
    posix_spawnattr_t at;
    sigset_t def;
    posix_spawnattr_init(&at);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
    int e = posix_spawn(&pid, p->exe, &fa, &at, argv, p->envp);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    if (e) {
        pid = -1;
        snprintf(r->fail, sizeof r->fail, "cannot start %s: %s", p->exe, strerror(e));
        goto closed;
    }
    running[slot] = pid;
    size_t cap_o = 0, cap_e = 0;
    struct pollfd pf[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2, oom = 0, timed_out = 0;
    double t0 = st_mono_s();
    char buf[65536];
    while (open_fds) {
        int wait_ms = -1;
        if (p->timeout_s > 0) {
            double left = p->timeout_s - (st_mono_s() - t0);
            if (left <= 0) {
                timed_out = 1;
                kill(pid, SIGKILL);
                break;
            }
            wait_ms = (int)(left * 1000) + 1;
        }
        int nr = poll(pf, 2, wait_ms);
        if (nr < 0 && errno == EINTR)
            continue;
        if (nr < 0) {
            snprintf(r->fail, sizeof r->fail, "cannot read its output: %s", strerror(errno));
            kill(pid, SIGKILL);
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = read(pf[i].fd, buf, sizeof buf);
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (got <= 0) {
                pf[i].fd = -1;
                open_fds--;
                continue;
            }
            size_t *n = i ? &r->n_err : &r->n_out;
            if (*n + (size_t)got > MAX_CAPTURE || grow(i ? &r->err : &r->out, n, i ? &cap_e : &cap_o, buf,
                                                       (size_t)got))
                oom = 1; /* keep draining so the child can finish */
        }
    }
    /* the pipes close before the wait: a child still writing gets EPIPE or
     * its kill, never a parent that waits while it blocks */
    close(po[0]);
    close(pe[0]);
    po[0] = pe[0] = -1;
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
        ;
    running[slot] = 0;
    if (timed_out)
        snprintf(r->fail, sizeof r->fail, "stopped after %g s (--timeout)", p->timeout_s);
    else if (oom && !r->fail[0])
        snprintf(r->fail, sizeof r->fail, "its output passed %u MiB (or memory ran out); not read",
                 MAX_CAPTURE >> 20);
closed:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
    }
}

typedef struct worker_arg {
    pool *p;
    int slot;
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next < p->n ? p->next++ : p->n;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n)
            return NULL;
        run_case(p, w->slot, &p->runs[i]);
    }
}

static void run_all(pool *p, int jobs)
{
    pthread_t t[MAX_JOBS];
    worker_arg wa[MAX_JOBS];
    int started = 0;
    for (int i = 0; i < jobs && i < MAX_JOBS && (size_t)i < p->n; i++) {
        wa[started] = (worker_arg){p, started};
        if (pthread_create(&t[started], NULL, worker, &wa[started]) == 0)
            started++;
    }
    if (!started) {
        wa[0] = (worker_arg){p, 0};
        worker(&wa[0]);
    }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
}

/* ---- the program to run ---------------------------------------------------- */
static int self_path(char *buf, size_t n, st_error *err)
{
    ssize_t l = readlink("/proc/self/exe", buf, n - 1);
    if (l > 0) {
        buf[l] = '\0';
        return 0;
    }
    if (cli_argv0 && strchr(cli_argv0, '/') && access(cli_argv0, X_OK) == 0) {
        snprintf(buf, n, "%s", cli_argv0);
        return 0;
    }
    return st_error_set(err, ST_ENOTFOUND, "cannot find this program's own path to run the scenarios "
                                           "(no /proc/self/exe); run strata by its path");
}

/* ---- finding and loading scenario files ------------------------------------- */
static int has_yaml_ext(const char *name)
{
    size_t l = strlen(name);
    return (l > 5 && strcmp(name + l - 5, ".yaml") == 0) || (l > 4 && strcmp(name + l - 4, ".yml") == 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_path(char **files, size_t *n, const char *path, st_error *err)
{
    if (*n >= MAX_FILES)
        return st_error_set(err, ST_EINVAL, "more than %d scenario files; name fewer", MAX_FILES);
    if (!(files[*n] = strdup(path)))
        return st_error_set(err, ST_ENOMEM, "out of memory");
    (*n)++;
    return 0;
}

/* A folder's *.yaml and *.yml files, sorted by name; a file as itself. */
static int collect(const char *arg, char **files, size_t *n, st_error *err)
{
    struct stat st;
    if (stat(arg, &st) != 0)
        return st_error_set(err, ST_ENOTFOUND, "%s: %s; name a scenario file or a folder of them", arg,
                            strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return add_path(files, n, arg, err);
    DIR *d = opendir(arg);
    if (!d)
        return st_error_set(err, ST_EIO, "%s: cannot read the folder: %s", arg, strerror(errno));
    size_t first = *n;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)))
        if (e->d_name[0] != '.' && has_yaml_ext(e->d_name)) {
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", arg, e->d_name);
            rc = add_path(files, n, p, err);
        }
    closedir(d);
    if (!rc && *n == first)
        rc = st_error_set(err, ST_ENOTFOUND, "%s: no scenario files (*.yaml) in this folder", arg);
    if (!rc)
        qsort(files + first, *n - first, sizeof *files, cmp_str);
    return rc;
}

/* ---- printing ---------------------------------------------------------------- */
static const char *last_key(const char *path)
{
    const char *d = strrchr(path, '.');
    return d ? d + 1 : path;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* What a value is, from its key when the scenario does not say; a
 * statistic (ttft_s.p99) takes its unit from the key it summarises. */
static st_scn_format infer_format(const char *path)
{
    static const char *const stats[] = {"mean", "p50", "p90", "p95", "p99", "max", "min"};
    const char *k = last_key(path);
    char parent[ST_SCN_PATH_MAX];
    for (size_t i = 0; i < sizeof stats / sizeof stats[0] && k != path; i++)
        if (strcmp(k, stats[i]) == 0) {
            size_t l = (size_t)(k - 1 - path);
            memcpy(parent, path, l);
            parent[l] = '\0';
            k = last_key(parent);
            break;
        }
    if (ends_with(k, "_tok_s") || ends_with(k, "_req_s") || ends_with(k, "per_s"))
        return ST_SCN_FMT_RATE;
    if (ends_with(k, "_s") || !strcmp(k, "seconds"))
        return ST_SCN_FMT_TIME;
    if (strstr(k, "bytes"))
        return ST_SCN_FMT_BYTES;
    if (strstr(k, "fraction") || strstr(k, "ratio") || !strcmp(k, "mfu") || !strcmp(k, "utilization") ||
        !strcmp(k, "slo_attainment"))
        return ST_SCN_FMT_PERCENT;
    if (ends_with(k, "_j"))
        return ST_SCN_FMT_ENERGY;
    return ST_SCN_FMT_NUMBER;
}

static st_scn_format metric_format(const st_scn_metric *m);

static void format_value(char *buf, size_t n, double v, const char *text, const st_scn_metric *m)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", text[0] ? text : "-");
        return;
    }
    switch (metric_format(m)) {
    case ST_SCN_FMT_TIME: cli_secs(buf, n, v); break;
    case ST_SCN_FMT_BYTES: cli_bytes(buf, n, v); break;
    case ST_SCN_FMT_PERCENT: snprintf(buf, n, "%.1f%%", 100 * v); break;
    case ST_SCN_FMT_RATE: { /* "10.1 k" then what is counted per second */
        const char *k = last_key(m->path);
        const char *u = strstr(k, "tok") ? "tokens/s" : strstr(k, "req") ? "requests/s" : "/s";
        cli_si(buf, n, v, "");
        size_t l = strlen(buf);
        if (l && buf[l - 1] == ' ') /* no prefix: "588 " */
            buf[--l] = '\0';
        snprintf(buf + l, n - l, " %s", u);
        break;
    }
    case ST_SCN_FMT_ENERGY: cli_si(buf, n, v, "J"); break;
    case ST_SCN_FMT_COUNT: snprintf(buf, n, "%.0f", v); break;
    default: /* whole numbers in full up to seven digits, else four significant */
        if (v == floor(v) && fabs(v) < 1e7)
            snprintf(buf, n, "%.0f", v);
        else
            snprintf(buf, n, "%.4g", v);
    }
}

/* One metric of one case, read from its output. */
typedef struct cell {
    int ok;
    double v, lo, hi, speedup;
    char text[64];
    char err[768];
} cell;

typedef struct result {
    st_jdoc *doc;       /* parsed output, NULL when the case failed */
    char err[1200];     /* why the case failed ("" when it ran) */
    cell *cells;        /* n_metrics */
} result;

/* The command's own message: the first line of its stderr (the rest of a
 * usage error is the usage). */
static void first_line(const char *s, size_t n, char *out, size_t len)
{
    size_t j = 0, i = 0;
    while (s && i < n && (s[i] == '\n' || s[i] == ' '))
        i++;
    for (; s && i < n && s[i] != '\n' && j + 1 < len; i++)
        out[j++] = s[i];
    out[j] = '\0';
}

static void read_result(const child *r, result *res)
{
    const st_scenario *s = r->s;
    memset(res, 0, sizeof *res);
    res->cells = calloc(s->n_metrics ? s->n_metrics : 1, sizeof *res->cells);
    if (!res->cells) {
        snprintf(res->err, sizeof res->err, "out of memory");
        return;
    }
    char msg[900];
    if (r->fail[0]) {
        snprintf(res->err, sizeof res->err, "%s", r->fail);
        return;
    }
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0) {
        first_line(r->err, r->n_err, msg, sizeof msg);
        if (WIFSIGNALED(r->status))
            snprintf(res->err, sizeof res->err, "killed by signal %d%s%s", WTERMSIG(r->status), msg[0] ? ": " : "",
                     msg);
        else
            snprintf(res->err, sizeof res->err, "exited %d: %s", WEXITSTATUS(r->status),
                     msg[0] ? msg : "(no message)");
        return;
    }
    st_error e = {0};
    char label[64];
    snprintf(label, sizeof label, "the output of `strata %s`", s->command);
    if (st_jdoc_parse(label, r->out ? r->out : "", r->n_out, &res->doc, &e)) {
        snprintf(res->err, sizeof res->err, "%s", e.msg);
        return;
    }
    for (size_t m = 0; m < s->n_metrics; m++) {
        const st_scn_metric *mt = &s->metrics[m];
        cell *c = &res->cells[m];
        c->lo = c->hi = c->speedup = NAN;
        if (st_jdoc_get(res->doc, mt->path, c->text, sizeof c->text, &c->v, &e)) {
            snprintf(c->err, sizeof c->err, "%s:%d:%d: metric '%s': %s", s->path, mt->line, mt->col, mt->path,
                     e.msg);
            continue;
        }
        c->ok = 1;
        char t[64];
        for (int b = 0; b < 2 && mt->band[0][0]; b++) {
            double v;
            if (st_jdoc_get(res->doc, mt->band[b], t, sizeof t, &v, &e)) {
                snprintf(c->err, sizeof c->err, "%s:%d:%d: band of '%s': %s", s->path, mt->line, mt->col,
                         mt->path, e.msg);
                c->ok = 0;
                break;
            }
            *(b ? &c->hi : &c->lo) = v;
        }
    }
}

static int result_failed(const st_scenario *s, const result *r)
{
    if (r->err[0])
        return 1;
    for (size_t m = 0; m < s->n_metrics; m++)
        if (!r->cells[m].ok)
            return 1;
    return 0;
}

/* A command line as a shell would take it: words with spaces or shell
 * characters single-quoted. Allocated to fit (a quote in a word takes four
 * bytes); NULL when memory runs out. */
static char *shell_line(const st_scn_case *k)
{
    size_t n = sizeof "strata";
    for (int i = 0; i < k->argc; i++)
        n += 3 + 4 * strlen(k->argv[i]);
    char *buf = malloc(n), *o = buf;
    if (!buf)
        return NULL;
    o += sprintf(o, "strata");
    for (int i = 0; i < k->argc; i++) {
        const char *a = k->argv[i];
        int plain = a[0] != '\0';
        for (const char *q = a; *q; q++)
            plain &= !strchr(" \t'\"\\$`*?[]{}()<>|&;#~!", *q);
        *o++ = ' ';
        if (plain) {
            o += sprintf(o, "%s", a);
            continue;
        }
        *o++ = '\'';
        for (const char *q = a; *q; q++)
            o += *q == '\'' ? sprintf(o, "'\\''") : sprintf(o, "%c", *q);
        *o++ = '\'';
        *o = '\0';
    }
    return buf;
}

/* The format a metric prints in: its own, else what its key says. */
static st_scn_format metric_format(const st_scn_metric *m)
{
    return m->format == ST_SCN_FMT_AUTO ? infer_format(m->path) : m->format;
}

/* speedup_over: a time's ratio is the base over the case (a speedup);
 * anything else (a rate, MFU, a hit ratio) the case over the base. */
static void fill_speedups(const st_scenario *s, result *res)
{
    for (size_t m = 0; m < s->n_metrics; m++) {
        int base = s->metrics[m].speedup_over;
        if (base < 0 || res[base].err[0] || !res[base].cells[m].ok)
            continue;
        double b = res[base].cells[m].v;
        int time = metric_format(&s->metrics[m]) == ST_SCN_FMT_TIME;
        for (size_t c = 0; c < s->n_cases; c++) {
            cell *x = &res[c].cells[m];
            if (!res[c].err[0] && x->ok && isfinite(x->v) && isfinite(b) && x->v > 0 && b > 0)
                x->speedup = time ? b / x->v : x->v / b;
        }
    }
}

/* The text of metric m's row r (0 the value, 1 its 90% band) for one case. */
static void cell_text(const st_scenario *s, const result *r, size_t m, int row, char *buf, size_t n)
{
    const cell *x = &r->cells[m];
    const st_scn_metric *mt = &s->metrics[m];
    char a[64], b[64];
    buf[0] = '\0';
    if (r->err[0] || !x->ok) {
        if (row == 0)
            snprintf(buf, n, "%s", r->err[0] ? "failed" : "?");
        return;
    }
    if (row == 1) {
        if (isfinite(x->lo) && isfinite(x->hi)) {
            format_value(a, sizeof a, x->lo, "", mt);
            format_value(b, sizeof b, x->hi, "", mt);
            snprintf(buf, n, "%s .. %s", a, b);
        }
        return;
    }
    format_value(a, sizeof a, x->v, x->text, mt);
    if (isfinite(x->speedup))
        snprintf(buf, n, "%s (%.2fx)", a, x->speedup);
    else
        snprintf(buf, n, "%s", a);
}

static void print_text(const st_scenario *s, result *res, FILE *out)
{
    fprintf(out, "%s  %s\n", s->id, s->title);
    if (s->shared_missing) {
        fprintf(out, "  skipped: it reads the measured data folder (${shared}), which is not here; set "
                     "STRATA_SHARED or pass --shared DIR\n\n");
        return;
    }
    size_t wname = 0;
    for (size_t c = 0; c < s->n_cases; c++)
        wname = strlen(s->cases[c].name) > wname ? strlen(s->cases[c].name) : wname;
    for (size_t c = 0; c < s->n_cases; c++) {
        char *line = shell_line(&s->cases[c]);
        if (s->n_cases > 1)
            fprintf(out, "  %-*s  $ %s\n", (int)wname, s->cases[c].name, line ? line : "(out of memory)");
        else
            fprintf(out, "  $ %s\n", line ? line : "(out of memory)");
        free(line);
    }
    /* the table: a row per metric (and one for its band), a column per case */
    int wl = 10, wc = 8;
    char v[160];
    for (size_t m = 0; m < s->n_metrics; m++)
        wl = (int)strlen(s->metrics[m].label) > wl ? (int)strlen(s->metrics[m].label) : wl;
    for (size_t c = 0; c < s->n_cases; c++) {
        wc = (int)strlen(s->cases[c].name) > wc ? (int)strlen(s->cases[c].name) : wc;
        for (size_t m = 0; m < s->n_metrics; m++)
            for (int r = 0; r < 2; r++) {
                cell_text(s, &res[c], m, r, v, sizeof v);
                wc = (int)strlen(v) > wc ? (int)strlen(v) : wc;
            }
    }
    if (s->n_cases > 1) {
        fprintf(out, "  %-*s", wl, "");
        for (size_t c = 0; c < s->n_cases; c++)
            fprintf(out, "  %-*s", c + 1 < s->n_cases ? wc : 0, s->cases[c].name);
        fputc('\n', out);
    }
    for (size_t m = 0; m < s->n_metrics; m++)
        for (int r = 0; r < 2; r++) {
            int any = 0;
            for (size_t c = 0; c < s->n_cases; c++) {
                cell_text(s, &res[c], m, r, v, sizeof v);
                any |= v[0] != '\0';
            }
            if (!any)
                continue;
            fprintf(out, "  %-*s", wl, r ? "  90% band" : s->metrics[m].label);
            for (size_t c = 0; c < s->n_cases; c++) {
                cell_text(s, &res[c], m, r, v, sizeof v);
                fprintf(out, "  %-*s", c + 1 < s->n_cases ? wc : 0, v);
            }
            fputc('\n', out);
        }
    for (size_t c = 0; c < s->n_cases; c++) {
        if (res[c].err[0]) {
            fprintf(out, "  %s%s%s:%d:%d: the command failed: %s\n", s->cases[c].name,
                    s->cases[c].name[0] ? ": " : "", s->path, s->cases[c].line, s->cases[c].col, res[c].err);
            continue;
        }
        for (size_t m = 0; m < s->n_metrics; m++)
            if (!res[c].cells[m].ok)
                fprintf(out, "  %s%s%s\n", s->cases[c].name, s->cases[c].name[0] ? ": " : "",
                        res[c].cells[m].err);
    }
    fputc('\n', out);
}

static void json_num(st_json *j, const char *key, double v)
{
    if (isfinite(v))
        st_json_number(j, key, v);
    else
        st_json_null(j, key);
}

static void print_json_scenario(st_json *j, const st_scenario *s, result *res)
{
    st_json_begin_object(j, NULL);
    st_json_string(j, "scenario", s->id);
    st_json_string(j, "title", s->title);
    st_json_string(j, "file", s->path);
    st_json_string(j, "command", s->command);
    int failed = 0;
    for (size_t c = 0; !s->shared_missing && c < s->n_cases; c++)
        failed |= result_failed(s, &res[c]);
    st_json_string(j, "status", s->shared_missing ? "skipped" : failed ? "failed" : "ok");
    st_json_begin_array(j, "cases");
    for (size_t c = 0; c < s->n_cases; c++) {
        st_json_begin_object(j, NULL);
        st_json_string(j, "case", s->cases[c].name);
        st_json_begin_array(j, "argv");
        st_json_string(j, NULL, "strata");
        for (int i = 0; i < s->cases[c].argc; i++)
            st_json_string(j, NULL, s->cases[c].argv[i]);
        st_json_end_array(j);
        if (s->shared_missing) {
            st_json_string(j, "status", "skipped");
            st_json_end_object(j);
            continue;
        }
        st_json_string(j, "status", result_failed(s, &res[c]) ? "failed" : "ok");
        if (res[c].err[0])
            st_json_string(j, "error", res[c].err);
        else
            st_json_null(j, "error");
        st_json_begin_array(j, "metrics");
        for (size_t m = 0; !res[c].err[0] && m < s->n_metrics; m++) {
            const cell *x = &res[c].cells[m];
            st_json_begin_object(j, NULL);
            st_json_string(j, "label", s->metrics[m].label);
            st_json_string(j, "metric", s->metrics[m].path);
            if (!x->ok) {
                st_json_null(j, "value");
                st_json_string(j, "error", x->err);
            } else {
                if (isfinite(x->v))
                    st_json_number(j, "value", x->v);
                else if (x->text[0])
                    st_json_string(j, "value", x->text);
                else
                    st_json_null(j, "value"); /* null in the output */
                if (s->metrics[m].band[0][0]) {
                    json_num(j, "lo", x->lo);
                    json_num(j, "hi", x->hi);
                }
                if (s->metrics[m].speedup_over >= 0)
                    json_num(j, "speedup", x->speedup);
            }
            st_json_end_object(j);
        }
        st_json_end_array(j);
        st_json_end_object(j);
    }
    st_json_end_array(j);
    st_json_end_object(j);
}

/* ---- the command --------------------------------------------------------------- */
static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"filter", required_argument, NULL, 'f'}, {"list", no_argument, NULL, 'l'},
        {"jobs", required_argument, NULL, 'j'},   {"shared", required_argument, NULL, 'S'},
        {"timeout", required_argument, NULL, 'T'}, {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *filter = NULL, *shared_opt = NULL;
    int json = 0, list = 0, c;
    long long jobs = 0, timeout = DEFAULT_TIMEOUT_S;
    optind = 0;
    while ((c = cli_getopt(&cmd_suite, argc, argv, "", opts)) != -1) {
        switch (c) {
        case 'f': filter = optarg; break;
        case 'l': list = 1; break;
        case 'j':
            if (cli_parse_ll(&cmd_suite, "--jobs", optarg, 1, MAX_JOBS, &jobs))
                return 2;
            break;
        case 'T':
            if (cli_parse_ll(&cmd_suite, "--timeout", optarg, 0, 1000000, &timeout))
                return 2;
            break;
        case 'S': shared_opt = optarg; break;
        case 'J': json = 1; break;
        case 'h': cli_print_help(&cmd_suite, stdout); return 0;
        default: return 2;
        }
    }
    st_error err = {0};
    st_regex *re = NULL;
    if (filter && st_regex_compile(&re, filter, 1, &err) != 0)
        return cli_usage_error(&cmd_suite, "--filter: %s", err.msg);
    if (!jobs) {
        long n = st_cpu_count();
        jobs = n > 8 ? 8 : n;
    }
    /* the shared-data folder ${shared} names: --shared, $STRATA_SHARED, or
     * ../shared/data beside the data root; absent is not an error (the
     * scenarios that read it are skipped) unless --shared names it */
    char shared[1024];
    int have_shared = 0;
    {
        st_error e2 = {0};
        if (shared_opt) {
            struct stat sh;
            if (stat(shared_opt, &sh) == 0 && !S_ISDIR(sh.st_mode))
                errno = ENOTDIR; /* a file: "not a directory", not its permissions */
            else if (access(shared_opt, R_OK | X_OK) == 0)
                errno = 0;
            if (errno) {
                st_regex_free(re);
                return cli_usage_error(&cmd_suite, "--shared %s: %s; name the measured-data folder (laid out like "
                                                   "../shared/data)", shared_opt, strerror(errno));
            }
            snprintf(shared, sizeof shared, "%s", shared_opt);
            have_shared = 1;
        } else {
            const char *env = getenv("STRATA_SHARED");
            char root[512];
            if (env && *env)
                snprintf(shared, sizeof shared, "%s", env);
            else if (st_data_root(root, sizeof root, &e2) == 0)
                snprintf(shared, sizeof shared, "%s/../shared/data", root);
            else
                shared[0] = '\0';
            have_shared = shared[0] && access(shared, R_OK | X_OK) == 0;
        }
        /* the command lines show the folder plainly, not ".../../shared" */
        char real[PATH_MAX];
        if (have_shared && realpath(shared, real))
            snprintf(shared, sizeof shared, "%s", real);
    }
    /* the files: the operands, else the data root's workloads/scenarios */
    char *files[MAX_FILES];
    size_t nf = 0;
    int rc = 0;
    if (optind < argc) {
        for (int i = optind; i < argc && !rc; i++)
            rc = collect(argv[i], files, &nf, &err);
    } else {
        char root[512], dir[1100];
        if (!(rc = st_data_root(root, sizeof root, &err))) {
            snprintf(dir, sizeof dir, "%s/workloads/scenarios", root);
            rc = collect(dir, files, &nf, &err);
        }
    }
    st_scenario *sc = rc ? NULL : calloc(nf ? nf : 1, sizeof *sc);
    size_t ns = 0;
    if (!rc && !sc)
        rc = st_error_set(&err, ST_ENOMEM, "out of memory");
    /* load every file before running anything: a bad file stops the suite;
     * ids are unique over all the files, whatever --filter keeps */
    static char ids[MAX_FILES][32];
    for (size_t i = 0; i < nf && !rc; i++) {
        st_scenario *s = &sc[ns];
        if ((rc = st_load_scenario(files[i], have_shared ? shared : NULL, s, &err)))
            break;
        for (size_t j = 0; j < i && !rc; j++)
            if (strcmp(ids[j], s->id) == 0)
                rc = st_error_set(&err, ST_EINVAL, "%s: scenario '%s' is also in %s; give each scenario its own id",
                                  s->path, s->id, files[j]);
        snprintf(ids[i], sizeof ids[i], "%s", s->id);
        if (rc) {
            st_scenario_free(s);
            break;
        }
        if (re && !st_regex_match(re, s->id) && !st_regex_match(re, s->title)) {
            st_scenario_free(s);
            continue;
        }
        ns++;
    }
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    st_regex_free(re);
    if (!rc && ns == 0)
        rc = st_error_set(&err, ST_ENOTFOUND, "no scenario matches --filter '%s'", filter ? filter : "");
    if (rc) {
        for (size_t i = 0; i < ns; i++)
            st_scenario_free(&sc[i]);
        free(sc);
        return cli_fail(&err);
    }

    if (list) {
        st_json j;
        if (json) {
            st_json_init(&j, stdout, 1);
            st_json_begin_object(&j, NULL);
            st_json_begin_array(&j, "scenarios");
        }
        for (size_t i = 0; i < ns; i++) {
            const st_scenario *s = &sc[i];
            if (json) {
                st_json_begin_object(&j, NULL);
                st_json_string(&j, "scenario", s->id);
                st_json_string(&j, "title", s->title);
                st_json_string(&j, "file", s->path);
                st_json_string(&j, "command", s->command);
                st_json_bool(&j, "needs_shared", s->needs_shared);
                st_json_begin_array(&j, "cases");
                for (size_t c2 = 0; c2 < s->n_cases; c2++) {
                    st_json_begin_object(&j, NULL);
                    st_json_string(&j, "case", s->cases[c2].name);
                    st_json_begin_array(&j, "argv");
                    st_json_string(&j, NULL, "strata");
                    for (int a = 0; a < s->cases[c2].argc; a++)
                        st_json_string(&j, NULL, s->cases[c2].argv[a]);
                    st_json_end_array(&j);
                    st_json_end_object(&j);
                }
                st_json_end_array(&j);
                st_json_begin_array(&j, "report");
                for (size_t m = 0; m < s->n_metrics; m++)
                    st_json_string(&j, NULL, s->metrics[m].path);
                st_json_end_array(&j);
                st_json_end_object(&j);
            } else {
                printf("%-6s %s%s\n", s->id, s->title, s->shared_missing ? "  (skipped: no measured data)" : "");
                for (size_t c2 = 0; c2 < s->n_cases; c2++) {
                    char *line = shell_line(&s->cases[c2]);
                    printf("       %s%s$ %s\n", s->cases[c2].name, s->cases[c2].name[0] ? "  " : "",
                           line ? line : "(out of memory)");
                    free(line);
                }
            }
        }
        if (json) {
            st_json_end_array(&j);
            st_json_end_object(&j);
            st_json_finish(&j);
        }
        for (size_t i = 0; i < ns; i++)
            st_scenario_free(&sc[i]);
        free(sc);
        return 0;
    }

    char exe[4096];
    if (self_path(exe, sizeof exe, &err)) {
        for (size_t i = 0; i < ns; i++)
            st_scenario_free(&sc[i]);
        free(sc);
        return cli_fail(&err);
    }
    size_t nr = 0;
    for (size_t i = 0; i < ns; i++)
        nr += sc[i].shared_missing ? 0 : sc[i].n_cases;
    /* the children's environment: ours, and STRATA_READ_ONLY=1, so that no
     * command a scenario runs writes a file, whatever its options */
    size_t nenv = 0;
    while (environ[nenv])
        nenv++;
    child *runs = calloc(nr ? nr : 1, sizeof *runs);
    result *res = calloc(nr ? nr : 1, sizeof *res);
    char **envp = calloc(nenv + 2, sizeof *envp);
    if (!runs || !res || !envp) {
        free(runs);
        free(res);
        free(envp);
        for (size_t i = 0; i < ns; i++)
            st_scenario_free(&sc[i]);
        free(sc);
        st_error_set(&err, ST_ENOMEM, "out of memory");
        return cli_fail(&err);
    }
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        for (size_t c2 = 0; !sc[i].shared_missing && c2 < sc[i].n_cases; c2++) {
            runs[k].s = &sc[i];
            runs[k].c = c2;
            k++;
        }
    /* a reader of our output that goes away must not leave children
     * behind; children of a suite stopped by SIGINT or SIGTERM stop too */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, stop_children);
    signal(SIGTERM, stop_children);
    size_t ne = 0;
    for (size_t i = 0; i < nenv; i++)
        if (strncmp(environ[i], "STRATA_READ_ONLY=", 17) != 0)
            envp[ne++] = environ[i];
    envp[ne++] = "STRATA_READ_ONLY=1";
    envp[ne] = NULL;
    pool p = {exe, envp, (double)timeout, runs, nr, 0, PTHREAD_MUTEX_INITIALIZER};
    run_all(&p, (int)jobs);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    free(envp);
    for (size_t i = 0; i < nr; i++)
        read_result(&runs[i], &res[i]);

    size_t n_ok = 0, n_failed = 0, n_skipped = 0;
    st_json j;
    if (json) {
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_begin_array(&j, "scenarios");
    }
    k = 0;
    for (size_t i = 0; i < ns; i++) {
        const st_scenario *s = &sc[i];
        result *r = s->shared_missing ? NULL : &res[k];
        if (r)
            fill_speedups(s, r);
        if (json)
            print_json_scenario(&j, s, r);
        else
            print_text(s, r, stdout);
        if (!r) {
            n_skipped++;
            continue;
        }
        int failed = 0;
        for (size_t c2 = 0; c2 < s->n_cases; c2++)
            failed |= result_failed(s, &r[c2]);
        failed ? n_failed++ : n_ok++;
        k += s->n_cases;
    }
    if (json) {
        st_json_end_array(&j);
        st_json_int(&j, "ok", (long long)n_ok);
        st_json_int(&j, "failed", (long long)n_failed);
        st_json_int(&j, "skipped", (long long)n_skipped);
        st_json_end_object(&j);
        st_json_finish(&j);
    } else {
        printf("%zu scenario%s: %zu ok, %zu failed, %zu skipped\n", ns, ns == 1 ? "" : "s", n_ok, n_failed,
               n_skipped);
    }
    for (size_t i = 0; i < nr; i++) {
        free(runs[i].out);
        free(runs[i].err);
        st_jdoc_free(res[i].doc);
        free(res[i].cells);
    }
    free(runs);
    free(res);
    for (size_t i = 0; i < ns; i++)
        st_scenario_free(&sc[i]);
    free(sc);
    return n_failed ? 1 : 0;
}

const cli_command cmd_suite = {
    "suite",
    "suite [FILE|DIR ...] [--filter REGEX] [--list] [--jobs N] [--timeout S] [--shared DIR] [--json]",
    "Run the scenario suite: each practitioner question as strata commands, its target metrics.",
    "  FILE|DIR         scenario files, or folders of them (default: workloads/scenarios, the\n"
    "                   brief's 28 questions); see strata-scenario(5)\n"
    "  --filter REGEX   only scenarios whose id or title matches (PCRE2, any case)\n"
    "  --list           print each scenario's command lines without running them\n"
    "  --jobs N         commands run at once (default: the cores, at most 8); results do not\n"
    "                   depend on it\n"
    "  --timeout S      stop and fail a case that runs longer than S seconds (default 600; 0: no\n"
    "                   limit)\n"
    "  --shared DIR     the measured-data folder that ${shared} names in a scenario (default\n"
    "                   $STRATA_SHARED, else ../shared/data beside the data root); scenarios that\n"
    "                   need it are skipped when it is absent\n"
    "  --json           scenarios[] (scenario, title, file, command, status, cases[] with argv,\n"
    "                   status, error, metrics[] of label, metric, value, lo, hi, speedup), ok,\n"
    "                   failed, skipped\n"
    "\n"
    "Every case prints the command line that reproduces its numbers; the commands run with\n"
    "STRATA_READ_ONLY=1, so none of them writes a file. A bad scenario file stops\n"
    "the suite before anything runs (FILE:LINE:COL); a command that fails, or a metric its\n"
    "output lacks, marks that scenario failed and the exit status 1.\n",
    run,
    NULL,
};
