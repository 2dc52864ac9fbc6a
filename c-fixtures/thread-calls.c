/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thread-calls - the thread life cycle the tapset has probes for, and the
 * cases that fool naive tools:
 *   T (main) creates P (start routine worker, argument 0x5eed), joins it:
 *   P returns 0x600d.  P takes mutex X and exits holding it (a thread may;
 *   the mutex stays locked, its owner gone).  T creates Q, joins it (Q
 *   returns 0), then creates R, which glibc gives Q's stack and pthread_t
 *   (reuse: a tracer keyed by pthread_t must not mix them up).  T joins
 *   itself (EDEADLK).
 * Expect: no deadlock.  The sequences are in
 * testsuite/pthread.tapset/thread-variables.exp.
 */
#include "fixture.h"

static pthread_mutex_t lock_x = PTHREAD_MUTEX_INITIALIZER;
static char name_q[] = "Q", name_r[] = "R";

static void *worker(void *arg)
{
	truth("thread P %d", (int)gettid());
	truth("arg P %p", arg);
	CHECK(pthread_mutex_lock(&lock_x));
	return (void *)0x600d;			/* exits holding X */
}

static void *quick(void *arg)
{
	truth("thread %s %d", (const char *)arg, (int)gettid());
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t p, q, r;
	void *ret;
	int rc;

	fixture_start("thread-calls", argc, argv);
	fixture_one_cpu();
	truth("thread T %d", (int)gettid());
	truth("mutex X %p", (void *)&lock_x);
	truth("routine worker %p", (void *)worker);
	truth("routine quick %p", (void *)quick);
	truth("arg Q %p", (void *)name_q);
	truth("arg R %p", (void *)name_r);
	truth("pthread T 0x%lx", (unsigned long)pthread_self());
	truth("expect none");
	wait_for_go();
	CHECK(pthread_create(&p, NULL, worker, (void *)0x5eed));
	truth("pthread P 0x%lx", (unsigned long)p);
	CHECK(pthread_join(p, &ret));
	truth("retval P %p", ret);
	truth("owner X %d", pthread_mutex_trylock(&lock_x) == EBUSY ? 1 : 0);
	CHECK(pthread_create(&q, NULL, quick, name_q));
	truth("pthread Q 0x%lx", (unsigned long)q);
	CHECK(pthread_join(q, NULL));
	CHECK(pthread_create(&r, NULL, quick, name_r));
	truth("pthread R 0x%lx", (unsigned long)r);
	CHECK(pthread_join(r, NULL));
	rc = pthread_join(pthread_self(), NULL);
	truth("result join-self %s", errname(rc));
	truth("done");
	return 0;
}
