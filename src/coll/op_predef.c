/* The predefined reduction kernels: inout[i] = in[i] op inout[i] for every
 * (op, datatype) pair that MPI 5.0 defines in section 6.9.2 ("Predefined
 * Reduction Operations") and 6.9.4 ("MINLOC and MAXLOC"), plus MPI_REPLACE and
 * MPI_NO_OP on any predefined datatype.
 *
 * Dispatch is two table loads and an indirect call. The datatype handle indexes
 * op_type_info[] for the type's kind, the op handle indexes op_slot[] for a row
 * of op_kernels[][]. A kind is a memory layout together with the standard's
 * datatype group, because the group and not the layout decides which ops are
 * defined: MPI_INT and MPI_INTEGER are both 4-byte integers, but only MPI_INT
 * ("C integer") takes MPI_LAND. A NULL kernel is a combination the standard
 * does not define, or one whose C type this build lacks.
 *
 * Kernels are shared wherever the bits agree: the signed and unsigned integers
 * of one width use one SUM, PROD, bitwise and logical kernel. SUM and PROD run
 * in unsigned arithmetic so that overflow wraps, as every MPI user expects,
 * where signed overflow would be undefined behaviour.
 *
 * Loops go in blocks of OP_BLOCK_BYTES with a constant trip count, then a
 * scalar tail: at -O2 gcc 12 vectorizes only loops that need no scalar
 * epilogue (its "very-cheap" cost model), and the blocked inner loop is one;
 * at -O3 the blocking costs nothing. The restrict-qualified parameters (not
 * local copies, which gcc does not trust) spare it a runtime alias check. */
#include <float.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <mpi.h>

#include "coll/op_predef.h"
#include "core/cpu.h"

/* The C types behind the optional Fortran kinds. */
#if defined(__FLT16_MAX__)
#define OP_HAVE_R16 1
__extension__ typedef _Float16 op_r16_t;
#endif
#if defined(__SIZEOF_FLOAT128__)
#define OP_HAVE_R128 1
__extension__ typedef __float128 op_r128_t;
#elif LDBL_MANT_DIG == 113
#define OP_HAVE_R128 1
typedef long double op_r128_t;   /* long double is binary128 here (aarch64, ppc64le ieee) */
#endif
#if defined(__SIZEOF_INT128__)
#define OP_HAVE_I128 1
__extension__ typedef __int128 op_i128_t;
__extension__ typedef unsigned __int128 op_u128_t;
#endif

#ifdef OP_HAVE_R16
#define OP_R16(fn) fn
#else
#define OP_R16(fn) NULL
#endif
#ifdef OP_HAVE_R128
#define OP_R128(fn) fn
#else
#define OP_R128(fn) NULL
#endif
#ifdef OP_HAVE_I128
#define OP_I128(fn) fn
#else
#define OP_I128(fn) NULL
#endif

/* The value/index pairs of MINLOC and MAXLOC, laid out as the C structs (and
 * Fortran two-element arrays) that the standard names. */
typedef struct { float v; int k; } op_float_int_t;
typedef struct { double v; int k; } op_double_int_t;
typedef struct { long v; int k; } op_long_int_t;
typedef struct { int v; int k; } op_int_int_t;
typedef struct { short v; int k; } op_short_int_t;
typedef struct { long double v; int k; } op_ldouble_int_t;
typedef struct { float v; float k; } op_real_real_t;
typedef struct { double v; double k; } op_dp_dp_t;

typedef void op_kernel_fn_t(const void *restrict in, void *restrict inout, size_t n);

/* ---- Loops ---------------------------------------------------------------- */

/* 64 bytes is one vector at AVX-512 and a whole number of vectors below it, so
 * the inner loop vectorizes at every width without a remainder. */
#define OP_BLOCK_BYTES 64
#define OP_BLOCK(T) (sizeof(T) < OP_BLOCK_BYTES ? OP_BLOCK_BYTES / sizeof(T) : 1)

/* Runs the statement with `k` set to 0 .. n-1. */
#define OP_FOR(T, k, n, ...)                                                   \
    do {                                                                       \
        size_t op_i_ = 0;                                                      \
        for (; op_i_ + OP_BLOCK(T) <= (n); op_i_ += OP_BLOCK(T))               \
            for (size_t op_j_ = 0; op_j_ < OP_BLOCK(T); op_j_++) {             \
                size_t k = op_i_ + op_j_;                                      \
                __VA_ARGS__                                                    \
            }                                                                  \
        for (; op_i_ < (n); op_i_++) {                                         \
            size_t k = op_i_;                                                  \
            __VA_ARGS__                                                        \
        }                                                                      \
    } while (0)

