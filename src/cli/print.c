/* Text and JSON renderings of presets and workloads (SI units in JSON). */
#include "config.h"
#include "accel/accel.h"
#include "cli/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a rounded to the three significant digits "%.3g" prints */
static double sig3(double a)
{
    char t[32];
    snprintf(t, sizeof t, "%.3g", a);
    return strtod(t, NULL);
}

void cli_si(char *buf, size_t n, double v, const char *unit)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
    int i = 0;
    double a = fabs(v);
    if (a > 0 && sig3(a) < 1) {
        static const char *const small[] = {"", "m", "u", "n", "p"};
        while (sig3(a) < 1 && i < 4) {
            a *= 1e3;
            v *= 1e3;
            i++;
        }
        snprintf(buf, n, "%.3g %s%s", v, small[i], unit);
        return;
    }
    if (a >= 1e21) { /* past exa: scientific notation, no prefix */
        snprintf(buf, n, "%.3g %s", v, unit);
        return;
    }
    while (sig3(a) >= 1000 && i < 6) { /* 999.7 prints as 1 k, not 1e+03 */
        a /= 1e3;
        v /= 1e3;
        i++;
    }
    snprintf(buf, n, "%.3g %s%s", v, prefix[i], unit);
}

void cli_json_trace(st_json *j, const char *key, const char *file, const char *unit, long long written,
                    long long total)
{
    char k[48];
    st_json_begin_object(j, key);
    st_json_string(j, "file", file);
    st_json_int(j, unit, written);
    snprintf(k, sizeof k, "%s_total", unit);
    st_json_int(j, k, total);
    st_json_bool(j, "truncated", written < total);
    st_json_end_object(j);
}

void cli_secs(char *buf, size_t n, double s)
{
    if (s < 1e-3)
        snprintf(buf, n, "%.1f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, n, "%.3f ms", s * 1e3);
    else
        snprintf(buf, n, "%.3f s", s);
}

void cli_bytes(char *buf, size_t n, double v)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    while (v >= 1000 && i < 5) { /* 1000-1023 B print as 0.977-0.999 KiB, not 1e+03 B */
        v /= 1024;
        i++;
    }
    snprintf(buf, n, i ? "%.3g %s" : "%.0f %s", v, unit[i]);
}

/* ---- GPU ---------------------------------------------------------------- */
void cli_print_gpu(const st_gpu *g, FILE *out)
{
    char a[32], b[32];
    fprintf(out, "%s  (%s, gpu)\n", g->name, g->id);
    fprintf(out, "  vendor / arch      %s / %s%s%s\n", g->vendor == ST_VENDOR_AMD ? "amd" : "nvidia",
            g->arch, g->form_factor[0] ? ", " : "", g->form_factor);
    cli_si(a, sizeof a, g->boost_clock_hz, "Hz");
    fprintf(out, "  %-18s %d at %s boost\n", g->vendor == ST_VENDOR_AMD ? "compute units" : "SMs",
            g->sm_count, a);
    cli_bytes(a, sizeof a, g->mem_bytes);
    cli_si(b, sizeof b, g->mem_bw, "B/s");
    fprintf(out, "  memory             %s %s, %s\n", a, g->mem_type, b);
    cli_bytes(a, sizeof a, g->l2_bytes);
    fprintf(out, "  L2                 %s", a);
    if (g->llc_bytes > 0) {
        cli_bytes(b, sizeof b, g->llc_bytes);
        fprintf(out, " (+ %s last-level cache)", b);
    }
    cli_bytes(a, sizeof a, g->smem_per_sm_bytes);
    fprintf(out, "\n  per SM             %s shared, %d regs, %d threads, %d blocks, warp %d\n", a,
            g->regs_per_sm, g->max_threads_per_sm, g->max_blocks_per_sm, g->warp_size);
    double slots = st_gpu_fma_issue_cycles(g);
    if (slots > 0)
        fprintf(out,
                "  FP32 issue         %d partitions x %d lanes, %d dispatch/clk: an FMA holds %g "
                "issue slot%s\n",
                g->sm_partitions, g->fp32_lanes_per_sm / g->sm_partitions,
                g->dispatch_per_partition, slots, slots == 1 ? "" : "s");
    fprintf(out, "  launch overhead    %.3g us; TDP %.0f W", g->launch_overhead_s * 1e6, g->tdp_w);
    if (g->process_nm > 0)
        fprintf(out, "; %g nm process", g->process_nm);
    fprintf(out, "\n");
    fprintf(out, "  peak, GEMM path    dense / 2:4 sparse, and the ridge point (dense):\n");
    for (int t = 0; t < ST_DTYPE_COUNT; t++) {
        const char *unit = t >= ST_INT8 ? "TOP/s" : "TFLOP/s";
        if (g->matrix[t].dense <= 0)
            continue;
        fprintf(out, "    %-6s %8.1f", st_dtype_name((st_dtype)t), g->matrix[t].dense / 1e12);
        if (g->matrix[t].sparse > 0)
            fprintf(out, " / %7.1f %-8s", g->matrix[t].sparse / 1e12, unit);
        else
            fprintf(out, "   %7s %-8s", "", unit);
        fprintf(out, " ridge %4.0f %s\n", st_gpu_ridge(g, (st_dtype)t),
                t >= ST_INT8 ? "OP/B" : "FLOP/B");
    }
    fprintf(out, "  peak, vector path ");
    int any_int = 0;
    for (int t = 0; t < ST_DTYPE_COUNT; t++)
        if (g->vector[t] > 0) {
            fprintf(out, " %s %.1f%s", st_dtype_name((st_dtype)t), g->vector[t] / 1e12, t >= ST_INT8 ? " TOP/s" : "");
            any_int |= t >= ST_INT8;
        }
    fprintf(out, any_int ? "; the floating-point types in TFLOP/s" : " TFLOP/s");
    fputc('\n', out);
}

