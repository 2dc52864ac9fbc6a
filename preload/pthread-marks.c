/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pthread-marks.c - the preload library: glibc's NPTL SDT marks for a libc
 * built without them (Debian 12 and 13).
 *
 *     LD_PRELOAD=libpthread-marks.so program
 *
 * One thin wrapper per pthread call.  Each fires the marks glibc built with
 * --enable-systemtap fires (provider "libc", as glibc >= 2.34), with the same
 * names, arguments and order, so tapset/pthread-tapset.stp serves both sources
 * unchanged; and, for the calls glibc leaves unmarked (trylock, timed
 * rwlocks, the end of a condition wait), marks of its own (provider
 * "pthread_tapset").  The marks are tapset/marks.list's, through the
 * generated MARK_<name>() macros of pthread-marks.h.  The contract is
 * doc/glibc-probes.md; the points where a wrapper can only approximate
 * glibc's internals are marked APPROX below.
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
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pthread-marks.h"

/* __kind's low bits: the mutex type (glibc's PTHREAD_MUTEX_KIND_MASK_NP). */
#define KIND_MASK 3

typedef int (*mutex_fn)(pthread_mutex_t *);
typedef int (*rwlock_fn)(pthread_rwlock_t *);

static int lazy_lock(pthread_mutex_t *m);
static int lazy_trylock(pthread_mutex_t *m);
static int lazy_unlock(pthread_mutex_t *m);

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
	int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
	int (*cond_destroy)(pthread_cond_t *);
	int (*cond_signal)(pthread_cond_t *);
	int (*cond_broadcast)(pthread_cond_t *);
	rwlock_fn rdlock, wrlock, tryrdlock, trywrlock, rwlock_unlock, rwlock_destroy;
	int (*timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	int (*join)(pthread_t, void **);
	int (*timedjoin)(pthread_t, void **, const struct timespec *);
	int (*clockjoin)(pthread_t, void **, clockid_t, const struct timespec *);
	int (*tryjoin)(pthread_t, void **);
} real = { .lock = lazy_lock, .trylock = lazy_trylock, .unlock = lazy_unlock };

static void resolve(void);

/* The three calls of every lock pair (lock or trylock, unlock) start out
 * as these, which resolve every wrapped function and call on: so their
 * wrappers need no "resolved yet?" test on each call.  The others test
 * (ensure_resolved).  The pointers are read and written whole (relaxed
 * atomics: plain moves on x86-64), by any thread. */
