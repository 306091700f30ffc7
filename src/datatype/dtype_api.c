/* Datatype queries, commit/free, names, envelope/contents, and MPI_Pack /
 * MPI_Unpack in the native representation. */
#include "datatype/dtype.h"

#include "binding/api_gen.h"
#include "core/attr.h"
#include "core/errors.h"

void halo_dt_api_anchor(void)
{
}

static int type_arg(MPI_Datatype t, halo_dtype_t **out)
{
    if (t == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_TYPE, "(datatype=MPI_DATATYPE_NULL): a datatype is required");
    *out = halo_dtype_get(t);
    if (!*out)
        return halo_err(MPI_ERR_TYPE, "(datatype=%p): not a valid datatype", (void *)t);
    return MPI_SUCCESS;
}

int halo_api_type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    *size = halo_dtype_ptr(datatype)->size;
    return MPI_SUCCESS;
}
int halo_api_type_size_x(MPI_Datatype datatype, MPI_Count *size) { return halo_api_type_size_c(datatype, size); }
int halo_api_type_size(MPI_Datatype datatype, int *size)
{
    *size = halo_count_to_int(halo_dtype_ptr(datatype)->size);
    return MPI_SUCCESS;
}

int halo_api_type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}
int halo_api_type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return halo_api_type_get_extent_c(datatype, lb, extent);
}
int halo_api_type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    *lb = t->true_lb;
    *extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}
int halo_api_type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return halo_api_type_get_true_extent_c(datatype, lb, extent);
}

int halo_api_type_commit(MPI_Datatype *datatype)
{
    halo_dtype_t *t;
    int rc = type_arg(*datatype, &t);
    if (rc)
        return rc;
    if (!(t->flags & HALO_DT_COMMITTED)) {
        halo_dt_compile(t);
        t->flags |= HALO_DT_COMMITTED;
    }
    return MPI_SUCCESS;
}

