#!/usr/bin/env python3
"""Generate Halo's public header and the thin MPI entry layer.

Inputs:
  - the procedure database of the PyPI package `pympistandard` (every MPI 5.0
    C function and callback, with the kind and direction of each parameter);
  - tools/abi/constants.tsv, the values of the standard ABI's constants.

Outputs (committed, so that a build needs only CMake and a C compiler):
  - include/mpi.h               types, constants, MPI_ and PMPI_ prototypes
  - src/binding/api_gen.h       prototypes of the halo_api_* internals
  - src/binding/binding_gen.c   PMPI_X entry points (argument checks, error
                                handler dispatch), weak MPI_X aliases, weak
                                "unsupported" defaults for every halo_api_*,
                                and the table that halo_info reads.

`gen_binding.py --check` regenerates into memory and fails on any difference.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import pympistandard as std
except ImportError:  # pragma: no cover
    sys.exit("gen_binding.py needs the PyPI package pympistandard (pip install pympistandard)")

std.use_api_version(1)

# Functions that may be called before MPI_Init or after MPI_Finalize
# (MPI 5.0 section 11.4.1 and the tools interface), or that are pure
# conversions with no error path.
ANYTIME = {
    "MPI_Init", "MPI_Init_thread", "MPI_Initialized", "MPI_Finalized",
    "MPI_Get_version", "MPI_Get_library_version", "MPI_Error_class",
    "MPI_Error_string", "MPI_Wtime", "MPI_Wtick", "MPI_Abi_get_version",
    "MPI_Abi_get_info", "MPI_Abi_get_fortran_info", "MPI_Abi_set_fortran_info",
    "MPI_Abi_get_fortran_booleans", "MPI_Abi_set_fortran_booleans",
    "MPI_Get_hw_resource_info", "MPI_Aint_add", "MPI_Aint_diff",
    "MPI_Get_address", "MPI_Pcontrol", "MPI_Errhandler_free",
}
ANYTIME_PREFIX = ("MPI_Info_", "MPI_T_", "MPI_Session_")

# Functions whose internals take care of locking themselves (they block for
# a long time, are called from inside callbacks, or may switch the lock on),
# or which need no lock.
NOLOCK = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Initialized",
          "MPI_Finalized", "MPI_Wtime", "MPI_Wtick", "MPI_Abort",
          "MPI_Get_version", "MPI_Get_library_version", "MPI_Query_thread",
          "MPI_Is_thread_main", "MPI_Pcontrol", "MPI_Session_init", "MPI_Session_finalize"}

# Kinds of scalar input counts that must be non-negative, with their class.
NNI_COUNT_KINDS = {
    "POLYXFER_NUM_ELEM_NNI": "MPI_ERR_COUNT",
    "XFER_NUM_ELEM_NNI": "MPI_ERR_COUNT",
    "POLYDTYPE_NUM_ELEM_NNI": "MPI_ERR_COUNT",
    "ARRAY_LENGTH_NNI": "MPI_ERR_ARG",
}

# Output kinds that never accept NULL (a NULL would be dereferenced).
NONNULL_OUT_SKIP = {
    "STATUS", "BUFFER", "C_BUFFER", "C_BUFFER2", "C_BUFFER3", "C_BUFFER4",
    "EXTRA_STATE", "EXTRA_STATE2", "ATTRIBUTE_VAL", "ATTRIBUTE_VAL_10",
    "STRING", "STRING_ARRAY", "STRING_2DARRAY", "ERROR_CODE", "F90_STATUS",
    "F08_STATUS", "TOOL_MPI_OBJ", "VARARGS", "FUNCTION", "POLYFUNCTION",
    "ARGUMENT_LIST", "ARGUMENT_COUNT", "TOOL_VAR_VALUE", "LOGICAL_VOID",
}

# Arguments that may be a null handle although the generic rule says
# "valid object": the name queries answer "MPI_COMM_NULL" and the like.
# peer_comm of MPI_Intercomm_create is significant at the local leader only (its
# check is there).
NULL_HANDLE_OK = {("MPI_Comm_get_name", "comm"), ("MPI_Type_get_name", "datatype"),
                  ("MPI_Intercomm_create", "peer_comm")}

# With MPI_NO_OP these ignore their origin buffer, count and datatype (any
# value, MPI_DATATYPE_NULL included): checked only for other operations.
NO_OP_ORIGIN = {"MPI_Get_accumulate", "MPI_Get_accumulate_c", "MPI_Rget_accumulate", "MPI_Rget_accumulate_c"}

# Point-to-point functions: their rank and tag arguments are checked here.
P2P_RE = re.compile(
    r"^MPI_(I?[BSR]?send|I?recv|Send_init|Bsend_init|Ssend_init|Rsend_init|Recv_init|"
    r"I?sendrecv(_replace)?|I?m?probe|Psend_init|Precv_init)(_c)?$", re.IGNORECASE)


# Corrections to the procedure database, where it disagrees with the
# standard's text: (function, parameter) -> C declaration.
PARAM_FIXES = {
    ("MPI_Info_create_env", "argv"): "char* argv[]",
}

# Array parameters that may be given a sentinel address (MPI_UNWEIGHTED,
# MPI_WEIGHTS_EMPTY: small non-null constants in the standard ABI) are
# declared as pointers, the same type in C: GCC reads `int w[]` as an
# array of at least one element and warns at every call that passes a
# sentinel (-Wstringop-overread, -Wstringop-overflow).
SENTINEL_ARRAYS = {"sourceweights", "destweights", "weights"}


def lower_name(cname):
    assert cname.startswith("MPI_")
    return cname[4:].lower()


class Param:
    def __init__(self, p):
        ps = p._parseset
        self.name = ps["name"]
        self.kind = ps["kind"]
        self.direction = ps["param_direction"]
        self.root_only = ps["root_only"]
        self.decl = str(p).replace("\\ldots", "...")
        self.type = str(p.type)
        self.is_array = bool(p.array)
        self.ptr = p.pointer_level
        self.const = p.constant
        self.varargs = self.kind == "VARARGS"

    @property
    def scalar_in(self):
        return self.direction == "in" and not self.is_array and self.ptr == 0


class Func:
    def __init__(self, sym, big=False):
        self.cname = sym.name
        self.big = big
        self.ret = str(sym.return_type)
        self.params = [Param(p) for p in sym.parameters]
        for p in self.params:
            fix = PARAM_FIXES.get((self.cname, p.name))
            if fix:
                p.decl = fix
                p.type = fix.rsplit(" ", 1)[0]
            if p.name in SENTINEL_ARRAYS and p.decl.endswith(p.name + "[]"):
                p.decl = p.decl[:-len(p.name) - 2].rstrip() + " *" + p.name
        self.impl = "halo_api_" + lower_name(self.cname)
        self.base = None   # for a _c function: nothing; for a small one: its _c twin

    def proto(self, name):
        args = ", ".join(p.decl for p in self.params) or "void"
        return f"{self.ret} {name}({args})"

    def impl_params(self):
        return [p for p in self.params if not p.varargs]

    def impl_proto(self, name=None):
        args = ", ".join(p.decl for p in self.impl_params()) or "void"
        return f"{self.ret} {name or self.impl}({args})"

    def arg_names(self):
        return ", ".join(p.name for p in self.impl_params())


def collect():
    funcs = []
    for proc in sorted(std.PROCEDURES.values(), key=lambda p: p.name):
        try:
            sym = proc.express.iso_c
            str(sym)
        except Exception:
            sym = None
        if sym is None:   # MPI_F_sync_reg, MPI_Sizeof: Fortran only
            continue
        small = Func(sym)
        funcs.append(small)
        if proc.has_embiggenment():
            big = Func(proc.express.embiggen.iso_c, big=True)
            small.base = big
            funcs.append(big)
    callbacks = []
    for cb in sorted(std.CALLBACKS.values(), key=lambda p: p.name):
        callbacks.append(str(cb.express.iso_c).replace("\\ldots", "..."))
        if cb.has_embiggenment():
            callbacks.append(str(cb.express.embiggen.iso_c).replace("\\ldots", "..."))
    return funcs, callbacks


def read_constants():
    rows = []
    with open(os.path.join(ROOT, "tools", "abi", "constants.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, kind, value = line.rstrip("\n").split("\t")
            rows.append((name, kind, value))
    return rows


# ---------------------------------------------------------------- mpi.h

HEADER_TOP = """\
/* The MPI 5.0 standard ABI, as Halo implements it natively.
 *
 * Generated by tools/gen/gen_binding.py from the pympistandard procedure
 * database and tools/abi/constants.tsv. Do not edit: change the generator. */
