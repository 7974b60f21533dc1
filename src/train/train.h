/*
 * train: one training iteration of a transformer on a cluster under a
 * parallel configuration: time with its band, MFU, tokens/s, memory per GPU.
 *
 * Per-GPU work. The model is sharded the way Megatron-LM shards it: TP
 * splits heads, KV heads, the MLP's hidden size and the vocabulary (column
 * then row parallel linears); SP also splits the norms, residual adds and
 * dropouts along the sequence; CP splits the sequence (ring attention: each
 * rank attends its S/cp queries to all S keys); EP splits the experts; PP
 * gives each stage layers/pp blocks (the first also the embedding, the last
 * also the final norm and LM head). The sharded operator list of one
 * microbatch goes through the compose layer (gpu + dispatch), forward and
 * backward separately, so every kernel is a calibrated estimate.
 *
 * Communication, where Megatron-LM / DeepSpeed put it (net layer):
 *   TP     2 all-reduces per block forward and 2 backward of the block's
 *          activations (with SP: all-gather + reduce-scatter, same bytes),
 *          on the critical path;
 *   CP     ring attention passes K and V around the CP group, cp-1 steps,
 *          hidden behind the block's attention compute where it fits;
 *   EP     all-to-all dispatch and combine per MoE block, forward and
 *          backward; expert GEMMs scaled by the load-imbalance factor;
 *   PP     send/recv of one microbatch's activations per stage boundary;
 *   DP     gradient all-reduce (ZeRO 1-2: reduce-scatter, then all-gather of
 *          the updated weights) in buckets that start as the last
 *          microbatch's backward produces their gradients, so most of it
 *          hides behind compute: PyTorch DDP's 25 MiB (bucket_cap_mb), and
 *          with ZeRO-1 Megatron-LM's distributed optimizer's max(40M, 1M x
 *          DP) parameters. ZeRO-2 keeps the 25 MiB buckets and reduces once
 *          per iteration, which understates DeepSpeed stage 2 (a
 *          reduce-scatter every microbatch) and overstates FSDP's per-layer
 *          latency; the Llama 3 anchor runs under it (README); the
 *          chunk-level simulation measures how much a concurrent TP
 *          all-reduce slows it where both share NVLink;
 *   ZeRO-3 all-gathers each block's weights in forward and backward and
 *          reduce-scatters its gradients in the backward, every microbatch,
 *          prefetched behind the previous block's compute (a model chunk's
 *          first block, the embedding and the head pay theirs whole), no
 *          DP buckets; the running and the prefetched block's gathered
 *          weights are buffers. DeepSpeed's and FSDP's per-module host
 *          hooks are not modelled.
 * The pipeline is simulated, not taken from the closed form: each stage runs
 * its schedule's order of forward and backward microbatches (GPipe; 1F1B;
 * interleaved 1F1B with v model chunks per stage), each waits for its
 * input from the neighbouring stage plus the send/recv time; the bubble is
 * the idle share of the busiest stage in the same schedule without the
 * send/recv (that time is communication, in comm_s).
 *
 * Memory per GPU (bytes, the largest stage): weights, gradients and
 * optimizer states (AdamW; 16-bit training: 2 + 2 + 12 bytes per parameter
 * as in the ZeRO paper, fp32: 4 + 4 + 8), divided over DP by ZeRO stage
 * (the routed experts' share only over the dp x cp / ep ranks that hold
 * the same expert shard; their gradient collectives are still sized over
 * the whole DP group);
 * activations per block after Korthikanti et al. 2022 ("Reducing Activation
 * Recomputation in Large Transformer Models", Table 2), term by term from
 * the architecture (GQA's narrower K and V, the MLP width, a gated MLP's
 * four f-wide tensors or three fused, MoE's top_k token copies and expert
 * intermediates, dropout masks only with dropout), e bytes per element:
 * for GPT s b h (16e + 2) + a s^2 b (2e + 1) without parallelism; TP
 * splits all but the norm and GEMM inputs and masks (s b h (4e + 2) for
 * GPT); SP splits that too; selective recompute and FlashAttention drop
 * the s^2 terms; full recompute keeps e s b h per block; times the
 * microbatches in flight on the stage, counted in the
 * simulated schedule; the last stage's logits (e + 4 bytes per element for
 * the fp32 loss; under GPipe one set per microbatch in flight, as every
 * forward runs before the first backward); DP bucket buffers. FP8 keeps an
 * FP8 copy of the block weights, not of the embedding and head. Out of
 * memory when over the GPU's HBM.
 *
 * LoRA: the base weights are frozen (no weight gradients, no optimizer
 * state), adapters of rank r on every linear layer of every block (the
 * fused QKV projection takes one adapter: PEFT's separate q, k and v
 * adapters have 2 r h more parameters a block), with
 * their own GEMMs forward and backward and AdamW state for the adapters only.
 * FP8: GEMMs (not the LM head) run in FP8 with a cast of each GEMM input;
 * attention, norms, elementwise ops and the optimizer stay in BF16/FP32;
 * weights are kept in BF16 plus an FP8 copy.
 */
