/* Choice of an algorithm per call (select.h): the variables that force
 * one, the tuning tables (built in, then HALO_TUNING_FILE), and what
 * `halo_info --coll` prints about them.
 *
 * Tables are loaded once, at MPI initialization (or by halo_info), before
 * any collective can run; after that they are only read. */
#include "coll/select.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include "coll/tuning_json.h"
#include "core/config.h"
#include "core/cpu.h"
#include "progress/progress.h"
#include "transport/transport.h"

HALO_CFG_STR(cfg_tuning_file, "HALO_TUNING_FILE", "",
             "JSON file of collective tuning rules, over the built-in table (docs/collectives.md)");

#define ALGO_VAR(var, NAME, coll)                                                             \
    HALO_CFG_STR(var, "HALO_" NAME "_ALGORITHM", "auto",                                       \
                 "force the " coll " algorithm (auto: the tuning table; `halo_info --coll` lists them)")

ALGO_VAR(cfg_barrier, "BARRIER", "barrier");
ALGO_VAR(cfg_bcast, "BCAST", "bcast");
ALGO_VAR(cfg_gather, "GATHER", "gather");
ALGO_VAR(cfg_gatherv, "GATHERV", "gatherv");
ALGO_VAR(cfg_scatter, "SCATTER", "scatter");
ALGO_VAR(cfg_scatterv, "SCATTERV", "scatterv");
ALGO_VAR(cfg_allgather, "ALLGATHER", "allgather");
ALGO_VAR(cfg_allgatherv, "ALLGATHERV", "allgatherv");
ALGO_VAR(cfg_alltoall, "ALLTOALL", "alltoall");
ALGO_VAR(cfg_alltoallv, "ALLTOALLV", "alltoallv");
ALGO_VAR(cfg_alltoallw, "ALLTOALLW", "alltoallw");
ALGO_VAR(cfg_reduce, "REDUCE", "reduce");
ALGO_VAR(cfg_allreduce, "ALLREDUCE", "allreduce");
ALGO_VAR(cfg_reduce_scatter, "REDUCE_SCATTER", "reduce_scatter");
ALGO_VAR(cfg_reduce_scatter_block, "REDUCE_SCATTER_BLOCK", "reduce_scatter_block");
ALGO_VAR(cfg_scan, "SCAN", "scan");
ALGO_VAR(cfg_exscan, "EXSCAN", "exscan");
ALGO_VAR(cfg_neighbor_allgather, "NEIGHBOR_ALLGATHER", "neighbor_allgather");
ALGO_VAR(cfg_neighbor_allgatherv, "NEIGHBOR_ALLGATHERV", "neighbor_allgatherv");
ALGO_VAR(cfg_neighbor_alltoall, "NEIGHBOR_ALLTOALL", "neighbor_alltoall");
ALGO_VAR(cfg_neighbor_alltoallv, "NEIGHBOR_ALLTOALLV", "neighbor_alltoallv");
ALGO_VAR(cfg_neighbor_alltoallw, "NEIGHBOR_ALLTOALLW", "neighbor_alltoallw");

static halo_cfg_t *const algo_vars[HALO_COLL_NKINDS] = {
    [HALO_COLL_BARRIER] = &cfg_barrier,
    [HALO_COLL_BCAST] = &cfg_bcast,
    [HALO_COLL_GATHER] = &cfg_gather,
    [HALO_COLL_GATHERV] = &cfg_gatherv,
    [HALO_COLL_SCATTER] = &cfg_scatter,
    [HALO_COLL_SCATTERV] = &cfg_scatterv,
    [HALO_COLL_ALLGATHER] = &cfg_allgather,
    [HALO_COLL_ALLGATHERV] = &cfg_allgatherv,
    [HALO_COLL_ALLTOALL] = &cfg_alltoall,
    [HALO_COLL_ALLTOALLV] = &cfg_alltoallv,
    [HALO_COLL_ALLTOALLW] = &cfg_alltoallw,
    [HALO_COLL_REDUCE] = &cfg_reduce,
    [HALO_COLL_ALLREDUCE] = &cfg_allreduce,
    [HALO_COLL_REDUCE_SCATTER] = &cfg_reduce_scatter,
    [HALO_COLL_REDUCE_SCATTER_BLOCK] = &cfg_reduce_scatter_block,
    [HALO_COLL_SCAN] = &cfg_scan,
    [HALO_COLL_EXSCAN] = &cfg_exscan,
    [HALO_COLL_NEIGHBOR_ALLGATHER] = &cfg_neighbor_allgather,
    [HALO_COLL_NEIGHBOR_ALLGATHERV] = &cfg_neighbor_allgatherv,
    [HALO_COLL_NEIGHBOR_ALLTOALL] = &cfg_neighbor_alltoall,
    [HALO_COLL_NEIGHBOR_ALLTOALLV] = &cfg_neighbor_alltoallv,
    [HALO_COLL_NEIGHBOR_ALLTOALLW] = &cfg_neighbor_alltoallw,
};