#ifndef MPI_H_INCLUDED
#define MPI_H_INCLUDED

#include <stdint.h>
#include <stddef.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define HALO_MPI 1
#define HALO_VERSION_MAJOR 0
#define HALO_VERSION_MINOR 1

typedef intptr_t MPI_Aint;
typedef int64_t MPI_Offset;
typedef int64_t MPI_Count;

/* Not part of the standard ABI (its Fortran integer depends on the Fortran
 * compiler); kept for C programs that use the legacy c2f/f2c conversions,
 * which Halo maps onto MPI_<Handle>_toint/_fromint. */
typedef int MPI_Fint;

typedef struct MPI_ABI_Comm *MPI_Comm;
typedef struct MPI_ABI_Datatype *MPI_Datatype;
typedef struct MPI_ABI_Errhandler *MPI_Errhandler;
typedef struct MPI_ABI_File *MPI_File;
typedef struct MPI_ABI_Group *MPI_Group;
typedef struct MPI_ABI_Info *MPI_Info;
typedef struct MPI_ABI_Message *MPI_Message;
typedef struct MPI_ABI_Op *MPI_Op;
typedef struct MPI_ABI_Request *MPI_Request;
typedef struct MPI_ABI_Session *MPI_Session;
typedef struct MPI_ABI_Win *MPI_Win;

