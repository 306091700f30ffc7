/* MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size in
 * "external32", byte for byte against expected bytes written by hand from
 * the standard's table: big-endian, MPI_LONG and MPI_UNSIGNED_LONG in 4
 * bytes (truncated on pack, sign- or zero-extended on unpack), MPI_WCHAR
 * in 2, MPI_LONG_DOUBLE as a 16-byte IEEE quad, MPI_C_BOOL in 1, complex
 * as two reals, pair types as their two parts without padding; mixed
 * structs; large arrays (the chunked paths); positions that advance; the
 * error classes for another datarep and for a short buffer. */
#include <complex.h>

#include "binding/api_gen.h"
#include "core/errors.h"
#include "datatype/dtype.h"
#include "unit.h"

static unsigned char xbuf[1 << 12];

/* Packs (buf, count, t) and compares with the expected bytes; then unpacks
 * into `back` (when given) and returns the packed size. */
static long pack_expect(const void *buf, int count, MPI_Datatype t, const unsigned char *want, long nwant,
                        void *back, const char *what)
{
    MPI_Aint size = -1, pos = 0;
    UCHECK_EQ(halo_api_pack_external_size("external32", count, t, &size), MPI_SUCCESS);
    if (size != nwant) {
        fprintf(stderr, "%s: external size %ld, expected %ld\n", what, (long)size, nwant);
        unit_failures++;
    }
    memset(xbuf, 0xa5, sizeof xbuf);
    UCHECK_EQ(halo_api_pack_external("external32", buf, count, t, xbuf, sizeof xbuf, &pos), MPI_SUCCESS);
    UCHECK_EQ(pos, nwant);
    if (memcmp(xbuf, want, (size_t)nwant) != 0) {
        fprintf(stderr, "%s: bytes differ:\n  got ", what);
        for (long i = 0; i < nwant; i++)
            fprintf(stderr, "%02x ", xbuf[i]);
        fprintf(stderr, "\n  want");
        for (long i = 0; i < nwant; i++)
            fprintf(stderr, " %02x", want[i]);
        fprintf(stderr, "\n");
        unit_failures++;
    }
    UCHECK(xbuf[nwant] == 0xa5);
    if (back) {
        pos = 0;
        UCHECK_EQ(halo_api_unpack_external("external32", xbuf, nwant, &pos, back, count, t), MPI_SUCCESS);
        UCHECK_EQ(pos, nwant);
    }
    return nwant;
}

#define BYTES(...) ((const unsigned char[]){__VA_ARGS__}), sizeof((const unsigned char[]){__VA_ARGS__})

