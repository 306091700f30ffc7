/* Datatype queries through the public API, one rank:
 *   MPI_Type_get_envelope / MPI_Type_get_contents for every combiner, in
 *   the int and the large-count (_c) forms, per the standard's tables;
 *   derived types in the contents are new handles the caller frees (and
 *   freeing them leaves the original usable), predefined ones (and those
 *   of MPI_Type_create_f90_*) come back as themselves; the int forms
 *   refuse a type built by a _c constructor; NAMED has no contents;
 *   MPI_Type_match_size, MPI_Type_get_value_index;
 *   type names (predefined, set, dup keeps none), attributes (copied by
 *   MPI_Type_dup through the copy callback, deleted on free);
 *   MPI_Get_address, MPI_Aint_add, MPI_Aint_diff;
 *   MPI_Type_size/_c/_x, get_extent, get_true_extent in all forms;
 *   MPI_Pack/MPI_Unpack with positions, MPI_Pack_size;
 *   an uncommitted type refused by communication, accepted by
 *   constructors. */
#include "mpitest.h"

#include <stdint.h>

static void envelope(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what)
{
    int i, a, d, c;
    MPI_OK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
    CHECK(i == ni && a == na && d == nd && c == comb, "%s: envelope (%d, %d, %d, %d), expected (%d, %d, %d, %d)",
          what, i, a, d, c, ni, na, nd, comb);
    MPI_Count ci, ca, cc, cd;
    MPI_OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &c));
    CHECK(ci == ni && ca == na && cc == 0 && cd == nd && c == comb, "%s: envelope_c", what);
}

static void envelope_c(MPI_Datatype t, int ni, int na, int nc, int nd, int comb, const char *what)
{
    MPI_Count ci, ca, cc, cd;
    int c;
    MPI_OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &c));
    CHECK(ci == ni && ca == na && cc == nc && cd == nd && c == comb,
          "%s: envelope_c (%lld, %lld, %lld, %lld, %d)", what, (long long)ci, (long long)ca, (long long)cc,
          (long long)cd, c);
    int i, a, d;
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_get_envelope(t, &i, &a, &d, &c));
}

