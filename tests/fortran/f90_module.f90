! The Fortran interface through the `mpi` module, in free source form, every
! result checked in data: topologies (LOGICAL arrays), MPI_COMM_SPLIT,
! MPI_ALLTOALLW (datatype arrays without a length argument), a struct type
! of absolute addresses sent from MPI_BOTTOM, MPI_WAITSOME and MPI_TESTANY
! (indices counted from 1), MPI_TYPE_GET_CONTENTS, group ranges, a
! generalized request with Fortran callbacks, a window (MPI_WIN_BASE and
! MPI_WIN_SIZE read as values), a file at explicit offsets, and
! MPI_COMM_SPAWN of this program with arguments (the children check them).
module f90_state
  implicit none
  integer :: nquery = 0, nfree = 0
end module f90_state

program f90module
  use mpi
  implicit none
  integer :: ierr, rank, nproc, i, j, parent
  integer :: status(MPI_STATUS_SIZE)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  call MPI_COMM_GET_PARENT(parent, ierr)
  if (parent /= MPI_COMM_NULL) then
    call child(parent)
    call MPI_FINALIZE(ierr)
    stop
  end if

  call topologies()
  call split_and_groups()
  call alltoallw_ring()
  call struct_from_bottom()
  call some_and_any()
  call contents()
  call grequest()
  call window()
  call file_io()
  call spawn()

  call MPI_FINALIZE(ierr)
  if (rank == 0) print '(a)', 'f90_module: ok'

