/* The processor's maker (core/cpu.h). */
#include <string.h>

#include "core/config.h"
#include "core/cpu.h"

HALO_CFG_STR(cfg_cpu, "HALO_CPU", "auto",
             "the processor maker whose defaults apply (eager limit, rendezvous split, tuning "
             "rules with a \"cpu\" key): auto (this processor's), intel, amd or other");

const char *halo_cpu_name(halo_cpu_t c)
{
    return c == HALO_CPU_INTEL ? "intel" : c == HALO_CPU_AMD ? "amd" : "other";
}

static halo_cpu_t cpu_detect(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_is("intel"))
        return HALO_CPU_INTEL;
    if (__builtin_cpu_is("amd"))
        return HALO_CPU_AMD;
#endif
    return HALO_CPU_OTHER;
}

bool halo_cpu_avx2(void)
{
#if defined(__x86_64__) || defined(__i386__)
    /* A constructor may run before the one that fills the CPU model. */
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

halo_cpu_t halo_cpu(void)
{
    static int known = -1;
    if (known < 0) {
        const char *want = halo_cfg_get_str(&cfg_cpu);
        halo_cpu_t c = cpu_detect();
        if (!strcmp(want, "intel"))
            c = HALO_CPU_INTEL;
        else if (!strcmp(want, "amd"))
            c = HALO_CPU_AMD;
        else if (!strcmp(want, "other"))
            c = HALO_CPU_OTHER;
        else if (strcmp(want, "auto"))
            halo_warn("HALO_CPU=%s is not one of auto, intel, amd, other; using auto", want);
        known = (int)c;
    }
    return (halo_cpu_t)known;
}
