/* strata ui: the terminal explorer (also what `strata` with no arguments
 * opens on a terminal). */
#include "config.h"
#include "cli/cli.h"
#include "ui/ui.h"

#include <getopt.h>
#include <unistd.h>

static int run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sweep", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    ui_opts o = {NULL, 0};
    long long v;
    int c;
    optind = 0;
    while ((c = cli_getopt(&cmd_ui, argc, argv, "s:t:h", opts)) != -1) {
        switch (c) {
        case 's': o.sweep_path = optarg; break;
        case 't':
            if (cli_parse_ll(&cmd_ui, "--threads", optarg, 1, 1024, &v))
                return 2;
            o.threads = (int)v;
            break;
        case 'h': cli_print_help(&cmd_ui, stdout); return 0;
        default: return 2;
        }
    }
    if (optind < argc)
        return cli_usage_error(&cmd_ui, "unexpected argument '%s' (a sweep file goes after --sweep)", argv[optind]);
    if (!isatty(0) || !isatty(1)) {
        /* no terminal is the environment, not the command line: exit 1 */
        fprintf(stderr, "strata: the explorer needs a terminal (stdin and stdout); for scripts use strata "
                        "sweep FILE.yaml\n");
        return 1;
    }
    return ui_run(&o);
}

const cli_command cmd_ui = {
    "ui",
    "ui [--sweep FILE.yaml] [--threads N]",
    "Open the terminal explorer (the default when strata runs on a terminal without arguments).",
    "  --sweep FILE     start with this sweep running (default: H100 SXM + Llama-2-7B,\n"
    "                   batch x sequence x dtype)\n"
    "  --threads N      sweep workers (default: the cores); the UI thread is apart\n"
    "  Keys: ? in the explorer; screens 1-6; q quits. See strata(1).\n",
    run,
    NULL,
};
