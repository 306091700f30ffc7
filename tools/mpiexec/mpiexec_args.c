/* The command line: MPICH Hydra's spelling, plus the Open MPI options that
 * scripts commonly carry (-x, --tag-output, --oversubscribe, ...).
 *
 * The line is a list of segments separated by ':'; each segment has
 * options, then the program and its arguments (which end at the next ':').
 * Global options (-genv, -x, -l, --timeout, --bind-to, -usize, -hosts) may
 * appear in any segment and apply to the whole job; local ones (-n, -env,
 * -wdir) apply to their segment. A segment without -wdir uses the first
 * segment's, so that `mpiexec -wdir D -n 1 a : -n 1 b` runs both in D. */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HALO_VERSION
#define HALO_VERSION "unknown"
#endif

enum {
    ARGS_NPROCS,
    ARGS_LABEL,
    ARGS_TIMEOUT,
    ARGS_BIND,
    ARGS_GENV,
    ARGS_ENV,
    ARGS_X,
    ARGS_WDIR,
    ARGS_USIZE,
    ARGS_HOSTS,
    ARGS_HELP,
    ARGS_VERSION,
    ARGS_IGNORED,
};

typedef struct args_option {
    const char *name;  /* without dashes; "-name" and "--name" both match */
    int id;
    int nargs;
} args_option_t;

static const args_option_t args_options[] = {
    {"n", ARGS_NPROCS, 1},
    {"np", ARGS_NPROCS, 1},
    {"l", ARGS_LABEL, 0},
    {"label", ARGS_LABEL, 0},
    {"prepend-rank", ARGS_LABEL, 0},
    {"tag-output", ARGS_LABEL, 0},
    {"timeout", ARGS_TIMEOUT, 1},
    {"bind-to", ARGS_BIND, 1},
    {"genv", ARGS_GENV, 2},
    {"env", ARGS_ENV, 2},
    {"x", ARGS_X, 1},
    {"wdir", ARGS_WDIR, 1},
    {"wd", ARGS_WDIR, 1},
    {"usize", ARGS_USIZE, 1},
    {"hosts", ARGS_HOSTS, 1},
    {"host", ARGS_HOSTS, 1},
    {"H", ARGS_HOSTS, 1},
    {"h", ARGS_HELP, 0},
    {"help", ARGS_HELP, 0},
    {"version", ARGS_VERSION, 0},
    /* Defaults here already, or meaningless on one node: accepted so that
     * scripts written for Hydra or Open MPI run unchanged. */
    {"genvall", ARGS_IGNORED, 0},
    {"envall", ARGS_IGNORED, 0},
    {"oversubscribe", ARGS_IGNORED, 0},
    {"allow-run-as-root", ARGS_IGNORED, 0},
};

static void args_usage(FILE *f)
{
    fputs("Usage: mpiexec [options] [-n N] program [args...] [: [-n N] program [args...]]...\n"
          "\n"
          "Starts N ranks of each program on this node; ranks are numbered in order across\n"
          "the ':'-separated segments (MPMD), and get_appnum gives each segment's index.\n"
          "\n"
          "Per segment:\n"
          "  -n, -np N             number of ranks (default 1)\n"
          "  -env NAME VALUE       set a variable for this segment's ranks\n"
          "  -wdir, -wd DIR        working directory (segments without one use the first's)\n"
          "Whole job:\n"
          "  -genv NAME VALUE      set a variable for all ranks\n"
          "  -x NAME[=VALUE]       set, or forward from mpiexec's environment (Open MPI style)\n"
          "  -l, --label           prefix each output line with \"[rank] \" (--tag-output)\n"
          "  --timeout S           end the job after S seconds, exit status 124\n"
          "                        (default from HALO_TIMEOUT or MPIEXEC_TIMEOUT)\n"
          "  --bind-to core|none   core (the default): bind rank i of the node to the i-th CPU\n"
          "                        mpiexec may use, round robin when there are more ranks;\n"
          "                        none: leave placement to the kernel\n"
          "  -usize N              MPI_UNIVERSE_SIZE of the ranks (default: not set)\n"
          "  -hosts LIST           comma-separated hosts; only this node is supported yet\n"
          "  --help, --version\n"
          "Accepted and ignored: -genvall, -envall, --oversubscribe, --allow-run-as-root.\n"
          "\n"
          "Ranks inherit mpiexec's environment and get PMI_FD, PMI_RANK, PMI_SIZE,\n"
          "HALO_LOCAL_RANK, HALO_LOCAL_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS and\n"
          "HALO_JOB_CPUS (the number of CPUs mpiexec may use). stdin goes to rank 0 only.\n"
          "The exit status is the first non-zero one of any rank (128+S for a rank killed\n"
          "by signal S), the code of an abort, or 124 after a timeout. A rank that fails or\n"
          "aborts ends the whole job within about a second.\n",
          f);
}

