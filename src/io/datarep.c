/* Data representations of file views (MPI 5.0 14.5): "native" and
 * "internal" (the same bytes as memory), "external32" (big-endian, the
 * standard's sizes, through the datatype engine's external32 packing), and
 * those the program registers with MPI_Register_datarep(_c).
 *
 * In a representation other than native, the view's etype and filetype
 * describe the file in that representation's sizes: each predefined type
 * takes its file extent, displacements counted in elements (contiguous,
 * vector, indexed, subarray, darray) scale with it, and displacements
 * given in bytes (hvector, hindexed, struct, resized) stay as given. The
 * file layout type is the view's type rebuilt that way
 * (halo_datarep_layout). Data moves through a buffer in the file
 * representation, converted from or to the program's buffer in one call
 * per access. */
#include "io/datarep.h"

#include "binding/api_gen.h"
#include "core/errors.h"

struct halo_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    bool external32;
    bool large;                           /* registered by MPI_Register_datarep_c */
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra;
};

static halo_datarep_t external32 = {.name = "external32", .external32 = true};

/* Registered ones; never removed (the standard has no call for it). */
static halo_datarep_t **reps;
static int nreps, capreps;

int halo_datarep_find(const char *name, const halo_datarep_t **rep_p)
{
    *rep_p = NULL;
    if (!strcmp(name, "native") || !strcmp(name, "internal"))
        return MPI_SUCCESS;
    if (!strcmp(name, "external32")) {
        *rep_p = &external32;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < nreps; i++) {
        if (!strcmp(reps[i]->name, name)) {
            *rep_p = reps[i];
            return MPI_SUCCESS;
        }
    }
    return MPI_ERR_UNSUPPORTED_DATAREP;
}

static int do_register(const char *datarep, MPI_Datarep_conversion_function *rd,
                       MPI_Datarep_conversion_function *wr, MPI_Datarep_conversion_function_c *rd_c,
                       MPI_Datarep_conversion_function_c *wr_c, MPI_Datarep_extent_function *extent_fn,
                       void *extra, bool large)
{
    if (!datarep || !*datarep)
        return halo_err(MPI_ERR_ARG, "(datarep): a non-empty name is required");
    if (strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return halo_err(MPI_ERR_ARG, "(datarep): the name is longer than MPI_MAX_DATAREP_STRING - 1 (%d) characters",
                        MPI_MAX_DATAREP_STRING - 1);
    if (!extent_fn)
        return halo_err(MPI_ERR_ARG, "(dtype_file_extent_fn=NULL): an extent function is required");
    const halo_datarep_t *old;
    if (halo_datarep_find(datarep, &old) == MPI_SUCCESS)
        return halo_err(MPI_ERR_DUP_DATAREP, "(datarep=\"%s\"): a data representation of that name exists",
                        datarep);
    halo_datarep_t *r = halo_calloc(1, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", datarep);
    r->large = large;
    r->read_fn = rd;
    r->write_fn = wr;
    r->read_fn_c = rd_c;
    r->write_fn_c = wr_c;
    r->extent_fn = extent_fn;
    r->extra = extra;
    if (nreps == capreps) {
        capreps = capreps ? 2 * capreps : 4;
        reps = halo_realloc(reps, (size_t)capreps * sizeof *reps);
    }
    reps[nreps++] = r;
    return MPI_SUCCESS;
}

int halo_api_register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                              MPI_Datarep_conversion_function *write_conversion_fn,
                              MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return do_register(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL, dtype_file_extent_fn,
                       extra_state, false);
}

int halo_api_register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                                MPI_Datarep_conversion_function_c *write_conversion_fn,
                                MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return do_register(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn, dtype_file_extent_fn,
                       extra_state, true);
}

void halo_datarep_finalize(void)
{
    for (int i = 0; i < nreps; i++)
        free(reps[i]);
    free(reps);
    reps = NULL;
    nreps = capreps = 0;
}

