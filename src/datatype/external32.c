/* MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size in the
 * "external32" representation (MPI 5.0, "External Data Representation"):
 * big-endian, IEEE formats, fixed sizes per type whatever the host
 * (MPI_LONG and MPI_UNSIGNED_LONG 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE a
 * 16-byte IEEE quad, MPI_C_BOOL 1, MPI_AINT/COUNT/OFFSET 8), no padding;
 * complex types are two reals and pair types their two parts.
 *
 * The data is first packed natively with the type's program, then
 * converted basic element by basic element, walking the type's signature
 * (the (type, repetitions) entries every constructor records, in type map
 * order). A homogeneous type converts in one loop; when no basic element
 * changes size the conversion runs in place in the output buffer. */
#include "datatype/dtype.h"

#include <float.h>

#include "binding/api_gen.h"
#include "core/errors.h"

enum { K_BYTE, K_SINT, K_UINT, K_FLT, K_LDBL };

typedef struct part {
    uint8_t kind;
    uint8_t nat, ext;   /* bytes natively and in external32 */
} part_t;

/* The parts of one basic element of a predefined type; returns how many. */
static int predef_parts(MPI_Datatype h, part_t p[2])
{
    const part_t s2 = {K_SINT, 2, 2}, s4 = {K_SINT, 4, 4}, s8 = {K_SINT, 8, 8};
    const part_t u2 = {K_UINT, 2, 2}, u4 = {K_UINT, 4, 4}, u8 = {K_UINT, 8, 8};
    const part_t f2 = {K_FLT, 2, 2}, f4 = {K_FLT, 4, 4}, f8 = {K_FLT, 8, 8}, f16 = {K_FLT, 16, 16};
    const part_t ld = {K_LDBL, (uint8_t)sizeof(long double), 16};
    const part_t lg = {K_SINT, (uint8_t)sizeof(long), 4}, ulg = {K_UINT, (uint8_t)sizeof(long), 4};
    const part_t b1 = {K_BYTE, 1, 1};
    uintptr_t v = (uintptr_t)h;
#define IS(x) (v == (uintptr_t)(x))
#define ONE(a) do { p[0] = (a); return 1; } while (0)
#define TWO(a, b) do { p[0] = (a); p[1] = (b); return 2; } while (0)
    if (IS(MPI_PACKED) || IS(MPI_BYTE) || IS(MPI_CHAR) || IS(MPI_SIGNED_CHAR) || IS(MPI_UNSIGNED_CHAR) ||
        IS(MPI_CHARACTER) || IS(MPI_INT8_T) || IS(MPI_UINT8_T) || IS(MPI_C_BOOL) || IS(MPI_CXX_BOOL) ||
        IS(MPI_LOGICAL1) || IS(MPI_INTEGER1))
        ONE(b1);
    if (IS(MPI_SHORT) || IS(MPI_INT16_T) || IS(MPI_INTEGER2))
        ONE(s2);
    if (IS(MPI_UNSIGNED_SHORT) || IS(MPI_UINT16_T) || IS(MPI_LOGICAL2))
        ONE(u2);
    if (IS(MPI_INT) || IS(MPI_INT32_T) || IS(MPI_INTEGER) || IS(MPI_INTEGER4))
        ONE(s4);
    if (IS(MPI_UNSIGNED) || IS(MPI_UINT32_T) || IS(MPI_LOGICAL) || IS(MPI_LOGICAL4))
        ONE(u4);
    if (IS(MPI_LONG))
        ONE(lg);
    if (IS(MPI_UNSIGNED_LONG))
        ONE(ulg);
    if (IS(MPI_LONG_LONG) || IS(MPI_INT64_T) || IS(MPI_INTEGER8) || IS(MPI_AINT) || IS(MPI_COUNT) ||
        IS(MPI_OFFSET))
        ONE(s8);
    if (IS(MPI_UNSIGNED_LONG_LONG) || IS(MPI_UINT64_T) || IS(MPI_LOGICAL8))
        ONE(u8);
    if (IS(MPI_INTEGER16) || IS(MPI_LOGICAL16))
        ONE(((part_t){K_FLT, 16, 16}));   /* 16-byte integers: only the byte order changes */
    if (IS(MPI_WCHAR))
        ONE(((part_t){K_UINT, (uint8_t)sizeof(wchar_t), 2}));
    if (IS(MPI_REAL2))
        ONE(f2);
    if (IS(MPI_FLOAT) || IS(MPI_REAL) || IS(MPI_REAL4))
        ONE(f4);
    if (IS(MPI_DOUBLE) || IS(MPI_DOUBLE_PRECISION) || IS(MPI_REAL8))
        ONE(f8);
    if (IS(MPI_REAL16))
        ONE(f16);
    if (IS(MPI_LONG_DOUBLE))
        ONE(ld);
    if (IS(MPI_COMPLEX4))
        TWO(f2, f2);
    if (IS(MPI_C_FLOAT_COMPLEX) || IS(MPI_CXX_FLOAT_COMPLEX) || IS(MPI_COMPLEX) || IS(MPI_COMPLEX8))
        TWO(f4, f4);
    if (IS(MPI_C_DOUBLE_COMPLEX) || IS(MPI_CXX_DOUBLE_COMPLEX) || IS(MPI_DOUBLE_COMPLEX) || IS(MPI_COMPLEX16))
        TWO(f8, f8);
    if (IS(MPI_COMPLEX32))
        TWO(f16, f16);
    if (IS(MPI_C_LONG_DOUBLE_COMPLEX) || IS(MPI_CXX_LONG_DOUBLE_COMPLEX))
        TWO(ld, ld);
    if (IS(MPI_FLOAT_INT))
        TWO(f4, s4);
    if (IS(MPI_DOUBLE_INT))
        TWO(f8, s4);
    if (IS(MPI_LONG_INT))
        TWO(lg, s4);
    if (IS(MPI_2INT) || IS(MPI_2INTEGER))
        TWO(s4, s4);
    if (IS(MPI_SHORT_INT))
        TWO(s2, s4);
    if (IS(MPI_LONG_DOUBLE_INT))
        TWO(ld, s4);
    if (IS(MPI_2REAL))
        TWO(f4, f4);
    if (IS(MPI_2DOUBLE_PRECISION))
        TWO(f8, f8);
#undef IS
#undef ONE
#undef TWO
    return 0;
}