static void json_peaks(st_json *j, const char *key, const st_peak *p)
{
    st_json_begin_object(j, key);
    for (int t = 0; t < ST_DTYPE_COUNT; t++) {
        if (p[t].dense <= 0)
            continue;
        st_json_begin_object(j, st_dtype_name((st_dtype)t));
        st_json_number(j, "dense_ops_per_s", p[t].dense);
        st_json_number(j, "sparse_ops_per_s", p[t].sparse);
        st_json_end_object(j);
    }
    st_json_end_object(j);
}

void cli_json_gpu(st_json *j, const char *key, const st_gpu *g)
{
    st_json_begin_object(j, key);
    st_json_string(j, "id", g->id);
    st_json_string(j, "kind", "gpu");
    st_json_string(j, "name", g->name);
    st_json_begin_array(j, "aliases");
    for (int i = 0; i < g->n_aliases; i++)
        st_json_string(j, NULL, g->aliases[i]);
    st_json_end_array(j);
    st_json_string(j, "vendor", g->vendor == ST_VENDOR_AMD ? "amd" : "nvidia");
    st_json_string(j, "arch", g->arch);
    st_json_string(j, "form_factor", g->form_factor);
    st_json_int(j, "release_year", g->release_year);
    st_json_int(j, "sm_count", g->sm_count);
    st_json_number(j, "boost_clock_hz", g->boost_clock_hz);
    if (g->base_clock_hz > 0) /* optional in a preset: null where it gives none */
        st_json_number(j, "base_clock_hz", g->base_clock_hz);
    else
        st_json_null(j, "base_clock_hz");
    st_json_number(j, "memory_bytes", g->mem_bytes);
    st_json_string(j, "memory_type", g->mem_type);
    st_json_number(j, "memory_bw_bytes_per_s", g->mem_bw);
    st_json_number(j, "l2_bytes", g->l2_bytes);
    st_json_number(j, "llc_bytes", g->llc_bytes);
    st_json_number(j, "smem_per_sm_bytes", g->smem_per_sm_bytes);
    st_json_int(j, "regs_per_sm", g->regs_per_sm);
    st_json_int(j, "max_threads_per_sm", g->max_threads_per_sm);
    st_json_int(j, "max_blocks_per_sm", g->max_blocks_per_sm);
    st_json_int(j, "warp_size", g->warp_size);
    st_json_number(j, "launch_overhead_s", g->launch_overhead_s);
    st_json_number(j, "tdp_w", g->tdp_w);
    st_json_number(j, "process_nm", g->process_nm);
    /* null where the preset does not give them (the fitted reference) */
    if (st_gpu_fma_issue_cycles(g) > 0) {
        st_json_int(j, "sm_partitions", g->sm_partitions);
        st_json_int(j, "dispatch_per_partition", g->dispatch_per_partition);
        st_json_int(j, "fp32_lanes_per_sm", g->fp32_lanes_per_sm);
        st_json_number(j, "fma_issue_cycles", st_gpu_fma_issue_cycles(g));
    } else {
        st_json_null(j, "sm_partitions");
        st_json_null(j, "dispatch_per_partition");
        st_json_null(j, "fp32_lanes_per_sm");
        st_json_null(j, "fma_issue_cycles");
    }
    json_peaks(j, "matrix", g->matrix);
    st_json_begin_object(j, "vector_flops_per_s");
    for (int t = 0; t < ST_DTYPE_COUNT; t++)
        if (g->vector[t] > 0)
            st_json_number(j, st_dtype_name((st_dtype)t), g->vector[t]);
    st_json_end_object(j);
    st_json_end_object(j);
}