/* A kernel computing inout[k] = expr, with x = in[k] and y = inout[k]. */
#define OP_DEFINE(name, T, expr)                                               \
    static void name(const void *restrict in_v, void *restrict inout_v,        \
                     size_t n)                                                 \
    {                                                                          \
        const T *in = in_v;                                                    \
        T *inout = inout_v;                                                    \
        OP_FOR(T, k, n, {                                                      \
            T x = in[k], y = inout[k];                                         \
            inout[k] = (T)(expr);                                              \
        });                                                                    \
    }

/* Integer SUM, PROD and the bitwise and logical ops, one set per width. The
 * 1u factor lifts the narrow types out of their promotion to int, where a
 * 16-bit product could overflow. */
#define OP_DEFINE_UINT(w, T)                                                   \
    OP_DEFINE(op_sum_u##w, T, x + y)                                           \
    OP_DEFINE(op_prod_u##w, T, 1u * x * y)                                     \
    OP_DEFINE(op_band_u##w, T, x & y)                                          \
    OP_DEFINE(op_bor_u##w, T, x | y)                                           \
    OP_DEFINE(op_bxor_u##w, T, x ^ y)                                          \
    OP_DEFINE(op_land_u##w, T, (x != 0) & (y != 0))                            \
    OP_DEFINE(op_lor_u##w, T, (x != 0) | (y != 0))                             \
    OP_DEFINE(op_lxor_u##w, T, (x != 0) ^ (y != 0))

#define OP_DEFINE_MINMAX(suffix, T)                                            \
    OP_DEFINE(op_max_##suffix, T, x > y ? x : y)                               \
    OP_DEFINE(op_min_##suffix, T, x < y ? x : y)

/* Floating MAX and MIN return NaN when either operand is NaN, so that every
 * process of an allreduce gets the same answer whatever order it combined
 * contributions in (a plain x > y ? x : y keeps y's number over x's NaN). */
#define OP_DEFINE_REAL(suffix, T)                                              \
    OP_DEFINE(op_sum_##suffix, T, x + y)                                       \
    OP_DEFINE(op_prod_##suffix, T, x * y)                                      \
    OP_DEFINE(op_max_##suffix, T, (x > y || x != x) ? x : y)                   \
    OP_DEFINE(op_min_##suffix, T, (x < y || x != x) ? x : y)

/* A complex is two reals (C11 6.2.5p13, Fortran COMPLEX alike): SUM is the
 * real SUM on twice as many numbers. PROD uses the textbook formula rather
 * than C's operator, which tests every product for NaN and then calls libgcc
 * to recover infinities (C11 Annex G), and so never vectorizes. The price: a
 * product with an infinite part can come out NaN where C would say infinity. */
#define OP_DEFINE_COMPLEX(suffix, T)                                           \
    static void op_sum_c##suffix(const void *restrict in, void *restrict inout, \
                                 size_t n)                                     \
    {                                                                          \
        op_sum_##suffix(in, inout, 2 * n);                                     \
    }                                                                          \
    static void op_prod_c##suffix(const void *restrict in_v,                   \
                                  void *restrict inout_v, size_t n)            \
    {                                                                          \
        const T *in = in_v;                                                    \
        T *inout = inout_v;                                                    \
        OP_FOR(T[2], k, n, {                                                   \
            T xr = in[2 * k], xi = in[2 * k + 1];                              \
            T yr = inout[2 * k], yi = inout[2 * k + 1];                        \
            inout[2 * k] = (T)(xr * yr - xi * yi);                             \
            inout[2 * k + 1] = (T)(xr * yi + xi * yr);                         \
        });                                                                    \
    }

/* MAXLOC and MINLOC (6.9.4): the better value wins with its index; equal
 * values keep the smaller index. A pair with a NaN value neither wins nor
 * ties, so inout keeps its own pair. */
#define OP_DEFINE_LOC(suffix, P)                                               \
    static void op_maxloc_##suffix(const void *restrict in_v,                  \
                                   void *restrict inout_v, size_t n)           \
    {                                                                          \
        const P *in = in_v;                                                    \
        P *inout = inout_v;                                                    \
        OP_FOR(P, k, n, {                                                      \
            P x = in[k], y = inout[k];                                         \
            int wins = x.v > y.v, ties = x.v == y.v;                           \
            inout[k].v = wins ? x.v : y.v;                                     \
            inout[k].k = wins ? x.k : ties && x.k < y.k ? x.k : y.k;           \
        });                                                                    \
    }                                                                          \
    static void op_minloc_##suffix(const void *restrict in_v,                  \
                                   void *restrict inout_v, size_t n)           \
    {                                                                          \
        const P *in = in_v;                                                    \
        P *inout = inout_v;                                                    \
        OP_FOR(P, k, n, {                                                      \
            P x = in[k], y = inout[k];                                         \
            int wins = x.v < y.v, ties = x.v == y.v;                           \
            inout[k].v = wins ? x.v : y.v;                                     \
            inout[k].k = wins ? x.k : ties && x.k < y.k ? x.k : y.k;           \
        });                                                                    \
    }

OP_DEFINE_UINT(8, uint8_t)
OP_DEFINE_UINT(16, uint16_t)
OP_DEFINE_UINT(32, uint32_t)
OP_DEFINE_UINT(64, uint64_t)
OP_DEFINE_MINMAX(i8, int8_t)
OP_DEFINE_MINMAX(i16, int16_t)
OP_DEFINE_MINMAX(i32, int32_t)
OP_DEFINE_MINMAX(i64, int64_t)
OP_DEFINE_MINMAX(u8, uint8_t)
OP_DEFINE_MINMAX(u16, uint16_t)
OP_DEFINE_MINMAX(u32, uint32_t)
OP_DEFINE_MINMAX(u64, uint64_t)
#ifdef OP_HAVE_I128
/* INTEGER16 and LOGICAL16 take these; no op on them is a C-integer one, so
 * LAND and friends at this width serve LOGICAL16 only. */
OP_DEFINE_UINT(128, op_u128_t)
OP_DEFINE_MINMAX(i128, op_i128_t)
#endif

OP_DEFINE_REAL(r32, float)
OP_DEFINE_REAL(r64, double)
OP_DEFINE_REAL(rld, long double)
OP_DEFINE_COMPLEX(r32, float)
OP_DEFINE_COMPLEX(r64, double)
OP_DEFINE_COMPLEX(rld, long double)
#ifdef OP_HAVE_R16
OP_DEFINE_REAL(r16, op_r16_t)
OP_DEFINE_COMPLEX(r16, op_r16_t)
#endif
#ifdef OP_HAVE_R128
OP_DEFINE_REAL(r128, op_r128_t)
OP_DEFINE_COMPLEX(r128, op_r128_t)
#endif

OP_DEFINE_LOC(float_int, op_float_int_t)
OP_DEFINE_LOC(double_int, op_double_int_t)
OP_DEFINE_LOC(long_int, op_long_int_t)
OP_DEFINE_LOC(int_int, op_int_int_t)
OP_DEFINE_LOC(short_int, op_short_int_t)
OP_DEFINE_LOC(ldouble_int, op_ldouble_int_t)
OP_DEFINE_LOC(real_real, op_real_real_t)
OP_DEFINE_LOC(dp_dp, op_dp_dp_t)

/* ---- Kinds of datatype ---------------------------------------------------- */

enum {
    OP_K_NONE = 0,   /* not a predefined datatype */
    OP_K_OPAQUE,     /* predefined, in no group: MPI_WCHAR, MPI_CHARACTER, MPI_PACKED */
    OP_K_BYTE,
    /* C integer */
    OP_K_CI8, OP_K_CI16, OP_K_CI32, OP_K_CI64,
    OP_K_CU8, OP_K_CU16, OP_K_CU32, OP_K_CU64,
    /* Fortran integer, and the multi-language types (MPI_AINT, MPI_OFFSET,
     * MPI_COUNT), which the standard allows exactly the same ops */
    OP_K_FI8, OP_K_FI16, OP_K_FI32, OP_K_FI64, OP_K_FI128,
    /* Floating point; RLD is long double (x87 extended on x86-64) */
    OP_K_R16, OP_K_R32, OP_K_R64, OP_K_RLD, OP_K_R128,
    /* Complex, named by the real type of each part */
    OP_K_C16, OP_K_C32, OP_K_C64, OP_K_CLD, OP_K_C128,
    /* Logical: C and C++ bool, Fortran LOGICAL of each size; nonzero is true */
    OP_K_L8, OP_K_L16, OP_K_L32, OP_K_L64, OP_K_L128,
    /* MINLOC/MAXLOC pairs */
    OP_K_FLOAT_INT, OP_K_DOUBLE_INT, OP_K_LONG_INT, OP_K_INT_INT,
    OP_K_SHORT_INT, OP_K_LDOUBLE_INT, OP_K_REAL_REAL, OP_K_DP_DP,
    OP_K_COUNT
};

/* The kind of an integer type whose size the platform decides. */
#define OP_K_SIZED(T, k8, k16, k32, k64)                                       \
    (sizeof(T) == 1 ? (k8) : sizeof(T) == 2 ? (k16) : sizeof(T) == 4 ? (k32)   \
     : sizeof(T) == 8 ? (k64) : OP_K_NONE)
#define OP_K_CSIGNED(T) OP_K_SIZED(T, OP_K_CI8, OP_K_CI16, OP_K_CI32, OP_K_CI64)
#define OP_K_CUNSIGNED(T) OP_K_SIZED(T, OP_K_CU8, OP_K_CU16, OP_K_CU32, OP_K_CU64)
#define OP_K_FINT(T) OP_K_SIZED(T, OP_K_FI8, OP_K_FI16, OP_K_FI32, OP_K_FI64)

typedef struct op_type_info {
    uint8_t kind;
    uint8_t size;   /* bytes of one element, for MPI_REPLACE */
} op_type_info_t;

/* Predefined datatype handles of the standard ABI lie in [0x200, 0x300). The
 * handles are pointer constants; gcc and clang fold their integer value into
 * a constant designator. */
#define OP_TYPE_BASE 0x200u
#define OP_TYPE_SPAN 0x100u
#define OP_T(h) ((uintptr_t)(h) - OP_TYPE_BASE)
#define OP_TYPE(h, kind, T) [OP_T(h)] = {(kind), sizeof(T)}

/* The Fortran types have the sizes of gfortran's default kinds: INTEGER,
 * LOGICAL and REAL of 4 bytes, DOUBLE PRECISION of 8. */
#ifndef OP_KERNELS_ONLY
static const op_type_info_t op_type_info[OP_TYPE_SPAN] = {
    /* Not in the standard's groups (it is for printable characters), but
     * programs reduce it as the small integer it is in C; Halo takes it as
     * a C integer with the platform's signedness of char. */
    OP_TYPE(MPI_CHAR, CHAR_MIN < 0 ? OP_K_CI8 : OP_K_CU8, char),
    OP_TYPE(MPI_WCHAR, OP_K_OPAQUE, wchar_t),
    OP_TYPE(MPI_CHARACTER, OP_K_OPAQUE, char),
    OP_TYPE(MPI_PACKED, OP_K_OPAQUE, char),
    OP_TYPE(MPI_BYTE, OP_K_BYTE, unsigned char),

    OP_TYPE(MPI_SHORT, OP_K_CSIGNED(short), short),
    OP_TYPE(MPI_INT, OP_K_CSIGNED(int), int),
    OP_TYPE(MPI_LONG, OP_K_CSIGNED(long), long),
    OP_TYPE(MPI_LONG_LONG, OP_K_CSIGNED(long long), long long),
    OP_TYPE(MPI_UNSIGNED_SHORT, OP_K_CUNSIGNED(unsigned short), unsigned short),
    OP_TYPE(MPI_UNSIGNED, OP_K_CUNSIGNED(unsigned), unsigned),
    OP_TYPE(MPI_UNSIGNED_LONG, OP_K_CUNSIGNED(unsigned long), unsigned long),
    OP_TYPE(MPI_UNSIGNED_LONG_LONG, OP_K_CUNSIGNED(unsigned long long), unsigned long long),
    OP_TYPE(MPI_SIGNED_CHAR, OP_K_CI8, signed char),
    OP_TYPE(MPI_UNSIGNED_CHAR, OP_K_CU8, unsigned char),
    OP_TYPE(MPI_INT8_T, OP_K_CI8, int8_t),
    OP_TYPE(MPI_UINT8_T, OP_K_CU8, uint8_t),
    OP_TYPE(MPI_INT16_T, OP_K_CI16, int16_t),
    OP_TYPE(MPI_UINT16_T, OP_K_CU16, uint16_t),
    OP_TYPE(MPI_INT32_T, OP_K_CI32, int32_t),
    OP_TYPE(MPI_UINT32_T, OP_K_CU32, uint32_t),
    OP_TYPE(MPI_INT64_T, OP_K_CI64, int64_t),
    OP_TYPE(MPI_UINT64_T, OP_K_CU64, uint64_t),

    OP_TYPE(MPI_INTEGER, OP_K_FI32, int32_t),
    OP_TYPE(MPI_INTEGER1, OP_K_FI8, int8_t),
    OP_TYPE(MPI_INTEGER2, OP_K_FI16, int16_t),
    OP_TYPE(MPI_INTEGER4, OP_K_FI32, int32_t),
    OP_TYPE(MPI_INTEGER8, OP_K_FI64, int64_t),
    OP_TYPE(MPI_INTEGER16, OP_K_FI128, char[16]),
    OP_TYPE(MPI_AINT, OP_K_FINT(MPI_Aint), MPI_Aint),
    OP_TYPE(MPI_OFFSET, OP_K_FINT(MPI_Offset), MPI_Offset),
    OP_TYPE(MPI_COUNT, OP_K_FINT(MPI_Count), MPI_Count),

    OP_TYPE(MPI_FLOAT, OP_K_R32, float),
    OP_TYPE(MPI_DOUBLE, OP_K_R64, double),
    OP_TYPE(MPI_LONG_DOUBLE, OP_K_RLD, long double),
    OP_TYPE(MPI_REAL, OP_K_R32, float),
    OP_TYPE(MPI_DOUBLE_PRECISION, OP_K_R64, double),
    OP_TYPE(MPI_REAL2, OP_K_R16, char[2]),
    OP_TYPE(MPI_REAL4, OP_K_R32, float),
    OP_TYPE(MPI_REAL8, OP_K_R64, double),
    OP_TYPE(MPI_REAL16, OP_K_R128, char[16]),

    OP_TYPE(MPI_C_FLOAT_COMPLEX, OP_K_C32, float[2]),
    OP_TYPE(MPI_C_DOUBLE_COMPLEX, OP_K_C64, double[2]),
    OP_TYPE(MPI_C_LONG_DOUBLE_COMPLEX, OP_K_CLD, long double[2]),
    OP_TYPE(MPI_CXX_FLOAT_COMPLEX, OP_K_C32, float[2]),
    OP_TYPE(MPI_CXX_DOUBLE_COMPLEX, OP_K_C64, double[2]),
    OP_TYPE(MPI_CXX_LONG_DOUBLE_COMPLEX, OP_K_CLD, long double[2]),
    OP_TYPE(MPI_COMPLEX, OP_K_C32, float[2]),
    OP_TYPE(MPI_DOUBLE_COMPLEX, OP_K_C64, double[2]),
    OP_TYPE(MPI_COMPLEX4, OP_K_C16, char[4]),
    OP_TYPE(MPI_COMPLEX8, OP_K_C32, float[2]),
    OP_TYPE(MPI_COMPLEX16, OP_K_C64, double[2]),
    OP_TYPE(MPI_COMPLEX32, OP_K_C128, char[32]),

    /* C++ bool is one byte with every compiler of the platform ABI. */
    OP_TYPE(MPI_C_BOOL, OP_K_L8, _Bool),
    OP_TYPE(MPI_CXX_BOOL, OP_K_L8, uint8_t),
    OP_TYPE(MPI_LOGICAL, OP_K_L32, uint32_t),
    OP_TYPE(MPI_LOGICAL1, OP_K_L8, uint8_t),
    OP_TYPE(MPI_LOGICAL2, OP_K_L16, uint16_t),
    OP_TYPE(MPI_LOGICAL4, OP_K_L32, uint32_t),
    OP_TYPE(MPI_LOGICAL8, OP_K_L64, uint64_t),
    OP_TYPE(MPI_LOGICAL16, OP_K_L128, char[16]),

    OP_TYPE(MPI_FLOAT_INT, OP_K_FLOAT_INT, op_float_int_t),
    OP_TYPE(MPI_DOUBLE_INT, OP_K_DOUBLE_INT, op_double_int_t),
    OP_TYPE(MPI_LONG_INT, OP_K_LONG_INT, op_long_int_t),
    OP_TYPE(MPI_2INT, OP_K_INT_INT, op_int_int_t),
    OP_TYPE(MPI_SHORT_INT, OP_K_SHORT_INT, op_short_int_t),
    OP_TYPE(MPI_LONG_DOUBLE_INT, OP_K_LDOUBLE_INT, op_ldouble_int_t),
    OP_TYPE(MPI_2REAL, OP_K_REAL_REAL, op_real_real_t),
    OP_TYPE(MPI_2DOUBLE_PRECISION, OP_K_DP_DP, op_dp_dp_t),
    OP_TYPE(MPI_2INTEGER, OP_K_INT_INT, op_int_int_t),
};
#endif

/* MPI_C_BOOL is read as a byte: a _Bool holding anything but 0 or 1 (which a
 * Fortran or C++ peer can send) would be undefined behaviour to load. */
_Static_assert(sizeof(_Bool) == 1, "MPI_C_BOOL is reduced as one byte");

/* ---- Ops ------------------------------------------------------------------ */

enum {
    OP_S_NONE = 0,   /* not a predefined op */
    OP_S_REPLACE,
    OP_S_NO_OP,
    OP_S_SUM, OP_S_PROD, OP_S_MAX, OP_S_MIN,
    OP_S_BAND, OP_S_BOR, OP_S_BXOR,
    OP_S_LAND, OP_S_LOR, OP_S_LXOR,
    OP_S_MAXLOC, OP_S_MINLOC,
    OP_S_COUNT
};

/* Predefined op handles of the standard ABI lie in [0x20, 0x40). */
#define OP_OP_BASE 0x20u
#define OP_OP_SPAN 0x20u
#define OP_O(h) ((uintptr_t)(h) - OP_OP_BASE)

#ifndef OP_KERNELS_ONLY
static const uint8_t op_slot[OP_OP_SPAN] = {
    [OP_O(MPI_REPLACE)] = OP_S_REPLACE, [OP_O(MPI_NO_OP)] = OP_S_NO_OP,
    [OP_O(MPI_SUM)] = OP_S_SUM,         [OP_O(MPI_PROD)] = OP_S_PROD,
    [OP_O(MPI_MAX)] = OP_S_MAX,         [OP_O(MPI_MIN)] = OP_S_MIN,
    [OP_O(MPI_BAND)] = OP_S_BAND,       [OP_O(MPI_BOR)] = OP_S_BOR,
    [OP_O(MPI_BXOR)] = OP_S_BXOR,       [OP_O(MPI_LAND)] = OP_S_LAND,
    [OP_O(MPI_LOR)] = OP_S_LOR,         [OP_O(MPI_LXOR)] = OP_S_LXOR,
    [OP_O(MPI_MAXLOC)] = OP_S_MAXLOC,   [OP_O(MPI_MINLOC)] = OP_S_MINLOC,
};
#endif

/* ---- The (op, kind) table ------------------------------------------------- */

/* One kernel for every width, signed or not: the C integers, ... */
#define OP_ROW_CINT(op)                                                        \
    [OP_K_CI8] = op_##op##_u8, [OP_K_CU8] = op_##op##_u8,                      \
    [OP_K_CI16] = op_##op##_u16, [OP_K_CU16] = op_##op##_u16,                  \
    [OP_K_CI32] = op_##op##_u32, [OP_K_CU32] = op_##op##_u32,                  \
    [OP_K_CI64] = op_##op##_u64, [OP_K_CU64] = op_##op##_u64
/* ... the Fortran integers and multi-language types, ... */
#define OP_ROW_FINT(op)                                                        \
    [OP_K_FI8] = op_##op##_u8, [OP_K_FI16] = op_##op##_u16,                    \
    [OP_K_FI32] = op_##op##_u32, [OP_K_FI64] = op_##op##_u64,                  \
    [OP_K_FI128] = OP_I128(op_##op##_u128)
/* ... and the logicals. */
#define OP_ROW_LOGICAL(op)                                                     \
    [OP_K_L8] = op_##op##_u8, [OP_K_L16] = op_##op##_u16,                      \
    [OP_K_L32] = op_##op##_u32, [OP_K_L64] = op_##op##_u64,                    \
    [OP_K_L128] = OP_I128(op_##op##_u128)
/* MAX and MIN need the sign. */
#define OP_ROW_ORDERED(op)                                                     \
    [OP_K_CI8] = op_##op##_i8, [OP_K_CU8] = op_##op##_u8,                      \
    [OP_K_CI16] = op_##op##_i16, [OP_K_CU16] = op_##op##_u16,                  \
    [OP_K_CI32] = op_##op##_i32, [OP_K_CU32] = op_##op##_u32,                  \
    [OP_K_CI64] = op_##op##_i64, [OP_K_CU64] = op_##op##_u64,                  \
    [OP_K_FI8] = op_##op##_i8, [OP_K_FI16] = op_##op##_i16,                    \
    [OP_K_FI32] = op_##op##_i32, [OP_K_FI64] = op_##op##_i64,                  \
    [OP_K_FI128] = OP_I128(op_##op##_i128)
#define OP_ROW_REAL(op)                                                        \
    [OP_K_R16] = OP_R16(op_##op##_r16), [OP_K_R32] = op_##op##_r32,            \
    [OP_K_R64] = op_##op##_r64, [OP_K_RLD] = op_##op##_rld,                    \
    [OP_K_R128] = OP_R128(op_##op##_r128)
#define OP_ROW_COMPLEX(op)                                                     \
    [OP_K_C16] = OP_R16(op_##op##_cr16), [OP_K_C32] = op_##op##_cr32,          \
    [OP_K_C64] = op_##op##_cr64, [OP_K_CLD] = op_##op##_crld,                  \
    [OP_K_C128] = OP_R128(op_##op##_cr128)
#define OP_ROW_PAIR(op)                                                        \
    [OP_K_FLOAT_INT] = op_##op##_float_int,                                    \
    [OP_K_DOUBLE_INT] = op_##op##_double_int,                                  \
    [OP_K_LONG_INT] = op_##op##_long_int, [OP_K_INT_INT] = op_##op##_int_int,  \
    [OP_K_SHORT_INT] = op_##op##_short_int,                                    \
    [OP_K_LDOUBLE_INT] = op_##op##_ldouble_int,                                \
    [OP_K_REAL_REAL] = op_##op##_real_real, [OP_K_DP_DP] = op_##op##_dp_dp

/* The rows follow the standard's table of allowed types. MPI_REPLACE and
 * MPI_NO_OP have no row: they take every predefined type and need only its
 * size. */
#ifdef OP_KERNELS_ONLY
op_kernel_fn_t *const OP_KERNELS_NAME[OP_S_COUNT][OP_K_COUNT];
op_kernel_fn_t *const OP_KERNELS_NAME[OP_S_COUNT][OP_K_COUNT] = {
#else
static op_kernel_fn_t *const op_kernels_base[OP_S_COUNT][OP_K_COUNT] = {
#endif
    /* C integer, Fortran integer, Floating point, Complex, Multi-language */
    [OP_S_SUM] = {OP_ROW_CINT(sum), OP_ROW_FINT(sum), OP_ROW_REAL(sum), OP_ROW_COMPLEX(sum)},
    [OP_S_PROD] = {OP_ROW_CINT(prod), OP_ROW_FINT(prod), OP_ROW_REAL(prod),
                   OP_ROW_COMPLEX(prod)},
    /* C integer, Fortran integer, Floating point, Multi-language */
    [OP_S_MAX] = {OP_ROW_ORDERED(max), OP_ROW_REAL(max)},
    [OP_S_MIN] = {OP_ROW_ORDERED(min), OP_ROW_REAL(min)},
    /* C integer, Fortran integer, Byte, Multi-language */
    [OP_S_BAND] = {OP_ROW_CINT(band), OP_ROW_FINT(band), [OP_K_BYTE] = op_band_u8},
    [OP_S_BOR] = {OP_ROW_CINT(bor), OP_ROW_FINT(bor), [OP_K_BYTE] = op_bor_u8},
    [OP_S_BXOR] = {OP_ROW_CINT(bxor), OP_ROW_FINT(bxor), [OP_K_BYTE] = op_bxor_u8},
    /* C integer, Logical; and, beyond the standard's table, the Fortran
     * integers and multi-language types, which are integers like the C ones
     * and which programs reduce with these ops (nonzero is true). */
    [OP_S_LAND] = {OP_ROW_CINT(land), OP_ROW_FINT(land), OP_ROW_LOGICAL(land)},
    [OP_S_LOR] = {OP_ROW_CINT(lor), OP_ROW_FINT(lor), OP_ROW_LOGICAL(lor)},
    [OP_S_LXOR] = {OP_ROW_CINT(lxor), OP_ROW_FINT(lxor), OP_ROW_LOGICAL(lxor)},
    /* The pair types of 6.9.4 */
    [OP_S_MAXLOC] = {OP_ROW_PAIR(maxloc)},
    [OP_S_MINLOC] = {OP_ROW_PAIR(minloc)},
};

#ifndef OP_KERNELS_ONLY
/* ---- Entry points --------------------------------------------------------- */

/* The same table built for AVX2 (op_predef_avx2.c), taken where the
 * processor has it: the loops then go four doubles a turn instead of two
 * (MPI_SUM of doubles, one core of a Xeon of the Sapphire Rapids family:
 * 16 KiB 0.25 -> 0.16 us, 256 KiB 6.2 -> 4.7 us). */
#if defined(HALO_OP_AVX2)
extern op_kernel_fn_t *const halo_op_kernels_avx2[OP_S_COUNT][OP_K_COUNT];
#endif
static op_kernel_fn_t *const (*op_kernels)[OP_K_COUNT] = op_kernels_base;

int halo_op_kernels_use_avx2(int avx2)
{
#if defined(HALO_OP_AVX2)
    if (avx2 >= 0)
        op_kernels = avx2 && halo_cpu_avx2() ? halo_op_kernels_avx2 : op_kernels_base;
    return op_kernels == halo_op_kernels_avx2;
#else
    (void)avx2;
    return 0;
#endif
}

__attribute__((constructor)) static void op_kernels_pick(void)
{
    halo_op_kernels_use_avx2(1);
}

/* Resolves (op, type) to its slot and type info, or says which is wrong. */
static int op_resolve(MPI_Op op, MPI_Datatype type, unsigned *slot_p,
                      const op_type_info_t **info_p)
{
    uintptr_t t = OP_T(type);   /* wraps above the span for handles below the base */
    if (t >= OP_TYPE_SPAN || op_type_info[t].kind == OP_K_NONE)
        return MPI_ERR_TYPE;
    const op_type_info_t *info = &op_type_info[t];

    uintptr_t o = OP_O(op);
    unsigned slot = o < OP_OP_SPAN ? op_slot[o] : OP_S_NONE;
    if (slot == OP_S_NONE)
        return MPI_ERR_OP;
    if (slot != OP_S_REPLACE && slot != OP_S_NO_OP && op_kernels[slot][info->kind] == NULL)
        return MPI_ERR_OP;

    *slot_p = slot;
    *info_p = info;
    return MPI_SUCCESS;
}

int halo_op_predef_valid(MPI_Op op, MPI_Datatype type)
{
    unsigned slot;
    const op_type_info_t *info;
    return op_resolve(op, type, &slot, &info);
}

int halo_op_predef_kernel(MPI_Op op, MPI_Datatype type)
{
    unsigned slot;
    const op_type_info_t *info;
    if (op_resolve(op, type, &slot, &info) != MPI_SUCCESS || slot == OP_S_REPLACE || slot == OP_S_NO_OP)
        return 0;
    return (int)(slot * OP_K_COUNT + info->kind) + 1;
}

void halo_op_kernel_run(int kernel, const void *in, void *inout, size_t count)
{
    op_kernels[(kernel - 1) / OP_K_COUNT][(kernel - 1) % OP_K_COUNT](in, inout, count);
}

int halo_op_predef_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout,
                         MPI_Count count)
{
    unsigned slot;
    const op_type_info_t *info;
    int rc = op_resolve(op, type, &slot, &info);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count <= 0)
        return count < 0 ? MPI_ERR_COUNT : MPI_SUCCESS;

    switch (slot) {
    case OP_S_NO_OP:
        break;
    case OP_S_REPLACE:
        /* memmove: an accumulate may replace a buffer with an overlapping one. */
        memmove(inout, in, (size_t)count * info->size);
        break;
    default:
        op_kernels[slot][info->kind](in, inout, (size_t)count);
        break;
    }
    return MPI_SUCCESS;
}
#endif /* OP_KERNELS_ONLY */