typedef struct MPI_ABI_T_enum *MPI_T_enum;
typedef struct MPI_ABI_T_cvar_handle *MPI_T_cvar_handle;
typedef struct MPI_ABI_T_pvar_handle *MPI_T_pvar_handle;
typedef struct MPI_ABI_T_pvar_session *MPI_T_pvar_session;
typedef struct MPI_ABI_T_event_registration *MPI_T_event_registration;
typedef struct MPI_ABI_T_event_instance *MPI_T_event_instance;

typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int MPI_internal[5];
} MPI_Status;

typedef struct MPI_F08_status {
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
    MPI_Fint MPI_internal[5];
} MPI_F08_status;

"""

# Enumerated constants that the standard gives a type of their own.
TYPED_ENUMS = (("MPI_T_cb_safety", "MPI_T_CB_REQUIRE_"), ("MPI_T_source_order", "MPI_T_SOURCE_"))

HEADER_EXTRA = """
/* Constants the ABI table leaves implicit. */
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPI_F_STATUS_IGNORE ((MPI_Fint *)0)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint *)0)
#define MPI_F08_STATUS_IGNORE ((MPI_F08_status *)0)
#define MPI_F08_STATUSES_IGNORE ((MPI_F08_status *)0)
"""


# Functions MPI-3.0 removed, declared for programs written before it
# (src/binding/removed.c implements them; they are not in the standard ABI).
REMOVED_FUNCS = (
    ("MPI_Address", "void *location, MPI_Aint *address"),
    ("MPI_Errhandler_create", "MPI_Handler_function *function, MPI_Errhandler *errhandler"),
    ("MPI_Errhandler_get", "MPI_Comm comm, MPI_Errhandler *errhandler"),
    ("MPI_Errhandler_set", "MPI_Comm comm, MPI_Errhandler errhandler"),
    ("MPI_Type_extent", "MPI_Datatype datatype, MPI_Aint *extent"),
    ("MPI_Type_hindexed", "int count, int array_of_blocklengths[], "
     "MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype"),
    ("MPI_Type_hvector", "int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, "
     "MPI_Datatype *newtype"),
    ("MPI_Type_lb", "MPI_Datatype datatype, MPI_Aint *displacement"),
    ("MPI_Type_struct", "int count, int array_of_blocklengths[], "
     "MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[], MPI_Datatype *newtype"),
    ("MPI_Type_ub", "MPI_Datatype datatype, MPI_Aint *displacement"),
)


def removed_block():
    out = ["""
