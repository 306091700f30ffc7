/* The predefined reduction kernels of op_predef.c built again for AVX2
 * (this file alone is compiled with -mavx2, see CMakeLists.txt): only the
 * loops and their table, halo_op_kernels_avx2, which op_predef.c takes when
 * the processor has AVX2. */
#if defined(HALO_OP_AVX2) && defined(__AVX2__)
#define OP_KERNELS_ONLY 1
#define OP_KERNELS_NAME halo_op_kernels_avx2
#include "coll/op_predef.c"
#endif
