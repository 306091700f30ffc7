/* Unit test of the predefined reduction kernels (src/coll/op_predef.c).
 *
 * Every (op, predefined datatype) pair that MPI 5.0 section 6.9.2 and 6.9.4
 * define is run on arrays of several lengths and checked element by element
 * against a reference computed here, by different means: integers through
 * 128-bit arithmetic truncated to the type's width, reals and complex numbers
 * in long double, pairs with the standard's if/else definition. Every pair
 * the standard does not define must be refused with MPI_ERR_OP and leave the
 * output untouched. The expected validity comes from this file's own copy of
 * the standard's groups, not from the implementation.
 *
 * Build: gcc -std=c17 -O2 -Wall -Wextra -Werror -I include -I src
 *        src/coll/op_predef.c tests/unit/test_op_predef.c
 * Exit status 0 when every check passes; each failure is printed. */
#include <complex.h>
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <mpi.h>

#include "coll/op_predef.h"

#if !defined(__SIZEOF_INT128__)
#error "the reference arithmetic of this test needs __int128"
#endif
__extension__ typedef unsigned __int128 u128_t;
__extension__ typedef __int128 i128_t;

#if defined(__FLT16_MAX__)
#define HAVE_R16 1
__extension__ typedef _Float16 r16_t;
#else
#define HAVE_R16 0
#endif
#if defined(__SIZEOF_FLOAT128__)
#define HAVE_R128 1
__extension__ typedef __float128 r128_t;
#elif LDBL_MANT_DIG == 113
#define HAVE_R128 1
typedef long double r128_t;
#else
#define HAVE_R128 0
#endif

static int failures;

#define FAIL(...)                                                              \
    do {                                                                       \
        failures++;                                                            \
        if (failures <= 50) {                                                  \
            printf("FAIL: " __VA_ARGS__);                                      \
            printf("\n");                                                      \
        }                                                                      \
    } while (0)

/* ---- The standard's groups (6.9.2) ---------------------------------------- */

enum {
    G_CINT = 1 << 0,
    G_FINT = 1 << 1,
    G_FLOAT = 1 << 2,
    G_LOGICAL = 1 << 3,
    G_COMPLEX = 1 << 4,
    G_BYTE = 1 << 5,
    G_MULTI = 1 << 6,
    G_PAIR = 1 << 7,   /* 6.9.4 */
    G_NONE = 0,        /* predefined, but no reduction takes it */
};

typedef struct opcase {
    MPI_Op op;
    const char *name;
    unsigned groups;   /* the groups the op is defined on */
} opcase_t;

static const opcase_t ops[] = {
    {MPI_MAX, "MPI_MAX", G_CINT | G_FINT | G_FLOAT | G_MULTI},
    {MPI_MIN, "MPI_MIN", G_CINT | G_FINT | G_FLOAT | G_MULTI},
    {MPI_SUM, "MPI_SUM", G_CINT | G_FINT | G_FLOAT | G_COMPLEX | G_MULTI},
    {MPI_PROD, "MPI_PROD", G_CINT | G_FINT | G_FLOAT | G_COMPLEX | G_MULTI},
    /* Halo's extension: the logical ops also take Fortran integers and the
     * multi-language types. */
    {MPI_LAND, "MPI_LAND", G_CINT | G_FINT | G_MULTI | G_LOGICAL},
    {MPI_LOR, "MPI_LOR", G_CINT | G_FINT | G_MULTI | G_LOGICAL},
    {MPI_LXOR, "MPI_LXOR", G_CINT | G_FINT | G_MULTI | G_LOGICAL},
    {MPI_BAND, "MPI_BAND", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_BOR, "MPI_BOR", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_BXOR, "MPI_BXOR", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_MAXLOC, "MPI_MAXLOC", G_PAIR},
    {MPI_MINLOC, "MPI_MINLOC", G_PAIR},
    {MPI_REPLACE, "MPI_REPLACE", ~0u},
    {MPI_NO_OP, "MPI_NO_OP", ~0u},
};

/* How this test reads an element of the type. */
enum { CLS_INT, CLS_LOGICAL, CLS_REAL, CLS_COMPLEX, CLS_PAIR, CLS_OPAQUE };
enum { R_16, R_32, R_64, R_LD, R_128 };
enum { P_FLOAT_INT, P_DOUBLE_INT, P_LONG_INT, P_2INT, P_SHORT_INT, P_LDOUBLE_INT, P_2REAL, P_2DP };

/* The C layouts 6.9.4 gives the pair types. */
typedef struct { float v; int k; } float_int_t;
typedef struct { double v; int k; } double_int_t;
typedef struct { long v; int k; } long_int_t;
typedef struct { int v; int k; } int_int_t;
typedef struct { short v; int k; } short_int_t;
typedef struct { long double v; int k; } ldouble_int_t;