static void int_contents(void)
{
    MPI_Datatype v, t, got[4];
    int ints[16];
    MPI_Aint aints[8];

    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 3 && got[0] == MPI_INT, "contiguous contents");
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_vector(2, 3, -4, MPI_DOUBLE, &v));
    envelope(v, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
    MPI_OK(MPI_Type_get_contents(v, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 2 && ints[1] == 3 && ints[2] == -4 && got[0] == MPI_DOUBLE, "vector contents");

    MPI_OK(MPI_Type_create_hvector(2, 1, 100, v, &t));
    envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 2 && ints[1] == 1 && aints[0] == 100, "hvector contents");
    /* a derived child: a new handle, equal in everything, freed by us */
    CHECK(got[0] != v, "the contents must be a new handle for a derived type");
    int ci, ca, cd, cc;
    MPI_OK(MPI_Type_get_envelope(got[0], &ci, &ca, &cd, &cc));
    CHECK(cc == MPI_COMBINER_VECTOR && ci == 3, "the returned type is the vector");
    MPI_Count sz1, sz2;
    MPI_OK(MPI_Type_size_c(got[0], &sz1));
    MPI_OK(MPI_Type_size_c(v, &sz2));
    CHECK(sz1 == sz2 && sz1 == 48, "sizes %lld %lld", (long long)sz1, (long long)sz2);
    MPI_OK(MPI_Type_free(&got[0]));
    MPI_OK(MPI_Type_size_c(v, &sz2));   /* the original is still valid */
    MPI_OK(MPI_Type_free(&t));

    int bl[3] = {1, 0, 2}, d[3] = {4, 0, -2};
    MPI_OK(MPI_Type_indexed(3, bl, d, MPI_INT, &t));
    envelope(t, 7, 0, 1, MPI_COMBINER_INDEXED, "indexed");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 3 && ints[1] == 1 && ints[3] == 2 && ints[4] == 4 && ints[6] == -2, "indexed contents");
    MPI_OK(MPI_Type_free(&t));

    MPI_Aint ad[3] = {8, 0, -16};
    MPI_OK(MPI_Type_create_hindexed(3, bl, ad, MPI_INT, &t));
    envelope(t, 4, 3, 1, MPI_COMBINER_HINDEXED, "hindexed");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 3 && ints[3] == 2 && aints[2] == -16, "hindexed contents");
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_create_indexed_block(3, 2, d, MPI_INT, &t));
    envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && ints[4] == -2, "indexed_block contents");
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_create_hindexed_block(3, 2, ad, MPI_INT, &t));
    envelope(t, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
    MPI_OK(MPI_Type_free(&t));

    MPI_Datatype ty[3] = {MPI_CHAR, v, MPI_LONG_DOUBLE};
    MPI_OK(MPI_Type_create_struct(3, bl, ad, ty, &t));
    envelope(t, 4, 3, 3, MPI_COMBINER_STRUCT, "struct");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(got[0] == MPI_CHAR && got[2] == MPI_LONG_DOUBLE && got[1] != v, "struct contents");
    MPI_OK(MPI_Type_free(&got[1]));
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_get_contents(t, 3, 8, 4, ints, aints, got));
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_create_resized(v, -8, 200, &t));
    envelope(t, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(aints[0] == -8 && aints[1] == 200, "resized contents");
    MPI_OK(MPI_Type_free(&got[0]));
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_dup(MPI_INT, &t));
    envelope(t, 0, 0, 1, MPI_COMBINER_DUP, "dup");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(got[0] == MPI_INT, "dup contents");
    MPI_OK(MPI_Type_free(&t));

    int sizes[2] = {5, 6}, sub[2] = {2, 3}, st[2] = {1, 2};
    MPI_OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_FLOAT, &t));
    envelope(t, 8, 0, 1, MPI_COMBINER_SUBARRAY, "subarray");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 2 && ints[1] == 5 && ints[4] == 3 && ints[6] == 2 && ints[7] == MPI_ORDER_FORTRAN,
          "subarray contents");
    MPI_OK(MPI_Type_free(&t));

    int gs[2] = {6, 4}, di[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    MPI_OK(MPI_Type_create_darray(4, 1, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t));
    envelope(t, 12, 0, 1, MPI_COMBINER_DARRAY, "darray");
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 4 && ints[1] == 1 && ints[2] == 2 && ints[3] == 6 && ints[5] == MPI_DISTRIBUTE_BLOCK &&
          ints[8] == 2 && ints[9] == 2 && ints[11] == MPI_ORDER_C, "darray contents");
    MPI_OK(MPI_Type_free(&t));

    MPI_Datatype f;
    MPI_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &f));
    envelope(f, 2, 0, 0, MPI_COMBINER_F90_REAL, "f90 real");
    MPI_OK(MPI_Type_get_contents(f, 16, 8, 4, ints, aints, got));
    CHECK(ints[0] == 10 && ints[1] == MPI_UNDEFINED, "f90 real contents");
    MPI_OK(MPI_Type_create_f90_integer(5, &f));
    envelope(f, 1, 0, 0, MPI_COMBINER_F90_INTEGER, "f90 integer");
    MPI_OK(MPI_Type_create_f90_complex(3, 20, &f));
    envelope(f, 2, 0, 0, MPI_COMBINER_F90_COMPLEX, "f90 complex");
    MPI_OK(MPI_Type_contiguous(2, f, &t));
    MPI_OK(MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    CHECK(got[0] == f, "an f90 type comes back as itself");
    MPI_OK(MPI_Type_free(&t));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_free(&f));

    envelope(MPI_FLOAT_INT, 0, 0, 0, MPI_COMBINER_NAMED, "named");
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_get_contents(MPI_INT, 16, 8, 4, ints, aints, got));
    MPI_OK(MPI_Type_free(&v));
}

