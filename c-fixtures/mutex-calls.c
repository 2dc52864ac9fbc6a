/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mutex-calls - one of every mutex call the tapset has a probe for, each on
 * a mutex of its own, so a test can compare the probes' variables with what
 * was done:
 *   E (errorcheck): init, lock, relock (EDEADLK), unlock, destroy
 *   R (recursive):  init, lock, lock, unlock, unlock, destroy
 *   N (normal, static): timedlock, unlock, clocklock (CLOCK_MONOTONIC),
 *       cond timedwait on C that times out, unlock
 *   Y (normal, static): trylock (OK), trylock again (EBUSY: held), unlock
 *   Z (normal, static): lock, timedlock (the caller holds it: ETIMEDOUT,
 *       not an acquisition), unlock
 *   S (recursive, statically initialised: no init call is ever seen):
 *       lock, lock, trylock (counts a relock), unlock x3
 *   W (normal, static): thread U holds it; main locks it and waits; U lets
 *       go once main sleeps in futex(2) on W (glibc fires lll_lock_wait
 *       before that sleep, after setting the lock word to 2: the word
 *       alone does not say the mark has fired)
 * Expect: no deadlock.  The event sequence per mutex is in
 * testsuite/pthread.tapset/mutex-variables.exp.
 */
#include "fixture.h"
#include <sched.h>
#include <time.h>

static pthread_mutex_t lock_n = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_w = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_y = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_z = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_s = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t holding;
static pid_t holder_tid, waiter_tid;

static void *holder(void *arg)
{
	(void)arg;
	holder_tid = gettid();
	CHECK(pthread_mutex_lock(&lock_w));
	pthread_barrier_wait(&holding);
	while (!fixture_sleeps_on(waiter_tid, &lock_w))
		sched_yield();
	CHECK(pthread_mutex_unlock(&lock_w));
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_mutex_t lock_e, lock_r;
	pthread_t thread;
	struct timespec ts;
	int rc;

	fixture_start("mutex-calls", argc, argv);
	fixture_one_cpu();
	truth_code(holder);
	truth_code(main);
	truth_code_end();
	truth("mutex E %p", (void *)&lock_e);
	truth("mutex R %p", (void *)&lock_r);
	truth("mutex N %p", (void *)&lock_n);
	truth("mutex W %p", (void *)&lock_w);
	truth("mutex Y %p", (void *)&lock_y);
	truth("mutex S %p", (void *)&lock_s);
	truth("mutex Z %p", (void *)&lock_z);
	truth("cond C %p", (void *)&cond);
	truth("thread T %d", (int)gettid());
	truth("expect none");
	truth("locks 9");
	CHECK(pthread_barrier_init(&holding, NULL, 2));
	wait_for_go();

	mutex_init_kind(&lock_e, PTHREAD_MUTEX_ERRORCHECK);
	CHECK(pthread_mutex_lock(&lock_e));
	rc = pthread_mutex_lock(&lock_e);
	truth("result relock-E %s", errname(rc));
	CHECK(pthread_mutex_unlock(&lock_e));
	CHECK(pthread_mutex_destroy(&lock_e));

	mutex_init_kind(&lock_r, PTHREAD_MUTEX_RECURSIVE);
	CHECK(pthread_mutex_lock(&lock_r));
	CHECK(pthread_mutex_lock(&lock_r));
	CHECK(pthread_mutex_unlock(&lock_r));
	CHECK(pthread_mutex_unlock(&lock_r));
	CHECK(pthread_mutex_destroy(&lock_r));

	ts = fixture_in_future(CLOCK_REALTIME, 1000);
	CHECK(pthread_mutex_timedlock(&lock_n, &ts));
	CHECK(pthread_mutex_unlock(&lock_n));
	ts = fixture_in_future(CLOCK_MONOTONIC, 1000);
	CHECK(pthread_mutex_clocklock(&lock_n, CLOCK_MONOTONIC, &ts));
	ts = fixture_in_future(CLOCK_REALTIME, 1);
	rc = pthread_cond_timedwait(&cond, &lock_n, &ts);
	truth("result cond-timedwait %s", errname(rc));
	CHECK(pthread_mutex_unlock(&lock_n));

	rc = pthread_mutex_trylock(&lock_y);
	truth("result trylock-Y %s", errname(rc));
	rc = pthread_mutex_trylock(&lock_y);
	truth("result trylock-Y-again %s", errname(rc));
	CHECK(pthread_mutex_unlock(&lock_y));

	CHECK(pthread_mutex_lock(&lock_z));
	ts = fixture_in_future(CLOCK_REALTIME, 1);
	rc = pthread_mutex_timedlock(&lock_z, &ts);
	truth("result timedlock-Z %s", errname(rc));
	CHECK(pthread_mutex_unlock(&lock_z));

	CHECK(pthread_mutex_lock(&lock_s));
	CHECK(pthread_mutex_lock(&lock_s));
	rc = pthread_mutex_trylock(&lock_s);
	truth("result trylock-S %s", errname(rc));
	CHECK(pthread_mutex_unlock(&lock_s));
	CHECK(pthread_mutex_unlock(&lock_s));
	CHECK(pthread_mutex_unlock(&lock_s));

	waiter_tid = gettid();
	CHECK(pthread_create(&thread, NULL, holder, NULL));
	pthread_barrier_wait(&holding);
	truth("thread U %d", (int)holder_tid);
	CHECK(pthread_mutex_lock(&lock_w));
	CHECK(pthread_mutex_unlock(&lock_w));
	CHECK(pthread_join(thread, NULL));
	truth("done");
	return 0;
}
