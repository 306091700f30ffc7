/* Every datatype constructor against sizes, bounds and true bounds
 * computed by hand from the standard's definitions (x86-64 layouts):
 * negative strides and displacements, struct padding, explicit bounds
 * (resized) winning over data in a struct, subarrays in C and Fortran
 * order, darrays block/cyclic/cyclic(k)/none with the default arguments,
 * dup, f90 types; the predefined sizes the ABI fixes; exact element
 * counts (MPI_UNDEFINED inside a basic element) and their inverse; the
 * compiled form of common shapes (a vector is one loop over one run).
 * Errors: bad arguments get their error class. */
#include "binding/api_gen.h"
#include "core/errors.h"
#include "datatype/dtype.h"
#include "unit.h"

static int err_class(int rc)
{
    return halo_err_class_of(rc);
}

typedef struct expect {
    MPI_Count size, lb, extent, tlb, textent;
} expect_t;

#define CHECK_TYPE(t, sz, l, ext, tl, text)                                                       \
    do {                                                                                      \
        halo_dtype_t *d_ = halo_dtype_ptr(t);                                                 \
        UCHECK_EQ(d_->size, sz);                                                              \
        UCHECK_EQ(d_->lb, l);                                                                 \
        UCHECK_EQ(d_->extent, ext);                                                           \
        UCHECK_EQ(d_->true_lb, tl);                                                           \
        UCHECK_EQ(d_->true_ub - d_->true_lb, text);                                           \
    } while (0)

static void predefined(void)
{
    CHECK_TYPE(MPI_INTEGER, 4, 0, 4, 0, 4);
    CHECK_TYPE(MPI_REAL, 4, 0, 4, 0, 4);
    CHECK_TYPE(MPI_LOGICAL, 4, 0, 4, 0, 4);
    CHECK_TYPE(MPI_DOUBLE_PRECISION, 8, 0, 8, 0, 8);
    CHECK_TYPE(MPI_COMPLEX, 8, 0, 8, 0, 8);
    CHECK_TYPE(MPI_DOUBLE_COMPLEX, 16, 0, 16, 0, 16);
    CHECK_TYPE(MPI_C_BOOL, 1, 0, 1, 0, 1);
    CHECK_TYPE(MPI_WCHAR, 4, 0, 4, 0, 4);
    CHECK_TYPE(MPI_LONG_DOUBLE, 16, 0, 16, 0, 16);
    CHECK_TYPE(MPI_FLOAT_INT, 8, 0, 8, 0, 8);
    CHECK_TYPE(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    CHECK_TYPE(MPI_LONG_INT, 12, 0, 16, 0, 12);
    CHECK_TYPE(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    CHECK_TYPE(MPI_2INT, 8, 0, 8, 0, 8);
    CHECK_TYPE(MPI_LONG_DOUBLE_INT, 20, 0, 32, 0, 20);
    CHECK_TYPE(MPI_COMPLEX32, 32, 0, 32, 0, 32);
    UCHECK(halo_dt_contig(halo_dtype_ptr(MPI_DOUBLE)));
    UCHECK(!halo_dt_contig(halo_dtype_ptr(MPI_SHORT_INT)));
    /* pairs count two basic elements */
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(MPI_SHORT_INT), 2), 1);
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(MPI_SHORT_INT), 6), 2);
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(MPI_SHORT_INT), 4), MPI_UNDEFINED);
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(MPI_DOUBLE_INT), 8), 1);
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(MPI_DOUBLE), 12), MPI_UNDEFINED);
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(MPI_DOUBLE), 16), 2);
}