#ifndef STRATA_TRAIN_H
#define STRATA_TRAIN_H

#include "compose/compose.h"
#include "net/net.h"
#include "workload/workload.h"

/* microbatches per iteration the pipeline simulation takes: it keeps state
 * per microbatch, stage and chunk (measured: 100M microbatches of one
 * stage took 28 s and 7.8 GB; 1M takes under a second and about 80 MB) */
#define ST_TRAIN_MAX_MICROBATCHES 1000000
/* --trace: at most this many forward/backward tasks, shared evenly by the
 * pipeline stages (each keeps its first ones), as serve caps its trace */
#define ST_TRAIN_TRACE_MAX_TASKS 200000

typedef enum st_pp_sched { ST_PP_1F1B = 0, ST_PP_GPIPE, ST_PP_INTERLEAVED } st_pp_sched;
typedef enum st_recompute { ST_RECOMP_NONE = 0, ST_RECOMP_SELECTIVE, ST_RECOMP_FULL } st_recompute;
const char *st_pp_sched_name(st_pp_sched s);
int st_pp_sched_parse(const char *s, st_pp_sched *out);
const char *st_recompute_name(st_recompute r);
int st_recompute_parse(const char *s, st_recompute *out);

typedef struct st_train_cfg {
    int dp, tp, pp, cp, ep;  /* dp * tp * pp * cp = GPUs; ep divides dp * cp */
    int sp;                  /* Megatron sequence parallelism (needs tp > 1) */
    int zero;                /* 0..3 (3 = FSDP full sharding) */
    st_pp_sched sched;
    int chunks;              /* interleaved: model chunks per stage (v) */
    long long microbatches;  /* per iteration per pipeline (gradient accumulation) */
    long long global_batch;  /* sequences per iteration */
    long long seq;
    st_dtype dtype;
    st_recompute recompute;
    int lora_rank;           /* 0: full fine-tuning / pre-training */
    double moe_imbalance;    /* busiest expert's load over the mean (>= 1) */
    int flash;               /* FlashAttention instead of eager attention */
    int fa3;                 /* with flash: FlashAttention-3 (Hopper) instead of -2 */
    int fused;               /* compiled / fused kernels (compose fused mode) */
    int torch_ver;           /* the PyTorch release (st_kernel.torch_ver; 0: the table's, 2.1) */
    int isolated;            /* 1: tensor-core kernels at boost, as timed alone; 0 (default): at
                              * the board's sustained power limit (st_kernel.sustained) */
    double bucket_bytes;     /* DP gradient bucket (default 25 MiB) */
} st_train_cfg;

/* Bytes a trainable parameter's gradient and AdamW state take when
 * training in t: FP32 and TF32 (a math mode) keep FP32 gradients and m, v
 * (4, 8); 16-bit and FP8 training keep 16-bit gradients and FP32 m, v and
 * master weights (2, 12: the ZeRO paper's mixed-precision accounting). */
void st_train_state_bytes(st_dtype t, double *grad, double *opt);

