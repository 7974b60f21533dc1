/* strata list: the presets and workloads strata can find. */
#include "config.h"
#include "cli/cli.h"

#include <getopt.h>
#include <string.h>

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"kind", required_argument, NULL, 'k'},
        {"filter", required_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *filter = NULL;
    int json = 0, kind = -1, c, rc, any = 0;
    st_regex *re = NULL;
    st_catalog cat;
    st_error err;
    optind = 0;
    while ((c = cli_getopt(&cmd_list, argc, argv, "k:f:jh", opts)) != -1) {
        switch (c) {
        case 'k':
            /* each --kind is checked on its own; the last one counts */
            kind = -1;
            for (int k = 0; k < ST_FILE_KIND_COUNT; k++)
                if (!strcmp(optarg, st_file_kind_name((st_file_kind)k)))
                    kind = k;
            if (kind < 0)
                return cli_usage_error(&cmd_list, "--kind: expected gpu, edge, accelerator, "
                                                  "node, cluster or workload, got '%s'", optarg);
            break;
        case 'f': filter = optarg; break;
        case 'j': json = 1; break;
        case 'h': cli_print_help(&cmd_list, stdout); return 0;
        default: return 2;
        }
    }
    if (optind < argc)
        return cli_usage_error(&cmd_list, "unexpected argument '%s'", argv[optind]);
    if (filter && st_regex_compile(&re, filter, 1, &err) != 0)
        return cli_usage_error(&cmd_list, "--filter: %s", err.msg);
    rc = st_catalog_scan(&cat, &err);
    if (rc) {
        st_regex_free(re);
        return cli_fail(&err);
    }
    st_json j;
    if (json) {
        st_json_init(&j, stdout, 1);
        st_json_begin_object(&j, NULL);
        st_json_string(&j, "data_root", cat.root);
    }
    for (int section = 0; section < 2; section++) {
        int printed = 0;
        if (json)
            st_json_begin_array(&j, section == 0 ? "presets" : "workloads");
        for (size_t i = 0; i < cat.n; i++) {
            const st_catalog_entry *e = &cat.items[i];
            if ((e->kind == ST_FILE_MODEL) != (section == 1))
                continue;
            if (kind >= 0 && e->kind != (st_file_kind)kind)
                continue;
            /* a match on any field keeps the entry, so ^l4$ finds the id l4 */
            if (re && !st_regex_match(re, e->id) &&
                !st_regex_match(re, st_file_kind_name(e->kind)) && !st_regex_match(re, e->name))
                continue;
            if (json) {
                st_json_begin_object(&j, NULL);
                st_json_string(&j, "id", e->id);
                st_json_string(&j, "kind", st_file_kind_name(e->kind));
                st_json_string(&j, "name", e->name);
                st_json_string(&j, "path", e->path);
                st_json_bool(&j, "readable", e->name[0] != '\0');
                st_json_end_object(&j);
            } else {
                if (!printed)
                    printf("%s%-22s %-12s %s\n", section ? "\n" : "",
                           section ? "WORKLOAD" : "PRESET", "KIND", "NAME");
                printf("%-22s %-12s %s\n", e->id, st_file_kind_name(e->kind),
                       e->name[0] ? e->name : "(unreadable: strata show it for the error)");
            }
            printed++;
            any++;
        }
        if (json)
            st_json_end_array(&j);
    }
    if (json) {
        st_json_end_object(&j);
        st_json_finish(&j);
    } else if (!any) {
        printf("nothing matches%s%s%s\n", filter ? " --filter '" : "", filter ? filter : "",
               filter ? "'" : "");
    }
    st_catalog_free(&cat);
    st_regex_free(re);
    return 0;
}

const cli_command cmd_list = {
    "list",
    "list [--kind KIND] [--filter REGEX] [--json]",
    "List the hardware presets and workloads strata can find.",
    "  --kind KIND      only gpu, edge, accelerator, node, cluster or workload\n"
    "  --filter REGEX   keep entries whose id, kind or name matches (PCRE2, caseless;\n"
    "                   each field is matched on its own, so ^l4$ finds the id l4)\n"
    "  --json           machine-readable output: {data_root, presets[], workloads[]}\n",
    run,
    NULL,
};