const char *halo_datarep_name(const halo_datarep_t *rep)
{
    return rep ? rep->name : "native";
}

static bool is_leaf(const halo_dtype_t *t)
{
    return t->combiner == MPI_COMBINER_NAMED || t->combiner == MPI_COMBINER_F90_REAL ||
           t->combiner == MPI_COMBINER_F90_COMPLEX || t->combiner == MPI_COMBINER_F90_INTEGER;
}

/* The file extent of a predefined type; -1 (error recorded) when the
 * representation has none. */
static MPI_Count leaf_extent(const halo_datarep_t *rep, const halo_dtype_t *t)
{
    if (rep->external32) {
        MPI_Count n = t->ext32_size;
        if (n <= 0 && t->size > 0) {
            halo_err(MPI_ERR_TYPE, ": datatype %s has no \"external32\" representation", t->name);
            return -1;
        }
        return n;
    }
    MPI_Aint ext = 0;
    int rc = rep->extent_fn(halo_dtype_handle((halo_dtype_t *)t), &ext, rep->extra);
    if (rc != MPI_SUCCESS || ext < 0) {
        halo_err(rc != MPI_SUCCESS ? rc : MPI_ERR_CONVERSION,
                 ": the extent function of data representation \"%s\" failed for %s", rep->name, t->name);
        return -1;
    }
    return ext;
}

MPI_Count halo_datarep_size(const halo_datarep_t *rep, const halo_dtype_t *t)
{
    if (!rep)
        return t->size;
    if (rep->external32)
        return t->ext32_size;
    if (is_leaf(t))
        return t->size > 0 ? leaf_extent(rep, t) : 0;
    MPI_Count n = 0;
    for (int i = 0; i < t->nsig; i++) {
        MPI_Count k = halo_datarep_size(rep, t->sig[i].type);
        if (k < 0)
            return -1;
        n += t->sig[i].reps * k;
    }
    return n;
}

/* ---------------------------------------------------------------- layout types */

static int relayout(const halo_datarep_t *rep, halo_dtype_t *t, MPI_Datatype *out);

/* The k-th integer argument of a constructor, stored as int or, for the
 * large-count constructors, as MPI_Count. */
static MPI_Count arg_int(const halo_dtype_t *t, int k)
{
    return t->nc > 0 ? t->counts[k] : t->ints[k];
}

static MPI_Count *count_array(const halo_dtype_t *t, int first, int n)
{
    MPI_Count *a = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = arg_int(t, first + i);
    return a;
}

/* Byte displacements: aints (from `afirst`) for the classic constructors,
 * counts (from `cfirst`) for the large-count ones. */
static MPI_Count *disp_array(const halo_dtype_t *t, int afirst, int cfirst, int n)
{
    MPI_Count *a = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *a);
    for (int i = 0; i < n; i++)
        a[i] = t->nc > 0 ? t->counts[cfirst + i] : (MPI_Count)t->aints[afirst + i];
    return a;
}