/* One step's memory on one GPU (strata eval, and GPU sweeps' memory
 * metric and fit): the weights (the FP8 and INT8 recipes keep embeddings
 * and the LM head in 16 bits); training a transformer, what strata train
 * counts on one GPU (gradients, optimizer states, activations); training
 * another model, gradients and AdamW states and every forward output of
 * ops; inference, a decoder's KV cache and, at the peak, the largest
 * operator's live tensors (ops; NULL leaves them out). The foreach AdamW
 * step's temporary (4 bytes a parameter) counts where it outgrows the
 * activations it replaces at the peak. recompute and fused
 * as the compose options; coef prices the training layer (NULL: the
 * non-transformer rule). activations_counted: all of a training step's. */
typedef struct st_step_mem {
    double total, weights, kv_cache, states, activations, capacity; /* states: gradients and optimizer */
    int activations_counted, fits;
} st_step_mem;
void st_step_memory(const st_model *m, const st_gpu *g, const st_gen_opts *o, int recompute, int fused,
                    const st_gpu_coef *coef, const st_oplist *ops, st_step_mem *out);

/* dp = GPUs, everything else 1, 1F1B, 1 microbatch, the model's dtype. */
void st_train_cfg_default(st_train_cfg *c, const st_model *m, int gpus);
/* The microbatch and global-batch defaults `strata train` and training
 * sweeps share, for k->pp and k->dp set: mbs and gb as given (0: unset);
 * no gradient accumulation without PP; with PP microbatches of one sequence
 * (global batch / dp), or 4 x PP of them when no batch is given; the global
 * batch dp x microbatches when not given. */
void st_train_default_batches(st_train_cfg *k, long long mbs, long long gb);

typedef struct st_train_mem {
    double weights, grads, optimizer, activations, logits, buffers, total, capacity;
    int oom;
    double inflight; /* microbatches in flight on the stage (simulated) */
} st_train_mem;

typedef struct st_train_result {
    double iteration_s, lo_s, hi_s;
    double mfu, tokens_per_s;
    double memory_per_gpu_bytes;
    double bubble_fraction;
    double comm_s;       /* communication on the critical path (exposed) */
    double comm_total_s; /* all communication one GPU takes part in */
    /* parts */
    double fwd_s, bwd_s;          /* one microbatch, the busiest stage, comm included */
    double tp_s, cp_s, ep_s, pp_s;/* per iteration, exposed, busiest stage */
    double cp_all_s;              /* CP's K/V ring per iteration, all of it (mostly hidden) */
    double dp_s, dp_exposed_s;    /* gradient reduction: total and exposed */
    double zero_s;                /* ZeRO weight gathers, exposed */
    double optimizer_s;
    double pipeline_s;            /* end of the last backward */
    double model_flops;           /* per iteration, all GPUs: causal attention's unmasked pairs, no recompute, no frozen weight gradients */
    double hw_flops;              /* executed: what the chosen kernels compute (eager attention's
                                   * whole score square) plus the recomputed forward */
    double tflops_per_gpu;        /* model FLOPs / (iteration x GPUs), in TFLOP/s */
    double hw_tflops_per_gpu;     /* executed FLOPs / (iteration x GPUs), in TFLOP/s */
    long long stage_layers_min, stage_layers_max; /* layers per virtual pipeline stage */
    double dp_contention;         /* DP comm slow-down from concurrent TP (simulated) */
    long long micro_batch;        /* sequences per microbatch */
    st_train_mem mem;
    int gpus;
    int sustained;                /* tensor-core kernels at the board's measured power limit */
    /* --trace: forward/backward tasks written and in the schedule (each
     * stage keeps its first ST_TRAIN_TRACE_MAX_TASKS / PP); 0 without one */
    long long trace_tasks, trace_tasks_total;
} st_train_result;

/* Layers on virtual pipeline stage (model chunk) vs (0..V-1) when L layers
 * split over V: L / V each and one more on L % V of them. The stages left
 * short are the end ones, taken last, first, second-to-last, second, ...,
 * since they also carry the embedding and the LM head. Llama 3 405B trains
 * its 126 layers on 16 stages of 8 one-layer chunks whose first holds only
 * the embedding and whose last only the head (Llama 3 paper, Sec. 3.3.2):
 * 126 over 128 gives 0 at both ends and 1 elsewhere, 7 layers on the first
 * and last devices. 0 when vs is out of range. */
