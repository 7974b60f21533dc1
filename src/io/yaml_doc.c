/*
 * libyaml events -> a tree of nodes with positions.
 *
 * The whole file is read first (bounded size) so that reader errors, which
 * libyaml reports as a byte offset, can be turned into a line and column.
 */
#include "config.h"
#include "io/fields.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* More keys than any strata file or HF config has; bounds the duplicate-key
 * check, which compares each new key with those before it. */
#define MAX_KEYS_PER_MAP 4096

typedef struct builder {
    yaml_parser_t parser;
    const char *path;
    const char *buf;
    size_t len;
    st_error *err;
} builder;

static void node_free(st_ynode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        node_free(n->items[i]);
        if (n->keys)
            node_free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->scalar);
    free(n);
}

void st_ydoc_free(st_ydoc *doc)
{
    node_free(doc->root);
    doc->root = NULL;
}

const char *st_ykind_name(st_ykind k)
{
    switch (k) {
    case ST_Y_SCALAR: return "a single value";
    case ST_Y_SEQ: return "a list";
    case ST_Y_MAP: return "a mapping";
    }
    return "?";
}

int st_ynode_is_null(const st_ynode *n)
{
    if (!n)
        return 1;
    if (n->kind != ST_Y_SCALAR || !n->plain)
        return 0;
    return n->scalar[0] == '\0' || strcmp(n->scalar, "~") == 0 || strcmp(n->scalar, "null") == 0 ||
           strcmp(n->scalar, "Null") == 0 || strcmp(n->scalar, "NULL") == 0;
}

/* Line and column (1-based, in characters as libyaml counts them: UTF-8
 * continuation bytes add none) of a byte offset, for reader errors. */
/* A UTF-16 file's byte-order mark: 1 little-endian, 2 big-endian, 0 none
 * (libyaml reads such files; they are not UTF-8) */
static int utf16_bom(const unsigned char *u, size_t len)
{
    return len < 2 ? 0 : u[0] == 0xFF && u[1] == 0xFE ? 1 : u[0] == 0xFE && u[1] == 0xFF ? 2 : 0;
}

static void offset_position(const char *buf, size_t len, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    const unsigned char *u = (const unsigned char *)buf;
    /* a UTF-16 file: two-byte units, after the mark */
    int bom = utf16_bom(u, len), le = bom == 1;
    if (bom) {
        for (size_t i = 2; i + 1 < len && i < off; i += 2) {
            unsigned unit = le ? (unsigned)u[i] | (unsigned)u[i + 1] << 8 : (unsigned)u[i] << 8 | u[i + 1];
            if (unit == '\n')
                l++, c = 1;
            else if (unit < 0xDC00 || unit > 0xDFFF) /* a low surrogate ends a character begun */
                c++;
        }
        *line = l;
        *col = c;
        return;
    }
    for (size_t i = 0; i < off && i < len; i++) {
        if (buf[i] == '\n') {
            l++;
            c = 1;
        } else if ((u[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* The offset of the first byte that starts no valid UTF-8 character (a
 * stray continuation byte, a lead byte its continuation bytes do not
 * follow, an overlong form or a code point past U+10FFFF or a surrogate),
 * or len. libyaml reports the byte after a broken lead byte, one column
 * past the character the user has to fix. */
static size_t first_bad_utf8(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char b = s[i];
        size_t n = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0 || i + n > len)
            return i;
        unsigned long cp = n == 1 ? b : n == 2 ? b & 0x1Fu : n == 3 ? b & 0x0Fu : b & 0x07u;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + k] & 0x3Fu);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n;
    }
    return len;
}

static int parser_error(builder *b)
{
    yaml_parser_t *p = &b->parser;
    int line, col;
    const char *problem = p->problem ? p->problem : "malformed input";
    if (p->error == YAML_READER_ERROR) {
        /* a UTF-16 file (its byte-order mark first), which libyaml reads,
         * is not UTF-8: its fault is where libyaml says */
        const unsigned char *u = (const unsigned char *)b->buf;
        size_t bad = utf16_bom(u, b->len) ? b->len : first_bad_utf8(u, b->len);
        if (bad < b->len && bad <= (size_t)p->problem_offset) {
            offset_position(b->buf, b->len, bad, &line, &col);
            return st_error_set(b->err, ST_EINVAL,
                                "%s:%d:%d: not a readable YAML/JSON text file: byte 0x%02x (offset %zu) starts no "
                                "UTF-8 character (another encoding, such as Latin-1?); save it as UTF-8 text",
                                b->path, line, col, (unsigned char)b->buf[bad], bad);
        }
        offset_position(b->buf, b->len, p->problem_offset, &line, &col);
        return st_error_set(b->err, ST_EINVAL,
                            "%s:%d:%d: not a readable YAML/JSON text file: %s (byte 0x%02x at "
                            "offset %zu); save it as UTF-8 text",
                            b->path, line, col, problem,
                            p->problem_value >= 0 ? (unsigned)p->problem_value & 0xffu : 0u,
                            (size_t)p->problem_offset);
    }
    if (p->error == YAML_MEMORY_ERROR)
        return st_error_set(b->err, ST_ENOMEM, "%s: out of memory while parsing", b->path);
    line = (int)p->problem_mark.line + 1;
    col = (int)p->problem_mark.column + 1;
    /* JSON files (config.json, meta.json) are read by the YAML parser, JSON
     * being YAML 1.2; name the syntax the user wrote */
    size_t pl = strlen(b->path);
    const char *lang = pl >= 5 && strcasecmp(b->path + pl - 5, ".json") == 0 ? "JSON" : "YAML";
    if (p->context)
        return st_error_set(b->err, ST_EINVAL, "%s:%d:%d: %s syntax error: %s %s that starts at line %d",
                            b->path, line, col, lang, problem, p->context,
                            (int)p->context_mark.line + 1);
    return st_error_set(b->err, ST_EINVAL, "%s:%d:%d: %s syntax error: %s", b->path, line, col, lang,
                        problem);
}

static int next_event(builder *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->parser, ev))
        return parser_error(b);
    return 0;
}

