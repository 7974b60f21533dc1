/* strata serve: simulate LLM serving of a request stream (serve layer). */
#include "config.h"
#include "cli/cli.h"
#include "cli/serve_opts.h"
#include "serve/serve.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_command cmd_serve = {
    "serve",
    "serve MODEL [--gpu PRESET] [--cluster NODE] [--tp N --pp N --cp N --dp N --ep] [--sched S]\n"
    "                   [--max-num-seqs N] [--max-batched-tokens N] [--usage-context U] [--chunk N]\n"
    "                   [--block-size N] [--gpu-mem-util F] [--max-model-len N] [--num-gpu-blocks N]\n"
    "                   [--runtime-reserve SIZE] [--preempt recompute|swap] [--swap-space SIZE] [--route R]\n"
    "                   (--trace FILE | --qps Q --requests N --lengths SPEC [--arrival A --cv C]) [--trim]\n"
    "                   [--shared-prefix G:L] [--prefix-cache] [--no-reserve-full-isl] [--async-scheduling]\n"
    "                   [--spec-k K --spec-accept A --draft MODEL] [--dtype D] [--quant w4a16|w8a8|fp8]\n"
    "                   [--kv-dtype D] [--disagg P:D] [--colocate MODEL --share time|space]\n"
    "                   [--slo-ttft S --slo-tpot S] [--eager] [--attn auto|flash|flash3] [--seed N] [--coef FILE]\n"
    "                   [--per-request FILE.csv] [--trace-out FILE.json] [--json]",
    "Simulate serving a request stream: TTFT, TPOT, latency, throughput, KV cache, preemptions.",
    "  MODEL                 a decoder transformer workload (strata list --kind workload)\n"
    "  --gpu PRESET          GPU of every replica (default h100-sxm)\n"
    "  --cluster NODE        node or cluster preset for the links between GPUs (TP, PP, CP, EP,\n"
    "                        --disagg KV transfer, swap); default: the first node preset built\n"
    "                        from --gpu, when one is needed; a multi-node cluster must hold\n"
    "                        every replica's GPUs\n"
    "  --tp N, --pp N        tensor / pipeline parallel GPUs per replica (default 1)\n"
    "  --cp N                context parallel: N TP x PP groups share each sequence's tokens\n"
    "                        (ring attention for prefill, KV cache sharded by token; default 1)\n"
    "  --dp N                replicas (data parallel; default 1)\n"
    "  --ep                  expert parallelism over the DP x TP ranks (MoE; ranks run in lockstep)\n"
    "  --sched S             vllm (V1, default), vllm-v0, sarathi, orca, static\n"
    "  --max-num-seqs N      running requests per replica (default: vLLM's for the GPU, 1024 on\n"
    "                        GPUs of 70 GiB or more other than the A100, else 256)\n"
    "  --max-batched-tokens N  token budget per step (default: vLLM's, 8192 or 2048 alike)\n"
    "  --usage-context U     whose defaults those two take: serve (vllm serve, the default), llm\n"
    "                        (the offline LLM class: 1024 and 16384, else 256 and 8192) or\n"
    "                        engine (an engine built directly: 128 and 2048)\n"
    "  --chunk N             sarathi: token budget = chunk size (default 512)\n"
    "  --block-size N        KV block size in tokens (default 16)\n"
    "  --gpu-mem-util F      fraction of GPU memory for weights + activations + KV (default 0.9)\n"
    "  --max-model-len N     longest request (default: the model's context)\n"
    "  --num-gpu-blocks N    force the KV block count (vLLM's num_gpu_blocks_override)\n"
    "  --runtime-reserve SIZE  per-GPU memory charged besides weights and activations (default 0.7GiB)\n"
    "  --swap-space SIZE     --preempt swap: host memory per GPU for swapped KV blocks (vLLM V0's\n"
    "                        swap_space, default 4GiB); a swap-out past it is an error, as V0 aborts\n"
    "  --preempt MODE        recompute (default) or swap (vllm-v0; over the node's host link)\n"
    "  --route R             rr (round-robin), least (fewest outstanding requests), vllm\n"
    "                        (vLLM V1's data-parallel balancer: least 4 x waiting + running, from\n"
    "                        counts published every 100 ms) or auto (default: vllm under --sched\n"
    "                        vllm, rr otherwise)\n"
    "  --trace FILE          replay requests: JSONL (input_toks, output_toks, arrival_time) or\n"
    "                        CSV (arrived_at, num_prefill_tokens, num_decode_tokens)\n"
    "  --qps Q               mean arrival rate (requests/s), with --requests N and --lengths SPEC\n"
    "  --requests N          requests to generate (at most 10,000,000)\n"
    "  --arrival A           poisson (default) or gamma\n"
    "  --cv C                gamma: the gaps' coefficient of variation (1 = Poisson)\n"
    "  --lengths SPEC        fixed:IN,OUT  uniform:LO-HI,LO-HI  zipf:S,MAX_IN,MAX_OUT  trace:FILE\n"
    "  --shared-prefix G:L   requests share one of G prefixes of L tokens (prefix-caching workloads)\n"
    "  --prefix-cache / --no-prefix-cache   reuse cached prefix blocks (default on, as vLLM V1)\n"
    "  --no-reserve-full-isl  vllm: admit a waiting request on its next chunk's KV blocks, as vLLM\n"
    "                        before 0.19; by default (--reserve-full-isl) its whole prompt's\n"
    "                        blocks must fit (0.19's scheduler_reserve_full_isl)\n"
    "  --async-scheduling    vllm: schedule each batch as the step before it starts (vLLM 0.19's\n"
    "                        default), seeing arrivals and freed seats and blocks a step late;\n"
    "                        off by default (--no-async-scheduling): closer to the measured run\n"
    "  --spec-k K            speculative decoding: K draft tokens per step\n"
    "  --spec-accept A       per-token acceptance probability of the drafts (required with --spec-k)\n"
    "  --draft MODEL         draft model (default: a self-drafting head, one block + LM head)\n"
    "  --quant Q             none (default), w4a16, w8a8 or fp8 weights (block GEMMs)\n"
    "  --dtype D             auto (default: the checkpoint's 16-bit type, as vLLM's), fp16 or bf16\n"
    "                        for the activations and unquantised weights\n"
    "  --kv-dtype D          auto (the model's dtype, default; bf16 is taken as auto) or fp8 for the\n"
    "                        KV cache\n"
    "  --disagg P:D          disaggregated serving: P prefill and D decode replicas (KV moves\n"
    "                        over the cluster link)\n"
    "  --colocate MODEL      serve another model on the same GPUs (repeatable, up to 3); requests\n"
    "                        alternate between the models; memory split evenly\n"
    "  --share time|space    co-located compute: time-sliced steps (default) or a spatial split\n"
    "  --slo-ttft S, --slo-tpot S  SLOs for goodput (seconds)\n"
    "  --eager               price steps without CUDA graphs (vLLM --enforce-eager)\n"
    "  --attn A              auto (default: FlashAttention-3 on Hopper, FlashAttention-2 elsewhere,\n"
    "                        as vLLM picks), flash (FlashAttention-2) or flash3 (FlashAttention-3,\n"
    "                        Hopper only); before Ampere vLLM runs the memory-efficient kernel\n"
    "                        (xFormers), priced alike (JSON attention: memory-efficient)\n"
    "  --seed N              random seed (default 42): arrivals, lengths, acceptance\n"
    "  --per-request FILE    per-request CSV\n"
    "  --trace-out FILE      Chrome/Perfetto trace of the steps (first 200,000), and of each\n"
    "                        request's queued, prefill and decode spans\n"
    "  --trim                cut requests longer than the context (--max-model-len, else the\n"
    "                        model's) to fit: prompt and output give up the excess in proportion,\n"
    "                        as VIDUR's trace length generator does; without it, an error\n"
    "  --coef FILE           GPU coefficient table (default calibration/gpu-kernels.yaml)\n"
    "  --json                machine-readable: ttft_s, tpot_s, itl_s, latency_s, queue_s (mean, p50,\n"
    "                        p90, p95, p99, max), throughput_tok_s, preemptions,\n"
    "                        resume_cached_tokens, kv_blocks,\n"
    "                        max_concurrency, trimmed_requests, models[] (co-located: each\n"
    "                        model's ttft_s, tpot_s, latency_s), ...\n",
    run,
    "colocate",
};