typedef struct tune_rule {
    long long comm_min, comm_max;   /* ranks, inclusive */
    long long ppn_min, ppn_max;     /* ranks per node (the largest node group), inclusive */
    long long msg_min, msg_max;     /* bytes, inclusive */
    int oversub;                    /* "oversubscribed": -1 either, 0 false, 1 true */
    int commute;                    /* "commutative" (the operation; true where there is
                                     * none): -1 either, 0 false, 1 true */
    int bound;                      /* "bound" (every rank of the node bound to one CPU):
                                     * -1 either, 0 false, 1 true; such a rule applies to
                                     * communicators on one node only, as "cpu" */
    int cpu;                        /* "cpu": -1 any, else a halo_cpu_t; such a rule applies
                                     * to communicators on one node only, so that nodes of
                                     * another make never choose differently in one call */
    const halo_coll_algo_t *algo;
} tune_rule_t;

typedef struct tune_table {
    tune_rule_t *rules;
    int n;
    const char *source;             /* "built-in" or the file's path */
} tune_table_t;

static tune_table_t tables[HALO_COLL_NKINDS];
static const halo_coll_algo_t *forced[HALO_COLL_NKINDS];
static bool warned[HALO_COLL_NKINDS];
static bool loaded;
static bool node_oversub;

/* Whether `ranks` ranks outnumber the processors the job's ranks on this
 * node share (halo_progress_job_cpus). */
static bool more_than_processors(long ranks)
{
    long ncpu = halo_progress_job_cpus();
    return ncpu > 0 && ranks > ncpu;
}

bool halo_coll_node_oversubscribed(void)
{
    halo_coll_select_init();
    return node_oversub;
}

/* Warnings about the configuration come from one rank of the job only. */
#define CONFIG_WARN(...)                                                                      \
    do {                                                                                      \
        if (halo_world.rank == 0)                                                             \
            halo_warn(__VA_ARGS__);                                                           \
    } while (0)

/* ---------------------------------------------------------------- tuning tables */

static bool rule_bound(const halo_json_t *v, const char *key, const char *where, long long *out)
{
    if (v->type != HALO_JSON_INT || v->num < 0) {
        CONFIG_WARN("%s:%d:%d: \"%s\" must be a non-negative integer; rule ignored", where, v->line,
                    v->col, key);
        return false;
    }
    *out = v->num;
    return true;
}

/* A rule's true-or-false key: *out becomes 1 or 0. */
static bool rule_flag(const halo_json_t *v, const char *key, const char *where, int *out)
{
    if (v->type != HALO_JSON_BOOL) {
        CONFIG_WARN("%s:%d:%d: \"%s\" must be true or false; rule ignored", where, v->line, v->col, key);
        return false;
    }
    *out = v->num != 0;
    return true;
}

