/* strata: entry point. No arguments: the default set-up; else a command. */
#include "config.h"
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const cli_command *const commands[] = {&cmd_list, &cmd_show, &cmd_summary, &cmd_kernel, &cmd_eval, &cmd_calibrate, &cmd_validate, &cmd_map, &cmd_accel, &cmd_coll, &cmd_train, &cmd_plan, &cmd_serve, &cmd_sweep, &cmd_suite, &cmd_ui};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: strata [--version] [--help] <command> [options]\n"
            "\n"
            "strata predicts how fast, and at what energy, ML workloads run on GPUs,\n"
            "accelerators and clusters. With no command it opens the terminal explorer\n"
            "on the default set-up (H100 SXM + Llama-2-7B); without a terminal it prints\n"
            "that set-up's summary.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "  %-10s %s\n", "help", "show a command's options: strata help show");
    fprintf(out, "\nSee strata(1), strata-presets(5), strata-workloads(5), strata-sweep(5) and\n"
            "strata-scenario(5).\n");
}

/* Output that could not be written (a full disk, a closed pipe, /dev/full)
 * is an error, not a success: flushed and checked at exit, reported once,
 * exit status 1 (coreutils' close_stdout does the same). */
static void close_stdout(void)
{
    int bad = ferror(stdout);
    errno = 0;
    if (fflush(stdout) != 0 || bad) {
        const char *why = errno ? strerror(errno) : "write error";
        fprintf(stderr, "strata: cannot write standard output: %s\n", why);
        _exit(1);
    }
}

const char *cli_argv0;

int main(int argc, char **argv)
{
    cli_argv0 = argv[0];
    atexit(close_stdout);
    if (argc < 2) /* a terminal gets the explorer; a pipe the summary */
        return isatty(0) && isatty(1) ? cmd_ui.run(argc, argv) : cmd_summary.run(argc, argv);
    const char *name = argv[1];
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        if (argc > 2) {
            fprintf(stderr, "strata: %s takes nothing after it, got '%s'; for a command's help: strata help "
                            "COMMAND\n", name, argv[2]);
            return 2;
        }
        if (name[1] == 'V' || name[2] == 'v')
            printf("strata %s\n", ST_VERSION);
        else
            print_usage(stdout);
        return 0;
    }
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            print_usage(stdout);
            return 0;
        }
        name = argv[2];
        if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
            print_usage(stdout);
            return 0;
        }
        for (size_t i = 0; i < N_COMMANDS; i++)
            if (!strcmp(commands[i]->name, name)) {
                cli_print_help(commands[i], stdout);
                return 0;
            }
    } else {
        for (size_t i = 0; i < N_COMMANDS; i++)
            if (!strcmp(commands[i]->name, name))
                return commands[i]->run(argc - 1, argv + 1);
    }
    {
        const char *names[N_COMMANDS];
        for (size_t i = 0; i < N_COMMANDS; i++)
            names[i] = commands[i]->name;
        const char *s = name[0] ? st_suggest(name, names, N_COMMANDS) : NULL;
        if (name[0] == '-')
            fprintf(stderr, "strata: unknown option '%s' before any command (strata takes --version or --help "
                            "there; a command's options follow it)\n", name);
        else if (!name[0])
            fprintf(stderr, "strata: an empty command name; give one of the commands below\n");
        else if (s)
            fprintf(stderr, "strata: unknown command '%s'; did you mean '%s'?\n", name, s);
        else
            fprintf(stderr, "strata: unknown command '%s'\n", name);
        print_usage(stderr);
        return 2;
    }
}
