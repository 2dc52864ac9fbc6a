/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * condvar-waiters - a process that sleeps but is not deadlocked: three
 * threads wait on a condition variable nobody signals, and main joins the
 * first.  Nothing is held that anybody waits for.
 * Truth: "truth condwait TI C" for each, "truth joins T0 T1",
 * "truth blocked T0 T1 T2 T3", "truth expect none".
 * Expect: who reports each wait, and no deadlock.
 */
#include "fixture.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t started;
static pid_t tids[4];

static void *waiter(void *arg)
{
	long i = (long)arg;

	tids[i] = gettid();
	CHECK(pthread_mutex_lock(&lock));
	pthread_barrier_wait(&started);
	for (;;)
		pthread_cond_wait(&cond, &lock); /* nobody signals */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[4];
	long i;

	fixture_start("condvar-waiters", argc, argv);
	tids[0] = gettid();
	truth("mutex M %p", (void *)&lock);
	truth("cond C %p", (void *)&cond);
	/* each waiter takes the mutex, meets main, then waits (giving it up) */
	CHECK(pthread_barrier_init(&started, NULL, 2));
	for (i = 1; i <= 3; i++) {
		CHECK(pthread_create(&threads[i], NULL, waiter, (void *)i));
		pthread_barrier_wait(&started);
	}
	for (i = 0; i <= 3; i++)
		truth("thread T%ld %d", i, (int)tids[i]);
	for (i = 1; i <= 3; i++)
		truth("condwait T%ld C", i);
	truth("joins T0 T1");
	truth("blocked T0 T1 T2 T3");
	truth("expect none");
	pthread_join(threads[1], NULL); /* never returns */
	return 1;
}