/* Reads one collective's rules; false (and a warning) if the list is unusable. */
static bool load_rules(halo_coll_kind_t kind, const halo_json_t *list, const char *where,
                       tune_table_t *t)
{
    if (list->type != HALO_JSON_ARRAY) {
        CONFIG_WARN("%s:%d:%d: \"%s\" must be an array of rules; ignored", where, list->line, list->col,
                    halo_coll_kind_name(kind));
        return false;
    }
    t->rules = halo_calloc((size_t)(list->n ? list->n : 1), sizeof(tune_rule_t));
    t->n = 0;
    for (int i = 0; i < list->n; i++) {
        const halo_json_t *r = &list->items[i];
        if (r->type != HALO_JSON_OBJECT) {
            CONFIG_WARN("%s:%d:%d: a rule must be an object; ignored", where, r->line, r->col);
            continue;
        }
        tune_rule_t rule = {0, LLONG_MAX, 0, LLONG_MAX, 0, LLONG_MAX, -1, -1, -1, -1, NULL};
        bool ok = true;
        for (int k = 0; k < r->n && ok; k++) {
            const char *key = r->keys[k];
            const halo_json_t *v = &r->items[k];
            if (key[0] == '_')
                continue;   /* comments */
            if (!strcmp(key, "comm_size_min"))
                ok = rule_bound(v, key, where, &rule.comm_min);
            else if (!strcmp(key, "comm_size_max"))
                ok = rule_bound(v, key, where, &rule.comm_max);
            else if (!strcmp(key, "ppn_min"))
                ok = rule_bound(v, key, where, &rule.ppn_min);
            else if (!strcmp(key, "ppn_max"))
                ok = rule_bound(v, key, where, &rule.ppn_max);
            else if (!strcmp(key, "msg_size_min"))
                ok = rule_bound(v, key, where, &rule.msg_min);
            else if (!strcmp(key, "msg_size_max"))
                ok = rule_bound(v, key, where, &rule.msg_max);
            else if (!strcmp(key, "oversubscribed"))
                ok = rule_flag(v, key, where, &rule.oversub);
            else if (!strcmp(key, "bound"))
                ok = rule_flag(v, key, where, &rule.bound);
            else if (!strcmp(key, "commutative"))
                ok = rule_flag(v, key, where, &rule.commute);
            else if (!strcmp(key, "cpu")) {
                if (v->type == HALO_JSON_STRING && !strcmp(v->str, "intel"))
                    rule.cpu = HALO_CPU_INTEL;
                else if (v->type == HALO_JSON_STRING && !strcmp(v->str, "amd"))
                    rule.cpu = HALO_CPU_AMD;
                else if (v->type == HALO_JSON_STRING && !strcmp(v->str, "other"))
                    rule.cpu = HALO_CPU_OTHER;
                else {
                    CONFIG_WARN("%s:%d:%d: \"cpu\" must be \"intel\", \"amd\" or \"other\"; rule ignored",
                                where, v->line, v->col);
                    ok = false;
                }
            } else if (!strcmp(key, "algorithm")) {
                if (v->type != HALO_JSON_STRING) {
                    CONFIG_WARN("%s:%d:%d: \"algorithm\" must be a string; rule ignored", where, v->line,
                                v->col);
                    ok = false;
                } else if (!(rule.algo = halo_coll_algo_find(kind, v->str))) {
                    CONFIG_WARN("%s:%d:%d: %s has no algorithm \"%s\" (`halo_info --coll` lists them); "
                                "rule ignored", where, v->line, v->col, halo_coll_kind_name(kind), v->str);
                    ok = false;
                }
            } else {
                CONFIG_WARN("%s:%d:%d: unknown key \"%s\" in a rule (ignored)", where, v->line, v->col, key);
            }
        }
        if (ok && !rule.algo) {
            CONFIG_WARN("%s:%d:%d: a rule needs an \"algorithm\"; ignored", where, r->line, r->col);
            ok = false;
        }
        if (ok)
            t->rules[t->n++] = rule;
    }
    if (list->n > 0 && t->n == 0) {
        CONFIG_WARN("%s:%d:%d: no usable rule for %s; its previous rules stay", where, list->line,
                    list->col, halo_coll_kind_name(kind));
        free(t->rules);
        t->rules = NULL;
        return false;
    }
    return true;
}

/* Loads a table in JSON text; each collective it names replaces that
 * collective's rules. Returns false (after a warning) if it cannot be used. */
