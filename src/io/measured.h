/*
 * Measured data for calibration and validation, read from a folder laid out
 * like ../shared/data/neusight (NeuSight, MIT) or ../shared/data/vidur
 * (VIDUR, MIT). strata never copies these files; it reads them in place.
 *
 * NeuSight kernel CSVs (kernels/OP__DEVICE.csv and kernels-test/ CSVs):
 * columns OPName, Latency (ms), Device, ..., Kernel Name, ..., Grid x/y/z,
 * Block x/y/z, ..., then the shape: B,M,N,K for bmm/linear, B,H for vector
 * ops, and for conv: B, Input_Channel, Output_Channel, Kernel_Szie,
 * Input_Size, Stride, Padding. Latencies are converted to seconds.
 *
 * VIDUR MLP profiles (profiling/compute/GPU/ORG/MODEL/mlp.csv): one row per
 * (num_tokens, num_tensor_parallel_workers) with, for each operator OP
 * (emb, input_layernorm, attn_pre_proj, attn_rope, attn_post_proj,
 * post_attention_layernorm, mlp_up_proj, mlp_act, mlp_down_proj, add), the
 * columns time_stats.OP.{min,max,mean,median,std} in ms, then n_head,
 * n_kv_head, n_embd, n_expanded_embd, vocab_size, use_gated_mlp. The reader
 * turns each row into one sample per operator present.
 */
#ifndef STRATA_IO_MEASURED_H
#define STRATA_IO_MEASURED_H

#include "core/core.h"
#include "gpu/gpu.h" /* st_kop */

/* NeuSight op names, one class each. */
typedef enum st_meas_op {
    ST_MEAS_BMM = 0, ST_MEAS_LINEAR, ST_MEAS_CONV,
    ST_MEAS_ADD, ST_MEAS_ADDU, ST_MEAS_MUL, ST_MEAS_MULU, ST_MEAS_DIV, ST_MEAS_DIVU,
    ST_MEAS_POW, ST_MEAS_POWU, ST_MEAS_GELU, ST_MEAS_RELU, ST_MEAS_TANH,
    ST_MEAS_LN, ST_MEAS_SOFTMAX, ST_MEAS_RMSNORM,
    ST_MEAS_OP_COUNT
} st_meas_op;
const char *st_meas_op_name(st_meas_op op); /* "bmm", ..., "ln", "softmax", "rmsnorm" */
int st_meas_op_parse(const char *s, st_meas_op *out);

typedef struct st_kernel_sample {
    st_meas_op op;
    char device[64];        /* the Device column, e.g. "Tesla V100-PCIE-32GB" */
    char kernel_name[160];  /* cut at the first '(' not opening "(anonymous
                               namespace)", trimmed; longer names truncated */
    double latency_s;
    st_dtype dtype;         /* the optional Dtype column (fp32, tf32, fp16, bf16, fp8,
                               int8); FP32 without it, as NeuSight's sweeps are */
    long long b, m, n, k;   /* bmm/linear: B, M, N, K; vector ops: b = B, n = H */
    /* conv: b = batch, c_in, c_out, kernel, size (input H = W), stride, pad */
    long long c_in, c_out, kernel, size, stride, pad;
    long long grid[3], block[3];
    int line;               /* line in its file, for messages */
} st_kernel_sample;

typedef struct st_kernel_set {
    size_t n, cap;
    st_kernel_sample *items;
} st_kernel_set;

/* Append every row of one NeuSight kernel CSV. Rows whose OPName is not a
 * known class are skipped; malformed rows are errors naming FILE:LINE. */
int st_read_neusight_csv(const char *path, st_kernel_set *out, st_error *err);
/* All *.csv directly in a folder (sorted by name, for determinism). */
int st_read_neusight_dir(const char *dir, st_kernel_set *out, st_error *err);
void st_kernel_set_free(st_kernel_set *s);

/* Fused attention timed op by op (strata's sweeps: DIR/attention.csv,
 * torch SDPA under the flash backend): OPName, Latency (ms), Device,
 * Batch, Heads, KV Heads, Q, KV, D, Causal (True/False), Dtype. */