#define HOT(f) __atomic_load_n(&real.f, __ATOMIC_RELAXED)
static int lazy_lock(pthread_mutex_t *m)
{
	resolve();
	return HOT(lock)(m);
}
static int lazy_trylock(pthread_mutex_t *m)
{
	resolve();
	return HOT(trylock)(m);
}
static int lazy_unlock(pthread_mutex_t *m)
{
	resolve();
	return HOT(unlock)(m);
}
static int resolved;

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
	*(void **)&real.timedlock = next_symbol("pthread_mutex_timedlock");
	*(void **)&real.clocklock = next_symbol("pthread_mutex_clocklock");
	*(void **)&real.cond_wait = next_symbol("pthread_cond_wait");
	*(void **)&real.cond_timedwait = next_symbol("pthread_cond_timedwait");
	*(void **)&real.cond_clockwait = next_symbol("pthread_cond_clockwait");
	*(void **)&real.cond_init = next_symbol("pthread_cond_init");
	*(void **)&real.cond_destroy = next_symbol("pthread_cond_destroy");
	*(void **)&real.cond_signal = next_symbol("pthread_cond_signal");
	*(void **)&real.cond_broadcast = next_symbol("pthread_cond_broadcast");
	*(void **)&real.rdlock = next_symbol("pthread_rwlock_rdlock");
	*(void **)&real.wrlock = next_symbol("pthread_rwlock_wrlock");
	*(void **)&real.tryrdlock = next_symbol("pthread_rwlock_tryrdlock");
	*(void **)&real.trywrlock = next_symbol("pthread_rwlock_trywrlock");
	*(void **)&real.timedrdlock = next_symbol("pthread_rwlock_timedrdlock");
	*(void **)&real.timedwrlock = next_symbol("pthread_rwlock_timedwrlock");
	*(void **)&real.clockrdlock = next_symbol("pthread_rwlock_clockrdlock");
	*(void **)&real.clockwrlock = next_symbol("pthread_rwlock_clockwrlock");
	*(void **)&real.rwlock_unlock = next_symbol("pthread_rwlock_unlock");
	*(void **)&real.rwlock_destroy = next_symbol("pthread_rwlock_destroy");
	*(void **)&real.create = next_symbol("pthread_create");
	*(void **)&real.join = next_symbol("pthread_join");
	*(void **)&real.timedjoin = next_symbol("pthread_timedjoin_np");
	*(void **)&real.clockjoin = next_symbol("pthread_clockjoin_np");
	*(void **)&real.tryjoin = next_symbol("pthread_tryjoin_np");
	__atomic_store_n((void **)&real.trylock, next_symbol("pthread_mutex_trylock"),
			 __ATOMIC_RELAXED);
	__atomic_store_n((void **)&real.unlock, next_symbol("pthread_mutex_unlock"),
			 __ATOMIC_RELAXED);
	__atomic_store_n((void **)&real.lock, next_symbol("pthread_mutex_lock"),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

static inline void ensure_resolved(void)
{
	if (__builtin_expect(!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE), 0))
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

/* An errorcheck mutex the caller holds: its lock fails (out of line: the
 * thread id's TLS access stays off the lock path) */
static __attribute__((noinline, cold)) int held_by_caller(const pthread_mutex_t *m)
{
	return m->__data.__owner == self_tid();
}

/*
 * The lock paths.  glibc fires lll_lock_wait(&mutex->__data.__lock) just
 * before pthread_mutex_lock sleeps on a contended mutex (its timed and clock
 * variants sleep elsewhere, unmarked: so do the wrappers).  APPROX: a
 * wrapper cannot see inside the real lock, so it tries the lock first; when
 * that finds the mutex busy, the thread is about to wait, and the wrapper
 * fires lll_lock_wait before calling the blocking lock.  (Not when the
 * process has one thread and the mutex is free: then nothing can wait.)
 * An errorcheck mutex the caller already owns returns EDEADLK without
 * waiting, as in glibc.  A trylock that succeeds or
 * fails for a reason other than EBUSY (EOWNERDEAD, EAGAIN, EINVAL) is the
 * lock's own result.
 *
 * contended: a lock call whose trylock found m busy; the thread will wait
 * (lll_lock_wait fired), unless it holds an errorcheck m (EDEADLK).
 */
static inline int contended(pthread_mutex_t *m)
{
	if (__builtin_expect(mutex_type(m) == PTHREAD_MUTEX_ERRORCHECK, 0) && held_by_caller(m))
		return 0;
	MARK_lll_lock_wait(&m->__data.__lock);
	return 1;
}

/* The lock call of a mutex found busy, lll_lock_wait fired: once the real
 * lock returns, the thread has waited (mutex_waited: the end of the wait
 * that lll_lock_wait began; glibc's own slow path ends there too).  Out of
 * line (and its registers with it): the uncontended path saves one.
 * lll_lock_wait itself fires in the lock call's own frame, as mutex_entry
 * does: the tapset reads the lock call's site there. */
static __attribute__((noinline, cold)) int lock_waited(pthread_mutex_t *m)
{
	int rc = HOT(lock)(m);

	MARK_mutex_waited(m);
	return rc;
}

/* A lock call after its mutex_entry: a trylock first, to tell a lock
 * that will wait */
static __attribute__((noinline)) int lock_after_entry(pthread_mutex_t *m)
{
	int rc = HOT(trylock)(m);

	if (__builtin_expect(rc == EBUSY, 0))
		rc = contended(m) ? lock_waited(m) : HOT(lock)(m);
	if (rc == 0 && fresh_acquisition(m))
		MARK_mutex_acquired(m);
	return rc;
}

/* the relock after a condition wait */
static __attribute__((noinline)) int lock_with_marks(pthread_mutex_t *m)
{
	MARK_mutex_entry(m);
	return lock_after_entry(m);
}

/*
 * A process of one thread, a free mutex of none of the special kinds
 * (robust, priority inheritance or protection, process-shared: their bits
 * above the type): nothing can make the lock wait or fail, and nothing
 * can see the mutex between the marks and glibc's lock.  So mutex_acquired
 * fires first, and glibc's lock is a tail call, which then skips its
 * atomic instruction (its own single-thread fast path, which trylock does
 * not have; the trylock first cost 2.3 ns a call in make bench's single
 * loop).  With unlock's like path: about 1 ns a call less there, under 1
 * ns over plain.  APPROX: glibc fires mutex_acquired once the mutex is
 * held.
 */
int pthread_mutex_lock(pthread_mutex_t *m)
{
	MARK_mutex_entry(m);
	if (__libc_single_threaded &&
	    __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0 &&
	    (m->__data.__kind & ~KIND_MASK) == 0) {
		MARK_mutex_acquired(m);
		return HOT(lock)(m);
	}
	return lock_after_entry(m);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	int rc;

	ensure_resolved();
	MARK_mutex_timedlock_entry(m, abstime);
	rc = real.timedlock(m, abstime);
	/* glibc fires this on a recursive relock too; a timeout fires nothing */
	if (rc == 0)
		MARK_mutex_timedlock_acquired(m);
	return rc;
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clockid,
			    const struct timespec *abstime)
{
	int rc;

	ensure_resolved();
	MARK_mutex_clocklock_entry(m, clockid, abstime);
	rc = real.clocklock(m, clockid, abstime);
	if (rc == 0)
		MARK_mutex_timedlock_acquired(m);
	return rc;
}

/* A recursive mutex's unlock: the inner unlock of a relock fires nothing.
 * Out of line: the others' path keeps one register fewer. */
static __attribute__((noinline)) int unlock_recursive(pthread_mutex_t *m)
{
	int outermost = m->__data.__count <= 1;
	int rc = HOT(unlock)(m);

	if (rc == 0 && outermost)
		MARK_mutex_release(m);
	return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	/* glibc: mutex_release fires after the lock word is cleared. */
	int rc, kind = m->__data.__kind;

	/* A process of one thread, a normal or adaptive mutex (no bits above
	 * the type): glibc's unlock cannot fail, and nothing can see the
	 * mutex between the mark and the unlock, so the mark fires first and
	 * the unlock is a tail call (APPROX, as the lock's). */
	if (__libc_single_threaded &&
	    (kind == PTHREAD_MUTEX_NORMAL || kind == PTHREAD_MUTEX_ADAPTIVE_NP)) {
		MARK_mutex_release(m);
		return HOT(unlock)(m);
	}
	if ((kind & KIND_MASK) == PTHREAD_MUTEX_RECURSIVE)
		return unlock_recursive(m);
	rc = HOT(unlock)(m);
	if (rc == 0)
		MARK_mutex_release(m);
	return rc;
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	int rc;

	ensure_resolved();
	rc = real.init(m, attr);
	MARK_mutex_init(m);
	return rc;
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
	ensure_resolved();
	MARK_mutex_destroy(m);
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
		MARK_cond_wait(c, m);                                  \
		MARK_mutex_release(m);                                 \
		rc_ = (call);                                          \
		if (rc_ == 0 || rc_ == ETIMEDOUT) {                    \
			if (HOT(unlock)(m) == 0) {                     \
				relock_ = lock_with_marks(m);          \
				if (relock_)                           \
					rc_ = relock_;                 \
			}                                              \
		}                                                      \
		MARK_cond_wait_return(c, m, rc_);                      \
		return rc_;                                            \
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

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int rc;

	rc = HOT(trylock)(m);
	MARK_mutex_trylock_return(m, rc);
	return rc;
}

/* Condition variables: glibc marks init (after), destroy, signal and
 * broadcast (at the start). */
int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	int rc;

	ensure_resolved();
	rc = real.cond_init(c, attr);
	MARK_cond_init(c, attr);
	return rc;
}

