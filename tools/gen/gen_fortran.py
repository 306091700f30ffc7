#!/usr/bin/env python3
"""Generate Halo's Fortran bindings (mpif.h and the mpi module).

Inputs: the pympistandard procedure database (each procedure's Fortran
parameters and its C twin, through gen_binding.collect) and
tools/abi/constants.tsv.

Outputs (committed, like gen_binding.py's):
  - include/mpif.h             constants, common blocks of the special
                               addresses, declarations of the functions
  - src/fortran/mpi_mod.F90    the `mpi` module: the same declarations and,
                               for gfortran, an interface of every procedure
  - src/fortran/fortran_gen.c  pmpi_x_ wrappers (weak mpi_x_ aliases) that
                               convert the arguments and call the C MPI_X;
                               pmpi_x_c_ for the large-count forms
  - src/fortran/mpi_f08.f90    the `mpi_f08` module (gfortran): interfaces
                               to the same wrappers

The procedures in HAND are written in src/fortran/fortran.c (callbacks,
attributes, strings arrays, functions without IERROR).

`gen_fortran.py --check` regenerates into memory and fails on any difference.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_binding as gb  # noqa: E402
import pympistandard as std  # noqa: E402

ROOT = gb.ROOT

# Written by hand in src/fortran/fortran.c.
HAND = {
    "MPI_Init", "MPI_Init_thread", "MPI_Wtime", "MPI_Wtick", "MPI_Aint_add", "MPI_Aint_diff",
    "MPI_Pcontrol", "MPI_Info_create_env", "MPI_F_sync_reg",
    "MPI_Comm_set_attr", "MPI_Type_set_attr", "MPI_Win_set_attr", "MPI_Attr_put",
    "MPI_Comm_get_attr", "MPI_Type_get_attr", "MPI_Win_get_attr", "MPI_Attr_get",
    "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval", "MPI_Keyval_create",
    "MPI_Op_create", "MPI_Comm_create_errhandler", "MPI_Win_create_errhandler",
    "MPI_File_create_errhandler", "MPI_Session_create_errhandler",
    "MPI_Grequest_start", "MPI_Register_datarep", "MPI_Comm_spawn", "MPI_Comm_spawn_multiple",
    "MPI_Info_get_string", "MPI_Session_get_nth_pset",
}
# Not bound: a generic interface of the module only.
SKIP = {"MPI_Sizeof"}

HANDLES = {
    "MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Group": "Group", "MPI_Request": "Request",
    "MPI_Info": "Info", "MPI_Op": "Op", "MPI_Errhandler": "Errhandler", "MPI_File": "File",
    "MPI_Win": "Win", "MPI_Message": "Message", "MPI_Session": "Session",
}
WIDE = {"MPI_Aint", "MPI_Offset", "MPI_Count"}
# void* parameters that are not choice buffers: passed on as they come.
RAW_VOID = {"C_BUFFER", "C_BUFFER2", "LOGICAL_VOID"}
# Indices the Fortran interface counts from 1.
ONE_BASED = {
    ("MPI_Waitany", "index"), ("MPI_Testany", "index"), ("MPI_Request_get_status_any", "index"),
    ("MPI_Waitsome", "array_of_indices"), ("MPI_Testsome", "array_of_indices"),
    ("MPI_Request_get_status_some", "array_of_indices"),
}


def fortran_procs():
    """(C function, Fortran parameter names in order) for every procedure
    with a Fortran binding."""
    funcs, _ = gb.collect()
    by_lower = {f.cname.lower(): f for f in funcs if not f.big}
    out = []
    for proc in sorted(std.PROCEDURES.values(), key=lambda p: p.name):
        f90 = proc.express.f90
        if f90 is None:
            continue
        cf = by_lower.get(proc.name)
        cname = cf.cname if cf else "MPI_" + proc.name[4:].capitalize()
        if cname in SKIP:
            continue
        fparams = [(p._parseset["name"], p._parseset) for p in f90.parameters]
        out.append((cname, cf, fparams))
    return out


class Gen:
    def __init__(self, cf, fparams):
        self.cf = cf
        self.fparams = fparams
        self.decls = []     # wrapper parameters
        self.hidden = []    # string lengths, after the others
        self.pre = []
        self.post = []
        self.args = {}      # C parameter name -> expression

    def length_expr(self, ps, cname):
        ln = ps["length"]
        if ln == "*":
            comm = "MPI_Comm_f2c(*comm)"
            neighbor = 1 if "neighbor" in cname.lower() else 0
            recv = 1 if ps["name"].startswith("recv") else 0
            return f"halo_f_w_count({comm}, {neighbor}, {recv})"
        return f"*{ln}"

    def param(self, cname, p, ps):
        n = p.name
        t = p.type.replace("const ", "").strip()
        base = t.rstrip("*").strip()
        if t.startswith("MPI_") and t.endswith("_function*"):
            raise ValueError(f"{cname}: callback parameter {n} needs a hand-written wrapper")
        if p.kind in ("STRING", ) and base == "char":
            self.decls.append(f"char *{n}")
            self.hidden.append(f"size_t {n}_len")
            if p.direction == "in":
                # Info keys and values lose leading blanks too (MPI 5.0, 10).
                trim = "halo_f_str_trim" if cname.startswith("MPI_Info_") else "halo_f_str_in"
                self.pre.append(f"char *c_{n} = {trim}({n}, {n}_len);")
                self.post.append(f"free(c_{n});")
            else:
                self.pre.append(f"char *c_{n} = halo_f_str_buf({n}_len);")
                if any(q.name == "flag" for q in self.cf.params):
                    # Not found: the argument stays as it was.
                    self.post.append(f"if (rc == MPI_SUCCESS && *flag)")
                    self.post.append(f"    halo_f_str_out({n}, {n}_len, c_{n});")
                    self.post.append(f"else")
                    self.post.append(f"    free(c_{n});")
                else:
                    self.post.append(f"halo_f_str_out({n}, {n}_len, c_{n});")
            self.args[n] = f"c_{n}"
            return
        if base in HANDLES:
            h = HANDLES[base]
            self.decls.append(f"MPI_Fint *{n}")
            if p.is_array:
                ln = self.length_expr(ps, cname)
                self.pre.append(f"int n_{n} = {ln};")
                self.pre.append(f"{base} *c_{n} = halo_f_alloc(n_{n}, sizeof *c_{n});")
                if p.direction in ("in", "inout"):
                    self.pre.append(f"for (int i = 0; i < n_{n}; i++)")
                    self.pre.append(f"    c_{n}[i] = MPI_{h}_f2c({n}[i]);")
                if p.direction in ("out", "inout"):
                    self.post.append(f"for (int i = 0; i < n_{n}; i++)")
                    self.post.append(f"    {n}[i] = MPI_{h}_c2f(c_{n}[i]);")
                self.post.append(f"free(c_{n});")
                self.args[n] = f"c_{n}"
            elif p.ptr == 0:
                self.args[n] = f"MPI_{h}_f2c(*{n})"
            else:
                if p.direction == "out":
                    self.pre.append(f"{base} c_{n};")
                    self.post.append(f"if (rc == MPI_SUCCESS)")
                    self.post.append(f"    *{n} = MPI_{h}_c2f(c_{n});")
                else:
                    self.pre.append(f"{base} c_{n} = MPI_{h}_f2c(*{n});")
                    if p.direction == "inout":
                        self.post.append(f"*{n} = MPI_{h}_c2f(c_{n});")
                self.args[n] = f"&c_{n}"
            return
        if base == "MPI_Status":
            self.decls.append(f"MPI_Fint *{n}")
            self.args[n] = f"halo_f_statuses({n})" if p.is_array else f"halo_f_status({n})"
            return
        if base in ("MPI_F08_status", "MPI_Fint"):
            self.decls.append(f"MPI_Fint *{n}")
            self.args[n] = f"({t}){n}" if base != "MPI_Fint" else n
            return
        if base in WIDE:
            self.decls.append(f"{base} *{n}")
            self.args[n] = n if (p.is_array or p.ptr) else f"*{n}"
            return
        if base == "void":
            self.decls.append(f"void *{n}")
            self.args[n] = n if p.kind in RAW_VOID else f"halo_f_buf({n})"
            return
        if base == "int":
            self.decls.append(f"MPI_Fint *{n}")
            if p.is_array and p.decl.endswith("[][3]"):
                self.args[n] = f"(int (*)[3]){n}"
            elif p.is_array:
                self.args[n] = f"halo_f_weights({n})" if p.kind == "WEIGHT" and p.direction == "in" else n
            elif p.ptr:
                self.args[n] = n
            else:
                self.args[n] = f"*{n}"
            if (cname, n) in ONE_BASED:
                if p.is_array:
                    self.post.append("if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)")
                    self.post.append("    for (int i = 0; i < *outcount; i++)")
                    self.post.append(f"        {n}[i]++;")
                else:
                    self.post.append(f"if (rc == MPI_SUCCESS && *{n} != MPI_UNDEFINED)")
                    self.post.append(f"    (*{n})++;")
            return
        raise ValueError(f"{cname}: no rule for parameter {n} of type {t} ({p.kind})")

    def emit(self, cname, ccall=None, f08=True):
        """The wrapper of Fortran name cname (lower-cased, with a trailing
        underscore) calling C's ccall (cname by default); with f08, also
        under the names of the mpi_f08 module's specifics (mpi_x_f08_)."""
        ccall = ccall or cname
        cparams = {p.name: p for p in self.cf.params}
        self.cptr = any(ps["kind"] == "C_BUFFER" for _, ps in self.fparams)
        for name, ps in self.fparams:
            if name == "ierror":
                continue
            self.param(ccall, cparams[name], ps)
        self.decls.append("MPI_Fint *ierror")
        lower = cname.lower()
        sig = ", ".join(self.decls + self.hidden)
        call_args = ", ".join(self.args[p.name] for p in self.cf.params)
        lines = [f"HALO_F_EXPORT void p{lower}_({sig})", "{"]
        for ln in self.pre:
            lines.append("    " + ln)
        lines.append(f"    int rc = {ccall}({call_args});")
        for ln in self.post:
            lines.append("    " + ln)
        lines.append("    F_RETURN(ierror, rc);")
        lines.append("}")
        lines.append(f"HALO_F_EXPORT void {lower}_({sig}) __attribute__((weak, alias(\"p{lower}_\")));")
        suffixes = []
        if self.cptr:
            # The TYPE(C_PTR) specific of the module's generic: the same
            # argument (the address of a pointer-sized variable).
            suffixes.append("_cptr")
        if f08:
            suffixes.append("_f08")
        for suffix in suffixes:
            for pre in ("p", ""):
                lines.append(f"HALO_F_EXPORT void {pre}{lower}{suffix}_({sig}) "
                             f"__attribute__((weak, alias(\"p{lower}_\")));")
        return "\n".join(lines) + "\n"


