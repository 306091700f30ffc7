/* Op objects and halo_op_apply. Predefined ops on derived types apply to
 * each run of the type's block list, which the type's basic type tiles. */
#include "coll/op.h"

#include "binding/api_gen.h"
#include "coll/op_predef.h"
#include "core/errors.h"

static const MPI_Op predef_ops[] = {MPI_SUM, MPI_MIN, MPI_MAX, MPI_PROD, MPI_BAND, MPI_BOR,
                                    MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MINLOC,
                                    MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
static halo_op_t predef_objs[HALO_ARRAY_LEN(predef_ops)];

void halo_op_init(void)
{
    halo_obj_kind_setup(HALO_KIND_OP, sizeof(halo_op_t), 1u << 16);
    for (size_t i = 0; i < HALO_ARRAY_LEN(predef_ops); i++) {
        predef_objs[i].commutative = 1;
        halo_obj_predef(HALO_KIND_OP, (uintptr_t)predef_ops[i], &predef_objs[i].hdr);
    }
}

halo_op_t *halo_op_get(MPI_Op op)
{
    return halo_obj_lookup(HALO_KIND_OP, op);
}

static bool op_is_predef(MPI_Op op)
{
    return (uintptr_t)op < HALO_PREDEF_LIMIT;
}

int halo_op_check(MPI_Op op, halo_dtype_t *dt, const char *opname)
{
    if (op == MPI_OP_NULL)
        return halo_err(MPI_ERR_OP, "(%s=MPI_OP_NULL): a valid operation is required", opname);
    if (!halo_op_get(op))
        return halo_err(MPI_ERR_OP, "(%s=%p): not a valid operation", opname, (void *)op);
    if (!op_is_predef(op))
        return MPI_SUCCESS;
    MPI_Datatype basic = dt->basic;
    if (basic == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_OP, "(%s): predefined operations need a datatype made of one "
                        "predefined type, and %s mixes several", opname, dt->name[0] ? dt->name : "the datatype");
    if (halo_op_predef_valid(op, basic) != MPI_SUCCESS)
        return halo_err(MPI_ERR_OP, "(%s): the operation is not defined for %s", opname,
                        halo_dtype_ptr(basic)->name);
    return MPI_SUCCESS;
}

int halo_op_kernel(MPI_Op op, const halo_dtype_t *dt, MPI_Count count, size_t *n_p)
{
    if (!op_is_predef(op) || count < 0)
        return 0;
    if (dt->flags & HALO_DT_PREDEFINED) {
        *n_p = (size_t)count;
        return halo_op_predef_kernel(op, halo_dtype_handle((halo_dtype_t *)dt));
    }
    if (!halo_dt_contig(dt) || dt->basic == MPI_DATATYPE_NULL)
        return 0;
    *n_p = (size_t)(count * dt->basic_count);
    return halo_op_predef_kernel(op, dt->basic);
}

int halo_op_apply(MPI_Op op, halo_dtype_t *dt, const void *in, void *inout, MPI_Count count)
{
    if (count == 0)
        return MPI_SUCCESS;
    if (op_is_predef(op)) {
        if (dt->flags & HALO_DT_PREDEFINED)
            return halo_op_predef_apply(op, halo_dtype_handle(dt), in, inout, count);
        halo_dtype_t *b = halo_dtype_ptr(dt->basic);
        if (halo_dt_contig(dt))
            return halo_op_predef_apply(op, dt->basic, in, inout, count * dt->basic_count);
        if (dt->nblocks > 0) {
            for (MPI_Count e = 0; e < count; e++) {
                for (MPI_Count k = 0; k < dt->nblocks; k++) {
                    const halo_dt_block_t *blk = &dt->blocks[k];
                    MPI_Count off = e * dt->extent + blk->off;
                    int rc = halo_op_predef_apply(op, dt->basic, (const char *)in + off,
                                                  (char *)inout + off, blk->len / b->size);
                    if (rc)
                        return rc;
                }
            }
            return MPI_SUCCESS;
        }
        /* More runs than a flat list holds (datatype/dtype.h): walk the
         * runs as iovecs of `in`; inout has the same layout. */
        MPI_Count pos = 0, total = count * dt->size;
        while (pos < total) {
            struct iovec iov[64];
            int n = halo_dt_iov(in, count, dt, &pos, total, iov, 64);
            for (int k = 0; k < n; k++) {
                MPI_Aint off = (const char *)iov[k].iov_base - (const char *)in;
                int rc = halo_op_predef_apply(op, dt->basic, (const char *)in + off, (char *)inout + off,
                                              (MPI_Count)iov[k].iov_len / b->size);
                if (rc)
                    return rc;
            }
        }
        return MPI_SUCCESS;
    }
    halo_op_t *o = halo_op_ptr(op);
    MPI_Datatype h = halo_dtype_handle(dt);
    if (o->is_c) {
        MPI_Count n = count;
        o->fn_c((void *)in, inout, &n, &h);
        return MPI_SUCCESS;
    }
    if (o->is_fortran) {
        /* INTEGER arguments: the length and the datatype's integer handle. */
        typedef void fortran_fn_t(void *, void *, MPI_Fint *, MPI_Fint *);
        MPI_Fint fdt = halo_api_type_c2f(h);
        const MPI_Count chunk = INT32_MAX;
        for (MPI_Count done = 0; done < count; done += chunk) {
            MPI_Fint n = (MPI_Fint)(count - done < chunk ? count - done : chunk);
            MPI_Aint off = (MPI_Aint)(done * dt->extent);
            ((fortran_fn_t *)(void (*)(void))o->fn)((char *)in + off, (char *)inout + off, &n, &fdt);
        }
        return MPI_SUCCESS;
    }
    /* An int count per call: split very large reductions. */
    const MPI_Count chunk = INT32_MAX;
    for (MPI_Count done = 0; done < count; done += chunk) {
        int n = (int)(count - done < chunk ? count - done : chunk);
        MPI_Aint off = (MPI_Aint)(done * dt->extent);
        o->fn((char *)in + off, (char *)inout + off, &n, &h);
    }
    return MPI_SUCCESS;
}

static int op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    if (!fn && !fn_c)
        return halo_err(MPI_ERR_ARG, "(user_fn=NULL): a function is required");
    halo_op_t *o = halo_obj_alloc(HALO_KIND_OP);
    if (!o)
        return halo_err(MPI_ERR_NO_MEM, ": out of operation objects");
    o->fn = fn;
    o->fn_c = fn_c;
    o->is_c = fn_c != NULL;
    o->commutative = commute != 0;
    *op = (MPI_Op)o;
    return MPI_SUCCESS;
}