static st_ynode *new_node(builder *b, st_ykind kind, const yaml_mark_t *mark)
{
    st_ynode *n = calloc(1, sizeof *n);
    if (!n) {
        st_error_set(b->err, ST_ENOMEM, "%s: out of memory while parsing", b->path);
        return NULL;
    }
    n->kind = kind;
    n->line = (int)mark->line + 1;
    n->col = (int)mark->column + 1;
    return n;
}

static int append(builder *b, st_ynode *parent, st_ynode *key, st_ynode *value)
{
    size_t cap = parent->n + 1;
    st_ynode **items = realloc(parent->items, cap * sizeof *items);
    if (!items)
        return st_error_set(b->err, ST_ENOMEM, "%s: out of memory while parsing", b->path);
    parent->items = items;
    if (parent->kind == ST_Y_MAP) {
        st_ynode **keys = realloc(parent->keys, cap * sizeof *keys);
        if (!keys)
            return st_error_set(b->err, ST_ENOMEM, "%s: out of memory while parsing", b->path);
        parent->keys = keys;
        parent->keys[parent->n] = key;
    }
    parent->items[parent->n++] = value;
    return 0;
}

static int build(builder *b, yaml_event_t *ev, int depth, st_ynode **out);

/* Children of a sequence or mapping until its end event. */
static int build_children(builder *b, st_ynode *n, int depth)
{
    for (;;) {
        yaml_event_t ev;
        st_ynode *key = NULL, *value = NULL;
        int rc = next_event(b, &ev);
        if (rc)
            return rc;
        if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (n->kind == ST_Y_MAP) {
            if (ev.type != YAML_SCALAR_EVENT) {
                int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
                yaml_event_delete(&ev);
                return st_error_set(b->err, ST_EINVAL,
                                    "%s:%d:%d: a key must be a plain name, found a list or "
                                    "mapping used as a key",
                                    b->path, line, col);
            }
            if (n->n >= MAX_KEYS_PER_MAP) {
                rc = st_error_set(b->err, ST_EINVAL,
                                  "%s:%d:%d: more than %d keys in one mapping; strata files have "
                                  "a few dozen",
                                  b->path, (int)ev.start_mark.line + 1,
                                  (int)ev.start_mark.column + 1, MAX_KEYS_PER_MAP);
                yaml_event_delete(&ev);
                return rc;
            }
            rc = build(b, &ev, depth + 1, &key);
            if (rc)
                return rc;
            for (size_t i = 0; i < n->n; i++)
                if (strcmp(n->keys[i]->scalar, key->scalar) == 0) {
                    rc = st_error_set(b->err, ST_EINVAL,
                                      "%s:%d:%d: duplicate key '%s' (first given at line %d); "
                                      "keep one of them",
                                      b->path, key->line, key->col, key->scalar, n->keys[i]->line);
                    node_free(key);
                    return rc;
                }
            rc = next_event(b, &ev);
            if (rc) {
                node_free(key);
                return rc;
            }
        }
        rc = build(b, &ev, depth + 1, &value);
        if (rc == 0)
            rc = append(b, n, key, value);
        if (rc) {
            node_free(key);
            node_free(value);
            return rc;
        }
    }
}