static void dist_text(const char *name, const st_dist *d, FILE *o)
{
    char m[32], a[32], b[32], c[32];
    if (d->n == 0) { /* TPOT when every request made one token: undefined */
        fprintf(o, "  %-10s -\n", name);
        return;
    }
    cli_secs(m, sizeof m, d->mean);
    cli_secs(a, sizeof a, d->p50);
    cli_secs(b, sizeof b, d->p90);
    cli_secs(c, sizeof c, d->p99);
    fprintf(o, "  %-10s mean %-11s p50 %-11s p90 %-11s p99 %s\n", name, m, a, b, c);
}

static void dist_json(st_json *j, const char *key, const st_dist *d)
{
    if (d->n == 0) { /* no sample (TPOT of one-token outputs): null, not 0 */
        st_json_null(j, key);
        return;
    }
    st_json_begin_object(j, key);
    st_json_number(j, "mean", d->mean);
    st_json_number(j, "p50", d->p50);
    st_json_number(j, "p90", d->p90);
    st_json_number(j, "p95", d->p95);
    st_json_number(j, "p99", d->p99);
    st_json_number(j, "max", d->max);
    st_json_end_object(j);
}

/* The longest request a replica takes: --max-model-len, else the context. */
static long long max_len(const st_serve_cfg *c)
{
    long long l = c->max_model_len > 0 ? c->max_model_len : c->model->tf.max_seq;
    return l > 0 ? l : 1;
}

