! The Fortran 2008 interface (use mpi_f08), every result checked in data:
! calls without IERROR, handles as derived types compared with == and /=,
! TYPE(MPI_Status) components, large-count forms chosen by the kind of the
! count (INTEGER(KIND=MPI_COUNT_KIND)), nonblocking calls and Waitall,
! collectives with MPI_IN_PLACE, a user operation taking TYPE(C_PTR) by
! value, a keyval whose Fortran copy callback runs on MPI_Comm_dup,
! MPI_Alloc_mem into a TYPE(C_PTR), names, info, MPI_Sizeof and a
! session's process set names.
module f08_callbacks
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: ncopy = 0
contains
  subroutine sum_squares(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    if (datatype /= MPI_INTEGER) stop 5
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len
      b(i) = b(i) + a(i)
    end do
  end subroutine sum_squares

  subroutine copy_plus(oldcomm, keyval, extra, vin, vout, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, vin, vout
    logical :: flag
    if (oldcomm == MPI_COMM_NULL .or. keyval < 0) stop 6
    ncopy = ncopy + 1
    vout = vin + extra
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine copy_plus
end module f08_callbacks

program f08basic
  use mpi_f08
  use f08_callbacks
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: rank, nproc, next, prev, i, ierr, v, w, rlen, kv, sz
  integer :: buf(4), got(4)
  integer(kind=MPI_COUNT_KIND) :: n8, cnt8
  integer(kind=MPI_ADDRESS_KIND) :: aval, extra, bytes
  type(MPI_Comm) :: dup, half
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: st, sts(2)
  type(MPI_Op) :: op
  type(MPI_Info) :: info
  type(MPI_Session) :: session
  type(c_ptr) :: mem
  integer, pointer :: arr(:)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=32) :: val
  logical :: flag
  real(8) :: d

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  next = mod(rank + 1, nproc)
  prev = mod(rank + nproc - 1, nproc)

  ! Handles compare by value.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call chk(dup /= MPI_COMM_WORLD .and. .not. (dup == MPI_COMM_NULL), 'handle comparison')

  ! Nonblocking ring; statuses are derived types.
  buf = [(100 * rank + i, i = 1, 4)]
  call MPI_Irecv(got, 4, MPI_INTEGER, prev, 1, dup, reqs(1))
  call MPI_Isend(buf, 4, MPI_INTEGER, next, 1, dup, reqs(2))
  call MPI_Waitall(2, reqs, sts)
  call chk(all(reqs == MPI_REQUEST_NULL), 'requests freed')
  call chk(sts(1)%MPI_SOURCE == prev .and. sts(1)%MPI_TAG == 1, 'status components')
  call chk(all(got == [(100 * prev + i, i = 1, 4)]), 'ring data')

  ! Large-count forms, picked by the kind of the count.
  n8 = 4
  call MPI_Sendrecv(buf, n8, MPI_INTEGER, next, 2, got, n8, MPI_INTEGER, prev, 2, dup, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt8)
  call chk(cnt8 == 4, 'large-count MPI_Get_count')
  call MPI_Get_count(st, MPI_INTEGER, i)
  call chk(i == 4, 'MPI_Get_count')
  call chk(got(4) == 100 * prev + 4, 'large-count sendrecv')

  ! Collectives.
  v = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  call chk(ierr == MPI_SUCCESS .and. v == nproc * (nproc + 1) / 2, 'allreduce in place')
  d = 0.5d0
  call MPI_Bcast(d, 1, MPI_DOUBLE_PRECISION, 0, dup)
  call chk(abs(d - 0.5d0) < 1d-15, 'bcast')
  call MPI_Comm_split(dup, mod(rank, 2), rank, half)
  call MPI_Comm_size(half, i)
  call chk(i == (nproc + 1 - mod(rank, 2)) / 2, 'split')
  call MPI_Comm_free(half)
  call chk(half == MPI_COMM_NULL, 'freed handle is null')

  ! A user operation (TYPE(C_PTR) arguments by value).
  call MPI_Op_create(sum_squares, .true., op)
  v = rank * rank
  call MPI_Allreduce(v, w, 1, MPI_INTEGER, op, dup)
  call chk(w == (nproc - 1) * nproc * (2 * nproc - 1) / 6, 'user operation')
  call MPI_Op_free(op)

  ! Attributes with a Fortran copy callback.
  extra = 10
  call MPI_Comm_create_keyval(copy_plus, MPI_COMM_NULL_DELETE_FN, kv, extra)
  aval = 5
  call MPI_Comm_set_attr(dup, kv, aval)
  call MPI_Comm_dup(dup, half)
  call MPI_Comm_get_attr(half, kv, aval, flag)
  call chk(flag .and. aval == 15 .and. ncopy == 1, 'copy callback')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag)
  call chk(flag .and. aval >= 32767, 'MPI_TAG_UB')
  call MPI_Comm_free(half)
  call MPI_Comm_delete_attr(dup, kv)
  call MPI_Comm_free_keyval(kv)

  ! Memory from MPI into a Fortran pointer.
  bytes = 64
  call MPI_Alloc_mem(bytes, MPI_INFO_NULL, mem)
  call c_f_pointer(mem, arr, [16])
  arr = rank
  call MPI_Sendrecv(arr, 4, MPI_INTEGER, next, 3, got, 4, MPI_INTEGER, prev, 3, dup, &
                    MPI_STATUS_IGNORE, ierr)
  call chk(ierr == MPI_SUCCESS .and. all(got == prev), 'send from MPI_Alloc_mem memory')
  call MPI_Free_mem(arr)

  ! Names, info, sizes.
  call MPI_Comm_set_name(dup, 'f08 dup')
  call MPI_Comm_get_name(dup, name, rlen)
  call chk(name == 'f08 dup' .and. rlen == 7, 'names')
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'k', 'v1')
  call MPI_Info_get_string(info, 'k', rlen, val, flag)
  call chk(flag .and. rlen == 2, 'info length')
  rlen = 32
  call MPI_Info_get_string(info, 'k', rlen, val, flag)
  call chk(val == 'v1', 'info value')
  call MPI_Info_free(info)
  call MPI_Sizeof(d, sz)
  call chk(sz == 8, 'MPI_Sizeof')

  ! Process sets of a session: lengths count characters.
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session)
  call MPI_Session_get_num_psets(session, MPI_INFO_NULL, i)
  call chk(i >= 2, 'number of process sets')
  rlen = 0
  call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, rlen, val)
  call chk(rlen == len('mpi://WORLD'), 'pset name length')
  rlen = 32
  call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, 0, rlen, val)
  call chk(val == 'mpi://WORLD', 'pset name')
  call MPI_Session_finalize(session)

  call MPI_Comm_free(dup)
  call MPI_Finalize()
  if (rank == 0) print '(a)', 'f08_basic: ok'

contains

  subroutine chk(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(a,i0,a,a)', 'FAIL rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 3)
    end if
  end subroutine chk
end program f08basic