/* Build the node that starts with event ev (consumed). */
static int build(builder *b, yaml_event_t *ev, int depth, st_ynode **out)
{
    st_ynode *n = NULL;
    int rc = 0;
    *out = NULL;
    if (depth > ST_YAML_MAX_DEPTH) {
        rc = st_error_set(b->err, ST_EINVAL,
                          "%s:%d:%d: nesting deeper than %d levels; strata files are at most a "
                          "few levels deep",
                          b->path, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                          ST_YAML_MAX_DEPTH);
        yaml_event_delete(ev);
        return rc;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        n = new_node(b, ST_Y_SCALAR, &ev->start_mark);
        if (n) {
            n->scalar = malloc(ev->data.scalar.length + 1);
            if (!n->scalar) {
                free(n);
                n = NULL;
                st_error_set(b->err, ST_ENOMEM, "%s: out of memory while parsing", b->path);
            } else {
                memcpy(n->scalar, ev->data.scalar.value, ev->data.scalar.length);
                n->scalar[ev->data.scalar.length] = '\0';
                if (strlen(n->scalar) != ev->data.scalar.length) {
                    rc = st_error_set(b->err, ST_EINVAL,
                                      "%s:%d:%d: a value contains a NUL character; remove it",
                                      b->path, n->line, n->col);
                    node_free(n);
                    n = NULL;
                }
            }
            if (n)
                n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        }
        if (!n && !rc)
            rc = ST_ENOMEM;
        yaml_event_delete(ev);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        n = new_node(b, ev->type == YAML_SEQUENCE_START_EVENT ? ST_Y_SEQ : ST_Y_MAP,
                     &ev->start_mark);
        yaml_event_delete(ev);
        if (!n)
            return ST_ENOMEM;
        rc = build_children(b, n, depth);
        break;
    case YAML_ALIAS_EVENT:
        rc = st_error_set(b->err, ST_EINVAL,
                          "%s:%d:%d: YAML aliases (*%s) are not supported; write the value out",
                          b->path, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                          (const char *)ev->data.alias.anchor);
        yaml_event_delete(ev);
        break;
    default:
        rc = st_error_set(b->err, ST_EINVAL, "%s:%d:%d: unexpected YAML structure", b->path,
                          (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
        yaml_event_delete(ev);
        break;
    }
    if (rc) {
        node_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

int st_ydoc_load_buffer(st_ydoc *doc, const char *path, const char *buf, size_t len,
                        st_error *err)
{
    builder b;
    yaml_event_t ev;
    int rc, docs = 0;
    memset(doc, 0, sizeof *doc);
    snprintf(doc->path, sizeof doc->path, "%s", path);
    memset(&b, 0, sizeof b);
    b.path = path;
    b.buf = buf;
    b.len = len;
    b.err = err;
    if (!yaml_parser_initialize(&b.parser))
        return st_error_set(err, ST_ENOMEM, "%s: out of memory starting the YAML parser", path);
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)buf, len);
    for (;;) {
        rc = next_event(&b, &ev);
        if (rc)
            break;
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (ev.type == YAML_DOCUMENT_START_EVENT) {
            if (++docs > 1) {
                rc = st_error_set(err, ST_EINVAL,
                                  "%s:%d:%d: a second YAML document starts here; a strata file "
                                  "holds exactly one (remove the extra '---')",
                                  path, (int)ev.start_mark.line + 1,
                                  (int)ev.start_mark.column + 1);
                yaml_event_delete(&ev);
                break;
            }
            yaml_event_delete(&ev);
            rc = next_event(&b, &ev);
            if (rc)
                break;
            if (ev.type == YAML_DOCUMENT_END_EVENT) { /* empty document */
                yaml_event_delete(&ev);
                continue;
            }
            rc = build(&b, &ev, 0, &doc->root);
            if (rc)
                break;
            continue;
        }
        yaml_event_delete(&ev); /* stream start, document end */
    }
    yaml_parser_delete(&b.parser);
    if (rc)
        st_ydoc_free(doc);
    return rc;
}

int st_ydoc_load_file(st_ydoc *doc, const char *path, st_error *err)
{
    FILE *f;
    char *buf;
    size_t len = 0, cap = 1 << 16;
    int rc, fd;
    struct stat st;
    memset(doc, 0, sizeof *doc);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return st_error_set(err, ST_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = st_error_set(err, ST_EIO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return st_error_set(err, ST_EINVAL, "%s: %s, not a regular file", path,
                            S_ISDIR(st.st_mode) ? "is a folder" : "is a device, pipe or socket");
    }
    f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return st_error_set(err, ST_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return st_error_set(err, ST_ENOMEM, "%s: out of memory reading the file", path);
    }
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len > ST_YAML_MAX_BYTES) {
            free(buf);
            fclose(f);
            return st_error_set(err, ST_EINVAL,
                                "%s: larger than %u MiB; strata preset and workload files are "
                                "small text files",
                                path, ST_YAML_MAX_BYTES >> 20);
        }
        if (got == 0)
            break;
        if (len == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return st_error_set(err, ST_ENOMEM, "%s: out of memory reading the file", path);
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        rc = st_error_set(err, ST_EIO, "%s: read error: %s", path, strerror(errno));
        free(buf);
        fclose(f);
        return rc;
    }
    fclose(f);
    rc = st_ydoc_load_buffer(doc, path, buf, len, err);
    free(buf);
    return rc;
}
