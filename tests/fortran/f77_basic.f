! The Fortran interface through mpif.h, in fixed source form: every
! result checked in data. Point-to-point (statuses, MPI_STATUS_IGNORE,
! Waitall, Waitany's index counted from 1), collectives (MPI_IN_PLACE),
! a vector type, names and strings padded with blanks, attributes
! (MPI_TAG_UB, a keyval whose Fortran callbacks run on MPI_COMM_DUP and
! MPI_COMM_FREE), a user operation and an error handler written in
! Fortran, info values (blanks around keys and values dropped,
! MPI_INFO_GET_STRING's lengths), MPI_WTIME.
      program f77basic
      implicit none
      include 'mpif.h'
      integer ierr, rank, nproc, i, j, next, prev, idx, flag
      integer status(MPI_STATUS_SIZE), stats(MPI_STATUS_SIZE, 2)
      integer reqs(2), ibuf(8), jbuf(8), vtype, dup, kv, op, eh
      integer resultlen, info
      integer(kind=MPI_ADDRESS_KIND) lb, extent, aval, extra
      double precision dsum(2), t0, t1
      real a(4, 3), col(4)
      character*(MPI_MAX_OBJECT_NAME) cname
      character*(MPI_MAX_PROCESSOR_NAME) pname
      character*(MPI_MAX_ERROR_STRING) estr
      character*40 val
      logical found
      integer ncopy, ndel, nerr, lastcode, lastcomm
      common /f77cb/ ncopy, ndel, nerr, lastcode, lastcomm
      external addcopy, countdel, absmax, onerr

      ncopy = 0
      ndel = 0
      nerr = 0
      call MPI_INIT(ierr)
      call chk(ierr .eq. MPI_SUCCESS, 'MPI_INIT')
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
      next = mod(rank + 1, nproc)
      prev = mod(rank + nproc - 1, nproc)
      t0 = MPI_WTIME()

! A ring: blocking send and receive with a status, then without one.
      do i = 1, 8
         ibuf(i) = 100 * rank + i
      end do
      call MPI_SENDRECV(ibuf, 8, MPI_INTEGER, next, 5, jbuf, 8,
     &     MPI_INTEGER, prev, 5, MPI_COMM_WORLD, status, ierr)
      call chk(status(MPI_SOURCE) .eq. prev, 'status source')
      call chk(status(MPI_TAG) .eq. 5, 'status tag')
      call MPI_GET_COUNT(status, MPI_INTEGER, i, ierr)
      call chk(i .eq. 8, 'MPI_GET_COUNT')
      do i = 1, 8
         call chk(jbuf(i) .eq. 100 * prev + i, 'sendrecv data')
      end do
      call MPI_SENDRECV(ibuf, 8, MPI_INTEGER, next, 6, jbuf, 8,
     &     MPI_INTEGER, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE,
     &     ierr)
      call chk(jbuf(8) .eq. 100 * prev + 8, 'status ignored')

! Nonblocking: Waitall with statuses; Waitany's index counts from 1.
      call MPI_IRECV(jbuf, 8, MPI_INTEGER, prev, 7, MPI_COMM_WORLD,
     &     reqs(1), ierr)
      call MPI_ISEND(ibuf, 8, MPI_INTEGER, next, 7, MPI_COMM_WORLD,
     &     reqs(2), ierr)
      call MPI_WAITALL(2, reqs, stats, ierr)
      call chk(reqs(1) .eq. MPI_REQUEST_NULL, 'request freed')
      call chk(stats(MPI_SOURCE, 1) .eq. prev, 'waitall status')
      call chk(stats(MPI_TAG, 1) .eq. 7, 'waitall tag')
      call MPI_IRECV(jbuf, 8, MPI_INTEGER, prev, 8, MPI_COMM_WORLD,
     &     reqs(2), ierr)
      reqs(1) = MPI_REQUEST_NULL
      call MPI_SEND(ibuf, 8, MPI_INTEGER, next, 8, MPI_COMM_WORLD,
     &     ierr)
      call MPI_WAITANY(2, reqs, idx, status, ierr)
      call chk(idx .eq. 2, 'waitany index counts from 1')
      call MPI_WAITANY(2, reqs, idx, status, ierr)
      call chk(idx .eq. MPI_UNDEFINED, 'waitany of null requests')

! Collectives.
      dsum(1) = rank + 1
      dsum(2) = 0.5d0
      call MPI_ALLREDUCE(MPI_IN_PLACE, dsum, 2, MPI_DOUBLE_PRECISION,
     &     MPI_SUM, MPI_COMM_WORLD, ierr)
      call chk(dsum(1) .eq. nproc * (nproc + 1) / 2.0d0,
     &     'allreduce in place')
      call chk(dsum(2) .eq. 0.5d0 * nproc, 'allreduce second')
      if (rank .eq. 0) then
         ibuf(1) = 4242
      else
         ibuf(1) = 0
      end if
      call MPI_BCAST(ibuf, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      call chk(ibuf(1) .eq. 4242, 'bcast')
      call MPI_GATHER(rank, 1, MPI_INTEGER, jbuf, 1, MPI_INTEGER, 0,
     &     MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         do i = 1, min(nproc, 8)
            call chk(jbuf(i) .eq. i - 1, 'gather')
         end do
      end if

! A column of a REAL matrix (column-major) and a row through a vector
! type.
      do j = 1, 3
         do i = 1, 4
            a(i, j) = 10 * i + j + 1000 * rank
         end do
      end do
      call MPI_TYPE_VECTOR(3, 1, 4, MPI_REAL, vtype, ierr)
      call MPI_TYPE_COMMIT(vtype, ierr)
      call MPI_TYPE_GET_EXTENT(vtype, lb, extent, ierr)
      call chk(lb .eq. 0 .and. extent .eq. 9 * 4, 'vector extent')
      call MPI_SENDRECV(a(2, 1), 1, vtype, next, 9, col, 3, MPI_REAL,
     &     prev, 9, MPI_COMM_WORLD, status, ierr)
      do j = 1, 3
         call chk(col(j) .eq. 20 + j + 1000 * prev, 'vector row')
      end do
      call MPI_TYPE_FREE(vtype, ierr)
      call chk(vtype .eq. MPI_DATATYPE_NULL, 'type freed')

! Names and strings.
      call MPI_COMM_GET_NAME(MPI_COMM_WORLD, cname, resultlen, ierr)
      call chk(cname .eq. 'MPI_COMM_WORLD', 'world name')
      call chk(resultlen .eq. 14, 'world name length')
      call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
      call MPI_COMM_SET_NAME(dup, 'fortran dup   ', ierr)
      call MPI_COMM_GET_NAME(dup, cname, resultlen, ierr)
      call chk(cname .eq. 'fortran dup', 'name without trailing blanks')
      call chk(resultlen .eq. 11, 'set name length')
      call MPI_COMM_FREE(dup, ierr)
      call chk(dup .eq. MPI_COMM_NULL, 'comm freed')
      call MPI_GET_PROCESSOR_NAME(pname, resultlen, ierr)
      call chk(resultlen .gt. 0 .and. pname(resultlen+1:) .eq. ' ',
     &     'processor name padded')
      call MPI_ERROR_STRING(MPI_ERR_TAG, estr, resultlen, ierr)
      call chk(resultlen .gt. 0 .and. estr(resultlen+1:) .eq. ' ',
     &     'error string')

! Attributes: MPI_TAG_UB by value; a keyval with Fortran callbacks.
      call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, aval, found,
     &     ierr)
      call chk(found .and. aval .ge. 32767, 'MPI_TAG_UB')
      extra = 1000
      call MPI_COMM_CREATE_KEYVAL(addcopy, countdel, kv, extra, ierr)
      aval = 41
      call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, kv, aval, ierr)
      call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
      call chk(ncopy .eq. 1, 'copy callback ran')
      call MPI_COMM_GET_ATTR(dup, kv, aval, found, ierr)
      call chk(found .and. aval .eq. 1042, 'copied attribute')
      call MPI_COMM_FREE(dup, ierr)
      call chk(ndel .eq. 1, 'delete callback ran')
      call MPI_COMM_DELETE_ATTR(MPI_COMM_WORLD, kv, ierr)
      call chk(ndel .eq. 2, 'delete callback on delete_attr')
      call MPI_COMM_FREE_KEYVAL(kv, ierr)
      call MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN,
     &     MPI_COMM_NULL_DELETE_FN, kv, extra, ierr)
      aval = 77
      call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, kv, aval, ierr)
      call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
      call MPI_COMM_GET_ATTR(dup, kv, aval, found, ierr)
      call chk(found .and. aval .eq. 77, 'MPI_COMM_DUP_FN')
      call MPI_COMM_FREE(dup, ierr)
      call MPI_COMM_DELETE_ATTR(MPI_COMM_WORLD, kv, ierr)
      call MPI_COMM_FREE_KEYVAL(kv, ierr)