typedef struct tcase {
    MPI_Datatype type;
    const char *name;
    unsigned groups;
    int cls;
    int fmt;       /* CLS_INT: 1 if signed; CLS_REAL, CLS_COMPLEX: R_*; CLS_PAIR: P_* */
    size_t size;
    int avail;     /* the build has the C type (optional Fortran kinds) */
} tcase_t;

#define T(h, g, cls, fmt, size) {h, #h, g, cls, fmt, size, 1}
#define TOPT(h, g, cls, fmt, size, avail) {h, #h, g, cls, fmt, size, avail}

/* The standard's groups; Fortran types at gfortran's default sizes. */
static const tcase_t types[] = {
    /* C integer */
    T(MPI_INT, G_CINT, CLS_INT, 1, sizeof(int)),
    T(MPI_LONG, G_CINT, CLS_INT, 1, sizeof(long)),
    T(MPI_SHORT, G_CINT, CLS_INT, 1, sizeof(short)),
    T(MPI_UNSIGNED_SHORT, G_CINT, CLS_INT, 0, sizeof(unsigned short)),
    T(MPI_UNSIGNED, G_CINT, CLS_INT, 0, sizeof(unsigned)),
    T(MPI_UNSIGNED_LONG, G_CINT, CLS_INT, 0, sizeof(unsigned long)),
    T(MPI_LONG_LONG_INT, G_CINT, CLS_INT, 1, sizeof(long long)),
    T(MPI_UNSIGNED_LONG_LONG, G_CINT, CLS_INT, 0, sizeof(unsigned long long)),
    T(MPI_SIGNED_CHAR, G_CINT, CLS_INT, 1, 1),
    T(MPI_UNSIGNED_CHAR, G_CINT, CLS_INT, 0, 1),
    T(MPI_INT8_T, G_CINT, CLS_INT, 1, 1),
    T(MPI_INT16_T, G_CINT, CLS_INT, 1, 2),
    T(MPI_INT32_T, G_CINT, CLS_INT, 1, 4),
    T(MPI_INT64_T, G_CINT, CLS_INT, 1, 8),
    T(MPI_UINT8_T, G_CINT, CLS_INT, 0, 1),
    T(MPI_UINT16_T, G_CINT, CLS_INT, 0, 2),
    T(MPI_UINT32_T, G_CINT, CLS_INT, 0, 4),
    T(MPI_UINT64_T, G_CINT, CLS_INT, 0, 8),
    /* Fortran integer */
    T(MPI_INTEGER, G_FINT, CLS_INT, 1, 4),
    T(MPI_INTEGER1, G_FINT, CLS_INT, 1, 1),
    T(MPI_INTEGER2, G_FINT, CLS_INT, 1, 2),
    T(MPI_INTEGER4, G_FINT, CLS_INT, 1, 4),
    T(MPI_INTEGER8, G_FINT, CLS_INT, 1, 8),
    T(MPI_INTEGER16, G_FINT, CLS_INT, 1, 16),
    /* Multi-language types */
    T(MPI_AINT, G_MULTI, CLS_INT, 1, sizeof(MPI_Aint)),
    T(MPI_OFFSET, G_MULTI, CLS_INT, 1, sizeof(MPI_Offset)),
    T(MPI_COUNT, G_MULTI, CLS_INT, 1, sizeof(MPI_Count)),
    /* Floating point */
    T(MPI_FLOAT, G_FLOAT, CLS_REAL, R_32, sizeof(float)),
    T(MPI_DOUBLE, G_FLOAT, CLS_REAL, R_64, sizeof(double)),
    T(MPI_REAL, G_FLOAT, CLS_REAL, R_32, 4),
    T(MPI_DOUBLE_PRECISION, G_FLOAT, CLS_REAL, R_64, 8),
    T(MPI_LONG_DOUBLE, G_FLOAT, CLS_REAL, R_LD, sizeof(long double)),
    TOPT(MPI_REAL2, G_FLOAT, CLS_REAL, R_16, 2, HAVE_R16),
    T(MPI_REAL4, G_FLOAT, CLS_REAL, R_32, 4),
    T(MPI_REAL8, G_FLOAT, CLS_REAL, R_64, 8),
    TOPT(MPI_REAL16, G_FLOAT, CLS_REAL, R_128, 16, HAVE_R128),
    /* Logical */
    T(MPI_LOGICAL, G_LOGICAL, CLS_LOGICAL, 0, 4),
    T(MPI_C_BOOL, G_LOGICAL, CLS_LOGICAL, 0, sizeof(_Bool)),
    T(MPI_CXX_BOOL, G_LOGICAL, CLS_LOGICAL, 0, 1),
    T(MPI_LOGICAL1, G_LOGICAL, CLS_LOGICAL, 0, 1),
    T(MPI_LOGICAL2, G_LOGICAL, CLS_LOGICAL, 0, 2),
    T(MPI_LOGICAL4, G_LOGICAL, CLS_LOGICAL, 0, 4),
    T(MPI_LOGICAL8, G_LOGICAL, CLS_LOGICAL, 0, 8),
    T(MPI_LOGICAL16, G_LOGICAL, CLS_LOGICAL, 0, 16),
    /* Complex */
    T(MPI_C_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_32, sizeof(float complex)),
    T(MPI_C_DOUBLE_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_64, sizeof(double complex)),
    T(MPI_C_LONG_DOUBLE_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_LD, sizeof(long double complex)),
    T(MPI_CXX_FLOAT_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_32, sizeof(float complex)),
    T(MPI_CXX_DOUBLE_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_64, sizeof(double complex)),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_LD, sizeof(long double complex)),
    T(MPI_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_32, 8),
    T(MPI_DOUBLE_COMPLEX, G_COMPLEX, CLS_COMPLEX, R_64, 16),
    TOPT(MPI_COMPLEX4, G_COMPLEX, CLS_COMPLEX, R_16, 4, HAVE_R16),
    T(MPI_COMPLEX8, G_COMPLEX, CLS_COMPLEX, R_32, 8),
    T(MPI_COMPLEX16, G_COMPLEX, CLS_COMPLEX, R_64, 16),
    TOPT(MPI_COMPLEX32, G_COMPLEX, CLS_COMPLEX, R_128, 32, HAVE_R128),
    /* Byte */
    T(MPI_BYTE, G_BYTE, CLS_INT, 0, 1),
    /* MINLOC and MAXLOC pairs (6.9.4) */
    T(MPI_FLOAT_INT, G_PAIR, CLS_PAIR, P_FLOAT_INT, sizeof(float_int_t)),
    T(MPI_DOUBLE_INT, G_PAIR, CLS_PAIR, P_DOUBLE_INT, sizeof(double_int_t)),
    T(MPI_LONG_INT, G_PAIR, CLS_PAIR, P_LONG_INT, sizeof(long_int_t)),
    T(MPI_2INT, G_PAIR, CLS_PAIR, P_2INT, sizeof(int_int_t)),
    T(MPI_SHORT_INT, G_PAIR, CLS_PAIR, P_SHORT_INT, sizeof(short_int_t)),
    T(MPI_LONG_DOUBLE_INT, G_PAIR, CLS_PAIR, P_LDOUBLE_INT, sizeof(ldouble_int_t)),
    T(MPI_2REAL, G_PAIR, CLS_PAIR, P_2REAL, 8),
    T(MPI_2DOUBLE_PRECISION, G_PAIR, CLS_PAIR, P_2DP, 16),
    T(MPI_2INTEGER, G_PAIR, CLS_PAIR, P_2INT, 8),
    /* Halo's extension: MPI_CHAR (for printable characters, 3.2.2, in no
     * group of the standard) reduces as a C integer of char's signedness. */
    T(MPI_CHAR, G_CINT, CLS_INT, CHAR_MIN < 0, 1),
    /* In no group: none of these is in 6.9.2's lists. */
    T(MPI_WCHAR, G_NONE, CLS_OPAQUE, 0, sizeof(wchar_t)),
    T(MPI_CHARACTER, G_NONE, CLS_OPAQUE, 0, 1),
    T(MPI_PACKED, G_NONE, CLS_OPAQUE, 0, 1),
};

