/* The command line: MPICH Hydra's spelling, the keys the MPI standard
 * reserves for mpiexec (-n, -soft, -host, -arch, -wdir, -path, -file), and
 * the Open MPI options that scripts commonly carry (-x, --tag-output,
 * --hostfile, --map-by, --mca, ...).
 *
 * The line is a list of segments separated by ':'; each segment has
 * options, then the program and its arguments (which end at the next ':').
 * Global options (-genv, -x, -l, --timeout, --bind-to, -usize, -hosts, host
 * files, -ppn) may appear in any segment and apply to the whole job; local
 * ones (-n, -soft, -arch, -path, -env, -wdir) apply to their segment. A
 * segment without -wdir uses the first segment's, so that
 * `mpiexec -wdir D -n 1 a : -n 1 b` runs both in D. -file (also
 * -configfile, --app) reads segments from a file, one a line. */
#include "mpiexec.h"
#include "pmi.h"

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
    ARGS_HOSTFILE,
    ARGS_PPN,
    ARGS_MAP,
    ARGS_REPORT,
    ARGS_SOFT,
    ARGS_ARCH,
    ARGS_PATH,
    ARGS_FILE,
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
    {"c", ARGS_NPROCS, 1},
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
    {"f", ARGS_HOSTFILE, 1},
    {"hostfile", ARGS_HOSTFILE, 1},
    {"machinefile", ARGS_HOSTFILE, 1},
    {"default-hostfile", ARGS_HOSTFILE, 1},
    {"ppn", ARGS_PPN, 1},
    {"perhost", ARGS_PPN, 1},
    {"npernode", ARGS_PPN, 1},
    {"N", ARGS_PPN, 1},
    {"map-by", ARGS_MAP, 1},
    {"report-bindings", ARGS_REPORT, 0},
    {"print-rank-map", ARGS_REPORT, 0},
    {"display-map", ARGS_REPORT, 0},
    {"soft", ARGS_SOFT, 1},
    {"arch", ARGS_ARCH, 1},
    {"path", ARGS_PATH, 1},
    {"file", ARGS_FILE, 1},
    {"configfile", ARGS_FILE, 1},
    {"app", ARGS_FILE, 1},
    {"h", ARGS_HELP, 0},
    {"help", ARGS_HELP, 0},
    {"version", ARGS_VERSION, 0},
    /* Defaults here already, or meaningless on one node: accepted so that
     * scripts written for Hydra or Open MPI run unchanged. */
    {"genvall", ARGS_IGNORED, 0},
    {"envall", ARGS_IGNORED, 0},
    {"oversubscribe", ARGS_IGNORED, 0},
    {"allow-run-as-root", ARGS_IGNORED, 0},
    {"rank-by", ARGS_IGNORED, 1},
    {"launcher", ARGS_IGNORED, 1},
    {"bootstrap", ARGS_IGNORED, 1},
    {"prefix", ARGS_IGNORED, 1},
    {"v", ARGS_IGNORED, 0},
    {"verbose", ARGS_IGNORED, 0},
    /* Open MPI's component parameters name nothing of Halo's. */
    {"mca", ARGS_IGNORED, 2},
    {"gmca", ARGS_IGNORED, 2},
};