C_TOP = """\
/* The Fortran wrappers of every MPI procedure but those in fortran.c.
 *
 * Generated by tools/gen/gen_fortran.py. Do not edit: change the generator. */
#include "fortran/fortran.h"

#include <stdlib.h>

#pragma GCC diagnostic ignored "-Wmissing-prototypes"

"""


def big_procs():
    """(C function, F08 parameters) of the large-count forms the mpi_f08
    module binds (pmpi_x_c_): those without procedure arguments."""
    funcs, _ = gb.collect()
    by_lower = {f.cname.lower(): f for f in funcs if f.big}
    out = []
    for proc in sorted(std.PROCEDURES.values(), key=lambda p: p.name):
        if not proc.has_embiggenment():
            continue
        try:
            f08 = proc.express.embiggen.f08
        except Exception:
            continue
        cf = by_lower.get(proc.name + "_c")
        if f08 is None or cf is None:
            continue
        if any(p.type.startswith("PROCEDURE(") for p in f08.parameters):
            continue
        out.append((cf.cname, cf, [(p._parseset["name"], p._parseset) for p in f08.parameters]))
    return out


def gen_c(procs, bigs):
    out = [C_TOP]
    for cname, cf, fparams in procs:
        if cname in HAND:
            continue
        out.append(Gen(cf, fparams).emit(cname))
        out.append("\n")
    out.append("/* The large-count forms, for the mpi_f08 module (pmpi_x_c_f08_). */\n\n")
    for cname, cf, fparams in bigs:
        out.append(Gen(cf, fparams).emit(cname[:-2] + "_c_f08", cname, f08=False))
        out.append("\n")
    return "".join(out).rstrip("\n") + "\n"


