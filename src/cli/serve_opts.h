/* Options and set-up of `strata serve`, shared with `strata validate vllm`. */
#ifndef STRATA_CLI_SERVE_OPTS_H
#define STRATA_CLI_SERVE_OPTS_H

#include "cli/cli.h"
#include "serve/serve.h"

typedef struct cli_serve_opts {
    const char *gpu, *cluster, *sched, *trace, *lengths, *draft, *quant, *kv_dtype, *coef, *preempt, *route;
    const char *dtype; /* --dtype: auto (NULL), fp16 or bf16 */
    const char *attn;  /* --attn: flash (NULL) or flash3 */
    const char *usage; /* --usage-context: serve (NULL), llm or engine */
    const char *arrival, *per_request, *trace_out, *colocate[3], *share;
    int n_colocate;
    long long tp, pp, cp, dp, max_num_seqs, max_batched_tokens, chunk, block_size, max_model_len, num_gpu_blocks;
    long long requests, seed, spec_k, prefix_groups, prefix_len, disagg_p, disagg_d;
    double gpu_mem_util, qps, cv, spec_accept, slo_ttft, slo_tpot, runtime_reserve, swap_space;
    int ep, prefix_cache, json, eager, spec_accept_given, trim;
    int reserve_full_isl; /* --reserve-full-isl 1, --no-reserve-full-isl 0, else the default */
    int async_sched;      /* --async-scheduling 1, --no-async-scheduling 0 */
} cli_serve_opts;

void cli_serve_opts_init(cli_serve_opts *o);
/* Parse argv; *help set on --help. Returns 0, or 2 after a usage error. */
int cli_serve_parse(const cli_command *cmd, int argc, char **argv, cli_serve_opts *o, int *help);

/* Everything a run needs, loaded. */
typedef struct cli_serve_setup {
    st_model model, draft, colocated[3];
    int have_draft, n_colocated;
    st_gpu gpu;
    st_gpu_coef coef;
    st_cluster cluster;
    int have_cluster;
    st_reqset reqs;
    size_t trimmed; /* requests --trim cut to the context */
    st_serve_cfg cfg;
} cli_serve_setup;

/* Load the model, GPU, coefficients, cluster and requests named by o;
 * reqs_path (may be NULL) overrides o->trace. */
int cli_serve_setup_load(const cli_serve_opts *o, const char *model, cli_serve_setup *s, st_error *err);
void cli_serve_setup_free(cli_serve_setup *s);

void cli_serve_json(st_json *j, const st_serve_cfg *c, const st_serve_result *r);

#endif