/* ---- edge, accelerator, node, cluster ------------------------------------- */
static void print_edge(const st_edge *e, FILE *out)
{
    char a[32], b[32];
    fprintf(out, "%s  (%s, edge %s)\n", e->name, e->id,
            e->cls == ST_EDGE_MOBILE_CPU ? "mobile_cpu" : "mobile_gpu");
    cli_si(a, sizeof a, e->clock_hz, "Hz");
    fprintf(out, "  soc                %s\n  cores              %d at %s\n", e->soc, e->cores, a);
    cli_bytes(a, sizeof a, e->mem_bytes);
    cli_si(b, sizeof b, e->mem_bw, "B/s");
    fprintf(out, "  memory             %s, %s\n", a, b);
    fprintf(out, "  dispatch overhead  %.3g us per operator; TDP %.3g W\n",
            e->dispatch_overhead_s * 1e6, e->tdp_w);
    if (e->l1_bytes > 0 || e->l2_bytes > 0 || e->llc_bytes > 0) {
        char c[32];
        cli_bytes(a, sizeof a, e->l1_bytes);
        cli_bytes(b, sizeof b, e->l2_bytes);
        cli_bytes(c, sizeof c, e->llc_bytes);
        fprintf(out, "  caches             L1 %s, L2 %s, last level %s\n", a, b, c);
    }
    if (e->simd_bits > 0)
        fprintf(out, "  vector unit        %d-bit, %d registers\n", e->simd_bits, e->vector_registers);
    for (int t = 0; t < ST_DTYPE_COUNT; t++)
        if (e->peak[t].dense > 0) {
            cli_si(a, sizeof a, e->peak[t].dense, "OP/s");
            fprintf(out, "    %-6s %s\n", st_dtype_name((st_dtype)t), a);
        }
}

static void json_edge(st_json *j, const st_edge *e)
{
    st_json_begin_object(j, NULL);
    st_json_string(j, "id", e->id);
    st_json_string(j, "kind", "edge");
    st_json_string(j, "name", e->name);
    st_json_string(j, "class", e->cls == ST_EDGE_MOBILE_CPU ? "mobile_cpu" : "mobile_gpu");
    st_json_string(j, "soc", e->soc);
    st_json_int(j, "cores", e->cores);
    st_json_number(j, "clock_hz", e->clock_hz);
    json_peaks(j, "peak", e->peak);
    st_json_number(j, "memory_bytes", e->mem_bytes);
    st_json_number(j, "memory_bw_bytes_per_s", e->mem_bw);
    st_json_number(j, "l1_bytes", e->l1_bytes);
    st_json_number(j, "l2_bytes", e->l2_bytes);
    st_json_number(j, "llc_bytes", e->llc_bytes);
    st_json_number(j, "dispatch_overhead_s", e->dispatch_overhead_s);
    st_json_number(j, "tdp_w", e->tdp_w);
    if (e->cls == ST_EDGE_MOBILE_CPU) {
        st_json_int(j, "simd_bits", e->simd_bits);
        st_json_int(j, "vector_registers", e->vector_registers);
    }
    st_json_end_object(j);
}

static void keeps_text(const st_mem_level *l, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int t = 0; t < ST_TENSOR_COUNT; t++)
        if (l->keeps[t]) {
            size_t used = strlen(buf);
            snprintf(buf + used, n - used, "%s%s", used ? "," : "", st_tensor_name((st_tensor)t));
        }
}

