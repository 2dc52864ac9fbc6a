/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cycle - THREADS threads in one wait-for cycle: thread Ti holds mutex Mi
 * and then asks for M(i+1), the last one for M1.  Built as cycle-3,
 * cycle-5, cycle-8 (-DTHREADS=N).
 * Expect: dl2.stp reports the whole cycle, once; dl.stp reports nothing.
 */
#include "fixture.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#ifndef THREADS
#error "build with -DTHREADS=N"
#endif

static pthread_mutex_t locks[THREADS];
static pid_t tids[THREADS];
static pthread_barrier_t holding, go;

static void *worker(void *arg)
{
	long i = (long)arg;

	tids[i] = gettid();
	CHECK(pthread_mutex_lock(&locks[i]));
	pthread_barrier_wait(&holding);
	pthread_barrier_wait(&go);
	pthread_mutex_lock(&locks[(i + 1) % THREADS]); /* never returns */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[THREADS];
	long i;

	fixture_start("cycle-" STR(THREADS), argc, argv);
	CHECK(pthread_barrier_init(&holding, NULL, THREADS + 1));
	CHECK(pthread_barrier_init(&go, NULL, THREADS + 1));
	for (i = 0; i < THREADS; i++) {
		CHECK(pthread_mutex_init(&locks[i], NULL));
		truth("mutex M%ld %p", i + 1, (void *)&locks[i]);
		if (i == 0)
			truth("symbol M1 locks");
		else
			truth("symbol M%ld locks+0x%lx", i + 1, (unsigned long)i * sizeof locks[0]);
	}
	for (i = 0; i < THREADS; i++)
		CHECK(pthread_create(&threads[i], NULL, worker, (void *)i));
	pthread_barrier_wait(&holding);
	for (i = 0; i < THREADS; i++)
		truth("thread T%ld %d", i + 1, (int)tids[i]);
	wait_for_go();
	for (i = 0; i < THREADS; i++)
		truth("wait T%ld M%ld T%ld", i + 1, (i + 1) % THREADS + 1, (i + 1) % THREADS + 1);
	truth("expect deadlock");
	pthread_barrier_wait(&go);
	for (i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL); /* never returns */
	return 1;
}
