/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rwlock-calls - one of every rwlock call the tapset has a probe for, on one
 * rwlock L, by three threads, so a test can compare the probes' variables
 * with what was done:
 *   A and B hold read locks at once; T (main) asks for the write lock and
 *   is blocked by them (its wrlock sees 2 readers); A and B unlock once T
 *   sleeps; T gets it.  T asks again (EDEADLK) and for a read lock
 *   (EDEADLK).  Then, while T still writes, A tries both (EBUSY) and
 *   times out on a timed read lock (ETIMEDOUT).  T unlocks, then: tryrdlock, unlock,
 *   trywrlock, unlock, clockwrlock (CLOCK_MONOTONIC), unlock,
 *   timedrdlock, unlock, destroy.
 * Expect: no deadlock.  The sequences are in
 * testsuite/pthread.tapset/rwlock-variables.exp.
 */
#include "fixture.h"
#include <sched.h>

static pthread_rwlock_t lock_l;
static pthread_barrier_t step;
static pid_t tid_t, tid_a, tid_b;

#define STEP() pthread_barrier_wait(&step)

static void *reader_a(void *arg)
{
	struct timespec ts;
	int rc;

	(void)arg;
	tid_a = gettid();
	STEP();					/* 1: tids known */
	STEP();					/* 2: go */
	CHECK(pthread_rwlock_rdlock(&lock_l));
	STEP();					/* 3: A reads */
	STEP();					/* 4: B reads */
	while (!fixture_in_futex(tid_t))	/* T waits for the readers */
		sched_yield();
	CHECK(pthread_rwlock_unlock(&lock_l));
	STEP();					/* 5: both let go */
	STEP();					/* 6: T writes, and tried */
	rc = pthread_rwlock_tryrdlock(&lock_l);
	truth("result tryrdlock-A %s", errname(rc));
	rc = pthread_rwlock_trywrlock(&lock_l);
	truth("result trywrlock-A %s", errname(rc));
	ts = fixture_in_future(CLOCK_REALTIME, 1);
	rc = pthread_rwlock_timedrdlock(&lock_l, &ts);
	truth("result timedrdlock-A %s", errname(rc));
	STEP();					/* 7: A tried */
	return NULL;
}

static void *reader_b(void *arg)
{
	(void)arg;
	tid_b = gettid();
	STEP();					/* 1 */
	STEP();					/* 2 */
	STEP();					/* 3 */
	CHECK(pthread_rwlock_rdlock(&lock_l));
	STEP();					/* 4 */
	while (!fixture_in_futex(tid_t))
		sched_yield();
	CHECK(pthread_rwlock_unlock(&lock_l));
	STEP();					/* 5 */
	STEP();					/* 6 */
	STEP();					/* 7 */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	struct timespec ts;
	int rc;

	fixture_start("rwlock-calls", argc, argv);
	fixture_one_cpu();
	truth_code(reader_a);
	truth_code(reader_b);
	truth_code(main);
	truth_code_end();
	tid_t = gettid();
	CHECK(pthread_barrier_init(&step, NULL, 3));
	CHECK(pthread_rwlock_init(&lock_l, NULL));
	CHECK(pthread_create(&a, NULL, reader_a, NULL));
	CHECK(pthread_create(&b, NULL, reader_b, NULL));
	STEP();					/* 1 */
	truth("rwlock L %p", (void *)&lock_l);
	truth("thread T %d", (int)tid_t);
	truth("thread A %d", (int)tid_a);
	truth("thread B %d", (int)tid_b);
	truth("expect none");
	wait_for_go();
	STEP();					/* 2: go */
	STEP();					/* 3 */
	STEP();					/* 4: two readers */
	CHECK(pthread_rwlock_wrlock(&lock_l));	/* blocked by A and B */
	STEP();					/* 5 */
	rc = pthread_rwlock_wrlock(&lock_l);
	truth("result wrlock-again-T %s", errname(rc));
	rc = pthread_rwlock_rdlock(&lock_l);
	truth("result rdlock-while-writing-T %s", errname(rc));
	STEP();					/* 6: T writes, and tried */
	STEP();					/* 7: A tried */
	CHECK(pthread_rwlock_unlock(&lock_l));
	CHECK(pthread_rwlock_tryrdlock(&lock_l));
	CHECK(pthread_rwlock_unlock(&lock_l));
	CHECK(pthread_rwlock_trywrlock(&lock_l));
	CHECK(pthread_rwlock_unlock(&lock_l));
	ts = fixture_in_future(CLOCK_MONOTONIC, 1000);
	CHECK(pthread_rwlock_clockwrlock(&lock_l, CLOCK_MONOTONIC, &ts));
	CHECK(pthread_rwlock_unlock(&lock_l));
	ts = fixture_in_future(CLOCK_REALTIME, 1000);
	CHECK(pthread_rwlock_timedrdlock(&lock_l, &ts));
	CHECK(pthread_rwlock_unlock(&lock_l));
	CHECK(pthread_join(a, NULL));
	CHECK(pthread_join(b, NULL));
	CHECK(pthread_rwlock_destroy(&lock_l));
	truth("done");
	return 0;
}