static void count_contents(void)
{
    MPI_Datatype t, got[4];
    int ints[16];
    MPI_Aint aints[8];
    MPI_Count c[16];

    MPI_OK(MPI_Type_contiguous_c(5, MPI_INT, &t));
    envelope_c(t, 0, 0, 1, 1, MPI_COMBINER_CONTIGUOUS, "contiguous_c");
    MPI_OK(MPI_Type_get_contents_c(t, 16, 8, 16, 4, ints, aints, c, got));
    CHECK(c[0] == 5 && got[0] == MPI_INT, "contiguous_c contents");
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_get_contents(t, 16, 8, 4, ints, aints, got));
    MPI_OK(MPI_Type_free(&t));

    MPI_OK(MPI_Type_vector_c(2, 3, 4, MPI_INT, &t));
    envelope_c(t, 0, 0, 3, 1, MPI_COMBINER_VECTOR, "vector_c");
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_create_hvector_c(2, 3, 40, MPI_INT, &t));
    envelope_c(t, 0, 0, 3, 1, MPI_COMBINER_HVECTOR, "hvector_c");
    MPI_OK(MPI_Type_get_contents_c(t, 16, 8, 16, 4, ints, aints, c, got));
    CHECK(c[2] == 40, "hvector_c contents");
    MPI_OK(MPI_Type_free(&t));

    MPI_Count bl[2] = {1, 2}, d[2] = {3, 0};
    MPI_OK(MPI_Type_indexed_c(2, bl, d, MPI_INT, &t));
    envelope_c(t, 0, 0, 5, 1, MPI_COMBINER_INDEXED, "indexed_c");
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_create_hindexed_c(2, bl, d, MPI_INT, &t));
    envelope_c(t, 0, 0, 5, 1, MPI_COMBINER_HINDEXED, "hindexed_c");
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_create_indexed_block_c(2, 3, d, MPI_INT, &t));
    envelope_c(t, 0, 0, 4, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block_c");
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_create_hindexed_block_c(2, 3, d, MPI_INT, &t));
    envelope_c(t, 0, 0, 4, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block_c");
    MPI_OK(MPI_Type_free(&t));
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Count sd[2] = {0, 8};
    MPI_OK(MPI_Type_create_struct_c(2, bl, sd, ty, &t));
    envelope_c(t, 0, 0, 5, 2, MPI_COMBINER_STRUCT, "struct_c");
    MPI_OK(MPI_Type_get_contents_c(t, 16, 8, 16, 4, ints, aints, c, got));
    CHECK(c[0] == 2 && c[2] == 2 && c[4] == 8 && got[1] == MPI_DOUBLE, "struct_c contents");
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_create_resized_c(MPI_INT, 2, 10, &t));
    envelope_c(t, 0, 0, 2, 1, MPI_COMBINER_RESIZED, "resized_c");
    MPI_OK(MPI_Type_free(&t));
    MPI_Count sz[2] = {4, 5}, ss[2] = {2, 2}, st[2] = {0, 3};
    MPI_OK(MPI_Type_create_subarray_c(2, sz, ss, st, MPI_ORDER_C, MPI_INT, &t));
    envelope_c(t, 2, 0, 6, 1, MPI_COMBINER_SUBARRAY, "subarray_c");
    MPI_OK(MPI_Type_get_contents_c(t, 16, 8, 16, 4, ints, aints, c, got));
    CHECK(ints[0] == 2 && ints[1] == MPI_ORDER_C && c[1] == 5 && c[5] == 3, "subarray_c contents");
    MPI_OK(MPI_Type_free(&t));
    MPI_Count gs[1] = {10};
    int di[1] = {MPI_DISTRIBUTE_CYCLIC}, da[1] = {3}, ps[1] = {2};
    MPI_OK(MPI_Type_create_darray_c(2, 1, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t));
    envelope_c(t, 7, 0, 1, 1, MPI_COMBINER_DARRAY, "darray_c");
    MPI_Count tsz;
    MPI_OK(MPI_Type_size_c(t, &tsz));
    CHECK(tsz == 4 * 4, "darray_c size %lld (indices 3, 4, 5, 9)", (long long)tsz);
    MPI_OK(MPI_Type_free(&t));
}

