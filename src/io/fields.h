/*
 * Private to io/: the YAML document tree (built with libyaml, every node with
 * its line and column) and the typed field readers the loaders share. Every
 * error names FILE:LINE:COL, the key, what was expected and what was found.
 */
#ifndef STRATA_IO_FIELDS_H
#define STRATA_IO_FIELDS_H

#include "core/core.h"

#define ST_YAML_MAX_DEPTH 32
#define ST_YAML_MAX_BYTES (16u << 20)

typedef enum st_ykind { ST_Y_SCALAR = 0, ST_Y_SEQ, ST_Y_MAP } st_ykind;

typedef struct st_ynode {
    st_ykind kind;
    int line, col;   /* 1-based */
    char *scalar;    /* ST_Y_SCALAR */
    int plain;       /* scalar written without quotes */
    size_t n;        /* items (seq) or pairs (map) */
    struct st_ynode **items; /* seq items, or map values */
    struct st_ynode **keys;  /* map keys (scalars) */
} st_ynode;

typedef struct st_ydoc {
    st_ynode *root; /* NULL for an empty file */
    char path[512];
} st_ydoc;

/* Parse a whole file (or a buffer, labelled `path` in messages). Rejects
 * duplicate keys, aliases, non-scalar keys, nesting past ST_YAML_MAX_DEPTH,
 * several documents, and files over ST_YAML_MAX_BYTES. */
int st_ydoc_load_file(st_ydoc *doc, const char *path, st_error *err);
int st_ydoc_load_buffer(st_ydoc *doc, const char *path, const char *buf, size_t len,
                        st_error *err);
void st_ydoc_free(st_ydoc *doc);

/* A scalar that stands for "no value" (~, null, empty plain scalar). */
int st_ynode_is_null(const st_ynode *n);
const char *st_ykind_name(st_ykind k);

/* ---- field readers ------------------------------------------------------- */
typedef struct fctx {
    const char *path;
    const char *what; /* "gpu preset", "level 2 of accelerator", ... */
    st_error *err;
    const char *doc;  /* the manual page of the file kind, for unknown keys (NULL: presets/workloads) */
} fctx;

typedef struct fkey {
    const char *key;
    int required;
    const char *expect; /* a few words: "number of SMs" */
} fkey;

/* n must be a mapping whose keys are all in keys[] (an unknown key is an
 * error with a did-you-mean) and which has every required key (all missing
 * ones are named in one message). */
int f_check_map(const fctx *c, const st_ynode *n, const fkey *keys, size_t nkeys);
const st_ynode *f_get(const st_ynode *map, const char *key);
/* map[key] must be a list of 1 to max items (max 0: no limit); items names
 * them in messages ("storage levels, DRAM first"). */
int f_list(const fctx *c, const st_ynode *map, const char *key, size_t max, const char *items,
           const st_ynode **out);

/* Error at node n: "PATH:L:C: MESSAGE". Returns ST_EINVAL. */
int f_error(const fctx *c, const st_ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Readers: absent optional keys leave *out untouched and return 0. The number
 * must lie in [min, max]; it is multiplied by scale (unit -> SI). `unit` is
 * shown in messages. */
int f_number(const fctx *c, const st_ynode *map, const char *key, double min, double max,
             double scale, const char *unit, double *out);
int f_int(const fctx *c, const st_ynode *map, const char *key, long long min, long long max,
          long long *out);
int f_int32(const fctx *c, const st_ynode *map, const char *key, long long min, long long max,
            int *out);
int f_bool(const fctx *c, const st_ynode *map, const char *key, int *out);
int f_string(const fctx *c, const st_ynode *map, const char *key, char *out, size_t n);
/* One of names[0..count); stores the index. */
int f_enum(const fctx *c, const st_ynode *map, const char *key, const char *const *names,
           int count, int *out);
/* Scalar readers on a node (used for sequence items and HF configs). */
int f_node_number(const fctx *c, const st_ynode *v, const char *key, double min, double max,
                  double *out);
int f_node_int(const fctx *c, const st_ynode *v, const char *key, long long min, long long max,
               long long *out);

#endif