! A user operation: the largest absolute value.
      call MPI_OP_CREATE(absmax, .true., op, ierr)
      ibuf(1) = (rank + 1) * (-1) ** rank
      ibuf(2) = -rank
      call MPI_ALLREDUCE(ibuf, jbuf, 2, MPI_INTEGER, op,
     &     MPI_COMM_WORLD, ierr)
      call chk(abs(jbuf(1)) .eq. nproc, 'user op')
      call chk(abs(jbuf(2)) .eq. nproc - 1, 'user op second')
      call MPI_OP_FREE(op, ierr)
      call chk(op .eq. MPI_OP_NULL, 'op freed')

! An error handler written in Fortran.
      call MPI_COMM_CREATE_ERRHANDLER(onerr, eh, ierr)
      call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
      call MPI_COMM_SET_ERRHANDLER(dup, eh, ierr)
      call MPI_SEND(ibuf, 1, MPI_INTEGER, nproc, 0, dup, ierr)
      call chk(ierr .ne. MPI_SUCCESS, 'send to a bad rank fails')
      call chk(nerr .eq. 1, 'error handler ran')
      call chk(lastcomm .eq. dup, 'handler got the communicator')
      call chk(lastcode .eq. ierr, 'handler got the code')
      call MPI_ERROR_CLASS(ierr, i, ierr)
      call chk(i .eq. MPI_ERR_RANK, 'class MPI_ERR_RANK')
      call MPI_COMM_FREE(dup, ierr)
      call MPI_ERRHANDLER_FREE(eh, ierr)

