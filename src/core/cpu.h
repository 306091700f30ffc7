/* The processor: its maker, which a few defaults depend on (how much it costs
 * to read a cache line that another core has just written differs by
 * family, and with it where copying through shared memory stops paying
 * (docs/performance.md, "Cells or single copy by processor")), and whether
 * it runs AVX2 code. */
#ifndef HALO_CORE_CPU_H
#define HALO_CORE_CPU_H

#include <stdbool.h>

typedef enum { HALO_CPU_OTHER = 0, HALO_CPU_INTEL, HALO_CPU_AMD } halo_cpu_t;

/* This processor's maker, or the one HALO_CPU names. */
halo_cpu_t halo_cpu(void);
/* "intel", "amd" or "other". */
const char *halo_cpu_name(halo_cpu_t c);
/* Whether the processor runs AVX2 code (the builds of the pack movers and
 * of the reduction kernels that use it are taken then); callable from a
 * constructor. */
bool halo_cpu_avx2(void);

#endif
