/* strata coll: one collective on a cluster, by the alpha-beta model and the
 * chunk-level simulation. */
#include "config.h"
#include "cli/cli.h"
#include "net/net.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_est(st_json *j, const char *key, const st_coll_est *e)
{
    st_json_begin_object(j, key);
    st_json_string(j, "algo", st_algo_name(e->algo));
    st_json_string(j, "protocol", st_proto_name(e->proto));
    st_json_number(j, "time_s", e->time_s);
    st_json_number(j, "algbw", e->algbw);
    st_json_number(j, "busbw", e->busbw);
    st_json_number(j, "latency_s", e->latency_s);
    st_json_number(j, "transfer_s", e->transfer_s);
    st_json_int(j, "steps", e->steps);
    st_json_end_object(j);
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"cluster", required_argument, NULL, 'c'}, {"gpus", required_argument, NULL, 'n'},
        {"per-node", required_argument, NULL, 'p'}, {"bytes", required_argument, NULL, 'b'},
        {"algo", required_argument, NULL, 'a'},    {"sim", no_argument, NULL, 's'},
        {"proto", required_argument, NULL, 'P'},
        {"concurrent", required_argument, NULL, 'k'}, {"chunk", required_argument, NULL, 'C'},
        {"sweep", no_argument, NULL, 'w'},         {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *cluster = "ib-a100", *algo_s = "auto", *proto_s = "auto";
    long long gpus = 0, per_node = 0, conc = 1;
    double bytes = -1, chunk = 0;
    int sim = 0, sweep = 0, json = 0, c, rc;
    optind = 0;
    while ((c = cli_getopt(&cmd_coll, argc, argv, "c:n:p:b:a:P:sk:C:wjh", opts)) != -1) {
        switch (c) {
        case 'c': cluster = optarg; break;
        case 'n':
            /* one GPU moves nothing: a collective needs two */
            if (cli_parse_ll(&cmd_coll, "--gpus", optarg, 2, 1 << 24, &gpus))
                return 2;
            break;
        case 'p':
            if (cli_parse_ll(&cmd_coll, "--per-node", optarg, 1, 4096, &per_node))
                return 2;
            break;
        case 'b':
            if (cli_parse_bytes(&cmd_coll, "--bytes", optarg, &bytes))
                return 2;
            break;
        case 'a': algo_s = optarg; break;
        case 'P': proto_s = optarg; break;
        case 's': sim = 1; break;
        case 'k':
            if (cli_parse_ll(&cmd_coll, "--concurrent", optarg, 1, 64, &conc))
                return 2;
            sim = 1;
            break;
        case 'C':
            if (cli_parse_bytes(&cmd_coll, "--chunk", optarg, &chunk))
                return 2;
            if (chunk < 1) {
                cli_usage_error(&cmd_coll, "--chunk: must be at least 1 byte");
                return 2;
            }
            break;
        case 'w': sweep = 1; break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_coll, stdout); return 0;
        default: return 2;
        }
    }
    if ((rc = cli_one_operand(&cmd_coll, argc, argv,
                              "which collective? allreduce, allgather, reducescatter, alltoall, broadcast or sendrecv")))
        return rc;
    if (chunk > 0 && !sim)
        return cli_usage_error(&cmd_coll, "--chunk sizes the simulation's chunks; add --sim (or --concurrent N)");
    st_coll coll;
    st_algo algo;
    if (st_coll_parse(argv[optind], &coll))
        return cli_usage_error(&cmd_coll, "unknown collective '%s': expected allreduce, allgather, reducescatter, "
                               "alltoall, broadcast or sendrecv", argv[optind]);
    if (st_algo_parse(algo_s, &algo))
        return cli_usage_error(&cmd_coll, "--algo: expected auto, ring, tree, direct, halving_doubling or "
                               "hierarchical, got '%s'", algo_s);
    if (sim && algo == ST_ALGO_TREE)
        return cli_usage_error(&cmd_coll, "--sim --algo tree: the tree algorithm has no chunk-level simulation; "
                               "leave out --sim for its analytic time, or simulate ring, direct, halving_doubling "
                               "or hierarchical");
    st_proto proto;
    if (st_proto_parse(proto_s, &proto))
        return cli_usage_error(&cmd_coll, "--proto: expected auto, ll, ll128 or simple, got '%s'", proto_s);
    if (bytes < 0)
        return cli_usage_error(&cmd_coll, "--bytes SIZE is required (e.g. --bytes 64MiB)");
    if (bytes == 0) /* NCCL returns from a zero-count call without launching anything */
        return cli_usage_error(&cmd_coll, "--bytes 0 moves no data, so there is no time to estimate; give "
                               "a size of at least 1 byte (e.g. --bytes 8 for the latency floor)");
    double sweep0 = bytes < 1024 ? bytes : 1024; /* the sweep's first size: 1 KiB, or SIZE below it */
    st_error err;
    st_cluster cl;
    if (st_load_cluster_or_node(cluster, &cl, &err))
        return cli_fail(&err);
    if (!gpus) {
        gpus = coll == ST_COLL_SENDRECV ? 2 : cl.node.gpus;
        /* the default group is one node: a node of one GPU has no group */
        if (gpus < 2) {
            if (cl.nodes > 1)
                st_error_set(&err, ST_EINVAL, "%s: a collective needs 2 or more GPUs, and node %s has %lld; "
                             "give --gpus N (2 or more, across its %d nodes)", cluster, cl.node.id, gpus, cl.nodes);
            else
                st_error_set(&err, ST_EINVAL, "%s: a collective needs 2 or more GPUs, and node %s has %lld; "
                             "give a node with more GPUs, or a cluster of such nodes", cluster, cl.node.id, gpus);
            return cli_fail(&err);
        }
    }
    st_net_group g;
    if (st_net_group_init(&cl, (int)gpus, (int)per_node, &g, &err))
        return cli_fail(&err);
    /* a ring or torus node's dimension-wise hierarchical has no
     * simulation, as the tree has none */
    if (sim && algo == ST_ALGO_HIER && g.hop_dims && g.grid && g.per_node > 1)
        return cli_usage_error(&cmd_coll, "--sim --algo hierarchical: on a %s node it runs dimension by dimension, "
                               "which has no chunk-level simulation; leave out --sim for its analytic time, or "
                               "simulate ring, direct or halving_doubling", st_topology_name(cl.node.intra.topology));
    /* the collective, --algo and --gpus disagree (send/recv on 3 GPUs, a
     * ring all-to-all): a usage error */
    if (st_coll_algo_valid(&g, coll, algo, &err))
        return cli_usage_error(&cmd_coll, "%s", err.msg);
    st_coll_est e;
    if (st_coll_estimate_proto(&g, coll, algo, proto, bytes, &e, &err))
        return cli_fail(&err);
    st_coll_est all[ST_ALGO_COUNT];
    int ok[ST_ALGO_COUNT] = {0};
    for (int a = ST_ALGO_RING; a < ST_ALGO_COUNT; a++)
        ok[a] = st_coll_estimate_proto(&g, coll, (st_algo)a, proto, bytes, &all[a], NULL) == 0;
    st_flow_result *sr = NULL;
    if (sim) {
        st_flow *fl = calloc((size_t)conc, sizeof *fl);
        sr = calloc((size_t)conc, sizeof *sr);
        if (!fl || !sr) {
            free(fl), free(sr);
            st_error_set(&err, ST_ENOMEM, "out of memory");
            return cli_fail(&err);
        }
        for (int i = 0; i < conc; i++)
            fl[i] = (st_flow){coll, algo, bytes, 0, 0, 1, (int)gpus, proto};
        /* GPUs are numbered node-major: a group on whole nodes is contiguous,
         * one GPU per node is strided by the node size */
        if (g.nodes > 1 && g.per_node != cl.node.gpus && g.per_node != 1) {
            free(fl), free(sr);
            st_error_set(&err, ST_EINVAL, "--sim places a group on whole nodes or one GPU per node "
                         "(--per-node %d or 1), not %d per node", cl.node.gpus, g.per_node);
            return cli_fail(&err);
        }
        if (g.nodes > 1 && g.per_node == 1)
            for (int i = 0; i < conc; i++)
                fl[i].stride = cl.node.gpus;
        rc = st_net_simulate(&cl, fl, (size_t)conc, chunk, sr, &err);
        free(fl);
        if (rc) {
            free(sr);
            return cli_fail(&err);
        }
    }
    if (json) {
        st_json j;
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "collective", st_coll_name(coll));
        st_json_string(&j, "cluster", cl.id);
        st_json_int(&j, "gpus", g.n);
        st_json_int(&j, "per_node", g.per_node);
        st_json_int(&j, "nodes", g.nodes);
        st_json_number(&j, "bytes", bytes);
        st_json_string(&j, "algo", st_algo_name(e.algo));
        st_json_string(&j, "protocol", st_proto_name(e.proto));
        st_json_number(&j, "time_s", e.time_s);
        st_json_number(&j, "algbw", e.algbw);
        st_json_number(&j, "busbw", e.busbw);
        st_json_number(&j, "latency_s", e.latency_s);
        st_json_number(&j, "transfer_s", e.transfer_s);
        if (g.lv_n > 1) { /* the scale-out levels above the first, and whether the group crosses them */
            st_json_begin_array(&j, "levels");
            for (int i = 1; i < g.lv_n; i++) {
                st_json_begin_object(&j, NULL);
                st_json_string(&j, "name", cl.net[i].name);
                st_json_int(&j, "group_nodes", cl.net[i - 1].reach);
                st_json_bool(&j, "crossed", g.lv_dom[i - 1] > 1);
                st_json_number(&j, "share_bytes_per_s", g.lv_cap[i]);
                st_json_number(&j, "latency_s", g.lv_lat[i]);
                st_json_end_object(&j);
            }
            st_json_end_array(&j);
        }
        st_json_begin_array(&j, "algorithms");
        for (int a = ST_ALGO_RING; a < ST_ALGO_COUNT; a++)
            if (ok[a])
                json_est(&j, NULL, &all[a]);
        st_json_end_array(&j);
        if (sim) {
            st_json_begin_object(&j, "sim");
            st_json_string(&j, "algo", st_algo_name(sr[0].algo));
            st_json_string(&j, "protocol", st_proto_name(sr[0].proto));
            st_json_int(&j, "concurrent", conc);
            st_json_number(&j, "time_s", sr[0].time_s);
            double last = 0;
            for (int i = 0; i < conc; i++)
                last = sr[i].end_s > last ? sr[i].end_s : last;
            st_json_number(&j, "all_done_s", last);
            st_json_number(&j, "busbw", sr[0].time_s > 0 ? bytes / sr[0].time_s * st_coll_bus_factor(coll, g.n) : 0);
            st_json_int(&j, "transfers", sr[0].transfers);
            st_json_int(&j, "chunks", sr[0].chunks);
            st_json_end_object(&j);
        }
        if (sweep) {
            st_json_begin_array(&j, "sweep");
            for (double s = sweep0; s <= bytes * 1.0000001 || s == sweep0; s *= 2) {
                st_coll_est w;
                if (st_coll_estimate_proto(&g, coll, algo, proto, s, &w, NULL))
                    break;
                st_json_begin_object(&j, NULL);
                st_json_number(&j, "bytes", s);
                st_json_string(&j, "algo", st_algo_name(w.algo));
                st_json_string(&j, "protocol", st_proto_name(w.proto));
                st_json_number(&j, "time_s", w.time_s);
                st_json_number(&j, "busbw", w.busbw);
                st_json_end_object(&j);
            }
            st_json_end_array(&j);
        }
        st_json_end_object(&j);
        st_json_finish(&j);
        free(sr);
        return 0;
    }
    char b[32], t[32];
    cli_bytes(b, sizeof b, bytes);
    printf("%s of %s on %d GPUs (%d node%s x %d) of %s (%s)\n", st_coll_name(coll), b, g.n, g.nodes,
           g.nodes == 1 ? "" : "s", g.per_node, cl.name, cl.id);
    const st_link *il = &cl.node.intra;
    if (il->hop_dims) { /* a ring or torus: its grid, links and hops */
        char shape[48];
        int o = 0;
        for (int d = 0; d < il->hop_dims; d++)
            o += snprintf(shape + o, sizeof shape - (size_t)o, "%s%d", d ? "x" : "", il->shape[d]);
        printf("  links: intra %s %s, %d links of %.3g GB/s per GPU x%.2f, %.1f us/hop", st_topology_name(il->topology),
               shape, st_link_hop_links(il), st_link_hop_bw(il) * 1e-9, il->efficiency, il->latency_s * 1e6);
    } else
        printf("  links: intra %.0f GB/s x%.2f, %.1f us/step", il->bw * 1e-9, il->efficiency, il->latency_s * 1e6);
    if (g.nodes > 1)
        printf("; NIC %.1f GB/s effective x %d per node, %.1f us/step", g.bw_nic * 1e-9, g.nics_per_node,
               g.lat_net * 1e6);
    if (g.nodes > 1 && g.bw_node > 0)
        printf("; %.1f GB/s effective off each node in all", g.bw_node * 1e-9);
    for (int i = 1; i < g.lv_n; i++)
        if (g.lv_dom[i - 1] > 1)
            printf("; %s across groups of %d nodes: %.1f GB/s the group's share, %.1f us/hop", cl.net[i].name,
                   cl.net[i - 1].reach, g.lv_cap[i] * 1e-9, g.lv_lat[i] * 1e6);
    printf("\n\n  %-17s %-6s %11s %12s %12s %11s %11s\n", "algorithm", "proto", "time", "algbw GB/s", "busbw GB/s",
           "latency", "transfer");
    for (int a = ST_ALGO_RING; a < ST_ALGO_COUNT; a++) {
        if (!ok[a])
            continue;
        char l[32], x[32];
        cli_secs(t, sizeof t, all[a].time_s);
        cli_secs(l, sizeof l, all[a].latency_s);
        cli_secs(x, sizeof x, all[a].transfer_s);
        printf("  %-17s %-6s %11s %12.1f %12.1f %11s %11s%s\n", st_algo_name((st_algo)a),
               st_proto_name(all[a].proto), t, all[a].algbw * 1e-9, all[a].busbw * 1e-9, l, x,
               a == (int)e.algo ? "  <-" : "");
    }
    cli_secs(t, sizeof t, e.time_s);
    printf("\n  %s: %s on %s, %s, bus bandwidth %.1f GB/s\n",
           algo == ST_ALGO_AUTO && g.hop_dims && g.grid
               ? (proto == ST_PROTO_AUTO ? "the fastest of NCCL's algorithms and the fabric's dimension-wise one, "
                                           "each on its fastest protocol"
                                         : "the fastest of NCCL's algorithms and the fabric's dimension-wise one")
           : algo == ST_ALGO_AUTO && proto == ST_PROTO_AUTO ? "NCCL's choice (the fastest of its own algorithms and protocols)"
           : algo == ST_ALGO_AUTO ? "the fastest of NCCL's algorithms on the protocol given"
           : proto == ST_PROTO_AUTO ? "the algorithm given, on its fastest protocol"
                                    : "chosen",
           st_algo_name(e.algo), st_proto_name(e.proto), t, e.busbw * 1e-9);
    if (sim) {
        cli_secs(t, sizeof t, sr[0].time_s);
        printf("  simulated (%s on %s, chunk-level, %d chunk%s per step, %lld transfers): %s",
               st_algo_name(sr[0].algo), st_proto_name(sr[0].proto), sr[0].chunks, sr[0].chunks == 1 ? "" : "s",
               sr[0].transfers, t);
        if (conc > 1) {
            double last = 0;
            for (int i = 0; i < conc; i++)
                last = sr[i].end_s > last ? sr[i].end_s : last;
            cli_secs(t, sizeof t, last);
            printf("; %lld at once on the same GPUs: all done at %s", conc, t);
        }
        printf("\n");
    }
    if (sweep) {
        printf("\n  %12s  %-17s %-6s %11s %12s\n", "bytes", "algorithm", "proto", "time", "busbw GB/s");
        for (double s = sweep0; s <= bytes * 1.0000001 || s == sweep0; s *= 2) {
            st_coll_est w;
            if (st_coll_estimate_proto(&g, coll, algo, proto, s, &w, NULL))
                break;
            cli_bytes(b, sizeof b, s);
            cli_secs(t, sizeof t, w.time_s);
            printf("  %12s  %-17s %-6s %11s %12.2f\n", b, st_algo_name(w.algo), st_proto_name(w.proto), t,
                   w.busbw * 1e-9);
        }
    }
    free(sr);
    return 0;
}

