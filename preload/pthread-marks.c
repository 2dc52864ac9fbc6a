/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pthread-marks.c - the preload library: glibc's NPTL SDT marks for a libc
 * built without them (Debian 12 and 13).
 *
 *     LD_PRELOAD=libpthread-marks.so program
 *
 * One thin wrapper per pthread call.  Each fires the marks glibc built with
 * --enable-systemtap fires (provider "libc", as glibc >= 2.34), with the same
 * names, arguments and order, so tapset/pthread.stp serves both sources
 * unchanged.  The contract is doc/glibc-probes.md; the points where a
 * wrapper can only approximate glibc's internals are marked APPROX below.
 *
 * Untraced, an SDT mark is a single nop: a wrapper costs one indirect call
 * and a few loads more than the plain call (see `make bench`).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MARK1(name, a) STAP_PROBE1(libc, name, a)
#define MARK2(name, a, b) STAP_PROBE2(libc, name, a, b)
#define MARK3(name, a, b, c) STAP_PROBE3(libc, name, a, b, c)

/* __kind's low bits: the mutex type (glibc's PTHREAD_MUTEX_KIND_MASK_NP). */
#define KIND_MASK 3

typedef int (*mutex_fn)(pthread_mutex_t *);

static struct {
	int (*init)(pthread_mutex_t *, const pthread_mutexattr_t *);
	mutex_fn destroy, lock, trylock, unlock;
	int (*timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
			      const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
} real;

static void *next_symbol(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym) {
		fprintf(stderr, "libpthread-marks: %s not found in the next library\n",
			name);
		abort();
	}
	return sym;
}

/* Resolves every wrapped function once.  Runs as a constructor, and again
 * from any wrapper called before the constructors (another library's
 * constructor may lock a mutex): dlsym is idempotent, so a race between two
 * threads only stores the same pointers twice. */
__attribute__((constructor)) static void resolve(void)
{
	*(void **)&real.init = next_symbol("pthread_mutex_init");
	*(void **)&real.destroy = next_symbol("pthread_mutex_destroy");
	*(void **)&real.trylock = next_symbol("pthread_mutex_trylock");
	*(void **)&real.unlock = next_symbol("pthread_mutex_unlock");
	*(void **)&real.timedlock = next_symbol("pthread_mutex_timedlock");
	*(void **)&real.clocklock = next_symbol("pthread_mutex_clocklock");
	*(void **)&real.cond_wait = next_symbol("pthread_cond_wait");
	*(void **)&real.cond_timedwait = next_symbol("pthread_cond_timedwait");
	*(void **)&real.cond_clockwait = next_symbol("pthread_cond_clockwait");
	__atomic_store_n((void **)&real.lock, next_symbol("pthread_mutex_lock"),
			 __ATOMIC_RELEASE);
}

static inline void ensure_resolved(void)
{
	if (__builtin_expect(!__atomic_load_n((void **)&real.lock, __ATOMIC_ACQUIRE), 0))
		resolve();
}

static inline int mutex_type(const pthread_mutex_t *m)
{
	return m->__data.__kind & KIND_MASK;
}

static pid_t self_tid(void)
{
	static __thread pid_t tid __attribute__((tls_model("initial-exec")));

	if (!tid)
		tid = (pid_t)syscall(SYS_gettid);
	return tid;
}

/* True when a successful lock took the mutex afresh, false when it only
 * counted a recursive relock (glibc fires no mutex_acquired then).  The
 * caller owns the mutex, so __count is stable. */
static inline int fresh_acquisition(const pthread_mutex_t *m)
{
	return mutex_type(m) != PTHREAD_MUTEX_RECURSIVE || m->__data.__count == 1;
}

/*
 * The lock paths.  glibc fires lll_lock_wait(&mutex->__data.__lock) just
 * before it sleeps on a contended mutex.  APPROX: a wrapper cannot see inside
 * the real lock, so it tries the lock first; when that finds the mutex busy,
 * the thread is about to wait, and the wrapper fires lll_lock_wait before
 * calling the blocking lock.  An errorcheck mutex the caller already owns
 * returns EDEADLK without waiting, as in glibc.  A trylock that succeeds or
 * fails for a reason other than EBUSY (EOWNERDEAD, EAGAIN, EINVAL) is the
 * lock's own result.
 */