MPI_Count halo_dt_ext32_size_predef(const halo_dtype_t *t)
{
    part_t p[2];
    int n = predef_parts(halo_dtype_handle((halo_dtype_t *)t), p);
    MPI_Count s = 0;
    for (int i = 0; i < n; i++)
        s += p[i].ext;
    return s;
}

/* ---------------------------------------------------------------- element conversion */

static uint64_t load_native(const unsigned char *s, int n, bool sign)
{
    switch (n) {
    case 1: {
        uint8_t u;
        memcpy(&u, s, 1);
        return sign ? (uint64_t)(int64_t)(int8_t)u : u;
    }
    case 2: {
        uint16_t u;
        memcpy(&u, s, 2);
        return sign ? (uint64_t)(int64_t)(int16_t)u : u;
    }
    case 4: {
        uint32_t u;
        memcpy(&u, s, 4);
        return sign ? (uint64_t)(int64_t)(int32_t)u : u;
    }
    default: {
        uint64_t u;
        memcpy(&u, s, 8);
        return u;
    }
    }
}

static void store_native(unsigned char *d, int n, uint64_t v)
{
    switch (n) {
    case 1: {
        uint8_t u = (uint8_t)v;
        memcpy(d, &u, 1);
        return;
    }
    case 2: {
        uint16_t u = (uint16_t)v;
        memcpy(d, &u, 2);
        return;
    }
    case 4: {
        uint32_t u = (uint32_t)v;
        memcpy(d, &u, 4);
        return;
    }
    default:
        memcpy(d, &v, 8);
        return;
    }
}

static void store_be(unsigned char *d, int e, uint64_t v)
{
    for (int i = e - 1; i >= 0; i--, v >>= 8)
        d[i] = (unsigned char)v;
}

static uint64_t load_be(const unsigned char *s, int e, bool sign)
{
    uint64_t v = 0;
    for (int i = 0; i < e; i++)
        v = v << 8 | s[i];
    if (sign && e < 8 && (s[0] & 0x80))
        v |= ~(uint64_t)0 << (8 * e);
    return v;
}

