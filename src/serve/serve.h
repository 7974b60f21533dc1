/*
 * serve: event-driven simulation of LLM serving (layer 5).
 *
 * Requests arrive (Poisson, gamma with a coefficient of variation, or a
 * replayed trace), are routed to one of the replicas (round-robin or least
 * outstanding) and are scheduled there, iteration by iteration, by one of
 *   vllm     vLLM V1: continuous batching; running requests first (decodes
 *            and unfinished prefill chunks), then waiting ones, under a
 *            token budget (max_num_batched_tokens) and max_num_seqs; long
 *            prompts are chunked to fit the budget;
 *   vllm-v0  vLLM V0's default: a step is either all prefills (whole
 *            prompts, admitted while budget, seats and blocks allow) or all
 *            decodes; waiting prompts go first;
 *   sarathi  Sarathi-Serve's stall-free batching: decodes first, then
 *            prefill chunks, under a token budget equal to the chunk size
 *            (Agrawal et al., OSDI 2024); vLLM V1 adopted this policy, so it
 *            differs from `vllm` in its budget;
 *   orca     Orca's iteration-level scheduling: whole prompts join the
 *            running batch at any iteration, and each admitted request
 *            reserves KV slots for its prompt plus max_model_len (Orca
 *            allocates for the maximum length: Yu et al., OSDI 2022);
 *   static   FasterTransformer-style static batching: a batch of up to
 *            max_num_seqs requests is formed when the replica is idle and
 *            runs, padded to its longest prompt and longest output, until
 *            all of them finish.
 *
 * KV cache: paged, block_size tokens a block; the block count follows
 * vLLM's memory profiling: gpu_mem_util x the memory CUDA reports - weights - the peak
 * activations of a max_num_batched_tokens forward (and the sampler's logits
 * over max_num_seqs) - a runtime reserve (CUDA context, library workspaces,
 * CUDA-graph pool), over the bytes of one block on one GPU. A running
 * request that cannot get a block preempts the lowest-priority running
 * request (the latest arrival): recompute drops its KV and re-runs its
 * prompt and output later; swap copies its blocks to host memory over the
 * host link and back before it resumes (vllm-v0 only: V1 recomputes).
 *
 * Iteration time: the GPU and compose layers price the step, with every
 * operand cold in DRAM (st_kernel.cold), in compiled mode (vLLM's
 * torch.compile + CUDA graphs): the non-attention operators at the step's
 * token count, the LM head at its sequence count (both memoised), the
 * attention of each prefill chunk against its context and one decode
 * attention kernel over the decoding requests' KV lengths; TP adds two
 * all-reduces of the step's activations per block, EP an all-to-all
 * dispatch and combine per MoE block (net layer); PP splits the blocks in
 * stages and keeps up to pp batches in flight.
 *
 * Production techniques: speculative decoding (a draft model or a
 * self-drafting head proposes k tokens, the target verifies k+1 in one
 * step, each accepted with probability alpha, so a step yields
 * (1-alpha^(k+1))/(1-alpha) tokens on average, sampled per request);
 * prefix caching (full blocks of a shared prefix are reused while cached,
 * evicted LRU under pressure); quantization (W4A16, W8A8, FP8 weights and
 * optionally an FP8 KV cache: memory and kernel times both change);
 * disaggregated prefill/decode pools (KV moves over the cluster link); and
 * co-location of several models on the same GPUs (memory partitioned;
 * compute time-sliced or spatially shared).
 *
 * Determinism: the simulation is sequential; every random draw comes from a
 * splitmix64 stream keyed by (seed, request, purpose), so a run is
 * bit-identical for the same inputs and seed.
 */
#ifndef STRATA_SERVE_H
#define STRATA_SERVE_H

#include <stdio.h>

#include "gpu/gpu.h"
#include "workload/workload.h"

/* purposes of the random streams (st_rng_init) */
enum { ST_SERVE_RNG_ARRIVAL = 1, ST_SERVE_RNG_LENGTH, ST_SERVE_RNG_SPEC };

typedef enum st_sched {
    ST_SCHED_VLLM = 0,
    ST_SCHED_VLLM_V0,
    ST_SCHED_SARATHI,
    ST_SCHED_ORCA,
    ST_SCHED_STATIC,
    ST_SCHED_COUNT
} st_sched;
const char *st_sched_name(st_sched s);
const char *st_sched_choices(void); /* "vllm, ..., orca or static" */
int st_sched_parse(const char *s, st_sched *out);

