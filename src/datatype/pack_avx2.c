/* The movers of datatype/movers.h built for AVX2 (this file alone is
 * compiled with -mavx2, see CMakeLists.txt): lines move in 32-byte
 * registers. pack.c calls these only when the processor has AVX2. */
#include "datatype/dtype.h"

#if defined(HALO_DT_AVX2) && defined(__AVX2__)

#define MV_NAME(name) avx2_##name
#include "datatype/movers.h"

void halo_dt_pack_avx2(uintptr_t buf, const halo_dtype_t *dt, MPI_Count pos, MPI_Count len, void *dst,
                       bool stream)
{
    avx2_pack_range(buf, dt, pos, len, dst, stream);
}

void halo_dt_unpack_avx2(uintptr_t buf, const halo_dtype_t *dt, MPI_Count pos, MPI_Count len, const void *src,
                         bool stream)
{
    avx2_unpack_range(buf, dt, pos, len, src, stream);
}

#endif