/* 16-byte quantities whose value we do not interpret: reverse on a
 * little-endian host. (In place is fine: both ends are read first.) */
static void swap16(const unsigned char *s, unsigned char *d)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (int i = 0; i < 8; i++) {
        unsigned char a = s[i], b = s[15 - i];
        d[i] = b;
        d[15 - i] = a;
    }
#else
    memmove(d, s, 16);
#endif
}

/* Native long double <-> IEEE binary128 given as (hi, lo) 64-bit halves. */
static void ldbl_to_quad(const unsigned char *s, uint64_t *hi, uint64_t *lo)
{
#if LDBL_MANT_DIG == 64
    /* x87 extended: 64-bit significand with an explicit integer bit, then
     * sign and a 15-bit exponent with the same bias as binary128. */
    uint64_t m;
    uint16_t se;
    memcpy(&m, s, 8);
    memcpy(&se, s + 8, 2);
    uint64_t f = m & 0x7fffffffffffffffull;
    *hi = (uint64_t)se << 48 | f >> 15;
    *lo = f << 49;
#elif LDBL_MANT_DIG == 113
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + 8, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    *lo = a;
    *hi = b;
#else
    *hi = a;
    *lo = b;
#endif
#else
    /* long double is double: widen. */
    double dv;
    memcpy(&dv, s, sizeof dv);
    uint64_t u;
    memcpy(&u, &dv, 8);
    uint64_t sign = u >> 63, e = (u >> 52) & 0x7ff, f = u & 0xfffffffffffffull;
    if (e == 0x7ff) {
        e = 0x7fff;
    } else if (e == 0 && f != 0) {
        int sh = 0;
        while (!(f & (1ull << 52))) {
            f <<= 1;
            sh++;
        }
        f &= 0xfffffffffffffull;
        e = 16383 - 1022 - sh;
    } else if (e != 0) {
        e = e - 1023 + 16383;
    }
    *hi = sign << 63 | e << 48 | f >> 4;
    *lo = f << 60;
#endif
}

static void quad_to_ldbl(uint64_t hi, uint64_t lo, unsigned char *d)
{
#if LDBL_MANT_DIG == 64
    uint16_t se = (uint16_t)(hi >> 48);
    unsigned exp = se & 0x7fff;
    uint64_t f = (hi & 0xffffffffffffull) << 15 | lo >> 49;
    uint64_t rest = lo & ((1ull << 49) - 1), half = 1ull << 48;
    if (exp == 0x7fff) {
        if (((hi & 0xffffffffffffull) | lo) && f == 0)
            f = 1ull << 62;   /* keep a NaN a NaN */
    } else if (rest > half || (rest == half && (f & 1))) {
        if (++f == 1ull << 63) {
            /* The fraction overflowed: the next binade (or the first
             * normal number from a denormal). */
            f = 0;
            exp++;
            se = (uint16_t)((se & 0x8000) | exp);
        }
    }
    uint64_t m = f | (exp != 0 ? 1ull << 63 : 0);
    memset(d, 0, sizeof(long double));
    memcpy(d, &m, 8);
    memcpy(d + 8, &se, 2);
#elif LDBL_MANT_DIG == 113
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(d, &lo, 8);
    memcpy(d + 8, &hi, 8);
#else
    memcpy(d, &hi, 8);
    memcpy(d + 8, &lo, 8);
#endif
#else
    uint64_t sign = hi >> 63, e = (hi >> 48) & 0x7fff, f = (hi & 0xffffffffffffull) << 4 | lo >> 60;
    uint64_t u;
    if (e == 0x7fff)
        u = sign << 63 | 0x7ffull << 52 | (f ? (f | 1) : 0);
    else if ((int64_t)e - 16383 + 1023 >= 0x7ff)
        u = sign << 63 | 0x7ffull << 52;
    else if ((int64_t)e - 16383 + 1023 <= 0)
        u = sign << 63;   /* below double's normal range: flushed */
    else
        u = sign << 63 | (e - 16383 + 1023) << 52 | f;
    double dv;
    memcpy(&dv, &u, 8);
    memcpy(d, &dv, sizeof dv);
#endif
}