/* Request routing over the --dp replicas: round-robin; fewest outstanding
 * (routed, not finished); vLLM V1's data-parallel load balancer
 * (DPLBAsyncMPClient: the engine with the least 4 x waiting + running, from
 * counts its coordinator publishes every 100 ms, each request routed since
 * adding one waiting); auto: vllm under --sched vllm, rr otherwise. */
typedef enum st_route { ST_ROUTE_RR = 0, ST_ROUTE_LEAST, ST_ROUTE_VLLM, ST_ROUTE_AUTO } st_route;
const char *st_route_name(st_route r);
int st_route_parse(const char *s, st_route *out);

typedef enum st_preempt { ST_PREEMPT_RECOMPUTE = 0, ST_PREEMPT_SWAP } st_preempt;

/* vLLM's usage context, which picks its batch defaults (EngineArgs
 * get_batch_defaults): the OpenAI server (vllm serve), the offline LLM
 * class, or an engine built directly (AsyncLLM, LLMEngine.from_engine_args:
 * SchedulerConfig's own defaults) */
typedef enum st_usage { ST_USAGE_SERVE = 0, ST_USAGE_LLM, ST_USAGE_ENGINE, ST_USAGE_COUNT } st_usage;
const char *st_usage_name(st_usage u);
int st_usage_parse(const char *s, st_usage *out);

typedef enum st_quant { ST_QUANT_NONE = 0, ST_QUANT_W4A16, ST_QUANT_W8A8, ST_QUANT_FP8, ST_QUANT_COUNT } st_quant;
const char *st_quant_name(st_quant q);
const char *st_quant_choices(void); /* "none, w4a16, w8a8 or fp8" */
int st_quant_parse(const char *s, st_quant *out);

typedef enum st_share { ST_SHARE_TIME = 0, ST_SHARE_SPACE } st_share;

/* ---- requests ----------------------------------------------------------- */
typedef struct st_request {
    double arrival;      /* s */
    int in, out;         /* prompt and output tokens */
    int model;           /* which co-located model serves it (0 = the main one) */
    int prefix_group;    /* -1: no shared prefix */
    int prefix_len;      /* tokens of the prompt shared by its group */
    int line;            /* its line in a trace file (0: generated), for errors */
} st_request;

typedef struct st_reqset {
    size_t n;
    st_request *r; /* sorted by arrival */
} st_reqset;
void st_reqset_free(st_reqset *s);

typedef enum st_len_kind { ST_LEN_FIXED = 0, ST_LEN_UNIFORM, ST_LEN_ZIPF, ST_LEN_TRACE } st_len_kind;

/* A length distribution for prompt and output tokens:
 *   fixed:IN,OUT  uniform:IN_LO-IN_HI,OUT_LO-OUT_HI  zipf:S,MAX_IN,MAX_OUT
 *   trace:FILE    (lengths drawn with replacement from a JSONL or CSV trace) */
typedef struct st_lenspec {
    st_len_kind kind;
    int in_lo, in_hi, out_lo, out_hi;
    double zipf_s;
    st_reqset trace; /* ST_LEN_TRACE: the lengths */
} st_lenspec;
int st_lenspec_parse(const char *s, st_lenspec *out, st_error *err);
void st_lenspec_free(st_lenspec *l);

typedef struct st_arrivals {
    int gamma;     /* 0: Poisson */
    double qps;    /* mean rate */
    double cv;     /* gamma: coefficient of variation of the gaps */
    size_t n;
    unsigned long long seed;
    int prefix_groups; /* > 0: each request shares one of these prefixes */
    int prefix_len;
    int models;        /* co-located models: requests spread evenly over them */
} st_arrivals;

/* Generate requests from an arrival process and a length distribution. */
int st_requests_generate(const st_arrivals *a, const st_lenspec *l, st_reqset *out, st_error *err);
/* Read a trace: JSONL (input_toks, output_toks, arrival_time per line; as
 * vLLM benchmark dumps) or CSV (arrived_at, num_prefill_tokens,
 * num_decode_tokens; or the same without arrival times, then arrivals come
 * from `a` when given). Arrival times are shifted to start at 0. */
