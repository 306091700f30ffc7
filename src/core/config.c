/* Reading of configuration variables (declared with HALO_CFG_INT/STR). */
#include "core/config.h"

#include <errno.h>

extern halo_cfg_t *const __start_halo_cfg[];
extern halo_cfg_t *const __stop_halo_cfg[];

/* Keeps the section alive in a build with no variable of its own here. */
HALO_CFG_INT(cfg_error_checking, "HALO_ERROR_CHECKING", 1,
             "check the arguments of every MPI call (0 skips the checks for speed)");

static void cfg_read(halo_cfg_t *v)
{
    if (v->read)
        return;
    const char *env = getenv(v->name);
    if (v->type == HALO_CFG_T_INT) {
        v->value = v->dflt;
        if (env && *env) {
            char *end;
            errno = 0;
            long x = strtol(env, &end, 0);
            if (errno || *end) {
                /* Accept size suffixes k, m, g. */
                if (!errno && (end[0] == 'k' || end[0] == 'K') && !end[1])
                    x *= 1024;
                else if (!errno && (end[0] == 'm' || end[0] == 'M') && !end[1])
                    x *= 1024 * 1024;
                else if (!errno && (end[0] == 'g' || end[0] == 'G') && !end[1])
                    x *= 1024L * 1024 * 1024;
                else {
                    halo_warn("ignoring %s=%s: not an integer (using %ld)", v->name, env, v->dflt);
                    x = v->dflt;
                }
            }
            v->value = x;
        }
    } else {
        v->str = (env && *env) ? env : v->dflt_str;
    }
    v->read = 1;
}

long halo_cfg_get(halo_cfg_t *v)
{
    cfg_read(v);
    return v->value;
}

const char *halo_cfg_get_str(halo_cfg_t *v)
{
    cfg_read(v);
    return v->str;
}

halo_cfg_t *const *halo_cfg_begin(void)
{
    return __start_halo_cfg;
}

halo_cfg_t *const *halo_cfg_end(void)
{
    return __stop_halo_cfg;
}

int halo_cfg_error_checking(void)
{
    return (int)halo_cfg_get(&cfg_error_checking);
}