/* Converts n basic elements of predefined type b between native (packed)
 * and external32, advancing both cursors; to_ext gives the direction.
 * Works in place when no part changes size. */
static void conv_basic(MPI_Datatype b, MPI_Count n, unsigned char **nat_p, unsigned char **ext_p, bool to_ext)
{
    part_t parts[2];
    int np = predef_parts(b, parts);
    unsigned char *ns = *nat_p, *xs = *ext_p;
    for (MPI_Count k = 0; k < n; k++) {
        for (int i = 0; i < np; i++) {
            const part_t *p = &parts[i];
            switch (p->kind) {
            case K_BYTE:
                if (to_ext)
                    *xs = *ns;
                else
                    *ns = *xs;
                break;
            case K_SINT:
            case K_UINT:
            case K_FLT:
                if (p->nat == 16) {
                    if (to_ext)
                        swap16(ns, xs);
                    else
                        swap16(xs, ns);
                } else if (to_ext) {
                    store_be(xs, p->ext, load_native(ns, p->nat, p->kind == K_SINT));
                } else {
                    store_native(ns, p->nat, load_be(xs, p->ext, p->kind == K_SINT));
                }
                break;
            default: { /* K_LDBL */
                uint64_t hi, lo;
                if (to_ext) {
                    ldbl_to_quad(ns, &hi, &lo);
                    store_be(xs, 8, hi);
                    store_be(xs + 8, 8, lo);
                } else {
                    hi = load_be(xs, 8, false);
                    lo = load_be(xs + 8, 8, false);
                    quad_to_ldbl(hi, lo, ns);
                }
                break;
            }
            }
            ns += p->nat;
            xs += p->ext;
        }
    }
    *nat_p = ns;
    *ext_p = xs;
}

/* The predefined type a basic element of t is, for types without a signature. */
static MPI_Datatype basic_of(const halo_dtype_t *t)
{
    return (t->flags & HALO_DT_PREDEFINED) ? halo_dtype_handle((halo_dtype_t *)t) : t->basic;
}

/* Converts `count` whole elements of t, walking its signature. */
static void conv_type(const halo_dtype_t *t, MPI_Count count, unsigned char **nat_p, unsigned char **ext_p,
                      bool to_ext)
{
    if (t->nsig == 0) {
        conv_basic(basic_of(t), count, nat_p, ext_p, to_ext);
        return;
    }
    if (t->basic != MPI_DATATYPE_NULL) {
        conv_basic(t->basic, count * t->basic_count, nat_p, ext_p, to_ext);
        return;
    }
    for (MPI_Count k = 0; k < count; k++)
        for (int i = 0; i < t->nsig; i++)
            conv_type(t->sig[i].type, t->sig[i].reps, nat_p, ext_p, to_ext);
}

/* True when no basic element of t changes size in external32. */
static bool same_sizes(const halo_dtype_t *t)
{
    if (t->nsig == 0 || t->basic != MPI_DATATYPE_NULL) {
        part_t p[2];
        int n = predef_parts(t->nsig == 0 ? basic_of(t) : t->basic, p);
        for (int i = 0; i < n; i++)
            if (p[i].nat != p[i].ext)
                return false;
        return true;
    }
    for (int i = 0; i < t->nsig; i++)
        if (!same_sizes(t->sig[i].type))
            return false;
    return true;
}

/* ---------------------------------------------------------------- the API */

static int check_datarep(const char *datarep)
{
    if (!datarep)
        return halo_err(MPI_ERR_ARG, "(datarep=NULL): a data representation is required");
    if (strcmp(datarep, "external32") != 0)
        return halo_err(MPI_ERR_UNSUPPORTED_DATAREP, "(datarep=\"%s\"): only \"external32\" is defined for "
                        "packing", datarep);
    return MPI_SUCCESS;
}

/* Bytes of native packed data converted per step (a whole number of
 * elements, or of basic elements for a homogeneous type). */
#define CHUNK (64 * 1024)

/* The native packed bytes [pos, pos + n) move through a bounce buffer in
 * chunks that end on element (homogeneous: basic element) boundaries. */