int st_requests_load(const char *path, st_reqset *out, st_error *err);

/* ---- engine ------------------------------------------------------------- */
typedef struct st_serve_cfg {
    const st_model *model;
    const st_gpu *gpu;
    const st_gpu_coef *coef;
    const st_cluster *cluster; /* links between GPUs (TP, EP, PP, KV transfer); NULL: one GPU */
    int tp, pp, dp, ep;        /* ep: 1 or the expert-parallel degree (= dp x tp in vLLM) */
    /* context parallelism: cp GPUs (each a TP x PP group) share every
     * sequence, split along its tokens. Prefill runs ring attention
     * (pass-KV: each rank's K/V blocks travel round the ring, overlapped with
     * the attention of the block in hand); the KV cache is sharded by token,
     * so a replica holds cp times the tokens; a decode step runs every
     * decoding token's dense layers on each rank, attention against the
     * rank's shard, and merges the partial outputs (an all-reduce of the
     * log-sum-exp and one of the outputs, per block). 1: none. */
    int cp;
    st_sched sched;
    int max_num_seqs;              /* 0: vLLM's default for the GPU (st_serve_resolve_batch) */
    long long max_batched_tokens;  /* 0: likewise */
    long long chunk;           /* sarathi: token budget = chunk size */
    int block_size;
    double gpu_mem_util;
    long long max_model_len;   /* 0: the model's max_seq */
    long long num_gpu_blocks;  /* > 0: override the computed block count */
    double runtime_reserve_bytes; /* per GPU (see serve.h top) */
    /* --preempt swap: vLLM V0's CPU swap space per GPU (swap_space, 4 GiB by
     * default); a swap-out that does not fit aborts the engine, as V0's
     * scheduler raises "Aborted due to the lack of CPU swap space" */
    double swap_space_bytes;
    st_preempt preempt;
    double watermark;          /* vllm-v0: keep this fraction of blocks free when admitting */
    st_route route;
    /* polled while the simulation runs (every 1024 events): nonzero stops
     * it with ST_ECANCELED (a cancelled sweep's serving point); NULL: never */
    const int *cancel;
    /* > 0: preemptions in a row without a token that stop the run as a
     * livelock (default ST_SERVE_MAX_STUCK in sim.c, 100,000) */
    long long max_stuck;
    st_usage usage; /* whose batch defaults (--usage-context) */
    int prefix_cache;
    /* vLLM 0.19's scheduler_reserve_full_isl (on by default): under the V1
     * scheduler a waiting request is admitted only when the blocks of its
     * whole sequence so far (prompt and any tokens it generated before a
     * preemption) fit, not just those of its first chunk */
    int reserve_full_isl;
    /* vLLM 0.19's async scheduling (on there by default for generation): the
     * batch queue schedules a step's successor as the step starts (sim.c,
     * build_v1). Off by default here: the measured run's TTFTs sit closer
     * to scheduling at the step's end (README, "Serving") */
    int async_sched;
    st_quant quant;
    int kv_fp8;
    /* attention kernel: 1 FlashAttention-3 (Hopper only), 0 FlashAttention-2,
     * -1 (the default) as vLLM picks it: FA3 on Hopper, FA2 elsewhere
     * (vllm/attention/utils/fa_utils.py, get_flash_attn_version) */
    int fa3;
    int dtype_set;  /* --dtype given: activations and 16-bit weights in dtype, else the checkpoint's */
    st_dtype dtype;
    /* speculative decoding */
    int spec_k;
    double spec_accept;
    const st_model *draft;     /* NULL with spec_k > 0: self-drafting head (one block + LM head) */
    int spec_ideal;            /* tests: draft free, verify priced as a plain decode */
    /* disaggregation: prefill_replicas > 0 splits the dp replicas */
    int prefill_replicas, decode_replicas;
    /* co-location */
    const st_model *colocated[3]; /* further models on the same GPUs */
    int n_colocated;
    st_share share;
    /* SLOs for goodput (0: unset) */
    double slo_ttft_s, slo_tpot_s;
    unsigned long long seed;
    /* output */
    FILE *trace_out;           /* Chrome trace JSON of the steps (may be NULL) */
    long long trace_max_events;
    /* engine-level timing of the iteration (0: compiled mode) */
    int eager;
} st_serve_cfg;