! Info.
      call MPI_INFO_CREATE(info, ierr)
      call MPI_INFO_SET(info, 'colour', 'blue  ', ierr)
      call MPI_INFO_GET(info, 'colour', 40, val, found, ierr)
      call chk(found .and. val .eq. 'blue', 'info value')
      call MPI_INFO_GET_VALUELEN(info, 'colour', i, found, ierr)
      call chk(found .and. i .eq. 4, 'info value length')
      val = 'untouched'
      call MPI_INFO_GET(info, 'shape', 40, val, found, ierr)
      call chk(.not. found, 'info key absent')
      call chk(val .eq. 'untouched', 'absent key leaves the value')
! Leading and trailing blanks of keys and values are dropped.
      call MPI_INFO_SET(info, '  size ', '  large  ', ierr)
      call MPI_INFO_GET(info, 'size', 40, val, found, ierr)
      call chk(found .and. val .eq. 'large', 'blanks dropped')
! MPI_INFO_GET_STRING: BUFLEN counts characters; 0 writes nothing.
      i = 0
      val = 'untouched'
      call MPI_INFO_GET_STRING(info, 'colour', i, val, found, ierr)
      call chk(found .and. i .eq. 4, 'get_string length')
      call chk(val .eq. 'untouched', 'get_string with 0 writes nothing')
      i = 2
      call MPI_INFO_GET_STRING(info, 'colour', i, val, found, ierr)
      call chk(i .eq. 4 .and. val .eq. 'bl', 'get_string truncated')
      i = 40
      call MPI_INFO_GET_STRING(info, 'colour', i, val, found, ierr)
      call chk(i .eq. 4 .and. val .eq. 'blue', 'get_string whole')
      call MPI_INFO_FREE(info, ierr)
      call chk(info .eq. MPI_INFO_NULL, 'info freed')

      t1 = MPI_WTIME()
      call chk(t1 .ge. t0 .and. MPI_WTICK() .gt. 0, 'wtime')
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      call MPI_FINALIZE(ierr)
      call chk(ierr .eq. MPI_SUCCESS, 'MPI_FINALIZE')
      if (rank .eq. 0) print '(a)', 'f77_basic: ok'
      end

      subroutine chk(cond, what)
      implicit none
      include 'mpif.h'
      logical cond
      character*(*) what
      integer ierr
      if (.not. cond) then
         print '(a, a)', 'FAIL: ', what
         call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
         stop 3
      end if
      end

      subroutine addcopy(old, kv, extra, vin, vout, flag, ierr)
      implicit none
      include 'mpif.h'
      integer old, kv, ierr
      integer(kind=MPI_ADDRESS_KIND) extra, vin, vout
      logical flag
      integer ncopy, ndel, nerr, lastcode, lastcomm
      common /f77cb/ ncopy, ndel, nerr, lastcode, lastcomm
      ncopy = ncopy + 1
      vout = vin + extra + 1
      flag = .true.
      ierr = MPI_SUCCESS
      end

      subroutine countdel(comm, kv, val, extra, ierr)
      implicit none
      include 'mpif.h'
      integer comm, kv, ierr
      integer(kind=MPI_ADDRESS_KIND) val, extra
      integer ncopy, ndel, nerr, lastcode, lastcomm
      common /f77cb/ ncopy, ndel, nerr, lastcode, lastcomm
      if (extra .eq. 1000) ndel = ndel + 1
      ierr = MPI_SUCCESS
      end

      subroutine absmax(invec, inoutvec, n, dtype)
      implicit none
      include 'mpif.h'
      integer n, dtype, i
      integer invec(n), inoutvec(n)
      if (dtype .ne. MPI_INTEGER) call chk(.false., 'op datatype')
      do i = 1, n
         if (abs(invec(i)) .gt. abs(inoutvec(i))) then
            inoutvec(i) = invec(i)
         end if
      end do
      end

      subroutine onerr(comm, code)
      implicit none
      integer comm, code
      integer ncopy, ndel, nerr, lastcode, lastcomm
      common /f77cb/ ncopy, ndel, nerr, lastcode, lastcomm
      nerr = nerr + 1
      lastcode = code
      lastcomm = comm
      end