static int args_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Usage errors all leave with status 2, after one line naming the problem. */
static int args_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    mpiexec_msg("%s (see mpiexec --help)", msg);
    return 2;
}

int mpiexec_env_list_add(mpiexec_env_list_t *list, const char *name, const char *value)
{
    if (list->n == list->cap) {
        int cap = list->cap ? list->cap * 2 : 8;
        mpiexec_env_var_t *vars = realloc(list->vars, sizeof(*vars) * (size_t)cap);

        if (vars == NULL) {
            return -1;
        }
        list->vars = vars;
        list->cap = cap;
    }
    list->vars[list->n].name = name;
    list->vars[list->n].value = value;
    list->n++;
    return 0;
}

static int args_parse_int(const char *s, int min, int *value_p)
{
    char *endp;
    long v;

    errno = 0;
    v = strtol(s, &endp, 10);
    if (errno != 0 || endp == s || *endp != '\0' || v < min || v > INT_MAX) {
        return -1;
    }
    *value_p = (int)v;
    return 0;
}

static int args_parse_timeout(const char *s, double *value_p)
{
    char *endp;
    double v;

    errno = 0;
    v = strtod(s, &endp);
    if (errno != 0 || endp == s || *endp != '\0' || !isfinite(v) || v < 0 || v > 1e9) {
        return -1;
    }
    *value_p = v;
    return 0;
}

static int args_env_name_is_valid(const char *name, size_t len)
{
    return len > 0 && memchr(name, '=', len) == NULL;
}

/* A host of the list is fine when it names this node. */
static int args_host_is_local(const char *host, size_t len)
{
    char self[256];
    const char *dot;

    if ((len == 9 && strncmp(host, "localhost", 9) == 0) ||
        (len == 9 && strncmp(host, "127.0.0.1", 9) == 0) || (len == 3 && strncmp(host, "::1", 3) == 0)) {
        return 1;
    }
    if (gethostname(self, sizeof(self)) != 0) {
        return 0;
    }
    self[sizeof(self) - 1] = '\0';
    if (strlen(self) == len && strncmp(self, host, len) == 0) {
        return 1;
    }
    dot = strchr(self, '.');
    return dot != NULL && (size_t)(dot - self) == len && strncmp(self, host, len) == 0;
}