static bool load_tuning(const char *text, const char *where)
{
    char err[256];
    halo_json_t *root = halo_json_parse(text, err, sizeof err);
    if (!root) {
        CONFIG_WARN("%s:%s; the file is ignored", where, err);
        return false;
    }
    if (root->type != HALO_JSON_OBJECT) {
        CONFIG_WARN("%s: the top level must be an object; the file is ignored", where);
        halo_json_free(root);
        return false;
    }
    for (int i = 0; i < root->n; i++) {
        const char *key = root->keys[i];
        if (key[0] == '_')
            continue;
        int kind = halo_coll_kind_from_name(key);
        if (kind < 0) {
            CONFIG_WARN("%s:%d:%d: unknown collective \"%s\" (ignored)", where, root->items[i].line,
                        root->items[i].col, key);
            continue;
        }
        tune_table_t t = {NULL, 0, where};
        if (!load_rules((halo_coll_kind_t)kind, &root->items[i], where, &t))
            continue;
        free(tables[kind].rules);
        tables[kind] = t;
    }
    halo_json_free(root);
    return true;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        CONFIG_WARN("HALO_TUNING_FILE=%s: cannot open it (%s); using the built-in table", path,
                    strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = halo_malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            cap *= 2;
            buf = halo_realloc(buf, cap);
        }
        if (len > (64u << 20))
            break;
    }
    fclose(f);
    buf[len] = '\0';
    if (strlen(buf) != len) {
        CONFIG_WARN("HALO_TUNING_FILE=%s: not a text file; using the built-in table", path);
        free(buf);
        return NULL;
    }
    return buf;
}

void halo_coll_select_init(void)
{
    if (loaded)
        return;
    loaded = true;
    /* From the node's online processors, not this process's affinity: every
     * rank of the node must see the same facts (halo_coll_facts_t). */
    node_oversub = more_than_processors(halo_world.local_size);
    if (!load_tuning(halo_coll_tuning_default, "built-in"))
        halo_fatal("the built-in collective tuning table does not parse");
    const char *path = halo_cfg_get_str(&cfg_tuning_file);
    if (path && *path) {
        char *text = read_file(path);
        if (text) {
            load_tuning(text, path);
            free(text);
        }
    }
    for (int k = 0; k < HALO_COLL_NKINDS; k++) {
        const char *v = halo_cfg_get_str(algo_vars[k]);
        if (!v || !*v || !strcmp(v, "auto"))
            continue;
        forced[k] = halo_coll_algo_find((halo_coll_kind_t)k, v);
        if (!forced[k]) {
            char names[512];
            size_t n = 0;
            names[0] = '\0';
            for (int i = 0; i < halo_coll_nalgos; i++)
                if ((int)halo_coll_algos[i].coll == k && n < sizeof names)
                    n += (size_t)snprintf(names + n, sizeof names - n, " %s", halo_coll_algos[i].name);
            CONFIG_WARN("%s=%s: no such %s algorithm (there are:%s); choosing by the tuning table",
                        algo_vars[k]->name, v, halo_coll_kind_name((halo_coll_kind_t)k), names);
        }
    }
}

/* ---------------------------------------------------------------- selection */

static MPI_Count tsize(MPI_Datatype t)
{
    return halo_dtype_ptr(t)->size;
}

MPI_Count halo_coll_msg_bytes(const halo_coll_args_t *a, halo_comm_t *c)
{
    int p = c->size;
    MPI_Count sum = 0;
    switch (a->kind) {
    case HALO_COLL_BCAST:
    case HALO_COLL_REDUCE:
    case HALO_COLL_ALLREDUCE:
    case HALO_COLL_SCAN:
    case HALO_COLL_EXSCAN:
        return a->count * tsize(a->type);
    case HALO_COLL_GATHER:
        return c->rank == a->root ? a->rcount * tsize(a->rtype) : a->scount * tsize(a->stype);
    case HALO_COLL_SCATTER:
        return c->rank == a->root ? a->scount * tsize(a->stype) : a->rcount * tsize(a->rtype);
    case HALO_COLL_ALLGATHER:
    case HALO_COLL_ALLTOALL:
        return a->rcount * tsize(a->rtype);
    case HALO_COLL_ALLGATHERV:
        for (int i = 0; i < p; i++)
            sum += a->rcounts[i];
        return sum * tsize(a->rtype) / p;
    case HALO_COLL_REDUCE_SCATTER:
        for (int i = 0; i < p; i++)
            sum += a->rcounts[i];
        return sum * tsize(a->type);
    case HALO_COLL_REDUCE_SCATTER_BLOCK:
        return (MPI_Count)p * a->count * tsize(a->type);
    default:
        /* Barrier, the v and w forms whose sizes only the root or each
         * rank knows, and the neighborhood collectives (which have one
         * algorithm): by communicator size only. */
        return 0;
    }
}

