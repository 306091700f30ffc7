/* MPI-IO: files on POSIX file systems (see file.c). */
#ifndef HALO_IO_FILE_H
#define HALO_IO_FILE_H

#include "core/obj.h"

struct halo_errhandler;

void halo_file_init(void);
/* The error handler of a valid file; for MPI_FILE_NULL or a handle that is
 * not a file, the default file error handler (MPI_FILE_NULL's), which
 * also takes the errors of MPI_File_open and MPI_File_delete. */
struct halo_errhandler *halo_file_errhandler(MPI_File fh);

#endif