static int args_check_hosts(const char *list)
{
    const char *p = list;

    while (*p != '\0') {
        size_t len = strcspn(p, ","), name_len = strcspn(p, ",:");

        if (name_len > len) {
            name_len = len;
        }
        if (name_len > 0 && !args_host_is_local(p, name_len)) {
            char host[256];

            snprintf(host, sizeof(host), "%.*s", (int)name_len, p);
            return args_error("multi-node launch is not supported yet: host '%s' is not this "
                              "node", host);
        }
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    return 0;
}

static mpiexec_app_t *args_app_new(mpiexec_opts_t *opts)
{
    mpiexec_app_t *apps = realloc(opts->apps, sizeof(*apps) * (size_t)(opts->napps + 1));

    if (apps == NULL) {
        return NULL;
    }
    opts->apps = apps;
    memset(&apps[opts->napps], 0, sizeof(apps[0]));
    apps[opts->napps].nprocs = -1;
    return &apps[opts->napps++];
}

/* Splits "--name=value" (long form only) and finds the option. */
static const args_option_t *args_option_find(const char *arg, const char **inline_value_p)
{
    char name[64];
    const char *p = arg + 1, *eq;
    size_t len;

    if (*p == '-') {
        p++;
    }
    eq = strchr(p, '=');
    len = eq != NULL ? (size_t)(eq - p) : strlen(p);
    if (len == 0 || len >= sizeof(name)) {
        return NULL;
    }
    memcpy(name, p, len);
    name[len] = '\0';
    *inline_value_p = eq != NULL ? eq + 1 : NULL;
    for (size_t i = 0; i < sizeof(args_options) / sizeof(args_options[0]); i++) {
        if (strcmp(args_options[i].name, name) == 0) {
            return &args_options[i];
        }
    }
    return NULL;
}

static int args_apply(mpiexec_opts_t *opts, mpiexec_app_t *app, const args_option_t *opt,
                      char **vals, int *done_p)
{
    const char *eq;

    switch (opt->id) {
    case ARGS_NPROCS:
        if (args_parse_int(vals[0], 1, &app->nprocs) != 0) {
            return args_error("-n needs a positive number of ranks, not '%s'", vals[0]);
        }
        break;
    case ARGS_LABEL:
        opts->label = 1;
        break;
    case ARGS_TIMEOUT:
        if (args_parse_timeout(vals[0], &opts->timeout) != 0) {
            return args_error("--timeout needs a number of seconds, not '%s'", vals[0]);
        }
        opts->timeout_text = vals[0];
        break;
    case ARGS_BIND:
        if (strcmp(vals[0], "core") == 0 || strcmp(vals[0], "hwthread") == 0) {
            opts->bind = MPIEXEC_BIND_CORE;
        } else if (strcmp(vals[0], "none") == 0) {
            opts->bind = MPIEXEC_BIND_NONE;
        } else {
            return args_error("--bind-to takes core or none, not '%s'", vals[0]);
        }
        break;
    case ARGS_GENV:
    case ARGS_ENV:
        if (!args_env_name_is_valid(vals[0], strlen(vals[0]))) {
            return args_error("bad environment variable name '%s'", vals[0]);
        }
        if (mpiexec_env_list_add(opt->id == ARGS_GENV ? &opts->genv : &app->env, vals[0],
                                 vals[1]) != 0) {
            return args_error("out of memory at '%s'", vals[0]);
        }
        break;
    case ARGS_X:
        /* -x NAME=VALUE sets; -x NAME forwards mpiexec's own value. The
         * name is cut out of the argument in place (argv is ours). */
        eq = strchr(vals[0], '=');
        if (!args_env_name_is_valid(vals[0], eq != NULL ? (size_t)(eq - vals[0])
                                                        : strlen(vals[0]))) {
            return args_error("-x needs NAME or NAME=VALUE, not '%s'", vals[0]);
        }
        if (eq != NULL) {
            *(char *)eq = '\0';
        }
        if (mpiexec_env_list_add(&opts->genv, vals[0], eq != NULL ? eq + 1 : NULL) != 0) {
            return args_error("out of memory at '%s'", vals[0]);
        }
        break;
    case ARGS_WDIR:
        app->wdir = vals[0];
        break;
    case ARGS_USIZE:
        if (args_parse_int(vals[0], 1, &opts->usize) != 0) {
            return args_error("-usize needs a positive number, not '%s'", vals[0]);
        }
        break;
    case ARGS_HOSTS: {
        const char **hosts = realloc(opts->hosts, sizeof(*hosts) * (size_t)(opts->nhosts + 1));

        if (hosts == NULL) {
            return args_error("out of memory at '%s'", vals[0]);
        }
        opts->hosts = hosts;
        hosts[opts->nhosts++] = vals[0];
        return args_check_hosts(vals[0]);
    }
    case ARGS_HELP:
        args_usage(stdout);
        *done_p = 1;
        break;
    case ARGS_VERSION:
        printf("mpiexec (Halo) %s\nPMI-1 server; single-node process manager\n", HALO_VERSION);
        *done_p = 1;
        break;
    default:
        break;
    }
    return 0;
}

static int args_timeout_from_env(mpiexec_opts_t *opts)
{
    static const char *const names[] = {"HALO_TIMEOUT", "MPIEXEC_TIMEOUT"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *v = getenv(names[i]);

        if (v == NULL || v[0] == '\0') {
            continue;
        }
        if (args_parse_timeout(v, &opts->timeout) != 0) {
            mpiexec_msg("%s='%s' is not a number of seconds", names[i], v);
            return 2;
        }
        opts->timeout_text = v;
        return 0;
    }
    return 0;
}

int mpiexec_args_parse(int argc, char **argv, mpiexec_opts_t *opts_p, int *done_p)
{
    mpiexec_opts_t *opts = opts_p;
    mpiexec_app_t *app;
    int i = 1, rc;

    memset(opts, 0, sizeof(*opts));
    opts->usize = -1;
    *done_p = 0;
    app = args_app_new(opts);
    if (app == NULL) {
        return args_error("out of memory");
    }

    while (i < argc) {
        const char *arg = argv[i], *inline_value = NULL;
        const args_option_t *opt;
        char *vals[2];

        if (strcmp(arg, ":") == 0) {
            if (app->argv == NULL) {
                return args_error("a segment has no program before ':'");
            }
            app = args_app_new(opts);
            if (app == NULL) {
                return args_error("out of memory");
            }
            i++;
            continue;
        }
        if (arg[0] != '-' || arg[1] == '\0' || strcmp(arg, "--") == 0) {
            int j;

            if (strcmp(arg, "--") == 0) {
                i++;
                if (i == argc) {
                    break;
                }
            }
            /* The program and its arguments run to the next lone ':',
             * which becomes the NULL that ends this segment's argv. */
            app->argv = &argv[i];
            for (j = i; j < argc && strcmp(argv[j], ":") != 0; j++) {
            }
            if (j < argc) {
                argv[j] = NULL;
                app = args_app_new(opts);
                if (app == NULL) {
                    return args_error("out of memory");
                }
                if (j + 1 == argc) {
                    return args_error("nothing follows the last ':'");
                }
            }
            i = j + 1;
            continue;
        }

        opt = args_option_find(arg, &inline_value);
        if (opt == NULL) {
            return args_error("unknown option '%s'", arg);
        }
        if (inline_value != NULL && opt->nargs != 1) {
            return args_error("option '%s' does not take '=value'", arg);
        }
        if (inline_value != NULL) {
            vals[0] = (char *)inline_value;
        } else {
            if (i + opt->nargs >= argc) {
                return args_error("option '%s' needs more arguments", arg);
            }
            for (int k = 0; k < opt->nargs; k++) {
                vals[k] = argv[i + 1 + k];
            }
            i += opt->nargs;
        }
        i++;
        rc = args_apply(opts, app, opt, vals, done_p);
        if (rc != 0 || *done_p) {
            return rc;
        }
    }

    if (opts->apps[opts->napps - 1].argv == NULL) {
        return args_error("no program given");
    }
    for (int k = 0; k < opts->napps; k++) {
        app = &opts->apps[k];
        if (app->nprocs < 0) {
            app->nprocs = 1;
        }
        if (app->wdir == NULL) {
            app->wdir = opts->apps[0].wdir;
        }
    }
    if (opts->timeout_text == NULL) {
        return args_timeout_from_env(opts);
    }
    return 0;
}

void mpiexec_args_free(mpiexec_opts_t *opts)
{
    for (int k = 0; k < opts->napps; k++) {
        free(opts->apps[k].env.vars);
        free(opts->apps[k].path);
    }
    free(opts->apps);
    free(opts->genv.vars);
    free(opts->hosts);
    memset(opts, 0, sizeof(*opts));
}
