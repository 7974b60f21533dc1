/* strata sweep: run a sweep file headless on the pool, progress on stderr,
 * points and front to files, the front to stdout. */
#include "config.h"
#include "cli/cli.h"
#include "explore/explore.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_MPI
#include <limits.h>
#include <mpi.h>
#endif

static void progress_line(const st_sweep *s, const st_sweep_progress *p, int tty, int final)
{
    char eta[32] = "";
    if (!final && isfinite(p->eta_s))
        snprintf(eta, sizeof eta, "  ETA %.0f s", p->eta_s);
    else if (final)
        snprintf(eta, sizeof eta, "  in %.3g s", p->elapsed_s);
    fprintf(stderr, "%ssweep %s: %lld/%lld points (%.1f%%)  %.0f points/s%s  front %lld%s", tty ? "\r" : "",
            s->name, p->done, p->total, p->total ? 100.0 * (double)p->done / (double)p->total : 100.0, p->rate,
            eta, p->front, tty && !final ? "   " : "\n");
    fflush(stderr);
}

/* A..B (inclusive-exclusive point range) */
/* --out must not replace a file the sweep reads: the files n values of
 * parameter p name (a preset or workload given as a path, a length
 * distribution's trace:FILE) */
static int guard_values(const char *path, st_param p, const st_pvalue *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        const char *f = v[i].text;
        if (strncmp(f, "trace:", 6) == 0)
            f += 6;
        else if (!st_name_is_path(f))
            continue;
        char what[96];
        snprintf(what, sizeof what, "the sweep's %s value", st_param_info_of(p)->name);
        int rc = cli_out_guard(&cmd_sweep, "--out", path, what, f);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_range(const char *t, long long *a, long long *b)
{
    char *end;
    if (!cli_digits_pair(t))
        return -1;
    errno = 0;
    *a = strtoll(t, &end, 10);
    if (end == t || *end != ':' || errno)
        return -1;
    const char *u = end + 1;
    *b = strtoll(u, &end, 10);
    if (end == u || *end || errno || *a < 0 || *b < *a)
        return -1;
    return 0;
}

static void print_front(const st_sweep *s, const st_sweep_run *r)
{
    const st_pareto *f = st_sweep_front(r);
    long long first;
    const st_point *pts = st_sweep_points(r, &first, NULL);
    long long *idx = malloc((f->n ? f->n : 1) * sizeof *idx);
    if (!idx)
        return;
    st_pareto_sorted(f, idx);
    printf("Pareto front (%zu point%s; objectives:", f->n, f->n == 1 ? "" : "s");
    for (int i = 0; i < s->n_obj; i++)
        printf(" %s %s%s", st_metric_maximize(s->obj[i]) ? "max" : "min", st_metric_name(s->obj[i]),
               i + 1 < s->n_obj ? "," : ")\n");
    printf("  %8s", "index");
    for (int i = 0; i < s->n_obj; i++)
        printf(" %16s", st_metric_key(s->obj[i]));
    printf("  point\n");
    for (size_t k = 0; k < f->n; k++) {
        const st_point *p = &pts[idx[k] - first];
        char label[256];
        st_sweep_point_label(s, idx[k], label, sizeof label);
        printf("  %8lld", idx[k]);
        for (int i = 0; i < s->n_obj; i++)
            printf(" %16.6g", p->m[s->obj[i]]);
        printf("  %s\n", label);
    }
    free(idx);
}

/* --mpi: this process's rank and the ranks in all (0 and 1 without MPI) */
typedef struct mpi_ctx {
    int on, rank, size;
} mpi_ctx;

/* Leave MPI (when --mpi started it) and pass rc through. */
static int mpi_done(const mpi_ctx *m, int rc)
{
#ifdef HAVE_MPI
    if (m->on)
        MPI_Finalize();
#else
    (void)m;
#endif
    return rc;
}

/* Rank r's contiguous share of count points: offsets [*a, *b) */
static void rank_share(long long count, int r, int size, long long *a, long long *b)
{
    *a = count * r / size;
    *b = count * (r + 1) / size;
}

#ifdef HAVE_MPI
/* Every rank evaluated its share [first + count x rank / size, ...) of the
 * points; gather them on rank 0 in index order and make one run of them
 * there (the front is folded again from all points, so it is the one a
 * single process finds). Returns 0 on every rank, with *whole set on rank 0
 * only; a rank whose run failed makes every rank fail. */
static int mpi_gather(const mpi_ctx *m, const st_sweep *s, st_sweep_run *local, int local_rc, long long first,
                      long long count, double elapsed, st_sweep_run **whole, st_error *err)
{
    *whole = NULL;
    long long n_local;
    const st_point *pts = st_sweep_points(local, NULL, &n_local);
    if (!local_rc && n_local > INT_MAX) {
        st_error_set(err, ST_EINVAL, "%lld points on one rank: more than an MPI count holds (%d); use more ranks",
                     n_local, INT_MAX);
        local_rc = 1;
    }
    /* all ranks agree before the gather: one that failed stops them all */
    int any = 0;
    MPI_Allreduce(&local_rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        if (local_rc)
            fprintf(stderr, "strata sweep: MPI rank %d of %d: %s\n", m->rank, m->size, err->msg);
        else if (m->rank == 0)
            fprintf(stderr, "strata sweep: another MPI rank failed (its message is above)\n");
        return 1;
    }
    MPI_Datatype pt;
    MPI_Type_contiguous((int)sizeof(st_point), MPI_BYTE, &pt);
    MPI_Type_commit(&pt);
    int *counts = NULL, *displs = NULL;
    st_point *all = NULL;
    int ok = 1;
    if (m->rank == 0) {
        counts = malloc((size_t)m->size * sizeof *counts);
        displs = malloc((size_t)m->size * sizeof *displs);
        all = malloc((count ? (size_t)count : 1) * sizeof *all);
        ok = counts && displs && all;
        for (int r = 0; ok && r < m->size; r++) {
            long long a, b;
            rank_share(count, r, m->size, &a, &b);
            counts[r] = (int)(b - a);
            displs[r] = (int)a;
            if (a > INT_MAX)
                ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (!ok) {
        st_error_set(err, ST_ENOMEM, "rank 0 cannot hold the %lld points of the sweep", count);
        rc = 1;
    } else {
        MPI_Gatherv(pts, (int)n_local, pt, all, counts, displs, pt, 0, MPI_COMM_WORLD);
        double slowest = 0;
        MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (m->rank == 0) {
            rc = st_sweep_run_adopt(s, first, count, all, slowest, whole, err) ? 1 : 0;
            all = NULL; /* adopted, or freed by st_sweep_run_adopt */
        }
    }
    free(all);
    free(counts);
    free(displs);
    MPI_Type_free(&pt);
    return rc;
}
#endif

static int sweep_body(char **argv, const char *out, const char *range, long long threads, int json,
                      int quiet, const mpi_ctx *mpi);

static int run(int argc, char **argv)
{
    int rc_arg;
    static const struct option opts[] = {
        {"threads", required_argument, NULL, 't'}, {"out", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'j'},          {"range", required_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
        {"mpi", no_argument, NULL, 'm'},           {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *range = NULL;
    long long threads = 0;
    int json = 0, quiet = 0, c;
    mpi_ctx mpi = {0, 0, 1};
    optind = 0;
    while ((c = cli_getopt(&cmd_sweep, argc, argv, "t:o:jr:qh", opts)) != -1) {
        switch (c) {
        case 't':
            if (cli_parse_ll(&cmd_sweep, "--threads", optarg, 1, 1024, &threads))
                return 2;
            break;
        case 'o': out = optarg; break;
        case 'j': json = 1; break;
        case 'r': range = optarg; break;
        case 'q': quiet = 1; break;
        case 'm': mpi.on = 1; break;
        case 'h': cli_print_help(&cmd_sweep, stdout); return 0;
        default: return 2;
        }
    }
    if ((rc_arg = cli_one_operand(&cmd_sweep, argc, argv, "which sweep file? e.g. workloads/sweeps/gpu-batch-dtype.yaml")))
        return rc_arg;
    if (mpi.on) {
#ifdef HAVE_MPI
        /* every rank parses the same file and options, so every rank meets
         * the same error: rank 0 alone reports it */
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &mpi.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &mpi.size);
        if (mpi.rank != 0) {
            /* rank 0 prints; the others keep stderr for their own failures
             * in the run (set-up errors are every rank's, said once) */
            quiet = 1;
            if (!freopen("/dev/null", "w", stdout))
                return mpi_done(&mpi, 1);
        }
#else
        return cli_usage_error(&cmd_sweep, "--mpi: this strata was built without Open MPI; install libopenmpi-dev "
                                           "openmpi-bin and re-run ./configure, or split the sweep with --range");
#endif
    }
    return mpi_done(&mpi, sweep_body(argv, out, range, threads, json, quiet, &mpi));
}

/* The sweep after its options: load, run (this rank's share with --mpi),
 * gather, report. */
static int sweep_body(char **argv, const char *out, const char *range, long long threads, int json,
                      int quiet, const mpi_ctx *mpi)
{
    st_error err = {0};
    /* set-up: every step runs while the last one worked; with --mpi every
     * rank then reaches the same agreement below, failed or not, so that no
     * rank waits in a collective for one that has left */
    int setup_rc = 0; /* 0, or the exit status of the failure */
    int said = 0;     /* that failure is printed already (the --out guard) */
    int loaded = 0;
    long long first = 0, count = 0;
    st_sweep_run *r = NULL;
    st_sweep *s = malloc(sizeof *s);
    if (!s) {
        st_error_set(&err, ST_ENOMEM, "out of memory");
        setup_rc = 1;
    } else if (st_load_sweep(argv[optind], s, &err)) {
        setup_rc = 1;
    } else {
        loaded = 1;
        count = s->points;
    }
    if (!setup_rc && range) {
        long long b;
        if (parse_range(range, &first, &b) || b > s->points) {
            st_error_set(&err, ST_EINVAL, "--range: expected FIRST:END within 0:%lld, got '%s'", s->points, range);
            setup_rc = 2;
        } else {
            count = b - first;
        }
    }
    /* rank 0 alone writes the files (and makes the folder) */
    int writer = mpi->rank == 0;
    for (int i = 0; !setup_rc && writer && out && i < ST_SWEEP_EXPORTS; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", out, st_sweep_exports[i].name);
        if ((setup_rc = cli_out_guard(&cmd_sweep, "--out", path, "the sweep file", argv[optind])))
            said = 1;
        /* nor a file a value names: a preset or workload path, a trace */
        for (int p = 0; !setup_rc && p < ST_PARAM_COUNT; p++)
            if ((setup_rc = guard_values(path, (st_param)p, s->base_set[p] ? &s->base[p] : NULL, 1)))
                said = 1;
        for (size_t a = 0; !setup_rc && a < s->n_axes; a++)
            if ((setup_rc = guard_values(path, s->axes[a].param, s->axes[a].v, s->axes[a].n)))
                said = 1;
    }
    char made[4096] = "";
    if (!setup_rc && writer && out && cli_out_dir_made(out, "--out", made, sizeof made, &err))
        setup_rc = 1;
    double t0 = st_mono_s();
    if (!setup_rc) {
        /* --mpi: this rank's contiguous share of the points */
        long long a, b;
        rank_share(count, mpi->rank, mpi->size, &a, &b);
        if (st_sweep_start(s, (int)threads, first + a, b - a, &r, &err))
            setup_rc = 1;
    }
    int nbad = setup_rc != 0;
#ifdef HAVE_MPI
    if (mpi->on) {
        int bad = nbad;
        MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        /* the points travel as raw records indexed by rank 0's count: every
         * rank must have loaded the same sweep */
        long long pts = loaded ? s->points : -1, lo = 0, hi = 0;
        MPI_Allreduce(&pts, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&pts, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        if (!nbad && lo != hi) {
            st_error_set(&err, ST_EINVAL,
                         "the MPI ranks loaded different sweeps (%lld and %lld points): give every rank the same "
                         "sweep file and data folder", lo, hi);
            setup_rc = 1;
            nbad = mpi->size;
        }
        if (nbad && !said) {
            if (nbad == mpi->size) {
                /* the same failure everywhere (a bad file or option): said once */
                if (mpi->rank == 0)
                    setup_rc == 2 ? (void)cli_usage_error(&cmd_sweep, "%s", err.msg) : (void)cli_fail(&err);
            } else if (setup_rc) {
                fprintf(stderr, "strata sweep: MPI rank %d of %d: %s\n", mpi->rank, mpi->size, err.msg);
            } else if (mpi->rank == 0) {
                fprintf(stderr, "strata sweep: %d of %d MPI ranks could not start (their messages are above)\n",
                        nbad, mpi->size);
            }
            said = 1;
        }
    }
#endif
    if (nbad) {
        if (r) {
            st_sweep_cancel(r);
            st_sweep_run_free(r);
        }
        if (out)
            cli_out_dir_undo(made);
        if (loaded)
            st_sweep_free(s);
        free(s);
        if (!said)
            return setup_rc == 2 ? cli_usage_error(&cmd_sweep, "%s", err.msg) : cli_fail(&err);
        return setup_rc ? setup_rc : 1;
    }
    int tty = isatty(2);
    double last = t0;
    st_sweep_progress p;
    int rc = 0;
    for (;;) {
        struct pollfd pfd = {st_sweep_notify_fd(r), POLLIN, 0};
        poll(&pfd, 1, 200);
        if (st_sweep_drain(r) < 0) {
            st_error_set(&err, ST_ENOMEM, "out of memory for the front");
            rc = 1;
            break;
        }
        st_sweep_get_progress(r, &p);
        if (p.finished)
            break;
        double now = st_mono_s();
        if (!quiet && now - last >= (tty ? 0.2 : 2.0)) {
            progress_line(s, &p, tty, 0);
            last = now;
        }
    }
    if (!rc && st_sweep_wait(r)) {
        const st_error *e = st_sweep_run_error(r);
        err = e ? *e : err;
        rc = 1;
    }
#ifdef HAVE_MPI
    if (mpi->on) {
        st_sweep_run *whole = NULL;
        int grc = mpi_gather(mpi, s, r, rc, first, count, st_mono_s() - t0, &whole, &err);
        st_sweep_run_free(r);
        r = whole;
        if (mpi->rank != 0 || grc) {
            /* every failure is said by mpi_gather, once */
            st_sweep_run_free(r);
            st_sweep_free(s);
            free(s);
            return grc ? 1 : 0;
        }
        if (!quiet)
            fprintf(stderr, "strata sweep: %d MPI rank%s, %lld points each at most\n", mpi->size,
                    mpi->size == 1 ? "" : "s", (count + mpi->size - 1) / mpi->size);
    }
#endif
    st_sweep_get_progress(r, &p);
    if (!quiet)
        progress_line(s, &p, tty, 1);
    /* the first refused point's reason, printed with the counts */
    char why[300] = "";
    long long why_at = !rc && p.valid < p.done ? st_sweep_first_invalid(s, r, why, sizeof why) : -1;
    /* a whole sweep with nothing valid has nothing to show: an error, and
     * no export; a part of one (--range) is one slice of a split run,
     * written and reported as it is */
    if (!rc && !range && p.done > 0 && p.valid == 0) {
        if (p.done == 1)
            st_error_set(&err, ST_EINVAL, "no valid point: the only one (#%lld) was refused: %s", why_at, why);
        else
            st_error_set(&err, ST_EINVAL, "no valid point: all %lld were refused; the first (#%lld): %s", p.done,
                         why_at, why);
        rc = 1;
    }
    if (!rc && out) {
        if (cli_sweep_export(out, s, r, &err))
            rc = 1;
    }
    if (!rc) {
        if (json) {
            st_json j;
            const st_pareto *f = st_sweep_front(r);
            long long pfirst, *idx = malloc((f->n ? f->n : 1) * sizeof *idx);
            const st_point *pts = st_sweep_points(r, &pfirst, NULL);
            if (!idx) {
                st_error_set(&err, ST_ENOMEM, "out of memory");
                rc = 1;
            } else {
                st_pareto_sorted(f, idx);
                st_json_init(&j, stdout, 1);
                st_json_begin_object(&j, NULL);
                st_sweep_json_header(s, &j);
                st_json_int(&j, "first", first);
                st_json_int(&j, "count", count);
                st_json_int(&j, "evaluated", p.done);
                st_json_int(&j, "valid", p.valid);
                st_json_int(&j, "feasible", p.feasible);
                st_json_begin_array(&j, "front");
                for (size_t k = 0; k < f->n; k++)
                    st_sweep_json_point(s, idx[k], &pts[idx[k] - pfirst], &j);
                st_json_end_array(&j);
                st_json_end_object(&j);
                st_json_finish(&j);
                free(idx);
            }
        } else {
            printf("sweep %s (evaluate: %s): %lld point%s, %lld valid, %lld feasible\n", s->name,
                   st_sweep_kind_name(s->kind), p.done, p.done == 1 ? "" : "s", p.valid, p.feasible);
            if (why_at >= 0)
                printf("  %lld invalid; the first (#%lld): %s\n", p.done - p.valid, why_at, why);
            if (p.valid > 0 && p.feasible == 0 && s->n_con > 0) {
                printf("  none of the %lld valid point%s meets the constraints (", p.valid, p.valid == 1 ? "" : "s");
                for (int i = 0; i < s->n_con; i++)
                    printf("%s%s", i ? ", " : "", s->con[i].text);
                printf("): the front is empty; loosen them to see one\n");
            }
            print_front(s, r);
            if (out)
                printf("wrote %s/points.csv, front.csv, points.json, front.json\n", out);
        }
    }
    if (rc && out)
        cli_out_dir_undo(made); /* nothing written: the folders it made go too */
    st_sweep_run_free(r);
    st_sweep_free(s);
    free(s);
    return rc ? cli_fail(&err) : 0;
}

const cli_command cmd_sweep = {
    "sweep",
    "sweep FILE.yaml [--threads N] [--out DIR] [--range FIRST:END] [--mpi] [--json] [--quiet]",
    "Run a design-space sweep headless: every point through its layer, the Pareto front.",
    "  FILE.yaml        a sweep file (strata-sweep(5)); examples in workloads/sweeps/\n"
    "  --threads N      worker threads (default: the cores it may run on); results are identical\n"
    "                   for any N\n"
    "  --out DIR        write DIR/points.csv, front.csv, points.json, front.json (made if\n"
    "                   absent, its parents too)\n"
    "  --range A:B      evaluate points A..B-1 only (split a sweep across processes; merge the\n"
    "                   fronts by sweeping their union or with any non-dominated filter)\n"
    "  --mpi            under mpirun: each rank evaluates its share of the points (of --range,\n"
    "                   else all), rank 0 gathers them and prints and writes what one process\n"
    "                   would: mpirun -n 8 --bind-to none strata sweep FILE --mpi --out DIR\n"
    "                   (Open MPI binds a rank to one core by default: give it more, or none)\n"
    "  --json           the front and counts as one JSON object on stdout\n"
    "  --quiet          no progress line on stderr\n",
    run,
    NULL,
};