int halo_api_op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create(user_fn, NULL, commute, op);
}

int halo_api_op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create(NULL, user_fn, commute, op);
}

int halo_api_op_free(MPI_Op *op)
{
    halo_op_t *o = halo_op_get(*op);
    if (!o)
        return halo_err(MPI_ERR_OP, "(op=%p): not a valid operation", (void *)*op);
    if (o->hdr.flags & HALO_OBJ_PREDEFINED)
        return halo_err(MPI_ERR_OP, ": predefined operations cannot be freed");
    if (halo_obj_unref(o))
        halo_obj_free(o);
    else
        o->hdr.flags |= HALO_OBJ_USER_FREED;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int halo_api_op_commutative(MPI_Op op, int *commute)
{
    halo_op_t *o = halo_op_get(op);
    if (!o)
        return halo_err(MPI_ERR_OP, "(op=%p): not a valid operation", (void *)op);
    *commute = o->commutative;
    return MPI_SUCCESS;
}

int halo_api_reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Op op)
{
    halo_dtype_t *dt = halo_dtype_ptr(datatype);
    int rc = halo_op_check(op, dt, "op");
    if (rc)
        return rc;
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(%s=MPI_IN_PLACE): MPI_Reduce_local takes no MPI_IN_PLACE",
                        inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
    if (count > 0 && inbuf == inoutbuf)
        return halo_err(MPI_ERR_BUFFER, "(inbuf=inoutbuf=%p): the two buffers must not be the same",
                        inoutbuf);
    return halo_op_apply(op, dt, inbuf, inoutbuf, count);
}
