/* Small queries over the hardware structs. */
#include "config.h"
#include "hw/hw.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

double st_gpu_peak(const st_gpu *g, st_dtype t, int sparse)
{
    if (t < 0 || t >= ST_DTYPE_COUNT)
        return 0;
    return sparse ? g->matrix[t].sparse : g->matrix[t].dense;
}

double st_gpu_fma_issue_cycles(const st_gpu *g)
{
    if (g->vendor != ST_VENDOR_NVIDIA || g->sm_partitions <= 0 || g->dispatch_per_partition <= 0 ||
        g->fp32_lanes_per_sm <= 0 || g->warp_size <= 0)
        return 0;
    double lanes = (double)g->fp32_lanes_per_sm / g->sm_partitions;
    return (double)g->warp_size / lanes * g->dispatch_per_partition;
}

int st_gpu_async_mma(const st_gpu *g)
{
    return g->vendor == ST_VENDOR_NVIDIA && (strcmp(g->arch, "hopper") == 0 || strcmp(g->arch, "blackwell") == 0);
}

int st_gpu_winograd_conv(const st_gpu *g)
{
    return !st_gpu_async_mma(g);
}

int st_gpu_fa2(const st_gpu *g)
{
    return !(g->vendor == ST_VENDOR_NVIDIA && (!strcmp(g->arch, "pascal") || !strcmp(g->arch, "volta") ||
                                               !strcmp(g->arch, "turing")));
}

int st_gpu_fa3(const st_gpu *g)
{
    return g->vendor == ST_VENDOR_NVIDIA && strcmp(g->arch, "hopper") == 0;
}

double st_gpu_ridge(const st_gpu *g, st_dtype t)
{
    double p = st_gpu_peak(g, t, 0);
    return g->mem_bw > 0 ? p / g->mem_bw : 0;
}

static const char *const tensor_names[ST_TENSOR_COUNT] = {"inputs", "weights", "outputs"};

const char *st_tensor_name(st_tensor t)
{
    return (t >= 0 && t < ST_TENSOR_COUNT) ? tensor_names[t] : "?";
}

const char *st_mem_class_name(st_mem_class c)
{
    switch (c) {
    case ST_MEM_DRAM: return "dram";
    case ST_MEM_SRAM: return "sram";
    case ST_MEM_REGFILE: return "regfile";
    case ST_MEM_FANOUT: return "fanout";
    }
    return "?";
}

double st_mem_level_words(const st_mem_level *l)
{
    if (l->depth <= 0 || l->word_bits <= 0)
        return 0;
    return (double)l->depth * (double)l->width_bits / (double)l->word_bits;
}

int st_level_name_reserved(const char *name)
{
    return strcmp(name, "mac") == 0 || strcmp(name, "noc") == 0;
}

static const char *const topo_names[ST_TOPO_COUNT] = {
    "nvswitch", "nvlink_mesh", "pcie", "ring", "fat_tree", "rail_optimized", "torus2d", "switch", "torus3d",
};

int st_topology_multihop(st_topology t)
{
    return t == ST_TOPO_RING || t == ST_TOPO_TORUS2D || t == ST_TOPO_TORUS3D;
}

int st_link_hop_links(const st_link *l) { return 2 * l->hop_dims; }
double st_link_hop_bw(const st_link *l) { return l->hop_dims ? l->bw / st_link_hop_links(l) : l->bw; }

const char *st_topology_name(st_topology t)
{
    return (t >= 0 && t < ST_TOPO_COUNT) ? topo_names[t] : "?";
}

int st_topology_parse(const char *s, st_topology *out)
{
    for (int i = 0; i < ST_TOPO_COUNT; i++)
        if (strcasecmp(s, topo_names[i]) == 0) {
            *out = (st_topology)i;
            return 0;
        }
    return ST_EINVAL;
}

void st_edge_gpu_view(const st_edge *e, st_gpu *g)
{
    memset(g, 0, sizeof *g);
    snprintf(g->id, sizeof g->id, "%s", e->id);
    snprintf(g->name, sizeof g->name, "%s", e->name);
    snprintf(g->arch, sizeof g->arch, "%s", e->cls == ST_EDGE_MOBILE_CPU ? "mobile_cpu" : "mobile_gpu");
    g->sm_count = e->cores;
    g->boost_clock_hz = e->clock_hz;
    g->mem_bytes = e->mem_bytes;
    g->mem_bw = e->mem_bw;
    g->l2_bytes = e->l2_bytes;
    g->llc_bytes = e->llc_bytes;
    g->launch_overhead_s = e->dispatch_overhead_s;
    g->tdp_w = e->tdp_w;
    for (int t = 0; t < ST_DTYPE_COUNT; t++) {
        g->matrix[t] = e->peak[t];
        g->vector[t] = e->peak[t].dense;
    }
}