/* By the table, then the registry's order. */
static const halo_coll_algo_t *choose(halo_coll_kind_t kind, const halo_coll_facts_t *f,
                                      MPI_Count bytes)
{
    const tune_table_t *t = &tables[kind];
    for (int i = 0; i < t->n; i++) {
        const tune_rule_t *r = &t->rules[i];
        if (f->p < r->comm_min || f->p > r->comm_max || f->ppn < r->ppn_min || f->ppn > r->ppn_max ||
            bytes < r->msg_min || bytes > r->msg_max || (r->oversub >= 0 && r->oversub != f->oversub) ||
            (r->commute >= 0 && r->commute != (int)f->commute) ||
            (r->bound >= 0 && (!f->one_node || r->bound != (int)f->bound)) ||
            (r->cpu >= 0 && (!f->one_node || r->cpu != (int)halo_cpu())))
            continue;
        if (!halo_coll_algo_unusable(r->algo, f))
            return r->algo;
    }
    for (int i = 0; i < halo_coll_nalgos; i++)
        if (halo_coll_algos[i].coll == kind && !halo_coll_algo_unusable(&halo_coll_algos[i], f))
            return &halo_coll_algos[i];
    return NULL;
}

/* The facts halo_info and the tests ask about: p ranks on one node, bound
 * as this node's are, or (outside a running job: halo_info) as mpiexec
 * binds them, one CPU each. */
static halo_coll_facts_t one_node_facts(int p, bool commute)
{
    bool bound = atomic_load(&halo_state) == HALO_STATE_RUNNING ? halo_tr_node_bound() : true;
    return (halo_coll_facts_t){.p = p, .ppn = p, .commute = commute, .one_node = true, .shm_type = true,
                               .oversub = more_than_processors(p), .cma = halo_tr_cma_node(),
                               .bound = bound};
}

const halo_coll_algo_t *halo_coll_select(const halo_coll_args_t *a, halo_comm_t *c)
{
    halo_coll_kind_t kind = a->kind;
    halo_coll_select_init();
    /* Temporary communicators of the communicator constructors (a fixed
     * tag, no state of their own) take message-passing algorithms only. */
    if (c->coll_tag_fixed)
        return halo_coll_select_flat(a, c);
    halo_coll_facts_t facts;
    halo_coll_facts(a, c, &facts);
    const halo_coll_algo_t *f = forced[kind];
    if (f) {
        const char *why = halo_coll_algo_unusable(f, &facts);
        if (!why)
            return f;
        if (!warned[kind] && c->rank == 0) {
            warned[kind] = true;
            halo_warn("%s=%s ignored for this call: %s; choosing by the tuning table (warned once)",
                      algo_vars[kind]->name, f->name, why);
        }
    }
    return choose(kind, &facts, halo_coll_msg_bytes(a, c));
}

bool halo_coll_block_by_shm(halo_coll_kind_t kind, halo_comm_t *c, MPI_Count bytes)
{
    halo_coll_select_init();
    halo_coll_args_t a = {.kind = kind};
    halo_coll_facts_t facts;
    halo_coll_facts(&a, c, &facts);
    const halo_coll_algo_t *al = choose(kind, &facts, bytes);
    return al && !strcmp(al->name, "shm");
}

const halo_coll_algo_t *halo_coll_select_flat(const halo_coll_args_t *a, halo_comm_t *view)
{
    halo_coll_select_init();
    halo_coll_facts_t f = {.p = view->size, .ppn = 1, .one_node = false, .shm_type = false, .flat = true,
                           .oversub = false};
    f.commute = !a->op || a->op == MPI_OP_NULL || halo_op_commutes(a->op);
    return choose(a->kind, &f, halo_coll_msg_bytes(a, view));
}

/* ---------------------------------------------------------------- halo_info */

static void print_size(char *buf, size_t len, long long v)
{
    if (v == LLONG_MAX)
        snprintf(buf, len, "inf");
    else if (v >= (1 << 20) && v % (1 << 20) == 0)
        snprintf(buf, len, "%lldM", v >> 20);
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(buf, len, "%lldK", v >> 10);
    else
        snprintf(buf, len, "%lld", v);
}