static MPI_Count chunk_bytes(const halo_dtype_t *t, MPI_Count total)
{
    MPI_Count unit = t->size;
    if (t->basic != MPI_DATATYPE_NULL)
        unit = halo_dtype_ptr(t->basic)->size;
    MPI_Count c = CHUNK / unit * unit;
    if (c < unit)
        c = unit;
    return c < total ? c : total;
}

static int pack_external(const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    int rc = check_datarep(datarep);
    if (rc)
        return rc;
    if (incount < 0)
        return halo_err(MPI_ERR_COUNT, "(incount=%lld): must be non-negative", (long long)incount);
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    MPI_Count need = incount * t->ext32_size, nat = incount * t->size;
    if (*position < 0 || *position + need > outsize)
        return halo_err(MPI_ERR_TRUNCATE, "(outsize=%lld, position=%lld): %lld bytes do not fit",
                        (long long)outsize, (long long)*position, (long long)need);
    unsigned char *xs = (unsigned char *)outbuf + *position;
    if (nat > 0 && same_sizes(t)) {
        /* Pack natively where the result goes, then convert in place. */
        halo_dt_pack(inbuf, incount, t, 0, xs, nat);
        unsigned char *n = xs, *x = xs;
        if (t->basic != MPI_DATATYPE_NULL)
            conv_basic(t->basic, nat / halo_dtype_ptr(t->basic)->size, &n, &x, true);
        else
            conv_type(t, incount, &n, &x, true);
    } else if (nat > 0) {
        MPI_Count step = chunk_bytes(t, nat);
        unsigned char *tmp = halo_malloc((size_t)step);
        for (MPI_Count pos = 0; pos < nat; pos += step) {
            MPI_Count len = nat - pos < step ? nat - pos : step;
            halo_dt_pack(inbuf, incount, t, pos, tmp, len);
            unsigned char *n = tmp;
            if (t->basic != MPI_DATATYPE_NULL)
                conv_basic(t->basic, len / halo_dtype_ptr(t->basic)->size, &n, &xs, true);
            else
                conv_type(t, len / t->size, &n, &xs, true);
        }
        free(tmp);
    }
    *position += need;
    return MPI_SUCCESS;
}

static int unpack_external(const char *datarep, const void *inbuf, MPI_Count insize, MPI_Count *position,
                           void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    int rc = check_datarep(datarep);
    if (rc)
        return rc;
    if (outcount < 0)
        return halo_err(MPI_ERR_COUNT, "(outcount=%lld): must be non-negative", (long long)outcount);
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    MPI_Count need = outcount * t->ext32_size, nat = outcount * t->size;
    if (*position < 0 || *position + need > insize)
        return halo_err(MPI_ERR_TRUNCATE, "(insize=%lld, position=%lld): %lld bytes needed",
                        (long long)insize, (long long)*position, (long long)need);
    unsigned char *xs = (unsigned char *)inbuf + *position;
    if (nat > 0) {
        MPI_Count step = chunk_bytes(t, nat);
        unsigned char *tmp = halo_malloc((size_t)step);
        for (MPI_Count pos = 0; pos < nat; pos += step) {
            MPI_Count len = nat - pos < step ? nat - pos : step;
            unsigned char *n = tmp;
            if (t->basic != MPI_DATATYPE_NULL)
                conv_basic(t->basic, len / halo_dtype_ptr(t->basic)->size, &n, &xs, false);
            else
                conv_type(t, len / t->size, &n, &xs, false);
            halo_dt_unpack(outbuf, outcount, t, pos, tmp, len);
        }
        free(tmp);
    }
    *position += need;
    return MPI_SUCCESS;
}

int halo_api_pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                             void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int halo_api_pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                           void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    MPI_Count pos = *position;
    int rc = pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}

int halo_api_unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                               void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    return unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}

int halo_api_unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
                             void *outbuf, int outcount, MPI_Datatype datatype)
{
    MPI_Count pos = *position;
    int rc = unpack_external(datarep, inbuf, insize, &pos, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}

int halo_api_pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                                  MPI_Count *size)
{
    int rc = check_datarep(datarep);
    if (rc)
        return rc;
    if (incount < 0)
        return halo_err(MPI_ERR_COUNT, "(incount=%lld): must be non-negative", (long long)incount);
    *size = incount * halo_dtype_ptr(datatype)->ext32_size;
    return MPI_SUCCESS;
}
