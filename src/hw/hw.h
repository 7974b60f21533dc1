/*
 * hw: the hardware data model, as plain structs in SI units.
 *
 * What it describes: a GPU by its spec sheet (SMs, clocks, per-datatype peak
 * throughput dense and with 2:4 sparsity, memory, caches, occupancy limits,
 * launch overhead); an edge device (mobile CPU or GPU) by the same kind of
 * figures; a spatial accelerator the way Timeloop does (a PE array under a
 * hierarchy of storage levels with per-action energies and a NoC); a node (a
 * number of GPUs with an intra-node link) and a cluster (nodes joined by one
 * or more network dimensions).
 *
 * Inputs come from presets/ (see strata-presets(5)); every number there names
 * its source. Units inside: seconds, bytes, bytes/s, FLOP/s, Hz, joules.
 * These structs hold no pointers, so copying one copies all of it.
 */
#ifndef STRATA_HW_H
#define STRATA_HW_H

#include "core/core.h"

#define ST_NAME_MAX 96
#define ST_ID_MAX 64

typedef enum st_vendor { ST_VENDOR_NVIDIA = 0, ST_VENDOR_AMD } st_vendor;

/* Peak rate of one datatype; 0 means the hardware does not accelerate it. */
typedef struct st_peak {
    double dense;  /* op/s without sparsity */
    double sparse; /* op/s with 2:4 structured sparsity (0: not supported) */
} st_peak;

#define ST_GPU_MAX_ALIASES 4

typedef struct st_gpu {
    char id[ST_ID_MAX];     /* file stem, e.g. "h100-sxm" */
    char name[ST_NAME_MAX]; /* marketing name */
    /* names the driver reports ("Tesla V100-PCIE-32GB"), as measurements
     * record them; used to match measured data to this preset */
    char aliases[ST_GPU_MAX_ALIASES][ST_ID_MAX];
    int n_aliases;
    st_vendor vendor;
    char arch[32];
    char form_factor[16]; /* "sxm", "pcie", "oam" or "" */
    int release_year;     /* 0 when not given */
    int sm_count;         /* SMs (NVIDIA) or compute units (AMD) */
    double boost_clock_hz;
    double base_clock_hz; /* 0 when not given */
    double mem_bytes;
    /* the total CUDA reports (cudaMemGetInfo; torch.cuda.mem_get_info()[1]),
     * below the datasheet's by what the driver keeps: what vLLM's
     * gpu_memory_utilization multiplies; 0 when not given (mem_bytes then) */
    double cuda_total_bytes;
    char mem_type[16];
    double mem_bw;    /* bytes/s, peak */
    double l2_bytes;
    double llc_bytes; /* extra last-level cache (AMD Infinity Cache), 0 if none */
    double smem_per_sm_bytes;
    int regs_per_sm;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int warp_size;
    double launch_overhead_s;
    double tdp_w;
    double process_nm; /* foundry node as named (12 for TSMC 12FFN); 0 when not given */
    /* Board watts per dense 16-bit tensor TFLOP/s delivered at the power
     * limit under sustained load (measured: tools/measure-sustained.py,
     * board power over the throughput of a GEMM issued back to back). A
     * training step's tensor-core kernels (st_kernel.sustained) run no
     * faster than tdp_w / this; 0: not measured for this board, no limit. */
    double tc_sustained_w_per_tflops;
    /* SM partitions (warp schedulers), warp instructions each dispatches
     * per clock, and FP32 lanes per SM: together they say how many issue
     * slots an FP32 FMA leaves free (st_gpu_fma_issue_cycles); 0 when not
     * given (all three or none) */
    int sm_partitions;
    int dispatch_per_partition;
    int fp32_lanes_per_sm;
    st_peak matrix[ST_DTYPE_COUNT]; /* GEMM path (tensor / matrix cores) */
    double vector[ST_DTYPE_COUNT];  /* non-matrix SIMD path (fp32, fp16, bf16) */
} st_gpu;

/* Dispatch cycles one warp-wide FP32 FMA instruction occupies its
 * partition's FP32 pipe for, counted in the partition's issue slots:
 * (warp / FP32 lanes per partition) x dispatches per clock. 2 on Pascal
 * (32 lanes, dual dispatch), Volta, Turing and GA100 (16 lanes, single
 * dispatch): every other slot is free for the loads and address arithmetic
 * that feed the FMAs. 1 on GA102, Ada, Hopper and Blackwell (32 lanes,
 * single dispatch): each of those instructions takes a slot an FMA could
 * have used. 0 when the preset does not say. */
double st_gpu_fma_issue_cycles(const st_gpu *g);

/* 1 where the GPU's library GEMMs on tensor cores are asynchronous: a
 * copy engine in each SM (Hopper's Tensor Memory Accelerator, in
 * Blackwell too) streams operand tiles into shared memory while
 * warpgroup-wide MMAs run, issued by separate producer and consumer warps
 * (NVIDIA H100 Tensor Core GPU Architecture whitepaper, "Tensor Memory
 * Accelerator" and "asynchronous execution"; CUTLASS 3's warp-specialized
 * sm90 kernels, cuBLAS's nvjet_sm90 kernels in data/measured). NVIDIA
 * Hopper and Blackwell (datacenter) by architecture; 0 elsewhere. */