static void print_accel(const st_accel *a, FILE *out)
{
    char f[32], k[64];
    cli_si(f, sizeof f, a->clock_hz, "Hz");
    fprintf(out, "%s  (%s, accelerator)\n", a->name, a->id);
    fprintf(out, "  PE array           %d x %d = %lld PEs at %s%s%s\n", a->pe_x, a->pe_y,
            (long long)a->pe_x * a->pe_y, f, a->technology[0] ? ", " : "", a->technology);
    fprintf(out, "  MAC                %d-bit x, %d-bit +, %.4g pJ\n", a->mac_bits, a->adder_bits,
            a->e_mac * 1e12);
    fprintf(out, "  NoC                %.4g pJ/hop, multicast %s, spatial reduction %s\n",
            a->e_hop * 1e12, a->noc_multicast ? "yes" : "no", a->noc_reduction ? "yes" : "no");
    fprintf(out, "  %-14s %-8s %9s %12s %6s %-24s %s\n", "level", "class", "instances",
            "words each", "word", "keeps", "read/write/update pJ");
    for (int i = 0; i < a->n_levels; i++) {
        const st_mem_level *l = &a->level[i];
        double words = st_mem_level_words(l);
        char w[32];
        if (words > 0)
            snprintf(w, sizeof w, "%.0f", words);
        else
            snprintf(w, sizeof w, "unbounded");
        keeps_text(l, k, sizeof k);
        if (l->cls == ST_MEM_FANOUT) {
            int fx, fy;
            st_accel_fanout(a, i, &fx, &fy);
            fprintf(out, "  %-14s %-8s %9d   fan-out stage: %d x %d to the level below\n",
                    l->name, "fanout", l->instances, fx, fy);
            continue;
        }
        fprintf(out, "  %-14s %-8s %9d %12s %4db %-24s %.4g/%.4g/%.4g\n", l->name,
                st_mem_class_name(l->cls), l->instances, w, l->word_bits, k, l->e_read * 1e12,
                l->e_write * 1e12, l->e_update * 1e12);
    }
}

static void json_accel(st_json *j, const st_accel *a)
{
    st_json_begin_object(j, NULL);
    st_json_string(j, "id", a->id);
    st_json_string(j, "kind", "accelerator");
    st_json_string(j, "name", a->name);
    st_json_string(j, "technology", a->technology);
    st_json_number(j, "clock_hz", a->clock_hz);
    st_json_int(j, "pe_x", a->pe_x);
    st_json_int(j, "pe_y", a->pe_y);
    st_json_number(j, "mac_energy_j", a->e_mac);
    st_json_int(j, "multiplier_bits", a->mac_bits);
    st_json_int(j, "adder_bits", a->adder_bits);
    st_json_int(j, "macs_per_pe", a->macs_per_pe);
    st_json_number(j, "noc_hop_energy_j", a->e_hop);
    st_json_bool(j, "noc_multicast", a->noc_multicast);
    st_json_bool(j, "noc_spatial_reduction", a->noc_reduction);
    st_json_begin_array(j, "levels");
    for (int i = 0; i < a->n_levels; i++) {
        const st_mem_level *l = &a->level[i];
        st_json_begin_object(j, NULL);
        st_json_string(j, "name", l->name);
        st_json_string(j, "class", st_mem_class_name(l->cls));
        st_json_int(j, "instances", l->instances);
        st_json_int(j, "mesh_x", l->mesh_x);
        st_json_int(j, "depth", l->depth);
        st_json_int(j, "width_bits", l->width_bits);
        st_json_int(j, "word_bits", l->word_bits);
        st_json_number(j, "capacity_words", st_mem_level_words(l));
        st_json_number(j, "read_bw_words", l->read_bw_words);
        st_json_number(j, "write_bw_words", l->write_bw_words);
        st_json_begin_array(j, "keeps");
        for (int t = 0; t < ST_TENSOR_COUNT; t++)
            if (l->keeps[t])
                st_json_string(j, NULL, st_tensor_name((st_tensor)t));
        st_json_end_array(j);
        st_json_number(j, "read_energy_j", l->e_read);
        st_json_number(j, "write_energy_j", l->e_write);
        st_json_number(j, "update_energy_j", l->e_update);
        st_json_number(j, "leak_energy_j", l->e_leak);
        st_json_end_object(j);
    }
    st_json_end_array(j);
    st_json_end_object(j);
}