/* vLLM 0.19 engine defaults: vllm scheduler, max_num_seqs and
 * max_num_batched_tokens left to the GPU (0; st_serve_resolve_batch), block
 * 16, gpu_memory_utilization 0.9, prefix caching on, recompute preemption. */
void st_serve_cfg_default(st_serve_cfg *c);
/* vLLM's defaults for the OpenAI server (EngineArgs.get_batch_defaults,
 * usage context OPENAI_API_SERVER): on a GPU of 70 GiB or more that is not
 * an A100, 1024 sequences and 8,192 tokens a step; otherwise (the A100,
 * whose throughput a larger budget lowered, vLLM PR #17885, and smaller
 * GPUs) 256 and 2,048. */
void st_serve_batch_defaults(const st_gpu *g, int *max_num_seqs, long long *max_batched_tokens);
/* the same for a usage context: the LLM class takes 1024 and 16,384 on the
 * large GPUs, 256 and 8,192 elsewhere; an engine built directly 128 and
 * 2,048 on any GPU */
void st_serve_batch_defaults_for(const st_gpu *g, st_usage u, int *max_num_seqs, long long *max_batched_tokens);
/* Fill a 0 max_num_seqs or max_batched_tokens with st_serve_batch_defaults_for
 * c->gpu and c->usage. */
void st_serve_resolve_batch(st_serve_cfg *c);
/* Whether attention runs FlashAttention-3: cfg->fa3, or for -1 vLLM's choice on
 * cfg->gpu (FA3 on Hopper) */
int st_serve_fa3(const st_serve_cfg *c);

/* CP ranks per node of a replica's GPUs (laid out TP innermost, then CP):
 * cp on one node, else the node's GPUs / tp (at least 1, at most cp). */
int st_serve_cp_per_node(const st_serve_cfg *c);

/* ---- results ------------------------------------------------------------ */
typedef struct st_dist {
    double mean, p50, p90, p95, p99, max;
    size_t n;
} st_dist;

typedef struct st_kv_sample {
    double t;
    float used;    /* fraction of the KV blocks in use (replica 0 of model 0) */
    int running, waiting;
} st_kv_sample;

typedef struct st_req_out {
    double arrival, scheduled, first, done; /* s; scheduled: first step it ran in */
    int in, out, model, replica;
    int preemptions;
    int cached_tokens;  /* prompt tokens served from the prefix cache */
} st_req_out;

typedef struct st_serve_result {
    size_t n_requests, n_done;
    st_dist ttft, tpot, itl, e2e, queue;
    double duration_s;          /* first arrival to last completion */
    double throughput_tok_s;    /* output tokens / duration */
    double throughput_total_tok_s; /* prompt + output tokens / duration */
    double throughput_req_s;
    double goodput_req_s;       /* requests meeting both SLOs / duration */
    double slo_attainment;      /* fraction meeting both SLOs */
    long long preemptions;
    long long resume_cached_tokens; /* tokens preempted requests found still cached on resuming
                                       (vLLM V1 with prefix caching: not recomputed) */
    long long steps;
    long long kv_blocks;        /* per replica of model 0 */
    long long kv_tokens;
    double kv_peak_frac;        /* highest block use seen (model 0, replica 0) */
    double weights_bytes_per_gpu, kv_bytes_per_block, activation_reserve_bytes;
    /* what the busiest-sampled GPU holds at the run's peak: every model's
     * weights (co-located ones and a draft model included) and activation
     * reserve, the runtime reserve, and the KV blocks in use on it */
    double memory_per_gpu_bytes;
    double prefix_hit_ratio;    /* prompt tokens from cache / prompt tokens */
    double spec_tokens_per_step;/* emitted tokens per verify step (spec on) */
    double mfu;                 /* model FLOPs / (duration x GPUs x peak) */
    double busy_frac;           /* fraction of the duration the GPUs ran steps */
    double kv_transfer_s;       /* disaggregation: mean KV transfer per request */
    size_t n_kv;
    st_kv_sample *kv;           /* KV use over time (at most ST_SERVE_KV_SAMPLES) */
    st_req_out *req;            /* per request, in arrival order */
    int gpus;
    /* trace_out: steps written (the first trace_max_events) and run */
    long long trace_steps, trace_steps_total;
} st_serve_result;
#define ST_SERVE_KV_SAMPLES 2048
/* Most requests one generated stream may hold. Measured with llama2-7b on
 * a100-80gb-sxm, fixed:512,128 at 50 req/s: 1M requests took 151 MB and
 * 1.98 s, about 150 bytes each, so this cap is about 1.5 GB and 20 s; 1e8
 * took 13 GB. serve --requests (its help text states the cap), sweep's
 * 'requests' and st_requests_generate all stop here. */