static void integers(void)
{
    int i = 0x01020304, ib;
    pack_expect(&i, 1, MPI_INT, BYTES(0x01, 0x02, 0x03, 0x04), &ib, "MPI_INT");
    UCHECK(ib == i);
    short s = -3, sb;
    pack_expect(&s, 1, MPI_SHORT, BYTES(0xff, 0xfd), &sb, "MPI_SHORT");
    UCHECK(sb == -3);
    long l[2] = {-2, 0x123456789L}, lb[2];
    pack_expect(l, 2, MPI_LONG, BYTES(0xff, 0xff, 0xff, 0xfe, 0x23, 0x45, 0x67, 0x89), lb, "MPI_LONG");
    UCHECK(lb[0] == -2 && lb[1] == 0x23456789L);
    unsigned long ul = 0xfffffffful, ulb;
    pack_expect(&ul, 1, MPI_UNSIGNED_LONG, BYTES(0xff, 0xff, 0xff, 0xff), &ulb, "MPI_UNSIGNED_LONG");
    UCHECK(ulb == 0xfffffffful);
    long long ll = -0x0102030405060708LL, llb;
    pack_expect(&ll, 1, MPI_LONG_LONG, BYTES(0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf8), &llb,
                "MPI_LONG_LONG");
    UCHECK(llb == ll);
    MPI_Aint a = 0x1122334455667788, ab;
    pack_expect(&a, 1, MPI_AINT, BYTES(0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88), &ab, "MPI_AINT");
    UCHECK(ab == a);
    MPI_Count c = 5, cb;
    pack_expect(&c, 1, MPI_COUNT, BYTES(0, 0, 0, 0, 0, 0, 0, 5), &cb, "MPI_COUNT");
    UCHECK(cb == 5);
    wchar_t w[2] = {L'A', 0x1F600}, wb[2];
    pack_expect(w, 2, MPI_WCHAR, BYTES(0x00, 0x41, 0xf6, 0x00), wb, "MPI_WCHAR");
    UCHECK(wb[0] == L'A' && wb[1] == 0xf600);
    _Bool bo[2] = {1, 0}, bob[2];
    pack_expect(bo, 2, MPI_C_BOOL, BYTES(0x01, 0x00), bob, "MPI_C_BOOL");
    UCHECK(bob[0] == 1 && bob[1] == 0);
    unsigned char raw[3] = {1, 2, 0xff}, rb[3];
    pack_expect(raw, 3, MPI_BYTE, BYTES(0x01, 0x02, 0xff), rb, "MPI_BYTE");
    int fi = 7;
    pack_expect(&fi, 1, MPI_INTEGER, BYTES(0, 0, 0, 7), NULL, "MPI_INTEGER");
    pack_expect(&fi, 1, MPI_LOGICAL, BYTES(0, 0, 0, 7), NULL, "MPI_LOGICAL");
}

