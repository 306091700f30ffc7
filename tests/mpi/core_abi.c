/* The standard ABI's own functions.
 *
 * - MPI_Abi_get_version is 1.0; MPI_Abi_get_info's sizes match this build;
 * - MPI_Abi_get_fortran_info and the Fortran booleans (set, then read back);
 * - MPI_<Handle>_toint / _fromint: a predefined handle's integer is the
 *   handle's constant; fromint(toint(h)) == h for predefined and created
 *   objects of every kind; c2f / f2c agree with toint / fromint;
 * - MPI_Alloc_mem / MPI_Free_mem: usable, aligned memory, also as a message
 *   buffer. */
#include <stdalign.h>

#include "mpitest.h"

static int rank, size;

static long info_long(MPI_Info info, const char *key)
{
    char val[64];
    int buflen = sizeof val, flag = 0;
    MPI_OK(MPI_Info_get_string(info, key, &buflen, val, &flag));
    CHECK(flag, "info has no key %s", key);
    char *end;
    long v = strtol(val, &end, 10);
    CHECK(*end == '\0' && end != val, "info %s = \"%s\" is not an integer", key, val);
    return v;
}

static void test_versions(void)
{
    int major = -1, minor = -1;
    MPI_OK(MPI_Abi_get_version(&major, &minor));
    CHECK(major == 1 && minor == 0, "MPI_Abi_get_version %d.%d, want 1.0", major, minor);
    CHECK(major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION, "mpi.h says %d.%d",
          MPI_ABI_VERSION, MPI_ABI_SUBVERSION);

    MPI_Info info = MPI_INFO_NULL;
    MPI_OK(MPI_Abi_get_info(&info));
    CHECK(info != MPI_INFO_NULL, "MPI_Abi_get_info gave MPI_INFO_NULL");
    CHECK_INT(info_long(info, "mpi_aint_size"), sizeof(MPI_Aint));
    CHECK_INT(info_long(info, "mpi_count_size"), sizeof(MPI_Count));
    CHECK_INT(info_long(info, "mpi_offset_size"), sizeof(MPI_Offset));
    MPI_OK(MPI_Info_free(&info));

    MPI_OK(MPI_Abi_get_fortran_info(&info));
    if (info != MPI_INFO_NULL) {
        int sz;
        MPI_OK(MPI_Type_size(MPI_INTEGER, &sz));
        CHECK_INT(info_long(info, "mpi_integer_size"), sz);
        MPI_OK(MPI_Type_size(MPI_LOGICAL, &sz));
        CHECK_INT(info_long(info, "mpi_logical_size"), sz);
        MPI_OK(MPI_Type_size(MPI_REAL, &sz));
        CHECK_INT(info_long(info, "mpi_real_size"), sz);
        MPI_OK(MPI_Type_size(MPI_DOUBLE_PRECISION, &sz));
        CHECK_INT(info_long(info, "mpi_double_precision_size"), sz);
        MPI_OK(MPI_Info_free(&info));
    }

    /* Fortran booleans: what is set is what is read back. */
    int32_t t = -1, f = 0, t2 = 0, f2 = 0;
    int is_set = 0;
    MPI_OK(MPI_Abi_set_fortran_booleans(4, &t, &f));
    MPI_OK(MPI_Abi_get_fortran_booleans(4, &t2, &f2, &is_set));
    CHECK(is_set && t2 == -1 && f2 == 0, "booleans read back: set %d true %d false %d", is_set,
          (int)t2, (int)f2);
    int8_t t8 = 7, f8 = 3, t82 = 0, f82 = 0;
    MPI_OK(MPI_Abi_set_fortran_booleans(1, &t8, &f8));
    MPI_OK(MPI_Abi_get_fortran_booleans(1, &t82, &f82, &is_set));
    CHECK(is_set && t82 == 7 && f82 == 3, "1-byte booleans: set %d true %d false %d", is_set,
          (int)t82, (int)f82);
    /* The 4-byte ones are unchanged. */
    MPI_OK(MPI_Abi_get_fortran_booleans(4, &t2, &f2, &is_set));
    CHECK(is_set && t2 == -1 && f2 == 0, "4-byte booleans changed: %d %d", (int)t2, (int)f2);
}

/* ---------------------------------------------------------------- handles */