/* Functions that MPI-3.0 removed from the standard, kept for programs
 * written before it. They are not part of the standard ABI; each does what
 * its replacement does (MPI_Get_address, MPI_Comm_create_errhandler,
 * MPI_Comm_get_errhandler, MPI_Comm_set_errhandler, MPI_Type_get_extent,
 * MPI_Type_create_hindexed, MPI_Type_create_hvector, MPI_Type_create_struct),
 * and so are the datatypes MPI_LB and MPI_UB.
 * Define HALO_NO_REMOVED_API before including mpi.h to leave them out. */
#if !defined(HALO_NO_REMOVED_API)
typedef void MPI_Handler_function(MPI_Comm *, int *, ...);
/* The bound markers: in MPI_Type_struct (or MPI_Type_create_struct) an
 * entry of MPI_LB (MPI_UB) at a displacement sets the type's lower (upper)
 * bound there, as MPI_Type_create_resized does now. Handles above the
 * standard's predefined range. */
#define MPI_LB ((MPI_Datatype)0x00000ff0)
#define MPI_UB ((MPI_Datatype)0x00000ff1)
"""]
    for prefix in ("", "P"):
        for name, params in REMOVED_FUNCS:
            out.append(f"int {prefix}{name}({params});\n")
    out.append("#endif\n")
    return "".join(out)


def c_value(kind, value):
    if kind.startswith("handle:"):
        t = kind.split(":", 1)[1]
        return f"(({t}){value})"
    return value


def gen_header(funcs, callbacks, consts):
    out = [HEADER_TOP]
    by_name = {n: (k, v) for n, k, v in consts}
    # Plain integer constants first: some enum values refer to none of them,
    # but keeping #defines together reads well.
    out.append("/* Integer constants. */\n")
    for n, k, v in consts:
        if k == "int":
            out.append(f"#define {n} {v}\n")
    out.append("\n/* Enumerated constants. */\nenum {\n")
    typed = lambda n: any(n.startswith(pre) for _, pre in TYPED_ENUMS)
    for n, k, v in consts:
        if k == "enum" and not typed(n):
            out.append(f"    {n} = {v},\n")
    out.append("};\n")
    for tname, pre in TYPED_ENUMS:
        out.append(f"\ntypedef enum {tname} {{\n")
        for n, k, v in consts:
            if k == "enum" and n.startswith(pre):
                out.append(f"    {n} = {v},\n")
        out.append(f"}} {tname};\n")
    out.append("\n/* Callback types. */\n")
    for cb in callbacks:
        out.append(cb + ";\n")
    out.append("\n/* Predefined handles and addresses. */\n")
    for n, k, v in consts:
        if k.startswith("handle:"):
            out.append(f"#define {n} {c_value(k, v)}\n")
    for n, k, v in consts:
        if k == "alias":
            out.append(f"#define {n} {v}\n")
    out.append(HEADER_EXTRA)
    out.append("\n/* Functions. Every MPI_X has a PMPI_X twin for profiling tools. */\n")
    for f in funcs:
        out.append(f.proto(f.cname) + ";\n")
    out.append("\n")
    for f in funcs:
        out.append(f.proto("P" + f.cname) + ";\n")
    out.append(removed_block())
    out.append("""
#if defined(__cplusplus)
}
#endif

#endif /* MPI_H_INCLUDED */
""")
    return "".join(out)


# ---------------------------------------------------------------- api_gen.h

def gen_api_header(funcs):
    out = ["""\
/* Prototypes of the internals behind every MPI function.
 * Generated by tools/gen/gen_binding.py. Do not edit.
 *
 * Each halo_api_X has the signature of MPI_X. A layer implements one by
 * defining it; until then a weak default in binding_gen.c answers
 * MPI_ERR_UNSUPPORTED_OPERATION (or, for a function with a large-count twin,
 * forwards to the twin when the twin is implemented). */
#ifndef HALO_BINDING_API_GEN_H
#define HALO_BINDING_API_GEN_H

#include <mpi.h>

