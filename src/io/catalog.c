/* Where presets and workloads live, and name -> path resolution. */
#include "config.h"
#include "io/fields.h"
#include "io/io.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef STRATA_PKGDATADIR
#define STRATA_PKGDATADIR "/usr/local/share/strata"
#endif

static const struct {
    const char *dir;
    st_file_kind kind;
} folders[] = {
    {"presets/gpu", ST_FILE_GPU},         {"presets/edge", ST_FILE_EDGE},
    {"presets/accel", ST_FILE_ACCEL},     {"presets/node", ST_FILE_NODE},
    {"presets/cluster", ST_FILE_CLUSTER}, {"workloads", ST_FILE_MODEL},
};
#define N_FOLDERS (sizeof folders / sizeof folders[0])

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_presets(const char *root)
{
    char p[600];
    snprintf(p, sizeof p, "%s/presets", root);
    return is_dir(p);
}

int st_data_root(char *buf, size_t n, st_error *err)
{
    const char *env = getenv("STRATA_DATA");
    char exe[PATH_MAX];
    ssize_t len;
    if (env && *env) {
        if (!has_presets(env))
            return st_error_set(err, ST_ENOTFOUND,
                                "STRATA_DATA=%s has no presets/ folder; point it at a strata "
                                "source tree or install folder, or unset it",
                                env);
        snprintf(buf, n, "%s", env);
        return 0;
    }
    /* A build in the source tree runs ./strata next to presets/. */
    len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            if (has_presets(exe)) {
                snprintf(buf, n, "%s", exe);
                return 0;
            }
        }
    }
    if (has_presets(STRATA_PKGDATADIR)) {
        snprintf(buf, n, "%s", STRATA_PKGDATADIR);
        return 0;
    }
    return st_error_set(err, ST_ENOTFOUND,
                        "cannot find the presets/ folder: not in $STRATA_DATA, next to the "
                        "program, or in %s; run `make install` or set STRATA_DATA to the source "
                        "tree",
                        STRATA_PKGDATADIR);
}

static int has_ext(const char *name, const char *ext)
{
    size_t ln = strlen(name), le = strlen(ext);
    return ln > le && strcasecmp(name + ln - le, ext) == 0;
}

/* The display name of a file: its `name:` (or HF _name_or_path) if readable. */
static void read_name(const char *path, char *name, size_t n)
{
    st_ydoc doc;
    st_error err;
    name[0] = '\0';
    if (st_ydoc_load_file(&doc, path, &err) != 0)
        return;
    const st_ynode *v = f_get(doc.root, "name");
    if (!v)
        v = f_get(doc.root, "_name_or_path");
    if (v && v->kind == ST_Y_SCALAR)
        snprintf(name, n, "%s", v->scalar);
    st_ydoc_free(&doc);
}

static int entry_cmp(const void *a, const void *b)
{
    const st_catalog_entry *x = a, *y = b;
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    return strcmp(x->id, y->id);
}

static int scan_folder(st_catalog *cat, const char *dir, st_file_kind kind, int read_names,
                       st_error *err)
{
    char path[600];
    DIR *d;
    struct dirent *de;
    snprintf(path, sizeof path, "%s/%s", cat->root, dir);
    d = opendir(path);
    if (!d)
        return 0; /* a missing folder just holds nothing */
    while ((de = readdir(d)) != NULL) {
        st_catalog_entry *e;
        if (de->d_name[0] == '.' ||
            !(has_ext(de->d_name, ".yaml") || has_ext(de->d_name, ".yml") ||
              has_ext(de->d_name, ".json")))
            continue;
        if (cat->n == cat->cap) {
            size_t cap = cat->cap ? cat->cap * 2 : 64;
            st_catalog_entry *items = realloc(cat->items, cap * sizeof *items);
            if (!items) {
                closedir(d);
                return st_error_set(err, ST_ENOMEM, "out of memory listing %s", path);
            }
            cat->items = items;
            cat->cap = cap;
        }
        e = &cat->items[cat->n++];
        memset(e, 0, sizeof *e);
        e->kind = kind;
        snprintf(e->path, sizeof e->path, "%s/%.200s", path, de->d_name);
        {
            /* id = file name less its extension; names too long for an id are skipped */
            const char *dot = strrchr(de->d_name, '.');
            size_t idlen = (size_t)(dot - de->d_name);
            if (idlen >= sizeof e->id) {
                cat->n--;
                continue;
            }
            snprintf(e->id, sizeof e->id, "%.*s", (int)idlen, de->d_name);
        }
        if (read_names)
            read_name(e->path, e->name, sizeof e->name);
    }
    closedir(d);
    return 0;
}