# ---------------------------------------------------------------- mpif.h

# Constants that Fortran does not have (C types, the tools interface,
# C-only callback constants and addresses written as common blocks).
def fortran_constant(name, kind):
    if name.startswith("MPI_T_") or name.endswith("_C") and "CONVERSION" in name:
        return False
    if kind.startswith("handle:") and (kind.endswith("*") or "function" in kind):
        return False
    if name.startswith("MPI_F_"):
        return False
    return True


COMMONS = [
    # (Fortran declaration, common block, C name)
    ("INTEGER MPI_BOTTOM", "HALOF_BOTTOM", "MPI_BOTTOM"),
    ("INTEGER MPI_IN_PLACE", "HALOF_IN_PLACE", "MPI_IN_PLACE"),
    ("INTEGER MPI_BUFFER_AUTOMATIC", "HALOF_BUFFER_AUTOMATIC", "MPI_BUFFER_AUTOMATIC"),
    ("INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", "HALOF_STATUS_IGNORE", "MPI_STATUS_IGNORE"),
    ("INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", "HALOF_STATUSES_IGNORE",
     "MPI_STATUSES_IGNORE"),
    ("INTEGER MPI_ERRCODES_IGNORE(1)", "HALOF_ERRCODES_IGNORE", "MPI_ERRCODES_IGNORE"),
    ("INTEGER MPI_UNWEIGHTED(1)", "HALOF_UNWEIGHTED", "MPI_UNWEIGHTED"),
    ("INTEGER MPI_WEIGHTS_EMPTY(1)", "HALOF_WEIGHTS_EMPTY", "MPI_WEIGHTS_EMPTY"),
    ("CHARACTER*1 MPI_ARGV_NULL(1)", "HALOF_ARGV_NULL", "MPI_ARGV_NULL"),
    ("CHARACTER*1 MPI_ARGVS_NULL(1,1)", "HALOF_ARGVS_NULL", "MPI_ARGVS_NULL"),
]

# Predefined callback procedures (EXTERNAL; fortran.c defines them).
CALLBACK_NAMES = [
    "MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN",
    "MPI_COMM_NULL_COPY_FN", "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_DUP_FN",
    "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_DUP_FN",
    "MPI_WIN_NULL_COPY_FN", "MPI_WIN_NULL_DELETE_FN", "MPI_WIN_DUP_FN",
    "MPI_CONVERSION_FN_NULL",
]


def by_name_removed(name):
    """The handle value of a removed datatype, as mpi.h defines it."""
    with open(os.path.join(ROOT, "include", "mpi.h")) as f:
        for line in f:
            if line.startswith(f"#define {name} "):
                return line.split(")")[-2].strip()
    raise ValueError(name)


def fortran_int(value):
    v = int(value, 0)
    return str(v)


def fline(s):
    """A statement that reads the same in fixed and free form."""
    line = "      " + s
    assert len(line) <= 72, line
    return line


def gen_decls(consts, module):
    """The declarations of mpif.h (module: for the mpi module's body)."""
    by_name = {n: (k, v) for n, k, v in consts}
    out = []
    c = "!"
    out.append(c + " Kinds and sizes")
    params = [
        ("MPI_ADDRESS_KIND", "8"), ("MPI_OFFSET_KIND", "8"), ("MPI_COUNT_KIND", "8"),
        ("MPI_INTEGER_KIND", "4"), ("MPI_STATUS_SIZE", str(by_name["MPI_F_STATUS_SIZE"][1])),
        ("MPI_SOURCE", str(int(by_name["MPI_F_SOURCE"][1]) + 1)),
        ("MPI_TAG", str(int(by_name["MPI_F_TAG"][1]) + 1)),
        ("MPI_ERROR", str(int(by_name["MPI_F_ERROR"][1]) + 1)),
    ]
    for n, v in params:
        out.append(fline(f"INTEGER {n}"))
        out.append(fline(f"PARAMETER ({n}={v})"))
    out.append(c + " Constants of the standard ABI (integer handles are their values)")
    for n, k, v in consts:
        if not fortran_constant(n, k) or n in dict(params):
            continue
        if k == "alias":
            v = by_name[v][1]
        if k == "handle:MPI_Offset":
            out.append(fline(f"INTEGER(KIND=MPI_OFFSET_KIND) {n}"))
        else:
            out.append(fline(f"INTEGER {n}"))
        out.append(fline(f"PARAMETER ({n}={fortran_int(v)})"))
    out.append(c + " Removed by MPI-3.0, for old programs (as in mpi.h): the bound")
    out.append(c + " markers, and the combiners of the INTEGER forms, which Halo never")
    out.append(c + " returns (its MPI_TYPE_HVECTOR makes an MPI_COMBINER_HVECTOR type)")
    for n, v in (("MPI_LB", by_name_removed("MPI_LB")), ("MPI_UB", by_name_removed("MPI_UB")),
                 ("MPI_COMBINER_HVECTOR_INTEGER", "-105"), ("MPI_COMBINER_HINDEXED_INTEGER", "-107"),
                 ("MPI_COMBINER_STRUCT_INTEGER", "-110")):
        out.append(fline(f"INTEGER {n}"))
        out.append(fline(f"PARAMETER ({n}={fortran_int(v)})"))
    out.append(fline("LOGICAL MPI_SUBARRAYS_SUPPORTED"))
    out.append(fline("PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)"))
    out.append(fline("LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING"))
    out.append(fline("PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)"))
    out.append(c + " Special addresses")
    for decl, block, _ in COMMONS:
        out.append(fline(decl))
        name = decl.split()[1].split("(")[0]
        out.append(fline(f"COMMON /{block}/ {name}"))
        if module:
            out.append(fline(f"SAVE /{block}/"))
    out.append(c + " Procedures")
    for n in CALLBACK_NAMES:
        out.append(fline(f"EXTERNAL {n}"))
    if module:
        out.append("#if !defined(__GFORTRAN__)")
    out.append(fline("DOUBLE PRECISION MPI_WTIME, MPI_WTICK"))
    out.append(fline("EXTERNAL MPI_WTIME, MPI_WTICK"))
    out.append(fline("DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK"))
    out.append(fline("EXTERNAL PMPI_WTIME, PMPI_WTICK"))
    out.append(fline("INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF"))
    out.append(fline("EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF"))
    if module:
        out.append("#endif")
    return out


