/* Info objects: ordered (key, value) string pairs. They may be used before
 * MPI_Init, so the object kind is set up on first use. MPI_INFO_ENV holds
 * what the process was started with. */
#include "core/info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include "binding/api_gen.h"
#include "core/errors.h"

static halo_info_t info_env;
static int info_ready;

static void info_setup(void)
{
    if (info_ready)
        return;
    info_ready = 1;
    halo_obj_kind_setup(HALO_KIND_INFO, sizeof(halo_info_t), 1u << 20);
    halo_obj_predef(HALO_KIND_INFO, (uintptr_t)MPI_INFO_ENV, &info_env.hdr);
}

static void entries_free(halo_info_t *in)
{
    while (in->head) {
        halo_info_entry_t *e = in->head;
        in->head = e->next;
        free(e->key);
        free(e->value);
        free(e);
    }
    in->tail = NULL;
    in->n = 0;
}

void halo_info_set(halo_info_t *in, const char *key, const char *value)
{
    for (halo_info_entry_t *e = in->head; e; e = e->next) {
        if (!strcmp(e->key, key)) {
            free(e->value);
            e->value = halo_strdup(value);
            return;
        }
    }
    halo_info_entry_t *e = halo_malloc(sizeof *e);
    e->key = halo_strdup(key);
    e->value = halo_strdup(value);
    e->next = NULL;
    if (in->tail)
        in->tail->next = e;
    else
        in->head = e;
    in->tail = e;
    in->n++;
}

const char *halo_info_lookup(const halo_info_t *in, const char *key)
{
    if (!in)
        return NULL;
    for (halo_info_entry_t *e = in->head; e; e = e->next)
        if (!strcmp(e->key, key))
            return e->value;
    return NULL;
}

halo_info_t *halo_info_new(void)
{
    info_setup();
    return halo_obj_alloc(HALO_KIND_INFO);
}

halo_info_t *halo_info_dup(const halo_info_t *src)
{
    halo_info_t *in = halo_info_new();
    if (!in)
        return NULL;
    for (halo_info_entry_t *e = src ? src->head : NULL; e; e = e->next)
        halo_info_set(in, e->key, e->value);
    return in;
}

void halo_info_release(halo_info_t *in)
{
    if (!in || !halo_obj_unref(in))
        return;
    entries_free(in);
    halo_obj_free(in);
}

/* The keys of an environment info object (MPI 5.0 section 11.4): derived
 * from the program's arguments and this process's surroundings only, so
 * MPI_Info_create_env answers the same before and after MPI_Init. */
static void env_fill(halo_info_t *in, int argc, char **argv)
{
    if (argc > 0 && argv && argv[0])
        halo_info_set(in, "command", argv[0]);
    if (argc > 1 && argv) {
        size_t n = 1;
        for (int i = 1; i < argc; i++)
            n += strlen(argv[i]) + 1;
        char *s = halo_malloc(n);
        s[0] = '\0';
        for (int i = 1; i < argc; i++) {
            if (i > 1)
                strcat(s, " ");
            strcat(s, argv[i]);
        }
        halo_info_set(in, "argv", s);
        free(s);
    }
    /* What mpiexec was told for this process's segment (-n, -soft, -host,
     * -arch, -file), else what this process sees: its job's size, this
     * node's name, this machine's architecture. */
    char buf[4096];
    const char *v = getenv("HALO_INFO_MAXPROCS");
    if (!v || atoi(v) <= 0)
        v = getenv("PMI_SIZE");
    snprintf(buf, sizeof buf, "%d", v && atoi(v) > 0 ? atoi(v) : 1);
    halo_info_set(in, "maxprocs", buf);
    v = getenv("HALO_INFO_SOFT");
    halo_info_set(in, "soft", v && *v ? v : buf);
    v = getenv("HALO_INFO_HOST");
    if (v && *v) {
        halo_info_set(in, "host", v);
    } else if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        halo_info_set(in, "host", buf);
    }
    struct utsname un;
    v = getenv("HALO_INFO_ARCH");
    if (v && *v)
        halo_info_set(in, "arch", v);
    else if (uname(&un) == 0)
        halo_info_set(in, "arch", un.machine);
    if (getcwd(buf, sizeof buf))
        halo_info_set(in, "wdir", buf);
    v = getenv("HALO_INFO_FILE");
    if (v && *v)
        halo_info_set(in, "file", v);
}

void halo_info_env_fill(int argc, char **argv, int thread_level)
{
    info_setup();
    entries_free(&info_env);
    env_fill(&info_env, argc, argv);
    const char *lv = thread_level == MPI_THREAD_MULTIPLE   ? "MPI_THREAD_MULTIPLE"
                     : thread_level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                     : thread_level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                                             : "MPI_THREAD_SINGLE";
    halo_info_set(&info_env, "thread_level", lv);
}

/* ---------------------------------------------------------------- MPI API */

static halo_info_t *info_arg(MPI_Info h)
{
    info_setup();
    return halo_obj_lookup(HALO_KIND_INFO, h);
}

