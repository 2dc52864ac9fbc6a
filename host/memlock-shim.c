/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memlock-shim.c - host preparation for sandboxed machines, not product code.
 *
 * stapbpf raises RLIMIT_MEMLOCK to infinity before creating its maps and
 * aborts ("could not increase map resource limit") when that fails with
 * EPERM.  On kernels that charge BPF maps to the memory cgroup (5.11+) the
 * limit is not consulted, so a process without CAP_SYS_RESOURCE loses
 * nothing by pretending the call succeeded.  host/prepare-bpf builds this
 * library and pthread-stap preloads it into stap only when raising the
 * limit really fails on this host.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/resource.h>

typedef int (*setrlimit_fn)(__rlimit_resource_t, const struct rlimit *);

static int call_real(const char *name, __rlimit_resource_t resource,
		     const struct rlimit *rlim)
{
	setrlimit_fn real = (setrlimit_fn)dlsym(RTLD_NEXT, name);
	int rc;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	rc = real(resource, rlim);
	if (rc != 0 && errno == EPERM && resource == RLIMIT_MEMLOCK) {
		errno = 0;
		return 0;
	}
	return rc;
}

int setrlimit(__rlimit_resource_t resource, const struct rlimit *rlim)
{
	return call_real("setrlimit", resource, rlim);
}

int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rlim)
{
	return call_real("setrlimit64", resource, (const struct rlimit *)rlim);
}