"""]
    for f in funcs:
        out.append(f.impl_proto() + ";\n")
    out.append("\n#endif\n")
    return "".join(out)


# ---------------------------------------------------------------- binding_gen.c

def bridgeable(small, big):
    """Can MPI_X forward to MPI_X_c by converting arguments in place?

    Inputs that differ must be scalars (C converts int to MPI_Count); outputs
    that differ must be scalar pointers, converted back with a range check."""
    if len(small.params) != len(big.params):
        return False
    for s, b in zip(small.params, big.params):
        if s.type == b.type and s.is_array == b.is_array:
            continue
        if s.is_array or b.is_array:
            return False
        if s.kind in ("POLYFUNCTION",):
            return False
        if s.scalar_in:
            continue
        if s.ptr == 1 and s.direction in ("out",) and s.type in ("int*", "MPI_Aint*"):
            continue
        return False
    return True


def err_object(f):
    """Which object's error handler an error of f goes to."""
    if f.cname == "MPI_Session_init":
        # No session yet: the handler given as an argument.
        return "SESSION_INIT", "errhandler"
    if f.cname in ("MPI_Comm_create_from_group", "MPI_Intercomm_create_from_groups"):
        # No communicator yet: the handler given for the new one (MPI 4.0).
        return "COMM_INIT", "errhandler"
    if f.cname.startswith("MPI_T_"):
        # The tools interface returns its codes and raises nothing.
        return "RETURN", None
    for kind, tag in (("COMMUNICATOR", "COMM"), ("WINDOW", "WIN"), ("FILE", "FILE"),
                      ("SESSION", "SESSION")):
        for p in f.params:
            if p.kind == kind and not p.is_array and not p.root_only:
                if p.scalar_in:
                    return tag, p.name
                if p.ptr == 1 and p.direction == "inout":
                    return tag, "*" + p.name
    return "NONE", None


def p2p_peer_of(f, dtype_name):
    """The rank argument whose message a point-to-point datatype describes."""
    ranks = [p.name for p in f.params if p.kind == "RANK" and p.scalar_in]
    if dtype_name == "sendtype" and "dest" in ranks:
        return "dest"
    if dtype_name == "recvtype" and "source" in ranks:
        return "source"
    if dtype_name == "datatype" and len(ranks) == 1:
        return ranks[0]
    return None


def p2p_no_data(f, dtype_name, peer):
    """C condition under which a point-to-point datatype describes no data."""
    names = {p.name for p in f.params}
    count = {"sendtype": "sendcount", "recvtype": "recvcount"}.get(dtype_name, "count")
    if count in names:
        return f"({peer} == MPI_PROC_NULL || {count} == 0)"
    return f"{peer} == MPI_PROC_NULL"


def proc_null_dtypes(f):
    """(datatype, peer) pairs of a point-to-point function (see p2p_peer_of)."""
    if not P2P_RE.match(f.cname):
        return []
    out = []
    for p in f.params:
        if p.kind == "DATATYPE" and p.scalar_in:
            peer = p2p_peer_of(f, p.name)
            if peer:
                out.append((p.name, peer))
    return out


