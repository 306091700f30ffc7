! The Fortran forms of the functions MPI-3.0 removed, for old programs:
! MPI_TYPE_HVECTOR, MPI_TYPE_HINDEXED and MPI_TYPE_STRUCT with INTEGER
! displacements (and the MPI_LB and MPI_UB markers), MPI_TYPE_EXTENT,
! MPI_TYPE_LB, MPI_TYPE_UB, MPI_ADDRESS (an address that does not fit a
! default INTEGER is MPI_ERR_ARG), MPI_ERRHANDLER_CREATE, _SET and _GET.
      program f77removed
      implicit none
      include 'mpif.h'
      integer ierr, rank, nproc, t1, t2, t3, ext, lb, ub, i, cls
      integer blens(3), disps(3), types(3), eh, eh2, addr
      integer(kind=MPI_ADDRESS_KIND) aaddr
      integer nerr
      common /f77rm/ nerr
      double precision d(6), r(6)
      external onerr

      nerr = 0
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)

! Every other double: a vector of stride 16 bytes.
      call MPI_TYPE_HVECTOR(3, 1, 16, MPI_DOUBLE_PRECISION, t1, ierr)
      call MPI_TYPE_EXTENT(t1, ext, ierr)
      call chk(ext .eq. 40, 'hvector extent')
      call MPI_TYPE_COMMIT(t1, ierr)
      do i = 1, 6
         d(i) = i + 10 * rank
         r(i) = -1
      end do
      call MPI_SENDRECV(d, 1, t1, rank, 1, r, 3, MPI_DOUBLE_PRECISION,
     &     rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call chk(r(1) .eq. d(1) .and. r(2) .eq. d(3) .and.
     &     r(3) .eq. d(5), 'hvector data')
! The same through hindexed with byte displacements.
      blens(1) = 1
      blens(2) = 1
      disps(1) = 8
      disps(2) = 40
      call MPI_TYPE_HINDEXED(2, blens, disps, MPI_DOUBLE_PRECISION,
     &     t2, ierr)
      call MPI_TYPE_LB(t2, lb, ierr)
      call MPI_TYPE_UB(t2, ub, ierr)
      call chk(lb .eq. 8 .and. ub .eq. 48, 'hindexed bounds')
      call MPI_TYPE_COMMIT(t2, ierr)
      call MPI_SENDRECV(d, 1, t2, rank, 2, r, 2, MPI_DOUBLE_PRECISION,
     &     rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call chk(r(1) .eq. d(2) .and. r(2) .eq. d(6), 'hindexed data')
! A struct with the bound markers: extent 64 bytes around one double.
      blens(3) = 1
      disps(1) = 0
      disps(2) = 8
      disps(3) = 64
      types(1) = MPI_LB
      types(2) = MPI_DOUBLE_PRECISION
      types(3) = MPI_UB
      call MPI_TYPE_STRUCT(3, blens, disps, types, t3, ierr)
      call MPI_TYPE_EXTENT(t3, ext, ierr)
      call MPI_TYPE_LB(t3, lb, ierr)
      call chk(ext .eq. 64 .and. lb .eq. 0, 'struct with markers')
      call MPI_TYPE_FREE(t1, ierr)
      call MPI_TYPE_FREE(t2, ierr)
      call MPI_TYPE_FREE(t3, ierr)

! An error handler made the old way.
      call MPI_ERRHANDLER_CREATE(onerr, eh, ierr)
      call MPI_ERRHANDLER_SET(MPI_COMM_WORLD, eh, ierr)
      call MPI_ERRHANDLER_GET(MPI_COMM_WORLD, eh2, ierr)
      call chk(eh2 .eq. eh, 'errhandler_get')
      call MPI_ERRHANDLER_FREE(eh2, ierr)
      call MPI_SEND(d, 1, MPI_DOUBLE_PRECISION, nproc, 0,
     &     MPI_COMM_WORLD, ierr)
      call chk(nerr .eq. 1 .and. ierr .ne. MPI_SUCCESS,
     &     'old-style handler ran')
! MPI_ADDRESS: the address, or MPI_ERR_ARG when it needs more bits.
      call MPI_ADDRESS(d, addr, ierr)
      call MPI_GET_ADDRESS(d, aaddr, i)
      if (ierr .eq. MPI_SUCCESS) then
         call chk(addr .eq. aaddr, 'MPI_ADDRESS value')
      else
         call MPI_ERROR_CLASS(ierr, cls, i)
         call chk(cls .eq. MPI_ERR_ARG, 'MPI_ADDRESS too large')
         call chk(nerr .eq. 2, 'handler saw MPI_ADDRESS fail')
         call chk(aaddr .ne. int(aaddr, 4), 'address is large')
      end if
      call MPI_ERRHANDLER_SET(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL,
     &     ierr)
      call MPI_ERRHANDLER_FREE(eh, ierr)
      call MPI_FINALIZE(ierr)
      if (rank .eq. 0) print '(a)', 'f77_removed: ok'
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

      subroutine onerr(comm, code)
      implicit none
      integer comm, code
      integer nerr
      common /f77rm/ nerr
      nerr = nerr + 1
      end