static void args_usage(FILE *f)
{
    fputs("Usage: mpiexec [options] [-n N] program [args...] [: [-n N] program [args...]]...\n"
          "       mpirun ... (the same program)\n"
          "\n"
          "Starts N ranks of each program on this node; ranks are numbered in order across\n"
          "the ':'-separated segments (MPMD), and get_appnum gives each segment's index.\n"
          "\n"
          "Per segment:\n"
          "  -n, -np, -c N         number of ranks (default 1, or what -ppn or the hosts say)\n"
          "  -soft LIST            acceptable numbers of ranks, a,b:c,d:e:step,...: the largest\n"
          "                        one up to -n is started\n"
          "  -env NAME VALUE       set a variable for this segment's ranks\n"
          "  -wdir, -wd DIR        working directory (segments without one use the first's)\n"
          "  -path DIRS            ':'-separated directories searched for the program before PATH\n"
          "  -arch NAME            accepted (one architecture here); seen in MPI_INFO_ENV\n"
          "  -file, -configfile, --app FILE\n"
          "                        segments read from FILE, one a line ('#' starts a comment)\n"
          "Whole job:\n"
          "  -genv NAME VALUE      set a variable for all ranks\n"
          "  -x NAME[=VALUE]       set, or forward from mpiexec's environment (Open MPI style)\n"
          "  -l, --label           prefix each output line with \"[rank] \" (--tag-output)\n"
          "  --timeout S           end the job after S seconds, exit status 124\n"
          "                        (default from HALO_TIMEOUT or MPIEXEC_TIMEOUT)\n"
          "  --bind-to WHAT        core (the default; also hwthread): bind rank i of the node to\n"
          "                        the i-th CPU mpiexec may use, round robin when there are more\n"
          "                        ranks; socket (package), numa, l3cache: to the CPUs sharing\n"
          "                        that CPU's package, NUMA node or L3 cache; board: to all of\n"
          "                        mpiexec's CPUs; none: leave placement to the kernel\n"
          "  --report-bindings     say each rank's CPUs on stderr (-print-rank-map, --display-map)\n"
          "  -usize N              MPI_UNIVERSE_SIZE of the ranks (default: not set)\n"
          "  -hosts, -host LIST    comma-separated hosts, host:N for N ranks; only this node is\n"
          "                        supported yet\n"
          "  -f, --hostfile, -machinefile FILE\n"
          "                        hosts a line (host, host:N or host slots=N); this node only\n"
          "  -ppn, --npernode N    ranks per node; with one node, the default of -n\n"
          "  --map-by ppr:N:node   as --npernode N; other mappings place nothing on one node\n"
          "  --help, --version\n"
          "Accepted and ignored: -genvall, -envall, --oversubscribe, --allow-run-as-root,\n"
          "--rank-by X, -launcher X, -bootstrap X, --prefix X, -v, --mca NAME VALUE.\n"
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

static int args_host_not_local(const char *host, size_t len)
{
    char name[256];

    snprintf(name, sizeof(name), "%.*s", (int)len, host);
    return args_error("multi-node launch is not supported yet: host '%s' is not this node", name);
}

/* Adds n ranks to the slots the hosts name, saturating. */
static void args_slots_add(mpiexec_opts_t *opts, long n)
{
    opts->slots = n > INT_MAX - opts->slots ? INT_MAX : opts->slots + (int)n;
}

/* A -hosts list: "a,b:2,c"; each entry must name this node; host:N counts
 * N ranks, a bare host one. */
static int args_hosts_add(mpiexec_opts_t *opts, const char *list)
{
    const char *p = list;

    while (*p != '\0') {
        size_t len = strcspn(p, ","), name_len = strcspn(p, ",:");
        long n = 1;

        if (name_len > len) {
            name_len = len;
        }
        if (name_len > 0 && !args_host_is_local(p, name_len)) {
            return args_host_not_local(p, name_len);
        }
        if (name_len < len) {
            char *endp;

            n = strtol(p + name_len + 1, &endp, 10);
            if (endp != p + len || n < 1) {
                return args_error("-hosts: '%.*s' is not host or host:N", (int)len, p);
            }
        }
        if (name_len > 0) {
            args_slots_add(opts, n);
        }
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    return 0;
}

/* A host file, as Hydra and Open MPI write them: a host a line, "host",
 * "host:N" or "host slots=N" (max_slots and other words after the name are
 * allowed and ignored), '#' to the end of the line a comment. */
static int args_hostfile_read(mpiexec_opts_t *opts, const char *file)
{
    FILE *f = fopen(file, "r");
    char line[1024];
    int lineno = 0, rc = 0;

    if (f == NULL) {
        return args_error("host file '%s': %s", file, strerror(errno));
    }
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        char *p = line, *word;
        size_t len, name_len;
        long n = 1;

        lineno++;
        line[strcspn(line, "#\n")] = '\0';
        p += strspn(p, " \t\r");
        len = strcspn(p, " \t\r");
        if (len == 0) {
            continue;
        }
        name_len = strcspn(p, ":");
        if (name_len > len) {
            name_len = len;
        }
        if (!args_host_is_local(p, name_len)) {
            rc = args_host_not_local(p, name_len);
            break;
        }
        if (name_len < len) {
            n = strtol(p + name_len + 1, &word, 10);
            if (word != p + len || n < 1) {
                rc = args_error("host file '%s', line %d: '%.*s' is not host or host:N", file,
                                lineno, (int)len, p);
                break;
            }
        }
        for (word = p + len; *word != '\0';) {
            size_t wlen;

            word += strspn(word, " \t\r");
            wlen = strcspn(word, " \t\r");
            if (wlen > 6 && strncmp(word, "slots=", 6) == 0) {
                char *endp;

                n = strtol(word + 6, &endp, 10);
                if (endp != word + wlen || n < 1) {
                    rc = args_error("host file '%s', line %d: bad '%.*s'", file, lineno, (int)wlen,
                                    word);
                    break;
                }
            }
            word += wlen;
        }
        args_slots_add(opts, n);
    }
    fclose(f);
    return rc;
}

static mpiexec_app_t *args_app_new(mpiexec_opts_t *opts)
{
    mpiexec_app_t *apps = realloc(opts->apps, sizeof(*apps) * (size_t)(opts->napps + 1));

    if (apps == NULL) {
        return NULL;
    }
    opts->apps = apps;
    memset(&apps[opts->napps], 0, sizeof(apps[0]));
    apps[opts->napps].maxprocs = -1;
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
        if (args_parse_int(vals[0], 1, &app->maxprocs) != 0) {
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
    case ARGS_BIND: {
        /* Open MPI's qualifiers (core:overload-allowed, :if-supported) ask
         * nothing more here; Hydra's counts (core:2) are not supported. */
        static const struct {
            const char *name;
            int bind;
        } levels[] = {
            {"core", MPIEXEC_BIND_CORE},       {"hwthread", MPIEXEC_BIND_CORE},
            {"none", MPIEXEC_BIND_NONE},       {"socket", MPIEXEC_BIND_SOCKET},
            {"package", MPIEXEC_BIND_SOCKET},  {"numa", MPIEXEC_BIND_NUMA},
            {"l3cache", MPIEXEC_BIND_L3CACHE}, {"board", MPIEXEC_BIND_BOARD},
        };
        size_t len = strcspn(vals[0], ":");
        const char *qual = vals[0] + len;

        opts->bind = -1;
        for (size_t k = 0; k < sizeof(levels) / sizeof(levels[0]); k++) {
            if (strlen(levels[k].name) == len && strncmp(levels[k].name, vals[0], len) == 0) {
                opts->bind = levels[k].bind;
            }
        }
        if (opts->bind < 0 || (*qual == ':' && (qual[1] < 'a' || qual[1] > 'z'))) {
            return args_error("--bind-to takes core, hwthread, socket, numa, l3cache, board or "
                              "none, not '%s'", vals[0]);
        }
        break;
    }
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
        return args_hosts_add(opts, vals[0]);
    }
    case ARGS_HOSTFILE:
        return args_hostfile_read(opts, vals[0]);
    case ARGS_PPN:
        if (args_parse_int(vals[0], 1, &opts->ppn) != 0) {
            return args_error("%s needs a positive number of ranks per node, not '%s'", opt->name,
                              vals[0]);
        }
        break;
    case ARGS_MAP:
        /* ppr:N:node is N ranks a node; the other policies choose among
         * nodes, sockets or cores, which --bind-to decides here. */
        if (strncmp(vals[0], "ppr:", 4) == 0 && strstr(vals[0] + 4, ":node") != NULL) {
            char num[16];

            snprintf(num, sizeof(num), "%.*s", (int)strcspn(vals[0] + 4, ":"), vals[0] + 4);
            if (args_parse_int(num, 1, &opts->ppn) != 0) {
                return args_error("--map-by needs ppr:N:node with N positive, not '%s'", vals[0]);
            }
        }
        break;
    case ARGS_REPORT:
        opts->report_bindings = 1;
        break;
    case ARGS_SOFT:
        if (halo_soft_pick(vals[0], INT_MAX) < 0) {
            return args_error("-soft needs a list of a, a:b or a:b:c, not '%s'", vals[0]);
        }
        app->soft = vals[0];
        break;
    case ARGS_ARCH:
        app->arch = vals[0];
        break;
    case ARGS_PATH:
        app->dirs = vals[0];
        break;
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

/* A segment that a -file's end opened and nothing filled. */
static int args_app_is_empty(const mpiexec_app_t *app)
{
    return app->argv == NULL && app->maxprocs < 0 && app->env.n == 0 && app->wdir == NULL &&
           app->soft == NULL && app->arch == NULL && app->dirs == NULL;
}

static int args_owned_add(mpiexec_opts_t *opts, char *p)
{
    char **owned = realloc(opts->owned, sizeof(*owned) * (size_t)(opts->nowned + 1));

    if (owned == NULL) {
        free(p);
        return -1;
    }
    opts->owned = owned;
    owned[opts->nowned++] = p;
    return 0;
}

static int args_parse_list(mpiexec_opts_t *opts, int argc, char **argv, const char *file,
                           int *done_p);

/* -file: the file's lines are segments, as if written on the command line
 * with ':' between them. Words are split at blanks; '...' and "..." keep
 * blanks in a word, and a backslash the next character (but within '...');
 * '#' at a word's start comments out the rest of the line. The text and the word vector live as long as opts (argv points
 * into them). */
static int args_file_read(mpiexec_opts_t *opts, const char *file, int *done_p)
{
    FILE *f = fopen(file, "r");
    char *text = NULL, **words = NULL, *out;
    size_t len = 0, nwords = 0, cap;
    int line_words = 0;

    if (f == NULL) {
        return args_error("-file '%s': %s", file, strerror(errno));
    }
    {
        char chunk[4096];
        size_t got;

        while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
            char *t = realloc(text, len + got + 1);

            if (t == NULL) {
                free(text);
                fclose(f);
                return args_error("out of memory reading '%s'", file);
            }
            text = t;
            memcpy(text + len, chunk, got);
            len += got;
        }
    }
    fclose(f);
    if (text == NULL || args_owned_add(opts, text) != 0) {
        return args_error("-file '%s': %s", file, text == NULL ? "empty" : "out of memory");
    }
    text[len] = '\0';
    /* At most one word and one ':' a byte, and the final NULL. */
    cap = 2 * len + 2;
    words = malloc(sizeof(*words) * cap);
    if (words == NULL || args_owned_add(opts, (char *)words) != 0) {
        return args_error("out of memory reading '%s'", file);
    }
    /* Words are unquoted in place: out never passes the reading point. */
    for (char *p = text; *p != '\0';) {
        if (*p == '\n') {
            if (line_words > 0) {
                words[nwords++] = (char *)":";
            }
            line_words = 0;
            p++;
            continue;
        }
        if (*p == ' ' || *p == '\t' || *p == '\r') {
            p++;
            continue;
        }
        if (*p == '\\' && p[1] == '\n') {
            p += 2;
            continue;
        }
        if (*p == '#') {
            p += strcspn(p, "\n");
            continue;
        }
        words[nwords++] = out = p;
        line_words++;
        while (*p != '\0' && *p != '\n' && *p != ' ' && *p != '\t' && *p != '\r') {
            if (*p == '\\' && p[1] == '\n') {
                p += 2; /* the line goes on */
            } else if (*p == '\\' && p[1] != '\0') {
                p++;
                *out++ = *p++;
            } else if (*p == '\'' || *p == '"') {
                char q = *p++;

                while (*p != '\0' && *p != q) {
                    if (q == '"' && *p == '\\' && p[1] != '\0') {
                        p++;
                    }
                    *out++ = *p++;
                }
                if (*p != q) {
                    return args_error("-file '%s': a quote is not closed", file);
                }
                p++;
            } else {
                *out++ = *p++;
            }
        }
        {
            int eol = *p == '\n';

            if (*p != '\0') {
                p++;
            }
            /* May overwrite the blank or newline just passed, never more. */
            *out = '\0';
            if (eol) {
                words[nwords++] = (char *)":";
                line_words = 0;
            }
        }
    }
    if (nwords > 0 && strcmp(words[nwords - 1], ":") == 0) {
        nwords--;
    }
    words[nwords] = NULL;
    if (nwords == 0) {
        return args_error("-file '%s' names no program", file);
    }
    return args_parse_list(opts, (int)nwords, words, file, done_p);
}

/* Parses argv[0..argc-1] into opts; the segment being filled is always the
 * last of opts->apps (file: the -file being read, or NULL). */
static int args_parse_list(mpiexec_opts_t *opts, int argc, char **argv, const char *file,
                           int *done_p)
{
    mpiexec_app_t *app = &opts->apps[opts->napps - 1];
    int i = 0, rc, after_file = 0;

    while (i < argc) {
        const char *arg = argv[i], *inline_value = NULL;
        const args_option_t *opt;
        char *vals[2];

        if (file != NULL && app->file == NULL) {
            app->file = file;
        }
        if (strcmp(arg, ":") == 0) {
            if (after_file && args_app_is_empty(app)) {
                /* "-file F : ..." ends the file's last segment: F did. */
                after_file = 0;
                i++;
                continue;
            }
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
        if (opt->id == ARGS_FILE) {
            if (file != NULL) {
                return args_error("-file '%s' names another file, '%s'", file, vals[0]);
            }
            if (app->argv != NULL) {
                return args_error("-file '%s' follows a program; put ':' between them", vals[0]);
            }
            rc = args_file_read(opts, vals[0], done_p);
            if (rc != 0 || *done_p) {
                return rc;
            }
            /* What follows on the command line starts a segment of its own. */
            app = args_app_new(opts);
            if (app == NULL) {
                return args_error("out of memory");
            }
            after_file = 1;
            continue;
        }
        rc = args_apply(opts, app, opt, vals, done_p);
        if (rc != 0 || *done_p) {
            return rc;
        }
    }
    return 0;
}

int mpiexec_args_parse(int argc, char **argv, mpiexec_opts_t *opts_p, int *done_p)
{
    mpiexec_opts_t *opts = opts_p;
    mpiexec_app_t *app;
    int rc;

    memset(opts, 0, sizeof(*opts));
    opts->usize = -1;
    *done_p = 0;
    if (args_app_new(opts) == NULL) {
        return args_error("out of memory");
    }
    rc = args_parse_list(opts, argc - 1, argv + 1, NULL, done_p);
    if (rc != 0 || *done_p) {
        return rc;
    }
    if (opts->napps > 1 && args_app_is_empty(&opts->apps[opts->napps - 1])) {
        opts->napps--;
    }
    if (opts->apps[opts->napps - 1].argv == NULL) {
        return args_error("no program given");
    }
    for (int k = 0; k < opts->napps; k++) {
        app = &opts->apps[k];
        /* Without -n, one node's share of -ppn, else the ranks the hosts
         * name, for a job of one segment; else 1. */
        app->nprocs = app->maxprocs;
        if (app->nprocs < 0) {
            app->nprocs = opts->napps > 1 ? 1 : opts->ppn > 0 ? opts->ppn
                                            : opts->slots > 0 ? opts->slots : 1;
        }
        if (app->soft != NULL) {
            long pick = halo_soft_pick(app->soft, app->maxprocs > 0 ? app->maxprocs : INT_MAX);

            if (pick <= 0) {
                return args_error("-soft '%s' allows no number of ranks from 1 to %d", app->soft,
                                  app->maxprocs > 0 ? app->maxprocs : INT_MAX);
            }
            app->nprocs = (int)pick;
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
    for (int k = 0; k < opts->nowned; k++) {
        free(opts->owned[k]);
    }
    free(opts->owned);
    memset(opts, 0, sizeof(*opts));
}