/* Each co-located model's own TTFT, TPOT and latency. */
/* the main model and up to three co-located ones (st_serve_cfg.colocated) */
#define MAX_MODELS (1 + (int)(sizeof ((st_serve_cfg *)0)->colocated / sizeof ((st_serve_cfg *)0)->colocated[0]))
typedef struct model_stats {
    int n_models; /* 0: not co-located */
    st_dist ttft[MAX_MODELS], tpot[MAX_MODELS], e2e[MAX_MODELS];
    size_t n[MAX_MODELS];
} model_stats;

static int model_stats_of(const st_serve_cfg *c, const st_serve_result *r, model_stats *ms)
{
    memset(ms, 0, sizeof *ms);
    if (c->n_colocated <= 0)
        return 0;
    ms->n_models = c->n_colocated + 1;
    for (int m = 0; m < ms->n_models && m < MAX_MODELS; m++)
        if (st_serve_model_dists(r, m, &ms->ttft[m], &ms->tpot[m], &ms->e2e[m], &ms->n[m]))
            return ST_ENOMEM;
    return 0;
}

static const char *model_id(const st_serve_cfg *c, int m)
{
    return m ? c->colocated[m - 1]->id : c->model->id;
}

static void model_stats_json(st_json *j, const st_serve_cfg *c, const model_stats *ms)
{
    if (!ms->n_models)
        return;
    st_json_begin_array(j, "models");
    for (int m = 0; m < ms->n_models; m++) {
        st_json_begin_object(j, NULL);
        st_json_string(j, "model", model_id(c, m));
        st_json_int(j, "requests", (long long)ms->n[m]);
        dist_json(j, "ttft_s", &ms->ttft[m]);
        dist_json(j, "tpot_s", &ms->tpot[m]);
        dist_json(j, "latency_s", &ms->e2e[m]);
        st_json_end_object(j);
    }
    st_json_end_array(j);
}