typedef struct st_attn_sample {
    char device[64];
    double latency_s;
    long long batch, heads, kv_heads, q, kv, d;
    int causal;
    st_dtype dtype;
    int line;
} st_attn_sample;
typedef struct st_attn_set {
    size_t n, cap;
    st_attn_sample *items;
} st_attn_set;
/* Append every row; *n unchanged and 0 returned when the file is absent. */
int st_read_attention_csv(const char *path, st_attn_set *out, st_error *err);
void st_attn_set_free(st_attn_set *s);

/* Single ops in `strata kernel`'s own terms (strata's sweeps: DIR/ops.csv,
 * tools/measure-kernels.py --ops): op (gemm, bmm, grouped; elementwise,
 * softmax, norm, embedding, topk), dtype, int4 (0 or empty: none; 1,
 * marlin or tinygemm: weight-only INT4, by the kernel that ran it, where 1
 * takes it from the row's `kernel` column, which must name one of the two,
 * case aside, or the row is an error), b, m, n, k (GEMM-like ops: b x (m x k).(k x
 * n); empty for vector ops), rows, cols (vector ops; empty for GEMM-like
 * ones), latency_ms, device. Other columns (vocab, kernels) are read by
 * nobody. Fused
 * attention and convolutions have files of their own (attention.csv,
 * kernels-test/conv.csv). */
typedef struct st_ops_sample {
    char device[64];
    double latency_s;
    st_kop op;
    st_dtype dtype;
    int int4;
    st_int4_kernel int4_kernel; /* int4 rows: the kernel that ran it */
    int int4_col;               /* where the int4 field is on its line */
    long long b, m, n, k, rows, cols;
    int torch_ver;  /* the row's `torch` column (p2.11.0 -> 211; st_torch_parse); 0: none given */
    int torch_col;  /* where that field is on its line (0: no torch column) */
    long long topk; /* topk rows: the `topk` column, the experts each token keeps (0: not given) */
    int line;
} st_ops_sample;
typedef struct st_ops_set {
    size_t n, cap;
    st_ops_sample *items;
} st_ops_set;
/* Append every row; *n unchanged and 0 returned when the file is absent. */
int st_read_ops_csv(const char *path, st_ops_set *out, st_error *err);
void st_ops_set_free(st_ops_set *s);

/* A timing harness's own per-op cost, as measured beside a kernel sweep
 * (DIR/harness.csv of strata's measurements: `dispatch,floor_us,...`): the
 * time the harness measures for the smallest op of each dispatch class
 * (one element), that is the host's path from the start event to the
 * launch plus a one-element kernel. */
#define ST_HARNESS_MAX 16
typedef struct st_harness_row {
    char dispatch[32];  /* "bmm", "linear", "elementwise", "elementwise_scalar", ... */
    double floor_s;
    int torch_ver;      /* the row's `torch` column (st_torch_parse); 0: none given */
    int torch_col;      /* where that field is on the line (0: no torch column) */
    int line, col;      /* where its dispatch name is, for messages */
} st_harness_row;
/* Read DIR/harness.csv; *n = 0 and 0 returned when the file is absent. */
int st_read_harness_csv(const char *path, st_harness_row *rows, int max, int *n, st_error *err);

/* One row of a VIDUR mlp.csv: one operator at one token count and TP degree. */
typedef struct st_vidur_sample {
    char op[32];          /* e.g. "mlp_up_proj", "attn_pre_proj", "add" */
    long long num_tokens;
    int tp;               /* num_tensor_parallel_workers */
    long long n_head, n_kv_head, n_embd, n_expanded_embd, vocab_size;
    int gated_mlp;
    double mean_s, median_s, std_s, min_s, max_s;
    int line;
} st_vidur_sample;

typedef struct st_vidur_set {
    size_t n, cap;
    st_vidur_sample *items;
    char gpu[32];   /* the GPU folder name, e.g. "a100" */
    char model[96]; /* ORG/MODEL */
} st_vidur_set;

int st_read_vidur_mlp(const char *path, st_vidur_set *out, st_error *err);
void st_vidur_set_free(st_vidur_set *s);

/* One row of a VIDUR network profile (profiling/network/CLUSTER/
 * {all_reduce,send_recv}.csv): one collective at one size. */