#define NTYPES (sizeof(types) / sizeof(types[0]))
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static int expect_valid(const opcase_t *o, const tcase_t *t)
{
    if (o->op == MPI_REPLACE || o->op == MPI_NO_OP)
        return 1;
    return (o->groups & t->groups) != 0 && t->avail;
}

/* ---- Reading and writing elements ----------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A small integer in [lo, hi]. */
static int rng_in(int lo, int hi)
{
    return lo + (int)(rng() % (uint64_t)(hi - lo + 1));
}

static u128_t load_uint(const void *p, size_t w)
{
    switch (w) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    case 8: { uint64_t v; memcpy(&v, p, 8); return v; }
    default: { u128_t v; memcpy(&v, p, 16); return v; }
    }
}

static i128_t load_sint(const void *p, size_t w)
{
    switch (w) {
    case 1: { int8_t v; memcpy(&v, p, 1); return v; }
    case 2: { int16_t v; memcpy(&v, p, 2); return v; }
    case 4: { int32_t v; memcpy(&v, p, 4); return v; }
    case 8: { int64_t v; memcpy(&v, p, 8); return v; }
    default: { i128_t v; memcpy(&v, p, 16); return v; }
    }
}

/* Stores v modulo 2^(8w). */
static void store_uint(void *p, size_t w, u128_t v)
{
    switch (w) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case 8: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    default: memcpy(p, &v, 16); break;
    }
}