long long st_pipeline_stage_layers(long long L, long long V, long long vs);

/* The rules a configuration's options break by themselves, whatever the
 * model and cluster (SP without TP, CP without fused attention, ZeRO-3
 * with PP, a global batch that does not split, ...): 0, or ST_EINVAL with
 * the rule and the fix. st_train_check makes these checks first. */
int st_train_check_options(const st_train_cfg *cfg, st_error *err);
/* Check a configuration against model and cluster: 0, or ST_EINVAL with
 * the rule it breaks and how to fix it. */
int st_train_check(const st_model *m, const st_cluster *c, const st_train_cfg *cfg, st_error *err);

/* The checks that hold for a whole search: the GPUs fit the cluster, the
 * sequence fits the model. 0, or ST_EINVAL saying which. */
int st_train_check_scope(const st_model *m, const st_cluster *c, long long gpus, long long seq, st_error *err);
/* 1 when pp pipeline stages of `stage` GPUs each (TP x CP x DP, Megatron's
 * rank order) straddle node_gpus-GPU nodes: a stage over a node that is not
 * whole nodes, or a smaller stage that crosses a node boundary. */
int st_train_stages_straddle(long long stage, long long pp, int node_gpus);

/* Evaluate one iteration. trace (may be NULL): a Chrome/Perfetto trace of
 * the iteration is written there. */
int st_train_eval(const st_model *m, const st_cluster *c, const st_gpu_coef *coef, const st_train_cfg *cfg,
                  st_train_result *r, FILE *trace, st_error *err);

/* A table shared by evaluations of one model on one cluster (a plan search)
 * so that the simulated DP/TP contention of a shape is computed once; safe
 * to share between threads. NULL from new when out of memory (evaluations
 * then go without it). */
typedef struct st_train_memo st_train_memo;
st_train_memo *st_train_memo_new(void);
void st_train_memo_free(st_train_memo *m);
/* st_train_eval with a memo (may be NULL): the same results. */
int st_train_eval_memo(const st_model *m, const st_cluster *c, const st_gpu_coef *coef, const st_train_cfg *cfg,
                       st_train_result *r, FILE *trace, st_train_memo *memo, st_error *err);

/* The schedule alone, for stages of equal forward time f and backward time
 * b: the bubble (idle share of the busiest stage; the send/recv between
 * stages is communication, not bubble) and the most microbatches in flight
 * on any stage. */
int st_pipeline_sim(const st_train_cfg *cfg, double f, double b, double *bubble, double *inflight, st_error *err);

/* ---- plan search ---------------------------------------------------------- */
typedef struct st_plan_point {
    st_train_cfg cfg;
    st_train_result r;
    int pareto; /* on the time-memory front (among those that fit) */
} st_plan_point;

typedef struct st_plan_opts {
    int gpus;
    long long global_batch, seq;
    st_dtype dtype;
    int flash, fa3, lora_rank, threads;
    int max_tp, max_pp;     /* 0: no limit */
    int torch_ver;          /* the PyTorch release every configuration is priced for */
    int isolated;           /* st_train_cfg.isolated for every configuration */
    /* called from the calling thread, at most every progress_every_s
     * seconds while configurations are evaluated (NULL: none); done counts
     * the evaluated ones of total */
    void (*progress)(void *ctx, size_t done, size_t total, double elapsed_s);
    void *progress_ctx;
    double progress_every_s;
} st_plan_opts;

/* Enumerate valid (DP, TP, PP, SP, CP, EP, microbatch size, recompute, ZeRO)
 * configurations, evaluate them on `threads` threads (results identical for
 * any count), sort by iteration time (those that fit first). */
int st_plan(const st_model *m, const st_cluster *c, const st_gpu_coef *coef, const st_plan_opts *o,
            st_plan_point **out, size_t *n, st_error *err);

#endif