const cli_command cmd_coll = {
    "coll",
    "coll allreduce|allgather|reducescatter|alltoall|broadcast|sendrecv --bytes SIZE [--cluster PRESET]\n"
    "                   [--gpus N] [--per-node G] [--algo A] [--proto P] [--sim] [--chunk SIZE] [--concurrent K]\n"
    "                   [--sweep] [--json]",
    "Time one collective on a cluster: every algorithm, NCCL's choice, and a chunk-level simulation.",
    "  --bytes SIZE     nccl-tests sizes: the whole buffer (64MiB, 64M, 100MB, 1GiB, 1048576)\n"
    "  --cluster P      cluster or node preset (default ib-a100; a node is one node)\n"
    "  --gpus N         GPUs in the group (default one node; 2 for sendrecv)\n"
    "  --per-node G     GPUs of the group on each node (default as many as fit); sendrecv\n"
    "                   --gpus 2 --per-node 1 crosses the network\n"
    "  --algo A         auto (as NCCL: the faster of ring and tree for all-reduce, ring for the\n"
    "                   other collectives; direct for all-to-all and send/recv; on a ring or\n"
    "                   torus node also hierarchical, run dimension by dimension), ring, tree,\n"
    "                   direct, halving_doubling, hierarchical\n"
    "  --proto P        auto (as NCCL: each algorithm on the fastest protocol the node allows),\n"
    "                   ll, ll128 (NVLink fabrics only) or simple; send/recv and all-to-all are\n"
    "                   Simple (NCCL's point-to-point path)\n"
    "  --sim            also run the chunk-level discrete-event simulation (ring, direct,\n"
    "                   halving-doubling, hierarchical; --algo tree has none and is an error,\n"
    "                   while auto simulates the ring where it would pick the tree, or a ring\n"
    "                   or torus node's dimension-wise hierarchical, which has none either)\n"
    "  --concurrent K   simulate K copies at once on the same GPUs (link contention); the\n"
    "                   simulation's time_s is the first copy's finish, all_done_s the last's\n"
    "  --chunk SIZE     simulation chunk size (default 1MiB); a step's block is cut into\n"
    "                   1 to 16 chunks, a broadcast ring's share into up to 1,024 (the\n"
    "                   simulation output says how many)\n"
    "  --sweep          also print time and bus bandwidth from 1 KiB (or SIZE, when smaller)\n"
    "                   doubling while not past SIZE (100MB ends at 64 MiB): the small-message\n"
    "                   latency floor\n"
    "  --json           one object: collective, cluster, gpus, per_node, nodes, bytes, algo,\n"
    "                   protocol, time_s, algbw, busbw (bytes/s), latency_s, transfer_s,\n"
    "                   algorithms[], sim{}, sweep[]\n",
    run,
    NULL,
};