static long double load_real(int fmt, const void *p)
{
    switch (fmt) {
#if HAVE_R16
    case R_16: { r16_t v; memcpy(&v, p, sizeof v); return (long double)v; }
#endif
    case R_32: { float v; memcpy(&v, p, sizeof v); return v; }
    case R_64: { double v; memcpy(&v, p, sizeof v); return v; }
    case R_LD: { long double v; memcpy(&v, p, sizeof v); return v; }
#if HAVE_R128
    case R_128: { r128_t v; memcpy(&v, p, sizeof v); return (long double)v; }
#endif
    default: abort();
    }
}

static void store_real(int fmt, void *p, long double x)
{
    switch (fmt) {
#if HAVE_R16
    case R_16: { r16_t v = (r16_t)x; memcpy(p, &v, sizeof v); break; }
#endif
    case R_32: { float v = (float)x; memcpy(p, &v, sizeof v); break; }
    case R_64: { double v = (double)x; memcpy(p, &v, sizeof v); break; }
    case R_LD: memcpy(p, &x, sizeof x); break;
#if HAVE_R128
    case R_128: { r128_t v = (r128_t)x; memcpy(p, &v, sizeof v); break; }
#endif
    default: abort();
    }
}

static size_t real_size(int fmt)
{
    static const size_t sizes[] = {[R_16] = 2, [R_32] = 4, [R_64] = 8,
                                   [R_LD] = sizeof(long double), [R_128] = 16};
    return sizes[fmt];
}

/* A pair as the standard lays it out: value at 0, index at `koff`. */
typedef struct pairdesc {
    int vfmt;        /* R_* for a real value; -1 for an integer value */
    size_t vsize;
    int kreal;       /* R_* for a real index (MPI_2REAL, MPI_2DOUBLE_PRECISION); -1 for int */
    size_t koff;
} pairdesc_t;

static pairdesc_t pair_desc(int p)
{
    switch (p) {
    case P_FLOAT_INT: return (pairdesc_t){R_32, 4, -1, offsetof(float_int_t, k)};
    case P_DOUBLE_INT: return (pairdesc_t){R_64, 8, -1, offsetof(double_int_t, k)};
    case P_LONG_INT:
        return (pairdesc_t){-1, sizeof(long), -1, offsetof(long_int_t, k)};
    case P_2INT: return (pairdesc_t){-1, sizeof(int), -1, offsetof(int_int_t, k)};
    case P_SHORT_INT:
        return (pairdesc_t){-1, sizeof(short), -1, offsetof(short_int_t, k)};
    case P_LDOUBLE_INT:
        return (pairdesc_t){R_LD, sizeof(long double), -1,
                            offsetof(ldouble_int_t, k)};
    case P_2REAL: return (pairdesc_t){R_32, 4, R_32, 4};
    default: return (pairdesc_t){R_64, 8, R_64, 8};
    }
}

static void load_pair(int p, const unsigned char *e, long double *v, long double *k)
{
    pairdesc_t d = pair_desc(p);
    *v = d.vfmt >= 0 ? load_real(d.vfmt, e) : (long double)load_sint(e, d.vsize);
    *k = d.kreal >= 0 ? load_real(d.kreal, e + d.koff) : (long double)load_sint(e + d.koff, 4);
}

static void store_pair(int p, unsigned char *e, long double v, long double k)
{
    pairdesc_t d = pair_desc(p);
    if (d.vfmt >= 0)
        store_real(d.vfmt, e, v);
    else
        store_uint(e, d.vsize, (u128_t)(i128_t)v);
    if (d.kreal >= 0)
        store_real(d.kreal, e + d.koff, k);
    else
        store_uint(e + d.koff, 4, (u128_t)(i128_t)k);
}

/* ---- Inputs --------------------------------------------------------------- */

/* Integers: zeros, ones, -1, the extremes (for overflow) and random bits. */
static void gen_int(unsigned char *e, size_t w)
{
    u128_t top = (u128_t)1 << (8 * w - 1);
    switch (rng() % 8) {
    case 0: store_uint(e, w, 0); break;
    case 1: store_uint(e, w, 1); break;
    case 2: store_uint(e, w, ~(u128_t)0); break;        /* -1, or the unsigned max */
    case 3: store_uint(e, w, top); break;               /* the signed min */
    case 4: store_uint(e, w, top - 1); break;           /* the signed max */
    case 5: store_uint(e, w, (u128_t)(i128_t)rng_in(-9, 9)); break;
    default:
        for (size_t b = 0; b < w; b++)
            e[b] = (unsigned char)rng();
        break;
    }
}

/* Logicals: false, true as 1, and other nonzero patterns that are also true
 * (one with a zero low byte, which a byte-only test would call false). */
