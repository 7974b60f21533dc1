/*
 * core: what every layer of strata shares.
 *
 * - st_error: the one way a function reports failure. Functions that can fail
 *   return 0 or a negative ST_E* code and fill an st_error with a sentence the
 *   user can act on ("FILE:LINE:COL: key 'x': expected ..., found '...'").
 * - st_dtype: the numeric formats the models know, with their storage size.
 * - st_json: a small streaming JSON writer (deterministic number formatting:
 *   the shortest text that reads back to the same double).
 * - st_suggest: the did-you-mean used for unknown keys and names.
 * - st_regex: PCRE2 matching used by every `--filter` and `/` search.
 *
 * No function here prints to the terminal or keeps global state.
 */
#ifndef STRATA_CORE_H
#define STRATA_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define ST_VERSION PACKAGE_VERSION

/* ---- errors -------------------------------------------------------------- */
enum {
    ST_OK = 0,
    ST_EINVAL = -1,   /* bad input (file content, argument) */
    ST_ENOMEM = -2,   /* allocation failed */
    ST_EIO = -3,      /* cannot read or write a file */
    ST_ENOTFOUND = -4, /* no preset/workload of that name */
    ST_ECANCELED = -5  /* a long run stopped on request (a cancelled sweep) */
};

typedef struct st_error {
    int code;
    char msg[1024];
} st_error;

/* Fill err (when non-NULL) with a printf-style message; return code. */
int st_error_set(st_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix the existing message: "PREFIX: old message". Returns err->code. */
int st_error_prefix(st_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void st_error_clear(st_error *err);

/* ---- data types ---------------------------------------------------------- */
typedef enum st_dtype {
    ST_FP32 = 0,
    ST_TF32,
    ST_FP16,
    ST_BF16,
    ST_FP8,
    ST_INT8,
    ST_INT4,
    ST_DTYPE_COUNT
} st_dtype;

const char *st_dtype_name(st_dtype t);        /* "fp32", ... */
int st_dtype_parse(const char *s, st_dtype *out); /* 0 or ST_EINVAL */
/* Storage bytes per element (tf32 is stored as fp32; int4 packs two a byte). */
double st_dtype_bytes(st_dtype t);
/* The list of names, for error messages: "fp32, tf32, ..." */
const char *st_dtype_choices(void);

/* ---- JSON writer ----------------------------------------------------------- */
typedef struct st_json {
    FILE *out;
    int depth;
    int need_comma[64];
    int pretty;
} st_json;

void st_json_init(st_json *j, FILE *out, int pretty);
void st_json_begin_object(st_json *j, const char *key);
void st_json_end_object(st_json *j);
void st_json_begin_array(st_json *j, const char *key);
void st_json_end_array(st_json *j);
void st_json_string(st_json *j, const char *key, const char *value);
void st_json_number(st_json *j, const char *key, double value);
void st_json_int(st_json *j, const char *key, long long value);
void st_json_bool(st_json *j, const char *key, int value);
void st_json_null(st_json *j, const char *key);
/* Finish the document with a newline. */
void st_json_finish(st_json *j);
/* Shortest decimal text that reads back as exactly v ("1e+20", "0.1"). */
void st_format_double(char *buf, size_t n, double v);
/* One line of JSONL: a single JSON object (RFC 8259; nested values are
 * checked and skipped) and nothing after it but white space. For each of
 * keys[0..nkeys) found at the top level, found[i] = the 1-based column of
 * its value and v[i] = the number. Returns 0, or -1 with *col (1-based byte
 * column) and why: what is wrong (a key given twice, a wanted key whose value
 * is not a number, a syntax error). */
int st_jsonl_parse(const char *line, const char *const *keys, int nkeys, double *v, int *found, int *col,
                   char *why, size_t whyn);

/* ---- did you mean ---------------------------------------------------------- */
/* Levenshtein distance, case-insensitive. */
int st_edit_distance(const char *a, const char *b);
/* The closest of candidates[0..n) to word, or NULL if none is close enough
 * (distance at most max(2, len/3)). */
const char *st_suggest(const char *word, const char *const *candidates, size_t n);

/* ---- least squares (LAPACKE) ------------------------------------------------ */
/* Weighted ridge regression: the beta[0..p) minimising
 *   sum_i w_i (y_i - x_i . beta)^2 + lambda |beta|^2
 * for n rows of X (row-major, n x p); w may be NULL (all ones). Solved as the
 * augmented least-squares system [sqrt(w) X; sqrt(lambda) I] beta =
 * [sqrt(w) y; 0] by Householder QR (dgels's steps), so ill-conditioned features do not
 * square their condition number. resid_sd (may be NULL) gets the weighted RMS
 * of the residuals. Deterministic for given inputs. */
int st_ridge(const double *X, const double *y, const double *w, size_t n, size_t p,
             double lambda, double *beta, double *resid_sd, st_error *err);

/* ---- regular expressions (PCRE2) ------------------------------------------- */
typedef struct st_regex st_regex;
/* Compile; on a bad pattern fill err with the offset and PCRE2's reason. */
int st_regex_compile(st_regex **out, const char *pattern, int caseless, st_error *err);
int st_regex_match(const st_regex *re, const char *subject); /* 1, 0 (or error) */
/* Match and report the first n groups' byte ranges (group 0 = whole match;
 * -1 when a group did not take part). 1 match, 0 none, -1 error. Safe to
 * call from several threads on one compiled pattern. */
int st_regex_groups(const st_regex *re, const char *subject, long long *starts, long long *ends,
                    int n);
void st_regex_free(st_regex *re);

/* ---- counter-based random numbers (core/rng.c) ---------------------------- */
typedef struct st_rng {
    unsigned long long state;
} st_rng;
unsigned long long st_mix64(unsigned long long z);
/* A stream keyed by (seed, key, purpose). */
void st_rng_init(st_rng *g, unsigned long long seed, unsigned long long key, unsigned purpose);
unsigned long long st_rng_next(st_rng *g);
double st_rng_u01(st_rng *g); /* [0, 1) */
double st_rng_gamma(st_rng *g, double shape); /* unit scale */

/* The cores this process may run on: its affinity mask (taskset, or
 * mpirun's binding of a rank), not all the machine's; at least 1. The
 * default for thread pools and parallel jobs. */
int st_cpu_count(void);
/* The machine's physical memory in bytes (0 when the system does not say). */
double st_phys_memory_bytes(void);
/* Seconds on the monotonic clock (for elapsed times, progress and budgets) */
double st_mono_s(void);

/* One line of f into *line (grown as needed, *cap its size), with its
 * newline, NUL-terminated; a NUL byte read ends the line there, kept in
 * it (the length tells: the caller names the binary file).
 * Returns its length, -1 at the end of the file, -2 when the line runs past
 * max bytes (reading stops there: a file with no newline cannot take all
 * memory), -3 out of memory. */
ssize_t st_read_line(char **line, size_t *cap, FILE *f, size_t max);

#endif
