/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cond-calls - one of every condition variable call the tapset has a probe
 * for, so a test can compare the probes' variables with what was done:
 *   C (init, with M): thread W waits on C; T (main) signals C once W
 *   sleeps; W wakes (its wait returns 0, M held again).  W waits again,
 *   T broadcasts.  T waits with a deadline that passes (ETIMEDOUT).
 *   T destroys C.
 * A wait gives its mutex up and takes it back inside libc: the mutex
 * probes show that too.  Expect: no deadlock.  The sequences are in
 * testsuite/pthread.tapset/cond-variables.exp.
 */
#include "fixture.h"
#include <sched.h>

static pthread_cond_t cond_c;
static pthread_mutex_t lock_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t step;
static pid_t tid_w;
static int round_done, waits_started;

static void *waiter(void *arg)
{
	int want;

	(void)arg;
	tid_w = gettid();
	pthread_barrier_wait(&step);		/* 1: tid known */
	pthread_barrier_wait(&step);		/* 2: go */
	for (want = 1; want <= 2; want++) {
		CHECK(pthread_mutex_lock(&lock_m));
		while (round_done < want) {
			__atomic_store_n(&waits_started, want, __ATOMIC_RELEASE);
			CHECK(pthread_cond_wait(&cond_c, &lock_m));
		}
		CHECK(pthread_mutex_unlock(&lock_m));
	}
	return NULL;
}

/* T: once W sleeps in its wait for ROUND (it said so holding M, then slept
 * in futex: nothing else puts it there), wake it */
static void wake(int round, int broadcast)
{
	while (__atomic_load_n(&waits_started, __ATOMIC_ACQUIRE) < round || !fixture_in_futex(tid_w))
		sched_yield();
	CHECK(pthread_mutex_lock(&lock_m));
	round_done = round;
	CHECK(pthread_mutex_unlock(&lock_m));
	/* after the unlock: W's wait takes M back uncontended */
	if (broadcast)
		CHECK(pthread_cond_broadcast(&cond_c));
	else
		CHECK(pthread_cond_signal(&cond_c));
}

int main(int argc, char **argv)
{
	pthread_t w;
	struct timespec ts;
	int rc;

	fixture_start("cond-calls", argc, argv);
	fixture_one_cpu();
	truth_code(waiter);
	truth_code(wake);
	truth_code(main);
	truth_code_end();
	CHECK(pthread_barrier_init(&step, NULL, 2));
	CHECK(pthread_create(&w, NULL, waiter, NULL));
	pthread_barrier_wait(&step);		/* 1 */
	truth("cond C %p", (void *)&cond_c);
	truth("mutex M %p", (void *)&lock_m);
	truth("thread T %d", (int)gettid());
	truth("thread W %d", (int)tid_w);
	truth("expect none");
	wait_for_go();
	CHECK(pthread_cond_init(&cond_c, NULL));
	pthread_barrier_wait(&step);		/* 2 */
	wake(1, 0);
	wake(2, 1);
	CHECK(pthread_join(w, NULL));
	CHECK(pthread_mutex_lock(&lock_m));
	ts = fixture_in_future(CLOCK_REALTIME, 1);
	rc = pthread_cond_timedwait(&cond_c, &lock_m, &ts);
	truth("result timedwait-T %s", errname(rc));
	CHECK(pthread_mutex_unlock(&lock_m));
	CHECK(pthread_cond_destroy(&cond_c));
	truth("done");
	return 0;
}