static void gen_logical(unsigned char *e, size_t w)
{
    switch (rng() % 5) {
    case 0: case 1: store_uint(e, w, 0); break;
    case 2: store_uint(e, w, 1); break;
    case 3: store_uint(e, w, w > 1 ? 0x100 : 2); break;
    default: store_uint(e, w, ~(u128_t)0); break;
    }
}

/* Reals: small integers, so that every sum and product is exact in every
 * format down to half precision and the reference cannot differ by rounding. */
static void gen_elem(const tcase_t *t, unsigned char *e)
{
    switch (t->avail ? t->cls : CLS_OPAQUE) {   /* only moved by MPI_REPLACE if absent */
    case CLS_INT: gen_int(e, t->size); break;
    case CLS_LOGICAL: gen_logical(e, t->size); break;
    case CLS_REAL: store_real(t->fmt, e, rng_in(-20, 20)); break;
    case CLS_COMPLEX:
        store_real(t->fmt, e, rng_in(-20, 20));
        store_real(t->fmt, e + real_size(t->fmt), rng_in(-20, 20));
        break;
    case CLS_PAIR:
        /* Few distinct values, for many ties; an occasional larger one. */
        store_pair(t->fmt, e, rng() % 5 ? rng_in(-3, 3) : rng_in(-30000, 30000),
                   rng_in(0, 60));
        break;
    default:
        for (size_t b = 0; b < t->size; b++)
            e[b] = (unsigned char)rng();
        break;
    }
}

/* ---- The reference -------------------------------------------------------- */

static u128_t ref_int(MPI_Op op, int is_signed, size_t w, const void *x, const void *y)
{
    u128_t a = load_uint(x, w), b = load_uint(y, w);
    i128_t sa = load_sint(x, w), sb = load_sint(y, w);
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_MAX) return is_signed ? (u128_t)(sa > sb ? sa : sb) : (a > b ? a : b);
    if (op == MPI_MIN) return is_signed ? (u128_t)(sa < sb ? sa : sb) : (a < b ? a : b);
    if (op == MPI_BAND) return a & b;
    if (op == MPI_BOR) return a | b;
    if (op == MPI_BXOR) return a ^ b;
    if (op == MPI_LAND) return a != 0 && b != 0;
    if (op == MPI_LOR) return a != 0 || b != 0;
    if (op == MPI_LXOR) return (a != 0) != (b != 0);
    abort();
}

static long double ref_real(MPI_Op op, long double a, long double b)
{
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    abort();
}

/* MINLOC and MAXLOC as 6.9.4 defines them, u and v from in and inout. */
static void ref_loc(MPI_Op op, long double u, long double i, long double v, long double j,
                    long double *w, long double *k)
{
    int better = op == MPI_MAXLOC ? u > v : u < v;
    int worse = op == MPI_MAXLOC ? u < v : u > v;
    if (better) {
        *w = u;
        *k = i;
    } else if (worse) {
        *w = v;
        *k = j;
    } else {
        *w = u;
        *k = i < j ? i : j;
    }
}

/* Writes the expected inout of one element into r. */
static void ref_elem(const tcase_t *t, MPI_Op op, const unsigned char *x,
                     const unsigned char *y, unsigned char *r)
{
    if (op == MPI_REPLACE) {
        memcpy(r, x, t->size);
        return;
    }
    if (op == MPI_NO_OP) {
        memcpy(r, y, t->size);
        return;
    }
    switch (t->cls) {
    case CLS_INT:
    case CLS_LOGICAL:
        store_uint(r, t->size, ref_int(op, t->fmt, t->size, x, y));
        break;
    case CLS_REAL:
        store_real(t->fmt, r, ref_real(op, load_real(t->fmt, x), load_real(t->fmt, y)));
        break;
    case CLS_COMPLEX: {
        size_t h = real_size(t->fmt);
        long double complex a = load_real(t->fmt, x) + load_real(t->fmt, x + h) * I;
        long double complex b = load_real(t->fmt, y) + load_real(t->fmt, y + h) * I;
        long double complex c = op == MPI_SUM ? a + b : a * b;
        store_real(t->fmt, r, creall(c));
        store_real(t->fmt, r + h, cimagl(c));
        break;
    }
    case CLS_PAIR: {
        long double u, i, v, j, w, k;
        load_pair(t->fmt, x, &u, &i);
        load_pair(t->fmt, y, &v, &j);
        ref_loc(op, u, i, v, j, &w, &k);
        store_pair(t->fmt, r, w, k);
        break;
    }
    default:
        abort();
    }
}

/* Compares the meaningful bytes only: long double has padding that a store
 * need not write. */
