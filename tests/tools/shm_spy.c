/* LD_PRELOAD library for tests: logs every shm_open() a process makes, on
 * stderr, as
 *   shm_spy: NAME create|open mode MMM uid U
 * with the mode and owner the segment has once open (fstat), so a test can
 * check what Halo creates and opens in /dev/shm. Only logs. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>

typedef int shm_open_fn(const char *, int, mode_t);

int shm_open(const char *name, int oflag, mode_t mode)
{
    static shm_open_fn *real;
    if (!real)
        real = (shm_open_fn *)dlsym(RTLD_NEXT, "shm_open");
    int fd = real(name, oflag, mode);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0)
        fprintf(stderr, "shm_spy: %s %s mode %03o uid %u\n", name, (oflag & O_CREAT) ? "create" : "open",
                (unsigned)(st.st_mode & 0777), (unsigned)st.st_uid);
    return fd;
}