int halo_api_type_free(MPI_Datatype *datatype)
{
    halo_dtype_t *t;
    int rc = type_arg(*datatype, &t);
    if (rc)
        return rc;
    if (t->flags & HALO_DT_PREDEFINED)
        return halo_err(MPI_ERR_TYPE, "(datatype=%s): predefined datatypes cannot be freed", t->name);
    if (t->flags & HALO_DT_F90)
        return halo_err(MPI_ERR_TYPE, ": types from MPI_Type_create_f90_* are predefined and cannot be freed");
    rc = halo_attr_delete_all(HALO_KIND_DTYPE, t, &t->attrs);
    if (rc)
        return rc;
    /* Operations still using it keep it alive (they hold references). */
    t->hdr.flags |= HALO_OBJ_USER_FREED;
    halo_dtype_release(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int halo_api_type_set_name(MPI_Datatype datatype, const char *name)
{
    if (!name)
        return halo_err(MPI_ERR_ARG, "(type_name=NULL): a name is required");
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    snprintf(t->name, sizeof t->name, "%s", name);
    return MPI_SUCCESS;
}

int halo_api_type_get_name(MPI_Datatype datatype, char *name, int *resultlen)
{
    if (datatype == MPI_DATATYPE_NULL) {
        snprintf(name, MPI_MAX_OBJECT_NAME, "MPI_DATATYPE_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
    halo_dtype_t *t;
    int rc = type_arg(datatype, &t);
    if (rc)
        return rc;
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", t->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int halo_api_type_get_envelope_c(MPI_Datatype datatype, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                                 MPI_Count *nd, int *combiner)
{
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    *ni = t->ni;
    *na = t->na;
    *nc = t->nc;
    *nd = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

int halo_api_type_get_envelope(MPI_Datatype datatype, int *ni, int *na, int *nd, int *combiner)
{
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    if (t->nc)
        return halo_err(MPI_ERR_TYPE, ": this datatype was made by a large-count constructor; use "
                        "MPI_Type_get_envelope_c");
    *ni = t->ni;
    *na = t->na;
    *nd = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

static int contents(halo_dtype_t *t, MPI_Count mi, MPI_Count ma, MPI_Count mc, MPI_Count md, int *ints,
                    MPI_Aint *aints, MPI_Count *counts, MPI_Datatype *types)
{
    if (t->combiner == MPI_COMBINER_NAMED)
        return halo_err(MPI_ERR_TYPE, ": predefined datatypes have no contents");
    if (mi < t->ni || ma < t->na || mc < t->nc || md < t->nd)
        return halo_err(MPI_ERR_ARG, ": arrays too small for the contents (%d integers, %d addresses, "
                        "%d large counts, %d datatypes)", t->ni, t->na, t->nc, t->nd);
    if (t->ni)
        memcpy(ints, t->ints, (size_t)t->ni * sizeof(int));
    if (t->na)
        memcpy(aints, t->aints, (size_t)t->na * sizeof(MPI_Aint));
    if (t->nc && counts)   /* MPI_Type_get_contents has no counts: nc is 0 there */
        memcpy(counts, t->counts, (size_t)t->nc * sizeof(MPI_Count));
    /* Predefined types (and those of MPI_Type_create_f90_*, predefined too)
     * come back as themselves; a derived one as a new handle that the
     * caller frees, equal in layout and contents. A new object, not another
     * reference: freeing it must not invalidate the caller's own handle. */
    for (int i = 0; i < t->nd; i++) {
        halo_dtype_t *c = halo_dtype_ptr(t->types[i]);
        types[i] = (c->flags & (HALO_DT_PREDEFINED | HALO_DT_F90)) ? t->types[i]
                                                                   : (MPI_Datatype)halo_dt_clone(c);
    }
    return MPI_SUCCESS;
}

int halo_api_type_get_contents_c(MPI_Datatype datatype, MPI_Count mi, MPI_Count ma, MPI_Count mc,
                                 MPI_Count md, int ints[], MPI_Aint aints[], MPI_Count counts[],
                                 MPI_Datatype types[])
{
    return contents(halo_dtype_ptr(datatype), mi, ma, mc, md, ints, aints, counts, types);
}

int halo_api_type_get_contents(MPI_Datatype datatype, int mi, int ma, int md, int ints[], MPI_Aint aints[],
                               MPI_Datatype types[])
{
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    if (t->nc)
        return halo_err(MPI_ERR_TYPE, ": this datatype was made by a large-count constructor; use "
                        "MPI_Type_get_contents_c");
    return contents(t, mi, ma, 0, md, ints, aints, NULL, types);
}

/* The standard's advice: the Fortran default kinds first (MPI_REAL,
 * MPI_DOUBLE_PRECISION, MPI_INTEGER, MPI_COMPLEX, MPI_DOUBLE_COMPLEX,
 * MPI_LOGICAL), then the sized types (INTEGER1 .. COMPLEX32). */
int halo_api_type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        t = size == 4 ? MPI_INTEGER : size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2
          : size == 8 ? MPI_INTEGER8 : size == 16 ? MPI_INTEGER16 : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_REAL:
        t = size == 4 ? MPI_REAL : size == 8 ? MPI_DOUBLE_PRECISION : size == 2 ? MPI_REAL2
          : size == 16 ? MPI_REAL16 : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_COMPLEX:
        t = size == 8 ? MPI_COMPLEX : size == 16 ? MPI_DOUBLE_COMPLEX : size == 4 ? MPI_COMPLEX4
          : size == 32 ? MPI_COMPLEX32 : MPI_DATATYPE_NULL;
        break;
    case MPIX_TYPECLASS_LOGICAL:
        t = size == 4 ? MPI_LOGICAL : size == 1 ? MPI_LOGICAL1 : size == 2 ? MPI_LOGICAL2
          : size == 8 ? MPI_LOGICAL8 : size == 16 ? MPI_LOGICAL16 : MPI_DATATYPE_NULL;
        break;
    default:
        return halo_err(MPI_ERR_ARG, "(typeclass=%d): not a type class", typeclass);
    }
    if (t == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_ARG, "(size=%d): no type of this class has that size", size);
    *datatype = t;
    return MPI_SUCCESS;
}

int halo_api_type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type)
{
    static const struct {
        MPI_Datatype v, i, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},   {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},     {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},   {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},       {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    for (size_t k = 0; k < HALO_ARRAY_LEN(pairs); k++) {
        if (pairs[k].v == value_type && pairs[k].i == index_type) {
            *pair_type = pairs[k].pair;
            return MPI_SUCCESS;
        }
    }
    *pair_type = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- pack */

static int pack_common(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Count outsize, MPI_Count *position)
{
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    if (incount < 0)
        return halo_err(MPI_ERR_COUNT, "(incount=%lld): must be non-negative", (long long)incount);
    MPI_Count n = incount * t->size;
    if (*position < 0 || *position + n > outsize)
        return halo_err(MPI_ERR_TRUNCATE, "(outsize=%lld, position=%lld): %lld bytes do not fit",
                        (long long)outsize, (long long)*position, (long long)n);
    halo_dt_pack(inbuf, incount, t, 0, (char *)outbuf + *position, n);
    *position += n;
    return MPI_SUCCESS;
}

static int unpack_common(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                         MPI_Count outcount, MPI_Datatype datatype)
{
    halo_dtype_t *t = halo_dtype_ptr(datatype);
    if (outcount < 0)
        return halo_err(MPI_ERR_COUNT, "(outcount=%lld): must be non-negative", (long long)outcount);
    MPI_Count n = outcount * t->size;
    if (*position < 0 || *position + n > insize)
        return halo_err(MPI_ERR_TRUNCATE, "(insize=%lld, position=%lld): %lld bytes needed",
                        (long long)insize, (long long)*position, (long long)n);
    halo_dt_unpack(outbuf, outcount, t, 0, (const char *)inbuf + *position, n);
    *position += n;
    return MPI_SUCCESS;
}

int halo_api_pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                    MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    (void)comm;
    return pack_common(inbuf, incount, datatype, outbuf, outsize, position);
}

int halo_api_pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
                  int *position, MPI_Comm comm)
{
    (void)comm;
    MPI_Count pos = *position;
    int rc = pack_common(inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}

int halo_api_unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                      MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    (void)comm;
    return unpack_common(inbuf, insize, position, outbuf, outcount, datatype);
}

int halo_api_unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                    MPI_Datatype datatype, MPI_Comm comm)
{
    (void)comm;
    MPI_Count pos = *position;
    int rc = unpack_common(inbuf, insize, &pos, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}

int halo_api_pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    (void)comm;
    *size = incount * halo_dtype_ptr(datatype)->size;
    return MPI_SUCCESS;
}