static int elem_equal(const tcase_t *t, MPI_Op op, const unsigned char *a,
                      const unsigned char *b)
{
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return memcmp(a, b, t->size) == 0;
    switch (t->cls) {
    case CLS_REAL:
        return load_real(t->fmt, a) == load_real(t->fmt, b);
    case CLS_COMPLEX: {
        size_t h = real_size(t->fmt);
        return load_real(t->fmt, a) == load_real(t->fmt, b) &&
               load_real(t->fmt, a + h) == load_real(t->fmt, b + h);
    }
    case CLS_PAIR: {
        long double av, ak, bv, bk;
        load_pair(t->fmt, a, &av, &ak);
        load_pair(t->fmt, b, &bv, &bk);
        return av == bv && ak == bk;
    }
    default:
        return memcmp(a, b, t->size) == 0;
    }
}

static void hex(char *out, const unsigned char *e, size_t w)
{
    for (size_t b = w; b-- > 0;)
        out += sprintf(out, "%02x", e[b]);
}

/* ---- Tests ---------------------------------------------------------------- */

enum { GUARD = 2 };   /* elements past the end that must stay untouched */

/* Buffers for one case, 64-byte aligned like any vector-friendly allocation. */
static unsigned char *alloc_elems(size_t n, size_t size)
{
    size_t bytes = ((n + GUARD) * size + 63) / 64 * 64;
    unsigned char *p = aligned_alloc(64, bytes);
    if (!p) {
        perror("aligned_alloc");
        exit(2);
    }
    return p;
}

static void check_valid_pair(const tcase_t *t, const opcase_t *o, size_t n)
{
    size_t sz = t->size;
    unsigned char *in = alloc_elems(n, sz), *in_copy = alloc_elems(n, sz);
    unsigned char *io = alloc_elems(n, sz), *expect = alloc_elems(n, sz);

    for (size_t i = 0; i < n; i++) {
        gen_elem(t, in + i * sz);
        gen_elem(t, io + i * sz);
    }
    memset(io + n * sz, 0xa5, GUARD * sz);
    memcpy(in_copy, in, n * sz);
    for (size_t i = 0; i < n; i++)
        ref_elem(t, o->op, in + i * sz, io + i * sz, expect + i * sz);

    int rc = halo_op_predef_apply(o->op, t->type, in, io, (MPI_Count)n);
    if (rc != MPI_SUCCESS)
        FAIL("%s on %s, n=%zu: returned %d, expected MPI_SUCCESS", o->name, t->name, n, rc);
    int bad = rc != MPI_SUCCESS ? 3 : 0;
    for (size_t i = 0; i < n && bad < 3; i++) {
        if (!elem_equal(t, o->op, io + i * sz, expect + i * sz)) {
            char in_h[80], io_h[80], ex_h[80];
            hex(in_h, in + i * sz, sz);
            hex(io_h, io + i * sz, sz);
            hex(ex_h, expect + i * sz, sz);
            FAIL("%s on %s, n=%zu, element %zu: in %s gave %s, expected %s", o->name,
                 t->name, n, i, in_h, io_h, ex_h);
            bad++;
        }
    }
    for (size_t b = 0; b < GUARD * sz; b++) {
        if (io[n * sz + b] != 0xa5) {
            FAIL("%s on %s, n=%zu: wrote past the end (byte %zu)", o->name, t->name, n, b);
            break;
        }
    }
    if (memcmp(in, in_copy, n * sz) != 0)
        FAIL("%s on %s, n=%zu: modified the input buffer", o->name, t->name, n);
    free(in);
    free(in_copy);
    free(io);
    free(expect);
}

/* Every defined pair, at lengths around the kernels' 64-byte blocks. */
static void test_defined_pairs_match_reference(void)
{
    static const size_t lengths[] = {0, 1, 7, 31, 64, 65, 1000};
    for (size_t ti = 0; ti < NTYPES; ti++)
        for (size_t oi = 0; oi < NOPS; oi++)
            if (expect_valid(&ops[oi], &types[ti]))
                for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
                    check_valid_pair(&types[ti], &ops[oi], lengths[li]);
}