static void reals(void)
{
    double d = 1.0, db;
    pack_expect(&d, 1, MPI_DOUBLE, BYTES(0x3f, 0xf0, 0, 0, 0, 0, 0, 0), &db, "MPI_DOUBLE");
    UCHECK(db == 1.0);
    float f = 1.5f, fb;
    pack_expect(&f, 1, MPI_FLOAT, BYTES(0x3f, 0xc0, 0, 0), &fb, "MPI_FLOAT");
    UCHECK(fb == 1.5f);
    long double ld[2] = {1.0L, -2.5L}, ldb[2];
    pack_expect(ld, 2, MPI_LONG_DOUBLE,
                BYTES(0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                      0xc0, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                ldb, "MPI_LONG_DOUBLE");
    UCHECK(ldb[0] == 1.0L && ldb[1] == -2.5L);
    /* every significand bit of a native long double survives the trip */
    long double third = 1.0L / 3.0L, tb, tiny = 1e-4940L, tinyb;
    pack_expect(&third, 1, MPI_LONG_DOUBLE, xbuf, 16, &tb, "1/3 (against itself)");
    UCHECK(tb == third);
    MPI_Aint pos = 0;
    UCHECK_EQ(halo_api_pack_external("external32", &tiny, 1, MPI_LONG_DOUBLE, xbuf, 16, &pos), MPI_SUCCESS);
    pos = 0;
    UCHECK_EQ(halo_api_unpack_external("external32", xbuf, 16, &pos, &tinyb, 1, MPI_LONG_DOUBLE), MPI_SUCCESS);
    UCHECK(tinyb == tiny);
    double _Complex z = 1.0 + 2.0 * _Complex_I, zb;
    pack_expect(&z, 1, MPI_C_DOUBLE_COMPLEX,
                BYTES(0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0x00, 0, 0, 0, 0, 0, 0), &zb, "MPI_C_DOUBLE_COMPLEX");
    UCHECK(zb == z);
    float fz[2] = {-1.0f, 0.5f};
    pack_expect(fz, 1, MPI_COMPLEX, BYTES(0xbf, 0x80, 0, 0, 0x3f, 0x00, 0, 0), NULL, "MPI_COMPLEX");
}

static void pairs(void)
{
    struct {
        long v;
        int i;
    } li = {-1, 7}, lib;
    pack_expect(&li, 1, MPI_LONG_INT, BYTES(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7), &lib, "MPI_LONG_INT");
    UCHECK(lib.v == -1 && lib.i == 7);
    struct {
        short v;
        int i;
    } si[2] = {{5, -1}, {-2, 3}}, sib[2];
    pack_expect(si, 2, MPI_SHORT_INT,
                BYTES(0x00, 0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 3), sib, "MPI_SHORT_INT");
    UCHECK(sib[0].v == 5 && sib[0].i == -1 && sib[1].v == -2 && sib[1].i == 3);
    struct {
        double v;
        int i;
    } di = {-0.0, 258};
    pack_expect(&di, 1, MPI_DOUBLE_INT, BYTES(0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2), NULL, "MPI_DOUBLE_INT");
    struct {
        long double v;
        int i;
    } ldi = {2.0L, 1};
    pack_expect(&ldi, 1, MPI_LONG_DOUBLE_INT,
                BYTES(0x40, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), NULL,
                "MPI_LONG_DOUBLE_INT");
}

/* A struct of several basic types, and derived types of longs. */
static void derived(void)
{
    struct rec {
        char c;
        long l;
        double d;
    } r[2] = {{'a', 0x01020304, 2.0}, {'b', -1, -1.0}}, rb[2];
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(struct rec, c), offsetof(struct rec, l), offsetof(struct rec, d)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_LONG, MPI_DOUBLE}, st, str;
    UCHECK_EQ(halo_api_type_create_struct(3, bl, disp, ty, &st), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_create_resized(st, 0, sizeof(struct rec), &str), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_commit(&str), MPI_SUCCESS);
    memset(rb, 0, sizeof rb);
    pack_expect(r, 2, str,
                BYTES('a', 0x01, 0x02, 0x03, 0x04, 0x40, 0, 0, 0, 0, 0, 0, 0,
                      'b', 0xff, 0xff, 0xff, 0xff, 0xbf, 0xf0, 0, 0, 0, 0, 0, 0),
                rb, "struct {char; long; double}");
    UCHECK(rb[0].c == 'a' && rb[0].l == 0x01020304 && rb[0].d == 2.0);
    UCHECK(rb[1].c == 'b' && rb[1].l == -1 && rb[1].d == -1.0);
    halo_api_type_free(&st);
    halo_api_type_free(&str);

    long v[3] = {1, 99, 2}, vb[3] = {0, 55, 0};
    MPI_Datatype vt;
    UCHECK_EQ(halo_api_type_vector(2, 1, 2, MPI_LONG, &vt), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_commit(&vt), MPI_SUCCESS);
    pack_expect(v, 1, vt, BYTES(0, 0, 0, 1, 0, 0, 0, 2), vb, "vector of MPI_LONG");
    UCHECK(vb[0] == 1 && vb[1] == 55 && vb[2] == 2);
    halo_api_type_free(&vt);

    /* large: chunked conversions, homogeneous (longs shrink) and mixed */
    enum { N = 100000 };
    long *big = malloc(N * sizeof *big), *bigb = malloc(N * sizeof *bigb);
    for (long k = 0; k < N; k++)
        big[k] = k * 37 - 5000;
    unsigned char *x = malloc(N * 4);
    MPI_Count pos = 0;
    UCHECK_EQ(halo_api_pack_external_c("external32", big, N, MPI_LONG, x, N * 4, &pos), MPI_SUCCESS);
    UCHECK_EQ(pos, N * 4);
    UCHECK(x[4 * 77777] == (unsigned char)((77777 * 37 - 5000) >> 24) && x[4 * 77777 + 3] == (unsigned char)(77777 * 37 - 5000));
    pos = 0;
    UCHECK_EQ(halo_api_unpack_external_c("external32", x, N * 4, &pos, bigb, N, MPI_LONG), MPI_SUCCESS);
    UCHECK(memcmp(big, bigb, N * sizeof *big) == 0);
    struct rec *rr = malloc(N * sizeof *rr), *rrb = calloc(N, sizeof *rrb);
    for (long k = 0; k < N; k++)
        rr[k] = (struct rec){(char)k, k - 3, (double)k / 8};
    UCHECK_EQ(halo_api_type_create_struct(3, bl, disp, ty, &st), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_create_resized(st, 0, sizeof(struct rec), &str), MPI_SUCCESS);
    unsigned char *y = malloc((size_t)N * 13);
    pos = 0;
    UCHECK_EQ(halo_api_pack_external_c("external32", rr, N, str, y, (MPI_Count)N * 13, &pos), MPI_SUCCESS);
    UCHECK_EQ(pos, (MPI_Count)N * 13);
    UCHECK(y[13 * 5000] == (unsigned char)(char)5000 && y[13 * 5000 + 4] == (unsigned char)(5000 - 3));
    pos = 0;
    UCHECK_EQ(halo_api_unpack_external_c("external32", y, (MPI_Count)N * 13, &pos, rrb, N, str), MPI_SUCCESS);
    bool same = true;
    for (long k = 0; k < N; k++)
        same = same && rrb[k].c == rr[k].c && rrb[k].l == rr[k].l && rrb[k].d == rr[k].d;
    UCHECK(same);
    halo_api_type_free(&st);
    halo_api_type_free(&str);
    free(big);
    free(bigb);
    free(x);
    free(rr);
    free(rrb);
    free(y);
}