int st_gpu_async_mma(const st_gpu *g);
/* FlashAttention-3 runs on it: Hopper (its kernels are sm_90a only) */
int st_gpu_fa3(const st_gpu *g);
/* FlashAttention-2 runs on it: not NVIDIA Pascal, Volta or Turing (its
 * kernels need sm80's instructions), where PyTorch's SDPA and vLLM take the
 * memory-efficient kernel (xFormers' in vLLM), which strata prices alike */
int st_gpu_fa2(const st_gpu *g);
/* 1 where cuDNN runs a dense 3x3 stride-1 FP32 convolution by Winograd or
 * FFT, doing fewer multiplies than the direct count: every NVIDIA GPU in
 * NeuSight's conv sweeps (Pascal to Ampere, cuDNN 8.9: scudnn_winograd and
 * winograd_nonfused kernels in its kernel names) and AMD (MIOpen's
 * Winograd solvers). 0 on NVIDIA Hopper and Blackwell (datacenter):
 * with cuDNN 9.19 (data/measured) 793 of the H100's 957 such convs and
 * 582 of the H200's 705 ran cuDNN's FP32 implicit GEMM
 * (sm80_xmma_fprop_implicit_gemm f32, FFMA) and the rest FFT, none
 * Winograd, at 0.4-0.7x the FP32 peak.
 * Ada and the RTX Blackwell parts are unmeasured and keep the older rule. */
int st_gpu_winograd_conv(const st_gpu *g);

/* Peak GEMM throughput for a dtype (dense or sparse), 0 if unsupported. */
double st_gpu_peak(const st_gpu *g, st_dtype t, int sparse);
/* Machine balance: FLOP per byte at which a kernel in dtype t turns compute bound. */
double st_gpu_ridge(const st_gpu *g, st_dtype t);

/* ---- edge devices (nn-Meter's role) --------------------------------------- */
typedef enum st_edge_class { ST_EDGE_MOBILE_CPU = 0, ST_EDGE_MOBILE_GPU } st_edge_class;

typedef struct st_edge {
    char id[ST_ID_MAX];
    char name[ST_NAME_MAX];
    st_edge_class cls;
    char soc[ST_NAME_MAX];
    int cores;
    double clock_hz;
    st_peak peak[ST_DTYPE_COUNT];
    double mem_bytes;
    double mem_bw;
    double l1_bytes, l2_bytes, llc_bytes; /* 0 when not given */
    double dispatch_overhead_s;
    double tdp_w;
    /* mobile_cpu: vector register width and count (the GEMM microkernel's
     * register tile, see gpu/edge.h); 0 when not given */
    int simd_bits;
    int vector_registers;
} st_edge;

/* The fields of an st_gpu a report reads (id, name, cores as SMs, clock,
 * peaks, memory, caches, dispatch as launch overhead), filled from an edge
 * device so that eval can print an edge step like a GPU's. Not for the GPU
 * kernel model: edge operators are priced by gpu/edge.h. */
void st_edge_gpu_view(const st_edge *e, st_gpu *g);

/* ---- spatial accelerators (Timeloop's role) ------------------------------- */
typedef enum st_tensor { ST_TENSOR_INPUTS = 0, ST_TENSOR_WEIGHTS, ST_TENSOR_OUTPUTS, ST_TENSOR_COUNT } st_tensor;
const char *st_tensor_name(st_tensor t);

/* ST_MEM_FANOUT: no storage, only a spatial fan-out stage (Timeloop's
 * inter_<container>_spatial levels); it keeps nothing and costs nothing. */
typedef enum st_mem_class { ST_MEM_DRAM = 0, ST_MEM_SRAM, ST_MEM_REGFILE, ST_MEM_FANOUT } st_mem_class;
const char *st_mem_class_name(st_mem_class c);

/* The widest attention head any attention kernel here prices (models use
 * 64-256): workload files and `strata kernel flash` refuse more. */
#define ST_MAX_HEAD_DIM 65536

#define ST_ACCEL_MAX_LEVELS 12
/* Loop dimensions of an accelerator problem, in bit order (see accel.h):
 * groups, batch, output channels, input channels, output width and height,
 * filter width and height. */
#define ST_AD_LETTERS "GNMCPQRS"