typedef struct st_net_sample {
    char collective[16]; /* "all_reduce", "send_recv" (the `collective` column) */
    double bytes;        /* `size` */
    int workers;         /* `num_workers` */
    int per_node;        /* `devices_per_node` */
    double median_s;
    int line;
    int col_collective, col_workers; /* columns of `collective` and `num_workers`, for messages */
} st_net_sample;

typedef struct st_net_set {
    size_t n, cap;
    st_net_sample *items;
} st_net_set;

int st_read_vidur_network(const char *path, st_net_set *out, st_error *err);
void st_net_set_free(st_net_set *s);

/* A NeuSight label (labels/DEVICE/MODEL-MODE-SEQ-BATCH[-fusion].json): the
 * measured whole-model latency in seconds, its num_layer and, where the
 * label has them (fw_latency and bwall_latency, both or neither, adding up
 * to e2e_latency within 0.1%), the forward and backward parts of it. */
typedef struct st_ns_label {
    double e2e_s;
    long long num_layer; /* 0: not given */
    int has_split;
    double fwd_s, bwd_s;
} st_ns_label;
int st_read_neusight_label(const char *path, st_ns_label *out, st_error *err);

/* A label's operator profile (the LABEL.csv beside it: one row per traced
 * operator, each timed on its own, columns fw_latency, bw_latency and
 * acc_latency in ms, meta holding the operator's nn_module_stack). The
 * trace holds the first block of the model's repeated stack (modules named
 * PREFIX.0, e.g. transformer.h.0, bert.encoder.layer.0) and everything
 * outside it, so the profiled step is the rest + num_layer x block 0.
 * ok = 0 (and 0 returned) where that does not apply: no num_layer, no
 * block 0, two repeated stacks (an encoder and a decoder), or an operator
 * in another numbered module than block 0 (transformer.h.10; a numbered
 * head, Sequential's classifier.1). A meta that is not valid UTF-8 is an
 * error. */
typedef struct st_ns_profile {
    int ok;
    double fwd_s, bwd_s;   /* bwd: bw_latency + acc_latency */
    long long block_ops;   /* operators traced in block 0 */
    char block[64];        /* its module path, e.g. "transformer.h.0" */
} st_ns_profile;
int st_read_neusight_profile(const char *path, long long num_layer, st_ns_profile *out, st_error *err);

/* A vLLM run's meta.json (shared/data/vllm/RUN): the served model's Hugging
 * Face name, the engine settings under engine_kwargs and, where logged, the
 * resolved KV cache under kv_cache. Absent or null keys leave the caller's
 * defaults in place; present ones are range-checked (FILE:LINE:COL). */
typedef struct st_vllm_meta {
    char model[256];
    long long tp, dp, max_num_seqs, max_batched_tokens, max_model_len, seed, block_size;
    long long num_gpu_blocks; /* 0: not logged */
    int ep, prefix_cache;
    double gpu_mem_util;
    int kv_fp8;                      /* kv_cache_dtype fp8 (fp8_e4m3, fp8_e5m2) */
    const char *dtype;               /* engine dtype: NULL (auto), "fp16" or "bf16" */
    int model_line, model_col;       /* where "model" is, for errors about it */
    int engine_line, engine_col;     /* where engine_kwargs is (1:1 without it) */
    int vllm_major, vllm_minor;      /* vllm_version X.Y[.Z]; -1 when not given */
} st_vllm_meta;
int st_read_vllm_meta(const char *path, st_vllm_meta *m, st_error *err);

/* Reference latencies of whole models on edge devices (calibration/
 * edge-reference.csv): '#' comment lines, the header
 * model,workload,preset,dtype,latency_ms,role, then one row each. */
typedef struct st_edge_ref_row {
    char model[64], workload[512], preset[512];
    st_dtype dtype;
    double ref_s;
    int fit;      /* role: fit (1) or test (0) */
    int line;
    int col[6];   /* where each field starts, for messages */
} st_edge_ref_row;
/* The rows (malloc'd, *n of them); errors name FILE:LINE:COL. */
int st_read_edge_refs(const char *path, st_edge_ref_row **rows, size_t *n, st_error *err);

#endif
