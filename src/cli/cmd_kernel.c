/* strata kernel: one kernel on one GPU, with the model's reasoning. */
#include "config.h"
#include "cli/cli.h"
#include "gpu/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct option opts[] = {
    {"gpu", required_argument, NULL, 'g'},     {"dtype", required_argument, NULL, 'd'},
    {"b", required_argument, NULL, 'B'},       {"m", required_argument, NULL, 'M'},
    {"n", required_argument, NULL, 'N'},       {"k", required_argument, NULL, 'K'},
    {"rows", required_argument, NULL, 'r'},    {"cols", required_argument, NULL, 'c'},
    {"inputs", required_argument, NULL, 'i'},  {"flops-per-elem", required_argument, NULL, 'f'},
    {"heads", required_argument, NULL, 'H'},   {"kv-heads", required_argument, NULL, 'V'},
    {"q-len", required_argument, NULL, 'q'},   {"kv-len", required_argument, NULL, 'L'},
    {"head-dim", required_argument, NULL, 'D'},{"causal", no_argument, NULL, 'C'},
    {"backward", no_argument, NULL, 'W'},
    {"fa3", no_argument, NULL, '3'},
    {"groups", required_argument, NULL, 'G'},  {"int4", no_argument, NULL, '4'},
    {"int4-kernel", required_argument, NULL, 'k'},
    {"filter", required_argument, NULL, 'R'},  {"stride", required_argument, NULL, 'S'},
    {"coef", required_argument, NULL, 'x'},    {"json", no_argument, NULL, 'j'},
    {"cold", no_argument, NULL, 'O'},          {"sustained", no_argument, NULL, 'Z'},
    {"channels-last", no_argument, NULL, 'Y'},
    {"torch", required_argument, NULL, 'T'},
    {"fused", no_argument, NULL, 'U'},
    {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
};

/* The options that apply to every op; the others are each op's shape, as
 * st_kernel_estimate reads it (op_takes, by their codes in opts). */
/* The fused-attention kernel PyTorch's SDPA runs for this shape:
 * FlashAttention-2 needs Ampere or later, 16-bit inputs and head dims up to
 * 256; otherwise the memory-efficient kernel (strata prices its tiling
 * alike). */
static const char *attn_kernel_name(const st_gpu *g, const st_kernel *k, int json)
{
    if (k->fa3)
        return json ? "flashattention-3" : "FlashAttention-3";
    if (!st_gpu_fa2(g) || k->dtype == ST_FP32 || k->head_dim > 256)
        return json ? "memory-efficient" : "memory-efficient attention";
    return json ? "flashattention-2" : "FlashAttention-2";
}

/* The W4A16 kernel priced: tinygemm when asked; Marlin where it runs
 * (NVIDIA Ampere and later: its cp.async and ldmatrix code is sm80's; one
 * activation by one weight, or vLLM's MoE experts); elsewhere a W4A16 GEMM
 * of the same design (tc: on tensor cores) or the library GEMM dequantising
 * in its main loop, as st_kernel_estimate prices them. */
static const char *int4_kernel_label(const st_gpu *g, const st_kernel *k, int tc, int json)
{
    if (k->int4_kernel == ST_INT4_TINYGEMM)
        return json ? "tinygemm"
                    : "tinygemm (PyTorch's _weight_int4pack_mm: a block per 16x8 output tile, loads straight from "
                      "global memory)";
    if (g->vendor == ST_VENDOR_NVIDIA && g->matrix[ST_BF16].dense > 0 &&
        (k->op == ST_KOP_GEMM || k->op == ST_KOP_GROUPED))
        return json ? "marlin" : "Marlin (W4A16: weights staged through shared memory ahead of the MMAs)";
    if (tc)
        return json ? "w4a16" : "a W4A16 GEMM of Marlin's design (Marlin itself runs on NVIDIA Ampere and later, "
                                "gemm and grouped)";
    return json ? "w4a16" : "the library GEMM, dequantising the INT4 weights in its main loop (no tensor cores "
                            "for this datatype here)";
}

/* A time in the unit that keeps it between 1 and 1000 (ns to s), to
 * `digits` significant digits; under a picosecond, 0. */
