! Array sections as choice buffers of mpi_f08 (MPI_SUBARRAYS_SUPPORTED):
! strided, reversed and two-dimensional sections through blocking calls
! (the library copies them), nonblocking and persistent point-to-point,
! Ibcast, Iallgather's send buffer and one-sided calls (a datatype picks the elements in place), a
! count smaller than the section, MPI_BYTE and MPI_CHARACTER over elements
! of several bytes, the large-count form, nonblocking and persistent
! collectives and partitioned communication (copies kept with the
! request), a datatype no section datatype fits, the errors for what is refused,
! and a tool's MPI_Send_f08ts in front of the library's. Every received
! element and every element that must stay untouched is checked.
module f08_subarray_tool
  implicit none
  integer :: nsend = 0
end module f08_subarray_tool

! A profiling tool's wrapper: the generic MPI_Send reaches it.
subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
  use :: mpi_f08, my_noname => MPI_Send_f08ts
  use :: f08_subarray_tool
  implicit none
  type(*), dimension(..), intent(in) :: buf
  integer, intent(in) :: count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  nsend = nsend + 1
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine MPI_Send_f08ts

program f08_subarray
  use mpi_f08
  use f08_subarray_tool
  implicit none
  integer :: rank, nproc, i, j, n, ierr, errs
  ! Buffers of nonblocking calls are ASYNCHRONOUS (MPI 5.0 19.1.17).
  integer, asynchronous :: a(6, 5), b(6, 5), one(8), row(5)
  integer :: expect(6, 5)
  integer, asynchronous :: sum_in(3, 4), sum_out(3, 4)
  integer(kind=MPI_COUNT_KIND) :: n8
  integer(kind=MPI_ADDRESS_KIND) :: wsize
  character(len=3), asynchronous :: s(6), t(6)
  type(MPI_Status) :: st
  type(MPI_Request) :: req, reqs(2)
  type(MPI_Win) :: win
  type(MPI_Datatype) :: t3
  integer :: wbuf(10)
  integer, allocatable, asynchronous :: gath(:, :)

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  if (.not. MPI_SUBARRAYS_SUPPORTED) call fail("MPI_SUBARRAYS_SUPPORTED is .false.")
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  allocate(gath(3, nproc))

  if (rank < 2 .and. nproc >= 2) then
    ! 1. Blocking: a row (stride 6) to a reversed column section.
    call fill(a)
    b = -1
    if (rank == 0) then
      call MPI_Send(a(2, :), 5, MPI_INTEGER, 1, 1, MPI_COMM_WORLD)
    else
      call MPI_Recv(b(5:1:-1, 3), 5, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, st)
      expect = -1
      expect(5:1:-1, 3) = a(2, :)
      call check2("blocking row to reversed column", b, expect)
      call MPI_Get_count(st, MPI_INTEGER, n)
      if (n /= 5) call fail("blocking: MPI_Get_count")
    end if
    if (rank == 0 .and. nsend /= 1) call fail("the tool's MPI_Send_f08ts did not run")

    ! 2. Nonblocking, two-dimensional sections, a count short of the
    !    section (7 of 9 elements), both ways at once.
    call fill(a)
    b = -1
    call MPI_Irecv(b(1:5:2, 2:4), 7, MPI_INTEGER, 1 - rank, 2, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(a(2:6:2, 1:5:2), 7, MPI_INTEGER, 1 - rank, 2, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    expect = -1
    n = 0
    do j = 1, 3
      do i = 1, 3
        n = n + 1
        if (n <= 7) expect(2 * i - 1, j + 1) = a(2 * i, 2 * j - 1)
      end do
    end do
    call check2("nonblocking 2-d sections, 7 of 9", b, expect)

    ! 3. MPI_BYTE over integer sections (14 bytes: three elements and a
    !    half), and the large-count form.
    one = 0
    row = [(100 * rank + i, i = 1, 5)]
    call MPI_Isend(row(5:1:-1), 14, MPI_BYTE, 1 - rank, 3, MPI_COMM_WORLD, req)
    call MPI_Recv(one(1:8:2), 16, MPI_BYTE, 1 - rank, 3, MPI_COMM_WORLD, st)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (any(one([1, 3, 5, 7]) /= [(100 * (1 - rank) + 6 - i, i = 1, 4)])) &
      call fail("MPI_BYTE over a reversed section")
    if (any(one([2, 4, 6, 8]) /= 0)) call fail("MPI_BYTE: elements between touched")
    call MPI_Get_count(st, MPI_BYTE, n)
    if (n /= 14) call fail("MPI_BYTE: received count")
    n8 = 3
    b = -1
    call MPI_Isend(a(1, 1:5:2), n8, MPI_INTEGER, 1 - rank, 4, MPI_COMM_WORLD, req)
    call MPI_Recv(b(6, 5:1:-2), n8, MPI_INTEGER, 1 - rank, 4, MPI_COMM_WORLD, st)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    expect = -1
    expect(6, 5:1:-2) = a(1, 1:5:2)
    call check2("large-count Isend of a section", b, expect)

    ! 4. MPI_CHARACTER: three characters an element, every other one.
    s = ["abc", "def", "ghi", "jkl", "mno", "pqr"]
    t = "..."
    call MPI_Isend(s(1:6:2), 9, MPI_CHARACTER, 1 - rank, 5, MPI_COMM_WORLD, req)
    call MPI_Recv(t(6:2:-2), 9, MPI_CHARACTER, 1 - rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    if (any(t /= ["...", "mno", "...", "ghi", "...", "abc"])) call fail("MPI_CHARACTER sections")

    ! 5. Persistent: the section is read at each start, in place.
    if (rank == 0) then
      call MPI_Send_init(a(3, :), 5, MPI_INTEGER, 1, 6, MPI_COMM_WORLD, req)
    else
      call MPI_Recv_init(b(:, 2), 5, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, req)
    end if
    do j = 1, 2
      call fill(a)
      a(3, :) = a(3, :) + 1000 * j
      b = -1
      call MPI_Start(req)
      call MPI_Wait(req, MPI_STATUS_IGNORE)
      if (rank == 1) then
        expect = -1
        expect(1:5, 2) = a(3, :)
        call check2("persistent start", b, expect)
      end if
    end do
    call MPI_Request_free(req)
    ! A datatype that no section datatype can be built from (three
    ! elements a piece over a strided section): the requests keep copies.
    call MPI_Type_contiguous(3, MPI_INTEGER, t3)
    call MPI_Type_commit(t3)
    call fill(a)
    b = -1
    call MPI_Irecv(b(2, :), 1, t3, 1 - rank, 8, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(a(1, :), 1, t3, 1 - rank, 8, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    expect = -1
    expect(2, 1:3) = a(1, 1:3)
    call check2("Isend/Irecv of 3-element pieces over strided sections", b, expect)
    ! Where no request could keep a copy (a one-sided call): refused.
    call MPI_Win_create(wbuf, 40_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_SELF, win)
    call MPI_Win_fence(0, win)
    call MPI_Put(a(1, :), 1, t3, 0, 0_MPI_ADDRESS_KIND, 3, MPI_INTEGER, win, ierr)
    call MPI_Error_class(ierr, n)
    if (n /= MPI_ERR_UNSUPPORTED_OPERATION) call fail("Put of 3-element pieces over a strided section")
    call MPI_Win_fence(0, win)
    call MPI_Win_free(win)
    call MPI_Type_free(t3)
  end if

  ! 6. Collectives: blocking ones on sections (copied), Ibcast in place,
  !    Iallgather from a section in place, nonblocking and persistent
!    reductions and Igather through copies kept with the request, and
!    partitioned communication on sections.
  do j = 1, 4
    do i = 1, 3
      sum_in(i, j) = rank * 100 + 10 * i + j
    end do
  end do
  sum_out = -1
  call MPI_Allreduce(sum_in(2, :), sum_out(3, 4:1:-1), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  do j = 1, 4
    if (sum_out(3, 5 - j) /= 100 * nproc * (nproc - 1) / 2 + nproc * (20 + j)) &
      call fail("Allreduce of sections")
  end do
  if (any(sum_out(1:2, :) /= -1)) call fail("Allreduce: elements outside the section touched")
  call fill(a)
  if (rank /= 0) a = 0
  call MPI_Ibcast(a(1:6:3, 2:5), 8, MPI_INTEGER, 0, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  call fill(expect)
  if (rank /= 0) then
    b = 0
    b(1:6:3, 2:5) = expect(1:6:3, 2:5)
    call check2("Ibcast of a section", a, b)
  end if
  sum_out = -1
  call MPI_Iallreduce(sum_in(1, :), sum_out(2, 4:1:-1), 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (any(sum_out(2, 4:1:-1) /= [(100 * nproc * (nproc - 1) / 2 + nproc * (10 + j), j = 1, 4)])) &
    call fail("Iallreduce of non-contiguous sections")
  if (any(sum_out([1, 3], :) /= -1)) call fail("Iallreduce: elements outside the section touched")
  ! Persistent: the section is read at each start, written at each
  ! completion.
  sum_out = -1
  call MPI_Allreduce_init(sum_in(3, :), sum_out(1, :), 4, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, &
                          MPI_INFO_NULL, req)
  do i = 1, 2
    sum_in(3, :) = sum_in(3, :) + 1000 * i * (rank + 1)
    call MPI_Start(req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    do j = 1, 4
      if (sum_out(1, j) /= 100 * (nproc - 1) + 30 + j + 1000 * nproc * (i * (i + 1) / 2)) &
        call fail("Allreduce_init of sections")
    end do
    if (any(sum_out(2:3, :) /= -1)) call fail("Allreduce_init: elements outside the section touched")
  end do
  call MPI_Request_free(req)
  sum_in(3, :) = [(rank * 100 + 30 + j, j = 1, 4)]
  gath = -1
  call MPI_Igather(rank, 1, MPI_INTEGER, gath(2, nproc:1:-1), 1, MPI_INTEGER, 0, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (rank == 0) then
    if (any(gath(2, nproc:1:-1) /= [(j, j = 0, nproc - 1)])) call fail("Igather into a reversed section")
    if (any(gath([1, 3], :) /= -1)) call fail("Igather: elements outside the section touched")
  end if
  ! Partitioned: the send's copy is taken when the last partition is
  ! ready, the receive's written back at completion.
  n8 = 2
  one = -1
  row = 0
  call MPI_Psend_init(row(4:1:-1), 2, n8, MPI_INTEGER, mod(rank + 1, nproc), 7, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, reqs(1))
  call MPI_Precv_init(one(1:8:2), 2, n8, MPI_INTEGER, mod(rank + nproc - 1, nproc), 7, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, reqs(2))
  call MPI_Startall(2, reqs)
  row(3:4) = [100 * rank + 1, 100 * rank + 2]   ! partition 0 of row(4:1:-1) is row(4), row(3)
  call MPI_Pready(0, reqs(1))
  row(1:2) = [100 * rank + 3, 100 * rank + 4]
  call MPI_Pready(1, reqs(1))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  i = mod(rank + nproc - 1, nproc)
  if (any(one([1, 3, 5, 7]) /= [100 * i + 2, 100 * i + 1, 100 * i + 4, 100 * i + 3])) &
    call fail("partitioned send and receive of sections")
  if (any(one([2, 4, 6, 8]) /= -1)) call fail("partitioned: elements outside the section touched")
  call MPI_Request_free(reqs(1))
  call MPI_Request_free(reqs(2))
  call MPI_Iallreduce(sum_in(:, 2), sum_out(:, 3), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (any(sum_out(:, 3) /= [(100 * nproc * (nproc - 1) / 2 + nproc * (10 * i + 2), i = 1, 3)])) &
    call fail("Iallreduce of contiguous sections")

  gath = -1
  call MPI_Iallgather(sum_in(3:1:-1, 4), 3, MPI_INTEGER, gath, 3, MPI_INTEGER, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  do j = 1, nproc
    if (any(gath(:, j) /= [((j - 1) * 100 + 10 * (4 - i) + 4, i = 1, 3)])) &
      call fail("Iallgather from a reversed section")
  end do

  ! 7. One-sided: Put from a reversed section, Get into a strided one.
  wbuf = 0
  wsize = 40
  call MPI_Win_create(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  row = [(10 * rank + i, i = 1, 5)]
  call MPI_Win_fence(0, win)
  wsize = 0
  call MPI_Put(row(5:1:-2), 3, MPI_INTEGER, mod(rank + 1, nproc), wsize, 3, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  i = mod(rank + nproc - 1, nproc)
  if (any(wbuf(1:3) /= [10 * i + 5, 10 * i + 3, 10 * i + 1])) call fail("Put from a section")
  one = -1
  call MPI_Get(one(2:8:3), 3, MPI_INTEGER, mod(rank + 1, nproc), wsize, 3, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  if (any(one([2, 5, 8]) /= [10 * rank + 5, 10 * rank + 3, 10 * rank + 1])) call fail("Get into a section")
  if (any(one([1, 3, 4, 6, 7]) /= -1)) call fail("Get: elements outside the section touched")
  call MPI_Win_free(win)

  ! 8. Memory the library keeps must be contiguous.
  call MPI_Buffer_attach(one(1:8:2), 16, ierr)
  call MPI_Error_class(ierr, n)
  if (n /= MPI_ERR_BUFFER) call fail("Buffer_attach of a strided section not refused")

  call MPI_Reduce(errs, n, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0 .and. n == 0) print '(a)', 'f08_subarray: ok'
  deallocate(gath)
  call MPI_Finalize()

contains
  subroutine fill(x)
    integer, intent(out) :: x(6, 5)
    integer :: p, q
    do q = 1, 5
      do p = 1, 6
        x(p, q) = 10 * p + q
      end do
    end do
  end subroutine fill

  subroutine check2(what, got, want)
    character(len=*), intent(in) :: what
    integer, intent(in) :: got(6, 5), want(6, 5)
    if (any(got /= want)) then
      print '(a, i0, 3a)', 'rank ', rank, ': ', what, ': wrong data'
      print '(6i6)', got
      errs = errs + 1
    end if
  end subroutine check2

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a, i0, 2a)', 'rank ', rank, ': ', what
    errs = errs + 1
  end subroutine fail
end program f08_subarray