static inline int contended(pthread_mutex_t *m, int busy)
{
	if (busy != EBUSY)
		return 0;
	if (mutex_type(m) == PTHREAD_MUTEX_ERRORCHECK && m->__data.__owner == self_tid())
		return 0;
	MARK1(lll_lock_wait, &m->__data.__lock);
	return 1;
}

/* pthread_mutex_lock's body: also the relock after a condition wait */
static int lock_with_marks(pthread_mutex_t *m)
{
	int rc;

	MARK1(mutex_entry, m);
	rc = real.trylock(m);
	if (rc == EBUSY) {
		contended(m, rc);
		rc = real.lock(m);
	}
	if (rc == 0 && fresh_acquisition(m))
		MARK1(mutex_acquired, m);
	return rc;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	ensure_resolved();
	return lock_with_marks(m);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int rc;

	ensure_resolved();
	MARK2(mutex_timedlock_entry, m, abstime);
	rc = real.trylock(m);
	if (rc == EBUSY) {
		contended(m, rc);
		rc = real.timedlock(m, abstime);
	}
	/* glibc fires this on a recursive relock too; a timeout fires nothing */
	if (rc == 0)
		MARK1(mutex_timedlock_acquired, m);
	return rc;
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clockid,
			    const struct timespec *abstime)
{
	int rc;

	ensure_resolved();
	MARK3(mutex_clocklock_entry, m, clockid, abstime);
	rc = real.trylock(m);
	if (rc == EBUSY) {
		contended(m, rc);
		rc = real.clocklock(m, clockid, abstime);
	}
	if (rc == 0)
		MARK1(mutex_timedlock_acquired, m);
	return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	/* glibc: the inner unlock of a recursive relock fires nothing, and
	 * mutex_release fires after the lock word is cleared. */
	int outermost, rc;

	ensure_resolved();
	outermost = mutex_type(m) != PTHREAD_MUTEX_RECURSIVE || m->__data.__count <= 1;
	rc = real.unlock(m);
	if (rc == 0 && outermost)
		MARK1(mutex_release, m);
	return rc;
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	int rc;

	ensure_resolved();
	rc = real.init(m, attr);
	MARK1(mutex_init, m);
	return rc;
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
	ensure_resolved();
	MARK1(mutex_destroy, m);
	return real.destroy(m);
}

/*
 * Condition waits release the mutex and take it again inside libc, where no
 * wrapper sees it.  glibc fires cond_wait(cond, mutex), then mutex_release
 * as it unlocks, and mutex_entry (+ lll_lock_wait) + mutex_acquired as it
 * relocks before returning.  The wrapper fires cond_wait and the release
 * before the wait starts (APPROX: glibc's release comes a moment later);
 * once the wait has returned with the mutex held (0 or ETIMEDOUT), it lets
 * the mutex go and takes it again through the marked lock path, so the
 * relock is seen as glibc shows it: before the mutex is held, with its
 * contention.  POSIX allows this: a waiter's relock always competes with
 * other threads, and callers re-check their predicate.
 */
#define COND_WAIT(call)                                                \
	do {                                                           \
		int rc_, relock_;                                      \
		ensure_resolved();                                     \
		MARK2(cond_wait, c, m);                                \
		MARK1(mutex_release, m);                               \
		rc_ = (call);                                          \
		if (rc_ != 0 && rc_ != ETIMEDOUT)                      \
			return rc_;                                    \
		if (real.unlock(m) != 0)                               \
			return rc_;                                    \
		relock_ = lock_with_marks(m);                          \
		return relock_ ? relock_ : rc_;                        \
	} while (0)

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	COND_WAIT(real.cond_wait(c, m));
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
			   const struct timespec *abstime)
{
	COND_WAIT(real.cond_timedwait(c, m, abstime));
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
			   clockid_t clockid, const struct timespec *abstime)
{
	COND_WAIT(real.cond_clockwait(c, m, clockid, abstime));
}