static const char *fmt_time(char *b, size_t n, double s, int digits)
{
    static const char *const unit[] = {"s", "ms", "us", "ns", "ps"};
    int i = 0;
    double v = s;
    if (fabs(v) < 1e-12) {
        snprintf(b, n, "0 us");
        return b;
    }
    while (fabs(v) < 1 && i < 4) {
        v *= 1e3;
        i++;
    }
    snprintf(b, n, "%.*g %s", digits, v, unit[i]);
    /* 999.7 us to 3 digits would read 1e+03 us: one unit up */
    if (i > 0 && fabs(strtod(b, NULL)) >= 1000)
        snprintf(b, n, "%.*g %s", digits, v / 1e3, unit[i - 1]);
    return b;
}

static const char common_opts[] = "gdxjhT";
static const char *const op_takes[ST_KOP_COUNT] = {
    [ST_KOP_GEMM] = "BMNK4kOZ",    [ST_KOP_BMM] = "BMNK4kOZ", [ST_KOP_GROUPED] = "BMNK4kOZ",
    [ST_KOP_CONV] = "BMNKGRS4kOYZ",  [ST_KOP_FLASH] = "BHVqLDCW3OZ", [ST_KOP_ELEMENTWISE] = "rcif",
    [ST_KOP_SOFTMAX] = "rc",       [ST_KOP_NORM] = "rc",      [ST_KOP_EMBEDDING] = "rc",
    [ST_KOP_TOPK] = "rcKU",
};

static const char *opt_name(int code)
{
    for (const struct option *o = opts; o->name; o++)
        if (o->val == code)
            return o->name;
    return "?";
}

/* An option given for another op would be ignored: refuse it, naming the
 * options this op reads. given: the codes of the shape options given. */