static int copies, deletes;
static int copy_fn(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)key;
    (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t;
    (void)key;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void names_attrs_addresses(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Type_get_name(MPI_DOUBLE_PRECISION, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE_PRECISION") == 0 && len == (int)strlen(name), "predefined name %s", name);
    /* Synonyms share a handle; it carries the name the standard's table
     * lists first. */
    MPI_OK(MPI_Type_get_name(MPI_LONG_LONG, name, &len));
    CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0, "MPI_LONG_LONG is named %s", name);
    MPI_OK(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0, "MPI_C_FLOAT_COMPLEX is named %s", name);
    MPI_Datatype t, u;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0, "a new type has no name");
    MPI_OK(MPI_Type_set_name(t, "pair of ints"));
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "pair of ints") == 0, "name %s", name);

    int key;
    MPI_OK(MPI_Type_create_keyval(copy_fn, delete_fn, &key, NULL));
    MPI_OK(MPI_Type_set_attr(t, key, (void *)0x1000));
    MPI_OK(MPI_Type_dup(t, &u));
    void *v;
    int flag;
    MPI_OK(MPI_Type_get_attr(u, key, &v, &flag));
    CHECK(flag && v == (void *)0x1001 && copies == 1, "dup copies the attribute");
    MPI_OK(MPI_Type_get_name(u, name, &len));
    CHECK(len == 0, "a dup has no name");
    MPI_OK(MPI_Type_free(&u));
    CHECK(deletes == 1, "free deletes the attribute");
    MPI_OK(MPI_Type_delete_attr(t, key));
    CHECK(deletes == 2, "delete_attr");
    MPI_OK(MPI_Type_get_attr(t, key, &v, &flag));
    CHECK(!flag, "deleted");
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free_keyval(&key));

    double arr[10];
    MPI_Aint a0, a5;
    MPI_OK(MPI_Get_address(&arr[0], &a0));
    MPI_OK(MPI_Get_address(&arr[5], &a5));
    CHECK(MPI_Aint_diff(a5, a0) == 40 && MPI_Aint_add(a0, 40) == a5, "address arithmetic");
    CHECK(a0 == (MPI_Aint)(uintptr_t)&arr[0], "MPI_BOTTOM is address 0");

    /* MPI_Pack / MPI_Unpack from and to MPI_BOTTOM with absolute addresses */
    int x = 11, y[3] = {21, 22, 23}, bl[2] = {1, 3};
    MPI_Aint ad[2];
    MPI_OK(MPI_Get_address(&x, &ad[0]));
    MPI_OK(MPI_Get_address(y, &ad[1]));
    MPI_Datatype h;
    MPI_OK(MPI_Type_create_hindexed(2, bl, ad, MPI_INT, &h));
    MPI_OK(MPI_Type_commit(&h));
    char pk[16];
    int pos = 0;
    MPI_OK(MPI_Pack(MPI_BOTTOM, 1, h, pk, 16, &pos, MPI_COMM_WORLD));
    int vals[4];
    memcpy(vals, pk, sizeof vals);
    CHECK(pos == 16 && vals[0] == 11 && vals[1] == 21 && vals[3] == 23, "pack from MPI_BOTTOM");
    x = y[0] = y[1] = y[2] = 0;
    pos = 0;
    MPI_OK(MPI_Unpack(pk, 16, &pos, MPI_BOTTOM, 1, h, MPI_COMM_WORLD));
    CHECK(x == 11 && y[0] == 21 && y[2] == 23, "unpack to MPI_BOTTOM");
    MPI_OK(MPI_Type_free(&h));
}

static void sizes_and_pack(void)
{
    MPI_Datatype t;
    MPI_OK(MPI_Type_vector(3, 2, -5, MPI_INT, &t));
    int s;
    MPI_Count sc, lbc, exc;
    MPI_Aint lb, ex;
    MPI_OK(MPI_Type_size(t, &s));
    MPI_OK(MPI_Type_size_x(t, &sc));
    CHECK(s == 24 && sc == 24, "size");
    MPI_OK(MPI_Type_get_extent(t, &lb, &ex));
    MPI_OK(MPI_Type_get_extent_x(t, &lbc, &exc));
    CHECK(lb == -40 && ex == 48 && lbc == -40 && exc == 48, "extent %ld %ld", (long)lb, (long)ex);
    MPI_OK(MPI_Type_get_true_extent(t, &lb, &ex));
    MPI_OK(MPI_Type_get_true_extent_c(t, &lbc, &exc));
    CHECK(lb == -40 && ex == 48 && lbc == -40 && exc == 48, "true extent");

    /* uncommitted: constructors take it, communication refuses it */
    MPI_Datatype c;
    MPI_OK(MPI_Type_contiguous(2, t, &c));
    MPI_OK(MPI_Type_commit(&c));
    int buf[64], out[64];
    for (int i = 0; i < 64; i++)
        buf[i] = i;
    int psz, pos = 0;
    MPI_OK(MPI_Pack_size(1, c, MPI_COMM_WORLD, &psz));
    CHECK(psz >= 48, "pack size %d", psz);
    char pk[64];
    MPI_OK(MPI_Pack(&buf[30], 1, c, pk, (int)sizeof pk, &pos, MPI_COMM_WORLD));
    CHECK(pos == 48, "position %d", pos);
    int pi[12];
    memcpy(pi, pk, sizeof pi);
    /* element 0: ints 30 31, 25 26, 20 21; element 1 one extent (12 ints) on */
    CHECK(pi[0] == 30 && pi[1] == 31 && pi[2] == 25 && pi[3] == 26 && pi[4] == 20 && pi[5] == 21 &&
          pi[6] == 42 && pi[11] == 33, "packed data");
    memset(out, 0, sizeof out);
    pos = 0;
    MPI_OK(MPI_Unpack(pk, 48, &pos, &out[30], 1, c, MPI_COMM_WORLD));
    CHECK(out[31] == 31 && out[25] == 25 && out[21] == 21 && out[22] == 0 && out[43] == 43 && out[41] == 0,
          "unpacked data");
    MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Unpack(pk, 48, &pos, &out[30], 1, c, MPI_COMM_WORLD));

    MPI_Request r;
    MPI_FAILS(MPI_ERR_TYPE, MPI_Isend(&buf[30], 1, t, 0, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free(&c));

    /* match_size and value_index */
    MPI_Datatype m;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    CHECK(m == MPI_DOUBLE_PRECISION, "match REAL 8");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &m));
    CHECK(m == MPI_REAL, "match REAL 4");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    CHECK(m == MPI_INTEGER, "match INTEGER 4");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &m));
    CHECK(m == MPI_INTEGER8, "match INTEGER 8");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    CHECK(m == MPI_DOUBLE_COMPLEX, "match COMPLEX 16");
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m));
    MPI_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &m));
    CHECK(m == MPI_DOUBLE_INT, "value_index");
}

