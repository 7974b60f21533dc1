/* Private to io/: the per-kind readers behind st_load (one file each). */
#ifndef STRATA_IO_LOADERS_H
#define STRATA_IO_LOADERS_H

#include "io/fields.h"
#include "io/io.h"

/* Unit suffixes of keys -> SI factors. */
#define MHZ 1e6
#define GIB 1073741824.0
#define MIB 1048576.0
#define KIB 1024.0
#define GBS 1e9
#define US 1e-6
#define TERA 1e12
#define PJ 1e-12

int st_read_throughput(const fctx *c, const st_ynode *map, const char *key, st_peak *peak);
/* The architecture families a GPU preset's arch may name (*n of them). */
const char *const *st_gpu_archs(size_t *n);
int st_read_gpu(const fctx *c, const st_ynode *root, st_gpu *g);
int st_read_edge(const fctx *c, const st_ynode *root, st_edge *e);
int st_read_accel(const fctx *c, const st_ynode *root, st_accel *a);
int st_read_node(const fctx *c, const st_ynode *root, st_node *n);
int st_read_cluster(const fctx *c, const st_ynode *root, st_cluster *cl);
int st_read_transformer(const fctx *c, const st_ynode *root, st_model *m);
int st_read_cnn(const fctx *c, const st_ynode *root, st_model *m);
/* A Hugging Face config.json (no `kind:`; has model_type or architectures). */
int st_read_hf(const fctx *c, const st_ynode *root, st_model *m);
/* Defaults and consistency checks shared by YAML and HF transformers. */
int st_check_transformer(const fctx *c, const st_ynode *at, st_transformer *tf);
/* Shared by the model readers: optional `dtype:` key. */
int st_read_dtype(const fctx *c, const st_ynode *map, const char *key, st_dtype *out);

#endif
