/*
 * statx-compat.so: `ls -l` and `stat` on gVisor.
 *
 * gVisor's statx and fstatat (Debian's runsc, 2022) refuse the
 * AT_NO_AUTOMOUNT flag with EINVAL, and coreutils' ls and stat always pass
 * it, so both fail on every file ("cannot access '.': Invalid argument").
 * This library, preloaded into commands only where the supervisor's probe
 * finds that refusal (sandbox/supervisor/statx_compat.py), asks again
 * without the flag, which changes nothing there: gVisor has no automount
 * points. On Linux the first answer stands and the library is not loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>

typedef int (*statx_fn)(int, const char *, int, unsigned int, struct statx *);
typedef int (*fstatat_fn)(int, const char *, void *, int);

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf) {
  static statx_fn real;
  if (real == NULL) real = (statx_fn)dlsym(RTLD_NEXT, "statx");
  int result = real(dirfd, path, flags, mask, buf);
  if (result != 0 && errno == EINVAL && (flags & AT_NO_AUTOMOUNT)) result = real(dirfd, path, flags & ~AT_NO_AUTOMOUNT, mask, buf);
  return result;
}

static int retry_fstatat(const char *name, int dirfd, const char *path, void *buf, int flags) {
  fstatat_fn real = (fstatat_fn)dlsym(RTLD_NEXT, name);
  int result = real(dirfd, path, buf, flags);
  if (result != 0 && errno == EINVAL && (flags & AT_NO_AUTOMOUNT)) result = real(dirfd, path, buf, flags & ~AT_NO_AUTOMOUNT);
  return result;
}

int fstatat(int dirfd, const char *path, struct stat *buf, int flags) { return retry_fstatat("fstatat", dirfd, path, buf, flags); }
int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags) { return retry_fstatat("fstatat64", dirfd, path, buf, flags); }