static int scan(st_catalog *cat, int read_names, st_error *err)
{
    int rc;
    memset(cat, 0, sizeof *cat);
    if ((rc = st_data_root(cat->root, sizeof cat->root, err)))
        return rc;
    for (size_t i = 0; i < N_FOLDERS; i++)
        if ((rc = scan_folder(cat, folders[i].dir, folders[i].kind, read_names, err))) {
            st_catalog_free(cat);
            return rc;
        }
    if (cat->n)
        qsort(cat->items, cat->n, sizeof *cat->items, entry_cmp);
    return 0;
}

int st_catalog_scan(st_catalog *cat, st_error *err) { return scan(cat, 1, err); }

void st_catalog_free(st_catalog *cat)
{
    free(cat->items);
    memset(cat, 0, sizeof *cat);
}

int st_name_is_path(const char *s)
{
    return strchr(s, '/') || has_ext(s, ".yaml") || has_ext(s, ".yml") || has_ext(s, ".json");
}

int st_resolve(const char *name_or_path, int want, char *path, size_t n, st_error *err)
{
    st_catalog cat;
    const st_catalog_entry *hit = NULL;
    const char *what = want < 0 ? "preset or workload" : st_file_kind_name((st_file_kind)want);
    int rc;
    if (!name_or_path || !*name_or_path)
        return st_error_set(err, ST_EINVAL, "empty %s name", what);
    if (st_name_is_path(name_or_path)) {
        struct stat st;
        if (stat(name_or_path, &st) != 0)
            return st_error_set(err, ST_EIO, "%s: cannot open: %s", name_or_path,
                                strerror(errno));
        if (S_ISDIR(st.st_mode))
            return st_error_set(err, ST_EINVAL, "%s: is a folder, not a preset or workload file",
                                name_or_path);
        if (!S_ISREG(st.st_mode))
            return st_error_set(err, ST_EINVAL, "%s: is a device, pipe or socket, not a file",
                                name_or_path);
        snprintf(path, n, "%s", name_or_path);
        return 0;
    }
    /* ids first (no file parsing), then display names */
    if ((rc = scan(&cat, 0, err)))
        return rc;
    for (size_t i = 0; i < cat.n; i++)
        if ((want < 0 || cat.items[i].kind == (st_file_kind)want) &&
            strcasecmp(cat.items[i].id, name_or_path) == 0) {
            if (hit) {
                rc = st_error_set(err, ST_EINVAL,
                                  "'%s' names both a %s (%s) and a %s (%s); give the path of "
                                  "the one you mean",
                                  name_or_path, st_file_kind_name(hit->kind), hit->path,
                                  st_file_kind_name(cat.items[i].kind), cat.items[i].path);
                st_catalog_free(&cat);
                return rc;
            }
            hit = &cat.items[i];
        }
    for (size_t i = 0; i < cat.n && !hit; i++) {
        if (want >= 0 && cat.items[i].kind != (st_file_kind)want)
            continue;
        read_name(cat.items[i].path, cat.items[i].name, sizeof cat.items[i].name);
        if (strcasecmp(cat.items[i].name, name_or_path) == 0)
            hit = &cat.items[i];
    }
    if (hit) {
        snprintf(path, n, "%s", hit->path);
        st_catalog_free(&cat);
        return 0;
    }
    /* the name of a preset of another kind: say so, not "no such name" */
    for (size_t i = 0; want >= 0 && i < cat.n; i++)
        if (strcasecmp(cat.items[i].id, name_or_path) == 0) {
            st_file_kind k = cat.items[i].kind;
            rc = st_error_set(err, ST_ENOTFOUND, "'%s' is %s %s preset (%s), but %s %s is needed here (`strata list "
                              "--kind %s` shows those)", name_or_path, st_file_kind_article(k),
                              st_file_kind_name(k), cat.items[i].path, st_file_kind_article((st_file_kind)want),
                              what, st_file_kind_name((st_file_kind)want));
            st_catalog_free(&cat);
            return rc;
        }
    {
        const char **ids = malloc((cat.n + 1) * sizeof *ids);
        size_t m = 0;
        const char *s = NULL;
        if (ids) {
            for (size_t i = 0; i < cat.n; i++)
                if (want < 0 || cat.items[i].kind == (st_file_kind)want)
                    ids[m++] = cat.items[i].id;
            s = st_suggest(name_or_path, ids, m);
        }
        /* a name that starts one or more ids (h100: h100-sxm, h100-pcie)
         * is more likely meant than the nearest by edits (h200) */
        char pre[256] = "";
        size_t np = 0, lw = strlen(name_or_path), used = 0;
        for (size_t i = 0; ids && lw >= 2 && i < m; i++)
            if (strncasecmp(ids[i], name_or_path, lw) == 0 && np < 6) {
                size_t need = strlen(ids[i]) + 4; /* ", '" ... "'" */
                if (used + need >= sizeof pre)
                    break; /* leave no cut-off name */
                used += (size_t)snprintf(pre + used, sizeof pre - used, "%s'%s'", np ? ", " : "", ids[i]);
                np++;
            }
        if (np == 1)
            rc = st_error_set(err, ST_ENOTFOUND, "no %s named '%s'; did you mean %s? (`strata list` shows them "
                              "all)", what, name_or_path, pre);
        else if (np > 1)
            rc = st_error_set(err, ST_ENOTFOUND, "no %s named '%s'; did you mean one of %s? (`strata list` shows "
                              "them all)", what, name_or_path, pre);
        else if (s)
            rc = st_error_set(err, ST_ENOTFOUND, "no %s named '%s'; did you mean '%s'? (`strata "
                              "list` shows them all)", what, name_or_path, s);
        else
            rc = st_error_set(err, ST_ENOTFOUND, "no %s named '%s' in %s (`strata list` shows "
                              "them all; a path to a file works too)", what, name_or_path,
                              cat.root);
        free(ids);
    }
    st_catalog_free(&cat);
    return rc;
}