# Procedures the module gives no specific interface: MPI_SIZEOF is a
# generic of its own.
NO_INTERFACE = {"mpi_sizeof"}


def wrap_free(line, indent="    "):
    """Free-form continuation for lines past 100 columns."""
    out = []
    while len(line) > 100:
        cut = line.rfind(", ", 0, 98)
        out.append(line[:cut + 1] + " &")
        line = indent + "  " + line[cut + 2:]
    out.append(line)
    return out


# MPI_SIZEOF: one specific per type and kind (assumed rank: scalars and
# arrays alike), each a C function of fortran.c giving the size.
SIZEOF_KINDS = [("INTEGER", k) for k in (1, 2, 4, 8, 16)] + \
    [("REAL", k) for k in (4, 8, 16)] + [("COMPLEX", k) for k in (4, 8, 16)] + \
    [("LOGICAL", k) for k in (1, 2, 4, 8)]


def sizeof_specific(t, k):
    return f"halo_sizeof_{t[0].lower()}{k}"


def sizeof_generic(name, size_ierror):
    """The generic MPI_SIZEOF: one specific per type and kind of X, whose
    SIZE and IERROR declarations are size_ierror."""
    out = [f"  interface {name}"]
    specifics = [(sizeof_specific(t, k), f"{t}(KIND={k})") for t, k in SIZEOF_KINDS]
    specifics.append(("halo_sizeof_c1", "CHARACTER(LEN=*)"))
    for sp, xtype in specifics:
        out.append(f"    subroutine {sp}(X, SIZE, IERROR)")
        out.append(f"      {xtype}, DIMENSION(..) :: X")
        out.extend(size_ierror)
        out.append(f"    end subroutine {sp}")
    out.append(f"  end interface {name}")
    return out