#define ST_SERVE_MAX_REQUESTS 10000000LL
/* the longest span of arrivals a run takes, s (31.7 years): the simulator's
 * clock is a double of seconds, whose resolution there (0.12 us) stays well
 * under a step; a 1e14 s span left a request's TTFT to rounding */
#define ST_SERVE_MAX_SPAN_S 1e9
/* the longest line a trace may have: room for a long prompt's text beside
 * its counts, and a bound on a file without newlines */
#define ST_TRACE_LINE_MAX (256u << 20)

void st_serve_result_free(st_serve_result *r);

/* A fixed-size digest of a result for front ends: the distributions, TTFT
 * and TPOT histograms over log-spaced bins, and KV use over time. */
#define ST_SERVE_HIST 48
#define ST_SERVE_KV_POINTS 256
typedef struct st_serve_summary {
    st_dist ttft, tpot, itl, e2e, queue;
    double hist_lo[2], hist_hi[2];       /* [0] TTFT, [1] TPOT: bin edges span lo..hi (log) */
    unsigned hist[2][ST_SERVE_HIST];
    int n_kv;
    float kv_t[ST_SERVE_KV_POINTS], kv_used[ST_SERVE_KV_POINTS];
    int kv_running[ST_SERVE_KV_POINTS], kv_waiting[ST_SERVE_KV_POINTS];
    double throughput_tok_s, throughput_req_s, goodput_req_s, slo_attainment, duration_s;
    double prefix_hit_ratio, spec_tokens_per_step, mfu, kv_peak_frac;
    long long preemptions, kv_blocks;
    size_t n_requests;
} st_serve_summary;
void st_serve_summarize(const st_serve_result *r, st_serve_summary *out);

/* Check a configuration against the model and hardware (divisibility,
 * memory, dtype support); ST_EINVAL with a sentence naming the fix. */
int st_serve_check(const st_serve_cfg *c, st_error *err);

/* Run the simulation. */
int st_serve_run(const st_serve_cfg *c, const st_reqset *reqs, st_serve_result *out, st_error *err);

/* Per-request CSV. */
int st_serve_write_requests(FILE *f, const st_serve_result *r);
/* --trace-out's request track, written after the steps: each request's
 * life as Chrome/Perfetto async spans in its replica's process (category
 * request, id its index): the request from arrival to its last token, and
 * inside it queued (to the first step it ran in), prefill (to its first
 * token) and decode (to its last); the first `max` requests, after a comma
 * when `after` (events precede). Returns the requests written. */
long long st_serve_write_request_trace(FILE *f, const st_serve_result *r, long long max, int after);

/* The dtype a replica computes in: BF16 where the GPU has it (as vLLM
 * picks for BF16 checkpoints), else FP16 (V100, T4). */
st_dtype st_serve_dtype(const st_serve_cfg *c);

/* Distribution of a sample (sorted in place). */
void st_dist_of(double *v, size_t n, st_dist *out);
/* TTFT, TPOT (requests of two or more output tokens) and latency of the
 * requests of one model (0: the main one, i: the i-th co-located one; -1:
 * all), with a scratch array of n doubles; *count gets the requests. */
void st_serve_req_dists(const st_req_out *req, size_t n, int model, double *scratch, st_dist *ttft, st_dist *tpot,
                        st_dist *e2e, size_t *count);
/* The same over a result, allocating the scratch: ST_ENOMEM, or 0. */
int st_serve_model_dists(const st_serve_result *r, int model, st_dist *ttft, st_dist *tpot, st_dist *e2e,
                         size_t *n);

/* Expected tokens a speculative step yields: (1 - a^(k+1)) / (1 - a). */
double st_spec_expected_tokens(int k, double alpha);

#endif
