/*
 * The serving simulator's iteration-time and memory model for one model on
 * one replica (internal to src/serve). See serve.h for what it prices.
 */
#ifndef STRATA_SERVE_COST_H
#define STRATA_SERVE_COST_H

#include "compose/compose.h"
#include "net/net.h"
#include "serve/serve.h"

typedef struct memo {
    long long cap;
    double *v; /* NaN: not computed yet */
} memo;

typedef struct attn_memo {
    size_t cap, n;
    unsigned long long *key;
    double *val;
} attn_memo;

typedef struct st_serve_cost {
    const st_model *full;
    st_model shard;           /* TP/EP sharded, one PP stage's blocks */
    st_gpu gpu;               /* scaled when spatially shared */
    const st_gpu_coef *coef;
    const st_cluster *cluster;
    int tp, pp, ep, cp;
    int cp_per_node;          /* CP ranks per node (the ring's hops cross nodes when < cp) */
    st_quant quant;
    int kv_fp8, eager, fa3;
    st_dtype dtype;
    long long blocks;         /* transformer blocks per stage */
    memo lin, head, comm;
    memo cp_merge, cp_send;   /* CP: decode merge at n tokens, ring hop of n tokens' K/V */
    attn_memo attn;
    /* memory, per GPU */
    double weights_bytes, kv_bytes_per_token, act_bytes;
    double flops_per_token;   /* 2 x active parameters (MFU) */
    double p2p_bytes_per_token;
} st_serve_cost;

/* frac_sm, frac_bw: share of the GPU this model gets (1, 1 unless spatially
 * shared). */
int st_serve_cost_init(st_serve_cost *c, const st_serve_cfg *cfg, const st_model *m, double frac,
                       st_error *err);
void st_serve_cost_free(st_serve_cost *c);

/* One step of a batch: n_tok tokens through the linear layers, n_logits
 * sequences through the LM head, decode attention of n_dec sequences with q
 * query tokens each against sum_kv cached tokens, and prefill chunks
 * (chunk[i] new tokens after ctx[i] cached ones). Seconds for one pass through
 * one pipeline stage (the whole model when pp = 1). */
double st_serve_step_time(st_serve_cost *c, long long n_tok, long long n_logits, long long n_dec, int q,
                          double sum_kv, const int *chunk, const int *ctx, int n_chunks);

/* A collective of bytes over n GPUs of a cluster (per_node <= 0: as many
 * per node as fit), seconds; 0 for one GPU or no cluster. */
double st_serve_coll(const st_cluster *cl, st_coll kind, int n, int per_node, double bytes);
/* The same for GPUs `stride` apart (where they sit on a ring or torus node). */
double st_serve_coll_placed(const st_cluster *cl, st_coll kind, int n, int per_node, int stride, double bytes);

/* KV blocks that fit on one GPU of a replica (the block count of the
 * replica: every GPU of a TP/PP group holds its share of each block). */
double st_serve_kv_avail_bytes(const st_serve_cost *c, const st_serve_cfg *cfg, double mem_frac);
/* The memory vLLM's gpu_memory_utilization multiplies: the total CUDA
 * reports (cuda_total_bytes), else the datasheet's */
double st_serve_cuda_total(const st_gpu *g);
long long st_serve_kv_blocks(const st_serve_cost *c, const st_serve_cfg *cfg, double mem_frac);

#endif