def interface_body(name, params, rtype, cptr=False):
    out = []
    args = ", ".join(p.name for p in params)
    kind = "function" if rtype else "subroutine"
    out.extend(wrap_free(f"    {kind} {name}({args})", "    "))
    if cptr:
        out.append("      use, intrinsic :: iso_c_binding, only: c_ptr")
    out.append("      import")
    out.append("      implicit none")
    if rtype:
        out.append(f"      {rtype} :: {name}")
    for p in params:
        t = p.type
        dims = p.dimensions.replace(" ", "")
        if cptr and p._parseset["kind"] == "C_BUFFER":
            out.append(f"      TYPE(C_PTR) :: {p.name}")
        elif t == "<type>":
            out.append(f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {p.name}")
            out.append(f"      TYPE(*), DIMENSION(*) :: {p.name}")
        elif t == "EXTERNAL":
            out.append(f"      EXTERNAL :: {p.name}")
        else:
            out.append(f"      {t} :: {p.name}{dims}")
    out.append(f"    end {kind} {name}")
    return out


def gen_interfaces():
    """Explicit interfaces of every procedure, for gfortran: choice buffers
    take anything (NO_ARG_CHECK on an assumed-size TYPE(*)), every other
    argument is checked. Procedures returning memory (MPI_ALLOC_MEM,
    MPI_WIN_ALLOCATE, ...) are generic over INTEGER(KIND=MPI_ADDRESS_KIND)
    and TYPE(C_PTR) (the _CPTR specifics); MPI_SIZEOF is generic over the
    intrinsic types."""
    out = ["#if defined(__GFORTRAN__)", "  interface"]
    generics = []
    for proc in sorted(std.PROCEDURES.values(), key=lambda p: p.name):
        f90 = proc.express.f90
        if f90 is None or proc.name in NO_INTERFACE:
            continue
        params = f90.parameters
        if any(p._parseset["kind"] == "C_BUFFER" for p in params):
            generics.append((f90.name, params))
            continue
        out.extend(interface_body(f90.name, params, f90.return_type))
    for name in ("PMPI_WTIME", "PMPI_WTICK"):
        out.append(f"    double precision function {name}()")
        out.append(f"    end function {name}")
    out.append("  end interface")
    for name, params in generics:
        out.append(f"  interface {name}")
        out.extend(interface_body(name, params, None))
        out.extend(interface_body(name + "_CPTR", params, None, cptr=True))
        out.append(f"  end interface {name}")
    out.extend(sizeof_generic("MPI_SIZEOF", ["      INTEGER :: SIZE, IERROR"]))
    out.append("#endif")
    return out


MPIF_TOP = """\
! The Fortran interface to Halo (MPI 5.0): include 'mpif.h'.
!
! Generated by tools/gen/gen_fortran.py. Do not edit: change the generator.
! Valid in fixed and free source form.
"""


def gen_mpif(consts):
    return MPIF_TOP + "\n".join(gen_decls(consts, False)) + "\n"


MOD_TOP = """\
! The `mpi` module of Halo (MPI 5.0): the declarations of mpif.h, the
! TYPE(MPI_Status) of mpi_f08 (the same type: BIND(C), same components) for
! MPI_STATUS_F2F08 and MPI_STATUS_F082F, and, for gfortran, explicit
! interfaces (choice buffers unchecked).
!
! Generated by tools/gen/gen_fortran.py. Do not edit: change the generator.
module mpi
      use, intrinsic :: iso_c_binding, only: c_int
      implicit none
      type, bind(C) :: MPI_Status
        integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR
        integer(c_int) :: halo_internal(5)
      end type MPI_Status
"""


def gen_module(consts):
    body = gen_decls(consts, True) + gen_interfaces()
    return MOD_TOP + "\n".join(body) + "\nend module mpi\n"


# ---------------------------------------------------------------- mpi_f08

F08_HANDLES = ["MPI_Comm", "MPI_Datatype", "MPI_Errhandler", "MPI_File", "MPI_Group", "MPI_Info",
               "MPI_Message", "MPI_Op", "MPI_Request", "MPI_Session", "MPI_Win"]

F08_TOP = """\
! The `mpi_f08` module of Halo (MPI 5.0), for gfortran.
!
! Generated by tools/gen/gen_fortran.py. Do not edit: change the generator.
! Handles are derived types of one INTEGER (MPI_VAL, the integer handle of
! mpif.h; c_int is the default INTEGER), statuses TYPE(MPI_Status), IERROR
! optional. Choice buffers are
! assumed-rank TYPE(*), DIMENSION(..) (MPI_SUBARRAYS_SUPPORTED is .TRUE.:
! any array section may be passed, src/fortran/f08ts.c); procedure
! arguments are EXTERNAL. Each generic MPI_X (and PMPI_X) names the
! specific MPI_X_f08 (and MPI_X_c_f08, the large-count form), or
! MPI_X_f08ts (MPI_X_c_f08ts) for a procedure with choice buffers, which
! the library's wrappers implement (the _f08ts ones in mpi_f08ts.f90).
module mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_char, c_int
  implicit none
"""


# Partitioned buffers are used while the request is active, and the
# receive's is written: the standard's text has them without ASYNCHRONOUS
# and the receive's INTENT(IN), which would let a compiler keep the
# program's copy of the buffer across MPI_Wait.
PARTITIONED_BUFFERS = {"MPI_Psend_init": "INTENT(IN)", "MPI_Precv_init": None}


def buffer_intent(proc, p):
    """The intent of choice buffer p of procedure proc (the standard's
    name, without PMPI_ and suffixes), as the module declares it."""
    return PARTITIONED_BUFFERS[proc] if proc in PARTITIONED_BUFFERS else p.intent


def f08_decl(p, proc=None):
    """The declaration of one dummy argument (of procedure proc, the
    standard's name without PMPI_ and suffixes)."""
    t = p.type
    attrs = [a for a in (p.intent, p.optional, p.asynchronous) if a]
    if proc in PARTITIONED_BUFFERS and t == "TYPE(*), DIMENSION(..)":
        attrs = [a for a in (buffer_intent(proc, p), "ASYNCHRONOUS") if a]
    if t == "TYPE(*), DIMENSION(..)":
        return ["      " + ", ".join(["TYPE(*), DIMENSION(..)"] + attrs) + f" :: {p.name}"]
    if t.startswith("PROCEDURE("):
        return [f"      EXTERNAL :: {p.name}"]
    if t == "CHARACTER":
        t = "CHARACTER(LEN=*)"
    dims = p.name_length.replace(" ", "")
    return ["      " + ", ".join([t] + attrs) + f" :: {p.name}{dims}"]


def f08_abstract_interfaces():
    """The standard's abstract interfaces of callbacks (MPI_User_function,
    ...), from the database's text of each."""
    out = []
    for name, cb in sorted(std.CALLBACKS.items()):
        forms = []
        try:
            if cb.express.f08 is not None:
                forms.append(str(cb.express.f08))
            if cb.has_embiggenment():
                forms.append(str(cb.express.embiggen.f08))
        except Exception:
            continue
        for text in forms:
            lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
            assert lines[0] == "ABSTRACT INTERFACE", lines
            head = lines[1]
            sub = head.split("(")[0]
            out.append("  abstract interface")
            out.extend(wrap_free(f"    subroutine {head}", "    "))
            uses = [ln for ln in lines[2:] if ln.startswith("USE")]
            for ln in uses:
                out.append("      " + ln)
            out.append("      import")
            out.append("      implicit none")
            for ln in lines[2:]:
                if not ln.startswith("USE"):
                    out.extend(wrap_free("      " + ln, "      "))
            out.append(f"    end subroutine {sub}")
            out.append("  end interface")
    return out


def f08_signature(f08):
    """What generic resolution sees of the non-optional arguments (the
    address, offset and count kinds are all 8 bytes here)."""
    sig = []
    for p in f08.parameters:
        if p.optional or p.type == "TYPE(*), DIMENSION(..)":
            continue
        t = p.type
        for k in ("MPI_ADDRESS_KIND", "MPI_OFFSET_KIND", "MPI_COUNT_KIND"):
            t = t.replace(k, "8")
        sig.append((t, p.name_length != ""))
    return sig


def f08_body(name, f08):
    params = f08.parameters
    rtype = f08.return_type
    kind = "function" if rtype else "subroutine"
    out = wrap_free(f"    {kind} {name}({', '.join(p.name for p in params)})", "    ")
    out.append("      import")
    out.append("      implicit none")
    if rtype:
        out.append(f"      {rtype} :: {name}")
    for p in params:
        out.extend(f08_decl(p, f08.name))
    out.append(f"    end {kind} {name}")
    return out


def gen_f08(consts, procs, bigs):
    by_name = {n: (k, v) for n, k, v in consts}
    big_names = {cname[:-2].lower() for cname, _, _ in bigs}
    out = [F08_TOP]
    out.append("  ! Kinds and sizes")
    for n, v in (("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
                 ("MPI_INTEGER_KIND", 4), ("MPI_STATUS_SIZE", by_name["MPI_F_STATUS_SIZE"][1]),
                 ("MPI_SOURCE", int(by_name["MPI_F_SOURCE"][1]) + 1),
                 ("MPI_TAG", int(by_name["MPI_F_TAG"][1]) + 1),
                 ("MPI_ERROR", int(by_name["MPI_F_ERROR"][1]) + 1)):
        out.append(f"  integer, parameter :: {n} = {v}")
    out.append("  ! Handles and statuses")
    for h in F08_HANDLES:
        out.append(f"  type, bind(C) :: {h}")
        out.append("    integer(c_int) :: MPI_VAL")
        out.append(f"  end type {h}")
    out.append("  type, bind(C) :: MPI_Status")
    out.append("    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR")
    out.append("    integer(c_int) :: halo_internal(5)")
    out.append("  end type MPI_Status")
    out.append("  ! Constants of the standard ABI")
    handle_kinds = {"handle:" + h: h for h in F08_HANDLES}
    for n, k, v in consts:
        if not fortran_constant(n, k) or n in ("MPI_STATUS_SIZE",):
            continue
        kk, vv = (by_name[v] if k == "alias" else (k, v))
        if kk in handle_kinds:
            h = handle_kinds[kk]
            out.append(f"  type({h}), parameter :: {n} = {h}({fortran_int(vv)})")
        elif kk == "handle:MPI_Offset":
            out.append(f"  integer(kind=MPI_OFFSET_KIND), parameter :: {n} = {fortran_int(vv)}")
        else:
            out.append(f"  integer, parameter :: {n} = {fortran_int(vv)}")
    out.append("  ! Removed by MPI-3.0, for old programs (as in mpif.h)")
    for n in ("MPI_LB", "MPI_UB"):
        out.append(f"  type(MPI_Datatype), parameter :: {n} = MPI_Datatype({fortran_int(by_name_removed(n))})")
    out.append("  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .true.")
    out.append("  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.")
    out.append("  ! Special addresses: the variables of mpif.h's common blocks")
    for decl, block, _ in COMMONS:
        t, rest = decl.split(" ", 1)
        name = rest.split("(")[0]
        dims = rest[len(name):]
        ft = {"INTEGER": "integer(c_int)", "CHARACTER*1": "character(kind=c_char)"}[t]
        if name in ("MPI_STATUS_IGNORE", "MPI_STATUSES_IGNORE"):
            ft, dims = "type(MPI_Status)", "" if name == "MPI_STATUS_IGNORE" else "(1)"
        out.append(f"  {ft}, bind(C, name=\"{block.lower()}_\") :: {name}{dims}")
    out.append("  ! The interfaces of user procedures")
    out.extend(f08_abstract_interfaces())
    out.append("  ! Predefined callbacks")
    for n in CALLBACK_NAMES:
        if n in ("MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN"):
            continue
        obj = n[4:].split("_")[0].capitalize()
        iface = ("MPI_Datarep_conversion_function" if "CONVERSION" in n
                 else f"MPI_{obj}_{'delete' if 'DELETE' in n else 'copy'}_attr_function")
        out.append(f"  procedure({iface}) :: {n}")
    out.append("  ! Handles compare by value")
    for op, tag in (("==", "eq"), ("/=", "ne")):
        out.append(f"  interface operator({op})")
        for h in F08_HANDLES:
            fn = f"halo_f08_{h[4:].lower()}_{tag}"
            out.append(f"    elemental logical function {fn}(a, b)")
            out.append(f"      import :: {h}")
            out.append(f"      type({h}), intent(in) :: a, b")
            out.append(f"    end function {fn}")
        out.append("  end interface")
    for proc in sorted(std.PROCEDURES.values(), key=lambda p: p.name):
        try:
            f08 = proc.express.f08
        except Exception:
            f08 = None
        if f08 is None or proc.name == "mpi_sizeof":
            continue
        big = proc.express.embiggen.f08 if proc.name in big_names else None
        sfx = "_f08ts" if f08_choice(f08) else "_f08"
        for pre in ("", "P"):
            generic = pre + f08.name
            apart = big is not None and f08_signature(big) != f08_signature(f08)
            out.append(f"  interface {generic}")
            out.extend(f08_body(generic + sfx, f08))
            if apart:
                out.extend(f08_body(generic + "_c" + sfx, big))
            out.append(f"  end interface {generic}")
            if big is not None and not apart:
                # Not told apart from the small form (its wide integers are
                # all of one kind here): only by its own name.
                out.append(f"  interface {generic}_c")
                out.extend(f08_body(generic + "_c" + sfx, big))
                out.append(f"  end interface {generic}_c")
    out.extend(sizeof_generic("MPI_Sizeof", ["      INTEGER :: SIZE", "      INTEGER, OPTIONAL :: IERROR"]))
    out.append("end module mpi_f08")
    return "\n".join(out) + "\n"


def f08_choice(f08):
    """The choice buffers of an mpi_f08 procedure."""
    return [p for p in f08.parameters if p.type == "TYPE(*), DIMENSION(..)"]


# How halo_f08ts_begin treats a non-contiguous section (src/fortran/f08ts.c).
TS_ADDR, TS_CONTIG, TS_COPY, TS_MAP, TS_KEEP = range(5)
TS_KIND, TS_WRITTEN, TS_KEEPABLE = 0xF, 0x10, 0x20
# Only the first element's address counts.
TS_ADDR_PROCS = {"MPI_Get_address", "MPI_Free_mem", "MPI_Win_detach", "MPI_F_sync_reg",
                 "MPI_Fetch_and_op", "MPI_Compare_and_swap"}
# Memory the library keeps.
TS_CONTIG_PROCS = {"MPI_Buffer_attach", "MPI_Comm_attach_buffer", "MPI_Session_attach_buffer",
                   "MPI_Win_create", "MPI_Win_attach"}
# Nonblocking or persistent, the data left in place through a datatype.
TS_MAP_PROCS = {
    "MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv", "MPI_Imrecv",
    "MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Recv_init",
    "MPI_Isendrecv", "MPI_Isendrecv_replace", "MPI_Ibcast", "MPI_Bcast_init",
    "MPI_Put", "MPI_Get", "MPI_Rput", "MPI_Rget", "MPI_Accumulate", "MPI_Raccumulate",
    "MPI_Get_accumulate", "MPI_Rget_accumulate",
}
# Buffers of nonblocking and persistent collectives whose count covers the
# whole buffer (the others have a count per rank): mapped too.
TS_MAP_BUFFERS = {(f"MPI_{pre}{c}{post}", "sendbuf")
                  for c in ("gather", "gatherv", "allgather", "allgatherv", "neighbor_allgather",
                            "neighbor_allgatherv")
                  for pre, post in (("I", ""), ("", "_init"))} | \
                 {(f"MPI_{pre}{c}{post}", "recvbuf")
                  for c in ("scatter", "scatterv") for pre, post in (("I", ""), ("", "_init"))}
TS_OBJECTS = {"TYPE(MPI_Comm)": 1, "TYPE(MPI_Win)": 2, "TYPE(MPI_File)": 3, "TYPE(MPI_Session)": 4}


def ts_mode(name, f08, p):
    """The kind of buffer (TS_*) with its flags: whether the call may write
    it, whether (mapped) its request could keep a copy instead."""
    written = TS_WRITTEN if buffer_intent(name, p) != "INTENT(IN)" else 0
    keepable = TS_KEEPABLE if any(q.name == "request" for q in f08.parameters) else 0
    if name in TS_ADDR_PROCS or name.startswith("MPI_File_") and name.endswith("_end"):
        return TS_ADDR
    if name in TS_CONTIG_PROCS:
        return TS_CONTIG
    if name in TS_MAP_PROCS or name.startswith("MPI_File_i") or name.endswith("_begin") or \
            (name, p.name) in TS_MAP_BUFFERS:
        return TS_MAP | written | keepable
    if name.startswith("MPI_I") or name.endswith("_init"):
        return TS_KEEP | written
    return TS_COPY | written


def ts_pair(f08, p):
    """The count and datatype arguments of a mapped buffer."""
    names = {q.name for q in f08.parameters}
    pre = p.name[:-3] if p.name.endswith("buf") else p.name[:-4] if p.name.endswith("addr") else ""
    count = next(c for c in (pre + "count", pre + "_count", "count") if c in names)
    dtype = next(c for c in (pre + "type", pre + "datatype", "datatype") if c in names)
    return count, dtype


F08TS_TOP = """\
! The specifics of the mpi_f08 module with choice buffers (MPI_X_f08ts,
! MPI_X_c_f08ts and their PMPI_ twins): each hands its buffers' descriptors
! to halo_f08ts_begin (src/fortran/f08ts.c), which says what the call gets
! for them, calls the C wrapper of the procedure (pmpi_x_f08_,
! fortran_gen.c), hands the copies of a nonblocking or persistent
! collective to its request (halo_f08ts_attach) and then, when there is
! something to undo, calls halo_f08ts_end.
! MPI_X_f08ts and PMPI_X_f08ts are the same code (a tool may replace the
! first; a call through both would cost a descriptor more).
!
! Generated by tools/gen/gen_fortran.py. Do not edit: change the generator.
module halo_f08ts_internal
  use, intrinsic :: iso_c_binding
  implicit none
  type, bind(C) :: halo_f08ts_buf
    type(c_ptr) :: addr, tmp
    integer(c_int64_t) :: count
    integer(c_int) :: dtype, mode, own_type, pad
  end type halo_f08ts_buf
  interface
    subroutine halo_f08ts_begin(b, buf, mode, count, dtype, objkind, handle, where, ierr) &
        bind(C, name="halo_f08ts_begin")
      import
      type(halo_f08ts_buf) :: b
      type(*), dimension(..) :: buf
      integer(c_int) :: mode, dtype, objkind, handle, ierr
      integer(c_int64_t) :: count
      character(kind=c_char) :: where(*)
    end subroutine halo_f08ts_begin
    subroutine halo_f08ts_end(b, buf) bind(C, name="halo_f08ts_end")
      import
      type(halo_f08ts_buf) :: b
      type(*), dimension(..) :: buf
    end subroutine halo_f08ts_end
    subroutine halo_f08ts_attach(b, buf, request) bind(C, name="halo_f08ts_attach")
      import
      type(halo_f08ts_buf) :: b
      type(*), dimension(..) :: buf
      integer(c_int) :: request
    end subroutine halo_f08ts_attach
  end interface
end module halo_f08ts_internal
"""


def f08ts_wrapper(cname, f08, name, lower, big):
    """PMPI_<name> and MPI_<name>, the same body, for one specific."""
    return f08ts_body(cname, f08, "P" + name, lower, big) + f08ts_body(cname, f08, name, lower, big)


def f08ts_body(cname, f08, name, lower, big):
    params = f08.parameters
    args = ", ".join(q.name for q in params)
    bufs = f08_choice(f08)
    types = sorted({q.type[5:-1] for q in params if q.type.startswith("TYPE(MPI_")})
    kinds = [k for k in ("MPI_ADDRESS_KIND", "MPI_OFFSET_KIND", "MPI_COUNT_KIND")
             if any(k in q.type for q in params)]
    uses = ", ".join(types + kinds)
    obj = next(((TS_OBJECTS[q.type], q.name) for q in params if q.type in TS_OBJECTS), (0, None))
    out = []
    out.extend(wrap_free(f"subroutine {name}({args})", "  "))
    out.append("  use, intrinsic :: iso_c_binding")
    out.extend(wrap_free(f"  use :: mpi_f08, only : {uses}", "    "))
    out.append("  use :: halo_f08ts_internal")
    out.append("  implicit none")
    for q in params:
        out.extend(ln[4:] if ln.startswith("      ") else ln for ln in f08_decl(q, cname))
    # The C wrapper: buffers as addresses, everything else by reference,
    # a CHARACTER's length after the others.
    raw = f"p{lower}{'_c' if big else ''}_f08_"
    hidden = [q.name for q in params if q.type == "CHARACTER"]
    rargs = [q.name for q in params] + [h + "_len" for h in hidden]
    out.append("  interface")
    out.extend(wrap_free(f"    subroutine raw({', '.join(rargs)}) bind(C, name=\"{raw}\")", "      "))
    out.append("      import")
    out.append("      implicit none")
    for q in params:
        if q.type == "TYPE(*), DIMENSION(..)":
            out.append(f"      type(c_ptr), value :: {q.name}")
        elif q.type == "CHARACTER":
            out.append(f"      character(kind=c_char) :: {q.name}(*)")
        elif q.name == "ierror":
            out.append("      integer(c_int) :: ierror")
        else:
            t = "integer(c_int)" if q.type == "INTEGER" else \
                "integer(c_int64_t)" if q.type.startswith("INTEGER(KIND=") else q.type
            out.append(f"      {t} :: {q.name}{q.name_length.replace(' ', '')}")
    for h in hidden:
        out.append(f"      integer(c_size_t), value :: {h}_len")
    out.append("    end subroutine raw")
    out.append("  end interface")
    out.append("  integer :: ierr")
    for i, b in enumerate(bufs):
        out.append(f"  type(halo_f08ts_buf) :: b{i}")
    subst = {}
    byname = {q.name: q for q in params}
    objarg = f"{obj[1]}%MPI_VAL" if obj[1] else "0_c_int"
    modes = [ts_mode(cname, f08, b) for b in bufs]
    for i, b in enumerate(bufs):
        mode = modes[i]
        count, dtype = "0_c_int64_t", "0_c_int"
        if mode & TS_KIND == TS_MAP:
            cn, dn = ts_pair(f08, b)
            count, dtype = f"int({cn}, c_int64_t)", f"{dn}%MPI_VAL"
            ck = byname[cn].type
            subst[cn] = f"int(b{i}%count)" if ck == "INTEGER" else f"int(b{i}%count, {ck[ck.index('=') + 1:-1]})"
            subst[dn] = f"MPI_Datatype(b{i}%dtype)"
        subst[b.name] = f"b{i}%addr"
        where = f"{cname}:{b.name}"
        # halo_f08ts_begin sets every field; a later buffer's stays as set
        # here when an earlier one failed (then nothing is undone for it).
        guard = ""
        if i > 0:
            out.append(f"  b{i} = halo_f08ts_buf(c_null_ptr, c_null_ptr, 0_c_int64_t, 0, 0, 0, 0)")
            guard = "if (ierr == 0) "
        out.extend(wrap_free(f"  {guard}call halo_f08ts_begin(b{i}, {b.name}, {mode}_c_int, {count}, "
                             f"{dtype}, {obj[0]}_c_int, {objarg}, \"{where}\"//c_null_char, ierr)", "    "))
    cargs = [subst.get(q.name, "ierr" if q.name == "ierror" else q.name) for q in params]
    cargs += [f"len({h}, c_size_t)" for h in hidden]
    out.extend(wrap_free(f"  if (ierr == 0) call raw({', '.join(cargs)})", "    "))
    for i, b in enumerate(bufs):
        if modes[i] & TS_KIND == TS_KEEP or modes[i] & TS_KEEPABLE:
            out.append(f"  if (ierr == 0 .and. c_associated(b{i}%tmp)) call halo_f08ts_attach(b{i}, {b.name}, "
                       f"request%MPI_VAL)")
    for i, b in reversed(list(enumerate(bufs))):
        out.append(f"  if (c_associated(b{i}%tmp) .or. b{i}%own_type /= 0) call halo_f08ts_end(b{i}, {b.name})")
    if "ierror" in byname:
        out.append("  if (present(ierror)) ierror = ierr")
    out.append(f"end subroutine {name}")
    out.append("")
    return out


def gen_f08ts(procs, bigs):
    big_names = {cname[:-2].lower() for cname, _, _ in bigs}
    cnames = {cname.lower(): cname for cname, _, _ in procs}
    out = [F08TS_TOP]
    for proc in sorted(std.PROCEDURES.values(), key=lambda p: p.name):
        try:
            f08 = proc.express.f08
        except Exception:
            f08 = None
        if f08 is None or proc.name == "mpi_sizeof" or not f08_choice(f08):
            continue
        cname = cnames[proc.name]
        lower = cname.lower()
        out.extend(f08ts_wrapper(cname, f08, f08.name + "_f08ts", lower, False))
        if proc.name in big_names:
            big = proc.express.embiggen.f08
            out.extend(f08ts_wrapper(cname, big, f08.name + "_c_f08ts", lower, True))
    return "\n".join(out).rstrip("\n") + "\n"


# Written by hand for mpi_f08 too (leading blanks of arguments kept).
F08_OWN = {"MPI_Comm_spawn", "MPI_Comm_spawn_multiple"}


def gen_alias_header(procs):
    """The mpi_f08 names of the hand-written wrappers (fortran.c includes
    this at its end)."""
    out = ["/* The mpi_f08 module's names (mpi_x_f08_, pmpi_x_f08_) of the wrappers",
           " * of fortran.c, which includes this at its end.",
           " *",
           " * Generated by tools/gen/gen_fortran.py. Do not edit: change the generator. */"]
    for cname, cf, fparams in procs:
        if cname not in HAND or cname in F08_OWN:
            continue
        proc = std.PROCEDURES[cname.lower()]
        try:
            has = proc.express.f08 is not None
        except Exception:
            has = False
        if not has:
            continue
        lower = cname.lower()
        for pre in ("p", ""):
            out.append(f"extern __typeof__(p{lower}_) {pre}{lower}_f08_ HALO_F_EXPORT "
                       f"__attribute__((weak, alias(\"p{lower}_\")));")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if committed output is stale")
    args = ap.parse_args()
    procs = fortran_procs()
    consts = gb.read_constants()
    stale = []
    gb.write_or_check("include/mpif.h", gen_mpif(consts), args.check, stale)
    gb.write_or_check("src/fortran/mpi_mod.F90", gen_module(consts), args.check, stale)
    bigs = big_procs()
    gb.write_or_check("src/fortran/fortran_gen.c", gen_c(procs, bigs), args.check, stale)
    gb.write_or_check("src/fortran/mpi_f08.f90", gen_f08(consts, procs, bigs), args.check, stale)
    gb.write_or_check("src/fortran/fortran_alias_gen.h", gen_alias_header(procs), args.check, stale)
    gb.write_or_check("src/fortran/mpi_f08ts.f90", gen_f08ts(procs, bigs), args.check, stale)
    if stale:
        print("generated files are stale (run tools/gen/gen_fortran.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