int pthread_cond_destroy(pthread_cond_t *c)
{
	ensure_resolved();
	MARK_cond_destroy(c);
	return real.cond_destroy(c);
}

int pthread_cond_signal(pthread_cond_t *c)
{
	ensure_resolved();
	MARK_cond_signal(c);
	return real.cond_signal(c);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
	ensure_resolved();
	MARK_cond_broadcast(c);
	return real.cond_broadcast(c);
}

/* Read-write locks: glibc marks the entry and the end (whatever the result)
 * of rdlock and wrlock, and the start of unlock and destroy. */
int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	int rc;

	ensure_resolved();
	MARK_rdlock_entry(l);
	rc = real.rdlock(l);
	MARK_rdlock_acquire_read(l);
	return rc;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	int rc;

	ensure_resolved();
	MARK_wrlock_entry(l);
	rc = real.wrlock(l);
	MARK_wrlock_acquire_write(l);
	return rc;
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	int rc;

	ensure_resolved();
	rc = real.tryrdlock(l);
	MARK_rwlock_tryrdlock_return(l, rc);
	return rc;
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	int rc;

	ensure_resolved();
	rc = real.trywrlock(l);
	MARK_rwlock_trywrlock_return(l, rc);
	return rc;
}

/* The timed and clock variants share one site per mark (noinline): the BPF
 * runtime decodes a mark's arguments per site, and fewer sites keep its
 * handlers small. */