/* Every undefined pair is refused with MPI_ERR_OP, output untouched. */
static void test_undefined_pairs_rejected(void)
{
    enum { N = 7 };
    unsigned char in[N * 32], io[N * 32], before[N * 32];
    for (size_t ti = 0; ti < NTYPES; ti++) {
        const tcase_t *t = &types[ti];
        for (size_t oi = 0; oi < NOPS; oi++) {
            const opcase_t *o = &ops[oi];
            if (expect_valid(o, t))
                continue;
            for (size_t b = 0; b < sizeof io; b++) {
                in[b] = (unsigned char)rng();
                io[b] = before[b] = (unsigned char)rng();
            }
            int rc = halo_op_predef_apply(o->op, t->type, in, io, N);
            if (rc != MPI_ERR_OP)
                FAIL("%s on %s: returned %d, expected MPI_ERR_OP", o->name, t->name, rc);
            if (memcmp(io, before, sizeof io) != 0)
                FAIL("%s on %s: refused but wrote to inout", o->name, t->name);
            if (halo_op_predef_valid(o->op, t->type) != MPI_ERR_OP)
                FAIL("%s on %s: valid() does not say MPI_ERR_OP", o->name, t->name);
        }
    }
    /* A few the standard singles out, so the table above cannot drift. */
    static const struct { MPI_Op op; MPI_Datatype type; } must[] = {
        {MPI_BAND, MPI_FLOAT},  {MPI_MAXLOC, MPI_INT},  {MPI_SUM, MPI_WCHAR},
        {MPI_MAX, MPI_C_COMPLEX}, {MPI_LAND, MPI_BYTE}, {MPI_SUM, MPI_CHARACTER},
        {MPI_SUM, MPI_LOGICAL}, {MPI_BOR, MPI_C_BOOL}, {MPI_SUM, MPI_BYTE},
        {MPI_MAX, MPI_2INT},    {MPI_BXOR, MPI_DOUBLE}, {MPI_LOR, MPI_FLOAT},
    };
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        if (halo_op_predef_valid(must[i].op, must[i].type) != MPI_ERR_OP)
            FAIL("pair %zu of the must-refuse list accepted", i);
}

/* Handles that are no predefined datatype give MPI_ERR_TYPE (before any
 * complaint about the op); handles that are no predefined op give MPI_ERR_OP. */
static void test_unknown_handles(void)
{
    static const uintptr_t bad_types[] = {0x0, 0x1, 0x1ff, 0x200 /* MPI_DATATYPE_NULL */,
                                          0x204, 0x211, 0x2ff, 0x300, 0x1000, 0x12345,
                                          (uintptr_t)-1};
    static const uintptr_t bad_ops[] = {0x0, 0x1f, 0x20 /* MPI_OP_NULL */, 0x25, 0x2b,
                                        0x3e, 0x3f, 0x40, 0x1000, (uintptr_t)-1};
    unsigned char io[64], before[64];
    memset(io, 0x5a, sizeof io);
    memcpy(before, io, sizeof io);
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        MPI_Datatype t = (MPI_Datatype)bad_types[i];
        for (size_t oi = 0; oi < NOPS; oi++) {
            int rc = halo_op_predef_apply(ops[oi].op, t, io, io + 32, 1);
            if (rc != MPI_ERR_TYPE)
                FAIL("%s on type handle %#lx: returned %d, expected MPI_ERR_TYPE",
                     ops[oi].name, (unsigned long)bad_types[i], rc);
        }
        if (halo_op_predef_apply((MPI_Op)0x25, t, io, io + 32, 1) != MPI_ERR_TYPE)
            FAIL("bad op and bad type %#lx: expected MPI_ERR_TYPE", (unsigned long)bad_types[i]);
    }
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        for (size_t ti = 0; ti < NTYPES; ti++) {
            int rc = halo_op_predef_apply((MPI_Op)bad_ops[i], types[ti].type, io, io + 32, 1);
            if (rc != MPI_ERR_OP)
                FAIL("op handle %#lx on %s: returned %d, expected MPI_ERR_OP",
                     (unsigned long)bad_ops[i], types[ti].name, rc);
        }
    }
    if (memcmp(io, before, sizeof io) != 0)
        FAIL("a refused call wrote to inout");
}

/* valid() answers what apply() would, for every handle value near the
 * predefined ranges, and only this test's table of types is predefined. */
static void test_valid_agrees_with_apply(void)
{
    for (uintptr_t th = 0; th < 0x340; th++) {
        const tcase_t *t = NULL;
        for (size_t ti = 0; ti < NTYPES; ti++)
            if ((uintptr_t)types[ti].type == th)
                t = &types[ti];
        for (uintptr_t oh = 0; oh < 0x48; oh++) {
            MPI_Op op = (MPI_Op)oh;
            MPI_Datatype type = (MPI_Datatype)th;
            const opcase_t *o = NULL;
            for (size_t oi = 0; oi < NOPS; oi++)
                if (ops[oi].op == op)
                    o = &ops[oi];
            int expect = !t ? MPI_ERR_TYPE
                         : !o ? MPI_ERR_OP
                         : expect_valid(o, t) ? MPI_SUCCESS : MPI_ERR_OP;
            int v = halo_op_predef_valid(op, type);
            int a = halo_op_predef_apply(op, type, NULL, NULL, 0);
            if (v != expect || a != expect)
                FAIL("op %#lx, type %#lx: valid %d, apply %d, expected %d", (unsigned long)oh,
                     (unsigned long)th, v, a, expect);
        }
    }
}

/* MAX and MIN give NaN when either side is NaN, whichever side it is on, so
 * that an allreduce agrees on every process. */