def checks_for(f):
    """Argument checks that hold for every call of f, whatever its semantics."""
    lines = []
    cname = f.cname
    names = {p.name for p in f.params}
    is_p2p = bool(P2P_RE.match(cname))
    comm = None
    for p in f.params:
        if p.kind == "COMMUNICATOR" and p.scalar_in and not p.root_only \
                and (cname, p.name) not in NULL_HANDLE_OK:
            if comm is None:
                comm = p.name
            lines.append(f'HALO_CHECK(halo_chk_comm({p.name}, "{p.name}"));')
    has_buffer = any(p.kind == "BUFFER" for p in f.params)
    collective = "sendbuf" in names or "recvbuf" in names
    for p in f.params:
        if p.kind in NNI_COUNT_KINDS and p.scalar_in and not p.root_only:
            # A collective's send or receive count is ignored with
            # MPI_IN_PLACE (any value is legal then): the collective checks it.
            if collective and not is_p2p and p.name in ("sendcount", "recvcount"):
                continue
            check = f'halo_chk_nonneg((MPI_Count){p.name}, "{p.name}", {NNI_COUNT_KINDS[p.kind]})'
            if cname in NO_OP_ORIGIN and p.name == "origin_count":
                check = f"op == MPI_NO_OP ? MPI_SUCCESS : {check}"
            lines.append(f'HALO_CHECK({check});')
    for p in f.params:
        if p.kind == "DATATYPE" and p.scalar_in and not p.root_only \
                and (cname, p.name) not in NULL_HANDLE_OK:
            if collective and not is_p2p and p.name in ("sendtype", "recvtype"):
                continue
            fn = "halo_chk_dtype_committed" if has_buffer else "halo_chk_dtype"
            peer = p2p_peer_of(f, p.name) if is_p2p else None
            if peer:
                # Nothing moves to or from MPI_PROC_NULL, nor with a count of
                # 0, so no datatype is needed (MPI_DATATYPE_NULL is accepted).
                lines.append(f'HALO_CHECK({p.name} == MPI_DATATYPE_NULL && {p2p_no_data(f, p.name, peer)} ? MPI_SUCCESS : '
                             f'{fn}({p.name}, "{p.name}"));')
            elif cname in NO_OP_ORIGIN and p.name == "origin_datatype":
                lines.append(f'HALO_CHECK(op == MPI_NO_OP ? MPI_SUCCESS : {fn}({p.name}, "{p.name}"));')
            else:
                lines.append(f'HALO_CHECK({fn}({p.name}, "{p.name}"));')
    if is_p2p and comm:
        for p in f.params:
            if p.kind == "RANK" and p.scalar_in:
                if p.name == "dest":
                    lines.append(f'HALO_CHECK(halo_chk_rank({comm}, {p.name}, "{p.name}", 0));')
                elif p.name == "source":
                    lines.append(f'HALO_CHECK(halo_chk_rank({comm}, {p.name}, "{p.name}", 1));')
            if p.kind == "TAG" and p.scalar_in:
                recv_side = p.name == "recvtag" or (p.name == "tag" and "source" in names and "dest" not in names)
                lines.append(f'HALO_CHECK(halo_chk_tag({p.name}, "{p.name}", {1 if recv_side else 0}));')
    # The tools interface lets several outputs be NULL ("not wanted").
    for p in f.params if not cname.startswith("MPI_T_") else []:
        if p.direction in ("out", "inout") and p.ptr == 1 and not p.is_array \
                and p.kind not in NONNULL_OUT_SKIP and not p.root_only:
            lines.append(f'HALO_CHECK(halo_chk_outptr({p.name}, "{p.name}"));')
    return lines


def gen_binding(funcs):
    out = ["""\
/* The MPI entry layer: one PMPI_X per function of the standard, a weak MPI_X
 * alias for each (so profiling tools can interpose), and a weak default for
 * each halo_api_X internal that a layer has not implemented yet.
 * Generated by tools/gen/gen_binding.py. Do not edit. */
#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "binding/binding.h"
#include "binding/api_gen.h"

"""]
    table = []
    for f in funcs:
        base = f.base
        if base is not None and bridgeable(f, base):
            out.append(gen_bridge_default(f, base))
            table.append((f, "bridge"))
        else:
            out.append(gen_unsupported_default(f))
            table.append((f, "plain"))
        out.append(gen_entry(f))
    out.append("\nconst halo_api_entry_t halo_api_table[] = {\n")
    index = {f.cname: i for i, f in enumerate(funcs)}
    for f, how in table:
        twin = index[f.base.cname] if (how == "bridge") else -1
        out.append(f'    {{"{f.cname}", (void (*)(void)){f.impl}, (void (*)(void))halo_dflt_{lower_name(f.cname)}, {twin}}},\n')
    out.append("};\n")
    out.append(f"const int halo_api_table_len = {len(funcs)};\n")
    return "".join(out)


def default_return(f):
    if f.ret == "int" and not is_conversion(f):
        return f'halo_unsupported("{f.cname}")'
    if f.ret == "double":
        return "0.0"
    if f.ret == "MPI_Aint":
        return "0"
    # Handle-returning conversions
    return f"(({f.ret})0)"


def void_params(f):
    return "".join(f"    (void){p.name};\n" for p in f.impl_params())


def gen_unsupported_default(f):
    ln = lower_name(f.cname)
    return (f"static {f.impl_proto('halo_dflt_' + ln)}\n{{\n{void_params(f)}"
            f"    return {default_return(f)};\n}}\n"
            f"{f.impl_proto()} __attribute__((weak, alias(\"halo_dflt_{ln}\")));\n")