#define INFO_CHECK(h, in)                                                                     \
    halo_info_t *in = info_arg(h);                                                            \
    if (!in)                                                                                  \
        return halo_err(MPI_ERR_INFO, "(info=%p): %s", (void *)h,                             \
                        h == MPI_INFO_NULL ? "MPI_INFO_NULL is not an info object" : "not a valid info object")

static int check_key(const char *key)
{
    if (!key)
        return halo_err(MPI_ERR_INFO_KEY, "(key=NULL): a key is required");
    size_t n = strlen(key);
    if (n == 0 || n >= MPI_MAX_INFO_KEY)
        return halo_err(MPI_ERR_INFO_KEY, "(key=\"%.40s\"): keys must have 1 to %d characters", key,
                        MPI_MAX_INFO_KEY - 1);
    return MPI_SUCCESS;
}

int halo_api_info_create(MPI_Info *info)
{
    halo_info_t *in = halo_info_new();
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

int halo_api_info_create_env(int argc, char *argv[], MPI_Info *info)
{
    halo_info_t *in = halo_info_new();
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    env_fill(in, argc, argv);
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

int halo_api_info_set(MPI_Info info, const char *key, const char *value)
{
    INFO_CHECK(info, in);
    if (in->hdr.flags & HALO_OBJ_PREDEFINED)
        return halo_err(MPI_ERR_INFO, ": MPI_INFO_ENV cannot be changed");
    int rc = check_key(key);
    if (rc)
        return rc;
    if (!value)
        return halo_err(MPI_ERR_INFO_VALUE, "(value=NULL): a value is required");
    if (strlen(value) >= MPI_MAX_INFO_VAL)
        return halo_err(MPI_ERR_INFO_VALUE, "(key=\"%s\"): value longer than MPI_MAX_INFO_VAL-1", key);
    halo_info_set(in, key, value);
    return MPI_SUCCESS;
}

int halo_api_info_delete(MPI_Info info, const char *key)
{
    INFO_CHECK(info, in);
    int rc = check_key(key);
    if (rc)
        return rc;
    halo_info_entry_t **pp = &in->head, *prev = NULL;
    for (; *pp; prev = *pp, pp = &(*pp)->next) {
        if (!strcmp((*pp)->key, key)) {
            halo_info_entry_t *e = *pp;
            *pp = e->next;
            if (in->tail == e)
                in->tail = prev;
            free(e->key);
            free(e->value);
            free(e);
            in->n--;
            return MPI_SUCCESS;
        }
    }
    return halo_err(MPI_ERR_INFO_NOKEY, "(key=\"%s\"): no such key", key);
}

int halo_api_info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    INFO_CHECK(info, in);
    int rc = check_key(key);
    if (rc)
        return rc;
    if (valuelen < 0)
        return halo_err(MPI_ERR_ARG, "(valuelen=%d): must be non-negative", valuelen);
    const char *v = halo_info_lookup(in, key);
    *flag = v != NULL;
    if (v) {
        snprintf(value, (size_t)valuelen + 1, "%s", v);
    }
    return MPI_SUCCESS;
}

int halo_api_info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    INFO_CHECK(info, in);
    int rc = check_key(key);
    if (rc)
        return rc;
    const char *v = halo_info_lookup(in, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    int need = (int)strlen(v) + 1;
    if (*buflen > 0 && value)
        snprintf(value, (size_t)*buflen, "%s", v);
    *buflen = need;
    return MPI_SUCCESS;
}

int halo_api_info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    INFO_CHECK(info, in);
    int rc = check_key(key);
    if (rc)
        return rc;
    const char *v = halo_info_lookup(in, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

int halo_api_info_get_nkeys(MPI_Info info, int *nkeys)
{
    INFO_CHECK(info, in);
    *nkeys = in->n;
    return MPI_SUCCESS;
}

int halo_api_info_get_nthkey(MPI_Info info, int n, char *key)
{
    INFO_CHECK(info, in);
    if (n < 0 || n >= in->n)
        return halo_err(MPI_ERR_ARG, "(n=%d): the info object has %d keys", n, in->n);
    halo_info_entry_t *e = in->head;
    for (int i = 0; i < n; i++)
        e = e->next;
    snprintf(key, MPI_MAX_INFO_KEY, "%s", e->key);
    return MPI_SUCCESS;
}

int halo_api_info_dup(MPI_Info info, MPI_Info *newinfo)
{
    INFO_CHECK(info, in);
    halo_info_t *d = halo_info_dup(in);
    if (!d)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    *newinfo = (MPI_Info)d;
    return MPI_SUCCESS;
}

int halo_api_info_free(MPI_Info *info)
{
    INFO_CHECK(*info, in);
    if (in->hdr.flags & HALO_OBJ_PREDEFINED)
        return halo_err(MPI_ERR_INFO, ": MPI_INFO_ENV cannot be freed");
    halo_info_release(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