static void contiguous_vector(void)
{
    MPI_Datatype t;
    UCHECK_EQ(halo_api_type_contiguous(3, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 12, 0, 12, 0, 12);
    UCHECK(halo_dt_contig(halo_dtype_ptr(t)));
    halo_api_type_free(&t);

    UCHECK_EQ(halo_api_type_contiguous(0, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 0, 0, 0, 0, 0);
    halo_api_type_free(&t);

    /* blocks of 2 ints every 4 ints: 3 blocks end at (2*4+2)*4 */
    UCHECK_EQ(halo_api_type_vector(3, 2, 4, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 24, 0, 40, 0, 40);
    {
        const halo_dtype_t *d = halo_dtype_ptr(t);
        /* one loop over one run */
        UCHECK_EQ(d->prog.nnodes, 2);
        UCHECK_EQ(d->prog.nodes[d->prog.root].kind, HALO_DT_LOOP);
        UCHECK_EQ(d->prog.nodes[d->prog.root].stride, 16);
        UCHECK_EQ(d->prog.nodes[d->prog.nodes[d->prog.root].child].size, 8);
        UCHECK_EQ(halo_dt_elements(d, 24), 6);
        UCHECK_EQ(halo_dt_elements(d, 10), MPI_UNDEFINED);
    }
    halo_api_type_free(&t);

    /* negative stride: blocks at 0, -16, -32 bytes */
    UCHECK_EQ(halo_api_type_vector(3, 2, -4, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 24, -32, 40, -32, 40);
    halo_api_type_free(&t);

    UCHECK_EQ(halo_api_type_create_hvector(2, 1, -20, MPI_DOUBLE, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 16, -20, 28, -20, 28);
    halo_api_type_free(&t);

    /* stride equal to the block: contiguous */
    UCHECK_EQ(halo_api_type_vector(5, 3, 3, MPI_FLOAT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 60, 0, 60, 0, 60);
    UCHECK(halo_dt_contig(halo_dtype_ptr(t)));
    halo_api_type_free(&t);

    /* vector of vectors: a 2-D plane of a 3-D array */
    MPI_Datatype row, plane;
    UCHECK_EQ(halo_api_type_vector(4, 1, 8, MPI_DOUBLE, &row), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_create_hvector(3, 1, 8 * 8 * 8, row, &plane), MPI_SUCCESS);
    CHECK_TYPE(plane, 96, 0, 2 * 512 + 3 * 64 + 8, 0, 2 * 512 + 3 * 64 + 8);
    halo_api_type_free(&row);
    halo_api_type_free(&plane);

    /* blocks of 64 and 256 bytes (the inline-copy path), whole and resumed */
    for (int bl = 8; bl <= 32; bl *= 4) {
        double src[5 * 64], dst[5 * 64], pk[5 * 32], want[5 * 32];
        for (int i = 0; i < 5 * 64; i++) {
            src[i] = i;
            dst[i] = -1;
        }
        for (int i = 0, n = 0; i < 5; i++)
            for (int j = 0; j < bl; j++)
                want[n++] = i * 2 * bl + j;
        UCHECK_EQ(halo_api_type_vector(5, bl, 2 * bl, MPI_DOUBLE, &t), MPI_SUCCESS);
        UCHECK_EQ(halo_api_type_commit(&t), MPI_SUCCESS);
        halo_dtype_t *d = halo_dtype_ptr(t);
        MPI_Count total = 5 * bl * 8;
        UCHECK_EQ(halo_dt_pack(src, 1, d, 0, pk, total), total);
        UCHECK(memcmp(pk, want, (size_t)total) == 0);
        memset(pk, 0, sizeof pk);
        for (MPI_Count pos = 0; pos < total; pos += 100)
            halo_dt_pack(src, 1, d, pos, (char *)pk + pos, 100);
        UCHECK(memcmp(pk, want, (size_t)total) == 0);
        UCHECK_EQ(halo_dt_unpack(dst, 1, d, 0, want, total), total);
        bool ok = true;
        for (int i = 0; i < 5 * 2 * bl; i++)
            ok = ok && dst[i] == ((i / bl) % 2 ? -1 : src[i]);
        UCHECK(ok);
        halo_api_type_free(&t);
    }

    UCHECK_EQ(err_class(halo_api_type_contiguous(-1, MPI_INT, &t)), MPI_ERR_COUNT);
    UCHECK_EQ(err_class(halo_api_type_vector(2, 1, 1, MPI_DATATYPE_NULL, &t)), MPI_ERR_TYPE);
}

static void indexed_family(void)
{
    MPI_Datatype t;
    int bl[3] = {2, 0, 1}, d[3] = {5, 1, 0};
    UCHECK_EQ(halo_api_type_indexed(3, bl, d, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 12, 0, 28, 0, 28);
    halo_api_type_free(&t);

    int bl2[2] = {1, 1};
    MPI_Aint hd[2] = {-8, 16};
    UCHECK_EQ(halo_api_type_create_hindexed(2, bl2, hd, MPI_DOUBLE, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 16, -8, 32, -8, 32);
    halo_api_type_free(&t);

    int bd[3] = {4, -2, 0};
    UCHECK_EQ(halo_api_type_create_indexed_block(3, 2, bd, MPI_SHORT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 12, -4, 16, -4, 16);
    halo_api_type_free(&t);

    MPI_Aint hbd[2] = {100, 3};
    UCHECK_EQ(halo_api_type_create_hindexed_block(2, 3, hbd, MPI_CHAR, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 6, 3, 100, 3, 100);
    halo_api_type_free(&t);

    /* regular displacements compile to a loop */
    int rd[4] = {0, 10, 20, 30};
    UCHECK_EQ(halo_api_type_create_indexed_block(4, 2, rd, MPI_DOUBLE, &t), MPI_SUCCESS);
    UCHECK_EQ(halo_dtype_ptr(t)->prog.nodes[halo_dtype_ptr(t)->prog.root].kind, HALO_DT_LOOP);
    halo_api_type_free(&t);

    int neg[1] = {-1};
    UCHECK_EQ(err_class(halo_api_type_indexed(1, neg, d, MPI_INT, &t)), MPI_ERR_ARG);
}

static void structs(void)
{
    MPI_Datatype t;
    {
        int bl[3] = {1, 1, 1};
        MPI_Aint d[3] = {0, 8, 16};
        MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        UCHECK_EQ(halo_api_type_create_struct(3, bl, d, ty, &t), MPI_SUCCESS);
        CHECK_TYPE(t, 13, 0, 24, 0, 20);   /* padded to a multiple of 8 */
        halo_dtype_t *s = halo_dtype_ptr(t);
        UCHECK(s->basic == MPI_DATATYPE_NULL);
        UCHECK_EQ(halo_dt_elements(s, 1), 1);
        UCHECK_EQ(halo_dt_elements(s, 5), MPI_UNDEFINED);
        UCHECK_EQ(halo_dt_elements(s, 9), 2);
        UCHECK_EQ(halo_dt_elements(s, 13), 3);
        UCHECK_EQ(halo_dt_elements(s, 14), 4);
        UCHECK_EQ(halo_dt_elements(s, 13 + 9), 5);
        UCHECK_EQ(halo_dt_elements(s, 13 + 10), MPI_UNDEFINED);
        UCHECK_EQ(halo_dt_elements_bytes(s, 5), 22);
        UCHECK_EQ(halo_dt_elements_partial(s, 12), 2);
        halo_api_type_free(&t);
    }
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 4};
        MPI_Datatype ty[2] = {MPI_INT, MPI_CHAR};
        UCHECK_EQ(halo_api_type_create_struct(2, bl, d, ty, &t), MPI_SUCCESS);
        CHECK_TYPE(t, 5, 0, 8, 0, 5);
        halo_api_type_free(&t);
    }
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 16};
        MPI_Datatype ty[2] = {MPI_LONG_DOUBLE, MPI_CHAR};
        UCHECK_EQ(halo_api_type_create_struct(2, bl, d, ty, &t), MPI_SUCCESS);
        CHECK_TYPE(t, 17, 0, 32, 0, 17);
        halo_api_type_free(&t);
    }
    {
        /* an explicit ub (resized member) wins over data, and stops padding */
        MPI_Datatype r;
        UCHECK_EQ(halo_api_type_create_resized(MPI_INT, -4, 12, &r), MPI_SUCCESS);
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 100};
        MPI_Datatype ty[2] = {r, MPI_DOUBLE};
        UCHECK_EQ(halo_api_type_create_struct(2, bl, d, ty, &t), MPI_SUCCESS);
        CHECK_TYPE(t, 12, -4, 12, 0, 108);
        UCHECK(halo_dtype_ptr(t)->flags & HALO_DT_UB_MARKED);
        halo_api_type_free(&t);
        /* a struct with a displaced marked member: markers move with it */
        MPI_Aint d2[1] = {10};
        int bl1[1] = {2};
        UCHECK_EQ(halo_api_type_create_struct(1, bl1, d2, &r, &t), MPI_SUCCESS);
        CHECK_TYPE(t, 8, 6, 24, 10, 16);
        halo_api_type_free(&t);
        halo_api_type_free(&r);
    }
    {
        /* zero block lengths bring nothing, not even alignment */
        int bl[2] = {0, 3};
        MPI_Aint d[2] = {-50, 1};
        MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_CHAR};
        UCHECK_EQ(halo_api_type_create_struct(2, bl, d, ty, &t), MPI_SUCCESS);
        CHECK_TYPE(t, 3, 1, 3, 1, 3);
        halo_api_type_free(&t);
    }
}

static void resized_dup(void)
{
    MPI_Datatype r, c, d;
    UCHECK_EQ(halo_api_type_create_resized(MPI_INT, -2, 10, &r), MPI_SUCCESS);
    CHECK_TYPE(r, 4, -2, 10, 0, 4);
    UCHECK(!halo_dt_contig(halo_dtype_ptr(r)));
    UCHECK_EQ(halo_api_type_contiguous(2, r, &c), MPI_SUCCESS);
    CHECK_TYPE(c, 8, -2, 20, 0, 14);
    UCHECK_EQ(halo_api_type_dup(c, &d), MPI_SUCCESS);
    CHECK_TYPE(d, 8, -2, 20, 0, 14);
    UCHECK_EQ(halo_dtype_ptr(d)->combiner, MPI_COMBINER_DUP);
    halo_api_type_free(&c);
    halo_api_type_free(&r);
    /* the dup keeps working after its old type is freed */
    unsigned char src[24], out[8], want[8] = {0, 1, 2, 3, 10, 11, 12, 13};
    for (int i = 0; i < 24; i++)
        src[i] = (unsigned char)i;
    UCHECK_EQ(halo_dt_pack(src, 1, halo_dtype_ptr(d), 0, out, 8), 8);   /* ints at bytes 0 and 10 */
    UCHECK(memcmp(out, want, 8) == 0);
    halo_api_type_free(&d);

    /* resized to the element size: contiguous again */
    UCHECK_EQ(halo_api_type_create_resized(MPI_DOUBLE, 0, 8, &r), MPI_SUCCESS);
    UCHECK(halo_dt_contig(halo_dtype_ptr(r)));
    halo_api_type_free(&r);
    /* negative extent */
    UCHECK_EQ(halo_api_type_create_resized(MPI_INT, 0, -4, &r), MPI_SUCCESS);
    UCHECK_EQ(halo_dtype_ptr(r)->extent, -4);
    int v[3] = {7, 8, 9}, o[3];
    UCHECK_EQ(halo_dt_pack(&v[2], 3, halo_dtype_ptr(r), 0, o, 12), 12);
    UCHECK(o[0] == 9 && o[1] == 8 && o[2] == 7);
    halo_api_type_free(&r);
}

static void arrays(void)
{
    MPI_Datatype t;
    int sizes[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
    UCHECK_EQ(halo_api_type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 48, 0, 160, 56, 120 - 56);
    halo_api_type_free(&t);
    UCHECK_EQ(halo_api_type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 48, 0, 160, 72, 152 - 72);
    halo_api_type_free(&t);
    /* a full-width slab is one run */
    int s3[3] = {4, 3, 2}, sub3[3] = {2, 3, 2}, st3[3] = {1, 0, 0};
    UCHECK_EQ(halo_api_type_create_subarray(3, s3, sub3, st3, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 48, 0, 96, 24, 48);
    MPI_Count off;
    UCHECK(halo_dt_one_run(halo_dtype_ptr(t), 1, &off) && off == 24);
    halo_api_type_free(&t);
    /* subarray of a 3-D array: one loop per non-contiguous dimension */
    int g[3] = {16, 16, 16}, s[3] = {16, 1, 16}, o3[3] = {0, 15, 0};
    UCHECK_EQ(halo_api_type_create_subarray(3, g, s, o3, MPI_ORDER_C, MPI_DOUBLE, &t), MPI_SUCCESS);
    UCHECK_EQ(halo_dtype_ptr(t)->prog.nnodes, 2);
    halo_api_type_free(&t);

    int bad[2] = {3, 5};
    UCHECK_EQ(err_class(halo_api_type_create_subarray(2, sizes, bad, st, MPI_ORDER_C, MPI_INT, &t)), MPI_ERR_ARG);

    /* darray, 1-D */
    int gs[1] = {10}, ps[1] = {3};
    int blk[1] = {MPI_DISTRIBUTE_BLOCK}, cyc[1] = {MPI_DISTRIBUTE_CYCLIC}, dflt[1] = {MPI_DISTRIBUTE_DFLT_DARG};
    UCHECK_EQ(halo_api_type_create_darray(3, 2, 1, gs, blk, dflt, ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 8, 0, 40, 32, 8);   /* blocks of 4: rank 2 has [8, 10) */
    halo_api_type_free(&t);
    UCHECK_EQ(halo_api_type_create_darray(3, 1, 1, gs, cyc, dflt, ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 12, 0, 40, 4, 28);  /* 1, 4, 7 */
    halo_api_type_free(&t);
    int two[1] = {2};
    UCHECK_EQ(halo_api_type_create_darray(3, 1, 1, gs, cyc, two, ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 16, 0, 40, 8, 32);  /* [2, 4) and [8, 10) */
    halo_api_type_free(&t);
    UCHECK_EQ(halo_api_type_create_darray(3, 2, 1, gs, cyc, two, ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 8, 0, 40, 16, 8);   /* [4, 6) only */
    halo_api_type_free(&t);
    int three[1] = {3};
    UCHECK_EQ(err_class(halo_api_type_create_darray(3, 0, 1, gs, blk, three, ps, MPI_ORDER_C, MPI_INT, &t)),
              MPI_ERR_ARG);   /* 3 * 3 < 10 */
    /* 2-D: rows by block, columns cyclic(2), rank 3 = coordinates (1, 1) */
    int g2[2] = {4, 6}, d2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, a2[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2},
        p2[2] = {2, 2};
    UCHECK_EQ(halo_api_type_create_darray(4, 3, 2, g2, d2, a2, p2, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    /* rows 2..3, columns 2..3: elements (2,2) (2,3) (3,2) (3,3) */
    CHECK_TYPE(t, 16, 0, 96, (2 * 6 + 2) * 4, (3 * 6 + 3 - 2 * 6 - 2 + 1) * 4);
    halo_api_type_free(&t);
    /* Fortran order: column index first */
    UCHECK_EQ(halo_api_type_create_darray(4, 3, 2, g2, d2, a2, p2, MPI_ORDER_FORTRAN, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 16, 0, 96, (2 + 2 * 4) * 4, (3 + 3 * 4 - 2 - 2 * 4 + 1) * 4);
    halo_api_type_free(&t);
    int none[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK}, p12[2] = {1, 2};
    int dd[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    UCHECK_EQ(halo_api_type_create_darray(2, 1, 2, g2, none, dd, p12, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
    CHECK_TYPE(t, 48, 0, 96, 12, 84);  /* all rows, columns 3..5 */
    halo_api_type_free(&t);
    int p21[2] = {2, 1};
    UCHECK_EQ(err_class(halo_api_type_create_darray(2, 1, 2, g2, none, dd, p21, MPI_ORDER_C, MPI_INT, &t)),
              MPI_ERR_ARG);
}

static void fortran(void)
{
    MPI_Datatype a, b;
    UCHECK_EQ(halo_api_type_create_f90_real(6, MPI_UNDEFINED, &a), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_create_f90_real(6, MPI_UNDEFINED, &b), MPI_SUCCESS);
    UCHECK(a == b);
    CHECK_TYPE(a, 4, 0, 4, 0, 4);
    UCHECK_EQ(halo_dtype_ptr(a)->combiner, MPI_COMBINER_F90_REAL);
    UCHECK_EQ(err_class(halo_api_type_free(&a)), MPI_ERR_TYPE);
    UCHECK_EQ(halo_api_type_create_f90_real(15, 300, &a), MPI_SUCCESS);
    CHECK_TYPE(a, 8, 0, 8, 0, 8);
    UCHECK_EQ(halo_api_type_create_f90_complex(15, MPI_UNDEFINED, &a), MPI_SUCCESS);
    CHECK_TYPE(a, 16, 0, 16, 0, 16);
    UCHECK_EQ(halo_api_type_create_f90_integer(9, &a), MPI_SUCCESS);
    CHECK_TYPE(a, 4, 0, 4, 0, 4);
    UCHECK_EQ(halo_api_type_create_f90_integer(18, &a), MPI_SUCCESS);
    CHECK_TYPE(a, 8, 0, 8, 0, 8);
    UCHECK_EQ(err_class(halo_api_type_create_f90_integer(40, &a)), MPI_ERR_ARG);
    UCHECK_EQ(err_class(halo_api_type_create_f90_real(40, 5000, &a)), MPI_ERR_ARG);
    /* in a struct it is a basic type like any other */
    UCHECK_EQ(halo_api_type_create_f90_real(6, 30, &a), MPI_SUCCESS);
    MPI_Datatype s;
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {a, MPI_DOUBLE};
    UCHECK_EQ(halo_api_type_create_struct(2, bl, d, ty, &s), MPI_SUCCESS);
    CHECK_TYPE(s, 12, 0, 16, 0, 16);
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(s), 4), 1);
    UCHECK_EQ(halo_dt_elements(halo_dtype_ptr(s), 2), MPI_UNDEFINED);
    UCHECK_EQ(halo_dtype_ptr(s)->ext32_size, 12);
    halo_api_type_free(&s);
}

/* Large calls (over 16 MiB) take the streaming-store path: runs of 256
 * bytes, runs of 72 + 1 bytes (mixed lengths, odd alignments), resumed in
 * large chunks at odd positions. */
static void large(void)
{
    MPI_Datatype v, s, sr, vs;
    UCHECK_EQ(halo_api_type_vector(80000, 32, 64, MPI_DOUBLE, &v), MPI_SUCCESS);   /* 20 MB packed */
    int bl[2] = {9, 1};
    MPI_Aint d[2] = {0, 75};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_CHAR};
    UCHECK_EQ(halo_api_type_create_struct(2, bl, d, ty, &s), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_create_resized(s, 0, 80, &sr), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_vector(240000, 1, 2, sr, &vs), MPI_SUCCESS);           /* 17.5 MB packed */
    MPI_Datatype types[2] = {v, vs};
    for (int k = 0; k < 2; k++) {
        halo_dtype_t *t = halo_dtype_ptr(types[k]);
        MPI_Count total = t->size, span = t->true_ub;
        unsigned char *src = malloc((size_t)span), *dst = malloc((size_t)span), *pk = malloc((size_t)total);
        unsigned char *ref = malloc((size_t)total);
        for (MPI_Count i = 0; i < span; i++)
            src[i] = (unsigned char)(i * 7 + i / 251);
        /* reference: the engine in small chunks (ordinary stores) */
        for (MPI_Count pos = 0; pos < total; pos += 4093)
            halo_dt_pack(src, 1, t, pos, ref + pos, 4093);
        UCHECK_EQ(halo_dt_pack(src, 1, t, 0, pk, total), total);
        UCHECK(memcmp(pk, ref, (size_t)total) == 0);
        memset(pk, 0, (size_t)total);
        MPI_Count cut = ((MPI_Count)17 << 20) + 13;   /* a streaming call, then an ordinary one */
        halo_dt_pack(src, 1, t, 0, pk, cut);
        halo_dt_pack(src, 1, t, cut, pk + cut, total - cut);
        UCHECK(memcmp(pk, ref, (size_t)total) == 0);
        memset(dst, 0xcc, (size_t)span);
        UCHECK_EQ(halo_dt_unpack(dst, 1, t, 0, ref, total), total);
        unsigned char *back = malloc((size_t)total);
        for (MPI_Count pos = 0; pos < total; pos += 4093)
            halo_dt_pack(dst, 1, t, pos, back + pos, 4093);
        UCHECK(memcmp(back, ref, (size_t)total) == 0);
        /* bytes outside the map untouched: the gap after the first block */
        UCHECK(k != 0 || dst[256] == 0xcc);
        UCHECK(k != 1 || (dst[72] == 0xcc && dst[80] == 0xcc));
        free(back);
        free(src);
        free(dst);
        free(pk);
        free(ref);
    }
    halo_api_type_free(&v);
    halo_api_type_free(&s);
    halo_api_type_free(&sr);
    halo_api_type_free(&vs);
}

/* Types freed by the user stay usable by what still holds them. */
static void lifetime(void)
{
    MPI_Datatype v, s;
    UCHECK_EQ(halo_api_type_vector(2, 1, 2, MPI_INT, &v), MPI_SUCCESS);
    int bl[1] = {2};
    MPI_Aint d[1] = {0};
    UCHECK_EQ(halo_api_type_create_struct(1, bl, d, &v, &s), MPI_SUCCESS);
    halo_dtype_t *sp = halo_dtype_ptr(s);
    halo_obj_ref(sp);   /* an operation in flight */
    halo_api_type_free(&v);
    halo_api_type_free(&s);
    UCHECK(s == MPI_DATATYPE_NULL);
    int src[8] = {0, 1, 2, 3, 4, 5, 6, 7}, out[4];
    UCHECK_EQ(halo_dt_pack(src, 1, sp, 0, out, 16), 16);
    UCHECK(out[0] == 0 && out[1] == 2 && out[2] == 3 && out[3] == 5);
    UCHECK_EQ(halo_dt_elements(sp, 12), 3);
    halo_dtype_release(sp);
}

int main(void)
{
    halo_dtype_init();
    predefined();
    contiguous_vector();
    indexed_family();
    structs();
    resized_dup();
    arrays();
    fortran();
    lifetime();
    large();
    halo_dtype_finalize();
    UNIT_DONE();
}