def gen_bridge_default(f, big):
    ln = lower_name(f.cname)
    body = []
    call_args = []
    post = []
    for s, b in zip(f.impl_params(), big.impl_params()):
        if s.type == b.type or s.scalar_in:
            call_args.append(s.name)
            continue
        tmp = f"big_{s.name}"
        btype = b.type.rstrip("*")
        body.append(f"    {btype} {tmp} = 0;\n")
        call_args.append(f"{s.name} ? &{tmp} : NULL")
        if s.type == "int*":
            post.append(f"    if ({s.name}) *{s.name} = halo_count_to_int({tmp});\n")
        else:
            post.append(f"    if ({s.name}) *{s.name} = (MPI_Aint){tmp};\n")
    text = f"static {f.impl_proto('halo_dflt_' + ln)}\n{{\n"
    text += "".join(body)
    text += f"    int rc = {big.impl}({', '.join(call_args)});\n"
    if post:
        text += "    if (rc == MPI_SUCCESS) {\n" + "".join("    " + p for p in post) + "    }\n"
    text += "    return rc;\n}\n"
    text += f"{f.impl_proto()} __attribute__((weak, alias(\"halo_dflt_{ln}\")));\n"
    return text


def is_conversion(f):
    """Handle and address conversions: they cannot fail, return a value
    (not an error code) and accept null handles."""
    n = f.cname
    return f.ret != "int" or n.endswith(("_toint", "_c2f"))


def gen_entry(f):
    name = f.cname
    ln = lower_name(name)
    if f.cname == "MPI_Pcontrol":
        return ("int PMPI_Pcontrol(const int level, ...)\n{\n"
                "    return halo_api_pcontrol(level);\n}\n"
                "extern __typeof__(PMPI_Pcontrol) MPI_Pcontrol __attribute__((weak, alias(\"PMPI_Pcontrol\")));\n\n")
    text = f"{f.proto('P' + name)}\n{{\n"
    if is_conversion(f):
        # Conversions, address arithmetic and timers: no error path.
        text += f"    return {f.impl}({f.arg_names()});\n}}\n"
    else:
        anytime = name in ANYTIME or name.startswith(ANYTIME_PREFIX)
        lock = name not in NOLOCK
        objkind, objexpr = err_object(f)
        checks = checks_for(f)
        text += "    int rc;\n"
        if not anytime:
            text += f'    HALO_CHECK_INIT("{name}");\n'
        if lock:
            text += "    HALO_LOCK();\n"
        if checks:
            text += "    if (halo_error_checking) {\n"
            for c in checks:
                text += "        " + c + "\n"
            text += "    }\n"
        for dt, peer in proc_null_dtypes(f):
            # MPI_DATATYPE_NULL is accepted where no data moves; the
            # internals get a real type all the same.
            text += (f"    if (HALO_UNLIKELY({dt} == MPI_DATATYPE_NULL) && {p2p_no_data(f, dt, peer)})\n"
                     f"        {dt} = MPI_BYTE;\n")
        text += f"    rc = {f.impl}({f.arg_names()});\n"
        if checks:
            text += "  done:\n"
        if lock:
            text += "    HALO_UNLOCK();\n"
        text += "    if (HALO_UNLIKELY(rc != MPI_SUCCESS))\n"
        if objexpr is None:
            text += f'        rc = halo_err_dispatch(HALO_EOBJ_{objkind}, NULL, rc, "{name}");\n'
        else:
            text += f'        rc = halo_err_dispatch(HALO_EOBJ_{objkind}, (void *)({objexpr}), rc, "{name}");\n'
        text += "    return rc;\n}\n"
    text += f'extern __typeof__(P{name}) {name} __attribute__((weak, alias("P{name}")));\n\n'
    return text


def write_or_check(path, text, check, stale):
    full = os.path.join(ROOT, path)
    old = None
    if os.path.exists(full):
        with open(full) as f:
            old = f.read()
    if check:
        if old != text:
            stale.append(path)
        return
    if old != text:
        with open(full, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if committed output is stale")
    args = ap.parse_args()
    funcs, callbacks = collect()
    consts = read_constants()
    stale = []
    write_or_check("include/mpi.h", gen_header(funcs, callbacks, consts), args.check, stale)
    write_or_check("src/binding/api_gen.h", gen_api_header(funcs), args.check, stale)
    write_or_check("src/binding/binding_gen.c", gen_binding(funcs), args.check, stale)
    if stale:
        print("generated files are stale (run tools/gen/gen_binding.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