static int check_applies(st_kop op, const char *given)
{
    const char *takes = op_takes[op], *name = st_kop_name(op);
    for (const char *g = given; *g; g++) {
        if (strchr(takes, *g))
            continue;
        char list[160];
        size_t n = 0;
        list[0] = '\0';
        for (const char *t = takes; *t && n < sizeof list; t++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s--%s", n ? ", " : "", opt_name(*t));
        return cli_usage_error(&cmd_kernel, "--%s does not apply to %s; %s takes %s (and --gpu, --dtype, "
                                            "--torch, --coef, --json)", opt_name(*g), name, name, list);
    }
    return 0;
}

static int run(int argc, char **argv)
{
    int rc_arg;
    const char *gpu = "h100-sxm", *dtype = NULL, *coefp = NULL;
    long long v[16] = {0};
    enum { IB, IM, IN, IK, IR, IC, II, IH, IV, IQ, IL, ID, IG, IF, IS };
    double fpe = -1;
    int json = 0, causal = 0, backward = 0, fa3 = 0, int4 = 0, cold = 0, channels_last = 0, torch_ver = 0, fused = 0,
        sustained = 0;
    st_int4_kernel int4_kernel = ST_INT4_MARLIN;
    int c;
    char given[32] = "";
    size_t ngiven = 0;
    optind = 0;
    while ((c = cli_getopt(&cmd_kernel, argc, argv, "g:d:jh", opts)) != -1) {
        int idx = -1;
        const char *nm = NULL;
        switch (c) {
        case 'g': gpu = optarg; break;
        case 'd': dtype = optarg; break;
        case 'B': idx = IB, nm = "--b"; break;
        case 'M': idx = IM, nm = "--m"; break;
        case 'N': idx = IN, nm = "--n"; break;
        case 'K': idx = IK, nm = "--k"; break;
        case 'r': idx = IR, nm = "--rows"; break;
        case 'c': idx = IC, nm = "--cols"; break;
        case 'i': idx = II, nm = "--inputs"; break;
        case 'H': idx = IH, nm = "--heads"; break;
        case 'V': idx = IV, nm = "--kv-heads"; break;
        case 'q': idx = IQ, nm = "--q-len"; break;
        case 'L': idx = IL, nm = "--kv-len"; break;
        case 'D': idx = ID, nm = "--head-dim"; break;
        case 'G': idx = IG, nm = "--groups"; break;
        case 'R': idx = IF, nm = "--filter"; break;
        case 'S': idx = IS, nm = "--stride"; break;
        case 'f': {
            long long t;
            if (cli_parse_ll(&cmd_kernel, "--flops-per-elem", optarg, 0, 100000, &t))
                return 2;
            fpe = (double)t;
            break;
        }
        case 'C': causal = 1; break;
        case 'W': backward = 1; break;
        case '3': fa3 = 1; break;
        case '4': int4 = 1; break;
        case 'k':
            if (st_int4_kernel_parse(optarg, &int4_kernel))
                return cli_usage_error(&cmd_kernel, "--int4-kernel: expected marlin or tinygemm, got '%s'", optarg);
            int4 = 1;
            break;
        case 'x': coefp = optarg; break;
        case 'j': json = 1; break;
        case 'O': cold = 1; break;
        case 'Z': sustained = 1; break;
        case 'Y': channels_last = 1; break;
        case 'U': fused = 1; break;
        case 'T':
            if (cli_parse_torch(&cmd_kernel, optarg, &torch_ver))
                return 2;
            break;
        case 'h': cli_print_help(&cmd_kernel, stdout); return 0;
        default: return 2;
        }
        /* a filter side or a stride past 1024 is no convolution a library runs */
        /* --inputs counts full-size tensors an elementwise kernel reads (1
         * unary, 2 binary, a few for fused chains): 64 is far past any */
        if (idx >= 0 && cli_parse_ll(&cmd_kernel, nm, optarg, 1,
                                     idx == IF || idx == IS ? 1024 : idx == II ? 64 : 1LL << 40, &v[idx]))
            return 2;
        if (!strchr(common_opts, c) && !strchr(given, c) && ngiven + 1 < sizeof given)
            given[ngiven++] = (char)c;
    }
    if ((rc_arg = cli_one_operand(&cmd_kernel, argc, argv, "which kernel? gemm, bmm, grouped, conv, flash, elementwise, "
                                            "softmax, norm, embedding or topk")))
        return rc_arg;
    st_kernel k;
    memset(&k, 0, sizeof k);
    if (st_kop_parse(argv[optind], &k.op))
        return cli_usage_error(&cmd_kernel, "unknown kernel '%s': expected gemm, bmm, grouped, conv, flash, "
                                            "elementwise, softmax, norm, embedding or topk", argv[optind]);
    if ((rc_arg = check_applies(k.op, given)))
        return rc_arg;
    st_error err;
    st_gpu g;
    if (st_load_gpu(gpu, &g, &err))
        return cli_fail(&err);
    k.dtype = g.matrix[ST_BF16].dense > 0 ? ST_BF16 : ST_FP16;
    if (dtype && st_dtype_parse(dtype, &k.dtype))
        return cli_usage_error(&cmd_kernel, "--dtype: expected one of %s, got '%s'", st_dtype_choices(), dtype);
    k.b = v[IB] ? v[IB] : 1;
    k.m = v[IM], k.n = v[IN], k.k = v[IK];
    k.rows = v[IR], k.cols = v[IC];
    k.n_in = v[II] ? (int)v[II] : 1, k.n_out = 1;
    k.heads = v[IH], k.kv_heads = v[IV], k.q_len = v[IQ] ? v[IQ] : 1, k.kv_len = v[IL], k.head_dim = v[ID];
    k.causal = causal;
    k.cold = cold;
    k.sustained = sustained;
    k.backward = backward;
    k.fa3 = fa3;
    k.groups = v[IG] ? v[IG] : 1;
    k.filter = v[IF], k.stride = v[IS] ? v[IS] : 1;
    k.weight_only_int4 = int4;
    k.int4_kernel = int4_kernel;
    k.channels_last = channels_last;
    k.torch_ver = torch_ver;
    k.router_fused = fused;
    if (k.op == ST_KOP_TOPK && k.k > k.cols && k.cols > 0)
        return cli_usage_error(&cmd_kernel, "topk --k %lld: a token keeps at most its --cols (%lld) experts", k.k,
                               k.cols);
    if (int4 && k.dtype != ST_FP16 && k.dtype != ST_BF16)
        return cli_usage_error(&cmd_kernel, "--int4 is weight-only INT4 with 16-bit activations (W4A16): give "
                                            "--dtype fp16 or bf16, not %s", st_dtype_name(k.dtype));
    if (int4 && !st_gpu_supports(&g, ST_FP16) && !st_gpu_supports(&g, ST_BF16))
        return cli_usage_error(&cmd_kernel, "--int4 is weight-only INT4 with 16-bit activations (W4A16), and %s "
                                            "has no fp16 or bf16 rate in its preset; pick another --gpu", g.id);
    if (int4 && k.int4_kernel == ST_INT4_TINYGEMM) {
        const char *why = st_tinygemm_unsupported(&g, &k);
        if (why)
            return cli_usage_error(&cmd_kernel, "--int4-kernel tinygemm on %s %s: %s", g.id,
                                   st_kop_name(k.op), why);
    }
    /* Marlin's shape limits (vLLM's check_marlin_supported_shape: the
     * output a multiple of GPTQ_MARLIN_MIN_THREAD_N = 64, the input of
     * GPTQ_MARLIN_MIN_THREAD_K = 128, which also holds its 128-wide
     * quantisation groups); vLLM runs other shapes on another kernel */
    if (int4 && k.int4_kernel == ST_INT4_MARLIN && k.k && k.n && (k.n % 64 || k.k % 128) &&
        strncmp(int4_kernel_label(&g, &k, 1, 1), "marlin", 6) == 0)
        return cli_usage_error(&cmd_kernel, "--int4 (Marlin) needs --n a multiple of 64 and --k a multiple of 128 "
                               "(vLLM's check_marlin_supported_shape), not --n %lld --k %lld; vLLM runs such a "
                               "layer on another kernel", k.n, k.k);
    /* elementwise: --flops-per-elem (default 1); the other vector ops count
     * their own (softmax and topk 5, norm 8) from 0, as the compose layer
     * leaves it */
    k.flops_per_elem = k.op == ST_KOP_ELEMENTWISE ? (fpe >= 0 ? fpe : 1) : 0;
    k.dispatch = ST_DISP_OTHER;
    if (k.op == ST_KOP_EMBEDDING) /* the forward gather, index_select, as the compose layer sees it */
        k.index_elems = (double)k.rows * (double)k.cols;
    int gemmlike = k.op == ST_KOP_GEMM || k.op == ST_KOP_BMM || k.op == ST_KOP_GROUPED || k.op == ST_KOP_CONV;
    if (gemmlike && (!k.m || !k.n || !k.k))
        return cli_usage_error(&cmd_kernel, "%s needs --m, --n and --k (and --b for a batch)", argv[optind]);
    if (k.filter > 0 && k.k % (k.filter * k.filter))
        return cli_usage_error(&cmd_kernel, "conv --filter %lld: --k (%lld) is one group's input channels x %lld x %lld, a "
                                            "multiple of %lld", k.filter, k.k, k.filter, k.filter, k.filter * k.filter);
    if (k.op == ST_KOP_FLASH && (!k.heads || !k.kv_len || !k.head_dim))
        return cli_usage_error(&cmd_kernel, "flash needs --heads, --kv-len and --head-dim (--q-len: 1 for "
                                            "decode; --b batch; --kv-heads for GQA; --causal)");
    if (!gemmlike && k.op != ST_KOP_FLASH && (!k.rows || !k.cols))
        return cli_usage_error(&cmd_kernel, "%s needs --rows and --cols", argv[optind]);
    /* the multiply-adds a kernel does, counted exactly up to 2^53 as the
     * workload layer counts (a GEMM's b x m x n x k, attention's scores
     * times the head size, a vector op's elements) */
    double work = gemmlike ? (double)k.b * (k.op == ST_KOP_CONV ? (double)k.groups : 1.0) * k.m * k.n * k.k
                  : k.op == ST_KOP_FLASH ? (double)k.b * k.heads * k.q_len * k.kv_len * k.head_dim
                                         : (double)k.rows * k.cols;
    if (work > ST_MAX_ELEMENTS)
        return cli_usage_error(&cmd_kernel, "%s of %.3g multiply-adds (or elements): strata counts up to 2^53 = "
                                            "9.0e15; use smaller sizes", argv[optind], work);
    st_gpu_coef coef;
    if (st_gpu_coef_load(coefp, &coef, &err))
        return cli_fail(&err);
    st_kernel_est e;
    if (st_kernel_estimate(&g, &coef, &k, NULL, 0, &e, &err))
        return cli_fail(&err);
    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "gpu", g.id);
        st_json_string(&j, "op", st_kop_name(k.op));
        st_json_string(&j, "dtype", st_dtype_name(k.dtype));
        if (k.op == ST_KOP_FLASH) {
            st_json_string(&j, "kernel", attn_kernel_name(&g, &k, 1));
            st_json_string(&j, "pass", k.backward ? "backward" : "forward");
        }
        st_json_string(&j, "class", st_kclass_name(e.cls));
        {
            int tv = st_torch_effective(k.torch_ver);
            char t[16];
            snprintf(t, sizeof t, "%d.%d", tv / 100, tv % 100);
            st_json_string(&j, "torch", t);
        }
        if (k.op == ST_KOP_TOPK) {
            st_json_string(&j, "kernel", fused ? "topk_softmax" : "eager");
            st_json_int(&j, "topk", (long long)st_topk_k(&k));
            st_json_bool(&j, "multiblock", !fused && st_topk_multiblock((double)k.rows, (double)k.cols));
        }
        if (k.op == ST_KOP_SOFTMAX && k.n_in == 1)
            st_json_string(&j, "kernel", st_softmax_kernel_name(st_softmax_path(&g, &k)));
        if (int4)
            st_json_string(&j, "kernel", int4_kernel_label(&g, &k, e.cls == ST_KC_GEMM_TC, 1));
        if (k.op == ST_KOP_EMBEDDING)
            st_json_string(&j, "kernel", st_embedding_vectorized(&k) ? "vectorized_gather"
                                         : st_torch_effective(k.torch_ver) >= ST_TORCH_VECTORIZED_GATHER ? "gather"
                                                                                                    : "index_select");
        if (e.tile.m > 0) {
            char t[32];
            snprintf(t, sizeof t, "%dx%d", e.tile.m, e.tile.n);
            st_json_string(&j, "tile", t);
            st_json_number(&j, "tiles", e.tiles);
            st_json_int(&j, "split_k", e.split_k);
            st_json_number(&j, "waves", e.waves);
        }
        st_json_string(&j, "bound", e.bound);
        st_json_number(&j, "compute_s", e.compute_s);
        st_json_number(&j, "memory_s", e.memory_s);
        if (e.flops > 0 && e.tile.m > 0)
            st_json_number(&j, "achieved_tflops", e.flops / e.gpu_s * 1e-12);
        if (k.op == ST_KOP_CONV)
            st_json_number(&j, "layout_s", e.layout_s);
        st_json_bool(&j, "cold", cold);
        st_json_bool(&j, "sustained", sustained && g.tc_sustained_w_per_tflops > 0);
        st_json_number(&j, "floor_s", e.floor_s);
        st_json_number(&j, "time_s", e.gpu_s);
        st_json_number(&j, "lo_s", e.lo_s);
        st_json_number(&j, "hi_s", e.hi_s);
        st_json_number(&j, "sigma", e.sigma);
        st_json_number(&j, "dispatch_s", e.dispatch_s);
        st_json_number(&j, "flops", e.flops);
        st_json_number(&j, "bytes", e.bytes);
        st_json_number(&j, "power_factor", e.power_factor);
        st_json_end_object(&j);
        st_json_finish(&j);
        return 0;
    }
    char fl[32], by[32];
    cli_si(fl, sizeof fl, e.flops, "FLOP");
    cli_si(by, sizeof by, e.bytes, "B");
    if (k.op == ST_KOP_FLASH)
        printf("flash %s, %s %s, on %s (%s)\n", st_dtype_name(k.dtype), attn_kernel_name(&g, &k, 0),
               k.backward ? "backward" : "forward", g.name, g.id);
    else
        printf("%s %s on %s (%s)\n", st_kop_name(k.op), st_dtype_name(k.dtype), g.name, g.id);
    printf("  class        %s\n", st_kclass_name(e.cls));
    if (k.op == ST_KOP_TOPK) {
        if (fused)
            printf("  kernels      one fused kernel (vLLM's topk_softmax: softmax and selection a warp per token), "
                   "keeping %.0f\n", st_topk_k(&k));
        else
        {
            double w = st_topk_waves(&g, (double)k.rows, (double)k.cols);
            printf("  kernels      PyTorch's eager router: %ssoftmax, gatherTopK (radix select, a block per token, "
                   "%.0f wave%s), bitonic sort of %.0f (--fused: one kernel)\n",
                   k.dtype == ST_BF16 ? "FP32 cast, " : "", w, w == 1 ? "" : "s", st_topk_k(&k));
        }
        if (!fused && st_topk_multiblock((double)k.rows, (double)k.cols))
            printf("  note         PyTorch takes its multi-block top-k for this shape (should_use_multiblock); "
                   "strata prices the single-block one, unmeasured here\n");
    }
    if (k.op == ST_KOP_EMBEDDING) {
        int tv = st_torch_effective(k.torch_ver);
        if (st_embedding_vectorized(&k))
            printf("  kernel       vectorized_gather_kernel (PyTorch %d.%d: 16-byte copies, one block per token)\n",
                   tv / 100, tv % 100);
        else if (tv >= ST_TORCH_VECTORIZED_GATHER)
            printf("  kernel       gather, one element a thread (PyTorch %d.%d: rows not a multiple of 16 bytes; "
                   "offsets priced as index_select's)\n", tv / 100, tv % 100);
        else
            printf("  kernel       indexSelectLargeIndex (PyTorch %d.%d: offsets worked out per element; --torch "
                   "2.8 or later copies rows 16 bytes a thread)\n", tv / 100, tv % 100);
    }
    if (k.op == ST_KOP_SOFTMAX && k.n_in == 1) {
        int tv = st_torch_effective(k.torch_ver);
        st_softmax_kernel p = st_softmax_path(&g, &k);
        printf("  kernel       %s (PyTorch %d.%d: %s)\n", st_softmax_kernel_name(p), tv / 100, tv % 100,
               p == ST_SMX_WARP ? "a row per warp, in registers"
               : p == ST_SMX_REG ? "a row per 1024-thread block, in registers"
                                 : "a row per block, read again for each pass");
    }
    if (int4)
        printf("  kernel       %s\n", int4_kernel_label(&g, &k, e.cls == ST_KC_GEMM_TC, 0));
    if (e.tile.m > 0) {
        printf("  tile         %dx%d (rows x cols of the output per CTA)%s\n", e.tile.m, e.tile.n,
               e.split_k > 1 ? ", split along K" : "");
        printf("  tiles        %.0f x split %d over %d SMs = %.0f waves\n", e.tiles, e.split_k, g.sm_count, e.waves);
    }
    printf("  work         %s, %s\n", fl, by);
    printf("  clock        %.0f%% of boost (the fitted energy per FLOP under the %.0f W TDP)\n",
           100 * e.power_factor, g.tdp_w);
    if (sustained) {
        double cap = st_gpu_sustained_tflops(&g, k.dtype);
        if (e.cls != ST_KC_GEMM_TC)
            printf("  power        sustained load: no limit off the tensor cores (FP32 on the CUDA cores held its "
                   "clock back to back: data/measured/h200/sustained-fp32)\n");
        else if (cap > 0)
            printf("  power        sustained load: %s tensor work at most %.0f TFLOP/s (%.0f W at %.3g W per "
                   "16-bit TFLOP/s, measured)%s\n", st_dtype_name(k.dtype), cap, g.tdp_w, g.tc_sustained_w_per_tflops,
                   strcmp(e.bound, "power") ? "" : ": this kernel's limit");
        else
            printf("  power        sustained load: %s has no measured tc_sustained_w_per_tflops; no limit beyond "
                   "the clock above\n", g.id);
    }
    char t1[32], t2[32], t3[32];
    printf("  bound        %s (compute %s, memory %s)\n", e.bound, fmt_time(t1, sizeof t1, e.compute_s, 3),
           fmt_time(t2, sizeof t2, e.memory_s, 3));
    printf("  time         %s  (90%% band %s .. %s)\n", fmt_time(t1, sizeof t1, e.gpu_s, 4),
           fmt_time(t2, sizeof t2, e.lo_s, 4), fmt_time(t3, sizeof t3, e.hi_s, 4));
    printf("  floor        %s (FLOPs at peak; bytes %s at peak bandwidth)\n", fmt_time(t1, sizeof t1, e.floor_s, 4),
           cold ? "from DRAM" : "beyond L2");
    printf("  caches       %s\n", cold ? "cold: every operand byte from DRAM, as in a model step"
                                       : "warm: called in a loop, as benchmarks time it; L2 keeps what it can "
                                         "between calls (--cold: every byte from DRAM)");
    if (e.flops > 0 && e.tile.m > 0)
        printf("  achieved     %.3g TFLOP/s\n", e.flops / e.gpu_s * 1e-12);
    if (k.op == ST_KOP_CONV && e.cls == ST_KC_GEMM_TC) {
        if (e.layout_s > 0)
            printf("  layout       NCHW: cuDNN transposes the input and filter to NHWC and the output back, %.3g us "
                   "of the time "
                   "(--channels-last: none)\n", e.layout_s * 1e6);
        else
            printf("  layout       %s\n", k.channels_last ? "channels last: no transposes"
                                       : g.vendor != ST_VENDOR_NVIDIA ? "NCHW, which MIOpen runs as it is: no transposes"
                                       : k.filter <= 0 ? "no --filter: transposes not priced"
                                       : k.groups > 1 ? "grouped: transposes not priced (none measured)"
                                                      : "NCHW, run as a plain GEMM (1x1, stride 1): no transposes");
    }
    return 0;
}