contains

  subroutine chk(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. cond) then
      print '(a,i0,a,a)', 'FAIL rank ', rank, ': ', what
      call MPI_ABORT(MPI_COMM_WORLD, 3, e)
      stop 3
    end if
  end subroutine chk

  subroutine topologies()
    integer :: cart, dims(2), coords(2), src, dst, ndims, r
    logical :: periods(2), remain(2), gper(2)
    integer :: sub, subsize
    dims = 0
    call MPI_DIMS_CREATE(nproc, 2, dims, ierr)
    call chk(dims(1) * dims(2) == nproc, 'dims_create')
    periods = (/ .true., .false. /)
    call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
    call MPI_CARTDIM_GET(cart, ndims, ierr)
    call chk(ndims == 2, 'cartdim')
    call MPI_CART_GET(cart, 2, dims, gper, coords, ierr)
    call chk(gper(1) .and. .not. gper(2), 'cart_get periods')
    call MPI_CART_RANK(cart, coords, r, ierr)
    call chk(r == rank, 'cart_rank of own coordinates')
    call MPI_CART_SHIFT(cart, 0, 1, src, dst, ierr)
    call chk(dst == mod(coords(1) + 1, dims(1)) * dims(2) + coords(2), 'cart_shift periodic')
    call MPI_CART_SHIFT(cart, 1, 1, src, dst, ierr)
    if (coords(2) == dims(2) - 1) call chk(dst == MPI_PROC_NULL, 'cart_shift edge')
    remain = (/ .false., .true. /)
    call MPI_CART_SUB(cart, remain, sub, ierr)
    call MPI_COMM_SIZE(sub, subsize, ierr)
    call chk(subsize == dims(2), 'cart_sub size')
    call MPI_COMM_FREE(sub, ierr)
    call MPI_COMM_FREE(cart, ierr)
  end subroutine topologies

  subroutine split_and_groups()
    integer :: half, hsize, hrank, wgroup, g, gsize, ranges(3, 1), sum
    call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
    call MPI_COMM_SIZE(half, hsize, ierr)
    call MPI_COMM_RANK(half, hrank, ierr)
    call chk(hsize == (nproc + 1 - mod(rank, 2)) / 2, 'split size')
    call chk(hrank == hsize - 1 - rank / 2, 'split order by key')
    call MPI_ALLREDUCE(rank, sum, 1, MPI_INTEGER, MPI_SUM, half, ierr)
    call MPI_COMM_FREE(half, ierr)
    call MPI_COMM_GROUP(MPI_COMM_WORLD, wgroup, ierr)
    ranges(:, 1) = (/ 0, nproc - 1, 2 /)
    call MPI_GROUP_RANGE_INCL(wgroup, 1, ranges, g, ierr)
    call MPI_GROUP_SIZE(g, gsize, ierr)
    call chk(gsize == (nproc + 1) / 2, 'group_range_incl')
    call MPI_GROUP_FREE(g, ierr)
    call MPI_GROUP_FREE(wgroup, ierr)
  end subroutine split_and_groups

  subroutine alltoallw_ring()
    integer, allocatable :: sbuf(:), rbuf(:), cnt(:), displs(:), types(:)
    allocate(sbuf(nproc), rbuf(nproc), cnt(nproc), displs(nproc), types(nproc))
    do i = 1, nproc
      sbuf(i) = 1000 * rank + i - 1
      cnt(i) = 1
      displs(i) = 4 * (i - 1)
      types(i) = MPI_INTEGER
    end do
    rbuf = -1
    call MPI_ALLTOALLW(sbuf, cnt, displs, types, rbuf, cnt, displs, types, MPI_COMM_WORLD, ierr)
    do i = 1, nproc
      call chk(rbuf(i) == 1000 * (i - 1) + rank, 'alltoallw')
    end do
    deallocate(sbuf, rbuf, cnt, displs, types)
  end subroutine alltoallw_ring

  subroutine struct_from_bottom()
    integer :: ival, rval, stype, rtype, blens(2), types(2), next, prev
    double precision :: dval, dr
    integer(kind=MPI_ADDRESS_KIND) :: disps(2)
    next = mod(rank + 1, nproc)
    prev = mod(rank + nproc - 1, nproc)
    ival = rank
    dval = rank + 0.25d0
    blens = 1
    types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
    call MPI_GET_ADDRESS(ival, disps(1), ierr)
    call MPI_GET_ADDRESS(dval, disps(2), ierr)
    call MPI_TYPE_CREATE_STRUCT(2, blens, disps, types, stype, ierr)
    call MPI_TYPE_COMMIT(stype, ierr)
    call MPI_GET_ADDRESS(rval, disps(1), ierr)
    call MPI_GET_ADDRESS(dr, disps(2), ierr)
    call MPI_TYPE_CREATE_STRUCT(2, blens, disps, types, rtype, ierr)
    call MPI_TYPE_COMMIT(rtype, ierr)
    call MPI_SENDRECV(MPI_BOTTOM, 1, stype, next, 11, MPI_BOTTOM, 1, rtype, prev, 11, &
                      MPI_COMM_WORLD, status, ierr)
    call chk(rval == prev .and. abs(dr - (prev + 0.25d0)) < 1d-12, 'struct from and to MPI_BOTTOM')
    call MPI_GET_ELEMENTS(status, rtype, i, ierr)
    call chk(i == 2, 'get_elements of the struct')
    call MPI_TYPE_FREE(stype, ierr)
    call MPI_TYPE_FREE(rtype, ierr)
  end subroutine struct_from_bottom

  subroutine some_and_any()
    integer :: reqs(3), outcount, idx(3), stats(MPI_STATUS_SIZE, 3), vals(3), one
    logical :: flag
    one = rank
    do i = 1, 3
      call MPI_IRECV(vals(i), 1, MPI_INTEGER, rank, 20 + i, MPI_COMM_WORLD, reqs(i), ierr)
    end do
    call MPI_SEND(one, 1, MPI_INTEGER, rank, 22, MPI_COMM_WORLD, ierr)
    call MPI_WAITSOME(3, reqs, outcount, idx, stats, ierr)
    call chk(outcount == 1 .and. idx(1) == 2, 'waitsome index counts from 1')
    call chk(stats(MPI_TAG, 1) == 22, 'waitsome status')
    call MPI_SEND(one, 1, MPI_INTEGER, rank, 23, MPI_COMM_WORLD, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_TESTANY(3, reqs, j, flag, status, ierr)
    end do
    call chk(j == 3 .and. status(MPI_TAG) == 23, 'testany index counts from 1')
    call MPI_CANCEL(reqs(1), ierr)
    call MPI_WAIT(reqs(1), status, ierr)
    call MPI_TEST_CANCELLED(status, flag, ierr)
    call chk(flag, 'cancelled receive')
  end subroutine some_and_any

  subroutine contents()
    integer :: vtype, ni, na, nd, comb, ints(3), dts(1)
    integer(kind=MPI_ADDRESS_KIND) :: addrs(1)
    call MPI_TYPE_VECTOR(5, 2, 7, MPI_REAL, vtype, ierr)
    call MPI_TYPE_GET_ENVELOPE(vtype, ni, na, nd, comb, ierr)
    call chk(comb == MPI_COMBINER_VECTOR .and. ni == 3 .and. na == 0 .and. nd == 1, 'envelope')
    call MPI_TYPE_GET_CONTENTS(vtype, 3, 0, 1, ints, addrs, dts, ierr)
    call chk(ints(1) == 5 .and. ints(2) == 2 .and. ints(3) == 7, 'contents integers')
    call chk(dts(1) == MPI_REAL, 'contents datatype')
    call MPI_TYPE_FREE(vtype, ierr)
  end subroutine contents

  subroutine grequest()
    use f90_state
    integer :: req, st(MPI_STATUS_SIZE)
    external :: gquery, gfree, gcancel
    integer(kind=MPI_ADDRESS_KIND) :: extra
    extra = 99
    call MPI_GREQUEST_START(gquery, gfree, gcancel, extra, req, ierr)
    call MPI_GREQUEST_COMPLETE(req, ierr)
    call MPI_WAIT(req, st, ierr)
    call chk(nquery == 1 .and. nfree == 1, 'grequest callbacks ran')
    call chk(st(MPI_TAG) == 99, 'grequest status from the query callback')
    call chk(extra == 100, 'the callbacks got the program''s EXTRA_STATE variable')
  end subroutine grequest

  subroutine window()
    integer :: win, buf(4), v
    integer(kind=MPI_ADDRESS_KIND) :: wsize, base, addr, val
    logical :: found
    buf = -1
    wsize = 16
    call MPI_WIN_CREATE(buf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    call MPI_WIN_GET_ATTR(win, MPI_WIN_SIZE, val, found, ierr)
    call chk(found .and. val == 16, 'MPI_WIN_SIZE')
    call MPI_WIN_GET_ATTR(win, MPI_WIN_BASE, base, found, ierr)
    call MPI_GET_ADDRESS(buf, addr, ierr)
    call chk(found .and. base == addr, 'MPI_WIN_BASE')
    call MPI_WIN_GET_ATTR(win, MPI_WIN_DISP_UNIT, val, found, ierr)
    call chk(found .and. val == 4, 'MPI_WIN_DISP_UNIT')
    call MPI_WIN_FENCE(0, win, ierr)
    v = 500 + rank
    wsize = 2
    call MPI_PUT(v, 1, MPI_INTEGER, mod(rank + 1, nproc), wsize, 1, MPI_INTEGER, win, ierr)
    call MPI_WIN_FENCE(0, win, ierr)
    call chk(buf(3) == 500 + mod(rank + nproc - 1, nproc), 'put through the window')
    call MPI_WIN_FREE(win, ierr)
  end subroutine window

  subroutine file_io()
    integer :: fh, vals(2), back(2)
    integer(kind=MPI_OFFSET_KIND) :: off, fsize
    character(len=64) :: fname
    write (fname, '(a,i0)') '/tmp/halo-f90-io-', getpid_f()
    call MPI_BCAST(fname, 64, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
    call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR + &
                       MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh, ierr)
    call chk(ierr == MPI_SUCCESS, 'file_open')
    vals = (/ rank, -rank /)
    off = 8 * rank
    call MPI_FILE_WRITE_AT_ALL(fh, off, vals, 2, MPI_INTEGER, status, ierr)
    call MPI_FILE_SYNC(fh, ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call MPI_FILE_GET_SIZE(fh, fsize, ierr)
    call chk(fsize == 8 * nproc, 'file size')
    off = 8 * mod(rank + 1, nproc)
    call MPI_FILE_READ_AT(fh, off, back, 2, MPI_INTEGER, status, ierr)
    call chk(back(1) == mod(rank + 1, nproc) .and. back(2) == -back(1), 'read_at')
    call MPI_FILE_CLOSE(fh, ierr)
    call chk(fh == MPI_FILE_NULL, 'file closed')
  end subroutine file_io

  integer function getpid_f()
    integer :: v(8)
    call date_and_time(values=v)
    getpid_f = getpid() * 1000 + v(8)   ! getpid: a GNU extension
  end function getpid_f

  subroutine spawn()
    integer :: inter, errcodes(2), rsize, got, merged, msize
    character(len=256) :: exe
    character(len=16) :: args(3)
    call get_command_argument(0, exe)
    args(1) = 'child'
    args(2) = 'two words'
    args(3) = ' '
    call MPI_COMM_SPAWN(exe, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
    call chk(ierr == MPI_SUCCESS, 'spawn')
    call chk(all(errcodes == MPI_SUCCESS), 'spawn errcodes')
    call MPI_COMM_REMOTE_SIZE(inter, rsize, ierr)
    call chk(rsize == 2, 'spawned two')
    if (rank == 0) then
      do i = 0, 1
        call MPI_RECV(got, 1, MPI_INTEGER, i, 30, inter, status, ierr)
        call chk(got == 100 + i, 'message from a child')
      end do
    end if
    call MPI_INTERCOMM_MERGE(inter, .false., merged, ierr)
    call MPI_COMM_SIZE(merged, msize, ierr)
    call chk(msize == nproc + 2, 'merged size')
    call MPI_COMM_FREE(merged, ierr)
    call MPI_COMM_DISCONNECT(inter, ierr)
  end subroutine spawn

  subroutine child(parent)
    integer, intent(in) :: parent
    integer :: n, v, merged, p
    character(len=32) :: a1, a2
    p = parent
    n = command_argument_count()
    call get_command_argument(1, a1)
    call get_command_argument(2, a2)
    call chk(n == 2 .and. a1 == 'child' .and. a2 == 'two words', 'child arguments')
    v = 100 + rank
    call MPI_SEND(v, 1, MPI_INTEGER, 0, 30, p, ierr)
    call MPI_INTERCOMM_MERGE(p, .true., merged, ierr)
    call MPI_COMM_FREE(merged, ierr)
    call MPI_COMM_DISCONNECT(p, ierr)
  end subroutine child

end program f90module

! Generalized request callbacks (external procedures).
subroutine gquery(extra, st, e)
  use mpi
  use f90_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: st(MPI_STATUS_SIZE), e
  nquery = nquery + 1
  call MPI_STATUS_SET_ELEMENTS(st, MPI_INTEGER, 0, e)
  call MPI_STATUS_SET_CANCELLED(st, .false., e)
  st(MPI_SOURCE) = MPI_UNDEFINED
  st(MPI_TAG) = int(extra)
  e = MPI_SUCCESS
end subroutine gquery

subroutine gfree(extra, e)
  use mpi
  use f90_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: e
  if (extra == 99) nfree = nfree + 1
  extra = extra + 1
  e = MPI_SUCCESS
end subroutine gfree

subroutine gcancel(extra, complete, e)
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: e
  e = MPI_SUCCESS
  if (complete .and. extra /= 99) e = MPI_ERR_OTHER
end subroutine gcancel
