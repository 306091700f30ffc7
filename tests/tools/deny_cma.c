/* deny_cma PROGRAM [ARGS...]: runs PROGRAM with process_vm_readv and
 * process_vm_writev refused by the kernel (EPERM), as a kernel with a strict
 * ptrace policy or a container without ptrace rights refuses them. A
 * seccomp filter does the refusing; it is inherited across exec, so the
 * MPI rank started here finds cross-memory attach (CMA) unusable and its
 * single-copy rendezvous must fall back to pushing data through the
 * shared cells. Before it execs, it checks that the refusal is in force
 * (a read of its own memory must fail with EPERM). Where the kernel will not
 * take a seccomp filter it says so and exits 77, which run_mpi_test.sh
 * reports as a skipped test.
 *
 * With HALO_TEST_DENY_CMA_RANK=R in the environment only the rank whose
 * PMI_RANK is R runs under the filter; the others run PROGRAM as it is (a
 * job whose ranks disagree about CMA).
 *
 * With HALO_TEST_DENY_CMA_PEERS=1 the calls are refused only towards other
 * processes, as Yama's ptrace_scope 1 refuses them to a rank outside the
 * reach of the others' PR_SET_PTRACER declarations: a read of its own
 * memory works (the filter compares the pid argument with this process's,
 * which exec keeps). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#else
#error "deny_cma: unknown architecture"
#endif

/* Refuses process_vm_readv/writev; with `peers`, only when their pid
 * argument (the low word of args[0], little-endian) is not `self`. */
static int install_filter(int peers, pid_t self)
{
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, peers ? (uint32_t)self : 0xffffffffu, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog fprog = {(unsigned short)(sizeof prog / sizeof prog[0]), prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        fprintf(stderr, "deny_cma: skipped: prctl(PR_SET_NO_NEW_PRIVS): %s\n", strerror(errno));
        return -1;
    }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
        fprintf(stderr, "deny_cma: skipped: cannot install the seccomp filter: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: deny_cma PROGRAM [ARGS...]\n");
        return 2;
    }
    const char *only = getenv("HALO_TEST_DENY_CMA_RANK"), *rank = getenv("PMI_RANK");
    if (only && (!rank || strcmp(only, rank) != 0)) {
        execvp(argv[1], argv + 1);
        fprintf(stderr, "deny_cma: cannot run %s: %s\n", argv[1], strerror(errno));
        return 127;
    }
    const char *peers_env = getenv("HALO_TEST_DENY_CMA_PEERS");
    int peers = peers_env && !strcmp(peers_env, "1");
    if (install_filter(peers, getpid()) != 0)
        return 77;
    char src[16] = "cma", dst[16] = "";
    struct iovec local = {dst, sizeof dst}, remote = {src, sizeof src};
    ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (peers ? n != (ssize_t)sizeof dst : n >= 0 || errno != EPERM) {
        fprintf(stderr, "deny_cma: a read of this process's own memory was %s (returned %zd, %s)\n",
                peers ? "refused" : "not refused", n, n < 0 ? strerror(errno) : "no error");
        return 2;
    }
    /* towards another process (the parent: it exists) */
    n = process_vm_readv(getppid(), &local, 1, &remote, 1, 0);
    if (n >= 0 || errno != EPERM) {
        fprintf(stderr, "deny_cma: a read of another process was not refused (returned %zd, %s)\n", n,
                n < 0 ? strerror(errno) : "no error");
        return 2;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "deny_cma: cannot run %s: %s\n", argv[1], strerror(errno));
    return 127;
}