static void json_link(st_json *j, const char *key, const st_link *l)
{
    st_json_begin_object(j, key);
    if (l->name[0])
        st_json_string(j, "name", l->name);
    st_json_string(j, "topology", st_topology_name(l->topology));
    st_json_number(j, "bw_bytes_per_s", l->bw);
    st_json_number(j, "latency_s", l->latency_s);
    st_json_number(j, "oversubscription", l->oversubscription);
    if (l->reach > 0) /* a network dimension: the nodes one of its groups joins */
        st_json_int(j, "nodes", l->reach);
    if (l->hop_dims) { /* a ring or torus: its grid */
        st_json_begin_array(j, "shape");
        for (int d = 0; d < l->hop_dims; d++)
            st_json_int(j, NULL, l->shape[d]);
        st_json_end_array(j);
    }
    st_json_end_object(j);
}

/* levels: a cluster with several network dimensions (each says what it joins) */
static void print_link(const char *label, const st_link *l, int levels, FILE *out)
{
    char b[32];
    cli_si(b, sizeof b, l->bw, "B/s");
    fprintf(out, "  %-18s %s", label, st_topology_name(l->topology));
    for (int d = 0; d < l->hop_dims; d++)
        fprintf(out, "%s%d", d ? "x" : " ", l->shape[d]);
    fprintf(out, ", %s per GPU per direction, %.3g us", b, l->latency_s * 1e6);
    if (l->hop_dims) {
        fprintf(out, " a hop (%d links of %.4g GB/s)", st_link_hop_links(l), st_link_hop_bw(l) * 1e-9);
    }
    if (l->oversubscription > 1)
        fprintf(out, ", %.3g:1 oversubscribed", l->oversubscription);
    if (levels)
        fprintf(out, ", groups of %d node%s", l->reach, l->reach == 1 ? "" : "s");
    fputc('\n', out);
}

/* a node's NICs and the cap on its whole scale-out (node and cluster) */
static void print_nics(const st_node *n, FILE *out)
{
    char b[32];
    cli_si(b, sizeof b, n->nic_bw, "B/s");
    fprintf(out, "  NICs               %d x %s", n->nics, b);
    if (n->scaleout_bw > 0) {
        cli_si(b, sizeof b, n->scaleout_bw, "B/s");
        fprintf(out, ", %s off the node in all", b);
    }
    fputc('\n', out);
}

static void print_node(const st_node *n, FILE *out)
{
    char b[32];
    fprintf(out, "%s  (%s, node)\n", n->name, n->id);
    fprintf(out, "  GPUs               %d x %s (%s)\n", n->gpus, n->gpu.name, n->gpu_id);
    print_link("intra-node", &n->intra, 0, out);
    cli_si(b, sizeof b, n->host_bw, "B/s");
    fprintf(out, "  host link          %s, %s\n", n->host_link_kind, b);
    print_nics(n, out);
}

static void json_node(st_json *j, const char *key, const st_node *n)
{
    st_json_begin_object(j, key);
    st_json_string(j, "id", n->id);
    st_json_string(j, "kind", "node");
    st_json_string(j, "name", n->name);
    st_json_int(j, "gpus", n->gpus);
    cli_json_gpu(j, "gpu", &n->gpu);
    json_link(j, "intra", &n->intra);
    st_json_string(j, "host_link", n->host_link_kind);
    st_json_number(j, "host_bw_bytes_per_s", n->host_bw);
    st_json_int(j, "nics", n->nics);
    st_json_number(j, "nic_bw_bytes_per_s", n->nic_bw);
    if (n->scaleout_bw > 0)
        st_json_number(j, "scaleout_bw_bytes_per_s", n->scaleout_bw);
    st_json_string(j, "cpu", n->cpu);
    st_json_end_object(j);
}

static void print_cluster(const st_cluster *c, FILE *out)
{
    fprintf(out, "%s  (%s, cluster)\n", c->name, c->id);
    fprintf(out, "  nodes              %d x %s = %lld GPUs\n", c->nodes, c->node.name,
            (long long)c->nodes * c->node.gpus); /* as the JSON: no int overflow */
    print_link("intra-node", &c->node.intra, 0, out);
    print_nics(&c->node, out);
    for (int i = 0; i < c->n_dims; i++)
        print_link(c->net[i].name, &c->net[i], c->n_dims > 1, out);
}