static __attribute__((noinline)) int timed_rdlock(pthread_rwlock_t *l, int use_clock,
						  clockid_t clockid, const struct timespec *abstime)
{
	int rc;

	ensure_resolved();
	MARK_rwlock_timedrdlock_entry(l, clockid, abstime);
	rc = use_clock ? real.clockrdlock(l, clockid, abstime) : real.timedrdlock(l, abstime);
	MARK_rwlock_timedrdlock_return(l, rc);
	return rc;
}

static __attribute__((noinline)) int timed_wrlock(pthread_rwlock_t *l, int use_clock,
						  clockid_t clockid, const struct timespec *abstime)
{
	int rc;

	ensure_resolved();
	MARK_rwlock_timedwrlock_entry(l, clockid, abstime);
	rc = use_clock ? real.clockwrlock(l, clockid, abstime) : real.timedwrlock(l, abstime);
	MARK_rwlock_timedwrlock_return(l, rc);
	return rc;
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	return timed_rdlock(l, 0, CLOCK_REALTIME, abstime);
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clockid,
			       const struct timespec *abstime)
{
	return timed_rdlock(l, 1, clockid, abstime);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	return timed_wrlock(l, 0, CLOCK_REALTIME, abstime);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clockid,
			       const struct timespec *abstime)
{
	return timed_wrlock(l, 1, clockid, abstime);
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	ensure_resolved();
	MARK_rwlock_unlock(l);
	return real.rwlock_unlock(l);
}

int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	ensure_resolved();
	MARK_rwlock_destroy(l);
	return real.rwlock_destroy(l);
}

/*
 * Threads.  glibc fires pthread_create in the parent once *newthread is set
 * (on success), and pthread_start in the new thread before its start
 * routine: the wrapper starts the thread on a trampoline that fires the
 * mark and calls the routine.  APPROX: glibc's mark carries the start
 * routine and argument as given; so does the trampoline's.
 */
struct start {
	void *(*routine)(void *);
	void *arg;
};

static void *start_trampoline(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	MARK_pthread_start(pthread_self(), s.routine, s.arg);
	return s.routine(s.arg);
}

int pthread_create(pthread_t *newthread, const pthread_attr_t *attr,
		   void *(*routine)(void *), void *arg)
{
	struct start *s;
	int rc;

	ensure_resolved();
	s = malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->routine = routine;
	s->arg = arg;
	rc = real.create(newthread, attr, start_trampoline, s);
	if (rc != 0) {
		free(s);
		return rc;
	}
	MARK_pthread_create(newthread, attr, routine, arg);
	return 0;
}

/* Joins: glibc marks the start and the end (the result, and the joined
 * thread's return value whether or not the caller asked for it), but not
 * the end of a join it refuses at once (EDEADLK; EINVAL and ESRCH it
 * refuses before the start mark: APPROX, the wrapper fires that one). */
#define JOIN(call)                                                     \
	do {                                                           \
		void *ret_ = NULL;                                     \
		int rc_;                                               \
		ensure_resolved();                                     \
		MARK_pthread_join(t);                                  \
		rc_ = (call);                                          \
		if (rc_ != EDEADLK && rc_ != EINVAL && rc_ != ESRCH)   \
			MARK_pthread_join_ret(t, rc_, rc_ == 0 ? ret_ : NULL); \
		if (rc_ == 0 && retval)                                \
			*retval = ret_;                                \
		return rc_;                                            \
	} while (0)

int pthread_join(pthread_t t, void **retval)
{
	JOIN(real.join(t, &ret_));
}

int pthread_timedjoin_np(pthread_t t, void **retval, const struct timespec *abstime)
{
	JOIN(real.timedjoin(t, &ret_, abstime));
}

int pthread_clockjoin_np(pthread_t t, void **retval, clockid_t clockid,
			 const struct timespec *abstime)
{
	JOIN(real.clockjoin(t, &ret_, clockid, abstime));
}

int pthread_tryjoin_np(pthread_t t, void **retval)
{
	JOIN(real.tryjoin(t, &ret_));
}