/* A list of many pieces that are lists themselves: hindexed_block of nb
 * copies of a hindexed type of negative-stride vectors (the shape of one
 * of MPICH's dtpools types). Building its program copies the outer list's
 * entries and then its pieces', so the entry array grows in the middle of
 * the copy; pack and unpack are checked against the type map written out
 * by hand. */
static void nested_lists(int nb, int count)
{
    MPI_Datatype v, h, b;
    MPI_OK(MPI_Type_vector(2, 1, -2, MPI_INT, &v));          /* ints at 0, -8; extent 12 */
    int hbl[2] = {3, 1};
    MPI_Aint hd[2] = {32, 8};
    MPI_OK(MPI_Type_create_hindexed(2, hbl, hd, v, &h));     /* 8 ints; lb 0, extent 60 */
    MPI_Aint *bd = malloc(sizeof(MPI_Aint) * (size_t)nb);
    for (int i = 0; i < nb; i++)
        bd[i] = 8 + 30L * i * (i + 1);                        /* gaps growing by 60 */
    MPI_OK(MPI_Type_create_hindexed_block(nb, 1, bd, h, &b));
    MPI_OK(MPI_Type_commit(&b));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(b, &lb, &ext));
    CHECK(lb == 8 && ext == bd[nb - 1] + 60 - 8, "nested lists (%d): lb %ld extent %ld", nb, (long)lb,
          (long)ext);
    /* the type map, element by element, as byte offsets */
    long n = 0, *map = malloc(sizeof(long) * 8 * (size_t)nb * (size_t)count);
    for (int c = 0; c < count; c++)
        for (int i = 0; i < nb; i++) {
            long at = c * (long)ext + (long)bd[i];
            for (int k = 0; k < 3; k++) {
                map[n++] = at + 32 + 12 * k;
                map[n++] = at + 32 + 12 * k - 8;
            }
            map[n++] = at + 8;
            map[n++] = at;
        }
    long span = count * (long)ext + 64;
    int *buf = calloc((size_t)span / 4 + 1, sizeof(int)), *back = calloc((size_t)span / 4 + 1, sizeof(int));
    for (long i = 0; i < n; i++)
        buf[map[i] / 4] = (int)i + 1;
    int psz;
    MPI_OK(MPI_Pack_size(count, b, MPI_COMM_SELF, &psz));
    CHECK(psz == 4 * n, "nested lists (%d): pack size %d, expected %ld", nb, psz, 4 * n);
    int *pk = malloc((size_t)psz), pos = 0;
    MPI_OK(MPI_Pack(buf, count, b, pk, psz, &pos, MPI_COMM_SELF));
    for (long i = 0; i < n; i++)
        CHECK(pk[i] == (int)i + 1, "nested lists (%d blocks, count %d): packed int %ld is %d, expected %ld", nb,
              count, i, pk[i], i + 1);
    pos = 0;
    MPI_OK(MPI_Unpack(pk, psz, &pos, back, count, b, MPI_COMM_SELF));
    for (long i = 0; i < span / 4; i++)
        CHECK(back[i] == buf[i], "nested lists (%d blocks, count %d): unpacked byte offset %ld holds %d, "
              "expected %d", nb, count, 4 * i, back[i], buf[i]);
    MPI_OK(MPI_Type_free(&v));
    MPI_OK(MPI_Type_free(&h));
    MPI_OK(MPI_Type_free(&b));
    free(bd);
    free(map);
    free(buf);
    free(back);
    free(pk);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int_contents();
    count_contents();
    names_attrs_addresses();
    sizes_and_pack();
    for (int nb = 1; nb <= 40; nb += 3)
        for (int count = 1; count <= 2; count++)
            nested_lists(nb, count);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("dt_types: ok\n");
    MPI_Finalize();
    return 0;
}