static void json_cluster(st_json *j, const st_cluster *c)
{
    st_json_begin_object(j, NULL);
    st_json_string(j, "id", c->id);
    st_json_string(j, "kind", "cluster");
    st_json_string(j, "name", c->name);
    st_json_int(j, "nodes", c->nodes);
    st_json_int(j, "gpus", (long long)c->nodes * c->node.gpus);
    json_node(j, "node", &c->node);
    st_json_begin_array(j, "network");
    for (int i = 0; i < c->n_dims; i++)
        json_link(j, NULL, &c->net[i]);
    st_json_end_array(j);
    st_json_end_object(j);
}

void cli_print_model_header(const st_model *m, FILE *out)
{
    char p[32], pe[32];
    cli_si(p, sizeof p, st_model_params(m), "");
    fprintf(out, "%s  (%s, %s workload, %s)\n", m->name, m->id,
            m->kind == ST_MODEL_TRANSFORMER ? "transformer" : "cnn", st_dtype_name(m->dtype));
    if (m->kind == ST_MODEL_TRANSFORMER) {
        const st_transformer *t = &m->tf;
        cli_si(pe, sizeof pe, st_model_params_non_embedding(m), "");
        fprintf(out, "  parameters         %s (%s outside embeddings and LM head)\n", p, pe);
        fprintf(out, "  shape              %lld layers%s, hidden %lld, %lld heads x %lld (%lld KV "
                "heads), FFN %lld%s, vocab %lld, context %lld\n",
                t->layers, t->encoder_layers ? " (decoder)" : "", t->hidden, t->heads,
                t->head_dim, t->kv_heads, t->ffn_hidden, t->gated_mlp ? " gated" : "", t->vocab,
                t->max_seq);
        if (t->encoder_layers)
            fprintf(out, "  encoder            %lld layers\n", t->encoder_layers);
        if (t->experts)
            fprintf(out, "  mixture of experts %lld experts, top-%lld, every %lld block(s)\n",
                    t->experts, t->top_k, t->moe_every);
        fprintf(out, "  style              %s %s-norm, %s, %s positions, %s%s%s\n",
                st_norm_name(t->norm), t->pre_norm ? "pre" : "post", st_act_name(t->activation),
                st_pos_name(t->position), t->causal ? "causal" : "bidirectional",
                t->bias ? ", biases" : "",
                t->parallel_block == ST_PAR_SHARED_NORM ? ", attention and MLP side by side (one norm)"
                : t->parallel_block == ST_PAR_TWO_NORMS ? ", attention and MLP side by side (two norms)"
                                                        : "");
    } else {
        fprintf(out, "  parameters         %s\n", p);
        fprintf(out, "  input              %lld x %lld x %lld, %zu layer entries\n",
                m->cnn.in_channels, m->cnn.in_h, m->cnn.in_w, m->cnn.n_items);
    }
}

void cli_print_loaded(const st_loaded *l, FILE *out)
{
    switch (l->kind) {
    case ST_FILE_GPU: cli_print_gpu(&l->gpu, out); break;
    case ST_FILE_EDGE: print_edge(&l->edge, out); break;
    case ST_FILE_ACCEL: print_accel(&l->accel, out); break;
    case ST_FILE_NODE: print_node(&l->node, out); break;
    case ST_FILE_CLUSTER: print_cluster(&l->cluster, out); break;
    case ST_FILE_MODEL: cli_print_model_header(&l->model, out); break;
    case ST_FILE_KIND_COUNT: break;
    }
}

void cli_json_loaded(st_json *j, const st_loaded *l)
{
    switch (l->kind) {
    case ST_FILE_GPU: cli_json_gpu(j, NULL, &l->gpu); break;
    case ST_FILE_EDGE: json_edge(j, &l->edge); break;
    case ST_FILE_ACCEL: json_accel(j, &l->accel); break;
    case ST_FILE_NODE: json_node(j, NULL, &l->node); break;
    case ST_FILE_CLUSTER: json_cluster(j, &l->cluster); break;
    case ST_FILE_MODEL:
    case ST_FILE_KIND_COUNT: break; /* workloads are printed by cmd_show with their ops */
    }
}