/* "p <= 3", "n in [1K, 4K]", ... into buf; returns its length (0: no bound). */
static size_t bounds_str(char *buf, size_t len, const char *what, long long lo, long long hi)
{
    char a[32], b[32];
    int n = 0;
    print_size(a, sizeof a, lo);
    print_size(b, sizeof b, hi);
    buf[0] = '\0';
    if (lo > 0 && hi != LLONG_MAX)
        n = snprintf(buf, len, "%s in [%s, %s]", what, a, b);
    else if (lo > 0)
        n = snprintf(buf, len, "%s >= %s", what, a);
    else if (hi != LLONG_MAX)
        n = snprintf(buf, len, "%s <= %s", what, b);
    return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

HALO_EXPORT void halo_tool_coll_print(FILE *out)
{
    halo_coll_select_init();
    const char *file = halo_cfg_get_str(&cfg_tuning_file);
    fprintf(out, "Collective algorithms. HALO_<COLL>_ALGORITHM=name forces one (where its\n"
                 "restrictions hold); otherwise the first matching rule of the tuning table\n"
                 "whose algorithm's restrictions hold (HALO_TUNING_FILE=%s over the built-in\n"
                 "table). Sizes: n = bytes (docs/collectives.md), p = ranks; costs in\n"
                 "a (latency), b (per byte), g (reduction per byte). Every algorithm takes\n"
                 "MPI_IN_PLACE where the collective allows it.\n",
            file && *file ? file : "(unset)");
    static const int ps[] = {2, 3, 4, 8, 16, 64};
    static const long long ns[] = {8, 1024, 16384, 262144, 4194304};
    for (int k = 0; k < HALO_COLL_NKINDS; k++) {
        const char *v = halo_cfg_get_str(algo_vars[k]);
        fprintf(out, "\n%s  (%s=%s)\n", halo_coll_kind_name((halo_coll_kind_t)k), algo_vars[k]->name, v);
        for (int i = 0; i < halo_coll_nalgos; i++) {
            const halo_coll_algo_t *al = &halo_coll_algos[i];
            if ((int)al->coll != k)
                continue;
            char restr[128];
            halo_coll_restrictions_str(al->restrictions, restr, sizeof restr);
            fprintf(out, "  %-20s restrictions: %-28s cost: %s%s\n", al->name, restr, al->cost,
                    forced[k] == al ? "   [forced]" : "");
        }
        const tune_table_t *t = &tables[k];
        fprintf(out, "  rules (%s):\n", t->source ? t->source : "none");
        for (int i = 0; i < t->n; i++) {
            const tune_rule_t *r = &t->rules[i];
            char cond[160];
            size_t n = bounds_str(cond, sizeof cond, "p", r->comm_min, r->comm_max);
            if (n)
                n += (size_t)snprintf(cond + n, sizeof cond - n, ", ");
            size_t m = bounds_str(cond + n, sizeof cond - n, "ppn", r->ppn_min, r->ppn_max);
            if (m)
                n += m + (size_t)snprintf(cond + n + m, sizeof cond - n - m, ", ");
            if (r->oversub >= 0)
                n += (size_t)snprintf(cond + n, sizeof cond - n, "%soversubscribed, ", r->oversub ? "" : "not ");
            if (r->commute >= 0)
                n += (size_t)snprintf(cond + n, sizeof cond - n, "%scommutative op, ", r->commute ? "" : "non-");
            if (r->bound >= 0)
                n += (size_t)snprintf(cond + n, sizeof cond - n, "%sbound, ", r->bound ? "" : "not ");
            if (r->cpu >= 0)
                n += (size_t)snprintf(cond + n, sizeof cond - n, "%s, ", halo_cpu_name((halo_cpu_t)r->cpu));
            if (!bounds_str(cond + n, sizeof cond - n, "n", r->msg_min, r->msg_max))
                cond[n ? n - 2 : 0] = '\0';
            fprintf(out, "    %-34s -> %s\n", cond[0] ? cond : "any", r->algo->name);
        }
        if (forced[k]) {
            fprintf(out, "  choice: %s (forced), else as the rules say\n", forced[k]->name);
            continue;
        }
        bool by_size = k != HALO_COLL_BARRIER && k != HALO_COLL_GATHERV && k != HALO_COLL_SCATTERV &&
                       k != HALO_COLL_ALLTOALLV && k != HALO_COLL_ALLTOALLW &&
                       !halo_coll_is_neighbor((halo_coll_kind_t)k);
        size_t nn = by_size ? HALO_ARRAY_LEN(ns) : 1;
        fprintf(out, "  choice (commutative op, one node, ranks bound to CPUs):\n    %6s", by_size ? "p \\ n" : "p");
        for (size_t j = 0; j < nn; j++) {
            char sz[32];
            print_size(sz, sizeof sz, ns[j]);
            fprintf(out, " %-19s", by_size ? sz : "any n");
        }
        fprintf(out, "\n");
        for (size_t i = 0; i < HALO_ARRAY_LEN(ps); i++) {
            fprintf(out, "    %6d", ps[i]);
            for (size_t j = 0; j < nn; j++) {
                halo_coll_facts_t f = one_node_facts(ps[i], true);
                const halo_coll_algo_t *al = choose((halo_coll_kind_t)k, &f, by_size ? ns[j] : 0);
                fprintf(out, " %-19s", al ? al->name : "-");
            }
            fprintf(out, "\n");
        }
    }
}

/* The algorithm HALO_<COLL>_ALGORITHM forces for a collective named as in
 * tuning files, or NULL (unset, "auto", or an unknown name). For tests
 * that must know their forcing took. */
HALO_EXPORT const char *halo_tool_coll_forced(const char *coll)
{
    halo_coll_select_init();
    int k = halo_coll_kind_from_name(coll);
    return k >= 0 && forced[k] ? forced[k]->name : NULL;
}

/* What the tables choose for a collective at p ranks and `bytes` bytes,
 * all ranks on one node (ignoring HALO_<COLL>_ALGORITHM). For tests. */
HALO_EXPORT const char *halo_tool_coll_choice(const char *coll, int p, long long bytes, int commute)
{
    halo_coll_select_init();
    int k = halo_coll_kind_from_name(coll);
    if (k < 0 || p < 1)
        return NULL;
    halo_coll_facts_t f = one_node_facts(p, commute != 0);
    const halo_coll_algo_t *al = choose((halo_coll_kind_t)k, &f, bytes);
    return al ? al->name : NULL;
}

/* The tables in force (built in, with the file's changes), as a tuning
 * file: a starting point for one's own. */
HALO_EXPORT void halo_tool_coll_print_json(FILE *out)
{
    halo_coll_select_init();
    fprintf(out, "{\n");
    for (int k = 0; k < HALO_COLL_NKINDS; k++) {
        const tune_table_t *t = &tables[k];
        fprintf(out, "  \"%s\": [\n", halo_coll_kind_name((halo_coll_kind_t)k));
        for (int i = 0; i < t->n; i++) {
            const tune_rule_t *r = &t->rules[i];
            fprintf(out, "    {");
            if (r->comm_min > 0)
                fprintf(out, "\"comm_size_min\": %lld, ", r->comm_min);
            if (r->comm_max != LLONG_MAX)
                fprintf(out, "\"comm_size_max\": %lld, ", r->comm_max);
            if (r->ppn_min > 0)
                fprintf(out, "\"ppn_min\": %lld, ", r->ppn_min);
            if (r->ppn_max != LLONG_MAX)
                fprintf(out, "\"ppn_max\": %lld, ", r->ppn_max);
            if (r->msg_min > 0)
                fprintf(out, "\"msg_size_min\": %lld, ", r->msg_min);
            if (r->msg_max != LLONG_MAX)
                fprintf(out, "\"msg_size_max\": %lld, ", r->msg_max);
            if (r->oversub >= 0)
                fprintf(out, "\"oversubscribed\": %s, ", r->oversub ? "true" : "false");
            if (r->commute >= 0)
                fprintf(out, "\"commutative\": %s, ", r->commute ? "true" : "false");
            if (r->bound >= 0)
                fprintf(out, "\"bound\": %s, ", r->bound ? "true" : "false");
            if (r->cpu >= 0)
                fprintf(out, "\"cpu\": \"%s\", ", halo_cpu_name((halo_cpu_t)r->cpu));
            fprintf(out, "\"algorithm\": \"%s\"}%s\n", r->algo->name, i + 1 < t->n ? "," : "");
        }
        fprintf(out, "  ]%s\n", k + 1 < HALO_COLL_NKINDS ? "," : "");
    }
    fprintf(out, "}\n");
}