static void positions_and_errors(void)
{
    int a = 1;
    double b = 2.0;
    MPI_Aint pos = 0;
    UCHECK_EQ(halo_api_pack_external("external32", &a, 1, MPI_INT, xbuf, 12, &pos), MPI_SUCCESS);
    UCHECK_EQ(halo_api_pack_external("external32", &b, 1, MPI_DOUBLE, xbuf, 12, &pos), MPI_SUCCESS);
    UCHECK_EQ(pos, 12);
    UCHECK(xbuf[3] == 1 && xbuf[4] == 0x40);
    /* no room: nothing written, position kept */
    UCHECK_EQ(halo_err_class_of(halo_api_pack_external("external32", &a, 1, MPI_INT, xbuf, 15, &pos)),
              MPI_ERR_TRUNCATE);
    UCHECK_EQ(pos, 12);
    int a2;
    double b2;
    pos = 0;
    UCHECK_EQ(halo_api_unpack_external("external32", xbuf, 12, &pos, &a2, 1, MPI_INT), MPI_SUCCESS);
    UCHECK_EQ(halo_api_unpack_external("external32", xbuf, 12, &pos, &b2, 1, MPI_DOUBLE), MPI_SUCCESS);
    UCHECK(a2 == 1 && b2 == 2.0 && pos == 12);
    UCHECK_EQ(halo_err_class_of(halo_api_unpack_external("external32", xbuf, 12, &pos, &a2, 1, MPI_INT)),
              MPI_ERR_TRUNCATE);
    MPI_Aint sz;
    UCHECK_EQ(halo_err_class_of(halo_api_pack_external_size("native", 1, MPI_INT, &sz)),
              MPI_ERR_UNSUPPORTED_DATAREP);
    pos = 0;
    UCHECK_EQ(halo_err_class_of(halo_api_pack_external("external64", &a, 1, MPI_INT, xbuf, 12, &pos)),
              MPI_ERR_UNSUPPORTED_DATAREP);
    UCHECK_EQ(halo_err_class_of(halo_api_unpack_external("native", xbuf, 12, &pos, &a2, 1, MPI_INT)),
              MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Count szc;
    UCHECK_EQ(halo_api_pack_external_size_c("external32", 3, MPI_LONG_DOUBLE_INT, &szc), MPI_SUCCESS);
    UCHECK_EQ(szc, 60);
}

int main(void)
{
    halo_dtype_init();
    integers();
    reals();
    pairs();
    derived();
    positions_and_errors();
    UNIT_DONE();
}