const cli_command cmd_kernel = {
    "kernel",
    "kernel OP [--gpu PRESET] [--dtype D] [--b B --m M --n N --k K --groups G --filter R --stride S\n"
    "                   --channels-last --int4 --int4-kernel K]\n"
    "                   [--rows R --cols C --inputs N --flops-per-elem F] [--k K --fused (topk)]\n"
    "                   [--heads H --kv-heads H --q-len Q --kv-len L --head-dim D --causal --backward --fa3] [--cold] [--coef FILE]\n"
    "                   [--torch VER] [--sustained] [--json]",
    "Estimate one kernel: chosen tile, tiles, waves, bound, time with its 90% band.",
    "  OP               gemm (x W, weights shared over --b), bmm, grouped (MoE experts: --b\n"
    "                   experts of --m tokens), conv (implicit GEMM sizes per group: --m = N P Q,\n"
    "                   --n = output channels / groups, --k = input channels / groups x R x R;\n"
    "                   --groups G runs G of them), flash\n"
    "                   (fused attention; --q-len 1 = decode), elementwise, softmax, norm,\n"
    "                   embedding, topk\n"
    "  --gpu PRESET     default h100-sxm\n"
    "  --dtype D        default bf16 (fp16 where the GPU has no bf16)\n"
    "  --inputs N       elementwise: full-size input tensors (1 unary, 2 binary)\n"
    "  --flops-per-elem elementwise: ALU FLOPs per element (default 1; an FMA counts 2): the\n"
    "                   time is never below them at the dtype's vector peak\n"
    "  --int4           weight-only INT4 (W4A16) as Marlin runs it: weights read at 4 bits and\n"
    "                   dequantised (Marlin on NVIDIA Ampere and later, gemm and grouped;\n"
    "                   elsewhere a kernel of its design, or without tensor cores the library\n"
    "                   GEMM dequantising in its main loop; JSON kernel: marlin or w4a16;\n"
    "                   Marlin takes --n a multiple of 64 and --k of 128, as vLLM checks)\n"
    "  --int4-kernel K  weight-only INT4 by kernel K (implies --int4): marlin (the default;\n"
    "                   vLLM's GPTQ and AWQ path) or tinygemm (PyTorch's _weight_int4pack_mm,\n"
    "                   as torchao and gpt-fast run it: BF16 activations, op gemm, NVIDIA\n"
    "                   Ampere and later; a block per 16x8 output tile, bound by its loads\n"
    "                   from 64 rows up)\n"
    "  --filter R       conv: the R x R filter (K = input channels x R x R); with --stride 1\n"
    "                   (the default) and one group, a 3x3 conv is the shape cuDNN runs by\n"
    "                   Winograd or FFT before Hopper (the conv class, fitted on such convs,\n"
    "                   can pass the FP32 peak); any other conv, one without --filter, or one\n"
    "                   on Hopper or datacenter Blackwell is an implicit GEMM at the FP32 GEMM\n"
    "                   rate. On NVIDIA tensor cores a dense conv other than 1x1 stride 1 adds\n"
    "                   cuDNN's NCHW -> NHWC transposes of its input, filter and output\n"
    "                   (PyTorch's default layout)\n"
    "  --stride S       conv: the stride (default 1)\n"
    "  --channels-last  conv: NHWC activations (torch.channels_last, or torch.compile's layout\n"
    "                   optimisation): no transposes\n"
    "  --coef FILE      coefficient table (default calibration/gpu-kernels.yaml)\n"
    "  --torch VER      the PyTorch release that runs the op (default 2.1, the calibration\n"
    "                   data's); it changes the price where releases launch different kernels:\n"
    "                   from 2.8 the embedding gather copies rows 16 bytes a thread\n"
    "                   (vectorized_gather_kernel) instead of working out offsets per element;\n"
    "                   from 2.7 the softmax keeps rows up to 2048 elements in the warp kernel\n"
    "                   and rows up to 9216 in registers (cunn_SoftMaxForwardReg), SM-bound\n"
    "  --sustained      gemm, bmm, grouped, conv, flash: inside a training step that holds the\n"
    "                   board at its power limit: a tensor-core kernel no faster than the\n"
    "                   preset's measured tc_sustained_w_per_tflops allows under its TDP\n"
    "                   (H100 SXM, H200)\n"
    "  --cold           gemm, bmm, grouped, conv, flash: operands from DRAM, as in a model step\n"
    "                   (default: warm, a kernel timed in a loop, whose L2 keeps part of its\n"
    "                   working set between calls)\n"
    "  --json           machine-readable (compute_s and memory_s: the two sides before they\n"
    "                   overlap; achieved_tflops for GEMM-like ops; floor_s: what no kernel can\n"
    "                   beat, its FLOPs at the dtype's fastest peak and its bytes beyond L2 at\n"
    "                   peak bandwidth; the band's low end, lo_s, never goes below it; layout_s\n"
    "                   for a conv: the NCHW transposes' share of time_s)\n"
    "\nEach op takes only the options it reads (others are a usage error):\n"
    "  gemm, bmm, grouped  --b --m --n --k --int4 --int4-kernel --cold --sustained\n"
    "  conv                the same, --groups --filter --stride --channels-last\n"
    "  flash               --b --heads --kv-heads --q-len --kv-len --head-dim --causal --cold\n"
    "                      --sustained; --backward: the backward (S recomputed; dV, dP, dQ, dK);\n"
    "                      --fa3: FlashAttention-3's\n"
    "                      kernels (Hopper only: full tensor rate, loads overlapped) instead of\n"
    "                      FlashAttention-2's (on GPUs before Ampere, in FP32 and for head dims\n"
    "                      over 256, PyTorch's memory-efficient kernel runs instead, with the same\n"
    "                      tiling: priced alike, and named so in the output)\n"
    "  elementwise         --rows --cols --inputs --flops-per-elem\n"
    "  softmax, norm, embedding  --rows --cols\n"
    "  topk                --rows (tokens) --cols (experts) --k (experts kept, default 2); --fused:\n"
    "                      one fused kernel (vLLM's topk_softmax), else PyTorch's eager path (an FP32\n"
    "                      cast of BF16 logits (FP16 ones the softmax reads as they are), the FP32\n"
    "                      softmax, gatherTopK's radix select, a block per token in waves over the\n"
    "                      SMs, and a bitonic sort of the winners)\n",
    run,
    NULL,
};