#define ROUND_TRIP(Kind, h)                                                                   \
    do {                                                                                      \
        int i_ = MPI_##Kind##_toint(h);                                                       \
        CHECK(MPI_##Kind##_fromint(i_) == (h), "MPI_" #Kind "_fromint(toint(%s)) != %s",     \
              #h, #h);                                                                       \
        CHECK(MPI_##Kind##_c2f(h) == i_, "MPI_" #Kind "_c2f(%s) != toint", #h);              \
        CHECK(MPI_##Kind##_f2c(i_) == (h), "MPI_" #Kind "_f2c(toint(%s)) != %s", #h, #h);    \
    } while (0)

/* A predefined handle: its integer is the constant itself. */
#define PREDEF(Kind, h)                                                                       \
    do {                                                                                      \
        CHECK(MPI_##Kind##_toint(h) == (int)(intptr_t)(h), "MPI_" #Kind "_toint(%s) = %d, "  \
              "want %d", #h, MPI_##Kind##_toint(h), (int)(intptr_t)(h));                     \
        ROUND_TRIP(Kind, h);                                                                  \
    } while (0)

static void user_op(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)t;
}

static void user_eh(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
}

static void test_handles(void)
{
    PREDEF(Comm, MPI_COMM_WORLD);
    PREDEF(Comm, MPI_COMM_SELF);
    PREDEF(Comm, MPI_COMM_NULL);
    PREDEF(Group, MPI_GROUP_EMPTY);
    PREDEF(Group, MPI_GROUP_NULL);
    PREDEF(Type, MPI_INT);
    PREDEF(Type, MPI_DOUBLE);
    PREDEF(Type, MPI_2INT);
    PREDEF(Type, MPI_BYTE);
    PREDEF(Type, MPI_DATATYPE_NULL);
    PREDEF(Op, MPI_SUM);
    PREDEF(Op, MPI_MAXLOC);
    PREDEF(Op, MPI_OP_NULL);
    PREDEF(Info, MPI_INFO_ENV);
    PREDEF(Info, MPI_INFO_NULL);
    PREDEF(Errhandler, MPI_ERRORS_ARE_FATAL);
    PREDEF(Errhandler, MPI_ERRORS_RETURN);
    PREDEF(Errhandler, MPI_ERRORS_ABORT);
    PREDEF(Errhandler, MPI_ERRHANDLER_NULL);
    PREDEF(Request, MPI_REQUEST_NULL);
    PREDEF(Message, MPI_MESSAGE_NULL);
    PREDEF(Message, MPI_MESSAGE_NO_PROC);
    PREDEF(Win, MPI_WIN_NULL);
    PREDEF(File, MPI_FILE_NULL);
    PREDEF(Session, MPI_SESSION_NULL);

    /* Created objects of each kind. */
    MPI_Comm comm, comm2;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm2));
    ROUND_TRIP(Comm, comm);
    ROUND_TRIP(Comm, comm2);
    CHECK(MPI_Comm_toint(comm) != MPI_Comm_toint(comm2), "two communicators share an integer");
    CHECK(MPI_Comm_toint(comm) != MPI_Comm_toint(MPI_COMM_WORLD), "a dup has world's integer");
    /* The converted handle works. */
    MPI_Comm back = MPI_Comm_fromint(MPI_Comm_toint(comm));
    int sum = 0, one = 1;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, back));
    CHECK_INT(sum, size);

    MPI_Group group, wg;
    int r0 = 0;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_incl(wg, 1, &r0, &group));
    ROUND_TRIP(Group, group);

    MPI_Datatype type;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &type));
    MPI_OK(MPI_Type_commit(&type));
    ROUND_TRIP(Type, type);

    MPI_Op op;
    MPI_OK(MPI_Op_create(user_op, 0, &op));
    ROUND_TRIP(Op, op);

    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    ROUND_TRIP(Info, info);

    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(user_eh, &eh));
    ROUND_TRIP(Errhandler, eh);

    MPI_Request req;
    int buf = 0;
    MPI_OK(MPI_Recv_init(&buf, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &req));
    ROUND_TRIP(Request, req);
    MPI_Request req2 = MPI_Request_fromint(MPI_Request_toint(req));
    int v = 42;
    MPI_OK(MPI_Start(&req2));
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_SELF));
    MPI_OK(MPI_Wait(&req2, MPI_STATUS_IGNORE));
    CHECK_INT(buf, 42);
    MPI_OK(MPI_Request_free(&req));

    /* Every kind gives distinct integers to distinct objects. */
    int ints[] = {MPI_Comm_toint(comm), MPI_Group_toint(group), MPI_Type_toint(type),
                  MPI_Op_toint(op), MPI_Info_toint(info), MPI_Errhandler_toint(eh)};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        CHECK(ints[i] != 0 && ints[i] != -1, "object %zu has integer %d", i, ints[i]);

    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&type));
    MPI_OK(MPI_Group_free(&group));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Comm_free(&comm2));
    MPI_OK(MPI_Comm_free(&comm));
}