/* a time, or "-" for a distribution without samples */
static void dist_secs(char *buf, size_t n, const st_dist *d, double v)
{
    if (d->n == 0)
        snprintf(buf, n, "-");
    else
        cli_secs(buf, n, v);
}

static void model_stats_text(FILE *o, const st_serve_cfg *c, const model_stats *ms)
{
    for (int m = 0; m < ms->n_models; m++) {
        char a[32], b[32], d[32], e[32];
        dist_secs(a, sizeof a, &ms->ttft[m], ms->ttft[m].mean);
        dist_secs(b, sizeof b, &ms->ttft[m], ms->ttft[m].p99);
        dist_secs(d, sizeof d, &ms->tpot[m], ms->tpot[m].mean);
        dist_secs(e, sizeof e, &ms->tpot[m], ms->tpot[m].p99);
        fprintf(o, "  %-10s %zu requests: TTFT mean %s p99 %s, TPOT mean %s p99 %s\n", model_id(c, m), ms->n[m],
                a, b, d, e);
    }
}

void cli_serve_json(st_json *j, const st_serve_cfg *c, const st_serve_result *r)
{
    st_json_string(j, "model", c->model->id);
    st_json_string(j, "gpu", c->gpu->id);
    if (c->cluster)
        st_json_string(j, "cluster", c->cluster->id);
    st_json_string(j, "sched", st_sched_name(c->sched));
    st_json_string(j, "dtype", st_dtype_name(st_serve_dtype(c))); /* activations and 16-bit weights */
    st_json_int(j, "tp", c->tp);
    st_json_int(j, "pp", c->pp);
    st_json_int(j, "cp", c->cp);
    st_json_int(j, "dp", c->dp);
    st_json_int(j, "ep", c->ep);
    st_json_int(j, "gpus", r->gpus);
    st_json_string(j, "usage_context", st_usage_name(c->usage));
    st_json_int(j, "max_num_seqs", c->max_num_seqs);
    st_json_int(j, "max_batched_tokens", c->max_batched_tokens);
    st_json_int(j, "block_size", c->block_size);
    st_json_string(j, "quant", st_quant_name(c->quant));
    st_json_string(j, "attention", st_serve_fa3(c) ? "flash3" : st_gpu_fa2(c->gpu) ? "flash" : "memory-efficient");
    st_json_int(j, "requests", (long long)r->n_requests);
    dist_json(j, "ttft_s", &r->ttft);
    dist_json(j, "tpot_s", &r->tpot);
    dist_json(j, "itl_s", &r->itl);
    dist_json(j, "latency_s", &r->e2e);
    dist_json(j, "queue_s", &r->queue);
    st_json_number(j, "duration_s", r->duration_s);
    st_json_number(j, "throughput_tok_s", r->throughput_tok_s);
    st_json_number(j, "throughput_total_tok_s", r->throughput_total_tok_s);
    st_json_number(j, "throughput_req_s", r->throughput_req_s);
    st_json_number(j, "goodput_req_s", r->goodput_req_s);
    st_json_number(j, "slo_attainment", r->slo_attainment);
    st_json_int(j, "preemptions", r->preemptions);
    st_json_int(j, "resume_cached_tokens", r->resume_cached_tokens);
    st_json_int(j, "steps", r->steps);
    st_json_int(j, "kv_blocks", r->kv_blocks);
    st_json_int(j, "kv_tokens", r->kv_tokens);
    /* vLLM's "maximum concurrency for N tokens per request": requests of the
     * longest length the KV cache of one replica holds at once */
    st_json_number(j, "max_concurrency", (double)r->kv_tokens / (double)max_len(c));
    st_json_number(j, "kv_peak_fraction", r->kv_peak_frac);
    st_json_number(j, "weights_bytes_per_gpu", r->weights_bytes_per_gpu);
    st_json_number(j, "kv_bytes_per_block", r->kv_bytes_per_block);
    st_json_number(j, "activation_reserve_bytes", r->activation_reserve_bytes);
    st_json_number(j, "memory_per_gpu_bytes", r->memory_per_gpu_bytes);
    st_json_number(j, "prefix_hit_ratio", r->prefix_hit_ratio);
    if (c->spec_k > 0) {
        st_json_number(j, "spec_tokens_per_step", r->spec_tokens_per_step);
        st_json_number(j, "spec_expected_tokens_per_step", st_spec_expected_tokens(c->spec_k, c->spec_accept));
    }
    if (c->prefill_replicas > 0)
        st_json_number(j, "kv_transfer_s", r->kv_transfer_s);
    st_json_number(j, "mfu", r->mfu);
    st_json_number(j, "busy_fraction", r->busy_frac);
    st_json_begin_array(j, "kv_usage");
    for (size_t i = 0; i < r->n_kv; i++) {
        st_json_begin_object(j, NULL);
        st_json_number(j, "t", r->kv[i].t);
        st_json_number(j, "used", r->kv[i].used);
        st_json_int(j, "running", r->kv[i].running);
        st_json_int(j, "waiting", r->kv[i].waiting);
        st_json_end_object(j);
    }
    st_json_end_array(j);
}