static int relayout_derived(const halo_datarep_t *rep, halo_dtype_t *t, MPI_Datatype *out)
{
    bool big = t->nc > 0;
    MPI_Datatype o = MPI_DATATYPE_NULL;
    int rc = MPI_SUCCESS;
    if (t->combiner != MPI_COMBINER_STRUCT) {
        rc = relayout(rep, halo_dtype_ptr(t->types[0]), &o);
        if (rc)
            return rc;
    }
    switch (t->combiner) {
    case MPI_COMBINER_DUP:
        *out = o;
        return MPI_SUCCESS;
    case MPI_COMBINER_CONTIGUOUS:
        rc = halo_api_type_contiguous_c(arg_int(t, 0), o, out);
        break;
    case MPI_COMBINER_VECTOR:
        rc = halo_api_type_vector_c(arg_int(t, 0), arg_int(t, 1), arg_int(t, 2), o, out);
        break;
    case MPI_COMBINER_HVECTOR:
        rc = halo_api_type_create_hvector_c(arg_int(t, 0), arg_int(t, 1), big ? t->counts[2] : t->aints[0], o,
                                            out);
        break;
    case MPI_COMBINER_INDEXED: {
        MPI_Count n = arg_int(t, 0);
        MPI_Count *bl = count_array(t, 1, (int)n), *d = count_array(t, 1 + (int)n, (int)n);
        rc = halo_api_type_indexed_c(n, bl, d, o, out);
        free(bl);
        free(d);
        break;
    }
    case MPI_COMBINER_HINDEXED: {
        MPI_Count n = arg_int(t, 0);
        MPI_Count *bl = count_array(t, 1, (int)n), *d = disp_array(t, 0, 1 + (int)n, (int)n);
        rc = halo_api_type_create_hindexed_c(n, bl, d, o, out);
        free(bl);
        free(d);
        break;
    }
    case MPI_COMBINER_INDEXED_BLOCK: {
        MPI_Count n = arg_int(t, 0);
        MPI_Count *d = count_array(t, 2, (int)n);
        rc = halo_api_type_create_indexed_block_c(n, arg_int(t, 1), d, o, out);
        free(d);
        break;
    }
    case MPI_COMBINER_HINDEXED_BLOCK: {
        MPI_Count n = arg_int(t, 0);
        MPI_Count *d = disp_array(t, 0, 2, (int)n);
        rc = halo_api_type_create_hindexed_block_c(n, arg_int(t, 1), d, o, out);
        free(d);
        break;
    }
    case MPI_COMBINER_STRUCT: {
        int n = (int)arg_int(t, 0);
        MPI_Count *bl = count_array(t, 1, n), *d = disp_array(t, 0, 1 + n, n);
        MPI_Datatype *ts = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *ts);
        for (int i = 0; i < n; i++)
            ts[i] = MPI_DATATYPE_NULL;
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            rc = relayout(rep, halo_dtype_ptr(t->types[i]), &ts[i]);
        if (rc == MPI_SUCCESS)
            rc = halo_api_type_create_struct_c(n, bl, d, ts, out);
        for (int i = 0; i < n; i++)
            if (ts[i] != MPI_DATATYPE_NULL)
                halo_api_type_free(&ts[i]);
        free(ts);
        free(bl);
        free(d);
        break;
    }
    case MPI_COMBINER_SUBARRAY: {
        int nd = t->ints[0];
        MPI_Count *sz, *sub, *st;
        int order;
        if (big) {
            order = t->ints[1];
            sz = count_array(t, 0, nd);
            sub = count_array(t, nd, nd);
            st = count_array(t, 2 * nd, nd);
        } else {
            order = t->ints[1 + 3 * nd];
            sz = count_array(t, 1, nd);
            sub = count_array(t, 1 + nd, nd);
            st = count_array(t, 1 + 2 * nd, nd);
        }
        rc = halo_api_type_create_subarray_c(nd, sz, sub, st, order, o, out);
        free(sz);
        free(sub);
        free(st);
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int size = t->ints[0], rank = t->ints[1], nd = t->ints[2];
        int base = big ? 3 : 3 + nd;   /* where distribs start in ints */
        MPI_Count *gs = big ? count_array(t, 0, nd) : halo_malloc((size_t)(nd > 0 ? nd : 1) * sizeof *gs);
        if (!big)
            for (int i = 0; i < nd; i++)
                gs[i] = t->ints[3 + i];
        rc = halo_api_type_create_darray_c(size, rank, nd, gs, t->ints + base, t->ints + base + nd,
                                           t->ints + base + 2 * nd, t->ints[base + 3 * nd], o, out);
        free(gs);
        break;
    }
    case MPI_COMBINER_RESIZED:
        rc = halo_api_type_create_resized_c(o, big ? t->counts[0] : t->aints[0],
                                            big ? t->counts[1] : t->aints[1], out);
        break;
    default:
        rc = halo_err(MPI_ERR_TYPE, ": datatypes made by combiner %d cannot be laid out in data "
                      "representation \"%s\"", t->combiner, rep->name);
        break;
    }
    if (o != MPI_DATATYPE_NULL)
        halo_api_type_free(&o);
    return rc;
}