static void test_alloc_mem(void)
{
    static const MPI_Aint sizes[] = {1, 8, 1000, 1 << 20, 3 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        MPI_Aint n = sizes[i];
        unsigned char *p = NULL;
        MPI_OK(MPI_Alloc_mem(n, MPI_INFO_NULL, &p));
        CHECK(p != NULL, "MPI_Alloc_mem(%ld) gave NULL", (long)n);
        CHECK((uintptr_t)p % alignof(max_align_t) == 0, "MPI_Alloc_mem(%ld) gave %p, not "
              "aligned to %zu", (long)n, (void *)p, alignof(max_align_t));
        for (MPI_Aint k = 0; k < n; k++)
            p[k] = (unsigned char)(k * 7 + i);
        for (MPI_Aint k = 0; k < n; k++)
            CHECK(p[k] == (unsigned char)(k * 7 + i), "byte %ld changed", (long)k);
        MPI_OK(MPI_Free_mem(p));
    }
    /* As a message buffer (one of them allocated with a hint): a ring of
     * 64 KiB messages. */
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"));
    int n = 16384;
    int *s, *r;
    MPI_OK(MPI_Alloc_mem((MPI_Aint)(n * sizeof(int)), info, &s));
    MPI_OK(MPI_Alloc_mem((MPI_Aint)(n * sizeof(int)), MPI_INFO_NULL, &r));
    MPI_OK(MPI_Info_free(&info));
    CHECK((uintptr_t)s % alignof(max_align_t) == 0, "MPI_Alloc_mem with info gave %p", (void *)s);
    for (int k = 0; k < n; k++)
        s[k] = rank * 100000 + k;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_OK(MPI_Sendrecv(s, n, MPI_INT, right, 1, r, n, MPI_INT, left, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (int k = 0; k < n; k++)
        CHECK(r[k] == left * 100000 + k, "element %d: %d", k, r[k]);
    MPI_OK(MPI_Free_mem(s));
    MPI_OK(MPI_Free_mem(r));
}

/* Is `part` in the comma-separated list `only` (NULL: every part)? */
static int run_part(const char *only, const char *part)
{
    if (!only)
        return 1;
    size_t n = strlen(part);
    for (const char *p = only;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, part, n))
            return 1;
        if (!e)
            return 0;
        p = e + 1;
    }
}

/* Every name in `only` is one of parts[0..n-1]. */
static int parts_known(const char *only, const char *const *parts, int n)
{
    if (!only)
        return 1;
    int found = 0;
    for (int i = 0; i < n; i++)
        found += run_part(only, parts[i]);
    int commas = 0;
    for (const char *p = only; *p; p++)
        commas += *p == ',';
    return found == commas + 1;
}

/* Runs every part, or those named (comma-separated) by the first argument,
 * so that one failing part does not hide the others. */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    static const char *const parts[] = {"versions", "handles", "mem"};
    if (!parts_known(only, parts, (int)(sizeof parts / sizeof parts[0]))) {
        fprintf(stderr, "usage: core_abi [part,...] with parts versions handles mem\n");
        return 2;
    }
#define RUN(part) run_part(only, part)
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* The default MPI_ERRORS_ARE_FATAL stays: a conversion that raised an
     * error would end the job even where it returns the right integer. */
    if (RUN("versions"))
        test_versions();
    if (RUN("handles"))
        test_handles();
    if (RUN("mem"))
        test_alloc_mem();
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_abi %s: ok\n", only ? only : "all");
    return 0;
}
