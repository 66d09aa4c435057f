/*
 * statx-compat.so: `ls -l` and `stat` on gVisor.
 *
 * gVisor's statx and fstatat (Debian's runsc, 2022) refuse the
 * AT_NO_AUTOMOUNT flag with EINVAL, and coreutils' ls and stat always pass
 * it, so both fail on every file ("cannot access '.': Invalid argument").
 * The image preloads this library into every process (/etc/ld.so.preload).
 * At load it asks the kernel once whether it refuses the flag; only where it
 * does (gVisor) do statx and fstatat ask again without it, which changes
 * nothing there: gVisor has no automount points. On Linux every call goes
 * straight through.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*statx_fn)(int, const char *, int, unsigned int, struct statx *);
typedef int (*fstatat_fn)(int, const char *, void *, int);

static int refuses_no_automount;
static statx_fn real_statx;
static fstatat_fn real_fstatat;
static fstatat_fn real_fstatat64;

__attribute__((constructor)) static void probe(void) {
  struct stat st;
  int saved = errno;
  refuses_no_automount = syscall(SYS_newfstatat, AT_FDCWD, "/", &st, AT_NO_AUTOMOUNT) != 0 && errno == EINVAL;
  errno = saved;
  real_statx = (statx_fn)dlsym(RTLD_NEXT, "statx");
  real_fstatat = (fstatat_fn)dlsym(RTLD_NEXT, "fstatat");
  real_fstatat64 = (fstatat_fn)dlsym(RTLD_NEXT, "fstatat64");
}

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf) {
  if (refuses_no_automount) flags &= ~AT_NO_AUTOMOUNT;
  return real_statx(dirfd, path, flags, mask, buf);
}

int fstatat(int dirfd, const char *path, struct stat *buf, int flags) {
  if (refuses_no_automount) flags &= ~AT_NO_AUTOMOUNT;
  return real_fstatat(dirfd, path, buf, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags) {
  if (refuses_no_automount) flags &= ~AT_NO_AUTOMOUNT;
  return real_fstatat64(dirfd, path, buf, flags);
}