/* A new datatype (the caller frees it) of t's shape in rep's sizes. */
static int relayout(const halo_datarep_t *rep, halo_dtype_t *t, MPI_Datatype *out)
{
    *out = MPI_DATATYPE_NULL;
    if (!is_leaf(t))
        return relayout_derived(rep, t, out);
    MPI_Count ext = t->size > 0 ? leaf_extent(rep, t) : 0;
    if (ext < 0)
        return halo_err(MPI_ERR_TYPE, ": no file extent for %s in \"%s\"", t->name, rep->name);
    return halo_api_type_contiguous_c(ext, MPI_BYTE, out);
}

int halo_datarep_layout(const halo_datarep_t *rep, halo_dtype_t *t, halo_dtype_t **out)
{
    if (!rep) {
        halo_obj_ref(t);
        *out = t;
        return MPI_SUCCESS;
    }
    MPI_Datatype nt;
    int rc = relayout(rep, t, &nt);
    if (rc == MPI_SUCCESS)
        rc = halo_api_type_commit(&nt);
    if (rc != MPI_SUCCESS)
        return rc;
    halo_dtype_t *d = halo_dtype_ptr(nt);
    halo_obj_ref(d);
    halo_api_type_free(&nt);
    *out = d;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- conversion */

/* One conversion between the program's (buf, count, dt) and fbytes of
 * file representation, either way. */
static int convert(const halo_datarep_t *rep, bool to_file, void *buf, MPI_Count count, halo_dtype_t *dt,
                   void *fbuf, MPI_Count fbytes)
{
    MPI_Datatype h = halo_dtype_handle(dt);
    if (rep->external32) {
        MPI_Count pos = 0;
        return to_file ? halo_api_pack_external_c("external32", buf, count, h, fbuf, fbytes, &pos)
                       : halo_api_unpack_external_c("external32", fbuf, fbytes, &pos, buf, count, h);
    }
    MPI_Datarep_conversion_function *f = to_file ? rep->write_fn : rep->read_fn;
    MPI_Datarep_conversion_function_c *fc = to_file ? rep->write_fn_c : rep->read_fn_c;
    if (!f && !fc) {
        /* No conversion: the file holds the bytes of memory. */
        if (fbytes != count * dt->size)
            return halo_err(MPI_ERR_CONVERSION, ": data representation \"%s\" converts nothing, but its file "
                            "extents differ from the memory sizes", rep->name);
        if (to_file)
            halo_dt_pack(buf, count, dt, 0, fbuf, fbytes);
        else
            halo_dt_unpack(buf, count, dt, 0, fbuf, fbytes);
        return MPI_SUCCESS;
    }
    if (!rep->large && count > INT32_MAX)
        return halo_err(MPI_ERR_COUNT, ": %lld items are too many for the conversion function of \"%s\"",
                        (long long)count, rep->name);
    int rc = rep->large ? fc(buf, h, count, fbuf, 0, rep->extra) : f(buf, h, (int)count, fbuf, 0, rep->extra);
    if (rc != MPI_SUCCESS)
        return halo_err(rc, ": the %s conversion function of data representation \"%s\" failed",
                        to_file ? "write" : "read", rep->name);
    return MPI_SUCCESS;
}

int halo_datarep_to_file(const halo_datarep_t *rep, const void *buf, MPI_Count count, halo_dtype_t *dt,
                         void *fbuf, MPI_Count fbytes)
{
    return convert(rep, true, (void *)buf, count, dt, fbuf, fbytes);
}

int halo_datarep_from_file(const halo_datarep_t *rep, const void *fbuf, MPI_Count fbytes, void *buf,
                           MPI_Count count, halo_dtype_t *dt)
{
    return convert(rep, false, buf, count, dt, (void *)fbuf, fbytes);
}