static void print_text(const st_serve_cfg *c, const st_serve_result *r, FILE *o)
{
    char a[32], b[32], d[32];
    fprintf(o, "%s on %s", c->model->name, c->gpu->name);
    if (c->tp * c->pp * c->cp > 1 || c->dp > 1) {
        fprintf(o, "  (TP %d, PP %d", c->tp, c->pp);
        if (c->cp > 1)
            fprintf(o, ", CP %d", c->cp);
        fprintf(o, ", DP %d%s)", c->dp, c->ep > 1 ? ", EP" : "");
    }
    /* sarathi's token budget per step is its chunk */
    fprintf(o, "\n  scheduler  %s, max_num_seqs %d, %s %lld, block %d, %s%s\n", st_sched_name(c->sched),
            c->max_num_seqs, c->sched == ST_SCHED_SARATHI ? "chunk (token budget)" : "max_batched_tokens",
            c->sched == ST_SCHED_SARATHI ? c->chunk : c->max_batched_tokens, c->block_size,
            c->quant ? st_quant_name(c->quant) : st_dtype_name(st_serve_dtype(c)),
            st_serve_fa3(c) ? ", FlashAttention-3"
            : st_gpu_fa2(c->gpu) ? ", FlashAttention-2"
                                 : ", memory-efficient attention (FlashAttention-2 needs Ampere or later)");
    cli_bytes(a, sizeof a, r->weights_bytes_per_gpu);
    cli_bytes(b, sizeof b, r->activation_reserve_bytes);
    fprintf(o, "  KV cache   %lld blocks (%lld tokens) per replica; weights %s per GPU, activations %s\n",
            r->kv_blocks, r->kv_tokens, a, b);
    cli_bytes(a, sizeof a, r->memory_per_gpu_bytes);
    fprintf(o, "  memory     %s per GPU at the peak (weights, reserves, KV in use%s)\n", a,
            c->n_colocated > 0 ? "; every co-located model" : c->spec_k > 0 && c->draft ? "; the draft model" : "");
    cli_secs(d, sizeof d, r->duration_s);
    fprintf(o, "  requests   %zu in %s, %lld steps, %lld preemptions", r->n_requests, d, r->steps, r->preemptions);
    if (r->resume_cached_tokens > 0)
        fprintf(o, " (%lld tokens still cached on resuming)", r->resume_cached_tokens);
    fprintf(o, ", peak KV use %.1f%%\n\n", 100.0 * r->kv_peak_frac);
    dist_text("TTFT", &r->ttft, o);
    dist_text("TPOT", &r->tpot, o);
    dist_text("ITL", &r->itl, o);
    dist_text("latency", &r->e2e, o);
    dist_text("queueing", &r->queue, o);
    fprintf(o, "\n  throughput %.1f output tok/s, %.1f total tok/s, %.3f req/s\n", r->throughput_tok_s,
            r->throughput_total_tok_s, r->throughput_req_s);
    if (c->slo_ttft_s > 0 || c->slo_tpot_s > 0)
        fprintf(o, "  goodput    %.3f req/s (%.1f%% meet the SLOs)\n", r->goodput_req_s, 100.0 * r->slo_attainment);
    if (r->prefix_hit_ratio > 0)
        fprintf(o, "  prefix     %.1f%% of prompt tokens from the cache\n", 100.0 * r->prefix_hit_ratio);
    if (c->spec_k > 0)
        fprintf(o, "  spec       %.3f tokens per verify step (closed form %.3f)\n", r->spec_tokens_per_step,
                st_spec_expected_tokens(c->spec_k, c->spec_accept));
    if (c->prefill_replicas > 0) {
        cli_secs(a, sizeof a, r->kv_transfer_s);
        fprintf(o, "  disagg     %d prefill + %d decode replicas, KV transfer %s per request\n",
                c->prefill_replicas, c->decode_replicas, a);
    }
    fprintf(o, "  GPUs       %d, busy %.1f%%, MFU %.1f%%\n", r->gpus, 100.0 * r->busy_frac, 100.0 * r->mfu);
}