static void test_nan_propagates(void)
{
    static const MPI_Op mm[] = {MPI_MAX, MPI_MIN};
    for (int i = 0; i < 2; i++) {
        double din[2] = {__builtin_nan(""), 1.0}, dio[2] = {1.0, __builtin_nan("")};
        float fin[2] = {__builtin_nanf(""), 1.0f}, fio[2] = {1.0f, __builtin_nanf("")};
        long double lin[2] = {__builtin_nanl(""), 1.0L}, lio[2] = {1.0L, __builtin_nanl("")};
        halo_op_predef_apply(mm[i], MPI_DOUBLE, din, dio, 2);
        halo_op_predef_apply(mm[i], MPI_FLOAT, fin, fio, 2);
        halo_op_predef_apply(mm[i], MPI_LONG_DOUBLE, lin, lio, 2);
        for (int k = 0; k < 2; k++) {
            if (dio[k] == dio[k])
                FAIL("%s on MPI_DOUBLE dropped a NaN (element %d)", i ? "MPI_MIN" : "MPI_MAX", k);
            if (fio[k] == fio[k])
                FAIL("%s on MPI_FLOAT dropped a NaN (element %d)", i ? "MPI_MIN" : "MPI_MAX", k);
            if (lio[k] == lio[k])
                FAIL("%s on MPI_LONG_DOUBLE dropped a NaN (element %d)",
                     i ? "MPI_MIN" : "MPI_MAX", k);
        }
    }
}

/* The order of operands: in comes from the lower rank, and MPI_REPLACE keeps
 * it; the non-commutative-looking cases spelled out by value. */
static void test_operand_order(void)
{
    int in[3] = {1, 2, 3}, io[3] = {7, 8, 9};
    halo_op_predef_apply(MPI_REPLACE, MPI_INT, in, io, 3);
    if (io[0] != 1 || io[1] != 2 || io[2] != 3)
        FAIL("MPI_REPLACE did not store in");
    int keep[3] = {7, 8, 9};
    halo_op_predef_apply(MPI_NO_OP, MPI_INT, in, keep, 3);
    if (keep[0] != 7 || keep[1] != 8 || keep[2] != 9)
        FAIL("MPI_NO_OP changed inout");
    /* MAXLOC ties keep the smaller index from either side. */
    double_int_t a[2] = {{5.0, 9}, {5.0, 2}};
    double_int_t b[2] = {{5.0, 4}, {5.0, 6}};
    halo_op_predef_apply(MPI_MAXLOC, MPI_DOUBLE_INT, a, b, 2);
    if (b[0].k != 4 || b[1].k != 2 || b[0].v != 5.0 || b[1].v != 5.0)
        FAIL("MPI_MAXLOC tie: got indices %d %d, expected 4 2", b[0].k, b[1].k);
    /* Signed integer overflow wraps. */
    int big[1] = {0x7fffffff}, one[1] = {1};
    halo_op_predef_apply(MPI_SUM, MPI_INT, big, one, 1);
    if (one[0] != (int)0x80000000)
        FAIL("MPI_SUM on MPI_INT overflow: got %d", one[0]);
    /* A logical true with a zero low byte is still true. */
    uint32_t lin[1] = {0x100}, lio[1] = {1};
    halo_op_predef_apply(MPI_LAND, MPI_LOGICAL, lin, lio, 1);
    if (lio[0] != 1)
        FAIL("MPI_LAND on MPI_LOGICAL 0x100 and 1: got %u, expected 1", lio[0]);
}

/* A negative count is refused before anything is written. */
static void test_negative_count(void)
{
    int in[1] = {1}, io[1] = {2};
    int rc = halo_op_predef_apply(MPI_SUM, MPI_INT, in, io, -1);
    if (rc != MPI_ERR_COUNT || io[0] != 2)
        FAIL("count -1: returned %d, inout %d", rc, io[0]);
}

int main(void)
{
    /* Every check with each build of the kernels the processor can run
     * (the AVX2 one, where there is one, first: the one taken at load). */
    int avx2 = halo_op_kernels_use_avx2(-1);
    for (int pass = avx2; pass >= 0; pass--) {
        if (halo_op_kernels_use_avx2(pass) != pass)
            FAIL("could not switch the kernels to the %s build", pass ? "AVX2" : "baseline");
        test_defined_pairs_match_reference();
        test_undefined_pairs_rejected();
        test_unknown_handles();
        test_valid_agrees_with_apply();
        test_nan_propagates();
        test_operand_order();
        test_negative_count();
    }
    printf("test_op_predef: kernels checked in %s\n", avx2 ? "the AVX2 and baseline builds" : "the baseline build");
    if (failures) {
        printf("test_op_predef: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_op_predef: all passed (half %s, quad %s)\n", HAVE_R16 ? "yes" : "no",
           HAVE_R128 ? "yes" : "no");
    return 0;
}