typedef struct st_mem_level {
    char name[48];
    st_mem_class cls;
    int instances; /* copies of this level */
    int mesh_x;    /* instances laid out along X */
    long long depth; /* rows; 0 = unbounded (DRAM) */
    int width_bits;  /* bits per row (one block) */
    int word_bits;   /* bits per datum */
    int banks;       /* 0 when not given */
    double read_bw_words;  /* words per cycle per instance; 0 = unlimited */
    double write_bw_words;
    int keeps[ST_TENSOR_COUNT]; /* 1 if the tensor may live here */
    double e_read, e_write, e_update, e_leak; /* joules per action (per block) */
    /* Mapping constraints (the mapper obeys them; evaluation reports a
     * violation). Bit d of a mask is loop dimension d (see accel/accel.h:
     * G N M C P Q R S). t_allow: dims whose temporal factor here may exceed 1;
     * sx_allow/sy_allow: dims the fan-out below this level may split along
     * X/Y; t_perm: letters of a fixed partial permutation, innermost first. */
    unsigned t_allow, sx_allow, sy_allow;
    char t_perm[12];
    /* factors a constraint fixes above 1 (Timeloop's `factors: M=16`), per
     * dim G N M C P Q R S: the temporal factor here, and the X or Y split
     * of the fan-out below, must be exactly that (0: not fixed). A fixed
     * dim is out of the matching allow mask: no other factor joins it. */
    unsigned t_fixed[8], sx_fixed[8], sy_fixed[8];
} st_mem_level;

typedef struct st_accel {
    char id[ST_ID_MAX];
    char name[ST_NAME_MAX];
    char technology[32];
    double clock_hz;
    int pe_x, pe_y;
    double e_mac; /* joules per MAC */
    int mac_bits, adder_bits, macs_per_pe;
    double e_hop; /* joules per word per NoC hop */
    int noc_multicast, noc_reduction;
    int n_levels;
    st_mem_level level[ST_ACCEL_MAX_LEVELS]; /* outermost (DRAM) first */
} st_accel;

/* Capacity of one instance in words (0 = unbounded). */
double st_mem_level_words(const st_mem_level *l);
/* a level name the energy breakdown (map --json, accel) keeps for its own
 * entries: "mac" and "noc" */
int st_level_name_reserved(const char *name);

/* ---- nodes and clusters --------------------------------------------------- */
typedef enum st_topology {
    ST_TOPO_NVSWITCH = 0,
    ST_TOPO_NVLINK_MESH,
    ST_TOPO_PCIE,
    ST_TOPO_RING,
    ST_TOPO_FAT_TREE,
    ST_TOPO_RAIL_OPTIMIZED,
    ST_TOPO_TORUS2D,
    ST_TOPO_SWITCH,
    ST_TOPO_TORUS3D,
    ST_TOPO_COUNT
} st_topology;
const char *st_topology_name(st_topology t);
int st_topology_parse(const char *s, st_topology *out);

typedef struct st_link {
    st_topology topology;
    double bw;        /* bytes/s per GPU per direction */
    double latency_s; /* one-hop latency */
    double oversubscription; /* >= 1 */
    /* Fraction of bw that NCCL collectives reach on large messages (ring
     * bus bandwidth / link bandwidth), and the same for point-to-point
     * send/recv; 1 when the preset does not say. See net/net.h. */
    double efficiency, p2p_efficiency;
    char name[32];
    /* A multi-hop fabric inside a node (ring, torus2d, torus3d): the GPUs'
     * grid, local GPU l at coordinates (l mod shape[0], l / shape[0] mod
     * shape[1], ...); each GPU has two links per dimension (one each way),
     * each carrying bw / (2 x hop_dims) per direction. 0 dims: a one-hop
     * fabric (switch, mesh, PCIe). */
    int hop_dims;
    int shape[3];
    /* A cluster's network dimension: the nodes one of its groups joins (a
     * leaf's, a pod's); the last dimension joins the cluster. */
    int reach;
} st_link;

/* Is t a fabric whose traffic crosses several hops of shared links? */
int st_topology_multihop(st_topology t);
/* A ring or torus GPU's links: how many (2 per dimension), and each one's
 * bytes/s per direction (bw / that many). */
int st_link_hop_links(const st_link *l);
double st_link_hop_bw(const st_link *l);

typedef struct st_node {
    char id[ST_ID_MAX];
    char name[ST_NAME_MAX];
    char gpu_id[ST_ID_MAX];
    char gpu_src[1024]; /* the GPU preset's file, as the loader resolved it (output guards) */
    st_gpu gpu; /* resolved from gpu_id */
    int gpus;
    st_link intra;
    char host_link_kind[32];
    double host_bw;
    int nics;
    double nic_bw;
    /* the node's whole scale-out bandwidth per direction, where its NICs
     * share a narrower path (one uplink, a PCIe switch, the host bridge);
     * 0: the NICs' sum, no cap */
    double scaleout_bw;
    char cpu[ST_NAME_MAX];
    double coll_base_s; /* fixed cost of one collective (NCCL baseLat by default) */
    /* NCCL protocols its collectives may use, bit (1 << st_proto); 0: NCCL's
     * default for the fabric (see net/net.h) */
    unsigned nccl_protocols;
    int reference_only; /* another tool's configuration (ASTRA-sim's): not a default node for its GPU */
} st_node;

#define ST_NET_MAX_DIMS 4

typedef struct st_cluster {
    char id[ST_ID_MAX];
    char name[ST_NAME_MAX];
    char node_id[ST_ID_MAX];
    char node_src[1024]; /* the node preset's file, as the loader resolved it: what an output must not
                          * overwrite */
    st_node node; /* resolved from node_id */
    int nodes;
    int n_dims;
    st_link net[ST_NET_MAX_DIMS]; /* innermost first */
} st_cluster;

#endif