static int run(int argc, char **argv)
{
    const cli_command *cmd = &cmd_serve;
    cli_serve_opts so;
    int help = 0;
    int rc = cli_serve_parse(cmd, argc, argv, &so, &help);
    if (help) {
        cli_print_help(cmd, stdout);
        return 0;
    }
    if (rc)
        return rc;
    if (optind != argc - 1) {
        return cli_usage_error(cmd, optind >= argc ? "missing MODEL (try: strata serve llama3.1-8b --gpu h100-sxm ...)"
                                                   : "one MODEL only");
    }
    /* an output must not land on a file this run reads */
    const char *outs[2][2] = {{"--per-request", so.per_request}, {"--trace-out", so.trace_out}};
    const char *ins[][2] = {{"MODEL", argv[optind]},
                            {"--trace", so.trace},
                            {"--lengths", so.lengths && !strncmp(so.lengths, "trace:", 6) ? so.lengths + 6 : NULL},
                            {"--gpu", so.gpu},
                            {"--cluster", so.cluster},
                            {"--coef", so.coef},
                            {"--draft", so.draft},
                            {"--colocate", so.colocate[0]},
                            {"--colocate", so.colocate[1]},
                            {"--colocate", so.colocate[2]}};
    for (int i = 0; i < 2; i++)
        for (size_t j = 0; j < sizeof ins / sizeof ins[0]; j++)
            if ((rc = cli_out_guard(cmd, outs[i][0], outs[i][1], ins[j][0], ins[j][1])))
                return rc;
    st_error err = {0};
    cli_serve_setup su;
    rc = cli_serve_setup_load(&so, argv[optind], &su, &err);
    for (int i = 0; i < 2 && !rc && su.have_cluster; i++)
        if ((rc = cli_out_guard_cluster(cmd, outs[i][0], outs[i][1], so.cluster, &su.cluster))) {
            cli_serve_setup_free(&su);
            return rc;
        }
    /* both files are written, or neither */
    cli_out outf[2];
    memset(outf, 0, sizeof outf);
    cli_out *per = &outf[0], *tr = &outf[1];
    if (!rc && so.per_request)
        rc = cli_out_open(per, so.per_request, &err);
    if (!rc && so.trace_out) {
        rc = cli_out_open(tr, so.trace_out, &err);
        if (!rc) {
            su.cfg.trace_out = tr->f;
            fputs("{\"traceEvents\":[\n", tr->f);
        }
    }
    st_serve_result res;
    memset(&res, 0, sizeof res);
    if (!rc)
        rc = st_serve_run(&su.cfg, &su.reqs, &res, &err);
    if (!rc && per->f && (rc = st_serve_write_requests(per->f, &res)))
        st_error_set(&err, rc, "writing %s failed (disk full, or the device refused the bytes); nothing written",
                     so.per_request);
    long long req_written = 0;
    if (tr->f && !rc) {
        req_written = st_serve_write_request_trace(tr->f, &res, su.cfg.trace_max_events, res.trace_steps > 0);
        fprintf(tr->f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"steps_written\":%lld,\"steps_total\":%lld,"
                       "\"steps_max\":%lld,\"requests_written\":%lld,\"requests_total\":%zu}}\n",
                res.trace_steps, res.trace_steps_total, su.cfg.trace_max_events, req_written, res.n_requests);
    }
    if (cli_out_close_all(outf, 2, rc == 0, rc ? NULL : &err) && rc == 0)
        rc = err.code ? err.code : ST_EIO;
    /* settings vLLM takes as given though they do not match the hardware
     * or the model: simulated as given, said on stderr */
    /* the pool vLLM allocates up front, not the blocks in use at the peak */
    double kv_pool = (double)res.kv_blocks * res.kv_bytes_per_block;
    double pool = res.memory_per_gpu_bytes + (1 - res.kv_peak_frac) * kv_pool; /* the blocks not in use too */
    if (!rc && so.num_gpu_blocks > 0 && pool > su.cfg.gpu->mem_bytes)
        fprintf(stderr, "strata serve: note: --num-gpu-blocks %lld allocates %.3g GiB on each GPU, more than its %.1f "
                        "GiB; vLLM takes the override as given, and so does this run\n",
                so.num_gpu_blocks, pool / 1073741824.0, su.cfg.gpu->mem_bytes / 1073741824.0);
    if (!rc && so.max_model_len > su.model.tf.max_seq)
        fprintf(stderr, "strata serve: note: --max-model-len %lld is beyond %s's %lld-token context; vLLM refuses it "
                        "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (a RoPE-scaled model); positions past it are priced "
                        "like the others\n",
                so.max_model_len, su.model.id, su.model.tf.max_seq);
    model_stats ms;
    if (!rc && model_stats_of(&su.cfg, &res, &ms))
        rc = st_error_set(&err, ST_ENOMEM, "out of memory");
    if (!rc) {
        if (so.json) {
            st_json j;
            st_json_init(&j, stdout, 1);
            st_json_begin_object(&j, NULL);
            cli_serve_json(&j, &su.cfg, &res);
            st_json_int(&j, "trimmed_requests", (long long)su.trimmed);
            model_stats_json(&j, &su.cfg, &ms);
            if (so.trace_out)
                cli_json_trace(&j, "trace_out", so.trace_out, "steps", res.trace_steps, res.trace_steps_total);
            st_json_end_object(&j);
            st_json_finish(&j);
        } else {
            print_text(&su.cfg, &res, stdout);
            if (su.trimmed)
                printf("  trimmed    %zu request%s cut to the context (--trim)\n", su.trimmed,
                       su.trimmed == 1 ? "" : "s");
            if (ms.n_models) {
                printf("\n  per model\n");
                model_stats_text(stdout, &su.cfg, &ms);
            }
            if (so.trace_out && res.trace_steps < res.trace_steps_total)
                printf("  trace      %s holds the first %lld of the run's %lld steps\n", so.trace_out,
                       res.trace_steps, res.trace_steps_total);
        }
    }
    st_serve_result_free(&res);
    cli_serve_setup_free(&su);
    if (rc)
        return cli_fail(&err);
    return 0;
}