/* Lower case, '_' as ' ', for comparing device names. */
static void device_key(const char *in, char *out, size_t n)
{
    size_t i = 0;
    for (; in[i] && i + 1 < n; i++)
        out[i] = in[i] == '_' ? ' ' : (char)tolower((unsigned char)in[i]);
    out[i] = '\0';
}

int st_find_gpu_for_device(const char *device, st_gpu *out, st_error *err)
{
    st_catalog cat;
    char want[128], key[128];
    int rc;
    device_key(device, want, sizeof want);
    if ((rc = scan(&cat, 0, err)))
        return rc;
    for (size_t i = 0; i < cat.n; i++) {
        st_gpu g;
        if (cat.items[i].kind != ST_FILE_GPU)
            continue;
        if ((rc = st_load_gpu(cat.items[i].path, &g, err))) {
            st_catalog_free(&cat);
            return rc;
        }
        int hit = 0;
        device_key(g.id, key, sizeof key);
        hit |= strcmp(key, want) == 0;
        device_key(g.name, key, sizeof key);
        hit |= strcmp(key, want) == 0;
        for (int a = 0; a < g.n_aliases && !hit; a++) {
            device_key(g.aliases[a], key, sizeof key);
            hit = strcmp(key, want) == 0;
        }
        if (hit) {
            *out = g;
            st_catalog_free(&cat);
            return 0;
        }
    }
    rc = st_error_set(err, ST_ENOTFOUND,
                      "no GPU preset for the device '%s': add it to the aliases of the preset "
                      "that describes it (strata-presets(5)), or write one",
                      device);
    st_catalog_free(&cat);
    return rc;
}

const char *st_data_file(const char *given, const char *rel, char *buf, size_t n, st_error *err)
{
    if (given)
        return given;
    char root[512];
    if (st_data_root(root, sizeof root, err))
        return NULL;
    if ((size_t)snprintf(buf, n, "%s/%s", root, rel) >= n) {
        st_error_set(err, ST_EINVAL, "data root path too long: %.60s...", root);
        return NULL;
    }
    return buf;
}
