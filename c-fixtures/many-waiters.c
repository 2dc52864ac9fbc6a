/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * many-waiters - more threads wait at once than a small dl2 can track,
 * then a real deadlock forms once they are gone.
 *   1. WAITERS threads start and meet main at a barrier; main holds M;
 *      past the barrier each thread locks M and sleeps on it; once all of
 *      them sleep in the kernel on M's lock word, main lets M go and joins
 *      them (each takes M in turn).  Threads are created before main
 *      takes M: glibc takes an internal recursive mutex of its own in
 *      pthread_create (its marks show it), not while the waiters pile up.
 *   2. the seed's AB-BA deadlock between main (T1) and a new thread (T2).
 * Run under dl2.stp with MAX_WAITING below WAITERS: dl2 cannot track
 * WAITERS - MAX_WAITING of the waiters' lock calls at least (more if
 * glibc's own locks come while the maps are full), must say so, must
 * report nothing for step 1, and must still report step 2's cycle, once.
 * Truth: "truth waiters N", then abba's lines.
 */
#include "fixture.h"

#ifndef WAITERS
#define WAITERS 40
#endif

static pthread_mutex_t lock_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static pid_t waiter_tids[WAITERS];

static void *waiter(void *arg)
{
	long i = (long)arg;

	__atomic_store_n(&waiter_tids[i], gettid(), __ATOMIC_RELEASE);
	pthread_barrier_wait(&start);
	CHECK(pthread_mutex_lock(&lock_m));
	CHECK(pthread_mutex_unlock(&lock_m));
	return NULL;
}

int main(int argc, char **argv)
{
	const struct timespec tick = { 0, 1000 * 1000 };
	pthread_t threads[WAITERS];
	pthread_attr_t small;
	long i;

	fixture_start("many-waiters", argc, argv);
	truth("mutex M %p", (void *)&lock_m);
	truth("waiters %d", WAITERS);
	truth("mutex A %p", (void *)&lock_a);
	truth("mutex B %p", (void *)&lock_b);
	truth("symbol A lock_a");
	truth("symbol B lock_b");
	wait_for_go();

	/* 1: WAITERS threads asleep on M at once */
	CHECK(pthread_attr_init(&small));
	CHECK(pthread_attr_setstacksize(&small, 64 * 1024));
	CHECK(pthread_barrier_init(&start, NULL, WAITERS + 1));
	for (i = 0; i < WAITERS; i++)
		CHECK(pthread_create(&threads[i], &small, waiter, (void *)i));
	CHECK(pthread_mutex_lock(&lock_m));
	pthread_barrier_wait(&start);
	for (i = 0; i < WAITERS; i++)
		while (!__atomic_load_n(&waiter_tids[i], __ATOMIC_ACQUIRE) ||
		       !fixture_sleeps_on(waiter_tids[i], &lock_m))
			nanosleep(&tick, NULL);
	truth("all waiting");
	CHECK(pthread_mutex_unlock(&lock_m));
	for (i = 0; i < WAITERS; i++)
		CHECK(pthread_join(threads[i], NULL));
	CHECK(pthread_attr_destroy(&small));

	/* 2: AB-BA */
	fixture_abba(&lock_a, &lock_b);
}
